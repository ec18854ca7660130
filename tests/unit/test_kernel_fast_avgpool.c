/*
 * test_kernel_fast_avgpool.c — tidsp_avgpool_i8 on every row of
 * tidsp_kernel_variants this CPU runs (host_avx512vnni and host_avx2 both
 * run here on an AVX-512 machine: each row is called directly, so both
 * widths are forced), against tidsp_avgpool_i8__ref: the same status and
 * the same bytes, with guard bytes around every output.
 *
 * Cases: rows 1..1001 wide (at, below and above 8, 16, 32, 64 lanes),
 * kernels 1..4 (and DenseNet's 2×2/2, the 3×3/1 and 3×3/2 pad 1 forms on
 * the suite's plane sizes), strides 1..4 (3 and 4 take the gather),
 * dilations, asymmetric pads, ceil-mode windows hanging past the padding,
 * count_include_pad both ways, x_zp / y_zp at −128, 127 and between,
 * domain_offset 0 and 128, saturating y_scale, a fused-Relu y_min, Q31
 * (delegated to the reference), in-place rejected shapes and invalid
 * parameters (the reference's status).
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
#define KT_SEED 0x9E3779B97F4A7C15ull
#include "kernel_test_util.h"

static int32_t pick_zp(void) {
  switch (rnd() % 4) {
  case 0:
    return -128;
  case 1:
    return 127;
  default:
    return rnd_range(-128, 127);
  }
}

static int32_t out_len(int32_t in, int32_t k, int32_t s, int32_t dil, int32_t pad_sum, int ceil_mode) {
  const int32_t span = in + pad_sum - (k - 1) * dil - 1;
  if (span < 0)
    return 0;
  return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static int cases_fast; /* cases a host row answered itself (FLOAT, valid) */

static void check_avgpool(const tidsp_avgpool_i8_params *p) {
  const tidsp_pool2d_params *g = &p->pool;
  const size_t nx = (size_t)g->n * g->c * g->h_in * g->w_in;
  const size_t ny = (size_t)g->n * g->c * (g->h_out > 0 ? g->h_out : 0) * (g->w_out > 0 ? g->w_out : 0);
  int8_t *x = malloc(nx ? nx : 1), *y_ref = guarded(ny), *y = guarded(ny);
  int32_t v, st, st_ref;
  size_t i;
  for (i = 0; i < nx; i++)
    x[i] = (int8_t)(rnd() % 8 == 0 ? (rnd() % 2 ? 127 : -128) : rnd_range(-128, 127));
  st_ref = tidsp_avgpool_i8__ref(p, NULL, x, y_ref);
  if (st_ref == TIDSP_OK && p->kind == TIDSP_REQUANT_FLOAT)
    cases_fast++;
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!kv->supported())
      continue;
    memset(y, GUARD_BYTE, ny);
    st = kv->avgpool_i8(p, NULL, x, y);
    CHECK_MSG(st == st_ref && (st != TIDSP_OK || memcmp(y, y_ref, ny) == 0) && guards_ok(y, ny),
              "%s avgpool_i8 kind %d %dx%d k%dx%d s%d,%d d%d,%d pads %d %d %d %d out %dx%d cip %d "
              "xs %a ys %a x_zp %d y_zp %d [%d, %d] off %d: status %d vs %d or bytes differ",
              kv->name, (int)p->kind, (int)g->h_in, (int)g->w_in, (int)g->k_h, (int)g->k_w,
              (int)g->stride_h, (int)g->stride_w, (int)g->dil_h, (int)g->dil_w, (int)g->pad_top,
              (int)g->pad_left, (int)g->pad_bottom, (int)g->pad_right, (int)g->h_out, (int)g->w_out,
              (int)g->count_include_pad, (double)p->x_scale, (double)p->y_scale, (int)p->x_zp,
              (int)p->y_zp, (int)p->y_min, (int)p->y_max, (int)p->domain_offset, (int)st, (int)st_ref);
  }
  free(x);
  guarded_free(y_ref);
  guarded_free(y);
}

/* Random quantization parameters: scales that make the float sums round
 * (order matters), y_scale small enough to saturate sometimes. */
