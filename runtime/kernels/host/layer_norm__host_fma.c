/*
 * layer_norm__host_fma.c — LayerNormalization (float and int8) for x86-64
 * with AVX2 and FMA (every CPU of the dispatch rows that use it): the
 * reference's row loops (ref/layer_norm_rows.h) in 8-lane vectors, with
 * every rounding step the reference takes, in its order, so the bytes are
 * the reference's:
 *
 *  - the mean: the reference keeps four double partial sums, sum j taking
 *    elements j, j + 4, j + 8, … in turn; one 4-lane double vector does
 *    exactly that (each 8-element load is added as its two halves, low
 *    first), then (l0 + l2) + (l1 + l3) and the < 4 tail in order;
 *  - the variance: eight float fmaf chains over elements j + 8k, one 8-lane
 *    fused multiply-add per 8 elements; the reference's combination tree
 *    and its tail (four plain d·d additions, then fmaf) run as scalars;
 *  - the output: (x − mean)·inv rounded twice (sub, then mul, no fusion),
 *    fmaf with the scale and the bias (0 without one), and for int8 the
 *    reference's quantization (IEEE division by y_scale, clamp to ±512 with
 *    NaN to −512, round half to even by ±1.5·2²³, + zp, saturate).
 *
 * The int8 loads are (float)(x − x_zp)·x_scale like the reference's. Rows
 * shorter than LN_MLAS_MIN take the reference's Welford path (scalar, the
 * same code). int8 rows go four at a time, their chains side by side. In place
 * (y = x) works: the statistics of the four rows are done before any
 * store, and each 8-element block is read before it is written.
 */
#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include "fma_exact_begin.h"
#include <immintrin.h>

#include "../ref/layer_norm_rows.h"

/* 8 elements of a row from i as floats: the reference's loader per lane. */
LN_INLINE __m256 load8(const void *row, int32_t i, int is_i8, const q8 *q) {
  if (is_i8) {
    const __m128i b = _mm_loadl_epi64((const __m128i *)((const int8_t *)row + i));
    const __m256i v = _mm256_sub_epi32(_mm256_cvtepi8_epi32(b), _mm256_set1_epi32(q->zp));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(q->s));
  }
  return _mm256_loadu_ps((const float *)row + i);
}

/* Stores 8 results from i: store_i8's arithmetic per lane, or the floats. */
LN_INLINE void store8(void *row, int32_t i, __m256 v, int is_i8, const q8 *q) {
  if (is_i8) {
    __m256 t = _mm256_div_ps(v, _mm256_set1_ps(q->s));
    __m256i r;
    __m128i h;
    /* vmaxps returns its second operand when the first is NaN */
    t = _mm256_max_ps(t, _mm256_set1_ps(-512.0f));
    t = _mm256_min_ps(t, _mm256_set1_ps(512.0f));
    t = _mm256_sub_ps(_mm256_add_ps(t, _mm256_set1_ps(12582912.0f)), _mm256_set1_ps(12582912.0f));
    r = _mm256_add_epi32(_mm256_cvttps_epi32(t), _mm256_set1_epi32(q->zp));
    /* |r| ≤ 640: the signed saturating packs are the clamp to int8 */
    h = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storel_epi64((__m128i *)((int8_t *)row + i), _mm_packs_epi16(h, h));
    return;
  }
  _mm256_storeu_ps((float *)row + i, v);
}

/* row_mlas of layer_norm_rows.h, vectorized (see the file comment), for R
 * rows at once: each row's chains keep their own order, and the R rows'
 * chains are independent, so they overlap instead of waiting on one
 * another's add latency. */
