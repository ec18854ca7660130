/*
 * slice.c — strided slice: y[i…] = x[start + i·step …] per dim; steps may
 * be negative. Every index read is checked to lie inside the input first.
 *
 * This is tidsp_slice__ref, the oracle: the public tidsp_slice dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_slice__ref(const tidsp_slice_params *p, const void *x, void *y) {
  int64_t in_stride[TIDSP_MAX_RANK], step[TIDSP_MAX_RANK];
  int64_t total_in, total_out = 1, in_off = 0;
  int32_t d, st;

  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_movement_check(p->rank, p->elem_size, p->in_shape, in_stride, &total_in);
  if (st != TIDSP_OK)
    return st;
  for (d = 0; d < p->rank; d++) {
    if (p->out_shape[d] < 0)
      return TIDSP_ERR_SHAPE;
    total_out *= p->out_shape[d];
  }
  if (total_out == 0)
    return TIDSP_OK;
  for (d = 0; d < p->rank; d++) {
    const int64_t last = (int64_t)p->start[d] + (int64_t)(p->out_shape[d] - 1) * p->step[d];
    if (p->step[d] == 0)
      return TIDSP_ERR_PARAM;
    if (p->start[d] < 0 || p->start[d] >= p->in_shape[d] || last < 0 ||
        last >= p->in_shape[d])
      return TIDSP_ERR_PARAM;
    in_off += (int64_t)p->start[d] * in_stride[d];
    step[d] = (int64_t)p->step[d] * in_stride[d];
  }
  tidsp_ref_strided_copy(x, y, p->elem_size, p->rank, p->out_shape, step, in_off);
  return TIDSP_OK;
}
