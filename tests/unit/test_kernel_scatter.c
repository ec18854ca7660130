/*
 * test_kernel_scatter.c — tidsp_scatter_nd against an oracle that, for
 * each output element, walks every index tuple in order and applies the
 * ones that land on it (the kernel walks tuples and writes slices). Random
 * shapes of rank 1–4, k = 1..rank, negative and repeated indices, every
 * dtype and reduction, in place; guard bytes; bad arguments.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 32
#define KT_SEED 0x2545F4914F6CDD1Dull
#include "kernel_test_util.h"

static const int32_t dtypes[] = {TIDSP_DTYPE_F32, TIDSP_DTYPE_I8,  TIDSP_DTYPE_U8,
                                 TIDSP_DTYPE_I16, TIDSP_DTYPE_U16, TIDSP_DTYPE_I32,
                                 TIDSP_DTYPE_I64, TIDSP_DTYPE_BOOL};

static int32_t dsize(int32_t dt) {
  return dt == TIDSP_DTYPE_I64 ? 8 : dt == TIDSP_DTYPE_F32 || dt == TIDSP_DTYPE_I32 ? 4
       : dt == TIDSP_DTYPE_I16 || dt == TIDSP_DTYPE_U16 ? 2 : 1;
}

/* element i as a double (every value of these dtypes is exact in double) */
static double get(const void *b, int32_t dt, int64_t i) {
  switch (dt) {
    case TIDSP_DTYPE_F32: return ((const float *)b)[i];
    case TIDSP_DTYPE_I8: return ((const int8_t *)b)[i];
    case TIDSP_DTYPE_I16: return ((const int16_t *)b)[i];
    case TIDSP_DTYPE_U16: return ((const uint16_t *)b)[i];
    case TIDSP_DTYPE_I32: return ((const int32_t *)b)[i];
    case TIDSP_DTYPE_I64: return (double)((const int64_t *)b)[i];
    default: return ((const uint8_t *)b)[i];
  }
}

/* w reduced modulo 2^bits into the dtype (two's complement) */
static void put_int(void *b, int32_t dt, int64_t i, int64_t w) {
  switch (dt) {
    case TIDSP_DTYPE_I8: ((int8_t *)b)[i] = (int8_t)(w & 0xFF); break;
    case TIDSP_DTYPE_I16: ((int16_t *)b)[i] = (int16_t)(w & 0xFFFF); break;
    case TIDSP_DTYPE_U16: ((uint16_t *)b)[i] = (uint16_t)(w & 0xFFFF); break;
    case TIDSP_DTYPE_I32: ((int32_t *)b)[i] = (int32_t)(w & 0xFFFFFFFF); break;
    case TIDSP_DTYPE_I64: ((int64_t *)b)[i] = w; break;
    default: ((uint8_t *)b)[i] = (uint8_t)(w & 0xFF); break;
  }
}

static void put(void *b, int32_t dt, int64_t i, double v) {
  if (dt == TIDSP_DTYPE_F32)
    ((float *)b)[i] = (float)v;
  else
    put_int(b, dt, i, (int64_t)v);
}

