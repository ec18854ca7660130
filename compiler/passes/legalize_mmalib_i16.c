/*
 * LegalizeMMALIBInt16 — the int16 legalize path (spec/mmalib-integration.txt
 * "Int16 legalize path", c-static-lib-backend.txt step 10 "[MMALIB]
 * LegalizeOps(custom map)"): with -mmalib=1, a float Conv / MatMul / Gemm
 * with no quantization around it runs on the int16 MMA kernels. A pass of
 * its own, run before LegalizeOps (not one of legalize.c's families).
 *
 *   Conv   : N = 1, stride_h = stride_w, dilation 1, groups 1, C_out % 32 == 0
 *            → mmalib_conv2d_i16
 *   MatMul : 2-D (Gemm: transA = 0, alpha = beta = 1), M, K, N % 32 == 0
 *            → mmalib_matmul_i16
 *   both   : the weight a compile-time constant (a float constant, or
 *            DequantizeLinear of one: weight-only quantization); the data
 *            not; the data not a DequantizeLinear output and the result not
 *            feeding a QuantizeLinear (those are QDQ patterns the QDQ passes
 *            declined: they stay on the float path, as ONNX Runtime runs
 *            them).
 *
 * The spec gives only the extern ([data, weight] → int16); the fork casts
 * the floats to int16 with shift 0, which is wrong for any real data. What
 * a user expects is the float result within int16 precision, so:
 *
 *   weight  int16 symmetric per output channel, at compile time:
 *           s_w[c] = max|W_c| / 32767, Wq = round(W / s_w)
 *   data    int16 symmetric per tensor, at run time (dynamic: a float
 *           model has no calibration to give a static scale):
 *           s_a = max(max|x|, 1e-30) / 32767, xq = round(x / s_a)
 *           (max|x| = MaxPool over concat(x, −x, 1e-30): existing kernels,
 *           no new firmware symbol)
 *   kernel  yq = sat(round_half_up(Σ xq·Wq / 2^sh)), sh per output channel
 *           (conv) or the largest (matmul: one scalar shift) of
 *           sh_c = ceil(log2 Σ|Wq_c|), the smallest shift that cannot
 *           overflow: |Σ xq·Wq_c| ≤ 32767·Σ|Wq_c| ≤ 32767·2^sh_c
 *   result  y = yq · (s_a · 2^sh_c · s_w[c])  (per-channel dequantize; the
 *           scale vector is s_a times a compile-time constant), + bias
 *
 * Error: the data and the weights are rounded to 16 bits (relative ≤
 * 2^−16 of their ranges), and the result to a step of 2^sh_c·s_w[c]·s_a,
 * which the no-overflow shift makes coarser than the typical output (the
 * bound assumes every product at full scale): measured 57–80 dB SQNR
 * against the float lowering (tests/unit/test_passes_mmalib_i16.c,
 * tests/e2e/test_mmalib_i16.py against numpy). The coarse step is the
 * price of a data range known only at run time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/broadcast.h"
#include "cstatic/mmalib.h"
#include "match/geometry.h"
#include "match/mmalib_common.h"
#include "match/mmalib_report.h"
#include "pass_list.h"
#include "match/pattern.h"

#define I16_QMAX 32767.0
/* max|x| is at least this, so that s_a is a normal float and x = 0 → 0. */
#define ABSMAX_FLOOR 1e-30f

/* failed: a value or node could not be added (message recorded); every
 * builder below then does nothing and returns -1, and the pass fails. */
typedef struct legal_ctx {
  cs_graph *g;
  char base[256];   /* the layer's name, prefix of every new value */
  char origin[256]; /* the ONNX node the calls came from */
  int failed;
} legal_ctx;

static int checked(legal_ctx *c, int id) {
  if (id < 0) c->failed = 1;
  return id;
}

static int new_value(legal_ctx *c, const char *suffix, cs_dtype t, int rank, const int64_t *shape) {
  char name[512];
  snprintf(name, sizeof name, "%s.%s", c->base, suffix);
  return c->failed ? -1 : checked(c, cs_graph_add_value(c->g, name, t, rank, shape));
}

