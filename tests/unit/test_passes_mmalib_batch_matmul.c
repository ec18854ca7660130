/*
 * test_passes_mmalib_batch_matmul.c — attention's products of two runtime
 * tensors on the MMA (compiler/passes/fuse_qdq_to_int8_batch_matmul.c):
 *
 * - The kernels: random int8 operands (zero points at both ends, sizes
 *   below, at and above the tile of 32, broadcast batches, a transposed
 *   B) through tidsp_widen_i16 → mmalib_batch_matmul_i16 (the pass's
 *   shift, and the coarser one for which z never saturates) →
 *   tidsp_batch_matmul_exact_requant equal
 *   tidsp_batch_matmul_i8__ref (ORT's QLinearMatMul) on every output; the
 *   requantization of z without the re-sum (every z taken at its
 *   interval's low end) differs: the check can fail. Crafted
 *   accumulators: z whose interval holds a rounding boundary (a power-of-
 *   two multiplier puts one at every half), saturated z (too small a
 *   shift; the pass's shift on mostly clipped outputs), shift 0.
 * - The pass: under -mmalib=1 a product that pays becomes the three
 *   kernels (Kᵀ's Transpose folded into the widening), and the graph still
 *   computes the core kernel's bytes; it declines — the core kernel stays —
 *   when it does not pay (the report says so), under -mmalib-exact=none,
 *   and (no fusion at all) for a per-channel or a float operand.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "cstatic/mmalib.h"
#include "graph_build.h"
#include "passes/passes.h"
#include "target.h"
#include "unit.h"

/* one fixed seed: every run checks the same operands and sizes */
#define KT_SEED 0x9e3779b97f4a7c15ull
#include "kernel_test_util.h"

static void *zalloc(size_t n) {
  size_t m = (n + 63) / 64 * 64;
  void *p = aligned_alloc(64, m ? m : 64);
  memset(p, 0, m ? m : 64);
  return p;
}

static int32_t round32(int32_t v) { return (v + 31) / 32 * 32; }
static int64_t max_dev(int32_t zp) { return zp + 128 > 127 - zp ? zp + 128 : 127 - zp; }

/* The smallest shift for which z cannot saturate. */
static int32_t bound_shift(int32_t k, int32_t a_zp, int32_t b_zp) {
  int64_t bound = k * max_dev(a_zp) * max_dev(b_zp);
  int32_t sh = 0;
  while ((bound + (sh ? (int64_t)1 << (sh - 1) : 0)) >> sh > INT16_MAX) sh++;
  return sh;
}

/* The pass's shift: z reaches the accumulators that saturate the output
 * (±(span + 1)/r) or the largest |acc|, whichever is smaller, before it
 * saturates itself. */
static int32_t pass_shift(int32_t k, int32_t a_zp, int32_t b_zp, int32_t y_zp, float mult) {
  double bound = (double)(k * max_dev(a_zp) * max_dev(b_zp));
  double span = fmax(127.0 - y_zp, y_zp + 128.0) + 1.0;
  double need = fmin(bound, ceil(span / (double)mult));
  int32_t sh = 0;
  while (sh < 31 && 32767.0 * (double)((int64_t)1 << sh) - (sh ? (double)((int64_t)1 << (sh - 1)) : 0.0) - 1.0 < need)
    sh++;
  return sh;
}

typedef struct mm_case {
  int32_t batch, m, k, n;
  int a_bcast, b_bcast; /* batch stride 0 */
  int32_t a_zp, b_zp, y_zp;
  float mult;
  int32_t shift; /* −1: the bound's (z never saturates); −2: the pass's */
  int random_data; /* 0: extreme values only (large accumulators, saturation) */
} mm_case;

/* Runs one case through the MMA path and the core kernel; returns the
 * number of differing outputs, *naive the count without the re-sum. */
