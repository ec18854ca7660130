/*
 * dwconv2d_i8__host_avx512vnni.c — tidsp_conv2d_i8 for depthwise
 * parameters with AVX-512 VNNI: vpdpbusd (four u8 × s8 products summed
 * into each of 16 int32 lanes) on plain loads of a converted input band.
 *
 * Unsigned inputs. vpdpbusd wants one unsigned operand, so every input
 * byte x is stored as u = x + 128 and every padding byte as zu = x_zp + 128;
 * the weights w' = w − w_zp stay signed (dwconv_internal.h splits a w'
 * outside [−128, 127] into several signed sets). Then
 *   Σ (x − x_zp)·w' = Σ u·w' − zu·Σ w'
 * over all taps (a padding tap contributes zu·w' − zu·w' = 0), so the
 * accumulators start at init = bias − zu·Σ w'. Everything is int32
 * arithmetic modulo 2³², like the reference's accumulator (whose exact sum
 * it equals).
 *
 * The band buffer. A band of output rows [oh0, oh0 + rows) and a strip of
 * output columns [ow0, ow0 + cols) read input rows that are converted once
 * into buf, split by row parity when stride_h = 2 (plane π holds the input
 * rows oh0·sh − pad_top + π + sh·t, t < nt), each row padded to Wp = sw·Wq
 * bytes, Wq ≥ cols − 1 + ⌈k_w/sw⌉:
 *
 *   buf: | plane 0: nt rows of Wp | plane 1 (sh = 2) | slack |
 *
 * Rows of Wp < ROW_PATH_WP bytes are converted in 64-byte chunks of buf: each
 * starts as x_zp (the padding), gathers its runs of input bytes (pieces of
 * input rows; their addresses and masks are worked out once per band, as
 * they are the same for every channel) with merging masked loads, and is
 * stored xor 0x80. Longer rows are converted row by row in 64-byte
 * pieces (one merging masked load each, its mask the same for every row
 * of the band, stored xor 0x80), the last piece of a row spilling into
 * the next row, which is written after it (into the slack after the last
 * row): about half the work of the chunks for a stride-2 layer, which
 * reads 4 input bytes per output. Planes are converted ahead of the ones
 * being computed, so that the loads of the computation do not wait on
 * the stores of the conversion.
 *
 * Output (oh0 + r, ow0 + c) is flat output g = r·Wq + c; its tap (kh, kw)
 * is byte sw·g + off(kh) + kw with off(kh) = ((d mod sh)·nt + ⌊d/sh⌋)·Wp,
 * d = kh·dil_h, for every r and c. So the band is one long row of flat outputs, and the
 * (Wq − cols) outputs at the end of each row are computed and dropped.
 *
 * Byte quads by phase. The taps 4q .. 4q+3 of kernel row kh (zero weights
 * past k_w) of flat output g are the four bytes at sw·g + off(kh) + 4q: a
 * plain 64-byte load at sw·g0 + d gives, in int32 lane l, the quad of
 * output g0 + (4/sw)·l + d/sw. Four such loads (phases) cover 64
 * consecutive outputs:
 *
 *   sw = 1: acc a (a < 4) lane l = output g0 + 4l + a       (d = a)
 *   sw = 2: acc a         lane l = output g0 + 32·(a/2) + 2l + a%2
 *                                                     (d = 64·(a/2) + 2·(a%2))
 *
 * so a group of 64 outputs costs 4·k_h·⌈k_w/4⌉ loads and vpdpbusd and no
 * shuffle. The FLOAT requantization is the reference's float operations in
 * vectors (product, max, min, round to nearest even), SCALE_SHIFT is
 * tidsp_host_ss16_i32 (rq_internal.h: exact, already clamped); the
 * four results are packed to 64 bytes (packs, zero point added in int16,
 * packs) and put in output order by one vpshufb (plus one vpermd when
 * sw = 2), then stored by masked stores, one per output row the group
 * touches.
 *
 * Stack: two band buffers of DW_BUF_DATA + DW_BUF_SLACK bytes and the band
 * geometry (output segments, input runs): about 46 KiB. Parameters the
 * path does not cover go to the int16-pair path of
 * dwconv2d_i8__host_avx2.c (horizontal dilation, kernels > 16) when it
 * covers them, else to tidsp_conv2d_i8__host_avx512vnni (strides > 2),
 * which sends invalid inputs (e.g. a zero point outside int8) on to the
 * reference.
 */
#include <string.h>

#include "dwconv_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define ALWAYS_INLINE static inline __attribute__((always_inline))

enum {
  GROUP = 64, /* flat outputs per group */
  MULTI = 4,  /* channels band_multi computes side by side */
  RING = 8,   /* most band buffers in flight (dw_fast) */
  ROW_PATH_WP = 32 /* the shortest buffer rows converted row by row (measured:
                      MobileNetV2's 56→28 s2, Wp = 58, 0.030 → 0.026 ms; rows
                      of 16 bytes, 4 to a chunk, gain nothing) */
};

