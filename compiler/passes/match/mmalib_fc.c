/*
 * mmalib_fc.c — the matcher and rewrite of FuseMMALIBQDQFC / FuseMMALIBQDQFCI16
 * (cs_mm_fuse_fc; the passes: passes/fuse_mmalib_qdq_fc{,_i16}.c): fully-connected layers offloaded
 * to mmalib_matmul_bias_i8 / mmalib_matmul_bias_i16 (te-extern-dispatch.txt
 * "Eligibility Check"), one matcher for both dtypes (cs_mm_dtype):
 *
 *   Q( [Relu|Clip]( Gemm( DQ(x:dt), DQ(w:dt const, zp 0), [C] ) ) )
 *   Q( [Relu|Clip]( [Add(·, bias)]( MatMul( DQ(x:dt), DQ(w:dt const, zp 0) ) ) ) )
 *   Q( [Relu|Clip]( [Add(·, bias)]( Reshape( MatMul( Reshape( DQ(x:dt) ), DQ(w) ) ) ) ) )
 * where a MatMul's weight may also be Transpose[1,0](DQ(w [N][K])), as
 * PT2E exports nn.Linear (the "standard last-two-dim transpose").
 *
 * Rules: w_zp zero (int16: d_zp and o_zp too, symmetric only), weight 2-D,
 * data not constant, K and N multiples of 64 (int8) / 32 (int16, and an
 * int8 FC on the exact path's int16 kernel: mmalib_common.h cs_mm_runs_as) — the
 * spec constrains only K and N, any M offloads; else padded, below —, Gemm only with
 * alpha = beta = 1 and transA = 0 (its transB is the "standard last-two-dim
 * transpose"), bias a compile-time constant. int8 takes the kernel's int8
 * saturation as its only activation; int16 also a ReLU (a second call,
 * mmalib_common.h "int16"). The weight is stored in the kernel's [N][K]
 * layout (transposed at compile time when the graph has [K][N]). A graph
 * input or output goes through an aligned arena copy (mmalib_common.h
 * "the graph's edge").
 *
 * Padding (issue 16): K or N off the tile is padded when the rest of the
 * layer is eligible and the cost rule (mmalib_cost.h) says it pays — the
 * MMA estimate of M·⌈K/tile⌉·⌈N/tile⌉ panels plus the copies below, in DDR,
 * against the scalar core's M·K·N MACs; a classifier of one row (M = 1)
 * never pays, a sequence model's per-step FC (M = T) does. The weight
 * gets zero columns up to kp and zero rows up to np (bias 0); the data
 * [..., K] a k_pad to [..., kp] (the padded columns meet zero weights:
 * they add exactly nothing, so the real outputs' accumulators are those of
 * the unpadded layer); the output [..., np] a cut back to [..., N] (a
 * k_slice of each row, or the prefix view when M = 1). Only along the last
 * dim: a reshape that moves K or N elsewhere declines. Every decision goes
 * to the offload report's padding section (c_out = N, c_pad = np).
 *
 * The int8 pass looks at every Gemm/MatMul; the int16 pass (after it) only
 * at those whose data is DQ(int16), and its decision replaces the int8
 * pass's "not int8" decline in the report.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fused_common.h"
#include "mmalib_common.h"
#include "mmalib_cost.h"
#include "mmalib_report.h"
#include "pattern.h"
#include "qdq_tail.h"

static void decline(cs_graph *g, const cs_node *n, const char *why) {
  cs_mmalib_report_add(g, CS_OFFLOAD_FC, n->name, NULL, -1.0, "%s", why);
}

/* A Transpose[1,0] of a 2-D value read only by this MatMul, else -1. */
static int weight_transpose(cs_graph *g, int w) {
  int tr = cs_match_producer(g, w, CS_OP_TRANSPOSE);
  if (tr < 0 || cs_match_single_consumer(g, w) < 0) return -1;
  return cs_match_swaps_last_two(g, tr, 2) ? tr : -1;
}

