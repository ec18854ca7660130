/*
 * FuseQDQToSiLU — the spec's FuseQDQToC7xActivation for silu: x·Sigmoid(x)
 * between QDQ is a function of the int8 x alone, so it is one 256-entry
 * table (k_lut_i8, how the project implements the C7x activations):
 *
 *   Q( Mul( DQ(x), Sigmoid(DQ(x)) ) )                  float SiLU (PT2E)
 *   Q( [Relu|Clip]( Mul( DQ(x), DQ( Q_s(Sigmoid(DQ(x))) ) ) ) )
 *                                                      ORT quantize_static:
 *                                                      QLinearSigmoid, QLinearMul
 *     → k_lut_i8(T, x)
 *
 * Both DQ(x) read the same int8 tensor with the same per-tensor
 * parameters (one DQ node or two); the Mul takes its operands in either
 * order. T[q] is what the unfused graph computes for x = q, with the same
 * kernels: the float form DQ → MLAS's logistic (the runtime's Sigmoid) →
 * a float multiply → Q; the quantized form the sigmoid table of
 * QLinearSigmoid (MLAS's logistic, quantized) followed by the QLinearMul
 * kernel on (q, S[q]) with ORT's constants. So the table equals ORT
 * element for element, in either requant mode.
 */
#include <string.h>

#include "match/fused_common.h"
#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

typedef struct silu_match {
  int mul, sig, q_s, dq_s; /* q_s, dq_s: -1 in the float form */
  int x;                   /* the int8 input */
  cs_qparams xq, sq;       /* sq: the sigmoid's quantization (quantized form) */
  cs_qdq_tail tail;
} silu_match;

/* DQ node of value v if it is a per-tensor int8 DQ (fills qp), else -1. */
static int dq_of(cs_graph *g, int v, cs_qparams *qp) {
  int dq = cs_match_dq_i8(g, v);
  return cs_match_dq_params(g, dq, qp) ? dq : -1;
}

/* Operand `sv` of the Mul is Sigmoid(DQ(x)) (float form) or
 * DQ(Q(Sigmoid(DQ(x)))) (quantized form), with x the int8 tensor of the
 * other operand's DQ. */
static int match_sigmoid_side(cs_graph *g, int sv, int x, const cs_qparams *xq, silu_match *m) {
  m->q_s = m->dq_s = -1;
  int sig = cs_match_producer(g, sv, CS_OP_SIGMOID);
  if (sig < 0) {
    cs_qparams sq;
    int dq_s = dq_of(g, sv, &sq);
    if (dq_s < 0) return 0;
    int q_s = cs_match_producer(g, cs_graph_node(g, dq_s)->inputs[0], CS_OP_QUANTIZE_LINEAR);
    sig = q_s >= 0 ? cs_match_producer(g, cs_graph_node(g, q_s)->inputs[0], CS_OP_SIGMOID) : -1;
    if (sig < 0 || cs_match_single_consumer(g, cs_graph_node(g, q_s)->outputs[0]) != dq_s ||
        cs_match_single_consumer(g, cs_graph_node(g, sig)->outputs[0]) != q_s) {
      cs_qparams_free(&sq);
      return 0;
    }
    m->q_s = q_s;
    m->dq_s = dq_s;
    m->sq = sq;
  } else if (cs_match_single_consumer(g, sv) < 0) {
    return 0;
  }
  cs_qparams inq;
  int in_dq = dq_of(g, cs_graph_node(g, sig)->inputs[0], &inq);
  int same = in_dq >= 0 && cs_graph_node(g, in_dq)->inputs[0] == x && cs_qparams_equal(&inq, xq);
  if (in_dq >= 0) cs_qparams_free(&inq);
  if (!same) {
    if (m->dq_s >= 0) cs_qparams_free(&m->sq);
    return 0;
  }
  m->sig = sig;
  return 1;
}

