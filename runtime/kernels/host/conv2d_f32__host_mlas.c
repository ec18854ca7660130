/*
 * conv2d_f32__host_mlas.c — tidsp_conv2d_f32 (ref/conv2d_f32.c) summed in
 * the order ONNX Runtime's default CPU session sums a float Conv, so that
 * a float network is bit-identical to ORT on the same CPU.
 *
 * At ORT_ENABLE_ALL, ORT's NchwcTransformer turns every ungrouped 2-D
 * float Conv with constant weights into MLAS's NCHWc convolution, whose
 * channel block B is 16 on AVX-512F and 8 on AVX2/FMA3 (the ISA MLAS picks
 * at run time; this file picks the same, tidsp_mlas_f32_block). Per
 * output element MLAS computes, in fused multiply-adds (one rounding each):
 *
 *   - input channels in groups; each group's partial sum starts at 0 and
 *     runs over kernel rows, kernel columns, then the group's channels;
 *   - out = part₀, then out = partᵢ + out for each later group (the kernel's
 *     "accumulate output" flag adds the stored output after the group);
 *   - finally out + bias (the "bias addition" flag of the last group).
 *
 * A fused Add (the `sum` input, ORT's NCHWc "Sum": its NchwcTransformer
 * feeds the other operand of an Add into a single-use convolution, and
 * MLAS starts from that tensor in the output buffer) enters with the first
 * group: out = part₀ + sum, then the later groups, then + bias
 * (compiler/passes/fuse_conv_add_f32.c decides when ORT fuses, for each
 * block: where params.sum_in_conv lacks B's bit, ORT runs the Add after
 * the convolution, and so does this file).
 *
 * The groups depend on the layout the transformer chose (per convolution
 * group, c = its input channels):
 *   c < B                 NCHW input ("ConvNchw" kernel): one channel each;
 *   1×1, no pads          pointwise kernel: 128 channels at a time;
 *   otherwise             NCHWc: B channels (c padded with zero channels to
 *                         a multiple of B, which changes no sum).
 * Taps that fall into the padding are skipped, as MLAS skips them (adding
 * a 0 product would not change the sum either).
 *
 * Grouped convolutions: a depthwise one (one input and one output channel
 * per group) runs in MLAS's NCHWc depthwise kernel: per output, one chain
 * over kernel rows and columns from 0, then + bias (a group of one channel
 * below). Groups of whole blocks of B input and output channels run in the
 * NCHWc kernels group by group, each as an ungrouped convolution.
 *
 * Convolutions ORT keeps in NCHW (params.mlas_nchw's bit for B, set by the
 * compiler from compiler/passes/match/ort_nchwc.c: e.g. B or more input
 * channels not a multiple of 4, depthwise ones whose channels are not a
 * multiple of 4, other grouped ones, runtime weights) run MLAS's generic
 * convolution:
 * per group, im2col (taps in channel, kernel row, kernel column order;
 * padding taps are 0 products) and one SGEMM, W [M][K] · col [K][N], then
 * + bias. MLAS's SGEMM has three orders (conv_nchw below):
 *   - M = 1 (one output channel per group, e.g. depthwise): the AVX M = 1
 *     kernel, blocks of 4 taps multiplied and added left to right, each
 *     block then added to the output;
 *   - N = 1 (one output pixel, e.g. a squeeze-excitation conv on a pooled
 *     1×1 tensor): the AVX N = 1 kernel, 8 lanes over the taps, reduced in
 *     a tree that depends on the block of 4, 2 or 1 output rows;
 *   - otherwise the FMA kernels: K strides (128, or up to 1024 for few
 *     output pixels) each summed from 0, added in order.
 * A fused Add's sum is the output's starting value (SGEMM's beta = 1).
 * CPUs without FMA (MLAS's SSE/AVX kernels multiply and add separately)
 * run the reference.
 *
 * Verified against ORT 1.30 (AVX-512F) on MTCNN's P/R/O-Net convolutions
 * (100 % bit-identical per layer and per net), PP-OCR cls (every layer),
 * and single convolutions of each kind
 * (tests/e2e/test_conv_mlas_vs_ort.py); tests/unit/test_kernel_mlas_f32.c
 * checks this file against a scalar model of the order. B = 8 was checked
 * against ORT 1.30 on an AVX2 + FMA3 CPU without AVX-512 (AMD Zen 3), the
 * same tests: there ORT's layouts differ too (e.g. 10 input channels are a
 * plain NCHW conv, two groups of 8 channels NCHWc), hence one mlas_nchw
 * bit per block.
 *
 * Speed: the NCHWc, pointwise and depthwise orders, and the NCHW 1×1
 * convolutions without padding taps (SGEMM's FMA kernel: channel groups of
 * one K stride), run in register tiles of output channels × one output
 * row's pixels (conv_tiled below); only the blocking changes, every
 * element keeps its order and roundings (the unit test checks both vector
 * widths against the scalar model). The im2col FMA order (M > 1, N > 1)
 * runs 8 or 16 output pixels per vector, im2col gathered transposed, each
 * lane one output's chain (conv2d_f32_nchw_body.h). The M = 1 and N = 1
 * orders stay scalar.
 */
