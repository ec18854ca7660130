/*
 * Pass tests: each fusion matches its pattern (and the folded constants
 * equal a direct float computation) and declines, leaving the float path,
 * when one eligibility rule fails.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "quant/quant.h"
#include "passes/match/pattern.h"
#include "unit.h"

enum { CIN = 4, COUT = 8, H = 6, W = 6 };

typedef struct conv_case {
  int weights_are_input;  /* rule: weights must be constant */
  int zp_per_channel;     /* rule: weight zero points must be equal */
  int fan_out;            /* rule: the chain may not fan out */
  int dead_channel;       /* one channel's weight scale ~1e-17 (trained nets) */
} conv_case;

static float wscale[COUT];

/* x → Q → DQ → Conv(DQ(w), b) → Relu → Q → DQ → y */
static cs_graph *conv_graph(conv_case c, int *x_out) {
  cs_graph *g = cs_graph_new("conv");
  int64_t xs[4] = {1, CIN, H, W}, ws[4] = {COUT, CIN, 3, 3}, ys[4] = {1, COUT, H, W};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int q = gb_q(g, "q_in", x, gb_scalar_f32(g, "s_in", 0.05f), gb_scalar_i8(g, "z_in", 3));
  int dq = gb_dq(g, "dq_in", q, gb_scalar_f32(g, "s_in2", 0.05f), gb_scalar_i8(g, "z_in2", 3));
  int8_t wdata[COUT * CIN * 9];
  for (int i = 0; i < COUT * CIN * 9; i++) wdata[i] = (int8_t)((i * 37) % 255 - 127);
  int w = c.weights_are_input ? gb_value(g, "w", CS_DTYPE_I8, 4, ws)
                              : cs_graph_add_const(g, "w", CS_DTYPE_I8, 4, ws, wdata);
  int64_t cs[1] = {COUT};
  int8_t wzp[COUT] = {0};
  for (int o = 0; o < COUT; o++) {
    wscale[o] = c.dead_channel && o == 3 ? 2.6e-17f : 0.002f * (float)(o + 1);
    if (c.zp_per_channel) wzp[o] = (int8_t)o;
  }
  int wsv = cs_graph_add_const(g, "w_scale", CS_DTYPE_F32, 1, cs, wscale);
  int wzv = cs_graph_add_const(g, "w_zp", CS_DTYPE_I8, 1, cs, wzp);
  int wdq = gb_dq(g, "dq_w", w, wsv, wzv);
  cs_node_set_attr_int(cs_graph_node(g, cs_graph_value(g, wdq)->producer), "axis", 0);
  float bias[COUT];
  for (int o = 0; o < COUT; o++) bias[o] = 0.01f * (float)(o - 3);
  int b = cs_graph_add_const(g, "b", CS_DTYPE_F32, 1, cs, bias);
  int conv_id;
  int cin[3] = {dq, wdq, b};
  int cy = gb_node(g, CS_OP_CONV, "conv", 3, cin, CS_DTYPE_F32, 4, ys, &conv_id);
  int64_t pads[4] = {1, 1, 1, 1};
  cs_node_set_attr_ints(cs_graph_node(g, conv_id), "pads", 4, pads);
  int r = gb_node(g, CS_OP_RELU, "relu", 1, &cy, CS_DTYPE_F32, 4, ys, NULL);
  int q2 = gb_q(g, "q_out", r, gb_scalar_f32(g, "s_out", 0.1f), gb_scalar_i8(g, "z_out", -128));
  int y = gb_dq(g, "dq_out", q2, gb_scalar_f32(g, "s_out2", 0.1f), gb_scalar_i8(g, "z_out2", -128));
  int ins[2] = {x, w};
  int outs[2] = {y, cy};
  gb_set_io(g, c.weights_are_input ? 2 : 1, ins, c.fan_out ? 2 : 1, outs);
  *x_out = x;
  return g;
}

static void test_conv_match(void) {
  conv_case c = {0, 0, 0, 0};
  int x;
  cs_graph *g = conv_graph(c, &x);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_CONV2D_I8) == 1);
  CHECK(gb_count_op(g, CS_OP_K_CONV2D_F32) == 0);
  CHECK(gb_count_op(g, CS_OP_K_QUANTIZE) == 1);
  CHECK(gb_count_op(g, CS_OP_K_DEQUANTIZE) == 1);
  int k = gb_find_op(g, CS_OP_K_CONV2D_I8);
  CHECK(k >= 0);
  if (k < 0) { cs_graph_free(g); return; }
  const cs_node *n = cs_graph_node(g, k);
  const tidsp_conv2d_params *p = &n->k.conv;
  CHECK(p->x_zp == 3 && p->w_zp == 0);
  CHECK(p->rq.out_zp == -128 && p->rq.out_min == -128 && p->rq.out_max == 127);
  CHECK(p->pad_top == 1 && p->pad_left == 1 && p->h_out == H && p->c_out == COUT);
  /* Folded constants against a direct float computation. */
  const float *mult = cs_graph_value(g, n->inputs[3])->data;
  const int32_t *b = cs_graph_value(g, n->inputs[2])->data;
  for (int o = 0; o < COUT; o++) {
    float expect = (0.05f * wscale[o]) / 0.1f;
    CHECK_MSG(mult[o] == expect, "channel %d: multiplier %a != %a", o, (double)mult[o], (double)expect);
    double bq = (0.01 * (o - 3)) / (0.05 * wscale[o]);
    CHECK_MSG(fabs(b[o] - bq) <= 0.5 + 1e-6, "channel %d: bias %d vs %f", o, b[o], bq);
  }
  cs_graph_free(g);
}

