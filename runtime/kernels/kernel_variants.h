/*
 * kernel_variants.h — the implementations behind the dispatched kernels of
 * include/cstatic/kernels.h (internal to the runtime, tests and benchmarks).
 *
 * A kernel with variants has one public ABI name (tidsp_conv2d_i8) and one
 * function per way of computing it, named with a `__` suffix:
 *   __ref              runtime/kernels/ref: portable C, the oracle
 *   __host_avx2        runtime/kernels/host: x86-64 AVX2
 *   __host_avx512vnni  runtime/kernels/host: x86-64 AVX-512 VNNI
 *   __host_amx         runtime/kernels/host: x86-64 AMX-INT8 (+ AVX-512)
 * Every variant takes the same arguments, validates the same way and returns
 * the same bytes and status as __ref (the host ones call __ref for whatever
 * they have no fast path for). The host variants exist only on x86.
 *
 * Which variant the public name runs is chosen once, by dispatch.c, from
 * one table (tidsp_kernel_variants) — never by #if inside a kernel body.
 */
#ifndef TIDSP_KERNEL_VARIANTS_H
#define TIDSP_KERNEL_VARIANTS_H

#include "cstatic/kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TIDSP_HAVE_HOST_X86 1
#else
#define TIDSP_HAVE_HOST_X86 0
#endif

/* The dispatched kernels, one row each, in the order of a variant row's
 * fields after its convolutions (tidsp_kernel_variant below, dispatch.c's
 * rows):
 *   X(name, (parameters), (arguments))
 * gives the pointer type tidsp_<name>_fn, the field <name> of a variant
 * row and, in dispatch.c, the public tidsp_<name> of kernels.h that runs
 * the active row's (the compiler checks each row's parameters against that
 * declaration). conv2d_i8 is written by hand: its public name chooses
 * between two fields. */
#define TIDSP_DISPATCHED_KERNELS(X) \
  X(matmul_i8, (const tidsp_matmul_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, const void *rq, int8_t *y), (p, x, w, bias, rq, y)) \
  X(add_i8, (const tidsp_add_i8_params *p, const int8_t *a, const int8_t *b, int8_t *y), (p, a, b, y)) \
  X(mul_i8, (const tidsp_mul_i8_params *p, const int8_t *a, const int8_t *b, int8_t *y), (p, a, b, y)) \
  X(quantize, (const tidsp_qdq_params *p, const float *scale, const int32_t *zero_point, const float *x, void *y), (p, scale, zero_point, x, y)) \
  X(dequantize, (const tidsp_qdq_params *p, const float *scale, const int32_t *zero_point, const void *x, float *y), (p, scale, zero_point, x, y)) \
  X(lut_i8, (const tidsp_lut_params *p, const int8_t *lut, const int8_t *x, int8_t *y), (p, lut, x, y)) \
  X(maxpool_i8, (const tidsp_pool2d_params *p, const int8_t *x, int8_t *y), (p, x, y)) \
  X(maxpool_f32, (const tidsp_pool2d_params *p, const float *x, float *y), (p, x, y)) \
  X(global_avgpool_i8, (const tidsp_gap_i8_params *p, const void *rq, const int8_t *x, int8_t *y), (p, rq, x, y)) \
  X(transpose, (const tidsp_transpose_params *p, const void *x, void *y), (p, x, y)) \
  X(slice, (const tidsp_slice_params *p, const void *x, void *y), (p, x, y)) \
  X(layer_norm_f32, (const tidsp_layer_norm_params *p, const float *x, const float *scale, const float *bias, float *y), (p, x, scale, bias, y)) \
  X(layer_norm_i8, (const tidsp_layer_norm_i8_params *p, const int8_t *x, const float *scale, const float *bias, int8_t *y), (p, x, scale, bias, y)) \
  X(softmax_i8, (const tidsp_softmax_i8_params *p, const float *table, const int8_t *x, int8_t *y), (p, table, x, y)) \
  X(softmax_f32, (const tidsp_softmax_params *p, const float *x, float *y), (p, x, y)) \
  X(conv2d_f32, (const tidsp_conv2d_params *p, const float *x, const float *w, const float *bias, const float *sum, float *y), (p, x, w, bias, sum, y)) \
  X(matmul_f32, (const tidsp_matmul_f32_params *p, const float *a, const float *b, const float *bias, float *y), (p, a, b, bias, y)) \
  X(conv_transpose2d_f32, (const tidsp_conv2d_params *p, const float *x, const float *w, const float *bias, float *y), (p, x, w, bias, y)) \
  X(conv_transpose_nd_f32, (const tidsp_conv_transpose_nd_params *p, const float *x, const float *w, const float *bias, float *y), (p, x, w, bias, y)) \
  X(binary_f32, (const tidsp_binary_f32_params *p, const float *a, const float *b, float *y), (p, a, b, y)) \
  X(unary_f32, (const tidsp_unary_f32_params *p, const float *x, float *y), (p, x, y)) \
  X(expand, (const tidsp_expand_params *p, const void *x, void *y), (p, x, y)) \
  X(prelu_f32, (const tidsp_broadcast *p, const float *x, const float *slope, float *y), (p, x, slope, y)) \
  X(avgpool_f32, (const tidsp_pool2d_params *p, const float *x, float *y), (p, x, y)) \
  X(avgpool_i8, (const tidsp_avgpool_i8_params *p, const void *rq, const int8_t *x, int8_t *y), (p, rq, x, y)) \
  X(channel_affine_i8, (const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s, const float *b, int8_t *y), (p, x, s, b, y)) \
  X(lut_i8_channels, (const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x, int8_t *y), (p, lut, x, y)) \
  X(reduce_mean_dq_i8, (const tidsp_reduce_params *p, const float *dq, const int8_t *x, float *y), (p, dq, x, y))

