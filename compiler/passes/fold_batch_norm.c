/*
 * FoldBatchNorm — ONNX Runtime's ConvBNFusion:
 *
 *   BatchNormalization( Conv(x, W:const, [B:const]), scale, bB, mean, var )
 *     → Conv(x, W', B')        (the Conv's only consumer is the BN, its
 *                               output is no graph output, and the BN has
 *                               no optional outputs)
 *
 * in float32, one rounding per step and in ORT's order, so the folded
 * weights are ORT's bit for bit:
 *   s  = fl(scale / fl(sqrt(fl(var + eps))))
 *   W' = fl(W[c,…] · s[c])
 *   B' = fl(fl(fl(B − mean) · s) + bB)     with a conv bias
 *   B' = fl(bB − fl(mean · s))             without
 * A BN that no convolution absorbs (DenseNet's, after a Concat) is lowered
 * by LegalizeOps as ORT's BatchNorm kernel computes it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

static int const_f32(cs_graph *g, int v, int64_t count) {
  const cs_value *x = cs_graph_value(g, v);
  return x->data && x->dtype == CS_DTYPE_F32 && cs_value_numel(x) == count;
}

static cs_status fold(cs_graph *g, int conv, int bn) {
  const cs_node *c = cs_graph_node(g, conv), *b = cs_graph_node(g, bn);
  const cs_value *w = cs_graph_value(g, c->inputs[1]);
  int64_t m = w->shape[0], per = cs_value_numel(w) / m;
  int has_bias = c->n_inputs > 2 && c->inputs[2] >= 0;
  float eps = cs_node_attr_float(b, "epsilon", 1e-5f);
  const float *scale = cs_graph_value(g, b->inputs[1])->data;
  const float *bb = cs_graph_value(g, b->inputs[2])->data;
  const float *mean = cs_graph_value(g, b->inputs[3])->data;
  const float *var = cs_graph_value(g, b->inputs[4])->data;
  const float *cb = has_bias ? cs_graph_value(g, c->inputs[2])->data : NULL;
  float *nw = malloc(sizeof(float) * (size_t)(m * per + m));
  if (!nw) return cs_error(CS_ERR_NOMEM, "out of memory");
  float *nb = nw + m * per;
  for (int64_t o = 0; o < m; o++) {
    float sd = sqrtf(var[o] + eps);
    float s = scale[o] / sd;
    for (int64_t i = 0; i < per; i++) nw[o * per + i] = ((const float *)w->data)[o * per + i] * s;
    if (cb) {
      float t = cb[o] - mean[o];
      t = t * s;
      nb[o] = t + bb[o];
    } else {
      float ms = mean[o] * s;
      nb[o] = bb[o] - ms;
    }
  }
  char base[256];
  snprintf(base, sizeof base, "%s", c->name);
  int64_t wshape[CS_MAX_RANK];
  memcpy(wshape, w->shape, sizeof wshape);
  int wrank = w->rank;
  int wv = cs_add_const_named(g, base, "bn_weight", CS_DTYPE_F32, wrank, wshape, nw);
  int bv = cs_add_const_named(g, base, "bn_bias", CS_DTYPE_F32, 1, &m, nb);
  free(nw);
  if (wv < 0 || bv < 0) return CS_ERR_NOMEM; /* message recorded */
  cs_node *cn = cs_graph_node(g, conv);
  if (!has_bias) {
    int *ins = realloc(cn->inputs, sizeof(int) * 3);
    if (!ins) return cs_error(CS_ERR_NOMEM, "out of memory");
    cn->inputs = ins;
    cn->n_inputs = 3;
  }
  cs_node_set_input(g, conv, 1, wv);
  cs_node_set_input(g, conv, 2, bv);
  /* The BN's output is now the Conv's. */
  cs_absorb_consumer(g, conv, bn);
  return CS_OK;
}

cs_status pass_fold_batch_norm(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *b = cs_graph_node(g, i);
    if (b->dead || b->op != CS_OP_BATCH_NORMALIZATION || b->n_inputs != 5) continue;
    int conv = cs_match_producer(g, b->inputs[0], CS_OP_CONV);
    /* As ORT: the Conv's output goes to the BN only (and is not a graph
     * output); the BN has no optional outputs at all, read or not. */
    if (conv < 0 || cs_match_single_consumer(g, b->inputs[0]) != i) continue;
    int optional = 0;
    for (int j = 1; j < b->n_outputs; j++) optional |= b->outputs[j] >= 0;
    if (optional) continue;
    const cs_node *c = cs_graph_node(g, conv);
    const cs_value *w = cs_graph_value(g, c->inputs[1]);
    if (!w->data || w->dtype != CS_DTYPE_F32 || w->rank < 3) continue;
    int64_t m = w->shape[0];
    int ok = 1;
    for (int j = 1; j < 5; j++) ok &= const_f32(g, b->inputs[j], m) && cs_graph_value(g, b->inputs[j])->rank == 1;
    if (c->n_inputs > 2 && c->inputs[2] >= 0) ok &= const_f32(g, c->inputs[2], m);
    if (!ok) continue;
    cs_status st = fold(g, conv, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