static void test_conv_q31(void) {
  conv_case c = {0, 0, 0, 0};
  int x;
  cs_graph *g = conv_graph(c, &x);
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -requant=q31", &t) == CS_OK);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_CONV2D_I8);
  CHECK(k >= 0);
  if (k >= 0) {
    const cs_node *n = cs_graph_node(g, k);
    CHECK(n->k.conv.rq.kind == TIDSP_REQUANT_Q31);
    const int32_t *blob = cs_graph_value(g, n->inputs[3])->data;
    /* The Q31 pair is the FLOAT form's multiplier exactly (kernels.h). */
    for (int o = 0; o < COUT; o++) {
      float m = (0.05f * wscale[o]) / 0.1f;
      CHECK(blob[o] >= (1 << 23) && blob[o] < (1 << 24));
      CHECK((float)ldexp(blob[o], -blob[COUT + o]) == m);
    }
  }
  cs_graph_free(g);
}

/* A dead channel's multiplier (~1e-17, below Q31's 2^-62 shift range)
 * rounds every accumulator to 0 in float; Q31 encodes it as 0 and the
 * layer still fuses, with the same outputs as -requant=float. */
static void test_conv_q31_dead_channel(void) {
  conv_case c = {0, 0, 0, 1};
  float xin[CIN * H * W];
  for (int i = 0; i < CIN * H * W; i++) xin[i] = (float)((i * 29) % 97 - 48) * 0.06f;
  int8_t *y[2] = {NULL, NULL};
  const char *targets[2] = {"c_static_lib -requant=float", "c_static_lib -requant=q31"};
  for (int k = 0; k < 2; k++) {
    int x;
    cs_graph *g = conv_graph(c, &x);
    cs_target t;
    CHECK(cs_target_parse(targets[k], &t) == CS_OK);
    t.pack_weights = 0;
    CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
    int conv = gb_find_op(g, CS_OP_K_CONV2D_I8);
    CHECK_MSG(conv >= 0 && gb_count_op(g, CS_OP_K_CONV2D_F32) == 0, "%s: the conv fuses", targets[k]);
    if (conv >= 0 && k == 1) {
      const int32_t *blob = cs_graph_value(g, cs_graph_node(g, conv)->inputs[3])->data;
      CHECK(blob[3] == 0 && blob[COUT + 3] == 0);
    }
    int32_t st;
    const void *ins[1] = {xin};
    void **buf = gb_run(g, ins, &st);
    CHECK(st == 0);
    int out = cs_graph_node(g, conv >= 0 ? conv : 0)->outputs[0];
    y[k] = malloc(COUT * H * W);
    if (buf[out]) memcpy(y[k], buf[out], COUT * H * W);
    gb_free_run(g, buf);
    cs_graph_free(g);
  }
  CHECK(!memcmp(y[0], y[1], COUT * H * W));
  for (int i = 3 * H * W; i < 4 * H * W; i++) CHECK(y[1][i] == -128 || y[1][i] == y[0][i]);
  free(y[0]);
  free(y[1]);
}

/* Q(Gemm(DQ(x), DQ(w), bias)): with alpha != 1 and a bias ORT 1.30 does
 * not fuse (QGemm would scale its int32 bias by alpha too): the float path
 * stays. alpha alone, or a bias alone, fuse. */
static void test_gemm_alpha(float alpha, int bias, int fuse) {
  cs_graph *g = cs_graph_new("gemm");
  int64_t xs[2] = {1, 16}, ws[2] = {8, 16}, ys[2] = {1, 8}, n8[1] = {8};
  int x = gb_value(g, "x", CS_DTYPE_F32, 2, xs);
  int q = gb_q(g, "q", x, gb_scalar_f32(g, "s", 0.05f), gb_scalar_i8(g, "z", 1));
  int dq = gb_dq(g, "dq", q, gb_scalar_f32(g, "s2", 0.05f), gb_scalar_i8(g, "z2", 1));
  int8_t w[8 * 16];
  for (int i = 0; i < 8 * 16; i++) w[i] = (int8_t)((i * 37) % 200 - 100);
  int wdq = gb_dq(g, "dq_w", cs_graph_add_const(g, "w", CS_DTYPE_I8, 2, ws, w), gb_scalar_f32(g, "ws", 0.01f),
                  gb_scalar_i8(g, "wz", 0));
  int32_t b[8] = {100, -200, 300, 0, 5, -6, 7, 800};
  int bdq = gb_dq(g, "dq_b", cs_graph_add_const(g, "b", CS_DTYPE_I32, 1, n8, b), gb_scalar_f32(g, "bs", 0.0005f),
                  cs_graph_add_const(g, "bz", CS_DTYPE_I32, 0, NULL, (int32_t[]){0}));
  int in[3] = {dq, wdq, bdq}, id;
  int y = gb_node(g, CS_OP_GEMM, "gemm", bias ? 3 : 2, in, CS_DTYPE_F32, 2, ys, &id);
  cs_node_set_attr_int(cs_graph_node(g, id), "transB", 1);
  cs_node_add_attr(cs_graph_node(g, id), "alpha", CS_ATTR_FLOAT)->f = alpha;
  int q2 = gb_q(g, "qy", y, gb_scalar_f32(g, "ys", 0.1f), gb_scalar_i8(g, "yz", -3));
  int out = gb_dq(g, "dqy", q2, gb_scalar_f32(g, "ys2", 0.1f), gb_scalar_i8(g, "yz2", -3));
  gb_set_io(g, 1, &x, 1, &out);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  CHECK_MSG((gb_count_op(g, CS_OP_K_MATMUL_I8) == 1) == fuse && (gb_count_op(g, CS_OP_K_MATMUL_F32) == 1) == !fuse,
            "Gemm alpha %g bias %d: %s", (double)alpha, bias, fuse ? "fused" : "float path");
  cs_graph_free(g);
}

