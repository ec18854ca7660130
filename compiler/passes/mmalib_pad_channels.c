/*
 * MMALIBPadChannels — channel padding (issue 16, -mmalib=1): a QDQ conv
 * (groups = 1) that the MMALIB conv passes decline only for C_out % tile
 * (64 int8, 32 int16; spec "Supported Operations") gets zero filters, zero
 * bias and (per-channel weights) a copy of its last scale up to the next
 * multiple of the tile, so that FuseMMALIBQDQConv2d[I16] offloads it:
 *
 *   Q(act(Conv(DQ(x), DQ(w[C_out]), b[C_out])))            → y [1,C_out,H,W]
 *   Q(act(Conv(DQ(x), DQ(w'[C_pad]), b'[C_pad])))  → y' [1,C_pad,H,W]
 *     → k_copy(first C_out·H·W elements)           → y
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
 * The cost rule, from the spec's "Performance" figures for one layer
 * (int8 conv 64→64, 3×3, 56×56 = 115.6 M MACs): 1.67 M cycles on the MMA
 * with DDR-resident data (69 MACs/cycle), 45.2 M on the C7x scalar core
 * (2.56 MACs/cycle). Padding pays when the padded layer's MMA estimate,
 * plus the cut when it is a real copy (1 byte/cycle), is below the real
 * layer's scalar estimate: for a plain conv that is C_pad/C_out < 27, so
 * C_out = 1 or 2 (int8) stays on the scalar core. The L2-staged MMA rate
 * (3.5× more) is not assumed: staging is decided later and may not fit.
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
#include "mmalib_report.h"
#include "pass_list.h"

/* spec/mmalib-integration.txt "Performance": the single conv layer. */
#define SPEC_LAYER_MACS (64.0 * 64.0 * 9.0 * 56.0 * 56.0)
#define SPEC_MMA_CYCLES 1.67e6    /* MMALIB, DDR-resident data */
#define SPEC_SCALAR_CYCLES 45.2e6 /* C7x scalar loops */
#define COPY_BYTES_PER_CYCLE 1.0  /* the cut at a graph output (conservative) */

static double cs_mm_pad_mma_cycles(int64_t macs) { return (double)macs * SPEC_MMA_CYCLES / SPEC_LAYER_MACS; }
static double cs_mm_pad_scalar_cycles(int64_t macs) { return (double)macs * SPEC_SCALAR_CYCLES / SPEC_LAYER_MACS; }

/* A constant like `src` (dtype, trailing dims) with `n0` entries along
 * axis 0 instead of shape[0]: the real rows copied, the rest zero or (fill
 * = 1, a 1-D scale) copies of the last real entry. -1 when out of memory. */
static int padded_const(cs_graph *g, const char *base, const char *suffix, int src, int64_t n0, int fill_last) {
  const cs_value *v = cs_graph_value(g, src);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, v->shape, sizeof shape);
  int rank = v->rank ? v->rank : 1;
  if (!v->rank) shape[0] = 1;
  size_t row = cs_value_nbytes(v) / (size_t)shape[0];
  size_t real = cs_value_nbytes(v);
  unsigned char *data = calloc((size_t)n0, row ? row : 1);
  if (!data) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  memcpy(data, v->data, real);
  if (fill_last)
    for (int64_t r = shape[0]; r < n0; r++) memcpy(data + (size_t)r * row, data + real - row, row);
  shape[0] = n0;
  int id = cs_add_const_named(g, base, suffix, v->dtype, rank, shape, data);
  free(data);
  return id;
}

/* Pad the per-channel parameters of DequantizeLinear node dq (its input
 * 0 along axis 0, its scale and zero point when they have `c_out`
 * entries) to c_pad and its output's axis 0. */
