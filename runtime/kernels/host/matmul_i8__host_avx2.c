/*
 * matmul_i8__host_avx2.c — tidsp_matmul_i8 with AVX2 (vpmaddwd on exact
 * int16 pairs, then vpaddd), register-blocked.
 *
 * Y[i][j] = Σ_k (x[i][k] − x_zp)(w[j][k] − w_zp): a vector holds 8
 * consecutive columns j of one row of Y, as Y is stored. Per pair of taps
 * (2q, 2q+1) the micro-kernel multiplies two vectors of the weight panel
 *   panel[q][j] = (w[j][2q] − w_zp) | (w[j][2q+1] − w_zp) << 16   (16 columns)
 * by the broadcast pair of each of 6 rows of X, converted once per block
 *   xs[i][k] = x[i][k] − x_zp   (int16; as int32, element q is pair q)
 * into 6 × 2 = 12 ymm accumulators. The panel of 16 columns is made from
 * 8 + 8 weight rows by an 8 × 8 transpose of their pairs, once per block
 * of MB rows of X, and the rows of X once per block of NSB columns; the
 * reduction runs in chunks of KC taps, its partial sums kept per block
 * when K > KC. The bias starts the accumulators (added modulo 2³², like
 * the reference's).
 *
 * Each pair of products is at most 2·255² in magnitude, so vpmaddwd never
 * overflows; the int32 sums wrap like the reference's (the exact sum fits
 * int32 for the K the reference accepts as exact). Requantization is per
 * column: the FLOAT formula with the same float operations, or SCALE_SHIFT
 * in exact double arithmetic (rq_internal.h).
 *
 * With fewer than FEW_ROWS rows of X (a classifier head, a decode step)
 * the panel would cost more than the products it serves: each output is
 * then one dot product of a row of X with a row of W (matmul_rows).
 *
 * Stack: MB·KC·2 + NSB·KC·2 + MB·NSB·4 bytes (about 68 KiB). Q31 takes
 * the FLOAT epilogue (rq_internal.h); inputs the reference rejects go to
 * tidsp_matmul_i8__ref.
 */
#include <string.h>

#include "rq_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum {
  MRM = 6,   /* rows of X per micro-kernel tile */
  NB = 16,   /* columns per tile: two vectors of 8 */
  KC = 256,  /* taps per chunk (even) */
  MB = 48,   /* rows of X per block (a multiple of MRM) */
  NSB = 64,  /* columns per block (a multiple of NB) */
  FEW_ROWS = 5, /* fewer rows of X: dot products (matmul_rows) */
  NJ = 4     /* matmul_rows: rows of W per pass over a row of X */
};

/* One block's requantization of 16 columns, per lane. */
typedef struct cols16 {
  int32_t bias[NB];
  float mult[NB];
  __m256d ss_m[4], ss_h[4]; /* SCALE_SHIFT: scale·2^−shift and the rounding half */
} cols16;

static TARGET void cols_init(const tidsp_host_rq *q, const int32_t *bias, int32_t n0,
                             int32_t nc, cols16 *c) {
  double m[NB], h[NB];
  int32_t j;
  for (j = 0; j < NB; j++) {
    const int32_t col = n0 + (j < nc ? j : 0);
    c->bias[j] = bias && j < nc ? bias[col] : 0;
    if (tidsp_host_rq_is_ss(q)) {
      const int32_t sh = tidsp_host_rq_shift(q, col);
      m[j] = ldexp((double)tidsp_host_rq_scale(q, col), -sh); /* exact, see rq_internal.h */
      h[j] = sh > 0 ? 0.5 : 0.0;
      c->mult[j] = 0.0f;
    } else {
      c->mult[j] = tidsp_host_rq_mult(q, col);
      m[j] = h[j] = 0.0;
    }
  }
  for (j = 0; j < 4; j++) {
    c->ss_m[j] = _mm256_loadu_pd(m + 4 * j);
    c->ss_h[j] = _mm256_loadu_pd(h + 4 * j);
  }
}

/* 8 outputs of vector v (columns 8v .. 8v + 7) of one row: int32 values in
 * [out_min − zp, out_max − zp] (FLOAT) or [out_min, out_max] (SCALE_SHIFT). */
