/*
 * matmul_i8__host_avx512vnni.c — tidsp_matmul_i8 with AVX-512 VNNI,
 * register-blocked.
 *
 * Y[i][j] = Σ_k (x[i][k] − x_zp)(w[j][k] − w_zp). A vector holds 16
 * consecutive columns j of one row of Y, as Y is stored. vpdpbusd wants
 * one operand unsigned: here it is W, as v = w + 128 (w XOR 0x80), so that
 * X is the signed operand and is used as stored, four taps of one row
 * broadcast to every lane. The panel of a strip of NR = 64 columns is
 * packed per call on the stack (W is [n][k]; the micro-kernel wants the
 * four taps of 16 columns in one vector):
 *   panel[q][j][t] = v[j][4q + t]   (q: groups of 4 taps, j < 64, t < 4)
 * by 16 × 16 transposes of the 4-byte groups of 16 rows of W, zero (an
 * unsigned 0: no product) past k and past n; any w_row_stride, only the
 * first k bytes of a row are read (masked loads), each row prefetched 8
 * cache lines ahead (W mostly comes from memory: about +8 % on ViT-B's
 * MLP, +10-20 % on the one- and two-row products). Packing costs one
 * pass over W per strip, which every row of X then reuses; reading W as
 * stored would need a horizontal sum per output. The micro-kernel keeps
 * MR = 6 rows × 4 vectors of Y in 24 zmm accumulators: per group of 4
 * taps, 4 panel loads, 6 broadcasts and 24 vpdpbusd.
 *
 * With a = 128 + w_zp, all modulo 2³² (how the reference reduces its exact
 * sum; the bias is added modulo 2³² too):
 *   Σ (x − x_zp)(w − w_zp) = Σ x·v − a·Σx − x_zp·Σv + k·x_zp·a
 * Σv per column comes out of the packing (vpdpbusd of the panel with
 * ones: already one column per lane), a·Σx per row in batches of 16 rows
 * (one transpose-sum; none when a = 0). Requantization in registers, 16
 * columns a vector: the FLOAT formula with the reference's float
 * operations, or SCALE_SHIFT (rq_internal.h).
 *
 * K ≤ K1 (1536): one chunk; up to GROUP strips are packed together (as
 * many as fit in BUF), then every tile of 6 rows runs over them, its row
 * sums computed once for the group. K > K1: one strip at a time in blocks
 * of MB rows and chunks of KC taps, the panel repacked per block and
 * chunk, the block's partial sums kept in the rest of BUF between chunks.
 *
 * At most FEW_ROWS = 2 rows (a classifier head, a decode step): a panel
 * would cost more than the products it serves, so each output is a dot
 * product of a row of X (unsigned, u = x + 128) with a row of W as stored,
 * 64 taps a vpdpbusd, Σw from the same loads of W (read once), one
 * transpose-sum per 8 outputs (matmul_rows). From 3 rows on the panel is
 * as fast or faster (measured: m = 1 .. 4, k = 512, n = 1000).
 *
 * Stack: BUF (96 KiB) + the strips' constants (about 20 KiB). Q31 takes
 * the FLOAT epilogue (rq_internal.h); inputs the reference rejects go to
 * tidsp_matmul_i8__ref.
 */
#include <string.h>

#include "rq_internal.h"
#include "zmm_transpose.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define INLINE static inline __attribute__((always_inline)) TARGET

enum {
  MR = 6,          /* rows of X per micro-tile */
  NZ = 4,          /* vectors of 16 columns per strip */
  NR = 16 * NZ,    /* columns per strip */
  BUF = 96 * 1024, /* the panel, and when K > K1 the partial sums too */
  K1 = BUF / NR,   /* most taps of one chunk: a whole strip in BUF (1536) */
  KC = 512,        /* taps per chunk when K > K1 (a multiple of 64) */
  MB = (BUF - KC * NR) / (NR * 4) / MR * MR, /* rows per block when K > K1 (252) */
  GROUP = 4,       /* strips packed together when K ≤ K1 */
  RCB = 48,        /* rows per batch of row sums (a multiple of 16 and of MR) */
  FEW_ROWS = 2,    /* at most this many rows of X: dot products (matmul_rows) */
  FAR_W = 256 * 1024 /* a W of more bytes is prefetched a block ahead (pack_panel) */
};

