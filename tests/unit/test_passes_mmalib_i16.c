/*
 * The int16 MMALIB passes (-mmalib=1): the int16 QDQ fusions (conv,
 * depthwise, FC, residual add; spec/mmalib-integration.txt "Supported
 * Operations", int16 rows, symmetric only) and the int16 legalize path
 * (float conv/matmul → int16 MMA kernels). Every target prices the calls
 * from DDR (-l2-budget=0), as test_passes_mmalib.c's.
 *
 * For every eligibility rule one graph that is offloaded and one declined
 * for that rule; a declined match leaves the graph exactly as it was and
 * names the rule in the offload report. An offloaded QDQ layer runs within
 * |y|·ε + 1 LSB of the generic DQ → float op → Q lowering, ε being the
 * layer's reported worst scale/shift error (MMALIB's uint8 scale: ε ≤ 2^−8;
 * +1: the kernel's and the float path's roundings); its folded int64 bias
 * and scale/shift match a direct float computation. The legalize path is
 * checked against the float lowering by SQNR.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/match/mmalib_report.h"
#include "passes/pass_list.h"
#include "passes/passes.h"
#include "unit.h"

static int scalar_i16(cs_graph *g, const char *name, int16_t v) {
  return cs_graph_add_const(g, name, CS_DTYPE_I16, 0, NULL, &v);
}

static int16_t pattern_i16(int64_t i, int mul) { return (int16_t)((i * mul) % 65521 - 32760); }

/* x → Q:i16 → DQ (or DQ of an int16 constant with x_const). */
static int input_i16(cs_graph *g, int x, int x_const, float s, int zp) {
  if (x_const) {
    const cs_value *xv = cs_graph_value(g, x);
    int64_t n = cs_value_numel(xv), shape[CS_MAX_RANK];
    int rank = xv->rank;
    memcpy(shape, xv->shape, sizeof shape);
    int16_t *d = malloc(sizeof *d * (size_t)n);
    for (int64_t i = 0; i < n; i++) d[i] = (int16_t)(pattern_i16(i, 13) / 4);
    int c = cs_graph_add_const(g, "xc", CS_DTYPE_I16, rank, shape, d);
    free(d);
    return gb_dq(g, "dq_in", c, gb_scalar_f32(g, "s_in2", s), scalar_i16(g, "z_in2", (int16_t)zp));
  }
  int q = gb_q(g, "q_in", x, gb_scalar_f32(g, "s_in", s), scalar_i16(g, "z_in", (int16_t)zp));
  return gb_dq(g, "dq_in", q, gb_scalar_f32(g, "s_in2", s), scalar_i16(g, "z_in2", (int16_t)zp));
}

/* DQ(w:i16 const, per-channel scales on axis) */
static int weight_i16(cs_graph *g, int rank, const int64_t *shape, int channels, int axis, int w_zp, float base) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  int16_t *wd = malloc(sizeof *wd * (size_t)n);
  for (int64_t i = 0; i < n; i++) wd[i] = pattern_i16(i, 37);
  int w = cs_graph_add_const(g, "w", CS_DTYPE_I16, rank, shape, wd);
  free(wd);
  int64_t cs[1] = {channels};
  float *wsc = malloc(sizeof(float) * (size_t)channels);
  int16_t *wzp = malloc(sizeof(int16_t) * (size_t)channels);
  for (int o = 0; o < channels; o++) wsc[o] = base * (float)(o % 7 + 1), wzp[o] = (int16_t)w_zp;
  int wdq = gb_dq(g, "dq_w", w, cs_graph_add_const(g, "w_scale", CS_DTYPE_F32, channels > 1 ? 1 : 0, cs, wsc),
                  cs_graph_add_const(g, "w_zp", CS_DTYPE_I16, channels > 1 ? 1 : 0, cs, wzp));
  free(wsc);
  free(wzp);
  cs_node_set_attr_int(cs_graph_node(g, cs_graph_value(g, wdq)->producer), "axis", axis);
  return wdq;
}

/* act 0 none, 1 Relu, 2 Clip(0, 1) (a ReLU6-like clamp inside the range) */
static int tail_i16(cs_graph *g, int v, int act, float o_s, int o_zp) {
  const cs_value *y = cs_graph_value(g, v);
  int64_t shape[CS_MAX_RANK];
  int rank = y->rank;
  memcpy(shape, y->shape, sizeof shape);
  if (act == 1) v = gb_node(g, CS_OP_RELU, "relu", 1, &v, CS_DTYPE_F32, rank, shape, NULL);
  if (act == 2) {
    int in[3] = {v, gb_scalar_f32(g, "clip_lo", 0.0f), gb_scalar_f32(g, "clip_hi", 1.0f)};
    v = gb_node(g, CS_OP_CLIP, "clip", 3, in, CS_DTYPE_F32, rank, shape, NULL);
  }
  int q = gb_q(g, "q_out", v, gb_scalar_f32(g, "s_out", o_s), scalar_i16(g, "z_out", (int16_t)o_zp));
  return gb_dq(g, "dq_out", q, gb_scalar_f32(g, "s_out2", o_s), scalar_i16(g, "z_out2", (int16_t)o_zp));
}

/* ---- graphs ---------------------------------------------------------- */

#define X_SCALE (3.0f / 32767.0f)
#define W_SCALE 2e-6f
#define O_SCALE 1e-3f

typedef struct conv_spec {
  int n, cin, cout, h, w, kh, kw, sh, sw, dh, dw, groups, pad;
  int x_zp, o_zp, act, w_zp, x_const, per_channel, dq_bias;
} conv_spec;

static conv_spec conv_default(void) {
  conv_spec s = {1, 8, 32, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, 0};
  return s;
}

static int out_dim(int in, int k, int s, int d, int pad) { return (in + 2 * pad - d * (k - 1) - 1) / s + 1; }

