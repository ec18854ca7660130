/*
 * test_kernel_gather_nd.c — tidsp_gather_nd against an oracle that
 * unravels each tuple (random shapes, batches, negative indices), and its
 * refusals: a bad index or shape returns an error and writes nothing.
 * Also tidsp_reduce_l2_f32's edge paths (ORT parity is test_reduce_l2.py).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

static uint64_t state = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (uint32_t)(state >> 32);
}
static int32_t rnd_range(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }

static void test_gather_nd_random(void) {
  for (int iter = 0; iter < 300; iter++) {
    tidsp_gather_nd_params p;
    memset(&p, 0, sizeof p);
    p.k = rnd_range(1, 3);
    int64_t cells = 1;
    for (int d = 0; d < p.k; d++) cells *= (p.dims[d] = rnd_range(1, 4));
    p.batches = rnd_range(1, 3);
    p.count = rnd_range(0, 5);
    p.slice_bytes = rnd_range(0, 3) * 4;
    size_t data_n = (size_t)(p.batches * cells * p.slice_bytes), y_n = (size_t)(p.batches * p.count * p.slice_bytes);
    unsigned char *data = malloc(data_n + 1), *y = malloc(y_n + 1), *want = malloc(y_n + 1);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(p.batches * p.count * p.k + 1));
    for (size_t i = 0; i < data_n; i++) data[i] = (unsigned char)rnd();
    for (int64_t t = 0; t < (int64_t)p.batches * p.count; t++) {
      int64_t off = 0;
      for (int d = 0; d < p.k; d++) {
        int64_t v = rnd_range(0, p.dims[d] - 1);
        off = off * p.dims[d] + v;
        idx[t * p.k + d] = (rnd() & 1) ? v - p.dims[d] : v; /* negative counts from the end */
      }
      int64_t b = t / (p.count ? p.count : 1);
      memcpy(want + t * p.slice_bytes, data + (b * cells + off) * p.slice_bytes, (size_t)p.slice_bytes);
    }
    CHECK(tidsp_gather_nd(&p, data, idx, y) == TIDSP_OK);
    CHECK(memcmp(y, want, y_n) == 0);
    free(data), free(y), free(want), free(idx);
  }
}

static void test_gather_nd_refusals(void) {
  tidsp_gather_nd_params p;
  memset(&p, 0, sizeof p);
  p.k = 2, p.dims[0] = 2, p.dims[1] = 3, p.batches = 1, p.count = 2, p.slice_bytes = 4;
  float data[6] = {0, 1, 2, 3, 4, 5}, y[2] = {-1, -1};
  int64_t bad[4] = {1, 2, 0, 3}; /* the second tuple's 3 is outside [-3, 3) */
  CHECK(tidsp_gather_nd(&p, data, bad, y) == TIDSP_ERR_PARAM);
  CHECK(y[0] == -1 && y[1] == -1); /* nothing written */
  int64_t neg[4] = {-3, 0, 0, -4};
  CHECK(tidsp_gather_nd(&p, data, neg, y) == TIDSP_ERR_PARAM);
  CHECK(tidsp_gather_nd(NULL, data, neg, y) == TIDSP_ERR_NULL);
  p.dims[1] = 0;
  CHECK(tidsp_gather_nd(&p, data, neg, y) == TIDSP_ERR_SHAPE);
  p.dims[1] = 3, p.k = 0;
  CHECK(tidsp_gather_nd(&p, data, neg, y) == TIDSP_ERR_SHAPE);
}

static void test_reduce_l2_edges(void) {
  tidsp_reduce_params p;
  memset(&p, 0, sizeof p);
  float x[4] = {3, -4, 1e-30f, -2}, y[4];
  p.rank = 2, p.in_shape[0] = 2, p.in_shape[1] = 2, p.reduce_mask = 2;
  CHECK(tidsp_reduce_l2_f32(&p, x, y) == TIDSP_OK);
  CHECK(y[0] == 5.0f && y[1] == 2.0f); /* sqrt(1e-60 underflowed to 0 + 4) */
  p.reduce_mask = 0;                   /* ORT's noop_with_empty_axes: sqrt(x·x) per element */
  CHECK(tidsp_reduce_l2_f32(&p, x, y) == TIDSP_OK);
  CHECK(y[0] == 3.0f && y[1] == 4.0f && y[2] == 0.0f && y[3] == 2.0f);
  p.reduce_mask = 3; /* all to one output: Eigen's order */
  CHECK(tidsp_reduce_l2_f32(&p, x, y) == TIDSP_OK);
  CHECK(fabsf(y[0] - sqrtf(29.0f)) <= 1e-6f);
  p.in_shape[0] = 0; /* empty: the norm of nothing is 0 */
  p.reduce_mask = 2;
  CHECK(tidsp_reduce_l2_f32(&p, x, y) == TIDSP_OK);
  p.reduce_mask = 4;
  CHECK(tidsp_reduce_l2_f32(&p, x, y) == TIDSP_ERR_PARAM);
  CHECK(tidsp_reduce_l2_f32(NULL, x, y) == TIDSP_ERR_NULL);
}

int main(void) {
  test_gather_nd_random();
  test_gather_nd_refusals();
  test_reduce_l2_edges();
  UNIT_MAIN_END();
}
