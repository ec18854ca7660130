/*
 * FuseLayerNormF32 — ONNX Runtime's LayerNormFusion (layer_norm_fusion.cc,
 * level ORT_ENABLE_EXTENDED, on in the default session) for float: the
 * decomposed layer normalization exporters write (Paddle2ONNX, older
 * PyTorch, Keras converters)
 *
 *   m = ReduceMean(X, axes = [last]);  d = Sub(X, m)
 *   Y = Add(Mul(Div(d, Sqrt(Add(ReduceMean(Pow(d, 2), axes = [last]), eps))), scale), bias)
 *
 * becomes one LayerNormalization(X, scale, bias, axis = -1, epsilon = eps).
 * ORT runs the fused kernel, whose summation order (a double mean, an
 * 8-lane fused variance, fma(·, scale, bias): runtime/kernels/ref/
 * layer_norm_f32.c) is not the nine kernels' one; the runtime's
 * LayerNormalization kernel is ORT's, so fusing where ORT fuses is what
 * makes the two bit-identical.
 *
 * ORT's conditions, mirrored: every intermediate float and read only by
 * the next node of the chain (d by the Pow and the Div), none a graph
 * output; eps a constant of its Add (see eps_of); scale and bias constant 1-D tensors of one length, in
 * either operand order. Beyond ORT's graph checks, the semantic ones that
 * make the rewrite exact: both means over the last axis only with
 * keepdims, the exponent exactly 2, scale and bias as long as that axis.
 *
 * QDQ models are left alone: a Q/DQ pair between the nodes breaks the chain
 * (ORT does not fuse those either), and the pass runs before any QDQ
 * elimination.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

/* The only consumer of v when it is of op `op`, else -1. */
static int only_consumer(cs_graph *g, int v, cs_op op) {
  int c = cs_match_single_consumer(g, v);
  return c >= 0 && cs_graph_node(g, c)->op == op ? c : -1;
}

static int is_f32(cs_graph *g, int v) { return v >= 0 && cs_graph_value(g, v)->dtype == CS_DTYPE_F32; }

/* A constant float tensor of one element, its value in *out. */
static int const_scalar(cs_graph *g, int v, float *out) {
  if (v < 0 || !cs_match_is_const(g, v) || !is_f32(g, v) || cs_value_numel(cs_graph_value(g, v)) != 1) return 0;
  *out = (float)cs_const_get_float(cs_graph_value(g, v), 0);
  return 1;
}

/* The epsilon of Add node ae, one of whose inputs is the variance v: the
 * other must be a constant float scalar. ORT reads it from the Add's input
 * 1 only; when the constant is input 0 it fuses with its default 1e-5
 * instead (measured on ORT 1.30: Add(1e-6, var) runs as epsilon 1e-5), and
 * so does this, to compute what ORT computes. */
static int eps_of(cs_graph *g, const cs_node *ae, int v, float *eps) {
  float e;
  if (ae->n_inputs != 2) return 0;
  if (ae->inputs[0] == v && const_scalar(g, ae->inputs[1], &e)) {
    *eps = e;
    return 1;
  }
  if (ae->inputs[1] == v && const_scalar(g, ae->inputs[0], &e)) {
    *eps = 1e-5f;
    return 1;
  }
  return 0;
}

/* ReduceMean node r averages its input over the last axis alone, keepdims. */
static int mean_over_last(cs_graph *g, int r) {
  const cs_node *n = cs_graph_node(g, r);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (!is_f32(g, n->inputs[0]) || x->rank < 1 || cs_node_attr_int(n, "keepdims", 1) != 1) return 0;
  if (n->n_inputs < 2 || n->inputs[1] < 0) return x->rank == 1; /* no axes: all of them */
  const cs_value *av = cs_graph_value(g, n->inputs[1]);
  if (!av->data || cs_value_numel(av) != 1) return 0;
  int64_t a = cs_const_get_int(av, 0);
  return a == -1 || a == x->rank - 1;
}

/* Operand of binary node b that is a constant 1-D float tensor of length
 * len; its other operand in *other. -1 when neither is. */
