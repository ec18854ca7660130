/*
 * FuseSDPADecode — one decode step of attention over a KV cache becomes one
 * c7x_sdpa_decode call (the spec's ti_fuse_sdpa_decode; -mcpu=c7x only, as
 * there: on other targets the float kernels keep ONNX Runtime's rounding):
 *
 *   MatMul( Softmax( [Add(·, mask)]( S ) ), V )
 *   S = MatMul( [Mul(Q, c1)], [Mul(Kᵀ, c2)] ) [· c3 | / c3]
 *   Kᵀ = Transpose[swap last two](K) | Reshape(Transpose[0,2,1](Reshape(K)))
 *
 * (the second Kᵀ and the split scale are what torch exports for
 * scaled_dot_product_attention; K and V may come through repeat_kv's
 * Reshape(Expand(Unsqueeze(·, 2))), grouped-query attention, which the
 * kernel reads unrepeated). Rules, each declining to the float path:
 * Q [1, nq, 1, hd] (one query position), K and V [1, nkv, L, hd] with
 * nq a multiple of nkv, every scale a float constant and their product 1/√hd (the
 * kernel's), the mask float with L elements broadcast over heads, every
 * intermediate read only by the next node, Softmax over the last axis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/mmalib_common.h"
#include "pass_list.h"
#include "match/pattern.h"

typedef struct sdpa {
  int nodes[20];
  int n_nodes;
  int q, k, v, mask;
  double scale;
} sdpa;

static int only_reader(cs_graph *g, int v) { return cs_match_single_consumer(g, v) >= 0; }

static void take(sdpa *m, int node) {
  if (node >= 0 && m->n_nodes < 20) m->nodes[m->n_nodes++] = node;
}

/* v = Mul(x, c) with c a float scalar constant (either order): x, *c. */
static int scaled(cs_graph *g, int v, double *c, int *node) {
  int mul = cs_match_producer(g, v, CS_OP_MUL);
  *node = -1;
  if (mul < 0 || !only_reader(g, v)) return v;
  const cs_node *n = cs_graph_node(g, mul);
  for (int j = 0; j < 2; j++) {
    const cs_value *cv = cs_graph_value(g, n->inputs[j]);
    if (cv->data && cv->dtype == CS_DTYPE_F32 && cs_value_numel(cv) == 1) {
      *c *= ((const float *)cv->data)[0];
      *node = mul;
      return n->inputs[1 - j];
    }
  }
  return v;
}

/* Grouped-query attention as repeat_kv writes it: e [1, kvh, rep, L, hd] =
 * Expand(Unsqueeze(base [1, kvh, L, hd], axis 2)), each read only once.
 * Returns base (recording both nodes), or -1. */
static int repeat_source(cs_graph *g, int e, sdpa *m) {
  const cs_value *ev = cs_graph_value(g, e);
  int ex = cs_match_producer(g, e, CS_OP_EXPAND);
  if (ev->rank != 5 || ex < 0 || !only_reader(g, e)) return -1;
  int u = cs_graph_node(g, ex)->inputs[0];
  int un = cs_match_producer(g, u, CS_OP_UNSQUEEZE);
  if (un < 0 || !only_reader(g, u)) return -1;
  const cs_node *unode = cs_graph_node(g, un);
  const cs_value *axes = unode->n_inputs > 1 ? cs_graph_value(g, unode->inputs[1]) : NULL;
  int cnt = 0;
  const int64_t *attr = cs_node_attr_ints(unode, "axes", &cnt);
  int64_t axis = axes && axes->data && cs_value_numel(axes) == 1 ? cs_const_get_int(axes, 0)
                 : attr && cnt == 1                             ? attr[0]
                                                                : -99;
  int base = unode->inputs[0];
  const cs_value *bv = cs_graph_value(g, base);
  if ((axis != 2 && axis != -3) || bv->rank != 4 || ev->shape[0] != 1 || ev->shape[1] != bv->shape[1] ||
      ev->shape[3] != bv->shape[2] || ev->shape[4] != bv->shape[3])
    return -1;
  take(m, ex);
  take(m, un);
  return base;
}

