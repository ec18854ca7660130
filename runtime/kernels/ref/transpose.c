/*
 * transpose.c — permute the dims of a dense tensor: output dim i is input
 * dim perm[i]. Walks the output in order; the input offset advances by the
 * input stride of the corresponding dim.
 *
 * This is tidsp_transpose__ref, the oracle: the public tidsp_transpose dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_transpose__ref(const tidsp_transpose_params *p, const void *x,
                             void *y) {
  int64_t in_stride[TIDSP_MAX_RANK], step[TIDSP_MAX_RANK], total;
  int32_t out_shape[TIDSP_MAX_RANK];
  int32_t seen = 0, d, st;

  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_movement_check(p->rank, p->elem_size, p->in_shape, in_stride, &total);
  if (st != TIDSP_OK)
    return st;
  for (d = 0; d < p->rank; d++) {
    if (p->perm[d] < 0 || p->perm[d] >= p->rank || (seen >> p->perm[d]) & 1)
      return TIDSP_ERR_PARAM;
    seen |= 1 << p->perm[d];
    out_shape[d] = p->in_shape[p->perm[d]];
    step[d] = in_stride[p->perm[d]];
  }
  if (total == 0)
    return TIDSP_OK;
  tidsp_ref_strided_copy(x, y, p->elem_size, p->rank, out_shape, step, 0);
  return TIDSP_OK;
}
