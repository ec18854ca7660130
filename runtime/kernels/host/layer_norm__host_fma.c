/*
 * layer_norm__host_fma.c — LayerNormalization (float and int8) compiled
 * for x86-64 with FMA: the reference's row loops (ref/layer_norm_rows.h),
 * where each fmaf becomes one vfmadd instead of a libm call. A fused
 * multiply-add rounds once either way, so the bytes are the reference's.
 */
#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#pragma GCC push_options
#pragma GCC target("fma")
#include "../ref/layer_norm_rows.h"

int32_t tidsp_layer_norm_f32__host_fma(const tidsp_layer_norm_params *p, const float *x,
                                       const float *scale, const float *bias, float *y) {
  return layer_norm_f32_rows(p, x, scale, bias, y);
}

int32_t tidsp_layer_norm_i8__host_fma(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                      const float *scale, const float *bias, int8_t *y) {
  return layer_norm_i8_rows(p, x, scale, bias, y);
}
#pragma GCC pop_options
#endif
