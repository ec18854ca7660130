/*
 * conv2d_i8__host_amx.c — tidsp_conv2d_i8 with Intel AMX (tdpbssd: a
 * 16 × 64 by 64 × 16 int8 product per instruction), and the check that
 * this CPU and OS let a process use AMX.
 *
 * Per group, out[co][pixel] = Σ_k w[co][k]·x_col[k][pixel] over k = (ci,
 * kh, kw) in OIHW order, so the weight rows are the A tiles as stored
 * (amx_internal.h: 16 rows × 64 taps, any w_row_stride, tails without
 * reading past a row). The B operand is im2col: for a block of 64 output
 * pixels (tidsp_host_block, the VNNI kernel's blocks: a piece of one output
 * row, or whole rows) and a chunk of taps, the input values are gathered
 * into a panel in the tile layout
 *   panel[step][pixel tile t][k/4 within the step][16 pixels][k%4]
 * four taps at a time, then byte/word unpacks interleave the four taps.
 * A tap's 64 lanes are input bytes at fixed distances from one base (see
 * GATHER_*), x_zp wherever the tap falls into the padding: one masked load
 * when those bytes are consecutive (stride 1 along a row, or whole rows
 * with w_out = w_in), else two masked loads and a byte permute per window
 * of 128 bytes (stride_w ≤ 2: several block rows per window when they
 * fit); the masks and offsets of each tap position are computed once per
 * block. Other strides, or k_w > KW_MAX, gather through
 * tidsp_host_conv_gather.
 *
 * Zero points, all modulo 2³² (the exact sum fits int32 since K ≤ 33025):
 *   Σ (x − x_zp)(w − w_zp) = Σ x·w − x_zp·Σw − w_zp·Σx + K·x_zp·w_zp
 * Σw per output channel once per group (or per block past
 * TIDSP_AMX_CMAX channels), Σx per pixel from the panel rows (only when
 * w_zp ≠ 0); padding reads x_zp, taps that the panel zeroes contribute
 * nothing to either sum. The bias is added modulo 2³², then the FLOAT
 * requantization with the reference's float operations (tidsp_amx_rq16),
 * or SCALE_SHIFT in int64 lanes (tidsp_host_ss16, rq_internal.h).
 *
 * Stack: a 64 KiB panel, 32 KiB of accumulators, 8 KiB of per-channel
 * constants, 7 KiB of block geometry (~112 KiB). Q31 takes the FLOAT
 * epilogue (rq_internal.h); inputs the reference rejects go to
 * tidsp_conv2d_i8__ref, as does every call on a CPU or OS without AMX.
 * Layers too small for the tiles (amx_pays: fewer than 64 taps, or little
 * work per pixel) go to the VNNI kernel, faster there; the tiles' entry
 * tidsp_conv2d_i8__host_amx_tiles takes every layer (the tests').
 */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* syscall() under -std=c99 */
#endif

#include <string.h>

#include "amx_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Linux: AMX tile data is off until the process asks for it. */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static int amx_probe(void) {
  unsigned a, b, c, d, xcr0_lo, xcr0_hi;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512vnni") ||
      !__builtin_cpu_supports("avx512vbmi"))
    return 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
    return 0;
  if (!(d & (1u << 24)) || !(d & (1u << 25))) /* AMX-TILE, AMX-INT8 */
    return 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
    return 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  (void)xcr0_hi;
  if ((xcr0_lo & (3u << 17)) != (3u << 17)) /* XTILECFG, XTILEDATA */
    return 0;
#if defined(__linux__)
  return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
  return 0;
#endif
}

int tidsp_host_amx_supported(void) {
  static int state = -1; /* a race computes the same answer twice */
  if (state < 0)
    state = amx_probe();
  return state;
}

#define TARGET TIDSP_AMX_TARGET

enum {
  KW_MAX = 16,   /* kernel widths with per-block column geometry */
  TAPS_MAX = 64, /* k_h·k_w with a per-block tap table */
  WIN_MAX = 8,   /* windows per tap (GATHER_WINDOW) */
  WIN_TABLE = 256 /* tap positions × windows in the table */
};

/* How a block's taps are gathered (cheapest first). Lane r·cols + j of a
 * block is output (oh0 + r, ow0 + j); for tap (kh, kw) it reads input byte
 *   base(kh, kw) + r·stride_h·w_in + j·stride_w   of the channel plane,
 *   base = (oh0·stride_h + kh·dil_h − pad_top)·w_in + ow0·stride_w +
 *          kw·dil_w − pad_left,
 * or x_zp where (row, column) falls into the padding. */