static void rnd_quant(tidsp_avgpool_i8_params *p, int rep) {
  p->kind = rep % 9 == 8 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
  p->domain_offset = rep % 2 ? 128 : 0;
  p->x_scale = ldexpf(rnd_unit() + 0.5f, -rnd_range(3, 9));
  p->y_scale = rep % 7 == 0 ? p->x_scale / 16.0f : p->x_scale * (rnd_unit() + 0.5f);
  p->x_zp = pick_zp();
  p->y_zp = pick_zp();
  p->y_min = rep % 5 == 0 ? p->y_zp : -128;
  p->y_max = rep % 11 == 0 ? rnd_range(p->y_min, 127) : 127;
}

static void test_random(void) {
  static const int32_t sizes[][2] = {{1, 1},  {2, 3},  {5, 7},   {7, 7},   {8, 8},   {9, 17},
                                     {4, 15}, {4, 16}, {4, 17},  {3, 31},  {3, 33},  {3, 63},
                                     {3, 64}, {3, 65}, {14, 14}, {28, 28}, {56, 56}, {2, 1001}};
  const int32_t n_sizes = (int32_t)(sizeof sizes / sizeof sizes[0]);
  int32_t si, rep;
  for (si = 0; si < n_sizes; si++) {
    for (rep = 0; rep < 40; rep++) {
      tidsp_avgpool_i8_params p;
      tidsp_pool2d_params *g = &p.pool;
      const int ceil_mode = rnd() % 2;
      memset(&p, 0, sizeof(p));
      g->n = 1 + (int32_t)(rnd() % 2);
      g->c = sizes[si][0] * sizes[si][1] > 2000 ? 1 : rnd_range(1, 3);
      g->h_in = sizes[si][0];
      g->w_in = sizes[si][1];
      g->k_h = rnd_range(1, 4);
      g->k_w = rnd_range(1, 4);
      g->stride_h = rnd_range(1, 3);
      g->stride_w = rep % 4 == 0 ? 1 : rep % 4 == 1 ? 2 : rnd_range(1, 4);
      g->dil_h = rnd() % 5 == 0 ? 2 : 1;
      g->dil_w = rnd() % 5 == 0 ? 2 : 1;
      g->pad_top = rnd_range(0, (g->k_h - 1) * g->dil_h / 2 + (rnd() % 5 == 0));
      g->pad_left = rnd_range(0, (g->k_w - 1) * g->dil_w / 2 + (rnd() % 5 == 0));
      g->pad_bottom = rnd_range(0, g->pad_top);
      g->pad_right = rnd_range(0, g->pad_left);
      g->h_out = out_len(g->h_in, g->k_h, g->stride_h, g->dil_h, g->pad_top + g->pad_bottom, ceil_mode);
      g->w_out = out_len(g->w_in, g->k_w, g->stride_w, g->dil_w, g->pad_left + g->pad_right, ceil_mode);
      g->count_include_pad = rep % 3 == 0;
      rnd_quant(&p, rep);
      check_avgpool(&p);
    }
  }
}

/* The suite's forms, every zero-point edge and both count modes:
 * DenseNet's transition 2×2/2 (56², 28², 14²), 3×3/1 pad 1, 3×3/2 pad 1,
 * 3×3/2 ceil mode without pads. */
static void test_suite_forms(void) {
  static const int32_t forms[][5] = {/* k, s, pad, ceil, size */
                                     {2, 2, 0, 0, 56}, {2, 2, 0, 0, 28}, {2, 2, 0, 0, 14}, {2, 2, 0, 1, 13},
                                     {3, 1, 1, 0, 28}, {3, 1, 1, 0, 17}, {3, 2, 1, 0, 56}, {3, 2, 1, 0, 15},
                                     {3, 2, 0, 1, 56}, {3, 2, 0, 1, 14}};
  static const int32_t zps[] = {-128, -1, 0, 127};
  int32_t f, zx, zy, cip, rep = 0;
  for (f = 0; f < (int32_t)(sizeof forms / sizeof forms[0]); f++)
    for (zx = 0; zx < 4; zx++)
      for (zy = 0; zy < 4; zy++)
        for (cip = 0; cip < 2; cip++, rep++) {
          tidsp_avgpool_i8_params p;
          tidsp_pool2d_params *g = &p.pool;
          memset(&p, 0, sizeof(p));
          g->n = 1;
          g->c = 3;
          g->h_in = g->w_in = forms[f][4];
          g->k_h = g->k_w = forms[f][0];
          g->stride_h = g->stride_w = forms[f][1];
          g->dil_h = g->dil_w = 1;
          g->pad_top = g->pad_left = g->pad_bottom = g->pad_right = forms[f][2];
          g->h_out = g->w_out = out_len(forms[f][4], forms[f][0], forms[f][1], 1, 2 * forms[f][2], forms[f][3]);
          g->count_include_pad = cip;
          rnd_quant(&p, rep);
          p.kind = TIDSP_REQUANT_FLOAT;
          p.x_zp = zps[zx];
          p.y_zp = zps[zy];
          p.y_min = rep % 3 == 0 ? p.y_zp : -128;
          p.y_max = 127;
          check_avgpool(&p);
        }
}


