/*
 * test_kernel_conv_transpose_mlas.c — the ONNX Runtime-order float
 * ConvTranspose, 2-D and N-D
 * (runtime/kernels/host/conv_transpose2d_f32__host_mlas.c)
 * bit for bit against a scalar model written per output element, the way
 * ORT's col2im gathers it:
 *
 *   y = 0; for each tap (kh, kw) in order that lands on (oh, ow):
 *     y = y + col, col = the SGEMM dot product over the group's input
 *     channels in K strides (128 when N ≥ K, else 256 / 512 / 1024 for
 *     N ≤ 64 / 32 / 16, N = h_in·w_in), each stride from 0 with fmaf, the
 *     first stored and the later ones added (part + col);
 *   then y + bias.
 *
 * The N-D kernel: 3-D shapes against the same model with a third dim, and
 * with two dims the 2-D kernel's bytes.
 *
 * Also: the shapes the kernel leaves to the reference (GEMM M = 1 or N = 1
 * with more than one input channel per group; a CPU whose MLAS has no FMA)
 * give the reference's bytes; the reference stays within a tolerance of
 * the model; guard bytes around every output; the dispatch row; NULL and
 * bad shapes answer as the reference does. tests/e2e/test_conv_mlas_vs_ort.py
 * checks the order against ONNX Runtime itself.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x5DEECE66Dull
#include "kernel_test_util.h"

#if TIDSP_HAVE_HOST_X86

/* MLAS's unpacked-SGEMM K stride, as a table of N (see the header) */
static int32_t model_stride(int32_t k, int32_t nn) {
  if (nn >= k) return 128;
  return nn <= 16 ? 1024 : nn <= 32 ? 512 : nn <= 64 ? 256 : 128;
}

static float model_col(const tidsp_conv2d_params *p, const float *x, const float *w, int32_t n, int32_t co,
                       int32_t kh, int32_t kw, int32_t ih, int32_t iw) {
  const int32_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups, g = co / cpg_out;
  const int32_t stride = model_stride(cpg_in, p->h_in * p->w_in);
  float col = 0.0f;
  int32_t k0, k;
  for (k0 = 0; k0 < cpg_in; k0 += stride) {
    float part = 0.0f;
    for (k = k0; k < cpg_in && k < k0 + stride; k++) {
      const int32_t ci = g * cpg_in + k;
      const float xv = x[(((size_t)n * (size_t)p->c_in + (size_t)ci) * (size_t)p->h_in + (size_t)ih) *
                             (size_t)p->w_in + (size_t)iw];
      const float wv = w[(((size_t)ci * (size_t)cpg_out + (size_t)(co % cpg_out)) * (size_t)p->k_h + (size_t)kh) *
                             (size_t)p->k_w + (size_t)kw];
      part = fmaf(wv, xv, part);
    }
    col = k0 == 0 ? part : part + col;
  }
  return col;
}

static float model_out(const tidsp_conv2d_params *p, const float *x, const float *w, const float *bias,
                       int32_t n, int32_t co, int32_t oh, int32_t ow) {
  float y = 0.0f;
  int32_t kh, kw;
  for (kh = 0; kh < p->k_h; kh++) {
    const int32_t th = oh + p->pad_top - kh * p->dil_h;
    if (th < 0 || th % p->stride_h || th / p->stride_h >= p->h_in)
      continue;
    for (kw = 0; kw < p->k_w; kw++) {
      const int32_t tw = ow + p->pad_left - kw * p->dil_w;
      if (tw < 0 || tw % p->stride_w || tw / p->stride_w >= p->w_in)
        continue;
      y = y + model_col(p, x, w, n, co, kh, kw, th / p->stride_h, tw / p->stride_w);
    }
  }
  return bias ? y + bias[co] : y;
}

/* Every column width this CPU has (16: AVX-512F, 8: AVX2, 0: scalar)
 * gives the dispatched kernel's bytes y. */
