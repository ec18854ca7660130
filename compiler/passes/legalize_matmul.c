/*
 * LegalizeOps: Gemm and MatMul in float, on k_matmul_f32.
 */
#include <stdlib.h>
#include <string.h>

#include "legalize_internal.h"

/* A new value holding transpose(v) as [cols][rows] of a 2-D value; -1
 * when out of memory (message recorded). */
static int transpose_2d(cs_graph *g, int v, const char *origin) {
  const cs_value *src = cs_graph_value(g, v);
  int64_t shape[2] = {src->shape[1], src->shape[0]};
  char name[512];
  snprintf(name, sizeof name, "%s.T", src->name ? src->name : "t");
  tidsp_transpose_params p = {.rank = 2,
                              .in_shape = {(int32_t)shape[1], (int32_t)shape[0]},
                              .perm = {1, 0},
                              .elem_size = (int32_t)cs_dtype_size(src->dtype)};
  int out = cs_graph_add_value(g, name, src->dtype, 2, shape);
  return cs_lower_add_kernel(g, CS_OP_K_TRANSPOSE, origin, 1, &v, out, (cs_kparams){.transpose = p});
}

/* Gemm: Y = alpha·A'·B' + beta·C, as ONNX Runtime computes it: C
 * broadcast and scaled first (fl(beta·c), a copy when beta = 1), then
 * MLAS's fl(fl(alpha·acc) + that). A bias of N elements with alpha = beta
 * = 1 is the matmul kernel's own bias; otherwise the product is followed by
 * a Mul by alpha and an Add of beta·C (folded at compile time when C is a
 * constant). */
static cs_status lower_gemm(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!cs_lower_all_f32(g, n)) return cs_lower_unsupported(n, "a Gemm on integers must be a complete QDQ pattern");
  float alpha = cs_node_attr_float(n, "alpha", 1.0f), beta = cs_node_attr_float(n, "beta", 1.0f);
  int a = n->inputs[0], b = n->inputs[1];
  /* ORT folds and prepacks a B computed from constants; any other B
   * reaches MLAS's unpacked SGEMM, which sums in another order
   * (tidsp_matmul_f32_params.b_runtime). Taken before the transposes
   * below, which FoldConstant folds only after the lowering. */
  int b_runtime = !cs_match_from_constants(g, b, 8);
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
  tidsp_matmul_f32_params mp = {.batch = 1, .m = M, .k = K, .n = N, .b_runtime = b_runtime};
  cs_status st = cs_lower_retarget(g, id, CS_OP_K_MATMUL_F32, 3, ins, (cs_kparams){.matmul_f32 = mp});
  if (st != CS_OK || !post) return st;
  n = cs_graph_node(g, id);
  n->outputs[0] = mm_out;
  cs_graph_value(g, mm_out)->producer = id;
  cs_graph_value(g, y)->producer = -1;
  int v = mm_out;
  if (alpha != 1.0f)
    v = cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_MUL, v, cs_lower_scalar_f32(g, origin, "alpha", alpha), c >= 0 ? -1 : y);
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
      bc = cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_MUL, c, cs_lower_scalar_f32(g, origin, "beta", beta), -1);
    }
    cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_ADD, v, bc, y);
  }
  return CS_OK;
}

/* v = Mul(raw, s) (either order, lowered or not) with s a 1-element
 * float constant, raw of v's shape and v read only by the MatMul: sets
 * *raw and *scale and returns 1. */
static int scaled_input(cs_graph *g, int v, int *raw, float *scale) {
  const cs_value *val = cs_graph_value(g, v);
  if (val->producer < 0 || cs_match_single_consumer(g, v) < 0) return 0;
  const cs_node *m = cs_graph_node(g, val->producer);
  int is_mul = m->op == CS_OP_MUL || (m->op == CS_OP_K_BINARY_F32 && m->k.binary.op == TIDSP_BINARY_MUL);
  if (!is_mul || m->n_inputs != 2) return 0;
  for (int side = 0; side < 2; side++) {
    const cs_value *s = cs_graph_value(g, m->inputs[side]), *r = cs_graph_value(g, m->inputs[1 - side]);
    if (!s->data || s->dtype != CS_DTYPE_F32 || cs_value_numel(s) != 1 || r->dtype != CS_DTYPE_F32) continue;
    if (r->rank != val->rank || memcmp(r->shape, val->shape, sizeof(int64_t) * (size_t)val->rank) != 0) continue;
    *raw = m->inputs[1 - side];
    *scale = *(const float *)s->data;
    return 1;
  }
  return 0;
}

