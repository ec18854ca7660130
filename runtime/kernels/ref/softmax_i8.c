/*
 * softmax_i8.c — int8 Softmax with a compile-time exp table, rounded as
 * ONNX Runtime's QLinearSoftmax (contrib_ops/cpu/quantization): per row the
 * maximum, a float sum of the table entries in element order, then one
 * float multiply, one float divide and nearbyintf per element. ORT's int8
 * kernel casts results above 127 with wrap-around; this one saturates
 * (the same bytes whenever the output range is the usual [0, 1]).
 */
#include <math.h>

#include "ref_internal.h"
#include "../kernel_variants.h"

int32_t tidsp_softmax_i8__ref(const tidsp_softmax_i8_params *p, const float *table,
                              const int8_t *x, int8_t *y) {
  int32_t o, i, k;
  if (!p || !table || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->outer < 0 || p->axis_len < 1 || p->inner < 1)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_is_i8(p->y_zp) || !(p->y_recip >= 0.0f))
    return TIDSP_ERR_PARAM;
  for (o = 0; o < p->outer; o++) {
    for (i = 0; i < p->inner; i++) {
      const size_t base = (size_t)o * (size_t)p->axis_len * (size_t)p->inner + (size_t)i;
      const size_t st = (size_t)p->inner;
      int32_t xmax = -128;
      float sum = 0.0f;
      for (k = 0; k < p->axis_len; k++)
        if (x[base + (size_t)k * st] > xmax)
          xmax = x[base + (size_t)k * st];
      for (k = 0; k < p->axis_len; k++)
        sum += table[x[base + (size_t)k * st] - xmax + 255];
      for (k = 0; k < p->axis_len; k++) {
        const float e = table[x[base + (size_t)k * st] - xmax + 255];
        const float v = nearbyintf((e * p->y_recip) / sum) + (float)p->y_zp;
        y[base + (size_t)k * st] = (int8_t)(v > 127.0f ? 127 : v < -128.0f ? -128 : (int32_t)v);
      }
    }
  }
  return TIDSP_OK;
}