static int scalar_const(legal_ctx *c, const char *suffix, float v) {
  int64_t one[1] = {1};
  return c->failed ? -1 : checked(c, cs_add_const_named(c->g, c->base, suffix, CS_DTYPE_F32, 1, one, &v));
}

/* y = a op b (float, broadcasting). */
static int binary(legal_ctx *c, tidsp_binary_op op, int a, int b, int y) {
  if (c->failed) return -1;
  tidsp_binary_f32_params p;
  memset(&p, 0, sizeof p);
  cs_broadcast_init(cs_graph_value(c->g, a), cs_graph_value(c->g, b), cs_graph_value(c->g, y), &p.bc);
  p.op = op;
  int in[2] = {a, b};
  int id = checked(c, cs_add_kernel(c->g, CS_OP_K_BINARY_F32, c->origin, 2, in, y));
  if (id >= 0) cs_graph_node(c->g, id)->k.binary = p;
  return id;
}

/* s_a = max(max|x|, ABSMAX_FLOOR) / 32767, a [1] value computed at run time. */
static int dynamic_scale(legal_ctx *c, int x) {
  cs_graph *g = c->g;
  const cs_value *xv = cs_graph_value(g, x);
  int64_t n = cs_value_numel(xv), shape[CS_MAX_RANK], one[1] = {1};
  int rank = xv->rank;
  memcpy(shape, xv->shape, sizeof shape);
  int neg = new_value(c, "neg", CS_DTYPE_F32, rank, shape);
  binary(c, TIDSP_BINARY_MUL, x, scalar_const(c, "minus_one", -1.0f), neg);
  int64_t cat_shape[1] = {2 * n + 1};
  int cat = new_value(c, "abs_candidates", CS_DTYPE_F32, 1, cat_shape);
  int cin[3] = {x, neg, scalar_const(c, "absmax_floor", ABSMAX_FLOOR)};
  if (c->failed) return -1;
  int id = checked(c, cs_add_kernel(g, CS_OP_K_CONCAT, c->origin, 3, cin, cat));
  if (id < 0) return -1;
  int64_t lens[3] = {n, n, 1};
  cs_node *cn = cs_graph_node(g, id);
  if (cs_node_set_attr_ints(cn, "axis_len", 3, lens) != CS_OK) return checked(c, -1);
  memset(&cn->k.concat, 0, sizeof cn->k.concat);
  cn->k.concat.n_inputs = 3;
  cn->k.concat.outer = 1;
  cn->k.concat.inner_bytes = (int32_t)sizeof(float);
  int absmax = new_value(c, "absmax", CS_DTYPE_F32, 1, one);
  id = c->failed ? -1 : checked(c, cs_add_kernel(g, CS_OP_K_MAXPOOL_F32, c->origin, 1, &cat, absmax));
  if (id < 0) return -1;
  tidsp_pool2d_params *pp = &cs_graph_node(g, id)->k.pool;
  memset(pp, 0, sizeof *pp);
  pp->n = pp->c = pp->h_in = pp->h_out = pp->w_out = pp->k_h = 1;
  pp->w_in = pp->k_w = (int32_t)(2 * n + 1);
  pp->stride_h = pp->stride_w = pp->dil_h = pp->dil_w = 1;
  int s = new_value(c, "act_scale", CS_DTYPE_F32, 1, one);
  binary(c, TIDSP_BINARY_DIV, absmax, scalar_const(c, "int16_max", (float)I16_QMAX), s);
  return s;
}

