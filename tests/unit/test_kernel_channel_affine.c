/*
 * test_kernel_channel_affine.c — tidsp_channel_affine_i8:
 *  - fused = unfused: the reference against the chain it replaces, run on
 *    the reference kernels (tidsp_dequantize__ref, tidsp_binary_f32 Mul
 *    and Add with a per-channel operand, tidsp_unary_f32 Relu or Clip when
 *    the kernel applies one, tidsp_quantize__ref), bit for bit;
 *  - every row of tidsp_kernel_variants this CPU runs (host_avx512vnni and
 *    host_avx2 both here: each is called directly) against the reference,
 *    with guard bytes, rows of 0..70 values (below, at and above 8 and 16
 *    lanes), zero points at −128, 127 and between, scales that saturate,
 *    s and b of both signs, zero and huge (±inf and NaN results: NaN → −128
 *    as tidsp_quantize), invalid arguments (the reference's status);
 *  - tidsp_channel_affine_i16 (the -mmalib=1 exact path's int16 twin):
 *    the reference's bytes less y_zp, out of place and in place.
 */
/* The search for contraction-revealing values must itself round as
 * written. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x2545F4914F6CDD1Dull
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

static float pick_coef(int wild) {
  if (wild) {
    switch (rnd() % 6) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return 3e38f;
    case 3: return -3e38f;
    default: break;
    }
  }
  return (rnd_unit() - 0.4f) * ldexpf(1.0f, rnd_range(-4, 3));
}

/* The unfused chain on the reference kernels. */
static void unfused(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s, const float *b,
                    int8_t *y) {
  const size_t n = (size_t)p->outer * (size_t)p->channels * (size_t)p->inner;
  float *d = malloc(sizeof(float) * (n ? n : 1)), *t = malloc(sizeof(float) * (n ? n : 1));
  const float xs = p->x_scale, ys = p->y_scale;
  const int32_t xz = p->x_zp, yz = p->y_zp;
  tidsp_qdq_params q = {(int32_t)n, 1, 1, TIDSP_DTYPE_I8};
  tidsp_binary_f32_params bp;
  memset(&bp, 0, sizeof bp);
  bp.bc.rank = 3;
  bp.bc.shape[0] = p->outer;
  bp.bc.shape[1] = p->channels;
  bp.bc.shape[2] = p->inner;
  bp.bc.a_stride[0] = p->channels * p->inner;
  bp.bc.a_stride[1] = p->inner;
  bp.bc.a_stride[2] = 1;
  bp.bc.b_stride[1] = 1;
  CHECK(tidsp_dequantize__ref(&q, &xs, &xz, x, d) == TIDSP_OK);
  bp.op = TIDSP_BINARY_MUL;
  CHECK(tidsp_binary_f32(&bp, d, s, t) == TIDSP_OK);
  bp.op = TIDSP_BINARY_ADD;
  CHECK(tidsp_binary_f32(&bp, t, b, d) == TIDSP_OK);
  if (p->act != TIDSP_CHANNEL_AFFINE_NONE) {
    tidsp_unary_f32_params up;
    memset(&up, 0, sizeof up);
    up.n = (int32_t)n;
    up.op = p->act == TIDSP_CHANNEL_AFFINE_RELU ? TIDSP_UNARY_RELU : TIDSP_UNARY_CLIP;
    up.lo = p->lo;
    up.hi = p->hi;
    CHECK(tidsp_unary_f32(&up, d, t) == TIDSP_OK);
    memcpy(d, t, sizeof(float) * n);
  }
  CHECK(tidsp_quantize__ref(&q, &ys, &yz, d, y) == TIDSP_OK);
  free(d);
  free(t);
}

static int n_checked;

