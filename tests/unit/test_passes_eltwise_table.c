/*
 * test_passes_eltwise_table.c — FoldEltwiseTable: int8 kernels that compute
 * a function of one int8 tensor x become one table on x, with the bytes
 * the kernels wrote (every one of the 256 codes is an input):
 *  - x·T(x) (MobileNetV3's hard-swish: k_mul_i8 of x and a table on x);
 *  - T2(x·(x + c)) (PP-OCR's hard-swish: k_add_i8 with a one-element
 *    constant, k_mul_i8, a table), the constant as A (ORT's swapped
 *    rounding) and as B; c + x where that rounding changes bytes;
 *  - x·x; an intermediate another node also reads (it stays);
 * each in ORT's int8 and uint8 domains, FLOAT and Q31 requantization.
 * Declines: a second runtime input, a per-channel constant, a one-element
 * output.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_graph.h"
#include "passes/match/broadcast.h"
#include "passes/pass_list.h"
#include "quant/quant.h"
#include "unit.h"

enum { C = 4, H = 8, W = 8 }; /* C·H·W = 256: x holds every code once */

typedef struct mode {
  tidsp_requant_kind kind;
  int32_t domain; /* 0, or 128: ORT's uint8 domain */
} mode;

static cs_qparams qp(const float *s, int32_t zp) {
  cs_qparams q = {CS_DTYPE_I8, -1, 1, s, {zp}, NULL, NULL};
  return q;
}

/* a, b, y: scales and zero points. kSwap: where k_add_i8's swapped
 * rounding (A one value per span) changes outputs — A = -116 gives other
 * bytes as a [256] run than as one broadcast value (found by search). */
typedef struct quants {
  float s[3];
  int32_t zp[3];
} quants;
static const quants kPlain = {{0.05f, 0.031f, 0.07f}, {3, -9, 5}};
static const quants kSwap = {{0x1.563576p-7f, 0x1.048e74p-5f, 0x1.3be2e8p-8f}, {-34, 52, -34}};

/* y = a + b or a · b as k_add_i8 / k_mul_i8 (ORT's constants for
 * quantizations q), y of a's or b's shape, whichever is larger. */
static int binary_q(cs_graph *g, cs_op op, const char *name, int a, int b, mode m, const quants *q) {
  const cs_value *av = cs_graph_value(g, a), *bv = cs_graph_value(g, b);
  const cs_value *big = cs_value_numel(av) >= cs_value_numel(bv) ? av : bv;
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, big->shape, sizeof shape);
  int in[2] = {a, b}, id;
  int y = gb_node(g, op, name, 2, in, CS_DTYPE_I8, big->rank, shape, &id);
  cs_qparams aq = qp(&q->s[0], q->zp[0]), bq = qp(&q->s[1], q->zp[1]), yq = qp(&q->s[2], q->zp[2]);
  aq.zps = aq.zp, bq.zps = bq.zp, yq.zps = yq.zp;
  cs_node *n = cs_graph_node(g, id);
  if (op == CS_OP_K_ADD_I8) {
    cs_add_i8_params_init(&aq, &bq, &yq, -INFINITY, INFINITY, m.domain, m.kind, &n->k.add);
    CHECK(cs_broadcast_init(cs_graph_value(g, a), cs_graph_value(g, b), cs_graph_value(g, y), &n->k.add.bc));
  } else {
    cs_mul_i8_params_init(&aq, &bq, &yq, -INFINITY, INFINITY, m.domain, m.kind, &n->k.mul);
    CHECK(cs_broadcast_init(cs_graph_value(g, a), cs_graph_value(g, b), cs_graph_value(g, y), &n->k.mul.bc));
  }
  return y;
}

static int binary(cs_graph *g, cs_op op, const char *name, int a, int b, mode m) {
  return binary_q(g, op, name, a, b, m, &kPlain);
}

/* y = k_lut_i8(table, x), a seeded table. */
static int table(cs_graph *g, const char *name, int x, uint32_t seed) {
  const int64_t n256[1] = {256};
  char nm[64];
  snprintf(nm, sizeof nm, "%s.lut", name);
  int t = kg_const_i8(g, nm, 1, n256, seed);
  const cs_value *xv = cs_graph_value(g, x);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, xv->shape, sizeof shape);
  int in[2] = {t, x}, id;
  int y = gb_node(g, CS_OP_K_LUT_I8, name, 2, in, CS_DTYPE_I8, xv->rank, shape, &id);
  cs_graph_node(g, id)->k.lut.n = (int32_t)cs_value_numel(xv);
  return y;
}

static int scalar(cs_graph *g, const char *name, int8_t v) {
  const int64_t one[1] = {1};
  return cs_graph_add_const(g, name, CS_DTYPE_I8, 1, one, &v);
}

