/*
 * test_passes_prelu_lut.c — FuseQDQPReluLUT: a PRelu between DQ and Q is
 * one int8 table per channel (k_lut_i8_channels), also with a MaxPool
 * between the PRelu and the Q (the pool then runs on int8), and gives the
 * float path's bytes: the same graph with the slope a graph input (which
 * the pass cannot table) runs DQ → k_prelu_f32 → [k_maxpool_f32] → Q.
 * Every int8 code reaches every channel; slopes negative, zero, above one.
 * A Transpose → Reshape between the PRelu and the Q (R-Net's, before its
 * fully connected layer) is taken too. Declines: a slope that varies along
 * W, a Q-less PRelu, a tensor with too few elements per channel to pay for
 * its tables.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "unit.h"

enum { C = 5, H = 16, W = 16 };

typedef struct spec {
  int pool;        /* MaxPool 2x2 stride 2 between the PRelu and the Q */
  int slope_input; /* the slope a graph input: the float path */
  int slope_w;     /* the slope [1, 1, W]: varies along W */
  int no_q;        /* the PRelu's output is the graph's (float) output */
  float in_s, out_s;
  int in_zp, out_zp;
  int empty; /* H = 0: no element */
  int move;  /* Transpose (0, 2, 3, 1) → Reshape [1, C·H·W] between the PRelu and the Q */
  int small; /* H = W = 2: 4 elements a channel, fewer than its table costs */
} spec;

static const float kSlope[C] = {-0.75f, 0.0f, 0.25f, 1.5f, -3.0f};

/* x:i8 [1, C, H, W] → DQ → PRelu(slope) → [MaxPool] → Q → y:i8 */
static cs_graph *prelu_graph(const spec *s) {
  cs_graph *g = cs_graph_new("prelu");
  int h = s->empty ? 0 : s->small ? 2 : H, w = s->small ? 2 : W;
  int64_t xs[4] = {1, C, h, w}, ps[4] = {1, C, h / 2, w / 2};
  int64_t ss[3] = {C, 1, 1}, sw[3] = {1, 1, W};
  float slope_w[W];
  for (int i = 0; i < W; i++) slope_w[i] = 0.1f * (float)(i - 8);
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int dq = gb_dq(g, "dq", x, gb_scalar_f32(g, "s_in", s->in_s), gb_scalar_i8(g, "z_in", (int8_t)s->in_zp));
  int slope = s->slope_input ? gb_value(g, "slope", CS_DTYPE_F32, 3, ss)
              : s->slope_w   ? cs_graph_add_const(g, "slope", CS_DTYPE_F32, 3, sw, slope_w)
                             : cs_graph_add_const(g, "slope", CS_DTYPE_F32, 3, ss, kSlope);
  int pin[2] = {dq, slope};
  int a = gb_node(g, CS_OP_PRELU, "prelu", 2, pin, CS_DTYPE_F32, 4, xs, NULL);
  if (s->pool) {
    int64_t k[2] = {2, 2}, pads[4] = {0, 0, 0, 0};
    int pool_id;
    a = gb_node(g, CS_OP_MAX_POOL, "pool", 1, &a, CS_DTYPE_F32, 4, ps, &pool_id);
    cs_node_set_attr_ints(cs_graph_node(g, pool_id), "kernel_shape", 2, k);
    cs_node_set_attr_ints(cs_graph_node(g, pool_id), "strides", 2, k);
    cs_node_set_attr_ints(cs_graph_node(g, pool_id), "pads", 4, pads);
  }
  if (s->move) {
    int64_t perm[4] = {0, 2, 3, 1}, ts[4] = {1, h, w, C}, flat[2] = {1, (int64_t)C * h * w}, two[1] = {2};
    int t_id;
    a = gb_node(g, CS_OP_TRANSPOSE, "transpose", 1, &a, CS_DTYPE_F32, 4, ts, &t_id);
    cs_node_set_attr_ints(cs_graph_node(g, t_id), "perm", 4, perm);
    int rin[2] = {a, cs_graph_add_const(g, "flat", CS_DTYPE_I64, 1, two, flat)};
    a = gb_node(g, CS_OP_RESHAPE, "reshape", 2, rin, CS_DTYPE_F32, 2, flat, NULL);
  }
  int y = s->no_q ? a : gb_q(g, "q", a, gb_scalar_f32(g, "s_out", s->out_s), gb_scalar_i8(g, "z_out", (int8_t)s->out_zp));
  int ins[2] = {x, slope};
  gb_set_io(g, s->slope_input ? 2 : 1, ins, 1, &y);
  return g;
}

/* Compile and run on an input where every channel holds every int8
 * code (H·W = 256); returns the output's bytes (malloc'd, *n of them). */
