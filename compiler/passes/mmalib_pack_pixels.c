/*
 * MMALIBPackPixels — pixel packing (issue 16, -mmalib=1, int8): a QDQ
 * 1×1 conv (stride 1, no pads, groups 1) with few output channels (C_out
 * off the tile: 64, or 32 on the exact path's int16 kernel, mmalib_common.h
 * cs_mm_runs_as) computes P blocks of output pixels per channel,
 * so that the MMA's panel fills with pixels instead of zero filters:
 *
 *   Q(act(Conv_1x1(DQ(x), w[C][C_in])))             → y   [1, C, H, W]
 *   k_copy(x: all bytes)                            → x'  [1, C_in·P, H', W']
 *   Q(act(Conv_1x1(DQ(x'), w'[C_pad][C_in·P])))     → y"  [1, C_pad, H', W']
 *     → k_copy(first C·H·W elements)                → y
 *
 * with H'·W' = H·W/P (H' = H/P when P divides H, else 1 × H·W/P). The
 * activations are NCHW with N = 1, so input channel ci's P blocks of
 * H·W/P consecutive pixels are P consecutive "channels" ci·P + q of x'
 * with the same bytes: both copies are reshapes of contiguous memory,
 * which the planner turns into views (schedule/storage.c alias_copies: a
 * whole-tensor k_copy whose input dies at it, or a whole-tensor k_slice
 * when x is read again) — no call, no bytes moved.
 * The filter of new channel o·P + p is block-diagonal: w'[o·P + p][ci·P +
 * q] = w[o][ci] when q = p, else 0, so its accumulator at pixel j of the
 * block is Σ_ci w[o][ci]·x[ci][p·H·W/P + j] — the original accumulator of
 * channel o at pixel p·H·W/P + j, with o's bias and per-channel scale
 * (replicated P times; the zero taps add 0, the weight zero point is 0 as
 * MMALIB requires). Every real output is therefore bit-identical to the
 * same layer offloaded with channel padding (same integer, bias,
 * multiplier, activation), and y" in memory is y followed by the zero
 * filters' channels (C_pad > C·P), which the cut drops as channel
 * padding's does.
 *
 * Why only 1×1: a k×k window crosses the blocks' edges (rows from two
 * blocks), which no reshape of x gives; the MMALIB conv strides H and W
 * alike, so packing interleaved columns (kernel k × (k + P − 1), stride (1,
 * P)) is an asymmetric stride it declines (MMALIBOutS2D packs f × f
 * pixels instead, for k > 1). A strided or padded 1×1 reads pixels that
 * are not one contiguous block either.
 *
 * What it buys: channel padding pays for C_pad = ⌈C/64⌉·64 output channels
 * in DDR bytes and computes ⌈C_in/64⌉·⌈C/64⌉ panels over all H·W pixels;
 * packing writes C·P (rounded up) channels of H·W/P pixels and computes
 * ⌈C_in·P/64⌉·⌈C·P/64⌉ panels over H·W/P, the zero K taps filling the K
 * rows the MMA wastes anyway when C_in < 64. PP-OCR cls's 8 → 8 1×1 at
 * 24 × 96: padding estimates 492 K MMA cycles against 157 K on the core;
 * P = 8 (K = N = 64, 288 positions) estimates ~117 K.
 *
 * P is kept to C·P ≤ C_pad (padding's channels), so that the packed conv
 * computes no more MACs than the padded one would (C_in·P·C_pad/P per
 * pixel): a larger P can still be cheaper by the rule (fewer output
 * bytes) but multiplies the MACs by C·P/C_pad, which the issue's MACs
 * criterion counts against the model.
 *
 * The remainder: the blocks run along the flattened pixels, so W need not
 * be a multiple of P, only H·W (H' = 1 when P does not divide H); when no
 * P in 2..64 with C·P ≤ C_pad divides H·W, the layer is left to channel
 * padding as it was — there is never a partial block.
 *
 * int8 data only (int16 layers are priced by the int16 passes' padding
 * alone); an int8 layer the exact path runs packs to the int16 kernel's
 * 32-wide tile (C·P ≤ 32: cls's 8 → 8 as P = 4, K = N = 32).
 *
 * The cost rule (match/mmalib_cost.h, cycles from ir/c7x_cost.c): for every such P that divides H·W,
 * the MMA estimate (panels above; DDR bytes: x, w', y", plus a copy's read
 * and write where it is not a view — y a graph output; a graph input is
 * copied by the conv pass's staging in either plan) against channel
 * padding's (what MMALIBPadChannels would estimate) and the scalar core's
 * for the layer as it is. The cheapest P
 * is taken when it is below padding's estimate and pays against the core;
 * otherwise the layer is left to MMALIBPadChannels. The conv pass must
 * take the layer padded (cs_mm_conv_padded_rule, checked first: the
 * packed conv has the same rules' inputs but K and the pixel count). A
 * taken rewrite goes to the offload report's padding section (what = "C_out
 * pack": c_out = C, c_pad = the packed conv's channels; macs_added = its
 * MACs, zero taps and filters included, less the layer's).
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

/* The offload report's `what` of a packed layer (cs_offload_pad). */
static const char kPackWhat[] = "C_out pack";

