/*
 * conv2d_i8__host_avx2.c — tidsp_conv2d_i8 with AVX2 (vpmaddwd: 8 lanes ×
 * 2 int16 products per instruction).
 *
 * Same blocking as the AVX-512 VNNI variant (a matrix product per group
 * over k = (ci, kh, kw), taps gathered per block of 16 output pixels), but
 * on exact int16 differences instead of u8·s8 quads:
 *   xbuf[k/2][pixel 0..15][k%2] = x − x_zp     (pads and taps past K: 0)
 *   wpair[row][k/2]             = (w[k] − w_zp, w[k+1] − w_zp)
 * Each pair of products is at most 2·255² in magnitude, so vpmaddwd never
 * overflows; the int32 sums wrap like the reference's (K ≤ 33025 keeps the
 * exact sum inside int32) and the bias is added modulo 2³².
 * Requantization is the FLOAT formula with the same float operations, or
 * SCALE_SHIFT in exact double arithmetic (rq_internal.h).
 *
 * Stack: KC·32 + MR·KC·2 + COB·16·4 bytes (28 KiB). Q31 requantization and
 * inputs the reference rejects go to tidsp_conv2d_i8__ref.
 */
#include <string.h>

#include "rq_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum {
  LANES = 16, /* output pixels per block: 2 ymm of 8 */
  MR = 4,     /* output channels per micro-kernel call */
  KC = 512,   /* taps per chunk (a multiple of 2) */
  COB = 128   /* output channels whose accumulators are kept per block */
};

/* Gathers taps [k0, k0 + kc) of block b into xbuf as int16 x − x_zp. */
static TARGET void pack_chunk(const tidsp_conv2d_params *p, const int8_t *x_g,
                              int32_t K, const tidsp_host_block *b, int32_t k0,
                              int32_t kc, int16_t *xbuf) {
  int8_t rows[2][LANES];
  const __m256i zp = _mm256_set1_epi16((short)p->x_zp);
  const int32_t np = (kc + 1) / 2;
  const int32_t ksz = p->k_h * p->k_w;
  /* tap k0 + 2q + j = (ci, kh, kw), stepped without divisions */
  int32_t ci = k0 / ksz, kh = k0 % ksz / p->k_w, kw = k0 % p->k_w;
  int32_t q, j;
  for (q = 0; q < np; q++) {
    __m256i v[2], lo, hi;
    for (j = 0; j < 2; j++) {
      const int32_t k = k0 + 2 * q + j;
      if (k < K) {
        tidsp_host_conv_gather(p, x_g, ci, kh, kw, b, LANES, rows[j]);
        tidsp_host_next_tap(p, &ci, &kh, &kw);
        v[j] = _mm256_sub_epi16(
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)rows[j])), zp);
      } else {
        v[j] = _mm256_setzero_si256();
      }
    }
    /* unpack interleaves within 128-bit lanes; permute2x128 restores order */
    lo = _mm256_unpacklo_epi16(v[0], v[1]); /* pixels 0..3 | 8..11 */
    hi = _mm256_unpackhi_epi16(v[0], v[1]); /* pixels 4..7 | 12..15 */
    _mm256_store_si256((__m256i *)(xbuf + (size_t)q * 2 * LANES),
                       _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_store_si256((__m256i *)(xbuf + (size_t)q * 2 * LANES + 16),
                       _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}

/* wpair[q] = (w[2q] − w_zp) | (w[2q+1] − w_zp) << 16 for the kc taps of one
 * row; the second half of the last pair is 0 when kc is odd. */
static TARGET void pack_weights(const int8_t *w, int32_t kc, int32_t w_zp,
                                int32_t *wpair) {
  const __m256i zp = _mm256_set1_epi16((short)w_zp);
  int32_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    const __m256i v = _mm256_sub_epi16(
        _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + k))), zp);
    _mm256_storeu_si256((__m256i *)(wpair + k / 2), v);
  }
  for (; k < kc; k += 2) {
    const uint32_t a = (uint16_t)(int16_t)(w[k] - w_zp);
    const uint32_t b = k + 1 < kc ? (uint16_t)(int16_t)(w[k + 1] - w_zp) : 0u;
    wpair[k / 2] = (int32_t)(a | b << 16);
  }
}

/* tile[i][0..15] (+)= Σ over np pairs of wpair[i]·xbuf for i < mr. */
static TARGET void micro_kernel(const int16_t *xbuf, int32_t np,
                                const int32_t *wpair, int32_t mr, int first,
                                int32_t *tile) {
  __m256i acc[MR][2];
  int32_t i, q;
#pragma GCC unroll 4
  for (i = 0; i < MR; i++) {
    acc[i][0] = first || i >= mr ? _mm256_setzero_si256()
                                 : _mm256_load_si256((const __m256i *)(tile + i * LANES));
    acc[i][1] = first || i >= mr ? _mm256_setzero_si256()
                                 : _mm256_load_si256((const __m256i *)(tile + i * LANES + 8));
  }
  for (q = 0; q < np; q++) {
    const __m256i x0 = _mm256_load_si256((const __m256i *)(xbuf + (size_t)q * 2 * LANES));
    const __m256i x1 = _mm256_load_si256((const __m256i *)(xbuf + (size_t)q * 2 * LANES + 16));
#pragma GCC unroll 4
    for (i = 0; i < MR; i++) {
      const __m256i wv = _mm256_set1_epi32(wpair[(size_t)i * (KC / 2) + q]);
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(x0, wv));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(x1, wv));
    }
  }
#pragma GCC unroll 4
  for (i = 0; i < MR; i++) {
    if (i >= mr)
      break;
    _mm256_store_si256((__m256i *)(tile + i * LANES), acc[i][0]);
    _mm256_store_si256((__m256i *)(tile + i * LANES + 8), acc[i][1]);
  }
}

