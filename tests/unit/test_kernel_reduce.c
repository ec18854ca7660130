/*
 * test_kernel_reduce.c — reduce_mean_f32 and softmax_f32 against double
 * oracles that gather each output's elements by unravelling indices;
 * reduce_mean_dq_i8 (its table: dequantize of the 256 codes) against
 * dequantize + reduce_mean_f32 on a 64-byte-aligned float tensor, bit for
 * bit.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 32
#define KT_SEED 0x94D049BB133111EBull
#include "kernel_test_util.h"

static void test_reduce_mean(void) {
  int iter;
  for (iter = 0; iter < 200; iter++) {
    tidsp_reduce_params p;
    int32_t out_shape[TIDSP_MAX_RANK], idx[TIDSP_MAX_RANK], d;
    int64_t n_in = 1, n_out = 1, count = 1, i, o;
    float *x, *y;
    double *sum;
    int bad = 0;
    memset(&p, 0, sizeof(p));
    p.rank = rnd_range(0, 5);
    p.reduce_mask = p.rank ? (int32_t)(rnd() % (1u << p.rank)) : 0;
    for (d = 0; d < p.rank; d++) {
      p.in_shape[d] = rnd_range(1, 5);
      out_shape[d] = (p.reduce_mask >> d) & 1 ? 1 : p.in_shape[d];
      n_in *= p.in_shape[d];
      n_out *= out_shape[d];
      if ((p.reduce_mask >> d) & 1)
        count *= p.in_shape[d];
    }
    x = malloc(sizeof(float) * (size_t)n_in);
    y = guarded(sizeof(float) * (size_t)n_out);
    sum = calloc((size_t)n_out, sizeof(double));
    for (i = 0; i < n_in; i++)
      x[i] = rnd_unit() * 2.0f - 1.0f;
    CHECK(tidsp_reduce_mean_f32(&p, x, y) == TIDSP_OK);
    for (i = 0; i < n_in; i++) {
      int64_t r = i;
      for (d = p.rank - 1; d >= 0; d--) {
        idx[d] = (int32_t)(r % p.in_shape[d]);
        r /= p.in_shape[d];
      }
      o = 0;
      for (d = 0; d < p.rank; d++)
        o = o * out_shape[d] + ((p.reduce_mask >> d) & 1 ? 0 : idx[d]);
      sum[o] += x[i];
    }
    for (o = 0; o < n_out; o++)
      if (fabs(sum[o] / count - y[o]) > 1e-6)
        bad = 1;
    CHECK_MSG(!bad, "reduce_mean rank %d mask %d", (int)p.rank, (int)p.reduce_mask);
    CHECK(guards_ok(y, sizeof(float) * (size_t)n_out));
    free(x);
    free(sum);
    guarded_free(y);
  }
  {
    tidsp_reduce_params p;
    float v = 1.0f;
    memset(&p, 0, sizeof(p));
    p.rank = 2;
    p.in_shape[0] = p.in_shape[1] = 1;
    p.reduce_mask = 4; /* dim 2 does not exist */
    CHECK(tidsp_reduce_mean_f32(&p, &v, &v) == TIDSP_ERR_PARAM);
    p.rank = 7;
    CHECK(tidsp_reduce_mean_f32(&p, &v, &v) == TIDSP_ERR_SHAPE);
  }
}

