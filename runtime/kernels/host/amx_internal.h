/*
 * amx_internal.h — the Intel AMX int8 matrix engine that the AMX
 * convolution and matrix multiply share (not public).
 *
 * Both kernels compute, per group, C[row][col] = Σ_k A[row][k]·B[k][col]
 * with A = the weight rows as stored (output channels of a convolution,
 * columns of Y of a matrix multiply) and B = the activations packed by the
 * caller into "panels" (im2col columns for the convolution, Xᵀ for the
 * matrix multiply). One tdpbssd multiplies a 16 × 64 A tile by a 64 × 16 B
 * tile (B stored as 16 rows of [16 columns][4 consecutive k], the VNNI
 * layout) into 16 × 16 int32 sums, s8·s8, so no +128 offset is needed.
 * Four accumulator tiles hold 2 row tiles × 2 column tiles (tmm0..3), A in
 * tmm4/5, B in tmm6/7.
 *
 * Reduction steps of 64 taps, and their tails without reading past a row:
 *  - K ≥ 64: step s reads A bytes [64s, 64s + 64) of every row, except the
 *    last one, which reads [K − 64, K) (it overlaps the step before when
 *    64 ∤ K); the caller's panel then holds zeros for the overlapped taps
 *    [K − 64, 64·(ns − 1)), so each tap counts once. A tile loads stay
 *    inside the K bytes of each row whatever w_row_stride is.
 *  - K < 64: one step of ka = 4⌈K/4⌉ bytes (the tile configuration's A
 *    width and B height); the panel is zero for taps ≥ K. When 4 ∤ K an A
 *    row read would pass K (and, on the last rows, the weights), so the
 *    block's rows are first copied into a zero-padded [row][64] buffer.
 * Row tails: a group with ≥ 16 rows ends with a tile shifted back to its
 * last 16 rows (it recomputes a few rows, bit-identically); a group with
 * fewer rows configures tiles of that many rows.
 *
 * Accumulators: a block of up to TIDSP_AMX_COB rows keeps the sums of each
 * row tile × TIDSP_AMX_LANES columns in its own slot of an int32 buffer
 * (tile stores with a 256-byte row stride; slots never overlap, even where
 * the shifted tile's rows do), reloaded between chunks of TIDSP_AMX_SC
 * steps.
 *
 * GCC's tileloadd/ldtilecfg intrinsics do not tell the compiler which
 * memory they read, so every panel, configuration or accumulator write is
 * followed by TIDSP_AMX_BARRIER before the tile instructions see it.
 */
#ifndef TIDSP_AMX_INTERNAL_H
#define TIDSP_AMX_INTERNAL_H

#include <string.h>

#include "rq_internal.h"
#include "zmm_transpose.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

/* What the AMX kernels use besides the tiles (tidsp_host_amx_supported
 * checks every one). */
#define TIDSP_AMX_TARGET                                                    \
  __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,"      \
                        "avx512vnni,avx512vbmi")))

/* The compiler must assume the asm reads and writes *ptr (and all memory). */
#define TIDSP_AMX_BARRIER(ptr) __asm__ __volatile__("" : : "r"(ptr) : "memory")

enum {
  TIDSP_AMX_LANES = 64, /* B columns per block: 4 column tiles of 16 */
  TIDSP_AMX_SC = 16,    /* steps of 64 taps per chunk: a 64 KiB panel */
  TIDSP_AMX_COB = 128,  /* rows per block (a multiple of 16) */
  TIDSP_AMX_CMAX = 2048 /* rows whose constant terms are computed once */
};

/* Bytes of one panel tile and of one chunk's panel: [step][col tile][16][64]. */
#define TIDSP_AMX_TILE_BYTES 1024
#define TIDSP_AMX_PANEL_BYTES (TIDSP_AMX_SC * 4 * TIDSP_AMX_TILE_BYTES)
/* int32 accumulators of a block: COB/16 slots of [16 rows][64 columns]. */
#define TIDSP_AMX_ACC_INTS (TIDSP_AMX_COB * TIDSP_AMX_LANES)
/* Rows of the zero-padded A copy (a block plus a shifted tile's 15 rows). */
#define TIDSP_AMX_COPY_ROWS (TIDSP_AMX_COB + 16)

