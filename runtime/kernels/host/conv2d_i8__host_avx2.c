/*
 * conv2d_i8__host_avx2.c — tidsp_conv2d_i8 with AVX2, as an implicit GEMM
 * on exact int16 pairs (vpmaddwd: 8 lanes × 2 products, then vpaddd).
 *
 * vpmaddwd multiplies the two int16 halves of each 32-bit lane and adds
 * them, so one operand must hold, per output pixel, two taps of the
 * reduction side by side. The pair taken is two input channels at the same
 * kernel position: (ci, kh, kw) with (ci + 1, kh, kw). For each block of
 * output rows, the input rows that its taps read are converted once into
 * "pair rows" (one per channel pair and input row, all output channels
 * then read them):
 *
 *   Q[cp][ih][φ·L + c] = (x[2cp][ih][iw] − x_zp) | (x[2cp+1][ih][iw] − x_zp) << 16
 *                        with iw = (ow0 + c)·stride_w + φ − pad_left,
 *                        0 where iw or ih is in the padding
 *
 * split by column phase φ = 0 .. stride_w − 1, so that tap (kh, kw) of the
 * 8 consecutive outputs ow .. ow + 7 of output row oh is one plain load:
 *   Q[cp][oh·stride_h + kh·dil_h − pad_top][φ(kw)·L + ow − ow0 + c(kw)]
 *   with kw·dil_w = c(kw)·stride_w + φ(kw).
 * (For a 1×1 kernel only phase 0 is built, and only the input rows the
 * outputs read.) The weights are paired the same way, (w[co][2cp][kh][kw]
 * − w_zp, w[co][2cp+1][kh][kw] − w_zp), converted per block and output
 * channel tile, and broadcast. The micro-kernel keeps MR = 6 output
 * channels × 2 vectors of 8 outputs in 12 ymm accumulators (which start
 * from the bias); a vector is 8 outputs of one output row, and the two
 * vectors of a tile may come from different rows (so rows of 7, 14 or 28
 * outputs fill the tiles). An odd channel count pairs the last channel
 * with zero.
 *
 * Blocking: a block is a strip of at most SW_MAX columns of some whole
 * output rows. Its pair rows for all channel pairs, or for a chunk of
 * them when they do not fit QBUF, are built once; every output channel
 * tile then runs over every tile of the block (the partial sums of a
 * chunked reduction kept in PART for a block of output channels). How
 * many rows a block has is chosen per call by an estimate of the cycles
 * (plan_cost): bigger blocks convert the weights fewer times, but need
 * more pair rows, which may then be chunked and rebuilt per block of
 * output channels. The micro-kernel prefetches the pair rows a few taps
 * ahead: they rarely stay in L1 from one tile to the next, and a
 * vpmaddwd waiting on L2 stalls the loop.
 *
 * Every product is at most 255² in magnitude and a pair at most 2·255², so
 * vpmaddwd never overflows; the int32 sums wrap like the reference's (the
 * exact sum fits int32 for K ≤ 33025) and the bias is added modulo 2³².
 * Requantization is the FLOAT formula with the same float operations, or
 * SCALE_SHIFT in exact double arithmetic (rq_internal.h).
 *
 * O16 weights (kernels.h, packed for the AVX-512 VNNI kernel) are read in
 * the layout's own order: the reduction runs over (tap, quad, pair) steps
 * instead of (pair, tap) (tap_offsets orders the pair-row offsets to
 * match), so that 8 output channels' rows are one 8×8 dword transpose of
 * 8 consecutive 32-byte loads (convert8_o16), done once per 8 channels and
 * chunk into a ring of two such units.
 *
 * Stack: QBUF + 16·WS + WS + PART int32 (about 160 KiB). Q31 takes the
 * FLOAT epilogue (rq_internal.h). Inputs the reference rejects, column
 * strides above MAX_PHASE and geometries whose pair rows would not fit QBUF
 * even for one channel pair and one output row (kernels hundreds of taps
 * wide) go to tidsp_conv2d_i8__ref.
 */
#include <string.h>

#include "rq_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum {
  MR = 6,          /* output channels per micro-kernel tile */
  VL = 8,          /* outputs per vector */
  TILE = 2 * VL,   /* outputs per tile: two vector slots */
  SW_MAX = 64,     /* output columns per block row (a strip of a wider row) */
  BLOCK_PIX = 256, /* outputs per block (rows × strip) aimed at */
  MAX_SLOTS = BLOCK_PIX / VL + SW_MAX / VL,
  QBUF = 16384,    /* int32 pair entries of the pair rows of one chunk */
  WS = 1040,       /* pair taps per chunk + slack: one row of wbuf (not a
                      multiple of 1024: the six rows then map to different
                      L1 sets) */
  WSLACK = 8,      /* entries the vector weight conversion may write past */
  PART = 6144,     /* int32 partial sums kept across chunks */
  MAX_PHASE = 16,  /* column strides with a fast path (others: __ref) */
  PF_DIST = 12     /* taps ahead that the micro-kernel prefetches */
};