#define PACK_MAX 64 /* P in 2..PACK_MAX */

/* One candidate P: the packed conv's geometry and estimate. */
typedef struct pack_plan {
  int p;
  int64_t h, w;    /* the packed conv's rows, columns: h·w = H·W/P */
  int64_t k, n;    /* its K = C_in·P, N = C·P rounded up to the tile */
  int64_t macs;    /* n·k·h·w */
  double mma_cycles;
} pack_plan;

/* Plan P for a C_in → c 1×1 conv over hh × ww pixels (P = 1: channel
 * padding, as MMALIBPadChannels prices it plus the edge's staging); 0 if
 * P does not divide them. in_copy: 1, the input reshape is a real copy; 2,
 * x is a graph input, which the conv pass copies to an aligned arena
 * tensor whatever the plan (mmalib_common.h cs_mm_stage_input: with P > 1
 * the reshape is that copy). out_copy: y is a graph output (the cut or
 * reshape is a real copy). */
static int plan(const cs_target *t, int64_t c_in, int64_t c, int64_t hh, int64_t ww, int p, const cs_mm_dtype *d,
                int in_copy, int out_copy, pack_plan *pl) {
  int tile = d->mult;
  memset(pl, 0, sizeof *pl);
  if ((hh * ww) % p) return 0;
  pl->p = p;
  pl->h = hh % p == 0 ? hh / p : 1;
  pl->w = hh % p == 0 ? ww : hh * ww / p;
  pl->k = c_in * p;
  pl->n = cs_mm_round_up(c * p, tile);
  int64_t pos = pl->h * pl->w;
  pl->macs = pl->n * pl->k * pos;
  double in = (double)(c_in * hh * ww), out = (double)(c * hh * ww); /* int8: 1 byte each */
  double bytes = cs_mm_call_bytes(t, in, (double)(pl->n * pl->k), (double)(pl->n * pos));
  if (in_copy > 1 || (p > 1 && in_copy)) bytes += 2.0 * in; /* one copy: the reshape is the edge's staging */
  if (out_copy && (p > 1 || pl->n != c)) bytes += 2.0 * out; /* the cut (or reshape) at a graph output */
  pl->mma_cycles = cs_mm_cost_mma(pl->k, pl->n, pos, tile, bytes);
  return 1;
}


/* The block-diagonal filters w' [n, C_in·P, 1, 1] of w [c, C_in, 1, 1]. */
static int packed_weights(cs_graph *g, const char *base, int w, const pack_plan *pl) {
  const cs_value *v = cs_graph_value(g, w);
  int64_t c = v->shape[0], ci = v->shape[1], p = pl->p;
  size_t e = cs_dtype_size(v->dtype);
  int64_t shape[4] = {pl->n, pl->k, 1, 1};
  unsigned char *data = calloc((size_t)(pl->n * pl->k) + 1, e);
  if (!data) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  const unsigned char *from = v->data;
  for (int64_t o = 0; o < c; o++)
    for (int64_t q = 0; q < p; q++)
      for (int64_t i = 0; i < ci; i++)
        memcpy(data + (size_t)((o * p + q) * pl->k + i * p + q) * e, from + (size_t)(o * ci + i) * e, e);
  int id = cs_add_const_named(g, base, "mm_pack_w", v->dtype, 4, shape, data);
  free(data);
  return id;
}


