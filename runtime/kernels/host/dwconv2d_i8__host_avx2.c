/*
 * dwconv2d_i8__host_avx2.c — tidsp_conv2d_i8 for depthwise parameters with
 * AVX2: vpmaddwd on int16 pairs into 8 int32 lanes, row by row (the
 * int16-pair path of dwconv_internal.h). It also runs the depthwise
 * convolutions with horizontal dilation for the AVX-512 VNNI entry.
 *
 * Per output channel co (input channel co / multiplier) and strip of at
 * most DW_COLS output columns, each input row that a tap reads is converted
 * once into a ring slot:
 *   stride_w 1: P[c] = (R[c], R[c + dil_w]) int16 pairs, so that lane j of
 *               the load at P + j + kw·dil_w holds taps kw and kw + 1 of
 *               output j;
 *   stride_w 2: R itself, whose int16 pairs (R[2j + kw], R[2j + kw + 1])
 *               are exactly the 32-bit lanes of the load at R + 2j + kw;
 * where R[c] = x[ih][c0 + c] − x_zp (0 outside the row, converted by
 * unmasked 16-byte loads inside the row) and c0 is the input column of the
 * strip's first output's first tap. An output row is then ⌈k_w/2⌉·k_h
 * multiply-adds per 8 outputs, kept in one register, and the FLOAT
 * requantization is the same float operations as the reference's (or
 * SCALE_SHIFT in exact double arithmetic, rq_internal.h).
 *
 * Stack: DW_RING + 3 slots of DW_SLOT int32 (about 25 KiB). Parameters the
 * direct path does not cover go to tidsp_conv2d_i8__host_avx2 (which in
 * turn sends Q31 and invalid inputs, e.g. a zero point outside int8, to the
 * reference).
 */
#include <string.h>

#include "dwconv_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum { LANES = 8 };

/* The geometry of one strip. */
typedef struct dw_strip {
  int64_t c0;       /* input column of buffer index 0 */
  int32_t cols;     /* output columns in the strip */
  int32_t cols_up;  /* cols rounded up to LANES */
  int32_t r_len;    /* int16 values of R to build */
  int32_t p_len;    /* int32 pairs of P to build (stride 1) */
  int32_t pair_d;   /* distance of the second value of a pair (stride 1) */
} dw_strip;

/* R[0, r_len rounded up to 16) = x_row[c0 + c] − x_zp, 0 outside the row;
 * only the row's own bytes are read. */
static TARGET void build_r(const tidsp_conv2d_params *p, const int8_t *x_row,
                           const dw_strip *s, int16_t *r) {
  const __m256i zp16 = _mm256_set1_epi16((short)p->x_zp);
  const int32_t len = (s->r_len + 15) / 16 * 16;
  int64_t vlo = -s->c0, vhi = (int64_t)p->w_in - s->c0;
  int32_t c;
  if (vlo < 0)
    vlo = 0;
  if (vhi > len)
    vhi = len;
  if (vlo > vhi)
    vlo = vhi;
  for (c = 0; c < (int32_t)vlo; c++)
    r[c] = 0;
  for (; c + 16 <= (int32_t)vhi; c += 16) {
    const __m128i v = _mm_loadu_si128((const __m128i *)(x_row + (s->c0 + c)));
    _mm256_storeu_si256((__m256i *)(r + c), _mm256_sub_epi16(_mm256_cvtepi8_epi16(v), zp16));
  }
  for (; c < (int32_t)vhi; c++)
    r[c] = (int16_t)(x_row[s->c0 + c] - p->x_zp);
  for (; c < len; c++)
    r[c] = 0;
}

/* Converts input row x_row into a ring slot (see the file comment). */
static TARGET void build_slot(const tidsp_conv2d_params *p, const int8_t *x_row,
                              const dw_strip *s, int16_t *tmp, int32_t *slot) {
  int32_t c;
  if (p->stride_w == 2) {
    build_r(p, x_row, s, (int16_t *)slot);
    return;
  }
  build_r(p, x_row, s, tmp);
  for (c = 0; c < s->p_len; c += LANES) {
    const __m256i lo = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(tmp + c)));
    const __m256i hi = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(tmp + c + s->pair_d)));
    _mm256_storeu_si256((__m256i *)(slot + c), _mm256_or_si256(lo, _mm256_slli_epi32(hi, 16)));
  }
}

/* The requantization of one output channel, as vectors: FLOAT (lo, hi, m,
 * zp) or, when ss, SCALE_SHIFT (k). */
typedef struct dw_rq {
  __m256 lo, hi, m;
  __m256i zp, bv;
  int ss;
  tidsp_host_ss8_consts k;
} dw_rq;

