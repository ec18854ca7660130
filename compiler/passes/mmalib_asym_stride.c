/*
 * MMALIBAsymStride — asymmetric stride (issue 16, -mmalib=1): MMALIB
 * strides H and W alike, so a QDQ conv (plain, depthwise or grouped) with
 * stride (s_h, s_w), s_h != s_w — PP-OCR's text-line networks downsample
 * rows only, (2, 1) — is declined. When the larger stride S is a multiple
 * r·s of the smaller s, two rewrites make it MMALIB's:
 *
 * Phases (match/mmalib_phases.h, which MMALIBOutS2D's f ≠ g splits
 * share). Along the axis of the smaller stride (W for
 * (2, 1)), output m·r + j is output m of the conv at stride (S, S) whose
 * window starts j·s later: its pads there (begin − j·s, end_j). So r
 * copies of the layer at stride (S, S), one per phase j, interleaved:
 *
 *   Q(act(Conv_(2,1)(x)))                            → y  [1, C, H_out, W_out]
 *   Q(act(Conv_(2,2)(x), pads l − j)), j = 0, 1      → y_j [1, C, H_out, ⌈W_out/2⌉]
 *     → k_concat(y_0, y_1), inner one element        → y  (interleaved)
 *
 * Exact: each output reads the same window, weights, bias and
 * requantization as before, so it is the same integer (the kernel that
 * computes it is whichever takes each copy). The MMA computes the layer's
 * own positions (one more per row in the last phase when W_out is not a
 * multiple of r: the copies have ⌈W_out/r⌉ each, end_j the padding that
 * makes it so, and a k_slice cuts the extra one off). Needs begin ≥
 * (r − 1)·s (a copy cannot start its window left of x's padding).
 *
 * The pick: the stride-s conv and a pick of every (S/s)-th row or column
 * (r times the positions on the MMA, but x and the weights read once):
 *
 *   Q(act(Conv_(s,s)(x)))                    → y' [1, C, H1, W1]
 *     → k_slice(start 0, step (sh/s, sw/s))  → y
 *
 * output (i, j) of the strided conv reads the window at (i·s_h − pad_top,
 * j·s_w − pad_left), output (i·s_h/s, j·s_w/s) of the stride-s conv. H1
 * = ⌊(H + pads − k_h)/s⌋ + 1 rows, of which the pick keeps ⌊(H1 − 1)·s/s_h⌋
 * + 1 = H_out (likewise W). The pick runs on the int8 (int16) output,
 * after the tail's Q; on the exact path the requantization makes it
 * (FuseWidenIntoProducer rule 5).
 *
 * The cost rule (mmalib_cost.h): the MMA computes the rewrite's positions,
 * reads x and the weights once per call, and moves the rewritten outputs
 * twice more (written, read by the interleave or the pick); the scalar
 * core computes the layer as it is. On the exact path the pick's pass is
 * not spent; the rule charges it all the same, as it misses that path's
 * int16 tiles of a 5×5/7×7 depthwise window (4 or 9 calls, each reading
 * the window), and one error is not traded for the other. Of the forms
 * the conv pass would take, the cheaper is priced against the core
 * (phases win on large maps, the pick on small ones, where the second
 * read of the weights outweighs the MMA time saved). A rewrite is
 * taken when it pays and the conv pass would then offload every call
 * (checked first, cs_mm_conv_padded_rule on each stride-(S, S) copy or
 * the stride-s conv; a plain conv whose C_out is off the tile is left
 * alone: it would need channel padding as well, and the two are not
 * priced together). The decision goes to the offload report's padding
 * section (what = "positions": the output positions per channel before
 * and after), any extra MACs counted as padding's.
 */
#include <stdlib.h>
#include <string.h>

#include "match/geometry.h"
#include "match/mmalib_common.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"
#include "match/mmalib_cost.h"
#include "match/mmalib_phases.h"
#include "match/mmalib_report.h"
#include "pass_list.h"

/* The tail's Q writes y' (shape h1 × w1) and a k_slice picks y. */
static cs_status pick_output(cs_graph *g, const cs_qdq_tail *tail, int64_t h1, int64_t w1, int step_h, int step_w,
                             const char *base) {
  if (tail->act >= 0) {
    cs_value *a = cs_graph_value(g, cs_graph_node(g, tail->act)->outputs[0]);
    a->shape[2] = h1;
    a->shape[3] = w1;
  }
  int y = cs_graph_node(g, tail->q)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  char name[512];
  snprintf(name, sizeof name, "%s.mm_stride1", yv->name ? yv->name : base);
  int64_t shape[4] = {yv->shape[0], yv->shape[1], h1, w1};
  int yp = cs_reroute_output(g, tail->q, name, 4, shape);
  const int64_t step[4] = {1, 1, step_h, step_w};
  return yp < 0 || cs_add_slice(g, base, yp, y, NULL, step) < 0 ? CS_ERR_NOMEM : CS_OK;
}

