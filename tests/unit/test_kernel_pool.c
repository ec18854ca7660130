/*
 * test_kernel_pool.c — max / average / global-average pooling (int8 and
 * float) against oracles that build the explicitly padded input and scan
 * every window tap. Random kernels, strides, dilations, asymmetric pads,
 * ceil-mode windows that hang past the padding, count_include_pad both
 * ways, both requant kinds, saturation and guard bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 32
#define KT_SEED 0xBF58476D1CE4E5B9ull
#include "kernel_test_util.h"

/* Random geometry; ceil mode may add a last window that starts inside the
 * input but runs past the bottom/right padding. Every window overlaps the
 * input. */
static void random_pool(tidsp_pool2d_params *p) {
  int32_t span_h, span_w;
  memset(p, 0, sizeof(*p));
  p->n = rnd_range(1, 2);
  p->c = rnd_range(1, 4);
  p->k_h = rnd_range(1, 4);
  p->k_w = rnd_range(1, 4);
  p->stride_h = rnd_range(1, 3);
  p->stride_w = rnd_range(1, 3);
  p->dil_h = rnd() % 4 ? 1 : 2;
  p->dil_w = rnd() % 4 ? 1 : 2;
  span_h = p->dil_h * (p->k_h - 1) + 1;
  span_w = p->dil_w * (p->k_w - 1) + 1;
  p->pad_top = rnd_range(0, span_h - 1);
  p->pad_bottom = rnd_range(0, span_h - 1);
  p->pad_left = rnd_range(0, span_w - 1);
  p->pad_right = rnd_range(0, span_w - 1);
  p->h_in = rnd_range(span_h, 14);
  p->w_in = rnd_range(span_w, 14);
  p->h_out = (p->h_in + p->pad_top + p->pad_bottom - span_h) / p->stride_h + 1;
  p->w_out = (p->w_in + p->pad_left + p->pad_right - span_w) / p->stride_w + 1;
  if (rnd() & 1) { /* ceil mode: one more window if it still starts inside */
    if (p->h_out * p->stride_h < p->h_in + p->pad_top)
      p->h_out++;
    if (p->w_out * p->stride_w < p->w_in + p->pad_left)
      p->w_out++;
  }
  p->count_include_pad = (int32_t)(rnd() & 1);
}

/* Visit the taps of output (oh, ow): inside the real input, inside the
 * padded input, and the count of each, by explicit position tests. */
typedef struct window {
  int32_t inside, padded;
  int32_t ih[64], iw[64]; /* the taps inside the real input */
} window;

static void scan_window(const tidsp_pool2d_params *p, int32_t oh, int32_t ow, window *w) {
  int32_t kh, kw;
  w->inside = w->padded = 0;
  for (kh = 0; kh < p->k_h; kh++)
    for (kw = 0; kw < p->k_w; kw++) {
      int32_t ph = oh * p->stride_h + kh * p->dil_h; /* in padded coordinates */
      int32_t pw = ow * p->stride_w + kw * p->dil_w;
      int32_t ih = ph - p->pad_top, iw = pw - p->pad_left;
      if (ph < p->h_in + p->pad_top + p->pad_bottom && pw < p->w_in + p->pad_left + p->pad_right)
        w->padded++;
      if (ih >= 0 && ih < p->h_in && iw >= 0 && iw < p->w_in) {
        w->ih[w->inside] = ih;
        w->iw[w->inside] = iw;
        w->inside++;
      }
    }
}

