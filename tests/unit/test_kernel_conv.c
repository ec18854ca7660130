/*
 * test_kernel_conv.c — conv2d_i8/f32 and matmul_i8/f32 against oracles
 * written differently: convolution through an explicit im2col matrix and
 * int64 / double sums, requantization from the header formulas with other
 * primitives (nearbyintf, division instead of shifts). Random geometry with
 * groups (dense, grouped, depthwise), pads, strides, dilations, zero points,
 * per-channel and per-tensor requant of both kinds, fused-Relu ranges,
 * saturation, int32 wrap-around, tiles wider than the kernel's buffer, and
 * guard bytes around every output.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x2545F4914F6CDD1Dull
#include "kernel_test_util.h"

/* ---- requant oracles (header formulas, other primitives) ---------------- */

/* Q31 is the FLOAT formula with the multiplier mult·2^−shift (exactly a
 * float: mult is a 24-bit significand), computed with integers. */
static int32_t oracle_requant(const tidsp_requant_params *rq, const void *data,
                              int32_t channels, int32_t c, int32_t acc) {
  int32_t ci = rq->per_channel ? c : 0;
  {
    float mult;
    if (rq->kind == TIDSP_REQUANT_FLOAT) {
      mult = ((const float *)data)[ci];
    } else {
      const int32_t *m = (const int32_t *)data;
      int32_t n = rq->per_channel ? channels : 1;
      mult = (float)ldexp((double)m[ci], -m[n + ci]);
    }
    float v = (float)acc * mult;
    float lo = (float)(rq->out_min - rq->out_zp), hi = (float)(rq->out_max - rq->out_zp);
    if (!(v >= lo))
      v = lo;
    if (v > hi)
      v = hi;
    return (int32_t)nearbyintf(v) + rq->out_zp;
  }
}

/* int32 wrap-around like ORT's accumulator, computed through uint32. */
static int32_t wrap32(int64_t v) {
  uint32_t u = (uint32_t)(uint64_t)v;
  return u <= 0x7FFFFFFFu ? (int32_t)u : -(int32_t)(~u) - 1;
}

/* Random requant params and data for `channels` channels. `data` holds
 * 2·channels int32 or channels floats. */
static void random_requant(tidsp_requant_params *rq, void *data, int32_t channels,
                           int32_t taps, int relu) {
  int32_t c;
  /* a multiplier that maps typical |acc| ≈ 74²·sqrt(taps) to ~60 */
  double base = 60.0 / (5476.0 * sqrt((double)taps) + 1.0);
  rq->kind = rnd() & 1 ? TIDSP_REQUANT_FLOAT : TIDSP_REQUANT_Q31;
  rq->per_channel = (int32_t)(rnd() & 1);
  rq->out_zp = rnd_range(-60, 60);
  rq->out_min = relu ? rq->out_zp : -128;
  rq->out_max = 127;
  for (c = 0; c < channels; c++) {
    double m = base * (0.25 + 2.0 * rnd_unit());
    if (rnd() % 16 == 0)
      m *= 50.0; /* saturates */
    if (rq->kind == TIDSP_REQUANT_FLOAT) {
      ((float *)data)[c] = (float)m;
    } else {
      int32_t e;
      double f = frexp(m, &e); /* m = f·2^e, f in [0.5, 1) */
      int32_t *t = (int32_t *)data;
      int32_t n = rq->per_channel ? channels : 1;
      if (c < n) {
        t[c] = (int32_t)(f * 16777216.0); /* a 24-bit significand */
        t[n + c] = 24 - e;
        if (t[n + c] > 62)
          t[n + c] = 62;
        if (t[n + c] < 0)
          t[n + c] = 0;
      }
    }
  }
}

/* ---- conv --------------------------------------------------------------- */

typedef struct conv_case {
  tidsp_conv2d_params p;
  int32_t pad_bottom, pad_right;
} conv_case;

