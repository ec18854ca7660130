/*
 * The model boundary: which tensors the raw entry (cg_main) takes and
 * returns.
 *
 *   input:  g ──k_quantize(per-tensor)──► q   g consumed only by quantizes
 *                                             with one set of params → raw q
 *   output: d ──k_dequantize(per-tensor)──► o o read by nothing else → raw d
 *
 * Anything else keeps the graph's own tensor as the raw one. The boundary
 * nodes are run by model_run around cg_main, never by cg_main itself.
 */
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

enum { QDQ_SCALE = 0, QDQ_ZERO_POINT = 1, QDQ_X = 2 };

static int is_live_const(const cs_graph *g, int v) {
  return v >= 0 && v < g->n_values && cs_graph_value(g, v)->data != NULL;
}

static int same_const(const cs_graph *g, int a, int b) {
  if (a == b) return 1;
  const cs_value *va = cs_graph_value(g, a), *vb = cs_graph_value(g, b);
  size_t na = cs_value_nbytes(va), nb = cs_value_nbytes(vb);
  return va->dtype == vb->dtype && na == nb && memcmp(va->data, vb->data, na) == 0;
}

/* A per-tensor quantize/dequantize whose scale and zero point are
 * constants. */
static int is_per_tensor_qdq(const cs_graph *g, const cs_node *n, cs_op op) {
  return !n->dead && n->op == op && n->n_inputs == 3 && n->n_outputs == 1 &&
         n->k.qdq.channels == 1 && is_live_const(g, n->inputs[QDQ_SCALE]) &&
         is_live_const(g, n->inputs[QDQ_ZERO_POINT]);
}

static int same_qdq(const cs_graph *g, const cs_node *a, const cs_node *b) {
  return memcmp(&a->k.qdq, &b->k.qdq, sizeof a->k.qdq) == 0 &&
         same_const(g, a->inputs[QDQ_SCALE], b->inputs[QDQ_SCALE]) &&
         same_const(g, a->inputs[QDQ_ZERO_POINT], b->inputs[QDQ_ZERO_POINT]);
}

/* Does any live node other than those listed read v (at any argument)? */
static int read_by_other_than_quantize_x(const cs_graph *g, int v) {
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->inputs[k] != v) continue;
      if (n->op != CS_OP_K_QUANTIZE || k != QDQ_X) return 1;
    }
  }
  return 0;
}

static int read_by_any_node(const cs_graph *g, int v) {
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] == v) return 1;
  }
  return 0;
}

static void find_input_boundary(const cs_graph *g, int v, cs_boundary_io *io,
                                int *is_boundary_node) {
  io->value = io->raw_value = v;
  io->node = -1;
  if (cs_graph_is_output(g, v) || read_by_other_than_quantize_x(g, v)) return;
  int first = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead || n->op != CS_OP_K_QUANTIZE || n->inputs[QDQ_X] != v) continue;
    if (!is_per_tensor_qdq(g, n, CS_OP_K_QUANTIZE)) return;
    if (first < 0) first = i;
    else if (!same_qdq(g, &g->nodes[first], n)) return;
  }
  if (first < 0) return;
  io->node = first;
  io->raw_value = g->nodes[first].outputs[0];
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (!n->dead && n->op == CS_OP_K_QUANTIZE && n->inputs[QDQ_X] == v)
      is_boundary_node[i] = 1;
  }
}

static void find_output_boundary(const cs_graph *g, int v, cs_boundary_io *io,
                                 int *is_boundary_node) {
  io->value = io->raw_value = v;
  io->node = -1;
  int p = cs_graph_value(g, v)->producer;
  if (p < 0 || p >= g->n_nodes) return;
  const cs_node *n = &g->nodes[p];
  if (!is_per_tensor_qdq(g, n, CS_OP_K_DEQUANTIZE)) return;
  if (is_live_const(g, n->inputs[QDQ_X]) || read_by_any_node(g, v)) return;
  for (int i = 0; i < g->n_inputs; i++)
    if (g->inputs[i] == v) return;
  io->node = p;
  io->raw_value = n->inputs[QDQ_X];
  is_boundary_node[p] = 1;
}

cs_status cs_schedule_boundary(const cs_graph *g, cs_schedule *s) {
  s->n_inputs = g->n_inputs;
  s->n_outputs = g->n_outputs;
  s->inputs = calloc((size_t)g->n_inputs + 1, sizeof *s->inputs);
  s->outputs = calloc((size_t)g->n_outputs + 1, sizeof *s->outputs);
  s->output_copy = calloc((size_t)g->n_outputs + 1, sizeof *s->output_copy);
  s->node_step = malloc(((size_t)g->n_nodes + 1) * sizeof *s->node_step);
  if (!s->inputs || !s->outputs || !s->output_copy || !s->node_step)
    return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  /* node_step doubles as the boundary mark until the order is built. */
  int *is_boundary = s->node_step;
  for (int i = 0; i < g->n_nodes; i++) is_boundary[i] = 0;
  for (int i = 0; i < g->n_inputs; i++) {
    int v = g->inputs[i];
    if (v < 0 || v >= g->n_values)
      return cs_error(CS_ERR_INTERNAL, "schedule: graph input %d has bad value id %d", i, v);
    find_input_boundary(g, v, &s->inputs[i], is_boundary);
  }
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i];
    if (v < 0 || v >= g->n_values)
      return cs_error(CS_ERR_INTERNAL, "schedule: graph output %d has bad value id %d", i, v);
    find_output_boundary(g, v, &s->outputs[i], is_boundary);
  }
  return CS_OK;
}