static void test_maxpool(void) {
  int iter;
  for (iter = 0; iter < 300; iter++) {
    tidsp_pool2d_params p;
    size_t nx, ny, i;
    int8_t *x, *y;
    float *xf, *yf;
    int32_t nc, oh, ow, t, bad = 0;
    random_pool(&p);
    nx = (size_t)p.n * p.c * p.h_in * p.w_in;
    ny = (size_t)p.n * p.c * p.h_out * p.w_out;
    x = malloc(nx);
    xf = malloc(nx * sizeof(float));
    y = guarded(ny);
    yf = guarded(ny * sizeof(float));
    for (i = 0; i < nx; i++) {
      x[i] = (int8_t)rnd_range(-128, 127);
      xf[i] = rnd_unit() * 2.0f - 1.5f; /* mostly negative: padding must not win */
    }
    CHECK(tidsp_maxpool_i8(&p, x, y) == TIDSP_OK);
    CHECK(tidsp_maxpool_f32(&p, xf, yf) == TIDSP_OK);
    for (nc = 0; nc < p.n * p.c && !bad; nc++)
      for (oh = 0; oh < p.h_out; oh++)
        for (ow = 0; ow < p.w_out; ow++) {
          window w;
          int32_t m = -1000;
          float mf = -1e30f;
          size_t o = ((size_t)nc * p.h_out + oh) * p.w_out + ow;
          scan_window(&p, oh, ow, &w);
          for (t = 0; t < w.inside; t++) {
            size_t k = ((size_t)nc * p.h_in + w.ih[t]) * p.w_in + w.iw[t];
            m = x[k] > m ? x[k] : m;
            mf = xf[k] > mf ? xf[k] : mf;
          }
          if (y[o] != m || yf[o] != mf)
            bad = 1;
        }
    CHECK_MSG(!bad, "maxpool k%dx%d s%dx%d d%dx%d", (int)p.k_h, (int)p.k_w, (int)p.stride_h,
              (int)p.stride_w, (int)p.dil_h, (int)p.dil_w);
    CHECK(guards_ok(y, ny) && guards_ok(yf, ny * sizeof(float)));
    free(x);
    free(xf);
    guarded_free(y);
    guarded_free(yf);
  }
  { /* a window entirely in the padding is refused */
    tidsp_pool2d_params p;
    int8_t v[4] = {0}, out[4];
    memset(&p, 0, sizeof(p));
    p.n = p.c = 1;
    p.h_in = p.w_in = 1;
    p.h_out = 1;
    p.w_out = 2;
    p.k_h = p.k_w = 1;
    p.stride_h = p.stride_w = 1;
    p.dil_h = p.dil_w = 1;
    p.pad_left = 1;
    CHECK(tidsp_maxpool_i8(&p, v, out) == TIDSP_ERR_SHAPE);
    p.pad_left = 0;
    p.w_out = 1;
    p.stride_h = 0;
    CHECK(tidsp_maxpool_i8(&p, v, out) == TIDSP_ERR_PARAM);
    CHECK(tidsp_maxpool_f32(&p, NULL, NULL) == TIDSP_ERR_NULL);
  }
}

static void test_avgpool_f32(void) {
  int iter;
  for (iter = 0; iter < 200; iter++) {
    tidsp_pool2d_params p;
    size_t nx, ny, i;
    float *x, *y;
    int32_t nc, oh, ow, t, bad = 0;
    random_pool(&p);
    nx = (size_t)p.n * p.c * p.h_in * p.w_in;
    ny = (size_t)p.n * p.c * p.h_out * p.w_out;
    x = malloc(nx * sizeof(float));
    y = guarded(ny * sizeof(float));
    for (i = 0; i < nx; i++)
      x[i] = rnd_unit() * 2.0f - 1.0f;
    CHECK(tidsp_avgpool_f32(&p, x, y) == TIDSP_OK);
    for (nc = 0; nc < p.n * p.c && !bad; nc++)
      for (oh = 0; oh < p.h_out; oh++)
        for (ow = 0; ow < p.w_out; ow++) {
          window w;
          double s = 0;
          scan_window(&p, oh, ow, &w);
          for (t = 0; t < w.inside; t++)
            s += x[((size_t)nc * p.h_in + w.ih[t]) * p.w_in + w.iw[t]];
          s /= p.count_include_pad ? w.padded : w.inside;
          if (fabs(s - y[((size_t)nc * p.h_out + oh) * p.w_out + ow]) > 1e-6)
            bad = 1;
        }
    CHECK_MSG(!bad, "avgpool_f32 k%dx%d cip%d", (int)p.k_h, (int)p.k_w, (int)p.count_include_pad);
    CHECK(guards_ok(y, ny * sizeof(float)));
    free(x);
    guarded_free(y);
  }
}