static void test_random(void) {
  int trial;
  for (trial = 0; trial < 600; trial++) {
    int32_t dt = dtypes[trial % 8], red = (trial / 8) % 5, esz = dsize(dt);
    int32_t rank = rnd_range(1, 4), k = rnd_range(1, rank), shape[4], d;
    int64_t total = 1, slice = 1, t, j, e;
    if (red != TIDSP_SCATTER_NONE && dt == TIDSP_DTYPE_BOOL)
      red = TIDSP_SCATTER_NONE;
    for (d = 0; d < rank; d++) {
      shape[d] = rnd_range(1, 4);
      total *= shape[d];
      if (d >= k)
        slice *= shape[d];
    }
    int32_t count = rnd_range(0, 6);
    tidsp_scatter_nd_params p;
    memset(&p, 0, sizeof p);
    p.k = k;
    for (d = 0; d < k; d++)
      p.dims[d] = shape[d];
    p.count = count;
    p.slice = (int32_t)slice;
    p.total = (int32_t)total;
    p.elem_size = esz;
    p.dtype = dt;
    p.reduction = red;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(count * k + 1));
    for (t = 0; t < (int64_t)count * k; t++) {
      int32_t dim = shape[t % k];
      idx[t] = rnd_range(-dim, dim - 1); /* negatives and repeats */
    }
    uint8_t *data = malloc((size_t)(total * esz)), *upd = malloc((size_t)(count * slice * esz + 1));
    for (j = 0; j < total; j++)
      put(data, dt, j, dt == TIDSP_DTYPE_F32 ? (double)rnd_range(-50, 50) / 8.0 : (double)rnd_range(-300, 300));
    for (j = 0; j < count * slice; j++)
      put(upd, dt, j, dt == TIDSP_DTYPE_F32 ? (double)rnd_range(-50, 50) / 8.0 : (double)rnd_range(-300, 300));
    if (dt == TIDSP_DTYPE_BOOL)
      for (j = 0; j < total; j++)
        data[j] &= 1;

    uint8_t *want = malloc((size_t)(total * esz)), *got = guarded((size_t)(total * esz));
    memcpy(want, data, (size_t)(total * esz));
    for (j = 0; j < total; j++) { /* output element j: its first-k coordinates */
      int64_t cell = j / slice, rest = j % slice;
      for (t = 0; t < count; t++) {
        int64_t c = 0;
        for (d = 0; d < k; d++) {
          int64_t v = idx[t * k + d];
          c = c * shape[d] + (v < 0 ? v + shape[d] : v);
        }
        if (c != cell)
          continue;
        e = t * slice + rest;
        if (red == TIDSP_SCATTER_NONE) {
          memcpy(want + j * esz, upd + e * esz, (size_t)esz);
        } else if (dt == TIDSP_DTYPE_F32) {
          float a = ((float *)want)[j], b = ((float *)upd)[e];
          ((float *)want)[j] = red == TIDSP_SCATTER_ADD ? a + b : red == TIDSP_SCATTER_MUL ? a * b
                             : red == TIDSP_SCATTER_MAX ? (a > b ? a : b) : (a < b ? a : b);
        } else { /* integers: exact in int64, wrapped */
          int64_t a = dt == TIDSP_DTYPE_I64 ? ((int64_t *)want)[j] : (int64_t)get(want, dt, j);
          int64_t b = dt == TIDSP_DTYPE_I64 ? ((int64_t *)upd)[e] : (int64_t)get(upd, dt, e);
          int64_t r = red == TIDSP_SCATTER_ADD ? (int64_t)((uint64_t)a + (uint64_t)b) : red == TIDSP_SCATTER_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                    : red == TIDSP_SCATTER_MAX ? (a > b ? a : b) : (a < b ? a : b);
          put_int(want, dt, j, r);
        }
      }
    }
    CHECK_MSG(tidsp_scatter_nd(&p, data, idx, upd, got) == TIDSP_OK, "trial %d", trial);
    CHECK_MSG(!memcmp(got, want, (size_t)(total * esz)), "trial %d dtype %d reduction %d", trial, dt, red);
    CHECK(guards_ok(got, (size_t)(total * esz)));
    /* in place */
    CHECK(tidsp_scatter_nd(&p, data, idx, upd, data) == TIDSP_OK);
    CHECK_MSG(!memcmp(data, want, (size_t)(total * esz)), "in place, trial %d", trial);
    free(idx), free(data), free(upd), free(want);
    guarded_free(got);
  }
}

static void test_errors(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, u[3] = {7, 8, 9}, y[6];
  int64_t bad[1] = {2}, neg[1] = {-3}, ok[1] = {-1};
  tidsp_scatter_nd_params p;
  memset(&p, 0, sizeof p);
  p.k = 1;
  p.dims[0] = 2;
  p.count = 1;
  p.slice = 3;
  p.total = 6;
  p.elem_size = 4;
  p.dtype = TIDSP_DTYPE_F32;
  memset(y, 0, sizeof y);
  CHECK(tidsp_scatter_nd(&p, x, bad, u, y) == TIDSP_ERR_PARAM);
  CHECK(tidsp_scatter_nd(&p, x, neg, u, y) == TIDSP_ERR_PARAM);
  CHECK(y[0] == 0.0f && y[5] == 0.0f); /* nothing written */
  CHECK(tidsp_scatter_nd(&p, x, ok, u, y) == TIDSP_OK);
  CHECK(y[0] == 1.0f && y[3] == 7.0f && y[5] == 9.0f);
  CHECK(tidsp_scatter_nd(NULL, x, ok, u, y) == TIDSP_ERR_NULL);
  CHECK(tidsp_scatter_nd(&p, x, NULL, u, y) == TIDSP_ERR_NULL);
  p.total = 5; /* dims × slice must be the data */
  CHECK(tidsp_scatter_nd(&p, x, ok, u, y) == TIDSP_ERR_SHAPE);
  p.total = 6;
  p.k = 0;
  CHECK(tidsp_scatter_nd(&p, x, ok, u, y) == TIDSP_ERR_SHAPE);
  p.k = 1;
  p.reduction = 5;
  CHECK(tidsp_scatter_nd(&p, x, ok, u, y) == TIDSP_ERR_PARAM);
  p.reduction = TIDSP_SCATTER_ADD;
  p.dtype = TIDSP_DTYPE_I16; /* a reduction's dtype must have elem_size bytes */
  CHECK(tidsp_scatter_nd(&p, x, ok, u, y) == TIDSP_ERR_PARAM);
  p.dtype = 0;
  CHECK(tidsp_scatter_nd(&p, x, ok, u, y) == TIDSP_ERR_PARAM);
  p.reduction = TIDSP_SCATTER_NONE; /* a copy needs no dtype */
  CHECK(tidsp_scatter_nd(&p, x, ok, u, y) == TIDSP_OK);
}

int main(void) {
  test_random();
  test_errors();
  UNIT_MAIN_END();
}
