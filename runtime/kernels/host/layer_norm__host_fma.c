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

/* ---- int8 rows with AVX-512: two rows a vector --------------------------
 *
 * tidsp_layer_norm_i8__host_avx512 runs rows in pairs, row r in lanes 0-7
 * and row r + 1 in lanes 8-15 of each vector, so that one 16-lane
 * instruction does the work of the 8-lane one above for both rows while
 * every lane keeps the reference's order:
 *  - each row is dequantized once, into buf (block k of 8 elements of both
 *    rows as one vector), and read from there by the three passes;
 *  - the mean's double sum is exact, so any order gives the reference's:
 *    every term fl((x − x_zp)·x_scale) with x − x_zp ≠ 0 is at least
 *    |x_scale| in magnitude, hence a multiple of ulp(x_scale) (2^−149 for a
 *    subnormal scale), and below 256·|x_scale| < 2^32 such units; any sum
 *    of up to LN_PAIR_MAX (< 2^21) of them is an integer number of units
 *    below 2^53, exactly a double (and ±inf/NaN terms give the same
 *    ±inf/NaN in every order). Here 8 doubles a row, then their sum;
 *  - the variance: lane j of the vector's half is the reference's fmaf
 *    chain j (elements j + 8k, k in order), its tree and tail as above;
 *  - the output per lane as in store8, packed with vpmovsdb (|r| ≤ 640:
 *    the saturation is the clamp).
 * Rows longer than LN_PAIR_MAX, shorter than LN_MLAS_MIN (Welford) and an
 * odd last row run tidsp_layer_norm_i8__host_fma. In place works: a
 * pair's rows are in buf (and their tails read) before anything is
 * stored, and the tails are stored last.
 *
 * Pairs go four at a time (LN_PAIRS), each pass over all of them: one
 * pair at a time its chain of dependent statistics (sum, mean, variance
 * chain, tree, inverse) left the core idle (0.144 ms for the first shape
 * below). Measured on the AMD EPYC (Zen 5), taskset -c 0, best of 50,
 * rows × norm: 3136 × 96 (ConvNeXt-T's first stage) 0.166 ms with the
 * 8-lane rows → 0.100; 784 × 192 0.082 → 0.043; 197 × 768 (ViT-B)
 * 0.076 → 0.039. */
#define LN512 __attribute__((target("avx2,fma,avx512f,avx512bw")))
enum {
  LN_PAIR_MAX = 1024, /* longest row of the pair path */
  LN_PAIRS = 4        /* pairs at once: buf is 32 KiB */
};

/* Both rows' copies of one value each: lanes 0-7 a, lanes 8-15 b. */
static inline LN512 __m512 halves(float a, float b) {
  return _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(_mm256_set1_ps(a))),
                                                _mm256_castps_si256(_mm256_set1_ps(b)), 1));
}

/* 8 floats from f, in both halves. */
static inline LN512 __m512 both8(const float *f) {
  const __m512 v = _mm512_castps256_ps512(_mm256_loadu_ps(f));
  return _mm512_shuffle_f32x4(v, v, 0x44);
}

/* np ≤ LN_PAIRS pairs of rows from x → y (row 2·q and 2·q + 1 of pair q,
 * n apart), n in [LN_MLAS_MIN, LN_PAIR_MAX]. Each pass runs over all the
 * pairs before the next: a pair's statistics are a chain of dependent
 * steps (sum, mean, variance chain, its tree, inverse), and the pairs'
 * chains overlap. */