/* The 64-byte tile configuration of palette 1. */
typedef struct tidsp_amx_cfg {
  uint8_t palette, start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tidsp_amx_cfg;

/* One group's weights and reduction geometry. */
typedef struct tidsp_amx_gemm {
  const int8_t *w;        /* first weight row of the group */
  size_t w_stride;        /* bytes between rows */
  int32_t rows;           /* weight rows of the group */
  int32_t K;              /* taps per row, ≥ 1 */
  int32_t ns;             /* steps */
  int32_t ka;             /* A bytes per step: 64, or 4⌈K/4⌉ when K < 64 */
  int32_t mr;             /* rows of an A / C tile: min(16, rows) */
  /* ka > K: A tiles come from copy, rows [copy_lo, copy_hi) of the group
   * zero-padded to 64 bytes (TIDSP_AMX_COPY_ROWS rows); else NULL. */
  int8_t *copy;
  int32_t copy_lo, copy_hi;
} tidsp_amx_gemm;

/* Step geometry (see the header comment). */
static inline void tidsp_amx_steps(int32_t K, int32_t *ns, int32_t *ka) {
  if (K >= 64) {
    *ns = (K + 63) / 64;
    *ka = 64;
  } else {
    *ns = 1;
    *ka = (K + 3) / 4 * 4;
  }
}

/* A byte offset of step s. */
static inline int32_t tidsp_amx_step_off(int32_t K, int32_t ns, int32_t s) {
  return s < ns - 1 || K < 64 ? 64 * s : K - 64;
}

/* The first tap of step s that no earlier step counted: the panel holds
 * zeros for taps [tidsp_amx_step_off, this) and for taps ≥ K. */
static inline int32_t tidsp_amx_step_first(int32_t s) { return 64 * s; }

/* Configures the tiles for a group geometry (mr rows, ka-byte A rows). */
static inline TIDSP_AMX_TARGET void tidsp_amx_configure(int32_t mr, int32_t ka) {
  tidsp_amx_cfg cfg;
  int32_t t;
  memset(&cfg, 0, sizeof(cfg));
  cfg.palette = 1;
  for (t = 0; t < 4; t++) { /* accumulators: mr rows × 16 int32 */
    cfg.rows[t] = (uint8_t)mr;
    cfg.colsb[t] = 64;
  }
  for (t = 4; t < 6; t++) { /* A: mr rows × ka bytes */
    cfg.rows[t] = (uint8_t)mr;
    cfg.colsb[t] = (uint16_t)ka;
  }
  for (t = 6; t < 8; t++) { /* B: ka/4 rows × 16 columns × 4 bytes */
    cfg.rows[t] = (uint8_t)(ka / 4);
    cfg.colsb[t] = 64;
  }
  TIDSP_AMX_BARRIER(&cfg);
  _tile_loadconfig(&cfg);
}

/* Fills g for `rows` weight rows of K ≥ 1 taps at w, stride bytes apart;
 * copy is a [TIDSP_AMX_COPY_ROWS·64] buffer for the A copy when 4 ∤ K < 64. */
static inline void tidsp_amx_gemm_init(tidsp_amx_gemm *g, const int8_t *w,
                                       size_t stride, int32_t rows, int32_t K,
                                       int8_t *copy) {
  g->w = w;
  g->w_stride = stride;
  g->rows = rows;
  g->K = K;
  tidsp_amx_steps(K, &g->ns, &g->ka);
  g->mr = rows < 16 ? rows : 16;
  g->copy = g->ka > K ? copy : NULL;
  g->copy_lo = g->copy_hi = -1;
}

/* The start row of row tile i (0, 16, …; the last one shifted back so that
 * it ends at the group's last row). */
static inline int32_t tidsp_amx_tile_row(const tidsp_amx_gemm *g, int32_t i) {
  const int32_t r = 16 * i;
  return r + g->mr > g->rows ? g->rows - g->mr : r;
}

/* Row tiles of the block of rows [r_lo, r_hi) (r_lo a multiple of 16):
 * tiles r_lo/16 … r_lo/16 + n − 1, tile i in accumulator slot i − r_lo/16. */
static inline int32_t tidsp_amx_block_tiles(int32_t r_lo, int32_t r_hi) {
  return (r_hi - r_lo + 15) / 16;
}

/* The accumulators of row r of the block [r_lo, r_hi): 64 int32. */
static inline int32_t *tidsp_amx_acc_row(const tidsp_amx_gemm *g, int32_t *acc,
                                         int32_t r_lo, int32_t r_hi, int32_t r) {
  const int32_t n = tidsp_amx_block_tiles(r_lo, r_hi);
  int32_t slot = (r - r_lo) / 16;
  if (slot > n - 1)
    slot = n - 1;
  return acc + ((size_t)slot * 16 + (size_t)(r - tidsp_amx_tile_row(g, r_lo / 16 + slot))) * 64;
}

/* When A tiles come from the copy: makes it hold the rows that the tiles
 * of the block [r_lo, r_hi) read (kept while the block does not change). */
static inline void tidsp_amx_copy_rows(tidsp_amx_gemm *g, int32_t r_lo,
                                       int32_t r_hi) {
  const int32_t lo = tidsp_amx_tile_row(g, r_lo / 16);
  int32_t r;
  if (!g->copy || (g->copy_lo == lo && g->copy_hi == r_hi))
    return;
  for (r = lo; r < r_hi; r++) {
    int8_t *dst = g->copy + (size_t)(r - lo) * 64;
    memset(dst, 0, 64);
    memcpy(dst, g->w + (size_t)r * g->w_stride, (size_t)g->K);
  }
  g->copy_lo = lo;
  g->copy_hi = r_hi;
}

/* Accumulates steps [s0, s1) of row tiles starting at rows ra (and rb when
 * nrt = 2) × column tiles t0 (and t0 + 1 when nct = 2) of the chunk panel
 * (whose first step is s0) into accumulator slots sa (sb).
 * first: start from zero instead of the stored sums. */
static inline TIDSP_AMX_TARGET void tidsp_amx_run(
    const tidsp_amx_gemm *g, int32_t ra, int32_t rb, int32_t nrt,
    int32_t sa, int32_t sb, const uint8_t *panel, int32_t s0, int32_t s1,
    int32_t t0, int32_t nct, int first, int32_t *acc) {
  const int8_t *a0 = g->copy ? g->copy + (size_t)(ra - g->copy_lo) * 64
                             : g->w + (size_t)ra * g->w_stride;
  const int8_t *a1 = g->copy ? g->copy + (size_t)(rb - g->copy_lo) * 64
                             : g->w + (size_t)rb * g->w_stride;
  const long sa0 = g->copy ? 64 : (long)g->w_stride;
  int32_t *c0 = acc + (size_t)sa * 16 * 64 + 16 * t0;
  int32_t *c1 = acc + (size_t)sb * 16 * 64 + 16 * t0;
  const uint8_t *b = panel + (size_t)t0 * TIDSP_AMX_TILE_BYTES;
  int32_t s;
  TIDSP_AMX_BARRIER(acc);
  TIDSP_AMX_BARRIER(panel);
  TIDSP_AMX_BARRIER(a0);
  if (nrt == 2 && nct == 2) {
    if (first) {
      _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    } else {
      _tile_loadd(0, c0, 256); _tile_loadd(1, c0 + 16, 256);
      _tile_loadd(2, c1, 256); _tile_loadd(3, c1 + 16, 256);
    }
    for (s = s0; s < s1; s++) {
      const int32_t off = tidsp_amx_step_off(g->K, g->ns, s);
      const uint8_t *bs = b + (size_t)(s - s0) * 4 * TIDSP_AMX_TILE_BYTES;
      _tile_loadd(4, a0 + off, sa0);
      _tile_loadd(6, bs, 64);
      _tile_loadd(5, a1 + off, sa0);
      _tile_loadd(7, bs + TIDSP_AMX_TILE_BYTES, 64);
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
    _tile_stored(0, c0, 256); _tile_stored(1, c0 + 16, 256);
    _tile_stored(2, c1, 256); _tile_stored(3, c1 + 16, 256);
  } else if (nrt == 2) { /* one column tile */
    if (first) {
      _tile_zero(0); _tile_zero(2);
    } else {
      _tile_loadd(0, c0, 256); _tile_loadd(2, c1, 256);
    }
    for (s = s0; s < s1; s++) {
      const int32_t off = tidsp_amx_step_off(g->K, g->ns, s);
      _tile_loadd(4, a0 + off, sa0);
      _tile_loadd(6, b + (size_t)(s - s0) * 4 * TIDSP_AMX_TILE_BYTES, 64);
      _tile_loadd(5, a1 + off, sa0);
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(2, 5, 6);
    }
    _tile_stored(0, c0, 256); _tile_stored(2, c1, 256);
  } else if (nct == 2) { /* one row tile */
    if (first) {
      _tile_zero(0); _tile_zero(1);
    } else {
      _tile_loadd(0, c0, 256); _tile_loadd(1, c0 + 16, 256);
    }
    for (s = s0; s < s1; s++) {
      const int32_t off = tidsp_amx_step_off(g->K, g->ns, s);
      const uint8_t *bs = b + (size_t)(s - s0) * 4 * TIDSP_AMX_TILE_BYTES;
      _tile_loadd(4, a0 + off, sa0);
      _tile_loadd(6, bs, 64);
      _tile_loadd(7, bs + TIDSP_AMX_TILE_BYTES, 64);
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
    }
    _tile_stored(0, c0, 256); _tile_stored(1, c0 + 16, 256);
  } else {
    if (first)
      _tile_zero(0);
    else
      _tile_loadd(0, c0, 256);
    for (s = s0; s < s1; s++) {
      const int32_t off = tidsp_amx_step_off(g->K, g->ns, s);
      _tile_loadd(4, a0 + off, sa0);
      _tile_loadd(6, b + (size_t)(s - s0) * 4 * TIDSP_AMX_TILE_BYTES, 64);
      _tile_dpbssd(0, 4, 6);
    }
    _tile_stored(0, c0, 256);
  }
}

/* Accumulates steps [s0, s1) (the chunk in panel) of the block of rows
 * [r_lo, r_hi) × its nct column tiles into acc. */
static inline TIDSP_AMX_TARGET void tidsp_amx_block(
    tidsp_amx_gemm *g, int32_t r_lo, int32_t r_hi, const uint8_t *panel,
    int32_t s0, int32_t s1, int32_t nct, int32_t *acc) {
  const int32_t i0 = r_lo / 16, n = tidsp_amx_block_tiles(r_lo, r_hi);
  int32_t j, t;
  tidsp_amx_copy_rows(g, r_lo, r_hi);
  for (j = 0; j < n; j += 2) {
    const int32_t nrt = n - j < 2 ? 1 : 2;
    const int32_t ra = tidsp_amx_tile_row(g, i0 + j);
    const int32_t rb = nrt == 2 ? tidsp_amx_tile_row(g, i0 + j + 1) : ra;
    for (t = 0; t < nct; t += 2)
      tidsp_amx_run(g, ra, rb, nrt, j, j + (nrt - 1), panel, s0, s1, t,
                    nct - t < 2 ? 1 : 2, s0 == 0, acc);
  }
}

/* cconst[r − r_lo] = bias − x_zp·Σw + K·x_zp·w_zp (mod 2³²) for the group's
 * rows [r_lo, r_hi); bias_g is the group's bias (or NULL). */
static inline TIDSP_AMX_TARGET void tidsp_amx_row_consts(
    const tidsp_amx_gemm *g, int32_t r_lo, int32_t r_hi, const int32_t *bias_g,
    int32_t x_zp, int32_t w_zp, uint32_t *cconst) {
  const uint32_t kz = (uint32_t)g->K * (uint32_t)x_zp * (uint32_t)w_zp;
  int32_t r;
  for (r = r_lo; r < r_hi; r++) {
    const uint32_t sw = (uint32_t)tidsp_zmm_row_sum(g->w + (size_t)r * g->w_stride, g->K);
    cconst[r - r_lo] = (bias_g ? (uint32_t)bias_g[r] : 0u) - (uint32_t)x_zp * sw + kz;
  }
}

/* The FLOAT requantization of 16 accumulators (the operations of
 * tidsp_host_rq_float, lane by lane). */
static inline TIDSP_AMX_TARGET __m128i tidsp_amx_rq16(__m512i acc, __m512 mult,
                                                      __m512 lo, __m512 hi,
                                                      __m512i zp) {
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), mult);
  v = _mm512_max_ps(v, lo); /* v > lo ? v : lo (NaN → lo) */
  v = _mm512_min_ps(v, hi); /* v < hi ? v : hi */
  /* inside [out_min, out_max] ⊂ int8: the saturating narrowing only narrows */
  return _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), zp));
}

#endif /* TIDSP_HAVE_HOST_X86 */

#endif /* TIDSP_AMX_INTERNAL_H */
