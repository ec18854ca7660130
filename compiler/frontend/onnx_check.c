/*
 * onnx_check.c — what is decided before any IR is built: which nodes are
 * supported, and whether the graph's names form a valid dataflow graph
 * (each tensor defined once, every input defined, no cycle). A model file
 * may hold anything, so each rule names the node or tensor that broke it.
 */
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>

int cs_onnx_is_default_domain(const char *domain) {
  return !domain || !*domain || !strcmp(domain, "ai.onnx");
}

int cs_onnx_node_op(const Onnx__NodeProto *n) {
  if (!cs_onnx_is_default_domain(n->domain) || !n->op_type) return -1;
  if (!strcmp(n->op_type, "Constant")) return CS_OP_COUNT_;
  return cs_op_from_onnx(n->op_type);
}

const char *cs_onnx_node_label(const Onnx__NodeProto *n, size_t i) {
  /* per thread, as the error buffer (ir/error.c): labels go into messages */
  static _Thread_local char bufs[4][64];
  static _Thread_local int next;
  if (n && n->name && *n->name) return n->name;
  char *b = bufs[next++ & 3];
  snprintf(b, sizeof bufs[0], "#%zu", i);
  return b;
}

/* Which nodes would run (not fold) under constant folding: a forward walk
 * in topological order over tensor names marked "runtime". */
static char *runtime_nodes(const Onnx__GraphProto *g);

static void list_one(const Onnx__NodeProto *n, size_t i, int folding, int *count,
                     cs_onnx_str *out) {
  const char *op = n->op_type && *n->op_type ? n->op_type : "<no op_type>";
  if ((*count)++) cs_onnx_str_printf(out, ", ");
  int known = cs_onnx_node_op(n);
  if (folding && known >= 0 && known < CS_OP_COUNT_ && cs_onnx_op_const_only(known))
    cs_onnx_str_printf(out, "%s (node '%s': computed from a graph input, and %s "
                            "has no runtime kernel; it folds only in constant "
                            "subgraphs)",
                       op, cs_onnx_node_label(n, i), op);
  else if (cs_onnx_is_default_domain(n->domain))
    cs_onnx_str_printf(out, "%s (node '%s')", op, cs_onnx_node_label(n, i));
  else
    cs_onnx_str_printf(out, "%s [domain %s] (node '%s')", op, n->domain,
                       cs_onnx_node_label(n, i));
}

int cs_onnx_list_unsupported(const Onnx__GraphProto *g, int folding,
                             cs_onnx_str *out) {
  int count = 0;
  /* Which nodes run (an ordering of the whole graph) matters only for the
   * ops that fold but have no kernel; most graphs have none. */
  int any_const_only = 0;
  for (size_t i = 0; i < g->n_node && folding && !any_const_only; i++) {
    int op = cs_onnx_node_op(g->node[i]);
    any_const_only = op >= 0 && op < CS_OP_COUNT_ && cs_onnx_op_const_only(op);
  }
  char *runs = any_const_only ? runtime_nodes(g) : NULL;
  /* Out of memory for the marks: list nothing here; the build refuses,
   * node by node, what did not fold (or runs out of memory itself). */
  if (any_const_only && !runs) return 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    int op = cs_onnx_node_op(n);
    if (op >= 0 && !(op < CS_OP_COUNT_ && cs_onnx_op_const_only(op) &&
                     (!runs || runs[i])))
      continue;
    list_one(n, i, folding, &count, out);
  }
  free(runs);
  return count;
}

/* Producer of each tensor name: a node index, or FROM_GRAPH for graph
 * inputs and initializers (cs_onnx_map_get gives -1 for an unknown name). */
#define FROM_GRAPH -2

static cs_status define_names(const Onnx__GraphProto *g, cs_onnx_map *prod) {
  for (size_t i = 0; i < g->n_input; i++) {
    const char *name = g->input[i]->name;
    if (!name || !*name)
      return cs_error(CS_ERR_INVALID, "graph input #%zu has no name", i);
    if (cs_onnx_map_get(prod, name) != -1)
      return cs_error(CS_ERR_INVALID, "graph input '%s' is listed twice", name);
    cs_status st = cs_onnx_map_put(prod, name, FROM_GRAPH);
    if (st != CS_OK) return st;
  }
  cs_onnx_map inits = {0};
  cs_status st = cs_onnx_map_init(&inits, g->n_initializer);
  for (size_t i = 0; i < g->n_initializer && st == CS_OK; i++) {
    const char *name = g->initializer[i]->name;
    if (!name || !*name)
      st = cs_error(CS_ERR_INVALID, "initializer #%zu has no name", i);
    else if (cs_onnx_map_get(&inits, name) >= 0)
      st = cs_error(CS_ERR_INVALID, "initializer '%s' is defined twice", name);
    else if ((st = cs_onnx_map_put(&inits, name, (int)i)) == CS_OK)
      st = cs_onnx_map_put(prod, name, FROM_GRAPH);
  }
  cs_onnx_map_free(&inits);
  if (st != CS_OK) return st;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t j = 0; j < n->n_output; j++) {
      const char *name = n->output[j];
      if (!name || !*name) continue; /* an unused optional output */
      int p = cs_onnx_map_get(prod, name);
      if (p == FROM_GRAPH)
        return cs_error(CS_ERR_INVALID,
                        "node '%s' (%s): output '%s' is also a graph input "
                        "or initializer",
                        cs_onnx_node_label(n, i), cs_onnx_s(n->op_type), name);
      if (p >= 0)
        return cs_error(CS_ERR_INVALID,
                        "tensor '%s' is produced by two nodes: '%s' (%s) and "
                        "'%s' (%s)",
                        name, cs_onnx_node_label(g->node[p], (size_t)p),
                        cs_onnx_s(g->node[p]->op_type), cs_onnx_node_label(n, i),
                        cs_onnx_s(n->op_type));
      cs_status st = cs_onnx_map_put(prod, name, (int)i);
      if (st != CS_OK) return st;
    }
  }
  return CS_OK;
}

