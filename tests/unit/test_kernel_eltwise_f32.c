/*
 * test_kernel_eltwise_f32.c — the host float elementwise kernels
 * (runtime/kernels/host/eltwise_f32__host.c: tidsp_binary_f32,
 * tidsp_prelu_f32 and tidsp_unary_f32 at both vector widths, each called by name so that an
 * AVX-512 machine also runs the AVX2 code; movement__host.c's
 * tidsp_expand__host) against their __ref functions: the same status and
 * the same bytes, with guard bytes around every output.
 *
 * Cases: lengths at, below and above 8 and 16 (ragged tails); every
 * broadcast kind (same shape, scalar either or both sides, SE's [N,C,1,1]
 * against [N,C,H,W] either side, channels-last per-channel, outer
 * broadcast, both broadcast, rank 0), strided rows and Pow (which go to the
 * reference), in place (y == a, y == b, y == x); values with NaN (two
 * payloads, or one where two could meet in an add: rnd_nan_fix), ±0,
 * ±inf, subnormals, huge values, and the points where HardSigmoid /
 * HardSwish / Clip / Relu / LeakyRelu switch branches and where a fused
 * multiply-add would round differently; every unary op of
 * cstatic/unary_ops.def with random attributes; Expand of every rank and
 * element size with broadcast dims anywhere, nearest-Resize repeats;
 * AveragePool (avgpool_f32__host.c) with windows inside the input and
 * with pads or windows past the input (the reference's path), both count
 * modes, strides and dilations; the invalid arguments of each kernel give
 * the reference's status.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x5DEECE66Dull
#include "kernel_test_util.h"

#if TIDSP_HAVE_HOST_X86

typedef int32_t (*bin_fn)(const tidsp_binary_f32_params *, const float *, const float *, float *);
typedef int32_t (*prelu_fn)(const tidsp_broadcast *, const float *, const float *, float *);
typedef int32_t (*un_fn)(const tidsp_unary_f32_params *, const float *, float *);

/* The widths this CPU runs, by name. */
static int n_widths;
static const char *width_name[2];
static bin_fn width_bin[2];
static prelu_fn width_prelu[2];
static un_fn width_un[2];

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Which NaNs the inputs hold (see rnd_nan_fix): 0, each its own payload
 * (quieted); else every NaN input has these bits. */
static uint32_t one_nan;

/* A negative NaN with a payload that is not the default NaN: binary ops'. */
#define PAYLOAD_NAN 0xFFC01234u
/* x86's default NaN, which ∞ − ∞ gives: a sum's (AveragePool's). */
#define DEFAULT_NAN 0xFFC00000u

/* Two NaN inputs whose answer is the C compiler's choice, not the
 * kernel's, are left out: a signalling NaN (under GCC's default
 * -fno-signaling-nans the reference may fold x·1 to x and return it
 * unquieted), and two NaNs of different payloads in one add or other
 * binary op (x86 keeps the first operand's, and the compiler may swap the
 * operands of a commutative op). So a NaN is made quiet, and with one_nan
 * every NaN input is that one NaN: for binary ops PAYLOAD_NAN, where a
 * lost payload still shows; for AveragePool DEFAULT_NAN, because a
 * window's sum is a chain of adds in which ∞ − ∞ (or two huge values
 * overflowing to opposite infinities) makes the default NaN, which a NaN
 * tap of another payload would then meet. (GCC -O3 vectorizes the host
 * kernel's row sums as x + acc where the reference's loop is sum + x: on
 * two payloads they keep different ones, and both are right.) */
static float rnd_nan_fix(float v) {
  uint32_t u;
  if (v == v)
    return v;
  memcpy(&u, &v, sizeof u);
  u = one_nan ? one_nan : (u | 0x00400000u);
  memcpy(&v, &u, sizeof v);
  return v;
}