/* The geometry of one call (one group's GEMM). */
typedef struct conv_plan {
  const tidsp_conv2d_params *p;
  int32_t cpg_in, cpg_out, kk; /* kk = k_h·k_w */
  int32_t cp;                  /* channel pairs: ⌈cpg_in / 2⌉ */
  int32_t sw_blk;              /* output columns per strip */
  int32_t L, qrow;             /* entries per phase, per pair row (nphase·L) */
  int32_t nphase;              /* column phases built: stride_w (1 when k_w = 1) */
  int32_t rstep;               /* pair rows per output row: stride_h (1 when k_h = 1) */
  int32_t rows;                /* output rows per block */
  int32_t nr_in;               /* pair rows per block: (rows−1)·rstep + (k_h−1)·dh + 1 */
  int32_t cpc;                 /* channel pairs per chunk */
  int32_t cps;                 /* entries per channel pair of a chunk: nr_in·qrow */
  size_t w_stride;             /* bytes between weight rows */
  const int8_t *x_lo, *x_hi;   /* the input tensor (loads stay inside) */
  const int8_t *w_end;         /* one past the last weight byte */
} conv_plan;

/* One vector slot of a block: 8 outputs of block row r from column ow. */
typedef struct slot {
  int32_t r, ow, valid;
} slot;

/* Pair rows of a block of `rows` output rows. */
static int64_t block_nr(const conv_plan *pl, int32_t rows) {
  return (int64_t)(rows - 1) * pl->rstep + (int64_t)(pl->p->k_h - 1) * pl->p->dil_h + 1;
}

/* Estimated cycles of the whole call with blocks of `rows` output rows
 * (0 when one channel pair of such a block does not fit QBUF), and the
 * chunking it implies. The terms: the micro-kernel's 12 multiply-adds per
 * tap (in 7.5 cycles, measured on Zen 3) over every tile, duplicate tiles
 * included; the epilogue per tile and channel; the weight conversion,
 * once per block and chunk; the pair rows, rebuilt for every co-block when
 * the reduction is chunked. */
static double plan_cost(const conv_plan *pl, int32_t rows, int32_t spr, int32_t *cpc_out) {
  const tidsp_conv2d_params *p = pl->p;
  const int64_t nr = block_nr(pl, rows), per_pair = nr * pl->qrow;
  const int32_t by_w = (WS - WSLACK) / pl->kk;
  const int64_t nblocks = (int64_t)((p->h_out + rows - 1) / rows) * ((p->w_out + pl->sw_blk - 1) / pl->sw_blk);
  const int32_t nt = (rows * spr + 1) / 2, cotiles = (pl->cpg_out + MR - 1) / MR;
  int64_t by_q = per_pair > QBUF ? 0 : QBUF / per_pair;
  int32_t nchunk, cob;
  double ntap, cost;
  if (by_q < 1)
    return 0.0;
  if (by_q > by_w)
    by_q = by_w;
  if (pl->p->w_layout == TIDSP_CONV_W_O16) { /* whole quads per chunk (cp is even) */
    by_q &= ~(int64_t)1;
    if (by_q < 2)
      return 0.0;
  }
  nchunk = (int32_t)((pl->cp + by_q - 1) / by_q);
  *cpc_out = (pl->cp + nchunk - 1) / nchunk;
  if (pl->p->w_layout == TIDSP_CONV_W_O16)
    *cpc_out += *cpc_out & 1; /* still ≤ by_q, which is even */
  cob = nchunk == 1 ? pl->cpg_out : PART / (nt * TILE) / MR * MR;
  ntap = (double)pl->cp * pl->kk;
  cost = (double)nblocks * cotiles * nt * (7.5 * ntap + 40.0 + (nchunk > 1 ? 12.0 * nchunk : 0.0));
  cost += (double)nblocks * cotiles * MR * ntap * 1.0;
  cost += (double)nblocks * ((pl->cpg_out + cob - 1) / cob) * pl->cp *
          ((double)per_pair * 0.3 + (double)nr * pl->nphase * 30.0);
  return cost;
}

/* Chooses the blocking: the strip width, then the rows per block of the
 * cheapest plan_cost. Returns 0 when no block fits. */
static int plan_conv(const tidsp_conv2d_params *p, conv_plan *pl) {
  const int32_t nstrip = (p->w_out + SW_MAX - 1) / SW_MAX;
  int32_t swp, spr, maxcoff, r, r_max, cpc;
  double best = 0.0;
  memset(pl, 0, sizeof(*pl));
  pl->p = p;
  pl->cpg_in = p->c_in / p->groups;
  pl->cpg_out = p->c_out / p->groups;
  pl->kk = p->k_h * p->k_w;
  pl->cp = (pl->cpg_in + 1) / 2;
  pl->sw_blk = (p->w_out + nstrip - 1) / nstrip;
  swp = (pl->sw_blk + VL - 1) / VL * VL;
  spr = swp / VL;
  maxcoff = (int32_t)(((int64_t)(p->k_w - 1) * p->dil_w) / p->stride_w);
  if (maxcoff > QBUF || pl->kk > WS - WSLACK)
    return 0;
  pl->L = swp + maxcoff;
  if (p->stride_w > MAX_PHASE)
    return 0;
  pl->nphase = p->k_w == 1 ? 1 : p->stride_w;
  pl->rstep = p->k_h == 1 ? 1 : p->stride_h;
  if ((int64_t)pl->L * pl->nphase > QBUF)
    return 0;
  pl->qrow = pl->L * pl->nphase;
  r_max = BLOCK_PIX / swp < p->h_out ? BLOCK_PIX / swp : p->h_out;
  for (r = 1; r <= r_max; r++) {
    const double c = plan_cost(pl, r, spr, &cpc);
    if (c > 0.0 && (best == 0.0 || c < best)) {
      best = c;
      pl->rows = r;
      pl->cpc = cpc;
    }
  }
  if (best == 0.0)
    return 0;
  pl->nr_in = (int32_t)block_nr(pl, pl->rows);
  pl->cps = pl->nr_in * pl->qrow;
  pl->w_stride = tidsp_host_conv_w_stride(p);
  return 1;
}

