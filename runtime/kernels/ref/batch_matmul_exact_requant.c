/*
 * batch_matmul_exact_requant.c — tidsp_batch_matmul_exact_requant
 * (cstatic/kernels.h): ORT's QLinearMatMul bytes from MMALIB's int16
 * product z of the widened operands. z is the accumulator shifted right
 * with half-up rounding, so it names an interval of 2^shift accumulators;
 * the requantization is monotone, so when both ends give the same output
 * every accumulator of the interval does, and only the outputs whose
 * interval straddles a rounding boundary are summed again here.
 */
#include "ref_internal.h"

/* ORT's output for accumulator a (clamped to int32 as ORT's accumulator
 * is: beyond it the output saturates either way). */
static int32_t ort_out(const tidsp_ref_rq *plan, int64_t a) {
  a = a < INT32_MIN ? INT32_MIN : a > INT32_MAX ? INT32_MAX : a;
  return tidsp_ref_rq_apply(plan, 0, (int32_t)a);
}

int32_t tidsp_batch_matmul_exact_requant(const tidsp_batch_matmul_exact_params *p, const int16_t *z,
                                         const int16_t *a16, const int16_t *b16, const void *rq, int8_t *y) {
  tidsp_ref_rq plan;
  if (!p || !z || !a16 || !b16 || !rq || !y)
    return TIDSP_ERR_NULL;
  if (p->batch < 1 || p->m < 1 || p->k < 1 || p->n < 1 || p->m_pad < p->m || p->k_pad < p->k ||
      p->n_pad < p->n || p->a_batch_stride < 0 || p->b_batch_stride < 0)
    return TIDSP_ERR_SHAPE;
  if (p->shift < 0 || p->shift > 31 || p->rq.per_channel)
    return TIDSP_ERR_PARAM;
  int32_t st = tidsp_ref_rq_init(&plan, &p->rq, rq, 1, TIDSP_REF_I8_MIN, TIDSP_REF_I8_MAX);
  if (st != TIDSP_OK)
    return st;
  const int64_t step = (int64_t)1 << p->shift, half = p->shift ? step / 2 : 0;
  const size_t np = (size_t)p->n_pad, kp = (size_t)p->k_pad;
  for (int32_t b = 0; b < p->batch; b++) {
    const int16_t *zb = z + (size_t)b * (size_t)p->m_pad * np;
    const int16_t *ab = a16 + (size_t)b * (size_t)p->a_batch_stride;
    const int16_t *bb = b16 + (size_t)b * (size_t)p->b_batch_stride;
    int8_t *yb = y + (size_t)b * (size_t)p->m * (size_t)p->n;
    for (int32_t i = 0; i < p->m; i++)
      for (int32_t j = 0; j < p->n; j++) {
        const int64_t zi = zb[(size_t)i * np + (size_t)j];
        const int64_t lo_acc = zi * step - half;
        /* a saturated z: every accumulator beyond that end */
        int32_t lo = ort_out(&plan, zi == INT16_MIN ? INT64_MIN : lo_acc);
        int32_t hi = ort_out(&plan, zi == INT16_MAX ? INT64_MAX : lo_acc + step - 1);
        if (lo != hi) {
          const int16_t *ar = ab + (size_t)i * kp;
          int64_t acc = 0;
          for (int32_t kk = 0; kk < p->k; kk++)
            acc += (int32_t)ar[kk] * bb[(size_t)kk * np + (size_t)j];
          lo = ort_out(&plan, acc);
        }
        yb[(size_t)i * (size_t)p->n + (size_t)j] = (int8_t)lo;
      }
  }
  return TIDSP_OK;
}