static cs_status pad_dq(cs_graph *g, int dq, const char *base, const char *what, int64_t c_out, int64_t c_pad) {
  char suffix[64];
  const cs_node *n = cs_graph_node(g, dq);
  int n_in = n->n_inputs;
  for (int j = 0; j < n_in && j < 3; j++) {
    int in = cs_graph_node(g, dq)->inputs[j];
    if (in < 0) continue;
    const cs_value *v = cs_graph_value(g, in);
    if (j > 0 && (v->rank != 1 || v->shape[0] != c_out)) continue; /* per-tensor */
    snprintf(suffix, sizeof suffix, "mm_pad_%s%s", what, j == 0 ? "" : j == 1 ? "_scale" : "_zp");
    int id = padded_const(g, base, suffix, in, c_pad, j == 1);
    if (id < 0) return CS_ERR_NOMEM;
    cs_node_set_input(g, dq, j, id);
  }
  cs_graph_value(g, cs_graph_node(g, dq)->outputs[0])->shape[0] = c_pad;
  return CS_OK;
}

/* The dtype of the MMALIB conv that would take node conv (its input's DQ
 * dtype), or NULL. */
static const cs_mm_dtype *dtype_of(cs_graph *g, const cs_node *conv) {
  int dq = cs_match_producer(g, conv->inputs[0], CS_OP_DEQUANTIZE_LINEAR);
  if (dq < 0) return NULL;
  cs_dtype dt = cs_graph_value(g, cs_graph_node(g, dq)->inputs[0])->dtype;
  return dt == CS_DTYPE_I8 ? &cs_mm_int8 : dt == CS_DTYPE_I16 ? &cs_mm_int16 : NULL;
}

/* The rewrite of one eligible layer (the header). */
static cs_status pad_layer(cs_graph *g, int conv_id, int wdq, const cs_qdq_tail *tail, int64_t c_pad) {
  char base[256];
  const cs_node *conv = cs_graph_node(g, conv_id);
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  int64_t c_out = cs_graph_value(g, conv->outputs[0])->shape[1];
  cs_status st = pad_dq(g, wdq, base, "w", c_out, c_pad);
  if (st != CS_OK) return st;
  conv = cs_graph_node(g, conv_id);
  int b = conv->n_inputs > 2 ? conv->inputs[2] : -1;
  if (b >= 0) {
    int bdq = cs_match_producer(g, b, CS_OP_DEQUANTIZE_LINEAR);
    if (bdq >= 0) {
      st = pad_dq(g, bdq, base, "b", c_out, c_pad);
    } else {
      int id = padded_const(g, base, "mm_pad_b", b, c_pad, 0);
      if (id < 0) return CS_ERR_NOMEM;
      cs_node_set_input(g, conv_id, 2, id);
    }
    if (st != CS_OK) return st;
  }
  conv = cs_graph_node(g, conv_id);
  cs_graph_value(g, conv->outputs[0])->shape[1] = c_pad;
  if (tail->act >= 0) cs_graph_value(g, cs_graph_node(g, tail->act)->outputs[0])->shape[1] = c_pad;
  /* y' takes the Q's output; y becomes the cut's. */
  int y = cs_graph_node(g, tail->q)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  char name[512];
  snprintf(name, sizeof name, "%s.mm_cpad", yv->name ? yv->name : base);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, yv->shape, sizeof shape);
  shape[1] = c_pad;
  int yp = cs_graph_add_value(g, name, yv->dtype, yv->rank, shape);
  if (yp < 0) return CS_ERR_NOMEM;
  yv = cs_graph_value(g, y);
  cs_value *ypv = cs_graph_value(g, yp);
  ypv->from_u8 = yv->from_u8;
  if (yv->quant && cs_value_set_quant(ypv, yv->quant->axis, yv->quant->count, yv->quant->scale,
                                      yv->quant->zero_point) != CS_OK)
    return CS_ERR_NOMEM;
  cs_graph_node(g, tail->q)->outputs[0] = yp;
  cs_graph_value(g, yp)->producer = tail->q;
  cs_graph_value(g, y)->producer = -1;
  int k = cs_add_kernel(g, CS_OP_K_COPY, base, 1, &yp, y);
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, y));
  return CS_OK;
}

