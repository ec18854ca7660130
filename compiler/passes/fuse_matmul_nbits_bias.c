/*
 * FuseMatMulNBitsBias — the bias Add of a MatMul that MarkMatMulNBits
 * marked (ORT runs it as MatMulNBits) moves into it, as ORT's
 * MatMulAddFusion does before the MatMulNBits rewrite: "ort_nbits_bias" =
 * the bias value. It runs just before LegalizeOps, which passes the bias
 * to the kernel node; FoldConstant computes the node with
 * cs_fold_matmul_nbits, adding the bias where MatMulNBits adds it.
 */
#include "match/pattern.h"
#include "pass_list.h"

/* The bias Add of a marked MatMul moves into it (MatMulAddFusion). */
static cs_status fuse_bias(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  int marked = 0;
  if (!cs_node_attr_ints(n, "ort_nbits", &marked) || cs_node_attr_int(n, "ort_nbits_bias", -1) >= 0) return CS_OK;
  const cs_value *b = cs_graph_value(g, n->inputs[1]);
  int bias = b->rank == 2 ? cs_match_matmul_bias_add(g, id, b->shape[1]) : -1;
  if (bias < 0) return CS_OK;
  cs_absorb_consumer(g, id, cs_match_single_consumer(g, n->outputs[0]));
  return cs_node_set_attr_int(cs_graph_node(g, id), "ort_nbits_bias", bias);
}

cs_status pass_fuse_matmul_nbits_bias(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_MATMUL, fuse_bias);
}
