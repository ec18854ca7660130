/*
 * test_kernel_fast_dwconv.c — the depthwise entries of tidsp_kernel_variants
 * (dwconv2d_i8: the direct vpmaddwd path of runtime/kernels/host/dwconv2d_*)
 * and the dispatched tidsp_conv2d_i8 on depthwise parameters, against
 * tidsp_conv2d_i8__ref, byte for byte and status for status.
 *
 * Generated cases put the output width at, below and above the 8/16-lane
 * vectors and the 256-column strip, planes below and above the 4096-value
 * small-plane buffer of the AVX-512 path (flat order vs row by row), use 1×1 to 7×7 kernels (and some the
 * path does not cover: strides 3, dilated stride 2, > 64 taps, which must
 * fall back with the same bytes), strides 1 and 2, pads that reach past the
 * input, dilations, channel multipliers > 1, nonzero x_zp and w_zp,
 * saturating multipliers, NaN/inf multipliers, int32-wrapping biases,
 * per-tensor and per-channel requant of both kinds (Q31 delegates to the
 * reference), and guard bytes around every output.
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
  for (v = 0; v <= tidsp_kernel_variant_count; v++) {
    /* every row's depthwise entry, then the dispatched public name */
    const tidsp_kernel_variant *kv =
        v < tidsp_kernel_variant_count ? &tidsp_kernel_variants[v] : tidsp_kernel_variant_active();
    int32_t st;
    if (!kv->supported())
      continue;
    y = guarded(ny);
    st = v < tidsp_kernel_variant_count ? kv->dwconv2d_i8(&p, x, w, bias, rqd, y)
                                        : tidsp_conv2d_i8(&p, x, w, bias, rqd, y);
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

static conv_case dw_case(int32_t c, int32_t mult, int32_t h, int32_t w_in, int32_t k,
                         int32_t s) {
  conv_case cc;
  memset(&cc, 0, sizeof(cc));
  cc.n = 1;
  cc.groups = c;
  cc.c_in = c;
  cc.c_out = c * mult;
  cc.h_in = h;
  cc.w_in = w_in;
  cc.k_h = cc.k_w = k;
  cc.stride_h = cc.stride_w = s;
  cc.dil_h = cc.dil_w = 1;
  cc.pad_top = cc.pad_left = k / 2;
  cc.x_zp = -128;
  cc.w_zp = 0;
  cc.kind = TIDSP_REQUANT_FLOAT;
  cc.per_channel = 1;
  cc.with_bias = 1;
  cc.gain = 1.0f;
  return cc;
}

/* Output widths around the vector widths (8, 16) and the strip (256), for
 * the MobileNet/ShuffleNet kernels, strides 1 and 2. */
static void test_dw_widths(void) {
  static const int32_t widths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33,
                                   56, 112, 255, 256, 257, 513, 530};
  static const int32_t ks[] = {3, 5, 7};
  size_t i, k;
  int32_t s;
  for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
    for (k = 0; k < 3; k++) {
      for (s = 1; s <= 2; s++) {
        conv_case c = dw_case(3, 1, rnd_range(1, 9), widths[i], ks[k], s);
        /* planes past 4096 padded values take the row path */
        if (widths[i] >= 56)
          c.h_in = widths[i] > 256 ? 9 : rnd_range(37, 80);
        c.x_zp = rnd_range(-128, 127);
        c.w_zp = (int32_t)(i % 3 == 0) * rnd_range(-128, 127);
        run_conv_case(&c);
      }
    }
  }
}

/* The models' layers, smaller in channels: 3×3 s1/s2 at 112/56/28/14/7,
 * 5×5 s2 (MobileNetV3), a multiplier of 2. */
static void test_dw_models(void) {
  static const int32_t sizes[] = {112, 56, 28, 14, 7};
  size_t i;
  for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    conv_case c = dw_case(4, 1, sizes[i], sizes[i], 3, 1);
    run_conv_case(&c);
    c.stride_h = c.stride_w = 2;
    run_conv_case(&c);
    c = dw_case(3, 1, sizes[i], sizes[i], 5, 2);
    c.per_channel = 0;
    run_conv_case(&c);
  }
  {
    conv_case c = dw_case(5, 2, 11, 13, 3, 1);
    run_conv_case(&c);
    c.stride_w = 2;
    run_conv_case(&c);
    c = dw_case(4, 3, 9, 20, 5, 2);
    run_conv_case(&c);
  }
}

/* Saturation, odd multipliers, fused-Relu ranges, big biases, Q31. */
static void test_dw_requant(void) {
  int t;
  for (t = 0; t < 24; t++) {
    conv_case c = dw_case(7, 1, 6, 19, 3, 1 + t % 2);
    c.gain = t % 3 == 0 ? 80.0f : 1.0f;
    c.odd_mult = t % 4 == 1;
    c.big_bias = t % 5 == 2;
    c.per_channel = t % 2;
    c.kind = t % 6 == 5 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
    c.x_zp = rnd_range(-128, 127);
    c.w_zp = rnd_range(-128, 127);
    c.with_bias = t % 7 != 3;
    run_conv_case(&c);
  }
}