/* Requantizes 8 accumulators and stores the first n ≤ 8 outputs. */
static inline __attribute__((always_inline)) TARGET void
store8(__m256i acc, const dw_rq *r, int32_t n, int8_t *y) {
  __m256i a = _mm256_add_epi32(acc, r->bv);
  __m128i o;
  if (r->ss) {
    a = tidsp_host_ss8(a, &r->k);
  } else {
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), r->m);
    v = _mm256_max_ps(v, r->lo); /* v > lo ? v : lo (NaN → lo) */
    v = _mm256_min_ps(v, r->hi); /* v < hi ? v : hi */
    a = _mm256_add_epi32(_mm256_cvtps_epi32(v), r->zp);
  }
  /* values are inside [out_min, out_max] ⊂ int8: the saturating packs only
   * narrow; bytes 0..7 are lanes 0..7 */
  a = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, a), 0xD8);
  o = _mm_packs_epi16(_mm256_castsi256_si128(a), _mm256_castsi256_si128(a));
  if (n >= LANES) {
    _mm_storel_epi64((__m128i *)y, o);
  } else {
    int8_t t8[16];
    _mm_storeu_si128((__m128i *)t8, o);
    memcpy(y, t8, (size_t)n);
  }
}

/* One output row of `cols` outputs: Σ over the nv input rows in reach and
 * their np tap pairs of madd(rows[i] + j + q·pair_step, wrow[i][q]).
 * Inlined with constant nv and np for the 3×3, 5×5 and 7×7 kernels, so the
 * broadcast weights are loaded once per row. */
static inline __attribute__((always_inline)) TARGET void
row_fixed(const int32_t *const *rows, const int32_t *const *wrow, int32_t nv,
          int32_t np, int32_t pair_step, int32_t cols, int8_t *y_row,
          const dw_rq *r) {
  __m256i wv[7][4];
  int32_t i, q, j0;
  for (i = 0; i < nv; i++)
    for (q = 0; q < np; q++)
      wv[i][q] = _mm256_set1_epi32(wrow[i][q]);
  for (j0 = 0; j0 < cols; j0 += LANES) {
    __m256i acc = _mm256_setzero_si256();
    for (i = 0; i < nv; i++)
      for (q = 0; q < np; q++)
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(
            _mm256_loadu_si256((const __m256i *)(rows[i] + j0 + q * pair_step)), wv[i][q]));
    store8(acc, r, cols - j0, y_row + j0);
  }
}

/* row_fixed for any nv and np (border rows, other kernel sizes). */
static TARGET void row_any(const int32_t *const *rows, const int32_t *const *wrow,
                           int32_t nv, int32_t np, int32_t pair_step,
                           int32_t cols, int8_t *y_row, const dw_rq *r) {
  int32_t i, q, j0;
  for (j0 = 0; j0 < cols; j0 += LANES) {
    __m256i acc = _mm256_setzero_si256();
    for (i = 0; i < nv; i++)
      for (q = 0; q < np; q++)
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(
            _mm256_loadu_si256((const __m256i *)(rows[i] + j0 + q * pair_step)),
            _mm256_set1_epi32(wrow[i][q])));
    store8(acc, r, cols - j0, y_row + j0);
  }
}

