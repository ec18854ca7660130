/*
 * test_ir_graph.c — the IR: building, attributes, uses, topological order,
 * DCE, compaction (id renumbering), the printer, and every error kind the
 * verifier reports.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "unit.h"

static const int64_t s4[2] = {1, 4};

/* x → Relu → a → Add(a, w) → y (graph output); plus an unused Sigmoid. */
static cs_graph *small_graph(int *ids) {
  cs_graph *g = cs_graph_new("small");
  float w[4] = {1, 2, 3, 4};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, s4);
  int c = cs_graph_add_const(g, "w", CS_DTYPE_F32, 2, s4, w);
  int a = cs_graph_add_value(g, "a", CS_DTYPE_F32, 2, s4);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_F32, 2, s4);
  int z = cs_graph_add_value(g, "z", CS_DTYPE_F32, 2, s4);
  int n0 = cs_graph_add_node(g, CS_OP_RELU, "relu", NULL, 1, &x, 1, &a);
  int in1[2] = {a, c};
  int n1 = cs_graph_add_node(g, CS_OP_ADD, "add", "add_onnx", 2, in1, 1, &y);
  int n2 = cs_graph_add_node(g, CS_OP_SIGMOID, "sig", NULL, 1, &a, 1, &z);
  g->inputs = malloc(sizeof(int));
  g->inputs[0] = x;
  g->n_inputs = 1;
  g->outputs = malloc(sizeof(int));
  g->outputs[0] = y;
  g->n_outputs = 1;
  if (ids) {
    int v[8] = {x, c, a, y, z, n0, n1, n2};
    memcpy(ids, v, sizeof v);
  }
  return g;
}

static void test_build(void) {
  int id[8];
  cs_graph *g = small_graph(id);
  CHECK(g->n_values == 5 && g->n_nodes == 3);
  CHECK(!strcmp(g->name, "small"));
  CHECK(cs_graph_value(g, id[0])->producer == -1);
  CHECK(cs_graph_value(g, id[2])->producer == id[5]);
  CHECK(cs_graph_value(g, id[3])->producer == id[6]);
  CHECK(cs_graph_value(g, id[1])->data && ((float *)cs_graph_value(g, id[1])->data)[3] == 4.0f);
  CHECK(cs_value_numel(cs_graph_value(g, id[1])) == 4);
  CHECK(cs_value_nbytes(cs_graph_value(g, id[1])) == 16);
  CHECK(!strcmp(g->nodes[id[6]].origin, "add_onnx"));
  CHECK(!strcmp(g->nodes[id[5]].origin, "relu")); /* origin defaults to name */
  int anon = cs_graph_add_value(g, NULL, CS_DTYPE_I8, 0, NULL);
  CHECK(!strcmp(cs_graph_value(g, anon)->name, "%5"));
  CHECK(cs_graph_value(g, anon)->rank == 0 && cs_value_numel(cs_graph_value(g, anon)) == 1);
  int unnamed = cs_graph_add_node(g, CS_OP_RELU, NULL, NULL, 1, &id[0], 1, &anon);
  CHECK(!strcmp(g->nodes[unnamed].name, "Relu_3"));
  CHECK(cs_graph_verify(g) == CS_OK);
  cs_graph_free(g);
}

static void test_attrs(void) {
  cs_graph *g = small_graph(NULL);
  cs_node *n = &g->nodes[0];
  CHECK(cs_node_attr(n, "axis") == NULL);
  CHECK(cs_node_attr_int(n, "axis", 7) == 7);
  CHECK(cs_node_attr_float(n, "alpha", 0.5f) == 0.5f);
  cs_node_set_attr_int(n, "axis", -1);
  CHECK(cs_node_attr_int(n, "axis", 7) == -1);
  cs_node_add_attr(n, "alpha", CS_ATTR_FLOAT)->f = 0.25f;
  CHECK(cs_node_attr_float(n, "alpha", 0) == 0.25f);
  int64_t v[3] = {1, 2, 3};
  cs_node_set_attr_ints(n, "pads", 3, v);
  int cnt = 0;
  const int64_t *p = cs_node_attr_ints(n, "pads", &cnt);
  CHECK(p && cnt == 3 && p[2] == 3);
  /* Setting again replaces, never duplicates. */
  cs_node_set_attr_ints(n, "pads", 2, v);
  p = cs_node_attr_ints(n, "pads", &cnt);
  CHECK(p && cnt == 2);
  CHECK(n->n_attrs == 3);
  /* Kind mismatch reads as absent. */
  CHECK(cs_node_attr_int(n, "pads", 9) == 9);
  CHECK(cs_node_attr_ints(n, "axis", &cnt) == NULL && cnt == 0);
  /* An empty list is present. */
  cs_node_set_attr_ints(n, "perm", 0, NULL);
  CHECK(cs_node_attr_ints(n, "perm", &cnt) != NULL && cnt == 0);
  cs_graph_free(g);
}