static void random_conv(conv_case *cc, int big) {
  tidsp_conv2d_params *p = &cc->p;
  int32_t kind = rnd_range(0, 2), cpg_in, cpg_out, span_h, span_w;
  memset(cc, 0, sizeof(*cc));
  p->groups = kind == 0 ? 1 : rnd_range(2, 4);
  cpg_in = kind == 2 ? 1 : rnd_range(1, 6);
  cpg_out = kind == 2 ? rnd_range(1, 2) : rnd_range(1, 6);
  p->n = rnd_range(1, 2);
  p->c_in = cpg_in * p->groups;
  p->c_out = cpg_out * p->groups;
  p->k_h = rnd_range(1, 5);
  p->k_w = rnd_range(1, 5);
  p->stride_h = rnd_range(1, 3);
  p->stride_w = rnd_range(1, 3);
  p->dil_h = rnd_range(1, 2);
  p->dil_w = rnd_range(1, 2);
  p->pad_top = rnd_range(0, 3);
  p->pad_left = rnd_range(0, 3);
  cc->pad_bottom = rnd_range(0, 3);
  cc->pad_right = rnd_range(0, 3);
  span_h = p->dil_h * (p->k_h - 1) + 1;
  span_w = p->dil_w * (p->k_w - 1) + 1;
  p->h_in = rnd_range(1, 14);
  p->w_in = big ? rnd_range(1030, 1300) : rnd_range(1, 30);
  if (big) {
    p->c_in = p->groups; /* keep it small */
    p->c_out = p->groups;
  }
  /* enough input that at least one output exists */
  if (p->h_in + p->pad_top + cc->pad_bottom < span_h)
    cc->pad_bottom = span_h - p->h_in - p->pad_top;
  if (p->w_in + p->pad_left + cc->pad_right < span_w)
    cc->pad_right = span_w - p->w_in - p->pad_left;
  p->h_out = (p->h_in + p->pad_top + cc->pad_bottom - span_h) / p->stride_h + 1;
  p->w_out = (p->w_in + p->pad_left + cc->pad_right - span_w) / p->stride_w + 1;
  p->x_zp = rnd_range(-128, 127);
  p->w_zp = rnd() % 3 ? 0 : rnd_range(-128, 127);
}

/* im2col column for output (oh, ow) of group g: [cpg_in·k_h·k_w] values of
 * x, padding read as x_zp. */
static void im2col(const tidsp_conv2d_params *p, const int8_t *x, int32_t n,
                   int32_t g, int32_t oh, int32_t ow, int32_t *col) {
  int32_t cpg_in = p->c_in / p->groups, ci, kh, kw, r = 0;
  for (ci = 0; ci < cpg_in; ci++)
    for (kh = 0; kh < p->k_h; kh++)
      for (kw = 0; kw < p->k_w; kw++) {
        int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
        int32_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;
        int32_t c = g * cpg_in + ci;
        col[r++] = (ih < 0 || ih >= p->h_in || iw < 0 || iw >= p->w_in)
                       ? p->x_zp
                       : x[(((size_t)n * p->c_in + c) * p->h_in + ih) * p->w_in + iw];
      }
}

/* mode 1: bias + acc wraps past INT32_MAX; mode 2: small values and a
 * power-of-two multiplier, so acc·M often lands on an exact .5 tie. */
