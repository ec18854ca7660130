/*
 * dequantize_vecmatmul.c — c7x_dequantize_vecmatmul, the weight-only int8
 * linear layer: float activations times int8 weights, the per-column scale
 * applied once to each float dot product. (TI's fork drops the last K mod
 * 8 products on the C7x; every product is summed here.)
 */
#include "ref_internal.h"

int32_t c7x_dequantize_vecmatmul(const float *act, const int8_t *w,
                                 const float *scale, float *out, int32_t M,
                                 int32_t K, int32_t N) {
  int32_t m, n, k;
  if (!act || !w || !scale || !out)
    return TIDSP_ERR_NULL;
  if (M < 1 || K < 1 || N < 1)
    return TIDSP_ERR_SHAPE;
  for (m = 0; m < M; m++) {
    const float *a = act + (size_t)m * (size_t)K;
    float *o = out + (size_t)m * (size_t)N;
    for (n = 0; n < N; n++) {
      const int8_t *wr = w + (size_t)n * (size_t)K;
      float sum = 0.0f;
      for (k = 0; k < K; k++) {
        const float p = a[k] * (float)wr[k];
        sum += p;
      }
      o[n] = sum * scale[n];
    }
  }
  return TIDSP_OK;
}