/* A value of the kinds listed in the header, mostly ordinary. */
static float rnd_value_raw(void) {
  switch (rnd() % 24) {
  case 0:
    return from_bits(0x7FC00000u); /* the default quiet NaN */
  case 1:
    return from_bits(0xFFC01234u); /* a negative NaN with a payload */
  case 2:
    return 0.0f;
  case 3:
    return -0.0f;
  case 4:
    return (rnd() & 1) ? INFINITY : -INFINITY;
  case 5:
    return from_bits(rnd() & 0x807FFFFFu); /* subnormal */
  case 6:
    return (rnd() & 1 ? 1.0f : -1.0f) * 3.0e38f;
  case 7: /* HardSwish / HardSigmoid corners: ±3, ±2.5 */
    return (float)rnd_range(-6, 6) * 0.5f;
  case 8: /* near a corner, a few ulps off */
    return nextafterf((float)rnd_range(-6, 6) * 0.5f, (rnd() & 1) ? 10.0f : -10.0f);
  case 9: /* raw bits: anything */
    return from_bits(rnd());
  default:
    return (rnd_unit() * 2.0f - 1.0f) * (float)(1 << rnd_range(0, 6));
  }
}

static float rnd_value(void) { return rnd_nan_fix(rnd_value_raw()); }

static void fill(float *x, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    x[i] = rnd_value();
}

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static int same_bits(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof(float)) == 0; }

/* ---- binary ---- */

/* A broadcast of output `shape` (rank r) where operand a has a_shape and b
 * has b_shape (each dim equal to the output's or 1), dense operands. */
static void make_bc(tidsp_broadcast *bc, int32_t r, const int32_t *shape, const int32_t *a_shape,
                    const int32_t *b_shape) {
  int32_t d, sa = 1, sb = 1;
  memset(bc, 0, sizeof *bc);
  bc->rank = r;
  for (d = r - 1; d >= 0; d--) {
    bc->shape[d] = shape[d];
    bc->a_stride[d] = a_shape[d] == 1 ? 0 : sa;
    bc->b_stride[d] = b_shape[d] == 1 ? 0 : sb;
    sa *= a_shape[d];
    sb *= b_shape[d];
  }
}

static int64_t numel(int32_t r, const int32_t *s) {
  int64_t n = 1;
  int32_t d;
  for (d = 0; d < r; d++)
    n *= s[d];
  return n;
}

/* The extent of an operand walk (strides ≥ 0). */
static int64_t extent(const tidsp_broadcast *bc, const int32_t *st) {
  int64_t e = 1;
  int32_t d;
  for (d = 0; d < bc->rank; d++)
    e += (int64_t)(bc->shape[d] > 0 ? bc->shape[d] - 1 : 0) * st[d];
  return e;
}

/* PRelu rides along the binary ops as this op code (a is x, b the slope). */
#define OP_PRELU (TIDSP_BINARY_POW + 1)

/* Every width and op on one broadcast; `inplace` 1: y is a, 2: y is b
 * (the caller makes that operand output-shaped). */
