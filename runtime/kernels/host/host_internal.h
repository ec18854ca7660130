/*
 * host_internal.h — what the fast host kernels share (not public).
 *
 * A host kernel runs its fast path only on inputs that the reference would
 * accept and whose requantization kind it implements (the conv and matmul
 * paths: FLOAT, Q31 and SCALE_SHIFT, rq_internal.h; the other kernels:
 * FLOAT);
 * on anything else it calls the __ref variant, which then returns the same
 * bytes or the same error. So the eligibility tests below only need to be
 * conservative, never exhaustive.
 */
#ifndef TIDSP_HOST_INTERNAL_H
#define TIDSP_HOST_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "../kernel_variants.h"
#include "../ref/conv_internal.h"

/* The FLOAT requantization of an 8-bit output that the reference accepts. */
static inline int tidsp_host_rq_float_ok(const tidsp_requant_params *rq) {
  return rq->kind == TIDSP_REQUANT_FLOAT && rq->out_min <= rq->out_max &&
         rq->out_min >= TIDSP_REF_I8_MIN && rq->out_max <= TIDSP_REF_I8_MAX &&
         rq->out_zp >= TIDSP_REF_I8_MIN && rq->out_zp <= TIDSP_REF_I8_MAX;
}

/* FLOAT, Q31 or SCALE_SHIFT of an 8-bit output that the reference accepts
 * for `channels` channels, checking every entry that the call reads (all
 * channels, or entry 0 when per-tensor) as tidsp_ref_rq_init does: Q31
 * with 0 ≤ mult ≤ 2^24 and 0 ≤ shift ≤ TIDSP_REF_MAX_SHIFT (what makes
 * its FLOAT form exact, rq_internal.h); SCALE_SHIFT with out_zp = 0 and
 * shifts at most 31. */
static inline int tidsp_host_rq_ok(const tidsp_requant_params *rq,
                                   const void *data, int32_t channels) {
  if (rq->kind == TIDSP_REQUANT_Q31) {
    const int32_t n = rq->per_channel ? channels : 1;
    const int32_t *mult = (const int32_t *)data, *shift = mult + n;
    int32_t i;
    if (rq->out_min > rq->out_max || rq->out_min < TIDSP_REF_I8_MIN ||
        rq->out_max > TIDSP_REF_I8_MAX || !tidsp_ref_is_i8(rq->out_zp))
      return 0;
    for (i = 0; i < n; i++) {
      if (mult[i] < 0 || mult[i] > (1 << 24) || shift[i] < 0 || shift[i] > TIDSP_REF_MAX_SHIFT)
        return 0;
    }
    return 1;
  }
  if (rq->kind == TIDSP_REQUANT_SCALE_SHIFT) {
    const tidsp_scale_shift *ss = (const tidsp_scale_shift *)data;
    const int32_t n = rq->per_channel ? channels : 1;
    int32_t i;
    if (rq->out_zp != 0 || rq->out_min > rq->out_max ||
        rq->out_min < TIDSP_REF_I8_MIN || rq->out_max > TIDSP_REF_I8_MAX)
      return 0;
    for (i = 0; ss->shift && i < n; i++) {
      if (ss->shift[i] > TIDSP_SCALE_SHIFT_MAX_SHIFT)
        return 0;
    }
    return 1;
  }
  return tidsp_host_rq_float_ok(rq);
}

/* True when the convolution has a fast path (FLOAT, Q31 or SCALE_SHIFT)
 * and some output. */
static inline int tidsp_host_conv_fast_ok(const tidsp_conv2d_params *p,
                                          const int8_t *x, const int8_t *w,
                                          const void *rq, const int8_t *y) {
  if (!p || !x || !w || !rq || !y)
    return 0;
  if (tidsp_ref_conv2d_check(p) != TIDSP_OK)
    return 0;
  if (!tidsp_ref_is_i8(p->x_zp) || !tidsp_ref_is_i8(p->w_zp))
    return 0;
  if ((int64_t)(p->c_in / p->groups) * p->k_h * p->k_w > TIDSP_REF_MAX_TAPS)
    return 0;
  if (tidsp_ref_w_row_stride(p->w_row_stride,
                             (int64_t)(p->c_in / p->groups) * p->k_h * p->k_w) < 0)
    return 0;
  if (tidsp_ref_conv_w_layout_check(p) != TIDSP_OK)
    return 0;
  if (p->n == 0 || p->h_out == 0 || p->w_out == 0)
    return 0;
  return tidsp_host_rq_ok(&p->rq, rq, p->c_out);
}

/* True when the matrix multiply has a fast path (FLOAT, Q31 or
 * SCALE_SHIFT) and some output. */
static inline int tidsp_host_matmul_fast_ok(const tidsp_matmul_params *p,
                                            const int8_t *x, const int8_t *w,
                                            const void *rq, const int8_t *y) {
  if (!p || !x || !w || !rq || !y)
    return 0;
  if (p->m < 1 || p->k < 0 || p->n < 1)
    return 0;
  if (tidsp_ref_w_row_stride(p->w_row_stride, p->k) < 0)
    return 0;
  if (!tidsp_ref_is_i8(p->x_zp) || !tidsp_ref_is_i8(p->w_zp))
    return 0;
  return tidsp_host_rq_ok(&p->rq, rq, p->n);
}

