/*
 * runtime_files.c — which files of the runtime a compiled model needs, so
 * that a model can be built with exactly those (a microcontroller's
 * firmware, another toolchain): the manifest's "runtime_sources" and
 * `cstatic compile --emit=runtime`.
 *
 * One row per file of runtime/ (paths relative to it): the external
 * symbols it defines and what it needs — the .c files defining the symbols
 * it calls, the private headers it includes. A model needs the files
 * defining the runtime symbols its generated C calls, and everything those
 * need, transitively. The public headers (include/cstatic) are always
 * needed and are not rows.
 *
 * The rows are what `nm` and the #include lines of the sources say;
 * tests/e2e/test_runtime_files.py derives them from the build's objects
 * and fails, printing the rows to paste here, when a runtime file is
 * added, removed or changes what it calls. One row is by hand:
 * profile/c7x_clock.c defines tidsp_profile_clock on the C7x only (TI's
 * compiler), so both clocks are listed wherever the clock is called and
 * each compiles to nothing on the other's platform.
 */
#include <stdint.h>
#include <string.h>

#include "codegen.h"

typedef struct rt_file {
  const char *path;    /* relative to runtime/ */
  const char *defines; /* space-separated symbols */
  const char *needs;   /* space-separated paths relative to runtime/ */
} rt_file;

