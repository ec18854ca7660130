/*
 * FoldEltwiseTable — int8 elementwise kernels that together compute a
 * function of one int8 tensor x become one table on x:
 *
 *   k_mul_i8(x, k_lut_i8(T, x))                   hard-swish as x·hard-sigmoid(x)
 *                                                 (MobileNetV3: two passes)
 *   k_lut_i8(T2, k_mul_i8(x, k_add_i8(x, c)))     PP-OCR's x·clip(x + 3, 0, 6)/6
 *                                                 (three passes)
 *   → k_lut_i8(T', x)
 *
 * A value is a function of x when it is x itself, or the output of a
 * k_lut_i8, k_add_i8 or k_mul_i8 whose operands are functions of the same
 * x (of the output's shape: no broadcast of a runtime operand) or
 * one-element int8 constants. Its table is those kernels run on the 256
 * codes, each on its operands' tables (runtime/kernels: the bytes the chain
 * writes, since an elementwise kernel gives each output from its operands'
 * elements alone). The one place where a kernel looks at more than the
 * element is k_add_i8's rounding order when its A operand is one value per
 * span (kernels.h): a one-element constant A is that both in the graph and
 * in the 256-code run, a runtime A neither (the output has ≥ 2 elements),
 * so the choice is kept.
 *
 * Each such kernel becomes k_lut_i8(T', x) (a lone add or mul with a
 * constant too: the table reads and writes the same bytes and does no
 * arithmetic); DCE drops what no one reads any more. A value that some
 * other node also reads stays computed for it.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

enum { CODES = 256, OFFSET = 128 };

typedef struct fold_state {
  int n_values;  /* the graph's before the pass added its tables */
  int *root;     /* per value: the x it is a function of, or -1 */
  int *tab;      /* per value: its table's index in `tables`, or -1 */
  int8_t (*tables)[CODES];
  int n_tables, cap;
} fold_state;

/* A new table index, or -1 when out of memory. */
static int new_table(fold_state *s) {
  if (s->n_tables == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    void *t = realloc(s->tables, (size_t)cap * sizeof *s->tables);
    if (!t) return -1;
    s->tables = t;
    s->cap = cap;
  }
  return s->n_tables++;
}

/* Operand v of an elementwise node with output out: its 256 codes as a
 * function of x into codes (x < 0: v sets it), *stride 1; or a one-element
 * int8 constant, repeated, *stride 0. 0 when v is neither. */
static int operand(cs_graph *g, const fold_state *s, int v, int out, int *x, int8_t codes[CODES], int32_t *stride) {
  const cs_value *val = cs_graph_value(g, v);
  if (v >= s->n_values || val->dtype != CS_DTYPE_I8) return 0;
  if (val->data) {
    if (cs_value_numel(val) != 1) return 0;
    memset(codes, ((const int8_t *)val->data)[0], CODES);
    *stride = 0;
    return 1;
  }
  if (cs_value_numel(val) != cs_value_numel(cs_graph_value(g, out))) return 0; /* element i from element i */
  int r = s->root[v] >= 0 ? s->root[v] : v;
  if (*x >= 0 && *x != r) return 0;
  *x = r;
  if (s->root[v] >= 0) memcpy(codes, s->tables[s->tab[v]], CODES);
  else
    for (int i = 0; i < CODES; i++) codes[i] = (int8_t)(i - OFFSET);
  *stride = 1;
  return 1;
}

/* Node n's output as a function of one x: its table into y and the x, or
 * -1 when it is not one. */