enum {
  GATHER_TABLE,  /* those bytes are consecutive (stride_w = 1 and one block
                  * row, or whole rows with stride_h = 1 and w_out = w_in):
                  * one masked load per tap, masks per tap position */
  GATHER_WINDOW, /* stride_w ≤ 2: block rows grouped into windows of 128
                  * bytes; per window two masked loads and a byte permute
                  * (vpermt2b) put the bytes into their lanes */
  GATHER_ROWS,   /* stride_w ≤ 2, k_w ≤ KW_MAX: loads per block row */
  GATHER_ANY     /* tidsp_host_conv_gather */
};

typedef struct amx_conv {
  const tidsp_conv2d_params *p;
  const int8_t *x_g; /* the group's input channels of the image */
  size_t in_plane;
  int32_t K, ksz;
  int mode;               /* GATHER_*, per block */
  tidsp_host_block b;
  __m512i zp;             /* x_zp in every byte */
  __m512i idx2;           /* byte 2j → lane j (stride 2, GATHER_ROWS) */
  int64_t ihb[TIDSP_AMX_LANES];  /* input row of block row r at kh = 0 */
  int64_t coff[KW_MAX];   /* input column of lane 0 of a block row at kw */
  __mmask64 m_lo[KW_MAX]; /* stride 1: lanes inside the input; stride 2: */
  __mmask64 m_hi[KW_MAX]; /*   window bytes [0, 64) / [64, 128) inside */
  /* GATHER_TABLE / GATHER_WINDOW: nwin windows; window g holds block rows
   * [g_row[g], g_row[g + 1]) from byte w_off[g] of the tap's base on, its
   * lanes w_lanes[g] take window byte w_idx[g][lane]. Per tap position t =
   * kh·k_w + kw: base t_base[t] and, per window, the masks of the bytes
   * inside the input t_lo/t_hi[t·nwin + g]. */
  int32_t nwin;
  int32_t g_row[WIN_MAX + 1];
  int64_t w_off[WIN_MAX];
  __mmask64 w_lanes[WIN_MAX];
  __m512i w_idx[WIN_MAX];
  int64_t t_base[TAPS_MAX];
  __mmask64 t_lo[WIN_TABLE], t_hi[WIN_TABLE];
  __m512i xsum[4];        /* Σx per pixel (w_zp ≠ 0) */
} amx_conv;

/* Adds bits first, first + step, …, (n of them, step 1 or 2) of a 128-bit
 * window mask (lo: bits 0..63, hi: 64..127). */
static void add_bits(__mmask64 *lo, __mmask64 *hi, int64_t first, int64_t n,
                     int32_t step) {
  const __mmask64 every = step == 1 ? ~(__mmask64)0 : 0x5555555555555555ull;
  const int64_t end = first + (n - 1) * step + 1;
  if (n <= 0)
    return;
  /* the bits of parity first % step */
  *lo |= tidsp_ref_bits64(first, end) & (every << (first & 1 & (step - 1)));
  *hi |= tidsp_ref_bits64(first - 64, end - 64) & (every << ((first - 64) & 1 & (step - 1)));
}

/* Groups the block rows into windows of ≤ 128 bytes (GATHER_WINDOW) and
 * fills the per-tap tables. Returns 0 when the block does not fit the
 * tables (then GATHER_ROWS). */
