/*
 * pool__host_avx512.c — tidsp_maxpool_i8, tidsp_maxpool_f32,
 * tidsp_global_avgpool_i8 and tidsp_avgpool_i8 with AVX-512 (F + BW).
 *
 * Max pooling, stride_w 1 or 2 (the direct kernels): each output vector
 * of one row is computed in registers from masked loads straight from the
 * input rows, one per window tap, lanes outside the row reading the type's
 * lowest value (never a winner, as the reference's skipped padding taps);
 * the masks are the same for every row and plane and are computed once.
 *   int8:  vpmaxsb over all taps (max is exact and order-free); stride 2
 *          loads 64 consecutive columns and vpmovwb keeps the even bytes.
 *   float: the order matters (a NaN never wins a comparison, and +0 / −0
 *          keep the first one met), so each input row of the window is
 *          reduced along the window, then the rows are folded in kh order,
 *          every step m = t > m ? t : m (maxps(t, m)) from −inf: the same
 *          first maximum as the reference's row-major scan.
 * Other strides use padded row buffers (pool_internal.h) with the same
 * orders, and keep every stride_w-th window maximum.
 * Global average pooling sums each plane with vpsadbw on x + 128 (exact
 * in 64 bits; the int32 wrap-around of the reference is applied after),
 * then requantizes it with the reference's own plan.
 * Average pooling (FLOAT kind) follows pool_internal.h's float row scheme.
 */
#include "pool_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw")))

/* Padded rows of at most this many int8 / float elements. */
enum { CAP_I8 = 4096, CAP_F32 = 2048 };

static inline __mmask64 mask64(int64_t n) {
  return n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
}
static inline __mmask32 mask32(int64_t n) {
  return n >= 32 ? ~(__mmask32)0 : (__mmask32)((1u << n) - 1);
}
static inline __mmask16 mask16(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

/* The address of element `base` of a row (base may be negative: only the
 * lanes of the row are then loaded, masked, and nothing outside it). */
static inline const void *row_at(const void *row, int64_t base, int32_t esz) {
  return (const void *)((uintptr_t)row + (uintptr_t)(base * esz));
}

/* The direct kernels' load masks, the same for every row and plane:
 * masks[c·k_w + k] has lane t set when input column
 * stride_w·c·step − pad_left + k·dil_w + t (t < lanes) lies in the row,
 * for the output vectors c = 0, 1, … of `step` outputs. 0 when they would
 * not fit MAX_MASKS (the caller then takes the row-buffer path). */
enum { MAX_MASKS = 1024 };

static int direct_masks(const tidsp_pool2d_params *p, int32_t step,
                        int32_t lanes, uint64_t *masks) {
  const int64_t vectors = ((int64_t)p->w_out + step - 1) / step;
  int64_t c, k, base;
  if (vectors * p->k_w > MAX_MASKS)
    return 0;
  for (c = 0; c < vectors; c++) {
    for (k = 0; k < p->k_w; k++) {
      base = (int64_t)p->stride_w * c * step - p->pad_left + k * p->dil_w;
      masks[c * p->k_w + k] = tidsp_ref_bits64(-base, (int64_t)p->w_in - base) &
                              tidsp_ref_bits64(0, lanes);
    }
  }
  return 1;
}

/* ---- maxpool_i8 ----------------------------------------------------------------- */

/* Stride 1 or 2 along the row: each output vector is the max of masked
 * loads straight from the input rows, one per window tap; lanes outside the
 * row read −128 (the mask keeps the load inside the row). */
static TARGET void maxpool_i8_direct(const tidsp_pool2d_params *p,
                                     const uint64_t *masks, const int8_t *x,
                                     int8_t *y) {
  const int64_t planes = (int64_t)p->n * p->c;
  const int32_t k_w = p->k_w, dw = p->dil_w, w_in = p->w_in, w_out = p->w_out;
  const int32_t pl = p->pad_left, s = p->stride_w;
  const int32_t step = s == 1 ? 64 : 32; /* outputs per vector */
  const __m512i low = _mm512_set1_epi8((char)TIDSP_REF_I8_MIN);
  const size_t row_step = (size_t)p->dil_h * (size_t)w_in;
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, j, k;
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)w_in;
    int8_t *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += w_out) {
      const uint64_t *mj = masks;
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      for (j = 0; j < w_out; j += step, mj += k_w) {
        const int8_t *xr = xp + tidsp_host_pool_row_offset(p, oh, kh_lo);
        __m512i v = low;
        for (kh = kh_lo; kh < kh_hi; kh++, xr += row_step) {
          /* lane t of tap k: input column s·j − pad_left + k·dil_w + t */
          int64_t base = (int64_t)s * j - pl;
          for (k = 0; k < k_w; k++, base += dw)
            v = _mm512_max_epi8(v, _mm512_mask_loadu_epi8(low, (__mmask64)mj[k], row_at(xr, base, 1)));
        }
        if (s == 1) /* lane t is output j + t */
          _mm512_mask_storeu_epi8(yp + j, mask64(w_out - j), v);
        else /* lane 2t is output j + t: keep the low byte of each pair */
          _mm512_mask_cvtepi16_storeu_epi8(yp + j, mask32(w_out - j), v);
      }
    }
  }
}

