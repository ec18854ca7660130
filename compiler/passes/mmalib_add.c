/*
 * FuseInt8ResidualAdd — Q( [Relu]( Add( DQ(a:i8), DQ(b:i8) ) ) ) with
 * both operands activations of the same shape → c7x_int8_residual_add_relu
 * (either operand order: the operands' roles are just (m, zp) pairs of the
 * 16-byte params blob, include/cstatic/mmalib.h).
 *
 *   m_a = round(a_s/o_s · 2^shift), m_b likewise, with the largest shift
 *   (≤ 62) keeping both below 2^30: the relative error of each multiplier
 *   is ≤ 2^−30, far inside the 1-LSB budget of the kernel's half-up rounding.
 * The kernel's ReLU clamps at zp_out, the quantized zero, which is exact;
 * a Clip narrower than the int8 range is declined.
 */
#include <stdio.h>

#include "mmalib_common.h"
#include "mmalib_report.h"
#include "pass_list.h"
#include "pattern.h"
#include "qdq_tail.h"

static void decline(const cs_node *n, const char *why) {
  cs_mmalib_report_add(CS_OFFLOAD_RES_ADD, n->name, NULL, -1.0, "%s", why);
}

static cs_status offload_one(cs_graph *g, int add_id) {
  const cs_node *add = cs_graph_node(g, add_id);
  if (add->n_inputs != 2) return CS_OK;
  int adq = cs_match_dq_i8(g, add->inputs[0]);
  int bdq = cs_match_dq_i8(g, add->inputs[1]);
  cs_qparams aq, bq;
  if (adq < 0 || bdq < 0) { decline(add, "operands are not both DequantizeLinear(int8)"); return CS_OK; }
  if (!cs_match_dq_params(g, adq, &aq)) { decline(add, "operand 0 qparams not per-tensor int8"); return CS_OK; }
  if (!cs_match_dq_params(g, bdq, &bq)) {
    cs_qparams_free(&aq);
    decline(add, "operand 1 qparams not per-tensor int8");
    return CS_OK;
  }
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail(g, add->outputs[0], 1, &tail)) {
    cs_qparams_free(&aq);
    cs_qparams_free(&bq);
    decline(add, "no [Relu] -> QuantizeLinear(int8) tail");
    return CS_OK;
  }
  const char *rule = NULL;
  char why[200];
  int a_in = cs_graph_node(g, adq)->inputs[0], b_in = cs_graph_node(g, bdq)->inputs[0];
  int32_t mn, mx;
  cs_output_clamp(&tail.out, tail.lo, tail.hi, &mn, &mx);
  int relu = tail.act >= 0;
  if (mx != 127 || mn != (relu ? (tail.out.zp[0] > -128 ? tail.out.zp[0] : -128) : -128)) {
    snprintf(why, sizeof why, "activation clamp [%d, %d] is neither none nor ReLU at o_zp=%d", mn, mx,
             tail.out.zp[0]);
    rule = why;
    goto done;
  }
  rule = cs_mm_residual_add(g, add_id, &tail, a_in, b_in, &aq, &bq, relu, CS_OP_K_C7X_RESIDUAL_ADD_I8,
                            "c7x_int8_residual_add_relu");
done:
  if (rule && rule != cs_mm_nomem) decline(cs_graph_node(g, add_id), rule);
  cs_qparams_free(&aq);
  cs_qparams_free(&bq);
  cs_qparams_free(&tail.out);
  return rule == cs_mm_nomem ? CS_ERR_NOMEM : CS_OK;
}

cs_status pass_fuse_int8_residual_add(cs_graph *g, const cs_target *t) {
  (void)t;
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_ADD) continue;
    cs_status st = offload_one(g, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
