/*
 * test_kernel_fast_eltwise.c — every row of tidsp_kernel_variants that this
 * CPU can run, for the dispatched non-convolution kernels (add_i8, mul_i8,
 * quantize, dequantize, lut_i8, lut_i8_channels, maxpool_i8, maxpool_f32, global_avgpool_i8,
 * transpose, slice, layer_norm_f32, layer_norm_i8, softmax_i8, softmax_f32),
 * against the __ref functions: the same status and the same bytes, with
 * guard bytes around every output.
 *
 * Generated cases put vector lengths at, below and above the host kernels'
 * widths (1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1001), every
 * broadcast kind (same shape, per-channel either side, scalar either or
 * both sides, channels-last, outer broadcast, both broadcast in different
 * dims, strided rows and rank 0 that go to the reference), zero points at
 * the extremes, domain_offset 0 and 128, fused-Relu ranges, saturating
 * multipliers, Q31 (the FLOAT path's bytes for constants in its range, the
 * reference's past it: run_binary_q31_consts), in-place outputs; for quantize NaN, ±inf,
 * ±huge, ±0, subnormals, exact .5 ties and values on the clamp bounds, per
 * tensor and per channel (channel axis inner and last), every dtype; pools
 * with pads, strides, dilations and ceil-mode windows, NaN and ±0 floats;
 * transposes and slices (negative and 2-steps) of every rank and element
 * size.
 * Invalid arguments must give the reference's status.
 */
/* The search below for inputs on which roundings differ must itself round
 * as written. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0xD1B54A32D192ED03ull
#include "kernel_test_util.h"

static const int32_t kLens[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1001};
#define N_LENS ((int32_t)(sizeof kLens / sizeof kLens[0]))

/* Rows this CPU runs (the last one is "ref", compared with itself). */
static int row_runs(int32_t v) {
  static int told[16];
  const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
  if (kv->supported())
    return 1;
  if (v < 16 && !told[v]) {
    printf("skip row %s: this CPU lacks its instruction set\n", kv->name);
    told[v] = 1;
  }
  return 0;
}

static void fill_i8(int8_t *v, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    v[i] = (int8_t)rnd_range(-128, 127);
}

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

/* A positive float spread over [2^lo_exp, 2^hi_exp). */
static float rnd_log(int lo_exp, int hi_exp) {
  return ldexpf(1.0f + rnd_unit(), rnd_range(lo_exp, hi_exp - 1));
}

/* ---- broadcast shapes ------------------------------------------------------------ */

enum {
  BC_SAME,
  BC_A_CHANNEL, /* a [1, C, 1, 1] */
  BC_B_CHANNEL,
  BC_A_SCALAR,
  BC_B_SCALAR,
  BC_BOTH_SCALAR,
  BC_CHANNELS_LAST, /* [N, H, W, C] + b [C] */
  BC_A_OUTER,       /* a [1, 1, H, W] over C */
  BC_CROSS,         /* a [N, 1, H, W], b [1, C, 1, 1] */
  BC_A_ROW,         /* a [1, C, H, 1]: constant along W only */
  BC_STRIDED,       /* a read with stride 2 along W (the reference's path) */
  BC_RANK0,
  BC_EMPTY,
  BC_COUNT
};

typedef struct bc_case {
  tidsp_broadcast bc;
  size_t na, nb, ny;
} bc_case;

/* Dense strides of an operand of shape s over the output shape (0 where
 * the operand has 1 and the output more). */
static size_t operand_strides(const tidsp_broadcast *bc, const int32_t *s,
                              int32_t *stride) {
  int32_t d;
  size_t n = 1;
  for (d = bc->rank - 1; d >= 0; d--) {
    stride[d] = (s[d] == 1 && bc->shape[d] != 1) ? 0 : (int32_t)n;
    n *= (size_t)s[d];
  }
  return n;
}

static void make_bc(bc_case *c, int kind, int32_t w) {
  int32_t sa[4], sb[4], d;
  int32_t n = 1 + (int32_t)(rnd() % 2), ch = rnd_range(1, 5), h = rnd_range(1, 3);
  memset(c, 0, sizeof(*c));
  c->bc.rank = 4;
  if (kind == BC_CHANNELS_LAST) {
    int32_t s[4] = {n, h, rnd_range(1, 3), w};
    memcpy(c->bc.shape, s, sizeof s);
  } else {
    int32_t s[4] = {n, ch, h, w};
    memcpy(c->bc.shape, s, sizeof s);
  }
  for (d = 0; d < 4; d++)
    sa[d] = sb[d] = c->bc.shape[d];
  switch (kind) {
  case BC_A_CHANNEL:
    sa[0] = sa[2] = sa[3] = 1;
    break;
  case BC_B_CHANNEL:
    sb[0] = sb[2] = sb[3] = 1;
    break;
  case BC_A_SCALAR:
    sa[0] = sa[1] = sa[2] = sa[3] = 1;
    break;
  case BC_B_SCALAR:
    sb[0] = sb[1] = sb[2] = sb[3] = 1;
    break;
  case BC_BOTH_SCALAR:
    sa[0] = sa[1] = sa[2] = sa[3] = 1;
    sb[0] = sb[1] = sb[2] = sb[3] = 1;
    break;
  case BC_CHANNELS_LAST:
    sb[0] = sb[1] = sb[2] = 1;
    break;
  case BC_A_OUTER:
    sa[0] = sa[1] = 1;
    break;
  case BC_CROSS:
    sa[1] = 1;
    sb[0] = sb[2] = sb[3] = 1;
    break;
  case BC_A_ROW:
    sa[0] = sa[3] = 1;
    break;
  default:
    break;
  }
  c->na = operand_strides(&c->bc, sa, c->bc.a_stride);
  c->nb = operand_strides(&c->bc, sb, c->bc.b_stride);
  c->ny = (size_t)c->bc.shape[0] * c->bc.shape[1] * c->bc.shape[2] * c->bc.shape[3];
  if (kind == BC_STRIDED) {
    for (d = 0; d < 4; d++)
      c->bc.a_stride[d] *= 2;
    c->na *= 2;
  } else if (kind == BC_RANK0) {
    c->bc.rank = 0;
    c->na = c->nb = c->ny = 1;
  } else if (kind == BC_EMPTY) {
    c->bc.shape[2] = 0;
    c->ny = 0;
  }
}

/* ---- add_i8 / mul_i8 ------------------------------------------------------------- */

static void rnd_range_i8(int32_t y_zp, int32_t *y_min, int32_t *y_max) {
  switch (rnd() % 4) {
  case 0: /* fused Relu */
    *y_min = y_zp;
    *y_max = 127;
    break;
  case 1: /* fused Clip */
    *y_min = rnd_range(-128, 0);
    *y_max = rnd_range(*y_min, 127);
    break;
  default:
    *y_min = -128;
    *y_max = 127;
  }
}

static void check_binary(const char *what, int kind, int32_t w, int in_place,
                         int is_add, const void *params, const int8_t *a,
                         const int8_t *b, size_t ny, size_t na) {
  int8_t *y_ref = guarded(ny ? ny : 1), *y = guarded(ny ? ny : 1);
  int32_t v, st_ref;
  int8_t *a_ref = NULL, *a_run = NULL;
  if (in_place) { /* y aliases a: a same-shape operand */
    a_ref = malloc(na);
    memcpy(a_ref, a, na);
    st_ref = is_add ? tidsp_add_i8__ref(params, a_ref, b, a_ref)
                    : tidsp_mul_i8__ref(params, a_ref, b, a_ref);
  } else {
    st_ref = is_add ? tidsp_add_i8__ref(params, a, b, y_ref)
                    : tidsp_mul_i8__ref(params, a, b, y_ref);
  }
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!row_runs(v))
      continue;
    if (in_place) {
      a_run = malloc(na);
      memcpy(a_run, a, na);
      st = is_add ? kv->add_i8(params, a_run, b, a_run) : kv->mul_i8(params, a_run, b, a_run);
      CHECK_MSG(st == st_ref && memcmp(a_run, a_ref, na) == 0,
                "%s %s in place bc %d w %d: status %d vs %d or bytes differ", kv->name,
                what, kind, (int)w, (int)st, (int)st_ref);
      free(a_run);
    } else {
      memset(y, GUARD_BYTE, ny);
      st = is_add ? kv->add_i8(params, a, b, y) : kv->mul_i8(params, a, b, y);
      CHECK_MSG(st == st_ref && memcmp(y, y_ref, ny) == 0 && guards_ok(y, ny),
                "%s %s bc %d w %d: status %d vs %d or bytes differ", kv->name, what,
                kind, (int)w, (int)st, (int)st_ref);
    }
  }
  free(a_ref);
  guarded_free(y_ref);
  guarded_free(y);
}

static void run_binary_case(int is_add, int kind, int32_t w, int32_t rq_kind) {
  bc_case c;
  int8_t *a, *b;
  int32_t off, a_zp, b_zp, y_zp, y_min, y_max;
  int in_place;
  make_bc(&c, kind, w);
  a = malloc(c.na ? c.na : 1);
  b = malloc(c.nb ? c.nb : 1);
  fill_i8(a, c.na);
  fill_i8(b, c.nb);
  off = rnd() % 2 ? 128 : 0;
  a_zp = pick_zp();
  b_zp = pick_zp();
  y_zp = pick_zp();
  rnd_range_i8(y_zp, &y_min, &y_max);
  in_place = (kind == BC_SAME || kind == BC_B_CHANNEL || kind == BC_B_SCALAR) && rnd() % 3 == 0;
  if (is_add) {
    tidsp_add_i8_params p;
    memset(&p, 0, sizeof(p));
    p.bc = c.bc;
    p.kind = rq_kind;
    /* ys / as between 1/64 and 4: 4 saturates most outputs */
    p.ra = rnd_log(-6, 2);
    p.rb = rnd_log(-6, 2);
    p.a_zp = a_zp;
    p.b_zp = b_zp;
    p.y_zp = y_zp;
    p.y_min = y_min;
    p.y_max = y_max;
    p.domain_offset = off;
    {
      const float za = (float)(a_zp + off), zb = (float)(b_zp + off), zc = (float)(y_zp + off);
      p.f = zc - fmaf(p.ra, za, p.rb * zb); /* as the compiler */
      if (rnd() % 8 == 0)
        p.f = (rnd_unit() - 0.5f) * 600.0f;
    }
    check_binary("add_i8", kind, w, in_place, 1, &p, a, b, c.ny, c.na);
  } else {
    tidsp_mul_i8_params p;
    memset(&p, 0, sizeof(p));
    p.bc = c.bc;
    p.kind = rq_kind;
    p.r = rnd_log(-12, rnd() % 4 == 0 ? 0 : -6);
    p.a_zp = a_zp;
    p.b_zp = b_zp;
    p.y_zp = y_zp;
    p.y_min = y_min;
    p.y_max = y_max;
    p.domain_offset = off;
    check_binary("mul_i8", kind, w, in_place, 0, &p, a, b, c.ny, c.na);
  }
  free(a);
  free(b);
}

