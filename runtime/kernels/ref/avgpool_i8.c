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
 * Q31: acc = Σ (x − x_zp) over the same taps; rq holds int32 mult[k_h·k_w]
 * then int32 shift[k_h·k_w], indexed by count − 1.
 */
#include "ref_internal.h"

static int32_t window_sum_i32(const tidsp_pool2d_params *p, const int8_t *xp,
                              int32_t oh, int32_t ow, int32_t x_zp) {
  int32_t kh, kw, acc = 0;
  for (kh = 0; kh < p->k_h; kh++) {
    int64_t ih = (int64_t)oh * p->stride_h - p->pad_top + (int64_t)kh * p->dil_h;
    if (ih < 0 || ih >= p->h_in)
      continue;
    for (kw = 0; kw < p->k_w; kw++) {
      int64_t iw = (int64_t)ow * p->stride_w - p->pad_left + (int64_t)kw * p->dil_w;
      if (iw >= 0 && iw < p->w_in)
        acc += xp[ih * p->w_in + iw] - x_zp;
    }
  }
  return acc;
}

static float window_sum_f32(const tidsp_pool2d_params *p, const int8_t *xp,
                            int32_t oh, int32_t ow, const float *xf) {
  int32_t kh, kw;
  float sum = 0.0f;
  for (kh = 0; kh < p->k_h; kh++) {
    int64_t ih = (int64_t)oh * p->stride_h - p->pad_top + (int64_t)kh * p->dil_h;
    if (ih < 0 || ih >= p->h_in)
      continue;
    for (kw = 0; kw < p->k_w; kw++) {
      int64_t iw = (int64_t)ow * p->stride_w - p->pad_left + (int64_t)kw * p->dil_w;
      if (iw >= 0 && iw < p->w_in)
        sum += xf[xp[ih * p->w_in + iw] + 128];
    }
  }
  return sum;
}

int32_t tidsp_avgpool_i8(const tidsp_avgpool_i8_params *p, const void *rq,
                         const int8_t *x, int8_t *y) {
  const tidsp_pool2d_params *g;
  float xf[256];
  const int32_t *qmult = NULL, *qshift = NULL;
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
  if (p->y_min > p->y_max || !tidsp_ref_is_i8(p->y_min) ||
      !tidsp_ref_is_i8(p->y_max) || !tidsp_ref_is_i8(p->x_zp) ||
      !tidsp_ref_is_i8(p->y_zp) ||
      (p->domain_offset != 0 && p->domain_offset != 128))
    return TIDSP_ERR_PARAM;
  /* A window's sum of (x − x_zp) must fit int32 (the Q31 path). */
  if ((int64_t)g->k_h * g->k_w > INT32_MAX / 255)
    return TIDSP_ERR_SHAPE;
  taps = g->k_h * g->k_w;

  if (p->kind == TIDSP_REQUANT_FLOAT) {
    for (q = -128; q < 128; q++)
      xf[q + 128] = p->x_scale * (float)(q - p->x_zp);
  } else if (p->kind == TIDSP_REQUANT_Q31) {
    if (!rq)
      return TIDSP_ERR_NULL;
    qmult = (const int32_t *)rq;
    qshift = qmult + taps;
    for (q = 0; q < taps; q++) {
      if (qmult[q] < 0 || qshift[q] < 0 || qshift[q] > TIDSP_REF_MAX_SHIFT)
        return TIDSP_ERR_PARAM;
    }
  } else {
    return TIDSP_ERR_PARAM;
  }

  for (nc = 0; nc < (int64_t)g->n * g->c; nc++) {
    const int8_t *xp = x + (size_t)nc * g->h_in * g->w_in;
    int8_t *yp = y + (size_t)nc * g->h_out * g->w_out;
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
          int64_t v = tidsp_ref_round_shift(
                          (int64_t)window_sum_i32(g, xp, oh, ow, p->x_zp) *
                              qmult[count - 1],
                          qshift[count - 1]) +
                      p->y_zp;
          out = (int32_t)tidsp_ref_clamp_i64(v, p->y_min, p->y_max);
        }
        yp[(size_t)oh * g->w_out + ow] = (int8_t)out;
      }
    }
  }
  return TIDSP_OK;
}
