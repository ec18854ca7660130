#include <math.h>
#include <string.h>

#include "cstatic/kernels.h"

#include "unary_fns.h"

static float relu(float x, const float *a) { (void)a; return x > 0.0f ? x : 0.0f; }
static float clip(float x, const float *a) { return x < a[0] ? a[0] : (x > a[1] ? a[1] : x); }
static float sigmoid(float x, const float *a) { (void)a; return 1.0f / (1.0f + expf(-x)); }
/* HardSigmoid: max(0, min(1, alpha·x + beta)), two roundings. */
static float hard_sigmoid(float x, const float *a) {
  float v = a[0] * x;
  v = v + a[1];
  return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}
/* HardSwish = x · HardSigmoid(x; 1/6, 0.5), as ORT inlines it. */
static float hard_swish(float x, const float *a) {
  (void)a;
  const float hs_args[2] = {1.0f / 6.0f, 0.5f};
  return x * hard_sigmoid(x, hs_args);
}

/* The ops added with the transformer work go through the runtime's float
 * kernel, so a table entry is the float path's value bit for bit (ONNX
 * Runtime's polynomials for Erf, Gelu, Tanh) and each function has one
 * implementation. */
static float runtime_unary(float x, int32_t op) {
  tidsp_unary_f32_params p = {1, op, 0.0f, 0.0f, 0.0f, 0.0f};
  float y = 0.0f;
  return tidsp_unary_f32(&p, &x, &y) == TIDSP_OK ? y : NAN;
}
static float erf_fn(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_ERF); }
static float gelu(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_GELU); }
static float gelu_tanh(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_GELU_TANH); }

static float sqrt_fn(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_SQRT); }
static float neg(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_NEG); }
static float reciprocal(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_RECIPROCAL); }
static float tanh_fn(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_TANH); }
static float exp_fn(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_EXP); }
static float sin_fn(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_SIN); }
static float cos_fn(float x, const float *a) { (void)a; return runtime_unary(x, TIDSP_UNARY_COS); }

static int const_scalar(cs_graph *g, const cs_node *n, int idx, float *out) {
  if (n->n_inputs <= idx || n->inputs[idx] < 0) return 1; /* absent: keep default */
  const cs_value *v = cs_graph_value(g, n->inputs[idx]);
  if (!v->data || v->dtype != CS_DTYPE_F32 || cs_value_numel(v) != 1) return 0;
  *out = ((const float *)v->data)[0];
  return 1;
}

cs_unary_fn cs_unary_fn_of(cs_graph *g, const cs_node *n, float args[2]) {
  switch (n->op) {
    case CS_OP_RELU: return relu;
    case CS_OP_SIGMOID: return sigmoid;
    case CS_OP_HARD_SWISH: return hard_swish;
    case CS_OP_ERF: return erf_fn;
    case CS_OP_SQRT: return sqrt_fn;
    case CS_OP_NEG: return neg;
    case CS_OP_RECIPROCAL: return reciprocal;
    case CS_OP_TANH: return tanh_fn;
    case CS_OP_EXP: return exp_fn;
    case CS_OP_SIN: return sin_fn;
    case CS_OP_COS: return cos_fn;
    case CS_OP_GELU:
      return strcmp(cs_node_attr_string(n, "approximate", "none"), "tanh") ? gelu : gelu_tanh;
    case CS_OP_HARD_SIGMOID:
      args[0] = cs_node_attr_float(n, "alpha", 0.2f);
      args[1] = cs_node_attr_float(n, "beta", 0.5f);
      return hard_sigmoid;
    case CS_OP_CLIP:
      args[0] = cs_node_attr_float(n, "min", -INFINITY);
      args[1] = cs_node_attr_float(n, "max", INFINITY);
      if (!const_scalar(g, n, 1, &args[0]) || !const_scalar(g, n, 2, &args[1])) return NULL;
      return clip;
    default:
      return NULL;
  }
}
