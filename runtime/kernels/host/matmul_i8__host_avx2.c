/*
 * matmul_i8__host_avx2.c — tidsp_matmul_i8 with AVX2.
 *
 * Y[i][j] = Σ_k (x[i][k] − x_zp)(w[j][k] − w_zp) with both operands read as
 * stored (rows of k): 16 k of a row of X and of a row of W are widened to
 * exact int16 differences, vpmaddwd sums them in pairs (at most 2·255², no
 * overflow) and one horizontal sum per output finishes; the last k % 16
 * run in scalar code. NJ rows of W share each load of X. Sums wrap modulo
 * 2³² as the reference's reduction of its int64 sum does; the bias is added
 * modulo 2³². Requantization is the FLOAT or the SCALE_SHIFT formula, one
 * value at a time (tidsp_host_rq_one).
 * Q31 requantization and inputs the reference rejects go to
 * tidsp_matmul_i8__ref.
 */
#include "rq_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum { NJ = 4 }; /* columns of Y (rows of W) per pass over a row of X */

static TARGET uint32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return (uint32_t)_mm_cvtsi128_si32(s);
}

static TARGET void matmul_fast(const tidsp_matmul_params *p, const int8_t *x,
                               const int8_t *w, const int32_t *bias,
                               const tidsp_host_rq *q, int8_t *y) {
  const int32_t K = p->k, kv = K - K % 16;
  const size_t w_stride = tidsp_host_matmul_w_stride(p); /* row j at w + j·stride */
  const __m256i xzp = _mm256_set1_epi16((short)p->x_zp);
  const __m256i wzp = _mm256_set1_epi16((short)p->w_zp);
  int32_t i, j0, jj, k;

  for (j0 = 0; j0 < p->n; j0 += NJ) {
    const int32_t nj = p->n - j0 < NJ ? p->n - j0 : NJ;
    const int8_t *wr[NJ];
    for (jj = 0; jj < NJ; jj++)
      wr[jj] = w + (size_t)(j0 + (jj < nj ? jj : nj - 1)) * w_stride;
    for (i = 0; i < p->m; i++) {
      const int8_t *xr = x + (size_t)i * K;
      int8_t *yr = y + (size_t)i * p->n + j0;
      __m256i acc[NJ];
      for (jj = 0; jj < NJ; jj++)
        acc[jj] = _mm256_setzero_si256();
      for (k = 0; k < kv; k += 16) {
        const __m256i xv = _mm256_sub_epi16(
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(xr + k))), xzp);
        for (jj = 0; jj < NJ; jj++) {
          const __m256i wv = _mm256_sub_epi16(
              _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wr[jj] + k))), wzp);
          acc[jj] = _mm256_add_epi32(acc[jj], _mm256_madd_epi16(xv, wv));
        }
      }
      for (jj = 0; jj < nj; jj++) {
        uint32_t a = hsum(acc[jj]);
        for (k = kv; k < K; k++)
          a += (uint32_t)((int32_t)(xr[k] - p->x_zp) * (int32_t)(wr[jj][k] - p->w_zp));
        a += bias ? (uint32_t)bias[j0 + jj] : 0u;
        yr[jj] = tidsp_host_rq_one(q, j0 + jj, a);
      }
    }
  }
}

int32_t tidsp_matmul_i8__host_avx2(const tidsp_matmul_params *p,
                                   const int8_t *x, const int8_t *w,
                                   const int32_t *bias, const void *rq,
                                   int8_t *y) {
  tidsp_host_rq q;
  if (!tidsp_host_matmul_fast_ok(p, x, w, rq, y))
    return tidsp_matmul_i8__ref(p, x, w, bias, rq, y);
  tidsp_host_rq_init(&q, &p->rq, rq);
  matmul_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
