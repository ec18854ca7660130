/*
 * test_kernel_elementwise.c — add_i8, mul_i8 (FLOAT and Q31), binary_f32, prelu_f32,
 * binary (any dtype), lut_i8 and unary_f32 against oracles that index by unravelling each
 * output position (the kernels walk rows with an odometer). Random
 * broadcasting of every kind (same shape, per-channel, scalar, ranks that
 * differ, both operands broadcast), the ORT span rule of QLinearAdd,
 * fused-Relu ranges, saturation, in-place, and guard bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 32
#define KT_SEED 0xD1B54A32D192ED03ull
#include "kernel_test_util.h"

/* ---- broadcasting ---------------------------------------------------------
 * Operand shapes are right-aligned against the output as in numpy; a
 * broadcast case records each operand's own shape. */
typedef struct bcase {
  tidsp_broadcast bc;
  int32_t a_shape[TIDSP_MAX_RANK], b_shape[TIDSP_MAX_RANK]; /* padded to bc.rank */
  int64_t n_out, n_a, n_b;
} bcase;

static void strides_of(const int32_t *shape, const int32_t *out, int32_t rank,
                       int32_t *stride) {
  int32_t d, acc = 1;
  for (d = rank - 1; d >= 0; d--) {
    stride[d] = shape[d] == 1 && out[d] != 1 ? 0 : acc;
    acc *= shape[d];
  }
}

static void random_bcase(bcase *c) {
  int32_t d, rank = rnd_range(0, 4), kind = rnd_range(0, 5);
  memset(c, 0, sizeof(*c));
  c->bc.rank = rank;
  c->n_out = c->n_a = c->n_b = 1;
  for (d = 0; d < rank; d++) {
    int32_t n = rnd() % 4 == 0 ? 1 : rnd_range(2, 9);
    c->bc.shape[d] = n;
    c->a_shape[d] = c->b_shape[d] = n;
    switch (kind) {
    case 0: break;                                        /* same shape */
    case 1: if (d != 1) c->b_shape[d] = 1; break;         /* per-channel B */
    case 2: if (d != 1) c->a_shape[d] = 1; break;         /* per-channel A */
    case 3: c->b_shape[d] = 1; break;                     /* scalar B */
    case 4: c->a_shape[d] = 1; break;                     /* scalar A */
    default:                                              /* mixed */
      if (rnd() & 1) c->a_shape[d] = 1; else if (rnd() & 1) c->b_shape[d] = 1;
    }
  }
  for (d = 0; d < rank; d++) {
    c->n_out *= c->bc.shape[d];
    c->n_a *= c->a_shape[d];
    c->n_b *= c->b_shape[d];
  }
  strides_of(c->a_shape, c->bc.shape, rank, c->bc.a_stride);
  strides_of(c->b_shape, c->bc.shape, rank, c->bc.b_stride);
}

/* Offsets of output element i in A and B, by unravelling i. */
static void operand_offsets(const bcase *c, int64_t i, int64_t *ao, int64_t *bo) {
  int64_t a = 0, b = 0, sa = 1, sb = 1;
  int32_t d;
  for (d = c->bc.rank - 1; d >= 0; d--) {
    int64_t idx = i % c->bc.shape[d];
    i /= c->bc.shape[d];
    a += (c->a_shape[d] == 1 ? 0 : idx) * sa;
    b += (c->b_shape[d] == 1 ? 0 : idx) * sb;
    sa *= c->a_shape[d];
    sb *= c->b_shape[d];
  }
  *ao = a;
  *bo = b;
}

/* ORT's span rule: is A one value over the innermost dim of size > 1? */
static int oracle_a_per_span(const bcase *c) {
  int32_t d;
  for (d = c->bc.rank - 1; d >= 0; d--) {
    if (c->bc.shape[d] > 1)
      return c->a_shape[d] == 1;
  }
  return 1; /* one element */
}

