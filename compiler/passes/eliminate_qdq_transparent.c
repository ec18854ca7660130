/*
 * EliminateQDQTransparent — data-movement ops run on the integers:
 *
 *   op( DQ(x:i8) ) → DQ( op(x) )      op ∈ {Reshape, Flatten, Transpose,
 *                                      Squeeze, Unsqueeze, Slice, Split,
 *                                      MaxPool, Gather, Expand,
 *                                      Concat (equal params)}
 *   Q( Concat( DQ(x0), DQ(x1), … ) ) → Concat( x0', x1', … )
 *        xi' = xi, or k_lut_i8 rescaling xi to the Q's parameters
 *   Q( Pad( DQ(x:i8), c ) )  → Q( DQ( Pad(x, q_c) ) )   q_c: the code whose
 *        DQ is c exactly (c = 0: the zero point); edge and reflect pads
 *        have no value (Swin pads between its LayerNorm and the Q)
 *
 * Exact: these ops only move (or, for MaxPool, select) values, and Q∘DQ is
 * monotonic. The dequantize sinks below the op, where EliminateQDQRoundTrip
 * or a later fusion meets it. The Concat form is ONNX Runtime's
 * QLinearConcat (memcpy when the parameters match, a table otherwise).
 *
 * ONNX Runtime's own propagation takes a dequantize through Reshape,
 * Transpose, Squeeze, Unsqueeze, Slice and MaxPool only (ort_propagates);
 * after a Flatten, Split, Gather, Expand or a Concat that no Q follows, the
 * next op runs in float there. Measured on ORT 1.30's optimized graphs
 * (opsets 13, 17, 21; tests/e2e/test_ort_float.py): a PT2E Swin's Kᵀ,
 * Gather then Transpose into the Q·Kᵀ MatMul, stays a float MatMul, and an
 * int8 fusion after any of those five ops differs from ORT's bytes on up to
 * 10 % of the outputs (Add). A dequantize sunk below one of them, and every
 * one sunk on from it, carries the attribute CS_ATTR_ORT_FLOAT: an
 * arithmetic fusion that must give ORT's bytes (-ort-exact=1) leaves its
 * consumer in float (match/pattern.h cs_match_ort_keeps_float).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "quant/quant.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

static int is_movement(cs_op op) {
  switch (op) {
    case CS_OP_RESHAPE: case CS_OP_FLATTEN: case CS_OP_TRANSPOSE: case CS_OP_SQUEEZE:
    case CS_OP_UNSQUEEZE: case CS_OP_SLICE: case CS_OP_SPLIT: case CS_OP_MAX_POOL: case CS_OP_GATHER:
    case CS_OP_EXPAND:
      return 1;
    default:
      return 0;
  }
}

/* The ops ONNX Runtime's QDQ propagation takes a dequantize through (its
 * transpose optimizer moves a Transpose above it too). */
static int ort_propagates(cs_op op) {
  switch (op) {
    case CS_OP_RESHAPE: case CS_OP_TRANSPOSE: case CS_OP_SQUEEZE: case CS_OP_UNSQUEEZE: case CS_OP_SLICE:
    case CS_OP_MAX_POOL:
      return 1;
    default:
      return 0;
  }
}

/* Replace output o of node id by a new int8 value and re-create the float
 * output with a DQ (scale/zp value ids of the original DQ). 0, or -1 when
 * out of memory (message recorded). */
static int sink_outputs(cs_graph *g, int id, int scale, int zp, int ort_float) {
  int n_out = cs_graph_node(g, id)->n_outputs;
  for (int o = 0; o < n_out; o++) {
    int fout = cs_graph_node(g, id)->outputs[o];
    if (fout < 0) continue;
    const cs_value *fv = cs_graph_value(g, fout);
    char name[512];
    snprintf(name, sizeof name, "%s.q", fv->name ? fv->name : "t");
    int iv = cs_reroute_output_as(g, id, o, name, CS_DTYPE_I8);
    if (iv < 0) return -1;
    int dq_in[3] = {iv, scale, zp};
    char dname[600];
    snprintf(dname, sizeof dname, "%s.dq", name);
    int dq = cs_graph_add_node(g, CS_OP_DEQUANTIZE_LINEAR, dname, cs_graph_node(g, id)->name, zp >= 0 ? 3 : 2,
                               dq_in, 1, &fout);
    if (dq < 0) return -1;
    if (ort_float) {
      cs_attr *a = cs_node_add_attr(cs_graph_node(g, dq), CS_ATTR_ORT_FLOAT, CS_ATTR_INT);
      if (!a) return -1;
      a->i = 1;
    }
  }
  return 0;
}

