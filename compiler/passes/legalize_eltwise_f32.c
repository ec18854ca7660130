/*
 * LegalizeOps: elementwise float ops: Add, Sub, Mul, Div, Pow
 * (k_binary_f32), the unary ops of cstatic/unary_ops.def (k_unary_f32) and
 * PRelu; and the builders other lowerings use to add such nodes.
 */
#include <string.h>

#include "legalize_internal.h"
#include "match/broadcast.h"

/* A new value "origin.suffix" of dtype and of a's and b's numpy-broadcast
 * shape (a dimension of 1 takes the other's; whether the shapes broadcast
 * at all is the kernel parameters' check). */
int cs_lower_broadcast_value(cs_graph *g, const char *origin, const char *suffix, cs_dtype dtype, int a, int b) {
  const cs_value *av = cs_graph_value(g, a), *bv = cs_graph_value(g, b);
  const cs_value *big = av->rank >= bv->rank ? av : bv;
  int64_t shape[CS_MAX_RANK];
  for (int d = 0; d < big->rank; d++) {
    int da = d - (big->rank - av->rank), db = d - (big->rank - bv->rank);
    int64_t x = da >= 0 ? av->shape[da] : 1, y = db >= 0 ? bv->shape[db] : 1;
    shape[d] = x == 1 ? y : x;
  }
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  return cs_graph_add_value(g, name, dtype, big->rank, shape);
}

/* A float binary kernel node y = a op b (numpy broadcast); y is new unless
 * out >= 0 (which then takes over that value). */
int cs_lower_add_binary_f32(cs_graph *g, const char *origin, tidsp_binary_op op, int a, int b, int out) {
  if (out < 0)
    out = cs_lower_broadcast_value(g, origin, op == TIDSP_BINARY_MUL ? "mul" : op == TIDSP_BINARY_SUB ? "sub" : "add",
                              CS_DTYPE_F32, a, b);
  if (out < 0) return -1;
  tidsp_binary_f32_params p = {.op = op};
  cs_broadcast_init(cs_graph_value(g, a), cs_graph_value(g, b), cs_graph_value(g, out), &p.bc);
  int ins[2] = {a, b};
  return cs_lower_add_kernel(g, CS_OP_K_BINARY_F32, origin, 2, ins, out, (cs_kparams){.binary = p});
}

/* A float scalar constant. */
int cs_lower_scalar_f32(cs_graph *g, const char *base, const char *suffix, float v) {
  return cs_add_const_named(g, base, suffix, CS_DTYPE_F32, 0, NULL, &v);
}

/* A float unary kernel node on value a; returns the new value. */
int cs_lower_add_unary_f32(cs_graph *g, const char *origin, tidsp_unary_op op, int a, const char *suffix) {
  const cs_value *av = cs_graph_value(g, a);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, av->shape, sizeof shape);
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  tidsp_unary_f32_params p = {.op = op, .n = (int32_t)cs_value_numel(av)};
  int out = cs_graph_add_value(g, name, CS_DTYPE_F32, av->rank, shape);
  return cs_lower_add_kernel(g, CS_OP_K_UNARY_F32, origin, 1, &a, out, (cs_kparams){.unary = p});
}

static cs_status lower_binary(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!cs_lower_all_f32(g, n) || cs_graph_value(g, n->inputs[1])->dtype != CS_DTYPE_F32)
    return cs_lower_retarget_binary_any(g, id, cs_lower_binary_any_op(n->op), n->inputs[0], n->inputs[1]);
  tidsp_binary_f32_params p;
  memset(&p, 0, sizeof p);
  if (!cs_broadcast_init(cs_graph_value(g, n->inputs[0]), cs_graph_value(g, n->inputs[1]),
                         cs_graph_value(g, n->outputs[0]), &p.bc))
    return cs_lower_unsupported(n, "operand shapes do not broadcast");
  switch (n->op) {
    case CS_OP_ADD: p.op = TIDSP_BINARY_ADD; break;
    case CS_OP_SUB: p.op = TIDSP_BINARY_SUB; break;
    case CS_OP_MUL: p.op = TIDSP_BINARY_MUL; break;
    case CS_OP_DIV: p.op = TIDSP_BINARY_DIV; break;
    default: p.op = TIDSP_BINARY_POW; break;
  }
  int ins[2] = {n->inputs[0], n->inputs[1]};
  return cs_lower_retarget(g, id, CS_OP_K_BINARY_F32, 2, ins, (cs_kparams){.binary = p});
}

/* A unary float op (cstatic/unary_ops.def) as one k_unary_f32 call. */
cs_status cs_lower_unary(cs_graph *g, int id, cs_unary_match m, tidsp_unary_f32_params p) {
  cs_node *n = cs_graph_node(g, id);
  if (cs_graph_value(g, n->inputs[0])->dtype != CS_DTYPE_F32)
    return cs_lower_unsupported(n, "an activation on integers must sit between DequantizeLinear and QuantizeLinear");
  if (m == CS_UNARY_NONCONST) return cs_lower_unsupported(n, "Clip min/max must be scalar float constants");
  if (m == CS_UNARY_EMPTY) return cs_lower_unsupported(n, "Clip min is above max");
  p.n = (int32_t)cs_value_numel(cs_graph_value(g, n->inputs[0]));
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_UNARY_F32, 1, ins, (cs_kparams){.unary = p});
}

/* PRelu in float: its slope broadcast to x (the frontend checked it). */
static cs_status lower_prelu(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!cs_lower_all_f32(g, n)) return cs_lower_unsupported(n, "a PRelu on integers must sit between DequantizeLinear and QuantizeLinear");
  tidsp_broadcast bc;
  memset(&bc, 0, sizeof bc);
  if (!cs_broadcast_init(cs_graph_value(g, n->inputs[0]), cs_graph_value(g, n->inputs[1]),
                         cs_graph_value(g, n->outputs[0]), &bc))
    return cs_lower_unsupported(n, "the slope does not broadcast to the input");
  int ins[2] = {n->inputs[0], n->inputs[1]};
  return cs_lower_retarget(g, id, CS_OP_K_PRELU_F32, 2, ins, (cs_kparams){.broadcast = bc});
}

const cs_lowering cs_lowerings_eltwise_f32[] = {
    {CS_OP_ADD, lower_binary},
    {CS_OP_SUB, lower_binary},
    {CS_OP_MUL, lower_binary},
    {CS_OP_DIV, lower_binary},
    {CS_OP_POW, lower_binary},
    {CS_OP_PRELU, lower_prelu},
    {CS_OP_COUNT_, NULL},
};
