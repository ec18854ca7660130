/*
 * lut_i8_channels.c — tidsp_lut_i8_channels (cstatic/kernels.h): an int8 →
 * int8 table per channel, built at compile time (a PRelu's slopes between
 * a dequantize and a quantize). Each channel's run of `inner` elements is
 * one table lookup of lut_i8's (the host rows pass their own lut_i8). In
 * place (y == x) is allowed: each output reads only its own input.
 *
 * This is tidsp_lut_i8_channels__ref, the oracle: the public
 * tidsp_lut_i8_channels dispatches to a host variant
 * (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_ref_lut_channels(const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x, int8_t *y,
                               int32_t (*run)(const tidsp_lut_params *, const int8_t *, const int8_t *, int8_t *)) {
  int64_t at, block;
  int32_t c, st = TIDSP_OK;
  tidsp_lut_params one;
  if (!p || !lut || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->n < 0 || p->channels < 1 || p->inner < 1)
    return TIDSP_ERR_SHAPE;
  block = (int64_t)p->channels * p->inner;
  if (p->n % block != 0)
    return TIDSP_ERR_SHAPE;
  one.n = p->inner;
  for (at = 0; at < p->n && st == TIDSP_OK; at += block)
    for (c = 0; c < p->channels && st == TIDSP_OK; c++)
      st = run(&one, lut + (size_t)c * 256u, x + at + (int64_t)c * p->inner, y + at + (int64_t)c * p->inner);
  return st;
}

int32_t tidsp_lut_i8_channels__ref(const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x,
                                   int8_t *y) {
  return tidsp_ref_lut_channels(p, lut, x, y, tidsp_lut_i8__ref);
}