/* Ties: the float formulas land exactly on .5 for these constants. */
static void run_binary_ties(void) {
  int8_t a[256], b[256];
  int32_t i, off;
  for (i = 0; i < 256; i++) {
    a[i] = (int8_t)(i - 128);
    b[i] = (int8_t)(127 - i);
  }
  for (off = 0; off <= 128; off += 128) {
    tidsp_add_i8_params pa;
    tidsp_mul_i8_params pm;
    memset(&pa, 0, sizeof(pa));
    pa.bc.rank = 1;
    pa.bc.shape[0] = 256;
    pa.bc.a_stride[0] = pa.bc.b_stride[0] = 1;
    pa.ra = 0.5f;
    pa.rb = 0.25f;
    pa.a_zp = 3;
    pa.b_zp = -5;
    pa.y_zp = 1;
    pa.y_min = -128;
    pa.y_max = 127;
    pa.domain_offset = off;
    pa.f = (float)(pa.y_zp + off) - fmaf(pa.ra, (float)(pa.a_zp + off), pa.rb * (float)(pa.b_zp + off));
    check_binary("add_i8 ties", BC_SAME, 256, 0, 1, &pa, a, b, 256, 256);
    pa.kind = TIDSP_REQUANT_Q31;
    check_binary("add_i8 q31 ties", BC_SAME, 256, 0, 1, &pa, a, b, 256, 256);
    memset(&pm, 0, sizeof(pm));
    pm.bc = pa.bc;
    pm.r = 0.5f / 64.0f;
    pm.a_zp = -7;
    pm.b_zp = 2;
    pm.y_zp = -3;
    pm.y_min = -128;
    pm.y_max = 127;
    pm.domain_offset = off;
    check_binary("mul_i8 ties", BC_SAME, 256, 0, 0, &pm, a, b, 256, 256);
    pm.kind = TIDSP_REQUANT_Q31;
    check_binary("mul_i8 q31 ties", BC_SAME, 256, 0, 0, &pm, a, b, 256, 256);
  }
}

/* Integer result of a FLOAT formula's value v clamped to [lo, hi]. */
static int32_t round_clamped(float v, float lo, float hi) {
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
  return (int32_t)lrintf(v);
}

/* Constants for which some (a, b) pair rounds differently when A is
 * folded first (ORT's swapped order) than in the usual order: on them a
 * kernel with the wrong order gives different bytes. A few pairs per
 * million differ, so this searches random constants; 0 if none found. */
static int find_add_order_case(tidsp_add_i8_params *p) {
  int32_t tries, a, b;
  for (tries = 0; tries < 2000; tries++) {
    const float ra = rnd_log(-7, 1), rb = rnd_log(-7, 1);
    const int32_t off = tries % 2 ? 128 : 0;
    const int32_t a_zp = rnd_range(-128, 127), b_zp = rnd_range(-128, 127);
    const int32_t y_zp = rnd_range(-128, 127);
    const float za = (float)(a_zp + off), zb = (float)(b_zp + off), zc = (float)(y_zp + off);
    const float f = zc - fmaf(ra, za, rb * zb), fs = zc - fmaf(rb, zb, ra * za);
    const float lo = (float)(-128 + off), hi = (float)(127 + off);
    for (a = -128; a < 128; a++) {
      for (b = -128; b < 128; b++) {
        const float av = (float)(a + off), bv = (float)(b + off);
        if (round_clamped(fmaf(av, ra, fmaf(bv, rb, f)), lo, hi) !=
            round_clamped(fmaf(bv, rb, fmaf(av, ra, fs)), lo, hi)) {
          p->ra = ra;
          p->rb = rb;
          p->f = f;
          p->a_zp = a_zp;
          p->b_zp = b_zp;
          p->y_zp = y_zp;
          p->domain_offset = off;
          return 1;
        }
      }
    }
  }
  return 0;
}

/* A multiplier for which some pair rounds differently with a fused
 * multiply-add, fl(prod·r + zc), than with the reference's two roundings. */
static int find_mul_fma_case(tidsp_mul_i8_params *p) {
  int32_t tries, a, b;
  for (tries = 0; tries < 2000; tries++) {
    const float r = rnd_log(-13, -5);
    const int32_t off = tries % 2 ? 128 : 0;
    const int32_t a_zp = rnd_range(-128, 127), b_zp = rnd_range(-128, 127);
    const int32_t y_zp = rnd_range(-128, 127);
    const float zc = (float)(y_zp + off);
    const float lo = (float)(-128 + off), hi = (float)(127 + off);
    for (a = -128; a < 128; a++) {
      for (b = -128; b < 128; b++) {
        const float prod = (float)((a - a_zp) * (b - b_zp));
        const float sep = prod * r;
        if (round_clamped(sep + zc, lo, hi) != round_clamped(fmaf(prod, r, zc), lo, hi)) {
          p->r = r;
          p->a_zp = a_zp;
          p->b_zp = b_zp;
          p->y_zp = y_zp;
          p->domain_offset = off;
          return 1;
        }
      }
    }
  }
  return 0;
}

/* Every (a, b) pair of int8 values as a 256 × 256 broadcast: swapped,
 * a[row] and b[col]; else a[col] and b[row]. */
static tidsp_broadcast all_pairs(int swapped) {
  tidsp_broadcast bc;
  memset(&bc, 0, sizeof(bc));
  bc.rank = 2;
  bc.shape[0] = bc.shape[1] = 256;
  bc.a_stride[0] = swapped ? 1 : 0;
  bc.a_stride[1] = swapped ? 0 : 1;
  bc.b_stride[0] = swapped ? 0 : 1;
  bc.b_stride[1] = swapped ? 1 : 0;
  return bc;
}

/* Every (a, b) pair, with A constant along rows (ORT's swapped operand
 * order for add) and then varying along them, for random constants and for
 * constants on which the operand order or a fused multiply-add would show. */
static void run_binary_exhaustive(void) {
  int8_t a[256], b[256];
  int32_t i, rep, swapped, q31;
  for (i = 0; i < 256; i++)
    a[i] = b[i] = (int8_t)(i - 128);
  for (rep = 0; rep < 6; rep++) {
    tidsp_add_i8_params pa;
    tidsp_mul_i8_params pm;
    int found_add = 0, found_mul = 0;
    memset(&pa, 0, sizeof(pa));
    memset(&pm, 0, sizeof(pm));
    if (rep < 2) {
      found_add = find_add_order_case(&pa);
      found_mul = find_mul_fma_case(&pm);
      CHECK_MSG(found_add && found_mul, "no rounding-sensitive constants found (add %d mul %d)",
                found_add, found_mul);
    }
    if (!found_add) {
      pa.ra = rnd_log(-7, 1);
      pa.rb = rnd_log(-7, 1);
      pa.a_zp = pick_zp();
      pa.b_zp = pick_zp();
      pa.y_zp = pick_zp();
      pa.domain_offset = rep % 2 ? 128 : 0;
      pa.f = (float)(pa.y_zp + pa.domain_offset) -
             fmaf(pa.ra, (float)(pa.a_zp + pa.domain_offset),
                  pa.rb * (float)(pa.b_zp + pa.domain_offset));
    }
    if (!found_mul) {
      pm.r = rnd_log(-13, -7);
      pm.a_zp = pa.a_zp;
      pm.b_zp = pa.b_zp;
      pm.y_zp = pa.y_zp;
      pm.domain_offset = pa.domain_offset;
    }
    pa.y_min = pm.y_min = -128;
    pa.y_max = pm.y_max = 127;
    for (swapped = 0; swapped < 2; swapped++) {
      pm.bc = pa.bc = all_pairs(swapped);
      for (q31 = 0; q31 < 2; q31++) { /* the same constants as Q31 */
        pa.kind = pm.kind = q31 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
        check_binary(q31 ? "add_i8 q31 all pairs" : "add_i8 all pairs",
                     swapped ? BC_A_CHANNEL : BC_B_CHANNEL, 256, 0, 1, &pa, a, b, 65536, 256);
        check_binary(q31 ? "mul_i8 q31 all pairs" : "mul_i8 all pairs",
                     swapped ? BC_A_CHANNEL : BC_B_CHANNEL, 256, 0, 0, &pm, a, b, 65536, 256);
      }
    }
  }
}

/* Q31 add / mul constants at the edges of the fast path's range
 * (eltwise_internal.h, tidsp_host_q31_const_ok: 0 or 2^−103 ≤ |c| < 2^100)
 * and past them (the reference then), subnormal, huge, ±inf, NaN, −0,
 * negative: every (a, b) pair, in both operand orders. */