#include <math.h>

#include "../kernel_variants.h"
#include "../ref/conv_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#include "fma_exact_begin.h"

/* MLAS's pointwise kernel takes at most this many input channels per call */
#define MLAS_POINTWISE_CHANNELS 128

/* Channels per group for p on a CPU whose MLAS block is `block`; 0 when
 * MLAS's order for p is not known (the reference runs). */
static int32_t channel_group(const tidsp_conv2d_params *p, int32_t block) {
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  if (p->groups != 1) {
    if (cpg_in == 1 && cpg_out == 1)
      return 1; /* depthwise */
    /* grouped NCHWc needs whole blocks of channels per group, in and out;
     * then each group is summed as an ungrouped convolution */
    if (cpg_in % block != 0 || cpg_out % block != 0)
      return 0;
  }
  if (cpg_in < block)
    return 1;
  if (p->k_h == 1 && p->k_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
      (p->h_out - 1) * p->stride_h + 1 <= p->h_in && (p->w_out - 1) * p->stride_w + 1 <= p->w_in)
    return MLAS_POINTWISE_CHANNELS;
  return block;
}

/* ---- The NCHWc / pointwise / depthwise orders in register tiles ----
 *
 * A tile is up to CO output channels × one output row's pixels [ow0,
 * ow0 + cols), cols ≤ 16·NV (AVX-512F: 8 channels × 2 zmm) or 8·NV (AVX2:
 * 6 × 2 ymm). Per channel group every accumulator starts at 0 and takes
 * one fused multiply-add per tap in MLAS's order (kernel rows, columns,
 * then the group's channels), each lane being one output element; only
 * the blocking over channels and pixels is new, so every element rounds
 * as the one-channel scalar loop did. A tap in the padding is skipped per
 * lane (masked load and masked fused multiply-add leave the lane as it
 * was: not even a 0 product, which could turn a −0 into +0). Then
 * out = part₀ (+ sum), partᵢ + out, and + bias after the last group,
 * each written to the output row (masked past cols). */
#define CO512 8
#define NV512 2
#define CO256 6
#define NV256 2
/* Tiles whose channel groups are one tap each (a 1×1 kernel over fewer
 * than B channels: the NCHW-input order's single channels) keep `out` in
 * registers across the groups rather than adding each group's sum in the
 * output row: fewer channels per tile then. (With 3×3 kernels the row's
 * traffic is spread over 9 taps and the wider tile is faster: measured
 * with bench/conv_f32_bench.c.) */
#define CO_KEEP512 4
#define CO_KEEP256 3
#define TILE_MEM 0  /* input shared by the tile's channels, out in the output row */
#define TILE_DW 1   /* depthwise: each channel its own input (one group) */
#define TILE_KEEP 2 /* input shared, out in registers */
/* explicit targets as well as the region's pragma: clang ignores
 * `#pragma GCC target` (see matmul_f32__host_mlas.c) */
#define T512 __attribute__((target("avx512f,avx2,fma")))
#define T256 __attribute__((target("avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

typedef struct conv_tile {
  const tidsp_conv2d_params *p;
  const float *x;      /* input channel 0 of the group of channel co0 (image n) */
  size_t x_co;         /* between the inputs of co and co + 1: a plane when depthwise, else 0 */
  const float *w;      /* weights of co0; w_co apart */
  size_t w_co;
  const float *bias;   /* bias + co0, or NULL */
  const float *s;      /* the sum's row oh of co0 at ow0, or NULL; y_co apart as y */
  float *y;            /* the output's row oh of co0 at ow0 */
  size_t y_co;
  int32_t oh, ow0, cpg_in, group;
} conv_tile;

/* ---- AVX-512F: nco ≤ CO512 channels, nv zmm; masked lanes by mask
 * registers ---- */
#define W 16
#define CO CO512
#define NV NV512
#define CO_KEEP CO_KEEP512
#define VEC __m512
#define VMASK __mmask16
#define T T512
#define SFX(name) name##512
#define UNROLL_CO _Pragma("GCC unroll 8")
#define VZERO() _mm512_setzero_ps()
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VSET1(x) _mm512_set1_ps(x)
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VLOAD_MASK(p, m) _mm512_maskz_loadu_ps((m), (p))
#define VSTORE_MASK(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define MASK_ALL ((__mmask16)0xFFFF)
/* stride 2: a vector's 16 pixels are the even ones of 32 inputs */
#define TILE_CONSTS                                                                                                  \
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);                      \
  const __m512i step = _mm512_mullo_epi32(iota, _mm512_set1_epi32(sw));                                              \
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
/* gi: stride ≥ 3, the lanes' columns clamped into the row */
#define TILE_VARS                                                                                                    \
  __m512 acc[CO512][NV512], xv[NV512], out[CO_KEEP512][NV512];                                                       \
  __mmask16 mk[NV512], m2[2 * NV512] = {0};                                                                          \
  __m512i gi[NV512] = {0};
