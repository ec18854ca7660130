/*
 * dwconv2d_i8__host_avx2.c — tidsp_conv2d_i8 for depthwise parameters with
 * AVX2: vpmaddwd on int16 pairs of horizontally adjacent taps.
 *
 * Per output channel (input channel co / multiplier), the input rows that a
 * band of output rows reads are converted once into int16 rows
 *   R[j][c] = x[ih][c − pad_left] − x_zp   (0 in the padding)
 * Taps kw and kw + 1 of output column ow are R[s·ow + kw] and R[s·ow + kw
 * + 1], side by side: one int32 lane at int16 offset s·ow + kw (s =
 * stride_w). For stride 2 the lanes of eight consecutive outputs are eight
 * consecutive int32 — one load; for stride 1 they are 2 bytes apart, so a
 * load at offset ow + kw holds the even outputs ow, ow + 2, … and one at
 * ow + 1 + kw the odd ones, interleaved again after requantization. An
 * odd k_w pairs its last tap with a zero weight. Each pair of products is
 * at most 2·255² in magnitude and k_h·k_w ≤ DW_MAX_TAPS, so the int32 sums
 * are exact; the bias starts them (added modulo 2³², like the
 * reference's). Requantization is the FLOAT formula with the same float
 * operations as the reference, or SCALE_SHIFT in exact double arithmetic
 * (rq_internal.h). 16 outputs are stored at a time: a row's last, partial
 * store writes past the row into outputs that are stored later (the next
 * row, or the next channel's plane), except at the end of the tensor.
 *
 * With horizontal dilation (stride 1) each tap is its own pair, with a
 * zero partner weight. Wide rows are cut into strips whose rows fit the
 * buffer. When a channel is one strip and one band (small planes:
 * MobileNets' 56² and below), the zero entries and rows the first channel
 * writes stay for the others, which convert only their input columns.
 *
 * It also runs the depthwise convolutions the AVX-512 VNNI entry has no
 * byte-quad path for (horizontal dilation). Stack: DW_RBUF int16 (36 KiB).
 * Parameters outside tidsp_host_dw_fast_ok go to
 * tidsp_conv2d_i8__host_avx2, which in turn sends invalid inputs (e.g. a
 * zero point outside int8) to the reference.
 */
#include <string.h>

#include "dwconv_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum {
  OUT = 16,         /* outputs per step */
  DW_RBUF = 18432,  /* int16 entries of the converted rows of a band (112² planes
                       fit one band: the one-strip-one-band path) */
  DW_KPAIRS = 8     /* tap pairs per kernel row: ⌈k_w / 2⌉ */
};

/* The requantization of one output channel. */
typedef struct dw_rq {
  int ss;
  __m256 m, lo, hi;
  __m256i zp16;
  tidsp_host_ss8_consts k;
} dw_rq;

/* Requantizes 8 accumulators (the bias included) to int32 values whose
 * int16 narrowing plus zp16 (FLOAT) is the output. */
static inline __attribute__((always_inline)) TARGET __m256i rq8(const dw_rq *r, __m256i a) {
  __m256 v;
  if (r->ss)
    return tidsp_host_ss8(a, &r->k);
  v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), r->m);
  v = _mm256_max_ps(v, r->lo); /* v > lo ? v : lo (NaN → lo) */
  v = _mm256_min_ps(v, r->hi); /* v < hi ? v : hi */
  return _mm256_cvtps_epi32(v);
}

/* Stores the n ≤ 16 outputs held as int16 (zero point added) in w16,
 * lanes in output order; `spill` allows writing all 16. */
static inline __attribute__((always_inline)) TARGET void store16(__m256i w16, int32_t n,
                                                                 int spill, int8_t *y) {
  /* values in [out_min, out_max] ⊂ int8: the saturating pack only narrows */
  const __m128i o = _mm_packs_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
  if (n == OUT || spill) {
    _mm_storeu_si128((__m128i *)y, o);
  } else {
    int8_t tmp[OUT];
    _mm_storeu_si128((__m128i *)tmp, o);
    memcpy(y, tmp, (size_t)n);
  }
}

/* One output row of `cols` outputs: rows[kh] is the converted input row of
 * kernel row kh, at the int16 offset of output column 0's tap 0; wp[kh·np +
 * q] the weight pair at int16 offset q·qstep (qstep 2: taps 2q, 2q + 1;
 * with dilation, one tap per pair, qstep = dil_w). */
