/*
 * MMALIBOutS2D — output space-to-depth (issue 16, -mmalib=1): a QDQ conv
 * (groups = 1) with few output channels (8–48: C_out off the tile of the
 * kernel that runs it — 64 int8, 32 int16 or an int8 layer on the exact
 * path's int16 kernel, mmalib_common.h cs_mm_runs_as) computes f·g output
 * pixels per channel, so that the
 * tile fills with fewer wasted MACs than channel padding's zero filters:
 *
 *   Q(act(Conv_s,k(x, w[C])))                        → y  [1, C, H, W]
 *   Q(act(Conv_(f·s, g·s), k'(x, w'[C_pad])))        → y" [1, C_pad, Y, X]
 *     → k_copy(first C·f·g·Y·X elements: a view)     → y' [1, C·f·g, Y, X]
 *     → k_transpose [1,C,f,g,Y,X] → [1,C,Y,f,X,g]    → [1, C, Y·f, X·g]
 *     → k_slice (crop to H × W, when f ∤ H or g ∤ W) → y
 *
 * with Y = ⌈H/f⌉, X = ⌈W/g⌉, kernel k' = (k_h + (f−1)·s) × (k_w + (g−1)·s)
 * and C_pad = C·f·g rounded up to the tile. New channel (oc, dy, dx) =
 * oc·f·g + dy·g + dx has the filter of oc shifted by (dy·s, dx·s) inside
 * k' (zero taps elsewhere), oc's bias and oc's per-channel scale: at (Y,
 * X) its window starts at input row f·s·Y − pad_top, so its nonzero taps
 * read rows s·(f·Y + dy) − pad_top + t — exactly the window of original
 * output (oc, f·Y + dy, g·X + dx). Integer sums are order-free and the
 * zero taps add 0 (the weight zero point is 0: MMALIB's rule), so every
 * real output is bit-identical to the same layer offloaded as it is (with
 * channel padding): same integer accumulator, bias, multiplier and
 * activation. Rows and columns beyond H × W (Y·f > H) read the bottom or
 * right padding the rewrite adds (pad_bottom so that the floor geometry
 * gives Y rows) and are cropped. Channels past C·f·g are zero filters, cut
 * off by the view as in MMALIBPadChannels.
 *
 * Fused Relu/Clip apply per output as before; a PRelu (or anything else
 * after the Q) reads y, which is the tensor it read before.
 *
 * MMALIB strides H and W alike: f = g (2×2, 3×3, 4×4) is one call; f ≠ g
 * (the larger a multiple of the smaller) gives stride (f·s, g·s), which
 * runs as phases at the larger stride (match/mmalib_phases.h: the
 * MMALIBAsymStride form), interleaved before the transpose. A 1×2 split
 * (the bundled digits CNN's 8 → 16 3×3 on 8×8, 91 % of its MACs: 32
 * channels, kernel 3×4, ×4/3 its MACs, where padding is ×2 and 2×2 ×16/9)
 * is the one form of some layers within the padding budget; the phases
 * need the begin padding along their axis (pad_top ≥ s for 1×2).
 *
 * The cost rule (match/mmalib_cost.h, cycles from ir/c7x_cost.c): for every f × g in 1..4 the MMA
 * estimate of the rewritten layer (panels of K' = C_in·k'_h·k'_w by C_pad,
 * Y·X positions, every phase's; bytes: input, weights, y" per phase call
 * (cs_mm_call_bytes), the interleave's read and write, the transpose's,
 * the crop's) against the same estimate for plain channel padding
 * (f = g = 1, what MMALIBPadChannels would do) and the scalar core's for
 * the layer as it is. The cheapest f·g > 1 is taken when it is below
 * padding's estimate (or the padding budget refused padding: then no form
 * it refused, nor one adding as many MACs) and pays against the scalar
 * core; otherwise the
 * layer is left to MMALIBPadChannels (which then pads, or declines it with
 * its own estimate). A taken rewrite goes to the offload report's padding
 * section (what = "C_out s2d FxG": c_out = C, c_pad = C_pad, macs_added =
 * the rewritten layer's MACs less the layer's). 1×1 convs never pay (k' =
 * f × g: MACs ×f·g, what padding to C·f·g costs) and are left alone.
 *
 * A max pool takes the depth-to-space: when y reaches, through ops that
 * work element by element with at most per-channel parameters (DQ, Q per
 * tensor, Relu, LeakyRelu, Clip, PRelu with a per-channel slope), a
 * MaxPool f × f stride f without pads whose window tiles y exactly (f | H,
 * f | W), the f·g pixels of channel oc that one pool window reads are
 * already together in y": channels oc·fg + dy·g + dx at (Y, X). The view
 * [1, C·f·g, Y, X] → [1, C, f·g·Y, X] (row dy·g·Y + dx·Y + Y_i of channel
 * oc) keeps every per-channel parameter on axis 1, and the pool becomes
 * kernel (f·g, 1), dilation (Y, 1), stride 1: output row Y_i is the max
 * of rows p·Y + Y_i, p < f·g — the same f·g values as the original window
 * over rows f·Y_i + dy, columns g·X_i + dx. Max takes no order, so the
 * pool's outputs are bit-identical; no transpose, no bytes moved (MTCNN
 * P-Net's 3 → 10 3×3 stem, PReLU, 2×2 pool: 40 → 64 channels at 23 × 23,
 * where padding computes 32 channels at 46 × 46). The estimate of that f
 * then drops the transpose's bytes.
 *
 * The layer is rewritten only when the conv pass would then offload it
 * (cs_mm_conv_padded_rule on the node with its new strides, kernel and
 * pads, put back unless taken).
 */