/* Node i's predecessor through input j, or -1 if it comes from the graph
 * or is absent. */
static int input_producer(const cs_onnx_map *prod, const Onnx__NodeProto *n,
                          size_t j) {
  const char *name = n->input[j];
  if (!name || !*name) return -1;
  int p = cs_onnx_map_get(prod, name);
  return p >= 0 ? p : -1;
}

static cs_status check_defined(const Onnx__GraphProto *g,
                               const cs_onnx_map *prod) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t j = 0; j < n->n_input; j++) {
      const char *name = n->input[j];
      if (!name || !*name) continue; /* an absent optional input */
      if (cs_onnx_map_get(prod, name) == -1)
        return cs_error(CS_ERR_INVALID,
                        "node '%s' (%s): input '%s' is not produced by any "
                        "node, initializer or graph input",
                        cs_onnx_node_label(n, i), cs_onnx_s(n->op_type), name);
    }
  }
  cs_onnx_map seen = {0};
  cs_status st = cs_onnx_map_init(&seen, g->n_output);
  for (size_t i = 0; i < g->n_output && st == CS_OK; i++) {
    const char *name = g->output[i]->name;
    if (!name || !*name)
      st = cs_error(CS_ERR_INVALID, "graph output #%zu has no name", i);
    else if (cs_onnx_map_get(prod, name) == -1)
      st = cs_error(CS_ERR_INVALID,
                    "graph output '%s' is not produced by any node, "
                    "initializer or graph input",
                    name);
    else if (cs_onnx_map_get(&seen, name) >= 0)
      st = cs_error(CS_ERR_INVALID, "graph output '%s' is listed twice", name);
    else
      st = cs_onnx_map_put(&seen, name, (int)i);
  }
  cs_onnx_map_free(&seen);
  if (st == CS_OK && g->n_output == 0)
    st = cs_error(CS_ERR_INVALID, "the graph has no outputs");
  return st;
}

static void *zalloc(size_t n, size_t size) { return calloc(n ? n : 1, size); }

/* Kahn's algorithm; among ready nodes the lowest index first, so a graph
 * that is already sorted (the ONNX rule) keeps its order. */
