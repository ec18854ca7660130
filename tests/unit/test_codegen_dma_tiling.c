/*
 * test_codegen_dma_tiling.c — ScheduleC7xDMATiling's plan for a
 * k_conv2d_i8 (compiler/schedule/dma_tiling.c): not tiled when input +
 * weights fit half the budget, OC-tiled when input + one tile do (each
 * rule at its exact boundary), reading DDR when not even one channel fits
 * beside the input, and the declines (batch, groups, q31 requant, weights
 * not constant); H-tiling of a conv with a fused ReLU (its plan, its tile
 * geometry, weights in L2 or DDR, where it declines); N-tiling of a
 * weight-only linear layer (cached, tiled, declined); the next-layer
 * prefetch of a tiled conv's first weights; an activation placed in L2
 * between two convs (dma_tiling_resident.c).
 */
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"
#include "unit.h"

typedef struct tcase {
  int n, c_in, h, w, c_out, groups;
  int rq_kind, per_channel;
  int weights_const;
  int relu; /* a ReLU folded into the output range (zero point -128) */
} tcase;

/* x [n,c_in,h,w] → k_conv2d_i8 3×3 pad 1 → y [n,c_out,h,w] */
static cs_graph *graph(const tcase *c) {
  cs_graph *g = cs_graph_new("tile");
  int64_t xs[4] = {c->n, c->c_in, c->h, c->w}, ys[4] = {c->n, c->c_out, c->h, c->w};
  int64_t ws[4] = {c->c_out, c->c_in / c->groups, 3, 3}, cs[1] = {c->c_out};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_I8, 4, xs);
  void *zeros = calloc((size_t)(ws[0] * ws[1] * 9 + c->c_out * 8), 1);
  int wv = c->weights_const ? cs_graph_add_const(g, "w", CS_DTYPE_I8, 4, ws, zeros)
                            : cs_graph_add_value(g, "w", CS_DTYPE_I8, 4, ws);
  int b = cs_graph_add_const(g, "b", CS_DTYPE_I32, 1, cs, zeros);
  int rq = cs_graph_add_const(g, "rq", CS_DTYPE_F32, 1, cs, zeros);
  free(zeros);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 4, ys);
  int in[4] = {x, wv, b, rq};
  int id = cs_graph_add_node(g, CS_OP_K_CONV2D_I8, "conv", "conv", 4, in, 1, &y);
  tidsp_conv2d_params *p = &g->nodes[id].k.conv;
  *p = (tidsp_conv2d_params){.n = c->n, .c_in = c->c_in, .h_in = c->h, .w_in = c->w, .c_out = c->c_out,
                             .h_out = c->h, .w_out = c->w, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1,
                             .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1, .groups = c->groups,
                             .rq = {.kind = c->rq_kind, .per_channel = c->per_channel, .out_min = -128,
                                    .out_max = 127, .out_zp = c->relu ? -128 : 0}};
  g->inputs = malloc(sizeof(int) * 2);
  g->inputs[0] = x;
  g->inputs[1] = wv;
  g->n_inputs = c->weights_const ? 1 : 2;
  g->outputs = malloc(sizeof(int));
  g->outputs[0] = y;
  g->n_outputs = 1;
  return g;
}

