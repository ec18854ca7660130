/*
 * LegalizeOps: data movement on any dtype: the ops that only
 * relabel a shape (a k_copy), Transpose, Cast, Concat and Pad.
 */
#include <stdlib.h>
#include <string.h>

#include "legalize_internal.h"

static cs_status lower_copy(cs_graph *g, int id) {
  return cs_lower_retarget_copy(g, id, cs_graph_node(g, id)->inputs[0]);
}

static cs_status lower_transpose(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  tidsp_transpose_params p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  p.elem_size = (int32_t)cs_dtype_size(x->dtype);
  int cnt = 0;
  const int64_t *perm = cs_node_attr_ints(n, "perm", &cnt);
  for (int d = 0; d < x->rank; d++) {
    p.in_shape[d] = (int32_t)x->shape[d];
    p.perm[d] = perm ? (int32_t)perm[d] : x->rank - 1 - d;
  }
  if (perm && cnt != x->rank) return cs_lower_unsupported(n, "perm length differs from the rank");
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_TRANSPOSE, 1, ins, (cs_kparams){.transpose = p});
}

static cs_status lower_cast(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  tidsp_cast_params p = {(int32_t)cs_value_numel(x), cs_dtype_to_tidsp(x->dtype), cs_dtype_to_tidsp(y->dtype)};
  if (!p.from || !p.to) return cs_lower_unsupported(n, "cast between these dtypes is not supported");
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_CAST, 1, ins, (cs_kparams){.cast = p});
}

static cs_status lower_concat(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  cs_status st;
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  if (axis < 0 || axis >= y->rank) return cs_lower_unsupported(n, "concat axis out of range");
  int64_t *lens = malloc(sizeof(int64_t) * (size_t)n->n_inputs);
  if (!lens) return cs_error(CS_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n->n_inputs; i++) {
    const cs_value *x = cs_graph_value(g, n->inputs[i]);
    if (x->dtype != y->dtype) { free(lens); return cs_lower_unsupported(n, "inputs of different dtypes"); }
    lens[i] = x->shape[axis];
  }
  tidsp_concat_params p;
  memset(&p, 0, sizeof p);
  p.n_inputs = n->n_inputs;
  p.outer = (int32_t)cs_lower_prod(y->shape, 0, (int)axis);
  p.inner_bytes = (int32_t)(cs_lower_prod(y->shape, (int)axis + 1, y->rank) * (int64_t)cs_dtype_size(y->dtype));
  n->op = CS_OP_K_CONCAT; /* the inputs stay as they are */
  st = cs_lower_keep_origin(n) ? cs_node_set_attr_ints(n, "axis_len", n->n_inputs, lens) : cs_error(CS_ERR_NOMEM, "out of memory");
  free(lens);
  if (st != CS_OK) return st;
  n->k.concat = p;
  return CS_OK;
}

static cs_status lower_pad(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  tidsp_pad_params p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  p.elem_size = (int32_t)cs_dtype_size(x->dtype);
  for (int d = 0; d < x->rank; d++) p.in_shape[d] = (int32_t)x->shape[d];
  const cs_attr *m = cs_node_attr(n, "mode");
  const char *mode = m && m->s ? m->s : "constant";
  if (!strcmp(mode, "constant")) p.mode = TIDSP_PAD_CONSTANT;
  else if (!strcmp(mode, "edge")) p.mode = TIDSP_PAD_EDGE;
  else if (!strcmp(mode, "reflect")) p.mode = TIDSP_PAD_REFLECT;
  else return cs_lower_unsupported(n, "pad mode must be constant, edge or reflect");
  int64_t pads[2 * CS_MAX_RANK], axes[CS_MAX_RANK];
  int np = 0, na = 0;
  cs_status st;
  int cnt = 0;
  const int64_t *pattr = cs_node_attr_ints(n, "pads", &cnt);
  if (pattr) {
    np = cnt;
    for (int i = 0; i < cnt && i < 2 * CS_MAX_RANK; i++) pads[i] = pattr[i];
  } else if ((st = cs_lower_const_ints(g, n, 1, pads, &np, 2 * CS_MAX_RANK)) != CS_OK) {
    return st;
  }
  if ((st = cs_lower_const_ints(g, n, 3, axes, &na, CS_MAX_RANK)) != CS_OK) return st;
  if (!na) {
    na = x->rank;
    for (int d = 0; d < na; d++) axes[d] = d;
  }
  if (np != 2 * na) return cs_lower_unsupported(n, "pads length must be twice the number of axes");
  for (int i = 0; i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
    if (a < 0 || a >= x->rank) return cs_lower_unsupported(n, "pad axis out of range");
    if (pads[i] < 0 || pads[na + i] < 0) return cs_lower_unsupported(n, "negative pads are not supported");
    p.pad_begin[a] = (int32_t)pads[i];
    p.pad_end[a] = (int32_t)pads[na + i];
  }
  if (n->n_inputs > 2 && n->inputs[2] >= 0) {
    const cs_value *cv = cs_graph_value(g, n->inputs[2]);
    if (!cv->data) return cs_lower_unsupported(n, "pad constant_value must be a constant");
    memcpy(p.value, cv->data, cs_dtype_size(cv->dtype) <= 8 ? cs_dtype_size(cv->dtype) : 8);
  }
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_PAD, 1, ins, (cs_kparams){.pad = p});
}

const cs_lowering cs_lowerings_movement[] = {
    {CS_OP_RESHAPE, lower_copy},
    {CS_OP_FLATTEN, lower_copy},
    {CS_OP_SQUEEZE, lower_copy},
    {CS_OP_UNSQUEEZE, lower_copy},
    {CS_OP_IDENTITY, lower_copy},
    {CS_OP_DROPOUT, lower_copy},
    {CS_OP_TRANSPOSE, lower_transpose},
    {CS_OP_CAST, lower_cast},
    {CS_OP_CONCAT, lower_concat},
    {CS_OP_PAD, lower_pad},
    {CS_OP_COUNT_, NULL},
};