/* m2: stride 2, the inputs inside the row for the two loads */
#define TILE_MASKS                                                                                                   \
  __mmask16 any = 0;                                                                                                 \
  _Pragma("GCC unroll 2") for (j = 0; j < nv; j++) {                                                                 \
    const __m512i iw = _mm512_add_epi32(step, _mm512_set1_epi32(off + 16 * j * sw));                                 \
    if (sw > 2)                                                                                                      \
      gi[j] = _mm512_min_epi32(_mm512_max_epi32(iw, _mm512_setzero_si512()), _mm512_set1_epi32(p->w_in - 1));        \
    mk[j] = _mm512_cmpge_epi32_mask(iw, _mm512_setzero_si512()) &                                                    \
            _mm512_cmplt_epi32_mask(iw, _mm512_set1_epi32(p->w_in)) & (j == nv - 1 ? last : (__mmask16)0xFFFF);      \
    any |= mk[j];                                                                                                    \
    if (sw == 2) {                                                                                                   \
      const __m512i e = _mm512_add_epi32(iota, _mm512_set1_epi32(off + 32 * j));                                     \
      const __m512i e16 = _mm512_add_epi32(e, _mm512_set1_epi32(16));                                                \
      m2[2 * j] = _mm512_cmpge_epi32_mask(e, _mm512_setzero_si512()) &                                               \
                  _mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(p->w_in));                                            \
      m2[2 * j + 1] = _mm512_cmpge_epi32_mask(e16, _mm512_setzero_si512()) &                                         \
                      _mm512_cmplt_epi32_mask(e16, _mm512_set1_epi32(p->w_in));                                      \
    }                                                                                                                \
  }
/* stride ≥ 3: two ymm gathers (GCC's masked zmm gather macro trips -Wconversion) */
#define TILE_LOAD_X(j)                                                                                               \
  do {                                                                                                               \
    if (sw == 1) {                                                                                                   \
      xv[j] = _mm512_maskz_loadu_ps(mk[j], xc + off + 16 * j);                                                       \
    } else if (sw == 2) {                                                                                            \
      xv[j] = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m2[2 * j], xc + off + 32 * j), even,                      \
                                     _mm512_maskz_loadu_ps(m2[2 * j + 1], xc + off + 32 * j + 16));                  \
    } else {                                                                                                         \
      const __m256 lo = _mm256_i32gather_ps(xc, _mm512_castsi512_si256(gi[j]), 4);                                   \
      const __m256 hi = _mm256_i32gather_ps(xc, _mm512_extracti64x4_epi64(gi[j], 1), 4);                             \
      xv[j] = _mm512_castpd_ps(                                                                                      \
          _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));                \
    }                                                                                                                \
  } while (0)
#define TILE_FMA(co, j) (acc[co][j] = _mm512_mask3_fmadd_ps(xv[j], wv, acc[co][j], mk[j]))
#define VLOADU(p) _mm512_loadu_ps(p)
#define VSTOREU(p, v) _mm512_storeu_ps((p), (v))
#define VFMADD(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#include "conv2d_f32_nchw_body.h"
#include "conv2d_f32_tile_body.h"

#define CASE512(C, V) \
  case (C) * 4 + (V): \
    if (mode == TILE_DW && unit) \
      tile512(t, C, V, TILE_DW, last, 1); \
    else if (mode == TILE_DW) \
      tile512(t, C, V, TILE_DW, last, 0); \
    else if (mode == TILE_KEEP && (C) <= CO_KEEP512) \
      tile512(t, C, V, TILE_KEEP, last, 0); \
    else \
      tile512(t, C, V, TILE_MEM, last, 0); \
    break;
#define CO_CASES512(C) CASE512(C, 1) CASE512(C, 2)

static T512 void tile512_any(const conv_tile *t, int32_t nco, int32_t cols, int mode) {
  const int unit = t->p->stride_w == 1;
  const int32_t nv = (cols + 15) / 16, rem = cols - 16 * (nv - 1);
  const __mmask16 last = (__mmask16)(0xFFFFu >> (16 - rem));
  switch (nco * 4 + nv) {
    CO_CASES512(1) CO_CASES512(2) CO_CASES512(3) CO_CASES512(4)
    CO_CASES512(5) CO_CASES512(6) CO_CASES512(7) CO_CASES512(8)
  default:
    break;
  }
}

/* ---- AVX2 + FMA3: the same in ymm; a masked lane keeps its value by a
 * blend of the fused multiply-add's result ---- */
#define W 8
#define CO CO256
#define NV NV256
#define CO_KEEP CO_KEEP256
#define VEC __m256
#define VMASK __m256i
#define T T256
#define SFX(name) name##256
#define UNROLL_CO _Pragma("GCC unroll 6")
#define VZERO() _mm256_setzero_ps()
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VSET1(x) _mm256_set1_ps(x)
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VLOAD_MASK(p, m) _mm256_maskload_ps((p), (m))
#define VSTORE_MASK(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define MASK_ALL ones
#define TILE_CONSTS                                                                                                  \
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                                                    \
  const __m256i step = _mm256_mullo_epi32(iota, _mm256_set1_epi32(sw));                                              \
  const __m256i ones = _mm256_set1_epi32(-1);