static inline __attribute__((always_inline)) TARGET __m256i
rq8(const tidsp_host_rq *q, const cols16 *c, __m256i acc, int32_t v) {
  if (tidsp_host_rq_is_ss(q)) {
    const __m256d lo = _mm256_set1_pd((double)q->out_min), hi = _mm256_set1_pd((double)q->out_max);
    __m256d d0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(acc));
    __m256d d1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256(acc, 1));
    d0 = _mm256_floor_pd(_mm256_add_pd(_mm256_mul_pd(d0, c->ss_m[2 * v]), c->ss_h[2 * v]));
    d1 = _mm256_floor_pd(_mm256_add_pd(_mm256_mul_pd(d1, c->ss_m[2 * v + 1]), c->ss_h[2 * v + 1]));
    d0 = _mm256_min_pd(_mm256_max_pd(d0, lo), hi);
    d1 = _mm256_min_pd(_mm256_max_pd(d1, lo), hi);
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvttpd_epi32(d0)),
                                   _mm256_cvttpd_epi32(d1), 1);
  } else {
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(c->mult + 8 * v));
    f = _mm256_max_ps(f, _mm256_set1_ps(q->lo)); /* v > lo ? v : lo (NaN → lo) */
    f = _mm256_min_ps(f, _mm256_set1_ps(q->hi)); /* v < hi ? v : hi */
    return _mm256_cvtps_epi32(f);
  }
}

/* Requantizes one row's two vectors and stores its nc ≤ 16 outputs. */
static inline __attribute__((always_inline)) TARGET void
store_row(const tidsp_host_rq *q, const cols16 *c, __m256i a0, __m256i a1, int32_t nc,
          int8_t *y) {
  __m256i w16 = _mm256_packs_epi32(rq8(q, c, a0, 0), rq8(q, c, a1, 1));
  __m128i o;
  if (!tidsp_host_rq_is_ss(q))
    w16 = _mm256_add_epi16(w16, _mm256_set1_epi16((short)q->zp));
  /* values in [out_min, out_max] ⊂ int8: the saturating pack only narrows */
  w16 = _mm256_permute4x64_epi64(w16, 0xD8);
  o = _mm_packs_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
  if (nc == NB) {
    _mm_storeu_si128((__m128i *)y, o);
  } else {
    int8_t tmp[NB];
    _mm_storeu_si128((__m128i *)tmp, o);
    memcpy(y, tmp, (size_t)nc);
  }
}

/* The tile of rows xs[0..5] (int32 pairs, xstride apart) × the 16-column
 * panel over np pairs. first: the accumulators start from the bias; else
 * from part. last: requantize and store rows < mr (nc columns) at y,
 * ystride apart; else store the sums to part ([MRM][NB] int32). */
