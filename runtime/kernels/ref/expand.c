/*
 * expand.c — Expand (broadcast copy) on any dtype: an odometer over the
 * output shape, one memcpy of elem_size bytes per element.
 */
#include "ref_internal.h"

int32_t tidsp_expand__ref(const tidsp_expand_params *p, const void *x, void *y) {
  int32_t idx[TIDSP_MAX_RANK] = {0};
  int64_t n = 1, i, ox = 0;
  int32_t d;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->rank < 0 || p->rank > TIDSP_MAX_RANK || p->elem_size < 1)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < p->rank; d++) {
    if (p->shape[d] < 1 || p->in_stride[d] < 0)
      return TIDSP_ERR_SHAPE;
    n *= p->shape[d];
  }
  for (i = 0; i < n; i++) {
    memcpy((char *)y + (size_t)i * (size_t)p->elem_size, (const char *)x + (size_t)ox * (size_t)p->elem_size,
           (size_t)p->elem_size);
    for (d = p->rank - 1; d >= 0; d--) {
      ox += p->in_stride[d];
      if (++idx[d] < p->shape[d])
        break;
      ox -= (int64_t)p->in_stride[d] * p->shape[d];
      idx[d] = 0;
    }
  }
  return TIDSP_OK;
}