static int run_case(const mm_case *c, int *naive) {
  const int32_t mp = round32(c->m), kp = round32(c->k), np = round32(c->n);
  const int32_t ba = c->a_bcast ? 1 : c->batch, bb = c->b_bcast ? 1 : c->batch;
  int8_t *a = zalloc((size_t)ba * c->m * c->k), *b = zalloc((size_t)bb * c->k * c->n);
  int8_t *b_t = zalloc((size_t)bb * c->n * c->k);
  for (int32_t i = 0; i < ba * c->m * c->k; i++) a[i] = (int8_t)(c->random_data ? (int)(rnd() % 256) - 128 : (i % 3 ? -128 : 127));
  for (int32_t i = 0; i < bb * c->k * c->n; i++) b[i] = (int8_t)(c->random_data ? (int)(rnd() % 256) - 128 : -128);
  for (int32_t q = 0; q < bb; q++) /* the core kernel's [n][k] */
    for (int32_t kk = 0; kk < c->k; kk++)
      for (int32_t j = 0; j < c->n; j++)
        b_t[((size_t)q * c->n + j) * c->k + kk] = b[((size_t)q * c->k + kk) * c->n + j];
  tidsp_requant_params rq;
  memset(&rq, 0, sizeof rq);
  rq.kind = TIDSP_REQUANT_FLOAT;
  rq.out_zp = c->y_zp;
  rq.out_min = -128;
  rq.out_max = 127;
  /* reference: the core kernel */
  tidsp_batch_matmul_i8_params p = {c->batch, c->m, c->k, c->n, c->a_bcast ? 0 : c->m * c->k,
                                    c->b_bcast ? 0 : c->k * c->n, c->a_zp, c->b_zp, rq};
  int8_t *ref = zalloc((size_t)c->batch * c->m * c->n), *y = zalloc((size_t)c->batch * c->m * c->n);
  CHECK(tidsp_batch_matmul_i8__ref(&p, a, b_t, &c->mult, ref) == TIDSP_OK);
  /* the MMA path; B widened from its transpose half the time */
  int16_t *a16 = zalloc(sizeof(int16_t) * (size_t)ba * mp * kp), *b16 = zalloc(sizeof(int16_t) * (size_t)bb * kp * np);
  int16_t *z = zalloc(sizeof(int16_t) * (size_t)c->batch * mp * np);
  tidsp_widen_i16_params wa = {ba, c->m, c->k, c->m * c->k, mp, kp, 0, c->a_zp};
  tidsp_widen_i16_params wb = {bb, c->k, c->n, c->k * c->n, kp, np, 0, c->b_zp};
  const int8_t *b_src = b;
  if (rnd() % 2) {
    wb.rows = c->n;
    wb.cols = c->k;
    wb.transpose = 1;
    b_src = b_t;
  }
  for (size_t i = 0; i < (size_t)ba * mp * kp; i++) a16[i] = 0x5a5a; /* the padding must be written */
  CHECK(tidsp_widen_i16(&wa, a, a16) == TIDSP_OK);
  CHECK(tidsp_widen_i16(&wb, b_src, b16) == TIDSP_OK);
  const int32_t sh = c->shift >= 0    ? c->shift
                     : c->shift == -1 ? bound_shift(c->k, c->a_zp, c->b_zp)
                                      : pass_shift(c->k, c->a_zp, c->b_zp, c->y_zp, c->mult);
  const int32_t sa = c->a_bcast ? 0 : mp * kp, sb = c->b_bcast ? 0 : kp * np;
  CHECK(mmalib_batch_matmul_i16(a16, b16, z, c->batch, mp, kp, np, sh, sa, sb) == TIDSP_MMALIB_OK);
  tidsp_batch_matmul_exact_params e = {c->batch, c->m, c->k, c->n, mp, kp, np, sa, sb, sh, rq};
  CHECK(tidsp_batch_matmul_exact_requant(&e, z, a16, b16, &c->mult, y) == TIDSP_OK);
  int diff = 0;
  *naive = 0;
  const int64_t step = (int64_t)1 << sh, half = sh ? step / 2 : 0;
  for (int32_t q = 0; q < c->batch; q++)
    for (int32_t i = 0; i < c->m; i++)
      for (int32_t j = 0; j < c->n; j++) {
        size_t o = ((size_t)q * c->m + i) * c->n + j;
        diff += y[o] != ref[o];
        /* without the re-sum: the low end of z's interval */
        int64_t lo = z[((size_t)q * mp + i) * np + j] * step - half;
        float v = (float)lo * c->mult;
        v = fminf(fmaxf(v, -128.0f - (float)c->y_zp), 127.0f - (float)c->y_zp);
        *naive += (int8_t)((int32_t)nearbyintf(v) + c->y_zp) != ref[o];
      }
  free(a), free(b), free(b_t), free(ref), free(y), free(a16), free(b16), free(z);
  return diff;
}