static void test_uses(void) {
  int id[8];
  cs_graph *g = small_graph(id);
  int out[4];
  CHECK(cs_graph_consumers(g, id[2], out, 4) == 2);
  CHECK(out[0] == id[6] && out[1] == id[7]);
  CHECK(cs_graph_consumers(g, id[2], out, 1) == 2); /* count beyond max */
  CHECK(cs_graph_consumers(g, id[3], out, 4) == 0);
  CHECK(cs_graph_is_output(g, id[3]) && !cs_graph_is_output(g, id[2]));
  /* A node reading a value twice is one consumer. */
  int twice[2] = {id[0], id[0]};
  int q = cs_graph_add_value(g, "q", CS_DTYPE_F32, 2, s4);
  cs_graph_add_node(g, CS_OP_MUL, "sq", NULL, 2, twice, 1, &q);
  CHECK(cs_graph_consumers(g, id[0], out, 4) == 2);
  /* replace_uses reaches node inputs and graph outputs. */
  cs_graph_replace_uses(g, id[3], q);
  CHECK(g->outputs[0] == q);
  cs_graph_replace_uses(g, id[0], id[2]);
  CHECK(g->nodes[3].inputs[0] == id[2] && g->nodes[3].inputs[1] == id[2]);
  CHECK(g->nodes[id[5]].inputs[0] == id[2]); /* relu too (now a cycle) */
  /* Removed nodes are not consumers; their outputs lose the producer. */
  cs_graph_remove_node(g, id[7]);
  CHECK(cs_graph_consumers(g, id[2], out, 4) == 3); /* relu, add, sq */
  CHECK(out[0] == id[5] && out[1] == id[6] && out[2] == 3);
  CHECK(cs_graph_value(g, id[4])->producer == -1);
  cs_graph_free(g);
}

/* The reader index behind cs_graph_consumers: inputs written through
 * cs_node_set_input(s) are found, the answer matches a scan of the graph
 * after any mix of edits, compaction renumbers it, and an input written
 * behind its back is caught by cs_graph_check_uses (the verifier). */
static int scan_consumers(const cs_graph *g, int v, int *out) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *nd = &g->nodes[i];
    if (nd->dead) continue;
    for (int j = 0; j < nd->n_inputs; j++)
      if (nd->inputs[j] == v) {
        out[n++] = i;
        break;
      }
  }
  return n;
}

static void test_reader_index(void) {
  cs_graph *g = cs_graph_new("idx");
  enum { NV = 40, NN = 120 };
  int v[NV];
  for (int i = 0; i < NV; i++) v[i] = cs_graph_add_value(g, NULL, CS_DTYPE_F32, 2, s4);
  uint32_t r = 99;
#define RND(n) ((int)((r = r * 1664525u + 1013904223u) >> 8) % (n))
  for (int i = 0; i < NN; i++) {
    int in[3] = {v[RND(NV)], v[RND(NV)], -1}, out = cs_graph_add_value(g, NULL, CS_DTYPE_F32, 2, s4);
    cs_graph_add_node(g, CS_OP_ADD, NULL, NULL, 3, in, 1, &out);
  }
  for (int step = 0; step < 400; step++) {
    int k = RND(4), node = RND(g->n_nodes), a = v[RND(NV)], b = v[RND(NV)];
    if (k == 0) cs_node_set_input(g, node, RND(g->nodes[node].n_inputs), a);
    else if (k == 1) cs_graph_replace_uses(g, a, b);
    else if (k == 2) cs_graph_remove_node(g, node);
    else {
      int in[2] = {a, b};
      CHECK(cs_node_set_inputs(g, node, 2, in) == CS_OK);
    }
  }
  int bad = 0, got[NN], want[NN];
  for (int i = 0; i < NV; i++) {
    int n = cs_graph_consumers(g, v[i], got, NN), m = scan_consumers(g, v[i], want);
    bad += n != m || memcmp(got, want, sizeof(int) * (size_t)(n < m ? n : m)) != 0;
  }
  CHECK_MSG(bad == 0, "%d values with consumers that differ from a scan", bad);
  CHECK(cs_graph_check_uses(g) == CS_OK);
  CHECK(cs_graph_compact(g) == CS_OK);
  CHECK(cs_graph_check_uses(g) == CS_OK);
  bad = 0;
  for (int i = 0; i < g->n_values; i++) {
    int n = cs_graph_consumers(g, i, got, NN), m = scan_consumers(g, i, want);
    bad += n != m || memcmp(got, want, sizeof(int) * (size_t)(n < m ? n : m)) != 0;
  }
  CHECK_MSG(bad == 0, "after compaction: %d values differ", bad);
  /* A direct write adds a reader the index does not know. */
  int live = 0;
  while (g->nodes[live].dead || g->nodes[live].n_inputs == 0) live++;
  int fresh = cs_graph_add_value(g, "fresh", CS_DTYPE_F32, 2, s4);
  g->nodes[live].inputs[0] = fresh;
  CHECK(cs_graph_check_uses(g) == CS_ERR_INTERNAL && strstr(cs_error_message(), "fresh"));
  CHECK(cs_graph_verify(g) != CS_OK);
  cs_node_set_input(g, live, 0, fresh);
  CHECK(cs_graph_check_uses(g) == CS_OK);
#undef RND
  cs_graph_free(g);
}

