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

/* The multipliers of the C7x residual add (c7x_int8/int16_residual_add_relu,
 * cstatic/mmalib.h): y = (m_a·(a − za) + m_b·(b − zb)) · 2^−shift + zy, for
 * the scale ratios ra = a_s/o_s, rb = b_s/o_s. m = round(ratio · 2^shift)
 * with one shift for both, the largest (≤ 62) that keeps the larger ratio
 * below 2^30 after scaling. *rel_err: the worse of the two
 * |m·2^−shift − ratio| / ratio. Returns 0, or −1 when the larger ratio is
 * not representable (NaN, ≤ 0, or ≥ 2^30). */
int cs_residual_add_mults(double ra, double rb, int32_t *m_a, int32_t *m_b, int32_t *shift, double *rel_err);

#endif