/* ORT's QLinearAveragePool in float: the oracle of both requant kinds
 * (Q31 computes the same float32 formula in integers). */
static int32_t avgpool_i8_oracle(const tidsp_avgpool_i8_params *p, const int8_t *xp,
                                 int32_t oh, int32_t ow) {
  const tidsp_pool2d_params *g = &p->pool;
  window w;
  float s = 0.0f, v;
  int64_t r;
  int32_t t, count;
  scan_window(g, oh, ow, &w);
  /* ORT's QLinearAveragePool divides by the kernel size */
  count = g->count_include_pad ? g->k_h * g->k_w : w.inside;
  for (t = 0; t < w.inside; t++)
    s += p->x_scale * (float)(xp[(size_t)w.ih[t] * g->w_in + w.iw[t]] - p->x_zp);
  v = s / (float)count;
  v = v / p->y_scale;
  v = v + (float)(p->y_zp + p->domain_offset);
  r = (int64_t)nearbyintf(v) - p->domain_offset;
  return (int32_t)(r < p->y_min ? p->y_min : (r > p->y_max ? p->y_max : r));
}

/* Run p (geometry, scales set) on random x and compare every output with
 * the oracle; returns 1 if all match. */
static int avgpool_i8_matches(tidsp_avgpool_i8_params *p, const char *what) {
  const tidsp_pool2d_params *g = &p->pool;
  size_t nx = (size_t)g->n * g->c * g->h_in * g->w_in, ny = (size_t)g->n * g->c * g->h_out * g->w_out, i;
  int8_t *x = malloc(nx), *y = guarded(ny);
  int32_t nc, oh, ow, ok = 1;
  for (i = 0; i < nx; i++)
    x[i] = (int8_t)rnd_range(-128, 127);
  CHECK(tidsp_avgpool_i8(p, NULL, x, y) == TIDSP_OK);
  for (nc = 0; nc < g->n * g->c && ok; nc++)
    for (oh = 0; oh < g->h_out && ok; oh++)
      for (ow = 0; ow < g->w_out && ok; ow++) {
        int32_t got = y[((size_t)nc * g->h_out + oh) * g->w_out + ow];
        int32_t want = avgpool_i8_oracle(p, x + (size_t)nc * g->h_in * g->w_in, oh, ow);
        if (got != want) {
          CHECK_MSG(0, "avgpool_i8 %s kind %d k%dx%d s%dx%d pads %d,%d,%d,%d cip%d xs %a ys %a zp %d,%d at %d,%d: got %d want %d",
                    what, (int)p->kind, (int)g->k_h, (int)g->k_w, (int)g->stride_h, (int)g->stride_w,
                    (int)g->pad_top, (int)g->pad_left, (int)g->pad_bottom, (int)g->pad_right,
                    (int)g->count_include_pad, (double)p->x_scale, (double)p->y_scale, (int)p->x_zp,
                    (int)p->y_zp, (int)oh, (int)ow, (int)got, (int)want);
          ok = 0;
        }
      }
  CHECK(guards_ok(y, ny));
  free(x);
  guarded_free(y);
  return ok;
}

