/*
 * mmalib_exact.c — the exact-requant path of an offloaded int8 conv or FC
 * (-mmalib-exact; the arithmetic: quant/mmalib_exact.h).
 *
 * The int8 conv and FC passes (mmalib_conv.c; mmalib_fc.c: an FC of M
 * rows is read by the core kernel as M images of a 1x1 conv, padded K and N
 * included) decide a layer, fold it as usual, then, for a layer the option
 * selects, build instead of the int8 call:
 *
 *   x:i8 ─k_widen_i16─► x16 = x − x_zp:i16 ─mmalib_conv2d_i16 (or
 *        depthwise_i16, 3×3)─► z:i16
 *        w:i8 const → w16:i16 const; bias int64 = acc bias + D (acc bias:
 *        ORT's int32 bias, the accumulator of x − x_zp's); scale/shift:
 *        z's grid
 *   z, x, w ─k_mmalib_exact_requant─► y:i8
 *   (z bounds each accumulator to an interval of q values; where ORT's
 *   requantization of both ends agrees that is the output, else the core
 *   sums that one accumulator again: ORT's bytes, bit for bit)
 *
 * A 5×5/7×7 depthwise conv (MMALIB's int16 depthwise is 3×3 only,
 * MMALIB-882) is 4 or 9 such 3×3 calls, one per 3×3 tile of its window,
 * each on the window of x16 its taps read (the call's pads: zero rows, or
 * negative, a crop of x16; quant/mmalib_exact.h cs_mm_exact_dw_tiles), tile 0 with the
 * bias and D, the others with bias 0; a k_concat stacks their z and the
 * core kernel sums the tiles' intervals (width: the sum of their steps,
 * so about 4t or 9t of the outputs are summed again).
 *
 * The MACs stay on the MMA (MMALIB's int16 kernel; the data are int8
 * values less the zero point, |x − x_zp| ≤ 255, so its products and int64
 * sums are exact); the requantization runs on the core with ORT's
 * multiplier.
 *
 * The input. The widening subtracts the zero point, so MMALIB's own zero
 * padding is the zero point's border ORT pads with: a padded conv needs no
 * k_pad copy of its int8 input (the int8 kernel does: its data cannot hold
 * x − x_zp), and the core kernel's recomputed sums read x16 too. Where an
 * exact layer's output (or an activation table's) is read only by the
 * next one's widening, it writes that x16 itself (FuseWidenIntoProducer).
 *
 * Which layers. -mmalib-exact=worst: the int8 kernel's error is
 * g·(y − o_zp) before rounding (g the scale's relative error, per channel),
 * so its worst drift is |g|max·max|y − o_zp| LSB, max|y − o_zp| =
 * max(127 − o_zp, o_zp + 128). A layer an int16 kernel runs (a plain conv,
 * a 3×3 depthwise; one image) takes the exact path when that drift reaches
 * CS_MM_EXACT_WORST_DRIFT = 1/2 LSB — the scale error alone can then move
 * an output by a whole rounding step; a data-free rule, from the folded
 * scales and o_zp (it picks the ReLU-clamped layers, o_zp = −128, with
 * |g| ≥ 1/510; |g| ≤ 2^−8 keeps a layer with o_zp = 0 out). The rest stay
 * on the int8 kernel. -mmalib-exact=all: every int8 conv int16 kernels
 * run (plain, depthwise 3×3/5×5/7×7), a grouped conv whose C_out per
 * group divides the tile or is a multiple of it (as block-diagonal int16
 * convs, cs_mm_exact_group_blocks), and every FC; the rest (other grouped
 * convs, a batch) stay on the int8 kernel. -mmalib-exact=strict: all, and the rest are
 * left to the core's exact int8 conv instead (declined, the offload report
 * says why): every conv gives ORT's bytes, at the cost of those layers'
 * MMA share.
 *
 * The cost: the int16 MMA runs at a quarter of the int8 rate (32×32
 * against 64×64 panels: cs_mm_cost_mma's tile), plus two core passes
 * (widen the input, less its zero point; requantize z, with the ambiguous outputs' MACs again)
 * and int16 copies of the input and the output in the arena. The offload report gives each
 * exact layer's bound (max_error_lsb) and the cycle estimates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "mmalib_common.h"
#include "pattern.h"

int cs_mm_exact_wanted(const cs_target *t, double worst_g, double drift_lsb) {
  (void)worst_g;
  if (!t->mmalib) return 0;
  switch (t->mmalib_exact) {
    case CS_MM_EXACT_ALL:
    case CS_MM_EXACT_STRICT: return 1;
    case CS_MM_EXACT_WORST: return drift_lsb >= CS_MM_EXACT_WORST_DRIFT;
    default: return 0;
  }
}

void cs_mm_exact_plan_free(cs_mm_exact_plan *p) {
  free(p->bias);
  free(p->scale);
  free(p->shift);
  free(p->offset);
  free(p->mult);
  memset(p, 0, sizeof *p);
}

const char *cs_mm_exact_plan_init(cs_mm_exact_plan *p, int c_out, float d_s, int32_t d_zp, const cs_qparams *wq,
                                  const int64_t *wsum, float o_s, int32_t o_zp, const int64_t *acc_bias) {
  memset(p, 0, sizeof *p);
  p->c_out = c_out;
  p->x_zp = d_zp;
  p->x16 = -1;
  p->bias = malloc(sizeof *p->bias * (size_t)c_out);
  p->scale = malloc((size_t)c_out);
  p->shift = malloc((size_t)c_out);
  p->offset = malloc(sizeof *p->offset * (size_t)c_out);
  p->mult = malloc(sizeof *p->mult * (size_t)c_out);
  if (!p->bias || !p->scale || !p->shift || !p->offset || !p->mult) return cs_mm_nomem;
  for (int c = 0; c < c_out; c++) {
    double dw = (double)d_s * (double)wq->scale[wq->count > 1 ? c : 0];
    cs_mm_exact_ch ch;
    const char *rule = cs_mm_exact_channel(dw / (double)o_s, o_zp, &ch);
    if (rule) return rule;
    /* the accumulator of x − d_zp: acc_bias + d_zp·Σw (integers) */
    int64_t acc = acc_bias[c] + (int64_t)d_zp * wsum[c];
    double b = (double)acc + (double)ch.offset;
    if (!(fabs(b) < 9007199254740992.0)) return "exact path: folded bias beyond 2^53";
    p->bias[c] = acc + ch.offset;
    p->scale[c] = ch.scale;
    p->shift[c] = ch.shift;
    p->offset[c] = ch.offset;
    /* ORT's multiplier, as quant/requant.c computes it */
    p->mult[c] = (d_s * wq->scale[wq->count > 1 ? c : 0]) / o_s;
    /* q = 1: z is the accumulator itself, nothing rounded */
    double err = ch.scale == 1 && ch.shift == 0 ? 0.0 : ch.step / 2.0;
    if (err > p->max_err) p->max_err = err;
  }
  return NULL;
}