static TARGET int window_geometry(amx_conv *c) {
  const tidsp_conv2d_params *p = c->p;
  const tidsp_host_block *b = &c->b;
  const int64_t row_step = (int64_t)p->stride_h * p->w_in; /* bytes per block row */
  const int64_t span = (int64_t)(b->cols - 1) * p->stride_w; /* one row's bytes − 1 */
  int32_t r0 = 0, r1, g, r, j, kh, kw;
  c->nwin = 0;
  while (r0 < b->rows) {
    int8_t idx[64];
    if (c->nwin == WIN_MAX || span > 127)
      return 0;
    r1 = r0 + 1;
    /* rows share a window when their bytes do not overlap (each byte has
     * one lane, so its mask bit says whether that lane is padding) */
    while (r1 < b->rows && row_step > span && (r1 - r0) * row_step + span <= 127)
      r1++;
    memset(idx, 0, sizeof(idx));
    for (r = r0; r < r1; r++) {
      for (j = 0; j < b->cols; j++)
        idx[r * b->cols + j] = (int8_t)((r - r0) * row_step + (int64_t)j * p->stride_w);
    }
    g = c->nwin++;
    c->g_row[g] = r0;
    c->w_off[g] = r0 * row_step;
    c->w_lanes[g] = tidsp_ref_bits64((int64_t)r0 * b->cols, (int64_t)r1 * b->cols);
    c->w_idx[g] = _mm512_loadu_si512(idx);
    r0 = r1;
  }
  c->g_row[c->nwin] = b->rows;
  if (c->ksz * c->nwin > WIN_TABLE)
    return 0;
  for (kh = 0; kh < p->k_h; kh++) {
    for (kw = 0; kw < p->k_w; kw++) {
      const int32_t t = kh * p->k_w + kw;
      int32_t clo, chi; /* block columns inside the input */
      tidsp_ref_valid_range(c->coff[kw], p->stride_w, p->w_in, b->cols, &clo, &chi);
      c->t_base[t] = (c->ihb[0] + (int64_t)kh * p->dil_h) * p->w_in + c->coff[kw];
      for (g = 0; g < c->nwin; g++) {
        __mmask64 lo = 0, hi = 0;
        for (r = c->g_row[g]; r < c->g_row[g + 1]; r++) {
          const int64_t ih = c->ihb[r] + (int64_t)kh * p->dil_h;
          if (ih >= 0 && ih < p->h_in)
            add_bits(&lo, &hi, (r - c->g_row[g]) * row_step + (int64_t)clo * p->stride_w,
                     chi - clo, p->stride_w);
        }
        c->t_lo[t * c->nwin + g] = lo;
        c->t_hi[t * c->nwin + g] = hi;
      }
    }
  }
  return 1;
}

/* The column and row geometry of block c->b, computed once per block. */
static TARGET void block_geometry(amx_conv *c) {
  const tidsp_conv2d_params *p = c->p;
  const tidsp_host_block *b = &c->b;
  int32_t r, kw;
  for (r = 0; r < b->rows; r++)
    c->ihb[r] = (int64_t)(b->oh0 + r) * p->stride_h - p->pad_top;
  if (p->stride_w > 2 || p->k_w > KW_MAX) {
    c->mode = GATHER_ANY;
    return;
  }
  for (kw = 0; kw < p->k_w; kw++) {
    const int64_t coff = (int64_t)b->ow0 * p->stride_w + (int64_t)kw * p->dil_w - p->pad_left;
    c->coff[kw] = coff;
    if (p->stride_w == 1) {
      int32_t clo, chi;
      tidsp_ref_valid_range(coff, 1, p->w_in, b->cols, &clo, &chi);
      c->m_lo[kw] = tidsp_ref_bits64(clo, chi);
      c->m_hi[kw] = 0;
    } else { /* window byte i is input column coff + i */
      c->m_lo[kw] = tidsp_ref_bits64(-coff, (int64_t)p->w_in - coff);
      c->m_hi[kw] = tidsp_ref_bits64(-coff - 64, (int64_t)p->w_in - coff - 64);
    }
  }
  if (c->ksz > TAPS_MAX || !window_geometry(c)) {
    c->mode = GATHER_ROWS;
    return;
  }
  /* one window whose lanes are its bytes: no permute */
  c->mode = c->nwin == 1 && p->stride_w == 1 &&
                    (b->rows == 1 || (int64_t)p->stride_h * p->w_in == b->cols)
                ? GATHER_TABLE
                : GATHER_WINDOW;
}

/* The 64 lanes that tap (ci, kh, kw) reads for the block's pixels: lane
 * r·cols + j is input (ih(r), column of j), x_zp in the padding. `plane`
 * is channel ci's plane and t = kh·k_w + kw. Masked-out bytes are never
 * accessed, so the addresses are computed as integers. The table case is
 * inlined into the packing loop, the others are calls. */