/* Stride 1 with w_out = w_in (a "same" pool, GoogLeNet's 3×3/1 pad 1):
 * output o = oh·w + ow of a plane reads input o + (kh·dil_h − pad_top)·w +
 * kw·dil_w − pad_left, so 64 consecutive outputs of the flattened plane,
 * across rows, are one masked load per tap: a 7- or 14-wide row no longer
 * holds a whole vector to itself. masks[v·taps + kh·k_w + kw] keeps the
 * lanes of output vector v whose tap lies in the plane (column and row);
 * a lane past the plane's outputs keeps none. 0 when the table would not
 * fit MAX_MASKS (the caller takes another path). */
static int flat_masks(const tidsp_pool2d_params *p, uint64_t *masks) {
  const int64_t w = p->w_in, outs = (int64_t)p->h_out * w;
  const int64_t vectors = (outs + 63) / 64, taps = (int64_t)p->k_h * p->k_w;
  int64_t v, kh, kw, t;
  if (p->stride_h != 1 || p->stride_w != 1 || p->w_out != p->w_in || vectors * taps > MAX_MASKS)
    return 0;
  for (v = 0; v < vectors; v++) {
    for (kh = 0; kh < p->k_h; kh++) {
      for (kw = 0; kw < p->k_w; kw++) {
        uint64_t m = 0;
        for (t = 0; t < 64 && v * 64 + t < outs; t++) {
          const int64_t o = v * 64 + t;
          const int64_t ih = o / w + kh * p->dil_h - p->pad_top;
          const int64_t iw = o % w + kw * p->dil_w - p->pad_left;
          if (ih >= 0 && ih < p->h_in && iw >= 0 && iw < w)
            m |= (uint64_t)1 << t;
        }
        masks[(v * p->k_h + kh) * p->k_w + kw] = m;
      }
    }
  }
  return 1;
}

static TARGET void maxpool_i8_flat(const tidsp_pool2d_params *p,
                                   const uint64_t *masks, const int8_t *x,
                                   int8_t *y) {
  const int64_t planes = (int64_t)p->n * p->c;
  const int64_t w = p->w_in, outs = (int64_t)p->h_out * w, in_plane = (int64_t)p->h_in * w;
  const int32_t k_h = p->k_h, k_w = p->k_w;
  const __m512i low = _mm512_set1_epi8((char)TIDSP_REF_I8_MIN);
  int64_t nc, j;
  int32_t kh, kw;
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)(nc * in_plane);
    int8_t *yp = y + (size_t)(nc * outs);
    const uint64_t *mv = masks;
    for (j = 0; j < outs; j += 64) {
      __m512i v = low;
      for (kh = 0; kh < k_h; kh++) {
        int64_t base = j + ((int64_t)kh * p->dil_h - p->pad_top) * w - p->pad_left;
        for (kw = 0; kw < k_w; kw++, base += p->dil_w, mv++)
          v = _mm512_max_epi8(v, _mm512_mask_loadu_epi8(low, (__mmask64)*mv, row_at(xp, base, 1)));
      }
      _mm512_mask_storeu_epi8(yp + j, mask64(outs - j), v);
    }
  }
}

