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
      case TIDSP_DTYPE_I8: {
        int8_t *yr = (int8_t *)y + base;
        for (i = 0; i < p->inner; i++)
          yr[i] = (int8_t)quantize_value(xr[i], s, zp, qmin, qmax);
        break;
      }
      case TIDSP_DTYPE_U8: {
        uint8_t *yr = (uint8_t *)y + base;
        for (i = 0; i < p->inner; i++)
          yr[i] = (uint8_t)quantize_value(xr[i], s, zp, qmin, qmax);
        break;
      }
      case TIDSP_DTYPE_I16: {
        int16_t *yr = (int16_t *)y + base;
        for (i = 0; i < p->inner; i++)
          yr[i] = (int16_t)quantize_value(xr[i], s, zp, qmin, qmax);
        break;
      }
      case TIDSP_DTYPE_U16: {
        uint16_t *yr = (uint16_t *)y + base;
        for (i = 0; i < p->inner; i++)
          yr[i] = (uint16_t)quantize_value(xr[i], s, zp, qmin, qmax);
        break;
      }
      default: { /* TIDSP_DTYPE_I32, the last one qdq_check accepts */
        int32_t *yr = (int32_t *)y + base;
        for (i = 0; i < p->inner; i++)
          yr[i] = (int32_t)quantize_value(xr[i], s, zp, qmin, qmax);
        break;
      }
      }
    }
  }
  return TIDSP_OK;
}
