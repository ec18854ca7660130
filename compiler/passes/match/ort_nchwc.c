/*
 * ort_nchwc.c — ONNX Runtime's NCHWc tensors (ort_nchwc.h), following
 * nchwc_transformer.cc: TransformConv, TransformActivation,
 * TransformBinary, TransformPool, and the activations ConvActivationFusion
 * folds into a Conv before. ORT 1.30 also keeps a HardSigmoid and a Mul of
 * two same-shape NCHWc tensors in NCHWc (its optimized graphs show it).
 */
#include "ort_nchwc.h"

#include "pattern.h"

/* how far back cs_ort_nchwc_value follows a chain of elementwise ops */
#define NCHWC_DEPTH 64

/* float, 2-D, constant weights and bias; ungrouped, depthwise, or whole
 * blocks of channels per group (TransformConv) */
int cs_ort_nchwc_conv(cs_graph *g, int c, int block) {
  const cs_node *n = cs_graph_node(g, c);
  if (n->dead || n->op != CS_OP_CONV || n->n_inputs < 2 || n->n_inputs > 4) return 0;
  if (!cs_match_f32_4d(g, n->inputs[0]) || !cs_match_f32_4d(g, n->outputs[0]) || !cs_match_is_const(g, n->inputs[1]))
    return 0;
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && !cs_match_is_const(g, n->inputs[2])) return 0;
  const cs_value *w = cs_graph_value(g, n->inputs[1]);
  if (w->rank != 4) return 0;
  int64_t groups = cs_node_attr_int(n, "group", 1), c_out = w->shape[0], cpg_in = w->shape[1];
  /* ORT 1.30 pads the input channels up to the block only when they are a
   * multiple of 4 (measured: 20, 28, 36 NCHWc; 18, 22, 26, 30 a plain
   * Conv); below the block the conv reads NCHW input directly */
  if (groups == 1) return cpg_in < block || cpg_in % 4 == 0;
  /* depthwise: channels padded up to the block when a multiple of 4
   * (measured: 4, 8, 12, 20, 24, 36 NCHWc; 6, 10, 18 a plain Conv) */
  if (cpg_in == 1 && c_out == groups) return c_out % 4 == 0;
  if (c_out % block != 0) return 0;
  return cpg_in % block == 0 && c_out % groups == 0 && (c_out / groups) % block == 0;
}

int32_t cs_ort_sum_blocks(const cs_node *n) {
  if (n->n_inputs < 4 || n->inputs[3] < 0) return 0;
  return (int32_t)cs_node_attr_int(n, CS_ORT_SUM_ATTR, TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8) &
         (TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8);
}

/* Conv n holds the sum of an Add that ORT at `block` runs after it (the
 * Add was fused for the other block only). */
static int sum_after(const cs_node *n, int block) {
  const int32_t bit = block == CS_ORT_NCHWC_BLOCK_AVX2 ? TIDSP_MLAS_BLOCK8 : TIDSP_MLAS_BLOCK16;
  return n->n_inputs > 3 && n->inputs[3] >= 0 && !(cs_ort_sum_blocks(n) & bit);
}

/* An activation ORT's ConvActivationFusion folds into the Conv before it
 * (FusedConv), which the NchwcTransformer then converts with the Conv. */
static int conv_activation(cs_op op) {
  return op == CS_OP_RELU || op == CS_OP_SIGMOID || op == CS_OP_TANH || op == CS_OP_LEAKY_RELU ||
         op == CS_OP_HARD_SIGMOID || op == CS_OP_HARD_SWISH || op == CS_OP_CLIP;
}

static int nchwc_value(cs_graph *g, int v, int block, int depth) {
  if (v < 0 || depth > NCHWC_DEPTH || !cs_match_f32_4d(g, v)) return 0;
  const cs_value *x = cs_graph_value(g, v);
  int p = x->producer;
  if (p < 0) return 0;
  const cs_node *n = cs_graph_node(g, p);
  if (n->dead) return 0;
  /* where ORT runs a fused Add after the Conv, the value is the Add's:
   * NCHWc when both its operands are */
  if (n->op == CS_OP_CONV)
    return cs_ort_nchwc_conv(g, p, block) && (!sum_after(n, block) || nchwc_value(g, n->inputs[3], block, depth + 1));
  if (n->op == CS_OP_MAX_POOL || n->op == CS_OP_AVERAGE_POOL)
    return n->n_outputs == 1 && x->shape[1] % block == 0;
  /* a GlobalAveragePool stays NCHWc when its input is NCHWc or a graph
   * input and its channels are whole blocks (measured on ORT 1.30, see
   * mark_nchwc_global_pool.c): a squeeze-excitation conv on it fuses an
   * Add of the pooled tensor */
  if (n->op == CS_OP_GLOBAL_AVERAGE_POOL) {
    if (n->n_inputs != 1 || x->shape[1] % block != 0) return 0;
    const cs_value *in = cs_graph_value(g, n->inputs[0]);
    return (in->producer < 0 && !in->data) || nchwc_value(g, n->inputs[0], block, depth + 1);
  }
  if (n->n_inputs < 1) return 0;
  if (conv_activation(n->op)) {
    int c = cs_match_producer(g, n->inputs[0], CS_OP_CONV);
    if (c >= 0 && cs_match_single_consumer(g, n->inputs[0]) == p && cs_ort_nchwc_conv(g, c, block) &&
        !sum_after(cs_graph_node(g, c), block))
      return 1;
  }
  if (n->op == CS_OP_RELU || n->op == CS_OP_SIGMOID || n->op == CS_OP_TANH || n->op == CS_OP_HARD_SIGMOID)
    return nchwc_value(g, n->inputs[0], block, depth + 1);
  if ((n->op == CS_OP_ADD || n->op == CS_OP_MUL) && n->n_inputs == 2 &&
      cs_match_same_shape(g, n->inputs[0], n->inputs[1]))
    return nchwc_value(g, n->inputs[0], block, depth + 1) && nchwc_value(g, n->inputs[1], block, depth + 1);
  return 0;
}

int cs_ort_nchwc_value(cs_graph *g, int v, int block) { return nchwc_value(g, v, block, 0); }
