/*
 * concat.c — concatenate n_inputs tensors viewed as
 * [outer][axis_len[i]·inner_bytes] along the second dim.
 */
#include "ref_internal.h"

int32_t tidsp_concat(const tidsp_concat_params *p, const void *const *xs,
                     void *y) {
  size_t row = 0, off;
  int32_t i, o;
  if (!p || !xs || !y || (p->n_inputs > 0 && !p->axis_len))
    return TIDSP_ERR_NULL;
  if (p->n_inputs < 0 || p->outer < 0 || p->inner_bytes < 0)
    return TIDSP_ERR_SHAPE;
  for (i = 0; i < p->n_inputs; i++) {
    if (p->axis_len[i] < 0)
      return TIDSP_ERR_SHAPE;
    if (!xs[i] && p->axis_len[i] > 0 && p->outer > 0 && p->inner_bytes > 0)
      return TIDSP_ERR_NULL;
    row += (size_t)p->axis_len[i] * (size_t)p->inner_bytes;
  }
  for (o = 0; o < p->outer; o++) {
    off = (size_t)o * row;
    for (i = 0; i < p->n_inputs; i++) {
      const size_t len = (size_t)p->axis_len[i] * (size_t)p->inner_bytes;
      if (len > 0)
        memcpy((uint8_t *)y + off, (const uint8_t *)xs[i] + (size_t)o * len, len);
      off += len;
    }
  }
  return TIDSP_OK;
}
