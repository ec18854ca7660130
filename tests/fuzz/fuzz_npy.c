/*
 * fuzz_npy — the .npy reader (compiler/cli/npy.c) on bytes from the
 * fuzzer, read through a memory stream with a 64 MiB limit: every header,
 * shape and size path must end in CS_OK (the array freed) or an error.
 */
#define _GNU_SOURCE /* fmemopen */

#include <stdint.h>
#include <stdio.h>

#include "cli/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0; /* fmemopen refuses an empty buffer */
  FILE *f = fmemopen((void *)data, size, "rb");
  if (!f) return 0;
  cs_npy a;
  if (cs_npy_read_stream(f, "fuzz.npy", size, (size_t)64 << 20, &a) == CS_OK) {
    /* The data read is inside the input, and all of it was read. */
    if (a.nbytes > size || (a.nbytes && !a.data) || a.numel < 0) __builtin_trap();
    cs_npy_free(&a);
  }
  fclose(f);
  cs_error_clear();
  return 0;
}
