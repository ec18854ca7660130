/*
 * test_kernel_conv_transpose.c — conv_transpose2d_f32 against a gather
 * oracle: each output position sums, over the input positions and taps
 * that reach it, in double (the kernel scatters in float; results agree
 * to float rounding). Random strides, dilations, pads, groups, output
 * sizes past the full extent (bias only there), batch > 1, no bias;
 * argument checks (the public name: on an x86 host ONNX Runtime's order,
 * host/conv_transpose2d_f32__host_mlas.c). conv_transpose_nd_f32: with 2
 * spatial dims the 2-D reference's bytes (both references), with 3 a 3-D
 * gather oracle.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 32
#define KT_SEED 0x9E3779B97F4A7C15ull
#include "kernel_test_util.h"

static double oracle(const tidsp_conv2d_params *p, const float *x, const float *w, const float *b, int32_t n,
                     int32_t co, int32_t oh, int32_t ow) {
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups, g = co / cpg_out;
  double acc = b ? (double)b[co] : 0.0;
  int32_t ci, kh, kw;
  for (ci = g * cpg_in; ci < (g + 1) * cpg_in; ci++)
    for (kh = 0; kh < p->k_h; kh++)
      for (kw = 0; kw < p->k_w; kw++) {
        const int32_t th = oh + p->pad_top - kh * p->dil_h, tw = ow + p->pad_left - kw * p->dil_w;
        if (th < 0 || tw < 0 || th % p->stride_h || tw % p->stride_w)
          continue;
        if (th / p->stride_h >= p->h_in || tw / p->stride_w >= p->w_in)
          continue;
        acc += (double)x[(((size_t)n * (size_t)p->c_in + (size_t)ci) * (size_t)p->h_in + (size_t)(th / p->stride_h)) *
                             (size_t)p->w_in + (size_t)(tw / p->stride_w)] *
               (double)w[(((size_t)ci * (size_t)cpg_out + (size_t)(co % cpg_out)) * (size_t)p->k_h + (size_t)kh) *
                             (size_t)p->k_w + (size_t)kw];
      }
  return acc;
}

static void test_random(void) {
  int iter;
  for (iter = 0; iter < 150; iter++) {
    tidsp_conv2d_params p;
    float *x, *w, *b, *y;
    size_t nx, nw, ny, i;
    int32_t n, co, oh, ow, bad = 0;
    memset(&p, 0, sizeof p);
    p.groups = rnd_range(1, 3);
    p.n = rnd_range(1, 2);
    p.c_in = p.groups * rnd_range(1, 3);
    p.c_out = p.groups * rnd_range(1, 3);
    p.h_in = rnd_range(1, 6);
    p.w_in = rnd_range(1, 6);
    p.k_h = rnd_range(1, 4);
    p.k_w = rnd_range(1, 4);
    p.stride_h = rnd_range(1, 3);
    p.stride_w = rnd_range(1, 3);
    p.dil_h = rnd_range(1, 2);
    p.dil_w = rnd_range(1, 2);
    p.pad_top = rnd_range(0, p.k_h - 1);
    p.pad_left = rnd_range(0, p.k_w - 1);
    /* the full extent minus the begin pad, give or take (past it: bias only) */
    p.h_out = (p.h_in - 1) * p.stride_h + (p.k_h - 1) * p.dil_h + 1 - p.pad_top + rnd_range(-1, 1);
    p.w_out = (p.w_in - 1) * p.stride_w + (p.k_w - 1) * p.dil_w + 1 - p.pad_left + rnd_range(-1, 1);
    if (p.h_out < 1) p.h_out = 1;
    if (p.w_out < 1) p.w_out = 1;
    nx = (size_t)p.n * (size_t)p.c_in * (size_t)p.h_in * (size_t)p.w_in;
    nw = (size_t)p.c_in * (size_t)(p.c_out / p.groups) * (size_t)p.k_h * (size_t)p.k_w;
    ny = (size_t)p.n * (size_t)p.c_out * (size_t)p.h_out * (size_t)p.w_out;
    x = malloc(nx * sizeof(float));
    w = malloc(nw * sizeof(float));
    b = malloc((size_t)p.c_out * sizeof(float));
    y = guarded(ny * sizeof(float));
    for (i = 0; i < nx; i++) x[i] = rnd_unit() * 2.0f - 1.0f;
    for (i = 0; i < nw; i++) w[i] = rnd_unit() * 2.0f - 1.0f;
    for (i = 0; i < (size_t)p.c_out; i++) b[i] = rnd_unit() - 0.5f;
    CHECK(tidsp_conv_transpose2d_f32(&p, x, w, iter % 3 ? b : NULL, y) == TIDSP_OK);
    for (n = 0; n < p.n && !bad; n++)
      for (co = 0; co < p.c_out && !bad; co++)
        for (oh = 0; oh < p.h_out && !bad; oh++)
          for (ow = 0; ow < p.w_out && !bad; ow++) {
            const double want = oracle(&p, x, w, iter % 3 ? b : NULL, n, co, oh, ow);
            const float got = y[(((size_t)n * (size_t)p.c_out + (size_t)co) * (size_t)p.h_out + (size_t)oh) *
                                    (size_t)p.w_out + (size_t)ow];
            if (fabs((double)got - want) > 1e-5 * (1.0 + fabs(want))) {
              CHECK_MSG(0, "iter %d at (%d,%d,%d,%d): got %.9g want %.9g", iter, n, co, oh, ow, (double)got, want);
              bad = 1;
            }
          }
    CHECK(guards_ok(y, ny * sizeof(float)));
    free(x);
    free(w);
    free(b);
    guarded_free(y);
  }
}

