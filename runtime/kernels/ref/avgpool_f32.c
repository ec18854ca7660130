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

int32_t tidsp_avgpool_f32(const tidsp_pool2d_params *p, const float *x,
                          float *y) {
  int32_t st, oh, ow, kh, kw, inside, padded;
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
        float sum = 0.0f;
        tidsp_ref_window win;
        tidsp_ref_pool2d_window(p, oh, ow, &win);
        for (kh = win.kh0; kh < win.kh1; kh++) {
          const int64_t row = (win.h0 + (int64_t)kh * p->dil_h) * p->w_in + win.w0;
          for (kw = win.kw0; kw < win.kw1; kw++)
            sum += xp[row + (int64_t)kw * p->dil_w];
        }
        tidsp_ref_pool2d_counts(p, oh, ow, &inside, &padded);
        yp[(size_t)oh * (size_t)p->w_out + (size_t)ow] =
            sum / (float)(p->count_include_pad ? padded : inside);
      }
    }
  }
  return TIDSP_OK;
}