/* ---- pair rows ------------------------------------------------------------ */

/* dst[0..7] = (a[i] − zp) | (b[i] − zp) << 16 for the 8 byte pairs of the
 * low halves of a and b, dst[8..15] for the high halves. */
static inline __attribute__((always_inline)) TARGET void
store_pairs16(int32_t *dst, __m128i a, __m128i b, __m256i zp16) {
  const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b));
  const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, b));
  _mm256_storeu_si256((__m256i *)dst, _mm256_sub_epi16(lo, zp16));
  _mm256_storeu_si256((__m256i *)(dst + 8), _mm256_sub_epi16(hi, zp16));
}

static inline int32_t pair_of(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)(uint16_t)(int16_t)a | (uint32_t)(uint16_t)(int16_t)b << 16);
}

/* 16 row bytes for 16 entries from src: src[0..15] (stride 1) or the even
 * bytes of src[0..31] (stride 2). The load must be inside the tensor. */
static inline __attribute__((always_inline)) TARGET __m128i
load16(const int8_t *src, int32_t sw) {
  __m256i v;
  if (sw == 1)
    return _mm_loadu_si128((const __m128i *)src);
  v = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)src),
                          _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                           0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(v, 0xD8));
}

/* Phase row q[c], c < L: the pairs of input rows ra and rb (rb NULL: the
 * zero partner of an odd last channel) at columns iw = c·sw + off, inside
 * the row for c in [lo, hi) (the same for every row of a block). Stride 1
 * and 2 rows are converted 16 entries at a time: a chunk of fewer valid
 * entries loads past them when the load stays inside the input tensor
 * [x_lo, x_hi) and masks them to the zero point; otherwise, and for other
 * strides, one entry at a time. */
static TARGET void build_phase(const conv_plan *pl, const int8_t *ra, const int8_t *rb,
                               int64_t off, int32_t lo, int32_t hi, int32_t *q) {
  const tidsp_conv2d_params *p = pl->p;
  const int32_t sw = p->stride_w, zp = p->x_zp;
  const __m256i zp16 = _mm256_set1_epi16((short)zp);
  const __m128i bzp = _mm_set1_epi8((char)zp);
  const int64_t span = sw == 1 ? 16 : 32; /* bytes one chunk loads */
  int32_t c;
  for (c = 0; c < lo; c++)
    q[c] = 0;
  c = lo;
  if (sw <= 2) {
    for (; c < hi; c += 16) {
      const int32_t n = hi - c < 16 ? hi - c : 16;
      const int8_t *sa = ra + ((int64_t)c * sw + off);
      const int8_t *sb = rb ? rb + ((int64_t)c * sw + off) : NULL;
      __m128i a, b;
      if (sa + span > pl->x_hi || (sb && sb + span > pl->x_hi))
        break; /* at the end of the tensor: one entry at a time */
      a = load16(sa, sw);
      b = sb ? load16(sb, sw) : bzp;
      if (n < 16) {
        const __m128i keep = _mm_cmpgt_epi8(_mm_set1_epi8((char)n),
                                            _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                          12, 13, 14, 15));
        a = _mm_blendv_epi8(bzp, a, keep);
        b = _mm_blendv_epi8(bzp, b, keep);
      }
      store_pairs16(q + c, a, b, zp16); /* entries past hi: 0 */
    }
  }
  for (; c < hi; c++) {
    const int64_t iw = (int64_t)c * sw + off;
    q[c] = pair_of(ra[iw] - zp, rb ? rb[iw] - zp : 0);
  }
  for (c = hi; c < pl->L; c++)
    q[c] = 0;
}

/* The pair rows of channel pairs [cp0, cp0 + ncp) for the block whose first
 * output row is oh0 and first output column ow0. */
static TARGET void build_q(const conv_plan *pl, const int8_t *x_g, int32_t oh0, int32_t ow0,
                           int32_t cp0, int32_t ncp, int32_t *qbuf) {
  const tidsp_conv2d_params *p = pl->p;
  const size_t plane = (size_t)p->h_in * (size_t)p->w_in;
  const int64_t ih0 = (int64_t)oh0 * p->stride_h - p->pad_top;
  /* pair row j is input row ih0 + j (ih0 + j·stride_h when k_h = 1) */
  const int64_t jstep = p->k_h == 1 ? p->stride_h : 1;
  int64_t off[MAX_PHASE];
  int32_t lo[MAX_PHASE], hi[MAX_PHASE];
  int32_t cpl, j, ph;
  for (ph = 0; ph < pl->nphase; ph++) {
    off[ph] = (int64_t)ow0 * p->stride_w + ph - p->pad_left;
    tidsp_ref_valid_range(off[ph], p->stride_w, p->w_in, pl->L, &lo[ph], &hi[ph]);
  }
  for (cpl = 0; cpl < ncp; cpl++) {
    const int32_t ci = 2 * (cp0 + cpl);
    const int8_t *xa = x_g + (size_t)ci * plane;
    const int8_t *xb = ci + 1 < pl->cpg_in ? xa + plane : NULL;
    for (j = 0; j < pl->nr_in; j++) {
      const int64_t ih = ih0 + j * jstep;
      int32_t *q = qbuf + (size_t)cpl * (size_t)pl->cps + (size_t)j * (size_t)pl->qrow;
      if (ih < 0 || ih >= p->h_in) {
        memset(q, 0, sizeof(int32_t) * (size_t)pl->qrow);
        continue;
      }
      for (ph = 0; ph < pl->nphase; ph++)
        build_phase(pl, xa + (size_t)ih * (size_t)p->w_in, xb ? xb + (size_t)ih * (size_t)p->w_in : NULL,
                    off[ph], lo[ph], hi[ph], q + (size_t)ph * (size_t)pl->L);
    }
  }
}

