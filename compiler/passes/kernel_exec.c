#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "kernel_exec.h"

/* ---- MMALIB extern kernels: positional int32 args from "mm_args"; the MMA
 * kernels need 64-byte aligned activations/weights/output, which compile-
 * time buffers (malloc'd constants) do not promise, so they run on aligned
 * copies here. */

static void *aligned_copy(const void *src, size_t n) {
  size_t sz = (n + TIDSP_MMALIB_ALIGN - 1) / TIDSP_MMALIB_ALIGN * TIDSP_MMALIB_ALIGN;
  void *p = aligned_alloc(TIDSP_MMALIB_ALIGN, sz ? sz : TIDSP_MMALIB_ALIGN);
  if (p && src) memcpy(p, src, n);
  return p;
}

static int32_t mm_exec(const cs_node *n, const void *const *in, void *const *out) {
  int cnt = 0;
  const int64_t *a64 = cs_node_attr_ints(n, "mm_args", &cnt);
  if (!a64 || cnt > 16) return TIDSP_ERR_PARAM;
  int32_t a[16] = {0};
  for (int i = 0; i < cnt; i++) a[i] = (int32_t)a64[i];
  if (n->op == CS_OP_K_C7X_RESIDUAL_ADD_I8)
    return cnt == 2 ? c7x_int8_residual_add_relu(in[0], in[1], in[2], out[0], a[0], a[1]) : TIDSP_ERR_PARAM;
  if (n->op == CS_OP_K_C7X_RESIDUAL_ADD_I16)
    return cnt == 2 ? c7x_int16_residual_add_relu(in[0], in[1], in[2], out[0], a[0], a[1]) : TIDSP_ERR_PARAM;
  if (n->op == CS_OP_K_C7X_MAXPOOL_I8 || n->op == CS_OP_K_C7X_MAXPOOL_TIDL_I8) {
    if (cnt != 12) return TIDSP_ERR_PARAM;
    return (n->op == CS_OP_K_C7X_MAXPOOL_I8 ? c7x_int8_max_pool : c7x_int8_max_pool_tidl)(
        in[0], out[0], a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
  }
  /* conv family / FC / matmul: element counts of input, weights, output. */
  size_t nx, nw, ny;
  size_t esz = n->op == CS_OP_K_MMALIB_CONV2D_I16 || n->op == CS_OP_K_MMALIB_DWCONV2D_I16 ||
                       n->op == CS_OP_K_MMALIB_FC_I16 || n->op == CS_OP_K_MMALIB_MATMUL_I16
                   ? sizeof(int16_t)
                   : sizeof(int8_t);
  if (n->op == CS_OP_K_MMALIB_FC_I8 || n->op == CS_OP_K_MMALIB_FC_I16 || n->op == CS_OP_K_MMALIB_MATMUL_I16) {
    if (cnt != (n->op == CS_OP_K_MMALIB_MATMUL_I16 ? 4 : 3)) return TIDSP_ERR_PARAM;
    nx = (size_t)a[0] * a[1];
    nw = (size_t)a[2] * a[1];
    ny = (size_t)a[0] * a[2];
  } else if (n->op == CS_OP_K_MMALIB_DWCONV2D_I8 || n->op == CS_OP_K_MMALIB_DWCONV2D_I16) {
    if (cnt != 12 || a[5] < 1) return TIDSP_ERR_PARAM;
    int64_t ho = (a[1] + a[7] + a[8] - a[3]) / a[5] + 1, wo = (a[2] + a[9] + a[10] - a[4]) / a[5] + 1;
    if (ho < 1 || wo < 1) return TIDSP_ERR_PARAM;
    nx = (size_t)a[0] * a[1] * a[2];
    nw = (size_t)a[0] * a[3] * a[4];
    ny = (size_t)a[0] * (size_t)ho * (size_t)wo;
  } else {
    int grouped = n->op == CS_OP_K_MMALIB_CONV2D_I8_GROUPED;
    if (cnt != (grouped ? 13 : 12) || a[6] < 1) return TIDSP_ERR_PARAM;
    int32_t groups = grouped ? a[12] : 1;
    if (groups < 1) return TIDSP_ERR_PARAM;
    int64_t ho = (a[1] + a[8] + a[9] - a[4]) / a[6] + 1, wo = (a[2] + a[10] + a[11] - a[5]) / a[6] + 1;
    if (ho < 1 || wo < 1) return TIDSP_ERR_PARAM;
    nx = (size_t)a[0] * a[1] * a[2];
    nw = (size_t)a[3] * (size_t)(a[0] / groups) * a[4] * a[5];
    ny = (size_t)a[3] * (size_t)ho * (size_t)wo;
  }
  nx *= esz;
  nw *= esz;
  ny *= esz;
  void *x = aligned_copy(in[0], nx), *w = aligned_copy(in[1], nw), *y = aligned_copy(NULL, ny);
  int32_t st = TIDSP_ERR_NOMEM;
  if (x && w && y) {
    switch (n->op) {
      case CS_OP_K_MMALIB_CONV2D_I8:
        st = mmalib_conv2d_i8(x, w, in[2], in[3], in[4], y, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                              a[8], a[9], a[10], a[11]);
        break;
      case CS_OP_K_MMALIB_CONV2D_I8_GROUPED:
        st = mmalib_conv2d_i8_grouped_loop(x, w, in[2], in[3], in[4], y, a[0], a[1], a[2], a[3], a[4], a[5],
                                           a[6], a[7], a[8], a[9], a[10], a[11], a[12]);
        break;
      case CS_OP_K_MMALIB_DWCONV2D_I8:
        st = mmalib_depthwise_conv2d_i8(x, w, in[2], in[3], in[4], y, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                        a[7], a[8], a[9], a[10], a[11]);
        break;
      case CS_OP_K_MMALIB_CONV2D_I16:
        st = mmalib_conv2d_i16(x, w, in[2], in[3], in[4], y, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                               a[8], a[9], a[10], a[11]);
        break;
      case CS_OP_K_MMALIB_DWCONV2D_I16:
        st = mmalib_depthwise_conv2d_i16(x, w, in[2], in[3], in[4], y, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                         a[7], a[8], a[9], a[10], a[11]);
        break;
      case CS_OP_K_MMALIB_FC_I16:
        st = mmalib_matmul_bias_i16(x, w, in[2], in[3], in[4], y, a[0], a[1], a[2]);
        break;
      case CS_OP_K_MMALIB_MATMUL_I16:
        st = mmalib_matmul_i16(x, w, y, a[0], a[1], a[2], a[3]);
        break;
      default:
        st = mmalib_matmul_bias_i8(x, w, in[2], in[3], in[4], y, a[0], a[1], a[2]);
        break;
    }
    if (st == TIDSP_MMALIB_OK) memcpy(out[0], y, ny);
    else st = TIDSP_ERR_PARAM;
  }
  free(x);
  free(w);
  free(y);
  return st;
}

/* The reference loops, never the dispatched fast variants: what the
 * compiler folds must not depend on the CPU it runs on (nor touch its AMX
 * state); the variants are bit-exact with these anyway. The MMALIB
 * emulation calls the dispatched conv/matmul itself, hence the pin. */
int32_t cs_kernel_exec(const cs_node *n, const void *const *in, void *const *out) {
  static int pinned;
  if (!pinned) pinned = tidsp_kernels_select("ref") == TIDSP_OK;
  const cs_kparams *k = &n->k;
  switch (n->op) {
    case CS_OP_K_QUANTIZE: return tidsp_quantize__ref(&k->qdq, in[0], in[1], in[2], out[0]);
    case CS_OP_K_DEQUANTIZE: return tidsp_dequantize__ref(&k->qdq, in[0], in[1], in[2], out[0]);
    case CS_OP_K_CONV2D_I8: return tidsp_conv2d_i8__ref(&k->conv, in[0], in[1], in[2], in[3], out[0]);
    case CS_OP_K_CONV2D_F32: return tidsp_conv2d_f32(&k->conv, in[0], in[1], in[2], out[0]);
    case CS_OP_K_MATMUL_I8: return tidsp_matmul_i8__ref(&k->matmul, in[0], in[1], in[2], in[3], out[0]);
    case CS_OP_K_MATMUL_F32: return tidsp_matmul_f32(&k->matmul_f32, in[0], in[1], in[2], out[0]);
    case CS_OP_K_BATCH_MATMUL_I8:
      return tidsp_batch_matmul_i8__ref(&k->batch_matmul, in[0], in[1], in[2], out[0]);
    case CS_OP_K_ADD_I8: return tidsp_add_i8__ref(&k->add, in[0], in[1], out[0]);
    case CS_OP_K_MUL_I8: return tidsp_mul_i8__ref(&k->mul, in[0], in[1], out[0]);
    case CS_OP_K_BINARY_F32: return tidsp_binary_f32(&k->binary, in[0], in[1], out[0]);
    case CS_OP_K_LUT_I8: return tidsp_lut_i8__ref(&k->lut, in[0], in[1], out[0]);
    case CS_OP_K_UNARY_F32: return tidsp_unary_f32(&k->unary, in[0], out[0]);
    case CS_OP_K_MAXPOOL_I8: return tidsp_maxpool_i8__ref(&k->pool, in[0], out[0]);
    case CS_OP_K_MAXPOOL_F32: return tidsp_maxpool_f32__ref(&k->pool, in[0], out[0]);
    case CS_OP_K_AVGPOOL_I8: return tidsp_avgpool_i8(&k->avgpool, in[0], in[1], out[0]);
    case CS_OP_K_AVGPOOL_F32: return tidsp_avgpool_f32(&k->pool, in[0], out[0]);
    case CS_OP_K_GAP_I8: return tidsp_global_avgpool_i8__ref(&k->gap, in[0], in[1], out[0]);
    case CS_OP_K_GAP_F32: return tidsp_global_avgpool_f32(&k->gap_f32, in[0], out[0]);
    case CS_OP_K_REDUCE_MEAN_F32: return tidsp_reduce_mean_f32(&k->reduce, in[0], out[0]);
    case CS_OP_K_SOFTMAX_F32: return tidsp_softmax_f32(&k->softmax, in[0], out[0]);
    case CS_OP_K_SOFTMAX_I8: return tidsp_softmax_i8(&k->softmax_i8, in[0], in[1], out[0]);
    case CS_OP_K_LAYER_NORM_F32: return tidsp_layer_norm_f32__ref(&k->layer_norm, in[0], in[1], in[2], out[0]);
    case CS_OP_K_LAYER_NORM_I8: return tidsp_layer_norm_i8__ref(&k->layer_norm_i8, in[0], in[1], in[2], out[0]);
    case CS_OP_K_TRANSPOSE: return tidsp_transpose__ref(&k->transpose, in[0], out[0]);
    case CS_OP_K_SLICE: return tidsp_slice__ref(&k->slice, in[0], out[0]);
    case CS_OP_K_PAD: return tidsp_pad(&k->pad, in[0], out[0]);
    case CS_OP_K_GATHER: return tidsp_gather(&k->gather, in[0], in[1], out[0]);
    case CS_OP_K_WHERE: return tidsp_where(&k->where, in[0], in[1], in[2], out[0]);
    case CS_OP_K_EXPAND: return tidsp_expand(&k->expand, in[0], out[0]);
    case CS_OP_K_CAST: return tidsp_cast(&k->cast, in[0], out[0]);
    case CS_OP_K_COPY: return tidsp_copy(k->copy_bytes, in[0], out[0]);
    case CS_OP_K_CONCAT: {
      int cnt = 0;
      const int64_t *lens = cs_node_attr_ints(n, "axis_len", &cnt);
      if (!lens || cnt != k->concat.n_inputs) return TIDSP_ERR_PARAM;
      int32_t *axis_len = malloc(sizeof(int32_t) * (size_t)(cnt ? cnt : 1));
      if (!axis_len) return TIDSP_ERR_NOMEM;
      for (int i = 0; i < cnt; i++) axis_len[i] = (int32_t)lens[i];
      tidsp_concat_params p = k->concat;
      p.axis_len = axis_len;
      int32_t st = tidsp_concat(&p, in, out[0]);
      free(axis_len);
      return st;
    }
    case CS_OP_K_DEQUANT_VECMATMUL: {
      int cnt = 0;
      const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
      if (!a || cnt != 3) return TIDSP_ERR_PARAM;
      return c7x_dequantize_vecmatmul(in[0], in[1], in[2], out[0], (int32_t)a[0], (int32_t)a[1], (int32_t)a[2]);
    }
    case CS_OP_K_SDPA_DECODE: {
      int cnt = 0;
      const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
      if (!a || cnt != 4) return TIDSP_ERR_PARAM;
      return c7x_sdpa_decode(in[0], in[1], in[2], in[3], out[0], (int32_t)a[0], (int32_t)a[1], (int32_t)a[2],
                             (int32_t)a[3]);
    }
    case CS_OP_K_MMALIB_CONV2D_I8:
    case CS_OP_K_MMALIB_CONV2D_I8_GROUPED:
    case CS_OP_K_MMALIB_DWCONV2D_I8:
    case CS_OP_K_MMALIB_FC_I8:
    case CS_OP_K_C7X_RESIDUAL_ADD_I8:
    case CS_OP_K_MMALIB_CONV2D_I16:
    case CS_OP_K_MMALIB_DWCONV2D_I16:
    case CS_OP_K_MMALIB_FC_I16:
    case CS_OP_K_MMALIB_MATMUL_I16:
    case CS_OP_K_C7X_RESIDUAL_ADD_I16:
    case CS_OP_K_C7X_MAXPOOL_I8:
    case CS_OP_K_C7X_MAXPOOL_TIDL_I8:
      return mm_exec(n, in, out);
    default:
      return TIDSP_ERR_UNSUPPORTED;
  }
}