/* Stride 2 both ways with w_in = 2·w_out (the 3×3/2 and 2×2/2
 * downsamplers), separably, so that 7- to 28-wide output rows do not each
 * take a vector of 9 taps:
 *   H[r][ow] = max over kw of input row r at 2·ow + kw·dil_w − pad_left,
 *     for every input row r: over the flattened plane, H index r·w_out + ow
 *     reads input 2·(r·w_out + ow) + kw·dil_w − pad_left, so each tap is one
 *     64-byte masked load for 32 H values (vpmovwb keeps the even bytes);
 *   y[oh][ow] = max over kh of H[2·oh + kh·dil_h − pad_top][ow], the taps
 *     that fall on input rows (tidsp_host_pool_taps), one row load each.
 * The max is exact and order-free, so the bytes are the reference's.
 * hmasks[v·k_w + kw]: the input bytes of H vector v's tap kw that lie in
 * the H value's own input row (even bytes only); 0 when the table or
 * H (FLAT2_CAP bytes, on the stack) would not fit, or when rows of more
 * than 32 outputs fill a vector per row anyway (ResNet's and GoogLeNet's
 * 112 → 56: 0.072 against the direct path's 0.055 ms in one
 * -profile-layers run at load 3, so not taken; they go to
 * maxpool_i8_half). */
enum { FLAT2_CAP = 8192 };

static int flat2_masks(const tidsp_pool2d_params *p, uint64_t *hmasks) {
  const int64_t w = p->w_in, wo = p->w_out, n_h = (int64_t)p->h_in * wo;
  const int64_t vectors = (n_h + 31) / 32;
  int64_t v, kw, t;
  if (p->stride_h != 2 || p->stride_w != 2 || w != 2 * wo || n_h > FLAT2_CAP || wo > 32 ||
      vectors * p->k_w > MAX_MASKS)
    return 0;
  for (v = 0; v < vectors; v++) {
    for (kw = 0; kw < p->k_w; kw++) {
      uint64_t m = 0;
      for (t = 0; t < 32 && v * 32 + t < n_h; t++) {
        const int64_t hi = v * 32 + t;
        const int64_t iw = 2 * (hi % wo) + kw * p->dil_w - p->pad_left;
        if (iw >= 0 && iw < w)
          m |= (uint64_t)1 << (2 * t);
      }
      hmasks[v * p->k_w + kw] = m;
    }
  }
  return 1;
}

static TARGET void maxpool_i8_flat2(const tidsp_pool2d_params *p,
                                    const uint64_t *hmasks, const int8_t *x,
                                    int8_t *y) {
  int8_t h[FLAT2_CAP + 64];
  const int64_t planes = (int64_t)p->n * p->c;
  const int64_t wo = p->w_out, n_h = (int64_t)p->h_in * wo, in_plane = (int64_t)p->h_in * p->w_in;
  const int64_t out_plane = (int64_t)p->h_out * wo;
  const int32_t k_w = p->k_w;
  const __m512i low = _mm512_set1_epi8((char)TIDSP_REF_I8_MIN);
  const __mmask64 row_mask = mask64(wo);
  int64_t nc, j;
  int32_t oh, kh, kh_lo, kh_hi, kw;
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)(nc * in_plane);
    int8_t *yp = y + (size_t)(nc * out_plane);
    const uint64_t *mv = hmasks;
    for (j = 0; j < n_h; j += 32) {
      int64_t base = 2 * j - p->pad_left;
      __m512i v = low;
      for (kw = 0; kw < k_w; kw++, base += p->dil_w, mv++)
        v = _mm512_max_epi8(v, _mm512_mask_loadu_epi8(low, (__mmask64)*mv, row_at(xp, base, 1)));
      /* the even bytes (the H values); a lane past n_h lands in the slack */
      _mm256_storeu_si256((__m256i *)(void *)(h + j), _mm512_cvtepi16_epi8(v));
    }
    for (oh = 0; oh < p->h_out; oh++, yp += wo) {
      const int8_t *hr;
      __m512i v;
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      hr = h + ((int64_t)oh * 2 - p->pad_top + (int64_t)kh_lo * p->dil_h) * wo;
      v = _mm512_maskz_loadu_epi8(row_mask, hr);
      for (kh = kh_lo + 1; kh < kh_hi; kh++) {
        hr += (int64_t)p->dil_h * wo;
        v = _mm512_max_epi8(v, _mm512_maskz_loadu_epi8(row_mask, hr));
      }
      _mm512_mask_storeu_epi8(yp, row_mask, v);
    }
  }
}

