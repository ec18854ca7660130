/*
 * LegalizeOps — every ONNX op left after the fusions becomes one reference
 * kernel call (the "DQ → float kernel → Q" path, and data movement on any
 * dtype). Each op's lowering is one small function below; an op with no
 * lowering is an internal error (the frontend refuses unknown ops).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/broadcast.h"
#include "match/geometry.h"
#include "pass_list.h"
#include "match/pattern.h"
#include "quant/quant.h"
#include "eval/unary_fns.h"

static cs_status unsupported(const cs_node *n, const char *why) {
  return cs_error(CS_ERR_UNSUPPORTED, "node '%s' (%s): %s", n->name, cs_op_name(n->op), why);
}

/* A kernel node keeps the name of the ONNX node it came from as its
 * origin (when it has none yet); 0 when out of memory. */
static int keep_origin(cs_node *n) {
  if (n->origin && *n->origin) return 1;
  char *o = strdup(n->name ? n->name : "");
  if (!o) return 0;
  free(n->origin);
  n->origin = o;
  return 1;
}

/* Retarget node `id` in place as kernel `op` with the given inputs. NULL
 * when out of memory. */
static cs_node *retarget(cs_graph *g, int id, cs_op op, int n_inputs, const int *inputs) {
  if (cs_node_set_inputs(g, id, n_inputs, inputs) != CS_OK) return NULL;
  cs_node *n = cs_graph_node(g, id);
  n->op = op;
  return keep_origin(n) ? n : NULL;
}

/* Node `id` becomes kernel `op` on the given inputs with params k: the
 * tail of every lowering that keeps its node. Only k's own member is read
 * later (the printer and the emitter go by the kernel's params struct). */
static cs_status retarget_with(cs_graph *g, int id, cs_op op, int n_inputs, const int *inputs, cs_kparams k) {
  cs_node *n = retarget(g, id, op, n_inputs, inputs);
  if (!n) return cs_error(CS_ERR_NOMEM, "out of memory");
  n->k = k;
  return CS_OK;
}

/* Node `id` becomes a k_copy of value v into its output (same bytes). */
static cs_status retarget_copy(cs_graph *g, int id, int v) {
  size_t bytes = cs_value_nbytes(cs_graph_value(g, cs_graph_node(g, id)->outputs[0]));
  return retarget_with(g, id, CS_OP_K_COPY, 1, &v, (cs_kparams){.copy_bytes = bytes});
}

static int64_t prod(const int64_t *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= s[i];
  return p;
}

/* ---- quantize / dequantize ------------------------------------------ */

static cs_status lower_qdq(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  cs_qparams qp;
  cs_status st = cs_qparams_read(g, n, &qp);
  if (st != CS_OK) return st;
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  tidsp_qdq_params p;
  memset(&p, 0, sizeof p);
  if (qp.axis < 0) {
    p.outer = (int32_t)cs_value_numel(x);
    p.channels = 1;
    p.inner = 1;
  } else {
    p.outer = (int32_t)prod(x->shape, 0, qp.axis);
    p.channels = (int32_t)x->shape[qp.axis];
    p.inner = (int32_t)prod(x->shape, qp.axis + 1, x->rank);
  }
  p.dtype = cs_dtype_to_tidsp(qp.dtype);
  if (!p.dtype || qp.dtype == CS_DTYPE_I64 || qp.dtype == CS_DTYPE_F32) {
    cs_qparams_free(&qp);
    return unsupported(n, "quantized dtype not supported");
  }
  char base[256];
  snprintf(base, sizeof base, "%s", n->name);
  int64_t shape[1] = {qp.count};
  int scale = cs_add_const_named(g, base, "scale", CS_DTYPE_F32, 1, shape, qp.scale);
  int zp = scale < 0 ? -1 : cs_add_const_named(g, base, "zero_point", CS_DTYPE_I32, 1, shape, qp.zps);
  cs_qparams_free(&qp);
  if (zp < 0) return CS_ERR_NOMEM; /* message recorded */
  n = cs_graph_node(g, id);
  int ins[3] = {scale, zp, n->inputs[0]};
  cs_op op = n->op == CS_OP_QUANTIZE_LINEAR ? CS_OP_K_QUANTIZE : CS_OP_K_DEQUANTIZE;
  return retarget_with(g, id, op, 3, ins, (cs_kparams){.qdq = p});
}

/* Node `id` (Conv or ConvTranspose: X, W and an optional bias) becomes
 * kernel op with params p, its "group" attribute filled in. */
static cs_status retarget_conv(cs_graph *g, int id, cs_op op, tidsp_conv2d_params *p) {
  cs_node *n = cs_graph_node(g, id);
  p->groups = (int32_t)cs_node_attr_int(n, "group", 1);
  int ins[3] = {n->inputs[0], n->inputs[1], n->n_inputs > 2 ? n->inputs[2] : -1};
  return retarget_with(g, id, op, 3, ins, (cs_kparams){.conv = *p});
}

/* ---- float compute ---------------------------------------------------- */

static int require_f32(cs_graph *g, const cs_node *n) {
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0 && cs_graph_value(g, n->inputs[i])->dtype != CS_DTYPE_F32) return 0;
  return cs_graph_value(g, n->outputs[0])->dtype == CS_DTYPE_F32;
}

static cs_status lower_conv(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!require_f32(g, n)) return unsupported(n, "a Conv on integers must be a complete QDQ pattern (DQ inputs, Q output)");
  cs_window2d w;
  cs_status st = cs_window2d_from_node(g, n, &w);
  if (st != CS_OK) return st;
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = (int32_t)x->shape[0]; p.c_in = (int32_t)x->shape[1];
  p.h_in = (int32_t)x->shape[2]; p.w_in = (int32_t)x->shape[3];
  p.c_out = (int32_t)y->shape[1]; p.h_out = (int32_t)y->shape[2]; p.w_out = (int32_t)y->shape[3];
  p.k_h = w.k_h; p.k_w = w.k_w; p.stride_h = w.stride_h; p.stride_w = w.stride_w;
  p.dil_h = w.dil_h; p.dil_w = w.dil_w; p.pad_top = w.pad_top; p.pad_left = w.pad_left;
  return retarget_conv(g, id, CS_OP_K_CONV2D_F32, &p);
}

/* ConvTranspose in float, 2-D (1-D as a 2-D of height 1; 3-D and up on
 * the N-D kernel); the frontend resolved its pads. */
static cs_status lower_conv_transpose(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!require_f32(g, n)) return unsupported(n, "a ConvTranspose on integers is not supported");
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  int nk = 0, ns = 0, nd = 0, np = 0;
  const int64_t *k = cs_node_attr_ints(n, "kernel_shape", &nk), *pads = cs_node_attr_ints(n, "pads", &np);
  const int64_t *s = cs_node_attr_ints(n, "strides", &ns), *d = cs_node_attr_ints(n, "dilations", &nd);
  int sp = x->rank - 2, o = 2 - sp; /* spatial axes; o = 1: 1-D, axis 0 of the 2-D is a unit one */
  if (sp < 1 || sp > TIDSP_MAX_RANK - 2 || !k || nk != sp || !pads || np != 2 * sp || (s && ns != sp) ||
      (d && nd != sp))
    return unsupported(n, "the window needs one kernel_shape, stride and dilation per spatial dim and two pads");
  if (sp > 2) { /* 3-D and up: the N-D kernel */
    tidsp_conv_transpose_nd_params q;
    memset(&q, 0, sizeof q);
    q.n = (int32_t)x->shape[0]; q.c_in = (int32_t)x->shape[1]; q.c_out = (int32_t)y->shape[1];
    q.groups = (int32_t)cs_node_attr_int(n, "group", 1);
    q.dims = sp;
    for (int i = 0; i < sp; i++) {
      q.in[i] = (int32_t)x->shape[2 + i];
      q.out[i] = (int32_t)y->shape[2 + i];
      q.k[i] = (int32_t)k[i];
      q.stride[i] = s ? (int32_t)s[i] : 1;
      q.dil[i] = d ? (int32_t)d[i] : 1;
      q.pad_begin[i] = (int32_t)pads[i];
    }
    int ins[3] = {n->inputs[0], n->inputs[1], n->n_inputs > 2 ? n->inputs[2] : -1};
    return retarget_with(g, id, CS_OP_K_CONV_TRANSPOSE_ND_F32, 3, ins, (cs_kparams){.conv_transpose_nd = q});
  }
  int32_t hw_in[2] = {1, 1}, hw_out[2] = {1, 1}, kk[2] = {1, 1}, st[2] = {1, 1}, dl[2] = {1, 1}, pb[2] = {0, 0};
  for (int i = 0; i < sp; i++) {
    hw_in[o + i] = (int32_t)x->shape[2 + i];
    hw_out[o + i] = (int32_t)y->shape[2 + i];
    kk[o + i] = (int32_t)k[i];
    st[o + i] = s ? (int32_t)s[i] : 1;
    dl[o + i] = d ? (int32_t)d[i] : 1;
    pb[o + i] = (int32_t)pads[i];
  }
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = (int32_t)x->shape[0]; p.c_in = (int32_t)x->shape[1]; p.c_out = (int32_t)y->shape[1];
  p.h_in = hw_in[0]; p.w_in = hw_in[1]; p.h_out = hw_out[0]; p.w_out = hw_out[1];
  p.k_h = kk[0]; p.k_w = kk[1]; p.stride_h = st[0]; p.stride_w = st[1];
  p.dil_h = dl[0]; p.dil_w = dl[1]; p.pad_top = pb[0]; p.pad_left = pb[1];
  return retarget_conv(g, id, CS_OP_K_CONV_TRANSPOSE2D_F32, &p);
}

