/*
 * unary_fns.c — which tidsp_unary_f32 op, with which attributes, a node
 * is. The ops with an ONNX op of their own come from their rows of
 * cstatic/unary_ops.def; Relu, Clip and Gelu have code here (integer
 * Relu, Clip's bounds as inputs, Gelu's two forms).
 */
#include <math.h>
#include <string.h>

#include "unary_fns.h"

/* The float attribute `name` of n, or dflt; a NULL name is a fixed value. */
static float attr_or(const cs_node *n, const char *name, float dflt) {
  return name ? cs_node_attr_float(n, name, dflt) : dflt;
}

/* Input idx of n as a scalar float constant in *out (left alone when the
 * input is absent); 0 when it is present but not one. */
static int const_scalar(cs_graph *g, const cs_node *n, int idx, float *out) {
  if (n->n_inputs <= idx || n->inputs[idx] < 0) return 1;
  const cs_value *v = cs_graph_value(g, n->inputs[idx]);
  if (!v->data || v->dtype != CS_DTYPE_F32 || cs_value_numel(v) != 1) return 0;
  *out = ((const float *)v->data)[0];
  return 1;
}

cs_unary_match cs_unary_params_of(cs_graph *g, const cs_node *n, tidsp_unary_f32_params *p) {
  memset(p, 0, sizeof *p);
  switch (n->op) {
#define TIDSP_UNARY(NAME, fn, IR, op_type, alpha_attr, alpha_dflt, beta_attr, beta_dflt) \
  case CS_OP_##IR:                                                                     \
    p->op = TIDSP_UNARY_##NAME;                                                        \
    p->alpha = attr_or(n, alpha_attr, alpha_dflt);                                     \
    p->beta = attr_or(n, beta_attr, beta_dflt);                                        \
    return CS_UNARY_OK;
#include "cstatic/unary_ops.def"
    case CS_OP_RELU: p->op = TIDSP_UNARY_RELU; return CS_UNARY_OK;
    case CS_OP_GELU:
      p->op = strcmp(cs_node_attr_string(n, "approximate", "none"), "tanh") ? TIDSP_UNARY_GELU
                                                                            : TIDSP_UNARY_GELU_TANH;
      return CS_UNARY_OK;
    case CS_OP_CLIP: /* bounds: attributes before opset 11, inputs since */
      p->op = TIDSP_UNARY_CLIP;
      p->lo = cs_node_attr_float(n, "min", -INFINITY);
      p->hi = cs_node_attr_float(n, "max", INFINITY);
      if (!const_scalar(g, n, 1, &p->lo) || !const_scalar(g, n, 2, &p->hi)) return CS_UNARY_NONCONST;
      return p->lo <= p->hi ? CS_UNARY_OK : CS_UNARY_EMPTY;
    default:
      return CS_UNARY_NONE;
  }
}
