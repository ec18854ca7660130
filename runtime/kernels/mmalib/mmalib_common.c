/*
 * mmalib_common.c — checks shared by the MMALIB reference kernels: the
 * shift range and the conv geometry (H_out/W_out by the fork's integer
 * division, which is only meaningful when the kernel fits the padded input).
 */
#include "mmalib_internal.h"

int tidsp_mmalib_shifts_ok(const uint8_t *shift, int32_t n) {
  int32_t i;
  if (!shift)
    return 1;
  for (i = 0; i < n; i++) {
    if (shift[i] > TIDSP_MMALIB_MAX_SHIFT)
      return 0;
  }
  return 1;
}

static int fits_i32(int64_t a, int64_t b, int64_t c) {
  /* a·b·c ≤ INT32_MAX for positive a, b, c ≤ INT32_MAX, overflow-free. */
  if (a > INT32_MAX / b)
    return 0;
  return a * b <= INT32_MAX / c;
}

int32_t tidsp_mmalib_conv_geom_init(tidsp_mmalib_conv_geom *g, int32_t c_in,
                                    int32_t h_in, int32_t w_in, int32_t c_out,
                                    int32_t kh, int32_t kw, int32_t stride_h,
                                    int32_t stride_w, int32_t pad_t,
                                    int32_t pad_b, int32_t pad_l,
                                    int32_t pad_r, int64_t max_reduction) {
  int64_t hp, wp;
  if (c_in < 1 || h_in < 1 || w_in < 1 || c_out < 1 || kh < 1 || kw < 1)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  /* MMALIB takes one stride (the spec: "symmetric stride"). */
  if (stride_h < 1 || stride_h != stride_w)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if (pad_t < 0 || pad_b < 0 || pad_l < 0 || pad_r < 0)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  hp = (int64_t)h_in + pad_t + pad_b;
  wp = (int64_t)w_in + pad_l + pad_r;
  if (hp < kh || wp < kw)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if (!fits_i32(c_in, h_in, w_in) || !fits_i32(c_in, kh, kw) ||
      (int64_t)c_in * kh * kw > max_reduction)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  g->c_in = c_in;
  g->h_in = h_in;
  g->w_in = w_in;
  g->c_out = c_out;
  g->kh = kh;
  g->kw = kw;
  g->stride = stride_h;
  g->pad_t = pad_t;
  g->pad_l = pad_l;
  g->h_out = (int32_t)((hp - kh) / stride_h + 1);
  g->w_out = (int32_t)((wp - kw) / stride_w + 1);
  if (!fits_i32(c_out, g->h_out, g->w_out) || !fits_i32(c_out, c_in, (int64_t)kh * kw))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  return TIDSP_MMALIB_OK;
}