static void test_conv_decline(conv_case c, const char *rule) {
  int x;
  cs_graph *g = conv_graph(c, &x);
  cs_target t;
  cs_target_default(&t);
  cs_status st = cs_passes_run(g, &t, NULL);
  CHECK_MSG(st == CS_OK, "%s: %s", rule, cs_error_message());
  CHECK_MSG(gb_count_op(g, CS_OP_K_CONV2D_I8) == 0, "%s: must decline", rule);
  CHECK_MSG(gb_count_op(g, CS_OP_K_CONV2D_F32) == 1, "%s: float path expected", rule);
  cs_graph_free(g);
}

/* Q(Add(DQ(a), DQ(b))) → k_add_i8 with ORT's uint8-domain constants. */
static void test_add_match(void) {
  cs_graph *g = cs_graph_new("add");
  int64_t s[4] = {1, 2, 3, 3};
  int a = gb_value(g, "a", CS_DTYPE_F32, 4, s), b = gb_value(g, "b", CS_DTYPE_F32, 4, s);
  int qa = gb_q(g, "qa", a, gb_scalar_f32(g, "sa", 0.02f), gb_scalar_i8(g, "za", -5));
  int qb = gb_q(g, "qb", b, gb_scalar_f32(g, "sb", 0.03f), gb_scalar_i8(g, "zb", 7));
  int da = gb_dq(g, "da", qa, gb_scalar_f32(g, "sa2", 0.02f), gb_scalar_i8(g, "za2", -5));
  int db = gb_dq(g, "db", qb, gb_scalar_f32(g, "sb2", 0.03f), gb_scalar_i8(g, "zb2", 7));
  int in[2] = {da, db};
  int sum = gb_node(g, CS_OP_ADD, "add", 2, in, CS_DTYPE_F32, 4, s, NULL);
  int qy = gb_q(g, "qy", sum, gb_scalar_f32(g, "sy", 0.04f), gb_scalar_i8(g, "zy", 1));
  int y = gb_dq(g, "dy", qy, gb_scalar_f32(g, "sy2", 0.04f), gb_scalar_i8(g, "zy2", 1));
  int ins[2] = {a, b};
  gb_set_io(g, 2, ins, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_ADD_I8);
  CHECK(k >= 0 && gb_count_op(g, CS_OP_K_BINARY_F32) == 0);
  if (k >= 0) {
    const tidsp_add_i8_params *p = &cs_graph_node(g, k)->k.add;
    float ra = 0.02f / 0.04f, rb = 0.03f / 0.04f;
    CHECK(p->ra == ra && p->rb == rb);
    /* int8 model: ORT computes on the int8 values (domain offset 0) */
    CHECK(p->domain_offset == 0);
    CHECK(p->f == 1.0f - fmaf(ra, -5.0f, rb * 7.0f));
    CHECK(p->a_zp == -5 && p->b_zp == 7 && p->y_zp == 1);
  }
  cs_graph_free(g);
}

/* Q(Add(op(DQ(a)), DQ(b))) with op a Gather, a Flatten or a Reshape: ORT's
 * QDQ propagation crosses the Reshape (QLinearAdd) but not the other two
 * (a float Add), so -ort-exact=1 (the default) fuses the int8 Add behind
 * the Reshape only; -ort-exact=0 behind each. */
