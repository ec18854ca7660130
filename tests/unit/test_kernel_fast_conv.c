/*
 * test_kernel_fast_conv.c — every variant of tidsp_conv2d_i8 and
 * tidsp_matmul_i8 that this CPU can run (the rows of tidsp_kernel_variants)
 * against the __ref functions, byte for byte and status for status.
 *
 * Generated cases put each blocking parameter of the host kernels at, just
 * below and just above its tile (output channels vs MR = 4 / 6 and the
 * 128-channel accumulator block, output pixels vs the 16 / 64-lane blocks,
 * reduction length vs the 512 / 1024-tap chunks and the 2 / 4-tap groups),
 * with groups (dense, grouped, depthwise), strides 1/2/3, pads, dilations,
 * output sizes that reach past the input, nonzero x_zp and w_zp, large
 * biases (int32 wrap-around), saturating multipliers, fused-Relu ranges,
 * per-tensor and per-channel requant of both kinds (Q31 delegates to the
 * reference), and guard bytes around every output. Invalid arguments must
 * give the reference's status.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x9E3779B97F4A7C15ull
#include "kernel_test_util.h"
#include "fast_conv_test_util.h"

static void run_conv_case(const conv_case *cc) {
  tidsp_conv2d_params p;
  size_t nx, nw, ny;
  int8_t *x, *w, *y_ref, *y;
  int32_t *bias = NULL, i, v, st_ref;
  void *rqd;
  int32_t cpg_in = cc->c_in / cc->groups;

  memset(&p, 0, sizeof(p));
  p.n = cc->n;
  p.c_in = cc->c_in;
  p.h_in = cc->h_in;
  p.w_in = cc->w_in;
  p.c_out = cc->c_out;
  p.k_h = cc->k_h;
  p.k_w = cc->k_w;
  p.stride_h = cc->stride_h;
  p.stride_w = cc->stride_w;
  p.dil_h = cc->dil_h;
  p.dil_w = cc->dil_w;
  p.pad_top = cc->pad_top;
  p.pad_left = cc->pad_left;
  p.groups = cc->groups;
  p.h_out = out_dim(cc->h_in, cc->k_h, cc->stride_h, cc->dil_h, cc->pad_top) + cc->extra_h;
  p.w_out = out_dim(cc->w_in, cc->k_w, cc->stride_w, cc->dil_w, cc->pad_left) + cc->extra_w;
  p.x_zp = cc->x_zp;
  p.w_zp = cc->w_zp;
  rqd = make_rq(&p.rq, cc->kind, cc->c_out, cc->per_channel,
                cpg_in * cc->k_h * cc->k_w, cc->gain);
  if (cc->odd_mult && cc->kind == TIDSP_REQUANT_FLOAT)
    set_odd_mults(rqd, cc->per_channel ? cc->c_out : 1);

  nx = (size_t)p.n * p.c_in * p.h_in * p.w_in;
  nw = (size_t)p.c_out * cpg_in * p.k_h * p.k_w;
  ny = (size_t)p.n * p.c_out * p.h_out * p.w_out;
  x = malloc(nx);
  w = malloc(nw); /* exactly sized: an overread shows under ASan */
  fill_i8(x, nx);
  fill_i8(w, nw);
  if (cc->with_bias) {
    bias = malloc(sizeof(int32_t) * (size_t)p.c_out);
    for (i = 0; i < p.c_out; i++)
      bias[i] = cc->big_bias ? (int32_t)(rnd() ^ (rnd() << 21)) : rnd_range(-20000, 20000);
  }
  y_ref = guarded(ny);
  st_ref = tidsp_conv2d_i8__ref(&p, x, w, bias, rqd, y_ref);
  CHECK_MSG(st_ref == TIDSP_OK, "ref status %d", (int)st_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!kv->supported())
      continue;
    y = guarded(ny);
    st = kv->conv2d_i8(&p, x, w, bias, rqd, y);
    CHECK_MSG(st == st_ref, "%s status %d", kv->name, (int)st);
    CHECK_MSG(memcmp(y, y_ref, ny) == 0,
              "%s conv n%d c%d->%d g%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d out %dx%d "
              "zp %d,%d kind %d pc %d",
              kv->name, p.n, p.c_in, p.c_out, p.groups, p.h_in, p.w_in, p.k_h,
              p.k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top,
              p.pad_left, p.h_out, p.w_out, p.x_zp, p.w_zp, (int)p.rq.kind,
              (int)p.rq.per_channel);
    CHECK_MSG(guards_ok(y, ny), "%s wrote outside the output", kv->name);
    guarded_free(y);
  }
  guarded_free(y_ref);
  free(x);
  free(w);
  free(bias);
  free(rqd);
}

