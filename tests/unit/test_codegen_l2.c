/*
 * test_codegen_l2.c — the L2 planner (compiler/schedule/l2plan.c,
 * InjectMMALIBDMA): for one MMALIB call, each decision at its exact budget
 * boundary, the guard, the chunking of sliced weights, and the calls the
 * spec never stages.
 */
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"
#include "unit.h"

typedef struct conv_case {
  cs_op op;
  cs_dtype dt;
  int c_in, h, w, c_out, groups, pad_top;
  int weights_const; /* 0: the weights are a graph input */
} conv_case;

/* x [1,c_in,h,w] → op(x, w, bias, scale, shift) → y (kernel 3×3, stride 1,
 * only pad_top nonzero so that the guard depends on it alone). */
static cs_graph *conv_graph(const conv_case *c) {
  cs_graph *g = cs_graph_new("l2");
  size_t e = cs_dtype_size(c->dt);
  int64_t xs[4] = {1, c->c_in, c->h, c->w};
  int64_t ws[4] = {c->c_out, c->c_in / c->groups, 3, 3};
  int64_t ys[4] = {1, c->c_out, c->h - 2 + c->pad_top, c->w - 2};
  int64_t cs[1] = {c->c_out};
  int x = cs_graph_add_value(g, "x", c->dt, 4, xs);
  size_t wn = (size_t)(ws[0] * ws[1] * 9);
  void *wdata = calloc(wn, e);
  int wv = c->weights_const ? cs_graph_add_const(g, "w", c->dt, 4, ws, wdata)
                            : cs_graph_add_value(g, "w", c->dt, 4, ws);
  free(wdata);
  int32_t *bias = calloc((size_t)c->c_out, 8);
  uint8_t *ss = calloc((size_t)c->c_out, 1);
  int b = cs_graph_add_const(g, "b", c->dt == CS_DTYPE_I16 ? CS_DTYPE_I64 : CS_DTYPE_I32, 1, cs, bias);
  int sc = cs_graph_add_const(g, "scale", CS_DTYPE_U8, 1, cs, ss);
  int sh = cs_graph_add_const(g, "shift", CS_DTYPE_U8, 1, cs, ss);
  free(bias);
  free(ss);
  int y = cs_graph_add_value(g, "y", c->dt, 4, ys);
  int in[5] = {x, wv, b, sc, sh};
  int id = cs_graph_add_node(g, c->op, "conv", "conv", 5, in, 1, &y);
  int64_t a[13] = {c->c_in, c->h, c->w, c->c_out, 3, 3, 1, 1, c->pad_top, 0, 0, 0, c->groups};
  cs_node_set_attr_ints(&g->nodes[id], "mm_args", c->groups > 1 ? 13 : 12, a);
  int gin[2] = {x, wv};
  g->inputs = malloc(sizeof(int) * 2);
  memcpy(g->inputs, gin, sizeof gin);
  g->n_inputs = c->weights_const ? 1 : 2;
  g->outputs = malloc(sizeof(int));
  g->outputs[0] = y;
  g->n_outputs = 1;
  return g;
}

/* The plan of the graph's one call at `budget`; s->l2_size in *l2_size.
 * A depthwise op gets its own argument list (channels, H_in, W_in, KH,
 * KW, strides, pads, num_groups). */