static const rt_file files[] = {
    {.path = "dma/dma_host.c",
     .defines = "tidsp_dma_commit tidsp_dma_copy tidsp_dma_copy_2d tidsp_dma_host_lazy tidsp_dma_shutdown "
                "tidsp_dma_start tidsp_dma_trace_begin tidsp_dma_trace_bind tidsp_dma_trace_count "
                "tidsp_dma_trace_end tidsp_dma_wait",
     .needs = "profile/c7x_clock.c profile/host_clock.c"},
    {.path = "kernels/dispatch.c",
     .defines = "tidsp_add_i8 tidsp_avgpool_f32 tidsp_avgpool_i8 tidsp_batch_matmul_i8 tidsp_binary_f32 "
                "tidsp_channel_affine_i8 tidsp_conv2d_f32 tidsp_conv2d_i8 tidsp_conv_transpose2d_f32 "
                "tidsp_conv_transpose_nd_f32 tidsp_dequantize tidsp_expand tidsp_global_avgpool_i8 "
                "tidsp_kernel_variant_active tidsp_kernel_variant_count tidsp_kernel_variants "
                "tidsp_kernels_select tidsp_layer_norm_f32 tidsp_layer_norm_i8 tidsp_lut_i8 "
                "tidsp_lut_i8_channels tidsp_matmul_f32 tidsp_matmul_i8 tidsp_maxpool_f32 tidsp_maxpool_i8 "
                "tidsp_mul_i8 tidsp_prelu_f32 tidsp_quantize tidsp_reduce_mean_dq_i8 tidsp_slice "
                "tidsp_softmax_f32 tidsp_softmax_i8 tidsp_transpose tidsp_unary_f32",
     .needs = "kernels/host/avgpool_f32__host.c kernels/host/channel_affine_i8__host_avx2.c "
              "kernels/host/channel_affine_i8__host_avx512.c kernels/host/conv2d_f32__host_mlas.c "
              "kernels/host/conv2d_i8__host_amx.c kernels/host/conv2d_i8__host_avx2.c "
              "kernels/host/conv2d_i8__host_avx512vnni.c kernels/host/conv_transpose2d_f32__host_mlas.c "
              "kernels/host/dwconv2d_i8__host_avx2.c kernels/host/dwconv2d_i8__host_avx512vnni.c "
              "kernels/host/eltwise_f32__host.c kernels/host/eltwise_i8__host_avx2.c "
              "kernels/host/eltwise_i8__host_avx512.c kernels/host/layer_norm__host_fma.c "
              "kernels/host/matmul_f32__host_mlas.c kernels/host/matmul_i8__host_amx.c "
              "kernels/host/matmul_i8__host_avx2.c kernels/host/matmul_i8__host_avx512vnni.c "
              "kernels/host/movement__host.c kernels/host/pool__host_avx2.c kernels/host/pool__host_avx512.c "
              "kernels/host/qdq__host_avx2.c kernels/host/qdq__host_avx512.c "
              "kernels/host/reduce_mean_dq_i8__host_avx512.c kernels/host/softmax_f32__host_avx512.c "
              "kernels/host/softmax_i8__host_avx512.c kernels/kernel_variants.h kernels/ref/add_i8.c "
              "kernels/ref/avgpool_f32.c kernels/ref/avgpool_i8.c kernels/ref/batch_matmul_i8.c "
              "kernels/ref/binary_f32.c kernels/ref/channel_affine_i8.c kernels/ref/conv2d_f32.c "
              "kernels/ref/conv2d_i8.c kernels/ref/conv_transpose2d_f32.c kernels/ref/conv_transpose_nd_f32.c "
              "kernels/ref/dequantize.c kernels/ref/expand.c kernels/ref/global_avgpool_i8.c "
              "kernels/ref/layer_norm_f32.c kernels/ref/lut_i8.c kernels/ref/lut_i8_channels.c "
              "kernels/ref/matmul_f32.c kernels/ref/matmul_i8.c kernels/ref/maxpool_f32.c "
              "kernels/ref/maxpool_i8.c kernels/ref/mul_i8.c kernels/ref/prelu_f32.c kernels/ref/quantize.c "
              "kernels/ref/reduce_mean_dq_i8.c kernels/ref/slice.c kernels/ref/softmax_f32.c "
              "kernels/ref/softmax_i8.c kernels/ref/transpose.c kernels/ref/unary_f32.c"},
    {.path = "kernels/host/amx_internal.h",
     .defines = "",
     .needs = "kernels/host/rq_internal.h kernels/host/zmm_transpose.h"},
    {.path = "kernels/host/avgpool_f32__host.c",
     .defines = "tidsp_avgpool_f32__host",
     .needs = "kernels/kernel_variants.h kernels/ref/avgpool_f32.c kernels/ref/pool2d.c "
              "kernels/ref/ref_internal.h"},
    {.path = "kernels/host/avgpool_i8_body.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/channel_affine_i8__host_avx2.c",
     .defines = "tidsp_channel_affine_i8__host_avx2",
     .needs = "kernels/host/channel_affine_i8_body.h kernels/kernel_variants.h "
              "kernels/ref/channel_affine_internal.h"},
    {.path = "kernels/host/channel_affine_i8__host_avx512.c",
     .defines = "tidsp_channel_affine_i8__host_avx512",
     .needs = "kernels/host/channel_affine_i8_body.h kernels/kernel_variants.h "
              "kernels/ref/channel_affine_internal.h"},
    {.path = "kernels/host/channel_affine_i8_body.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/conv2d_f32__host_mlas.c",
     .defines = "tidsp_conv2d_f32__host_mlas tidsp_conv2d_f32__host_mlas_lanes",
     .needs = "kernels/host/conv2d_f32_nchw_body.h kernels/host/conv2d_f32_tile_body.h "
              "kernels/host/fma_exact_begin.h kernels/host/fma_exact_end.h kernels/kernel_variants.h "
              "kernels/ref/conv2d_f32.c kernels/ref/conv_internal.h kernels/ref/mlas_block.c"},
    {.path = "kernels/host/conv2d_f32_nchw_body.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/conv2d_f32_tile_body.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/conv2d_i8__host_amx.c",
     .defines = "tidsp_conv2d_i8__host_amx tidsp_conv2d_i8__host_amx_tiles tidsp_host_amx_supported",
     .needs = "kernels/host/amx_internal.h kernels/host/conv2d_i8__host_avx512vnni.c kernels/ref/conv2d_i8.c"},
    {.path = "kernels/host/conv2d_i8__host_avx2.c",
     .defines = "tidsp_conv2d_i8__host_avx2",
     .needs = "kernels/host/rq_internal.h kernels/ref/conv2d_i8.c"},
    {.path = "kernels/host/conv2d_i8__host_avx512vnni.c",
     .defines = "tidsp_conv2d_i8__host_avx512vnni",
     .needs = "kernels/host/rq_internal.h kernels/host/zmm_transpose.h kernels/ref/conv2d_i8.c"},
    {.path = "kernels/host/conv_transpose2d_f32__host_mlas.c",
     .defines = "tidsp_conv_transpose2d_f32__host_mlas tidsp_conv_transpose2d_f32__host_mlas_lanes "
                "tidsp_conv_transpose_nd_f32__host_mlas tidsp_conv_transpose_nd_f32__host_mlas_lanes",
     .needs = "kernels/host/fma_exact_begin.h kernels/host/fma_exact_end.h kernels/host/matmul_f32__host_mlas.c "
              "kernels/kernel_variants.h kernels/ref/conv_internal.h kernels/ref/conv_transpose2d_f32.c "
              "kernels/ref/conv_transpose_nd_f32.c kernels/ref/mlas_block.c"},
    {.path = "kernels/host/dwconv2d_i8__host_avx2.c",
     .defines = "tidsp_dwconv2d_i8__host_avx2",
     .needs = "kernels/host/conv2d_i8__host_avx2.c kernels/host/dwconv_internal.h"},
    {.path = "kernels/host/dwconv2d_i8__host_avx512vnni.c",
     .defines = "tidsp_dwconv2d_i8__host_avx512vnni",
     .needs = "kernels/host/conv2d_i8__host_avx512vnni.c kernels/host/dwconv2d_i8__host_avx2.c "
              "kernels/host/dwconv_internal.h"},
    {.path = "kernels/host/dwconv_internal.h",
     .defines = "",
     .needs = "kernels/host/rq_internal.h"},
    {.path = "kernels/host/eltwise_f32__host.c",
     .defines = "tidsp_binary_f32__host_avx2 tidsp_binary_f32__host_avx512 tidsp_prelu_f32__host_avx2 "
                "tidsp_prelu_f32__host_avx512 tidsp_unary_f32__host_avx2 tidsp_unary_f32__host_avx512",
     .needs = "kernels/host/eltwise_f32_body.h kernels/host/eltwise_internal.h kernels/host/fma_exact_begin.h "
              "kernels/host/fma_exact_end.h kernels/ref/binary_f32.c kernels/ref/broadcast.c kernels/ref/prelu_f32.c "
              "kernels/ref/unary_f32.c"},
    {.path = "kernels/host/eltwise_f32_body.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/eltwise_i8__host_avx2.c",
     .defines = "tidsp_add_i8__host_avx2 tidsp_lut_i8__host_avx2 tidsp_lut_i8_channels__host_avx2 "
                "tidsp_mul_i8__host_avx2",
     .needs = "kernels/host/eltwise_i8_body.h kernels/host/eltwise_internal.h kernels/ref/add_i8.c "
              "kernels/ref/broadcast.c kernels/ref/lut_i8.c kernels/ref/lut_i8_channels.c kernels/ref/mul_i8.c"},
    {.path = "kernels/host/eltwise_i8__host_avx512.c",
     .defines = "tidsp_add_i8__host_avx512 tidsp_lut_i8__host_avx512 tidsp_lut_i8_channels__host_avx512 "
                "tidsp_mul_i8__host_avx512",
     .needs = "kernels/host/eltwise_i8__host_avx2.c kernels/host/eltwise_i8_body.h "
              "kernels/host/eltwise_internal.h kernels/ref/add_i8.c kernels/ref/broadcast.c "
              "kernels/ref/lut_i8.c kernels/ref/lut_i8_channels.c kernels/ref/mul_i8.c"},
    {.path = "kernels/host/eltwise_i8_body.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/eltwise_internal.h",
     .defines = "",
     .needs = "kernels/kernel_variants.h kernels/ref/ref_internal.h"},
    {.path = "kernels/host/fma_exact_begin.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/fma_exact_end.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/host_internal.h",
     .defines = "",
     .needs = "kernels/kernel_variants.h kernels/ref/conv_internal.h"},
    {.path = "kernels/host/layer_norm__host_fma.c",
     .defines = "tidsp_layer_norm_f32__host_fma tidsp_layer_norm_i8__host_avx512 tidsp_layer_norm_i8__host_fma",
     .needs = "kernels/host/fma_exact_begin.h kernels/host/fma_exact_end.h kernels/kernel_variants.h "
              "kernels/ref/layer_norm_rows.h"},
    {.path = "kernels/host/matmul_f32__host_mlas.c",
     .defines = "tidsp_matmul_f32__host_mlas tidsp_matmul_f32__host_mlas_lanes tidsp_mlas_sgemm_stride_k",
     .needs = "kernels/host/fma_exact_begin.h kernels/host/fma_exact_end.h kernels/host/matmul_f32_tile_body.h "
              "kernels/kernel_variants.h kernels/ref/matmul_f32.c kernels/ref/mlas_block.c"},
    {.path = "kernels/host/matmul_f32_tile_body.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/host/matmul_i8__host_amx.c",
     .defines = "tidsp_matmul_i8__host_amx tidsp_matmul_i8__host_amx_tiles",
     .needs = "kernels/host/amx_internal.h kernels/host/conv2d_i8__host_amx.c "
              "kernels/host/matmul_i8__host_avx512vnni.c kernels/host/zmm_transpose.h kernels/ref/matmul_i8.c"},
    {.path = "kernels/host/matmul_i8__host_avx2.c",
     .defines = "tidsp_matmul_i8__host_avx2",
     .needs = "kernels/host/rq_internal.h kernels/ref/matmul_i8.c"},
    {.path = "kernels/host/matmul_i8__host_avx512vnni.c",
     .defines = "tidsp_matmul_i8__host_avx512vnni",
     .needs = "kernels/host/rq_internal.h kernels/host/zmm_transpose.h kernels/ref/matmul_i8.c"},
    {.path = "kernels/host/movement__host.c",
     .defines = "tidsp_expand__host tidsp_slice__host tidsp_transpose__host",
     .needs = "kernels/kernel_variants.h kernels/ref/expand.c kernels/ref/ref_internal.h kernels/ref/slice.c "
              "kernels/ref/transpose.c"},
    {.path = "kernels/host/pool__host_avx2.c",
     .defines = "tidsp_avgpool_i8__host_avx2 tidsp_global_avgpool_i8__host_avx2 tidsp_maxpool_f32__host_avx2 "
                "tidsp_maxpool_i8__host_avx2",
     .needs = "kernels/host/avgpool_i8_body.h kernels/host/pool_internal.h kernels/ref/avgpool_i8.c "
              "kernels/ref/global_avgpool_i8.c kernels/ref/maxpool_f32.c kernels/ref/maxpool_i8.c "
              "kernels/ref/pool2d.c kernels/ref/requant.c"},
    {.path = "kernels/host/pool__host_avx512.c",
     .defines = "tidsp_avgpool_i8__host_avx512 tidsp_global_avgpool_i8__host_avx512 "
                "tidsp_maxpool_f32__host_avx512 tidsp_maxpool_i8__host_avx512",
     .needs = "kernels/host/avgpool_i8_body.h kernels/host/pool_internal.h kernels/ref/avgpool_i8.c "
              "kernels/ref/global_avgpool_i8.c kernels/ref/maxpool_f32.c kernels/ref/maxpool_i8.c "
              "kernels/ref/pool2d.c kernels/ref/requant.c"},
    {.path = "kernels/host/pool_internal.h",
     .defines = "",
     .needs = "kernels/kernel_variants.h kernels/ref/ref_internal.h"},
    {.path = "kernels/host/qdq__host_avx2.c",
     .defines = "tidsp_dequantize__host_avx2 tidsp_quantize__host_avx2",
     .needs = "kernels/kernel_variants.h kernels/ref/dequantize.c kernels/ref/qdq_internal.h "
              "kernels/ref/quantize.c tidsp.c"},
    {.path = "kernels/host/qdq__host_avx512.c",
     .defines = "tidsp_dequantize__host_avx512 tidsp_quantize__host_avx512",
     .needs = "kernels/kernel_variants.h kernels/ref/dequantize.c kernels/ref/qdq_internal.h "
              "kernels/ref/quantize.c tidsp.c"},
    {.path = "kernels/host/reduce_mean_dq_i8__host_avx512.c",
     .defines = "tidsp_reduce_mean_dq_i8__host_avx512",
     .needs = "kernels/host/zmm_transpose.h kernels/ref/reduce_mean_dq_i8.c kernels/ref/reduce_mean_internal.h "
              "kernels/ref/ref_internal.h"},
    {.path = "kernels/host/rq_internal.h",
     .defines = "",
     .needs = "kernels/host/host_internal.h"},
    {.path = "kernels/host/softmax_f32__host_avx512.c",
     .defines = "tidsp_softmax_f32__host_avx512",
     .needs = "kernels/kernel_variants.h kernels/ref/softmax_f32.c"},
    {.path = "kernels/host/softmax_i8__host_avx512.c",
     .defines = "tidsp_softmax_i8__host_avx512",
     .needs = "kernels/kernel_variants.h kernels/ref/softmax_i8.c"},
    {.path = "kernels/host/zmm_transpose.h",
     .defines = "",
     .needs = "kernels/kernel_variants.h"},
    {.path = "kernels/kernel_variants.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/mmalib/c7x_max_pool.c",
     .defines = "c7x_int8_max_pool c7x_int8_max_pool__ref c7x_int8_max_pool_tidl c7x_int8_max_pool_tidl__ref",
     .needs = "kernels/dispatch.c kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/c7x_residual_add.c",
     .defines = "c7x_int16_residual_add_relu c7x_int8_residual_add_relu",
     .needs = "kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/mmalib_batch_matmul.c",
     .defines = "mmalib_batch_matmul_i16",
     .needs = "kernels/mmalib/mmalib_internal.h kernels/mmalib/mmalib_matmul.c"},
    {.path = "kernels/mmalib/mmalib_common.c",
     .defines = "tidsp_mmalib_conv_geom_init tidsp_mmalib_shifts_ok",
     .needs = "kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/mmalib_conv2d.c",
     .defines = "mmalib_conv2d_i16 mmalib_conv2d_i8 mmalib_conv2d_i8__ref tidsp_mmalib_conv2d_i8_scalar "
                "tidsp_mmalib_conv2d_i16_compute",
     .needs = "kernels/mmalib/mmalib_common.c kernels/mmalib/mmalib_i8_dispatched.c "
              "kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/mmalib_conv2d_grouped.c",
     .defines = "mmalib_conv2d_i8_grouped_loop mmalib_conv2d_i8_grouped_loop__ref",
     .needs = "kernels/mmalib/mmalib_common.c kernels/mmalib/mmalib_i8_dispatched.c "
              "kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/mmalib_conv2d_sliced.c",
     .defines = "mmalib_conv2d_i16_sliced mmalib_conv2d_i8_sliced",
     .needs = "kernels/mmalib/mmalib_common.c kernels/mmalib/mmalib_conv2d.c "
              "kernels/mmalib/mmalib_i8_dispatched.c kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/mmalib_depthwise_conv2d.c",
     .defines = "mmalib_depthwise_conv2d_i16 mmalib_depthwise_conv2d_i8 mmalib_depthwise_conv2d_i8__ref",
     .needs = "kernels/mmalib/mmalib_common.c kernels/mmalib/mmalib_i8_dispatched.c "
              "kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/mmalib_i8_dispatched.c",
     .defines = "tidsp_mmalib_conv2d_i8_compute tidsp_mmalib_conv2d_i8_dispatched tidsp_mmalib_i8_fits_int32 "
                "tidsp_mmalib_matmul_bias_i8_compute tidsp_mmalib_matmul_bias_i8_dispatched",
     .needs = "kernels/dispatch.c kernels/mmalib/mmalib_conv2d.c kernels/mmalib/mmalib_internal.h "
              "kernels/mmalib/mmalib_matmul.c"},
    {.path = "kernels/mmalib/mmalib_internal.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/mmalib/mmalib_matmul.c",
     .defines = "mmalib_matmul_bias_i16 mmalib_matmul_bias_i8 mmalib_matmul_bias_i8__ref mmalib_matmul_i16 "
                "mmalib_matmul_i8 tidsp_mmalib_matmul_bias_i8_scalar",
     .needs = "kernels/mmalib/mmalib_common.c kernels/mmalib/mmalib_i8_dispatched.c "
              "kernels/mmalib/mmalib_internal.h"},
    {.path = "kernels/mmalib/tidl_bridge.c",
     .defines = "tidl_bridge_init_all",
     .needs = ""},
    {.path = "kernels/ref/add_i8.c",
     .defines = "tidsp_add_i8__ref",
     .needs = "kernels/ref/broadcast.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/avgpool_f32.c",
     .defines = "tidsp_avgpool_f32__ref",
     .needs = "kernels/ref/pool2d.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/avgpool_i8.c",
     .defines = "tidsp_avgpool_i8__ref",
     .needs = "kernels/ref/pool2d.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/batch_matmul_exact_requant.c",
     .defines = "tidsp_batch_matmul_exact_requant",
     .needs = "kernels/ref/ref_internal.h kernels/ref/requant.c"},
    {.path = "kernels/ref/batch_matmul_i8.c",
     .defines = "tidsp_batch_matmul_i8__ref tidsp_batch_matmul_i8_with",
     .needs = "kernels/kernel_variants.h kernels/ref/matmul_i8.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/binary.c",
     .defines = "tidsp_binary",
     .needs = "kernels/ref/broadcast.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/binary_f32.c",
     .defines = "tidsp_binary_f32__ref",
     .needs = "kernels/ref/broadcast.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/broadcast.c",
     .defines = "tidsp_ref_bc_init",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/cast.c",
     .defines = "tidsp_cast",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/channel_affine_i16.c",
     .defines = "tidsp_channel_affine_i16",
     .needs = "kernels/ref/channel_affine_internal.h"},
    {.path = "kernels/ref/channel_affine_i8.c",
     .defines = "tidsp_channel_affine_i8__ref",
     .needs = "kernels/ref/channel_affine_internal.h"},
    {.path = "kernels/ref/channel_affine_internal.h",
     .defines = "",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/concat.c",
     .defines = "tidsp_concat",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/conv2d_f32.c",
     .defines = "tidsp_conv2d_f32__ref",
     .needs = "kernels/kernel_variants.h kernels/ref/conv_internal.h kernels/ref/mlas_block.c"},
    {.path = "kernels/ref/conv2d_i8.c",
     .defines = "tidsp_conv2d_i8__ref",
     .needs = "kernels/kernel_variants.h kernels/ref/conv_internal.h kernels/ref/requant.c"},
    {.path = "kernels/ref/conv_internal.h",
     .defines = "",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/conv_transpose2d_f32.c",
     .defines = "tidsp_conv_transpose2d_f32__ref",
     .needs = "kernels/ref/conv_internal.h"},
    {.path = "kernels/ref/conv_transpose_nd_f32.c",
     .defines = "tidsp_conv_transpose_nd_f32__ref",
     .needs = "kernels/ref/conv_internal.h"},
    {.path = "kernels/ref/copy.c",
     .defines = "tidsp_copy",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/dequantize.c",
     .defines = "tidsp_dequantize__ref",
     .needs = "kernels/ref/qdq_internal.h"},
    {.path = "kernels/ref/dequantize_vecmatmul.c",
     .defines = "c7x_dequantize_vecmatmul",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/expand.c",
     .defines = "tidsp_expand__ref",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/gather.c",
     .defines = "tidsp_gather",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/gather_nd.c",
     .defines = "tidsp_gather_nd",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/global_avgpool_f32.c",
     .defines = "tidsp_global_avgpool_f32",
     .needs = "kernels/kernel_variants.h kernels/ref/mlas_block.c kernels/ref/ort_float.h"},
    {.path = "kernels/ref/global_avgpool_i8.c",
     .defines = "tidsp_global_avgpool_i8__ref",
     .needs = "kernels/ref/ref_internal.h kernels/ref/requant.c"},
    {.path = "kernels/ref/layer_norm_f32.c",
     .defines = "tidsp_layer_norm_f32__ref tidsp_layer_norm_i8__ref",
     .needs = "kernels/ref/layer_norm_rows.h"},
    {.path = "kernels/ref/layer_norm_rows.h",
     .defines = "",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/lut_i16.c",
     .defines = "tidsp_lut_i16",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/lut_i8.c",
     .defines = "tidsp_lut_i8__ref",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/lut_i8_channels.c",
     .defines = "tidsp_lut_i8_channels__ref tidsp_ref_lut_channels",
     .needs = "kernels/ref/lut_i8.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/lut_i8_select.c",
     .defines = "tidsp_lut_i8_select",
     .needs = "kernels/dispatch.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/matmul_f32.c",
     .defines = "tidsp_matmul_f32__ref",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/matmul_i8.c",
     .defines = "tidsp_matmul_i8__ref",
     .needs = "kernels/kernel_variants.h kernels/ref/conv_internal.h kernels/ref/requant.c"},
    {.path = "kernels/ref/maxpool_f32.c",
     .defines = "tidsp_maxpool_f32__ref",
     .needs = "kernels/ref/pool2d.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/maxpool_i8.c",
     .defines = "tidsp_maxpool_i8__ref",
     .needs = "kernels/ref/pool2d.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/mlas_block.c",
     .defines = "tidsp_mlas_block_bit tidsp_mlas_f32_block",
     .needs = "kernels/kernel_variants.h"},
    {.path = "kernels/ref/mmalib_exact_requant.c",
     .defines = "tidsp_mmalib_exact_requant tidsp_mmalib_exact_requant_i16 tidsp_mmalib_exact_requant_lut16",
     .needs = "kernels/ref/ref_internal.h kernels/ref/requant.c"},
    {.path = "kernels/ref/mul_i8.c",
     .defines = "tidsp_mul_i8__ref",
     .needs = "kernels/ref/broadcast.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/ort_float.h",
     .defines = "",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/pad.c",
     .defines = "tidsp_pad",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/pool2d.c",
     .defines = "tidsp_ref_pool2d_check tidsp_ref_pool2d_check_nonempty tidsp_ref_pool2d_counts "
                "tidsp_ref_pool2d_window tidsp_ref_taps_inside",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/pool_nd.c",
     .defines = "tidsp_pool_nd",
     .needs = "kernels/ref/pool2d.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/prelu_f32.c",
     .defines = "tidsp_prelu_f32__ref",
     .needs = "kernels/ref/broadcast.c kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/qdq_internal.h",
     .defines = "",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/quantize.c",
     .defines = "tidsp_quantize__ref",
     .needs = "kernels/ref/qdq_internal.h"},
    {.path = "kernels/ref/reduce_l2_f32.c",
     .defines = "tidsp_reduce_l2_f32",
     .needs = "kernels/ref/ort_float.h"},
    {.path = "kernels/ref/reduce_mean_dq_i8.c",
     .defines = "tidsp_reduce_mean_dq_i8__ref",
     .needs = "kernels/ref/reduce_mean_internal.h"},
    {.path = "kernels/ref/reduce_mean_f32.c",
     .defines = "tidsp_reduce_mean_f32",
     .needs = "kernels/ref/reduce_mean_internal.h"},
    {.path = "kernels/ref/reduce_mean_internal.h",
     .defines = "",
     .needs = "kernels/ref/ort_float.h"},
    {.path = "kernels/ref/ref_internal.h",
     .defines = "",
     .needs = "kernels/ref/softfloat.h"},
    {.path = "kernels/ref/requant.c",
     .defines = "tidsp_ref_rq_init tidsp_requant_one",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/scatter_nd.c",
     .defines = "tidsp_scatter_nd",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/sdpa_decode.c",
     .defines = "c7x_sdpa_decode",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/slice.c",
     .defines = "tidsp_slice__ref",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/softfloat.h",
     .defines = "",
     .needs = ""},
    {.path = "kernels/ref/softmax_f32.c",
     .defines = "tidsp_softmax_f32__ref",
     .needs = "kernels/kernel_variants.h kernels/ref/ort_float.h"},
    {.path = "kernels/ref/softmax_i8.c",
     .defines = "tidsp_softmax_i8__ref",
     .needs = "kernels/kernel_variants.h kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/transpose.c",
     .defines = "tidsp_transpose__ref",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/unary_f32.c",
     .defines = "tidsp_unary_f32__ref",
     .needs = "kernels/ref/ort_float.h"},
    {.path = "kernels/ref/where.c",
     .defines = "tidsp_where",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "kernels/ref/widen_i16.c",
     .defines = "tidsp_widen_i16",
     .needs = "kernels/ref/ref_internal.h"},
    {.path = "mem/l2.c",
     .defines = "tidsp_l2_bind tidsp_l2_scratch",
     .needs = "dma/dma_host.c"},
    {.path = "model/weights_check.c",
     .defines = "tidsp_fnv1a64 tidsp_weights_check",
     .needs = ""},
    {.path = "profile/c7x_clock.c",
     .defines = "tidsp_profile_clock",
     .needs = ""},
    {.path = "profile/host_clock.c",
     .defines = "tidsp_profile_clock",
     .needs = ""},
    {.path = "profile/profile.c",
     .defines = "tidsp_profile_reset",
     .needs = ""},
    {.path = "profile/report.c",
     .defines = "tidsp_profile_format_csv tidsp_profile_format_table",
     .needs = ""},
    {.path = "tidsp.c",
     .defines = "tidsp_dtype_size tidsp_status_str",
     .needs = ""},
};

