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
#include "ort_float.h"

int32_t tidsp_reduce_mean_f32(const tidsp_reduce_params *p, const float *x,
                              float *y) {
  int64_t grp[TIDSP_MAX_RANK]; /* merged dims (size > 1) */
  int grp_red[TIDSP_MAX_RANK];
  int32_t n_grp = 0, d;
  int64_t n_in = 1, n_out = 1, count = 1, i, r;
  float div;
  const int32_t st = tidsp_ref_reduce_check(p, x, y);

  if (st != TIDSP_OK)
    return st;
  for (d = 0; d < p->rank; d++) {
    const int reduced = (p->reduce_mask >> d) & 1;
    const int64_t s = p->in_shape[d];
    if (s < 0)
      return TIDSP_ERR_SHAPE;
    n_in *= s;
    if (reduced)
      count *= s;
    else
      n_out *= s;
    if (s == 1)
      continue;
    if (n_grp > 0 && grp_red[n_grp - 1] == reduced) {
      grp[n_grp - 1] *= s;
    } else {
      grp[n_grp] = s;
      grp_red[n_grp] = reduced;
      n_grp++;
    }
  }
  if (n_in == 0)
    return n_out == 0 ? TIDSP_OK : TIDSP_ERR_SHAPE; /* a mean of nothing */
  div = (float)count;

  if (n_grp == 0 || (n_grp == 1 && !grp_red[0])) {
    /* nothing to sum: every output is one element */
    for (i = 0; i < n_out; i++)
      y[i] = x[i] / div;
    return TIDSP_OK;
  }
  if (grp_red[n_grp - 1] && (n_grp == 1 || (n_grp == 2 && !grp_red[0]))) {
    /* R or KR: one contiguous block per output */
    if (p->channels_last_order) {
      /* ORT's sequential sums, four outputs side by side: each keeps its
       * own order (from 0, element 0, 1, …), and the four independent
       * chains overlap instead of each add waiting on the one before
       * (measured: 2.5–3.8× on MobileNetV3's SE means; 8 or 16 outputs in
       * an array were slower with gcc -O2, the accumulators left memory). */
      for (i = 0; i + 4 <= n_out; i += 4) {
        const float *x0 = x + i * count, *x1 = x0 + count, *x2 = x1 + count, *x3 = x2 + count;
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        for (r = 0; r < count; r++) {
          a0 += x0[r];
          a1 += x1[r];
          a2 += x2[r];
          a3 += x3[r];
        }
        y[i] = a0 / div;
        y[i + 1] = a1 / div;
        y[i + 2] = a2 / div;
        y[i + 3] = a3 / div;
      }
      for (; i < n_out; i++)
        y[i] = tidsp_ort_seq_sum(x + i * count, count) / div;
      return TIDSP_OK;
    }
    for (i = 0; i < n_out; i++)
      y[i] = tidsp_ort_eigen_sum(x + i * count, count) / div;
    return TIDSP_OK;
  }
  if (n_grp == 2 && grp_red[0]) {
    /* RK: rows of n_out, added row by row */
    for (i = 0; i < n_out; i++)
      y[i] = x[i];
    for (r = 1; r < count; r++) {
      const float *xr = x + r * n_out;
      for (i = 0; i < n_out; i++)
        y[i] += xr[i];
    }
    for (i = 0; i < n_out; i++)
      y[i] /= div;
    return TIDSP_OK;
  }
  if (n_grp == 3 && grp_red[0]) {
    /* RKR: [outer][kept][inner] */
    const int64_t outer = grp[0], kept = grp[1], inner = grp[2];
    for (i = 0; i < kept; i++) {
      float v = 0.0f;
      for (r = 0; r < outer; r++)
        v += tidsp_ort_eigen_sum(x + (r * kept + i) * inner, inner);
      y[i] = v / div;
    }
    return TIDSP_OK;
  }
  tidsp_ort_reduce_rowmajor(p, x, y, n_in, n_out, 0);
  for (i = 0; i < n_out; i++)
    y[i] /= div;
  return TIDSP_OK;
}
