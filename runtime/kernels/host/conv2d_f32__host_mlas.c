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
 * per group) runs in MLAS's NCHWc depthwise kernel when its input is NCHWc
 * (inside a network: after a convolution, the channels padded to a
 * multiple of B) or its channels are a multiple of B: per output, one
 * chain over kernel rows and columns from 0, then + bias (a group of one
 * channel below). On a graph input with other channel counts ORT runs
 * MLAS's generic convolution, often (4, 8, 24 channels) but not always
 * (10 channels, 3×3) in the same order: not matched. Groups of whole
 * blocks of B input and output channels run in the NCHWc kernels group by
 * group, each as an ungrouped convolution. Other grouped convolutions
 * (MLAS's generic im2col SGEMM, not matched yet) and CPUs without FMA
 * (MLAS's SSE/AVX kernels multiply and add separately) run the reference.
 *
 * Verified against ORT 1.30 (AVX-512F) on MTCNN's P/R/O-Net convolutions
 * (100 % bit-identical per layer and per net), PP-OCR cls's layers up to its
 * first residual Add, and single convolutions of each kind
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
