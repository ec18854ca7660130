/*
 * MMALIBConstChannels — constant output channels (issue 16, -mmalib=1): an
 * int8 QDQ conv (plain, depthwise or grouped) that the MMALIB fold
 * declines because of some of its channels — "requant multiplier d_s*w_s/o_s
 * below 2^-32" or "folded bias overflows int32" (mmalib_fold.c) — is made
 * eligible when each such channel's output is one constant q0 for every
 * possible input. Trained networks have them: a filter whose weight scale
 * collapsed (a pruned or dead channel of the PP-OCR detector and
 * recognizer) has a multiplier far below one LSB per accumulator step, and
 * often a bias in accumulator units beyond int32.
 *
 * The proof, in accumulator units as the generic int8 conv (the path
 * bit-exact with ORT) computes them: channel c's accumulator is acc =
 * Σ (x_q − d_zp)·w_q + b with x_q in [-128, 127] (a padded position
 * contributes 0), so |Σ| ≤ A = Σ|w_q[c]|·max(127 − d_zp, d_zp + 128) and
 * acc ∈ [b − A, b + A] (b: the DQ bias's integers, or a float bias over
 * d_s·w_s rounded and saturated to int32, as that path takes it); the
 * output is Q(act(acc·d_s·w_s)), a monotone function of acc: the channel
 * is constant when both ends of the interval, each widened by 10^-3 LSB
 * (plus 10^-6 relative: float32 rounding of any kernel's arithmetic),
 * quantize to the same q0.
 *
 * The rewrite: channel c's filter becomes zeros, its weight scale o_s/d_s
 * (multiplier 1: MMALIB's scale 128, shift 7, exact) and its bias
 * (q0 − o_zp) at scale d_s·w_s' (≈ o_s): the channel computes
 * Q(act((q0 − o_zp)·o_s)) = q0 on every path — MMALIB's (bias q0, ×1),
 * the generic int8 conv's and ORT's float semantics alike — so the graph
 * means what it meant, bit for bit, and the layer is offloaded whole. The
 * other channels are untouched. It adds no MACs and no bytes, so there is
 * no cost to weigh: it is taken whenever it makes the layer eligible (the
 * conv pass then checks every other rule; a layer that still declines
 * keeps the rewritten, equivalent, constants).
 *
 * Declined (the layer left as it was): a channel that needs the rewrite
 * but is not constant; a bias whose integer and float meanings differ (a
 * DQ bias at a scale other than d_s·w_s, a float bias beyond int32
 * accumulator units: the generic int8 conv saturates it, the float path
 * does not); per-tensor weight scales (one scale for all channels); a bias whose DQ has a per-tensor scale or a non-zero zero
 * point, or shared weights/bias; int16 (its fold has neither rule's
 * limits in the same form).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/mmalib_common.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"
#include "pass_list.h"
#include "quant/mmalib_fold.h"
#include "quant/scale_shift.h"

/* Output LSB margin at each end of the interval (see the header). */
#define MARGIN_ABS 1e-3
#define MARGIN_REL 1e-6

/* q(t) of the int8 output for t = v/o_s (the activation already applied). */
static int32_t quantize_t(double t, int32_t o_zp) {
  double q = nearbyint(t) + (double)o_zp;
  return q < -128.0 ? -128 : q > 127.0 ? 127 : (int32_t)q;
}

static double act(double v, const cs_qdq_tail *tail) { return v < tail->lo ? tail->lo : v > tail->hi ? tail->hi : v; }

/* 1 and *q0 when channel c (bias b_acc in accumulator units, weights
 * w[0..per), multiplier m = d_s·w_s/o_s) is constant. */
static int constant_channel(const int8_t *w, int64_t per, int32_t d_zp, double m, double b_acc,
                            const cs_qdq_tail *tail, int32_t *q0) {
  int64_t sum = 0;
  for (int64_t i = 0; i < per; i++) sum += w[i] < 0 ? -w[i] : w[i];
  double xmax = (double)(127 - d_zp > d_zp + 128 ? 127 - d_zp : d_zp + 128);
  double a = (double)sum * xmax, o_s = tail->out.scale[0];
  double t_lo = act((b_acc - a) * m * o_s, tail) / o_s, t_hi = act((b_acc + a) * m * o_s, tail) / o_s;
  t_lo -= MARGIN_ABS + MARGIN_REL * fabs(t_lo);
  t_hi += MARGIN_ABS + MARGIN_REL * fabs(t_hi);
  int32_t lo = quantize_t(t_lo, tail->out.zp[0]), hi = quantize_t(t_hi, tail->out.zp[0]);
  *q0 = lo;
  return lo == hi;
}

/* Channel c's bias in accumulator units as the generic int8 conv takes it
 * (fuse_qdq_to_int8_conv2d.c cs_fold_bias_i32): a DQ bias's integers, a
 * float bias over fl(d_s·w_s) rounded and saturated to int32. */
