/*
 * test_kernel_requant_scale_shift.c — TIDSP_REQUANT_SCALE_SHIFT (MMALIB's
 * requantization, kernels.h) in tidsp_conv2d_i8__ref / tidsp_matmul_i8__ref,
 * and in the dispatched tidsp_conv2d_i8 / tidsp_matmul_i8 that must return
 * the same bytes. The oracle is the header formula with other primitives:
 * floor((acc·scale + 2^(shift−1)) / 2^shift) by 128-bit division and a
 * remainder correction instead of an arithmetic shift; the accumulator by
 * an explicit im2col sum in int64, wrapped to int32 through uint32.
 * Hand cases pin the rounding (half toward +∞ on both signs), shift 0 and
 * 31, scale 0 and 255, NULL scale / shift, per_channel 0, the fused-Relu
 * range, and the refusals (out_zp ≠ 0, a shift of 32, also where only
 * per_channel decides whether it is read).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x7F4A7C159E3779B9ull
#include "kernel_test_util.h"

__extension__ typedef __int128 i128;

/* ---- oracle --------------------------------------------------------------- */

static int32_t oracle_scale_shift(int32_t acc, int32_t scale, int32_t shift,
                                  int32_t lo, int32_t hi) {
  i128 v = (i128)acc * scale, d = (i128)1 << shift;
  i128 q = v / d, r = v % d; /* C division truncates toward 0 */
  if (r < 0) {
    q -= 1;
    r += d;
  }
  if (shift > 0 && 2 * r >= d) /* the fraction is ≥ 1/2: round up */
    q += 1;
  return q < lo ? lo : (q > hi ? hi : (int32_t)q);
}

static int32_t oracle_rq(const tidsp_requant_params *rq, const tidsp_scale_shift *ss,
                         int32_t c, int32_t acc) {
  int32_t ci = rq->per_channel ? c : 0;
  return oracle_scale_shift(acc, ss->scale ? ss->scale[ci] : 1, ss->shift ? ss->shift[ci] : 0,
                            rq->out_min, rq->out_max);
}

static int32_t wrap32(int64_t v) {
  uint32_t u = (uint32_t)(uint64_t)v;
  return u <= 0x7FFFFFFFu ? (int32_t)u : -(int32_t)(~u) - 1;
}

static void set_rq(tidsp_requant_params *rq, int32_t per_channel, int32_t lo, int32_t hi) {
  rq->kind = TIDSP_REQUANT_SCALE_SHIFT;
  rq->per_channel = per_channel;
  rq->out_zp = 0;
  rq->out_min = lo;
  rq->out_max = hi;
}

/* ---- by hand: one 1×1×1 product plus a bias is the accumulator ------------ */

typedef int32_t (*matmul_fn)(const tidsp_matmul_params *, const int8_t *, const int8_t *,
                             const int32_t *, const void *, int8_t *);

/* The requantized v through a 1×1 matmul, or 99 when the call fails. */
static int32_t mm1(matmul_fn f, int32_t v, const uint8_t *scale, const uint8_t *shift) {
  tidsp_matmul_params p;
  tidsp_scale_shift ss;
  /* acc = x·1 + bias = v; x = −1 where v − 1 would overflow */
  int8_t x = v > INT32_MIN ? 1 : -1, one = 1, y = 0;
  int32_t bias = v - x;
  memset(&p, 0, sizeof(p));
  p.m = p.k = p.n = 1;
  set_rq(&p.rq, 1, -128, 127);
  ss.scale = scale;
  ss.shift = shift;
  return f(&p, &x, &one, &bias, &ss, &y) == TIDSP_OK ? y : 99;
}

static int32_t mm1_ss(matmul_fn f, int32_t v, uint8_t scale, uint8_t shift) {
  return mm1(f, v, &scale, &shift);
}