/* A new value holding transpose(v) as [cols][rows] of a 2-D value; -1
 * when out of memory (message recorded). */
static int transpose_2d(cs_graph *g, int v, const char *origin) {
  const cs_value *src = cs_graph_value(g, v);
  int64_t shape[2] = {src->shape[1], src->shape[0]};
  char name[512];
  snprintf(name, sizeof name, "%s.T", src->name ? src->name : "t");
  int out = cs_graph_add_value(g, name, src->dtype, 2, shape);
  int k = out < 0 ? -1 : cs_add_kernel(g, CS_OP_K_TRANSPOSE, origin, 1, &v, out);
  if (k < 0) return -1;
  cs_node *n = cs_graph_node(g, k);
  memset(&n->k.transpose, 0, sizeof n->k.transpose);
  n->k.transpose.rank = 2;
  n->k.transpose.in_shape[0] = (int32_t)shape[1];
  n->k.transpose.in_shape[1] = (int32_t)shape[0];
  n->k.transpose.perm[0] = 1;
  n->k.transpose.perm[1] = 0;
  n->k.transpose.elem_size = (int32_t)cs_dtype_size(cs_graph_value(g, v)->dtype);
  return out;
}

/* A new value "origin.suffix" of dtype and of a's and b's numpy-broadcast
 * shape (a dimension of 1 takes the other's; whether the shapes broadcast
 * at all is the kernel parameters' check). */
static int add_broadcast_value(cs_graph *g, const char *origin, const char *suffix, cs_dtype dtype, int a, int b) {
  const cs_value *av = cs_graph_value(g, a), *bv = cs_graph_value(g, b);
  const cs_value *big = av->rank >= bv->rank ? av : bv;
  int64_t shape[CS_MAX_RANK];
  for (int d = 0; d < big->rank; d++) {
    int da = d - (big->rank - av->rank), db = d - (big->rank - bv->rank);
    int64_t x = da >= 0 ? av->shape[da] : 1, y = db >= 0 ? bv->shape[db] : 1;
    shape[d] = x == 1 ? y : x;
  }
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  return cs_graph_add_value(g, name, dtype, big->rank, shape);
}

/* A float binary kernel node y = a op b (numpy broadcast); y is new unless
 * out >= 0 (which then takes over that value). */
static int add_binary(cs_graph *g, const char *origin, tidsp_binary_op op, int a, int b, int out) {
  if (out < 0)
    out = add_broadcast_value(g, origin, op == TIDSP_BINARY_MUL ? "mul" : op == TIDSP_BINARY_SUB ? "sub" : "add",
                              CS_DTYPE_F32, a, b);
  int ins[2] = {a, b};
  int k = cs_add_kernel(g, CS_OP_K_BINARY_F32, origin, 2, ins, out);
  cs_node *n = cs_graph_node(g, k);
  memset(&n->k.binary, 0, sizeof n->k.binary);
  n->k.binary.op = op;
  cs_broadcast_init(cs_graph_value(g, a), cs_graph_value(g, b), cs_graph_value(g, out), &n->k.binary.bc);
  return out;
}

/* A float scalar constant. */
static int scalar_const(cs_graph *g, const char *base, const char *suffix, float v) {
  return cs_add_const_named(g, base, suffix, CS_DTYPE_F32, 0, NULL, &v);
}

/* Gemm: Y = alpha·A'·B' + beta·C, as ONNX Runtime computes it: C
 * broadcast and scaled first (fl(beta·c), a copy when beta = 1), then
 * MLAS's fl(fl(alpha·acc) + that). A bias of N elements with alpha = beta
 * = 1 is the matmul kernel's own bias; otherwise the product is followed by
 * a Mul by alpha and an Add of beta·C (folded at compile time when C is a
 * constant). */
static cs_status lower_gemm(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!require_f32(g, n)) return unsupported(n, "a Gemm on integers must be a complete QDQ pattern");
  float alpha = cs_node_attr_float(n, "alpha", 1.0f), beta = cs_node_attr_float(n, "beta", 1.0f);
  int a = n->inputs[0], b = n->inputs[1];
  int c = n->n_inputs > 2 ? n->inputs[2] : -1;
  if (beta == 0.0f) c = -1;
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->name);
  if (cs_node_attr_int(n, "transA", 0) && (a = transpose_2d(g, a, origin)) < 0) return CS_ERR_NOMEM;
  if (cs_node_attr_int(cs_graph_node(g, id), "transB", 0) && (b = transpose_2d(g, b, origin)) < 0)
    return CS_ERR_NOMEM;
  const cs_value *av = cs_graph_value(g, a), *bv = cs_graph_value(g, b);
  int32_t M = (int32_t)av->shape[0], K = (int32_t)av->shape[1], N = (int32_t)bv->shape[1];
  int y = cs_graph_node(g, id)->outputs[0];
  int kernel_bias = -1;
  if (c >= 0 && alpha == 1.0f && beta == 1.0f && cs_value_numel(cs_graph_value(g, c)) == N &&
      cs_graph_value(g, c)->shape[cs_graph_value(g, c)->rank - 1] == N)
    kernel_bias = c, c = -1;
  int post = alpha != 1.0f || c >= 0;
  int mm_out = y;
  if (post) {
    char name[600];
    snprintf(name, sizeof name, "%s.acc", origin);
    int64_t shape[2] = {M, N};
    mm_out = cs_graph_add_value(g, name, CS_DTYPE_F32, 2, shape);
  }
  int ins[3] = {a, b, kernel_bias};
  tidsp_matmul_f32_params mp = {.batch = 1, .m = M, .k = K, .n = N};
  cs_status st = retarget_with(g, id, CS_OP_K_MATMUL_F32, 3, ins, (cs_kparams){.matmul_f32 = mp});
  if (st != CS_OK || !post) return st;
  n = cs_graph_node(g, id);
  n->outputs[0] = mm_out;
  cs_graph_value(g, mm_out)->producer = id;
  cs_graph_value(g, y)->producer = -1;
  int v = mm_out;
  if (alpha != 1.0f)
    v = add_binary(g, origin, TIDSP_BINARY_MUL, v, scalar_const(g, origin, "alpha", alpha), c >= 0 ? -1 : y);
  if (c >= 0) {
    const cs_value *cv = cs_graph_value(g, c);
    int bc = c;
    if (beta != 1.0f && cv->data) {
      int64_t cnt = cs_value_numel(cv);
      float *d = malloc(sizeof(float) * (size_t)(cnt ? cnt : 1));
      if (!d) return cs_error(CS_ERR_NOMEM, "out of memory");
      for (int64_t i = 0; i < cnt; i++) d[i] = beta * ((const float *)cv->data)[i];
      int64_t shape[CS_MAX_RANK];
      memcpy(shape, cv->shape, sizeof shape);
      bc = cs_add_const_named(g, origin, "beta_c", CS_DTYPE_F32, cv->rank, shape, d);
      free(d);
    } else if (beta != 1.0f) {
      bc = add_binary(g, origin, TIDSP_BINARY_MUL, c, scalar_const(g, origin, "beta", beta), -1);
    }
    add_binary(g, origin, TIDSP_BINARY_ADD, v, bc, y);
  }
  return CS_OK;
}

/* A float unary kernel node on value a; returns the new value. */
static int add_unary(cs_graph *g, const char *origin, tidsp_unary_op op, int a, const char *suffix) {
  const cs_value *av = cs_graph_value(g, a);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, av->shape, sizeof shape);
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  int out = cs_graph_add_value(g, name, CS_DTYPE_F32, av->rank, shape);
  int k = cs_add_kernel(g, CS_OP_K_UNARY_F32, origin, 1, &a, out);
  cs_node *n = cs_graph_node(g, k);
  memset(&n->k.unary, 0, sizeof n->k.unary);
  n->k.unary.op = op;
  n->k.unary.n = (int32_t)cs_value_numel(cs_graph_value(g, a));
  return out;
}

