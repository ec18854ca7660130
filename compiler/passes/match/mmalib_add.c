/*
 * mmalib_add.c — the matcher and rewrite of FuseInt8ResidualAdd /
 * FuseInt16ResidualAdd (cs_mm_fuse_residual_add; the passes:
 * passes/fuse_int{8,16}_residual_add.c) — Q:dt( [Relu]( Add( DQ(a:dt),
 * DQ(b:dt) ) ) ) with both operands activations of the same shape →
 * c7x_int8_residual_add_relu / c7x_int16_residual_add_relu, one matcher for
 * both dtypes (cs_mm_dtype), either operand order (the operands' roles are
 * just (m, zp) pairs of the 16-byte params blob, include/cstatic/mmalib.h).
 *
 *   m_a = round(a_s/o_s · 2^shift), m_b likewise, with the largest shift
 *   (≤ 62) keeping both below 2^30 (cs_mm_residual_add): the relative error
 *   of the larger multiplier is ≤ 2^−30, far inside the 1-LSB budget of the
 *   kernel's half-up rounding; the int16 kernel's int64 accumulator holds
 *   |x|·m ≤ 2^45 exactly.
 * The kernel's ReLU clamps at zp_out, the quantized zero, which is exact;
 * a Clip narrower than the dtype's range is declined. int16 is symmetric
 * only (spec "Supported Operations", int16 residual add row): d_zp, skip_zp
 * and o_zp must all be 0 — the blob's zero points are int8 fields.
 *
 * The int8 pass looks at every Add; the int16 pass (after it) only at those
 * with a DQ(int16) operand.
 *
 * -mmalib-exact=strict declines the int8 add: the kernel's fixed point
 * rounds half up where ORT's QLinearAdd rounds a float FMA to even, so a
 * few outputs differ by 1 LSB, and strict promises ORT's bytes. The core's
 * tidsp_add_i8 (ORT's formula) then takes it: no MACs either way, so the
 * MMA share is unchanged. The default (`all`) keeps the offload (the
 * spec's residual add, within 1 LSB of the exact result); making the
 * fixed-point add itself ORT-exact would need a per-element fix-up costing
 * as much as the core's add.
 */
#include <stdio.h>

#include "mmalib_common.h"
#include "mmalib_report.h"
#include "pattern.h"
#include "qdq_tail.h"

static void decline(cs_graph *g, const cs_node *n, const char *why) {
  cs_mmalib_report_add(g, CS_OFFLOAD_RES_ADD, n->name, NULL, -1.0, "%s", why);
}

static int dq_of(cs_graph *g, int v, cs_dtype dt) {
  int dq = cs_match_producer(g, v, CS_OP_DEQUANTIZE_LINEAR);
  return dq >= 0 && cs_graph_value(g, cs_graph_node(g, dq)->inputs[0])->dtype == dt ? dq : -1;
}

/* The matched Add (operands' DQs adq/bdq, tail): the rule that declines it,
 * written to why, or what cs_mm_residual_add says (NULL: fused). */
static const char *fuse(cs_graph *g, int add_id, const cs_mm_dtype *d, int adq, int bdq, const cs_qparams *aq,
                        const cs_qparams *bq, const cs_qdq_tail *tail, char *why, size_t whylen) {
  int i16 = d->dt == CS_DTYPE_I16;
  int a_in = cs_graph_node(g, adq)->inputs[0], b_in = cs_graph_node(g, bdq)->inputs[0];
  int32_t mn, mx;
  cs_output_clamp(&tail->out, tail->lo, tail->hi, &mn, &mx);
  /* int8: a Relu is the kernel's has_relu even where it clamps nothing
   * (o_zp = -128); int16: a clamp above the range's floor. */
  int relu = i16 ? mn > d->qmin : tail->act >= 0;
  int32_t zp = tail->out.zp[0];
  if (d->symmetric && (aq->zp[0] != 0 || bq->zp[0] != 0 || zp != 0)) {
    snprintf(why, whylen, "d_zp/skip_zp/o_zp != 0 (%d/%d/%d; int%d is symmetric only)", aq->zp[0], bq->zp[0], zp,
             d->bits);
    return why;
  }
  /* No activation: the clamp is the dtype's range; ReLU: [max(o_zp, qmin), qmax]. */
  if (mx != d->qmax || mn != (relu ? (zp > d->qmin ? zp : d->qmin) : d->qmin)) {
    snprintf(why, whylen, "activation clamp [%d, %d] is neither none nor ReLU at o_zp=%d", mn, mx, zp);
    return why;
  }
  return cs_mm_residual_add(g, add_id, tail, a_in, b_in, aq, bq, relu,
                            i16 ? CS_OP_K_C7X_RESIDUAL_ADD_I16 : CS_OP_K_C7X_RESIDUAL_ADD_I8);
}

static cs_status offload_one(cs_graph *g, const cs_target *t, int add_id, const cs_mm_dtype *d) {
  const cs_node *add = cs_graph_node(g, add_id);
  int i16 = d->dt == CS_DTYPE_I16;
  char why[200];
  cs_qparams aq = {0}, bq = {0};
  cs_qdq_tail tail = {0};
  int adq, bdq;
  const char *rule;
  /* the first rule that fails declines; what was matched is released once, below */
  if (!i16 && (dq_of(g, add->inputs[0], d->dt) < 0 || dq_of(g, add->inputs[1], d->dt) < 0))
    rule = "operands are not both DequantizeLinear(int8)";
  else if (!i16 && t->mmalib_exact == CS_MM_EXACT_STRICT)
    rule = "-mmalib-exact=strict: the fixed-point residual add rounds half up where ORT rounds a float to even; "
           "left to the core's ORT-exact add";
  else if ((adq = cs_match_dq_as(g, add->inputs[0], d->dt, &aq)) < 0)
    rule = i16 ? "operand 0 is not DequantizeLinear(int16, per-tensor constant qparams)"
               : "operand 0 qparams not per-tensor int8";
  else if ((bdq = cs_match_dq_as(g, add->inputs[1], d->dt, &bq)) < 0)
    rule = i16 ? "operand 1 is not DequantizeLinear(int16, per-tensor constant qparams)"
               : "operand 1 qparams not per-tensor int8";
  else if (!cs_match_qdq_tail_as(g, add->outputs[0], 1, d->dt, &tail)) {
    snprintf(why, sizeof why, "no [Relu] -> QuantizeLinear(int%d) tail", d->bits);
    rule = why;
  } else
    rule = fuse(g, add_id, d, adq, bdq, &aq, &bq, &tail, why, sizeof why);
  if (rule && rule != cs_mm_nomem) decline(g, cs_graph_node(g, add_id), rule);
  cs_qparams_free(&aq);
  cs_qparams_free(&bq);
  cs_qparams_free(&tail.out);
  return rule == cs_mm_nomem ? CS_ERR_NOMEM : CS_OK;
}

cs_status cs_mm_fuse_residual_add(cs_graph *g, const cs_target *t, const cs_mm_dtype *d) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_ADD || node->n_inputs != 2) continue;
    if (d->dt != CS_DTYPE_I8 && dq_of(g, node->inputs[0], d->dt) < 0 && dq_of(g, node->inputs[1], d->dt) < 0)
      continue;
    cs_status st = offload_one(g, t, i, d);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
