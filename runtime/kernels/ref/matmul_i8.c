/*
 * matmul_i8.c — quantized matrix multiply Y[m][n] = X[m][k] · Wᵀ with W
 * stored [n][k] (row j at w + j·w_row_stride, dense when the stride is 0;
 * only the first k bytes of a row are read), per-column requantization.
 *
 * The sum runs in int64 (exact for any k) and is reduced modulo 2³² with
 * the bias, which is what ORT's wrapping int32 accumulator computes.
 */
#include "conv_internal.h"
#include "../kernel_variants.h"

int32_t tidsp_matmul_i8__ref(const tidsp_matmul_params *p, const int8_t *x,
                             const int8_t *w, const int32_t *bias,
                             const void *rq, int8_t *y) {
  tidsp_ref_rq plan;
  int32_t st, i, j, kk;
  int64_t w_stride;

  if (!p || !x || !w || !rq || !y)
    return TIDSP_ERR_NULL;
  if (p->m < 0 || p->k < 0 || p->n < 1)
    return TIDSP_ERR_SHAPE;
  w_stride = tidsp_ref_w_row_stride(p->w_row_stride, p->k);
  if (w_stride < 0)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_is_i8(p->x_zp) || !tidsp_ref_is_i8(p->w_zp))
    return TIDSP_ERR_PARAM;
  st = tidsp_ref_rq_init(&plan, &p->rq, rq, p->n, TIDSP_REF_I8_MIN,
                         TIDSP_REF_I8_MAX);
  if (st != TIDSP_OK)
    return st;

  for (i = 0; i < p->m; i++) {
    const int8_t *xr = x + (size_t)i * (size_t)p->k;
    int8_t *yr = y + (size_t)i * (size_t)p->n;
    for (j = 0; j < p->n; j++) {
      const int8_t *wr = w + (size_t)j * (size_t)w_stride;
      int64_t sum = 0;
      uint32_t acc;
      for (kk = 0; kk < p->k; kk++)
        sum += (int32_t)(xr[kk] - p->x_zp) * (int32_t)(wr[kk] - p->w_zp);
      acc = (uint32_t)sum + (bias ? (uint32_t)bias[j] : 0u);
      yr[j] = (int8_t)tidsp_ref_rq_apply(&plan, j, tidsp_ref_u32_to_i32(acc));
    }
  }
  return TIDSP_OK;
}
