/*
 * QuantizeConcatMaxPool: Q(MaxPool…(Concat(DQ_i(x_i)))) runs on int8 (a
 * quantized copy of the Concat, int8 MaxPools) and gives the bytes of the
 * float graph — checked against a direct float computation (DQ, Concat,
 * MaxPool over the valid taps, ONNX QuantizeLinear) on inputs that reach
 * every int8 code and saturate. Each eligibility rule declines on its own
 * and leaves the float MaxPool, with the same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"
#include "passes/passes.h"
#include "quant/quant.h"
#include "unit.h"

typedef struct cm_case {
  int direct_q;      /* the Concat also feeds a Q of its own */
  int chain;         /* MaxPool → MaxPool(2×2/2, ceil) → Q, beside MaxPool → Q */
  int same_leaf;     /* the chain's Q has the first pool's parameters (one shared copy) */
  int negate;        /* rule: a Mul by −1 (not monotone) between the MaxPool and its Q */
  int per_channel;   /* rule: input b's DQ is per-channel */
  int pool_out;      /* rule: the MaxPool's float result is a graph output too */
  int concat_out;    /* the Concat's float result is a graph output (it stays; the pool is taken) */
  int equal_params;  /* rule: the inputs share their parameters (EliminateQDQTransparent's case) */
} cm_case;

enum { H = 5, W = 6, CA = 2, CB = 3, C = CA + CB, PLANE = H * W };
static const float AS = 0.031f, BS = 0.047f, BS1 = 0.02f, DS = 0.043f, PS = 0.039f, CS2 = 0.05f;
static const int AZ = -7, BZ = 11, DZ = 3, PZ = -128, CZ2 = 20;

static int pool_node(cs_graph *g, const char *name, int x, int k, int s, int pad, int ceil_mode, int h, int w) {
  int64_t shape[4] = {1, C, h, w};
  int id;
  int y = gb_node(g, CS_OP_MAX_POOL, name, 1, &x, CS_DTYPE_F32, 4, shape, &id);
  cs_node *n = cs_graph_node(g, id);
  cs_node_set_attr_ints(n, "kernel_shape", 2, (int64_t[]){k, k});
  cs_node_set_attr_ints(n, "strides", 2, (int64_t[]){s, s});
  cs_node_set_attr_ints(n, "pads", 4, (int64_t[]){pad, pad, pad, pad});
  cs_node_set_attr_int(n, "ceil_mode", ceil_mode);
  return y;
}

/* a, b → Q → DQ → Concat(axis 1) ─┬─ [Q_d]
 *                                 └─ MaxPool(3×3/1 pad 1) ─┬─ [Mul −1] → Q_p
 *                                                          └─ [MaxPool(2×2/2 ceil) → Q_c]
 * Outputs: Q_p, then Q_d, Q_c, the pool, the Concat as the case has them. */
