/*
 * test_kernel_mlas_f32.c — the MLAS-order float kernels
 * (runtime/kernels/host/conv2d_f32__host_mlas.c, matmul_f32__host_mlas.c)
 * bit for bit against a scalar model of ONNX Runtime's summation order,
 * written per output element (the kernels go tap by tap over tiles):
 *
 *   conv: channel groups of 1 (c_in < block), 128 (1×1 without pads) or
 *         `block`; each group's sum starts at 0 and runs over kernel rows,
 *         columns, then channels with fmaf, skipping padding taps; the
 *         groups are added in order (part + out), then out + bias;
 *   gemm: K strides of 256 for a constant B (MLAS's packed SGEMM), or for
 *         a runtime B (params.b_runtime) the unpacked SGEMM's: 128 when
 *         N >= K, else 256 / 512 / 1024 for N ≤ 64 / 32 / 16 (M = 1 or
 *         N = 1: 256, the matrix-vector kernels are not matched); each
 *         stride from 0 with fmaf; out starts at the bias (or the first
 *         stride's sum) and takes part + out per stride.
 *
 *   depthwise: one chain over kernel rows and columns from 0, then + bias;
 *   grouped with whole blocks per group: each group as an ungrouped conv.
 *   with a sum (a fused Add): out = part₀ + sum after the first group, the
 *         bias last; the reference then gives ((Σ) + sum) + bias.
 *   params.mlas_nchw (ORT's plain NCHW conv, MLAS's im2col + SGEMM): per
 *         group the im2col column (channel-major, padding taps 0) against
 *         the weight row: one output channel → blocks of 4 taps (multiply,
 *         add), one output pixel → 8 lanes and a reduction tree per block
 *         of 4/2/1 rows, otherwise fmaf chains per K stride of the
 *         unpacked SGEMM (128 … 1024); a sum starts the output, + bias last.
 *
 * Also: other grouped convolutions and CPUs whose MLAS has no FMA (block 0) give
 * the reference's bytes; the reference itself stays within a tolerance of
 * the model (both are sums of the same products); guard bytes around every
 * output. tests/e2e/test_conv_mlas_vs_ort.py checks the model's order
 * against ONNX Runtime itself.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x9E3779B97F4A7C15ull
#include "kernel_test_util.h"

#if TIDSP_HAVE_HOST_X86

/* Channels per summation group; 0 where the kernel keeps the reference. */
static int32_t model_group(const tidsp_conv2d_params *p, int32_t block) {
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  if (block == 0)
    return 0;
  if (p->groups > 1) {
    if (cpg_in == 1 && cpg_out == 1)
      return 1;
    if (cpg_in % block != 0 || cpg_out % block != 0)
      return 0;
  }
  if (cpg_in < block)
    return 1;
  if (p->k_h == 1 && p->k_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
      (p->h_out - 1) * p->stride_h < p->h_in && (p->w_out - 1) * p->stride_w < p->w_in)
    return 128;
  return block;
}

static float model_conv(const tidsp_conv2d_params *p, const float *x, const float *w,
                        const float *bias, const float *sum, int32_t n, int32_t co, int32_t oh,
                        int32_t ow, int32_t block) {
  const int32_t group = model_group(p, block), cpg_in = p->c_in / p->groups;
  const int32_t first = co / (p->c_out / p->groups) * cpg_in; /* the group's first input channel */
  float out = 0.0f;
  int32_t c0, c, kh, kw;
  for (c0 = 0; c0 < cpg_in; c0 += group) {
    float part = 0.0f;
    for (kh = 0; kh < p->k_h; kh++)
      for (kw = 0; kw < p->k_w; kw++)
        for (c = c0; c < c0 + group && c < cpg_in; c++) {
          const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
          const int32_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;
          if (ih < 0 || ih >= p->h_in || iw < 0 || iw >= p->w_in)
            continue;
          part = fmaf(x[(((size_t)n * p->c_in + first + c) * p->h_in + ih) * p->w_in + iw],
                      w[(((size_t)co * cpg_in + c) * p->k_h + kh) * p->k_w + kw], part);
        }
    out = c0 == 0 ? part : part + out;
    if (c0 == 0 && sum)
      out = out + sum[(((size_t)n * p->c_out + co) * p->h_out + oh) * p->w_out + ow];
  }
  return bias ? out + bias[co] : out;
}

/* ---- params.mlas_nchw: ORT's plain NCHW convolution (MlasConv) ----
 * Per group: the im2col column of the output pixel (K = c·k_h·k_w taps,
 * channel-major, padding taps 0) against the weight row, by the SGEMM
 * routine MLAS picks for the group's M output channels and N pixels. */

/* MLAS's unpacked SGEMM K stride as a table of its panel sizes */
static int32_t nchw_model_stride(int32_t nn, int32_t k) {
  if (nn >= k) return 128;
  return nn <= 16 ? 1024 : nn <= 32 ? 512 : nn <= 64 ? 256 : 128;
}

/* SgemmKernelM1TransposeBAvx's lane reductions for a block of `rows` */
static float nchw_model_tree(const float *l, int32_t rows) {
  float lo, hi;
  if (rows == 4) { /* rows transposed into columns, summed lane 0..3 and 4..7, then the halves */
    lo = l[0] + l[1]; lo = lo + l[2]; lo = lo + l[3];
    hi = l[4] + l[5]; hi = hi + l[6]; hi = hi + l[7];
    return lo + hi;
  }
  if (rows == 2) { /* even and odd lanes apart */
    const float e = (l[0] + l[2]) + (l[4] + l[6]), o = (l[1] + l[3]) + (l[5] + l[7]);
    return e + o;
  }
  lo = (l[0] + l[1]) + (l[2] + l[3]); /* two horizontal adds, then the halves */
  hi = (l[4] + l[5]) + (l[6] + l[7]);
  return lo + hi;
}

