/*
 * test_kernel_cast.c — tidsp_cast between every pair of dtypes with the
 * float16/bfloat16/double/uint32/uint64 additions, and k_binary's Max/Min/
 * Pow on them, against naive oracles:
 *   - f16 → f32 from the fields (sign · m · 2^(e−25)), all 65 536 patterns;
 *   - f32 → f16 / bf16: the nearest of the two neighbouring 16-bit values,
 *     compared in double, ties to the even one, every tie point of the
 *     format (and one float either side) plus a stride over all floats;
 *     NaN stays NaN (quiet), ±inf and overflow give ±inf;
 *   - f64 → f16 through float (ORT's order), integers ↔ floats, saturation.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

static float f32_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t bits_of(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

static uint16_t cast1_to16(float x, int32_t to) {
  tidsp_cast_params p = {1, TIDSP_DTYPE_F32, to};
  uint16_t y = 0xdead;
  CHECK(tidsp_cast(&p, &x, &y) == TIDSP_OK);
  return y;
}

static float cast1_from16(uint16_t h, int32_t from) {
  tidsp_cast_params p = {1, from, TIDSP_DTYPE_F32};
  float y = -1.0f;
  CHECK(tidsp_cast(&p, &h, &y) == TIDSP_OK);
  return y;
}

/* Oracle: the value of a finite f16 pattern, from its fields. */
static double f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return h & 0x8000 ? -v : v;
}

/* Oracle: round float x to f16 — the neighbours by value, ties to even. */
static uint16_t f16_oracle(float x) {
  if (x != x) return 0x7e00;
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs((double)x);
  if (a >= 65520.0) return sign | 0x7c00; /* ≥ max + half an ulp */
  uint16_t lo = 0; /* largest magnitude pattern ≤ a (patterns ascend with value) */
  for (int step = 0x4000; step; step >>= 1)
    if (lo + step <= 0x7bff && f16_value((uint16_t)(lo + step)) <= a) lo = (uint16_t)(lo + step);
  if (f16_value(lo) == a) return sign | lo;
  double dlo = a - f16_value(lo), dhi = f16_value((uint16_t)(lo + 1)) - a;
  uint16_t r = dlo < dhi ? lo : dhi < dlo ? (uint16_t)(lo + 1) : (lo & 1) ? (uint16_t)(lo + 1) : lo;
  return sign | r;
}

static uint16_t bf16_oracle(float x) {
  if (x != x) return 0x7fc0;
  uint32_t b = bits_of(x);
  uint16_t t = (uint16_t)(b >> 16);
  if ((b & 0x7fffffff) == 0x7f800000) return t;
  double lo = (double)f32_of((uint32_t)t << 16), hi = (double)f32_of((uint32_t)(t + 1) << 16);
  if ((t & 0x7fff) == 0x7f7f) /* above the largest finite: the next is inf */
    hi = (signbit(x) ? -1 : 1) * ldexp(1.0, 128);
  double dl = fabs((double)x - lo), dh = fabs(hi - (double)x);
  return dl < dh ? t : dh < dl ? (uint16_t)(t + 1) : (t & 1) ? (uint16_t)(t + 1) : t;
}

static void check_to_f16(float x) {
  uint16_t got = cast1_to16(x, TIDSP_DTYPE_F16), want = f16_oracle(x);
  if (x != x) {
    CHECK_MSG((got & 0x7c00) == 0x7c00 && (got & 0x3ff) && (got & 0x200), "NaN %08x -> %04x", bits_of(x), got);
    return;
  }
  CHECK_MSG(got == want, "f32 %08x (%.9g) -> f16 %04x, oracle %04x", bits_of(x), x, got, want);
}

static void check_to_bf16(float x) {
  uint16_t got = cast1_to16(x, TIDSP_DTYPE_BF16), want = bf16_oracle(x);
  if (x != x) {
    CHECK_MSG((got & 0x7f80) == 0x7f80 && (got & 0x40), "NaN %08x -> bf16 %04x", bits_of(x), got);
    return;
  }
  CHECK_MSG(got == want, "f32 %08x (%.9g) -> bf16 %04x, oracle %04x", bits_of(x), x, got, want);
}

static void test_f16_widen_all(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float got = cast1_from16((uint16_t)h, TIDSP_DTYPE_F16);
    int e = (h >> 10) & 0x1f;
    if (e == 0x1f) {
      bad += (h & 0x3ff) ? !(got != got) : !(isinf(got) && (signbit(got) != 0) == ((h & 0x8000) != 0));
    } else {
      bad += (double)got != f16_value((uint16_t)h) || (signbit(got) != 0) != ((h & 0x8000) != 0);
    }
    float b = cast1_from16((uint16_t)h, TIDSP_DTYPE_BF16);
    bad += bits_of(b) != (h << 16);
  }
  CHECK_MSG(bad == 0, "%d of 65536 f16/bf16 patterns widen wrongly", bad);
}