/* off[e] for the reduction entries e of a chunk of ncp channel pairs:
 * where entry e's tap of the first output of a slot is, relative to the
 * slot's base in the pair rows. The entries are in the order of the
 * weight rows (convert_weights, convert8_o16): OIHW e = cpl·kk + tap, pair
 * major; O16 e = 2·(tap·ncp/2 + cpl/2) + cpl%2, the layout's own order
 * (tap, quad, pair). */
static void tap_offsets(const conv_plan *pl, int32_t ncp, int32_t *off) {
  const tidsp_conv2d_params *p = pl->p;
  const int o16 = p->w_layout == TIDSP_CONV_W_O16;
  int32_t cpl, kh, kw, e;
  for (cpl = 0; cpl < ncp; cpl++) {
    for (kh = 0; kh < p->k_h; kh++) {
      for (kw = 0; kw < p->k_w; kw++) {
        const int32_t d = kw * p->dil_w, tap = kh * p->k_w + kw;
        e = o16 ? 2 * (tap * (ncp / 2) + cpl / 2) + cpl % 2 : cpl * pl->kk + tap;
        off[e] = cpl * pl->cps + kh * p->dil_h * pl->qrow + (d % p->stride_w) * pl->L +
                 d / p->stride_w;
      }
    }
  }
  for (e = ncp * pl->kk; e < WS + PF_DIST; e++) /* what the prefetches past the last entry read */
    off[e] = 0;
}

/* ---- weights --------------------------------------------------------------- */

/* wb[t] for the taps of channel pairs [cp0, cp0 + ncp) of one weight row:
 * (w[2cp][tap] − w_zp, w[2cp+1][tap] − w_zp), the second 0 past cpg_in.
 * May write WSLACK entries past the last tap. */
static TARGET void convert_weights(const conv_plan *pl, const int8_t *row, int32_t cp0,
                                   int32_t ncp, int32_t *wb) {
  const int32_t kk = pl->kk, wzp = pl->p->w_zp;
  const __m256i zp16 = _mm256_set1_epi16((short)wzp);
  const __m128i bzp = _mm_set1_epi8((char)wzp);
  int32_t cpl, t;
  if (kk == 1) {
    /* 1×1: the pairs are adjacent bytes of the row; the last pair of an
     * odd channel count is redone with its zero partner */
    const int8_t *a = row + 2 * (size_t)cp0;
    for (cpl = 0; cpl < ncp; cpl += 8) {
      if (a + 2 * cpl + 16 <= pl->w_end) {
        const __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + 2 * cpl)));
        _mm256_storeu_si256((__m256i *)(wb + cpl), _mm256_sub_epi16(v, zp16));
      } else {
        for (t = cpl; t < ncp; t++)
          wb[t] = pair_of(a[2 * t] - wzp, 2 * (cp0 + t) + 1 < pl->cpg_in ? a[2 * t + 1] - wzp : 0);
        break;
      }
    }
    if (pl->cpg_in % 2 && cp0 + ncp == pl->cp)
      wb[ncp - 1] = pair_of(a[2 * (ncp - 1)] - wzp, 0);
    return;
  }
  for (cpl = 0; cpl < ncp; cpl++) {
    const int32_t ci = 2 * (cp0 + cpl);
    const int8_t *a = row + (size_t)ci * (size_t)kk;
    const int8_t *b = ci + 1 < pl->cpg_in ? a + kk : NULL;
    int32_t *d = wb + (size_t)cpl * (size_t)kk;
    /* 16 taps of both channels per step: unpacking their bytes pairs them;
     * the loads may run past the pair's taps (into the next channels or
     * the row's padding) as long as they stay inside the weights */
    for (t = 0; t < kk; t += 16) {
      if ((b ? b : a) + t + 16 <= pl->w_end) {
        const __m128i va = _mm_loadu_si128((const __m128i *)(a + t));
        const __m128i vb = b ? _mm_loadu_si128((const __m128i *)(b + t)) : bzp;
        _mm256_storeu_si256((__m256i *)(d + t),
                            _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(va, vb)), zp16));
        if (t + 8 < kk)
          _mm256_storeu_si256((__m256i *)(d + t + 8),
                              _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(va, vb)), zp16));
      } else {
        int32_t u;
        for (u = t; u < kk; u++)
          d[u] = pair_of(a[u] - wzp, b ? b[u] - wzp : 0);
        break;
      }
    }
  }
}

/* The weight rows of 8 channels co .. co + 7 of one O16 block (kernels.h;
 * co % 8 = 0) for the chunk of channel pairs [cp0, cp0 + ncp) (whole
 * quads), in the layout's own order (tap_offsets): step s = (tap, quad) of
 * the chunk holds, in lane l's dword, channel co + l's 4 input channels of
 * the quad, which are its entries 2s (pair 0) and 2s + 1 (pair 1) once
 * widened to int16. So no byte moves between lanes' dwords except by an
 * 8×8 dword transpose of 8 steps: 8 loads of the 8 lanes' 32 bytes, in
 * the order they lie in memory, become per lane 8 steps, widened into 16
 * entries. A step count that is not a multiple of 8 redoes the last 8
 * (they overlap; fewer than 8 steps: one value at a time). The block's Σw
 * is not used. O16 is packed for the AVX-512 VNNI kernel; this keeps the
 * same generated code as fast on a CPU with AVX2 only (the OIHW rows need
 * a conversion too). */
