/*
 * PackWeights (-pack-weights=1): a match per packed kernel (padded bytes,
 * row stride, zero tail, same outputs as the dense graph) and a decline per
 * rule (depthwise, weight not constant, rows already a multiple of 64,
 * target attribute off), plus the attribute's parsing and defaults; the
 * O16 layout of small-map convolutions (kernels.h) and the rules that keep
 * padded rows instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_graph.h"
#include "passes/pass_list.h"
#include "passes/passes.h"
#include "target.h"
#include "unit.h"

enum { H = 5, W = 5 };

/* Padded copy `packed` of dense weight `dense` ([rows][k]) with row stride
 * `stride`: rows copied, tails zero. */
static int packed_ok(const cs_value *dense, const cs_value *packed, int64_t rows, int64_t k, int64_t stride) {
  if (packed->dtype != CS_DTYPE_I8 || packed->rank != 2 || packed->shape[0] != rows ||
      packed->shape[1] != stride || !packed->data)
    return 0;
  const int8_t *d = dense->data, *p = packed->data;
  for (int64_t r = 0; r < rows; r++) {
    if (memcmp(p + r * stride, d + r * k, (size_t)k) != 0) return 0;
    for (int64_t j = k; j < stride; j++)
      if (p[r * stride + j] != 0) return 0;
  }
  return 1;
}

/* x:i8[1][c_in][H][W] → conv(c_out, 3×3, groups) → y */
static cs_graph *conv_graph(int c_in, int c_out, int groups, int weight_is_input, int *conv) {
  cs_graph *g = cs_graph_new("conv");
  int64_t xs[4] = {1, c_in, H, W}, ws[4] = {c_out, c_in / groups, 3, 3};
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int w = weight_is_input ? gb_value(g, "w", CS_DTYPE_I8, 4, ws) : kg_const_i8(g, "w", 4, ws, 11);
  int y = kg_conv(g, "conv", x, w, c_out, 3, groups, conv);
  int ins[2] = {x, w};
  gb_set_io(g, weight_is_input ? 2 : 1, ins, 1, &y);
  return g;
}

static int8_t *input_i8(int64_t n, uint32_t seed) {
  int8_t *x = malloc((size_t)n);
  kg_fill_i8(x, n, seed);
  return x;
}

/* The graph's output before and after PackWeights, byte for byte. */
static int same_output_after_pack(cs_graph *g, const void *const *inputs, int *changed) {
  size_t n0, n1;
  uint8_t *before = kg_run_output(g, inputs, &n0);
  int n_values = g->n_values;
  int ok = pass_pack_weights(g, NULL) == CS_OK && cs_graph_verify(g) == CS_OK;
  *changed = g->n_values != n_values;
  uint8_t *after = kg_run_output(g, inputs, &n1);
  ok = ok && before && after && n0 == n1 && memcmp(before, after, n0) == 0;
  free(before);
  free(after);
  return ok;
}

static void test_conv_match(int c_in, int groups) {
  int c_out = 6, conv;
  cs_graph *g = conv_graph(c_in, c_out, groups, 0, &conv);
  int w = cs_graph_node(g, conv)->inputs[1];
  int8_t *x = input_i8((int64_t)c_in * H * W, 5);
  const void *in[1] = {x};
  int changed = 0;
  CHECK_MSG(same_output_after_pack(g, in, &changed), "conv c_in=%d groups=%d: outputs differ after packing",
            c_in, groups);
  const cs_node *n = cs_graph_node(g, conv);
  int64_t k = (int64_t)(c_in / groups) * 9, stride = (k + 63) / 64 * 64;
  CHECK(changed);
  CHECK_MSG(n->k.conv.w_row_stride == stride, "stride %d, expected %lld", (int)n->k.conv.w_row_stride,
            (long long)stride);
  CHECK(n->inputs[1] != w);
  CHECK(packed_ok(cs_graph_value(g, w), cs_graph_value(g, n->inputs[1]), c_out, k, stride));
  CHECK(strcmp(cs_graph_value(g, n->inputs[1])->name, "w.packed") == 0);
  free(x);
  cs_graph_free(g);
}