/* xq = quantize(x, s_a, 0) : int16. */
static int quantize_dynamic(legal_ctx *c, int x, int s) {
  cs_graph *g = c->g;
  const cs_value *xv = cs_graph_value(g, x);
  int64_t shape[CS_MAX_RANK], one[1] = {1};
  int rank = xv->rank;
  int32_t n = (int32_t)cs_value_numel(xv), zero = 0;
  memcpy(shape, xv->shape, sizeof shape);
  int xq = new_value(c, "act_i16", CS_DTYPE_I16, rank, shape);
  int zp = c->failed ? -1 : checked(c, cs_add_const_named(g, c->base, "act_zero_point", CS_DTYPE_I32, 1, one, &zero));
  int in[3] = {s, zp, x};
  int id = c->failed ? -1 : checked(c, cs_add_kernel(g, CS_OP_K_QUANTIZE, c->origin, 3, in, xq));
  if (id < 0) return -1;
  tidsp_qdq_params *p = &cs_graph_node(g, id)->k.qdq;
  p->outer = n;
  p->channels = 1;
  p->inner = 1;
  p->dtype = TIDSP_DTYPE_I16;
  return xq;
}

/* y = dequantize(yq, s_a · step[c], 0) over [outer][channels][inner]. */
static void dequantize_dynamic(legal_ctx *c, int yq, int s, const float *step, int32_t outer, int32_t channels,
                               int32_t inner, int y) {
  cs_graph *g = c->g;
  int64_t cs[1] = {channels};
  if (c->failed) return;
  int steps = checked(c, cs_add_const_named(g, c->base, "out_step", CS_DTYPE_F32, 1, cs, step));
  int scale = new_value(c, "out_scale", CS_DTYPE_F32, 1, cs);
  binary(c, TIDSP_BINARY_MUL, s, steps, scale);
  /* NULL data: the constant is zero-filled */
  int zp = c->failed ? -1 : checked(c, cs_add_const_named(g, c->base, "out_zero_point", CS_DTYPE_I32, 1, cs, NULL));
  int in[3] = {scale, zp, yq};
  int id = c->failed ? -1 : checked(c, cs_add_kernel(g, CS_OP_K_DEQUANTIZE, c->origin, 3, in, y));
  if (id < 0) return;
  tidsp_qdq_params *p = &cs_graph_node(g, id)->k.qdq;
  p->outer = outer;
  p->channels = channels;
  p->inner = inner;
  p->dtype = TIDSP_DTYPE_I16;
}

/* The int16 MMALIB call and the float value it stands for: yq (int16, of
 * yshape) = op(in) with its MMALIB arguments, then dequantized by
 * s_a · step[c] over [outer][channels][inner] into y, a new value when a
 * bias is still to be added (returned), else y_val itself. */
static int i16_call(legal_ctx *c, cs_op op, int n_in, int *in, int n_args, const int64_t *args, int rank,
                    const int64_t *yshape, int s, const float *step, const int32_t geom[3], int has_bias,
                    int y_val) {
  int yq = new_value(c, "out_i16", CS_DTYPE_I16, rank, yshape);
  int k = c->failed ? -1 : checked(c, cs_add_kernel(c->g, op, c->origin, n_in, in, yq));
  if (!c->failed && cs_mm_set_args(c->g, k, n_args, args) != CS_OK) c->failed = 1;
  int yf = has_bias ? new_value(c, "out_nobias", CS_DTYPE_F32, rank, yshape) : y_val;
  dequantize_dynamic(c, yq, s, step, geom[0], geom[1], geom[2], yf);
  return yf;
}

/* The end of a lowering: CS_ERR_NOMEM when a builder failed (message
 * recorded), else the offload recorded in the report as `kernel`. */
static cs_status i16_done(legal_ctx *c, cs_offload_kind kind, const char *kernel) {
  if (c->failed) return CS_ERR_NOMEM;
  cs_mmalib_report_add(c->g, kind, c->base, kernel, -1.0, NULL);
  return CS_OK;
}

/* The float values of a compile-time weight (a float constant or DQ of an
 * integer constant), malloc'd; NULL if it is neither. *dq: the DQ node. */
