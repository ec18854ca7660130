/*
 * binary_f32.c — broadcast float Add / Sub / Mul / Div / Pow.
 *
 * Pow as ONNX Runtime's CPU kernel: an exponent that is one value over
 * the row (ORT's "scalar input 1" span) of exactly 2 or 3 is multiplied
 * out (x·x, x·x·x); any other exponent, and every element of an exponent
 * that varies along the row, goes to powf (std::pow).
 */
#include "ref_internal.h"

static float pow_ort(float x, float e, int e_scalar) {
  if (!e_scalar)
    return powf(x, e);
  if (e == 2.0f)
    return x * x;
  if (e == 3.0f)
    return x * x * x;
  return powf(x, e);
}

int32_t tidsp_binary_f32__ref(const tidsp_binary_f32_params *p, const float *a,
                              const float *b, float *y) {
  tidsp_ref_bc_iter it;
  int64_t r;
  int32_t st, i;

  st = tidsp_ref_binary_begin(&it, p ? &p->bc : NULL, a, b, y);
  if (st != TIDSP_OK)
    return st;
  if (p->op < TIDSP_BINARY_ADD || p->op > TIDSP_BINARY_POW)
    return TIDSP_ERR_PARAM;
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it)) {
    const float *ar = a + it.a_off, *br = b + it.b_off;
    float *yr = y + (size_t)r * (size_t)it.inner;
    const ptrdiff_t sa = it.a_step, sb = it.b_step;
    switch (p->op) {
    case TIDSP_BINARY_ADD:
      for (i = 0; i < it.inner; i++)
        yr[i] = ar[i * sa] + br[i * sb];
      break;
    case TIDSP_BINARY_SUB:
      for (i = 0; i < it.inner; i++)
        yr[i] = ar[i * sa] - br[i * sb];
      break;
    case TIDSP_BINARY_MUL:
      for (i = 0; i < it.inner; i++)
        yr[i] = ar[i * sa] * br[i * sb];
      break;
    case TIDSP_BINARY_DIV:
      for (i = 0; i < it.inner; i++)
        yr[i] = ar[i * sa] / br[i * sb];
      break;
    default: /* TIDSP_BINARY_POW */
      for (i = 0; i < it.inner; i++)
        yr[i] = pow_ort(ar[i * sa], br[i * sb], sb == 0);
      break;
    }
  }
  return TIDSP_OK;
}
