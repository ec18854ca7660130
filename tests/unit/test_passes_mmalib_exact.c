/*
 * test_passes_mmalib_exact.c — the exact-requant path (-mmalib-exact):
 * the fold of its int16 grid (compiler/quant/mmalib_exact.c) and the core
 * kernel that turns MMALIB's int16 result into ORT's int8 bytes
 * (runtime/kernels/ref/mmalib_exact_requant.c).
 *
 * - The grid: for multipliers r from 2^−22 to 2^−1 and every output zero
 *   point, q = 2^sh/s gives a step t = r·q in [T, T·(1 + 2^−7)) (or q = 1
 *   when r ≥ T), the centre is a multiple of s with D = C·q exactly, and
 *   z's saturation implies ORT's (cs_mm_exact_saturation_ok).
 * - The kernel: random int8 convs (plain and depthwise, stride 1 and 2,
 *   padded, input zero points 0, −128 and random — MMALIB reads x − x_zp,
 *   so its zero padding is the zero point's —, ReLU-like and symmetric
 *   outputs, multipliers on both sides of T) and FCs of 1-8 rows (the core kernel's n images of a 1x1 conv) run
 *   through the emulated MMALIB int16 conv / matmul_bias with the grid, then
 *   tidsp_mmalib_exact_requant, equal ORT's int8 conv (tidsp_conv2d_i8's
 *   reference loops with the float requantization, which is ORT's) on
 *   every output. The same z with the fix-up turned off (a grid whose
 *   scale the kernel sees as if z were exact) differs: the check can fail.
 * - A 5×5/7×7 depthwise conv as 3×3 int16 tiles (cs_mm_exact_dw_tiles:
 *   stride 1 and 2, same and asymmetric padding, inputs smaller than the
 *   window): the tiles' z through the core kernel, ORT's bytes again.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "cstatic/mmalib.h"
#include "quant/mmalib_exact.h"
#include "unit.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}
static double urand(double lo, double hi) { return lo + (hi - lo) * (rnd() / 4294967296.0); }

static void check_grid(void) {
  const double T = CS_MM_EXACT_MIN_STEP;
  for (int i = 0; i < 20000; i++) {
    double r = ldexp(1.0, -(int)(rnd() % 22) - 1) * urand(1.0, 2.0);
    int32_t o_zp = (int32_t)(rnd() % 256) - 128;
    cs_mm_exact_ch ch;
    const char *rule = cs_mm_exact_channel(r, o_zp, &ch);
    CHECK_MSG(rule == NULL, "r=%g o_zp=%d: %s", r, o_zp, rule ? rule : "");
    if (rule) continue;
    double q = ldexp(1.0, ch.shift) / ch.scale;
    if (r >= T) {
      CHECK(ch.scale == 1 && ch.shift == 0);
    } else {
      CHECK_MSG(ch.step >= T && ch.step < T * (1.0 + 1.0 / 128.0), "r=%g step=%g", r, ch.step);
      CHECK(ch.scale >= 128 && ch.shift <= 31);
    }
    CHECK(fabs(ch.step - r * q) <= 1e-12 * ch.step);
    CHECK(ch.centre % ch.scale == 0);
    CHECK(ch.offset * ch.scale == (int64_t)ch.centre * ((int64_t)1 << ch.shift)); /* D = C·2^sh/s exactly */
    CHECK(cs_mm_exact_saturation_ok(&ch, o_zp));
  }
  cs_mm_exact_ch ch;
  CHECK(cs_mm_exact_channel(0.0, 0, &ch) != NULL);
  CHECK(cs_mm_exact_channel(NAN, 0, &ch) != NULL);
  CHECK(cs_mm_exact_channel(1e-11, 0, &ch) != NULL); /* below ~2^-32: sh would exceed 31 */
}

static void *zalloc(size_t n) {
  size_t m = (n + 63) / 64 * 64;
  void *p = aligned_alloc(64, m ? m : 64);
  memset(p, 0, m ? m : 64);
  return p;
}

/* One random layer: returns how many outputs differ from ORT's; *naive
 * gets the count without the fix-up (every z taken as exact: the interval's
 * low end alone). */