#include <stdint.h>
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

#define S2D_MAX 4        /* f, g in 1..S2D_MAX */
#define S2D_CHAIN_MAX 8  /* values from y to a pool that takes the depth-to-space */

/* The report's `what` per f × g (cs_offload_pad.what: static strings),
 * and per f = g with a pool that takes the depth-to-space. */
static const char *const kWhat[S2D_MAX + 1][S2D_MAX + 1] = {
    {0},
    {0, "C_out", "C_out s2d 1x2", "C_out s2d 1x3", "C_out s2d 1x4"},
    {0, "C_out s2d 2x1", "C_out s2d 2x2", "C_out s2d 2x3", "C_out s2d 2x4"},
    {0, "C_out s2d 3x1", "C_out s2d 3x2", "C_out s2d 3x3", "C_out s2d 3x4"},
    {0, "C_out s2d 4x1", "C_out s2d 4x2", "C_out s2d 4x3", "C_out s2d 4x4"}};
static const char *const kWhatPool[S2D_MAX + 1] = {"C_out", "C_out", "C_out s2d 2x2 into pool",
                                                   "C_out s2d 3x3 into pool", "C_out s2d 4x4 into pool"};

/* A MaxPool that takes the depth-to-space (the header): y, the values
 * after it up to the pool's input, and the pool's window. */
typedef struct s2d_pool {
  int pool; /* the MaxPool node */
  int f;    /* its window and stride: f × f */
  int vals[S2D_CHAIN_MAX];
  int n;
} s2d_pool;

/* One candidate (f, g): the rewritten conv's geometry and estimate. */
typedef struct s2d_plan {
  int f, g;
  int phases;                 /* f ≠ g: the stride (f·s, g·s) as this many phases (mmalib_phases.h) */
  int64_t y, x;               /* output rows, columns of the rewritten conv */
  int64_t kh, kw;             /* its kernel */
  int64_t pad_bottom, pad_right;
  int64_t c_s2d, c_pad;       /* C·f·g, rounded up to the tile */
  int64_t macs;               /* its MACs (c_pad filters, every phase's positions) */
  int64_t act_bytes;          /* y" (and the phases' outputs) less y */
  double mma_cycles;
  int pooled;                 /* a pool takes the depth-to-space (no transpose) */
} s2d_plan;

