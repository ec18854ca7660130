/*
 * FuseConvAddF32: Add(Conv(x, W, B), S) becomes Conv(x, W, B, S) where ONNX
 * Runtime's NchwcTransformer fuses them (both Add operands NCHWc tensors of
 * one shape, the Conv's output read by the Add alone, input 0 tried
 * first) or a Conv it keeps in NCHW has a bias (ConvAddActivationFusion),
 * and is declined everywhere else: for an NCHWc conv, S a graph input or
 * the output of an op ORT runs in NCHW; a broadcast operand, the Conv's
 * output read twice or a graph output, an activation between the Conv and
 * the Add. ORT's conditions depend on MLAS's block (16 with AVX-512F, 8
 * with AVX2): the pass fuses where either block's ORT does and records
 * the blocks that did (CS_ORT_SUM_ATTR; at the others ORT runs the Add
 * after the Conv). tests/e2e/test_conv_mlas_vs_ort.py checks the values
 * against ORT.
 */
#include <stdio.h>
#include <string.h>

#include "graph_build.h"
#include "passes/match/ort_nchwc.h"
#include "passes/pass_list.h"
#include "unit.h"

enum { C = 16, HW = 4 };
#define BOTH (TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8)

static float w_[C * C], b_[C];

typedef struct g_ctx {
  cs_graph *g;
  int x, t1;      /* the input, conv c1's output (NCHWc) */
  int64_t xs[4];
} g_ctx;

static int conv_b(g_ctx *k, const char *name, int in, int groups, int const_w, int with_bias, int *id) {
  int64_t ws[4] = {C, C / groups, 1, 1}, bs[1] = {C};
  char wn[32], bn[32];
  snprintf(wn, sizeof wn, "w_%s", name);
  snprintf(bn, sizeof bn, "b_%s", name);
  int w = const_w ? cs_graph_add_const(k->g, wn, CS_DTYPE_F32, 4, ws, w_) : gb_value(k->g, wn, CS_DTYPE_F32, 4, ws);
  int ins[3] = {in, w, cs_graph_add_const(k->g, bn, CS_DTYPE_F32, 1, bs, b_)};
  int y = gb_node(k->g, CS_OP_CONV, name, with_bias ? 3 : 2, ins, CS_DTYPE_F32, 4, k->xs, id);
  if (groups != 1) cs_node_set_attr_int(cs_graph_node(k->g, *id), "group", groups);
  return y;
}

static int conv(g_ctx *k, const char *name, int in, int groups, int const_w, int *id) {
  return conv_b(k, name, in, groups, const_w, 1, id);
}

static int add(g_ctx *k, int a, int b, int *id) {
  int in[2] = {a, b};
  return gb_node(k->g, CS_OP_ADD, "add", 2, in, CS_DTYPE_F32, 4, k->xs, id);
}

static void start(g_ctx *k) {
  int64_t xs[4] = {1, C, HW, HW};
  int c1;
  memcpy(k->xs, xs, sizeof xs);
  k->g = cs_graph_new("conv_add");
  k->x = gb_value(k->g, "x", CS_DTYPE_F32, 4, xs);
  k->t1 = conv(k, "c1", k->x, 1, 1, &c1);
}

/* The pass fused Add `a` into conv `c` with sum s, ORT at the blocks of
 * `blocks` (TIDSP_MLAS_BLOCK* bits) into the conv. */
static void check_fused(g_ctx *k, int c, int a, int s, int32_t blocks, const char *what) {
  int y = cs_graph_node(k->g, a)->outputs[0];
  CHECK_MSG(pass_fuse_conv_add_f32(k->g, NULL) == CS_OK, "%s: %s", what, cs_error_message());
  const cs_node *n = cs_graph_node(k->g, c);
  CHECK_MSG(cs_graph_node(k->g, a)->dead && n->n_inputs == 4 && n->inputs[3] == s && n->outputs[0] == y &&
                cs_graph_value(k->g, y)->producer == c,
            "%s: fused", what);
  CHECK_MSG(n->origin && strstr(n->origin, "add"), "%s: origin", what);
  CHECK_MSG(cs_ort_sum_blocks(n) == blocks, "%s: sum inside at blocks %d, want %d", what, (int)cs_ort_sum_blocks(n),
            (int)blocks);
  CHECK_MSG(cs_graph_check_uses(k->g) == CS_OK, "%s: %s", what, cs_error_message());
}