static float nchw_model(const tidsp_conv2d_params *p, const float *x, const float *w, const float *bias,
                        const float *sum, int32_t n, int32_t co, int32_t oh, int32_t ow) {
  const int32_t cpg_in = p->c_in / p->groups, m = p->c_out / p->groups, k = cpg_in * p->k_h * p->k_w;
  const int32_t npx = p->h_out * p->w_out, g = co / m, pix = oh * p->w_out + ow;
  const size_t at = (((size_t)n * p->c_out + co) * p->h_out + oh) * p->w_out + ow;
  const int one_tap = p->k_h == 1 && p->k_w == 1;
  const int no_pads = p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
                      p->h_out == p->h_in - (p->k_h - 1) * p->dil_h && p->w_out == p->w_in - (p->k_w - 1) * p->dil_w;
  const int plain = cpg_in == 1 && p->dil_h == 1 && p->dil_w == 1;
  const int direct = no_pads && (one_tap || (plain && p->k_w == p->w_in) ||
                                 (plain && p->k_h == p->h_in && p->k_w == 1));
  const int trans_b = direct && !one_tap && plain && p->k_w == p->w_in;
  float *col = malloc((size_t)k * sizeof(float)), lanes[8] = {0}, out, t;
  const float *wr = w + (size_t)co * (size_t)k;
  int32_t i, c, kh, kw, k0, k1, row, rows;

  i = 0;
  for (c = 0; c < cpg_in; c++)
    for (kh = 0; kh < p->k_h; kh++)
      for (kw = 0; kw < p->k_w; kw++, i++) {
        const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
        const int32_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;
        col[i] = ih < 0 || ih >= p->h_in || iw < 0 || iw >= p->w_in
                     ? 0.0f
                     : x[(((size_t)n * p->c_in + g * cpg_in + c) * p->h_in + ih) * p->w_in + iw];
      }
  if ((m == 1 && trans_b) || (m > 1 && npx == 1 && (!trans_b || p->w_in == 1))) {
    /* the N = 1 kernel: rows are pixels (M = 1, B transposed) or channels */
    row = m == 1 ? pix : co % m;
    rows = m == 1 ? npx : m;
    for (i = 0; i < k; i++)
      lanes[i % 8] = lanes[i % 8] + col[i] * wr[i];
    out = nchw_model_tree(lanes, row < rows / 4 * 4 ? 4 : (rows % 4 >= 2 && row < rows / 4 * 4 + 2) ? 2 : 1);
    out = out + (sum ? sum[at] : 0.0f);
  } else if (m == 1) { /* the M = 1 kernel: blocks of 4 taps, multiply then add */
    out = sum ? sum[at] : 0.0f;
    for (k0 = 0; k0 < k; k0 = k1) {
      k1 = direct || k - k0 <= nchw_model_stride(npx, k) ? k : k0 + nchw_model_stride(npx, k);
      for (i = k0; i < k1;) {
        const int32_t b = k1 - i >= 4 ? 4 : k1 - i >= 2 ? 2 : 1;
        t = col[i] * wr[i];
        for (c = 1; c < b; c++)
          t = t + col[i + c] * wr[i + c];
        out = t + out;
        i += b;
      }
    }
  } else { /* the FMA SGEMM kernels, K strides from 0, added in order */
    out = 0.0f;
    for (k0 = 0; k0 < k; k0 += nchw_model_stride(npx, k)) {
      float part = 0.0f;
      for (i = k0; i < k && i < k0 + nchw_model_stride(npx, k); i++)
        part = fmaf(col[i], wr[i], part);
      out = k0 == 0 ? (sum ? part + sum[at] : part) : part + out;
    }
  }
  free(col);
  return bias ? out + bias[co] : out;
}

static int32_t out_dim(int32_t in, int32_t k, int32_t s, int32_t d, int32_t pb, int32_t pe) {
  return (in + pb + pe - d * (k - 1) - 1) / s + 1;
}

#define WITH_BIAS 1
#define WITH_SUM 2
/* +inf weights at every third output channel's first tap: where that tap
 * falls into the padding the kernel must skip it (a 0 · inf would be a
 * NaN), elsewhere the output is ±inf */
#define WITH_INF 4
/* with WITH_SUM: the sum is inside the conv at block 16 only / at block 8
 * only (params.sum_in_conv; without either, at both): at the other block
 * ORT runs the Add after the conv, (conv + bias) + sum */
#define SUM_AT16 8
#define SUM_AT8 16

/* One random convolution; the geometry comes from the caller, `with`
 * holds WITH_BIAS and WITH_SUM bits. */
