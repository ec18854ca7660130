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

static inline float unary_relu(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return 0.0f > x ? 0.0f : x; /* max(0, x): keeps −0 and NaN */
}
static inline float unary_clip(float x, const tidsp_unary_f32_params *p) {
  float v = x > p->lo ? x : p->lo;
  return v < p->hi ? v : p->hi;
}
static inline float unary_sigmoid(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return tidsp_ort_logistic(x);
}
static inline float unary_hard_sigmoid(float x,
                                       const tidsp_unary_f32_params *p) {
  return hard_sigmoid(x, p->alpha, p->beta);
}
/* ONNX fixes alpha = 1/6, beta = 0.5 whatever p holds */
static inline float unary_hard_swish(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return x * hard_sigmoid(x, 1.0f / 6.0f, 0.5f);
}
static inline float unary_erf(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return tidsp_ort_erf(x);
}
static inline float unary_gelu(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return tidsp_ort_gelu(x);
}
static inline float unary_gelu_tanh(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return tidsp_ort_gelu_tanh(x);
}
static inline float unary_sqrt(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return sqrtf(x);
}
static inline float unary_neg(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return -x;
}
static inline float unary_reciprocal(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return 1.0f / x;
}
static inline float unary_tanh(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return tidsp_ort_tanh(x);
}
static inline float unary_exp(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return expf(x);
}
static inline float unary_sin(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return sinf(x);
}
static inline float unary_cos(float x, const tidsp_unary_f32_params *p) {
  (void)p;
  return cosf(x);
}
static inline float unary_leaky_relu(float x, const tidsp_unary_f32_params *p) {
  return x >= 0.0f ? x : p->alpha * x;
}

int32_t tidsp_unary_f32(const tidsp_unary_f32_params *p, const float *x,
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
