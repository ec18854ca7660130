/*
 * dequantize.c — integer → float, as ONNX Runtime: y = fl(float(q − zp) · s)
 * (the difference is exact; converting it to float rounds for |q − zp| > 2^24).
 *
 * This is tidsp_dequantize__ref, the oracle: the public tidsp_dequantize dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "qdq_internal.h"

/* One row of the narrow integer type T (its q − zp fits int32), in the
 * loop below: a macro, as only the type differs. */
#define DEQUANTIZE_ROW(T)                                                                                          \
  do {                                                                                                             \
    const T *xr = (const T *)x + base;                                                                             \
    for (i = 0; i < p->inner; i++)                                                                                 \
      yr[i] = (float)((int32_t)xr[i] - zp) * s;                                                                    \
  } while (0)

int32_t tidsp_dequantize__ref(const tidsp_qdq_params *p, const float *scale,
                              const int32_t *zero_point, const void *x, float *y) {
  int32_t o, c, i;
  int32_t st = tidsp_ref_qdq_check(p, scale, zero_point, x, y);
  if (st != TIDSP_OK)
    return st;
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
      float *yr = y + base;
      float s = scale[c];
      int32_t zp = zero_point[c];
      switch (p->dtype) {
      case TIDSP_DTYPE_I8: DEQUANTIZE_ROW(int8_t); break;
      case TIDSP_DTYPE_U8: DEQUANTIZE_ROW(uint8_t); break;
      case TIDSP_DTYPE_I16: DEQUANTIZE_ROW(int16_t); break;
      case TIDSP_DTYPE_U16: DEQUANTIZE_ROW(uint16_t); break;
      default: { /* TIDSP_DTYPE_I32: the difference may not fit int32 */
        const int32_t *xr = (const int32_t *)x + base;
        for (i = 0; i < p->inner; i++)
          yr[i] = tidsp_ref_i64_to_f32((int64_t)xr[i] - zp) * s;
        break;
      }
      }
    }
  }
  return TIDSP_OK;
}