static TARGET void convert8_o16(const conv_plan *pl, const int8_t *w, int32_t co, int32_t cp0,
                                int32_t ncp, int32_t *wb) {
  const int32_t kk = pl->kk, wzp = pl->p->w_zp, nq = ncp / 2, nsteps = kk * nq;
  const tidsp_ref_conv_wmap m = tidsp_ref_conv_w_map(pl->p, co, 0);
  const int8_t *a = w + m.base + (int64_t)(cp0 / 2) * m.qs; /* lane 0's dword at step 0 */
  const __m256i zp16 = _mm256_set1_epi16((short)wzp);
  int32_t s0, u, l, j;
  if (nsteps < 8) {
    for (s0 = 0; s0 < nsteps; s0++) {
      const int8_t *b = a + (int64_t)(s0 / nq) * m.ts + (int64_t)(s0 % nq) * m.qs;
      for (l = 0; l < 8; l++)
        for (j = 0; j < 2; j++)
          wb[(size_t)l * WS + 2 * (size_t)s0 + (size_t)j] =
              pair_of(b[4 * l + 2 * j] - wzp, b[4 * l + 2 * j + 1] - wzp);
    }
    return;
  }
  for (s0 = 0;; s0 += 8) {
    __m256i v[8], x[8], y[8];
    if (s0 + 8 > nsteps)
      s0 = nsteps - 8;
    for (u = 0; u < 8; u++) {
      const int32_t s = s0 + u;
      v[u] = _mm256_loadu_si256(
          (const __m256i *)(const void *)(a + (int64_t)(s / nq) * m.ts + (int64_t)(s % nq) * m.qs));
    }
    for (u = 0; u < 8; u += 2) {
      x[u] = _mm256_unpacklo_epi32(v[u], v[u + 1]);
      x[u + 1] = _mm256_unpackhi_epi32(v[u], v[u + 1]);
    }
    for (u = 0; u < 8; u += 4) { /* y[u + i]: lanes i and i + 4 of steps u .. u + 3 */
      y[u] = _mm256_unpacklo_epi64(x[u], x[u + 2]);
      y[u + 1] = _mm256_unpackhi_epi64(x[u], x[u + 2]);
      y[u + 2] = _mm256_unpacklo_epi64(x[u + 1], x[u + 3]);
      y[u + 3] = _mm256_unpackhi_epi64(x[u + 1], x[u + 3]);
    }
    for (l = 0; l < 4; l++) {
      const __m256i r_lo = _mm256_permute2x128_si256(y[l], y[l + 4], 0x20); /* lane l */
      const __m256i r_hi = _mm256_permute2x128_si256(y[l], y[l + 4], 0x31); /* lane l + 4 */
      int32_t *d_lo = wb + (size_t)l * WS + 2 * (size_t)s0, *d_hi = d_lo + 4 * (size_t)WS;
      _mm256_storeu_si256((__m256i *)d_lo, _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(r_lo)), zp16));
      _mm256_storeu_si256((__m256i *)(d_lo + 8),
                          _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(r_lo, 1)), zp16));
      _mm256_storeu_si256((__m256i *)d_hi, _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(r_hi)), zp16));
      _mm256_storeu_si256((__m256i *)(d_hi + 8),
                          _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(r_hi, 1)), zp16));
    }
    if (s0 + 8 >= nsteps)
      break;
  }
}

/* ---- micro-kernel and epilogue -------------------------------------------- */

/* The tile's 12 accumulators: c[2i] and c[2i+1] are channel i's two slots. */
typedef struct tile_acc {
  __m256i c[2 * MR];
} tile_acc;

/* c[2i + j] += Σ_t wr[i][t]·x_j[off[t]] (int32 lanes of int16 pairs),
 * x_0 = xa, x_1 = xb. */
static inline __attribute__((always_inline)) TARGET void
tile_loop(const int32_t *xa, const int32_t *xb, const int32_t *off, int32_t nt,
          const int32_t *const *wr, tile_acc *a) {
  const int32_t *w0 = wr[0], *w1 = wr[1], *w2 = wr[2], *w3 = wr[3], *w4 = wr[4], *w5 = wr[5];
  __m256i c00 = a->c[0], c01 = a->c[1], c10 = a->c[2], c11 = a->c[3];
  __m256i c20 = a->c[4], c21 = a->c[5], c30 = a->c[6], c31 = a->c[7];
  __m256i c40 = a->c[8], c41 = a->c[9], c50 = a->c[10], c51 = a->c[11];
  int32_t t;
  for (t = 0; t < nt; t++) {
    const int32_t o = off[t], op = off[t + PF_DIST];
    const __m256i x0 = _mm256_loadu_si256((const __m256i *)(xa + o));
    const __m256i x1 = _mm256_loadu_si256((const __m256i *)(xb + o));
    __m256i w;
    /* the pair rows of a later tap: their lines rarely stay in L1 from
     * the previous tile, and vpmaddwd waiting on an L2 load stalls the
     * loop (its 24 vector ops per tap fill the scheduler) */
    _mm_prefetch((const char *)(xa + op), _MM_HINT_T0);
    _mm_prefetch((const char *)(xb + op), _MM_HINT_T0);
    w = _mm256_set1_epi32(w0[t]);
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(x0, w));
    c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(x1, w));
    w = _mm256_set1_epi32(w1[t]);
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(x0, w));
    c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(x1, w));
    w = _mm256_set1_epi32(w2[t]);
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(x0, w));
    c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(x1, w));
    w = _mm256_set1_epi32(w3[t]);
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(x0, w));
    c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(x1, w));
    w = _mm256_set1_epi32(w4[t]);
    c40 = _mm256_add_epi32(c40, _mm256_madd_epi16(x0, w));
    c41 = _mm256_add_epi32(c41, _mm256_madd_epi16(x1, w));
    w = _mm256_set1_epi32(w5[t]);
    c50 = _mm256_add_epi32(c50, _mm256_madd_epi16(x0, w));
    c51 = _mm256_add_epi32(c51, _mm256_madd_epi16(x1, w));
  }
  a->c[0] = c00, a->c[1] = c01, a->c[2] = c10, a->c[3] = c11;
  a->c[4] = c20, a->c[5] = c21, a->c[6] = c30, a->c[7] = c31;
  a->c[8] = c40, a->c[9] = c41, a->c[10] = c50, a->c[11] = c51;
}