/* V, or V's repeat_kv source: Reshape(e) [1, kvh·rep, L, hd] of a repeat. */
static int unrepeat_v(cs_graph *g, int v, sdpa *m) {
  int r = cs_match_producer(g, v, CS_OP_RESHAPE);
  if (r < 0 || !only_reader(g, v)) return v;
  int e = cs_graph_node(g, r)->inputs[0];
  const cs_value *ev = cs_graph_value(g, e), *vv = cs_graph_value(g, v);
  if (ev->rank != 5 || vv->rank != 4 || vv->shape[1] != ev->shape[1] * ev->shape[2]) return v;
  sdpa trial = *m;
  int base = repeat_source(g, e, &trial);
  if (base < 0) return v;
  *m = trial;
  take(m, r);
  return base;
}

/* Kᵀ → K (rank 4), recording the transpose (and reshapes); a repeat_kv
 * expansion in front of the first reshape is looked through too. */
static int untranspose(cs_graph *g, int kt, sdpa *m) {
  int tr = cs_match_producer(g, kt, CS_OP_TRANSPOSE);
  if (tr >= 0 && only_reader(g, kt) && cs_match_swaps_last_two(g, tr, 4)) {
    take(m, tr);
    return cs_graph_node(g, tr)->inputs[0];
  }
  int r2 = cs_match_producer(g, kt, CS_OP_RESHAPE);
  if (r2 < 0 || !only_reader(g, kt)) return -1;
  int t3 = cs_graph_node(g, r2)->inputs[0];
  tr = cs_match_producer(g, t3, CS_OP_TRANSPOSE);
  if (tr < 0 || !only_reader(g, t3) || !cs_match_swaps_last_two(g, tr, 3)) return -1;
  int k3 = cs_graph_node(g, tr)->inputs[0];
  int r1 = cs_match_producer(g, k3, CS_OP_RESHAPE);
  if (r1 < 0 || !only_reader(g, k3)) return -1;
  int k = cs_graph_node(g, r1)->inputs[0];
  const cs_value *k3v = cs_graph_value(g, k3), *ktv = cs_graph_value(g, kt);
  int64_t heads, len, hd;
  sdpa trial = *m;
  if (cs_graph_value(g, k)->rank == 5) { /* [1, kvh, rep, L, hd] → [H, L, hd] */
    const cs_value *ev = cs_graph_value(g, k);
    heads = ev->shape[1] * ev->shape[2], len = ev->shape[3], hd = ev->shape[4];
    k = repeat_source(g, k, &trial);
    if (k < 0) return -1;
  } else {
    const cs_value *kv = cs_graph_value(g, k);
    if (kv->rank != 4 || kv->shape[0] != 1) return -1;
    heads = kv->shape[1], len = kv->shape[2], hd = kv->shape[3];
  }
  /* [.., H, L, hd] → [H, L, hd] → [H, hd, L] → [1, H, hd, L] */
  if (k3v->rank != 3 || ktv->rank != 4 || k3v->shape[0] != heads || k3v->shape[1] != len ||
      k3v->shape[2] != hd || ktv->shape[1] != heads || ktv->shape[2] != hd || ktv->shape[3] != len)
    return -1;
  *m = trial;
  take(m, r2);
  take(m, tr);
  take(m, r1);
  return k;
}

/* v comes from the product (MatMul) or its scaling (Mul, Div). */
static int is_score(cs_graph *g, int v) {
  return cs_match_producer(g, v, CS_OP_MATMUL) >= 0 || cs_match_producer(g, v, CS_OP_MUL) >= 0 ||
         cs_match_producer(g, v, CS_OP_DIV) >= 0;
}

