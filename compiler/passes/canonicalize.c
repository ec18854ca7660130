/*
 * Canonicalize: the graph every later pass may assume.
 *  - Identity and Dropout (inference) are removed; a Dropout mask that is
 *    read becomes its constant value (all true).
 *  - uint8 activations become int8: q' = q − 128, zp' = zp − 128. This is
 *    exact for QuantizeLinear (the clamp moves with the zero point) and
 *    DequantizeLinear (q − zp is unchanged), so every integer kernel sees
 *    int8 only. uint8 stays only at the graph boundary (a uint8 graph input
 *    or output keeps its dtype).
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

static int preserves_dtype(cs_op op) {
  switch (op) {
    case CS_OP_RESHAPE: case CS_OP_FLATTEN: case CS_OP_TRANSPOSE: case CS_OP_SQUEEZE:
    case CS_OP_UNSQUEEZE: case CS_OP_SLICE: case CS_OP_SPLIT: case CS_OP_CONCAT:
    case CS_OP_MAX_POOL: case CS_OP_PAD: case CS_OP_IDENTITY: case CS_OP_GATHER: case CS_OP_EXPAND:
      return 1;
    default:
      return 0;
  }
}

/* A new int8 constant: the uint8 constant `v` shifted by −128. */
static int shifted_const(cs_graph *g, int v) {
  const cs_value *src = cs_graph_value(g, v);
  int64_t n = cs_value_numel(src);
  int8_t *d = malloc((size_t)(n ? n : 1));
  if (!d) {
    cs_error(CS_ERR_NOMEM, "out of memory shifting constant '%s' to int8", src->name);
    return -1;
  }
  for (int64_t i = 0; i < n; i++) d[i] = (int8_t)(((const uint8_t *)src->data)[i] - 128);
  int id = cs_add_const_named(g, src->name ? src->name : "const", "s8", CS_DTYPE_I8, src->rank, src->shape, d);
  free(d);
  return id;
}

static cs_status to_int8(cs_graph *g) {
  /* QuantizeLinear → uint8 internal tensors become int8. */
  for (int i = 0; i < g->n_nodes; i++) {
    cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_QUANTIZE_LINEAR) continue;
    int out = n->outputs[0];
    if (cs_graph_value(g, out)->dtype != CS_DTYPE_U8 || cs_graph_is_output(g, out)) continue;
    if (n->n_inputs < 3 || n->inputs[2] < 0 || !cs_match_is_const(g, n->inputs[2])) continue;
    int z = shifted_const(g, n->inputs[2]);
    if (z < 0) return CS_ERR_NOMEM; /* message recorded */
    cs_node_set_input(g, i, 2, z);
    cs_graph_value(g, out)->dtype = CS_DTYPE_I8;
    cs_graph_value(g, out)->from_u8 = 1;
  }
  /* Propagate through dtype-preserving ops and fix DequantizeLinear, in
   * topological order so that chains are followed. */
  int *order = malloc(sizeof(int) * (size_t)(g->n_nodes ? g->n_nodes : 1));
  if (!order) return cs_error(CS_ERR_NOMEM, "out of memory");
  int count = cs_graph_topo_order(g, order);
  if (count == -2) {
    free(order);
    return CS_ERR_NOMEM;
  }
  for (int k = 0; k < count; k++) {
    cs_node *n = cs_graph_node(g, order[k]);
    if (n->dead) continue;
    if (preserves_dtype(n->op) && n->n_inputs > 0 && n->inputs[0] >= 0 &&
        cs_graph_value(g, n->inputs[0])->dtype == CS_DTYPE_I8) {
      for (int o = 0; o < n->n_outputs; o++) {
        cs_value *v = cs_graph_value(g, n->outputs[o]);
        if (v->dtype == CS_DTYPE_U8) {
          v->dtype = CS_DTYPE_I8;
          v->from_u8 = 1;
        }
      }
    }
    if (n->op != CS_OP_DEQUANTIZE_LINEAR) continue;
    int x = n->inputs[0];
    int has_zp = n->n_inputs >= 3 && n->inputs[2] >= 0;
    if (cs_graph_value(g, x)->dtype == CS_DTYPE_U8 && cs_match_is_const(g, x)) {
      int nx = shifted_const(g, x);
      if (nx < 0) { free(order); return CS_ERR_NOMEM; }
      cs_node_set_input(g, order[k], 0, nx);
      n = cs_graph_node(g, order[k]);
      x = nx;
    }
    if (cs_graph_value(g, x)->dtype == CS_DTYPE_I8 && has_zp &&
        cs_graph_value(g, n->inputs[2])->dtype == CS_DTYPE_U8 && cs_match_is_const(g, n->inputs[2])) {
      int z = shifted_const(g, n->inputs[2]);
      if (z < 0) { free(order); return CS_ERR_NOMEM; }
      cs_node_set_input(g, order[k], 2, z);
    }
  }
  free(order);
  return CS_OK;
}

cs_status pass_canonicalize(cs_graph *g, const cs_target *t) {
  (void)t;
  for (int i = 0; i < g->n_nodes; i++) {
    cs_node *n = cs_graph_node(g, i);
    if (n->dead || (n->op != CS_OP_IDENTITY && n->op != CS_OP_DROPOUT)) continue;
    int in = n->inputs[0], out = n->outputs[0];
    /* In inference Dropout keeps every element: its optional mask is all
     * true, a constant. */
    int mask = n->op == CS_OP_DROPOUT && n->n_outputs > 1 ? n->outputs[1] : -1;
    cs_graph_remove_node(g, i);
    if (mask >= 0) {
      cs_value *mv = cs_graph_value(g, mask);
      size_t bytes = cs_value_nbytes(mv);
      mv->data = malloc(bytes ? bytes : 1);
      if (!mv->data) return cs_error(CS_ERR_NOMEM, "out of memory");
      memset(mv->data, 1, bytes);
      mv->producer = -1;
    }
    /* A graph output keeps its ONNX name: the value that replaces it takes
     * the name, unless that value is itself graph I/O. */
    int in_is_io = cs_graph_is_output(g, in);
    for (int k = 0; k < g->n_inputs; k++) in_is_io |= g->inputs[k] == in;
    if (cs_graph_is_output(g, out) && !in_is_io) {
      cs_value *iv = cs_graph_value(g, in), *ov = cs_graph_value(g, out);
      char *name = ov->name ? strdup(ov->name) : NULL;
      if (name) {
        free(iv->name);
        iv->name = name;
      }
    }
    cs_graph_replace_uses(g, out, in);
  }
  return to_int8(g);
}
