/*
 * FuseQDQToInt8BatchMatMul — a matrix product of two runtime tensors
 * (attention's Q·Kᵀ and A·V), as ONNX Runtime's QLinearMatMul:
 *
 *   Q( [Relu|Clip]( MatMul( DQ(a:i8), DQ(b:i8) ) ) )   both per tensor
 *     → k_batch_matmul_i8(a, bᵀ, rq)
 *
 * The kernel reads B transposed ([..., N, K] rows, so each batch is one
 * tidsp_matmul_i8 on the fastest variant): when b is itself a Transpose
 * that swaps the last two axes (attention's Kᵀ), its input is used and the
 * transpose disappears; otherwise a Transpose of b is inserted (int8, cheap
 * beside the product).
 *
 * a is [..., M, K], b [..., K, N]; each operand's leading (batch) dims are
 * either the output's or all 1 (broadcast); other broadcasts and 1-D
 * operands are declined (the float path runs them). Runs after the FC
 * fusion, which takes the products with a constant weight. Multiplier as
 * ORT's: fl(fl(as · bs) / ys).
 */
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

/* Elements between batches of an operand: 0 when its batch dims are all 1,
 * the matrix size when they equal the output's, -1 otherwise. */
static int64_t batch_stride(const cs_value *v, const cs_value *y) {
  int vb = v->rank - 2, yb = y->rank - 2;
  int64_t numel = 1;
  for (int i = 0; i < vb; i++) numel *= v->shape[i];
  if (numel == 1) return 0;
  if (vb > yb) return -1;
  for (int i = 0; i < yb; i++) {
    int j = i - (yb - vb);
    if ((j < 0 ? 1 : v->shape[j]) != y->shape[i]) return -1;
  }
  return v->shape[v->rank - 1] * v->shape[v->rank - 2];
}

/* B transposed: the input of a last-two-axes Transpose that only this
 * MatMul reads, through its DQ `bdq` (*drop = the Transpose; the DQ goes
 * with it), or a new Transpose of b. -1 on out of memory. */
static int b_transposed(cs_graph *g, int b_int, int bdq, const char *base, int *drop) {
  *drop = -1;
  int tr = cs_match_producer(g, b_int, CS_OP_TRANSPOSE);
  if (tr >= 0 && cs_match_single_consumer(g, b_int) >= 0 &&
      cs_match_single_consumer(g, cs_graph_node(g, bdq)->outputs[0]) >= 0 &&
      cs_match_swaps_last_two(g, tr, 0)) {
    *drop = tr;
    return cs_graph_node(g, tr)->inputs[0];
  }
  const cs_value *b = cs_graph_value(g, b_int);
  int rank = b->rank;
  int64_t shape[CS_MAX_RANK], perm[CS_MAX_RANK];
  for (int i = 0; i < rank; i++) shape[i] = b->shape[i], perm[i] = i;
  shape[rank - 2] = b->shape[rank - 1];
  shape[rank - 1] = b->shape[rank - 2];
  perm[rank - 2] = rank - 1;
  perm[rank - 1] = rank - 2;
  char name[300];
  snprintf(name, sizeof name, "%s.b_t", base);
  int bt = cs_graph_add_value(g, name, CS_DTYPE_I8, rank, shape);
  if (bt < 0) return -1;
  int t = cs_graph_add_node(g, CS_OP_TRANSPOSE, name, base, 1, &b_int, 1, &bt);
  if (t < 0 || cs_node_set_attr_ints(cs_graph_node(g, t), "perm", rank, perm) != CS_OK) return -1;
  return bt;
}

static cs_status fuse(cs_graph *g, const cs_target *t, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int adq = cs_match_dq_i8(g, n->inputs[0]), bdq = cs_match_dq_i8(g, n->inputs[1]);
  cs_qparams aq, bq;
  cs_qdq_tail tail;
  if (!cs_match_dq_params(g, adq, &aq)) return CS_OK;
  if (!cs_match_dq_params(g, bdq, &bq)) { cs_qparams_free(&aq); return CS_OK; }
  if (!cs_match_qdq_tail(g, n->outputs[0], 1, &tail)) {
    cs_qparams_free(&aq);
    cs_qparams_free(&bq);
    return CS_OK;
  }
  int a_int = cs_graph_node(g, adq)->inputs[0], b_int = cs_graph_node(g, bdq)->inputs[0];
  const cs_value *a = cs_graph_value(g, a_int), *b = cs_graph_value(g, b_int);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  cs_status st = CS_OK;
  if (a->rank >= 2 && b->rank >= 2 && y->rank >= 2) {
    int64_t sa = batch_stride(a, y), sb = batch_stride(b, y);
    int64_t batch = cs_value_numel(y) / (y->shape[y->rank - 2] * y->shape[y->rank - 1]);
    if (sa >= 0 && sb >= 0 && sa <= INT32_MAX && sb <= INT32_MAX) {
      float as = aq.scale[0], bs = bq.scale[0], ys = tail.out.scale[0];
      double exact = (double)as * (double)bs / (double)ys;
      float ort = (as * bs) / ys;
      tidsp_batch_matmul_i8_params p;
      memset(&p, 0, sizeof p);
      p.batch = (int32_t)batch;
      p.m = (int32_t)a->shape[a->rank - 2];
      p.k = (int32_t)a->shape[a->rank - 1];
      p.n = (int32_t)b->shape[b->rank - 1];
      char base[256];
      snprintf(base, sizeof base, "%s", n->name ? n->name : "matmul");
      int rq = cs_requant_blob(g, base, t, 1, &exact, &ort, &p.rq);
      if (rq == -1) {
        st = CS_ERR_NOMEM;
      } else if (rq >= 0) {
        p.a_batch_stride = (int32_t)sa;
        p.b_batch_stride = (int32_t)sb;
        p.a_zp = aq.zp[0];
        p.b_zp = bq.zp[0];
        p.rq.out_zp = tail.out.zp[0];
        cs_output_clamp(&tail.out, tail.lo, tail.hi, &p.rq.out_min, &p.rq.out_max);
        int drop;
        int bt = b_transposed(g, b_int, bdq, base, &drop);
        int k = -1;
        if (bt >= 0) {
          int inputs[3] = {a_int, bt, rq};
          int chain[3] = {id, drop >= 0 ? bdq : -1, drop};
          k = cs_replace_chain(g, chain, 3, &tail, CS_OP_K_BATCH_MATMUL_I8, 3, inputs);
        }
        if (k < 0) st = CS_ERR_NOMEM; /* message recorded */
        else cs_graph_node(g, k)->k.batch_matmul = p;
      }
    }
  }
  cs_qparams_free(&aq);
  cs_qparams_free(&bq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status pass_fuse_qdq_to_int8_batch_matmul(cs_graph *g, const cs_target *t) {
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_MATMUL || n->n_inputs != 2) continue;
    cs_status st = fuse(g, t, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