static void check_conv(tidsp_conv2d_params p, int with) {
  const int with_bias = with & WITH_BIAS;
  const int32_t block = tidsp_mlas_f32_block();
  const size_t nx = (size_t)p.n * p.c_in * p.h_in * p.w_in;
  const size_t nw = (size_t)p.c_out * (p.c_in / p.groups) * p.k_h * p.k_w;
  const size_t ny = (size_t)p.n * p.c_out * p.h_out * p.w_out;
  float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
  float *bias = malloc((size_t)p.c_out * sizeof(float)), *sum = NULL;
  float *y = guarded(ny * sizeof(float)), *r = guarded(ny * sizeof(float));
  /* the reference with the sum inside the conv, and with it after */
  float *r_in = guarded(ny * sizeof(float)), *r_after = guarded(ny * sizeof(float));
  int32_t n, co, oh, ow, bad = 0, pass;
  size_t i;

  for (i = 0; i < nx; i++)
    x[i] = (rnd_unit() - 0.5f) * 8.0f;
  for (i = 0; i < nw; i++)
    w[i] = rnd_unit() - 0.5f;
  for (co = 0; co < p.c_out; co++)
    bias[co] = rnd_unit() - 0.5f;
  if (with & WITH_INF)
    for (co = 0; co < p.c_out; co += 3)
      w[(size_t)co * (nw / (size_t)p.c_out)] = INFINITY;
  if (with & WITH_SUM) {
    p.sum_in_conv = with & SUM_AT16 ? TIDSP_MLAS_BLOCK16
                    : with & SUM_AT8 ? TIDSP_MLAS_BLOCK8
                                     : TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8;
    sum = malloc(ny * sizeof(float));
    for (i = 0; i < ny; i++)
      sum[i] = (rnd_unit() - 0.5f) * 16.0f;
  }
  CHECK(tidsp_conv2d_f32__ref(&p, x, w, with_bias ? bias : NULL, sum, r) == TIDSP_OK);
  if (sum) {
    /* the reference's order with a sum inside the conv at its CPU's
     * block: ((Σ) + sum) + bias, Σ being its own sum without bias (which
     * starts from 0); else (Σ + bias) + sum, its conv then the Add */
    const int inside = (p.sum_in_conv & tidsp_mlas_block_bit()) != 0;
    float *alone = guarded(ny * sizeof(float));
    CHECK(tidsp_conv2d_f32__ref(&p, x, w, inside || !with_bias ? NULL : bias, NULL, alone) == TIDSP_OK);
    for (i = 0; i < ny && !bad; i++) {
      const size_t co_at = i / ((size_t)p.h_out * p.w_out) % (size_t)p.c_out;
      float want = alone[i] + sum[i];
      if (with_bias && inside)
        want = want + bias[co_at];
      if (memcmp(&r[i], &want, sizeof want) != 0) {
        CHECK_MSG(0, "ref conv with sum at %zu: got %a want %a", i, (double)r[i], (double)want);
        bad = 1;
      }
    }
    guarded_free(alone);
    /* whatever this CPU's block: a host width whose block the sum is
     * inside at runs the reference with it inside, else after */
    tidsp_conv2d_params q = p;
    q.sum_in_conv = TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8;
    CHECK(tidsp_conv2d_f32__ref(&q, x, w, with_bias ? bias : NULL, sum, r_in) == TIDSP_OK);
    CHECK(tidsp_conv2d_f32__ref(&p, x, w, with_bias ? bias : NULL, NULL, r_after) == TIDSP_OK);
    for (i = 0; i < ny; i++)
      r_after[i] = r_after[i] + sum[i];
  }
  /* the dispatched entry, then every vector width this CPU has (lanes 8
   * and 16: MLAS's channel block too, so the model follows it) */
  for (pass = 0; pass < 3 && !bad; pass++) {
    const int32_t lanes = pass == 0 ? block : pass == 1 ? 8 : 16;
    if (pass > 0 && (block == 0 || lanes > block))
      continue;
    memset(y, 0x7f, ny * sizeof(float));
    CHECK(pass == 0 ? tidsp_conv2d_f32__host_mlas(&p, x, w, with_bias ? bias : NULL, sum, y) == TIDSP_OK
                    : tidsp_conv2d_f32__host_mlas_lanes(&p, x, w, with_bias ? bias : NULL, sum, y, lanes) ==
                          TIDSP_OK);
    /* ORT's layout at this block: the flag's bit for it; a sum ORT adds
     * after the conv at this block is added to the model's conv */
    const int32_t bit = lanes == 8 ? TIDSP_MLAS_BLOCK8 : TIDSP_MLAS_BLOCK16;
    const int32_t nchw_here = p.mlas_nchw & bit;
    const float *sum_in = sum && (p.sum_in_conv & bit) ? sum : NULL;
    if (lanes == 0 || (!nchw_here && model_group(&p, lanes) == 0)) {
      const float *ref_here = lanes == 0 || !sum ? r : sum_in ? r_in : r_after;
      CHECK_MSG(memcmp(y, ref_here, ny * sizeof(float)) == 0, "conv %dx%d g%d lanes %d: not the reference's bytes",
                (int)p.c_in, (int)p.c_out, (int)p.groups, (int)lanes);
    } else {
      for (n = 0; n < p.n && !bad; n++)
        for (co = 0; co < p.c_out && !bad; co++)
          for (oh = 0; oh < p.h_out && !bad; oh++)
            for (ow = 0; ow < p.w_out && !bad; ow++) {
              const size_t at = (((size_t)n * p.c_out + co) * p.h_out + oh) * p.w_out + ow;
              float want = nchw_here ? nchw_model(&p, x, w, with_bias ? bias : NULL, sum_in, n, co, oh, ow)
                                     : model_conv(&p, x, w, with_bias ? bias : NULL, sum_in, n, co, oh, ow, lanes);
              if (sum && !sum_in)
                want = want + sum[at];
              if (memcmp(&y[at], &want, sizeof want) != 0 ||
                  fabsf(r[at] - want) > 1e-4f * (float)(p.c_in * p.k_h * p.k_w)) {
                CHECK_MSG(0, "conv c_in %d c_out %d k %dx%d s %d,%d p %d,%d g %d lanes %d at n%d co%d oh%d ow%d: "
                          "got %a ref %a model %a",
                          (int)p.c_in, (int)p.c_out, (int)p.k_h, (int)p.k_w, (int)p.stride_h, (int)p.stride_w,
                          (int)p.pad_top, (int)p.pad_left, (int)p.groups, (int)lanes, (int)n, (int)co, (int)oh,
                          (int)ow, (double)y[at], (double)r[at], (double)want);
                bad = 1;
              }
            }
      CHECK(!bad);
    }
    CHECK(guards_ok(y, ny * sizeof(float)));
  }
  free(x);
  free(w);
  free(bias);
  free(sum);
  guarded_free(y);
  guarded_free(r);
  guarded_free(r_in);
  guarded_free(r_after);
}

