/*
 * conv2d_f32__host_mlas.c — tidsp_conv2d_f32 (ref/conv2d_f32.c) summed in
 * the order ONNX Runtime's default CPU session sums a float Conv, so that
 * a float network is bit-identical to ORT on the same CPU.
 *
 * At ORT_ENABLE_ALL, ORT's NchwcTransformer turns every ungrouped 2-D
 * float Conv with constant weights into MLAS's NCHWc convolution, whose
 * channel block B is 16 on AVX-512F and 8 on AVX2/FMA3 (the ISA MLAS picks
 * at run time; this file picks the same, see tidsp_mlas_f32_block). Per
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
 * (compiler/passes/fuse_conv_add_f32.c decides when ORT fuses).
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
 * Convolutions ORT keeps in NCHW (params.mlas_nchw, set by the compiler
 * from compiler/passes/match/ort_nchwc.c: e.g. 16 or more input channels
 * not a multiple of 4, depthwise ones whose channels are not a multiple of
 * 4, other grouped ones, runtime weights) run MLAS's generic convolution:
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
 * checks this file against a scalar model of the order. The AVX2 (B = 8)
 * choice follows MLAS's source and was not run on an AVX2-only CPU.
 */
#include <math.h>

#include "../kernel_variants.h"
#include "../ref/conv_internal.h"

#if TIDSP_HAVE_HOST_X86
#include "fma_exact_begin.h"

/* MLAS's pointwise kernel takes at most this many input channels per call */
#define MLAS_POINTWISE_CHANNELS 128

int32_t tidsp_mlas_f32_block(void) {
  static int32_t block = -1;
  if (block < 0) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      block = 16;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      block = 8;
    else
      block = 0;
  }
  return block;
}

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

/* part[r][j] = Σ over the taps of channels [c0, c1) of x·w, in MLAS's
 * order (rows, columns, channels), for the tile t of output channel co. */
static void group_sum(const tidsp_conv2d_params *p, const float *x_n, const float *w_co,
                      int32_t c0, int32_t c1, const tidsp_ref_conv_tile *t, float *part) {
  /* x_n and w_co are those of the output channel's group: a depthwise
   * group has one channel, c0 = 0, c1 = 1 */
  const size_t plane = (size_t)p->h_in * (size_t)p->w_in;
  const int32_t ksz = p->k_h * p->k_w, sh = p->stride_h, sw = p->stride_w;
  int32_t kh, kw, ci, r, j, rlo, rhi, clo, chi;
  size_t i;

  for (i = 0; i < (size_t)t->rows * (size_t)t->cols; i++)
    part[i] = 0.0f;
  for (kh = 0; kh < p->k_h; kh++) {
    const int64_t roff = (int64_t)t->oh0 * sh + (int64_t)kh * p->dil_h - p->pad_top;
    tidsp_ref_valid_range(roff, sh, p->h_in, t->rows, &rlo, &rhi);
    if (rlo >= rhi)
      continue;
    for (kw = 0; kw < p->k_w; kw++) {
      const int64_t coff = (int64_t)t->ow0 * sw + (int64_t)kw * p->dil_w - p->pad_left;
      tidsp_ref_valid_range(coff, sw, p->w_in, t->cols, &clo, &chi);
      if (clo >= chi)
        continue;
      for (ci = c0; ci < c1; ci++) {
        const float wv = w_co[(size_t)ci * (size_t)ksz + (size_t)(kh * p->k_w + kw)];
        const float *xs = x_n + (size_t)ci * plane +
                          (ptrdiff_t)(((int64_t)rlo * sh + roff) * p->w_in + (int64_t)clo * sw + coff);
        for (r = rlo; r < rhi; r++) {
          float *as = part + (size_t)r * (size_t)t->cols + clo;
          const int32_t len = chi - clo;
          if (sw == 1) {
            for (j = 0; j < len; j++)
              as[j] = fmaf(xs[j], wv, as[j]);
          } else {
            for (j = 0; j < len; j++)
              as[j] = fmaf(xs[(ptrdiff_t)j * sw], wv, as[j]);
          }
          xs += (ptrdiff_t)sh * p->w_in;
        }
      }
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
 * output; no bias yet. */
static void nchw_group(const tidsp_conv2d_params *p, const float *x_g, const float *w_g,
                       const float *s, float *y) {
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
  int32_t pix, co, k0, k1, c0, cnt, kk;

  if (m == 1 && trans_b) { /* SGEMM's M = 1 check comes first: N = 1 kernel over the pixels */
    m1t_rows(p, x_g, w_g, k, n, 1, s, y);
    return;
  }
  if (m > 1 && n == 1 && ldb_one) {
    m1t_rows(p, x_g, w_g, k, m, 0, s, y);
    return;
  }
  for (pix = 0; pix < n; pix++) {
    const int32_t oh = pix / p->w_out, ow = pix % p->w_out;
    if (m == 1) {
      /* M = 1 kernel; GemmDirect sums K in one call, MlasConvOperation
       * (the only other path for one output channel) in K strides, each
       * call adding to the output (the sum, or 0 in the first) */
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
      continue;
    }
    /* MLAS's SGEMM kernels: per K stride one fused multiply-add chain from
     * 0; the first stride's sum is stored (or added to the sum: beta = 1),
     * each later one added to the output */
    for (k0 = 0; k0 < k; k0 = k1) {
      k1 = k - k0 < stride_k ? k : k0 + stride_k; /* stride_k <= NCHW_CHUNK */
      nchw_gather(p, x_g, oh, ow, k0, k1 - k0, col);
      for (co = 0; co < m; co++) {
        const float *w_r = w_g + (size_t)co * (size_t)k;
        float part = 0.0f;
        float *out = y + (size_t)co * (size_t)n + (size_t)pix;
        for (kk = k0; kk < k1; kk++)
          part = fmaf(col[kk - k0], w_r[kk], part);
        if (k0 == 0)
          *out = s ? part + s[(size_t)co * (size_t)n + (size_t)pix] : part;
        else
          *out = part + *out;
      }
    }
  }
}

/* A convolution ORT keeps in NCHW (params.mlas_nchw): MlasConv, group by
 * group, then MlasActivation's out + bias. */
static void conv_nchw(const tidsp_conv2d_params *p, const float *x, const float *w, const float *bias,
                      const float *sum, float *y) {
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
                 w + (size_t)g * (size_t)m * k, sum ? sum + out_off : NULL, y_g);
      if (bias) {
        for (co = 0; co < m; co++)
          for (i = 0; i < n_px; i++)
            y_g[(size_t)co * n_px + i] = y_g[(size_t)co * n_px + i] + bias[g * m + co];
      }
    }
  }
}