/* the N-D kernel's parameters for a 2-D problem */
static void nd_of_2d(const tidsp_conv2d_params *p, tidsp_conv_transpose_nd_params *q) {
  memset(q, 0, sizeof *q);
  q->n = p->n, q->c_in = p->c_in, q->c_out = p->c_out, q->groups = p->groups, q->dims = 2;
  q->in[0] = p->h_in, q->in[1] = p->w_in, q->out[0] = p->h_out, q->out[1] = p->w_out;
  q->k[0] = p->k_h, q->k[1] = p->k_w, q->stride[0] = p->stride_h, q->stride[1] = p->stride_w;
  q->dil[0] = p->dil_h, q->dil[1] = p->dil_w, q->pad_begin[0] = p->pad_top, q->pad_begin[1] = p->pad_left;
}

static void test_nd(void) {
  int iter;
  for (iter = 0; iter < 120; iter++) {
    tidsp_conv_transpose_nd_params q;
    int32_t d, co, nn, o[3], ci, t[3];
    size_t nx = 1, nw = 1, ny = 1, i;
    int bad = 0;
    memset(&q, 0, sizeof q);
    q.groups = rnd_range(1, 2);
    q.n = rnd_range(1, 2);
    q.c_in = q.groups * rnd_range(1, 2);
    q.c_out = q.groups * rnd_range(1, 2);
    q.dims = 3;
    for (d = 0; d < 3; d++) {
      q.in[d] = rnd_range(1, 4);
      q.k[d] = rnd_range(1, 3);
      q.stride[d] = rnd_range(1, 3);
      q.dil[d] = rnd_range(1, 2);
      q.pad_begin[d] = rnd_range(0, q.k[d] - 1);
      q.out[d] = (q.in[d] - 1) * q.stride[d] + (q.k[d] - 1) * q.dil[d] + 1 - q.pad_begin[d] + rnd_range(-1, 1);
      if (q.out[d] < 1) q.out[d] = 1;
      nx *= (size_t)q.in[d];
      nw *= (size_t)q.k[d];
      ny *= (size_t)q.out[d];
    }
    const size_t plane_in = nx, plane_out = ny, taps = nw;
    nx *= (size_t)q.n * (size_t)q.c_in;
    nw *= (size_t)q.c_in * (size_t)(q.c_out / q.groups);
    ny *= (size_t)q.n * (size_t)q.c_out;
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)), *b = malloc((size_t)q.c_out * sizeof(float));
    float *y = guarded(ny * sizeof(float));
    for (i = 0; i < nx; i++) x[i] = rnd_unit() * 2.0f - 1.0f;
    for (i = 0; i < nw; i++) w[i] = rnd_unit() * 2.0f - 1.0f;
    for (i = 0; i < (size_t)q.c_out; i++) b[i] = rnd_unit() - 0.5f;
    CHECK(tidsp_conv_transpose_nd_f32(&q, x, w, iter % 3 ? b : NULL, y) == TIDSP_OK);
    const int32_t cpg_in = q.c_in / q.groups, cpg_out = q.c_out / q.groups;
    for (nn = 0; nn < q.n && !bad; nn++)
      for (co = 0; co < q.c_out && !bad; co++)
        for (o[0] = 0; o[0] < q.out[0]; o[0]++)
          for (o[1] = 0; o[1] < q.out[1]; o[1]++)
            for (o[2] = 0; o[2] < q.out[2] && !bad; o[2]++) {
              const int32_t g = co / cpg_out;
              double want = iter % 3 ? (double)b[co] : 0.0;
              for (ci = g * cpg_in; ci < (g + 1) * cpg_in; ci++)
                for (t[0] = 0; t[0] < q.k[0]; t[0]++)
                  for (t[1] = 0; t[1] < q.k[1]; t[1]++)
                    for (t[2] = 0; t[2] < q.k[2]; t[2]++) {
                      size_t xi = 0, wi = 0;
                      int ok = 1;
                      for (d = 0; d < 3; d++) {
                        const int32_t th = o[d] + q.pad_begin[d] - t[d] * q.dil[d];
                        ok = ok && th >= 0 && th % q.stride[d] == 0 && th / q.stride[d] < q.in[d];
                        xi = xi * (size_t)q.in[d] + (size_t)(ok ? th / q.stride[d] : 0);
                        wi = wi * (size_t)q.k[d] + (size_t)t[d];
                      }
                      if (ok)
                        want += (double)x[((size_t)nn * (size_t)q.c_in + (size_t)ci) * plane_in + xi] *
                                (double)w[((size_t)ci * (size_t)cpg_out + (size_t)(co % cpg_out)) * taps + wi];
                    }
              const float got = y[((size_t)nn * (size_t)q.c_out + (size_t)co) * plane_out +
                                  ((size_t)o[0] * (size_t)q.out[1] + (size_t)o[1]) * (size_t)q.out[2] + (size_t)o[2]];
              if (fabs((double)got - want) > 1e-5 * (1.0 + fabs(want))) {
                CHECK_MSG(0, "3-D iter %d: got %.9g want %.9g", iter, (double)got, want);
                bad = 1;
              }
            }
    CHECK(guards_ok(y, ny * sizeof(float)));
    free(x), free(w), free(b);
    guarded_free(y);
  }
  for (iter = 0; iter < 60; iter++) { /* 2 spatial dims: the 2-D kernel's bytes */
    tidsp_conv2d_params p;
    tidsp_conv_transpose_nd_params q;
    size_t nx, nw, ny, i;
    memset(&p, 0, sizeof p);
    p.groups = rnd_range(1, 2);
    p.n = 1;
    p.c_in = p.groups * rnd_range(1, 3);
    p.c_out = p.groups * rnd_range(1, 3);
    p.h_in = rnd_range(1, 5), p.w_in = rnd_range(1, 5);
    p.k_h = rnd_range(1, 3), p.k_w = rnd_range(1, 3);
    p.stride_h = rnd_range(1, 3), p.stride_w = rnd_range(1, 3);
    p.dil_h = rnd_range(1, 2), p.dil_w = rnd_range(1, 2);
    p.pad_top = rnd_range(0, p.k_h - 1), p.pad_left = rnd_range(0, p.k_w - 1);
    p.h_out = (p.h_in - 1) * p.stride_h + (p.k_h - 1) * p.dil_h + 1 - p.pad_top;
    p.w_out = (p.w_in - 1) * p.stride_w + (p.k_w - 1) * p.dil_w + 1 - p.pad_left;
    nd_of_2d(&p, &q);
    nx = (size_t)p.c_in * (size_t)p.h_in * (size_t)p.w_in;
    nw = (size_t)p.c_in * (size_t)(p.c_out / p.groups) * (size_t)p.k_h * (size_t)p.k_w;
    ny = (size_t)p.c_out * (size_t)p.h_out * (size_t)p.w_out;
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)), *b = malloc((size_t)p.c_out * sizeof(float));
    float *y2 = malloc(ny * sizeof(float)), *yn = malloc(ny * sizeof(float));
    for (i = 0; i < nx; i++) x[i] = rnd_unit() * 2.0f - 1.0f;
    for (i = 0; i < nw; i++) w[i] = rnd_unit() * 2.0f - 1.0f;
    for (i = 0; i < (size_t)p.c_out; i++) b[i] = rnd_unit() - 0.5f;
    CHECK(tidsp_conv_transpose2d_f32__ref(&p, x, w, b, y2) == TIDSP_OK);
    CHECK(tidsp_conv_transpose_nd_f32__ref(&q, x, w, b, yn) == TIDSP_OK);
    CHECK_MSG(!memcmp(y2, yn, ny * sizeof(float)), "2-D iter %d", iter);
    free(x), free(w), free(b), free(y2), free(yn);
  }
  {
    tidsp_conv_transpose_nd_params q;
    float v = 1.0f;
    memset(&q, 0, sizeof q);
    q.n = q.c_in = q.c_out = q.groups = 1;
    q.dims = 3;
    q.in[0] = q.in[1] = q.in[2] = q.out[0] = q.out[1] = q.out[2] = 1;
    q.k[0] = q.k[1] = q.k[2] = q.stride[0] = q.stride[1] = q.stride[2] = q.dil[0] = q.dil[1] = q.dil[2] = 1;
    CHECK(tidsp_conv_transpose_nd_f32(&q, &v, &v, NULL, &v) == TIDSP_OK);
    CHECK(tidsp_conv_transpose_nd_f32(NULL, &v, &v, NULL, &v) == TIDSP_ERR_NULL);
    q.dims = 0;
    CHECK(tidsp_conv_transpose_nd_f32(&q, &v, &v, NULL, &v) == TIDSP_ERR_SHAPE);
    q.dims = 3;
    q.groups = 2;
    CHECK(tidsp_conv_transpose_nd_f32(&q, &v, &v, NULL, &v) == TIDSP_ERR_SHAPE);
  }
}