/* mf: mk as floats, for the blend; gi: stride ≥ 3, the lanes' columns
 * clamped into the row */
#define TILE_VARS                                                                                                    \
  __m256 acc[CO256][NV256], xv[NV256], mf[NV256], out[CO_KEEP256][NV256];                                            \
  __m256i mk[NV256], m2[2 * NV256] = {{0}};                                                                          \
  __m256i gi[NV256] = {{0}};
/* pad: a padding lane among the tile's pixels, which needs the blend; m2:
 * stride 2, the inputs inside the row for the two loads */
#define TILE_MASKS                                                                                                   \
  int any = 0, pad = 0;                                                                                              \
  _Pragma("GCC unroll 2") for (j = 0; j < nv; j++) {                                                                 \
    const __m256i iw = _mm256_add_epi32(step, _mm256_set1_epi32(off + 8 * j * sw));                                  \
    if (sw > 2)                                                                                                      \
      gi[j] = _mm256_min_epi32(_mm256_max_epi32(iw, _mm256_setzero_si256()), _mm256_set1_epi32(p->w_in - 1));        \
    const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), iw),                           \
                                           _mm256_cmpgt_epi32(_mm256_set1_epi32(p->w_in), iw));                      \
    const __m256i lane = j == nv - 1 ? last : ones;                                                                  \
    mk[j] = _mm256_and_si256(in, lane);                                                                              \
    mf[j] = _mm256_castsi256_ps(mk[j]);                                                                              \
    any |= !_mm256_testz_si256(mk[j], mk[j]);                                                                        \
    pad |= !_mm256_testc_si256(in, lane);                                                                            \
    if (sw == 2) {                                                                                                   \
      const __m256i e = _mm256_add_epi32(iota, _mm256_set1_epi32(off + 16 * j));                                     \
      const __m256i e8 = _mm256_add_epi32(e, _mm256_set1_epi32(8));                                                  \
      const __m256i wi = _mm256_set1_epi32(p->w_in), z = _mm256_setzero_si256();                                     \
      m2[2 * j] = _mm256_andnot_si256(_mm256_cmpgt_epi32(z, e), _mm256_cmpgt_epi32(wi, e));                          \
      m2[2 * j + 1] = _mm256_andnot_si256(_mm256_cmpgt_epi32(z, e8), _mm256_cmpgt_epi32(wi, e8));                    \
    }                                                                                                                \
  }
/* stride 2: the even elements of 16 inputs, [a0 a2 b0 b2 | a4 a6 b4 b6] in
 * 64-bit pairs 0 2 1 3; stride ≥ 3: clamped columns, every read inside the
 * row, a padding lane's value dropped by the blend */
#define TILE_LOAD_X(j)                                                                                               \
  do {                                                                                                               \
    if (sw == 1) {                                                                                                   \
      xv[j] = _mm256_maskload_ps(xc + off + 8 * j, mk[j]);                                                           \
    } else if (sw == 2) {                                                                                            \
      const __m256 ev = _mm256_shuffle_ps(_mm256_maskload_ps(xc + off + 16 * j, m2[2 * j]),                          \
                                          _mm256_maskload_ps(xc + off + 16 * j + 8, m2[2 * j + 1]),                  \
                                          _MM_SHUFFLE(2, 0, 2, 0));                                                  \
      xv[j] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));                \
    } else {                                                                                                         \
      xv[j] = _mm256_i32gather_ps(xc, gi[j], 4);                                                                     \
    }                                                                                                                \
  } while (0)
#define TILE_FMA(co, j)                                                                                              \
  do {                                                                                                               \
    const __m256 f = _mm256_fmadd_ps(xv[j], wv, acc[co][j]);                                                         \
    acc[co][j] = pad ? _mm256_blendv_ps(acc[co][j], f, mf[j]) : f;                                                   \
  } while (0)
#define VLOADU(p) _mm256_loadu_ps(p)
#define VSTOREU(p, v) _mm256_storeu_ps((p), (v))
#define VFMADD(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#include "conv2d_f32_nchw_body.h"
#include "conv2d_f32_tile_body.h"

#define CASE256(C, V) \
  case (C) * 4 + (V): \
    if (mode == TILE_DW && unit) \
      tile256(t, C, V, TILE_DW, last, 1); \
    else if (mode == TILE_DW) \
      tile256(t, C, V, TILE_DW, last, 0); \
    else if (mode == TILE_KEEP && (C) <= CO_KEEP256) \
      tile256(t, C, V, TILE_KEEP, last, 0); \
    else \
      tile256(t, C, V, TILE_MEM, last, 0); \
    break;
#define CO_CASES256(C) CASE256(C, 1) CASE256(C, 2)

static T256 void tile256_any(const conv_tile *t, int32_t nco, int32_t cols, int mode) {
  const int unit = t->p->stride_w == 1;
  const int32_t nv = (cols + 7) / 8;
  const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8 * (nv - 1)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  switch (nco * 4 + nv) {
    CO_CASES256(1) CO_CASES256(2) CO_CASES256(3) CO_CASES256(4) CO_CASES256(5) CO_CASES256(6)
  default:
    break;
  }
}

