/*
 * mmalib_i8_dispatched.c — the int8 MMALIB conv and FC computed by the
 * dispatched generic kernels (tidsp_conv2d_i8 / tidsp_matmul_i8, the fast
 * host variants) with TIDSP_REQUANT_SCALE_SHIFT, which is MMALIB's
 * requantization, whenever that gives MMALIB's exact values; MMALIB's scalar
 * loops otherwise. mmalib_internal.h states the bound and why it suffices.
 *
 * MMALIB's other conventions map directly: its zero padding is the generic
 * kernels' padding with x_zp = 0, its symmetric operands are w_zp = 0, its
 * output zero point is already in the bias (out_zp = 0), and its saturation
 * is the int8 range as [out_min, out_max]. The generic conv takes h_out /
 * w_out with the top/left pads; the bottom/right pads MMALIB was given are
 * implied by them (tidsp_mmalib_conv_geom_init derived h_out from them).
 */
#include <string.h>

#include "mmalib_internal.h"

/* Largest and smallest int8 × int8 product. */
#define I8_PRODUCT_MAX (128 * 128)
#define I8_PRODUCT_MIN (-128 * 127)

int tidsp_mmalib_i8_fits_int32(int64_t taps, const int32_t *bias, int32_t n) {
  int64_t hi, lo;
  int32_t c;
  /* taps·I8_PRODUCT_MAX ≤ INT32_MAX, so hi ≥ 0 and lo ≤ 0 below */
  if (taps < 1 || taps > INT32_MAX / I8_PRODUCT_MAX)
    return 0;
  hi = (int64_t)INT32_MAX - taps * I8_PRODUCT_MAX;
  lo = (int64_t)INT32_MIN - taps * I8_PRODUCT_MIN;
  if (!bias)
    return 1;
  for (c = 0; c < n; c++) {
    if (bias[c] > hi || bias[c] < lo)
      return 0;
  }
  return 1;
}

/* MMALIB's requantization as the generic kernels' kind. */
static void scale_shift_rq(tidsp_requant_params *rq) {
  rq->kind = TIDSP_REQUANT_SCALE_SHIFT;
  rq->per_channel = 1;
  rq->out_zp = 0;
  rq->out_min = MMALIB_I8_MIN;
  rq->out_max = MMALIB_I8_MAX;
}

int32_t tidsp_mmalib_conv2d_i8_dispatched(const tidsp_mmalib_conv_geom *g,
                                          int32_t groups, const int8_t *input,
                                          const int8_t *kernel,
                                          const int32_t *bias,
                                          const uint8_t *scale,
                                          const uint8_t *shift,
                                          int8_t *output) {
  const int64_t taps = (int64_t)g->c_in * g->kh * g->kw;
  const int64_t c_in = (int64_t)g->c_in * groups;
  const int64_t c_out = (int64_t)g->c_out * groups;
  tidsp_conv2d_params p;
  tidsp_scale_shift ss;
  if (groups < 1 || c_in > INT32_MAX || c_out > INT32_MAX)
    return TIDSP_ERR_SHAPE;
  if (taps > MMALIB_GENERIC_CONV_MAX_TAPS ||
      !tidsp_mmalib_i8_fits_int32(taps, bias, (int32_t)c_out))
    return TIDSP_ERR_UNSUPPORTED;
  memset(&p, 0, sizeof(p)); /* x_zp = w_zp = 0, dense weight rows */
  p.n = 1;
  p.c_in = (int32_t)c_in;
  p.h_in = g->h_in;
  p.w_in = g->w_in;
  p.c_out = (int32_t)c_out;
  p.h_out = g->h_out;
  p.w_out = g->w_out;
  p.k_h = g->kh;
  p.k_w = g->kw;
  p.stride_h = g->stride;
  p.stride_w = g->stride;
  p.dil_h = 1;
  p.dil_w = 1;
  p.pad_top = g->pad_t;
  p.pad_left = g->pad_l;
  p.groups = groups;
  scale_shift_rq(&p.rq);
  ss.scale = scale;
  ss.shift = shift;
  return tidsp_conv2d_i8(&p, input, kernel, bias, &ss, output);
}

/* A failing dispatched call writes nothing (generic kernels validate before
 * their first store), and the scalar loops then write every output. */
int tidsp_mmalib_conv2d_i8_compute(int on_ref, const tidsp_mmalib_conv_geom *g,
                                   int32_t groups, const int8_t *input,
                                   const int8_t *kernel, const int32_t *bias,
                                   const uint8_t *scale, const uint8_t *shift,
                                   int8_t *output) {
  if (!on_ref &&
      tidsp_mmalib_conv2d_i8_dispatched(g, groups, input, kernel, bias, scale,
                                        shift, output) == TIDSP_OK)
    return 1;
  tidsp_mmalib_conv2d_i8_scalar(g, groups, input, kernel, bias, scale, shift,
                                output);
  return 0;
}

int32_t tidsp_mmalib_matmul_bias_i8_dispatched(
    const int8_t *input, const int8_t *weights, const int32_t *bias,
    const uint8_t *scale, const uint8_t *shift, int8_t *output, int32_t M,
    int32_t K, int32_t N) {
  tidsp_matmul_params p;
  tidsp_scale_shift ss;
  if (!tidsp_mmalib_i8_fits_int32(K, bias, N))
    return TIDSP_ERR_UNSUPPORTED;
  memset(&p, 0, sizeof(p)); /* x_zp = w_zp = 0, dense [N][K] rows */
  p.m = M;
  p.k = K;
  p.n = N;
  scale_shift_rq(&p.rq);
  ss.scale = scale;
  ss.shift = shift;
  return tidsp_matmul_i8(&p, input, weights, bias, &ss, output);
}

int tidsp_mmalib_matmul_bias_i8_compute(int on_ref, const int8_t *input,
                                        const int8_t *weights,
                                        const int32_t *bias,
                                        const uint8_t *scale,
                                        const uint8_t *shift, int8_t *output,
                                        int32_t M, int32_t K, int32_t N) {
  if (!on_ref && tidsp_mmalib_matmul_bias_i8_dispatched(input, weights, bias, scale,
                                             shift, output, M, K,
                                             N) == TIDSP_OK)
    return 1;
  tidsp_mmalib_matmul_bias_i8_scalar(input, weights, bias, scale, shift,
                                     output, M, K, N);
  return 0;
}
