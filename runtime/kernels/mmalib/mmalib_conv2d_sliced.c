/*
 * mmalib_conv2d_sliced.c — mmalib_conv2d_{i8,i16}_sliced: one output-channel
 * tile of a conv whose weights exceed the L2 budget (InjectMMALIBDMA stages the
 * input once and the weights tile by tile). The tile is an ordinary conv on
 * the per-layer arrays advanced by oc_start, so a layer computed tile by
 * tile equals the layer computed at once.
 */
#include "mmalib_internal.h"

/* The tile's geometry and preconditions, shared by both widths: aligned
 * buffers (the un-advanced output is the layer's buffer, which is
 * aligned; the tile's first channel need not be: H_out·W_out is
 * arbitrary), oc_start >= 0, the layer's last channel addressable, the
 * tile's shifts in range. */
static int32_t tile_geom(const void *input, const void *kernel, const void *output, const uint8_t *shift,
                         int32_t C_in, int32_t H_in, int32_t W_in, int32_t C_out_tile, int32_t KH, int32_t KW,
                         int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_bottom,
                         int32_t pad_left, int32_t pad_right, int32_t oc_start, int64_t max_reduction,
                         tidsp_mmalib_conv_geom *g) {
  int32_t st;
  if (!mmalib_buffers_ok(input, kernel, output) || oc_start < 0)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  st = tidsp_mmalib_conv_geom_init(g, C_in, H_in, W_in, C_out_tile, KH, KW, stride_h, stride_w, pad_top,
                                   pad_bottom, pad_left, pad_right, max_reduction);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if ((int64_t)oc_start + C_out_tile > INT32_MAX ||
      ((int64_t)oc_start + C_out_tile) * g->h_out * g->w_out > INT32_MAX)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if (!tidsp_mmalib_shifts_ok(shift ? shift + oc_start : NULL, C_out_tile))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  return TIDSP_MMALIB_OK;
}

int32_t mmalib_conv2d_i8_sliced(const int8_t *input, const int8_t *kernel,
                                const int32_t *bias, const uint8_t *scale,
                                const uint8_t *shift, int8_t *output,
                                int32_t C_in, int32_t H_in, int32_t W_in,
                                int32_t C_out_tile, int32_t KH, int32_t KW,
                                int32_t stride_h, int32_t stride_w,
                                int32_t pad_top, int32_t pad_bottom,
                                int32_t pad_left, int32_t pad_right,
                                int32_t oc_start) {
  tidsp_mmalib_conv_geom g;
  int32_t st = tile_geom(input, kernel, output, shift, C_in, H_in, W_in, C_out_tile, KH, KW, stride_h,
                         stride_w, pad_top, pad_bottom, pad_left, pad_right, oc_start,
                         MMALIB_I8_MAX_REDUCTION, &g);
  if (st != TIDSP_MMALIB_OK)
    return st;
  (void)tidsp_mmalib_conv2d_i8_compute(
      0, &g, 1, input, kernel, bias ? bias + oc_start : NULL,
      scale ? scale + oc_start : NULL, shift ? shift + oc_start : NULL,
      output + (size_t)oc_start * (size_t)g.h_out * (size_t)g.w_out);
  return TIDSP_MMALIB_OK;
}

int32_t mmalib_conv2d_i16_sliced(const int16_t *input, const int16_t *kernel,
                                 const int64_t *bias, const uint8_t *scale,
                                 const uint8_t *shift, int16_t *output,
                                 int32_t C_in, int32_t H_in, int32_t W_in,
                                 int32_t C_out_tile, int32_t KH, int32_t KW,
                                 int32_t stride_h, int32_t stride_w,
                                 int32_t pad_top, int32_t pad_bottom,
                                 int32_t pad_left, int32_t pad_right,
                                 int32_t oc_start) {
  tidsp_mmalib_conv_geom g;
  int32_t st = tile_geom(input, kernel, output, shift, C_in, H_in, W_in, C_out_tile, KH, KW, stride_h,
                         stride_w, pad_top, pad_bottom, pad_left, pad_right, oc_start, INT32_MAX, &g);
  if (st != TIDSP_MMALIB_OK)
    return st;
  tidsp_mmalib_conv2d_i16_compute(
      &g, input, kernel, bias ? bias + oc_start : NULL,
      scale ? scale + oc_start : NULL, shift ? shift + oc_start : NULL,
      output + (size_t)oc_start * (size_t)g.h_out * (size_t)g.w_out);
  return TIDSP_MMALIB_OK;
}