int cs_mm_exact_plan_pad(cs_mm_exact_plan *p, int channels) {
  if (channels <= p->c_out) return 0;
  int64_t *bias = realloc(p->bias, sizeof *bias * (size_t)channels);
  if (bias) p->bias = bias;
  uint8_t *scale = bias ? realloc(p->scale, (size_t)channels) : NULL;
  if (scale) p->scale = scale;
  uint8_t *shift = scale ? realloc(p->shift, (size_t)channels) : NULL;
  if (shift) p->shift = shift;
  int64_t *offset = shift ? realloc(p->offset, sizeof *offset * (size_t)channels) : NULL;
  if (offset) p->offset = offset;
  float *mult = offset ? realloc(p->mult, sizeof *mult * (size_t)channels) : NULL;
  if (!mult) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  p->mult = mult;
  for (int c = p->c_out; c < channels; c++) { /* channel 0's grid, accumulator bias 0 */
    p->scale[c] = p->scale[0];
    p->shift[c] = p->shift[0];
    p->offset[c] = p->offset[0];
    p->bias[c] = p->offset[0];
    p->mult[c] = p->mult[0];
  }
  p->c_out = channels;
  return 0;
}

/* A new value of v's shape in dtype dt named "<v>.<suffix>"; -1 when out
 * of memory. */
