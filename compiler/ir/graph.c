/*
 * graph.c — building and editing the graph: values, constants, nodes,
 * uses. Ids index the value blocks and the node array; they stay valid
 * until cs_graph_compact() renumbers them.
 *
 * Out of memory is an error like any other (ir.h): a function that cannot
 * allocate records CS_ERR_NOMEM and leaves the graph as it was.
 *
 * The reader index: for each value, the nodes that may read it (a superset:
 * removed nodes and rewired inputs stay listed until a query drops them).
 * It keeps cs_graph_consumers and cs_graph_replace_uses proportional to the
 * value's readers instead of the graph's size — passes ask for every node,
 * and a scan per question made compiling a long chain quadratic. Every
 * write of a node input goes through this file so that a new reader is
 * always listed; cs_graph_check_uses (run by the verifier) proves it.
 */
#include "graph_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cs_use_list {
  int *ids;
  int n, cap;
} cs_use_list;

static void *nomem(const char *what) {
  cs_error(CS_ERR_NOMEM, "out of memory (%s)", what);
  return NULL;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Blocks the index (and the reader index, per value) has room for: a power
 * of two, so both grow by doubling while the blocks themselves stay put. */
static int index_blocks(int cap_values) {
  int nb = cap_values / CS_VALUE_BLOCK, cap = 1;
  if (nb == 0) return 0;
  while (cap < nb) cap *= 2;
  return cap;
}

/* ---- reader index ---------------------------------------------------- */

static void uses_free(cs_graph *g) {
  if (g->uses)
    for (int i = 0; i < g->cap_values; i++) free(g->uses[i].ids);
  free(g->uses);
  g->uses = NULL;
  g->uses_ok = 0;
}

/* Any failure turns the index off (uses_ok = 0): queries then scan the
 * graph, which is slower but never wrong. */
static void uses_add(cs_graph *g, int v, int node) {
  if (!g->uses_ok || v < 0 || v >= g->n_values) return;
  cs_use_list *u = &g->uses[v];
  if (u->n && u->ids[u->n - 1] == node) return;
  if (u->n == u->cap) {
    int cap = u->cap ? 2 * u->cap : 2;
    int *ids = realloc(u->ids, sizeof(int) * (size_t)cap);
    if (!ids) {
      uses_free(g);
      return;
    }
    u->ids = ids;
    u->cap = cap;
  }
  u->ids[u->n++] = node;
}

/* (Re)build from the nodes; called when the graph is created and after
 * cs_graph_compact renumbers everything. */
static void uses_build(cs_graph *g) {
  uses_free(g);
  size_t room = (size_t)index_blocks(g->cap_values) * CS_VALUE_BLOCK;
  g->uses = calloc(room ? room : 1, sizeof *g->uses);
  if (!g->uses) return;
  g->uses_ok = 1;
  for (int i = 0; i < g->n_nodes && g->uses_ok; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) uses_add(g, n->inputs[j], i);
  }
}

static int node_reads(const cs_node *n, int v) {
  if (n->dead) return 0;
  for (int j = 0; j < n->n_inputs; j++)
    if (n->inputs[j] == v) return 1;
  return 0;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Drop the entries of v's list that no longer read it, sort, unique. The
 * list is a cache: pruning it does not change the graph. */
static cs_use_list *uses_of(const cs_graph *g, int v) {
  if (!g->uses_ok || v < 0 || v >= g->n_values) return NULL;
  cs_use_list *u = &g->uses[v];
  int k = 0;
  for (int i = 0; i < u->n; i++)
    if (node_reads(&g->nodes[u->ids[i]], v)) u->ids[k++] = u->ids[i];
  u->n = k;
  if (u->n > 1) qsort(u->ids, (size_t)u->n, sizeof(int), cmp_int);
  k = 0;
  for (int i = 0; i < u->n; i++)
    if (k == 0 || u->ids[k - 1] != u->ids[i]) u->ids[k++] = u->ids[i];
  u->n = k;
  return u;
}

/* ---- graph ------------------------------------------------------------ */

cs_graph *cs_graph_new(const char *name) {
  cs_graph *g = calloc(1, sizeof *g);
  if (!g) return nomem("graph");
  g->name = dup_str(name ? name : "graph");
  if (!g->name) {
    free(g);
    return nomem("graph");
  }
  uses_build(g);
  return g;
}

static void free_value(cs_graph *g, cs_value *v) {
  if (v->data) g->const_bytes -= cs_value_nbytes(v);
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
  cs_node_clear_attrs(n);
}

void cs_graph_free(cs_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_values; i++) free_value(g, cs_graph_value(g, i));
  for (int i = 0; i < g->n_nodes; i++) free_node(&g->nodes[i]);
  uses_free(g);
  for (int b = 0; b < g->cap_values / CS_VALUE_BLOCK; b++) free(g->value_blocks[b]);
  free(g->value_blocks);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  for (int i = 0; i < g->n_source_nodes; i++) {
    free(g->source_nodes[i].name);
    free(g->source_nodes[i].op_type);
    free(g->source_nodes[i].module);
  }
  free(g->source_nodes);
  cs_offload_report_free(&g->offload);
  free(g->name);
  free(g);
}

