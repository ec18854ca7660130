/*
 * fuzz_onnx — an ONNX file from the fuzzer through the whole compiler: load
 * (every size checked against a 64 MiB memory limit), the pass pipeline
 * and codegen, for three targets (the host with its fast kernels; C7x with
 * MMALIB offload and L2 staging; C66x with Q31 requantization and the
 * reference kernels). Any input must come back as CS_OK or an error
 * status: a crash, a sanitizer report, a leak or a malloc beyond
 * libFuzzer's limit is a finding (tests/fuzz/README.md).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "frontend/onnx.h"
#include "passes/passes.h"
#include "target.h"

static const char *const kTargets[] = {
    "c_static_lib",
    "c_static_lib -mcpu=c7x -mmalib=1",
    "c_static_lib -mcpu=c66x -requant=q31 -kernels=scalar",
};

static char out_dir[256];

/* Codegen writes a flat directory: empty it for the next input. */
static void empty_out_dir(void) {
  DIR *d = opendir(out_dir);
  if (!d) return;
  struct dirent *e;
  char path[512];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", out_dir, e->d_name);
    unlink(path);
  }
  closedir(d);
}

static void remove_out_dir(void) {
  empty_out_dir();
  rmdir(out_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* The IR verified after every pass, as in the tests (passes/registry.c). */
  setenv("CSTATIC_VERIFY_EACH_PASS", "1", 0);
  const char *tmp = getenv("TMPDIR");
  snprintf(out_dir, sizeof out_dir, "%s/cs-fuzz-onnx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(out_dir)) {
    perror("fuzz_onnx: mkdtemp");
    exit(1);
  }
  atexit(remove_out_dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cs_onnx_options opt = {.max_memory = (size_t)64 << 20};
  for (size_t i = 0; i < sizeof kTargets / sizeof kTargets[0]; i++) {
    cs_target t;
    if (cs_target_parse(kTargets[i], &t) != CS_OK) abort(); /* the harness is wrong */
    cs_graph *g = NULL;
    if (cs_onnx_load_buffer(data, size, "fuzz.onnx", &opt, &g) != CS_OK) break; /* same for every target */
    if (cs_passes_run(g, &t, NULL) == CS_OK) {
      empty_out_dir();
      cs_codegen_options co = {.model_path = "fuzz.onnx", .quiet = 1,
                               .offload = t.mmalib ? &g->offload : NULL};
      (void)cs_codegen_emit(g, &t, &co, out_dir);
    }
    cs_graph_free(g);
  }
  cs_error_clear();
  return 0;
}