static int check_conv_i8(const conv_case *cc, int relu, int with_bias, int mode) {
  const tidsp_conv2d_params *p0 = &cc->p;
  tidsp_conv2d_params p = *p0;
  const int32_t cpg_in = p.c_in / p.groups, cpg_out = p.c_out / p.groups;
  const int32_t taps = cpg_in * p.k_h * p.k_w;
  const size_t nx = (size_t)p.n * p.c_in * p.h_in * p.w_in;
  const size_t nw = (size_t)p.c_out * taps;
  const size_t ny = (size_t)p.n * p.c_out * p.h_out * p.w_out;
  int8_t *x = malloc(nx), *w = malloc(nw), *y = guarded(ny);
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)p.c_out), *col = malloc(sizeof(int32_t) * (size_t)taps);
  int32_t *rqd = malloc(sizeof(int32_t) * 2 * (size_t)p.c_out);
  size_t i;
  int32_t n, co, oh, ow, t, bad = 0;

  for (i = 0; i < nx; i++)
    x[i] = (int8_t)(mode == 2 ? p.x_zp / 2 + rnd_range(-2, 2) : rnd_range(-128, 127));
  for (i = 0; i < nw; i++)
    w[i] = (int8_t)(mode == 2 ? p.w_zp / 2 + rnd_range(-2, 2) : rnd_range(-128, 127));
  for (co = 0; co < p.c_out; co++)
    bias[co] = mode == 1 ? INT32_MAX - rnd_range(0, 1000) : rnd_range(-30000, 30000);
  random_requant(&p.rq, rqd, p.c_out, taps, relu);
  if (mode == 1) { /* tiny multiplier: the wrapped sign must survive */
    p.rq.kind = TIDSP_REQUANT_FLOAT;
    p.rq.per_channel = 0;
    ((float *)rqd)[0] = 1e-8f;
  }
  if (mode == 2) {
    p.rq.kind = TIDSP_REQUANT_FLOAT;
    p.rq.per_channel = 0;
    ((float *)rqd)[0] = rnd() & 1 ? 0.5f : 0.25f;
    for (co = 0; co < p.c_out; co++)
      bias[co] = rnd_range(-3, 3);
  }
  if (tidsp_conv2d_i8(&p, x, w, with_bias ? bias : NULL, rqd, y) != TIDSP_OK) {
    CHECK_MSG(0, "conv2d_i8 rejected a valid case");
    bad = 1;
  }
  for (n = 0; n < p.n && !bad; n++)
    for (co = 0; co < p.c_out && !bad; co++)
      for (oh = 0; oh < p.h_out && !bad; oh++)
        for (ow = 0; ow < p.w_out && !bad; ow++) {
          int64_t acc = with_bias ? bias[co] : 0;
          int32_t want, got;
          im2col(&p, x, n, co / cpg_out, oh, ow, col);
          for (t = 0; t < taps; t++)
            acc += (int64_t)(col[t] - p.x_zp) * (w[(size_t)co * taps + t] - p.w_zp);
          want = oracle_requant(&p.rq, rqd, p.c_out, co, wrap32(acc));
          got = y[(((size_t)n * p.c_out + co) * p.h_out + oh) * p.w_out + ow];
          if (got != want) {
            CHECK_MSG(got == want,
                      "conv2d_i8 g%d cin%d cout%d %dx%d k%dx%d s%dx%d d%dx%d pad%d,%d out %dx%d "
                      "rq%d pc%d at n%d co%d oh%d ow%d: got %d want %d",
                      (int)p.groups, (int)p.c_in, (int)p.c_out, (int)p.h_in, (int)p.w_in,
                      (int)p.k_h, (int)p.k_w, (int)p.stride_h, (int)p.stride_w, (int)p.dil_h,
                      (int)p.dil_w, (int)p.pad_top, (int)p.pad_left, (int)p.h_out,
                      (int)p.w_out, (int)p.rq.kind, (int)p.rq.per_channel, (int)n, (int)co,
                      (int)oh, (int)ow, (int)got, (int)want);
            bad = 1;
          }
        }
  if (!bad)
    CHECK(1);
  CHECK(guards_ok(y, ny));
  free(x);
  free(w);
  guarded_free(y);
  free(bias);
  free(col);
  free(rqd);
  return !bad;
}

