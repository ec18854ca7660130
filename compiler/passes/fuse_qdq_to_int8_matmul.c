/*
 * FuseQDQToInt8MatMul — fully connected layers:
 *
 *   Q( [Relu|Clip]( Gemm( DQ(x:i8), DQ(w:i8 const), [bias] ) ) )          transA = 0,
 *                                                    beta = 1, alpha = 1 with a bias
 *   Q( [Relu|Clip]( [Add(·, bias)]( MatMul( DQ(x:i8), W ) ) ) )
 *       W = DQ(w:i8 const [K,N])  |  Transpose[1,0]( DQ(w:i8 const [N,K]) )
 *     → k_matmul_i8(x, w[N][K], bias_i32, rq)
 *
 * The weight is stored [N][K] (transposed at compile time when needed).
 * Multipliers as ONNX Runtime's QGemm/QLinearMatMul:
 *   fl(fl(fl(alpha · xs) · ws[n]) / ys). x is viewed as [M, K] with M the
 * product of its leading dimensions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/fused_common.h"
#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

typedef struct mm_match {
  int root;        /* Gemm or MatMul */
  int transpose;   /* Transpose node on the weight, or -1 */
  int add;         /* bias Add after MatMul, or -1 */
  int wdq;
  int bias;        /* bias value or -1 */
  int w_is_nk;     /* weight constant is stored [N][K] */
  float alpha;
  cs_qparams xq, wq;
  cs_qdq_tail tail;
} mm_match;

static int match(cs_graph *g, int id, mm_match *m) {
  memset(m, 0, sizeof *m);
  m->transpose = m->add = m->bias = -1;
  m->alpha = 1.0f;
  m->root = id;
  const cs_node *n = cs_graph_node(g, id);
  if (n->n_inputs < 2) return 0;
  int xdq = cs_match_dq_i8(g, n->inputs[0]);
  int out = n->outputs[0];
  if (n->op == CS_OP_GEMM) {
    if (cs_node_attr_int(n, "transA", 0) != 0) return 0;
    m->alpha = cs_node_attr_float(n, "alpha", 1.0f);
    float beta = cs_node_attr_float(n, "beta", 1.0f);
    int trans_b = (int)cs_node_attr_int(n, "transB", 0);
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
      if (beta != 1.0f) return 0;
      m->bias = n->inputs[2];
    }
    if (!cs_match_weight_dq(g, n->inputs[1], trans_b ? 0 : 1, &m->wq, &m->wdq)) return 0;
    m->w_is_nk = trans_b;
  } else {
    int w = n->inputs[1];
    int tr = cs_match_producer(g, w, CS_OP_TRANSPOSE);
    if (tr >= 0) {
      const cs_node *t = cs_graph_node(g, tr);
      int cnt = 0;
      const int64_t *perm = cs_node_attr_ints(t, "perm", &cnt);
      if (perm && !(cnt == 2 && perm[0] == 1 && perm[1] == 0)) return 0;
      if (cs_graph_value(g, t->inputs[0])->rank != 2) return 0;
      if (cs_match_single_consumer(g, w) != id) return 0;
      if (!cs_match_weight_dq(g, t->inputs[0], 0, &m->wq, &m->wdq)) return 0;
      m->transpose = tr;
      m->w_is_nk = 1;
    } else {
      if (!cs_match_weight_dq(g, w, 1, &m->wq, &m->wdq)) return 0;
      m->w_is_nk = 0;
    }
    int c = cs_match_single_consumer(g, out);
    if (c >= 0 && cs_graph_node(g, c)->op == CS_OP_ADD) {
      const cs_node *a = cs_graph_node(g, c);
      int other = a->inputs[0] == out ? a->inputs[1] : a->inputs[0];
      const cs_value *ov = cs_graph_value(g, other);
      int is_const_bias = cs_match_is_const(g, other) ||
                          (cs_match_producer(g, other, CS_OP_DEQUANTIZE_LINEAR) >= 0 &&
                           cs_match_is_const(g, cs_graph_node(g, cs_graph_value(g, other)->producer)->inputs[0]));
      if (is_const_bias && ov->rank == 1) {
        m->add = c;
        m->bias = other;
        out = a->outputs[0];
      }
    }
  }
  const cs_value *wv = cs_graph_value(g, cs_graph_node(g, m->wdq)->inputs[0]);
  if (wv->rank != 2) { cs_qparams_free(&m->wq); return 0; }
  if (!cs_match_dq_params(g, xdq, &m->xq)) { cs_qparams_free(&m->wq); return 0; }
  if (!cs_match_qdq_tail(g, out, 1, &m->tail)) {
    cs_qparams_free(&m->wq); cs_qparams_free(&m->xq);
    return 0;
  }
  /* ORT 1.30's GemmNodeGroupSelector: no QGemm for alpha != 1 with a bias
   * (its int32 bias would be scaled by alpha too); DQ → Gemm → Q runs in
   * float. */
  if (m->alpha != 1.0f && m->bias >= 0) {
    cs_qparams_free(&m->wq); cs_qparams_free(&m->xq); cs_qparams_free(&m->tail.out);
    return 0;
  }
  return 1;
}

