/*
 * verify.c — structural checks of the graph, run after every pass in
 * tests and debug builds. The first broken rule is reported, naming the
 * node or value; CS_ERR_INTERNAL because a broken graph is a compiler bug.
 */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

#define VERR(...) cs_error(CS_ERR_INTERNAL, "verify: " __VA_ARGS__)

static const char *vname(const cs_graph *g, int id) {
  return id >= 0 && id < g->n_values && cs_graph_value(g, id)->name ? cs_graph_value(g, id)->name
                                                            : "?";
}

/* A kernel op against its row of the kernel table (cstatic/kernels.def):
 * its output and the tensors it reads at run time; constant operands are
 * checked against the whole signature when codegen emits the call. */
static cs_status verify_kernel(const cs_graph *g, int id) {
  return cs_kernel_check(g, id, 0, "verify: ");
}

static cs_status verify_values(const cs_graph *g, const char *is_input) {
  for (int i = 0; i < g->n_values; i++) {
    const cs_value *v = cs_graph_value(g, i);
    if (v->rank < 0 || v->rank > CS_MAX_RANK)
      return VERR("value %%%d '%s': rank %d out of [0, %d]", i, vname(g, i),
                  v->rank, CS_MAX_RANK);
    for (int d = 0; d < v->rank; d++)
      if (v->shape[d] < 0)
        return VERR("value %%%d '%s': dim %d is negative (%lld)", i,
                    vname(g, i), d, (long long)v->shape[d]);
    if (v->producer < -1 || v->producer >= g->n_nodes)
      return VERR("value %%%d '%s': producer %d is not a node id", i,
                  vname(g, i), v->producer);
    if (v->producer >= 0) {
      const cs_node *p = &g->nodes[v->producer];
      int listed = 0;
      for (int j = 0; j < p->n_outputs; j++) listed |= p->outputs[j] == i;
      if (!listed)
        return VERR("value %%%d '%s': producer is node %d '%s' (%s), which "
                    "does not list it as an output",
                    i, vname(g, i), v->producer, p->name, cs_op_name(p->op));
      if (v->data)
        return VERR("value %%%d '%s': a constant cannot have a producer "
                    "(node %d '%s')",
                    i, vname(g, i), v->producer, p->name);
      if (is_input[i])
        return VERR("value %%%d '%s': a graph input cannot have a producer "
                    "(node %d '%s')",
                    i, vname(g, i), v->producer, p->name);
    }
  }
  return CS_OK;
}

static cs_status verify_node(const cs_graph *g, int id, const char *is_input) {
  const cs_node *n = &g->nodes[id];
  if ((int)n->op < 0 || n->op >= CS_OP_COUNT_)
    return VERR("node %d '%s': op %d is not an op", id, n->name, (int)n->op);
  const char *op = cs_op_name(n->op);
  for (int j = 0; j < n->n_outputs; j++) {
    int v = n->outputs[j];
    if (v < 0 || v >= g->n_values)
      return VERR("node %d '%s' (%s): output %d is value id %d, out of range "
                  "[0, %d)",
                  id, n->name, op, j, v, g->n_values);
    const cs_value *val = cs_graph_value(g, v);
    if (val->producer != id) {
      int p = val->producer;
      if (p >= 0 && !g->nodes[p].dead)
        return VERR("node %d '%s' (%s): output %%%d '%s' is also produced by "
                    "node %d '%s'",
                    id, n->name, op, v, val->name, p, g->nodes[p].name);
      return VERR("node %d '%s' (%s): output %%%d '%s' has producer %d, not "
                  "this node",
                  id, n->name, op, v, val->name, p);
    }
    if (val->dtype == CS_DTYPE_UNDEF)
      return VERR("node %d '%s' (%s): output %%%d '%s' has no dtype", id,
                  n->name, op, v, val->name);
    for (int k = 0; k < j; k++)
      if (n->outputs[k] == v)
        return VERR("node %d '%s' (%s): output %%%d '%s' is listed twice", id,
                    n->name, op, v, val->name);
  }
  for (int j = 0; j < n->n_inputs; j++) {
    int v = n->inputs[j];
    if (v == -1) continue;
    if (v < 0 || v >= g->n_values)
      return VERR("node %d '%s' (%s): input %d is value id %d, out of range "
                  "[0, %d)",
                  id, n->name, op, j, v, g->n_values);
    const cs_value *val = cs_graph_value(g, v);
    if (val->data || is_input[v]) continue;
    int p = val->producer;
    if (p < 0 || g->nodes[p].dead)
      return VERR("node %d '%s' (%s): input %d %%%d '%s' is not defined (not "
                  "a graph input, a constant, or the output of a live node)",
                  id, n->name, op, j, v, val->name);
  }
  if (cs_op_is_kernel(n->op)) return verify_kernel(g, id);
  return CS_OK;
}