static void check_lanes(const tidsp_conv2d_params *p, const float *x, const float *w, const float *bias,
                        const float *y, size_t ny) {
  static const int32_t widths[3] = {16, 8, 0};
  float *z = guarded(ny * sizeof(float));
  int i;
  __builtin_cpu_init();
  for (i = 0; i < 3; i++) {
    if ((widths[i] == 16 && !__builtin_cpu_supports("avx512f")) ||
        (widths[i] == 8 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))))
      continue;
    memset(z, 0x7f, ny * sizeof(float));
    CHECK(tidsp_conv_transpose2d_f32__host_mlas_lanes(p, x, w, bias, z, widths[i]) == TIDSP_OK);
    CHECK_MSG(!memcmp(y, z, ny * sizeof(float)) && guards_ok(z, ny * sizeof(float)),
              "c_in %d c_out %d %dx%d k %dx%d: lanes %d differ", p->c_in, p->c_out, p->h_in, p->w_in, p->k_h,
              p->k_w, widths[i]);
  }
  guarded_free(z);
}

/* Runs the kernel on p (random data), compares with the model, or with
 * the reference's bytes where the kernel keeps the reference. */
static void check(tidsp_conv2d_params p, int with_bias) {
  const int32_t cpg_in = p.c_in / p.groups, cpg_out = p.c_out / p.groups;
  const size_t nx = (size_t)p.n * (size_t)p.c_in * (size_t)p.h_in * (size_t)p.w_in;
  const size_t nw = (size_t)p.c_in * (size_t)cpg_out * (size_t)p.k_h * (size_t)p.k_w;
  const size_t ny = (size_t)p.n * (size_t)p.c_out * (size_t)p.h_out * (size_t)p.w_out;
  const int falls_back = tidsp_mlas_f32_block() == 0 ||
                         ((cpg_out * p.k_h * p.k_w == 1 || p.h_in * p.w_in == 1) && cpg_in > 1);
  float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)), *b = malloc((size_t)p.c_out * sizeof(float));
  float *y = guarded(ny * sizeof(float)), *r = guarded(ny * sizeof(float));
  const float *bias = with_bias ? b : NULL;
  size_t i;
  int32_t n, co, oh, ow, bad = 0;

  for (i = 0; i < nx; i++) x[i] = rnd_unit() * 2.0f - 1.0f;
  for (i = 0; i < nw; i++) w[i] = (rnd_unit() * 2.0f - 1.0f) / 8.0f;
  for (i = 0; i < (size_t)p.c_out; i++) b[i] = rnd_unit() - 0.5f;
  CHECK(tidsp_conv_transpose2d_f32__host_mlas(&p, x, w, bias, y) == TIDSP_OK);
  CHECK(tidsp_conv_transpose2d_f32__ref(&p, x, w, bias, r) == TIDSP_OK);
  CHECK(guards_ok(y, ny * sizeof(float)) && guards_ok(r, ny * sizeof(float)));
  check_lanes(&p, x, w, bias, y, ny);
  if (falls_back) {
    CHECK_MSG(!memcmp(y, r, ny * sizeof(float)), "c_in %d c_out %d k %dx%d: not the reference's bytes", p.c_in,
              p.c_out, p.k_h, p.k_w);
  } else {
    for (n = 0; n < p.n && !bad; n++)
      for (co = 0; co < p.c_out && !bad; co++)
        for (oh = 0; oh < p.h_out && !bad; oh++)
          for (ow = 0; ow < p.w_out && !bad; ow++) {
            const size_t at = (((size_t)n * (size_t)p.c_out + (size_t)co) * (size_t)p.h_out + (size_t)oh) *
                                  (size_t)p.w_out + (size_t)ow;
            const float want = model_out(&p, x, w, bias, n, co, oh, ow);
            if (memcmp(&y[at], &want, sizeof want) != 0) {
              CHECK_MSG(0, "c_in %d c_out %d g %d %dx%d k %dx%d s %d p %d d %d at (%d,%d,%d,%d): %.9g, model %.9g",
                        p.c_in, p.c_out, p.groups, p.h_in, p.w_in, p.k_h, p.k_w, p.stride_h, p.pad_top, p.dil_h, n,
                        co, oh, ow, (double)y[at], (double)want);
              bad = 1;
            }
            /* the reference sums the same products in another order */
            if (fabsf(r[at] - want) > 1e-4f * (1.0f + fabsf(want))) {
              CHECK_MSG(0, "reference %.9g far from the model %.9g", (double)r[at], (double)want);
              bad = 1;
            }
          }
    if (!bad)
      CHECK(1);
  }
  free(x), free(w), free(b);
  guarded_free(y), guarded_free(r);
}

/* ONNX's output size without output_padding: (in − 1)·s + (k − 1)·d + 1 − pads; extra > 0 reaches past
 * the last tap (bias only there, as output_padding / output_shape give) */
