/*
 * MarkMatMulNBits — the float MatMuls ONNX Runtime runs as MatMulNBits,
 * where they are folded at compile time (a constant A).
 *
 * ORT (QDQ transformer, DQMatMulToMatMulNBits; default accuracy_level 4)
 * rewrites MatMul(A, DQ(w)) into MatMulNBits (bits 8, block 32) when:
 *   - w is a 2-D int8/uint8 constant, per tensor or per output column
 *     (a DQ over w[K][N] with axis 1; a DQ over w[N][K] with axis 0 under a
 *     Transpose, which ORT moves onto the constant), no block_size;
 *   - the DQ (and that Transpose) feed only this MatMul;
 *   - A is not itself a DequantizeLinear output (that MatMul is a QDQ
 *     group: MatMulIntegerToFloat) and no QuantizeLinear reads the result.
 * MatMulAddFusion runs first: a MatMul + Add of a constant [N] bias becomes
 * a Gemm (the bias inside), with Reshapes around it when A has rank > 2;
 * the Gemm then reads A through that Reshape, so a DQ before A no longer
 * stops the rewrite (Swin-V2's case). Measured on ORT 1.30.
 * MatMulNBits quantizes A at run time (eval/matmul_nbits.h), so its result
 * is not the float product. Swin-V2's continuous position bias is such a
 * MatMul on a constant coordinate table (K = 2): ORT computes it at every
 * run, and cstatic, which folds it, must compute the same.
 *
 * MarkMatMulNBits marks such a MatMul whose A is computed from constants
 * only and whose K is at most CS_NBITS_MAX_K (where the arithmetic is known
 * exactly): "ort_nbits" = [int8 weight value, scale value, zero point value
 * or -1, 1 if w is [N][K]]. It runs first, on the graph as ORT sees it
 * (EliminateQDQTransparent later moves a DQ below a Reshape, which would
 * hide the Reshape that decides the form). FuseMatMulNBitsBias
 * (fuse_matmul_nbits_bias.c) then absorbs the bias Add, and FoldConstant
 * computes the node with cs_fold_matmul_nbits.
 */
#include "eval/matmul_nbits.h"
#include "match/pattern.h"
#include "pass_list.h"

typedef struct {
  int w, scale, zp, nk;
} nbits_weight;

/* B = [Transpose](DQ([Transpose](w))) in one of ORT's forms; 1 and *out set when it is. */
static int match_weight(cs_graph *g, int b, int64_t K, int64_t N, nbits_weight *out) {
  int outer = cs_match_producer(g, b, CS_OP_TRANSPOSE);
  int v = b;
  if (outer >= 0) {
    if (cs_match_single_consumer(g, b) < 0 || !cs_match_swaps_last_two(g, outer, 2)) return 0;
    v = cs_graph_node(g, outer)->inputs[0];
  }
  int dq = cs_match_producer(g, v, CS_OP_DEQUANTIZE_LINEAR);
  if (dq < 0 || cs_match_single_consumer(g, v) < 0) return 0;
  const cs_node *d = cs_graph_node(g, dq);
  if (d->n_inputs < 2 || cs_node_attr_int(d, "block_size", 0) != 0) return 0;
  int w = d->inputs[0];
  int inner = outer < 0 ? cs_match_producer(g, w, CS_OP_TRANSPOSE) : -1;
  if (inner >= 0) { /* DQ(Transpose(w [N][K])): the DQ's axis is over [K][N] */
    if (cs_match_single_consumer(g, w) < 0 || !cs_match_swaps_last_two(g, inner, 2)) return 0;
    w = cs_graph_node(g, inner)->inputs[0];
  }
  const cs_value *wv = cs_graph_value(g, w);
  if (!wv->data || wv->rank != 2 || (wv->dtype != CS_DTYPE_I8 && wv->dtype != CS_DTYPE_U8)) return 0;
  out->w = w;
  out->nk = outer >= 0 || inner >= 0;
  if (wv->shape[0] != (out->nk ? N : K) || wv->shape[1] != (out->nk ? K : N)) return 0;
  out->scale = d->inputs[1];
  out->zp = d->n_inputs > 2 ? d->inputs[2] : -1;
  const cs_value *sv = cs_graph_value(g, out->scale);
  if (!sv->data || sv->dtype != CS_DTYPE_F32) return 0;
  int64_t count = cs_value_numel(sv);
  if (out->zp >= 0) {
    const cs_value *zv = cs_graph_value(g, out->zp);
    if (!zv->data || zv->dtype != wv->dtype || cs_value_numel(zv) != count) return 0;
  }
  if (count == 1) return 1;
  /* per output column: the DQ's axis is the N axis of the tensor it reads */
  int64_t axis = cs_node_attr_int(d, "axis", 1);
  if (axis < 0) axis += 2;
  int n_axis = outer >= 0 ? 0 : 1; /* DQ over w [N][K] under a Transpose, else over [K][N] */
  return count == N && axis == n_axis;
}

static int read_by_quantize(cs_graph *g, int v) {
  int readers[16];
  int count = cs_graph_consumers(g, v, readers, 16);
  for (int i = 0; i < count && i < 16; i++)
    if (cs_graph_node(g, readers[i])->op == CS_OP_QUANTIZE_LINEAR) return 1;
  return count > 16;
}

static cs_status mark(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int marked = 0;
  if (n->n_inputs != 2 || cs_node_attr_ints(n, "ort_nbits", &marked)) return CS_OK;
  const cs_value *a = cs_graph_value(g, n->inputs[0]), *b = cs_graph_value(g, n->inputs[1]);
  if (a->dtype != CS_DTYPE_F32 || a->rank < 2 || b->rank != 2) return CS_OK;
  int64_t K = a->shape[a->rank - 1], N = b->shape[1];
  if (K < 1 || K > CS_NBITS_MAX_K || b->shape[0] != K || !cs_match_from_constants(g, n->inputs[0], 8)) return CS_OK;
  nbits_weight w;
  if (!match_weight(g, n->inputs[1], K, N, &w) || read_by_quantize(g, n->outputs[0])) return CS_OK;
  /* An A read straight from a DequantizeLinear makes a QDQ group
   * (MatMulIntegerToFloat; a float Gemm with a bias), unless the fused
   * Gemm of an A of rank > 2 reads it through the Reshape to 2-D that
   * MatMulAddFusion puts in front. */
  if (cs_match_producer(g, n->inputs[0], CS_OP_DEQUANTIZE_LINEAR) >= 0 &&
      !(cs_match_matmul_bias_add(g, id, N) >= 0 && a->rank > 2))
    return CS_OK;
  int64_t attr[4] = {w.w, w.scale, w.zp, w.nk};
  return cs_node_set_attr_ints(cs_graph_node(g, id), "ort_nbits", 4, attr);
}

cs_status pass_mark_matmul_nbits(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_MATMUL, mark);
}