static void test_add_behind_movement(cs_op op, int ort_exact) {
  cs_graph *g = cs_graph_new("add_movement");
  int64_t sa[3] = {1, 4, 8}, s[2] = {1, 32}, shp[1] = {2}, shape_data[2] = {1, 32};
  if (op == CS_OP_GATHER) s[0] = 4, s[1] = 8; /* a[0] */
  int a = gb_value(g, "a", CS_DTYPE_I8, 3, sa), b = gb_value(g, "b", CS_DTYPE_I8, 2, s);
  int da = gb_dq(g, "da", a, gb_scalar_f32(g, "sa", 0.02f), gb_scalar_i8(g, "za", -5));
  int db = gb_dq(g, "db", b, gb_scalar_f32(g, "sb", 0.03f), gb_scalar_i8(g, "zb", 7));
  int min[2] = {da, cs_graph_add_const(g, "shape", CS_DTYPE_I64, 1, shp, shape_data)};
  int m = op == CS_OP_GATHER ? gb_gather0(g, "move", da, 0, 2, s)
                             : gb_node(g, op, "move", op == CS_OP_RESHAPE ? 2 : 1, min, CS_DTYPE_F32, 2, s, NULL);
  int in[2] = {m, db};
  int sum = gb_node(g, CS_OP_ADD, "add", 2, in, CS_DTYPE_F32, 2, s, NULL);
  int qy = gb_q(g, "qy", sum, gb_scalar_f32(g, "sy", 0.04f), gb_scalar_i8(g, "zy", 1));
  int ins[2] = {a, b};
  gb_set_io(g, 2, ins, 1, &qy);
  cs_target t;
  CHECK(cs_target_parse(ort_exact ? "c_static_lib" : "c_static_lib -ort-exact=0", &t) == CS_OK);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  CHECK_MSG(gb_count_op(g, CS_OP_K_ADD_I8) == (!ort_exact || op == CS_OP_RESHAPE), "%s, ort-exact %d: %d int8 adds",
            cs_op_name(op), ort_exact, gb_count_op(g, CS_OP_K_ADD_I8));
  cs_graph_free(g);
}

/* DQ → Reshape → Q with equal parameters: the reshape runs on int8 and no
 * quantize/dequantize pair remains between. Different parameters: a LUT. */
static void test_transparent_round_trip(int same_params) {
  cs_graph *g = cs_graph_new("reshape");
  int64_t s[4] = {1, 2, 2, 2}, s2[2] = {1, 8}, shp[1] = {2};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, s);
  int q = gb_q(g, "q", x, gb_scalar_f32(g, "s", 0.1f), gb_scalar_i8(g, "z", 0));
  int dq = gb_dq(g, "dq", q, gb_scalar_f32(g, "s2", 0.1f), gb_scalar_i8(g, "z2", 0));
  int64_t shape_data[2] = {1, 8};
  int sh = cs_graph_add_const(g, "shape", CS_DTYPE_I64, 1, shp, shape_data);
  int rin[2] = {dq, sh};
  int r = gb_node(g, CS_OP_RESHAPE, "reshape", 2, rin, CS_DTYPE_F32, 2, s2, NULL);
  int q2 = gb_q(g, "q2", r, gb_scalar_f32(g, "s3", same_params ? 0.1f : 0.2f), gb_scalar_i8(g, "z3", 0));
  int y = gb_dq(g, "dq2", q2, gb_scalar_f32(g, "s4", same_params ? 0.1f : 0.2f), gb_scalar_i8(g, "z4", 0));
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_QUANTIZE) == 1);
  CHECK(gb_count_op(g, CS_OP_K_DEQUANTIZE) == 1);
  CHECK(gb_count_op(g, CS_OP_K_COPY) == 1);
  CHECK(gb_count_op(g, CS_OP_K_LUT_I8) == (same_params ? 0 : 1));
  int k = gb_find_op(g, CS_OP_K_COPY);
  if (k >= 0) CHECK(cs_graph_value(g, cs_graph_node(g, k)->inputs[0])->dtype == CS_DTYPE_I8);
  /* Numbers: the int path equals Q2(DQ(Q(x))). */
  float xin[8] = {-1.0f, -0.26f, 0.0f, 0.04f, 0.15f, 0.35f, 1.23f, 20.0f}, yout[8];
  const void *inputs[1] = {xin};
  int32_t st;
  void **buf = gb_run(g, inputs, &st);
  CHECK(st == 0);
  memcpy(yout, buf[g->outputs[0]], sizeof yout);
  for (int i = 0; i < 8; i++) {
    int32_t q1 = cs_quantize_one(xin[i], 0.1f, 0, -128, 127);
    float s_out = same_params ? 0.1f : 0.2f;
    int32_t qq = cs_quantize_one(cs_dequantize_one(q1, 0.1f, 0), s_out, 0, -128, 127);
    CHECK_MSG(yout[i] == cs_dequantize_one(qq, s_out, 0), "element %d: %g", i, (double)yout[i]);
  }
  gb_free_run(g, buf);
  cs_graph_free(g);
}

/* Q(HardSwish(DQ(x))) → one LUT equal to the float path, entry by entry. */
static void test_activation_lut(void) {
  cs_graph *g = cs_graph_new("hswish");
  int64_t s[1] = {256};
  int x = gb_value(g, "x", CS_DTYPE_F32, 1, s);
  int q = gb_q(g, "q", x, gb_scalar_f32(g, "s", 0.05f), gb_scalar_i8(g, "z", -10));
  int dq = gb_dq(g, "dq", q, gb_scalar_f32(g, "s2", 0.05f), gb_scalar_i8(g, "z2", -10));
  int h = gb_node(g, CS_OP_HARD_SWISH, "hswish", 1, &dq, CS_DTYPE_F32, 1, s, NULL);
  int q2 = gb_q(g, "q2", h, gb_scalar_f32(g, "s3", 0.03f), gb_scalar_i8(g, "z3", -100));
  int y = gb_dq(g, "dq2", q2, gb_scalar_f32(g, "s4", 0.03f), gb_scalar_i8(g, "z4", -100));
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_LUT_I8);
  CHECK(k >= 0 && gb_count_op(g, CS_OP_K_UNARY_F32) == 0);
  if (k >= 0) {
    const int8_t *lut = cs_graph_value(g, cs_graph_node(g, k)->inputs[0])->data;
    for (int qv = -128; qv < 128; qv++) {
      float xf = (float)(qv + 10) * 0.05f;
      float hs = xf * 1.0f / 6.0f + 0.5f;
      hs = hs < 0 ? 0 : (hs > 1 ? 1 : hs);
      int32_t e = cs_quantize_one(xf * hs, 0.03f, -100, -128, 127);
      CHECK_MSG(lut[qv + 128] == e, "q=%d: lut %d expected %d", qv, lut[qv + 128], e);
    }
  }
  cs_graph_free(g);
}

