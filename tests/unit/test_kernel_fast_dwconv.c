/*
 * test_kernel_fast_dwconv.c — the depthwise entries of tidsp_kernel_variants
 * (dwconv2d_i8: the byte-quad vpdpbusd path of
 * runtime/kernels/host/dwconv2d_i8__host_avx512vnni.c, the int16-pair path
 * of __host_avx2) and the dispatched tidsp_conv2d_i8 on depthwise
 * parameters, against tidsp_conv2d_i8__ref, byte for byte and status for
 * status.
 *
 * Generated cases put the output width at, below and above the 8/16/64-lane
 * vectors and groups and the strips of both paths (256 and ~510 columns),
 * the height at 1, 2 and past a band (tall planes), use 1×1 to 7×7 kernels
 * (and some the paths do not cover: strides 3, dilations, > 64 taps, which
 * must fall back with the same bytes), strides 1 and 2, symmetric,
 * asymmetric and missing pads and outputs past or short of the natural
 * size, channel multipliers > 1 and batches (planes double-buffered), x_zp
 * −128 and 127, w_zp ≠ 0 with weights at the extremes (w − w_zp = ±255 needs
 * three signed byte sets), saturating multipliers, NaN/inf multipliers,
 * int32-wrapping biases, multipliers around 0.5 and far off it, fused
 * Relu/Relu6 ranges, output zero points at
 * and past the int16 packing limit, per-tensor and per-channel requant of
 * every kind (Q31 on the FLOAT paths, also at the multipliers and output
 * ranges above), weight rows w_row_stride
 * apart with poison in the padding (and invalid strides: the reference's
 * status), and guard bytes around every output.
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

/* What a case changes after make_rq, and how it fills the weights. */
typedef struct dw_opts {
  int32_t set_out;               /* use out_zp, out_min, out_max below */
  int32_t out_zp, out_min, out_max;
  int32_t w_extremes;            /* weights only −128 and 127 */
  const float *mults;            /* FLOAT multipliers (Q31: |m| exactly as */
  int32_t n_mults;               /* mult·2^−shift), repeated over the
                                    channels (when n_mults > 0) */
  int32_t expect;                /* the reference's status (TIDSP_OK = 0) */
} dw_opts;