static void check_bin(const tidsp_broadcast *bc, int inplace, const char *what) {
  const int64_t ny = numel(bc->rank, bc->shape), na = extent(bc, bc->a_stride), nb = extent(bc, bc->b_stride);
  const size_t ya = (size_t)(ny > 0 ? ny : 1);
  float *a = guarded((size_t)na * sizeof(float)), *b = guarded((size_t)nb * sizeof(float));
  float *a0 = malloc((size_t)na * sizeof(float)), *b0 = malloc((size_t)nb * sizeof(float));
  float *yr = guarded(ya * sizeof(float)), *yf = guarded(ya * sizeof(float));
  tidsp_binary_f32_params p;
  int32_t op, wi;
  fill(a0, (size_t)na);
  fill(b0, (size_t)nb);
  for (op = TIDSP_BINARY_ADD; op <= OP_PRELU; op++) {
    memset(&p, 0, sizeof p);
    p.bc = *bc;
    p.op = op;
    for (wi = 0; wi < n_widths; wi++) {
      int32_t sr, sf;
      float *ar = a, *br = b, *yref = yr, *yfast = yf;
      memcpy(a, a0, (size_t)na * sizeof(float));
      memcpy(b, b0, (size_t)nb * sizeof(float));
      memset(yr, 0x7f, ya * sizeof(float));
      if (inplace == 1)
        yref = a;
      else if (inplace == 2)
        yref = b;
      sr = op == OP_PRELU ? tidsp_prelu_f32__ref(&p.bc, ar, br, yref) : tidsp_binary_f32__ref(&p, ar, br, yref);
      if (inplace)
        memcpy(yr, yref, ya * sizeof(float));
      memcpy(a, a0, (size_t)na * sizeof(float));
      memcpy(b, b0, (size_t)nb * sizeof(float));
      memset(yf, 0x7f, ya * sizeof(float));
      if (inplace == 1)
        yfast = a;
      else if (inplace == 2)
        yfast = b;
      sf = op == OP_PRELU ? width_prelu[wi](&p.bc, a, b, yfast) : width_bin[wi](&p, a, b, yfast);
      if (inplace)
        memcpy(yf, yfast, ya * sizeof(float));
      CHECK_MSG(sr == sf, "%s op %d %s: status %d vs %d", what, op, width_name[wi], sr, sf);
      if (ny > 0 && !same_bits(yr, yf, (size_t)ny)) {
        int64_t i;
        for (i = 0; i < ny && bits(yr[i]) == bits(yf[i]); i++)
          ;
        CHECK_MSG(0, "%s op %d %s: element %ld: %08x vs %08x", what, op, width_name[wi], (long)i, bits(yr[i]),
                  bits(yf[i]));
      }
      CHECK_MSG(guards_ok(yf, ya * sizeof(float)) && guards_ok(a, (size_t)na * sizeof(float)) &&
                    guards_ok(b, (size_t)nb * sizeof(float)),
                "%s op %d %s: guard", what, op, width_name[wi]);
    }
  }
  guarded_free(a);
  guarded_free(b);
  guarded_free(yr);
  guarded_free(yf);
  free(a0);
  free(b0);
}

static void bin_shapes(int32_t r, const int32_t *y, const int32_t *a, const int32_t *b, const char *what) {
  tidsp_broadcast bc;
  make_bc(&bc, r, y, a, b);
  check_bin(&bc, 0, what);
  if (numel(r, a) == numel(r, y))
    check_bin(&bc, 1, what);
  if (numel(r, b) == numel(r, y))
    check_bin(&bc, 2, what);
}

