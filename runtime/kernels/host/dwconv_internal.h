/*
 * dwconv_internal.h — what the host depthwise int8 convolutions share (not
 * public): when the direct path applies, and its fixed buffer sizes.
 *
 * A depthwise convolution (one input channel per group: c_in = groups,
 * c_out = groups·multiplier) has K = k_h·k_w taps per output, so the
 * im2col matrix product of the general host kernels fills one row of their
 * MR-channel tiles and a few taps of their reduction: most of each vector is
 * padding. The direct path instead runs along an output row: per output
 * channel, the input rows that its taps read are converted once into int16
 * differences x − x_zp (0 in the padding) in a ring of row buffers, and each
 * pair of horizontal taps (kw, kw + 1) is one multiply-add of a vector of
 * (x[·+kw], x[·+kw+1]) int16 pairs by the broadcast pair
 * (w[kw] − w_zp, w[kw+1] − w_zp) into int32 lanes (vpmaddwd, or vpdpwssd
 * which also adds). Every product and pair sum is exact (|pair| ≤ 2·255²)
 * and K ≤ DW_MAX_TAPS keeps the sum exact, so the accumulator is the
 * reference's bit for bit.
 */
#ifndef TIDSP_HOST_DWCONV_INTERNAL_H
#define TIDSP_HOST_DWCONV_INTERNAL_H

#include "host_internal.h"

enum {
  DW_COLS = 256,     /* output columns per strip of a row */
  DW_RING = 16,      /* input rows kept converted (a power of 2) */
  DW_MAX_SPAN = 64,  /* (k_w − 1)·dil_w */
  DW_MAX_TAPS = 64,  /* k_h·k_w */
  /* one ring slot, in int32 units: the stride-1 pair buffer P[c] for
   * c < DW_COLS + span (+ one vector of read slack), or the stride-2 int16
   * row of 2·DW_COLS + k_w values */
  DW_SLOT = DW_COLS + DW_MAX_SPAN + 32
};

/* True when the convolution is depthwise (one input channel per group) and
 * the direct path can run it: horizontal stride 1 (any dilation) or 2
 * (dilation 1), at most DW_MAX_TAPS taps, and rows spanning at most DW_RING
 * input rows. Anything else goes to the general host path. */
static inline int tidsp_host_dw_fast_ok(const tidsp_conv2d_params *p,
                                        const int8_t *x, const int8_t *w,
                                        const void *rq, const int8_t *y) {
  if (!tidsp_host_conv_fast_ok(p, x, w, rq, y))
    return 0;
  if (p->groups != p->c_in)
    return 0;
  if (!(p->stride_w == 1 || (p->stride_w == 2 && p->dil_w == 1)))
    return 0;
  if ((int64_t)(p->k_w - 1) * p->dil_w > DW_MAX_SPAN)
    return 0;
  if ((int64_t)p->k_h * p->k_w > DW_MAX_TAPS)
    return 0;
  if ((int64_t)(p->k_h - 1) * p->dil_h + 1 > DW_RING)
    return 0;
  /* ow·stride_w and the strip's first input column stay far inside int32 */
  if (p->w_out > (1 << 24) || p->w_in > (1 << 24) || p->pad_left > (1 << 24))
    return 0;
  return 1;
}

/* (w[2q] − w_zp) | (w[2q+1] − w_zp) << 16 for the pairs of one kernel row of
 * k_w taps; the high half of the last pair is 0 when k_w is odd. Returns the
 * number of pairs. */
static inline int32_t tidsp_host_dw_wpairs(const int8_t *w_row, int32_t k_w,
                                           int32_t w_zp, int32_t *pairs) {
  int32_t q;
  for (q = 0; 2 * q < k_w; q++) {
    const uint32_t a = (uint16_t)(int16_t)(w_row[2 * q] - w_zp);
    const uint32_t b = 2 * q + 1 < k_w ? (uint16_t)(int16_t)(w_row[2 * q + 1] - w_zp) : 0u;
    pairs[q] = (int32_t)(a | b << 16);
  }
  return q;
}

#endif /* TIDSP_HOST_DWCONV_INTERNAL_H */
