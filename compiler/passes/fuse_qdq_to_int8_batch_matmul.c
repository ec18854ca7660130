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
 * operands are declined (the float path runs them), and so is an operand
 * ONNX Runtime keeps in float (CS_ATTR_ORT_FLOAT, with -ort-exact=1: a
 * PT2E Swin's Kᵀ; its product is then ORT's float MatMul). Runs after the FC
 * fusion, which takes the products with a constant weight. Multiplier as
 * ORT's: fl(fl(as · bs) / ys).
 *
 * With -mmalib=1 and the exact path (-mmalib-exact other than none,
 * cs_mm_exact_wanted), the product goes to the MMA instead, when the cost
 * rule says it pays (mmalib_cost.h):
 *
 *   a ─k_widen_i16─► a16 [Ba, Mp, Kp]   (a − a_zp, zero-padded to 32)
 *   b ─k_widen_i16─► b16 [Bb, Kp, Np]   (b − b_zp; Kᵀ's Transpose folded in)
 *   a16, b16 ─mmalib_batch_matmul_i16 (shift sh)─► z [B, Mp, Np]
 *   z, a16, b16, rq ─k_batch_matmul_exact_requant─► y [B, M, N]
 *
 * |x − zp| ≤ 255, so the int16 products and their sums are exact; z
 * names an interval of 2^sh accumulators (open-ended where z saturates),
 * and the core kernel requantizes both ends with ORT's multiplier (the
 * same rq blob as k_batch_matmul_i8's), summing again only where they
 * differ: ORT's bytes. sh is the smallest shift for which z reaches the
 * accumulators that saturate the output before it saturates itself
 * (mma_path), so about 2^−7 of the outputs are summed again.
 * A broadcast operand (batch stride 0) is widened once. The padding's MACs
 * are reported (offload.padding); a decline says its estimate.
 */
#include <math.h>
#include <string.h>

#include "pass_list.h"
#include "match/mmalib_common.h"
#include "match/mmalib_cost.h"
#include "match/mmalib_report.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

#define MM_TILE 32 /* the int16 kernel's (spec: dims multiples of 32 for i16) */

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
/* The Transpose (swapping the last two axes) that produces b and that only
 * this MatMul reads, through its DQ `bdq`; -1 if none. */
static int b_transpose_of(cs_graph *g, int b_int, int bdq) {
  int tr = cs_match_producer(g, b_int, CS_OP_TRANSPOSE);
  if (tr >= 0 && cs_match_single_consumer(g, b_int) >= 0 &&
      cs_match_single_consumer(g, cs_graph_node(g, bdq)->outputs[0]) >= 0 && cs_match_swaps_last_two(g, tr, 0))
    return tr;
  return -1;
}

static int b_transposed(cs_graph *g, int b_int, int bdq, const char *base, int *drop) {
  *drop = b_transpose_of(g, b_int, bdq);
  if (*drop >= 0) return cs_graph_node(g, *drop)->inputs[0];
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

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* The offload report's `what` of a padded product (cs_offload_pad). */
static const char kPadWhat[] = "M/K/N (runtime matmul; c_out: N)";

/* The largest |x − zp| of an int8 x. */
static int64_t max_dev(int32_t zp) { return zp + 128 > 127 - zp ? zp + 128 : 127 - zp; }

/* A k_widen_i16 of src (int8, `batch` matrices rows × cols, stride
 * elements apart) into a new int16 [batch, out_rows, out_cols] value
 * "<base>.<suffix>": its id, -1 when out of memory. */
static int widen(cs_graph *g, const char *base, const char *suffix, int src, const tidsp_widen_i16_params *p) {
  char name[300];
  snprintf(name, sizeof name, "%s.%s", base, suffix);
  int64_t shape[3] = {p->batch, p->out_rows, p->out_cols};
  int v = cs_graph_add_value(g, name, CS_DTYPE_I16, 3, shape);
  int k = v < 0 ? -1 : cs_add_kernel(g, CS_OP_K_WIDEN_I16, base, 1, &src, v);
  if (k < 0) return -1;
  cs_graph_node(g, k)->k.widen = *p;
  return v;
}

/* The MMA path (above) of MatMul `id`, p and rq as the core kernel's would
 * be, `mult` ORT's multiplier: 1 when built, 0 when declined (recorded in
 * the offload report; the caller builds the core kernel), -1 when out of
 * memory (message recorded). */
static int mma_path(cs_graph *g, const cs_target *t, int id, int a_int, int b_int, int bdq, const cs_qdq_tail *tail,
                    const tidsp_batch_matmul_i8_params *p, int rq, float mult, const char *base) {
  char layer[256];
  snprintf(layer, sizeof layer, "%s", cs_graph_node(g, id)->name ? cs_graph_node(g, id)->name : "");
  const int64_t batch = p->batch, m = p->m, k = p->k, n = p->n;
  const int64_t mp = round_up(m, MM_TILE), kp = round_up(k, MM_TILE), np = round_up(n, MM_TILE);
  const int64_t ba = p->a_batch_stride ? batch : 1, bb = p->b_batch_stride ? batch : 1;
  /* The shift. z = round_half_up(acc / 2^sh) must tell apart only the
   * accumulators whose outputs differ: beyond ±A, A = (the output's span
   * from its zero point + 1 LSB) / r, the output is saturated, so z needs
   * to reach A (or the largest |acc|, K·|a−za|max·|b−zb|max, if smaller)
   * before it saturates — a z step of about 2^−7 output LSB instead of
   * the whole accumulator range's (which would send a large share of the
   * outputs to the core's re-sum). The core kernel takes a saturated z as
   * the open interval it is, so a shift too small could only cost re-sums,
   * never a byte. */
  if (mp * kp > INT32_MAX || kp * np > INT32_MAX || batch * mp * np > INT32_MAX) {
    cs_mmalib_report_add(g, CS_OFFLOAD_MATMUL, layer, NULL, -1.0,
                         "padded operands of %lldx%lld, %lldx%lld beyond int32 elements", (long long)mp,
                         (long long)kp, (long long)kp, (long long)np);
    return 0;
  }
  const int64_t bound = k * max_dev(p->a_zp) * max_dev(p->b_zp);
  if (bound > INT32_MAX) { /* ORT's int32 accumulator would wrap: the core kernel's arithmetic */
    cs_mmalib_report_add(g, CS_OFFLOAD_MATMUL, layer, NULL, -1.0,
                         "K=%lld: the accumulator may exceed int32 (ORT's wraps)", (long long)k);
    return 0;
  }
  const double span = fmax((double)(p->rq.out_max - p->rq.out_zp), (double)(p->rq.out_zp - p->rq.out_min)) + 1.0;
  const double need = fmin((double)bound, ceil(span / (double)mult));
  int sh = 0;
  while (sh < 31 && 32767.0 * (double)((int64_t)1 << sh) - (sh ? (double)((int64_t)1 << (sh - 1)) : 0.0) - 1.0 < need)
    sh++;
  /* The cost (mmalib_cost.h), by the rule every exact layer's rewrite
   * follows (the FC's K/N padding): the int16 call's panels on the padded
   * operands and the layer's own bytes, against the core kernel's; the
   * exact path's widened copies and core passes (the widening, the
   * requantization, the expected share of outputs summed again: one whose
   * interval of 2^sh accumulators, r·2^sh output LSB, holds a rounding
   * boundary, about min(1, r·2^sh) of them) are the offload report's
   * exact_requant estimate, not charged here. */
  const double a16 = (double)(ba * mp * kp), b16 = (double)(bb * kp * np), zn = (double)(batch * mp * np);
  const double a8 = (double)(ba * m * k), b8 = (double)(bb * k * n), y8 = (double)(batch * m * n);
  const double resum = fmin(1.0, (double)mult * (double)((int64_t)1 << sh));
  /* one call per batch, each loading its own panels */
  const double mma = (double)batch * cs_mm_cost_mma(kp, np, mp, MM_TILE, (a8 + b8 + y8) / (double)batch);
  const double core = cs_mm_cost_scalar((int64_t)(a16 + b16 + zn + resum * y8 * (double)k),
                                        a8 + b8 + 2.0 * (a16 + b16) + 2.0 * zn + y8);
  /* the core kernel reads B transposed: without Kᵀ's Transpose to take
   * over, it copies B first (b_transposed) */
  const int tr = b_transpose_of(g, b_int, bdq);
  const double scalar = cs_mm_cost_scalar(batch * m * k * n, a8 + b8 + y8 + (tr < 0 ? 2.0 * b8 : 0.0));
  const int padded = mp != m || kp != k || np != n;
  if (!cs_mm_cost_pays(mma, scalar)) {
    cs_mmalib_report_add(g, CS_OFFLOAD_MATMUL, layer, NULL, -1.0,
                         "does not pay: MMA estimate %.0f cycles (the int16 call; the exact path's core passes %.0f "
                         "more) against %.0f on the core",
                         mma, core, scalar);
    return 0;
  }
  if (padded && cs_mm_refused(t, layer, kPadWhat)) {
    cs_mmalib_report_add(g, CS_OFFLOAD_MATMUL, layer, NULL, -1.0,
                         "over the padding budget (-mmalib-pad-budget): M/K/N padded to %lldx%lldx%lld "
                         "(est. %.0f MMA cycles vs %.0f on the core)",
                         (long long)mp, (long long)kp, (long long)np, mma, scalar);
    return 0;
  }
  /* the operands, widened; b from Kᵀ's source, transposed on the way */
  tidsp_widen_i16_params wa = {(int32_t)ba, (int32_t)m, (int32_t)k, p->a_batch_stride, (int32_t)mp, (int32_t)kp,
                               0, p->a_zp};
  tidsp_widen_i16_params wb = {(int32_t)bb, (int32_t)k, (int32_t)n, p->b_batch_stride, (int32_t)kp, (int32_t)np,
                               0, p->b_zp};
  int b_src = b_int;
  if (tr >= 0) {
    b_src = cs_graph_node(g, tr)->inputs[0];
    wb.rows = (int32_t)n;
    wb.cols = (int32_t)k;
    wb.transpose = 1;
  }
  int av = widen(g, base, "a16", a_int, &wa);
  int bv = av < 0 ? -1 : widen(g, base, "b16", b_src, &wb);
  if (bv < 0) return -1;
  char name[300];
  snprintf(name, sizeof name, "%s.z16", base);
  int64_t zshape[3] = {batch, mp, np};
  int z = cs_graph_add_value(g, name, CS_DTYPE_I16, 3, zshape);
  int ab[2] = {av, bv};
  int call = z < 0 ? -1 : cs_add_kernel(g, CS_OP_K_MMALIB_BATCH_MATMUL_I16, base, 2, ab, z);
  int64_t args[7] = {batch, mp, kp, np, sh, p->a_batch_stride ? mp * kp : 0, p->b_batch_stride ? kp * np : 0};
  if (cs_mm_set_args(g, call, 7, args) != CS_OK) return -1;
  int inputs[4] = {z, av, bv, rq};
  int chain[3] = {id, tr >= 0 ? bdq : -1, tr};
  int req = cs_replace_chain(g, chain, 3, tail, CS_OP_K_BATCH_MATMUL_EXACT_REQUANT, 4, inputs);
  if (req < 0) return -1;
  tidsp_batch_matmul_exact_params q;
  memset(&q, 0, sizeof q);
  q.batch = (int32_t)batch;
  q.m = (int32_t)m;
  q.k = (int32_t)k;
  q.n = (int32_t)n;
  q.m_pad = (int32_t)mp;
  q.k_pad = (int32_t)kp;
  q.n_pad = (int32_t)np;
  q.a_batch_stride = (int32_t)args[5];
  q.b_batch_stride = (int32_t)args[6];
  q.shift = sh;
  q.rq = p->rq;
  cs_graph_node(g, req)->k.batch_matmul_exact = q;
  const char *fn = cs_kernel_info_of(CS_OP_K_MMALIB_BATCH_MATMUL_I16)->fn;
  cs_mmalib_report_add(g, CS_OFFLOAD_MATMUL, layer, fn, 0.0, NULL);
  /* z's step is r·2^sh output LSB; q = 1 (sh = 0): z is the accumulator */
  cs_mmalib_report_exact(g, layer, 0.0, sh ? (double)mult * (double)((int64_t)1 << sh) / 2.0 : 0.0, mma,
                         cs_mm_cost_mma(k, n, batch * m, 64, a8 + b8 + y8), core);
  if (padded) {
    cs_offload_pad pad;
    cs_mm_pad_decision_init(&pad, layer, kPadWhat, n, np, batch * m * k * n,
                            batch * (mp * kp * np - m * k * n));
    pad.padded = 1;
    pad.act_bytes_added = 2 * (int64_t)(a16 - a8 + b16 - b8) + 2 * (int64_t)(zn - y8);
    pad.mma_cycles = mma;
    pad.scalar_cycles = scalar;
    cs_mmalib_report_pad(g, &pad);
  }
  return 1;
}

static cs_status fuse(cs_graph *g, const cs_target *t, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int adq = cs_match_dq_i8(g, n->inputs[0]), bdq = cs_match_dq_i8(g, n->inputs[1]);
  cs_qparams aq, bq;
  cs_qdq_tail tail;
  if (cs_match_ort_keeps_float(g, t, (int[]){adq, bdq}, 2))
    return CS_OK; /* ORT multiplies in float here: so does the float MatMul left as it is */
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
        /* the MMA, when wanted and it pays; else the core kernel */
        int done = cs_mm_exact_wanted(t, 0.0, HUGE_VAL) ? mma_path(g, t, id, a_int, b_int, bdq, &tail, &p, rq, ort, base)
                                                        : 0;
        int drop;
        int bt = done ? -1 : b_transposed(g, b_int, bdq, base, &drop);
        int k = -1;
        if (bt >= 0) {
          int inputs[3] = {a_int, bt, rq};
          int chain[3] = {id, drop >= 0 ? bdq : -1, drop};
          k = cs_replace_chain(g, chain, 3, &tail, CS_OP_K_BATCH_MATMUL_I8, 3, inputs);
        }
        if (done < 0 || (!done && k < 0)) st = CS_ERR_NOMEM; /* message recorded */
        else if (!done) cs_graph_node(g, k)->k.batch_matmul = p;
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
