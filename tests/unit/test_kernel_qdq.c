/*
 * test_kernel_qdq.c — status strings, dtype sizes, tidsp_requant_one (both
 * kinds), quantize and dequantize against oracles written from the header
 * formulas, hand-computed ties, saturation, NaN and guard bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "../../runtime/kernels/kernel_variants.h"
#include "unit.h"

#define GUARD 32
#define GUARD_BYTE 0xA5

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}
static int32_t rnd_range(int32_t lo, int32_t hi) { /* [lo, hi] */
  return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
}
static float rnd_unit(void) { return (float)(rnd() & 0xFFFFFF) / 16777216.0f; }

/* A buffer with GUARD bytes of a known pattern on each side. */
static uint8_t *guarded(size_t n) {
  uint8_t *b = malloc(n + 2 * GUARD);
  memset(b, GUARD_BYTE, n + 2 * GUARD);
  return b + GUARD;
}
static int guards_ok(uint8_t *p, size_t n) {
  size_t i;
  for (i = 0; i < GUARD; i++) {
    if (p[-1 - (ptrdiff_t)i] != GUARD_BYTE || p[n + i] != GUARD_BYTE)
      return 0;
  }
  return 1;
}
static void guarded_free(uint8_t *p) { free(p - GUARD); }

static void test_status_and_dtype(void) {
  CHECK(strcmp(tidsp_status_str(TIDSP_OK), "ok") == 0);
  CHECK(strcmp(tidsp_status_str(TIDSP_ERR_NOMEM), "arena too small") == 0);
  CHECK(strcmp(tidsp_status_str(-99), "unknown status") == 0);
  CHECK(tidsp_status_str(12345) != NULL);
  CHECK(tidsp_dtype_size(TIDSP_DTYPE_F32) == 4);
  CHECK(tidsp_dtype_size(TIDSP_DTYPE_I8) == 1);
  CHECK(tidsp_dtype_size(TIDSP_DTYPE_U8) == 1);
  CHECK(tidsp_dtype_size(TIDSP_DTYPE_I16) == 2);
  CHECK(tidsp_dtype_size(TIDSP_DTYPE_U16) == 2);
  CHECK(tidsp_dtype_size(TIDSP_DTYPE_I32) == 4);
  CHECK(tidsp_dtype_size(TIDSP_DTYPE_I64) == 8);
  CHECK(tidsp_dtype_size(0) == 0);
  CHECK(tidsp_dtype_size(99) == 0);
}

/* ---- requant ------------------------------------------------------------ */

static int32_t oracle_requant_float(int32_t acc, float m, int32_t zp,
                                    int32_t lo, int32_t hi) {
  float v = (float)acc * m;
  float flo = (float)(lo - zp), fhi = (float)(hi - zp);
  if (!(v >= flo))
    v = flo;
  if (v > fhi)
    v = fhi;
  return (int32_t)nearbyintf(v) + zp;
}

/* Q31 is the FLOAT formula with the float multiplier m·2^−s (m a 24-bit
 * significand), computed with integers: the float oracle is its oracle. */
static int32_t oracle_requant_q31(int32_t acc, int32_t m, int32_t s, int32_t zp,
                                  int32_t lo, int32_t hi) {
  return oracle_requant_float(acc, (float)ldexp((double)m, -s), zp, lo, hi);
}

