/*
 * lut_i16.c — tidsp_lut_i16 (cstatic/kernels.h): an int8 → int16 table,
 * y = lut[x + 128]: an int8 activation table whose result the next layer
 * reads widened (y − zp as int16) folds its zero point into the table, so
 * that layer's widening pass is not needed
 * (compiler/passes/fuse_widen_into_producer.c).
 */
#include "ref_internal.h"

int32_t tidsp_lut_i16(const tidsp_lut_params *p, const int16_t *lut, const int8_t *x, int16_t *y) {
  if (!p || !lut || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->n < 0)
    return TIDSP_ERR_SHAPE;
  /* from the end: y may start where x does (in place, y's bytes twice
   * x's: element i is written over x's 2i and 2i + 1, already read) */
  for (int32_t i = p->n - 1; i >= 0; i--)
    y[i] = lut[x[i] + 128];
  return TIDSP_OK;
}
