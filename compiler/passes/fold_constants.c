/*
 * FoldConstant (with ConstReachability): a kernel node whose inputs are
 * all compile-time constants is run now, with the reference kernel, and
 * its outputs become constants — it is never emitted (e.g. the float
 * weights of a float-path Conv: DequantizeLinear of an int8 constant).
 *
 * A folded result is memory the compiler allocates on the word of the
 * model (an Expand of a scalar to 8 GiB is a 97-byte file): its size is
 * checked against the memory limit before the buffer is asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "eval/kernel_exec.h"
#include "eval/matmul_nbits.h"
#include "pass_list.h"

cs_status cs_fold_check_result(const cs_graph *g, const cs_node *n, const cs_value *v) {
  if (cs_graph_check_value(g, v, 1) == CS_OK) return CS_OK;
  char why[1024];
  snprintf(why, sizeof why, "%s", cs_error_message());
  return cs_error(CS_ERR_NOMEM, "constant folding of node '%s' (%s): %s", n->name, cs_op_name(n->op), why);
}

cs_status pass_fold_constants(cs_graph *g, const cs_target *t) {
  (void)t;
  int *order = malloc(sizeof(int) * (size_t)(g->n_nodes ? g->n_nodes : 1));
  if (!order) return cs_error(CS_ERR_NOMEM, "out of memory");
  int count = cs_graph_topo_order(g, order);
  if (count < 0) {
    free(order);
    return count == -2 ? CS_ERR_NOMEM : cs_error(CS_ERR_INTERNAL, "constant folding: the graph has a cycle");
  }
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
    cs_status cst = CS_OK;
    for (int o = 0; o < n->n_outputs && cst == CS_OK; o++) {
      const cs_value *v = cs_graph_value(g, n->outputs[o]);
      cst = cs_fold_check_result(g, n, v);
      size_t bytes = cs_value_nbytes(v);
      if (cst == CS_OK && !(out[o] = calloc(1, bytes ? bytes : 1)))
        cst = cs_error(CS_ERR_NOMEM, "constant folding of node '%s' (%s): out of memory for the %zu bytes of '%s'",
                       n->name, cs_op_name(n->op), bytes, v->name);
    }
    /* a MatMul ORT runs as MatMulNBits: its arithmetic, not the float product */
    int32_t st = cst != CS_OK || cs_fold_matmul_nbits(g, n, in, out) ? TIDSP_OK : cs_kernel_exec(g, n, in, out);
    if (cst != CS_OK || st != TIDSP_OK) {
      for (int o = 0; o < n->n_outputs; o++) free(out[o]);
      free(order);
      if (cst != CS_OK) return cst;
      /* The runtime's NOMEM means its arena ran short; here it can only be
       * a scratch copy the compiler could not allocate. */
      if (st == TIDSP_ERR_NOMEM)
        return cs_error(CS_ERR_NOMEM, "constant folding of node '%s' (%s): out of memory for its scratch buffers",
                        n->name, cs_op_name(n->op));
      return cs_error(CS_ERR_INTERNAL, "constant folding of node '%s' (%s) failed: %s", n->name,
                      cs_op_name(n->op), tidsp_status_str(st));
    }
    int n_out = n->n_outputs;
    int outs[8];
    memcpy(outs, n->outputs, sizeof(int) * (size_t)n_out);
    cs_graph_remove_node(g, order[k]);
    for (int o = 0; o < n_out; o++) {
      cs_graph_set_const_data(g, outs[o], out[o]);
      cs_graph_value(g, outs[o])->producer = -1;
    }
  }
  free(order);
  return CS_OK;
}