static cs_l2_stage plan(const tcase *c, size_t budget, size_t *l2_size) {
  cs_graph *g = graph(c);
  cs_schedule_options o = {.arena_align = 64, .weights_align = 64, .weights_base = 64, .l2_budget = budget};
  cs_schedule s;
  cs_l2_stage st;
  memset(&st, 0xff, sizeof st);
  cs_status rc = cs_schedule_build(g, &o, &s);
  CHECK_MSG(rc == CS_OK, "schedule: %s", cs_error_message());
  if (rc == CS_OK) {
    CHECK(s.n_steps == 1 && s.l2 != NULL);
    st = s.l2[0];
    if (l2_size) *l2_size = s.l2_size;
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
  return st;
}

/* The spec's conv3 without its border: 128→128 on 28×28, input 100352 B,
 * one channel's weights 1152 B, all 147456 B. */
static const tcase kConv3 = {1, 128, 28, 28, 128, 1, TIDSP_REQUANT_FLOAT, 1, 1, 0};
enum { IN = 100352, ROW = 1152 };

static void test_not_tiled_when_half_the_budget_holds_it(void) {
  size_t l2 = 1;
  cs_l2_stage st = plan(&kConv3, 2 * (IN + 128 * ROW), &l2);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_FITS && l2 == 0);
  char buf[256];
  cs_l2_stage_describe(&st, 2 * (IN + 128 * ROW), buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "not tiled: input 100352 B + weights 147456 B <= half the L2 budget 247808 B"), "%s", buf);
  /* one byte less: two tiles of 64 */
  st = plan(&kConv3, 2 * (IN + 128 * ROW) - 2, &l2);
  CHECK(st.kind == CS_L2_OC_TILED && st.chunk_cout == 64 && st.n_chunks == 2);
}

static void test_oc_tiles_the_fewest_that_fit_balanced(void) {
  size_t l2 = 0;
  /* the spec's budget: 64 channels a tile, input at 0, weights after it */
  cs_l2_stage st = plan(&kConv3, 384 * 1024, &l2);
  CHECK(st.kind == CS_L2_OC_TILED && st.chunk_cout == 64 && st.n_chunks == 2);
  CHECK(st.input_off == 0 && st.input_bytes == IN);
  CHECK(st.weight_off == IN && st.weight_off2 == IN + 64 * ROW && st.weight_bytes == 64 * ROW);
  CHECK(l2 == IN + 128 * ROW && l2 <= 384 * 1024);
  char buf[256];
  cs_l2_stage_describe(&st, 384 * 1024, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "OC-tiled: input 100352 B + weights 147456 B > half the L2 budget 196608 B: input once, "
                        "2 tiles of 64 output channels (73728 B), double-buffered") != NULL, "%s", buf);
  /* 50 channels fit beside the input: 3 tiles, balanced: 43, 43, 42 */
  st = plan(&kConv3, 2 * (IN + 50 * ROW), NULL);
  CHECK(st.kind == CS_L2_OC_TILED && st.chunk_cout == 43 && st.n_chunks == 3);
  /* exactly one channel fits: 128 tiles of 1 */
  st = plan(&kConv3, 2 * (IN + ROW), &l2);
  CHECK(st.kind == CS_L2_OC_TILED && st.chunk_cout == 1 && st.n_chunks == 128);
  CHECK(l2 == IN + 2 * ROW);
}

static void test_input_over_half_the_budget_reads_ddr(void) {
  size_t l2 = 1;
  cs_l2_stage st = plan(&kConv3, 2 * (IN + ROW) - 2, &l2);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_INPUT && l2 == 0);
  char buf[256];
  cs_l2_stage_describe(&st, 2 * (IN + ROW) - 2, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "not tiled, reads DDR: input 100352 B + one output channel's weights") != NULL, "%s", buf);
}

static void test_declines(void) {
  char buf[256];
  tcase c = kConv3;
  c.n = 2;
  cs_l2_stage st = plan(&c, 384 * 1024, NULL);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_BATCH);
  c = kConv3;
  c.groups = 2;
  st = plan(&c, 2 * IN, NULL);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_GROUPED);
  c = kConv3;
  c.rq_kind = TIDSP_REQUANT_Q31;
  st = plan(&c, 384 * 1024, NULL);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_REQUANT);
  cs_l2_stage_describe(&st, 384 * 1024, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "per-channel requant without a channel window") != NULL, "%s", buf);
  /* per-tensor q31: one multiplier for every tile */
  c.per_channel = 0;
  CHECK(plan(&c, 384 * 1024, NULL).kind == CS_L2_OC_TILED);
  c = kConv3;
  c.weights_const = 0;
  st = plan(&c, 384 * 1024, NULL);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_NOT_CONST);
  cs_l2_stage_describe(&st, 384 * 1024, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "weights not constant") != NULL, "%s", buf);
}

