/*
 * gather_nd.c — GatherND on any dtype (bytes copied): for each batch, each
 * index tuple picks one slice of that batch's data. All indices are
 * checked before anything is written. The compiler folds a constant
 * GatherND (a relative-position table indexed by a constant index) with
 * this same function.
 */
#include "ref_internal.h"

int32_t tidsp_gather_nd(const tidsp_gather_nd_params *p, const void *data,
                        const int64_t *indices, void *y) {
  int64_t cells = 1, b, t, n;
  int32_t d;
  if (!p || !data || !indices || !y)
    return TIDSP_ERR_NULL;
  if (p->k < 1 || p->k > TIDSP_MAX_RANK || p->batches < 0 || p->count < 0 || p->slice_bytes < 0)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < p->k; d++) {
    if (p->dims[d] < 1)
      return TIDSP_ERR_SHAPE;
    cells *= p->dims[d];
  }
  n = (int64_t)p->batches * p->count;
  for (t = 0; t < n * p->k; t++) {
    const int64_t v = indices[t], dim = p->dims[t % p->k];
    if (v < -dim || v >= dim)
      return TIDSP_ERR_PARAM;
  }
  for (b = 0; b < p->batches; b++) {
    const char *src = (const char *)data + (size_t)b * (size_t)cells * (size_t)p->slice_bytes;
    for (t = 0; t < p->count; t++) {
      const int64_t *ix = indices + (b * p->count + t) * p->k;
      int64_t off = 0;
      for (d = 0; d < p->k; d++)
        off = off * p->dims[d] + (ix[d] < 0 ? ix[d] + p->dims[d] : ix[d]);
      memcpy((char *)y + (size_t)(b * p->count + t) * (size_t)p->slice_bytes,
             src + (size_t)off * (size_t)p->slice_bytes, (size_t)p->slice_bytes);
    }
  }
  return TIDSP_OK;
}
