/*
 * test_kernel_pool_nd.c — tidsp_pool_nd: with 2 spatial dims against the
 * 2-D kernels (maxpool f32/i8, avgpool f32: separate implementations), with
 * 3 against a naive nested-loop oracle (max, average, argmax in both
 * storage orders); uint8; ties; guard bytes; bad arguments.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 32
#define KT_SEED 0x9E3779B97F4A7C15ull
#include "kernel_test_util.h"

int32_t tidsp_ref_taps_inside(int64_t start, int32_t k, int32_t dil, int64_t limit); /* pool2d.c */

/* a random window geometry in which every window holds an input tap */
static void random_geometry(tidsp_pool_nd_params *p, int32_t dims) {
  int32_t d;
  memset(p, 0, sizeof *p);
  p->planes = rnd_range(1, 3);
  p->dims = dims;
  for (d = 0; d < dims; d++) {
    for (;;) {
      int32_t span, o, ok = 1;
      p->in[d] = rnd_range(1, 7);
      p->k[d] = rnd_range(1, 3);
      p->stride[d] = rnd_range(1, 3);
      p->dil[d] = rnd_range(1, 2);
      p->pad_begin[d] = rnd_range(0, p->k[d] - 1);
      p->pad_end[d] = rnd_range(0, p->k[d] - 1);
      span = (p->k[d] - 1) * p->dil[d] + 1;
      p->out[d] = (p->in[d] + p->pad_begin[d] + p->pad_end[d] - span) / p->stride[d] + 1;
      if (p->in[d] + p->pad_begin[d] + p->pad_end[d] < span)
        continue;
      for (o = 0; o < p->out[d]; o++)
        ok = ok && tidsp_ref_taps_inside((int64_t)o * p->stride[d] - p->pad_begin[d], p->k[d], p->dil[d],
                                         p->in[d]) > 0;
      if (ok)
        break;
    }
  }
}

static void to_pool2d(const tidsp_pool_nd_params *p, tidsp_pool2d_params *q) {
  memset(q, 0, sizeof *q);
  q->n = 1;
  q->c = p->planes;
  q->h_in = p->in[0], q->w_in = p->in[1], q->h_out = p->out[0], q->w_out = p->out[1];
  q->k_h = p->k[0], q->k_w = p->k[1], q->stride_h = p->stride[0], q->stride_w = p->stride[1];
  q->dil_h = p->dil[0], q->dil_w = p->dil[1];
  q->pad_top = p->pad_begin[0], q->pad_left = p->pad_begin[1];
  q->pad_bottom = p->pad_end[0], q->pad_right = p->pad_end[1];
  q->count_include_pad = p->count_include_pad;
}

static void test_2d_against_pool2d(void) {
  int trial;
  for (trial = 0; trial < 300; trial++) {
    tidsp_pool_nd_params p;
    tidsp_pool2d_params q;
    int32_t i;
    random_geometry(&p, 2);
    p.count_include_pad = trial & 1;
    to_pool2d(&p, &q);
    int32_t nin = p.planes * p.in[0] * p.in[1], nout = p.planes * p.out[0] * p.out[1];
    float *x = malloc(sizeof(float) * (size_t)nin), *want = malloc(sizeof(float) * (size_t)(nout + 1));
    float *got = guarded(sizeof(float) * (size_t)nout);
    int8_t *x8 = malloc((size_t)nin), *want8 = malloc((size_t)nout + 1), *got8 = guarded((size_t)nout);
    for (i = 0; i < nin; i++) {
      x[i] = (float)rnd_range(-20, 20) / 4.0f; /* ties */
      x8[i] = (int8_t)rnd_range(-128, 127);
    }
    p.op = TIDSP_POOL_MAX;
    p.dtype = TIDSP_DTYPE_F32;
    CHECK(tidsp_maxpool_f32__ref(&q, x, want) == TIDSP_OK);
    CHECK_MSG(tidsp_pool_nd(&p, x, got) == TIDSP_OK, "trial %d", trial);
    CHECK_MSG(!memcmp(got, want, sizeof(float) * (size_t)nout), "max f32 trial %d", trial);
    CHECK(guards_ok(got, sizeof(float) * (size_t)nout));
    p.op = TIDSP_POOL_AVG;
    CHECK(tidsp_avgpool_f32(&q, x, want) == TIDSP_OK);
    CHECK(tidsp_pool_nd(&p, x, got) == TIDSP_OK);
    CHECK_MSG(!memcmp(got, want, sizeof(float) * (size_t)nout), "avg f32 trial %d", trial);
    p.op = TIDSP_POOL_MAX;
    p.dtype = TIDSP_DTYPE_I8;
    CHECK(tidsp_maxpool_i8__ref(&q, x8, want8) == TIDSP_OK);
    CHECK(tidsp_pool_nd(&p, x8, got8) == TIDSP_OK);
    CHECK_MSG(!memcmp(got8, want8, (size_t)nout), "max i8 trial %d", trial);
    CHECK(guards_ok(got8, (size_t)nout));
    free(x), free(want), free(x8), free(want8);
    guarded_free(got);
    guarded_free(got8);
  }
}

