/*
 * BatchNormalization: FoldBatchNorm folds it into the float Conv before it
 * with ONNX Runtime's ConvBNFusion arithmetic (with and without a conv
 * bias) and declines on each rule of that fusion; a BN no convolution
 * absorbs is a Mul and an Add whose per-channel constants (computed by
 * FoldConstant with the kernels) are those of ORT's BatchNorm kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "unit.h"

enum { C = 5, HW = 4, K = 3 };

typedef struct bn_case {
  int conv_bias;       /* the Conv has a bias */
  int conv_fans_out;   /* rule: the Conv's output has one reader (the BN) */
  int bn_is_output;    /* allowed (as ORT): the BN's output is a graph output */
  int weight_input;    /* rule: the Conv's weight is a constant */
  int relu_between;    /* no Conv right before: the BN is lowered */
  int optional_out;    /* rule (ORT's): the BN has no optional outputs */
} bn_case;

static float w_[C * C * K * K], cb_[C], sc_[C], bb_[C], mean_[C], var_[C];
static const float EPS = 1e-3f;

static void init_params(void) {
  for (int i = 0; i < C * C * K * K; i++) w_[i] = (float)((i * 37) % 19 - 9) * 0.0371f;
  for (int c = 0; c < C; c++) {
    cb_[c] = 0.113f * (float)(c - 2);
    sc_[c] = 0.7f + 0.131f * (float)c;
    bb_[c] = -0.27f + 0.093f * (float)c;
    mean_[c] = 0.0517f * (float)(c * c) - 0.3f;
    var_[c] = 0.31f + 0.477f * (float)c;
  }
}

static cs_graph *bn_graph(bn_case c, int *bn_out) {
  cs_graph *g = cs_graph_new("bn");
  int64_t xs[4] = {1, C, HW, HW}, ws[4] = {C, C, K, K}, cs[1] = {C};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int w = c.weight_input ? gb_value(g, "w", CS_DTYPE_F32, 4, ws) : cs_graph_add_const(g, "w", CS_DTYPE_F32, 4, ws, w_);
  int in[3] = {x, w, cs_graph_add_const(g, "cb", CS_DTYPE_F32, 1, cs, cb_)};
  int conv_id;
  int y = gb_node(g, CS_OP_CONV, "conv", c.conv_bias ? 3 : 2, in, CS_DTYPE_F32, 4, xs, &conv_id);
  int64_t pads[4] = {1, 1, 1, 1};
  cs_node_set_attr_ints(cs_graph_node(g, conv_id), "pads", 4, pads);
  int conv_out = y;
  if (c.relu_between) y = gb_node(g, CS_OP_RELU, "relu", 1, &y, CS_DTYPE_F32, 4, xs, NULL);
  int bin[5] = {y, cs_graph_add_const(g, "scale", CS_DTYPE_F32, 1, cs, sc_),
                cs_graph_add_const(g, "B", CS_DTYPE_F32, 1, cs, bb_),
                cs_graph_add_const(g, "mean", CS_DTYPE_F32, 1, cs, mean_),
                cs_graph_add_const(g, "var", CS_DTYPE_F32, 1, cs, var_)};
  int bn_id;
  int out = gb_node(g, CS_OP_BATCH_NORMALIZATION, "bn", 5, bin, CS_DTYPE_F32, 4, xs, &bn_id);
  cs_node_add_attr(cs_graph_node(g, bn_id), "epsilon", CS_ATTR_FLOAT)->f = EPS;
  if (c.optional_out) { /* running_mean, present though nothing reads it */
    int rm = gb_value(g, "running_mean", CS_DTYPE_F32, 1, cs);
    cs_node *bn = cs_graph_node(g, bn_id);
    bn->outputs = realloc(bn->outputs, 2 * sizeof(int));
    bn->outputs[1] = rm;
    bn->n_outputs = 2;
    cs_graph_value(g, rm)->producer = bn_id;
  }
  int z = gb_node(g, CS_OP_RELU, "relu_out", 1, &out, CS_DTYPE_F32, 4, xs, NULL);
  int ins[2] = {x, w};
  int outs[3] = {c.bn_is_output ? out : z, conv_out};
  gb_set_io(g, c.weight_input ? 2 : 1, ins, c.conv_fans_out ? 2 : 1, outs);
  *bn_out = out;
  return g;
}

