/*
 * mmalib_fold.h — the compile-time folding of one MMALIB requantized layer
 * (te-extern-dispatch.txt "Compile-Time Parameter Folding"): per output
 * channel c the multiplier r[c] = d_s·w_s[c]/o_s as the kernel's 8-bit
 * scale and shift (scale_shift.h), and the bias in accumulator units.
 * Pure math on constants: the passes find the bias (mmalib_common.c) and
 * add the results as constants.
 */
#ifndef CSTATIC_MMALIB_FOLD_H
#define CSTATIC_MMALIB_FOLD_H

#include <stdint.h>

#include "quant.h"

/* A layer's bias as the graph holds it (all NULL: none). */
typedef struct cs_fold_bias {
  const int32_t *q;        /* DQ(int32 constant): its integers ... */
  const cs_qparams *q_dq;  /* ... and that DQ's parameters */
  const float *f;          /* a float constant */
} cs_fold_bias;

/* int8, per output channel c:
 *   bias[c] = b[c] − d_zp·wsum[c] + round(o_zp / (scale[c]·2^−shift[c]))
 * b: the DQ integers as they are (ORT quantizes the bias with scale
 * d_s·w_s[c]), or round(b_f / (d_s·w_s[c])). Returns NULL with bias/scale/
 * shift filled and *worst the worst relative error of s·2^−sh against r,
 * or the rule that declines the layer. */
const char *cs_mm_fold_i8(const cs_fold_bias *b, float d_s, int32_t d_zp, const cs_qparams *wq, float o_s,
                          int32_t o_zp, const int64_t *wsum, int channels, int32_t *bias_out, uint8_t *scale,
                          uint8_t *shift, double *worst);

/* int16 (d_zp = o_zp = 0): bias[c] = round_half_even(b[c] / (d_s·w_s[c]))
 * (int64); a DQ bias's integers directly when its scale is fl(d_s·w_s[c])
 * with zero point 0 (ORT's bias quantization), else its dequantized values.
 * Same contract as cs_mm_fold_i8. */
const char *cs_mm_fold_i16(const cs_fold_bias *b, float d_s, const cs_qparams *wq, float o_s, int channels,
                           int64_t *bias_out, uint8_t *scale, uint8_t *shift, double *worst);

#endif
