/*
 * FuseQDQToActivationLUT — an 8-bit activation between a dequantize and a
 * quantize is one 256-entry table, computed at compile time:
 *
 *   Q( f( DQ(x:i8) ) ) : i8   → k_lut_i8(lut, x)
 *   f: a unary float op (cstatic/unary_ops.def: Relu, Clip, Sigmoid, …),
 *      or Add, Sub, Mul, Div with a one-element float constant on either
 *      side (PP-OCR's hard-swish ends in DQ → Div(6) → Q: ORT quantizes
 *      no Div, so it runs DQ, the float Div and Q — three passes over the
 *      tensor for what is a function of one int8 code)
 *
 * lut[q] = Q_y(f(DQ_x(q))) with f computed by the runtime's float kernel
 * itself (tidsp_unary_f32, tidsp_binary_f32: their reference entry points,
 * so that the table never depends on the compiling CPU; the dispatched
 * variants give the same bits by contract) — the same values the float
 * path DQ → f → Q produces (and ONNX Runtime's QLinear lookup tables, and
 * its float Add/Sub/Mul/Div: one IEEE operation per element). Pow is left
 * to the float path: its powf is the C library's, not one operation.
 *
 * A Reshape/Flatten/Squeeze/Unsqueeze between f and the Q (ORT's quantizer
 * leaves one after a Gelu it does not quantize) is taken into the chain:
 * quantizing commutes with a row-major reshape, and the table is
 * elementwise, so its output simply has the reshaped shape.
 *
 * A MaxPool between f and the Q (PT2E's c7x quantizer leaves LeakyRelu →
 * MaxPool → Q, a YOLO-style block) runs on the table's codes: Q(max v_i)
 * = max Q(v_i) (match/qdq_tail.h cs_table_before_pool), unless f gives a
 * NaN on some input code (Sqrt of a negative: the float pool's answer
 * then depends on where the NaN sits).
 */
#include <string.h>

#include "pass_list.h"
#include "quant/quant.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"
#include "eval/unary_fns.h"

/* The reshape-like node that alone reads v (and is not a graph output),
 * else -1. */
static int reshape_between(cs_graph *g, int v) {
  int c = cs_match_single_consumer(g, v);
  if (c < 0) return -1;
  cs_op op = cs_graph_node(g, c)->op;
  int is_reshape = op == CS_OP_RESHAPE || op == CS_OP_FLATTEN || op == CS_OP_SQUEEZE || op == CS_OP_UNSQUEEZE;
  return is_reshape && cs_graph_node(g, c)->inputs[0] == v ? c : -1;
}

/* The float function of one tensor x that a node computes: a unary op,
 * or x op c / c op x with c a one-element float constant. */
typedef struct table_fn {
  int binary;                 /* 0: unary */
  tidsp_unary_f32_params unary;
  tidsp_binary_op op;
  float c;
  int c_first;                /* c op x */
  int x;                      /* the node's input that is x */
} table_fn;

/* Node n as a table_fn; 0 when it is none. */
static int table_fn_of(cs_graph *g, const cs_node *n, table_fn *f) {
  memset(f, 0, sizeof *f);
  if (cs_unary_params_of(g, n, &f->unary) == CS_UNARY_OK) return 1;
  switch (n->op) {
    case CS_OP_ADD: f->op = TIDSP_BINARY_ADD; break;
    case CS_OP_SUB: f->op = TIDSP_BINARY_SUB; break;
    case CS_OP_MUL: f->op = TIDSP_BINARY_MUL; break;
    case CS_OP_DIV: f->op = TIDSP_BINARY_DIV; break;
    default: return 0;
  }
  if (n->n_inputs != 2 || n->inputs[0] < 0 || n->inputs[1] < 0) return 0;
  for (int side = 0; side < 2; side++) {
    const cs_value *c = cs_graph_value(g, n->inputs[side]);
    if (c->data && c->dtype == CS_DTYPE_F32 && cs_value_numel(c) == 1 &&
        cs_value_numel(cs_graph_value(g, n->inputs[1 - side])) == cs_value_numel(cs_graph_value(g, n->outputs[0]))) {
      f->binary = 1;
      f->c = (float)cs_const_get_float(c, 0);
      f->c_first = side == 0;
      f->x = 1 - side;
      return 1;
    }
  }
  return 0;
}

