/*
 * FoldClampLUT: a clamp table after a requantizing int8 kernel folds into
 * the kernel's output bounds with the same output bytes (conv, matmul, add;
 * a table that is a clamp only on the producer's range), and each rule
 * declines: not a clamp, a second reader, a producer without requant, the
 * producer's output a graph output, a different quantization. Through the
 * whole pipeline, PT2E's Clip(0, 6) between Q/DQ pairs leaves no table (on
 * the C7x with MMALIB too: the exact path's core requantization clamps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_graph.h"
#include "passes/pass_list.h"
#include "passes/passes.h"
#include "target.h"
#include "unit.h"

enum { CIN = 4, COUT = 6, H = 5, W = 5 };

static int clamp_i(int q, int lo, int hi) { return q < lo ? lo : q > hi ? hi : q; }

/* lut[q + 128] = clamp(q, lo, hi) */
static int clamp_table(cs_graph *g, const char *name, int lo, int hi) {
  int8_t t[256];
  for (int q = -128; q < 128; q++) t[q + 128] = (int8_t)clamp_i(q, lo, hi);
  int64_t s[1] = {256};
  return cs_graph_add_const(g, name, CS_DTYPE_I8, 1, s, t);
}

static void set_quant(cs_graph *g, int v, float s, int32_t zp) {
  cs_value_set_quant(cs_graph_value(g, v), -1, 1, &s, &zp);
}

/* y = k_lut_i8(table, x) */
static int lut_node(cs_graph *g, const char *name, int table, int x, int *node) {
  const cs_value *xv = cs_graph_value(g, x);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, xv->shape, sizeof shape);
  int in[2] = {table, x};
  int id;
  int y = gb_node(g, CS_OP_K_LUT_I8, name, 2, in, CS_DTYPE_I8, xv->rank, shape, &id);
  cs_graph_node(g, id)->k.lut.n = (int32_t)cs_value_numel(cs_graph_value(g, x));
  if (node) *node = id;
  return y;
}

typedef struct chain {
  cs_graph *g;
  int x;              /* graph input */
  int producer, lut;  /* node ids */
  int mid, y;         /* producer's output, LUT's output */
} chain;

/* x → conv → mid → LUT(clamp [lo, hi]) → y, mid and y quantized alike. */
static chain conv_chain(int lo, int hi) {
  chain c;
  c.g = cs_graph_new("conv_clamp");
  int64_t xs[4] = {1, CIN, H, W}, ws[4] = {COUT, CIN, 3, 3};
  c.x = gb_value(c.g, "x", CS_DTYPE_I8, 4, xs);
  c.mid = kg_conv(c.g, "conv", c.x, kg_const_i8(c.g, "w", 4, ws, 17), COUT, 3, 1, &c.producer);
  c.y = lut_node(c.g, "relu6", clamp_table(c.g, "relu6.lut", lo, hi), c.mid, &c.lut);
  set_quant(c.g, c.mid, 0.05f, -5);
  set_quant(c.g, c.y, 0.05f, -5);
  gb_set_io(c.g, 1, &c.x, 1, &c.y);
  return c;
}

static int8_t input_x[CIN * H * W];

/* The pass folds c.lut: one node fewer, the producer writes y with bounds
 * [lo, hi], and the graph computes the same bytes as before. */