static void test_matmul_match(void) {
  cs_graph *g = cs_graph_new("mm");
  int64_t xs[2] = {3, 100}, ws[2] = {10, 100};
  int x = gb_value(g, "x", CS_DTYPE_I8, 2, xs);
  int w = kg_const_i8(g, "w", 2, ws, 23);
  int mm;
  int y = kg_matmul(g, "mm", x, w, &mm);
  gb_set_io(g, 1, &x, 1, &y);
  int8_t *xd = input_i8(3 * 100, 9);
  const void *in[1] = {xd};
  int changed = 0;
  CHECK_MSG(same_output_after_pack(g, in, &changed), "matmul: outputs differ after packing");
  const cs_node *n = cs_graph_node(g, mm);
  CHECK(changed && n->k.matmul.w_row_stride == 128);
  CHECK(packed_ok(cs_graph_value(g, w), cs_graph_value(g, n->inputs[1]), 10, 100, 128));
  free(xd);
  cs_graph_free(g);
}

/* Two convolutions read one weight, which is also a graph output: both
 * share one packed copy, the output keeps the dense original. */
static void test_shared_weight(void) {
  cs_graph *g = cs_graph_new("shared");
  int64_t xs[4] = {1, 4, H, W}, ws[4] = {6, 4, 3, 3};
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int w = kg_const_i8(g, "w", 4, ws, 3);
  int c1, c2;
  int y1 = kg_conv(g, "conv1", x, w, 6, 3, 1, &c1);
  int y2 = kg_conv(g, "conv2", x, w, 6, 3, 1, &c2);
  int outs[3] = {y1, y2, w};
  gb_set_io(g, 1, &x, 3, outs);
  int n_values = g->n_values;
  CHECK(pass_pack_weights(g, NULL) == CS_OK && cs_graph_verify(g) == CS_OK);
  const cs_node *a = cs_graph_node(g, c1), *b = cs_graph_node(g, c2);
  CHECK(g->n_values == n_values + 1); /* one copy */
  CHECK(a->inputs[1] == b->inputs[1] && a->inputs[1] != w);
  CHECK(a->k.conv.w_row_stride == 64 && b->k.conv.w_row_stride == 64);
  CHECK(g->outputs[2] == w && cs_graph_value(g, w)->rank == 4);
  CHECK(packed_ok(cs_graph_value(g, w), cs_graph_value(g, a->inputs[1]), 6, 36, 64));
  cs_graph_free(g);
}

/* A declined node keeps its weight and dense rows, and the graph its
 * values. */
static void expect_declined(cs_graph *g, int node, const char *rule) {
  const cs_node *n = cs_graph_node(g, node);
  int w = n->inputs[1], n_values = g->n_values;
  CHECK_MSG(pass_pack_weights(g, NULL) == CS_OK, "%s: %s", rule, cs_error_message());
  n = cs_graph_node(g, node);
  int stride = n->op == CS_OP_K_CONV2D_I8 ? n->k.conv.w_row_stride : n->k.matmul.w_row_stride;
  CHECK_MSG(stride == 0 && n->inputs[1] == w && g->n_values == n_values, "%s: must decline", rule);
}

static void test_declines(void) {
  int conv;
  cs_graph *g = conv_graph(8, 8, 8, 0, &conv);
  expect_declined(g, conv, "depthwise (groups == c_in > 1)");
  cs_graph_free(g);

  g = conv_graph(4, 6, 1, 1, &conv);
  expect_declined(g, conv, "weight not constant");
  cs_graph_free(g);

  /* 64 input channels of a 1×1 conv: K = 64, rows already aligned. */
  g = cs_graph_new("k64");
  int64_t xs[4] = {1, 64, H, W}, ws[4] = {6, 64, 1, 1};
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int y = kg_conv(g, "conv", x, kg_const_i8(g, "w", 4, ws, 1), 6, 1, 1, &conv);
  gb_set_io(g, 1, &x, 1, &y);
  expect_declined(g, conv, "K a multiple of 64");
  cs_graph_free(g);

  /* Parameters that do not describe the weight's element count. */
  g = conv_graph(4, 6, 1, 0, &conv);
  cs_graph_node(g, conv)->k.conv.c_out = 5;
  expect_declined(g, conv, "weight size != rows·K");
  cs_graph_free(g);

  /* Already packed (stride set): left alone. */
  g = conv_graph(4, 6, 1, 0, &conv);
  CHECK(pass_pack_weights(g, NULL) == CS_OK);
  int packed = cs_graph_node(g, conv)->inputs[1], n_values = g->n_values;
  CHECK(pass_pack_weights(g, NULL) == CS_OK);
  CHECK(cs_graph_node(g, conv)->inputs[1] == packed && g->n_values == n_values);
  cs_graph_free(g);
}