static cs_graph *cm_graph(cm_case c, int *ins) {
  cs_graph *g = cs_graph_new("concat_max_pool");
  int64_t sa[4] = {1, CA, H, W}, sb[4] = {1, CB, H, W}, sy[4] = {1, C, H, W};
  int a = gb_value(g, "a", CS_DTYPE_F32, 4, sa), b = gb_value(g, "b", CS_DTYPE_F32, 4, sb);
  float bs = c.equal_params ? AS : BS;
  int bz = c.equal_params ? AZ : BZ;
  int qa = gb_q(g, "q_a", a, gb_scalar_f32(g, "as", AS), gb_scalar_i8(g, "az", AZ));
  int qb = gb_q(g, "q_b", b, gb_scalar_f32(g, "bs", bs), gb_scalar_i8(g, "bz", (int8_t)bz));
  int da = gb_dq(g, "dq_a", qa, gb_scalar_f32(g, "as2", AS), gb_scalar_i8(g, "az2", AZ));
  int db;
  if (c.per_channel) {
    float s[CB] = {bs, BS1, bs};
    int8_t z[CB] = {(int8_t)bz, (int8_t)bz, (int8_t)bz};
    int64_t n3[1] = {CB};
    int in[3] = {qb, cs_graph_add_const(g, "bs_pc", CS_DTYPE_F32, 1, n3, s),
                 cs_graph_add_const(g, "bz_pc", CS_DTYPE_I8, 1, n3, z)};
    int id;
    db = gb_node(g, CS_OP_DEQUANTIZE_LINEAR, "dq_b", 3, in, CS_DTYPE_F32, 4, sb, &id);
    cs_node_set_attr_int(cs_graph_node(g, id), "axis", 1);
  } else {
    db = gb_dq(g, "dq_b", qb, gb_scalar_f32(g, "bs2", bs), gb_scalar_i8(g, "bz2", (int8_t)bz));
  }
  int cin[2] = {da, db}, cat;
  int y = gb_node(g, CS_OP_CONCAT, "cat", 2, cin, CS_DTYPE_F32, 4, sy, &cat);
  cs_node_set_attr_int(cs_graph_node(g, cat), "axis", 1);
  int m1 = pool_node(g, "pool", y, 3, 1, 1, 0, H, W);
  int pin = m1;
  if (c.negate) {
    int mi[2] = {m1, gb_scalar_f32(g, "minus1", -1.0f)};
    pin = gb_node(g, CS_OP_MUL, "neg", 2, mi, CS_DTYPE_F32, 4, sy, NULL);
  }
  int outs[5], n_out = 0;
  outs[n_out++] = gb_q(g, "q_p", pin, gb_scalar_f32(g, "ps", PS), gb_scalar_i8(g, "pz", PZ));
  if (c.direct_q) outs[n_out++] = gb_q(g, "q_d", y, gb_scalar_f32(g, "ds", DS), gb_scalar_i8(g, "dz", DZ));
  if (c.chain) {
    int m2 = pool_node(g, "pool2", m1, 2, 2, 0, 1, (H + 1) / 2, W / 2);
    outs[n_out++] = c.same_leaf ? gb_q(g, "q_c", m2, gb_scalar_f32(g, "cs", PS), gb_scalar_i8(g, "cz", PZ))
                                : gb_q(g, "q_c", m2, gb_scalar_f32(g, "cs", CS2), gb_scalar_i8(g, "cz", CZ2));
  }
  if (c.pool_out) outs[n_out++] = m1;
  if (c.concat_out) outs[n_out++] = y;
  ins[0] = a;
  ins[1] = b;
  gb_set_io(g, 2, ins, n_out, outs);
  return g;
}

/* The float graph, computed directly: the concatenated dequantized inputs. */
static void reference_concat(cm_case c, const float *a, const float *b, float *y) {
  for (int i = 0; i < CA * PLANE; i++) y[i] = cs_dequantize_one(cs_quantize_one(a[i], AS, AZ, -128, 127), AS, AZ);
  for (int ch = 0; ch < CB; ch++) {
    float s = c.equal_params ? AS : BS, ds = c.per_channel && ch == 1 ? BS1 : s;
    int z = c.equal_params ? AZ : BZ;
    for (int i = 0; i < PLANE; i++) {
      int j = ch * PLANE + i;
      y[CA * PLANE + j] = cs_dequantize_one(cs_quantize_one(b[j], s, z, -128, 127), ds, z);
    }
  }
}

/* Max over the valid taps of each window (ONNX MaxPool skips padding). */
static void reference_pool(const float *x, int h, int w, int k, int s, int pad, int ho, int wo, float *y) {
  for (int ch = 0; ch < C; ch++)
    for (int oh = 0; oh < ho; oh++)
      for (int ow = 0; ow < wo; ow++) {
        float m = -INFINITY;
        for (int kh = 0; kh < k; kh++)
          for (int kw = 0; kw < k; kw++) {
            int ih = oh * s - pad + kh, iw = ow * s - pad + kw;
            if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
            float v = x[(ch * h + ih) * w + iw];
            if (v > m) m = v;
          }
        y[(ch * ho + oh) * wo + ow] = m;
      }
}

static int compare(const int8_t *got, const float *f, int n, float s, int z, float sign, const char *what,
                   const char *out) {
  for (int i = 0; i < n; i++) {
    int want = cs_quantize_one(sign * f[i], s, z, -128, 127);
    if (got[i] != want) {
      CHECK_MSG(0, "%s: %s[%d] = %d, the float graph gives %d", what, out, i, got[i], want);
      return 0;
    }
  }
  return 1;
}

