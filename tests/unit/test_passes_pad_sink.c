/*
 * test_passes_pad_sink.c — EliminateQDQTransparent on a Pad between a DQ
 * and a Q: the Pad runs on int8 with the code whose DQ is the pad value
 * (the zero point for 0), for constant, edge and reflect pads, and gives
 * the bytes of the float path. Declines (the Pad stays float): a value no
 * code dequantizes to, a Pad whose output another reader sees (here a
 * graph output; that graph is also the float reference).
 */
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "unit.h"

enum { C = 3, H = 5, W = 4 };
static const float XS = 0.05f, YS = 0.04f; /* YS < XS: one input code is at least one output code */
static const int XZ = 3, YZ = -5;

typedef struct spec {
  const char *mode; /* "constant", "edge", "reflect" */
  int has_value;    /* constant_value given (else 0) */
  float value;
  int float_out;    /* the padded float tensor is a graph output too */
} spec;

/* x:f32 [1, C, H, W] → Q → DQ → Pad (1, 2 rows; 2, 1 columns) → Q → DQ → y */
static cs_graph *pad_graph(const spec *s) {
  cs_graph *g = cs_graph_new("pad");
  int64_t xs[4] = {1, C, H, W}, ys[4] = {1, C, H + 3, W + 3}, np[1] = {8};
  const int64_t pads[8] = {0, 0, 1, 2, 0, 0, 2, 1};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int q = gb_q(g, "q_x", x, gb_scalar_f32(g, "xs", XS), gb_scalar_i8(g, "xz", (int8_t)XZ));
  int d = gb_dq(g, "dq_x", q, gb_scalar_f32(g, "xs2", XS), gb_scalar_i8(g, "xz2", (int8_t)XZ));
  int in[3] = {d, cs_graph_add_const(g, "pads", CS_DTYPE_I64, 1, np, pads),
               s->has_value ? gb_scalar_f32(g, "pv", s->value) : -1};
  int id;
  int p = gb_node(g, CS_OP_PAD, "pad", s->has_value ? 3 : 2, in, CS_DTYPE_F32, 4, ys, &id);
  CHECK(cs_node_set_attr_string(cs_graph_node(g, id), "mode", s->mode, strlen(s->mode)) == CS_OK);
  int q2 = gb_q(g, "q_y", p, gb_scalar_f32(g, "ys", YS), gb_scalar_i8(g, "yz", (int8_t)YZ));
  int y = gb_dq(g, "dq_y", q2, gb_scalar_f32(g, "ys2", YS), gb_scalar_i8(g, "yz2", (int8_t)YZ));
  int outs[2] = {y, p};
  gb_set_io(g, 1, &x, s->float_out ? 2 : 1, outs);
  return g;
}

/* Compile and run; y's bytes (malloc'd) and whether the Pad ran on int8. */
static void *run(const spec *s, int *on_int8) {
  cs_graph *g = pad_graph(s);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  *on_int8 = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].op == CS_OP_K_PAD)
      *on_int8 |= cs_graph_value(g, g->nodes[i].outputs[0])->dtype == CS_DTYPE_I8;
  float x[C * H * W];
  for (int i = 0; i < C * H * W; i++) x[i] = 0.37f * (float)((i * 7) % 23 - 11);
  const void *in[1] = {x};
  int32_t st;
  size_t n;
  void *y = gb_run_output(g, in, &st, &n);
  CHECK_MSG(st == 0, "run status %d", st);
  cs_graph_free(g);
  return y;
}

static void check(spec s, int want_int8, const char *what) {
  int on_int8, ref_int8;
  void *y = run(&s, &on_int8);
  s.float_out = 1; /* the reference: declined, the float path */
  void *yf = run(&s, &ref_int8);
  CHECK_MSG(on_int8 == want_int8 && !ref_int8, "%s: pad on int8 %d (want %d), reference %d", what, on_int8,
            want_int8, ref_int8);
  CHECK_MSG(!memcmp(y, yf, sizeof(float) * C * (H + 3) * (W + 3)), "%s: bytes differ from the float path", what);
  free(y);
  free(yf);
}