static void test_binary(void) {
  static const int32_t lens[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 160, 1001};
  size_t i;
  int32_t t;
  char what[96];
  for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    const int32_t n = lens[i], one = 1;
    snprintf(what, sizeof what, "flat %d", n);
    bin_shapes(1, &n, &n, &n, what);
    snprintf(what, sizeof what, "scalar b %d", n);
    bin_shapes(1, &n, &n, &one, what);
    snprintf(what, sizeof what, "scalar a %d", n);
    bin_shapes(1, &n, &one, &n, what);
  }
  {
    /* rec's shapes: [1,128,12,160] with a scalar, SE [1,C,1,1] either side */
    const int32_t y[4] = {1, 24, 12, 20}, c[4] = {1, 24, 1, 1}, s[4] = {1, 1, 1, 1};
    bin_shapes(4, y, y, y, "nchw same");
    bin_shapes(4, y, c, y, "SE a");
    bin_shapes(4, y, y, c, "SE b");
    bin_shapes(4, y, s, y, "scalar a rank 4");
    bin_shapes(4, y, y, s, "scalar b rank 4");
  }
  {
    const int32_t y[3] = {5, 7, 19}, c[3] = {1, 1, 19}, o[3] = {5, 1, 1}, m[3] = {1, 7, 1};
    bin_shapes(3, y, y, c, "channels-last");
    bin_shapes(3, y, c, y, "channels-last a");
    bin_shapes(3, y, o, c, "both broadcast");
    bin_shapes(3, y, m, y, "middle broadcast");
    bin_shapes(3, y, c, m, "row × column");
  }
  {
    const int32_t y[2] = {3, 1}, e[2] = {0, 17};
    bin_shapes(2, y, y, y, "column");
    bin_shapes(2, e, e, e, "empty");
    bin_shapes(0, y, y, y, "rank 0");
  }
  for (t = 0; t < 60; t++) { /* random shapes and broadcasts up to rank 5 */
    int32_t r = rnd_range(1, 5), d, y[5], a[5], b[5];
    for (d = 0; d < r; d++) {
      y[d] = rnd_range(1, d == r - 1 ? 40 : 5);
      a[d] = (rnd() % 3 == 0) ? 1 : y[d];
      b[d] = (rnd() % 3 == 0) ? 1 : y[d];
    }
    snprintf(what, sizeof what, "random %d", t);
    bin_shapes(r, y, a, b, what);
  }
  {
    /* strided rows (a transposed view): the reference's path */
    tidsp_broadcast bc;
    const int32_t y[2] = {6, 9};
    make_bc(&bc, 2, y, y, y);
    bc.a_stride[0] = 1;
    bc.a_stride[1] = 6;
    check_bin(&bc, 0, "strided a");
  }
  {
    /* invalid: statuses as the reference's */
    tidsp_binary_f32_params p;
    float v[4] = {1, 2, 3, 4}, w[4];
    int32_t wi;
    memset(&p, 0, sizeof p);
    p.bc.rank = 1;
    p.bc.shape[0] = 4;
    p.bc.a_stride[0] = p.bc.b_stride[0] = 1;
    for (wi = 0; wi < n_widths; wi++) {
      p.op = 99;
      CHECK(width_bin[wi](&p, v, v, w) == tidsp_binary_f32__ref(&p, v, v, w));
      p.op = TIDSP_BINARY_ADD;
      CHECK(width_bin[wi](NULL, v, v, w) == tidsp_binary_f32__ref(NULL, v, v, w));
      CHECK(width_prelu[wi](NULL, v, v, w) == tidsp_prelu_f32__ref(NULL, v, v, w));
      CHECK(width_prelu[wi](&p.bc, v, NULL, w) == tidsp_prelu_f32__ref(&p.bc, v, NULL, w));
      CHECK(width_bin[wi](&p, NULL, v, w) == tidsp_binary_f32__ref(&p, NULL, v, w));
      p.bc.rank = 9;
      CHECK(width_bin[wi](&p, v, v, w) == tidsp_binary_f32__ref(&p, v, v, w));
      p.bc.rank = 1;
      p.bc.shape[0] = -1;
      CHECK(width_bin[wi](&p, v, v, w) == tidsp_binary_f32__ref(&p, v, v, w));
      p.bc.shape[0] = 4;
    }
  }
}

/* ---- unary ---- */

static void check_un(const tidsp_unary_f32_params *p, const float *x0, int inplace, const char *what) {
  const int32_t n = p->n > 0 ? p->n : 0;
  const size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
  float *x = guarded(bytes), *yr = guarded(bytes), *yf = guarded(bytes);
  int32_t wi;
  for (wi = 0; wi < n_widths; wi++) {
    int32_t sr, sf;
    memcpy(x, x0, (size_t)n * sizeof(float));
    memset(yr, 0x7f, bytes);
    if (inplace) {
      sr = tidsp_unary_f32__ref(p, x, x);
      memcpy(yr, x, (size_t)n * sizeof(float));
      memcpy(x, x0, (size_t)n * sizeof(float));
    } else {
      sr = tidsp_unary_f32__ref(p, x, yr);
    }
    memset(yf, 0x7f, bytes);
    if (inplace) {
      sf = width_un[wi](p, x, x);
      memcpy(yf, x, (size_t)n * sizeof(float));
    } else {
      sf = width_un[wi](p, x, yf);
    }
    CHECK_MSG(sr == sf, "%s op %d %s: status %d vs %d", what, p->op, width_name[wi], sr, sf);
    if (!same_bits(yr, yf, (size_t)n)) {
      int32_t i;
      for (i = 0; i < n && memcmp(&yr[i], &yf[i], 4) == 0; i++)
        ;
      CHECK_MSG(0, "%s op %d %s: element %d of x = %08x: %08x vs %08x", what, p->op, width_name[wi], i, bits(x0[i]),
                bits(yr[i]), bits(yf[i]));
    }
    CHECK_MSG(guards_ok(yf, bytes) && guards_ok(x, bytes), "%s op %d %s: guard", what, p->op, width_name[wi]);
  }
  guarded_free(x);
  guarded_free(yr);
  guarded_free(yf);
}