static void test_by_hand(matmul_fn f) {
  /* half toward +∞ */
  CHECK(mm1_ss(f, 5, 1, 1) == 3);   /* 2.5 → 3 */
  CHECK(mm1_ss(f, -5, 1, 1) == -2); /* −2.5 → −2 */
  CHECK(mm1_ss(f, 3, 1, 1) == 2);   /* 1.5 → 2 */
  CHECK(mm1_ss(f, -3, 1, 1) == -1); /* −1.5 → −1 */
  CHECK(mm1_ss(f, -7, 1, 2) == -2); /* −1.75 → −2 */
  CHECK(mm1_ss(f, -6, 1, 2) == -1); /* −1.5 → −1 */
  CHECK(mm1_ss(f, -9, 1, 2) == -2); /* −2.25 → −2 */
  CHECK(mm1_ss(f, 11, 3, 3) == 4);  /* 33/8 = 4.125 → 4 */
  CHECK(mm1_ss(f, -11, 3, 3) == -4);
  /* shift 0: exact, then saturated */
  CHECK(mm1_ss(f, 7, 3, 0) == 21);
  CHECK(mm1_ss(f, -42, 3, 0) == -126);
  CHECK(mm1_ss(f, 43, 3, 0) == 127);
  CHECK(mm1_ss(f, -43, 3, 0) == -128);
  /* shift 31 */
  CHECK(mm1_ss(f, 0x40000000, 1, 31) == 1);  /* 0.5 → 1 */
  CHECK(mm1_ss(f, -0x40000000, 1, 31) == 0); /* −0.5 → 0 */
  CHECK(mm1_ss(f, -0x40000001, 1, 31) == -1);
  CHECK(mm1_ss(f, INT32_MAX, 255, 31) == 127); /* 254.99… → 127 */
  CHECK(mm1_ss(f, INT32_MIN, 255, 31) == -128);
  CHECK(mm1_ss(f, INT32_MIN + 1, 1, 31) == -1);
  /* scale 0 and 255 */
  CHECK(mm1_ss(f, 1000, 0, 5) == 0);
  CHECK(mm1_ss(f, -1000, 0, 0) == 0);
  CHECK(mm1_ss(f, 255, 255, 9) == 127);  /* 65025/512 = 127.00… */
  CHECK(mm1_ss(f, -257, 255, 9) == -128); /* −127.998… */
  CHECK(mm1_ss(f, 100, 255, 8) == 100);  /* 25500/256 = 99.6 → 100 */
  /* NULL arrays: scale 1, shift 0 */
  {
    uint8_t sh = 2, sc = 3;
    CHECK(mm1(f, 10, NULL, &sh) == 3);  /* 10/4 = 2.5 → 3 */
    CHECK(mm1(f, 10, &sc, NULL) == 30); /* 30 exactly */
    CHECK(mm1(f, -100, NULL, NULL) == -100);
    CHECK(mm1(f, 300, NULL, NULL) == 127);
  }
  /* refusals */
  CHECK(mm1_ss(f, 5, 1, 32) == 99);
  CHECK(mm1_ss(f, 5, 1, 255) == 99);
}