static void check_declined(g_ctx *k, int a, const char *what) {
  CHECK_MSG(pass_fuse_conv_add_f32(k->g, NULL) == CS_OK, "%s: %s", what, cs_error_message());
  CHECK_MSG(!cs_graph_node(k->g, a)->dead && gb_count_op(k->g, CS_OP_ADD) >= 1, "%s: declined", what);
  for (int i = 0; i < k->g->n_nodes; i++) {
    const cs_node *n = cs_graph_node(k->g, i);
    CHECK_MSG(n->dead || n->op != CS_OP_CONV || n->n_inputs <= 3, "%s: no conv took a sum", what);
  }
}

static void finish(g_ctx *k, int n_in, const int *ins, int n_out, const int *outs) {
  gb_set_io(k->g, n_in, ins, n_out, outs);
}

static void test_fuse(void) {
  g_ctx k;
  int c2, c3, a, a2;
  /* residual: Add(c2(t1), t1) */
  start(&k);
  int t2 = conv(&k, "c2", k.t1, 1, 1, &c2), y = add(&k, t2, k.t1, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_fused(&k, c2, a, k.t1, BOTH, "residual");
  cs_graph_free(k.g);
  /* the conv as the Add's second operand */
  start(&k);
  t2 = conv(&k, "c2", k.t1, 1, 1, &c2);
  y = add(&k, k.t1, t2, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_fused(&k, c2, a, k.t1, BOTH, "conv second");
  cs_graph_free(k.g);
  /* two single-use convs: input 0's takes the sum, as ORT */
  start(&k);
  t2 = conv(&k, "c2", k.t1, 1, 1, &c2);
  int t3 = conv(&k, "c3", k.t1, 1, 1, &c3);
  y = add(&k, t2, t3, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_fused(&k, c2, a, t3, BOTH, "two convs");
  cs_graph_free(k.g);
  /* depthwise, and a sum that is a fused Add's output (chain) */
  start(&k);
  t2 = conv(&k, "c2", k.t1, C, 1, &c2);
  int s = add(&k, t2, k.t1, &a);
  t3 = conv(&k, "c3", s, 1, 1, &c3);
  y = add(&k, t3, s, &a2);
  finish(&k, 1, &k.x, 1, &y);
  check_fused(&k, c3, a2, s, BOTH, "chain");
  CHECK(cs_graph_node(k.g, a)->dead && cs_graph_node(k.g, c2)->n_inputs == 4);
  cs_graph_free(k.g);
  /* the sum is a Relu of a single-use conv (ORT's FusedConv) */
  start(&k);
  int r = gb_node(k.g, CS_OP_RELU, "relu", 1, &k.t1, CS_DTYPE_F32, 4, k.xs, NULL);
  t2 = conv(&k, "c2", r, 1, 1, &c2);
  y = add(&k, t2, r, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_fused(&k, c2, a, r, BOTH, "fused relu operand");
  cs_graph_free(k.g);
}

/* Convs ORT keeps in NCHW: ConvAddActivationFusion (FusedConv's Z) takes
 * any same-shape operand when the conv has a bias. */
static void test_fuse_nchw_conv(void) {
  g_ctx k;
  int c2, a;
  /* weights that are a graph input, the operand a graph input */
  start(&k);
  int x2 = gb_value(k.g, "x2", CS_DTYPE_F32, 4, k.xs);
  int t2 = conv(&k, "c2", k.t1, 1, 0, &c2), y = add(&k, x2, t2, &a);
  int ins[2] = {k.x, x2};
  finish(&k, 2, ins, 1, &y);
  check_fused(&k, c2, a, x2, BOTH, "runtime weights, graph input operand");
  cs_graph_free(k.g);
  /* grouped, 8 channels per group: no whole NCHWc blocks */
  start(&k);
  t2 = conv(&k, "c2", k.t1, 2, 1, &c2);
  y = add(&k, t2, k.t1, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_fused(&k, c2, a, k.t1, BOTH, "grouped, part blocks");
  cs_graph_free(k.g);
}

/* A squeeze-excitation-like conv on a pooled tensor: ORT keeps a
 * GlobalAveragePool of an NCHWc tensor (whole blocks) in NCHWc, so an Add
 * of it fuses; of a tensor ORT runs in NCHW (a Neg) it does not. */
static void test_fuse_pooled(void) {
  for (int neg = 0; neg <= 1; neg++) {
    g_ctx k;
    int c2, a;
    int64_t ps[4] = {1, C, 1, 1}, ws[4] = {C, C, 1, 1}, bs[1] = {C};
    start(&k);
    int src = neg ? gb_node(k.g, CS_OP_NEG, "neg", 1, &k.t1, CS_DTYPE_F32, 4, k.xs, NULL) : k.t1;
    int p = gb_node(k.g, CS_OP_GLOBAL_AVERAGE_POOL, "gap", 1, &src, CS_DTYPE_F32, 4, ps, NULL);
    int ins[3] = {p, cs_graph_add_const(k.g, "w_c2", CS_DTYPE_F32, 4, ws, w_),
                  cs_graph_add_const(k.g, "b_c2", CS_DTYPE_F32, 1, bs, b_)};
    int t2 = gb_node(k.g, CS_OP_CONV, "c2", 3, ins, CS_DTYPE_F32, 4, ps, &c2);
    int in2[2] = {t2, p};
    int y = gb_node(k.g, CS_OP_ADD, "add", 2, in2, CS_DTYPE_F32, 4, ps, &a);
    finish(&k, 1, &k.x, 1, &y);
    if (neg)
      check_declined(&k, a, "pooled Neg");
    else
      check_fused(&k, c2, a, p, BOTH, "pooled NCHWc tensor");
    cs_graph_free(k.g);
  }
}

static void test_decline(void) {
  g_ctx k;
  int c2, a;
  /* the operand is a graph input: not NCHWc in ORT */
  start(&k);
  int x2 = gb_value(k.g, "x2", CS_DTYPE_F32, 4, k.xs);
  int t2 = conv(&k, "c2", k.t1, 1, 1, &c2), y = add(&k, t2, x2, &a);
  int ins[2] = {k.x, x2};
  finish(&k, 2, ins, 1, &y);
  check_declined(&k, a, "graph input operand");
  cs_graph_free(k.g);
  /* the operand is a Neg's output: ORT runs it in NCHW */
  start(&k);
  int ng = gb_node(k.g, CS_OP_NEG, "neg", 1, &k.t1, CS_DTYPE_F32, 4, k.xs, NULL);
  t2 = conv(&k, "c2", ng, 1, 1, &c2);
  y = add(&k, t2, ng, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_declined(&k, a, "Neg operand");
  cs_graph_free(k.g);
  /* a broadcast operand [1,C,1,1] */
  start(&k);
  int64_t bs[4] = {1, C, 1, 1};
  t2 = conv(&k, "c2", k.t1, 1, 1, &c2);
  int pool = gb_node(k.g, CS_OP_GLOBAL_AVERAGE_POOL, "gap", 1, &k.t1, CS_DTYPE_F32, 4, bs, NULL);
  y = add(&k, t2, pool, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_declined(&k, a, "broadcast operand");
  cs_graph_free(k.g);
  /* the conv's output is also a graph output */
  start(&k);
  t2 = conv(&k, "c2", k.t1, 1, 1, &c2);
  y = add(&k, t2, k.t1, &a);
  int outs[2] = {y, t2};
  finish(&k, 1, &k.x, 2, outs);
  check_declined(&k, a, "conv output is a graph output");
  cs_graph_free(k.g);
  /* the conv's output has another reader */
  start(&k);
  t2 = conv(&k, "c2", k.t1, 1, 1, &c2);
  y = add(&k, t2, k.t1, &a);
  int min[2] = {y, t2};
  int z = gb_node(k.g, CS_OP_MUL, "mul", 2, min, CS_DTYPE_F32, 4, k.xs, NULL);
  finish(&k, 1, &k.x, 1, &z);
  check_declined(&k, a, "conv output read twice");
  cs_graph_free(k.g);
  /* an activation between the conv and the Add */
  start(&k);
  t2 = conv(&k, "c2", k.t1, 1, 1, &c2);
  int r = gb_node(k.g, CS_OP_RELU, "relu", 1, &t2, CS_DTYPE_F32, 4, k.xs, NULL);
  y = add(&k, r, k.t1, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_declined(&k, a, "activation between");
  cs_graph_free(k.g);
}

/* Adds ORT fuses at one MLAS block only (measured on ORT 1.30, AVX2 +
 * FMA3: tests/e2e/test_conv_mlas_vs_ort.py, BY_BLOCK). */
static void test_fuse_one_block(void) {
  g_ctx k;
  int c1, c2, a;
  /* a grouped conv (8 channels per group) without a bias: NCHW at 16,
   * where ConvAddActivationFusion skips it; whole NCHWc blocks at 8 */
  start(&k);
  int t2 = conv_b(&k, "c2", k.t1, 2, 1, 0, &c2), y = add(&k, t2, k.t1, &a);
  finish(&k, 1, &k.x, 1, &y);
  check_fused(&k, c2, a, k.t1, TIDSP_MLAS_BLOCK8, "grouped conv without a bias");
  cs_graph_free(k.g);
  /* the operand a conv on 10 input channels: NCHW input to an NCHWc conv
   * at 16, a plain NCHW conv at 8, where the Add then runs after c2 */
  int64_t xs[4] = {1, 10, HW, HW}, ws[4] = {C, 10, 1, 1}, bs[1] = {C};
  memcpy(k.xs, (int64_t[4]){1, C, HW, HW}, sizeof k.xs);
  k.g = cs_graph_new("conv_add");
  k.x = gb_value(k.g, "x", CS_DTYPE_F32, 4, xs);
  int in1[3] = {k.x, cs_graph_add_const(k.g, "w_c1", CS_DTYPE_F32, 4, ws, w_),
                cs_graph_add_const(k.g, "b_c1", CS_DTYPE_F32, 1, bs, b_)};
  k.t1 = gb_node(k.g, CS_OP_CONV, "c1", 3, in1, CS_DTYPE_F32, 4, k.xs, &c1);
  t2 = conv(&k, "c2", k.t1, 1, 1, &c2);
  y = add(&k, t2, k.t1, &a);
  int r = gb_node(k.g, CS_OP_RELU, "relu", 1, &y, CS_DTYPE_F32, 4, k.xs, NULL);
  finish(&k, 1, &k.x, 1, &r);
  check_fused(&k, c2, a, k.t1, TIDSP_MLAS_BLOCK16, "operand NCHWc at 16 only");
  /* at 8 the Relu reads ORT's Add, an NCHW tensor; at 16 the NCHWc conv */
  CHECK(cs_ort_nchwc_value(k.g, r, CS_ORT_NCHWC_BLOCK) && !cs_ort_nchwc_value(k.g, r, CS_ORT_NCHWC_BLOCK_AVX2));
  cs_graph_free(k.g);
}

int main(void) {
  for (int i = 0; i < C * C; i++) w_[i] = (float)((i * 37) % 19 - 9) * 0.0371f;
  for (int o = 0; o < C; o++) b_[o] = 0.113f * (float)(o - 2);
  test_fuse();
  test_fuse_nchw_conv();
  test_fuse_pooled();
  test_decline();
  test_fuse_one_block();
  UNIT_MAIN_END();
}
