/*
 * avgpool_f32.c — 2-D average pooling on float, NCHW: the taps inside the
 * input summed in (h, w) order from 0.0, divided by the count (taps inside
 * the padded input when count_include_pad, else inside the real input).
 *
 * This is ONNX Runtime's order (bit for bit, tests/e2e/test_float_ops_vs_ort.py)
 *  - for AveragePool-19 and later, which ORT runs in its own loop;
 *  - for any opset when the channel count is a multiple of 16 (x86-64 with
 *    AVX512F): ORT's NCHWc transformer runs the op as an NCHW16c pooling.
 * Not mirrored: AveragePool-7..18 with other channel counts, which ORT runs
 * through MLAS's pooling kernels (a whole-image window: 4-lane sums; stride_w
 * ≤ 2 and kernels ≤ 32: column sums first, then across the window). The
 * kernel parameters do not say which ORT path applies; the last bit can
 * differ there.
 */
#include "ref_internal.h"

int32_t tidsp_avgpool_f32__ref(const tidsp_pool2d_params *p, const float *x,
                               float *y) {
  int64_t o, off;
  int32_t inside, padded;
  int32_t st = tidsp_ref_pool2d_begin(p, x, y);
  for (o = 0; st == TIDSP_OK && o < tidsp_ref_pool2d_numel_out(p); o++) {
    float sum = 0.0f;
    tidsp_ref_window win;
    tidsp_ref_pool2d_window(p, o, &win);
    while (tidsp_ref_window_next(p, &win, &off))
      sum += x[off];
    tidsp_ref_pool2d_counts(p, win.oh, win.ow, &inside, &padded);
    y[o] = sum / (float)(p->count_include_pad ? padded : inside);
  }
  return st;
}