static void run_binary_q31_consts(void) {
  static const float consts[] = {0.0f, -0.0f, 0x1p-103f, -0x1p-103f, 0x1.fffffep-104f,
                                 1.0e-40f, 0x1.fffffep99f, 0x1p100f, -0x1p100f, 0.37f,
                                 -1.5f, 3.0e-3f, 255.0f, INFINITY, -INFINITY, NAN};
  const int32_t n = (int32_t)(sizeof(consts) / sizeof(consts[0]));
  int8_t a[256], b[256];
  int32_t i, t, swapped;
  char what[64];
  for (i = 0; i < 256; i++)
    a[i] = b[i] = (int8_t)(i - 128);
  for (t = 0; t < 3 * n; t++) {
    tidsp_add_i8_params pa;
    tidsp_mul_i8_params pm;
    memset(&pa, 0, sizeof(pa));
    memset(&pm, 0, sizeof(pm));
    pa.kind = pm.kind = TIDSP_REQUANT_Q31;
    /* each constant once as ra, rb and f, the others typical */
    pa.ra = t < n ? consts[t] : rnd_log(-7, 1);
    pa.rb = t >= n && t < 2 * n ? consts[t - n] : rnd_log(-7, 1);
    pa.a_zp = pick_zp();
    pa.b_zp = pick_zp();
    pa.y_zp = pick_zp();
    pa.domain_offset = t % 2 ? 128 : 0;
    pa.f = t >= 2 * n ? consts[t - 2 * n]
                      : (float)(pa.y_zp + pa.domain_offset) -
                            fmaf(pa.ra, (float)(pa.a_zp + pa.domain_offset),
                                 pa.rb * (float)(pa.b_zp + pa.domain_offset));
    pa.y_min = pm.y_min = -128;
    pa.y_max = pm.y_max = 127;
    pm.r = consts[t % n];
    pm.a_zp = pa.a_zp;
    pm.b_zp = pa.b_zp;
    pm.y_zp = pa.y_zp;
    pm.domain_offset = pa.domain_offset;
    for (swapped = 0; swapped < 2; swapped++) {
      pm.bc = pa.bc = all_pairs(swapped);
      snprintf(what, sizeof(what), "add_i8 q31 consts %d", (int)t);
      check_binary(what, swapped ? BC_A_CHANNEL : BC_B_CHANNEL, 256, 0, 1, &pa, a, b, 65536, 256);
      snprintf(what, sizeof(what), "mul_i8 q31 consts %d", (int)t);
      check_binary(what, swapped ? BC_A_CHANNEL : BC_B_CHANNEL, 256, 0, 0, &pm, a, b, 65536, 256);
    }
  }
}

static void test_binary(void) {
  int32_t kind, l, rep;
  run_binary_exhaustive();
  for (kind = 0; kind < BC_COUNT; kind++) {
    for (l = 0; l < N_LENS; l++) {
      for (rep = 0; rep < 3; rep++) { /* rep 2: Q31 */
        const int32_t rq = rep == 2 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
        run_binary_case(1, kind, kLens[l], rq);
        run_binary_case(0, kind, kLens[l], rq);
      }
    }
  }
  run_binary_ties();
  run_binary_q31_consts();
}

/* Invalid parameters: the status of the reference. */
static void test_binary_errors(void) {
  int8_t v[4] = {1, 2, 3, 4}, y[4];
  tidsp_add_i8_params pa;
  tidsp_mul_i8_params pm;
  int32_t i, var;
  for (i = 0; i < 7; i++) {
    memset(&pa, 0, sizeof(pa));
    pa.bc.rank = 1;
    pa.bc.shape[0] = 4;
    pa.bc.a_stride[0] = pa.bc.b_stride[0] = 1;
    pa.ra = pa.rb = 1.0f;
    pa.y_min = -128;
    pa.y_max = 127;
    switch (i) {
    case 0: pa.domain_offset = 64; break;
    case 1: pa.a_zp = 200; break;
    case 2: pa.y_min = 5; pa.y_max = 4; break;
    case 3: pa.kind = 7; break;
    case 4: pa.bc.rank = 7; break;
    case 5: pa.bc.shape[0] = -1; break;
    default: pa.y_max = 128; break;
    }
    memcpy(&pm.bc, &pa.bc, sizeof(pa.bc));
    pm.kind = pa.kind;
    pm.r = 1.0f;
    pm.a_zp = pa.a_zp;
    pm.b_zp = pm.y_zp = 0;
    pm.y_min = pa.y_min;
    pm.y_max = pa.y_max;
    pm.domain_offset = pa.domain_offset;
    for (var = 0; var < tidsp_kernel_variant_count; var++) {
      if (!row_runs(var))
        continue;
      CHECK(tidsp_kernel_variants[var].add_i8(&pa, v, v, y) == tidsp_add_i8__ref(&pa, v, v, y));
      CHECK(tidsp_kernel_variants[var].mul_i8(&pm, v, v, y) == tidsp_mul_i8__ref(&pm, v, v, y));
      CHECK(tidsp_kernel_variants[var].add_i8(&pa, NULL, v, y) == TIDSP_ERR_NULL);
      CHECK(tidsp_kernel_variants[var].mul_i8(NULL, v, v, y) == TIDSP_ERR_NULL);
    }
  }
}

/* ---- quantize / dequantize ------------------------------------------------------- */

static const int32_t kDtypes[] = {TIDSP_DTYPE_I8, TIDSP_DTYPE_U8, TIDSP_DTYPE_I16,
                                  TIDSP_DTYPE_U16, TIDSP_DTYPE_I32};

static void dtype_range(int32_t dtype, int64_t *lo, int64_t *hi) {
  switch (dtype) {
  case TIDSP_DTYPE_I8: *lo = -128; *hi = 127; break;
  case TIDSP_DTYPE_U8: *lo = 0; *hi = 255; break;
  case TIDSP_DTYPE_I16: *lo = -32768; *hi = 32767; break;
  case TIDSP_DTYPE_U16: *lo = 0; *hi = 65535; break;
  default: *lo = INT32_MIN; *hi = INT32_MAX; break;
  }
}

static int32_t pick_qdq_zp(int32_t dtype) {
  int64_t lo, hi;
  dtype_range(dtype, &lo, &hi);
  switch (rnd() % 5) {
  case 0: return (int32_t)lo;
  case 1: return (int32_t)hi;
  case 2: return 0;
  default:
    if (dtype == TIDSP_DTYPE_I32)
      return (int32_t)(rnd() ^ (rnd() << 16));
    return (int32_t)(lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1)));
  }
}

/* A float for quantizing with scale s and zero point zp. */
static float rnd_qin(float s, int32_t zp, int32_t dtype) {
  static const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 1e30f, -1e30f,
                                  FLT_MAX, -FLT_MAX, 0.0f, -0.0f, 1e-40f, -1e-40f,
                                  3e9f, -3e9f, 4.1e18f, -4.1e18f};
  int64_t lo, hi;
  dtype_range(dtype, &lo, &hi);
  switch (rnd() % 8) {
  case 0:
    return special[rnd() % (sizeof special / sizeof special[0])];
  case 1: /* an exact tie when s is a power of two */
    return ((float)rnd_range(-300, 300) + 0.5f) * s;
  case 2: /* on or next to a clamp bound */
    return ((float)((rnd() % 2 ? hi : lo) - zp) + (float)rnd_range(-1, 1) * 0.5f) * s;
  default:
    return ((float)(lo - zp) + (rnd_unit() * 1.4f - 0.2f) * (float)(hi - lo)) * s;
  }
}

static float pick_scale(void) {
  switch (rnd() % 6) {
  case 0:
    return ldexpf(1.0f, rnd_range(-10, 2)); /* exact ties */
  case 1:
    return rnd_log(-40, -30); /* overflowing quotients */
  default:
    return rnd_log(-10, 2);
  }
}

typedef struct qdq_layout {
  int32_t outer, channels, inner;
} qdq_layout;

static void check_qdq(int32_t dtype, const qdq_layout *lay, int bad) {
  tidsp_qdq_params p;
  const size_t n = (size_t)lay->outer * lay->channels * lay->inner;
  const size_t esz = tidsp_dtype_size(dtype);
  float *scale = malloc(sizeof(float) * (size_t)lay->channels);
  int32_t *zp = malloc(sizeof(int32_t) * (size_t)lay->channels);
  float *xf = malloc(sizeof(float) * (n ? n : 1));
  uint8_t *xq = malloc(esz * (n ? n : 1));
  uint8_t *q_ref = guarded(esz * n), *q = guarded(esz * n);
  float *f_ref = guarded(sizeof(float) * n), *f = guarded(sizeof(float) * n);
  int32_t c, v, st_ref, st;
  size_t i;
  p.outer = lay->outer;
  p.channels = lay->channels;
  p.inner = lay->inner;
  p.dtype = dtype;
  for (c = 0; c < lay->channels; c++) {
    scale[c] = pick_scale();
    zp[c] = pick_qdq_zp(dtype);
  }
  if (bad == 1)
    zp[lay->channels - 1] = dtype == TIDSP_DTYPE_U8 ? -1 : 70000; /* out of range */
  if (bad == 2)
    p.dtype = TIDSP_DTYPE_F32;
  if (bad == 0 && rnd() % 6 == 0) /* odd scales: the same float operations still */
    scale[rnd() % (uint32_t)lay->channels] = rnd() % 2 ? -scale[0] : (rnd() % 2 ? 0.0f : NAN);
  for (i = 0; i < n; i++) {
    c = (int32_t)((i / (size_t)lay->inner) % (size_t)lay->channels);
    xf[i] = rnd_qin(scale[c], zp[c], dtype);
  }
  for (i = 0; i < esz * n; i++)
    xq[i] = (uint8_t)rnd();
  st_ref = tidsp_quantize__ref(&p, scale, zp, xf, q_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!row_runs(v))
      continue;
    memset(q, GUARD_BYTE, esz * n);
    st = kv->quantize(&p, scale, zp, xf, q);
    CHECK_MSG(st == st_ref && memcmp(q, q_ref, esz * n) == 0 && guards_ok(q, esz * n),
              "%s quantize dtype %d [%d,%d,%d] bad %d: status %d vs %d or bytes differ",
              kv->name, (int)dtype, (int)lay->outer, (int)lay->channels, (int)lay->inner,
              bad, (int)st, (int)st_ref);
  }
  st_ref = tidsp_dequantize__ref(&p, scale, zp, xq, f_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!row_runs(v))
      continue;
    memset(f, GUARD_BYTE, sizeof(float) * n);
    st = kv->dequantize(&p, scale, zp, xq, f);
    CHECK_MSG(st == st_ref && memcmp(f, f_ref, sizeof(float) * n) == 0 &&
                  guards_ok(f, sizeof(float) * n),
              "%s dequantize dtype %d [%d,%d,%d] bad %d: status %d vs %d or bytes differ",
              kv->name, (int)dtype, (int)lay->outer, (int)lay->channels, (int)lay->inner,
              bad, (int)st, (int)st_ref);
  }
  free(scale);
  free(zp);
  free(xf);
  free(xq);
  guarded_free(q_ref);
  guarded_free(q);
  guarded_free(f_ref);
  guarded_free(f);
}

