/*
 * mmalib_exact_requant.c — tidsp_mmalib_exact_requant and its int16-output
 * twins (cstatic/kernels.h): ORT's int8 conv output from MMALIB's int16
 * result z, with the rare ambiguous output's accumulator summed again on
 * the core.
 */
#include "ref_internal.h"

/* ORT's output for accumulator a (int64, clamped to int32 as ORT's
 * accumulator is: beyond it the output saturates either way). */
static int32_t ort_out(const tidsp_ref_rq *plan, int32_t c, int64_t a) {
  a = a < INT32_MIN ? INT32_MIN : a > INT32_MAX ? INT32_MAX : a;
  return tidsp_ref_rq_apply(plan, c, (int32_t)a);
}

/* ceil(v / s), s > 0 */
static int64_t ceil_div(int64_t v, int64_t s) {
  int64_t q = v / s;
  return q * s < v ? q + 1 : q;
}

/* Σ x16·w of output (c, oh, ow), x16 = x − x_zp: the padding adds
 * nothing (it is the zero point, as in MMALIB's call on x16). */
static int64_t dot(const tidsp_conv2d_params *p, const int16_t *x, const int8_t *w, int32_t c, int32_t oh,
                   int32_t ow) {
  int32_t cpg = p->c_in / p->groups, c0 = c / (p->c_out / p->groups) * cpg;
  int64_t acc = 0;
  for (int32_t ci = 0; ci < cpg; ci++) {
    const int16_t *xc = x + (size_t)(c0 + ci) * (size_t)p->h_in * (size_t)p->w_in;
    const int8_t *wc = w + ((size_t)c * (size_t)cpg + (size_t)ci) * (size_t)p->k_h * (size_t)p->k_w;
    for (int32_t kh = 0; kh < p->k_h; kh++) {
      int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
      if (ih < 0 || ih >= p->h_in) continue;
      for (int32_t kw = 0; kw < p->k_w; kw++) {
        int32_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;
        if (iw < 0 || iw >= p->w_in) continue;
        acc += (int32_t)xc[(size_t)ih * (size_t)p->w_in + (size_t)iw] * wc[kh * p->k_w + kw];
      }
    }
  }
  return acc;
}

/* Every entry: y8 (int8 y), or y16: lut16[y + 128] when lut16, else
 * y − out_zp. */