/* Stride 2 along the row, rows wider than 32 outputs (ResNet's and
 * GoogLeNet's 3×3/2 112 → 56), a vector of L = 64 − ⌈span/2⌉ outputs at
 * a time (span = (k_w − 1)·dil_w ≤ 16):
 *   V = the max over the window's input rows (tidsp_host_pool_taps) of
 *       the 128 input columns from b = 2·ow0 − pad_left on, two masked
 *       loads per row (lanes outside the row read −128);
 *   E[i] = V[2i], O[i] = V[2i + 1]: vpshufb gathers each 128-bit lane's
 *       even bytes into its low half and odd bytes into its high half,
 *       vpermt2q joins the halves of the two registers;
 *   output ow0 + i = the max over the taps kw of V[2i + e], e = kw·dil_w:
 *       E or O moved down by ⌊e/2⌋ bytes (valignq + vpalignr), i + ⌊e/2⌋
 *       ≤ 63 for every lane kept.
 * Max is exact and order-free, so the bytes are the reference's. On 64
 * planes of 112² 3×3/2 pad 1 (harness, hot input, best of 2000) the
 * direct path's 9 loads per 32 outputs and masked vpmovwb stores took
 * 0.053–0.055 ms, this path 0.027. Only AVX512F/BW instructions (no VBMI:
 * Cascade Lake has VNNI without it). masks[2c], masks[2c + 1]: the lanes
 * of V0 and V1 of vector c inside the row. */
static int half_masks(const tidsp_pool2d_params *p, int32_t *lanes, uint64_t *masks) {
  const int32_t span = (p->k_w - 1) * p->dil_w, L = 64 - (span + 1) / 2;
  const int64_t vectors = ((int64_t)p->w_out + L - 1) / L;
  int64_t c;
  if (p->stride_w != 2 || p->w_out <= 32 || span > 16 || 2 * vectors > MAX_MASKS)
    return 0;
  for (c = 0; c < vectors; c++) {
    const int64_t b = 2 * c * L - p->pad_left;
    masks[2 * c] = tidsp_ref_bits64(-b, (int64_t)p->w_in - b);
    masks[2 * c + 1] = tidsp_ref_bits64(-b - 64, (int64_t)p->w_in - b - 64);
  }
  *lanes = L;
  return 1;
}

/* v moved down by s < 16 bytes across the whole register (the top s
 * bytes: unspecified). */
static inline __attribute__((always_inline)) TARGET __m512i down_bytes(__m512i v, int32_t s) {
  const __m512i up = _mm512_alignr_epi64(v, v, 2); /* lane l: lane l + 1 of v */
  switch (s) {
#define DOWN(k) \
  case k:       \
    return _mm512_alignr_epi8(up, v, k);
    DOWN(1) DOWN(2) DOWN(3) DOWN(4) DOWN(5) DOWN(6) DOWN(7) DOWN(8)
#undef DOWN
  default:
    return v;
  }
}