static TARGET void mm_tile(const int32_t *xs, int32_t xstride, const int32_t *panel,
                           int32_t np, const cols16 *c, const tidsp_host_rq *q, int first,
                           int last, int32_t *part, int32_t mr, int32_t nc, int8_t *y,
                           int32_t ystride) {
  __m256i c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  const int32_t *x0 = xs, *x1 = xs + xstride, *x2 = xs + 2 * xstride;
  const int32_t *x3 = xs + 3 * xstride, *x4 = xs + 4 * xstride, *x5 = xs + 5 * xstride;
  int32_t t;
  if (first) {
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)c->bias);
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(c->bias + 8));
    c00 = c10 = c20 = c30 = c40 = c50 = b0;
    c01 = c11 = c21 = c31 = c41 = c51 = b1;
  } else {
    c00 = _mm256_loadu_si256((const __m256i *)(part + 0));
    c01 = _mm256_loadu_si256((const __m256i *)(part + 8));
    c10 = _mm256_loadu_si256((const __m256i *)(part + 16));
    c11 = _mm256_loadu_si256((const __m256i *)(part + 24));
    c20 = _mm256_loadu_si256((const __m256i *)(part + 32));
    c21 = _mm256_loadu_si256((const __m256i *)(part + 40));
    c30 = _mm256_loadu_si256((const __m256i *)(part + 48));
    c31 = _mm256_loadu_si256((const __m256i *)(part + 56));
    c40 = _mm256_loadu_si256((const __m256i *)(part + 64));
    c41 = _mm256_loadu_si256((const __m256i *)(part + 72));
    c50 = _mm256_loadu_si256((const __m256i *)(part + 80));
    c51 = _mm256_loadu_si256((const __m256i *)(part + 88));
  }
  for (t = 0; t < np; t++) {
    const __m256i w0 = _mm256_load_si256((const __m256i *)(panel + t * NB));
    const __m256i w1 = _mm256_load_si256((const __m256i *)(panel + t * NB + 8));
    __m256i xv;
    xv = _mm256_set1_epi32(x0[t]);
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(w0, xv));
    c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(w1, xv));
    xv = _mm256_set1_epi32(x1[t]);
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(w0, xv));
    c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(w1, xv));
    xv = _mm256_set1_epi32(x2[t]);
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(w0, xv));
    c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(w1, xv));
    xv = _mm256_set1_epi32(x3[t]);
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(w0, xv));
    c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(w1, xv));
    xv = _mm256_set1_epi32(x4[t]);
    c40 = _mm256_add_epi32(c40, _mm256_madd_epi16(w0, xv));
    c41 = _mm256_add_epi32(c41, _mm256_madd_epi16(w1, xv));
    xv = _mm256_set1_epi32(x5[t]);
    c50 = _mm256_add_epi32(c50, _mm256_madd_epi16(w0, xv));
    c51 = _mm256_add_epi32(c51, _mm256_madd_epi16(w1, xv));
  }
  if (!last) {
    _mm256_storeu_si256((__m256i *)(part + 0), c00);
    _mm256_storeu_si256((__m256i *)(part + 8), c01);
    _mm256_storeu_si256((__m256i *)(part + 16), c10);
    _mm256_storeu_si256((__m256i *)(part + 24), c11);
    _mm256_storeu_si256((__m256i *)(part + 32), c20);
    _mm256_storeu_si256((__m256i *)(part + 40), c21);
    _mm256_storeu_si256((__m256i *)(part + 48), c30);
    _mm256_storeu_si256((__m256i *)(part + 56), c31);
    _mm256_storeu_si256((__m256i *)(part + 64), c40);
    _mm256_storeu_si256((__m256i *)(part + 72), c41);
    _mm256_storeu_si256((__m256i *)(part + 80), c50);
    _mm256_storeu_si256((__m256i *)(part + 88), c51);
    return;
  }
  store_row(q, c, c00, c01, nc, y);
  if (mr > 1)
    store_row(q, c, c10, c11, nc, y + ystride);
  if (mr > 2)
    store_row(q, c, c20, c21, nc, y + 2 * (size_t)ystride);
  if (mr > 3)
    store_row(q, c, c30, c31, nc, y + 3 * (size_t)ystride);
  if (mr > 4)
    store_row(q, c, c40, c41, nc, y + 4 * (size_t)ystride);
  if (mr > 5)
    store_row(q, c, c50, c51, nc, y + 5 * (size_t)ystride);
}

/* xs[i][0 .. kc rounded up to 16) = x[i][k0 ..] − x_zp for the block's mb
 * rows, 0 past the row (an odd kc's last pair has a zero partner), and
 * zero rows up to the next multiple of MRM. */
static TARGET void convert_x(const int8_t *x, size_t xstride, int32_t mb, int32_t k0,
                             int32_t kc, int32_t x_zp, int16_t *xs) {
  const __m256i zp16 = _mm256_set1_epi16((short)x_zp);
  int32_t i, k;
  for (i = mb; i % MRM; i++) /* the rows a last, partial tile reads */
    memset(xs + (size_t)i * KC, 0, sizeof(int16_t) * (size_t)((kc + 15) / 16 * 16));
  for (i = 0; i < mb; i++) {
    const int8_t *xr = x + (size_t)i * xstride + k0;
    int16_t *d = xs + (size_t)i * KC;
    for (k = 0; k + 16 <= kc; k += 16)
      _mm256_storeu_si256((__m256i *)(d + k),
                          _mm256_sub_epi16(_mm256_cvtepi8_epi16(
                                               _mm_loadu_si128((const __m128i *)(xr + k))),
                                           zp16));
    for (; k < kc; k++)
      d[k] = (int16_t)(xr[k] - x_zp);
    for (; k % 16; k++)
      d[k] = 0;
  }
}