static void test_unary(void) {
  static const int32_t lens[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 33, 100, 2049};
  float *x = malloc(2049 * sizeof(float));
  size_t i;
  int32_t op, t;
  char what[64];
  for (op = 0; op < TIDSP_UNARY_COUNT_; op++) {
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
      tidsp_unary_f32_params p;
      memset(&p, 0, sizeof p);
      p.n = lens[i];
      p.op = op;
      for (t = 0; t < 3; t++) {
        /* attributes: HardSigmoid's defaults, then random ones */
        p.alpha = t == 0 ? 0.2f : rnd_unit() * (t == 1 ? 1.0f : 0.01f);
        p.beta = t == 0 ? 0.5f : rnd_unit();
        p.lo = t == 0 ? 0.0f : -rnd_unit() * 8.0f;
        p.hi = t == 0 ? 6.0f : rnd_unit() * 8.0f;
        fill(x, (size_t)p.n);
        snprintf(what, sizeof what, "n %d attrs %d", p.n, t);
        check_un(&p, x, 0, what);
        check_un(&p, x, 1, what);
      }
    }
  }
  {
    /* Clip with lo > hi or a NaN bound, n < 0, an unknown op, NULLs */
    tidsp_unary_f32_params p;
    float v[3] = {1, 2, 3}, w[3];
    int32_t wi;
    memset(&p, 0, sizeof p);
    p.n = 3;
    p.op = TIDSP_UNARY_CLIP;
    p.lo = 1.0f;
    p.hi = 0.0f;
    for (wi = 0; wi < n_widths; wi++) {
      CHECK(width_un[wi](&p, v, w) == tidsp_unary_f32__ref(&p, v, w));
      p.lo = NAN;
      CHECK(width_un[wi](&p, v, w) == tidsp_unary_f32__ref(&p, v, w));
      p.lo = 0.0f;
      p.op = TIDSP_UNARY_COUNT_;
      CHECK(width_un[wi](&p, v, w) == tidsp_unary_f32__ref(&p, v, w));
      p.op = TIDSP_UNARY_RELU;
      p.n = -1;
      CHECK(width_un[wi](&p, v, w) == tidsp_unary_f32__ref(&p, v, w));
      p.n = 3;
      CHECK(width_un[wi](NULL, v, w) == tidsp_unary_f32__ref(NULL, v, w));
      CHECK(width_un[wi](&p, v, NULL) == tidsp_unary_f32__ref(&p, v, NULL));
      p.op = TIDSP_UNARY_CLIP;
      p.lo = 1.0f;
    }
  }
  free(x);
}

/* ---- expand ---- */

static void check_expand(const tidsp_expand_params *p, const char *what) {
  int64_t ny = 1, nx = 1;
  int32_t d, sr, sf;
  size_t es = p->elem_size > 0 ? (size_t)p->elem_size : 1, i;
  uint8_t *x, *yr, *yf;
  for (d = 0; d < p->rank; d++) {
    ny *= p->shape[d] > 0 ? p->shape[d] : 0;
    nx += (int64_t)(p->shape[d] > 0 ? p->shape[d] - 1 : 0) * (p->in_stride[d] > 0 ? p->in_stride[d] : 0);
  }
  x = guarded((size_t)nx * es);
  yr = guarded((size_t)(ny > 0 ? ny : 1) * es);
  yf = guarded((size_t)(ny > 0 ? ny : 1) * es);
  for (i = 0; i < (size_t)nx * es; i++)
    x[i] = (uint8_t)rnd();
  memset(yr, 0x5a, (size_t)(ny > 0 ? ny : 1) * es);
  memset(yf, 0x5a, (size_t)(ny > 0 ? ny : 1) * es);
  sr = tidsp_expand__ref(p, x, yr);
  sf = tidsp_expand__host(p, x, yf);
  CHECK_MSG(sr == sf, "expand %s: status %d vs %d", what, sr, sf);
  CHECK_MSG(memcmp(yr, yf, (size_t)(ny > 0 ? ny : 1) * es) == 0, "expand %s: bytes differ", what);
  CHECK_MSG(guards_ok(yf, (size_t)(ny > 0 ? ny : 1) * es), "expand %s: guard", what);
  guarded_free(x);
  guarded_free(yr);
  guarded_free(yf);
}

