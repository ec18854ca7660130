/*
 * test_kernel_mmalib.c — the MMALIB offload kernels (include/cstatic/
 * mmalib.h) against naive oracles written differently: the conv oracle is
 * one grouped convolution over an explicitly zero-padded copy of the input
 * (it serves conv2d, grouped_loop and depthwise alike), the requantization
 * oracle divides in 128-bit integers and rounds by comparing the remainder,
 * the max-pool oracle pads with −128 explicitly. Random shapes plus every
 * edge the spec names: non-64-aligned depthwise W_out (exactly C·H_out·W_out
 * elements written, guard bytes intact), oversized weights through sliced,
 * grouped_loop == per-group conv, stride 2, both residual-add operand
 * orders, i16 with int64 bias, MMALIB-882, alignment and precondition
 * rejections (which must leave the output untouched), and one full int8
 * conv layer 64→64 56×56 3×3 within 1 LSB of the exact float reference.
 *
 * The int8 conv / FC wrappers compute through the dispatched generic
 * kernels when that is exact and through MMALIB's scalar loops otherwise
 * (mmalib_internal.h). The random cases above take the dispatched path;
 * test_path_bound drives each wrapper with extreme operands to a bias at
 * and one past the int32 bound on both signs (past it the dispatched
 * kernel would wrap, so agreeing with the oracle there proves the scalar
 * path ran) and checks which path the wrappers' shared computation reports
 * taking; test_dispatched_vs_scalar compares the two paths directly on
 * random geometry, requiring the dispatched one to accept every case.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/mmalib/mmalib_internal.h"
#include "cstatic/mmalib.h"
#include "unit.h"

__extension__ typedef __int128 i128;

#define GUARD 64
#define GUARD_BYTE 0xA5
#define OK TIDSP_MMALIB_OK
#define EPRE TIDSP_MMALIB_ERR_PRECONDITION

/* ---- random numbers ------------------------------------------------------ */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}
static int32_t rnd_range(int32_t lo, int32_t hi) {
  return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
}

/* ---- 128-byte aligned buffers with guard bytes on both sides -------------- */
typedef struct buf {
  uint8_t *raw, *p;
  size_t n;
} buf;

static buf buf_new(size_t n) {
  buf b;
  b.n = n;
  b.raw = malloc(n + 4 * GUARD + 128);
  b.p = b.raw + GUARD;
  b.p += (128 - ((uintptr_t)b.p & 127)) & 127;
  memset(b.raw, GUARD_BYTE, n + 4 * GUARD + 128);
  return b;
}
static int buf_guards_ok(const buf *b) {
  size_t i;
  for (i = 1; i <= GUARD; i++)
    if (b->p[-(ptrdiff_t)i] != GUARD_BYTE || b->p[b->n + i - 1] != GUARD_BYTE)
      return 0;
  return 1;
}
/* Every byte of the payload still GUARD_BYTE: a rejected call wrote nothing. */
static int buf_untouched(const buf *b) {
  size_t i;
  for (i = 0; i < b->n; i++)
    if (b->p[i] != GUARD_BYTE)
      return 0;
  return buf_guards_ok(b);
}
static void buf_free(buf *b) { free(b->raw); }

static void fill_i8(int8_t *p, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    p[i] = (int8_t)(rnd() & 0xFF);
}
static void fill_i16(int16_t *p, size_t n, int32_t amp) {
  size_t i;
  for (i = 0; i < n; i++)
    p[i] = (int16_t)rnd_range(-amp, amp > 32767 ? 32767 : amp);
}

/* ---- oracles -------------------------------------------------------------- */

/* sat(round_half_up((acc + bias)·scale / 2^shift)) by 128-bit division. */
static int64_t oracle_requant(int64_t acc, int64_t bias, int32_t scale, int32_t shift,
                              int64_t lo, int64_t hi) {
  i128 v = ((i128)acc + bias) * scale;
  i128 d = (i128)1 << shift;
  i128 q = v / d, r = v % d;
  if (r < 0) { /* floor */
    q -= 1;
    r += d;
  }
  if (2 * r >= d && shift > 0)
    q += 1;
  if (q < lo)
    return lo;
  if (q > hi)
    return hi;
  return (int64_t)q;
}

/* Grouped convolution of int32 data [C_in][H][W] with [C_out][C_in/g][KH][KW]
 * weights over an explicitly zero-padded copy: acc[C_out][Ho][Wo] (malloc'd). */
static int64_t *oracle_conv(const int32_t *in, const int32_t *w, int C_in, int H, int W,
                            int C_out, int KH, int KW, int s, int pt, int pb, int pl, int pr,
                            int groups, int *Ho, int *Wo) {
  int Hp = H + pt + pb, Wp = W + pl + pr, cig = C_in / groups, cog = C_out / groups;
  int32_t *pad = calloc((size_t)C_in * Hp * Wp, sizeof(int32_t));
  int64_t *acc;
  int c, y, x, oc, oy, ox, i, ky, kx;
  for (c = 0; c < C_in; c++)
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        pad[((size_t)c * Hp + y + pt) * Wp + x + pl] = in[((size_t)c * H + y) * W + x];
  *Ho = (Hp - KH) / s + 1;
  *Wo = (Wp - KW) / s + 1;
  acc = calloc((size_t)C_out * *Ho * *Wo, sizeof(int64_t));
  for (oc = 0; oc < C_out; oc++) {
    int g = oc / cog;
    for (oy = 0; oy < *Ho; oy++)
      for (ox = 0; ox < *Wo; ox++) {
        int64_t a = 0;
        for (i = 0; i < cig; i++)
          for (ky = 0; ky < KH; ky++)
            for (kx = 0; kx < KW; kx++)
              a += (int64_t)pad[((size_t)(g * cig + i) * Hp + oy * s + ky) * Wp + ox * s + kx] *
                   w[(((size_t)oc * cig + i) * KH + ky) * KW + kx];
        acc[((size_t)oc * *Ho + oy) * *Wo + ox] = a;
      }
  }
  free(pad);
  return acc;
}

static int32_t *widen_i8(const int8_t *p, size_t n) {
  int32_t *o = malloc((n ? n : 1) * sizeof(int32_t));
  size_t i;
  for (i = 0; i < n; i++)
    o[i] = p[i];
  return o;
}
static int32_t *widen_i16(const int16_t *p, size_t n) {
  int32_t *o = malloc((n ? n : 1) * sizeof(int32_t));
  size_t i;
  for (i = 0; i < n; i++)
    o[i] = p[i];
  return o;
}

/* Per-channel scale in [0,255] and a shift that keeps most outputs inside
 * the range for a reduction of n taps of typical magnitude `mag`, with the
 * occasional extreme (0 and 31) so saturation and shift 0 are exercised. */
static void random_requant(uint8_t *scale, uint8_t *shift, int32_t c, int32_t n, double mag,
                           double out_range) {
  int32_t i;
  for (i = 0; i < c; i++) {
    double typ, sh;
    scale[i] = (uint8_t)(rnd() % 8 == 0 ? rnd_range(0, 255) : rnd_range(1, 255));
    typ = sqrt((double)n) * mag * (scale[i] ? scale[i] : 1);
    sh = floor(log2(typ / out_range + 1.0)) + rnd_range(-2, 2);
    if (rnd() % 16 == 0)
      sh = rnd() & 1 ? 0 : 31;
    shift[i] = (uint8_t)(sh < 0 ? 0 : (sh > 31 ? 31 : sh));
  }
}

/* ---- requantization by hand ------------------------------------------------ */
static int8_t fc1_i8(int32_t v, uint8_t s, uint8_t sh) {
  int8_t x = 1, w = 1, out = 0;
  int32_t b = v - 1;
  buf bx = buf_new(1), bw = buf_new(1), bo = buf_new(1);
  memcpy(bx.p, &x, 1);
  memcpy(bw.p, &w, 1);
  if (mmalib_matmul_bias_i8((int8_t *)bx.p, (int8_t *)bw.p, &b, &s, &sh, (int8_t *)bo.p, 1, 1,
                            1) == OK)
    out = (int8_t)bo.p[0];
  else
    out = 99;
  buf_free(&bx);
  buf_free(&bw);
  buf_free(&bo);
  return out;
}

static void test_rounding_by_hand(void) {
  /* (acc+bias)·scale = v; shift 1: v/2 rounded half toward +inf. */
  CHECK(fc1_i8(5, 1, 1) == 3);   /* 2.5 → 3 */
  CHECK(fc1_i8(-5, 1, 1) == -2); /* −2.5 → −2 */
  CHECK(fc1_i8(3, 1, 1) == 2);   /* 1.5 → 2 */
  CHECK(fc1_i8(-3, 1, 1) == -1); /* −1.5 → −1 */
  CHECK(fc1_i8(-7, 1, 2) == -2); /* −1.75 → −2 */
  CHECK(fc1_i8(7, 3, 0) == 21);  /* shift 0: exact */
  CHECK(fc1_i8(1000, 1, 0) == 127);
  CHECK(fc1_i8(-1000, 1, 0) == -128);
  CHECK(fc1_i8(255, 255, 9) == 127); /* 65025/512 = 127.0 */
  CHECK(fc1_i8(1000, 0, 5) == 0);    /* scale 0 */
  CHECK(fc1_i8(-257, 255, 9) == -128); /* −127.998… → −128 */
  CHECK(fc1_i8(1, 1, 31) == 0);
  CHECK(fc1_i8(0x40000000, 1, 31) == 1); /* 0.5 → 1 */
  CHECK(fc1_i8(5, 1, 32) == 99);         /* shift > 31 rejected */
}

/* ---- conv2d i8 / i16 --------------------------------------------------------- */
typedef struct conv_case {
  int c_in, h, w, c_out, kh, kw, s, pt, pb, pl, pr;
} conv_case;

static conv_case random_conv_case(int max_c) {
  conv_case k;
  k.c_in = rnd_range(1, max_c);
  k.c_out = rnd_range(1, max_c);
  k.kh = rnd_range(1, 5);
  k.kw = rnd() % 3 ? k.kh : rnd_range(1, 5);
  k.s = rnd_range(1, 3);
  k.pt = rnd_range(0, 2);
  k.pb = rnd_range(0, 2);
  k.pl = rnd_range(0, 2);
  k.pr = rnd_range(0, 2);
  k.h = rnd_range(1, 12);
  k.w = rnd_range(1, 12);
  if (k.h + k.pt + k.pb < k.kh)
    k.h = k.kh;
  if (k.w + k.pl + k.pr < k.kw)
    k.w = k.kw;
  return k;
}

/* Run mmalib_conv2d_i8 on case k (null_q: pass NULL bias/scale/shift) and
 * compare with the oracle. Returns the number of mismatching elements. */
