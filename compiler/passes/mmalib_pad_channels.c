/*
 * MMALIBPadChannels — channel padding (issue 16, -mmalib=1): a QDQ conv
 * (groups = 1) that the MMALIB conv passes decline only for C_out % tile
 * (the tile of the kernel that runs it, mmalib_common.h cs_mm_runs_as: 64
 * for MMALIB's int8 kernel, 32 for int16 — the int16 data's, or an int8
 * layer's on the exact path, the default; spec "Supported Operations")
 * gets zero filters, zero bias and (per-channel weights) a copy of its last
 * scale up to the next multiple of the tile, so that
 * FuseMMALIBQDQConv2d[I16] offloads it:
 *
 *   Q(act(Conv(DQ(x), DQ(w[C_out]), b[C_out])))            → y [1,C_out,H,W]
 *   Q(act(Conv(DQ(x), DQ(w'[C_pad]), b'[C_pad])))  → y' [1,C_pad,H,W]
 *     → k_copy(first C_out·H·W elements)           → y
 *
 * FCs are padded (K and N) by the FC pass itself (mmalib_fc.c), with the
 * same cost rule.
 *
 * The real channels: each output channel of a convolution depends only on
 * its own filter, bias and multiplier, which are unchanged, so they are
 * bit-identical to the same layer offloaded without padding (what the
 * kernel computes for the padded channels is never read).
 *
 * Where the padded channels go — the rule: they are cut off at once. The
 * activations are NCHW with N = 1 (MMALIB's layout), so the real channels
 * are the first C_out·H·W elements of y': the cut is a k_copy of that
 * prefix, which the planner turns into a view of y' (schedule/storage.c
 * alias_copies: y' dies at the copy) — no call, no bytes moved. Every
 * consumer (conv, FC, add, pool, concat, graph output) therefore sees the
 * tensor it saw before, so no consumer needs a rule of its own, and none
 * gets padded K (zero weights for the padded channels would only add MACs
 * to the consumer: the view already costs nothing). Only a graph output
 * makes the copy real (C_out·H·W bytes, in the estimate below).
 *
 * The cost rule (match/mmalib_cost.h, ir/c7x_cost.c: the spec's "Performance" figures, DDR
 * traffic at 2.72 cycles per byte on both sides): the MMA estimate counts
 * the padded panels and the *padded* output's bytes (MMALIB writes every
 * channel of y'), the scalar core's the real MACs and bytes. So a layer
 * whose output is large for its work — few input channels, a big feature map — pays for its padded
 * output channels in DDR bytes: MobileNetV3's 16→16 1×1 conv at 56×56
 * (K = 16, padded to 64: four times the output bytes) stays on the scalar
 * core, while its 3→16 stem (27 MACs per output, 4× the bytes too, but
 * MACs cost 0.381 cycles on the core) is padded. A layer with one output
 * position — a squeeze-excitation gate, an FC of one row — spends its
 * time loading weights and stays on the scalar core (it is also the layer
 * where MMALIB's 1-LSB rounding, coherent over the whole channel it gates,
 * costs most accuracy). A cut that is a real copy (at a graph output)
 * adds its bytes read and written. int16 panels are 32×32.
 *
 * The layer is padded only when it is otherwise eligible: the conv pass
 * checks it first as if it were padded (cs_mm_conv_padded_rule); a layer
 * that declines for another rule is left exactly as it was. Every
 * decision (padded, or not paying with its estimate) goes to the offload
 * report (ir/offload.h cs_offload_pad). The planner accounts the larger
 * tensors: y' is an ordinary arena value.
 */
#include <stdlib.h>
#include <string.h>

#include "match/geometry.h"
#include "match/mmalib_common.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"
#include "match/mmalib_cost.h"
#include "match/mmalib_report.h"
#include "pass_list.h"

/* A constant like `src` with n entries along `axis` instead of
 * shape[axis]: the real entries copied, the rest zero or (fill_last, a 1-D
 * scale) copies of the last real entry. -1 when out of memory. */