typedef int32_t (*tidsp_conv2d_i8_fn)(const tidsp_conv2d_params *p, const int8_t *x, const int8_t *w,
                                      const int32_t *bias, const void *rq, int8_t *y);
#define TIDSP_VARIANT_FN_TYPE(name, params, args) typedef int32_t(*tidsp_##name##_fn) params;
TIDSP_DISPATCHED_KERNELS(TIDSP_VARIANT_FN_TYPE)
#undef TIDSP_VARIANT_FN_TYPE
int32_t tidsp_softmax_f32__ref(const tidsp_softmax_params *p, const float *x, float *y);
int32_t tidsp_softmax_i8__ref(const tidsp_softmax_i8_params *p, const float *table,
                              const int8_t *x, int8_t *y);
/* MLAS's NCHWc channel block on this CPU (ref/mlas_block.c, every
 * target): 16 (AVX-512F), 8 (AVX2 + FMA3), or 0 (MLAS would not use fused
 * multiply-adds, or no x86: the MLAS-order kernels run the reference).
 * Asked of the CPU once. */
int32_t tidsp_mlas_f32_block(void);
/* Its TIDSP_MLAS_BLOCK* bit (cstatic/kernels.h), which picks a float
 * kernel's layout flags: BLOCK8 at block 8, BLOCK16 otherwise. */
int32_t tidsp_mlas_block_bit(void);
#if TIDSP_HAVE_HOST_X86
int32_t tidsp_softmax_f32__host_avx512(const tidsp_softmax_params *p, const float *x, float *y);
int32_t tidsp_softmax_i8__host_avx512(const tidsp_softmax_i8_params *p, const float *table,
                                      const int8_t *x, int8_t *y);
int32_t tidsp_layer_norm_f32__host_fma(const tidsp_layer_norm_params *p, const float *x,
                                       const float *scale, const float *bias, float *y);
int32_t tidsp_layer_norm_i8__host_fma(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                      const float *scale, const float *bias, int8_t *y);
/* The same, two rows a 16-lane vector (layer_norm__host_fma.c; AVX-512 F + BW) */
int32_t tidsp_layer_norm_i8__host_avx512(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                         const float *scale, const float *bias, int8_t *y);
/* Float Conv and Gemm/MatMul in ONNX Runtime's MLAS summation order
 * (conv2d_f32__host_mlas.c, matmul_f32__host_mlas.c), for ORT's bit
 * pattern on this CPU. */
int32_t tidsp_conv2d_f32__host_mlas(const tidsp_conv2d_params *p, const float *x,
                                    const float *w, const float *bias, const float *sum,
                                    float *y);
/* The same with an explicit vector width (16 or 8 lanes, which is also
 * MLAS's channel block; anything else runs the reference), for tests. */
int32_t tidsp_conv2d_f32__host_mlas_lanes(const tidsp_conv2d_params *p, const float *x,
                                          const float *w, const float *bias, const float *sum,
                                          float *y, int32_t lanes);
int32_t tidsp_matmul_f32__host_mlas(const tidsp_matmul_f32_params *p, const float *a,
                                    const float *b, const float *bias, float *y);