static void expect_folded(chain c, int32_t lo, int32_t hi, const char *what) {
  const void *in[1] = {input_x};
  size_t n0, n1;
  uint8_t *before = kg_run_output(c.g, in, &n0);
  CHECK_MSG(pass_fold_clamp_lut(c.g, NULL) == CS_OK && cs_graph_verify(c.g) == CS_OK, "%s: %s", what,
            cs_error_message());
  const cs_node *p = cs_graph_node(c.g, c.producer);
  CHECK_MSG(cs_graph_node(c.g, c.lut)->dead, "%s: the table must fold", what);
  CHECK_MSG(p->outputs[0] == c.y && cs_graph_value(c.g, c.y)->producer == c.producer, "%s: producer writes y", what);
  int32_t pmin = 0, pmax = 0;
  if (p->op == CS_OP_K_CONV2D_I8) pmin = p->k.conv.rq.out_min, pmax = p->k.conv.rq.out_max;
  if (p->op == CS_OP_K_MATMUL_I8) pmin = p->k.matmul.rq.out_min, pmax = p->k.matmul.rq.out_max;
  if (p->op == CS_OP_K_ADD_I8) pmin = p->k.add.y_min, pmax = p->k.add.y_max;
  CHECK_MSG(pmin == lo && pmax == hi, "%s: bounds [%d, %d], expected [%d, %d]", what, (int)pmin, (int)pmax, (int)lo,
            (int)hi);
  CHECK_MSG(strstr(p->origin, "relu6") != NULL, "%s: origin '%s' names the table", what, p->origin);
  uint8_t *after = kg_run_output(c.g, in, &n1);
  CHECK_MSG(before && after && n0 == n1 && memcmp(before, after, n0) == 0, "%s: outputs differ", what);
  free(before);
  free(after);
  cs_graph_free(c.g);
}

/* The pass leaves the graph as it was (same nodes, same bounds). */
static void expect_declined(chain c, const char *rule) {
  const cs_node *p = cs_graph_node(c.g, c.producer);
  cs_kparams k0 = p->k;
  int n_nodes = c.g->n_nodes;
  CHECK_MSG(pass_fold_clamp_lut(c.g, NULL) == CS_OK, "%s: %s", rule, cs_error_message());
  p = cs_graph_node(c.g, c.producer);
  CHECK_MSG(!cs_graph_node(c.g, c.lut)->dead && c.g->n_nodes == n_nodes && p->outputs[0] == c.mid &&
                memcmp(&p->k, &k0, sizeof k0) == 0,
            "%s: must decline", rule);
  cs_graph_free(c.g);
}

static void test_conv_match(void) {
  expect_folded(conv_chain(-5, 115), -5, 115, "conv relu6");
  /* The identity table folds too (the bounds stay). */
  expect_folded(conv_chain(-128, 127), -128, 127, "conv identity");
}

/* A table that is a clamp only on the producer's range [-20, 127] (a fused
 * Relu): entries below -20 are never read. */
static void test_clamp_on_range(void) {
  chain c = conv_chain(-5, 100);
  cs_graph_node(c.g, c.producer)->k.conv.rq.out_min = -20;
  int8_t *t = cs_graph_value(c.g, cs_graph_node(c.g, c.lut)->inputs[0])->data;
  for (int q = -128; q < -20; q++) t[q + 128] = (int8_t)(q / 3);
  expect_folded(c, -5, 100, "clamp on the producer's range");

  c = conv_chain(-5, 100);
  cs_graph_node(c.g, c.producer)->k.conv.rq.out_min = -20;
  t = cs_graph_value(c.g, cs_graph_node(c.g, c.lut)->inputs[0])->data;
  t[-10 + 128] = -9; /* inside the range: not a clamp */
  expect_declined(c, "not a clamp on the producer's range");
}

static void test_matmul_match(void) {
  chain c;
  c.g = cs_graph_new("mm_clamp");
  int64_t xs[2] = {2, 50}, ws[2] = {7, 50}; /* x: the CIN·H·W bytes of input_x */
  c.x = gb_value(c.g, "x", CS_DTYPE_I8, 2, xs);
  c.mid = kg_matmul(c.g, "mm", c.x, kg_const_i8(c.g, "w", 2, ws, 5), &c.producer);
  c.y = lut_node(c.g, "relu6", clamp_table(c.g, "relu6.lut", 2, 90), c.mid, &c.lut);
  gb_set_io(c.g, 1, &c.x, 1, &c.y);
  expect_folded(c, 2, 90, "matmul");
}