static void test_softmax(void) {
  int iter;
  for (iter = 0; iter < 100; iter++) {
    tidsp_softmax_params p;
    size_t n;
    float *x, *y;
    int32_t o, i, k, bad = 0;
    p.outer = rnd_range(1, 4);
    p.axis_len = rnd_range(1, 12);
    p.inner = rnd_range(1, 5);
    n = (size_t)p.outer * p.axis_len * p.inner;
    x = malloc(n * sizeof(float));
    y = guarded(n * sizeof(float));
    for (i = 0; i < (int32_t)n; i++)
      x[i] = (rnd_unit() - 0.5f) * (iter % 10 == 0 ? 200.0f : 8.0f); /* large: needs the max shift */
    CHECK(tidsp_softmax_f32(&p, x, y) == TIDSP_OK);
    for (o = 0; o < p.outer; o++)
      for (i = 0; i < p.inner; i++) {
        double m = -1e300, s = 0;
        for (k = 0; k < p.axis_len; k++)
          m = fmax(m, x[((size_t)o * p.axis_len + k) * p.inner + i]);
        for (k = 0; k < p.axis_len; k++)
          s += exp(x[((size_t)o * p.axis_len + k) * p.inner + i] - m);
        for (k = 0; k < p.axis_len; k++) {
          size_t at = ((size_t)o * p.axis_len + k) * p.inner + i;
          if (fabs(exp(x[at] - m) / s - y[at]) > 1e-6)
            bad = 1;
        }
      }
    CHECK_MSG(!bad, "softmax %dx%dx%d", (int)p.outer, (int)p.axis_len, (int)p.inner);
    CHECK(guards_ok(y, n * sizeof(float)));
    { /* in place gives the same */
      float *z = malloc(n * sizeof(float));
      memcpy(z, x, n * sizeof(float));
      CHECK(tidsp_softmax_f32(&p, z, z) == TIDSP_OK);
      CHECK(memcmp(z, y, n * sizeof(float)) == 0);
      free(z);
    }
    free(x);
    guarded_free(y);
  }
  {
    tidsp_softmax_params p = {1, 0, 1};
    float v = 0.0f;
    CHECK(tidsp_softmax_f32(&p, &v, &v) == TIDSP_ERR_SHAPE);
    CHECK(tidsp_softmax_f32(NULL, &v, &v) == TIDSP_ERR_NULL);
  }
}

/* channels_last_order (ORT moved the tensor to NHWC: a sequential sum per
 * channel over (h, w), from 0): the same bits as that sum written out, for
 * channel counts around the kernel's batches of 4 and planes from 1 to 784,
 * with values of mixed magnitudes whose sum depends on its order. */
static void test_reduce_mean_channels_last(void) {
  static const int32_t chans[] = {1, 3, 4, 5, 15, 16, 17, 33, 240};
  static const int32_t planes[][2] = {{1, 1}, {1, 7}, {7, 7}, {14, 14}, {28, 28}, {3, 5}};
  size_t ci, pi;
  for (ci = 0; ci < sizeof chans / sizeof chans[0]; ci++)
    for (pi = 0; pi < sizeof planes / sizeof planes[0]; pi++) {
      tidsp_reduce_params p;
      const int64_t c = chans[ci], hw = (int64_t)planes[pi][0] * planes[pi][1];
      float *x = malloc(sizeof(float) * (size_t)(c * hw)), *y = malloc(sizeof(float) * (size_t)c);
      int64_t i, k;
      int bad = 0;
      memset(&p, 0, sizeof(p));
      p.rank = 4;
      p.in_shape[0] = 1;
      p.in_shape[1] = (int32_t)c;
      p.in_shape[2] = planes[pi][0];
      p.in_shape[3] = planes[pi][1];
      p.reduce_mask = 12;
      p.channels_last_order = 1;
      for (i = 0; i < c * hw; i++)
        x[i] = (rnd_unit() - 0.5f) * (rnd() % 3 == 0 ? 1000.0f : 0.01f);
      CHECK(tidsp_reduce_mean_f32(&p, x, y) == TIDSP_OK);
      for (k = 0; k < c && !bad; k++) {
        float sum = 0.0f, want;
        for (i = 0; i < hw; i++)
          sum += x[k * hw + i];
        want = sum / (float)hw;
        bad = memcmp(&want, &y[k], sizeof want) != 0;
      }
      CHECK_MSG(!bad, "reduce_mean channels_last c %d hw %d: not the sequential sum", (int)c, (int)hw);
      free(x);
      free(y);
    }
}

/* reduce_mean_dq_i8(x) equals reduce_mean_f32(dequantize(x)) with the
 * float tensor 64-byte aligned (the arena's alignment: Eigen's order
 * depends on it), in both orders, over shapes whose blocks start at every
 * offset modulo 4; a pattern that is not one block per output (RK) and a
 * missing scale are refused. */