/* Stable value addresses: a cs_value * taken before 10 000 additions
 * (values, constants, nodes reading it — across many storage blocks) still
 * points at the same value, and writes through it are what the graph sees;
 * ids on both sides of every block boundary name the right value, before
 * and after a compaction that renumbers them across blocks. */
static void test_stable_values(void) {
  cs_graph *g = cs_graph_new("stable");
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, s4);
  cs_value *px = cs_graph_value(g, x);
  g->inputs = malloc(sizeof(int));
  g->inputs[0] = x;
  g->n_inputs = 1;
  enum { N = 10000 };
  int moved = 0, nodes = 0;
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "v%d", i);
    int id;
    if (i % 3 == 0) {
      float k = (float)i;
      id = cs_graph_add_const(g, name, CS_DTYPE_F32, 0, NULL, &k);
    } else {
      id = cs_graph_add_value(g, name, CS_DTYPE_F32, 2, s4);
    }
    CHECK(id == i + 1);
    if (i % 3 == 1) {
      cs_graph_add_node(g, CS_OP_RELU, NULL, NULL, 1, &x, 1, &id);
      nodes++;
    }
    moved += cs_graph_value(g, x) != px;
  }
  CHECK_MSG(moved == 0, "the pointer to x moved %d times", moved);
  CHECK(g->n_values == N + 1 && g->cap_values >= N + 1 && g->cap_values % CS_VALUE_BLOCK == 0);
  CHECK(!strcmp(px->name, "x") && px->rank == 2 && px->shape[1] == 4 && px->producer == -1);
  px->from_u8 = 1; /* a write through the old pointer is the graph's */
  CHECK(cs_graph_value(g, x)->from_u8 == 1);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "v%d", i);
    const cs_value *v = cs_graph_value(g, i + 1);
    bad += strcmp(v->name, name) != 0 || (i % 3 == 0) != (v->data != NULL) ||
           (i % 3 == 0 && *(const float *)v->data != (float)i);
  }
  CHECK_MSG(bad == 0, "%d values differ from what was added", bad);
  CHECK(g->uses_ok && cs_graph_consumers(g, x, NULL, 0) == nodes);
  CHECK(cs_graph_check_uses(g) == CS_OK);
  /* Compaction keeps x and the Relu outputs (every third value from v1). */
  g->outputs = malloc(sizeof(int) * (size_t)nodes);
  for (int i = 0; i < g->n_nodes; i++) g->outputs[i] = g->nodes[i].outputs[0];
  g->n_outputs = nodes;
  CHECK(cs_graph_compact(g) == CS_OK);
  CHECK(g->n_values == nodes + 1 && cs_graph_value(g, 0) == px);
  bad = 0;
  for (int i = 0; i < nodes; i++) {
    char name[32];
    snprintf(name, sizeof name, "v%d", 3 * i + 1);
    const cs_value *v = cs_graph_value(g, i + 1);
    bad += strcmp(v->name, name) != 0 || v->producer != i || g->nodes[i].outputs[0] != i + 1;
  }
  CHECK_MSG(bad == 0, "after compaction: %d values differ", bad);
  CHECK(cs_graph_consumers(g, 0, NULL, 0) == nodes && cs_graph_verify(g) == CS_OK);
  /* New values after compaction reuse the blocks already there. */
  int cap = g->cap_values;
  int late = cs_graph_add_value(g, "late", CS_DTYPE_F32, 2, s4);
  CHECK(late == nodes + 1 && g->cap_values == cap && !strcmp(cs_graph_value(g, late)->name, "late"));
  cs_graph_free(g);
}

