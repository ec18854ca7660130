/*
 * FuseInt16ResidualAdd — Q:i16( [Relu]( Add( DQ(a:i16), DQ(b:i16) ) ) )
 * with both operands activations of the same shape →
 * c7x_int16_residual_add_relu, either operand order (the roles are just the
 * (m, zp) pairs of the params blob, include/cstatic/mmalib.h).
 *
 * Symmetric only (spec "Supported Operations", int16 residual add row):
 * d_zp, skip_zp and o_zp must all be 0 — the blob's zero points are int8
 * fields, and the int16 path has none. The multipliers are chosen as the
 * int8 pass does (mmalib_add.c): m = round(s_in/s_out · 2^shift) with the
 * largest shift (≤ 62) keeping both below 2^30 (the larger one then has a
 * relative error ≤ 2^−30, the smaller one ≤ 2^−30 · larger/smaller, the
 * reported worst); the kernel's int64 accumulator holds |x|·m ≤ 2^45
 * exactly. Its ReLU
 * clamps at zp_out = 0, exact. Looked at only when an operand is DQ(int16).
 */
#include <stdio.h>

#include "mmalib_common.h"
#include "mmalib_report.h"
#include "pass_list.h"
#include "pattern.h"

static void decline(const cs_node *n, const char *why) {
  cs_mmalib_report_add(CS_OFFLOAD_RES_ADD, n->name, NULL, -1.0, "%s", why);
}

static cs_status offload_one(cs_graph *g, int add_id) {
  const cs_node *add = cs_graph_node(g, add_id);
  cs_qparams aq, bq;
  int adq = cs_mm_dq_i16_params(g, add->inputs[0], &aq);
  if (adq < 0) { decline(add, "operand 0 is not DequantizeLinear(int16, per-tensor constant qparams)"); return CS_OK; }
  int bdq = cs_mm_dq_i16_params(g, add->inputs[1], &bq);
  if (bdq < 0) {
    cs_qparams_free(&aq);
    decline(add, "operand 1 is not DequantizeLinear(int16, per-tensor constant qparams)");
    return CS_OK;
  }
  cs_qdq_tail tail;
  if (!cs_mm_qdq_tail_i16(g, add->outputs[0], &tail)) {
    cs_qparams_free(&aq);
    cs_qparams_free(&bq);
    decline(add, "no [Relu] -> QuantizeLinear(int16) tail");
    return CS_OK;
  }
  const char *rule = NULL;
  char why[200];
  int a_in = cs_graph_node(g, adq)->inputs[0], b_in = cs_graph_node(g, bdq)->inputs[0];
  int32_t mn, mx;
  int relu;
  if (aq.zp[0] != 0 || bq.zp[0] != 0 || tail.out.zp[0] != 0) {
    snprintf(why, sizeof why, "d_zp/skip_zp/o_zp != 0 (%d/%d/%d; int16 is symmetric only)", aq.zp[0], bq.zp[0],
             tail.out.zp[0]);
    rule = why;
    goto done;
  }
  if ((relu = cs_mm_i16_act(&tail, &mn, &mx)) < 0) {
    snprintf(why, sizeof why, "activation clamp [%d, %d] is neither none nor ReLU at o_zp=0", mn, mx);
    rule = why;
    goto done;
  }
  rule = cs_mm_residual_add(g, add_id, &tail, a_in, b_in, &aq, &bq, relu, CS_OP_K_C7X_RESIDUAL_ADD_I16,
                            "c7x_int16_residual_add_relu");
done:
  if (rule && rule != cs_mm_nomem) decline(cs_graph_node(g, add_id), rule);
  cs_qparams_free(&aq);
  cs_qparams_free(&bq);
  cs_qparams_free(&tail.out);
  return rule == cs_mm_nomem ? CS_ERR_NOMEM : CS_OK;
}

cs_status pass_fuse_int16_residual_add(cs_graph *g, const cs_target *t) {
  (void)t;
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_ADD || node->n_inputs != 2) continue;
    if (cs_mm_dq_i16(g, node->inputs[0]) < 0 && cs_mm_dq_i16(g, node->inputs[1]) < 0) continue;
    cs_status st = offload_one(g, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
