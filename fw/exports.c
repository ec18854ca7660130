/*
 * The export table. Every entry takes the address of the firmware's own
 * definition: the linker keeps it in c7x_fw, and the loader (elf_load.c)
 * writes exactly that address into a module's references to it.
 *
 * The rows are cstatic/c7x_exports.def's (the kernels among them from the
 * kernel table, cstatic/kernels.def), which the ti-project's dsp_syms.c is
 * written from too; test_fw_exports checks that each kernel the code
 * generator can emit is here.
 */
#include "exports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/dma.h"
#include "cstatic/kernels.h"
#include "cstatic/model.h"
#include "cstatic/profile.h"
#include "cstatic/tidsp.h"

#include "cstatic/mmalib.h"
#include "cstatic/platform/tidsp_dsp.h"

#define E(fn, group) {#fn, (void (*)(void))(fn), group},
#define FW_EXPORT_LIBC(fn) E(fn, "libc")
#define FW_EXPORT_RUNTIME(fn) E(fn, "runtime")
#define FW_EXPORT_C7X(fn) E(fn, "runtime")
#if CS_FW_MMALIB
#define FW_EXPORT_MMALIB(fn) E(fn, "mmalib")
#else
#define FW_EXPORT_MMALIB(fn)
#endif
#if CS_FW_TIDL
#define FW_EXPORT_TIDL(fn) E(fn, "tidl")
#else
#define FW_EXPORT_TIDL(fn)
#endif

static const fw_export table[] = {
#define C7X_EXPORT(fn, group) FW_EXPORT_##group(fn)
#include "cstatic/c7x_exports.def"
};

const fw_export *fw_exports(size_t *n) {
  *n = sizeof table / sizeof table[0];
  return table;
}

const fw_export *fw_export_find(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name)) return &table[i];
  return NULL;
}

const char *fw_build_options(void) {
  return CS_FW_TIDL ? "--tidl ON --mmalib ON"
                    : CS_FW_MMALIB ? "--tidl OFF --mmalib ON" : "--tidl OFF --mmalib OFF";
}