static void check_conv_f32(const conv_case *cc) {
  tidsp_conv2d_params p = cc->p;
  const int32_t cpg_in = p.c_in / p.groups, cpg_out = p.c_out / p.groups;
  const int32_t taps = cpg_in * p.k_h * p.k_w;
  const size_t nx = (size_t)p.n * p.c_in * p.h_in * p.w_in;
  const size_t nw = (size_t)p.c_out * taps;
  const size_t ny = (size_t)p.n * p.c_out * p.h_out * p.w_out;
  float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
  float *y = guarded(ny * sizeof(float)), *bias = malloc(sizeof(float) * (size_t)p.c_out);
  size_t i;
  int32_t n, co, oh, ow, ci, kh, kw, bad = 0;

  for (i = 0; i < nx; i++)
    x[i] = rnd_unit() * 2.0f - 1.0f;
  for (i = 0; i < nw; i++)
    w[i] = rnd_unit() * 2.0f - 1.0f;
  for (co = 0; co < p.c_out; co++)
    bias[co] = rnd_unit() - 0.5f;
  CHECK(tidsp_conv2d_f32(&p, x, w, bias, NULL, y) == TIDSP_OK);
  for (n = 0; n < p.n && !bad; n++)
    for (co = 0; co < p.c_out && !bad; co++)
      for (oh = 0; oh < p.h_out && !bad; oh++)
        for (ow = 0; ow < p.w_out && !bad; ow++) {
          double sum = bias[co], mag = fabs(bias[co]);
          float got = y[(((size_t)n * p.c_out + co) * p.h_out + oh) * p.w_out + ow];
          for (ci = 0; ci < cpg_in; ci++)
            for (kh = 0; kh < p.k_h; kh++)
              for (kw = 0; kw < p.k_w; kw++) {
                int32_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                int32_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                int32_t c = (co / cpg_out) * cpg_in + ci;
                double xv, wv;
                if (ih < 0 || ih >= p.h_in || iw < 0 || iw >= p.w_in)
                  continue;
                xv = x[(((size_t)n * p.c_in + c) * p.h_in + ih) * p.w_in + iw];
                wv = w[(((size_t)co * cpg_in + ci) * p.k_h + kh) * p.k_w + kw];
                sum += xv * wv;
                mag += fabs(xv * wv);
              }
          if (fabs(got - sum) > 1e-5 * (mag + 1.0)) {
            CHECK_MSG(0, "conv2d_f32 at n%d co%d oh%d ow%d: got %g want %g", (int)n,
                      (int)co, (int)oh, (int)ow, got, sum);
            bad = 1;
          }
        }
  CHECK(guards_ok(y, ny * sizeof(float)));
  free(x);
  free(w);
  guarded_free(y);
  free(bias);
}

static void test_conv_random(void) {
  int i;
  for (i = 0; i < 300; i++) {
    conv_case cc;
    random_conv(&cc, 0);
    if (!check_conv_i8(&cc, rnd() % 4 == 0, rnd() % 5 != 0, 0))
      break;
    check_conv_f32(&cc);
  }
  /* rows wider than the kernel's 1024-element tile; long strided runs */
  for (i = 0; i < 8; i++) {
    conv_case cc;
    random_conv(&cc, 1);
    check_conv_i8(&cc, 0, 1, 0);
    check_conv_f32(&cc);
  }
  /* bias + acc wraps past INT32_MAX as ORT's int32 accumulator does */
  for (i = 0; i < 10; i++) {
    conv_case cc;
    random_conv(&cc, 0);
    check_conv_i8(&cc, 0, 1, 1);
  }
  /* exact ties round to even */
  for (i = 0; i < 60; i++) {
    conv_case cc;
    random_conv(&cc, 0);
    check_conv_i8(&cc, 0, 1, 2);
  }
}

/* A 3×3 same convolution on a 6×6 plane, all ones, hand-counted: corners
 * see 4 taps, edges 6, the interior 9. */
static void test_conv_hand(void) {
  tidsp_conv2d_params p;
  int8_t x[36], w[9], y[36];
  float one = 1.0f;
  int i;
  memset(&p, 0, sizeof(p));
  p.n = 1; p.c_in = 1; p.h_in = 6; p.w_in = 6; p.c_out = 1; p.h_out = 6; p.w_out = 6;
  p.k_h = 3; p.k_w = 3; p.stride_h = 1; p.stride_w = 1; p.dil_h = 1; p.dil_w = 1;
  p.pad_top = 1; p.pad_left = 1; p.groups = 1; p.x_zp = -3; p.w_zp = 0;
  p.rq.kind = TIDSP_REQUANT_FLOAT; p.rq.out_zp = 0; p.rq.out_min = -128; p.rq.out_max = 127;
  for (i = 0; i < 36; i++)
    x[i] = -2; /* x − x_zp = 1 */
  for (i = 0; i < 9; i++)
    w[i] = 1;
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &one, y) == TIDSP_OK);
  CHECK(y[0] == 4 && y[5] == 4 && y[30] == 4 && y[35] == 4);
  CHECK(y[1] == 6 && y[6] == 6 && y[11] == 6 && y[34] == 6);
  CHECK(y[7] == 9 && y[14] == 9 && y[28] == 9);
}