static void check_case(const tidsp_channel_affine_i8_params *p, int wild) {
  const size_t n = (size_t)p->outer * (size_t)p->channels * (size_t)p->inner;
  int8_t *x = malloc(n ? n : 1), *y_chain = malloc(n ? n : 1), *y_ref = guarded(n), *y = guarded(n);
  float *s = malloc(sizeof(float) * (size_t)p->channels), *b = malloc(sizeof(float) * (size_t)p->channels);
  int32_t c, v;
  size_t i;
  for (i = 0; i < n; i++)
    x[i] = (int8_t)(rnd() % 6 == 0 ? (rnd() % 2 ? 127 : -128) : rnd_range(-128, 127));
  for (c = 0; c < p->channels; c++) {
    s[c] = pick_coef(wild);
    b[c] = pick_coef(wild);
  }
  unfused(p, x, s, b, y_chain);
  CHECK(tidsp_channel_affine_i8__ref(p, x, s, b, y_ref) == TIDSP_OK);
  CHECK_MSG(memcmp(y_chain, y_ref, n) == 0 && guards_ok(y_ref, n),
            "ref differs from the unfused chain: outer %d C %d inner %d xs %a ys %a zp %d %d", (int)p->outer,
            (int)p->channels, (int)p->inner, (double)p->x_scale, (double)p->y_scale, (int)p->x_zp, (int)p->y_zp);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!kv->supported())
      continue;
    memset(y, GUARD_BYTE, n);
    CHECK_MSG(kv->channel_affine_i8(p, x, s, b, y) == TIDSP_OK && memcmp(y, y_ref, n) == 0 && guards_ok(y, n),
              "%s channel_affine_i8 outer %d C %d inner %d xs %a ys %a zp %d %d: bytes differ", kv->name,
              (int)p->outer, (int)p->channels, (int)p->inner, (double)p->x_scale, (double)p->y_scale,
              (int)p->x_zp, (int)p->y_zp);
  }
  /* the int16 twin: y − y_zp, out of place and in place (its output over
   * x's bytes, run from the end) */
  int16_t *y16 = malloc(sizeof *y16 * (n ? n : 1));
  int8_t *x_in_place = malloc(2 * (n ? n : 1));
  memcpy(x_in_place, x, n);
  CHECK(tidsp_channel_affine_i16(p, x, s, b, y16) == TIDSP_OK);
  CHECK(tidsp_channel_affine_i16(p, x_in_place, s, b, (int16_t *)(void *)x_in_place) == TIDSP_OK);
  for (i = 0; i < n; i++)
    CHECK_MSG(y16[i] == y_ref[i] - p->y_zp && ((int16_t *)(void *)x_in_place)[i] == y16[i],
              "channel_affine_i16 element %zu: %d, in place %d, want %d", i, (int)y16[i],
              (int)((int16_t *)(void *)x_in_place)[i], (int)(y_ref[i] - p->y_zp));
  free(y16);
  free(x_in_place);
  n_checked++;
  free(x);
  free(y_chain);
  free(s);
  free(b);
  guarded_free(y_ref);
  guarded_free(y);
}

static void test_random(void) {
  static const int32_t inners[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 49, 64, 70, 196};
  int32_t ii, rep;
  for (ii = 0; ii < (int32_t)(sizeof inners / sizeof inners[0]); ii++) {
    for (rep = 0; rep < 30; rep++) {
      tidsp_channel_affine_i8_params p;
      p.outer = rnd_range(1, 2);
      p.channels = rnd_range(1, 9);
      p.inner = inners[ii];
      p.x_scale = ldexpf(rnd_unit() + 0.5f, -rnd_range(2, 9));
      p.y_scale = rep % 5 == 0 ? p.x_scale / 64.0f : ldexpf(rnd_unit() + 0.5f, -rnd_range(2, 9));
      p.x_zp = pick_zp();
      p.y_zp = pick_zp();
      p.act = rep % 3; /* none, Relu, Clip */
      p.lo = rep % 2 ? -0.25f : 0.0f;
      p.hi = rep % 5 == 2 ? INFINITY : p.lo + 0.125f * (float)rnd_range(0, 40);
      check_case(&p, rep % 4 == 3);
    }
  }
}

/* Values on which a fused multiply-add shows in the output: x, s, b with
 * fl(fl(d·s) + b) ≠ fma(d, s, b) (d the dequantized x), and a y_scale that
 * puts the two on either side of a rounding tie. A variant that contracts
 * the Mul and the Add (or reorders them) fails here, on every lane. */