static tidsp_conv2d_params geometry(int32_t n, int32_t c_in, int32_t c_out, int32_t h, int32_t w,
                                    int32_t k_h, int32_t k_w, int32_t s, int32_t d,
                                    int32_t pt, int32_t pl, int32_t pb, int32_t pr, int32_t g) {
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = n, p.c_in = c_in, p.c_out = c_out, p.h_in = h, p.w_in = w;
  p.k_h = k_h, p.k_w = k_w, p.stride_h = p.stride_w = s, p.dil_h = p.dil_w = d;
  p.pad_top = pt, p.pad_left = pl, p.groups = g;
  p.h_out = out_dim(h, k_h, s, d, pt, pb);
  p.w_out = out_dim(w, k_w, s, d, pl, pr);
  return p;
}

/* MTCNN's layers and the edges of each channel grouping. */
static void test_conv_named(void) {
  check_conv(geometry(1, 3, 10, 48, 48, 3, 3, 1, 1, 0, 0, 0, 0, 1), 1);    /* NCHW input */
  check_conv(geometry(1, 10, 16, 23, 23, 3, 3, 1, 1, 0, 0, 0, 0, 1), 1);
  check_conv(geometry(1, 16, 32, 21, 21, 3, 3, 1, 1, 0, 0, 0, 0, 1), 1);   /* NCHWc */
  check_conv(geometry(1, 28, 48, 11, 11, 3, 3, 1, 1, 0, 0, 0, 0, 1), 1);   /* padded channels */
  check_conv(geometry(1, 64, 128, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1), 1);
  check_conv(geometry(1, 32, 4, 19, 19, 1, 1, 1, 1, 0, 0, 0, 0, 1), 1);    /* pointwise */
  check_conv(geometry(1, 300, 7, 5, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1), 1);     /* 3 pointwise groups */
  check_conv(geometry(2, 48, 5, 9, 7, 1, 1, 2, 1, 0, 0, 0, 0, 1), 0);      /* strided pointwise */
  check_conv(geometry(1, 40, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1);      /* 1×1 with pads: NCHWc */
  check_conv(geometry(1, 20, 9, 9, 10, 3, 3, 2, 2, 2, 1, 2, 3, 1), 1);     /* pads, stride, dilation */
  check_conv(geometry(1, 7, 3, 3, 1100, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1);    /* rows wider than a tile */
  check_conv(geometry(1, 32, 32, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 32), 1);    /* depthwise, NCHWc */
  check_conv(geometry(2, 48, 48, 9, 7, 5, 5, 2, 1, 2, 2, 2, 2, 48), 0);
  check_conv(geometry(1, 8, 8, 12, 9, 3, 3, 2, 1, 1, 1, 1, 1, 8), 1);      /* depthwise, fewer channels */
  check_conv(geometry(1, 32, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4), 1);     /* grouped, part blocks: reference */
  check_conv(geometry(1, 96, 48, 7, 7, 3, 3, 2, 1, 1, 1, 1, 1, 3), 1);     /* grouped, whole blocks */
  check_conv(geometry(1, 64, 64, 6, 6, 1, 1, 1, 1, 0, 0, 0, 0, 2), 0);
  /* with a sum (a fused Add): after the first channel group, bias last */
  check_conv(geometry(1, 3, 16, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_SUM); /* NCHW */
  check_conv(geometry(1, 48, 32, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_SUM);  /* 3 blocks */
  check_conv(geometry(1, 300, 16, 5, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1), WITH_BIAS | WITH_SUM); /* pointwise */
  check_conv(geometry(1, 24, 24, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 24), WITH_BIAS | WITH_SUM); /* depthwise */
  check_conv(geometry(1, 32, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4), WITH_BIAS | WITH_SUM);  /* reference */
  check_conv(geometry(1, 16, 16, 7, 1100, 1, 1, 1, 1, 0, 0, 0, 0, 1), WITH_SUM);          /* wide rows */
  /* a sum inside the conv at one block only: at the other, the conv then the Add */
  check_conv(geometry(1, 24, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1), WITH_BIAS | WITH_SUM | SUM_AT8); /* pooled SE */
  check_conv(geometry(1, 48, 32, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_SUM | SUM_AT8);
  check_conv(geometry(1, 48, 32, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_SUM | SUM_AT16);
  check_conv(geometry(1, 10, 16, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_SUM | SUM_AT16);
  check_conv(geometry(1, 24, 24, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 24), WITH_BIAS | WITH_SUM | SUM_AT8); /* depthwise */
  check_conv(geometry(1, 32, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4), WITH_BIAS | WITH_SUM | SUM_AT16); /* reference */
  check_conv(geometry(1, 32, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4), WITH_BIAS | WITH_SUM | SUM_AT8);
}

/* The register tiles (8 channels × 32 pixels of a row with 16 lanes, 6 ×
 * 16 with 8): channel and pixel remainders, pads and strides per lane,
 * the flat pointwise rows, channel groups of 8 and 16 under both widths. */
static void test_conv_tiles(void) {
  int32_t co, wd;
  for (co = 1; co <= 17; co++) /* every channel remainder, NCHWc */
    check_conv(geometry(1, 16, co, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1), co % 2 ? WITH_BIAS : WITH_SUM);
  for (wd = 1; wd <= 40; wd += 3) /* every pixel remainder, two vectors */
    check_conv(geometry(1, 24, 9, 3, wd, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_INF);
  check_conv(geometry(1, 32, 20, 9, 70, 3, 3, 2, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_INF); /* stride 2: gathers */
  check_conv(geometry(1, 16, 12, 11, 67, 3, 3, 3, 1, 2, 2, 2, 2, 1), WITH_INF);            /* stride 3, wide pads */
  check_conv(geometry(1, 17, 7, 6, 37, 5, 5, 1, 2, 4, 4, 4, 4, 1), WITH_BIAS | WITH_INF);  /* dilation, pads */
  check_conv(geometry(1, 3, 16, 40, 41, 3, 3, 2, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_INF); /* PP-OCR stem */
  check_conv(geometry(1, 5, 11, 9, 33, 3, 1, 1, 1, 0, 1, 0, 1, 1), WITH_INF);              /* pads on one axis */
  check_conv(geometry(1, 96, 24, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_BIAS | WITH_SUM); /* PP-OCR det neck */
  check_conv(geometry(2, 240, 37, 3, 11, 1, 1, 1, 1, 0, 0, 0, 0, 1), WITH_BIAS);           /* flat pointwise */
  check_conv(geometry(1, 130, 9, 4, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1), WITH_BIAS | WITH_SUM); /* 128 + 2 channels */
  check_conv(geometry(1, 20, 8, 7, 9, 1, 1, 2, 2, 0, 0, 0, 0, 1), WITH_BIAS);              /* strided pointwise */
  check_conv(geometry(1, 19, 13, 5, 6, 1, 1, 1, 1, 1, 0, 1, 0, 1), WITH_BIAS | WITH_INF);  /* 1×1 with pads */
  check_conv(geometry(1, 21, 21, 9, 35, 3, 3, 1, 1, 1, 1, 1, 1, 21), WITH_BIAS | WITH_INF); /* depthwise */
  check_conv(geometry(2, 13, 13, 10, 47, 5, 5, 2, 1, 2, 2, 2, 2, 13), WITH_SUM | WITH_INF); /* depthwise, stride 2 */
  check_conv(geometry(1, 9, 9, 6, 33, 3, 3, 1, 2, 2, 2, 2, 2, 9), WITH_BIAS | WITH_SUM);    /* depthwise, dilated */
  check_conv(geometry(1, 32, 32, 6, 19, 3, 3, 1, 1, 1, 1, 1, 1, 2), WITH_BIAS | WITH_INF);  /* groups of 16 */
  check_conv(geometry(1, 48, 24, 5, 18, 3, 3, 1, 1, 1, 1, 1, 1, 3), WITH_BIAS);             /* groups of 16 | 8 */
  check_conv(geometry(1, 24, 24, 5, 18, 3, 3, 1, 1, 1, 1, 1, 1, 3), WITH_BIAS | WITH_SUM);  /* groups of 8 (AVX2) */
  check_conv(geometry(1, 7, 3, 3, 1100, 3, 3, 1, 1, 1, 1, 1, 1, 1), WITH_INF);             /* wide rows */
  /* 1×1 over fewer channels than the block: out kept in registers, 4 | 3 channels a tile */
  check_conv(geometry(1, 12, 11, 6, 45, 1, 1, 1, 1, 0, 0, 0, 0, 1), WITH_BIAS | WITH_SUM);
  check_conv(geometry(2, 7, 5, 5, 19, 1, 1, 1, 1, 0, 0, 0, 0, 1), WITH_BIAS);
  check_conv(geometry(1, 5, 9, 7, 33, 1, 1, 2, 1, 1, 1, 0, 1, 1), WITH_BIAS | WITH_INF);   /* pads, stride 2 */
  check_conv(geometry(1, 3, 2, 9, 40, 1, 1, 3, 1, 0, 0, 0, 0, 1), WITH_SUM);              /* stride 3 */
}

/* ORT keeps the conv in NCHW at every block */
static tidsp_conv2d_params nchw(tidsp_conv2d_params p) {
  p.mlas_nchw = TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8;
  return p;
}

/* ... at the blocks of `bits` only (NCHWc at the others) */
static tidsp_conv2d_params nchw_at(tidsp_conv2d_params p, int32_t bits) {
  p.mlas_nchw = bits;
  return p;
}

/* params.mlas_nchw: each SGEMM routine MlasConv reaches, and its edges */
static void test_conv_nchw(void) {
  /* 1×1 without padding taps: the register tiles, channel groups of one K stride */
  check_conv(nchw(geometry(1, 18, 96, 16, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS | WITH_INF); /* PP-OCR det */
  check_conv(nchw(geometry(1, 300, 13, 9, 11, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS | WITH_SUM); /* strides of 128 */
  check_conv(nchw(geometry(1, 600, 9, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS);   /* N < K: one of 1024 */
  check_conv(nchw(geometry(2, 300, 7, 5, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_SUM);    /* N = 30: 512 */
  check_conv(nchw(geometry(1, 22, 17, 9, 13, 1, 1, 2, 1, 0, 0, 0, 0, 1)), WITH_BIAS);  /* strided 1×1 */
  check_conv(nchw(geometry(1, 44, 18, 7, 9, 1, 1, 1, 1, 0, 0, 0, 0, 2)), WITH_BIAS | WITH_SUM | WITH_INF); /* grouped */
  check_conv(nchw(geometry(1, 22, 8, 6, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1)), WITH_BIAS | WITH_INF); /* bottom pads: im2col */
  check_conv(nchw(geometry(1, 22, 88, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS); /* PP-OCR cls: N = 1 */
  check_conv(nchw(geometry(1, 22, 87, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS); /* 4-, 2-, 1-row blocks */
  check_conv(nchw(geometry(1, 22, 6, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS | WITH_SUM);
  check_conv(nchw(geometry(1, 2000, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS); /* K past a gather chunk */
  check_conv(nchw(geometry(2, 22, 9, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS); /* 1x1 out of im2col */
  check_conv(nchw(geometry(1, 22, 40, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_BIAS); /* one K stride of 256 */
  check_conv(nchw(geometry(1, 22, 30, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_BIAS | WITH_SUM); /* 128 */
  check_conv(nchw(geometry(1, 150, 20, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_BIAS); /* six of 256 */
  check_conv(nchw(geometry(1, 300, 4, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1)), 0);         /* 1024 */
  check_conv(nchw(geometry(1, 30, 90, 5, 7, 3, 3, 2, 2, 1, 1, 1, 2, 1)), WITH_BIAS); /* strides, dilation */
  check_conv(nchw(geometry(1, 10, 10, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 10)), WITH_BIAS); /* M = 1 kernel */
  check_conv(nchw(geometry(2, 6, 6, 9, 9, 5, 5, 2, 1, 2, 2, 2, 2, 6)), WITH_BIAS | WITH_SUM);
  check_conv(nchw(geometry(1, 6, 6, 6, 5, 3, 5, 1, 1, 0, 0, 0, 0, 6)), WITH_BIAS);  /* full width: B transposed */
  check_conv(nchw(geometry(1, 6, 6, 5, 1, 5, 1, 1, 1, 0, 0, 0, 0, 6)), WITH_BIAS);  /* full height, 1 wide */
  check_conv(nchw(geometry(1, 150, 1, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_BIAS); /* M = 1, strides of 1024 */
  check_conv(nchw(geometry(1, 1102, 1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS); /* M = 1, direct: one call */
  check_conv(nchw(geometry(1, 20, 10, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 2)), WITH_BIAS); /* grouped */
  check_conv(nchw(geometry(1, 32, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4)), WITH_BIAS | WITH_SUM);
  check_conv(nchw(geometry(1, 6, 3, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 3)), WITH_BIAS);
  /* the layout follows the block (ORT 1.30): 10 input channels are NCHW
   * input to an NCHWc conv at 16, a plain NCHW conv at 8; a conv of two
   * groups of 8 channels is NCHWc at 8, NCHW at 16 */
  check_conv(nchw_at(geometry(1, 10, 16, 11, 11, 3, 3, 1, 1, 0, 0, 0, 0, 1), TIDSP_MLAS_BLOCK8), WITH_BIAS);
  check_conv(nchw_at(geometry(1, 10, 10, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1), TIDSP_MLAS_BLOCK8),
             WITH_BIAS | WITH_SUM);
  check_conv(nchw_at(geometry(1, 16, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 2), TIDSP_MLAS_BLOCK16), WITH_BIAS);
  /* ... with a sum inside at one block: FusedConv's Z in NCHW, or the Add after an NCHWc conv */
  check_conv(nchw_at(geometry(1, 10, 10, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1), TIDSP_MLAS_BLOCK8),
             WITH_BIAS | WITH_SUM | SUM_AT8);
  check_conv(nchw_at(geometry(1, 10, 10, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1), TIDSP_MLAS_BLOCK8),
             WITH_BIAS | WITH_SUM | SUM_AT16);
  check_conv(nchw(geometry(1, 22, 88, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)), WITH_BIAS | WITH_SUM | SUM_AT16);
}

/* The im2col + SGEMM FMA order (M > 1, N > 1) in vectors of 8 or 16
 * output pixels: pixel counts that are not a multiple of the lanes (and
 * fewer than one vector), channels past a block of 4, several K strides
 * (128, 256, 1024), the sum and the bias, groups, strides, dilation, pads */
static void test_conv_nchw_vector(void) {
  check_conv(nchw(geometry(1, 150, 7, 13, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_BIAS | WITH_SUM); /* 143 px: 128s */
  check_conv(nchw(geometry(1, 150, 6, 13, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1)), 0);
  check_conv(nchw(geometry(2, 150, 5, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_SUM | WITH_INF); /* 35 px: 512 */
  check_conv(nchw(geometry(1, 150, 9, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_BIAS); /* 9 px: 1024 */
  check_conv(nchw(geometry(1, 40, 3, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1)), WITH_BIAS | WITH_SUM); /* 6 px < lanes */
  check_conv(nchw(geometry(1, 20, 10, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 2)), WITH_BIAS | WITH_SUM); /* 20→10 g2 */
  check_conv(nchw(geometry(2, 20, 10, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 2)), 0);
  check_conv(nchw(geometry(1, 24, 15, 19, 23, 3, 3, 2, 2, 2, 1, 2, 3, 3)), WITH_BIAS | WITH_INF); /* s2 d2 pads */
  check_conv(nchw(geometry(1, 13, 11, 17, 14, 5, 3, 3, 1, 2, 0, 1, 2, 1)), WITH_BIAS | WITH_SUM); /* s3, 5×3 */
  check_conv(nchw_at(geometry(1, 10, 16, 12, 12, 3, 3, 1, 1, 0, 0, 0, 0, 1), TIDSP_MLAS_BLOCK8),
             WITH_BIAS); /* P-Net conv1 at block 8: 100 px */
}

static void test_conv_nchw_random(void) {
  int it;
  for (it = 0; it < 80; it++) {
    const int32_t k = rnd_range(1, 4), s = rnd_range(1, 3), d = rnd_range(1, 2);
    const int32_t h = rnd_range(d * (k - 1) + 1, 12), w = rnd_range(d * (k - 1) + 1, 12);
    const int32_t pads = it % 3 == 0, g = rnd_range(1, 3);
    check_conv(nchw(geometry(rnd_range(1, 2), g * rnd_range(1, 40), g * rnd_range(1, 12), h, w, k, k, s, d,
                             pads ? rnd_range(0, k - 1) : 0, pads ? rnd_range(0, k - 1) : 0,
                             pads ? rnd_range(0, k - 1) : 0, pads ? rnd_range(0, k - 1) : 0, g)),
               it % 4);
  }
}

static void test_conv_random(void) {
  int it;
  for (it = 0; it < 60; it++) {
    const int32_t k = rnd_range(1, 4), s = rnd_range(1, 3), d = rnd_range(1, 2);
    const int32_t h = rnd_range(d * (k - 1) + 1, 14), w = rnd_range(d * (k - 1) + 1, 14);
    const int32_t pads = it % 3 == 0;
    check_conv(geometry(rnd_range(1, 2), rnd_range(1, 70), rnd_range(1, 20), h, w, k, k, s, d,
                        pads ? rnd_range(0, k - 1) : 0, pads ? rnd_range(0, k - 1) : 0,
                        pads ? rnd_range(0, k - 1) : 0, pads ? rnd_range(0, k - 1) : 0, 1),
               it % 4);
  }
}

/* The K stride of the model above for a runtime B, written as MLAS's
 * panel table rather than as the kernel's loop. */
static int32_t runtime_b_stride(int32_t m, int32_t k, int32_t nn) {
  if (m == 1 || nn == 1) return 256;
  if (nn >= k) return 128;
  return nn <= 16 ? 1024 : nn <= 32 ? 512 : nn <= 64 ? 256 : 128;
}

/* stride: the K stride the model sums in (256 for a constant B).
 * bcast: bit 0 B broadcast over the batch (b_batch_stride 0), bit 1 A.
 * Every vector width this CPU has (tidsp_matmul_f32__host_mlas_lanes: 8
 * and 16 lanes, register tiles of 6 rows × 16 or 64 columns) must give
 * the model's bytes, the dispatched entry too. */
static void check_gemm_stride(int32_t batch, int32_t m, int32_t k, int32_t nn, int bcast, int with_bias,
                              int b_runtime, int32_t stride) {
  tidsp_matmul_f32_params p = {.batch = batch, .m = m, .k = k, .n = nn, .b_runtime = b_runtime};
  const int b_broadcast = bcast & 1, a_broadcast = (bcast & 2) != 0;
  const size_t na = (size_t)(a_broadcast ? 1 : batch) * m * k, nb = (size_t)(b_broadcast ? 1 : batch) * k * nn;
  const size_t ny = (size_t)batch * m * nn;
  const int32_t block = tidsp_mlas_f32_block();
  float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float));
  float *bias = malloc((size_t)nn * sizeof(float)), *mdl = malloc(ny * sizeof(float));
  float *y = guarded(ny * sizeof(float)), *r = guarded(ny * sizeof(float));
  int32_t bt, i, j, kk, k0, bad = 0, pass;
  size_t t;

  p.a_batch_stride = a_broadcast ? 0 : m * k;
  p.b_batch_stride = b_broadcast ? 0 : k * nn;
  for (t = 0; t < na; t++)
    a[t] = (rnd_unit() - 0.5f) * 4.0f;
  for (t = 0; t < nb; t++)
    b[t] = rnd_unit() - 0.5f;
  for (j = 0; j < nn; j++)
    bias[j] = rnd_unit() - 0.5f;
  CHECK(tidsp_matmul_f32__ref(&p, a, b, with_bias ? bias : NULL, r) == TIDSP_OK);
  for (bt = 0; bt < batch; bt++)
    for (i = 0; i < m; i++)
      for (j = 0; j < nn; j++) {
        const float *ar = a + (size_t)bt * p.a_batch_stride + (size_t)i * k;
        const float *bb = b + (size_t)bt * p.b_batch_stride;
        float out = with_bias ? bias[j] : 0.0f;
        for (k0 = 0; k0 < k; k0 += stride) {
          float part = 0.0f;
          for (kk = k0; kk < k0 + stride && kk < k; kk++)
            part = fmaf(ar[kk], bb[(size_t)kk * nn + j], part);
          out = (k0 == 0 && !with_bias) ? part : part + out;
        }
        mdl[((size_t)bt * m + i) * nn + j] = out;
      }
  /* pass 0: the dispatched entry; 1: 8 lanes; 2: 16 lanes */
  for (pass = 0; pass < 3 && !bad; pass++) {
    if ((pass == 1 && block < 8) || (pass == 2 && block < 16))
      continue;
    memset(y, 0x7f, ny * sizeof(float)); /* not a plausible result */
    CHECK(pass == 0 ? tidsp_matmul_f32__host_mlas(&p, a, b, with_bias ? bias : NULL, y) == TIDSP_OK
                    : tidsp_matmul_f32__host_mlas_lanes(&p, a, b, with_bias ? bias : NULL, y,
                                                        pass == 1 ? 8 : 16) == TIDSP_OK);
    CHECK(guards_ok(y, ny * sizeof(float)));
    if (block == 0) {
      CHECK(memcmp(y, r, ny * sizeof(float)) == 0);
      continue;
    }
    for (t = 0; t < ny && !bad; t++)
      if (memcmp(&y[t], &mdl[t], sizeof(float)) != 0 || fabsf(r[t] - mdl[t]) > 1e-4f * (float)k) {
        bt = (int32_t)(t / ((size_t)m * nn));
        i = (int32_t)(t / (size_t)nn % (size_t)m);
        j = (int32_t)(t % (size_t)nn);
        CHECK_MSG(0, "gemm %dx%dx%d (B %s, K stride %d, pass %d) at b%d i%d j%d: got %a ref %a model %a",
                  (int)m, (int)k, (int)nn, b_runtime ? "runtime" : "constant", (int)stride, (int)pass, (int)bt,
                  (int)i, (int)j, (double)y[t], (double)r[t], (double)mdl[t]);
        bad = 1;
      }
  }
  CHECK(!bad);
  free(a);
  free(b);
  free(bias);
  free(mdl);
  guarded_free(y);
  guarded_free(r);
}

static void check_gemm(int32_t batch, int32_t m, int32_t k, int32_t nn, int b_broadcast, int with_bias) {
  check_gemm_stride(batch, m, k, nn, b_broadcast, with_bias, 0, 256);
}

static void test_gemm(void) {
  int it;
  check_gemm(1, 1, 576, 128, 1, 1);   /* R-Net's dense4: three K strides */
  check_gemm(1, 1, 1152, 256, 1, 1);  /* O-Net's dense5 */
  check_gemm(1, 3, 256, 2, 1, 1);     /* exactly one stride */
  check_gemm(1, 2, 257, 5, 1, 0);     /* a 1-element last stride, no bias */
  check_gemm(2, 3, 600, 300, 0, 1);   /* columns past the kernel's 256-column pass */
  /* register tiles (6 rows × 64 or 16 columns): every row remainder
   * 1..5 and full tiles, column remainders inside and past a vector */
  check_gemm(1, 13, 300, 71, 0, 1);   /* 2 row tiles + 1, 64 + 7 columns, 2 K strides */
  check_gemm(2, 11, 513, 129, 2, 0);  /* A broadcast, 6 + 5 rows, 3 strides (the last 1) */
  check_gemm(3, 6, 256, 64, 3, 1);    /* both broadcast, exact tiles, one full stride */
  check_gemm(1, 4, 100, 15, 0, 0);    /* fewer columns than one vector */
  check_gemm(1, 9, 0, 20, 0, 1);      /* K = 0: the bias */
  check_gemm(1, 9, 0, 20, 0, 0);      /* K = 0: zeros */
  for (it = 0; it < 40; it++)
    check_gemm(rnd_range(1, 3), rnd_range(1, 20), rnd_range(1, 700), rnd_range(1, 150), it % 4, it % 2);
}

static void test_gemm_runtime_b(void) {
  int it;
  check_gemm_stride(1, 20, 200, 300, 0, 0, 1, 128);   /* N >= K > 128: strides of 128 */
  check_gemm_stride(2, 5, 300, 100, 0, 0, 1, 128);    /* N < K, N > 64 */
  check_gemm_stride(1, 197, 197, 64, 0, 0, 1, 256);   /* ViT's A·V: N = 64 */
  check_gemm_stride(1, 20, 600, 30, 0, 0, 1, 512);    /* N ≤ 32 */
  check_gemm_stride(1, 10, 2000, 8, 0, 0, 1, 1024);   /* N ≤ 16: the N stride stops at 16 */
  check_gemm_stride(1, 10, 2000, 17, 0, 1, 1, 512);   /* with a bias (a Gemm's C) */
  check_gemm_stride(3, 49, 49, 32, 0, 0, 1, 128);     /* Swin's A·V: one stride either way */
  check_gemm_stride(1, 1, 600, 200, 0, 0, 1, 256);    /* M = 1: the packed order */
  check_gemm_stride(1, 4, 600, 1, 0, 0, 1, 256);      /* N = 1: the packed order */
  check_gemm_stride(12, 197, 64, 197, 1, 0, 1, 128); /* ViT's Q·Kᵀ (B per head), 3×64 + 5 columns */
  check_gemm_stride(2, 197, 197, 64, 0, 0, 1, 256);   /* ViT's A·V: 32 row tiles + 5 */
  check_gemm_stride(2, 49, 32, 49, 2, 1, 1, 128);     /* Swin's Q·Kᵀ, A broadcast, a bias */
  check_gemm_stride(1, 17, 1100, 40, 0, 1, 1, 256);   /* N ≤ 64, 5 K strides */
  for (it = 0; it < 40; it++) {
    int32_t m = rnd_range(1, 20), k = rnd_range(1, 2100), nn = rnd_range(1, 300);
    check_gemm_stride(rnd_range(1, 3), m, k, nn, it % 4, it % 2, 1, runtime_b_stride(m, k, nn));
  }
}

static void test_dispatch(void) {
  /* the reference row keeps the reference's bytes */
  const tidsp_kernel_variant *v = tidsp_kernel_variant_active();
  CHECK(v->conv2d_f32 != NULL && v->matmul_f32 != NULL);
  if (strcmp(v->name, "ref") == 0)
    CHECK(v->conv2d_f32 == tidsp_conv2d_f32__ref && v->matmul_f32 == tidsp_matmul_f32__ref);
  else
    CHECK(v->conv2d_f32 == tidsp_conv2d_f32__host_mlas && v->matmul_f32 == tidsp_matmul_f32__host_mlas);
  CHECK(tidsp_conv2d_f32__host_mlas(NULL, NULL, NULL, NULL, NULL, NULL) == TIDSP_ERR_NULL);
  CHECK(tidsp_matmul_f32__host_mlas(NULL, NULL, NULL, NULL, NULL) == TIDSP_ERR_NULL);
}

int main(void) {
  printf("MLAS channel block on this CPU: %d\n", (int)tidsp_mlas_f32_block());
  test_conv_named();
  test_conv_tiles();
  test_conv_random();
  test_conv_nchw();
  test_conv_nchw_vector();
  test_conv_nchw_random();
  test_gemm();
  test_gemm_runtime_b();
  test_dispatch();
  UNIT_MAIN_END();
}

#else

int main(void) {
  printf("not x86-64: no MLAS-order kernels\n");
  UNIT_MAIN_END();
}

#endif
