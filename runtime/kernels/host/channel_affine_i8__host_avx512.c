/*
 * channel_affine_i8__host_avx512.c — tidsp_channel_affine_i8 with AVX-512
 * (F + BW): the reference's float ops (channel_affine_internal.h) on 16
 * values at a time along a channel's row, then tidsp_quantize's clamp in
 * float to [−128 − y_zp, 127 − y_zp] (exact bounds; maxps gives the bound
 * for a NaN, as the reference's −128), rounding half to even (cvtps2dq in
 * the default mode), + y_zp. The multiply and the add stay separate
 * instructions: contraction is off in this file (ref_internal.h's pragma)
 * and no fused multiply-add is written.
 */
#include "../kernel_variants.h"
#include "../ref/channel_affine_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw")))

static inline __mmask16 mask16(int32_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

static TARGET void affine_rows(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s,
                               const float *b, int8_t *y) {
  const __m512 xs = _mm512_set1_ps(p->x_scale), ys = _mm512_set1_ps(p->y_scale);
  const __m512 lo = _mm512_set1_ps((float)(INT8_MIN - p->y_zp)), hi = _mm512_set1_ps((float)(INT8_MAX - p->y_zp));
  const __m512i xzp = _mm512_set1_epi32(p->x_zp), yzp = _mm512_set1_epi32(p->y_zp);
  const int32_t n = p->inner;
  const int relu = p->act == TIDSP_CHANNEL_AFFINE_RELU, clip = p->act == TIDSP_CHANNEL_AFFINE_CLIP;
  const __m512 zero = _mm512_setzero_ps(), c_lo = _mm512_set1_ps(p->lo), c_hi = _mm512_set1_ps(p->hi);
  int32_t o, c, i;
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)n;
      const int8_t *xr = x + base;
      int8_t *yr = y + base;
      const __m512 sc = _mm512_set1_ps(s[c]), bc = _mm512_set1_ps(b[c]);
      for (i = 0; i < n; i += 16) {
        const __mmask16 m = mask16(n - i);
        const __m128i q = _mm_castps_si128(_mm512_castps512_ps128(
            _mm512_castsi512_ps(_mm512_maskz_loadu_epi8((__mmask64)m, xr + i))));
        __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(q), xzp)), xs);
        v = _mm512_mul_ps(v, sc);
        v = _mm512_add_ps(v, bc);
        if (relu) /* 0 > v ? 0 : v (maxps(a, b) is a > b ? a : b) */
          v = _mm512_max_ps(zero, v);
        else if (clip) /* v > lo ? v : lo, then v < hi ? v : hi */
          v = _mm512_min_ps(_mm512_max_ps(v, c_lo), c_hi);
        v = _mm512_div_ps(v, ys);
        v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
        _mm512_mask_cvtepi32_storeu_epi8(yr + i, m, _mm512_add_epi32(_mm512_cvtps_epi32(v), yzp));
      }
    }
  }
}

int32_t tidsp_channel_affine_i8__host_avx512(const tidsp_channel_affine_i8_params *p, const int8_t *x,
                                             const float *s, const float *b, int8_t *y) {
  const int32_t st = tidsp_ref_channel_affine_check(p, x, s, b, y);
  if (st != TIDSP_OK)
    return st;
  affine_rows(p, x, s, b, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