static int node_table(cs_graph *g, const fold_state *s, const cs_node *n, int8_t y[CODES]) {
  int x = -1, out = n->outputs[0];
  int8_t a[CODES], b[CODES];
  int32_t sa, sb;
  if (cs_value_numel(cs_graph_value(g, out)) < 2) return -1;
  if (n->op == CS_OP_K_LUT_I8) {
    const cs_value *t = cs_graph_value(g, n->inputs[0]);
    if (!t->data || t->dtype != CS_DTYPE_I8 || cs_value_numel(t) != CODES) return -1;
    if (!operand(g, s, n->inputs[1], out, &x, a, &sa) || sa == 0) return -1;
    tidsp_lut_params p = {CODES};
    return tidsp_lut_i8__ref(&p, t->data, a, y) == TIDSP_OK ? x : -1;
  }
  /* k_add_i8 / k_mul_i8: both operands of the output's shape or constants */
  if (!cs_match_same_shape(g, n->inputs[0], out) && cs_value_numel(cs_graph_value(g, n->inputs[0])) != 1) return -1;
  if (!cs_match_same_shape(g, n->inputs[1], out) && cs_value_numel(cs_graph_value(g, n->inputs[1])) != 1) return -1;
  if (!operand(g, s, n->inputs[0], out, &x, a, &sa) || !operand(g, s, n->inputs[1], out, &x, b, &sb) || x < 0)
    return -1;
  tidsp_broadcast bc;
  memset(&bc, 0, sizeof bc);
  bc.rank = 1;
  bc.shape[0] = CODES;
  bc.a_stride[0] = sa;
  bc.b_stride[0] = sb;
  int32_t st;
  if (n->op == CS_OP_K_ADD_I8) {
    tidsp_add_i8_params p = n->k.add;
    p.bc = bc;
    st = tidsp_add_i8__ref(&p, a, b, y);
  } else {
    tidsp_mul_i8_params p = n->k.mul;
    p.bc = bc;
    st = tidsp_mul_i8__ref(&p, a, b, y);
  }
  return st == TIDSP_OK ? x : -1;
}

cs_status pass_fold_eltwise_table(cs_graph *g, const cs_target *t) {
  (void)t;
  fold_state s = {0};
  int *order = malloc(sizeof(int) * (size_t)(g->n_nodes ? g->n_nodes : 1));
  s.root = malloc(sizeof(int) * (size_t)(g->n_values ? g->n_values : 1));
  s.tab = malloc(sizeof(int) * (size_t)(g->n_values ? g->n_values : 1));
  cs_status st = CS_OK;
  if (!order || !s.root || !s.tab) {
    st = cs_error(CS_ERR_NOMEM, "FoldEltwiseTable: out of memory for %d nodes", g->n_nodes);
    goto done;
  }
  s.n_values = g->n_values;
  for (int v = 0; v < g->n_values; v++) s.root[v] = s.tab[v] = -1;
  int count = cs_graph_topo_order(g, order);
  for (int k = 0; k < count; k++) {
    int id = order[k];
    cs_node *n = cs_graph_node(g, id);
    if (n->dead || (n->op != CS_OP_K_LUT_I8 && n->op != CS_OP_K_ADD_I8 && n->op != CS_OP_K_MUL_I8)) continue;
    int8_t y[CODES];
    int x = node_table(g, &s, n, y);
    if (x < 0) continue;
    int ti = new_table(&s);
    if (ti < 0) {
      st = cs_error(CS_ERR_NOMEM, "FoldEltwiseTable: out of memory at node '%s'", n->name);
      goto done;
    }
    memcpy(s.tables[ti], y, CODES);
    s.root[n->outputs[0]] = x;
    s.tab[n->outputs[0]] = ti;
    if (n->op == CS_OP_K_LUT_I8 && n->inputs[1] == x) continue; /* already a table on x */
    int lut = cs_add_const_named(g, n->name ? n->name : "eltwise", "lut", CS_DTYPE_I8, 1, (const int64_t[]){CODES}, y);
    int ins[2] = {lut, x};
    if (lut < 0 || cs_node_set_inputs(g, id, 2, ins) != CS_OK) {
      st = cs_error(CS_ERR_NOMEM, "FoldEltwiseTable: out of memory at node '%s'", n->name);
      goto done;
    }
    n = cs_graph_node(g, id);
    n->op = CS_OP_K_LUT_I8;
    memset(&n->k, 0, sizeof n->k);
    n->k.lut.n = (int32_t)cs_value_numel(cs_graph_value(g, x));
  }
done:
  free(order);
  free(s.root);
  free(s.tab);
  free(s.tables);
  return st;
}