static __attribute__((noinline)) TARGET __m512i gather_rows(const amx_conv *c,
                                                            uintptr_t plane,
                                                            int32_t ci,
                                                            int32_t kh,
                                                            int32_t kw) {
  const tidsp_conv2d_params *p = c->p;
  const int32_t rows = c->b.rows, cols = c->b.cols;
  __m512i v = c->zp;
  int32_t r;
  if (c->mode == GATHER_ANY) {
    int8_t row[TIDSP_AMX_LANES] __attribute__((aligned(64)));
    tidsp_host_conv_gather(p, c->x_g, ci, kh, kw, &c->b, TIDSP_AMX_LANES, row);
    return _mm512_load_si512(row);
  }
  for (r = 0; r < rows; r++) {
    const int64_t ih = c->ihb[r] + (int64_t)kh * p->dil_h;
    uintptr_t src;
    if (ih < 0 || ih >= p->h_in)
      continue;
    src = plane + (uintptr_t)(ih * p->w_in) + (uintptr_t)c->coff[kw];
    if (p->stride_w == 1) {
      /* rows > 1 only when rows·cols ≤ 64: the shift stays below 64 */
      v = _mm512_mask_loadu_epi8(v, c->m_lo[kw] << (r * cols),
                                 (const void *)(src - (uintptr_t)(r * cols)));
    } else {
      const __m512i lo = _mm512_mask_loadu_epi8(c->zp, c->m_lo[kw], (const void *)src);
      const __m512i hi = _mm512_mask_loadu_epi8(c->zp, c->m_hi[kw], (const void *)(src + 64));
      if (rows == 1) {
        v = _mm512_permutex2var_epi8(lo, c->idx2, hi);
      } else { /* lanes of row r: byte 2·(lane − r·cols) of the window */
        const __m512i idx = _mm512_sub_epi8(c->idx2, _mm512_set1_epi8((char)(2 * r * cols)));
        v = _mm512_mask_mov_epi8(v, tidsp_ref_bits64(r * cols, (r + 1) * cols),
                                 _mm512_permutex2var_epi8(lo, idx, hi));
      }
    }
  }
  return v;
}

/* GATHER_WINDOW: the lanes of tap position t whose base is at src. */
static inline __attribute__((always_inline)) TARGET __m512i window_tap(
    const amx_conv *c, uintptr_t src, int32_t t) {
  const __mmask64 *lo = c->t_lo + t * c->nwin, *hi = c->t_hi + t * c->nwin;
  __m512i v;
  int32_t g;
  v = _mm512_permutex2var_epi8(_mm512_mask_loadu_epi8(c->zp, lo[0], (const void *)src),
                               c->w_idx[0],
                               _mm512_mask_loadu_epi8(c->zp, hi[0], (const void *)(src + 64)));
  for (g = 1; g < c->nwin; g++) {
    const uintptr_t w = src + (uintptr_t)c->w_off[g];
    v = _mm512_mask_mov_epi8(
        v, c->w_lanes[g],
        _mm512_permutex2var_epi8(_mm512_mask_loadu_epi8(c->zp, lo[g], (const void *)w),
                                 c->w_idx[g],
                                 _mm512_mask_loadu_epi8(c->zp, hi[g], (const void *)(w + 64))));
  }
  return v;
}

/* Interleaves the 64 lanes of 4 consecutive taps into the 4 panel rows of
 * 16 pixels × 4 taps (dst, dst + 1 KiB, …) and adds them to Σx. */
static inline __attribute__((always_inline)) TARGET void store_quad(
    __m512i v0, __m512i v1, __m512i v2, __m512i v3, uint8_t *dst, int sum,
    __m512i *xsum) {
  const __m512i ones = _mm512_set1_epi8(1);
  /* byte and word unpacks interleave within 128-bit lanes, the shuffles put
   * the lanes back in order */
  const __m512i ab_lo = _mm512_unpacklo_epi8(v0, v1), ab_hi = _mm512_unpackhi_epi8(v0, v1);
  const __m512i cd_lo = _mm512_unpacklo_epi8(v2, v3), cd_hi = _mm512_unpackhi_epi8(v2, v3);
  const __m512i q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo); /* pixels 16L + 0..3 */
  const __m512i q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo); /* 16L + 4..7 */
  const __m512i q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi); /* 16L + 8..11 */
  const __m512i q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi); /* 16L + 12..15 */
  const __m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44);
  const __m512i t1 = _mm512_shuffle_i32x4(q2, q3, 0x44);
  const __m512i t2 = _mm512_shuffle_i32x4(q0, q1, 0xEE);
  const __m512i t3 = _mm512_shuffle_i32x4(q2, q3, 0xEE);
  const __m512i r0 = _mm512_shuffle_i32x4(t0, t1, 0x88); /* pixels 0..15 */
  const __m512i r1 = _mm512_shuffle_i32x4(t0, t1, 0xDD); /* 16..31 */
  const __m512i r2 = _mm512_shuffle_i32x4(t2, t3, 0x88); /* 32..47 */
  const __m512i r3 = _mm512_shuffle_i32x4(t2, t3, 0xDD); /* 48..63 */
  _mm512_store_si512((void *)dst, r0);
  _mm512_store_si512((void *)(dst + TIDSP_AMX_TILE_BYTES), r1);
  _mm512_store_si512((void *)(dst + 2 * TIDSP_AMX_TILE_BYTES), r2);
  _mm512_store_si512((void *)(dst + 3 * TIDSP_AMX_TILE_BYTES), r3);
  if (sum) { /* u8 ones · s8 x: Σx of each pixel's 4 taps */
    xsum[0] = _mm512_dpbusd_epi32(xsum[0], ones, r0);
    xsum[1] = _mm512_dpbusd_epi32(xsum[1], ones, r1);
    xsum[2] = _mm512_dpbusd_epi32(xsum[2], ones, r2);
    xsum[3] = _mm512_dpbusd_epi32(xsum[3], ones, r3);
  }
}

