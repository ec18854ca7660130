/*
 * The export table. Every entry takes the address of the firmware's own
 * definition: the linker keeps it in c7x_fw, and the loader (elf_load.c)
 * writes exactly that address into a module's references to it.
 *
 * The runtime part lists every function of the public runtime headers
 * (cstatic/kernels.h, tidsp.h, model.h, profile.h, dma.h, mmalib.h) that a
 * module may call; test_fw_exports checks that each kernel the code
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
    E(tidsp_quantize, "runtime"),
    E(tidsp_quantize__ref, "runtime"),
    E(tidsp_dequantize, "runtime"),
    E(tidsp_dequantize__ref, "runtime"),
    E(tidsp_conv2d_i8, "runtime"),
    E(tidsp_conv2d_i8__ref, "runtime"),
    E(tidsp_conv2d_f32, "runtime"),
    E(tidsp_matmul_i8, "runtime"),
    E(tidsp_matmul_i8__ref, "runtime"),
    E(tidsp_matmul_f32, "runtime"),
    E(tidsp_add_i8, "runtime"),
    E(tidsp_add_i8__ref, "runtime"),
    E(tidsp_mul_i8, "runtime"),
    E(tidsp_mul_i8__ref, "runtime"),
    E(tidsp_binary_f32, "runtime"),
    E(tidsp_lut_i8, "runtime"),
    E(tidsp_lut_i8__ref, "runtime"),
    E(tidsp_unary_f32, "runtime"),
    E(tidsp_maxpool_i8, "runtime"),
    E(tidsp_maxpool_i8__ref, "runtime"),
    E(tidsp_maxpool_f32, "runtime"),
    E(tidsp_maxpool_f32__ref, "runtime"),
    E(tidsp_avgpool_f32, "runtime"),
    E(tidsp_avgpool_i8, "runtime"),
    E(tidsp_global_avgpool_i8, "runtime"),
    E(tidsp_global_avgpool_i8__ref, "runtime"),
    E(tidsp_global_avgpool_f32, "runtime"),
    E(tidsp_reduce_mean_f32, "runtime"),
    E(tidsp_softmax_f32, "runtime"),
    E(tidsp_layer_norm_f32, "runtime"),
    E(tidsp_layer_norm_i8, "runtime"),
    E(tidsp_layer_norm_f32__ref, "runtime"),
    E(tidsp_layer_norm_i8__ref, "runtime"),
    E(tidsp_gather, "runtime"),
    E(tidsp_where, "runtime"),
    E(tidsp_expand, "runtime"),
    E(tidsp_cast, "runtime"),
    E(c7x_dequantize_vecmatmul, "runtime"),
    E(c7x_sdpa_decode, "runtime"),
    E(tidsp_softmax_i8, "runtime"),
    E(tidsp_batch_matmul_i8, "runtime"),
    E(tidsp_batch_matmul_i8__ref, "runtime"),
    E(tidsp_transpose, "runtime"),
    E(tidsp_transpose__ref, "runtime"),
    E(tidsp_slice, "runtime"),
    E(tidsp_slice__ref, "runtime"),
    E(tidsp_concat, "runtime"),
    E(tidsp_pad, "runtime"),
    E(tidsp_copy, "runtime"),

    /* the custom C7x kernels (cstatic/mmalib.h): in every firmware */
    E(c7x_int8_residual_add_relu, "runtime"),
    E(c7x_int16_residual_add_relu, "runtime"),
    E(c7x_int8_max_pool, "runtime"),

#if CS_FW_MMALIB
    /* the MMALIB wrappers (cstatic/mmalib.h) */
    E(mmalib_conv2d_i8, "mmalib"),
    E(mmalib_conv2d_i16, "mmalib"),
    E(mmalib_conv2d_i8_sliced, "mmalib"),
    E(mmalib_conv2d_i8_grouped_loop, "mmalib"),
    E(mmalib_depthwise_conv2d_i8, "mmalib"),
    E(mmalib_depthwise_conv2d_i16, "mmalib"),
    E(mmalib_matmul_i8, "mmalib"),
    E(mmalib_matmul_i16, "mmalib"),
    E(mmalib_matmul_bias_i8, "mmalib"),
    E(mmalib_matmul_bias_i16, "mmalib"),
#endif
#if CS_FW_TIDL
    /* TIDL-backed kernels: a TIDL-off firmware never lists them, so a
     * module compiled with -tidl-kernels=1 that calls one fails to load
     * there, naming it. */
    E(c7x_int8_max_pool_tidl, "tidl"),
#endif
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
