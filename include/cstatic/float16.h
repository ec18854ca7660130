/*
 * float16.h — IEEE binary16 and bfloat16 to and from float, shared by the
 * reference kernels (Cast, k_binary) and the compiler (constants, the
 * constant evaluator), so that both round the same way.
 */
#ifndef CSTATIC_FLOAT16_H
#define CSTATIC_FLOAT16_H

#include <stdint.h>
#include <string.h>

/* float16 and bfloat16 <-> float, as ONNX Runtime's MLFloat16 and
 * BFloat16 convert: widening is exact; narrowing rounds to nearest, ties
 * to even, overflows to infinity (f16), keeps the sign, and turns a NaN
 * into a quiet NaN (never into infinity by truncating its payload). */
static inline float tidsp_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t bits;
  float f;
  if (e == 0x1f) {
    bits = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    bits = sign | ((e + 112u) << 23) | (m << 13);
  } else {
    f = (float)m * (1.0f / 16777216.0f); /* subnormal: m · 2^-24, exact */
    return sign ? -f : f;
  }
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t tidsp_f32_to_f16(float f) {
  uint32_t x, sign, ax;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) /* NaN: quiet, top payload bits kept */
    return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) /* rounds to >= 65520: infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) { /* below 2^-14: a subnormal (or zero) */
    /* In units of 2^-24 the value is mant >> (126 − e), e >= 1. */
    const uint32_t e = (ax >> 23) ? (ax >> 23) : 1u, sh = 126u - e; /* >= 14 */
    const uint32_t mant = (ax & 0x7fffffu) | ((ax >> 23) ? 0x800000u : 0u);
    uint32_t q, rem, half;
    if (sh >= 25u) /* below 2^-25: rounds to zero */
      return (uint16_t)sign;
    q = mant >> sh;
    rem = mant & ((1u << sh) - 1u);
    half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u)))
      q++;
    return (uint16_t)(sign | q);
  }
  {
    /* normal: rebias, round the 13 dropped bits to nearest even */
    uint32_t h = ((ax >> 13) - (112u << 10));
    const uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
      h++;
    return (uint16_t)(sign | h);
  }
}

static inline float tidsp_bf16_to_f32(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t tidsp_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

#endif /* CSTATIC_FLOAT16_H */