static int32_t clamp_i(int64_t v, int32_t lo, int32_t hi) {
  return (int32_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* ---- QLinearAdd ---------------------------------------------------------- */

/* Both kinds compute the same float formula (Q31 with integers only). */
static int32_t oracle_add(const tidsp_add_i8_params *p, const bcase *c, int32_t a,
                          int32_t b) {
  {
    const int32_t off = p->domain_offset;
    const float za = (float)(p->a_zp + off), zb = (float)(p->b_zp + off),
                zc = (float)(p->y_zp + off);
    const float au = (float)(a + off), bu = (float)(b + off);
    float v;
    if (oracle_a_per_span(c)) {
      const float prod = p->ra * za;
      const float fs = zc - fmaf(p->rb, zb, prod);
      v = fmaf(bu, p->rb, fmaf(au, p->ra, fs));
    } else {
      v = fmaf(au, p->ra, fmaf(bu, p->rb, p->f));
    }
    if (!(v >= -1e9f))
      v = -1e9f;
    return clamp_i((int64_t)nearbyintf(v < 1e9f ? v : 1e9f), p->y_min + off, p->y_max + off) - off;
  }
}

static void test_add_i8_random(void) {
  int iter;
  for (iter = 0; iter < 400; iter++) {
    bcase c;
    tidsp_add_i8_params p;
    int8_t *a, *b, *y;
    int64_t i;
    int bad = 0;
    random_bcase(&c);
    memset(&p, 0, sizeof(p));
    p.bc = c.bc;
    p.kind = iter & 1 ? TIDSP_REQUANT_FLOAT : TIDSP_REQUANT_Q31;
    p.domain_offset = iter % 4 < 2 ? 128 : 0;
    p.a_zp = rnd_range(-128, 127);
    p.b_zp = rnd_range(-128, 127);
    p.y_zp = rnd_range(-128, 127);
    p.y_min = iter % 5 == 0 ? p.y_zp : -128; /* fused Relu */
    p.y_max = 127;
    p.ra = ldexpf(rnd_unit() + 0.5f, -rnd_range(-1, 3));
    p.rb = ldexpf(rnd_unit() + 0.5f, -rnd_range(-1, 3));
    {
      const float prod = p.rb * (float)(p.b_zp + p.domain_offset);
      p.f = (float)(p.y_zp + p.domain_offset) - fmaf(p.ra, (float)(p.a_zp + p.domain_offset), prod);
    }
    a = malloc((size_t)c.n_a);
    b = malloc((size_t)c.n_b);
    y = guarded((size_t)c.n_out);
    for (i = 0; i < c.n_a; i++)
      a[i] = (int8_t)rnd_range(-128, 127);
    for (i = 0; i < c.n_b; i++)
      b[i] = (int8_t)rnd_range(-128, 127);
    CHECK(tidsp_add_i8(&p, a, b, y) == TIDSP_OK);
    for (i = 0; i < c.n_out && !bad; i++) {
      int64_t ao, bo;
      int32_t want;
      operand_offsets(&c, i, &ao, &bo);
      want = oracle_add(&p, &c, a[ao], b[bo]);
      if (y[i] != want) {
        CHECK_MSG(0, "add_i8 kind %d rank %d at %lld: got %d want %d", (int)p.kind,
                  (int)c.bc.rank, (long long)i, (int)y[i], (int)want);
        bad = 1;
      }
    }
    CHECK(guards_ok(y, (size_t)c.n_out));
    free(a);
    free(b);
    guarded_free(y);
  }
}

/* Hand-computed: ratios 1 make the float form exact integer arithmetic. */
static void test_add_i8_hand(void) {
  tidsp_add_i8_params p;
  int8_t a[4] = {-128, 0, 100, 127}, b[4] = {0, 5, 100, 127}, y[4];
  memset(&p, 0, sizeof(p));
  p.bc.rank = 1;
  p.bc.shape[0] = 4;
  p.bc.a_stride[0] = 1;
  p.bc.b_stride[0] = 1;
  p.kind = TIDSP_REQUANT_FLOAT;
  p.domain_offset = 128;
  p.ra = 1.0f;
  p.rb = 1.0f;
  p.a_zp = 0; p.b_zp = 0; p.y_zp = 0;
  p.f = 128.0f - (128.0f + 128.0f); /* uint8 zero points: 128 each */
  p.y_min = -128;
  p.y_max = 127;
  CHECK(tidsp_add_i8(&p, a, b, y) == TIDSP_OK);
  CHECK(y[0] == -128 && y[1] == 5 && y[2] == 127 && y[3] == 127);
  /* in place: y aliases a */
  CHECK(tidsp_add_i8(&p, a, b, a) == TIDSP_OK);
  CHECK(a[0] == -128 && a[1] == 5 && a[2] == 127);
  /* Q31: ra = 0.5 makes exact ties, which round to even as in float:
   * 0.5·(a + 128) + f with f = 64 − 0.5·128 − 0·… gives a/2 + 64 − 128. */
  p.kind = TIDSP_REQUANT_Q31;
  p.ra = 0.5f;
  p.rb = 0.0f;
  p.f = 128.0f - 0.5f * 128.0f;
  a[0] = 5; a[1] = -5; a[2] = 7; a[3] = -7;
  CHECK(tidsp_add_i8(&p, a, b, y) == TIDSP_OK);
  CHECK(y[0] == 2 && y[1] == -2 && y[2] == 4 && y[3] == -4);
  /* errors */
  p.y_min = 5;
  p.y_max = 4;
  CHECK(tidsp_add_i8(&p, a, b, y) == TIDSP_ERR_PARAM);
  p.y_min = -128;
  p.y_max = 127;
  p.kind = 9;
  CHECK(tidsp_add_i8(&p, a, b, y) == TIDSP_ERR_PARAM);
  p.kind = TIDSP_REQUANT_FLOAT;
  p.bc.rank = 7;
  CHECK(tidsp_add_i8(&p, a, b, y) == TIDSP_ERR_SHAPE);
  p.bc.rank = 1;
  CHECK(tidsp_add_i8(&p, NULL, b, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_add_i8(NULL, a, b, y) == TIDSP_ERR_NULL);
}

/* ---- QLinearMul ---------------------------------------------------------- */

/* Both kinds compute the same float formula (Q31 with integers only). */
static int32_t oracle_mul(const tidsp_mul_i8_params *p, int32_t a, int32_t b) {
  int32_t prod = (a - p->a_zp) * (b - p->b_zp);
  {
    float t = (float)prod * p->r;
    float v = t + (float)(p->y_zp + p->domain_offset); /* ORT adds the uint8 zero point */
    if (v > 1e9f)
      v = 1e9f;
    if (v < -1e9f)
      v = -1e9f;
    return clamp_i((int64_t)nearbyintf(v), p->y_min + p->domain_offset, p->y_max + p->domain_offset) - p->domain_offset;
  }
}

static void test_mul_i8(void) {
  int iter;
  for (iter = 0; iter < 400; iter++) {
    bcase c;
    tidsp_mul_i8_params p;
    int8_t *a, *b, *y;
    int64_t i;
    int bad = 0;
    random_bcase(&c);
    memset(&p, 0, sizeof(p));
    p.bc = c.bc;
    p.kind = iter & 1 ? TIDSP_REQUANT_FLOAT : TIDSP_REQUANT_Q31;
    p.domain_offset = iter % 4 < 2 ? 128 : 0;
    p.a_zp = rnd_range(-128, 127);
    p.b_zp = rnd_range(-128, 127);
    p.y_zp = rnd_range(-128, 127);
    p.y_min = iter % 5 == 0 ? p.y_zp : -128;
    p.y_max = iter % 7 == 0 ? 100 : 127;
    p.r = ldexpf(rnd_unit() + 0.5f, -rnd_range(6, 10));
    if (iter % 9 == 0)
      p.r = 0.5f; /* exact ties */
    a = malloc((size_t)c.n_a);
    b = malloc((size_t)c.n_b);
    y = guarded((size_t)c.n_out);
    for (i = 0; i < c.n_a; i++)
      a[i] = (int8_t)rnd_range(-128, 127);
    for (i = 0; i < c.n_b; i++)
      b[i] = (int8_t)rnd_range(-128, 127);
    CHECK(tidsp_mul_i8(&p, a, b, y) == TIDSP_OK);
    for (i = 0; i < c.n_out && !bad; i++) {
      int64_t ao, bo;
      int32_t want;
      operand_offsets(&c, i, &ao, &bo);
      want = oracle_mul(&p, a[ao], b[bo]);
      if (y[i] != want) {
        CHECK_MSG(0, "mul_i8 kind %d at %lld: got %d want %d", (int)p.kind, (long long)i,
                  (int)y[i], (int)want);
        bad = 1;
      }
    }
    CHECK(guards_ok(y, (size_t)c.n_out));
    free(a);
    free(b);
    guarded_free(y);
  }
  {
    tidsp_mul_i8_params p;
    int8_t v = 0;
    memset(&p, 0, sizeof(p));
    p.kind = TIDSP_REQUANT_Q31;
    p.y_min = -128;
    p.y_max = 127;
    p.b_zp = 128;
    CHECK(tidsp_mul_i8(&p, &v, &v, &v) == TIDSP_ERR_PARAM);
    p.b_zp = 0;
    CHECK(tidsp_mul_i8(&p, &v, &v, &v) == TIDSP_OK);
    CHECK(tidsp_mul_i8(&p, &v, NULL, &v) == TIDSP_ERR_NULL);
  }
}

/* ---- float binary, LUT, float unary ------------------------------------- */

static void test_binary_f32(void) {
  int iter;
  for (iter = 0; iter < 200; iter++) {
    bcase c;
    tidsp_binary_f32_params p;
    float *a, *b, *y;
    int64_t i;
    int bad = 0;
    random_bcase(&c);
    p.bc = c.bc;
    p.op = iter % 4;
    a = malloc(sizeof(float) * (size_t)c.n_a);
    b = malloc(sizeof(float) * (size_t)c.n_b);
    y = guarded(sizeof(float) * (size_t)c.n_out);
    for (i = 0; i < c.n_a; i++)
      a[i] = rnd_unit() * 4.0f - 2.0f;
    for (i = 0; i < c.n_b; i++)
      b[i] = rnd_unit() * 4.0f + 0.5f;
    CHECK(tidsp_binary_f32(&p, a, b, y) == TIDSP_OK);
    for (i = 0; i < c.n_out && !bad; i++) {
      int64_t ao, bo;
      float want;
      operand_offsets(&c, i, &ao, &bo);
      switch (p.op) {
      case TIDSP_BINARY_ADD: want = a[ao] + b[bo]; break;
      case TIDSP_BINARY_SUB: want = a[ao] - b[bo]; break;
      case TIDSP_BINARY_MUL: want = a[ao] * b[bo]; break;
      default: want = a[ao] / b[bo]; break;
      }
      if (memcmp(&want, &y[i], sizeof(float)) != 0) {
        CHECK_MSG(0, "binary_f32 op %d at %lld: got %g want %g", (int)p.op, (long long)i,
                  y[i], want);
        bad = 1;
      }
    }
    CHECK(guards_ok(y, sizeof(float) * (size_t)c.n_out));
    free(a);
    free(b);
    guarded_free(y);
  }
  {
    tidsp_binary_f32_params p;
    float v = 1.0f;
    memset(&p, 0, sizeof(p));
    p.op = 5; /* one past TIDSP_BINARY_POW */
    CHECK(tidsp_binary_f32(&p, &v, &v, &v) == TIDSP_ERR_PARAM);
    p.op = TIDSP_BINARY_ADD; /* rank 0: one element */
    CHECK(tidsp_binary_f32(&p, &v, &v, &v) == TIDSP_OK && v == 2.0f);
  }
}

/* PRelu: x >= 0 ? x : x·slope with both operands broadcast (the kernel
 * takes any broadcast; ONNX only ever widens the slope), special values
 * bit for bit, in place. */
static void test_prelu_f32(void) {
  static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7fc00001u, 0xffc12345u,
                                      0x7f800000u, 0xff800000u, 0x00000001u, 0x80000001u};
  int iter;
  for (iter = 0; iter < 200; iter++) {
    bcase c;
    float *a, *b, *y;
    int64_t i;
    int bad = 0;
    random_bcase(&c);
    a = malloc(sizeof(float) * (size_t)c.n_a);
    b = malloc(sizeof(float) * (size_t)c.n_b);
    y = guarded(sizeof(float) * (size_t)c.n_out);
    for (i = 0; i < c.n_a; i++)
      a[i] = rnd_unit() * 4.0f - 2.0f;
    for (i = 0; i < c.n_a && i < 8; i++)
      memcpy(&a[i], &specials[(i + iter) % 8], sizeof(float));
    for (i = 0; i < c.n_b; i++)
      b[i] = rnd_unit() * 2.0f - 1.0f;
    CHECK(tidsp_prelu_f32(&c.bc, a, b, y) == TIDSP_OK);
    for (i = 0; i < c.n_out && !bad; i++) {
      int64_t ao, bo;
      float want;
      operand_offsets(&c, i, &ao, &bo);
      want = a[ao] >= 0.0f ? a[ao] : a[ao] * b[bo];
      if (memcmp(&want, &y[i], sizeof(float)) != 0) {
        CHECK_MSG(0, "prelu_f32 at %lld: got %g want %g", (long long)i, y[i], want);
        bad = 1;
      }
    }
    CHECK(guards_ok(y, sizeof(float) * (size_t)c.n_out));
    if (c.n_a == c.n_out) { /* in place */
      float *inplace = malloc(sizeof(float) * (size_t)c.n_out);
      memcpy(inplace, a, sizeof(float) * (size_t)c.n_out);
      CHECK(tidsp_prelu_f32(&c.bc, inplace, b, inplace) == TIDSP_OK);
      CHECK(memcmp(inplace, y, sizeof(float) * (size_t)c.n_out) == 0);
      free(inplace);
    }
    free(a);
    free(b);
    guarded_free(y);
  }
  {
    tidsp_broadcast bc;
    float v = -2.0f, s = 0.25f;
    memset(&bc, 0, sizeof(bc)); /* rank 0: one element */
    CHECK(tidsp_prelu_f32(&bc, &v, &s, &v) == TIDSP_OK && v == -0.5f);
    CHECK(tidsp_prelu_f32(&bc, &v, NULL, &v) == TIDSP_ERR_NULL);
    bc.rank = TIDSP_MAX_RANK + 1;
    CHECK(tidsp_prelu_f32(&bc, &v, &s, &v) == TIDSP_ERR_SHAPE);
  }
}

static void test_lut_i8(void) {
  int8_t lut[256], x[300], y[300], *yg;
  tidsp_lut_params p = {300};
  int i;
  for (i = 0; i < 256; i++)
    lut[i] = (int8_t)(127 - i); /* index 0 is x = −128 */
  for (i = 0; i < 300; i++)
    x[i] = (int8_t)rnd_range(-128, 127);
  yg = guarded(300);
  CHECK(tidsp_lut_i8(&p, lut, x, yg) == TIDSP_OK);
  for (i = 0; i < 300; i++)
    CHECK(yg[i] == (int8_t)(127 - (x[i] + 128)));
  CHECK(guards_ok(yg, 300));
  memcpy(y, x, sizeof(x));
  CHECK(tidsp_lut_i8(&p, lut, y, y) == TIDSP_OK); /* in place */
  CHECK(memcmp(y, yg, 300) == 0);
  guarded_free(yg);
  CHECK(tidsp_lut_i8(&p, NULL, x, y) == TIDSP_ERR_NULL);
  p.n = -1;
  CHECK(tidsp_lut_i8(&p, lut, x, y) == TIDSP_ERR_SHAPE);
}

static void test_unary_f32(void) {
  enum { N = 101 };
  float x[N], *y;
  tidsp_unary_f32_params p;
  int op, i;
  for (i = 0; i < N; i++)
    x[i] = -5.0f + 0.1f * (float)i;
  y = guarded(sizeof(x));
  for (op = 0; op < TIDSP_UNARY_COUNT_; op++) {
    memset(&p, 0, sizeof(p));
    p.n = N;
    p.op = op;
    p.alpha = 0.2f;
    p.beta = 0.5f;
    p.lo = -1.0f;
    p.hi = 2.5f;
    CHECK(tidsp_unary_f32(&p, x, y) == TIDSP_OK);
    for (i = 0; i < N; i++) {
      double v = x[i], want;
      switch (op) {
      case TIDSP_UNARY_RELU: want = v > 0 ? v : 0; break;
      case TIDSP_UNARY_CLIP: want = v < -1.0 ? -1.0 : (v > 2.5 ? 2.5 : v); break;
      case TIDSP_UNARY_SIGMOID: want = 1.0 / (1.0 + exp(-v)); break;
      case TIDSP_UNARY_HARDSIGMOID: want = fmax(0.0, fmin(1.0, 0.2 * v + 0.5)); break;
      case TIDSP_UNARY_HARDSWISH: want = v * fmax(0.0, fmin(1.0, v / 6.0 + 0.5)); break;
      case TIDSP_UNARY_ERF: want = erf(v); break;
      case TIDSP_UNARY_GELU: want = 0.5 * v * (1.0 + erf(v / sqrt(2.0))); break;
      case TIDSP_UNARY_GELU_TANH:
        want = 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
        break;
      case TIDSP_UNARY_SQRT: want = sqrt(v); break;
      case TIDSP_UNARY_NEG: want = -v; break;
      case TIDSP_UNARY_RECIPROCAL: want = 1.0 / (double)x[i]; break;
      case TIDSP_UNARY_TANH: want = tanh(v); break;
      case TIDSP_UNARY_EXP: want = exp(v); break;
      case TIDSP_UNARY_SIN: want = sin(v); break;
      case TIDSP_UNARY_LEAKY_RELU: want = v >= 0 ? v : 0.2 * v; break;
      case TIDSP_UNARY_COS: want = cos(v); break;
      default: /* a row of unary_ops.def without an oracle here */
        CHECK_MSG(0, "unary op %d has no oracle", op);
        want = NAN;
        break;
      }
      if (isnan(want) || isinf(want)) {
        CHECK_MSG(isnan(want) ? isnan(y[i]) : y[i] == (float)want, "unary op %d x %g: got %g want %g", op, v,
                  y[i], want);
        continue;
      }
      CHECK_MSG(fabs(y[i] - want) <= 1e-6 * (fabs(want) + 1.0), "unary op %d x %g: got %g want %g",
                op, v, y[i], want);
    }
    CHECK(guards_ok(y, sizeof(x)));
  }
  guarded_free(y);
  p.op = TIDSP_UNARY_COUNT_; /* one past the last op */
  CHECK(tidsp_unary_f32(&p, x, x) == TIDSP_ERR_PARAM);
  p.op = TIDSP_UNARY_CLIP;
  p.lo = 3.0f;
  p.hi = 1.0f;
  CHECK(tidsp_unary_f32(&p, x, x) == TIDSP_ERR_PARAM);
}

/* ---- binary on any dtype ------------------------------------------------
 * Every op on every dtype it takes (logic on bool, the rest on the integer
 * types and float32), random broadcasting, against an oracle that unravels
 * each output index and computes in the element's own C type. */
static int64_t get_i(const void *p, int32_t dt, int64_t i) {
  switch (dt) {
  case TIDSP_DTYPE_I8: return ((const int8_t *)p)[i];
  case TIDSP_DTYPE_U8: case TIDSP_DTYPE_BOOL: return ((const uint8_t *)p)[i];
  case TIDSP_DTYPE_I16: return ((const int16_t *)p)[i];
  case TIDSP_DTYPE_U16: return ((const uint16_t *)p)[i];
  case TIDSP_DTYPE_I32: return ((const int32_t *)p)[i];
  default: return ((const int64_t *)p)[i];
  }
}

static size_t dt_size(int32_t dt) {
  return dt == TIDSP_DTYPE_I64 ? 8 : dt == TIDSP_DTYPE_I32 || dt == TIDSP_DTYPE_F32 ? 4
         : dt == TIDSP_DTYPE_I16 || dt == TIDSP_DTYPE_U16 ? 2 : 1;
}

static void put_rand(void *p, int32_t dt, int64_t i, int nonzero) {
  int64_t v = (int64_t)(rnd() & 0xFFFFFFFFu) - 0x80000000ll;
  if (dt == TIDSP_DTYPE_I64 && (rnd() & 1)) v = (int64_t)(((uint64_t)rnd() << 32) ^ rnd());
  if (rnd() % 3 == 0) v = (int64_t)(rnd() % 7) - 3; /* small values: equal ones, ±1 */
  switch (dt) {
  case TIDSP_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)(v | (nonzero && !(int8_t)v)); break;
  case TIDSP_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)(v | (nonzero && !(uint8_t)v)); break;
  case TIDSP_DTYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(v & 1); break;
  case TIDSP_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)(v | (nonzero && !(int16_t)v)); break;
  case TIDSP_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)(v | (nonzero && !(uint16_t)v)); break;
  case TIDSP_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)(v | (nonzero && !(int32_t)v)); break;
  case TIDSP_DTYPE_F32: ((float *)p)[i] = rnd() % 3 == 0 ? (float)(v % 5) : rnd_unit() * 8.0f - 4.0f; break;
  default: ((int64_t *)p)[i] = v | (nonzero && !v); break;
  }
}