/* The NCHWc / pointwise / depthwise orders (channel groups of `group`)
 * with `lanes` float lanes per vector. */
static void conv_tiled(const tidsp_conv2d_params *p0, const float *x, const float *w,
                       const float *bias, const float *sum, float *y, int32_t group, int32_t lanes) {
  tidsp_conv2d_params flat = *p0;
  const tidsp_conv2d_params *p = p0;
  const int32_t cpg_in = p0->c_in / p0->groups, cpg_out = p0->c_out / p0->groups;
  const int dw = cpg_in == 1 && cpg_out == 1 && p0->groups > 1;
  /* several groups of one tap each: out in registers */
  const int keep = !dw && cpg_in > group && group * p0->k_h * p0->k_w <= 1;
  const int mode = dw ? TILE_DW : keep ? TILE_KEEP : TILE_MEM;
  const int32_t co_tile = lanes == 16 ? (keep ? CO_KEEP512 : CO512) : (keep ? CO_KEEP256 : CO256);
  const int32_t px_tile = lanes == 16 ? 16 * NV512 : 8 * NV256;
  int32_t n, co0, oh, ow0;
  conv_tile t;

  /* a pointwise convolution with unit strides and no pads reads and
   * writes whole planes: one row of h·w pixels fills the vectors better */
  if (p0->k_h == 1 && p0->k_w == 1 && p0->stride_h == 1 && p0->stride_w == 1 && p0->pad_top == 0 &&
      p0->pad_left == 0 && p0->h_out == p0->h_in && p0->w_out == p0->w_in) {
    flat.w_in = flat.w_out = p0->h_in * p0->w_in;
    flat.h_in = flat.h_out = 1;
    p = &flat;
  }
  t.p = p;
  t.cpg_in = cpg_in;
  t.group = group;
  t.x_co = dw ? (size_t)p->h_in * (size_t)p->w_in : 0;
  t.w_co = (size_t)cpg_in * (size_t)p->k_h * (size_t)p->k_w;
  t.y_co = (size_t)p->h_out * (size_t)p->w_out;
  for (n = 0; n < p->n; n++) {
    for (co0 = 0; co0 < p->c_out;) {
      /* a tile's channels share their group (depthwise: one each) */
      const int32_t g_end = dw ? p->c_out : (co0 / cpg_out + 1) * cpg_out;
      const int32_t nco = g_end - co0 < co_tile ? g_end - co0 : co_tile;
      const size_t plane0 = ((size_t)n * (size_t)p->c_out + (size_t)co0) * t.y_co;
      t.x = x + ((size_t)n * (size_t)p->c_in + (size_t)(co0 / cpg_out) * (size_t)cpg_in) *
                    (size_t)p->h_in * (size_t)p->w_in;
      t.w = w + (size_t)co0 * t.w_co;
      t.bias = bias ? bias + co0 : NULL;
      for (oh = 0; oh < p->h_out; oh++) {
        t.oh = oh;
        for (ow0 = 0; ow0 < p->w_out; ow0 += px_tile) {
          const int32_t cols = p->w_out - ow0 < px_tile ? p->w_out - ow0 : px_tile;
          const size_t at = plane0 + (size_t)oh * (size_t)p->w_out + (size_t)ow0;
          t.ow0 = ow0;
          t.y = y + at;
          t.s = sum ? sum + at : NULL;
          if (lanes == 16)
            tile512_any(&t, nco, cols, mode);
          else
            tile256_any(&t, nco, cols, mode);
        }
      }
      co0 += nco;
    }
  }
}

/* ---- ORT's plain NCHW convolution: MLAS's im2col + SGEMM (MlasConv) ----
 *
 * Per group, the taps of an output pixel in im2col order (channel, kernel
 * row, kernel column; a padding tap is a 0 product, as MLAS's column
 * buffer holds 0 there) are K = c·k_h·k_w; M = the group's output
 * channels, N = its output pixels. */

#define MLAS_SGEMM_STRIDE_N 128 /* MlasSgemmOperation's first panel, N x K */
#define MLAS_SGEMM_STRIDE_K 128
#define NCHW_CHUNK 1024 /* taps gathered at a time: the largest K stride */
#define M1T_LANES 8     /* the N = 1 kernel's AVX vector */

/* The K stride of MlasSgemmOperation and MlasConvOperation for N pixels:
 * the 128 x 128 panel gives up N for K while N fits half the N stride (at
 * least 16). When N >= K it only shrinks, which changes no sum. */
static int32_t nchw_stride_k(int32_t n, int32_t k) {
  int32_t stride_n = MLAS_SGEMM_STRIDE_N, stride_k = MLAS_SGEMM_STRIDE_K;
  if (n < k) {
    while (stride_n > 16 && stride_n / 2 >= n) {
      stride_n /= 2;
      stride_k *= 2;
    }
  }
  return stride_k;
}

