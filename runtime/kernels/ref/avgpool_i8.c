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

/* The dequantized taps of window w summed in float, in (kh, kw) order. */
static float window_sum_f32(const tidsp_pool2d_params *p, const int8_t *x, tidsp_ref_window *w, const float *xf) {
  int64_t off;
  float sum = 0.0f;
  while (tidsp_ref_window_next(p, w, &off))
    sum += xf[x[off] + 128];
  return sum;
}

/* window_sum_f32 in integers: the same sums, each rounded to float32. */
static tidsp_sf window_sum_sf(const tidsp_pool2d_params *p, const int8_t *x, tidsp_ref_window *w,
                              const tidsp_sf *xq) {
  int64_t off;
  tidsp_sf sum = {0, 0};
  while (tidsp_ref_window_next(p, w, &off))
    sum = tidsp_sf_add(sum, xq[x[off] + 128]);
  return sum;
}

int32_t tidsp_avgpool_i8__ref(const tidsp_avgpool_i8_params *p, const void *rq,
                              const int8_t *x, int8_t *y) {
  const tidsp_pool2d_params *g;
  float xf[256];
  tidsp_sf xq[256];
  int32_t st, q, taps, inside, padded;
  int64_t o;

  g = p ? &p->pool : NULL;
  st = tidsp_ref_pool2d_begin(g, x, y);
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

  for (o = 0; o < tidsp_ref_pool2d_numel_out(g); o++) {
    int32_t count, out;
    tidsp_ref_window win;
    tidsp_ref_pool2d_window(g, o, &win);
    tidsp_ref_pool2d_counts(g, win.oh, win.ow, &inside, &padded);
    count = g->count_include_pad ? taps : inside;
    if (p->kind == TIDSP_REQUANT_FLOAT) {
      const float lo = (float)(p->y_min + p->domain_offset);
      const float hi = (float)(p->y_max + p->domain_offset);
      float avg = window_sum_f32(g, x, &win, xf) / (float)count;
      float v = avg / p->y_scale;
      v = v + (float)(p->y_zp + p->domain_offset);
      v = v > lo ? v : lo;
      v = v < hi ? v : hi;
      out = tidsp_ref_rne(v) - p->domain_offset;
    } else {
      tidsp_sf v = window_sum_sf(g, x, &win, xq);
      v = tidsp_sf_div(v, (tidsp_sf){count, 0});
      v = tidsp_sf_div(v, tidsp_sf_from_float(p->y_scale));
      v = tidsp_sf_add(v, (tidsp_sf){p->y_zp + p->domain_offset, 0});
      /* Clamping before or after rounding to an integer is the same
       * for integer bounds. */
      out = (int32_t)tidsp_ref_clamp_i64(tidsp_sf_rne_int(v), p->y_min + p->domain_offset,
                                         p->y_max + p->domain_offset) -
            p->domain_offset;
    }
    y[o] = (int8_t)out;
  }
  return TIDSP_OK;
}
