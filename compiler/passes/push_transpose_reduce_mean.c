/*
 * PushTransposeReduceMean — what ONNX Runtime's transpose optimizer (level
 * ORT_ENABLE_BASIC, before any fusion) does to a float ReduceMean of a
 * Transpose: it moves the Transpose below the mean,
 *
 *   ReduceMean(Transpose(t, perm), axes A, keepdims 1)
 *     → Transpose(ReduceMean(t, axes perm[A], keepdims 1), perm)
 *
 * The values are the same mean, but summed over another memory layout: a
 * mean over the last axis of Transpose(t) is a contiguous (Eigen) sum per
 * output in ORT's original graph, and after the move a row-by-row sum over
 * t's strided axis (runtime/kernels/ref/reduce_mean_f32.c: KR vs RK), which
 * rounds differently. Measured on ORT 1.30: it moves the Transpose for any
 * perm, whether or not the Transpose has other readers (they keep it).
 *
 * It also decides which fusion ORT finds afterwards: a layer normalization
 * whose input is a Transpose no longer matches LayerNormFusion (its first
 * ReduceMean now feeds a Transpose, not the Sub); ORT pushes the Transpose
 * on through the Sub and fuses the rest as SimplifiedLayerNormalization
 * (fuse_layer_norm_f32.c), so this pass runs before that one. Except in
 * models of opset 17 or later: there ORT fuses the LayerNormalization
 * before it moves Transposes (measured on ORT 1.30 with opsets 11-17:
 * pushed up to 16, fused at 17), so such a ReduceMean is left to the
 * fusion; a ReduceMean of a Transpose outside that pattern moves at every
 * opset.
 *
 * Not mirrored: keepdims 0 (ORT folds the Transpose into the reduced
 * output's order), and the other reductions.
 */
#include <stdio.h>

#include "pass_list.h"
#include "match/pattern.h"

static cs_status push(cs_graph *g, int r) {
  const cs_node *n = cs_graph_node(g, r);
  if (n->n_outputs != 1 || n->outputs[0] < 0 || cs_node_attr_int(n, "keepdims", 1) != 1) return CS_OK;
  const int tr = cs_match_producer(g, n->inputs[0], CS_OP_TRANSPOSE);
  if (tr < 0) return CS_OK;
  /* From opset 17 (LayerNormalization an ONNX op) ORT fuses the layer
   * normalization first: the Transpose stays (measured, opsets 11-17). */
  if (g->opset >= 17 && cs_match_layer_norm_f32(g, r)) return CS_OK;
  const int t = cs_graph_node(g, tr)->inputs[0];
  const cs_value *tv = cs_graph_value(g, t);
  const int rank = tv->rank;
  if (tv->dtype != CS_DTYPE_F32 || rank < 2 || rank > CS_MAX_RANK) return CS_OK;
  int64_t perm[CS_MAX_RANK];
  int np = 0;
  const int64_t *pa = cs_node_attr_ints(cs_graph_node(g, tr), "perm", &np);
  for (int d = 0; d < rank; d++) perm[d] = pa ? (d < np ? pa[d] : -1) : rank - 1 - d;
  if (pa && np != rank) return CS_OK;
  /* the mean's axes, mapped through perm */
  int has_axes = n->n_inputs > 1 && n->inputs[1] >= 0;
  int64_t axes[CS_MAX_RANK];
  int cnt = 0;
  if (has_axes) {
    const cs_value *av = cs_graph_value(g, n->inputs[1]);
    if (!av->data || cs_value_numel(av) < 1 || cs_value_numel(av) > rank) return CS_OK; /* empty: see noop_with_empty_axes */
    cnt = (int)cs_value_numel(av);
    for (int i = 0; i < cnt; i++) {
      int64_t a = cs_const_get_int(av, i);
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) return CS_OK; /* the lowering names the error */
      axes[i] = perm[a];
    }
  }
  int64_t shape[CS_MAX_RANK];
  for (int d = 0; d < rank; d++) shape[d] = tv->shape[d];
  if (has_axes)
    for (int i = 0; i < cnt; i++) shape[axes[i]] = 1;
  else
    for (int d = 0; d < rank; d++) shape[d] = 1;

  char name[600];
  snprintf(name, sizeof name, "%.500s.untransposed", n->name);
  const int y = n->outputs[0];
  int ax = -1;
  if (has_axes) {
    int64_t ac = cnt;
    ax = cs_add_const_named(g, n->name, "axes_untransposed", CS_DTYPE_I64, 1, &ac, axes);
    if (ax < 0) return CS_ERR_NOMEM;
  }
  const int m = cs_reroute_output(g, r, name, rank, shape);
  if (m < 0) return CS_ERR_NOMEM;
  cs_node_set_input(g, r, 0, t);
  if (has_axes) cs_node_set_input(g, r, 1, ax);
  char origin[512];
  snprintf(origin, sizeof origin, "%s", cs_graph_node(g, r)->name);
  snprintf(name, sizeof name, "%.500s/transpose_pushed", origin);
  const int k = cs_graph_add_node(g, CS_OP_TRANSPOSE, name, origin, 1, &m, 1, &y);
  if (k < 0) return CS_ERR_NOMEM;
  return cs_node_set_attr_ints(cs_graph_node(g, k), "perm", rank, perm);
}

cs_status pass_push_transpose_reduce_mean(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_REDUCE_MEAN, push);
}
