/*
 * FoldConstant (with ConstReachability): a kernel node whose inputs are
 * all compile-time constants is run now, with the reference kernel, and
 * its outputs become constants — it is never emitted (e.g. the float
 * weights of a float-path Conv: DequantizeLinear of an int8 constant).
 */
#include <stdlib.h>
#include <string.h>

#include "kernel_exec.h"
#include "pass_list.h"

cs_status pass_fold_constants(cs_graph *g, const cs_target *t) {
  (void)t;
  int *order = malloc(sizeof(int) * (size_t)(g->n_nodes ? g->n_nodes : 1));
  if (!order) return cs_error(CS_ERR_NOMEM, "out of memory");
  int count = cs_graph_topo_order(g, order);
  for (int k = 0; k < count; k++) {
    cs_node *n = cs_graph_node(g, order[k]);
    if (n->dead || !cs_op_is_kernel(n->op)) continue;
    int all_const = 1;
    for (int i = 0; i < n->n_inputs; i++)
      if (n->inputs[i] >= 0 && !cs_graph_value(g, n->inputs[i])->data) all_const = 0;
    if (!all_const || n->n_outputs < 1) continue;
    const void *in[16] = {0};
    void *out[8] = {0};
    if (n->n_inputs > 16 || n->n_outputs > 8) continue;
    for (int i = 0; i < n->n_inputs; i++) in[i] = n->inputs[i] >= 0 ? cs_graph_value(g, n->inputs[i])->data : NULL;
    int ok = 1;
    for (int o = 0; o < n->n_outputs; o++) {
      size_t bytes = cs_value_nbytes(cs_graph_value(g, n->outputs[o]));
      out[o] = calloc(1, bytes ? bytes : 1);
      if (!out[o]) ok = 0;
    }
    int32_t st = ok ? cs_kernel_exec(g, n, in, out) : TIDSP_ERR_NOMEM;
    if (st != TIDSP_OK) {
      for (int o = 0; o < n->n_outputs; o++) free(out[o]);
      free(order);
      return cs_error(CS_ERR_INTERNAL, "constant folding of node '%s' (%s) failed: %s", n->name,
                      cs_op_name(n->op), tidsp_status_str(st));
    }
    int n_out = n->n_outputs;
    int outs[8];
    memcpy(outs, n->outputs, sizeof(int) * (size_t)n_out);
    cs_graph_remove_node(g, order[k]);
    for (int o = 0; o < n_out; o++) {
      cs_value *v = cs_graph_value(g, outs[o]);
      v->data = out[o];
      v->producer = -1;
    }
  }
  free(order);
  return CS_OK;
}