/* H-tiling (dma_tiling_h.c), first for a conv with a fused ReLU: conv3
 * with its ReLU at the spec's budget. Tiles of R rows read R + 2 input
 * rows (3584 B each: 128 channels × 28), 2 × strip + 2 × output rows +
 * weights 147456 B <= 393216 B up to R = 16; from h_out / 2 = 14 down,
 * 14 fits: two tiles of 14 rows, each reading 15 input rows (the padding
 * row is not copied). */
static void test_h_tiling_of_a_fused_conv(void) {
  tcase c = kConv3;
  c.relu = 1;
  size_t l2 = 0;
  cs_l2_stage st = plan(&c, 384 * 1024, &l2);
  CHECK(st.kind == CS_L2_H_TILED && st.tile_rows == 14 && st.n_chunks == 2);
  CHECK(st.input_off == 0 && st.input_bytes == 15 * 3584 && st.input_off2 == 53760);
  CHECK(st.out_off == 107520 && st.out_bytes == 14 * 3584 && st.out_off2 == 157696);
  CHECK(st.weight_off == 207872 && st.weight_bytes == 128 * ROW && st.input_bytes_total == IN);
  CHECK(l2 == 207872 + 128 * ROW && l2 <= 384 * 1024);
  char buf[320];
  cs_l2_stage_describe(&st, 384 * 1024, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "H-tiled: input 100352 B + weights 147456 B > half the L2 budget 196608 B: 2 tiles of 14 "
                         "output rows, input strips (53760 B) and output rows (50176 B) double-buffered, weights in L2"),
            "%s", buf);
  /* the tiles: output rows 0-13 read input rows 0-14 below one padding
   * row; 14-27 read 13-27 */
  const tidsp_conv2d_params p = {.n = 1, .c_in = 128, .h_in = 28, .w_in = 28, .c_out = 128, .h_out = 28,
                                 .w_out = 28, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1, .dil_h = 1,
                                 .dil_w = 1, .pad_top = 1, .pad_left = 1, .groups = 1};
  cs_h_tile t0 = cs_h_tile_of(&p, 14, 0), t1 = cs_h_tile_of(&p, 14, 1);
  CHECK(t0.r0 == 0 && t0.rows_out == 14 && t0.in_row == 0 && t0.rows_in == 15 && t0.pad_top == 1);
  CHECK(t1.r0 == 14 && t1.rows_out == 14 && t1.in_row == 13 && t1.rows_in == 15 && t1.pad_top == 0);
  /* stride 2, 5 rows a tile of 14: rows 5-9 read 2·5-1 … 2·9+1 = 9 … 19 */
  tidsp_conv2d_params p2 = p;
  p2.stride_h = 2;
  p2.h_out = 14;
  cs_h_tile t = cs_h_tile_of(&p2, 5, 1);
  CHECK(t.r0 == 5 && t.rows_out == 5 && t.in_row == 9 && t.rows_in == 11 && t.pad_top == 0);
  t = cs_h_tile_of(&p2, 5, 2); /* rows 10-13: 19 … 27 (28 is below the input) */
  CHECK(t.r0 == 10 && t.rows_out == 4 && t.in_row == 19 && t.rows_in == 9 && t.pad_top == 0);

  /* weights that do not fit beside the strips are read from DDR: in
   * 150000 B even one row's strips and outputs (28672 B) leave too little
   * for the weights; without them 14336 R + 14336 <= 150000 up to R = 9,
   * 4 tiles, balanced: 7 rows each */
  st = plan(&c, 150000, &l2);
  CHECK(st.kind == CS_L2_H_TILED && st.weight_bytes == 0 && st.tile_rows == 7 && st.n_chunks == 4);
  cs_l2_stage_describe(&st, 150000, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "4 tiles of 7 output rows") && strstr(buf, "weights read from DDR"), "%s", buf);
  CHECK(l2 == st.out_off2 + st.out_bytes && l2 % 128 == 0);
  /* OC-tiling could not: the input alone is over half the budget */
  c.relu = 0;
  CHECK(plan(&c, 150000, NULL).why == CS_L2_WHY_INPUT);
}