/* The constants of one strip's columns, one vector of 16 per entry. */
typedef struct strip_cols {
  __m512i cc[NZ];     /* bias − x_zp·Σv + k·x_zp·a (modulo 2³²) */
  __m512 mult[NZ];    /* FLOAT */
  tidsp_host_ss16_consts ss[NZ]; /* SCALE_SHIFT */
  __m512i sumv[NZ];   /* Σv, accumulated by pack_panel */
} strip_cols;

static inline __mmask64 mask64(int32_t len) {
  return len >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << len) - 1);
}

/* Lane j of the result: the sum of the 16 lanes of s[j]. */
INLINE __m512i sum16(const __m512i s[16]) {
  __m512i t[8], u[4], v0, v1, w0, w1;
  int32_t i;
#pragma GCC unroll 8
  for (i = 0; i < 8; i++) /* per 128-bit lane: (s2i, s2i+1) pairs of lanes summed */
    t[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(s[2 * i], s[2 * i + 1]),
                            _mm512_unpackhi_epi32(s[2 * i], s[2 * i + 1]));
#pragma GCC unroll 4
  for (i = 0; i < 4; i++) /* per 128-bit lane L: that lane's sum of s4i .. s4i+3 */
    u[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2 * i], t[2 * i + 1]),
                            _mm512_unpackhi_epi64(t[2 * i], t[2 * i + 1]));
  /* the four 128-bit lanes of u[i] summed into lane group i */
  v0 = _mm512_add_epi32(_mm512_shuffle_i32x4(u[0], u[1], 0x88),
                        _mm512_shuffle_i32x4(u[0], u[1], 0xDD));
  v1 = _mm512_add_epi32(_mm512_shuffle_i32x4(u[2], u[3], 0x88),
                        _mm512_shuffle_i32x4(u[2], u[3], 0xDD));
  w0 = _mm512_shuffle_i32x4(v0, v1, 0x88);
  w1 = _mm512_shuffle_i32x4(v0, v1, 0xDD);
  return _mm512_add_epi32(w0, w1);
}

/* 16 wrapped int32 sums of columns c0 .. c0+15 → their 16 outputs as
 * int32 in [out_min, out_max]. */
INLINE __m512i requant16_i32(const tidsp_host_rq *q, __m512 mult,
                             const tidsp_host_ss16_consts *ss, __m512i acc) {
  if (tidsp_host_rq_is_ss(q))
    return tidsp_host_ss16_i32(acc, ss);
  {
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), mult);
    v = _mm512_max_ps(v, _mm512_set1_ps(q->lo)); /* v > lo ? v : lo (NaN → lo) */
    v = _mm512_min_ps(v, _mm512_set1_ps(q->hi)); /* v < hi ? v : hi */
    return _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(q->zp));
  }
}

/* The same as 16 int8 (the saturating narrowing only narrows). */
INLINE __m128i requant16(const tidsp_host_rq *q, __m512 mult,
                         const tidsp_host_ss16_consts *ss, __m512i acc) {
  return _mm512_cvtsepi32_epi8(requant16_i32(q, mult, ss, acc));
}

/* The requantization constants of columns c0 .. c0 + nc − 1 (nc ≤ 16; the
 * lanes past nc are not stored). */
static TARGET void cols_rq(const tidsp_host_rq *q, int32_t c0, int32_t nc, __m512 *mult,
                           tidsp_host_ss16_consts *ss) {
  if (tidsp_host_rq_is_ss(q)) {
    *mult = _mm512_setzero_ps();
    if (q->per_channel) {
      tidsp_host_ss16_lanes(ss, q, c0, nc);
    } else {
      tidsp_host_ss16_init(ss, q);
      tidsp_host_ss16_channel(ss, q, 0);
    }
  } else { /* lanes past nc: 0 */
    float buf[16];
    *mult = q->per_channel ? _mm512_maskz_loadu_ps((__mmask16)((1u << nc) - 1),
                                                   tidsp_host_rq_mults(q, c0, nc, buf))
                           : _mm512_set1_ps(tidsp_host_rq_mult(q, 0));
  }
}

