/*
 * conv2d_i8__host_avx512vnni.c — tidsp_conv2d_i8 with AVX-512 VNNI
 * (vpdpbusd: 16 lanes × 4 u8·s8 products per instruction).
 *
 * The convolution is a matrix product per group, out[co][pixel] =
 * Σ_k w[co][k]·x_col[k][pixel] over k = (ci, kh, kw) in OIHW order, so a
 * weight row is read as stored (row co at w + co·w_row_stride, dense when
 * 0; only its first K bytes are read). A block is 64 consecutive pixels of
 * the flat output plane, running across row ends so that every block but
 * the plane's last fills its lanes whatever w_out is (a last block of at
 * most 48 pixels runs 1-3 vectors wide). For each chunk of the reduction
 * (at most KC taps, chunks of equal length) the block's input columns are
 * gathered ("im2col") into a stack buffer laid out
 *   xbuf[k/4][64 pixels][k%4]            (u8, 256 bytes per quad of taps)
 * so that one vpdpbusd multiplies 16 pixels × 4 taps by a broadcast quad of
 * weights; the micro-kernel keeps 6 output channels × 64 pixels in 24 zmm
 * accumulators (4 or 2 channels for a group's last ones).
 *
 * The gather (the cost that the weights do not amortize: per pixel and
 * tap, against 64 MACs per output channel) is a list per block: for each
 * kernel tap (kh, kw), the block rows that have input, each as one masked
 * load of the row's lanes (stride 1) or two masked loads of even bytes
 * narrowed by vpmovwb (stride 2); a 1×1 stride-1 conv without padding
 * reads its input plane directly. Other strides, and blocks with more
 * than NLD loads, go byte by byte.
 *
 * vpdpbusd wants unsigned activations: u = x + 128 (pads read
 * u_zp = x_zp + 128), and the zero points come back in as
 *   Σ (x − x_zp)(w − w_zp) = Σ u·w − u_zp·Σw − w_zp·Σu + K·u_zp·w_zp
 * with Σw per output channel (summed from its weight row once per group
 * when at most CCMAX channels, else per block) and Σu per pixel (only when
 * w_zp ≠ 0). The channel's constant terms and the bias start its
 * accumulators. Every term is taken modulo 2³² (vpdpbusd and vpaddd
 * wrap), and the exact sum fits int32 (K ≤ 33025), so the accumulator
 * equals the reference's bit for bit; the bias is added modulo 2³² like
 * ORT's. Requantization is the FLOAT formula with the same float
 * operations, or SCALE_SHIFT (rq_internal.h), applied to the registers
 * after the reduction's last chunk; earlier chunks keep their sums in a
 * tile of COB channels. A FLOAT channel whose multiplier has |m| < 1 takes
 * an int16 epilogue with the same results (rq_pack: the float clamp
 * replaced by saturating packs and an int16 clamp).
 *
 * Stack: xbuf KC·64 (48 KiB) + tile COB·64·4 (64 KiB) + the block's load
 * list NLD·32 (16 KiB) + channel constants, about 135 KiB. Q31 takes the
 * FLOAT epilogue (rq_internal.h; not the int16 one, which reads the FLOAT
 * table); inputs the reference rejects go to tidsp_conv2d_i8__ref.
 *
 * The band path (conv_band, below conv_fast) skips the gather for k×k
 * stride-1 convs with input channels in quads and w_zp = 0 where its wider
 * output grid costs less than the gather (band_plan): the input is
 * interleaved once per band of rows into quads of 4 channels and every
 * tap of a block is one contiguous run (see its comment). Stack: band
 * 64 KiB + reordered weights 48 KiB + a row 8 KiB, about 125 KiB; the two
 * paths are separate (noinline) frames.
 *
 * The phase path (conv_phase) takes stride-2 convs with at most 4 input
 * channels per group (the 7×7/s2 and 3×3/s2 stems): the input is split
 * once per band into its 2 × 2 stride phases, so that each tap of a block
 * is one unmasked load; the blocks then run as conv_fast's. Stack: grid
 * 64 KiB + xbuf 48 KiB + a row 4 KiB, a separate frame.
 *
 * Weights the compiler packed O16 (params w_layout, kernels.h: maps up to
 * 56², compiler/passes/pack_weights.c) take the channels-in-lanes path
 * (conv_cl, at the end): output channels across the lanes, pixels
 * broadcast, no gather and no weight reordering at inference; so do OIHW
 * 1×1 convs on small maps, their weights reordered per call. Stack: the
 * input grid 64 KiB + the step offsets 33 KiB + the reordered 1×1 weights
 * 64 KiB, a separate frame too.
 */
#include <string.h>

#include "rq_internal.h"
#include "zmm_transpose.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

enum {
  LANES = 64, /* output pixels per block: 4 zmm of 16 */
  MR = 6,     /* output channels per micro-kernel call (at most) */
  KC = 768,   /* taps per chunk at most (a multiple of 4): xbuf 48 KiB */
  COB = 256,  /* output channels whose accumulators are kept per block */
  CCMAX = 1024, /* output channels per group whose constants are kept per call */
  KTMAX = 49,   /* kernel taps (k_h·k_w) whose block loads are listed */
  NLD = 512     /* block loads listed at most (vnni_piece) */
};

/* One output row's piece of a block: lanes [lane0, lane0 + n) are outputs
 * (oh, ow0 .. ow0 + n − 1). */
typedef struct vnni_seg {
  int32_t oh, lane0, ow0, n;
} vnni_seg;

/* The load of one block row's lanes for one tap (kh, kw) of every input
 * channel: lane L ∈ m reads input byte x_ci + off + stride_w·L. At stride
 * 2, ma / mb select the even bytes of the two 64-byte loads at that
 * address (lanes 0..31 and 32..63). */
typedef struct vnni_piece {
  int64_t off;
  uint64_t m, ma, mb;
} vnni_piece;

typedef struct vnni_conv {
  const tidsp_conv2d_params *p;
  int32_t cpg_in, cpg_out, K;
  size_t w_stride; /* bytes between weight rows (w_row_stride or K) */
  size_t in_plane;
  int contig;      /* 1×1, stride 1, no padding, w_in = w_out, h_out ≤ h_in:
                      output pixel f reads input pixel f of every channel */
  int listable;    /* stride_w ≤ 2 and k_h·k_w ≤ KTMAX */
  int listed;      /* the block's loads are in ld: listable, and
                      k_h·k_w·nseg ≤ NLD */
  size_t f0;       /* the block: flat output pixels [f0, f0 + lanes) */
  int32_t lanes, nseg;
  vnni_seg seg[LANES]; /* the block's rows (not used when contig) */
  /* tap t = kh·k_w + kw reads rows ld[t·nseg .. t·nseg + nld[t]) (the
   * rows where it has input: the loads need no test) */
  uint8_t nld[KTMAX];
  vnni_piece ld[NLD];
  uint8_t *xbuf;   /* [KC/4][LANES][4] */
  int32_t *tile;   /* [COB][LANES] accumulators */
  __m512i *usum;   /* [4] Σu per pixel, when w_zp ≠ 0 */
} vnni_conv;

/* Bits [a, b) of a lane mask (0 ≤ a ≤ b ≤ 64). */
static inline __mmask64 lane_bits(int32_t a, int32_t b) {
  const uint64_t hi = b >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << b) - 1);
  const uint64_t lo = a >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << a) - 1);
  return (__mmask64)(hi & ~lo);
}

/* The vnni_piece of block row sg for kernel column kw (stride_w 1 or 2). */
static vnni_piece make_piece(const tidsp_conv2d_params *p, const vnni_seg *sg,
                             int32_t kw) {
  const int64_t coff = (int64_t)kw * p->dil_w - p->pad_left;
  const uint64_t even = 0x5555555555555555ull;
  vnni_piece pc = {0, 0, 0, 0};
  int32_t clo, chi, lo, hi, l0, l1;
  tidsp_ref_valid_range(coff, p->stride_w, p->w_in, p->w_out, &clo, &chi);
  lo = sg->ow0 > clo ? sg->ow0 : clo;
  hi = sg->ow0 + sg->n < chi ? sg->ow0 + sg->n : chi;
  if (lo >= hi)
    return pc;
  l0 = sg->lane0 + lo - sg->ow0; /* lanes [l0, l1) are outputs [lo, hi) */
  l1 = l0 + hi - lo;
  /* lane L reads src_row[stride·(L − l0 + lo) + coff] */
  pc.off = (int64_t)p->stride_w * (lo - l0) + coff;
  pc.m = lane_bits(l0, l1);
  pc.ma = lane_bits(2 * (l0 < 32 ? l0 : 32), 2 * (l1 < 32 ? l1 : 32)) & even;
  pc.mb = lane_bits(2 * (l0 > 32 ? l0 - 32 : 0), 2 * (l1 > 32 ? l1 - 32 : 0)) & even;
  return pc;
}

/* Splits the block of flat output pixels [f0, f0 + lanes) into its output
 * rows. Blocks run across row ends, so every block but the plane's last
 * fills all 64 lanes whatever w_out is. */
static void block_rows(vnni_conv *c, size_t f0, int32_t lanes) {
  const tidsp_conv2d_params *p = c->p;
  const int32_t w_out = p->w_out;
  int32_t oh = (int32_t)(f0 / (size_t)w_out), ow = (int32_t)(f0 % (size_t)w_out);
  int32_t lane = 0;
  c->f0 = f0;
  c->lanes = lanes;
  c->nseg = 0;
  if (c->contig)
    return;
  while (lane < lanes) {
    const int32_t n = w_out - ow < lanes - lane ? w_out - ow : lanes - lane;
    vnni_seg *sg = &c->seg[c->nseg++];
    sg->oh = oh;
    sg->lane0 = lane;
    sg->ow0 = ow;
    sg->n = n;
    lane += n;
    oh++;
    ow = 0;
  }
  c->listed = c->listable && p->k_h * p->k_w * c->nseg <= NLD;
  if (c->listed) {
    int32_t kw, kh, sg;
    for (kw = 0; kw < p->k_w; kw++) {
      for (sg = 0; sg < c->nseg; sg++) {
        const vnni_piece pc = make_piece(p, &c->seg[sg], kw);
        for (kh = 0; kh < p->k_h; kh++) {
          const int32_t t = kh * p->k_w + kw;
          const int64_t ih = (int64_t)c->seg[sg].oh * p->stride_h + (int64_t)kh * p->dil_h - p->pad_top;
          vnni_piece *e;
          if (sg == 0)
            c->nld[t] = 0;
          if (pc.m == 0 || ih < 0 || ih >= p->h_in)
            continue;
          e = &c->ld[t * c->nseg + c->nld[t]++];
          *e = pc;
          e->off += ih * p->w_in;
        }
      }
    }
  }
}

/* gather_taps at strides above 2, byte by byte into a row buffer. */
static __attribute__((noinline)) TARGET __m512i gather_strided(const vnni_conv *c,
                                                              const int8_t *x_ci, int32_t kh,
                                                              int64_t coff, int32_t clo,
                                                              int32_t chi) {
  const tidsp_conv2d_params *p = c->p;
  int8_t row[LANES] __attribute__((aligned(64)));
  int32_t s;
  memset(row, p->x_zp, sizeof(row));
  for (s = 0; s < c->nseg; s++) {
    const vnni_seg *sg = &c->seg[s];
    const int64_t ih = (int64_t)sg->oh * p->stride_h + (int64_t)kh * p->dil_h - p->pad_top;
    const int32_t lo = sg->ow0 > clo ? sg->ow0 : clo;
    const int32_t hi = sg->ow0 + sg->n < chi ? sg->ow0 + sg->n : chi;
    const int8_t *src = x_ci + (size_t)ih * (size_t)p->w_in;
    int32_t ow;
    if (ih < 0 || ih >= p->h_in)
      continue;
    for (ow = lo; ow < hi; ow++)
      row[sg->lane0 + ow - sg->ow0] = src[(int64_t)ow * p->stride_w + coff];
  }
  return _mm512_load_si512(row);
}

/* v with the lanes of listed load e at stride 2: two masked loads of the
 * even bytes (as words: lane j ← byte 2j) narrowed by vpmovwb. */
static inline __attribute__((always_inline)) TARGET __m512i
gather_even(__m512i v, const vnni_piece *e, const int8_t *x_ci) {
  const uintptr_t src = (uintptr_t)x_ci + (uintptr_t)e->off;
  const __m512i a = _mm512_maskz_loadu_epi8((__mmask64)e->ma, (const void *)src);
  const __m512i b = _mm512_maskz_loadu_epi8((__mmask64)e->mb, (const void *)(src + 64));
  const __m512i t = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(a)),
                                       _mm512_cvtepi16_epi8(b), 1);
  return _mm512_mask_mov_epi8(v, (__mmask64)e->m, t);
}

/* The 64 input values that tap (ci, kh, kw) reads for the block's lanes,
 * x_zp in the padding and past the block (as tidsp_host_conv_gather).
 * Each output row of the block is one masked load at stride 1 (the mask
 * keeps it inside the input row; masked-out bytes are never accessed). At
 * stride 2 it is two masked loads of the even bytes (as words: lane j ←
 * byte 2j) narrowed by vpmovwb. Other strides and wide kernels go byte by
 * byte (gather_strided). */
static inline __attribute__((always_inline)) TARGET __m512i
gather_taps(const vnni_conv *c, const int8_t *x_g, int32_t ci, int32_t kh, int32_t kw) {
  const tidsp_conv2d_params *p = c->p;
  const int8_t *x_ci = x_g + (size_t)ci * c->in_plane;
  __m512i v = _mm512_set1_epi8((char)p->x_zp);
  if (c->contig)
    return _mm512_mask_loadu_epi8(v, lane_bits(0, c->lanes), x_ci + c->f0);
  if (c->listed) {
    const int32_t t = kh * p->k_w + kw;
    const vnni_piece *e = &c->ld[t * c->nseg];
    const int32_t n = c->nld[t];
    int32_t j;
    if (p->stride_w == 1) {
      for (j = 0; j < n; j++)
        v = _mm512_mask_loadu_epi8(v, (__mmask64)e[j].m, (const void *)((uintptr_t)x_ci + (uintptr_t)e[j].off));
    } else {
      for (j = 0; j < n; j++)
        v = gather_even(v, &e[j], x_ci);
    }
    return v;
  } else {
    int32_t clo, chi;
    const int64_t coff = (int64_t)kw * p->dil_w - p->pad_left;
    tidsp_ref_valid_range(coff, p->stride_w, p->w_in, p->w_out, &clo, &chi);
    return clo < chi ? gather_strided(c, x_ci, kh, coff, clo, chi) : v;
  }
}