/* The memory limit: a constant beyond it, or beyond what the constants
 * already held leave, is refused before its payload is allocated, naming
 * it; the bytes held follow adds, folds and compaction. */
static void test_memory_limit(void) {
  cs_graph *g = cs_graph_new("limit");
  g->mem_limit = 1000;
  int64_t s100[1] = {100}, s300[1] = {300};
  int a = cs_graph_add_const(g, "a", CS_DTYPE_F32, 1, s100, NULL); /* 400 bytes */
  CHECK(a >= 0 && g->const_bytes == 400);
  int b = cs_graph_add_const(g, "big", CS_DTYPE_F32, 1, s300, NULL); /* 1200 > 1000 */
  CHECK(b == -1 && cs_error_message() && strstr(cs_error_message(), "'big'") &&
        strstr(cs_error_message(), "1200 bytes") && strstr(cs_error_message(), "memory limit"));
  int64_t s150[1] = {150};
  int c = cs_graph_add_const(g, "c", CS_DTYPE_F32, 1, s150, NULL); /* 600: 1000 - 400 leaves 600 */
  CHECK(c >= 0 && g->const_bytes == 1000);
  int d = cs_graph_add_const(g, "d", CS_DTYPE_I8, 1, s100, NULL);
  CHECK(d == -1 && strstr(cs_error_message(), "already held"));
  int n = g->n_values;
  CHECK(g->n_values == n); /* nothing was added for the refused ones */
  /* A non-constant tensor: only its own size counts. */
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 1, s150);
  CHECK(cs_graph_check_value(g, cs_graph_value(g, x), 0) == CS_OK);
  CHECK(cs_graph_check_value(g, cs_graph_value(g, x), 1) == CS_ERR_NOMEM);
  int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 1 << 20};
  int h = cs_graph_add_value(g, "h", CS_DTYPE_I64, 3, huge);
  CHECK(cs_graph_check_value(g, cs_graph_value(g, h), 0) == CS_ERR_NOMEM && strstr(cs_error_message(), "2^60"));
  /* Folding a value into a constant counts its bytes; compaction frees them. */
  g->mem_limit = 0; /* the default */
  cs_graph_set_const_data(g, x, calloc(150, sizeof(float)));
  CHECK(g->const_bytes == 1600);
  g->outputs = malloc(sizeof(int));
  g->outputs[0] = a;
  g->n_outputs = 1;
  CHECK(cs_graph_compact(g) == CS_OK);
  CHECK(g->n_values == 1 && g->const_bytes == 400);
  cs_graph_free(g);
}

static void test_topo(void) {
  cs_graph *g = cs_graph_new("topo");
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, s4);
  int v[4];
  for (int i = 0; i < 4; i++) v[i] = cs_graph_add_value(g, NULL, CS_DTYPE_F32, 2, s4);
  /* Node ids deliberately out of dataflow order:
   *   n0: v2 → v3,  n1: x → v0,  n2: v0 → v1,  n3: v1 → v2 */
  cs_graph_add_node(g, CS_OP_RELU, "n0", NULL, 1, &v[2], 1, &v[3]);
  cs_graph_add_node(g, CS_OP_RELU, "n1", NULL, 1, &x, 1, &v[0]);
  cs_graph_add_node(g, CS_OP_RELU, "n2", NULL, 1, &v[0], 1, &v[1]);
  cs_graph_add_node(g, CS_OP_RELU, "n3", NULL, 1, &v[1], 1, &v[2]);
  int order[8];
  CHECK(cs_graph_topo_order(g, order) == 4);
  CHECK(order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 0);
  /* Stable: independent nodes come out by id. */
  int y = cs_graph_add_value(g, NULL, CS_DTYPE_F32, 2, s4);
  cs_graph_add_node(g, CS_OP_SIGMOID, "n4", NULL, 1, &x, 1, &y);
  CHECK(cs_graph_topo_order(g, order) == 5);
  CHECK(order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 0 &&
        order[4] == 4);
  /* Dead nodes are skipped. */
  cs_graph_remove_node(g, 4);
  CHECK(cs_graph_topo_order(g, order) == 4);
  /* A cycle: n1 now reads v3, which n0 makes from n3's output. */
  g->nodes[1].inputs[0] = v[3];
  CHECK(cs_graph_topo_order(g, order) == -1);
  cs_graph_free(g);
}