static int like(cs_graph *g, int v, const char *suffix, cs_dtype dt) {
  const cs_value *src = cs_graph_value(g, v);
  char name[512];
  snprintf(name, sizeof name, "%s.%s", src->name ? src->name : "t", suffix);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, src->shape, sizeof shape);
  return cs_graph_add_value(g, name, dt, src->rank, shape);
}

/* act_in − x_zp as int16 by a k_widen_i16 (one matrix of act_in's rows
 * of its last dimension, no padding): its value, -1 when out of memory.
 * Where another exact layer already widened act_in with x_zp, its x16 is
 * the value: the layers share it (one pass over act_in, not one per
 * reader: GoogLeNet's branch convs read one concat). */
static int widen(cs_graph *g, const char *base, int act_in, int32_t x_zp) {
  enum { MAX_READERS = 32 };
  int readers[MAX_READERS];
  int n_readers = cs_graph_consumers(g, act_in, readers, MAX_READERS);
  for (int i = 0; i < n_readers && i < MAX_READERS; i++) {
    const cs_node *r = cs_graph_node(g, readers[i]);
    if (cs_match_widen_is_dense(g, r) && r->n_outputs == 1 && r->k.widen.zp == x_zp) return r->outputs[0];
  }
  int x16 = like(g, act_in, "mm_i16", CS_DTYPE_I16);
  int k = x16 < 0 ? -1 : cs_add_kernel(g, CS_OP_K_WIDEN_I16, base, 1, &act_in, x16);
  if (k < 0) return -1;
  const cs_value *xv = cs_graph_value(g, act_in);
  int64_t cols = xv->rank ? xv->shape[xv->rank - 1] : 1;
  tidsp_widen_i16_params wp;
  memset(&wp, 0, sizeof wp);
  wp.batch = 1;
  wp.rows = wp.out_rows = (int32_t)(cs_value_numel(xv) / cols);
  wp.cols = wp.out_cols = (int32_t)cols;
  wp.zp = x_zp;
  cs_graph_node(g, k)->k.widen = wp;
  return x16;
}

/* The box [start, start + len) of x16 ([1, C, H, W] int16) by a new
 * k_slice, as "<x16>.<what><j>" (a view where the planner can make it
 * one): its value, -1 when out of memory. */
static int slice16(cs_graph *g, const char *base, int x16, const char *what, int j, const int64_t start[4],
                   const int64_t len[4]) {
  const cs_value *xv = cs_graph_value(g, x16);
  char name[512];
  snprintf(name, sizeof name, "%s.%s%d", xv->name ? xv->name : "x", what, j);
  int xin = cs_graph_add_value(g, name, CS_DTYPE_I16, 4, len);
  return xin < 0 || cs_add_slice(g, base, x16, xin, start, NULL) < 0 ? -1 : xin;
}

int cs_mm_exact_inputs(cs_graph *g, const char *base, int act_in, int w_in, cs_mm_exact_plan *p, int *ins) {
  int x16 = p->x16 = widen(g, base, act_in, p->x_zp);
  if (x16 < 0) return -1;
  /* the weights, widened */
  const cs_value *wv = cs_graph_value(g, w_in);
  int64_t nw = cs_value_numel(wv), wshape[CS_MAX_RANK];
  int wrank = wv->rank;
  memcpy(wshape, wv->shape, sizeof wshape);
  int16_t *w16 = malloc(sizeof *w16 * (size_t)nw);
  if (!w16) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  for (int64_t i = 0; i < nw; i++) w16[i] = ((const int8_t *)wv->data)[i];
  int w16v = cs_add_const_named(g, base, "mm_w16", CS_DTYPE_I16, wrank, wshape, w16);
  free(w16);
  int rq[3];
  if (w16v < 0 || cs_mm_add_requant_consts_i16(g, base, p->c_out, p->bias, p->scale, p->shift, rq) != CS_OK)
    return -1;
  int all[5] = {x16, w16v, rq[0], rq[1], rq[2]};
  memcpy(ins, all, sizeof all);
  return 0;
}