static void test_args(void) {
  tidsp_conv2d_params p;
  float v = 1.0f, y[9];
  memset(&p, 0, sizeof p);
  p.n = p.c_in = p.c_out = p.h_in = p.w_in = p.k_h = p.k_w = 1;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = p.groups = 1;
  p.h_out = p.w_out = 3; /* 1×1 input, 1×1 kernel: one value, the rest bias */
  {
    float bias = 0.5f;
    CHECK(tidsp_conv_transpose2d_f32(&p, &v, &v, &bias, y) == TIDSP_OK && y[0] == 1.5f && y[8] == 0.5f);
  }
  CHECK(tidsp_conv_transpose2d_f32(NULL, &v, &v, NULL, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_conv_transpose2d_f32(&p, &v, NULL, NULL, y) == TIDSP_ERR_NULL);
  p.groups = 2;
  CHECK(tidsp_conv_transpose2d_f32(&p, &v, &v, NULL, y) == TIDSP_ERR_SHAPE);
  p.groups = 1;
  p.stride_h = 0;
  CHECK(tidsp_conv_transpose2d_f32(&p, &v, &v, NULL, y) == TIDSP_ERR_SHAPE);
  p.stride_h = 1;
  p.pad_top = -1;
  CHECK(tidsp_conv_transpose2d_f32(&p, &v, &v, NULL, y) == TIDSP_ERR_SHAPE);
}

int main(void) {
  test_nd();
  test_random();
  test_args();
  UNIT_MAIN_END();
}