static void test_qdq(void) {
  int32_t d, l, c, rep;
  static const int32_t chans[] = {2, 3, 16, 17, 33};
  static const int32_t inners[] = {1, 3, 16, 17, 49};
  for (d = 0; d < (int32_t)(sizeof kDtypes / sizeof kDtypes[0]); d++) {
    for (l = 0; l < N_LENS; l++) {
      for (rep = 0; rep < 2; rep++) {
        qdq_layout a = {kLens[l], 1, 1}, b = {1, 1, kLens[l]}, e = {2, 1, kLens[l]};
        check_qdq(kDtypes[d], &a, 0); /* per tensor, as the compiler emits it */
        check_qdq(kDtypes[d], &b, 0);
        check_qdq(kDtypes[d], &e, 0);
      }
    }
    for (c = 0; c < 5; c++) {
      for (l = 0; l < 5; l++) {
        qdq_layout pc = {1 + (int32_t)(rnd() % 3), chans[c], inners[l]};
        check_qdq(kDtypes[d], &pc, 0);
      }
    }
    {
      qdq_layout big = {1, 40, 1}, empty = {0, 3, 5}, bad = {2, 5, 3};
      check_qdq(kDtypes[d], &big, 0);
      check_qdq(kDtypes[d], &empty, 0);
      check_qdq(kDtypes[d], &bad, 1);
      check_qdq(kDtypes[d], &bad, 2);
    }
  }
  /* the model-input shape, per tensor */
  {
    qdq_layout in = {3 * 224 * 224, 1, 1};
    check_qdq(TIDSP_DTYPE_I8, &in, 0);
    check_qdq(TIDSP_DTYPE_U8, &in, 0);
  }
}

/* ---- lut_i8 --------------------------------------------------------------------- */

static void test_lut(void) {
  int8_t lut[256];
  int32_t l, v, i;
  for (l = 0; l <= N_LENS; l++) {
    const int32_t n = l < N_LENS ? kLens[l] : 0;
    tidsp_lut_params p;
    int8_t *x = malloc((size_t)n + 1), *y_ref = guarded((size_t)n), *y = guarded((size_t)n);
    int8_t *inplace = malloc((size_t)n + 1);
    p.n = n;
    fill_i8(lut, 256);
    fill_i8(x, (size_t)n);
    if (n >= 2) { /* both ends of the table */
      x[0] = -128;
      x[n - 1] = 127;
    }
    CHECK(tidsp_lut_i8__ref(&p, lut, x, y_ref) == TIDSP_OK);
    for (v = 0; v < tidsp_kernel_variant_count; v++) {
      const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
      if (!row_runs(v))
        continue;
      memset(y, GUARD_BYTE, (size_t)n);
      CHECK_MSG(kv->lut_i8(&p, lut, x, y) == TIDSP_OK && memcmp(y, y_ref, (size_t)n) == 0 &&
                    guards_ok(y, (size_t)n),
                "%s lut_i8 n %d differs", kv->name, (int)n);
      memcpy(inplace, x, (size_t)n);
      CHECK_MSG(kv->lut_i8(&p, lut, inplace, inplace) == TIDSP_OK &&
                    memcmp(inplace, y_ref, (size_t)n) == 0,
                "%s lut_i8 in place n %d differs", kv->name, (int)n);
      p.n = -1;
      CHECK(kv->lut_i8(&p, lut, x, y) == TIDSP_ERR_SHAPE);
      p.n = n;
      CHECK(kv->lut_i8(&p, NULL, x, y) == TIDSP_ERR_NULL);
    }
    /* the identity table reproduces the input */
    for (i = 0; i < 256; i++)
      lut[i] = (int8_t)(i - 128);
    CHECK(tidsp_lut_i8__ref(&p, lut, x, y_ref) == TIDSP_OK && memcmp(x, y_ref, (size_t)n) == 0);
    free(x);
    free(inplace);
    guarded_free(y_ref);
    guarded_free(y);
  }
}

/* ---- reduce_mean_dq_i8: a squeeze-excitation mean of dequantized codes ----------
 * Outputs below, at and past the 16-lane block, steps below, at and past the
 * 16-step block (a 7x7 and a 14x14 map); ORT's NHWC order and Eigen's; a
 * dequantize's table (the compiler's) and one that is not (a few entries
 * off by one ulp, zero nowhere): every row gives the reference's bytes. */

static void test_reduce_mean_dq(void) {
  static const int32_t shapes[][3] = {{1, 1, 1}, {1, 15, 49}, {1, 16, 16}, {1, 17, 7}, {2, 40, 196}, {1, 96, 33}};
  int32_t s, v, t, i;
  for (s = 0; s < (int32_t)(sizeof shapes / sizeof shapes[0]); s++)
    for (t = 0; t < 4; t++) {
      const int32_t n = shapes[s][0], c = shapes[s][1], hw = shapes[s][2], n_in = n * c * hw;
      tidsp_reduce_params p;
      memset(&p, 0, sizeof p);
      p.rank = 4;
      p.in_shape[0] = n;
      p.in_shape[1] = c;
      p.in_shape[2] = hw;
      p.in_shape[3] = 1;
      p.reduce_mask = 12;
      p.channels_last_order = t < 2;
      float dq[256], *y_ref = guarded(sizeof(float) * (size_t)(n * c)), *y = guarded(sizeof(float) * (size_t)(n * c));
      int8_t *x = malloc((size_t)n_in), codes[256];
      float scale = rnd_log(-8, 2);
      int32_t zp = rnd_range(-128, 127);
      tidsp_qdq_params qp;
      memset(&qp, 0, sizeof qp);
      qp.outer = 1;
      qp.channels = 1;
      qp.inner = 256;
      qp.dtype = TIDSP_DTYPE_I8;
      for (i = 0; i < 256; i++)
        codes[i] = (int8_t)(i - 128);
      CHECK(tidsp_dequantize__ref(&qp, &scale, &zp, codes, dq) == TIDSP_OK);
      if (t % 2) /* not a dequantize's table: a few entries moved by an ulp */
        for (i = 3; i < 256; i += 37)
          dq[i] = nextafterf(dq[i], INFINITY);
      fill_i8(x, (size_t)n_in);
      CHECK(tidsp_reduce_mean_dq_i8__ref(&p, dq, x, y_ref) == TIDSP_OK);
      for (v = 0; v < tidsp_kernel_variant_count; v++) {
        const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
        if (!row_runs(v))
          continue;
        memset(y, GUARD_BYTE, sizeof(float) * (size_t)(n * c));
        CHECK_MSG(kv->reduce_mean_dq_i8(&p, dq, x, y) == TIDSP_OK &&
                      memcmp(y, y_ref, sizeof(float) * (size_t)(n * c)) == 0 &&
                      guards_ok(y, sizeof(float) * (size_t)(n * c)),
                  "%s reduce_mean_dq_i8 %dx%dx%d (%s order, %s table) differs", kv->name, (int)n, (int)c, (int)hw,
                  t < 2 ? "NHWC" : "Eigen", t % 2 ? "another" : "a dequantize's");
        CHECK(kv->reduce_mean_dq_i8(&p, NULL, x, y) == TIDSP_ERR_NULL);
      }
      free(x);
      guarded_free(y_ref);
      guarded_free(y);
    }
}

/* ---- lut_i8_channels: a table per channel (inner 1, odd, a vector and more) ------ */

static void test_lut_channels(void) {
  static const int32_t shapes[][3] = {{1, 1, 1}, {2, 3, 1}, {1, 5, 7}, {3, 2, 64}, {1, 10, 529}, {2, 4, 100}};
  int32_t s, v, i;
  for (s = 0; s < (int32_t)(sizeof shapes / sizeof shapes[0]); s++) {
    const int32_t outer = shapes[s][0], ch = shapes[s][1], inner = shapes[s][2], n = outer * ch * inner;
    tidsp_lut_channels_params p = {n, ch, inner};
    int8_t *lut = malloc((size_t)ch * 256), *x = malloc((size_t)n), *inplace = malloc((size_t)n);
    int8_t *y_ref = guarded((size_t)n), *y = guarded((size_t)n);
    fill_i8(lut, (size_t)ch * 256);
    fill_i8(x, (size_t)n);
    CHECK(tidsp_lut_i8_channels__ref(&p, lut, x, y_ref) == TIDSP_OK);
    for (i = 0; i < n; i++) /* the oracle: the channel's own table */
      CHECK(y_ref[i] == lut[((i / inner) % ch) * 256 + x[i] + 128]);
    for (v = 0; v < tidsp_kernel_variant_count; v++) {
      const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
      if (!row_runs(v))
        continue;
      memset(y, GUARD_BYTE, (size_t)n);
      CHECK_MSG(kv->lut_i8_channels(&p, lut, x, y) == TIDSP_OK && memcmp(y, y_ref, (size_t)n) == 0 &&
                    guards_ok(y, (size_t)n),
                "%s lut_i8_channels %dx%dx%d differs", kv->name, (int)outer, (int)ch, (int)inner);
      memcpy(inplace, x, (size_t)n);
      CHECK_MSG(kv->lut_i8_channels(&p, lut, inplace, inplace) == TIDSP_OK && memcmp(inplace, y_ref, (size_t)n) == 0,
                "%s lut_i8_channels in place differs", kv->name);
      p.n = ch * inner > 1 ? n + 1 : -1; /* not whole channel runs */
      CHECK(kv->lut_i8_channels(&p, lut, x, y) == TIDSP_ERR_SHAPE);
      p.n = n;
      CHECK(kv->lut_i8_channels(&p, NULL, x, y) == TIDSP_ERR_NULL);
    }
    free(lut);
    free(x);
    free(inplace);
    guarded_free(y_ref);
    guarded_free(y);
  }
}

