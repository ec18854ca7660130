/*
 * cast.c — Cast: every element read as a double (float dtypes, exactly)
 * or as an int64/uint64, converted, written in the target dtype, as ONNX
 * Runtime converts:
 *   float → float: f64 → f32 rounds once; f16/bf16 targets go through
 *     float, rounded to nearest even (tidsp_f32_to_f16 / _bf16);
 *   float → integer: truncated toward zero and saturated (ONNX leaves the
 *     out-of-range case undefined; this keeps it defined), NaN → 0;
 *   integer → float: one rounding to the target (f16/bf16 through float);
 *   integer → integer: the low bits (C's conversion); → bool: != 0.
 */
#include "ref_internal.h"

static void range(int32_t dt, double *lo, double *hi) {
  switch (dt) {
  case TIDSP_DTYPE_I8: *lo = -128.0, *hi = 127.0; break;
  case TIDSP_DTYPE_U8: *lo = 0.0, *hi = 255.0; break;
  case TIDSP_DTYPE_I16: *lo = -32768.0, *hi = 32767.0; break;
  case TIDSP_DTYPE_U16: *lo = 0.0, *hi = 65535.0; break;
  case TIDSP_DTYPE_I32: *lo = -2147483648.0, *hi = 2147483647.0; break;
  case TIDSP_DTYPE_U32: *lo = 0.0, *hi = 4294967295.0; break;
  case TIDSP_DTYPE_U64: *lo = 0.0, *hi = 18446744073709551615.0; break;
  default: *lo = -9223372036854775808.0, *hi = 9223372036854775807.0; break;
  }
}

/* A double (not NaN) into integer dtype dt: truncated, saturated. */
static void store_sat(void *y, int32_t dt, int32_t i, double t) {
  double lo, hi;
  range(dt, &lo, &hi);
  t = t != t ? 0.0 : t < lo ? lo : t > hi ? hi : t;
  if (dt == TIDSP_DTYPE_U64)
    ((uint64_t *)y)[i] = t >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)t;
  else
    tidsp_ref_store_int(y, dt, i, t >= 9223372036854775807.0 ? INT64_MAX : (int64_t)t);
}

/* An integer element (u64 as its bits) into float dtype dt. */
static void store_int_as_float(void *y, int32_t dt, int32_t i, int64_t v, int is_u64) {
  if (dt == TIDSP_DTYPE_F64) {
    ((double *)y)[i] = is_u64 ? (double)(uint64_t)v : (double)v;
  } else {
    const float f = is_u64 ? (float)(uint64_t)v : (float)v;
    tidsp_ref_store_f(y, dt, i, (double)f); /* f32 exactly; f16/bf16 round once */
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
    if (p->to == TIDSP_DTYPE_F32 && (p->from == TIDSP_DTYPE_F16 || p->from == TIDSP_DTYPE_BF16)) {
      /* widening keeps every bit, a signalling NaN's too (no double) */
      const uint16_t h = ((const uint16_t *)x)[i];
      ((float *)y)[i] = p->from == TIDSP_DTYPE_F16 ? tidsp_f16_to_f32(h) : tidsp_bf16_to_f32(h);
    } else if (tidsp_ref_is_float(p->from)) {
      const double d = tidsp_ref_load_f(x, p->from, i);
      if (tidsp_ref_is_float(p->to))
        tidsp_ref_store_f(y, p->to, i, p->from == TIDSP_DTYPE_F64 && p->to != TIDSP_DTYPE_F64 ? (double)(float)d : d);
      else if (p->to == TIDSP_DTYPE_BOOL)
        ((uint8_t *)y)[i] = d != 0.0;
      else
        store_sat(y, p->to, i, d);
    } else {
      const int64_t v = tidsp_ref_load_int(x, p->from, i);
      if (tidsp_ref_is_float(p->to))
        store_int_as_float(y, p->to, i, v, p->from == TIDSP_DTYPE_U64);
      else
        tidsp_ref_store_int(y, p->to, i, v);
    }
  }
  return TIDSP_OK;
}