static void check_kernels(void) {
  int naive_total = 0;
  const int32_t sizes[][3] = {{1, 1, 1}, {31, 32, 33}, {32, 32, 32}, {49, 32, 49}, {64, 96, 40}, {5, 200, 7}};
  for (int s = 0; s < 6; s++)
    for (int rep = 0; rep < 4; rep++) {
      mm_case c = {1 + (int32_t)(rnd() % 4), sizes[s][0], sizes[s][1], sizes[s][2], rep == 1, rep == 2,
                   rep == 3 ? -128 : (int32_t)(rnd() % 256) - 128, rep == 3 ? 127 : (int32_t)(rnd() % 256) - 128,
                   (int32_t)(rnd() % 256) - 128, 0.0f, rep % 2 ? -2 : -1, 1};
      /* outputs spread over the int8 range */
      c.mult = (float)(40.0 / (sqrt((double)c.k) * 74.0 * 74.0) * (0.5 + (rnd() % 1000) / 1000.0));
      int naive, diff = run_case(&c, &naive);
      CHECK_MSG(diff == 0, "b%d m%d k%d n%d rep %d: %d outputs differ", c.batch, c.m, c.k, c.n, rep, diff);
      naive_total += naive;
    }
  CHECK_MSG(naive_total > 0, "the re-sum never mattered: the check cannot fail");
  /* a power-of-two multiplier 2^−sh: every interval holds a rounding
   * boundary (acc/2^sh = z ± 1/2 ends it); ties to even; shift 0 (z is the
   * accumulator); extreme operands (|acc| near its bound, no saturation) */
  mm_case ties = {2, 33, 64, 17, 0, 0, 0, 0, 0, 0.0f, 7, 1};
  ties.mult = 1.0f / 128.0f;
  int naive, diff = run_case(&ties, &naive);
  CHECK(diff == 0 && naive > 0);
  mm_case exact = {2, 20, 3, 20, 0, 1, 5, -9, 0, 1.0f / 900.0f, 0, 1};
  CHECK(run_case(&exact, &naive) == 0 && naive == 0);
  mm_case extreme = {1, 8, 300, 8, 0, 0, 127, -128, 0, 1e-6f, -1, 0};
  CHECK(run_case(&extreme, &naive) == 0);
  /* the pass's shift where most outputs saturate (z at int16's ends: the
   * open intervals decide them) */
  mm_case clipped = {3, 40, 256, 33, 0, 0, -20, 30, -60, 0.0f, -2, 1};
  clipped.mult = 4.0f / (16.0f * 74.0f * 74.0f);
  CHECK(run_case(&clipped, &naive) == 0);
  /* a z at int16's ends (a shift too small for these operands): summed
   * again, still exact */
  mm_case sat = {1, 8, 300, 8, 0, 0, 0, 0, 0, 1.0f / 20000.0f, 2, 0};
  CHECK(run_case(&sat, &naive) == 0 && naive > 0); /* z's end ≈ 6.5 LSB, the output 127 */
}