static const char *what_of(const s2d_plan *p) { return p->pooled ? kWhatPool[p->f] : kWhat[p->f][p->g]; }

/* The extra bottom (right) pad that makes the floor geometry give n
 * outputs of a kernel k at stride st over `in` padded by `before`; -1 if
 * none does (the layer's last inputs are never read: a negative pad). */
static int64_t end_pad(int64_t in, int64_t before, int64_t k, int64_t st, int64_t n) {
  int64_t p = (n - 1) * st + k - in - before;
  if (p >= 0) return p;
  return (in + before - k) / st + 1 == n ? 0 : -1;
}

/* Plan (f, g) for conv geometry w over x [1, C_in, H_in, W_in] into C × H
 * × W; 0 if the geometry does not allow it. */
static int plan(const cs_target *t, const cs_window2d *w, const cs_value *x, int64_t c, int64_t h, int64_t wd,
                int f, int gg, const cs_mm_dtype *d, int64_t weight_bytes_per_tap, int graph_out, int pooled,
                s2d_plan *p) {
  memset(p, 0, sizeof *p);
  int lo = f < gg ? f : gg, hi = f < gg ? gg : f;
  if (hi % lo) return 0; /* phases need the larger stride a multiple of the smaller */
  p->pooled = pooled;
  p->phases = hi / lo;
  int s = w->stride_h;
  double e = (double)cs_dtype_size(d->dt);
  p->f = f;
  p->g = gg;
  p->y = (h + f - 1) / f;
  p->x = (wd + gg - 1) / gg;
  p->kh = w->k_h + (int64_t)(f - 1) * s;
  p->kw = w->k_w + (int64_t)(gg - 1) * s;
  p->pad_bottom = end_pad(x->shape[2], w->pad_top, p->kh, (int64_t)f * s, p->y);
  p->pad_right = end_pad(x->shape[3], w->pad_left, p->kw, (int64_t)gg * s, p->x);
  if (p->pad_bottom < 0 || p->pad_right < 0) return 0;
  p->c_s2d = c * f * gg;
  p->c_pad = cs_mm_round_up(p->c_s2d, d->mult);
  int64_t k = x->shape[1] * p->kh * p->kw, pos = p->y * p->x, r = p->phases;
  /* the phases compute ⌈len/r⌉ positions each along the smaller stride's axis */
  int64_t pos_mma = f < gg ? r * ((p->y + r - 1) / r) * p->x : gg < f ? p->y * r * ((p->x + r - 1) / r) : pos;
  p->macs = p->c_pad * pos_mma * k;
  p->act_bytes = (p->c_pad * pos - c * h * wd + (r > 1 ? p->c_pad * pos_mma : 0)) * cs_mm_pad_bytes(d);
  double out_b = e * (double)(p->c_pad * pos_mma);
  double bytes = (double)r * cs_mm_call_bytes(t, e * (double)cs_value_numel(x),
                                              (double)(p->c_pad * k) * (double)weight_bytes_per_tap, out_b / (double)r);
  if (r > 1) /* the interleave reads and writes them all, a cut when the phases overshoot */
    bytes += 2.0 * out_b + (pos_mma != pos ? out_b + e * (double)(p->c_pad * pos) : 0.0);
  int cropped = p->y * f != h || p->x * gg != wd;
  if (f * gg > 1 && !pooled) {
    bytes += 2.0 * e * (double)(p->c_s2d * pos);                                   /* transpose */
    if (cropped) bytes += e * (double)(p->c_s2d * pos) + e * (double)(c * h * wd); /* crop */
  } else if (graph_out && p->c_pad != c) {
    bytes += 2.0 * e * (double)(c * h * wd); /* padding's cut is a real copy at a graph output */
  }
  p->mma_cycles = cs_mm_cost_mma(k, p->c_pad, pos_mma, d->mult, bytes);
  return 1;
}

