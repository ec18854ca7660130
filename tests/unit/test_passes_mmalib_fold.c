/*
 * test_passes_mmalib_fold.c — the int8 MMALIB fold (compiler/quant/
 * mmalib_fold.c): where the 8-bit scale's error lies.
 *
 * The kernel (include/cstatic/mmalib.h) computes
 *   out = sat(floor(((acc + bias)·s + 2^(sh−1)) / 2^sh)),
 * ORT the exact y = A·r + o_zp rounded, A = acc − d_zp·Σw + b the real
 * accumulator. Checked on random channels, for every accumulator of a
 * range covering the int8 output:
 * - the kernel's value before rounding is g·(y − o_zp) from y, g =
 *   eff/r − 1 (|g| ≤ 2^−8), up to the folded bias's own rounding (≤ 0.5
 *   accumulator unit): o_zp is folded through eff = s·2^−sh, so the error
 *   is centred on the real zero (q = o_zp), not on q = 0 (the fork's
 *   round(o_zp / r));
 * - so the output is within floor(|g|·|y − o_zp| + 0.5·eff + 1) LSB of
 *   ORT's (1 for |y − o_zp| < 128: 2 is possible only at the far end of a
 *   ReLU range), and the outputs near the real zero change far less often
 *   than those far from it;
 * - the declines: a multiplier s·2^−sh cannot represent, an int32 overflow.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quant/mmalib_fold.h"
#include "unit.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}
static double urand(double lo, double hi) { return lo + (hi - lo) * (rnd() / 4294967296.0); }

/* The kernel's requantization of one accumulator, before the clamp. */
static int64_t kernel_out(int64_t acc, int32_t bias, uint8_t s, uint8_t sh) {
  int64_t v = (acc + bias) * (int64_t)s;
  int64_t r = sh ? (int64_t)1 << (sh - 1) : 0;
  int64_t q = v + r;
  return q >= 0 ? q >> sh : -((-q + ((int64_t)1 << sh) - 1) >> sh); /* floor */
}

static int64_t sat8(int64_t v) { return v < -128 ? -128 : v > 127 ? 127 : v; }

/* One random layer of `n` channels with output zero point o_zp: every
 * accumulator whose exact output lies in [−128, 127] checked. */
static void check_layer(int32_t o_zp, int32_t d_zp, int n) {
  float d_s = (float)urand(0.005, 0.05), o_s = (float)urand(0.02, 0.2);
  float ws[8];
  int64_t wsum[8];
  int32_t bq[8], bias[8];
  uint8_t scale[8], shift[8];
  for (int c = 0; c < n; c++) {
    ws[c] = (float)urand(0.001, 0.02);
    wsum[c] = (int64_t)(rnd() % 4001) - 2000;
    bq[c] = (int32_t)(rnd() % 20001) - 10000;
  }
  cs_qparams wq;
  memset(&wq, 0, sizeof wq);
  wq.scale = ws;
  wq.count = n;
  cs_fold_bias b = {bq, NULL, NULL};
  double worst = -1;
  const char *rule = cs_mm_fold_i8(&b, d_s, d_zp, &wq, o_s, o_zp, wsum, n, bias, scale, shift, &worst);
  CHECK_MSG(rule == NULL, "declined: %s", rule ? rule : "");
  if (rule) return;
  CHECK(worst > 0 && worst <= 1.0 / 256);
  double q_c = o_zp;
  int checked = 0, beyond = 0;
  for (int c = 0; c < n; c++) {
    double r = (double)d_s * ws[c] / o_s, eff = ldexp(scale[c], -shift[c]), g = eff / r - 1;
    CHECK(fabs(g) <= 1.0 / 256 + 1e-12);
    /* acc such that y spans [−128, 127] */
    double a_lo = (-128.5 - o_zp) / r, a_hi = (127.5 - o_zp) / r;
    int64_t off = (int64_t)d_zp * wsum[c] - bq[c]; /* acc = A + off */
    int64_t step = (int64_t)((a_hi - a_lo) / 4000) + 1;
    for (int64_t A = (int64_t)ceil(a_lo); A <= (int64_t)floor(a_hi); A += step) {
      int64_t acc = A + off;
      double y = (double)A * r + o_zp;
      double v = (double)(acc + bias[c]) * eff; /* before the kernel's rounding */
      double want = y + g * (y - q_c);
      CHECK_MSG(fabs(v - want) <= 0.5 * eff + 1e-9, "c %d A %lld: %.6f vs %.6f", c, (long long)A, v, want);
      int64_t k = sat8(kernel_out(acc, bias[c], scale[c], shift[c]));
      int64_t e = sat8((int64_t)nearbyint((double)A * r) + o_zp);
      double bound = floor(fabs(g) * fabs(y - q_c) + 0.5 * eff + 1 + 1e-9);
      if ((double)llabs(k - e) > bound || (fabs(y - q_c) < 128 && llabs(k - e) > 1)) beyond++;
      checked++;
    }
  }
  CHECK(checked > 0);
  CHECK_MSG(beyond == 0, "%d outputs beyond their bound from the exact result (o_zp %d)", beyond, o_zp);
}