/* ---- pools ---------------------------------------------------------------------- */

static float rnd_pool_f32(void) {
  switch (rnd() % 16) {
  case 0: return NAN;
  case 1: return 0.0f;
  case 2: return -0.0f;
  case 3: return -INFINITY;
  case 4: return INFINITY;
  default: return (rnd_unit() - 0.5f) * 8.0f;
  }
}

static int32_t out_len(int32_t in, int32_t k, int32_t s, int32_t dil, int32_t pad_sum,
                       int ceil_mode) {
  const int32_t span = in + pad_sum - (k - 1) * dil - 1;
  if (span < 0)
    return 0;
  return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static void check_maxpool(const tidsp_pool2d_params *p, int all_low) {
  const size_t nx = (size_t)p->n * p->c * p->h_in * p->w_in;
  const size_t ny = (size_t)p->n * p->c * (p->h_out > 0 ? p->h_out : 0) * (p->w_out > 0 ? p->w_out : 0);
  int8_t *x = malloc(nx ? nx : 1), *y_ref = guarded(ny), *y = guarded(ny);
  float *xf = malloc(sizeof(float) * (nx ? nx : 1));
  float *yf_ref = guarded(sizeof(float) * ny), *yf = guarded(sizeof(float) * ny);
  int32_t v, st_ref, st, st_ref_f;
  size_t i;
  if (all_low) {
    memset(x, 0x80, nx);
    for (i = 0; i < nx; i++)
      xf[i] = -INFINITY;
    if (nx > 3) { /* a NaN among −inf: the result stays −inf */
      xf[nx / 2] = NAN;
      x[nx / 2] = -127;
    }
  } else {
    fill_i8(x, nx);
    for (i = 0; i < nx; i++)
      xf[i] = rnd_pool_f32();
  }
  st_ref = tidsp_maxpool_i8__ref(p, x, y_ref);
  st_ref_f = tidsp_maxpool_f32__ref(p, xf, yf_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, ny);
    st = kv->maxpool_i8(p, x, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, ny) == 0 && guards_ok(y, ny),
              "%s maxpool_i8 %dx%d k%dx%d s%d,%d d%d,%d pads %d %d %d %d out %dx%d: "
              "status %d vs %d or bytes differ",
              kv->name, (int)p->h_in, (int)p->w_in, (int)p->k_h, (int)p->k_w,
              (int)p->stride_h, (int)p->stride_w, (int)p->dil_h, (int)p->dil_w,
              (int)p->pad_top, (int)p->pad_left, (int)p->pad_bottom, (int)p->pad_right,
              (int)p->h_out, (int)p->w_out, (int)st, (int)st_ref);
    memset(yf, GUARD_BYTE, sizeof(float) * ny);
    st = kv->maxpool_f32(p, xf, yf);
    CHECK_MSG(st == st_ref_f && memcmp(yf, yf_ref, sizeof(float) * ny) == 0 &&
                  guards_ok(yf, sizeof(float) * ny),
              "%s maxpool_f32 %dx%d k%dx%d s%d,%d d%d,%d pads %d %d out %dx%d: "
              "status %d vs %d or bytes differ",
              kv->name, (int)p->h_in, (int)p->w_in, (int)p->k_h, (int)p->k_w,
              (int)p->stride_h, (int)p->stride_w, (int)p->dil_h, (int)p->dil_w,
              (int)p->pad_top, (int)p->pad_left, (int)p->h_out, (int)p->w_out, (int)st,
              (int)st_ref_f);
  }
  free(x);
  free(xf);
  guarded_free(y_ref);
  guarded_free(y);
  guarded_free(yf_ref);
  guarded_free(yf);
}

static void test_maxpool(void) {
  static const int32_t sizes[][2] = {{1, 1}, {2, 3}, {5, 7}, {7, 7}, {14, 14}, {9, 17},
                                     {4, 33}, {3, 63}, {3, 64}, {3, 65}, {2, 129},
                                     {56, 56}, {112, 112}, {2, 1001}};
  const int32_t n_sizes = (int32_t)(sizeof sizes / sizeof sizes[0]);
  int32_t si, rep;
  for (si = 0; si < n_sizes; si++) {
    for (rep = 0; rep < 24; rep++) {
      tidsp_pool2d_params p;
      int ceil_mode = rnd() % 2;
      memset(&p, 0, sizeof(p));
      p.n = 1 + (int32_t)(rnd() % 2);
      p.c = sizes[si][0] * sizes[si][1] > 2000 ? 1 : rnd_range(1, 3);
      p.h_in = sizes[si][0];
      p.w_in = sizes[si][1];
      p.k_h = rnd_range(1, 3);
      p.k_w = rep < 4 ? 3 : rnd_range(1, 5);
      p.stride_h = rnd_range(1, 2);
      p.stride_w = rep % 4 == 0 ? 1 : rep % 4 == 1 ? 2 : rnd_range(1, 4);
      p.dil_h = rnd() % 4 == 0 ? 2 : 1;
      p.dil_w = rnd() % 4 == 0 ? 2 : 1;
      p.pad_top = rnd_range(0, (p.k_h - 1) * p.dil_h / 2 + (rnd() % 5 == 0));
      p.pad_left = rnd_range(0, (p.k_w - 1) * p.dil_w / 2 + (rnd() % 5 == 0));
      p.pad_bottom = rnd_range(0, p.pad_top);
      p.pad_right = rnd_range(0, p.pad_left);
      p.h_out = out_len(p.h_in, p.k_h, p.stride_h, p.dil_h, p.pad_top + p.pad_bottom, ceil_mode);
      p.w_out = out_len(p.w_in, p.k_w, p.stride_w, p.dil_w, p.pad_left + p.pad_right, ceil_mode);
      /* A ceil-mode window may hang past the padding; one with no input
       * tap is an error both must report (the reference checks first). */
      check_maxpool(&p, rep == 7);
    }
  }
  /* the suite's shapes: ResNet's 3x3/2 pad 1, GoogLeNet's 3x3/2 ceil, 3x3/1 pad 1 */
  {
    tidsp_pool2d_params r = {1, 2, 112, 112, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0};
    tidsp_pool2d_params g = {1, 2, 56, 56, 28, 28, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 0};
    tidsp_pool2d_params s1 = {1, 3, 28, 28, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0};
    check_maxpool(&r, 0);
    check_maxpool(&g, 0);
    check_maxpool(&s1, 0);
  }
  /* Stride 1 with w_out = w_in (the AVX-512 flattened-plane path: outputs
   * of several rows per vector): planes at, below and above multiples of
   * 64 outputs, rows of 1..14, every left pad a same-width pool allows
   * (pad_left + pad_right = the window's span − 1), dilations, rows of
   * output that end past the input (h_out ≠ h_in) or a ceil-mode row, and
   * 112² (its mask table too large: the row path). */
  {
    static const int32_t flat[][2] = {{1, 1}, {8, 8}, {5, 13}, {7, 9}, {7, 7}, {14, 14},
                                      {3, 1}, {28, 28}, {9, 14}, {56, 56}, {112, 112}};
    int32_t fi, k_h, k_w, pl, rep;
    for (fi = 0; fi < (int32_t)(sizeof flat / sizeof flat[0]); fi++)
      for (k_h = 1; k_h <= 3; k_h++)
        for (k_w = 1; k_w <= 5; k_w += 2)
          for (rep = 0; rep < 2; rep++) {
            tidsp_pool2d_params p;
            int32_t span_w;
            memset(&p, 0, sizeof(p));
            p.n = 1 + rep;
            p.c = flat[fi][0] * flat[fi][1] > 2000 ? 1 : 3;
            p.h_in = flat[fi][0];
            p.w_in = flat[fi][1];
            p.k_h = k_h;
            p.k_w = k_w;
            p.stride_h = p.stride_w = 1;
            p.dil_h = rep ? 2 : 1;
            p.dil_w = rep && k_w > 1 ? 2 : 1;
            span_w = (k_w - 1) * p.dil_w;
            for (pl = 0; pl <= span_w; pl++) {
              p.pad_left = pl;
              p.pad_right = span_w - pl;
              p.pad_top = rep ? (k_h - 1) * p.dil_h : (k_h - 1) / 2;
              p.pad_bottom = rep ? 0 : (k_h - 1) / 2 + (pl & 1);
              p.h_out = out_len(p.h_in, p.k_h, 1, p.dil_h, p.pad_top + p.pad_bottom, pl & 1);
              p.w_out = out_len(p.w_in, p.k_w, 1, p.dil_w, p.pad_left + p.pad_right, pl & 1);
              CHECK(p.w_out == p.w_in);
              check_maxpool(&p, 0);
            }
          }
  }
  /* Stride 2 both ways with w_in = 2·w_out (the AVX-512 separable path:
   * window maxima along the flattened plane, then down the rows): every
   * kernel up to 3×3, left/top pads and ceil mode that keep w_out = w_in/2,
   * dilation 2, odd and even heights, rows of output 1..65 (65 and a plane
   * over the H buffer take the row path). */
  {
    static const int32_t half[][2] = {{2, 2}, {7, 14}, {14, 14}, {9, 28}, {28, 28}, {5, 64},
                                      {56, 56}, {3, 128}, {3, 130}, {112, 112}, {160, 112}};
    int32_t hi, kk, pl, cm, d, cases = 0;
    for (hi = 0; hi < (int32_t)(sizeof half / sizeof half[0]); hi++)
      for (kk = 1; kk <= 3; kk++)
        for (pl = 0; pl < kk; pl++)
          for (cm = 0; cm < 2; cm++)
            for (d = 1; d <= 2; d++) {
              tidsp_pool2d_params p;
              memset(&p, 0, sizeof(p));
              p.n = 1 + cm;
              p.c = half[hi][0] * half[hi][1] > 2000 ? 1 : 3;
              p.h_in = half[hi][0];
              p.w_in = half[hi][1];
              p.k_h = 4 - kk;
              p.k_w = kk;
              p.stride_h = p.stride_w = 2;
              p.dil_h = p.dil_w = d;
              p.pad_left = pl;
              p.pad_right = (kk - 1) * d - pl > pl ? pl : (kk - 1) * d - pl;
              p.pad_top = (p.k_h - 1) * d / 2;
              p.pad_bottom = cm ? 0 : p.pad_top;
              p.h_out = out_len(p.h_in, p.k_h, 2, d, p.pad_top + p.pad_bottom, cm);
              p.w_out = out_len(p.w_in, p.k_w, 2, d, p.pad_left + p.pad_right, cm);
              if (p.w_out * 2 != p.w_in || p.pad_right < 0)
                continue;
              check_maxpool(&p, 0);
              cases++;
            }
    CHECK(cases > 100);
  }
  /* Stride 2 along rows of more than 32 outputs (the AVX-512 even/odd
   * split path: L = 64 − ⌈span/2⌉ outputs per vector, span ≤ 16): widths
   * around one and two vectors of L, windows 1..9 wide at dilation 1 and 2
   * (span 16 the last taken, 18 the direct path), every left pad up to the
   * span, ceil mode, row strides 1..3, ResNet's 112² 3×3/2 pad 1. */
  {
    static const int32_t widths[] = {65, 66, 112, 123, 124, 125, 126, 127, 128, 129, 250, 300};
    int32_t wi, k_w, d, rep, cases = 0;
    for (wi = 0; wi < (int32_t)(sizeof widths / sizeof widths[0]); wi++)
      for (k_w = 1; k_w <= 9; k_w++)
        for (d = 1; d <= 2; d++)
          for (rep = 0; rep < 2; rep++) {
            tidsp_pool2d_params p;
            const int32_t span = (k_w - 1) * d;
            memset(&p, 0, sizeof(p));
            p.n = 1 + rep;
            p.c = 2;
            p.h_in = 3 + (int32_t)(rnd() % 6);
            p.w_in = widths[wi];
            p.k_h = rnd_range(1, 3);
            p.k_w = k_w;
            p.stride_h = rnd_range(1, 3);
            p.stride_w = 2;
            p.dil_h = 1;
            p.dil_w = d;
            p.pad_top = rnd_range(0, p.k_h - 1);
            p.pad_bottom = rnd_range(0, p.k_h - 1);
            p.pad_left = rnd_range(0, span);
            p.pad_right = rnd_range(0, span);
            p.h_out = out_len(p.h_in, p.k_h, p.stride_h, 1, p.pad_top + p.pad_bottom, rep);
            p.w_out = out_len(p.w_in, p.k_w, 2, d, p.pad_left + p.pad_right, rep);
            if (p.h_out <= 0 || p.w_out <= 32)
              continue;
            check_maxpool(&p, 0);
            cases++;
          }
    CHECK(cases > 300);
    {
      tidsp_pool2d_params r = {2, 5, 112, 112, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0};
      check_maxpool(&r, 0);
      check_maxpool(&r, 1);
    }
  }
  /* errors: bad geometry, an empty window, a row wider than the fast buffers */
  {
    tidsp_pool2d_params bad = {1, 1, 4, 4, 2, 2, 0, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0};
    tidsp_pool2d_params empty = {1, 1, 4, 4, 4, 4, 2, 2, 1, 1, 1, 1, 0, 3, 0, 3, 0};
    tidsp_pool2d_params wide = {1, 1, 2, 5000, 1, 4999, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0};
    check_maxpool(&bad, 0);
    check_maxpool(&empty, 0);
    check_maxpool(&wide, 0);
  }
}

