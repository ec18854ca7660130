/*
 * lut_i8_select.c — tidsp_lut_i8_select (cstatic/kernels.h): an int8 →
 * int8 table per channel, the channel's index picking one of a few tables
 * (a quantize after moves that mix channels of differently quantized
 * tensors). Each channel's run of `inner` elements is one call of the
 * public tidsp_lut_i8, so the host's vector rows serve it.
 */
#include "ref_internal.h"

int32_t tidsp_lut_i8_select(const tidsp_lut_select_params *p, const int8_t *luts, const int8_t *table,
                            const int8_t *x, int8_t *y) {
  int64_t at, block;
  int32_t c, st = TIDSP_OK;
  tidsp_lut_params one;
  if (!p || !luts || !table || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->n < 0 || p->channels < 1 || p->inner < 1 || p->tables < 1)
    return TIDSP_ERR_SHAPE;
  block = (int64_t)p->channels * p->inner;
  if (p->n % block != 0)
    return TIDSP_ERR_SHAPE;
  for (c = 0; c < p->channels; c++)
    if (table[c] < 0 || table[c] >= p->tables)
      return TIDSP_ERR_PARAM;
  one.n = p->inner;
  for (at = 0; at < p->n && st == TIDSP_OK; at += block)
    for (c = 0; c < p->channels && st == TIDSP_OK; c++)
      st = tidsp_lut_i8(&one, luts + (size_t)table[c] * 256u, x + at + (int64_t)c * p->inner,
                        y + at + (int64_t)c * p->inner);
  return st;
}