static void test_avgpool_i8(void) {
  int iter;
  for (iter = 0; iter < 300; iter++) {
    tidsp_avgpool_i8_params p;
    memset(&p, 0, sizeof(p));
    random_pool(&p.pool);
    p.kind = iter & 1 ? TIDSP_REQUANT_FLOAT : TIDSP_REQUANT_Q31;
    p.domain_offset = iter % 4 < 2 ? 128 : 0;
    p.x_scale = ldexpf(rnd_unit() + 0.5f, -rnd_range(4, 8));
    p.y_scale = iter % 7 == 0 ? p.x_scale / 8.0f /* saturates */
                              : p.x_scale * (rnd_unit() + 0.5f);
    p.x_zp = rnd_range(-128, 127);
    p.y_zp = rnd_range(-100, 100);
    p.y_min = iter % 5 == 0 ? p.y_zp : -128;
    p.y_max = 127;
    avgpool_i8_matches(&p, "random");
  }
  {
    tidsp_avgpool_i8_params p;
    int8_t v = 0;
    memset(&p, 0, sizeof(p));
    p.pool.n = p.pool.c = p.pool.h_in = p.pool.w_in = p.pool.h_out = p.pool.w_out = 1;
    p.pool.k_h = p.pool.k_w = p.pool.stride_h = p.pool.stride_w = p.pool.dil_h = p.pool.dil_w = 1;
    p.y_min = -128;
    p.y_max = 127;
    p.kind = TIDSP_REQUANT_Q31;
    p.x_scale = 0.0f; /* a scale must be positive */
    p.y_scale = 1.0f;
    CHECK(tidsp_avgpool_i8(&p, NULL, &v, &v) == TIDSP_ERR_PARAM);
    p.kind = 3;
    CHECK(tidsp_avgpool_i8(&p, NULL, &v, &v) == TIDSP_ERR_PARAM);
  }
}

/* -requant=q31 is bit-identical to float on every window form: each
 * kernel 1..4 × 1..4, stride 1..3 × 1..3, every symmetric pad below the
 * kernel, count_include_pad both ways, ceil mode both ways, for equal
 * input and output scales (the exact average is often a tie: the divisor-6
 * case of a trained OCR recognizer, kernel [3,2], zero point −124, was
 * 94 % exact with a one-rounding multiplier) and for unequal ones. */
static void test_avgpool_i8_q31_equals_float(void) {
  int kh, kw, sh, sw, ph, pw, cip, ceil_mode, sc, cases = 0;
  for (kh = 1; kh <= 4; kh++)
    for (kw = 1; kw <= 4; kw++)
      for (sh = 1; sh <= 3; sh++)
        for (sw = 1; sw <= 3; sw++)
          for (ph = 0; ph < kh; ph++)
            for (pw = 0; pw < kw; pw++)
              for (cip = 0; cip < 2; cip++)
                for (ceil_mode = 0; ceil_mode < 2; ceil_mode++)
                  for (sc = 0; sc < 3; sc++) {
                    tidsp_avgpool_i8_params p;
                    tidsp_pool2d_params *g = &p.pool;
                    memset(&p, 0, sizeof(p));
                    g->n = 1;
                    g->c = 2;
                    g->k_h = kh; g->k_w = kw;
                    g->stride_h = sh; g->stride_w = sw;
                    g->dil_h = g->dil_w = 1;
                    g->pad_top = g->pad_bottom = ph;
                    g->pad_left = g->pad_right = pw;
                    g->h_in = 7 + sh;
                    g->w_in = 6 + sw;
                    g->h_out = (g->h_in + 2 * ph - kh) / sh + 1;
                    g->w_out = (g->w_in + 2 * pw - kw) / sw + 1;
                    if (ceil_mode) {
                      if (g->h_out * sh < g->h_in + ph) g->h_out++;
                      if (g->w_out * sw < g->w_in + pw) g->w_out++;
                    }
                    g->count_include_pad = cip;
                    p.domain_offset = sc == 2 ? 128 : 0;
                    p.x_scale = sc == 0 ? 0.0235294122f : ldexpf(rnd_unit() + 0.5f, -rnd_range(3, 8));
                    p.y_scale = sc == 0 ? p.x_scale : p.x_scale * (rnd_unit() + 0.5f);
                    p.x_zp = sc == 0 ? -124 : rnd_range(-128, 127);
                    p.y_zp = sc == 0 ? -124 : rnd_range(-100, 100);
                    p.y_min = -128;
                    p.y_max = 127;
                    p.kind = TIDSP_REQUANT_Q31;
                    if (!avgpool_i8_matches(&p, "q31==float")) return;
                    cases++;
                  }
  CHECK(cases == 100 * 9 * 2 * 2 * 3);
}

