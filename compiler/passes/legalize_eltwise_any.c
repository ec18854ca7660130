/*
 * LegalizeOps: elementwise ops on any dtype, on k_binary:
 * comparisons, And/Or/Xor/Not, Max/Min of any arity, Clip and Relu on
 * integers, and the arithmetic ops on integers.
 */
#include <string.h>

#include "legalize_internal.h"
#include "match/broadcast.h"

/* The k_binary op of an ONNX op, or -1. */
int cs_lower_binary_any_op(cs_op op) {
  switch (op) {
    case CS_OP_ADD: return TIDSP_BINARY_ADD;
    case CS_OP_SUB: return TIDSP_BINARY_SUB;
    case CS_OP_MUL: return TIDSP_BINARY_MUL;
    case CS_OP_DIV: return TIDSP_BINARY_DIV;
    case CS_OP_POW: return TIDSP_BINARY_POW;
    case CS_OP_MAX: return TIDSP_BINARY_MAX;
    case CS_OP_MIN: return TIDSP_BINARY_MIN;
    case CS_OP_EQUAL: return TIDSP_BINARY_EQUAL;
    case CS_OP_LESS: return TIDSP_BINARY_LESS;
    case CS_OP_LESS_OR_EQUAL: return TIDSP_BINARY_LESS_OR_EQUAL;
    case CS_OP_GREATER: return TIDSP_BINARY_GREATER;
    case CS_OP_GREATER_OR_EQUAL: return TIDSP_BINARY_GREATER_OR_EQUAL;
    case CS_OP_AND: return TIDSP_BINARY_AND;
    case CS_OP_OR: return TIDSP_BINARY_OR;
    case CS_OP_XOR: return TIDSP_BINARY_XOR;
    default: return -1;
  }
}

/* The params of y = a op b on k_binary; 0 when the shapes do not
 * broadcast or a dtype has no tidsp code. */
static int binary_any_params(cs_graph *g, int op, int a, int b, int y, tidsp_binary_params *p) {
  const cs_value *av = cs_graph_value(g, a), *bv = cs_graph_value(g, b), *yv = cs_graph_value(g, y);
  memset(p, 0, sizeof *p);
  p->op = op;
  p->a_dtype = cs_dtype_to_tidsp(av->dtype);
  p->b_dtype = cs_dtype_to_tidsp(bv->dtype);
  p->y_dtype = cs_dtype_to_tidsp(yv->dtype);
  return p->a_dtype && p->b_dtype && p->y_dtype && cs_broadcast_init(av, bv, yv, &p->bc);
}

/* A new k_binary node y = a op b whose output is a new value of a's dtype
 * and the broadcast shape (Max/Min chains, integer Clip/Relu); -1 when the
 * shapes do not broadcast or memory runs out. */
static int add_binary_any(cs_graph *g, const char *origin, int op, int a, int b, const char *suffix) {
  int out = cs_lower_broadcast_value(g, origin, suffix, cs_graph_value(g, a)->dtype, a, b);
  tidsp_binary_params p;
  if (out < 0 || !binary_any_params(g, op, a, b, out, &p)) return -1;
  int ins[2] = {a, b};
  return cs_lower_add_kernel(g, CS_OP_K_BINARY, origin, 2, ins, out, (cs_kparams){.binary_any = p});
}

/* Node `id` becomes y = a op b on k_binary. */
cs_status cs_lower_retarget_binary_any(cs_graph *g, int id, int op, int a, int b) {
  cs_node *n = cs_graph_node(g, id);
  tidsp_binary_params p;
  if (!binary_any_params(g, op, a, b, n->outputs[0], &p))
    return cs_lower_unsupported(n, "operand shapes do not broadcast, or a dtype has no kernel");
  int ins[2] = {a, b};
  return cs_lower_retarget(g, id, CS_OP_K_BINARY, 2, ins, (cs_kparams){.binary_any = p});
}

