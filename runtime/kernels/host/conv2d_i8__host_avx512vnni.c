/*
 * conv2d_i8__host_avx512vnni.c — tidsp_conv2d_i8 with AVX-512 VNNI
 * (vpdpbusd: 16 lanes × 4 u8·s8 products per instruction).
 *
 * The convolution is a matrix product per group, out[co][pixel] =
 * Σ_k w[co][k]·x_col[k][pixel] over k = (ci, kh, kw) in OIHW order, so a
 * weight row is read as stored (row co at w + co·w_row_stride, dense when
 * 0; only its first K bytes are read). A vector holds 64 output pixels of
 * one block (tidsp_host_block); for each chunk of at most KC taps the
 * block's input columns are gathered ("im2col") into a stack buffer laid out
 *   xbuf[k/4][pixel 0..63][k%4]          (u8, 256 bytes per quad of taps)
 * so that one vpdpbusd multiplies 16 pixels × 4 taps by a broadcast
 * quad of weights. The micro-kernel keeps MR output channels × 64 pixels in
 * 24 zmm accumulators.
 *
 * vpdpbusd wants unsigned activations: u = x + 128 (pads read
 * u_zp = x_zp + 128), and the zero points come back in as
 *   Σ (x − x_zp)(w − w_zp) = Σ u·w − u_zp·Σw − w_zp·Σu + K·u_zp·w_zp
 * with Σw per output channel (summed from its weight row whenever a block
 * visits it) and Σu per pixel (only when w_zp ≠ 0). Every term is taken modulo 2³² (vpdpbusd and vpaddd wrap),
 * and the exact sum fits int32 (K ≤ 33025), so the accumulator equals the
 * reference's bit for bit; the bias is added modulo 2³² like ORT's.
 * Requantization is the FLOAT formula with the same float operations, or
 * SCALE_SHIFT in int64 lanes (rq_internal.h).
 *
 * Stack: KC·64 + COB·64·4 bytes (96 KiB). Q31 requantization and inputs the
 * reference rejects go to tidsp_conv2d_i8__ref.
 */
#include <string.h>

#include "rq_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

enum {
  LANES = 64, /* output pixels per block: 4 zmm of 16 */
  MR = 6,     /* output channels per micro-kernel call */
  KC = 1024,  /* taps per chunk (a multiple of 4) */
  COB = 128   /* output channels whose accumulators are kept per block */
};

typedef struct vnni_conv {
  const tidsp_conv2d_params *p;
  int32_t cpg_in, cpg_out, K;
  size_t w_stride; /* bytes between weight rows (w_row_stride or K) */
  uint8_t *xbuf;   /* [KC/4][LANES][4] */
  int32_t *tile;   /* [COB][LANES] accumulators */
  __m512i *usum;   /* [4] Σu per pixel, when w_zp ≠ 0 */
} vnni_conv;

/* The 64 input values that tap (ci, kh, kw) reads for the lanes of block b,
 * x_zp in the padding (as tidsp_host_conv_gather). With stride_w = 1 each
 * block row is one masked load: lane r·cols + j reads src_row[coff + j], so
 * the load starts r·cols bytes before src_row + coff, and the mask keeps it
 * inside the row (masked-out bytes are never accessed). */
static TARGET __m512i gather_taps(const tidsp_conv2d_params *p,
                                  const int8_t *x_g, int32_t ci, int32_t kh,
                                  int32_t kw, const tidsp_host_block *b) {
  int8_t row[LANES] __attribute__((aligned(64)));
  const int64_t coff = (int64_t)b->ow0 + (int64_t)kw * p->dil_w - p->pad_left;
  __m512i v = _mm512_set1_epi8((char)p->x_zp);
  __mmask64 m;
  int32_t r, clo, chi;
  if (p->stride_w != 1) {
    tidsp_host_conv_gather(p, x_g, ci, kh, kw, b, LANES, row);
    return _mm512_load_si512(row);
  }
  tidsp_ref_valid_range(coff, 1, p->w_in, b->cols, &clo, &chi);
  if (clo >= chi)
    return v;
  m = (chi - clo == 64 ? ~(__mmask64)0 : (((__mmask64)1 << (chi - clo)) - 1)) << clo;
  for (r = 0; r < b->rows; r++) {
    const int64_t ih = (int64_t)(b->oh0 + r) * p->stride_h +
                       (int64_t)kh * p->dil_h - p->pad_top;
    const int8_t *src;
    if (ih < 0 || ih >= p->h_in)
      continue;
    src = x_g + ((size_t)ci * (size_t)p->h_in + (size_t)ih) * (size_t)p->w_in;
    /* rows > 1 only when rows·cols ≤ 64, so the shift stays below 64 */
    v = _mm512_mask_loadu_epi8(
        v, r == 0 ? m : m << (r * b->cols), (const void *)((uintptr_t)src + (uintptr_t)(coff - (int64_t)r * b->cols)));
  }
  return v;
}