static void test_dce_compact(void) {
  int id[8];
  cs_graph *g = small_graph(id);
  /* An unused constant and a dead chain behind the Sigmoid. */
  float k = 3.0f;
  int unused_c = cs_graph_add_const(g, "unused", CS_DTYPE_F32, 0, NULL, &k);
  int z2 = cs_graph_add_value(g, "z2", CS_DTYPE_F32, 2, s4);
  int in2[2] = {id[4], unused_c};
  cs_graph_add_node(g, CS_OP_MUL, "mul_dead", NULL, 2, in2, 1, &z2);
  cs_graph_dce(g);
  CHECK(!g->nodes[id[5]].dead && !g->nodes[id[6]].dead);
  CHECK(g->nodes[id[7]].dead); /* sigmoid: only feeds the dead Mul */
  CHECK(g->nodes[3].dead);
  CHECK(cs_graph_verify(g) == CS_OK);
  cs_graph_compact(g);
  CHECK(g->n_nodes == 2);
  CHECK(g->n_values == 4); /* x, w, a, y; z, z2, unused dropped */
  CHECK(!strcmp(cs_graph_value(g, 0)->name, "x") && !strcmp(cs_graph_value(g, 1)->name, "w") &&
        !strcmp(cs_graph_value(g, 2)->name, "a") && !strcmp(cs_graph_value(g, 3)->name, "y"));
  CHECK(!strcmp(g->nodes[0].name, "relu") && !strcmp(g->nodes[1].name, "add"));
  CHECK(g->nodes[1].inputs[0] == 2 && g->nodes[1].inputs[1] == 1);
  CHECK(g->nodes[1].outputs[0] == 3);
  CHECK(cs_graph_value(g, 3)->producer == 1 && cs_graph_value(g, 2)->producer == 0);
  CHECK(g->inputs[0] == 0 && g->outputs[0] == 3);
  CHECK(cs_graph_verify(g) == CS_OK);

  /* Compaction renumbers after removals in the middle, keeps -1 inputs
   * and graph inputs nobody reads. */
  cs_graph *h = cs_graph_new("h");
  int a = cs_graph_add_value(h, "a", CS_DTYPE_F32, 2, s4);
  int b = cs_graph_add_value(h, "b", CS_DTYPE_F32, 2, s4);
  int m = cs_graph_add_value(h, "m", CS_DTYPE_F32, 2, s4);
  int o = cs_graph_add_value(h, "o", CS_DTYPE_F32, 2, s4);
  cs_graph_add_node(h, CS_OP_RELU, "r", NULL, 1, &a, 1, &m);
  int cin[3] = {m, -1, -1};
  cs_graph_add_node(h, CS_OP_CLIP, "c", NULL, 3, cin, 1, &o);
  h->inputs = malloc(2 * sizeof(int));
  h->inputs[0] = a;
  h->inputs[1] = b;
  h->n_inputs = 2;
  h->outputs = malloc(sizeof(int));
  h->outputs[0] = o;
  h->n_outputs = 1;
  cs_graph_remove_node(h, 0);
  cs_graph_replace_uses(h, m, a);
  cs_graph_compact(h);
  CHECK(h->n_nodes == 1 && h->n_values == 3);
  CHECK(h->inputs[0] == 0 && h->inputs[1] == 1 && h->outputs[0] == 2);
  CHECK(h->nodes[0].inputs[0] == 0 && h->nodes[0].inputs[1] == -1);
  CHECK(cs_graph_value(h, 2)->producer == 0);
  CHECK(cs_graph_verify(h) == CS_OK);
  cs_graph_free(h);
  cs_graph_free(g);
}