/* ---- the panel path ------------------------------------------------------ */

/* Packs taps [k0, k0 + kc) of the strip's nc columns (rows of W at w,
 * w_stride apart) into panel, and adds each column's Σv to c->sumv. */
static TARGET void pack_panel(const int8_t *w, size_t w_stride, int32_t nc, int32_t k0,
                              int32_t kc, int far, uint8_t *panel, strip_cols *c) {
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  const __m512i ones = _mm512_set1_epi8(1);
  const int32_t nq = (kc + 3) / 4;
  int32_t z, g, j, t;
  for (z = 0; z * 16 < nc; z++) {
    __m512i sumv = c->sumv[z];
    for (g = 0; g < kc; g += 64) {
      const __mmask64 m = mask64(kc - g);
      __m512i r[16];
#pragma GCC unroll 16
      for (j = 0; j < 16; j++) {
        const int32_t col = 16 * z + j;
        /* −128 past k: v = 0 there */
        if (col < nc && g + 512 < kc) /* 8 lines ahead: 16 rows stream at once */
          _mm_prefetch((const char *)(w + (size_t)col * w_stride + k0 + g + 512), _MM_HINT_T0);
        /* and, for a large W, into L2 the same line of the row 16 further
         * (the next 16 columns, or the next strip's): such a W mostly
         * comes from memory (a network's weights are in no cache when its
         * layer runs), and 16 row streams are more than the hardware
         * prefetchers follow (as in prefetch_next below). Formed as an
         * integer: past W's last row it names no object, and a prefetch
         * never faults. */
        if (far)
          _mm_prefetch((const char *)((uintptr_t)(w + (size_t)col * w_stride + k0 + g) + 16 * w_stride),
                       _MM_HINT_T1);
        r[j] = col < nc ? _mm512_xor_si512(
                              _mm512_mask_loadu_epi8(flip, m, w + (size_t)col * w_stride + k0 + g),
                              flip)
                        : _mm512_setzero_si512();
      }
      tidsp_zmm_transpose16(r);
#pragma GCC unroll 16
      for (t = 0; t < 16; t++) {
        if (g / 4 + t >= nq)
          break;
        _mm512_store_si512(panel + ((size_t)(g / 4 + t) * NR + 16 * (size_t)z) * 4, r[t]);
        sumv = _mm512_dpbusd_epi32(sumv, r[t], ones);
      }
    }
    c->sumv[z] = sumv;
  }
}

/* rc[r] = a·Σx of row r < rows (≤ 16) of X at x (K taps, rows K apart),
 * modulo 2³²: 16 rows' sums in one transpose-sum. */
static TARGET void row_corr(const int8_t *x, int32_t K, int32_t rows, uint32_t a,
                            uint32_t *rc) {
  const __m512i ones = _mm512_set1_epi8(1);
  const size_t last = (size_t)(rows - 1) * (size_t)K;
  __m512i s[16];
  int32_t r, k;
#pragma GCC unroll 16
  for (r = 0; r < 16; r++)
    s[r] = _mm512_setzero_si512();
  for (k = 0; k < K; k += 64) {
    const __mmask64 m = mask64(K - k);
#pragma GCC unroll 16
    for (r = 0; r < 16; r++) { /* rows past `rows` repeat the last one */
      const size_t off = (size_t)r * (size_t)K < last ? (size_t)r * (size_t)K : last;
      s[r] = _mm512_dpbusd_epi32(s[r], ones, _mm512_maskz_loadu_epi8(m, x + off + k));
    }
  }
  _mm512_storeu_si512(rc, _mm512_mullo_epi32(sum16(s), _mm512_set1_epi32((int32_t)a)));
}

