/*
 * Execution order and liveness.
 *
 * The order is the IR's stable topological order (Kahn, by node id) with
 * dead and boundary nodes left out: it keeps the ONNX file's order where
 * the graph allows, which is what a reader of lib0.c expects.
 */
#include <stdlib.h>

#include "schedule.h"

/* Expects cs_schedule_boundary to have marked boundary nodes in node_step
 * (1 = boundary). Replaces the marks by steps. */
cs_status cs_schedule_order(const cs_graph *g, cs_schedule *s) {
  int *topo = malloc(((size_t)g->n_nodes + 1) * sizeof *topo);
  s->order = malloc(((size_t)g->n_nodes + 1) * sizeof *s->order);
  s->node_elided = calloc((size_t)g->n_nodes + 1, sizeof *s->node_elided);
  if (!topo || !s->order || !s->node_elided) {
    free(topo);
    return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  }
  int n = cs_graph_topo_order(g, topo);
  if (n < 0) {
    free(topo);
    if (n == -2) return CS_ERR_NOMEM; /* message recorded */
    return cs_error(CS_ERR_INTERNAL, "schedule: graph '%s' has a cycle", g->name ? g->name : "");
  }
  int *is_boundary = s->node_step;
  s->n_steps = 0;
  for (int i = 0; i < n; i++) {
    int id = topo[i];
    const cs_node *node = &g->nodes[id];
    if (node->dead || is_boundary[id]) continue;
    if (!cs_op_is_kernel(node->op)) {
      free(topo);
      return cs_error(CS_ERR_INTERNAL,
                      "codegen: node '%s' (ONNX %s) is still an ONNX op %s, not a kernel op: "
                      "the passes did not lower it",
                      node->name ? node->name : "?", node->origin ? node->origin : "?",
                      cs_op_name(node->op));
    }
    s->order[s->n_steps++] = id;
  }
  free(topo);
  for (int i = 0; i < g->n_nodes; i++) s->node_step[i] = -1;
  for (int k = 0; k < s->n_steps; k++) s->node_step[s->order[k]] = k;
  return CS_OK;
}

cs_status cs_schedule_liveness(const cs_graph *g, cs_schedule *s) {
  s->def_step = malloc(((size_t)g->n_values + 1) * sizeof *s->def_step);
  s->last_use = malloc(((size_t)g->n_values + 1) * sizeof *s->last_use);
  if (!s->def_step || !s->last_use) return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  for (int v = 0; v < g->n_values; v++) s->def_step[v] = s->last_use[v] = -1;
  for (int k = 0; k < s->n_steps; k++) {
    const cs_node *n = &g->nodes[s->order[k]];
    for (int i = 0; i < n->n_outputs; i++) {
      int v = n->outputs[i];
      if (v < 0 || v >= g->n_values)
        return cs_error(CS_ERR_INTERNAL, "schedule: node '%s' output %d has bad value id %d",
                        n->name ? n->name : "?", i, v);
      if (s->def_step[v] >= 0)
        return cs_error(CS_ERR_INTERNAL, "schedule: tensor '%s' is written by two nodes",
                        cs_graph_value(g, v)->name ? cs_graph_value(g, v)->name : "?");
      s->def_step[v] = k;
    }
    for (int i = 0; i < n->n_inputs; i++) {
      int v = n->inputs[i];
      if (v == -1) continue;
      if (v < 0 || v >= g->n_values)
        return cs_error(CS_ERR_INTERNAL, "schedule: node '%s' input %d has bad value id %d",
                        n->name ? n->name : "?", i, v);
      s->last_use[v] = k;
    }
  }
  return CS_OK;
}