/* A value like v (cs_mm_like_value: dtype, quantization, from_u8) named
 * <v>.<suffix> with `shape`; -1 when out of memory. */
static int like(cs_graph *g, int v, const char *suffix, const int64_t shape[4]) {
  const cs_value *vv = cs_graph_value(g, v);
  char name[512];
  snprintf(name, sizeof name, "%s.%s", vv->name ? vv->name : "x", suffix);
  return cs_mm_like_value(g, v, name, shape);
}

/* The conv reads DQ(x') instead of DQ(x), x' being x's bytes as [1,
 * C_in·P, H', W']: a k_copy when the conv's DQ is x's only reader (the
 * planner's prefix view: x dies at it; at a graph input it is the edge's
 * staging copy), else a whole-tensor k_slice (a view although x is read
 * again — a residual add — storage.c alias_copies) and a DQ of the conv's
 * own when the old one has other readers. */
static cs_status pack_input(cs_graph *g, int conv_id, int xdq, const pack_plan *pl, const char *base) {
  int xq = cs_graph_node(g, xdq)->inputs[0];
  int64_t sh[4] = {1, pl->k, pl->h, pl->w};
  int xp = like(g, xq, "mm_pack", sh);
  if (xp < 0) return CS_ERR_NOMEM;
  int dq_shared = cs_match_single_consumer(g, cs_graph_node(g, xdq)->outputs[0]) != conv_id;
  int sole = !dq_shared && cs_match_single_consumer(g, xq) == xdq;
  const cs_value *xv = cs_graph_value(g, xq);
  int k = cs_add_kernel(g, sole || xv->producer < 0 ? CS_OP_K_COPY : CS_OP_K_SLICE, base, 1, &xq, xp);
  if (k < 0) return CS_ERR_NOMEM;
  if (cs_graph_node(g, k)->op == CS_OP_K_COPY) {
    cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, xp));
  } else {
    tidsp_slice_params sp;
    memset(&sp, 0, sizeof sp);
    sp.rank = 4;
    sp.elem_size = (int32_t)cs_dtype_size(xv->dtype);
    for (int d = 0; d < 4; d++) {
      sp.in_shape[d] = sp.out_shape[d] = (int32_t)xv->shape[d];
      sp.step[d] = 1;
    }
    cs_graph_node(g, k)->k.slice = sp;
  }
  if (!dq_shared) {
    cs_node_set_input(g, xdq, 0, xp);
    memcpy(cs_graph_value(g, cs_graph_node(g, xdq)->outputs[0])->shape, sh, sizeof sh);
    return CS_OK;
  }
  const cs_node *dq = cs_graph_node(g, xdq);
  int ins[3] = {xp, dq->n_inputs > 1 ? dq->inputs[1] : -1, dq->n_inputs > 2 ? dq->inputs[2] : -1};
  int n_in = dq->n_inputs < 3 ? dq->n_inputs : 3;
  char name[512];
  snprintf(name, sizeof name, "%s.mm_pack_dq", base);
  int xf = cs_graph_add_value(g, name, CS_DTYPE_F32, 4, sh);
  if (xf < 0) return CS_ERR_NOMEM;
  int nd = cs_graph_add_node(g, CS_OP_DEQUANTIZE_LINEAR, name, base, n_in, ins, 1, &xf);
  if (nd < 0) return CS_ERR_NOMEM;
  cs_node_set_input(g, conv_id, 0, xf);
  return CS_OK;
}

/* The tail's Q writes y" and a k_copy of y's bytes (the real channels, a
 * prefix of y") writes y. */
