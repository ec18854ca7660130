/*
 * prelu_f32.c — tidsp_prelu_f32 (cstatic/kernels.def): ONNX PRelu in float,
 * y = x >= 0 ? x : slope·x, the slope broadcast to x's shape. The select
 * is ONNX Runtime's (x >= 0 keeps −0, a NaN fails it and stays a NaN
 * through the product, payload and all).
 */
#include "ref_internal.h"

int32_t tidsp_prelu_f32(const tidsp_broadcast *p, const float *x,
                        const float *slope, float *y) {
  tidsp_ref_bc_iter it;
  int64_t r;
  int32_t st, i;

  if (!p || !x || !slope || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_bc_init(&it, p);
  if (st != TIDSP_OK)
    return st;
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it)) {
    const float *xr = x + it.a_off, *sr = slope + it.b_off;
    float *yr = y + (size_t)r * it.inner;
    for (i = 0; i < it.inner; i++) {
      const float v = xr[i * it.a_step];
      yr[i] = v >= 0.0f ? v : v * sr[i * it.b_step];
    }
  }
  return TIDSP_OK;
}
