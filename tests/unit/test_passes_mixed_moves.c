/*
 * test_passes_mixed_moves.c — EliminateQDQMixedMoves on ShuffleNetV2's
 * unit as PT2E exports it: Concat(DQ_a, DQ_b) → channel shuffle (Reshape,
 * Transpose, Reshape) → Split, one half through a Q, the other into a second
 * Concat with DQ_a again, then a Q. The moves run on int8 and each Q is a
 * k_lut_i8_select, with the float path's bytes. Declines (the moves stay
 * float): a Q whose input's sources vary along another axis than the
 * channels (a Transpose that puts the channels last), a float reader (the
 * shuffled tensor as a graph output; that graph is also the reference).
 */
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "unit.h"

enum { C = 6, H = 3, W = 4, N = C * H * W };

typedef struct spec {
  int channels_last; /* a Transpose putting the channels last before the first Q */
  int float_out;     /* the shuffled float tensor is a graph output too */
} spec;

static int qdq(cs_graph *g, const char *name, int x, float s, int z) {
  char a[64], b[64], c[64], d[64], e[64];
  snprintf(a, sizeof a, "%s.q", name);
  snprintf(b, sizeof b, "%s.dq", name);
  snprintf(c, sizeof c, "%s.s", name);
  snprintf(d, sizeof d, "%s.z", name);
  snprintf(e, sizeof e, "%s.s2", name);
  int q = gb_q(g, a, x, gb_scalar_f32(g, c, s), gb_scalar_i8(g, d, (int8_t)z));
  snprintf(d, sizeof d, "%s.z2", name);
  return gb_dq(g, b, q, gb_scalar_f32(g, e, s), gb_scalar_i8(g, d, (int8_t)z));
}

static int shape_const(cs_graph *g, const char *name, int rank, const int64_t *dims) {
  int64_t n = rank;
  return cs_graph_add_const(g, name, CS_DTYPE_I64, 1, &n, dims);
}

static int transpose(cs_graph *g, const char *name, int x, int rank, const int64_t *perm, const int64_t *shape) {
  int id, y = gb_node(g, CS_OP_TRANSPOSE, name, 1, &x, CS_DTYPE_F32, rank, shape, &id);
  CHECK(cs_node_set_attr_ints(cs_graph_node(g, id), "perm", rank, perm) == CS_OK);
  return y;
}

/* a, b: f32 [1, C, H, W] → y0 = QDQ(half 1 of the shuffle), y1 = QDQ(Concat(half 0, DQ_a)) */
static cs_graph *unit_graph(const spec *s) {
  cs_graph *g = cs_graph_new("shuffle");
  int64_t xs[4] = {1, C, H, W}, cat[4] = {1, 2 * C, H, W}, r5[5] = {1, 2, C, H, W}, t5[5] = {1, C, 2, H, W};
  int a = gb_value(g, "a", CS_DTYPE_F32, 4, xs), b = gb_value(g, "b", CS_DTYPE_F32, 4, xs);
  int da = qdq(g, "a", a, 0.05f, 3), db = qdq(g, "b", b, 0.031f, -7);
  int id, in[2] = {da, db};
  int c = gb_node(g, CS_OP_CONCAT, "cat", 2, in, CS_DTYPE_F32, 4, cat, &id);
  cs_node_set_attr_int(cs_graph_node(g, id), "axis", 1);
  int rin[2] = {c, shape_const(g, "r5", 5, r5)};
  int r = gb_node(g, CS_OP_RESHAPE, "view", 2, rin, CS_DTYPE_F32, 5, r5, NULL);
  const int64_t perm5[5] = {0, 2, 1, 3, 4};
  int t = transpose(g, "shuffle", r, 5, perm5, t5);
  int rin2[2] = {t, shape_const(g, "r4", 4, cat)};
  int sh = gb_node(g, CS_OP_RESHAPE, "view2", 2, rin2, CS_DTYPE_F32, 4, cat, NULL);
  int halves[2] = {gb_value(g, "half0", CS_DTYPE_F32, 4, xs), gb_value(g, "half1", CS_DTYPE_F32, 4, xs)};
  id = cs_graph_add_node(g, CS_OP_SPLIT, "split", "split", 1, &sh, 2, halves);
  cs_node_set_attr_int(cs_graph_node(g, id), "axis", 1);
  int to_q = halves[1];
  if (s->channels_last) {
    const int64_t perm4[4] = {0, 2, 3, 1}, cl[4] = {1, H, W, C};
    to_q = transpose(g, "to_nhwc", to_q, 4, perm4, cl);
  }
  int y0 = qdq(g, "y0", to_q, 0.04f, -5);
  int in2[2] = {halves[0], da};
  int c2 = gb_node(g, CS_OP_CONCAT, "cat2", 2, in2, CS_DTYPE_F32, 4, cat, &id);
  cs_node_set_attr_int(cs_graph_node(g, id), "axis", 1);
  int y1 = qdq(g, "y1", c2, 0.07f, 2);
  int ins[2] = {a, b}, outs[3] = {y0, y1, sh};
  gb_set_io(g, 2, ins, s->float_out ? 3 : 2, outs);
  return g;
}