/* The same bytes as value a with shape [C, 1, …] (rank `rank`): a copy. */
static int as_channel_column(cs_graph *g, const char *origin, int a, int rank, const char *suffix) {
  int64_t shape[CS_MAX_RANK];
  shape[0] = cs_value_numel(cs_graph_value(g, a));
  for (int d = 1; d < rank; d++) shape[d] = 1;
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  int out = cs_graph_add_value(g, name, CS_DTYPE_F32, rank, shape);
  int k = cs_add_kernel(g, CS_OP_K_COPY, origin, 1, &a, out);
  cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, out));
  return out;
}

/* BatchNormalization (inference) not folded into a convolution, as ONNX
 * Runtime's BatchNorm kernel computes it: per channel
 *   s = fl(fl(1 / fl(sqrt(fl(var + eps)))) · scale),  b = fl(B − fl(mean · s))
 * then y = fl(fl(x · s) + b). The per-channel part is kernel calls on the
 * parameters too: FoldConstant computes s and b at compile time with the
 * same kernels (the parameters may be DQ(int8) in a QDQ model, not yet
 * constants here), so the only calls left are a Mul and an Add. */
static cs_status lower_batch_norm(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  for (int j = 1; j < n->n_outputs; j++) {
    int c;
    if (n->outputs[j] >= 0 &&
        (cs_graph_consumers(g, n->outputs[j], &c, 1) > 0 || cs_graph_is_output(g, n->outputs[j])))
      return unsupported(n, "a training output (running or saved mean/variance) is used; only Y is supported");
  }
  if (!require_f32(g, n))
    return unsupported(n, "BatchNormalization on integers must sit between DequantizeLinear and QuantizeLinear");
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->name);
  int xin = n->inputs[0], scale = n->inputs[1], bias = n->inputs[2], mean = n->inputs[3], var = n->inputs[4];
  int y = n->outputs[0], rank = cs_graph_value(g, xin)->rank;
  float eps = cs_node_attr_float(n, "epsilon", 1e-5f);
  cs_graph_remove_node(g, id);
  int ve = add_binary(g, origin, TIDSP_BINARY_ADD, var, scalar_const(g, origin, "epsilon", eps), -1);
  int inv_std = add_unary(g, origin, TIDSP_UNARY_RECIPROCAL, add_unary(g, origin, TIDSP_UNARY_SQRT, ve, "std"),
                          "inv_std");
  int s = add_binary(g, origin, TIDSP_BINARY_MUL, inv_std, scale, -1);
  int b = add_binary(g, origin, TIDSP_BINARY_SUB, bias, add_binary(g, origin, TIDSP_BINARY_MUL, mean, s, -1), -1);
  int t = add_binary(g, origin, TIDSP_BINARY_MUL, xin, as_channel_column(g, origin, s, rank - 1, "scale"), -1);
  add_binary(g, origin, TIDSP_BINARY_ADD, t, as_channel_column(g, origin, b, rank - 1, "shift"), y);
  return CS_OK;
}

static cs_status lower_matmul(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!require_f32(g, n)) return unsupported(n, "a MatMul on integers must be a complete QDQ pattern");
  const cs_value *a = cs_graph_value(g, n->inputs[0]), *b = cs_graph_value(g, n->inputs[1]);
  if (a->rank < 2 || b->rank < 2) return unsupported(n, "MatMul with a 1-D operand");
  int32_t M = (int32_t)a->shape[a->rank - 2], K = (int32_t)a->shape[a->rank - 1];
  int32_t N = (int32_t)b->shape[b->rank - 1];
  int64_t a_batch = prod(a->shape, 0, a->rank - 2), b_batch = prod(b->shape, 0, b->rank - 2);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int64_t batch = prod(y->shape, 0, y->rank - 2);
  if ((a_batch != batch && a_batch != 1) || (b_batch != batch && b_batch != 1))
    return unsupported(n, "MatMul batch broadcasting other than all-or-one");
  tidsp_matmul_f32_params p;
  memset(&p, 0, sizeof p);
  p.batch = (int32_t)batch;
  p.m = M; p.k = K; p.n = N;
  p.a_batch_stride = a_batch == 1 ? 0 : M * K;
  p.b_batch_stride = b_batch == 1 ? 0 : K * N;
  int ins[3] = {n->inputs[0], n->inputs[1], -1};
  return retarget_with(g, id, CS_OP_K_MATMUL_F32, 3, ins, (cs_kparams){.matmul_f32 = p});
}

/* ---- elementwise on any dtype (k_binary) ----------------------------- */

/* The k_binary op of an ONNX op, or -1. */
static int binary_any_op(cs_op op) {
  switch (op) {
    case CS_OP_ADD: return TIDSP_BINARY_ADD;
    case CS_OP_SUB: return TIDSP_BINARY_SUB;
    case CS_OP_MUL: return TIDSP_BINARY_MUL;
    case CS_OP_DIV: return TIDSP_BINARY_DIV;
    case CS_OP_POW: return TIDSP_BINARY_POW;
    case CS_OP_MAX: return TIDSP_BINARY_MAX;
    case CS_OP_MIN: return TIDSP_BINARY_MIN;
    case CS_OP_EQUAL: return TIDSP_BINARY_EQUAL;
    case CS_OP_LESS: return TIDSP_BINARY_LESS;
    case CS_OP_LESS_OR_EQUAL: return TIDSP_BINARY_LESS_OR_EQUAL;
    case CS_OP_GREATER: return TIDSP_BINARY_GREATER;
    case CS_OP_GREATER_OR_EQUAL: return TIDSP_BINARY_GREATER_OR_EQUAL;
    case CS_OP_AND: return TIDSP_BINARY_AND;
    case CS_OP_OR: return TIDSP_BINARY_OR;
    case CS_OP_XOR: return TIDSP_BINARY_XOR;
    default: return -1;
  }
}

/* The params of y = a op b on k_binary; 0 when the shapes do not
 * broadcast or a dtype has no tidsp code. */
static int binary_any_params(cs_graph *g, int op, int a, int b, int y, tidsp_binary_params *p) {
  const cs_value *av = cs_graph_value(g, a), *bv = cs_graph_value(g, b), *yv = cs_graph_value(g, y);
  memset(p, 0, sizeof *p);
  p->op = op;
  p->a_dtype = cs_dtype_to_tidsp(av->dtype);
  p->b_dtype = cs_dtype_to_tidsp(bv->dtype);
  p->y_dtype = cs_dtype_to_tidsp(yv->dtype);
  return p->a_dtype && p->b_dtype && p->y_dtype && cs_broadcast_init(av, bv, yv, &p->bc);
}

/* A new k_binary node y = a op b whose output is a new value of a's dtype
 * and the broadcast shape (Max/Min chains, integer Clip/Relu); -1 when the
 * shapes do not broadcast or memory runs out. */
static int add_binary_any(cs_graph *g, const char *origin, int op, int a, int b, const char *suffix) {
  int out = add_broadcast_value(g, origin, suffix, cs_graph_value(g, a)->dtype, a, b);
  tidsp_binary_params p;
  if (out < 0 || !binary_any_params(g, op, a, b, out, &p)) return -1;
  int ins[2] = {a, b};
  int k = cs_add_kernel(g, CS_OP_K_BINARY, origin, 2, ins, out);
  if (k < 0) return -1;
  cs_graph_node(g, k)->k.binary_any = p;
  return out;
}

/* Node `id` becomes y = a op b on k_binary. */
static cs_status retarget_binary_any(cs_graph *g, int id, int op, int a, int b) {
  cs_node *n = cs_graph_node(g, id);
  tidsp_binary_params p;
  if (!binary_any_params(g, op, a, b, n->outputs[0], &p))
    return unsupported(n, "operand shapes do not broadcast, or a dtype has no kernel");
  int ins[2] = {a, b};
  return retarget_with(g, id, CS_OP_K_BINARY, 2, ins, (cs_kparams){.binary_any = p});
}

/* Max/Min of any number of inputs: a chain of k_binary calls, numpy
 * broadcasting at each step (one input: a copy). */
static cs_status lower_variadic(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (n->n_inputs == 1) return retarget_copy(g, id, n->inputs[0]);
  int op = binary_any_op(n->op), acc = n->inputs[0], last = n->inputs[n->n_inputs - 1];
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->origin && *n->origin ? n->origin : n->name);
  for (int j = 1; j + 1 < n->n_inputs; j++) {
    acc = add_binary_any(g, origin, op, acc, cs_graph_node(g, id)->inputs[j], op == TIDSP_BINARY_MAX ? "max" : "min");
    if (acc < 0) return unsupported(cs_graph_node(g, id), "operand shapes do not broadcast");
  }
  return retarget_binary_any(g, id, op, acc, last);
}

