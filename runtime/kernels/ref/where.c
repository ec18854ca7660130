/*
 * where.c — Where (select) with numpy broadcasting of all three operands,
 * on any dtype: an odometer over the output shape, one memcpy of
 * elem_size bytes per element.
 */
#include "ref_internal.h"

int32_t tidsp_where(const tidsp_where_params *p, const void *cond,
                    const void *x, const void *y, void *out) {
  int32_t idx[TIDSP_MAX_RANK] = {0};
  int64_t n = 1, i, oc = 0, ox = 0, oy = 0;
  int32_t d, r;
  if (!p || !cond || !x || !y || !out)
    return TIDSP_ERR_NULL;
  r = p->bc.rank;
  if (r < 0 || r > TIDSP_MAX_RANK || p->elem_size < 1)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < r; d++) {
    if (p->bc.shape[d] < 1 || p->bc.a_stride[d] < 0 || p->bc.b_stride[d] < 0 || p->c_stride[d] < 0)
      return TIDSP_ERR_SHAPE;
    n *= p->bc.shape[d];
  }
  for (i = 0; i < n; i++) {
    const uint8_t c = ((const uint8_t *)cond)[oc];
    memcpy((char *)out + (size_t)i * (size_t)p->elem_size,
           c ? (const char *)x + (size_t)ox * (size_t)p->elem_size
             : (const char *)y + (size_t)oy * (size_t)p->elem_size,
           (size_t)p->elem_size);
    for (d = r - 1; d >= 0; d--) { /* next output index */
      oc += p->c_stride[d];
      ox += p->bc.a_stride[d];
      oy += p->bc.b_stride[d];
      if (++idx[d] < p->bc.shape[d])
        break;
      oc -= (int64_t)p->c_stride[d] * p->bc.shape[d];
      ox -= (int64_t)p->bc.a_stride[d] * p->bc.shape[d];
      oy -= (int64_t)p->bc.b_stride[d] * p->bc.shape[d];
      idx[d] = 0;
    }
  }
  return TIDSP_OK;
}