cs_status cs_onnx_order_nodes(const Onnx__GraphProto *g, size_t *order) {
  cs_onnx_map prod = {0};
  cs_status st = cs_onnx_map_init(&prod, g->n_input + g->n_initializer + 2 * g->n_node);
  if (st == CS_OK) st = define_names(g, &prod);
  if (st == CS_OK) st = check_defined(g, &prod);
  if (st != CS_OK) {
    cs_onnx_map_free(&prod);
    return st;
  }
  size_t nn = g->n_node, n_edges = 0;
  size_t *indeg = zalloc(nn, sizeof(size_t));
  size_t *start = zalloc(nn + 1, sizeof(size_t));
  size_t *succ = NULL, *fill = NULL, *heap = NULL;
  char *placed = NULL;
  if (!indeg || !start) goto nomem;
  for (size_t i = 0; i < nn; i++)
    for (size_t j = 0; j < g->node[i]->n_input; j++) {
      int p = input_producer(&prod, g->node[i], j);
      if (p < 0) continue;
      start[p + 1]++;
      indeg[i]++;
      n_edges++;
    }
  for (size_t i = 0; i < nn; i++) start[i + 1] += start[i];
  succ = zalloc(n_edges, sizeof(size_t));
  fill = zalloc(nn, sizeof(size_t));
  heap = zalloc(nn, sizeof(size_t));
  placed = zalloc(nn, 1);
  if (!succ || !fill || !heap || !placed) goto nomem;
  for (size_t i = 0; i < nn; i++)
    for (size_t j = 0; j < g->node[i]->n_input; j++) {
      int p = input_producer(&prod, g->node[i], j);
      if (p >= 0) succ[start[p] + fill[p]++] = i;
    }
  /* A min-heap of ready node indices. */
  size_t hn = 0, count = 0;
#define PUSH(x)                                                  \
  do {                                                           \
    size_t k_ = hn++;                                            \
    heap[k_] = (x);                                              \
    while (k_ > 0 && heap[(k_ - 1) / 2] > heap[k_]) {            \
      size_t t_ = heap[k_];                                      \
      heap[k_] = heap[(k_ - 1) / 2];                             \
      heap[(k_ - 1) / 2] = t_;                                   \
      k_ = (k_ - 1) / 2;                                         \
    }                                                            \
  } while (0)
  for (size_t i = 0; i < nn; i++)
    if (indeg[i] == 0) PUSH(i);
  while (hn > 0) {
    size_t i = heap[0];
    heap[0] = heap[--hn];
    for (size_t k = 0;;) {
      size_t l = 2 * k + 1, r = l + 1, m = k;
      if (l < hn && heap[l] < heap[m]) m = l;
      if (r < hn && heap[r] < heap[m]) m = r;
      if (m == k) break;
      size_t t = heap[m];
      heap[m] = heap[k];
      heap[k] = t;
      k = m;
    }
    order[count++] = i;
    placed[i] = 1;
    for (size_t e = start[i]; e < start[i + 1]; e++)
      if (--indeg[succ[e]] == 0) PUSH(succ[e]);
  }
#undef PUSH
  if (count != nn) {
    /* Every unplaced node has an unplaced predecessor; walking back nn
     * steps from one of them ends on the cycle. */
    size_t u = 0;
    while (placed[u]) u++;
    for (size_t step = 0; step < nn; step++) {
      const Onnx__NodeProto *n = g->node[u];
      int next = -1;
      for (size_t j = 0; j < n->n_input && next < 0; j++) {
        int p = input_producer(&prod, n, j);
        if (p >= 0 && !placed[p]) next = p;
      }
      if (next < 0) break;
      u = (size_t)next;
    }
    st = cs_error(CS_ERR_INVALID, "the graph has a cycle through node '%s' (%s)",
                  cs_onnx_node_label(g->node[u], u),
                  cs_onnx_s(g->node[u]->op_type));
  }
  goto done;
nomem:
  st = cs_error(CS_ERR_NOMEM, "out of memory (ordering %zu nodes)", nn);
done:
  free(indeg);
  free(start);
  free(succ);
  free(fill);
  free(heap);
  free(placed);
  cs_onnx_map_free(&prod);
  return st;
}

/* A node runs when an input is a graph input or the output of a node that
 * runs; Shape and Size read only the (static) shape, and the QDQ nodes and
 * unknown ops always count as running (neither is folded). A graph with a
 * cycle or an undefined name gets no marks here: building it reports that. */
static char *runtime_nodes(const Onnx__GraphProto *g) {
  char *runs = calloc(g->n_node ? g->n_node : 1, 1);
  size_t *order = calloc(g->n_node + 1, sizeof(size_t));
  cs_onnx_map live = {0}; /* tensor name → 1 when computed at run time */
  cs_onnx_map inits = {0};
  cs_status st = runs && order ? CS_OK : CS_ERR_NOMEM;
  if (st == CS_OK) st = cs_onnx_map_init(&live, g->n_input + 2 * g->n_node);
  if (st == CS_OK) st = cs_onnx_map_init(&inits, g->n_initializer);
  for (size_t i = 0; i < g->n_initializer && st == CS_OK; i++)
    if (g->initializer[i]->name) st = cs_onnx_map_put(&inits, g->initializer[i]->name, 1);
  for (size_t i = 0; i < g->n_input && st == CS_OK; i++) {
    const char *name = g->input[i]->name;
    if (name && cs_onnx_map_get(&inits, name) < 0) st = cs_onnx_map_put(&live, name, 1);
  }
  if (st != CS_OK) {
    cs_error_clear();
    cs_onnx_map_free(&live);
    cs_onnx_map_free(&inits);
    free(order);
    free(runs);
    return NULL;
  }
  if (cs_onnx_order_nodes(g, order) == CS_OK) {
    for (size_t k = 0; k < g->n_node; k++) {
      size_t i = order[k];
      const Onnx__NodeProto *n = g->node[i];
      int op = cs_onnx_node_op(n);
      int r = op < 0 || op == CS_OP_QUANTIZE_LINEAR ||
              op == CS_OP_DEQUANTIZE_LINEAR;
      if (op != CS_OP_SHAPE && op != CS_OP_SIZE)
        for (size_t j = 0; j < n->n_input && !r; j++)
          r = n->input[j] && *n->input[j] && cs_onnx_map_get(&live, n->input[j]) > 0;
      runs[i] = (char)r;
      for (size_t j = 0; r && j < n->n_output; j++)
        if (n->output[j] && *n->output[j] && cs_onnx_map_put(&live, n->output[j], 1) != CS_OK) {
          cs_error_clear(); /* out of memory: stop marking; see the caller */
          k = g->n_node;
          break;
        }
    }
  } else {
    cs_error_clear();
  }
  cs_onnx_map_free(&live);
  cs_onnx_map_free(&inits);
  free(order);
  return runs;
}