/* Not x = x Xor true. */
static cs_status lower_not(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  uint8_t one = 1;
  int t = cs_add_const_named(g, n->origin && *n->origin ? n->origin : n->name, "true", CS_DTYPE_BOOL, 0, NULL, &one);
  if (t < 0) return CS_ERR_NOMEM;
  return retarget_binary_any(g, id, TIDSP_BINARY_XOR, cs_graph_node(g, id)->inputs[0], t);
}

/* Clip and Relu on integers (outside a QDQ pattern, where ONNX defines
 * them): Relu = Max(x, 0), Clip = Min(Max(x, lo), hi) with the bounds that
 * are given (none: a copy). */
static cs_status lower_int_clip(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->origin && *n->origin ? n->origin : n->name);
  int lo = -1, hi = -1;
  if (n->op == CS_OP_RELU) {
    int64_t zero = 0; /* little-endian zero of any width */
    lo = cs_add_const_named(g, origin, "zero", x->dtype, 0, NULL, &zero);
    if (lo < 0) return CS_ERR_NOMEM;
  } else {
    lo = n->n_inputs > 1 ? n->inputs[1] : -1;
    hi = n->n_inputs > 2 ? n->inputs[2] : -1;
  }
  n = cs_graph_node(g, id);
  int v = n->inputs[0];
  if (lo < 0 && hi < 0) return retarget_copy(g, id, v);
  if (lo >= 0 && hi >= 0) {
    v = add_binary_any(g, origin, TIDSP_BINARY_MAX, v, lo, "max");
    if (v < 0) return unsupported(cs_graph_node(g, id), "the bounds do not broadcast to the input");
    return retarget_binary_any(g, id, TIDSP_BINARY_MIN, v, hi);
  }
  return retarget_binary_any(g, id, lo >= 0 ? TIDSP_BINARY_MAX : TIDSP_BINARY_MIN, v, lo >= 0 ? lo : hi);
}

/* Tile on any dtype as an Expand: x viewed with a broadcast axis before
 * each tiled one, [r0, d0, r1, d1, …] in y's order ([r0·d0, r1·d1, …]);
 * unit axes drop and contiguous ones merge. Returns 0 when that needs more
 * than TIDSP_MAX_RANK axes. */
static int tile_params(const int64_t *shape, const int64_t *rep, int rank, size_t elem,
                       tidsp_expand_params *p) {
  int64_t size[2 * CS_MAX_RANK], stride[2 * CS_MAX_RANK], s = 1, xs[CS_MAX_RANK];
  int r = 0;
  for (int d = rank - 1; d >= 0; d--) xs[d] = s, s *= shape[d];
  for (int d = 0; d < rank; d++) {
    if (rep[d] > 1) size[r] = rep[d], stride[r++] = 0;
    if (shape[d] > 1) size[r] = shape[d], stride[r++] = xs[d];
  }
  int m = 0; /* merge (n1, s1)(n2, s2) when s1 = n2·s2 (both 0: a repeat of a repeat) */
  for (int i = 0; i < r; i++) {
    if (m > 0 && stride[m - 1] == size[i] * stride[i]) {
      size[m - 1] *= size[i];
      stride[m - 1] = stride[i];
    } else {
      size[m] = size[i], stride[m++] = stride[i];
    }
  }
  if (m == 0) size[m] = 1, stride[m++] = 0;
  if (m > TIDSP_MAX_RANK) return 0;
  memset(p, 0, sizeof *p);
  p->rank = m;
  for (int i = 0; i < m; i++) p->shape[i] = (int32_t)size[i], p->in_stride[i] = (int32_t)stride[i];
  p->elem_size = (int32_t)elem;
  return 1;
}

/* Tile: one Expand, or two (the trailing axes first) when one would need
 * more axes than the kernel has. */
static cs_status lower_tile(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  int rank = x->rank, src = n->inputs[0];
  size_t elem = cs_dtype_size(y->dtype);
  int64_t rep[CS_MAX_RANK], shape[CS_MAX_RANK];
  for (int d = 0; d < rank; d++) rep[d] = x->shape[d] ? y->shape[d] / x->shape[d] : 1, shape[d] = x->shape[d];
  tidsp_expand_params p;
  if (!tile_params(shape, rep, rank, elem, &p)) {
    int k = rank - 1;
    for (; k > 0; k--) {
      int64_t hi[CS_MAX_RANK], lo[CS_MAX_RANK], mid[CS_MAX_RANK];
      tidsp_expand_params ph;
      for (int d = 0; d < rank; d++) {
        hi[d] = d >= k ? rep[d] : 1, lo[d] = d < k ? rep[d] : 1;
        mid[d] = shape[d] * hi[d];
      }
      if (!tile_params(shape, hi, rank, elem, &ph) || !tile_params(mid, lo, rank, elem, &p)) continue;
      char name[600];
      snprintf(name, sizeof name, "%s.tile_inner", n->origin && *n->origin ? n->origin : n->name);
      int v = cs_graph_add_value(g, name, y->dtype, rank, mid);
      int ins[1] = {src};
      int kid = v < 0 ? -1 : cs_add_kernel(g, CS_OP_K_EXPAND, name, 1, ins, v);
      if (kid < 0) return CS_ERR_NOMEM;
      cs_graph_node(g, kid)->k.expand = ph;
      src = v;
      break;
    }
    if (k == 0) return unsupported(cs_graph_node(g, id), "the tiling needs more axes than the kernel has");
  }
  int ins[1] = {src};
  return retarget_with(g, id, CS_OP_K_EXPAND, 1, ins, (cs_kparams){.expand = p});
}

static cs_status lower_binary(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!require_f32(g, n) || cs_graph_value(g, n->inputs[1])->dtype != CS_DTYPE_F32)
    return retarget_binary_any(g, id, binary_any_op(n->op), n->inputs[0], n->inputs[1]);
  tidsp_binary_f32_params p;
  memset(&p, 0, sizeof p);
  if (!cs_broadcast_init(cs_graph_value(g, n->inputs[0]), cs_graph_value(g, n->inputs[1]),
                         cs_graph_value(g, n->outputs[0]), &p.bc))
    return unsupported(n, "operand shapes do not broadcast");
  switch (n->op) {
    case CS_OP_ADD: p.op = TIDSP_BINARY_ADD; break;
    case CS_OP_SUB: p.op = TIDSP_BINARY_SUB; break;
    case CS_OP_MUL: p.op = TIDSP_BINARY_MUL; break;
    case CS_OP_DIV: p.op = TIDSP_BINARY_DIV; break;
    default: p.op = TIDSP_BINARY_POW; break;
  }
  int ins[2] = {n->inputs[0], n->inputs[1]};
  return retarget_with(g, id, CS_OP_K_BINARY_F32, 2, ins, (cs_kparams){.binary = p});
}

/* A unary float op (cstatic/unary_ops.def) as one k_unary_f32 call. */
static cs_status lower_unary(cs_graph *g, int id, cs_unary_match m, tidsp_unary_f32_params p) {
  cs_node *n = cs_graph_node(g, id);
  if (cs_graph_value(g, n->inputs[0])->dtype != CS_DTYPE_F32)
    return unsupported(n, "an activation on integers must sit between DequantizeLinear and QuantizeLinear");
  if (m == CS_UNARY_NONCONST) return unsupported(n, "Clip min/max must be scalar float constants");
  if (m == CS_UNARY_EMPTY) return unsupported(n, "Clip min is above max");
  p.n = (int32_t)cs_value_numel(cs_graph_value(g, n->inputs[0]));
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_UNARY_F32, 1, ins, (cs_kparams){.unary = p});
}

/* PRelu in float: its slope broadcast to x (the frontend checked it). */
static cs_status lower_prelu(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!require_f32(g, n)) return unsupported(n, "a PRelu on integers must sit between DequantizeLinear and QuantizeLinear");
  tidsp_broadcast bc;
  memset(&bc, 0, sizeof bc);
  if (!cs_broadcast_init(cs_graph_value(g, n->inputs[0]), cs_graph_value(g, n->inputs[1]),
                         cs_graph_value(g, n->outputs[0]), &bc))
    return unsupported(n, "the slope does not broadcast to the input");
  int ins[2] = {n->inputs[0], n->inputs[1]};
  return retarget_with(g, id, CS_OP_K_PRELU_F32, 2, ins, (cs_kparams){.broadcast = bc});
}

/* k_pool_nd for node n (x → value out): the window from the attributes
 * the frontend made explicit (kernel_shape, strides, dilations, pads). */
