/*
 * fuzz_elf — the firmware's own ELF loader (fw/elf_load.c through
 * fw_module_load, fw/fw.h) on module images from the fuzzer: headers,
 * segments, the dynamic section, relocations, the export-table binding,
 * model_desc. Any image must load (then it is unloaded again) or be
 * refused with an error message: no crash, no read outside the image, no
 * module code run at load.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fw.h"

enum { DDR_SIZE = 64 << 20, L2_SIZE = 448 << 10 };

static fw_state st;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  uint8_t *ddr = aligned_alloc(4096, DDR_SIZE), *l2 = aligned_alloc(4096, L2_SIZE);
  if (!ddr || !l2) abort();
  fw_state_init(&st, ddr, DDR_SIZE, l2, L2_SIZE, NULL, 0, 0, -1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fw_module *m = NULL;
  char err[512] = "";
  int s = fw_module_load(&st, data, size, &m, err, sizeof err);
  if (s == C7X_OK) {
    if (!m || !m->handle) __builtin_trap();
    if (fw_module_unload(&st, m->handle, err, sizeof err) != C7X_OK) __builtin_trap();
  } else if (!err[0]) {
    __builtin_trap(); /* a refusal names its reason */
  }
  return 0;
}