/* A float Add with a dequantized constant: the DQ is folded at compile
 * time (ConstReachability), only the float add runs. */
static void test_fold_constant(void) {
  cs_graph *g = cs_graph_new("fold");
  int64_t s[1] = {4};
  int x = gb_value(g, "x", CS_DTYPE_F32, 1, s);
  int8_t c[4] = {1, 2, 3, 4};
  int cv = cs_graph_add_const(g, "c", CS_DTYPE_I8, 1, s, c);
  int dq = gb_dq(g, "dq", cv, gb_scalar_f32(g, "s", 0.5f), gb_scalar_i8(g, "z", 1));
  int in[2] = {x, dq};
  int y = gb_node(g, CS_OP_ADD, "add", 2, in, CS_DTYPE_F32, 1, s, NULL);
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_DEQUANTIZE) == 0);
  CHECK(gb_count_op(g, CS_OP_K_BINARY_F32) == 1);
  float xin[4] = {1, 1, 1, 1};
  const void *inputs[1] = {xin};
  int32_t st;
  void **buf = gb_run(g, inputs, &st);
  const float *yo = buf[g->outputs[0]];
  CHECK(st == 0 && yo[0] == 1.0f && yo[3] == 2.5f);
  gb_free_run(g, buf);
  cs_graph_free(g);
}

/* Q(MatMul(DQ(a), DQ(b))) with two runtime operands: a k_batch_matmul_i8
 * with ORT's multiplier fl(fl(as·bs)/ys), b broadcast over a's batch; a
 * product that is also a graph output (fan-out) stays on the float path. */
static void test_batch_matmul(int fuse) {
  cs_graph *g = cs_graph_new("bmm");
  int64_t sa[4] = {1, 2, 5, 8}, sb[4] = {1, 1, 8, 3}, sy[4] = {1, 2, 5, 3};
  int a = gb_value(g, "a", CS_DTYPE_F32, 4, sa);
  int b = gb_value(g, "b", CS_DTYPE_F32, 4, sb);
  int qa = gb_q(g, "qa", a, gb_scalar_f32(g, "sa", 0.02f), gb_scalar_i8(g, "za", -5));
  int qb = gb_q(g, "qb", b, gb_scalar_f32(g, "sb", 0.03f), gb_scalar_i8(g, "zb", 7));
  int da = gb_dq(g, "da", qa, gb_scalar_f32(g, "sa2", 0.02f), gb_scalar_i8(g, "za2", -5));
  int db = gb_dq(g, "db", qb, gb_scalar_f32(g, "sb2", 0.03f), gb_scalar_i8(g, "zb2", 7));
  int in[2] = {da, db};
  int mm = gb_node(g, CS_OP_MATMUL, "matmul", 2, in, CS_DTYPE_F32, 4, sy, NULL);
  int qy = gb_q(g, "qy", mm, gb_scalar_f32(g, "sy", 0.5f), gb_scalar_i8(g, "zy", 2));
  int y = gb_dq(g, "dy", qy, gb_scalar_f32(g, "sy2", 0.5f), gb_scalar_i8(g, "zy2", 2));
  int ins[2] = {a, b}, outs[2] = {y, mm};
  gb_set_io(g, 2, ins, fuse ? 1 : 2, outs);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_BATCH_MATMUL_I8);
  CHECK_MSG((k >= 0) == fuse && gb_count_op(g, CS_OP_K_MATMUL_F32) == !fuse, "fuse %d", fuse);
  if (k >= 0) {
    const tidsp_batch_matmul_i8_params *p = &cs_graph_node(g, k)->k.batch_matmul;
    CHECK(p->batch == 2 && p->m == 5 && p->k == 8 && p->n == 3);
    CHECK(p->a_batch_stride == 40 && p->b_batch_stride == 0);
    /* B [1,1,8,3] is read transposed: a Transpose to [1,1,3,8] was added */
    const cs_value *bt = cs_graph_value(g, cs_graph_node(g, k)->inputs[1]);
    CHECK(bt->rank == 4 && bt->shape[2] == 3 && bt->shape[3] == 8 && gb_count_op(g, CS_OP_K_TRANSPOSE) == 1);
    CHECK(p->a_zp == -5 && p->b_zp == 7 && p->rq.out_zp == 2);
    const cs_value *rq = cs_graph_value(g, cs_graph_node(g, k)->inputs[2]);
    CHECK(rq->data && ((const float *)rq->data)[0] == (0.02f * 0.03f) / 0.5f);
  }
  cs_graph_free(g);
}

/* Q(Softmax(DQ(x))) → k_softmax_i8 with ORT's table and floor(1/ys); a
 * per-axis output quantization declines (float softmax). */
