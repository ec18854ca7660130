/*
 * reduce_mean_f32.c — ReduceMean over the dims in reduce_mask, summed in
 * ONNX Runtime's order (a float sum's result depends on its order).
 *
 * ORT first drops size-1 dims and merges neighbouring dims of the same kind
 * (kept K / reduced R), then picks a path by the resulting pattern:
 *   KR, R  each output's block is contiguous: Eigen's vectorized sum
 *          (ort_float.h), then / count. This is the common case: the mean
 *          over H·W of an NCHW tensor (global pooling, x.mean([2, 3])).
 *          With channels_last_order, ORT had moved the tensor to NHWC
 *          (downstream of int8 convolutions), making it RK: a sequential
 *          sum per channel in (h, w) order.
 *   RK     out = row 0, then += each further row, element by element.
 *   RKR    for each kept index, Σ over the outer rows of the Eigen sum of
 *          its contiguous inner block, in row order.
 *   other  (non-adjacent reduced dims) one sequential sum per output in the
 *          row-major order of its reduced elements.
 * Then each sum is divided by the count (a true division).
 * Not mirrored: KRK (a reduced block between two kept ones) which ORT sums
 * with an MLAS GEMM against a vector of ones; the row-major order is used,
 * which can differ from ORT in the last bit.
 */
#include "reduce_mean_internal.h"

int32_t tidsp_reduce_mean_f32(const tidsp_reduce_params *p, const float *x,
                              float *y) {
  tidsp_ref_reduce_dims r;
  int64_t i, k;
  float div;
  int done;
  const int32_t st = tidsp_ref_reduce_begin(p, x, y, &r, &done);

  if (done)
    return st;
  div = (float)r.count;

  if (r.n_grp == 0 || (r.n_grp == 1 && !r.grp_red[0])) {
    /* nothing to sum: every output is one element */
    for (i = 0; i < r.n_out; i++)
      y[i] = x[i] / div;
    return TIDSP_OK;
  }
  if (tidsp_ref_reduce_is_blocks(&r)) {
    /* R or KR: one contiguous block per output */
    tidsp_ref_mean_blocks(x, NULL, NULL, &r, p->channels_last_order, TIDSP_ORT_VALUES, y);
    return TIDSP_OK;
  }
  if (r.n_grp == 2 && r.grp_red[0]) {
    /* RK: rows of n_out, added row by row */
    for (i = 0; i < r.n_out; i++)
      y[i] = x[i];
    for (k = 1; k < r.count; k++) {
      const float *xr = x + k * r.n_out;
      for (i = 0; i < r.n_out; i++)
        y[i] += xr[i];
    }
    for (i = 0; i < r.n_out; i++)
      y[i] /= div;
    return TIDSP_OK;
  }
  if (r.n_grp == 3 && r.grp_red[0]) {
    /* RKR: [outer][kept][inner] */
    const int64_t outer = r.grp[0], kept = r.grp[1], inner = r.grp[2];
    for (i = 0; i < kept; i++) {
      float v = 0.0f;
      for (k = 0; k < outer; k++)
        v += tidsp_ort_eigen_sum(x + (k * kept + i) * inner, inner);
      y[i] = v / div;
    }
    return TIDSP_OK;
  }
  tidsp_ort_reduce_rowmajor(p, x, y, r.n_in, r.n_out, 0);
  for (i = 0; i < r.n_out; i++)
    y[i] /= div;
  return TIDSP_OK;
}
