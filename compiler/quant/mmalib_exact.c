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

/* One dimension of a tile at kernel offset off: its call's pads before
 * and after the whole input (negative: a crop, mmalib_exact.h); 0 when
 * none of the input lies under it. A crop at the end that the call's
 * output count drops anyway (the last rows no output reads) is pad 0. */
static int tile_range(int off, int stride, int pad, int n, int n_out, int *pb, int *pe) {
  int r0 = off - pad, r1 = (n_out - 1) * stride + off - pad + 3;
  if ((r1 < n ? r1 : n) <= (r0 > 0 ? r0 : 0)) return 0;
  *pb = -r0;
  *pe = r1 - n;
  if (*pe < 0 && n + *pb >= 3 && (n + *pb - 3) / stride + 1 == n_out) *pe = 0;
  return 1;
}

/* Whether a tile at offset off reads the whole of one dimension: no crop. */
static int whole(int off, int stride, int pad, int n, int n_out) {
  int pb, pe;
  return tile_range(off, stride, pad, n, n_out, &pb, &pe) && pb >= 0 && pe >= 0;
}

/* One dimension's tile offsets: m = ceil(k/3) of them, a[0] = 0, each
 * within 3 of the one before and the last within 3 of k, so that tile j
 * owns taps [a[j], a[j+1]) (the rest of its 3 taps: zero weights). Of
 * these, the one whose most tiles read the whole dimension (no crop); on
 * a tie the first found, starting from {0, 3, 6}. m. */
static int dim_offsets(int k, int stride, int pad, int n, int n_out, int *a) {
  int m = (k + 2) / 3, best = -1, cur[3] = {0, 0, 0};
  /* each later offset steps 3, 2 or 1 from the one before */
  int steps = m == 1 ? 1 : m == 2 ? 3 : 9;
  for (int v = 0; v < steps; v++) {
    int d1 = 3 - v % 3, d2 = 3 - v / 3, ok = 1, score = 0;
    cur[1] = d1;
    cur[2] = d1 + d2;
    if (m >= 2 && cur[m - 1] + 3 < k) ok = 0;
    for (int j = 0; j < m && ok; j++) {
      if (cur[j] > k - 1) ok = 0;
      score += ok && whole(cur[j], stride, pad, n, n_out);
    }
    if (ok && score > best) {
      best = score;
      for (int j = 0; j < m; j++) a[j] = cur[j];
    }
  }
  return m;
}

int cs_mm_exact_dw_tiles(int k, int stride, int h_in, int w_in, int pad_top, int pad_left, int h_out, int w_out,
                         cs_mm_exact_tile *tiles) {
  if (k != 3 && k != 5 && k != 7) return 0;
  int ra[3], ca[3];
  int m = dim_offsets(k, stride, pad_top, h_in, h_out, ra);
  dim_offsets(k, stride, pad_left, w_in, w_out, ca);
  int n = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      cs_mm_exact_tile t = {ra[i], ca[j], i + 1 < m ? ra[i + 1] : k, j + 1 < m ? ca[j + 1] : k, 0, 0, 0, 0};
      if (!tile_range(t.a, stride, pad_top, h_in, h_out, &t.pad_t, &t.pad_b) ||
          !tile_range(t.b, stride, pad_left, w_in, w_out, &t.pad_l, &t.pad_r))
        continue; /* only padding under it: its sum is 0 */
      tiles[n++] = t;
    }
  return n;
}
