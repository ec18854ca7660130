/*
 * maxpool_i8.c — 2-D max pooling on int8, NCHW. Padding acts as −inf: only
 * taps inside the input are compared (every window has one; checked first).
 *
 * This is tidsp_maxpool_i8__ref, the oracle: the public tidsp_maxpool_i8 dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_maxpool_i8__ref(const tidsp_pool2d_params *p, const int8_t *x,
                              int8_t *y) {
  int32_t st, oh, ow, kh, kw;
  int64_t nc;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_pool2d_check(p);
  if (st == TIDSP_OK)
    st = tidsp_ref_pool2d_check_nonempty(p);
  if (st != TIDSP_OK)
    return st;
  for (nc = 0; nc < (int64_t)p->n * p->c; nc++) {
    const int8_t *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)p->w_in;
    int8_t *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)p->w_out;
    for (oh = 0; oh < p->h_out; oh++) {
      for (ow = 0; ow < p->w_out; ow++) {
        int32_t m = TIDSP_REF_I8_MIN;
        tidsp_ref_window win;
        tidsp_ref_pool2d_window(p, oh, ow, &win);
        for (kh = win.kh0; kh < win.kh1; kh++) {
          const int64_t row = (win.h0 + (int64_t)kh * p->dil_h) * p->w_in + win.w0;
          for (kw = win.kw0; kw < win.kw1; kw++)
            if (xp[row + (int64_t)kw * p->dil_w] > m)
              m = xp[row + (int64_t)kw * p->dil_w];
        }
        yp[(size_t)oh * (size_t)p->w_out + (size_t)ow] = (int8_t)m;
      }
    }
  }
  return TIDSP_OK;
}