/* x → Q → DQ → Conv(DQ(w), b) → [Relu|Clip] → Q → DQ → y, all int16 */
static cs_graph *conv_graph(const conv_spec *s) {
  cs_graph *g = cs_graph_new("conv16");
  int ho = out_dim(s->h, s->kh, s->sh, s->dh, s->pad), wo = out_dim(s->w, s->kw, s->sw, s->dw, s->pad);
  int64_t xs[4] = {s->n, s->cin, s->h, s->w}, ws[4] = {s->cout, s->cin / s->groups, s->kh, s->kw};
  int64_t ys[4] = {s->n, s->cout, ho, wo}, bs[1] = {s->cout};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int dq = input_i16(g, x, s->x_const, X_SCALE, s->x_zp);
  int wdq = weight_i16(g, 4, ws, s->per_channel ? s->cout : 1, 0, s->w_zp, W_SCALE);
  int b;
  if (s->dq_bias) { /* ORT's bias: DQ(int32, d_s·w_s) */
    int32_t *bq = malloc(sizeof *bq * (size_t)s->cout);
    float *bsc = malloc(sizeof *bsc * (size_t)s->cout);
    for (int o = 0; o < s->cout; o++)
      bq[o] = (o % 9 - 4) * 100003, bsc[o] = X_SCALE * (W_SCALE * (float)(s->per_channel ? o % 7 + 1 : 1));
    int bc = cs_graph_add_const(g, "bq", CS_DTYPE_I32, 1, bs, bq);
    int32_t *bz = calloc((size_t)s->cout, sizeof *bz);
    b = gb_dq(g, "dq_b", bc, cs_graph_add_const(g, "b_scale", CS_DTYPE_F32, 1, bs, bsc),
              cs_graph_add_const(g, "b_zp", CS_DTYPE_I32, 1, bs, bz));
    cs_node_set_attr_int(cs_graph_node(g, cs_graph_value(g, b)->producer), "axis", 0);
    free(bq);
    free(bsc);
    free(bz);
  } else {
    float *bias = malloc(sizeof(float) * (size_t)s->cout);
    for (int o = 0; o < s->cout; o++) bias[o] = 0.37f * (float)(o % 9 - 4);
    b = cs_graph_add_const(g, "b", CS_DTYPE_F32, 1, bs, bias);
    free(bias);
  }
  int conv_id, cin[3] = {dq, wdq, b};
  int cy = gb_node(g, CS_OP_CONV, "conv", 3, cin, CS_DTYPE_F32, 4, ys, &conv_id);
  cs_node *cn = cs_graph_node(g, conv_id);
  int64_t pads[4] = {s->pad, s->pad, s->pad, s->pad}, st[2] = {s->sh, s->sw}, dl[2] = {s->dh, s->dw};
  int64_t ks[2] = {s->kh, s->kw};
  cs_node_set_attr_ints(cn, "pads", 4, pads);
  cs_node_set_attr_ints(cn, "strides", 2, st);
  cs_node_set_attr_ints(cn, "dilations", 2, dl);
  cs_node_set_attr_ints(cn, "kernel_shape", 2, ks);
  cs_node_set_attr_int(cn, "group", s->groups);
  int y = tail_i16(g, cy, s->act, O_SCALE, s->o_zp);
  gb_set_io(g, 1, &x, 1, &y);
  return g;
}

static conv_spec dw(int k, int stride) {
  conv_spec s = conv_default();
  s.cin = s.cout = s.groups = 16;
  s.kh = s.kw = k;
  s.sh = s.sw = stride;
  s.pad = k / 2;
  s.h = s.w = 10;
  return s;
}

/* ---- helpers ---------------------------------------------------------- */

static int live_nodes(const cs_graph *g) {
  int c = 0;
  for (int i = 0; i < g->n_nodes; i++) c += !g->nodes[i].dead;
  return c;
}

static const cs_offload_entry *entry_of(const cs_graph *g, const char *layer) {
  const cs_offload_report *r = &g->offload;
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->entries[i].layer, layer)) return &r->entries[i];
  return NULL;
}

/* Run one pass alone; a decline must leave the graph untouched and report
 * `rule` (a substring) for `layer`. */
static void expect_decline(cs_graph *g, cs_pass_fn pass, const char *layer, const char *what, const char *rule) {
  int nodes = g->n_nodes, values = g->n_values, live = live_nodes(g);
  cs_mmalib_report_reset(g);
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t) == CS_OK);
  CHECK_MSG(pass(g, &t) == CS_OK, "%s: %s", what, cs_error_message());
  CHECK_MSG(g->n_nodes == nodes && g->n_values == values && live_nodes(g) == live,
            "%s: a declined match changed the graph", what);
  const cs_offload_entry *e = entry_of(g, layer);
  CHECK_MSG(e && !e->kernel[0] && strstr(e->reason, rule), "%s: no decline of '%s' with rule '%s' (got '%s')", what,
            layer, rule, e ? e->reason : "no entry");
  cs_graph_free(g);
}

static float *make_input(int64_t n, double amp) {
  float *x = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(sin((double)i * 0.37) * amp);
  return x;
}

/* Lower g1 with -mmalib=1 (must contain `op`, and `extra` when ≥ 0) and g0
 * generically, run both on the same inputs (amplitude amp) and compare in
 * output integers: the offload must be within |q|·ε + 1 of the generic
 * path, ε the layer's reported scale/shift error. */