static cs_status pool_nd_params(cs_graph *g, const cs_node *n, int out, tidsp_pool_op op, tidsp_pool_nd_params *p) {
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, out);
  int ns = x->rank - 2, nk = 0, nst = 0, nd = 0, np = 0;
  const int64_t *k = cs_node_attr_ints(n, "kernel_shape", &nk), *s = cs_node_attr_ints(n, "strides", &nst);
  const int64_t *d = cs_node_attr_ints(n, "dilations", &nd), *pads = cs_node_attr_ints(n, "pads", &np);
  if (ns < 1 || ns > TIDSP_MAX_RANK - 2 || !k || nk != ns || (s && nst != ns) || (d && nd != ns) ||
      (pads && np != 2 * ns))
    return unsupported(n, "the window needs one kernel_shape, stride and dilation per spatial dim and two pads");
  memset(p, 0, sizeof *p);
  p->planes = (int32_t)(x->shape[0] * x->shape[1]);
  p->dims = ns;
  for (int i = 0; i < ns; i++) {
    p->in[i] = (int32_t)x->shape[2 + i];
    p->out[i] = (int32_t)y->shape[2 + i];
    p->k[i] = (int32_t)k[i];
    p->stride[i] = s ? (int32_t)s[i] : 1;
    p->dil[i] = d ? (int32_t)d[i] : 1;
    p->pad_begin[i] = pads ? (int32_t)pads[i] : 0;
    p->pad_end[i] = pads ? (int32_t)pads[ns + i] : 0;
  }
  p->op = op;
  p->dtype = cs_dtype_to_tidsp(x->dtype);
  p->count_include_pad = (int32_t)cs_node_attr_int(n, "count_include_pad", 0);
  p->storage_order = (int32_t)cs_node_attr_int(n, "storage_order", 0);
  return CS_OK;
}

/* MaxPool's Indices output, where something reads it: a k_pool_nd
 * ARGMAX node of its own beside the values' kernel (both read x). */
static cs_status lower_pool_indices(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int iv = n->n_outputs > 1 ? n->outputs[1] : -1, c;
  if (iv < 0) return CS_OK;
  if (cs_graph_consumers(g, iv, &c, 1) == 0 && !cs_graph_is_output(g, iv)) {
    cs_graph_value(g, iv)->producer = -1; /* unread: dropped */
    return CS_OK;
  }
  tidsp_pool_nd_params p;
  cs_status st = pool_nd_params(g, n, iv, TIDSP_POOL_ARGMAX, &p);
  if (st != CS_OK) return st;
  char name[512];
  snprintf(name, sizeof name, "%s.indices", n->name);
  int ins[1] = {n->inputs[0]};
  int k = cs_graph_add_node(g, CS_OP_K_POOL_ND, name, n->origin && *n->origin ? n->origin : n->name, 1, ins, 1, &iv);
  if (k < 0) return cs_error(CS_ERR_NOMEM, "out of memory");
  cs_graph_node(g, k)->k.pool_nd = p;
  return CS_OK;
}

static cs_status lower_pool(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  cs_dtype dt = cs_graph_value(g, n->inputs[0])->dtype;
  if (n->op == CS_OP_MAX_POOL) {
    cs_status st = lower_pool_indices(g, id);
    if (st != CS_OK) return st;
    n = cs_graph_node(g, id);
  }
  if (n->op != CS_OP_GLOBAL_AVERAGE_POOL &&
      (cs_graph_value(g, n->inputs[0])->rank > 4 || (n->op == CS_OP_MAX_POOL && dt == CS_DTYPE_U8))) {
    /* 3-D windows, MaxPool on uint8: the N-D kernel */
    if (n->op == CS_OP_AVERAGE_POOL && dt != CS_DTYPE_F32)
      return unsupported(n, "AveragePool on integers must be a QDQ pattern");
    tidsp_pool_nd_params p;
    cs_status st = pool_nd_params(g, n, n->outputs[0], n->op == CS_OP_MAX_POOL ? TIDSP_POOL_MAX : TIDSP_POOL_AVG, &p);
    if (st != CS_OK) return st;
    int ins[1] = {n->inputs[0]};
    n->n_outputs = 1;
    return retarget_with(g, id, CS_OP_K_POOL_ND, 1, ins, (cs_kparams){.pool_nd = p});
  }
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  if (n->op == CS_OP_GLOBAL_AVERAGE_POOL) {
    if (dt != CS_DTYPE_F32) return unsupported(n, "GlobalAveragePool on integers must be a QDQ pattern");
    if (x->rank < 3) return unsupported(n, "GlobalAveragePool needs a rank >= 3 input");
    tidsp_gap_f32_params p = {(int32_t)(x->shape[0] * x->shape[1]), (int32_t)prod(x->shape, 2, x->rank)};
    int ins[1] = {n->inputs[0]};
    return retarget_with(g, id, CS_OP_K_GAP_F32, 1, ins, (cs_kparams){.gap_f32 = p});
  }
  tidsp_pool2d_params p;
  memset(&p, 0, sizeof p);
  p.n = (int32_t)x->shape[0]; p.c = (int32_t)x->shape[1];
  if (x->rank == 3) { /* 1-D: a 2-D window of height 1 (the frontend resolved the pads) */
    int nk = 0, ns = 0, nd = 0, np = 0;
    const int64_t *k = cs_node_attr_ints(n, "kernel_shape", &nk), *s = cs_node_attr_ints(n, "strides", &ns);
    const int64_t *d = cs_node_attr_ints(n, "dilations", &nd), *pads = cs_node_attr_ints(n, "pads", &np);
    if (!k || nk != 1 || (s && ns != 1) || (d && nd != 1) || (pads && np != 2))
      return unsupported(n, "a 1-D window needs one kernel_shape, stride and dilation and two pads");
    p.h_in = p.h_out = p.k_h = p.stride_h = p.dil_h = 1;
    p.w_in = (int32_t)x->shape[2]; p.w_out = (int32_t)y->shape[2];
    p.k_w = (int32_t)k[0]; p.stride_w = s ? (int32_t)s[0] : 1; p.dil_w = d ? (int32_t)d[0] : 1;
    p.pad_left = pads ? (int32_t)pads[0] : 0; p.pad_right = pads ? (int32_t)pads[1] : 0;
  } else {
    cs_window2d w;
    cs_status st = cs_window2d_from_node(g, n, &w);
    if (st != CS_OK) return st;
    p.h_in = (int32_t)x->shape[2]; p.w_in = (int32_t)x->shape[3];
    p.h_out = (int32_t)y->shape[2]; p.w_out = (int32_t)y->shape[3];
    p.k_h = w.k_h; p.k_w = w.k_w; p.stride_h = w.stride_h; p.stride_w = w.stride_w;
    p.dil_h = w.dil_h; p.dil_w = w.dil_w;
    p.pad_top = w.pad_top; p.pad_left = w.pad_left; p.pad_bottom = w.pad_bottom; p.pad_right = w.pad_right;
  }
  p.count_include_pad = (int32_t)cs_node_attr_int(n, "count_include_pad", 0);
  cs_op op;
  if (n->op == CS_OP_MAX_POOL) {
    if (dt == CS_DTYPE_I8) op = CS_OP_K_MAXPOOL_I8;
    else if (dt == CS_DTYPE_F32) op = CS_OP_K_MAXPOOL_F32;
    else return unsupported(n, "MaxPool supports float32 and int8");
  } else {
    if (dt != CS_DTYPE_F32) return unsupported(n, "AveragePool on integers must be a QDQ pattern");
    op = CS_OP_K_AVGPOOL_F32;
  }
  int ins[1] = {n->inputs[0]};
  n->n_outputs = 1; /* Indices, if read, has its own node (lower_pool_indices) */
  return retarget_with(g, id, op, 1, ins, (cs_kparams){.pool = p});
}

/* Is a fused int8 convolution among the producers of value v (searched
 * backwards through every op)? */
static int upstream_int8_conv(cs_graph *g, int v) {
  int *stack = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  char *seen = calloc((size_t)g->n_values + 1, 1);
  int top = 0, found = 0;
  if (!stack || !seen) { free(stack); free(seen); return 0; }
  stack[top++] = v;
  seen[v] = 1;
  while (top > 0 && !found) {
    int p = cs_graph_value(g, stack[--top])->producer;
    if (p < 0) continue;
    const cs_node *n = cs_graph_node(g, p);
    if (n->dead) continue;
    if (n->op == CS_OP_K_CONV2D_I8) { found = 1; break; }
    for (int i = 0; i < n->n_inputs; i++) {
      int u = n->inputs[i];
      if (u >= 0 && !seen[u]) { seen[u] = 1; stack[top++] = u; }
    }
  }
  free(stack);
  free(seen);
  return found;
}

