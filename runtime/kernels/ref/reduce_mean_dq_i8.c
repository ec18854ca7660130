/*
 * reduce_mean_dq_i8.c — ReduceMean of DequantizeLinear(x) for an int8 x:
 * the floats tidsp_dequantize would write (dq, a table of them the
 * compiler computed), summed in the order
 * tidsp_reduce_mean_f32 sums a 64-byte-aligned tensor of them (ONNX
 * Runtime's: reduce_mean_f32.c), without that float copy of x — a
 * squeeze-excitation block's mean reads one byte per element instead of
 * writing four and reading them back.
 */
#include "reduce_mean_internal.h"

int32_t tidsp_reduce_mean_dq_i8__ref(const tidsp_reduce_params *p, const float *dq, const int8_t *x, float *y) {
  tidsp_ref_reduce_dims r;
  int done = 1;
  const int32_t st = dq ? tidsp_ref_reduce_begin(p, x, y, &r, &done) : TIDSP_ERR_NULL;
  if (done)
    return st;
  if (p->rank < 1)
    return TIDSP_ERR_PARAM; /* a scalar: no dims to reduce, no block to read */
  if (r.n_grp == 0 || (r.n_grp == 1 && !r.grp_red[0])) {
    /* nothing to sum: every output is one element */
    int64_t k;
    for (k = 0; k < r.n_out; k++)
      y[k] = dq[x[k] + 128] / (float)r.count;
    return TIDSP_OK;
  }
  if (!tidsp_ref_reduce_is_blocks(&r))
    return TIDSP_ERR_PARAM; /* not one contiguous block per output */
  tidsp_ref_mean_blocks(NULL, x, dq, &r, p->channels_last_order, TIDSP_ORT_DQ_TABLE, y);
  return TIDSP_OK;
}