/* The reference's output for one window whose dequantized taps, in the
 * order given, are t[0..n). */
static int32_t one_window(const float *t, int32_t n, const tidsp_avgpool_i8_params *p) {
  float sum = 0.0f, v;
  int32_t i;
  for (i = 0; i < n; i++)
    sum += t[i];
  v = sum / (float)n / p->y_scale + (float)p->y_zp;
  v = v > -128.0f ? v : -128.0f;
  v = v < 127.0f ? v : 127.0f;
  return (int32_t)lrintf(v);
}

/* Windows on which the order of the float sum shows in the output: three
 * taps a, b, c whose sums (a + b) + c and (c + b) + a differ, and a
 * y_scale that puts the two averages on either side of a rounding tie. A
 * kernel summing in another order than the reference's (kh, kw) fails
 * here, along a row (1×3 windows) and down a column (3×1). Every window of
 * the plane is such a window (stride 3), so every lane is checked. */
static void test_sum_order(void) {
  int32_t found[2] = {0, 0}, tries, dir;
  for (tries = 0; tries < 200000 && (found[0] < 4 || found[1] < 4); tries++) {
    tidsp_avgpool_i8_params p;
    tidsp_pool2d_params *g = &p.pool;
    float t[3], r[3], s1, s2;
    int32_t q[3], i;
    memset(&p, 0, sizeof(p));
    p.kind = TIDSP_REQUANT_FLOAT;
    p.x_scale = ldexpf(rnd_unit() + 0.5f, -rnd_range(3, 9));
    p.x_zp = rnd_range(-20, 20);
    p.y_zp = 0;
    p.y_min = -128;
    p.y_max = 127;
    for (i = 0; i < 3; i++) {
      q[i] = rnd_range(-128, 127);
      t[i] = p.x_scale * (float)(q[i] - p.x_zp);
      r[2 - i] = t[i];
    }
    s1 = (t[0] + t[1]) + t[2];
    s2 = (t[2] + t[1]) + t[0];
    if (s1 == s2 || s1 + s2 == 0.0f)
      continue;
    /* the mid average onto m + 0.5 */
    p.y_scale = fabsf((s1 + s2) / 6.0f) / ((float)rnd_range(3, 100) + 0.5f);
    if (one_window(t, 3, &p) == one_window(r, 3, &p))
      continue;
    dir = (int32_t)(rnd() % 2); /* 0: along the row, 1: down the column */
    if (found[dir] >= 4)
      continue;
    found[dir]++;
    g->n = 1;
    g->c = 2;
    g->dil_h = g->dil_w = 1;
    g->k_h = dir ? 3 : 1;
    g->k_w = dir ? 1 : 3;
    g->stride_h = dir ? 3 : 1;
    g->stride_w = dir ? 1 : 3;
    g->h_in = dir ? 6 : 2;
    g->w_in = 69; /* vectors of 8 and 16 lanes and a tail */
    g->h_out = 2;
    g->w_out = dir ? 69 : 23;
    {
      const size_t nx = (size_t)g->n * g->c * g->h_in * g->w_in;
      const size_t ny = (size_t)g->n * g->c * g->h_out * g->w_out;
      int8_t *x = malloc(nx), *y_ref = guarded(ny), *y = guarded(ny);
      int32_t v, nc, h, w;
      for (nc = 0; nc < g->c; nc++)
        for (h = 0; h < g->h_in; h++)
          for (w = 0; w < g->w_in; w++)
            x[((size_t)nc * g->h_in + h) * g->w_in + w] = (int8_t)q[dir ? h % 3 : w % 3];
      CHECK(tidsp_avgpool_i8__ref(&p, NULL, x, y_ref) == TIDSP_OK);
      CHECK_MSG(y_ref[0] == (int8_t)one_window(t, 3, &p), "the test's window formula is the reference's");
      cases_fast++;
      for (v = 0; v < tidsp_kernel_variant_count; v++) {
        const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
        if (!kv->supported())
          continue;
        memset(y, GUARD_BYTE, ny);
        CHECK_MSG(kv->avgpool_i8(&p, NULL, x, y) == TIDSP_OK && memcmp(y, y_ref, ny) == 0 && guards_ok(y, ny),
                  "%s avgpool_i8 sum order (%s) xs %a ys %a x_zp %d q %d %d %d: bytes differ", kv->name,
                  dir ? "kh" : "kw", (double)p.x_scale, (double)p.y_scale, (int)p.x_zp, (int)q[0], (int)q[1],
                  (int)q[2]);
      }
      free(x);
      guarded_free(y_ref);
      guarded_free(y);
    }
  }
  CHECK_MSG(found[0] == 4 && found[1] == 4, "order-revealing windows found: %d along rows, %d down columns",
            (int)found[0], (int)found[1]);
}

