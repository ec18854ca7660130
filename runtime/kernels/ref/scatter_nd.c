/*
 * scatter_nd.c — ScatterND on any dtype: data copied to y (unless in
 * place), every index tuple checked, then each tuple's slice of updates
 * written (or combined, with a reduction) in index order. The compiler
 * folds constant ScatterNDs with this same function.
 */
#include <math.h>

#include "ref_internal.h"

static size_t dtype_bytes(int32_t dtype) {
  switch (dtype) {
    case TIDSP_DTYPE_F32:
    case TIDSP_DTYPE_I32: return 4;
    case TIDSP_DTYPE_I16:
    case TIDSP_DTYPE_U16: return 2;
    case TIDSP_DTYPE_I64: return 8;
    default: return 1;
  }
}

static int64_t get_int(const void *v, int32_t dtype, int64_t i) {
  switch (dtype) {
    case TIDSP_DTYPE_I8: return ((const int8_t *)v)[i];
    case TIDSP_DTYPE_U8:
    case TIDSP_DTYPE_BOOL: return ((const uint8_t *)v)[i];
    case TIDSP_DTYPE_I16: return ((const int16_t *)v)[i];
    case TIDSP_DTYPE_U16: return ((const uint16_t *)v)[i];
    case TIDSP_DTYPE_I32: return ((const int32_t *)v)[i];
    default: return ((const int64_t *)v)[i];
  }
}

/* v wrapped to the dtype (two's complement) */
static void set_int(void *y, int32_t dtype, int64_t i, int64_t v) {
  switch (dtype) {
    case TIDSP_DTYPE_I8: ((int8_t *)y)[i] = (int8_t)(uint8_t)v; break;
    case TIDSP_DTYPE_U8:
    case TIDSP_DTYPE_BOOL: ((uint8_t *)y)[i] = (uint8_t)v; break;
    case TIDSP_DTYPE_I16: ((int16_t *)y)[i] = (int16_t)(uint16_t)v; break;
    case TIDSP_DTYPE_U16: ((uint16_t *)y)[i] = (uint16_t)v; break;
    case TIDSP_DTYPE_I32: ((int32_t *)y)[i] = (int32_t)(uint32_t)v; break;
    default: ((int64_t *)y)[i] = v; break;
  }
}

static void combine(const tidsp_scatter_nd_params *p, void *y, int64_t yi, const void *u, int64_t ui) {
  if (p->dtype == TIDSP_DTYPE_F32) {
    float a = ((float *)y)[yi], b = ((const float *)u)[ui];
    ((float *)y)[yi] = p->reduction == TIDSP_SCATTER_ADD   ? a + b
                       : p->reduction == TIDSP_SCATTER_MUL ? a * b
                       : p->reduction == TIDSP_SCATTER_MAX ? fmaxf(a, b)
                                                           : fminf(a, b);
  } else {
    int64_t a = get_int(y, p->dtype, yi), b = get_int(u, p->dtype, ui);
    set_int(y, p->dtype, yi,
            p->reduction == TIDSP_SCATTER_ADD   ? (int64_t)((uint64_t)a + (uint64_t)b)
            : p->reduction == TIDSP_SCATTER_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
            : p->reduction == TIDSP_SCATTER_MAX ? (a > b ? a : b)
                                                : (a < b ? a : b));
  }
}

int32_t tidsp_scatter_nd(const tidsp_scatter_nd_params *p, const void *data,
                         const int64_t *indices, const void *updates, void *y) {
  int64_t t, e, cells = 1;
  int32_t d;
  const size_t esz = p ? (size_t)p->elem_size : 0;
  if (!p || !data || !indices || !updates || !y)
    return TIDSP_ERR_NULL;
  if (p->k < 1 || p->k > TIDSP_MAX_RANK || p->count < 0 || p->slice < 0 || p->total < 0 || p->elem_size < 1)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < p->k; d++) {
    if (p->dims[d] < 1)
      return TIDSP_ERR_SHAPE;
    cells *= p->dims[d];
  }
  if (cells * p->slice != p->total)
    return TIDSP_ERR_SHAPE;
  if (p->reduction < TIDSP_SCATTER_NONE || p->reduction > TIDSP_SCATTER_MIN)
    return TIDSP_ERR_PARAM;
  if (p->reduction != TIDSP_SCATTER_NONE &&
      (p->dtype < TIDSP_DTYPE_F32 || p->dtype > TIDSP_DTYPE_BOOL || dtype_bytes(p->dtype) != esz))
    return TIDSP_ERR_PARAM;
  for (t = 0; t < (int64_t)p->count * p->k; t++) {
    const int64_t v = indices[t], dim = p->dims[t % p->k];
    if (v < -dim || v >= dim)
      return TIDSP_ERR_PARAM;
  }
  if (y != data)
    memmove(y, data, (size_t)p->total * esz);
  for (t = 0; t < p->count; t++) {
    int64_t off = 0;
    for (d = 0; d < p->k; d++) {
      const int64_t v = indices[t * p->k + d];
      off = off * p->dims[d] + (v < 0 ? v + p->dims[d] : v);
    }
    off *= p->slice;
    if (p->reduction == TIDSP_SCATTER_NONE) {
      memcpy((char *)y + (size_t)off * esz, (const char *)updates + (size_t)t * (size_t)p->slice * esz,
             (size_t)p->slice * esz);
      continue;
    }
    for (e = 0; e < p->slice; e++)
      combine(p, y, off + e, updates, t * p->slice + e);
  }
  return TIDSP_OK;
}