/* k_mmalib_exact_requant(z, p->x16, w_in, grid, mult) → y, z holding
 * `parts` partial results (kernels.h). 0, or -1 when out of memory. */
static int add_core(cs_graph *g, const char *base, const cs_mm_exact_plan *p, int parts, int z, int w_in,
                    const tidsp_conv2d_params *cp, int32_t o_zp, int y) {
  int n = p->c_out;
  int64_t *grid = malloc(sizeof *grid * (4 * (size_t)n + 1));
  if (!grid) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  for (int c = 0; c < n; c++) {
    grid[c] = p->bias[c];
    grid[n + c] = p->offset[c];
    grid[2 * n + c] = p->scale[c];
    grid[3 * n + c] = p->shift[c];
  }
  grid[4 * n] = parts;
  int64_t gshape[1] = {4 * (int64_t)n + 1}, mshape[1] = {n};
  int gv = cs_add_const_named(g, base, "mm_exact_grid", CS_DTYPE_I64, 1, gshape, grid);
  free(grid);
  int mv = gv < 0 ? -1 : cs_add_const_named(g, base, "mm_exact_rq", CS_DTYPE_F32, 1, mshape, p->mult);
  int ins[5] = {z, p->x16, w_in, gv, mv};
  int k = mv < 0 ? -1 : cs_add_kernel(g, CS_OP_K_MMALIB_EXACT_REQUANT, base, 5, ins, y);
  if (k < 0) return -1;
  tidsp_conv2d_params q = *cp;
  q.x_zp = q.w_zp = 0; /* x16 is centred: the recomputed sums are Σx16·w */
  q.rq.kind = TIDSP_REQUANT_FLOAT;
  q.rq.per_channel = 1;
  q.rq.out_zp = o_zp;
  q.rq.out_min = -128;
  q.rq.out_max = 127;
  q.w_row_stride = q.mlas_nchw = q.w_layout = 0;
  cs_graph_node(g, k)->k.conv = q;
  return 0;
}

/* The k_copy that alone reads y when y is a conv's output padded with zero
 * filters (MMALIBPadChannels: the view of its first C channels), for one
 * image of a plain conv; -1 otherwise. Then the core pass requantizes the
 * C real channels alone, straight into the view's tensor: z's and y's
 * first C channels are prefixes of them, and so are the padded weights'
 * first C rows (the recomputed outputs read those), so the zero filters'
 * outputs are neither read nor written on the core. */
static int real_channel_view(cs_graph *g, int y, const tidsp_conv2d_params *cp) {
  if (cp->n != 1 || cp->groups != 1) return -1;
  int k = cs_match_single_consumer(g, y);
  if (k < 0 || cs_graph_node(g, k)->op != CS_OP_K_COPY) return -1;
  const cs_value *yv = cs_graph_value(g, y), *v = cs_graph_value(g, cs_graph_node(g, k)->outputs[0]);
  if (yv->rank != 4 || v->rank != 4 || v->dtype != yv->dtype || v->shape[0] != 1 || v->shape[1] < 1 ||
      v->shape[1] >= yv->shape[1] || v->shape[2] != yv->shape[2] || v->shape[3] != yv->shape[3])
    return -1;
  return k;
}

