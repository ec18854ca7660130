/*
 * dwconv2d_i8__host_avx512vnni.c — tidsp_conv2d_i8 for depthwise
 * parameters with AVX-512 VNNI (vpdpwssd: vpmaddwd and the accumulation in
 * one instruction, 16 int32 lanes), the direct path of dwconv_internal.h.
 *
 * Per output channel co (input channel co / multiplier) and strip of at
 * most DW_COLS output columns, each input row that a tap reads is converted
 * once into a ring slot:
 *   stride_w 1: P[c] = (R[c], R[c + dil_w]) int16 pairs, so that lane j of
 *               the load at P + j + kw·dil_w holds taps kw and kw + 1 of
 *               output j;
 *   stride_w 2: R itself, whose int16 pairs (R[2j + kw], R[2j + kw + 1])
 *               are exactly the 32-bit lanes of the load at R + 2j + kw;
 * where R[c] = x[ih][c0 + c] − x_zp (0 outside the row) and c0 is the input
 * column of the strip's first output's first tap. An output row is then
 * ⌈k_w/2⌉·k_h multiply-adds per 16 outputs, kept in one register, and the
 * FLOAT requantization is the same float operations as the reference's.
 *
 * Planes of at most PLANE_MAX padded values with stride_h = stride_w (and
 * with stride 2, rows of at most 8 outputs) take a variant without rows:
 * see plane_channel below.
 *
 * Stack: DW_RING + 3 slots of DW_SLOT int32 (about 25 KiB), plus 36 KiB in
 * plane_channel. Parameters the direct path does not cover go to
 * tidsp_conv2d_i8__host_avx512vnni (which in turn sends Q31 and invalid
 * inputs to the reference).
 */
#include <string.h>

#include "dwconv_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

enum { LANES = 16 };

/* The geometry of one strip. */
typedef struct dw_strip {
  int64_t c0;       /* input column of buffer index 0 */
  int32_t cols;     /* output columns in the strip */
  int32_t cols_up;  /* cols rounded up to LANES */
  int32_t r_len;    /* int16 values of R to build */
  int32_t p_len;    /* int32 pairs of P to build (stride 1) */
  int32_t pair_d;   /* distance of the second value of a pair (stride 1) */
} dw_strip;

/* Lanes [lo, hi) of a 32-lane mask, clipped to [0, 32). */
static inline __mmask32 range_mask32(int64_t lo, int64_t hi) {
  uint64_t m;
  if (lo < 0)
    lo = 0;
  if (hi > 32)
    hi = 32;
  if (lo >= hi)
    return 0;
  m = ((uint64_t)1 << hi) - ((uint64_t)1 << lo);
  return (__mmask32)m;
}

/* R[0, r_len rounded up to 32) = x_row[c0 + c] − x_zp, 0 outside the row.
 * Masked-out bytes are never read. */
static TARGET void build_r(const tidsp_conv2d_params *p, const int8_t *x_row,
                           const dw_strip *s, int16_t *r) {
  const __m512i zp8 = _mm512_set1_epi8((char)p->x_zp);
  const __m512i zp16 = _mm512_set1_epi16((short)p->x_zp);
  int32_t c;
  for (c = 0; c < s->r_len; c += 32) {
    const int64_t first = s->c0 + c; /* input column of lane 0 */
    const __mmask32 m = range_mask32(-first, (int64_t)p->w_in - first);
    __m512i v = zp8;
    if (m) /* a 64-byte load of which only the low 32 lanes can be set */
      v = _mm512_mask_loadu_epi8(zp8, (__mmask64)m, (const void *)((uintptr_t)x_row + (uintptr_t)first));
    _mm512_storeu_si512((void *)(r + c),
                        _mm512_sub_epi16(_mm512_cvtepi8_epi16(_mm512_castsi512_si256(v)), zp16));
  }
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
    const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(tmp + c)));
    const __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(tmp + c + s->pair_d)));
    _mm512_storeu_si512((void *)(slot + c), _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
  }
}

/* The requantization of one output channel, as vectors. */
typedef struct dw_rq {
  __m512 lo, hi, m;
  __m512i zp, bv;
} dw_rq;

