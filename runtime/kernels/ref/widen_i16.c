/*
 * widen_i16.c — tidsp_widen_i16 (cstatic/kernels.h): an int8 operand of a
 * runtime product as the int16 matrix MMALIB multiplies, its zero point
 * subtracted (|x − zp| ≤ 255, so the int16 products and their int64 sums
 * are exact) and zero-padded to the tile; transposed on the way when the
 * graph's operand is the transpose of what the product reads (attention's
 * Kᵀ), so no separate transpose runs.
 */
#include "ref_internal.h"

int32_t tidsp_widen_i16(const tidsp_widen_i16_params *p, const int8_t *x, int16_t *y) {
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->batch < 1 || p->rows < 1 || p->cols < 1 || p->batch_stride < 0 ||
      (p->batch > 1 && p->batch_stride < (int64_t)p->rows * p->cols))
    return TIDSP_ERR_SHAPE;
  const int32_t vr = p->transpose ? p->cols : p->rows, vc = p->transpose ? p->rows : p->cols;
  if (p->out_rows < vr || p->out_cols < vc)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_is_i8(p->zp))
    return TIDSP_ERR_PARAM;
  const size_t out_cols = (size_t)p->out_cols, plane = (size_t)p->out_rows * out_cols;
  if (p->batch == 1 && !p->transpose && p->out_rows == p->rows && p->out_cols == p->cols) {
    /* dense, from the end: y may start where x does (in place) */
    for (size_t i = plane; i-- > 0;) y[i] = (int16_t)(x[i] - p->zp);
    return TIDSP_OK;
  }
  for (int32_t b = 0; b < p->batch; b++) {
    const int8_t *xb = x + (size_t)b * (size_t)p->batch_stride;
    int16_t *yb = y + (size_t)b * plane;
    for (int32_t i = 0; i < p->out_rows; i++) {
      int16_t *yr = yb + (size_t)i * out_cols;
      int32_t j = 0;
      if (i < vr) {
        if (p->transpose)
          for (; j < vc; j++) yr[j] = (int16_t)(xb[(size_t)j * (size_t)p->cols + (size_t)i] - p->zp);
        else
          for (; j < vc; j++) yr[j] = (int16_t)(xb[(size_t)i * (size_t)p->cols + (size_t)j] - p->zp);
      }
      for (; j < p->out_cols; j++) yr[j] = 0;
    }
  }
  return TIDSP_OK;
}
