/*
 * FuseDequantizeReduceMean — the mean of a dequantized int8 tensor reads
 * the int8 tensor:
 *
 *   k_dequantize(scale, zp, x:i8) : d:f32 → k_reduce_mean_f32(d) : y
 *     → k_reduce_mean_dq_i8(dq, x) : y
 *
 * dq[q + 128]: the 256 floats k_dequantize writes for the codes q, computed
 * here by that kernel itself (a constant: no arithmetic at inference but
 * the sums).
 *
 * A squeeze-excitation block's mean (x.mean([2, 3]) exports as ReduceMean,
 * which ORT's quantizer leaves in float: DQ → ReduceMean → Q) wrote d, four
 * bytes per element, to read it back once. The fused kernel computes the
 * same floats in the same order (kernels.h), so y is bit for bit the same.
 *
 * Taken when d is read by the mean alone (and is no graph output), the
 * dequantize is per tensor with constant parameters, and each output's
 * reduced elements are one
 * contiguous block: the reduced dims of size > 1 all come after the kept
 * ones of size > 1 (the kernel's contract).
 */
#include <stdlib.h>

#include "pass_list.h"
#include "match/pattern.h"

/* The reduced dims of size > 1 trail the kept ones, and there is one. */
static int reduces_blocks(const tidsp_reduce_params *p) {
  int seen_reduced = 0;
  for (int d = 0; d < p->rank; d++) {
    if (p->in_shape[d] == 1) continue;
    int reduced = (p->reduce_mask >> d) & 1;
    if (!reduced && seen_reduced) return 0;
    seen_reduced |= reduced;
  }
  return seen_reduced;
}

static cs_status fuse(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  int d = n->inputs[0];
  int dq = cs_match_producer(g, d, CS_OP_K_DEQUANTIZE);
  if (dq < 0 || cs_match_single_consumer(g, d) != id || !reduces_blocks(&n->k.reduce)) return CS_OK;
  const cs_node *dn = cs_graph_node(g, dq);
  if (dn->n_inputs != 3 || dn->k.qdq.channels != 1 || dn->k.qdq.dtype != TIDSP_DTYPE_I8 ||
      cs_graph_value(g, dn->inputs[2])->dtype != CS_DTYPE_I8)
    return CS_OK;
  const cs_value *scale = cs_graph_value(g, dn->inputs[0]), *zp = cs_graph_value(g, dn->inputs[1]);
  if (!scale->data || !zp->data) return CS_OK;
  float table[256]; /* (its reference: what the compiler computes never depends on its own CPU) */
  tidsp_qdq_params qp = {1, 1, 256, TIDSP_DTYPE_I8};
  int8_t codes[256];
  for (int q = 0; q < 256; q++) codes[q] = (int8_t)(q - 128);
  if (tidsp_dequantize__ref(&qp, scale->data, zp->data, codes, table) != TIDSP_OK) return CS_OK;
  const int64_t n256[1] = {256};
  int dq_table = cs_add_const_named(g, n->name ? n->name : "mean", "dq", CS_DTYPE_F32, 1, n256, table);
  if (dq_table < 0) return CS_ERR_NOMEM; /* message recorded */
  int ins[2] = {dq_table, cs_graph_node(g, dq)->inputs[2]};
  char *origin = cs_origin_join(g, (const int[]){dq, id}, 2);
  if (!origin) return CS_ERR_NOMEM; /* message recorded */
  if (cs_node_set_inputs(g, id, 2, ins) != CS_OK) {
    free(origin);
    return cs_error(CS_ERR_NOMEM, "out of memory");
  }
  n = cs_graph_node(g, id);
  n->op = CS_OP_K_REDUCE_MEAN_DQ_I8; /* its params: the mean's own */
  free(n->origin);
  n->origin = origin;
  cs_graph_remove_node(g, dq);
  return CS_OK;
}

cs_status pass_fuse_dequantize_reduce_mean(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_K_REDUCE_MEAN_F32, fuse);
}