static cs_l2_stage plan(const conv_case *c, size_t budget, size_t *l2_size) {
  cs_graph *g = conv_graph(c);
  if (c->op == CS_OP_K_MMALIB_DWCONV2D_I8 || c->op == CS_OP_K_MMALIB_DWCONV2D_I16) {
    int64_t a[12] = {c->c_in, c->h, c->w, 3, 3, 1, 1, c->pad_top, 0, 0, 0, c->c_in};
    cs_node_set_attr_ints(&g->nodes[0], "mm_args", 12, a);
  }
  cs_schedule_options o = {.arena_align = 128, .weights_align = 64, .weights_base = 64, .l2_budget = budget};
  cs_schedule s;
  cs_l2_stage st;
  memset(&st, 0xff, sizeof st);
  cs_status rc = cs_schedule_build(g, &o, &s);
  CHECK_MSG(rc == CS_OK, "schedule: %s", cs_error_message());
  if (rc == CS_OK) {
    CHECK(s.n_steps == 1 && s.l2 != NULL && s.l2_budget == budget);
    st = s.l2[0];
    if (l2_size) *l2_size = s.l2_size;
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
  return st;
}

/* int8 3×3 conv, 16→128 channels on 10×10: input 1600 B at 128 (the
 * minimum guard), weights 128 × 144 = 18432 B at 1792 (1728 rounded up to
 * 128): 20224 B in all. */
static const conv_case kConv = {CS_OP_K_MMALIB_CONV2D_I8, CS_DTYPE_I8, 16, 10, 10, 128, 1, 0, 1};

static void test_input_and_weights_at_the_exact_budget(void) {
  size_t l2 = 0;
  cs_l2_stage st = plan(&kConv, 20224, &l2);
  CHECK(st.kind == CS_L2_INPUT_WEIGHTS);
  CHECK(st.input_off == 128 && st.input_bytes == 1600);
  CHECK(st.weight_off == 1792 && st.weight_bytes == 18432 && st.weight_bytes_total == 18432);
  CHECK(l2 == 20224);
  /* no staging at all without a budget: the plan is not even made */
  cs_graph *g = conv_graph(&kConv);
  cs_schedule_options o = {.arena_align = 128, .weights_align = 64, .weights_base = 64};
  cs_schedule s;
  CHECK(cs_schedule_build(g, &o, &s) == CS_OK);
  CHECK(s.l2 == NULL && s.l2_size == 0);
  cs_schedule_free(&s);
  cs_graph_free(g);
}

static void test_one_byte_less_slices_by_multiples_of_64(void) {
  size_t l2 = 0;
  cs_l2_stage st = plan(&kConv, 20223, &l2);
  /* (20223 − 1792) / 144 = 127 channels fit → 64 per chunk, 2 chunks */
  CHECK(st.kind == CS_L2_SLICED);
  CHECK(st.chunk_cout == 64 && st.n_chunks == 2);
  CHECK(st.weight_off == 1792 && st.weight_bytes == 64 * 144 && st.weight_bytes_total == 18432);
  CHECK(l2 == 1792 + 64 * 144 && l2 <= 20223);
  /* fewer than 64 fit: as many as fit */
  st = plan(&kConv, 1792 + 10 * 144, &l2);
  CHECK(st.kind == CS_L2_SLICED && st.chunk_cout == 10 && st.n_chunks == 13);
  CHECK(l2 == 1792 + 10 * 144); /* not rounded up past the budget */
  st = plan(&kConv, 1792 + 144, NULL);
  CHECK(st.kind == CS_L2_SLICED && st.chunk_cout == 1 && st.n_chunks == 128);
}

static void test_input_only_and_ddr(void) {
  size_t l2 = 0;
  /* input fits exactly, not one weights channel does */
  cs_l2_stage st = plan(&kConv, 1728, &l2);
  CHECK(st.kind == CS_L2_INPUT && st.input_off == 128 && st.weight_bytes == 0);
  CHECK(l2 == 1728); /* the footprint: 1792 on 128 bytes would exceed the budget */
  st = plan(&kConv, 1800, NULL);
  CHECK(st.kind == CS_L2_INPUT);
  /* guard + input one byte over */
  st = plan(&kConv, 1727, &l2);
  CHECK(st.kind == CS_L2_DDR && l2 == 0);
}

static void test_guard_is_pad_top_rows(void) {
  /* pad_top 3 × W_in 100 × 1 B = 300 → 384 */
  conv_case c = {CS_OP_K_MMALIB_CONV2D_I8, CS_DTYPE_I8, 4, 10, 100, 64, 1, 3, 1};
  cs_l2_stage st = plan(&c, 1 << 20, NULL);
  CHECK(st.kind == CS_L2_INPUT_WEIGHTS && st.input_off == 384);
  /* int16: 2 bytes per element → 600 → 640 */
  c.op = CS_OP_K_MMALIB_CONV2D_I16;
  c.dt = CS_DTYPE_I16;
  st = plan(&c, 1 << 20, NULL);
  CHECK(st.kind == CS_L2_INPUT_WEIGHTS && st.input_off == 640);
  CHECK(st.input_bytes == 4 * 10 * 100 * 2 && st.weight_bytes == 64 * 4 * 9 * 2);
}

static void test_only_plain_conv_is_sliced(void) {
  /* grouped: the spec slices ungrouped conv only → input alone */
  conv_case c = kConv;
  c.op = CS_OP_K_MMALIB_CONV2D_I8_GROUPED;
  c.groups = 2; /* weights 128 × 72 = 9216 B */
  CHECK(plan(&c, 1792 + 9216, NULL).kind == CS_L2_INPUT_WEIGHTS);
  CHECK(plan(&c, 1792 + 9215, NULL).kind == CS_L2_INPUT);
  /* int16 conv (the exact path's): sliced through its own entry in
   * chunks of the int16 tile, 32 channels (288 B each): two buffers of
   * 32 fit (two of 64 do not) */
  c = kConv;
  c.op = CS_OP_K_MMALIB_CONV2D_I16;
  c.dt = CS_DTYPE_I16; /* input 3200 at 128, weights 36864 at 3328 */
  CHECK(plan(&c, 3328 + 36864, NULL).kind == CS_L2_INPUT_WEIGHTS);
  cs_l2_stage st = plan(&c, 3328 + 36863, NULL);
  CHECK(st.kind == CS_L2_SLICED && st.sliced_fn && !strcmp(st.sliced_fn, "mmalib_conv2d_i16_sliced"));
  CHECK(st.chunk_cout == 32 && st.n_chunks == 4 && st.weight_off == 3328 && st.weight_off2 == 3328 + 9216);
  /* room for 57 channels: one buffer of one tile (two of 32 need 21760) */
  st = plan(&c, 20000, NULL);
  CHECK(st.kind == CS_L2_SLICED && st.chunk_cout == 32 && st.n_chunks == 4 && st.weight_off2 == 0);
}

static void test_weights_not_in_the_blob_stay_where_they_are(void) {
  conv_case c = kConv;
  c.weights_const = 0;
  cs_l2_stage st = plan(&c, 1 << 20, NULL);
  CHECK(st.kind == CS_L2_INPUT && st.weight_bytes == 0);
  char buf[256];
  cs_l2_stage_describe(&st, 1 << 20, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "read from DDR (not constant)") != NULL, "%s", buf);
}

