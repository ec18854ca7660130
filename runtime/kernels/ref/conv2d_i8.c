/*
 * conv2d_i8.c — quantized 2-D convolution, NCHW × OIHW, exact int32
 * accumulation then requantization. Output channel co's weights start at
 * w + co·w_row_stride (dense rows when the stride is 0); only the first
 * c_in/groups·k_h·k_w bytes of a row are read. The compiler may pack them
 * in another layout (params w_layout, kernels.h TIDSP_CONV_W_*): every
 * weight is then read through the channel's map (conv_internal.h).
 *
 * Loop order: per output channel, a tile of output rows is accumulated in a
 * stack buffer; for each kernel tap (kh, kw) and input channel, one weight
 * is held in a register while the innermost loop runs along an output row
 * (contiguous input when stride_w = 1). Padding reads as x_zp, i.e.
 * contributes (x_zp − x_zp)·w = 0, so each tap's rows and columns are
 * clipped to the input once instead of being tested element by element.
 *
 * Each product |(x − x_zp)(w − w_zp)| ≤ 255² fits int16 × int16 → int32;
 * with at most TIDSP_REF_MAX_TAPS products per output their sum fits int32
 * exactly, and the bias is then added modulo 2³² like ORT's int32
 * accumulator.
 */
#include <string.h>

#include "conv_internal.h"
#include "../kernel_variants.h"

/* Output columns that the innermost loop handles as one fixed-length block,
 * which gcc -O2 vectorizes. */
#define RUN_BLOCK 16

/* as[j] += (xs[j·sw] − x_zp)·wv for j < len. A strided run is first
 * gathered into a contiguous block so that the multiply-add vectorizes. */
static void tap_run(const int8_t *restrict xs, int32_t sw, int32_t len,
                    int16_t x_zp, int16_t wv, int32_t *restrict as) {
  int32_t j = 0, t;
  if (sw == 1) {
    for (; j + RUN_BLOCK <= len; j += RUN_BLOCK) {
      for (t = 0; t < RUN_BLOCK; t++)
        as[j + t] += (int16_t)(xs[j + t] - x_zp) * wv;
    }
  } else {
    int8_t blk[RUN_BLOCK];
    for (; j + RUN_BLOCK <= len; j += RUN_BLOCK) {
      for (t = 0; t < RUN_BLOCK; t++)
        blk[t] = xs[(ptrdiff_t)(j + t) * sw];
      for (t = 0; t < RUN_BLOCK; t++)
        as[j + t] += (int16_t)(blk[t] - x_zp) * wv;
    }
  }
  for (; j < len; j++)
    as[j] += (int16_t)(xs[(ptrdiff_t)j * sw] - x_zp) * wv;
}

/* acc (tile layout) = Σ over the taps of output channel co. */
static void conv_tile(const tidsp_conv2d_params *p, const int8_t *x_g,
                      const int8_t *w, tidsp_ref_conv_wmap wm, int32_t cpg_in,
                      const tidsp_ref_conv_tile *t, int32_t *acc) {
  const size_t plane = (size_t)p->h_in * (size_t)p->w_in;
  const int32_t sh = p->stride_h, sw = p->stride_w;
  const int16_t x_zp = (int16_t)p->x_zp;
  /* Whole input rows map one to one onto whole tile rows (and coff = 0
   * means every column of the tap is inside). */
  const int rows_contiguous = sh == 1 && sw == 1 && t->ow0 == 0 &&
                              t->cols == p->w_in;
  tidsp_ref_conv_tap tap;
  int32_t ci, r;

  memset(acc, 0, sizeof(*acc) * (size_t)t->rows * (size_t)t->cols);
  tidsp_ref_conv_taps_start(&tap);
  while (tidsp_ref_conv_tap_next(p, t, &tap)) {
    const int8_t *w_tap = w + wm.base + (int64_t)(tap.kh * p->k_w + tap.kw) * wm.ts;
    for (ci = 0; ci < cpg_in; ci++) {
      const int16_t wv = (int16_t)(w_tap[(ci >> 2) * wm.qs + (ci & 3) * wm.js] - p->w_zp);
      const int8_t *xs = x_g + (size_t)ci * plane + (ptrdiff_t)tap.x_off;
      if (wv == 0)
        continue;
      if (rows_contiguous && tap.coff == 0) {
        /* tile rows and input rows coincide: one run over all of them */
        tap_run(xs, 1, (tap.rhi - tap.rlo) * t->cols, x_zp, wv, acc + (size_t)tap.rlo * (size_t)t->cols);
        continue;
      }
      for (r = tap.rlo; r < tap.rhi; r++) {
        tap_run(xs, sw, tap.chi - tap.clo, x_zp, wv, acc + (size_t)r * (size_t)t->cols + tap.clo);
        xs += (ptrdiff_t)sh * p->w_in;
      }
    }
  }
}

int32_t tidsp_conv2d_i8__ref(const tidsp_conv2d_params *p, const int8_t *x,
                             const int8_t *w, const int32_t *bias,
                             const void *rq, int8_t *y) {
  int32_t acc[TIDSP_REF_CONV_TILE];
  tidsp_ref_rq plan;
  tidsp_ref_conv_tile t;
  int32_t st, n, co, r, j, cpg_in;
  int64_t w_stride;

  if (!p || !x || !w || !rq || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_conv2d_check(p);
  if (st != TIDSP_OK)
    return st;
  if (!tidsp_ref_is_i8(p->x_zp) || !tidsp_ref_is_i8(p->w_zp))
    return TIDSP_ERR_PARAM;
  cpg_in = p->c_in / p->groups;
  if ((int64_t)cpg_in * p->k_h * p->k_w > TIDSP_REF_MAX_TAPS)
    return TIDSP_ERR_SHAPE;
  w_stride = tidsp_ref_w_row_stride(p->w_row_stride, (int64_t)cpg_in * p->k_h * p->k_w);
  if (w_stride < 0)
    return TIDSP_ERR_SHAPE;
  st = tidsp_ref_conv_w_layout_check(p);
  if (st != TIDSP_OK)
    return st;
  st = tidsp_ref_rq_init(&plan, &p->rq, rq, p->c_out, TIDSP_REF_I8_MIN,
                         TIDSP_REF_I8_MAX);
  if (st != TIDSP_OK)
    return st;

  for (n = 0; n < p->n; n++) {
    for (co = 0; co < p->c_out; co++) {
      const tidsp_ref_conv_wmap wm = tidsp_ref_conv_w_map(p, co, w_stride);
      const uint32_t b = bias ? (uint32_t)bias[co] : 0u;
      int8_t *y_co = y + tidsp_ref_conv_y_plane(p, n, co);
      tidsp_ref_conv_tiles_start(p, &t);
      while (tidsp_ref_conv_tile_next(p, &t)) {
        conv_tile(p, x + tidsp_ref_conv_x_group(p, n, co), w, wm, cpg_in, &t, acc);
        for (r = 0; r < t.rows; r++) {
          int8_t *y_row = y_co + (size_t)(t.oh0 + r) * (size_t)p->w_out + t.ow0;
          const int32_t *a = acc + (size_t)r * (size_t)t.cols;
          for (j = 0; j < t.cols; j++)
            y_row[j] = (int8_t)tidsp_ref_rq_apply(&plan, co, tidsp_ref_u32_to_i32((uint32_t)a[j] + b));
        }
      }
    }
  }
  return TIDSP_OK;
}