/* What every channel of the layer shares. */
typedef struct dw_layer {
  const tidsp_conv2d_params *p;
  int32_t sw, sh, nq, taps; /* strides, quads per kernel row, k_h·nq */
  int32_t kq;               /* plane rows a band reads beyond its own:
                               ⌊(k_h − 1)·dil_h/sh⌋ + 1 */
  int32_t qoff[16];         /* band_multi: 4 weight bytes holding quad t */
  int32_t qshift[16];       /* band_multi: right shift that aligns them */
  uint32_t qmask[16];       /* band_multi: then its taps inside k_w */
  __m512i zu;               /* bytes: the padding value x_zp + 128 */
  __m512i xzp;              /* bytes: x_zp */
  __m512i c80;              /* bytes 0x80 */
  __m512i zp16;             /* int16 out_zp */
  __m512i perm;             /* sw = 2: vpermd gathering 16-output blocks */
  __m512i shuf;             /* vpshufb into output order */
  __m512 lo, hi;            /* clamp bounds out_min − zp, out_max − zp */
  __m512i omin, omax;       /* bytes out_min, out_max */
  int ss;                   /* SCALE_SHIFT (else FLOAT) */
} dw_layer;

/* One output channel's requantization: the FLOAT multiplier, or the
 * SCALE_SHIFT constants. */
typedef struct dw_chan_rq {
  __m512 mult;
  tidsp_host_ss16_consts ss;
} dw_chan_rq;

enum {
  MAX_GROUPS = 256, /* groups of a band */
  MAX_SEGS = 512,   /* row segments of a band's groups: ≤ groups + rows */
  MAX_CHUNKS = DW_BUF_DATA / 64, /* 64-byte chunks of the converted rows */
  MAX_RUNS = 512    /* input runs of the chunks: ≤ chunks + input rows */
};

/* The geometry of one band of one strip, the same for every channel, and
 * where its groups' outputs go: group i stores its 64 bytes under mask
 * seg_mask[k] at y_c + seg_off[k] for k in [gseg[i], gseg[i + 1]). */
typedef struct dw_band {
  int32_t ow0, cols;   /* output columns of the strip */
  int32_t oh0, rows;   /* output rows of the band */
  int32_t wq, wp, nt;  /* flat output pitch, buffer row pitch, plane rows */
  int32_t ng;          /* flat outputs: (rows − 1)·wq + cols */
  int64_t c_base;      /* input column of buffer column 0 */
  int32_t off[DW_MAX_K * DW_MAX_NQ]; /* byte offset of tap quad (kh, q) */
  int32_t gseg[MAX_GROUPS + 1];
  ptrdiff_t seg_off[MAX_SEGS];
  __mmask64 seg_mask[MAX_SEGS];
  /* chunk j of the converted rows gathers runs k in [crun[j], crun[j + 1]):
   * the input bytes at x_c + run_off[k] + i for the set bits i of
   * run_mask[k] (a piece of one input row) */
  int32_t chunks;
  /* Wp ≥ ROW_PATH_WP: the row path, npc pieces of 64 bytes per row, piece j
   * loading the input columns of its set bits of pc_mask[j]; else npc = 0
   * and the chunks below */
  int32_t npc;
  __mmask64 pc_mask[DW_MAX_WP / 64];
  int32_t crun[MAX_CHUNKS + 1];
  ptrdiff_t run_off[MAX_RUNS];
  __mmask64 run_mask[MAX_RUNS];
} dw_band;

/* Converts the band's input rows of plane x_c into buf, chunk by chunk
 * (see the file comment). The slack after the chunks is band_slack's. */
static TARGET void convert_band(const dw_layer *L, const dw_band *b,
                                const int8_t *x_c, uint8_t *buf) {
  const __m512i xzp = L->xzp, c80 = L->c80;
  const uintptr_t base = (uintptr_t)x_c;
  int32_t j, k = 0;
  for (j = 0; j < b->chunks; j++) {
    __m512i v = xzp;
    for (; k < b->crun[j + 1]; k++)
      /* bytes outside the run are not read (fault-suppressed) */
      v = _mm512_mask_loadu_epi8(v, b->run_mask[k], (const void *)(base + (uintptr_t)b->run_off[k]));
    _mm512_storeu_si512((void *)(buf + (size_t)64 * (size_t)j), _mm512_xor_si512(v, c80));
  }
}

/* The row path of the conversion (b->npc > 0; see the file comment). */
static TARGET void convert_rows(const dw_layer *L, const dw_band *b, const int8_t *x_c,
                                uint8_t *buf) {
  const tidsp_conv2d_params *p = L->p;
  const int64_t ih0 = (int64_t)b->oh0 * L->sh - p->pad_top;
  const __m512i xzp = L->xzp, c80 = L->c80, zu = L->zu;
  uint8_t *dst = buf;
  int32_t pi, t, j;
  for (pi = 0; pi < L->sh; pi++) {
    for (t = 0; t < b->nt; t++, dst += b->wp) {
      const int64_t ih = ih0 + pi + (int64_t)L->sh * t;
      /* buffer column 0 is input column c_base (maybe < 0: masked off) */
      const uintptr_t src = (uintptr_t)x_c + (uintptr_t)(ih * p->w_in + b->c_base);
      if (ih < 0 || ih >= p->h_in) {
        for (j = 0; j < b->npc; j++)
          _mm512_storeu_si512((void *)(dst + (size_t)64 * (size_t)j), zu);
        continue;
      }
      for (j = 0; j < b->npc; j++) {
        /* bytes outside the mask are not read (fault-suppressed) */
        const __m512i v = _mm512_mask_loadu_epi8(xzp, b->pc_mask[j],
                                                 (const void *)(src + (uintptr_t)64 * (uintptr_t)j));
        _mm512_storeu_si512((void *)(dst + (size_t)64 * (size_t)j), _mm512_xor_si512(v, c80));
      }
    }
  }
}