static inline __attribute__((always_inline)) TARGET void
dw_row(const int16_t *const *rows, const int32_t *wp, int32_t nkh, int32_t np, int32_t qstep,
       int32_t sw, int32_t cols, __m256i bias, const dw_rq *r, int spill_end, int8_t *y) {
  int32_t c0, kh, q;
  for (c0 = 0; c0 < cols; c0 += OUT) {
    __m256i a0 = bias, a1 = bias, w16;
    for (kh = 0; kh < nkh; kh++) {
      const int16_t *row = rows[kh];
      for (q = 0; q < np; q++) {
        const __m256i wv = _mm256_set1_epi32(wp[kh * np + q]);
        if (sw == 1) { /* a0: outputs c0, c0 + 2, …; a1: c0 + 1, c0 + 3, … */
          a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(
                                        _mm256_loadu_si256((const __m256i *)(row + c0 + qstep * q)), wv));
          a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(
                                        _mm256_loadu_si256((const __m256i *)(row + c0 + 1 + qstep * q)), wv));
        } else { /* a0: outputs c0 .. c0 + 7; a1: c0 + 8 .. c0 + 15 */
          a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(
                                        _mm256_loadu_si256((const __m256i *)(row + 2 * c0 + qstep * q)), wv));
          a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(
                                        _mm256_loadu_si256((const __m256i *)(row + 2 * c0 + 16 + qstep * q)), wv));
        }
      }
    }
    a0 = rq8(r, a0);
    a1 = rq8(r, a1);
    if (sw == 1) { /* interleave even and odd outputs: 0..3 8..11 | 4..7 12..15 */
      const __m256i lo = _mm256_unpacklo_epi32(a0, a1), hi = _mm256_unpackhi_epi32(a0, a1);
      w16 = _mm256_packs_epi32(lo, hi);
    } else {
      w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(a0, a1), 0xD8);
    }
    if (!r->ss)
      w16 = _mm256_add_epi16(w16, r->zp16);
    store16(w16, cols - c0 < OUT ? cols - c0 : OUT, !(spill_end && c0 + OUT >= cols),
            y + c0);
  }
}

/* R[c] = x_row[c0 + c] − x_zp for c < len (a multiple of 16; 0 outside
 * the row). 16 entries per step; a step of fewer valid entries loads past
 * them when the load stays inside the input tensor (below x_hi), masking
 * them to 0, else converts them one at a time. */
static TARGET void build_row(const int8_t *x_row, int32_t w_in, int64_t c0, int32_t x_zp,
                             int32_t len, const int8_t *x_hi, int16_t *rr) {
  const __m256i zp16 = _mm256_set1_epi16((short)x_zp);
  const __m256i iota = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const int64_t lo64 = -c0 < 0 ? 0 : (-c0 > len ? len : -c0);
  const int64_t hi64 = w_in - c0 < lo64 ? lo64 : (w_in - c0 > len ? len : w_in - c0);
  const int32_t lo = (int32_t)lo64, hi = (int32_t)hi64;
  int32_t c;
  for (c = 0; c < len; c += 16)
    _mm256_storeu_si256((__m256i *)(rr + c), _mm256_setzero_si256());
  for (c = lo; c < hi; c += 16) {
    const int8_t *src = x_row + (c0 + c);
    __m256i v;
    if (hi - c < 16 && src + 16 > x_hi) { /* the tensor ends within 16 bytes */
      for (; c < hi; c++)
        rr[c] = (int16_t)(x_row[c0 + c] - x_zp);
      break;
    }
    v = _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)src)), zp16);
    if (hi - c < 16)
      v = _mm256_and_si256(v, _mm256_cmpgt_epi16(_mm256_set1_epi16((short)(hi - c)), iota));
    _mm256_storeu_si256((__m256i *)(rr + c), v); /* past hi: 0 (len has room) */
  }
}

/* build_row for a row whose entries outside [lo, lo + n) are already 0
 * (the same geometry converted before): only the input columns, 16 at a
 * time, the last step's entries past n masked to 0 by `tail`; src is the
 * row's first input column, dst its entry lo. Per row of a small plane
 * this is a few instructions where build_row's zero fill, bounds and call
 * cost about 20 cycles (measured: converting the rows was about half of
 * the 7² and 14² layers). */