/* per_channel, the Relu range and the parameter refusals on a 1×4×3 matmul. */
static void test_channels_and_errors(matmul_fn f) {
  tidsp_matmul_params p;
  tidsp_scale_shift ss;
  int8_t x[4] = {1, 2, 3, 4}, w[12] = {1, 0, 0, 0, 0, 1, 0, 0, -5, -5, -5, -5}, y[3];
  int32_t bias[3] = {0, 10, 0};
  uint8_t scale[3] = {3, 5, 1}, shift[3] = {1, 0, 32};
  /* accumulators: 1, 12, −50 */
  memset(&p, 0, sizeof(p));
  p.m = 1;
  p.k = 4;
  p.n = 3;
  set_rq(&p.rq, 0, -128, 127);
  ss.scale = scale;
  ss.shift = shift;
  /* per_channel 0: scale[0]/shift[0] for all; shift[2] = 32 is never read */
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_OK);
  CHECK(y[0] == 2 && y[1] == 18 && y[2] == -75); /* 1.5 → 2, 36/2, −150/2 */
  /* per channel: now shift[2] = 32 is read and refused, nothing written */
  p.rq.per_channel = 1;
  memset(y, 0x5A, sizeof(y));
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_ERR_PARAM);
  CHECK(y[0] == 0x5A && y[1] == 0x5A && y[2] == 0x5A);
  shift[2] = 31;
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_OK);
  CHECK(y[0] == 2 && y[1] == 60 && y[2] == 0); /* 3/2 → 2, 60, −50/2^31 → 0 */
  /* a fused Relu: out_min 0 */
  shift[2] = 0;
  set_rq(&p.rq, 1, 0, 127);
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_OK);
  CHECK(y[0] == 2 && y[1] == 60 && y[2] == 0);
  /* MMALIB folds the output zero point into the bias: out_zp ≠ 0 refused */
  set_rq(&p.rq, 1, -128, 127);
  p.rq.out_zp = 3;
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_ERR_PARAM);
  p.rq.out_zp = -1;
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_ERR_PARAM);
  p.rq.out_zp = 0;
  p.rq.out_max = 128; /* beyond int8 */
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_ERR_PARAM);
  p.rq.out_max = 127;
  CHECK(f(&p, x, w, bias, NULL, y) == TIDSP_ERR_NULL);
  CHECK(f(&p, x, w, bias, &ss, y) == TIDSP_OK);
}

/* tidsp_requant_one on the same kind. */
static void test_requant_one(void) {
  tidsp_requant_params rq;
  tidsp_scale_shift ss;
  uint8_t scale[2] = {200, 7}, shift[2] = {10, 32};
  int32_t i;
  set_rq(&rq, 1, -128, 127);
  ss.scale = scale;
  ss.shift = shift;
  for (i = 0; i < 200; i++) {
    int32_t acc = (int32_t)(rnd() % 4001) - 2000;
    CHECK(tidsp_requant_one(&rq, &ss, 2, 0, acc) == oracle_scale_shift(acc, 200, 10, -128, 127));
  }
  CHECK(tidsp_requant_one(&rq, &ss, 2, 1, 5) == 0); /* shift 32: invalid → 0 */
  rq.out_zp = 1;
  CHECK(tidsp_requant_one(&rq, &ss, 2, 0, 1024) == 0);
}

/* ---- random conv and matmul: __ref and the dispatched name, same bytes ------ */

typedef int32_t (*conv_fn)(const tidsp_conv2d_params *, const int8_t *, const int8_t *,
                           const int32_t *, const void *, int8_t *);

/* Scales over [0, 255] and shifts that map a typical |acc| ≈ 74²·√taps to
 * tens of LSB, with shift 0 and 31 now and then (saturation, all zeros). */
static void random_scale_shift(uint8_t *scale, uint8_t *shift, int32_t n, int32_t taps) {
  int32_t c, base = (int32_t)floor(log2(5476.0 * sqrt((double)taps) * 128.0 / 60.0));
  for (c = 0; c < n; c++) {
    int32_t sh = rnd_range(base - 3, base + 3);
    scale[c] = (uint8_t)(rnd() % 8 == 0 ? (rnd() & 1 ? 0 : 255) : rnd_range(1, 255));
    if (rnd() % 8 == 0)
      sh = rnd() & 1 ? 0 : 31;
    shift[c] = (uint8_t)(sh < 0 ? 0 : (sh > 31 ? 31 : sh));
  }
}