/* The same with `lanes` floats per vector (16: AVX-512F, 8: AVX2 + FMA3;
 * the caller checks the CPU has them), so that tests run both here. */
int32_t tidsp_matmul_f32__host_mlas_lanes(const tidsp_matmul_f32_params *p, const float *a,
                                          const float *b, const float *bias, float *y,
                                          int32_t lanes);
/* The K stride MLAS's unpacked SGEMM (a B computed at run time) sums a
 * k-long dot product in when the product has n columns
 * (matmul_f32__host_mlas.c; its M = 1 / N = 1 matrix-vector kernels are
 * not covered). */
int32_t tidsp_mlas_sgemm_stride_k(int32_t k, int32_t n);
/* Float ConvTranspose in ORT's order: SGEMM into columns, col2im, bias
 * (conv_transpose2d_f32__host_mlas.c: 2-D and N-D). */
int32_t tidsp_conv_transpose2d_f32__host_mlas(const tidsp_conv2d_params *p, const float *x,
                                              const float *w, const float *bias, float *y);
int32_t tidsp_conv_transpose_nd_f32__host_mlas(const tidsp_conv_transpose_nd_params *p, const float *x,
                                               const float *w, const float *bias, float *y);
/* The same with the column GEMM in `lanes`-float vectors (16, 8; anything
 * else scalar): the same bytes at every width, for tests. */
int32_t tidsp_conv_transpose2d_f32__host_mlas_lanes(const tidsp_conv2d_params *p, const float *x,
                                                    const float *w, const float *bias, float *y, int32_t lanes);
int32_t tidsp_conv_transpose_nd_f32__host_mlas_lanes(const tidsp_conv_transpose_nd_params *p, const float *x,
                                                     const float *w, const float *bias, float *y, int32_t lanes);
/* Float Add/Sub/Mul/Div, PRelu and the unary ops with a vector form, lane by lane
 * the reference's formula (eltwise_f32__host.c): AVX-512F and AVX2 + FMA3
 * (the AVX-512 ones need only F: their rows check more). */
int32_t tidsp_binary_f32__host_avx512(const tidsp_binary_f32_params *p, const float *a, const float *b,
                                      float *y);
int32_t tidsp_binary_f32__host_avx2(const tidsp_binary_f32_params *p, const float *a, const float *b,
                                    float *y);
int32_t tidsp_prelu_f32__host_avx512(const tidsp_broadcast *p, const float *x, const float *slope, float *y);
int32_t tidsp_prelu_f32__host_avx2(const tidsp_broadcast *p, const float *x, const float *slope, float *y);
int32_t tidsp_unary_f32__host_avx512(const tidsp_unary_f32_params *p, const float *x, float *y);
int32_t tidsp_unary_f32__host_avx2(const tidsp_unary_f32_params *p, const float *x, float *y);
#endif

/* The batch loop of tidsp_batch_matmul_i8 over a given matmul
 * (runtime/kernels/ref/batch_matmul_i8.c). */
int32_t tidsp_batch_matmul_i8_with(const tidsp_batch_matmul_i8_params *p,
                                   const int8_t *a, const int8_t *b_t,
                                   const void *rq, int8_t *y,
                                   tidsp_matmul_i8_fn matmul);

/* Data movement that copies contiguous runs with memcpy (portable C,
 * runtime/kernels/host/movement__host.c), for the host rows. */
int32_t tidsp_transpose__host(const tidsp_transpose_params *p, const void *x,
                              void *y);
int32_t tidsp_slice__host(const tidsp_slice_params *p, const void *x, void *y);
int32_t tidsp_expand__host(const tidsp_expand_params *p, const void *x, void *y);
/* Float AveragePool a row of outputs at a time (portable C,
 * runtime/kernels/host/avgpool_f32__host.c). */
int32_t tidsp_avgpool_f32__host(const tidsp_pool2d_params *p, const float *x, float *y);

int32_t tidsp_conv2d_i8__ref(const tidsp_conv2d_params *p, const int8_t *x,
                             const int8_t *w, const int32_t *bias,
                             const void *rq, int8_t *y);
int32_t tidsp_matmul_i8__ref(const tidsp_matmul_params *p, const int8_t *x,
                             const int8_t *w, const int32_t *bias,
                             const void *rq, int8_t *y);

#if TIDSP_HAVE_HOST_X86
int32_t tidsp_conv2d_i8__host_avx2(const tidsp_conv2d_params *p,
                                   const int8_t *x, const int8_t *w,
                                   const int32_t *bias, const void *rq,
                                   int8_t *y);
