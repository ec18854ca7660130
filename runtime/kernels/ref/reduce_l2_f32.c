/*
 * reduce_l2_f32.c — ReduceL2: sqrt(Σ x²) over the dims in reduce_mask, in
 * ONNX Runtime's order (a float sum's result depends on its order).
 *
 * ORT's ReduceL2 has no "fast" path (its aggregator defines none, unlike
 * ReduceSum/ReduceMean). It drops size-1 dims and merges neighbouring dims
 * of the same kind (kept K / reduced R), then:
 *   R      (every element goes to the one output) Eigen's norm(): its
 *          vectorized sum of the rounded squares (ort_float.h), sqrt;
 *   other  one sequential sum from 0 per output, x·x added in row-major
 *          order of the output's reduced elements, then sqrt.
 * Confirmed against onnxruntime 1.30 (tests/e2e/test_reduce_l2.py).
 */
#include <math.h>

#include "ort_float.h"

int32_t tidsp_reduce_l2_f32(const tidsp_reduce_params *p, const float *x,
                            float *y) {
  int64_t n_in = 1, n_out = 1, o;
  int32_t d, kept_dims = 0;
  const int32_t st = tidsp_ref_reduce_check(p, x, y);

  if (st != TIDSP_OK)
    return st;
  for (d = p->rank - 1; d >= 0; d--) {
    const int reduced = (p->reduce_mask >> d) & 1;
    if (p->in_shape[d] < 0)
      return TIDSP_ERR_SHAPE;
    n_in *= p->in_shape[d];
    if (!reduced) {
      n_out *= p->in_shape[d];
      if (p->in_shape[d] > 1)
        kept_dims++;
    }
  }
  if (n_in == 0) {
    /* nothing to sum: each output (if any) is the norm of nothing */
    for (o = 0; o < n_out; o++)
      y[o] = 0.0f;
    return TIDSP_OK;
  }
  if (kept_dims == 0 && p->reduce_mask) {
    y[0] = sqrtf(tidsp_ort_eigen_redux(x, n_in, 1));
    return TIDSP_OK;
  }
  tidsp_ort_reduce_rowmajor(p, x, y, n_in, n_out, 1);
  for (o = 0; o < n_out; o++)
    y[o] = sqrtf(y[o]);
  return TIDSP_OK;
}