static float *const_weight(cs_graph *g, int w, int *dq) {
  *dq = cs_match_producer(g, w, CS_OP_DEQUANTIZE_LINEAR);
  const cs_value *wv = cs_graph_value(g, w);
  int64_t n = cs_value_numel(wv);
  float *out = malloc(sizeof *out * (size_t)(n ? n : 1));
  if (!out) {
    g->alloc_failed = 1; /* "not a constant" would be a wrong decline */
    return NULL;
  }
  if (*dq < 0) {
    if (!wv->data || wv->dtype != CS_DTYPE_F32) { free(out); return NULL; }
    memcpy(out, wv->data, sizeof *out * (size_t)n);
    return out;
  }
  const cs_node *d = cs_graph_node(g, *dq);
  const cs_value *q = cs_graph_value(g, d->inputs[0]);
  cs_qparams qp;
  if (!q->data || !cs_dtype_is_int(q->dtype) || cs_qparams_read(g, d, &qp) != CS_OK) {
    cs_error_clear();
    free(out);
    return NULL;
  }
  /* element i's channel along qp.axis */
  int64_t inner = 1;
  for (int k = qp.axis + 1; qp.axis >= 0 && k < q->rank; k++) inner *= q->shape[k];
  for (int64_t i = 0; i < n; i++) {
    int ch = qp.axis < 0 ? 0 : (int)((i / inner) % qp.count);
    out[i] = cs_dequantize_one((int32_t)cs_const_get_int(q, i), qp.scale[ch], qp.zps[ch]);
  }
  cs_qparams_free(&qp);
  return out;
}

/* Quantize w (channel c's elements at c·cstride + j·jstride, j < len) to
 * int16 symmetric per channel: fills wq (same layout), step[c] = s_w[c]
 * (the caller scales it by 2^sh) and l1[c] = Σ|wq_c|. */
static void quantize_weight(const float *w, int64_t channels, int64_t len, int64_t cstride, int64_t jstride,
                            int16_t *wq, float *s_w, double *l1) {
  for (int64_t c = 0; c < channels; c++) {
    float amax = 0.0f;
    for (int64_t j = 0; j < len; j++) {
      float a = fabsf(w[c * cstride + j * jstride]);
      if (a > amax) amax = a;
    }
    s_w[c] = amax > 0.0f ? amax / (float)I16_QMAX : 1.0f;
    l1[c] = 0.0;
    for (int64_t j = 0; j < len; j++) {
      int64_t i = c * cstride + j * jstride;
      double q = nearbyint((double)w[i] / (double)s_w[c]);
      if (q > I16_QMAX) q = I16_QMAX;
      if (q < -I16_QMAX) q = -I16_QMAX;
      wq[i] = (int16_t)q;
      l1[c] += fabs(q);
    }
  }
}

/* The smallest shift with 2^sh ≥ l1 (no int16 overflow for |xq| ≤ 32767),
 * or -1 beyond 31. */
static int overflow_free_shift(double l1) {
  for (int sh = 0; sh <= TIDSP_MMALIB_MAX_SHIFT; sh++)
    if (ldexp(1.0, sh) >= l1) return sh;
  return -1;
}

/* The op's data is a DequantizeLinear output or its result feeds a
 * QuantizeLinear: part of a QDQ pattern, not this path's. */
static int is_quantized(cs_graph *g, const cs_node *n) {
  if (cs_match_producer(g, n->inputs[0], CS_OP_DEQUANTIZE_LINEAR) >= 0) return 1;
  int cons[64];
  int k = cs_graph_consumers(g, n->outputs[0], cons, 64);
  for (int i = 0; i < k && i < 64; i++)
    if (cs_graph_node(g, cons[i])->op == CS_OP_QUANTIZE_LINEAR) return 1;
  return 0;
}

/* Common rules; NULL if eligible. */
static const char *common_rules(cs_graph *g, const cs_target *t, const cs_node *n, char *why, size_t len) {
  if (cs_graph_value(g, n->inputs[0])->dtype != CS_DTYPE_F32 || cs_graph_value(g, n->outputs[0])->dtype != CS_DTYPE_F32)
    return "not a float op";
  if (cs_mm_const_reachable(g, n->inputs[0])) return "data is constant (ConstReachability)";
  if (t->constants_byte_alignment < TIDSP_MMALIB_ALIGN) {
    snprintf(why, len, "constants-byte-alignment %d < 64 (MMA needs 64-byte aligned tensors)",
             t->constants_byte_alignment);
    return why;
  }
  return NULL;
}