static void test_conv_random(void) {
  static const conv_fn fns[2] = {tidsp_conv2d_i8__ref, tidsp_conv2d_i8};
  int iter, bad_total = 0;
  for (iter = 0; iter < 150; iter++) {
    tidsp_conv2d_params p;
    tidsp_scale_shift ss;
    int32_t kind = iter % 3, cpg_in, cpg_out, taps, pb, pr, span_h, span_w, f;
    int8_t *x, *w, *y[2];
    int32_t *bias, *col;
    uint8_t *scale, *shift;
    size_t nx, nw, ny, i;
    int32_t n, co, oh, ow, t, bad = 0, with_bias = iter % 5 != 0, relu = iter % 4 == 0;
    memset(&p, 0, sizeof(p));
    p.groups = kind == 0 ? 1 : rnd_range(2, 4);
    cpg_in = kind == 2 ? 1 : rnd_range(1, 8);
    cpg_out = kind == 2 ? rnd_range(1, 2) : rnd_range(1, 8);
    p.n = rnd_range(1, 2);
    p.c_in = cpg_in * p.groups;
    p.c_out = cpg_out * p.groups;
    p.k_h = rnd_range(1, 5);
    p.k_w = rnd_range(1, 5);
    p.stride_h = rnd_range(1, 3);
    p.stride_w = rnd_range(1, 3);
    p.dil_h = rnd_range(1, 2);
    p.dil_w = rnd_range(1, 2);
    p.pad_top = rnd_range(0, 3);
    p.pad_left = rnd_range(0, 3);
    pb = rnd_range(0, 3);
    pr = rnd_range(0, 3);
    span_h = p.dil_h * (p.k_h - 1) + 1;
    span_w = p.dil_w * (p.k_w - 1) + 1;
    p.h_in = rnd_range(1, 14);
    p.w_in = rnd_range(1, 40);
    if (p.h_in + p.pad_top + pb < span_h)
      pb = span_h - p.h_in - p.pad_top;
    if (p.w_in + p.pad_left + pr < span_w)
      pr = span_w - p.w_in - p.pad_left;
    p.h_out = (p.h_in + p.pad_top + pb - span_h) / p.stride_h + 1;
    p.w_out = (p.w_in + p.pad_left + pr - span_w) / p.stride_w + 1;
    /* MMALIB's own use has zero points 0; the kind allows any */
    p.x_zp = iter % 2 ? 0 : rnd_range(-128, 127);
    p.w_zp = iter % 3 ? 0 : rnd_range(-128, 127);
    set_rq(&p.rq, rnd() % 4 != 0, relu ? 0 : -128, 127);
    taps = cpg_in * p.k_h * p.k_w;
    nx = (size_t)p.n * p.c_in * p.h_in * p.w_in;
    nw = (size_t)p.c_out * taps;
    ny = (size_t)p.n * p.c_out * p.h_out * p.w_out;
    x = malloc(nx);
    w = malloc(nw);
    y[0] = guarded(ny);
    y[1] = guarded(ny);
    bias = malloc(sizeof(int32_t) * (size_t)p.c_out);
    col = malloc(sizeof(int32_t) * (size_t)taps);
    scale = malloc((size_t)p.c_out);
    shift = malloc((size_t)p.c_out);
    for (i = 0; i < nx; i++)
      x[i] = (int8_t)rnd_range(-128, 127);
    for (i = 0; i < nw; i++)
      w[i] = (int8_t)rnd_range(-128, 127);
    for (co = 0; co < p.c_out; co++) /* every 10th case wraps past INT32_MAX */
      bias[co] = iter % 10 == 9 ? INT32_MAX - rnd_range(0, 1000) : rnd_range(-50000, 50000);
    random_scale_shift(scale, shift, p.c_out, taps);
    ss.scale = iter % 11 == 3 ? NULL : scale;
    ss.shift = iter % 13 == 4 ? NULL : shift;
    for (f = 0; f < 2; f++)
      CHECK_MSG(fns[f](&p, x, w, with_bias ? bias : NULL, &ss, y[f]) == TIDSP_OK,
                "conv %d (%s) refused", iter, f ? "dispatched" : "ref");
    for (n = 0; n < p.n && !bad; n++)
      for (co = 0; co < p.c_out && !bad; co++)
        for (oh = 0; oh < p.h_out && !bad; oh++)
          for (ow = 0; ow < p.w_out && !bad; ow++) {
            int32_t g = co / cpg_out, ci, kh, kw, want;
            int64_t acc = with_bias ? bias[co] : 0;
            size_t at = (((size_t)n * p.c_out + co) * p.h_out + oh) * p.w_out + ow;
            t = 0;
            for (ci = 0; ci < cpg_in; ci++)
              for (kh = 0; kh < p.k_h; kh++)
                for (kw = 0; kw < p.k_w; kw++) {
                  int32_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                  int32_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                  col[t++] = ih < 0 || ih >= p.h_in || iw < 0 || iw >= p.w_in
                                 ? p.x_zp
                                 : x[(((size_t)n * p.c_in + g * cpg_in + ci) * p.h_in + ih) *
                                         p.w_in + iw];
                }
            for (t = 0; t < taps; t++)
              acc += (int64_t)(col[t] - p.x_zp) * (w[(size_t)co * taps + t] - p.w_zp);
            want = oracle_rq(&p.rq, &ss, co, wrap32(acc));
            for (f = 0; f < 2; f++) {
              if (y[f][at] != want) {
                CHECK_MSG(0,
                          "conv %d (%s) g%d cin%d cout%d %dx%d k%dx%d s%dx%d d%dx%d "
                          "at n%d co%d oh%d ow%d: got %d want %d",
                          iter, f ? "dispatched" : "ref", (int)p.groups, (int)p.c_in,
                          (int)p.c_out, (int)p.h_in, (int)p.w_in, (int)p.k_h, (int)p.k_w,
                          (int)p.stride_h, (int)p.stride_w, (int)p.dil_h, (int)p.dil_w, (int)n,
                          (int)co, (int)oh, (int)ow, (int)y[f][at], (int)want);
                bad = 1;
              }
            }
          }
    bad_total += bad;
    CHECK(guards_ok(y[0], ny) && guards_ok(y[1], ny));
    free(x);
    free(w);
    guarded_free(y[0]);
    guarded_free(y[1]);
    free(bias);
    free(col);
    free(scale);
    free(shift);
  }
  CHECK_MSG(bad_total == 0, "%d random conv cases differ from the formula", bad_total);
}