static void test_add_match(void) {
  chain c;
  c.g = cs_graph_new("add_clamp");
  int64_t xs[4] = {1, CIN, H, W};
  c.x = gb_value(c.g, "x", CS_DTYPE_I8, 4, xs);
  int in[2] = {c.x, c.x};
  c.mid = gb_node(c.g, CS_OP_K_ADD_I8, "add", 2, in, CS_DTYPE_I8, 4, xs, &c.producer);
  tidsp_add_i8_params *p = &cs_graph_node(c.g, c.producer)->k.add;
  memset(p, 0, sizeof *p);
  p->bc.rank = 4;
  for (int d = 0; d < 4; d++) p->bc.shape[d] = (int32_t)xs[d];
  p->bc.a_stride[3] = p->bc.b_stride[3] = 1;
  p->bc.a_stride[2] = p->bc.b_stride[2] = W;
  p->bc.a_stride[1] = p->bc.b_stride[1] = H * W;
  p->bc.a_stride[0] = p->bc.b_stride[0] = CIN * H * W;
  p->kind = TIDSP_REQUANT_FLOAT;
  p->ra = 0.7f, p->rb = 0.6f, p->f = 3.0f;
  p->y_min = -128, p->y_max = 127;
  c.y = lut_node(c.g, "relu6", clamp_table(c.g, "relu6.lut", -3, 60), c.mid, &c.lut);
  gb_set_io(c.g, 1, &c.x, 1, &c.y);
  expect_folded(c, -3, 60, "add");
}

static void test_declines(void) {
  /* Not a clamp: a rescale table. */
  chain c = conv_chain(-5, 115);
  int8_t *t = cs_graph_value(c.g, cs_graph_node(c.g, c.lut)->inputs[0])->data;
  for (int q = -128; q < 128; q++) t[q + 128] = (int8_t)(q / 2);
  expect_declined(c, "not a clamp");

  /* Two readers of the producer's output. */
  c = conv_chain(-5, 115);
  int y2 = lut_node(c.g, "other", clamp_table(c.g, "other.lut", -128, 127), c.mid, NULL);
  int outs[2] = {c.y, y2};
  free(c.g->inputs);
  free(c.g->outputs);
  gb_set_io(c.g, 1, &c.x, 2, outs);
  expect_declined(c, "two consumers");

  /* The producer's output is a graph output. */
  c = conv_chain(-5, 115);
  int outs2[2] = {c.y, c.mid};
  free(c.g->inputs);
  free(c.g->outputs);
  gb_set_io(c.g, 1, &c.x, 2, outs2);
  expect_declined(c, "graph output");

  /* Different quantization of the table's input and output. */
  c = conv_chain(-5, 115);
  set_quant(c.g, c.y, 0.05f, -4);
  expect_declined(c, "different quantization");

  /* A producer without requantization (max pool). */
  c.g = cs_graph_new("pool_clamp");
  int64_t xs[4] = {1, CIN, H, W};
  c.x = gb_value(c.g, "x", CS_DTYPE_I8, 4, xs);
  c.mid = gb_node(c.g, CS_OP_K_MAXPOOL_I8, "pool", 1, &c.x, CS_DTYPE_I8, 4, xs, &c.producer);
  tidsp_pool2d_params *pp = &cs_graph_node(c.g, c.producer)->k.pool;
  memset(pp, 0, sizeof *pp);
  pp->n = 1, pp->c = CIN, pp->h_in = pp->h_out = H, pp->w_in = pp->w_out = W;
  pp->k_h = pp->k_w = pp->stride_h = pp->stride_w = pp->dil_h = pp->dil_w = 1;
  c.y = lut_node(c.g, "relu6", clamp_table(c.g, "relu6.lut", 0, 100), c.mid, &c.lut);
  gb_set_io(c.g, 1, &c.x, 1, &c.y);
  expect_declined(c, "producer without requant");

  /* A graph input feeding the table directly. */
  c.g = cs_graph_new("input_clamp");
  c.x = gb_value(c.g, "x", CS_DTYPE_I8, 4, xs);
  c.mid = c.x;
  c.producer = -1;
  c.y = lut_node(c.g, "relu6", clamp_table(c.g, "relu6.lut", 0, 100), c.x, &c.lut);
  gb_set_io(c.g, 1, &c.x, 1, &c.y);
  int n_nodes = c.g->n_nodes;
  CHECK(pass_fold_clamp_lut(c.g, NULL) == CS_OK && !cs_graph_node(c.g, c.lut)->dead && c.g->n_nodes == n_nodes);
  cs_graph_free(c.g);
}