static void run_dw(const conv_case *cc, const dw_opts *o) {
  tidsp_conv2d_params p, p_pad;
  size_t nx, nw, ny;
  int8_t *x, *w, *w_pad = NULL, *y_ref, *y;
  int32_t *bias = NULL, i, v, st_ref, padded;
  void *rqd;
  int32_t cpg_in = cc->c_in / cc->groups;

  rqd = conv_case_params(cc, &p);
  if (o && o->n_mults > 0 && cc->kind == TIDSP_REQUANT_FLOAT) {
    for (i = 0; i < (cc->per_channel ? cc->c_out : 1); i++)
      ((float *)rqd)[i] = o->mults[i % o->n_mults];
  } else if (o && o->n_mults > 0 && cc->kind == TIDSP_REQUANT_Q31) {
    const int32_t n = cc->per_channel ? cc->c_out : 1;
    for (i = 0; i < n; i++) { /* |m| = fr·2^e: a 24-bit integer fr·2^24 */
      int e;
      const float fr = frexpf(fabsf(o->mults[i % o->n_mults]), &e);
      ((int32_t *)rqd)[i] = (int32_t)(fr * 16777216.0f);
      ((int32_t *)rqd)[n + i] = 24 - e; /* in [0, 62] for the tests' m */
    }
  }
  if (o && o->set_out) {
    p.rq.out_zp = o->out_zp;
    p.rq.out_min = o->out_min;
    p.rq.out_max = o->out_max;
  }

  nx = (size_t)p.n * p.c_in * p.h_in * p.w_in;
  nw = (size_t)p.c_out * cpg_in * p.k_h * p.k_w;
  ny = (size_t)p.n * p.c_out * p.h_out * p.w_out;
  x = malloc(nx ? nx : 1);
  w = malloc(nw); /* exactly sized: an overread shows under ASan */
  fill_i8(x, nx);
  fill_i8(w, nw);
  if (o && o->w_extremes) {
    for (i = 0; i < (int32_t)nw; i++)
      w[i] = (int8_t)(rnd() % 2 ? 127 : -128);
  }
  if (cc->with_bias) {
    bias = malloc(sizeof(int32_t) * (size_t)p.c_out);
    for (i = 0; i < p.c_out; i++)
      bias[i] = cc->big_bias ? (int32_t)(rnd() ^ (rnd() << 21)) : rnd_range(-20000, 20000);
  }
  y_ref = guarded(ny);
  st_ref = tidsp_conv2d_i8__ref(&p, x, w, bias, rqd, y_ref);
  CHECK_MSG(st_ref == (o ? o->expect : TIDSP_OK), "ref status %d", (int)st_ref);
  if (cc->w_row_pad > 0) { /* the same weights in padded rows */
    const int32_t taps = cpg_in * cc->k_h * cc->k_w;
    w_pad = pad_rows(w, p.c_out, taps, cc->w_row_pad, cc->w_poison);
    p_pad = p;
    p_pad.w_row_stride = taps + cc->w_row_pad;
  }
  for (v = 0; v <= tidsp_kernel_variant_count; v++) {
    /* every row's depthwise entry, then the dispatched public name */
    const tidsp_kernel_variant *kv =
        v < tidsp_kernel_variant_count ? &tidsp_kernel_variants[v] : tidsp_kernel_variant_active();
    if (!kv->supported())
      continue;
    for (padded = 0; padded <= (w_pad != NULL); padded++) {
      const tidsp_conv2d_params *pp = padded ? &p_pad : &p;
      const int8_t *wp = padded ? w_pad : w;
      int32_t st;
      y = guarded(ny);
      st = v < tidsp_kernel_variant_count ? kv->dwconv2d_i8(pp, x, wp, bias, rqd, y)
                                          : tidsp_conv2d_i8(pp, x, wp, bias, rqd, y);
      CHECK_MSG(st == st_ref, "%s status %d", kv->name, (int)st);
      CHECK_MSG(memcmp(y, y_ref, ny) == 0,
                "%s conv n%d c%d->%d g%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d out %dx%d "
                "zp %d,%d kind %d pc %d out zp %d [%d, %d] w_row_stride %d",
                kv->name, p.n, p.c_in, p.c_out, p.groups, p.h_in, p.w_in, p.k_h,
                p.k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top,
                p.pad_left, p.h_out, p.w_out, p.x_zp, p.w_zp, (int)p.rq.kind,
                (int)p.rq.per_channel, (int)p.rq.out_zp, (int)p.rq.out_min,
                (int)p.rq.out_max, (int)pp->w_row_stride);
      CHECK_MSG(guards_ok(y, ny), "%s wrote outside the output", kv->name);
      guarded_free(y);
    }
  }
  guarded_free(y_ref);
  free(x);
  free(w);
  free(w_pad);
  free(bias);
  free(rqd);
}

/* A case as given and, every third plain FLOAT case, the same with Q31
 * (make_q31; every one would double the file's time). */
