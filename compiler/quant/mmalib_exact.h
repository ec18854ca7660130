/*
 * mmalib_exact.h — the fold of the exact-requant MMALIB path
 * (-mmalib-exact; passes/match/mmalib_exact.c builds the graph).
 *
 * MMALIB's int8 kernels requantize with an 8-bit scale: s·2^−sh differs
 * from ORT's multiplier r = d_s·w_s/o_s by a relative g, |g| ≤ 2^−8, so a
 * share of each layer's outputs lands 1 LSB from ORT's. The exact path
 * keeps the MACs on the MMA but takes the requantization off it:
 *
 *   1. the int8 data less their zero point, widened to int16
 *      (k_widen_i16), and the int8 weights as an int16 constant go through
 *      MMALIB's int16 conv (int64 bias), whose
 *      scale/shift now only sets the grid of a wide intermediate:
 *        z = sat16(round_half_up((acc + b + D)·s·2^−sh))
 *      i.e. z ≈ (acc + b)/q + C with q = 2^sh/s and the centre C = D/q;
 *   2. the core (k_mmalib_exact_requant) reads z as an interval of q
 *      accumulators and requantizes both ends as ORT does; where they agree
 *      that is ORT's output, else it sums that one accumulator again from
 *      the int8 data (passes/match/mmalib_exact.c builds the graph).
 * The result is ORT's, bit for bit. z's step is t = r·q output LSB, so an
 * output needs the core's sum only when ORT's value lies within t of a
 * rounding boundary: about t ≈ 0.4 % of them (none where r ≥ T: then
 * q = 1 and z is the accumulator itself).
 *
 * t is the smallest step that still saturates correctly: z's 65536 values
 * must cover the 256 int8 outputs and a half LSB either side, so
 * t ≥ T = CS_MM_EXACT_MIN_STEP (257/65533, just above 2^−8), with C placed
 * so that z = 32767 (resp. −32768) implies the output 127 (resp. −128): the
 * core then needs no sum for a saturated z.
 */
#ifndef CSTATIC_MMALIB_EXACT_H
#define CSTATIC_MMALIB_EXACT_H

#include <stdint.h>

#define CS_MM_EXACT_MIN_STEP (257.0 / 65533.0)

/* One output channel of the exact path. */
typedef struct cs_mm_exact_ch {
  uint8_t scale, shift; /* the int16 kernel's s, sh: q = 2^sh / s */
  int32_t centre;       /* C: z's value for an exact 0 (a multiple of s) */
  int64_t offset;       /* D = C·q, added to the accumulator bias (integer) */
  double step;          /* t = r·q, output LSB per z step, in [T, T·(1 + 2^−7)) */
} cs_mm_exact_ch;

/* The channel's grid for multiplier r = d_s·w_s/o_s and output zero point
 * o_zp: NULL with *ch filled, or the rule that declines the layer (r not
 * finite or ≤ 0, or below ~2^−32: sh would exceed 31). */
const char *cs_mm_exact_channel(double r, int32_t o_zp, cs_mm_exact_ch *ch);

/* z's saturation claim for *ch: z = 32767 ⇒ ORT's output is 127 and
 * z = −32768 ⇒ −128 (the reasoning in mmalib_exact.c). 1 if it holds. */
int cs_mm_exact_saturation_ok(const cs_mm_exact_ch *ch, int32_t o_zp);

/* A 5×5 or 7×7 depthwise conv on the exact path. MMALIB's int16 depthwise
 * kernel is 3×3 only (MMALIB-882), so the K×K window is covered by 3×3
 * tiles at kernel offsets (a, b): per dimension ceil(K/3) offsets, the
 * first 0, each within 3 of the one before, so tile (a, b) owns the taps
 * [a, a_end) × [b, b_end) up to the next offsets (its other taps, and taps
 * past K, are zero weights): 4 tiles for 5×5, 9 for 7×7. Tile (a, b) is a
 * 3×3 depthwise call with the same stride on the input window that its
 * taps read: output (oh, ow) reads rows oh·s − pad_top + a + 0..2, so
 * rows [r0, r1) = [a − pad_top, (h_out − 1)·s + a − pad_top + 3). The call
 * runs on the whole input with pads −r0 before and r1 − h_in after
 * (likewise for columns): a positive pad is zero rows, a negative one a
 * crop of the input (cstatic/mmalib.h, the int16 depthwise kernel), so no
 * tile copies its window. The offsets of a dimension are those with the
 * most tiles that need no crop ({0, 2} for a "same" 5×5 at stride 1 or 2:
 * none; {0, 3, 6} otherwise first), the form MMALIB takes as it is. Its
 * output is h_out × w_out, and the K×K conv is the sum of the tiles'
 * accumulators (exact integers), so the core kernel sums the tiles' z
 * intervals (kernels.h tidsp_mmalib_exact_requant). A tile whose window
 * lies wholly in the padding reads only zeros and is left out. */
#define CS_MM_EXACT_MAX_TILES 9
typedef struct cs_mm_exact_tile {
  int a, b;         /* the tile's kernel offset */
  int a_end, b_end; /* the end of the taps it owns: [a, a_end) × [b, b_end) */
  int pad_t, pad_b, pad_l, pad_r; /* its call's pads on the whole input (< 0: a crop) */
} cs_mm_exact_tile;

/* The tiles of a k×k depthwise conv (k 5 or 7; 3 gives the one tile that
 * is the conv itself) with the given stride, input size, top/left padding
 * and output size: their count (≤ CS_MM_EXACT_MAX_TILES), 0 for a k the
 * tiling does not take. */
int cs_mm_exact_dw_tiles(int k, int stride, int h_in, int w_in, int pad_top, int pad_left, int h_out, int w_out,
                         cs_mm_exact_tile *tiles);

#endif
