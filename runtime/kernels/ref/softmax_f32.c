/*
 * softmax_f32.c — softmax over the middle axis of [outer][axis_len][inner],
 * computed as ONNX Runtime's MLAS kernel does (x86-64 with AVX512F):
 *
 *   m = max over the axis (exact in any order)
 *   e_k = exp(x_k + (−m)) with MLAS's polynomial (ort_float.h)
 *   s = Σ e_k in 16 lanes: in blocks of 48, lane j accumulates elements
 *       j, j+16, j+32 in that order; the remaining elements go 16 at a time
 *       into the same lanes (masked at the end); then the lanes reduce as
 *       t_j = l_j + l_{j+8} (j < 8),
 *       s = ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7))
 *   y_k = e_k · fl(1 / s)
 * ORT runs the last axis this way (opset 13); for another axis it transposes
 * first, so every axis gets the same per-row arithmetic here.
 */
#include "ort_float.h"
#include "../kernel_variants.h"

#define SOFTMAX_LANES 16

/* One row of n ≥ 1 elements, element k at x[k·stride]. */
static void softmax_row(const float *x, float *y, int32_t n, size_t stride) {
  float lane[SOFTMAX_LANES] = {0.0f};
  float t[SOFTMAX_LANES / 2];
  float m = x[0], neg_m, s, scale;
  int32_t k, j;

  for (k = 1; k < n; k++) {
    const float v = x[(size_t)k * stride];
    m = m > v ? m : v;
  }
  neg_m = -m;
  for (k = 0; k < n; k++) {
    const float e = tidsp_ort_softmax_exp(x[(size_t)k * stride] + neg_m);
    y[(size_t)k * stride] = e;
  }
  /* Lane j gets the elements ≡ j (mod 16) in order: within a 48-block the
   * three packets are added one after another, which is the same thing. */
  for (k = 0; k < n; k++)
    lane[k % SOFTMAX_LANES] += y[(size_t)k * stride];
  for (j = 0; j < SOFTMAX_LANES / 2; j++)
    t[j] = lane[j + SOFTMAX_LANES / 2] + lane[j];
  s = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  scale = 1.0f / s;
  for (k = 0; k < n; k++)
    y[(size_t)k * stride] *= scale;
}

int32_t tidsp_softmax_f32__ref(const tidsp_softmax_params *p, const float *x,
                               float *y) {
  int32_t o, i;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->outer < 0 || p->axis_len < 1 || p->inner < 0)
    return TIDSP_ERR_SHAPE;
  for (o = 0; o < p->outer; o++) {
    for (i = 0; i < p->inner; i++) {
      const size_t base = (size_t)o * (size_t)p->axis_len * (size_t)p->inner + (size_t)i;
      softmax_row(x + base, y + base, p->axis_len, (size_t)p->inner);
    }
  }
  return TIDSP_OK;
}