/* x:i8[1][c_in][h][h] → conv(c_out, k×k, groups, same size) → y */
static cs_graph *conv_graph_hw(int c_in, int c_out, int groups, int h, int k, int *conv) {
  cs_graph *g = cs_graph_new("conv_hw");
  int64_t xs[4] = {1, c_in, h, h}, ws[4] = {c_out, c_in / groups, k, k};
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int w = kg_const_i8(g, "w", 4, ws, 17);
  int y = kg_conv(g, "conv", x, w, c_out, k, groups, conv);
  gb_set_io(g, 1, &x, 1, &y);
  return g;
}

/* 1 when `packed` holds dense OIHW weight `dense` of conv params p in the
 * O16 order of kernels.h (written here from that formula): each block of
 * 16 channels' weights, then their Σw as little-endian int32. */
static int o16_ok(const cs_value *dense, const cs_value *packed, const tidsp_conv2d_params *p) {
  const int64_t cpg_in = p->c_in / p->groups, T = (int64_t)p->k_h * p->k_w, K = cpg_in * T, blk = 16 * K + 64;
  if (packed->dtype != CS_DTYPE_I8 || packed->rank != 2 || packed->shape[0] != p->c_out / 16 ||
      packed->shape[1] != blk || !packed->data)
    return 0;
  const int8_t *d = dense->data, *o = packed->data;
  for (int64_t co = 0; co < p->c_out; co++) {
    int32_t sum = 0;
    for (int64_t ci = 0; ci < cpg_in; ci++)
      for (int64_t t = 0; t < T; t++) {
        if (o[(co / 16) * blk + (t * (cpg_in / 4) + ci / 4) * 64 + (co % 16) * 4 + ci % 4] != d[co * K + ci * T + t])
          return 0;
        sum += d[co * K + ci * T + t];
      }
    const uint8_t *le = (const uint8_t *)o + (co / 16) * blk + 16 * K + (co % 16) * 4;
    if ((int32_t)(le[0] | le[1] << 8 | le[2] << 16 | (uint32_t)le[3] << 24) != sum) return 0;
  }
  return 1;
}

/* Small maps with channels in 16s and quads get the O16 layout (and the
 * same outputs); the rules that keep padded rows instead. */
static void test_o16(void) {
  static const int cases[][5] = {
      /* c_in, c_out, groups, h, k */
      {8, 32, 1, 5, 3}, {8, 32, 2, 5, 3}, {4, 16, 1, 14, 2}, {64, 48, 1, 7, 3}, {12, 16, 1, 1, 5},
      {32, 64, 1, 7, 1}, {4, 16, 1, 8, 1}, /* 1×1 up to O16_MAX_PIXELS_1X1 (8·8) */
      {8, 32, 1, 28, 3}, {8, 32, 1, 56, 3}, /* 56·56 = O16_MAX_PIXELS, the grid in bands */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int *c = cases[i];
    int conv;
    cs_graph *g = conv_graph_hw(c[0], c[1], c[2], c[3], c[4], &conv);
    int w = cs_graph_node(g, conv)->inputs[1];
    int8_t *x = input_i8((int64_t)c[0] * c[3] * c[3], 7);
    const void *in[1] = {x};
    int changed = 0;
    CHECK_MSG(same_output_after_pack(g, in, &changed), "O16 case %d: outputs differ", (int)i);
    const cs_node *n = cs_graph_node(g, conv);
    CHECK_MSG(changed && n->k.conv.w_layout == TIDSP_CONV_W_O16 && n->k.conv.w_row_stride == 0,
              "O16 case %d: layout %d stride %d", (int)i, (int)n->k.conv.w_layout, (int)n->k.conv.w_row_stride);
    CHECK(o16_ok(cs_graph_value(g, w), cs_graph_value(g, n->inputs[1]), &n->k.conv));
    CHECK(strcmp(cs_graph_value(g, n->inputs[1])->name, "w.o16") == 0);
    /* a second run leaves it alone */
    int packed = n->inputs[1], n_values = g->n_values;
    CHECK(pass_pack_weights(g, NULL) == CS_OK);
    CHECK(cs_graph_node(g, conv)->inputs[1] == packed && g->n_values == n_values);
    free(x);
    cs_graph_free(g);
  }
  /* not O16: channels not in 16s / quads, w_zp ≠ 0, Q31, a map past
   * O16_MAX_PIXELS (57×57 = 3249), one output row's grid past
   * TIDSP_CONV_O16_MAX_GRID (1024 channels · 3·24), a 1×1 kernel past
   * O16_MAX_PIXELS_1X1 (9·9): padded rows as before */
  static const int no[][6] = {
      /* c_in, c_out, h, k, what (0 plain, 1 w_zp, 2 q31), expected stride */
      {8, 24, 5, 3, 0, 128}, {6, 32, 5, 3, 0, 64}, {8, 32, 5, 3, 1, 128},
      {8, 32, 5, 3, 2, 128}, {8, 32, 57, 3, 0, 128}, {1024, 16, 22, 3, 0, 0}, /* K = 9216: dense rows */
      {4, 16, 9, 1, 0, 64},
  };
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    const int *c = no[i];
    int conv;
    cs_graph *g = conv_graph_hw(c[0], c[1], 1, c[2], c[3], &conv);
    if (c[4] == 1) cs_graph_node(g, conv)->k.conv.w_zp = 1;
    if (c[4] == 2) cs_graph_node(g, conv)->k.conv.rq.kind = TIDSP_REQUANT_Q31;
    CHECK(pass_pack_weights(g, NULL) == CS_OK);
    const cs_node *n = cs_graph_node(g, conv);
    CHECK_MSG(n->k.conv.w_layout == TIDSP_CONV_W_OIHW && n->k.conv.w_row_stride == c[5],
              "not-O16 case %d: layout %d stride %d", (int)i, (int)n->k.conv.w_layout,
              (int)n->k.conv.w_row_stride);
    cs_graph_free(g);
  }
}