static void test_reduce_mean_dq_i8(void) {
  static const int32_t shapes[][4] = {{1, 5, 7, 7},  {1, 3, 1, 13}, {2, 4, 3, 5}, {1, 1, 9, 9},
                                      {1, 17, 2, 3}, {1, 6, 14, 14}, {3, 1, 1, 1}, {1, 2, 1, 1}};
  static const int32_t masks[] = {12, 12, 12, 12, 8, 12, 8, 12};
  static const float scales[] = {0.0123f, 0.37f, 1.0f / 3.0f};
  static const int32_t zps[] = {0, -17, 101};
  size_t si, q;
  int order;
  for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (q = 0; q < 3; q++)
      for (order = 0; order < 2; order++) {
        tidsp_reduce_params p;
        tidsp_qdq_params dq;
        int64_t n = 1, n_out = 1, i;
        int d;
        memset(&p, 0, sizeof p);
        p.rank = 4;
        p.reduce_mask = masks[si];
        p.channels_last_order = order;
        for (d = 0; d < 4; d++) {
          p.in_shape[d] = shapes[si][d];
          n *= shapes[si][d];
          if (!((masks[si] >> d) & 1))
            n_out *= shapes[si][d];
        }
        int8_t *x = malloc((size_t)n);
        float *xf = aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
        float *want = malloc(sizeof(float) * (size_t)n_out), *got = malloc(sizeof(float) * (size_t)n_out);
        for (i = 0; i < n; i++)
          x[i] = (int8_t)(rnd() & 0xff);
        dq.outer = (int32_t)n;
        dq.channels = 1;
        dq.inner = 1;
        dq.dtype = TIDSP_DTYPE_I8;
        CHECK(tidsp_dequantize(&dq, &scales[q], &zps[q], x, xf) == TIDSP_OK);
        CHECK(tidsp_reduce_mean_f32(&p, xf, want) == TIDSP_OK);
        int8_t codes[256];
        float table[256];
        tidsp_qdq_params tq = {256, 1, 1, TIDSP_DTYPE_I8};
        for (i = 0; i < 256; i++)
          codes[i] = (int8_t)(i - 128);
        CHECK(tidsp_dequantize(&tq, &scales[q], &zps[q], codes, table) == TIDSP_OK);
        CHECK(tidsp_reduce_mean_dq_i8(&p, table, x, got) == TIDSP_OK);
        CHECK_MSG(!memcmp(want, got, sizeof(float) * (size_t)n_out),
                  "reduce_mean_dq_i8 [%d %d %d %d] mask %d order %d: not dequantize + reduce_mean_f32",
                  (int)shapes[si][0], (int)shapes[si][1], (int)shapes[si][2], (int)shapes[si][3], (int)masks[si],
                  order);
        free(x);
        free(xf);
        free(want);
        free(got);
      }
  {
    tidsp_reduce_params p;
    int8_t x[24] = {0};
    float y[24], table[256];
    for (int i = 0; i < 256; i++)
      table[i] = 0.5f * (float)(i - 128);
    memset(&p, 0, sizeof p);
    p.rank = 3;
    p.in_shape[0] = 2;
    p.in_shape[1] = 3;
    p.in_shape[2] = 4;
    p.reduce_mask = 1; /* RK: the reduced dim before the kept ones */
    CHECK(tidsp_reduce_mean_dq_i8(&p, table, x, y) == TIDSP_ERR_PARAM);
    p.reduce_mask = 4;
    CHECK(tidsp_reduce_mean_dq_i8(&p, NULL, x, y) == TIDSP_ERR_NULL);
    p.rank = 0; /* a scalar */
    CHECK(tidsp_reduce_mean_dq_i8(&p, table, x, y) == TIDSP_ERR_PARAM);
    p.rank = 3;
    CHECK(tidsp_reduce_mean_dq_i8(&p, table, x, y) == TIDSP_OK);
  }
}

int main(void) {
  test_reduce_mean_dq_i8();
  test_reduce_mean();
  test_reduce_mean_channels_last();
  test_softmax();
  UNIT_MAIN_END();
}
