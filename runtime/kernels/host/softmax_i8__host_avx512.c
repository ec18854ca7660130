/*
 * softmax_i8__host_avx512.c — tidsp_softmax_i8 (ref/softmax_i8.c, ORT's
 * QLinearSoftmax rounding) with AVX-512 F + BW, for rows along the last
 * axis (inner = 1: each row is axis_len contiguous bytes, as attention's
 * softmax is). Other layouts go to the reference.
 *
 * Bit for bit the reference's arithmetic:
 *  - the row maximum: a byte max in 64-lane vectors (exact);
 *  - the sum: float additions of the table entries in element order. That
 *    order is kept (it is not associative), so each row is one scalar
 *    chain; four rows run side by side so that their chains overlap;
 *  - each output: e·y_recip (one multiply), / sum (IEEE division),
 *    nearbyintf (vrndscaleps in the current rounding mode, no inexact
 *    exception, like nearbyintf), + y_zp, then the reference's clamp and
 *    truncation; a NaN (the sum overflowed to inf with an inf entry) gives
 *    what the reference's (int32_t) conversion gives on x86, 0x80000000,
 *    whose low byte, 0, is what both store.
 * The entries e are gathered from the 256-float table by x − max + 255.
 */
#include <math.h>

#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw")))

/* Lanes [0, n) of a 64-lane mask, n ≤ 64. */
static inline __mmask64 mask64(int32_t n) {
  return n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
}

static TARGET int32_t row_max(const int8_t *x, int32_t len) {
  __m512i m = _mm512_set1_epi8(-128);
  __m256i h;
  __m128i q;
  int32_t k;
  for (k = 0; k < len; k += 64)
    m = _mm512_max_epi8(m, _mm512_mask_loadu_epi8(_mm512_set1_epi8(-128), mask64(len - k), x + k));
  h = _mm256_max_epi8(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
  q = _mm_max_epi8(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  q = _mm_max_epi8(q, _mm_srli_si128(q, 8));
  q = _mm_max_epi8(q, _mm_srli_si128(q, 4));
  q = _mm_max_epi8(q, _mm_srli_si128(q, 2));
  q = _mm_max_epi8(q, _mm_srli_si128(q, 1));
  return (int8_t)_mm_cvtsi128_si32(q);
}

/* The outputs of one row from its maximum and sum. */
static TARGET void row_out(const int8_t *x, int8_t *y, int32_t len, const float *table,
                           int32_t xmax, float sum, float y_recip, int32_t y_zp) {
  const __m512i off = _mm512_set1_epi32(255 - xmax);
  const __m512 rec = _mm512_set1_ps(y_recip), s = _mm512_set1_ps(sum);
  const __m512 zp = _mm512_set1_ps((float)y_zp);
  const __m512 hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-128.0f);
  int32_t k;
  for (k = 0; k < len; k += 16) {
    /* 512-bit masked byte loads and stores: AVX512VL is not required */
    const __mmask64 mb = mask64(len - k < 16 ? len - k : 16);
    const __mmask16 m = (__mmask16)mb;
    const __m128i xb = _mm512_castsi512_si128(_mm512_maskz_loadu_epi8(mb, x + k));
    const __m512i idx = _mm512_add_epi32(_mm512_cvtepi8_epi32(xb), off);
    /* Without -O, GCC's avx512fintrin.h defines the gather and the
     * roundscale as macros that pass an all-ones 0xFFFF mask to builtins
     * taking a short (as matmul_i8__host_amx.c notes). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-conversion"
    const __m512 e = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, table, 4);
    __m512 v = _mm512_div_ps(_mm512_mul_ps(e, rec), s);
    v = _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC), zp);
#pragma GCC diagnostic pop
    /* v > 127 → 127, v < −128 → −128 (ordered compares: a NaN stays and
     * converts to 0x80000000, low byte 0, as the reference's cast does) */
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
    _mm512_mask_storeu_epi8(y + k, mb,
                            _mm512_castsi128_si512(_mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v))));
  }
}

int32_t tidsp_softmax_i8__host_avx512(const tidsp_softmax_i8_params *p, const float *table,
                                      const int8_t *x, int8_t *y) {
  const int32_t len = p ? p->axis_len : 0;
  int64_t r = 0, rows;
  int32_t k, j;
  if (!p || !table || !x || !y || p->outer < 0 || p->axis_len < 1 || p->inner != 1 ||
      p->y_zp < -128 || p->y_zp > 127 || !(p->y_recip >= 0.0f))
    return tidsp_softmax_i8__ref(p, table, x, y);
  rows = p->outer;
  for (; r < rows; r += 4) {
    const int32_t nr = rows - r < 4 ? (int32_t)(rows - r) : 4;
    const int8_t *xr[4];
    int32_t xm[4];
    float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (j = 0; j < 4; j++) { /* missing rows repeat the last one */
      xr[j] = x + (size_t)(r + (j < nr ? j : nr - 1)) * (size_t)len;
      xm[j] = row_max(xr[j], len);
    }
    {
      const float *t0 = table + 255 - xm[0], *t1 = table + 255 - xm[1];
      const float *t2 = table + 255 - xm[2], *t3 = table + 255 - xm[3];
      for (k = 0; k < len; k++) {
        sum[0] += t0[xr[0][k]];
        sum[1] += t1[xr[1][k]];
        sum[2] += t2[xr[2][k]];
        sum[3] += t3[xr[3][k]];
      }
    }
    for (j = 0; j < nr; j++)
      row_out(xr[j], y + (size_t)(r + j) * (size_t)len, len, table, xm[j], sum[j], p->y_recip,
              p->y_zp);
  }
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
