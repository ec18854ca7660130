/*
 * test_passes_dq_reduce_mean.c — FuseDequantizeReduceMean: k_dequantize →
 * k_reduce_mean_f32 over trailing dims becomes one k_reduce_mean_dq_i8 on
 * the int8 tensor, with the same bytes (both of ORT's summation orders).
 * Declines: the float tensor also a graph output, a per-channel
 * dequantize, a mean over channels (not one block per output).
 */
#include <stdlib.h>
#include <string.h>

#include "kernel_graph.h"
#include "passes/pass_list.h"
#include "unit.h"

enum { C = 5, H = 7, W = 7 };

typedef struct spec {
  int32_t mask;    /* reduced dims of [1, C, H, W] */
  int order;       /* channels_last_order */
  int dq_output;   /* the dequantized tensor is a graph output too */
  int per_channel; /* one scale per channel */
} spec;

static cs_graph *build(const spec *s) {
  cs_graph *g = cs_graph_new("dq_mean");
  int64_t xs[4] = {1, C, H, W}, ys[4] = {1, s->mask & 2 ? 1 : C, s->mask & 4 ? 1 : H, s->mask & 8 ? 1 : W};
  int64_t nc[1] = {s->per_channel ? C : 1};
  const float scales[C] = {0.037f, 0.11f, 0.02f, 0.5f, 0.013f};
  const int32_t zps[C] = {-3, 0, 17, -128, 90};
  int x = gb_value(g, "x", CS_DTYPE_I8, 4, xs);
  int in[3] = {cs_graph_add_const(g, "scale", CS_DTYPE_F32, 1, nc, scales),
               cs_graph_add_const(g, "zp", CS_DTYPE_I32, 1, nc, zps), x};
  int id;
  int d = gb_node(g, CS_OP_K_DEQUANTIZE, "dq", 3, in, CS_DTYPE_F32, 4, xs, &id);
  tidsp_qdq_params q = {s->per_channel ? 1 : C * H * W, s->per_channel ? C : 1, s->per_channel ? H * W : 1,
                        TIDSP_DTYPE_I8};
  cs_graph_node(g, id)->k.qdq = q;
  int y = gb_node(g, CS_OP_K_REDUCE_MEAN_F32, "mean", 1, &d, CS_DTYPE_F32, 4, ys, &id);
  tidsp_reduce_params *p = &cs_graph_node(g, id)->k.reduce;
  memset(p, 0, sizeof *p);
  p->rank = 4;
  for (int k = 0; k < 4; k++) p->in_shape[k] = (int32_t)xs[k];
  p->reduce_mask = s->mask;
  p->channels_last_order = s->order;
  int outs[2] = {y, d};
  gb_set_io(g, 1, &x, s->dq_output ? 2 : 1, outs);
  return g;
}

static void check(const spec *s, int fused) {
  int8_t x[C * H * W];
  kg_fill_i8(x, C * H * W, 7u + (uint32_t)s->mask);
  const void *in[1] = {x};
  cs_graph *g = build(s);
  size_t n0, n1;
  uint8_t *before = kg_run_output(g, in, &n0);
  cs_target t;
  cs_target_default(&t);
  CHECK(pass_fuse_dequantize_reduce_mean(g, &t) == CS_OK && pass_dce(g, &t) == CS_OK);
  uint8_t *after = kg_run_output(g, in, &n1);
  int got = gb_count_op(g, CS_OP_K_REDUCE_MEAN_DQ_I8), dqs = gb_count_op(g, CS_OP_K_DEQUANTIZE);
  CHECK_MSG(got == fused && dqs == !fused, "mask %d order %d dq_output %d per_channel %d: fused %d, dequantize %d",
            (int)s->mask, s->order, s->dq_output, s->per_channel, got, dqs);
  CHECK_MSG(before && after && n0 == n1 && !memcmp(before, after, n0), "mask %d order %d: bytes differ",
            (int)s->mask, s->order);
  free(before);
  free(after);
  cs_graph_free(g);
}

int main(void) {
  for (int order = 0; order < 2; order++) {
    spec over_hw = {12, order, 0, 0}, over_w = {8, order, 0, 0};
    check(&over_hw, 1);
    check(&over_w, 1);
  }
  spec dq_output = {12, 0, 1, 0}, per_channel = {12, 0, 0, 1}, over_c = {2, 0, 0, 0};
  check(&dq_output, 0);
  check(&per_channel, 0);
  check(&over_c, 0);
  UNIT_MAIN_END();
}