/* Room for one more value (and its reader list): one more block when the
 * last is full. The blocks already there stay where they are — that is
 * what keeps every cs_value * valid — and only the index of blocks grows. */
static int reserve_value(cs_graph *g) {
  if (g->n_values < g->cap_values) return 1;
  if (g->cap_values > INT_MAX / 2 - CS_VALUE_BLOCK) return 0;
  int nb = g->cap_values / CS_VALUE_BLOCK;
  if (nb == index_blocks(g->cap_values)) { /* the index is full: double it */
    int room = nb ? 2 * nb : 1;
    cs_value **idx = realloc(g->value_blocks, sizeof *idx * (size_t)room);
    if (!idx) return 0;
    g->value_blocks = idx;
    if (g->uses_ok) {
      size_t old = (size_t)nb * CS_VALUE_BLOCK, cap = (size_t)room * CS_VALUE_BLOCK;
      cs_use_list *u = realloc(g->uses, sizeof *u * cap);
      if (!u) {
        uses_free(g);
      } else {
        memset(u + old, 0, sizeof *u * (cap - old));
        g->uses = u;
      }
    }
  }
  cs_value *block = malloc(sizeof(cs_value) * CS_VALUE_BLOCK);
  if (!block) return 0;
  g->value_blocks[nb] = block;
  g->cap_values += CS_VALUE_BLOCK;
  return 1;
}

cs_status cs_graph_add_source_node(cs_graph *g, const char *name, const char *op_type, const char *module,
                                   size_t module_len) {
  if (g->n_source_nodes == g->cap_source_nodes) {
    int cap = g->cap_source_nodes ? 2 * g->cap_source_nodes : 64;
    cs_source_node *sn = realloc(g->source_nodes, sizeof *sn * (size_t)cap);
    if (!sn) return cs_error(CS_ERR_NOMEM, "out of memory (node names)");
    g->source_nodes = sn;
    g->cap_source_nodes = cap;
  }
  cs_source_node s = {dup_str(name ? name : ""), dup_str(op_type ? op_type : ""), malloc(module_len + 1)};
  if (!s.name || !s.op_type || !s.module) {
    free(s.name);
    free(s.op_type);
    free(s.module);
    return cs_error(CS_ERR_NOMEM, "out of memory (node names)");
  }
  if (module_len) memcpy(s.module, module, module_len);
  s.module[module_len] = '\0';
  g->source_nodes[g->n_source_nodes++] = s;
  return CS_OK;
}

