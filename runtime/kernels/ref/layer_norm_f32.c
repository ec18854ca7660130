/*
 * layer_norm_f32.c — LayerNormalization over the last `norm` elements of
 * each row, rounded as ONNX Runtime 1.30's CPU kernel (float32, stash_type
 * 1) on x86-64 with AVX2 (MLAS's LayerNorm kernel; confirmed bit for bit
 * against onnxruntime 1.30, tests/e2e/test_float_ops_vs_ort.py).
 *
 * Rows of 8 or more (MLAS):
 *   mean = (float)(Σ x / N), the sum in double in 4 lanes (lane j: elements
 *          j, j+4, …), reduced as (l0 + l2) + (l1 + l3), the tail added in
 *          order;
 *   var  = Σ (x − mean)² in float: 8 lanes of fused multiply-adds, reduced
 *          as ((v0+v4) + (v2+v6)) + ((v1+v5) + (v3+v7)); of the N mod 8 tail
 *          elements the first 4 (when there are 4) add rounded squares, the
 *          rest fused multiply-adds;
 *   inv  = 1 / sqrtf(var / N + epsilon);
 *   y    = fma((x − mean) · inv, scale, bias).
 * Shorter rows (ORT's scalar fallback): Welford's running mean and M2 in
 * float, sd = sqrtf(M2 / N + epsilon), y = ((x − mean) / sd) · scale + bias.
 * In place (y == x) is allowed: a row is read fully before it is written.
 */
#include <math.h>

#include "ref_internal.h"

#define LN_MLAS_MIN 8

static void row_mlas(const float *x, const float *scale, const float *bias,
                     float *y, int32_t n, float epsilon) {
  double l[4] = {0.0, 0.0, 0.0, 0.0}, dsum;
  float v[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  float mean, var, inv;
  int32_t i = 0, j;
  for (; i + 4 <= n; i += 4)
    for (j = 0; j < 4; j++)
      l[j] += (double)x[i + j];
  dsum = (l[0] + l[2]) + (l[1] + l[3]);
  for (; i < n; i++)
    dsum += (double)x[i];
  mean = (float)(dsum / (double)n);
  for (i = 0; i + 8 <= n; i += 8)
    for (j = 0; j < 8; j++) {
      const float d = x[i + j] - mean;
      v[j] = fmaf(d, d, v[j]);
    }
  var = ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
  if (n - i >= 4) {
    for (j = 0; j < 4; j++, i++) {
      const float d = x[i] - mean;
      const float sq = d * d;
      var = var + sq;
    }
  }
  for (; i < n; i++) {
    const float d = x[i] - mean;
    var = fmaf(d, d, var);
  }
  inv = 1.0f / sqrtf(var / (float)n + epsilon);
  for (i = 0; i < n; i++) {
    const float c = (x[i] - mean) * inv;
    y[i] = fmaf(c, scale[i], bias ? bias[i] : 0.0f);
  }
}

static void row_welford(const float *x, const float *scale, const float *bias,
                        float *y, int32_t n, float epsilon) {
  float cnt = 0.0f, mean = 0.0f, m2 = 0.0f, sd;
  int32_t i;
  for (i = 0; i < n; i++) {
    float d, d2;
    cnt += 1.0f;
    d = x[i] - mean;
    mean += d / cnt;
    d2 = x[i] - mean;
    m2 += d * d2;
  }
  sd = sqrtf(m2 / (float)n + epsilon);
  for (i = 0; i < n; i++) {
    const float v = ((x[i] - mean) / sd) * scale[i];
    y[i] = bias ? v + bias[i] : v;
  }
}

int32_t tidsp_layer_norm_f32(const tidsp_layer_norm_params *p, const float *x,
                             const float *scale, const float *bias, float *y) {
  int32_t r;
  if (!p || !x || !scale || !y)
    return TIDSP_ERR_NULL;
  if (p->outer < 0 || p->norm < 1)
    return TIDSP_ERR_SHAPE;
  for (r = 0; r < p->outer; r++) {
    const size_t off = (size_t)r * (size_t)p->norm;
    if (p->norm >= LN_MLAS_MIN)
      row_mlas(x + off, scale, bias, y + off, p->norm, p->epsilon);
    else
      row_welford(x + off, scale, bias, y + off, p->norm, p->epsilon);
  }
  return TIDSP_OK;
}
