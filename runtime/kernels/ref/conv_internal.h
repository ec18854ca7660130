/*
 * conv_internal.h — geometry validation shared by conv2d_i8 and conv2d_f32,
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
 * stored with row stride cols. */
typedef struct tidsp_ref_conv_tile {
  int32_t oh0, rows, ow0, cols;
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

#endif /* TIDSP_REF_CONV_INTERNAL_H */