static void test_requant_one(void) {
  tidsp_requant_params rq = {TIDSP_REQUANT_FLOAT, 0, 0, -128, 127};
  float half = 0.5f;
  int32_t q31[2];
  int i;
  /* FLOAT ties go to even */
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, 5) == 2);
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, 7) == 4);
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, -5) == -2);
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, -7) == -4);
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, 1000) == 127); /* saturation */
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, -1000) == -128);
  rq.out_zp = 10;
  rq.out_min = 10; /* a fused Relu */
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, -7) == 10);
  CHECK(tidsp_requant_one(&rq, &half, 1, 0, 7) == 14);
  /* float(acc) is an RNE conversion: 2^24 + 1 → 2^24, 2^24 + 3 → 2^24 + 4 */
  {
    float m = 1.0f / 16777216.0f;
    tidsp_requant_params big = {TIDSP_REQUANT_FLOAT, 0, 0, -128, 127};
    CHECK(tidsp_requant_one(&big, &m, 1, 0, (1 << 24) + 1) == 1);
    m = 0.5f;
    big.out_min = INT32_MIN / 4;
    big.out_max = INT32_MAX / 4;
    CHECK(tidsp_requant_one(&big, &m, 1, 0, (1 << 24) + 3) == (1 << 23) + 2);
  }
  /* Q31: the same float formula in integers — ties to even, and float(acc)
   * rounds to 24 bits exactly like the FLOAT form above. */
  rq.kind = TIDSP_REQUANT_Q31;
  rq.out_zp = 0;
  rq.out_min = -128;
  q31[0] = 1 << 23; /* 0.5 = 2^23 · 2^−24 */
  q31[1] = 24;
  CHECK(tidsp_requant_one(&rq, q31, 1, 0, 5) == 2);
  CHECK(tidsp_requant_one(&rq, q31, 1, 0, 7) == 4);
  CHECK(tidsp_requant_one(&rq, q31, 1, 0, -5) == -2);
  CHECK(tidsp_requant_one(&rq, q31, 1, 0, 1000) == 127);
  {
    tidsp_requant_params big = {TIDSP_REQUANT_Q31, 0, 0, INT32_MIN / 4, INT32_MAX / 4};
    int32_t t[2] = {1 << 23, 24}; /* 0.5 */
    CHECK(tidsp_requant_one(&big, t, 1, 0, (1 << 24) + 3) == (1 << 23) + 2);
    t[0] = 1 << 23; t[1] = 47; /* 2^−24 */
    big.out_min = -128; big.out_max = 127;
    CHECK(tidsp_requant_one(&big, t, 1, 0, (1 << 24) + 1) == 1);
  }
  q31[1] = 0; /* shift 0 */
  q31[0] = 3;
  CHECK(tidsp_requant_one(&rq, q31, 1, 0, -40) == -120);
  /* invalid input answers 0 instead of crashing */
  CHECK(tidsp_requant_one(NULL, q31, 1, 0, 5) == 0);
  CHECK(tidsp_requant_one(&rq, NULL, 1, 0, 5) == 0);
  CHECK(tidsp_requant_one(&rq, q31, 1, 1, 5) == 0);
  CHECK(tidsp_requant_one(&rq, q31, 1, -1, 5) == 0);
  q31[1] = 63;
  CHECK(tidsp_requant_one(&rq, q31, 1, 0, 5) == 0);
  rq.kind = 7;
  CHECK(tidsp_requant_one(&rq, q31, 1, 0, 5) == 0);

  /* random, per channel, both kinds, against the oracles */
  for (i = 0; i < 20000; i++) {
    enum { C = 5 };
    float fm[C];
    int32_t qm[2 * C];
    int32_t c, acc = (int32_t)((int64_t)rnd() - 2147483648LL), got, want;
    tidsp_requant_params r;
    r.per_channel = (int32_t)(rnd() & 1);
    r.out_zp = rnd_range(-128, 127);
    r.out_min = rnd_range(-128, r.out_zp);
    r.out_max = rnd_range(r.out_min, 127);
    for (c = 0; c < C; c++) {
      fm[c] = ldexpf(rnd_unit() + 0.5f, -rnd_range(8, 24));
      qm[c] = (int32_t)((rnd() & 0x7FFFFF) | 0x800000); /* a 24-bit significand */
      qm[C + c] = rnd_range(24, 62);
    }
    c = rnd_range(0, C - 1);
    if (i & 1) {
      r.kind = TIDSP_REQUANT_FLOAT;
      got = tidsp_requant_one(&r, fm, C, c, acc);
      want = oracle_requant_float(acc, fm[r.per_channel ? c : 0], r.out_zp,
                                  r.out_min, r.out_max);
    } else {
      int32_t ci = r.per_channel ? c : 0;
      int32_t n = r.per_channel ? C : 1;
      int32_t tbl[2 * C];
      memcpy(tbl, qm, sizeof(int32_t) * (size_t)n);
      memcpy(tbl + n, qm + C, sizeof(int32_t) * (size_t)n);
      r.kind = TIDSP_REQUANT_Q31;
      got = tidsp_requant_one(&r, tbl, C, c, acc);
      want = oracle_requant_q31(acc, qm[ci], qm[C + ci], r.out_zp, r.out_min,
                                r.out_max);
    }
    CHECK_MSG(got == want, "requant kind %d acc %d: got %d want %d", (int)r.kind,
              (int)acc, (int)got, (int)want);
    if (got != want)
      break;
  }
}

/* ---- quantize / dequantize ----------------------------------------------- */

static void dtype_range(int32_t dtype, int64_t *lo, int64_t *hi) {
  switch (dtype) {
  case TIDSP_DTYPE_I8: *lo = -128; *hi = 127; break;
  case TIDSP_DTYPE_U8: *lo = 0; *hi = 255; break;
  case TIDSP_DTYPE_I16: *lo = -32768; *hi = 32767; break;
  case TIDSP_DTYPE_U16: *lo = 0; *hi = 65535; break;
  default: *lo = INT32_MIN; *hi = INT32_MAX; break;
  }
}