static void run_conv_case(const conv_case *cc) {
  static int32_t n_float;
  run_dw(cc, NULL);
  if (cc->kind == TIDSP_REQUANT_FLOAT && !cc->odd_mult && n_float++ % 3 == 0) {
    conv_case c = *cc;
    c.kind = TIDSP_REQUANT_Q31;
    run_dw(&c, NULL);
  }
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

/* Output widths around the vector widths (8, 16), the 64-output groups and
 * the strips (AVX2: 256 columns; AVX-512: 510 at stride 1, 254 at stride
 * 2 for 3×3), for the MobileNet/ShuffleNet kernels, strides 1 and 2. */
static void test_dw_widths(void) {
  static const int32_t widths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33,
                                   56, 63, 64, 65, 112, 253, 254, 255, 256, 257,
                                   509, 510, 511, 513, 530};
  static const int32_t ks[] = {3, 5, 7};
  size_t i, k;
  int32_t s;
  for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
    for (k = 0; k < 3; k++) {
      for (s = 1; s <= 2; s++) {
        conv_case c = dw_case(3, 1, rnd_range(1, 9), widths[i], ks[k], s);
        /* taller planes for the wide rows */
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
    if (rnd() % 4 == 0) {
      c.w_row_pad = rnd_range(1, 20);
      c.w_poison = rnd_range(-128, 127);
    }
    run_conv_case(&c);
  }
}

/* The input size along one axis that gives `out` outputs of a k-tap,
 * stride-s window with `pad` on both sides, and the outputs past the
 * natural size (negative: short of it) when no input is that small. */
static void fit_axis(int32_t out, int32_t k, int32_t s, int32_t pad,
                     int32_t *in, int32_t *extra) {
  *in = (out - 1) * s + k - 2 * pad;
  if (*in < 1)
    *in = 1;
  *extra = out - out_dim(*in, k, s, 1, pad);
}

/* Output widths around the 16-lane vectors and 64-output groups (1, 15,
 * 16, 17, 31, 33, 64, 65), heights 1, 2 and 5, 3×3/5×5/7×7, strides 1 and
 * 2, and pads: k/2 on all sides, none, top only or left only, and random
 * top/left with more padding at the bottom/right; x_zp at its extremes. */
static void test_dw_edges(void) {
  static const int32_t widths[] = {1, 15, 16, 17, 31, 33, 64, 65};
  static const int32_t heights[] = {1, 2, 5};
  size_t wi;
  int32_t k, s, mode, t = 0;
  for (wi = 0; wi < sizeof(widths) / sizeof(widths[0]); wi++) {
    for (k = 3; k <= 7; k += 2) {
      for (s = 1; s <= 2; s++) {
        for (mode = 0; mode < 4; mode++, t++) {
          conv_case c = dw_case(2, 1 + (t % 5 == 0), 1, 1, k, s);
          const int32_t h_out = heights[t % 3];
          switch (mode) {
          case 0: c.pad_top = c.pad_left = k / 2; break;
          case 1: c.pad_top = c.pad_left = 0; break;
          case 2:
            c.pad_top = t % 2 ? k / 2 : 0;
            c.pad_left = t % 2 ? 0 : k / 2;
            break;
          default:
            c.pad_top = rnd_range(0, k / 2);
            c.pad_left = rnd_range(0, k / 2);
            break;
          }
          fit_axis(widths[wi], k, s, c.pad_left, &c.w_in, &c.extra_w);
          fit_axis(h_out, k, s, c.pad_top, &c.h_in, &c.extra_h);
          if (mode == 3) { /* a shorter input: padding at the bottom/right */
            if (c.w_in > 1) {
              c.w_in--;
              c.extra_w = widths[wi] - out_dim(c.w_in, k, s, 1, c.pad_left);
            }
            if (c.h_in > 1) {
              c.h_in--;
              c.extra_h = h_out - out_dim(c.h_in, k, s, 1, c.pad_top);
            }
          }
          c.x_zp = t % 2 ? 127 : -128;
          c.w_zp = t % 3 == 0 ? rnd_range(-128, 127) : 0;
          c.per_channel = t % 4 != 3;
          c.gain = t % 7 == 0 ? 80.0f : 1.0f;
          run_conv_case(&c);
        }
      }
    }
  }
}

/* Zero points: x_zp −128, 127, 0; w_zp 0, ±1, 127, −128, 64, with random
 * weights and with weights only −128 and 127 (w − w_zp up to ±255, which
 * the AVX-512 path splits into two or three signed byte sets). */
static void test_dw_zero_points(void) {
  static const int32_t xzps[] = {-128, 127, 0, -5};
  static const int32_t wzps[] = {0, 1, -1, 127, -128, 64};
  size_t i, j;
  int32_t e;
  for (i = 0; i < sizeof(xzps) / sizeof(xzps[0]); i++) {
    for (j = 0; j < sizeof(wzps) / sizeof(wzps[0]); j++) {
      for (e = 0; e < 2; e++) {
        conv_case c = dw_case(3, 1 + e, 9, 21 + (int32_t)j, e ? 5 : 3, 1 + (int32_t)(i + j) % 2);
        dw_opts o;
        memset(&o, 0, sizeof(o));
        o.w_extremes = e;
        c.x_zp = xzps[i];
        c.w_zp = wzps[j];
        c.per_channel = (int32_t)(i % 2);
        run_dw(&c, &o);
      }
    }
  }
}

/* Output ranges: full, fused Relu6 (a narrow range above the zero point),
 * narrowed on both sides, a single value, zero points at both ends of
 * int8; zero points outside int8 (not a value of the output type) are
 * refused by the reference and every variant alike. */
static void test_dw_out_ranges(void) {
  static const int32_t outs[][4] = {/* zp, min, max, status */
                                    {-128, -128, 127, TIDSP_OK}, {-128, -128, -81, TIDSP_OK},
                                    {10, -20, 30, TIDSP_OK},     {5, 5, 5, TIDSP_OK},
                                    {127, -128, 127, TIDSP_OK},  {128, -128, 127, TIDSP_ERR_PARAM},
                                    {-129, -100, 100, TIDSP_ERR_PARAM},
                                    {16384, -128, 127, TIDSP_ERR_PARAM},
                                    {1 << 30, -128, 127, TIDSP_ERR_PARAM}};
  size_t i;
  int32_t t;
  for (i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
    for (t = 0; t < 6; t++) { /* t ≥ 4: Q31 */
      conv_case c = dw_case(3, 1, 7 + t, 19 + 3 * t, t < 2 ? 3 : 5, 1 + t % 2);
      c.kind = t >= 4 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
      dw_opts o;
      memset(&o, 0, sizeof(o));
      o.set_out = 1;
      o.out_zp = outs[i][0];
      o.out_min = outs[i][1];
      o.out_max = outs[i][2];
      o.expect = outs[i][3];
      c.per_channel = t % 2;
      c.gain = t == 3 || t == 5 ? 80.0f : 1.0f;
      c.x_zp = rnd_range(-128, 127);
      run_dw(&c, &o);
    }
  }
}

/* Multipliers around 0.5 (the AVX-512 path clamps in integers below it,
 * in floats above it), far above it, tiny, negative, with biases that
 * make |acc| reach 2³¹ (so |acc·m| reaches 2³⁰ at m = 0.5). */
static void test_dw_multipliers(void) {
  static const float mults[] = {0.5f, -0.5f, 0.49999997f, 0.50000006f, 2.0f,
                                1.0e6f, 1.0e-9f, -1.0e-3f, 0.25f, -0.50000006f};
  int32_t t;
  for (t = 0; t < 8; t++) {
    conv_case c = dw_case(10, 1, 6 + t, 20 + 5 * t, t < 4 ? 3 : 5, 1 + t % 2);
    dw_opts o;
    memset(&o, 0, sizeof(o));
    o.mults = mults + t % 3;
    o.n_mults = (int32_t)(sizeof(mults) / sizeof(mults[0])) - t % 3;
    c.big_bias = t % 2;
    c.x_zp = rnd_range(-128, 127);
    if (t >= 6) { /* per-tensor: one multiplier for all channels */
      c.per_channel = 0;
      o.mults = mults + (t == 6 ? 0 : 3);
      o.n_mults = 1;
    }
    run_dw(&c, &o);
    c.kind = TIDSP_REQUANT_Q31; /* the same multipliers' magnitudes */
    run_dw(&c, &o);
  }
}

/* Many channels of small planes, which the AVX-512 path computes MULTI (4)
 * at a time: channel counts that leave 1–3 planes over, batches crossing
 * the images of n = 2, FLOAT multipliers past 0.5 in some channels (their
 * batch goes one channel at a time), SCALE_SHIFT, zero points. */
static void test_dw_channel_batches(void) {
  static const float mults[] = {1.0e-3f, 2.0e-3f, 0.7f, 3.0e-3f, -1.5e-3f, 1.0e-3f,
                                4.0e-3f, 2.5e-3f, 5.0e-4f, 0.5f, 1.2e-3f};
  static const int32_t sizes[] = {7, 14, 28, 56, 5};
  int32_t t;
  for (t = 0; t < 30; t++) {
    const int32_t h = sizes[t % 5], k = t % 7 == 3 ? 5 : (t % 11 == 4 ? 7 : 3);
    conv_case c = dw_case(rnd_range(4, 23), 1, h, h + t % 3, k, 1 + (t / 5) % 2);
    dw_opts o;
    memset(&o, 0, sizeof(o));
    c.n = 1 + t % 2;
    c.x_zp = rnd() % 3 == 0 ? -128 : rnd_range(-128, 127);
    c.per_channel = t % 4 != 1;
    c.with_bias = t % 6 != 5;
    if (t % 3 == 2) {
      c.kind = TIDSP_REQUANT_SCALE_SHIFT;
    } else if (t % 3 == 1) { /* 0.7 and 0.5 in some batches */
      o.mults = mults + t % 4;
      o.n_mults = (int32_t)(sizeof(mults) / sizeof(mults[0])) - t % 4;
    }
    if (t % 10 == 9)
      c.w_zp = rnd_range(-128, 127); /* one channel at a time */
    run_dw(&c, o.n_mults ? &o : NULL);
  }
}

/* Weight rows w_row_stride apart with poison in the padding: no variant may
 * read it. */
static void test_dw_w_row_stride(void) {
  static const int32_t pads[] = {1, 3, 7, 55, 64 - 9};
  size_t i;
  int32_t k, t = 0;
  for (i = 0; i < sizeof(pads) / sizeof(pads[0]); i++) {
    for (k = 3; k <= 7; k += 2, t++) {
      conv_case c = dw_case(3, 1 + t % 2, 11, 17 + t, k, 1 + t % 2);
      c.w_row_pad = pads[i];
      c.w_poison = t % 2 ? 0x5A : -1;
      c.w_zp = t % 3 == 2 ? rnd_range(-128, 127) : 0;
      run_conv_case(&c);
    }
  }
}

/* Planes taller than one band of converted rows, wider than one strip,
 * both, batches (the AVX-512 path converts the next plane while it
 * computes one), multipliers, and different vertical and horizontal
 * strides. */
static void test_dw_bands_strips(void) {
  conv_case c;
  c = dw_case(2, 1, 300, 112, 3, 1);
  run_conv_case(&c);
  c = dw_case(2, 1, 301, 112, 3, 2);
  run_conv_case(&c);
  c = dw_case(2, 1, 260, 40, 5, 1);
  c.w_zp = 3;
  run_conv_case(&c);
  c = dw_case(2, 1, 5, 1100, 3, 1);
  run_conv_case(&c);
  c = dw_case(2, 1, 7, 1030, 7, 2);
  run_conv_case(&c);
  c = dw_case(2, 1, 9, 700, 5, 2);
  c.extra_w = 3;
  run_conv_case(&c);
  c = dw_case(3, 2, 70, 600, 3, 1);
  c.n = 2;
  run_conv_case(&c);
  c = dw_case(1, 3, 40, 90, 3, 2);
  c.n = 3;
  run_conv_case(&c);
  c = dw_case(3, 1, 30, 40, 3, 1);
  c.stride_h = 2;
  run_conv_case(&c);
  c.stride_h = 1;
  c.stride_w = 2;
  run_conv_case(&c);
  c = dw_case(2, 1, 33, 29, 5, 2);
  c.stride_h = 1;
  c.k_h = 3;
  c.pad_top = 1;
  run_conv_case(&c);
}

/* Dilations: vertical ones (the AVX-512 path reads the rows kh·dil_h
 * apart from its band), up to and past the rows its band holds, and
 * horizontal ones (which it hands to the int16-pair path). */
static void test_dw_dilations(void) {
  static const int32_t dils[][3] = {/* k, dil_h, dil_w */
                                    {3, 2, 1}, {3, 4, 1}, {5, 4, 1}, {3, 8, 1},
                                    {3, 9, 1}, {7, 3, 1}, {3, 1, 2}, {5, 2, 3}};
  size_t i;
  int32_t s;
  for (i = 0; i < sizeof(dils) / sizeof(dils[0]); i++) {
    for (s = 1; s <= 2; s++) {
      const int32_t k = dils[i][0];
      conv_case c = dw_case(3, 1, 40, 37, k, s);
      c.dil_h = dils[i][1];
      c.dil_w = dils[i][2];
      c.pad_top = (k / 2) * c.dil_h;
      c.pad_left = (k / 2) * c.dil_w;
      c.x_zp = rnd_range(-128, 127);
      c.w_zp = s == 2 ? rnd_range(-128, 127) : 0;
      if (i % 3 == 0)
        c.h_in = 5; /* the dilated taps mostly in the padding */
      run_conv_case(&c);
    }
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
  for (k = 0; k < 12; k++) {
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
    case 7: q.w_row_stride = -1; break;
    case 8: q.w_row_stride = 8; break; /* shorter than a row of 9 */
    case 9: q.w_row_stride = 9; break; /* exactly a row: OK */
    /* weight layouts: O16 needs input channels per group in quads (never
     * depthwise), and no other value names one: the reference's
     * TIDSP_ERR_PARAM from every depthwise entry, never a misread */
    case 10: q.w_layout = TIDSP_CONV_W_O16; break;
    case 11: q.w_layout = 7; break;
    }
    st_ref = tidsp_conv2d_i8__ref(&q, xp, w, NULL, rqd, y);
    if (k >= 10)
      CHECK_MSG(st_ref == TIDSP_ERR_PARAM, "ref depthwise layout case %d: %d", (int)k, (int)st_ref);
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
  test_dw_edges();
  test_dw_zero_points();
  test_dw_out_ranges();
  test_dw_multipliers();
  test_dw_channel_batches();
  test_dw_w_row_stride();
  test_dw_bands_strips();
  test_dw_dilations();
  test_dw_not_depthwise();
  UNIT_MAIN_END();
}