static int const_vector_operand(cs_graph *g, int b, int64_t len, int *other) {
  const cs_node *n = cs_graph_node(g, b);
  for (int side = 0; side < 2; side++) {
    int v = n->inputs[side];
    const cs_value *cv = cs_graph_value(g, v);
    if (cs_match_is_const(g, v) && is_f32(g, v) && cv->rank == 1 && cv->shape[0] == len) {
      *other = n->inputs[1 - side];
      return v;
    }
  }
  return -1;
}

enum { RM1, SUB, POW, RM2, ADD_EPS, SQRT, DIV, MUL, ADD, N_CHAIN };

typedef struct ln_match {
  int c[N_CHAIN];
  int x, scale, bias, y;
  float eps;
} ln_match;

/* The LayerNorm chain that starts at ReduceMean rm1, in *m; 0 if none. */
static int match_ln(cs_graph *g, int rm1, ln_match *m) {
  int readers[3], other;
  int *c = m->c;
  c[RM1] = rm1;
  const cs_node *r = cs_graph_node(g, rm1);
  const int x = r->inputs[0];
  if (r->n_outputs != 1 || !mean_over_last(g, rm1)) return 0;
  const cs_value *xv = cs_graph_value(g, x);
  const int64_t len = xv->shape[xv->rank - 1];
  /* the mean is read by one Sub(X, mean) */
  c[SUB] = only_consumer(g, r->outputs[0], CS_OP_SUB);
  if (c[SUB] < 0) return 0;
  const cs_node *sub = cs_graph_node(g, c[SUB]);
  if (sub->inputs[0] != x || sub->inputs[1] != r->outputs[0]) return 0;
  const int d = sub->outputs[0];
  /* d is read by a Pow and a Div, nothing else */
  if (cs_graph_is_output(g, d) || cs_graph_consumers(g, d, readers, 3) != 2) return 0;
  c[POW] = c[DIV] = -1;
  for (int i = 0; i < 2; i++) {
    const cs_node *u = cs_graph_node(g, readers[i]);
    if (u->op == CS_OP_POW && u->inputs[0] == d) c[POW] = readers[i];
    if (u->op == CS_OP_DIV && u->inputs[0] == d) c[DIV] = readers[i];
  }
  float two;
  if (c[POW] < 0 || c[DIV] < 0 || !const_scalar(g, cs_graph_node(g, c[POW])->inputs[1], &two) || two != 2.0f)
    return 0;
  c[RM2] = only_consumer(g, cs_graph_node(g, c[POW])->outputs[0], CS_OP_REDUCE_MEAN);
  if (c[RM2] < 0 || !mean_over_last(g, c[RM2])) return 0;
  c[ADD_EPS] = only_consumer(g, cs_graph_node(g, c[RM2])->outputs[0], CS_OP_ADD);
  if (c[ADD_EPS] < 0) return 0;
  const cs_node *ae = cs_graph_node(g, c[ADD_EPS]);
  if (!eps_of(g, ae, cs_graph_node(g, c[RM2])->outputs[0], &m->eps)) return 0;
  c[SQRT] = only_consumer(g, ae->outputs[0], CS_OP_SQRT);
  if (c[SQRT] < 0 || only_consumer(g, cs_graph_node(g, c[SQRT])->outputs[0], CS_OP_DIV) != c[DIV] ||
      cs_graph_node(g, c[DIV])->inputs[1] != cs_graph_node(g, c[SQRT])->outputs[0])
    return 0;
  c[MUL] = only_consumer(g, cs_graph_node(g, c[DIV])->outputs[0], CS_OP_MUL);
  if (c[MUL] < 0) return 0;
  m->scale = const_vector_operand(g, c[MUL], len, &other);
  if (m->scale < 0 || other != cs_graph_node(g, c[DIV])->outputs[0]) return 0;
  c[ADD] = only_consumer(g, cs_graph_node(g, c[MUL])->outputs[0], CS_OP_ADD);
  if (c[ADD] < 0) return 0;
  m->bias = const_vector_operand(g, c[ADD], len, &other);
  if (m->bias < 0 || other != cs_graph_node(g, c[MUL])->outputs[0]) return 0;
  m->y = cs_graph_node(g, c[ADD])->outputs[0];
  m->x = x;
  return is_f32(g, m->y) && cs_match_same_shape(g, x, m->y);
}