static void test_conv_errors(void) {
  tidsp_conv2d_params p;
  int8_t x[64] = {0}, w[64] = {0}, y[64];
  float m = 1.0f;
  int32_t q31[2] = {1 << 30, 63};
  memset(&p, 0, sizeof(p));
  p.n = 1; p.c_in = 2; p.h_in = 4; p.w_in = 4; p.c_out = 2; p.h_out = 4; p.w_out = 4;
  p.k_h = 1; p.k_w = 1; p.stride_h = 1; p.stride_w = 1; p.dil_h = 1; p.dil_w = 1;
  p.groups = 1;
  p.rq.kind = TIDSP_REQUANT_FLOAT; p.rq.out_min = -128; p.rq.out_max = 127;
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &m, y) == TIDSP_OK);
  CHECK(tidsp_conv2d_i8(NULL, x, w, NULL, &m, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_conv2d_i8(&p, NULL, w, NULL, &m, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, NULL, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_conv2d_f32(&p, NULL, NULL, NULL, NULL, NULL) == TIDSP_ERR_NULL);
  p.groups = 3; /* does not divide 2 */
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &m, y) == TIDSP_ERR_SHAPE);
  p.groups = 1;
  p.stride_w = 0;
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &m, y) == TIDSP_ERR_PARAM);
  p.stride_w = 1;
  p.x_zp = 300;
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &m, y) == TIDSP_ERR_PARAM);
  p.x_zp = 0;
  p.rq.out_max = 200; /* beyond int8 */
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &m, y) == TIDSP_ERR_PARAM);
  p.rq.out_max = 127;
  p.rq.kind = TIDSP_REQUANT_Q31; /* shift 63 */
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, q31, y) == TIDSP_ERR_PARAM);
  p.rq.kind = 5;
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &m, y) == TIDSP_ERR_PARAM);
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.c_in = 33026; /* more products than an int32 sum holds exactly */
  p.c_out = 1;
  p.h_in = p.w_in = p.h_out = p.w_out = 1;
  CHECK(tidsp_conv2d_i8(&p, x, w, NULL, &m, y) == TIDSP_ERR_SHAPE);
}

/* ---- matmul ------------------------------------------------------------- */

static void test_matmul_i8(void) {
  int iter;
  for (iter = 0; iter < 120; iter++) {
    tidsp_matmul_params p;
    int32_t big = iter % 40 == 39; /* k beyond the int32-exact bound */
    int32_t m = rnd_range(1, 9), k = big ? 40000 : rnd_range(1, 200), n = rnd_range(1, 17);
    int8_t *x = malloc((size_t)m * k), *w = malloc((size_t)n * k), *y = guarded((size_t)m * n);
    int32_t *bias = malloc(sizeof(int32_t) * (size_t)n), *rqd = malloc(sizeof(int32_t) * 2 * (size_t)n);
    int32_t i, j, kk, bad = 0, with_bias = iter % 3 != 0;
    for (i = 0; i < m * k; i++)
      x[i] = (int8_t)rnd_range(-128, 127);
    for (i = 0; i < n * k; i++)
      w[i] = (int8_t)rnd_range(-128, 127);
    for (j = 0; j < n; j++)
      bias[j] = iter % 7 == 0 ? INT32_MIN + rnd_range(0, 100) : rnd_range(-30000, 30000);
    memset(&p, 0, sizeof(p)); /* dense W rows (w_row_stride 0) */
    p.m = m; p.k = k; p.n = n;
    p.x_zp = rnd_range(-128, 127);
    p.w_zp = iter % 2 ? 0 : rnd_range(-128, 127);
    random_requant(&p.rq, rqd, n, k, iter % 5 == 0);
    CHECK(tidsp_matmul_i8(&p, x, w, with_bias ? bias : NULL, rqd, y) == TIDSP_OK);
    for (i = 0; i < m && !bad; i++)
      for (j = 0; j < n && !bad; j++) {
        int64_t acc = with_bias ? bias[j] : 0;
        int32_t want;
        for (kk = 0; kk < k; kk++)
          acc += (int64_t)(x[i * k + kk] - p.x_zp) * (w[j * k + kk] - p.w_zp);
        want = oracle_requant(&p.rq, rqd, n, j, wrap32(acc));
        if (y[i * n + j] != want) {
          CHECK_MSG(0, "matmul_i8 %dx%dx%d at %d,%d: got %d want %d", (int)m, (int)k, (int)n,
                    (int)i, (int)j, (int)y[i * n + j], (int)want);
          bad = 1;
        }
      }
    CHECK(guards_ok(y, (size_t)m * n));
    free(x);
    free(w);
    guarded_free(y);
    free(bias);
    free(rqd);
  }
  {
    tidsp_matmul_params p;
    int8_t v = 0;
    float m = 1.0f;
    memset(&p, 0, sizeof(p)); /* n = 0: no output columns */
    p.m = 1;
    p.k = 1;
    p.rq.kind = TIDSP_REQUANT_FLOAT;
    p.rq.out_min = -128;
    p.rq.out_max = 127;
    CHECK(tidsp_matmul_i8(&p, &v, &v, NULL, &m, &v) == TIDSP_ERR_SHAPE);
    p.n = 1;
    CHECK(tidsp_matmul_i8(&p, &v, NULL, NULL, &m, &v) == TIDSP_ERR_NULL);
    p.w_zp = -129;
    CHECK(tidsp_matmul_i8(&p, &v, &v, NULL, &m, &v) == TIDSP_ERR_PARAM);
  }
}