static void expect_offload(cs_graph *g1, cs_graph *g0, cs_op op, int extra, const char *layer, float out_scale,
                           double amp, const char *what) {
  cs_target t1, t0;
  CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t1) == CS_OK);
  cs_target_default(&t0);
  CHECK_MSG(cs_passes_run(g1, &t1, NULL) == CS_OK, "%s: %s", what, cs_error_message());
  CHECK_MSG(gb_count_op(g1, op) == 1, "%s: expected one %s", what, cs_op_name(op));
  if (extra >= 0) CHECK_MSG(gb_count_op(g1, (cs_op)extra) == 1, "%s: expected one %s", what, cs_op_name((cs_op)extra));
  else CHECK_MSG(gb_count_op(g1, CS_OP_K_C7X_RESIDUAL_ADD_I16) == (op == CS_OP_K_C7X_RESIDUAL_ADD_I16),
                 "%s: an unexpected ReLU call", what);
  const cs_offload_entry *e = entry_of(g1, layer);
  CHECK_MSG(e && e->kernel[0], "%s: layer '%s' not reported as offloaded", what, layer);
  double eps = e ? e->scale_rel_err : 1.0;
  CHECK_MSG(eps >= 0 && eps <= ldexp(1, -8), "%s: scale/shift error %g", what, eps);
  /* the report's int16 error bound: 1 LSB + eps·|y| at |y| = 2^15 */
  CHECK_MSG(e && fabs(e->bound_full_scale_lsb - (1.0 + eps * 32768.0)) < 1e-9, "%s: error bound %g, eps %g", what,
            e ? e->bound_full_scale_lsb : -1.0, eps);
  CHECK_MSG(cs_passes_run(g0, &t0, NULL) == CS_OK, "%s: %s", what, cs_error_message());
  const void *in[2];
  float *xs[2] = {NULL, NULL};
  for (int i = 0; i < g1->n_inputs; i++) {
    xs[i] = make_input(cs_value_numel(cs_graph_value(g1, g1->inputs[i])), amp * (i ? 0.7 : 1.0));
    in[i] = xs[i];
  }
  int32_t st1, st0;
  void **b1 = gb_run(g1, in, &st1), **b0 = gb_run(g0, in, &st0);
  CHECK_MSG(st1 == 0 && st0 == 0, "%s: run status %d / %d", what, st1, st0);
  if (st1 == 0 && st0 == 0) {
    const float *y1 = b1[g1->outputs[0]], *y0 = b0[g0->outputs[0]];
    int64_t n = cs_value_numel(cs_graph_value(g1, g1->outputs[0]));
    double worst = 0, big = 0;
    int nonzero = 0;
    for (int64_t i = 0; i < n; i++) { /* in output integers: round(y/s) undoes the DQ exactly */
      double q1 = nearbyint((double)y1[i] / out_scale), q0 = nearbyint((double)y0[i] / out_scale);
      double ref = fabs(q0);
      double d = fabs(q1 - q0) - ref * eps;
      if (d > worst) worst = d;
      if (ref > big) big = ref;
      nonzero += y0[i] != 0.0f;
    }
    if (getenv("CS_TEST_VERBOSE")) printf("%s: <= |y|*%.2e + %.3f LSB (max |y| %.0f)\n", what, eps, worst, big);
    CHECK_MSG(worst <= 1.0 + 1e-9, "%s: %.3f LSB beyond |y|*%.2g from the generic path", what, worst, eps);
    CHECK_MSG(big > 100 && nonzero > n / 4, "%s: degenerate test output (max %.0f LSB)", what, big);
  }
  gb_free_run(g1, b1);
  gb_free_run(g0, b0);
  free(xs[0]);
  free(xs[1]);
  cs_graph_free(g1);
  cs_graph_free(g0);
}

static void conv_offload(conv_spec s, cs_op op, const char *what) {
  expect_offload(conv_graph(&s), conv_graph(&s), op, s.act ? CS_OP_K_C7X_RESIDUAL_ADD_I16 : -1, "conv", O_SCALE,
                 3.0, what);
}

static void conv_decline(conv_spec s, cs_pass_fn pass, const char *what, const char *rule) {
  expect_decline(conv_graph(&s), pass, "conv", what, rule);
}

/* ---- conv2d ----------------------------------------------------------- */

static void test_conv_rules(void) {
  cs_pass_fn p = pass_fuse_mmalib_qdq_conv2d_i16;
  conv_spec s = conv_default();
  conv_offload(s, CS_OP_K_MMALIB_CONV2D_I16, "conv 8->32 3x3 pad 1 relu");
  s = conv_default(); s.act = 0;
  conv_offload(s, CS_OP_K_MMALIB_CONV2D_I16, "conv no activation");
  s = conv_default(); s.act = 2;
  conv_decline(s, p, "conv clip(0,1)", "neither none nor ReLU");
  /* N = 1 */
  s = conv_default(); s.n = 2;
  conv_decline(s, p, "conv N=2", "N != 1");
  /* symmetric stride */
  s = conv_default(); s.sh = s.sw = 2;
  conv_offload(s, CS_OP_K_MMALIB_CONV2D_I16, "conv stride 2x2");
  s = conv_default(); s.sh = 1; s.sw = 2;
  conv_decline(s, p, "conv stride 1x2", "asymmetric stride");
  /* dilation = 1 */
  s = conv_default(); s.dh = s.dw = 2; s.h = s.w = 8;
  conv_decline(s, p, "conv dilation 2", "dilation != 1");
  /* groups = 1 */
  s = conv_default(); s.groups = 2;
  conv_decline(s, p, "conv groups 2", "groups != 1");
  /* C_out % 32 == 0 */
  s = conv_default(); s.cout = 64;
  conv_offload(s, CS_OP_K_MMALIB_CONV2D_I16, "conv C_out 64");
  s = conv_default(); s.cout = 48;
  conv_decline(s, p, "conv C_out 48", "C_out % 32 != 0 (C_out=48): pad it to 64");
  /* symmetric only: w_zp, d_zp, o_zp */
  s = conv_default(); s.w_zp = 3;
  conv_decline(s, p, "conv w_zp 3", "w_zp != 0");
  s = conv_default(); s.x_zp = 5;
  conv_decline(s, p, "conv d_zp 5", "d_zp != 0 (d_zp=5");
  s = conv_default(); s.o_zp = -7; s.act = 0;
  conv_decline(s, p, "conv o_zp -7", "o_zp != 0 (o_zp=-7");
  /* all-constant match: never offloaded */
  s = conv_default(); s.x_const = 1;
  conv_decline(s, p, "conv of a constant", "ConstReachability");
  /* MMA alignment of the constants */
  s = conv_default();
  {
    cs_graph *g = conv_graph(&s);
    int nodes = g->n_nodes;
    cs_target t;
    CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0 -constants-byte-alignment=32", &t) == CS_OK);
    cs_mmalib_report_reset(g);
    CHECK(p(g, &t) == CS_OK);
    CHECK(g->n_nodes == nodes && entry_of(g, "conv") && strstr(entry_of(g, "conv")->reason, "constants-byte-alignment 32"));
    cs_graph_free(g);
  }
  /* per-tensor weight scale, ORT's DQ(int32) bias */
  s = conv_default(); s.per_channel = 0;
  conv_offload(s, CS_OP_K_MMALIB_CONV2D_I16, "conv per-tensor weights");
  s = conv_default(); s.dq_bias = 1;
  conv_offload(s, CS_OP_K_MMALIB_CONV2D_I16, "conv DQ(int32) bias");
  /* the depthwise pass leaves plain convs alone (and the conv pass
   * depthwise ones) */
  s = conv_default();
  {
    cs_graph *g = conv_graph(&s);
    int live = live_nodes(g);
    cs_target t;
    CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t) == CS_OK);
    cs_mmalib_report_reset(g);
    CHECK(pass_fuse_mmalib_qdq_dwconv2d_i16(g, &t) == CS_OK);
    CHECK(live_nodes(g) == live && g->offload.n == 0);
    cs_graph_free(g);
  }
}