/* Converts the band's input rows of plane x_c into buf. */
static TARGET void convert(const dw_layer *L, const dw_band *b, const int8_t *x_c,
                           uint8_t *buf) {
  if (b->npc > 0)
    convert_rows(L, b, x_c, buf);
  else
    convert_band(L, b, x_c, buf);
}

/* The dropped lanes of the last groups read up to DW_BUF_SLACK bytes past
 * the chunks: keep them defined (once per band and buffer). */
static void band_slack(const dw_band *b, uint8_t *buf) {
  memset(buf + (size_t)64 * (size_t)b->chunks, 0, DW_BUF_SLACK);
}

/* Requantizes the four accumulators of a group and returns its 64 output
 * bytes in flat order. SS: SCALE_SHIFT, whose int32 results are inside
 * [out_min, out_max] (out_zp = 0), so the packs below only narrow. FLOAT:
 * the reference computes, per value,
 *   y = rne(clamp(fl(acc·m), lo, hi)) + zp,  lo = out_min − zp, hi = out_max − zp.
 * CLAMP_F: those float operations (max, min: NaN → lo), then packs that
 * never saturate (out_zp is an int8: the values fit int16, y fits int8).
 * Otherwise (for |m| ≤ 0.5, so that |fl(acc·m)| ≤ 2³⁰ rounds to an int32
 * n = rne(fl(acc·m)) exactly): lo and hi are integers, so rne(clamp(v)) =
 * clamp(n) and y = clamp(n + zp, out_min, out_max), which the saturating
 * packs (int32 → int16, + zp in int16, → int8) and an int8 max and min
 * give exactly: a value they saturate is beyond ±(32767 − 128) before
 * the zero point, far outside [out_min, out_max]. */
ALWAYS_INLINE TARGET __m512i finish(const __m512i *acc, const dw_layer *L,
                                    const dw_chan_rq *r, const int32_t SW,
                                    const int CLAMP_F, const int SS) {
  __m512i q[4], p01, p23, v;
  int32_t a;
#pragma GCC unroll 4
  for (a = 0; a < 4; a++) {
    __m512 f;
    if (SS) {
      q[a] = tidsp_host_ss16_i32(acc[a], &r->ss);
      continue;
    }
    f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[a]), r->mult);
    if (CLAMP_F) {
      f = _mm512_max_ps(f, L->lo); /* f > lo ? f : lo (NaN → lo) */
      f = _mm512_min_ps(f, L->hi); /* f < hi ? f : hi */
    }
    q[a] = _mm512_cvtps_epi32(f);
  }
  p01 = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), L->zp16);
  p23 = _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), L->zp16);
  v = _mm512_packs_epi16(p01, p23);
  if (!CLAMP_F && !SS)
    v = _mm512_min_epi8(_mm512_max_epi8(v, L->omin), L->omax);
  if (SW == 2)
    v = _mm512_permutexvar_epi32(L->perm, v);
  return _mm512_shuffle_epi8(v, L->shuf);
}

/* True when the channel's multiplier m allows finish without the float
 * clamp: |m| ≤ 0.5 (false for NaN). */
static inline int rq_int_clamp_ok(float m) { return m <= 0.5f && m >= -0.5f; }

/* All groups of one channel's band: output g0 + ... of group g0 is
 * init + Σ_t dpbusd(bytes at sw·g0 + off[t] + phase, wq[t]). T and SW are
 * constants where this is inlined for the common kernels, so that the
 * loops unroll and the broadcast weights stay in registers. */
ALWAYS_INLINE TARGET void band_groups(const dw_layer *L, const dw_band *b,
                                      const uint8_t *buf, const int32_t *wq,
                                      const size_t *off, __m512i init,
                                      const dw_chan_rq *r, int8_t *y_c, const int32_t T,
                                      const int32_t SW, const int CLAMP_F,
                                      const int SS) {
  int32_t g0, gi, t, a, k;
  for (g0 = 0, gi = 0; g0 < b->ng; g0 += GROUP, gi++) {
    const uint8_t *base = buf + (size_t)SW * (size_t)g0;
    __m512i acc[4], v;
#pragma GCC unroll 4
    for (a = 0; a < 4; a++)
      acc[a] = init;
#pragma GCC unroll 16
    for (t = 0; t < T; t++) {
      const __m512i wv = _mm512_set1_epi32(wq[t]);
      const uint8_t *src = base + off[t];
#pragma GCC unroll 4
      for (a = 0; a < 4; a++) {
        const int32_t d = SW == 1 ? a : 64 * (a / 2) + 2 * (a % 2);
        acc[a] = _mm512_dpbusd_epi32(acc[a], _mm512_loadu_si512((const void *)(src + d)), wv);
      }
    }
    v = finish(acc, L, r, SW, CLAMP_F, SS);
    for (k = b->gseg[gi]; k < b->gseg[gi + 1]; k++)
      /* the first lanes may lie before y_c: masked off, never written */
      _mm512_mask_storeu_epi8((void *)((uintptr_t)y_c + (uintptr_t)b->seg_off[k]),
                              b->seg_mask[k], v);
  }
}