/* Does value v reach a fused int8 convolution (searched forwards through
 * every op)? */
static int downstream_int8_conv(cs_graph *g, int v) {
  int *stack = malloc(sizeof(int) * (size_t)(g->n_values + 1));
  char *seen = calloc((size_t)g->n_values + 1, 1);
  int *cons = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
  int top = 0, found = 0;
  if (!stack || !seen || !cons) { free(stack); free(seen); free(cons); return 0; }
  stack[top++] = v;
  seen[v] = 1;
  while (top > 0 && !found) {
    int u = stack[--top];
    int nc = cs_graph_consumers(g, u, cons, g->n_nodes);
    for (int c = 0; c < nc && !found; c++) {
      const cs_node *n = cs_graph_node(g, cons[c]);
      if (n->op == CS_OP_K_CONV2D_I8) { found = 1; break; }
      for (int o = 0; o < n->n_outputs; o++) {
        int w = n->outputs[o];
        if (w >= 0 && !seen[w]) { seen[w] = 1; stack[top++] = w; }
      }
    }
  }
  free(stack);
  free(seen);
  free(cons);
  return found;
}

static cs_status lower_reduce_mean(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (x->dtype != CS_DTYPE_F32) return unsupported(n, "ReduceMean on integers must sit between DQ and Q");
  tidsp_reduce_params p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  for (int d = 0; d < x->rank; d++) p.in_shape[d] = (int32_t)x->shape[d];
  int cnt = 0;
  const int64_t *axes = cs_node_attr_ints(n, "axes", &cnt);
  int64_t axes_buf[CS_MAX_RANK];
  if (!axes && n->n_inputs > 1 && n->inputs[1] >= 0) {
    const cs_value *av = cs_graph_value(g, n->inputs[1]);
    if (!av->data) return unsupported(n, "ReduceMean axes must be a constant");
    cnt = (int)cs_value_numel(av);
    if (cnt > CS_MAX_RANK) return unsupported(n, "too many axes");
    for (int i = 0; i < cnt; i++) axes_buf[i] = cs_const_get_int(av, i);
    axes = axes_buf;
  }
  if (!axes || cnt == 0) {
    if (cs_node_attr_int(n, "noop_with_empty_axes", 0)) {
      p.reduce_mask = 0;
    } else {
      p.reduce_mask = (1 << x->rank) - 1;
    }
  } else {
    for (int i = 0; i < cnt; i++) {
      int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
      if (a < 0 || a >= x->rank) return unsupported(n, "axis out of range");
      p.reduce_mask |= 1 << a;
    }
  }
  /* ONNX Runtime's layout transform keeps the tensors between int8
   * convolutions in NHWC, so a mean over the trailing H, W of NCHW there
   * (a squeeze-excitation pool, whose result feeds convolutions again) is a
   * sum over outer dims, which rounds in another order (kernels.h). A
   * final global pool that feeds a Gemm stays NCHW in ORT. */
  if (x->rank == 4 && p.reduce_mask == 12 && upstream_int8_conv(g, n->inputs[0]) &&
      downstream_int8_conv(g, n->outputs[0]))
    p.channels_last_order = 1;
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_REDUCE_MEAN_F32, 1, ins, (cs_kparams){.reduce = p});
}

static cs_status lower_softmax(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (x->dtype != CS_DTYPE_F32) return unsupported(n, "Softmax on integers must sit between DQ and Q");
  int64_t axis = cs_node_attr_int(n, "axis", -1);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return unsupported(n, "axis out of range");
  tidsp_softmax_params p = {(int32_t)prod(x->shape, 0, (int)axis), (int32_t)x->shape[axis],
                            (int32_t)prod(x->shape, (int)axis + 1, x->rank)};
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_SOFTMAX_F32, 1, ins, (cs_kparams){.softmax = p});
}

/* ---- data movement (any dtype) ---------------------------------------- */

/* LayerNormalization: Mean and InvStdDev (training outputs) must be
 * unused; Y is one kernel call over [outer][norm]. */
/* k_reduce_mean_f32 of value a over its dims [axis, rank), keepdims. */
static int add_reduce_mean(cs_graph *g, const char *origin, int a, int axis, const char *suffix) {
  const cs_value *av = cs_graph_value(g, a);
  int64_t shape[CS_MAX_RANK];
  tidsp_reduce_params p;
  memset(&p, 0, sizeof p);
  p.rank = av->rank;
  for (int d = 0; d < av->rank; d++) {
    p.in_shape[d] = (int32_t)av->shape[d];
    shape[d] = d < axis ? av->shape[d] : 1;
    if (d >= axis) p.reduce_mask |= 1 << d;
  }
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  int out = cs_graph_add_value(g, name, CS_DTYPE_F32, av->rank, shape);
  int k = cs_add_kernel(g, CS_OP_K_REDUCE_MEAN_F32, origin, 1, &a, out);
  cs_graph_node(g, k)->k.reduce = p;
  return out;
}

/* LayerNormalization: Y is one kernel call over [outer][norm]. The
 * optional Mean and InvStdDev outputs (training statistics, shape
 * X.shape[:axis] + 1s), where read, are computed beside it:
 * mean = ReduceMean(x), InvStdDev = 1 / sqrt(ReduceMean((x − mean)²) + eps). */
static cs_status lower_layer_norm(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!require_f32(g, n))
    return unsupported(n, "LayerNormalization on integers must sit between DequantizeLinear and QuantizeLinear");
  int stats[3] = {-1, -1, -1};
  for (int j = 1; j < n->n_outputs && j < 3; j++) {
    int c;
    if (n->outputs[j] >= 0 &&
        (cs_graph_consumers(g, n->outputs[j], &c, 1) > 0 || cs_graph_is_output(g, n->outputs[j])))
      stats[j] = n->outputs[j];
  }
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", -1);
  if (axis < 0) axis += x->rank;
  float eps = cs_node_attr_float(n, "epsilon", 1e-5f);
  tidsp_layer_norm_params p = {(int32_t)prod(x->shape, 0, (int)axis), (int32_t)prod(x->shape, (int)axis, x->rank),
                               eps};
  int ins[3] = {n->inputs[0], n->inputs[1], n->n_inputs > 2 ? n->inputs[2] : -1};
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->name);
  for (int j = 1; j < n->n_outputs; j++)
    if (n->outputs[j] >= 0 && cs_graph_value(g, n->outputs[j])->producer == id)
      cs_graph_value(g, n->outputs[j])->producer = -1;
  n->n_outputs = 1;
  cs_status st = retarget_with(g, id, CS_OP_K_LAYER_NORM_F32, 3, ins, (cs_kparams){.layer_norm = p});
  if (st != CS_OK || (stats[1] < 0 && stats[2] < 0)) return st;
  int xin = ins[0];
  int mean = add_reduce_mean(g, origin, xin, (int)axis, "mean");
  if (stats[1] >= 0) {
    /* The statistics' value takes the mean's bytes (same shape). */
    int k = cs_add_kernel(g, CS_OP_K_COPY, origin, 1, &mean, stats[1]);
    cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, stats[1]));
  }
  if (stats[2] >= 0) {
    int d = add_binary(g, origin, TIDSP_BINARY_SUB, xin, mean, -1);
    int var = add_reduce_mean(g, origin, add_binary(g, origin, TIDSP_BINARY_MUL, d, d, -1), (int)axis, "var");
    int sd = add_unary(g, origin, TIDSP_UNARY_SQRT,
                       add_binary(g, origin, TIDSP_BINARY_ADD, var, scalar_const(g, origin, "epsilon", eps), -1),
                       "std");
    int inv = add_unary(g, origin, TIDSP_UNARY_RECIPROCAL, sd, "inv_std");
    int k = cs_add_kernel(g, CS_OP_K_COPY, origin, 1, &inv, stats[2]);
    cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, stats[2]));
  }
  return CS_OK;
}

static cs_status lower_cast(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  tidsp_cast_params p = {(int32_t)cs_value_numel(x), cs_dtype_to_tidsp(x->dtype), cs_dtype_to_tidsp(y->dtype)};
  if (!p.from || !p.to) return unsupported(n, "cast between these dtypes is not supported");
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_CAST, 1, ins, (cs_kparams){.cast = p});
}

/* Expand on any dtype: a broadcast copy (the shape input is constant). */
static cs_status lower_expand(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  tidsp_expand_params p;
  memset(&p, 0, sizeof p);
  tidsp_broadcast bc;
  if (!cs_broadcast_init(x, x, y, &bc)) return unsupported(n, "the input does not broadcast to the output");
  p.rank = bc.rank;
  memcpy(p.shape, bc.shape, sizeof p.shape);
  memcpy(p.in_stride, bc.a_stride, sizeof p.in_stride);
  p.elem_size = (int32_t)cs_dtype_size(y->dtype);
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_EXPAND, 1, ins, (cs_kparams){.expand = p});
}