static int run_conv_i8(const conv_case *k, int null_q) {
  size_t nin = (size_t)k->c_in * k->h * k->w, nw = (size_t)k->c_out * k->c_in * k->kh * k->kw;
  buf bi = buf_new(nin), bw = buf_new(nw), bo;
  int32_t *bias = malloc(sizeof(int32_t) * k->c_out);
  uint8_t *scale = malloc(k->c_out), *shift = malloc(k->c_out);
  int32_t *wi, *ww;
  int64_t *acc;
  int ho, wo, i, bad = 0, st;
  size_t nout, j;
  fill_i8((int8_t *)bi.p, nin);
  fill_i8((int8_t *)bw.p, nw);
  for (i = 0; i < k->c_out; i++)
    bias[i] = rnd_range(-40000, 40000);
  random_requant(scale, shift, k->c_out, k->c_in * k->kh * k->kw, 5000, 60);
  wi = widen_i8((int8_t *)bi.p, nin);
  ww = widen_i8((int8_t *)bw.p, nw);
  acc = oracle_conv(wi, ww, k->c_in, k->h, k->w, k->c_out, k->kh, k->kw, k->s, k->pt, k->pb,
                    k->pl, k->pr, 1, &ho, &wo);
  nout = (size_t)k->c_out * ho * wo;
  bo = buf_new(nout);
  st = mmalib_conv2d_i8((int8_t *)bi.p, (int8_t *)bw.p, null_q ? NULL : bias,
                        null_q ? NULL : scale, null_q ? NULL : shift, (int8_t *)bo.p, k->c_in,
                        k->h, k->w, k->c_out, k->kh, k->kw, k->s, k->s, k->pt, k->pb, k->pl,
                        k->pr);
  CHECK_MSG(st == OK, "conv2d_i8 status %d", st);
  for (j = 0; j < nout; j++) {
    int c = (int)(j / ((size_t)ho * wo));
    int64_t want = null_q ? oracle_requant(acc[j], 0, 1, 0, -128, 127)
                          : oracle_requant(acc[j], bias[c], scale[c], shift[c], -128, 127);
    if ((int8_t)bo.p[j] != want)
      bad++;
  }
  CHECK(buf_guards_ok(&bo));
  free(wi);
  free(ww);
  free(acc);
  free(bias);
  free(scale);
  free(shift);
  buf_free(&bi);
  buf_free(&bw);
  buf_free(&bo);
  return bad;
}

static void test_conv2d_i8(void) {
  int t;
  conv_case fixed[] = {
      {3, 17, 19, 8, 3, 3, 2, 1, 1, 1, 1}, /* stride 2 */
      {8, 9, 9, 5, 1, 1, 1, 0, 0, 0, 0},   /* 1×1 */
      {64, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1},  /* reduction 576 */
      {4, 7, 8, 3, 7, 7, 2, 3, 3, 3, 3},   /* 7×7 stride 2 (stem) */
      {2, 5, 6, 3, 2, 4, 2, 0, 1, 2, 0},   /* KH ≠ KW, asymmetric pads */
      {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
  };
  for (t = 0; t < (int)(sizeof(fixed) / sizeof(fixed[0])); t++)
    CHECK_MSG(run_conv_i8(&fixed[t], 0) == 0, "fixed conv case %d", t);
  for (t = 0; t < 60; t++) {
    conv_case k = random_conv_case(8);
    int bad = run_conv_i8(&k, t % 10 == 0);
    CHECK_MSG(bad == 0, "random conv i8 %d: %d mismatches (cin %d h %d w %d cout %d k %dx%d s %d)",
              t, bad, k.c_in, k.h, k.w, k.c_out, k.kh, k.kw, k.s);
  }
}

static void test_conv2d_i16(void) {
  int t;
  for (t = 0; t < 40; t++) {
    conv_case k = random_conv_case(6);
    size_t nin = (size_t)k.c_in * k.h * k.w, nw = (size_t)k.c_out * k.c_in * k.kh * k.kw;
    buf bi = buf_new(nin * 2), bw = buf_new(nw * 2), bo;
    int64_t *bias = malloc(sizeof(int64_t) * k.c_out);
    uint8_t *scale = malloc(k.c_out), *shift = malloc(k.c_out);
    int32_t *wi, *ww;
    int64_t *acc;
    int ho, wo, i, bad = 0, st, null_q = t % 8 == 7;
    size_t nout, j;
    fill_i16((int16_t *)bi.p, nin, t % 3 ? 32768 : 300);
    fill_i16((int16_t *)bw.p, nw, t % 3 ? 32768 : 300);
    for (i = 0; i < k.c_out; i++) {
      /* int64 bias: ordinary, beyond int32, and absurd (saturating). */
      int r = rnd_range(0, 9);
      bias[i] = r < 6 ? (int64_t)rnd_range(-1000000000, 1000000000) * (r < 3 ? 1 : 1000)
                      : (r == 6 ? INT64_MAX : (r == 7 ? INT64_MIN : ((int64_t)1 << 60)));
    }
    random_requant(scale, shift, k.c_out, k.c_in * k.kh * k.kw, t % 3 ? 3e8 : 3e4, 8000);
    wi = widen_i16((int16_t *)bi.p, nin);
    ww = widen_i16((int16_t *)bw.p, nw);
    acc = oracle_conv(wi, ww, k.c_in, k.h, k.w, k.c_out, k.kh, k.kw, k.s, k.pt, k.pb, k.pl, k.pr,
                      1, &ho, &wo);
    nout = (size_t)k.c_out * ho * wo;
    bo = buf_new(nout * 2);
    st = mmalib_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, null_q ? NULL : bias,
                           null_q ? NULL : scale, null_q ? NULL : shift, (int16_t *)bo.p, k.c_in,
                           k.h, k.w, k.c_out, k.kh, k.kw, k.s, k.s, k.pt, k.pb, k.pl, k.pr);
    CHECK_MSG(st == OK, "conv2d_i16 status %d", st);
    for (j = 0; j < nout; j++) {
      int c = (int)(j / ((size_t)ho * wo));
      int16_t got;
      int64_t want = null_q ? oracle_requant(acc[j], 0, 1, 0, -32768, 32767)
                            : oracle_requant(acc[j], bias[c], scale[c], shift[c], -32768, 32767);
      memcpy(&got, bo.p + 2 * j, 2);
      if (got != want)
        bad++;
    }
    CHECK_MSG(bad == 0, "random conv i16 %d: %d mismatches", t, bad);
    CHECK(buf_guards_ok(&bo));
    free(wi);
    free(ww);
    free(acc);
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bo);
  }
}

/* ---- depthwise ----------------------------------------------------------------- */
static void test_depthwise_i8(void) {
  /* W_in chosen so that W_out is below, equal to, above and not a multiple
   * of 64 — the padded-row-stride edge. */
  static const int widths[] = {5, 13, 62, 64, 66, 67, 70, 129, 131};
  int t;
  for (t = 0; t < 45; t++) {
    int k = (int[]){3, 5, 7}[t % 3];
    int s = (t / 3) % 2 ? 2 : 1;
    int C = rnd_range(1, t < 9 ? 3 : 20), H = rnd_range(1, 9);
    int W = widths[t % 9];
    int p = rnd_range(0, k / 2), pb = rnd() & 1 ? p : rnd_range(0, k / 2);
    int pl = rnd_range(0, k / 2), pr = rnd_range(0, k / 2);
    size_t nin, nw = (size_t)C * k * k, nout, j;
    buf bi, bw, bo;
    int32_t *bias = malloc(sizeof(int32_t) * C), *wi, *ww;
    uint8_t *scale = malloc(C), *shift = malloc(C);
    int64_t *acc;
    int ho, wo, i, bad = 0, st;
    if (s == 2 && k == 7)
      s = 1; /* MMALIB: stride 2 up to 5×5 (rejection tested below) */
    if (H + p + pb < k)
      H = k;
    if (W + pl + pr < k)
      pl = pr = k / 2;
    nin = (size_t)C * H * W;
    bi = buf_new(nin);
    bw = buf_new(nw);
    fill_i8((int8_t *)bi.p, nin);
    fill_i8((int8_t *)bw.p, nw);
    for (i = 0; i < C; i++)
      bias[i] = rnd_range(-20000, 20000);
    random_requant(scale, shift, C, k * k, 5000, 60);
    wi = widen_i8((int8_t *)bi.p, nin);
    ww = widen_i8((int8_t *)bw.p, nw);
    acc = oracle_conv(wi, ww, C, H, W, C, k, k, s, p, pb, pl, pr, C, &ho, &wo);
    nout = (size_t)C * ho * wo;
    bo = buf_new(nout);
    st = mmalib_depthwise_conv2d_i8((int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift,
                                    (int8_t *)bo.p, C, H, W, k, k, s, s, p, pb, pl, pr, C);
    CHECK_MSG(st == OK, "depthwise i8 status %d", st);
    for (j = 0; j < nout; j++) {
      int c = (int)(j / ((size_t)ho * wo));
      if ((int8_t)bo.p[j] != oracle_requant(acc[j], bias[c], scale[c], shift[c], -128, 127))
        bad++;
    }
    CHECK_MSG(bad == 0, "depthwise i8 %d (C %d H %d W %d k %d s %d): %d mismatches", t, C, H, W,
              k, s, bad);
    /* exactly C·H_out·W_out elements, compact: nothing past the end */
    CHECK_MSG(buf_guards_ok(&bo), "depthwise i8 %d wrote past C·H_out·W_out (W_out %d)", t, wo);
    free(wi);
    free(ww);
    free(acc);
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bo);
  }
}

static void test_depthwise_i16(void) {
  int t;
  for (t = 0; t < 20; t++) {
    int C = rnd_range(1, 12), H = rnd_range(3, 10), W = rnd_range(3, 80), s = t % 2 + 1;
    int p = rnd_range(0, 1);
    size_t nin = (size_t)C * H * W, nw = (size_t)C * 9, nout, j;
    buf bi = buf_new(nin * 2), bw = buf_new(nw * 2), bo;
    int64_t *bias = malloc(sizeof(int64_t) * C), *acc;
    uint8_t *scale = malloc(C), *shift = malloc(C);
    int32_t *wi, *ww;
    int ho, wo, i, bad = 0, st;
    fill_i16((int16_t *)bi.p, nin, 32768);
    fill_i16((int16_t *)bw.p, nw, 32768);
    for (i = 0; i < C; i++)
      bias[i] = (int64_t)rnd_range(-1000000000, 1000000000) * rnd_range(1, 1000);
    random_requant(scale, shift, C, 9, 3e8, 8000);
    wi = widen_i16((int16_t *)bi.p, nin);
    ww = widen_i16((int16_t *)bw.p, nw);
    acc = oracle_conv(wi, ww, C, H, W, C, 3, 3, s, p, p, p, p, C, &ho, &wo);
    nout = (size_t)C * ho * wo;
    bo = buf_new(nout * 2);
    st = mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, bias, scale, shift,
                                     (int16_t *)bo.p, C, H, W, 3, 3, s, s, p, p, p, p, C);
    CHECK_MSG(st == OK, "depthwise i16 status %d", st);
    for (j = 0; j < nout; j++) {
      int c = (int)(j / ((size_t)ho * wo));
      int16_t got;
      memcpy(&got, bo.p + 2 * j, 2);
      if (got != oracle_requant(acc[j], bias[c], scale[c], shift[c], -32768, 32767))
        bad++;
    }
    CHECK_MSG(bad == 0, "depthwise i16 %d: %d mismatches", t, bad);
    CHECK(buf_guards_ok(&bo));
    free(wi);
    free(ww);
    free(acc);
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bo);
  }
  { /* MMALIB-882: 5×5 and 7×7 int16 are not implemented; nothing written */
    buf bi = buf_new(2 * 2 * 10 * 10), bw = buf_new(2 * 2 * 49), bo = buf_new(2 * 2 * 10 * 10);
    memset(bi.p, 0, bi.n);
    memset(bw.p, 0, bw.n);
    CHECK(mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, NULL, NULL, NULL,
                                      (int16_t *)bo.p, 2, 10, 10, 5, 5, 1, 1, 2, 2, 2, 2, 2) ==
          TIDSP_MMALIB_ERR_NOT_IMPLEMENTED);
    CHECK(mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, NULL, NULL, NULL,
                                      (int16_t *)bo.p, 2, 10, 10, 7, 7, 1, 1, 3, 3, 3, 3, 2) ==
          TIDSP_MMALIB_ERR_NOT_IMPLEMENTED);
    CHECK(buf_untouched(&bo));
    /* but a NULL input is still a precondition failure, not "not implemented" */
    CHECK(mmalib_depthwise_conv2d_i16(NULL, (int16_t *)bw.p, NULL, NULL, NULL, (int16_t *)bo.p,
                                      2, 10, 10, 5, 5, 1, 1, 2, 2, 2, 2, 2) == EPRE);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bo);
  }
}

