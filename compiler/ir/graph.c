/*
 * graph.c — building and editing the graph: values, constants, nodes,
 * uses. Ids index the growable arrays; they stay valid until
 * cs_graph_compact() renumbers them.
 *
 * Out of memory in the compiler is fatal (message, abort): every
 * allocation here is bounded by the model file's size, which the frontend
 * has already read into memory.
 */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fputs("cstatic: out of memory\n", stderr);
    abort();
  }
  return q;
}

static char *xstrdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = xrealloc(NULL, n);
  memcpy(d, s, n);
  return d;
}

cs_graph *cs_graph_new(const char *name) {
  cs_graph *g = xrealloc(NULL, sizeof *g);
  memset(g, 0, sizeof *g);
  g->name = xstrdup(name ? name : "graph");
  return g;
}

static void free_value(cs_value *v) {
  free(v->name);
  free(v->data);
  if (v->quant) {
    free(v->quant->scale);
    free(v->quant->zero_point);
    free(v->quant);
  }
}

static void free_node(cs_node *n) {
  free(n->name);
  free(n->origin);
  free(n->inputs);
  free(n->outputs);
  for (int i = 0; i < n->n_attrs; i++) {
    free(n->attrs[i].name);
    free(n->attrs[i].ints);
    free(n->attrs[i].floats);
    free(n->attrs[i].s);
  }
  free(n->attrs);
}

void cs_graph_free(cs_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_values; i++) free_value(&g->values[i]);
  for (int i = 0; i < g->n_nodes; i++) free_node(&g->nodes[i]);
  free(g->values);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->name);
  free(g);
}

int cs_graph_add_value(cs_graph *g, const char *name, cs_dtype dtype, int rank,
                       const int64_t *shape) {
  if (g->n_values == g->cap_values) {
    g->cap_values = g->cap_values ? 2 * g->cap_values : 64;
    g->values = xrealloc(g->values, sizeof(cs_value) * (size_t)g->cap_values);
  }
  int id = g->n_values++;
  cs_value *v = &g->values[id];
  memset(v, 0, sizeof *v);
  if (name) {
    v->name = xstrdup(name);
  } else {
    char buf[24];
    snprintf(buf, sizeof buf, "%%%d", id);
    v->name = xstrdup(buf);
  }
  v->dtype = dtype;
  if (rank < 0) rank = 0;
  if (rank > CS_MAX_RANK) rank = CS_MAX_RANK; /* callers check; never overrun */
  v->rank = rank;
  for (int i = 0; i < rank; i++) v->shape[i] = shape ? shape[i] : 1;
  v->producer = -1;
  return id;
}

int cs_graph_add_const(cs_graph *g, const char *name, cs_dtype dtype, int rank,
                       const int64_t *shape, const void *data) {
  int id = cs_graph_add_value(g, name, dtype, rank, shape);
  cs_value *v = &g->values[id];
  size_t n = cs_value_nbytes(v);
  /* Never NULL, even when empty: data != NULL is what makes a constant. */
  v->data = xrealloc(NULL, n);
  if (n && data) memcpy(v->data, data, n);
  else if (n) memset(v->data, 0, n);
  return id;
}

int cs_graph_add_node(cs_graph *g, cs_op op, const char *name,
                      const char *origin, int n_inputs, const int *inputs,
                      int n_outputs, const int *outputs) {
  if (g->n_nodes == g->cap_nodes) {
    g->cap_nodes = g->cap_nodes ? 2 * g->cap_nodes : 64;
    g->nodes = xrealloc(g->nodes, sizeof(cs_node) * (size_t)g->cap_nodes);
  }
  int id = g->n_nodes++;
  cs_node *n = &g->nodes[id];
  memset(n, 0, sizeof *n);
  n->op = op;
  if (name) {
    n->name = xstrdup(name);
  } else {
    char buf[64];
    snprintf(buf, sizeof buf, "%s_%d", cs_op_name(op), id);
    n->name = xstrdup(buf);
  }
  n->origin = xstrdup(origin ? origin : n->name);
  n->n_inputs = n_inputs;
  n->inputs = xrealloc(NULL, sizeof(int) * (size_t)n_inputs);
  if (n_inputs) memcpy(n->inputs, inputs, sizeof(int) * (size_t)n_inputs);
  n->n_outputs = n_outputs;
  n->outputs = xrealloc(NULL, sizeof(int) * (size_t)n_outputs);
  if (n_outputs) memcpy(n->outputs, outputs, sizeof(int) * (size_t)n_outputs);
  for (int i = 0; i < n_outputs; i++)
    if (outputs[i] >= 0 && outputs[i] < g->n_values)
      g->values[outputs[i]].producer = id;
  return id;
}

void cs_graph_remove_node(cs_graph *g, int node_id) {
  if (node_id < 0 || node_id >= g->n_nodes) return;
  cs_node *n = &g->nodes[node_id];
  n->dead = 1;
  /* A value re-assigned to a newer node keeps that producer. */
  for (int i = 0; i < n->n_outputs; i++) {
    int v = n->outputs[i];
    if (v >= 0 && v < g->n_values && g->values[v].producer == node_id)
      g->values[v].producer = -1;
  }
}

void cs_graph_replace_uses(cs_graph *g, int from, int to) {
  for (int i = 0; i < g->n_nodes; i++) {
    cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] == from) n->inputs[j] = to;
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == from) g->outputs[i] = to;
}

int cs_graph_consumers(const cs_graph *g, int v, int *out, int max) {
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) {
      if (n->inputs[j] == v) {
        if (out && count < max) out[count] = i;
        count++;
        break; /* a node reading v twice is one consumer */
      }
    }
  }
  return count;
}

int cs_graph_is_output(const cs_graph *g, int v) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return 1;
  return 0;
}
