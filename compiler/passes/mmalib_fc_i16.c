/*
 * FuseMMALIBQDQFCI16 — int16 fully-connected layers offloaded to
 * mmalib_matmul_bias_i16, the patterns of the int8 FC pass (mmalib_fc.c)
 * with int16 tensors, symmetric only (mmalib_common.h "int16"):
 *
 *   Q( [Relu|Clip]( Gemm( DQ(x:i16), DQ(w:i16 const, zp 0), [C] ) ) )
 *   Q( [Relu|Clip]( [Add(·, bias)]( MatMul( DQ(x:i16), DQ(w:i16 const, zp 0) ) ) ) )
 *   Q( [Relu|Clip]( [Add(·, bias)]( Reshape( MatMul( Reshape( DQ(x:i16) ), DQ(w) ) ) ) ) )
 *
 * Rules (spec "Supported Operations", int16 matmul_bias row): K % 32 == 0,
 * N % 32 == 0, d_zp = o_zp = 0 (and w_zp = 0), weight int16 2-D, data not
 * constant, Gemm only with alpha = beta = 1 and transA = 0, bias a
 * compile-time constant, folded to int64. The weight is stored in the
 * kernel's [N][K] layout (transposed at compile time when the graph has
 * [K][N]). Looked at only when the data is DQ(int16).
 */
#include <stdlib.h>
#include <string.h>

#include "mmalib_common.h"
#include "mmalib_report.h"
#include "pass_list.h"
#include "pattern.h"

static void decline(const cs_node *n, const char *why) {
  cs_mmalib_report_add(CS_OFFLOAD_FC, n->name, NULL, -1.0, "%s", why);
}