static void test_expand(void) {
  static const int32_t sizes[] = {1, 2, 3, 4, 8, 16};
  tidsp_expand_params p;
  int32_t t, d;
  char what[64];
  {
    /* PP-OCR det's nearest Resize: [1,96,4,2,10,2] from [1,96,4,10] */
    const int32_t shape[6] = {1, 96, 4, 2, 10, 2}, st[6] = {3840, 40, 10, 0, 1, 0};
    memset(&p, 0, sizeof p);
    p.rank = 6;
    memcpy(p.shape, shape, sizeof shape);
    memcpy(p.in_stride, st, sizeof st);
    p.elem_size = 4;
    check_expand(&p, "resize x2");
    p.shape[3] = p.shape[5] = 8;
    check_expand(&p, "resize x8");
    /* int8 (the model's own Resize: one byte repeated 2, 4, 8 times) */
    p.elem_size = 1;
    for (d = 2; d <= 8; d *= 2) {
      p.shape[3] = p.shape[5] = d;
      snprintf(what, sizeof what, "int8 resize x%d", d);
      check_expand(&p, what);
    }
  }
  for (t = 0; t < 400; t++) {
    int32_t s = 1;
    memset(&p, 0, sizeof p);
    p.rank = rnd_range(0, 6);
    p.elem_size = sizes[rnd() % 6];
    for (d = p.rank - 1; d >= 0; d--) {
      p.shape[d] = rnd_range(1, d == p.rank - 1 ? 19 : 4);
      if (rnd() % 3 == 0) {
        p.in_stride[d] = 0;
      } else {
        p.in_stride[d] = s;
        s *= p.shape[d];
      }
    }
    snprintf(what, sizeof what, "random %d (rank %d, %d bytes)", t, p.rank, p.elem_size);
    check_expand(&p, what);
  }
  /* invalid: a zero dim, a negative stride, no element size, rank 7 */
  memset(&p, 0, sizeof p);
  p.rank = 2;
  p.shape[0] = 3;
  p.shape[1] = 0;
  p.elem_size = 4;
  check_expand(&p, "zero dim");
  p.shape[1] = 2;
  p.in_stride[1] = -1;
  check_expand(&p, "negative stride");
  p.in_stride[1] = 1;
  p.elem_size = 0;
  check_expand(&p, "no element size");
  p.elem_size = 4;
  p.rank = 7;
  {
    uint8_t b[64];
    CHECK(tidsp_expand__host(&p, b, b) == tidsp_expand__ref(&p, b, b));
    CHECK(tidsp_expand__host(NULL, b, b) == tidsp_expand__ref(NULL, b, b));
  }
}

/* ---- average pooling ---- */

static void check_avgpool(const tidsp_pool2d_params *p, const char *what) {
  const size_t nx = (size_t)(p->n > 0 ? p->n : 0) * (size_t)(p->c > 0 ? p->c : 0) * (size_t)(p->h_in > 0 ? p->h_in : 0) *
                    (size_t)(p->w_in > 0 ? p->w_in : 0);
  const size_t ny = (size_t)(p->n > 0 ? p->n : 0) * (size_t)(p->c > 0 ? p->c : 0) *
                    (size_t)(p->h_out > 0 ? p->h_out : 0) * (size_t)(p->w_out > 0 ? p->w_out : 0);
  float *x = guarded((nx ? nx : 1) * sizeof(float)), *yr = guarded((ny ? ny : 1) * sizeof(float));
  float *yf = guarded((ny ? ny : 1) * sizeof(float));
  int32_t sr, sf;
  fill(x, nx);
  memset(yr, 0x7f, (ny ? ny : 1) * sizeof(float));
  memset(yf, 0x7f, (ny ? ny : 1) * sizeof(float));
  sr = tidsp_avgpool_f32__ref(p, x, yr);
  sf = tidsp_avgpool_f32__host(p, x, yf);
  CHECK_MSG(sr == sf, "avgpool %s: status %d vs %d", what, sr, sf);
  CHECK_MSG(same_bits(yr, yf, ny), "avgpool %s: bytes differ", what);
  CHECK_MSG(guards_ok(yf, (ny ? ny : 1) * sizeof(float)), "avgpool %s: guard", what);
  guarded_free(x);
  guarded_free(yr);
  guarded_free(yf);
}