static TARGET void maxpool_i8_half(const tidsp_pool2d_params *p, int32_t L,
                                   const uint64_t *masks, const int8_t *x, int8_t *y) {
  const int64_t planes = (int64_t)p->n * p->c;
  const int32_t w_in = p->w_in, w_out = p->w_out, k_w = p->k_w, dw = p->dil_w;
  const __m512i low = _mm512_set1_epi8((char)TIDSP_REF_I8_MIN);
  /* per 128-bit lane: the even bytes, then the odd ones */
  const __m512i split = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
  const __m512i even_q = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odd_q = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  const size_t row_step = (size_t)p->dil_h * (size_t)w_in;
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, ow0, kw;
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)w_in;
    int8_t *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += w_out) {
      const uint64_t *mc = masks;
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      for (ow0 = 0; ow0 < w_out; ow0 += L, mc += 2) {
        const int64_t b = 2 * (int64_t)ow0 - p->pad_left;
        const int8_t *xr = xp + tidsp_host_pool_row_offset(p, oh, kh_lo);
        __m512i v0 = low, v1 = low, e, o, m;
        for (kh = kh_lo; kh < kh_hi; kh++, xr += row_step) {
          v0 = _mm512_max_epi8(v0, _mm512_mask_loadu_epi8(low, (__mmask64)mc[0], row_at(xr, b, 1)));
          v1 = _mm512_max_epi8(v1, _mm512_mask_loadu_epi8(low, (__mmask64)mc[1], row_at(xr, b + 64, 1)));
        }
        v0 = _mm512_shuffle_epi8(v0, split);
        v1 = _mm512_shuffle_epi8(v1, split);
        e = _mm512_permutex2var_epi64(v0, even_q, v1);
        o = _mm512_permutex2var_epi64(v0, odd_q, v1);
        if (k_w == 3 && dw == 1) { /* the common window, unrolled */
          m = _mm512_max_epi8(_mm512_max_epi8(e, o), down_bytes(e, 1));
        } else {
          m = low;
          for (kw = 0; kw < k_w; kw++) {
            const int32_t t = kw * dw; /* V[2i + t] */
            m = _mm512_max_epi8(m, down_bytes(t & 1 ? o : e, t >> 1));
          }
        }
        _mm512_mask_storeu_epi8(yp + ow0, mask64(w_out - ow0 < L ? w_out - ow0 : L), m);
      }
    }
  }
}

/* Other strides: padded row buffers (pool_internal.h), column maxima of the
 * window's rows, window maxima along the row, every stride_w-th kept. */
static TARGET void maxpool_i8_rows(const tidsp_pool2d_params *p,
                                   const tidsp_host_pool_row *g,
                                   const int8_t *x, int8_t *y) {
  int8_t buf[CAP_I8 + TIDSP_HOST_POOL_SLACK];
  int8_t h[CAP_I8 + TIDSP_HOST_POOL_SLACK];
  int8_t *row = buf + p->pad_left;
  const int64_t planes = (int64_t)p->n * p->c;
  const int32_t k_w = p->k_w, dw = p->dil_w, w_in = p->w_in, w_out = p->w_out;
  const size_t row_step = (size_t)p->dil_h * (size_t)w_in;
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, j, k;
  memset(buf, TIDSP_REF_I8_MIN, (size_t)g->span + TIDSP_HOST_POOL_SLACK);
  memset(h, TIDSP_REF_I8_MIN, (size_t)g->h_len + TIDSP_HOST_POOL_SLACK);
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)w_in;
    int8_t *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += w_out) {
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      for (j = 0; j < w_in; j += 64) {
        const __mmask64 m = mask64(w_in - j);
        const int8_t *xr = xp + tidsp_host_pool_row_offset(p, oh, kh_lo) + j;
        __m512i v = _mm512_maskz_loadu_epi8(m, xr);
        for (kh = kh_lo + 1; kh < kh_hi; kh++) {
          xr += row_step;
          v = _mm512_max_epi8(v, _mm512_maskz_loadu_epi8(m, xr));
        }
        _mm512_mask_storeu_epi8(row + j, m, v);
      }
      for (j = 0; j < g->h_len; j += 64) {
        __m512i v = _mm512_loadu_si512((const void *)(buf + j));
        for (k = 1; k < k_w; k++)
          v = _mm512_max_epi8(v, _mm512_loadu_si512((const void *)(buf + j + k * dw)));
        _mm512_storeu_si512((void *)(h + j), v);
      }
      for (j = 0; j < w_out; j++)
        yp[j] = h[(size_t)j * (size_t)p->stride_w];
    }
  }
}

