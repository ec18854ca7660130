/*
 * scale_shift.h — the MMALIB requantization pair (_float_to_scale_shift):
 * a real multiplier r ≈ s · 2^−sh with s ∈ [0, 255], sh ∈ [0, 31], as the
 * uint8 scale/shift arrays of the mmalib_* kernels (include/cstatic/mmalib.h).
 */
#ifndef CSTATIC_SCALE_SHIFT_H
#define CSTATIC_SCALE_SHIFT_H

#include <stdint.h>

/* The pair for r, chosen with the largest shift whose rounded scale still
 * fits in 255, so that s lands in [128, 255] whenever r ≥ 128·2^−31:
 * relative error ≤ 0.5/s ≤ 2^−8 (≈ 2^−9 near s = 255; the kernel header's
 * "≤ 2^−9" holds only there). With the output zero point folded through
 * s·2^−sh (mmalib_common.c), that is ≤ 0.5 LSB on an unsaturated int8
 * output, plus ≤ 0.5 from the kernel's rounding: ≤ 1 LSB from the exact
 * float result. *rel_err = |s·2^−sh − r| / r. Returns 0, or −1 when r is
 * not representable (NaN, ≤ 0, or ≥ 255.5 where even sh = 0 overflows s). */
int cs_float_to_scale_shift(double r, uint8_t *s, uint8_t *sh, double *rel_err);

#endif