/* The shifted filters: w' [c_pad, C_in, kh', kw'], channel oc·fg + dy·g +
 * dx = filter oc at offset (dy·s, dx·s), zero elsewhere. */
static int s2d_weights(cs_graph *g, const char *base, int w, const s2d_plan *p, int s) {
  const cs_value *v = cs_graph_value(g, w);
  int64_t c = v->shape[0], ci = v->shape[1], kh = v->shape[2], kw = v->shape[3];
  size_t e = cs_dtype_size(v->dtype);
  int64_t shape[4] = {p->c_pad, ci, p->kh, p->kw};
  unsigned char *data = calloc((size_t)(p->c_pad * ci * p->kh * p->kw) + 1, e);
  if (!data) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  const unsigned char *from = v->data;
  for (int64_t oc = 0; oc < c; oc++)
    for (int dy = 0; dy < p->f; dy++)
      for (int dx = 0; dx < p->g; dx++) {
        int64_t ch = (oc * p->f + dy) * p->g + dx;
        for (int64_t i = 0; i < ci; i++)
          for (int64_t ty = 0; ty < kh; ty++) {
            int64_t dst = ((ch * ci + i) * p->kh + dy * s + ty) * p->kw + dx * s;
            int64_t src = ((oc * ci + i) * kh + ty) * kw;
            memcpy(data + (size_t)dst * e, from + (size_t)src * e, (size_t)kw * e);
          }
      }
  int id = cs_add_const_named(g, base, "mm_s2d_w", v->dtype, 4, shape, data);
  free(data);
  return id;
}


/* A value like y (cs_mm_like_value: it holds y's codes) named
 * <y>.<suffix> with `shape`; -1 when out of memory. */
static int like_y(cs_graph *g, int y, const char *base, const char *suffix, const int64_t shape[4]) {
  const cs_value *yv = cs_graph_value(g, y);
  char name[512];
  snprintf(name, sizeof name, "%s.%s", yv->name ? yv->name : base, suffix);
  return cs_mm_like_value(g, y, name, shape);
}

/* The tail's Q writes y" and the copy (view), transpose and crop write y. */
static cs_status depth_to_space(cs_graph *g, const cs_qdq_tail *tail, const s2d_plan *p, int64_t c,
                                const char *base) {
  int64_t sh[4] = {1, p->c_pad, p->y, p->x};
  if (tail->act >= 0) memcpy(cs_graph_value(g, cs_graph_node(g, tail->act)->outputs[0])->shape, sh, sizeof sh);
  int y = cs_graph_node(g, tail->q)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  int64_t h = yv->shape[2], w = yv->shape[3];
  size_t e = cs_dtype_size(yv->dtype);
  char name[512];
  snprintf(name, sizeof name, "%s.mm_s2d", yv->name ? yv->name : base);
  int cur = cs_reroute_output(g, tail->q, name, 4, sh);
  if (cur < 0) return CS_ERR_NOMEM;
  if (p->c_pad != p->c_s2d) { /* the real channels: a prefix, a view */
    int64_t s2[4] = {1, p->c_s2d, p->y, p->x};
    int v = like_y(g, y, base, "mm_s2d_real", s2);
    if (v < 0) return CS_ERR_NOMEM;
    int k = cs_add_kernel(g, CS_OP_K_COPY, base, 1, &cur, v);
    if (k < 0) return CS_ERR_NOMEM;
    cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, v));
    cur = v;
  }
  int cropped = p->y * p->f != h || p->x * p->g != w;
  int out = y;
  if (cropped) {
    int64_t s3[4] = {1, c, p->y * p->f, p->x * p->g};
    if ((out = like_y(g, y, base, "mm_s2d_full", s3)) < 0) return CS_ERR_NOMEM;
  }
  tidsp_transpose_params tp;
  memset(&tp, 0, sizeof tp);
  tp.rank = 6;
  tp.elem_size = (int32_t)e;
  int32_t in6[6] = {1, (int32_t)c, p->f, p->g, (int32_t)p->y, (int32_t)p->x}, perm[6] = {0, 1, 4, 2, 5, 3};
  memcpy(tp.in_shape, in6, sizeof in6);
  memcpy(tp.perm, perm, sizeof perm);
  int k = cs_add_kernel(g, CS_OP_K_TRANSPOSE, base, 1, &cur, out);
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.transpose = tp;
  return !cropped || cs_add_slice(g, base, out, y, NULL, NULL) >= 0 ? CS_OK : CS_ERR_NOMEM;
}