static void test_kernels_the_spec_never_stages(void) {
  /* the bias-less int16 matmul and the residual add read DDR: no decision */
  cs_graph *g = cs_graph_new("l2");
  int64_t s2[2] = {64, 64};
  int a = cs_graph_add_value(g, "a", CS_DTYPE_I16, 2, s2);
  int16_t *wd = calloc(64 * 64, 2);
  int b = cs_graph_add_const(g, "b", CS_DTYPE_I16, 2, s2, wd);
  free(wd);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I16, 2, s2);
  int in[2] = {a, b};
  int id = cs_graph_add_node(g, CS_OP_K_MMALIB_MATMUL_I16, "mm", "mm", 2, in, 1, &y);
  int64_t args[4] = {64, 64, 64, 0};
  cs_node_set_attr_ints(&g->nodes[id], "mm_args", 4, args);
  g->inputs = malloc(sizeof(int));
  g->inputs[0] = a;
  g->n_inputs = 1;
  g->outputs = malloc(sizeof(int));
  g->outputs[0] = y;
  g->n_outputs = 1;
  cs_schedule_options o = {.arena_align = 128, .weights_align = 64, .weights_base = 64, .l2_budget = 1 << 20};
  cs_schedule s;
  CHECK(cs_schedule_build(g, &o, &s) == CS_OK);
  CHECK(s.l2 && s.l2[0].kind == CS_L2_NONE && s.l2_size == 0);
  cs_schedule_free(&s);
  cs_graph_free(g);
}