/* Where on any dtype (the condition bool): a select with broadcasting. */
static cs_status lower_where(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *c = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  tidsp_where_params p;
  memset(&p, 0, sizeof p);
  tidsp_broadcast cb;
  if (!cs_broadcast_init(cs_graph_value(g, n->inputs[1]), cs_graph_value(g, n->inputs[2]), y, &p.bc) ||
      !cs_broadcast_init(c, c, y, &cb))
    return unsupported(n, "operand shapes do not broadcast");
  memcpy(p.c_stride, cb.a_stride, sizeof p.c_stride);
  p.elem_size = (int32_t)cs_dtype_size(y->dtype);
  int ins[3] = {n->inputs[0], n->inputs[1], n->inputs[2]};
  return retarget_with(g, id, CS_OP_K_WHERE, 3, ins, (cs_kparams){.where = p});
}

/* ScatterND on any dtype (indices int64; a reduction on float32 or the
 * integers): k_scatter_nd, also what folds a constant one. */
static cs_status lower_scatter_nd(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *idx = cs_graph_value(g, n->inputs[1]);
  static const char *const reductions[] = {"none", "add", "mul", "max", "min"};
  const char *red = cs_node_attr_string(n, "reduction", "none");
  tidsp_scatter_nd_params p;
  memset(&p, 0, sizeof p);
  p.reduction = -1;
  for (int r = 0; r < 5; r++)
    if (!strcmp(red, reductions[r])) p.reduction = r;
  if (p.reduction < 0) return unsupported(n, "reduction is not none, add, mul, max or min");
  p.k = (int32_t)idx->shape[idx->rank - 1];
  for (int d = 0; d < p.k; d++) p.dims[d] = (int32_t)x->shape[d];
  p.count = p.k > 0 ? (int32_t)(cs_value_numel(idx) / p.k) : 0;
  p.slice = (int32_t)prod(x->shape, p.k, x->rank);
  p.total = (int32_t)cs_value_numel(x);
  p.elem_size = (int32_t)cs_dtype_size(x->dtype);
  p.dtype = cs_dtype_to_tidsp(x->dtype);
  if (p.reduction != TIDSP_SCATTER_NONE && (!p.dtype || p.dtype == TIDSP_DTYPE_BOOL))
    return unsupported(n, "a reduction needs float32 or integer data");
  int ins[3] = {n->inputs[0], n->inputs[1], n->inputs[2]};
  return retarget_with(g, id, CS_OP_K_SCATTER_ND, 3, ins, (cs_kparams){.scatter_nd = p});
}

static cs_status lower_copy(cs_graph *g, int id) {
  return retarget_copy(g, id, cs_graph_node(g, id)->inputs[0]);
}

static cs_status lower_transpose(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  tidsp_transpose_params p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  p.elem_size = (int32_t)cs_dtype_size(x->dtype);
  int cnt = 0;
  const int64_t *perm = cs_node_attr_ints(n, "perm", &cnt);
  for (int d = 0; d < x->rank; d++) {
    p.in_shape[d] = (int32_t)x->shape[d];
    p.perm[d] = perm ? (int32_t)perm[d] : x->rank - 1 - d;
  }
  if (perm && cnt != x->rank) return unsupported(n, "perm length differs from the rank");
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_TRANSPOSE, 1, ins, (cs_kparams){.transpose = p});
}

static cs_status const_ints(cs_graph *g, const cs_node *n, int idx, int64_t *out, int *count, int max) {
  *count = 0;
  if (n->n_inputs <= idx || n->inputs[idx] < 0) return CS_OK;
  const cs_value *v = cs_graph_value(g, n->inputs[idx]);
  if (!v->data) return unsupported(n, "slice parameters must be constants");
  int64_t c = cs_value_numel(v);
  if (c > max) return unsupported(n, "too many slice axes");
  for (int64_t i = 0; i < c; i++) out[i] = cs_const_get_int(v, i);
  *count = (int)c;
  return CS_OK;
}

static void slice_init(tidsp_slice_params *p, const cs_value *x, const cs_value *y) {
  memset(p, 0, sizeof *p);
  p->rank = x->rank;
  p->elem_size = (int32_t)cs_dtype_size(x->dtype);
  for (int d = 0; d < x->rank; d++) {
    p->in_shape[d] = (int32_t)x->shape[d];
    p->out_shape[d] = (int32_t)y->shape[d];
    p->step[d] = 1;
  }
}

static cs_status lower_slice(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int64_t starts[CS_MAX_RANK], ends[CS_MAX_RANK], axes[CS_MAX_RANK], steps[CS_MAX_RANK];
  int ns, ne, na, nst;
  cs_status st;
  if ((st = const_ints(g, n, 1, starts, &ns, CS_MAX_RANK)) != CS_OK) return st;
  if ((st = const_ints(g, n, 2, ends, &ne, CS_MAX_RANK)) != CS_OK) return st;
  if ((st = const_ints(g, n, 3, axes, &na, CS_MAX_RANK)) != CS_OK) return st;
  if ((st = const_ints(g, n, 4, steps, &nst, CS_MAX_RANK)) != CS_OK) return st;
  if (ns != ne || (na && na != ns) || (nst && nst != ns)) return unsupported(n, "slice parameter lengths differ");
  tidsp_slice_params p;
  slice_init(&p, x, y);
  for (int i = 0; i < ns; i++) {
    int64_t a = na ? axes[i] : i;
    if (a < 0) a += x->rank;
    if (a < 0 || a >= x->rank) return unsupported(n, "slice axis out of range");
    int64_t dim = x->shape[a], step = nst ? steps[i] : 1;
    if (step == 0) return unsupported(n, "slice step 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    if (step > 0) s = s < 0 ? 0 : (s > dim ? dim : s);
    else s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
    p.start[a] = (int32_t)s;
    p.step[a] = (int32_t)step;
  }
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_SLICE, 1, ins, (cs_kparams){.slice = p});
}

/* Gather with constant, evenly spaced indices (start, start + s, …: what
 * torch.export writes for the as_strided of an adaptive pool) is a strided
 * slice along the axis. Its [outer][count][inner] result is, byte for byte,
 * the output's [outer][indices…][inner], so the k_slice writes the output
 * directly. Any other index list would need a gather kernel. */
/* Runtime (or unevenly spaced constant) indices: k_gather copies one row
 * of the trailing dims per index. */
static cs_status lower_gather_rows(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *idx = cs_graph_value(g, n->inputs[1]);
  const int64_t axis = cs_node_attr_int(n, "axis", 0);
  int64_t inner = prod(x->shape, (int)axis + 1, x->rank) * (int64_t)cs_dtype_size(x->dtype);
  int64_t count = cs_value_numel(idx);
  if (inner > INT32_MAX || count > INT32_MAX || x->shape[axis] > INT32_MAX)
    return unsupported(n, "Gather too large for the kernel's 32-bit sizes");
  tidsp_gather_params p = {(int32_t)prod(x->shape, 0, (int)axis), (int32_t)x->shape[axis], (int32_t)inner,
                           (int32_t)count, (int32_t)cs_dtype_size(idx->dtype)};
  int ins[2] = {n->inputs[0], n->inputs[1]};
  return retarget_with(g, id, CS_OP_K_GATHER, 2, ins, (cs_kparams){.gather = p});
}

static cs_status lower_gather(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *idx = cs_graph_value(g, n->inputs[1]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  const int64_t axis = cs_node_attr_int(n, "axis", 0), dim = x->shape[axis];
  const int64_t count = cs_value_numel(idx);
  if (!idx->data) return lower_gather_rows(g, id);
  if (count < 1) return unsupported(n, "no indices");
  int64_t first = cs_const_get_int(idx, 0), step = 1;
  if (first < 0) first += dim;
  for (int64_t i = 1; i < count; i++) {
    int64_t v = cs_const_get_int(idx, i);
    if (v < 0) v += dim;
    if (i == 1) step = v - first;
    if (step == 0 || v != first + i * step) return lower_gather_rows(g, id);
  }
  tidsp_slice_params p;
  slice_init(&p, x, x);
  p.out_shape[axis] = (int32_t)count;
  p.start[axis] = (int32_t)first;
  p.step[axis] = (int32_t)step;
  if (cs_value_numel(y) != cs_value_numel(x) / dim * count)
    return cs_error(CS_ERR_INTERNAL, "node '%s': Gather output of %lld elements, its slice %lld", n->name,
                    (long long)cs_value_numel(y), (long long)(cs_value_numel(x) / dim * count));
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_SLICE, 1, ins, (cs_kparams){.slice = p});
}

