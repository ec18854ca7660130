/*
 * The export table. Every entry takes the address of the firmware's own
 * definition: the linker keeps it in c7x_fw, and the loader (elf_load.c)
 * writes exactly that address into a module's references to it.
 *
 * The runtime part lists every function of the public runtime headers
 * (cstatic/kernels.h, tidsp.h, model.h, profile.h, dma.h, mmalib.h) that a
 * module may call: the kernels from the kernel table (cstatic/kernels.def),
 * the rest by hand; test_fw_exports checks that each kernel the code
 * generator can emit is here. Not tidsp_l2_bind: the firmware binds its L2
 * SRAM for each inference (service.c), and a module must not rebind it.
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

#define E(fn, group) {#fn, (void (*)(void))(fn), group}

/* The export rows of the kernel table (cstatic/kernels.def): a public __ref
 * (what -kernels=scalar calls), and each extern by its group. */
#define FW_EXPORT_REF_NONE(fn)
#define FW_EXPORT_REF_PUBLIC(fn) E(fn##__ref, "runtime"),
#define FW_EXPORT_REF_INTERNAL(fn) /* the compiler's only */
#define FW_EXPORT_RUNTIME(fn) E(fn, "runtime"),
#define FW_EXPORT_C7X(fn) E(fn, "runtime"),
#if CS_FW_MMALIB
#define FW_EXPORT_MMALIB(fn) E(fn, "mmalib"),
#else
#define FW_EXPORT_MMALIB(fn)
#endif
/* TIDL-backed kernels: a TIDL-off firmware never lists them, so a module
 * compiled with -tidl-kernels=1 that calls one fails to load there, naming
 * it. */
#if CS_FW_TIDL
#define FW_EXPORT_TIDL(fn) E(fn, "tidl"),
#else
#define FW_EXPORT_TIDL(fn)
#endif

static const fw_export table[] = {
    /* C library: what generated code and compilers' block moves call. */
    E(memcpy, "libc"),
    E(memmove, "libc"),
    E(memset, "libc"),
    E(memcmp, "libc"),
    E(strlen, "libc"),
    E(printf, "libc"),
    E(puts, "libc"),
    E(snprintf, "libc"),
    E(vsnprintf, "libc"),
    E(vprintf, "libc"),
    E(abort, "libc"),

    /* runtime: cstatic/tidsp.h, cstatic/model.h */
    E(tidsp_status_str, "runtime"),
    E(tidsp_dtype_size, "runtime"),
    E(tidsp_fnv1a64, "runtime"),
    E(tidsp_weights_check, "runtime"),
    /* -profile-layers=1 (cstatic/profile.h) */
    E(tidsp_profile_clock, "runtime"),
    E(tidsp_profile_reset, "runtime"),
    /* DMA staging into L2 (cstatic/dma.h): the platform's engine and SRAM,
     * not MMALIB's, so in every firmware whatever its build options. */
    E(tidsp_dma_copy, "runtime"),
    E(tidsp_dma_wait, "runtime"),
    E(tidsp_l2_scratch, "runtime"),

    /* kernels: cstatic/kernels.h */
    E(tidsp_requant_one, "runtime"),
    /* every kernel the code generator can call: one row each of the kernel
     * table (cstatic/kernels.def), with the public __ref entries that
     * -kernels=scalar code calls; the MMALIB and TIDL-backed kernels only
     * in firmwares built with them */
#define TIDSP_KERNEL(NAME, ir, fn, ref, form, params, n_in, ins, opt, out_dt) \
  E(fn, "runtime"), FW_EXPORT_REF_##ref(fn)
#define TIDSP_KERNEL_EXTERN(NAME, ir, fn, ref, group, n_in, ins, opt, out_dt, n_args, args) FW_EXPORT_##group(fn)
#define TIDSP_KERNEL_AUX(fn, group) FW_EXPORT_##group(fn)
#include "cstatic/kernels.def"
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
