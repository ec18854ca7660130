/*
 * LegalizeOps: ReduceMean in float (k_reduce_mean_f32), and the
 * mean node other lowerings add.
 */
#include <stdlib.h>
#include <string.h>

#include "legalize_internal.h"

/* Does value v reach a fused int8 convolution, searched through every op
 * backwards (its producers, live ones) or, when forward, forwards (its
 * consumers)? */
static int reaches_int8_conv(cs_graph *g, int v, int forward) {
  int *stack = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  char *seen = calloc((size_t)g->n_values + 1, 1);
  int *nodes = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
  int top = 0, found = 0;
  if (!stack || !seen || !nodes) { free(stack); free(seen); free(nodes); return 0; }
  stack[top++] = v;
  seen[v] = 1;
  while (top > 0 && !found) {
    int u = stack[--top], n_nodes;
    if (forward) {
      n_nodes = cs_graph_consumers(g, u, nodes, g->n_nodes);
    } else {
      nodes[0] = cs_graph_value(g, u)->producer;
      n_nodes = nodes[0] >= 0 && !cs_graph_node(g, nodes[0])->dead;
    }
    for (int c = 0; c < n_nodes && !found; c++) {
      const cs_node *n = cs_graph_node(g, nodes[c]);
      if (n->op == CS_OP_K_CONV2D_I8) { found = 1; break; }
      const int *next = forward ? n->outputs : n->inputs;
      for (int i = 0; i < (forward ? n->n_outputs : n->n_inputs); i++) {
        int w = next[i];
        if (w >= 0 && !seen[w]) { seen[w] = 1; stack[top++] = w; }
      }
    }
  }
  free(stack);
  free(seen);
  free(nodes);
  return found;
}

/* The params of a ReduceMean / ReduceL2 of node n, whose input x must be
 * float (else refused with the message not_float): the axes in its constant axes input (the frontend turns the older
 * opsets' axes attribute into it, onnx_legacy.c); with none, every axis,
 * or none (mask 0) when noop_with_empty_axes is 1: ONNX's identity, and for
 * ReduceL2 what ORT 1.30 computes instead, sqrt(x·x) per element (|x|, 0
 * where x·x underflows), with or without an empty axes input. */
static cs_status reduce_params(cs_graph *g, const cs_node *n, const char *not_float, tidsp_reduce_params *p) {
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (x->dtype != CS_DTYPE_F32) return cs_lower_unsupported(n, not_float);
  memset(p, 0, sizeof *p);
  p->rank = x->rank;
  for (int d = 0; d < x->rank; d++) p->in_shape[d] = (int32_t)x->shape[d];
  int cnt = 0;
  if (n->n_inputs > 1 && n->inputs[1] >= 0) {
    const cs_value *av = cs_graph_value(g, n->inputs[1]);
    if (!av->data) return cs_lower_unsupported(n, "axes must be a constant");
    cnt = (int)cs_value_numel(av);
    for (int i = 0; i < cnt; i++) {
      int64_t a = cs_const_get_int(av, i);
      if (a < 0) a += x->rank;
      if (a < 0 || a >= x->rank) return cs_lower_unsupported(n, "axis out of range");
      p->reduce_mask |= 1 << a;
    }
  }
  if (cnt == 0 && !cs_node_attr_int(n, "noop_with_empty_axes", 0)) p->reduce_mask = (1 << x->rank) - 1;
  return CS_OK;
}

static cs_status lower_reduce_mean(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  tidsp_reduce_params p;
  cs_status st = reduce_params(g, n, "ReduceMean on integers must sit between DQ and Q", &p);
  if (st != CS_OK) return st;
  /* ONNX Runtime's layout transform keeps the tensors between int8
   * convolutions in NHWC, so a mean over the trailing H, W of NCHW there
   * (a squeeze-excitation pool, whose result feeds convolutions again) is a
   * sum over outer dims, which rounds in another order (kernels.h). A
   * final global pool that feeds a Gemm stays NCHW in ORT. */
  if (p.rank == 4 && p.reduce_mask == 12 && reaches_int8_conv(g, n->inputs[0], 0) &&
      reaches_int8_conv(g, n->outputs[0], 1))
    p.channels_last_order = 1;
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_REDUCE_MEAN_F32, 1, ins, (cs_kparams){.reduce = p});
}

/* k_reduce_mean_f32 of value a over its dims [axis, rank), keepdims. */
int cs_lower_add_reduce_mean(cs_graph *g, const char *origin, int a, int axis, const char *suffix) {
  const cs_value *av = cs_graph_value(g, a);
  int64_t shape[CS_MAX_RANK];
  tidsp_reduce_params p;
  memset(&p, 0, sizeof p);
  p.rank = av->rank;
  for (int d = 0; d < av->rank; d++) {
    p.in_shape[d] = (int32_t)av->shape[d];
    shape[d] = d < axis ? av->shape[d] : 1;
    if (d >= axis) p.reduce_mask |= 1 << d;
  }
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  int out = cs_graph_add_value(g, name, CS_DTYPE_F32, av->rank, shape);
  return cs_lower_add_kernel(g, CS_OP_K_REDUCE_MEAN_F32, origin, 1, &a, out, (cs_kparams){.reduce = p});
}

/* ReduceL2 → k_reduce_l2_f32 (float; ORT's order, reduce_l2_f32.c). */
static cs_status lower_reduce_l2(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  tidsp_reduce_params p;
  cs_status st = reduce_params(g, n, "ReduceL2 needs float32 data", &p);
  if (st != CS_OK) return st;
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_REDUCE_L2_F32, 1, ins, (cs_kparams){.reduce = p});
}

const cs_lowering cs_lowerings_reduce[] = {
    {CS_OP_REDUCE_MEAN, lower_reduce_mean},
    {CS_OP_REDUCE_L2, lower_reduce_l2},
    {CS_OP_COUNT_, NULL},
};