int cs_mm_exact_requant(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p, int w_in,
                        const tidsp_conv2d_params *cp, int32_t o_zp) {
  int y = cs_graph_node(g, id)->outputs[0];
  int view = real_channel_view(g, y, cp);
  char zname[512];
  snprintf(zname, sizeof zname, "%s.mm_z16", cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y");
  int z = cs_reroute_output_as(g, id, 0, zname, CS_DTYPE_I16);
  if (z < 0) return -1;
  if (view < 0) return add_core(g, base, p, 1, z, w_in, cp, o_zp, y);
  int y_real = cs_graph_node(g, view)->outputs[0];
  cs_mm_exact_plan real = *p;
  tidsp_conv2d_params cr = *cp;
  real.c_out = cr.c_out = (int32_t)cs_graph_value(g, y_real)->shape[1];
  cs_graph_remove_node(g, view);
  return add_core(g, base, &real, 1, z, w_in, &cr, o_zp, y_real);
}

/* ---- a 5×5/7×7 depthwise conv as 3×3 tiles (quant/mmalib_exact.h) ---- */

void cs_mm_exact_tile_args(const cs_mm_exact_tile *t, int64_t channels, int64_t h, int64_t w, int stride,
                           int64_t *args) {
  int64_t a[12] = {channels, h, w, 3, 3, stride, stride, t->pad_t, t->pad_b, t->pad_l, t->pad_r, channels};
  memcpy(args, a, sizeof a);
}

int cs_mm_exact_dw_inputs(cs_graph *g, const char *base, int act_in, int w_in, cs_mm_exact_plan *p,
                          const cs_mm_exact_tile *tiles, int n_tiles, int (*ins)[5]) {
  int x16 = p->x16 = widen(g, base, act_in, p->x_zp);
  if (x16 < 0) return -1;
  const cs_value *xv = cs_graph_value(g, x16);
  int64_t ch = xv->shape[1];
  const cs_value *wv = cs_graph_value(g, w_in);
  int64_t kk = wv->shape[2];
  int16_t *w16 = malloc(sizeof *w16 * (size_t)ch * 9);
  int64_t *zero = calloc((size_t)p->c_out, sizeof *zero);
  int rq0[3], rqj[3] = {-1, -1, -1};
  int ok = w16 && zero && cs_mm_add_requant_consts_i16(g, base, p->c_out, p->bias, p->scale, p->shift, rq0) == CS_OK;
  if (ok && n_tiles > 1) /* the other tiles: bias 0, z's grid */
    ok = cs_mm_add_requant_consts_i16(g, base, p->c_out, zero, p->scale, p->shift, rqj) == CS_OK;
  for (int j = 0; ok && j < n_tiles; j++) {
    const cs_mm_exact_tile *t = &tiles[j];
    const int8_t *w8 = wv->data; /* refreshed: the graph grows */
    for (int64_t c = 0; c < ch; c++)
      for (int i = 0; i < 3; i++)
        for (int l = 0; l < 3; l++) {
          int kh = t->a + i, kw = t->b + l; /* its own taps only (a_end, b_end ≤ K) */
          w16[c * 9 + i * 3 + l] = kh < t->a_end && kw < t->b_end ? w8[(c * kk + kh) * kk + kw] : 0;
        }
    char suffix[32];
    snprintf(suffix, sizeof suffix, "mm_w16_tile%d", j);
    int64_t wshape[4] = {ch, 1, 3, 3};
    int wt = cs_add_const_named(g, base, suffix, CS_DTYPE_I16, 4, wshape, w16);
    const int *rq = j ? rqj : rq0;
    int all[5] = {x16, wt, rq[0], rq[1], rq[2]}; /* the whole x16: the call's pads crop its window */
    memcpy(ins[j], all, sizeof all);
    ok = wt >= 0;
    xv = cs_graph_value(g, x16);
    wv = cs_graph_value(g, w_in);
  }
  if (!w16 || !zero) cs_error(CS_ERR_NOMEM, "out of memory");
  free(w16);
  free(zero);
  return ok ? 0 : -1;
}

/* The n int16 calls' z (zs), one after another in memory: a k_concat into
 * y's "<name>.mm_z16" of `shape` (the depthwise tiles' [P, C, H, W], the
 * grouped blocks' [1, n·bw, H, W]), whose core kernel reads each call's z
 * whole. The new value, or -1. */
static int concat_z(cs_graph *g, const char *base, int y, const int *zs, int n, const int64_t *shape) {
  const char *yname = cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y";
  char name[512];
  snprintf(name, sizeof name, "%s.mm_z16", yname);
  int z = cs_graph_add_value(g, name, CS_DTYPE_I16, 4, shape);
  return z < 0 || cs_add_concat_steps(g, base, n, zs, z, 1) < 0 ? -1 : z;
}

int cs_mm_exact_dw_finish(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p,
                          const cs_mm_exact_tile *tiles, int n_tiles, int (*ins)[5], int w_in,
                          const tidsp_conv2d_params *cp, int32_t o_zp) {
  int y = cs_graph_node(g, id)->outputs[0];
  const char *yname = cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y";
  char name[512];
  snprintf(name, sizeof name, "%s.mm_z16_tile0", yname);
  int zs[CS_MM_EXACT_MAX_TILES];
  if ((zs[0] = cs_reroute_output_as(g, id, 0, name, CS_DTYPE_I16)) < 0) return -1;
  cs_op op = cs_graph_node(g, id)->op;
  for (int j = 1; j < n_tiles; j++) {
    yname = cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y";
    snprintf(name, sizeof name, "%s.mm_z16_tile%d", yname, j);
    int64_t shape[CS_MAX_RANK];
    memcpy(shape, cs_graph_value(g, y)->shape, sizeof shape);
    int zj = cs_graph_add_value(g, name, CS_DTYPE_I16, 4, shape);
    int k = zj < 0 ? -1 : cs_add_kernel(g, op, base, 5, ins[j], zj);
    int64_t args[12];
    cs_mm_exact_tile_args(&tiles[j], shape[1], cp->h_in, cp->w_in, cp->stride_h, args);
    if (k < 0 || cs_mm_set_args(g, k, 12, args) != CS_OK) return -1;
    zs[j] = zj;
  }
  /* the tiles' z, one after another: [P, C, H, W] */
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, cs_graph_value(g, y)->shape, sizeof shape);
  shape[0] = n_tiles;
  int z = concat_z(g, base, y, zs, n_tiles, shape);
  return z < 0 ? -1 : add_core(g, base, p, n_tiles, z, w_in, cp, o_zp, y);
}