/* ---- depthwise -------------------------------------------------------- */

static void test_depthwise_rules(void) {
  cs_pass_fn p = pass_fuse_mmalib_qdq_dwconv2d_i16;
  conv_offload(dw(3, 1), CS_OP_K_MMALIB_DWCONV2D_I16, "dw 3x3 s1 relu");
  conv_offload(dw(3, 2), CS_OP_K_MMALIB_DWCONV2D_I16, "dw 3x3 s2 relu");
  conv_spec s = dw(3, 1); s.act = 0;
  conv_offload(s, CS_OP_K_MMALIB_DWCONV2D_I16, "dw 3x3 linear");
  conv_decline(dw(5, 1), p, "dw 5x5", "not 3x3 (5x5; MMALIB-882)");
  conv_decline(dw(7, 1), p, "dw 7x7", "not 3x3");
  conv_decline(dw(3, 3), p, "dw stride 3", "stride not 1-2");
  s = dw(3, 1); s.kw = 5;
  conv_decline(s, p, "dw 3x5", "not 3x3");
  s = dw(3, 1); s.sw = 2;
  conv_decline(s, p, "dw stride 1x2", "asymmetric stride");
  s = dw(3, 1); s.dh = s.dw = 2;
  conv_decline(s, p, "dw dilation 2", "dilation != 1");
  s = dw(3, 1); s.n = 2;
  conv_decline(s, p, "dw N=2", "N != 1");
  s = dw(3, 1); s.cout = 32;
  conv_decline(s, p, "dw multiplier 2", "channel multiplier");
  s = dw(3, 1); s.x_zp = 2;
  conv_decline(s, p, "dw d_zp 2", "d_zp != 0");
}

/* ---- folded constants against a direct float computation -------------- */

static void check_folding(int dq_bias) {
  conv_spec s = conv_default();
  s.act = 0;
  s.dq_bias = dq_bias;
  cs_graph *g = conv_graph(&s);
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t) == CS_OK);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_MMALIB_CONV2D_I16);
  CHECK(k >= 0);
  if (k < 0) { cs_graph_free(g); return; }
  const cs_node *n = cs_graph_node(g, k);
  CHECK(cs_graph_value(g, n->inputs[2])->dtype == CS_DTYPE_I64);
  const int64_t *bias = cs_graph_value(g, n->inputs[2])->data;
  const uint8_t *sc = cs_graph_value(g, n->inputs[3])->data, *sh = cs_graph_value(g, n->inputs[4])->data;
  double worst = 0;
  for (int o = 0; o < s.cout; o++) {
    double ws = (float)(W_SCALE * (float)(o % 7 + 1));
    double dw_ = (double)X_SCALE * ws, r = dw_ / (double)O_SCALE;
    double eff = ldexp(sc[o], -sh[o]), rel = fabs(eff - r) / r;
    if (rel > worst) worst = rel;
    CHECK_MSG(sc[o] >= 128 && rel <= ldexp(1, -8), "ch %d: %u*2^-%u vs %g", o, sc[o], sh[o], r);
    double expect = dq_bias ? (double)((o % 9 - 4) * 100003) : nearbyint((double)(0.37f * (float)(o % 9 - 4)) / dw_);
    CHECK_MSG((double)bias[o] == expect, "ch %d: bias %lld vs %.1f", o, (long long)bias[o], expect);
  }
  const cs_offload_entry *e = entry_of(g, "conv");
  CHECK_MSG(e && fabs(e->scale_rel_err - worst) < 1e-12, "reported error %g vs %g", e ? e->scale_rel_err : -1, worst);
  cs_graph_free(g);
}

static void test_folding(void) {
  check_folding(0);
  check_folding(1);
  /* int64: a bias of 3000 at d_s·w_s ≈ 1.8e-10 is ~1.6e13 accumulator units */
  conv_spec s = conv_default();
  s.act = 0;
  cs_graph *g = conv_graph(&s);
  int b = cs_graph_node(g, gb_find_op(g, CS_OP_CONV))->inputs[2];
  ((float *)cs_graph_value(g, b)->data)[0] = 3000.0f;
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t) == CS_OK);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_MMALIB_CONV2D_I16);
  CHECK(k >= 0);
  if (k >= 0) {
    const int64_t *bias = cs_graph_value(g, cs_graph_node(g, k)->inputs[2])->data;
    double expect = nearbyint(3000.0 / ((double)X_SCALE * (double)(float)W_SCALE));
    CHECK_MSG(bias[0] > INT32_MAX && (double)bias[0] == expect, "bias %lld vs %.0f", (long long)bias[0], expect);
  }
  cs_graph_free(g);
}

/* ---- FC --------------------------------------------------------------- */

typedef struct fc_spec {
  int gemm, trans_b, k, n, w_zp, x_const, alpha2, bias_input, reshape, x_zp, o_zp, act;
  int m;         /* rows of the data: no rule on M (the spec constrains K and N only) */
  int transpose; /* MatMul's weight is Transpose[1,0](DQ(w [N][K])), as PT2E exports nn.Linear */
} fc_spec;