static cs_status lower_split(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return unsupported(n, "split axis out of range");
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->name);
  int xin = n->inputs[0];
  int n_out = n->n_outputs;
  int *outs = malloc(sizeof(int) * (size_t)n_out);
  if (!outs) return cs_error(CS_ERR_NOMEM, "out of memory");
  memcpy(outs, n->outputs, sizeof(int) * (size_t)n_out);
  cs_graph_remove_node(g, id);
  int64_t offset = 0;
  for (int o = 0; o < n_out; o++) {
    if (outs[o] < 0) continue;
    const cs_value *y = cs_graph_value(g, outs[o]);
    tidsp_slice_params p;
    slice_init(&p, cs_graph_value(g, xin), y);
    p.start[axis] = (int32_t)offset;
    offset += y->shape[axis];
    int k = cs_add_kernel(g, CS_OP_K_SLICE, origin, 1, &xin, outs[o]);
    if (k < 0) {
      free(outs);
      return CS_ERR_NOMEM; /* message recorded */
    }
    cs_graph_node(g, k)->k.slice = p;
  }
  free(outs);
  return CS_OK;
}

static cs_status lower_concat(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  cs_status st;
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", 0);
  if (axis < 0) axis += y->rank;
  if (axis < 0 || axis >= y->rank) return unsupported(n, "concat axis out of range");
  int64_t *lens = malloc(sizeof(int64_t) * (size_t)n->n_inputs);
  if (!lens) return cs_error(CS_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n->n_inputs; i++) {
    const cs_value *x = cs_graph_value(g, n->inputs[i]);
    if (x->dtype != y->dtype) { free(lens); return unsupported(n, "inputs of different dtypes"); }
    lens[i] = x->shape[axis];
  }
  tidsp_concat_params p;
  memset(&p, 0, sizeof p);
  p.n_inputs = n->n_inputs;
  p.outer = (int32_t)prod(y->shape, 0, (int)axis);
  p.inner_bytes = (int32_t)(prod(y->shape, (int)axis + 1, y->rank) * (int64_t)cs_dtype_size(y->dtype));
  n->op = CS_OP_K_CONCAT; /* the inputs stay as they are */
  st = keep_origin(n) ? cs_node_set_attr_ints(n, "axis_len", n->n_inputs, lens) : cs_error(CS_ERR_NOMEM, "out of memory");
  free(lens);
  if (st != CS_OK) return st;
  n->k.concat = p;
  return CS_OK;
}

static cs_status lower_pad(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  tidsp_pad_params p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  p.elem_size = (int32_t)cs_dtype_size(x->dtype);
  for (int d = 0; d < x->rank; d++) p.in_shape[d] = (int32_t)x->shape[d];
  const cs_attr *m = cs_node_attr(n, "mode");
  const char *mode = m && m->s ? m->s : "constant";
  if (!strcmp(mode, "constant")) p.mode = TIDSP_PAD_CONSTANT;
  else if (!strcmp(mode, "edge")) p.mode = TIDSP_PAD_EDGE;
  else if (!strcmp(mode, "reflect")) p.mode = TIDSP_PAD_REFLECT;
  else return unsupported(n, "pad mode must be constant, edge or reflect");
  int64_t pads[2 * CS_MAX_RANK], axes[CS_MAX_RANK];
  int np = 0, na = 0;
  cs_status st;
  int cnt = 0;
  const int64_t *pattr = cs_node_attr_ints(n, "pads", &cnt);
  if (pattr) {
    np = cnt;
    for (int i = 0; i < cnt && i < 2 * CS_MAX_RANK; i++) pads[i] = pattr[i];
  } else if ((st = const_ints(g, n, 1, pads, &np, 2 * CS_MAX_RANK)) != CS_OK) {
    return st;
  }
  if ((st = const_ints(g, n, 3, axes, &na, CS_MAX_RANK)) != CS_OK) return st;
  if (!na) {
    na = x->rank;
    for (int d = 0; d < na; d++) axes[d] = d;
  }
  if (np != 2 * na) return unsupported(n, "pads length must be twice the number of axes");
  for (int i = 0; i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
    if (a < 0 || a >= x->rank) return unsupported(n, "pad axis out of range");
    if (pads[i] < 0 || pads[na + i] < 0) return unsupported(n, "negative pads are not supported");
    p.pad_begin[a] = (int32_t)pads[i];
    p.pad_end[a] = (int32_t)pads[na + i];
  }
  if (n->n_inputs > 2 && n->inputs[2] >= 0) {
    const cs_value *cv = cs_graph_value(g, n->inputs[2]);
    if (!cv->data) return unsupported(n, "pad constant_value must be a constant");
    memcpy(p.value, cv->data, cs_dtype_size(cv->dtype) <= 8 ? cs_dtype_size(cv->dtype) : 8);
  }
  int ins[1] = {n->inputs[0]};
  return retarget_with(g, id, CS_OP_K_PAD, 1, ins, (cs_kparams){.pad = p});
}

cs_status pass_legalize(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || cs_op_is_kernel(n->op)) continue;
    cs_status st;
    if ((n->op == CS_OP_CLIP || n->op == CS_OP_RELU) && cs_graph_value(g, n->inputs[0])->dtype != CS_DTYPE_F32) {
      st = lower_int_clip(g, i);
      if (st != CS_OK) return st;
      continue;
    }
    tidsp_unary_f32_params up;
    cs_unary_match um = cs_unary_params_of(g, n, &up);
    if (um != CS_UNARY_NONE) {
      st = lower_unary(g, i, um, up);
      if (st != CS_OK) return st;
      continue;
    }
    switch (n->op) {
      case CS_OP_QUANTIZE_LINEAR: case CS_OP_DEQUANTIZE_LINEAR: st = lower_qdq(g, i); break;
      case CS_OP_CONV: st = lower_conv(g, i); break;
      case CS_OP_CONV_TRANSPOSE: st = lower_conv_transpose(g, i); break;
      case CS_OP_GEMM: st = lower_gemm(g, i); break;
      case CS_OP_BATCH_NORMALIZATION: st = lower_batch_norm(g, i); break;
      case CS_OP_MATMUL: st = lower_matmul(g, i); break;
      case CS_OP_ADD: case CS_OP_SUB: case CS_OP_MUL: case CS_OP_DIV:
      case CS_OP_POW: st = lower_binary(g, i); break;
      case CS_OP_MAX: case CS_OP_MIN: st = lower_variadic(g, i); break;
      case CS_OP_EQUAL: case CS_OP_LESS: case CS_OP_LESS_OR_EQUAL: case CS_OP_GREATER:
      case CS_OP_GREATER_OR_EQUAL: case CS_OP_AND: case CS_OP_OR: case CS_OP_XOR:
        st = retarget_binary_any(g, i, binary_any_op(n->op), n->inputs[0], n->inputs[1]);
        break;
      case CS_OP_NOT: st = lower_not(g, i); break;
      case CS_OP_TILE: st = lower_tile(g, i); break;
      case CS_OP_LAYER_NORMALIZATION: st = lower_layer_norm(g, i); break;
      case CS_OP_PRELU: st = lower_prelu(g, i); break;
      case CS_OP_MAX_POOL: case CS_OP_AVERAGE_POOL: case CS_OP_GLOBAL_AVERAGE_POOL: st = lower_pool(g, i); break;
      case CS_OP_REDUCE_MEAN: st = lower_reduce_mean(g, i); break;
      case CS_OP_SOFTMAX: st = lower_softmax(g, i); break;
      case CS_OP_RESHAPE: case CS_OP_FLATTEN: case CS_OP_SQUEEZE: case CS_OP_UNSQUEEZE:
      case CS_OP_IDENTITY: case CS_OP_DROPOUT: st = lower_copy(g, i); break;
      case CS_OP_TRANSPOSE: st = lower_transpose(g, i); break;
      case CS_OP_SLICE: st = lower_slice(g, i); break;
      case CS_OP_GATHER: st = lower_gather(g, i); break;
      case CS_OP_WHERE: st = lower_where(g, i); break;
      case CS_OP_SCATTER_ND: st = lower_scatter_nd(g, i); break;
      case CS_OP_EXPAND: st = lower_expand(g, i); break;
      case CS_OP_CAST: st = lower_cast(g, i); break;
      case CS_OP_SPLIT: st = lower_split(g, i); break;
      case CS_OP_CONCAT: st = lower_concat(g, i); break;
      case CS_OP_PAD: st = lower_pad(g, i); break;
      default:
        st = cs_error(CS_ERR_INTERNAL, "node '%s': no lowering for %s", n->name, cs_op_name(n->op));
    }
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
