/*
 * QuantizeConcatMaxPool — a float Concat of dequantized int8 tensors whose
 * MaxPools end in QuantizeLinear (a PT2E export's inception pool branch:
 * DQ_i → Concat → MaxPool [→ MaxPool …] → Q), given its own quantized copy
 * of the Concat so that the pools run on int8:
 *
 *   Q_P( MaxPool…( Concat( DQ_i(x_i) ) ) )
 *     → Q_P( MaxPool…( DQ_P( Q_P( Concat'( DQ_i(x_i) ) ) ) ) )
 *
 * Exact: g = DQ_P∘Q_P is non-decreasing and MaxPool only selects, so
 * MaxPool(g(y)) = g(MaxPool(y)) element by element (a window of padding
 * alone gives the lowest value either way, which Q_P maps to its minimum),
 * and Q_P∘g = Q_P because Q_P(DQ_P(z)) = z for every int8 z. Each leaf Q
 * with its own parameters P gets its own Concat' and MaxPool copies; the
 * original Concat stays for whatever else reads it (a Q of its own, a
 * float consumer, a graph output) and goes when nothing does.
 *
 * The rest is the existing passes': EliminateQDQTransparent turns
 * Q_P(Concat'(DQ_i)) into ORT's QLinearConcat (a copy, or a table for an
 * input whose parameters differ from P, each entry Q_P(DQ_i(q)) as the
 * float graph computes it) and sinks DQ_P below the MaxPools, and
 * EliminateQDQRoundTrip removes DQ_P → Q_P.
 *
 * Rules: every Concat input is DQ(int8, per-tensor constant); their
 * parameters are not all equal (then EliminateQDQTransparent keeps the
 * Concat int8 already); a MaxPool subtree is taken only when everything it
 * feeds is a MaxPool (its Indices output unread) or a QuantizeLinear to
 * int8 with per-tensor constant parameters, and no value in it is a graph
 * output. Anything else (a Relu, an AveragePool, a per-channel Q, a float
 * reader) leaves that subtree as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

enum { MAX_READERS = 32, MAX_DEPTH = 8, MAX_CLONES = 64 };

/* One quantized copy of the Concat, for the leaves quantized with P. */
typedef struct copy_for {
  int q;                     /* a leaf Q with P (cs_qparams holds a pointer to itself: not kept) */
  int dq;                    /* the float value DQ_P(Q_P(Concat')) */
  int orig[MAX_CLONES];      /* MaxPool node ids already copied for P … */
  int clone_out[MAX_CLONES]; /* … and their copies' outputs */
  int n;
} copy_for;

typedef struct rewrite {
  int concat;
  copy_for *copies;
  int n_copies, cap_copies;
} rewrite;

static int is_i8_q(cs_graph *g, int id, cs_qparams *qp) {
  const cs_node *n = cs_graph_node(g, id);
  if (n->op != CS_OP_QUANTIZE_LINEAR || cs_graph_value(g, n->outputs[0])->dtype != CS_DTYPE_I8) return 0;
  if (cs_qparams_read(g, n, qp) != CS_OK) { cs_error_clear(); return 0; }
  if (!cs_qparams_per_tensor(qp) || qp->dtype != CS_DTYPE_I8) { cs_qparams_free(qp); return 0; }
  return 1;
}

static int indices_unread(cs_graph *g, const cs_node *m) {
  if (m->n_outputs < 2 || m->outputs[1] < 0) return 1;
  int c;
  return cs_graph_consumers(g, m->outputs[1], &c, 1) == 0 && !cs_graph_is_output(g, m->outputs[1]);
}

/* MaxPool node m and everything below it end in int8 Qs. */
static int subtree_ok(cs_graph *g, int m, int depth) {
  const cs_node *n = cs_graph_node(g, m);
  if (n->op != CS_OP_MAX_POOL || depth > MAX_DEPTH || !indices_unread(g, n)) return 0;
  int v = n->outputs[0];
  int readers[MAX_READERS];
  int cnt = cs_graph_consumers(g, v, readers, MAX_READERS);
  if (cnt < 1 || cnt > MAX_READERS || cs_graph_is_output(g, v)) return 0;
  for (int i = 0; i < cnt; i++) {
    cs_qparams qp;
    if (is_i8_q(g, readers[i], &qp)) { cs_qparams_free(&qp); continue; }
    if (!subtree_ok(g, readers[i], depth + 1)) return 0;
  }
  return 1;
}