static void test_softmax_i8(int per_tensor) {
  cs_graph *g = cs_graph_new("softmax");
  int64_t s[3] = {1, 4, 16};
  int x = gb_value(g, "x", CS_DTYPE_F32, 3, s);
  int q = gb_q(g, "q", x, gb_scalar_f32(g, "s", 0.1f), gb_scalar_i8(g, "z", 3));
  int dq = gb_dq(g, "dq", q, gb_scalar_f32(g, "s2", 0.1f), gb_scalar_i8(g, "z2", 3));
  int sm = gb_node(g, CS_OP_SOFTMAX, "softmax", 1, &dq, CS_DTYPE_F32, 3, s, NULL);
  int ys, yz;
  if (per_tensor) {
    ys = gb_scalar_f32(g, "ys", 1.0f / 256.0f);
    yz = gb_scalar_i8(g, "yz", -128);
  } else {
    int64_t c[1] = {4};
    float scales[4] = {1.0f / 256, 1.0f / 256, 1.0f / 256, 1.0f / 256};
    int8_t zps[4] = {-128, -128, -128, -128};
    ys = cs_add_const_named(g, "ys", "v", CS_DTYPE_F32, 1, c, scales);
    yz = cs_add_const_named(g, "yz", "v", CS_DTYPE_I8, 1, c, zps);
  }
  int qy = gb_q(g, "qy", sm, ys, yz);
  if (!per_tensor) cs_node_set_attr_int(cs_graph_node(g, cs_graph_value(g, qy)->producer), "axis", 1);
  int y = gb_dq(g, "dy", qy, gb_scalar_f32(g, "ys2", 1.0f / 256.0f), gb_scalar_i8(g, "yz2", -128));
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_SOFTMAX_I8);
  CHECK_MSG((k >= 0) == per_tensor, "per_tensor %d", per_tensor);
  CHECK(gb_count_op(g, CS_OP_K_SOFTMAX_F32) == !per_tensor);
  if (k >= 0) {
    const tidsp_softmax_i8_params *p = &cs_graph_node(g, k)->k.softmax_i8;
    CHECK(p->outer == 4 && p->axis_len == 16 && p->inner == 1);
    CHECK(p->y_recip == 256.0f && p->y_zp == -128);
    const float *table = cs_graph_value(g, cs_graph_node(g, k)->inputs[0])->data;
    /* ratios of neighbouring entries are exp(x_scale) */
    CHECK(table && fabs(table[255] / table[254] - exp(0.1f)) < 1e-5);
    /* and the shift is ORT's: its log() there is the float overload */
    double shift = ((double)logf(FLT_MAX / 16.0f) - 5.0) / (double)0.1f;
    for (int j = 0; table && j < 256; j++)
      CHECK(table[j] == (float)exp(((double)j - 255.0 + shift) * (double)0.1f));
  }
  cs_graph_free(g);
}

/* Q(LayerNormalization(DQ(x), scale, bias)) → one k_layer_norm_i8; when
 * the Mean output is read too, the float path stays (and computes it). */
static void test_layer_norm_i8(int fuse) {
  cs_graph *g = cs_graph_new("ln");
  int64_t s[3] = {1, 4, 16}, c[1] = {16}, st[3] = {1, 4, 1};
  float scale[16], bias[16];
  for (int i = 0; i < 16; i++) scale[i] = 1.0f + 0.01f * (float)i, bias[i] = 0.1f * (float)(i % 3);
  int x = gb_value(g, "x", CS_DTYPE_F32, 3, s);
  int q = gb_q(g, "q", x, gb_scalar_f32(g, "s", 0.1f), gb_scalar_i8(g, "z", 3));
  int dq = gb_dq(g, "dq", q, gb_scalar_f32(g, "s2", 0.1f), gb_scalar_i8(g, "z2", 3));
  int in[3] = {dq, cs_graph_add_const(g, "gamma", CS_DTYPE_F32, 1, c, scale),
               cs_graph_add_const(g, "beta", CS_DTYPE_F32, 1, c, bias)};
  int id;
  int ln = gb_node(g, CS_OP_LAYER_NORMALIZATION, "ln", 3, in, CS_DTYPE_F32, 3, s, &id);
  int mean = gb_value(g, "mean", CS_DTYPE_F32, 3, st);
  cs_node *n = cs_graph_node(g, id);
  n->outputs = realloc(n->outputs, 2 * sizeof(int));
  n->outputs[1] = mean;
  n->n_outputs = 2;
  cs_graph_value(g, mean)->producer = id;
  int qy = gb_q(g, "qy", ln, gb_scalar_f32(g, "ys", 0.05f), gb_scalar_i8(g, "yz", -2));
  int y = gb_dq(g, "dy", qy, gb_scalar_f32(g, "ys2", 0.05f), gb_scalar_i8(g, "yz2", -2));
  int outs[2] = {y, mean};
  gb_set_io(g, 1, &x, fuse ? 1 : 2, outs);
  cs_target t;
  cs_target_default(&t);
  cs_status r = cs_passes_run(g, &t, NULL);
  if (fuse) {
    CHECK(r == CS_OK && gb_count_op(g, CS_OP_K_LAYER_NORM_I8) == 1 && gb_count_op(g, CS_OP_K_LAYER_NORM_F32) == 0);
    int k = gb_find_op(g, CS_OP_K_LAYER_NORM_I8);
    if (k >= 0) {
      const tidsp_layer_norm_i8_params *p = &cs_graph_node(g, k)->k.layer_norm_i8;
      CHECK(p->ln.outer == 4 && p->ln.norm == 16 && p->x_zp == 3 && p->y_zp == -2);
      CHECK(p->x_scale == 0.1f && p->y_scale == 0.05f);
    }
  } else {
    /* Declined: the float LayerNorm stays, and the Mean is computed
     * beside it (a ReduceMean). */
    CHECK_MSG(r == CS_OK, "%s", cs_error_message());
    CHECK(gb_count_op(g, CS_OP_K_LAYER_NORM_I8) == 0 && gb_count_op(g, CS_OP_K_LAYER_NORM_F32) == 1 &&
          gb_count_op(g, CS_OP_K_REDUCE_MEAN_F32) == 1);
  }
  cs_graph_free(g);
}