/* The panel of columns [n0, n0 + nc) (nc ≤ 16) for taps [k0, k0 + kc):
 * panel[q][j] = pair q of column j, zero for columns past nc and for the
 * partner of an odd kc's last tap. Eight rows at a time: their pairs (8
 * per row, as the row's int16 differences read as int32) are transposed
 * so that one vector holds one pair of 8 columns. */
static TARGET void convert_panel(const int8_t *w, size_t w_stride, int32_t nc, int32_t k0,
                                 int32_t kc, int32_t w_zp, const int8_t *w_end,
                                 int32_t *panel) {
  const __m256i zp16 = _mm256_set1_epi16((short)w_zp);
  const int32_t np = (kc + 1) / 2;
  int32_t h, j, q;
  for (h = 0; h < 2; h++) { /* columns 8h .. 8h + 7 */
    for (q = 0; q < np; q += 8) {
      __m256i r[8], t0[8], t1[8];
      for (j = 0; j < 8; j++) {
        const int32_t col = 8 * h + j;
        const int8_t *src = w + (size_t)col * w_stride + k0 + 2 * q;
        const int32_t avail = kc - 2 * q; /* taps of this row left */
        if (col >= nc) {
          r[j] = _mm256_setzero_si256();
        } else if (avail >= 16 || src + 16 <= w_end) {
          /* 16 bytes, those past the chunk zeroed below (a dense last
           * row's tail may run into the next row or the padding) */
          r[j] = _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)src)),
                                  zp16);
          if (avail < 16) {
            const __m256i keep = _mm256_cmpgt_epi16(
                _mm256_set1_epi16((short)avail),
                _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
            r[j] = _mm256_and_si256(r[j], keep);
          }
        } else {
          int16_t tmp[16];
          int32_t u;
          for (u = 0; u < 16; u++)
            tmp[u] = (int16_t)(u < avail ? src[u] - w_zp : 0);
          r[j] = _mm256_loadu_si256((const __m256i *)tmp);
        }
      }
      /* 8 × 8 transpose of int32 pairs: r[j] lane p → out[p] lane j */
      for (j = 0; j < 4; j++) {
        t0[2 * j] = _mm256_unpacklo_epi32(r[2 * j], r[2 * j + 1]);
        t0[2 * j + 1] = _mm256_unpackhi_epi32(r[2 * j], r[2 * j + 1]);
      }
      for (j = 0; j < 2; j++) {
        t1[4 * j] = _mm256_unpacklo_epi64(t0[4 * j], t0[4 * j + 2]);
        t1[4 * j + 1] = _mm256_unpackhi_epi64(t0[4 * j], t0[4 * j + 2]);
        t1[4 * j + 2] = _mm256_unpacklo_epi64(t0[4 * j + 1], t0[4 * j + 3]);
        t1[4 * j + 3] = _mm256_unpackhi_epi64(t0[4 * j + 1], t0[4 * j + 3]);
      }
      /* t1[0..3]: pairs 0,1,2,3 | 4,5,6,7 of rows 0-3; t1[4..7] rows 4-7 */
      for (j = 0; j < 4; j++) {
        if (q + j < np)
          _mm256_store_si256((__m256i *)(panel + (size_t)(q + j) * NB + 8 * h),
                             _mm256_permute2x128_si256(t1[j], t1[4 + j], 0x20));
        if (q + 4 + j < np)
          _mm256_store_si256((__m256i *)(panel + (size_t)(q + 4 + j) * NB + 8 * h),
                             _mm256_permute2x128_si256(t1[j], t1[4 + j], 0x31));
      }
    }
  }
}

