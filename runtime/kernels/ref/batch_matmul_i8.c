/*
 * batch_matmul_i8.c — int8 × int8 matrix multiply of two runtime tensors,
 * batched (QLinearMatMul): exact int32 accumulation of the zero-point
 * corrected products in k order, then the shared requantization (per
 * tensor).
 */
#include "ref_internal.h"

#define COLS 64

int32_t tidsp_batch_matmul_i8(const tidsp_batch_matmul_i8_params *p,
                              const int8_t *a, const int8_t *b, const void *rq,
                              int8_t *y) {
  tidsp_ref_rq plan;
  int32_t st, bi, i, j, j0, kk;

  if (!p || !a || !b || !rq || !y)
    return TIDSP_ERR_NULL;
  if (p->batch < 1 || p->m < 1 || p->k < 1 || p->n < 1 ||
      p->a_batch_stride < 0 || p->b_batch_stride < 0)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_is_i8(p->a_zp) || !tidsp_ref_is_i8(p->b_zp))
    return TIDSP_ERR_PARAM;
  st = tidsp_ref_rq_init(&plan, &p->rq, rq, 1, TIDSP_REF_I8_MIN,
                         TIDSP_REF_I8_MAX);
  if (st != TIDSP_OK)
    return st;
  for (bi = 0; bi < p->batch; bi++) {
    const int8_t *ab = a + (size_t)bi * (size_t)p->a_batch_stride;
    const int8_t *bb = b + (size_t)bi * (size_t)p->b_batch_stride;
    int8_t *yb = y + (size_t)bi * (size_t)p->m * (size_t)p->n;
    for (i = 0; i < p->m; i++) {
      const int8_t *ar = ab + (size_t)i * (size_t)p->k;
      int8_t *yr = yb + (size_t)i * (size_t)p->n;
      /* B is read along its rows: COLS accumulators at a time, each the
       * k-ordered sum wrapped to 32 bits (as the int64 sum cast would). */
      for (j0 = 0; j0 < p->n; j0 += COLS) {
        const int32_t jn = p->n - j0 < COLS ? p->n - j0 : COLS;
        uint32_t acc[COLS];
        for (j = 0; j < jn; j++)
          acc[j] = 0u;
        for (kk = 0; kk < p->k; kk++) {
          const int32_t av = ar[kk] - p->a_zp;
          const int8_t *br = bb + (size_t)kk * (size_t)p->n + (size_t)j0;
          for (j = 0; j < jn; j++)
            acc[j] += (uint32_t)(av * (br[j] - p->b_zp));
        }
        for (j = 0; j < jn; j++)
          yr[j0 + j] = (int8_t)tidsp_ref_rq_apply(&plan, 0, tidsp_ref_u32_to_i32(acc[j]));
      }
    }
  }
  return TIDSP_OK;
}
