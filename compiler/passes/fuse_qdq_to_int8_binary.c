/*
 * FuseQDQToInt8Binary — quantized elementwise Add and Mul (residual adds,
 * squeeze-excitation scales):
 *
 *   Q( [Relu|Clip]( Add( DQ(a:i8), DQ(b:i8) ) ) )  → k_add_i8(a, b)
 *   Q( [Relu|Clip]( Mul( DQ(a:i8), DQ(b:i8) ) ) )  → k_mul_i8(a, b)
 *
 * (not where ORT keeps an operand in float, -ort-exact=1: pattern.h
 * CS_ATTR_ORT_FLOAT; ORT's float op is then what runs)
 *
 * Constants folded (quant/binary.c) as ONNX Runtime's QLinearAdd/QLinearMul
 * (x86), which work on uint8 values (see kernels.h, "The uint8 domain"):
 *   add: ra = fl(as/ys), rb = fl(bs/ys), f = fl(zy − fma(ra, za, fl(rb·zb)))
 *        with za, zb, zy the zero points in ORT's domain: + 128 where the
 *        model's activations were uint8 (kernels.h "The uint8 domain")
 *   mul: r = fl(fl(as·bs) / ys)
 * Q31 uses the same constants; its kernels evaluate the formula with
 * integers only.
 */
#include <string.h>

#include "match/broadcast.h"
#include "match/fused_common.h"
#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

static cs_status fuse_one(cs_graph *g, const cs_target *t, int id) {
  const cs_node *n = cs_graph_node(g, id);
  if (n->n_inputs != 2) return CS_OK;
  int adq = cs_match_dq_i8(g, n->inputs[0]);
  int bdq = cs_match_dq_i8(g, n->inputs[1]);
  if (cs_match_ort_keeps_float(g, t, (int[]){adq, bdq}, 2)) return CS_OK; /* ORT's float Add/Mul stays */
  cs_qparams aq, bq;
  if (!cs_match_dq_params(g, adq, &aq)) return CS_OK;
  if (!cs_match_dq_params(g, bdq, &bq)) { cs_qparams_free(&aq); return CS_OK; }
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail(g, n->outputs[0], 1, &tail)) {
    cs_qparams_free(&aq); cs_qparams_free(&bq);
    return CS_OK;
  }
  int a_int = cs_graph_node(g, adq)->inputs[0];
  int b_int = cs_graph_node(g, bdq)->inputs[0];
  tidsp_broadcast bc;
  cs_status st = CS_OK;
  if (!cs_broadcast_init(cs_graph_value(g, a_int), cs_graph_value(g, b_int),
                         cs_graph_value(g, n->outputs[0]), &bc))
    goto done;
  int chain[1] = {id};
  int inputs[2] = {a_int, b_int};
  int32_t domain = cs_qdq_tail_domain_offset(g, &tail);
  /* Q31 computes the same float formula with integers (kernels.h). */
  tidsp_requant_kind kind = t->requant == CS_REQUANT_Q31 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
  cs_kparams kp;
  memset(&kp, 0, sizeof kp);
  cs_op op = n->op == CS_OP_ADD ? CS_OP_K_ADD_I8 : CS_OP_K_MUL_I8;
  if (op == CS_OP_K_ADD_I8) {
    cs_add_i8_params_init(&aq, &bq, &tail.out, tail.lo, tail.hi, domain, kind, &kp.add);
    kp.add.bc = bc;
  } else {
    cs_mul_i8_params_init(&aq, &bq, &tail.out, tail.lo, tail.hi, domain, kind, &kp.mul);
    kp.mul.bc = bc;
  }
  int k = cs_replace_chain(g, chain, 1, &tail, op, 2, inputs);
  if (k < 0) st = CS_ERR_NOMEM; /* message recorded */
  else cs_graph_node(g, k)->k = kp;
done:
  cs_qparams_free(&aq);
  cs_qparams_free(&bq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status pass_fuse_qdq_to_int8_binary(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || (node->op != CS_OP_ADD && node->op != CS_OP_MUL)) continue;
    cs_status st = fuse_one(g, t, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