static void check_params(void) {
  int8_t x[64] = {0};
  int16_t *y = zalloc(64 * 64 * 2), *z = zalloc(64 * 64 * 2);
  tidsp_widen_i16_params w = {1, 4, 4, 16, 3, 32, 0, 0};
  CHECK(tidsp_widen_i16(&w, x, y) == TIDSP_ERR_SHAPE); /* 4 rows into 3 */
  w.out_rows = 32;
  w.zp = 300;
  CHECK(tidsp_widen_i16(&w, x, y) == TIDSP_ERR_PARAM);
  tidsp_batch_matmul_exact_params e;
  memset(&e, 0, sizeof e);
  e.batch = e.m = e.k = e.n = 1;
  e.m_pad = e.k_pad = e.n_pad = 32;
  e.rq.kind = TIDSP_REQUANT_FLOAT;
  e.rq.out_min = -128;
  e.rq.out_max = 127;
  e.shift = 32;
  float mult = 1.0f;
  int8_t out[1];
  CHECK(tidsp_batch_matmul_exact_requant(&e, z, y, y, &mult, out) == TIDSP_ERR_PARAM);
  e.shift = 0;
  e.n_pad = 0;
  CHECK(tidsp_batch_matmul_exact_requant(&e, z, y, y, &mult, out) == TIDSP_ERR_SHAPE);
  /* a batch stride that would misalign the second batch */
  CHECK(mmalib_batch_matmul_i16(y, y, z, 2, 32, 32, 32, 0, 16, 0) == TIDSP_MMALIB_ERR_PRECONDITION);
  free(y);
  free(z);
}

/* Q(MatMul(DQ(a), DQ(b))) with a [2,3,M,K] and b given as [2,3,N,K]
 * through a Transpose (attention's Kᵀ); per_channel: a's DQ per axis. */
static cs_graph *attn_graph(int m, int k, int n, int per_channel, int float_b) {
  cs_graph *g = cs_graph_new("attn");
  int64_t sa[4] = {2, 3, m, k}, sk[4] = {2, 3, n, k}, sb[4] = {2, 3, k, n}, sy[4] = {2, 3, m, n};
  int a = gb_value(g, "a", CS_DTYPE_I8, 4, sa);
  int kv = gb_value(g, "k", float_b ? CS_DTYPE_F32 : CS_DTYPE_I8, 4, sk);
  int64_t perm[4] = {0, 1, 3, 2};
  int tr_id;
  int kt = gb_node(g, CS_OP_TRANSPOSE, "k_t", 1, &kv, float_b ? CS_DTYPE_F32 : CS_DTYPE_I8, 4, sb, &tr_id);
  cs_node_set_attr_ints(cs_graph_node(g, tr_id), "perm", 4, perm);
  int da;
  if (per_channel) {
    int64_t cs[1] = {k};
    float sc[512];
    int8_t zp[512] = {0};
    for (int i = 0; i < k; i++) sc[i] = 0.02f + 0.001f * (float)i;
    da = gb_dq(g, "da", a, cs_graph_add_const(g, "sa", CS_DTYPE_F32, 1, cs, sc),
               cs_graph_add_const(g, "za", CS_DTYPE_I8, 1, cs, zp));
    cs_node_set_attr_int(cs_graph_node(g, cs_graph_value(g, da)->producer), "axis", 3);
  } else {
    da = gb_dq(g, "da", a, gb_scalar_f32(g, "sa", 0.02f), gb_scalar_i8(g, "za", -5));
  }
  int db = float_b ? kt : gb_dq(g, "db", kt, gb_scalar_f32(g, "sb", 0.03f), gb_scalar_i8(g, "zb", 7));
  int in[2] = {da, db};
  int mm = gb_node(g, CS_OP_MATMUL, "qk", 2, in, CS_DTYPE_F32, 4, sy, NULL);
  float ys = (float)(0.02 * 0.03 * sqrt((double)k) * 74.0 * 74.0 / 40.0);
  int qy = gb_q(g, "qy", mm, gb_scalar_f32(g, "sy", ys), gb_scalar_i8(g, "zy", 2));
  int ins[2] = {a, kv};
  gb_set_io(g, 2, ins, 1, &qy);
  return g;
}

/* Runs the graph on fixed random inputs; the output bytes (malloc'd). */
static int8_t *run_graph(cs_graph *g, int m, int k, int n) {
  size_t na = (size_t)6 * m * k, nk = (size_t)6 * n * k, ny = (size_t)6 * m * n;
  int8_t *a = malloc(na), *kv = malloc(nk), *y = malloc(ny);
  uint64_t saved = rng_state;
  rng_state = 0x1234567;
  for (size_t i = 0; i < na; i++) a[i] = (int8_t)((int)(rnd() % 256) - 128);
  for (size_t i = 0; i < nk; i++) kv[i] = (int8_t)((int)(rnd() % 256) - 128);
  rng_state = saved;
  const void *inputs[2] = {a, kv};
  int32_t st;
  void **buf = gb_run(g, inputs, &st);
  CHECK(st == 0);
  memcpy(y, buf[g->outputs[0]], ny);
  gb_free_run(g, buf);
  free(a);
  free(kv);
  return y;
}