static conv_case base_case(void) {
  conv_case c;
  memset(&c, 0, sizeof(c));
  c.n = 1;
  c.c_in = 8;
  c.c_out = 8;
  c.groups = 1;
  c.h_in = 9;
  c.w_in = 9;
  c.k_h = 3;
  c.k_w = 3;
  c.stride_h = c.stride_w = 1;
  c.dil_h = c.dil_w = 1;
  c.pad_top = c.pad_left = 1;
  c.x_zp = 3;
  c.w_zp = 0;
  c.kind = TIDSP_REQUANT_FLOAT;
  c.per_channel = 1;
  c.with_bias = 1;
  c.gain = 1.0f;
  return c;
}

/* Output channels around MR (4, 6) and the 128-channel block. */
static void test_conv_channels(void) {
  static const int32_t c_outs[] = {1, 3, 4, 5, 6, 7, 11, 12, 13, 127, 128, 129, 257};
  size_t i;
  for (i = 0; i < sizeof(c_outs) / sizeof(c_outs[0]); i++) {
    conv_case c = base_case();
    c.c_out = c_outs[i];
    c.h_in = 5;
    c.w_in = 6;
    run_conv_case(&c);
  }
  {
    conv_case c = base_case();
    c.odd_mult = 1;
    c.c_out = 6;
    run_conv_case(&c);
  }
}

/* Output pixels around the 16- and 64-lane blocks, in one row and in
 * several rows per block. */
static void test_conv_pixels(void) {
  static const int32_t widths[] = {1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 130};
  size_t i;
  for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
    conv_case c = base_case();
    c.w_in = widths[i];
    c.h_in = rnd_range(1, 7);
    c.c_out = 7;
    run_conv_case(&c);
    c.k_h = c.k_w = 1;
    c.pad_top = c.pad_left = 0;
    run_conv_case(&c);
  }
}

/* Reduction lengths around the 2/4-tap groups and the 512/1024-tap chunks. */
static void test_conv_reduction(void) {
  static const int32_t taps[] = {1, 2, 3, 4, 5, 511, 512, 513, 1023, 1024, 1025, 2049};
  size_t i;
  for (i = 0; i < sizeof(taps) / sizeof(taps[0]); i++) {
    conv_case c = base_case();
    c.k_h = c.k_w = 1;
    c.pad_top = c.pad_left = 0;
    c.c_in = taps[i];
    c.c_out = 9;
    c.h_in = 3;
    c.w_in = 5;
    c.w_zp = (int32_t)(i % 3) - 1;
    run_conv_case(&c);
  }
  { /* 3×3 taps around a chunk: 113·9 = 1017, 114·9 = 1026 */
    conv_case c = base_case();
    c.c_in = 114;
    c.c_out = 13;
    c.h_in = c.w_in = 6;
    c.w_zp = 5;
    run_conv_case(&c);
    c.c_in = 113;
    run_conv_case(&c);
    c.c_out = 130; /* chunks × accumulator blocks */
    c.c_in = 120;
    run_conv_case(&c);
  }
}

/* Groups, strides, pads, dilations, zero points, saturation, both kinds. */
static void test_conv_random(void) {
  int t;
  for (t = 0; t < 300; t++) {
    conv_case c = base_case();
    const int32_t shape = rnd_range(0, 2);
    int32_t cpg_in = rnd_range(1, 9), cpg_out = rnd_range(1, 9);
    c.groups = rnd_range(1, 3);
    if (shape == 1) { /* depthwise */
      cpg_in = 1;
      cpg_out = rnd_range(1, 2);
      c.groups = rnd_range(1, 20);
    }
    c.n = rnd_range(1, 2);
    c.c_in = cpg_in * c.groups;
    c.c_out = cpg_out * c.groups;
    c.k_h = rnd_range(1, 5);
    c.k_w = rnd_range(1, 5);
    c.stride_h = rnd_range(1, 3);
    c.stride_w = rnd_range(1, 3);
    c.dil_h = rnd_range(1, 2);
    c.dil_w = rnd_range(1, 2);
    c.pad_top = rnd_range(0, 3);
    c.pad_left = rnd_range(0, 3);
    c.h_in = rnd_range(1, 20);
    c.w_in = rnd_range(1, 40);
    if (out_dim(c.h_in, c.k_h, c.stride_h, c.dil_h, c.pad_top) < 1 ||
        out_dim(c.w_in, c.k_w, c.stride_w, c.dil_w, c.pad_left) < 1) {
      c.pad_top = c.pad_left = 0;
      c.k_h = c.k_w = 1;
    }
    c.extra_h = rnd() % 5 == 0;
    c.extra_w = rnd() % 5 == 0;
    c.x_zp = rnd() % 4 == 0 ? -128 : rnd_range(-128, 127);
    c.w_zp = rnd() % 2 ? 0 : rnd_range(-128, 127);
    c.kind = rnd() % 4 == 0 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
    c.per_channel = (int32_t)(rnd() % 2);
    c.with_bias = rnd() % 4 != 0;
    c.big_bias = rnd() % 5 == 0;
    c.gain = rnd() % 6 == 0 ? 50.0f : 1.0f;
    run_conv_case(&c);
  }
}