static cs_status unpack_output(cs_graph *g, const cs_qdq_tail *tail, const pack_plan *pl, const char *base) {
  int64_t sh[4] = {1, pl->n, pl->h, pl->w};
  if (tail->act >= 0) memcpy(cs_graph_value(g, cs_graph_node(g, tail->act)->outputs[0])->shape, sh, sizeof sh);
  int y = cs_graph_node(g, tail->q)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  char name[512];
  snprintf(name, sizeof name, "%s.mm_pack", yv->name ? yv->name : base);
  int yp = cs_reroute_output(g, tail->q, name, 4, sh);
  if (yp < 0) return CS_ERR_NOMEM;
  int k = cs_add_kernel(g, CS_OP_K_COPY, base, 1, &yp, y);
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, y));
  return CS_OK;
}

static cs_status consider_conv(cs_graph *g, const cs_target *t, int conv_id) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  const cs_mm_dtype *d = cs_mm_plain_conv(g, t, conv);
  if (!d || d->dt != CS_DTYPE_I8) return CS_OK;
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *yc = cs_graph_value(g, conv->outputs[0]);
  int64_t c = yc->shape[1], hh = yc->shape[2], ww = yc->shape[3], c_in = x->shape[1];
  if (c <= 0 || c % d->mult == 0 || hh <= 0 || ww <= 0 || x->shape[2] != hh || x->shape[3] != ww) return CS_OK;
  cs_window2d win;
  if (cs_window2d_from_node(g, conv, &win) != CS_OK) {
    cs_error_clear();
    return CS_OK;
  }
  const char *ap = cs_node_attr_string(conv, "auto_pad", "NOTSET");
  if (ap && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0) return CS_OK;
  if (win.k_h != 1 || win.k_w != 1 || win.stride_h != 1 || win.stride_w != 1 || win.dil_h != 1 ||
      win.dil_w != 1 || win.pad_top || win.pad_left || win.pad_bottom || win.pad_right)
    return CS_OK;
  /* The pieces the rewrite changes: the data's DQ (the conv's own), the
   * weight (a constant read only here, zero point 0), the bias, the tail. */
  int xdq = cs_match_producer(g, conv->inputs[0], CS_OP_DEQUANTIZE_LINEAR);
  if (xdq < 0 || cs_graph_node(g, xdq)->n_inputs > 3) return CS_OK;
  for (int j = 1; j < cs_graph_node(g, xdq)->n_inputs; j++) { /* per-tensor data */
    int in = cs_graph_node(g, xdq)->inputs[j];
    if (in >= 0 && (!cs_match_is_const(g, in) || cs_value_numel(cs_graph_value(g, in)) != 1)) return CS_OK;
  }
  int wdq = -1;
  if (!cs_mm_weight_dq_zp0(g, conv->inputs[1], d->dt, &wdq)) return CS_OK;
  int wc = cs_graph_node(g, wdq)->inputs[0];
  const cs_value *wv = cs_graph_value(g, wc);
  if (!cs_match_is_const(g, wc) || wv->rank != 4 || wv->shape[0] != c || wv->shape[1] != c_in ||
      wv->shape[2] != 1 || wv->shape[3] != 1 || cs_match_single_consumer(g, cs_graph_node(g, wdq)->outputs[0]) != conv_id)
    return CS_OK;
  int b = conv->n_inputs > 2 ? conv->inputs[2] : -1, bdq = -1;
  if (b >= 0) {
    if (cs_match_single_consumer(g, b) != conv_id) return CS_OK;
    bdq = cs_match_producer(g, b, CS_OP_DEQUANTIZE_LINEAR);
    if (bdq >= 0 ? !cs_match_is_const(g, cs_graph_node(g, bdq)->inputs[0]) : !cs_match_is_const(g, b))
      return CS_OK;
    const cs_value *bv = cs_graph_value(g, bdq >= 0 ? cs_graph_node(g, bdq)->inputs[0] : b);
    if (bv->rank != 1 || bv->shape[0] != c) return CS_OK;
  }
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail_as(g, conv->outputs[0], 1, d->dt, &tail)) return CS_OK;
  cs_qparams_free(&tail.out);
  /* The conv pass must take the layer padded (then it takes it packed:
   * the same rules' inputs but K and the pixel count). */
  char why[200];
  const char *rule = NULL;
  cs_status st = cs_mm_conv_padded_rule(g, t, conv_id, d, cs_mm_round_up(c, d->mult), &rule, why, sizeof why);
  if (st != CS_OK || rule) return st;

  /* The estimates: the layer on the core, padded, and every P. The input
   * reshape is a view only when x' is the sole reader of an arena x. */
  int xq = cs_graph_node(g, xdq)->inputs[0];
  if (cs_match_is_const(g, xq)) return CS_OK; /* (MMALIBConstChannels' case) */
  int in_copy = cs_graph_value(g, xq)->producer < 0 ? 2 : cs_graph_is_output(g, xq) ? 1 : 0;
  int y = cs_graph_node(g, tail.q)->outputs[0];
  int out_copy = cs_graph_is_model_output(g, y);
  int64_t macs = c * c_in * hh * ww;
  double scalar = cs_mm_cost_scalar(macs, (double)(c_in * hh * ww + c * c_in + c * hh * ww));
  pack_plan pad, best, cand;
  plan(t, c_in, c, hh, ww, 1, d, in_copy, out_copy, &pad);
  memset(&best, 0, sizeof best);
  /* C·P within padding's channels: the packed conv computes no more MACs
   * than the padded one (C_in·P·N/P = C_in·N per pixel), its panels and
   * bytes fewer. */
  for (int p = 2; p <= PACK_MAX; p++)
    if (plan(t, c_in, c, hh, ww, p, d, in_copy, out_copy, &cand) && cand.n <= pad.n &&
        c_in * p <= 131071 && (!best.p || cand.mma_cycles < best.mma_cycles))
      best = cand;
  /* the padding budget (cs_mm_refused): a refused form is not a choice */
  const char *layer = cs_graph_node(g, conv_id)->name;
  if (!best.p || cs_mm_refused(t, layer, kPackWhat) ||
      (!cs_mm_refused(t, layer, NULL) && best.mma_cycles >= pad.mma_cycles) ||
      !cs_mm_cost_pays(best.mma_cycles, scalar))
    return CS_OK;

  /* Rewrite: weights and their per-channel parameters, the bias, the
   * input and the output. */
  char base[256];
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  int nw = packed_weights(g, base, wc, &best);
  if (nw < 0) return CS_ERR_NOMEM;
  cs_node_set_input(g, wdq, 0, nw);
  if ((st = cs_mm_replicate_dq(g, wdq, base, "mm_pack", "w", c, best.p, best.n, 0)) != CS_OK) return st;
  int64_t wsh[4] = {best.n, best.k, 1, 1};
  memcpy(cs_graph_value(g, cs_graph_node(g, wdq)->outputs[0])->shape, wsh, sizeof wsh);
  if (b >= 0) {
    if (bdq >= 0) {
      if ((st = cs_mm_replicate_dq(g, bdq, base, "mm_pack", "b", c, best.p, best.n, 1)) != CS_OK) return st;
      cs_graph_value(g, b)->shape[0] = best.n;
    } else {
      int nb = cs_mm_replicated(g, base, "mm_pack_b", b, c, best.p, best.n, 0);
      if (nb < 0) return CS_ERR_NOMEM;
      cs_node_set_input(g, conv_id, 2, nb);
    }
  }
  if ((st = pack_input(g, conv_id, xdq, &best, base)) != CS_OK) return st;
  int64_t ysh[4] = {1, best.n, best.h, best.w};
  memcpy(cs_graph_value(g, cs_graph_node(g, conv_id)->outputs[0])->shape, ysh, sizeof ysh);
  if ((st = unpack_output(g, &tail, &best, base)) != CS_OK) return st;

  cs_offload_pad rep;
  cs_mm_pad_decision_init(&rep, cs_graph_node(g, conv_id)->name, kPackWhat, c, best.n, macs, best.macs - macs);
  rep.padded = 1;
  rep.weight_bytes_added = (best.n * best.k - c * c_in) * cs_mm_pad_bytes(d);
  rep.act_bytes_added = (best.n * best.h * best.w - c * hh * ww) * cs_mm_pad_bytes(d);
  rep.mma_cycles = best.mma_cycles;
  rep.scalar_cycles = scalar;
  cs_mmalib_report_pad(g, &rep);
  return CS_OK;
}

cs_status pass_mmalib_pack_pixels(cs_graph *g, const cs_target *t) { return cs_mm_each_conv(g, t, consider_conv); }