/* The cost rule (mmalib_cost.h) for an FC of M rows, K → kp, N → np:
 * the MMA side also moves the padded copy of the data (read K, write kp
 * per row) and the cut of the output (read np, write N per row). The
 * decision goes to the offload report's padding section (c_out/c_pad: N
 * and its padding); returns whether to pad. */
static int fc_pad_pays(cs_graph *g, const cs_target *t, const char *layer, const cs_mm_dtype *d, int64_t m,
                       int64_t k, int64_t n, int64_t kp, int64_t np, int y_is_output) {
  double e = (double)cs_dtype_size(d->dt);
  cs_offload_pad p;
  cs_mm_pad_decision_init(&p, layer, "N", n, np, m * k * n, m * kp * np - m * k * n);
  p.weight_bytes_added = (np * kp - n * k) * cs_mm_pad_bytes(d);
  p.act_bytes_added = m * ((kp - k) + (np - n)) * cs_mm_pad_bytes(d);
  double real = e * (double)(m * k + n * k + m * n);
  double padded = cs_mm_call_bytes(t, e * (double)(m * kp), e * (double)(np * kp), e * (double)(m * np));
  if (kp != k) padded += e * (double)(m * k + m * kp); /* the core's k_pad copy */
  if (np != n) padded += e * (double)(m * np + m * n); /* the cut */
  (void)y_is_output; /* the cut writes the caller's buffer directly: no extra copy either way */
  cs_mm_pad_decide(t, &p, cs_mm_cost_mma(kp, np, m, d->mult, padded), cs_mm_cost_scalar(p.macs, real));
  cs_mmalib_report_pad(g, &p);
  return p.padded;
}

/* The data x [..., K] padded to [..., kp] (k_pad; the padded columns meet
 * zero weight columns, so their value is irrelevant: d_zp). Returns the
 * padded value, -1 when out of memory. */
static int pad_k(cs_graph *g, int x, int64_t kp, const cs_qparams *xq, const char *base) {
  const cs_value *xv = cs_graph_value(g, x);
  int rank = xv->rank;
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, xv->shape, sizeof shape);
  tidsp_pad_params pp;
  memset(&pp, 0, sizeof pp);
  pp.rank = rank;
  for (int i = 0; i < rank; i++) pp.in_shape[i] = (int32_t)shape[i];
  pp.pad_end[rank - 1] = (int32_t)(kp - shape[rank - 1]);
  pp.elem_size = (int32_t)cs_dtype_size(xv->dtype);
  pp.mode = TIDSP_PAD_CONSTANT;
  int32_t zp = xq->zp[0];
  memcpy(pp.value, &zp, (size_t)pp.elem_size); /* little-endian: the low bytes */
  shape[rank - 1] = kp;
  char name[300];
  snprintf(name, sizeof name, "%s.mm_kpad", base);
  int pv = cs_graph_add_value(g, name, xv->dtype, rank, shape);
  if (pv < 0) return -1;
  int id = cs_add_kernel(g, CS_OP_K_PAD, base, 1, &x, pv);
  if (id < 0 || cs_value_set_quant(cs_graph_value(g, pv), -1, 1, xq->scale, xq->zps) != CS_OK) return -1;
  cs_graph_node(g, id)->k.pad = pp;
  return pv;
}

/* Kernel `id` writes y [..., N]: it writes y' [..., np] instead and a
 * k_slice of the first N of each row writes y (k_copy of the prefix when
 * there is one row: a view for the planner). */