/* Where a tile's outputs go: slot j's valid outputs of channel co at
 * dst[j] + co·plane (dst[1] NULL: slot 1 repeats slot 0). */
typedef struct tile_out {
  int8_t *dst[2];
  int32_t valid[2];
} tile_out;

/* Requantizes channel co's two slots (the accumulators hold the bias) and
 * stores them. */
static inline __attribute__((always_inline)) TARGET void
store_channel(const tidsp_host_rq *q, __m256i a0, __m256i a1, int32_t co,
              const tile_out *to, size_t plane) {
  __m256i r0, r1, w16;
  __m128i o;
  int32_t j;
  if (tidsp_host_rq_is_ss(q)) {
    tidsp_host_ss8_consts k;
    tidsp_host_ss8_channel(&k, q, co);
    r0 = tidsp_host_ss8(a0, &k);
    r1 = tidsp_host_ss8(a1, &k);
    w16 = _mm256_packs_epi32(r0, r1);
  } else {
    const __m256 m = _mm256_set1_ps(tidsp_host_rq_mult(q, co));
    const __m256 lo = _mm256_set1_ps(q->lo), hi = _mm256_set1_ps(q->hi);
    __m256 v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(a0), m);
    __m256 v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(a1), m);
    v0 = _mm256_min_ps(_mm256_max_ps(v0, lo), hi); /* max: NaN → lo */
    v1 = _mm256_min_ps(_mm256_max_ps(v1, lo), hi);
    /* rounded values in [out_min − zp, out_max − zp] ⊂ [−255, 255]: the
     * zero point is added in int16 */
    w16 = _mm256_add_epi16(_mm256_packs_epi32(_mm256_cvtps_epi32(v0), _mm256_cvtps_epi32(v1)),
                           _mm256_set1_epi16((short)q->zp));
  }
  /* values in [out_min, out_max] ⊂ int8: the saturating pack only
   * narrows; bytes 0..7 are slot 0, 8..15 slot 1 */
  w16 = _mm256_permute4x64_epi64(w16, 0xD8);
  o = _mm_packs_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
  for (j = 0; j < 2; j++) {
    int8_t *d;
    if (!to->dst[j])
      continue;
    d = to->dst[j] + (size_t)co * plane;
    if (to->valid[j] == VL) {
      _mm_storel_epi64((__m128i *)d, j ? _mm_unpackhi_epi64(o, o) : o);
    } else {
      int8_t tmp[16];
      _mm_storeu_si128((__m128i *)tmp, o);
      memcpy(d, tmp + j * VL, (size_t)to->valid[j]);
    }
  }
}

/* One tile over the whole reduction: accumulators from the bias, then
 * requantized and stored (channels co0 .. co0 + mr − 1). */
static TARGET void tile_final(const int32_t *xa, const int32_t *xb, const int32_t *off,
                              int32_t nt, const int32_t *const *wr, const int32_t *bias,
                              const tidsp_host_rq *q, int32_t co0, int32_t mr,
                              const tile_out *to, size_t plane) {
  tile_acc a;
  int32_t i;
  for (i = 0; i < MR; i++)
    a.c[2 * i] = a.c[2 * i + 1] = _mm256_set1_epi32(bias && i < mr ? bias[co0 + i] : 0);
  tile_loop(xa, xb, off, nt, wr, &a);
  for (i = 0; i < mr; i++)
    store_channel(q, a.c[2 * i], a.c[2 * i + 1], co0 + i, to, plane);
}

/* One tile over one chunk of the reduction, its partial sums in part
 * (first: from the bias); the last chunk requantizes and stores. */
static TARGET void tile_chunk(const int32_t *xa, const int32_t *xb, const int32_t *off,
                              int32_t nt, const int32_t *const *wr, const int32_t *bias,
                              const tidsp_host_rq *q, int32_t co0, int32_t mr, int first,
                              int last, int32_t *part, const tile_out *to, size_t plane) {
  tile_acc a;
  int32_t i;
  for (i = 0; i < 2 * MR; i++)
    a.c[i] = first ? _mm256_set1_epi32(bias && i / 2 < mr ? bias[co0 + i / 2] : 0)
                   : _mm256_load_si256((const __m256i *)(part + i * VL));
  tile_loop(xa, xb, off, nt, wr, &a);
  if (!last) {
    for (i = 0; i < 2 * MR; i++)
      _mm256_store_si256((__m256i *)(part + i * VL), a.c[i]);
    return;
  }
  for (i = 0; i < mr; i++)
    store_channel(q, a.c[2 * i], a.c[2 * i + 1], co0 + i, to, plane);
}