/* The next tap of a packing loop: channel ci (whose plane starts at
 * `plane`), tap position t = kh·k_w + kw. */
typedef struct tap_cursor {
  uintptr_t plane;
  int32_t ci, t, kh, kw;
} tap_cursor;

/* Gathers the cursor's tap by one gather kind (GATHER_TABLE, _WINDOW, or
 * any other through gather_rows: a constant after inlining, so that each
 * packing loop keeps its own cursor and table lookups in registers), then
 * steps the cursor. */
static inline __attribute__((always_inline)) TARGET __m512i next_tap(
    const amx_conv *c, tap_cursor *u, const int kind) {
  __m512i v;
  if (kind == GATHER_TABLE)
    v = _mm512_mask_loadu_epi8(c->zp, c->t_lo[u->t],
                               (const void *)(u->plane + (uintptr_t)c->t_base[u->t]));
  else if (kind == GATHER_WINDOW)
    v = window_tap(c, u->plane + (uintptr_t)c->t_base[u->t], u->t);
  else
    v = gather_rows(c, u->plane, u->ci, u->kh, u->kw);
  if (kind != GATHER_TABLE && kind != GATHER_WINDOW && ++u->kw == c->p->k_w) {
    u->kw = 0; /* only gather_rows wants (kh, kw) */
    u->kh++;
  }
  if (++u->t == c->ksz) {
    u->t = u->kh = 0;
    u->ci++;
    u->plane += c->in_plane;
  }
  return v;
}

/* The packing loop of pack_panel for one gather kind. */
static inline __attribute__((always_inline)) TARGET void pack_steps(
    amx_conv *c, int32_t ns, int32_t ka, int32_t s0, int32_t s1,
    uint8_t *panel, const int kind) {
  const int32_t K = c->K, k_w = c->p->k_w;
  const int sum = c->p->w_zp != 0;
  const int32_t first = tidsp_amx_step_first(s0);
  tap_cursor u;
  __m512i xsum[4];
  int32_t s, q, j;
  u.ci = first / c->ksz;
  u.t = first % c->ksz;
  u.kh = u.t / k_w;
  u.kw = u.t % k_w;
  u.plane = (uintptr_t)(c->x_g + (size_t)u.ci * c->in_plane);
  for (j = 0; j < 4; j++)
    xsum[j] = c->xsum[j];
  for (s = s0; s < s1; s++) {
    const int32_t off = tidsp_amx_step_off(K, ns, s);
    const int32_t real = tidsp_amx_step_first(s);
    uint8_t *dst = panel + (size_t)(s - s0) * 4 * TIDSP_AMX_TILE_BYTES;
    if (off == real && off + ka <= K) { /* every tap of the step is new */
      for (q = 0; q < ka / 4; q++) {
        const __m512i v0 = next_tap(c, &u, kind), v1 = next_tap(c, &u, kind);
        const __m512i v2 = next_tap(c, &u, kind), v3 = next_tap(c, &u, kind);
        store_quad(v0, v1, v2, v3, dst + 64 * q, sum, xsum);
      }
      continue;
    }
    for (q = 0; q < ka / 4; q++) { /* zeros before real and from K on */
      __m512i v[4];
      for (j = 0; j < 4; j++) {
        const int32_t k = off + 4 * q + j;
        v[j] = k >= real && k < K ? next_tap(c, &u, kind) : _mm512_setzero_si512();
      }
      store_quad(v[0], v[1], v[2], v[3], dst + 64 * q, sum, xsum);
    }
  }
  for (j = 0; j < 4; j++)
    c->xsum[j] = xsum[j];
}

/* Gathers steps [s0, s1) of the block into the panel (see the header
 * comment); adds Σx per pixel to c->xsum when w_zp ≠ 0. */
