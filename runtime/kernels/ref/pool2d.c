/*
 * pool2d.c — geometry shared by the 2-D pooling kernels.
 */
#include "ref_internal.h"

int32_t tidsp_ref_pool2d_check(const tidsp_pool2d_params *p) {
  if (p->n < 0 || p->c < 0 || p->h_in < 1 || p->w_in < 1 || p->h_out < 0 ||
      p->w_out < 0)
    return TIDSP_ERR_SHAPE;
  if (p->k_h < 1 || p->k_w < 1 || p->stride_h < 1 || p->stride_w < 1 ||
      p->dil_h < 1 || p->dil_w < 1)
    return TIDSP_ERR_PARAM;
  if (p->pad_top < 0 || p->pad_left < 0 || p->pad_bottom < 0 ||
      p->pad_right < 0)
    return TIDSP_ERR_PARAM;
  return TIDSP_OK;
}

int32_t tidsp_ref_pool2d_check_nonempty(const tidsp_pool2d_params *p) {
  int32_t o;
  for (o = 0; o < p->h_out; o++) {
    if (tidsp_ref_taps_inside((int64_t)o * p->stride_h - p->pad_top, p->k_h,
                              p->dil_h, p->h_in) == 0)
      return TIDSP_ERR_SHAPE;
  }
  for (o = 0; o < p->w_out; o++) {
    if (tidsp_ref_taps_inside((int64_t)o * p->stride_w - p->pad_left, p->k_w,
                              p->dil_w, p->w_in) == 0)
      return TIDSP_ERR_SHAPE;
  }
  return TIDSP_OK;
}

int32_t tidsp_ref_taps_inside(int64_t start, int32_t k, int32_t dil,
                              int64_t limit) {
  int32_t i, n = 0;
  for (i = 0; i < k; i++) {
    int64_t pos = start + (int64_t)i * dil;
    n += pos >= 0 && pos < limit;
  }
  return n;
}

/* [lo, hi): the taps i of one axis with 0 <= start + i·dil < limit. */
static void taps_range(int64_t start, int32_t k, int32_t dil, int64_t limit, int32_t *lo, int32_t *hi) {
  int32_t i = 0;
  while (i < k && start + (int64_t)i * dil < 0)
    i++;
  *lo = i;
  while (i < k && start + (int64_t)i * dil < limit)
    i++;
  *hi = i;
}

void tidsp_ref_pool2d_window(const tidsp_pool2d_params *p, int64_t o, tidsp_ref_window *w) {
  const int64_t plane = (int64_t)p->h_out * p->w_out; /* > 0: o < numel_out */
  w->oh = (int32_t)(o % plane / p->w_out);
  w->ow = (int32_t)(o % p->w_out);
  w->base = o / plane * p->h_in * p->w_in;
  w->h0 = (int64_t)w->oh * p->stride_h - p->pad_top;
  w->w0 = (int64_t)w->ow * p->stride_w - p->pad_left;
  taps_range(w->h0, p->k_h, p->dil_h, p->h_in, &w->kh0, &w->kh1);
  taps_range(w->w0, p->k_w, p->dil_w, p->w_in, &w->kw0, &w->kw1);
  w->kh = w->kh0;
  w->kw = w->kw0;
}

void tidsp_ref_pool2d_counts(const tidsp_pool2d_params *p, int32_t oh,
                             int32_t ow, int32_t *inside, int32_t *padded) {
  int64_t h0 = (int64_t)oh * p->stride_h - p->pad_top;
  int64_t w0 = (int64_t)ow * p->stride_w - p->pad_left;
  *inside = tidsp_ref_taps_inside(h0, p->k_h, p->dil_h, p->h_in) *
            tidsp_ref_taps_inside(w0, p->k_w, p->dil_w, p->w_in);
  /* The padded input spans [−pad_top, h_in + pad_bottom). */
  *padded = tidsp_ref_taps_inside(h0 + p->pad_top, p->k_h, p->dil_h,
                        (int64_t)p->h_in + p->pad_top + p->pad_bottom) *
            tidsp_ref_taps_inside(w0 + p->pad_left, p->k_w, p->dil_w,
                        (int64_t)p->w_in + p->pad_left + p->pad_right);
}