/* ORT's ConvBNFusion, one float32 rounding per step. */
static void folded(int bias, float *w, float *b) {
  for (int o = 0; o < C; o++) {
    volatile float sd = sqrtf(var_[o] + EPS);
    volatile float s = sc_[o] / sd;
    for (int i = 0; i < C * K * K; i++) w[o * C * K * K + i] = w_[o * C * K * K + i] * s;
    if (bias) {
      volatile float t = cb_[o] - mean_[o];
      t = t * s;
      b[o] = t + bb_[o];
    } else {
      volatile float ms = mean_[o] * s;
      b[o] = bb_[o] - ms;
    }
  }
}

static void test_fold(int bias, int bn_is_output) {
  bn_case c = {bias, 0, bn_is_output, 0, 0, 0};
  int bn_out;
  cs_graph *g = bn_graph(c, &bn_out);
  cs_target t;
  cs_target_default(&t);
  t.pack_weights = 0;
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s", cs_error_message());
  int k = gb_find_op(g, CS_OP_K_CONV2D_F32);
  CHECK_MSG(k >= 0 && gb_count_op(g, CS_OP_K_BINARY_F32) == 0, "bias %d: folded into the conv", bias);
  if (k >= 0) {
    float w[C * C * K * K], b[C];
    folded(bias, w, b);
    const cs_node *n = cs_graph_node(g, k);
    const float *gw = cs_graph_value(g, n->inputs[1])->data, *gb = cs_graph_value(g, n->inputs[2])->data;
    CHECK(gw && gb && !memcmp(gw, w, sizeof w) && !memcmp(gb, b, sizeof b));
  }
  cs_graph_free(g);
}

/* Declined: the BN stays on its own and is lowered to a Mul and an Add
 * whose constants are ORT's BatchNorm kernel's. */
static void test_decline(bn_case c, const char *rule) {
  int bn_out;
  cs_graph *g = bn_graph(c, &bn_out);
  cs_target t;
  cs_target_default(&t);
  t.pack_weights = 0;
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s: %s", rule, cs_error_message());
  int mul = -1, add = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead || n->op != CS_OP_K_BINARY_F32) continue;
    if (n->k.binary.op == TIDSP_BINARY_MUL) mul = i;
    if (n->k.binary.op == TIDSP_BINARY_ADD && n->outputs[0] == bn_out) add = i;
  }
  CHECK_MSG(mul >= 0 && add >= 0 && gb_count_op(g, CS_OP_K_BINARY_F32) == 2,
            "%s: BN lowered to one Mul and one Add", rule);
  if (mul >= 0 && add >= 0) {
    const float *s = cs_graph_value(g, cs_graph_node(g, mul)->inputs[1])->data;
    const float *b = cs_graph_value(g, cs_graph_node(g, add)->inputs[1])->data;
    CHECK(s && b);
    for (int ch = 0; s && b && ch < C; ch++) {
      volatile float inv_std = 1.0f / sqrtf(var_[ch] + EPS);
      volatile float ns = inv_std * sc_[ch];
      volatile float ms = mean_[ch] * ns;
      float nb = bb_[ch] - ms;
      CHECK_MSG(s[ch] == ns && b[ch] == nb, "%s: channel %d: %a %a vs %a %a", rule, ch, (double)s[ch],
                (double)b[ch], (double)ns, (double)nb);
    }
  }
  cs_graph_free(g);
}

int main(void) {
  init_params();
  test_fold(1, 0);
  test_fold(0, 0);
  test_fold(1, 1);
  test_decline((bn_case){1, 1, 0, 0, 0, 0}, "the conv output has another reader (a graph output)");
  test_decline((bn_case){1, 0, 0, 1, 0, 0}, "the conv weight is a graph input");
  test_decline((bn_case){1, 0, 0, 0, 1, 0}, "a Relu between the conv and the BN");
  test_decline((bn_case){1, 0, 0, 0, 0, 1}, "the BN has an optional output");
  UNIT_MAIN_END();
}