/* The spec's layer shape, smaller: 64→64 3×3, stride 1 and 2. */
static void test_conv_resnet_like(void) {
  conv_case c = base_case();
  c.c_in = c.c_out = 64;
  c.h_in = c.w_in = 14;
  c.x_zp = -128;
  run_conv_case(&c);
  c.stride_h = c.stride_w = 2;
  c.c_out = 128;
  run_conv_case(&c);
}

/* Invalid arguments: every variant answers like the reference. */
static void test_conv_errors(void) {
  conv_case cc = base_case();
  tidsp_conv2d_params good, p;
  int8_t x[2 * 9 * 9] = {0}, w[2 * 2 * 9] = {0}, y[2 * 9 * 9];
  float m[2] = {0.01f, 0.02f};
  int32_t q31[2] = {-1, 3};
  int32_t v, k;
  (void)cc;
  memset(&good, 0, sizeof(good));
  good.n = 1;
  good.c_in = 2;
  good.h_in = good.w_in = 9;
  good.c_out = 2;
  good.h_out = good.w_out = 9;
  good.k_h = good.k_w = 3;
  good.stride_h = good.stride_w = good.dil_h = good.dil_w = 1;
  good.pad_top = good.pad_left = 1;
  good.groups = 1;
  good.rq.kind = TIDSP_REQUANT_FLOAT;
  good.rq.per_channel = 1;
  good.rq.out_min = -128;
  good.rq.out_max = 127;
  for (k = 0; k < 12; k++) {
    const void *rqd = m;
    const int8_t *xp = x, *wp = w;
    int8_t *yp = y;
    int32_t st_ref;
    p = good;
    switch (k) {
    case 0: xp = NULL; break;
    case 1: rqd = NULL; break;
    case 2: p.groups = 3; break;
    case 3: p.x_zp = 128; break;
    case 4: p.w_zp = -129; break;
    case 5: p.rq.kind = 7; break;
    case 6: p.rq.out_min = 5; p.rq.out_max = 4; break;
    case 7: p.rq.out_max = 128; break;
    case 8: p.rq.kind = TIDSP_REQUANT_Q31; p.rq.per_channel = 0; rqd = q31; break;
    case 9: p.stride_h = 0; break;
    case 10: p.h_out = 0; break; /* nothing to do: OK */
    case 11: p.c_in = 40000; p.groups = 1; break; /* too many taps */
    }
    st_ref = tidsp_conv2d_i8__ref(&p, xp, wp, NULL, rqd, yp);
    for (v = 0; v < tidsp_kernel_variant_count; v++) {
      const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
      if (!kv->supported())
        continue;
      CHECK_MSG(kv->conv2d_i8(&p, xp, wp, NULL, rqd, yp) == st_ref,
                "%s error case %d", kv->name, (int)k);
    }
    CHECK_MSG(tidsp_conv2d_i8(&p, xp, wp, NULL, rqd, yp) == st_ref,
              "dispatched error case %d", (int)k);
  }
}

/* ---- matmul -------------------------------------------------------------- */

static void run_matmul_case(int32_t m, int32_t k, int32_t n, int32_t x_zp,
                            int32_t w_zp, int32_t kind, int32_t per_channel,
                            int32_t with_bias, int32_t big_bias, float gain,
                            int32_t odd_mult) {
  tidsp_matmul_params p;
  int8_t *x = malloc((size_t)m * k + 1), *w = malloc((size_t)n * k + 1);
  int8_t *y_ref = guarded((size_t)m * n), *y;
  int32_t *bias = NULL, i, v, st_ref;
  void *rqd;
  memset(&p, 0, sizeof(p));
  p.m = m;
  p.k = k;
  p.n = n;
  p.x_zp = x_zp;
  p.w_zp = w_zp;
  rqd = make_rq(&p.rq, kind, n, per_channel, k, gain);
  if (odd_mult && kind == TIDSP_REQUANT_FLOAT)
    set_odd_mults(rqd, per_channel ? n : 1);
  fill_i8(x, (size_t)m * k);
  fill_i8(w, (size_t)n * k);
  if (with_bias) {
    bias = malloc(sizeof(int32_t) * (size_t)n);
    for (i = 0; i < n; i++)
      bias[i] = big_bias ? (int32_t)(rnd() ^ (rnd() << 21)) : rnd_range(-20000, 20000);
  }
  st_ref = tidsp_matmul_i8__ref(&p, x, w, bias, rqd, y_ref);
  CHECK_MSG(st_ref == TIDSP_OK, "ref matmul status %d", (int)st_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!kv->supported())
      continue;
    y = guarded((size_t)m * n);
    st = kv->matmul_i8(&p, x, w, bias, rqd, y);
    CHECK_MSG(st == st_ref, "%s matmul status %d", kv->name, (int)st);
    CHECK_MSG(memcmp(y, y_ref, (size_t)m * n) == 0,
              "%s matmul m%d k%d n%d zp %d,%d kind %d pc %d", kv->name, m, k, n,
              x_zp, w_zp, kind, per_channel);
    CHECK_MSG(guards_ok(y, (size_t)m * n), "%s matmul wrote outside", kv->name);
    guarded_free(y);
  }
  guarded_free(y_ref);
  free(x);
  free(w);
  free(bias);
  free(rqd);
}

