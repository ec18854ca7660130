/*
 * zmm_transpose.h — what the AVX-512 VNNI and AMX kernels share: the
 * 16 × 16 dword transpose that the matmuls use to turn 16 weight rows into
 * 16 columns of lanes (AVX-512F), and a byte row's sum (AVX-512 VNNI). Each
 * inlines into any kernel whose target includes its own.
 */
#ifndef TIDSP_ZMM_TRANSPOSE_H
#define TIDSP_ZMM_TRANSPOSE_H

#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

/* Transposes 16 rows of 16 dwords in place: r[q] becomes (r₀[q], …, r₁₅[q]). */
static inline __attribute__((always_inline, target("avx512f"))) void tidsp_zmm_transpose16(__m512i r[16]) {
  __m512i t[16], u[16];
  int32_t i, e;
#pragma GCC unroll 16
  for (i = 0; i < 16; i += 2) { /* pairs of rows, within 128-bit lanes */
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
#pragma GCC unroll 16
  for (i = 0; i < 16; i += 4) { /* u[i + e], lane L: rows i..i+3 of column 4L + e */
    u[i + 0] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
#pragma GCC unroll 4
  for (e = 0; e < 4; e++) { /* 4 × 4 transpose of the 128-bit lanes */
    const __m512i x0 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0x44);
    const __m512i x1 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0xEE);
    const __m512i x2 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0x44);
    const __m512i x3 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0xEE);
    r[0 + e] = _mm512_shuffle_i32x4(x0, x2, 0x88);
    r[4 + e] = _mm512_shuffle_i32x4(x0, x2, 0xDD);
    r[8 + e] = _mm512_shuffle_i32x4(x1, x3, 0x88);
    r[12 + e] = _mm512_shuffle_i32x4(x1, x3, 0xDD);
  }
}

/* Σ of the K int8 bytes at w (a weight row's Σw, or an activation row's Σx). */
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vnni"))) int32_t
tidsp_zmm_row_sum(const int8_t *w, int32_t K) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i s = _mm512_setzero_si512();
  int32_t k;
  for (k = 0; k < K; k += 64) {
    const int32_t n = K - k < 64 ? K - k : 64;
    const __mmask64 m = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    s = _mm512_dpbusd_epi32(s, ones, _mm512_maskz_loadu_epi8(m, w + k));
  }
  return _mm512_reduce_add_epi32(s);
}
#endif

#endif