/* DQ → Gelu → Reshape → Q (ORT's quantizer leaves the reshape of a
 * 3-D Linear input between an unquantized Gelu and its Q): one table. */
static void test_activation_lut_through_reshape(void) {
  cs_graph *g = cs_graph_new("gelu_reshape");
  int64_t s[3] = {1, 4, 8}, s2[2] = {4, 8}, shp[1] = {2}, sd[2] = {4, 8};
  int x = gb_value(g, "x", CS_DTYPE_F32, 3, s);
  int q = gb_q(g, "q", x, gb_scalar_f32(g, "s", 0.05f), gb_scalar_i8(g, "z", 1));
  int dq = gb_dq(g, "dq", q, gb_scalar_f32(g, "s2", 0.05f), gb_scalar_i8(g, "z2", 1));
  int ge = gb_node(g, CS_OP_GELU, "gelu", 1, &dq, CS_DTYPE_F32, 3, s, NULL);
  int rin[2] = {ge, cs_graph_add_const(g, "shape", CS_DTYPE_I64, 1, shp, sd)};
  int r = gb_node(g, CS_OP_RESHAPE, "reshape", 2, rin, CS_DTYPE_F32, 2, s2, NULL);
  int qy = gb_q(g, "qy", r, gb_scalar_f32(g, "ys", 0.04f), gb_scalar_i8(g, "yz", -10));
  int y = gb_dq(g, "dy", qy, gb_scalar_f32(g, "ys2", 0.04f), gb_scalar_i8(g, "yz2", -10));
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_LUT_I8) == 1 && gb_count_op(g, CS_OP_K_UNARY_F32) == 0);
  int k = gb_find_op(g, CS_OP_K_LUT_I8);
  CHECK(k >= 0 && cs_graph_node(g, k)->k.lut.n == 32);
  cs_graph_free(g);
}

/* MatMul(act, Transpose(DQ(w[N][K]))) and MatMul(act, DQ(w[K][N])) with
 * float activations: c7x_dequantize_vecmatmul with int8 weights in [N][K]
 * and the scales per column; a nonzero weight zero point declines. */
static void test_dequantize_matmul(int transposed, int w_zp) {
  cs_graph *g = cs_graph_new("wo");
  enum { M = 3, K = 8, N = 5 };
  int64_t xs[2] = {M, K}, ys[2] = {M, N}, wsh[2] = {transposed ? N : K, transposed ? K : N};
  int8_t wd[K * N];
  for (int i = 0; i < K * N; i++) wd[i] = (int8_t)(i * 7 % 23 - 11);
  int x = gb_value(g, "x", CS_DTYPE_F32, 2, xs);
  int w = cs_graph_add_const(g, "w", CS_DTYPE_I8, 2, wsh, wd);
  int wdq = gb_dq(g, "dq_w", w, gb_scalar_f32(g, "w_s", 0.01f), gb_scalar_i8(g, "w_z", (int8_t)w_zp));
  int b = wdq;
  if (transposed) {
    int64_t kn[2] = {K, N}, perm[2] = {1, 0};
    int tid;
    b = gb_node(g, CS_OP_TRANSPOSE, "t", 1, &wdq, CS_DTYPE_F32, 2, kn, &tid);
    cs_node_set_attr_ints(cs_graph_node(g, tid), "perm", 2, perm);
  }
  int in[2] = {x, b};
  int y = gb_node(g, CS_OP_MATMUL, "mm", 2, in, CS_DTYPE_F32, 2, ys, NULL);
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int k = gb_find_op(g, CS_OP_K_DEQUANT_VECMATMUL);
  CHECK_MSG((k >= 0) == (w_zp == 0), "transposed %d w_zp %d", transposed, w_zp);
  if (k >= 0) {
    const cs_node *n = cs_graph_node(g, k);
    const cs_value *wv = cs_graph_value(g, n->inputs[1]), *sv = cs_graph_value(g, n->inputs[2]);
    CHECK(wv->dtype == CS_DTYPE_I8 && wv->shape[0] == N && wv->shape[1] == K);
    const int8_t *wn = wv->data;
    int ok = 1;
    for (int nn = 0; nn < N; nn++)
      for (int kk = 0; kk < K; kk++) ok &= wn[nn * K + kk] == wd[transposed ? nn * K + kk : kk * N + nn];
    CHECK(ok && cs_value_numel(sv) == N && ((const float *)sv->data)[N - 1] == 0.01f);
    int cnt = 0;
    const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
    CHECK(a && cnt == 3 && a[0] == M && a[1] == K && a[2] == N);
  }
  cs_graph_free(g);
}