/* n channels' quantization as the pass picks it: w_s such that
 * r = d_s·w_s/o_s is near r_mid, ORT's multiplier in mult
 * (quant/requant.c), a random bias b, MMALIB's scale / shift (sc, sh),
 * bias16 = b + offset, and the core kernel's grid columns (bias, offset,
 * scale, shift; the caller sets the part count grid[4n]). */
static void pick_channels(int n, float d_s, float o_s, int32_t o_zp, double r_mid, float *mult, int32_t *b,
                          uint8_t *sc, uint8_t *sh, int64_t *bias16, int64_t *grid) {
  for (int c = 0; c < n; c++) {
    float w_s = (float)(r_mid * urand(0.7, 1.4) * o_s / d_s);
    cs_mm_exact_ch ch;
    mult[c] = (d_s * w_s) / o_s;
    b[c] = (int32_t)(rnd() % 20001) - 10000;
    CHECK(cs_mm_exact_channel((double)d_s * w_s / o_s, o_zp, &ch) == NULL);
    sc[c] = ch.scale;
    sh[c] = ch.shift;
    grid[c] = bias16[c] = b[c] + ch.offset;
    grid[n + c] = ch.offset;
    grid[2 * n + c] = ch.scale;
    grid[3 * n + c] = ch.shift;
  }
}

/* The core kernel on x16 (x − p->x_zp: its params then carry x_zp 0)
 * into y, and its int16 twins, which must write y − out_zp and
 * lut16[y + 128]: the status. */
static int32_t exact_requant_both(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x16,
                                  const int8_t *w, const int64_t *grid, const float *mult, int8_t *y) {
  tidsp_conv2d_params q = *p;
  q.x_zp = 0;
  size_t n = (size_t)p->n * (size_t)p->c_out * (size_t)p->h_out * (size_t)p->w_out;
  int16_t *y16 = zalloc(2 * n), *yt = zalloc(2 * n), lut16[256];
  for (int i = 0; i < 256; i++) lut16[i] = (int16_t)(i * 97 % 1000 - 500);
  int32_t st = tidsp_mmalib_exact_requant(&q, z, x16, w, grid, mult, y);
  CHECK(tidsp_mmalib_exact_requant_i16(&q, z, x16, w, grid, mult, y16) == st);
  CHECK(tidsp_mmalib_exact_requant_lut16(&q, z, x16, w, grid, mult, lut16, yt) == st);
  int bad = 0, bad_t = 0;
  for (size_t i = 0; st == TIDSP_OK && i < n; i++) {
    bad += y16[i] != y[i] - p->rq.out_zp;
    bad_t += yt[i] != lut16[y[i] + 128];
  }
  CHECK_MSG(bad == 0 && bad_t == 0, "the int16 twins differ from y - out_zp on %d, from lut16[y] on %d outputs",
            bad, bad_t);
  free(y16);
  free(yt);
  return st;
}