int32_t tidsp_maxpool_i8__host_avx512(const tidsp_pool2d_params *p,
                                      const int8_t *x, int8_t *y) {
  uint64_t masks[MAX_MASKS];
  tidsp_host_pool_row g;
  int32_t lanes;
  if (!p || !x || !y || !tidsp_host_pool_plan(p, CAP_I8, &g))
    return tidsp_maxpool_i8__ref(p, x, y);
  if (flat_masks(p, masks))
    maxpool_i8_flat(p, masks, x, y);
  else if (flat2_masks(p, masks))
    maxpool_i8_flat2(p, masks, x, y);
  else if (half_masks(p, &lanes, masks))
    maxpool_i8_half(p, lanes, masks, x, y);
  else if (p->stride_w <= 2 && direct_masks(p, p->stride_w == 1 ? 64 : 32, 64, masks))
    maxpool_i8_direct(p, masks, x, y);
  else
    maxpool_i8_rows(p, &g, x, y);
  return TIDSP_OK;
}

/* ---- maxpool_f32 ---------------------------------------------------------------- */

/* The fold t = v > t ? v : t from −inf over the k_w window taps of input
 * row xr for 16 consecutive positions from column base, lanes of tap k
 * masked by m[k] (maxps(v, t) is exactly v > t ? v : t; columns outside
 * the row read −inf). */
static inline TARGET __m512 window16_f32(const float *xr, int64_t base,
                                         const uint64_t *m, int32_t k_w,
                                         int32_t dil) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  __m512 t = ninf;
  int32_t k;
  for (k = 0; k < k_w; k++, base += dil)
    t = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, (__mmask16)m[k], row_at(xr, base, 4)), t);
  return t;
}

/* Stride 1 or 2: per output vector, each input row of the window (in kh
 * order) is reduced along the window and folded into the output from
 * −inf, all in registers. masks: direct_masks for 16 outputs, lanes 16
 * (stride 2: masks for the second 16 positions follow, see the caller). */
static TARGET void maxpool_f32_direct(const tidsp_pool2d_params *p,
                                      const uint64_t *masks,
                                      const uint64_t *masks_hi, const float *x,
                                      float *y) {
  const int64_t planes = (int64_t)p->n * p->c;
  const int32_t k_w = p->k_w, dw = p->dil_w, w_in = p->w_in, w_out = p->w_out;
  const int32_t pl = p->pad_left;
  const size_t row_step = (size_t)p->dil_h * (size_t)w_in;
  /* even lanes of two vectors: 0, 2, …, 30 */
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12,
                                        10, 8, 6, 4, 2, 0);
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, j;
  for (nc = 0; nc < planes; nc++) {
    const float *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)w_in;
    float *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += w_out) {
      const uint64_t *mj = masks, *mj_hi = masks_hi;
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      for (j = 0; j < w_out; j += 16, mj += k_w, mj_hi += k_w) {
        const float *xr = xp + tidsp_host_pool_row_offset(p, oh, kh_lo);
        __m512 acc = _mm512_set1_ps(-INFINITY);
        for (kh = kh_lo; kh < kh_hi; kh++, xr += row_step) {
          __m512 t;
          if (p->stride_w == 1) {
            t = window16_f32(xr, (int64_t)j - pl, mj, k_w, dw);
          } else {
            const int64_t base = 2 * (int64_t)j - pl;
            t = _mm512_permutex2var_ps(window16_f32(xr, base, mj, k_w, dw), even,
                                       window16_f32(xr, base + 16, mj_hi, k_w, dw));
          }
          acc = _mm512_max_ps(t, acc); /* t > acc ? t : acc */
        }
        _mm512_mask_storeu_ps(yp + j, mask16(w_out - j), acc);
      }
    }
  }
}