/* ONNX Runtime's MatMulScaleFusion: a MatMul whose inputs are scaled by
 * constant scalars (the two halves of attention's 1/sqrt(d) that PyTorch's
 * SDPA export puts on Q and Kᵀ) runs as FusedMatMul on the raw inputs with
 * alpha = fl(s_a·s_b), i.e. fl(alpha · Σ), not Σ of the rounded products.
 * With K in one stride of MLAS's SGEMM (K ≤ 128 in every path), that is
 * this MatMul on the raw inputs followed by a Mul by alpha; longer K would
 * need alpha inside the kernel's stride sums, so it stays unfused. Returns
 * 1 and rewires ins[0..1] / sets *alpha when it applies. */
static int fold_input_scales(cs_graph *g, int32_t K, int ins[2], float *alpha) {
  float sa = 1.0f, sb = 1.0f;
  int ra = ins[0], rb = ins[1];
  int fa, fb;
  if (K > 128) return 0;
  fa = scaled_input(g, ins[0], &ra, &sa);
  fb = scaled_input(g, ins[1], &rb, &sb);
  if (!fa && !fb) return 0;
  ins[0] = ra;
  ins[1] = rb;
  *alpha = sa * sb;
  return 1;
}

static cs_status lower_matmul(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!cs_lower_all_f32(g, n)) return cs_lower_unsupported(n, "a MatMul on integers must be a complete QDQ pattern");
  const cs_value *a = cs_graph_value(g, n->inputs[0]), *b = cs_graph_value(g, n->inputs[1]);
  if (a->rank < 2 || b->rank < 2) return cs_lower_unsupported(n, "MatMul with a 1-D operand");
  int32_t M = (int32_t)a->shape[a->rank - 2], K = (int32_t)a->shape[a->rank - 1];
  int32_t N = (int32_t)b->shape[b->rank - 1];
  int64_t a_batch = cs_lower_prod(a->shape, 0, a->rank - 2), b_batch = cs_lower_prod(b->shape, 0, b->rank - 2);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int64_t batch = cs_lower_prod(y->shape, 0, y->rank - 2);
  if ((a_batch != batch && a_batch != 1) || (b_batch != batch && b_batch != 1))
    return cs_lower_unsupported(n, "MatMul batch broadcasting other than all-or-one");
  tidsp_matmul_f32_params p;
  memset(&p, 0, sizeof p);
  p.batch = (int32_t)batch;
  p.m = M; p.k = K; p.n = N;
  p.a_batch_stride = a_batch == 1 ? 0 : M * K;
  p.b_batch_stride = b_batch == 1 ? 0 : K * N;
  p.b_runtime = !cs_match_from_constants(g, n->inputs[1], 8);
  /* MarkMatMulNBits moved the bias Add of an ORT MatMulNBits in here;
   * FoldConstant computes such a node as that kernel does, on its inputs
   * as they are (no scale fusion) */
  int nbits = 0;
  int nbits_marked = cs_node_attr_ints(n, "ort_nbits", &nbits) != NULL;
  int ins[3] = {n->inputs[0], n->inputs[1], (int)cs_node_attr_int(n, "ort_nbits_bias", -1)};
  float alpha = 1.0f;
  if (nbits_marked || !fold_input_scales(g, K, ins, &alpha))
    return cs_lower_retarget(g, id, CS_OP_K_MATMUL_F32, 3, ins, (cs_kparams){.matmul_f32 = p});
  char origin[512], name[600];
  snprintf(origin, sizeof origin, "%s", n->name);
  snprintf(name, sizeof name, "%s.unscaled", origin);
  int yv = n->outputs[0];
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, cs_graph_value(g, yv)->shape, sizeof shape);
  int mm_out = cs_graph_add_value(g, name, CS_DTYPE_F32, cs_graph_value(g, yv)->rank, shape);
  cs_status st = cs_lower_retarget(g, id, CS_OP_K_MATMUL_F32, 3, ins, (cs_kparams){.matmul_f32 = p});
  if (st != CS_OK) return st;
  n = cs_graph_node(g, id);
  n->outputs[0] = mm_out;
  cs_graph_value(g, mm_out)->producer = id;
  cs_graph_value(g, yv)->producer = -1;
  return cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_MUL, mm_out, cs_lower_scalar_f32(g, origin, "alpha", alpha), yv) < 0
             ? CS_ERR_NOMEM
             : CS_OK;
}

const cs_lowering cs_lowerings_matmul[] = {
    {CS_OP_GEMM, lower_gemm},
    {CS_OP_MATMUL, lower_matmul},
    {CS_OP_COUNT_, NULL},
};
