/*
 * layer_norm_rows.h — the row loops of LayerNormalization (see
 * layer_norm_f32.c for the rounding they reproduce), shared by the
 * reference kernels and their host FMA variant (host/layer_norm__host_fma.c,
 * the same code compiled where fmaf is one instruction). Everything is
 * forced inline so that each kernel gets its own copy with its loader and
 * storer called directly.
 */
#ifndef TIDSP_LAYER_NORM_ROWS_H
#define TIDSP_LAYER_NORM_ROWS_H

#include <math.h>

#include "ref_internal.h"

#define LN_MLAS_MIN 8

/* Element i of a row as float, and the store of result i. */
#if defined(__GNUC__)
#define LN_INLINE static inline __attribute__((always_inline))
#else
#define LN_INLINE static inline
#endif

typedef float (*ln_load)(const void *row, int32_t i, const void *ctx);
typedef void (*ln_store)(void *row, int32_t i, float v, const void *ctx);

LN_INLINE void row_mlas(const void *x, ln_load ld, const void *lctx, const float *scale,
                     const float *bias, void *y, ln_store sto, const void *sctx,
                     int32_t n, float epsilon) {
  double l[4] = {0.0, 0.0, 0.0, 0.0}, dsum;
  float v[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  float mean, var, inv;
  int32_t i = 0, j;
  for (; i + 4 <= n; i += 4)
    for (j = 0; j < 4; j++)
      l[j] += (double)ld(x, i + j, lctx);
  dsum = (l[0] + l[2]) + (l[1] + l[3]);
  for (; i < n; i++)
    dsum += (double)ld(x, i, lctx);
  mean = (float)(dsum / (double)n);
  for (i = 0; i + 8 <= n; i += 8)
    for (j = 0; j < 8; j++) {
      const float d = ld(x, i + j, lctx) - mean;
      v[j] = fmaf(d, d, v[j]);
    }
  var = ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
  if (n - i >= 4) {
    for (j = 0; j < 4; j++, i++) {
      const float d = ld(x, i, lctx) - mean;
      const float sq = d * d;
      var = var + sq;
    }
  }
  for (; i < n; i++) {
    const float d = ld(x, i, lctx) - mean;
    var = fmaf(d, d, var);
  }
  inv = 1.0f / sqrtf(var / (float)n + epsilon);
  for (i = 0; i < n; i++) {
    const float c = (ld(x, i, lctx) - mean) * inv;
    sto(y, i, fmaf(c, scale[i], bias ? bias[i] : 0.0f), sctx);
  }
}

LN_INLINE void row_welford(const void *x, ln_load ld, const void *lctx, const float *scale,
                        const float *bias, void *y, ln_store sto, const void *sctx,
                        int32_t n, float epsilon) {
  float cnt = 0.0f, mean = 0.0f, m2 = 0.0f, sd;
  int32_t i;
  for (i = 0; i < n; i++) {
    const float xi = ld(x, i, lctx);
    float d, d2;
    cnt += 1.0f;
    d = xi - mean;
    mean += d / cnt;
    d2 = xi - mean;
    m2 += d * d2;
  }
  sd = sqrtf(m2 / (float)n + epsilon);
  for (i = 0; i < n; i++) {
    const float v = ((ld(x, i, lctx) - mean) / sd) * scale[i];
    sto(y, i, bias ? v + bias[i] : v, sctx);
  }
}

/* SimplifiedLayerNormalization (RMS norm) of one float row, as ONNX
 * Runtime 1.30 computes it on x86-64 with AVX2 (measured against its
 * SimplifiedLayerNormalization kernel, tests/e2e/test_ort_norm_fusions.py):
 * rows of LN_RMS_MLAS_MIN or more take row_mlas's variance chains with the
 * mean 0 (eight fused x·x chains, the same combination and tail), then
 * y = (x · inv) · scale with inv = 1 / sqrtf(Σ/N + epsilon); shorter rows
 * a sequential float sum of rounded squares, then y = (x / sd) · scale with
 * sd = sqrtf(Σ/N + epsilon). In place works: the row's sum is done before
 * any store. */
#define LN_RMS_MLAS_MIN 16

LN_INLINE void row_rms(const float *x, const float *scale, float *y, int32_t n, float epsilon) {
  int32_t i = 0, j;
  if (n >= LN_RMS_MLAS_MIN) {
    float v[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, var, inv;
    for (; i + 8 <= n; i += 8)
      for (j = 0; j < 8; j++)
        v[j] = fmaf(x[i + j], x[i + j], v[j]);
    var = ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
    if (n - i >= 4) {
      for (j = 0; j < 4; j++, i++) {
        const float sq = x[i] * x[i];
        var = var + sq;
      }
    }
    for (; i < n; i++)
      var = fmaf(x[i], x[i], var);
    inv = 1.0f / sqrtf(var / (float)n + epsilon);
    for (i = 0; i < n; i++) {
      const float c = x[i] * inv;
      y[i] = c * scale[i];
    }
  } else {
    float ms = 0.0f, sd;
    for (; i < n; i++) {
      const float sq = x[i] * x[i];
      ms = ms + sq;
    }
    sd = sqrtf(ms / (float)n + epsilon);
    for (i = 0; i < n; i++) {
      const float c = x[i] / sd;
      y[i] = c * scale[i];
    }
  }
}

LN_INLINE void rows(const void *x, size_t x_elem, ln_load ld, const void *lctx, const float *scale,
                 const float *bias, void *y, size_t y_elem, ln_store sto, const void *sctx,
                 int32_t outer, int32_t n, float epsilon) {
  int32_t r;
  for (r = 0; r < outer; r++) {
    const size_t off = (size_t)r * (size_t)n;
    const void *xr = (const char *)x + off * x_elem;
    void *yr = (char *)y + off * y_elem;
    if (n >= LN_MLAS_MIN)
      row_mlas(xr, ld, lctx, scale, bias, yr, sto, sctx, n, epsilon);
    else
      row_welford(xr, ld, lctx, scale, bias, yr, sto, sctx, n, epsilon);
  }
}

LN_INLINE float load_f32(const void *row, int32_t i, const void *ctx) {
  (void)ctx;
  return ((const float *)row)[i];
}

LN_INLINE void store_f32(void *row, int32_t i, float v, const void *ctx) {
  (void)ctx;
  ((float *)row)[i] = v;
}

/* The checks of both LayerNormalization kernels, ref and host alike (bias
 * may be NULL; ln NULL when the params are). */
LN_INLINE int32_t layer_norm_check(const tidsp_layer_norm_params *ln, const void *x, const float *scale,
                                   const void *y) {
  if (!ln || !x || !scale || !y)
    return TIDSP_ERR_NULL;
  if (ln->outer < 0 || ln->norm < 1)
    return TIDSP_ERR_SHAPE;
  return TIDSP_OK;
}

LN_INLINE int32_t layer_norm_f32_rows(const tidsp_layer_norm_params *p, const float *x,
                                       const float *scale, const float *bias, float *y) {
  const int32_t st = layer_norm_check(p, x, scale, y);
  int32_t r;
  if (st != TIDSP_OK)
    return st;
  if (p->variant == TIDSP_LN_SIMPLIFIED) {
    if (bias)
      return TIDSP_ERR_PARAM; /* RMS norm has no bias */
    for (r = 0; r < p->outer; r++)
      row_rms(x + (size_t)r * (size_t)p->norm, scale, y + (size_t)r * (size_t)p->norm, p->norm, p->epsilon);
    return TIDSP_OK;
  }
  if (p->variant == TIDSP_LN_WELFORD) {
    for (r = 0; r < p->outer; r++)
      row_welford(x + (size_t)r * (size_t)p->norm, load_f32, NULL, scale, bias, y + (size_t)r * (size_t)p->norm,
                  store_f32, NULL, p->norm, p->epsilon);
    return TIDSP_OK;
  }
  if (p->variant != TIDSP_LN_PLAIN)
    return TIDSP_ERR_PARAM;
  rows(x, sizeof(float), load_f32, NULL, scale, bias, y, sizeof(float), store_f32, NULL,
       p->outer, p->norm, p->epsilon);
  return TIDSP_OK;
}

typedef struct q8 {
  int32_t zp;
  float s;
} q8;

LN_INLINE float load_i8(const void *row, int32_t i, const void *ctx) {
  const q8 *q = ctx;
  return (float)((int32_t)((const int8_t *)row)[i] - q->zp) * q->s;
}

/* tidsp_quantize's rounding: fl(v / s), half to even, + zp, saturated;
 * NaN → −128. */
LN_INLINE void store_i8(void *row, int32_t i, float v, const void *ctx) {
  const q8 *q = ctx;
  float t = v / q->s;
  int32_t r;
  /* Beyond ±512 the int8 result saturates whatever the zero point, so
   * clamping t first changes nothing; within it, adding and subtracting
   * 1.5·2^23 rounds half to even like llrintf, without a libm call. */
  if (!(t > -512.0f))
    t = -512.0f; /* NaN too: tidsp_quantize's NaN → qmin */
  else if (t > 512.0f)
    t = 512.0f;
  r = (int32_t)((t + 12582912.0f) - 12582912.0f) + q->zp;
  ((int8_t *)row)[i] = (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
}

/* The checks of the int8 kernels (ref and host) and their dequantization
 * (*in) and quantization (*out) parameters. */
LN_INLINE int32_t layer_norm_i8_prepare(const tidsp_layer_norm_i8_params *p, const int8_t *x, const float *scale,
                                        const int8_t *y, q8 *in, q8 *out) {
  const int32_t st = layer_norm_check(p ? &p->ln : NULL, x, scale, y);
  if (st != TIDSP_OK)
    return st;
  if (!tidsp_ref_is_i8(p->x_zp) || !tidsp_ref_is_i8(p->y_zp) || !(p->y_scale > 0.0f) || p->ln.variant != TIDSP_LN_PLAIN)
    return TIDSP_ERR_PARAM;
  in->zp = p->x_zp;
  in->s = p->x_scale;
  out->zp = p->y_zp;
  out->s = p->y_scale;
  return TIDSP_OK;
}

LN_INLINE int32_t layer_norm_i8_rows(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                      const float *scale, const float *bias, int8_t *y) {
  q8 in, out;
  const int32_t st = layer_norm_i8_prepare(p, x, scale, y, &in, &out);
  if (st != TIDSP_OK)
    return st;
  rows(x, 1, load_i8, &in, scale, bias, y, 1, store_i8, &out, p->ln.outer, p->ln.norm,
       p->ln.epsilon);
  return TIDSP_OK;
}

#endif