static void test_matmul_f32(void) {
  int iter;
  for (iter = 0; iter < 60; iter++) {
    tidsp_matmul_f32_params p;
    int32_t i, j, kk, bt, bad = 0;
    float *a, *b, *y, *bias;
    size_t na, nb, ny;
    p.batch = rnd_range(1, 3);
    p.m = rnd_range(1, 7);
    p.k = rnd_range(1, 20);
    p.n = rnd_range(1, 9);
    p.a_batch_stride = iter % 3 == 1 ? 0 : p.m * p.k; /* 0: broadcast */
    p.b_batch_stride = iter % 3 == 2 ? 0 : p.k * p.n;
    na = (size_t)p.batch * p.m * p.k;
    nb = (size_t)p.batch * p.k * p.n;
    ny = (size_t)p.batch * p.m * p.n;
    a = malloc(na * sizeof(float));
    b = malloc(nb * sizeof(float));
    bias = malloc((size_t)p.n * sizeof(float));
    y = guarded(ny * sizeof(float));
    for (i = 0; i < (int32_t)na; i++)
      a[i] = rnd_unit() - 0.5f;
    for (i = 0; i < (int32_t)nb; i++)
      b[i] = rnd_unit() - 0.5f;
    for (j = 0; j < p.n; j++)
      bias[j] = rnd_unit();
    CHECK(tidsp_matmul_f32(&p, a, b, iter % 2 ? bias : NULL, y) == TIDSP_OK);
    for (bt = 0; bt < p.batch; bt++)
      for (i = 0; i < p.m; i++)
        for (j = 0; j < p.n; j++) {
          double s = iter % 2 ? bias[j] : 0.0;
          for (kk = 0; kk < p.k; kk++)
            s += (double)a[(size_t)bt * p.a_batch_stride + (size_t)i * p.k + kk] *
                 b[(size_t)bt * p.b_batch_stride + (size_t)kk * p.n + j];
          if (fabs(s - y[((size_t)bt * p.m + i) * p.n + j]) > 1e-5 * (p.k + 1))
            bad = 1;
        }
    CHECK_MSG(!bad, "matmul_f32 batch %d %dx%dx%d", (int)p.batch, (int)p.m, (int)p.k, (int)p.n);
    CHECK(guards_ok(y, ny * sizeof(float)));
    free(a);
    free(b);
    free(bias);
    guarded_free(y);
  }
}

int main(void) {
  test_conv_hand();
  test_conv_random();
  test_conv_errors();
  test_matmul_i8();
  test_matmul_f32();
  UNIT_MAIN_END();
}