/* One quad of taps (four vectors of 64 pixels, u8) interleaved into xbuf's
 * order at dst (see pack_chunk; natural: a block of fewer than 4 vectors);
 * Σu per pixel added to usum when w_zp ≠ 0. Straight-line code for the
 * packers' hot loops (an array of four vectors written under per-tap
 * tests went through the stack). */
static inline __attribute__((always_inline)) TARGET void
ph_quad(__m512i a, __m512i b, __m512i c, __m512i d, int natural, int w_zp, uint8_t *dst,
        __m512i *usum) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
  const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
  __m512i v0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), v1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
  __m512i v2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), v3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
  if (natural) {
    const __m512i t0 = _mm512_shuffle_i32x4(v0, v1, 0x44);
    const __m512i t1 = _mm512_shuffle_i32x4(v2, v3, 0x44);
    const __m512i t2 = _mm512_shuffle_i32x4(v0, v1, 0xEE);
    const __m512i t3 = _mm512_shuffle_i32x4(v2, v3, 0xEE);
    v0 = _mm512_shuffle_i32x4(t0, t1, 0x88);
    v1 = _mm512_shuffle_i32x4(t0, t1, 0xDD);
    v2 = _mm512_shuffle_i32x4(t2, t3, 0x88);
    v3 = _mm512_shuffle_i32x4(t2, t3, 0xDD);
  }
  _mm512_store_si512((void *)dst, v0);
  _mm512_store_si512((void *)(dst + 64), v1);
  _mm512_store_si512((void *)(dst + 128), v2);
  _mm512_store_si512((void *)(dst + 192), v3);
  if (w_zp) {
    usum[0] = _mm512_dpbusd_epi32(usum[0], v0, ones);
    usum[1] = _mm512_dpbusd_epi32(usum[1], v1, ones);
    usum[2] = _mm512_dpbusd_epi32(usum[2], v2, ones);
    usum[3] = _mm512_dpbusd_epi32(usum[3], v3, ones);
  }
}

/* pack_chunk of a contiguous 1×1 conv (taps are input channels, read
 * straight from the planes at f0). */
static inline __attribute__((always_inline)) TARGET void
pack_contig_body(const vnni_conv *c, const int8_t *x_ci, int32_t kc, int natural, int w_zp) {
  const __m512i bias8 = _mm512_set1_epi8((char)0x80);
  const __m512i zp8 = _mm512_set1_epi8((char)c->p->x_zp);
  const __m512i zero = _mm512_setzero_si512();
  const __mmask64 lanes = lane_bits(0, c->lanes);
  const size_t pl = c->in_plane;
  const int32_t nfull = kc / 4, tail = kc % 4;
  const int8_t *src = x_ci + c->f0;
  int32_t q;
#define CONTIG_TAP(i) _mm512_xor_si512(_mm512_mask_loadu_epi8(zp8, lanes, src + (i) * pl), bias8)
  for (q = 0; q < nfull; q++) {
    ph_quad(CONTIG_TAP(0), CONTIG_TAP(1), CONTIG_TAP(2), CONTIG_TAP(3), natural, w_zp,
            c->xbuf + (size_t)q * 4 * LANES, c->usum);
    src += 4 * pl;
  }
  if (tail)
    ph_quad(CONTIG_TAP(0), tail > 1 ? CONTIG_TAP(1) : zero, tail > 2 ? CONTIG_TAP(2) : zero, zero,
            natural, w_zp, c->xbuf + (size_t)nfull * 4 * LANES, c->usum);
#undef CONTIG_TAP
}

/* Gathers taps [k0, k0 + kc) of the block into c->xbuf as u = x + 128;
 * taps past K read u = 0. Adds Σu per pixel to usum when w_zp ≠ 0.
 * natural: vector j of a quad holds pixels 16j .. 16j + 15 (a last block
 * of at most 48 pixels, whose micro-kernel reads only its first vectors);
 * else the unpacks' order below. */
static TARGET void pack_chunk(vnni_conv *c, const int8_t *x_g, int32_t k0,
                              int32_t kc, int natural) {
  const __m512i bias8 = _mm512_set1_epi8((char)0x80);
  const __m512i ones = _mm512_set1_epi8(1);
  const int32_t nq = (kc + 3) / 4;
  const int32_t ksz = c->p->k_h * c->p->k_w;
  /* tap k0 + 4q + j = (ci, kh, kw), stepped without divisions */
  int32_t ci = k0 / ksz, kh = k0 % ksz / c->p->k_w, kw = k0 % c->p->k_w;
  /* the listed loads' fields in locals: the stores to xbuf below may
   * alias anything, so fields read through c would be read again per tap */
  const int listed = c->listed && !c->contig, contig = c->contig;
  const __mmask64 lanes = lane_bits(0, c->lanes);
  const size_t f0 = c->f0;
  const int32_t K = c->K, nseg = c->nseg, s2 = c->p->stride_w == 2;
  const vnni_piece *ld = c->ld;
  const uint8_t *nld = c->nld;
  const size_t in_plane = c->in_plane;
  const __m512i zp8 = _mm512_set1_epi8((char)c->p->x_zp);
  const int w_zp = c->p->w_zp != 0;
  int32_t t = k0 % ksz;
  const int8_t *x_ci = x_g + (size_t)ci * in_plane;
  int32_t q, j;
  if (contig) { /* (k0 is a multiple of 4: ci = k0) */
    if (natural)
      pack_contig_body(c, x_ci, kc, 1, w_zp);
    else if (w_zp)
      pack_contig_body(c, x_ci, kc, 0, 1);
    else
      pack_contig_body(c, x_ci, kc, 0, 0);
    return;
  }
  for (q = 0; q < nq; q++) {
    __m512i v[4], ab_lo, ab_hi, cd_lo, cd_hi;
    uint8_t *dst = c->xbuf + (size_t)q * 4 * LANES;
    for (j = 0; j < 4; j++) {
      const int32_t k = k0 + 4 * q + j;
      if (k >= K) {
        v[j] = _mm512_setzero_si512();
      } else if (contig) { /* taps are input channels */
        v[j] = _mm512_xor_si512(_mm512_mask_loadu_epi8(zp8, lanes, x_ci + f0), bias8);
        x_ci += in_plane;
      } else if (listed) {
        const vnni_piece *e = ld + t * nseg;
        const int32_t n = nld[t];
        __m512i g = zp8;
        int32_t i;
        if (!s2) {
          for (i = 0; i < n; i++)
            g = _mm512_mask_loadu_epi8(g, (__mmask64)e[i].m, (const void *)((uintptr_t)x_ci + (uintptr_t)e[i].off));
        } else {
          for (i = 0; i < n; i++)
            g = gather_even(g, &e[i], x_ci);
        }
        v[j] = _mm512_xor_si512(g, bias8);
        if (++t == ksz) {
          t = 0;
          x_ci += in_plane;
        }
      } else {
        v[j] = _mm512_xor_si512(gather_taps(c, x_g, ci, kh, kw), bias8);
        tidsp_host_next_tap(c->p, &ci, &kh, &kw);
      }
    }
    /* 4 rows of 64 bytes → 64 quads: byte and word unpacks interleave
     * within 128-bit lanes, so dword 4L + t of vector j (L the 128-bit
     * lane) is pixel 16L + 4j + t. The pixels stay in that order in xbuf
     * and the accumulators; rq_row's packs, which also work per 128-bit
     * lane, put them back in order for free. */
    ab_lo = _mm512_unpacklo_epi8(v[0], v[1]);
    ab_hi = _mm512_unpackhi_epi8(v[0], v[1]);
    cd_lo = _mm512_unpacklo_epi8(v[2], v[3]);
    cd_hi = _mm512_unpackhi_epi8(v[2], v[3]);
    v[0] = _mm512_unpacklo_epi16(ab_lo, cd_lo); /* pixels 16L + 0..3 */
    v[1] = _mm512_unpackhi_epi16(ab_lo, cd_lo); /* 16L + 4..7 */
    v[2] = _mm512_unpacklo_epi16(ab_hi, cd_hi); /* 16L + 8..11 */
    v[3] = _mm512_unpackhi_epi16(ab_hi, cd_hi); /* 16L + 12..15 */
    if (natural) { /* pixels 16j .. 16j + 15 in vector j */
      const __m512i t0 = _mm512_shuffle_i32x4(v[0], v[1], 0x44);
      const __m512i t1 = _mm512_shuffle_i32x4(v[2], v[3], 0x44);
      const __m512i t2 = _mm512_shuffle_i32x4(v[0], v[1], 0xEE);
      const __m512i t3 = _mm512_shuffle_i32x4(v[2], v[3], 0xEE);
      v[0] = _mm512_shuffle_i32x4(t0, t1, 0x88);
      v[1] = _mm512_shuffle_i32x4(t0, t1, 0xDD);
      v[2] = _mm512_shuffle_i32x4(t2, t3, 0x88);
      v[3] = _mm512_shuffle_i32x4(t2, t3, 0xDD);
    }
    for (j = 0; j < 4; j++) {
      _mm512_store_si512((void *)(dst + 64 * j), v[j]);
      if (w_zp)
        c->usum[j] = _mm512_dpbusd_epi32(c->usum[j], v[j], ones);
    }
  }
}

static inline uint32_t load_quad(const int8_t *w) {
  uint32_t v;
  memcpy(&v, w, 4);
  return v;
}

/* One output row's piece of a band block: lanes m are stored at
 * y_channel + off + lane. */
typedef struct band_seg {
  intptr_t off;
  __mmask64 m;
} band_seg;

/* The requantization of one block's outputs (set up once per block,
 * after its reduction was packed: corr needs Σu). */
typedef struct vnni_rq {
  const tidsp_host_rq *q;
  int ss;
  __m512 lo, hi;
  __m512i zp;
  __m512i corr[4]; /* −w_zp·Σu per pixel */
  int has_corr;     /* w_zp ≠ 0 */
  __mmask64 store_mask;
  int8_t *y_block; /* output pixel f0 of channel 0 */
  size_t plane;
  /* nseg > 0 (the phase path): the lanes go through these segments
   * instead, at y_block + co·plane + seg.off + lane */
  const band_seg *seg;
  int32_t nseg;
  /* FLOAT with out_zp and [out_min, out_max] in int8, and every
   * channel's multiplier m with |m| < 1: rq_pack's int16 epilogue (set
   * once per call by rq_init16; rq_init leaves these fields alone) */
  int i16, clamp16; /* clamp16: [out_min, out_max] narrower than int8 */
  __m512i zp16, lo16, hi16;
  tidsp_host_ss16_consts k;
} vnni_rq;

/* The int16 epilogue's fields of r (rq_pack), once per call: the c_out
 * multipliers are scanned here rather than tested per channel and block
 * (the tests and branches cost as much as the float clamp they spare on
 * a 1×1 conv with K = 16). */
static TARGET void rq_init16(vnni_rq *r, const tidsp_host_rq *q, int32_t c_out) {
  const int32_t n = q->per_channel ? c_out : 1;
  int32_t c;
  /* FLOAT only: the int16 path reads q->mult directly (Q31 has no table) */
  r->i16 = q->kind == TIDSP_REQUANT_FLOAT && q->zp >= -128 && q->zp <= 127 && q->out_min >= -128 &&
           q->out_max <= 127;
  for (c = 0; c < n && r->i16; c++)
    r->i16 = q->mult[c] < 1.0f && q->mult[c] > -1.0f; /* (NaN: not) */
  r->clamp16 = q->out_min != -128 || q->out_max != 127;
  r->zp16 = _mm512_set1_epi16((short)q->zp);
  r->lo16 = _mm512_set1_epi16((short)q->out_min);
  r->hi16 = _mm512_set1_epi16((short)q->out_max);
}

static TARGET void rq_init(vnni_rq *r, const vnni_conv *c, const tidsp_host_rq *q,
                           int8_t *y_block, size_t plane) {
  int32_t j;
  r->q = q;
  r->ss = tidsp_host_rq_is_ss(q);
  r->lo = _mm512_set1_ps(q->lo);
  r->hi = _mm512_set1_ps(q->hi);
  r->zp = _mm512_set1_epi32(q->zp);
  for (j = 0; j < 4; j++)
    r->corr[j] = _mm512_mullo_epi32(c->usum[j], _mm512_set1_epi32(-c->p->w_zp));
  r->has_corr = c->p->w_zp != 0;
  r->store_mask = lane_bits(0, c->lanes);
  r->y_block = y_block;
  r->plane = plane;
  r->seg = NULL;
  r->nseg = 0;
  tidsp_host_ss16_init(&r->k, q); /* (for FLOAT too: a few zero vectors) */
}

/* Requantizes output channel co's accumulators (which started from the
 * channel's constant; the −w_zp·Σu term is added here) into the block's
 * 64 int8 results in pixel order. natural: vector j holds pixels
 * 16j .. 16j + 15 (else pack_chunk's unpack order). */
static inline __attribute__((always_inline)) TARGET __m512i
rq_pack(const vnni_rq *r, tidsp_host_ss16_consts *k, int32_t co, const __m512i acc[4],
        int32_t nz, int natural) {
  const __m512i zero = _mm512_setzero_si512();
  __m512i out[4]; /* int32 results, each within [out_min, out_max] */
  __m512i o;
  int32_t j;
  for (j = nz; j < 4; j++)
    out[j] = zero;
  if (r->ss) {
    tidsp_host_ss16_channel(k, r->q, co);
#pragma GCC unroll 4
    for (j = 0; j < nz; j++)
      out[j] = tidsp_host_ss16_i32(r->has_corr ? _mm512_add_epi32(acc[j], r->corr[j]) : acc[j], k);
  } else if (r->i16) {
    /* |m| < 1 (not NaN): |acc·m| < 2³¹, so vcvtps2dq rounds it exactly as
     * the clamped value would be (the clamp bounds are integers: rounding
     * and clamping commute); the clamp then runs on int16 after a
     * saturating pack and + out_zp, which saturate only values beyond the
     * bounds anyway: two vectors of 32 instead of four of 16, and no
     * float max/min */
    const __m512 m = _mm512_set1_ps(tidsp_host_rq_mult(r->q, co));
    __m512i h0, h1;
#pragma GCC unroll 4
    for (j = 0; j < nz; j++) {
      const __m512i a = r->has_corr ? _mm512_add_epi32(acc[j], r->corr[j]) : acc[j];
      out[j] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(a), m));
    }
    h0 = _mm512_adds_epi16(_mm512_packs_epi32(out[0], out[1]), r->zp16);
    h1 = _mm512_adds_epi16(_mm512_packs_epi32(out[2], out[3]), r->zp16);
    if (r->clamp16) {
      h0 = _mm512_min_epi16(_mm512_max_epi16(h0, r->lo16), r->hi16);
      h1 = _mm512_min_epi16(_mm512_max_epi16(h1, r->lo16), r->hi16);
    }
    o = _mm512_packs_epi16(h0, h1);
    if (natural)
      o = _mm512_permutexvar_epi32(
          _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), o);
    return o;
  } else {
    const __m512 m = _mm512_set1_ps(tidsp_host_rq_mult(r->q, co));
#pragma GCC unroll 4
    for (j = 0; j < nz; j++) {
      const __m512i a = r->has_corr ? _mm512_add_epi32(acc[j], r->corr[j]) : acc[j];
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), m);
      v = _mm512_max_ps(v, r->lo); /* v > lo ? v : lo (NaN → lo) */
      v = _mm512_min_ps(v, r->hi); /* v < hi ? v : hi */
      out[j] = _mm512_add_epi32(_mm512_cvtps_epi32(v), r->zp);
    }
  }
  /* int8 already: the saturating packs only narrow. Per 128-bit lane L
   * they put out[j]'s dwords 4L..4L+3 at bytes 16L + 4j ..: in pack_chunk's
   * order those are pixels 16L + 4j .., the pixels' own order; in the
   * natural one pixels 16j + 4L .., which the dword permutation puts in
   * order. */
  o = _mm512_packs_epi16(_mm512_packs_epi32(out[0], out[1]),
                         _mm512_packs_epi32(out[2], out[3]));
  if (natural)
    o = _mm512_permutexvar_epi32(
        _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), o);
  return o;
}

