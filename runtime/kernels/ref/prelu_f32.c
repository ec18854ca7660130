/*
 * prelu_f32.c — tidsp_prelu_f32 (cstatic/kernels.def): ONNX PRelu in float,
 * y = x >= 0 ? x : slope·x, the slope broadcast to x's shape. The select
 * is ONNX Runtime's (x >= 0 keeps −0, a NaN fails it and stays a NaN
 * through the product, payload and all).
 */
#include "ref_internal.h"

/* One output row: x and the slope at their rows' offsets and steps. */
static void prelu_row(const tidsp_ref_bc_iter *it, const float *x,
                      const float *slope, float *y) {
  int32_t i;
  for (i = 0; i < it->inner; i++) {
    const float v = x[i * it->a_step];
    y[i] = v >= 0.0f ? v : v * slope[i * it->b_step];
  }
}

int32_t tidsp_prelu_f32__ref(const tidsp_broadcast *p, const float *x,
                             const float *slope, float *y) {
  tidsp_ref_bc_iter it;
  int64_t r;
  int32_t st = x && slope && y ? tidsp_ref_bc_init(&it, p) : TIDSP_ERR_NULL;
  for (r = 0; st == TIDSP_OK && r < it.rows; r++, tidsp_ref_bc_next(&it))
    prelu_row(&it, x + it.a_off, slope + it.b_off, y + (size_t)r * (size_t)it.inner);
  return st;
}
