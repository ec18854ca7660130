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
 *
 * The int8 form (tidsp_layer_norm_i8) is DequantizeLinear → this →
 * QuantizeLinear in one call, each element dequantized as ORT does
 * (fl((q − zp) · s)) whenever a pass reads it, and quantized as
 * tidsp_quantize; so it equals the three-kernel float path bit for bit
 * without a float buffer.
 *
 * In place (y == x) is allowed: the last pass reads each element before it
 * writes it.
 */
#include "layer_norm_rows.h"

int32_t tidsp_layer_norm_f32__ref(const tidsp_layer_norm_params *p, const float *x,
                                  const float *scale, const float *bias, float *y) {
  return layer_norm_f32_rows(p, x, scale, bias, y);
}

int32_t tidsp_layer_norm_i8__ref(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                 const float *scale, const float *bias, int8_t *y) {
  return layer_norm_i8_rows(p, x, scale, bias, y);
}