/* x → Q → DQ → Conv(DQ(w)) → Q → DQ → Clip(0, 6) → Q → DQ, the Q/DQ
 * pairs around the Clip alike (PT2E's ReLU6): no table is left, and the
 * conv clamps to [zp, zp + 6/s]. */
/* PT2E's Clip(0, 6) between Q/DQ pairs through the whole pipeline: no table
 * is left, the kernel that writes the conv's int8 output (`writer`) clamps.
 * On the C7x with MMALIB that is the exact path's core requantization
 * (c_out a multiple of the int16 tile, so no channel padding). */
static void check_pipeline(const char *target, int c_out, cs_op writer) {
  cs_graph *g = cs_graph_new("relu6");
  const float s = 0.05f;
  const int8_t zp = -10;
  int64_t xs[4] = {1, CIN, H, W}, ws[4] = {c_out, CIN, 3, 3}, ys[4] = {1, c_out, H, W};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int q = gb_q(g, "q_in", x, gb_scalar_f32(g, "s_in", 0.04f), gb_scalar_i8(g, "z_in", 3));
  int dq = gb_dq(g, "dq_in", q, gb_scalar_f32(g, "s_in2", 0.04f), gb_scalar_i8(g, "z_in2", 3));
  int w = kg_const_i8(g, "w", 4, ws, 7);
  int wdq = gb_dq(g, "dq_w", w, gb_scalar_f32(g, "w_s", 0.002f), gb_scalar_i8(g, "w_z", 0));
  int cin[2] = {dq, wdq}, conv_id;
  int cy = gb_node(g, CS_OP_CONV, "conv", 2, cin, CS_DTYPE_F32, 4, ys, &conv_id);
  int64_t pads[4] = {1, 1, 1, 1};
  cs_node_set_attr_ints(cs_graph_node(g, conv_id), "pads", 4, pads);
  int q1 = gb_q(g, "q1", cy, gb_scalar_f32(g, "s1", s), gb_scalar_i8(g, "z1", zp));
  int d1 = gb_dq(g, "d1", q1, gb_scalar_f32(g, "s1b", s), gb_scalar_i8(g, "z1b", zp));
  int clip_in[3] = {d1, gb_scalar_f32(g, "lo", 0.0f), gb_scalar_f32(g, "hi", 6.0f)};
  int r = gb_node(g, CS_OP_CLIP, "hardtanh", 3, clip_in, CS_DTYPE_F32, 4, ys, NULL);
  int q2 = gb_q(g, "q2", r, gb_scalar_f32(g, "s2", s), gb_scalar_i8(g, "z2", zp));
  int y = gb_dq(g, "d2", q2, gb_scalar_f32(g, "s2b", s), gb_scalar_i8(g, "z2b", zp));
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  CHECK_MSG(cs_target_parse(target, &t) == CS_OK, "%s: %s", target, cs_error_message());
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s: %s", target, cs_error_message());
  CHECK_MSG(gb_count_op(g, CS_OP_K_LUT_I8) == 0, "%s: a table is left", target);
  int k = gb_find_op(g, writer);
  CHECK_MSG(k >= 0, "%s: no %s", target, cs_op_name(writer));
  if (k >= 0) {
    const tidsp_requant_params *rq = &cs_graph_node(g, k)->k.conv.rq;
    CHECK_MSG(rq->out_min == zp && rq->out_max == zp + 120, "%s: bounds [%d, %d]", target, (int)rq->out_min,
              (int)rq->out_max);
  }
  cs_graph_free(g);
}

static void test_pipeline(void) {
  check_pipeline("c_static_lib", COUT, CS_OP_K_CONV2D_I8);
  check_pipeline("c_static_lib -mcpu=c7x -mmalib=1 -constants-byte-alignment=64", 32, CS_OP_K_MMALIB_EXACT_REQUANT);
}

int main(void) {
  kg_fill_i8(input_x, (int64_t)sizeof input_x, 99);
  test_conv_match();
  test_clamp_on_range();
  test_matmul_match();
  test_add_match();
  test_declines();
  test_pipeline();
  UNIT_MAIN_END();
}