/* Negative pads crop the int16 depthwise input (cstatic/mmalib.h): the call
 * on the whole input equals the call on a dense copy of the window with the
 * pads' positive parts; a crop that leaves no row or column is rejected. */
static void test_depthwise_i16_crop(void) {
  int t;
  for (t = 0; t < 40; t++) {
    int C = rnd_range(1, 6), H = rnd_range(3, 12), W = rnd_range(3, 20), s = t % 2 + 1;
    int pt = rnd_range(-3, 3), pb = rnd_range(-3, 3), pl = rnd_range(-3, 3), pr = rnd_range(-3, 3);
    int r0 = pt < 0 ? -pt : 0, c0 = pl < 0 ? -pl : 0;
    int rows = H - r0 - (pb < 0 ? -pb : 0), cols = W - c0 - (pr < 0 ? -pr : 0);
    int ho, wo, c, i, l, st;
    size_t nin = (size_t)C * H * W, nout;
    buf bi, bw, bwin, bo, bref;
    int64_t *bias = malloc(sizeof(int64_t) * C);
    uint8_t *scale = malloc(C), *shift = malloc(C);
    if (rows < 1 || cols < 1 || rows + (pt > 0 ? pt : 0) + (pb > 0 ? pb : 0) < 3 ||
        cols + (pl > 0 ? pl : 0) + (pr > 0 ? pr : 0) < 3) {
      free(bias);
      free(scale);
      free(shift);
      continue;
    }
    ho = (rows + (pt > 0 ? pt : 0) + (pb > 0 ? pb : 0) - 3) / s + 1;
    wo = (cols + (pl > 0 ? pl : 0) + (pr > 0 ? pr : 0) - 3) / s + 1;
    nout = (size_t)C * ho * wo;
    bi = buf_new(nin * 2);
    bw = buf_new((size_t)C * 9 * 2);
    bwin = buf_new((size_t)C * rows * cols * 2);
    bo = buf_new(nout * 2);
    bref = buf_new(nout * 2);
    fill_i16((int16_t *)bi.p, nin, 255);
    fill_i16((int16_t *)bw.p, (size_t)C * 9, 127);
    for (i = 0; i < C; i++)
      bias[i] = rnd_range(-100000, 100000);
    random_requant(scale, shift, C, 9, 3e4, 8000);
    for (c = 0; c < C; c++)
      for (i = 0; i < rows; i++)
        for (l = 0; l < cols; l++)
          memcpy(bwin.p + 2 * (((size_t)c * rows + i) * cols + l),
                 bi.p + 2 * (((size_t)c * H + r0 + i) * W + c0 + l), 2);
    st = mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, bias, scale, shift,
                                     (int16_t *)bo.p, C, H, W, 3, 3, s, s, pt, pb, pl, pr, C);
    CHECK_MSG(st == OK, "cropped depthwise i16 status %d", st);
    st = mmalib_depthwise_conv2d_i16((int16_t *)bwin.p, (int16_t *)bw.p, bias, scale, shift,
                                     (int16_t *)bref.p, C, rows, cols, 3, 3, s, s, pt > 0 ? pt : 0,
                                     pb > 0 ? pb : 0, pl > 0 ? pl : 0, pr > 0 ? pr : 0, C);
    CHECK_MSG(st == OK, "window depthwise i16 status %d", st);
    CHECK_MSG(memcmp(bo.p, bref.p, nout * 2) == 0,
              "crop %d,%d,%d,%d of %dx%d (stride %d) differs from its window", pt, pb, pl, pr, H, W, s);
    CHECK(buf_guards_ok(&bo));
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bwin);
    buf_free(&bo);
    buf_free(&bref);
  }
  { /* a crop that leaves nothing, or less than the kernel: rejected, nothing written */
    buf bi = buf_new(2 * 6 * 6), bw = buf_new(2 * 9), bo = buf_new(2 * 6 * 6);
    memset(bi.p, 0, bi.n);
    memset(bw.p, 0, bw.n);
    CHECK(mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, NULL, NULL, NULL,
                                      (int16_t *)bo.p, 1, 6, 6, 3, 3, 1, 1, -6, 2, 1, 1, 1) == EPRE);
    CHECK(mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, NULL, NULL, NULL,
                                      (int16_t *)bo.p, 1, 6, 6, 3, 3, 1, 1, 1, 1, -3, -3, 1) == EPRE);
    CHECK(mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, NULL, NULL, NULL,
                                      (int16_t *)bo.p, 1, 6, 6, 3, 3, 1, 1, -5, 0, 0, 0, 1) == EPRE);
    CHECK(mmalib_depthwise_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, NULL, NULL, NULL,
                                      (int16_t *)bo.p, 1, 6, 6, 3, 3, 1, 1, -2147483647 - 1, 0, 0, 0,
                                      1) == EPRE);
    CHECK(buf_untouched(&bo));
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bo);
  }
}

/* ---- matmul / matmul_bias -------------------------------------------------------- */
static void test_matmul_bias(void) {
  int t;
  for (t = 0; t < 40; t++) {
    int M = rnd_range(1, 5);
    int K = t % 4 == 0 ? 64 * rnd_range(1, 4) : rnd_range(1, 300);
    int N = t % 4 == 0 ? 64 * rnd_range(1, 2) : rnd_range(1, 130);
    int i16 = t % 2, es = i16 ? 2 : 1, m, n, k, bad = 0, st;
    buf bx = buf_new((size_t)M * K * es), bw = buf_new((size_t)N * K * es),
        bo = buf_new((size_t)M * N * es);
    int32_t *b32 = malloc(sizeof(int32_t) * N);
    int64_t *b64 = malloc(sizeof(int64_t) * N);
    uint8_t *scale = malloc(N), *shift = malloc(N);
    for (n = 0; n < N; n++) {
      b32[n] = rnd_range(-100000, 100000);
      b64[n] = (int64_t)b32[n] * 40000;
    }
    if (i16) {
      fill_i16((int16_t *)bx.p, (size_t)M * K, 32768);
      fill_i16((int16_t *)bw.p, (size_t)N * K, 32768);
      random_requant(scale, shift, N, K, 3e8, 8000);
      st = mmalib_matmul_bias_i16((int16_t *)bx.p, (int16_t *)bw.p, b64, scale, shift,
                                  (int16_t *)bo.p, M, K, N);
    } else {
      fill_i8((int8_t *)bx.p, (size_t)M * K);
      fill_i8((int8_t *)bw.p, (size_t)N * K);
      random_requant(scale, shift, N, K, 5000, 60);
      st = mmalib_matmul_bias_i8((int8_t *)bx.p, (int8_t *)bw.p, b32, scale, shift,
                                 (int8_t *)bo.p, M, K, N);
    }
    CHECK_MSG(st == OK, "matmul_bias status %d", st);
    for (m = 0; m < M; m++)
      for (n = 0; n < N; n++) {
        int64_t acc = 0, want, got;
        for (k = 0; k < K; k++) {
          if (i16) {
            int16_t a, w;
            memcpy(&a, bx.p + 2 * ((size_t)m * K + k), 2);
            memcpy(&w, bw.p + 2 * ((size_t)n * K + k), 2);
            acc += (int64_t)a * w;
          } else {
            acc += (int64_t)(int8_t)bx.p[(size_t)m * K + k] * (int8_t)bw.p[(size_t)n * K + k];
          }
        }
        if (i16) {
          int16_t g;
          memcpy(&g, bo.p + 2 * ((size_t)m * N + n), 2);
          got = g;
          want = oracle_requant(acc, b64[n], scale[n], shift[n], -32768, 32767);
        } else {
          got = (int8_t)bo.p[(size_t)m * N + n];
          want = oracle_requant(acc, b32[n], scale[n], shift[n], -128, 127);
        }
        bad += got != want;
      }
    CHECK_MSG(bad == 0, "matmul_bias %s %d (M %d K %d N %d): %d mismatches", i16 ? "i16" : "i8",
              t, M, K, N, bad);
    CHECK(buf_guards_ok(&bo));
    free(b32);
    free(b64);
    free(scale);
    free(shift);
    buf_free(&bx);
    buf_free(&bw);
    buf_free(&bo);
  }
}

static void test_matmul(void) {
  int t;
  for (t = 0; t < 30; t++) {
    int M = rnd_range(1, 6), K = rnd_range(1, 100), N = rnd_range(1, 70);
    int i16 = t % 2, es = i16 ? 2 : 1, m, n, k, bad = 0, st;
    int sh = t % 5 == 0 ? 0 : rnd_range(0, i16 ? 20 : 12);
    buf ba = buf_new((size_t)M * K * es), bb = buf_new((size_t)K * N * es),
        bo = buf_new((size_t)M * N * es);
    if (i16) {
      fill_i16((int16_t *)ba.p, (size_t)M * K, 32768);
      fill_i16((int16_t *)bb.p, (size_t)K * N, 32768);
      st = mmalib_matmul_i16((int16_t *)ba.p, (int16_t *)bb.p, (int16_t *)bo.p, M, K, N, sh);
    } else {
      fill_i8((int8_t *)ba.p, (size_t)M * K);
      fill_i8((int8_t *)bb.p, (size_t)K * N);
      st = mmalib_matmul_i8((int8_t *)ba.p, (int8_t *)bb.p, (int8_t *)bo.p, M, K, N, sh);
    }
    CHECK_MSG(st == OK, "matmul status %d", st);
    for (m = 0; m < M; m++)
      for (n = 0; n < N; n++) {
        int64_t acc = 0, got;
        for (k = 0; k < K; k++) {
          if (i16) {
            int16_t a, b;
            memcpy(&a, ba.p + 2 * ((size_t)m * K + k), 2);
            memcpy(&b, bb.p + 2 * ((size_t)k * N + n), 2); /* B is [K][N] */
            acc += (int64_t)a * b;
          } else {
            acc += (int64_t)(int8_t)ba.p[(size_t)m * K + k] * (int8_t)bb.p[(size_t)k * N + n];
          }
        }
        if (i16) {
          int16_t g;
          memcpy(&g, bo.p + 2 * ((size_t)m * N + n), 2);
          got = g;
        } else {
          got = (int8_t)bo.p[(size_t)m * N + n];
        }
        bad += got != oracle_requant(acc, 0, 1, sh, i16 ? -32768 : -128, i16 ? 32767 : 127);
      }
    CHECK_MSG(bad == 0, "matmul %d: %d mismatches", t, bad);
    CHECK(buf_guards_ok(&bo));
    buf_free(&ba);
    buf_free(&bb);
    buf_free(&bo);
  }
}