/* Max/Min of any number of inputs: a chain of k_binary calls, numpy
 * broadcasting at each step (one input: a copy). */
static cs_status lower_variadic(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (n->n_inputs == 1) return cs_lower_retarget_copy(g, id, n->inputs[0]);
  int op = cs_lower_binary_any_op(n->op), acc = n->inputs[0], last = n->inputs[n->n_inputs - 1];
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->origin && *n->origin ? n->origin : n->name);
  for (int j = 1; j + 1 < n->n_inputs; j++) {
    acc = add_binary_any(g, origin, op, acc, cs_graph_node(g, id)->inputs[j], op == TIDSP_BINARY_MAX ? "max" : "min");
    if (acc < 0) return cs_lower_unsupported(cs_graph_node(g, id), "operand shapes do not broadcast");
  }
  return cs_lower_retarget_binary_any(g, id, op, acc, last);
}

/* Not x = x Xor true. */
static cs_status lower_not(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  uint8_t one = 1;
  int t = cs_add_const_named(g, n->origin && *n->origin ? n->origin : n->name, "true", CS_DTYPE_BOOL, 0, NULL, &one);
  if (t < 0) return CS_ERR_NOMEM;
  return cs_lower_retarget_binary_any(g, id, TIDSP_BINARY_XOR, cs_graph_node(g, id)->inputs[0], t);
}

/* Clip and Relu on integers (outside a QDQ pattern, where ONNX defines
 * them): Relu = Max(x, 0), Clip = Min(Max(x, lo), hi) with the bounds that
 * are given (none: a copy). */
cs_status cs_lower_int_clip(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->origin && *n->origin ? n->origin : n->name);
  int lo = -1, hi = -1;
  if (n->op == CS_OP_RELU) {
    int64_t zero = 0; /* little-endian zero of any width */
    lo = cs_add_const_named(g, origin, "zero", x->dtype, 0, NULL, &zero);
    if (lo < 0) return CS_ERR_NOMEM;
  } else {
    lo = n->n_inputs > 1 ? n->inputs[1] : -1;
    hi = n->n_inputs > 2 ? n->inputs[2] : -1;
  }
  n = cs_graph_node(g, id);
  int v = n->inputs[0];
  if (lo < 0 && hi < 0) return cs_lower_retarget_copy(g, id, v);
  if (lo >= 0 && hi >= 0) {
    v = add_binary_any(g, origin, TIDSP_BINARY_MAX, v, lo, "max");
    if (v < 0) return cs_lower_unsupported(cs_graph_node(g, id), "the bounds do not broadcast to the input");
    return cs_lower_retarget_binary_any(g, id, TIDSP_BINARY_MIN, v, hi);
  }
  return cs_lower_retarget_binary_any(g, id, lo >= 0 ? TIDSP_BINARY_MAX : TIDSP_BINARY_MIN, v, lo >= 0 ? lo : hi);
}

/* Comparisons and And/Or/Xor: node `id` becomes y = a op b on k_binary. */
static cs_status lower_binary_any(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  return cs_lower_retarget_binary_any(g, id, cs_lower_binary_any_op(n->op), n->inputs[0], n->inputs[1]);
}

const cs_lowering cs_lowerings_eltwise_any[] = {
    {CS_OP_MAX, lower_variadic},
    {CS_OP_MIN, lower_variadic},
    {CS_OP_EQUAL, lower_binary_any},
    {CS_OP_LESS, lower_binary_any},
    {CS_OP_LESS_OR_EQUAL, lower_binary_any},
    {CS_OP_GREATER, lower_binary_any},
    {CS_OP_GREATER_OR_EQUAL, lower_binary_any},
    {CS_OP_AND, lower_binary_any},
    {CS_OP_OR, lower_binary_any},
    {CS_OP_XOR, lower_binary_any},
    {CS_OP_NOT, lower_not},
    {CS_OP_COUNT_, NULL},
};