/* MatMul(Softmax(Add(Div(MatMul(Q, Transpose(K)), √hd), mask)), V) with
 * Q [1,2,1,8], K/V [1,2,6,8]: one c7x_sdpa_decode under -mcpu=c7x; a
 * scale other than 1/√hd, or the host target, keeps the float kernels. */
static void test_sdpa_decode(const char *target, float divisor, int fuse) {
  cs_graph *g = cs_graph_new("sdpa");
  int64_t qs[4] = {1, 2, 1, 8}, ks[4] = {1, 2, 6, 8}, kts[4] = {1, 2, 8, 6}, ss[4] = {1, 2, 1, 6};
  int64_t ms[4] = {1, 1, 1, 6}, perm[4] = {0, 1, 3, 2};
  int q = gb_value(g, "q", CS_DTYPE_F32, 4, qs), k = gb_value(g, "k", CS_DTYPE_F32, 4, ks);
  int v = gb_value(g, "v", CS_DTYPE_F32, 4, ks), mask = gb_value(g, "mask", CS_DTYPE_F32, 4, ms);
  int tid;
  int kt = gb_node(g, CS_OP_TRANSPOSE, "kt", 1, &k, CS_DTYPE_F32, 4, kts, &tid);
  cs_node_set_attr_ints(cs_graph_node(g, tid), "perm", 4, perm);
  int in1[2] = {q, kt};
  int s = gb_node(g, CS_OP_MATMUL, "qk", 2, in1, CS_DTYPE_F32, 4, ss, NULL);
  int in2[2] = {s, gb_scalar_f32(g, "div", divisor)};
  int sd = gb_node(g, CS_OP_DIV, "scale", 2, in2, CS_DTYPE_F32, 4, ss, NULL);
  int in3[2] = {sd, mask};
  int sm = gb_node(g, CS_OP_ADD, "mask_add", 2, in3, CS_DTYPE_F32, 4, ss, NULL);
  int p = gb_node(g, CS_OP_SOFTMAX, "softmax", 1, &sm, CS_DTYPE_F32, 4, ss, NULL);
  int in4[2] = {p, v};
  int o = gb_node(g, CS_OP_MATMUL, "av", 2, in4, CS_DTYPE_F32, 4, qs, NULL);
  int ins[4] = {q, k, v, mask};
  gb_set_io(g, 4, ins, 1, &o);
  cs_target t;
  CHECK(cs_target_parse(target, &t) == CS_OK);
  CHECK(cs_passes_run(g, &t, NULL) == CS_OK);
  int kk = gb_find_op(g, CS_OP_K_SDPA_DECODE);
  CHECK_MSG((kk >= 0) == fuse && gb_count_op(g, CS_OP_K_SOFTMAX_F32) == !fuse, "%s divisor %g", target,
            (double)divisor);
  if (kk >= 0) {
    int cnt = 0;
    const int64_t *a = cs_node_attr_ints(cs_graph_node(g, kk), "mm_args", &cnt);
    CHECK(a && cnt == 4 && a[0] == 2 && a[1] == 2 && a[2] == 8 && a[3] == 6);
    CHECK(cs_graph_node(g, kk)->inputs[1] == k && cs_graph_node(g, kk)->inputs[3] == mask);
  }
  cs_graph_free(g);
}

int main(void) {
  test_sdpa_decode("c_static_lib -mcpu=c7x", sqrtf(8.0f), 1);
  test_sdpa_decode("c_static_lib -mcpu=c7x", 2.0f * sqrtf(8.0f), 0);
  test_sdpa_decode("c_static_lib", sqrtf(8.0f), 0);
  test_dequantize_matmul(1, 0);
  test_dequantize_matmul(0, 0);
  test_dequantize_matmul(1, 3);
  test_activation_lut_through_reshape();
  test_layer_norm_i8(1);
  test_layer_norm_i8(0);
  test_batch_matmul(1);
  test_batch_matmul(0);
  test_softmax_i8(1);
  test_softmax_i8(0);
  test_conv_match();
  test_conv_q31();
  test_conv_q31_dead_channel();
  test_gemm_alpha(1.0f, 1, 1);
  test_gemm_alpha(0.5f, 0, 1);
  test_gemm_alpha(0.5f, 1, 0);
  test_conv_decline((conv_case){1, 0, 0, 0}, "non-constant weights");
  test_conv_decline((conv_case){0, 1, 0, 0}, "per-channel weight zero points differ");
  test_conv_decline((conv_case){0, 0, 1, 0}, "conv output fans out");
  test_add_match();
  for (int e = 0; e < 2; e++) {
    test_add_behind_movement(CS_OP_GATHER, e);
    test_add_behind_movement(CS_OP_FLATTEN, e);
    test_add_behind_movement(CS_OP_RESHAPE, e);
  }
  test_transparent_round_trip(1);
  test_transparent_round_trip(0);
  test_activation_lut();
  test_fold_constant();
  UNIT_MAIN_END();
}