/* Bytes between weight rows of a convolution / matrix multiply that
 * tidsp_host_*_fast_ok accepted (w_row_stride, or the dense row length). */
static inline size_t tidsp_host_conv_w_stride(const tidsp_conv2d_params *p) {
  return (size_t)tidsp_ref_w_row_stride(
      p->w_row_stride, (int64_t)(p->c_in / p->groups) * p->k_h * p->k_w);
}
static inline size_t tidsp_host_matmul_w_stride(const tidsp_matmul_params *p) {
  return (size_t)tidsp_ref_w_row_stride(p->w_row_stride, p->k);
}

/* The FLOAT requantization of kernels.h, one value (same operations, in the
 * same order, as tidsp_ref_rq_apply: a product, two compares, lrintf). */
static inline int8_t tidsp_host_rq_float(float mult, float lo, float hi,
                                         int32_t zp, uint32_t acc) {
  float v = (float)tidsp_ref_u32_to_i32(acc) * mult;
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
  return (int8_t)(lrintf(v) + zp);
}

/* ------------------------------------------------------------------------
 * Output blocks of the convolutions: `lanes` consecutive output pixels of
 * one image, either a piece of one output row (cols ≤ lanes, rows = 1) or
 * several whole rows (ow0 = 0, cols = w_out). Lane r·cols + j is output
 * (oh0 + r, ow0 + j), and the lanes are consecutive in the output plane,
 * starting at flat index oh0·w_out + ow0. */
typedef struct tidsp_host_block {
  int32_t oh0, ow0, rows, cols;
} tidsp_host_block;

/* The first block of an output plane for a given vector width. */
static inline void tidsp_host_block_first(tidsp_host_block *b, int32_t h_out,
                                          int32_t w_out, int32_t lanes) {
  b->oh0 = 0;
  b->ow0 = 0;
  if (w_out >= lanes) {
    b->rows = 1;
    b->cols = lanes;
  } else {
    b->rows = lanes / w_out < h_out ? lanes / w_out : h_out;
    b->cols = w_out;
  }
}

/* Advances to the next block; returns 0 after the last one. */
static inline int tidsp_host_block_next(tidsp_host_block *b, int32_t h_out,
                                        int32_t w_out, int32_t lanes) {
  if (w_out >= lanes) {
    b->ow0 += lanes;
    if (b->ow0 >= w_out) {
      b->ow0 = 0;
      b->oh0++;
    }
    b->cols = w_out - b->ow0 < lanes ? w_out - b->ow0 : lanes;
    return b->oh0 < h_out;
  }
  b->oh0 += b->rows;
  if (b->oh0 >= h_out)
    return 0;
  if (b->rows > h_out - b->oh0)
    b->rows = h_out - b->oh0;
  return 1;
}

/* Fills row[0, lanes) with the input values that tap (ci, kh, kw) of the
 * reduction reads for the block's lanes, x_zp where the tap falls into the
 * padding or past the block. */
static inline void tidsp_host_conv_gather(const tidsp_conv2d_params *p,
                                          const int8_t *x_g, int32_t ci,
                                          int32_t kh, int32_t kw,
                                          const tidsp_host_block *b,
                                          int32_t lanes, int8_t *row) {
  const int64_t coff = (int64_t)b->ow0 * p->stride_w + (int64_t)kw * p->dil_w - p->pad_left;
  int32_t r, j, clo, chi;
  memset(row, p->x_zp, (size_t)lanes);
  tidsp_ref_valid_range(coff, p->stride_w, p->w_in, b->cols, &clo, &chi);
  if (clo >= chi)
    return;
  for (r = 0; r < b->rows; r++) {
    const int64_t ih = (int64_t)(b->oh0 + r) * p->stride_h +
                       (int64_t)kh * p->dil_h - p->pad_top;
    const int8_t *src;
    int8_t *dst = row + (size_t)r * (size_t)b->cols;
    if (ih < 0 || ih >= p->h_in)
      continue;
    src = x_g + ((size_t)ci * (size_t)p->h_in + (size_t)ih) * (size_t)p->w_in;
    if (p->stride_w == 1) {
      memcpy(dst + clo, src + (clo + coff), (size_t)(chi - clo));
    } else {
      for (j = clo; j < chi; j++)
        dst[j] = src[(int64_t)j * p->stride_w + coff];
    }
  }
}

/* Steps the tap (ci, kh, kw) to the next one in OIHW order. */
static inline void tidsp_host_next_tap(const tidsp_conv2d_params *p,
                                       int32_t *ci, int32_t *kh, int32_t *kw) {
  if (++*kw == p->k_w) {
    *kw = 0;
    if (++*kh == p->k_h) {
      *kh = 0;
      ++*ci;
    }
  }
}

#endif /* TIDSP_HOST_INTERNAL_H */
