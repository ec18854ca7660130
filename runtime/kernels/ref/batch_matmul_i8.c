/*
 * batch_matmul_i8.c — int8 × int8 product of two runtime tensors, batched
 * (QLinearMatMul): one tidsp_matmul_i8 per batch, with B already
 * transposed to [n][k] rows (the compiler transposes it, or takes the
 * transpose the graph already had, as attention's Kᵀ), no bias and the
 * per-tensor requantization. tidsp_batch_matmul_i8__ref runs the reference
 * matmul; the public name (dispatch.c) the fastest variant — the same
 * bytes.
 */
#include "ref_internal.h"

#include "../kernel_variants.h"

int32_t tidsp_batch_matmul_i8_with(const tidsp_batch_matmul_i8_params *p,
                                   const int8_t *a, const int8_t *b_t,
                                   const void *rq, int8_t *y,
                                   tidsp_matmul_i8_fn matmul) {
  tidsp_matmul_params mp;
  int32_t bi, st;
  if (!p || !a || !b_t || !rq || !y)
    return TIDSP_ERR_NULL;
  if (p->batch < 1 || p->m < 1 || p->k < 1 || p->n < 1 ||
      p->a_batch_stride < 0 || p->b_batch_stride < 0)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_is_i8(p->a_zp) || !tidsp_ref_is_i8(p->b_zp) || p->rq.per_channel)
    return TIDSP_ERR_PARAM;
  memset(&mp, 0, sizeof mp);
  mp.m = p->m;
  mp.k = p->k;
  mp.n = p->n;
  mp.x_zp = p->a_zp;
  mp.w_zp = p->b_zp;
  mp.rq = p->rq;
  for (bi = 0; bi < p->batch; bi++) {
    st = matmul(&mp, a + (size_t)bi * (size_t)p->a_batch_stride,
                b_t + (size_t)bi * (size_t)p->b_batch_stride, NULL, rq,
                y + (size_t)bi * (size_t)p->m * (size_t)p->n);
    if (st != TIDSP_OK)
      return st;
  }
  return TIDSP_OK;
}

int32_t tidsp_batch_matmul_i8__ref(const tidsp_batch_matmul_i8_params *p,
                                   const int8_t *a, const int8_t *b_t,
                                   const void *rq, int8_t *y) {
  return tidsp_batch_matmul_i8_with(p, a, b_t, rq, y, tidsp_matmul_i8__ref);
}