/* The oracle's result, written into `out` as y's dtype. */
static void oracle_binary(int32_t op, int32_t dt, const void *a, int64_t ao, const void *b, int64_t bo,
                          void *out) {
  if (dt == TIDSP_DTYPE_F32) {
    const float x = ((const float *)a)[ao], z = ((const float *)b)[bo];
    float f = 0.0f;
    uint8_t c = 0;
    switch (op) {
    case TIDSP_BINARY_ADD: f = x + z; break;
    case TIDSP_BINARY_SUB: f = x - z; break;
    case TIDSP_BINARY_MUL: f = x * z; break;
    case TIDSP_BINARY_DIV: f = x / z; break;
    case TIDSP_BINARY_MAX: f = x > z ? x : z; break;
    case TIDSP_BINARY_MIN: f = x < z ? x : z; break;
    case TIDSP_BINARY_EQUAL: c = x == z; break;
    case TIDSP_BINARY_LESS: c = x < z; break;
    case TIDSP_BINARY_LESS_OR_EQUAL: c = x <= z; break;
    case TIDSP_BINARY_GREATER: c = x > z; break;
    default: c = x >= z; break;
    }
    if (op >= TIDSP_BINARY_EQUAL) memcpy(out, &c, 1);
    else memcpy(out, &f, 4);
    return;
  }
  {
    const int64_t x = get_i(a, dt, ao), z = get_i(b, dt, bo);
    int64_t r;
    switch (op) {
    case TIDSP_BINARY_ADD: r = (int64_t)((uint64_t)x + (uint64_t)z); break;
    case TIDSP_BINARY_SUB: r = (int64_t)((uint64_t)x - (uint64_t)z); break;
    case TIDSP_BINARY_MUL: r = (int64_t)((uint64_t)x * (uint64_t)z); break;
    case TIDSP_BINARY_DIV: r = (z == -1) ? (int64_t)(0 - (uint64_t)x) : x / z; break;
    case TIDSP_BINARY_MAX: r = x > z ? x : z; break;
    case TIDSP_BINARY_MIN: r = x < z ? x : z; break;
    case TIDSP_BINARY_EQUAL: r = x == z; break;
    case TIDSP_BINARY_LESS: r = x < z; break;
    case TIDSP_BINARY_LESS_OR_EQUAL: r = x <= z; break;
    case TIDSP_BINARY_GREATER: r = x > z; break;
    case TIDSP_BINARY_GREATER_OR_EQUAL: r = x >= z; break;
    case TIDSP_BINARY_AND: r = x && z; break;
    case TIDSP_BINARY_OR: r = x || z; break;
    default: r = !x != !z; break;
    }
    if (op >= TIDSP_BINARY_EQUAL) {
      uint8_t c = (uint8_t)r;
      memcpy(out, &c, 1);
    } else {
      switch (dt) { /* wrap: the low bytes, little-endian as the host */
      case TIDSP_DTYPE_I8: case TIDSP_DTYPE_U8: { uint8_t v = (uint8_t)r; memcpy(out, &v, 1); break; }
      case TIDSP_DTYPE_I16: case TIDSP_DTYPE_U16: { uint16_t v = (uint16_t)r; memcpy(out, &v, 2); break; }
      case TIDSP_DTYPE_I32: { uint32_t v = (uint32_t)r; memcpy(out, &v, 4); break; }
      default: memcpy(out, &r, 8); break;
      }
    }
  }
}