static TARGET void pack_panel(amx_conv *c, int32_t ns, int32_t ka, int32_t s0,
                              int32_t s1, uint8_t *panel) {
  if (c->mode == GATHER_TABLE)
    pack_steps(c, ns, ka, s0, s1, panel, GATHER_TABLE);
  else if (c->mode == GATHER_WINDOW)
    pack_steps(c, ns, ka, s0, s1, panel, GATHER_WINDOW);
  else
    pack_steps(c, ns, ka, s0, s1, panel, GATHER_ROWS);
}

/* Requantizes rows [r_lo, r_hi) of the group (output channels co_g + r)
 * for the block's `lanes` pixels and stores them. cconst[r − c_base]. The
 * loop is specialized (constants after inlining) for full blocks, for
 * w_zp = 0, where there is no Σx term, and for the requantization kind
 * (ss: SCALE_SHIFT, else FLOAT). */
static inline __attribute__((always_inline)) TARGET void requant_rows(
    const amx_conv *c, const tidsp_amx_gemm *g, int32_t *acc, int32_t r_lo,
    int32_t r_hi, const uint32_t *cconst, int32_t c_base, const tidsp_host_rq *q,
    int32_t co_g, int32_t lanes, int8_t *y_block, size_t out_plane,
    const int full, const int with_xsum, const int ss) {
  const tidsp_conv2d_params *p = c->p;
  const __m512 lo = _mm512_set1_ps(q->lo);
  const __m512 hi = _mm512_set1_ps(q->hi);
  const __m512i zp = _mm512_set1_epi32(q->zp);
  const __mmask64 store_mask = tidsp_ref_bits64(0, lanes);
  const int32_t nt = full ? 4 : (lanes + 15) / 16;
  __m512i corr[4];
  const int32_t *a = acc;
  tidsp_host_ss16_consts k;
  int32_t r, t;
  tidsp_host_ss16_init(&k, q); /* (for FLOAT too: a few zero vectors) */
  for (t = 0; t < 4; t++) /* −w_zp·Σx per pixel */
    corr[t] = with_xsum ? _mm512_mullo_epi32(c->xsum[t], _mm512_set1_epi32(-p->w_zp))
                        : _mm512_setzero_si512();
  for (r = r_lo; r < r_hi; r++) {
    const int32_t co = co_g + r;
    const __m512i cc = _mm512_set1_epi32((int)cconst[r - c_base]);
    __m512 m = lo;
    __m128i out[4];
    __m512i o;
    if (ss)
      tidsp_host_ss16_channel(&k, q, co);
    else
      m = _mm512_set1_ps(tidsp_host_rq_mult(q, co));
    /* a slot holds 16 consecutive rows: look it up at each 16th row */
    a = (r - r_lo) % 16 == 0 ? tidsp_amx_acc_row(g, acc, r_lo, r_hi, r) : a + 64;
    for (t = 0; t < 4; t++) {
      if (full || t < nt) {
        __m512i s = _mm512_add_epi32(_mm512_load_si512(a + 16 * t), cc);
        if (with_xsum)
          s = _mm512_add_epi32(s, corr[t]);
        out[t] = ss ? tidsp_host_ss16(s, &k) : tidsp_amx_rq16(s, m, lo, hi, zp);
      } else {
        out[t] = _mm_setzero_si128();
      }
    }
    o = _mm512_castsi128_si512(out[0]);
    o = _mm512_inserti32x4(o, out[1], 1);
    o = _mm512_inserti32x4(o, out[2], 2);
    o = _mm512_inserti32x4(o, out[3], 3);
    if (full)
      _mm512_storeu_si512((void *)(y_block + (size_t)co * out_plane), o);
    else
      _mm512_mask_storeu_epi8(y_block + (size_t)co * out_plane, store_mask, o);
  }
}

static TARGET void requant_store(const amx_conv *c, const tidsp_amx_gemm *g,
                                 int32_t *acc, int32_t r_lo, int32_t r_hi,
                                 const uint32_t *cconst, int32_t c_base,
                                 const tidsp_host_rq *q, int32_t co_g, int32_t lanes,
                                 int8_t *y_block, size_t out_plane) {
  const int full = lanes == TIDSP_AMX_LANES;
#define REQUANT_ROWS(full_, xsum_, ss_)                                           \
  requant_rows(c, g, acc, r_lo, r_hi, cconst, c_base, q, co_g, lanes, y_block, \
               out_plane, full_, xsum_, ss_)
  if (tidsp_host_rq_is_ss(q)) {
    if (c->p->w_zp != 0)
      REQUANT_ROWS(0, 1, 1);
    else if (full)
      REQUANT_ROWS(1, 0, 1);
    else
      REQUANT_ROWS(0, 0, 1);
  } else {
    if (c->p->w_zp != 0)
      REQUANT_ROWS(0, 1, 0);
    else if (full)
      REQUANT_ROWS(1, 0, 0);
    else
      REQUANT_ROWS(0, 0, 0);
  }
#undef REQUANT_ROWS
}