/* The pool takes the depth-to-space: y" viewed as [1, C, f·g·Y, X] is
 * y, every value up to the pool's input takes that shape, and the pool
 * reads the f·g rows Y apart (the header). */
static cs_status depth_to_pool(cs_graph *g, const cs_qdq_tail *tail, const s2d_plan *p, int64_t c,
                               const char *base, const s2d_pool *sp) {
  int64_t sh[4] = {1, p->c_pad, p->y, p->x}, flat[4] = {1, c, (int64_t)p->f * p->g * p->y, p->x};
  if (tail->act >= 0) memcpy(cs_graph_value(g, cs_graph_node(g, tail->act)->outputs[0])->shape, sh, sizeof sh);
  int y = cs_graph_node(g, tail->q)->outputs[0];
  char name[512];
  snprintf(name, sizeof name, "%s.mm_s2d", cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : base);
  int cur = cs_reroute_output(g, tail->q, name, 4, sh);
  if (cur < 0) return CS_ERR_NOMEM;
  for (int i = 0; i < sp->n; i++) memcpy(cs_graph_value(g, sp->vals[i])->shape, flat, sizeof flat);
  int k = cs_add_kernel(g, CS_OP_K_COPY, base, 1, &cur, y); /* the real channels: a prefix, a view */
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, y));
  cs_node *pool = cs_graph_node(g, sp->pool);
  int64_t ks[2] = {(int64_t)p->f * p->g, 1}, one[2] = {1, 1}, dil[2] = {p->y, 1}, pads[4] = {0, 0, 0, 0};
  if (cs_node_set_attr_ints(pool, "kernel_shape", 2, ks) != CS_OK ||
      cs_node_set_attr_ints(pool, "strides", 2, one) != CS_OK ||
      cs_node_set_attr_ints(pool, "dilations", 2, dil) != CS_OK ||
      cs_node_set_attr_ints(pool, "pads", 4, pads) != CS_OK || cs_node_set_attr_int(pool, "ceil_mode", 0) != CS_OK)
    return CS_ERR_NOMEM;
  return CS_OK;
}

/* Node n computes each output element from the input element at the same
 * index, with parameters that vary along axis 1 at most (per tensor, or
 * per channel of an NCHW tensor of C channels): it computes the same on
 * [1, C, f·g·Y, X] as on [1, C, Y·f, X·g]. */
static int per_channel_eltwise(cs_graph *g, const cs_node *n, int64_t c) {
  switch (n->op) {
    case CS_OP_RELU:
    case CS_OP_LEAKY_RELU:
      return n->n_inputs == 1;
    case CS_OP_CLIP:
    case CS_OP_QUANTIZE_LINEAR:
    case CS_OP_DEQUANTIZE_LINEAR: /* bounds, scale and zero point: scalars */
      for (int i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && cs_value_numel(cs_graph_value(g, n->inputs[i])) != 1) return 0;
      return 1;
    case CS_OP_PRELU: { /* the slope broadcasts along axis 1 only */
      int64_t channels;
      return n->n_inputs == 2 && n->inputs[1] >= 0 &&
             cs_match_per_channel(cs_graph_value(g, n->inputs[1]), 4, c, &channels);
    }
    default:
      return 0;
  }
}

