/*
 * MMALIBDilation — dilated convs (issue 16, -mmalib=1): MMALIB has no
 * dilated convolution, so a QDQ conv (groups = 1) with dilation (d_h, d_w)
 * ≠ (1, 1) is declined. The same layer as a dense conv whose kernel spans
 * the dilated window, k' = d·(k − 1) + 1 per axis, with the filter's taps
 * at multiples of d and zero weights between them, computes the same
 * outputs:
 *
 *   Conv(x, w[C, C_in, k_h, k_w], dilations (d_h, d_w))
 *   Conv(x, w'[C, C_in, k'_h, k'_w], dilations (1, 1)),
 *        w'[.., d_h·i, d_w·j] = w[.., i, j], 0 elsewhere
 *
 * Exact: output (y, x) reads input (y·s − pad_top + d_h·i, x·s − pad_left
 * + d_w·j) for tap (i, j) in both, the other taps of k' multiply zero
 * weights (the weight zero point is 0: MMALIB's rule), integer sums are
 * order-free; the output size ⌊(H + pads − d·(k − 1) − 1)/s⌋ + 1 is the
 * dense formula for k'. Nothing else changes (pads, bias, scales, tail).
 *
 * The cost rule (mmalib_cost.h): the MMA computes k'_h·k'_w/(k_h·k_w)
 * times the MACs (5²/3² = 2.8 for a 3×3 at dilation 2) and reads the
 * larger weights; the scalar core the layer as it is. Taken when it pays
 * and the conv pass would then offload the layer (checked first,
 * cs_mm_conv_padded_rule on the node with its new kernel and dilations,
 * put back unless taken); a layer whose C_out is off the tile is left
 * alone (it would need channel padding as well, not priced together). The
 * decision goes to the offload report's padding section (what = "taps":
 * taps per filter before and after), the extra MACs counted as padding's.
 * (Space-to-batch — the d² phases of the input as images of a dilation-1
 * conv — would add no MACs but two transposes and a batch loop.)
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

/* The dense weights w' [C, C_in, kh', kw'] of w at dilation (dh, dw). */
static int dense_weights(cs_graph *g, const char *base, int w, int dh, int dw, int64_t kh2, int64_t kw2) {
  const cs_value *v = cs_graph_value(g, w);
  int64_t c = v->shape[0], ci = v->shape[1], kh = v->shape[2], kw = v->shape[3];
  size_t e = cs_dtype_size(v->dtype);
  int64_t shape[4] = {c, ci, kh2, kw2};
  unsigned char *data = calloc((size_t)(c * ci * kh2 * kw2) + 1, e);
  if (!data) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  const unsigned char *from = v->data;
  for (int64_t f = 0; f < c * ci; f++)
    for (int64_t i = 0; i < kh; i++)
      for (int64_t j = 0; j < kw; j++)
        memcpy(data + (size_t)((f * kh2 + i * dh) * kw2 + j * dw) * e, from + (size_t)((f * kh + i) * kw + j) * e,
               e);
  int id = cs_add_const_named(g, base, "mm_dense_w", v->dtype, 4, shape, data);
  free(data);
  return id;
}

/* Set the conv's kernel and dilations. */
static void set_kernel(cs_graph *g, int conv_id, const int64_t ks[2], const int64_t dil[2]) {
  cs_node *n = cs_graph_node(g, conv_id);
  cs_node_set_attr_ints(n, "kernel_shape", 2, ks);
  cs_node_set_attr_ints(n, "dilations", 2, dil);
}

static cs_status consider_conv(cs_graph *g, const cs_target *t, int conv_id) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  const cs_mm_dtype *d = cs_mm_plain_conv(g, t, conv);
  if (!d) return CS_OK;
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *yc = cs_graph_value(g, conv->outputs[0]);
  cs_window2d win;
  if (cs_window2d_from_node(g, conv, &win) != CS_OK) {
    cs_error_clear();
    return CS_OK;
  }
  if ((win.dil_h == 1 && win.dil_w == 1) || win.dil_h < 1 || win.dil_w < 1) return CS_OK;
  int64_t c = yc->shape[1];
  if (c <= 0 || c % d->mult != 0) return CS_OK; /* would need padding too: not priced together */
  int wdq = -1;
  if (!cs_mm_weight_dq_zp0(g, conv->inputs[1], d->dt, &wdq)) return CS_OK;
  int wc = cs_graph_node(g, wdq)->inputs[0];
  const cs_value *wv = cs_graph_value(g, wc);
  if (!cs_match_is_const(g, wc) || wv->rank != 4 || wv->shape[0] != c || wv->shape[2] != win.k_h ||
      wv->shape[3] != win.k_w || cs_match_single_consumer(g, cs_graph_node(g, wdq)->outputs[0]) != conv_id)
    return CS_OK;
  int64_t kh2 = (int64_t)win.dil_h * (win.k_h - 1) + 1, kw2 = (int64_t)win.dil_w * (win.k_w - 1) + 1;
  int64_t c_in = x->shape[1], pos = yc->shape[2] * yc->shape[3];

  /* Would the conv pass take it dense? Check on the node, put back unless taken. */
  int64_t old_ks[2] = {win.k_h, win.k_w}, old_dil[2] = {win.dil_h, win.dil_w};
  int64_t ks[2] = {kh2, kw2}, one[2] = {1, 1};
  set_kernel(g, conv_id, ks, one);
  char why[200];
  const char *rule = NULL;
  cs_status st = cs_mm_conv_padded_rule(g, t, conv_id, d, c, &rule, why, sizeof why);
  if (st != CS_OK || rule) {
    set_kernel(g, conv_id, old_ks, old_dil);
    return st;
  }
  double e = (double)cs_dtype_size(d->dt);
  int64_t taps = (int64_t)win.k_h * win.k_w, taps2 = kh2 * kw2;
  double in_b = e * (double)(c_in * x->shape[2] * x->shape[3]), out_b = e * (double)(c * pos);
  cs_offload_pad p;
  const char *lname = cs_graph_node(g, conv_id)->name;
  cs_mm_pad_decision_init(&p, lname, "taps", taps, taps2, c * pos * c_in * taps, c * pos * c_in * (taps2 - taps));
  p.weight_bytes_added = c * c_in * (taps2 - taps) * cs_mm_pad_bytes(d);
  cs_mm_pad_decide(t, &p,
                   cs_mm_cost_mma(c_in * taps2, c, pos, d->mult,
                                  cs_mm_call_bytes(t, in_b, e * (double)(c * c_in * taps2), out_b)),
                   cs_mm_cost_scalar(p.macs, in_b + e * (double)(c * c_in * taps) + out_b));
  cs_mmalib_report_pad(g, &p);
  if (!p.padded) {
    set_kernel(g, conv_id, old_ks, old_dil);
    return CS_OK;
  }
  char base[256];
  snprintf(base, sizeof base, "%s", lname ? lname : "conv");
  int nw = dense_weights(g, base, wc, win.dil_h, win.dil_w, kh2, kw2);
  if (nw < 0) return CS_ERR_NOMEM;
  cs_node_set_input(g, wdq, 0, nw);
  cs_value *wout = cs_graph_value(g, cs_graph_node(g, wdq)->outputs[0]);
  wout->shape[2] = kh2;
  wout->shape[3] = kw2;
  return CS_OK;
}

cs_status pass_mmalib_dilation(cs_graph *g, const cs_target *t) { return cs_mm_each_conv(g, t, consider_conv); }
