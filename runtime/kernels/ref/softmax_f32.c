/*
 * softmax_f32.c — softmax over the middle axis of [outer][axis_len][inner]:
 * y = exp(x − max) / Σ exp(x − max), the sum taken in axis order.
 */
#include "ref_internal.h"

int32_t tidsp_softmax_f32(const tidsp_softmax_params *p, const float *x,
                          float *y) {
  int32_t o, i, k;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->outer < 0 || p->axis_len < 1 || p->inner < 0)
    return TIDSP_ERR_SHAPE;
  for (o = 0; o < p->outer; o++) {
    for (i = 0; i < p->inner; i++) {
      const size_t base = (size_t)o * p->axis_len * p->inner + (size_t)i;
      const float *xs = x + base;
      float *ys = y + base;
      float m = xs[0], sum = 0.0f;
      for (k = 1; k < p->axis_len; k++)
        m = xs[(size_t)k * p->inner] > m ? xs[(size_t)k * p->inner] : m;
      for (k = 0; k < p->axis_len; k++) {
        float e = expf(xs[(size_t)k * p->inner] - m);
        ys[(size_t)k * p->inner] = e;
        sum += e;
      }
      for (k = 0; k < p->axis_len; k++)
        ys[(size_t)k * p->inner] /= sum;
    }
  }
  return TIDSP_OK;
}