int32_t tidsp_matmul_i8__host_avx2(const tidsp_matmul_params *p,
                                   const int8_t *x, const int8_t *w,
                                   const int32_t *bias, const void *rq,
                                   int8_t *y);
int32_t tidsp_conv2d_i8__host_avx512vnni(const tidsp_conv2d_params *p,
                                         const int8_t *x, const int8_t *w,
                                         const int32_t *bias, const void *rq,
                                         int8_t *y);
int32_t tidsp_matmul_i8__host_avx512vnni(const tidsp_matmul_params *p,
                                         const int8_t *x, const int8_t *w,
                                         const int32_t *bias, const void *rq,
                                         int8_t *y);
/* AMX (conv2d_i8__host_amx.c, matmul_i8__host_amx.c). They also need
 * AVX-512 F/BW/VL/VNNI/VBMI, and on Linux the process must ask for the tile
 * state: tidsp_host_amx_supported() checks all of it (once, cached) and
 * makes that request; the kernels answer through __ref when it is 0. */
int tidsp_host_amx_supported(void);
int32_t tidsp_conv2d_i8__host_amx(const tidsp_conv2d_params *p,
                                  const int8_t *x, const int8_t *w,
                                  const int32_t *bias, const void *rq,
                                  int8_t *y);
int32_t tidsp_matmul_i8__host_amx(const tidsp_matmul_params *p,
                                  const int8_t *x, const int8_t *w,
                                  const int32_t *bias, const void *rq,
                                  int8_t *y);
/* The tiles on every layer: the entries above send layers too small for
 * them to the VNNI kernel (faster there); the tests run these on the
 * tiles' edges too. */
int32_t tidsp_conv2d_i8__host_amx_tiles(const tidsp_conv2d_params *p, const int8_t *x, const int8_t *w,
                                        const int32_t *bias, const void *rq, int8_t *y);
int32_t tidsp_matmul_i8__host_amx_tiles(const tidsp_matmul_params *p, const int8_t *x, const int8_t *w,
                                        const int32_t *bias, const void *rq, int8_t *y);
/* Depthwise convolutions (c_in = groups) by a direct int16-pair path
 * (runtime/kernels/host/dwconv2d_i8__*.c); any other parameters go to the
 * same ISA's general conv2d above. */
int32_t tidsp_dwconv2d_i8__host_avx2(const tidsp_conv2d_params *p,
                                     const int8_t *x, const int8_t *w,
                                     const int32_t *bias, const void *rq,
                                     int8_t *y);
int32_t tidsp_dwconv2d_i8__host_avx512vnni(const tidsp_conv2d_params *p,
                                           const int8_t *x, const int8_t *w,
                                           const int32_t *bias, const void *rq,
                                           int8_t *y);
/* Elementwise, quantize/dequantize and pooling (runtime/kernels/host/
 * eltwise_i8__*.c, qdq__*.c, pool__*.c). The AVX-512 ones need only F and
 * BW (any row whose CPU check implies those may use them); lut_i8 also
 * wants VBMI and checks for it itself, once (without it: the AVX2 one,
 * vpshufb on 16-byte rows of the table). */
int32_t tidsp_add_i8__host_avx512(const tidsp_add_i8_params *p,
                                  const int8_t *a, const int8_t *b, int8_t *y);
int32_t tidsp_mul_i8__host_avx512(const tidsp_mul_i8_params *p,
                                  const int8_t *a, const int8_t *b, int8_t *y);
int32_t tidsp_quantize__host_avx512(const tidsp_qdq_params *p,
                                    const float *scale,
                                    const int32_t *zero_point, const float *x,
                                    void *y);
int32_t tidsp_dequantize__host_avx512(const tidsp_qdq_params *p,
                                      const float *scale,
                                      const int32_t *zero_point, const void *x,
                                      float *y);
int32_t tidsp_lut_i8__host_avx512(const tidsp_lut_params *p, const int8_t *lut,
                                  const int8_t *x, int8_t *y);
int32_t tidsp_maxpool_i8__host_avx512(const tidsp_pool2d_params *p,
                                      const int8_t *x, int8_t *y);
int32_t tidsp_maxpool_f32__host_avx512(const tidsp_pool2d_params *p,
                                       const float *x, float *y);