/* One output channel's fold: weight scale w_scale, Σw 0, bias 0. */
typedef struct one_channel {
  float ws[1];
  int64_t wsum[1];
  int32_t bq[1], bias[1];
  uint8_t scale[1], shift[1];
  cs_qparams wq;
  cs_fold_bias b;
  double worst;
} one_channel;

static void one_channel_init(one_channel *o, float w_scale) {
  memset(o, 0, sizeof *o);
  o->ws[0] = w_scale;
  o->wq.scale = o->ws;
  o->wq.count = 1;
  o->b.q = o->bq;
}

/* cs_mm_fold_i8 of o's channel: NULL, or the rule that declines. */
static const char *fold_one(one_channel *o, float d_s, float o_s, int32_t o_zp) {
  return cs_mm_fold_i8(&o->b, d_s, 0, &o->wq, o_s, o_zp, o->wsum, 1, o->bias, o->scale, o->shift, &o->worst);
}

/* An output differs from ORT's (1 LSB) with a probability about the
 * error before rounding, |g|·|y − q_c| (plus half-up vs half-to-even
 * ties): within 8 LSB of q_c at most 8·|g|, beyond 100 LSB several
 * times more. So the centre is where the results depend on it. */
static void check_center_is_exact(int32_t o_zp) {
  const float d_s = 0.01f, o_s = 0.1f;
  one_channel o;
  one_channel_init(&o, 0.0123f);
  CHECK(fold_one(&o, d_s, o_s, o_zp) == NULL);
  const int32_t bias[1] = {o.bias[0]};
  const uint8_t scale[1] = {o.scale[0]}, shift[1] = {o.shift[0]};
  double r = (double)d_s * o.ws[0] / o_s, q_c = o_zp;
  int near_diff = 0, near = 0, far_diff = 0, far = 0;
  double g = ldexp(scale[0], -shift[0]) / r - 1;
  for (int64_t A = (int64_t)((-128.5 - o_zp) / r); A <= (int64_t)((127.5 - o_zp) / r); A++) {
    double y = (double)A * r + o_zp;
    int64_t k = sat8(kernel_out(A, bias[0], scale[0], shift[0]));
    int64_t e = sat8((int64_t)nearbyint((double)A * r) + o_zp);
    if (fabs(y - q_c) < 8) {
      near++;
      near_diff += k != e;
    }
    if (fabs(y - q_c) > 100 && y > -128 && y < 127) {
      far++;
      far_diff += k != e;
    }
  }
  double near_rate = (double)near_diff / near, far_rate = (double)far_diff / far;
  CHECK_MSG(near > 0 && near_rate <= 8 * fabs(g) + 0.002, "o_zp %d: %.4f of the outputs near q_c differ (g %.5f)", o_zp,
            near_rate, g);
  CHECK_MSG(far > 0 && far_rate > 4 * near_rate, "o_zp %d: far from q_c %.4f differ, near %.4f", o_zp, far_rate,
            near_rate);
}

static void check_declines(void) {
  one_channel o;
  one_channel_init(&o, 1.0f);
  /* r = 1000: beyond 255.5 even at shift 0 */
  const char *rule = fold_one(&o, 1.0f, 0.001f, 0);
  CHECK(rule && strstr(rule, "not representable"));
  /* r = 2^-40: the scale rounds to 0 */
  rule = fold_one(&o, (float)ldexp(1, -40), 1.0f, 0);
  CHECK(rule && strstr(rule, "below 2^-32"));
  /* a tiny multiplier with o_zp 3: the zero-point term beyond int32 */
  rule = fold_one(&o, (float)ldexp(1, -31), 1.0f, 3);
  CHECK(rule && strstr(rule, "overflows int32"));
  /* o_zp = −128 with the same multiplier folds o_zp/eff = −2^38: also beyond */
  rule = fold_one(&o, (float)ldexp(1, -31), 1.0f, -128);
  CHECK(rule && strstr(rule, "overflows int32"));
}

int main(void) {
  for (int i = 0; i < 40; i++) {
    check_layer(-128, 0, 8);                           /* after a ReLU */
    check_layer(-128, (int32_t)(rnd() % 40) - 128, 8); /* asymmetric input */
    check_layer((int32_t)(rnd() % 255) - 127, (int32_t)(rnd() % 255) - 127, 8); /* any range */
    check_layer(0, 0, 8);
  }
  check_center_is_exact(-128);
  check_center_is_exact(0);
  check_center_is_exact(100);
  check_center_is_exact(-100);
  check_declines();
  UNIT_MAIN_END();
}
