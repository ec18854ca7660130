/*
 * FuseQDQToSiLU: x·Sigmoid(x) between QDQ becomes one k_lut_i8, in its
 * float form (PT2E: DQ → Sigmoid → Mul → Q) and its quantized form (ORT:
 * QLinearSigmoid then QLinearMul), with the Mul's operands either way
 * round; the table equals the unfused computation on all 256 inputs. Each
 * eligibility rule declines on its own, leaving the Sigmoid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "quant/quant.h"
#include "unit.h"

typedef struct silu_case {
  int quantized;     /* ORT's form: Q → DQ after the Sigmoid */
  int swap;          /* Mul(Sigmoid side, x side) */
  int other_x;       /* rule: both operands are the same int8 tensor */
  int other_params;  /* rule: ... with the same parameters */
  int sig_fans_out;  /* rule: the Sigmoid's result has no other reader */
  int relu;          /* a Relu before the last Q (allowed in the quantized form) */
} silu_case;

enum { N = 256 };
static const float XS = 0.0473f, SS = 1.0f / 255.0f, YS = 0.0389f;
static const int XZ = -9, SZ = -128, YZ = -107;

/* x → Q → DQ ─┬────────────── Mul → [Relu] → Q → DQ → y
 *             └ Sigmoid → [Q → DQ] ┘ */
static cs_graph *silu_graph(silu_case c) {
  cs_graph *g = cs_graph_new("silu");
  int64_t s[1] = {N};
  int x = gb_value(g, "x", CS_DTYPE_F32, 1, s);
  int q = gb_q(g, "q_x", x, gb_scalar_f32(g, "xs", XS), gb_scalar_i8(g, "xz", XZ));
  int dq = gb_dq(g, "dq_x", q, gb_scalar_f32(g, "xs2", XS), gb_scalar_i8(g, "xz2", XZ));
  int xin = dq;
  if (c.other_x || c.other_params) {
    int q2 = c.other_x ? gb_q(g, "q_x2", x, gb_scalar_f32(g, "xs3", XS), gb_scalar_i8(g, "xz3", XZ)) : q;
    xin = gb_dq(g, "dq_x2", q2, gb_scalar_f32(g, "xs4", c.other_params ? XS * 2 : XS), gb_scalar_i8(g, "xz4", XZ));
  }
  int sig = gb_node(g, CS_OP_SIGMOID, "sigmoid", 1, &xin, CS_DTYPE_F32, 1, s, NULL);
  int side = sig;
  if (c.quantized) {
    int qs = gb_q(g, "q_s", sig, gb_scalar_f32(g, "ss", SS), gb_scalar_i8(g, "sz", SZ));
    side = gb_dq(g, "dq_s", qs, gb_scalar_f32(g, "ss2", SS), gb_scalar_i8(g, "sz2", SZ));
  }
  int in[2] = {c.swap ? side : dq, c.swap ? dq : side};
  int m = gb_node(g, CS_OP_MUL, "mul", 2, in, CS_DTYPE_F32, 1, s, NULL);
  if (c.relu) m = gb_node(g, CS_OP_RELU, "relu", 1, &m, CS_DTYPE_F32, 1, s, NULL);
  int q3 = gb_q(g, "q_y", m, gb_scalar_f32(g, "ys", YS), gb_scalar_i8(g, "yz", YZ));
  int y = gb_dq(g, "dq_y", q3, gb_scalar_f32(g, "ys2", YS), gb_scalar_i8(g, "yz2", YZ));
  int outs[2] = {y, sig};
  gb_set_io(g, 1, &x, c.sig_fans_out ? 2 : 1, outs);
  return g;
}

/* The unfused computation of output element q (the runtime's float
 * Sigmoid, then ORT's QLinearSigmoid table and QLinearMul, or a float
 * multiply). */
