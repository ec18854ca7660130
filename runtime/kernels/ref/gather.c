/*
 * gather.c — Gather with runtime indices (embedding lookups): one memcpy of
 * inner_bytes per (outer, index), every index checked before it is used.
 */
#include "ref_internal.h"

int32_t tidsp_gather(const tidsp_gather_params *p, const void *data,
                     const void *indices, void *y) {
  int32_t o, i;
  if (!p || !data || !indices || !y)
    return TIDSP_ERR_NULL;
  if (p->outer < 0 || p->axis_dim < 1 || p->inner_bytes < 0 || p->count < 0)
    return TIDSP_ERR_SHAPE;
  if (p->index_bytes != 4 && p->index_bytes != 8)
    return TIDSP_ERR_PARAM;
  for (i = 0; i < p->count; i++) {
    const int64_t v = p->index_bytes == 8 ? ((const int64_t *)indices)[i]
                                          : ((const int32_t *)indices)[i];
    if (v < -(int64_t)p->axis_dim || v >= p->axis_dim)
      return TIDSP_ERR_PARAM;
  }
  for (o = 0; o < p->outer; o++) {
    for (i = 0; i < p->count; i++) {
      int64_t v = p->index_bytes == 8 ? ((const int64_t *)indices)[i]
                                      : ((const int32_t *)indices)[i];
      if (v < 0)
        v += p->axis_dim;
      memcpy((char *)y + ((size_t)o * (size_t)p->count + (size_t)i) * (size_t)p->inner_bytes,
             (const char *)data + ((size_t)o * (size_t)p->axis_dim + (size_t)v) * (size_t)p->inner_bytes,
             (size_t)p->inner_bytes);
    }
  }
  return TIDSP_OK;
}