static cs_status consider_conv(cs_graph *g, const cs_target *t, int conv_id) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *yc = cs_graph_value(g, conv->outputs[0]);
  if (x->rank != 4 || yc->rank != 4 || x->shape[0] != 1) return CS_OK;
  cs_window2d w;
  if (cs_window2d_from_node(g, conv, &w) != CS_OK) {
    cs_error_clear();
    return CS_OK;
  }
  if (w.stride_h == w.stride_w || w.stride_h < 1 || w.stride_w < 1) return CS_OK;
  int s = w.stride_h < w.stride_w ? w.stride_h : w.stride_w;
  int big = w.stride_h < w.stride_w ? w.stride_w : w.stride_h;
  if (big % s != 0) return CS_OK;
  const cs_mm_dtype *d = cs_mm_conv_runs_as(g, t, NULL, conv);
  if (!d) return CS_OK;
  /* auto_pad derives the pads from the strides: explicit pads only */
  const char *ap = cs_node_attr_string(conv, "auto_pad", "NOTSET");
  if (ap && strcmp(ap, "NOTSET") != 0) return CS_OK;
  /* A plain conv off the channel tile would need padding too, decided
   * later on the rewritten conv: the two rewrites are not priced together,
   * so the stride is left alone. */
  if (cs_node_attr_int(conv, "group", 1) == 1 && yc->shape[1] % d->mult != 0) return CS_OK;
  int64_t h1 = (x->shape[2] + w.pad_top + w.pad_bottom - (int64_t)w.dil_h * (w.k_h - 1) - 1) / s + 1;
  int64_t w1 = (x->shape[3] + w.pad_left + w.pad_right - (int64_t)w.dil_w * (w.k_w - 1) - 1) / s + 1;
  int step_h = w.stride_h / s, step_w = w.stride_w / s;
  if ((h1 - 1) / step_h + 1 != yc->shape[2] || (w1 - 1) / step_w + 1 != yc->shape[3]) return CS_OK;
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail_as(g, conv->outputs[0], 1, d->dt, &tail)) return CS_OK;
  cs_qparams_free(&tail.out);

  cs_mm_geom old, one;
  cs_mm_geom_of(g, conv_id, &old);
  int64_t c_out = yc->shape[1];
  cs_mm_phases ph;
  int phases = cs_mm_phases_of(g, conv_id, &ph), r = ph.r;
  /* else the stride-s conv */
  one = old;
  one.strides[0] = one.strides[1] = s;
  one.hw[0] = h1;
  one.hw[1] = w1;
  int take_ph = 0, take_one = 0;
  cs_mm_phases single = {.r = 1, .ph = {one}};
  cs_status st = phases ? cs_mm_phases_offloaded(g, t, conv_id, d, c_out, &ph, &take_ph) : CS_OK;
  if (st == CS_OK) st = cs_mm_phases_offloaded(g, t, conv_id, d, c_out, &single, &take_one);
  if (st != CS_OK || (!take_ph && !take_one)) return st;

  /* Each form the conv pass would take, priced; the cheaper is decided. */
  conv = cs_graph_node(g, conv_id);
  int64_t per = cs_value_numel(cs_graph_value(g, conv->inputs[1])) / c_out; /* C_in/groups·KH·KW */
  double e = (double)cs_dtype_size(d->dt);
  int64_t pos = old.hw[0] * old.hw[1];
  double in_b = e * (double)cs_value_numel(x), w_b = e * (double)(per * c_out), out_b = e * (double)(c_out * pos);
  int64_t pos_ph = take_ph ? r * ph.ph[0].hw[0] * ph.ph[0].hw[1] : 0, pos_one = h1 * w1;
  double ph_b = e * (double)(c_out * pos_ph), one_b = e * (double)(c_out * pos_one);
  /* MMA: a depthwise conv's "panel" is its kernel window per channel.
   * Phases: r calls each reading x and w and writing its output (staged:
   * cs_mm_call_bytes), the outputs read and interleaved on the core (and
   * cut when they overshoot); the pick: one call writing y', y' read and
   * y written on the core. */
  double mma_ph = take_ph ? cs_mm_cost_mma(per, c_out, pos_ph, d->mult,
                                           r * cs_mm_call_bytes(t, in_b, w_b, ph_b / r) + 2 * ph_b +
                                               (pos_ph != pos ? ph_b + out_b : 0))
                          : 0;
  double mma_one =
      take_one ? cs_mm_cost_mma(per, c_out, pos_one, d->mult, cs_mm_call_bytes(t, in_b, w_b, one_b) + one_b + out_b)
               : 0;
  phases = take_ph && (!take_one || mma_ph <= mma_one);
  int64_t pos1 = phases ? pos_ph : pos_one;
  cs_offload_pad p;
  cs_mm_pad_decision_init(&p, conv->name, "positions", pos, pos1, c_out * per * pos, c_out * per * (pos1 - pos));
  p.act_bytes_added = c_out * (pos1 - pos) * cs_mm_pad_bytes(d);
  int take = cs_mm_pad_decide(t, &p, phases ? mma_ph : mma_one, cs_mm_cost_scalar(p.macs, in_b + w_b + out_b));
  cs_mmalib_report_pad(g, &p);
  if (!take) return CS_OK;
  char base[256];
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  if (phases) return cs_mm_build_phases(g, conv_id, &tail, &ph, base);
  if (cs_mm_geom_set(g, conv_id, &one) != CS_OK) return CS_ERR_NOMEM;
  return pick_output(g, &tail, h1, w1, step_h, step_w, base);
}

cs_status pass_mmalib_asym_stride(cs_graph *g, const cs_target *t) { return cs_mm_each_conv(g, t, consider_conv); }