static void test_avgpool(void) {
  tidsp_pool2d_params p;
  char what[96];
  int32_t t;
  /* PP-OCR rec's: 3x2 / (3, 2) over [1, 480, 3, 80] */
  memset(&p, 0, sizeof p);
  p.n = 1, p.c = 480, p.h_in = 3, p.w_in = 80, p.h_out = 1, p.w_out = 40;
  p.k_h = 3, p.k_w = 2, p.stride_h = 3, p.stride_w = 2, p.dil_h = p.dil_w = 1;
  check_avgpool(&p, "rec");
  p.count_include_pad = 1;
  check_avgpool(&p, "rec, count_include_pad");
  for (t = 0; t < 300; t++) {
    memset(&p, 0, sizeof p);
    p.n = rnd_range(1, 2), p.c = rnd_range(1, 5);
    p.k_h = rnd_range(1, 4), p.k_w = rnd_range(1, 4);
    p.stride_h = rnd_range(1, 3), p.stride_w = rnd_range(1, 3);
    p.dil_h = rnd_range(1, 2), p.dil_w = rnd_range(1, 2);
    p.h_in = rnd_range(1, 12), p.w_in = rnd_range(1, t % 10 == 0 ? 600 : 40);
    if (t % 3 == 0) { /* pads, some past the input: the reference's path */
      p.pad_top = rnd_range(0, p.k_h - 1), p.pad_left = rnd_range(0, p.k_w - 1);
      p.pad_bottom = rnd_range(0, p.k_h - 1), p.pad_right = rnd_range(0, p.k_w - 1);
    }
    p.count_include_pad = (int32_t)(rnd() & 1);
    p.h_out = (p.h_in + p.pad_top + p.pad_bottom - (p.k_h - 1) * p.dil_h - 1) / p.stride_h + 1;
    p.w_out = (p.w_in + p.pad_left + p.pad_right - (p.k_w - 1) * p.dil_w - 1) / p.stride_w + 1;
    if (p.h_out < 1 || p.w_out < 1)
      continue;
    if (t % 7 == 0)
      p.w_out++; /* ceil mode: the last window past the input */
    snprintf(what, sizeof what, "random %d (%dx%d k%dx%d s%d,%d d%d,%d pads %d,%d,%d,%d)", t, p.h_in, p.w_in, p.k_h,
             p.k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top, p.pad_left, p.pad_bottom, p.pad_right);
    check_avgpool(&p, what);
  }
  /* invalid: no stride, NULLs */
  memset(&p, 0, sizeof p);
  p.n = p.c = 1, p.h_in = p.w_in = 4, p.h_out = p.w_out = 2, p.k_h = p.k_w = 2, p.dil_h = p.dil_w = 1;
  check_avgpool(&p, "stride 0");
  {
    float v[16] = {0}, w[4];
    CHECK(tidsp_avgpool_f32__host(NULL, v, w) == tidsp_avgpool_f32__ref(NULL, v, w));
    p.stride_h = p.stride_w = 2;
    CHECK(tidsp_avgpool_f32__host(&p, NULL, w) == tidsp_avgpool_f32__ref(&p, NULL, w));
  }
}

int main(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    width_name[n_widths] = "avx512";
    width_bin[n_widths] = tidsp_binary_f32__host_avx512;
    width_prelu[n_widths] = tidsp_prelu_f32__host_avx512;
    width_un[n_widths] = tidsp_unary_f32__host_avx512;
    n_widths++;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    width_name[n_widths] = "avx2";
    width_bin[n_widths] = tidsp_binary_f32__host_avx2;
    width_prelu[n_widths] = tidsp_prelu_f32__host_avx2;
    width_un[n_widths] = tidsp_unary_f32__host_avx2;
    n_widths++;
  }
  printf("widths run: %d\n", n_widths);
  one_nan = PAYLOAD_NAN;
  test_binary();
  one_nan = 0;
  test_unary();
  test_expand();
  one_nan = DEFAULT_NAN;
  test_avgpool();
  UNIT_MAIN_END();
}

#else
int main(void) {
  printf("no host x86 kernels here\n");
  return 0;
}
#endif
