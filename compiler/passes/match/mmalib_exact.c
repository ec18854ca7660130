/*
 * mmalib_exact.c — the exact-requant path of an offloaded int8 conv or FC
 * (-mmalib-exact; the arithmetic: quant/mmalib_exact.h).
 *
 * The int8 conv and FC passes (mmalib_conv.c; mmalib_fc.c: an FC of M
 * rows is read by the core kernel as M images of a 1x1 conv, padded K and N
 * included) decide a layer, fold it as usual, then, for a layer the option
 * selects, build instead of the int8 call:
 *
 *   x:i8 ─k_cast─► x16:i16 ─mmalib_conv2d_i16 (or depthwise_i16, 3×3)─► z:i16
 *        w:i8 const → w16:i16 const; bias int64 = acc bias + D; scale/shift:
 *        z's grid
 *   z, x, w ─k_mmalib_exact_requant─► y:i8
 *   (z bounds each accumulator to an interval of q values; where ORT's
 *   requantization of both ends agrees that is the output, else the core
 *   sums that one accumulator again: ORT's bytes, bit for bit)
 *
 * The MACs stay on the MMA (MMALIB's int16 kernel; the data are int8
 * values, so its products and int64 sums are exact); the requantization
 * runs on the core with ORT's multiplier.
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
 * on the int8 kernel. -mmalib-exact=all: every int8 conv an int16
 * kernel runs, and every FC; the rest (a 5×5/7×7 depthwise, a grouped
 * conv, a batch) stay on the int8 kernel. -mmalib-exact=strict: all, and the rest are
 * left to the core's exact int8 conv instead (declined, the offload report
 * says why): every conv gives ORT's bytes, at the cost of those layers'
 * MMA share.
 *
 * The cost: the int16 MMA runs at a quarter of the int8 rate (32×32
 * against 64×64 panels: cs_mm_cost_mma's tile), plus two core passes
 * (widen the input; requantize z, with the ambiguous outputs' MACs again)
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

const char *cs_mm_exact_plan_init(cs_mm_exact_plan *p, int c_out, float d_s, const cs_qparams *wq, float o_s,
                                  int32_t o_zp, const int64_t *acc_bias) {
  memset(p, 0, sizeof *p);
  p->c_out = c_out;
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
    double b = (double)acc_bias[c] + (double)ch.offset;
    if (!(fabs(b) < 9007199254740992.0)) return "exact path: folded bias beyond 2^53";
    p->bias[c] = acc_bias[c] + ch.offset;
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

int cs_mm_exact_inputs(cs_graph *g, const char *base, int act_in, int w_in, const cs_mm_exact_plan *p,
                       int *ins) {
  /* the input, widened */
  int x16 = like(g, act_in, "mm_i16", CS_DTYPE_I16);
  if (x16 < 0) return -1;
  int k = cs_add_kernel(g, CS_OP_K_CAST, base, 1, &act_in, x16);
  if (k < 0) return -1;
  tidsp_cast_params cp = {(int32_t)cs_value_numel(cs_graph_value(g, act_in)), TIDSP_DTYPE_I8, TIDSP_DTYPE_I16};
  cs_graph_node(g, k)->k.cast = cp;
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

int cs_mm_exact_requant(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p, int act_in, int w_in,
                        const tidsp_conv2d_params *cp, int32_t o_zp) {
  int y = cs_graph_node(g, id)->outputs[0];
  char zname[512];
  snprintf(zname, sizeof zname, "%s.mm_z16", cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y");
  int z = cs_reroute_output_as(g, id, 0, zname, CS_DTYPE_I16);
  if (z < 0) return -1;
  int n = p->c_out;
  int64_t *grid = malloc(sizeof *grid * 4 * (size_t)n);
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
  int64_t gshape[1] = {4 * (int64_t)n}, mshape[1] = {n};
  int gv = cs_add_const_named(g, base, "mm_exact_grid", CS_DTYPE_I64, 1, gshape, grid);
  free(grid);
  int mv = gv < 0 ? -1 : cs_add_const_named(g, base, "mm_exact_rq", CS_DTYPE_F32, 1, mshape, p->mult);
  int ins[5] = {z, act_in, w_in, gv, mv};
  int k = mv < 0 ? -1 : cs_add_kernel(g, CS_OP_K_MMALIB_EXACT_REQUANT, base, 5, ins, y);
  if (k < 0) return -1;
  tidsp_conv2d_params q = *cp;
  q.x_zp = q.w_zp = 0;
  q.rq.kind = TIDSP_REQUANT_FLOAT;
  q.rq.per_channel = 1;
  q.rq.out_zp = o_zp;
  q.rq.out_min = -128;
  q.rq.out_max = 127;
  q.w_row_stride = q.mlas_nchw = q.w_layout = 0;
  cs_graph_node(g, k)->k.conv = q;
  return 0;
}