int cs_match_layer_norm_f32(cs_graph *g, int reduce_mean) {
  ln_match m;
  return match_ln(g, reduce_mean, &m);
}

static cs_status fuse(cs_graph *g, int rm1) {
  ln_match m;
  if (!match_ln(g, rm1, &m)) return CS_OK;
  const int *c = m.c;
  const int x = m.x, scale = m.scale, bias = m.bias, y = m.y;
  const float eps = m.eps;
  char *origin = cs_origin_join(g, c, N_CHAIN);
  if (!origin) return CS_ERR_NOMEM;
  char name[512];
  snprintf(name, sizeof name, "%s/LayerNormFusion", cs_graph_node(g, c[ADD])->name);
  for (int i = 0; i < N_CHAIN; i++) cs_graph_remove_node(g, c[i]);
  int ins[3] = {x, scale, bias};
  int k = cs_graph_add_node(g, CS_OP_LAYER_NORMALIZATION, name, origin, 3, ins, 1, &y);
  free(origin);
  if (k < 0) return CS_ERR_NOMEM;
  cs_node *ln = cs_graph_node(g, k);
  if (cs_node_set_attr_int(ln, "axis", -1) != CS_OK) return CS_ERR_NOMEM;
  cs_attr *a_eps = cs_node_add_attr(ln, "epsilon", CS_ATTR_FLOAT);
  if (!a_eps) return CS_ERR_NOMEM;
  a_eps->f = eps;
  return CS_OK;
}

/* SimplifiedLayerNormFusion (ORT's RMS-norm rewrite, same level, after
 * LayerNormFusion):
 *
 *   Y = Mul(Div(x, Sqrt(Add(ReduceMean(Pow(x, 2), axes = [last]), eps))), scale)
 *
 * becomes k_layer_norm_f32 with variant TIDSP_LN_SIMPLIFIED (ORT's
 * SimplifiedLayerNormalization kernel's order). x itself stays: it may have
 * other readers. The conditions as for LayerNorm above. */
enum { S_POW, S_RM, S_ADD_EPS, S_SQRT, S_DIV, S_MUL, N_SIMPLE };

static cs_status fuse_simplified(cs_graph *g, int pw) {
  int c[N_SIMPLE], other;
  float two, eps;
  c[S_POW] = pw;
  const cs_node *p = cs_graph_node(g, pw);
  const int x = p->inputs[0];
  if (!is_f32(g, x) || !const_scalar(g, p->inputs[1], &two) || two != 2.0f) return CS_OK;
  const cs_value *xv = cs_graph_value(g, x);
  if (xv->rank < 1) return CS_OK;
  const int64_t len = xv->shape[xv->rank - 1];
  c[S_RM] = only_consumer(g, p->outputs[0], CS_OP_REDUCE_MEAN);
  if (c[S_RM] < 0 || !mean_over_last(g, c[S_RM])) return CS_OK;
  c[S_ADD_EPS] = only_consumer(g, cs_graph_node(g, c[S_RM])->outputs[0], CS_OP_ADD);
  if (c[S_ADD_EPS] < 0) return CS_OK;
  const cs_node *ae = cs_graph_node(g, c[S_ADD_EPS]);
  if (!eps_of(g, ae, cs_graph_node(g, c[S_RM])->outputs[0], &eps)) return CS_OK;
  c[S_SQRT] = only_consumer(g, ae->outputs[0], CS_OP_SQRT);
  if (c[S_SQRT] < 0) return CS_OK;
  c[S_DIV] = only_consumer(g, cs_graph_node(g, c[S_SQRT])->outputs[0], CS_OP_DIV);
  if (c[S_DIV] < 0 || cs_graph_node(g, c[S_DIV])->inputs[0] != x) return CS_OK;
  c[S_MUL] = only_consumer(g, cs_graph_node(g, c[S_DIV])->outputs[0], CS_OP_MUL);
  if (c[S_MUL] < 0) return CS_OK;
  const int scale = const_vector_operand(g, c[S_MUL], len, &other);
  if (scale < 0 || other != cs_graph_node(g, c[S_DIV])->outputs[0]) return CS_OK;
  const int y = cs_graph_node(g, c[S_MUL])->outputs[0];
  if (!is_f32(g, y) || !cs_match_same_shape(g, x, y)) return CS_OK;

  tidsp_layer_norm_params prm;
  memset(&prm, 0, sizeof prm);
  prm.outer = (int32_t)(cs_value_numel(xv) / len);
  prm.norm = (int32_t)len;
  prm.epsilon = eps;
  prm.variant = TIDSP_LN_SIMPLIFIED;
  char *origin = cs_origin_join(g, c, N_SIMPLE);
  if (!origin) return CS_ERR_NOMEM;
  char name[512];
  snprintf(name, sizeof name, "%s/SimplifiedLayerNormFusion", cs_graph_node(g, c[S_MUL])->name);
  for (int i = 0; i < N_SIMPLE; i++) cs_graph_remove_node(g, c[i]);
  int ins[3] = {x, scale, -1};
  int k = cs_graph_add_node(g, CS_OP_K_LAYER_NORM_F32, name, origin, 3, ins, 1, &y);
  free(origin);
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.layer_norm = prm;
  return CS_OK;
}