static TARGET void conv_amx(const tidsp_conv2d_params *p, const int8_t *x,
                            const int8_t *w, const int32_t *bias,
                            const tidsp_host_rq *q, int8_t *y) {
  uint8_t panel[TIDSP_AMX_PANEL_BYTES] __attribute__((aligned(64)));
  int32_t acc[TIDSP_AMX_ACC_INTS] __attribute__((aligned(64)));
  uint32_t cconst[TIDSP_AMX_CMAX];
  amx_conv c;
  tidsp_amx_gemm g;
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  const size_t w_stride = tidsp_host_conv_w_stride(p);
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  const int whole = cpg_out <= TIDSP_AMX_CMAX; /* constants once per group */
  int32_t gi, n, r_lo, s0, j;
  int8_t idx[64];

  memset(&c, 0, sizeof(c));
  c.p = p;
  c.in_plane = (size_t)p->h_in * (size_t)p->w_in;
  c.ksz = p->k_h * p->k_w;
  c.K = cpg_in * c.ksz;
  c.zp = _mm512_set1_epi8((char)p->x_zp);
  for (j = 0; j < 64; j++)
    idx[j] = (int8_t)(2 * j);
  c.idx2 = _mm512_loadu_si512(idx);
  /* the A copy (4 ∤ K < 64) lives past the one step such a panel uses */
  tidsp_amx_gemm_init(&g, w, w_stride, cpg_out, c.K,
                      (int8_t *)panel + 4 * TIDSP_AMX_TILE_BYTES);
  tidsp_amx_configure(g.mr, g.ka);
  for (gi = 0; gi < p->groups; gi++) {
    const int32_t co_g = gi * cpg_out;
    const int32_t *bias_g = bias ? bias + co_g : NULL;
    tidsp_amx_gemm_init(&g, w + (size_t)co_g * w_stride, w_stride, cpg_out, c.K,
                        (int8_t *)panel + 4 * TIDSP_AMX_TILE_BYTES);
    if (whole)
      tidsp_amx_row_consts(&g, 0, cpg_out, bias_g, p->x_zp, p->w_zp, cconst);
    for (n = 0; n < p->n; n++) {
      c.x_g = x + ((size_t)n * (size_t)p->c_in + (size_t)gi * (size_t)cpg_in) * c.in_plane;
      tidsp_host_block_first(&c.b, p->h_out, p->w_out, TIDSP_AMX_LANES);
      do {
        const int32_t lanes = c.b.rows * c.b.cols;
        const int32_t nct = (lanes + 15) / 16;
        int8_t *y_block = y + (size_t)n * (size_t)p->c_out * out_plane +
                          (size_t)c.b.oh0 * (size_t)p->w_out + c.b.ow0;
        int packed = 0; /* the panel holds the whole reduction */
        block_geometry(&c);
        for (r_lo = 0; r_lo < cpg_out; r_lo += TIDSP_AMX_COB) {
          const int32_t r_hi = cpg_out - r_lo < TIDSP_AMX_COB ? cpg_out : r_lo + TIDSP_AMX_COB;
          if (!whole)
            tidsp_amx_row_consts(&g, r_lo, r_hi, bias_g, p->x_zp, p->w_zp, cconst);
          for (s0 = 0; s0 < g.ns; s0 += TIDSP_AMX_SC) {
            const int32_t s1 = g.ns - s0 < TIDSP_AMX_SC ? g.ns : s0 + TIDSP_AMX_SC;
            if (!packed) {
              if (s0 == 0) {
                for (j = 0; j < 4; j++)
                  c.xsum[j] = _mm512_setzero_si512();
              }
              pack_panel(&c, g.ns, g.ka, s0, s1, panel);
              packed = s0 == 0 && s1 == g.ns;
            }
            tidsp_amx_block(&g, r_lo, r_hi, panel, s0, s1, nct, acc);
          }
          requant_store(&c, &g, acc, r_lo, r_hi, cconst, whole ? 0 : r_lo, q, co_g,
                        lanes, y_block, out_plane);
        }
      } while (tidsp_host_block_next(&c.b, p->h_out, p->w_out, TIDSP_AMX_LANES));
    }
  }
  _tile_release();
}