/* Requantizes 16 accumulators and stores the first n ≤ 16 outputs. */
static inline __attribute__((always_inline)) TARGET void
store16(__m512i acc, const dw_rq *r, int32_t n, int8_t *y) {
  const __mmask64 sm = n >= LANES ? (__mmask64)0xFFFF : (((__mmask64)1 << n) - 1);
  __m512i a = _mm512_add_epi32(acc, r->bv);
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), r->m);
  v = _mm512_max_ps(v, r->lo); /* v > lo ? v : lo (NaN → lo) */
  v = _mm512_min_ps(v, r->hi); /* v < hi ? v : hi */
  a = _mm512_add_epi32(_mm512_cvtps_epi32(v), r->zp);
  _mm512_mask_storeu_epi8((void *)y, sm, _mm512_castsi128_si512(_mm512_cvtsepi32_epi8(a)));
}

/* One output row of `cols` outputs: Σ over the nv input rows in reach and
 * their np tap pairs of dpwssd(rows[i] + j + q·pair_step, wrow[i][q]).
 * Inlined with constant nv and np for the 3×3, 5×5 and 7×7 kernels, so the
 * broadcast weights stay in registers. */
static inline __attribute__((always_inline)) TARGET void
row_fixed(const int32_t *const *rows, const int32_t *const *wrow, int32_t nv,
          int32_t np, int32_t pair_step, int32_t cols, int8_t *y_row,
          const dw_rq *r) {
  __m512i wv[7][4];
  int32_t i, q, j0;
  for (i = 0; i < nv; i++)
    for (q = 0; q < np; q++)
      wv[i][q] = _mm512_set1_epi32(wrow[i][q]);
  for (j0 = 0; j0 < cols; j0 += LANES) {
    __m512i acc = _mm512_setzero_si512();
    for (i = 0; i < nv; i++)
      for (q = 0; q < np; q++)
        acc = _mm512_dpwssd_epi32(
            acc, _mm512_loadu_si512((const void *)(rows[i] + j0 + q * pair_step)), wv[i][q]);
    store16(acc, r, cols - j0, y_row + j0);
  }
}

/* row_fixed for any nv and np (border rows, other kernel sizes). */
static TARGET void row_any(const int32_t *const *rows, const int32_t *const *wrow,
                           int32_t nv, int32_t np, int32_t pair_step,
                           int32_t cols, int8_t *y_row, const dw_rq *r) {
  int32_t i, q, j0;
  for (j0 = 0; j0 < cols; j0 += LANES) {
    __m512i acc = _mm512_setzero_si512();
    for (i = 0; i < nv; i++)
      for (q = 0; q < np; q++)
        acc = _mm512_dpwssd_epi32(
            acc, _mm512_loadu_si512((const void *)(rows[i] + j0 + q * pair_step)),
            _mm512_set1_epi32(wrow[i][q]));
    store16(acc, r, cols - j0, y_row + j0);
  }
}

/* ------------------------------------------------------------------------
 * Small planes (stride_h = stride_w, padded input ≤ PLANE_MAX values): the
 * whole padded input plane, Hp rows of pitch Wp, is converted at once, and
 * the outputs are computed in flat order g = oh·Wp + ow, where every tap is
 * a fixed offset: stride 1 reads P[g + kh·dil_h·Wp + kw·dil_w], stride 2
 * reads the int16 pairs of R at 2g + kh·dil_h·Wp + kw (2g is input row
 * 2·oh, column 2·ow). The lanes with ow ≥ w_out compute discarded values,
 * and there is no per-row work but one copy of w_out bytes, so 7×7 and
 * 14×14 planes fill the vectors instead of one partial vector per row.
 * Stack: PLANE_MAX·(2·2 + 4 + 1) bytes (36 KiB) while it runs. */
enum { PLANE_MAX = 4096 };

typedef struct dw_plane {
  int32_t wp, hp;   /* padded plane: Hp rows of pitch Wp */
  int32_t ng;       /* flat outputs: (h_out − 1)·Wp + w_out */
  int32_t p_len;    /* P pairs to build, a multiple of LANES (stride 1) */
  int32_t r_len;    /* R values to build or zero, a multiple of 32 */
  int32_t nt;       /* tap pairs: k_h·⌈k_w/2⌉ */
  int32_t offb[DW_MAX_TAPS]; /* byte offset of tap pair t from lane g */
} dw_plane;

