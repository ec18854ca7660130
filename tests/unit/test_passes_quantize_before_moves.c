/*
 * test_passes_quantize_before_moves.c — QuantizeBeforeMoves on Swin's
 * chain as PT2E exports it, small: a float tensor (here the graph input,
 * as a LayerNorm's output would be) → Pad → roll (Slice, Slice, Concat) →
 * window partition (Reshape, Transpose, Reshape) → Q. The Q goes before
 * the moves, which run on int8 (a Pad of 0 pads the zero point), with the
 * float path's bytes. Declines (the moves stay float): a float reader of
 * the moves (a graph output; that graph is also the reference), two Qs
 * with different parameters after them, a Slice that keeps too little of
 * its input to pay for quantizing all of it, a Mul before the moves (an
 * int8 Mul fused with the new Q would not give the float path's bytes), a
 * Relu of that Mul (the fusion's tail), a Reshape alone (a view: the later
 * passes fuse op → Reshape → Q whole).
 */
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "unit.h"

enum { H = 4, W = 6, C = 3, PH = H + 2, N_IN = H * W * C, N_OUT = PH * W * C };

typedef enum { PLAIN, FLOAT_OUT, TWO_QS, CORNER, AFTER_MUL, AFTER_MUL_RELU, RESHAPE_ONLY } variant;

static int i64s(cs_graph *g, const char *name, int n, const int64_t *v) {
  int64_t len = n;
  return cs_graph_add_const(g, name, CS_DTYPE_I64, 1, &len, v);
}

static int slice(cs_graph *g, const char *name, int x, int64_t start, int64_t end, int64_t axis, int rank,
                 const int64_t *shape) {
  char a[64], b[64], c[64];
  snprintf(a, sizeof a, "%s.starts", name);
  snprintf(b, sizeof b, "%s.ends", name);
  snprintf(c, sizeof c, "%s.axes", name);
  int in[4] = {x, i64s(g, a, 1, &start), i64s(g, b, 1, &end), i64s(g, c, 1, &axis)};
  return gb_node(g, CS_OP_SLICE, name, 4, in, CS_DTYPE_F32, rank, shape, NULL);
}