static void check_gap(const tidsp_gap_i8_params *p, const void *rq, const int8_t *x,
                      const char *what) {
  const size_t ny = p->nc > 0 ? (size_t)p->nc : 0;
  int8_t *y_ref = guarded(ny), *y = guarded(ny);
  int32_t v, st, st_ref = tidsp_global_avgpool_i8__ref(p, rq, x, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, ny);
    st = kv->global_avgpool_i8(p, rq, x, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, ny) == 0 && guards_ok(y, ny),
              "%s global_avgpool_i8 %s nc %d hw %d: status %d vs %d or bytes differ",
              kv->name, what, (int)p->nc, (int)p->hw, (int)st, (int)st_ref);
  }
  guarded_free(y_ref);
  guarded_free(y);
}

static void test_gap(void) {
  int32_t l, rep;
  for (l = 0; l < N_LENS; l++) {
    for (rep = 0; rep < 4; rep++) {
      tidsp_gap_i8_params p;
      int32_t q31[2];
      float m;
      int8_t *x;
      memset(&p, 0, sizeof(p));
      p.nc = rnd_range(1, 5);
      p.hw = kLens[l];
      p.x_zp = pick_zp();
      p.rq.out_zp = pick_zp();
      p.rq.out_min = rep == 1 ? p.rq.out_zp : -128;
      p.rq.out_max = 127;
      x = malloc((size_t)p.nc * p.hw);
      fill_i8(x, (size_t)p.nc * p.hw);
      if (rep == 3)
        memset(x, 127, (size_t)p.hw); /* a saturated plane */
      m = rnd_log(-8, 2) / (float)p.hw;
      p.rq.kind = TIDSP_REQUANT_FLOAT;
      check_gap(&p, &m, x, "float");
      q31[0] = (int32_t)(1 << 23) + rnd_range(0, (1 << 23) - 1);
      q31[1] = rnd_range(20, 40);
      p.rq.kind = TIDSP_REQUANT_Q31;
      check_gap(&p, q31, x, "q31");
      p.rq.kind = TIDSP_REQUANT_FLOAT;
      p.rq.per_channel = 1; /* rejected */
      check_gap(&p, &m, x, "per-channel");
      p.rq.per_channel = 0;
      p.x_zp = 300; /* rejected */
      check_gap(&p, &m, x, "bad x_zp");
      free(x);
    }
  }
  /* The int32 accumulator wraps: 9e6 values of 127 and x_zp −128 sum past
   * 2^31, as ORT's does. */
  {
    tidsp_gap_i8_params p;
    const int32_t hw = 9000000;
    float m = 1.0f / (float)hw;
    int8_t *x = malloc((size_t)hw);
    memset(&p, 0, sizeof(p));
    memset(x, 127, (size_t)hw);
    p.nc = 1;
    p.hw = hw;
    p.x_zp = -128;
    p.rq.kind = TIDSP_REQUANT_FLOAT;
    p.rq.out_min = -128;
    p.rq.out_max = 127;
    check_gap(&p, &m, x, "wrap");
    free(x);
  }
}

/* ---- transpose / slice ------------------------------------------------------------ */

static void check_transpose(const tidsp_transpose_params *p) {
  size_t n = (size_t)(p->elem_size > 0 ? p->elem_size : 1), i;
  int32_t d, v, st, st_ref;
  uint8_t *x, *y_ref, *y;
  for (d = 0; d < p->rank && d < TIDSP_MAX_RANK; d++)
    n *= (size_t)(p->in_shape[d] > 0 ? p->in_shape[d] : 0);
  x = malloc(n ? n : 1);
  y_ref = guarded(n);
  y = guarded(n);
  for (i = 0; i < n; i++)
    x[i] = (uint8_t)rnd();
  st_ref = tidsp_transpose__ref(p, x, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, n);
    st = kv->transpose(p, x, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, n) == 0 && guards_ok(y, n),
              "%s transpose rank %d perm %d%d%d%d%d es %d: status %d vs %d or bytes differ",
              kv->name, (int)p->rank, (int)p->perm[0], (int)p->perm[1], (int)p->perm[2],
              (int)p->perm[3], (int)p->perm[4], (int)p->elem_size, (int)st, (int)st_ref);
  }
  free(x);
  guarded_free(y_ref);
  guarded_free(y);
}

static void check_slice(const tidsp_slice_params *p) {
  size_t nx = (size_t)(p->elem_size > 0 ? p->elem_size : 1), ny = nx, i;
  int32_t d, v, st, st_ref;
  uint8_t *x, *y_ref, *y;
  for (d = 0; d < p->rank && d < TIDSP_MAX_RANK; d++) {
    nx *= (size_t)(p->in_shape[d] > 0 ? p->in_shape[d] : 0);
    ny *= (size_t)(p->out_shape[d] > 0 ? p->out_shape[d] : 0);
  }
  x = malloc(nx ? nx : 1);
  y_ref = guarded(ny);
  y = guarded(ny);
  for (i = 0; i < nx; i++)
    x[i] = (uint8_t)rnd();
  st_ref = tidsp_slice__ref(p, x, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, ny);
    st = kv->slice(p, x, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, ny) == 0 && guards_ok(y, ny),
              "%s slice rank %d es %d: status %d vs %d or bytes differ", kv->name,
              (int)p->rank, (int)p->elem_size, (int)st, (int)st_ref);
  }
  free(x);
  guarded_free(y_ref);
  guarded_free(y);
}