/* Gathers taps [k0, k0 + kc) of block b into ctx->xbuf as u = x + 128;
 * taps past K read u = 0. Adds Σu per pixel to usum when w_zp ≠ 0. */
static TARGET void pack_chunk(vnni_conv *c, const int8_t *x_g,
                              const tidsp_host_block *b, int32_t k0,
                              int32_t kc) {
  const __m512i bias8 = _mm512_set1_epi8((char)0x80);
  const __m512i ones = _mm512_set1_epi8(1);
  const int32_t nq = (kc + 3) / 4;
  const int32_t ksz = c->p->k_h * c->p->k_w;
  /* tap k0 + 4q + j = (ci, kh, kw), stepped without divisions */
  int32_t ci = k0 / ksz, kh = k0 % ksz / c->p->k_w, kw = k0 % c->p->k_w;
  int32_t q, j;
  for (q = 0; q < nq; q++) {
    __m512i v[4], ab_lo, ab_hi, cd_lo, cd_hi, q0, q1, q2, q3, t0, t1, t2, t3;
    uint8_t *dst = c->xbuf + (size_t)q * 4 * LANES;
    for (j = 0; j < 4; j++) {
      const int32_t k = k0 + 4 * q + j;
      if (k < c->K) {
        v[j] = _mm512_xor_si512(gather_taps(c->p, x_g, ci, kh, kw, b), bias8);
        tidsp_host_next_tap(c->p, &ci, &kh, &kw);
      } else {
        v[j] = _mm512_setzero_si512();
      }
    }
    /* 4 rows of 64 bytes → 64 quads: byte and word unpacks interleave
     * within 128-bit lanes, the shuffles put the lanes back in order. */
    ab_lo = _mm512_unpacklo_epi8(v[0], v[1]);
    ab_hi = _mm512_unpackhi_epi8(v[0], v[1]);
    cd_lo = _mm512_unpacklo_epi8(v[2], v[3]);
    cd_hi = _mm512_unpackhi_epi8(v[2], v[3]);
    q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo); /* pixels 16L + 0..3 */
    q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo); /* 16L + 4..7 */
    q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi); /* 16L + 8..11 */
    q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi); /* 16L + 12..15 */
    t0 = _mm512_shuffle_i32x4(q0, q1, 0x44);
    t1 = _mm512_shuffle_i32x4(q2, q3, 0x44);
    t2 = _mm512_shuffle_i32x4(q0, q1, 0xEE);
    t3 = _mm512_shuffle_i32x4(q2, q3, 0xEE);
    v[0] = _mm512_shuffle_i32x4(t0, t1, 0x88); /* pixels 0..15 */
    v[1] = _mm512_shuffle_i32x4(t0, t1, 0xDD); /* 16..31 */
    v[2] = _mm512_shuffle_i32x4(t2, t3, 0x88); /* 32..47 */
    v[3] = _mm512_shuffle_i32x4(t2, t3, 0xDD); /* 48..63 */
    for (j = 0; j < 4; j++) {
      _mm512_store_si512((void *)(dst + 64 * j), v[j]);
      if (c->p->w_zp != 0)
        c->usum[j] = _mm512_dpbusd_epi32(c->usum[j], v[j], ones);
    }
  }
}

static inline uint32_t load_quad(const int8_t *w) {
  uint32_t v;
  memcpy(&v, w, 4);
  return v;
}

/* tile[i][0..63] (+)= Σ over the chunk's taps of w_rows[i]·xbuf for
 * i < mr; rows mr..MR−1 repeat a valid row and are not stored. nq quads,
 * of which the last holds only `tail` taps when tail ≠ 0 (its weights are
 * read byte by byte so that no load passes the end of the weights). */
