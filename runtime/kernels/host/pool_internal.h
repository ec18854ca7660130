/*
 * pool_internal.h — the row geometry of the fast host max-pooling kernels
 * (pool__host_*.c; not public, portable C).
 *
 * Max pooling of one output row is done on a padded copy of input rows:
 *   buf[pad_left + iw] = the input value at column iw; every other
 *   position holds the type's lowest value (−128, −inf), which never wins
 *   a max, so a padding tap (or a tap past the padding of a ceil-mode
 *   window) changes nothing, as the reference's skipped taps.
 *   Window maxima H[j] = max over kw of buf[j + kw·dil_w], j < h_len,
 *   and output ow = H[ow·stride_w].
 * The buffers live on the stack: rows wider than the cap go to the
 * reference.
 */
#ifndef TIDSP_HOST_POOL_INTERNAL_H
#define TIDSP_HOST_POOL_INTERNAL_H

#include "../kernel_variants.h"
#include "../ref/ref_internal.h"

/* Extra elements after `span` that a vector may read or write past the
 * last needed position (a whole vector of 64 int8 or 2·16 floats). */
#define TIDSP_HOST_POOL_SLACK 64

typedef struct tidsp_host_pool_row {
  int32_t span;  /* buffer positions the windows can reach */
  int32_t h_len; /* window maxima per output row: (w_out − 1)·stride_w + 1 */
} tidsp_host_pool_row;

/* True when the reference would pool (valid geometry, every window covers
 * an input element), there is some output, and the padded row fits `cap`
 * elements; fills *g. */
static inline int tidsp_host_pool_plan(const tidsp_pool2d_params *p,
                                       int32_t cap, tidsp_host_pool_row *g) {
  int64_t reach, span;
  if (tidsp_ref_pool2d_check(p) != TIDSP_OK ||
      tidsp_ref_pool2d_check_nonempty(p) != TIDSP_OK)
    return 0;
  if (p->n == 0 || p->c == 0 || p->h_out == 0 || p->w_out == 0)
    return 0;
  reach = (int64_t)(p->w_out - 1) * p->stride_w + (int64_t)(p->k_w - 1) * p->dil_w + 1;
  span = (int64_t)p->pad_left + p->w_in;
  if (reach > span)
    span = reach;
  if (span > cap)
    return 0;
  g->span = (int32_t)span;
  g->h_len = (int32_t)((int64_t)(p->w_out - 1) * p->stride_w + 1);
  return 1;
}

/* The window taps kh in [*lo, *hi) of output row oh that fall on input
 * rows (oh·stride_h − pad_top + kh·dil_h in [0, h_in)): a contiguous
 * range, never empty once tidsp_host_pool_plan has accepted p. */
static inline void tidsp_host_pool_taps(const tidsp_pool2d_params *p,
                                        int32_t oh, int32_t *lo, int32_t *hi) {
  const int64_t ih0 = (int64_t)oh * p->stride_h - p->pad_top;
  if (p->dil_h == 1) { /* the usual case, without divisions */
    *lo = ih0 >= 0 ? 0 : (int32_t)-ih0;
    *hi = ih0 + p->k_h <= p->h_in ? p->k_h : (int32_t)(p->h_in - ih0);
    return;
  }
  tidsp_ref_valid_range(ih0, p->dil_h, p->h_in, p->k_h, lo, hi);
}

/* The first element of input row (oh·stride_h − pad_top + kh·dil_h). */
static inline size_t tidsp_host_pool_row_offset(const tidsp_pool2d_params *p,
                                                int32_t oh, int32_t kh) {
  return (size_t)((int64_t)oh * p->stride_h - p->pad_top + (int64_t)kh * p->dil_h) *
         (size_t)p->w_in;
}

/* ---- global_avgpool_i8 ----------------------------------------------------
 * The reference's sum per plane, −x_zp·hw + Σ x modulo 2^32, with Σ x from
 * the variant's sum_i8 (exact), then its requantization; parameters the
 * fast path does not take go to the reference. Both variants call this
 * with their own static sum_i8, which the compiler inlines. */
static inline int32_t tidsp_host_global_avgpool_i8(const tidsp_gap_i8_params *p, const void *rq, const int8_t *x,
                                                   int8_t *y, int64_t (*sum_i8)(const int8_t *x, int32_t n)) {
  tidsp_ref_rq plan;
  int32_t c;
  if (!p || !rq || !x || !y || p->nc < 0 || p->hw < 1 || !tidsp_ref_is_i8(p->x_zp) || p->rq.per_channel ||
      tidsp_ref_rq_init(&plan, &p->rq, rq, 1, TIDSP_REF_I8_MIN, TIDSP_REF_I8_MAX) != TIDSP_OK)
    return tidsp_global_avgpool_i8__ref(p, rq, x, y);
  for (c = 0; c < p->nc; c++) {
    const uint32_t acc = (uint32_t)(-p->x_zp) * (uint32_t)p->hw +
                         (uint32_t)(uint64_t)sum_i8(x + (size_t)c * (size_t)p->hw, p->hw);
    y[c] = (int8_t)tidsp_ref_rq_apply(&plan, 0, tidsp_ref_u32_to_i32(acc));
  }
  return TIDSP_OK;
}

/* ---- avgpool_i8 (FLOAT kind) ----------------------------------------------
 * The fast variants compute the reference's float formula lane by lane,
 * one output row of a plane at a time, vectorised across output columns:
 *   each input row of the window (in kh order) is dequantized into a float
 *   row buffer, buf[pad_left + iw] = fl(x_scale · (x − x_zp)) (the
 *   reference's table entry: the integer converts exactly, one rounding),
 *   every other position 0; sum[ow] += buf[ow·stride_w + kw·dil_w] in kw
 *   order; then avg = fl(sum / count), fl(avg / y_scale), + zp, clamp, rne.
 * Adding the zeros of padding (or of a ceil-mode window's overhang) changes
 * nothing: the sum starts at +0 and x + (−x) rounds to +0, so it is never
 * −0, and s + 0 = s for every other s. So each output sees exactly the
 * reference's additions, in its (kh, kw) order. count is k_h·k_w with
 * count_include_pad, else the taps inside the input: rows(oh)·cols(ow).
 * No multiply feeds an add in registers (the products go through buf), so
 * nothing can be contracted into a fused multiply-add. */

/* True when the fast variants take p (FLOAT kind, parameters the
 * reference accepts, a padded row of at most `cap` floats); fills *g. */
static inline int tidsp_host_avgpool_i8_ok(const tidsp_avgpool_i8_params *p, const int8_t *x, const int8_t *y,
                                           int32_t cap, tidsp_host_pool_row *g) {
  return p && x && y && p->kind == TIDSP_REQUANT_FLOAT &&
         tidsp_ref_i8_output_ok(p->y_min, p->y_max, p->y_zp, p->domain_offset) && tidsp_ref_is_i8(p->x_zp) &&
         tidsp_host_pool_plan(&p->pool, cap, g) && (int64_t)p->pool.k_h * p->pool.k_w <= INT32_MAX / 255;
}

/* The taps of the window of output column ow inside the input row. */
static inline int32_t tidsp_host_pool_cols_inside(const tidsp_pool2d_params *p, int32_t ow) {
  return tidsp_ref_taps_inside((int64_t)ow * p->stride_w - p->pad_left, p->k_w, p->dil_w, p->w_in);
}

#endif /* TIDSP_HOST_POOL_INTERNAL_H */