static TARGET void dw_fast(const tidsp_conv2d_params *p, const int8_t *x,
                           const int8_t *w, const int32_t *bias,
                           const tidsp_host_rq *q, int8_t *y) {
  int32_t ring[DW_RING][DW_SLOT] __attribute__((aligned(32)));
  int16_t tmp[2 * DW_SLOT] __attribute__((aligned(32)));
  int32_t zero_slot[DW_SLOT] __attribute__((aligned(32)));
  int64_t tag[DW_RING];
  int32_t wp[DW_MAX_TAPS]; /* weight pairs, kernel row after kernel row */
  const int32_t *rows[DW_RING], *wrow[DW_RING];
  dw_rq rq;
  const int32_t cpg_out = p->c_out / p->groups;
  const size_t w_stride = tidsp_host_conv_w_stride(p);
  const int32_t npairs = (p->k_w + 1) / 2;
  const size_t in_plane = (size_t)p->h_in * p->w_in;
  const size_t out_plane = (size_t)p->h_out * p->w_out;
  /* int32 offset of tap pair q in a slot: kw = 2q at P + 2q·dil_w
   * (stride 1), or at int16 2q = int32 q of R (stride 2) */
  const int32_t pair_step = p->stride_w == 1 ? 2 * p->dil_w : 1;
  int32_t n, co, ow0, oh, kh, i, nv;
  dw_strip s;

  memset(&rq, 0, sizeof(rq));
  rq.lo = _mm256_set1_ps(q->lo);
  rq.hi = _mm256_set1_ps(q->hi);
  rq.zp = _mm256_set1_epi32(q->zp);
  rq.ss = tidsp_host_rq_is_ss(q);
  s.pair_d = p->k_w > 1 ? p->dil_w : 1;
  memset(zero_slot, 0, sizeof(zero_slot));
  for (n = 0; n < p->n; n++) {
    for (co = 0; co < p->c_out; co++) {
      const int8_t *x_c = x + ((size_t)n * p->c_in + (size_t)(co / cpg_out)) * in_plane;
      int8_t *y_c = y + ((size_t)n * p->c_out + co) * out_plane;
      const __m256i bv = _mm256_set1_epi32(bias ? bias[co] : 0);
      const __m256 m = rq.ss ? _mm256_setzero_ps() : _mm256_set1_ps(tidsp_host_rq_mult(q, co));
      if (rq.ss)
        tidsp_host_ss8_channel(&rq.k, q, co);
      for (kh = 0; kh < p->k_h; kh++)
        tidsp_host_dw_wpairs(w + (size_t)co * w_stride + (size_t)kh * p->k_w, p->k_w,
                             p->w_zp, wp + kh * npairs);
      for (ow0 = 0; ow0 < p->w_out; ow0 += DW_COLS) {
        s.cols = p->w_out - ow0 < DW_COLS ? p->w_out - ow0 : DW_COLS;
        s.cols_up = (s.cols + LANES - 1) / LANES * LANES;
        s.c0 = (int64_t)ow0 * p->stride_w - p->pad_left;
        if (p->stride_w == 1) {
          s.p_len = s.cols_up + (p->k_w - 1) * p->dil_w;
          s.r_len = (s.p_len + LANES - 1) / LANES * LANES + s.pair_d;
        } else {
          s.p_len = 0;
          s.r_len = 2 * s.cols_up + p->k_w + 1;
        }
        for (i = 0; i < DW_RING; i++)
          tag[i] = -1;
        for (oh = 0; oh < p->h_out; oh++) {
          int8_t *y_row = y_c + (size_t)oh * p->w_out + ow0;
          nv = 0;
          for (kh = 0; kh < p->k_h; kh++) {
            const int64_t ih = (int64_t)oh * p->stride_h - p->pad_top + (int64_t)kh * p->dil_h;
            int32_t slot;
            if (ih < 0 || ih >= p->h_in) {
              /* a row of padding: zeros, so that every output row runs
               * the same specialized k_h-row loop */
              rows[nv] = zero_slot;
              wrow[nv] = wp + kh * npairs;
              nv++;
              continue;
            }
            slot = (int32_t)(ih & (DW_RING - 1)); /* ih ≥ 0, DW_RING = 2^k */
            if (tag[slot] != ih) {
              build_slot(p, x_c + (size_t)ih * p->w_in, &s, tmp, ring[slot]);
              tag[slot] = ih;
            }
            rows[nv] = ring[slot];
            wrow[nv] = wp + kh * npairs;
            nv++;
          }
          rq.bv = bv;
          rq.m = m;
          if (nv == 3 && npairs == 2)
            row_fixed(rows, wrow, 3, 2, pair_step, s.cols, y_row, &rq);
          else if (nv == 5 && npairs == 3)
            row_fixed(rows, wrow, 5, 3, pair_step, s.cols, y_row, &rq);
          else if (nv == 7 && npairs == 4)
            row_fixed(rows, wrow, 7, 4, pair_step, s.cols, y_row, &rq);
          else
            row_any(rows, wrow, nv, npairs, pair_step, s.cols, y_row, &rq);
          /* Convert the next output row's new input rows now rather than
           * just before their first loads, which would then wait on the
           * stores (a load spanning two recent stores is not forwarded). */
          for (kh = 0; oh + 1 < p->h_out && kh < p->k_h; kh++) {
            const int64_t ih = (int64_t)(oh + 1) * p->stride_h - p->pad_top + (int64_t)kh * p->dil_h;
            int32_t slot;
            if (ih < 0 || ih >= p->h_in)
              continue;
            slot = (int32_t)(ih & (DW_RING - 1));
            if (tag[slot] != ih) {
              build_slot(p, x_c + (size_t)ih * p->w_in, &s, tmp, ring[slot]);
              tag[slot] = ih;
            }
          }
        }
      }
    }
  }
}

int32_t tidsp_dwconv2d_i8__host_avx2(const tidsp_conv2d_params *p,
                                     const int8_t *x, const int8_t *w,
                                     const int32_t *bias, const void *rq,
                                     int8_t *y) {
  tidsp_host_rq q;
  if (!tidsp_host_dw_fast_ok(p, x, w, rq, y))
    return tidsp_conv2d_i8__host_avx2(p, x, w, bias, rq, y);
  tidsp_host_rq_init(&q, &p->rq, rq);
  dw_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