static inline __attribute__((always_inline)) TARGET void
convert_valid(const int8_t *src, int32_t n, __m256i zp16, __m256i tail, int32_t x_zp,
              const int8_t *x_hi, int16_t *dst) {
  int32_t c;
  for (c = 0; c + 16 <= n; c += 16)
    _mm256_storeu_si256((__m256i *)(dst + c),
                        _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(src + c))), zp16));
  if (c < n) {
    if (src + c + 16 > x_hi) { /* the tensor ends within 16 bytes */
      for (; c < n; c++)
        dst[c] = (int16_t)(src[c] - x_zp);
    } else {
      _mm256_storeu_si256((__m256i *)(dst + c),
                          _mm256_and_si256(_mm256_sub_epi16(_mm256_cvtepi8_epi16(
                                                                _mm_loadu_si128((const __m128i *)(src + c))),
                                                            zp16),
                                           tail));
    }
  }
}

static TARGET void dw_fast(const tidsp_conv2d_params *p, const int8_t *x, const int8_t *w,
                           const int32_t *bias, const tidsp_host_rq *q, int8_t *y) {
  int16_t rbuf[DW_RBUF] __attribute__((aligned(32)));
  int32_t wp[DW_MAX_TAPS]; /* weight pairs, kernel row after kernel row */
  const int16_t *rows[DW_MAX_K];
  dw_rq r;
  const int32_t sw = p->stride_w, dilated = p->dil_w > 1 && p->k_w > 1;
  /* pairs per kernel row and their spacing in a converted row */
  const int32_t np = dilated ? p->k_w : (p->k_w + 1) / 2, qstep = dilated ? p->dil_w : 2;
  const int32_t cpg_out = p->c_out / p->groups;
  const size_t w_stride = tidsp_host_conv_w_stride(p);
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in, out_plane = (size_t)p->h_out * (size_t)p->w_out;
  const int32_t span = (p->k_h - 1) * p->dil_h + 1; /* input rows of one output row */
  int32_t strip, len, band, simple, v_lo, v_n, built = 0;
  int32_t n, co, oh0, ow0, oh, kh, kw, j;
  __m256i tail, zp16;
  const int8_t *y_end = y + (size_t)p->n * (size_t)p->c_out * out_plane;
  const int8_t *x_hi = x + (size_t)p->n * (size_t)p->c_in * in_plane;
  /* Converted row length of a strip of `strip` output columns: the columns
   * rounded up to OUT, their taps and the last pair's partner, one vector
   * of read slack. The widest strip whose span rows fit rbuf. */
  for (strip = (p->w_out + OUT - 1) / OUT * OUT;; strip -= OUT) {
    len = ((strip - 1) * sw + (np - 1) * qstep + 2 + 16 + 15) / 16 * 16;
    if ((int64_t)len * span <= DW_RBUF || strip == OUT)
      break;
  }
  band = ((DW_RBUF / len) - span) / p->stride_h + 1;
  if (band > p->h_out)
    band = p->h_out;
  /* One strip and one band per channel (small planes): every channel's
   * rows have the same zero entries and zero rows, written by the first
   * channel's build_row; later channels convert only the input columns
   * [lo, hi) of the rows inside the input (convert_valid). */
  simple = strip >= p->w_out && band >= p->h_out;
  {
    const int64_t c0 = -(int64_t)p->pad_left;
    const int64_t lo64 = -c0 < 0 ? 0 : (-c0 > len ? len : -c0);
    const int64_t hi64 = p->w_in - c0 < lo64 ? lo64 : (p->w_in - c0 > len ? len : p->w_in - c0);
    v_lo = (int32_t)lo64;
    v_n = (int32_t)(hi64 - lo64);
    tail = _mm256_cmpgt_epi16(_mm256_set1_epi16((short)(v_n % 16)),
                              _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  }
  zp16 = _mm256_set1_epi16((short)p->x_zp);
  memset(&r, 0, sizeof(r));
  r.ss = tidsp_host_rq_is_ss(q);
  r.lo = _mm256_set1_ps(q->lo);
  r.hi = _mm256_set1_ps(q->hi);
  r.zp16 = _mm256_set1_epi16((short)q->zp);
  r.m = _mm256_setzero_ps();
  for (n = 0; n < p->n; n++) {
    for (co = 0; co < p->c_out; co++) {
      const int8_t *x_c = x + ((size_t)n * (size_t)p->c_in + (size_t)(co / cpg_out)) * in_plane;
      int8_t *y_c = y + ((size_t)n * (size_t)p->c_out + (size_t)co) * out_plane;
      const int8_t *w_co = w + (size_t)co * w_stride;
      const __m256i bv = _mm256_set1_epi32(bias ? bias[co] : 0);
      if (r.ss)
        tidsp_host_ss8_channel(&r.k, q, co);
      else
        r.m = _mm256_set1_ps(tidsp_host_rq_mult(q, co));
      for (kh = 0; kh < p->k_h; kh++) {
        if (dilated) {
          for (kw = 0; kw < p->k_w; kw++)
            wp[kh * np + kw] = (int32_t)(uint16_t)(int16_t)(w_co[kh * p->k_w + kw] - p->w_zp);
        } else {
          tidsp_host_dw_wpairs(w_co + (size_t)kh * (size_t)p->k_w, p->k_w, p->w_zp, wp + kh * np);
        }
      }
      for (ow0 = 0; ow0 < p->w_out; ow0 += strip) {
        const int32_t cols = p->w_out - ow0 < strip ? p->w_out - ow0 : strip;
        const int64_t c0 = (int64_t)ow0 * sw - p->pad_left;
        for (oh0 = 0; oh0 < p->h_out; oh0 += band) {
          const int32_t nb = p->h_out - oh0 < band ? p->h_out - oh0 : band;
          const int64_t ih0 = (int64_t)oh0 * p->stride_h - p->pad_top;
          const int32_t nri = (nb - 1) * p->stride_h + span;
          for (j = 0; j < nri; j++) {
            const int64_t ih = ih0 + j;
            if (ih < 0 || ih >= p->h_in) {
              if (!(simple && built))
                build_row(NULL, 0, 0, 0, len, x_hi, rbuf + (size_t)j * (size_t)len); /* zeros */
            } else if (simple && built) {
              if (v_n > 0)
                convert_valid(x_c + (size_t)ih * (size_t)p->w_in + (c0 + v_lo), v_n, zp16, tail, p->x_zp,
                              x_hi, rbuf + (size_t)j * (size_t)len + v_lo);
            } else {
              build_row(x_c + (size_t)ih * (size_t)p->w_in, p->w_in, c0, p->x_zp, len, x_hi,
                        rbuf + (size_t)j * (size_t)len);
            }
          }
          built = 1;
          for (oh = 0; oh < nb; oh++) {
            int8_t *y_row = y_c + (size_t)(oh0 + oh) * (size_t)p->w_out + ow0;
            /* a strip's last store may write past it into outputs stored
             * later, but never past the tensor */
            const int spill_end = y_row + (cols + OUT - 1) / OUT * OUT > y_end;
            for (kh = 0; kh < p->k_h; kh++)
              rows[kh] = rbuf + (size_t)(oh * p->stride_h + kh * p->dil_h) * (size_t)len;
            /* the common kernels inlined with constant loop bounds */
            if (p->k_h == 3 && np == 2 && qstep == 2 && sw == 1)
              dw_row(rows, wp, 3, 2, 2, 1, cols, bv, &r, spill_end, y_row);
            else if (p->k_h == 3 && np == 2 && qstep == 2)
              dw_row(rows, wp, 3, 2, 2, 2, cols, bv, &r, spill_end, y_row);
            else if (p->k_h == 5 && np == 3 && qstep == 2 && sw == 1)
              dw_row(rows, wp, 5, 3, 2, 1, cols, bv, &r, spill_end, y_row);
            else if (p->k_h == 5 && np == 3 && qstep == 2)
              dw_row(rows, wp, 5, 3, 2, 2, cols, bv, &r, spill_end, y_row);
            else if (sw == 1)
              dw_row(rows, wp, p->k_h, np, qstep, 1, cols, bv, &r, spill_end, y_row);
            else
              dw_row(rows, wp, p->k_h, np, qstep, 2, cols, bv, &r, spill_end, y_row);
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
  tidsp_host_rq_init(&q, &p->rq, rq, p->c_out);
  dw_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
