/*
 * MMALIBAsymStride — asymmetric stride (issue 16, -mmalib=1): MMALIB
 * strides H and W alike, so a QDQ conv (plain, depthwise or grouped) with
 * stride (s_h, s_w), s_h != s_w — PP-OCR's text-line networks downsample
 * rows only, (2, 1) — is declined. When the larger stride is a multiple of
 * the smaller s, the conv at stride (s, s) followed by a pick of every
 * (s_h/s)-th row and (s_w/s)-th column computes the same outputs:
 *
 *   Q(act(Conv_(sh,sw)(x)))                  → y  [1, C, H_out, W_out]
 *   Q(act(Conv_(s,s)(x)))                    → y' [1, C, H1, W1]
 *     → k_slice(start 0, step (sh/s, sw/s))  → y
 *
 * Exact: output (i, j) of the strided conv reads the input window at
 * (i·s_h − pad_top, j·s_w − pad_left), which is output (i·s_h/s, j·s_w/s)
 * of the stride-s conv — the same window, weights, bias and requantization,
 * so the same integer (the kernel that computes it is whichever takes the
 * rewritten conv: MMALIB, or the generic path when it still declines). H1
 * = ⌊(H + pads − k_h)/s⌋ + 1 rows, of which the pick keeps ⌊(H1 − 1)·s/s_h⌋
 * + 1 = H_out (likewise W). The pick runs on the int8 (int16) output,
 * after the tail's Q; on the exact path the requantization makes it
 * (FuseWidenIntoProducer rule 5).
 *
 * The cost rule (mmalib_cost.h): the MMA computes s_h·s_w/s² times the
 * positions, and moves y' twice more (written, read by the pick); the
 * scalar core computes the layer as it is. On the exact path the pick's
 * pass is not spent; the rule charges it all the same, as it misses that
 * path's int16 tiles of a 5×5/7×7 depthwise window (4 or 9 calls, each
 * reading the window: PP-OCR cls's (2, 1) 5×5 layers estimate 6x the
 * core's when compiled), and one error is not traded for the other. The
 * rewrite is taken when it pays and the conv pass would then offload the
 * layer (checked first,
 * cs_mm_conv_padded_rule on the stride-s conv; a plain conv whose C_out
 * is off the tile is left alone: it would need channel padding as well,
 * and the two are not priced together). The decision goes to the offload report's padding
 * section (what = "positions": the output positions per channel before
 * and after), the extra MACs counted as padding's.
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
  if (yp < 0) return CS_ERR_NOMEM;
  tidsp_slice_params sp;
  memset(&sp, 0, sizeof sp);
  sp.rank = 4;
  sp.elem_size = (int32_t)cs_dtype_size(cs_graph_value(g, y)->dtype);
  for (int d = 0; d < 4; d++) {
    sp.in_shape[d] = (int32_t)shape[d];
    sp.out_shape[d] = (int32_t)cs_graph_value(g, y)->shape[d];
    sp.step[d] = 1;
  }
  sp.step[2] = step_h;
  sp.step[3] = step_w;
  int k = cs_add_kernel(g, CS_OP_K_SLICE, base, 1, &yp, y);
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.slice = sp;
  return CS_OK;
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
   * later on the stride-s conv: the two rewrites are not priced together,
   * so the stride is left alone. */
  if (cs_node_attr_int(conv, "group", 1) == 1 && yc->shape[1] % d->mult != 0) return CS_OK;
  int64_t h1 = (x->shape[2] + w.pad_top + w.pad_bottom - (int64_t)w.dil_h * (w.k_h - 1) - 1) / s + 1;
  int64_t w1 = (x->shape[3] + w.pad_left + w.pad_right - (int64_t)w.dil_w * (w.k_w - 1) - 1) / s + 1;
  int step_h = w.stride_h / s, step_w = w.stride_w / s;
  if ((h1 - 1) / step_h + 1 != yc->shape[2] || (w1 - 1) / step_w + 1 != yc->shape[3]) return CS_OK;
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail_as(g, conv->outputs[0], 1, d->dt, &tail)) return CS_OK;
  cs_qparams_free(&tail.out);

  /* Would the conv pass take it at stride (s, s)? Check on the node with
   * its strides set, put back unless taken. */
  int64_t old_strides[2] = {w.stride_h, w.stride_w}, new_strides[2] = {s, s};
  int64_t old_hw[2] = {yc->shape[2], yc->shape[3]};
  int64_t c_out = yc->shape[1];
  cs_node_set_attr_ints(cs_graph_node(g, conv_id), "strides", 2, new_strides);
  cs_graph_value(g, cs_graph_node(g, conv_id)->outputs[0])->shape[2] = h1;
  cs_graph_value(g, cs_graph_node(g, conv_id)->outputs[0])->shape[3] = w1;
  char why[200];
  const char *rule = NULL;
  cs_status st = cs_mm_conv_padded_rule(g, t, conv_id, d, c_out, &rule, why, sizeof why);
  int take = st == CS_OK && !rule;
  if (take) {
    conv = cs_graph_node(g, conv_id);
    int64_t per = cs_value_numel(cs_graph_value(g, conv->inputs[1])) / c_out; /* C_in/groups·KH·KW */
    double e = (double)cs_dtype_size(d->dt);
    int64_t pos = old_hw[0] * old_hw[1], pos1 = h1 * w1;
    double in_b = e * (double)cs_value_numel(x), w_b = e * (double)(per * c_out);
    double out_b = e * (double)(c_out * pos), out1_b = e * (double)(c_out * pos1);
    cs_offload_pad p;
    cs_mm_pad_decision_init(&p, conv->name, "positions", pos, pos1, c_out * per * pos, c_out * per * (pos1 - pos));
    p.act_bytes_added = c_out * (pos1 - pos) * cs_mm_pad_bytes(d);
    /* MMA: a depthwise conv's "panel" is its kernel window per channel */
    take = cs_mm_pad_decide(&p, cs_mm_cost_mma(per, c_out, pos1, d->mult, in_b + w_b + out1_b + out1_b + out_b),
                            cs_mm_cost_scalar(p.macs, in_b + w_b + out_b));
    cs_mmalib_report_pad(g, &p);
  }
  if (!take) { /* put the node back as it was */
    cs_node_set_attr_ints(cs_graph_node(g, conv_id), "strides", 2, old_strides);
    cs_graph_value(g, cs_graph_node(g, conv_id)->outputs[0])->shape[2] = old_hw[0];
    cs_graph_value(g, cs_graph_node(g, conv_id)->outputs[0])->shape[3] = old_hw[1];
    return st;
  }
  char base[256];
  snprintf(base, sizeof base, "%s", cs_graph_node(g, conv_id)->name ? cs_graph_node(g, conv_id)->name : "conv");
  return pick_output(g, &tail, h1, w1, step_h, step_w, base);
}

cs_status pass_mmalib_asym_stride(cs_graph *g, const cs_target *t) { return cs_mm_each_conv(g, t, consider_conv); }