/* NC output channels' bands (of NC input planes: cpg_out = 1, or NC = 1)
 * when w_zp = 0 (so w' = w, one signed set), T ≤ 16 tap quads and, for
 * FLOAT, |mult| ≤ 0.5 for every one of them (finish's integer clamp):
 * each quad is one 4-byte load of the weight row inside its k_h·k_w
 * bytes, shifted and masked to its taps, and zu·Σ w' is T vpdpbusd of zu
 * by the quads. The NC channels go through the groups side by side: a
 * small plane is one to four groups, and one channel's chain (the
 * correction, the vpdpbusd, finish, the stores) is too short to keep the
 * core busy (measured on the AMD EPYC, Zen 5: 4 channels at a time take
 * MobileNetV2's 14² and 7² layers from 22–40 µs to 15–27 µs). */
ALWAYS_INLINE TARGET void band_multi(const dw_layer *L, const dw_band *b,
                                     const uint8_t *const *bufs, const int8_t *const *w_rows,
                                     const int32_t *bias, const dw_chan_rq *r,
                                     int8_t *const *y_c, const int32_t NC, const int32_t T,
                                     const int32_t SW, const int SS) {
  int32_t wq[4][16];
  size_t off[16];
  __m512i init[4];
  int32_t t, c, g0, gi, a, k;
#pragma GCC unroll 4
  for (c = 0; c < NC; c++) {
    __m512i corr = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (t = 0; t < T; t++) {
      uint32_t u;
      memcpy(&u, w_rows[c] + L->qoff[t], sizeof(u));
      wq[c][t] = (int32_t)((u >> L->qshift[t]) & L->qmask[t]);
      corr = _mm512_dpbusd_epi32(corr, L->zu, _mm512_set1_epi32(wq[c][t]));
    }
    init[c] = _mm512_sub_epi32(_mm512_set1_epi32(bias[c]), corr);
  }
#pragma GCC unroll 16
  for (t = 0; t < T; t++)
    off[t] = (size_t)b->off[t];
  for (g0 = 0, gi = 0; g0 < b->ng; g0 += GROUP, gi++) {
    __m512i acc[4][4], v[4];
#pragma GCC unroll 4
    for (c = 0; c < NC; c++) {
#pragma GCC unroll 4
      for (a = 0; a < 4; a++)
        acc[c][a] = init[c];
    }
#pragma GCC unroll 16
    for (t = 0; t < T; t++) {
#pragma GCC unroll 4
      for (c = 0; c < NC; c++) {
        const __m512i wv = _mm512_set1_epi32(wq[c][t]);
        const uint8_t *src = bufs[c] + (size_t)SW * (size_t)g0 + off[t];
#pragma GCC unroll 4
        for (a = 0; a < 4; a++) {
          const int32_t d = SW == 1 ? a : 64 * (a / 2) + 2 * (a % 2);
          acc[c][a] = _mm512_dpbusd_epi32(acc[c][a], _mm512_loadu_si512((const void *)(src + d)), wv);
        }
      }
    }
#pragma GCC unroll 4
    for (c = 0; c < NC; c++)
      v[c] = finish(acc[c], L, &r[c], SW, 0, SS);
    for (k = b->gseg[gi]; k < b->gseg[gi + 1]; k++) {
#pragma GCC unroll 4
      for (c = 0; c < NC; c++)
        /* the first lanes may lie before y_c: masked off, never written */
        _mm512_mask_storeu_epi8((void *)((uintptr_t)y_c[c] + (uintptr_t)b->seg_off[k]),
                                b->seg_mask[k], v[c]);
    }
  }
}

/* One instance per common kernel (3×3, 5×5, 7×7: 3, 10, 14 tap quads;
 * horizontal strides 1 and 2) and requantization kind, and a generic one. */
typedef void (*band_fn)(const dw_layer *, const dw_band *, const uint8_t *,
                        const int8_t *, int32_t, const dw_chan_rq *, int8_t *);
/* MULTI channels at a time (band_multi) */
typedef void (*multi_fn)(const dw_layer *, const dw_band *, const uint8_t *const *,
                         const int8_t *const *, const int32_t *, const dw_chan_rq *,
                         int8_t *const *);

#define DW_BAND_FN(name, T, SW, SS)                                              \
  static TARGET void name(const dw_layer *L, const dw_band *b,                 \
                          const uint8_t *buf, const int8_t *w_row,             \
                          int32_t bias, const dw_chan_rq *r, int8_t *y_c) {    \
    band_multi(L, b, &buf, &w_row, &bias, r, &y_c, 1, T, SW, SS);              \
  }                                                                            \
  static TARGET void name##_x4(const dw_layer *L, const dw_band *b,            \
                               const uint8_t *const *bufs,                     \
                               const int8_t *const *w_rows,                    \
                               const int32_t *bias, const dw_chan_rq *r,       \
                               int8_t *const *y_c) {                           \
    band_multi(L, b, bufs, w_rows, bias, r, y_c, MULTI, T, SW, SS);            \
  }
