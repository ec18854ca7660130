/*
 * matmul_f32__host_mlas.c — tidsp_matmul_f32 (ref/matmul_f32.c) summed in
 * the order of ONNX Runtime's float Gemm/MatMul (1 intra-op thread), so
 * that a float network is bit-identical to ORT on the same CPU.
 *
 * Per output element, in fused multiply-adds (AVX2/FMA3 and AVX-512F MLAS
 * kernels alike), K is walked in strides:
 *
 *   - each K stride's partial sum starts at 0 and runs over its k in order;
 *   - Gemm's C (our bias) is the output's start value (ORT copies it into Y
 *     and calls SGEMM with beta = 1); without one the first stride's sum is
 *     stored as it is;
 *   - out = partᵢ + out for each stride.
 *
 * The stride depends on how ORT gets B (params.b_runtime, set by the
 * compiler):
 *   - a constant B is prepacked and runs MLAS's packed SGEMM: strides of
 *     256 (MLAS_SGEMM_PACKED_STRIDEK). Verified on MTCNN's dense layers
 *     (K = 128 … 1152): 100 % bit-identical.
 *   - a runtime B runs the unpacked SGEMM (MlasSgemmOperation), whose
 *     panels start at 128 x 128 (N x K) and trade N for K: when N >= K the
 *     K stride only shrinks (K ≤ 128: one stride; K > 128: 128); when
 *     N < K the N stride halves while it stays > 16 and its half still
 *     covers N, doubling the K stride each time (N ≤ 64: 256, ≤ 32: 512,
 *     ≤ 16: 1024). Verified on single MatMuls of two graph inputs
 *     (tests/e2e/test_conv_mlas_vs_ort.py): 100 % bit-identical.
 *     M = 1 and N = 1 take MLAS's matrix-vector kernels, whose order is
 *     not matched: they keep the packed order here.
 * CPUs without FMA run the reference.
 */
#include <math.h>

#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include "fma_exact_begin.h"

#define MLAS_PACKED_STRIDE_K 256
#define MLAS_STRIDE_N 128 /* the unpacked SGEMM's panel */
#define MLAS_STRIDE_K 128
/* output columns per pass: the partial sums live on the stack */
#define COLS 256

/* The K stride of MLAS's unpacked SGEMM (see the header); shared with
 * conv_transpose2d_f32__host_mlas.c, whose GEMM has a runtime B too. */
int32_t tidsp_mlas_sgemm_stride_k(int32_t k, int32_t n) {
  int32_t stride_n = MLAS_STRIDE_N, stride_k = MLAS_STRIDE_K;
  if (n >= k)
    return stride_k; /* shrinking below K changes nothing per element */
  while (stride_n > 16 && stride_n / 2 >= n) {
    stride_n /= 2;
    stride_k *= 2;
  }
  return stride_k;
}

int32_t tidsp_matmul_f32__host_mlas(const tidsp_matmul_f32_params *p, const float *a,
                                    const float *b, const float *bias, float *y) {
  float part[COLS];
  int32_t bt, i, j, j0, nj, k0, k1, kk, stride_k;

  if (!p || !a || !b || !y)
    return TIDSP_ERR_NULL;
  if (p->batch < 0 || p->m < 0 || p->k < 0 || p->n < 0 || p->a_batch_stride < 0 ||
      p->b_batch_stride < 0)
    return TIDSP_ERR_SHAPE;
  if (tidsp_mlas_f32_block() == 0)
    return tidsp_matmul_f32__ref(p, a, b, bias, y);
  /* M = 1 and N = 1 run MLAS's matrix-vector kernels: not matched */
  stride_k = p->b_runtime && p->m != 1 && p->n != 1 ? tidsp_mlas_sgemm_stride_k(p->k, p->n)
                                                     : MLAS_PACKED_STRIDE_K;
  for (bt = 0; bt < p->batch; bt++) {
    const float *ab = a + (size_t)bt * (size_t)p->a_batch_stride;
    const float *bb = b + (size_t)bt * (size_t)p->b_batch_stride;
    float *yb = y + (size_t)bt * (size_t)p->m * (size_t)p->n;
    for (i = 0; i < p->m; i++) {
      const float *ar = ab + (size_t)i * (size_t)p->k;
      float *yr = yb + (size_t)i * (size_t)p->n;
      for (j0 = 0; j0 < p->n; j0 += COLS) {
        nj = p->n - j0 < COLS ? p->n - j0 : COLS;
        for (j = 0; j < nj; j++)
          yr[j0 + j] = bias ? bias[j0 + j] : 0.0f;
        for (k0 = 0; k0 < p->k; k0 += stride_k) {
          k1 = p->k - k0 < stride_k ? p->k : k0 + stride_k;
          for (j = 0; j < nj; j++)
            part[j] = 0.0f;
          /* k outer, n inner: B's row and the partial sums are contiguous */
          for (kk = k0; kk < k1; kk++) {
            const float av = ar[kk];
            const float *br = bb + (size_t)kk * (size_t)p->n + j0;
            for (j = 0; j < nj; j++)
              part[j] = fmaf(av, br[j], part[j]);
          }
          if (k0 == 0 && !bias) {
            for (j = 0; j < nj; j++)
              yr[j0 + j] = part[j];
          } else {
            for (j = 0; j < nj; j++)
              yr[j0 + j] = part[j] + yr[j0 + j];
          }
        }
      }
    }
  }
  return TIDSP_OK;
}

#pragma GCC pop_options
#endif
