/*
 * test_passes_binary_table.c — FuseQDQToActivationLUT on a float Add, Sub,
 * Mul or Div with a one-element float constant between DQ and Q (PP-OCR's
 * hard-swish ends in DQ → Div(6) → Q): one int8 table (k_lut_i8) whose
 * bytes are the float path's — the same graph with the constant a graph
 * input, which the pass cannot table, runs DQ → k_binary_f32 → Q. Every
 * int8 code is an input; the constant on either side; constants that give
 * ±inf and NaN (a division by zero), negative ones, and several
 * quantizations. Declines: a constant that varies along W, Pow, a Q-less
 * op.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "unit.h"

enum { H = 16, W = 16 };

typedef struct spec {
  cs_op op;
  int c_first;  /* c op x */
  float c;
  int c_input;  /* the constant a graph input: the float path */
  int c_row;    /* the constant [W]: one value per column */
  int no_q;     /* the op's output is the graph's (float) output */
  float in_s, out_s;
  int in_zp, out_zp;
} spec;

/* x:i8 [1, 1, H, W] → DQ → op(c) → Q → y:i8 */
static cs_graph *binary_graph(const spec *s) {
  cs_graph *g = cs_graph_new("binary");
  int64_t xs[4] = {1, 1, H, W}, one[1] = {1}, row[1] = {W};
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int dq = gb_dq(g, "dq", x, gb_scalar_f32(g, "s_in", s->in_s), gb_scalar_i8(g, "z_in", (int8_t)s->in_zp));
  float cc[W];
  for (int i = 0; i < W; i++) cc[i] = s->c + (float)i;
  int c = s->c_input ? gb_value(g, "c", CS_DTYPE_F32, 1, one)
                     : cs_graph_add_const(g, "c", CS_DTYPE_F32, 1, s->c_row ? row : one, cc);
  int in[2] = {s->c_first ? c : dq, s->c_first ? dq : c};
  int a = gb_node(g, s->op, "op", 2, in, CS_DTYPE_F32, 4, xs, NULL);
  int y = s->no_q ? a : gb_q(g, "q", a, gb_scalar_f32(g, "s_out", s->out_s), gb_scalar_i8(g, "z_out", (int8_t)s->out_zp));
  int ins[2] = {x, c};
  gb_set_io(g, s->c_input ? 2 : 1, ins, 1, &y);
  return g;
}

/* Compile and run on all 256 int8 codes; returns the output's bytes
 * (malloc'd, *n of them). */
static void *run(const spec *s, int *n_tables, int *n_float, size_t *n) {
  cs_graph *g = binary_graph(s);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  *n_tables = gb_count_op(g, CS_OP_K_LUT_I8);
  *n_float = gb_count_op(g, CS_OP_K_BINARY_F32);
  int8_t x[H * W];
  for (int i = 0; i < H * W; i++) x[i] = (int8_t)((i * 37) % 256 - 128);
  const void *in[2] = {x, &s->c};
  int32_t st;
  void *y = gb_run_output(g, in, &st, n);
  CHECK_MSG(st == 0, "run status %d", st);
  cs_graph_free(g);
  return y;
}

static void test_table_equals_float_path(void) {
  static const cs_op ops[4] = {CS_OP_ADD, CS_OP_SUB, CS_OP_MUL, CS_OP_DIV};
  static const float consts[4] = {6.0f, -0.37f, 3.0f, 0.0f};
  static const float scales[3][2] = {{0.05f, 0.1f}, {0.013f, 0.2f}, {0.4f, 0.02f}};
  static const int zps[3][2] = {{0, 0}, {-17, 9}, {100, -128}};
  for (int o = 0; o < 4; o++)
    for (int first = 0; first < 2; first++)
      for (int k = 0; k < 4; k++)
        for (int q = 0; q < 3; q++) {
          spec s = {ops[o], first, consts[k], 0, 0, 0, scales[q][0], scales[q][1], zps[q][0], zps[q][1]};
          int tables, floats, tf, ff;
          size_t n, nf;
          void *y = run(&s, &tables, &floats, &n);
          s.c_input = 1;
          void *yf = run(&s, &tf, &ff, &nf);
          CHECK_MSG(tables == 1 && floats == 0 && tf == 0 && ff == 1, "%s c_first %d c %g q %d: tables %d/%d, float %d/%d",
                    cs_op_name(ops[o]), first, (double)consts[k], q, tables, tf, floats, ff);
          CHECK_MSG(n == nf && !memcmp(y, yf, n), "%s c_first %d c %g q %d: the table differs from the float path",
                    cs_op_name(ops[o]), first, (double)consts[k], q);
          free(y);
          free(yf);
        }
}

static void test_declines(void) {
  /* a constant per column; Pow (the C library's powf); no Q after */
  const spec cases[3] = {
      {CS_OP_DIV, 0, 6.0f, 0, 1, 0, 0.05f, 0.1f, 0, 0},
      {CS_OP_POW, 0, 2.0f, 0, 0, 0, 0.05f, 0.1f, 0, 0},
      {CS_OP_DIV, 0, 6.0f, 0, 0, 1, 0.05f, 0.1f, 0, 0},
  };
  for (int v = 0; v < 3; v++) {
    int tables, floats;
    size_t n;
    free(run(&cases[v], &tables, &floats, &n));
    CHECK_MSG(tables == 0 && floats == 1, "decline %d: tables %d, float %d", v, tables, floats);
  }
}

int main(void) {
  test_table_equals_float_path();
  test_declines();
  UNIT_MAIN_END();
}