/* A node on a cycle: run Kahn to find the nodes that can never be placed
 * (each has an unplaced live predecessor), then walk predecessors n_nodes
 * times from one of them, which must end on the cycle itself. */
static int cycle_node(const cs_graph *g) {
  int nn = g->n_nodes;
  int *indeg = calloc((size_t)nn + 1, sizeof(int));
  int *stack = calloc((size_t)nn + 1, sizeof(int));
  char *placed = calloc((size_t)nn + 1, 1);
  int u = -1;
  if (!indeg || !stack || !placed) goto out;
  for (int i = 0; i < nn; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) {
      int v = n->inputs[j];
      if (v < 0 || v >= g->n_values) continue;
      int p = cs_graph_value(g, v)->producer;
      if (p >= 0 && p < nn && !g->nodes[p].dead) indeg[i]++;
    }
  }
  int top = 0;
  for (int i = 0; i < nn; i++)
    if (!g->nodes[i].dead && indeg[i] == 0) stack[top++] = i;
  while (top > 0) {
    int i = stack[--top];
    placed[i] = 1;
    /* Successors: every live node reading an output of i, once per read. */
    for (int s = 0; s < nn; s++) {
      const cs_node *n = &g->nodes[s];
      if (n->dead) continue;
      for (int j = 0; j < n->n_inputs; j++) {
        int v = n->inputs[j];
        if (v >= 0 && v < g->n_values && cs_graph_value(g, v)->producer == i &&
            --indeg[s] == 0)
          stack[top++] = s;
      }
    }
  }
  for (int i = 0; i < nn && u < 0; i++)
    if (!g->nodes[i].dead && !placed[i]) u = i;
  for (int step = 0; u >= 0 && step < nn; step++) {
    const cs_node *n = &g->nodes[u];
    int next = -1;
    for (int j = 0; j < n->n_inputs && next < 0; j++) {
      int v = n->inputs[j];
      if (v < 0 || v >= g->n_values) continue;
      int p = cs_graph_value(g, v)->producer;
      if (p >= 0 && p < nn && !g->nodes[p].dead && !placed[p]) next = p;
    }
    if (next < 0) break;
    u = next;
  }
out:
  free(indeg);
  free(stack);
  free(placed);
  return u;
}

cs_status cs_graph_verify(const cs_graph *g) {
  char *is_input = calloc((size_t)g->n_values + 1, 1);
  int *order = calloc((size_t)g->n_nodes + 1, sizeof(int));
  if (!is_input || !order) {
    free(is_input);
    free(order);
    return cs_error(CS_ERR_NOMEM, "verify: out of memory");
  }
  cs_status st = CS_OK;
  for (int i = 0; i < g->n_inputs && st == CS_OK; i++) {
    int v = g->inputs[i];
    if (v < 0 || v >= g->n_values)
      st = VERR("graph input %d is value id %d, out of range [0, %d)", i, v,
                g->n_values);
    else if (cs_graph_value(g, v)->data)
      st = VERR("graph input %d '%s' is a constant", i, vname(g, v));
    else
      is_input[v] = 1;
  }
  if (st == CS_OK) st = verify_values(g, is_input);
  for (int i = 0; i < g->n_nodes && st == CS_OK; i++)
    if (!g->nodes[i].dead) st = verify_node(g, i, is_input);
  for (int i = 0; i < g->n_outputs && st == CS_OK; i++) {
    int v = g->outputs[i];
    if (v < 0 || v >= g->n_values) {
      st = VERR("graph output %d is value id %d, out of range [0, %d)", i, v,
                g->n_values);
    } else if (!cs_graph_value(g, v)->data && !is_input[v]) {
      int p = cs_graph_value(g, v)->producer;
      if (p < 0 || g->nodes[p].dead)
        st = VERR("graph output %d %%%d '%s' is not defined (no live node "
                  "produces it)",
                  i, v, vname(g, v));
    }
  }
  int topo = st == CS_OK ? cs_graph_topo_order(g, order) : 0;
  if (topo == -2) st = CS_ERR_NOMEM; /* message recorded */
  if (st == CS_OK && topo < 0) {
    int which = cycle_node(g);
    st = VERR("the graph has a cycle (through node %d '%s' (%s))", which,
              which >= 0 ? g->nodes[which].name : "?",
              which >= 0 ? cs_op_name(g->nodes[which].op) : "?");
  }
  if (st == CS_OK) st = cs_graph_check_uses(g);
  free(is_input);
  free(order);
  return st;
}