/* ---- a grouped conv as block-diagonal int16 convs ------------------------ */

int cs_mm_exact_group_blocks(int64_t c_out, int64_t groups) {
  int64_t tile = cs_mm_int8_exact.mult, c_g = groups > 0 ? c_out / groups : 0;
  if (c_g < 1) return 0;
  if (c_g % tile == 0) return 1;
  return tile % c_g == 0 ? (int)(tile / c_g) : 0;
}

int cs_mm_exact_group_inputs(cs_graph *g, const char *base, int act_in, int w_in, cs_mm_exact_plan *p,
                             int64_t groups, int per_block, const int64_t *conv_args, int (*ins)[5],
                             int64_t (*args)[12]) {
  int x16 = p->x16 = widen(g, base, act_in, p->x_zp);
  if (x16 < 0) return -1;
  const cs_value *wv = cs_graph_value(g, w_in);
  int64_t c_out = wv->shape[0], cin_g = wv->shape[1], kk = wv->shape[2] * wv->shape[3];
  int64_t c_g = c_out / groups, bw = per_block * c_g, nw = cs_value_numel(wv);
  int n_blocks = (int)((groups + per_block - 1) / per_block);
  /* the graph grows below (its arrays move): the int8 weights copied once */
  int8_t *w8 = malloc((size_t)nw);
  int16_t *w16 = malloc(sizeof *w16 * (size_t)(bw * per_block * cin_g * kk));
  int64_t *bias = malloc(sizeof *bias * (size_t)bw);
  uint8_t *scale = malloc((size_t)bw), *shift = malloc((size_t)bw);
  int ok = w8 && w16 && bias && scale && shift;
  if (ok) memcpy(w8, wv->data, (size_t)nw);
  const cs_value *xv = cs_graph_value(g, x16);
  int64_t h = xv->shape[2], w = xv->shape[3];
  for (int j = 0; ok && j < n_blocks; j++) {
    int64_t g0 = (int64_t)j * per_block, nb = groups - g0 < per_block ? groups - g0 : per_block;
    int64_t cin_j = nb * cin_g;
    /* output o of the block is group g0 + o / c_g's channel: its filter on
     * that group's input channels, zeros on the others (and zero filters
     * past the last group: their z is never read) */
    memset(w16, 0, sizeof *w16 * (size_t)(bw * cin_j * kk));
    for (int64_t o = 0; o < bw; o++) {
      int64_t q = o / c_g, c = g0 * c_g + o;
      int real = q < nb;
      for (int64_t ci = 0; real && ci < cin_g; ci++)
        for (int64_t t = 0; t < kk; t++) w16[(o * cin_j + q * cin_g + ci) * kk + t] = w8[(c * cin_g + ci) * kk + t];
      bias[o] = real ? p->bias[c] : 0;
      scale[o] = real ? p->scale[c] : 1;
      shift[o] = real ? p->shift[c] : 0;
    }
    char suffix[40];
    snprintf(suffix, sizeof suffix, "mm_w16_block%d", j);
    int64_t wshape[4] = {bw, cin_j, cs_graph_value(g, w_in)->shape[2], cs_graph_value(g, w_in)->shape[3]};
    int wt = cs_add_const_named(g, base, suffix, CS_DTYPE_I16, 4, wshape, w16);
    int rq[3];
    ok = wt >= 0 && cs_mm_add_requant_consts_i16(g, base, (int)bw, bias, scale, shift, rq) == CS_OK;
    int xin = x16;
    if (ok && n_blocks > 1) { /* the block's input channels: a view */
      int64_t start[4] = {0, g0 * cin_g, 0, 0}, len[4] = {1, cin_j, h, w};
      ok = (xin = slice16(g, base, x16, "block", j, start, len)) >= 0;
    }
    if (!ok) break;
    int all[5] = {xin, wt, rq[0], rq[1], rq[2]};
    memcpy(ins[j], all, sizeof all);
    memcpy(args[j], conv_args, sizeof args[j]);
    args[j][0] = cin_j;
    args[j][3] = bw;
  }
  if (!w8 || !w16 || !bias || !scale || !shift) cs_error(CS_ERR_NOMEM, "out of memory");
  free(w8);
  free(w16);
  free(bias);
  free(scale);
  free(shift);
  return ok ? 0 : -1;
}