static tidsp_conv2d_params geometry(int32_t n, int32_t c_in, int32_t c_out, int32_t h, int32_t w, int32_t k,
                                    int32_t s, int32_t pad, int32_t d, int32_t groups, int32_t extra) {
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = n, p.c_in = c_in, p.c_out = c_out, p.h_in = h, p.w_in = w, p.k_h = k, p.k_w = k;
  p.stride_h = p.stride_w = s, p.dil_h = p.dil_w = d, p.pad_top = p.pad_left = pad, p.groups = groups;
  p.h_out = (h - 1) * s + (k - 1) * d + 1 - 2 * pad + extra;
  p.w_out = (w - 1) * s + (k - 1) * d + 1 - 2 * pad + extra;
  return p;
}

static void test_named(void) {
  check(geometry(1, 24, 24, 40, 40, 2, 2, 0, 1, 1, 0), 0); /* PP-OCR det's: no overlapping taps */
  check(geometry(1, 24, 1, 80, 80, 2, 2, 0, 1, 1, 0), 1);  /* det's second: M = 4 */
  check(geometry(1, 8, 6, 7, 9, 3, 1, 0, 1, 1, 0), 1);     /* stride 1: 9 taps overlap */
  check(geometry(2, 16, 8, 6, 5, 4, 2, 1, 1, 1, 0), 1);    /* pads, batch 2 */
  check(geometry(1, 6, 4, 5, 5, 3, 2, 2, 2, 1, 1), 1);     /* dilation, output past the last tap */
  check(geometry(1, 12, 8, 4, 4, 3, 2, 1, 1, 4, 1), 1);    /* groups */
  check(geometry(1, 300, 4, 5, 6, 2, 2, 0, 1, 1, 0), 1);   /* K = 300, N = 30: strides of 512 */
  check(geometry(1, 300, 4, 3, 4, 3, 1, 0, 1, 1, 0), 1);   /* N = 12: one stride of 1024 */
  check(geometry(1, 200, 3, 15, 15, 2, 2, 0, 1, 1, 0), 0); /* N = 225 ≥ K: strides of 128 */
  check(geometry(1, 130, 2, 8, 7, 2, 1, 0, 1, 2, 0), 1);   /* N = 56 < K = 65 per group: 256 */
  check(geometry(1, 3, 5, 40, 300, 2, 2, 0, 1, 1, 0), 1);  /* rows wider than the stack columns */
  check(geometry(1, 7, 3, 3, 97, 2, 2, 0, 1, 1, 0), 1);   /* 64 + 33 columns: 4 vectors, then a ragged 3 */
  check(geometry(1, 9, 2, 2, 8, 3, 1, 1, 1, 1, 0), 1);    /* exactly one ymm row, pads */
  check(geometry(1, 1, 3, 4, 4, 3, 1, 0, 1, 1, 0), 1);     /* one input channel */
  check(geometry(1, 5, 1, 4, 4, 1, 1, 0, 1, 1, 0), 1);     /* M = 1: the reference */
  check(geometry(1, 5, 3, 1, 1, 3, 1, 0, 1, 1, 0), 1);     /* N = 1: the reference */
  check(geometry(1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0), 1);     /* M = N = K = 1: one product */
}

static void test_random(void) {
  int it;
  for (it = 0; it < 60; it++) {
    const int32_t groups = rnd_range(1, 3), k = rnd_range(1, 4), s = rnd_range(1, 3), d = rnd_range(1, 2);
    const int32_t pad = rnd_range(0, (k - 1) * d), big = it % 10 == 0;
    tidsp_conv2d_params p = geometry(rnd_range(1, 2), groups * (big ? rnd_range(100, 400) : rnd_range(1, 20)),
                                     groups * rnd_range(1, 6), rnd_range(1, 9), rnd_range(1, 11), k, s, pad, d,
                                     groups, rnd_range(0, s - 1));
    if (p.h_out < 1 || p.w_out < 1)
      continue;
    check(p, it % 3 != 0);
  }
}

/* 3-D: the model with a third spatial dim (taps in row-major order), as
 * one flat loop over outputs; also the N-D kernel with two dims equals the
 * 2-D kernel's bytes. */
