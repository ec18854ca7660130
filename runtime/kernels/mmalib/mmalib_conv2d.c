/*
 * mmalib_conv2d.c — mmalib_conv2d_{i8,i16}: direct NCHW/OIHW convolution
 * with MMALIB's requantization (mmalib.h). Each output is one exact
 * accumulation over the taps inside the input (padded taps are 0, so they
 * are skipped rather than read), then bias, scale, half-up shift, saturate.
 * The fork's C_out chunking (32 / 16 / 1024 channels per MMALIB call) only
 * bounds the MMA's working set; it does not change any value, so there is
 * none here. The int8 conv runs through the dispatched generic kernel when
 * that is exact (mmalib_i8_dispatched.c); the loops below are the fallback.
 */
#include "mmalib_internal.h"

/* The tap range [*lo, *hi) of a kernel axis whose first tap lands on input
 * index `start`, clipped to [0, n). */
static void tap_range(int64_t start, int32_t k, int32_t n, int32_t *lo,
                      int32_t *hi) {
  int64_t a = start < 0 ? -start : 0;
  int64_t b = (int64_t)n - start;
  *lo = (int32_t)a;
  *hi = (int32_t)(b < k ? b : k);
}

/* One group: input at its g->c_in planes, kernel at [g->c_out][g->c_in]
 * [kh][kw], bias/scale/shift/output at its first output channel. */
static void conv_i8_group(const tidsp_mmalib_conv_geom *g,
                          const int8_t *input, const int8_t *kernel,
                          const int32_t *bias, const uint8_t *scale,
                          const uint8_t *shift, int8_t *output) {
  const size_t plane = (size_t)g->h_in * (size_t)g->w_in;
  const size_t ksize = (size_t)g->kh * (size_t)g->kw;
  int32_t oc, oh, ow, ic, y, x, y0, y1, x0, x1;
  for (oc = 0; oc < g->c_out; oc++) {
    const int8_t *wk = kernel + (size_t)oc * (size_t)g->c_in * ksize;
    int8_t *out = output + (size_t)oc * (size_t)g->h_out * (size_t)g->w_out;
    for (oh = 0; oh < g->h_out; oh++) {
      int64_t iy = (int64_t)oh * g->stride - g->pad_t;
      tap_range(iy, g->kh, g->h_in, &y0, &y1);
      for (ow = 0; ow < g->w_out; ow++) {
        int64_t ix = (int64_t)ow * g->stride - g->pad_l;
        int32_t acc = 0; /* exact: the reduction length is bounded */
        tap_range(ix, g->kw, g->w_in, &x0, &x1);
        for (ic = 0; ic < g->c_in; ic++) {
          const int8_t *in = input + (size_t)ic * plane;
          const int8_t *w = wk + (size_t)ic * ksize;
          for (y = y0; y < y1; y++) {
            const int8_t *row = in + (size_t)(iy + y) * (size_t)g->w_in;
            const int8_t *wrow = w + (size_t)y * (size_t)g->kw;
            for (x = x0; x < x1; x++)
              acc += (int32_t)row[ix + x] * wrow[x];
          }
        }
        out[(size_t)oh * (size_t)g->w_out + (size_t)ow] = mmalib_sat_i8(mmalib_requant(
            (int64_t)acc + (bias ? bias[oc] : 0), scale, shift, oc));
      }
    }
  }
}

void tidsp_mmalib_conv2d_i8_scalar(const tidsp_mmalib_conv_geom *g,
                                   int32_t groups, const int8_t *input,
                                   const int8_t *kernel, const int32_t *bias,
                                   const uint8_t *scale, const uint8_t *shift,
                                   int8_t *output) {
  const size_t in_group = (size_t)g->c_in * (size_t)g->h_in * (size_t)g->w_in;
  const size_t w_oc = (size_t)g->c_in * (size_t)g->kh * (size_t)g->kw;
  const size_t out_oc = (size_t)g->h_out * (size_t)g->w_out;
  int32_t k;
  for (k = 0; k < groups; k++) {
    const size_t oc0 = (size_t)k * (size_t)g->c_out;
    conv_i8_group(g, input + (size_t)k * in_group, kernel + oc0 * w_oc,
                  bias ? bias + oc0 : NULL, scale ? scale + oc0 : NULL,
                  shift ? shift + oc0 : NULL, output + oc0 * out_oc);
  }
}