static int32_t exact_requant(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x, const int8_t *w,
                             const int64_t *grid, const float *mult, const int16_t *lut16, int8_t *y8,
                             int16_t *y16) {
  tidsp_ref_rq plan;
  int32_t st;
  if (!p || !z || !x || !w || !grid || !mult || !(y8 || y16))
    return TIDSP_ERR_NULL;
  if (p->n < 1 || p->c_in < 1 || p->c_out < 1 || p->h_in < 1 || p->w_in < 1 || p->h_out < 1 ||
      p->w_out < 1 || p->k_h < 1 || p->k_w < 1 || p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 ||
      p->dil_w < 1 || p->groups < 1 || p->c_in % p->groups || p->c_out % p->groups || p->x_zp || p->w_zp)
    return TIDSP_ERR_SHAPE;
  if (p->rq.kind != TIDSP_REQUANT_FLOAT || !p->rq.per_channel)
    return TIDSP_ERR_PARAM;
  st = tidsp_ref_rq_init(&plan, &p->rq, mult, p->c_out, -128, 127);
  if (st != TIDSP_OK)
    return st;
  const int64_t *bias = grid, *dd = grid + p->c_out, *scale = grid + 2 * p->c_out, *shift = grid + 3 * p->c_out;
  const int64_t parts = grid[4 * p->c_out];
  if (parts < 1 || parts > TIDSP_MMALIB_EXACT_MAX_PARTS)
    return TIDSP_ERR_PARAM;
  for (int32_t c = 0; c < p->c_out; c++)
    if (scale[c] < 1 || scale[c] > 255 || shift[c] < 0 || shift[c] > 31)
      return TIDSP_ERR_PARAM;
  /* z's grid: y's, or a finer one y picks from */
  const int picks = p->z_h || p->z_w || p->z_step_h || p->z_step_w;
  const int32_t zh = picks ? p->z_h : p->h_out, zw = picks ? p->z_w : p->w_out;
  const int32_t sth = picks ? p->z_step_h : 1, stw = picks ? p->z_step_w : 1;
  if (sth < 1 || stw < 1 || (int64_t)(p->h_out - 1) * sth >= zh || (int64_t)(p->w_out - 1) * stw >= zw)
    return TIDSP_ERR_SHAPE;
  size_t plane = (size_t)p->h_out * (size_t)p->w_out, z_plane = (size_t)zh * (size_t)zw;
  size_t x_img = (size_t)p->c_in * (size_t)p->h_in * (size_t)p->w_in, y_img = (size_t)p->c_out * plane;
  size_t z_img = (size_t)p->c_out * z_plane, z_part = (size_t)p->n * z_img;
  for (int32_t img = 0; img < p->n; img++)
  for (int32_t c = 0; c < p->c_out; c++) {
    const int64_t s = scale[c], sh = shift[c], d = dd[c];
    const int64_t half = sh ? (int64_t)1 << (sh - 1) : 0;
    const int16_t *zc = z + (size_t)img * z_img + (size_t)c * z_plane;
    const size_t y0 = (size_t)img * y_img + (size_t)c * plane;
    for (size_t i = 0; i < plane; i++) {
      const int32_t oh = (int32_t)(i / (size_t)p->w_out), ow = (int32_t)(i % (size_t)p->w_out);
      const size_t zi0 = (size_t)oh * (size_t)sth * (size_t)zw + (size_t)ow * (size_t)stw;
      /* Each part's v = (its Σx·w + its bias)·s lies in
       * [z·2^sh − half, z·2^sh + half) (sh = 0: [z, z + 1)), unbounded on
       * a saturated side; so its accumulator lies between ceil(lo_v/s)
       * and ceil(hi_v/s) − 1. The parts' accumulators add up (exact
       * integers) to Σx·w + bias + D, so acc = Σx·w + b lies in the sum of
       * the intervals, less d, unbounded when any part is. */
      int64_t a_lo = -d, a_hi = -d;
      int lo_open = 0, hi_open = 0, empty = 0;
      for (int64_t j = 0; j < parts; j++) {
        const int64_t zi = zc[(size_t)j * z_part + zi0];
        const int64_t lo_v = zi * ((int64_t)1 << sh) - half, hi_v = zi * ((int64_t)1 << sh) + (sh ? half : 1);
        const int64_t l = ceil_div(lo_v, s), h = ceil_div(hi_v, s) - 1;
        lo_open |= zi == INT16_MIN;
        hi_open |= zi == INT16_MAX;
        empty |= l > h; /* no accumulator gives this z */
        a_lo += l;
        a_hi += h;
      }
      int32_t lo = ort_out(&plan, c, lo_open ? INT64_MIN / 2 : a_lo);
      int32_t hi = ort_out(&plan, c, hi_open ? INT64_MAX / 2 : a_hi);
      if (empty) /* compute it */
        hi = lo + 1;
      if (lo != hi)
        lo = ort_out(&plan, c, dot(p, x + (size_t)img * x_img, w, c, oh, ow) + bias[c] - d);
      if (y8)
        y8[y0 + i] = (int8_t)lo;
      else if (lut16)
        y16[y0 + i] = lut16[lo + 128];
      else
        y16[y0 + i] = (int16_t)(lo - p->rq.out_zp);
    }
  }
  return TIDSP_OK;
}

int32_t tidsp_mmalib_exact_requant(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x,
                                   const int8_t *w, const int64_t *grid, const float *mult, int8_t *y) {
  return y ? exact_requant(p, z, x, w, grid, mult, NULL, y, NULL) : TIDSP_ERR_NULL;
}

int32_t tidsp_mmalib_exact_requant_i16(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x,
                                       const int8_t *w, const int64_t *grid, const float *mult, int16_t *y) {
  return y ? exact_requant(p, z, x, w, grid, mult, NULL, NULL, y) : TIDSP_ERR_NULL;
}

int32_t tidsp_mmalib_exact_requant_lut16(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x,
                                         const int8_t *w, const int64_t *grid, const float *mult,
                                         const int16_t *lut16, int16_t *y) {
  return y && lut16 ? exact_requant(p, z, x, w, grid, mult, lut16, NULL, y) : TIDSP_ERR_NULL;
}
