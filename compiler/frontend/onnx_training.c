/*
 * onnx_training.c — BatchNormalization with training_mode = 1 as the ops
 * that compute it, as ONNX (and ONNX Runtime's CPU kernel) define it:
 *
 *   mean = ReduceMean(X, all axes but 1)            [C]
 *   var  = ReduceMean((X − mean)², all axes but 1)  [C] (population variance)
 *   Y    = BatchNormalization(X, scale, B, mean, var)   (inference form)
 *   running_mean = input_mean·momentum + mean·(1 − momentum)
 *   running_var  = input_var·momentum + var·(1 − momentum)
 *
 * Everything is deterministic; the rest of the compiler sees inference ops
 * only. Node id becomes the first ReduceMean; the others are appended (ids
 * stay in topological order) and inferred here.
 */
#include "onnx_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct builder {
  cs_onnx_infer *c;
  char base[256];
  int n;   /* names made so far */
} builder;

/* A new node `op` with inputs ins[0..nin) and output `out` (a new value if
 * out < 0), its shape inferred; returns the output value, or −1. */
static int add(builder *b, cs_op op, int nin, const int *ins, int out) {
  char name[512];
  snprintf(name, sizeof name, "%s.train%d", b->base, b->n++);
  if (out < 0) out = cs_graph_add_value(b->c->g, name, CS_DTYPE_UNDEF, 0, NULL);
  if (out < 0) return -1;
  int id = cs_graph_add_node(b->c->g, op, name, b->base, nin, ins, 1, &out);
  if (id < 0 || cs_onnx_infer_node(b->c, id) != CS_OK) return -1;
  return out;
}

static int scalar(builder *b, float v) {
  char name[512];
  snprintf(name, sizeof name, "%s.train%d", b->base, b->n++);
  return cs_graph_add_const(b->c->g, name, CS_DTYPE_F32, 0, NULL, &v);
}

static int binary(builder *b, cs_op op, int x, int y, int out) {
  int ins[2] = {x, y};
  return x < 0 || y < 0 ? -1 : add(b, op, 2, ins, out);
}

/* input·momentum + batch·(1 − momentum), into `out` (if present). */
static int running(builder *b, int input, int batch, float momentum, int out) {
  if (out < 0) return 0;
  int keep = binary(b, CS_OP_MUL, input, scalar(b, momentum), -1);
  int add_ = binary(b, CS_OP_MUL, batch, scalar(b, 1.0f - momentum), -1);
  return binary(b, CS_OP_ADD, keep, add_, out);
}

cs_status cs_onnx_lower_training_batch_norm(cs_onnx_infer *c, int id) {
  cs_graph *g = c->g;
  cs_node *n = &g->nodes[id];
  if (n->n_inputs != 5 || n->inputs[0] < 0) return CS_OK; /* the shape rule says why */
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (x->rank < 2 || x->dtype != CS_DTYPE_F32)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "training_mode = 1 needs an f32 input [N, C, ...], "
                            "got '%s' %s%s",
                            x->name, cs_dtype_name(x->dtype),
                            cs_onnx_shape_str(x->rank, x->shape));
  builder b = {c, "", 0};
  snprintf(b.base, sizeof b.base, "%s", n->name);
  int rank = x->rank;
  int64_t chans = x->shape[1], axes[CS_MAX_RANK], m4shape[CS_MAX_RANK];
  int na = 0;
  for (int d = 0; d < rank; d++) {
    if (d != 1) axes[na++] = d;
    m4shape[d] = d == 1 ? chans : 1;
  }
  float eps = cs_node_attr_float(n, "epsilon", 1e-5f);
  float momentum = cs_node_attr_float(n, "momentum", 0.9f);
  int xin = n->inputs[0], scale = n->inputs[1], bias = n->inputs[2];
  int in_mean = n->inputs[3], in_var = n->inputs[4];
  int y = n->outputs[0];
  int out_mean = n->n_outputs > 1 ? n->outputs[1] : -1;
  int out_var = n->n_outputs > 2 ? n->outputs[2] : -1;
  char name[512];
  int64_t len = na, one = 1;
  snprintf(name, sizeof name, "%s.axes", b.base);
  int axes_v = cs_graph_add_const(g, name, CS_DTYPE_I64, 1, &len, axes);
  snprintf(name, sizeof name, "%s.shape_c", b.base);
  int shape_c = cs_graph_add_const(g, name, CS_DTYPE_I64, 1, &one, &chans);
  snprintf(name, sizeof name, "%s.mean4", b.base);
  int mean4 = cs_graph_add_value(g, name, CS_DTYPE_F32, rank, m4shape);
  if (axes_v < 0 || shape_c < 0 || mean4 < 0) return cs_error(CS_ERR_NOMEM, "out of memory");

  /* Node id: mean4 = ReduceMean(X, axes) (keepdims defaults to 1). */
  int rm_in[2] = {xin, axes_v};
  if (cs_node_set_inputs(g, id, 2, rm_in) != CS_OK) return CS_ERR_NOMEM;
  n = &g->nodes[id];
  n->op = CS_OP_REDUCE_MEAN;
  n->outputs[0] = mean4;
  n->n_outputs = 1;
  cs_graph_value(g, mean4)->producer = id;
  cs_node_clear_attrs(n);
  cs_status st = cs_onnx_infer_node(c, id);
  if (st != CS_OK) return st;

  int diff = binary(&b, CS_OP_SUB, xin, mean4, -1);
  int sq = binary(&b, CS_OP_MUL, diff, diff, -1);
  int var4 = binary(&b, CS_OP_REDUCE_MEAN, sq, axes_v, -1);
  int mean = binary(&b, CS_OP_RESHAPE, mean4, shape_c, -1);
  int var = binary(&b, CS_OP_RESHAPE, var4, shape_c, -1);
  if (mean < 0 || var < 0) return cs_error(CS_ERR_NOMEM, "out of memory");
  int bn_in[5] = {xin, scale, bias, mean, var};
  snprintf(name, sizeof name, "%s.normalize", b.base);
  int bn = cs_graph_add_node(g, CS_OP_BATCH_NORMALIZATION, name, b.base, 5, bn_in, 1, &y);
  cs_attr *a = bn < 0 ? NULL : cs_node_add_attr(&g->nodes[bn], "epsilon", CS_ATTR_FLOAT);
  if (!a) return cs_error(CS_ERR_NOMEM, "out of memory");
  a->f = eps;
  st = cs_onnx_infer_node(c, bn);
  if (st != CS_OK) return st;
  if (running(&b, in_mean, mean, momentum, out_mean) < 0 ||
      running(&b, in_var, var, momentum, out_var) < 0)
    return cs_error(CS_ERR_NOMEM, "out of memory");
  return CS_OK;
}