/* col[i] = tap k0 + i of output pixel (oh, ow) of the group at x_g */
static void nchw_gather(const tidsp_conv2d_params *p, const float *x_g, int32_t oh, int32_t ow,
                        int32_t k0, int32_t cnt, float *col) {
  const int32_t ksz = p->k_h * p->k_w;
  int32_t c = k0 / ksz, kh = k0 % ksz / p->k_w, kw = k0 % p->k_w, i;
  for (i = 0; i < cnt; i++) {
    const int64_t ih = (int64_t)oh * p->stride_h + (int64_t)kh * p->dil_h - p->pad_top;
    const int64_t iw = (int64_t)ow * p->stride_w + (int64_t)kw * p->dil_w - p->pad_left;
    col[i] = ih >= 0 && ih < p->h_in && iw >= 0 && iw < p->w_in
                 ? x_g[((size_t)c * (size_t)p->h_in + (size_t)ih) * (size_t)p->w_in + (size_t)iw]
                 : 0.0f;
    if (++kw == p->k_w) {
      kw = 0;
      if (++kh == p->k_h) {
        kh = 0;
        c++;
      }
    }
  }
}

/* colT[(kk − k0)·lanes + l] = tap kk of output pixel pix0 + l of the
 * group at x_g, for kk in [k0, k1) and l < cnt (im2col transposed: a
 * row of taps is one vector of pixels); lanes past cnt are 0 */
static void nchw_gather_t(const tidsp_conv2d_params *p, const float *x_g, int32_t pix0, int32_t cnt,
                          int32_t lanes, int32_t k0, int32_t k1, float *col_t) {
  const int32_t ksz = p->k_h * p->k_w;
  const size_t plane = (size_t)p->h_in * (size_t)p->w_in;
  int32_t c = k0 / ksz, kh = k0 % ksz / p->k_w, kw = k0 % p->k_w, kk, l;
  int64_t ih0[16], iw0[16];
  for (l = 0; l < cnt; l++) {
    ih0[l] = (int64_t)((pix0 + l) / p->w_out) * p->stride_h - p->pad_top;
    iw0[l] = (int64_t)((pix0 + l) % p->w_out) * p->stride_w - p->pad_left;
  }
  for (kk = k0; kk < k1; kk++) {
    const float *xc = x_g + (size_t)c * plane;
    const int64_t dh = (int64_t)kh * p->dil_h, dw = (int64_t)kw * p->dil_w;
    float *row = col_t + (size_t)(kk - k0) * (size_t)lanes;
    for (l = 0; l < cnt; l++) {
      const int64_t ih = ih0[l] + dh, iw = iw0[l] + dw;
      row[l] = ih >= 0 && ih < p->h_in && iw >= 0 && iw < p->w_in
                   ? xc[(size_t)ih * (size_t)p->w_in + (size_t)iw]
                   : 0.0f;
    }
    for (; l < lanes; l++)
      row[l] = 0.0f;
    if (++kw == p->k_w) {
      kw = 0;
      if (++kh == p->k_h) {
        kh = 0;
        c++;
      }
    }
  }
}

/* MLAS's M = 1 kernel (SgemmKernelM1Avx, AVX: a multiply, then an add):
 * the taps of one K stride in blocks of 4, each summed left to right and
 * then added to the output; a last pair, then a last tap, likewise. cnt
 * is a multiple of 4 except in a stride's last chunk. */
static float m1_taps(const float *col, const float *w, int32_t cnt, float out) {
  int32_t i = 0;
  float t;
  for (; i + 4 <= cnt; i += 4) {
    t = col[i] * w[i];
    t = t + col[i + 1] * w[i + 1];
    t = t + col[i + 2] * w[i + 2];
    t = t + col[i + 3] * w[i + 3];
    out = t + out;
  }
  if (cnt - i >= 2) {
    t = col[i] * w[i];
    t = t + col[i + 1] * w[i + 1];
    out = t + out;
    i += 2;
  }
  if (i < cnt)
    out = col[i] * w[i] + out;
  return out;
}

/* MLAS's N = 1 kernel (SgemmKernelM1TransposeBAvx): lane l sums the
 * products of taps l, l + 8, … (multiply, then add); output rows go in
 * blocks of 4, then 2, then 1, and each block size reduces the lanes in
 * its own tree. `rows` is the size of the block holding the row. */