static LN512 void pairs512(const int8_t *x, const q8 *lq, const float *scale, const float *bias,
                           int8_t *y, const q8 *sq, int32_t np, int32_t n, float epsilon) {
  float buf[LN_PAIRS][2 * LN_PAIR_MAX] __attribute__((aligned(64)));
  int8_t tail[2 * LN_PAIRS][8];
  const int32_t nb = n / 8, n8 = 8 * nb;
  const __m512i zp = _mm512_set1_epi32(lq->zp), yzp = _mm512_set1_epi32(sq->zp);
  const __m512 xs = _mm512_set1_ps(lq->s), ys = _mm512_set1_ps(sq->s);
  __m512d acc[2 * LN_PAIRS];
  __m512 v[LN_PAIRS], vm[LN_PAIRS], vinv[LN_PAIRS];
  float mean[2 * LN_PAIRS], inv[2 * LN_PAIRS];
  int32_t k, i, r, j, q;
  for (q = 0; q < np; q++) {
    const int8_t *x0 = x + (size_t)(2 * q) * (size_t)n, *x1 = x0 + n;
    acc[2 * q] = acc[2 * q + 1] = _mm512_setzero_pd();
    for (k = 0; k < nb; k++) {
      const __m128i b = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(x0 + 8 * k)),
                                           _mm_loadl_epi64((const __m128i *)(x1 + 8 * k)));
      const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(b), zp)), xs);
      _mm512_store_ps(buf[q] + 16 * k, f);
      acc[2 * q] = _mm512_add_pd(acc[2 * q], _mm512_cvtps_pd(_mm512_castps512_ps256(f)));
      acc[2 * q + 1] = _mm512_add_pd(
          acc[2 * q + 1], _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1))));
    }
  }
  for (r = 0; r < 2 * np; r++) {
    const int8_t *xr = x + (size_t)r * (size_t)n;
    double dsum = _mm512_reduce_add_pd(acc[r]);
    for (i = n8; i < n; i++)
      dsum += (double)load_i8(xr, i, lq);
    mean[r] = (float)(dsum / (double)n);
  }
  for (q = 0; q < np; q++) {
    vm[q] = halves(mean[2 * q], mean[2 * q + 1]);
    v[q] = _mm512_setzero_ps();
  }
  for (k = 0; k < nb; k++)
    for (q = 0; q < np; q++) {
      const __m512 d = _mm512_sub_ps(_mm512_load_ps(buf[q] + 16 * k), vm[q]);
      v[q] = _mm512_fmadd_ps(d, d, v[q]);
    }
  for (r = 0; r < 2 * np; r++) {
    const int8_t *xr = x + (size_t)r * (size_t)n;
    float vs[16], var;
    _mm512_storeu_ps(vs, v[r / 2]);
    for (j = 0; j < 8; j++)
      vs[j] = vs[8 * (r % 2) + j];
    var = ((vs[0] + vs[4]) + (vs[2] + vs[6])) + ((vs[1] + vs[5]) + (vs[3] + vs[7]));
    i = n8;
    if (n - i >= 4) {
      for (j = 0; j < 4; j++, i++) {
        const float d = load_i8(xr, i, lq) - mean[r];
        const float s2 = d * d;
        var = var + s2;
      }
    }
    for (; i < n; i++) {
      const float d = load_i8(xr, i, lq) - mean[r];
      var = fmaf(d, d, var);
    }
    inv[r] = 1.0f / sqrtf(var / (float)n + epsilon);
    /* the tail's results, stored after the vectors (in place: the
     * vector stores do not reach them, and these reads come first) */
    for (i = n8; i < n; i++) {
      const float c = (load_i8(xr, i, lq) - mean[r]) * inv[r];
      store_i8(tail[r], i - n8, fmaf(c, scale[i], bias ? bias[i] : 0.0f), sq);
    }
  }
  for (q = 0; q < np; q++)
    vinv[q] = halves(inv[2 * q], inv[2 * q + 1]);
  for (k = 0; k < nb; k++) {
    const __m512 sc = both8(scale + 8 * k);
    const __m512 bb = bias ? both8(bias + 8 * k) : _mm512_setzero_ps();
    for (q = 0; q < np; q++) {
      int8_t *y0 = y + (size_t)(2 * q) * (size_t)n;
      const __m512 c = _mm512_mul_ps(_mm512_sub_ps(_mm512_load_ps(buf[q] + 16 * k), vm[q]), vinv[q]);
      __m512 t = _mm512_div_ps(_mm512_fmadd_ps(c, sc, bb), ys);
      __m128i o;
      t = _mm512_max_ps(t, _mm512_set1_ps(-512.0f)); /* NaN → −512: the second operand */
      t = _mm512_min_ps(t, _mm512_set1_ps(512.0f));
      t = _mm512_sub_ps(_mm512_add_ps(t, _mm512_set1_ps(12582912.0f)), _mm512_set1_ps(12582912.0f));
      o = _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvttps_epi32(t), yzp));
      _mm_storel_epi64((__m128i *)(y0 + 8 * k), o);
      /* the high 8 bytes through an integer store: a double store needs 8-byte alignment (UBSan) */
      _mm_storel_epi64((__m128i *)(void *)(y0 + n + 8 * k), _mm_unpackhi_epi64(o, o));
    }
  }
  for (r = 0; r < 2 * np; r++)
    for (i = n8; i < n; i++)
      y[(size_t)r * (size_t)n + (size_t)i] = tail[r][i - n8];
}

int32_t LN512 tidsp_layer_norm_i8__host_avx512(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                               const float *scale, const float *bias, int8_t *y) {
  q8 in, out;
  const int32_t st = layer_norm_i8_prepare(p, x, scale, y, &in, &out);
  const int32_t n = st == TIDSP_OK ? p->ln.norm : 0;
  int32_t r, np;
  tidsp_layer_norm_i8_params last;
  if (st != TIDSP_OK || n < LN_MLAS_MIN || n > LN_PAIR_MAX)
    return tidsp_layer_norm_i8__host_fma(p, x, scale, bias, y);
  for (r = 0; r + 2 <= p->ln.outer; r += 2 * np) {
    np = (p->ln.outer - r) / 2 < LN_PAIRS ? (p->ln.outer - r) / 2 : LN_PAIRS;
    pairs512(x + (size_t)r * (size_t)n, &in, scale, bias, y + (size_t)r * (size_t)n, &out, np, n,
             p->ln.epsilon);
  }
  if (r == p->ln.outer)
    return TIDSP_OK;
  last = *p;
  last.ln.outer = 1;
  return tidsp_layer_norm_i8__host_fma(&last, x + (size_t)r * (size_t)n, scale, bias,
                                       y + (size_t)r * (size_t)n);
}
#include "fma_exact_end.h"
#endif