static TARGET void micro_kernel(const uint8_t *xbuf, int32_t nq, int32_t tail,
                                const int8_t *const *wr, int32_t mr,
                                int first, int32_t *tile) {
  __m512i acc[MR][4];
  int32_t i, j, q;
  const int32_t nfull = tail ? nq - 1 : nq;
#pragma GCC unroll 6
  for (i = 0; i < MR; i++) {
#pragma GCC unroll 4
    for (j = 0; j < 4; j++)
      acc[i][j] = first || i >= mr ? _mm512_setzero_si512()
                                   : _mm512_load_si512(tile + i * LANES + 16 * j);
  }
  for (q = 0; q < nfull; q++) {
    const uint8_t *xq = xbuf + (size_t)q * 4 * LANES;
    const __m512i x0 = _mm512_load_si512(xq), x1 = _mm512_load_si512(xq + 64);
    const __m512i x2 = _mm512_load_si512(xq + 128), x3 = _mm512_load_si512(xq + 192);
#pragma GCC unroll 6
    for (i = 0; i < MR; i++) {
      const __m512i wv = _mm512_set1_epi32((int)load_quad(wr[i] + 4 * q));
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], x0, wv);
      acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], x1, wv);
      acc[i][2] = _mm512_dpbusd_epi32(acc[i][2], x2, wv);
      acc[i][3] = _mm512_dpbusd_epi32(acc[i][3], x3, wv);
    }
  }
  if (tail) {
    const uint8_t *xq = xbuf + (size_t)nfull * 4 * LANES;
#pragma GCC unroll 6
    for (i = 0; i < MR; i++) {
      uint32_t t = 0;
      __m512i wv;
      memcpy(&t, wr[i] + 4 * nfull, (size_t)tail);
      wv = _mm512_set1_epi32((int)t);
#pragma GCC unroll 4
      for (j = 0; j < 4; j++)
        acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], _mm512_load_si512(xq + 64 * j), wv);
    }
  }
#pragma GCC unroll 6
  for (i = 0; i < MR; i++) {
    if (i >= mr)
      break;
#pragma GCC unroll 4
    for (j = 0; j < 4; j++)
      _mm512_store_si512(tile + i * LANES + 16 * j, acc[i][j]);
  }
}

/* Σ w over one weight row of K taps. */
static TARGET int32_t row_sum(const int8_t *w, int32_t K) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i s = _mm512_setzero_si512();
  int32_t k;
  for (k = 0; k < K; k += 64) {
    const int32_t n = K - k < 64 ? K - k : 64;
    const __mmask64 m = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    s = _mm512_dpbusd_epi32(s, ones, _mm512_maskz_loadu_epi8(m, w + k));
  }
  return _mm512_reduce_add_epi32(s);
}

/* Requantizes the block's accumulators of output channels
 * [co0, co0 + cb) and stores the block's `lanes` outputs of each. */
static TARGET void requant_store(const vnni_conv *c, const tidsp_host_rq *q, int32_t co0,
                                 int32_t cb, const uint32_t *cconst, int32_t lanes,
                                 int8_t *y_block, size_t plane) {
  const tidsp_conv2d_params *p = c->p;
  const __m512 lo = _mm512_set1_ps(q->lo);
  const __m512 hi = _mm512_set1_ps(q->hi);
  const __m512i zp = _mm512_set1_epi32(q->zp);
  const __mmask64 store_mask =
      lanes == 64 ? ~(__mmask64)0 : (((__mmask64)1 << lanes) - 1);
  const int ss = tidsp_host_rq_is_ss(q);
  tidsp_host_ss16_consts k;
  __m512i corr[4];
  int32_t i, j;
  tidsp_host_ss16_init(&k, q); /* (for FLOAT too: a few zero vectors) */
  for (j = 0; j < 4; j++) /* −w_zp·Σu per pixel */
    corr[j] = _mm512_mullo_epi32(c->usum[j], _mm512_set1_epi32(-p->w_zp));
  for (i = 0; i < cb; i++) {
    const int32_t co = co0 + i;
    const __m512i cc = _mm512_set1_epi32((int)cconst[i]);
    __m128i out[4];
    if (ss) {
      tidsp_host_ss16_channel(&k, q, co);
      for (j = 0; j < 4; j++) {
        __m512i a = _mm512_load_si512(c->tile + i * LANES + 16 * j);
        out[j] = tidsp_host_ss16(_mm512_add_epi32(_mm512_add_epi32(a, cc), corr[j]), &k);
      }
    } else {
      const __m512 m = _mm512_set1_ps(tidsp_host_rq_mult(q, co));
      for (j = 0; j < 4; j++) {
        __m512i a = _mm512_load_si512(c->tile + i * LANES + 16 * j);
        __m512 v;
        a = _mm512_add_epi32(_mm512_add_epi32(a, cc), corr[j]);
        v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), m);
        v = _mm512_max_ps(v, lo); /* v > lo ? v : lo (NaN → lo) */
        v = _mm512_min_ps(v, hi); /* v < hi ? v : hi */
        a = _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
        out[j] = _mm512_cvtsepi32_epi8(a);
      }
    }
    {
      __m512i o = _mm512_castsi128_si512(out[0]);
      o = _mm512_inserti32x4(o, out[1], 1);
      o = _mm512_inserti32x4(o, out[2], 2);
      o = _mm512_inserti32x4(o, out[3], 3);
      _mm512_mask_storeu_epi8(y_block + (size_t)co * plane, store_mask, o);
    }
  }
}