static void test_narrow_ties_and_stride(void) {
  /* Every midpoint between neighbouring f16 values (a float exactly), and
   * the floats next to it. */
  for (uint32_t h = 0; h < 0x7bff; h++) {
    float mid = (float)((f16_value((uint16_t)h) + f16_value((uint16_t)(h + 1))) / 2);
    float s[3] = {mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY)};
    for (int k = 0; k < 3; k++) {
      check_to_f16(s[k]);
      check_to_f16(-s[k]);
    }
  }
  /* bf16: every tie pattern x.8000 of the upper half-range, and neighbours. */
  for (uint32_t t = 0; t < 0x7f80; t += 7) {
    uint32_t tie = (t << 16) | 0x8000;
    check_to_bf16(f32_of(tie));
    check_to_bf16(f32_of(tie - 1));
    check_to_bf16(f32_of(tie + 1));
    check_to_bf16(f32_of(tie | 0x80000000u));
  }
  /* A stride over all 2^32 floats (subnormals, overflow, NaN payloads). */
  for (uint64_t b = 0; b < (1ull << 32); b += 65521) {
    check_to_f16(f32_of((uint32_t)b));
    check_to_bf16(f32_of((uint32_t)b));
  }
  /* Edges by hand. */
  CHECK(cast1_to16(65504.0f, TIDSP_DTYPE_F16) == 0x7bff);
  CHECK(cast1_to16(65519.996f, TIDSP_DTYPE_F16) == 0x7bff);
  CHECK(cast1_to16(65520.0f, TIDSP_DTYPE_F16) == 0x7c00);
  CHECK(cast1_to16(-INFINITY, TIDSP_DTYPE_F16) == 0xfc00);
  CHECK(cast1_to16(ldexpf(1.0f, -24), TIDSP_DTYPE_F16) == 0x0001);
  CHECK(cast1_to16(ldexpf(1.0f, -25), TIDSP_DTYPE_F16) == 0x0000);  /* tie to even (0) */
  CHECK(cast1_to16(ldexpf(3.0f, -25), TIDSP_DTYPE_F16) == 0x0002);  /* 1.5 ulp: tie to even (2) */
  CHECK(cast1_to16(-0.0f, TIDSP_DTYPE_F16) == 0x8000);
  CHECK(cast1_to16(f32_of(0x7f7fffff), TIDSP_DTYPE_BF16) == 0x7f80); /* FLT_MAX rounds up to inf */
  CHECK(cast1_to16(f32_of(0x3ef5eeb0), TIDSP_DTYPE_BF16) == 0x3ef6); /* as ORT, not ONNX's truncating data */
  CHECK(cast1_to16(f32_of(0x7f800001), TIDSP_DTYPE_BF16) == 0x7fc0); /* a NaN never becomes inf */
}

static void test_wide_pairs(void) {
  /* f64 → f16 goes through float, as ORT; f64 → f32 rounds once. */
  double d[4] = {1.0 + ldexp(1.0, -11) + ldexp(1.0, -40), 1e300, -1e-300, 0.1};
  uint16_t h[4];
  float f[4];
  tidsp_cast_params p = {4, TIDSP_DTYPE_F64, TIDSP_DTYPE_F16};
  CHECK(tidsp_cast(&p, d, h) == TIDSP_OK);
  CHECK(h[0] == cast1_to16((float)d[0], TIDSP_DTYPE_F16) && h[1] == 0x7c00 && h[2] == 0x8000);
  p.to = TIDSP_DTYPE_F32;
  CHECK(tidsp_cast(&p, d, f) == TIDSP_OK);
  CHECK(f[3] == (float)0.1 && isinf(f[1]));
  /* u64 beyond int64, to float and double, and back saturated. */
  uint64_t u[3] = {UINT64_MAX, (1ull << 63) + 1, 5};
  double du[3];
  p = (tidsp_cast_params){3, TIDSP_DTYPE_U64, TIDSP_DTYPE_F64};
  CHECK(tidsp_cast(&p, u, du) == TIDSP_OK);
  CHECK(du[0] == 18446744073709551615.0 && du[1] == 9223372036854775808.0 && du[2] == 5.0);
  p.to = TIDSP_DTYPE_F32;
  CHECK(tidsp_cast(&p, u, f) == TIDSP_OK);
  CHECK(f[0] == 18446744073709551616.0f && f[2] == 5.0f);
  float fs[4] = {-3.5f, 4294967296.0f, 1e30f, NAN};
  uint32_t u32[4];
  uint64_t u64[4];
  p = (tidsp_cast_params){4, TIDSP_DTYPE_F32, TIDSP_DTYPE_U32};
  CHECK(tidsp_cast(&p, fs, u32) == TIDSP_OK);
  CHECK(u32[0] == 0 && u32[1] == UINT32_MAX && u32[2] == UINT32_MAX && u32[3] == 0);
  p.to = TIDSP_DTYPE_U64;
  CHECK(tidsp_cast(&p, fs, u64) == TIDSP_OK);
  CHECK(u64[0] == 0 && u64[1] == 4294967296ull && u64[2] == UINT64_MAX && u64[3] == 0);
  /* integers between themselves keep the low bits; u32 → i64 is unsigned */
  uint32_t big[1] = {4000000000u};
  int64_t i64[1];
  p = (tidsp_cast_params){1, TIDSP_DTYPE_U32, TIDSP_DTYPE_I64};
  CHECK(tidsp_cast(&p, big, i64) == TIDSP_OK && i64[0] == 4000000000ll);
  /* f16 → f64 exact; bool from a half NaN is true */
  uint16_t hs[2] = {0x3555, 0x7e00};
  double dh[2];
  uint8_t bo[2];
  p = (tidsp_cast_params){2, TIDSP_DTYPE_F16, TIDSP_DTYPE_F64};
  CHECK(tidsp_cast(&p, hs, dh) == TIDSP_OK && dh[0] == f16_value(0x3555) && dh[1] != dh[1]);
  p.to = TIDSP_DTYPE_BOOL;
  CHECK(tidsp_cast(&p, hs, bo) == TIDSP_OK && bo[0] == 1 && bo[1] == 1);
}