enum { HSWISH, PPOCR, PPOCR_C_FIRST, SWAPPED, SQUARE, SHARED, TWO_INPUTS, PER_CHANNEL, ONE_ELEMENT, N_CASES };
static const char *const kNames[N_CASES] = {"x*T(x)", "T2(x*(x+c))", "T2(x*(c+x))", "c+x (swapped rounding)", "x*x",
                                            "shared T(x)", "x*z", "x*s[c]", "one element"};

static cs_graph *build(int which, mode m) {
  cs_graph *g = cs_graph_new(kNames[which]);
  int64_t xs[4] = {1, C, H, W}, one[1] = {1}, cs[4] = {1, C, 1, 1};
  int x = gb_value(g, "x", CS_DTYPE_I8, which == ONE_ELEMENT ? 1 : 4, which == ONE_ELEMENT ? one : xs);
  int z = which == TWO_INPUTS ? gb_value(g, "z", CS_DTYPE_I8, 4, xs) : -1;
  int y, y2 = -1;
  switch (which) {
    case HSWISH: y = binary(g, CS_OP_K_MUL_I8, "mul", x, table(g, "hsig", x, 5), m); break;
    case PPOCR:
    case PPOCR_C_FIRST: {
      int c = scalar(g, "three", 60);
      int a = which == PPOCR ? binary(g, CS_OP_K_ADD_I8, "add", x, c, m) : binary(g, CS_OP_K_ADD_I8, "add", c, x, m);
      y = table(g, "div6", binary(g, CS_OP_K_MUL_I8, "mul", x, a, m), 9);
      break;
    }
    case SWAPPED: y = binary_q(g, CS_OP_K_ADD_I8, "add", scalar(g, "c", -116), x, m, &kSwap); break;
    case SQUARE: y = binary(g, CS_OP_K_MUL_I8, "mul", x, x, m); break;
    case SHARED:
      y2 = table(g, "hsig", x, 5);
      y = binary(g, CS_OP_K_MUL_I8, "mul", x, y2, m);
      break;
    case TWO_INPUTS: y = binary(g, CS_OP_K_MUL_I8, "mul", x, z, m); break;
    case PER_CHANNEL: y = binary(g, CS_OP_K_MUL_I8, "mul", x, kg_const_i8(g, "s", 4, cs, 3), m); break;
    default: y = binary(g, CS_OP_K_ADD_I8, "add", x, scalar(g, "c", -20), m); break;
  }
  int ins[2] = {x, z}, outs[2] = {y, y2};
  gb_set_io(g, z >= 0 ? 2 : 1, ins, y2 >= 0 ? 2 : 1, outs);
  return g;
}

static void check(int which, mode m) {
  static int8_t x[C * H * W], z[C * H * W];
  for (int i = 0; i < C * H * W; i++) x[i] = (int8_t)((i * 37) % 256 - 128), z[i] = (int8_t)(i * 11);
  const void *in[2] = {x, z};
  cs_graph *g = build(which, m);
  size_t n0, n1;
  uint8_t *before = kg_run_output(g, in, &n0);
  cs_target t;
  cs_target_default(&t);
  CHECK(pass_fold_eltwise_table(g, &t) == CS_OK && pass_dce(g, &t) == CS_OK);
  uint8_t *after = kg_run_output(g, in, &n1);
  int luts = gb_count_op(g, CS_OP_K_LUT_I8), arith = gb_count_op(g, CS_OP_K_ADD_I8) + gb_count_op(g, CS_OP_K_MUL_I8);
  int folds = which < SHARED, kept = which == SHARED;
  int want_luts = folds ? 1 : kept ? 2 : 0, want_arith = folds || kept ? 0 : 1;
  CHECK_MSG(luts == want_luts && arith == want_arith, "%s (kind %d, domain %d): %d tables, %d add/mul", kNames[which],
            (int)m.kind, (int)m.domain, luts, arith);
  CHECK_MSG(before && after && n0 == n1 && !memcmp(before, after, n0), "%s (kind %d, domain %d): bytes differ",
            kNames[which], (int)m.kind, (int)m.domain);
  free(before);
  free(after);
  cs_graph_free(g);
}

int main(void) {
  const mode modes[4] = {{TIDSP_REQUANT_FLOAT, 0}, {TIDSP_REQUANT_FLOAT, 128}, {TIDSP_REQUANT_Q31, 0},
                         {TIDSP_REQUANT_Q31, 128}};
  for (int k = 0; k < 4; k++)
    for (int which = 0; which < N_CASES; which++) check(which, modes[k]);
  UNIT_MAIN_END();
}