enum { N_FILES = (int)(sizeof files / sizeof files[0]) };
_Static_assert((int)N_FILES <= (int)CS_RUNTIME_FILES_MAX, "raise CS_RUNTIME_FILES_MAX");

int cs_runtime_file_count(void) { return N_FILES; }

const char *cs_runtime_file_path(int i) { return i >= 0 && i < N_FILES ? files[i].path : NULL; }

/* 1 when the space-separated list holds the word w[0..n). */
static int list_has(const char *list, const char *w, size_t n) {
  for (const char *p = list; *p;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (len == n && !strncmp(p, w, n)) return 1;
    p += len;
  }
  return 0;
}

static int find_path(const char *path, size_t n) {
  for (int i = 0; i < N_FILES; i++)
    if (strlen(files[i].path) == n && !strncmp(files[i].path, path, n)) return i;
  return -1;
}

static void mark(int i, unsigned char *used) {
  if (i < 0 || used[i]) return;
  used[i] = 1;
  for (const char *p = files[i].needs; *p;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (len) mark(find_path(p, len), used);
    p += len;
  }
}

/* The runtime's external names start with one of these (STYLE.md's module
 * prefixes; the spec's MMALIB / C7x extern names). */
static int runtime_prefix(const char *s) {
  return !strncmp(s, "tidsp_", 6) || !strncmp(s, "mmalib_", 7) || !strncmp(s, "c7x_", 4);
}