static void test_quant_const(void) {
  cs_graph *g = cs_graph_new("q");
  int8_t d[4] = {-128, -1, 0, 127};
  int64_t sh[1] = {4};
  int c = cs_graph_add_const(g, "c", CS_DTYPE_I8, 1, sh, d);
  CHECK(cs_const_get_int(cs_graph_value(g, c), 0) == -128);
  CHECK(cs_const_get_int(cs_graph_value(g, c), 3) == 127);
  CHECK(cs_const_get_int(cs_graph_value(g, c), 4) == 0); /* out of range */
  CHECK(cs_const_get_float(cs_graph_value(g, c), 1) == -1.0);
  uint16_t u[2] = {65535, 1};
  int64_t sh2[1] = {2};
  int cu = cs_graph_add_const(g, "u", CS_DTYPE_U16, 1, sh2, u);
  CHECK(cs_const_get_int(cs_graph_value(g, cu), 0) == 65535);
  float s[4] = {0.5f, 0.25f, 1, 2};
  int32_t zp[4] = {1, 2, 3, 4};
  cs_value_set_quant(cs_graph_value(g, c), 0, 4, s, zp);
  CHECK(cs_graph_value(g, c)->quant->axis == 0 && cs_graph_value(g, c)->quant->count == 4);
  CHECK(cs_graph_value(g, c)->quant->scale[1] == 0.25f && cs_graph_value(g, c)->quant->zero_point[3] == 4);
  cs_value_set_quant(cs_graph_value(g, c), -5, 4, s, NULL); /* per-tensor, zp 0 */
  CHECK(cs_graph_value(g, c)->quant->axis == -1 && cs_graph_value(g, c)->quant->count == 1);
  CHECK(cs_graph_value(g, c)->quant->zero_point[0] == 0);
  int nv = cs_graph_add_value(g, "v", CS_DTYPE_F32, 0, NULL);
  CHECK(cs_const_get_int(cs_graph_value(g, nv), 0) == 0); /* not a constant */
  cs_graph_free(g);
}

