/*
 * QuantizeBeforeMoves — ops that only move a float tensor's values (Pad,
 * Slice, Split, Concat, Reshape, Transpose, …) on their way to
 * QuantizeLinears of one set of parameters P get the quantization before
 * them, so that they run on int8:
 *
 *   Q_P( moves( f ) )  →  Q_P( moves( DQ_P( Q_P( f ) ) ) )
 *
 * f any float tensor but a dequantize's (a LayerNormalization's output:
 * Swin as PT2E exports it pads, rolls — Slice, Slice, Concat, twice — and
 * partitions the windows — Reshape, Transpose, Reshape — between its
 * LayerNorm and the Q before the attention's projection).
 *
 * Exact: g = DQ_P∘Q_P is elementwise, so a move of g(f) is g of the move
 * of f, element by element (a Pad's constant is not an element of f, and
 * it is the same constant on both sides), and Q_P∘g = Q_P. The rest is the
 * existing passes': EliminateQDQTransparent sinks DQ_P below every move
 * (a Pad's constant becomes the code whose DQ_P is the constant, where one
 * is exact; otherwise the Pad and what follows stay float, still exact),
 * and EliminateQDQRoundTrip removes DQ_P → Q_P at the end. Its idea is
 * QuantizeConcatMaxPool's, for moves.
 *
 * Taken when the moves form a closed set: each one's outputs are read
 * only by moves of the set or by QuantizeLinears to int8 with P
 * (per-tensor), none is a graph output, and every tensor entering the set
 * is float, not a constant. Declined when the tensors entering hold more
 * than twice the elements of those leaving (a Slice that keeps a corner:
 * quantizing all of f would cost more than the moves save), and when the
 * moves are Reshapes, Flattens, Squeezes and Unsqueezes alone (views:
 * nothing to save, and the Q next to an activation's table would split a
 * chain the later passes fuse whole).
 *
 * The Q_P after f is new next to f's producer, and an int8 fusion of that
 * producer with it would give its own bytes, not the float path's that
 * ONNX Runtime computes there (it propagates no Q back through a Pad, a
 * Slice or a Concat): a Conv, MatMul or Add before the moves declines.
 * Taken after a graph input, a LayerNormalization (k_layer_norm_i8 gives
 * the float path's bytes), a float unary op of a DQ (its table is the float
 * kernel's; a Relu of a Conv is not: the Conv's fusion would take it as
 * its tail) or a MaxPool, or after anything with -ort-exact=0.
 */
#include <stdlib.h>
#include <string.h>

#include "eval/unary_fns.h"
#include "pass_list.h"
#include "quant/quant.h"
#include "match/pattern.h"

enum { MAX_SET = 64, MAX_READERS = 16 };

static int is_move(cs_op op) {
  switch (op) {
    case CS_OP_PAD: case CS_OP_SLICE: case CS_OP_SPLIT: case CS_OP_CONCAT: case CS_OP_RESHAPE: case CS_OP_FLATTEN:
    case CS_OP_SQUEEZE: case CS_OP_UNSQUEEZE: case CS_OP_TRANSPOSE:
      return 1;
    default:
      return 0;
  }
}

/* Input i of a move carries data (the rest are shapes, pads, starts, …). */
static int is_data_input(const cs_node *n, int i) { return n->op == CS_OP_CONCAT || i == 0; }

/* Node id is a QuantizeLinear to int8 with per-tensor parameters equal to
 * *p (p NULL: any); 1 or 0. */
static int q_with(cs_graph *g, int id, const cs_qparams *p) {
  const cs_node *n = cs_graph_node(g, id);
  if (n->op != CS_OP_QUANTIZE_LINEAR || cs_graph_value(g, n->outputs[0])->dtype != CS_DTYPE_I8) return 0;
  cs_qparams qp;
  if (cs_qparams_read(g, n, &qp) != CS_OK) {
    cs_error_clear();
    return 0;
  }
  int ok = cs_qparams_per_tensor(&qp) && (!p || cs_qparams_equal(&qp, p));
  cs_qparams_free(&qp);
  return ok;
}

typedef struct dag {
  int nodes[MAX_SET], n;
  int sources[MAX_SET], n_src; /* float values entering the set */
} dag;

static int in_set(const dag *d, int id) {
  for (int i = 0; i < d->n; i++)
    if (d->nodes[i] == id) return 1;
  return 0;
}

/* The moves that feed value v, up to the tensors that are not a move's:
 * 1, or 0 when there are too many or a non-data input is not constant. */
static int collect(cs_graph *g, int v, dag *d) {
  int p = cs_graph_value(g, v)->producer;
  if (p < 0 || !is_move(cs_graph_node(g, p)->op)) {
    for (int i = 0; i < d->n_src; i++)
      if (d->sources[i] == v) return 1;
    if (d->n_src == MAX_SET) return 0;
    d->sources[d->n_src++] = v;
    return 1;
  }
  if (in_set(d, p)) return 1;
  if (d->n == MAX_SET) return 0;
  d->nodes[d->n++] = p;
  const cs_node *n = cs_graph_node(g, p);
  for (int i = 0; i < n->n_inputs; i++) {
    int in = cs_graph_node(g, p)->inputs[i];
    if (!is_data_input(n, i)) {
      if (in >= 0 && !cs_match_is_const(g, in)) return 0;
    } else if (in < 0 || !collect(g, in, d)) {
      return 0;
    }
  }
  return 1;
}