/* A MaxPool f × f, stride f, no pads, 2 <= f <= S2D_MAX, whose window tiles
 * y [1, C, H, W] exactly, reached from y through per_channel_eltwise
 * nodes, each value read by the next alone: 1 and sp filled, else 0. */
static int find_pool(cs_graph *g, int y, int64_t c, int64_t h, int64_t w, s2d_pool *sp) {
  memset(sp, 0, sizeof *sp);
  for (int v = y;;) {
    const cs_value *vv = cs_graph_value(g, v);
    if (sp->n == S2D_CHAIN_MAX || vv->rank != 4 || vv->shape[0] != 1 || vv->shape[1] != c || vv->shape[2] != h ||
        vv->shape[3] != w)
      return 0;
    sp->vals[sp->n++] = v;
    int id = cs_match_single_consumer(g, v);
    if (id < 0) return 0;
    const cs_node *n = cs_graph_node(g, id);
    if (n->n_inputs < 1 || n->inputs[0] != v || n->n_outputs < 1) return 0;
    for (int i = 1; i < n->n_inputs; i++)
      if (n->inputs[i] == v) return 0;
    if (n->op != CS_OP_MAX_POOL) {
      if (n->n_outputs != 1 || !per_channel_eltwise(g, n, c)) return 0;
      v = n->outputs[0];
      continue;
    }
    cs_window2d win;
    if (cs_window2d_from_node(g, n, &win) != CS_OK) {
      cs_error_clear();
      return 0;
    }
    const char *ap = cs_node_attr_string(n, "auto_pad", "NOTSET");
    const cs_value *out = cs_graph_value(g, n->outputs[0]);
    int f = win.k_h;
    if ((n->n_outputs > 1 && n->outputs[1] >= 0) || (ap && strcmp(ap, "NOTSET") != 0) ||
        cs_node_attr_int(n, "storage_order", 0) != 0 || f < 2 || f > S2D_MAX || win.k_w != f ||
        win.stride_h != f || win.stride_w != f || win.dil_h != 1 || win.dil_w != 1 || win.pad_top || win.pad_left ||
        win.pad_bottom || win.pad_right || h % f || w % f || out->rank != 4 || out->shape[2] != h / f ||
        out->shape[3] != w / f)
      return 0;
    sp->pool = id;
    sp->f = f;
    return 1;
  }
}

/* Set the conv's geometry (strides, kernel, pads, output H × W). */
static void set_geometry(cs_graph *g, int conv_id, const int64_t st[2], const int64_t ks[2], const int64_t pads[4],
                         int64_t h, int64_t w) {
  cs_node *n = cs_graph_node(g, conv_id);
  cs_node_set_attr_ints(n, "strides", 2, st);
  cs_node_set_attr_ints(n, "kernel_shape", 2, ks);
  cs_node_set_attr_ints(n, "pads", 4, pads);
  cs_value *y = cs_graph_value(g, n->outputs[0]);
  y->shape[2] = h;
  y->shape[3] = w;
}