/* ---- the int16 sliced conv (the exact path's) == the full int16 conv --------------- */
static void test_sliced_i16(void) {
  /* 24 -> 100 3x3 pad 1 at 9x11, stride 1 and 2; tiles of 32 (+ 4), the
   * last one short; NULL bias/requant arrays once */
  int t;
  for (t = 0; t < 3; t++) {
    int ci = 24, H = 9, W = 11, co = 100, k = 3, s = t == 1 ? 2 : 1, p = 1, nq = t == 2, tile = 32;
    int ho = (H + 2 * p - k) / s + 1, wo = (W + 2 * p - k) / s + 1, oc, i, st, ok_all = 1;
    size_t nin = (size_t)ci * H * W, per_oc = (size_t)ci * k * k, nout = (size_t)co * ho * wo;
    buf bi = buf_new(2 * nin), bw = buf_new(2 * co * per_oc), full = buf_new(2 * nout), sl = buf_new(2 * nout),
        l2w = buf_new(2 * (size_t)tile * per_oc);
    int64_t *bias = malloc(sizeof(int64_t) * co);
    uint8_t *scale = malloc(co), *shift = malloc(co);
    fill_i16((int16_t *)bi.p, nin, 32768);
    fill_i16((int16_t *)bw.p, co * per_oc, 32768);
    for (i = 0; i < co; i++)
      bias[i] = (int64_t)rnd_range(-30000, 30000) * 4096;
    random_requant(scale, shift, co, (int)per_oc, 3e8, 8000);
    st = mmalib_conv2d_i16((int16_t *)bi.p, (int16_t *)bw.p, nq ? NULL : bias, nq ? NULL : scale,
                           nq ? NULL : shift, (int16_t *)full.p, ci, H, W, co, k, k, s, s, p, p, p, p);
    CHECK(st == OK);
    memset(sl.p, GUARD_BYTE, 2 * nout);
    for (oc = 0; oc < co; oc += tile) {
      int n = co - oc < tile ? co - oc : tile;
      memcpy(l2w.p, bw.p + 2 * (size_t)oc * per_oc, 2 * (size_t)n * per_oc);
      st = mmalib_conv2d_i16_sliced((int16_t *)bi.p, (int16_t *)l2w.p, nq ? NULL : bias, nq ? NULL : scale,
                                    nq ? NULL : shift, (int16_t *)sl.p, ci, H, W, n, k, k, s, s, p, p, p, p, oc);
      ok_all &= st == OK;
    }
    CHECK_MSG(ok_all, "int16 sliced case %d status", t);
    CHECK_MSG(memcmp(full.p, sl.p, 2 * nout) == 0, "int16 sliced case %d differs from the full conv", t);
    CHECK(buf_guards_ok(&sl));
    /* one tile alone writes only its own channels */
    memset(sl.p, GUARD_BYTE, 2 * nout);
    memcpy(l2w.p, bw.p + 2 * (size_t)32 * per_oc, 2 * 32 * per_oc);
    CHECK(mmalib_conv2d_i16_sliced((int16_t *)bi.p, (int16_t *)l2w.p, bias, scale, shift, (int16_t *)sl.p, ci, H,
                                   W, 32, k, k, s, s, p, p, p, p, 32) == OK);
    {
      size_t lo = 2 * (size_t)32 * ho * wo, hi = 2 * (size_t)64 * ho * wo, j;
      int outside = 0;
      for (j = 0; j < 2 * nout; j++)
        if ((j < lo || j >= hi) && sl.p[j] != GUARD_BYTE)
          outside++;
      CHECK_MSG(outside == 0, "int16 sliced tile wrote %d bytes outside its channels", outside);
    }
    /* the preconditions: a negative start, an unaligned output */
    CHECK(mmalib_conv2d_i16_sliced((int16_t *)bi.p, (int16_t *)l2w.p, bias, scale, shift, (int16_t *)sl.p, ci, H,
                                   W, 32, k, k, s, s, p, p, p, p, -1) == TIDSP_MMALIB_ERR_PRECONDITION);
    CHECK(mmalib_conv2d_i16_sliced((int16_t *)bi.p, (int16_t *)l2w.p, bias, scale, shift, (int16_t *)(sl.p + 2),
                                   ci, H, W, 32, k, k, s, s, p, p, p, p, 0) == TIDSP_MMALIB_ERR_PRECONDITION);
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&full);
    buf_free(&sl);
    buf_free(&l2w);
  }
}

/* ---- sliced == the full conv on the matching channel slice ---------------------- */
static void test_sliced(void) {
  static const struct {
    int c_in, h, w, c_out, k, s, pad;
    int64_t budget;
    int null_q;
  } cases[] = {
      {16, 10, 10, 100, 3, 1, 1, 1600 + 64 * 16 * 9 + 100, 0}, /* tiles 64 + 36 */
      {24, 9, 11, 96, 3, 2, 1, 24 * 99 + 32 * 24 * 9 + 5, 0},  /* stride 2, tiles of 32 */
      {8, 7, 7, 70, 1, 1, 0, 8 * 49 + 32 * 8, 1},              /* 1×1, NULL requant arrays */
  };
  int t;
  for (t = 0; t < (int)(sizeof(cases) / sizeof(cases[0])); t++) {
    int ci = cases[t].c_in, H = cases[t].h, W = cases[t].w, co = cases[t].c_out, k = cases[t].k;
    int s = cases[t].s, p = cases[t].pad, nq = cases[t].null_q;
    int ho = (H + 2 * p - k) / s + 1, wo = (W + 2 * p - k) / s + 1, oc, i, st, ok_all = 1;
    size_t nin = (size_t)ci * H * W, per_oc = (size_t)ci * k * k, nout = (size_t)co * ho * wo;
    int64_t in_bytes = (int64_t)nin;
    /* InjectMMALIBDMA: oc_tile = ⌊(budget − in)/(C_in·KH·KW)⌋ rounded down to
     * a multiple of 32, ≥ 32, capped at C_out; the weights are oversized. */
    int tile = (int)((cases[t].budget - in_bytes) / (int64_t)per_oc) / 32 * 32;
    buf bi = buf_new(nin), bw = buf_new(co * per_oc), full = buf_new(nout),
        sl = buf_new(nout), l2w = buf_new((size_t)tile * per_oc);
    int32_t *bias = malloc(sizeof(int32_t) * co);
    uint8_t *scale = malloc(co), *shift = malloc(co);
    CHECK(tile >= 32 && tile < co);
    CHECK((int64_t)nin + (int64_t)co * (int64_t)per_oc > cases[t].budget);
    fill_i8((int8_t *)bi.p, nin);
    fill_i8((int8_t *)bw.p, co * per_oc);
    for (i = 0; i < co; i++)
      bias[i] = rnd_range(-30000, 30000);
    random_requant(scale, shift, co, (int)per_oc, 5000, 60);
    st = mmalib_conv2d_i8((int8_t *)bi.p, (int8_t *)bw.p, nq ? NULL : bias, nq ? NULL : scale,
                          nq ? NULL : shift, (int8_t *)full.p, ci, H, W, co, k, k, s, s, p, p, p,
                          p);
    CHECK(st == OK);
    for (oc = 0; oc < co; oc += tile) {
      int n = co - oc < tile ? co - oc : tile;
      /* the tile is staged into its own aligned "L2" buffer */
      memcpy(l2w.p, bw.p + (size_t)oc * per_oc, (size_t)n * per_oc);
      st = mmalib_conv2d_i8_sliced((int8_t *)bi.p, (int8_t *)l2w.p, nq ? NULL : bias,
                                   nq ? NULL : scale, nq ? NULL : shift, (int8_t *)sl.p, ci, H, W,
                                   n, k, k, s, s, p, p, p, p, oc);
      ok_all &= st == OK;
    }
    CHECK_MSG(ok_all, "sliced case %d status", t);
    CHECK_MSG(memcmp(full.p, sl.p, nout) == 0, "sliced case %d differs from the full conv", t);
    CHECK(buf_guards_ok(&sl));
    /* and the full conv against the oracle */
    {
      int32_t *wi = widen_i8((int8_t *)bi.p, nin), *ww = widen_i8((int8_t *)bw.p, co * per_oc);
      int hh, ww2, bad = 0;
      int64_t *acc = oracle_conv(wi, ww, ci, H, W, co, k, k, s, p, p, p, p, 1, &hh, &ww2);
      size_t j;
      for (j = 0; j < nout; j++) {
        int c = (int)(j / ((size_t)ho * wo));
        int64_t want = nq ? oracle_requant(acc[j], 0, 1, 0, -128, 127)
                          : oracle_requant(acc[j], bias[c], scale[c], shift[c], -128, 127);
        bad += (int8_t)sl.p[j] != want;
      }
      CHECK_MSG(bad == 0, "sliced case %d: %d mismatches vs oracle", t, bad);
      free(wi);
      free(ww);
      free(acc);
    }
    /* one tile alone writes only its own channels */
    memset(sl.p, GUARD_BYTE, nout);
    memcpy(l2w.p, bw.p + (size_t)32 * per_oc, 32 * per_oc);
    CHECK(mmalib_conv2d_i8_sliced((int8_t *)bi.p, (int8_t *)l2w.p, bias, scale, shift,
                                  (int8_t *)sl.p, ci, H, W, 32, k, k, s, s, p, p, p, p, 32) == OK);
    {
      size_t lo = (size_t)32 * ho * wo, hi = (size_t)64 * ho * wo, j;
      int outside = 0;
      for (j = 0; j < nout; j++)
        if ((j < lo || j >= hi) && sl.p[j] != GUARD_BYTE)
          outside++;
      CHECK_MSG(outside == 0, "sliced tile wrote %d bytes outside its channels", outside);
    }
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&full);
    buf_free(&sl);
    buf_free(&l2w);
  }
}