static int check_layer(int depthwise, int stride, int32_t x_zp, int32_t o_zp, double r_mid, int *naive) {
  const int c_in = depthwise ? 32 : 8, c_out = 32, h = 9, w = 9, k = 3, pad = 1;
  const int ho = (h + 2 * pad - k) / stride + 1, wo = (w + 2 * pad - k) / stride + 1;
  const int cpg = depthwise ? 1 : c_in, groups = depthwise ? c_in : 1;
  int8_t *x = zalloc((size_t)c_in * h * w), *wt = zalloc((size_t)c_out * cpg * k * k);
  int16_t *x16 = zalloc(2 * (size_t)c_in * h * w), *w16 = zalloc(2 * (size_t)c_out * cpg * k * k);
  int16_t *z = zalloc(2 * (size_t)c_out * ho * wo);
  int8_t *y = zalloc((size_t)c_out * ho * wo), *ref = zalloc((size_t)c_out * ho * wo);
  int64_t *bias16 = zalloc(8 * (size_t)c_out), *grid = zalloc(8 * (4 * (size_t)c_out + 1));
  int32_t *b = zalloc(4 * (size_t)c_out);
  uint8_t *sc = zalloc((size_t)c_out), *sh = zalloc((size_t)c_out);
  float *mult = zalloc(4 * (size_t)c_out);
  for (int i = 0; i < c_in * h * w; i++) {
    x[i] = (int8_t)(rnd() % 256 - 128);
    x16[i] = (int16_t)(x[i] - x_zp); /* k_widen_i16: MMALIB's zero padding is x_zp's */
  }
  for (int i = 0; i < c_out * cpg * k * k; i++) w16[i] = wt[i] = (int8_t)(rnd() % 255 - 127);
  float d_s = (float)urand(0.01, 0.05), o_s = (float)urand(0.05, 0.2);
  pick_channels(c_out, d_s, o_s, o_zp, r_mid, mult, b, sc, sh, bias16, grid);
  grid[4 * c_out] = 1; /* one part */
  int32_t st = depthwise ? mmalib_depthwise_conv2d_i16(x16, w16, bias16, sc, sh, z, c_in, h, w, k, k, stride,
                                                       stride, pad, pad, pad, pad, c_in)
                         : mmalib_conv2d_i16(x16, w16, bias16, sc, sh, z, c_in, h, w, c_out, k, k, stride, stride,
                                             pad, pad, pad, pad);
  CHECK(st == TIDSP_MMALIB_OK);
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = 1;
  p.c_in = c_in;
  p.h_in = h;
  p.w_in = w;
  p.c_out = c_out;
  p.h_out = ho;
  p.w_out = wo;
  p.k_h = p.k_w = k;
  p.stride_h = p.stride_w = stride;
  p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = pad;
  p.groups = groups;
  p.x_zp = x_zp;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_zp = o_zp;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  CHECK(exact_requant_both(&p, z, x16, wt, grid, mult, y) == TIDSP_OK);
  CHECK(tidsp_conv2d_i8__ref(&p, x, wt, b, mult, ref) == TIDSP_OK);
  int n = c_out * ho * wo, bad = 0;
  for (int i = 0; i < n; i++) bad += y[i] != ref[i];
  /* A stride rewrite's pick made by the requantization (z_h … z_step_w):
   * y of the conv at stride (stride·a, stride·b) from the same z, ORT's
   * bytes of that conv, and y's entries at (oh·a, ow·b). */
  static const int steps[3][2] = {{2, 1}, {1, 2}, {3, 2}};
  for (int s = 0; s < 3; s++) {
    int a = steps[s][0], bb = steps[s][1], hp = (ho - 1) / a + 1, wp = (wo - 1) / bb + 1;
    tidsp_conv2d_params pp = p;
    pp.h_out = hp;
    pp.w_out = wp;
    pp.stride_h = stride * a;
    pp.stride_w = stride * bb;
    int8_t *yp = zalloc((size_t)c_out * hp * wp), *refp = zalloc((size_t)c_out * hp * wp);
    CHECK(tidsp_conv2d_i8__ref(&pp, x, wt, b, mult, refp) == TIDSP_OK);
    pp.z_h = ho;
    pp.z_w = wo;
    pp.z_step_h = a;
    pp.z_step_w = bb;
    CHECK(exact_requant_both(&pp, z, x16, wt, grid, mult, yp) == TIDSP_OK);
    for (int c = 0; c < c_out; c++)
      for (int i = 0; i < hp; i++)
        for (int j = 0; j < wp; j++) {
          int8_t v = yp[(c * hp + i) * wp + j];
          bad += v != refp[(c * hp + i) * wp + j] || v != y[(c * ho + i * a) * wo + j * bb];
        }
    /* a pick past z's plane is refused */
    pp.z_h = (hp - 1) * a;
    pp.x_zp = 0;
    CHECK(tidsp_mmalib_exact_requant(&pp, z, x16, wt, grid, mult, yp) == TIDSP_ERR_SHAPE);
    free(yp), free(refp);
  }
  /* without the fix-up: z's grid point taken as the accumulator */
  *naive = 0;
  for (int c = 0; c < c_out; c++) {
    double q = ldexp(1.0, sh[c]) / sc[c];
    for (int i = 0; i < ho * wo; i++) {
      double acc = (double)z[c * ho * wo + i] * q - (double)grid[c_out + c];
      long v = lrintf((float)acc * mult[c]) + o_zp;
      v = v < -128 ? -128 : v > 127 ? 127 : v;
      *naive += v != ref[c * ho * wo + i];
    }
  }
  free(x), free(wt), free(x16), free(w16), free(z), free(y), free(ref), free(bias16), free(grid), free(b);
  free(sc), free(sh), free(mult);
  return bad;
}