static cs_status rewrite(cs_graph *g, const cs_target *t, mm_match *m) {
  const cs_node *n = cs_graph_node(g, m->root);
  int xdq = cs_graph_value(g, n->inputs[0])->producer;
  int x_int = cs_graph_node(g, xdq)->inputs[0];
  const cs_value *x = cs_graph_value(g, x_int);
  const cs_value *wv = cs_graph_value(g, cs_graph_node(g, m->wdq)->inputs[0]);
  int32_t K = (int32_t)(m->w_is_nk ? wv->shape[1] : wv->shape[0]);
  int32_t N = (int32_t)(m->w_is_nk ? wv->shape[0] : wv->shape[1]);
  if (x->rank < 1 || x->shape[x->rank - 1] != K) return CS_OK;
  int64_t M = cs_value_numel(x) / K;
  if (m->wq.count != 1 && m->wq.count != N) return CS_OK;
  char base[256];
  snprintf(base, sizeof base, "%s", n->name ? n->name : "matmul");
  /* Weight in [N][K]. */
  int w_id = cs_graph_node(g, m->wdq)->inputs[0];
  if (!m->w_is_nk) {
    int8_t *wt = malloc((size_t)N * (size_t)K);
    if (!wt) return cs_error(CS_ERR_NOMEM, "out of memory");
    const int8_t *src = (const int8_t *)wv->data;
    for (int32_t k = 0; k < K; k++)
      for (int32_t j = 0; j < N; j++) wt[(size_t)j * K + k] = src[(size_t)k * N + j];
    int64_t shape[2] = {N, K};
    w_id = cs_add_const_named(g, base, "weight_nk", CS_DTYPE_I8, 2, shape, wt);
    free(wt);
    if (w_id < 0) return CS_ERR_NOMEM; /* message recorded */
  }
  float xs = m->xq.scale[0], ys = m->tail.out.scale[0];
  int no_bias = 0;
  int bias = -1;
  if (m->bias >= 0) {
    bias = cs_fold_bias_i32(g, m->bias, xs * m->alpha, m->wq.scale, m->wq.count, N, base, &no_bias);
    if (bias == -2) return CS_OK;
    if (bias == -3) return CS_ERR_NOMEM;
  } else {
    no_bias = 1;
  }
  tidsp_matmul_params p;
  memset(&p, 0, sizeof p);
  int rq = cs_requant_blob_xwy(g, base, t, N, m->alpha, xs, m->wq.scale, m->wq.count, ys, &p.rq);
  if (rq == -2) return CS_OK; /* no Q31 form: float path */
  if (rq < 0) return CS_ERR_NOMEM;
  p.m = (int32_t)M;
  p.k = K;
  p.n = N;
  p.x_zp = m->xq.zp[0];
  p.w_zp = m->wq.zps[0];
  p.rq.out_zp = m->tail.out.zp[0];
  cs_output_clamp(&m->tail.out, m->tail.lo, m->tail.hi, &p.rq.out_min, &p.rq.out_max);
  int inputs[4] = {x_int, w_id, no_bias ? -1 : bias, rq};
  int chain[3] = {m->transpose, m->root, m->add};
  int id = cs_replace_chain(g, chain, 3, &m->tail, CS_OP_K_MATMUL_I8, 4, inputs);
  if (id < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, id)->k.matmul = p;
  return CS_OK;
}

cs_status pass_fuse_qdq_to_int8_matmul(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || (node->op != CS_OP_GEMM && node->op != CS_OP_MATMUL)) continue;
    /* ORT runs it as MatMulNBits, not as a QDQ group (mark_matmul_nbits.c) */
    int nbits = 0;
    if (cs_node_attr_ints(node, "ort_nbits", &nbits)) continue;
    mm_match m;
    if (!match(g, i, &m)) continue;
    cs_status st = rewrite(g, t, &m);
    cs_qparams_free(&m.xq);
    cs_qparams_free(&m.wq);
    cs_qparams_free(&m.tail.out);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