/* Rows i0 .. i0 + mr − 1 (mr ≤ MR) of X × nz vectors of the panel over
 * taps [k0, k0 + kc). first: the accumulators start at 0, else from part;
 * last: subtract rc[r] (a·Σx of the row), requantize and store the nc
 * columns at y (rows n apart), else save the sums to part (rows NR apart). */
INLINE void tile(const tidsp_matmul_params *p, const int8_t *x, int32_t i0, int32_t mr,
                 int32_t k0, int32_t kc, const uint8_t *panel, const strip_cols *c,
                 const tidsp_host_rq *q, int first, int last, int32_t *part,
                 const uint32_t *rc, int32_t nz, int32_t nc, int8_t *y) {
  const int32_t K = p->k, nq = kc / 4, tail = kc % 4;
  const int8_t *xr[MR];
  __m512i acc[MR][NZ];
  int32_t r, z, t;
#pragma GCC unroll 8
  for (r = 0; r < MR; r++) /* rows past mr repeat the last one, not stored */
    xr[r] = x + (size_t)(i0 + (r < mr ? r : mr - 1)) * (size_t)K + k0;
#pragma GCC unroll 8
  for (r = 0; r < MR; r++) {
#pragma GCC unroll 4
    for (z = 0; z < NZ; z++) {
      if (z < nz)
        acc[r][z] = first ? _mm512_setzero_si512()
                          : _mm512_loadu_si512(part + (size_t)r * NR + 16 * z);
    }
  }
  /* one group of 4 taps (len bytes of each row: the last, partial group
   * reads only the taps before k, the panel is 0 past them) */
#define TILE_STEP(len)                                                                   \
  do {                                                                                   \
    __m512i b[NZ];                                                                       \
    _Pragma("GCC unroll 4") for (z = 0; z < NZ; z++) {                                   \
      if (z < nz)                                                                        \
        b[z] = _mm512_load_si512(panel + ((size_t)t * NR + 16 * (size_t)z) * 4);         \
    }                                                                                    \
    _Pragma("GCC unroll 8") for (r = 0; r < MR; r++) {                                   \
      int32_t xv = 0;                                                                    \
      __m512i xb;                                                                        \
      memcpy(&xv, xr[r] + 4 * t, (len));                                                 \
      xb = _mm512_set1_epi32(xv);                                                        \
      _Pragma("GCC unroll 4") for (z = 0; z < NZ; z++) {                                 \
        if (z < nz)                                                                      \
          acc[r][z] = _mm512_dpbusd_epi32(acc[r][z], b[z], xb);                          \
      }                                                                                  \
    }                                                                                    \
  } while (0)
  for (t = 0; t < nq; t++)
    TILE_STEP(4);
  if (tail)
    TILE_STEP((size_t)tail);
#undef TILE_STEP
  if (!last) {
#pragma GCC unroll 8
    for (r = 0; r < MR; r++) {
#pragma GCC unroll 4
      for (z = 0; z < NZ; z++) {
        if (z < nz)
          _mm512_storeu_si512(part + (size_t)r * NR + 16 * z, acc[r][z]);
      }
    }
    return;
  }
#pragma GCC unroll 8
  for (r = 0; r < MR; r++) {
    if (r < mr) {
      const __m512i rcv = _mm512_set1_epi32((int32_t)rc[r]);
      int8_t *yr = y + (size_t)(i0 + r) * (size_t)p->n;
      __m512i o[NZ], b;
#pragma GCC unroll 4
      for (z = 0; z < NZ; z++) {
        o[z] = z < nz ? requant16_i32(q, c->mult[z], &c->ss[z],
                                      _mm512_sub_epi32(_mm512_add_epi32(acc[r][z], c->cc[z]), rcv))
                      : _mm512_setzero_si512();
      }
      /* one row's 64 outputs: in 128-bit lane L the packs leave columns
       * 16z + 4L .. 16z + 4L + 3 at dword 4L + z; vpermd puts them at 4z + L */
      b = _mm512_packs_epi16(_mm512_packs_epi32(o[0], o[1]), _mm512_packs_epi32(o[2], o[3]));
      b = _mm512_permutexvar_epi32(
          _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
      if (nc == NR)
        _mm512_storeu_si512(yr, b);
      else
        _mm512_mask_storeu_epi8(yr, mask64(nc), b);
    }
  }
}

/* One tile per strip width (nz vectors of 16 columns). */
#define DEFINE_TILE(NZC)                                                                   \
  static TARGET void tile_nz##NZC(const tidsp_matmul_params *p, const int8_t *x,          \
                                  int32_t i0, int32_t mr, int32_t k0, int32_t kc,         \
                                  const uint8_t *panel, const strip_cols *c,              \
                                  const tidsp_host_rq *q, int first, int last,            \
                                  int32_t *part, const uint32_t *rc, int32_t nc,          \
                                  int8_t *y) {                                            \
    tile(p, x, i0, mr, k0, kc, panel, c, q, first, last, part, rc, NZC, nc, y);          \
  }
