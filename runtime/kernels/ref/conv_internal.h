/*
 * conv_internal.h — geometry validation shared by conv2d_i8, conv2d_f32 and
 * the float transposed convolutions,
 * and the weight-row stride of the int8 convolution and matrix multiply.
 */
#ifndef TIDSP_REF_CONV_INTERNAL_H
#define TIDSP_REF_CONV_INTERNAL_H

#include "ref_internal.h"

/* Largest number of int8 products whose sum always fits int32:
 * 33025·255² < 2³¹. Bounds c_in/groups·k_h·k_w of the i8 convolution. */
#define TIDSP_REF_MAX_TAPS 33025

/* Output elements (a tile of whole or partial rows) accumulated at once in
 * a stack buffer. */
#define TIDSP_REF_CONV_TILE 1024

/* The output tile of conv rows [oh0, oh0 + rows) × columns [ow0, ow0 + cols),
 * stored with row stride cols; tiles are at most max_rows × max_cols. */
typedef struct tidsp_ref_conv_tile {
  int32_t oh0, rows, ow0, cols;
  int32_t max_rows, max_cols;
} tidsp_ref_conv_tile;

/* Tile size: whole rows when w_out fits, else one row of partial columns. */
static inline void tidsp_ref_conv_tile_dims(int32_t h_out, int32_t w_out,
                                            int32_t *rows, int32_t *cols) {
  *cols = w_out < TIDSP_REF_CONV_TILE ? w_out : TIDSP_REF_CONV_TILE;
  if (*cols < 1)
    *cols = 1;
  *rows = TIDSP_REF_CONV_TILE / *cols;
  if (*rows > h_out)
    *rows = h_out;
  if (*rows < 1)
    *rows = 1;
}

/* y += sum over the whole float output: a fused Add that ONNX Runtime
 * runs after the convolution at this CPU's MLAS block
 * (tidsp_conv2d_params.sum_in_conv), one rounding per element as its Add. */
static inline void tidsp_ref_conv_add_sum_f32(const tidsp_conv2d_params *p, const float *sum, float *y) {
  const size_t n = (size_t)p->n * (size_t)p->c_out * (size_t)p->h_out * (size_t)p->w_out;
  size_t i;
  for (i = 0; i < n; i++)
    y[i] = y[i] + sum[i];
}

/* The tiles of an output plane in row-major order: start with
 * tidsp_ref_conv_tiles_start, then each tidsp_ref_conv_tile_next moves *t
 * to the next tile (0 after the last). */
static inline void tidsp_ref_conv_tiles_start(const tidsp_conv2d_params *p, tidsp_ref_conv_tile *t) {
  tidsp_ref_conv_tile_dims(p->h_out, p->w_out, &t->max_rows, &t->max_cols);
  t->oh0 = 0;
  t->ow0 = -t->max_cols;
  t->rows = t->cols = 0;
}

static inline int tidsp_ref_conv_tile_next(const tidsp_conv2d_params *p, tidsp_ref_conv_tile *t) {
  t->ow0 += t->max_cols;
  if (t->ow0 >= p->w_out) {
    t->ow0 = 0;
    t->oh0 += t->max_rows;
  }
  if (t->oh0 >= p->h_out || p->w_out < 1)
    return 0;
  t->rows = p->h_out - t->oh0 < t->max_rows ? p->h_out - t->oh0 : t->max_rows;
  t->cols = p->w_out - t->ow0 < t->max_cols ? p->w_out - t->ow0 : t->max_cols;
  return 1;
}

/* A kernel tap (kh, kw) as it meets tile t: tile rows [rlo, rhi) read
 * input rows r·stride_h + roff, tile columns [clo, chi) input columns
 * j·stride_w + coff, all inside the input (padding reads as 0, so the
 * taps are clipped instead of tested); x_off is the input element (within
 * a channel plane) of tile element (rlo, clo). */
typedef struct tidsp_ref_conv_tap {
  int32_t kh, kw, rlo, rhi, clo, chi;
  int64_t roff, coff, x_off;
} tidsp_ref_conv_tap;

static inline void tidsp_ref_conv_taps_start(tidsp_ref_conv_tap *tap) {
  tap->kh = 0;
  tap->kw = -1;
}

/* Moves *tap to the next tap in (kh, kw) order that reads some input for
 * tile t; 0 when there is none. */
static inline int tidsp_ref_conv_tap_next(const tidsp_conv2d_params *p, const tidsp_ref_conv_tile *t,
                                          tidsp_ref_conv_tap *tap) {
  const int32_t sh = p->stride_h, sw = p->stride_w;
  for (; tap->kh < p->k_h; tap->kh++, tap->kw = -1) {
    tap->roff = (int64_t)t->oh0 * sh + (int64_t)tap->kh * p->dil_h - p->pad_top;
    tidsp_ref_valid_range(tap->roff, sh, p->h_in, t->rows, &tap->rlo, &tap->rhi);
    if (tap->rlo >= tap->rhi)
      continue;
    while (++tap->kw < p->k_w) {
      tap->coff = (int64_t)t->ow0 * sw + (int64_t)tap->kw * p->dil_w - p->pad_left;
      tidsp_ref_valid_range(tap->coff, sw, p->w_in, t->cols, &tap->clo, &tap->chi);
      if (tap->clo < tap->chi) {
        tap->x_off = ((int64_t)tap->rlo * sh + tap->roff) * p->w_in + (int64_t)tap->clo * sw + tap->coff;
        return 1;
      }
    }
  }
  return 0;
}

/* Element offsets, for image n and output channel co, of the first input
 * channel of co's group (NCHW) and of co's output plane. */