static TARGET void conv_fast(const tidsp_conv2d_params *p, const int8_t *x,
                             const int8_t *w, const int32_t *bias,
                             const tidsp_host_rq *q, int8_t *y) {
  uint8_t xbuf[KC * LANES] __attribute__((aligned(64)));
  int32_t tile[COB * LANES] __attribute__((aligned(64)));
  uint32_t cconst[COB];
  __m512i usum[4];
  vnni_conv c;
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  const uint32_t u_zp = (uint32_t)(p->x_zp + 128);
  int32_t n, g, cb0, k0, i0, i;
  tidsp_host_block b;

  c.p = p;
  c.cpg_in = p->c_in / p->groups;
  c.cpg_out = p->c_out / p->groups;
  c.K = c.cpg_in * p->k_h * p->k_w;
  c.w_stride = tidsp_host_conv_w_stride(p);
  c.xbuf = xbuf;
  c.tile = tile;
  c.usum = usum;
  for (n = 0; n < p->n; n++) {
    for (g = 0; g < p->groups; g++) {
      const int8_t *x_g = x + ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)c.cpg_in) * in_plane;
      const int32_t co_g = g * c.cpg_out;
      tidsp_host_block_first(&b, p->h_out, p->w_out, LANES);
      do {
        const int32_t lanes = b.rows * b.cols;
        const size_t flat0 = (size_t)b.oh0 * (size_t)p->w_out + (size_t)b.ow0;
        int8_t *y_block = y + (size_t)n * (size_t)p->c_out * out_plane + flat0;
        int packed = 0; /* xbuf holds the whole reduction (one chunk) */
        for (cb0 = 0; cb0 < c.cpg_out; cb0 += COB) {
          const int32_t cb = c.cpg_out - cb0 < COB ? c.cpg_out - cb0 : COB;
          for (i = 0; i < cb; i++) {
            const int32_t co = co_g + cb0 + i;
            const uint32_t bv = bias ? (uint32_t)bias[co] : 0u;
            const uint32_t sw = (uint32_t)row_sum(w + (size_t)co * c.w_stride, c.K);
            cconst[i] = bv - u_zp * sw + (uint32_t)c.K * u_zp * (uint32_t)p->w_zp;
          }
          for (k0 = 0; k0 < c.K; k0 += KC) {
            const int32_t kc = c.K - k0 < KC ? c.K - k0 : KC;
            if (!packed) {
              if (k0 == 0) {
                for (i = 0; i < 4; i++)
                  usum[i] = _mm512_setzero_si512();
              }
              pack_chunk(&c, x_g, &b, k0, kc);
              packed = kc == c.K;
            }
            for (i0 = 0; i0 < cb; i0 += MR) {
              const int32_t mr = cb - i0 < MR ? cb - i0 : MR;
              const int8_t *wr[MR];
              for (i = 0; i < MR; i++) {
                const int32_t co = co_g + cb0 + i0 + (i < mr ? i : mr - 1);
                wr[i] = w + (size_t)co * c.w_stride + k0;
              }
              micro_kernel(xbuf, (kc + 3) / 4, kc % 4, wr, mr, k0 == 0,
                           tile + (size_t)i0 * LANES);
            }
          }
          requant_store(&c, q, co_g + cb0, cb, cconst, lanes, y_block, out_plane);
        }
      } while (tidsp_host_block_next(&b, p->h_out, p->w_out, LANES));
    }
  }
}

int32_t tidsp_conv2d_i8__host_avx512vnni(const tidsp_conv2d_params *p,
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