DEFINE_TILE(1)
DEFINE_TILE(2)
DEFINE_TILE(3)
DEFINE_TILE(4)

typedef void (*tile_fn)(const tidsp_matmul_params *, const int8_t *, int32_t, int32_t,
                        int32_t, int32_t, const uint8_t *, const strip_cols *,
                        const tidsp_host_rq *, int, int, int32_t *, const uint32_t *, int32_t,
                        int8_t *);
static const tile_fn TILE[NZ + 1] = {NULL, tile_nz1, tile_nz2, tile_nz3, tile_nz4};

/* The column constants cc of the strip (after every chunk's Σv is in). */
static TARGET void strip_cc(const tidsp_matmul_params *p, const int32_t *bias, int32_t n0,
                            int32_t nc, strip_cols *c) {
  const uint32_t a = (uint32_t)(128 + p->w_zp);
  const __m512i kxa = _mm512_set1_epi32((int32_t)((uint32_t)p->k * (uint32_t)p->x_zp * a));
  const __m512i xzp = _mm512_set1_epi32(p->x_zp);
  int32_t z;
  for (z = 0; z * 16 < nc; z++) {
    const int32_t cn = nc - 16 * z < 16 ? nc - 16 * z : 16;
    const __m512i b = bias ? _mm512_maskz_loadu_epi32((__mmask16)((1u << cn) - 1),
                                                      bias + n0 + 16 * z)
                           : _mm512_setzero_si512();
    c->cc[z] = _mm512_add_epi32(_mm512_sub_epi32(b, _mm512_mullo_epi32(xzp, c->sumv[z])), kxa);
  }
}