/* rq_pack, stored to the block's lanes of channel co (pack_chunk's order
 * for a full block, natural for a last one of fewer vectors). */
static inline __attribute__((always_inline)) TARGET void
rq_row(vnni_rq *r, int32_t co, const __m512i acc[4], int32_t nz) {
  const __m512i o = rq_pack(r, &r->k, co, acc, nz, nz < 4);
  int8_t *y_ch = r->y_block + (size_t)co * r->plane;
  int32_t s;
  if (r->nseg == 0) {
    _mm512_mask_storeu_epi8(y_ch, r->store_mask, o);
    return;
  }
  for (s = 0; s < r->nseg; s++)
    _mm512_mask_storeu_epi8((void *)((uintptr_t)y_ch + (uintptr_t)r->seg[s].off), r->seg[s].m, o);
}

/* tile[i][0..63] (+)= Σ over the chunk's taps of w_rows[i]·xbuf for
 * i < mr ≤ mr_max; rows mr..mr_max−1 repeat a valid row and are not
 * stored. nq quads, of which the last holds only `tail` taps when tail ≠ 0
 * (its weights are read byte by byte so that no load passes the end of
 * the weights). mr_max is a constant in each caller below (6, 4 or 2
 * rows: 4·mr_max accumulators), so that a last call of a few channels
 * does not compute six. */
static inline __attribute__((always_inline)) TARGET void
micro_body(const uint8_t *xbuf, int32_t nq, int32_t tail, const int8_t *const *wr,
           int32_t mr, int32_t mr_max, int32_t nz, int first, int32_t *tile,
           vnni_rq *r, int32_t co0, const uint32_t *cconst) {
  __m512i acc[MR][4];
  int32_t i, j, q;
  const int32_t nfull = tail ? nq - 1 : nq;
#pragma GCC unroll 6
  for (i = 0; i < mr_max; i++) {
#pragma GCC unroll 4
    for (j = 0; j < nz; j++)
      acc[i][j] = i >= mr  ? _mm512_setzero_si512()
                  : first ? _mm512_set1_epi32((int)cconst[i]) /* the constant, once */
                          : _mm512_load_si512(tile + i * LANES + 16 * j);
  }
  for (q = 0; q < nfull; q++) {
    const uint8_t *xq = xbuf + (size_t)q * 4 * LANES;
    __m512i xv[4];
#pragma GCC unroll 4
    for (j = 0; j < nz; j++)
      xv[j] = _mm512_load_si512(xq + 64 * j);
#pragma GCC unroll 6
    for (i = 0; i < mr_max; i++) {
      const __m512i wv = _mm512_set1_epi32((int)load_quad(wr[i] + 4 * q));
#pragma GCC unroll 4
      for (j = 0; j < nz; j++)
        acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], xv[j], wv);
    }
  }
  if (tail) {
    const uint8_t *xq = xbuf + (size_t)nfull * 4 * LANES;
    const __mmask64 tm = lane_bits(0, tail);
#pragma GCC unroll 6
    for (i = 0; i < mr_max; i++) {
      /* a masked load: nothing past the tail's bytes is read */
      const __m512i wv = _mm512_broadcastd_epi32(
          _mm512_castsi512_si128(_mm512_maskz_loadu_epi8(tm, wr[i] + 4 * nfull)));
#pragma GCC unroll 4
      for (j = 0; j < nz; j++)
        acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], _mm512_load_si512(xq + 64 * j), wv);
    }
  }
  if (r && !r->ss && r->i16 && !r->has_corr) {
    /* the last chunk, the common case (rq_pack's int16 epilogue) with r's
     * scalar fields in locals: the vector stores may alias *r, so read
     * through r they were loaded again per row (with the tests on them, a
     * fifth of a K = 16 conv's time) */
    const float *mult = r->q->mult;
    const int per_channel = r->q->per_channel, clamp = r->clamp16;
    int8_t *const yb = r->y_block;
    const size_t plane = r->plane;
    const int32_t nseg = r->nseg;
    const band_seg *const seg = r->seg;
    const __mmask64 sm = r->store_mask;
#pragma GCC unroll 6
    for (i = 0; i < mr_max; i++) {
      __m512i out[4], h0, h1, o;
      __m512 m;
      int8_t *y_ch;
      int32_t sg;
      if (i >= mr) /* (before the multiplier: rows past mr have none) */
        break;
      m = _mm512_set1_ps(mult[per_channel ? co0 + i : 0]);
#pragma GCC unroll 4
      for (j = 0; j < 4; j++)
        out[j] = j < nz ? _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[i][j]), m))
                        : _mm512_setzero_si512();
      h0 = _mm512_adds_epi16(_mm512_packs_epi32(out[0], out[1]), r->zp16);
      h1 = _mm512_adds_epi16(_mm512_packs_epi32(out[2], out[3]), r->zp16);
      if (clamp) {
        h0 = _mm512_min_epi16(_mm512_max_epi16(h0, r->lo16), r->hi16);
        h1 = _mm512_min_epi16(_mm512_max_epi16(h1, r->lo16), r->hi16);
      }
      o = _mm512_packs_epi16(h0, h1);
      if (nz < 4) /* natural order (rq_pack) */
        o = _mm512_permutexvar_epi32(
            _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), o);
      y_ch = yb + (size_t)(co0 + i) * plane;
      if (nseg == 0)
        _mm512_mask_storeu_epi8(y_ch, sm, o);
      for (sg = 0; sg < nseg; sg++)
        _mm512_mask_storeu_epi8((void *)((uintptr_t)y_ch + (uintptr_t)seg[sg].off), seg[sg].m, o);
    }
    return;
  }
  if (r) { /* the last chunk: requantized from the registers */
#pragma GCC unroll 6
    for (i = 0; i < mr_max; i++) {
      if (i >= mr)
        break;
      rq_row(r, co0 + i, acc[i], nz);
    }
    return;
  }
#pragma GCC unroll 6
  for (i = 0; i < mr_max; i++) {
    if (i >= mr)
      break;
#pragma GCC unroll 4
    for (j = 0; j < nz; j++)
      _mm512_store_si512(tile + i * LANES + 16 * j, acc[i][j]);
  }
}

/* Accumulators start from the rows' constants cconst[0, mr) (first chunk).
 * r: requantize rows co0 .. co0 + mr − 1 and
 * store them instead of the tile (the reduction's last chunk). */
static TARGET void micro_kernel(const uint8_t *xbuf, int32_t nq, int32_t tail,
                                const int8_t *const *wr, int32_t mr, int32_t nz,
                                int first, int32_t *tile, vnni_rq *r, int32_t co0,
                                const uint32_t *cconst) {
  if (nz == 4 && mr > 4)
    micro_body(xbuf, nq, tail, wr, mr, 6, 4, first, tile, r, co0, cconst);
  else if (nz == 4 && mr > 2)
    micro_body(xbuf, nq, tail, wr, mr, 4, 4, first, tile, r, co0, cconst);
  else if (nz == 4)
    micro_body(xbuf, nq, tail, wr, mr, 2, 4, first, tile, r, co0, cconst);
  else if (nz == 3)
    micro_body(xbuf, nq, tail, wr, mr, 6, 3, first, tile, r, co0, cconst);
  else if (nz == 2)
    micro_body(xbuf, nq, tail, wr, mr, 6, 2, first, tile, r, co0, cconst);
  else
    micro_body(xbuf, nq, tail, wr, mr, 6, 1, first, tile, r, co0, cconst);
}

/* The constant part of output channel co's accumulator, modulo 2³²:
 * bias − u_zp·Σw + K·u_zp·w_zp (see the top). */
static TARGET uint32_t channel_const(const vnni_conv *c, const int8_t *w,
                                     const int32_t *bias, int32_t co) {
  const uint32_t u_zp = (uint32_t)(c->p->x_zp + 128);
  const uint32_t bv = bias ? (uint32_t)bias[co] : 0u;
  const uint32_t sw = (uint32_t)tidsp_zmm_row_sum(w + (size_t)co * c->w_stride, c->K);
  return bv - u_zp * sw + (uint32_t)c->K * u_zp * (uint32_t)c->p->w_zp;
}

static __attribute__((noinline)) TARGET void conv_fast(const tidsp_conv2d_params *p, const int8_t *x,
                             const int8_t *w, const int32_t *bias,
                             const tidsp_host_rq *q, int8_t *y) {
  uint8_t xbuf[KC * LANES] __attribute__((aligned(64)));
  int32_t tile[COB * LANES] __attribute__((aligned(64)));
  uint32_t cconst_g[CCMAX]; /* the group's constants, when it fits */
  uint32_t cconst_b[COB];   /* else one channel block's, per block */
  /* the group's weight rows when they fit (CCMAX), then MR copies of its
   * last: a panel's rows without computing them per block (that cost
   * 7 % of a 1×1 conv with K = 16); rows past a panel's mr are read but
   * not stored (micro_body) */
  const int8_t *wrow[CCMAX + MR];
  __m512i usum[4];
  vnni_conv c;
  vnni_rq r;
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  int32_t n, g, cb0, k0, i0, i, kstep;
  size_t f0;

  c.p = p;
  c.cpg_in = p->c_in / p->groups;
  c.cpg_out = p->c_out / p->groups;
  c.K = c.cpg_in * p->k_h * p->k_w;
  c.w_stride = tidsp_host_conv_w_stride(p);
  c.in_plane = (size_t)p->h_in * (size_t)p->w_in;
  c.contig = p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 &&
             p->pad_top == 0 && p->pad_left == 0 && p->w_in == p->w_out &&
             p->h_out <= p->h_in;
  /* chunks of equal length (a multiple of 4), none of a few taps */
  kstep = (c.K + KC - 1) / KC;
  kstep = ((c.K + kstep - 1) / kstep + 3) / 4 * 4;
  c.listable = p->stride_w <= 2 && p->k_h * p->k_w <= KTMAX;
  c.xbuf = xbuf;
  c.tile = tile;
  c.usum = usum;
  rq_init16(&r, q, p->c_out);
  for (n = 0; n < p->n; n++) {
    for (g = 0; g < p->groups; g++) {
      const int8_t *x_g = x + ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)c.cpg_in) * c.in_plane;
      const int32_t co_g = g * c.cpg_out;
      const int whole = c.cpg_out <= CCMAX;
      if (whole) {
        for (i = 0; i < c.cpg_out + MR; i++)
          wrow[i] = w + (size_t)(co_g + (i < c.cpg_out ? i : c.cpg_out - 1)) * c.w_stride;
      }
      for (f0 = 0; f0 < out_plane; f0 += LANES) {
        const int32_t lanes = out_plane - f0 < LANES ? (int32_t)(out_plane - f0) : LANES;
        int8_t *y_block = y + (size_t)n * (size_t)p->c_out * out_plane + f0;
        const int32_t nz = (lanes + 15) / 16; /* vectors of 16 pixels used */
        int packed = 0;   /* xbuf holds the whole reduction (one chunk) */
        int rq_ready = 0; /* r is set up for this block */
        block_rows(&c, f0, lanes);
        for (cb0 = 0; cb0 < c.cpg_out; cb0 += COB) {
          const int32_t cb = c.cpg_out - cb0 < COB ? c.cpg_out - cb0 : COB;
          const uint32_t *cconst = whole ? cconst_g + cb0 : cconst_b;
          /* summed just before the block's first use of these weight
           * rows (a separate pass over large weights costs a trip to
           * memory), and once per group when the group's constants fit */
          if (!whole || f0 == 0) {
            for (i = 0; i < cb; i++)
              ((uint32_t *)cconst)[i] = channel_const(&c, w, bias, co_g + cb0 + i);
          }
          for (k0 = 0; k0 < c.K; k0 += kstep) {
            const int32_t kc = c.K - k0 < kstep ? c.K - k0 : kstep;
            if (!packed) {
              if (k0 == 0) {
                for (i = 0; i < 4; i++)
                  usum[i] = _mm512_setzero_si512();
              }
              pack_chunk(&c, x_g, k0, kc, nz < 4);
              packed = kc == c.K;
              if (k0 + kc == c.K && !rq_ready) {
                rq_init(&r, &c, q, y_block, out_plane);
                rq_ready = 1;
              }
            }
            const int8_t *wb = w + (size_t)(co_g + cb0) * c.w_stride + (size_t)k0;
            for (i0 = 0; i0 < cb; i0 += MR, wb += MR * c.w_stride) {
              const int32_t mr = cb - i0 < MR ? cb - i0 : MR;
              const int8_t *wr_own[MR];
              const int8_t *const *wr = wr_own;
              if (whole && kc == c.K) { /* one chunk: the group's table */
                wr = wrow + cb0 + i0;
              } else { /* rows i0 .. i0 + mr − 1, the rest repeat the last */
                wr_own[0] = wb;
                for (i = 1; i < MR; i++)
                  wr_own[i] = i < mr ? wr_own[i - 1] + c.w_stride : wr_own[i - 1];
              }
              micro_kernel(xbuf, (kc + 3) / 4, kc % 4, wr, mr, nz, k0 == 0,
                           tile + (size_t)i0 * LANES, k0 + kc == c.K ? &r : NULL,
                           co_g + cb0 + i0, cconst + i0);
            }
          }
        }
      }
    }
  }
}