static int padded_const(cs_graph *g, const char *base, const char *suffix, int src, int axis, int64_t n,
                        int fill_last) {
  const cs_value *v = cs_graph_value(g, src);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, v->shape, sizeof shape);
  int rank = v->rank ? v->rank : 1;
  if (!v->rank) shape[0] = 1;
  size_t esize = cs_dtype_size(v->dtype);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= shape[d];
  for (int d = axis + 1; d < rank; d++) inner *= shape[d];
  int64_t old = shape[axis];
  size_t row = (size_t)inner * esize; /* one entry along axis */
  unsigned char *data = calloc((size_t)(outer * n * inner) + 1, esize);
  if (!data) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  const unsigned char *from = v->data;
  for (int64_t o = 0; o < outer; o++) {
    unsigned char *dst = data + (size_t)(o * n) * row;
    memcpy(dst, from + (size_t)(o * old) * row, (size_t)old * row);
    if (fill_last)
      for (int64_t r = old; r < n; r++) memcpy(dst + (size_t)r * row, dst + (size_t)(old - 1) * row, row);
  }
  shape[axis] = n;
  int id = cs_add_const_named(g, base, suffix, v->dtype, rank, shape, data);
  free(data);
  return id;
}

/* Pad DequantizeLinear node dq: its constant input along `axis`, its
 * scale and zero point when they have c_out entries (per channel), and
 * its output's axis, from c_out to c_pad. */
static cs_status pad_dq(cs_graph *g, int dq, const char *base, const char *what, int axis, int64_t c_out,
                        int64_t c_pad) {
  char suffix[64];
  int n_in = cs_graph_node(g, dq)->n_inputs;
  for (int j = 0; j < n_in && j < 3; j++) {
    int in = cs_graph_node(g, dq)->inputs[j];
    if (in < 0) continue;
    const cs_value *v = cs_graph_value(g, in);
    if (j > 0 && (v->rank != 1 || v->shape[0] != c_out)) continue; /* per-tensor */
    snprintf(suffix, sizeof suffix, "mm_pad_%s%s", what, j == 0 ? "" : j == 1 ? "_scale" : "_zp");
    int id = padded_const(g, base, suffix, in, j == 0 ? axis : 0, c_pad, j == 1);
    if (id < 0) return CS_ERR_NOMEM;
    cs_node_set_input(g, dq, j, id);
  }
  cs_graph_value(g, cs_graph_node(g, dq)->outputs[0])->shape[axis] = c_pad;
  return CS_OK;
}

/* Input j of node `user`, a bias of c_out entries (DQ of a constant, or a
 * float constant), padded with zeros to c_pad. */
static cs_status pad_bias(cs_graph *g, int user, int j, const char *base, int64_t c_out, int64_t c_pad) {
  int b = cs_graph_node(g, user)->inputs[j];
  int bdq = cs_match_producer(g, b, CS_OP_DEQUANTIZE_LINEAR);
  if (bdq >= 0) return pad_dq(g, bdq, base, "b", 0, c_out, c_pad);
  int id = padded_const(g, base, "mm_pad_b", b, 0, c_pad, 0);
  if (id < 0) return CS_ERR_NOMEM;
  cs_node_set_input(g, user, j, id);
  return CS_OK;
}

/* A bias (value b, read by `user`) the rewrite may replace: read only
 * there, a constant or DQ of one. */
static int bias_ok(cs_graph *g, int b, int user) {
  if (b < 0) return 1;
  if (cs_match_single_consumer(g, b) != user) return 0;
  int bdq = cs_match_producer(g, b, CS_OP_DEQUANTIZE_LINEAR);
  return bdq >= 0 ? cs_match_is_const(g, cs_graph_node(g, bdq)->inputs[0]) : cs_match_is_const(g, b);
}

/* The tail's Q writes y' (y's axis `axis` widened to c_pad) and a k_copy
 * of y's bytes, the real channels (a prefix of y': the header), writes y. */
static cs_status cut_output(cs_graph *g, const cs_qdq_tail *tail, int axis, int64_t c_pad, const char *base) {
  if (tail->act >= 0) cs_graph_value(g, cs_graph_node(g, tail->act)->outputs[0])->shape[axis] = c_pad;
  int y = cs_graph_node(g, tail->q)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  char name[512];
  snprintf(name, sizeof name, "%s.mm_cpad", yv->name ? yv->name : base);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, yv->shape, sizeof shape);
  shape[axis] = c_pad;
  int yp = cs_reroute_output(g, tail->q, name, yv->rank, shape);
  if (yp < 0) return CS_ERR_NOMEM;
  int k = cs_add_kernel(g, CS_OP_K_COPY, base, 1, &yp, y);
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, y));
  return CS_OK;
}

/* The decision for a layer of c_out → c_pad channels of `per_channel`
 * MACs and weights_per_channel weights, `positions` output elements per
 * channel, reading in_bytes, writing y: filled into *p, returns whether
 * to pad. */