/* Layers the tiles do not pay for: K = C_in/g·k_h·k_w below 96 taps
 * (a tile row is 64; a 1×1 conv of 64 input channels is ×1.1–1.4 slower
 * on the tiles at every C_out), or so little work per output pixel (K
 * times the group's output channels) that the im2col panel, the tile
 * set-up and the 16-row channel blocks cost more than the products. The
 * VNNI kernel reads the input in place and is faster there (bench/
 * conv_bench.c on a Xeon with AMX, AMX time over VNNI's: MobileNetV2's
 * 16→96 1×1 ×2.3, 32→192 1×1 ×1.7, 96→24 1×1 ×1.35, 144→24 ×1.16, its
 * 3→32 k3 s2 stem ×1.15, ResNet-18's 3→64 k7 s2 stem ×1.17; AMX ahead
 * from 96→576 1×1, ×0.88, on). bench/amx_route.c times both kernels and
 * this choice on a grid of 640 1×1 and 3×3 layers, stride 1 and 2: the
 * kernel chosen takes 1.01× the faster one's time (geometric mean; worst
 * ×1.3–1.7, small 3×3 layers on 14×14 under the work line, 64→16 the
 * worst); the tiles everywhere took 1.17×, the VNNI kernel everywhere
 * 1.33× (the stride-1 rule alone on the strided layers: 1.08×, worst
 * ×5.0). A rule
 * fitted to the grid (1.005×) was no faster on the suite's networks
 * (GoogLeNet ×1.02, ShuffleNetV2 ×1.03, the rest within 1 %), so the
 * simpler one stays. */
#define AMX_MIN_K 96
#define AMX_MIN_WORK 10000 /* K · C_out per group */
/* Strided layers read the input with gaps, which costs the VNNI kernel's
 * in-place loads more than the tiles' im2col panel: there the tiles win
 * from 16 input channels per group (a 3×3 stride-2 16→16 on 56×56 ×0.72,
 * 64→16 on 14×14 ×0.30), except 1×1 layers of at most 32 input channels
 * feeding more output channels (16→64 ×1.60, 32→256 ×1.70). Stems (3
 * input channels) keep the stride-1 rule (MobileNetV2's 3→32 k3 s2 above). */
#define AMX_S2_MIN_C_IN 16
#define AMX_S2_VNNI_MAX_K 32

static int amx_pays(const tidsp_conv2d_params *p) {
  const int64_t k = (int64_t)(p->c_in / p->groups) * p->k_h * p->k_w, c = p->c_out / p->groups;
  if ((p->stride_h > 1 || p->stride_w > 1) && p->c_in / p->groups >= AMX_S2_MIN_C_IN)
    return !(p->k_h * p->k_w == 1 && k <= AMX_S2_VNNI_MAX_K && c > k);
  return k >= AMX_MIN_K && k * c > AMX_MIN_WORK;
}

int32_t tidsp_conv2d_i8__host_amx_tiles(const tidsp_conv2d_params *p, const int8_t *x, const int8_t *w,
                                        const int32_t *bias, const void *rq, int8_t *y) {
  tidsp_host_rq q;
  /* The tiles load OIHW rows; a packed layout (kernels.h w_layout, O16 for
   * the VNNI kernel's channels-in-lanes path) goes to that kernel, which
   * every AMX CPU also runs (AMX arrived with AVX-512 VNNI). */
  if (p && p->w_layout != TIDSP_CONV_W_OIHW) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
      return tidsp_conv2d_i8__host_avx512vnni(p, x, w, bias, rq, y);
    return tidsp_conv2d_i8__ref(p, x, w, bias, rq, y);
  }
  if (!tidsp_host_amx_supported() || !tidsp_host_conv_fast_ok(p, x, w, rq, y))
    return tidsp_conv2d_i8__ref(p, x, w, bias, rq, y);
  tidsp_host_rq_init(&q, &p->rq, rq, p->c_out);
  conv_amx(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

int32_t tidsp_conv2d_i8__host_amx(const tidsp_conv2d_params *p,
                                  const int8_t *x, const int8_t *w,
                                  const int32_t *bias, const void *rq,
                                  int8_t *y) {
  /* (AMX here implies AVX-512 VNNI and BW: amx_probe, cached) */
  if (p && p->groups > 0 && p->w_layout == TIDSP_CONV_W_OIHW && !amx_pays(p) && tidsp_host_amx_supported())
    return tidsp_conv2d_i8__host_avx512vnni(p, x, w, bias, rq, y);
  return tidsp_conv2d_i8__host_amx_tiles(p, x, w, bias, rq, y);
}

#endif /* TIDSP_HAVE_HOST_X86 */