/* ---- grouped_loop == one conv per group ------------------------------------------ */
static void test_grouped(void) {
  static const int cases[][8] = {
      /* c_in h w c_out k s pad groups */
      {8, 9, 10, 12, 3, 1, 1, 4},
      {8, 9, 10, 12, 3, 2, 1, 2},
      {12, 6, 7, 6, 1, 1, 0, 3},
      {16, 11, 11, 32, 5, 2, 2, 8},
  };
  int t;
  for (t = 0; t < (int)(sizeof(cases) / sizeof(cases[0])); t++) {
    int ci = cases[t][0], H = cases[t][1], W = cases[t][2], co = cases[t][3], k = cases[t][4];
    int s = cases[t][5], p = cases[t][6], g = cases[t][7], cig = ci / g, cog = co / g;
    int ho = (H + 2 * p - k) / s + 1, wo = (W + 2 * p - k) / s + 1, i, grp, bad = 0;
    size_t nin = (size_t)ci * H * W, nw = (size_t)co * cig * k * k, nout = (size_t)co * ho * wo;
    size_t gin = (size_t)cig * H * W, gw = (size_t)cog * cig * k * k, gout = (size_t)cog * ho * wo;
    buf bi = buf_new(nin), bw = buf_new(nw), bo = buf_new(nout);
    buf gi = buf_new(gin), gwb = buf_new(gw), go = buf_new(gout);
    int32_t *bias = malloc(sizeof(int32_t) * co), *wi, *ww;
    uint8_t *scale = malloc(co), *shift = malloc(co);
    int64_t *acc;
    int hh, w2;
    size_t j;
    fill_i8((int8_t *)bi.p, nin);
    fill_i8((int8_t *)bw.p, nw);
    for (i = 0; i < co; i++)
      bias[i] = rnd_range(-30000, 30000);
    random_requant(scale, shift, co, cig * k * k, 5000, 60);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        g) == OK);
    CHECK(buf_guards_ok(&bo));
    for (grp = 0; grp < g; grp++) {
      /* the same group as a plain conv on aligned copies of its slices */
      memcpy(gi.p, bi.p + grp * gin, gin);
      memcpy(gwb.p, bw.p + grp * gw, gw);
      CHECK(mmalib_conv2d_i8((int8_t *)gi.p, (int8_t *)gwb.p, bias + grp * cog,
                             scale + grp * cog, shift + grp * cog, (int8_t *)go.p, cig, H, W, cog,
                             k, k, s, s, p, p, p, p) == OK);
      CHECK_MSG(memcmp(go.p, bo.p + grp * gout, gout) == 0, "grouped case %d group %d differs", t,
                grp);
    }
    wi = widen_i8((int8_t *)bi.p, nin);
    ww = widen_i8((int8_t *)bw.p, nw);
    acc = oracle_conv(wi, ww, ci, H, W, co, k, k, s, p, p, p, p, g, &hh, &w2);
    for (j = 0; j < nout; j++) {
      int c = (int)(j / ((size_t)ho * wo));
      bad += (int8_t)bo.p[j] != oracle_requant(acc[j], bias[c], scale[c], shift[c], -128, 127);
    }
    CHECK_MSG(bad == 0, "grouped case %d: %d mismatches vs oracle", t, bad);
    /* rejections, output untouched: groups 1, C_in, not dividing, NULL arrays */
    memset(bo.p, GUARD_BYTE, nout);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        1) == EPRE);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        ci) == EPRE);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        5) == EPRE);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        0) == EPRE);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, NULL, scale, shift,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        g) == EPRE);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, bias, NULL, shift,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        g) == EPRE);
    CHECK(mmalib_conv2d_i8_grouped_loop((int8_t *)bi.p, (int8_t *)bw.p, bias, scale, NULL,
                                        (int8_t *)bo.p, ci, H, W, co, k, k, s, s, p, p, p, p,
                                        g) == EPRE);
    CHECK(buf_untouched(&bo));
    free(wi);
    free(ww);
    free(acc);
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bo);
    buf_free(&gi);
    buf_free(&gwb);
    buf_free(&go);
  }
}

/* ---- residual add ------------------------------------------------------------------ */
static int64_t oracle_residual(int32_t x, int32_t s, int32_t mx, int32_t ms, int32_t shift,
                               int32_t zx, int32_t zs, int32_t zo, int relu, int64_t lo,
                               int64_t hi) {
  i128 acc = (i128)(x - zx) * mx + (i128)(s - zs) * ms;
  i128 d = (i128)1 << shift;
  /* round half up = floor(acc/d + 1/2) = floor((2·acc + d) / 2d) */
  i128 num = 2 * acc + d, den = 2 * d, q = num / den;
  int64_t r;
  if (num % den != 0 && num < 0)
    q -= 1;
  if (shift == 0)
    q = acc;
  r = (int64_t)q + zo;
  if (relu && zo > lo)
    lo = zo;
  return r < lo ? lo : (r > hi ? hi : r);
}

static void test_residual_layout(void) {
  c7x_residual_add_params p;
  uint8_t blob[16] = {0x00, 0x40, 0, 0, /* m_x 16384 */
                      0xFF, 0xFF, 0xFF, 0xFF, /* m_skip −1 */
                      15, 0, 0, 0,
                      0xFE, 3, 0x80, 0}; /* zp_x −2, zp_skip 3, zp_out −128 */
  CHECK(sizeof(c7x_residual_add_params) == 16);
  CHECK(offsetof(c7x_residual_add_params, m_x) == 0);
  CHECK(offsetof(c7x_residual_add_params, m_skip) == 4);
  CHECK(offsetof(c7x_residual_add_params, shift) == 8);
  CHECK(offsetof(c7x_residual_add_params, zp_x) == 12);
  CHECK(offsetof(c7x_residual_add_params, zp_skip) == 13);
  CHECK(offsetof(c7x_residual_add_params, zp_out) == 14);
  CHECK(offsetof(c7x_residual_add_params, reserved) == 15);
  memcpy(&p, blob, 16); /* the weights blob is little-endian, as this host */
  CHECK(p.m_x == 16384 && p.m_skip == -1 && p.shift == 15);
  CHECK(p.zp_x == -2 && p.zp_skip == 3 && p.zp_out == -128 && p.reserved == 0);
}

static void test_residual_by_hand(void) {
  c7x_residual_add_params p = {16384, 16384, 15, 0, 0, 0, 0}; /* 0.5·x + 0.5·skip */
  int8_t x[4] = {1, -1, 3, -3}, s[4] = {0, 0, 0, 0}, o[4];
  int16_t x16[2] = {1, -1}, s16[2] = {0, 0}, o16[2];
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, 4, 0) == OK);
  /* half up: 0.5 → 1 (the fork's floor gives 0), −0.5 → 0, 1.5 → 2, −1.5 → −1 */
  CHECK(o[0] == 1 && o[1] == 0 && o[2] == 2 && o[3] == -1);
  CHECK(c7x_int16_residual_add_relu(x16, s16, &p, o16, 2, 0) == OK);
  CHECK(o16[0] == 1 && o16[1] == 0);
  /* ReLU clamps at zp_out (−10), not at 0 */
  p.zp_out = -10;
  p.m_x = 32768;
  p.m_skip = 0;
  x[0] = -20;
  x[1] = 5;
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, 2, 1) == OK);
  CHECK(o[0] == -10 && o[1] == -5);
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, 2, 0) == OK);
  CHECK(o[0] == -30 && o[1] == -5);
  /* int16 ReLU clips too (the fork's clips nothing) */
  x16[0] = -300;
  CHECK(c7x_int16_residual_add_relu(x16, s16, &p, o16, 1, 1) == OK);
  CHECK(o16[0] == -10);
  /* saturation */
  p.zp_out = 0;
  p.m_x = 32768 * 4;
  x[0] = 100;
  x[1] = -100;
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, 2, 0) == OK);
  CHECK(o[0] == 127 && o[1] == -128);
  /* rejections */
  CHECK(c7x_int8_residual_add_relu(NULL, s, &p, o, 2, 0) == EPRE);
  CHECK(c7x_int8_residual_add_relu(x, NULL, &p, o, 2, 0) == EPRE);
  CHECK(c7x_int8_residual_add_relu(x, s, NULL, o, 2, 0) == EPRE);
  CHECK(c7x_int8_residual_add_relu(x, s, &p, NULL, 2, 0) == EPRE);
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, -1, 0) == EPRE);
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, 0, 0) == OK);
  p.reserved = 1;
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, 2, 0) == EPRE);
  CHECK(c7x_int16_residual_add_relu(x16, s16, &p, o16, 2, 0) == EPRE);
  p.reserved = 0;
  p.shift = 63;
  CHECK(c7x_int8_residual_add_relu(x, s, &p, o, 2, 0) == EPRE);
  p.shift = -1;
  CHECK(c7x_int16_residual_add_relu(x16, s16, &p, o16, 2, 0) == EPRE);
}

static void test_residual_random(void) {
  int t;
  for (t = 0; t < 60; t++) {
    int i16 = t % 2, relu = (t / 2) % 2, n = rnd_range(0, 700), i, bad = 0, bad_order = 0;
    int64_t lo = i16 ? -32768 : -128, hi = i16 ? 32767 : 127;
    c7x_residual_add_params p, q;
    buf bx = buf_new((size_t)n * 2), bs = buf_new((size_t)n * 2), bo = buf_new((size_t)n * 2),
        bo2 = buf_new((size_t)n * 2);
    p.m_x = rnd_range(1, 3 * 32768);
    p.m_skip = rnd_range(1, 3 * 32768);
    p.shift = t % 7 == 0 ? rnd_range(0, 30) : 15;
    p.zp_x = (int8_t)(i16 && t % 4 == 1 ? 0 : rnd_range(-128, 127));
    p.zp_skip = (int8_t)(i16 && t % 4 == 1 ? 0 : rnd_range(-128, 127));
    p.zp_out = (int8_t)(i16 && t % 4 == 1 ? 0 : rnd_range(-128, 127));
    p.reserved = 0;
    if (t % 9 == 0) { /* large multipliers: int32 would overflow */
      p.m_x = 0x7FFFFFFF;
      p.m_skip = -0x7FFFFFFF;
      p.shift = 31;
    }
    /* add(skip, x): the same call with the operands' (m, zp) swapped */
    q = p;
    q.m_x = p.m_skip;
    q.m_skip = p.m_x;
    q.zp_x = p.zp_skip;
    q.zp_skip = p.zp_x;
    if (i16) {
      fill_i16((int16_t *)bx.p, (size_t)n, 32768);
      fill_i16((int16_t *)bs.p, (size_t)n, 32768);
      CHECK(c7x_int16_residual_add_relu((int16_t *)bx.p, (int16_t *)bs.p, &p, (int16_t *)bo.p, n,
                                        relu) == OK);
      CHECK(c7x_int16_residual_add_relu((int16_t *)bs.p, (int16_t *)bx.p, &q, (int16_t *)bo2.p,
                                        n, relu) == OK);
    } else {
      fill_i8((int8_t *)bx.p, (size_t)n);
      fill_i8((int8_t *)bs.p, (size_t)n);
      CHECK(c7x_int8_residual_add_relu((int8_t *)bx.p, (int8_t *)bs.p, &p, (int8_t *)bo.p, n,
                                       relu) == OK);
      CHECK(c7x_int8_residual_add_relu((int8_t *)bs.p, (int8_t *)bx.p, &q, (int8_t *)bo2.p, n,
                                       relu) == OK);
    }
    for (i = 0; i < n; i++) {
      int32_t xv, sv;
      int64_t got, want;
      if (i16) {
        int16_t a, b, g;
        memcpy(&a, bx.p + 2 * i, 2);
        memcpy(&b, bs.p + 2 * i, 2);
        memcpy(&g, bo.p + 2 * i, 2);
        xv = a;
        sv = b;
        got = g;
      } else {
        xv = (int8_t)bx.p[i];
        sv = (int8_t)bs.p[i];
        got = (int8_t)bo.p[i];
      }
      want = oracle_residual(xv, sv, p.m_x, p.m_skip, p.shift, p.zp_x, p.zp_skip, p.zp_out, relu,
                             lo, hi);
      bad += got != want;
    }
    bad_order = memcmp(bo.p, bo2.p, (size_t)n * (i16 ? 2 : 1)) != 0;
    CHECK_MSG(bad == 0, "residual %s %d: %d mismatches", i16 ? "i16" : "i8", t, bad);
    CHECK_MSG(!bad_order, "residual %d: add(x, skip) != add(skip, x)", t);
    CHECK(buf_guards_ok(&bo) && buf_guards_ok(&bo2));
    /* in place: out aliases x */
    if (!i16 && n > 0) {
      CHECK(c7x_int8_residual_add_relu((int8_t *)bx.p, (int8_t *)bs.p, &p, (int8_t *)bx.p, n,
                                       relu) == OK);
      CHECK(memcmp(bx.p, bo.p, (size_t)n) == 0);
    }
    buf_free(&bx);
    buf_free(&bs);
    buf_free(&bo);
    buf_free(&bo2);
  }
}

/* ---- max pool ---------------------------------------------------------------------- */
/* Pads as wide as the kernel: the first windows hold only padding, which
 * c7x gives −128 (the dispatched generic pool refuses such windows, so
 * this is the scalar fallback); every other output is its window's max. */