static double bias_acc(const cs_fold_bias *b, int c, float d_s, float w_s) {
  if (b->q) return (double)b->q[c];
  if (!b->f) return 0.0;
  float q = b->f[c] / (d_s * w_s);
  double r = nearbyint((double)q);
  return r > 2147483647.0 ? 2147483647.0 : r < -2147483648.0 ? -2147483648.0 : r;
}

/* Whether the MMALIB int8 fold declines channel c alone (its own rule). */
static int fold_declines(const cs_fold_bias *b, int c, float d_s, int32_t d_zp, float w_s, float o_s, int32_t o_zp,
                         int64_t wsum) {
  cs_fold_bias one = {b->q ? b->q + c : NULL, b->q_dq, b->f ? b->f + c : NULL};
  cs_qparams wq;
  memset(&wq, 0, sizeof wq);
  wq.dtype = CS_DTYPE_I8;
  wq.axis = -1;
  wq.count = 1;
  wq.scale = &w_s;
  wq.zps = wq.zp;
  int32_t bias;
  uint8_t scale, shift;
  double worst;
  return cs_mm_fold_i8(&one, d_s, d_zp, &wq, o_s, o_zp, &wsum, 1, &bias, &scale, &shift, &worst) != NULL;
}

/* A copy of constant value v's data (n elements of esize), or NULL. */
static void *dup_data(cs_graph *g, int v, size_t n, size_t esize) {
  void *p = malloc(n * esize + 1);
  if (!p) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return NULL;
  }
  memcpy(p, cs_graph_value(g, v)->data, n * esize);
  return p;
}

/* Replace input j of node `node` by a new constant shaped like the old
 * one, holding `data`. */
static cs_status set_const(cs_graph *g, int node, int j, const char *base, const char *suffix, const void *data) {
  const cs_value *v = cs_graph_value(g, cs_graph_node(g, node)->inputs[j]);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, v->shape, sizeof shape);
  int id = cs_add_const_named(g, base, suffix, v->dtype, v->rank, shape, data);
  if (id < 0) return CS_ERR_NOMEM;
  cs_node_set_input(g, node, j, id);
  return CS_OK;
}

