/*
 * mmalib_exact.c — the exact-requant fold (mmalib_exact.h).
 */
#include "mmalib_exact.h"

#include <math.h>

#include "cstatic/mmalib.h"

/* Saturation. z = sat16(round_half_up(z_r)), z_r = (acc + b)/q + C exactly,
 * u = (z_r − C)·t the real output before rounding (ORT's, in LSB, without
 * o_zp), u' = (z − C)·t what the core pass rounds.
 *   z = 32767 ⇔ z_r ≥ 32766.5: then u ≥ (32766.5 − C)·t, and ORT gives 127
 *     when that is ≥ 127.5 − o_zp; u' = (32767 − C)·t is larger still.
 *   z = −32768 ⇔ z_r < −32767.5: then u < −(32767.5 + C)·t, and ORT gives
 *     −128 when that is ≤ −128.5 − o_zp; u' = −(32768 + C)·t is smaller.
 * Both at once need 65534·t ≥ 256: T = 257/65533 leaves C an interval of
 * width 65534 − 256/t ≥ 256 > s, so it holds a multiple of s. */
int cs_mm_exact_saturation_ok(const cs_mm_exact_ch *ch, int32_t o_zp) {
  double t = ch->step, c = (double)ch->centre;
  return (32766.5 - c) * t >= 127.5 - (double)o_zp && (32767.5 + c) * t >= 128.5 + (double)o_zp;
}

const char *cs_mm_exact_channel(double r, int32_t o_zp, cs_mm_exact_ch *ch) {
  if (!(r > 0.0) || !isfinite(r)) return "requant multiplier d_s*w_s/o_s not finite and positive";
  const double T = CS_MM_EXACT_MIN_STEP;
  if (r >= T) { /* z is the accumulator itself */
    ch->scale = 1;
    ch->shift = 0;
  } else {
    /* q ≥ T/r, as small as s in [128, 255] and sh allow: 2^sh/q* in
     * [128, 256), s = floor(2^sh/q*), so q/q* < 1 + 2^−7. */
    double qs = T / r;
    int sh = (int)ceil(log2(128.0 * qs));
    double s = floor(ldexp(1.0, sh) / qs);
    while (s > 255.0) { /* log2's rounding at a power of two */
      sh--;
      s = floor(ldexp(1.0, sh) / qs);
    }
    while (s < 128.0 && sh < 62) {
      sh++;
      s = floor(ldexp(1.0, sh) / qs);
    }
    if (sh > TIDSP_MMALIB_MAX_SHIFT || sh < 0)
      return "requant multiplier d_s*w_s/o_s below ~2^-32 (the exact path's shift would exceed 31)";
    ch->scale = (uint8_t)s;
    ch->shift = (uint8_t)sh;
  }
  double q = ldexp(1.0, ch->shift) / (double)ch->scale;
  ch->step = r * q;
  double lo = (128.5 + (double)o_zp) / ch->step - 32767.5;
  double hi = 32766.5 - (127.5 - (double)o_zp) / ch->step;
  double s = (double)ch->scale;
  double c = s * nearbyint((lo + hi) / 2.0 / s);
  if (c < lo) c += s;
  if (c > hi) c -= s;
  if (c < lo || c > hi || fabs(c) > 32767.0) return "no centre for the exact path's int16 grid";
  ch->centre = (int32_t)c;
  /* C·q = (C/s)·2^sh, exact; a multiply, since C/s may be negative (a
   * left shift of a negative value is undefined) */
  ch->offset = (int64_t)(c / s) * ((int64_t)1 << ch->shift);
  return cs_mm_exact_saturation_ok(ch, o_zp) ? NULL : "no centre for the exact path's int16 grid";
}

/* One dimension of a tile: the input range its taps read, clipped to
 * [0, n); 0 when nothing of it lies inside. */
static int tile_range(int off, int stride, int pad, int n, int n_out, int *first, int *len, int *pb, int *pe) {
  int r0 = off - pad, r1 = (n_out - 1) * stride + off - pad + 3;
  int c0 = r0 > 0 ? r0 : 0, c1 = r1 < n ? r1 : n;
  if (c1 <= c0) return 0;
  *first = c0;
  *len = c1 - c0;
  *pb = c0 - r0;
  *pe = r1 - c1;
  return 1;
}

int cs_mm_exact_dw_tiles(int k, int stride, int h_in, int w_in, int pad_top, int pad_left, int h_out, int w_out,
                         cs_mm_exact_tile *tiles) {
  if (k != 3 && k != 5 && k != 7) return 0;
  int n = 0;
  for (int a = 0; a < k; a += 3)
    for (int b = 0; b < k; b += 3) {
      cs_mm_exact_tile t = {a, b, 0, 0, 0, 0, 0, 0, 0, 0};
      if (!tile_range(a, stride, pad_top, h_in, h_out, &t.row0, &t.rows, &t.pad_t, &t.pad_b) ||
          !tile_range(b, stride, pad_left, w_in, w_out, &t.col0, &t.cols, &t.pad_l, &t.pad_r))
        continue; /* only padding under it: its sum is 0 */
      tiles[n++] = t;
    }
  return n;
}
