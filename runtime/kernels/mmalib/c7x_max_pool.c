/*
 * c7x_max_pool.c — c7x_int8_max_pool and c7x_int8_max_pool_tidl: int8 NCHW
 * max pooling with symmetric padding that acts as −128 (the int8 minimum, so
 * a padded tap never wins unless the whole window is padding). The _tidl
 * symbol stands in for the TIDL-backed kernel; both share one body so the
 * -tidl-kernels choice can never change a value.
 *
 * On the host the body is the dispatched tidsp_maxpool_i8, whose padding
 * never wins either (it compares in-input taps only, from −128): the same
 * bytes, at vector speed. It refuses a window with no tap in the input,
 * which c7x gives −128; those calls run the scalar loop here. The __ref
 * entries (the compiler's constant folding) run the scalar loop only.
 */
#include "cstatic/kernels.h"
#include "mmalib_internal.h"

#define MAX_POOL_PARAMS const int8_t *in, int8_t *out, int32_t N, int32_t C,  \
  int32_t H_in, int32_t W_in, int32_t H_out, int32_t W_out, int32_t kH,       \
  int32_t kW, int32_t sH, int32_t sW, int32_t pH, int32_t pW

static int32_t max_pool(int on_ref, MAX_POOL_PARAMS) {
  int64_t nc, planes;
  int32_t oh, ow, y, x;
  if (!in || !out)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if (N < 1 || C < 1 || H_in < 1 || W_in < 1 || H_out < 1 || W_out < 1 ||
      kH < 1 || kW < 1 || sH < 1 || sW < 1 || pH < 0 || pW < 0)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  /* Each window starts inside the input (ceil-mode windows may hang past
   * the padding; those taps are −128 too). */
  if ((int64_t)(H_out - 1) * sH - pH >= H_in ||
      (int64_t)(W_out - 1) * sW - pW >= W_in)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  planes = (int64_t)N * C;
  if (planes * H_in * W_in > INT32_MAX || planes * H_out * W_out > INT32_MAX)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if (!on_ref) {
    tidsp_pool2d_params p;
    p.n = N;
    p.c = C;
    p.h_in = H_in;
    p.w_in = W_in;
    p.h_out = H_out;
    p.w_out = W_out;
    p.k_h = kH;
    p.k_w = kW;
    p.stride_h = sH;
    p.stride_w = sW;
    p.dil_h = 1;
    p.dil_w = 1;
    p.pad_top = p.pad_bottom = pH;
    p.pad_left = p.pad_right = pW;
    p.count_include_pad = 0;
    if (tidsp_maxpool_i8(&p, in, out) == TIDSP_OK)
      return TIDSP_MMALIB_OK;
  }
  for (nc = 0; nc < planes; nc++) {
    const int8_t *ip = in + (size_t)nc * (size_t)H_in * (size_t)W_in;
    int8_t *op = out + (size_t)nc * (size_t)H_out * (size_t)W_out;
    for (oh = 0; oh < H_out; oh++) {
      for (ow = 0; ow < W_out; ow++) {
        int32_t m = MMALIB_I8_MIN;
        for (y = 0; y < kH; y++) {
          int64_t iy = (int64_t)oh * sH - pH + y;
          if (iy < 0 || iy >= H_in)
            continue;
          for (x = 0; x < kW; x++) {
            int64_t ix = (int64_t)ow * sW - pW + x;
            if (ix >= 0 && ix < W_in && ip[iy * W_in + ix] > m)
              m = ip[iy * W_in + ix];
          }
        }
        op[(size_t)oh * (size_t)W_out + (size_t)ow] = (int8_t)m;
      }
    }
  }
  return TIDSP_MMALIB_OK;
}

#define MAX_POOL_ARGS in, out, N, C, H_in, W_in, H_out, W_out, kH, kW, sH,    \
  sW, pH, pW

MMALIB_ENTRY_PAIR(c7x_int8_max_pool, max_pool, MAX_POOL_PARAMS, MAX_POOL_ARGS)

MMALIB_ENTRY_PAIR(c7x_int8_max_pool_tidl, max_pool, MAX_POOL_PARAMS, MAX_POOL_ARGS)
