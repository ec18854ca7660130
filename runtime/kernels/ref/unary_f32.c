/*
 * unary_f32.c — the float unary ops: one scalar function per row of
 * cstatic/unary_ops.def (the row names the function and gives its
 * formula), and the kernel that loops over them. These functions are each
 * op's only implementation: the compiler's 8-bit activation tables and its
 * constant folding call this kernel. In place (y == x) is allowed.
 *
 * Rounded as ONNX Runtime's CPU kernels: Sigmoid is MLAS's logistic
 * polynomial (ort_float.h), not 1/(1 + exp(−x)); HardSigmoid is Eigen's
 * fl(fl(alpha·x) + beta) (no fused multiply-add), clamped to [0, 1];
 * HardSwish is the ONNX function body, x · HardSigmoid(x) with alpha = 1/6
 * (0.16666667f), beta = 0.5; Tanh, Erf and Gelu are ORT's polynomials; Exp,
 * Sin and Cos are the C library's (ORT's Eigen versions may differ in the
 * last bit).
 */
#include "ort_float.h"

static inline float hard_sigmoid(float x, float alpha, float beta) {
  float v = alpha * x + beta;
  v = v < 1.0f ? v : 1.0f;
  return v > 0.0f ? v : 0.0f;
}

/* The ops of x alone, one expression each. */
#define UNARY_OF_X(fn, expr)                                                  \
  static inline float fn(float x, const tidsp_unary_f32_params *p) {          \
    (void)p;                                                                  \
    return expr;                                                              \
  }
UNARY_OF_X(unary_relu, 0.0f > x ? 0.0f : x) /* max(0, x): keeps −0 and NaN */
UNARY_OF_X(unary_sigmoid, tidsp_ort_logistic(x))
/* ONNX fixes alpha = 1/6, beta = 0.5 */
UNARY_OF_X(unary_hard_swish, x * hard_sigmoid(x, 1.0f / 6.0f, 0.5f))
UNARY_OF_X(unary_erf, tidsp_ort_erf(x))
UNARY_OF_X(unary_gelu, tidsp_ort_gelu(x))
UNARY_OF_X(unary_gelu_tanh, tidsp_ort_gelu_tanh(x))
UNARY_OF_X(unary_sqrt, sqrtf(x))
UNARY_OF_X(unary_neg, -x)
/* one rounding */
UNARY_OF_X(unary_reciprocal, 1.0f / x)
UNARY_OF_X(unary_tanh, tidsp_ort_tanh(x))
UNARY_OF_X(unary_exp, expf(x))
UNARY_OF_X(unary_sin, sinf(x))
UNARY_OF_X(unary_cos, cosf(x))

/* The ops with parameters. */
static inline float unary_clip(float x, const tidsp_unary_f32_params *p) {
  float v = x > p->lo ? x : p->lo;
  return v < p->hi ? v : p->hi;
}
static inline float unary_hard_sigmoid(float x,
                                       const tidsp_unary_f32_params *p) {
  return hard_sigmoid(x, p->alpha, p->beta);
}
static inline float unary_leaky_relu(float x, const tidsp_unary_f32_params *p) {
  return x >= 0.0f ? x : p->alpha * x;
}

int32_t tidsp_unary_f32__ref(const tidsp_unary_f32_params *p, const float *x,
                             float *y) {
  int32_t i;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->n < 0)
    return TIDSP_ERR_SHAPE;
  if (p->op == TIDSP_UNARY_CLIP && !(p->lo <= p->hi))
    return TIDSP_ERR_PARAM;
  switch (p->op) {
#define TIDSP_UNARY_KERNEL(NAME, fn)                                          \
  case TIDSP_UNARY_##NAME:                                                    \
    for (i = 0; i < p->n; i++)                                                \
      y[i] = fn(x[i], p);                                                     \
    break;
#define TIDSP_UNARY(NAME, fn, IR, op_type, alpha_attr, alpha, beta_attr,      \
                    beta)                                                     \
  TIDSP_UNARY_KERNEL(NAME, fn)
#include "cstatic/unary_ops.def"
  default:
    return TIDSP_ERR_PARAM;
  }
  return TIDSP_OK;
}