static void check_kernel(void) {
  int naive_total = 0;
  for (int i = 0; i < 24; i++) {
    int dw = i % 2, stride = 1 + (i / 2) % 2;
    int32_t o_zp = i % 3 == 0 ? -128 : (int32_t)(rnd() % 200) - 100;
    int32_t x_zp = i % 4 == 1 ? 0 : i % 4 == 2 ? -128 : (int32_t)(rnd() % 256) - 128;
    double r_mid = i % 4 == 3 ? 0.02 : ldexp(1.0, -8 - (int)(rnd() % 6)); /* q = 1, and q > 1 */
    int naive = 0;
    int bad = check_layer(dw, stride, x_zp, o_zp, r_mid, &naive);
    CHECK_MSG(bad == 0, "layer %d (dw %d, stride %d, x_zp %d, o_zp %d, r ~ %g): %d outputs differ from ORT's", i,
              dw, stride, x_zp, o_zp, r_mid, bad);
    naive_total += naive;
  }
  /* the fix-up is what makes it exact: without it some outputs differ */
  CHECK_MSG(naive_total > 0, "no output needed the fix-up: the check cannot fail");
}

/* An FC of m rows through MMALIB's int16 matmul_bias, read by the core
 * kernel as m images of a 1x1 conv: ORT's bytes on every output. */
static void check_fc(int m, int k, int n, int32_t x_zp, int32_t o_zp, double r_mid) {
  int8_t *x = zalloc((size_t)m * k), *w = zalloc((size_t)n * k);
  int8_t *y = zalloc((size_t)m * n), *ref = zalloc((size_t)m * n);
  int16_t *x16 = zalloc(2 * (size_t)m * k), *w16 = zalloc(2 * (size_t)n * k), *z = zalloc(2 * (size_t)m * n);
  int64_t *bias16 = zalloc(8 * (size_t)n), *grid = zalloc(8 * (4 * (size_t)n + 1));
  int32_t *b = zalloc(4 * (size_t)n);
  uint8_t *sc = zalloc((size_t)n), *sh = zalloc((size_t)n);
  float *mult = zalloc(4 * (size_t)n);
  for (int i = 0; i < m * k; i++) {
    x[i] = (int8_t)(rnd() % 256 - 128);
    x16[i] = (int16_t)(x[i] - x_zp);
  }
  for (int i = 0; i < n * k; i++) w16[i] = w[i] = (int8_t)(rnd() % 255 - 127);
  float d_s = 0.02f, o_s = 0.1f;
  pick_channels(n, d_s, o_s, o_zp, r_mid, mult, b, sc, sh, bias16, grid);
  grid[4 * n] = 1;
  CHECK(mmalib_matmul_bias_i16(x16, w16, bias16, sc, sh, z, m, k, n) == TIDSP_MMALIB_OK);
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = m;
  p.c_in = k;
  p.c_out = n;
  p.h_in = p.w_in = p.h_out = p.w_out = p.k_h = p.k_w = 1;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = p.groups = 1;
  p.x_zp = x_zp;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_zp = o_zp;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  CHECK(exact_requant_both(&p, z, x16, w, grid, mult, y) == TIDSP_OK);
  CHECK(tidsp_conv2d_i8__ref(&p, x, w, b, mult, ref) == TIDSP_OK);
  int bad = 0;
  for (int i = 0; i < m * n; i++) bad += y[i] != ref[i];
  CHECK_MSG(bad == 0, "FC %dx%dx%d: %d outputs differ from ORT's", m, k, n, bad);
  free(x), free(w), free(y), free(ref), free(x16), free(w16), free(z), free(bias16), free(grid), free(b);
  free(sc), free(sh), free(mult);
}