/* x:f32 [1, H, W, C] → Pad rows (1, 1) → roll rows by 1 → [1, 2, 3, 2, 3, C] windows → Q → DQ = y */
static cs_graph *chain(variant v) {
  cs_graph *g = cs_graph_new("roll");
  int64_t xs[4] = {1, H, W, C}, ps[4] = {1, PH, W, C}, top[4] = {1, 1, W, C}, rest[4] = {1, PH - 1, W, C};
  int64_t w6[6] = {1, 2, PH / 2, 2, W / 2, C}, t6[6] = {1, 2, 2, PH / 2, W / 2, C}, win[3] = {4, PH / 2 * W / 2, C};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  const int64_t pads[8] = {0, 1, 0, 0, 0, 1, 0, 0};
  int src = x, id;
  if (v == AFTER_MUL || v == AFTER_MUL_RELU) {
    int min[2] = {x, x};
    src = gb_node(g, CS_OP_MUL, "square", 2, min, CS_DTYPE_F32, 4, xs, NULL);
    if (v == AFTER_MUL_RELU) src = gb_node(g, CS_OP_RELU, "relu", 1, &src, CS_DTYPE_F32, 4, xs, NULL);
  }
  int pin[2] = {src, i64s(g, "pads", 8, pads)};
  int p = gb_node(g, CS_OP_PAD, "pad", 2, pin, CS_DTYPE_F32, 4, ps, &id);
  CHECK(cs_node_set_attr_string(cs_graph_node(g, id), "mode", "constant", 8) == CS_OK);
  int moved = p;
  if (v == CORNER) { /* one row of the padded six: Q of the whole tensor would cost more */
    moved = slice(g, "corner", p, 0, 1, 1, 4, top);
  } else if (v == RESHAPE_ONLY) { /* the input reshaped, no Pad read */
    int64_t flat[2] = {H * W, C};
    int rin[2] = {x, i64s(g, "flat", 2, flat)};
    moved = gb_node(g, CS_OP_RESHAPE, "flatten", 2, rin, CS_DTYPE_F32, 2, flat, NULL);
  } else {
    int a = slice(g, "last", p, PH - 1, PH, 1, 4, top), b = slice(g, "first", p, 0, PH - 1, 1, 4, rest);
    int cin[2] = {a, b};
    moved = gb_node(g, CS_OP_CONCAT, "roll", 2, cin, CS_DTYPE_F32, 4, ps, &id);
    cs_node_set_attr_int(cs_graph_node(g, id), "axis", 1);
    int rin[2] = {moved, i64s(g, "w6", 6, w6)};
    int r = gb_node(g, CS_OP_RESHAPE, "view", 2, rin, CS_DTYPE_F32, 6, w6, NULL);
    const int64_t perm[6] = {0, 1, 3, 2, 4, 5};
    int t = gb_node(g, CS_OP_TRANSPOSE, "permute", 1, &r, CS_DTYPE_F32, 6, t6, &id);
    CHECK(cs_node_set_attr_ints(cs_graph_node(g, id), "perm", 6, perm) == CS_OK);
    int rin2[2] = {t, i64s(g, "win", 3, win)};
    moved = gb_node(g, CS_OP_RESHAPE, "windows", 2, rin2, CS_DTYPE_F32, 3, win, NULL);
  }
  int q = gb_q(g, "q", moved, gb_scalar_f32(g, "s", 0.04f), gb_scalar_i8(g, "z", -5));
  int y = gb_dq(g, "dq", q, gb_scalar_f32(g, "s2", 0.04f), gb_scalar_i8(g, "z2", -5));
  int outs[2] = {y, p}, n_out = 1;
  if (v == FLOAT_OUT) n_out = 2;
  if (v == TWO_QS) { /* another Q of the padded tensor, its own parameters */
    int q2 = gb_q(g, "q_other", p, gb_scalar_f32(g, "s3", 0.09f), gb_scalar_i8(g, "z3", 7));
    outs[1] = gb_dq(g, "dq_other", q2, gb_scalar_f32(g, "s4", 0.09f), gb_scalar_i8(g, "z4", 7));
    n_out = 2;
  }
  gb_set_io(g, 1, &x, n_out, outs);
  return g;
}

/* Compile and run; y's bytes (malloc'd) and how many moves ran on float. */
static float *run(variant v, int *float_moves, size_t *n) {
  cs_graph *g = chain(v);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  *float_moves = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *k = &g->nodes[i];
    if (!k->dead && (k->op == CS_OP_K_PAD || k->op == CS_OP_K_SLICE || k->op == CS_OP_K_CONCAT ||
                     k->op == CS_OP_K_TRANSPOSE || k->op == CS_OP_K_COPY))
      *float_moves += cs_graph_value(g, k->outputs[0])->dtype == CS_DTYPE_F32;
  }
  float x[N_IN];
  for (int i = 0; i < N_IN; i++) x[i] = 0.37f * (float)((i * 7) % 23 - 11);
  const void *in[1] = {x};
  int32_t st;
  float *y = gb_run_output(g, in, &st, n);
  CHECK_MSG(st == 0, "run status %d", st);
  cs_graph_free(g);
  return y;
}

static void check(variant v, int want_int8, const char *what) {
  int moves, ref_moves;
  size_t n, nf;
  float *y = run(v, &moves, &n);
  float *yf = run(FLOAT_OUT, &ref_moves, &nf); /* the reference: declined, the float path */
  CHECK_MSG((want_int8 ? moves == 0 : moves > 0) && ref_moves > 0, "%s: %d float moves (want %s), reference %d",
            what, moves, want_int8 ? "none" : "some", ref_moves);
  if (v == PLAIN || v == TWO_QS) /* the others compute something else */
    CHECK_MSG(n == nf && !memcmp(y, yf, n), "%s: bytes differ from the float path", what);
  free(y);
  free(yf);
}

int main(void) {
  check(PLAIN, 1, "pad, roll, windows");
  check(TWO_QS, 0, "a Q with other parameters");
  check(CORNER, 0, "a slice keeping one row in six");
  check(AFTER_MUL, 0, "a Mul before the moves");
  check(AFTER_MUL_RELU, 0, "a Relu of a Mul before the moves");
  check(RESHAPE_ONLY, 0, "a Reshape alone");
  UNIT_MAIN_END();
}