static void run_case(cm_case c, int expect_int8, const char *what) {
  int ins[2];
  cs_graph *g = cm_graph(c, ins);
  cs_target t;
  cs_target_default(&t);
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s: %s", what, cs_error_message());
  int pools_f = gb_count_op(g, CS_OP_K_MAXPOOL_F32), pools_i = gb_count_op(g, CS_OP_K_MAXPOOL_I8);
  if (expect_int8)
    CHECK_MSG(pools_f == 0 && pools_i == 1 + c.chain + (c.chain && !c.same_leaf),
              "%s: the pools run on int8 (float %d, int8 %d)", what, pools_f, pools_i);
  else
    CHECK_MSG(pools_f >= 1, "%s: declined, the float MaxPool stays (float %d, int8 %d)", what, pools_f, pools_i);
  if (expect_int8 && !c.concat_out && !c.pool_out)
    CHECK_MSG(gb_count_op(g, CS_OP_K_DEQUANTIZE) == 0 && gb_count_op(g, CS_OP_K_QUANTIZE) == 2,
              "%s: only the inputs' Qs stay float (dequantize %d, quantize %d)", what,
              gb_count_op(g, CS_OP_K_DEQUANTIZE), gb_count_op(g, CS_OP_K_QUANTIZE));

  /* Inputs over and past both int8 ranges. */
  float a[CA * PLANE], b[CB * PLANE];
  for (int i = 0; i < CA * PLANE; i++) a[i] = (float)((i * 37) % 61 - 30) * 0.15f;
  for (int i = 0; i < CB * PLANE; i++) b[i] = (float)((i * 53) % 89 - 44) * 0.17f;
  int32_t st;
  const void *in[2] = {a, b};
  void **buf = gb_run(g, in, &st);
  CHECK_MSG(st == 0, "%s: runs", what);
  float y[C * PLANE], m1[C * PLANE], m2[C * 3 * 3];
  reference_concat(c, a, b, y);
  reference_pool(y, H, W, 3, 1, 1, H, W, m1);
  reference_pool(m1, H, W, 2, 2, 0, 3, 3, m2);
  int o = 0;
  if (st == 0) {
    compare(buf[g->outputs[o++]], m1, C * PLANE, PS, PZ, c.negate ? -1.0f : 1.0f, what, "q_p");
    if (c.direct_q) compare(buf[g->outputs[o++]], y, C * PLANE, DS, DZ, 1.0f, what, "q_d");
    if (c.chain)
      compare(buf[g->outputs[o++]], m2, C * 9, c.same_leaf ? PS : CS2, c.same_leaf ? PZ : CZ2, 1.0f, what, "q_c");
    if (c.pool_out) CHECK_MSG(!memcmp(buf[g->outputs[o++]], m1, sizeof m1), "%s: the float pool", what);
    if (c.concat_out) CHECK_MSG(!memcmp(buf[g->outputs[o++]], y, sizeof y), "%s: the float concat", what);
  }
  gb_free_run(g, buf);
  cs_graph_free(g);
}

int main(void) {
  /*                direct chain same negate pc pool_out concat_out equal */
  run_case((cm_case){0, 0, 0, 0, 0, 0, 0, 0}, 1, "Concat → MaxPool → Q");
  run_case((cm_case){1, 0, 0, 0, 0, 0, 0, 0}, 1, "Concat → {Q, MaxPool → Q} (GoogLeNet's inception)");
  run_case((cm_case){0, 1, 0, 0, 0, 0, 0, 0}, 1, "Concat → MaxPool → {Q, MaxPool → Q} (GoogLeNet's stage end)");
  run_case((cm_case){1, 1, 1, 0, 0, 0, 0, 0}, 1, "two leaves with the same parameters");
  run_case((cm_case){0, 0, 0, 0, 0, 0, 1, 0}, 1, "the Concat is a graph output too");
  run_case((cm_case){0, 0, 0, 1, 0, 0, 0, 0}, 0, "a Mul by -1 between the MaxPool and its Q");
  run_case((cm_case){1, 0, 0, 0, 1, 0, 0, 0}, 0, "a per-channel input");
  run_case((cm_case){0, 1, 0, 0, 0, 1, 0, 0}, 0, "the MaxPool's float result is read");
  /* Equal parameters: declined here, and EliminateQDQTransparent keeps the
   * Concat int8 with the pool after it anyway. */
  run_case((cm_case){0, 0, 0, 0, 0, 0, 0, 1}, 1, "equal input parameters");
  UNIT_MAIN_END();
}