/* Requantizes the block's accumulators of output channels [co0, co0 + cb)
 * and stores the block's `lanes` outputs of each. */
static TARGET void requant_store(const tidsp_host_rq *q, const int32_t *tile,
                                 const int32_t *bias, int32_t co0, int32_t cb,
                                 int32_t lanes, int8_t *y_block, size_t plane) {
  const __m256 lo = _mm256_set1_ps(q->lo);
  const __m256 hi = _mm256_set1_ps(q->hi);
  const __m256i zp = _mm256_set1_epi32(q->zp);
  const int ss = tidsp_host_rq_is_ss(q);
  int32_t i, j;
  for (i = 0; i < cb; i++) {
    const int32_t co = co0 + i;
    const __m256i bv = _mm256_set1_epi32(bias ? bias[co] : 0);
    __m256i r[2];
    __m128i o;
    if (ss) {
      tidsp_host_ss8_consts k;
      tidsp_host_ss8_channel(&k, q, co);
      for (j = 0; j < 2; j++) {
        const __m256i a = _mm256_load_si256((const __m256i *)(tile + i * LANES + 8 * j));
        r[j] = tidsp_host_ss8(_mm256_add_epi32(a, bv), &k);
      }
    } else {
      const __m256 m = _mm256_set1_ps(tidsp_host_rq_mult(q, co));
      for (j = 0; j < 2; j++) {
        __m256i a = _mm256_load_si256((const __m256i *)(tile + i * LANES + 8 * j));
        __m256 v;
        a = _mm256_add_epi32(a, bv);
        v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), m);
        v = _mm256_max_ps(v, lo); /* v > lo ? v : lo (NaN → lo) */
        v = _mm256_min_ps(v, hi); /* v < hi ? v : hi */
        r[j] = _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
      }
    }
    /* values are inside [out_min, out_max] ⊂ int8: the saturating packs
     * only narrow */
    {
      const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(r[0], r[1]), 0xD8);
      o = _mm_packs_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
    }
    if (lanes == LANES) {
      _mm_storeu_si128((__m128i *)(y_block + (size_t)co * plane), o);
    } else {
      int8_t tmp[LANES];
      _mm_storeu_si128((__m128i *)tmp, o);
      memcpy(y_block + (size_t)co * plane, tmp, (size_t)lanes);
    }
  }
}

static TARGET void conv_fast(const tidsp_conv2d_params *p, const int8_t *x,
                             const int8_t *w, const int32_t *bias,
                             const tidsp_host_rq *q, int8_t *y) {
  int16_t xbuf[KC * LANES] __attribute__((aligned(32)));
  int32_t wpair[MR * (KC / 2)] __attribute__((aligned(32)));
  int32_t tile[COB * LANES] __attribute__((aligned(32)));
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  const int32_t K = cpg_in * p->k_h * p->k_w;
  const size_t w_stride = tidsp_host_conv_w_stride(p); /* row co at w + co·stride */
  const size_t in_plane = (size_t)p->h_in * p->w_in;
  const size_t out_plane = (size_t)p->h_out * p->w_out;
  int32_t n, g, cb0, k0, i0, i;
  tidsp_host_block b;

  for (n = 0; n < p->n; n++) {
    for (g = 0; g < p->groups; g++) {
      const int8_t *x_g = x + ((size_t)n * p->c_in + (size_t)g * cpg_in) * in_plane;
      const int32_t co_g = g * cpg_out;
      tidsp_host_block_first(&b, p->h_out, p->w_out, LANES);
      do {
        const int32_t lanes = b.rows * b.cols;
        const size_t flat0 = (size_t)b.oh0 * p->w_out + b.ow0;
        int8_t *y_block = y + (size_t)n * p->c_out * out_plane + flat0;
        int packed = 0; /* xbuf holds the whole reduction (one chunk) */
        for (cb0 = 0; cb0 < cpg_out; cb0 += COB) {
          const int32_t cb = cpg_out - cb0 < COB ? cpg_out - cb0 : COB;
          for (k0 = 0; k0 < K; k0 += KC) {
            const int32_t kc = K - k0 < KC ? K - k0 : KC;
            if (!packed) {
              pack_chunk(p, x_g, K, &b, k0, kc, xbuf);
              packed = kc == K;
            }
            for (i0 = 0; i0 < cb; i0 += MR) {
              const int32_t mr = cb - i0 < MR ? cb - i0 : MR;
              for (i = 0; i < MR; i++) {
                const int32_t co = co_g + cb0 + i0 + (i < mr ? i : mr - 1);
                pack_weights(w + (size_t)co * w_stride + k0, kc, p->w_zp,
                             wpair + (size_t)i * (KC / 2));
              }
              micro_kernel(xbuf, (kc + 1) / 2, wpair, mr, k0 == 0,
                           tile + (size_t)i0 * LANES);
            }
          }
          requant_store(q, tile, bias, co_g + cb0, cb, lanes, y_block, out_plane);
        }
      } while (tidsp_host_block_next(&b, p->h_out, p->w_out, LANES));
    }
  }
}

int32_t tidsp_conv2d_i8__host_avx2(const tidsp_conv2d_params *p,
                                   const int8_t *x, const int8_t *w,
                                   const int32_t *bias, const void *rq,
                                   int8_t *y) {
  tidsp_host_rq q;
  if (!tidsp_host_conv_fast_ok(p, x, w, rq, y))
    return tidsp_conv2d_i8__ref(p, x, w, bias, rq, y);
  tidsp_host_rq_init(&q, &p->rq, rq);
  conv_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
