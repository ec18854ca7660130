/*
 * channel_affine_internal.h — one value of tidsp_channel_affine_i8
 * (kernels.h), the reference's formula: its kernel and the host variants'
 * tails use it. ref_internal.h turns floating-point contraction off, so
 * the multiply and the add below round separately, as the unfused
 * tidsp_binary_f32 calls do.
 */
#ifndef TIDSP_REF_CHANNEL_AFFINE_INTERNAL_H
#define TIDSP_REF_CHANNEL_AFFINE_INTERNAL_H

#include "ref_internal.h"

/* The argument checks of every variant: TIDSP_OK or the status. */
static inline int32_t tidsp_ref_channel_affine_check(const tidsp_channel_affine_i8_params *p, const int8_t *x,
                                                     const float *s, const float *b, const void *y) {
  if (!p || !x || !s || !b || !y)
    return TIDSP_ERR_NULL;
  if (p->outer < 0 || p->channels < 1 || p->inner < 0)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_is_i8(p->x_zp) || !tidsp_ref_is_i8(p->y_zp) || !(p->x_scale > 0.0f) || !(p->y_scale > 0.0f))
    return TIDSP_ERR_PARAM;
  if (p->act != TIDSP_CHANNEL_AFFINE_NONE && p->act != TIDSP_CHANNEL_AFFINE_RELU &&
      (p->act != TIDSP_CHANNEL_AFFINE_CLIP || !(p->lo <= p->hi)))
    return TIDSP_ERR_PARAM;
  return TIDSP_OK;
}

static inline int8_t tidsp_ref_channel_affine_one(const tidsp_channel_affine_i8_params *p, int8_t x, float s,
                                                  float b) {
  const float d = (float)((int32_t)x - p->x_zp) * p->x_scale; /* tidsp_dequantize */
  const float m = d * s;                                       /* tidsp_binary_f32 Mul */
  float t = m + b;                                             /* tidsp_binary_f32 Add */
  float v;
  if (p->act == TIDSP_CHANNEL_AFFINE_RELU) { /* tidsp_unary_f32's: keeps −0 and NaN */
    t = 0.0f > t ? 0.0f : t;
  } else if (p->act == TIDSP_CHANNEL_AFFINE_CLIP) {
    t = t > p->lo ? t : p->lo;
    t = t < p->hi ? t : p->hi;
  }
  v = t / p->y_scale; /* tidsp_quantize */
  if (!(v > -0x1p33f)) /* NaN, −inf, or far below */
    return INT8_MIN;
  if (v > 0x1p33f)
    return INT8_MAX;
  return (int8_t)tidsp_ref_clamp_i64(tidsp_ref_rne_i64(v) + p->y_zp, INT8_MIN, INT8_MAX);
}

#endif /* TIDSP_REF_CHANNEL_AFFINE_INTERNAL_H */