static int match(cs_graph *g, int root, sdpa *m) {
  memset(m, 0, sizeof *m);
  m->mask = -1;
  m->scale = 1.0;
  const cs_node *o = cs_graph_node(g, root);
  if (o->n_inputs != 2) return 0;
  m->v = o->inputs[1];
  int sm = cs_match_producer(g, o->inputs[0], CS_OP_SOFTMAX);
  if (sm < 0 || !only_reader(g, o->inputs[0])) return 0;
  take(m, root);
  take(m, sm);
  int s = cs_graph_node(g, sm)->inputs[0];
  const cs_value *sv = cs_graph_value(g, s);
  int64_t axis = cs_node_attr_int(cs_graph_node(g, sm), "axis", -1);
  if (axis != -1 && axis != sv->rank - 1) return 0;
  int add = cs_match_producer(g, s, CS_OP_ADD);
  if (add >= 0 && only_reader(g, s)) {
    const cs_node *a = cs_graph_node(g, add);
    int j = is_score(g, a->inputs[0]) ? 0 : 1; /* the other operand is the mask */
    m->mask = a->inputs[1 - j];
    s = a->inputs[j];
    take(m, add);
  }
  int post = -1;
  int mm = cs_match_producer(g, s, CS_OP_MATMUL);
  if (mm < 0) { /* a scale after the product: Mul by c or Div by c */
    int div = cs_match_producer(g, s, CS_OP_DIV);
    if (div >= 0 && only_reader(g, s)) {
      const cs_value *cv = cs_graph_value(g, cs_graph_node(g, div)->inputs[1]);
      if (!cv->data || cv->dtype != CS_DTYPE_F32 || cs_value_numel(cv) != 1) return 0;
      m->scale /= ((const float *)cv->data)[0];
      take(m, div);
      s = cs_graph_node(g, div)->inputs[0];
    } else {
      s = scaled(g, s, &m->scale, &post);
      if (post < 0) return 0;
      take(m, post);
    }
    mm = cs_match_producer(g, s, CS_OP_MATMUL);
  }
  if (mm < 0 || !only_reader(g, s)) return 0;
  take(m, mm);
  int mq, mk;
  m->q = scaled(g, cs_graph_node(g, mm)->inputs[0], &m->scale, &mq);
  int kt = scaled(g, cs_graph_node(g, mm)->inputs[1], &m->scale, &mk);
  take(m, mq);
  take(m, mk);
  m->k = untranspose(g, kt, m);
  if (m->k < 0) return 0;
  m->v = unrepeat_v(g, m->v, m);
  return 1;
}

static int eligible(cs_graph *g, const sdpa *m, int64_t *args) {
  const cs_value *q = cs_graph_value(g, m->q), *k = cs_graph_value(g, m->k), *v = cs_graph_value(g, m->v);
  if (q->dtype != CS_DTYPE_F32 || k->dtype != CS_DTYPE_F32 || v->dtype != CS_DTYPE_F32) return 0;
  if (q->rank != 4 || k->rank != 4 || v->rank != 4 || q->shape[0] != 1 || q->shape[2] != 1 || k->shape[0] != 1)
    return 0;
  int64_t nq = q->shape[1], hd = q->shape[3], nkv = k->shape[1], L = k->shape[2];
  if (k->shape[3] != hd || nq % nkv != 0 || memcmp(v->shape, k->shape, sizeof(int64_t) * 4) != 0) return 0;
  if (fabs(m->scale * sqrt((double)hd) - 1.0) > 1e-6) return 0;
  if (m->mask >= 0) {
    const cs_value *mv = cs_graph_value(g, m->mask);
    if (mv->dtype != CS_DTYPE_F32 || cs_value_numel(mv) != L || mv->rank < 1 || mv->shape[mv->rank - 1] != L)
      return 0;
  }
  if (cs_mm_const_reachable(g, m->q)) return 0; /* ConstReachability: fold, never offload */
  args[0] = nq, args[1] = nkv, args[2] = hd, args[3] = L;
  return 1;
}

cs_status pass_fuse_sdpa_decode(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_MATMUL) continue;
    sdpa m;
    int64_t args[4];
    if (!match(g, i, &m) || !eligible(g, &m, args)) continue;
    char *origin = cs_origin_join(g, m.nodes, m.n_nodes);
    if (!origin) return CS_ERR_NOMEM; /* message recorded */
    int out = cs_graph_node(g, i)->outputs[0];
    for (int j = 0; j < m.n_nodes; j++) cs_graph_remove_node(g, m.nodes[j]);
    int inputs[4] = {m.q, m.k, m.v, m.mask};
    int id = cs_add_kernel(g, CS_OP_K_SDPA_DECODE, origin, 4, inputs, out);
    free(origin);
    if (cs_mm_set_args(g, id, 4, args) != CS_OK) return CS_ERR_NOMEM;
  }
  return CS_OK;
}
