/*
 * maxpool_f32.c — 2-D max pooling on float, NCHW. Padding acts as −inf:
 * only taps inside the input are compared (every window has one; checked
 * first). A NaN tap never wins a comparison.
 *
 * This is tidsp_maxpool_f32__ref, the oracle: the public tidsp_maxpool_f32 dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_maxpool_f32__ref(const tidsp_pool2d_params *p, const float *x,
                               float *y) {
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
    const float *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)p->w_in;
    float *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)p->w_out;
    for (oh = 0; oh < p->h_out; oh++) {
      for (ow = 0; ow < p->w_out; ow++) {
        float m = -INFINITY;
        for (kh = 0; kh < p->k_h; kh++) {
          int64_t ih = (int64_t)oh * p->stride_h - p->pad_top + (int64_t)kh * p->dil_h;
          if (ih < 0 || ih >= p->h_in)
            continue;
          for (kw = 0; kw < p->k_w; kw++) {
            int64_t iw = (int64_t)ow * p->stride_w - p->pad_left + (int64_t)kw * p->dil_w;
            if (iw >= 0 && iw < p->w_in && xp[ih * p->w_in + iw] > m)
              m = xp[ih * p->w_in + iw];
          }
        }
        yp[(size_t)oh * (size_t)p->w_out + (size_t)ow] = m;
      }
    }
  }
  return TIDSP_OK;
}
