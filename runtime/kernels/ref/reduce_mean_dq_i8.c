/*
 * reduce_mean_dq_i8.c — ReduceMean of DequantizeLinear(x) for an int8 x:
 * the floats tidsp_dequantize would write, summed in the order
 * tidsp_reduce_mean_f32 sums a 64-byte-aligned tensor of them (ONNX
 * Runtime's: reduce_mean_f32.c), without that float copy of x — a
 * squeeze-excitation block's mean reads one byte per element instead of
 * writing four and reading them back.
 */
#include "reduce_mean_internal.h"

int32_t tidsp_reduce_mean_dq_i8(const tidsp_reduce_params *p, const float *scale, const int32_t *zero_point,
                                const int8_t *x, float *y) {
  tidsp_ref_reduce_dims r;
  float dq[256]; /* each code's dequantized float: a load instead of a subtract, convert and multiply */
  int32_t i, st = tidsp_ref_reduce_check(p, x, y);
  if (st == TIDSP_OK && (!scale || !zero_point))
    st = TIDSP_ERR_NULL;
  if (st == TIDSP_OK)
    st = tidsp_ref_reduce_dims_of(p, &r);
  if (st != TIDSP_OK)
    return st;
  if (r.n_in == 0)
    return r.n_out == 0 ? TIDSP_OK : TIDSP_ERR_SHAPE; /* a mean of nothing */
  for (i = 0; i < 256; i++)
    dq[i] = tidsp_ort_dq((int8_t)(i - 128), scale[0], zero_point[0]);
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
