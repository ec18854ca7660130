/*
 * const_eval.c — cs_const_eval_node: decide whether a node folds, and with
 * what (a small evaluator for an op without a runtime kernel, else the
 * kernels through the lowering LegalizeOps uses).
 */
#include <stdlib.h>

#include "eval_internal.h"

static const cs_evaluator *const kFamilies[] = {cs_eval_arith, cs_eval_shape, cs_eval_scatter};

static const cs_evaluator *find_evaluator(const cs_graph *g, const cs_node *n) {
  for (size_t f = 0; f < sizeof kFamilies / sizeof kFamilies[0]; f++)
    for (const cs_evaluator *e = kFamilies[f]; e->op != CS_OP_COUNT_; e++)
      if (e->op == n->op && e->accepts(g, n)) return e;
  return NULL;
}

/* Known at compile time: every input a constant; Shape and Size read only
 * the static shape of theirs. */
static int inputs_known(const cs_graph *g, const cs_node *n) {
  if (n->op == CS_OP_SHAPE || n->op == CS_OP_SIZE) return 1;
  for (int j = 0; j < n->n_inputs; j++)
    if (n->inputs[j] >= 0 && !cs_graph_value(g, n->inputs[j])->data) return 0;
  return 1;
}

cs_status cs_const_eval_node(cs_graph *g, int id, int *folded) {
  *folded = 0;
  const cs_node *n = &g->nodes[id];
  if (n->dead || cs_op_is_kernel(n->op) || n->op == CS_OP_QUANTIZE_LINEAR ||
      n->op == CS_OP_DEQUANTIZE_LINEAR || n->n_outputs < 1 || n->n_outputs > 8 ||
      !inputs_known(g, n))
    return CS_OK;
  for (int j = 0; j < n->n_outputs; j++)
    if (n->outputs[j] < 0) return CS_OK; /* an omitted output: not ours to guess */
  void *out[8] = {0};
  cs_status st = CS_OK;
  for (int j = 0; j < n->n_outputs && st == CS_OK; j++)
    st = cs_eval_alloc(n, cs_eval_out(g, n, j), &out[j]);
  int done = 0;
  if (st == CS_OK) {
    const cs_evaluator *e = find_evaluator(g, n);
    if (e) {
      st = e->run(g, n, out);
      done = st == CS_OK;
    } else {
      done = cs_eval_with_kernels(g, id, out);
    }
  }
  if (!done) {
    for (int j = 0; j < n->n_outputs; j++) free(out[j]);
    return st;
  }
  n = &g->nodes[id];
  int outs[8];
  int n_out = n->n_outputs;
  for (int j = 0; j < n_out; j++) outs[j] = n->outputs[j];
  cs_graph_remove_node(g, id);
  for (int j = 0; j < n_out; j++) {
    cs_value *v = cs_graph_value(g, outs[j]);
    free(v->data);
    v->data = out[j];
    v->producer = -1;
  }
  *folded = 1;
  return CS_OK;
}