static void test_matmul_random(void) {
  static const matmul_fn fns[2] = {tidsp_matmul_i8__ref, tidsp_matmul_i8};
  int iter, bad_total = 0;
  for (iter = 0; iter < 120; iter++) {
    tidsp_matmul_params p;
    tidsp_scale_shift ss;
    int32_t m = rnd_range(1, 9), k = iter % 17 == 5 ? rnd_range(1000, 3000) : rnd_range(1, 300);
    int32_t n = iter % 4 == 0 ? 16 * rnd_range(1, 5) : rnd_range(1, 70);
    int8_t *x = malloc((size_t)m * k), *w, *y[2];
    int32_t *bias = malloc(sizeof(int32_t) * (size_t)n);
    uint8_t *scale = malloc((size_t)n), *shift = malloc((size_t)n);
    int32_t i, j, kk, f, bad = 0, with_bias = iter % 4 != 1, stride;
    memset(&p, 0, sizeof(p));
    /* sometimes padded weight rows (the host pre-packing) */
    stride = iter % 3 == 2 ? (k + 63) / 64 * 64 : 0;
    w = malloc((size_t)n * (stride ? stride : k));
    y[0] = guarded((size_t)m * n);
    y[1] = guarded((size_t)m * n);
    p.m = m;
    p.k = k;
    p.n = n;
    p.w_row_stride = stride;
    p.x_zp = iter % 2 ? 0 : rnd_range(-128, 127);
    p.w_zp = iter % 3 ? 0 : rnd_range(-128, 127);
    set_rq(&p.rq, iter % 5 != 0, iter % 6 == 0 ? 0 : -128, 127);
    for (i = 0; i < m * k; i++)
      x[i] = (int8_t)rnd_range(-128, 127);
    for (i = 0; i < n * (stride ? stride : k); i++)
      w[i] = (int8_t)rnd_range(-128, 127);
    for (j = 0; j < n; j++)
      bias[j] = iter % 9 == 8 ? INT32_MIN + rnd_range(0, 1000) : rnd_range(-50000, 50000);
    random_scale_shift(scale, shift, n, k);
    ss.scale = iter % 7 == 3 ? NULL : scale;
    ss.shift = iter % 11 == 4 ? NULL : shift;
    for (f = 0; f < 2; f++)
      CHECK_MSG(fns[f](&p, x, w, with_bias ? bias : NULL, &ss, y[f]) == TIDSP_OK,
                "matmul %d (%s) refused", iter, f ? "dispatched" : "ref");
    for (i = 0; i < m && !bad; i++)
      for (j = 0; j < n && !bad; j++) {
        int64_t acc = with_bias ? bias[j] : 0;
        int32_t want;
        for (kk = 0; kk < k; kk++)
          acc += (int64_t)(x[(size_t)i * k + kk] - p.x_zp) *
                 (w[(size_t)j * (stride ? stride : k) + kk] - p.w_zp);
        want = oracle_rq(&p.rq, &ss, j, wrap32(acc));
        for (f = 0; f < 2; f++) {
          if (y[f][(size_t)i * n + j] != want) {
            CHECK_MSG(0, "matmul %d (%s) %dx%dx%d at %d,%d: got %d want %d", iter,
                      f ? "dispatched" : "ref", (int)m, (int)k, (int)n, (int)i, (int)j,
                      (int)y[f][(size_t)i * n + j], (int)want);
            bad = 1;
          }
        }
      }
    bad_total += bad;
    CHECK(guards_ok(y[0], (size_t)m * n) && guards_ok(y[1], (size_t)m * n));
    free(x);
    free(w);
    guarded_free(y[0]);
    guarded_free(y[1]);
    free(bias);
    free(scale);
    free(shift);
  }
  CHECK_MSG(bad_total == 0, "%d random matmul cases differ from the formula", bad_total);
}

