/*
 * matmul_f32.c — batched float matrix multiply Y[b] = A[b] · B[b] (+ bias),
 * A [m][k], B [k][n] (not transposed), Y [m][n]; a batch stride of 0 reuses
 * the same operand for every batch.
 */
#include "ref_internal.h"

int32_t tidsp_matmul_f32__ref(const tidsp_matmul_f32_params *p, const float *a,
                              const float *b, const float *bias, float *y) {
  int32_t bt, i, j, kk;

  if (!p || !a || !b || !y)
    return TIDSP_ERR_NULL;
  if (p->batch < 0 || p->m < 0 || p->k < 0 || p->n < 0 ||
      p->a_batch_stride < 0 || p->b_batch_stride < 0)
    return TIDSP_ERR_SHAPE;
  for (bt = 0; bt < p->batch; bt++) {
    const float *ab = a + (size_t)bt * (size_t)p->a_batch_stride;
    const float *bb = b + (size_t)bt * (size_t)p->b_batch_stride;
    float *yb = y + (size_t)bt * (size_t)p->m * (size_t)p->n;
    for (i = 0; i < p->m; i++) {
      float *yr = yb + (size_t)i * (size_t)p->n;
      for (j = 0; j < p->n; j++)
        yr[j] = bias ? bias[j] : 0.0f;
      /* k outer, n inner: both B's row and Y's row are contiguous */
      for (kk = 0; kk < p->k; kk++) {
        const float av = ab[(size_t)i * (size_t)p->k + (size_t)kk];
        const float *br = bb + (size_t)kk * (size_t)p->n;
        for (j = 0; j < p->n; j++)
          yr[j] += av * br[j];
      }
    }
  }
  return TIDSP_OK;
}