int32_t tidsp_global_avgpool_i8__host_avx512(const tidsp_gap_i8_params *p,
                                             const void *rq, const int8_t *x,
                                             int8_t *y);
int32_t tidsp_avgpool_i8__host_avx512(const tidsp_avgpool_i8_params *p, const void *rq,
                                      const int8_t *x, int8_t *y);
int32_t tidsp_channel_affine_i8__host_avx512(const tidsp_channel_affine_i8_params *p, const int8_t *x,
                                             const float *s, const float *b, int8_t *y);
/* a table per channel: each channel's run through the row's lut_i8 */
int32_t tidsp_lut_i8_channels__host_avx512(const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x,
                                           int8_t *y);
/* the squeeze-excitation means (ORT's NHWC order), 16 outputs a zmm */
int32_t tidsp_reduce_mean_dq_i8__host_avx512(const tidsp_reduce_params *p, const float *dq, const int8_t *x,
                                             float *y);
/* AVX2 (+ FMA, checked by the host_avx2 row). */
int32_t tidsp_add_i8__host_avx2(const tidsp_add_i8_params *p, const int8_t *a,
                                const int8_t *b, int8_t *y);
int32_t tidsp_mul_i8__host_avx2(const tidsp_mul_i8_params *p, const int8_t *a,
                                const int8_t *b, int8_t *y);
int32_t tidsp_quantize__host_avx2(const tidsp_qdq_params *p,
                                  const float *scale,
                                  const int32_t *zero_point, const float *x,
                                  void *y);
int32_t tidsp_dequantize__host_avx2(const tidsp_qdq_params *p,
                                    const float *scale,
                                    const int32_t *zero_point, const void *x,
                                    float *y);
int32_t tidsp_lut_i8__host_avx2(const tidsp_lut_params *p, const int8_t *lut,
                                const int8_t *x, int8_t *y);
int32_t tidsp_maxpool_i8__host_avx2(const tidsp_pool2d_params *p,
                                    const int8_t *x, int8_t *y);
int32_t tidsp_maxpool_f32__host_avx2(const tidsp_pool2d_params *p,
                                     const float *x, float *y);
int32_t tidsp_global_avgpool_i8__host_avx2(const tidsp_gap_i8_params *p,
                                           const void *rq, const int8_t *x,
                                           int8_t *y);
int32_t tidsp_avgpool_i8__host_avx2(const tidsp_avgpool_i8_params *p, const void *rq,
                                    const int8_t *x, int8_t *y);
int32_t tidsp_channel_affine_i8__host_avx2(const tidsp_channel_affine_i8_params *p, const int8_t *x,
                                           const float *s, const float *b, int8_t *y);
int32_t tidsp_lut_i8_channels__host_avx2(const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x,
                                         int8_t *y);
#endif

/* One row of the variant table: a name, whether this CPU can run it, and
 * its kernels. dwconv2d_i8 is the row's convolution for depthwise
 * parameters (tidsp_conv2d_is_depthwise); it accepts any parameters and
 * answers exactly like conv2d_i8. */
typedef struct tidsp_kernel_variant {
  const char *name; /* "host_amx", "host_avx512vnni", "host_avx2", "ref" */
  int (*supported)(void);
  tidsp_conv2d_i8_fn conv2d_i8;
  tidsp_conv2d_i8_fn dwconv2d_i8;
  /* The other dispatched kernels, in TIDSP_DISPATCHED_KERNELS order; a row
   * without a fast version of one points at its __ref. */
#define TIDSP_VARIANT_FIELD(name, params, args) tidsp_##name##_fn name;
  TIDSP_DISPATCHED_KERNELS(TIDSP_VARIANT_FIELD)
#undef TIDSP_VARIANT_FIELD
} tidsp_kernel_variant;

/* True when the dispatcher sends a convolution to dwconv2d_i8: one input
 * channel per group, more than one group. */
static inline int tidsp_conv2d_is_depthwise(const tidsp_conv2d_params *p) {
  return p && p->groups > 1 && p->groups == p->c_in;
}

/* The table, fastest first; the last row is "ref", always supported. */
extern const tidsp_kernel_variant tidsp_kernel_variants[];
extern const int32_t tidsp_kernel_variant_count;

/* The variant the public names run: the first supported row of the table,
 * or the one named by the environment variable TIDSP_KERNELS if it is
 * supported. Chosen at the first call and then fixed. */
const tidsp_kernel_variant *tidsp_kernel_variant_active(void);

#endif /* TIDSP_KERNEL_VARIANTS_H */