static const cs_offload_entry *entry_of(const cs_graph *g, const char *layer) {
  for (int i = 0; i < g->offload.n; i++)
    if (!strcmp(g->offload.entries[i].layer, layer)) return &g->offload.entries[i];
  return NULL;
}

static void check_pass(void) {
  const int m = 150, k = 300, n = 140;
  cs_target core, mma, none;
  cs_target_default(&core);
  CHECK(cs_target_parse("c_static_lib -mmalib=1", &mma) == CS_OK);
  CHECK(cs_target_parse("c_static_lib -mmalib=1 -mmalib-exact=none", &none) == CS_OK);
  /* the core kernel's bytes */
  cs_graph *g0 = attn_graph(m, k, n, 0, 0);
  CHECK(cs_passes_run(g0, &core, NULL) == CS_OK);
  CHECK(gb_count_op(g0, CS_OP_K_BATCH_MATMUL_I8) == 1);
  int8_t *want = run_graph(g0, m, k, n);
  cs_graph_free(g0);
  /* match: on the MMA, Kᵀ's Transpose folded into b's widening */
  cs_graph *g = attn_graph(m, k, n, 0, 0);
  CHECK(cs_passes_run(g, &mma, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_BATCH_MATMUL_I8) == 0 && gb_count_op(g, CS_OP_K_TRANSPOSE) == 0);
  CHECK(gb_count_op(g, CS_OP_K_WIDEN_I16) == 2 && gb_count_op(g, CS_OP_K_MMALIB_BATCH_MATMUL_I16) == 1);
  int r = gb_find_op(g, CS_OP_K_BATCH_MATMUL_EXACT_REQUANT);
  CHECK(r >= 0);
  if (r >= 0) {
    const tidsp_batch_matmul_exact_params *p = &cs_graph_node(g, r)->k.batch_matmul_exact;
    CHECK(p->batch == 6 && p->m == m && p->k == k && p->n == n && p->m_pad == 160 && p->k_pad == 320 &&
          p->n_pad == 160);
    CHECK(p->a_batch_stride == 160 * 320 && p->b_batch_stride == 320 * 160);
    const float ys = (float)(0.02 * 0.03 * sqrt((double)k) * 74.0 * 74.0 / 40.0);
    CHECK(p->shift == pass_shift(k, -5, 7, 2, (0.02f * 0.03f) / ys));
    CHECK(p->shift < bound_shift(k, -5, 7)); /* finer than the bound's */
  }
  const cs_offload_entry *e = entry_of(g, "qk");
  CHECK(e && !strcmp(e->kernel, "mmalib_batch_matmul_i16") && e->kind == CS_OFFLOAD_MATMUL && e->exact);
  CHECK(g->offload.n_pad == 1 && g->offload.pads[0].macs_added == 6LL * (160 * 320 * 160 - m * k * n));
  int8_t *got = run_graph(g, m, k, n);
  CHECK(memcmp(got, want, (size_t)6 * m * n) == 0);
  free(got);
  cs_graph_free(g);
  free(want);
  /* decline: -mmalib-exact=none */
  g = attn_graph(m, k, n, 0, 0);
  CHECK(cs_passes_run(g, &none, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_BATCH_MATMUL_I8) == 1 && gb_count_op(g, CS_OP_K_MMALIB_BATCH_MATMUL_I16) == 0);
  cs_graph_free(g);
  /* decline: does not pay (products of 2x4x2: a whole 32x32 panel and
   * its load for 16 MACs) */
  g = attn_graph(2, 4, 2, 0, 0);
  CHECK(cs_passes_run(g, &mma, NULL) == CS_OK);
  CHECK(gb_count_op(g, CS_OP_K_BATCH_MATMUL_I8) == 1 && gb_count_op(g, CS_OP_K_MMALIB_BATCH_MATMUL_I16) == 0);
  e = entry_of(g, "qk");
  CHECK(e && !e->kernel[0] && !strncmp(e->reason, "does not pay", 12));
  cs_graph_free(g);
  /* decline: a per-channel operand, a float operand (no int8 product) */
  for (int c = 0; c < 2; c++) {
    g = attn_graph(m, k, n, c == 0, c == 1);
    CHECK(cs_passes_run(g, &mma, NULL) == CS_OK);
    CHECK(gb_count_op(g, CS_OP_K_BATCH_MATMUL_I8) == 0 && gb_count_op(g, CS_OP_K_MMALIB_BATCH_MATMUL_I16) == 0);
    cs_graph_free(g);
  }
}

