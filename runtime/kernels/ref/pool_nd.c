/*
 * pool_nd.c — max, argmax and average pooling over any number of spatial
 * dims (the 3-D pools, MaxPool on uint8, MaxPool's Indices): one odometer
 * over the output, one over the window, as ONNX Runtime's Pool loops walk
 * them (row-major, strict comparisons from the dtype's lowest value).
 */
#include <float.h>

#include "ref_internal.h"

static double load(const void *x, int32_t dtype, int64_t i) {
  return dtype == TIDSP_DTYPE_F32 ? (double)((const float *)x)[i]
         : dtype == TIDSP_DTYPE_I8 ? (double)((const int8_t *)x)[i]
                                   : (double)((const uint8_t *)x)[i];
}

int32_t tidsp_pool_nd(const tidsp_pool_nd_params *p, const void *x, void *y) {
  int32_t d, o[TIDSP_MAX_RANK], t[TIDSP_MAX_RANK];
  int64_t plane_in = 1, plane_out = 1, pl, j, kn = 1;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->planes < 0 || p->dims < 1 || p->dims > TIDSP_MAX_RANK - 2)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < p->dims; d++) {
    if (p->in[d] < 1 || p->out[d] < 0)
      return TIDSP_ERR_SHAPE;
    if (p->k[d] < 1 || p->stride[d] < 1 || p->dil[d] < 1 || p->pad_begin[d] < 0 || p->pad_end[d] < 0)
      return TIDSP_ERR_PARAM;
    plane_in *= p->in[d];
    plane_out *= p->out[d];
    kn *= p->k[d];
    for (j = 0; j < p->out[d]; j++) /* every window holds an input tap */
      if (tidsp_ref_taps_inside(j * p->stride[d] - p->pad_begin[d], p->k[d], p->dil[d], p->in[d]) == 0)
        return TIDSP_ERR_SHAPE;
  }
  if (p->op < TIDSP_POOL_MAX || p->op > TIDSP_POOL_AVG ||
      (p->op == TIDSP_POOL_AVG ? p->dtype != TIDSP_DTYPE_F32
                               : p->dtype != TIDSP_DTYPE_F32 && p->dtype != TIDSP_DTYPE_I8 &&
                                     p->dtype != TIDSP_DTYPE_U8))
    return TIDSP_ERR_PARAM;
  for (pl = 0; pl < p->planes; pl++) {
    for (d = 0; d < p->dims; d++)
      o[d] = 0;
    for (j = 0; j < plane_out; j++) {
      const double lowest = p->dtype == TIDSP_DTYPE_F32 ? -(double)FLT_MAX : p->dtype == TIDSP_DTYPE_I8 ? -128.0 : 0.0;
      double best = lowest;
      float sum = 0.0f;
      int64_t best_at = -1, inside = 1, padded = 1, kk;
      for (d = 0; d < p->dims; d++) {
        int64_t start = (int64_t)o[d] * p->stride[d] - p->pad_begin[d];
        inside *= tidsp_ref_taps_inside(start, p->k[d], p->dil[d], p->in[d]);
        padded *= tidsp_ref_taps_inside(start + p->pad_begin[d], p->k[d], p->dil[d],
                                        (int64_t)p->in[d] + p->pad_begin[d] + p->pad_end[d]);
        t[d] = 0;
      }
      for (kk = 0; kk < kn; kk++) { /* window odometer t, row-major */
        int64_t flat = 0, col = 0, stride_col = 1;
        int ok = 1;
        for (d = 0; d < p->dims; d++) {
          int64_t pos = (int64_t)o[d] * p->stride[d] - p->pad_begin[d] + (int64_t)t[d] * p->dil[d];
          ok = ok && pos >= 0 && pos < p->in[d];
          flat = flat * p->in[d] + pos;
          col += pos * stride_col;
          stride_col *= p->in[d];
        }
        if (ok) {
          const double v = load(x, p->dtype, pl * plane_in + flat);
          if (p->op == TIDSP_POOL_AVG) {
            sum += (float)v;
          } else if (v > best) {
            best = v;
            best_at = p->storage_order ? col : flat;
          }
        }
        for (d = p->dims - 1; d >= 0; d--) {
          if (++t[d] < p->k[d])
            break;
          t[d] = 0;
        }
      }
      {
        const int64_t yi = pl * plane_out + j;
        if (p->op == TIDSP_POOL_AVG)
          ((float *)y)[yi] = sum / (float)(p->count_include_pad ? padded : inside);
        else if (p->op == TIDSP_POOL_ARGMAX)
          ((int64_t *)y)[yi] = best_at < 0 ? -1 : pl * plane_in + best_at;
        else if (p->dtype == TIDSP_DTYPE_F32)
          ((float *)y)[yi] = (float)best;
        else if (p->dtype == TIDSP_DTYPE_I8)
          ((int8_t *)y)[yi] = (int8_t)best;
        else
          ((uint8_t *)y)[yi] = (uint8_t)best;
      }
      for (d = p->dims - 1; d >= 0; d--) { /* next output position */
        if (++o[d] < p->out[d])
          break;
        o[d] = 0;
      }
    }
  }
  return TIDSP_OK;
}