static void test_describe_names_the_decision(void) {
  char buf[256];
  cs_l2_stage st = plan(&kConv, 20223, NULL);
  cs_l2_stage_describe(&st, 20223, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "weights 18432 B > L2 budget 20223 B: 2 chunks of 64 output channels") != NULL, "%s", buf);
  st = plan(&kConv, 1727, NULL);
  cs_l2_stage_describe(&st, 1727, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "DDR: guard 128 B + input 1600 B > L2 budget 1727 B"), "%s", buf);
}

/* Double-buffered chunks (chunk i+1 copied while chunk i computes) when
 * two chunks of at least 64 channels fit; 16→256 on 10×10: weights
 * 256 × 144 = 36864 B at 1792, 38656 B in all. */
static void test_sliced_double_buffers_when_two_chunks_fit(void) {
  const conv_case c = {CS_OP_K_MMALIB_CONV2D_I8, CS_DTYPE_I8, 16, 10, 10, 256, 1, 0, 1};
  size_t l2 = 0;
  /* one byte short of all weights: single would take 192 channels, but
   * two buffers of 64 (9216 B each, the second at 11008) fit */
  cs_l2_stage st = plan(&c, 38655, &l2);
  CHECK(st.kind == CS_L2_SLICED && st.chunk_cout == 64 && st.n_chunks == 4);
  CHECK(st.weight_off == 1792 && st.weight_off2 == 11008 && st.weight_bytes == 9216);
  CHECK(l2 == 20224);
  char buf[256];
  cs_l2_stage_describe(&st, 38655, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "4 chunks of 64 output channels (9216 B) through mmalib_conv2d_i8_sliced, "
                        "double-buffered") != NULL, "%s", buf);
  /* the exact footprint of two chunks */
  st = plan(&c, 20224, NULL);
  CHECK(st.kind == CS_L2_SLICED && st.chunk_cout == 64 && st.weight_off2 == 11008);
  /* one byte less: two chunks of 64 do not fit; one of 64 does */
  st = plan(&c, 20223, &l2);
  CHECK(st.kind == CS_L2_SLICED && st.chunk_cout == 64 && st.n_chunks == 4 && st.weight_off2 == 0);
  CHECK(l2 == 11008);
  cs_l2_stage_describe(&st, 20223, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "double-buffered") == NULL, "%s", buf);
  /* bigger budgets: the largest multiple of 64 that fits twice */
  st = plan(&c, 1792 + 2 * 128 * 144 - 1, NULL); /* 128 twice is all: does not fit */
  CHECK(st.kind == CS_L2_SLICED && st.chunk_cout == 64 && st.weight_off2 == 11008);
}

/* Beyond the spec: a plain or depthwise conv whose input alone exceeds the budget is
 * H-tiled (dma_tiling_h.c): strips above the guard, each tile's pads
 * giving exactly its rows, weights cached when they fit beside the
 * buffers. 16→16 on 40×10, pad_top 1: input 6400 B, weights 2304 B,
 * 39 output rows. */
