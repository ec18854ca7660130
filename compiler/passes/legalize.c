/*
 * LegalizeOps — every ONNX op left after the fusions becomes one reference
 * kernel call (the "DQ → float kernel → Q" path, and data movement on any
 * dtype). The lowerings live by op family in legalize_<family>.c, each file
 * with a table of the ops it lowers; this file holds the pass, which
 * dispatches on those tables, and the retargeting every lowering shares. An
 * op with no lowering is an internal error (the frontend refuses unknown
 * ops).
 */
#include <stdlib.h>
#include <string.h>

#include "legalize_internal.h"
#include "pass_list.h"

cs_status cs_lower_unsupported(const cs_node *n, const char *why) {
  return cs_error(CS_ERR_UNSUPPORTED, "node '%s' (%s): %s", n->name, cs_op_name(n->op), why);
}

/* A kernel node keeps the name of the ONNX node it came from as its
 * origin (when it has none yet); 0 when out of memory. */
int cs_lower_keep_origin(cs_node *n) {
  if (n->origin && *n->origin) return 1;
  char *o = strdup(n->name ? n->name : "");
  if (!o) return 0;
  free(n->origin);
  n->origin = o;
  return 1;
}

/* Retarget node `id` in place as kernel `op` with the given inputs. NULL
 * when out of memory. */
static cs_node *retarget(cs_graph *g, int id, cs_op op, int n_inputs, const int *inputs) {
  if (cs_node_set_inputs(g, id, n_inputs, inputs) != CS_OK) return NULL;
  cs_node *n = cs_graph_node(g, id);
  n->op = op;
  return cs_lower_keep_origin(n) ? n : NULL;
}

/* Node `id` becomes kernel `op` on the given inputs with params k: the
 * tail of every lowering that keeps its node. Only k's own member is read
 * later (the printer and the emitter go by the kernel's params struct). */
cs_status cs_lower_retarget(cs_graph *g, int id, cs_op op, int n_inputs, const int *inputs, cs_kparams k) {
  cs_node *n = retarget(g, id, op, n_inputs, inputs);
  if (!n) return cs_error(CS_ERR_NOMEM, "out of memory");
  n->k = k;
  return CS_OK;
}

/* Node `id` becomes a k_copy of value v into its output (same bytes). */
cs_status cs_lower_retarget_copy(cs_graph *g, int id, int v) {
  size_t bytes = cs_value_nbytes(cs_graph_value(g, cs_graph_node(g, id)->outputs[0]));
  return cs_lower_retarget(g, id, CS_OP_K_COPY, 1, &v, (cs_kparams){.copy_bytes = bytes});
}

/* A new kernel node `op` (inputs → value out) with params k: the tail of
 * every lowering that adds a node beside its own. Returns out, or -1 when
 * out is -1 or memory runs out (message recorded). */
int cs_lower_add_kernel(cs_graph *g, cs_op op, const char *origin, int n_inputs, const int *inputs, int out,
                        cs_kparams k) {
  int id = out < 0 ? -1 : cs_add_kernel(g, op, origin, n_inputs, inputs, out);
  if (id < 0) return -1;
  cs_graph_node(g, id)->k = k;
  return out;
}

int cs_lower_all_f32(cs_graph *g, const cs_node *n) {
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0 && cs_graph_value(g, n->inputs[i])->dtype != CS_DTYPE_F32) return 0;
  return cs_graph_value(g, n->outputs[0])->dtype == CS_DTYPE_F32;
}

/* Every family's table, in one place: a new family file adds its table
 * here; a new op of a family adds a row to that family's table. */
static const cs_lowering *const families[] = {
    cs_lowerings_quant, cs_lowerings_conv,     cs_lowerings_matmul, cs_lowerings_eltwise_f32,
    cs_lowerings_eltwise_any, cs_lowerings_norm, cs_lowerings_reduce, cs_lowerings_pool,
    cs_lowerings_movement, cs_lowerings_slice, cs_lowerings_broadcast,
};

cs_status pass_legalize(cs_graph *g, const cs_target *t) {
  (void)t;
  cs_lower_fn *lower[CS_OP_COUNT_] = {0};
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const cs_lowering *r = families[f]; r->lower; r++) {
      if (lower[r->op]) return cs_error(CS_ERR_INTERNAL, "%s has two lowerings", cs_op_name(r->op));
      lower[r->op] = r->lower;
    }
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || cs_op_is_kernel(n->op)) continue;
    cs_status st;
    if ((n->op == CS_OP_CLIP || n->op == CS_OP_RELU) && cs_graph_value(g, n->inputs[0])->dtype != CS_DTYPE_F32) {
      st = cs_lower_int_clip(g, i);
      if (st != CS_OK) return st;
      continue;
    }
    tidsp_unary_f32_params up;
    cs_unary_match um = cs_unary_params_of(g, n, &up);
    if (um != CS_UNARY_NONE) {
      st = cs_lower_unary(g, i, um, up);
      if (st != CS_OK) return st;
      continue;
    }
    if (lower[n->op]) st = lower[n->op](g, i);
    else st = cs_error(CS_ERR_INTERNAL, "node '%s': no lowering for %s", n->name, cs_op_name(n->op));
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
