/*
 * FoldConvBiasAdd (-mmalib=1): Add(Conv(x, W, [B]), C) with C one float
 * per output channel becomes Conv(x, W, B + C) (either Add operand order,
 * with and without a conv bias); declined when C broadcasts along another
 * axis, when the Conv's output has another reader, or when the Conv's bias
 * is no float constant.
 */
#include <stdio.h>
#include <string.h>

#include "graph_build.h"
#include "passes/pass_list.h"
#include "unit.h"

enum { C = 5, HW = 5, K = 3 };

typedef struct cba_case {
  int conv_bias;   /* the Conv has a (constant) bias */
  int swapped;     /* Add(C, conv) */
  int c_rank;      /* C's shape: 4 = [1,C,1,1], 3 = [C,1,1], -4 = [1,1,1,C] (along W) */
  int conv_output; /* rule: the Conv's output is also a graph output */
  int bias_input;  /* rule: the Conv's bias is a graph input */
} cba_case;

static float w_[C * C * K * K], b_[C], c_[C];

static cs_graph *graph(cba_case k, int *conv_id, int *add_id) {
  cs_graph *g = cs_graph_new("cba");
  int64_t xs[4] = {1, C, HW, HW}, ws[4] = {C, C, K, K}, bs[1] = {C};
  int64_t cs4[4] = {1, C, 1, 1}, cs3[3] = {C, 1, 1}, csw[4] = {1, 1, 1, C};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int b = k.bias_input ? gb_value(g, "b", CS_DTYPE_F32, 1, bs) : cs_graph_add_const(g, "b", CS_DTYPE_F32, 1, bs, b_);
  int in[3] = {x, cs_graph_add_const(g, "w", CS_DTYPE_F32, 4, ws, w_), b};
  int y = gb_node(g, CS_OP_CONV, "conv", k.conv_bias ? 3 : 2, in, CS_DTYPE_F32, 4, xs, conv_id);
  int64_t pads[4] = {1, 1, 1, 1};
  cs_node_set_attr_ints(cs_graph_node(g, *conv_id), "pads", 4, pads);
  int cv = k.c_rank == 4    ? cs_graph_add_const(g, "c", CS_DTYPE_F32, 4, cs4, c_)
           : k.c_rank == 3 ? cs_graph_add_const(g, "c", CS_DTYPE_F32, 3, cs3, c_)
                           : cs_graph_add_const(g, "c", CS_DTYPE_F32, 4, csw, c_);
  int ain[2] = {k.swapped ? cv : y, k.swapped ? y : cv};
  int z = gb_node(g, CS_OP_ADD, "add", 2, ain, CS_DTYPE_F32, 4, xs, add_id);
  int r = gb_node(g, CS_OP_RELU, "relu", 1, &z, CS_DTYPE_F32, 4, xs, NULL);
  int ins[2] = {x, b}, outs[2] = {r, y};
  gb_set_io(g, k.bias_input ? 2 : 1, ins, k.conv_output ? 2 : 1, outs);
  return g;
}

static void test_fold(cba_case k) {
  int conv, add;
  cs_graph *g = graph(k, &conv, &add);
  int y = cs_graph_node(g, add)->outputs[0];
  CHECK_MSG(pass_fold_conv_bias_add(g, NULL) == CS_OK, "%s", cs_error_message());
  const cs_node *c = cs_graph_node(g, conv);
  CHECK_MSG(cs_graph_node(g, add)->dead && c->n_inputs == 3 && c->outputs[0] == y &&
                cs_graph_value(g, y)->producer == conv,
            "bias %d swapped %d rank %d: the Add is the Conv's bias", k.conv_bias, k.swapped, k.c_rank);
  const float *nb = cs_graph_value(g, c->inputs[2])->data;
  CHECK(nb != NULL);
  for (int o = 0; nb && o < C; o++) {
    float want = k.conv_bias ? b_[o] + c_[o] : c_[o];
    CHECK_MSG(nb[o] == want, "channel %d: %a vs %a", o, (double)nb[o], (double)want);
  }
  CHECK(c->origin && strstr(c->origin, "conv") && strstr(c->origin, "add"));
  CHECK_MSG(cs_graph_check_uses(g) == CS_OK, "%s", cs_error_message());
  cs_graph_free(g);
}

static void test_decline(cba_case k, const char *rule) {
  int conv, add;
  cs_graph *g = graph(k, &conv, &add);
  int n_in = cs_graph_node(g, conv)->n_inputs;
  CHECK_MSG(pass_fold_conv_bias_add(g, NULL) == CS_OK, "%s: %s", rule, cs_error_message());
  CHECK_MSG(!cs_graph_node(g, add)->dead && cs_graph_node(g, conv)->n_inputs == n_in, "%s: declined", rule);
  cs_graph_free(g);
}

int main(void) {
  for (int i = 0; i < C * C * K * K; i++) w_[i] = (float)((i * 37) % 19 - 9) * 0.0371f;
  for (int o = 0; o < C; o++) {
    b_[o] = 0.113f * (float)(o - 2);
    c_[o] = -0.27f + 0.0931f * (float)o;
  }
  test_fold((cba_case){0, 0, 4, 0, 0});
  test_fold((cba_case){1, 0, 4, 0, 0});
  test_fold((cba_case){1, 1, 3, 0, 0});
  test_fold((cba_case){0, 1, 3, 0, 0});
  test_decline((cba_case){1, 0, -4, 0, 0}, "C broadcasts along W, not the channels");
  test_decline((cba_case){1, 0, 4, 1, 0}, "the conv output is also a graph output");
  test_decline((cba_case){1, 0, 4, 0, 1}, "the conv bias is a graph input");
  UNIT_MAIN_END();
}
