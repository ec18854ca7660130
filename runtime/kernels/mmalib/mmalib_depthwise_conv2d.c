/*
 * mmalib_depthwise_conv2d.c — mmalib_depthwise_conv2d_{i8,i16}: channel c
 * of the output convolves input plane c with weights[c] (multiplier 1),
 * then MMALIB's requantization with channel c's bias/scale/shift.
 *
 * The padded output row stride: MMALIB emits rows TIDSP_MMALIB_DW_ROW_STRIDE
 * bytes apart and the fork compacts them from a workspace. Here each value
 * is stored straight at its compact position (row oh at oh·W_out), which is
 * the compacted result without the workspace: exactly C·H_out·W_out
 * elements are written, whatever W_out is.
 *
 * The int8 kernel is the grouped conv with one channel per group, computed
 * like the other int8 convs (mmalib_internal.h: the dispatched generic
 * kernel when exact, else the scalar conv loops).
 */
#include "mmalib_internal.h"

/* Both dtypes: a square kernel, one stride in {1, 2}, num_groups == channels
 * and the conv geometry. Fills g. */
static int32_t dw_check(tidsp_mmalib_conv_geom *g, const void *input,
                        const void *weights, const void *output,
                        const uint8_t *shift, int32_t channels, int32_t H_in,
                        int32_t W_in, int32_t KH, int32_t KW, int32_t stride_h,
                        int32_t stride_w, int32_t pad_t, int32_t pad_b,
                        int32_t pad_l, int32_t pad_r, int32_t num_groups) {
  int32_t st;
  if (!mmalib_buffers_ok(input, weights, output))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if (channels < 1 || num_groups != channels || KH != KW ||
      (stride_h != 1 && stride_h != 2))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  st = tidsp_mmalib_conv_geom_init(g, 1, H_in, W_in, channels, KH, KW,
                                   stride_h, stride_w, pad_t, pad_b, pad_l,
                                   pad_r, MMALIB_I8_MAX_REDUCTION);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if ((int64_t)channels * H_in * W_in > INT32_MAX ||
      !tidsp_mmalib_shifts_ok(shift, channels))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  return TIDSP_MMALIB_OK;
}

/* mmalib_depthwise_conv2d_i8 and its __ref (the scalar loops only) share
 * one body. */
#define DW_I8_PARAMS MMALIB_I8_PTR_PARAMS(weights), int32_t channels,         \
  int32_t H_in, int32_t W_in, int32_t KH, int32_t KW, int32_t stride_h,       \
  int32_t stride_w, int32_t pad_t, int32_t pad_b, int32_t pad_l,              \
  int32_t pad_r, int32_t num_groups

static int32_t depthwise_i8(int on_ref, DW_I8_PARAMS) {
  tidsp_mmalib_conv_geom g;
  int32_t st;
  st = dw_check(&g, input, weights, output, shift, channels, H_in, W_in, KH,
                KW, stride_h, stride_w, pad_t, pad_b, pad_l, pad_r,
                num_groups);
  if (st != TIDSP_MMALIB_OK)
    return st;
  /* MMALIB's int8 depthwise kernels: 3×3, 5×5, 7×7; stride 2 up to 5×5. */
  if ((KH != 3 && KH != 5 && KH != 7) || (stride_h == 2 && KH > 5))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  /* channels groups of one input and one output channel each */
  g.c_out = 1;
  (void)tidsp_mmalib_conv2d_i8_compute(on_ref, &g, channels, input, weights,
                                       bias, scale, shift, output);
  return TIDSP_MMALIB_OK;
}

#define DW_I8_ARGS MMALIB_I8_PTR_ARGS(weights), channels, H_in, W_in, KH,     \
  KW, stride_h, stride_w, pad_t, pad_b, pad_l, pad_r, num_groups

MMALIB_ENTRY_PAIR(mmalib_depthwise_conv2d_i8, depthwise_i8, DW_I8_PARAMS, DW_I8_ARGS)

/* One dimension of a crop (mmalib.h): a negative pad drops that many of
 * the n input rows (columns) on its side and becomes 0. 0 when nothing of
 * the input would be left. */
static int crop_dim(int32_t n, int32_t *pad_before, int32_t *pad_after,
                    int32_t *first, int32_t *len) {
  int64_t kept = TIDSP_MMALIB_CROP_LEN(n, *pad_before, *pad_after);
  if (kept < 1)
    return 0;
  *first = *pad_before < 0 ? -*pad_before : 0;
  *len = (int32_t)kept;
  if (*pad_before < 0)
    *pad_before = 0;
  if (*pad_after < 0)
    *pad_after = 0;
  return 1;
}

int32_t mmalib_depthwise_conv2d_i16(const int16_t *input,
                                    const int16_t *weights,
                                    const int64_t *bias, const uint8_t *scale,
                                    const uint8_t *shift, int16_t *output,
                                    int32_t channels, int32_t H_in,
                                    int32_t W_in, int32_t KH, int32_t KW,
                                    int32_t stride_h, int32_t stride_w,
                                    int32_t pad_t, int32_t pad_b,
                                    int32_t pad_l, int32_t pad_r,
                                    int32_t num_groups) {
  tidsp_mmalib_conv_geom g;
  int32_t st, c, oh, ow, y, x, row0, rows, col0, cols;
  if (H_in < 1 || W_in < 1 ||
      !crop_dim(H_in, &pad_t, &pad_b, &row0, &rows) ||
      !crop_dim(W_in, &pad_l, &pad_r, &col0, &cols))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  st = dw_check(&g, input, weights, output, shift, channels, rows, cols, KH,
                KW, stride_h, stride_w, pad_t, pad_b, pad_l, pad_r,
                num_groups);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if ((int64_t)channels * H_in * W_in > INT32_MAX)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  /* MMALIB-882: MMALIB's int16 depthwise kernel exists for 3×3 only. */
  if (KH != 3)
    return TIDSP_MMALIB_ERR_NOT_IMPLEMENTED;
  for (c = 0; c < channels; c++) {
    /* the window's first element; its rows W_in apart */
    const int16_t *in = input + (size_t)c * (size_t)H_in * (size_t)W_in +
                        (size_t)row0 * (size_t)W_in + (size_t)col0;
    const int16_t *w = weights + (size_t)c * (size_t)KH * (size_t)KW;
    int16_t *out = output + (size_t)c * (size_t)g.h_out * (size_t)g.w_out;
    for (oh = 0; oh < g.h_out; oh++) {
      for (ow = 0; ow < g.w_out; ow++) {
        int64_t acc = 0;
        for (y = 0; y < KH; y++) {
          int64_t iy = (int64_t)oh * g.stride - pad_t + y;
          if (iy < 0 || iy >= rows)
            continue;
          for (x = 0; x < KW; x++) {
            int64_t ix = (int64_t)ow * g.stride - pad_l + x;
            if (ix >= 0 && ix < cols)
              acc += (int32_t)in[iy * W_in + ix] * w[y * KW + x];
          }
        }
        out[(size_t)oh * (size_t)g.w_out + (size_t)ow] = mmalib_sat_i16(mmalib_requant(
            mmalib_add_clamped(acc, bias ? bias[c] : 0), scale, shift, c));
      }
    }
  }
  return TIDSP_MMALIB_OK;
}
