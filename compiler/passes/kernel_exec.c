#include <stdlib.h>

#include "kernel_exec.h"

int32_t cs_kernel_exec(const cs_node *n, const void *const *in, void *const *out) {
  const cs_kparams *k = &n->k;
  switch (n->op) {
    case CS_OP_K_QUANTIZE: return tidsp_quantize(&k->qdq, in[0], in[1], in[2], out[0]);
    case CS_OP_K_DEQUANTIZE: return tidsp_dequantize(&k->qdq, in[0], in[1], in[2], out[0]);
    case CS_OP_K_CONV2D_I8: return tidsp_conv2d_i8(&k->conv, in[0], in[1], in[2], in[3], out[0]);
    case CS_OP_K_CONV2D_F32: return tidsp_conv2d_f32(&k->conv, in[0], in[1], in[2], out[0]);
    case CS_OP_K_MATMUL_I8: return tidsp_matmul_i8(&k->matmul, in[0], in[1], in[2], in[3], out[0]);
    case CS_OP_K_MATMUL_F32: return tidsp_matmul_f32(&k->matmul_f32, in[0], in[1], in[2], out[0]);
    case CS_OP_K_ADD_I8: return tidsp_add_i8(&k->add, in[0], in[1], out[0]);
    case CS_OP_K_MUL_I8: return tidsp_mul_i8(&k->mul, in[0], in[1], out[0]);
    case CS_OP_K_BINARY_F32: return tidsp_binary_f32(&k->binary, in[0], in[1], out[0]);
    case CS_OP_K_LUT_I8: return tidsp_lut_i8(&k->lut, in[0], in[1], out[0]);
    case CS_OP_K_UNARY_F32: return tidsp_unary_f32(&k->unary, in[0], out[0]);
    case CS_OP_K_MAXPOOL_I8: return tidsp_maxpool_i8(&k->pool, in[0], out[0]);
    case CS_OP_K_MAXPOOL_F32: return tidsp_maxpool_f32(&k->pool, in[0], out[0]);
    case CS_OP_K_AVGPOOL_I8: return tidsp_avgpool_i8(&k->avgpool, in[0], in[1], out[0]);
    case CS_OP_K_AVGPOOL_F32: return tidsp_avgpool_f32(&k->pool, in[0], out[0]);
    case CS_OP_K_GAP_I8: return tidsp_global_avgpool_i8(&k->gap, in[0], in[1], out[0]);
    case CS_OP_K_GAP_F32: return tidsp_global_avgpool_f32(&k->gap_f32, in[0], out[0]);
    case CS_OP_K_REDUCE_MEAN_F32: return tidsp_reduce_mean_f32(&k->reduce, in[0], out[0]);
    case CS_OP_K_SOFTMAX_F32: return tidsp_softmax_f32(&k->softmax, in[0], out[0]);
    case CS_OP_K_TRANSPOSE: return tidsp_transpose(&k->transpose, in[0], out[0]);
    case CS_OP_K_SLICE: return tidsp_slice(&k->slice, in[0], out[0]);
    case CS_OP_K_PAD: return tidsp_pad(&k->pad, in[0], out[0]);
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
    default:
      return TIDSP_ERR_UNSUPPORTED;
  }
}