/* A Pad whose readers fan out and meet again: 40 layers of Concat(a, b) →
 * Slice (first half) a', Slice (second half) b' make 2^40 paths from the
 * Pad to the Q over 120 nodes. The walk that asks whether only moves lead
 * to Qs stops at its budget (declines; the Pad stays float) instead of
 * walking every path. */
static void test_fan_out_declines(void) {
  enum { LAYERS = 40, N = 4 };
  cs_graph *g = cs_graph_new("fan");
  int64_t xs[1] = {N}, ps[1] = {N + 2}, cs[1] = {2 * (N + 2)}, np[1] = {2};
  const int64_t pads[2] = {1, 1}, zero = 0, half = N + 2, full = 2 * (N + 2);
  int x = gb_value(g, "x", CS_DTYPE_F32, 1, xs);
  int q = gb_q(g, "q_x", x, gb_scalar_f32(g, "xs", XS), gb_scalar_i8(g, "xz", (int8_t)XZ));
  int d = gb_dq(g, "dq_x", q, gb_scalar_f32(g, "xs2", XS), gb_scalar_i8(g, "xz2", (int8_t)XZ));
  int pin[2] = {d, cs_graph_add_const(g, "pads", CS_DTYPE_I64, 1, np, pads)}, id;
  int a = gb_node(g, CS_OP_PAD, "pad", 2, pin, CS_DTYPE_F32, 1, ps, &id), b = a;
  const int64_t one = 1;
  int s0 = cs_graph_add_const(g, "s0", CS_DTYPE_I64, 1, &one, &zero);
  int sh = cs_graph_add_const(g, "sh", CS_DTYPE_I64, 1, &one, &half);
  int sf = cs_graph_add_const(g, "sf", CS_DTYPE_I64, 1, &one, &full);
  for (int l = 0; l < LAYERS; l++) {
    char name[32];
    int cin[2] = {a, b};
    snprintf(name, sizeof name, "cat%d", l);
    int c = gb_node(g, CS_OP_CONCAT, name, 2, cin, CS_DTYPE_F32, 1, cs, &id);
    cs_node_set_attr_int(cs_graph_node(g, id), "axis", 0);
    int lo[3] = {c, s0, sh}, hi[3] = {c, sh, sf};
    snprintf(name, sizeof name, "lo%d", l);
    a = gb_node(g, CS_OP_SLICE, name, 3, lo, CS_DTYPE_F32, 1, ps, NULL);
    snprintf(name, sizeof name, "hi%d", l);
    b = gb_node(g, CS_OP_SLICE, name, 3, hi, CS_DTYPE_F32, 1, ps, NULL);
  }
  int cin[2] = {a, b};
  int c = gb_node(g, CS_OP_CONCAT, "cat_last", 2, cin, CS_DTYPE_F32, 1, cs, &id);
  cs_node_set_attr_int(cs_graph_node(g, id), "axis", 0);
  int q2 = gb_q(g, "q_y", c, gb_scalar_f32(g, "ys", YS), gb_scalar_i8(g, "yz", (int8_t)YZ));
  int y = gb_dq(g, "dq_y", q2, gb_scalar_f32(g, "ys2", YS), gb_scalar_i8(g, "yz2", (int8_t)YZ));
  gb_set_io(g, 1, &x, 1, &y);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  int pad = gb_find_op(g, CS_OP_K_PAD);
  CHECK_MSG(pad >= 0 && cs_graph_value(g, g->nodes[pad].outputs[0])->dtype == CS_DTYPE_F32,
            "the fanned-out Pad should stay float");
  cs_graph_free(g);
}

int main(void) {
  test_fan_out_declines();
  check((spec){"constant", 0, 0.0f, 0}, 1, "zero");
  check((spec){"constant", 1, (float)(7 - XZ) * XS, 0}, 1, "a value code 7 gives");
  check((spec){"constant", 1, 0.123f, 0}, 0, "a value no code gives");
  check((spec){"edge", 0, 0.0f, 0}, 1, "edge");
  check((spec){"reflect", 0, 0.0f, 0}, 1, "reflect");
  UNIT_MAIN_END();
}