static TARGET void matmul_fast(const tidsp_matmul_params *p, const int8_t *x, const int8_t *w,
                               const int32_t *bias, const tidsp_host_rq *q, int8_t *y) {
  int16_t xs[MB * KC] __attribute__((aligned(32)));
  int32_t panel[NSB / NB][KC / 2 * NB] __attribute__((aligned(32)));
  int32_t part[(MB / MRM) * (NSB / NB) * MRM * NB] __attribute__((aligned(32)));
  cols16 cols[NSB / NB];
  const int32_t K = p->k;
  const size_t w_stride = tidsp_host_matmul_w_stride(p); /* row j at w + j·stride */
  const int8_t *w_end = w + (size_t)(p->n - 1) * w_stride + (size_t)K;
  const int32_t nchunk = K > 0 ? (K + KC - 1) / KC : 1;
  int32_t n0, m0, ch, b, i0;

  for (n0 = 0; n0 < p->n; n0 += NSB) {
    const int32_t nsb = p->n - n0 < NSB ? p->n - n0 : NSB;
    for (b = 0; b * NB < nsb; b++)
      cols_init(q, bias, n0 + b * NB, nsb - b * NB < NB ? nsb - b * NB : NB, &cols[b]);
    for (m0 = 0; m0 < p->m; m0 += MB) {
      const int32_t mb = p->m - m0 < MB ? p->m - m0 : MB;
      for (ch = 0; ch < nchunk; ch++) {
        const int32_t k0 = ch * KC, kc = K - k0 < KC ? K - k0 : KC;
        const int32_t np = (kc + 1) / 2;
        convert_x(x + (size_t)m0 * (size_t)K, (size_t)K, mb, k0, kc, p->x_zp, xs);
        for (b = 0; b * NB < nsb; b++) {
          const int32_t nc = nsb - b * NB < NB ? nsb - b * NB : NB;
          if (kc > 0)
            convert_panel(w + (size_t)(n0 + b * NB) * w_stride, w_stride, nc, k0, kc, p->w_zp,
                          w_end, panel[b]);
          for (i0 = 0; i0 < mb; i0 += MRM) {
            const int32_t mr = mb - i0 < MRM ? mb - i0 : MRM;
            /* rows past mb (zero in xs) are computed, not stored */
            const int32_t *xr = (const int32_t *)(xs + (size_t)i0 * KC);
            mm_tile(xr, KC / 2, panel[b], np, &cols[b], q, ch == 0,
                    ch == nchunk - 1, part + ((size_t)(i0 / MRM) * (NSB / NB) + (size_t)b) * MRM * NB, mr,
                    nc, y + (size_t)(m0 + i0) * (size_t)p->n + n0 + b * NB, p->n);
          }
        }
      }
    }
  }
}

/* ---- few rows: dot products ------------------------------------------------ */

static TARGET uint32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return (uint32_t)_mm_cvtsi128_si32(s);
}

/* Y row by row, each output one dot product of a row of X with a row of W
 * (both read as stored, 16 taps per vpmaddwd pair of vectors, NJ rows of W
 * sharing each load of X; one horizontal sum per output, the last k % 16
 * in scalar code): for m < FEW_ROWS, where converting the weight panel
 * would cost more than the products it serves. */
static TARGET void matmul_rows(const tidsp_matmul_params *p, const int8_t *x, const int8_t *w,
                               const int32_t *bias, const tidsp_host_rq *q, int8_t *y) {
  const int32_t K = p->k, kv = K - K % 16;
  const size_t w_stride = tidsp_host_matmul_w_stride(p);
  const __m256i xzp = _mm256_set1_epi16((short)p->x_zp);
  const __m256i wzp = _mm256_set1_epi16((short)p->w_zp);
  int32_t i, j0, jj, k;
  for (j0 = 0; j0 < p->n; j0 += NJ) {
    const int32_t nj = p->n - j0 < NJ ? p->n - j0 : NJ;
    const int8_t *wr[NJ];
    for (jj = 0; jj < NJ; jj++)
      wr[jj] = w + (size_t)(j0 + (jj < nj ? jj : nj - 1)) * w_stride;
    for (i = 0; i < p->m; i++) {
      const int8_t *xr = x + (size_t)i * (size_t)K;
      int8_t *yr = y + (size_t)i * (size_t)p->n + j0;
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
  tidsp_host_rq_init(&q, &p->rq, rq, p->n);
  if (p->m < FEW_ROWS)
    matmul_rows(p, x, w, bias, &q, y);
  else
    matmul_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
