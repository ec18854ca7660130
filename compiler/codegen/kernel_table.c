/*
 * The kernel table: for every kernel op, the runtime function it calls and
 * the types of its pointer arguments (include/cstatic/kernels.h). Codegen
 * checks each node's tensors against it, so a dtype mistake in a pass is a
 * compiler error naming the node, not a C compile error in lib0.c.
 */
#include "cg.h"

#define F32 CS_DTYPE_F32
#define I8 CS_DTYPE_I8
#define I16 CS_DTYPE_I16
#define I32 CS_DTYPE_I32
#define I64 CS_DTYPE_I64
#define U8 CS_DTYPE_U8
#define ANY CS_DTYPE_UNDEF

static const cs_kernel_info kernels[] = {
    /* op, function, params, n_inputs, input dtypes, optional mask, output
     * [, the reference loop of a dispatched kernel (-kernels=scalar)] */
    {CS_OP_K_QUANTIZE, "tidsp_quantize", "tidsp_qdq_params", 3, {F32, I32, F32}, 0, ANY,
     "tidsp_quantize__ref"},
    {CS_OP_K_DEQUANTIZE, "tidsp_dequantize", "tidsp_qdq_params", 3, {F32, I32, ANY}, 0, F32,
     "tidsp_dequantize__ref"},
    {CS_OP_K_CONV2D_I8, "tidsp_conv2d_i8", "tidsp_conv2d_params", 4, {I8, I8, I32, ANY}, 1u << 2, I8,
     "tidsp_conv2d_i8__ref"},
    {CS_OP_K_CONV2D_F32, "tidsp_conv2d_f32", "tidsp_conv2d_params", 3, {F32, F32, F32}, 1u << 2, F32, NULL},
    {CS_OP_K_MATMUL_I8, "tidsp_matmul_i8", "tidsp_matmul_params", 4, {I8, I8, I32, ANY}, 1u << 2, I8,
     "tidsp_matmul_i8__ref"},
    {CS_OP_K_MATMUL_F32, "tidsp_matmul_f32", "tidsp_matmul_f32_params", 3, {F32, F32, F32}, 1u << 2, F32, NULL},
    {CS_OP_K_BATCH_MATMUL_I8, "tidsp_batch_matmul_i8", "tidsp_batch_matmul_i8_params", 3, {I8, I8, ANY}, 0,
     I8, "tidsp_batch_matmul_i8__ref"},
    {CS_OP_K_ADD_I8, "tidsp_add_i8", "tidsp_add_i8_params", 2, {I8, I8}, 0, I8, "tidsp_add_i8__ref"},
    {CS_OP_K_MUL_I8, "tidsp_mul_i8", "tidsp_mul_i8_params", 2, {I8, I8}, 0, I8, "tidsp_mul_i8__ref"},
    {CS_OP_K_BINARY_F32, "tidsp_binary_f32", "tidsp_binary_f32_params", 2, {F32, F32}, 0, F32, NULL},
    {CS_OP_K_LUT_I8, "tidsp_lut_i8", "tidsp_lut_params", 2, {I8, I8}, 0, I8, "tidsp_lut_i8__ref"},
    {CS_OP_K_UNARY_F32, "tidsp_unary_f32", "tidsp_unary_f32_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_MAXPOOL_I8, "tidsp_maxpool_i8", "tidsp_pool2d_params", 1, {I8}, 0, I8,
     "tidsp_maxpool_i8__ref"},
    {CS_OP_K_MAXPOOL_F32, "tidsp_maxpool_f32", "tidsp_pool2d_params", 1, {F32}, 0, F32,
     "tidsp_maxpool_f32__ref"},
    {CS_OP_K_AVGPOOL_I8, "tidsp_avgpool_i8", "tidsp_avgpool_i8_params", 2, {ANY, I8}, 1u << 0, I8, NULL},
    {CS_OP_K_AVGPOOL_F32, "tidsp_avgpool_f32", "tidsp_pool2d_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_GAP_I8, "tidsp_global_avgpool_i8", "tidsp_gap_i8_params", 2, {ANY, I8}, 0, I8,
     "tidsp_global_avgpool_i8__ref"},
    {CS_OP_K_GAP_F32, "tidsp_global_avgpool_f32", "tidsp_gap_f32_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_REDUCE_MEAN_F32, "tidsp_reduce_mean_f32", "tidsp_reduce_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_SOFTMAX_F32, "tidsp_softmax_f32", "tidsp_softmax_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_SOFTMAX_I8, "tidsp_softmax_i8", "tidsp_softmax_i8_params", 2, {F32, I8}, 0, I8, NULL},
    {CS_OP_K_LAYER_NORM_F32, "tidsp_layer_norm_f32", "tidsp_layer_norm_params", 3, {F32, F32, F32}, 1u << 2,
     F32, "tidsp_layer_norm_f32__ref"},
    {CS_OP_K_LAYER_NORM_I8, "tidsp_layer_norm_i8", "tidsp_layer_norm_i8_params", 3, {I8, F32, F32}, 1u << 2, I8,
     "tidsp_layer_norm_i8__ref"},
    {CS_OP_K_TRANSPOSE, "tidsp_transpose", "tidsp_transpose_params", 1, {ANY}, 0, ANY,
     "tidsp_transpose__ref"},
    {CS_OP_K_SLICE, "tidsp_slice", "tidsp_slice_params", 1, {ANY}, 0, ANY, "tidsp_slice__ref"},
    {CS_OP_K_CONCAT, "tidsp_concat", "tidsp_concat_params", -1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_PAD, "tidsp_pad", "tidsp_pad_params", 1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_COPY, "tidsp_copy", NULL, 1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_GATHER, "tidsp_gather", "tidsp_gather_params", 2, {ANY, ANY}, 0, ANY, NULL},
    {CS_OP_K_WHERE, "tidsp_where", "tidsp_where_params", 3, {ANY, ANY, ANY}, 0, ANY, NULL},
    {CS_OP_K_EXPAND, "tidsp_expand", "tidsp_expand_params", 1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_CAST, "tidsp_cast", "tidsp_cast_params", 1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_DEQUANT_VECMATMUL, "c7x_dequantize_vecmatmul", NULL, 3, {F32, I8, F32}, 0, F32, NULL},
    {CS_OP_K_SDPA_DECODE, "c7x_sdpa_decode", NULL, 4, {F32, F32, F32, F32}, 1u << 3, F32, NULL},
    /* MMALIB offload (-mmalib=1): the spec's extern symbols, no param
     * struct; their int32 arguments: kExternArgs below. */
    {CS_OP_K_MMALIB_CONV2D_I8, "mmalib_conv2d_i8", NULL, 5, {I8, I8, I32, U8, U8}, 0, I8, NULL},
    {CS_OP_K_MMALIB_CONV2D_I8_GROUPED, "mmalib_conv2d_i8_grouped_loop", NULL, 5, {I8, I8, I32, U8, U8}, 0, I8,
     NULL},
    {CS_OP_K_MMALIB_DWCONV2D_I8, "mmalib_depthwise_conv2d_i8", NULL, 5, {I8, I8, I32, U8, U8}, 0, I8, NULL},
    {CS_OP_K_MMALIB_FC_I8, "mmalib_matmul_bias_i8", NULL, 5, {I8, I8, I32, U8, U8}, 0, I8, NULL},
    /* the params blob is `const c7x_residual_add_params *`: passed as void * */
    {CS_OP_K_C7X_RESIDUAL_ADD_I8, "c7x_int8_residual_add_relu", NULL, 3, {I8, I8, ANY}, 0, I8, NULL},
    /* int16: int64 bias; the legalize path's matmul has no bias/scale/shift */
    {CS_OP_K_MMALIB_CONV2D_I16, "mmalib_conv2d_i16", NULL, 5, {I16, I16, I64, U8, U8}, 1u << 2, I16, NULL},
    {CS_OP_K_MMALIB_DWCONV2D_I16, "mmalib_depthwise_conv2d_i16", NULL, 5, {I16, I16, I64, U8, U8}, 0, I16, NULL},
    {CS_OP_K_MMALIB_FC_I16, "mmalib_matmul_bias_i16", NULL, 5, {I16, I16, I64, U8, U8}, 0, I16, NULL},
    {CS_OP_K_MMALIB_MATMUL_I16, "mmalib_matmul_i16", NULL, 2, {I16, I16}, 0, I16, NULL},
    {CS_OP_K_C7X_RESIDUAL_ADD_I16, "c7x_int16_residual_add_relu", NULL, 3, {I16, I16, ANY}, 0, I16, NULL},
    {CS_OP_K_C7X_MAXPOOL_I8, "c7x_int8_max_pool", NULL, 1, {I8}, 0, I8, NULL},
    {CS_OP_K_C7X_MAXPOOL_TIDL_I8, "c7x_int8_max_pool_tidl", NULL, 1, {I8}, 0, I8, NULL},
};

/* The int32 arguments after the output pointer, named as in
 * include/cstatic/mmalib.h. */
static const struct {
  cs_op op;
  const char *args;
} kExternArgs[] = {
    {CS_OP_K_MMALIB_CONV2D_I8,
     "C_in, H_in, W_in, C_out, KH, KW, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right"},
    {CS_OP_K_MMALIB_CONV2D_I8_GROUPED,
     "C_in, H_in, W_in, C_out, KH, KW, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right, groups"},
    {CS_OP_K_MMALIB_DWCONV2D_I8,
     "channels, H_in, W_in, KH, KW, stride_h, stride_w, pad_t, pad_b, pad_l, pad_r, num_groups"},
    {CS_OP_K_MMALIB_FC_I8, "M, K, N"},
    {CS_OP_K_DEQUANT_VECMATMUL, "M, K, N"},
    {CS_OP_K_SDPA_DECODE, "nq, nkv, hd, L"},
    {CS_OP_K_C7X_RESIDUAL_ADD_I8, "n, has_relu"},
    {CS_OP_K_MMALIB_CONV2D_I16,
     "C_in, H_in, W_in, C_out, KH, KW, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right"},
    {CS_OP_K_MMALIB_DWCONV2D_I16,
     "channels, H_in, W_in, KH, KW, stride_h, stride_w, pad_t, pad_b, pad_l, pad_r, num_groups"},
    {CS_OP_K_MMALIB_FC_I16, "M, K, N"},
    {CS_OP_K_MMALIB_MATMUL_I16, "M, K, N, shift"},
    {CS_OP_K_C7X_RESIDUAL_ADD_I16, "n, has_relu"},
    {CS_OP_K_C7X_MAXPOOL_I8, "N, C, H_in, W_in, H_out, W_out, kH, kW, sH, sW, pH, pW"},
    {CS_OP_K_C7X_MAXPOOL_TIDL_I8, "N, C, H_in, W_in, H_out, W_out, kH, kW, sH, sW, pH, pW"},
};

const char *cs_kernel_extern_args(cs_op op) {
  for (size_t i = 0; i < sizeof kExternArgs / sizeof kExternArgs[0]; i++)
    if (kExternArgs[i].op == op) return kExternArgs[i].args;
  return NULL;
}

const cs_kernel_info *cs_kernel_info_of(cs_op op) {
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    if (kernels[i].op == op) return &kernels[i];
  return NULL;
}

const char *cs_kernel_fn(const cs_kernel_info *ki, const cs_target *t) {
  if (t && t->kernels == CS_KERNELS_SCALAR && ki->scalar_fn) return ki->scalar_fn;
  return ki->fn;
}

int64_t cs_kernel_macs(const cs_node *n) {
  switch (n->op) {
    case CS_OP_K_CONV2D_I8:
    case CS_OP_K_CONV2D_F32: {
      const tidsp_conv2d_params *p = &n->k.conv;
      int64_t cin_per_group = p->groups > 0 ? p->c_in / p->groups : p->c_in;
      return (int64_t)p->n * p->c_out * p->h_out * p->w_out * cin_per_group * p->k_h * p->k_w;
    }
    case CS_OP_K_BATCH_MATMUL_I8:
      return (int64_t)n->k.batch_matmul.batch * n->k.batch_matmul.m * n->k.batch_matmul.k * n->k.batch_matmul.n;
    case CS_OP_K_MATMUL_I8:
      return (int64_t)n->k.matmul.m * n->k.matmul.k * n->k.matmul.n;
    case CS_OP_K_MMALIB_CONV2D_I8:
    case CS_OP_K_MMALIB_CONV2D_I8_GROUPED:
    case CS_OP_K_MMALIB_DWCONV2D_I8:
    case CS_OP_K_MMALIB_FC_I8:
    case CS_OP_K_MMALIB_CONV2D_I16:
    case CS_OP_K_MMALIB_DWCONV2D_I16:
    case CS_OP_K_MMALIB_FC_I16:
    case CS_OP_K_MMALIB_MATMUL_I16:
    case CS_OP_K_DEQUANT_VECMATMUL: {
      /* MACs from the weights (numel) times output positions. */
      int cnt = 0;
      const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
      if (!a) return 0;
      if (n->op == CS_OP_K_MMALIB_FC_I8 || n->op == CS_OP_K_MMALIB_FC_I16 || n->op == CS_OP_K_MMALIB_MATMUL_I16 ||
          n->op == CS_OP_K_DEQUANT_VECMATMUL)
        return cnt >= 3 ? a[0] * a[1] * a[2] : 0;
      int dw = n->op == CS_OP_K_MMALIB_DWCONV2D_I8 || n->op == CS_OP_K_MMALIB_DWCONV2D_I16;
      if (cnt < 12) return 0;
      int64_t kh = a[dw ? 3 : 4], kw = a[dw ? 4 : 5], s = a[dw ? 5 : 6];
      const int64_t *p = a + (dw ? 7 : 8);
      if (s < 1) return 0;
      int64_t ho = (a[1] + p[0] + p[1] - kh) / s + 1, wo = (a[2] + p[2] + p[3] - kw) / s + 1;
      if (dw) return a[0] * ho * wo * kh * kw;
      int64_t groups = cnt == 13 && a[12] > 0 ? a[12] : 1;
      return a[3] * ho * wo * (a[0] / groups) * kh * kw;
    }
    case CS_OP_K_MATMUL_F32:
      return (int64_t)n->k.matmul_f32.batch * n->k.matmul_f32.m * n->k.matmul_f32.k *
             n->k.matmul_f32.n;
    default:
      return 0;
  }
}