/* Random depthwise geometry, including parameters that fall back. */
static void test_dw_random(void) {
  int t;
  for (t = 0; t < 400; t++) {
    conv_case c = dw_case(rnd_range(2, 6), rnd_range(1, 3), rnd_range(1, 24),
                          rnd_range(1, 70), 3, 1);
    c.n = rnd_range(1, 2);
    c.k_h = rnd_range(1, 7);
    c.k_w = rnd_range(1, 7);
    c.stride_h = rnd_range(1, 3);
    c.stride_w = rnd() % 5 == 0 ? 3 : rnd_range(1, 2);
    c.dil_h = rnd() % 3 == 0 ? rnd_range(2, 3) : 1;
    c.dil_w = rnd() % 3 == 0 ? rnd_range(2, 3) : 1;
    c.pad_top = rnd_range(0, 4);
    c.pad_left = rnd_range(0, 4);
    if (rnd() % 4 == 0) { /* planes past the small-plane buffers */
      c.h_in = rnd_range(50, 80);
      c.w_in = rnd_range(60, 90);
      c.groups = c.c_in = 2;
      c.c_out = 2 * rnd_range(1, 2);
    }
    if (rnd() % 10 == 0) { /* > 64 taps, or rows spanning > 16 input rows */
      c.k_h = rnd_range(9, 11);
      c.k_w = rnd_range(7, 9);
      c.h_in = rnd_range(9, 20);
      c.w_in = rnd_range(9, 30);
    }
    if (out_dim(c.h_in, c.k_h, c.stride_h, c.dil_h, c.pad_top) < 1 ||
        out_dim(c.w_in, c.k_w, c.stride_w, c.dil_w, c.pad_left) < 1) {
      c.pad_top = c.pad_left = 0;
      c.k_h = c.k_w = 1;
    }
    c.extra_h = rnd() % 5 == 0 ? rnd_range(1, 3) : 0;
    c.extra_w = rnd() % 5 == 0 ? rnd_range(1, 20) : 0;
    c.x_zp = rnd() % 4 == 0 ? -128 : rnd_range(-128, 127);
    c.w_zp = rnd() % 2 ? 0 : rnd_range(-128, 127);
    c.kind = rnd() % 6 == 0 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
    c.per_channel = (int32_t)(rnd() % 2);
    c.with_bias = rnd() % 4 != 0;
    c.big_bias = rnd() % 5 == 0;
    c.gain = rnd() % 6 == 0 ? 50.0f : 1.0f;
    run_conv_case(&c);
  }
}

/* Not depthwise (the dispatcher keeps them on conv2d_i8, but the depthwise
 * entries must still answer like the reference), and invalid arguments. */
static void test_dw_not_depthwise(void) {
  conv_case c = dw_case(4, 1, 9, 9, 3, 1);
  tidsp_conv2d_params p;
  int8_t x[2 * 9 * 9] = {0}, w[2 * 9] = {0}, y[2 * 9 * 9];
  float m[2] = {0.01f, 0.02f};
  int32_t v, k;
  c.groups = 2; /* two input channels per group */
  run_conv_case(&c);
  c.groups = 1;
  c.c_out = 3;
  run_conv_case(&c);
  CHECK(!tidsp_conv2d_is_depthwise(NULL));
  memset(&p, 0, sizeof(p));
  p.n = 1;
  p.c_in = p.c_out = p.groups = 2;
  p.h_in = p.w_in = p.h_out = p.w_out = 9;
  p.k_h = p.k_w = 3;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  CHECK(tidsp_conv2d_is_depthwise(&p));
  for (k = 0; k < 7; k++) {
    tidsp_conv2d_params q = p;
    const void *rqd = m;
    const int8_t *xp = x;
    int32_t st_ref;
    switch (k) {
    case 0: xp = NULL; break;
    case 1: rqd = NULL; break;
    case 2: q.x_zp = 300; break;
    case 3: q.rq.out_max = 200; break;
    case 4: q.stride_w = 0; break;
    case 5: q.c_out = 3; break; /* not a multiple of groups */
    case 6: q.w_out = 0; break; /* nothing to do: OK */
    }
    st_ref = tidsp_conv2d_i8__ref(&q, xp, w, NULL, rqd, y);
    for (v = 0; v < tidsp_kernel_variant_count; v++) {
      const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
      if (!kv->supported())
        continue;
      CHECK_MSG(kv->dwconv2d_i8(&q, xp, w, NULL, rqd, y) == st_ref,
                "%s depthwise error case %d", kv->name, (int)k);
    }
    CHECK_MSG(tidsp_conv2d_i8(&q, xp, w, NULL, rqd, y) == st_ref,
              "dispatched depthwise error case %d", (int)k);
  }
}

int main(void) {
  test_dw_widths();
  test_dw_models();
  test_dw_requant();
  test_dw_random();
  test_dw_not_depthwise();
  UNIT_MAIN_END();
}