/* SkipLayerNormFusion (ORT, same level, after the two above): a float
 * LayerNormalization over the last axis whose input is a residual
 * Add(input, skip) of two 3-D tensors of one shape, read by the
 * LayerNormalization alone, runs as SkipLayerNormalization. Its kernel
 * (ORT 1.30, measured: tests/e2e/test_ort_norm_fusions.py) adds the two as
 * the Add does, then takes the row statistics by Welford's running mean at
 * every row length, y = ((x − mean) / sd) · scale + bias; the Add stays a
 * node and the LayerNormalization is marked "ort_skip", which its lowering
 * (legalize_norm.c) turns into variant TIDSP_LN_WELFORD. Not mirrored: a
 * bias Add ORT also folds into SkipLayerNormalization (Add(Add(x, b), skip)
 * with a 1-D constant b: the sum's order is ((x + skip) + b) there). */
static cs_status mark_skip(cs_graph *g, int ln) {
  cs_node *n = cs_graph_node(g, ln);
  if (n->n_inputs < 2 || !is_f32(g, n->inputs[0])) return CS_OK;
  for (int j = 1; j < n->n_outputs; j++) {
    int c;
    if (n->outputs[j] >= 0 &&
        (cs_graph_consumers(g, n->outputs[j], &c, 1) > 0 || cs_graph_is_output(g, n->outputs[j])))
      return CS_OK;
  }
  const cs_value *xv = cs_graph_value(g, n->inputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", -1);
  if (axis < 0) axis += xv->rank;
  if (xv->rank != 3 || axis != 2) return CS_OK;
  const int add = cs_match_producer(g, n->inputs[0], CS_OP_ADD);
  if (add < 0 || cs_match_single_consumer(g, n->inputs[0]) != ln) return CS_OK;
  const cs_node *a = cs_graph_node(g, add);
  if (a->n_inputs != 2 || !is_f32(g, a->inputs[0]) || !is_f32(g, a->inputs[1]) ||
      !cs_match_same_shape(g, a->inputs[0], a->inputs[1]) || !cs_match_same_shape(g, a->inputs[0], n->inputs[0]))
    return CS_OK;
  return cs_node_set_attr_int(n, "ort_skip", 1);
}

cs_status pass_fuse_layer_norm_f32(cs_graph *g, const cs_target *t) {
  (void)t;
  cs_status st = cs_match_each(g, CS_OP_REDUCE_MEAN, fuse);
  if (st == CS_OK) st = cs_match_each(g, CS_OP_POW, fuse_simplified);
  return st != CS_OK ? st : cs_match_each(g, CS_OP_LAYER_NORMALIZATION, mark_skip);
}
