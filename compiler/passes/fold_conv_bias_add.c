/*
 * FoldConvBiasAdd (-mmalib=1) — the float bias a PT2E export adds after a
 * convolution, the TI fork's own conv pattern
 * (dequantize -> conv2d -> add(bias) -> quantize):
 *
 *   Add( Conv(x, W, [B:f32 const]), C:f32 const )  →  Conv(x, W, B + C)
 *
 * when C holds one value per output channel ([M,1,1] or [1,M,1,1]
 * against the NCHW output, right-aligned as ONNX broadcasts), the Conv's output goes to the Add
 * only (and is no graph output) and the Conv's bias, if any, is a float
 * constant. The MMALIB conv pass then sees DQ → Conv(bias) → Q and folds
 * the bias into its int32 bias like any float Conv bias (within 1/2 of an
 * accumulator unit). Only with -mmalib=1: without it such a graph runs as
 * ONNX Runtime runs it (a float Conv, then the Add), bit for bit.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

/* C is one value per channel of the rank-`rank` NCHW output with M channels. */
static int per_channel(const cs_value *c, int rank, int64_t m) {
  if (!c->data || c->dtype != CS_DTYPE_F32 || cs_value_numel(c) != m || c->rank > rank) return 0;
  for (int i = 0; i < c->rank; i++) {
    int axis = rank - c->rank + i; /* right-aligned, as ONNX broadcasts */
    if (c->shape[i] != (axis == 1 ? m : 1)) return 0;
  }
  return 1;
}

static cs_status fold(cs_graph *g, int conv, int add, int c_in) {
  const cs_node *c = cs_graph_node(g, conv);
  int64_t m = cs_graph_value(g, c->outputs[0])->shape[1];
  const float *cv = cs_graph_value(g, c_in)->data;
  int has_bias = c->n_inputs > 2 && c->inputs[2] >= 0;
  const float *b = has_bias ? cs_graph_value(g, c->inputs[2])->data : NULL;
  float *nb = malloc(sizeof(float) * (size_t)m);
  if (!nb) return cs_error(CS_ERR_NOMEM, "out of memory");
  for (int64_t o = 0; o < m; o++) nb[o] = b ? b[o] + cv[o] : cv[o];
  char base[256];
  snprintf(base, sizeof base, "%s", c->name);
  int bv = cs_add_const_named(g, base, "bias_add", CS_DTYPE_F32, 1, &m, nb);
  free(nb);
  if (bv < 0) return CS_ERR_NOMEM; /* message recorded */
  c = cs_graph_node(g, conv);
  int ins[3] = {c->inputs[0], c->inputs[1], bv};
  cs_status st = cs_node_set_inputs(g, conv, 3, ins);
  if (st != CS_OK) return st;
  /* The Add's output is now the Conv's. */
  cs_absorb_consumer(g, conv, add);
  return CS_OK;
}

cs_status pass_fold_conv_bias_add(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *a = cs_graph_node(g, i);
    if (a->dead || a->op != CS_OP_ADD || a->n_inputs != 2 || a->outputs[0] < 0) continue;
    for (int side = 0; side < 2; side++) {
      int conv = cs_match_producer(g, a->inputs[side], CS_OP_CONV);
      if (conv < 0 || cs_match_single_consumer(g, a->inputs[side]) != i) continue;
      const cs_node *c = cs_graph_node(g, conv);
      const cs_value *out = cs_graph_value(g, c->outputs[0]);
      if (out->dtype != CS_DTYPE_F32 || out->rank < 3) continue;
      int64_t m = out->shape[1];
      if (!per_channel(cs_graph_value(g, a->inputs[1 - side]), out->rank, m)) continue;
      if (c->n_inputs > 2 && c->inputs[2] >= 0) {
        const cs_value *b = cs_graph_value(g, c->inputs[2]);
        if (!b->data || b->dtype != CS_DTYPE_F32 || cs_value_numel(b) != m) continue;
      }
      cs_status st = fold(g, conv, i, a->inputs[1 - side]);
      if (st != CS_OK) return st;
      break;
    }
  }
  return CS_OK;
}