/* ---- driver --------------------------------------------------------------- */

/* Software prefetch of weight rows into L2, a few lines per step: `rows`
 * runs of `lines` lines, `stride` bytes apart (OIHW: the rows of the next
 * co-tile; O16: per tap, the chunk's quads of the next 16-channel block). */
typedef struct w_prefetch {
  const int8_t *row;  /* the current run's first byte */
  int32_t rows;       /* runs left to fetch (≤ 0: none) */
  int32_t lines;      /* lines per run */
  int32_t line;       /* next line of the current run */
  int32_t per_step;   /* lines per call of prefetch_step */
  size_t stride;      /* bytes from one run to the next */
} w_prefetch;

static inline void prefetch_step(w_prefetch *pf) {
  int32_t k;
  for (k = 0; k < pf->per_step && pf->rows > 0; k++) {
    _mm_prefetch((const char *)(pf->row + (size_t)pf->line * 64), _MM_HINT_T1);
    if (++pf->line == pf->lines) {
      pf->line = 0;
      pf->row += pf->stride;
      pf->rows--;
    }
  }
}

/* Sets pf to fetch, over the nt tiles of the co-tile at co0, what the
 * next co-tile will convert: OIHW its rows; O16 the next 16-channel block
 * (once, *pf_blk remembering the last block asked for). */
static void prefetch_plan(w_prefetch *pf, const conv_plan *pl, const int8_t *w, int32_t co0,
                          int32_t co_end, int32_t cp0, int32_t ncp, int32_t nt, int32_t *pf_blk) {
  pf->line = 0;
  pf->rows = 0;
  if (pl->p->w_layout == TIDSP_CONV_W_O16) {
    const int32_t b = co0 / 16 + 1;
    if (16 * b < co_end && b != *pf_blk) {
      const tidsp_ref_conv_wmap m = tidsp_ref_conv_w_map(pl->p, 16 * b, 0);
      pf->row = w + m.base + (int64_t)(cp0 / 2) * m.qs;
      pf->rows = pl->kk;
      pf->lines = ncp / 2;
      pf->stride = (size_t)m.ts;
      *pf_blk = b;
    }
  } else {
    pf->rows = co_end - (co0 + MR) < MR ? co_end - (co0 + MR) : MR;
    pf->row = w + (size_t)(co0 + MR) * pl->w_stride + (size_t)cp0 * 2 * (size_t)pl->kk;
    pf->lines = (int32_t)(((int64_t)ncp * 2 * pl->kk + 63) / 64);
    pf->stride = pl->w_stride;
  }
  pf->per_step = pf->rows > 0 ? (pf->rows * pf->lines + nt - 1) / nt : 0;
}

/* The converted weight rows of the tile of channels co0 .. co0 + mr − 1
 * (rows past mr repeat the last), wr[i] row i: OIHW rows are converted
 * into wbuf's first MR rows for each tile. O16 rows come from a ring of
 * two 8-row units in wbuf (unit u = channels 8u .. 8u + 7, one half of a
 * 16-channel block, in half u & 1; held[h] the unit half h holds, −1
 * none): a unit is converted whole, once per chunk, by one 8×8 transpose
 * per 8 steps (convert8_o16) when a tile first reaches it. A tile of 6
 * rows spans at most two units, so the unit before stays for the tile
 * that ends in the next one. (Whole 16-row blocks write twice the rows
 * at once, which then push more of the pair rows out of L1, and need
 * twice the stack; measured side by side at load 10, 512→512 7×7 on O16:
 * 1.73–1.75 ms with blocks, 1.67–1.71 ms with units.) */
static TARGET void tile_weights(const conv_plan *pl, const int8_t *w, int32_t co0, int32_t mr,
                                int32_t cp0, int32_t ncp, int32_t *wbuf, int32_t held[2],
                                const int32_t *wr[MR]) {
  int32_t i;
  for (i = 0; i < MR; i++) {
    const int32_t co = co0 + (i < mr ? i : mr - 1);
    if (pl->p->w_layout == TIDSP_CONV_W_O16) {
      const int32_t u = co / 8, h = u & 1;
      if (held[h] != u) {
        convert8_o16(pl, w, 8 * u, cp0, ncp, wbuf + (size_t)(8 * h) * WS);
        held[h] = u;
      }
      wr[i] = wbuf + (size_t)(8 * h + co % 8) * WS;
    } else {
      convert_weights(pl, w + (size_t)co * pl->w_stride, cp0, ncp, wbuf + (size_t)i * WS);
      wr[i] = wbuf + (size_t)i * WS;
    }
  }
}