static int64_t load_int(const void *p, int32_t dtype, size_t i) {
  switch (dtype) {
  case TIDSP_DTYPE_I8: return ((const int8_t *)p)[i];
  case TIDSP_DTYPE_U8: return ((const uint8_t *)p)[i];
  case TIDSP_DTYPE_I16: return ((const int16_t *)p)[i];
  case TIDSP_DTYPE_U16: return ((const uint16_t *)p)[i];
  default: return ((const int32_t *)p)[i];
  }
}

static void store_int(void *p, int32_t dtype, size_t i, int64_t v) {
  switch (dtype) {
  case TIDSP_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  case TIDSP_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case TIDSP_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
  case TIDSP_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  default: ((int32_t *)p)[i] = (int32_t)v; break;
  }
}

/* sat(rne(x / s) + zp) in double after the float divide; NaN → qmin. */
static int64_t oracle_quantize(float x, float s, int64_t zp, int64_t lo,
                               int64_t hi) {
  float q = x / s;
  double r;
  if (isnan(q))
    return lo;
  if (q > 1e12f)
    return hi;
  if (q < -1e12f)
    return lo;
  r = nearbyint((double)q) + (double)zp;
  return r < (double)lo ? lo : (r > (double)hi ? hi : (int64_t)r);
}

static void test_quantize_dequantize(void) {
  static const int32_t dtypes[] = {TIDSP_DTYPE_I8, TIDSP_DTYPE_U8, TIDSP_DTYPE_I16,
                                   TIDSP_DTYPE_U16, TIDSP_DTYPE_I32};
  int t, iter;
  for (t = 0; t < 5; t++) {
    const int32_t dtype = dtypes[t];
    const size_t es = tidsp_dtype_size(dtype);
    int64_t lo, hi;
    dtype_range(dtype, &lo, &hi);
    for (iter = 0; iter < 30; iter++) {
      tidsp_qdq_params p;
      float scale[6], *x, *back;
      int32_t zp[6];
      uint8_t *q, *yb;
      size_t n, i;
      int32_t o, c, k;
      p.outer = rnd_range(1, 3);
      p.channels = rnd_range(1, 6);
      p.inner = rnd_range(1, 17);
      p.dtype = dtype;
      n = (size_t)p.outer * p.channels * p.inner;
      for (c = 0; c < p.channels; c++) {
        /* powers of two (exact ties) or arbitrary scales */
        scale[c] = iter % 3 == 0 ? ldexpf(1.0f, -rnd_range(2, 8))
                                 : ldexpf(rnd_unit() + 0.5f, -rnd_range(2, 10));
        zp[c] = (int32_t)(lo + (int64_t)(rnd_unit() * (float)(hi - lo)));
        if (dtype == TIDSP_DTYPE_I32)
          zp[c] = rnd_range(-1000, 1000);
      }
      x = malloc(n * sizeof(float));
      back = (float *)guarded(n * sizeof(float));
      q = guarded(n * es);
      for (i = 0; i < n; i++) {
        float range = dtype == TIDSP_DTYPE_I32 ? 1e4f : (float)(hi - lo);
        x[i] = (rnd_unit() * 2.2f - 1.1f) * range * scale[(i / p.inner) % p.channels];
      }
      /* specials: exact ties, NaN, ±inf, huge */
      x[0] = 2.5f * scale[0];
      if (n > 1) x[1] = -3.5f * scale[0];
      if (n > 2) x[2] = NAN;
      if (n > 3) x[3] = INFINITY;
      if (n > 4) x[4] = -INFINITY;
      if (n > 5) x[5] = 3e38f;
      CHECK(tidsp_quantize(&p, scale, zp, x, q) == TIDSP_OK);
      CHECK(guards_ok(q, n * es));
      for (o = 0; o < p.outer; o++)
        for (c = 0; c < p.channels; c++)
          for (k = 0; k < p.inner; k++) {
            i = ((size_t)o * p.channels + c) * p.inner + k;
            CHECK_MSG(load_int(q, dtype, i) == oracle_quantize(x[i], scale[c], zp[c], lo, hi),
                      "quantize dtype %d x %g s %g zp %d: got %lld", (int)dtype, x[i],
                      scale[c], (int)zp[c], (long long)load_int(q, dtype, i));
          }
      /* dequantize random integers */
      for (i = 0; i < n; i++)
        store_int(q, dtype, i,
                  dtype == TIDSP_DTYPE_I32 ? (int64_t)(int32_t)rnd()
                                           : lo + (int64_t)(rnd_unit() * (float)(hi - lo + 1)));
      CHECK(tidsp_dequantize(&p, scale, zp, q, back) == TIDSP_OK);
      CHECK(guards_ok((uint8_t *)back, n * sizeof(float)));
      for (o = 0; o < p.outer; o++)
        for (c = 0; c < p.channels; c++)
          for (k = 0; k < p.inner; k++) {
            float want;
            i = ((size_t)o * p.channels + c) * p.inner + k;
            want = (float)(load_int(q, dtype, i) - zp[c]) * scale[c];
            CHECK(memcmp(&want, &back[i], sizeof(float)) == 0);
          }
      free(x);
      guarded_free((uint8_t *)back);
      guarded_free(q);
      yb = NULL;
      (void)yb;
    }
  }
}