static cs_status consider_conv(cs_graph *g, const cs_target *t, int conv_id) {
  (void)t;
  const cs_node *conv = cs_graph_node(g, conv_id);
  const cs_value *yc = cs_graph_value(g, conv->outputs[0]);
  if (yc->rank != 4) return CS_OK;
  int64_t c_out = yc->shape[1];
  cs_qparams xq, wq;
  cs_qdq_tail tail;
  int wdq = -1;
  if (cs_match_dq_as(g, conv->inputs[0], CS_DTYPE_I8, &xq) < 0) return CS_OK;
  int ok = cs_match_weight_dq_as(g, conv->inputs[1], 0, CS_DTYPE_I8, &wq, &wdq);
  if (!ok) {
    cs_qparams_free(&xq);
    return CS_OK;
  }
  ok = cs_match_qdq_tail_as(g, conv->outputs[0], 1, CS_DTYPE_I8, &tail);
  if (!ok) {
    cs_qparams_free(&xq);
    cs_qparams_free(&wq);
    return CS_OK;
  }
  cs_status st = CS_OK;
  int32_t *q0 = NULL;
  int8_t *w = NULL;
  float *ws = NULL, *bs = NULL, *bf = NULL;
  int32_t *bq = NULL;
  cs_fold_bias b = {NULL, NULL, NULL};
  cs_qparams bqp;
  int have_bqp = 0;
  int b_in = conv->n_inputs > 2 ? conv->inputs[2] : -1;
  int bdq = b_in >= 0 ? cs_match_producer(g, b_in, CS_OP_DEQUANTIZE_LINEAR) : -1;
  const cs_value *wv = cs_graph_value(g, cs_graph_node(g, wdq)->inputs[0]);
  if (wq.count != c_out || wq.zps[0] != 0 || !wv->data || c_out <= 0) goto done;
  if (cs_match_single_consumer(g, cs_graph_node(g, wdq)->outputs[0]) != conv_id) goto done;
  if (b_in >= 0 && cs_match_single_consumer(g, b_in) != conv_id) goto done;
  if (cs_mm_bias_of(g, b_in, (int)c_out, 0, &b, &bqp)) goto done;
  if (bdq >= 0) {
    if (cs_qparams_read(g, cs_graph_node(g, bdq), &bqp) != CS_OK) {
      cs_error_clear();
      goto done;
    }
    have_bqp = 1;
    if (cs_match_single_consumer(g, cs_graph_node(g, bdq)->outputs[0]) != conv_id) goto done;
  }
  int64_t per = cs_value_numel(wv) / c_out;
  const int8_t *w0 = wv->data;
  float d_s = xq.scale[0], o_s = tail.out.scale[0];
  int32_t d_zp = xq.zp[0], o_zp = tail.out.zp[0];
  q0 = malloc(sizeof *q0 * (size_t)c_out);
  if (!q0) {
    st = cs_error(CS_ERR_NOMEM, "out of memory");
    goto done;
  }
  int n_fix = 0;
  for (int64_t c = 0; c < c_out; c++) {
    int64_t wsum = 0;
    for (int64_t i = 0; i < per; i++) wsum += w0[c * per + i];
    q0[c] = INT32_MIN;
    if (!fold_declines(&b, (int)c, d_s, d_zp, wq.scale[c], o_s, o_zp, wsum)) continue;
    double m = (double)d_s * (double)wq.scale[c] / (double)o_s;
    /* Only where the integer and the float semantics of the bias agree (a
     * layer the int8 paths decline runs DQ → float Conv → Q): a DQ bias at
     * scale d_s·w_s (ORT's), a float bias within int32 accumulator units. */
    double dw = (double)(d_s * wq.scale[c]);
    if (b.q && fabs((double)bqp.scale[bqp.count > 1 ? c : 0] - dw) > 1e-6 * dw) goto done;
    if (b.f && fabs((double)b.f[c] / dw) >= 2147483647.0) goto done;
    int32_t q;
    if (!constant_channel(w0 + c * per, per, d_zp, m, bias_acc(&b, (int)c, d_s, wq.scale[c]), &tail, &q))
      goto done;
    int32_t none;
    /* no bias to rewrite: the channel must already be act(0) */
    if (b_in < 0 && (constant_channel(w0, 0, d_zp, 1.0, 0.0, &tail, &none), none != q)) goto done;
    /* a DQ bias: per-channel scale and zero point 0, or q0 = o_zp (bias 0) */
    if (bdq >= 0 && ((bqp.count != c_out && q != o_zp) || bqp.zps[bqp.count > 1 ? c : 0] != 0)) goto done;
    q0[c] = q;
    n_fix++;
  }
  if (!n_fix) goto done;

  /* Rewrite: zero filters, multiplier 1, bias q0 − o_zp. */
  char base[256];
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  int w_in = cs_graph_node(g, wdq)->inputs[0], ws_in = cs_graph_node(g, wdq)->inputs[1];
  if (!(w = dup_data(g, w_in, (size_t)cs_value_numel(wv), 1)) ||
      !(ws = dup_data(g, ws_in, (size_t)c_out, sizeof(float)))) {
    st = CS_ERR_NOMEM;
    goto done;
  }
  for (int64_t c = 0; c < c_out; c++) {
    if (q0[c] == INT32_MIN) continue;
    memset(w + c * per, 0, (size_t)per);
    ws[c] = (float)((double)o_s / (double)d_s);
  }
  if (bdq >= 0) {
    int bv = cs_graph_node(g, bdq)->inputs[0];
    if (!(bq = dup_data(g, bv, (size_t)c_out, sizeof(int32_t)))) {
      st = CS_ERR_NOMEM;
      goto done;
    }
    if (bqp.count == c_out && !(bs = dup_data(g, cs_graph_node(g, bdq)->inputs[1], (size_t)c_out, sizeof(float)))) {
      st = CS_ERR_NOMEM;
      goto done;
    }
    for (int64_t c = 0; c < c_out; c++) {
      if (q0[c] == INT32_MIN) continue;
      bq[c] = q0[c] - o_zp;
      if (bs) bs[c] = (float)((double)d_s * (double)ws[c]);
    }
    st = set_const(g, bdq, 0, base, "mm_const_b", bq);
    if (st == CS_OK && bs) st = set_const(g, bdq, 1, base, "mm_const_b_scale", bs);
  } else if (b_in >= 0) {
    if (!(bf = dup_data(g, b_in, (size_t)c_out, sizeof(float)))) {
      st = CS_ERR_NOMEM;
      goto done;
    }
    for (int64_t c = 0; c < c_out; c++)
      if (q0[c] != INT32_MIN) bf[c] = (float)((double)(q0[c] - o_zp) * (double)o_s);
    st = set_const(g, conv_id, 2, base, "mm_const_b", bf);
  }
  if (st == CS_OK) st = set_const(g, wdq, 0, base, "mm_const_w", w);
  if (st == CS_OK) st = set_const(g, wdq, 1, base, "mm_const_w_scale", ws);
done:
  free(q0);
  free(w);
  free(ws);
  free(bs);
  free(bf);
  free(bq);
  if (have_bqp) cs_qparams_free(&bqp);
  cs_qparams_free(&xq);
  cs_qparams_free(&wq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status pass_mmalib_const_channels(cs_graph *g, const cs_target *t) { return cs_mm_each_conv(g, t, consider_conv); }