/* Fills g for p; returns 0 when the plane path does not apply. With
 * stride 2 only half of the flat lanes are outputs, so rows of more than
 * LANES/2 outputs are better served by the row path. */
static int plane_setup(const tidsp_conv2d_params *p, dw_plane *g) {
  const int32_t st = p->stride_w, np = (p->k_w + 1) / 2;
  const int32_t pair_d = p->k_w > 1 ? p->dil_w : 1;
  int64_t wp, hp, ng, ngu, reach, p_len, r_len;
  int32_t kh, q;
  if (p->stride_h != st || (st == 2 && p->w_out > LANES / 2))
    return 0;
  wp = (int64_t)(p->w_out - 1) * st + (int64_t)(p->k_w - 1) * p->dil_w + 1;
  wp = (wp + st - 1) / st * st;
  hp = (int64_t)(p->h_out - 1) * st + (int64_t)(p->k_h - 1) * p->dil_h + 1;
  if (wp * hp > PLANE_MAX)
    return 0;
  ng = (int64_t)(p->h_out - 1) * wp + p->w_out;
  ngu = (ng + LANES - 1) / LANES * LANES;
  reach = (int64_t)(p->k_h - 1) * p->dil_h * wp; /* the last kernel row */
  if (st == 1) {
    p_len = (ngu + reach + (int64_t)(p->k_w - 1) * p->dil_w + LANES - 1) / LANES * LANES;
    r_len = p_len + pair_d + LANES;
  } else {
    p_len = 0;
    r_len = 2 * ngu + reach + p->k_w + 1;
  }
  r_len = (r_len + 31) / 32 * 32;
  if (p_len > PLANE_MAX || r_len > 2 * PLANE_MAX || hp * wp + 32 > 2 * PLANE_MAX)
    return 0;
  g->wp = (int32_t)wp;
  g->hp = (int32_t)hp;
  g->ng = (int32_t)ng;
  g->p_len = (int32_t)p_len;
  g->r_len = (int32_t)r_len;
  g->nt = p->k_h * np;
  for (kh = 0; kh < p->k_h; kh++) {
    for (q = 0; q < np; q++) {
      const int64_t row = (int64_t)kh * p->dil_h * wp;
      g->offb[kh * np + q] = st == 1 ? (int32_t)(4 * (row + 2 * q * p->dil_w))
                                     : (int32_t)(2 * (row + 2 * q));
    }
  }
  return 1;
}

/* One output channel through the plane path; x_c is its input plane. */
static TARGET void plane_channel(const tidsp_conv2d_params *p, const dw_plane *g,
                                 const int8_t *x_c, const int32_t *wp,
                                 const dw_rq *rq, int8_t *y_c) {
  int16_t r[2 * PLANE_MAX] __attribute__((aligned(64)));
  int32_t pp[PLANE_MAX] __attribute__((aligned(64)));
  int8_t yb[PLANE_MAX + 2 * LANES] __attribute__((aligned(64)));
  const int32_t pair_d = p->k_w > 1 ? p->dil_w : 1;
  const char *buf = p->stride_w == 1 ? (const char *)pp : (const char *)r;
  dw_strip s;
  int32_t row, c, g0, t, oh;

  s.c0 = -(int64_t)p->pad_left;
  s.r_len = g->wp;
  /* rows in order: each build_r may run past its row, into the next one,
   * which is written after it */
  for (row = 0; row < g->hp; row++) {
    const int64_t ih = (int64_t)row - p->pad_top;
    if (ih >= 0 && ih < p->h_in)
      build_r(p, x_c + (size_t)ih * p->w_in, &s, r + (size_t)row * g->wp);
    else
      memset(r + (size_t)row * g->wp, 0, sizeof(int16_t) * (size_t)g->wp);
  }
  if (g->hp * g->wp < g->r_len)
    memset(r + (size_t)g->hp * g->wp, 0,
           sizeof(int16_t) * (size_t)(g->r_len - g->hp * g->wp));
  for (c = 0; c < g->p_len; c += LANES) {
    const __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(r + c)));
    const __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(r + c + pair_d)));
    _mm512_store_si512((void *)(pp + c), _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
  }
  for (g0 = 0; g0 < g->ng; g0 += LANES) {
    const char *b = buf + (size_t)4 * g0;
    __m512i acc = _mm512_setzero_si512();
    for (t = 0; t < g->nt; t++)
      acc = _mm512_dpwssd_epi32(acc, _mm512_loadu_si512((const void *)(b + g->offb[t])),
                                _mm512_set1_epi32(wp[t]));
    store16(acc, rq, LANES, yb + g0);
  }
  for (oh = 0; oh < p->h_out; oh++)
    memcpy(y_c + (size_t)oh * p->w_out, yb + (size_t)oh * g->wp, (size_t)p->w_out);
}

