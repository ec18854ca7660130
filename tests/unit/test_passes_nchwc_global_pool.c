/*
 * MarkNchwcGlobalPool + LegalizeOps: a float GlobalAveragePool sums in
 * ONNX Runtime's NCHWc order (tidsp_gap_f32_params.nchwc's bit for MLAS's
 * block) when its input is an NCHWc tensor in ORT's graph (a Conv's
 * output, a Relu of it, a HardSigmoid times the conv) or a graph input,
 * and its channels are whole blocks; otherwise (after a Neg, or 24
 * channels at block 16) MLAS's four-lane order.
 * tests/e2e/test_conv_mlas_vs_ort.py checks the values against ORT.
 */
#include <stdio.h>
#include <string.h>

#include "graph_build.h"
#include "passes/pass_list.h"
#include "unit.h"

enum { HW = 4, MAXC = 24 };

static float w_[MAXC * MAXC], b_[MAXC];

typedef enum { SRC_CONV, SRC_RELU, SRC_HSIG_MUL, SRC_NEG, SRC_INPUT } src_kind;

/* x -> [conv] -> source -> GlobalAveragePool -> y; returns the pool's
 * params.nchwc after the pass and LegalizeOps, or -1. */
static int pooled_order(src_kind k, int c) {
  cs_graph *g = cs_graph_new("gap");
  int64_t xs[4] = {1, c, HW, HW}, ys[4] = {1, c, 1, 1}, ws[4] = {c, c, 1, 1}, bs[1] = {c};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs), src = x;
  if (k != SRC_INPUT) {
    int in[3] = {x, cs_graph_add_const(g, "w", CS_DTYPE_F32, 4, ws, w_),
                 cs_graph_add_const(g, "b", CS_DTYPE_F32, 1, bs, b_)};
    src = gb_node(g, CS_OP_CONV, "conv", 3, in, CS_DTYPE_F32, 4, xs, NULL);
  }
  if (k == SRC_RELU) src = gb_node(g, CS_OP_RELU, "relu", 1, &src, CS_DTYPE_F32, 4, xs, NULL);
  if (k == SRC_NEG) src = gb_node(g, CS_OP_NEG, "neg", 1, &src, CS_DTYPE_F32, 4, xs, NULL);
  if (k == SRC_HSIG_MUL) {
    int h = gb_node(g, CS_OP_HARD_SIGMOID, "hsig", 1, &src, CS_DTYPE_F32, 4, xs, NULL);
    int m[2] = {src, h};
    src = gb_node(g, CS_OP_MUL, "mul", 2, m, CS_DTYPE_F32, 4, xs, NULL);
  }
  int y = gb_node(g, CS_OP_GLOBAL_AVERAGE_POOL, "gap", 1, &src, CS_DTYPE_F32, 4, ys, NULL);
  gb_set_io(g, 1, &x, 1, &y);
  int got = -1;
  CHECK_MSG(pass_mark_nchwc_global_pool(g, NULL) == CS_OK && pass_legalize(g, NULL) == CS_OK, "%s",
            cs_error_message());
  int k_gap = gb_find_op(g, CS_OP_K_GAP_F32);
  if (k_gap >= 0) got = cs_graph_node(g, k_gap)->k.gap_f32.nchwc;
  cs_graph_free(g);
  return got;
}

int main(void) {
  for (int i = 0; i < MAXC * MAXC; i++) w_[i] = (float)((i * 37) % 19 - 9) * 0.0371f;
  for (int o = 0; o < MAXC; o++) b_[o] = 0.113f * (float)(o - 2);
  const int both = TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8;
  CHECK_MSG(pooled_order(SRC_CONV, 16) == both, "after a conv: NCHWc");
  CHECK_MSG(pooled_order(SRC_RELU, 16) == both, "after a conv's Relu: NCHWc");
  CHECK_MSG(pooled_order(SRC_HSIG_MUL, 16) == both, "after conv * HardSigmoid(conv): NCHWc");
  CHECK_MSG(pooled_order(SRC_INPUT, 16) == both, "a graph input: NCHWc");
  CHECK_MSG(pooled_order(SRC_NEG, 16) == 0, "after a Neg: MLAS's four lanes");
  CHECK_MSG(pooled_order(SRC_NEG, 24) == 0, "24 channels after a Neg: MLAS's four lanes");
  CHECK_MSG(pooled_order(SRC_CONV, 24) == TIDSP_MLAS_BLOCK8, "24 channels: NCHWc at block 8 only");
  CHECK_MSG(pooled_order(SRC_INPUT, 24) == TIDSP_MLAS_BLOCK8, "24 channels on a graph input: NCHWc at 8 only");
  CHECK_MSG(pooled_order(SRC_HSIG_MUL, 24) == TIDSP_MLAS_BLOCK8, "24 channels, conv * HardSigmoid: 8 only");
  UNIT_MAIN_END();
}
