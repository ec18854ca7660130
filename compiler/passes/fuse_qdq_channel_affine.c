/*
 * FuseQDQChannelAffine — a BatchNormalization between DequantizeLinear and
 * QuantizeLinear (DenseNet's pre-activation BN on each concatenation; a
 * ReLU after it is already Q's range), as LegalizeOps and FoldConstant
 * leave it:
 *
 *   k_quantize( [k_unary_f32 Relu|Clip]( k_binary_f32 Add(
 *       k_binary_f32 Mul( k_dequantize(x:i8), s ), b ) ) )
 *     → k_channel_affine_i8(x, s, b)   (the Relu or Clip in its params)
 *
 * s and b constant floats with one value per channel of one axis (the
 * broadcast's only nonzero stride, 1), x read whole and in order, DQ and Q
 * per tensor on int8 with positive scales, every intermediate read by the
 * next node only (and no graph output). Mul's and Add's operands may come
 * in either order (IEEE products and sums commute). The kernel does the
 * four kernels' float ops in their order, so the bytes are the unfused
 * chain's (kernels.h); the four passes over a float [N, C, H, W] tensor
 * become one over the int8 one. Anything else is left as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

/* Operand j (0: a, 1: b) of binary node n is constant; the other one's
 * index into its inputs. */
static int const_operand(cs_graph *g, const cs_node *n) {
  int c0 = cs_match_is_const(g, n->inputs[0]), c1 = cs_match_is_const(g, n->inputs[1]);
  if (c0 == c1) return -1;
  return c0 ? 0 : 1;
}

/* The broadcast of binary node n, with operand `cj` constant: the channel
 * axis (the constant's only nonzero stride, which is 1) when the other
 * operand is read whole in row-major order and the constant is a float
 * vector of that axis's length; else -1. */
static int channel_axis(cs_graph *g, const cs_node *n, int cj) {
  const tidsp_broadcast *bc = &n->k.binary.bc;
  const int32_t *cs = cj == 0 ? bc->a_stride : bc->b_stride;
  const int32_t *xs = cj == 0 ? bc->b_stride : bc->a_stride;
  const cs_value *c = cs_graph_value(g, n->inputs[cj]);
  int axis = -1;
  int64_t step = 1;
  if (bc->rank < 1 || bc->rank > CS_MAX_RANK || c->dtype != CS_DTYPE_F32) return -1;
  for (int d = bc->rank - 1; d >= 0; d--) {
    if (xs[d] != step && bc->shape[d] != 1) return -1;
    step *= bc->shape[d];
    if (cs[d] == 0) continue;
    if (cs[d] != 1 || axis >= 0) return -1;
    axis = d;
  }
  if (axis < 0 || cs_value_numel(c) != bc->shape[axis]) return -1;
  return axis;
}

/* The node's per-tensor int8 scale and zero point (k_quantize /
 * k_dequantize: inputs scale, zero_point); 0 when not such. */
static int qdq_i8_params(cs_graph *g, const cs_node *n, float *scale, int32_t *zp) {
  const cs_value *s = cs_graph_value(g, n->inputs[0]), *z = cs_graph_value(g, n->inputs[1]);
  if (n->k.qdq.channels != 1 || n->k.qdq.dtype != TIDSP_DTYPE_I8) return 0;
  if (!s->data || !z->data || s->dtype != CS_DTYPE_F32 || z->dtype != CS_DTYPE_I32) return 0;
  *scale = ((const float *)s->data)[0];
  *zp = ((const int32_t *)z->data)[0];
  return *scale > 0.0f && *zp >= -128 && *zp <= 127;
}