/* ------------------------------------------------------------------------
 * The band path: an implicit GEMM with no per-block gather.
 *
 * A band of output rows [oh0, oh0 + rows) reads padded input rows that
 * are written once per band, as u = x + 128, into
 *   band[q][slot][r][c][4]        (u8: input channels 4q .. 4q + 3)
 * where a slot is one stride phase (pr, pc) of the padded input (padded
 * row s·r + pr, padded column s·c + pc; the zero point in the padding), so
 * that tap (kh, kw), a = kh·dil_h, b = kw·dil_w, of output (oh, ow) reads
 * slot (a % s, b % s) at (oh + a/s, ow + b/s): stride 1 in every slot.
 * The outputs are computed on the slots' grid of `wg` columns (w_out plus
 * the columns that the widest tap reaches), so that a block of 64
 * consecutive grid positions reads, per tap and quad, ONE contiguous run
 * of 64 dwords at a fixed offset: four loads, no masks, no gather. The
 * grid columns ≥ w_out are computed and dropped at the store (one masked
 * store per output row of the block); the last quad's reads past the band
 * hit a zeroed slack.
 *
 * The weight rows are reordered per band and panel of MR channels into
 * the reduction's order, quad q then tap t: row'[(q·T + t)·4 + j] =
 * w[co][(4q + j)·T + t] (T = k_h·k_w; a 1×1 conv's rows are that order
 * already and are read in place). The accumulators start from the same
 * constants as conv_fast's (w_zp = 0 here, so Σu never enters) and are
 * requantized in registers.
 * ------------------------------------------------------------------------ */
enum {
  BAND_DW = 16384, /* band dwords (64 KiB) */
  BAND_SLACK = 64, /* dwords past the band that the last block may read */
  TMP_DW = 2048,   /* one padded input row of dwords (8 KiB) */
  BAND_TMAX = 16,  /* taps per channel whose weight quads are reordered */
  WBUF = 49152,     /* bytes of reordered weight rows (at least MR rows) */
  BAND_STEPS = 2048, /* quads of the reduction (Q·T) at most */
  GATHER_CH = 20     /* conv_fast's gather per vector, in channels (see band_plan) */
};

typedef struct vnni_band {
  int32_t s, T, Q, wg, ra;   /* stride, taps, quads, grid columns, rows past a band */
  int32_t nsr, nsc;          /* row and column phases used */
  int32_t slot_r[2], slot_c[2]; /* phase → its index among the used ones */
  int32_t rows;              /* output rows per band (the last may have fewer) */
} vnni_band;

/* The vectors of 16 positions that the blocks of n grid positions run. */
static int64_t band_vectors(int32_t n) {
  return (int64_t)(n / LANES) * 4 + (n % LANES + 15) / 16;
}

/* Whether the band path takes this conv, and its geometry. */
static int band_plan(const tidsp_conv2d_params *p, vnni_band *b) {
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  const int32_t s = p->stride_h;
  const int32_t amax = (p->k_h - 1) * p->dil_h, bmax = (p->k_w - 1) * p->dil_w;
  const int32_t out_plane = p->h_out * p->w_out;
  int32_t kh, kw, rows, rmax, nb;
  int64_t best, old_vec;
  size_t per_row;
  /* stride 2 measured slower on the band so far (ResNet-18's 3×3/s2 and
   * 1×1/s2 convs): conv_fast keeps it */
  if (p->w_zp != 0 || s != p->stride_w || s != 1 || cpg_in % 4 != 0)
    return 0;
  b->s = s;
  b->T = p->k_h * p->k_w;
  b->Q = cpg_in / 4;
  /* a 1×1 conv reads its input once per pixel on either path: conv_fast's
   * block packing is as cheap as a band and keeps the block in L1 */
  if (b->T < 2 || b->T > BAND_TMAX || (int64_t)MR * cpg_in * b->T > WBUF ||
      (int64_t)b->Q * b->T > BAND_STEPS)
    return 0;
  b->wg = p->w_out + bmax / s;
  b->ra = amax / s;
  /* the last block reads up to 15 + bmax/s positions past the band's
   * end, into the zeroed slack */
  if ((int64_t)s * b->wg + 64 > TMP_DW || 16 + bmax / s > BAND_SLACK)
    return 0;
  b->slot_r[0] = b->slot_r[1] = b->slot_c[0] = b->slot_c[1] = -1;
  b->nsr = b->nsc = 0;
  for (kh = 0; kh < p->k_h; kh++) {
    const int32_t pr = kh * p->dil_h % s;
    if (b->slot_r[pr] < 0)
      b->slot_r[pr] = b->nsr++;
  }
  for (kw = 0; kw < p->k_w; kw++) {
    const int32_t pc = kw * p->dil_w % s;
    if (b->slot_c[pc] < 0)
      b->slot_c[pc] = b->nsc++;
  }
  /* dwords of a band of `rows` output rows: Q·slots·(rows + ra)·wg */
  per_row = (size_t)b->Q * (size_t)(b->nsr * b->nsc) * (size_t)b->wg;
  if (per_row == 0 || per_row * (size_t)(1 + b->ra) > BAND_DW - BAND_SLACK)
    return 0;
  rmax = (int32_t)((BAND_DW - BAND_SLACK) / per_row) - b->ra;
  if (rmax > p->h_out)
    rmax = p->h_out;
  /* the band height whose blocks waste the fewest vectors of 16 grid
   * positions (a band's last block is partial), the tallest of equals */
  best = INT64_MAX;
  b->rows = rmax;
  for (rows = rmax; rows >= 1; rows--) {
    const int32_t last = p->h_out % rows;
    const int64_t cost = (int64_t)(p->h_out / rows) * band_vectors(rows * b->wg) +
                         (last ? band_vectors(last * b->wg) : 0);
    if (cost < best) {
      best = cost;
      b->rows = rows;
    }
  }
  /* conv_fast's vectors cost about GATHER_CH more channels each (its
   * per-block gather): the band pays for its wider grid only where that
   * wins (measured: 64 channels at 56²; 128 at 28² even; not 256 at 14²,
   * whose grid is 16 wide, nor 512 at 7², whose 2.4 MB of weights the
   * per-band reordering costs more than the gather) */
  old_vec = band_vectors((int32_t)(out_plane % LANES)) + (int64_t)(out_plane / LANES) * 4;
  nb = (p->h_out + b->rows - 1) / b->rows;
  /* + the weight rows reordered per band, about one vector each */
  return (best + nb) * cpg_out * 100 < old_vec * (cpg_out + GATHER_CH) * 97;
}

/* Four vectors of 64 bytes (channels 0..3 of 64 columns) → 64 dwords of
 * the 4 channels, column c in dword c % 16 of vector c / 16. */
static inline __attribute__((always_inline)) TARGET void quads_natural(__m512i v[4]) {
  const __m512i ab_lo = _mm512_unpacklo_epi8(v[0], v[1]);
  const __m512i ab_hi = _mm512_unpackhi_epi8(v[0], v[1]);
  const __m512i cd_lo = _mm512_unpacklo_epi8(v[2], v[3]);
  const __m512i cd_hi = _mm512_unpackhi_epi8(v[2], v[3]);
  const __m512i e0 = _mm512_unpacklo_epi16(ab_lo, cd_lo); /* 16L + 0..3 */
  const __m512i e1 = _mm512_unpackhi_epi16(ab_lo, cd_lo); /* 16L + 4..7 */
  const __m512i e2 = _mm512_unpacklo_epi16(ab_hi, cd_hi); /* 16L + 8..11 */
  const __m512i e3 = _mm512_unpackhi_epi16(ab_hi, cd_hi); /* 16L + 12..15 */
  const __m512i t0 = _mm512_shuffle_i32x4(e0, e1, 0x44);
  const __m512i t1 = _mm512_shuffle_i32x4(e2, e3, 0x44);
  const __m512i t2 = _mm512_shuffle_i32x4(e0, e1, 0xEE);
  const __m512i t3 = _mm512_shuffle_i32x4(e2, e3, 0xEE);
  v[0] = _mm512_shuffle_i32x4(t0, t1, 0x88);
  v[1] = _mm512_shuffle_i32x4(t0, t1, 0xDD);
  v[2] = _mm512_shuffle_i32x4(t2, t3, 0x88);
  v[3] = _mm512_shuffle_i32x4(t2, t3, 0xDD);
}

/* n dwords of v at dst (n < 16 stores the first n only). */
static inline __attribute__((always_inline)) TARGET void store_dw(uint32_t *dst, __m512i v,
                                                                   int32_t n) {
  if (n >= 16)
    _mm512_storeu_si512((void *)dst, v);
  else
    _mm512_mask_storeu_epi32((void *)dst, (__mmask16)((1u << n) - 1u), v);
}

/* tmp[j] for padded columns j ∈ [0, n): the u quad of input column
 * j − pad_left of channels ci .. ci + 3 at input row iy, u_zp outside. */
static TARGET void band_tmp_row(const tidsp_conv2d_params *p, const int8_t *x_row,
                                size_t in_plane, uint32_t u_zp4, int32_t n, uint32_t *tmp) {
  const __m512i bias8 = _mm512_set1_epi8((char)0x80);
  const __m512i zq = _mm512_set1_epi32((int)u_zp4);
  const int32_t lo = p->pad_left, hi = p->pad_left + p->w_in < n ? p->pad_left + p->w_in : n;
  int32_t j, i;
  for (j = 0; j < n + 32; j += 16) /* (stride 2 reads 32 dwords a step) */
    _mm512_storeu_si512((void *)(tmp + j), zq);
  for (j = lo; j < hi; j += 64) {
    const int32_t m = hi - j < 64 ? hi - j : 64;
    const __mmask64 mk = lane_bits(0, m);
    const int8_t *src = x_row + (j - lo);
    __m512i v[4];
    for (i = 0; i < 4; i++)
      v[i] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mk, src + (size_t)i * in_plane), bias8);
    quads_natural(v);
    for (i = 0; i < 4 && 16 * i < m; i++)
      store_dw(tmp + j + 16 * i, v[i], m - 16 * i);
  }
}

/* Writes the band of output rows [oh0, oh0 + rows) of group input x_g into
 * band (ps dwords per slot plane, qs per quad) and zeroes the slack. */
static TARGET void band_build(const tidsp_conv2d_params *p, const vnni_band *b,
                              const int8_t *x_g, int32_t oh0, int32_t hb, size_t ps,
                              size_t qs, uint32_t *band, uint32_t *tmp) {
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const uint32_t u_zp = (uint32_t)(uint8_t)(p->x_zp + 128);
  const uint32_t u_zp4 = u_zp * 0x01010101u;
  const __m512i zq = _mm512_set1_epi32((int)u_zp4);
  const int32_t s = b->s, wg = b->wg;
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  int32_t q, pr, pc, r, c;
  for (q = 0; q < b->Q; q++) {
    const int8_t *x_q = x_g + (size_t)(4 * q) * in_plane;
    for (pr = 0; pr < s; pr++) {
      if (b->slot_r[pr] < 0)
        continue;
      for (r = 0; r < hb; r++) {
        const int64_t iy = (int64_t)s * (oh0 + r) + pr - p->pad_top;
        const int inside = iy >= 0 && iy < p->h_in;
        if (inside)
          band_tmp_row(p, x_q + (size_t)iy * (size_t)p->w_in, in_plane, u_zp4, s * wg, tmp);
        for (pc = 0; pc < s; pc++) {
          uint32_t *dst;
          if (b->slot_c[pc] < 0)
            continue;
          dst = band + (size_t)q * qs +
                (size_t)(b->slot_r[pr] * b->nsc + b->slot_c[pc]) * ps + (size_t)r * (size_t)wg;
          for (c = 0; c < wg; c += 16) {
            __m512i v = zq;
            if (inside && s == 1)
              v = _mm512_loadu_si512((const void *)(tmp + c));
            else if (inside) /* dst[c] = tmp[2c + pc] */
              v = _mm512_permutex2var_epi32(_mm512_loadu_si512((const void *)(tmp + 2 * c)),
                                            pc ? odd : even,
                                            _mm512_loadu_si512((const void *)(tmp + 2 * c + 16)));
            store_dw(dst + c, v, wg - c);
          }
        }
      }
    }
  }
  memset(band + (size_t)b->Q * qs, 0, BAND_SLACK * sizeof(uint32_t));
}

/* Weight row co (K = 4·Q·T bytes, OIHW) in the band's order: dst[(q·T +
 * t)·4 + j] = w[(4q + j)·T + t], T ≤ 16. */
static TARGET void band_weights(const int8_t *w, int32_t Q, int32_t T, int8_t *dst) {
  const __mmask16 mt = (__mmask16)((1u << T) - 1u);
  const __mmask64 mb = (__mmask64)mt;
  int32_t q;
  for (q = 0; q < Q; q++) {
    const int8_t *src = w + (size_t)q * 4 * (size_t)T;
    const __m128i c0 = _mm512_castsi512_si128(_mm512_maskz_loadu_epi8(mb, src));
    const __m128i c1 = _mm512_castsi512_si128(_mm512_maskz_loadu_epi8(mb, src + T));
    const __m128i c2 = _mm512_castsi512_si128(_mm512_maskz_loadu_epi8(mb, src + 2 * T));
    const __m128i c3 = _mm512_castsi512_si128(_mm512_maskz_loadu_epi8(mb, src + 3 * T));
    const __m128i ab_lo = _mm_unpacklo_epi8(c0, c1), ab_hi = _mm_unpackhi_epi8(c0, c1);
    const __m128i cd_lo = _mm_unpacklo_epi8(c2, c3), cd_hi = _mm_unpackhi_epi8(c2, c3);
    __m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(ab_lo, cd_lo)); /* taps 0..3 */
    v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(ab_lo, cd_lo), 1);       /* 4..7 */
    v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(ab_hi, cd_hi), 2);       /* 8..11 */
    v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(ab_hi, cd_hi), 3);       /* 12..15 */
    _mm512_mask_storeu_epi32((void *)(dst + (size_t)q * 4 * (size_t)T), mt, v);
  }
}

/* The band's micro-kernel: tile[i][0..16·nz) = the accumulators of mr ≤
 * mr_max channels × nz vectors of 16 grid positions from xb (the block's
 * first position in quad 0, slot plane 0), over nstep = Q·T steps (step
 * q·T + t at byte offset soff[step]). One flat loop, and the
 * requantization in band_store: GCC keeps this loop's 24 accumulators in
 * registers only then (a loop nest over q and t, or the requantization's
 * constants live beside it, made it copy and spill them every step). */
