/*
 * dispatch.c — the public names of kernels that have variants, and the one
 * table that chooses among them (see kernel_variants.h).
 *
 * The choice is made at the first call of any dispatched kernel (cpuid via
 * the compiler's CPU-feature builtins) and never changes afterwards, so a
 * run is reproducible. The runtime is single-threaded per model; two threads
 * racing on the very first call would both compute and store the same
 * pointer. TIDSP_KERNELS=<name> in the environment picks a row by name
 * (e.g. "ref" to compare against the reference on the same build); an
 * unknown or unsupported name falls back to the automatic choice.
 * tidsp_kernels_select pins a row from code (the compiler pins "ref").
 */
#include <stdlib.h>
#include <string.h>

#include "kernel_variants.h"

static int always(void) { return 1; }

#if TIDSP_HAVE_HOST_X86
/* __builtin_cpu_supports also checks that the OS saves the wide registers. */
static int cpu_avx512vnni(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
}
static int cpu_avx2(void) {
  __builtin_cpu_init();
  /* FMA: the AVX2 add_i8 mirrors ORT's fused multiply-adds (every AVX2
   * CPU has it) */
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* A row is {name, CPU check, conv2d_i8, dwconv2d_i8, then the kernels of
 * TIDSP_DISPATCHED_KERNELS in its order}: matmul_i8, then these "others",
 * the same for every row of an ISA (add_i8 … conv_transpose_nd_f32; the
 * AVX-512 and AVX2 rows' CPUs all have FMA, which the layer norms and the
 * MLAS-order float kernels use; those pick MLAS's channel block from the
 * CPU themselves, as MLAS does, not from the row).
 * The AVX-512 set needs F + BW, which every AVX-512 row checks. */
#define REF_OTHERS                                                          \
  tidsp_add_i8__ref, tidsp_mul_i8__ref, tidsp_quantize__ref,                \
      tidsp_dequantize__ref, tidsp_lut_i8__ref, tidsp_maxpool_i8__ref,      \
      tidsp_maxpool_f32__ref, tidsp_global_avgpool_i8__ref,                 \
      tidsp_transpose__ref, tidsp_slice__ref, tidsp_layer_norm_f32__ref,    \
      tidsp_layer_norm_i8__ref, tidsp_softmax_i8__ref, tidsp_softmax_f32__ref, \
      tidsp_conv2d_f32__ref, tidsp_matmul_f32__ref,                         \
      tidsp_conv_transpose2d_f32__ref, tidsp_conv_transpose_nd_f32__ref,    \
      tidsp_binary_f32__ref, tidsp_unary_f32__ref, tidsp_expand__ref, tidsp_prelu_f32__ref,           \
      tidsp_avgpool_f32__ref,                                               \
      tidsp_avgpool_i8__ref, tidsp_channel_affine_i8__ref, tidsp_lut_i8_channels__ref, \
      tidsp_reduce_mean_dq_i8__ref
#if TIDSP_HAVE_HOST_X86
#define HOST_AVX512_OTHERS                                                  \
  tidsp_add_i8__host_avx512, tidsp_mul_i8__host_avx512,                     \
      tidsp_quantize__host_avx512, tidsp_dequantize__host_avx512,           \
      tidsp_lut_i8__host_avx512, tidsp_maxpool_i8__host_avx512,             \
      tidsp_maxpool_f32__host_avx512, tidsp_global_avgpool_i8__host_avx512, \
      tidsp_transpose__host, tidsp_slice__host,                             \
      tidsp_layer_norm_f32__host_fma, tidsp_layer_norm_i8__host_avx512,     \
      tidsp_softmax_i8__host_avx512, tidsp_softmax_f32__host_avx512,         \
      tidsp_conv2d_f32__host_mlas, tidsp_matmul_f32__host_mlas,             \
      tidsp_conv_transpose2d_f32__host_mlas, tidsp_conv_transpose_nd_f32__host_mlas, \
      tidsp_binary_f32__host_avx512, tidsp_unary_f32__host_avx512, tidsp_expand__host, \
      tidsp_prelu_f32__host_avx512, tidsp_avgpool_f32__host,                \
      tidsp_avgpool_i8__host_avx512, tidsp_channel_affine_i8__host_avx512,   \
      tidsp_lut_i8_channels__host_avx512, tidsp_reduce_mean_dq_i8__host_avx512
#define HOST_AVX2_OTHERS                                                    \
  tidsp_add_i8__host_avx2, tidsp_mul_i8__host_avx2,                         \
      tidsp_quantize__host_avx2, tidsp_dequantize__host_avx2,               \
      tidsp_lut_i8__host_avx2, tidsp_maxpool_i8__host_avx2,                 \
      tidsp_maxpool_f32__host_avx2, tidsp_global_avgpool_i8__host_avx2,     \
      tidsp_transpose__host, tidsp_slice__host,                             \
      tidsp_layer_norm_f32__host_fma, tidsp_layer_norm_i8__host_fma,        \
      tidsp_softmax_i8__ref, tidsp_softmax_f32__ref,                         \
      tidsp_conv2d_f32__host_mlas, tidsp_matmul_f32__host_mlas,             \
      tidsp_conv_transpose2d_f32__host_mlas, tidsp_conv_transpose_nd_f32__host_mlas, \
      tidsp_binary_f32__host_avx2, tidsp_unary_f32__host_avx2, tidsp_expand__host, \
      tidsp_prelu_f32__host_avx2, tidsp_avgpool_f32__host,                  \
      tidsp_avgpool_i8__host_avx2, tidsp_channel_affine_i8__host_avx2,       \
      tidsp_lut_i8_channels__host_avx2, tidsp_reduce_mean_dq_i8__ref
#endif

const tidsp_kernel_variant tidsp_kernel_variants[] = {
#if TIDSP_HAVE_HOST_X86
    /* AMX tiles for the convolutions and matrix multiplies (the check also
     * asks Linux for the tile state); depthwise stays on AVX-512 VNNI */
    {"host_amx", tidsp_host_amx_supported, tidsp_conv2d_i8__host_amx,
     tidsp_dwconv2d_i8__host_avx512vnni, tidsp_matmul_i8__host_amx,
     HOST_AVX512_OTHERS},
    {"host_avx512vnni", cpu_avx512vnni, tidsp_conv2d_i8__host_avx512vnni,
     tidsp_dwconv2d_i8__host_avx512vnni, tidsp_matmul_i8__host_avx512vnni,
     HOST_AVX512_OTHERS},
    {"host_avx2", cpu_avx2, tidsp_conv2d_i8__host_avx2,
     tidsp_dwconv2d_i8__host_avx2, tidsp_matmul_i8__host_avx2,
     HOST_AVX2_OTHERS},
#endif
    {"ref", always, tidsp_conv2d_i8__ref, tidsp_conv2d_i8__ref,
     tidsp_matmul_i8__ref, REF_OTHERS},
};
const int32_t tidsp_kernel_variant_count =
    (int32_t)(sizeof(tidsp_kernel_variants) / sizeof(tidsp_kernel_variants[0]));

static const tidsp_kernel_variant *active;

static const tidsp_kernel_variant *choose(void) {
  const char *want = getenv("TIDSP_KERNELS");
  int32_t i;
  if (want) {
    for (i = 0; i < tidsp_kernel_variant_count; i++) {
      if (strcmp(want, tidsp_kernel_variants[i].name) == 0 &&
          tidsp_kernel_variants[i].supported())
        return &tidsp_kernel_variants[i];
    }
  }
  for (i = 0; i < tidsp_kernel_variant_count; i++) {
    if (tidsp_kernel_variants[i].supported())
      return &tidsp_kernel_variants[i];
  }
  return &tidsp_kernel_variants[tidsp_kernel_variant_count - 1];
}

const tidsp_kernel_variant *tidsp_kernel_variant_active(void) {
  if (!active)
    active = choose();
  return active;
}

int32_t tidsp_kernels_select(const char *row) {
  int32_t i;
  if (!row)
    return TIDSP_ERR_PARAM;
  for (i = 0; i < tidsp_kernel_variant_count; i++) {
    if (strcmp(row, tidsp_kernel_variants[i].name) == 0) {
      if (!tidsp_kernel_variants[i].supported())
        return TIDSP_ERR_UNSUPPORTED;
      active = &tidsp_kernel_variants[i];
      return TIDSP_OK;
    }
  }
  return TIDSP_ERR_PARAM;
}

int32_t tidsp_conv2d_i8(const tidsp_conv2d_params *p, const int8_t *x,
                        const int8_t *w, const int32_t *bias, const void *rq,
                        int8_t *y) {
  const tidsp_kernel_variant *v = tidsp_kernel_variant_active();
  /* depthwise layers waste most of the general path's channel tiles */
  if (tidsp_conv2d_is_depthwise(p))
    return v->dwconv2d_i8(p, x, w, bias, rq, y);
  return v->conv2d_i8(p, x, w, bias, rq, y);
}

/* Every other public name runs the active row's kernel. */
#define FORWARD(name, params, args)                                                                     \
  int32_t tidsp_##name params { return tidsp_kernel_variant_active()->name args; }
TIDSP_DISPATCHED_KERNELS(FORWARD)
#undef FORWARD

int32_t tidsp_batch_matmul_i8(const tidsp_batch_matmul_i8_params *p,
                              const int8_t *a, const int8_t *b_t,
                              const void *rq, int8_t *y) {
  return tidsp_batch_matmul_i8_with(p, a, b_t, rq, y,
                                    tidsp_kernel_variant_active()->matmul_i8);
}