static void check_params(void) {
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  int16_t z[1] = {0}, x[1] = {0}, y16[1];
  int8_t w[1] = {0}, y[1];
  int64_t grid[5] = {0, 0, 0, 0, 1}; /* scale 0 */
  float m[1] = {1.0f};
  p.n = p.c_in = p.h_in = p.w_in = p.c_out = p.h_out = p.w_out = p.k_h = p.k_w = 1;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = p.groups = 1;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  CHECK(tidsp_mmalib_exact_requant(&p, z, x, w, grid, m, y) == TIDSP_ERR_PARAM);
  CHECK(tidsp_mmalib_exact_requant_i16(&p, z, x, w, grid, m, y16) == TIDSP_ERR_PARAM);
  grid[2] = 1;
  CHECK(tidsp_mmalib_exact_requant(&p, z, x, w, grid, m, y) == TIDSP_OK);
  grid[4] = 0; /* no part */
  CHECK(tidsp_mmalib_exact_requant(&p, z, x, w, grid, m, y) == TIDSP_ERR_PARAM);
  grid[4] = TIDSP_MMALIB_EXACT_MAX_PARTS + 1;
  CHECK(tidsp_mmalib_exact_requant(&p, z, x, w, grid, m, y) == TIDSP_ERR_PARAM);
  grid[4] = 1;
  CHECK(tidsp_mmalib_exact_requant(&p, NULL, x, w, grid, m, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_mmalib_exact_requant(&p, z, x, w, grid, m, NULL) == TIDSP_ERR_NULL);
  CHECK(tidsp_mmalib_exact_requant_i16(&p, z, x, w, grid, m, NULL) == TIDSP_ERR_NULL);
  CHECK(tidsp_mmalib_exact_requant_lut16(&p, z, x, w, grid, m, NULL, y16) == TIDSP_ERR_NULL);
  p.x_zp = -128; /* x16 is centred: a zero point is a caller's mistake */
  CHECK(tidsp_mmalib_exact_requant(&p, z, x, w, grid, m, y) == TIDSP_ERR_SHAPE);
  p.x_zp = 0;
  p.groups = 2;
  CHECK(tidsp_mmalib_exact_requant(&p, z, x, w, grid, m, y) == TIDSP_ERR_SHAPE);
}

/* A k×k depthwise conv (5 or 7) as the pass builds it: the 3×3 tiles of
 * cs_mm_exact_dw_tiles, each run on the whole widened input with its pads
 * (negative: a crop of its window) through the emulated MMALIB int16
 * depthwise kernel (bias and D in tile
 * 0, bias 0 in the rest), their z stacked, then the core kernel with
 * P = the tile count: ORT's bytes on every output. Returns the count of
 * outputs that differ; *naive as check_layer's; *n_tiles the tiles. */
static int check_dw_tiles(int k, int stride, int pad_t, int pad_l, int pad_b, int pad_r, int h, int w,
                          int32_t x_zp, int32_t o_zp, double r_mid, int *naive, int *n_tiles) {
  const int c = 16;
  const int ho = (h + pad_t + pad_b - k) / stride + 1, wo = (w + pad_l + pad_r - k) / stride + 1;
  cs_mm_exact_tile tiles[CS_MM_EXACT_MAX_TILES];
  int nt = cs_mm_exact_dw_tiles(k, stride, h, w, pad_t, pad_l, ho, wo, tiles);
  *n_tiles = nt;
  CHECK(nt >= 1 && nt <= CS_MM_EXACT_MAX_TILES);
  int8_t *x = zalloc((size_t)c * h * w), *wt = zalloc((size_t)c * k * k);
  int16_t *w3 = zalloc(2 * 16 * 9), *x16 = zalloc(2 * (size_t)c * h * w);
  int16_t *z = zalloc(2 * (size_t)nt * c * ho * wo);
  int8_t *y = zalloc((size_t)c * ho * wo), *ref = zalloc((size_t)c * ho * wo);
  int64_t *bias16 = zalloc(8 * (size_t)c), *zero = zalloc(8 * (size_t)c), *grid = zalloc(8 * (4 * (size_t)c + 1));
  int32_t *b = zalloc(4 * (size_t)c);
  uint8_t *sc = zalloc((size_t)c), *sh = zalloc((size_t)c);
  float *mult = zalloc(4 * (size_t)c);
  for (int i = 0; i < c * h * w; i++) {
    x[i] = (int8_t)(rnd() % 256 - 128);
    x16[i] = (int16_t)(x[i] - x_zp);
  }
  for (int i = 0; i < c * k * k; i++) wt[i] = (int8_t)(rnd() % 255 - 127);
  float d_s = (float)urand(0.01, 0.05), o_s = (float)urand(0.05, 0.2);
  pick_channels(c, d_s, o_s, o_zp, r_mid, mult, b, sc, sh, bias16, grid);
  grid[4 * c] = nt;
  for (int j = 0; j < nt; j++) {
    const cs_mm_exact_tile *t = &tiles[j];
    /* a crop leaves at least one row and column of the input */
    CHECK(h + (t->pad_t < 0 ? t->pad_t : 0) + (t->pad_b < 0 ? t->pad_b : 0) >= 1);
    CHECK(w + (t->pad_l < 0 ? t->pad_l : 0) + (t->pad_r < 0 ? t->pad_r : 0) >= 1);
    for (int ch = 0; ch < c; ch++) {
      for (int i = 0; i < 3; i++)
        for (int l = 0; l < 3; l++)
          w3[ch * 9 + i * 3 + l] = t->a + i < t->a_end && t->b + l < t->b_end ? wt[(ch * k + t->a + i) * k + t->b + l] : 0;
    }
    /* MMALIB writes 64-byte aligned buffers: each tile its own, then stacked */
    int16_t *zj = zalloc(2 * (size_t)c * ho * wo);
    CHECK(mmalib_depthwise_conv2d_i16(x16, w3, j ? zero : bias16, sc, sh, zj, c, h, w, 3, 3, stride, stride,
                                      t->pad_t, t->pad_b, t->pad_l, t->pad_r, c) == TIDSP_MMALIB_OK);
    memcpy(z + (size_t)j * c * ho * wo, zj, 2 * (size_t)c * ho * wo);
    free(zj);
  }
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = 1;
  p.c_in = p.c_out = p.groups = c;
  p.h_in = h;
  p.w_in = w;
  p.h_out = ho;
  p.w_out = wo;
  p.k_h = p.k_w = k;
  p.stride_h = p.stride_w = stride;
  p.dil_h = p.dil_w = 1;
  p.pad_top = pad_t;
  p.pad_left = pad_l;
  p.x_zp = x_zp;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_zp = o_zp;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  CHECK(exact_requant_both(&p, z, x16, wt, grid, mult, y) == TIDSP_OK);
  CHECK(tidsp_conv2d_i8__ref(&p, x, wt, b, mult, ref) == TIDSP_OK);
  int bad = 0;
  for (int i = 0; i < c * ho * wo; i++) bad += y[i] != ref[i];
  /* without the fix-up: the parts' grid points summed as the accumulator */
  *naive = 0;
  for (int ch = 0; ch < c; ch++) {
    double q = ldexp(1.0, sh[ch]) / sc[ch];
    for (int i = 0; i < ho * wo; i++) {
      double acc = -(double)grid[c + ch];
      for (int j = 0; j < nt; j++) acc += (double)z[((size_t)j * c + ch) * ho * wo + i] * q;
      long v = lrintf((float)acc * mult[ch]) + o_zp;
      v = v < -128 ? -128 : v > 127 ? 127 : v;
      *naive += v != ref[ch * ho * wo + i];
    }
  }
  free(x), free(wt), free(x16), free(w3), free(z), free(y), free(ref), free(bias16), free(zero), free(grid), free(b);
  free(sc), free(sh), free(mult);
  return bad;
}

static void check_dw_tiled(void) {
  /* k, stride, pads t/l/b/r, h, w: same and asymmetric padding, none,
   * an input smaller than the window (tiles wholly in the padding) */
  static const int cases[][8] = {
      {5, 1, 2, 2, 2, 2, 9, 9},   {5, 2, 2, 2, 2, 2, 9, 9},   {5, 2, 1, 2, 2, 1, 10, 11},
      {5, 1, 0, 0, 0, 0, 8, 7},   {7, 1, 3, 3, 3, 3, 9, 9},   {7, 2, 3, 3, 3, 3, 11, 10},
      {7, 1, 0, 0, 0, 0, 10, 10}, {7, 1, 3, 3, 3, 3, 2, 3},   {5, 2, 2, 2, 2, 2, 2, 2},
      {7, 1, 1, 2, 5, 4, 6, 7},
  };
  int naive_total = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int v = 0; v < 3; v++) {
      const int *cs = cases[i];
      int32_t o_zp = v == 0 ? -128 : (int32_t)(rnd() % 200) - 100;
      int32_t x_zp = v == 1 ? 0 : (int32_t)(rnd() % 256) - 128;
      double r_mid = v == 2 ? 0.02 : ldexp(1.0, -8 - (int)(rnd() % 6));
      int naive = 0, nt = 0;
      int bad = check_dw_tiles(cs[0], cs[1], cs[2], cs[3], cs[4], cs[5], cs[6], cs[7], x_zp, o_zp, r_mid, &naive,
                               &nt);
      CHECK_MSG(bad == 0, "dw %dx%d stride %d pads %d,%d,%d,%d on %dx%d (%d tiles, x_zp %d, o_zp %d, r ~ %g): %d "
                "outputs differ from ORT's", cs[0], cs[0], cs[1], cs[2], cs[3], cs[4], cs[5], cs[6], cs[7], nt, x_zp,
                o_zp, r_mid, bad);
      if (cs[6] >= 8) CHECK(nt == (cs[0] == 5 ? 4 : 9));
      naive_total += naive;
    }
  CHECK_MSG(naive_total > 0, "no tiled output needed the fix-up: the check cannot fail");
  cs_mm_exact_tile t[CS_MM_EXACT_MAX_TILES];
  CHECK(cs_mm_exact_dw_tiles(4, 1, 8, 8, 1, 1, 7, 7, t) == 0);
  /* the tiles own each tap of the window once */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int *cs = cases[i], k = cs[0];
    int ho = (cs[6] + cs[2] + cs[4] - k) / cs[1] + 1, wo = (cs[7] + cs[3] + cs[5] - k) / cs[1] + 1;
    int nt = cs_mm_exact_dw_tiles(k, cs[1], cs[6], cs[7], cs[2], cs[3], ho, wo, t);
    for (int r = 0; r < k; r++)
      for (int c = 0; c < k; c++) {
        int owners = 0;
        for (int j = 0; j < nt; j++)
          owners += t[j].a <= r && r < t[j].a_end && t[j].b <= c && c < t[j].b_end && t[j].a_end - t[j].a <= 3 &&
                    t[j].b_end - t[j].b <= 3;
        CHECK_MSG(owners <= 1 && (owners == 1 || nt < (k == 5 ? 4 : 9)), "case %zu: tap (%d, %d) has %d owners", i,
                  r, c, owners);
      }
  }
  /* a "same" 5x5 at stride 1 and 2 reads the whole input in every tile: no
   * crop (tiles at offsets {0, 2}), the form MMALIB takes as it is */
  static const int same5[][3] = {{1, 9, 9}, {2, 10, 12}, {2, 9, 9}};
  for (int i = 0; i < 3; i++) {
    int s = same5[i][0], h = same5[i][1], w = same5[i][2];
    int nt = cs_mm_exact_dw_tiles(5, s, h, w, 2, 2, (h - 1) / s + 1, (w - 1) / s + 1, t);
    CHECK(nt == 4);
    for (int j = 0; j < nt; j++)
      CHECK_MSG(t[j].pad_t >= 0 && t[j].pad_b >= 0 && t[j].pad_l >= 0 && t[j].pad_r >= 0,
                "5x5 stride %d on %dx%d: tile (%d, %d) crops its input", s, h, w, t[j].a, t[j].b);
  }
  /* a "same" 7x7 (ConvNeXt's): tiles at {0, 3, 6}; the middle one reads
   * rows oh..oh+2 (zero rows below), the first oh-3..oh-1 (a crop of the
   * last input row), the last oh+3..oh+5 (a crop of the first three) */
  CHECK(cs_mm_exact_dw_tiles(7, 1, 14, 14, 3, 3, 14, 14, t) == 9);
  CHECK(t[4].a == 3 && t[4].b == 3 && t[4].pad_t == 0 && t[4].pad_b == 2 && t[4].pad_l == 0 && t[4].pad_r == 2);
  CHECK(t[0].a == 0 && t[0].pad_t == 3 && t[0].pad_b == -1);
  CHECK(t[8].a == 6 && t[8].b == 6 && t[8].pad_t == -3 && t[8].pad_b == 5 && t[8].pad_l == -3 && t[8].pad_r == 5);
}

int main(void) {
  check_grid();
  check_kernel();
  check_dw_tiled();
  for (int i = 0; i < 8; i++)
    check_fc(1 + i, 64, 64, i % 3 ? 17 * i - 60 : 0, i % 2 ? -128 : 3, ldexp(1.0, -9 - i % 4));
  check_params();
  UNIT_MAIN_END();
}