/* Invalid parameters: every row gives the reference's status. */
static void test_errors(void) {
  tidsp_avgpool_i8_params p;
  int8_t v[4] = {0, 0, 0, 0};
  int32_t r;
  memset(&p, 0, sizeof(p));
  p.pool.n = p.pool.c = p.pool.h_in = p.pool.w_in = p.pool.h_out = p.pool.w_out = 1;
  p.pool.k_h = p.pool.k_w = p.pool.stride_h = p.pool.stride_w = p.pool.dil_h = p.pool.dil_w = 1;
  p.kind = TIDSP_REQUANT_FLOAT;
  p.x_scale = p.y_scale = 1.0f;
  p.y_min = -128;
  p.y_max = 127;
  for (r = 0; r < tidsp_kernel_variant_count; r++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[r];
    tidsp_avgpool_i8_params q = p;
    if (!kv->supported())
      continue;
    CHECK(kv->avgpool_i8(&q, NULL, v, v + 1) == TIDSP_OK);
    CHECK(kv->avgpool_i8(NULL, NULL, v, v + 1) == TIDSP_ERR_NULL);
    CHECK(kv->avgpool_i8(&q, NULL, NULL, v + 1) == TIDSP_ERR_NULL);
    q.kind = 3;
    CHECK(kv->avgpool_i8(&q, NULL, v, v + 1) == tidsp_avgpool_i8__ref(&q, NULL, v, v + 1));
    q = p;
    q.y_zp = 200;
    CHECK(kv->avgpool_i8(&q, NULL, v, v + 1) == TIDSP_ERR_PARAM);
    q = p;
    q.x_zp = -129;
    CHECK(kv->avgpool_i8(&q, NULL, v, v + 1) == TIDSP_ERR_PARAM);
    q = p;
    q.domain_offset = 5;
    CHECK(kv->avgpool_i8(&q, NULL, v, v + 1) == TIDSP_ERR_PARAM);
    q = p;
    q.pool.w_out = 2; /* the geometry disagrees with the window */
    CHECK(kv->avgpool_i8(&q, NULL, v, v + 1) == tidsp_avgpool_i8__ref(&q, NULL, v, v + 1));
    CHECK(tidsp_avgpool_i8__ref(&q, NULL, v, v + 1) != TIDSP_OK);
  }
}

int main(void) {
  int32_t v;
  for (v = 0; v < tidsp_kernel_variant_count; v++)
    printf("row %s: %s\n", tidsp_kernel_variants[v].name,
           tidsp_kernel_variants[v].supported() ? "runs" : "skipped (CPU)");
  test_random();
  test_suite_forms();
  test_sum_order();
  test_errors();
  printf("%d cases on the fast path\n", cases_fast);
  CHECK(cases_fast > 500); /* the generator does reach the fast kernels */
  UNIT_MAIN_END();
}