static void test_movement(void) {
  static const int32_t sizes[] = {1, 2, 3, 4, 5, 7, 17, 28};
  static const int32_t elem[] = {1, 1, 2, 3, 4, 8};
  int32_t rep, d;
  for (rep = 0; rep < 300; rep++) {
    tidsp_transpose_params t;
    tidsp_slice_params s;
    memset(&t, 0, sizeof(t));
    t.rank = rnd_range(1, 5);
    t.elem_size = elem[rnd() % 6];
    for (d = 0; d < t.rank; d++) {
      t.in_shape[d] = sizes[rnd() % 8];
      t.perm[d] = d;
    }
    for (d = t.rank - 1; d > 0; d--) { /* a random permutation */
      const int32_t o = rnd_range(0, d), tmp = t.perm[d];
      t.perm[d] = t.perm[o];
      t.perm[o] = tmp;
    }
    if (rnd() % 3 == 0 && t.rank >= 3) { /* keep the inner dims: long runs */
      t.perm[t.rank - 1] = t.rank - 1;
      t.perm[t.rank - 2] = t.rank - 2;
      for (d = 0; d < t.rank - 2; d++)
        t.perm[d] = t.rank - 3 - d;
    }
    check_transpose(&t);
    memset(&s, 0, sizeof(s));
    s.rank = rnd_range(1, 5);
    s.elem_size = elem[rnd() % 6];
    for (d = 0; d < s.rank; d++) {
      const int32_t n = sizes[rnd() % 8];
      s.in_shape[d] = n;
      switch (rnd() % 4) {
      case 0: /* whole dim */
        s.start[d] = 0;
        s.step[d] = 1;
        s.out_shape[d] = n;
        break;
      case 1: /* reversed */
        s.start[d] = n - 1;
        s.step[d] = -1;
        s.out_shape[d] = n;
        break;
      case 2: /* every other */
        s.start[d] = rnd_range(0, n - 1);
        s.step[d] = 2;
        s.out_shape[d] = (n - s.start[d] + 1) / 2;
        break;
      default: /* a contiguous part */
        s.start[d] = rnd_range(0, n - 1);
        s.step[d] = 1;
        s.out_shape[d] = rnd_range(1, n - s.start[d]);
        break;
      }
    }
    check_slice(&s);
  }
  /* ShuffleNet's channel shuffle and split */
  {
    tidsp_transpose_params t = {5, {1, 2, 58, 28, 28}, {0, 2, 1, 3, 4}, 1};
    tidsp_slice_params s0 = {4, {1, 116, 28, 28}, {1, 58, 28, 28}, {0, 0, 0, 0}, {1, 1, 1, 1}, 1};
    tidsp_slice_params s1 = {4, {1, 116, 28, 28}, {1, 58, 28, 28}, {0, 58, 0, 0}, {1, 1, 1, 1}, 1};
    check_transpose(&t);
    check_slice(&s0);
    check_slice(&s1);
  }
  /* 2-D byte transposes the host tiles in 16×16 blocks: ConvNeXt's NCHW ↔
   * NHWC around its LayerNorms (whole tiles), edges that are not a multiple
   * of 16 in either dim, a batch of planes, an input row pitch larger than
   * the row ([P, Q, R] → [Q, R, P]: R contiguous, P strided by Q·R), and
   * 2-byte elements (not tiled: the element loop) */
  {
    static const tidsp_transpose_params ts[] = {
        {4, {1, 96, 56, 56}, {0, 2, 3, 1}, 1}, {4, {1, 56, 56, 96}, {0, 3, 1, 2}, 1},
        {4, {1, 37, 5, 7}, {0, 2, 3, 1}, 1},   {4, {1, 5, 7, 37}, {0, 3, 1, 2}, 1},
        {3, {3, 20, 33}, {0, 2, 1}, 1},        {3, {2, 16, 16}, {0, 2, 1}, 1},
        {3, {17, 3, 19}, {1, 2, 0}, 1},        {3, {33, 2, 48}, {2, 0, 1}, 1},
        {2, {16, 15}, {1, 0}, 1},              {4, {1, 40, 9, 9}, {0, 2, 3, 1}, 2},
    };
    size_t k;
    for (k = 0; k < sizeof(ts) / sizeof(ts[0]); k++)
      check_transpose(&ts[k]);
  }
  /* invalid: a repeated perm entry, a zero step, a start outside */
  {
    tidsp_transpose_params t = {3, {2, 3, 4}, {0, 0, 2}, 1};
    tidsp_slice_params s = {2, {4, 40}, {2, 20}, {0, 0}, {1, 0}, 1};
    tidsp_slice_params s2 = {2, {4, 40}, {2, 20}, {3, 0}, {1, 1}, 1};
    check_transpose(&t);
    check_slice(&s);
    check_slice(&s2);
  }
}

/* ------------------------------------------------------------------------
 * LayerNormalization, float and int8: every row against the reference,
 * rows around the 8-lane blocks and the reference's 4-element and Welford
 * tails (norm 1 .. 20, 23, 31 .. 33, 64, 65, 96, 100, 768, 1001, and 1024,
 * 1025 around the AVX-512 int8 pair path's longest row), with and
 * without a bias, in place, int8 zero points and scales at the extremes
 * (outputs that saturate both ways), float rows with large offsets (the
 * double sums and the variance's rounding matter), ±inf and NaN. */
static void check_layer_norm_f32(const tidsp_layer_norm_params *p, const float *x,
                                 const float *s, const float *b) {
  const size_t n = (size_t)(p->outer > 0 ? p->outer : 0) * (size_t)p->norm;
  const size_t nb = sizeof(float) * (n ? n : 1);
  float *y_ref = guarded(nb), *y = guarded(nb), *z = malloc(nb);
  int32_t v, st_ref = tidsp_layer_norm_f32__ref(p, x, s, b, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, nb);
    st = kv->layer_norm_f32(p, x, s, b, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, n * sizeof(float)) == 0 && guards_ok(y, nb),
              "layer_norm_f32 row %s: outer %d norm %d bias %d", kv->name, p->outer, p->norm,
              b != NULL);
    if (st_ref == TIDSP_OK && n) {
      memcpy(z, x, n * sizeof(float));
      CHECK(kv->layer_norm_f32(p, z, s, b, z) == TIDSP_OK);
      CHECK_MSG(memcmp(z, y_ref, n * sizeof(float)) == 0, "layer_norm_f32 in place row %s",
                kv->name);
    }
  }
  guarded_free(y_ref);
  guarded_free(y);
  free(z);
}

static void check_layer_norm_i8(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                                const float *s, const float *b) {
  const size_t n = (size_t)(p->ln.outer > 0 ? p->ln.outer : 0) * (size_t)p->ln.norm;
  int8_t *y_ref = guarded(n ? n : 1), *y = guarded(n ? n : 1), *z = malloc(n ? n : 1);
  int32_t v, st_ref = tidsp_layer_norm_i8__ref(p, x, s, b, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, n ? n : 1);
    st = kv->layer_norm_i8(p, x, s, b, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, n) == 0 && guards_ok(y, n ? n : 1),
              "layer_norm_i8 row %s: outer %d norm %d x_zp %d y_zp %d bias %d", kv->name,
              p->ln.outer, p->ln.norm, p->x_zp, p->y_zp, b != NULL);
    if (st_ref == TIDSP_OK && n) {
      memcpy(z, x, n);
      CHECK(kv->layer_norm_i8(p, z, s, b, z) == TIDSP_OK);
      CHECK_MSG(memcmp(z, y_ref, n) == 0, "layer_norm_i8 in place row %s", kv->name);
    }
  }
  guarded_free(y_ref);
  guarded_free(y);
  free(z);
}

static void test_layer_norm(void) {
  static const int32_t norms[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,  11,  12,  13,  14,
                                  15, 16, 17, 18, 19, 20, 23, 31, 32, 33, 64, 65, 96, 100, 768, 1001,
                                  1024, 1025};
  const int32_t nn = (int32_t)(sizeof norms / sizeof norms[0]);
  int32_t k, rep, i;
  for (k = 0; k < nn; k++) {
    for (rep = 0; rep < 24; rep++) {
      /* up to 19 rows: the AVX-512 int8 rows go in batches of 4 pairs,
       * then fewer pairs, then an odd last row */
      const int32_t norm = norms[k], outer = rnd_range(1, 19);
      const size_t n = (size_t)outer * (size_t)norm;
      float *xf = malloc(sizeof(float) * n), *s = malloc(sizeof(float) * (size_t)norm);
      float *b = malloc(sizeof(float) * (size_t)norm);
      int8_t *x = malloc(n);
      tidsp_layer_norm_params pf = {outer, norm, rep % 3 ? 1e-5f : 0.5f, 0};
      tidsp_layer_norm_i8_params pq;
      const float off = rep % 4 == 3 ? 3000.0f : 3.0f;
      for (i = 0; i < (int32_t)n; i++)
        xf[i] = (rnd_unit() - 0.5f) * (rep % 2 ? 8.0f : 0.01f) + off;
      if (rep >= 8) /* magnitudes 2^-40 .. 2^40: the double sums round */
        for (i = 0; i < (int32_t)n; i++)
          xf[i] = ldexpf(rnd_unit() - 0.5f, rnd_range(-40, 40));
      if (rep >= 16) /* large values that cancel, and small ones: the
                        order of the double additions shows */
        for (i = 0; i < (int32_t)n; i++)
          xf[i] = i % 3 ? ldexpf(rnd_unit() - 0.5f, -10) : (i % 2 ? 1.0f : -1.0f) * 1099511627776.0f;
      if (rep == 6 && n > 2) {
        xf[0] = INFINITY;
        xf[n - 1] = -INFINITY;
      }
      if (rep == 7 && n > 1)
        xf[n / 2] = NAN;
      for (i = 0; i < norm; i++) {
        s[i] = (rnd_unit() - 0.3f) * 2.0f;
        b[i] = rnd_unit() - 0.5f;
      }
      check_layer_norm_f32(&pf, xf, s, rep & 1 ? b : NULL);
      /* ORT's SimplifiedLayerNormalization (a bias is refused) and
       * SkipLayerNormalization orders: every row variant as the reference */
      pf.variant = TIDSP_LN_SIMPLIFIED;
      check_layer_norm_f32(&pf, xf, s, rep % 5 == 4 ? b : NULL);
      pf.variant = TIDSP_LN_WELFORD;
      check_layer_norm_f32(&pf, xf, s, rep & 1 ? b : NULL);
      pf.variant = TIDSP_LN_PLAIN;
      memset(&pq, 0, sizeof pq);
      pq.ln = pf;
      pq.x_zp = pick_zp();
      pq.y_zp = pick_zp();
      pq.x_scale = rep % 3 == 0 ? 1e-3f : 0.01f + rnd_unit() * 0.1f;
      /* small output scales saturate, large ones put values on few levels */
      pq.y_scale = rep % 4 == 0 ? 0.002f : (rep % 4 == 1 ? 0.5f : 0.005f + rnd_unit() * 0.05f);
      fill_i8(x, n);
      if (rep == 5)
        for (i = 0; i < (int32_t)n; i++)
          x[i] = (int8_t)(i % 2 ? 127 : -128);
      check_layer_norm_i8(&pq, x, s, rep & 1 ? b : NULL);
      free(xf);
      free(s);
      free(b);
      free(x);
    }
  }
  /* invalid arguments: the reference's status */
  {
    tidsp_layer_norm_i8_params pq;
    float v1 = 1.0f;
    int8_t q = 0;
    tidsp_layer_norm_params pf = {1, 0, 1e-5f, 0};
    check_layer_norm_f32(&pf, &v1, &v1, NULL);
    memset(&pq, 0, sizeof pq);
    pq.ln.outer = 1;
    pq.ln.norm = 1;
    check_layer_norm_i8(&pq, &q, &v1, NULL); /* y_scale 0 */
    pq.y_scale = 1.0f;
    pq.x_zp = 500;
    check_layer_norm_i8(&pq, &q, &v1, NULL);
    pq.x_zp = 0;
    pq.ln.variant = TIDSP_LN_SIMPLIFIED; /* float only */
    check_layer_norm_i8(&pq, &q, &v1, NULL);
    pq.ln.variant = TIDSP_LN_PLAIN;
    pf.norm = 1;
    pf.variant = 7; /* no such variant */
    check_layer_norm_f32(&pf, &v1, &v1, NULL);
    pq.ln.outer = -1;
    check_layer_norm_i8(&pq, &q, &v1, NULL);
  }
}