static fc_spec fc_default(void) {
  fc_spec s = {1, 1, 64, 32, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
  return s;
}

/* x[1,K] → Q → DQ → Gemm(·, DQ(w), b) | MatMul(·, DQ(w)) → Add(b) → [act] → Q → DQ */
static cs_graph *fc_graph(const fc_spec *s) {
  cs_graph *g = cs_graph_new("fc16");
  int64_t xs[2] = {s->m, s->k}, ys[2] = {s->m, s->n}, bs[1] = {s->n};
  int w_nk = s->trans_b || s->transpose;
  int64_t wsh[2] = {w_nk ? s->n : s->k, w_nk ? s->k : s->n};
  int x = gb_value(g, "x", CS_DTYPE_F32, 2, xs);
  int dq = input_i16(g, x, s->x_const, X_SCALE, s->x_zp);
  int wdq = weight_i16(g, 2, wsh, s->n, w_nk ? 0 : 1, s->w_zp, W_SCALE);
  if (s->transpose) {
    int64_t kn[2] = {s->k, s->n}, perm[2] = {1, 0};
    int tid;
    wdq = gb_node(g, CS_OP_TRANSPOSE, "w_t", 1, &wdq, CS_DTYPE_F32, 2, kn, &tid);
    cs_node_set_attr_ints(cs_graph_node(g, tid), "perm", 2, perm);
  }
  float *bias = malloc(sizeof(float) * (size_t)s->n);
  for (int i = 0; i < s->n; i++) bias[i] = 0.5f * (float)(i % 5 - 2);
  int b = s->bias_input ? gb_value(g, "bias_in", CS_DTYPE_F32, 1, bs) : cs_graph_add_const(g, "b", CS_DTYPE_F32, 1, bs, bias);
  free(bias);
  int y0, id;
  if (s->gemm) {
    int in[3] = {dq, wdq, b};
    y0 = gb_node(g, CS_OP_GEMM, "fc", 3, in, CS_DTYPE_F32, 2, ys, &id);
    cs_node_set_attr_int(cs_graph_node(g, id), "transB", s->trans_b);
    if (s->alpha2) cs_node_add_attr(cs_graph_node(g, id), "alpha", CS_ATTR_FLOAT)->f = 2.0f;
  } else {
    int in[2] = {dq, wdq};
    if (s->reshape) { /* x [M, K] → [1, M, K]: aten.linear's 3-D input */
      int64_t x3[3] = {1, s->m, s->k}, shp[1] = {3}, sd[3] = {1, s->m, s->k};
      int rin[2] = {dq, cs_graph_add_const(g, "shape_in", CS_DTYPE_I64, 1, shp, sd)};
      in[0] = gb_node(g, CS_OP_RESHAPE, "reshape_in", 2, rin, CS_DTYPE_F32, 3, x3, NULL);
    }
    int64_t ys3[3] = {1, s->m, s->n};
    int mm = gb_node(g, CS_OP_MATMUL, "fc", 2, in, CS_DTYPE_F32, s->reshape ? 3 : 2, s->reshape ? ys3 : ys, &id);
    if (s->reshape) {
      int64_t shp[1] = {2}, sd[2] = {s->m, s->n};
      int rin[2] = {mm, cs_graph_add_const(g, "shape_out", CS_DTYPE_I64, 1, shp, sd)};
      mm = gb_node(g, CS_OP_RESHAPE, "reshape_out", 2, rin, CS_DTYPE_F32, 2, ys, NULL);
    }
    int ain[2] = {mm, b};
    y0 = gb_node(g, CS_OP_ADD, "bias_add", 2, ain, CS_DTYPE_F32, 2, ys, NULL);
  }
  int y = tail_i16(g, y0, s->act, O_SCALE * 4, s->o_zp);
  int ins[2] = {x, b};
  gb_set_io(g, s->bias_input ? 2 : 1, ins, 1, &y);
  return g;
}

static void fc_offload(fc_spec s, const char *what) {
  expect_offload(fc_graph(&s), fc_graph(&s), CS_OP_K_MMALIB_FC_I16, s.act ? CS_OP_K_C7X_RESIDUAL_ADD_I16 : -1, "fc",
                 O_SCALE * 4, 3.0, what);
}

static void fc_decline(fc_spec s, const char *what, const char *rule) {
  expect_decline(fc_graph(&s), pass_fuse_mmalib_qdq_fc_i16, "fc", what, rule);
}

static void test_fc_rules(void) {
  fc_spec s = fc_default();
  fc_offload(s, "Gemm transB=1 K64 N32");
  s = fc_default(); s.trans_b = 0; s.k = 32; s.n = 64;
  fc_offload(s, "Gemm transB=0 (weight transposed)");
  s = fc_default(); s.act = 1;
  fc_offload(s, "Gemm + Relu");
  s = fc_default(); s.gemm = 0; s.trans_b = 0;
  fc_offload(s, "MatMul + Add bias");
  s = fc_default(); s.gemm = 0; s.trans_b = 0; s.reshape = 1;
  fc_offload(s, "Reshape + MatMul + Reshape + Add");
  /* issue 13 item 4: every FC form the int8 pass takes, any M */
  s = fc_default(); s.gemm = 0; s.trans_b = 0; s.transpose = 1;
  fc_offload(s, "PT2E MatMul(DQ(x), Transpose(DQ(w[N,K]))) + Add");
  s = fc_default(); s.gemm = 0; s.trans_b = 0; s.transpose = 1; s.reshape = 1; s.m = 4;
  fc_offload(s, "PT2E 3-D input [1, 4, 64]: M = 4");
  s = fc_default(); s.m = 3;
  fc_offload(s, "Gemm M = 3");
  /* K / N padding (mmalib_fc.c) where the cost rule pays: 16 rows,
   * K 240 -> 256, N 200 -> 224 (int16 tile 32) */
  s = fc_default(); s.m = 16; s.k = 240; s.n = 200;
  fc_offload(s, "FC K 240 N 200 padded, 16 rows");
  s = fc_default(); s.k = 48;
  fc_decline(s, "FC K 48", "K % 32 != 0 (K=48): pad K to 64");
  s = fc_default(); s.n = 40;
  fc_decline(s, "FC N 40", "N % 32 != 0 (N=40): pad N to 64");
  s = fc_default(); s.w_zp = 1;
  fc_decline(s, "FC w_zp 1", "w_zp != 0");
  s = fc_default(); s.x_zp = -2;
  fc_decline(s, "FC d_zp -2", "d_zp != 0");
  s = fc_default(); s.o_zp = 9;
  fc_decline(s, "FC o_zp 9", "o_zp != 0");
  s = fc_default(); s.x_const = 1;
  fc_decline(s, "FC constant data", "constant");
  s = fc_default(); s.alpha2 = 1;
  fc_decline(s, "FC alpha 2", "not a standard transpose");
  s = fc_default(); s.bias_input = 1;
  fc_decline(s, "FC bias input", "bias is not a compile-time constant");
  s = fc_default(); s.act = 2;
  fc_decline(s, "FC clip(0,1)", "neither none nor ReLU");
  /* the consumed bias Add leaves no report entry of its own */
  s = fc_default(); s.gemm = 0; s.trans_b = 0;
  {
    cs_graph *g = fc_graph(&s);
    cs_target t;
    CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t) == CS_OK);
    CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
    const cs_offload_report *r = &g->offload;
    CHECK_MSG(r->n == 1 && entry_of(g, "fc") && entry_of(g, "fc")->kernel[0], "%d entries", r->n);
    cs_graph_free(g);
  }
}