DW_BAND_FN(band_t3s1, 3, 1, 0)
DW_BAND_FN(band_t3s2, 3, 2, 0)
DW_BAND_FN(band_t10s1, 10, 1, 0)
DW_BAND_FN(band_t10s2, 10, 2, 0)
DW_BAND_FN(band_t14s1, 14, 1, 0)
DW_BAND_FN(band_t14s2, 14, 2, 0)
DW_BAND_FN(band_t3s1_ss, 3, 1, 1)
DW_BAND_FN(band_t3s2_ss, 3, 2, 1)
DW_BAND_FN(band_t10s1_ss, 10, 1, 1)
DW_BAND_FN(band_t10s2_ss, 10, 2, 1)
DW_BAND_FN(band_t14s1_ss, 14, 1, 1)
DW_BAND_FN(band_t14s2_ss, 14, 2, 1)
#undef DW_BAND_FN

/* Any kernel, any w_zp, any multiplier: the quads of dwconv_internal.h,
 * all weight sets one after the other, and the float clamp (or
 * SCALE_SHIFT). */
static TARGET void band_any(const dw_layer *L, const dw_band *b,
                            const uint8_t *buf, const int8_t *w_row,
                            int32_t bias, const dw_chan_rq *r, int8_t *y_c) {
  enum { MAX_Q = DW_MAX_SETS * DW_MAX_K * DW_MAX_NQ };
  const tidsp_conv2d_params *p = L->p;
  dw_weights W;
  int32_t wq[MAX_Q], s, t, n = 0;
  size_t off[MAX_Q];
  const uint32_t sum_w = tidsp_host_dw_weights(p, w_row, &W);
  const __m512i init = _mm512_set1_epi32((int32_t)((uint32_t)bias - (uint32_t)(p->x_zp + 128) * sum_w));
  for (s = 0; s < W.ns; s++) {
    for (t = 0; t < L->taps; t++, n++) {
      wq[n] = W.q[s][t];
      off[n] = (size_t)b->off[t];
    }
  }
  if (L->ss && L->sw == 1)
    band_groups(L, b, buf, wq, off, init, r, y_c, n, 1, 0, 1);
  else if (L->ss)
    band_groups(L, b, buf, wq, off, init, r, y_c, n, 2, 0, 1);
  else if (L->sw == 1)
    band_groups(L, b, buf, wq, off, init, r, y_c, n, 1, 1, 0);
  else
    band_groups(L, b, buf, wq, off, init, r, y_c, n, 2, 1, 0);
}

/* The specialized instances for the layer's kernel (one channel, and
 * MULTI channels), or NULL. */
static band_fn pick_band(const dw_layer *L, multi_fn *multi) {
  static const band_fn fns[2][3][2] = {
      {{band_t3s1, band_t3s2}, {band_t10s1, band_t10s2}, {band_t14s1, band_t14s2}},
      {{band_t3s1_ss, band_t3s2_ss},
       {band_t10s1_ss, band_t10s2_ss},
       {band_t14s1_ss, band_t14s2_ss}}};
  static const multi_fn mfns[2][3][2] = {
      {{band_t3s1_x4, band_t3s2_x4}, {band_t10s1_x4, band_t10s2_x4}, {band_t14s1_x4, band_t14s2_x4}},
      {{band_t3s1_ss_x4, band_t3s2_ss_x4},
       {band_t10s1_ss_x4, band_t10s2_ss_x4},
       {band_t14s1_ss_x4, band_t14s2_ss_x4}}};
  const tidsp_conv2d_params *p = L->p;
  *multi = NULL;
  if (p->k_h != p->k_w || p->k_h < 3 || p->k_h > 7 || p->k_h % 2 == 0)
    return NULL;
  *multi = mfns[L->ss != 0][(p->k_h - 3) / 2][L->sw - 1];
  return fns[L->ss != 0][(p->k_h - 3) / 2][L->sw - 1];
}