int cs_graph_add_value(cs_graph *g, const char *name, cs_dtype dtype, int rank,
                       const int64_t *shape) {
  char buf[24];
  if (!name) {
    snprintf(buf, sizeof buf, "%%%d", g->n_values);
    name = buf;
  }
  char *copy = dup_str(name);
  if (!copy || !reserve_value(g)) {
    free(copy);
    cs_error(CS_ERR_NOMEM, "out of memory adding tensor '%s'", name);
    return -1;
  }
  int id = g->n_values++;
  cs_value *v = cs_graph_value(g, id);
  memset(v, 0, sizeof *v);
  v->name = copy;
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
  cs_value probe = {.name = (char *)(name ? name : "constant"), .dtype = dtype,
                    .rank = rank < 0 ? 0 : rank > CS_MAX_RANK ? CS_MAX_RANK : rank};
  for (int i = 0; i < probe.rank; i++) probe.shape[i] = shape ? shape[i] : 1;
  if (cs_graph_check_value(g, &probe, 1) != CS_OK) return -1;
  size_t n = cs_value_nbytes(&probe);
  /* Never NULL, even when empty: data != NULL is what makes a constant. */
  void *payload = data ? malloc(n ? n : 1) : calloc(1, n ? n : 1);
  if (!payload) {
    cs_error(CS_ERR_NOMEM, "out of memory for the %zu bytes of constant '%s'", n, probe.name);
    return -1;
  }
  if (n && data) memcpy(payload, data, n);
  int id = cs_graph_add_value(g, name, dtype, rank, shape);
  if (id < 0) {
    free(payload);
    return -1;
  }
  cs_graph_value(g, id)->data = payload;
  g->const_bytes += n;
  return id;
}

int cs_add_const_named(cs_graph *g, const char *base, const char *suffix,
                       cs_dtype dtype, int rank, const int64_t *shape,
                       const void *data) {
  char name[512];
  snprintf(name, sizeof name, "%s.%s", base ? base : "const", suffix);
  return cs_graph_add_const(g, name, dtype, rank, shape, data);
}

void cs_graph_set_const_data(cs_graph *g, int id, void *data) {
  cs_value *v = cs_graph_value(g, id);
  if (v->data) g->const_bytes -= cs_value_nbytes(v);
  free(v->data);
  v->data = data;
  if (data) g->const_bytes += cs_value_nbytes(v);
}

int cs_graph_add_node(cs_graph *g, cs_op op, const char *name,
                      const char *origin, int n_inputs, const int *inputs,
                      int n_outputs, const int *outputs) {
  char buf[64];
  if (!name) {
    snprintf(buf, sizeof buf, "%s_%d", cs_op_name(op), g->n_nodes);
    name = buf;
  }
  cs_node n = {.op = op, .n_inputs = n_inputs, .n_outputs = n_outputs};
  n.name = dup_str(name);
  n.origin = dup_str(origin ? origin : name);
  n.inputs = malloc(sizeof(int) * (size_t)(n_inputs > 0 ? n_inputs : 1));
  n.outputs = malloc(sizeof(int) * (size_t)(n_outputs > 0 ? n_outputs : 1));
  int ok = n.name && n.origin && n.inputs && n.outputs;
  if (ok && g->n_nodes == g->cap_nodes) {
    int cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
    cs_node *nodes = realloc(g->nodes, sizeof(cs_node) * (size_t)cap);
    if (nodes) {
      g->nodes = nodes;
      g->cap_nodes = cap;
    } else {
      ok = 0;
    }
  }
  if (!ok) {
    free_node(&n);
    cs_error(CS_ERR_NOMEM, "out of memory adding node '%s'", name);
    return -1;
  }
  if (n_inputs > 0) memcpy(n.inputs, inputs, sizeof(int) * (size_t)n_inputs);
  if (n_outputs > 0) memcpy(n.outputs, outputs, sizeof(int) * (size_t)n_outputs);
  int id = g->n_nodes++;
  g->nodes[id] = n;
  for (int i = 0; i < n_inputs; i++) uses_add(g, inputs[i], id);
  for (int i = 0; i < n_outputs; i++)
    if (outputs[i] >= 0 && outputs[i] < g->n_values)
      cs_graph_value(g, outputs[i])->producer = id;
  return id;
}

void cs_graph_remove_node(cs_graph *g, int node_id) {
  if (node_id < 0 || node_id >= g->n_nodes) return;
  cs_node *n = &g->nodes[node_id];
  n->dead = 1;
  /* A value re-assigned to a newer node keeps that producer. */
  for (int i = 0; i < n->n_outputs; i++) {
    int v = n->outputs[i];
    if (v >= 0 && v < g->n_values && cs_graph_value(g, v)->producer == node_id)
      cs_graph_value(g, v)->producer = -1;
  }
}

void cs_node_set_input(cs_graph *g, int node_id, int j, int v) {
  g->nodes[node_id].inputs[j] = v;
  uses_add(g, v, node_id);
}