static float m1t_reduce(const float *l, int32_t rows) {
  if (rows == 4)
    return (((l[0] + l[1]) + l[2]) + l[3]) + (((l[4] + l[5]) + l[6]) + l[7]);
  if (rows == 2)
    return ((l[0] + l[2]) + (l[4] + l[6])) + ((l[1] + l[3]) + (l[5] + l[7]));
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* Size of the block of MLAS's N = 1 kernel that row r of m is in. */
static int32_t m1t_block(int32_t r, int32_t m) {
  if (r < m / 4 * 4)
    return 4;
  return (m & 2) && r < m / 4 * 4 + 2 ? 2 : 1;
}

/* y[r] for the `rows` outputs whose weight rows start at w_r (stride
 * w_step) and whose taps are col(pixel), or the other way round: one
 * N = 1 kernel call (a vector of K taps against `rows` rows of K). */
static void m1t_rows(const tidsp_conv2d_params *p, const float *x_g, const float *w_g, int32_t k,
                     int32_t rows, int over_pixels, const float *s, float *y) {
  float col[NCHW_CHUNK], lanes[M1T_LANES];
  int32_t r, k0, cnt, i;
  for (r = 0; r < rows; r++) {
    /* rows are output channels (one pixel), or pixels (one channel) */
    const float *w_r = w_g + (over_pixels ? 0 : (size_t)r * (size_t)k);
    const int32_t oh = over_pixels ? r / p->w_out : 0, ow = over_pixels ? r % p->w_out : 0;
    for (i = 0; i < M1T_LANES; i++)
      lanes[i] = 0.0f;
    for (k0 = 0; k0 < k; k0 += cnt) {
      cnt = k - k0 < NCHW_CHUNK ? k - k0 : NCHW_CHUNK;
      nchw_gather(p, x_g, oh, ow, k0, cnt, col);
      for (i = 0; i < cnt; i++)
        lanes[i % M1T_LANES] = lanes[i % M1T_LANES] + col[i] * w_r[k0 + i];
    }
    /* the output's previous value (the sum) or 0 is added last */
    y[r] = m1t_reduce(lanes, m1t_block(r, rows)) + (s ? s[r] : 0.0f);
  }
}

/* One group of an NCHW convolution: x_g its input channels, w_g its
 * weights ([M][K]), s and y its output planes ([M][N]) in the sum and the
 * output; no bias yet. `lanes` pixels per vector in the FMA kernels' order. */
static void nchw_group(const tidsp_conv2d_params *p, const float *x_g, const float *w_g,
                       const float *s, float *y, int32_t lanes) {
  const int32_t m = p->c_out / p->groups, k = p->c_in / p->groups * p->k_h * p->k_w;
  const int32_t n = p->h_out * p->w_out, cpg_in = p->c_in / p->groups;
  const int one_tap = p->k_h == 1 && p->k_w == 1;
  /* MlasConvPrepare's GemmDirect: unit strides, no pads, and a 1×1 kernel
   * or (one channel) a kernel as wide as the input, or as high as the
   * input and 1 wide; it calls SGEMM once over all of K, the input as B
   * (transposed in the full-width case) */
  const int32_t pad_bottom = (p->h_out - 1) * p->stride_h + (p->k_h - 1) * p->dil_h + 1 - p->h_in - p->pad_top;
  const int32_t pad_right = (p->w_out - 1) * p->stride_w + (p->k_w - 1) * p->dil_w + 1 - p->w_in - p->pad_left;
  const int unpadded = p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
                       pad_bottom == 0 && pad_right == 0;
  const int whole = cpg_in == 1 && p->dil_h == 1 && p->dil_w == 1;
  const int direct = unpadded && (one_tap || (whole && (p->k_w == p->w_in || (p->k_h == p->h_in && p->k_w == 1))));
  const int trans_b = direct && !one_tap && p->k_w == p->w_in;
  /* SGEMM's N = 1 kernel needs B's rows 1 apart (ldb = 1) */
  const int ldb_one = !direct || (trans_b ? p->w_in == 1 : (one_tap || p->w_in == 1));
  const int32_t stride_k = nchw_stride_k(n, k);
  float col[NCHW_CHUNK];
  /* a K stride of taps × up to 16 pixels (stride_k <= NCHW_CHUNK): 64 KiB
   * of stack, no allocation at inference */
  float col_t[NCHW_CHUNK * 16];
  int32_t pix, k0, k1, c0, cnt;

  if (m == 1 && trans_b) { /* SGEMM's M = 1 check comes first: N = 1 kernel over the pixels */
    m1t_rows(p, x_g, w_g, k, n, 1, s, y);
    return;
  }
  if (m > 1 && n == 1 && ldb_one) {
    m1t_rows(p, x_g, w_g, k, m, 0, s, y);
    return;
  }
  if (m == 1) {
    for (pix = 0; pix < n; pix++) {
      /* M = 1 kernel; GemmDirect sums K in one call, MlasConvOperation
       * (the only other path for one output channel) in K strides, each
       * call adding to the output (the sum, or 0 in the first) */
      const int32_t oh = pix / p->w_out, ow = pix % p->w_out;
      float out = s ? s[pix] : 0.0f;
      const int32_t span = direct ? k : stride_k;
      for (k0 = 0; k0 < k; k0 = k1) {
        k1 = k - k0 < span ? k : k0 + span;
        for (c0 = k0; c0 < k1; c0 += cnt) {
          cnt = k1 - c0 < NCHW_CHUNK ? k1 - c0 : NCHW_CHUNK;
          nchw_gather(p, x_g, oh, ow, c0, cnt, col);
          out = m1_taps(col, w_g + c0, cnt, out);
        }
      }
      y[pix] = out;
    }
    return;
  }
  /* MLAS's SGEMM kernels: per K stride one fused multiply-add chain from
   * 0; the first stride's sum is stored (or added to the sum: beta = 1),
   * each later one added to the output. `lanes` pixels at a time, one
   * chain per lane (nchw_stride: conv2d_f32_nchw_body.h) */
  for (pix = 0; pix < n; pix += lanes) {
    cnt = n - pix < lanes ? n - pix : lanes;
    for (k0 = 0; k0 < k; k0 = k1) {
      k1 = k - k0 < stride_k ? k : k0 + stride_k;
      nchw_gather_t(p, x_g, pix, cnt, lanes, k0, k1, col_t);
      if (lanes == 16)
        nchw_stride512(col_t, w_g, k, k0, k1, m, n, pix, cnt, s, y);
      else
        nchw_stride256(col_t, w_g, k, k0, k1, m, n, pix, cnt, s, y);
    }
  }
}

/* A convolution ORT keeps in NCHW (params.mlas_nchw): MlasConv, group by
 * group, then MlasActivation's out + bias. */
static void conv_nchw(const tidsp_conv2d_params *p, const float *x, const float *w, const float *bias,
                      const float *sum, float *y, int32_t lanes) {
  const int32_t cpg_in = p->c_in / p->groups, m = p->c_out / p->groups;
  const size_t n_px = (size_t)p->h_out * (size_t)p->w_out, in_plane = (size_t)p->h_in * (size_t)p->w_in;
  const size_t k = (size_t)cpg_in * (size_t)p->k_h * (size_t)p->k_w;
  int32_t b, g, co;
  size_t i;
  for (b = 0; b < p->n; b++) {
    for (g = 0; g < p->groups; g++) {
      const size_t out_off = ((size_t)b * (size_t)p->c_out + (size_t)g * (size_t)m) * n_px;
      float *y_g = y + out_off;
      nchw_group(p, x + ((size_t)b * (size_t)p->c_in + (size_t)g * (size_t)cpg_in) * in_plane,
                 w + (size_t)g * (size_t)m * k, sum ? sum + out_off : NULL, y_g, lanes);
      if (bias) {
        for (co = 0; co < m; co++)
          for (i = 0; i < n_px; i++)
            y_g[(size_t)co * n_px + i] = y_g[(size_t)co * n_px + i] + bias[g * m + co];
      }
    }
  }
}

/* The kernel with `lanes` float lanes per vector, which is also MLAS's
 * channel block B (16: AVX-512F, which the caller has checked; 8: AVX2 +
 * FMA3; anything else: the reference): tests run both on one CPU. */
int32_t tidsp_conv2d_f32__host_mlas_lanes(const tidsp_conv2d_params *p, const float *x,
                                          const float *w, const float *bias, const float *sum,
                                          float *y, int32_t lanes) {
  int32_t st, group, bit;

  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_conv2d_check(p);
  if (st != TIDSP_OK)
    return st;
  if (lanes != 16 && lanes != 8)
    return tidsp_conv2d_f32__ref(p, x, w, bias, sum, y);
  bit = lanes == 8 ? TIDSP_MLAS_BLOCK8 : TIDSP_MLAS_BLOCK16;
  /* ORT fused the Add at the other block only: here it runs the
   * convolution, then the Add */
  if (sum && !(p->sum_in_conv & bit)) {
    st = tidsp_conv2d_f32__host_mlas_lanes(p, x, w, bias, NULL, y, lanes);
    if (st == TIDSP_OK)
      tidsp_ref_conv_add_sum_f32(p, sum, y);
    return st;
  }
  /* ORT's layout at this block (the compiler decided for each) */
  if (p->mlas_nchw & bit) {
    const int32_t n_px = p->h_out * p->w_out, m = p->c_out / p->groups;
    /* A 1×1 kernel whose taps are all inside the input (no pads: im2col
     * is the input itself, or a strided subset): SGEMM's FMA kernel sums
     * each K stride of channels from 0, the first stride's sum stored
     * (+ the sum), each later one added, the bias last: the tiles' order
     * with channel groups of one K stride. */
    if (m > 1 && n_px > 1 && p->k_h == 1 && p->k_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
        (p->h_out - 1) * p->stride_h < p->h_in && (p->w_out - 1) * p->stride_w < p->w_in)
      conv_tiled(p, x, w, bias, sum, y, nchw_stride_k(n_px, p->c_in / p->groups), lanes);
    else
      conv_nchw(p, x, w, bias, sum, y, lanes);
    return TIDSP_OK;
  }
  group = channel_group(p, lanes);
  if (group == 0) {
    /* a sum is inside the conv at this block (above), whatever block the
     * reference would read from the CPU (tests run both widths) */
    tidsp_conv2d_params q = *p;
    q.sum_in_conv = TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8;
    return tidsp_conv2d_f32__ref(&q, x, w, bias, sum, y);
  }
  conv_tiled(p, x, w, bias, sum, y, group, lanes);
  return TIDSP_OK;
}

int32_t tidsp_conv2d_f32__host_mlas(const tidsp_conv2d_params *p, const float *x,
                                    const float *w, const float *bias, const float *sum,
                                    float *y) {
  return tidsp_conv2d_f32__host_mlas_lanes(p, x, w, bias, sum, y, tidsp_mlas_f32_block());
}

#include "fma_exact_end.h"
#endif