static TARGET void layer_init(const tidsp_conv2d_params *p, dw_layer *L) {
  int32_t idx[16], i;
  int8_t sh[64];
  L->p = p;
  L->sw = p->stride_w;
  L->sh = p->stride_h;
  L->nq = (p->k_w + 3) / 4;
  L->taps = p->k_h * L->nq;
  L->kq = (p->k_h - 1) * p->dil_h / L->sh + 1;
  for (i = 0; i < L->taps && i < 16; i++) {
    /* quad (kh, q): nt taps at kh·k_w + 4q, read as 4 bytes from there
     * (the rest masked off) or, for the last one, ending at the last tap
     * (K ≥ 4 for the kernels of band_multi): no byte past the row is read */
    const int32_t kh = i / L->nq, q = i % L->nq, K = p->k_h * p->k_w;
    const int32_t nt = p->k_w - 4 * q < 4 ? p->k_w - 4 * q : 4;
    L->qoff[i] = kh * p->k_w + 4 * q;
    L->qshift[i] = 0;
    L->qmask[i] = nt == 4 ? ~0u : ((uint32_t)1 << (8 * nt)) - 1;
    if (L->qoff[i] + 4 > K && K >= 4) {
      L->qshift[i] = 8 * (L->qoff[i] + 4 - K);
      L->qoff[i] = K - 4;
    }
  }
  L->zu = _mm512_set1_epi8((char)(p->x_zp + 128));
  L->xzp = _mm512_set1_epi8((char)p->x_zp);
  L->c80 = _mm512_set1_epi8((char)0x80);
  L->zp16 = _mm512_set1_epi16((short)p->rq.out_zp);
  L->lo = _mm512_set1_ps((float)(p->rq.out_min - p->rq.out_zp));
  L->hi = _mm512_set1_ps((float)(p->rq.out_max - p->rq.out_zp));
  L->omin = _mm512_set1_epi8((char)p->rq.out_min);
  L->omax = _mm512_set1_epi8((char)p->rq.out_max);
  L->ss = p->rq.kind == TIDSP_REQUANT_SCALE_SHIFT;
  /* After the packs, 128-bit lane i holds bytes [acc0 | acc1 | acc2 |
   * acc3] of int32 lanes 4i .. 4i+3 (four bytes each).
   * sw = 1: byte 4a + m of lane i is output 16i + 4m + a.
   * sw = 2: dwords (lane i) are outputs 8i + {0,2,4,6}, 8i + {1,3,5,7},
   * 32 + 8i + even, 32 + 8i + odd; the vpermd brings outputs 16m .. 16m+15
   * into lane m, where byte 4b + j is output 16m + 8·(b/2) + 2j + b%2. */
  for (i = 0; i < 64; i++) { /* vpshufb indexes within its 128-bit lane */
    const int32_t d = i % 16;
    sh[i] = (int8_t)(L->sw == 1 ? 4 * (d % 4) + d / 4
                                : 8 * (d / 8) + 4 * (d % 2) + (d % 8) / 2);
  }
  for (i = 0; i < 16; i++) {
    static const int32_t lane_dw[4][4] = {{0, 1, 4, 5}, {8, 9, 12, 13},
                                          {2, 3, 6, 7}, {10, 11, 14, 15}};
    idx[i] = lane_dw[i / 4][i % 4];
  }
  L->shuf = _mm512_loadu_si512((const void *)sh);
  L->perm = _mm512_loadu_si512((const void *)idx);
}

/* Output columns of a strip: Wp = sw·(cols − 1 + ⌈k_w/sw⌉) ≤ DW_MAX_WP. */
static int32_t strip_cols(const dw_layer *L) {
  return DW_MAX_WP / L->sw + 1 - (L->p->k_w + L->sw - 1) / L->sw;
}

/* Sets the strip fields of b for output columns from b->ow0. */
static void strip_init(const dw_layer *L, int32_t max_cols, dw_band *b) {
  const tidsp_conv2d_params *p = L->p;
  b->cols = p->w_out - b->ow0 < max_cols ? p->w_out - b->ow0 : max_cols;
  b->wq = b->cols - 1 + (p->k_w + L->sw - 1) / L->sw;
  b->wp = L->sw * b->wq;
  b->c_base = (int64_t)b->ow0 * L->sw - p->pad_left;
}

/* The most output rows of a band from b->oh0 (≥ 1): its converted rows
 * fit DW_BUF_DATA, its groups MAX_GROUPS, its segments MAX_SEGS and its
 * input runs MAX_RUNS. */
static int32_t band_max_rows(const dw_layer *L, const dw_band *b) {
  int32_t rows = DW_BUF_DATA / (L->sh * b->wp) - L->kq + 1;
  const int32_t by_groups = (int32_t)(((int64_t)(MAX_GROUPS - 1) * GROUP) / b->wq);
  if (rows > by_groups)
    rows = by_groups;
  if (rows > MAX_SEGS - MAX_GROUPS)
    rows = MAX_SEGS - MAX_GROUPS;
  /* input rows sh·(rows − 1 + kq), one run each per chunk they touch */
  if (rows > (MAX_RUNS - MAX_CHUNKS) / L->sh - L->kq + 1)
    rows = (MAX_RUNS - MAX_CHUNKS) / L->sh - L->kq + 1;
  return rows;
}

/* The chunks and runs of the band (see dw_band): buffer row t of plane pi
 * holds input row ih = oh0·sh − pad_top + pi + sh·t, its buffer column c
 * input column c_base + c; the input columns in [0, w_in) are cut at the
 * 64-byte chunk boundaries of buf. */
static void band_runs(const dw_layer *L, dw_band *b) {
  const tidsp_conv2d_params *p = L->p;
  const int64_t ih0 = (int64_t)b->oh0 * L->sh - p->pad_top;
  const int64_t c_lo = b->c_base < 0 ? -b->c_base : 0; /* buffer columns */
  const int64_t c_hi = (int64_t)p->w_in - b->c_base < b->wp ? (int64_t)p->w_in - b->c_base : b->wp;
  int32_t pi, t, j = 0, nr = 0;
  b->chunks = (L->sh * b->nt * b->wp + 63) / 64;
  b->crun[0] = 0;
  for (pi = 0; pi < L->sh; pi++) {
    for (t = 0; t < b->nt; t++) {
      const int64_t ih = ih0 + pi + (int64_t)L->sh * t;
      const int64_t row = ((int64_t)pi * b->nt + t) * b->wp; /* in buf */
      int64_t a = row + c_lo;
      if (ih < 0 || ih >= p->h_in || c_lo >= c_hi)
        continue;
      while (a < row + c_hi) { /* one run per chunk the row touches */
        const int64_t cj = a / 64, end = row + c_hi < 64 * (cj + 1) ? row + c_hi : 64 * (cj + 1);
        for (; j < cj; j++)
          b->crun[j + 1] = nr;
        /* chunk byte i ← input byte (ih·w_in + c_base + a − row) + i − (a − 64·cj) */
        b->run_off[nr] = (ptrdiff_t)(ih * p->w_in + b->c_base + (a - row) - (a - 64 * cj));
        b->run_mask[nr] = (__mmask64)tidsp_ref_bits64(a - 64 * cj, end - 64 * cj);
        nr++;
        a = end;
      }
    }
  }
  for (; j < b->chunks; j++)
    b->crun[j + 1] = nr;
}