static TARGET void conv_fast(const conv_plan *pl, const int8_t *x, const int8_t *w,
                             const int32_t *bias, const tidsp_host_rq *q, int8_t *y) {
  int32_t qbuf[QBUF + 16] __attribute__((aligned(32))); /* + a chunk's overrun */
  int32_t wbuf[2 * 8 * WS] __attribute__((aligned(32))); /* OIHW: MR rows; O16: the ring */
  const int32_t *wr[MR];
  int32_t held[2];
  int32_t off[WS + PF_DIST];
  int32_t part[PART] __attribute__((aligned(32)));
  slot slots[MAX_SLOTS];
  w_prefetch pf;
  const tidsp_conv2d_params *p = pl->p;
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  const int32_t nchunk = (pl->cp + pl->cpc - 1) / pl->cpc;
  int32_t n, g, oh0, ow0, ns, nt, tt, i0, cb0, cob, ch, ncp_off, pf_blk;

  ncp_off = 0;
  for (n = 0; n < p->n; n++) {
    for (g = 0; g < p->groups; g++) {
      const int8_t *x_g = x + ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)pl->cpg_in) * in_plane;
      const int32_t co_g = g * pl->cpg_out;
      int8_t *y_n = y + (size_t)n * (size_t)p->c_out * out_plane;
      for (oh0 = 0; oh0 < p->h_out; oh0 += pl->rows) {
        const int32_t rows = p->h_out - oh0 < pl->rows ? p->h_out - oh0 : pl->rows;
        for (ow0 = 0; ow0 < p->w_out; ow0 += pl->sw_blk) {
          const int32_t cols = p->w_out - ow0 < pl->sw_blk ? p->w_out - ow0 : pl->sw_blk;
          int32_t r, c;
          ns = 0;
          for (r = 0; r < rows; r++) {
            for (c = 0; c < cols; c += VL) {
              slots[ns].r = r;
              slots[ns].ow = c;
              slots[ns].valid = cols - c < VL ? cols - c : VL;
              ns++;
            }
          }
          nt = (ns + 1) / 2;
          /* the co-block whose partial sums fit part (all channels when
           * the reduction is one chunk) */
          cob = nchunk == 1 ? pl->cpg_out : PART / (nt * TILE) / MR * MR;
          for (cb0 = 0; cb0 < pl->cpg_out; cb0 += cob) {
            const int32_t cb_end = pl->cpg_out - cb0 < cob ? pl->cpg_out : cb0 + cob;
            for (ch = 0; ch < nchunk; ch++) {
              const int32_t cp0 = ch * pl->cpc;
              const int32_t ncp = pl->cp - cp0 < pl->cpc ? pl->cp - cp0 : pl->cpc;
              const int32_t ntap = ncp * pl->kk;
              if (nchunk > 1 || cb0 == 0)
                build_q(pl, x_g, oh0, ow0, cp0, ncp, qbuf);
              held[0] = held[1] = pf_blk = -1; /* converted for another chunk */
              if (ncp != ncp_off) { /* the last chunk may be smaller (O16: other offsets) */
                tap_offsets(pl, ncp, off);
                ncp_off = ncp;
              }
              for (i0 = cb0; i0 < cb_end; i0 += MR) {
                const int32_t mr = cb_end - i0 < MR ? cb_end - i0 : MR;
                tile_weights(pl, w, co_g + i0, mr, cp0, ncp, wbuf, held, wr);
                /* the next co-tile's weight rows are fetched while this one
                 * computes (a deep layer streams its weights from memory) */
                prefetch_plan(&pf, pl, w, co_g + i0, co_g + cb_end, cp0, ncp, nt, &pf_blk);
                for (tt = 0; tt < nt; tt++) {
                  const slot *sa = &slots[2 * tt];
                  const slot *sb = 2 * tt + 1 < ns ? &slots[2 * tt + 1] : sa;
                  const int32_t *xa = qbuf + (size_t)sa->r * (size_t)pl->rstep * (size_t)pl->qrow + sa->ow;
                  const int32_t *xb = qbuf + (size_t)sb->r * (size_t)pl->rstep * (size_t)pl->qrow + sb->ow;
                  tile_out to;
                  prefetch_step(&pf);
                  to.dst[0] = y_n + (size_t)(oh0 + sa->r) * (size_t)p->w_out + ow0 + sa->ow;
                  to.valid[0] = sa->valid;
                  to.dst[1] = sb != sa ? y_n + (size_t)(oh0 + sb->r) * (size_t)p->w_out + ow0 + sb->ow : NULL;
                  to.valid[1] = sb->valid;
                  if (nchunk == 1)
                    tile_final(xa, xb, off, ntap, wr, bias, q, co_g + i0, mr, &to, out_plane);
                  else
                    tile_chunk(xa, xb, off, ntap, wr, bias, q, co_g + i0, mr, ch == 0,
                               ch == nchunk - 1,
                               part + ((size_t)(i0 - cb0) / MR * (size_t)nt + (size_t)tt) * MR * TILE, &to,
                               out_plane);
                }
              }
            }
          }
        }
      }
    }
  }
}

int32_t tidsp_conv2d_i8__host_avx2(const tidsp_conv2d_params *p,
                                   const int8_t *x, const int8_t *w,
                                   const int32_t *bias, const void *rq,
                                   int8_t *y) {
  tidsp_host_rq q;
  conv_plan pl;
  if (!tidsp_host_conv_fast_ok(p, x, w, rq, y) || !plan_conv(p, &pl))
    return tidsp_conv2d_i8__ref(p, x, w, bias, rq, y);
  pl.w_end = w + (size_t)(p->c_out - 1) * pl.w_stride + (size_t)pl.cpg_in * (size_t)pl.kk;
  pl.x_lo = x;
  pl.x_hi = x + (size_t)p->n * (size_t)p->c_in * (size_t)p->h_in * (size_t)p->w_in;
  tidsp_host_rq_init(&q, &p->rq, rq, p->c_out);
  conv_fast(&pl, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