static TARGET void matmul_panel(const tidsp_matmul_params *p, const int8_t *x,
                                const int8_t *w, const int32_t *bias, const tidsp_host_rq *q,
                                int8_t *y) {
  uint8_t buf[BUF] __attribute__((aligned(64)));
  uint8_t *const panel = buf;
  int32_t *const part = (int32_t *)(buf + KC * NR); /* K > K1 only */
  strip_cols cols[GROUP];
  uint32_t rc[RCB] = {0};
  const int32_t K = p->k;
  const size_t w_stride = tidsp_host_matmul_w_stride(p);
  const int32_t nchunk = K > K1 ? (K + KC - 1) / KC : 1;
  const int32_t mblock = nchunk == 1 ? p->m : MB;
  const uint32_t a = (uint32_t)(128 + p->w_zp);
  /* one chunk: as many strips (up to GROUP) as the panel holds */
  const size_t strip_bytes = (size_t)(nchunk == 1 ? (K + 63) / 64 * 64 + (K == 0) * 64 : KC) * NR;
  const int32_t per_pass = nchunk > 1 ? 1 : (int32_t)(BUF / strip_bytes);
  const int32_t group = per_pass < GROUP ? per_pass : GROUP;
  const int far = (size_t)p->n * w_stride > FAR_W; /* see pack_panel */
  int32_t n0, m0, ch, z, g, i0, r;

  for (n0 = 0; n0 < p->n; n0 += group * NR) {
    const int32_t ng = (p->n - n0 + NR - 1) / NR < group ? (p->n - n0 + NR - 1) / NR : group;
    for (g = 0; g < ng; g++) {
      const int32_t c0 = n0 + g * NR, nc = p->n - c0 < NR ? p->n - c0 : NR;
      for (z = 0; z * 16 < nc; z++)
        cols_rq(q, c0 + 16 * z, nc - 16 * z < 16 ? nc - 16 * z : 16, &cols[g].mult[z],
                &cols[g].ss[z]);
    }
    for (m0 = 0; m0 < p->m; m0 += mblock) {
      const int32_t mb = p->m - m0 < mblock ? p->m - m0 : mblock;
      for (g = 0; g < ng; g++)
        for (z = 0; z < NZ; z++)
          cols[g].sumv[z] = _mm512_setzero_si512();
      for (ch = 0; ch < nchunk; ch++) {
        const int32_t k0 = ch * KC, kc = nchunk == 1 ? K : (K - k0 < KC ? K - k0 : KC);
        const int first = ch == 0, last = ch == nchunk - 1;
        for (g = 0; g < ng; g++) {
          const int32_t c0 = n0 + g * NR, nc = p->n - c0 < NR ? p->n - c0 : NR;
          pack_panel(w + (size_t)c0 * w_stride, w_stride, nc, k0, kc, far,
                     panel + (size_t)g * strip_bytes, &cols[g]);
          if (last)
            strip_cc(p, bias, c0, nc, &cols[g]);
        }
        for (i0 = m0; i0 < m0 + mb; i0 += MR) {
          const int32_t mr = m0 + mb - i0 < MR ? m0 + mb - i0 : MR;
          const int32_t ri = (i0 - m0) % RCB;
          if (last && ri == 0) { /* the next RCB rows' a·Σx, once for the group's strips */
            for (r = 0; r < RCB; r += 16) {
              const int32_t left = m0 + mb - (i0 + r);
              if (left <= 0)
                break;
              if (a == 0)
                memset(rc + r, 0, sizeof(uint32_t) * 16);
              else
                row_corr(x + (size_t)(i0 + r) * (size_t)K, K, left < 16 ? left : 16, a, rc + r);
            }
          }
          for (g = 0; g < ng; g++) {
            const int32_t c0 = n0 + g * NR, nc = p->n - c0 < NR ? p->n - c0 : NR;
            TILE[(nc + 15) / 16](p, x, i0, mr, k0, kc, panel + (size_t)g * strip_bytes,
                                 &cols[g], q, first, last, part + (size_t)(i0 - m0) * NR, rc + ri,
                                 nc, y + c0);
          }
        }
      }
    }
  }
}

/* ---- one row: dot products ---------------------------------------------- */

/* W streams from memory once per call (a classifier's 1.28 MB of weights
 * is in no cache when the head runs): besides the prefetch of each row 8
 * lines ahead into L1, every load also prefetches, into L2, the same line
 * of the row `next` bytes further (the matching row of the next block of
 * 16 columns), so that many more lines are in flight than L1's miss
 * buffers allow. Measured on the AMD EPYC (Zen 5) with W evicted before
 * each call, 1×1280×1000: 0.138 → 0.087–0.094 ms (taskset -c 0, medians
 * of 201). A prefetch never faults, so the addresses past W's last row
 * that the last block names are harmless (they are formed as integers). */
INLINE void prefetch_next(const int8_t *row, int32_t k, size_t next) {
  _mm_prefetch((const char *)(row + k + 512), _MM_HINT_T0); /* 8 lines ahead */
  _mm_prefetch((const char *)((uintptr_t)(row + k) + next), _MM_HINT_T1);
}

/* Columns c .. c + 7 of one row of Y (wr[j]: row c + j of W, xr: the row
 * of X): lane j of the result is Σ u·w of column j (u = x + 128, 0 past
 * k), lane 8 + j its Σw; one vpdpbusd of 64 taps for each, from the same
 * load of W, and one transpose-sum (sum16). next: see prefetch_next. */
INLINE __m512i dots8(const int8_t *xr, const int8_t *const *wr, int32_t K, size_t next) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  __m512i s[16];
  int32_t j, k;