/* Sets the band fields of b for output rows from b->oh0: tap offsets and
 * the output segments of every group. */
static void band_init(const dw_layer *L, int32_t max_rows, dw_band *b) {
  const tidsp_conv2d_params *p = L->p;
  int32_t kh, q, g0, gi, r, ns = 0;
  b->rows = p->h_out - b->oh0 < max_rows ? p->h_out - b->oh0 : max_rows;
  b->nt = b->rows - 1 + L->kq;
  b->ng = (b->rows - 1) * b->wq + b->cols;
  for (kh = 0; kh < p->k_h; kh++) {
    const int32_t dy = kh * p->dil_h; /* input row of tap row kh, from the first */
    for (q = 0; q < L->nq; q++)
      b->off[kh * L->nq + q] = ((dy % L->sh) * b->nt + dy / L->sh) * b->wp + 4 * q;
  }
  for (g0 = 0, gi = 0, r = 0; g0 < b->ng; g0 += GROUP, gi++) {
    b->gseg[gi] = ns;
    for (; r < b->rows; r++) {
      const int32_t rs = r * b->wq; /* flat index of the row's column 0 */
      const int32_t lo = rs > g0 ? rs - g0 : 0;
      const int32_t hi = rs + b->cols - g0;
      if (lo >= GROUP)
        break;
      if (hi > lo) {
        /* lane l is output column ow0 + g0 + l − rs of row oh0 + r */
        b->seg_off[ns] = (ptrdiff_t)(b->oh0 + r) * p->w_out + b->ow0 + (g0 - rs);
        b->seg_mask[ns] = (__mmask64)tidsp_ref_bits64(lo, hi);
        ns++;
      }
      if (hi > GROUP)
        break; /* the row goes on in the next group */
    }
  }
  b->gseg[gi] = ns;
  b->npc = 0;
  if (b->wp >= ROW_PATH_WP) {
    /* buffer columns [lo, hi) hold input columns (the others x_zp) */
    const int64_t lo = b->c_base < 0 ? -b->c_base : 0;
    const int64_t hi = (int64_t)p->w_in - b->c_base < b->wp ? (int64_t)p->w_in - b->c_base : b->wp;
    b->npc = (b->wp + 63) / 64;
    for (q = 0; q < b->npc; q++)
      b->pc_mask[q] = (__mmask64)tidsp_ref_bits64(lo - 64 * q, hi - 64 * q);
    b->chunks = (L->sh * b->nt * b->wp + 63) / 64; /* (the slot size) */
  } else {
    band_runs(L, b);
  }
}

/* Computes the cpg_out output channels of input plane pl (= n·c_in + ci)
 * from its converted band. */
static TARGET void band_outputs(const dw_layer *L, const dw_band *b,
                                band_fn fixed, const uint8_t *buf, int64_t pl,
                                const int8_t *w, const int32_t *bias,
                                const tidsp_host_rq *q, int8_t *y) {
  const tidsp_conv2d_params *p = L->p;
  const int32_t cpg_out = p->c_out / p->groups;
  const size_t w_stride = tidsp_host_conv_w_stride(p);
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  const int32_t ci = (int32_t)(pl % p->c_in);
  int32_t j;
  dw_chan_rq r;
  r.mult = _mm512_setzero_ps();
  tidsp_host_ss16_init(&r.ss, q); /* (for FLOAT too: a few zero vectors) */
  for (j = 0; j < cpg_out; j++) {
    const int32_t co = ci * cpg_out + j;
    band_fn fn = fixed && p->w_zp == 0 ? fixed : band_any;
    if (L->ss) {
      tidsp_host_ss16_channel(&r.ss, q, co);
    } else {
      const float m = tidsp_host_rq_mult(q, co);
      r.mult = _mm512_set1_ps(m);
      if (!rq_int_clamp_ok(m))
        fn = band_any;
    }
    /* output plane n·c_out + co = pl·cpg_out + j */
    fn(L, b, buf, w + (size_t)co * w_stride, bias ? bias[co] : 0, &r,
       y + ((size_t)pl * (size_t)cpg_out + (size_t)j) * out_plane);
  }
}

/* Computes input planes pl .. pl + MULTI − 1 (cpg_out = 1: output plane =
 * input plane; ci: the channel of plane pl) with the MULTI-channel
 * instance when each of them can take it (w_zp = 0, and for FLOAT a
 * multiplier with finish's integer clamp); returns 0, computing nothing,
 * when one cannot. bufs: their bands. (No division here: on planes of 7²
 * a channel is about 60 cycles.) */