static void test_dtype_status(void) {
  CHECK(cs_dtype_size(CS_DTYPE_F32) == 4 && cs_dtype_size(CS_DTYPE_I64) == 8 &&
        cs_dtype_size(CS_DTYPE_BOOL) == 1 && cs_dtype_size(CS_DTYPE_U16) == 2 &&
        cs_dtype_size(CS_DTYPE_UNDEF) == 0);
  CHECK(!strcmp(cs_dtype_name(CS_DTYPE_U8), "u8"));
  CHECK(!strcmp(cs_dtype_c_type(CS_DTYPE_I16), "int16_t"));
  CHECK(cs_dtype_to_tidsp(CS_DTYPE_I8) == TIDSP_DTYPE_I8);
  CHECK(cs_dtype_to_tidsp(CS_DTYPE_BOOL) == TIDSP_DTYPE_BOOL);
  CHECK(cs_dtype_is_int(CS_DTYPE_U16) && !cs_dtype_is_int(CS_DTYPE_F32) &&
        !cs_dtype_is_int(CS_DTYPE_BOOL));
  int64_t lo, hi;
  cs_dtype_range(CS_DTYPE_I8, &lo, &hi);
  CHECK(lo == -128 && hi == 127);
  cs_dtype_range(CS_DTYPE_U16, &lo, &hi);
  CHECK(lo == 0 && hi == 65535);
  cs_dtype_range(CS_DTYPE_I32, &lo, &hi);
  CHECK(lo == INT32_MIN && hi == INT32_MAX);
  CHECK(!strcmp(cs_status_str(CS_OK), "ok"));
  CHECK(!strcmp(cs_status_str(CS_ERR_UNSUPPORTED), "unsupported model"));
  CHECK(!strcmp(cs_op_name(CS_OP_CONV), "Conv"));
  CHECK(!strcmp(cs_op_name(CS_OP_K_CONV2D_I8), "k_conv2d_i8"));
  CHECK(cs_op_from_onnx("Conv") == CS_OP_CONV);
  CHECK(cs_op_from_onnx("k_conv2d_i8") == -1); /* kernel ops are not ONNX */
  CHECK(cs_op_from_onnx("LSTM") == -1);
  CHECK(cs_op_is_kernel(CS_OP_K_COPY) && !cs_op_is_kernel(CS_OP_UNSQUEEZE));
  /* Errors: one line whatever the input, last one wins. */
  CHECK(cs_error(CS_ERR_PARSE, "bad name '%s'", "a\nb\tc") == CS_ERR_PARSE);
  CHECK(!strcmp(cs_error_message(), "bad name 'a?b?c'"));
  char big[40000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  cs_error(CS_ERR_IO, "%s", big);
  size_t len = strlen(cs_error_message());
  CHECK(len > 1000 && len < sizeof big && strstr(cs_error_message(), "..."));
  cs_error_clear();
  CHECK(cs_error_message()[0] == '\0');
}

static char *print_to_string(const cs_graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cs_graph_print(g, f);
  fclose(f);
  return buf;
}

static void test_print(void) {
  int id[8];
  cs_graph *g = small_graph(id);
  int64_t p[2] = {2, 2};
  cs_node_set_attr_ints(&g->nodes[id[6]], "stride", 2, p);
  float s = 0.5f;
  int32_t zp = -3;
  cs_value_set_quant(cs_graph_value(g, id[3]), -1, 1, &s, &zp);
  char *text = print_to_string(g);
  CHECK_MSG(strstr(text, "%3 = Add(%2, @w) {stride=[2,2]} : f32[1,4] q(s=0.5, zp=-3)  # add_onnx\n") != NULL, "%s", text);
  CHECK(strstr(text, "%2 = Relu(%0) : f32[1,4]  # relu\n") != NULL);
  CHECK(strstr(text, "input  %0 \"x\" : f32[1,4]") != NULL);
  CHECK(strstr(text, "const  @w : f32[1,4] = [1, 2, 3, 4]") != NULL);
  CHECK(strstr(text, "output %3 \"y\"") != NULL);
  free(text);
  /* Kernel ops show their runtime parameters; dead nodes are not shown. */
  int o = cs_graph_add_value(g, "k", CS_DTYPE_I8, 2, s4);
  int kin = id[0];
  int kn = cs_graph_add_node(g, CS_OP_K_QUANTIZE, "kq", NULL, 1, &kin, 1, &o);
  g->nodes[kn].k.qdq.outer = 1;
  g->nodes[kn].k.qdq.channels = 1;
  g->nodes[kn].k.qdq.inner = 4;
  cs_graph_remove_node(g, id[7]);
  text = print_to_string(g);
  CHECK(strstr(text, "k_quantize(%0) <outer=1 channels=1 inner=4") != NULL);
  CHECK(strstr(text, "Sigmoid") == NULL);
  free(text);
  cs_graph_free(g);
}

/* Each verifier rule, broken on purpose; the message names the node. */
static void expect_verify(cs_graph *g, const char *needle, int line) {
  cs_status st = cs_graph_verify(g);
  if (st != CS_ERR_INTERNAL || !strstr(cs_error_message(), needle)) {
    unit_failed++;
    fprintf(stderr, "%s:%d: verify: expected '%s', got %d '%s'\n", __FILE__,
            line, needle, st, cs_error_message());
  } else {
    unit_passed++;
  }
  cs_graph_free(g);
}
#define EXPECT_VERIFY(g, needle) expect_verify(g, needle, __LINE__)

static void test_verify(void) {
  int id[8];
  cs_graph *g;

  g = small_graph(id);
  g->nodes[id[6]].inputs[1] = 99;
  EXPECT_VERIFY(g, "node 1 'add' (Add): input 1 is value id 99, out of range");

  g = small_graph(id);
  g->nodes[id[6]].outputs[0] = -4;
  cs_graph_value(g, id[3])->producer = -1;
  EXPECT_VERIFY(g, "node 1 'add' (Add): output 0 is value id -4");

  g = small_graph(id); /* a second live producer of 'a' */
  cs_graph_add_node(g, CS_OP_SIGMOID, "again", NULL, 1, &id[0], 1, &id[2]);
  EXPECT_VERIFY(g, "node 0 'relu' (Relu): output %2 'a' is also produced by node 3 'again'");

  g = small_graph(id); /* producer field points at a node not listing it */
  cs_graph_value(g, id[4])->producer = id[5];
  EXPECT_VERIFY(g, "value %4 'z': producer is node 0 'relu' (Relu), which does not list it");

  g = small_graph(id);
  cs_graph_value(g, id[4])->producer = 42;
  EXPECT_VERIFY(g, "value %4 'z': producer 42 is not a node id");

  g = small_graph(id); /* input produced by a removed node */
  cs_graph_remove_node(g, id[5]);
  EXPECT_VERIFY(g, "node 1 'add' (Add): input 0 %2 'a' is not defined");

  g = small_graph(id); /* graph output nobody produces */
  cs_graph_remove_node(g, id[6]);
  EXPECT_VERIFY(g, "graph output 0 %3 'y' is not defined");

  g = small_graph(id);
  g->outputs[0] = 77;
  EXPECT_VERIFY(g, "graph output 0 is value id 77, out of range");

  g = small_graph(id);
  g->inputs[0] = id[1];
  EXPECT_VERIFY(g, "graph input 0 'w' is a constant");

  g = small_graph(id); /* a cycle: relu reads add's output */
  g->nodes[id[5]].inputs[0] = id[3];
  EXPECT_VERIFY(g, "the graph has a cycle (through node");

  g = small_graph(id);
  cs_graph_value(g, id[2])->shape[1] = -1;
  EXPECT_VERIFY(g, "value %2 'a': dim 1 is negative");

  g = small_graph(id);
  cs_graph_value(g, id[2])->rank = 9;
  EXPECT_VERIFY(g, "value %2 'a': rank 9 out of [0, 6]");

  g = small_graph(id);
  cs_graph_value(g, id[4])->dtype = CS_DTYPE_UNDEF;
  EXPECT_VERIFY(g, "node 2 'sig' (Sigmoid): output %4 'z' has no dtype");

  g = small_graph(id); /* a kernel op with a wrong activation dtype */
  {
    int o = cs_graph_add_value(g, "o8", CS_DTYPE_I8, 2, s4);
    cs_graph_add_node(g, CS_OP_K_LUT_I8, "lut", NULL, 2, (int[]){id[1], id[2]}, 1, &o);
  }
  EXPECT_VERIFY(g, "node 3 'lut' (k_lut_i8): input 1 'a' is f32, expected i8");

  g = small_graph(id);
  {
    int o = cs_graph_add_value(g, "of", CS_DTYPE_I8, 2, s4);
    cs_graph_add_node(g, CS_OP_K_UNARY_F32, "un", NULL, 1, &id[2], 1, &o);
  }
  EXPECT_VERIFY(g, "node 3 'un' (k_unary_f32): output 'of' is i8, expected f32");

  g = small_graph(id);
  {
    int o = cs_graph_add_value(g, "qf", CS_DTYPE_F32, 2, s4);
    cs_graph_add_node(g, CS_OP_K_QUANTIZE, "kq", NULL, 1, &id[2], 1, &o);
  }
  EXPECT_VERIFY(g, "node 3 'kq' (k_quantize): output 'qf' is f32, not an integer type");

  g = small_graph(id);
  {
    int o = cs_graph_add_value(g, "t", CS_DTYPE_I8, 2, s4);
    cs_graph_add_node(g, CS_OP_K_TRANSPOSE, "tr", NULL, 1, &id[2], 1, &o);
  }
  EXPECT_VERIFY(g, "node 3 'tr' (k_transpose): input 0 'a' is f32 but output 't' is i8");

  g = small_graph(id); /* a constant with a producer */
  g->nodes[id[7]].outputs[0] = id[1];
  cs_graph_value(g, id[1])->producer = id[7];
  EXPECT_VERIFY(g, "value %1 'w': a constant cannot have a producer");

  /* And a valid kernel graph passes. */
  g = small_graph(id);
  {
    int q = cs_graph_add_value(g, "q", CS_DTYPE_I8, 2, s4);
    int l = cs_graph_add_value(g, "l", CS_DTYPE_I8, 2, s4);
    int64_t s256[1] = {256};
    int lut = cs_graph_add_const(g, "lut", CS_DTYPE_I8, 1, s256, NULL);
    cs_graph_add_node(g, CS_OP_K_QUANTIZE, "kq", NULL, 1, &id[2], 1, &q);
    cs_graph_add_node(g, CS_OP_K_LUT_I8, "kl", NULL, 2, (int[]){lut, q}, 1, &l);
    CHECK_MSG(cs_graph_verify(g) == CS_OK, "%s", cs_error_message());
  }
  cs_graph_free(g);
}

/* The last error belongs to the thread (the compile) that made it. */
static pthread_barrier_t error_barrier;

static void *error_on_thread(void *arg) {
  const char *who = arg;
  cs_error(CS_ERR_INVALID, "node '%s' failed", who);
  pthread_barrier_wait(&error_barrier); /* both threads have set theirs */
  char want[64];
  snprintf(want, sizeof want, "node '%s' failed", who);
  return (void *)(intptr_t)(strcmp(cs_error_message(), want) == 0);
}

static void test_error_per_thread(void) {
  cs_error(CS_ERR_IO, "main's error");
  pthread_t t[2];
  const char *names[2] = {"a", "b"};
  CHECK(pthread_barrier_init(&error_barrier, NULL, 2) == 0);
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, error_on_thread, (void *)names[i]) == 0);
  for (int i = 0; i < 2; i++) {
    void *own = NULL;
    CHECK(pthread_join(t[i], &own) == 0);
    CHECK_MSG(own == (void *)1, "thread %s saw another thread's error", names[i]);
  }
  pthread_barrier_destroy(&error_barrier);
  CHECK(!strcmp(cs_error_message(), "main's error"));
}

int main(void) {
  test_error_per_thread();
  test_build();
  test_attrs();
  test_uses();
  test_reader_index();
  test_stable_values();
  test_memory_limit();
  test_topo();
  test_dce_compact();
  test_quant_const();
  test_dtype_status();
  test_print();
  test_verify();
  UNIT_MAIN_END();
}
