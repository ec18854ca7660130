/*
 * FuseQDQToInt8LayerNorm — the spec's FuseQDQToC7xLayerNorm: an int8
 * LayerNormalization between a dequantize and a quantize is one kernel call
 * with the (de)quantization inside, and no float tensor in the arena:
 *
 *   Q( LayerNormalization( DQ(x:i8), scale, [bias] ) ) : i8
 *     → k_layer_norm_i8(x, scale, bias)
 *
 * Both quantizations per tensor; Mean and InvStdDev unused. The kernel
 * gives the float path's bytes (runtime/kernels/ref/layer_norm_f32.c), so
 * the fusion changes memory and calls, never results. (The spec's kernel is
 * c7x_int8_layer_norm with positional float arguments; this one takes the
 * runtime's parameter struct like every other tidsp_ kernel, on all
 * targets.)
 */
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

static int stats_unused(cs_graph *g, const cs_node *n) {
  for (int j = 1; j < n->n_outputs; j++) {
    int c;
    if (n->outputs[j] >= 0 &&
        (cs_graph_consumers(g, n->outputs[j], &c, 1) > 0 || cs_graph_is_output(g, n->outputs[j])))
      return 0;
  }
  return 1;
}

static cs_status fuse(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  if (!stats_unused(g, n)) return CS_OK;
  for (int j = 1; j < n->n_inputs; j++)
    if (n->inputs[j] >= 0 && cs_graph_value(g, n->inputs[j])->dtype != CS_DTYPE_F32) return CS_OK;
  cs_qdq_around m;
  if (!cs_match_qdq_around(g, id, &m)) return CS_OK;
  const cs_value *x = cs_graph_value(g, m.x);
  const int64_t axis = m.axis;
  tidsp_layer_norm_i8_params p;
  memset(&p, 0, sizeof p);
  p.ln.outer = 1;
  p.ln.norm = 1;
  for (int d = 0; d < x->rank; d++) {
    if (d < axis) p.ln.outer *= (int32_t)x->shape[d];
    else p.ln.norm *= (int32_t)x->shape[d];
  }
  p.ln.epsilon = cs_node_attr_float(n, "epsilon", 1e-5f);
  p.x_zp = m.xq.zp[0];
  p.x_scale = m.xq.scale[0];
  p.y_zp = m.tail.out.zp[0];
  p.y_scale = m.tail.out.scale[0];
  int inputs[3] = {m.x, n->inputs[1], n->n_inputs > 2 ? n->inputs[2] : -1};
  int chain[1] = {id};
  int k = cs_replace_chain(g, chain, 1, &m.tail, CS_OP_K_LAYER_NORM_I8, 3, inputs);
  if (k >= 0) cs_graph_node(g, k)->k.layer_norm_i8 = p;
  cs_qdq_around_free(&m);
  return k < 0 ? CS_ERR_NOMEM : CS_OK; /* the message is recorded */
}

cs_status pass_fuse_qdq_layer_norm(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_LAYER_NORMALIZATION, fuse);
}