static void test_contraction(void) {
  int32_t found = 0, tries;
  for (tries = 0; tries < 200000 && found < 8; tries++) {
    tidsp_channel_affine_i8_params p;
    float d, s, b, t1, t2;
    int8_t xq;
    memset(&p, 0, sizeof p);
    p.outer = 1;
    p.channels = 1;
    p.inner = 37; /* vectors of 8 and 16 and a tail */
    p.x_scale = ldexpf(rnd_unit() + 0.5f, -rnd_range(3, 8));
    p.x_zp = rnd_range(-20, 20);
    p.act = TIDSP_CHANNEL_AFFINE_NONE;
    xq = (int8_t)rnd_range(-128, 127);
    d = (float)((int32_t)xq - p.x_zp) * p.x_scale;
    s = (rnd_unit() + 0.5f) * (rnd() % 2 ? 1.0f : -1.0f);
    b = -(d * s) * (1.0f + ldexpf(rnd_unit(), -rnd_range(2, 12))); /* cancellation */
    t1 = d * s + b;
    t2 = fmaf(d, s, b);
    if (t1 == t2 || !(fabsf(t1 + t2) > 0.0f))
      continue;
    p.y_scale = fabsf((t1 + t2) / 2.0f) / ((float)rnd_range(1, 100) + 0.5f);
    p.y_zp = 0;
    if (!(p.y_scale > 0.0f) || lrintf(t1 / p.y_scale) == lrintf(t2 / p.y_scale))
      continue;
    found++;
    {
      int8_t x[37], y_ref[37], y[37];
      float sv[1] = {s}, bv[1] = {b};
      int32_t v, i;
      for (i = 0; i < 37; i++)
        x[i] = xq;
      CHECK(tidsp_channel_affine_i8__ref(&p, x, sv, bv, y_ref) == TIDSP_OK);
      CHECK_MSG(y_ref[0] == (int8_t)(lrintf(t1 / p.y_scale) < -128 ? -128 : lrintf(t1 / p.y_scale) > 127 ? 127 : lrintf(t1 / p.y_scale)),
                "the reference rounds the product and the sum separately");
      for (v = 0; v < tidsp_kernel_variant_count; v++) {
        const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
        if (!kv->supported())
          continue;
        CHECK_MSG(kv->channel_affine_i8(&p, x, sv, bv, y) == TIDSP_OK && memcmp(y, y_ref, sizeof y) == 0,
                  "%s channel_affine_i8: x %d xs %a s %a b %a ys %a differs (a fused multiply-add?)", kv->name,
                  (int)xq, (double)p.x_scale, (double)s, (double)b, (double)p.y_scale);
      }
    }
  }
  CHECK_MSG(found == 8, "contraction-revealing values found: %d", (int)found);
}

static void test_errors(void) {
  tidsp_channel_affine_i8_params p = {1, 2, 3, 0.1f, 0.2f, 0, 0, TIDSP_CHANNEL_AFFINE_NONE, 0.0f, 0.0f};
  int8_t x[6] = {0}, y[6];
  float s[2] = {1.0f, 2.0f}, b[2] = {0.0f, 1.0f};
  int32_t v;
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    tidsp_channel_affine_i8_params q = p;
    if (!kv->supported())
      continue;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_OK);
    CHECK(kv->channel_affine_i8(NULL, x, s, b, y) == TIDSP_ERR_NULL);
    CHECK(kv->channel_affine_i8(&q, x, NULL, b, y) == TIDSP_ERR_NULL);
    CHECK(kv->channel_affine_i8(&q, x, s, b, NULL) == TIDSP_ERR_NULL);
    q.channels = 0;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_ERR_SHAPE);
    q = p;
    q.inner = -1;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_ERR_SHAPE);
    q = p;
    q.x_zp = 128;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_ERR_PARAM);
    q = p;
    q.y_scale = 0.0f;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_ERR_PARAM);
    q = p;
    q.x_scale = NAN;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_ERR_PARAM);
    q = p;
    q.act = 3;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_ERR_PARAM);
    q = p;
    q.act = TIDSP_CHANNEL_AFFINE_CLIP;
    q.lo = 1.0f;
    q.hi = 0.5f;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_ERR_PARAM);
    q.hi = 1.0f;
    CHECK(kv->channel_affine_i8(&q, x, s, b, y) == TIDSP_OK);
  }
}

int main(void) {
  test_random();
  test_contraction();
  test_errors();
  printf("%d cases\n", n_checked);
  UNIT_MAIN_END();
}