cs_status cs_node_set_inputs(cs_graph *g, int node_id, int n_inputs, const int *inputs) {
  int *in = malloc(sizeof(int) * (size_t)(n_inputs > 0 ? n_inputs : 1));
  if (!in) return cs_error(CS_ERR_NOMEM, "out of memory rewiring node '%s'", g->nodes[node_id].name);
  if (n_inputs > 0) memcpy(in, inputs, sizeof(int) * (size_t)n_inputs);
  cs_node *n = &g->nodes[node_id];
  free(n->inputs);
  n->inputs = in;
  n->n_inputs = n_inputs;
  for (int i = 0; i < n_inputs; i++) uses_add(g, in[i], node_id);
  return CS_OK;
}

void cs_graph_replace_uses(cs_graph *g, int from, int to) {
  cs_use_list *u = uses_of(g, from);
  if (u) {
    /* The readers of `from` (copied: adding to `to`'s list may be this
     * list when from == to). */
    for (int k = 0; k < u->n; k++) {
      int id = u->ids[k];
      cs_node *n = &g->nodes[id];
      for (int j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] == from) n->inputs[j] = to;
      if (from != to) uses_add(g, to, id);
      u = g->uses_ok ? &g->uses[from] : NULL;
      if (!u) break;
    }
    if (u && from != to) u->n = 0;
  }
  if (!g->uses_ok) { /* no index (or it just failed): scan every node */
    for (int i = 0; i < g->n_nodes; i++) {
      cs_node *n = &g->nodes[i];
      if (n->dead) continue;
      for (int j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] == from) n->inputs[j] = to;
    }
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == from) g->outputs[i] = to;
}

int cs_graph_consumers(const cs_graph *g, int v, int *out, int max) {
  int count = 0;
  const cs_use_list *u = uses_of(g, v);
  if (u) {
    for (int k = 0; k < u->n; k++) {
      if (out && count < max) out[count] = u->ids[k];
      count++;
    }
    return count;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    if (node_reads(&g->nodes[i], v)) { /* a node reading v twice is one consumer */
      if (out && count < max) out[count] = i;
      count++;
    }
  }
  return count;
}

cs_status cs_graph_check_uses(const cs_graph *g) {
  if (!g->uses_ok) return CS_OK; /* no index: every query scans */
  /* The true readers of each value (CSR: value → nodes), then for each
   * value: mark its listed readers, and every true reader must be marked. */
  size_t n_edges = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead) n_edges += (size_t)g->nodes[i].n_inputs;
  int *start = calloc((size_t)g->n_values + 2, sizeof(int));
  int *fill = malloc(sizeof(int) * ((size_t)g->n_values + 1));
  int *readers = malloc(sizeof(int) * (n_edges ? n_edges : 1));
  int *mark = calloc((size_t)g->n_nodes + 1, sizeof(int));
  cs_status st = CS_OK;
  if (start && fill && readers && mark) { /* else skip: the check is not the compile */
    for (int i = 0; i < g->n_nodes; i++) {
      const cs_node *n = &g->nodes[i];
      if (n->dead) continue;
      for (int j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] >= 0 && n->inputs[j] < g->n_values) start[n->inputs[j] + 1]++;
    }
    for (int v = 0; v < g->n_values; v++) {
      start[v + 1] += start[v];
      fill[v] = start[v];
    }
    for (int i = 0; i < g->n_nodes; i++) {
      const cs_node *n = &g->nodes[i];
      if (n->dead) continue;
      for (int j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] >= 0 && n->inputs[j] < g->n_values) readers[fill[n->inputs[j]]++] = i;
    }
    for (int v = 0; v < g->n_values && st == CS_OK; v++) {
      const cs_use_list *u = &g->uses[v];
      for (int k = 0; k < u->n; k++) mark[u->ids[k]] = v + 1;
      for (int e = start[v]; e < start[v + 1] && st == CS_OK; e++)
        if (mark[readers[e]] != v + 1)
          st = cs_error(CS_ERR_INTERNAL,
                        "node '%s' reads tensor '%s' but the reader index does not list it (an "
                        "input written without cs_node_set_input)",
                        g->nodes[readers[e]].name, cs_graph_value(g, v)->name);
    }
  }
  free(start);
  free(fill);
  free(readers);
  free(mark);
  return st;
}