/* mmalib_conv2d_i8 and its __ref (the scalar loops only) share one body. */
#define CONV2D_I8_PARAMS MMALIB_I8_PTR_PARAMS(kernel), int32_t C_in,          \
  int32_t H_in, int32_t W_in, int32_t C_out, int32_t KH, int32_t KW,          \
  int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_bottom,    \
  int32_t pad_left, int32_t pad_right

static int32_t conv2d_i8(int on_ref, CONV2D_I8_PARAMS) {
  tidsp_mmalib_conv_geom g;
  int32_t st;
  if (!mmalib_buffers_ok(input, kernel, output))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  st = tidsp_mmalib_conv_geom_init(&g, C_in, H_in, W_in, C_out, KH, KW,
                                   stride_h, stride_w, pad_top, pad_bottom,
                                   pad_left, pad_right,
                                   MMALIB_I8_MAX_REDUCTION);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if (!tidsp_mmalib_shifts_ok(shift, C_out))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  (void)tidsp_mmalib_conv2d_i8_compute(on_ref, &g, 1, input, kernel, bias,
                                       scale, shift, output);
  return TIDSP_MMALIB_OK;
}

#define CONV2D_I8_ARGS MMALIB_I8_PTR_ARGS(kernel), C_in, H_in, W_in, C_out,   \
  KH, KW, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right

MMALIB_ENTRY_PAIR(mmalib_conv2d_i8, conv2d_i8, CONV2D_I8_PARAMS, CONV2D_I8_ARGS)

void tidsp_mmalib_conv2d_i16_compute(const tidsp_mmalib_conv_geom *g,
                                     const int16_t *input,
                                     const int16_t *kernel, const int64_t *bias,
                                     const uint8_t *scale,
                                     const uint8_t *shift, int16_t *output) {
  const size_t plane = (size_t)g->h_in * (size_t)g->w_in;
  const size_t ksize = (size_t)g->kh * (size_t)g->kw;
  int32_t oc, oh, ow, ic, y, x, y0, y1, x0, x1;
  for (oc = 0; oc < g->c_out; oc++) {
    const int16_t *wk = kernel + (size_t)oc * (size_t)g->c_in * ksize;
    int16_t *out = output + (size_t)oc * (size_t)g->h_out * (size_t)g->w_out;
    for (oh = 0; oh < g->h_out; oh++) {
      int64_t iy = (int64_t)oh * g->stride - g->pad_t;
      tap_range(iy, g->kh, g->h_in, &y0, &y1);
      for (ow = 0; ow < g->w_out; ow++) {
        int64_t ix = (int64_t)ow * g->stride - g->pad_l;
        int64_t acc = 0;
        tap_range(ix, g->kw, g->w_in, &x0, &x1);
        for (ic = 0; ic < g->c_in; ic++) {
          const int16_t *in = input + (size_t)ic * plane;
          const int16_t *w = wk + (size_t)ic * ksize;
          for (y = y0; y < y1; y++) {
            const int16_t *row = in + (size_t)(iy + y) * (size_t)g->w_in;
            const int16_t *wrow = w + (size_t)y * (size_t)g->kw;
            for (x = x0; x < x1; x++)
              acc += (int32_t)row[ix + x] * wrow[x];
          }
        }
        out[(size_t)oh * (size_t)g->w_out + (size_t)ow] = mmalib_sat_i16(mmalib_requant(
            mmalib_add_clamped(acc, bias ? bias[oc] : 0), scale, shift, oc));
      }
    }
  }
}

int32_t mmalib_conv2d_i16(const int16_t *input, const int16_t *kernel,
                          const int64_t *bias, const uint8_t *scale,
                          const uint8_t *shift, int16_t *output, int32_t C_in,
                          int32_t H_in, int32_t W_in, int32_t C_out, int32_t KH,
                          int32_t KW, int32_t stride_h, int32_t stride_w,
                          int32_t pad_top, int32_t pad_bottom,
                          int32_t pad_left, int32_t pad_right) {
  tidsp_mmalib_conv_geom g;
  int32_t st;
  if (!mmalib_buffers_ok(input, kernel, output))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  /* int16·int16 < 2^30, so any int32-sized reduction fits the int64
   * accumulator. */
  st = tidsp_mmalib_conv_geom_init(&g, C_in, H_in, W_in, C_out, KH, KW,
                                   stride_h, stride_w, pad_top, pad_bottom,
                                   pad_left, pad_right, INT32_MAX);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if (!tidsp_mmalib_shifts_ok(shift, C_out))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  tidsp_mmalib_conv2d_i16_compute(&g, input, kernel, bias, scale, shift, output);
  return TIDSP_MMALIB_OK;
}