/* Compile and run; y0's and y1's bytes (malloc'd, y0 then y1), how many
 * k_lut_i8_select and float moves (f32 transposes) remain. */
static float *run(const spec *s, int *selects, int *float_moves) {
  cs_graph *g = unit_graph(s);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  *selects = gb_count_op(g, CS_OP_K_LUT_I8_SELECT);
  *float_moves = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].op == CS_OP_K_TRANSPOSE)
      *float_moves += cs_graph_value(g, g->nodes[i].outputs[0])->dtype == CS_DTYPE_F32;
  float a[N], b[N];
  for (int i = 0; i < N; i++) {
    a[i] = 0.37f * (float)((i * 7) % 23 - 11);
    b[i] = 0.21f * (float)((i * 5) % 19 - 9);
  }
  const void *in[2] = {a, b};
  int32_t st;
  void **buf = gb_run(g, in, &st);
  CHECK_MSG(st == 0, "run status %d", st);
  float *y = malloc(sizeof(float) * 3 * N);
  memcpy(y, buf[g->outputs[0]], sizeof(float) * N);
  memcpy(y + N, buf[g->outputs[1]], sizeof(float) * 2 * N);
  gb_free_run(g, buf);
  cs_graph_free(g);
  return y;
}

static void check(spec s, int want_selects, const char *what) {
  int selects, moves, ref_selects, ref_moves;
  float *y = run(&s, &selects, &moves);
  s.float_out = 1; /* the reference: every move declined, the float path */
  float *yf = run(&s, &ref_selects, &ref_moves);
  CHECK_MSG(selects == want_selects && (want_selects ? moves == 0 : moves > 0) && ref_selects == 0 && ref_moves > 0,
            "%s: %d selects, %d float transposes (want %d selects); reference %d, %d", what, selects, moves,
            want_selects, ref_selects, ref_moves);
  CHECK_MSG(!memcmp(y, yf, sizeof(float) * 3 * N), "%s: bytes differ from the float path", what);
  free(y);
  free(yf);
}

/* The kernel on its own: the index picks the table, a bad index or shape
 * writes nothing. */
static void test_kernel(void) {
  int8_t luts[3 * 256], table[4] = {2, 0, 2, 1}, x[2 * 4 * 5], y[2 * 4 * 5], want[2 * 4 * 5];
  for (int i = 0; i < 3 * 256; i++) luts[i] = (int8_t)((i * 37 + i / 256 * 11) % 256 - 128);
  for (int i = 0; i < 40; i++) x[i] = (int8_t)(i * 29 % 256 - 128);
  for (int i = 0; i < 40; i++) want[i] = luts[table[i / 5 % 4] * 256 + x[i] + 128];
  tidsp_lut_select_params p = {40, 4, 5, 3};
  CHECK(tidsp_lut_i8_select(&p, luts, table, x, y) == TIDSP_OK && !memcmp(y, want, sizeof y));
  memcpy(y, x, sizeof y);
  CHECK(tidsp_lut_i8_select(&p, luts, table, y, y) == TIDSP_OK && !memcmp(y, want, sizeof y)); /* in place */
  memset(y, 0x5a, sizeof y);
  p.tables = 2; /* table[0] = 2 is out of range */
  CHECK(tidsp_lut_i8_select(&p, luts, table, x, y) == TIDSP_ERR_PARAM && y[0] == 0x5a && y[39] == 0x5a);
  p.tables = 3;
  p.n = 30; /* not a multiple of channels·inner */
  CHECK(tidsp_lut_i8_select(&p, luts, table, x, y) == TIDSP_ERR_SHAPE && y[0] == 0x5a);
  p.n = 40;
  CHECK(tidsp_lut_i8_select(&p, luts, NULL, x, y) == TIDSP_ERR_NULL);
}

int main(void) {
  test_kernel();
  check((spec){0, 0}, 2, "the shuffle unit");
  check((spec){1, 0}, 0, "channels last before a Q");
  UNIT_MAIN_END();
}