static cs_status offload_one(cs_graph *g, const cs_target *t, int mm_id) {
  const cs_node *mm = cs_graph_node(g, mm_id);
  int is_gemm = mm->op == CS_OP_GEMM;
  int trans_b = is_gemm ? (int)cs_node_attr_int(mm, "transB", 0) : 0;
  if (is_gemm && (cs_node_attr_int(mm, "transA", 0) != 0 || cs_node_attr_float(mm, "alpha", 1.0f) != 1.0f ||
                  cs_node_attr_float(mm, "beta", 1.0f) != 1.0f)) {
    decline(mm, "Gemm with transA != 0 or alpha/beta != 1 (not a standard transpose)");
    return CS_OK;
  }
  cs_mm_fc_shape fc;
  cs_mm_fc_shape_of(g, mm_id, &fc);
  int rs_in = fc.rs_in, rs_out = fc.rs_out;
  int x_val = fc.data;
  cs_qparams xq, wq;
  cs_qdq_tail tail;
  int xdq = cs_mm_dq_i16_params(g, x_val, &xq);
  if (xdq < 0) {
    decline(mm, "data is not DequantizeLinear(int16, per-tensor constant qparams)");
    return CS_OK;
  }
  int wdq = -1;
  if (!cs_mm_weight_dq_i16(g, mm->inputs[1], trans_b ? 0 : 1, &wq, &wdq)) {
    cs_qparams_free(&xq);
    decline(mm, "weight is not DequantizeLinear(int16 constant) per-tensor or per-output-channel");
    return CS_OK;
  }
  int bias = fc.bias, add_id = fc.add_id, tail_from = fc.tail_from;
  if (!cs_mm_qdq_tail_i16(g, tail_from, &tail)) {
    cs_qparams_free(&xq);
    cs_qparams_free(&wq);
    decline(mm, "no [Add] -> [Relu|Clip] -> QuantizeLinear(int16) tail");
    return CS_OK;
  }
  char why[200];
  const char *rule = NULL;
  cs_status st = CS_OK;
  int64_t *bias_i = NULL;
  uint8_t *scale = NULL, *shift = NULL;
  int16_t *wnk = NULL;
  int32_t mn, mx;
  int relu = 0;
  int x_in = cs_graph_node(g, xdq)->inputs[0];
  int w_in = cs_graph_node(g, wdq)->inputs[0];
  const cs_value *wv = cs_graph_value(g, w_in);
  const cs_value *x = cs_graph_value(g, x_in);
  if ((rule = cs_mm_i16_zero_points(&wq, &xq, &tail.out, why, sizeof why))) goto done;
  if (wv->rank != 2) { snprintf(why, sizeof why, "weight is not 2-D (rank %d)", wv->rank); rule = why; goto done; }
  if (cs_mm_const_reachable(g, x_in)) { rule = "data is constant (ConstReachability)"; goto done; }
  int64_t n_out = trans_b ? wv->shape[0] : wv->shape[1];
  int64_t k = trans_b ? wv->shape[1] : wv->shape[0];
  if (rs_in >= 0 && (rs_out < 0 || cs_value_numel(cs_graph_value(g, mm->inputs[0])) != cs_value_numel(x))) {
    rule = "reshape around the matmul is not a matched pair";
    goto done;
  }
  if (x->rank < 1 || (rs_in < 0 && x->shape[x->rank - 1] != k) || cs_value_numel(x) % k != 0) {
    rule = "data's last dim != K";
    goto done;
  }
  int64_t m = cs_value_numel(x) / k;
  if (k % 32 != 0) {
    snprintf(why, sizeof why, "K %% 32 != 0 (K=%lld): pad K to %lld with zeros to offload", (long long)k,
             cs_mm_round_up(k, 32));
    rule = why;
    goto done;
  }
  if (n_out % 32 != 0) {
    snprintf(why, sizeof why, "N %% 32 != 0 (N=%lld): pad N to %lld (zero weight rows) to offload", (long long)n_out,
             cs_mm_round_up(n_out, 32));
    rule = why;
    goto done;
  }
  if (wq.count != 1 && wq.count != n_out) { rule = "weight scale count != N"; goto done; }
  if ((relu = cs_mm_i16_act(&tail, &mn, &mx)) < 0) {
    snprintf(why, sizeof why, "fused activation clamp [%d, %d] is neither none nor ReLU", mn, mx);
    rule = why;
    goto done;
  }
  if (x->producer < 0) { rule = "data is a graph input (64-byte alignment not guaranteed)"; goto done; }
  if (cs_graph_is_output(g, cs_graph_node(g, tail.q)->outputs[0])) {
    rule = "output is a graph output (64-byte alignment not guaranteed)";
    goto done;
  }
  if (t->constants_byte_alignment < 64) {
    snprintf(why, sizeof why, "constants-byte-alignment %d < 64 (MMA needs 64-byte aligned tensors)",
             t->constants_byte_alignment);
    rule = why;
    goto done;
  }
  bias_i = malloc(sizeof *bias_i * (size_t)n_out);
  scale = malloc((size_t)n_out);
  shift = malloc((size_t)n_out);
  wnk = malloc(sizeof *wnk * (size_t)(n_out * k));
  if (!bias_i || !scale || !shift || !wnk) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
  const int16_t *wd = wv->data;
  for (int64_t nn = 0; nn < n_out; nn++)
    for (int64_t kk = 0; kk < k; kk++) wnk[nn * k + kk] = trans_b ? wd[nn * k + kk] : wd[kk * n_out + nn];
  double worst = 0.0;
  rule = cs_mm_fold_i16(g, bias, xq.scale[0], &wq, tail.out.scale[0], (int)n_out, bias_i, scale, shift, &worst);
  if (rule) goto done;

  char base[256];
  snprintf(base, sizeof base, "%s", mm->name ? mm->name : "fc");
  char add_name[256] = "";
  if (add_id >= 0) snprintf(add_name, sizeof add_name, "%s", cs_graph_node(g, add_id)->name);
  int w_nk = w_in;
  if (!trans_b) {
    int64_t shape[2] = {n_out, k};
    w_nk = cs_add_const_named(g, base, "mm_weight_nk", CS_DTYPE_I16, 2, shape, wnk);
    if (w_nk < 0) {
      st = CS_ERR_NOMEM; /* message recorded */
      goto done;
    }
  }
  int rq[3];
  if ((st = cs_mm_add_requant_consts_i16(g, base, (int)n_out, bias_i, scale, shift, rq)) != CS_OK) goto done;
  int inputs[5] = {x_in, w_nk, rq[0], rq[1], rq[2]};
  int chain[4] = {rs_in, mm_id, rs_out, add_id};
  int id = cs_mm_replace_chain_i16(g, chain, 4, &tail, relu, CS_OP_K_MMALIB_FC_I16, 5, inputs);
  int64_t args[3] = {m, k, n_out};
  if ((st = cs_mm_set_args(g, id, 3, args)) != CS_OK) goto done;
  /* the bias Add is part of this layer now (the residual-add pass had
   * declined it as an add) */
  if (add_name[0]) cs_mmalib_report_forget(add_name);
  cs_mmalib_report_add(CS_OFFLOAD_FC, cs_graph_node(g, mm_id)->name, "mmalib_matmul_bias_i16", worst, NULL);
done:
  if (rule && st == CS_OK) decline(cs_graph_node(g, mm_id), rule);
  free(bias_i);
  free(scale);
  free(shift);
  free(wnk);
  cs_qparams_free(&xq);
  cs_qparams_free(&wq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status pass_fuse_mmalib_qdq_fc_i16(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || (node->op != CS_OP_GEMM && node->op != CS_OP_MATMUL) || node->n_inputs < 2) continue;
    cs_mm_fc_shape fc;
    cs_mm_fc_shape_of(g, i, &fc);
    if (cs_mm_dq_i16(g, fc.data) < 0) continue;
    cs_status st = offload_one(g, t, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
