/*
 * The kernel table: for every kernel op, the runtime function it calls and
 * the types of its pointer arguments (include/cstatic/kernels.h). Codegen
 * checks each node's tensors against it, so a dtype mistake in a pass is a
 * compiler error naming the node, not a C compile error in lib0.c.
 */
#include "cg.h"

#define F32 CS_DTYPE_F32
#define I8 CS_DTYPE_I8
#define I32 CS_DTYPE_I32
#define ANY CS_DTYPE_UNDEF

static const cs_kernel_info kernels[] = {
    /* op, function, params, n_inputs, input dtypes, optional mask, output
     * [, the reference loop of a dispatched kernel (-kernels=scalar)] */
    {CS_OP_K_QUANTIZE, "tidsp_quantize", "tidsp_qdq_params", 3, {F32, I32, F32}, 0, ANY, NULL},
    {CS_OP_K_DEQUANTIZE, "tidsp_dequantize", "tidsp_qdq_params", 3, {F32, I32, ANY}, 0, F32, NULL},
    {CS_OP_K_CONV2D_I8, "tidsp_conv2d_i8", "tidsp_conv2d_params", 4, {I8, I8, I32, ANY}, 1u << 2, I8,
     "tidsp_conv2d_i8__ref"},
    {CS_OP_K_CONV2D_F32, "tidsp_conv2d_f32", "tidsp_conv2d_params", 3, {F32, F32, F32}, 1u << 2, F32, NULL},
    {CS_OP_K_MATMUL_I8, "tidsp_matmul_i8", "tidsp_matmul_params", 4, {I8, I8, I32, ANY}, 1u << 2, I8,
     "tidsp_matmul_i8__ref"},
    {CS_OP_K_MATMUL_F32, "tidsp_matmul_f32", "tidsp_matmul_f32_params", 3, {F32, F32, F32}, 1u << 2, F32, NULL},
    {CS_OP_K_ADD_I8, "tidsp_add_i8", "tidsp_add_i8_params", 2, {I8, I8}, 0, I8, NULL},
    {CS_OP_K_MUL_I8, "tidsp_mul_i8", "tidsp_mul_i8_params", 2, {I8, I8}, 0, I8, NULL},
    {CS_OP_K_BINARY_F32, "tidsp_binary_f32", "tidsp_binary_f32_params", 2, {F32, F32}, 0, F32, NULL},
    {CS_OP_K_LUT_I8, "tidsp_lut_i8", "tidsp_lut_params", 2, {I8, I8}, 0, I8, NULL},
    {CS_OP_K_UNARY_F32, "tidsp_unary_f32", "tidsp_unary_f32_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_MAXPOOL_I8, "tidsp_maxpool_i8", "tidsp_pool2d_params", 1, {I8}, 0, I8, NULL},
    {CS_OP_K_MAXPOOL_F32, "tidsp_maxpool_f32", "tidsp_pool2d_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_AVGPOOL_I8, "tidsp_avgpool_i8", "tidsp_avgpool_i8_params", 2, {ANY, I8}, 1u << 0, I8, NULL},
    {CS_OP_K_AVGPOOL_F32, "tidsp_avgpool_f32", "tidsp_pool2d_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_GAP_I8, "tidsp_global_avgpool_i8", "tidsp_gap_i8_params", 2, {ANY, I8}, 0, I8, NULL},
    {CS_OP_K_GAP_F32, "tidsp_global_avgpool_f32", "tidsp_gap_f32_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_REDUCE_MEAN_F32, "tidsp_reduce_mean_f32", "tidsp_reduce_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_SOFTMAX_F32, "tidsp_softmax_f32", "tidsp_softmax_params", 1, {F32}, 0, F32, NULL},
    {CS_OP_K_TRANSPOSE, "tidsp_transpose", "tidsp_transpose_params", 1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_SLICE, "tidsp_slice", "tidsp_slice_params", 1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_CONCAT, "tidsp_concat", "tidsp_concat_params", -1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_PAD, "tidsp_pad", "tidsp_pad_params", 1, {ANY}, 0, ANY, NULL},
    {CS_OP_K_COPY, "tidsp_copy", NULL, 1, {ANY}, 0, ANY, NULL},
};

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
    case CS_OP_K_MATMUL_I8:
      return (int64_t)n->k.matmul.m * n->k.matmul.k * n->k.matmul.n;
    case CS_OP_K_MATMUL_F32:
      return (int64_t)n->k.matmul_f32.batch * n->k.matmul_f32.m * n->k.matmul_f32.k *
             n->k.matmul_f32.n;
    default:
      return 0;
  }
}