/* ---- residual add ----------------------------------------------------- */

/* y = Q([Relu](Add(DQ(a), DQ(b)))), operands swapped with `swap`. */
static cs_graph *add_graph(int swap, int relu, int broadcast, int const_b, int a_zp, int b_zp, int o_zp) {
  cs_graph *g = cs_graph_new("add16");
  int64_t s[4] = {1, 4, 5, 5}, sb[4] = {1, 4, 1, 1};
  int a = gb_value(g, "a", CS_DTYPE_F32, 4, s), b = gb_value(g, "b", CS_DTYPE_F32, 4, broadcast ? sb : s);
  int qa = gb_q(g, "qa", a, gb_scalar_f32(g, "sa", 1e-4f), scalar_i16(g, "za", (int16_t)a_zp));
  int qb;
  if (const_b) {
    int16_t bd[100];
    for (int i = 0; i < 100; i++) bd[i] = (int16_t)(i * 300 - 15000);
    qb = cs_graph_add_const(g, "bc", CS_DTYPE_I16, 4, s, bd);
  } else {
    qb = gb_q(g, "qb", b, gb_scalar_f32(g, "sb", 1.5e-4f), scalar_i16(g, "zb", (int16_t)b_zp));
  }
  int da = gb_dq(g, "da", qa, gb_scalar_f32(g, "sa2", 1e-4f), scalar_i16(g, "za2", (int16_t)a_zp));
  int db = gb_dq(g, "db", qb, gb_scalar_f32(g, "sb2", 1.5e-4f), scalar_i16(g, "zb2", (int16_t)b_zp));
  int in[2] = {swap ? db : da, swap ? da : db};
  int y0 = gb_node(g, CS_OP_ADD, "add", 2, in, CS_DTYPE_F32, 4, s, NULL);
  int y = tail_i16(g, y0, relu, 2e-4f, o_zp);
  int ins[2] = {a, b};
  gb_set_io(g, const_b ? 1 : 2, ins, 1, &y);
  return g;
}

static void test_residual_add_rules(void) {
  for (int swap = 0; swap < 2; swap++)
    for (int relu = 0; relu < 2; relu++) {
      char what[64];
      snprintf(what, sizeof what, "add swap=%d relu=%d", swap, relu);
      cs_graph *g = add_graph(swap, relu, 0, 0, 0, 0, 0);
      expect_offload(g, add_graph(swap, relu, 0, 0, 0, 0, 0), CS_OP_K_C7X_RESIDUAL_ADD_I16, -1, "add", 2e-4f, 2.5,
                     what);
    }
  cs_pass_fn p = pass_fuse_int16_residual_add;
  expect_decline(add_graph(0, 0, 1, 0, 0, 0, 0), p, "add", "broadcast add", "broadcasting");
  expect_decline(add_graph(0, 0, 0, 1, 0, 0, 0), p, "add", "constant operand", "ConstReachability");
  expect_decline(add_graph(0, 0, 0, 0, 4, 0, 0), p, "add", "add d_zp 4", "d_zp/skip_zp/o_zp != 0 (4/0/0");
  expect_decline(add_graph(1, 0, 0, 0, 0, 4, 0), p, "add", "add skip_zp 4", "d_zp/skip_zp/o_zp != 0 (4/0/0");
  expect_decline(add_graph(0, 1, 0, 0, 0, 0, -3), p, "add", "add o_zp -3", "(0/0/-3");
  expect_decline(add_graph(0, 2, 0, 0, 0, 0, 0), p, "add", "add clip(0,1)", "neither none nor ReLU");
}

/* ---- the report: one entry per layer, int8 passes' declines replaced --- */

static void test_report_one_entry_per_layer(void) {
  conv_spec s = conv_default();
  cs_graph *g = conv_graph(&s);
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t) == CS_OK);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  const cs_offload_report *r = &g->offload;
  CHECK_MSG(r->n == 1 && !strcmp(r->entries[0].kernel, "mmalib_conv2d_i16"), "%d entries, first '%s' '%s'", r->n,
            r->n ? r->entries[0].kernel : "", r->n ? r->entries[0].reason : "");
  cs_graph_free(g);
  /* an int16 decline replaces the int8 pass's "not int8" */
  s = conv_default(); s.x_zp = 3;
  g = conv_graph(&s);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  r = &g->offload;
  CHECK_MSG(r->n == 1 && strstr(r->entries[0].reason, "d_zp != 0"), "%d entries, first '%s'", r->n,
            r->n ? r->entries[0].reason : "");
  /* and the declined layer still runs, on the generic path */
  CHECK(gb_count_op(g, CS_OP_K_CONV2D_F32) == 1);
  cs_graph_free(g);
}