static int ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

/* What the public headers' inline code calls: the generated C names the
 * macro or inline function, the runtime file defines the callee (on the
 * C7x TIDSP_PROFILE_NOW reads __TSC and calls nothing; both clock files
 * compile to nothing on the other's platform, so listing them is safe).
 * Their first letters are among cs_runtime_files_mark's "tmcT". */
static const struct {
  const char *header_name, *calls;
} header_calls[] = {
    {"TIDSP_PROFILE_NOW", "tidsp_profile_clock"},
    {"tidsp_profile_record", "tidsp_profile_clock"},
};

static void mark_defining(const char *sym, size_t len, unsigned char *used) {
  for (int i = 0; i < N_FILES; i++)
    if (list_has(files[i].defines, sym, len)) mark(i, used);
}

/* The runtime names a text already looked up (a direct-mapped cache by a
 * hash of the name): a model of 100 000 layers names its few kernels
 * 100 000 times, and each lookup reads every file's list. */
enum { SEEN_SLOTS = 256 };
typedef struct seen_name {
  const char *s;
  size_t len;
} seen_name;

static int seen_before(seen_name *seen, const char *w, size_t len) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)w[i]) * 16777619u;
  seen_name *e = &seen[h % SEEN_SLOTS];
  if (e->s && e->len == len && !memcmp(e->s, w, len)) return 1;
  e->s = w;
  e->len = len;
  return 0;
}

