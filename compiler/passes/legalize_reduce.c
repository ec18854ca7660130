/*
 * LegalizeOps: ReduceMean in float (k_reduce_mean_f32), and the
 * mean node other lowerings add.
 */
#include <stdlib.h>
#include <string.h>

#include "legalize_internal.h"

/* Is a fused int8 convolution among the producers of value v (searched
 * backwards through every op)? */
static int upstream_int8_conv(cs_graph *g, int v) {
  int *stack = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  char *seen = calloc((size_t)g->n_values + 1, 1);
  int top = 0, found = 0;
  if (!stack || !seen) { free(stack); free(seen); return 0; }
  stack[top++] = v;
  seen[v] = 1;
  while (top > 0 && !found) {
    int p = cs_graph_value(g, stack[--top])->producer;
    if (p < 0) continue;
    const cs_node *n = cs_graph_node(g, p);
    if (n->dead) continue;
    if (n->op == CS_OP_K_CONV2D_I8) { found = 1; break; }
    for (int i = 0; i < n->n_inputs; i++) {
      int u = n->inputs[i];
      if (u >= 0 && !seen[u]) { seen[u] = 1; stack[top++] = u; }
    }
  }
  free(stack);
  free(seen);
  return found;
}

/* Does value v reach a fused int8 convolution (searched forwards through
 * every op)? */
static int downstream_int8_conv(cs_graph *g, int v) {
  int *stack = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  char *seen = calloc((size_t)g->n_values + 1, 1);
  int *cons = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
  int top = 0, found = 0;
  if (!stack || !seen || !cons) { free(stack); free(seen); free(cons); return 0; }
  stack[top++] = v;
  seen[v] = 1;
  while (top > 0 && !found) {
    int u = stack[--top];
    int nc = cs_graph_consumers(g, u, cons, g->n_nodes);
    for (int c = 0; c < nc && !found; c++) {
      const cs_node *n = cs_graph_node(g, cons[c]);
      if (n->op == CS_OP_K_CONV2D_I8) { found = 1; break; }
      for (int o = 0; o < n->n_outputs; o++) {
        int w = n->outputs[o];
        if (w >= 0 && !seen[w]) { seen[w] = 1; stack[top++] = w; }
      }
    }
  }
  free(stack);
  free(seen);
  free(cons);
  return found;
}

static cs_status lower_reduce_mean(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (x->dtype != CS_DTYPE_F32) return cs_lower_unsupported(n, "ReduceMean on integers must sit between DQ and Q");
  tidsp_reduce_params p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  for (int d = 0; d < x->rank; d++) p.in_shape[d] = (int32_t)x->shape[d];
  int cnt = 0;
  const int64_t *axes = cs_node_attr_ints(n, "axes", &cnt);
  int64_t axes_buf[CS_MAX_RANK];
  if (!axes && n->n_inputs > 1 && n->inputs[1] >= 0) {
    const cs_value *av = cs_graph_value(g, n->inputs[1]);
    if (!av->data) return cs_lower_unsupported(n, "ReduceMean axes must be a constant");
    cnt = (int)cs_value_numel(av);
    if (cnt > CS_MAX_RANK) return cs_lower_unsupported(n, "too many axes");
    for (int i = 0; i < cnt; i++) axes_buf[i] = cs_const_get_int(av, i);
    axes = axes_buf;
  }
  if (!axes || cnt == 0) {
    if (cs_node_attr_int(n, "noop_with_empty_axes", 0)) {
      p.reduce_mask = 0;
    } else {
      p.reduce_mask = (1 << x->rank) - 1;
    }
  } else {
    for (int i = 0; i < cnt; i++) {
      int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
      if (a < 0 || a >= x->rank) return cs_lower_unsupported(n, "axis out of range");
      p.reduce_mask |= 1 << a;
    }
  }
  /* ONNX Runtime's layout transform keeps the tensors between int8
   * convolutions in NHWC, so a mean over the trailing H, W of NCHW there
   * (a squeeze-excitation pool, whose result feeds convolutions again) is a
   * sum over outer dims, which rounds in another order (kernels.h). A
   * final global pool that feeds a Gemm stays NCHW in ORT. */
  if (x->rank == 4 && p.reduce_mask == 12 && upstream_int8_conv(g, n->inputs[0]) &&
      downstream_int8_conv(g, n->outputs[0]))
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
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (x->dtype != CS_DTYPE_F32) return cs_lower_unsupported(n, "ReduceL2 needs float32 data");
  tidsp_reduce_params p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  for (int d = 0; d < x->rank; d++) p.in_shape[d] = (int32_t)x->shape[d];
  int cnt = 0;
  if (n->n_inputs > 1 && n->inputs[1] >= 0) {
    const cs_value *av = cs_graph_value(g, n->inputs[1]);
    if (!av->data) return cs_lower_unsupported(n, "axes must be a constant");
    cnt = (int)cs_value_numel(av);
    for (int i = 0; i < cnt; i++) {
      int64_t a = cs_const_get_int(av, i);
      if (a < 0) a += x->rank;
      if (a < 0 || a >= x->rank) return cs_lower_unsupported(n, "axis out of range");
      p.reduce_mask |= 1 << a;
    }
  }
  int ins[1] = {n->inputs[0]};
  /* noop_with_empty_axes with no axes: ONNX says identity, but ORT 1.30
   * returns sqrt(x·x) per element (|x|, 0 where x·x underflows), with or
   * without an empty axes input; mask 0 gives exactly that. */
  if (cnt == 0 && !cs_node_attr_int(n, "noop_with_empty_axes", 0)) p.reduce_mask = (1 << x->rank) - 1;
  return cs_lower_retarget(g, id, CS_OP_K_REDUCE_L2_F32, 1, ins, (cs_kparams){.reduce = p});
}

const cs_lowering cs_lowerings_reduce[] = {
    {CS_OP_REDUCE_MEAN, lower_reduce_mean},
    {CS_OP_REDUCE_L2, lower_reduce_l2},
    {CS_OP_COUNT_, NULL},
};