/* ---- the int16 legalize path ------------------------------------------ */

/* x f32 → Conv(W const, b) → y, or x[M,K] → MatMul/Gemm(B const) → y */
typedef struct legal_spec {
  int conv, m, k, n, cout, groups, sh, sw, dil, batch, trans_b, gemm, weight_input, weight_dq, dq_data, rank3;
} legal_spec;

static legal_spec legal_conv(void) {
  legal_spec s = {1, 0, 0, 0, 32, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0};
  return s;
}

static legal_spec legal_mm(void) {
  legal_spec s = {0, 32, 64, 32, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0};
  return s;
}

static cs_graph *legal_graph(const legal_spec *s) {
  cs_graph *g = cs_graph_new("legal");
  int x, w, y, id;
  float *wd;
  int64_t nw;
  if (s->conv) {
    int cin = 8, h = 9, ho = out_dim(h, 3, s->sh, s->dil, 1), wo = out_dim(h, 3, s->sw, s->dil, 1);
    int64_t xs[4] = {s->batch, cin, h, h}, ws[4] = {s->cout, cin / s->groups, 3, 3}, ys[4] = {s->batch, s->cout, ho, wo};
    int64_t bs[1] = {s->cout};
    x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
    nw = ws[0] * ws[1] * 9;
    wd = malloc(sizeof(float) * (size_t)nw);
    for (int64_t i = 0; i < nw; i++) wd[i] = (float)(sin((double)i * 1.3) * 0.2 * (1 + i / ws[1] / 9 % 4));
    w = cs_graph_add_const(g, "w", CS_DTYPE_F32, 4, ws, wd);
    float bias[256];
    for (int o = 0; o < s->cout; o++) bias[o] = 0.1f * (float)(o % 5 - 2);
    int b = cs_graph_add_const(g, "b", CS_DTYPE_F32, 1, bs, bias);
    int in[3] = {x, w, b};
    y = gb_node(g, CS_OP_CONV, "lconv", 3, in, CS_DTYPE_F32, 4, ys, &id);
    cs_node *cn = cs_graph_node(g, id);
    int64_t pads[4] = {1, 1, 1, 1}, st[2] = {s->sh, s->sw}, dl[2] = {s->dil, s->dil}, ks[2] = {3, 3};
    cs_node_set_attr_ints(cn, "pads", 4, pads);
    cs_node_set_attr_ints(cn, "strides", 2, st);
    cs_node_set_attr_ints(cn, "dilations", 2, dl);
    cs_node_set_attr_ints(cn, "kernel_shape", 2, ks);
    cs_node_set_attr_int(cn, "group", s->groups);
  } else {
    int64_t xs[3] = {s->m, s->k, 1}, ws[2] = {s->trans_b ? s->n : s->k, s->trans_b ? s->k : s->n};
    int64_t ys[3] = {s->m, s->n, 1};
    if (s->rank3) { /* a batch of one: [1, M, K] */
      xs[0] = ys[0] = 1, xs[1] = ys[1] = s->m, xs[2] = s->k, ys[2] = s->n;
    }
    x = gb_value(g, "x", CS_DTYPE_F32, s->rank3 ? 3 : 2, xs);
    nw = (int64_t)s->k * s->n;
    wd = malloc(sizeof(float) * (size_t)nw);
    for (int64_t i = 0; i < nw; i++) wd[i] = (float)(cos((double)i * 0.71) * 0.3);
    if (s->weight_input) {
      w = gb_value(g, "w_in", CS_DTYPE_F32, 2, ws);
    } else if (s->weight_dq) { /* weight-only quantized: DQ(int8 const, per-column) */
      int8_t *q = malloc((size_t)nw);
      for (int64_t i = 0; i < nw; i++) q[i] = (int8_t)nearbyint(wd[i] / 0.3 * 127);
      int qc = cs_graph_add_const(g, "wq", CS_DTYPE_I8, 2, ws, q);
      free(q);
      int8_t z = 0;
      w = gb_dq(g, "w_dq", qc, gb_scalar_f32(g, "w_s", 0.3f / 127), cs_graph_add_const(g, "w_z", CS_DTYPE_I8, 0, NULL, &z));
    } else {
      w = cs_graph_add_const(g, "w", CS_DTYPE_F32, 2, ws, wd);
    }
    int src = x;
    if (s->dq_data) {
      int q = gb_q(g, "q_in", x, gb_scalar_f32(g, "s_in", 0.02f), gb_scalar_i8(g, "z_in", 0));
      src = gb_dq(g, "dq_in", q, gb_scalar_f32(g, "s_in2", 0.02f), gb_scalar_i8(g, "z_in2", 0));
    }
    if (s->gemm) {
      float bias[256];
      int64_t bs[1] = {s->n};
      for (int o = 0; o < s->n; o++) bias[o] = 0.05f * (float)(o % 7 - 3);
      int in[3] = {src, w, cs_graph_add_const(g, "c", CS_DTYPE_F32, 1, bs, bias)};
      y = gb_node(g, CS_OP_GEMM, "lmm", 3, in, CS_DTYPE_F32, 2, ys, &id);
      cs_node_set_attr_int(cs_graph_node(g, id), "transB", s->trans_b);
    } else {
      int in[2] = {src, w};
      y = gb_node(g, CS_OP_MATMUL, "lmm", 2, in, CS_DTYPE_F32, s->rank3 ? 3 : 2, ys, &id);
    }
  }
  free(wd);
  int ins[2] = {x, w};
  gb_set_io(g, s->weight_input ? 2 : 1, ins, 1, &y);
  return g;
}

/* The legalized graph has `op` and runs within `min_db` SQNR of the float
 * lowering (the generic target), on inputs of two very different ranges
 * (the data scale is dynamic). */