int cs_mm_exact_group_finish(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p, int n_blocks,
                             int (*ins)[5], int64_t (*args)[12], int w_in, const tidsp_conv2d_params *cp,
                             int32_t o_zp) {
  int y = cs_graph_node(g, id)->outputs[0];
  const char *yname = cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y";
  int64_t bw = args[0][3];
  char name[512];
  snprintf(name, sizeof name, n_blocks > 1 ? "%s.mm_z16_block0" : "%s.mm_z16", yname);
  int z0 = cs_reroute_output_as(g, id, 0, name, CS_DTYPE_I16);
  if (z0 < 0) return -1;
  cs_graph_value(g, z0)->shape[1] = bw; /* a block's channels: its zero filters' z too */
  if (n_blocks == 1) return add_core(g, base, p, 1, z0, w_in, cp, o_zp, y);
  int *zs = malloc(sizeof *zs * (size_t)n_blocks);
  if (!zs) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  zs[0] = z0;
  int ok = 1;
  cs_op op = cs_graph_node(g, id)->op;
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, cs_graph_value(g, z0)->shape, sizeof shape);
  for (int j = 1; ok && j < n_blocks; j++) {
    yname = cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y";
    snprintf(name, sizeof name, "%s.mm_z16_block%d", yname, j);
    int zj = cs_graph_add_value(g, name, CS_DTYPE_I16, 4, shape);
    int k = zj < 0 ? -1 : cs_add_kernel(g, op, base, 5, ins[j], zj);
    ok = k >= 0 && cs_mm_set_args(g, k, 12, args[j]) == CS_OK;
    zs[j] = zj;
  }
  /* the blocks' z, one after another along the channels: [1, n·bw, H, W],
   * the real channels first (only the last block has zero filters) */
  int z = -1;
  if (ok) {
    shape[1] = bw * n_blocks;
    z = concat_z(g, base, y, zs, n_blocks, shape);
  }
  free(zs);
  return z < 0 ? -1 : add_core(g, base, p, 1, z, w_in, cp, o_zp, y);
}