/* y = f(x) on 256 values by the runtime's float kernel: TIDSP_OK or its
 * refusal. */
static int32_t table_fn_eval(const table_fn *f, const float x[256], float y[256]) {
  if (!f->binary) {
    tidsp_unary_f32_params p = f->unary;
    p.n = 256;
    return tidsp_unary_f32__ref(&p, x, y);
  }
  float c[256];
  for (int i = 0; i < 256; i++) c[i] = f->c;
  tidsp_binary_f32_params p;
  memset(&p, 0, sizeof p);
  p.op = f->op;
  p.bc.rank = 1;
  p.bc.shape[0] = 256;
  p.bc.a_stride[0] = p.bc.b_stride[0] = 1;
  return f->c_first ? tidsp_binary_f32__ref(&p, c, x, y) : tidsp_binary_f32__ref(&p, x, c, y);
}

/* f gives a NaN on some int8 code's dequantized value (or refuses them). */
static int nan_on_codes(const table_fn *f, const cs_qparams *xq) {
  float x[256], y[256];
  cs_lut_inputs(xq, x);
  if (table_fn_eval(f, x, y) != TIDSP_OK) return 1;
  for (int i = 0; i < 256; i++)
    if (y[i] != y[i]) return 1;
  return 0;
}

cs_status pass_fuse_qdq_activation(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead) continue;
    table_fn f;
    if (!table_fn_of(g, n, &f)) continue;
    int xdq = cs_match_dq_i8(g, n->inputs[f.x]);
    cs_qparams xq;
    if (!cs_match_dq_params(g, xdq, &xq)) continue;
    cs_qdq_tail tail;
    int reshape = reshape_between(g, n->outputs[0]);
    int pool = reshape < 0 && !nan_on_codes(&f, &xq) ? cs_match_max_pool_after(g, n->outputs[0]) : -1;
    int from = reshape >= 0 ? cs_graph_node(g, reshape)->outputs[0]
               : pool >= 0  ? cs_graph_node(g, pool)->outputs[0]
                            : n->outputs[0];
    if (!cs_match_qdq_tail(g, from, 0, &tail)) { cs_qparams_free(&xq); continue; }
    char base[256];
    snprintf(base, sizeof base, "%s", n->name ? n->name : "act");
    float x[256], y[256];
    cs_lut_inputs(&xq, x);
    int lut = table_fn_eval(&f, x, y) != TIDSP_OK ? -2 : cs_lut_const_values(g, base, y, &tail.out);
    if (lut == -2) {
      cs_qparams_free(&xq);
      cs_qparams_free(&tail.out);
      return cs_error(CS_ERR_INTERNAL, "node '%s' (%s): its float kernel refused the table's inputs", n->name,
                      cs_op_name(n->op));
    }
    int x_int = cs_graph_node(g, xdq)->inputs[0];
    int inputs[2] = {lut, x_int};
    int chain[2] = {i, reshape};
    int k = lut < 0 ? -1
            : pool >= 0 ? cs_table_before_pool(g, i, pool, &tail, 1, CS_OP_K_LUT_I8, 2, inputs)
                        : cs_replace_chain(g, chain, 2, &tail, CS_OP_K_LUT_I8, 2, inputs);
    if (k >= 0) cs_graph_node(g, k)->k.lut.n = (int32_t)cs_value_numel(cs_graph_value(g, x_int));
    cs_qparams_free(&xq);
    cs_qparams_free(&tail.out);
    if (k < 0) return CS_ERR_NOMEM; /* message recorded */
  }
  return CS_OK;
}