/* Where H-tiling declines: no fused activation (OC-tiling's, as the
 * spec's standalone stack), not even one row's strips fit, one output
 * row, batch > 1. */
static void test_h_tiling_declines(void) {
  tcase c = kConv3;
  CHECK(plan(&c, 384 * 1024, NULL).kind == CS_L2_OC_TILED);
  c.relu = 1;
  /* one row: 2 × 10752 + 2 × 3584 = 28672 B > 28671 B, and the input is
   * over half of it: reads DDR */
  cs_l2_stage st = plan(&c, 28671, NULL);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_INPUT);
  st = plan(&c, 28672, NULL);
  CHECK(st.kind == CS_L2_H_TILED && st.tile_rows == 1 && st.n_chunks == 28 && st.weight_bytes == 0);
  c.h = 1;
  st = plan(&c, 2048, NULL);
  CHECK(st.kind != CS_L2_H_TILED);
  c = kConv3;
  c.relu = 1;
  c.n = 2;
  CHECK(plan(&c, 384 * 1024, NULL).why == CS_L2_WHY_BATCH);
}

/* N-tiling (dma_tiling_n.c): x f32 [M][K] → c7x_dequantize_vecmatmul
 * with W int8 [N][K] constant (or not) → y f32 [M][N]. */
static cs_l2_stage n_plan(int M, int K, int N, int w_const, size_t budget, size_t *l2) {
  cs_graph *g = cs_graph_new("fc");
  int64_t xs[2] = {M, K}, ws[2] = {N, K}, ss[1] = {N}, ys[2] = {M, N};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, xs);
  void *zeros = calloc((size_t)N * (size_t)K + 4 * (size_t)N, 1);
  int wv = w_const ? cs_graph_add_const(g, "w", CS_DTYPE_I8, 2, ws, zeros) : cs_graph_add_value(g, "w", CS_DTYPE_I8, 2, ws);
  int sv = cs_graph_add_const(g, "s", CS_DTYPE_F32, 1, ss, zeros);
  free(zeros);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_F32, 2, ys);
  int in[3] = {x, wv, sv};
  int id = cs_graph_add_node(g, CS_OP_K_DEQUANT_VECMATMUL, "fc", "fc", 3, in, 1, &y);
  int64_t args[3] = {M, K, N};
  CHECK(cs_node_set_attr_ints(&g->nodes[id], "mm_args", 3, args) == CS_OK);
  g->inputs = malloc(sizeof(int) * 2);
  g->inputs[0] = x;
  g->inputs[1] = wv;
  g->n_inputs = w_const ? 1 : 2;
  g->outputs = malloc(sizeof(int));
  g->outputs[0] = y;
  g->n_outputs = 1;
  cs_schedule_options o = {.arena_align = 64, .weights_align = 64, .weights_base = 64, .l2_budget = budget};
  cs_schedule s;
  cs_l2_stage st;
  memset(&st, 0xff, sizeof st);
  cs_status rc = cs_schedule_build(g, &o, &s);
  CHECK_MSG(rc == CS_OK, "schedule: %s", cs_error_message());
  if (rc == CS_OK) {
    st = s.l2[0];
    if (l2) *l2 = s.l2_size;
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
  return st;
}

/* The weight matrix cached when it fits the budget; else the most rows
 * whose two buffers fit, the fewest tiles, balanced; a row over half the
 * budget, or weights not in the blob: DDR. */