/* f's producer gives the float path's bytes with a Q right after it, on
 * int8 as in float (the header's list); 1 or 0. */
static int producer_keeps_bytes(cs_graph *g, const cs_target *t, int f) {
  int p = cs_graph_value(g, f)->producer;
  if (p < 0 || !t->ort_exact) return 1;
  const cs_node *n = cs_graph_node(g, p);
  tidsp_unary_f32_params u;
  /* a unary op of a DQ only: one of a Conv's output (a Relu, a Clip) is
   * the tail its int8 fusion would take with the new Q */
  return n->op == CS_OP_LAYER_NORMALIZATION || n->op == CS_OP_MAX_POOL ||
         (cs_unary_params_of(g, n, &u) == CS_UNARY_OK && n->n_inputs >= 1 && cs_match_dq_i8(g, n->inputs[0]) >= 0);
}

/* Every output of the set read only by the set or by Qs with P, none a
 * graph output, every output float; the sources float, not constants, not
 * DQ outputs all (then there is nothing to do), their producers keeping
 * their bytes; one move at least that moves bytes (Reshapes alone are
 * views, and FuseQDQToActivationLUT takes op → Reshape → Q whole, which
 * FuseWidenIntoProducer then folds into an exact requantization); the
 * elements the new Qs read at most twice the old Qs'. */
static int closed(cs_graph *g, const cs_target *t, const dag *d, const cs_qparams *p) {
  int64_t in = 0, out = 0;
  int fresh = 0;
  for (int i = 0; i < d->n_src; i++) {
    const cs_value *s = cs_graph_value(g, d->sources[i]);
    if (s->dtype != CS_DTYPE_F32 || s->data || cs_match_is_const(g, d->sources[i])) return 0;
    if (cs_match_producer(g, d->sources[i], CS_OP_DEQUANTIZE_LINEAR) >= 0) continue;
    if (!producer_keeps_bytes(g, t, d->sources[i])) return 0;
    fresh = 1;
    in += cs_value_numel(s);
  }
  int moves_bytes = 0;
  for (int k = 0; k < d->n; k++) {
    const cs_node *n = cs_graph_node(g, d->nodes[k]);
    moves_bytes |= n->op != CS_OP_RESHAPE && n->op != CS_OP_FLATTEN && n->op != CS_OP_SQUEEZE &&
                   n->op != CS_OP_UNSQUEEZE;
    for (int o = 0; o < n->n_outputs; o++) {
      int v = n->outputs[o], readers[MAX_READERS];
      if (v < 0) continue;
      if (cs_graph_is_output(g, v) || cs_graph_value(g, v)->dtype != CS_DTYPE_F32) return 0;
      int r = cs_graph_consumers(g, v, readers, MAX_READERS);
      if (r > MAX_READERS) return 0;
      for (int j = 0; j < r; j++) {
        if (in_set(d, readers[j])) continue;
        if (!q_with(g, readers[j], p)) return 0;
        out += cs_value_numel(cs_graph_value(g, v));
      }
    }
  }
  return fresh && moves_bytes && in <= 2 * out;
}

/* Q_P → DQ_P after source s (float, not a DQ's), read by the set's nodes
 * instead of s; q: a sink Q, whose scale and zero point values they use. */
static cs_status quantize_source(cs_graph *g, const dag *d, int s, int q, const cs_qparams *p) {
  const cs_node *qn = cs_graph_node(g, q);
  int t, f;
  cs_status st = cs_add_qdq_after(g, s, qn->inputs[1], qn->n_inputs > 2 ? qn->inputs[2] : -1, p, qn->name, &t, &f);
  if (st != CS_OK) return st;
  for (int k = 0; k < d->n; k++) {
    const cs_node *n = cs_graph_node(g, d->nodes[k]);
    for (int i = 0; i < n->n_inputs; i++)
      if (is_data_input(n, i) && cs_graph_node(g, d->nodes[k])->inputs[i] == s) cs_node_set_input(g, d->nodes[k], i, f);
  }
  return CS_OK;
}

static cs_status hoist(cs_graph *g, const cs_target *t, int q) {
  const cs_node *qn = cs_graph_node(g, q);
  int v = qn->inputs[0];
  int p = v >= 0 ? cs_graph_value(g, v)->producer : -1;
  if (p < 0 || !is_move(cs_graph_node(g, p)->op)) return CS_OK;
  cs_qparams qp;
  if (!q_with(g, q, NULL) || cs_qparams_read(g, qn, &qp) != CS_OK) {
    cs_error_clear();
    return CS_OK;
  }
  dag *d = calloc(1, sizeof *d);
  cs_status st = d ? CS_OK : cs_error(CS_ERR_NOMEM, "out of memory (node '%s')", qn->name);
  if (st == CS_OK && collect(g, v, d) && closed(g, t, d, &qp)) {
    for (int i = 0; i < d->n_src && st == CS_OK; i++)
      if (cs_match_producer(g, d->sources[i], CS_OP_DEQUANTIZE_LINEAR) < 0)
        st = quantize_source(g, d, d->sources[i], q, &qp);
  }
  free(d);
  cs_qparams_free(&qp);
  return st;
}

cs_status pass_quantize_before_moves(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes; /* the Qs it adds are not visited */
  cs_status st = CS_OK;
  for (int i = 0; i < n && st == CS_OK; i++)
    if (!cs_graph_node(g, i)->dead && cs_graph_node(g, i)->op == CS_OP_QUANTIZE_LINEAR) st = hoist(g, t, i);
  return st;
}
