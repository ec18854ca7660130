/*
 * mmalib_exact.c — the exact-requant path of an offloaded int8 conv
 * (-mmalib-exact; the arithmetic and its bound: quant/mmalib_exact.h).
 *
 * The int8 conv pass (mmalib_conv.c) decides a layer, folds it as usual,
 * then, for a layer the option selects, builds instead of the int8 call:
 *
 *   x:i8 ─k_cast─► x16:i16 ─mmalib_conv2d_i16 (or depthwise_i16, 3×3)─► z:i16
 *        w:i8 const → w16:i16 const; bias int64 = acc bias + D; scale/shift:
 *        z's grid
 *   z ─k_dequantize((z − C[c])·M[c]·q[c])─► f:f32 ─k_quantize(1, o_zp)─► y:i8
 *   (M: ORT's float32 multiplier, so f is ORT's fl(fl(acc)·M) where q = 1)
 *
 * The MACs stay on the MMA (MMALIB's int16 kernel; the data are int8
 * values, so its products and int64 sums are exact); the requantization
 * runs on the core with ORT's multiplier.
 *
 * Which layers (-mmalib-exact=worst): the int8 kernel's error is
 * g·(y − o_zp) before rounding (g the scale's relative error, per channel),
 * so a layer's share of outputs off ORT's grows with its worst |g|. A
 * layer takes the exact path when its worst |g| ≥ CS_MM_EXACT_WORST_G,
 * a data-free rule decided from the folded scales alone. `all` takes every
 * layer the int16 kernels can run (plain convs, 3×3 depthwise).
 *
 * The cost: the int16 MMA runs at a quarter of the int8 rate (32×32
 * against 64×64 panels: cs_mm_cost_mma's tile), plus three core passes
 * (widen the input, dequantize and quantize the output) and an int16 and a
 * float32 copy of the output in the arena. The offload report gives each
 * exact layer's bound (max_error_lsb) and the cycle estimates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "mmalib_common.h"
#include "pattern.h"

int cs_mm_exact_wanted(const cs_target *t, double worst_g) {
  if (!t->mmalib) return 0;
  switch (t->mmalib_exact) {
    case CS_MM_EXACT_ALL: return 1;
    case CS_MM_EXACT_WORST: return worst_g >= CS_MM_EXACT_WORST_G;
    default: return 0;
  }
}

void cs_mm_exact_plan_free(cs_mm_exact_plan *p) {
  free(p->bias);
  free(p->scale);
  free(p->shift);
  free(p->dq_scale);
  free(p->centre);
  memset(p, 0, sizeof *p);
}

const char *cs_mm_exact_plan_init(cs_mm_exact_plan *p, int c_out, float d_s, const cs_qparams *wq, float o_s,
                                  int32_t o_zp, const int64_t *acc_bias) {
  memset(p, 0, sizeof *p);
  p->c_out = c_out;
  p->bias = malloc(sizeof *p->bias * (size_t)c_out);
  p->scale = malloc((size_t)c_out);
  p->shift = malloc((size_t)c_out);
  p->dq_scale = malloc(sizeof *p->dq_scale * (size_t)c_out);
  p->centre = malloc(sizeof *p->centre * (size_t)c_out);
  if (!p->bias || !p->scale || !p->shift || !p->dq_scale || !p->centre) return cs_mm_nomem;
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
    p->centre[c] = ch.centre;
    /* (z − C)·M·q with M ORT's float32 multiplier fl(fl(d_s·w_s)/o_s)
     * (quant/requant.c), then k_quantize with scale 1 rounds it: where
     * q = 1, z − C is the accumulator and this is ORT's fl(fl(acc)·M),
     * bit for bit. */
    float m = (d_s * wq->scale[wq->count > 1 ? c : 0]) / o_s;
    p->dq_scale[c] = ch.scale == 1 && ch.shift == 0 ? m : (float)((double)m * ldexp(1.0, ch.shift) / (double)ch.scale);
    /* q = 1: z is the accumulator itself, nothing rounded */
    double err = ch.scale == 1 && ch.shift == 0 ? 0.0 : ch.step / 2.0;
    if (err > p->max_err) p->max_err = err;
  }
  return NULL;
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

/* out = k_quantize / k_dequantize(in) over [outer][channels][inner] with
 * constant scale[channels] and zero_point[channels]. */
static int qdq(cs_graph *g, cs_op op, const char *base, const char *what, int in, int out, const float *scale,
               const int32_t *zp, int32_t outer, int32_t channels, int32_t inner, int32_t dtype) {
  int64_t cs[1] = {channels};
  char suffix[64];
  snprintf(suffix, sizeof suffix, "%s_scale", what);
  int s = cs_add_const_named(g, base, suffix, CS_DTYPE_F32, 1, cs, scale);
  snprintf(suffix, sizeof suffix, "%s_zero_point", what);
  int z = s < 0 ? -1 : cs_add_const_named(g, base, suffix, CS_DTYPE_I32, 1, cs, zp);
  int ins[3] = {s, z, in};
  int id = z < 0 ? -1 : cs_add_kernel(g, op, base, 3, ins, out);
  if (id < 0) return -1;
  tidsp_qdq_params *p = &cs_graph_node(g, id)->k.qdq;
  p->outer = outer;
  p->channels = channels;
  p->inner = inner;
  p->dtype = dtype;
  return id;
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

int cs_mm_exact_requant(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p, float o_s,
                        int32_t o_zp) {
  int y = cs_graph_node(g, id)->outputs[0];
  char zname[512];
  snprintf(zname, sizeof zname, "%s.mm_z16", cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "y");
  int z = cs_reroute_output_as(g, id, 0, zname, CS_DTYPE_I16);
  if (z < 0) return -1;
  int f = like(g, y, "mm_f32", CS_DTYPE_F32);
  if (f < 0) return -1;
  int64_t numel = cs_value_numel(cs_graph_value(g, y));
  int32_t inner = (int32_t)(numel / p->c_out);
  if (qdq(g, CS_OP_K_DEQUANTIZE, base, "mm_dq", z, f, p->dq_scale, p->centre, 1, p->c_out, inner,
          TIDSP_DTYPE_I16) < 0)
    return -1;
  const float one = 1.0f;
  if (qdq(g, CS_OP_K_QUANTIZE, base, "mm_q", f, y, &one, &o_zp, (int32_t)numel, 1, 1, TIDSP_DTYPE_I8) < 0)
    return -1;
  return 0;
}