/* -mcpu=c7x with -pack-weights=1 forced: padded rows, never O16 (its L2
 * DMA tiling slices weights by output channel rows). */
static void test_o16_not_on_c7x(void) {
  cs_target t;
  int conv;
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -pack-weights=1", &t) == CS_OK);
  cs_graph *g = conv_graph_hw(8, 32, 1, 5, 3, &conv);
  CHECK(pass_pack_weights(g, &t) == CS_OK);
  const cs_node *n = cs_graph_node(g, conv);
  CHECK(n->k.conv.w_layout == TIDSP_CONV_W_OIHW && n->k.conv.w_row_stride == 128);
  cs_graph_free(g);
  CHECK(cs_target_parse("c_static_lib -pack-weights=1", &t) == CS_OK);
  g = conv_graph_hw(8, 32, 1, 5, 3, &conv);
  CHECK(pass_pack_weights(g, &t) == CS_OK && cs_graph_node(g, conv)->k.conv.w_layout == TIDSP_CONV_W_O16);
  cs_graph_free(g);
}

/* Two small-map convolutions read one weight: one O16 copy. */
static void test_o16_shared(void) {
  cs_graph *g = cs_graph_new("o16_shared");
  int64_t xs[4] = {1, 8, H, W}, ws[4] = {16, 8, 3, 3};
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int w = kg_const_i8(g, "w", 4, ws, 3);
  int c1, c2;
  int y1 = kg_conv(g, "conv1", x, w, 16, 3, 1, &c1);
  int y2 = kg_conv(g, "conv2", x, w, 16, 3, 1, &c2);
  int outs[2] = {y1, y2};
  gb_set_io(g, 1, &x, 2, outs);
  int n_values = g->n_values;
  CHECK(pass_pack_weights(g, NULL) == CS_OK && cs_graph_verify(g) == CS_OK);
  const cs_node *a = cs_graph_node(g, c1), *b = cs_graph_node(g, c2);
  CHECK(g->n_values == n_values + 1);
  CHECK(a->inputs[1] == b->inputs[1] && a->inputs[1] != w);
  CHECK(a->k.conv.w_layout == TIDSP_CONV_W_O16 && b->k.conv.w_layout == TIDSP_CONV_W_O16);
  cs_graph_free(g);
}

/* x → Q → DQ → Conv(DQ(w)) → Q → DQ: what the pipeline packs, or not,
 * following the target attribute. */
static cs_graph *qdq_conv_graph(void) {
  cs_graph *g = cs_graph_new("qdq_conv");
  int64_t xs[4] = {1, 4, H, W}, ws[4] = {8, 4, 3, 3}, ys[4] = {1, 8, H, W};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int q = gb_q(g, "q_in", x, gb_scalar_f32(g, "s_in", 0.05f), gb_scalar_i8(g, "z_in", 3));
  int dq = gb_dq(g, "dq_in", q, gb_scalar_f32(g, "s_in2", 0.05f), gb_scalar_i8(g, "z_in2", 3));
  int w = kg_const_i8(g, "w", 4, ws, 7);
  int wdq = gb_dq(g, "dq_w", w, gb_scalar_f32(g, "w_s", 0.002f), gb_scalar_i8(g, "w_z", 0));
  int cin[2] = {dq, wdq};
  int conv_id;
  int cy = gb_node(g, CS_OP_CONV, "conv", 2, cin, CS_DTYPE_F32, 4, ys, &conv_id);
  int64_t pads[4] = {1, 1, 1, 1};
  cs_node_set_attr_ints(cs_graph_node(g, conv_id), "pads", 4, pads);
  int q2 = gb_q(g, "q_out", cy, gb_scalar_f32(g, "s_out", 0.1f), gb_scalar_i8(g, "z_out", -2));
  int y = gb_dq(g, "dq_out", q2, gb_scalar_f32(g, "s_out2", 0.1f), gb_scalar_i8(g, "z_out2", -2));
  gb_set_io(g, 1, &x, 1, &y);
  return g;
}