static tidsp_binary_params flat(int32_t op, int32_t n, int32_t a_dt, int32_t b_dt, int32_t y_dt) {
  tidsp_binary_params p;
  memset(&p, 0, sizeof p);
  p.bc.rank = 1;
  p.bc.shape[0] = n;
  p.bc.a_stride[0] = 1;
  p.bc.b_stride[0] = 1;
  p.op = op;
  p.a_dtype = a_dt;
  p.b_dtype = b_dt;
  p.y_dtype = y_dt;
  return p;
}

static void test_binary_wide(void) {
  uint64_t a[3] = {UINT64_MAX, 1, 1ull << 63}, b[3] = {2, 1ull << 63, 3}, y[3];
  tidsp_binary_params p = flat(TIDSP_BINARY_MAX, 3, TIDSP_DTYPE_U64, TIDSP_DTYPE_U64, TIDSP_DTYPE_U64);
  CHECK(tidsp_binary(&p, a, b, y) == TIDSP_OK);
  CHECK(y[0] == UINT64_MAX && y[1] == 1ull << 63 && y[2] == 1ull << 63);
  p.op = TIDSP_BINARY_MIN;
  CHECK(tidsp_binary(&p, a, b, y) == TIDSP_OK && y[0] == 2 && y[1] == 1 && y[2] == 3);
  uint32_t a32[2] = {4000000000u, 7}, b32[2] = {5, 4000000001u}, y32[2];
  p = flat(TIDSP_BINARY_MAX, 2, TIDSP_DTYPE_U32, TIDSP_DTYPE_U32, TIDSP_DTYPE_U32);
  CHECK(tidsp_binary(&p, a32, b32, y32) == TIDSP_OK && y32[0] == 4000000000u && y32[1] == 4000000001u);
  /* f16 Max/Min: exact (no rounding happens), NaN propagates */
  uint16_t ha[3] = {0x3c00, 0xc000, 0x7e00}, hb[3] = {0x3c01, 0xbc00, 0x3c00}, hy[3];
  p = flat(TIDSP_BINARY_MAX, 3, TIDSP_DTYPE_F16, TIDSP_DTYPE_F16, TIDSP_DTYPE_F16);
  CHECK(tidsp_binary(&p, ha, hb, hy) == TIDSP_OK && hy[0] == 0x3c01 && hy[1] == 0xbc00 && (hy[2] & 0x7c00) == 0x7c00 && (hy[2] & 0x3ff));
  double da[2] = {1e300, -0.5}, db[2] = {-1e300, -0.25}, dy[2];
  p = flat(TIDSP_BINARY_MIN, 2, TIDSP_DTYPE_F64, TIDSP_DTYPE_F64, TIDSP_DTYPE_F64);
  CHECK(tidsp_binary(&p, da, db, dy) == TIDSP_OK && dy[0] == -1e300 && dy[1] == -0.5);
  /* Pow: f32 base, u32/u64 exponents */
  float fa[2] = {2.0f, -1.5f}, fy[2];
  uint64_t e64[2] = {10, 3};
  uint32_t e32[2] = {10, 3};
  p = flat(TIDSP_BINARY_POW, 2, TIDSP_DTYPE_F32, TIDSP_DTYPE_U64, TIDSP_DTYPE_F32);
  CHECK(tidsp_binary(&p, fa, e64, fy) == TIDSP_OK && fy[0] == 1024.0f && fy[1] == -3.375f);
  p.b_dtype = TIDSP_DTYPE_U32;
  CHECK(tidsp_binary(&p, fa, e32, fy) == TIDSP_OK && fy[0] == 1024.0f && fy[1] == -3.375f);
}

int main(void) {
  test_f16_widen_all();
  test_narrow_ties_and_stride();
  test_wide_pairs();
  test_binary_wide();
  UNIT_MAIN_END();
}
