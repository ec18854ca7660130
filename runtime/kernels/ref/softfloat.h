/*
 * softfloat.h — float32 rounding in integer arithmetic, for the Q31
 * (integer-only) requantization forms.
 *
 * Why: the FLOAT forms are ONNX Runtime's float formulas. An integer-only
 * target that rounds differently (e.g. gemmlowp's exact multiply with one
 * rounding) disagrees with ORT by one step on a few elements per million,
 * and in deep networks those disagreements grow layer by layer (measured:
 * 17–28 dB SQNR at the logits of the model suite). So the Q31 forms compute
 * the same float32 formula, but with integers: every float32 operation is an
 * exact integer operation followed by one rounding to 24 significant bits,
 * round to nearest, ties to even — what IEEE float32 does for normal
 * numbers. The results equal the FLOAT forms bit for bit.
 *
 * A value is m · 2^−s with m a signed integer. Only what the kernels need:
 * multiply by an integer, add, divide, round to float32, round to an
 * integer. The
 * kernels' magnitudes stay far from float32's overflow and subnormal range.
 */
#ifndef TIDSP_SOFTFLOAT_H
#define TIDSP_SOFTFLOAT_H

#include <stdint.h>
#include <string.h>

typedef struct tidsp_sf {
  int64_t m;
  int32_t s;
} tidsp_sf;

static inline int32_t tidsp_sf_bitlen(uint64_t u) {
#if defined(__GNUC__)
  return u ? 64 - __builtin_clzll(u) : 0;
#else
  int32_t n = 0;
  while (u) {
    n++;
    u >>= 1;
  }
  return n;
#endif
}

/* u · 2^−s rounded to the nearest integer, ties to even (s ≥ 0). */
static inline uint64_t tidsp_sf_rne_shift_u(uint64_t u, int32_t s) {
  uint64_t q, r, half;
  if (s == 0)
    return u;
  if (s > 64)
    return 0;
  if (s == 64)
    return u > ((uint64_t)1 << 63) ? 1 : 0;
  q = u >> s;
  r = u & ((((uint64_t)1) << s) - 1);
  half = (uint64_t)1 << (s - 1);
  if (r > half || (r == half && (q & 1)))
    q++;
  return q;
}

/* m · 2^−s rounded to float32 precision (24 significant bits). |m| < 2^63. */
static inline tidsp_sf tidsp_sf_round(int64_t m, int32_t s) {
  uint64_t u = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
  int32_t n = tidsp_sf_bitlen(u);
  tidsp_sf r;
  if (n > 24) {
    int32_t sh = n - 24;
    u = tidsp_sf_rne_shift_u(u, sh); /* may reach 2^24: still exact */
    s -= sh;
  }
  r.m = m < 0 ? -(int64_t)u : (int64_t)u;
  r.s = s;
  return r;
}

/* The exact value of a finite float32, from its bits (no FPU needed). */
static inline tidsp_sf tidsp_sf_from_float(float f) {
  uint32_t b;
  int32_t e;
  int64_t m;
  tidsp_sf r;
  memcpy(&b, &f, sizeof b);
  e = (int32_t)((b >> 23) & 0xff);
  m = (int64_t)(b & 0x7fffff);
  if (e != 0)
    m |= 0x800000; /* normal: implicit leading 1 */
  else
    e = 1; /* subnormal: m · 2^(1−127−23) */
  r.m = (b >> 31) ? -m : m;
  r.s = 150 - e;
  return r;
}

/* x + y rounded once to float32 (a float addition, or the addition of an
 * fma whose product is passed exactly). |x.m|, |y.m| < 2^40. */
static inline tidsp_sf tidsp_sf_add(tidsp_sf x, tidsp_sf y) {
  tidsp_sf t;
  int32_t d, xb, lift, drop;
  uint64_t yu, q;
  if (x.m == 0)
    return tidsp_sf_round(y.m, y.s);
  if (y.m == 0)
    return tidsp_sf_round(x.m, x.s);
  if (x.s > y.s) { /* x is the coarser one: it is shifted up */
    t = x;
    x = y;
    y = t;
  }
  d = y.s - x.s;
  xb = tidsp_sf_bitlen(x.m < 0 ? (uint64_t)0 - (uint64_t)x.m : (uint64_t)x.m);
  if (xb + d <= 62)
    return tidsp_sf_round(x.m * ((int64_t)1 << d) + y.m, y.s);
  /* y is at least 2^21 times smaller than x: keep x at 62 bits and fold
   * y's bits below the last one into a sticky bit, which cannot create a
   * tie at the rounding position 38 bits higher. */
  lift = 62 - xb;
  drop = d - lift;
  yu = y.m < 0 ? (uint64_t)0 - (uint64_t)y.m : (uint64_t)y.m;
  q = drop >= 64 ? 0 : yu >> drop;
  if (drop >= 64 ? yu != 0 : (yu & ((((uint64_t)1) << drop) - 1)) != 0)
    q |= 1;
  return tidsp_sf_round(x.m * ((int64_t)1 << lift) + (y.m < 0 ? -(int64_t)q : (int64_t)q),
                        x.s + lift);
}

/* x / y rounded once to float32 (a float division). y.m != 0; |x.m|,
 * |y.m| < 2^32. The quotient is taken to at least 26 bits plus a sticky
 * bit for a non-zero remainder, which rounds exactly as the full quotient
 * would: a tie needs a zero remainder. */
static inline tidsp_sf tidsp_sf_div(tidsp_sf x, tidsp_sf y) {
  uint64_t xu = x.m < 0 ? (uint64_t)0 - (uint64_t)x.m : (uint64_t)x.m;
  uint64_t yu = y.m < 0 ? (uint64_t)0 - (uint64_t)y.m : (uint64_t)y.m;
  int32_t k, neg = (x.m < 0) != (y.m < 0);
  uint64_t q, r;
  int64_t m;
  if (xu == 0)
    return x;
  k = tidsp_sf_bitlen(yu) + 26 - tidsp_sf_bitlen(xu);
  if (k < 0)
    k = 0;
  xu <<= k; /* at most 32 + 26 bits: no overflow */
  q = xu / yu;
  r = xu % yu;
  m = (int64_t)((q << 1) | (r != 0));
  return tidsp_sf_round(neg ? -m : m, x.s + k - y.s + 1);
}

/* x rounded to the nearest integer, ties to even, saturated to ±2^31. */
static inline int64_t tidsp_sf_rne_int(tidsp_sf x) {
  uint64_t u = x.m < 0 ? (uint64_t)0 - (uint64_t)x.m : (uint64_t)x.m;
  uint64_t q;
  if (x.s >= 0) {
    q = tidsp_sf_rne_shift_u(u, x.s);
  } else {
    int32_t up = -x.s;
    q = (up >= 32 || (u >> (32 - up)) != 0) ? ((uint64_t)1 << 31) : u << up;
  }
  if (q > ((uint64_t)1 << 31))
    q = (uint64_t)1 << 31;
  return x.m < 0 ? -(int64_t)q : (int64_t)q;
}

#endif /* TIDSP_SOFTFLOAT_H */