static float model3(const tidsp_conv_transpose_nd_params *q, const float *x, const float *w, const float *bias,
                    int32_t co, const int32_t *o) {
  const int32_t cpg_in = q->c_in / q->groups, cpg_out = q->c_out / q->groups, g = co / cpg_out;
  const int32_t nn = q->in[0] * q->in[1] * q->in[2], taps = q->k[0] * q->k[1] * q->k[2];
  const int32_t stride = model_stride(cpg_in, nn);
  float y = 0.0f;
  int32_t t, d, k0, k;
  for (t = 0; t < taps; t++) {
    const int32_t tk[3] = {t / (q->k[1] * q->k[2]), t / q->k[2] % q->k[1], t % q->k[2]};
    int32_t i = 0, ok = 1;
    float col = 0.0f;
    for (d = 0; d < 3 && ok; d++) {
      const int32_t v = o[d] + q->pad_begin[d] - tk[d] * q->dil[d];
      ok = v >= 0 && v % q->stride[d] == 0 && v / q->stride[d] < q->in[d];
      i = i * q->in[d] + (ok ? v / q->stride[d] : 0);
    }
    if (!ok)
      continue;
    for (k0 = 0; k0 < cpg_in; k0 += stride) {
      float part = 0.0f;
      for (k = k0; k < cpg_in && k < k0 + stride; k++) {
        const int32_t ci = g * cpg_in + k;
        part = fmaf(w[((size_t)ci * (size_t)cpg_out + (size_t)(co % cpg_out)) * (size_t)taps + (size_t)t],
                    x[(size_t)ci * (size_t)nn + (size_t)i], part);
      }
      col = k0 == 0 ? part : part + col;
    }
    y = y + col;
  }
  return bias ? y + bias[co] : y;
}

static void test_nd(void) {
  int it;
  for (it = 0; it < 24; it++) {
    tidsp_conv_transpose_nd_params q;
    size_t nx, nw, ny, i;
    int32_t d, co, o[3], bad = 0;
    float *x, *w, *b, *y;
    memset(&q, 0, sizeof q);
    q.n = 1, q.groups = rnd_range(1, 2), q.dims = 3;
    q.c_in = q.groups * (it % 6 == 0 ? rnd_range(130, 300) : rnd_range(1, 8));
    q.c_out = q.groups * rnd_range(1, 3);
    for (d = 0; d < 3; d++) {
      q.in[d] = rnd_range(1, 5), q.k[d] = rnd_range(1, 3), q.stride[d] = rnd_range(1, 2), q.dil[d] = rnd_range(1, 2);
      q.pad_begin[d] = rnd_range(0, (q.k[d] - 1) * q.dil[d]);
      q.out[d] = (q.in[d] - 1) * q.stride[d] + (q.k[d] - 1) * q.dil[d] + 1 - 2 * q.pad_begin[d] + rnd_range(0, 1);
      if (q.out[d] < 1)
        q.out[d] = 1;
    }
    if ((q.c_out / q.groups * q.k[0] * q.k[1] * q.k[2] == 1 || q.in[0] * q.in[1] * q.in[2] == 1) &&
        q.c_in / q.groups > 1)
      continue; /* the reference's order: covered in 2-D */
    nx = (size_t)q.c_in * (size_t)(q.in[0] * q.in[1] * q.in[2]);
    nw = (size_t)q.c_in * (size_t)(q.c_out / q.groups) * (size_t)(q.k[0] * q.k[1] * q.k[2]);
    ny = (size_t)q.c_out * (size_t)(q.out[0] * q.out[1] * q.out[2]);
    x = malloc(nx * sizeof(float)), w = malloc(nw * sizeof(float)), b = malloc((size_t)q.c_out * sizeof(float));
    y = guarded(ny * sizeof(float));
    for (i = 0; i < nx; i++) x[i] = rnd_unit() * 2.0f - 1.0f;
    for (i = 0; i < nw; i++) w[i] = (rnd_unit() * 2.0f - 1.0f) / 8.0f;
    for (i = 0; i < (size_t)q.c_out; i++) b[i] = rnd_unit() - 0.5f;
    CHECK(tidsp_conv_transpose_nd_f32__host_mlas(&q, x, w, it % 2 ? b : NULL, y) == TIDSP_OK);
    CHECK(guards_ok(y, ny * sizeof(float)));
    for (co = 0; co < q.c_out && !bad; co++)
      for (o[0] = 0; o[0] < q.out[0] && !bad; o[0]++)
        for (o[1] = 0; o[1] < q.out[1] && !bad; o[1]++)
          for (o[2] = 0; o[2] < q.out[2] && !bad; o[2]++) {
            const float want = model3(&q, x, w, it % 2 ? b : NULL, co, o);
            const float got = y[(((size_t)co * (size_t)q.out[0] + (size_t)o[0]) * (size_t)q.out[1] + (size_t)o[1]) *
                                    (size_t)q.out[2] + (size_t)o[2]];
            if (memcmp(&got, &want, sizeof got) != 0) {
              CHECK_MSG(0, "3-D iter %d at (%d,%d,%d,%d): %.9g, model %.9g", it, co, o[0], o[1], o[2], (double)got,
                        (double)want);
              bad = 1;
            }
          }
    if (!bad)
      CHECK(1);
    free(x), free(w), free(b);
    guarded_free(y);
  }
  {
    /* two dims: the 2-D kernel's bytes */
    tidsp_conv2d_params p = geometry(2, 10, 6, 7, 6, 3, 2, 1, 1, 2, 1);
    tidsp_conv_transpose_nd_params q;
    const size_t nx = 2 * 10 * 7 * 6, nw = 10 * 3 * 9, ny = (size_t)2 * 6 * p.h_out * p.w_out;
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)), b[6];
    float *y2 = malloc(ny * sizeof(float)), *yn = malloc(ny * sizeof(float));
    size_t i;
    for (i = 0; i < nx; i++) x[i] = rnd_unit() - 0.5f;
    for (i = 0; i < nw; i++) w[i] = rnd_unit() - 0.5f;
    for (i = 0; i < 6; i++) b[i] = rnd_unit();
    memset(&q, 0, sizeof q);
    q.n = 2, q.c_in = 10, q.c_out = 6, q.groups = 2, q.dims = 2;
    q.in[0] = 7, q.in[1] = 6, q.out[0] = p.h_out, q.out[1] = p.w_out, q.k[0] = q.k[1] = 3;
    q.stride[0] = q.stride[1] = 2, q.dil[0] = q.dil[1] = 1, q.pad_begin[0] = q.pad_begin[1] = 1;
    CHECK(tidsp_conv_transpose2d_f32__host_mlas(&p, x, w, b, y2) == TIDSP_OK);
    CHECK(tidsp_conv_transpose_nd_f32__host_mlas(&q, x, w, b, yn) == TIDSP_OK);
    CHECK(!memcmp(y2, yn, ny * sizeof(float)));
    q.dims = 0;
    CHECK(tidsp_conv_transpose_nd_f32__host_mlas(&q, x, w, b, yn) == TIDSP_ERR_SHAPE);
    CHECK(tidsp_conv_transpose_nd_f32__host_mlas(&q, NULL, w, b, yn) == TIDSP_ERR_NULL);
    free(x), free(w), free(y2), free(yn);
  }
}

