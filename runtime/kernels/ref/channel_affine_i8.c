/*
 * channel_affine_i8.c — DQ → Mul(s[c]) → Add(b[c]) → Q on int8
 * [outer][channels][inner] (kernels.h): each value goes through the very
 * float ops of tidsp_dequantize, tidsp_binary_f32 (Mul, then Add) and
 * tidsp_quantize, each rounded once, so the result is the unfused chain's
 * bit for bit (and ONNX Runtime's BatchNormalization between DQ and Q).
 * tidsp_ref_channel_affine_one is the formula, shared with the host
 * variants for their tails.
 *
 * This is tidsp_channel_affine_i8__ref, the oracle: the public name
 * dispatches to a host variant (runtime/kernels/dispatch.c) that must give
 * the same bytes.
 */
#include "channel_affine_internal.h"

int32_t tidsp_channel_affine_i8__ref(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s,
                                     const float *b, int8_t *y) {
  int32_t o, c, i;
  const int32_t st = tidsp_ref_channel_affine_check(p, x, s, b, y);
  if (st != TIDSP_OK)
    return st;
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
      for (i = 0; i < p->inner; i++)
        y[base + (size_t)i] = tidsp_ref_channel_affine_one(p, x[base + (size_t)i], s[c], b[c]);
    }
  }
  return TIDSP_OK;
}