/* Q(MatMul(DQ(a), Transpose(K))) with K = Gather(DQ(kv), 1, axis 0), kv
 * [2, 2, 3, n, k] (a PT2E Swin's K out of its q, k, v stack), or (gather
 * 0) K = DQ(kv), kv [2, 3, n, k]: either way a dequantize EliminateQDQ-
 * Transparent sinks to the MatMul. */
static cs_graph *stacked_k_graph(int gather) {
  const int m = 5, k = 8, n = 6;
  cs_graph *g = cs_graph_new("stacked_k");
  int64_t sa[4] = {2, 3, m, k}, skv[5] = {2, 2, 3, n, k}, sb[4] = {2, 3, k, n}, sy[4] = {2, 3, m, n};
  int64_t perm[4] = {0, 1, 3, 2};
  int a = gb_value(g, "a", CS_DTYPE_I8, 4, sa), kv = gb_value(g, "kv", CS_DTYPE_I8, gather ? 5 : 4, skv + !gather);
  int da = gb_dq(g, "da", a, gb_scalar_f32(g, "sa", 0.02f), gb_scalar_i8(g, "za", -5));
  int kf = gb_dq(g, "dkv", kv, gb_scalar_f32(g, "skv", 0.03f), gb_scalar_i8(g, "zkv", 7));
  if (gather) kf = gb_gather0(g, "select_k", kf, 1, 4, skv + 1);
  int tr_id;
  int kt = gb_node(g, CS_OP_TRANSPOSE, "k_t", 1, &kf, CS_DTYPE_F32, 4, sb, &tr_id);
  cs_node_set_attr_ints(cs_graph_node(g, tr_id), "perm", 4, perm);
  int in[2] = {da, kt};
  int mm = gb_node(g, CS_OP_MATMUL, "qk", 2, in, CS_DTYPE_F32, 4, sy, NULL);
  int qy = gb_q(g, "qy", mm, gb_scalar_f32(g, "sy", 0.05f), gb_scalar_i8(g, "zy", 2));
  int ins[2] = {a, kv};
  gb_set_io(g, 2, ins, 1, &qy);
  return g;
}

/* -ort-exact=1 (the default): a product whose operand ORT keeps in float
 * (a dequantize cstatic sank below a Gather, which ORT's propagation does
 * not cross) stays a float MatMul, as ORT runs it; without the Gather, or
 * with -ort-exact=0, it is the int8 product. */
static void check_ort_float_operand(void) {
  cs_target exact, loose;
  cs_target_default(&exact);
  CHECK(cs_target_parse("c_static_lib -ort-exact=0", &loose) == CS_OK);
  for (int c = 0; c < 3; c++) {
    int gather = c != 1;
    cs_graph *g = stacked_k_graph(gather);
    CHECK_MSG(cs_passes_run(g, c == 2 ? &loose : &exact, NULL) == CS_OK, "%s", cs_error_message());
    int want = !(gather && c == 0);
    CHECK_MSG(gb_count_op(g, CS_OP_K_BATCH_MATMUL_I8) == want,
              "gather %d, ort-exact %d: %d int8 products, want %d", gather, c != 2,
              gb_count_op(g, CS_OP_K_BATCH_MATMUL_I8), want);
    cs_graph_free(g);
  }
}

int main(void) {
  check_kernels();
  check_params();
  check_pass();
  check_ort_float_operand();
  UNIT_MAIN_END();
}