static inline __attribute__((always_inline)) TARGET void
band_body(const uint8_t *xb, const int32_t *soff, int32_t nstep, const int8_t *const *wr,
          int32_t mr, int32_t mr_max, int32_t nz, const uint32_t *cconst, int32_t *tile) {
  __m512i acc[MR][4];
  int32_t i, j, st;
#pragma GCC unroll 6
  for (i = 0; i < mr_max; i++) {
#pragma GCC unroll 4
    for (j = 0; j < nz; j++)
      acc[i][j] = i >= mr ? _mm512_setzero_si512() : _mm512_set1_epi32((int)cconst[i]);
  }
  for (st = 0; st < nstep; st++) {
    const uint8_t *xt = xb + soff[st];
    __m512i xv[4];
#pragma GCC unroll 4
    for (j = 0; j < nz; j++)
      xv[j] = _mm512_loadu_si512((const void *)(xt + 64 * j));
#pragma GCC unroll 6
    for (i = 0; i < mr_max; i++) {
      const __m512i wv = _mm512_set1_epi32((int)load_quad(wr[i] + 4 * st));
#pragma GCC unroll 4
      for (j = 0; j < nz; j++)
        acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], xv[j], wv);
    }
  }
#pragma GCC unroll 6
  for (i = 0; i < mr_max; i++) {
    if (i >= mr)
      break;
#pragma GCC unroll 4
    for (j = 0; j < nz; j++)
      _mm512_store_si512((void *)(tile + i * LANES + 16 * j), acc[i][j]);
  }
}

static TARGET void band_micro(const uint8_t *xb, const int32_t *soff, int32_t nstep,
                              const int8_t *const *wr, int32_t mr, int32_t nz,
                              const uint32_t *cconst, int32_t *tile) {
  if (nz == 4 && mr > 4)
    band_body(xb, soff, nstep, wr, mr, 6, 4, cconst, tile);
  else if (nz == 4 && mr > 2)
    band_body(xb, soff, nstep, wr, mr, 4, 4, cconst, tile);
  else if (nz == 4)
    band_body(xb, soff, nstep, wr, mr, 2, 4, cconst, tile);
  else if (nz == 3)
    band_body(xb, soff, nstep, wr, mr, 6, 3, cconst, tile);
  else if (nz == 2)
    band_body(xb, soff, nstep, wr, mr, 6, 2, cconst, tile);
  else
    band_body(xb, soff, nstep, wr, mr, 6, 1, cconst, tile);
}

/* Requantizes the tile's mr channels (co0 ..) and stores them through the
 * block's segments. */
static TARGET void band_store(const vnni_rq *r, tidsp_host_ss16_consts *k, const int32_t *tile,
                              int32_t mr, int32_t nz, int32_t co0, int8_t *y_img,
                              size_t plane, const band_seg *seg, int32_t nseg) {
  int32_t i, j, sgi;
  for (i = 0; i < mr; i++) {
    __m512i acc[4], o;
    int8_t *y_ch = y_img + (size_t)(co0 + i) * plane;
    for (j = 0; j < 4; j++)
      acc[j] = _mm512_load_si512((const void *)(tile + i * LANES + 16 * j));
    o = rq_pack(r, k, co0 + i, acc, nz, 1);
    for (sgi = 0; sgi < nseg; sgi++)
      _mm512_mask_storeu_epi8((void *)((uintptr_t)y_ch + (uintptr_t)seg[sgi].off), seg[sgi].m, o);
  }
}

/* The segments of the band block of grid positions [f0, f0 + lanes) of
 * the band starting at output row oh0; returns their count. */
static int32_t band_segs(const tidsp_conv2d_params *p, int32_t wg, int32_t oh0, int32_t f0,
                         int32_t lanes, band_seg *seg) {
  int32_t L = 0, n = 0;
  while (L < lanes) {
    const int32_t pos = f0 + L, row = pos / wg, col = pos - row * wg;
    const int32_t run = wg - col < lanes - L ? wg - col : lanes - L;
    if (col < p->w_out) {
      const int32_t keep = run < p->w_out - col ? run : p->w_out - col;
      seg[n].off = (intptr_t)(oh0 + row) * p->w_out + col - L;
      seg[n].m = lane_bits(L, L + keep);
      n++;
    }
    L += run;
  }
  return n;
}

static __attribute__((noinline)) TARGET void conv_band(const tidsp_conv2d_params *p,
                                                       const vnni_band *b, const int8_t *x,
                                                       const int8_t *w, const int32_t *bias,
                                                       const tidsp_host_rq *q, int8_t *y) {
  uint32_t band[BAND_DW] __attribute__((aligned(64)));
  uint32_t tmp[TMP_DW] __attribute__((aligned(64)));
  int8_t wbuf[WBUF] __attribute__((aligned(64)));
  int32_t tile[MR * LANES] __attribute__((aligned(64)));
  band_seg seg[LANES + 2];
  int32_t toff[BAND_TMAX];
  int32_t soff[BAND_STEPS]; /* byte offset of step q·T + t */
  uint32_t cconst[CCMAX];
  tidsp_host_ss16_consts k;
  vnni_rq r;
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  const int32_t K = cpg_in * b->T;
  const size_t w_stride = tidsp_host_conv_w_stride(p);
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  const uint32_t u_zp = (uint32_t)(p->x_zp + 128);
  /* channels per weight group: a multiple of MR (band_plan: MR·K ≤ WBUF) */
  const int32_t np = (int32_t)(WBUF / (size_t)K / MR * MR) < CCMAX / MR * MR
                         ? (int32_t)(WBUF / (size_t)K / MR * MR)
                         : CCMAX / MR * MR;
  int32_t n, g, oh0, i0, i, kh, kw, f0, c0;

  memset(&r, 0, sizeof(r));
  r.q = q;
  r.ss = tidsp_host_rq_is_ss(q);
  r.lo = _mm512_set1_ps(q->lo);
  r.hi = _mm512_set1_ps(q->hi);
  r.zp = _mm512_set1_epi32(q->zp);
  r.has_corr = 0;
  rq_init16(&r, q, p->c_out);
  tidsp_host_ss16_init(&k, q);
  for (n = 0; n < p->n; n++) {
    for (g = 0; g < p->groups; g++) {
      const int8_t *x_g = x + ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)cpg_in) * in_plane;
      int8_t *y_img = y + (size_t)n * (size_t)p->c_out * out_plane;
      for (oh0 = 0; oh0 < p->h_out; oh0 += b->rows) {
        const int32_t rows = p->h_out - oh0 < b->rows ? p->h_out - oh0 : b->rows;
        const int32_t hb = rows + b->ra, grid = rows * b->wg;
        const size_t ps = (size_t)hb * (size_t)b->wg;
        const size_t qs = ps * (size_t)(b->nsr * b->nsc);
        band_build(p, b, x_g, oh0, hb, ps, qs, band, tmp);
        for (kh = 0; kh < p->k_h; kh++) {
          for (kw = 0; kw < p->k_w; kw++) {
            const int32_t a = kh * p->dil_h, bb = kw * p->dil_w;
            const size_t slot = (size_t)(b->slot_r[a % b->s] * b->nsc + b->slot_c[bb % b->s]);
            toff[kh * p->k_w + kw] =
                (int32_t)(4 * (slot * ps + (size_t)(a / b->s) * (size_t)b->wg + (size_t)(bb / b->s)));
          }
        }
        for (i = 0; i < b->Q * b->T; i++)
          soff[i] = (int32_t)(4 * qs * (size_t)(i / b->T)) + toff[i % b->T];
        /* channels in groups whose reordered rows fit wbuf; per group,
         * each block of the band runs every panel of MR channels while its
         * inputs are in L1 (the weights stream) */
        for (c0 = 0; c0 < cpg_out; c0 += np) {
          const int32_t nc = cpg_out - c0 < np ? cpg_out - c0 : np;
          /* one group holding every channel keeps its rows from the
           * group's first band on */
          for (i = 0; i < nc && (nc < cpg_out || oh0 == 0); i++) {
            const int32_t co = g * cpg_out + c0 + i;
            const int8_t *row = w + (size_t)co * w_stride;
            cconst[i] = (bias ? (uint32_t)bias[co] : 0u) - u_zp * (uint32_t)tidsp_zmm_row_sum(row, K);
            band_weights(row, b->Q, b->T, wbuf + (size_t)i * (size_t)K);
          }
          for (f0 = 0; f0 < grid; f0 += LANES) {
            const int32_t lanes = grid - f0 < LANES ? grid - f0 : LANES;
            const int32_t nseg = band_segs(p, b->wg, oh0, f0, lanes, seg);
            const int32_t nz = (lanes + 15) / 16;
            if (nseg == 0)
              continue;
            for (i0 = 0; i0 < nc; i0 += MR) {
              const int32_t mr = nc - i0 < MR ? nc - i0 : MR;
              const int8_t *wr[MR];
              for (i = 0; i < MR; i++)
                wr[i] = wbuf + (size_t)(i0 + (i < mr ? i : mr - 1)) * (size_t)K;
              band_micro((const uint8_t *)(band + f0), soff, b->Q * b->T, wr, mr, nz,
                         cconst + i0, tile);
              band_store(&r, &k, tile, mr, nz, g * cpg_out + c0 + i0, y_img, out_plane, seg,
                         nseg);
            }
          }
        }
      }
    }
  }
}

/* ---- the phase path: stride-2 convs with few input channels -------------
 *
 * ResNet's and GoogLeNet's 7×7/s2 stem (3 → 64 channels at 224²) and
 * MobileNetV2's 3×3/s2 stem (3 → 32) have short reductions (K = 147, 27)
 * and few output channels, so conv_fast's per-block gather (two masked
 * loads and two vpmovwb per tap and block row at stride 2) weighs against
 * the few channels it serves. Here the input is split once per band of
 * output rows into its s × s stride phases, as u = x + 128 with u_zp in the
 * padding (the band path's slots, one per input channel rather than per
 * quad):
 *   grid[ci][pr][pc][r][c] = u of padded input row s·(oh0 + r) + pr,
 *                            padded column s·c + pc
 * with rows of wg = w_out + (k_w − 1)/s columns, so that tap (ci, kh, kw)
 * of the grid position g = r·wg + c (output (oh0 + r, c)) is the byte at
 * g + toff[ci, kh, kw], toff = the phase plane (kh % s, kw % s) +
 * (kh/s)·wg + kw/s: 64 consecutive positions are ONE unmasked load per tap.
 * The block's taps are then interleaved into xbuf as pack_chunk does and
 * run through the same micro-kernel and requantization; the grid columns
 * ≥ w_out are computed and dropped at the store (rq_row's segments). The
 * reads of a band's last block past its grid hit a zeroed slack.
 * Stack: the grid 64 KiB + xbuf (K ≤ KC) 48 KiB + the tap offsets 3 KiB. */
enum {
  PH_BYTES = 65536, /* the grid of a band */
  PH_SLACK = 128,   /* bytes past it that a band's last block may read */
  PH_ROW = 4096,    /* one padded input row (both column phases) */
  PH_MAX_CIN = 4    /* input channels per group at most */
};

typedef struct ph_plan {
  int32_t s, wg, ra; /* stride, grid columns, grid rows past a band's output rows */
  int32_t rows;      /* output rows per band (the last may have fewer) */
} ph_plan;

/* Whether the phase path takes this conv, and its geometry. */
static int ph_plan_make(const tidsp_conv2d_params *p, ph_plan *b) {
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  const int32_t s = p->stride_h;
  const int64_t K = (int64_t)cpg_in * p->k_h * p->k_w;
  int64_t per_row, best;
  int32_t rmax, rows;
  /* measured (conv_bench): the 3-channel stems; convs with more input
   * channels per group amortize conv_fast's gather over their longer
   * reduction, or take the band or O16 paths */
  if (s != 2 || p->stride_w != 2 || p->dil_h != 1 || p->dil_w != 1 || cpg_in > PH_MAX_CIN ||
      K > KC || cpg_out > CCMAX || p->w_layout != TIDSP_CONV_W_OIHW)
    return 0;
  b->s = s;
  b->wg = p->w_out + (p->k_w - 1) / s;
  b->ra = (p->k_h - 1) / s;
  if ((p->k_w - 1) / s + LANES > PH_SLACK || (int64_t)s * b->wg + 2 * LANES > PH_ROW)
    return 0;
  per_row = (int64_t)cpg_in * s * s * b->wg; /* grid bytes per row of every plane */
  if (per_row * (1 + b->ra) > PH_BYTES)
    return 0;
  rmax = (int32_t)(PH_BYTES / per_row) - b->ra;
  if (rmax > p->h_out)
    rmax = p->h_out;
  /* the band height whose blocks waste the fewest vectors of 16 grid
   * positions (a band's last block is partial), the tallest of equals */
  best = INT64_MAX;
  b->rows = rmax;
  for (rows = rmax; rows >= 1; rows--) {
    const int32_t last = p->h_out % rows;
    const int64_t cost = (int64_t)(p->h_out / rows) * band_vectors(rows * b->wg) +
                         (last ? band_vectors(last * b->wg) : 0);
    if (cost < best) {
      best = cost;
      b->rows = rows;
    }
  }
  return 1;
}

/* The grid of output rows [oh0, oh0 + rows) of group input x_g (hb =
 * rows + ra grid rows, ps bytes per phase plane); zeroes the slack. */
static TARGET void ph_build(const tidsp_conv2d_params *p, const ph_plan *b, const int8_t *x_g,
                            int32_t cpg_in, int32_t oh0, int32_t hb, size_t ps, uint8_t *grid,
                            uint8_t *tmp) {
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const __m512i bias8 = _mm512_set1_epi8((char)0x80);
  const __m512i uzp = _mm512_set1_epi8((char)(uint8_t)(p->x_zp + 128));
  const int32_t wg = b->wg, n = 2 * wg; /* padded columns the phases hold */
  const int32_t lo = p->pad_left < n ? p->pad_left : n;
  const int32_t hi = p->pad_left + p->w_in < n ? p->pad_left + p->w_in : n;
  int32_t ci, pr, r, j;
  for (ci = 0; ci < cpg_in; ci++) {
    const int8_t *x_ci = x_g + (size_t)ci * in_plane;
    for (pr = 0; pr < 2; pr++) {
      uint8_t *even = grid + ((size_t)ci * 4 + (size_t)pr * 2) * ps;
      uint8_t *odd = even + ps;
      for (r = 0; r < hb; r++) {
        const int64_t iy = 2 * (int64_t)(oh0 + r) + pr - p->pad_top;
        uint8_t *de = even + (size_t)r * (size_t)wg, *dod = odd + (size_t)r * (size_t)wg;
        if (iy < 0 || iy >= p->h_in) {
          for (j = 0; j < wg; j += LANES) {
            const __mmask64 m = lane_bits(0, wg - j < LANES ? wg - j : LANES);
            _mm512_mask_storeu_epi8(de + j, m, uzp);
            _mm512_mask_storeu_epi8(dod + j, m, uzp);
          }
          continue;
        }
        /* the padded row in tmp, then its even and odd bytes */
        for (j = 0; j < n; j += LANES)
          _mm512_storeu_si512((void *)(tmp + j), uzp);
        for (j = lo; j < hi; j += LANES) {
          const __mmask64 m = lane_bits(0, hi - j < LANES ? hi - j : LANES);
          const __m512i v = _mm512_maskz_loadu_epi8(m, x_ci + (size_t)iy * (size_t)p->w_in + (j - lo));
          _mm512_mask_storeu_epi8(tmp + j, m, _mm512_xor_si512(v, bias8));
        }
        for (j = 0; j < wg; j += 32) {
          const __m512i v = _mm512_loadu_si512((const void *)(tmp + 2 * j));
          const __mmask64 m = lane_bits(0, wg - j < 32 ? wg - j : 32);
          _mm512_mask_storeu_epi8(de + j, m, _mm512_castsi256_si512(_mm512_cvtepi16_epi8(v)));
          _mm512_mask_storeu_epi8(dod + j, m,
                                  _mm512_castsi256_si512(_mm512_cvtepi16_epi8(_mm512_srli_epi16(v, 8))));
        }
      }
    }
  }
  memset(grid + (size_t)cpg_in * 4 * ps, 0, PH_SLACK);
}