static void check_tiles(const conv_case *c, const cs_l2_stage *st) {
  int64_t a[12] = {c->c_in, c->h, c->w, c->c_out, 3, 3, 1, 1, c->pad_top, 0, 0, 0};
  tidsp_conv2d_params p = {.n = 1, .c_in = c->c_in, .h_in = c->h, .w_in = c->w, .c_out = c->c_out,
                           .h_out = c->h - 2 + c->pad_top, .w_out = c->w - 2, .k_h = 3, .k_w = 3,
                           .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .pad_top = c->pad_top};
  int covered = 0;
  for (int t = 0; t < st->n_chunks; t++) {
    cs_h_tile h = cs_h_tile_of(&p, st->tile_rows, t);
    CHECK(h.r0 == covered && h.rows_in >= 1 && h.pad_top >= 0 && h.pad_bottom >= 0);
    CHECK(h.rows_in + h.pad_top + h.pad_bottom - 3 + 1 == h.rows_out); /* the call's H_out */
    CHECK((size_t)h.rows_in * (size_t)(a[0] * a[2]) * cs_dtype_size(c->dt) <= st->input_bytes);
    covered += h.rows_out;
  }
  CHECK(covered == p.h_out);
}

static void test_input_over_the_budget_is_h_tiled(void) {
  conv_case c = {CS_OP_K_MMALIB_CONV2D_I8, CS_DTYPE_I8, 16, 40, 10, 16, 1, 1, 1};
  size_t l2 = 0;
  cs_l2_stage st = plan(&c, 6000, &l2);
  CHECK(st.kind == CS_L2_H_TILED && st.mmalib_h && st.input_off == 128 && st.weight_bytes == 2304);
  CHECK(st.input_bytes_total == 6400 && l2 <= 6000 && st.n_chunks >= 2);
  check_tiles(&c, &st);
  char buf[320];
  cs_l2_stage_describe(&st, 6000, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "H-tiled: guard 128 B + input 6400 B > L2 budget 6000 B: ") == buf, "%s", buf);
  CHECK_MSG(strstr(buf, "weights 2304 B in L2") != NULL, "%s", buf);
  /* the exact path's int16 conv: twice the bytes a row */
  c.op = CS_OP_K_MMALIB_CONV2D_I16;
  c.dt = CS_DTYPE_I16;
  st = plan(&c, 9000, &l2);
  CHECK(st.kind == CS_L2_H_TILED && st.mmalib_h && st.input_bytes_total == 12800 && l2 <= 9000);
  check_tiles(&c, &st);
  /* a depthwise conv: weights [16][1][3][3], its own argument list */
  c = (conv_case){CS_OP_K_MMALIB_DWCONV2D_I16, CS_DTYPE_I16, 16, 40, 10, 16, 16, 1, 1};
  st = plan(&c, 9000, &l2);
  CHECK(st.kind == CS_L2_H_TILED && st.mmalib_h && st.weight_bytes == 16 * 9 * 2 && l2 <= 9000);
  check_tiles(&c, &st);
  /* weights that never fit beside the buffers: the call reads DDR (each
   * tile would read them again); 16→256: weights 36864 B */
  c = (conv_case){CS_OP_K_MMALIB_CONV2D_I8, CS_DTYPE_I8, 16, 40, 10, 256, 1, 1, 1};
  st = plan(&c, 6000, NULL);
  CHECK(st.kind == CS_L2_DDR);
  /* nor weights outside the blob */
  c = (conv_case){CS_OP_K_MMALIB_CONV2D_I8, CS_DTYPE_I8, 16, 40, 10, 16, 1, 1, 0};
  st = plan(&c, 6000, NULL);
  CHECK(st.kind == CS_L2_DDR);
}

int main(void) {
  test_input_and_weights_at_the_exact_budget();
  test_sliced_double_buffers_when_two_chunks_fit();
  test_one_byte_less_slices_by_multiples_of_64();
  test_input_only_and_ddr();
  test_guard_is_pad_top_rows();
  test_only_plain_conv_is_sliced();
  test_weights_not_in_the_blob_stay_where_they_are();
  test_kernels_the_spec_never_stages();
  test_describe_names_the_decision();
  test_input_over_the_budget_is_h_tiled();
  UNIT_MAIN_END();
}