static int same_broadcast(const tidsp_broadcast *a, const tidsp_broadcast *b) {
  if (a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return 0;
  return 1;
}

static cs_status fuse(cs_graph *g, int qid) {
  const cs_node *q = cs_graph_node(g, qid);
  tidsp_channel_affine_i8_params p;
  memset(&p, 0, sizeof p);
  if (q->n_inputs != 3 || !qdq_i8_params(g, q, &p.y_scale, &p.y_zp)) return CS_OK;
  int y = q->outputs[0];
  if (cs_graph_value(g, y)->dtype != CS_DTYPE_I8) return CS_OK;
  /* [Relu | Clip] */
  int a_out = q->inputs[2], act = cs_match_producer(g, a_out, CS_OP_K_UNARY_F32);
  if (act >= 0) {
    const tidsp_unary_f32_params *u = &cs_graph_node(g, act)->k.unary;
    if (cs_match_single_consumer(g, a_out) != qid || u->n != cs_value_numel(cs_graph_value(g, a_out)))
      return CS_OK;
    if (u->op == TIDSP_UNARY_RELU) {
      p.act = TIDSP_CHANNEL_AFFINE_RELU;
    } else if (u->op == TIDSP_UNARY_CLIP && u->lo <= u->hi) {
      p.act = TIDSP_CHANNEL_AFFINE_CLIP;
      p.lo = u->lo;
      p.hi = u->hi;
    } else {
      return CS_OK;
    }
    a_out = cs_graph_node(g, act)->inputs[0];
    if (cs_match_single_consumer(g, a_out) != act) return CS_OK;
  } else if (cs_match_single_consumer(g, a_out) != qid) {
    return CS_OK;
  }
  /* Add(·, b) */
  int add = cs_match_producer(g, a_out, CS_OP_K_BINARY_F32);
  if (add < 0) return CS_OK;
  const cs_node *an = cs_graph_node(g, add);
  int acj = const_operand(g, an);
  if (an->k.binary.op != TIDSP_BINARY_ADD || acj < 0) return CS_OK;
  int axis = channel_axis(g, an, acj);
  if (axis < 0) return CS_OK;
  int m = an->inputs[1 - acj], b = an->inputs[acj];
  /* Mul(·, s) */
  int mul = cs_match_producer(g, m, CS_OP_K_BINARY_F32);
  if (mul < 0 || cs_match_single_consumer(g, m) != add) return CS_OK;
  const cs_node *mn = cs_graph_node(g, mul);
  int mcj = const_operand(g, mn);
  if (mn->k.binary.op != TIDSP_BINARY_MUL || mcj < 0 || channel_axis(g, mn, mcj) != axis ||
      !same_broadcast(&mn->k.binary.bc, &an->k.binary.bc))
    return CS_OK;
  int d = mn->inputs[1 - mcj], s = mn->inputs[mcj];
  /* DQ(x:i8) */
  int dq = cs_match_producer(g, d, CS_OP_K_DEQUANTIZE);
  if (dq < 0 || cs_match_single_consumer(g, d) != mul) return CS_OK;
  const cs_node *dn = cs_graph_node(g, dq);
  if (dn->n_inputs != 3 || !qdq_i8_params(g, dn, &p.x_scale, &p.x_zp)) return CS_OK;
  int x = dn->inputs[2];
  if (cs_graph_value(g, x)->dtype != CS_DTYPE_I8) return CS_OK;

  const tidsp_broadcast *bc = &an->k.binary.bc;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= bc->shape[i];
  for (int i = axis + 1; i < bc->rank; i++) inner *= bc->shape[i];
  if (outer * bc->shape[axis] * inner != cs_value_numel(cs_graph_value(g, x)) || outer > INT32_MAX ||
      inner > INT32_MAX)
    return CS_OK;
  p.outer = (int32_t)outer;
  p.channels = bc->shape[axis];
  p.inner = (int32_t)inner;

  int chain[5] = {dq, mul, add, act, qid};
  char *origin = cs_origin_join(g, chain, 5);
  if (!origin) return CS_ERR_NOMEM;
  for (int i = 0; i < 5; i++)
    if (chain[i] >= 0) cs_graph_remove_node(g, chain[i]);
  int ins[3] = {x, s, b};
  int k = cs_add_kernel(g, CS_OP_K_CHANNEL_AFFINE_I8, origin, 3, ins, y);
  free(origin);
  if (k < 0) return CS_ERR_NOMEM; /* message recorded */
  cs_graph_node(g, k)->k.channel_affine = p;
  return CS_OK;
}

cs_status pass_fuse_qdq_channel_affine(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_K_QUANTIZE, fuse);
}