static void legal_offload(legal_spec s, cs_op op, double min_db, const char *what) {
  for (int r = 0; r < 2; r++) {
    cs_graph *g1 = legal_graph(&s), *g0 = legal_graph(&s);
    cs_target t1, t0;
    CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t1) == CS_OK);
    cs_target_default(&t0);
    CHECK_MSG(cs_passes_run(g1, &t1, NULL) == CS_OK, "%s: %s", what, cs_error_message());
    CHECK_MSG(gb_count_op(g1, op) == 1, "%s: expected one %s", what, cs_op_name(op));
    const cs_offload_entry *e = entry_of(g1, s.conv ? "lconv" : "lmm");
    CHECK_MSG(e && e->kernel[0], "%s: not reported as offloaded", what);
    CHECK(cs_passes_run(g0, &t0, NULL) == CS_OK);
    float *x = make_input(cs_value_numel(cs_graph_value(g1, g1->inputs[0])), r ? 1e-3 : 40.0);
    const void *in[1] = {x};
    int32_t st1, st0;
    void **b1 = gb_run(g1, in, &st1), **b0 = gb_run(g0, in, &st0);
    CHECK_MSG(st1 == 0 && st0 == 0, "%s: run status %d / %d", what, st1, st0);
    if (st1 == 0 && st0 == 0) {
      const float *y1 = b1[g1->outputs[0]], *y0 = b0[g0->outputs[0]];
      int64_t n = cs_value_numel(cs_graph_value(g1, g1->outputs[0]));
      double sig = 0, err = 0;
      for (int64_t i = 0; i < n; i++) {
        sig += (double)y0[i] * y0[i];
        err += ((double)y1[i] - y0[i]) * ((double)y1[i] - y0[i]);
      }
      double db = 10 * log10(sig / (err > 0 ? err : 1e-300));
      if (getenv("CS_TEST_VERBOSE")) printf("%s (range %d): SQNR %.1f dB\n", what, r, db);
      CHECK_MSG(db >= min_db, "%s (range %d): SQNR %.1f dB < %.0f", what, r, db, min_db);
    }
    gb_free_run(g1, b1);
    gb_free_run(g0, b0);
    free(x);
    cs_graph_free(g1);
    cs_graph_free(g0);
  }
}

static void legal_decline(legal_spec s, const char *what, const char *rule) {
  cs_graph *g = legal_graph(&s);
  expect_decline(g, pass_legalize_mmalib_i16, s.conv ? "lconv" : "lmm", what, rule);
}

static void test_legalize_rules(void) {
  legal_spec s = legal_conv();
  legal_offload(s, CS_OP_K_MMALIB_CONV2D_I16, 50.0, "legalize conv 8->32");
  s = legal_conv(); s.sh = s.sw = 2;
  legal_offload(s, CS_OP_K_MMALIB_CONV2D_I16, 50.0, "legalize conv stride 2");
  s = legal_conv(); s.batch = 2;
  legal_decline(s, "legalize conv N=2", "N != 1");
  s = legal_conv(); s.sw = 2;
  legal_decline(s, "legalize conv stride 1x2", "asymmetric stride");
  s = legal_conv(); s.dil = 2;
  legal_decline(s, "legalize conv dilation 2", "dilation != 1");
  s = legal_conv(); s.groups = 2;
  legal_decline(s, "legalize conv groups 2", "groups != 1");
  s = legal_conv(); s.cout = 40;
  legal_decline(s, "legalize conv C_out 40", "C_out % 32 != 0 (C_out=40)");
  s = legal_mm();
  legal_offload(s, CS_OP_K_MMALIB_MATMUL_I16, 50.0, "legalize matmul 32x64x32");
  s = legal_mm(); s.gemm = 1; s.trans_b = 1; s.n = 64;
  legal_offload(s, CS_OP_K_MMALIB_MATMUL_I16, 50.0, "legalize Gemm transB + bias");
  s = legal_mm(); s.weight_dq = 1;
  legal_offload(s, CS_OP_K_MMALIB_MATMUL_I16, 50.0, "legalize matmul, weight-only DQ(int8)");
  s = legal_mm(); s.m = 16;
  legal_decline(s, "legalize matmul M 16", "dims not multiples of 32 (M=16");
  legal_decline(s, "legalize matmul M 16 (remedy)", ": pad them to 32, ");
  s = legal_mm(); s.k = 40;
  legal_decline(s, "legalize matmul K 40", "K=40");
  s = legal_mm(); s.n = 48;
  legal_decline(s, "legalize matmul N 48", "N=48");
  s = legal_mm(); s.rank3 = 1;
  legal_decline(s, "legalize batched matmul", "not 2-D");
  s = legal_mm(); s.weight_input = 1;
  legal_decline(s, "legalize matmul of two activations", "not a compile-time constant");
  /* a QDQ pattern (DQ data) is not this path's: untouched, not reported */
  s = legal_mm(); s.dq_data = 1;
  {
    cs_graph *g = legal_graph(&s);
    int live = live_nodes(g);
    cs_target t;
    CHECK(cs_target_parse("c_static_lib -mmalib=1 -l2-budget=0", &t) == CS_OK);
    cs_mmalib_report_reset(g);
    CHECK(pass_legalize_mmalib_i16(g, &t) == CS_OK);
    CHECK(live_nodes(g) == live && g->offload.n == 0);
    cs_graph_free(g);
  }
  /* the generic target keeps float ops float */
  s = legal_mm();
  {
    cs_graph *g = legal_graph(&s);
    cs_target t;
    cs_target_default(&t);
    CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
    CHECK(gb_count_op(g, CS_OP_K_MMALIB_MATMUL_I16) == 0 && gb_count_op(g, CS_OP_K_MATMUL_F32) == 1);
    cs_graph_free(g);
  }
}

/* ---- the generic target is untouched ---------------------------------- */

static void test_generic_target_has_no_offload(void) {
  conv_spec s = conv_default();
  cs_graph *g = conv_graph(&s);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_MMALIB_CONV2D_I16) == 0 && gb_count_op(g, CS_OP_K_CONV2D_F32) == 1);
  cs_graph_free(g);
}

int main(void) {
  test_conv_rules();
  test_depthwise_rules();
  test_folding();
  test_fc_rules();
  test_residual_add_rules();
  test_report_one_entry_per_layer();
  test_legalize_rules();
  test_generic_target_has_no_offload();
  UNIT_MAIN_END();
}