static void test_max_pool_all_padding_windows(void) {
  enum { H = 4, W = 5, K = 2, P = 2, HO = H + P - 1, WO = W + P - 1 }; /* last windows start inside */
  int8_t in[H * W], out[HO * WO];
  int y, x, ky, kx, bad = 0;
  for (y = 0; y < H * W; y++)
    in[y] = (int8_t)(y * 37 % 200 - 100);
  CHECK(c7x_int8_max_pool(in, out, 1, 1, H, W, HO, WO, K, K, 1, 1, P, P) == OK);
  for (y = 0; y < HO; y++)
    for (x = 0; x < WO; x++) {
      int m = -128;
      for (ky = 0; ky < K; ky++)
        for (kx = 0; kx < K; kx++) {
          int iy = y - P + ky, ix = x - P + kx;
          if (iy >= 0 && iy < H && ix >= 0 && ix < W && in[iy * W + ix] > m)
            m = in[iy * W + ix];
        }
      bad += out[y * WO + x] != m;
    }
  CHECK_MSG(bad == 0, "all-padding windows: %d mismatches", bad);
  CHECK(out[0] == -128 && out[WO - 1] == -128); /* row 0: rows −2, −1 */
}

static void test_max_pool(void) {
  int t;
  for (t = 0; t < 60; t++) {
    int N = rnd_range(1, 2), C = rnd_range(1, 5), kh = rnd_range(1, 4), kw = rnd_range(1, 4);
    int sh = t % 3 == 0 ? 2 : rnd_range(1, 3), sw = t % 3 == 0 ? 2 : rnd_range(1, 3);
    int ph = rnd_range(0, kh / 2), pw = rnd_range(0, kw / 2);
    int H = rnd_range(1, 15), W = rnd_range(1, 15), Ho, Wo, Hp, Wp, nc, y, x, ky, kx, bad = 0;
    size_t nin, nout, j;
    int8_t *pad;
    buf bi, bo, bo2;
    if (t == 0) { /* ResNet's stem pool: 3×3 s2 p1, 112 → 56 */
      N = 1, C = 3, kh = kw = 3, sh = sw = 2, ph = pw = 1, H = W = 112;
    }
    if (H + 2 * ph < kh)
      H = kh;
    if (W + 2 * pw < kw)
      W = kw;
    Ho = (H + 2 * ph - kh) / sh + 1;
    Wo = (W + 2 * pw - kw) / sw + 1;
    if (rnd() & 1) { /* ceil mode: one more window if it starts inside */
      if ((int64_t)Ho * sh - ph < H)
        Ho++;
      if ((int64_t)Wo * sw - pw < W)
        Wo++;
    }
    nin = (size_t)N * C * H * W;
    nout = (size_t)N * C * Ho * Wo;
    bi = buf_new(nin);
    bo = buf_new(nout);
    bo2 = buf_new(nout);
    fill_i8((int8_t *)bi.p, nin);
    CHECK(c7x_int8_max_pool((int8_t *)bi.p, (int8_t *)bo.p, N, C, H, W, Ho, Wo, kh, kw, sh, sw,
                            ph, pw) == OK);
    CHECK(c7x_int8_max_pool_tidl((int8_t *)bi.p, (int8_t *)bo2.p, N, C, H, W, Ho, Wo, kh, kw, sh,
                                 sw, ph, pw) == OK);
    /* oracle: an explicit −128 border large enough for every window */
    Hp = (Ho - 1) * sh + kh + H + 2 * ph;
    Wp = (Wo - 1) * sw + kw + W + 2 * pw;
    pad = malloc((size_t)Hp * Wp);
    for (nc = 0; nc < N * C; nc++) {
      memset(pad, -128, (size_t)Hp * Wp);
      for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
          pad[(size_t)(y + ph) * Wp + x + pw] = (int8_t)bi.p[((size_t)nc * H + y) * W + x];
      for (y = 0; y < Ho; y++)
        for (x = 0; x < Wo; x++) {
          int m = -1000;
          for (ky = 0; ky < kh; ky++)
            for (kx = 0; kx < kw; kx++)
              if (pad[(size_t)(y * sh + ky) * Wp + x * sw + kx] > m)
                m = pad[(size_t)(y * sh + ky) * Wp + x * sw + kx];
          bad += (int8_t)bo.p[((size_t)nc * Ho + y) * Wo + x] != m;
        }
    }
    CHECK_MSG(bad == 0, "max pool %d: %d mismatches", t, bad);
    CHECK(memcmp(bo.p, bo2.p, nout) == 0);
    CHECK(buf_guards_ok(&bo) && buf_guards_ok(&bo2));
    /* a window starting past the input is refused; nothing written */
    for (j = 0; j < nout; j++)
      bo.p[j] = GUARD_BYTE;
    CHECK(c7x_int8_max_pool((int8_t *)bi.p, (int8_t *)bo.p, N, C, H, W, (H + ph) / sh + 2, Wo, kh,
                            kw, sh, sw, ph, pw) == EPRE);
    CHECK(buf_untouched(&bo));
    free(pad);
    buf_free(&bi);
    buf_free(&bo);
    buf_free(&bo2);
  }
  {
    int8_t in[4] = {1, 2, 3, 4}, out[4];
    CHECK(c7x_int8_max_pool(NULL, out, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0) == EPRE);
    CHECK(c7x_int8_max_pool_tidl(in, NULL, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0) == EPRE);
    CHECK(c7x_int8_max_pool(in, out, 1, 1, 2, 2, 1, 1, 2, 2, 0, 1, 0, 0) == EPRE);
    CHECK(c7x_int8_max_pool(in, out, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, -1, 0) == EPRE);
    CHECK(c7x_int8_max_pool(in, out, 0, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0, 0) == EPRE);
    /* a misaligned pointer is fine here: not an MMA kernel */
    CHECK(c7x_int8_max_pool(in + 1, out + 1, 1, 1, 1, 3, 1, 2, 1, 2, 1, 1, 0, 0) == OK);
    CHECK(out[1] == 3 && out[2] == 4);
  }
}

/* ---- the dispatched path and its int32 bound --------------------------------------- */

/* The wrappers with an int8 conv or FC inside. */
enum { W_CONV, W_SLICED, W_GROUPED, W_DW, W_FC, W_COUNT };
static const char *const wrapper_name[W_COUNT] = {"conv2d_i8", "conv2d_i8_sliced",
                                                  "grouped_loop", "depthwise_i8",
                                                  "matmul_bias_i8"};

/* One layer: conv family c_in → c_out on hw×hw with a k×k kernel, stride 1,
 * padding pad on every side; FC: M = hw, K = c_in, N = c_out. */
typedef struct layer {
  int which, c_in, hw, c_out, k, groups, pad;
} layer;

static int layer_ho(const layer *l) {
  return l->which == W_FC ? l->hw : l->hw + 2 * l->pad - l->k + 1;
}
static size_t layer_nin(const layer *l) {
  return (size_t)l->c_in * l->hw * (l->which == W_FC ? 1 : l->hw);
}
static size_t layer_nw(const layer *l) {
  return (size_t)l->c_out * (l->c_in / l->groups) * l->k * l->k;
}
static size_t layer_nout(const layer *l) {
  return (size_t)l->c_out * layer_ho(l) * (l->which == W_FC ? 1 : layer_ho(l));
}
static int64_t layer_taps(const layer *l) { return (int64_t)(l->c_in / l->groups) * l->k * l->k; }

/* The public wrapper on the whole layer (sliced: two tiles, channel 0 and
 * channels [1, c_out), each staged into its own aligned weight buffer). */
static int32_t run_wrapper(const layer *l, const int8_t *in, const int8_t *w, const int32_t *bias,
                           const uint8_t *scale, const uint8_t *shift, int8_t *out) {
  int k = l->k, pd = l->pad;
  switch (l->which) {
  case W_CONV:
    return mmalib_conv2d_i8(in, w, bias, scale, shift, out, l->c_in, l->hw, l->hw, l->c_out, k, k,
                            1, 1, pd, pd, pd, pd);
  case W_SLICED: {
    size_t per_oc = (size_t)l->c_in * k * k;
    buf t0 = buf_new(per_oc), t1 = buf_new(per_oc * (l->c_out - 1));
    int32_t st;
    memcpy(t0.p, w, per_oc);
    memcpy(t1.p, w + per_oc, per_oc * (l->c_out - 1));
    st = mmalib_conv2d_i8_sliced(in, (int8_t *)t0.p, bias, scale, shift, out, l->c_in, l->hw,
                                 l->hw, 1, k, k, 1, 1, pd, pd, pd, pd, 0);
    if (st == OK)
      st = mmalib_conv2d_i8_sliced(in, (int8_t *)t1.p, bias, scale, shift, out, l->c_in, l->hw,
                                   l->hw, l->c_out - 1, k, k, 1, 1, pd, pd, pd, pd, 1);
    buf_free(&t0);
    buf_free(&t1);
    return st;
  }
  case W_GROUPED:
    return mmalib_conv2d_i8_grouped_loop(in, w, bias, scale, shift, out, l->c_in, l->hw, l->hw,
                                         l->c_out, k, k, 1, 1, pd, pd, pd, pd, l->groups);
  case W_DW:
    return mmalib_depthwise_conv2d_i8(in, w, bias, scale, shift, out, l->c_in, l->hw, l->hw, k,
                                      k, 1, 1, pd, pd, pd, pd, l->c_in);
  default:
    return mmalib_matmul_bias_i8(in, w, bias, scale, shift, out, l->hw, l->c_in, l->c_out);
  }
}

/* The wrappers' internal computation of the same layer in one call
 * (sliced: as the plain conv, the path both tiles take). compute = 0: the
 * dispatched path alone, its status; 1: the wrappers' choice, 1 when it
 * took the dispatched path and 0 when the scalar one. */
static int32_t run_internal(const layer *l, int compute, const int8_t *in, const int8_t *w,
                            const int32_t *bias, const uint8_t *scale, const uint8_t *shift,
                            int8_t *out) {
  tidsp_mmalib_conv_geom g;
  int grp = l->groups, pd = l->pad;
  if (l->which == W_FC)
    return compute ? tidsp_mmalib_matmul_bias_i8_compute(0, in, w, bias, scale, shift, out, l->hw,
                                                         l->c_in, l->c_out)
                   : tidsp_mmalib_matmul_bias_i8_dispatched(in, w, bias, scale, shift, out,
                                                            l->hw, l->c_in, l->c_out);
  if (tidsp_mmalib_conv_geom_init(&g, l->c_in / grp, l->hw, l->hw, l->c_out / grp, l->k, l->k,
                                  1, 1, pd, pd, pd, pd, MMALIB_I8_MAX_REDUCTION) != OK)
    return -100;
  return compute ? tidsp_mmalib_conv2d_i8_compute(0, &g, grp, in, w, bias, scale, shift, out)
                 : tidsp_mmalib_conv2d_i8_dispatched(&g, grp, in, w, bias, scale, shift, out);
}

/* Oracle accumulators (bias excluded) of the layer, malloc'd. */
static int64_t *layer_acc(const layer *l, const int8_t *in, const int8_t *w) {
  int32_t *wi = widen_i8(in, layer_nin(l)), *ww = widen_i8(w, layer_nw(l));
  int64_t *acc;
  int ho, wo;
  if (l->which == W_FC) {
    int m, n, k;
    acc = calloc(layer_nout(l), sizeof(int64_t));
    for (m = 0; m < l->hw; m++)
      for (n = 0; n < l->c_out; n++)
        for (k = 0; k < l->c_in; k++)
          acc[(size_t)m * l->c_out + n] +=
              (int64_t)wi[(size_t)m * l->c_in + k] * ww[(size_t)n * l->c_in + k];
  } else {
    acc = oracle_conv(wi, ww, l->c_in, l->hw, l->hw, l->c_out, l->k, l->k, 1, l->pad, l->pad,
                      l->pad, l->pad, l->groups, &ho, &wo);
  }
  free(wi);
  free(ww);
  return acc;
}