int cs_graph_is_output(const cs_graph *g, int v) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return 1;
  return 0;
}

int cs_graph_is_model_output(const cs_graph *g, int v) {
  for (int i = 0; i < g->n_outputs - g->n_tap_outputs; i++)
    if (g->outputs[i] == v) return 1;
  return 0;
}

void cs_graph_rebuild_uses_(cs_graph *g) { uses_build(g); }

void cs_graph_drop_value_(cs_graph *g, cs_value *v) { free_value(g, v); }

void cs_graph_drop_node_(cs_node *n) { free_node(n); }

/* ---- memory limit ----------------------------------------------------- */

size_t cs_graph_mem_limit(const cs_graph *g) {
  return g && g->mem_limit ? g->mem_limit : CS_MEM_LIMIT_DEFAULT;
}

const char *cs_bytes_text(uint64_t n, char *buf, size_t size) {
  if (n < 1024) snprintf(buf, size, "%llu bytes", (unsigned long long)n);
  else if (n < ((uint64_t)1 << 20)) snprintf(buf, size, "%.1f KiB", (double)n / 1024.0);
  else if (n < ((uint64_t)1 << 30)) snprintf(buf, size, "%.1f MiB", (double)n / (1024.0 * 1024.0));
  else snprintf(buf, size, "%.1f GiB", (double)n / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

/* desc: " (i64[268435456])", printed after the tensor's name. */
static cs_status check_bytes(const cs_graph *g, const char *what, const char *desc, size_t nbytes,
                             int is_const) {
  size_t limit = cs_graph_mem_limit(g);
  char a[32], b[32], c[32];
  if (nbytes > limit)
    return cs_error(CS_ERR_NOMEM,
                    "tensor '%s'%s needs %s (%zu bytes), more than the memory limit of %s "
                    "(--max-memory)",
                    what, desc, cs_bytes_text(nbytes, a, sizeof a), nbytes, cs_bytes_text(limit, b, sizeof b));
  size_t held = g ? g->const_bytes : 0;
  if (is_const && nbytes > limit - held)
    return cs_error(CS_ERR_NOMEM,
                    "tensor '%s'%s needs %s (%zu bytes) on top of %s of constants already held: "
                    "more than the memory limit of %s (--max-memory)",
                    what, desc, cs_bytes_text(nbytes, a, sizeof a), nbytes, cs_bytes_text(held, c, sizeof c),
                    cs_bytes_text(limit, b, sizeof b));
  return CS_OK;
}

/* The description " (i64[268435456])" is made only for an error: every
 * value of a model passes here, a 100 000-node chain's too. */
cs_status cs_graph_check_value(const cs_graph *g, const cs_value *v, int is_const) {
  uint64_t n = 1;
  for (int i = 0; i < v->rank; i++) {
    int64_t d = v->shape[i];
    if (d < 0) return cs_error(CS_ERR_INVALID, "tensor '%s': dim %d is %lld", v->name, i, (long long)d);
    if (d && n > UINT64_MAX / 16 / (uint64_t)d) /* sizes are at most 8 bytes */
      return cs_error(CS_ERR_NOMEM, "tensor '%s': its shape holds more than 2^60 elements", v->name);
    n *= (uint64_t)d;
  }
  n *= cs_dtype_size(v->dtype);
  if (n > SIZE_MAX) return cs_error(CS_ERR_NOMEM, "tensor '%s' does not fit in memory", v->name);
  size_t limit = cs_graph_mem_limit(g), held = g ? g->const_bytes : 0;
  if (n <= limit && (!is_const || n <= limit - held)) return CS_OK;
  char desc[160];
  int len = snprintf(desc, sizeof desc, " (%s[", cs_dtype_name(v->dtype));
  for (int i = 0; i < v->rank && len < (int)sizeof desc; i++)
    len += snprintf(desc + len, sizeof desc - (size_t)len, "%s%lld", i ? "," : "", (long long)v->shape[i]);
  if (len < (int)sizeof desc) snprintf(desc + len, sizeof desc - (size_t)len, "])");
  return check_bytes(g, v->name, desc, (size_t)n, is_const);
}