#pragma GCC unroll 16
  for (j = 0; j < 16; j++)
    s[j] = _mm512_setzero_si512();
  for (k = 0; k < K; k += 64) {
    const __mmask64 m = mask64(K - k);
    /* −128 past k: u = 0 there */
    const __m512i u = _mm512_xor_si512(_mm512_mask_loadu_epi8(flip, m, xr + k), flip);
#pragma GCC unroll 8
    for (j = 0; j < 8; j++) {
      const __m512i wv = _mm512_maskz_loadu_epi8(m, wr[j] + k);
      prefetch_next(wr[j], k, next);
      s[j] = _mm512_dpbusd_epi32(s[j], u, wv);
      s[8 + j] = _mm512_dpbusd_epi32(s[8 + j], ones, wv);
    }
  }
  return sum16(s);
}

/* Two rows (x0, x1) × columns c .. c + 7 (wr[j]: row c + j of W): lane j
 * of the result is Σ u·w of row x0 and column j, lane 8 + j that of row
 * x1; sw[j] gets the 16 partial Σw of column j (one vector per column),
 * all from the same loads of W. */
INLINE __m512i dots8x2(const int8_t *x0, const int8_t *x1, const int8_t *const *wr, int32_t K,
                       __m512i *sw, size_t next) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  __m512i s[16];
  int32_t j, k;
#pragma GCC unroll 16
  for (j = 0; j < 16; j++)
    s[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (j = 0; j < 8; j++)
    sw[j] = _mm512_setzero_si512();
  for (k = 0; k < K; k += 64) {
    const __mmask64 m = mask64(K - k);
    const __m512i u0 = _mm512_xor_si512(_mm512_mask_loadu_epi8(flip, m, x0 + k), flip);
    const __m512i u1 = _mm512_xor_si512(_mm512_mask_loadu_epi8(flip, m, x1 + k), flip);
#pragma GCC unroll 8
    for (j = 0; j < 8; j++) {
      const __m512i wv = _mm512_maskz_loadu_epi8(m, wr[j] + k);
      prefetch_next(wr[j], k, next);
      s[j] = _mm512_dpbusd_epi32(s[j], u0, wv);
      s[8 + j] = _mm512_dpbusd_epi32(s[8 + j], u1, wv);
      sw[j] = _mm512_dpbusd_epi32(sw[j], ones, wv);
    }
  }
  return sum16(s);
}

/* The constant of row xr: k·u_zp·w_zp − w_zp·Σu (modulo 2³²). */
static TARGET uint32_t row_const(const tidsp_matmul_params *p, const int8_t *xr) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i flip = _mm512_set1_epi8((char)0x80);
  const uint32_t u_zp = (uint32_t)(p->x_zp + 128);
  __m512i us = _mm512_setzero_si512();
  int32_t k;
  for (k = 0; p->w_zp != 0 && k < p->k; k += 64)
    us = _mm512_dpbusd_epi32(
        us, _mm512_xor_si512(_mm512_mask_loadu_epi8(flip, mask64(p->k - k), xr + k), flip),
        ones);
  return (uint32_t)p->k * u_zp * (uint32_t)p->w_zp -
         (uint32_t)p->w_zp * (uint32_t)_mm512_reduce_add_epi32(us);
}

/* Requantizes and stores the nc ≤ 16 outputs of row i at columns j0 ..:
 * dots − u_zp·Σw + the row's constant + the bias. */
INLINE void row_store(const tidsp_matmul_params *p, const tidsp_host_rq *q, __m512i dots,
                      __m512i sw, uint32_t rconst, const int32_t *bias, int32_t i, int32_t j0,
                      int32_t nc, __m512 mult, const tidsp_host_ss16_consts *ss, int8_t *y) {
  __m512i acc = _mm512_sub_epi32(dots, _mm512_mullo_epi32(_mm512_set1_epi32(p->x_zp + 128), sw));
  acc = _mm512_add_epi32(acc, _mm512_set1_epi32((int32_t)rconst));
  if (bias)
    acc = _mm512_add_epi32(acc, _mm512_maskz_loadu_epi32((__mmask16)((1u << nc) - 1), bias + j0));
  _mm512_mask_storeu_epi8(y + (size_t)i * (size_t)p->n + j0, mask64(nc),
                          _mm512_castsi128_si512(requant16(q, mult, ss, acc)));
}