/* 3-D, nested loops: max/avg of float, max of uint8, argmax both orders */
static void test_3d_against_loops(void) {
  int trial;
  for (trial = 0; trial < 200; trial++) {
    tidsp_pool_nd_params p;
    int32_t pl, a, b, c, ka, kb, kc, i;
    random_geometry(&p, 3);
    p.count_include_pad = trial & 1;
    int32_t D = p.in[0], H = p.in[1], W = p.in[2], plane = D * H * W;
    int32_t nin = p.planes * plane, nout = p.planes * p.out[0] * p.out[1] * p.out[2];
    float *x = malloc(sizeof(float) * (size_t)nin), *got = guarded(sizeof(float) * (size_t)nout);
    uint8_t *xu = malloc((size_t)nin), *gotu = guarded((size_t)nout);
    int64_t *goti = guarded(sizeof(int64_t) * (size_t)nout), *gotc = guarded(sizeof(int64_t) * (size_t)nout);
    float *avg = guarded(sizeof(float) * (size_t)nout);
    for (i = 0; i < nin; i++) {
      x[i] = (float)rnd_range(-8, 8);
      xu[i] = (uint8_t)(rnd_range(0, 15) * 16);
    }
    p.dtype = TIDSP_DTYPE_F32;
    p.op = TIDSP_POOL_MAX;
    CHECK(tidsp_pool_nd(&p, x, got) == TIDSP_OK);
    p.op = TIDSP_POOL_AVG;
    CHECK(tidsp_pool_nd(&p, x, avg) == TIDSP_OK);
    p.op = TIDSP_POOL_ARGMAX;
    CHECK(tidsp_pool_nd(&p, x, goti) == TIDSP_OK);
    p.storage_order = 1;
    CHECK(tidsp_pool_nd(&p, x, gotc) == TIDSP_OK);
    p.storage_order = 0;
    p.op = TIDSP_POOL_MAX;
    p.dtype = TIDSP_DTYPE_U8;
    CHECK(tidsp_pool_nd(&p, xu, gotu) == TIDSP_OK);
    i = 0;
    for (pl = 0; pl < p.planes; pl++)
      for (a = 0; a < p.out[0]; a++)
        for (b = 0; b < p.out[1]; b++)
          for (c = 0; c < p.out[2]; c++, i++) {
            float m = -FLT_MAX, sum = 0.0f;
            int32_t mu = 0, inside = 0, padded = 0;
            int64_t at = -1, atc = -1;
            for (ka = 0; ka < p.k[0]; ka++)
              for (kb = 0; kb < p.k[1]; kb++)
                for (kc = 0; kc < p.k[2]; kc++) {
                  int32_t z = a * p.stride[0] - p.pad_begin[0] + ka * p.dil[0];
                  int32_t yy = b * p.stride[1] - p.pad_begin[1] + kb * p.dil[1];
                  int32_t xx = c * p.stride[2] - p.pad_begin[2] + kc * p.dil[2];
                  padded += z < D + p.pad_end[0] && yy < H + p.pad_end[1] && xx < W + p.pad_end[2];
                  if (z < 0 || z >= D || yy < 0 || yy >= H || xx < 0 || xx >= W)
                    continue;
                  inside++;
                  {
                    int32_t at_row = (z * H + yy) * W + xx;
                    sum += x[pl * plane + at_row];
                    if (x[pl * plane + at_row] > m) {
                      m = x[pl * plane + at_row];
                      at = (int64_t)pl * plane + at_row;
                      atc = (int64_t)pl * plane + z + (int64_t)yy * D + (int64_t)xx * D * H;
                    }
                    if (xu[pl * plane + at_row] > mu)
                      mu = xu[pl * plane + at_row];
                  }
                }
            CHECK_MSG(got[i] == m, "max trial %d at %d", trial, i);
            CHECK_MSG(goti[i] == at, "argmax trial %d at %d: %lld vs %lld", trial, i, (long long)goti[i],
                      (long long)at);
            CHECK_MSG(gotc[i] == atc, "argmax column-major trial %d at %d", trial, i);
            CHECK_MSG(gotu[i] == mu, "max u8 trial %d at %d", trial, i);
            CHECK_MSG(avg[i] == sum / (float)(p.count_include_pad ? padded : inside), "avg trial %d at %d", trial,
                      i);
          }
    CHECK(guards_ok(got, sizeof(float) * (size_t)nout) && guards_ok(goti, sizeof(int64_t) * (size_t)nout) &&
          guards_ok(gotu, (size_t)nout) && guards_ok(avg, sizeof(float) * (size_t)nout));
    free(x), free(xu);
    guarded_free(got), guarded_free(gotu), guarded_free(goti), guarded_free(gotc), guarded_free(avg);
  }
}

static void test_errors(void) {
  tidsp_pool_nd_params p;
  float x[4] = {1, 2, 3, 4}, y[4];
  memset(&p, 0, sizeof p);
  p.planes = 1;
  p.dims = 1;
  p.in[0] = 4;
  p.out[0] = 2;
  p.k[0] = 2;
  p.stride[0] = 2;
  p.dil[0] = 1;
  p.dtype = TIDSP_DTYPE_F32;
  CHECK(tidsp_pool_nd(&p, x, y) == TIDSP_OK && y[0] == 2.0f && y[1] == 4.0f);
  CHECK(tidsp_pool_nd(NULL, x, y) == TIDSP_ERR_NULL);
  p.out[0] = 3; /* a window past the input */
  CHECK(tidsp_pool_nd(&p, x, y) == TIDSP_ERR_SHAPE);
  p.out[0] = 2;
  p.op = TIDSP_POOL_AVG;
  p.dtype = TIDSP_DTYPE_U8; /* average: float only */
  CHECK(tidsp_pool_nd(&p, x, y) == TIDSP_ERR_PARAM);
  p.op = 7;
  CHECK(tidsp_pool_nd(&p, x, y) == TIDSP_ERR_PARAM);
  p.op = TIDSP_POOL_MAX;
  p.dims = 0;
  CHECK(tidsp_pool_nd(&p, x, y) == TIDSP_ERR_SHAPE);
}

int main(void) {
  test_2d_against_pool2d();
  test_3d_against_loops();
  test_errors();
  UNIT_MAIN_END();
}