static void test_global_avgpool(void) {
  int iter;
  for (iter = 0; iter < 100; iter++) {
    tidsp_gap_i8_params p;
    tidsp_gap_f32_params pf;
    union { float f; int32_t q[2]; } rq;
    int8_t *x, *y;
    float *xf, *yf;
    int32_t c, i, bad = 0;
    p.nc = rnd_range(1, 20);
    p.hw = rnd_range(1, 300);
    p.x_zp = rnd_range(-128, 127);
    p.rq.kind = iter & 1 ? TIDSP_REQUANT_FLOAT : TIDSP_REQUANT_Q31;
    p.rq.per_channel = 0;
    p.rq.out_zp = rnd_range(-50, 50);
    p.rq.out_min = iter % 4 == 0 ? p.rq.out_zp : -128;
    p.rq.out_max = 127;
    if (p.rq.kind == TIDSP_REQUANT_FLOAT) {
      rq.f = (float)((rnd_unit() + 0.5) / p.hw);
    } else {
      int e;
      double f = frexp((rnd_unit() + 0.5) / p.hw, &e);
      rq.q[0] = (int32_t)(f * 16777216.0); /* a 24-bit significand */
      rq.q[1] = 24 - e;
    }
    pf.nc = p.nc;
    pf.hw = p.hw;
    pf.nchwc = iter % 3 == 0; /* either order: within a tolerance of the exact mean */
    x = malloc((size_t)p.nc * p.hw);
    xf = malloc(sizeof(float) * (size_t)p.nc * p.hw);
    y = guarded((size_t)p.nc);
    yf = guarded(sizeof(float) * (size_t)p.nc);
    for (i = 0; i < p.nc * p.hw; i++) {
      x[i] = (int8_t)rnd_range(-128, 127);
      xf[i] = rnd_unit();
    }
    CHECK(tidsp_global_avgpool_i8(&p, &rq, x, y) == TIDSP_OK);
    CHECK(tidsp_global_avgpool_f32(&pf, xf, yf) == TIDSP_OK);
    for (c = 0; c < p.nc; c++) {
      int64_t acc = 0;
      double s = 0;
      int32_t want;
      for (i = 0; i < p.hw; i++) {
        acc += x[c * p.hw + i] - p.x_zp;
        s += xf[c * p.hw + i];
      }
      want = tidsp_requant_one(&p.rq, &rq, 1, 0, (int32_t)acc);
      if (y[c] != want || fabs(s / p.hw - yf[c]) > 1e-6)
        bad = 1;
    }
    CHECK_MSG(!bad, "global_avgpool kind %d nc %d hw %d", (int)p.rq.kind, (int)p.nc, (int)p.hw);
    CHECK(guards_ok(y, (size_t)p.nc) && guards_ok(yf, sizeof(float) * (size_t)p.nc));
    free(x);
    free(xf);
    guarded_free(y);
    guarded_free(yf);
  }
  {
    tidsp_gap_i8_params p = {1, 1, 0, {TIDSP_REQUANT_FLOAT, 1, 0, -128, 127}};
    float m = 1.0f;
    int8_t v = 0;
    CHECK(tidsp_global_avgpool_i8(&p, &m, &v, &v) == TIDSP_ERR_PARAM); /* per-channel */
    p.rq.per_channel = 0;
    p.hw = 0;
    CHECK(tidsp_global_avgpool_i8(&p, &m, &v, &v) == TIDSP_ERR_SHAPE);
  }
}

int main(void) {
  test_maxpool();
  test_avgpool_f32();
  test_avgpool_i8();
  test_avgpool_i8_q31_equals_float();
  test_global_avgpool();
  UNIT_MAIN_END();
}