static cs_status cut_n(cs_graph *g, int id, int y, int64_t np, const char *base) {
  const cs_value *yv = cs_graph_value(g, y);
  int rank = yv->rank;
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, yv->shape, sizeof shape);
  int64_t n = shape[rank - 1], rows = cs_value_numel(yv) / n;
  shape[rank - 1] = np;
  char name[300];
  snprintf(name, sizeof name, "%s.mm_npad", base);
  int yp = cs_reroute_output(g, id, name, rank, shape);
  if (yp < 0) return CS_ERR_NOMEM;
  if (rows == 1) {
    int k = cs_add_kernel(g, CS_OP_K_COPY, base, 1, &yp, y);
    if (k < 0) return CS_ERR_NOMEM;
    cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, y));
    return CS_OK;
  }
  return cs_add_slice(g, base, yp, y, NULL, NULL) < 0 ? CS_ERR_NOMEM : CS_OK;
}

static cs_status offload_one(cs_graph *g, const cs_target *t, int mm_id, const cs_mm_dtype *d) {
  const cs_node *mm = cs_graph_node(g, mm_id);
  int is_gemm = mm->op == CS_OP_GEMM;
  int i16 = d->dt == CS_DTYPE_I16;
  int trans_b = is_gemm ? (int)cs_node_attr_int(mm, "transB", 0) : 0;
  if (is_gemm && (cs_node_attr_int(mm, "transA", 0) != 0 || cs_node_attr_float(mm, "alpha", 1.0f) != 1.0f ||
                  cs_node_attr_float(mm, "beta", 1.0f) != 1.0f)) {
    decline(g, mm, "Gemm with transA != 0 or alpha/beta != 1 (not a standard transpose)");
    return CS_OK;
  }
  /* The reshape variants (aten.linear on 3-D input): DQ → Reshape →
   * MatMul → Reshape → [Add] → Q. A row-major reshape that keeps the last
   * dim is the identity on the [M][K] / [M][N] buffers the kernel reads and
   * writes, so both reshapes fold away. */
  cs_mm_fc_shape fc;
  cs_mm_fc_shape_of(g, mm_id, &fc);
  int rs_in = fc.rs_in, rs_out = fc.rs_out;
  char why[200];
  cs_qparams xq, wq;
  cs_qdq_tail tail;
  int xdq = cs_match_dq_as(g, fc.data, d->dt, &xq);
  if (xdq < 0) {
    snprintf(why, sizeof why, "data is not DequantizeLinear(int%d, per-tensor constant qparams)%s", d->bits,
             i16 ? "" : ": quantize activations to int8 per tensor (cstatic.quantize_onnx preset \"c7x\", or "
                        "C7xMMAQuantizer)");
    decline(g, mm, why);
    return CS_OK;
  }
  int wdq = -1, tr_id = is_gemm ? -1 : weight_transpose(g, mm->inputs[1]);
  if (tr_id >= 0) trans_b = 1;
  int w_val = tr_id >= 0 ? cs_graph_node(g, tr_id)->inputs[0] : mm->inputs[1];
  if (!cs_match_weight_dq_as(g, w_val, trans_b ? 0 : 1, d->dt, &wq, &wdq)) {
    cs_qparams_free(&xq);
    snprintf(why, sizeof why, "weight is not DequantizeLinear(int%d constant) per-tensor or per-output-channel",
             d->bits);
    decline(g, mm, why);
    return CS_OK;
  }
  int bias = fc.bias, add_id = fc.add_id;
  if (!cs_match_qdq_tail_as(g, fc.tail_from, 1, d->dt, &tail)) {
    cs_qparams_free(&xq);
    cs_qparams_free(&wq);
    snprintf(why, sizeof why, "no [Add] -> [Relu|Clip] -> QuantizeLinear(int%d) tail", d->bits);
    decline(g, mm, why);
    return CS_OK;
  }
  const char *rule = NULL;
  cs_status st = CS_OK;
  void *bias_i = NULL, *wnk = NULL;
  uint8_t *scale = NULL, *shift = NULL;
  cs_mm_exact_plan plan;
  memset(&plan, 0, sizeof plan);
  int64_t *wsum = NULL;
  int relu = 0;
  int x_in = cs_graph_node(g, xdq)->inputs[0];
  int w_in = cs_graph_node(g, wdq)->inputs[0];
  const cs_value *wv = cs_graph_value(g, w_in);
  const cs_value *x = cs_graph_value(g, x_in);
  if ((rule = cs_mm_zero_points(d, &wq, &xq, &tail.out, why, sizeof why))) goto done;
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
  /* the kernel that runs it: its tile is K's and N's (mmalib_common.h
   * cs_mm_runs_as: 32 on the exact path's int16 kernel) */
  d = cs_mm_runs_as(t, d, m <= INT32_MAX, 1);
  /* K or N off the tile: padded (the header's "Padding") if the rest is
   * eligible and the cost rule says it pays, else this rule declines. */
  char kn_why[200] = "";
  if (k % d->mult != 0)
    snprintf(kn_why, sizeof kn_why, "K %% %d != 0 (K=%lld): pad K to %lld with zeros to offload", d->mult,
             (long long)k, cs_mm_round_up(k, d->mult));
  else if (n_out % d->mult != 0)
    snprintf(kn_why, sizeof kn_why, "N %% %d != 0 (N=%lld): pad N to %lld (zero weight rows) to offload", d->mult,
             (long long)n_out, cs_mm_round_up(n_out, d->mult));
  int64_t kp = cs_mm_round_up(k, d->mult), np = cs_mm_round_up(n_out, d->mult);
  int y_id = cs_graph_node(g, tail.q)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y_id);
  if (kn_why[0] && ((kp != k && x->shape[x->rank - 1] != k) || (np != n_out && yv->shape[yv->rank - 1] != n_out))) {
    rule = kn_why; /* a reshape moves K or N off the last dim: no pad/cut along it */
    goto done;
  }
  if (wq.count != 1 && wq.count != n_out) { rule = "weight scale count != N"; goto done; }
  if ((relu = cs_mm_act(d, &tail, why, sizeof why)) < 0) { rule = why; goto done; }
  if (kn_why[0] && relu) { rule = kn_why; goto done; } /* int16's ReLU call would follow the cut */
  if (t->constants_byte_alignment < 64) {
    snprintf(why, sizeof why, "constants-byte-alignment %d < 64 (MMA needs 64-byte aligned tensors): use "
             "-constants-byte-alignment=64", t->constants_byte_alignment);
    rule = why;
    goto done;
  }
  size_t esz = cs_dtype_size(d->dt);
  bias_i = calloc((size_t)np, i16 ? sizeof(int64_t) : sizeof(int32_t));
  scale = malloc((size_t)np);
  shift = malloc((size_t)np);
  wsum = calloc((size_t)np, sizeof *wsum);
  wnk = calloc((size_t)(np * kp), esz); /* padded rows and columns: zero */
  if (!bias_i || !scale || !shift || !wsum || !wnk) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
  const char *wd = wv->data;
  for (int64_t nn = 0; nn < n_out; nn++)
    for (int64_t kk = 0; kk < k; kk++) {
      const char *src = wd + esz * (size_t)(trans_b ? nn * k + kk : kk * n_out + nn);
      memcpy((char *)wnk + esz * (size_t)(nn * kp + kk), src, esz);
      wsum[nn] += i16 ? *(const int16_t *)src : *(const int8_t *)src;
    }
  double worst = 0.0;
  rule = cs_mm_fold(g, d, bias, &xq, &wq, &tail.out, wsum, (int)n_out, bias_i, scale, shift, &worst);
  if (rule) goto done;
  for (int64_t nn = n_out; nn < np; nn++) { /* padded outputs: bias 0, any valid multiplier; never read */
    scale[nn] = scale[0];
    shift[nn] = shift[0];
  }
  if (kn_why[0] && !fc_pad_pays(g, t, mm->name, d, m, k, n_out, kp, np, cs_graph_is_output(g, y_id))) {
    rule = kn_why;
    goto done;
  }

  /* The exact-requant path (mmalib_exact.c) for an FC (M images of a 1x1
   * conv of K channels to N: the core kernel's NCHW reading of [M, K] and
   * [M, N], padded K and N included); a layer it cannot take stays on the
   * int8 kernel. */
  int exact = 0;
  int32_t o_zp = tail.out.zp[0];
  double span = (double)(127 - o_zp > o_zp + 128 ? 127 - o_zp : o_zp + 128); /* max |y − o_zp| */
  if (!i16 && m <= INT32_MAX && cs_mm_exact_wanted(t, worst, worst * span)) {
    int64_t *acc = malloc(sizeof *acc * (size_t)n_out);
    if (!acc) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
    for (int64_t c = 0; c < n_out; c++) /* the fold's bias without its o_zp term (integers: exact) */
      acc[c] = (int64_t)((const int32_t *)bias_i)[c] -
               (int64_t)nearbyint((double)o_zp / ldexp((double)scale[c], -shift[c]));
    const char *er =
        cs_mm_exact_plan_init(&plan, (int)n_out, xq.scale[0], xq.zp[0], &wq, wsum, tail.out.scale[0], o_zp, acc);
    free(acc);
    if (er == cs_mm_nomem) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
    exact = er == NULL;
    if (exact && cs_mm_exact_plan_pad(&plan, (int)np) != 0) { st = CS_ERR_NOMEM; goto done; }
    if (!exact && d->exact && (kp % cs_mm_int8.mult || np % cs_mm_int8.mult)) {
      /* K and N were padded to the int16 tile: the int8 kernel cannot take them */
      snprintf(why, sizeof why, "K or N %% %d != 0 (K=%lld, N=%lld) and the exact path declines it (%s)",
               cs_mm_int8.mult, (long long)kp, (long long)np, er);
      rule = why;
      goto done;
    }
  }

  char base[256];
  snprintf(base, sizeof base, "%s", mm->name ? mm->name : "fc");
  char add_name[256] = "";
  if (add_id >= 0) snprintf(add_name, sizeof add_name, "%s", cs_graph_node(g, add_id)->name);
  int w_nk = w_in;
  if (!trans_b || kn_why[0]) {
    int64_t shape[2] = {np, kp};
    w_nk = cs_add_const_named(g, base, "mm_weight_nk", d->dt, 2, shape, wnk);
    if (w_nk < 0) {
      st = CS_ERR_NOMEM; /* message recorded */
      goto done;
    }
  }
  /* A graph input or output goes through an aligned arena copy
   * (mmalib_common.h "the graph's edge"). */
  int y_out = cs_graph_node(g, tail.q)->outputs[0];
  int x_mm = kp != k ? pad_k(g, x_in, kp, &xq, base) : x_in;
  /* (The exact path's k_widen_i16 is that copy, its core kernel writes y.) */
  if (x_mm >= 0 && !exact) x_mm = cs_mm_stage_input(g, x_mm, base);
  if (x_mm < 0) {
    st = CS_ERR_NOMEM;
    goto done;
  }
  int inputs[5];
  if (exact) {
    if (cs_mm_exact_inputs(g, base, x_mm, w_nk, &plan, inputs) != 0) { st = CS_ERR_NOMEM; goto done; }
  } else {
    int rq[3];
    st = i16 ? cs_mm_add_requant_consts_i16(g, base, (int)np, bias_i, scale, shift, rq)
             : cs_mm_add_requant_consts(g, base, (int)np, bias_i, scale, shift, rq);
    if (st != CS_OK) goto done;
    int in[5] = {x_mm, w_nk, rq[0], rq[1], rq[2]};
    memcpy(inputs, in, sizeof in);
  }
  int chain[5] = {tr_id, rs_in, mm_id, rs_out, add_id};
  cs_op op = i16 || exact ? CS_OP_K_MMALIB_FC_I16 : CS_OP_K_MMALIB_FC_I8;
  int id = i16 ? cs_mm_replace_chain_i16(g, chain, 5, &tail, relu, op, 5, inputs)
               : cs_replace_chain(g, chain, 5, &tail, op, 5, inputs);
  int64_t args[3] = {m, kp, np};
  if ((st = cs_mm_set_args(g, id, 3, args)) != CS_OK) goto done;
  if (exact) {
    /* N padded: the call and the core kernel write [M, np], the cut
     * keeps the first N of each row */
    if (np != n_out && (st = cut_n(g, id, y_out, np, base)) != CS_OK) goto done;
    tidsp_conv2d_params cp;
    memset(&cp, 0, sizeof cp);
    cp.h_in = cp.w_in = cp.h_out = cp.w_out = cp.k_h = cp.k_w = 1;
    cp.n = (int32_t)m; /* M rows: M images of a 1x1 conv */
    cp.stride_h = cp.stride_w = cp.dil_h = cp.dil_w = cp.groups = 1;
    cp.c_in = (int32_t)kp; /* x and w with K's zero padding */
    cp.c_out = (int32_t)np;
    if (cs_mm_exact_requant(g, id, base, &plan, w_nk, &cp, o_zp) != 0) { st = CS_ERR_NOMEM; goto done; }
  } else {
    if (np != n_out && (st = cut_n(g, id, y_out, np, base)) != CS_OK) goto done;
    if (np == n_out && (st = cs_mm_stage_output(g, y_out)) != CS_OK) goto done;
  }
  /* the bias Add is part of this layer now (the int8 residual-add pass
   * may have declined it as an add) */
  if (add_name[0]) cs_mmalib_report_forget(g, add_name);
  cs_mmalib_report_add(g, CS_OFFLOAD_FC, cs_graph_node(g, mm_id)->name, cs_kernel_info_of(op)->fn,
                       exact ? 0.0 : worst, NULL);
  if (exact) {
    /* the cost (mmalib_cost.h), as the conv's: int16 panels and bytes; the
     * core widens x and requantizes z */
    double x8 = (double)(m * k), w8 = (double)(k * n_out), y8 = (double)(m * n_out);
    cs_mmalib_report_exact(g, cs_graph_node(g, mm_id)->name, worst, plan.max_err,
                           cs_mm_cost_mma(k, n_out, m, 32, cs_mm_call_bytes(t, 2.0 * x8, 2.0 * w8, 2.0 * y8)),
                           cs_mm_cost_mma(k, n_out, m, 64, cs_mm_call_bytes(t, x8, w8, y8)),
                           cs_mm_cost_scalar(m * k + 2 * m * n_out, 3.0 * (double)(m * k) + 3.0 * (double)(m * n_out)));
  }
  if (i16) cs_mmalib_report_bound(g, cs_graph_node(g, mm_id)->name, -(double)INT16_MIN);
done:
  if (rule && st == CS_OK) decline(g, cs_graph_node(g, mm_id), rule);
  free(bias_i);
  free(scale);
  free(shift);
  free(wsum);
  free(wnk);
  cs_mm_exact_plan_free(&plan);
  cs_qparams_free(&xq);
  cs_qparams_free(&wq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status cs_mm_fuse_fc(cs_graph *g, const cs_target *t, const cs_mm_dtype *d) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || (node->op != CS_OP_GEMM && node->op != CS_OP_MATMUL) || node->n_inputs < 2) continue;
    if (d->dt != CS_DTYPE_I8) {
      cs_mm_fc_shape fc;
      cs_mm_fc_shape_of(g, i, &fc);
      int dq = cs_match_producer(g, fc.data, CS_OP_DEQUANTIZE_LINEAR);
      if (dq < 0 || cs_graph_value(g, cs_graph_node(g, dq)->inputs[0])->dtype != d->dt) continue;
    }
    cs_status st = offload_one(g, t, i, d);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