static void test_matmul(void) {
  static const int32_t ks[] = {0, 1, 3, 15, 16, 17, 63, 64, 65, 128, 513, 40000};
  static const int32_t ns[] = {1, 3, 4, 5, 8, 9, 1000};
  size_t a, b;
  int t;
  for (a = 0; a < sizeof(ks) / sizeof(ks[0]); a++) {
    for (b = 0; b < sizeof(ns) / sizeof(ns[0]); b++) {
      if (ks[a] * ns[b] > 1000000)
        continue;
      run_matmul_case(rnd_range(1, 3), ks[a], ns[b], rnd_range(-128, 127),
                      (int32_t)(b % 2) * rnd_range(-128, 127),
                      TIDSP_REQUANT_FLOAT, (int32_t)(a % 2), 1, 0, 1.0f, 0);
    }
  }
  run_matmul_case(1, 40000, 3, -128, 77, TIDSP_REQUANT_FLOAT, 1, 1, 1, 1.0f, 0);
  run_matmul_case(3, 70, 9, 5, 0, TIDSP_REQUANT_FLOAT, 1, 1, 0, 1.0f, 1);
  for (t = 0; t < 100; t++)
    run_matmul_case(rnd_range(1, 9), rnd_range(1, 200), rnd_range(1, 20),
                    rnd_range(-128, 127), rnd() % 2 ? 0 : rnd_range(-128, 127),
                    rnd() % 4 == 0 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT,
                    (int32_t)(rnd() % 2), rnd() % 4 != 0, rnd() % 5 == 0,
                    rnd() % 6 == 0 ? 50.0f : 1.0f, 0);
}

static void test_matmul_errors(void) {
  tidsp_matmul_params p;
  int8_t v8[4] = {0};
  float m = 0.5f;
  int32_t k, v;
  for (k = 0; k < 6; k++) {
    int32_t st_ref;
    const void *rqd = &m;
    memset(&p, 0, sizeof(p));
    p.m = 1;
    p.k = 2;
    p.n = 2;
    p.rq.out_min = -128;
    p.rq.out_max = 127;
    switch (k) {
    case 0: p.n = 0; break;
    case 1: rqd = NULL; break;
    case 2: p.x_zp = 200; break;
    case 3: p.rq.out_min = -129; break;
    case 4: p.m = 0; break; /* nothing to do: OK */
    case 5: p.k = -1; break;
    }
    st_ref = tidsp_matmul_i8__ref(&p, v8, v8, NULL, rqd, v8);
    for (v = 0; v < tidsp_kernel_variant_count; v++) {
      const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
      if (!kv->supported())
        continue;
      CHECK_MSG(kv->matmul_i8(&p, v8, v8, NULL, rqd, v8) == st_ref,
                "%s matmul error case %d", kv->name, (int)k);
    }
  }
}

/* The table ends with the reference and the dispatcher picks a supported
 * row. */
static void test_table(void) {
  const tidsp_kernel_variant *a = tidsp_kernel_variant_active();
  int32_t v;
  CHECK(tidsp_kernel_variant_count >= 1);
  CHECK(strcmp(tidsp_kernel_variants[tidsp_kernel_variant_count - 1].name, "ref") == 0);
  CHECK(a != NULL && a->supported());
  for (v = 0; v < tidsp_kernel_variant_count; v++)
    printf("variant %s: %s%s\n", tidsp_kernel_variants[v].name,
           tidsp_kernel_variants[v].supported() ? "supported" : "not supported",
           &tidsp_kernel_variants[v] == a ? " (active)" : "");
}

int main(void) {
  test_table();
  test_conv_channels();
  test_conv_pixels();
  test_conv_reduction();
  test_conv_random();
  test_conv_resnet_like();
  test_conv_errors();
  test_matmul();
  test_matmul_errors();
  UNIT_MAIN_END();
}