static void drop_weight_dq(cs_graph *g, int dq) {
  int c;
  if (dq >= 0 && !cs_graph_is_output(g, cs_graph_node(g, dq)->outputs[0]) &&
      cs_graph_consumers(g, cs_graph_node(g, dq)->outputs[0], &c, 1) == 0)
    cs_graph_remove_node(g, dq);
}

static cs_status legalize_conv(cs_graph *g, const cs_target *t, int id) {
  const cs_node *n = cs_graph_node(g, id);
  char why[200];
  const char *rule = common_rules(g, t, n, why, sizeof why);
  cs_window2d w;
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  int64_t groups = cs_node_attr_int(n, "group", 1);
  if (!rule && cs_window2d_from_node(g, n, &w) != CS_OK) { cs_error_clear(); rule = "not a 2-D window"; }
  if (!rule && (x->rank != 4 || y->rank != 4)) rule = "not a 2-D (NCHW) convolution";
  if (!rule && x->shape[0] != 1) { snprintf(why, sizeof why, "N != 1 (N=%lld)", (long long)x->shape[0]); rule = why; }
  if (!rule && w.stride_h != w.stride_w) {
    snprintf(why, sizeof why, "asymmetric stride (%d x %d)", w.stride_h, w.stride_w);
    rule = why;
  }
  if (!rule && (w.dil_h != 1 || w.dil_w != 1)) {
    snprintf(why, sizeof why, "dilation != 1 (%d x %d)", w.dil_h, w.dil_w);
    rule = why;
  }
  if (!rule && groups != 1) { snprintf(why, sizeof why, "groups != 1 (groups=%lld)", (long long)groups); rule = why; }
  if (!rule && y->shape[1] % 32 != 0) {
    snprintf(why, sizeof why, "C_out %% 32 != 0 (C_out=%lld): pad it to %lld with zero filters to offload",
             (long long)y->shape[1], cs_mm_round_up(y->shape[1], 32));
    rule = why;
  }
  if (!rule && ((x->shape[2] + w.pad_top + w.pad_bottom - w.k_h) / w.stride_h + 1 != y->shape[2] ||
                (x->shape[3] + w.pad_left + w.pad_right - w.k_w) / w.stride_w + 1 != y->shape[3]))
    rule = "output shape differs from MMALIB's floor geometry";
  int dq = -1;
  float *wf = NULL;
  if (!rule && !(wf = const_weight(g, n->inputs[1], &dq))) rule = "weight is not a compile-time constant";
  int bias = n->n_inputs > 2 ? n->inputs[2] : -1;
  if (!rule && bias >= 0 && (!cs_match_is_const(g, bias) || cs_graph_value(g, bias)->dtype != CS_DTYPE_F32))
    rule = "bias is not a float constant";
  if (rule) {
    cs_mmalib_report_add(g, CS_OFFLOAD_CONV2D, n->name, NULL, -1.0, "%s", rule);
    free(wf);
    return CS_OK;
  }
  int64_t c_out = y->shape[1], c_in = x->shape[1], h_in = x->shape[2], w_in = x->shape[3];
  int64_t per = c_in * w.k_h * w.k_w, hw_out = y->shape[2] * y->shape[3];
  int16_t *wq = malloc(sizeof *wq * (size_t)(c_out * per));
  float *step = malloc(sizeof *step * (size_t)c_out);
  double *l1 = malloc(sizeof *l1 * (size_t)c_out);
  uint8_t *ones = malloc((size_t)c_out), *shift = malloc((size_t)c_out);
  cs_status st = CS_OK;
  if (!wq || !step || !l1 || !ones || !shift) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto out; }
  quantize_weight(wf, c_out, per, per, 1, wq, step, l1);
  for (int64_t c = 0; c < c_out; c++) {
    int sh = overflow_free_shift(l1[c]);
    if (sh < 0) {
      cs_mmalib_report_add(g, CS_OFFLOAD_CONV2D, n->name, NULL, -1.0,
                           "weight L1 norm of channel %lld beyond 2^31 (int16 output shift > 31)", (long long)c);
      goto out;
    }
    shift[c] = (uint8_t)sh;
    ones[c] = 1;
    step[c] = (float)ldexp(step[c], sh);
  }
  legal_ctx c = {g, "", "", 0};
  snprintf(c.base, sizeof c.base, "%s", n->name ? n->name : "conv");
  snprintf(c.origin, sizeof c.origin, "%s", n->origin && *n->origin ? n->origin : c.base);
  int x_val = n->inputs[0], y_val = n->outputs[0];
  int64_t wshape[4] = {c_out, c_in, w.k_h, w.k_w}, cs[1] = {c_out}, yshape[CS_MAX_RANK];
  memcpy(yshape, y->shape, sizeof yshape);
  cs_graph_remove_node(g, id);
  drop_weight_dq(g, dq);
  int s = dynamic_scale(&c, x_val);
  int xq = quantize_dynamic(&c, x_val, s);
  int wv = c.failed ? -1 : checked(&c, cs_add_const_named(g, c.base, "weight_i16", CS_DTYPE_I16, 4, wshape, wq));
  int sc = c.failed ? -1 : checked(&c, cs_add_const_named(g, c.base, "mm_scale", CS_DTYPE_U8, 1, cs, ones));
  int sh = c.failed ? -1 : checked(&c, cs_add_const_named(g, c.base, "mm_shift", CS_DTYPE_U8, 1, cs, shift));
  int in[5] = {xq, wv, -1, sc, sh};
  int64_t args[12] = {c_in, h_in, w_in, c_out, w.k_h, w.k_w, w.stride_h, w.stride_w,
                      w.pad_top, w.pad_bottom, w.pad_left, w.pad_right};
  const int32_t geom[3] = {1, (int32_t)c_out, (int32_t)hw_out};
  int yf = i16_call(&c, CS_OP_K_MMALIB_CONV2D_I16, 5, in, 12, args, 4, yshape, s, step, geom, bias >= 0, y_val);
  if (bias >= 0 && !c.failed) {
    int64_t bshape[4] = {1, c_out, 1, 1};
    int b4 = checked(&c, cs_add_const_named(g, c.base, "bias_c11", CS_DTYPE_F32, 4, bshape, cs_graph_value(g, bias)->data));
    binary(&c, TIDSP_BINARY_ADD, yf, b4, y_val);
  }
  st = i16_done(&c, CS_OFFLOAD_CONV2D, cs_kernel_info_of(CS_OP_K_MMALIB_CONV2D_I16)->fn);