/* ------------------------------------------------------------------------
 * int8 Softmax: every row against the reference. Rows along the last axis
 * (inner = 1, the fast path) of lengths around the 16- and 64-lane blocks
 * and the 4-row groups, plus inner > 1 (the reference path); tables of
 * real exp values and of huge ones whose sums overflow to inf (NaN
 * outputs), y_recip from 0 to beyond the int8 range, zero points at the
 * extremes, in place. */
static void check_softmax_i8(const tidsp_softmax_i8_params *p, const float *table,
                             const int8_t *x) {
  const size_t n = p->outer > 0 && p->axis_len > 0 && p->inner > 0
                       ? (size_t)p->outer * (size_t)p->axis_len * (size_t)p->inner
                       : 0;
  int8_t *y_ref = guarded(n ? n : 1), *y = guarded(n ? n : 1), *z = malloc(n ? n : 1);
  int32_t v, st_ref = tidsp_softmax_i8__ref(p, table, x, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, n ? n : 1);
    st = kv->softmax_i8(p, table, x, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, n) == 0 && guards_ok(y, n ? n : 1),
              "softmax_i8 row %s: outer %d len %d inner %d recip %g zp %d", kv->name, p->outer,
              p->axis_len, p->inner, (double)p->y_recip, p->y_zp);
    if (st_ref == TIDSP_OK && n) {
      memcpy(z, x, n);
      CHECK(kv->softmax_i8(p, table, z, z) == TIDSP_OK);
      CHECK_MSG(memcmp(z, y_ref, n) == 0, "softmax_i8 in place row %s", kv->name);
    }
  }
  guarded_free(y_ref);
  guarded_free(y);
  free(z);
}

static void test_softmax_i8(void) {
  static const int32_t lens[] = {1, 2, 3, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 197, 300};
  const int32_t nl = (int32_t)(sizeof lens / sizeof lens[0]);
  float table[256];
  int32_t k, rep, i;
  for (k = 0; k < nl; k++) {
    for (rep = 0; rep < 12; rep++) {
      tidsp_softmax_i8_params p;
      const float xs = rep % 3 == 0 ? 0.02f : (rep % 3 == 1 ? 0.1f : 0.5f);
      size_t n;
      int8_t *x;
      p.outer = rnd_range(1, 9);
      p.axis_len = lens[k];
      p.inner = rep % 6 == 5 ? rnd_range(2, 5) : 1;
      p.y_recip = rep % 4 == 0 ? 256.0f : (rep % 4 == 1 ? 255.0f : (rep % 4 == 2 ? 0.0f : 1000.0f));
      p.y_zp = rep % 2 ? -128 : rnd_range(-128, 127);
      for (i = 0; i < 256; i++)
        table[i] = rep == 7 ? ldexpf(1.0f, 100 + i / 2) /* sums overflow */
                            : expf((float)(i - 255 + (rep % 2 ? 0 : 8)) * xs);
      n = (size_t)p.outer * (size_t)p.axis_len * (size_t)p.inner;
      x = malloc(n);
      fill_i8(x, n);
      if (rep == 4) /* narrow range: many equal entries */
        for (i = 0; i < (int32_t)n; i++)
          x[i] = (int8_t)(x[i] % 3);
      check_softmax_i8(&p, table, x);
      free(x);
    }
  }
  /* the sum's order shows: the row maximum first with entry 2^24, then
   * entries 1 that it absorbs (2^24 + 1 rounds to 2^24), so in element
   * order s = 2^24 and a small output rounds (2^23 + 64)/2^24 up to 1; in
   * any other order s > 2^24 + 128 and it rounds to 0 */
  {
    tidsp_softmax_i8_params p = {5, 300, 1, 8388672.0f, -128};
    int8_t x[5 * 300];
    for (i = 0; i < 256; i++)
      table[i] = i == 255 ? 16777216.0f : 1.0f;
    for (i = 0; i < 5 * 300; i++)
      x[i] = (int8_t)(i % 300 == 0 ? 100 : rnd_range(-128, 99));
    check_softmax_i8(&p, table, x);
  }
  /* invalid arguments: the reference's status */
  {
    tidsp_softmax_i8_params p = {1, 0, 1, 255.0f, -128};
    int8_t q = 0;
    check_softmax_i8(&p, table, &q);
    p.axis_len = 1;
    p.y_zp = 300;
    check_softmax_i8(&p, table, &q);
    p.y_zp = 0;
    p.y_recip = -1.0f;
    check_softmax_i8(&p, table, &q);
    p.y_recip = NAN;
    check_softmax_i8(&p, table, &q);
    p.y_recip = 1.0f;
    check_softmax_i8(&p, NULL, &q);
    p.outer = -1;
    check_softmax_i8(&p, table, &q);
  }
}

/* ------------------------------------------------------------------------
 * float Softmax: every row against the reference, rows along the last
 * axis (the fast path) of lengths around the 16-lane blocks, inner > 1
 * (the reference), inputs spread wide (exp underflows below the clamp),
 * ±0, ±inf and NaN at several places, in place. */
static void check_softmax_f32(const tidsp_softmax_params *p, const float *x) {
  const size_t n = p->outer > 0 && p->axis_len > 0 && p->inner > 0
                       ? (size_t)p->outer * (size_t)p->axis_len * (size_t)p->inner
                       : 0;
  const size_t nb = sizeof(float) * (n ? n : 1);
  float *y_ref = guarded(nb), *y = guarded(nb), *z = malloc(nb);
  int32_t v, st_ref = tidsp_softmax_f32__ref(p, x, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!row_runs(v))
      continue;
    memset(y, GUARD_BYTE, nb);
    st = kv->softmax_f32(p, x, y);
    CHECK_MSG(st == st_ref && memcmp(y, y_ref, n * sizeof(float)) == 0 && guards_ok(y, nb),
              "softmax_f32 row %s: outer %d len %d inner %d", kv->name, p->outer, p->axis_len,
              p->inner);
    if (st_ref == TIDSP_OK && n) {
      memcpy(z, x, n * sizeof(float));
      CHECK(kv->softmax_f32(p, z, z) == TIDSP_OK);
      CHECK_MSG(memcmp(z, y_ref, n * sizeof(float)) == 0, "softmax_f32 in place row %s",
                kv->name);
    }
  }
  guarded_free(y_ref);
  guarded_free(y);
  free(z);
}

static void test_softmax_f32(void) {
  static const int32_t lens[] = {1, 2, 3, 15, 16, 17, 31, 33, 47, 48, 49, 64, 65, 197, 300};
  const int32_t nl = (int32_t)(sizeof lens / sizeof lens[0]);
  int32_t k, rep, i;
  for (k = 0; k < nl; k++) {
    for (rep = 0; rep < 12; rep++) {
      tidsp_softmax_params p;
      size_t n;
      float *x;
      p.outer = rnd_range(1, 6);
      p.axis_len = lens[k];
      p.inner = rep % 6 == 5 ? rnd_range(2, 4) : 1;
      n = (size_t)p.outer * (size_t)p.axis_len * (size_t)p.inner;
      x = malloc(sizeof(float) * n);
      for (i = 0; i < (int32_t)n; i++)
        x[i] = (rnd_unit() - 0.5f) * (rep % 3 == 0 ? 4.0f : (rep % 3 == 1 ? 40.0f : 400.0f));
      if (rep == 6)
        for (i = 0; i < (int32_t)n; i++)
          x[i] = i % 2 ? 0.0f : -0.0f;
      if (rep == 7 && n > 2) {
        x[n / 2] = INFINITY;
        x[0] = -INFINITY;
      }
      if (rep == 8)
        x[n - 1] = NAN;
      if (rep == 9)
        x[0] = NAN;
      if (rep == 10 && n > 2) {
        x[n / 3] = NAN;
        x[n / 2] = 1e30f;
      }
      check_softmax_f32(&p, x);
      free(x);
    }
  }
  {
    tidsp_softmax_params p = {1, 0, 1};
    float q = 0.0f;
    check_softmax_f32(&p, &q);
    p.axis_len = 1;
    p.outer = -1;
    check_softmax_f32(&p, &q);
    p.outer = 1;
    p.inner = 0;
    check_softmax_f32(&p, &q);
  }
}

int main(void) {
  int32_t v;
  for (v = 0; v < tidsp_kernel_variant_count; v++)
    printf("row %s: %s\n", tidsp_kernel_variants[v].name,
           tidsp_kernel_variants[v].supported() ? "runs" : "skipped (CPU)");
  test_binary();
  test_binary_errors();
  test_qdq();
  test_lut();
  test_lut_channels();
  test_reduce_mean_dq();
  test_maxpool();
  test_gap();
  test_movement();
  test_layer_norm();
  test_softmax_i8();
  test_softmax_f32();
  UNIT_MAIN_END();
}