static void test_n_tiling(void) {
  size_t l2 = 0;
  char buf[320];
  /* a decode step's projection: 1 × 4096 · 4096 × 64, 256 KiB of weights */
  cs_l2_stage st = n_plan(1, 4096, 64, 1, 384 * 1024, &l2);
  CHECK(st.kind == CS_L2_N_TILED && st.n_chunks == 1 && st.chunk_cout == 64 && st.weight_off == 0);
  CHECK(st.weight_bytes == 262144 && st.weight_off2 == 0 && l2 == 262144);
  cs_l2_stage_describe(&st, 384 * 1024, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "N: weights 262144 B cached in L2 (activations 16384 B read from DDR)"), "%s", buf);
  /* 4096 × 256: 1 MiB > 384 KiB; 48 rows (196608 B) a buffer: 6 tiles,
   * balanced to 43 rows */
  st = n_plan(8, 4096, 256, 1, 384 * 1024, &l2);
  CHECK(st.kind == CS_L2_N_TILED && st.n_chunks == 6 && st.chunk_cout == 43);
  CHECK(st.weight_bytes == 43 * 4096 && st.weight_off == 0 && st.weight_off2 == 43 * 4096);
  CHECK(l2 == 2 * 43 * 4096);
  cs_l2_stage_describe(&st, 384 * 1024, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "N-tiled: weights 1048576 B > L2 budget 393216 B: 6 tiles of 43 output columns (176128 B), "
                        "double-buffered") != NULL, "%s", buf);
  /* one row's two buffers: exactly the budget; a byte less: DDR */
  st = n_plan(1, 1000, 16, 1, 1024 + 1000, NULL);
  CHECK(st.kind == CS_L2_N_TILED && st.chunk_cout == 1 && st.n_chunks == 16 && st.weight_off2 == 1024);
  st = n_plan(1, 1000, 16, 1, 1024 + 999, &l2);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_ROW && l2 == 0);
  cs_l2_stage_describe(&st, 2023, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "one weight row's two buffers do not fit") != NULL, "%s", buf);
  st = n_plan(1, 64, 64, 0, 384 * 1024, NULL);
  CHECK(st.kind == CS_L2_UNTILED && st.why == CS_L2_WHY_NOT_CONST);
}

/* Next-layer prefetch (l2plan.c): x → conv a (c0→c1) → conv b (c1→c2),
 * both 3×3 pad 1 on h×w, per-channel float requant. */
static int two_convs_relu; /* bit i: conv i with a ReLU folded in (H-tiled) */
static int two_convs_pool; /* 1: a 1×1 max pool (a light step) between them */
static int two_convs_m_out; /* 1: m is a model output too (it stays in DDR: no L2 activation) */

static cs_graph *two_convs(int c0, int c1, int c2, int hw) {
  cs_graph *g = cs_graph_new("two");
  int64_t xs[4] = {1, c0, hw, hw}, ms[4] = {1, c1, hw, hw}, ys[4] = {1, c2, hw, hw};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_I8, 4, xs);
  int m = cs_graph_add_value(g, "m", CS_DTYPE_I8, 4, ms);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 4, ys);
  int chans[3] = {c0, c1, c2}, vals[3] = {x, m, y};
  int pooled = m;
  if (two_convs_pool) {
    pooled = cs_graph_add_value(g, "mp", CS_DTYPE_I8, 4, ms);
    int id = cs_graph_add_node(g, CS_OP_K_MAXPOOL_I8, "pool", "pool", 1, &m, 1, &pooled);
    g->nodes[id].k.pool = (tidsp_pool2d_params){.n = 1, .c = c1, .h_in = hw, .w_in = hw, .h_out = hw, .w_out = hw,
                                                 .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1, .dil_h = 1,
                                                 .dil_w = 1};
  }
  for (int i = 0; i < 2; i++) {
    int64_t ws[4] = {chans[i + 1], chans[i], 3, 3}, cs[1] = {chans[i + 1]};
    void *zeros = calloc((size_t)(ws[0] * ws[1] * 9 + 8 * ws[0]), 1);
    char name[8] = {'w', (char)('a' + i), 0};
    int wv = cs_graph_add_const(g, name, CS_DTYPE_I8, 4, ws, zeros);
    name[0] = 'b';
    int b = cs_graph_add_const(g, name, CS_DTYPE_I32, 1, cs, zeros);
    name[0] = 'r';
    int rq = cs_graph_add_const(g, name, CS_DTYPE_F32, 1, cs, zeros);
    free(zeros);
    int in[4] = {i ? pooled : vals[i], wv, b, rq};
    name[0] = 'c';
    int id = cs_graph_add_node(g, CS_OP_K_CONV2D_I8, name, name, 4, in, 1, &vals[i + 1]);
    g->nodes[id].k.conv = (tidsp_conv2d_params){
        .n = 1, .c_in = chans[i], .h_in = hw, .w_in = hw, .c_out = chans[i + 1], .h_out = hw, .w_out = hw,
        .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1,
        .groups = 1,
        .rq = {.kind = TIDSP_REQUANT_FLOAT, .per_channel = 1, .out_min = -128, .out_max = 127,
               .out_zp = two_convs_relu >> i & 1 ? -128 : 0}};
  }
  g->inputs = malloc(sizeof(int));
  g->inputs[0] = x;
  g->n_inputs = 1;
  g->outputs = malloc(sizeof(int) * 2);
  g->outputs[0] = y;
  g->outputs[1] = m;
  g->n_outputs = 1 + two_convs_m_out;
  return g;
}