/* Other strides: padded row buffers, each window row reduced then folded
 * into the output row in kh order. */
static TARGET void maxpool_f32_rows(const tidsp_pool2d_params *p,
                                    const tidsp_host_pool_row *g,
                                    const float *x, float *y) {
  float buf[CAP_F32 + TIDSP_HOST_POOL_SLACK];
  float h[CAP_F32 + TIDSP_HOST_POOL_SLACK];
  float *row = buf + p->pad_left;
  const int64_t planes = (int64_t)p->n * p->c;
  const int32_t k_w = p->k_w, dw = p->dil_w, w_in = p->w_in, w_out = p->w_out;
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, j, k;
  for (j = 0; j < g->span + TIDSP_HOST_POOL_SLACK; j++)
    buf[j] = -INFINITY;
  for (j = 0; j < g->h_len + TIDSP_HOST_POOL_SLACK; j++)
    h[j] = -INFINITY;
  for (nc = 0; nc < planes; nc++) {
    const float *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)w_in;
    float *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += w_out) {
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      for (kh = kh_lo; kh < kh_hi; kh++) {
        const float *xr = xp + tidsp_host_pool_row_offset(p, oh, kh);
        for (j = 0; j < w_in; j += 16) {
          const __mmask16 m = mask16(w_in - j);
          _mm512_mask_storeu_ps(row + j, m, _mm512_maskz_loadu_ps(m, xr + j));
        }
        for (j = 0; j < g->h_len; j += 16) {
          __m512 t = _mm512_set1_ps(-INFINITY);
          for (k = 0; k < k_w; k++)
            t = _mm512_max_ps(_mm512_loadu_ps(buf + j + k * dw), t);
          _mm512_storeu_ps(h + j, t);
        }
        for (j = 0; j < w_out; j++) {
          const float t = h[(size_t)j * (size_t)p->stride_w];
          const float acc = kh == kh_lo ? -INFINITY : yp[j];
          yp[j] = t > acc ? t : acc;
        }
      }
    }
  }
}

int32_t tidsp_maxpool_f32__host_avx512(const tidsp_pool2d_params *p,
                                       const float *x, float *y) {
  uint64_t masks[MAX_MASKS];
  tidsp_host_pool_row g;
  if (!p || !x || !y || !tidsp_host_pool_plan(p, CAP_F32, &g))
    return tidsp_maxpool_f32__ref(p, x, y);
  if (p->stride_w == 1 && direct_masks(p, 16, 16, masks)) {
    maxpool_f32_direct(p, masks, masks, x, y);
  } else if (p->stride_w == 2 && direct_masks(p, 16, 32, masks)) {
    /* a 32-position mask per tap: its low 16 lanes for the first vector,
     * its high 16 for the second */
    int32_t i, n = ((p->w_out + 15) / 16) * p->k_w;
    if (n > MAX_MASKS / 2)
      n = 0;
    for (i = 0; i < n; i++) {
      masks[MAX_MASKS / 2 + i] = masks[i] >> 16;
      masks[i] &= 0xFFFF;
    }
    if (n > 0)
      maxpool_f32_direct(p, masks, masks + MAX_MASKS / 2, x, y);
    else
      maxpool_f32_rows(p, &g, x, y);
  } else {
    maxpool_f32_rows(p, &g, x, y);
  }
  return TIDSP_OK;
}

/* ---- global_avgpool_i8 ---------------------------------------------------------- */

/* Σ x over n int8 values, exactly. */
static TARGET int64_t sum_i8(const int8_t *x, int32_t n) {
  const __m512i bias = _mm512_set1_epi8((char)0x80);
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc = zero;
  int32_t i;
  for (i = 0; i + 64 <= n; i += 64) {
    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512((const void *)(x + i)), bias);
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero)); /* Σ (x + 128) */
  }
  if (i < n) { /* lanes past the end read as −128, i.e. 0 after the xor */
    const __m512i v = _mm512_xor_si512(_mm512_mask_loadu_epi8(bias, mask64(n - i), x + i), bias);
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
  }
  return (int64_t)_mm512_reduce_add_epi64(acc) - (int64_t)128 * n;
}

