/*
 * lut_i8.c — any int8 → int8 unary function as a 256-entry table built at
 * compile time: y = lut[x + 128]. In place (y == x) is allowed.
 *
 * This is tidsp_lut_i8__ref, the oracle: the public tidsp_lut_i8 dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_lut_i8__ref(const tidsp_lut_params *p, const int8_t *lut,
                          const int8_t *x, int8_t *y) {
  int32_t i;
  if (!p || !lut || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->n < 0)
    return TIDSP_ERR_SHAPE;
  for (i = 0; i < p->n; i++)
    y[i] = lut[x[i] + 128];
  return TIDSP_OK;
}