static TARGET int batch_outputs(const dw_layer *L, const dw_band *b, multi_fn multi,
                                const uint8_t *const *bufs, int64_t pl, int32_t ci,
                                const int8_t *w, const int32_t *bias,
                                const tidsp_host_rq *q, int8_t *y) {
  const tidsp_conv2d_params *p = L->p;
  const size_t w_stride = tidsp_host_conv_w_stride(p);
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  const int8_t *w_rows[MULTI];
  int8_t *y_c[MULTI];
  int32_t bs[MULTI], c, co = ci;
  dw_chan_rq r[MULTI];
  for (c = 0; c < MULTI; c++, co = co + 1 == p->c_in ? 0 : co + 1) {
    if (L->ss) {
      r[c].mult = _mm512_setzero_ps();
      tidsp_host_ss16_init(&r[c].ss, q);
      tidsp_host_ss16_channel(&r[c].ss, q, co);
    } else {
      const float m = tidsp_host_rq_mult(q, co);
      if (!rq_int_clamp_ok(m))
        return 0;
      r[c].mult = _mm512_set1_ps(m);
    }
    w_rows[c] = w + (size_t)co * w_stride;
    bs[c] = bias ? bias[co] : 0;
    y_c[c] = y + (size_t)(pl + c) * out_plane;
  }
  multi(L, b, bufs, w_rows, bs, r, y_c);
  return 1;
}

static TARGET void dw_fast(const tidsp_conv2d_params *p, const int8_t *x,
                           const int8_t *w, const int32_t *bias,
                           const tidsp_host_rq *q, int8_t *y) {
  /* A ring of band buffers (as many as fit, up to RING): planes are
   * converted ahead of the ones being computed, so that the computation's
   * loads do not wait on the conversion's stores, and MULTI converted
   * planes can be computed together (batch_outputs). */
  uint8_t arena[2 * (DW_BUF_DATA + DW_BUF_SLACK)] __attribute__((aligned(64)));
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const int64_t planes = (int64_t)p->n * p->c_in;
  dw_layer L;
  dw_band b;
  band_fn fixed;
  multi_fn multi;
  int32_t max_cols, max_rows, nb, i, j, nc, cur, next, ci;
  size_t slot;
  int64_t pl, done;

  layer_init(p, &L);
  fixed = pick_band(&L, &multi);
  if (p->w_zp != 0 || p->c_out != p->c_in)
    multi = NULL; /* (cpg_out = 1 only) */
  max_cols = strip_cols(&L);
  for (b.ow0 = 0; b.ow0 < p->w_out; b.ow0 += b.cols) {
    strip_init(&L, max_cols, &b);
    max_rows = band_max_rows(&L, &b);
    for (b.oh0 = 0; b.oh0 < p->h_out; b.oh0 += b.rows) {
      band_init(&L, max_rows, &b);
      /* the slack of each slot is the dropped lanes' (band_slack) */
      slot = (size_t)64 * (size_t)b.chunks + DW_BUF_SLACK;
      nb = (int32_t)(sizeof(arena) / slot); /* ≥ 2: a band fits DW_BUF_DATA */
      if (nb > RING)
        nb = RING;
      for (i = 0; i < nb; i++)
        band_slack(&b, arena + slot * (size_t)i);
      /* planes [0, done) are converted, plane j into slot j mod nb;
       * plane pl is in slot cur, of channel ci (counters: no division) */
      for (pl = 0, done = 0, cur = 0, next = 0, ci = 0; pl < planes; pl += nc) {
        const uint8_t *bufs[MULTI];
        /* every slot but the ones of planes ≥ pl is free */
        for (; done < planes && done < pl + nb; done++, next = next + 1 == nb ? 0 : next + 1)
          convert(&L, &b, x + (size_t)done * in_plane, arena + slot * (size_t)next);
        for (i = 0, j = cur; i < MULTI; i++, j = j + 1 == nb ? 0 : j + 1)
          bufs[i] = arena + slot * (size_t)j;
        nc = 1;
        if (multi && nb >= MULTI && pl + MULTI <= planes &&
            batch_outputs(&L, &b, multi, bufs, pl, ci, w, bias, q, y))
          nc = MULTI;
        else
          band_outputs(&L, &b, fixed, bufs[0], pl, w, bias, q, y);
        for (i = 0; i < nc; i++) {
          cur = cur + 1 == nb ? 0 : cur + 1;
          ci = ci + 1 == p->c_in ? 0 : ci + 1;
        }
      }
    }
  }
}

int32_t tidsp_dwconv2d_i8__host_avx512vnni(const tidsp_conv2d_params *p,
                                           const int8_t *x, const int8_t *w,
                                           const int32_t *bias, const void *rq,
                                           int8_t *y) {
  tidsp_host_rq q;
  if (!tidsp_host_dw_quad_ok(p, x, w, rq, y)) {
    if (tidsp_host_dw_fast_ok(p, x, w, rq, y)) /* every AVX-512 CPU has AVX2 */
      return tidsp_dwconv2d_i8__host_avx2(p, x, w, bias, rq, y);
    return tidsp_conv2d_i8__host_avx512vnni(p, x, w, bias, rq, y);
  }
  tidsp_host_rq_init(&q, &p->rq, rq, p->c_out);
  dw_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