static cs_status copy_attrs(cs_graph *g, int from, int to) {
  for (int a = 0; a < cs_graph_node(g, from)->n_attrs; a++) {
    const cs_attr *s = &cs_graph_node(g, from)->attrs[a];
    cs_node *d = cs_graph_node(g, to);
    cs_status st = CS_OK;
    switch (s->kind) {
      case CS_ATTR_INT: st = cs_node_set_attr_int(d, s->name, s->i); break;
      case CS_ATTR_INTS: st = cs_node_set_attr_ints(d, s->name, s->n, s->ints); break;
      case CS_ATTR_STRING: st = cs_node_set_attr_string(d, s->name, s->s ? s->s : "", s->s ? strlen(s->s) : 0); break;
      case CS_ATTR_FLOAT: {
        cs_attr *t = cs_node_add_attr(d, s->name, CS_ATTR_FLOAT);
        if (!t) return CS_ERR_NOMEM;
        t->f = s->f;
        break;
      }
      case CS_ATTR_FLOATS: {
        float *f = s->n ? malloc(sizeof(float) * (size_t)s->n) : NULL;
        cs_attr *t = (s->n && !f) ? NULL : cs_node_add_attr(d, s->name, CS_ATTR_FLOATS);
        if (!t) {
          free(f);
          return cs_error(CS_ERR_NOMEM, "out of memory copying attribute '%s'", s->name);
        }
        if (s->n) memcpy(f, s->floats, sizeof(float) * (size_t)s->n);
        t->floats = f;
        t->n = s->n;
        break;
      }
    }
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

/* A copy of node `from` (its op and attributes) reading `in` (its other
 * inputs as they are), writing a new value shaped like its output 0 with
 * dtype dt. The new value id, or -1 (out of memory, message recorded). */
static int clone_node(cs_graph *g, int from, const char *suffix, int in, cs_dtype dt) {
  const cs_node *n = cs_graph_node(g, from);
  char name[640];
  snprintf(name, sizeof name, "%s.%s", n->name, suffix);
  const cs_value *ov = cs_graph_value(g, n->outputs[0]);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, ov->shape, sizeof shape);
  char vname[660];
  snprintf(vname, sizeof vname, "%s.y", name);
  int out = cs_graph_add_value(g, vname, dt, ov->rank, shape);
  if (out < 0) return -1;
  n = cs_graph_node(g, from);
  int n_in = n->n_inputs;
  int *ins = malloc(sizeof(int) * (size_t)n_in);
  if (!ins) {
    cs_error(CS_ERR_NOMEM, "out of memory (node '%s')", n->name);
    return -1;
  }
  memcpy(ins, n->inputs, sizeof(int) * (size_t)n_in);
  if (in >= 0) ins[0] = in;
  char *origin = n->origin ? strdup(n->origin) : NULL;
  int id = cs_graph_add_node(g, n->op, name, origin ? origin : name, n_in, ins, 1, &out);
  free(origin);
  free(ins);
  if (id < 0 || copy_attrs(g, from, id) != CS_OK) return -1;
  return out;
}

/* The copy of the Concat quantized with leaf q's parameters: DQ_P(Q_P(Concat')),
 * made on first use. NULL when out of memory (message recorded). */
static copy_for *copy_for_leaf(cs_graph *g, rewrite *r, int q, const cs_qparams *p) {
  for (int i = 0; i < r->n_copies; i++) {
    cs_qparams pi;
    if (!is_i8_q(g, r->copies[i].q, &pi)) continue;
    int same = cs_qparams_equal(&pi, p);
    cs_qparams_free(&pi);
    if (same) return &r->copies[i];
  }
  if (r->n_copies == r->cap_copies) {
    int cap = r->cap_copies ? r->cap_copies * 2 : 4;
    copy_for *c = realloc(r->copies, sizeof(copy_for) * (size_t)cap);
    if (!c) {
      cs_error(CS_ERR_NOMEM, "out of memory (node '%s')", cs_graph_node(g, r->concat)->name);
      return NULL;
    }
    r->copies = c;
    r->cap_copies = cap;
  }
  const char *qname = cs_graph_node(g, q)->name;
  char suffix[600];
  snprintf(suffix, sizeof suffix, "for_%s", qname);
  int yc = clone_node(g, r->concat, suffix, -1, CS_DTYPE_F32);
  if (yc < 0) return NULL;
  /* Q_P and DQ_P read the leaf's own scale and zero point constants. */
  const cs_node *qn = cs_graph_node(g, q);
  int t, d;
  if (cs_add_qdq_after(g, yc, qn->inputs[1], qn->n_inputs > 2 ? qn->inputs[2] : -1, p, qn->name, &t, &d) != CS_OK)
    return NULL;
  copy_for *c = &r->copies[r->n_copies];
  memset(c, 0, sizeof *c);
  c->q = q;
  c->dq = d;
  r->n_copies++;
  return c;
}

/* Leaf Q node q below the MaxPools path[0..k-1] (path[0] reads the
 * Concat): point q at the copies of the path for its parameters. */
static cs_status reroute_leaf(cs_graph *g, rewrite *r, const int *path, int k, int q) {
  cs_qparams p;
  if (!is_i8_q(g, q, &p)) return CS_OK; /* checked by subtree_ok */
  copy_for *c = copy_for_leaf(g, r, q, &p);
  cs_qparams_free(&p);
  if (!c) return CS_ERR_NOMEM;
  int v = c->dq;
  for (int j = 0; j < k; j++) {
    int found = -1;
    for (int i = 0; i < c->n; i++)
      if (c->orig[i] == path[j]) found = c->clone_out[i];
    if (found < 0) {
      if (c->n == MAX_CLONES) return cs_error(CS_ERR_INTERNAL, "QuantizeConcatMaxPool: too many MaxPools");
      char suffix[600];
      snprintf(suffix, sizeof suffix, "for_%s", cs_graph_node(g, q)->name);
      found = clone_node(g, path[j], suffix, v, CS_DTYPE_F32);
      if (found < 0) return CS_ERR_NOMEM;
      c->orig[c->n] = path[j];
      c->clone_out[c->n++] = found;
    }
    v = found;
  }
  cs_node_set_input(g, q, 0, v);
  return CS_OK;
}

/* Every leaf below MaxPool m (path[0..k-1] above it), then m itself goes. */
static cs_status reroute_subtree(cs_graph *g, rewrite *r, int *path, int k, int m) {
  path[k] = m;
  int readers[MAX_READERS];
  int cnt = cs_graph_consumers(g, cs_graph_node(g, m)->outputs[0], readers, MAX_READERS);
  for (int i = 0; i < cnt; i++) {
    cs_status st = cs_graph_node(g, readers[i])->op == CS_OP_QUANTIZE_LINEAR
                       ? reroute_leaf(g, r, path, k + 1, readers[i])
                       : reroute_subtree(g, r, path, k + 1, readers[i]);
    if (st != CS_OK) return st;
  }
  cs_graph_remove_node(g, m);
  return CS_OK;
}

static int inputs_ok(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  cs_qparams first;
  if (n->n_outputs != 1 || !cs_match_dq_params(g, cs_match_dq_i8(g, n->inputs[0]), &first)) return 0;
  int ok = 1, all_equal = 1;
  for (int i = 1; i < n->n_inputs && ok; i++) {
    cs_qparams qp;
    if (!cs_match_dq_params(g, cs_match_dq_i8(g, n->inputs[i]), &qp)) { ok = 0; break; }
    all_equal &= cs_qparams_equal(&first, &qp);
    cs_qparams_free(&qp);
  }
  cs_qparams_free(&first);
  return ok && !all_equal;
}

static cs_status rewrite_concat(cs_graph *g, int id) {
  if (!inputs_ok(g, id)) return CS_OK;
  int y = cs_graph_node(g, id)->outputs[0];
  int readers[MAX_READERS];
  int cnt = cs_graph_consumers(g, y, readers, MAX_READERS);
  if (cnt > MAX_READERS) return CS_OK;
  rewrite r = {id, NULL, 0, 0};
  int path[MAX_DEPTH + 2];
  cs_status st = CS_OK;
  for (int i = 0; i < cnt && st == CS_OK; i++)
    if (subtree_ok(g, readers[i], 0)) st = reroute_subtree(g, &r, path, 0, readers[i]);
  free(r.copies);
  if (st != CS_OK) return st;
  int c;
  if (r.n_copies && cs_graph_consumers(g, y, &c, 1) == 0 && !cs_graph_is_output(g, y)) cs_graph_remove_node(g, id);
  return CS_OK;
}

cs_status pass_quantize_concat_max_pool(cs_graph *g, const cs_target *t) {
  (void)t;
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_CONCAT) continue;
    cs_status st = rewrite_concat(g, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