static TARGET void dw_fast(const tidsp_conv2d_params *p, const int8_t *x,
                           const int8_t *w, const int32_t *bias,
                           const float *mult, int8_t *y) {
  int32_t ring[DW_RING][DW_SLOT] __attribute__((aligned(64)));
  int16_t tmp[2 * DW_SLOT] __attribute__((aligned(64)));
  int32_t zero_slot[DW_SLOT] __attribute__((aligned(64)));
  int64_t tag[DW_RING];
  int32_t wp[DW_MAX_TAPS]; /* weight pairs, kernel row after kernel row */
  const int32_t *rows[DW_RING], *wrow[DW_RING];
  dw_rq rq;
  const int32_t cpg_out = p->c_out / p->groups, ksz = p->k_h * p->k_w;
  const int32_t npairs = (p->k_w + 1) / 2;
  const size_t in_plane = (size_t)p->h_in * p->w_in;
  const size_t out_plane = (size_t)p->h_out * p->w_out;
  /* int32 offset of tap pair q in a slot: kw = 2q at P + 2q·dil_w
   * (stride 1), or at int16 2q = int32 q of R (stride 2) */
  const int32_t pair_step = p->stride_w == 1 ? 2 * p->dil_w : 1;
  int32_t n, co, ow0, oh, kh, i, nv;
  dw_strip s;
  dw_plane pl;
  int use_plane;

  memset(&pl, 0, sizeof(pl));
  use_plane = plane_setup(p, &pl);
  rq.lo = _mm512_set1_ps((float)(p->rq.out_min - p->rq.out_zp));
  rq.hi = _mm512_set1_ps((float)(p->rq.out_max - p->rq.out_zp));
  rq.zp = _mm512_set1_epi32(p->rq.out_zp);
  s.pair_d = p->k_w > 1 ? p->dil_w : 1;
  memset(zero_slot, 0, sizeof(zero_slot));
  for (n = 0; n < p->n; n++) {
    for (co = 0; co < p->c_out; co++) {
      const int8_t *x_c = x + ((size_t)n * p->c_in + (size_t)(co / cpg_out)) * in_plane;
      int8_t *y_c = y + ((size_t)n * p->c_out + co) * out_plane;
      const __m512i bv = _mm512_set1_epi32(bias ? bias[co] : 0);
      const __m512 m = _mm512_set1_ps(mult[p->rq.per_channel ? co : 0]);
      for (kh = 0; kh < p->k_h; kh++)
        tidsp_host_dw_wpairs(w + (size_t)co * ksz + (size_t)kh * p->k_w, p->k_w,
                             p->w_zp, wp + kh * npairs);
      rq.bv = bv;
      rq.m = m;
      if (use_plane) {
        plane_channel(p, &pl, x_c, wp, &rq, y_c);
        continue;
      }
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

int32_t tidsp_dwconv2d_i8__host_avx512vnni(const tidsp_conv2d_params *p,
                                           const int8_t *x, const int8_t *w,
                                           const int32_t *bias, const void *rq,
                                           int8_t *y) {
  if (!tidsp_host_dw_fast_ok(p, x, w, rq, y))
    return tidsp_conv2d_i8__host_avx512vnni(p, x, w, bias, rq, y);
  dw_fast(p, x, w, bias, (const float *)rq, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