void cs_runtime_files_mark(const char *c_text, unsigned char *used) {
  seen_name seen[SEEN_SLOTS] = {{0}};
  const char *p = c_text;
  while (*p) {
    if (p[0] == '/' && p[1] == '*') { /* comments name kernels in words, not calls */
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else if (p[0] == '/' && p[1] == '/') {
      p += strcspn(p, "\n");
    } else if (*p == '"' || *p == '\'') { /* nor do string literals (the profile's kernel names) */
      char q = *p++;
      while (*p && *p != q) p += (*p == '\\' && p[1]) ? 2 : 1;
      if (*p) p++;
    } else if (ident_start(*p)) {
      const char *w = p;
      while (ident_char(*p)) p++;
      size_t len = (size_t)(p - w);
      /* (the first letter of every prefix and header name: most words of
       * the generated C go no further) */
      if (!strchr("tmcT", *w) || seen_before(seen, w, len)) continue;
      if (runtime_prefix(w)) mark_defining(w, len, used);
      for (size_t k = 0; k < sizeof header_calls / sizeof header_calls[0]; k++)
        if (strlen(header_calls[k].header_name) == len && !strncmp(header_calls[k].header_name, w, len))
          mark_defining(header_calls[k].calls, strlen(header_calls[k].calls), used);
    } else {
      p++;
    }
  }
}