static cs_status consider_conv(cs_graph *g, const cs_target *t, int conv_id) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  const cs_mm_dtype *d = cs_mm_plain_conv(g, t, conv);
  if (!d) return CS_OK;
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *yc = cs_graph_value(g, conv->outputs[0]);
  int64_t c = yc->shape[1], h = yc->shape[2], wd = yc->shape[3], c_in = x->shape[1];
  if (c <= 0 || c % d->mult == 0 || h <= 0 || wd <= 0) return CS_OK;
  cs_window2d win;
  if (cs_window2d_from_node(g, conv, &win) != CS_OK) {
    cs_error_clear();
    return CS_OK;
  }
  const char *ap = cs_node_attr_string(conv, "auto_pad", "NOTSET");
  if (ap && strcmp(ap, "NOTSET") != 0) return CS_OK; /* pads derived from strides: explicit only */
  if (win.stride_h != win.stride_w || win.dil_h != 1 || win.dil_w != 1 || win.stride_h < 1) return CS_OK;
  if (win.k_h == 1 && win.k_w == 1) return CS_OK; /* k' = f × g: never cheaper than padding */
  /* The pieces the rewrite changes: the weight (a constant read only
   * here, zero point 0), the bias, the tail. */
  int wdq = -1;
  if (!cs_mm_weight_dq_zp0(g, conv->inputs[1], d->dt, &wdq)) return CS_OK;
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail_as(g, conv->outputs[0], 1, d->dt, &tail)) return CS_OK;
  cs_qparams_free(&tail.out);
  int wc = cs_graph_node(g, wdq)->inputs[0];
  const cs_value *wv = cs_graph_value(g, wc);
  if (!cs_match_is_const(g, wc) || wv->rank != 4 || wv->shape[0] != c || wv->shape[2] != win.k_h ||
      wv->shape[3] != win.k_w || cs_match_single_consumer(g, cs_graph_node(g, wdq)->outputs[0]) != conv_id)
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
  int y = cs_graph_node(g, tail.q)->outputs[0];
  int graph_out = cs_graph_is_model_output(g, y);

  /* The estimates: the layer on the core, padded, and every (f, g). */
  double e = (double)cs_dtype_size(d->dt);
  int64_t k = x->shape[1] * win.k_h * win.k_w, macs = c * h * wd * k;
  double real_bytes = e * (double)(cs_value_numel(x) + c * k + c * h * wd);
  double scalar = cs_mm_cost_scalar(macs, real_bytes);
  s2d_plan pad_plan, cand[S2D_MAX * S2D_MAX];
  s2d_pool pool;
  int pooled = find_pool(g, y, c, h, wd, &pool), n = 0;
  if (!plan(t, &win, x, c, h, wd, 1, 1, d, (int64_t)e, graph_out, 0, &pad_plan)) return CS_OK;
  for (int f = 1; f <= S2D_MAX; f++)
    for (int gg = 1; gg <= S2D_MAX; gg++)
      if (f * gg > 1 && plan(t, &win, x, c, h, wd, f, gg, d, (int64_t)e, graph_out, f == gg && pooled && pool.f == f,
                             &cand[n]))
        n++;
  /* The padding budget (cs_mm_refused): a refused form is not a choice,
   * nor one that adds as many MACs as a refused one (the next round would
   * only trade one for the other). */
  const char *layer = cs_graph_node(g, conv_id)->name;
  int64_t refused_macs = INT64_MAX;
  for (int i = 0; i < n; i++)
    if (cs_mm_refused(t, layer, what_of(&cand[i])) && cand[i].macs < refused_macs) refused_macs = cand[i].macs;
  int pad_open = !cs_mm_refused(t, layer, NULL), m = 0;
  for (int i = 0; i < n; i++)
    if (cand[i].macs < refused_macs && (!pad_open || cand[i].mma_cycles < pad_plan.mma_cycles) &&
        cs_mm_cost_pays(cand[i].mma_cycles, scalar))
      cand[m++] = cand[i];
  n = m;
  /* Cheapest first; the first the conv pass would take is taken. */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && cand[j].mma_cycles < cand[j - 1].mma_cycles; j--) {
      s2d_plan tmp = cand[j];
      cand[j] = cand[j - 1];
      cand[j - 1] = tmp;
    }
  int64_t old_st[2] = {win.stride_h, win.stride_w}, old_ks[2] = {win.k_h, win.k_w};
  int64_t old_pads[4] = {win.pad_top, win.pad_left, win.pad_bottom, win.pad_right};
  const s2d_plan *take = NULL;
  cs_mm_phases phases; /* f ≠ g: the rewritten conv's phases */
  for (int i = 0; i < n && !take; i++) {
    const s2d_plan *p = &cand[i];
    int64_t st[2] = {(int64_t)p->f * win.stride_h, (int64_t)p->g * win.stride_w}, ks[2] = {p->kh, p->kw};
    int64_t pads[4] = {win.pad_top, win.pad_left, p->pad_bottom, p->pad_right};
    set_geometry(g, conv_id, st, ks, pads, p->y, p->x);
    char why[200];
    const char *rule = NULL;
    int offloaded = 0;
    cs_status st2 = CS_OK;
    if (p->phases == 1) {
      st2 = cs_mm_conv_padded_rule(g, t, conv_id, d, p->c_pad, &rule, why, sizeof why);
      offloaded = !rule;
    } else if (cs_mm_phases_of(g, conv_id, &phases) && phases.r == p->phases) {
      st2 = cs_mm_phases_offloaded(g, t, conv_id, d, p->c_pad, &phases, &offloaded);
    }
    if (st2 != CS_OK) {
      set_geometry(g, conv_id, old_st, old_ks, old_pads, h, wd);
      return st2;
    }
    if (offloaded) take = p;
  }
  if (!take) {
    set_geometry(g, conv_id, old_st, old_ks, old_pads, h, wd);
    return CS_OK;
  }

  /* Rewrite: weights, their per-channel parameters, the bias, the output. */
  char base[256];
  snprintf(base, sizeof base, "%s", cs_graph_node(g, conv_id)->name ? cs_graph_node(g, conv_id)->name : "conv");
  int nw = s2d_weights(g, base, wc, take, win.stride_h);
  if (nw < 0) return CS_ERR_NOMEM;
  cs_node_set_input(g, wdq, 0, nw);
  int64_t fg = (int64_t)take->f * take->g;
  cs_status st = cs_mm_replicate_dq(g, wdq, base, "mm_s2d", "w", c, fg, take->c_pad, 0);
  cs_graph_value(g, cs_graph_node(g, wdq)->outputs[0])->shape[0] = take->c_pad;
  cs_graph_value(g, cs_graph_node(g, wdq)->outputs[0])->shape[2] = take->kh;
  cs_graph_value(g, cs_graph_node(g, wdq)->outputs[0])->shape[3] = take->kw;
  if (st == CS_OK && b >= 0) {
    if (bdq >= 0) {
      st = cs_mm_replicate_dq(g, bdq, base, "mm_s2d", "b", c, fg, take->c_pad, 1);
      cs_graph_value(g, b)->shape[0] = take->c_pad;
    } else {
      int nb = cs_mm_replicated(g, base, "mm_s2d_b", b, c, fg, take->c_pad, 0);
      if (nb < 0) return CS_ERR_NOMEM;
      cs_node_set_input(g, conv_id, 2, nb);
    }
  }
  if (st != CS_OK) return st;
  cs_graph_value(g, cs_graph_node(g, conv_id)->outputs[0])->shape[1] = take->c_pad;
  st = take->pooled ? depth_to_pool(g, &tail, take, c, base, &pool) : depth_to_space(g, &tail, take, c, base);
  if (st == CS_OK && take->phases > 1) st = cs_mm_build_phases(g, conv_id, &tail, &phases, base);
  if (st != CS_OK) return st;

  cs_offload_pad rep;
  cs_mm_pad_decision_init(&rep, cs_graph_node(g, conv_id)->name, what_of(take), c,
                          take->c_pad, macs,
                          take->macs - macs);
  rep.padded = 1;
  rep.weight_bytes_added = (take->c_pad * c_in * take->kh * take->kw - c * k) * cs_mm_pad_bytes(d);
  rep.act_bytes_added = take->act_bytes;
  rep.mma_cycles = take->mma_cycles;
  rep.scalar_cycles = scalar;
  cs_mmalib_report_pad(g, &rep);
  return CS_OK;
}

cs_status pass_mmalib_out_s2d(cs_graph *g, const cs_target *t) { return cs_mm_each_conv(g, t, consider_conv); }