int32_t tidsp_conv2d_f32__host_mlas(const tidsp_conv2d_params *p, const float *x,
                                    const float *w, const float *bias, const float *sum,
                                    float *y) {
  float part[TIDSP_REF_CONV_TILE], out[TIDSP_REF_CONV_TILE];
  tidsp_ref_conv_tile t;
  int32_t st, n, co, r, j, c0, group, cpg_in, tile_rows, tile_cols;
  const int32_t block = tidsp_mlas_f32_block();
  size_t i, cnt;

  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_conv2d_check(p);
  if (st != TIDSP_OK)
    return st;
  if (block && p->mlas_nchw) {
    conv_nchw(p, x, w, bias, sum, y);
    return TIDSP_OK;
  }
  group = block ? channel_group(p, block) : 0;
  if (group == 0)
    return tidsp_conv2d_f32__ref(p, x, w, bias, sum, y);
  cpg_in = p->c_in / p->groups;
  tidsp_ref_conv_tile_dims(p->h_out, p->w_out, &tile_rows, &tile_cols);
  for (n = 0; n < p->n; n++) {
    const float *x_n = x + (size_t)n * (size_t)p->c_in * (size_t)p->h_in * (size_t)p->w_in;
    for (co = 0; co < p->c_out; co++) {
      /* output channel co reads the input channels of its group */
      const float *x_g = x_n + (size_t)(co / (p->c_out / p->groups)) * (size_t)cpg_in *
                                   (size_t)p->h_in * (size_t)p->w_in;
      const float *w_co = w + (size_t)co * (size_t)cpg_in * (size_t)p->k_h * (size_t)p->k_w;
      const size_t plane = ((size_t)n * (size_t)p->c_out + (size_t)co) * (size_t)p->h_out * (size_t)p->w_out;
      float *y_co = y + plane;
      const float *s_co = sum ? sum + plane : NULL;
      for (t.oh0 = 0; t.oh0 < p->h_out; t.oh0 += tile_rows) {
        t.rows = p->h_out - t.oh0 < tile_rows ? p->h_out - t.oh0 : tile_rows;
        for (t.ow0 = 0; t.ow0 < p->w_out; t.ow0 += tile_cols) {
          t.cols = p->w_out - t.ow0 < tile_cols ? p->w_out - t.ow0 : tile_cols;
          cnt = (size_t)t.rows * (size_t)t.cols;
          for (c0 = 0; c0 < cpg_in; c0 += group) {
            const int32_t c1 = cpg_in - c0 < group ? cpg_in : c0 + group;
            group_sum(p, x_g, w_co, c0, c1, &t, c0 == 0 ? out : part);
            if (c0 != 0) {
              for (i = 0; i < cnt; i++)
                out[i] = part[i] + out[i];
            } else if (s_co) {
              /* MLAS accumulates the first group into the output buffer,
               * which holds the sum */
              for (r = 0; r < t.rows; r++) {
                const float *s_row = s_co + (size_t)(t.oh0 + r) * (size_t)p->w_out + t.ow0;
                for (j = 0; j < t.cols; j++)
                  out[(size_t)r * (size_t)t.cols + (size_t)j] += s_row[j];
              }
            }
          }
          if (bias) {
            for (i = 0; i < cnt; i++)
              out[i] = out[i] + bias[co];
          }
          for (r = 0; r < t.rows; r++) {
            float *y_row = y_co + (size_t)(t.oh0 + r) * (size_t)p->w_out + t.ow0;
            for (j = 0; j < t.cols; j++)
              y_row[j] = out[(size_t)r * (size_t)t.cols + (size_t)j];
          }
        }
      }
    }
  }
  return TIDSP_OK;
}

#pragma GCC pop_options
#endif
