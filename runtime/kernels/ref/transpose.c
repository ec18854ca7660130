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
  int64_t in_stride[TIDSP_MAX_RANK], step[TIDSP_MAX_RANK];
  int32_t out_shape[TIDSP_MAX_RANK], idx[TIDSP_MAX_RANK] = {0};
  int32_t seen = 0, d, rank, inner, i;
  int64_t total = 1, rows = 1, r, in_off = 0;
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
    if (p->in_shape[d] < 0)
      return TIDSP_ERR_SHAPE;
    in_stride[d] = total;
    total *= p->in_shape[d];
  }
  for (d = 0; d < rank; d++) {
    if (p->perm[d] < 0 || p->perm[d] >= rank || (seen >> p->perm[d]) & 1)
      return TIDSP_ERR_PARAM;
    seen |= 1 << p->perm[d];
    out_shape[d] = p->in_shape[p->perm[d]];
    step[d] = in_stride[p->perm[d]];
  }
  if (total == 0)
    return TIDSP_OK;
  inner = rank > 0 ? out_shape[rank - 1] : 1;
  for (d = 0; d < rank - 1; d++)
    rows *= out_shape[d];

  for (r = 0; r < rows; r++) {
    const int64_t st = rank > 0 ? step[rank - 1] : 0;
    uint8_t *yr = yb + (size_t)r * (size_t)inner * es;
    for (i = 0; i < inner; i++)
      tidsp_ref_copy_elem(yr + (size_t)i * es, xb + (size_t)(in_off + i * st) * es,
                          p->elem_size);
    for (d = rank - 2; d >= 0; d--) {
      in_off += step[d];
      if (++idx[d] < out_shape[d])
        break;
      in_off -= step[d] * out_shape[d];
      idx[d] = 0;
    }
  }
  return TIDSP_OK;
}