int32_t tidsp_global_avgpool_i8__host_avx512(const tidsp_gap_i8_params *p, const void *rq, const int8_t *x,
                                             int8_t *y) {
  return tidsp_host_global_avgpool_i8(p, rq, x, y, sum_i8);
}

/* ---- avgpool_i8 ----------------------------------------------------------------- */

/* b[t·s] for the lanes t < min(n, 16), 0 in the others. */
static TARGET __m512 pick16(const float *b, int32_t s, int32_t n) {
  float v[16];
  int32_t t;
  for (t = 0; t < 16; t++)
    v[t] = t < n ? b[(size_t)t * (size_t)s] : 0.0f;
  return _mm512_loadu_ps(v);
}

#define W 16
#define VEC __m512
#define VECI __m512i
#define T TARGET
#define VSET1(x) _mm512_set1_ps(x)
#define VSET1_I32(x) _mm512_set1_epi32(x)
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_loadu_ps(p)
#define VLOAD_I32(p) _mm512_loadu_si512(p)
#define VSTORE(p, v) _mm512_storeu_ps((p), (v))
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VDIV(a, b) _mm512_div_ps((a), (b))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VMIN(a, b) _mm512_min_ps((a), (b))
#define VMULLO_I32(a, b) _mm512_mullo_epi32((a), (b))
#define VSUB_I32(a, b) _mm512_sub_epi32((a), (b))
#define VCVT_F32(a) _mm512_cvtepi32_ps(a)
#define VCVT_I32(a) _mm512_cvtps_epi32(a)
#define TAP_CONSTS const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
/* The hooks are statements, not inline functions: as functions they change
 * GCC's register allocation of the loop nest; as statements the variant
 * compiles to the very instructions it had as a function of its own. */
/* stride 1: 16 columns straight from the row buffer, stride 2: two vectors
 * and their even lanes, other strides (rare: above 2): a pick one by one */
#define TAP(t, b)                                                                                                    \
  do {                                                                                                               \
    if (s == 1)                                                                                                      \
      t = _mm512_loadu_ps(b);                                                                                        \
    else if (s == 2)                                                                                                 \
      t = _mm512_permutex2var_ps(_mm512_loadu_ps(b), even, _mm512_loadu_ps((b) + 16));                               \
    else                                                                                                             \
      t = pick16((b), s, w_out - j);                                                                                 \
  } while (0)
/* 64 int8 a load, 16 floats a store, masked at the row's end */
#define DEQUANT_ROW(row, xr)                                                                                         \
  do {                                                                                                               \
    int32_t dj_, dk_;                                                                                                \
    for (dj_ = 0; dj_ < w_in; dj_ += 64) {                                                                           \
      const __m512i b_ = _mm512_maskz_loadu_epi8(mask64(w_in - dj_), (xr) + dj_);                                    \
      for (dk_ = 0; dk_ < 4 && dj_ + 16 * dk_ < w_in; dk_++) {                                                       \
        const __m128i q_ = dk_ == 0   ? _mm512_castsi512_si128(b_)                                                   \
                           : dk_ == 1 ? _mm512_extracti32x4_epi32(b_, 1)                                             \
                           : dk_ == 2 ? _mm512_extracti32x4_epi32(b_, 2)                                             \
                                      : _mm512_extracti32x4_epi32(b_, 3);                                            \
        const __m512 f_ = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(q_), xzp));                       \
        _mm512_mask_storeu_ps((row) + dj_ + 16 * dk_, mask16(w_in - dj_ - 16 * dk_), _mm512_mul_ps(xs, f_));         \
      }                                                                                                              \
    }                                                                                                                \
  } while (0)
#define STORE_I8(p, n, q) _mm512_mask_cvtepi32_storeu_epi8((p), mask16(n), (q))
#define KERNEL tidsp_avgpool_i8__host_avx512
#include "avgpool_i8_body.h"

#endif /* TIDSP_HAVE_HOST_X86 */