static void test_dispatch_and_errors(void) {
  const tidsp_kernel_variant *v = tidsp_kernel_variant_active();
  tidsp_conv2d_params p = geometry(1, 2, 2, 3, 3, 2, 2, 0, 1, 1, 0);
  float v1 = 1.0f, y[64];
  if (strcmp(v->name, "ref") == 0)
    CHECK(v->conv_transpose2d_f32 == tidsp_conv_transpose2d_f32__ref &&
          v->conv_transpose_nd_f32 == tidsp_conv_transpose_nd_f32__ref);
  else
    CHECK(v->conv_transpose2d_f32 == tidsp_conv_transpose2d_f32__host_mlas &&
          v->conv_transpose_nd_f32 == tidsp_conv_transpose_nd_f32__host_mlas);
  CHECK(tidsp_conv_transpose2d_f32__host_mlas(NULL, &v1, &v1, NULL, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_conv_transpose2d_f32__host_mlas(&p, &v1, NULL, NULL, y) == TIDSP_ERR_NULL);
  p.groups = 3;
  CHECK(tidsp_conv_transpose2d_f32__host_mlas(&p, &v1, &v1, NULL, y) == TIDSP_ERR_SHAPE);
  p.groups = 1, p.stride_h = 0;
  CHECK(tidsp_conv_transpose2d_f32__host_mlas(&p, &v1, &v1, NULL, y) == TIDSP_ERR_SHAPE);
}

int main(void) {
  printf("MLAS channel block on this CPU: %d\n", (int)tidsp_mlas_f32_block());
  test_named();
  test_random();
  test_nd();
  test_dispatch_and_errors();
  UNIT_MAIN_END();
}

#else

int main(void) {
  printf("not an x86-64 host: no MLAS-order kernels\n");
  UNIT_MAIN_END();
}

#endif