static void test_binary_any(void) {
  static const int32_t dtypes[] = {TIDSP_DTYPE_I8,  TIDSP_DTYPE_U8,  TIDSP_DTYPE_I16, TIDSP_DTYPE_U16,
                                   TIDSP_DTYPE_I32, TIDSP_DTYPE_I64, TIDSP_DTYPE_F32, TIDSP_DTYPE_BOOL};
  int32_t op, k;
  int iter;
  for (op = TIDSP_BINARY_ADD; op <= TIDSP_BINARY_XOR; op++) {
    if (op == TIDSP_BINARY_POW) continue; /* below, by hand */
    for (k = 0; k < (int32_t)(sizeof dtypes / sizeof dtypes[0]); k++) {
      const int32_t dt = dtypes[k], logic = op >= TIDSP_BINARY_AND;
      const int32_t y_dt = op >= TIDSP_BINARY_EQUAL ? TIDSP_DTYPE_BOOL : dt;
      if (logic != (dt == TIDSP_DTYPE_BOOL)) continue;
      for (iter = 0; iter < 12; iter++) {
        bcase c;
        tidsp_binary_params p;
        uint8_t *a, *b, *y, want[8];
        int64_t i;
        int bad = 0;
        random_bcase(&c);
        memset(&p, 0, sizeof p);
        p.bc = c.bc;
        p.op = op;
        p.a_dtype = p.b_dtype = dt;
        p.y_dtype = y_dt;
        a = malloc(dt_size(dt) * (size_t)c.n_a);
        b = malloc(dt_size(dt) * (size_t)c.n_b);
        y = guarded(dt_size(y_dt) * (size_t)c.n_out);
        for (i = 0; i < c.n_a; i++) put_rand(a, dt, i, 0);
        for (i = 0; i < c.n_b; i++) put_rand(b, dt, i, op == TIDSP_BINARY_DIV);
        CHECK(tidsp_binary(&p, a, b, y) == TIDSP_OK);
        for (i = 0; i < c.n_out && !bad; i++) {
          int64_t ao, bo;
          operand_offsets(&c, i, &ao, &bo);
          oracle_binary(op, dt, a, ao, b, bo, want);
          if (memcmp(want, y + (size_t)i * dt_size(y_dt), dt_size(y_dt)) != 0) {
            CHECK_MSG(0, "binary op %d dtype %d at %lld", (int)op, (int)dt, (long long)i);
            bad = 1;
          }
        }
        CHECK(guards_ok(y, dt_size(y_dt) * (size_t)c.n_out));
        free(a);
        free(b);
        guarded_free(y);
      }
    }
  }
  { /* edges: zero divisor, INT_MIN / −1 wraps, NaN through Max, Pow, bad params, in place */
    tidsp_binary_params p;
    int32_t ia[3] = {7, INT32_MIN, -7}, ib[3] = {2, -1, 2}, iy[3];
    int64_t la = INT64_MIN, lb = -1, ly;
    float fa[2] = {NAN, 1.0f}, fb[2] = {0.0f, NAN}, fy[2];
    memset(&p, 0, sizeof p);
    p.bc.rank = 1;
    p.bc.shape[0] = 3;
    p.bc.a_stride[0] = p.bc.b_stride[0] = 1;
    p.op = TIDSP_BINARY_DIV;
    p.a_dtype = p.b_dtype = p.y_dtype = TIDSP_DTYPE_I32;
    CHECK(tidsp_binary(&p, ia, ib, iy) == TIDSP_OK && iy[0] == 3 && iy[1] == INT32_MIN && iy[2] == -3);
    ib[2] = 0;
    CHECK(tidsp_binary(&p, ia, ib, iy) == TIDSP_ERR_PARAM);
    p.op = TIDSP_BINARY_POW; /* ORT: (int)pow(double, double) */
    ib[0] = 3, ib[1] = 0, ib[2] = 2;
    CHECK(tidsp_binary(&p, ia, ib, iy) == TIDSP_OK && iy[0] == 343 && iy[1] == 1 && iy[2] == 49);
    p.b_dtype = TIDSP_DTYPE_F32; /* int base, float exponent: truncated */
    fy[0] = 0.5f;
    p.bc.shape[0] = 1;
    CHECK(tidsp_binary(&p, ia, fy, iy) == TIDSP_OK && iy[0] == 2); /* (int)sqrt(7) */
    p.bc.shape[0] = 3;
    p.op = TIDSP_BINARY_ADD; /* exponent dtype differs: Pow only */
    CHECK(tidsp_binary(&p, ia, fy, iy) == TIDSP_ERR_DTYPE);
    p.bc.shape[0] = 1;
    p.a_dtype = p.b_dtype = p.y_dtype = TIDSP_DTYPE_I64;
    p.op = TIDSP_BINARY_DIV;
    CHECK(tidsp_binary(&p, &la, &lb, &ly) == TIDSP_OK && ly == INT64_MIN);
    p.bc.shape[0] = 2;
    p.a_dtype = p.b_dtype = p.y_dtype = TIDSP_DTYPE_F32;
    p.op = TIDSP_BINARY_MAX;
    CHECK(tidsp_binary(&p, fa, fb, fy) == TIDSP_OK && isnan(fy[0]) && isnan(fy[1]));
    p.op = TIDSP_BINARY_EQUAL; /* a comparison writes bool */
    CHECK(tidsp_binary(&p, fa, fb, fy) == TIDSP_ERR_DTYPE);
    p.op = TIDSP_BINARY_XOR + 1;
    CHECK(tidsp_binary(&p, fa, fb, fy) == TIDSP_ERR_PARAM);
    p.op = TIDSP_BINARY_MIN;
    p.y_dtype = 99;
    CHECK(tidsp_binary(&p, fa, fb, fy) == TIDSP_ERR_DTYPE);
    p.y_dtype = TIDSP_DTYPE_F32;
    CHECK(tidsp_binary(NULL, fa, fb, fy) == TIDSP_ERR_NULL);
    fa[0] = 3.0f, fb[0] = -2.0f; /* in place */
    CHECK(tidsp_binary(&p, fa, fb, fa) == TIDSP_OK && fa[0] == -2.0f && isnan(fa[1]));
  }
}