/* Output channel of output element j. */
static int layer_channel(const layer *l, size_t j) {
  if (l->which == W_FC)
    return (int)(j % (size_t)l->c_out);
  return (int)(j / ((size_t)layer_ho(l) * layer_ho(l)));
}

static int64_t wrap_i32(int64_t v) {
  uint32_t u = (uint32_t)(uint64_t)v;
  return u <= 0x7FFFFFFFu ? (int64_t)(int32_t)u : (int64_t)u - ((int64_t)1 << 32);
}

/* Every input −128 and every weight wv (−128: each product +16384, 127:
 * −16256); channel c_out − 1's bias = b, the others 0; scale 1, shift 31,
 * which tells a wrapped accumulator from the true one by its sign. Checks
 * the wrapper against the oracle, the dispatched path's acceptance
 * (want_dispatched) and, past the bound, that wrapping would have shown. */
static void check_bound_case(const layer *l, int8_t wv, int64_t b, int want_dispatched) {
  size_t nin = layer_nin(l), nw = layer_nw(l), nout = layer_nout(l), j;
  buf bi = buf_new(nin), bw = buf_new(nw), bo = buf_new(nout), bd = buf_new(nout);
  int32_t *bias = calloc((size_t)l->c_out, sizeof(int32_t));
  uint8_t *scale = malloc((size_t)l->c_out), *shift = malloc((size_t)l->c_out);
  int64_t *acc;
  int32_t st;
  int bad = 0, wrap_shows = 0;
  memset(bi.p, 0x80, nin);
  memset(bw.p, (uint8_t)wv, nw);
  memset(scale, 1, (size_t)l->c_out);
  memset(shift, 31, (size_t)l->c_out);
  bias[l->c_out - 1] = (int32_t)b;
  acc = layer_acc(l, (int8_t *)bi.p, (int8_t *)bw.p);
  st = run_wrapper(l, (int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift, (int8_t *)bo.p);
  CHECK_MSG(st == OK, "%s bound case: status %d", wrapper_name[l->which], st);
  for (j = 0; j < nout; j++) {
    int c = layer_channel(l, j);
    int64_t want = oracle_requant(acc[j], bias[c], 1, 31, -128, 127);
    bad += (int8_t)bo.p[j] != want;
    wrap_shows |= oracle_requant(wrap_i32(acc[j] + bias[c]), 0, 1, 31, -128, 127) != want;
  }
  CHECK_MSG(bad == 0, "%s, weights %d, bias %lld: %d mismatches", wrapper_name[l->which], wv,
            (long long)b, bad);
  CHECK(buf_guards_ok(&bo));
  /* the decision: accepted at the bound (same bytes), refused past it
   * (nothing written), where an int32 accumulator would have wrapped */
  memset(bd.p, GUARD_BYTE, nout);
  CHECK_MSG(run_internal(l, 1, (int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift,
                         (int8_t *)bd.p) == want_dispatched,
            "%s, bias %lld: the %s path was not taken", wrapper_name[l->which], (long long)b,
            want_dispatched ? "dispatched" : "scalar");
  CHECK(memcmp(bd.p, bo.p, nout) == 0);
  memset(bd.p, GUARD_BYTE, nout);
  st = run_internal(l, 0, (int8_t *)bi.p, (int8_t *)bw.p, bias, scale, shift, (int8_t *)bd.p);
  if (want_dispatched) {
    CHECK_MSG(st == TIDSP_OK, "%s, bias %lld at the bound: dispatched path refused (%d)",
              wrapper_name[l->which], (long long)b, st);
    CHECK(memcmp(bd.p, bo.p, nout) == 0);
  } else {
    CHECK_MSG(st == TIDSP_ERR_UNSUPPORTED, "%s, bias %lld past the bound: dispatched path took it",
              wrapper_name[l->which], (long long)b);
    CHECK(buf_untouched(&bd));
    /* (a refusal for the reduction length alone needs no wrap) */
    if (l->which == W_FC || layer_taps(l) <= MMALIB_GENERIC_CONV_MAX_TAPS)
      CHECK_MSG(wrap_shows, "%s, bias %lld: the case cannot tell the paths apart",
                wrapper_name[l->which], (long long)b);
  }
  free(acc);
  free(bias);
  free(scale);
  free(shift);
  buf_free(&bi);
  buf_free(&bw);
  buf_free(&bo);
  buf_free(&bd);
}

static void test_path_bound(void) {
  static const layer layers[] = {
      /* which, c_in, hw, c_out, k, groups, pad */
      {W_CONV, 4, 5, 3, 3, 1, 0},    {W_CONV, 4, 5, 3, 3, 1, 1}, /* padded: border taps fewer */
      {W_SLICED, 4, 5, 3, 3, 1, 0},  {W_GROUPED, 4, 5, 4, 3, 2, 0},
      {W_DW, 3, 6, 3, 3, 3, 0},      {W_DW, 2, 7, 2, 5, 2, 0},
      {W_FC, 100, 2, 3, 1, 1, 0},
  };
  int t;
  for (t = 0; t < (int)(sizeof(layers) / sizeof(layers[0])); t++) {
    const layer *l = &layers[t];
    int64_t taps = layer_taps(l);
    int64_t hi = (int64_t)INT32_MAX - taps * 16384, lo = (int64_t)INT32_MIN + taps * 16256;
    CHECK(tidsp_mmalib_i8_fits_int32(taps, NULL, 0));
    check_bound_case(l, -128, hi, 1);
    check_bound_case(l, -128, hi + 1, 0);
    check_bound_case(l, 127, lo, 1);
    check_bound_case(l, 127, lo - 1, 0);
  }
  /* a reduction longer than the generic conv takes stays scalar, whatever
   * the bias; one at its limit is dispatched */
  {
    layer at = {W_CONV, 33025, 1, 2, 1, 1, 0}, past = {W_CONV, 3670, 3, 2, 3, 1, 0};
    int64_t hi_at = (int64_t)INT32_MAX - (int64_t)33025 * 16384;
    CHECK(layer_taps(&past) == 33030);
    check_bound_case(&at, -128, hi_at, 1);
    check_bound_case(&past, -128, 0, 0);
  }
  CHECK(!tidsp_mmalib_i8_fits_int32(131072, NULL, 0)); /* 131072·16384 = 2^31 */
  CHECK(tidsp_mmalib_i8_fits_int32(131071, NULL, 0));
  CHECK(!tidsp_mmalib_i8_fits_int32(0, NULL, 0));
}

/* Random layers, including pads wider than the kernel (outputs made of
 * padding only): the dispatched path accepts each and writes the scalar
 * path's bytes. */
static void test_dispatched_vs_scalar(void) {
  int t;
  for (t = 0; t < 80; t++) {
    layer l;
    size_t nin, nw, nout;
    buf bi, bw, bd, bs;
    int32_t *bias;
    uint8_t *scale, *shift;
    int i, st, null_q = t % 9 == 4;
    l.which = t % 4 == 3 ? W_FC : (t % 4 == 2 ? W_DW : (t % 4 == 1 ? W_GROUPED : W_CONV));
    l.k = l.which == W_DW ? (int[]){3, 5, 7}[t % 3] : rnd_range(1, 5);
    l.groups = l.which == W_GROUPED ? rnd_range(2, 3) : 1;
    l.c_in = l.which == W_FC ? rnd_range(1, 600) : l.groups * rnd_range(1, 8);
    l.c_out = l.which == W_FC ? rnd_range(1, 90) : l.groups * rnd_range(1, 8);
    if (l.which == W_DW)
      l.c_out = l.groups = l.c_in;
    l.hw = l.which == W_FC ? rnd_range(1, 6) : rnd_range(1, 20);
    l.pad = l.which == W_FC ? 0 : rnd_range(0, l.k + 1);
    if (l.which != W_FC && l.hw + 2 * l.pad < l.k)
      l.hw = l.k;
    nin = layer_nin(&l);
    nw = layer_nw(&l);
    nout = layer_nout(&l);
    bi = buf_new(nin);
    bw = buf_new(nw);
    bd = buf_new(nout);
    bs = buf_new(nout);
    bias = malloc(sizeof(int32_t) * l.c_out);
    scale = malloc(l.c_out);
    shift = malloc(l.c_out);
    fill_i8((int8_t *)bi.p, nin);
    fill_i8((int8_t *)bw.p, nw);
    for (i = 0; i < l.c_out; i++)
      bias[i] = rnd_range(-1000000, 1000000);
    random_requant(scale, shift, l.c_out, (int)layer_taps(&l), 5000, 60);
    st = run_internal(&l, 0, (int8_t *)bi.p, (int8_t *)bw.p, null_q ? NULL : bias,
                      null_q ? NULL : scale, null_q ? NULL : shift, (int8_t *)bd.p);
    CHECK_MSG(st == TIDSP_OK, "%s case %d: the dispatched path refused (%d)",
              wrapper_name[l.which], t, st);
    if (l.which == W_FC) {
      tidsp_mmalib_matmul_bias_i8_scalar((int8_t *)bi.p, (int8_t *)bw.p, null_q ? NULL : bias,
                                         null_q ? NULL : scale, null_q ? NULL : shift,
                                         (int8_t *)bs.p, l.hw, l.c_in, l.c_out);
    } else {
      tidsp_mmalib_conv_geom g;
      CHECK(tidsp_mmalib_conv_geom_init(&g, l.c_in / l.groups, l.hw, l.hw, l.c_out / l.groups,
                                        l.k, l.k, 1, 1, l.pad, l.pad, l.pad, l.pad,
                                        MMALIB_I8_MAX_REDUCTION) == OK);
      tidsp_mmalib_conv2d_i8_scalar(&g, l.groups, (int8_t *)bi.p, (int8_t *)bw.p,
                                    null_q ? NULL : bias, null_q ? NULL : scale,
                                    null_q ? NULL : shift, (int8_t *)bs.p);
    }
    CHECK_MSG(memcmp(bd.p, bs.p, nout) == 0,
              "%s case %d (c_in %d hw %d c_out %d k %d groups %d pad %d): paths differ",
              wrapper_name[l.which], t, l.c_in, l.hw, l.c_out, l.k, l.groups, l.pad);
    CHECK(buf_guards_ok(&bd) && buf_guards_ok(&bs));
    free(bias);
    free(scale);
    free(shift);
    buf_free(&bi);
    buf_free(&bw);
    buf_free(&bd);
    buf_free(&bs);
  }
}

/* ---- preconditions: alignment and shapes, output untouched ------------------------ */
static void test_rejections(void) {
  buf in = buf_new(4096), w = buf_new(4096), out = buf_new(4096);
  const int8_t *i8 = (const int8_t *)in.p, *w8 = (const int8_t *)w.p;
  int8_t *o8 = (int8_t *)out.p;
  const int16_t *i16 = (const int16_t *)in.p, *w16 = (const int16_t *)w.p;
  int16_t *o16 = (int16_t *)out.p;
  int32_t b32[16] = {0};
  int64_t b64[16] = {0};
  uint8_t sc[16], shf[16];
  int mis;
  memset(sc, 1, sizeof(sc));
  memset(shf, 0, sizeof(shf));
  memset(in.p, 1, in.n);
  memset(w.p, 1, w.n);
  memset(out.p, GUARD_BYTE, out.n);
  /* 64-byte alignment of every data pointer: +1 and +16 (aligned for int16
   * and int32 but not for the MMA) are refused. */
  for (mis = 1; mis <= 16; mis += 15) {
    CHECK(mmalib_conv2d_i8(i8 + mis, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) ==
          EPRE);
    CHECK(mmalib_conv2d_i8(i8, w8 + mis, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) ==
          EPRE);
    CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8 + mis, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) ==
          EPRE);
    CHECK(mmalib_conv2d_i16(i16 + mis, w16, b64, sc, shf, o16, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1,
                            1) == EPRE);
    CHECK(mmalib_conv2d_i16(i16, w16, b64, sc, shf, o16 + mis, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1,
                            1) == EPRE);
    CHECK(mmalib_conv2d_i8_sliced(i8, w8 + mis, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1,
                                  1, 0) == EPRE);
    CHECK(mmalib_conv2d_i8_grouped_loop(i8 + mis, w8, b32, sc, shf, o8, 4, 4, 4, 4, 3, 3, 1, 1,
                                        1, 1, 1, 1, 2) == EPRE);
    CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8 + mis, 2, 4, 4, 3, 3, 1, 1, 1, 1,
                                     1, 1, 2) == EPRE);
    CHECK(mmalib_depthwise_conv2d_i16(i16, w16 + mis, b64, sc, shf, o16, 2, 4, 4, 3, 3, 1, 1, 1,
                                      1, 1, 1, 2) == EPRE);
    CHECK(mmalib_matmul_i8(i8 + mis, w8, o8, 2, 4, 2, 0) == EPRE);
    CHECK(mmalib_matmul_i16(i16, w16, o16 + mis, 2, 4, 2, 0) == EPRE);
    CHECK(mmalib_matmul_bias_i8(i8, w8 + mis, b32, sc, shf, o8, 2, 4, 2) == EPRE);
    CHECK(mmalib_matmul_bias_i16(i16 + mis, w16, b64, sc, shf, o16, 2, 4, 2) == EPRE);
  }
  /* NULL data pointers */
  CHECK(mmalib_conv2d_i8(NULL, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) == EPRE);
  CHECK(mmalib_conv2d_i16(i16, NULL, b64, sc, shf, o16, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) ==
        EPRE);
  CHECK(mmalib_conv2d_i8_sliced(i8, w8, b32, sc, shf, NULL, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1,
                                0) == EPRE);
  CHECK(mmalib_matmul_i8(i8, NULL, o8, 2, 4, 2, 0) == EPRE);
  CHECK(mmalib_matmul_bias_i16(i16, w16, b64, sc, shf, NULL, 2, 4, 2) == EPRE);
  /* shapes and parameters */
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 2, 1, 1, 1, 1, 1) ==
        EPRE); /* stride_h ≠ stride_w */
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 0, 0, 1, 1, 1, 1) == EPRE);
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 1, 4, 2, 3, 3, 1, 1, 0, 1, 1, 1) ==
        EPRE); /* kernel taller than the padded input */
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 0, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) == EPRE);
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, -1, 1, 1, 1) == EPRE);
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 20000, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) ==
        EPRE); /* 180000-tap reduction would overflow int32 */
  shf[1] = 32;
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) == EPRE);
  CHECK(mmalib_conv2d_i16(i16, w16, b64, sc, shf, o16, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) ==
        EPRE);
  CHECK(mmalib_matmul_bias_i8(i8, w8, b32, sc, shf, o8, 2, 4, 2) == EPRE);
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2) ==
        EPRE);
  /* sliced: shift is read at oc_start, so the bad shift[1] is outside the tile */
  CHECK(mmalib_conv2d_i8_sliced(i8, w8, b32, sc, shf, o8, 2, 4, 4, 1, 3, 3, 1, 1, 1, 1, 1, 1,
                                1) == EPRE);
  shf[1] = 0;
  CHECK(mmalib_conv2d_i8_sliced(i8, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1,
                                -1) == EPRE);
  CHECK(mmalib_matmul_i8(i8, w8, o8, 2, 4, 2, 32) == EPRE);
  CHECK(mmalib_matmul_i16(i16, w16, o16, 2, 4, 2, -1) == EPRE);
  CHECK(mmalib_matmul_i8(i8, w8, o8, 0, 4, 2, 0) == EPRE);
  CHECK(mmalib_matmul_bias_i8(i8, w8, b32, sc, shf, o8, 2, 0, 2) == EPRE);
  CHECK(mmalib_matmul_bias_i8(i8, w8, b32, sc, shf, o8, 1, 131072, 1) == EPRE);
  /* depthwise: groups, square kernel, stride, kernel sizes */
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1) ==
        EPRE); /* num_groups ≠ channels */
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 6, 6, 3, 5, 1, 1, 1, 1, 2, 2, 2) ==
        EPRE); /* not square */
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 9, 9, 3, 3, 3, 3, 1, 1, 1, 1, 2) ==
        EPRE); /* stride 3 */
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 9, 9, 3, 3, 2, 1, 1, 1, 1, 1, 2) ==
        EPRE); /* stride_h ≠ stride_w */
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 9, 9, 7, 7, 2, 2, 3, 3, 3, 3, 2) ==
        EPRE); /* stride 2 needs k ≤ 5 */
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 9, 9, 1, 1, 1, 1, 0, 0, 0, 0, 2) ==
        EPRE); /* 1×1 is not an MMALIB depthwise kernel */
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 12, 12, 9, 9, 1, 1, 4, 4, 4, 4,
                                   2) == EPRE);
  CHECK(mmalib_depthwise_conv2d_i16(i16, w16, b64, sc, shf, o16, 2, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1,
                                    3) == EPRE);
  CHECK(buf_untouched(&out));
  /* and the aligned, valid calls do succeed (the rejections are specific) */
  CHECK(mmalib_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1) == OK);
  CHECK(mmalib_depthwise_conv2d_i8(i8, w8, b32, sc, shf, o8, 2, 9, 9, 5, 5, 2, 2, 2, 2, 2, 2, 2) ==
        OK);
  CHECK(mmalib_matmul_i8(i8, w8, o8, 2, 4, 2, 31) == OK);
  buf_free(&in);
  buf_free(&w);
  buf_free(&out);
}