/* Y for m ≤ FEW_ROWS rows, 16 columns at a time: rows in pairs (dots8x2),
 * an odd last row alone (dots8); W read once per pair:
 *   Σ (x − x_zp)(w − w_zp) = Σ u·w − u_zp·Σw − w_zp·Σu + k·u_zp·w_zp
 * with u = x + 128, u_zp = x_zp + 128. */
static TARGET void matmul_rows(const tidsp_matmul_params *p, const int8_t *x, const int8_t *w,
                               const int32_t *bias, const tidsp_host_rq *q, int8_t *y) {
  const int32_t K = p->k;
  const size_t w_stride = tidsp_host_matmul_w_stride(p);
  const size_t next = 16 * w_stride; /* a row of W → that of the next block */
  uint32_t rconst[FEW_ROWS];
  int32_t i, j0, jj;
  for (i = 0; i < p->m; i++)
    rconst[i] = row_const(p, x + (size_t)i * (size_t)K);
  for (j0 = 0; j0 < p->n; j0 += 16) {
    const int32_t nc = p->n - j0 < 16 ? p->n - j0 : 16;
    const int8_t *wr[16];
    __m512 mult;
    tidsp_host_ss16_consts ss;
#pragma GCC unroll 16
    for (jj = 0; jj < 16; jj++) /* columns past nc repeat the last, not stored */
      wr[jj] = w + (size_t)(j0 + (jj < nc ? jj : nc - 1)) * w_stride;
    cols_rq(q, j0, nc, &mult, &ss);
    for (i = 0; i + 1 < p->m; i += 2) {
      const int8_t *x0 = x + (size_t)i * (size_t)K, *x1 = x0 + K;
      __m512i sw[16], ra, rb, swv;
      ra = dots8x2(x0, x1, wr, K, sw, next);
      if (nc > 8) {
        rb = dots8x2(x0, x1, wr + 8, K, sw + 8, next);
      } else {
        rb = ra;
        for (jj = 8; jj < 16; jj++)
          sw[jj] = sw[jj - 8];
      }
      swv = sum16(sw);
      /* ra: row i columns 0-7 | row i+1 columns 0-7; rb: the same for 8-15 */
      row_store(p, q, _mm512_shuffle_i32x4(ra, rb, 0x44), swv, rconst[i], bias, i, j0, nc, mult,
                &ss, y);
      row_store(p, q, _mm512_shuffle_i32x4(ra, rb, 0xEE), swv, rconst[i + 1], bias, i + 1, j0,
                nc, mult, &ss, y);
    }
    if (i < p->m) { /* lanes 0-7: dots, 8-15: Σw */
      const __m512i r0 = dots8(x + (size_t)i * (size_t)K, wr, K, next);
      const __m512i r1 = nc > 8 ? dots8(x + (size_t)i * (size_t)K, wr + 8, K, next) : r0;
      row_store(p, q, _mm512_shuffle_i32x4(r0, r1, 0x44), _mm512_shuffle_i32x4(r0, r1, 0xEE),
                rconst[i], bias, i, j0, nc, mult, &ss, y);
    }
  }
}

int32_t tidsp_matmul_i8__host_avx512vnni(const tidsp_matmul_params *p,
                                         const int8_t *x, const int8_t *w,
                                         const int32_t *bias, const void *rq,
                                         int8_t *y) {
  tidsp_host_rq q;
  if (!tidsp_host_matmul_fast_ok(p, x, w, rq, y))
    return tidsp_matmul_i8__ref(p, x, w, bias, rq, y);
  tidsp_host_rq_init(&q, &p->rq, rq, p->n);
  if (p->m <= FEW_ROWS)
    matmul_rows(p, x, w, bias, &q, y);
  else
    matmul_panel(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