static int pays(cs_graph *g, const cs_target *t, const char *layer, const cs_mm_dtype *d, int64_t c_out,
                int64_t c_pad, int64_t per_channel, int64_t weights_per_channel, int64_t positions, int64_t in_bytes,
                int y, cs_offload_pad *p) {
  size_t esize = cs_dtype_size(d->dt);
  cs_mm_pad_decision_init(p, layer, NULL, c_out, c_pad, c_out * per_channel, (c_pad - c_out) * per_channel);
  p->weight_bytes_added = (c_pad - c_out) * weights_per_channel * cs_mm_pad_bytes(d);
  /* on the exact path the padded channels' int8 outputs are never written
   * (mmalib_exact.c real_channel_view): only their int16 z */
  p->act_bytes_added = (c_pad - c_out) * positions * (cs_mm_pad_bytes(d) - (d->exact ? (int64_t)esize : 0));
  double w_bytes = (double)(c_out * weights_per_channel * (int64_t)esize);
  double out_bytes = (double)(c_out * positions * (int64_t)esize);
  double real = (double)in_bytes + w_bytes + out_bytes;
  double padded = cs_mm_call_bytes(t, (double)in_bytes, (double)(c_pad * weights_per_channel * (int64_t)esize),
                                   (double)(c_pad * positions * (int64_t)esize));
  /* the cut at a graph output is a real copy: read and write (not counted
   * for a `--outputs` tap, which must not change what the model computes) */
  double cut = cs_graph_is_model_output(g, y) ? 2.0 * (double)cs_value_nbytes(cs_graph_value(g, y)) : 0.0;
  return cs_mm_pad_decide(t, p, cs_mm_cost_mma(weights_per_channel, c_pad, positions, d->mult, padded + cut),
                          cs_mm_cost_scalar(p->macs, real));
}

static cs_status consider_conv(cs_graph *g, const cs_target *t, int conv_id) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  const cs_mm_dtype *d = cs_mm_plain_conv(g, t, conv);
  if (!d) return CS_OK;
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *yc = cs_graph_value(g, conv->outputs[0]);
  int64_t in_bytes = cs_value_numel(x) * (int64_t)cs_dtype_size(d->dt); /* x is DQ's float output */
  int64_t c_out = yc->shape[1];
  if (c_out <= 0 || c_out % d->mult == 0) return CS_OK;
  int64_t c_pad = cs_mm_round_up(c_out, d->mult);
  char why[200];
  const char *rule;
  cs_status st = cs_mm_conv_padded_rule(g, t, conv_id, d, c_pad, &rule, why, sizeof why);
  if (st != CS_OK || rule) return st; /* out of memory, or it declines anyway */
  /* The pieces the rewrite changes: the weight's DQ, the bias, the tail. */
  cs_qparams wq;
  cs_qdq_tail tail;
  int wdq = -1;
  if (!cs_match_weight_dq_as(g, conv->inputs[1], 0, d->dt, &wq, &wdq)) return CS_OK;
  cs_qparams_free(&wq);
  if (!cs_match_qdq_tail_as(g, conv->outputs[0], 1, d->dt, &tail)) return CS_OK;
  cs_qparams_free(&tail.out);
  int b = conv->n_inputs > 2 ? conv->inputs[2] : -1;
  if (cs_match_single_consumer(g, cs_graph_node(g, wdq)->outputs[0]) != conv_id || !bias_ok(g, b, conv_id))
    return CS_OK; /* shared weights or bias: the conv pass reports the C_out rule */

  const cs_value *w = cs_graph_value(g, cs_graph_node(g, wdq)->inputs[0]);
  int64_t per_filter = cs_value_numel(w) / c_out; /* C_in·KH·KW */
  int64_t positions = yc->shape[2] * yc->shape[3];
  int y = cs_graph_node(g, tail.q)->outputs[0];
  cs_offload_pad p;
  char base[256];
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  if (pays(g, t, conv->name, d, c_out, c_pad, positions * per_filter, per_filter, positions, in_bytes, y, &p)) {
    st = pad_dq(g, wdq, base, "w", 0, c_out, c_pad);
    if (st == CS_OK && b >= 0) st = pad_bias(g, conv_id, 2, base, c_out, c_pad);
    if (st == CS_OK) {
      cs_graph_value(g, cs_graph_node(g, conv_id)->outputs[0])->shape[1] = c_pad;
      st = cut_output(g, &tail, 1, c_pad, base);
    }
    if (st != CS_OK) return st;
  }
  cs_mmalib_report_pad(g, &p);
  return CS_OK;
}

cs_status pass_mmalib_pad_channels(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->n_inputs < 2) continue;
    cs_status st = node->op == CS_OP_CONV ? consider_conv(g, t, i) : CS_OK;
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