out:
  free(wf);
  free(wq);
  free(step);
  free(l1);
  free(ones);
  free(shift);
  return st;
}

static cs_status legalize_matmul(cs_graph *g, const cs_target *t, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int is_gemm = n->op == CS_OP_GEMM;
  char why[200];
  const char *rule = common_rules(g, t, n, why, sizeof why);
  const cs_value *a = cs_graph_value(g, n->inputs[0]), *b = cs_graph_value(g, n->inputs[1]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int trans_b = is_gemm ? (int)cs_node_attr_int(n, "transB", 0) : 0;
  if (!rule && is_gemm &&
      (cs_node_attr_int(n, "transA", 0) != 0 || cs_node_attr_float(n, "alpha", 1.0f) != 1.0f ||
       cs_node_attr_float(n, "beta", 1.0f) != 1.0f))
    rule = "Gemm with transA != 0 or alpha/beta != 1";
  if (!rule && (a->rank != 2 || b->rank != 2 || y->rank != 2)) rule = "not 2-D";
  int64_t m = a->shape[0], k = a->shape[1], nn = trans_b ? b->shape[0] : b->shape[1];
  if (!rule && (m % 32 || k % 32 || nn % 32)) {
    snprintf(why, sizeof why, "dims not multiples of 32 (M=%lld, K=%lld, N=%lld): pad them to %lld, %lld, %lld",
             (long long)m, (long long)k, (long long)nn, cs_mm_round_up(m, 32), cs_mm_round_up(k, 32),
             cs_mm_round_up(nn, 32));
    rule = why;
  }
  int dq = -1;
  float *wf = NULL;
  if (!rule && !(wf = const_weight(g, n->inputs[1], &dq))) rule = "weight (B) is not a compile-time constant";
  int bias = is_gemm && n->n_inputs > 2 ? n->inputs[2] : -1;
  if (!rule && bias >= 0 &&
      (!cs_match_is_const(g, bias) || cs_graph_value(g, bias)->dtype != CS_DTYPE_F32 ||
       cs_value_numel(cs_graph_value(g, bias)) != nn))
    rule = "Gemm bias is not a float constant of N elements";
  if (rule) {
    cs_mmalib_report_add(g, CS_OFFLOAD_MATMUL, n->name, NULL, -1.0, "%s", rule);
    free(wf);
    return CS_OK;
  }
  int16_t *wq = malloc(sizeof *wq * (size_t)(k * nn));
  float *step = malloc(sizeof *step * (size_t)nn);
  double *l1 = malloc(sizeof *l1 * (size_t)nn);
  float *wkn = malloc(sizeof *wkn * (size_t)(k * nn));
  cs_status st = CS_OK;
  if (!wq || !step || !l1 || !wkn) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto out; }
  /* B in the kernel's [K][N] layout; channel n is column n. */
  for (int64_t kk = 0; kk < k; kk++)
    for (int64_t j = 0; j < nn; j++) wkn[kk * nn + j] = trans_b ? wf[j * k + kk] : wf[kk * nn + j];
  quantize_weight(wkn, nn, k, 1, nn, wq, step, l1);
  double l1max = 0.0;
  for (int64_t j = 0; j < nn; j++)
    if (l1[j] > l1max) l1max = l1[j];
  int sh = overflow_free_shift(l1max);
  if (sh < 0) {
    cs_mmalib_report_add(g, CS_OFFLOAD_MATMUL, n->name, NULL, -1.0,
                         "weight L1 norm beyond 2^31 (int16 output shift > 31)");
    goto out;
  }
  for (int64_t j = 0; j < nn; j++) step[j] = (float)ldexp(step[j], sh);
  legal_ctx c = {g, "", "", 0};
  snprintf(c.base, sizeof c.base, "%s", n->name ? n->name : "matmul");
  snprintf(c.origin, sizeof c.origin, "%s", n->origin && *n->origin ? n->origin : c.base);
  int x_val = n->inputs[0], y_val = n->outputs[0];
  int64_t wshape[2] = {k, nn}, yshape[2] = {m, nn};
  cs_graph_remove_node(g, id);
  drop_weight_dq(g, dq);
  int s = dynamic_scale(&c, x_val);
  int xq = quantize_dynamic(&c, x_val, s);
  int wv = c.failed ? -1 : checked(&c, cs_add_const_named(g, c.base, "weight_i16", CS_DTYPE_I16, 2, wshape, wq));
  int in[2] = {xq, wv};
  int64_t args[4] = {m, k, nn, sh};
  const int32_t geom[3] = {(int32_t)m, (int32_t)nn, 1};
  int yf = i16_call(&c, CS_OP_K_MMALIB_MATMUL_I16, 2, in, 4, args, 2, yshape, s, step, geom, bias >= 0, y_val);
  if (bias >= 0) binary(&c, TIDSP_BINARY_ADD, yf, bias, y_val);
  st = i16_done(&c, CS_OFFLOAD_MATMUL, cs_kernel_info_of(CS_OP_K_MMALIB_MATMUL_I16)->fn);
out:
  free(wf);
  free(wq);
  free(step);
  free(l1);
  free(wkn);
  return st;
}

cs_status pass_legalize_mmalib_i16(cs_graph *g, const cs_target *t) {
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->n_inputs < 2 || n->n_outputs < 1) continue;
    if (n->op != CS_OP_CONV && n->op != CS_OP_MATMUL && n->op != CS_OP_GEMM) continue;
    if (is_quantized(g, n)) continue; /* a QDQ pass has reported it */
    cs_status st = n->op == CS_OP_CONV ? legalize_conv(g, t, i) : legalize_matmul(g, t, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