static int match(cs_graph *g, int mul, silu_match *m) {
  memset(m, 0, sizeof *m);
  const cs_node *n = cs_graph_node(g, mul);
  if (n->n_inputs != 2) return 0;
  for (int side = 0; side < 2; side++) {
    cs_qparams xq;
    int xdq = dq_of(g, n->inputs[side], &xq);
    if (xdq < 0) continue;
    int x = cs_graph_node(g, xdq)->inputs[0];
    if (match_sigmoid_side(g, n->inputs[1 - side], x, &xq, m)) {
      int quantized = m->dq_s >= 0;
      /* ORT's QLinearMul takes the clamp of a following Relu/Clip; the
       * float form is DQ → Sigmoid → Mul → Q with nothing between. */
      if (cs_match_qdq_tail(g, n->outputs[0], quantized, &m->tail)) {
        m->mul = mul;
        m->x = x;
        m->xq = xq;
        return 1;
      }
      if (quantized) cs_qparams_free(&m->sq);
    }
    cs_qparams_free(&xq);
  }
  return 0;
}

/* The runtime's float Sigmoid (MLAS's logistic) on n values: its reference
 * entry point, so that the table never depends on the compiling CPU. */
static void sigmoid_f32(const float *x, float *y, int32_t n) {
  tidsp_unary_f32_params p;
  memset(&p, 0, sizeof p);
  p.n = n;
  p.op = TIDSP_UNARY_SIGMOID;
  tidsp_unary_f32__ref(&p, x, y);
}

static void table(cs_graph *g, const silu_match *m, int8_t *lut) {
  int8_t q[256];
  float xf[256], sf[256];
  for (int i = 0; i < 256; i++) {
    q[i] = (int8_t)(i - 128);
    xf[i] = cs_dequantize_one(q[i], m->xq.scale[0], m->xq.zp[0]);
  }
  sigmoid_f32(xf, sf, 256);
  if (m->dq_s < 0) {
    int64_t qmin, qmax;
    cs_dtype_range(m->tail.out.dtype, &qmin, &qmax);
    for (int i = 0; i < 256; i++) {
      float v = xf[i] * sf[i];
      lut[i] = (int8_t)cs_quantize_one(v, m->tail.out.scale[0], m->tail.out.zp[0], qmin, qmax);
    }
    return;
  }
  /* QLinearSigmoid's table, then the QLinearMul kernel on (q, S[q]). */
  int8_t s[256];
  int64_t smin, smax;
  cs_dtype_range(m->sq.dtype, &smin, &smax);
  for (int i = 0; i < 256; i++)
    s[i] = (int8_t)cs_quantize_one(sf[i], m->sq.scale[0], m->sq.zp[0], smin, smax);
  tidsp_mul_i8_params p;
  cs_mul_i8_params_init(&m->xq, &m->sq, &m->tail.out, m->tail.lo, m->tail.hi,
                        cs_qdq_tail_domain_offset(g, &m->tail), TIDSP_REQUANT_FLOAT, &p);
  p.bc.rank = 1;
  p.bc.shape[0] = 256;
  p.bc.a_stride[0] = p.bc.b_stride[0] = 1;
  tidsp_mul_i8__ref(&p, q, s, lut);
}

cs_status pass_fuse_qdq_silu(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_MUL) continue;
    silu_match m;
    if (!match(g, i, &m)) continue;
    int8_t lut[256];
    table(g, &m, lut);
    char base[256];
    snprintf(base, sizeof base, "%s", n->name ? n->name : "silu");
    int64_t shape[1] = {256};
    int lv = cs_add_const_named(g, base, "silu_lut", CS_DTYPE_I8, 1, shape, lut);
    int inputs[2] = {lv, m.x};
    int chain[4] = {m.sig, m.q_s, m.dq_s, m.mul};
    int k = cs_replace_chain(g, chain, 4, &m.tail, CS_OP_K_LUT_I8, 2, inputs);
    cs_graph_node(g, k)->k.lut.n = (int32_t)cs_value_numel(cs_graph_value(g, m.x));
    cs_qparams_free(&m.xq);
    if (m.dq_s >= 0) cs_qparams_free(&m.sq);
    cs_qparams_free(&m.tail.out);
  }
  return CS_OK;
}