static void *run(const spec *s, int *n_tables, int *n_float, size_t *n) {
  cs_graph *g = prelu_graph(s);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  *n_tables = gb_count_op(g, CS_OP_K_LUT_I8_CHANNELS);
  *n_float = gb_count_op(g, CS_OP_K_PRELU_F32);
  int8_t x[C * H * W];
  for (int c = 0; c < C; c++)
    for (int i = 0; i < H * W; i++) x[c * H * W + i] = (int8_t)((i * 37 + c * 11) % 256 - 128);
  const void *in[2] = {x, kSlope};
  int32_t st;
  void *y = gb_run_output(g, in, &st, n);
  CHECK_MSG(st == 0, "run status %d", st);
  cs_graph_free(g);
  return y;
}

static void test_table_equals_float_path(void) {
  const float scales[3][2] = {{0.05f, 0.1f}, {0.013f, 0.2f}, {0.4f, 0.02f}};
  const int zps[3][2] = {{0, 0}, {-17, 9}, {100, -128}};
  /* between the PRelu and the Q: nothing, a MaxPool, a Transpose → Reshape */
  for (int between = 0; between < 3; between++)
    for (int q = 0; q < 3; q++) {
      spec s = {between == 1, 0, 0, 0, scales[q][0], scales[q][1], zps[q][0], zps[q][1], 0, between == 2, 0};
      int tables, floats, tf, ff;
      size_t n, nf;
      void *y = run(&s, &tables, &floats, &n);
      s.slope_input = 1;
      void *yf = run(&s, &tf, &ff, &nf);
      CHECK_MSG(tables == 1 && floats == 0 && tf == 0 && ff == 1, "between %d, q %d: tables %d/%d, float %d/%d",
                between, q, tables, tf, floats, ff);
      CHECK_MSG(n == nf && !memcmp(y, yf, n), "between %d, q %d: the table differs from the float path", between,
                q);
      free(y);
      free(yf);
    }
}

/* An empty tensor (H = 0): no element pays for a table; the float path
 * runs on nothing. */
static void test_empty(void) {
  spec s = {0, 0, 0, 0, 0.05f, 0.1f, 0, 0, 1, 0, 0};
  int tables, floats;
  size_t n;
  free(run(&s, &tables, &floats, &n));
  CHECK_MSG(tables == 0 && floats == 1 && n == 0, "empty: tables %d, float %d, %zu bytes", tables, floats, n);
}

static void test_declines(void) {
  /* the slope varies along W; the PRelu's output is not quantized; 4
   * elements a channel (C·256 table bytes > 18 per element) */
  for (int v = 0; v < 3; v++) {
    spec s = {0, 0, v == 0, v == 1, 0.05f, 0.1f, 0, 0, 0, 0, v == 2};
    int tables, floats;
    size_t n;
    free(run(&s, &tables, &floats, &n));
    CHECK_MSG(tables == 0 && floats == 1, "decline %d: tables %d, float %d", v, tables, floats);
  }
}

static void test_kernel(void) {
  enum { CH = 3, IN = 7, OUTER = 2, N = OUTER * CH * IN };
  int8_t lut[CH * 256], x[N], y[N];
  for (int c = 0; c < CH; c++)
    for (int i = 0; i < 256; i++) lut[c * 256 + i] = (int8_t)((i * (c + 2)) % 256 - 128);
  for (int i = 0; i < N; i++) x[i] = (int8_t)((i * 53) % 256 - 128);
  tidsp_lut_channels_params p = {N, CH, IN};
  CHECK(tidsp_lut_i8_channels(&p, lut, x, y) == TIDSP_OK);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += y[i] != lut[((i / IN) % CH) * 256 + x[i] + 128];
  CHECK_MSG(bad == 0, "%d outputs not their channel's table entry", bad);
  int8_t z[N];
  memcpy(z, x, sizeof z);
  CHECK(tidsp_lut_i8_channels(&p, lut, z, z) == TIDSP_OK && !memcmp(z, y, sizeof z)); /* in place */
  /* n not a multiple of channels·inner, no channels, no table: refused,
   * nothing written */
  tidsp_lut_channels_params bad_p[3] = {{N - 1, CH, IN}, {N, 0, IN}, {N, CH, 0}};
  for (int k = 0; k < 3; k++) {
    memset(z, 7, sizeof z);
    CHECK(tidsp_lut_i8_channels(&bad_p[k], lut, x, z) == TIDSP_ERR_SHAPE && z[0] == 7 && z[N - 1] == 7);
  }
  CHECK(tidsp_lut_i8_channels(&p, NULL, x, y) == TIDSP_ERR_NULL);
}

int main(void) {
  test_kernel();
  test_table_equals_float_path();
  test_declines();
  test_empty();
  UNIT_MAIN_END();
}