/* int8 → int16 in place: y starts where x does, in a block of y's bytes
 * (the planner's in-place table and widening: storage.c); the same values
 * as from separate buffers. */
static void test_lut_i16_and_widen_in_place(void) {
  enum { N = 301 };
  int16_t lut[256], block[N], want[N], wide[N];
  int8_t x[N];
  for (int i = 0; i < 256; i++) lut[i] = (int16_t)(3 * i - 300);
  for (int i = 0; i < N; i++) x[i] = (int8_t)rnd_range(-128, 127);
  tidsp_lut_params p = {N};
  CHECK(tidsp_lut_i16(&p, lut, x, want) == TIDSP_OK);
  for (int i = 0; i < N; i++) CHECK(want[i] == 3 * (x[i] + 128) - 300);
  memcpy(block, x, sizeof x);
  CHECK(tidsp_lut_i16(&p, lut, (const int8_t *)block, block) == TIDSP_OK);
  CHECK(memcmp(block, want, sizeof want) == 0);
  CHECK(tidsp_lut_i16(&p, NULL, x, want) == TIDSP_ERR_NULL);

  tidsp_widen_i16_params w = {1, 7, 43, 0, 7, 43, 0, -9}; /* 7 × 43 = N */
  CHECK(tidsp_widen_i16(&w, x, wide) == TIDSP_OK);
  for (int i = 0; i < N; i++) CHECK(wide[i] == x[i] + 9);
  memcpy(block, x, sizeof x);
  CHECK(tidsp_widen_i16(&w, (const int8_t *)block, block) == TIDSP_OK);
  CHECK(memcmp(block, wide, sizeof wide) == 0);
}

int main(void) {
  test_add_i8_hand();
  test_add_i8_random();
  test_mul_i8();
  test_binary_f32();
  test_binary_any();
  test_prelu_f32();
  test_lut_i8();
  test_lut_i16_and_widen_in_place();
  test_unary_f32();
  UNIT_MAIN_END();
}
