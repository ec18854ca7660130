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
  int64_t o, off;
  int32_t st = tidsp_ref_pool2d_begin(p, x, y);
  for (o = 0; st == TIDSP_OK && o < tidsp_ref_pool2d_numel_out(p); o++) {
    int32_t m = TIDSP_REF_I8_MIN;
    tidsp_ref_window win;
    tidsp_ref_pool2d_window(p, o, &win);
    while (tidsp_ref_window_next(p, &win, &off))
      m = x[off] > m ? x[off] : m;
    y[o] = (int8_t)m;
  }
  return st;
}