static void prefetch_case(int c0, int c1, int c2, int hw, size_t budget, cs_l2_stage out[2], size_t *l2) {
  cs_graph *g = two_convs(c0, c1, c2, hw);
  cs_schedule_options o = {.arena_align = 64, .weights_align = 64, .weights_base = 64, .l2_budget = budget};
  cs_schedule s;
  cs_status rc = cs_schedule_build(g, &o, &s);
  CHECK_MSG(rc == CS_OK, "schedule: %s", cs_error_message());
  if (rc == CS_OK) {
    CHECK(s.n_steps == 2 + two_convs_pool);
    out[0] = s.l2[0];
    out[1] = s.l2[1 + two_convs_pool];
    *l2 = s.l2_size;
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

static void test_next_layer_prefetch(void) {
  cs_l2_stage st[2];
  size_t l2 = 0;
  two_convs_m_out = 1; /* the plans as they are when a's output is not placed in L2 */
  /* a uses no L2 (it fits half the budget): b's tile 0 in its own place */
  prefetch_case(3, 128, 128, 28, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_UNTILED && st[0].prefetch_next == 2 && !st[0].prefetch);
  CHECK(st[1].kind == CS_L2_OC_TILED && st[1].prefetch && st[1].prefetch_next == 0);
  CHECK(st[1].weight_off == IN && st[1].weight_off2 == IN + 64 * ROW && l2 == IN + 128 * ROW);
  /* both OC-tiled: b's tile 0 moves above a's footprint (247808 B), where
   * the budget has room for it */
  prefetch_case(128, 128, 128, 28, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_OC_TILED && st[0].prefetch_next == 2 && !st[0].prefetch);
  CHECK(st[1].kind == CS_L2_OC_TILED && st[1].prefetch);
  CHECK(st[1].weight_off == IN + 128 * ROW && st[1].weight_off2 == IN + 64 * ROW);
  CHECK(l2 == IN + 192 * ROW && l2 <= 384 * 1024);
  /* no room above a's footprint: not prefetched, b keeps its place */
  prefetch_case(128, 512, 128, 14, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_OC_TILED && st[1].kind == CS_L2_OC_TILED);
  CHECK(st[0].prefetch_next == 0 && !st[1].prefetch && st[1].weight_off == 100352);
  /* with ReLUs: b H-tiled (2 tiles of 14 rows, weights 147456 B in L2 at
   * 207872), its weights prefetched while a (untiled) computes */
  two_convs_relu = 3;
  prefetch_case(3, 128, 128, 28, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_UNTILED && st[0].prefetch_next == 2);
  CHECK(st[1].kind == CS_L2_H_TILED && st[1].prefetch && st[1].weight_off == 207872 && st[1].weight_bytes == 128 * ROW);
  /* both H-tiled: b's weights must go above a's footprint (355328 B): no
   * room in 384 KiB, so b copies them itself */
  prefetch_case(128, 128, 128, 28, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_H_TILED && st[1].kind == CS_L2_H_TILED);
  CHECK(st[0].prefetch_next == 0 && !st[1].prefetch && st[1].weight_off == 207872);
  /* room made for the prefetch (make_room_for_prefetch): a (64→64 on
   * 56×56, the ReLU stack's conv1) takes 3 tiles, 323584 B, past b's
   * weight buffer (315392: b's strips and output rows under it), and b's
   * 73728 B would end at 397312 above it. With one tile more (4 of 14
   * rows, 251904 B) they fit in their own place: prefetched while a runs */
  prefetch_case(64, 64, 128, 56, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_H_TILED && st[1].kind == CS_L2_H_TILED);
  CHECK_MSG(st[0].n_chunks == 4 && st[0].tile_rows == 14 && st[0].weight_bytes == 64 * 576, "%d of %d",
            st[0].n_chunks, st[0].tile_rows);
  CHECK(st[1].prefetch && st[0].prefetch_next == 2 && st[1].weight_off == 315392 && st[1].weight_bytes == 73728);
  /* ... one tile more only: a's 2 tiles (128→128 on 28×28, above) would
   * need 6 to leave room for b's 147456 B: not re-planned (checked above) */
  /* ResNet-18's layer4 pair: a (ReLU) H-tiled with its weights in DDR,
   * its footprint (2 strips of 17920 B, 2 output tiles of 14336 B: 64512
   * B) past b's first weight buffer (at the input's end, 25088) but below
   * its second (25088 + 37 channels · 4608 B = 195584): b's tile 0 is
   * prefetched into the second buffer, the buffers swap roles, b's L2
   * stays its own */
  two_convs_relu = 1;
  prefetch_case(512, 512, 512, 7, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_H_TILED && st[0].weight_bytes == 0 && st[1].kind == CS_L2_OC_TILED);
  CHECK(st[0].prefetch_next == 2 && st[1].prefetch && st[1].chunk_cout == 37);
  CHECK_MSG(st[1].weight_off == 195584 && st[1].weight_off2 == 25088, "%zu %zu", st[1].weight_off, st[1].weight_off2);
  CHECK(l2 == 195584 + 37 * 4608); /* 366080, a multiple of 128 */
  two_convs_relu = 0;
  /* a light step (a pool) between a and b: b's tile 0 is copied while a
   * computes (issued before a: a's prefetch_next), not before the pool,
   * which would be over before the copy starts */
  two_convs_pool = 1;
  prefetch_case(3, 128, 128, 28, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_UNTILED && st[0].prefetch_next == 3 && st[1].prefetch);
  CHECK(st[1].kind == CS_L2_OC_TILED && st[1].weight_off == IN);
  /* ... unless a's footprint covers the buffer: then before the pool */
  prefetch_case(128, 128, 128, 28, 384 * 1024, st, &l2);
  CHECK(st[0].kind == CS_L2_OC_TILED && st[0].prefetch_next == 0 && st[1].prefetch);
  two_convs_pool = 0;
  two_convs_m_out = 0;
}

/* An activation placed in L2 (dma_tiling_resident.c): a's output m, read
 * by b alone, at the top of the budget; b's weight buffers under it. */
static void test_resident_activation(void) {
  cs_l2_stage st[2];
  size_t l2 = 0;
  enum { B = 384 * 1024 };
  /* a untiled, b OC-tiled (the spec stack's conv2 → conv3): m (100352 B)
   * at 292864, tile 0's buffer under it, tile 1's under that; tile 0
   * prefetched in place while a computes (a uses no L2) */
  prefetch_case(3, 128, 128, 28, B, st, &l2);
  CHECK(st[0].kind == CS_L2_UNTILED && st[0].out_l2 && st[0].out_l2_off == B - IN && st[0].prefetch_next == 2);
  CHECK(st[1].kind == CS_L2_OC_TILED && st[1].in_l2 && st[1].input_off == B - IN && st[1].prefetch);
  CHECK(st[1].weight_off == B - IN - 64 * ROW && st[1].weight_off2 == B - IN - 128 * ROW && l2 == B);
  char buf[384];
  cs_l2_stage_describe(&st[1], B, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "input written into L2 by the previous layer (no copy)") != NULL, "%s", buf);
  cs_l2_stage_describe(&st[0], B, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "; output written into L2 at 292864 for the next layer") != NULL, "%s", buf);
  /* m a model output too: it stays where the caller reads it */
  two_convs_m_out = 1;
  prefetch_case(3, 128, 128, 28, B, st, &l2);
  CHECK(!st[0].out_l2 && !st[1].in_l2 && st[1].input_off == 0);
  two_convs_m_out = 0;
  /* a light step between: m is the pool's input, b reads the pool's
   * output (not written by a conv): nothing placed */
  two_convs_pool = 1;
  prefetch_case(3, 128, 128, 28, B, st, &l2);
  CHECK(!st[0].out_l2 && !st[1].in_l2 && st[1].input_off == 0);
  two_convs_pool = 0;
  /* ResNet-18's layer4 pair: a H-tiled (footprint 64512 B) fits under
   * b's tile-0 buffer as planned: m (25088 B) at 368128, b's buffers at
   * 197632 and 27136 (37 channels · 4608 B), tile 0 prefetched */
  two_convs_relu = 1;
  prefetch_case(512, 512, 512, 7, B, st, &l2);
  CHECK(st[0].kind == CS_L2_H_TILED && st[0].out_l2 && st[0].out_l2_off == 368128 && st[0].n_chunks == 2);
  CHECK(st[1].kind == CS_L2_OC_TILED && st[1].in_l2 && st[1].chunk_cout == 37 && st[1].prefetch);
  CHECK_MSG(st[1].weight_off == 197632 && st[1].weight_off2 == 27136, "%zu %zu", st[1].weight_off,
            st[1].weight_off2);
  /* a H-tiled with its weights (147456 B) in L2, 2 tiles: under tile 0's
   * buffer (219136) it would need 7 tiles (> twice 2), so it is re-planned
   * under m alone (292864: 4 tiles of 7 rows), tile 0 not prefetched */
  prefetch_case(128, 128, 128, 28, B, st, &l2);
  CHECK_MSG(st[0].kind == CS_L2_H_TILED && st[0].out_l2 && st[0].n_chunks == 4 && st[0].tile_rows == 7 &&
                st[0].weight_bytes == 128 * ROW,
            "%d tiles of %d", st[0].n_chunks, st[0].tile_rows);
  CHECK(cs_l2_footprint_end(&st[0]) <= B - IN && cs_l2_footprint_end(&st[0]) > B - IN - 64 * ROW);
  CHECK(st[1].in_l2 && !st[1].prefetch && st[0].prefetch_next == 0);
  /* b with a ReLU too (H-tiled on its own): with its input resident it has
   * no strips to tile, so it takes its OC plan (2 tiles of 64) */
  two_convs_relu = 3;
  prefetch_case(128, 128, 128, 28, B, st, &l2);
  CHECK(st[0].kind == CS_L2_H_TILED && st[0].out_l2 && st[0].n_chunks == 4);
  CHECK(st[1].kind == CS_L2_OC_TILED && st[1].in_l2 && st[1].chunk_cout == 64 && st[1].input_off == B - IN);
  /* ... but not when its input is a model output too: H as before */
  two_convs_m_out = 1;
  prefetch_case(128, 128, 128, 28, B, st, &l2);
  CHECK(st[0].kind == CS_L2_H_TILED && !st[0].out_l2 && st[1].kind == CS_L2_H_TILED && !st[1].in_l2);
  two_convs_m_out = 0;
  two_convs_relu = 0;
}

int main(void) {
  test_next_layer_prefetch();
  test_resident_activation();
  test_not_tiled_when_half_the_budget_holds_it();
  test_oc_tiles_the_fewest_that_fit_balanced();
  test_input_over_half_the_budget_reads_ddr();
  test_declines();
  test_h_tiling_of_a_fused_conv();
  test_h_tiling_declines();
  test_n_tiling();
  UNIT_MAIN_END();
}
