/*
 * quantize.c — float → integer as ONNX Runtime's MLAS kernels: v = fl(x / s)
 * (a true divide), rounded half to even, + zp, saturated; NaN → qmin (MLAS
 * clamps with max_ps, which returns the bound for a NaN).
 *
 * MLAS clamps v in float to [qmin − zp, qmax − zp] before rounding. For the
 * 8- and 16-bit types those bounds are exact floats and rounding is
 * monotonic, so clamping the rounded integer instead gives the same result;
 * it also stays exact for int32, whose bounds a float cannot hold.
 *
 * This is tidsp_quantize__ref, the oracle: the public tidsp_quantize dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "qdq_internal.h"

/* One row of the integer type T, in the loop below: a macro, as only the
 * type differs. */
#define QUANTIZE_ROW(T)                                                                                            \
  do {                                                                                                             \
    T *yr = (T *)y + base;                                                                                         \
    for (i = 0; i < p->inner; i++)                                                                                 \
      yr[i] = (T)quantize_value(xr[i], s, zp, qmin, qmax);                                                         \
  } while (0)

static inline int64_t quantize_value(float x, float s, int64_t zp, int64_t qmin,
                                     int64_t qmax) {
  const float v = x / s;
  /* |zp| < 2^31: beyond ±2^33 every type saturates */
  if (!(v > -0x1p33f)) /* NaN, −inf, or below any range */
    return qmin;
  if (v > 0x1p33f)
    return qmax;
  return tidsp_ref_clamp_i64(tidsp_ref_rne_i64(v) + zp, qmin, qmax);
}

int32_t tidsp_quantize__ref(const tidsp_qdq_params *p, const float *scale,
                            const int32_t *zero_point, const float *x, void *y) {
  int64_t qmin = 0, qmax = 0;
  int32_t o, c, i;
  int32_t st = tidsp_ref_qdq_check(p, scale, zero_point, x, y);
  if (st != TIDSP_OK)
    return st;
  tidsp_ref_qdq_range(p->dtype, &qmin, &qmax);
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
      const float *xr = x + base;
      float s = scale[c];
      int64_t zp = zero_point[c];
      switch (p->dtype) {
      case TIDSP_DTYPE_I8: QUANTIZE_ROW(int8_t); break;
      case TIDSP_DTYPE_U8: QUANTIZE_ROW(uint8_t); break;
      case TIDSP_DTYPE_I16: QUANTIZE_ROW(int16_t); break;
      case TIDSP_DTYPE_U16: QUANTIZE_ROW(uint16_t); break;
      default: QUANTIZE_ROW(int32_t); break; /* TIDSP_DTYPE_I32, the last one qdq_check accepts */
      }
    }
  }
  return TIDSP_OK;
}