LN_INLINE void rows_mlas8(const void *const *x, const q8 *lq, const float *scale,
                          const float *bias, void *const *y, const q8 *sq, int32_t n,
                          float epsilon, int is_i8, const int R) {
  const ln_load ld = is_i8 ? load_i8 : load_f32;
  const ln_store sto = is_i8 ? store_i8 : store_f32;
  __m256d l[4];
  __m256 v[4], vm[4], vinv[4];
  float mean[4], inv[4];
  int32_t i, j, r, i8;
  for (r = 0; r < R; r++) {
    l[r] = _mm256_setzero_pd();
    v[r] = _mm256_setzero_ps();
  }
  for (i = 0; i + 8 <= n; i += 8) {
    for (r = 0; r < R; r++) {
      const __m256 e = load8(x[r], i, is_i8, lq);
      l[r] = _mm256_add_pd(l[r], _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
      l[r] = _mm256_add_pd(l[r], _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
  }
  i8 = i;
  for (r = 0; r < R; r++) {
    double ls[4], dsum;
    _mm256_storeu_pd(ls, l[r]);
    i = i8;
    for (; i + 4 <= n; i += 4)
      for (j = 0; j < 4; j++)
        ls[j] += (double)ld(x[r], i + j, lq);
    dsum = (ls[0] + ls[2]) + (ls[1] + ls[3]);
    for (; i < n; i++)
      dsum += (double)ld(x[r], i, lq);
    mean[r] = (float)(dsum / (double)n);
    vm[r] = _mm256_set1_ps(mean[r]);
  }
  for (i = 0; i + 8 <= n; i += 8) {
    for (r = 0; r < R; r++) {
      const __m256 d = _mm256_sub_ps(load8(x[r], i, is_i8, lq), vm[r]);
      v[r] = _mm256_fmadd_ps(d, d, v[r]);
    }
  }
  for (r = 0; r < R; r++) {
    float vs[8], var;
    _mm256_storeu_ps(vs, v[r]);
    var = ((vs[0] + vs[4]) + (vs[2] + vs[6])) + ((vs[1] + vs[5]) + (vs[3] + vs[7]));
    i = i8;
    if (n - i >= 4) {
      for (j = 0; j < 4; j++, i++) {
        const float d = ld(x[r], i, lq) - mean[r];
        const float s2 = d * d;
        var = var + s2;
      }
    }
    for (; i < n; i++) {
      const float d = ld(x[r], i, lq) - mean[r];
      var = fmaf(d, d, var);
    }
    inv[r] = 1.0f / sqrtf(var / (float)n + epsilon);
    vinv[r] = _mm256_set1_ps(inv[r]);
  }
  /* each row's outputs after all rows' statistics: in place, row r is
   * read whole before it is written */
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 sc = _mm256_loadu_ps(scale + i);
    const __m256 b = bias ? _mm256_loadu_ps(bias + i) : _mm256_setzero_ps();
    for (r = 0; r < R; r++) {
      const __m256 c = _mm256_mul_ps(_mm256_sub_ps(load8(x[r], i, is_i8, lq), vm[r]), vinv[r]);
      store8(y[r], i, _mm256_fmadd_ps(c, sc, b), is_i8, sq);
    }
  }
  for (r = 0; r < R; r++)
    for (i = i8; i < n; i++) {
      const float c = (ld(x[r], i, lq) - mean[r]) * inv[r];
      sto(y[r], i, fmaf(c, scale[i], bias ? bias[i] : 0.0f), sq);
    }
}

LN_INLINE void rows8(const void *x, const q8 *lq, const float *scale, const float *bias,
                     void *y, const q8 *sq, int32_t outer, int32_t n, float epsilon,
                     int is_i8) {
  const size_t pitch = (size_t)n * (is_i8 ? 1 : sizeof(float));
  int32_t r = 0, k;
  if (n < LN_MLAS_MIN) {
    for (; r < outer; r++) {
      const void *xr = (const char *)x + (size_t)r * pitch;
      void *yr = (char *)y + (size_t)r * pitch;
      if (is_i8)
        row_welford(xr, load_i8, lq, scale, bias, yr, store_i8, sq, n, epsilon);
      else
        row_welford(xr, load_f32, NULL, scale, bias, yr, store_f32, NULL, n, epsilon);
    }
    return;
  }
  /* (float rows measured no faster four at a time: one by one) */
  for (; r < outer; r += is_i8 ? 4 : 1) {
    const void *xr[4];
    void *yr[4];
    const int32_t R = !is_i8 ? 1 : outer - r < 4 ? outer - r : 4;
    for (k = 0; k < R; k++) {
      xr[k] = (const char *)x + (size_t)(r + k) * pitch;
      yr[k] = (char *)y + (size_t)(r + k) * pitch;
    }
    if (R == 4)
      rows_mlas8(xr, lq, scale, bias, yr, sq, n, epsilon, is_i8, 4);
    else if (R == 3)
      rows_mlas8(xr, lq, scale, bias, yr, sq, n, epsilon, is_i8, 3);
    else if (R == 2)
      rows_mlas8(xr, lq, scale, bias, yr, sq, n, epsilon, is_i8, 2);
    else
      rows_mlas8(xr, lq, scale, bias, yr, sq, n, epsilon, is_i8, 1);
  }
}

int32_t tidsp_layer_norm_f32__host_fma(const tidsp_layer_norm_params *p, const float *x,
                                       const float *scale, const float *bias, float *y) {
  const int32_t st = layer_norm_check(p, x, scale, y);
  if (st != TIDSP_OK)
    return st;
  if (p->variant != TIDSP_LN_PLAIN) /* the scalar rows, fmaf one instruction here */
    return layer_norm_f32_rows(p, x, scale, bias, y);
  rows8(x, NULL, scale, bias, y, NULL, p->outer, p->norm, p->epsilon, 0);
  return TIDSP_OK;
}

int32_t tidsp_layer_norm_i8__host_fma(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                      const float *scale, const float *bias, int8_t *y) {
  q8 in, out;
  const int32_t st = layer_norm_i8_prepare(p, x, scale, y, &in, &out);
  if (st != TIDSP_OK)
    return st;
  rows8(x, &in, scale, bias, y, &out, p->ln.outer, p->ln.norm, p->ln.epsilon, 1);
  return TIDSP_OK;
}
#pragma GCC pop_options
#endif
