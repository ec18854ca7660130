/*
 * slice.c — strided slice: y[i…] = x[start + i·step …] per dim; steps may
 * be negative. Every index read is checked to lie inside the input first.
 *
 * This is tidsp_slice__ref, the oracle: the public tidsp_slice dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_slice__ref(const tidsp_slice_params *p, const void *x, void *y) {
  int64_t in_stride[TIDSP_MAX_RANK];
  int32_t idx[TIDSP_MAX_RANK] = {0};
  int32_t d, rank, inner, i;
  int64_t total_in = 1, total_out = 1, rows = 1, r, in_off = 0, st;
  const uint8_t *xb = (const uint8_t *)x;
  uint8_t *yb = (uint8_t *)y;
  size_t es;

  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  rank = p->rank;
  if (rank < 0 || rank > TIDSP_MAX_RANK)
    return TIDSP_ERR_SHAPE;
  if (p->elem_size < 1)
    return TIDSP_ERR_PARAM;
  es = (size_t)p->elem_size;
  for (d = rank - 1; d >= 0; d--) {
    if (p->in_shape[d] < 0 || p->out_shape[d] < 0)
      return TIDSP_ERR_SHAPE;
    in_stride[d] = total_in;
    total_in *= p->in_shape[d];
    total_out *= p->out_shape[d];
  }
  if (total_out == 0)
    return TIDSP_OK;
  for (d = 0; d < rank; d++) {
    const int64_t last = (int64_t)p->start[d] + (int64_t)(p->out_shape[d] - 1) * p->step[d];
    if (p->step[d] == 0)
      return TIDSP_ERR_PARAM;
    if (p->start[d] < 0 || p->start[d] >= p->in_shape[d] || last < 0 ||
        last >= p->in_shape[d])
      return TIDSP_ERR_PARAM;
    in_off += (int64_t)p->start[d] * in_stride[d];
  }
  inner = rank > 0 ? p->out_shape[rank - 1] : 1;
  st = rank > 0 ? (int64_t)p->step[rank - 1] * in_stride[rank - 1] : 0;
  for (d = 0; d < rank - 1; d++)
    rows *= p->out_shape[d];

  for (r = 0; r < rows; r++) {
    uint8_t *yr = yb + (size_t)r * (size_t)inner * es;
    for (i = 0; i < inner; i++)
      tidsp_ref_copy_elem(yr + (size_t)i * es, xb + (size_t)(in_off + i * st) * es,
                          p->elem_size);
    for (d = rank - 2; d >= 0; d--) {
      const int64_t dstep = (int64_t)p->step[d] * in_stride[d];
      in_off += dstep;
      if (++idx[d] < p->out_shape[d])
        break;
      in_off -= dstep * p->out_shape[d];
      idx[d] = 0;
    }
  }
  return TIDSP_OK;
}
