/*
 * cast.c — Cast: every element read as int64 or float, converted, written
 * in the target dtype. Float → integer saturates (ONNX leaves the
 * out-of-range case undefined; this keeps it defined) and truncates toward
 * zero as C and ONNX Runtime do.
 */
#include "ref_internal.h"

static void range(int32_t dt, double *lo, double *hi) {
  switch (dt) {
  case TIDSP_DTYPE_I8: *lo = -128.0, *hi = 127.0; break;
  case TIDSP_DTYPE_U8: *lo = 0.0, *hi = 255.0; break;
  case TIDSP_DTYPE_I16: *lo = -32768.0, *hi = 32767.0; break;
  case TIDSP_DTYPE_U16: *lo = 0.0, *hi = 65535.0; break;
  case TIDSP_DTYPE_I32: *lo = -2147483648.0, *hi = 2147483647.0; break;
  default: *lo = -9223372036854775808.0, *hi = 9223372036854775807.0; break;
  }
}

int32_t tidsp_cast(const tidsp_cast_params *p, const void *x, void *y) {
  int32_t i;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->n < 0)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_elem_size(p->from) || !tidsp_ref_elem_size(p->to))
    return TIDSP_ERR_DTYPE;
  for (i = 0; i < p->n; i++) {
    if (p->from == TIDSP_DTYPE_F32) {
      const float f = ((const float *)x)[i];
      if (p->to == TIDSP_DTYPE_F32) {
        ((float *)y)[i] = f;
      } else if (p->to == TIDSP_DTYPE_BOOL) {
        ((uint8_t *)y)[i] = f != 0.0f;
      } else {
        double lo, hi, t = (double)f;
        range(p->to, &lo, &hi);
        t = t != t ? 0.0 : t < lo ? lo : t > hi ? hi : t;
        tidsp_ref_store_int(y, p->to, i, t >= 9223372036854775807.0 ? INT64_MAX : (int64_t)t);
      }
    } else {
      const int64_t v = tidsp_ref_load_int(x, p->from, i);
      if (p->to == TIDSP_DTYPE_F32)
        ((float *)y)[i] = (float)v;
      else
        tidsp_ref_store_int(y, p->to, i, v);
    }
  }
  return TIDSP_OK;
}
