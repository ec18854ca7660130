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
 *
 * Speed: the output is computed in register tiles of up to 6 rows × 64
 * columns (AVX-512F: 4 zmm per row) or 6 × 16 (AVX2: 2 ymm), the K stride
 * walked once per tile with one broadcast of A per row and one load of B
 * per vector. Only the blocking over rows and columns changes: every
 * output element still sums its stride from 0 over k in order with one
 * fused multiply-add per k, then out = part + out (or the bias, or
 * nothing, as the start), so each rounds exactly as the one-row loop did.
 * Column remainders use masked loads and stores (no byte past B's row or
 * Y's row is read or written).
 */
#include <math.h>

#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#include "fma_exact_begin.h"

#define MLAS_PACKED_STRIDE_K 256
#define MLAS_STRIDE_N 128 /* the unpacked SGEMM's panel */
#define MLAS_STRIDE_K 128
#define MR 6     /* output rows per register tile */
#define NV512 4  /* zmm (16 columns) per tile row: 24 accumulators of 32 */
#define NV256 2  /* ymm (8 columns) per tile row: 12 accumulators of 16 */
/* explicit targets as well as the region's pragma: clang ignores
 * `#pragma GCC target` and would not inline the intrinsics without them */
#define T512 __attribute__((target("avx512f,avx2,fma")))
#define T256 __attribute__((target("avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

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

/* One tile's stride: which of A, B, Y and where (row i0, column j0, k0). */
typedef struct tile_args {
  const float *a;    /* A at (i0, k0); rows lda apart */
  const float *b;    /* B at (k0, j0); rows ldb apart */
  const float *bias; /* bias + j0 when this is the first stride and there is one */
  float *y;          /* Y at (i0, j0); rows ldy apart */
  int32_t lda, ldb, ldy, kn;
  int first; /* k0 == 0: y is stored (from the bias if any), not added to */
} tile_args;

/* ---- AVX-512F: 16 lanes, up to NV512 zmm per tile row ---- */
#define W 16
#define NV NV512
#define VEC __m512
#define VMASK __mmask16
#define T T512
#define SFX(name) name##512
#define UNROLL_NV _Pragma("GCC unroll 4")
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_loadu_ps(p)
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VLOAD_MASK(p, m) _mm512_maskz_loadu_ps((m), (p))
#define VSTORE_MASK(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define MASK_ALL ((__mmask16)0xFFFF)
#include "matmul_f32_tile_body.h"

#define CASE512(R, V) \
  case (R) * 8 + (V): \
    tile512(t, R, V, last); \
    break;
#define ROW512(R) CASE512(R, 1) CASE512(R, 2) CASE512(R, 3) CASE512(R, 4)

static T512 void tile512_any(const tile_args *t, int32_t mr, int32_t cols) {
  const int32_t nv = (cols + 15) / 16, rem = cols - 16 * (nv - 1);
  const __mmask16 last = (__mmask16)(0xFFFFu >> (16 - rem));
  switch (mr * 8 + nv) {
    ROW512(1) ROW512(2) ROW512(3) ROW512(4) ROW512(5) ROW512(6)
  default:
    break;
  }
}

/* ---- AVX2 + FMA3: the same in ymm, masks as lane vectors ---- */
INLINE T256 __m256i mask256(int32_t lanes) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define W 8
#define NV NV256
#define VEC __m256
#define VMASK __m256i
#define T T256
#define SFX(name) name##256
#define UNROLL_NV _Pragma("GCC unroll 2")
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_loadu_ps(p)
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VLOAD_MASK(p, m) _mm256_maskload_ps((p), (m))
#define VSTORE_MASK(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define MASK_ALL _mm256_set1_epi32(-1)
#include "matmul_f32_tile_body.h"

#define CASE256(R, V) \
  case (R) * 8 + (V): \
    tile256(t, R, V, last); \
    break;
#define ROW256(R) CASE256(R, 1) CASE256(R, 2)

static T256 void tile256_any(const tile_args *t, int32_t mr, int32_t cols) {
  const int32_t nv = (cols + 7) / 8;
  const __m256i last = mask256(cols - 8 * (nv - 1));
  switch (mr * 8 + nv) {
    ROW256(1) ROW256(2) ROW256(3) ROW256(4) ROW256(5) ROW256(6)
  default:
    break;
  }
}

/* The kernel with `lanes` float lanes per vector (16: AVX-512F, which the
 * caller has checked; 8: AVX2 + FMA3): tests run both on one CPU. */
int32_t tidsp_matmul_f32__host_mlas_lanes(const tidsp_matmul_f32_params *p, const float *a,
                                          const float *b, const float *bias, float *y,
                                          int32_t lanes) {
  const int32_t tile_cols = lanes == 16 ? 16 * NV512 : 8 * NV256;
  int32_t bt, i0, j0, k0, stride_k;
  tile_args t;

  if (!p || !a || !b || !y)
    return TIDSP_ERR_NULL;
  if (p->batch < 0 || p->m < 0 || p->k < 0 || p->n < 0 || p->a_batch_stride < 0 ||
      p->b_batch_stride < 0)
    return TIDSP_ERR_SHAPE;
  if (lanes != 16 && lanes != 8)
    return tidsp_matmul_f32__ref(p, a, b, bias, y);
  /* M = 1 and N = 1 run MLAS's matrix-vector kernels: not matched */
  stride_k = p->b_runtime && p->m != 1 && p->n != 1 ? tidsp_mlas_sgemm_stride_k(p->k, p->n)
                                                     : MLAS_PACKED_STRIDE_K;
  t.lda = p->k;
  t.ldb = p->n;
  t.ldy = p->n;
  for (bt = 0; bt < p->batch; bt++) {
    const float *ab = a + (size_t)bt * (size_t)p->a_batch_stride;
    const float *bb = b + (size_t)bt * (size_t)p->b_batch_stride;
    float *yb = y + (size_t)bt * (size_t)p->m * (size_t)p->n;
    if (p->k == 0) { /* no stride: out is the bias, or 0 */
      for (i0 = 0; i0 < p->m; i0++)
        for (j0 = 0; j0 < p->n; j0++)
          yb[(size_t)i0 * (size_t)p->n + (size_t)j0] = bias ? bias[j0] : 0.0f;
      continue;
    }
    /* strides in k order (each element adds them in that order); within
     * one, a column panel of B stays in cache while every row tile uses it */
    for (k0 = 0; k0 < p->k; k0 += stride_k) {
      t.kn = p->k - k0 < stride_k ? p->k - k0 : stride_k;
      t.first = k0 == 0;
      for (j0 = 0; j0 < p->n; j0 += tile_cols) {
        const int32_t cols = p->n - j0 < tile_cols ? p->n - j0 : tile_cols;
        t.b = bb + (size_t)k0 * (size_t)p->n + (size_t)j0;
        t.bias = bias ? bias + j0 : NULL;
        for (i0 = 0; i0 < p->m; i0 += MR) {
          const int32_t mr = p->m - i0 < MR ? p->m - i0 : MR;
          t.a = ab + (size_t)i0 * (size_t)p->k + (size_t)k0;
          t.y = yb + (size_t)i0 * (size_t)p->n + (size_t)j0;
          if (lanes == 16)
            tile512_any(&t, mr, cols);
          else
            tile256_any(&t, mr, cols);
        }
      }
    }
  }
  return TIDSP_OK;
}

int32_t tidsp_matmul_f32__host_mlas(const tidsp_matmul_f32_params *p, const float *a,
                                    const float *b, const float *bias, float *y) {
  return tidsp_matmul_f32__host_mlas_lanes(p, a, b, bias, y, tidsp_mlas_f32_block());
}

#include "fma_exact_end.h"
#endif
