/*
 * fuzz_fw — the firmware's request handler (fw_handle_message, fw/fw.h)
 * in process, with a module loaded, on requests from the fuzzer.
 *
 * Input layout:
 *   byte 0        flags: bit 0 = put the loaded module's 64-bit handle
 *                 into the request's handle field (the first body bytes),
 *                 so that DYN_INFO / INFER / UNLOAD / RESET reach a real
 *                 module (the fuzzer cannot guess 64 random bits)
 *   bytes 1..2    n, the request length (little-endian; up to
 *                 C7X_MSG_MAX + 1, the transport's "truncated" length)
 *   n bytes       the request (header + body)
 *   the rest      copied to the start of the staging window (the inputs
 *                 and descriptor tables INFER / INFER_LARGE point at, the
 *                 image DYN_LOAD reads)
 *
 * The module (examples/digits/digits_int8.onnx compiled for the C7x with
 * --emit=module) comes from $CS_FUZZ_FW_MODULE, else the path the build
 * compiled in. It is reloaded whenever a request unloaded it; modules a
 * DYN_LOAD of fuzzed bytes loaded are unloaded after the request, so the
 * DDR heap does not fill. INFER's repeat count is capped at 3 (see below).
 * The firmware's ELF loader has a harness of its own too (fuzz_elf).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw.h"

#ifndef CS_FUZZ_FW_MODULE
#define CS_FUZZ_FW_MODULE "fw_module/lib0.out"
#endif

enum { DDR_SIZE = 64 << 20, L2_SIZE = 448 << 10, STAGING_SIZE = 1 << 20, RESULT_SIZE = 256 << 10 };

static fw_state st;
static uint8_t *image;
static size_t image_size;
static uint64_t handle;

static void load_module(void) {
  fw_module *m = NULL;
  char err[512];
  if (fw_module_load(&st, image, image_size, &m, err, sizeof err) != C7X_OK) {
    fprintf(stderr, "fuzz_fw: the module does not load: %s\n", err);
    abort();
  }
  handle = m->handle;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *path = getenv("CS_FUZZ_FW_MODULE");
  if (!path || !*path) path = CS_FUZZ_FW_MODULE;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_fw: cannot open the module %s (set CS_FUZZ_FW_MODULE)\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  image_size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  image = malloc(image_size);
  if (!image || fread(image, 1, image_size, f) != image_size) abort();
  fclose(f);
  /* The pools and windows live for the whole run, as the firmware's do. */
  static uint8_t *ddr, *l2, *shared;
  ddr = aligned_alloc(4096, DDR_SIZE);
  l2 = aligned_alloc(4096, L2_SIZE);
  shared = aligned_alloc(4096, STAGING_SIZE + RESULT_SIZE);
  if (!ddr || !l2 || !shared) abort();
  fw_state_init(&st, ddr, DDR_SIZE, l2, L2_SIZE, shared, STAGING_SIZE, RESULT_SIZE, -1);
  load_module();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  int flags = data[0];
  size_t n = (size_t)data[1] | (size_t)data[2] << 8;
  data += 3;
  size -= 3;
  if (n > C7X_MSG_MAX + 1) n = C7X_MSG_MAX + 1;
  if (n > size) n = size;
  uint8_t req[C7X_MSG_MAX + 1];
  memcpy(req, data, n);
  size_t extra = size - n;
  if (extra > STAGING_SIZE) extra = STAGING_SIZE;
  memcpy(st.shared, data + n, extra);
  if (n >= sizeof(c7x_msg_header)) {
    uint32_t type;
    memcpy(&type, req, sizeof type);
    if ((flags & 1) && n >= sizeof(c7x_msg_header) + sizeof handle)
      memcpy(req + sizeof(c7x_msg_header), &handle, sizeof handle);
    /* INFER's repeat count (a benchmark loop of up to 65535 runs) is
     * capped at 3: a long run is a request working as specified, not a
     * finding, and the firmware's --timeout-ms bounds it on the board. */
    size_t at = sizeof(c7x_msg_header) + offsetof(c7x_infer_req, flags);
    if ((type == C7X_MSG_INFER || type == C7X_MSG_INFER_LARGE) && n >= at + 4) {
      uint32_t f;
      memcpy(&f, req + at, 4);
      f = (f & ~(uint32_t)C7X_INFER_REPEAT_MASK) | (f & 3u);
      memcpy(req + at, &f, 4);
    }
  }
  uint8_t resp[C7X_MSG_MAX];
  int fd = -1;
  size_t r = fw_handle_message(&st, req, n, resp, &fd);
  c7x_msg_header h;
  memcpy(&h, resp, sizeof h);
  /* Every request gets a well-formed response of the length it says. */
  if (r < sizeof h || r > C7X_MSG_MAX || h.len != r) __builtin_trap();
  for (int i = 0; i < FW_MAX_MODULES; i++) {
    uint64_t other = st.modules[i].handle;
    char err[256];
    if (other && other != handle) fw_module_unload(&st, other, err, sizeof err);
  }
  if (!fw_module_find(&st, handle)) load_module();
  return 0;
}