/* Each rewrite below: 1 done, 0 declined, -1 out of memory. */
static int sink_single(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (n->op == CS_OP_MAX_POOL && n->n_outputs > 1 && n->outputs[1] >= 0) {
    int c;
    if (cs_graph_consumers(g, n->outputs[1], &c, 1) > 0 || cs_graph_is_output(g, n->outputs[1])) return 0;
  }
  int dq = cs_match_dq_i8(g, n->inputs[0]);
  cs_qparams qp;
  if (!cs_match_dq_params(g, dq, &qp)) return 0;
  cs_qparams_free(&qp);
  const cs_node *d = cs_graph_node(g, dq);
  int scale = d->inputs[1], zp = d->n_inputs > 2 ? d->inputs[2] : -1;
  int ort_float = !ort_propagates(n->op) || cs_node_attr_int(d, CS_ATTR_ORT_FLOAT, 0);
  cs_node_set_input(g, id, 0, d->inputs[0]);
  return sink_outputs(g, id, scale, zp, ort_float) < 0 ? -1 : 1;
}

/* v is read only by Qs, or by moves (a Concat, a Pad too) whose outputs
 * are: no arithmetic is ever done on it. At most *budget values are looked
 * at (moves that fan out and meet again would make the paths exponential
 * in a small file): past it, no. */
static int only_moves_to_q(cs_graph *g, int v, int *budget) {
  int readers[16], k = cs_graph_consumers(g, v, readers, 16);
  if (cs_graph_is_output(g, v) || k < 1 || k > 16 || --*budget < 0) return 0;
  for (int j = 0; j < k; j++) {
    const cs_node *r = cs_graph_node(g, readers[j]);
    if (r->op == CS_OP_QUANTIZE_LINEAR && r->inputs[0] == v) continue;
    if (!is_movement(r->op) && r->op != CS_OP_PAD && r->op != CS_OP_CONCAT) return 0;
    for (int o = 0; o < r->n_outputs; o++)
      if (r->outputs[o] >= 0 && !only_moves_to_q(g, r->outputs[o], budget)) return 0;
  }
  return 1;
}

/* Pad between a DQ and Qs, through moves at most (so no arithmetic fusion
 * sees where ORT would compute in float): the pad value becomes the int8
 * code that dequantizes to it exactly; declined when none does (or the
 * value is an attribute, opset < 11). */
static int sink_pad(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int budget = 64; /* Swin's pad → roll → windows → Q: 9 */
  if (!only_moves_to_q(g, n->outputs[0], &budget) || cs_node_attr(n, "value")) return 0;
  int dq = cs_match_dq_i8(g, n->inputs[0]);
  cs_qparams qp;
  if (!cs_match_dq_params(g, dq, &qp)) return 0;
  float s = qp.scale[0];
  int32_t zp = qp.zp[0];
  cs_qparams_free(&qp);
  const cs_attr *m = cs_node_attr(n, "mode");
  int constant = !m || !m->s || !strcmp(m->s, "constant");
  int value = n->n_inputs > 2 ? n->inputs[2] : -1, code = -1;
  if (constant) {
    float v = 0.0f;
    if (value >= 0) {
      const cs_value *cv = cs_graph_value(g, value);
      if (!cv->data || cv->dtype != CS_DTYPE_F32 || cs_value_numel(cv) != 1) return 0;
      v = (float)cs_const_get_float(cv, 0);
    }
    double q = (double)zp + nearbyint((double)v / (double)s);
    if (!(q >= -128.0 && q <= 127.0) || cs_dequantize_one((int32_t)q, s, zp) != v) return 0;
    int8_t q8 = (int8_t)q;
    code = cs_add_const_named(g, n->name ? n->name : "pad", "value_q", CS_DTYPE_I8, 0, NULL, &q8);
    if (code < 0) return -1;
  }
  const cs_node *d = cs_graph_node(g, dq);
  int scale = d->inputs[1], zpv = d->n_inputs > 2 ? d->inputs[2] : -1;
  if (code >= 0) {
    n = cs_graph_node(g, id);
    int ins[4] = {d->inputs[0], n->n_inputs > 1 ? n->inputs[1] : -1, code, n->n_inputs > 3 ? n->inputs[3] : -1};
    if (cs_node_set_inputs(g, id, n->n_inputs > 3 ? 4 : 3, ins) != CS_OK) return -1;
  } else {
    cs_node_set_input(g, id, 0, d->inputs[0]);
  }
  return sink_outputs(g, id, scale, zpv, 1) < 0 ? -1 : 1;
}