/* xbuf for grid positions [f0, f0 + 64) of the band: quad q holds taps
 * 4q .. 4q + 3 (u = 0 past K). */
static inline __attribute__((always_inline)) TARGET void
ph_pack_body(const uint8_t *grid, const int32_t *toff, int32_t K, int32_t f0, int natural,
             int w_zp, uint8_t *xbuf, __m512i *usum) {
  const uint8_t *g0 = grid + f0;
  const int32_t nfull = K / 4, tail = K % 4;
  const __m512i zero = _mm512_setzero_si512();
  int32_t q;
  for (q = 0; q < nfull; q++) {
    const int32_t *t = toff + 4 * q;
    ph_quad(_mm512_loadu_si512((const void *)(g0 + t[0])),
            _mm512_loadu_si512((const void *)(g0 + t[1])),
            _mm512_loadu_si512((const void *)(g0 + t[2])),
            _mm512_loadu_si512((const void *)(g0 + t[3])), natural, w_zp,
            xbuf + (size_t)q * 4 * LANES, usum);
  }
  if (tail) {
    const int32_t *t = toff + 4 * nfull;
    ph_quad(_mm512_loadu_si512((const void *)(g0 + t[0])),
            tail > 1 ? _mm512_loadu_si512((const void *)(g0 + t[1])) : zero,
            tail > 2 ? _mm512_loadu_si512((const void *)(g0 + t[2])) : zero, zero, natural, w_zp,
            xbuf + (size_t)nfull * 4 * LANES, usum);
  }
}

static TARGET void ph_pack(const uint8_t *grid, const int32_t *toff, int32_t K, int32_t f0,
                           int natural, int w_zp, uint8_t *xbuf, __m512i *usum) {
  if (natural)
    ph_pack_body(grid, toff, K, f0, 1, w_zp, xbuf, usum);
  else if (w_zp)
    ph_pack_body(grid, toff, K, f0, 0, 1, xbuf, usum);
  else
    ph_pack_body(grid, toff, K, f0, 0, 0, xbuf, usum);
}

/* Prefetches the output lines that grid positions [f0, f0 + lanes) of
 * the band at oh0 will write, in the cpg_out planes from y_co on. The
 * stem's output (ResNet-18: 802 KB into 64 planes) goes to arena lines
 * that are cold, and 64 store streams are more than the hardware
 * prefetchers follow: with the input hot and the output cold, the 7×7/s2
 * 3 → 64 took 0.38 ms against 0.32 with both hot, 0.355 with this
 * (harness). Called one block ahead, thousands of cycles of MACs before
 * the stores. */
static inline __attribute__((always_inline)) TARGET void
ph_prefetch_out(const tidsp_conv2d_params *p, int32_t wg, int32_t oh0, int32_t f0, int32_t lanes,
                const int8_t *y_co, size_t out_plane, int32_t cpg_out) {
  band_seg seg[LANES + 2];
  const int32_t nseg = band_segs(p, wg, oh0, f0, lanes, seg);
  int32_t k, co;
  for (k = 0; k < nseg; k++) {
    const uint64_t m = (uint64_t)seg[k].m;
    const uintptr_t a = (uintptr_t)(seg[k].off + __builtin_ctzll(m));
    const uintptr_t e = (uintptr_t)(seg[k].off + 63 - __builtin_clzll(m));
    for (co = 0; co < cpg_out; co++) {
      const uintptr_t base = (uintptr_t)y_co + (uintptr_t)co * out_plane;
      uintptr_t l;
      for (l = (base + a) & ~(uintptr_t)63; l <= base + e; l += 64)
        _mm_prefetch((const char *)l, _MM_HINT_T0);
    }
  }
}

static __attribute__((noinline)) TARGET void conv_phase(const tidsp_conv2d_params *p,
                                                        const ph_plan *b, const int8_t *x,
                                                        const int8_t *w, const int32_t *bias,
                                                        const tidsp_host_rq *q, int8_t *y) {
  uint8_t grid[PH_BYTES + PH_SLACK] __attribute__((aligned(64)));
  uint8_t tmp[PH_ROW] __attribute__((aligned(64)));
  uint8_t xbuf[KC * LANES] __attribute__((aligned(64)));
  int32_t tile[MR * LANES] __attribute__((aligned(64))); /* (not used: one chunk) */
  int32_t toff[KC];
  uint32_t cconst[CCMAX];
  band_seg seg[LANES + 2];
  __m512i usum[4];
  vnni_conv c;
  vnni_rq r;
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const size_t out_plane = (size_t)p->h_out * (size_t)p->w_out;
  int32_t n, g, oh0, f0, i0, i, k;

  memset(&c, 0, sizeof(c));
  c.p = p;
  c.cpg_in = cpg_in;
  c.cpg_out = cpg_out;
  c.K = cpg_in * p->k_h * p->k_w;
  c.w_stride = tidsp_host_conv_w_stride(p);
  c.in_plane = in_plane;
  c.usum = usum;
  rq_init16(&r, q, p->c_out);
  for (n = 0; n < p->n; n++) {
    for (g = 0; g < p->groups; g++) {
      const int8_t *x_g = x + ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)cpg_in) * in_plane;
      int8_t *y_img = y + (size_t)n * (size_t)p->c_out * out_plane;
      const int32_t co_g = g * cpg_out;
      for (i = 0; i < cpg_out; i++)
        cconst[i] = channel_const(&c, w, bias, co_g + i);
      for (oh0 = 0; oh0 < p->h_out; oh0 += b->rows) {
        const int32_t rows = p->h_out - oh0 < b->rows ? p->h_out - oh0 : b->rows;
        const int32_t hb = rows + b->ra, gridn = rows * b->wg;
        const size_t ps = (size_t)hb * (size_t)b->wg;
        ph_build(p, b, x_g, cpg_in, oh0, hb, ps, grid, tmp);
        for (k = 0; k < c.K; k++) { /* tap k = (ci, kh, kw) */
          const int32_t ci = k / (p->k_h * p->k_w), kh = k / p->k_w % p->k_h, kw = k % p->k_w;
          toff[k] = (int32_t)(((size_t)ci * 4 + (size_t)(kh % 2) * 2 + (size_t)(kw % 2)) * ps +
                              (size_t)(kh / 2) * (size_t)b->wg + (size_t)(kw / 2));
        }
        for (f0 = 0; f0 < gridn; f0 += LANES) {
          const int32_t lanes = gridn - f0 < LANES ? gridn - f0 : LANES;
          const int32_t nseg = band_segs(p, b->wg, oh0, f0, lanes, seg);
          const int32_t nz = (lanes + 15) / 16;
          if (nseg == 0)
            continue;
          if (f0 + LANES < gridn)
            ph_prefetch_out(p, b->wg, oh0, f0 + LANES,
                            gridn - f0 - LANES < LANES ? gridn - f0 - LANES : LANES,
                            y_img + (size_t)co_g * out_plane, out_plane, cpg_out);
          c.lanes = lanes;
          for (i = 0; i < 4; i++)
            usum[i] = _mm512_setzero_si512();
          ph_pack(grid, toff, c.K, f0, nz < 4, p->w_zp != 0, xbuf, usum);
          rq_init(&r, &c, q, y_img, out_plane);
          r.seg = seg;
          r.nseg = nseg;
          for (i0 = 0; i0 < cpg_out; i0 += MR) {
            const int32_t mr = cpg_out - i0 < MR ? cpg_out - i0 : MR;
            const int8_t *wr[MR];
            for (i = 0; i < MR; i++)
              wr[i] = w + (size_t)(co_g + i0 + (i < mr ? i : mr - 1)) * c.w_stride;
            micro_kernel(xbuf, (c.K + 3) / 4, c.K % 4, wr, mr, nz, 1, tile, &r, co_g + i0,
                         cconst + i0);
          }
        }
      }
    }
  }
}

/* ---- the channels-in-lanes path (O16 weights) ------------------------------
 *
 * For small maps (ResNet-18's 7×7 layer4: 49 pixels use 49 of a block's 64
 * lanes, and each weight byte serves only those 49) the roles turn round:
 * a zmm holds 16 output channels, and a pixel's 4 input channels at one
 * tap are broadcast. The compiler packed the weights so that one 64-byte
 * load is 16 channels × 4 input channels in vpdpbusd order (kernels.h
 * TIDSP_CONV_W_O16), and the input is turned into u8 pixels-major rows
 * once per image and group:
 *   grid[r][c][ci] = x[ci][r − pad_top][c − pad_left] + 128  (u_zp outside)
 * over the padded grid the outputs read, so that tap (kh, kw) of output
 * (oh, ow) is the cpg_in bytes at grid row oh·s_h + kh·d_h, column
 * ow·s_w + kw·d_w: no gather, no mask, any stride and dilation. The
 * micro-kernel keeps CL_NP pixels × CL_NV vectors (24 zmm) of
 * accumulators over the whole reduction (T taps × Q quads, weights
 * streamed in order), so every lane is an output and the requantization
 * runs once from the registers, with per-lane constants (the channel's
 * multiplier or scale/shift). Accumulators start from bias − u_zp·Σw
 * (Σw: the 16 int32 after each block's weights, which the compiler
 * summed); w_zp ≠ 0 is not
 * packed O16 by the compiler and goes to the reference. The grid holds a
 * band of output rows at a time (larger maps: several bands), built by
 * 16 × 64 byte transposes; per band and panel of 64 channels the pixels
 * run in groups of at most CL_NP (sizes balanced, so that 49 = 4·6 + 5·5),
 * the panel's weights staying in L1/L2 between groups, and the results
 * wait in a ring of CL_RING pixels until 16 of them are transposed into
 * their NCHW rows. */
enum {
  CL_NP = 6,     /* pixels per micro-kernel call */
  CL_NV = 4,     /* 16-channel vectors per micro-kernel call */
  CL_RING = 32, /* pixels of results waiting for their transposition */
  /* OIHW 1×1 convs on maps of at most CL_OIHW_PIXELS outputs take this
   * path too (the compiler packs them O16 itself; not with
   * -pack-weights=0, nor in a hand-written call), their weights put in O16
   * order per call and panel, at most CL_WBUF bytes (K ≤ 1024):
   * conv_bench, 7²: 320→1280 0.059 ms against conv_fast's 0.072,
   * 832→384 0.045 against 0.052 (0.050, 0.038 on the compiler's O16). */
  CL_OIHW_PIXELS = 64,
  CL_WBUF = CL_NV * 16 * 1024 + CL_NV * 64
};

typedef struct cl_conv {
  const tidsp_conv2d_params *p;
  int32_t cpg_in, cpg_out, gw;
  int32_t sh, sw; /* grid (r, c) holds input row r·sh − pad_top, column c·sw − pad_left */
  int32_t ph, pw; /* grid rows and columns between neighbouring outputs */
  int flat;       /* the grid is the input planes as they are, pixel f ↔ input pixel f */
  int o16;        /* weights packed O16 by the compiler (else OIHW 1×1, packed per call) */
  int32_t rows;   /* output rows per band (the grid of a band fits the stack) */
  int32_t nstep;  /* reduction steps: T taps × Q quads of input channels */
  size_t vstride; /* bytes between two 16-channel blocks: nstep·64 + 64 (Σw) */
  int32_t *soff;  /* [nstep]: step t·Q + q reads grid bytes toff(t) + 4q on */
} cl_conv;

/* The geometry, and 1 when the path takes the call. A 1×1 conv's grid
 * holds only the pixels its outputs read (sampled at the stride, so that a
 * stride-2 downsample does not transpose the 3 pixels of 4 it skips);
 * others hold the padded grid the taps span (tidsp_conv_o16_grid_bytes,
 * kernels.h). The output rows run in bands whose grid fits
 * TIDSP_CONV_O16_MAX_GRID: one band on the small maps, several on larger
 * ones (ResNet's 28² layers). */
static int cl_plan(const tidsp_conv2d_params *p, cl_conv *c) {
  const int one = p->k_h == 1 && p->k_w == 1;
  int32_t lo, hi;
  c->p = p;
  c->cpg_in = p->c_in / p->groups;
  c->cpg_out = p->c_out / p->groups;
  c->o16 = p->w_layout == TIDSP_CONV_W_O16;
  if (!c->o16 && !(one && (int64_t)p->h_out * p->w_out <= CL_OIHW_PIXELS && c->cpg_out % 16 == 0 &&
                   c->cpg_in % 4 == 0 && (size_t)c->cpg_in * 16 * CL_NV + CL_NV * 64 <= CL_WBUF))
    return 0;
  if (p->w_zp != 0 || tidsp_conv_o16_grid_bytes(p, 1) > TIDSP_CONV_O16_MAX_GRID)
    return 0;
  c->nstep = p->k_h * p->k_w * (c->cpg_in / 4);
  c->vstride = (size_t)c->nstep * 64 + 64;
  c->gw = one ? p->w_out : (p->w_out - 1) * p->stride_w + (p->k_w - 1) * p->dil_w + 1;
  c->sh = one ? p->stride_h : 1;
  c->sw = one ? p->stride_w : 1;
  c->ph = one ? 1 : p->stride_h;
  c->pw = one ? 1 : p->stride_w;
  c->flat = one && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
            p->pad_left == 0 && p->h_out == p->h_in && p->w_out == p->w_in;
  /* the most rows whose grid fits (bisection: the bytes grow with rows) */
  lo = 1;
  hi = p->h_out;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo + 1) / 2;
    if (tidsp_conv_o16_grid_bytes(p, mid) <= TIDSP_CONV_O16_MAX_GRID)
      lo = mid;
    else
      hi = mid - 1;
  }
  c->rows = lo;
  return 1;
}