/* ---- one full offloaded layer within 1 LSB of the exact float reference ------------ */

/* scale in [128, 255] (or smaller only when shift hits 31): relative error
 * ≤ 2^−9. */
static void scale_shift_u8(double r, uint8_t *s, uint8_t *sh) {
  int k = 0;
  while (k < 31 && r * ldexp(1.0, k + 1) < 255.5)
    k++;
  *sh = (uint8_t)k;
  *s = (uint8_t)fmin(255.0, floor(r * ldexp(1.0, k) + 0.5));
}
/* The fork's _float_to_scale_shift (notes §1): s ∈ [1, 127], ties to even,
 * least relative error, the search ends once s > 127. */
static void scale_shift_fork(double r, uint8_t *s, uint8_t *sh) {
  int k;
  double best = INFINITY;
  *s = 1;
  *sh = 0;
  for (k = 0; k <= 31; k++) {
    double v = nearbyint(r * ldexp(1.0, k)), err;
    if (v < 1)
      continue;
    if (v > 127)
      break;
    err = fabs(v / ldexp(1.0, k) - r) / r;
    if (err < best) {
      best = err;
      *s = (uint8_t)v;
      *sh = (uint8_t)k;
    }
  }
}

static void test_layer_within_1lsb(void) {
  enum { C = 64, H = 56, W = 56, K = 3 };
  size_t nin = (size_t)C * H * W, nw = (size_t)C * C * K * K, j;
  buf bi = buf_new(nin), bw = buf_new(nw), bo = buf_new(nin);
  int32_t *wi, *ww, bias[C];
  uint8_t s[C], sh[C];
  double d_s = 0.02, w_s[C], b_f[C], o_s, amax = 0;
  int32_t o_zp = 7;
  int64_t *acc;
  int ho, wo, c, pass, maxdiff[2] = {0, 0};
  fill_i8((int8_t *)bi.p, nin);
  /* weights of a trained-looking layer: per-channel symmetric, full range */
  for (c = 0; c < C; c++) {
    w_s[c] = 0.001 + 0.01 * (rnd() % 1000) / 1000.0;
    b_f[c] = ((int32_t)(rnd() % 2001) - 1000) / 500.0;
  }
  fill_i8((int8_t *)bw.p, nw);
  wi = widen_i8((int8_t *)bi.p, nin);
  ww = widen_i8((int8_t *)bw.p, nw);
  acc = oracle_conv(wi, ww, C, H, W, C, K, K, 1, 1, 1, 1, 1, 1, &ho, &wo);
  for (j = 0; j < nin; j++) {
    double y = fabs(acc[j] * d_s * w_s[j / ((size_t)H * W)] + b_f[j / ((size_t)H * W)]);
    amax = y > amax ? y : amax;
  }
  o_s = amax / 127.0 / 3.0; /* a third of the outputs' range saturates */
  for (pass = 0; pass < 2; pass++) {
    /* compile-time folding (d_zp = 0: symmetric activations; the output
     * zero point goes into the bias in accumulator units) */
    for (c = 0; c < C; c++) {
      double dw = d_s * w_s[c], r = dw / o_s;
      if (pass == 0)
        scale_shift_u8(r, &s[c], &sh[c]);
      else
        scale_shift_fork(r, &s[c], &sh[c]);
      bias[c] = (int32_t)nearbyint(b_f[c] / dw) + (int32_t)nearbyint(o_zp / r);
    }
    CHECK(mmalib_conv2d_i8((int8_t *)bi.p, (int8_t *)bw.p, bias, s, sh, (int8_t *)bo.p, C, H, W,
                           C, K, K, 1, 1, 1, 1, 1, 1) == OK);
    for (j = 0; j < nin; j++) {
      int cc = (int)(j / ((size_t)H * W));
      double y = nearbyint((acc[j] * d_s * w_s[cc] + b_f[cc]) / o_s) + o_zp;
      int d;
      y = y < -128 ? -128 : (y > 127 ? 127 : y);
      d = abs((int)y - (int8_t)bo.p[j]);
      maxdiff[pass] = d > maxdiff[pass] ? d : maxdiff[pass];
    }
  }
  printf("64->64 56x56 3x3 layer: max |kernel - float ref| = %d LSB with scale in [128,255], "
         "%d LSB with the fork's scale in [1,127]\n",
         maxdiff[0], maxdiff[1]);
  CHECK(maxdiff[0] <= 1);
  CHECK(maxdiff[1] <= 2);
  free(wi);
  free(ww);
  free(acc);
  buf_free(&bi);
  buf_free(&bw);
  buf_free(&bo);
}

int main(void) {
  test_rounding_by_hand();
  test_conv2d_i8();
  test_conv2d_i16();
  test_depthwise_i8();
  test_depthwise_i16();
  test_depthwise_i16_crop();
  test_matmul_bias();
  test_matmul();
  test_sliced();
  test_sliced_i16();
  test_grouped();
  test_residual_layout();
  test_residual_by_hand();
  test_residual_random();
  test_max_pool();
  test_max_pool_all_padding_windows();
  test_rejections();
  test_path_bound();
  test_dispatched_vs_scalar();
  test_layer_within_1lsb();
  UNIT_MAIN_END();
}