/* int32 quantize/dequantize of the reference kernels where they avoid
 * float <-> int64 conversions (soft double on small cores): values around
 * every switch-over point (2^23, 2^30, 2^33) and full-range differences,
 * against the oracles above (which convert through int64 and double). */
static void test_ref_int32_edges(void) {
  tidsp_qdq_params p = {.outer = 1, .channels = 1, .inner = 1, .dtype = TIDSP_DTYPE_I32};
  int iter;
  for (iter = 0; iter < 200000; iter++) {
    int32_t zp = iter % 5 == 0 ? 0 : (int32_t)rnd() ^ (int32_t)(rnd() << 12);
    float s = iter % 2 ? 1.0f : ldexpf(rnd_unit() + 0.5f, rnd_range(-4, 4));
    int e = rnd_range(20, 35);
    float v = ldexpf(rnd_unit() + 0.5f, e) * (rnd() & 1 ? -1.0f : 1.0f);
    if (iter % 7 == 0) v = ldexpf((float)(int32_t)rnd_range(-4000, 4000) + 0.5f, rnd_range(0, 6));
    float x = v * s;
    int32_t got = 0, raw = (int32_t)rnd();
    float back = 0.0f;
    CHECK(tidsp_quantize__ref(&p, &s, &zp, &x, &got) == TIDSP_OK);
    CHECK_MSG(got == oracle_quantize(x, s, zp, INT32_MIN, INT32_MAX), "quantize x %a s %a zp %d: got %d", x, s,
              (int)zp, (int)got);
    CHECK(tidsp_dequantize__ref(&p, &s, &zp, &raw, &back) == TIDSP_OK);
    float want = (float)((int64_t)raw - zp) * s;
    CHECK_MSG(memcmp(&want, &back, sizeof want) == 0, "dequantize %d zp %d s %a: %a, want %a", (int)raw, (int)zp,
              s, back, want);
  }
}

static void test_qdq_errors(void) {
  tidsp_qdq_params p = {1, 1, 4, TIDSP_DTYPE_I8};
  float s = 0.5f, x[4] = {0}, y[4];
  int32_t zp = 0;
  int8_t q[4];
  CHECK(tidsp_quantize(NULL, &s, &zp, x, q) == TIDSP_ERR_NULL);
  CHECK(tidsp_quantize(&p, NULL, &zp, x, q) == TIDSP_ERR_NULL);
  CHECK(tidsp_quantize(&p, &s, NULL, x, q) == TIDSP_ERR_NULL);
  CHECK(tidsp_quantize(&p, &s, &zp, NULL, q) == TIDSP_ERR_NULL);
  CHECK(tidsp_dequantize(&p, &s, &zp, q, NULL) == TIDSP_ERR_NULL);
  p.dtype = TIDSP_DTYPE_F32;
  CHECK(tidsp_quantize(&p, &s, &zp, x, q) == TIDSP_ERR_DTYPE);
  p.dtype = TIDSP_DTYPE_I64;
  CHECK(tidsp_dequantize(&p, &s, &zp, q, y) == TIDSP_ERR_DTYPE);
  p.dtype = TIDSP_DTYPE_I8;
  zp = 200; /* outside int8 */
  CHECK(tidsp_quantize(&p, &s, &zp, x, q) == TIDSP_ERR_PARAM);
  zp = 0;
  p.channels = 0;
  CHECK(tidsp_quantize(&p, &s, &zp, x, q) == TIDSP_ERR_SHAPE);
  p.channels = 1;
  p.inner = -1;
  CHECK(tidsp_dequantize(&p, &s, &zp, q, y) == TIDSP_ERR_SHAPE);
}

int main(void) {
  test_status_and_dtype();
  test_requant_one();
  test_quantize_dequantize();
  test_ref_int32_edges();
  test_qdq_errors();
  UNIT_MAIN_END();
}