/* The step offsets (soff holds T·Q ≤ TIDSP_REF_MAX_TAPS / 4 entries). */
static void cl_steps(cl_conv *c, int32_t *soff) {
  const tidsp_conv2d_params *p = c->p;
  const int32_t Q = c->cpg_in / 4;
  int32_t t, q;
  c->soff = soff;
  for (t = 0; t < p->k_h * p->k_w; t++) {
    /* tap (kh, kw): grid row kh·d_h, column kw·d_w further (< 64 KiB) */
    const int32_t toff = ((t / p->k_w) * p->dil_h * c->gw + (t % p->k_w) * p->dil_w) * c->cpg_in;
    for (q = 0; q < Q; q++)
      soff[t * Q + q] = toff + 4 * q;
  }
}

/* Transposes 16 rows of 64 bytes in place: afterwards 128-bit lane L of
 * r[j] holds column 16L + j, byte i from row i. Four rounds of unpacks
 * (bytes, words, dwords, qwords), all within 128-bit lanes. */
static inline __attribute__((always_inline)) TARGET void u8_transpose16x64(__m512i r[16]) {
  __m512i s1[16], s2[16], s3[16];
  int32_t k, h;
#pragma GCC unroll 8
  for (k = 0; k < 8; k++) { /* s1[2k + h]: rows 2k, 2k+1 of columns 8h .. 8h+7 */
    s1[2 * k] = _mm512_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    s1[2 * k + 1] = _mm512_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
  }
#pragma GCC unroll 4
  for (k = 0; k < 4; k++) { /* s2[4k + 2h + g]: rows 4k..4k+3, columns 8h+4g .. +3 */
#pragma GCC unroll 2
    for (h = 0; h < 2; h++) {
      s2[4 * k + 2 * h] = _mm512_unpacklo_epi16(s1[4 * k + h], s1[4 * k + 2 + h]);
      s2[4 * k + 2 * h + 1] = _mm512_unpackhi_epi16(s1[4 * k + h], s1[4 * k + 2 + h]);
    }
  }
#pragma GCC unroll 2
  for (k = 0; k < 2; k++) { /* s3[8k + 2hg + f]: rows 8k..8k+7, columns 8h+4g+2f, +1 */
#pragma GCC unroll 4
    for (h = 0; h < 4; h++) {
      s3[8 * k + 2 * h] = _mm512_unpacklo_epi32(s2[8 * k + h], s2[8 * k + 4 + h]);
      s3[8 * k + 2 * h + 1] = _mm512_unpackhi_epi32(s2[8 * k + h], s2[8 * k + 4 + h]);
    }
  }
#pragma GCC unroll 8
  for (h = 0; h < 8; h++) { /* r[2h + e]: the 16 rows of column 2h + e */
    r[2 * h] = _mm512_unpacklo_epi64(s3[h], s3[8 + h]);
    r[2 * h + 1] = _mm512_unpackhi_epi64(s3[h], s3[8 + h]);
  }
}

static inline __attribute__((always_inline)) TARGET void st16(void *dst, __m128i v, int32_t n) {
  if (n == 16)
    _mm_storeu_si128((__m128i *)dst, v);
  else
    /* 512-bit masked store: AVX512BW, no AVX512VL needed (dispatch.c) */
    _mm512_mask_storeu_epi8(dst, (__mmask64)((1u << n) - 1), _mm512_castsi128_si512(v));
}

/* Stores columns [0, ncol) of a u8_transpose16x64 result, the first n
 * bytes of column c at dst + c·stride. */
static inline __attribute__((always_inline)) TARGET void
u8_store_cols(const __m512i r[16], int32_t ncol, int32_t n, uint8_t *dst, size_t stride) {
  int32_t j;
  for (j = 0; j < 16 && j < ncol; j++) {
    st16(dst + (size_t)j * stride, _mm512_castsi512_si128(r[j]), n);
    if (16 + j < ncol)
      st16(dst + (size_t)(16 + j) * stride, _mm512_extracti32x4_epi32(r[j], 1), n);
    if (32 + j < ncol)
      st16(dst + (size_t)(32 + j) * stride, _mm512_extracti32x4_epi32(r[j], 2), n);
    if (48 + j < ncol)
      st16(dst + (size_t)(48 + j) * stride, _mm512_extracti32x4_epi32(r[j], 3), n);
  }
}

/* u8_store_cols of 16 channels (n = 16), the common case: per quarter of
 * the 64 columns, one unconditional 16-byte store per column when the
 * quarter is whole (the general loop tests each store). */
static inline __attribute__((always_inline)) TARGET void
u8_store_cols16(const __m512i r[16], int32_t ncol, uint8_t *dst, size_t stride) {
  int32_t j;
#define CL_QUARTER(qd)                                                                       \
  if (ncol >= 16 * (qd) + 16) {                                                              \
    for (j = 0; j < 16; j++)                                                                 \
      _mm_storeu_si128((__m128i *)(dst + (size_t)(16 * (qd) + j) * stride),                  \
                       _mm512_extracti32x4_epi32(r[j], qd));                                 \
  } else {                                                                                   \
    for (j = 0; j < ncol - 16 * (qd); j++)                                                   \
      _mm_storeu_si128((__m128i *)(dst + (size_t)(16 * (qd) + j) * stride),                  \
                       _mm512_extracti32x4_epi32(r[j], qd));                                 \
    return;                                                                                  \
  }
  CL_QUARTER(0)
  CL_QUARTER(1)
  CL_QUARTER(2)
  CL_QUARTER(3)
#undef CL_QUARTER
}

/* Lanes [lo, hi) of 64 input bytes, lane j from src + s·j (s = 1 or 2;
 * the rest v). The masked loads access no byte outside the lanes'. */
static inline __attribute__((always_inline)) TARGET __m512i
cl_row_load(__m512i v, const int8_t *src, int32_t s, int32_t lo, int32_t hi) {
  const uintptr_t a = (uintptr_t)src;
  if (s == 1)
    return _mm512_mask_loadu_epi8(v, lane_bits(lo, hi), (const void *)a);
  {
    const uint64_t even = 0x5555555555555555ull;
    const __mmask64 ma = lane_bits(2 * (lo < 32 ? lo : 32), 2 * (hi < 32 ? hi : 32)) & even;
    const __mmask64 mb = lane_bits(2 * (lo > 32 ? lo - 32 : 0), 2 * (hi > 32 ? hi - 32 : 0)) & even;
    const __m512i x = _mm512_maskz_loadu_epi8(ma, (const void *)a);
    const __m512i y = _mm512_maskz_loadu_epi8(mb, (const void *)(a + 64));
    const __m512i t = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(x)),
                                         _mm512_cvtepi16_epi8(y), 1);
    return _mm512_mask_mov_epi8(v, lane_bits(lo, hi), t);
  }
}

/* Grid bytes [col0, col0 + ncol) of one run (a grid row, or the flat
 * planes), for every input channel: rows of 16 channels × 64 columns
 * transposed. Lane j reads src_ci + s·j, inside [lo, hi) (else u_zp);
 * stride s > 2 goes byte by byte into a row buffer. */
static TARGET void cl_grid_run(const cl_conv *c, const int8_t *x_g, size_t plane, int64_t off,
                               int32_t s, int32_t lo, int32_t hi, int32_t ncol, uint8_t *dst) {
  const __m512i zp8 = _mm512_set1_epi8((char)c->p->x_zp), bias8 = _mm512_set1_epi8((char)0x80);
  const int32_t ci_n = c->cpg_in;
  int32_t ci0, i, j;
  for (ci0 = 0; ci0 < ci_n; ci0 += 16) {
    const int32_t nci = ci_n - ci0 < 16 ? ci_n - ci0 : 16;
    __m512i r[16];
#pragma GCC unroll 16
    for (i = 0; i < 16; i++) {
      const int8_t *src = (const int8_t *)((uintptr_t)(x_g + (size_t)(ci0 + i) * plane) + (uintptr_t)off);
      r[i] = zp8;
      if (i < nci && lo < hi) {
        if (s <= 2) {
          r[i] = cl_row_load(zp8, src, s, lo, hi);
        } else {
          int8_t row[64] __attribute__((aligned(64)));
          _mm512_store_si512((void *)row, zp8);
          for (j = lo; j < hi; j++)
            row[j] = src[(int64_t)s * j];
          r[i] = _mm512_load_si512((const void *)row);
        }
      }
      r[i] = _mm512_xor_si512(r[i], bias8);
    }
    u8_transpose16x64(r);
    if (nci == 16)
      u8_store_cols16(r, ncol, dst + ci0, (size_t)ci_n);
    else
      u8_store_cols(r, ncol, nci, dst + ci0, (size_t)ci_n);
  }
}

/* The grid of output rows [oh0, oh0 + rows) of one image's group (x_g:
 * its first input channel): grid[r][col][ci] = u8 of input
 * ((oh0·ph + r)·sh − pad_top, col·sw − pad_left), u_zp outside the input. */
static TARGET void cl_grid(const cl_conv *c, const int8_t *x_g, uint8_t *grid, int32_t oh0,
                           int32_t rows) {
  const tidsp_conv2d_params *p = c->p;
  const size_t plane = (size_t)p->h_in * (size_t)p->w_in;
  const size_t row_bytes = (size_t)c->gw * (size_t)c->cpg_in;
  const int32_t gh = (int32_t)(tidsp_conv_o16_grid_bytes(p, rows) / (int64_t)row_bytes);
  int32_t r, col0, clo, chi;
  if (c->flat) { /* one run over the band's pixels */
    const int32_t f0 = oh0 * p->w_in, P = rows * p->w_in;
    for (col0 = 0; col0 < P; col0 += 64) {
      const int32_t n = P - col0 < 64 ? P - col0 : 64;
      cl_grid_run(c, x_g, plane, f0 + col0, 1, 0, n, n, grid + (size_t)col0 * (size_t)c->cpg_in);
    }
    return;
  }
  /* the grid columns that have input (the same in every row) */
  tidsp_ref_valid_range(-(int64_t)p->pad_left, c->sw, p->w_in, c->gw, &clo, &chi);
  for (r = 0; r < gh; r++) {
    const int64_t ih = ((int64_t)oh0 * c->ph + r) * c->sh - p->pad_top;
    uint8_t *g_row = grid + (size_t)r * row_bytes;
    if (ih < 0 || ih >= p->h_in) {
      memset(g_row, p->x_zp + 128, row_bytes);
      continue;
    }
    for (col0 = 0; col0 < c->gw; col0 += 64) {
      const int32_t n = c->gw - col0 < 64 ? c->gw - col0 : 64;
      const int32_t lo = clo - col0 > 0 ? clo - col0 : 0;
      const int32_t hi = chi - col0 < n ? chi - col0 : n;
      /* lane j reads input column (col0 + j)·sw − pad_left */
      const int64_t off = ih * p->w_in + (int64_t)col0 * c->sw - p->pad_left;
      cl_grid_run(c, x_g, plane, off, c->sw, lo, hi, n, g_row + (size_t)col0 * (size_t)c->cpg_in);
    }
  }
}

/* acc[i][v] = cconst[v] + Σ over the reduction's steps of pixel i's
 * broadcast quad × block v's weights, i < np, v < nv (constants in each
 * caller), stored to tile[i][16v ..]. One flat loop over the steps (tap t,
 * quad q: grid offset soff[t·Q + q]) with the accumulators in registers
 * until the end: a loop nest, or stores inside the loop, makes GCC copy
 * and spill them every step (as in conv_band). */
static inline __attribute__((always_inline)) TARGET void
cl_body(const int32_t *soff, int32_t nstep, size_t vstride, const uint8_t *const *px,
        const int8_t *wp, const __m512i *cconst, int32_t np, int32_t nv, int32_t *tile,
        uintptr_t pf) {
  __m512i acc[CL_NP][CL_NV];
  const uint8_t *x[CL_NP];
  const int8_t *wq = wp;
  int32_t i, v, st;
#pragma GCC unroll 6
  for (i = 0; i < np; i++) {
    x[i] = px[i];
#pragma GCC unroll 4
    for (v = 0; v < nv; v++)
      acc[i][v] = cconst[v];
  }
  for (st = 0; st < nstep; st++) {
    const int32_t o = soff[st];
    __m512i wv[CL_NV];
#pragma GCC unroll 4
    for (v = 0; v < nv; v++)
      wv[v] = _mm512_loadu_si512((const void *)(wq + (size_t)v * vstride));
#pragma GCC unroll 6
    for (i = 0; i < np; i++) {
      const __m512i b = _mm512_set1_epi32((int)load_quad((const int8_t *)x[i] + o));
#pragma GCC unroll 4
      for (v = 0; v < nv; v++)
        acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], b, wv[v]);
    }
    /* one line of weights a later call reads, towards L2 (cl_prefetch) */
    _mm_prefetch((const char *)(pf + (uintptr_t)st * 64u), _MM_HINT_T1);
    wq += 64;
  }
#pragma GCC unroll 6
  for (i = 0; i < np; i++) {
#pragma GCC unroll 4
    for (v = 0; v < nv; v++)
      _mm512_store_si512((void *)(tile + i * CL_NV * 16 + 16 * v), acc[i][v]);
  }
}

/* The per-lane requantization of one panel's vectors. */
typedef struct cl_rq {
  const tidsp_host_rq *q;
  int ss;
  __m512 mult[CL_NV], lo, hi;
  __m512i zp;
  tidsp_host_ss16_consts k[CL_NV];
  /* FLOAT, four vectors, out_zp and the range in int8 and every lane's
   * |m| < 1: cl_rq64's int16 epilogue (rq_pack's) for a pixel's 64 */
  int i16, clamp16;
  __m512i zp16, lo16, hi16;
} cl_rq;

static TARGET void cl_rq_init(cl_rq *r, const tidsp_host_rq *q, int32_t co0, int32_t nv) {
  int32_t v;
  r->q = q;
  r->ss = tidsp_host_rq_is_ss(q);
  r->lo = _mm512_set1_ps(q->lo);
  r->hi = _mm512_set1_ps(q->hi);
  r->zp = _mm512_set1_epi32(q->zp);
  for (v = 0; v < nv; v++) {
    const int32_t c = co0 + 16 * v;
    if (r->ss) {
      if (q->per_channel) {
        tidsp_host_ss16_lanes(&r->k[v], q, c, 16);
      } else {
        tidsp_host_ss16_init(&r->k[v], q);
        tidsp_host_ss16_channel(&r->k[v], q, 0);
      }
    } else {
      float buf[16];
      r->mult[v] = q->per_channel ? _mm512_loadu_ps(tidsp_host_rq_mults(q, c, 16, buf))
                                  : _mm512_set1_ps(tidsp_host_rq_mult(q, 0));
    }
  }
  r->i16 = !r->ss && nv == CL_NV && q->zp >= -128 && q->zp <= 127 && q->out_min >= -128 &&
           q->out_max <= 127;
  for (v = 0; v < nv && r->i16; v++) { /* |m| < 1 in every lane (NaN: not) */
    const __m512 m = r->mult[v];
    r->i16 = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.0f), _CMP_LT_OQ) == 0xFFFF &&
             _mm512_cmp_ps_mask(m, _mm512_set1_ps(-1.0f), _CMP_GT_OQ) == 0xFFFF;
  }
  r->clamp16 = q->out_min != -128 || q->out_max != 127;
  r->zp16 = _mm512_set1_epi16((short)q->zp);
  r->lo16 = _mm512_set1_epi16((short)q->out_min);
  r->hi16 = _mm512_set1_epi16((short)q->out_max);
}