static int concat_equal_params(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  cs_qparams first;
  int dq0 = cs_match_dq_i8(g, n->inputs[0]);
  if (!cs_match_dq_params(g, dq0, &first)) return 0;
  int ok = 1;
  for (int i = 1; i < n->n_inputs && ok; i++) {
    cs_qparams qp;
    int dq = cs_match_dq_i8(g, n->inputs[i]);
    if (!cs_match_dq_params(g, dq, &qp)) { ok = 0; break; }
    ok = cs_qparams_equal(&first, &qp);
    cs_qparams_free(&qp);
  }
  cs_qparams_free(&first);
  if (!ok) return 0;
  const cs_node *d0 = cs_graph_node(g, dq0);
  int scale = d0->inputs[1], zp = d0->n_inputs > 2 ? d0->inputs[2] : -1;
  int n_in = n->n_inputs, ort_float = 1; /* (a Q after it: the round trip goes, and the mark with it) */
  for (int i = 0; i < n_in; i++) {
    int dq = cs_graph_value(g, cs_graph_node(g, id)->inputs[i])->producer;
    cs_node_set_input(g, id, i, cs_graph_node(g, dq)->inputs[0]);
  }
  return sink_outputs(g, id, scale, zp, ort_float) < 0 ? -1 : 1;
}

/* QLinearConcat: Q(Concat(DQ(xi)…)) with differing parameters. */
static int concat_requant(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int n_in = n->n_inputs;
  for (int i = 0; i < n_in; i++) {
    cs_qparams qp;
    if (!cs_match_dq_params(g, cs_match_dq_i8(g, n->inputs[i]), &qp)) return 0;
    cs_qparams_free(&qp);
  }
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail(g, n->outputs[0], 0, &tail)) return 0;
  int *ins = malloc(sizeof(int) * (size_t)n_in);
  if (!ins) {
    cs_qparams_free(&tail.out);
    cs_error(CS_ERR_NOMEM, "out of memory (node '%s')", n->name);
    return -1;
  }
  for (int i = 0; i < n_in; i++) {
    int dq = cs_graph_value(g, cs_graph_node(g, id)->inputs[i])->producer;
    int x_int = cs_graph_node(g, dq)->inputs[0];
    cs_qparams qp;
    cs_match_dq_params(g, dq, &qp);
    if (cs_qparams_equal(&qp, &tail.out)) {
      ins[i] = x_int;
    } else {
      char base[512];
      snprintf(base, sizeof base, "%s.in%d", cs_graph_node(g, id)->name, i);
      int lut = cs_lut_const(g, base, NULL, &qp, &tail.out);
      const cs_value *xv = cs_graph_value(g, x_int);
      int64_t shape[CS_MAX_RANK];
      memcpy(shape, xv->shape, sizeof shape);
      int rv = lut < 0 ? -1 : cs_graph_add_value(g, base, CS_DTYPE_I8, xv->rank, shape);
      int lin[2] = {lut, x_int};
      int k = rv < 0 ? -1 : cs_add_kernel(g, CS_OP_K_LUT_I8, cs_graph_node(g, id)->name, 2, lin, rv);
      if (k < 0 || cs_value_set_quant(cs_graph_value(g, rv), -1, 1, tail.out.scale, tail.out.zps) != CS_OK) {
        cs_qparams_free(&qp);
        cs_qparams_free(&tail.out);
        free(ins);
        return -1;
      }
      cs_graph_node(g, k)->k.lut.n = (int32_t)cs_value_numel(cs_graph_value(g, x_int));
      ins[i] = rv;
    }
    cs_qparams_free(&qp);
  }
  /* The Concat now produces the Q's output directly. */
  for (int i = 0; i < n_in; i++) cs_node_set_input(g, id, i, ins[i]);
  free(ins);
  cs_node *c = cs_graph_node(g, id);
  int qout = cs_graph_node(g, tail.q)->outputs[0];
  int fout = c->outputs[0];
  cs_graph_remove_node(g, tail.q);
  c = cs_graph_node(g, id);
  c->outputs[0] = qout;
  cs_graph_value(g, qout)->producer = id;
  cs_graph_value(g, fout)->producer = -1;
  cs_status st = cs_value_set_quant(cs_graph_value(g, qout), -1, 1, tail.out.scale, tail.out.zps);
  cs_qparams_free(&tail.out);
  return st == CS_OK ? 1 : -1;
}

cs_status pass_eliminate_qdq_transparent(cs_graph *g, const cs_target *t) {
  (void)t;
  int changed = 1;
  while (changed) {
    changed = 0;
    int count = g->n_nodes;
    for (int i = 0; i < count; i++) {
      const cs_node *n = cs_graph_node(g, i);
      if (n->dead || n->n_inputs < 1 || n->inputs[0] < 0) continue;
      int r = 0;
      if (is_movement(n->op)) r = sink_single(g, i);
      else if (n->op == CS_OP_PAD) r = sink_pad(g, i);
      else if (n->op == CS_OP_CONCAT && (r = concat_equal_params(g, i)) == 0) r = concat_requant(g, i);
      if (r < 0) return CS_ERR_NOMEM; /* message recorded */
      changed |= r;
    }
  }
  return CS_OK;
}
