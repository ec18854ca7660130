/*
 * channel_affine_i8__host_avx2.c — tidsp_channel_affine_i8 with AVX2: the
 * scheme of channel_affine_i8__host_avx512.c (see there) on 8 values at a
 * time; a row's last inner % 8 values take the reference's formula.
 */
#include "../kernel_variants.h"
#include "../ref/channel_affine_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

static TARGET void affine_rows(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s,
                               const float *b, int8_t *y) {
  const __m256 xs = _mm256_set1_ps(p->x_scale), ys = _mm256_set1_ps(p->y_scale);
  const __m256 lo = _mm256_set1_ps((float)(INT8_MIN - p->y_zp)), hi = _mm256_set1_ps((float)(INT8_MAX - p->y_zp));
  const __m256i xzp = _mm256_set1_epi32(p->x_zp), yzp = _mm256_set1_epi32(p->y_zp);
  const int32_t n = p->inner;
  const int relu = p->act == TIDSP_CHANNEL_AFFINE_RELU, clip = p->act == TIDSP_CHANNEL_AFFINE_CLIP;
  const __m256 zero = _mm256_setzero_ps(), c_lo = _mm256_set1_ps(p->lo), c_hi = _mm256_set1_ps(p->hi);
  int32_t o, c, i;
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)n;
      const int8_t *xr = x + base;
      int8_t *yr = y + base;
      const __m256 sc = _mm256_set1_ps(s[c]), bc = _mm256_set1_ps(b[c]);
      for (i = 0; i + 8 <= n; i += 8) {
        const __m128i q8 = _mm_loadl_epi64((const __m128i *)(const void *)(xr + i));
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(q8), xzp)), xs);
        __m256i q;
        __m128i w;
        v = _mm256_mul_ps(v, sc);
        v = _mm256_add_ps(v, bc);
        if (relu) /* 0 > v ? 0 : v (maxps(a, b) is a > b ? a : b) */
          v = _mm256_max_ps(zero, v);
        else if (clip) /* v > lo ? v : lo, then v < hi ? v : hi */
          v = _mm256_min_ps(_mm256_max_ps(v, c_lo), c_hi);
        v = _mm256_div_ps(v, ys);
        v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
        q = _mm256_add_epi32(_mm256_cvtps_epi32(v), yzp);
        /* int8 values already: the saturating packs keep them, in order */
        w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)(void *)(yr + i), _mm_packs_epi16(w, w));
      }
      for (; i < n; i++)
        yr[i] = tidsp_ref_channel_affine_one(p, xr[i], s[c], b[c]);
    }
  }
}

int32_t tidsp_channel_affine_i8__host_avx2(const tidsp_channel_affine_i8_params *p, const int8_t *x,
                                           const float *s, const float *b, int8_t *y) {
  const int32_t st = tidsp_ref_channel_affine_check(p, x, s, b, y);
  if (st != TIDSP_OK)
    return st;
  affine_rows(p, x, s, b, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
