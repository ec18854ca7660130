/*
 * test_codegen_oom.c — the compiler's one out-of-memory policy, proven by
 * failing allocations: a model is compiled (load → passes → codegen) once
 * to count the allocations the compiler makes, then again with the k-th
 * one failing, for every k. Each run must end in CS_ERR_NOMEM with a
 * message, or — where the failing allocation was optional — CS_OK with
 * exactly the files of the clean run: never a crash, an abort (the private
 * x*alloc copies used to abort), a leak (under ASan), or a different
 * program.
 *
 * malloc, calloc, realloc, aligned_alloc and posix_memalign of the
 * compiler's own code are wrapped (-Wl,--wrap, CMakeLists.txt); libc's and
 * protobuf-c's internal allocations are not. Run from the repository root.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "eval/const_eval.h"
#include "frontend/onnx.h"
#include "passes/passes.h"
#include "target.h"
#include "unit.h"

static long n_allocs;  /* allocations so far */
static long fail_at;   /* the allocation that fails (1-based), 0: none */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);

/* CS_OOM_TRACE=1: print the call stack of each failed allocation (to
 * find the site behind a finding). */
static int fails(void) {
  if (++n_allocs != fail_at) return 0;
  if (getenv("CS_OOM_TRACE")) {
    void *frames[16];
    int n = backtrace(frames, 16);
    fprintf(stderr, "-- allocation %ld fails:\n", n_allocs);
    backtrace_symbols_fd(frames, n, 2);
  }
  return 1;
}
void *__wrap_malloc(size_t n) { return fails() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fails() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return fails() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t align, size_t n) { return fails() ? NULL : __real_aligned_alloc(align, n); }
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
  return fails() ? 12 /* ENOMEM */ : __real_posix_memalign(p, align, n);
}

static void empty_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[600];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
}

/* The whole compile into dir; the status of the first failing stage. */
static cs_status compile(const char *model, const char *target, const char *dir) {
  cs_target t;
  if (cs_target_parse(target, &t) != CS_OK) return CS_ERR_USAGE;
  cs_graph *g = NULL;
  cs_status st = cs_onnx_load(model, cs_const_eval_node, &g); /* as cstatic compile */
  if (st == CS_OK) st = cs_passes_run(g, &t, NULL);
  if (st == CS_OK) {
    empty_dir(dir);
    cs_codegen_options co = {.model_path = model, .quiet = 1, .offload = t.mmalib ? &g->offload : NULL};
    st = cs_codegen_emit(g, &t, &co, dir);
  }
  cs_graph_free(g);
  return st;
}

static int same_file(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  while (same) {
    int ca = fgetc(fa), cb = fgetc(fb);
    same = ca == cb;
    if (ca == EOF) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

static int same_dirs(const char *a, const char *b) {
  DIR *d = opendir(a);
  if (!d) return 0;
  int same = 1, files = 0;
  struct dirent *e;
  char pa[600], pb[600];
  while ((e = readdir(d)) != NULL && same) {
    if (e->d_name[0] == '.') continue;
    snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
    snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
    same = same_file(pa, pb);
    files++;
  }
  closedir(d);
  return same && files > 0;
}

static void every_allocation_may_fail(const char *model, const char *target, long stride) {
  char ref[] = "/tmp/cs-oom-ref-XXXXXX", out[] = "/tmp/cs-oom-out-XXXXXX";
  if (!mkdtemp(ref) || !mkdtemp(out)) {
    CHECK_MSG(0, "mkdtemp");
    return;
  }
  fail_at = 0;
  n_allocs = 0;
  cs_status st = compile(model, target, ref);
  long total = n_allocs;
  CHECK_MSG(st == CS_OK, "%s [%s]: %s", model, target, cs_error_message());
  int bad_status = 0, no_message = 0, different = 0, nomem = 0;
  for (long k = 1; k <= total; k += stride) {
    fail_at = k;
    n_allocs = 0;
    cs_error_clear();
    st = compile(model, target, out);
    fail_at = 0;
    if (st == CS_ERR_NOMEM) {
      nomem++;
      if (!cs_error_message()[0] && no_message++ < 3)
        fprintf(stderr, "allocation %ld of %ld: CS_ERR_NOMEM without a message\n", k, total);
    } else if (st == CS_OK) {
      if (!same_dirs(ref, out) && different++ < 40)
        fprintf(stderr, "allocation %ld of %ld failed: the compile succeeded with different output\n", k, total);
    } else if (bad_status++ < 40) {
      fprintf(stderr, "allocation %ld of %ld: status %s: %s\n", k, total, cs_status_str(st), cs_error_message());
    }
  }
  printf("%s [%s]: %ld allocations, every %ld-th failed in turn: %d out of memory\n", model, target, total,
         stride, nomem);
  CHECK_MSG(bad_status == 0, "%d failures reported as something other than out of memory", bad_status);
  CHECK_MSG(no_message == 0, "%d out-of-memory failures without a message", no_message);
  CHECK_MSG(different == 0, "%d failed allocations changed the program", different);
  CHECK(nomem > 0);
  empty_dir(ref);
  empty_dir(out);
  rmdir(ref);
  rmdir(out);
}

int main(void) {
  every_allocation_may_fail("tests/unit/data/m_external.onnx", "c_static_lib", 1);
  every_allocation_may_fail("tests/unit/data/m_opset18.onnx", "c_static_lib -kernels=scalar", 1);
  every_allocation_may_fail("examples/digits/digits_int8.onnx", "c_static_lib -mcpu=c7x -mmalib=1", 1);
  every_allocation_may_fail("tests/unit/data/m_qdq21.onnx", "c_static_lib -requant=q31", 1);
  every_allocation_may_fail("tests/unit/data/m_shuffle_unit.onnx", "c_static_lib", 1);
  every_allocation_may_fail("tests/unit/data/m_roll_windows.onnx", "c_static_lib", 1);
  every_allocation_may_fail("tests/unit/data/m_asym_stride.onnx", "c_static_lib -mcpu=c7x -mmalib=1", 1);
  UNIT_MAIN_END();
}