/* The conv refuses what the matmul refuses (same validation path). */
static void test_conv_errors(void) {
  static const conv_fn fns[2] = {tidsp_conv2d_i8__ref, tidsp_conv2d_i8};
  tidsp_conv2d_params p;
  tidsp_scale_shift ss;
  int8_t x[16], w[2] = {1, 1}, y[32];
  uint8_t scale[2] = {1, 1}, shift[2] = {0, 32};
  int f, i;
  memset(&p, 0, sizeof(p));
  p.n = 1; p.c_in = 1; p.h_in = 4; p.w_in = 4; p.c_out = 2; p.h_out = 4; p.w_out = 4;
  p.k_h = 1; p.k_w = 1; p.stride_h = 1; p.stride_w = 1; p.dil_h = 1; p.dil_w = 1;
  p.groups = 1;
  for (i = 0; i < 16; i++)
    x[i] = (int8_t)(i - 8);
  ss.scale = scale;
  ss.shift = shift;
  for (f = 0; f < 2; f++) {
    set_rq(&p.rq, 1, -128, 127);
    memset(y, 0x5A, sizeof(y));
    CHECK(fns[f](&p, x, w, NULL, &ss, y) == TIDSP_ERR_PARAM); /* shift[1] = 32 */
    CHECK(y[0] == 0x5A && y[31] == 0x5A);
    p.rq.per_channel = 0; /* only shift[0] is read */
    CHECK(fns[f](&p, x, w, NULL, &ss, y) == TIDSP_OK);
    CHECK(y[0] == -8 && y[15] == 7 && y[16] == -8 && y[31] == 7);
    p.rq.out_zp = 2;
    CHECK(fns[f](&p, x, w, NULL, &ss, y) == TIDSP_ERR_PARAM);
  }
}

int main(void) {
  test_by_hand(tidsp_matmul_i8__ref);
  test_by_hand(tidsp_matmul_i8);
  test_channels_and_errors(tidsp_matmul_i8__ref);
  test_channels_and_errors(tidsp_matmul_i8);
  test_requant_one();
  test_conv_random();
  test_matmul_random();
  test_conv_errors();
  UNIT_MAIN_END();
}