static int pipeline_stride(const char *target) {
  cs_graph *g = qdq_conv_graph();
  cs_target t;
  int stride = -1;
  if (cs_target_parse(target, &t) == CS_OK && cs_passes_run(g, &t, NULL) == CS_OK) {
    int k = gb_find_op(g, CS_OP_K_CONV2D_I8);
    if (k >= 0 && gb_count_op(g, CS_OP_K_CONV2D_I8) == 1) stride = cs_graph_node(g, k)->k.conv.w_row_stride;
  }
  cs_graph_free(g);
  return stride;
}

static void test_pipeline_switch(void) {
  CHECK(pipeline_stride("c_static_lib -pack-weights=1") == 64);
  CHECK(pipeline_stride("c_static_lib -pack-weights=0") == 0);
  CHECK(pipeline_stride("c_static_lib -kernels=scalar") == 0);
  CHECK(pipeline_stride("c_static_lib -mcpu=c7x") == 0);
  CHECK(pipeline_stride("c_static_lib -mcpu=c66x") == 0);
}

static void test_target_attribute(void) {
  cs_target t;
  char buf[512];
  cs_target_default(&t);
  int host_default = t.pack_weights;
  CHECK(cs_target_parse("c_static_lib", &t) == CS_OK && t.pack_weights == host_default);
  /* The default follows -kernels and -mcpu wherever they appear. */
  CHECK(cs_target_parse("c_static_lib -kernels=scalar", &t) == CS_OK && t.pack_weights == 0);
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -mmalib=1", &t) == CS_OK && t.pack_weights == 0);
  CHECK(cs_target_parse("c_static_lib -mcpu=c66x", &t) == CS_OK && t.pack_weights == 0);
  CHECK(cs_target_parse("c_static_lib -pack-weights=1 -mcpu=c7x", &t) == CS_OK && t.pack_weights == 1);
  CHECK(cs_target_parse("c_static_lib -pack-weights=0", &t) == CS_OK && t.pack_weights == 0);
  /* Format: only a non-default value appears, and it parses back. */
  cs_target_default(&t);
  cs_target_format(&t, buf, sizeof buf);
  CHECK(strstr(buf, "pack-weights") == NULL);
  const char *non_default[] = {"c_static_lib -mcpu=c7x -pack-weights=1", "c_static_lib -kernels=scalar -pack-weights=1",
                               "c_static_lib -pack-weights=0", "c_static_lib -pack-weights=1"};
  for (size_t i = 0; i < sizeof non_default / sizeof non_default[0]; i++) {
    cs_target a, b;
    CHECK(cs_target_parse(non_default[i], &a) == CS_OK);
    cs_target_format(&a, buf, sizeof buf);
    CHECK_MSG(cs_target_parse(buf, &b) == CS_OK && b.pack_weights == a.pack_weights, "round trip of '%s' via '%s'",
              non_default[i], buf);
    int dflt = a.mcpu == CS_MCPU_GENERIC && a.kernels == CS_KERNELS_FAST ? host_default : 0;
    CHECK((strstr(buf, "-pack-weights=") != NULL) == (a.pack_weights != dflt));
  }
  cs_error_clear();
  CHECK(cs_target_parse("c_static_lib -pack-weights=2", &t) == CS_ERR_USAGE);
  CHECK(strstr(cs_error_message(), "pack-weights") != NULL);
}

int main(void) {
  test_conv_match(4, 1);   /* K = 36 → 64 */
  test_conv_match(24, 1);  /* K = 216 → 256 */
  test_conv_match(8, 2);   /* grouped: K = 36 per group row */
  test_conv_match(1, 1);   /* c_in = groups = 1 is not depthwise */
  test_matmul_match();
  test_shared_weight();
  test_o16();
  test_o16_shared();
  test_o16_not_on_c7x();
  test_declines();
  test_pipeline_switch();
  test_target_attribute();
  UNIT_MAIN_END();
}
