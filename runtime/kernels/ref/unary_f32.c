/*
 * unary_f32.c — float Relu, Clip, Sigmoid, HardSigmoid, HardSwish, Erf,
 * Gelu (both forms), Sqrt, Neg, Reciprocal, Tanh (MLAS's, bit for bit as
 * ORT), Exp, Sin, Cos (the C library's: ORT's Eigen versions may differ in
 * the last bit).
 * In place (y == x) is allowed.
 *
 * Rounded as ONNX Runtime's CPU kernels: Sigmoid is MLAS's logistic
 * polynomial (ort_float.h), not 1/(1 + exp(−x)); HardSigmoid is Eigen's
 * fl(fl(alpha·x) + beta) (no fused multiply-add), clamped to [0, 1];
 * HardSwish is the ONNX function body, x · HardSigmoid(x) with alpha = 1/6
 * (0.16666667f), beta = 0.5.
 */
#include "ort_float.h"

static inline float hard_sigmoid(float x, float alpha, float beta) {
  float v = alpha * x + beta;
  v = v < 1.0f ? v : 1.0f;
  return v > 0.0f ? v : 0.0f;
}

int32_t tidsp_unary_f32(const tidsp_unary_f32_params *p, const float *x,
                        float *y) {
  int32_t i;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->n < 0)
    return TIDSP_ERR_SHAPE;
  switch (p->op) {
  case TIDSP_UNARY_RELU:
    for (i = 0; i < p->n; i++)
      y[i] = 0.0f > x[i] ? 0.0f : x[i]; /* max(0, x): keeps −0 and NaN */
    break;
  case TIDSP_UNARY_CLIP:
    if (!(p->lo <= p->hi))
      return TIDSP_ERR_PARAM;
    for (i = 0; i < p->n; i++) {
      float v = x[i] > p->lo ? x[i] : p->lo;
      y[i] = v < p->hi ? v : p->hi;
    }
    break;
  case TIDSP_UNARY_SIGMOID:
    for (i = 0; i < p->n; i++)
      y[i] = tidsp_ort_logistic(x[i]);
    break;
  case TIDSP_UNARY_HARDSIGMOID:
    for (i = 0; i < p->n; i++)
      y[i] = hard_sigmoid(x[i], p->alpha, p->beta);
    break;
  case TIDSP_UNARY_HARDSWISH: /* ONNX fixes alpha = 1/6, beta = 0.5 */
    for (i = 0; i < p->n; i++)
      y[i] = x[i] * hard_sigmoid(x[i], 1.0f / 6.0f, 0.5f);
    break;
  case TIDSP_UNARY_ERF:
    for (i = 0; i < p->n; i++)
      y[i] = tidsp_ort_erf(x[i]);
    break;
  case TIDSP_UNARY_GELU:
    for (i = 0; i < p->n; i++)
      y[i] = tidsp_ort_gelu(x[i]);
    break;
  case TIDSP_UNARY_SQRT:
    for (i = 0; i < p->n; i++)
      y[i] = sqrtf(x[i]);
    break;
  case TIDSP_UNARY_NEG:
    for (i = 0; i < p->n; i++)
      y[i] = -x[i];
    break;
  case TIDSP_UNARY_RECIPROCAL:
    for (i = 0; i < p->n; i++)
      y[i] = 1.0f / x[i];
    break;
  case TIDSP_UNARY_TANH:
    for (i = 0; i < p->n; i++)
      y[i] = tidsp_ort_tanh(x[i]);
    break;
  case TIDSP_UNARY_EXP:
    for (i = 0; i < p->n; i++)
      y[i] = expf(x[i]);
    break;
  case TIDSP_UNARY_SIN:
    for (i = 0; i < p->n; i++)
      y[i] = sinf(x[i]);
    break;
  case TIDSP_UNARY_COS:
    for (i = 0; i < p->n; i++)
      y[i] = cosf(x[i]);
    break;
  case TIDSP_UNARY_GELU_TANH:
    for (i = 0; i < p->n; i++)
      y[i] = tidsp_ort_gelu_tanh(x[i]);
    break;
  default:
    return TIDSP_ERR_PARAM;
  }
  return TIDSP_OK;
}