static inline size_t tidsp_ref_conv_x_group(const tidsp_conv2d_params *p, int32_t n, int32_t co) {
  const int32_t cpg_in = p->c_in / p->groups, g = co / (p->c_out / p->groups);
  return ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)cpg_in) * (size_t)p->h_in * (size_t)p->w_in;
}

static inline size_t tidsp_ref_conv_y_plane(const tidsp_conv2d_params *p, int32_t n, int32_t co) {
  return ((size_t)n * (size_t)p->c_out + (size_t)co) * (size_t)p->h_out * (size_t)p->w_out;
}

static inline int32_t tidsp_ref_conv2d_check(const tidsp_conv2d_params *p) {
  if (p->n < 0 || p->c_in < 1 || p->h_in < 1 || p->w_in < 1 || p->c_out < 1 ||
      p->h_out < 0 || p->w_out < 0)
    return TIDSP_ERR_SHAPE;
  if (p->k_h < 1 || p->k_w < 1 || p->stride_h < 1 || p->stride_w < 1 ||
      p->dil_h < 1 || p->dil_w < 1 || p->pad_top < 0 || p->pad_left < 0)
    return TIDSP_ERR_PARAM;
  if (p->groups < 1 || p->c_in % p->groups != 0 || p->c_out % p->groups != 0)
    return TIDSP_ERR_SHAPE;
  /* per-channel weight offsets are computed in int32 */
  if ((int64_t)(p->c_in / p->groups) * p->k_h * p->k_w > INT32_MAX)
    return TIDSP_ERR_SHAPE;
  return TIDSP_OK;
}

/* Shape check of the float transposed convolution (conv_transpose2d_f32's
 * reference and host variants): TIDSP_ERR_SHAPE for any bad field. */
static inline int32_t tidsp_ref_conv_transpose2d_check(const tidsp_conv2d_params *p) {
  if (p->n < 1 || p->c_in < 1 || p->c_out < 1 || p->h_in < 1 || p->w_in < 1 || p->h_out < 1 ||
      p->w_out < 1 || p->k_h < 1 || p->k_w < 1 || p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 ||
      p->dil_w < 1 || p->pad_top < 0 || p->pad_left < 0 || p->groups < 1 || p->c_in % p->groups ||
      p->c_out % p->groups)
    return TIDSP_ERR_SHAPE;
  return TIDSP_OK;
}

/* The same for the N-D one (conv_transpose_nd_f32). */
static inline int32_t tidsp_ref_conv_transpose_nd_check(const tidsp_conv_transpose_nd_params *p) {
  int32_t d;
  if (p->n < 1 || p->c_in < 1 || p->c_out < 1 || p->groups < 1 || p->c_in % p->groups || p->c_out % p->groups ||
      p->dims < 1 || p->dims > TIDSP_MAX_RANK - 2)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < p->dims; d++) {
    if (p->in[d] < 1 || p->out[d] < 1 || p->k[d] < 1 || p->stride[d] < 1 || p->dil[d] < 1 || p->pad_begin[d] < 0)
      return TIDSP_ERR_SHAPE;
  }
  return TIDSP_OK;
}

/* Bytes from one weight row of `taps` int8 weights to the next, given the
 * w_row_stride field of tidsp_conv2d_params / tidsp_matmul_params: 0 means
 * dense rows (taps); otherwise it must hold a whole row. Returns −1 for a
 * stride that does not (negative, or nonzero and below taps), which the
 * kernels answer with TIDSP_ERR_SHAPE. */
static inline int64_t tidsp_ref_w_row_stride(int32_t w_row_stride, int64_t taps) {
  if (w_row_stride == 0)
    return taps;
  if (w_row_stride < 0 || w_row_stride < taps)
    return -1;
  return w_row_stride;
}

/* Where the weights of one output channel are, in either layout of
 * tidsp_conv2d_i8 (kernels.h TIDSP_CONV_W_*): input channel ci's tap t is
 * at w + base + t·ts + (ci/4)·qs + (ci%4)·js. */
typedef struct tidsp_ref_conv_wmap {
  int64_t base, ts, qs, js;
} tidsp_ref_conv_wmap;

/* TIDSP_OK when w_layout names a layout that fits the shape (O16: output
 * channels per group in 16s, input channels per group in quads, no row
 * stride), else TIDSP_ERR_PARAM. */
static inline int32_t tidsp_ref_conv_w_layout_check(const tidsp_conv2d_params *p) {
  if (p->w_layout == TIDSP_CONV_W_OIHW)
    return TIDSP_OK;
  if (p->w_layout == TIDSP_CONV_W_O16 && p->w_row_stride == 0 &&
      (p->c_out / p->groups) % 16 == 0 && (p->c_in / p->groups) % 4 == 0)
    return TIDSP_OK;
  return TIDSP_ERR_PARAM;
}

/* Output channel co's map, for a layout that passed the check; w_stride as
 * tidsp_ref_w_row_stride returns it (OIHW only). */
static inline tidsp_ref_conv_wmap tidsp_ref_conv_w_map(const tidsp_conv2d_params *p, int32_t co,
                                                       int64_t w_stride) {
  const int64_t T = (int64_t)p->k_h * p->k_w, Q = p->c_in / p->groups / 4;
  tidsp_ref_conv_wmap m;
  if (p->w_layout == TIDSP_CONV_W_O16) { /* blocks of 16·K weights + 16 Σw */
    m.base = tidsp_conv_o16_weight_at(T * Q * 4, Q, co, 0, 0);
    m.ts = Q * 64;
    m.qs = 64;
    m.js = 1;
  } else {
    m.base = (int64_t)co * w_stride;
    m.ts = 1;
    m.qs = 4 * T;
    m.js = T;
  }
  return m;
}

#endif /* TIDSP_REF_CONV_INTERNAL_H */