/* One pixel's 64 int8 results from its four vectors at t (r->i16: the
 * reasoning of rq_pack's int16 epilogue, lane by lane), in channel order. */
static inline __attribute__((always_inline)) TARGET __m512i cl_rq64(const cl_rq *r,
                                                                   const int32_t *t) {
  __m512i o[CL_NV], h0, h1;
  int32_t v;
#pragma GCC unroll 4
  for (v = 0; v < CL_NV; v++)
    o[v] = _mm512_cvtps_epi32(
        _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512((const void *)(t + 16 * v))), r->mult[v]));
  h0 = _mm512_adds_epi16(_mm512_packs_epi32(o[0], o[1]), r->zp16);
  h1 = _mm512_adds_epi16(_mm512_packs_epi32(o[2], o[3]), r->zp16);
  if (r->clamp16) {
    h0 = _mm512_min_epi16(_mm512_max_epi16(h0, r->lo16), r->hi16);
    h1 = _mm512_min_epi16(_mm512_max_epi16(h1, r->lo16), r->hi16);
  }
  /* per 128-bit lane L: dwords 4L..4L+3 of vectors 0, 1, 2, 3 */
  return _mm512_permutexvar_epi32(
      _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0),
      _mm512_packs_epi16(h0, h1));
}

/* 16 lanes' int8 results (the FLOAT formula as rq_pack's). */
static inline __attribute__((always_inline)) TARGET __m128i cl_rq16(const cl_rq *r, int32_t v,
                                                                  __m512i a) {
  if (r->ss)
    return _mm512_cvtsepi32_epi8(tidsp_host_ss16_i32(a, &r->k[v]));
  {
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(a), r->mult[v]);
    f = _mm512_max_ps(f, r->lo); /* f > lo ? f : lo (NaN → lo) */
    f = _mm512_min_ps(f, r->hi);
    return _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), r->zp));
  }
}

/* One call: pixels f0 .. f0 + np − 1 (flat output order) of the panel's
 * nv blocks, their sums in tile[i][16v + lane]. */
static inline __attribute__((always_inline)) TARGET void
cl_call(const cl_conv *c, const uint8_t *grid, int32_t f0, const int8_t *wp, const __m512i *cconst,
        int32_t np, int32_t nv, int32_t *tile, uintptr_t pf) {
  const tidsp_conv2d_params *p = c->p;
  const uint8_t *px[CL_NP];
  int32_t i;
  for (i = 0; i < np; i++) {
    const int32_t oh = (f0 + i) / p->w_out, ow = (f0 + i) % p->w_out;
    px[i] = grid + ((size_t)oh * (size_t)c->ph * (size_t)c->gw + (size_t)ow * (size_t)c->pw) *
                       (size_t)c->cpg_in;
  }
  cl_body(c->soff, c->nstep, c->vstride, px, wp, cconst, np, nv, tile, pf);
}

#define CL_CALL(NP, NV)                                                                    \
  static __attribute__((noinline)) TARGET void cl_call_##NP##_##NV(                       \
      const cl_conv *c, const uint8_t *grid, int32_t f0, const int8_t *wp,                \
      const __m512i *cconst, int32_t *tile, uintptr_t pf) {                               \
    cl_call(c, grid, f0, wp, cconst, NP, NV, tile, pf);                                   \
  }
#define CL_CALLS(NP) CL_CALL(NP, 1) CL_CALL(NP, 2) CL_CALL(NP, 3) CL_CALL(NP, 4)
CL_CALLS(1)
CL_CALLS(2)
CL_CALLS(3)
CL_CALLS(4)
CL_CALLS(5)
CL_CALLS(6)

typedef void (*cl_fn)(const cl_conv *, const uint8_t *, int32_t, const int8_t *,
                      const __m512i *, int32_t *, uintptr_t);
#define CL_ROW(NP) {cl_call_##NP##_1, cl_call_##NP##_2, cl_call_##NP##_3, cl_call_##NP##_4}
static const cl_fn CL_FN[CL_NP][CL_NV] = {CL_ROW(1), CL_ROW(2), CL_ROW(3),
                                          CL_ROW(4), CL_ROW(5), CL_ROW(6)};

/* nv blocks of 16 OIHW 1×1 weight rows (row co at w_co + co·w_stride, K =
 * cpg_in bytes) in the O16 order, each block's Σw after its weights (as
 * the compiler packs them): 16 rows × 16 quads at a time, one dword
 * transpose; Σw by vpdpbusd of the packed vectors with ones. */
static TARGET void cl_pack_1x1(const cl_conv *c, const int8_t *w_co, size_t w_stride, int32_t nv,
                               int8_t *wbuf) {
  const int32_t K = c->cpg_in;
  const __m512i ones = _mm512_set1_epi8(1);
  int32_t v, k0, l, q;
  for (v = 0; v < nv; v++) {
    int8_t *blk = wbuf + (size_t)v * c->vstride;
    __m512i sum = _mm512_setzero_si512();
    for (k0 = 0; k0 < K; k0 += 64) {
      const int32_t nq = (K - k0 < 64 ? K - k0 : 64) / 4;
      const __mmask64 m = lane_bits(0, 4 * nq);
      __m512i r[16];
#pragma GCC unroll 16
      for (l = 0; l < 16; l++)
        r[l] = _mm512_maskz_loadu_epi8(m, w_co + (size_t)(16 * v + l) * w_stride + k0);
      tidsp_zmm_transpose16(r); /* r[q]: quad q of the 16 rows */
      for (q = 0; q < nq; q++) {
        _mm512_store_si512((void *)(blk + (size_t)(k0 / 4 + q) * 64), r[q]);
        sum = _mm512_dpbusd_epi32(sum, ones, r[q]);
      }
    }
    _mm512_storeu_si512((void *)(blk + (size_t)K * 16), sum);
  }
}

/* The int8 results of pixels [f, f + n) (f a multiple of 16, n ≤ 16, in
 * the ring at f % CL_RING on) for the panel's nch channels, transposed
 * into their NCHW rows y_co + ch·P + f. */
static inline __attribute__((always_inline)) TARGET void
cl_flush(const int8_t (*ring)[CL_NV * 16], int32_t f, int32_t n, int32_t nch, int8_t *y_co,
         int32_t P) {
  __m512i r[16];
  int32_t i;
#pragma GCC unroll 16
  for (i = 0; i < 16; i++) /* rows past n: stale, never stored */
    r[i] = _mm512_load_si512((const void *)ring[(uint32_t)f % CL_RING + (uint32_t)i]);
  u8_transpose16x64(r);
  if (n == 16)
    u8_store_cols16(r, nch, (uint8_t *)y_co + f, (size_t)P);
  else
    u8_store_cols(r, nch, n, (uint8_t *)y_co + f, (size_t)P);
}

/* Where call gi of the panel at c0 prefetches its nstep lines: a layer's
 * weights are streamed once per pixel group, the first time from L3 or
 * memory (ResNet-18's 7² layers: 2.4 MB per layer, more than L2; in the
 * model they ran 18 % slower than in conv_bench's warm loop). So calls
 * 1, 2, … of a panel pull the next panel's lines (in the group's cyclic
 * order, O16 only: the OIHW 1×1 panels are packed per call) towards L2,
 * one line per step, spread over the panel's compute; a call with nothing
 * left to fetch points at its own weights, already cached (a prefetch
 * never faults, and is harmless on a line held). */
static inline uintptr_t cl_prefetch(const cl_conv *c, const int8_t *w_g, int32_t c0, int32_t gi,
                                    const int8_t *wp) {
  const int32_t cn = c0 + 16 * CL_NV < c->cpg_out ? c0 + 16 * CL_NV : 0;
  const int32_t nvn = (c->cpg_out - cn) / 16 < CL_NV ? (c->cpg_out - cn) / 16 : CL_NV;
  const size_t lines = (size_t)nvn * c->vstride / 64, from = (size_t)(gi - 1) * (size_t)c->nstep;
  if (!c->o16 || gi == 0 || cn == c0 || from >= lines)
    return (uintptr_t)wp;
  return (uintptr_t)(w_g + (size_t)(cn / 16) * c->vstride) + from * 64u;
}

static __attribute__((noinline)) TARGET void conv_cl(const cl_conv *plan, const int8_t *x,
                                                     const int8_t *w, const int32_t *bias,
                                                     const tidsp_host_rq *q, int8_t *y) {
  uint8_t grid[TIDSP_CONV_O16_MAX_GRID] __attribute__((aligned(64)));
  int32_t soff[TIDSP_REF_MAX_TAPS / 4 + 1];
  int8_t wbuf[CL_WBUF] __attribute__((aligned(64))); /* a panel of OIHW 1×1 weights, O16 */
  cl_conv cc = *plan, *c = &cc; /* with soff */
  /* results wait here, pixel-major, until 16 pixels can be transposed */
  int8_t ring[CL_RING][CL_NV * 16] __attribute__((aligned(64)));
  int32_t tile[CL_NP * CL_NV * 16] __attribute__((aligned(64)));
  const tidsp_conv2d_params *p = c->p;
  const size_t in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const int32_t P = p->h_out * p->w_out;
  const uint32_t u_zp = (uint32_t)(p->x_zp + 128);
  int32_t n, g, c0, v, gi, i, oh0;
  cl_steps(c, soff);
  for (n = 0; n < p->n; n++) {
    for (g = 0; g < p->groups; g++) {
      const int8_t *x_g = x + ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)c->cpg_in) * in_plane;
      const int8_t *w_g = w + (size_t)(g * c->cpg_out / 16) * c->vstride;
      for (oh0 = 0; oh0 < p->h_out; oh0 += c->rows) {
        const int32_t rows = p->h_out - oh0 < c->rows ? p->h_out - oh0 : c->rows;
        const int32_t Pb = rows * p->w_out; /* the band's pixels, from flat pixel oh0·w_out */
        const int32_t ng = (Pb + CL_NP - 1) / CL_NP, base = Pb / ng, extra = Pb % ng;
        cl_grid(c, x_g, grid, oh0, rows);
        for (c0 = 0; c0 < c->cpg_out; c0 += 16 * CL_NV) {
          const int32_t co0 = g * c->cpg_out + c0;
          const int32_t nv = (c->cpg_out - c0) / 16 < CL_NV ? (c->cpg_out - c0) / 16 : CL_NV;
          const int8_t *wp = w_g + (size_t)(c0 / 16) * c->vstride;
          int8_t *y_co = y + ((size_t)n * (size_t)p->c_out + (size_t)co0) * (size_t)P +
                         (size_t)oh0 * (size_t)p->w_out;
          __m512i cconst[CL_NV];
          cl_rq r;
          int32_t f0 = 0, done = 0; /* the band's pixels computed, and stored */
          if (!c->o16) { /* (one band: at most CL_OIHW_PIXELS outputs) */
            const size_t w_stride = tidsp_host_conv_w_stride(p);
            cl_pack_1x1(c, w + (size_t)co0 * w_stride, w_stride, nv, wbuf);
            wp = wbuf;
          }
          for (v = 0; v < nv; v++) { /* bias − u_zp·Σw, lane by lane */
            const __m512i s = _mm512_loadu_si512((const void *)(wp + (size_t)(v + 1) * c->vstride - 64));
            cconst[v] = _mm512_sub_epi32(
                bias ? _mm512_loadu_si512((const void *)(bias + co0 + 16 * v)) : _mm512_setzero_si512(),
                _mm512_mullo_epi32(s, _mm512_set1_epi32((int32_t)u_zp)));
          }
          cl_rq_init(&r, q, co0, nv);
          for (gi = 0; gi < ng; gi++) {
            const int32_t np = base + (gi < extra);
            CL_FN[np - 1][nv - 1](c, grid, f0, wp, cconst, tile, cl_prefetch(c, w_g, c0, gi, wp));
            if (r.i16) {
              for (i = 0; i < np; i++)
                _mm512_store_si512((void *)ring[(uint32_t)(f0 + i) % CL_RING],
                                   cl_rq64(&r, tile + i * CL_NV * 16));
            } else {
              for (i = 0; i < np; i++)
                for (v = 0; v < nv; v++)
                  _mm_store_si128((__m128i *)(ring[(f0 + i) % CL_RING] + 16 * v),
                                  cl_rq16(&r, v, _mm512_load_si512((const void *)(tile + i * CL_NV * 16 + 16 * v))));
            }
            f0 += np;
            /* pending pixels stay under 16 + CL_NP ≤ CL_RING */
            for (; f0 - done >= 16; done += 16)
              cl_flush((const int8_t(*)[CL_NV * 16])ring, done, 16, 16 * nv, y_co, P);
          }
          if (done < Pb)
            cl_flush((const int8_t(*)[CL_NV * 16])ring, done, Pb - done, 16 * nv, y_co, P);
        }
      }
    }
  }
}

int32_t tidsp_conv2d_i8__host_avx512vnni(const tidsp_conv2d_params *p,
                                         const int8_t *x, const int8_t *w,
                                         const int32_t *bias, const void *rq,
                                         int8_t *y) {
  tidsp_host_rq q;
  vnni_band b;
  ph_plan ph;
  cl_conv cl;
  if (!tidsp_host_conv_fast_ok(p, x, w, rq, y))
    return tidsp_conv2d_i8__ref(p, x, w, bias, rq, y);
  if (p->w_layout != TIDSP_CONV_W_OIHW) { /* O16 (the only other one) */
    if (!cl_plan(p, &cl))
      return tidsp_conv2d_i8__ref(p, x, w, bias, rq, y);
    tidsp_host_rq_init(&q, &p->rq, rq, p->c_out);
    conv_cl(&cl, x, w, bias, &q, y);
    return TIDSP_OK;
  }
  tidsp_host_rq_init(&q, &p->rq, rq, p->c_out);
  if (cl_plan(p, &cl)) /* a 1×1 conv on a small map */
    conv_cl(&cl, x, w, bias, &q, y);
  else if (ph_plan_make(p, &ph))
    conv_phase(p, &ph, x, w, bias, &q, y);
  else if (band_plan(p, &b))
    conv_band(p, &b, x, w, bias, &q, y);
  else
    conv_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
