/*
 * avgpool_i8.c — QLinearAveragePool, NCHW.
 *
 * FLOAT mirrors ONNX Runtime's non-global QLinearAveragePool: every input
 * value is dequantized through a table, xf = fl(x_scale · (x − x_zp)); the
 * taps inside the input are summed in float in (h, w) order; avg =
 * fl(sum / count); y = rne(fl(fl(avg / y_scale) + zp)), saturated. ORT runs
 * on uint8 data (int8 activations are rewritten to uint8), so zp is the
 * uint8 zero point y_zp + 128 and the result is shifted back.
 * count is k_h·k_w when count_include_pad (ORT divides by the kernel size,
 * even where a ceil-mode window hangs past the padding), else the number of
 * taps inside the input.
 * Q31: the same float32 formula in integer arithmetic (softfloat.h: every
 * multiply, sum and division rounded once to float32, as the FPU does),
 * from the bits of x_scale and y_scale; bit-identical to FLOAT on every
 * input. (One exact multiply by xs/(ys·count) with a single rounding is
 * not: where the exact average is a tie, the float sums have already
 * moved it one way or the other.) rq is not read.
 */
#include "ref_internal.h"

static float window_sum_f32(const tidsp_pool2d_params *p, const int8_t *xp,
                            int32_t oh, int32_t ow, const float *xf) {
  int32_t kh, kw;
  float sum = 0.0f;
  tidsp_ref_window win;
  tidsp_ref_pool2d_window(p, oh, ow, &win);
  for (kh = win.kh0; kh < win.kh1; kh++) {
    const int64_t row = (win.h0 + (int64_t)kh * p->dil_h) * p->w_in + win.w0;
    for (kw = win.kw0; kw < win.kw1; kw++)
      sum += xf[xp[row + (int64_t)kw * p->dil_w] + 128];
  }
  return sum;
}

/* window_sum_f32 in integers: the same sums, each rounded to float32. */
static tidsp_sf window_sum_sf(const tidsp_pool2d_params *p, const int8_t *xp,
                              int32_t oh, int32_t ow, const tidsp_sf *xq) {
  int32_t kh, kw;
  tidsp_sf sum = {0, 0};
  tidsp_ref_window win;
  tidsp_ref_pool2d_window(p, oh, ow, &win);
  for (kh = win.kh0; kh < win.kh1; kh++) {
    const int64_t row = (win.h0 + (int64_t)kh * p->dil_h) * p->w_in + win.w0;
    for (kw = win.kw0; kw < win.kw1; kw++)
      sum = tidsp_sf_add(sum, xq[xp[row + (int64_t)kw * p->dil_w] + 128]);
  }
  return sum;
}

int32_t tidsp_avgpool_i8(const tidsp_avgpool_i8_params *p, const void *rq,
                         const int8_t *x, int8_t *y) {
  const tidsp_pool2d_params *g;
  float xf[256];
  tidsp_sf xq[256];
  int32_t st, oh, ow, q, taps, inside, padded;
  int64_t nc;

  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  g = &p->pool;
  st = tidsp_ref_pool2d_check(g);
  if (st == TIDSP_OK)
    st = tidsp_ref_pool2d_check_nonempty(g);
  if (st != TIDSP_OK)
    return st;
  if (!tidsp_ref_i8_output_ok(p->y_min, p->y_max, p->y_zp, p->domain_offset) || !tidsp_ref_is_i8(p->x_zp))
    return TIDSP_ERR_PARAM;
  /* A window's sum of (x − x_zp) must fit int32 (the Q31 path). */
  if ((int64_t)g->k_h * g->k_w > INT32_MAX / 255)
    return TIDSP_ERR_SHAPE;
  taps = g->k_h * g->k_w;

  if (p->kind == TIDSP_REQUANT_FLOAT) {
    for (q = -128; q < 128; q++)
      xf[q + 128] = p->x_scale * (float)(q - p->x_zp);
  } else if (p->kind == TIDSP_REQUANT_Q31) {
    const tidsp_sf xs = tidsp_sf_from_float(p->x_scale);
    const tidsp_sf ys = tidsp_sf_from_float(p->y_scale);
    if (xs.m <= 0 || ys.m <= 0)
      return TIDSP_ERR_PARAM;
    for (q = -128; q < 128; q++)
      xq[q + 128] = tidsp_sf_round(xs.m * (q - p->x_zp), xs.s);
  } else {
    return TIDSP_ERR_PARAM;
  }
  (void)rq;

  for (nc = 0; nc < (int64_t)g->n * g->c; nc++) {
    const int8_t *xp = x + (size_t)nc * (size_t)g->h_in * (size_t)g->w_in;
    int8_t *yp = y + (size_t)nc * (size_t)g->h_out * (size_t)g->w_out;
    for (oh = 0; oh < g->h_out; oh++) {
      for (ow = 0; ow < g->w_out; ow++) {
        int32_t count, out;
        tidsp_ref_pool2d_counts(g, oh, ow, &inside, &padded);
        count = g->count_include_pad ? taps : inside;
        if (p->kind == TIDSP_REQUANT_FLOAT) {
          const float lo = (float)(p->y_min + p->domain_offset);
          const float hi = (float)(p->y_max + p->domain_offset);
          float avg = window_sum_f32(g, xp, oh, ow, xf) / (float)count;
          float v = avg / p->y_scale;
          v = v + (float)(p->y_zp + p->domain_offset);
          v = v > lo ? v : lo;
          v = v < hi ? v : hi;
          out = tidsp_ref_rne(v) - p->domain_offset;
        } else {
          tidsp_sf v = window_sum_sf(g, xp, oh, ow, xq);
          v = tidsp_sf_div(v, (tidsp_sf){count, 0});
          v = tidsp_sf_div(v, tidsp_sf_from_float(p->y_scale));
          v = tidsp_sf_add(v, (tidsp_sf){p->y_zp + p->domain_offset, 0});
          /* Clamping before or after rounding to an integer is the same
           * for integer bounds. */
          out = (int32_t)tidsp_ref_clamp_i64(tidsp_sf_rne_int(v), p->y_min + p->domain_offset,
                                             p->y_max + p->domain_offset) -
                p->domain_offset;
        }
        yp[(size_t)oh * (size_t)g->w_out + (size_t)ow] = (int8_t)out;
      }
    }
  }
  return TIDSP_OK;
}