static cs_status consider(cs_graph *g, const cs_target *t, int conv_id) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  if (cs_node_attr_int(conv, "group", 1) != 1) return CS_OK;
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *yc = cs_graph_value(g, conv->outputs[0]);
  if (x->rank != 4 || yc->rank != 4 || x->shape[0] != 1) return CS_OK;
  const cs_mm_dtype *d = dtype_of(g, conv);
  if (!d) return CS_OK;
  int64_t c_out = yc->shape[1];
  if (c_out <= 0 || c_out % d->mult == 0) return CS_OK;
  int64_t c_pad = cs_mm_round_up(c_out, d->mult);
  char why[200];
  if (cs_mm_conv_padded_rule(g, t, conv_id, d, c_pad, why, sizeof why)) return CS_OK; /* declines anyway */
  /* The pieces the rewrite changes: the weight's DQ and the tail. */
  cs_qparams wq;
  cs_qdq_tail tail;
  int wdq = -1;
  if (!cs_match_weight_dq_as(g, conv->inputs[1], 0, d->dt, &wq, &wdq)) return CS_OK;
  cs_qparams_free(&wq);
  if (!cs_match_qdq_tail_as(g, conv->outputs[0], 1, d->dt, &tail)) return CS_OK;
  cs_qparams_free(&tail.out);
  int b = conv->n_inputs > 2 ? conv->inputs[2] : -1;
  int bdq = b >= 0 ? cs_match_producer(g, b, CS_OP_DEQUANTIZE_LINEAR) : -1;
  if (cs_match_single_consumer(g, cs_graph_node(g, wdq)->outputs[0]) != conv_id ||
      (b >= 0 && cs_match_single_consumer(g, b) != conv_id) ||
      (bdq >= 0 && !cs_match_is_const(g, cs_graph_node(g, bdq)->inputs[0])) ||
      (b >= 0 && bdq < 0 && !cs_match_is_const(g, b)))
    return CS_OK; /* shared weights or bias: the conv pass reports the C_out rule */

  const cs_value *w = cs_graph_value(g, cs_graph_node(g, wdq)->inputs[0]);
  int64_t per_filter = cs_value_numel(w) / c_out; /* C_in·KH·KW */
  int64_t positions = yc->shape[2] * yc->shape[3];
  int y = cs_graph_node(g, tail.q)->outputs[0];
  size_t esize = cs_dtype_size(d->dt);
  cs_offload_pad p;
  memset(&p, 0, sizeof p);
  snprintf(p.layer, sizeof p.layer, "%s", conv->name ? conv->name : "?");
  p.c_out = (int)c_out;
  p.c_pad = (int)c_pad;
  p.macs = c_out * positions * per_filter;
  p.macs_added = (c_pad - c_out) * positions * per_filter;
  p.weight_bytes_added = (c_pad - c_out) * per_filter * (int64_t)esize;
  p.act_bytes_added = (c_pad - c_out) * positions * (int64_t)esize;
  double cut = cs_graph_is_output(g, y) ? (double)cs_value_nbytes(cs_graph_value(g, y)) / COPY_BYTES_PER_CYCLE : 0.0;
  p.mma_cycles = cs_mm_pad_mma_cycles(p.macs + p.macs_added) + cut;
  p.scalar_cycles = cs_mm_pad_scalar_cycles(p.macs);
  p.padded = p.mma_cycles < p.scalar_cycles;
  cs_status st = p.padded ? pad_layer(g, conv_id, wdq, &tail, c_pad) : CS_OK;
  if (st == CS_OK) cs_mmalib_report_pad(g, &p);
  return st;
}

cs_status pass_mmalib_pad_channels(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_CONV || node->n_inputs < 2) continue;
    cs_status st = consider(g, t, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