static int32_t reference(silu_case c, int q) {
  float xf = cs_dequantize_one(q, XS, XZ), sf;
  tidsp_unary_f32_params up;
  memset(&up, 0, sizeof up);
  up.n = 1;
  up.op = TIDSP_UNARY_SIGMOID;
  tidsp_unary_f32(&up, &xf, &sf);
  if (!c.quantized) return cs_quantize_one(xf * sf, YS, YZ, -128, 127);
  int8_t a = (int8_t)q, b = (int8_t)cs_quantize_one(sf, SS, SZ, -128, 127), y;
  tidsp_mul_i8_params p;
  memset(&p, 0, sizeof p);
  p.bc.rank = 1;
  p.bc.shape[0] = 1;
  p.a_zp = XZ;
  p.b_zp = SZ;
  p.y_zp = YZ;
  p.y_min = c.relu ? YZ : -128; /* Relu: the output zero point up */
  p.y_max = 127;
  p.r = (XS * SS) / YS;
  p.kind = TIDSP_REQUANT_FLOAT;
  tidsp_mul_i8__ref(&p, &a, &b, &y);
  return y;
}

static void test_match(silu_case c, const char *what) {
  cs_graph *g = silu_graph(c);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s: %s", what, cs_error_message());
  int k = gb_find_op(g, CS_OP_K_LUT_I8);
  CHECK_MSG(k >= 0 && gb_count_op(g, CS_OP_K_LUT_I8) == 1 && gb_count_op(g, CS_OP_K_MUL_I8) == 0 &&
                gb_count_op(g, CS_OP_K_UNARY_F32) == 0 && gb_count_op(g, CS_OP_K_BINARY_F32) == 0,
            "%s: one table and nothing else computes", what);
  if (k >= 0) {
    const int8_t *lut = cs_graph_value(g, cs_graph_node(g, k)->inputs[0])->data;
    for (int q = -128; q < 128; q++) {
      int32_t want = reference(c, q);
      if (lut[q + 128] != want) {
        CHECK_MSG(0, "%s: q=%d: table %d, unfused %d", what, q, lut[q + 128], want);
        break;
      }
    }
  }
  cs_graph_free(g);
}

/* folded_later: the operands are two dequantizations of one int8 tensor,
 * so after this pass declines, FoldEltwiseTable makes the int8 Sigmoid
 * table and Mul one table on that tensor (test_passes_eltwise_table.c). */
static void test_decline(silu_case c, const char *rule, int folded_later) {
  cs_graph *g = silu_graph(c);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s: %s", rule, cs_error_message());
  /* Declined: the Sigmoid is computed on its own (a table or the float
   * kernel) and the Mul separately. */
  int tables = gb_count_op(g, CS_OP_K_LUT_I8), sig_f = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].op == CS_OP_K_UNARY_F32 && g->nodes[i].k.unary.op == TIDSP_UNARY_SIGMOID)
      sig_f++;
  int muls = gb_count_op(g, CS_OP_K_MUL_I8) + gb_count_op(g, CS_OP_K_BINARY_F32);
  if (folded_later)
    CHECK_MSG(muls == 0 && tables == 1 && sig_f == 0, "%s: folded later (mul %d, tables %d, float sigmoid %d)",
              rule, muls, tables, sig_f);
  else
    CHECK_MSG(muls >= 1 && (tables >= 1 || sig_f >= 1), "%s: declined (mul %d, tables %d, float sigmoid %d)",
              rule, muls, tables, sig_f);
  cs_graph_free(g);
}

int main(void) {
  test_match((silu_case){0, 0, 0, 0, 0, 0}, "float form");
  test_match((silu_case){0, 1, 0, 0, 0, 0}, "float form, operands swapped");
  test_match((silu_case){1, 0, 0, 0, 0, 0}, "quantized form");
  test_match((silu_case){1, 1, 0, 0, 0, 0}, "quantized form, operands swapped");
  test_match((silu_case){1, 0, 0, 0, 0, 1}, "quantized form with a Relu");
  test_decline((silu_case){1, 0, 1, 0, 0, 0}, "the operands read different int8 tensors", 0);
  test_decline((silu_case){1, 0, 0, 1, 0, 0}, "the operands' parameters differ", 1);
  test_decline((silu_case){0, 0, 0, 0, 1, 0}, "the Sigmoid's result fans out", 0);
  test_decline((silu_case){0, 0, 0, 0, 0, 1}, "a Relu in the float form", 0);
  UNIT_MAIN_END();
}
