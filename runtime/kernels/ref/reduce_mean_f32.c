/*
 * reduce_mean_f32.c — ReduceMean over the dims in reduce_mask.
 *
 * The input is walked once in row-major order and each element is added to
 * its output; restricted to one output, that order is the row-major order
 * of the reduced elements, as the header specifies. Then each sum is
 * divided by the number of reduced elements.
 */
#include "ref_internal.h"

int32_t tidsp_reduce_mean_f32(const tidsp_reduce_params *p, const float *x,
                              float *y) {
  int32_t idx[TIDSP_MAX_RANK] = {0};
  int64_t out_stride[TIDSP_MAX_RANK];
  int64_t n_in = 1, n_out = 1, count = 1, i, o;
  int32_t d;

  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->rank < 0 || p->rank > TIDSP_MAX_RANK)
    return TIDSP_ERR_SHAPE;
  if (p->reduce_mask & ~((1 << p->rank) - 1))
    return TIDSP_ERR_PARAM;
  for (d = p->rank - 1; d >= 0; d--) {
    const int reduced = (p->reduce_mask >> d) & 1;
    if (p->in_shape[d] < 0)
      return TIDSP_ERR_SHAPE;
    out_stride[d] = reduced ? 0 : n_out;
    n_in *= p->in_shape[d];
    if (reduced)
      count *= p->in_shape[d];
    else
      n_out *= p->in_shape[d];
  }
  if (n_in == 0)
    return n_out == 0 ? TIDSP_OK : TIDSP_ERR_SHAPE; /* a mean of nothing */

  for (o = 0; o < n_out; o++)
    y[o] = 0.0f;
  o = 0; /* output offset of the current input element */
  for (i = 0; i < n_in; i++) {
    y[o] += x[i];
    for (d = p->rank - 1; d >= 0; d--) {
      o += out_stride[d];
      if (++idx[d] < p->in_shape[d])
        break;
      o -= out_stride[d] * p->in_shape[d];
      idx[d] = 0;
    }
  }
  for (o = 0; o < n_out; o++)
    y[o] /= (float)count;
  return TIDSP_OK;
}
