/*
 * FuseDequantizeMatmul — weight-only int8 linear layers (the spec's step 9,
 * the LLM path): a float activation times a dequantized int8 constant
 *
 *   MatMul( act:f32, Transpose[swap]( DQ(w:i8 [N][K], s, zp 0) ) )
 *   MatMul( act:f32, DQ( Transpose[swap](w:i8 [N][K]), s, zp 0 ) )
 *   MatMul( act:f32, DQ(w:i8 [K][N], s, zp 0) )
 *     → c7x_dequantize_vecmatmul(act, w[N][K], scale[N])      M, K, N
 *
 * so the weights stay int8 (a quarter of the float weights FoldConstant
 * would otherwise write). The scale is per tensor or per output column;
 * the zero point must be 0. Declined (left to the float path): an
 * activation that is itself a compile-time constant (ConstReachability:
 * fold it instead), a weight of rank other than 2, a transpose or
 * dequantize that something else also reads. Runs after the QDQ fusions
 * (which take quantized activations) and the MMALIB int16 legalization
 * (which has first pick under -mmalib=1), before LegalizeOps. A bias Add
 * after the MatMul stays a float add, as in the spec.
 */
#include <stdlib.h>
#include <string.h>

#include "match/fused_common.h"
#include "match/mmalib_common.h"
#include "pass_list.h"
#include "match/pattern.h"

/* The weight of MatMul input v: an int8 constant behind a dequantize, with
 * a Transpose before or after it (EliminateQDQTransparent sinks the DQ
 * below a Transpose, so DQ(Transpose(w)) is the usual form by now).
 * Returns the DQ node id and sets *w_const, *nk (the constant is [N][K]),
 * *axis (the quantization axis that means "per output column") and *tr. */
static int match_weight(cs_graph *g, int v, int *w_const, int *nk, int *axis, int *tr) {
  *tr = cs_match_producer(g, v, CS_OP_TRANSPOSE);
  if (*tr >= 0) { /* Transpose(DQ(w [N][K])) */
    if (cs_match_single_consumer(g, v) < 0 || !cs_match_swaps_last_two(g, *tr, 2)) return -1;
    v = cs_graph_node(g, *tr)->inputs[0];
  }
  int dq = cs_match_producer(g, v, CS_OP_DEQUANTIZE_LINEAR);
  if (dq < 0 || cs_match_single_consumer(g, v) < 0) return -1;
  int w = cs_graph_node(g, dq)->inputs[0];
  *nk = *tr >= 0;
  *axis = *tr >= 0 ? 0 : 1;
  int inner = cs_match_producer(g, w, CS_OP_TRANSPOSE);
  if (*tr < 0 && inner >= 0) { /* DQ(Transpose(w [N][K])) */
    if (cs_match_single_consumer(g, w) < 0 || !cs_match_swaps_last_two(g, inner, 2)) return -1;
    *tr = inner;
    *nk = 1;
    w = cs_graph_node(g, inner)->inputs[0];
  }
  const cs_value *wv = cs_graph_value(g, w);
  if (!wv->data || wv->dtype != CS_DTYPE_I8 || wv->rank != 2) return -1;
  *w_const = w;
  return dq;
}

static cs_status fuse(cs_graph *g, int mm_id) {
  const cs_node *mm = cs_graph_node(g, mm_id);
  if (mm->n_inputs != 2) return CS_OK;
  const cs_value *act = cs_graph_value(g, mm->inputs[0]);
  if (act->dtype != CS_DTYPE_F32 || act->data || act->rank < 1 || cs_mm_const_reachable(g, mm->inputs[0]))
    return CS_OK;
  int w_const, nk, axis, tr;
  int wdq = match_weight(g, mm->inputs[1], &w_const, &nk, &axis, &tr);
  if (wdq < 0) return CS_OK;
  cs_qparams wq;
  if (cs_qparams_read(g, cs_graph_node(g, wdq), &wq) != CS_OK) { cs_error_clear(); return CS_OK; }
  const cs_value *wv = cs_graph_value(g, w_const);
  cs_status st = CS_OK;
  float *scale = NULL;
  int8_t *wt = NULL;
  if (!cs_qparams_per_tensor(&wq) && wq.axis != axis) goto done;
  for (int c = 0; c < wq.count; c++)
    if (wq.zps[c] != 0) goto done;
  int64_t n_out = nk ? wv->shape[0] : wv->shape[1], k = nk ? wv->shape[1] : wv->shape[0];
  if (act->shape[act->rank - 1] != k || (wq.count != 1 && wq.count != n_out)) goto done;
  int64_t m = cs_value_numel(act) / k;
  if (m > INT32_MAX || k > INT32_MAX || n_out > INT32_MAX) goto done;
  char base[256];
  snprintf(base, sizeof base, "%s", mm->name ? mm->name : "matmul");
  scale = malloc(sizeof(float) * (size_t)n_out);
  if (!scale) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
  for (int64_t j = 0; j < n_out; j++) scale[j] = wq.scale[wq.count > 1 ? j : 0];
  int64_t sshape[1] = {n_out};
  int s_id = cs_add_const_named(g, base, "wo_scale", CS_DTYPE_F32, 1, sshape, scale);
  if (s_id < 0) {
    st = CS_ERR_NOMEM; /* message recorded */
    goto done;
  }
  int w_id = w_const;
  if (!nk) {
    wt = malloc((size_t)(n_out * k));
    if (!wt) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
    const int8_t *src = wv->data;
    for (int64_t kk = 0; kk < k; kk++)
      for (int64_t j = 0; j < n_out; j++) wt[j * k + kk] = src[kk * n_out + j];
    int64_t shape[2] = {n_out, k};
    w_id = cs_add_const_named(g, base, "wo_weight_nk", CS_DTYPE_I8, 2, shape, wt);
    if (w_id < 0) {
      st = CS_ERR_NOMEM;
      goto done;
    }
  }
  int nodes[3] = {wdq, tr, mm_id};
  char *origin = cs_origin_join(g, nodes, 3);
  if (!origin) {
    st = CS_ERR_NOMEM;
    goto done;
  }
  int out = cs_graph_node(g, mm_id)->outputs[0];
  int inputs[3] = {cs_graph_node(g, mm_id)->inputs[0], w_id, s_id};
  for (int i = 0; i < 3; i++)
    if (nodes[i] >= 0) cs_graph_remove_node(g, nodes[i]);
  int id = cs_add_kernel(g, CS_OP_K_DEQUANT_VECMATMUL, origin, 3, inputs, out);
  free(origin);
  int64_t args[3] = {m, k, n_out};
  st = cs_mm_set_args(g, id, 3, args);
done:
  free(scale);
  free(wt);
  cs_qparams_free(&wq);
  return st;
}

cs_status pass_fuse_dequantize_matmul(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_MATMUL, fuse);
}
