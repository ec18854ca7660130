/*
 * mmalib_conv2d_grouped.c — mmalib_conv2d_i8_grouped_loop: a grouped conv
 * as `groups` independent convs, group k reading input channels
 * [k·C_in/g, (k+1)·C_in/g) and writing output channels [k·C_out/g, …). The
 * fork loops like this because MMALIB's numGroupsPerKernel corrupted
 * results on hardware. Every group has the same geometry, so one check up
 * front covers them all and no group can fail after another has written.
 * The groups are computed together, as one grouped generic conv when that
 * is exact (mmalib_internal.h).
 */
#include "mmalib_internal.h"

/* The public entry and its __ref (the scalar loops only) share one body. */
#define GROUPED_PARAMS MMALIB_I8_PTR_PARAMS(kernel), int32_t C_in,            \
  int32_t H_in, int32_t W_in, int32_t C_out, int32_t KH, int32_t KW,          \
  int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_bottom,    \
  int32_t pad_left, int32_t pad_right, int32_t groups

static int32_t grouped_loop(int on_ref, GROUPED_PARAMS) {
  tidsp_mmalib_conv_geom g;
  int32_t st, cin_g, cout_g;
  /* Unlike the plain conv, NULL requant arrays are refused (as the fork). */
  if (!bias || !scale || !shift || !mmalib_buffers_ok(input, kernel, output))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  /* groups == 1 is the plain conv and groups == C_in the depthwise kernel. */
  if (groups <= 1 || groups == C_in || C_in < 1 || C_out < 1 ||
      C_in % groups != 0 || C_out % groups != 0)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  cin_g = C_in / groups;
  cout_g = C_out / groups;
  st = tidsp_mmalib_conv_geom_init(&g, cin_g, H_in, W_in, cout_g, KH, KW,
                                   stride_h, stride_w, pad_top, pad_bottom,
                                   pad_left, pad_right,
                                   MMALIB_I8_MAX_REDUCTION);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if ((int64_t)C_in * H_in * W_in > INT32_MAX ||
      (int64_t)C_out * g.h_out * g.w_out > INT32_MAX ||
      !tidsp_mmalib_shifts_ok(shift, C_out))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  (void)tidsp_mmalib_conv2d_i8_compute(on_ref, &g, groups, input, kernel,
                                       bias, scale, shift, output);
  return TIDSP_MMALIB_OK;
}

#define GROUPED_ARGS MMALIB_I8_PTR_ARGS(kernel), C_in, H_in, W_in, C_out,     \
  KH, KW, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right,       \
  groups

MMALIB_ENTRY_PAIR(mmalib_conv2d_i8_grouped_loop, grouped_loop, GROUPED_PARAMS, GROUPED_ARGS)
