/*
 * dwconv_internal.h — what the host depthwise int8 convolutions share (not
 * public): when their direct paths apply, and the weight preparation.
 *
 * A depthwise convolution (one input channel per group: c_in = groups,
 * c_out = groups·multiplier) has K = k_h·k_w taps per output, so the
 * im2col matrix product of the general host kernels fills one row of their
 * MR-channel tiles and a few taps of their reduction: most of each vector is
 * padding. The direct paths work on one input plane at a time instead:
 *
 *  - AVX-512 VNNI (dwconv2d_i8__host_avx512vnni.c): the plane is converted
 *    to unsigned bytes x + 128 in a padded band buffer, and every four
 *    horizontal taps of a kernel row are one vpdpbusd of a plain load of
 *    that buffer by a broadcast quad of signed weights (the byte quads
 *    below), 16 outputs per instruction;
 *  - AVX2 (dwconv2d_i8__host_avx2.c): the input rows are converted to
 *    int16 differences x − x_zp (0 in the padding), and each pair of
 *    horizontal taps is one vpmaddwd of (x[·+kw], x[·+kw+1]) int16 pairs,
 *    read straight from the converted row, by the broadcast weight pair,
 *    8 outputs per instruction.
 *
 * Every product and partial sum is exact and K is bounded, so both
 * accumulators equal the reference's bit for bit (modulo 2³² with the
 * bias, like it).
 */
#ifndef TIDSP_HOST_DWCONV_INTERNAL_H
#define TIDSP_HOST_DWCONV_INTERNAL_H

#include <string.h>

#include "rq_internal.h"

/* ------------------------------------------------------------------------
 * The AVX-512 VNNI byte-quad path (dwconv2d_i8__host_avx512vnni.c). */
enum {
  DW_MAX_K = 16,        /* k_h and k_w */
  DW_MAX_NQ = 4,        /* tap quads per kernel row: ⌈k_w/4⌉ */
  DW_MAX_SETS = 3,      /* signed weight sets that sum to w − w_zp */
  DW_MAX_WP = 512,      /* bytes per converted input row of a strip */
  DW_BUF_DATA = 12288,  /* converted rows of a band: ≥ (DW_MAX_K + 2)·DW_MAX_WP */
  DW_BUF_SLACK = 256    /* defined bytes after them (read by dropped lanes) */
};

/* One output channel's weights w' = w − w_zp as signed byte quads: quad q
 * of kernel row kh of set s is q[s][kh·⌈k_w/4⌉ + q], taps 4q .. 4q+3 in
 * bytes 0..3 (zero past k_w). A w' in [−128, 127] is set 0 alone; the
 * others (only with w_zp ≠ 0) are clamped into set 0 and the remainder
 * into sets 1 and 2 (|w'| ≤ 255 = 127 + 127 + 1). ns is the number of
 * sets in use. */
typedef struct dw_weights {
  int32_t q[DW_MAX_SETS][DW_MAX_K * DW_MAX_NQ];
  int32_t ns;
} dw_weights;

/* Fills *out from one channel's k_h·k_w weights; returns Σ w' mod 2³².
 * (The generic kernel's preparation; the 3×3, 5×5 and 7×7 kernels with
 * w_zp = 0 load their quads straight from the weight row.) */
static inline uint32_t tidsp_host_dw_weights(const tidsp_conv2d_params *p,
                                            const int8_t *w_row,
                                            dw_weights *out) {
  const int32_t nq = (p->k_w + 3) / 4;
  uint32_t sum = 0;
  int32_t kh, q, t, s;
  out->ns = 1;
  if (p->w_zp == 0) {
    for (kh = 0; kh < p->k_h; kh++) {
      const int8_t *wr = w_row + (size_t)kh * (size_t)p->k_w;
      for (q = 0; q < nq; q++) {
        const int32_t nt = p->k_w - 4 * q < 4 ? p->k_w - 4 * q : 4;
        uint32_t b = 0;
        for (t = 0; t < nt; t++) {
          const int32_t wv = wr[4 * q + t];
          b |= (uint32_t)(uint8_t)wv << (8 * t);
          sum += (uint32_t)wv;
        }
        out->q[0][kh * nq + q] = (int32_t)b;
      }
    }
    return sum;
  }
  for (kh = 0; kh < p->k_h; kh++) {
    for (q = 0; q < nq; q++) {
      uint32_t b[DW_MAX_SETS] = {0, 0, 0};
      for (t = 0; t < 4 && 4 * q + t < p->k_w; t++) {
        int32_t rest = w_row[kh * p->k_w + 4 * q + t] - p->w_zp;
        sum += (uint32_t)rest;
        for (s = 0; s < DW_MAX_SETS && rest != 0; s++) {
          const int32_t part = rest < -128 ? -128 : (rest > 127 ? 127 : rest);
          b[s] |= (uint32_t)(uint8_t)(int8_t)part << (8 * t);
          rest -= part;
          if (s + 1 > out->ns)
            out->ns = s + 1;
        }
      }
      for (s = 0; s < DW_MAX_SETS; s++)
        out->q[s][kh * nq + q] = (int32_t)b[s];
    }
  }
  return sum;
}

/* True when the byte-quad path runs the convolution: depthwise (one input
 * channel per group), strides 1 or 2, no horizontal dilation (the four
 * taps of a quad are adjacent bytes), kernels up to DW_MAX_K spanning at
 * most DW_MAX_K + 1 input rows (the band buffer holds them), and an output
 * zero point that keeps the clamped values in int16. */
static inline int tidsp_host_dw_quad_ok(const tidsp_conv2d_params *p,
                                        const int8_t *x, const int8_t *w,
                                        const void *rq, const int8_t *y) {
  /* (this also checks w_row_stride) */
  if (!tidsp_host_conv_fast_ok(p, x, w, rq, y))
    return 0;
  if (p->groups != p->c_in)
    return 0;
  if (p->stride_h < 1 || p->stride_h > 2 || p->stride_w < 1 || p->stride_w > 2)
    return 0;
  if (p->dil_w != 1)
    return 0;
  if (p->k_h > DW_MAX_K || p->k_w > DW_MAX_K || (int64_t)(p->k_h - 1) * p->dil_h > DW_MAX_K)
    return 0;
  /* columns j·stride_w − pad_left and rows stay far inside int32 */
  if (p->w_out > (1 << 24) || p->w_in > (1 << 24) || p->pad_left > (1 << 24) ||
      p->h_out > (1 << 24) || p->pad_top > (1 << 24))
    return 0;
  return 1;
}

/* ------------------------------------------------------------------------
 * The int16-pair path (dwconv2d_i8__host_avx2.c). */
enum {
  DW_RING = 16,      /* input rows one output row may span: (k_h − 1)·dil_h + 1 */
  DW_MAX_SPAN = 64,  /* (k_w − 1)·dil_w */
  DW_MAX_TAPS = 64   /* k_h·k_w */
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
