/*
 * test_kernel_movement.c — transpose, slice, concat, pad and copy against
 * oracles that compute each output element's source by unravelling its
 * index. Element sizes 1, 2, 4, 8 and an odd 3; negative-step slices;
 * constant, edge and reflect pads (including pads longer than the dim and
 * negative pads); guard bytes around every output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 32
#define KT_SEED 0x853C49E6748FEA9Bull
#include "kernel_test_util.h"

static const int32_t elem_sizes[] = {1, 2, 3, 4, 8};

static uint8_t *random_bytes(size_t n) {
  uint8_t *b = malloc(n ? n : 1);
  size_t i;
  for (i = 0; i < n; i++)
    b[i] = (uint8_t)rnd();
  return b;
}

static int64_t prod(const int32_t *s, int32_t rank) {
  int64_t n = 1;
  int32_t d;
  for (d = 0; d < rank; d++)
    n *= s[d];
  return n;
}

/* Unravel a flat index over shape into idx. */
static void unravel(int64_t i, const int32_t *shape, int32_t rank, int32_t *idx) {
  int32_t d;
  for (d = rank - 1; d >= 0; d--) {
    idx[d] = (int32_t)(i % shape[d]);
    i /= shape[d];
  }
}

static int64_t ravel(const int32_t *idx, const int32_t *shape, int32_t rank) {
  int64_t off = 0;
  int32_t d;
  for (d = 0; d < rank; d++)
    off = off * shape[d] + idx[d];
  return off;
}

static void test_transpose(void) {
  int iter;
  for (iter = 0; iter < 200; iter++) {
    tidsp_transpose_params p;
    int32_t out_shape[TIDSP_MAX_RANK], oidx[TIDSP_MAX_RANK], iidx[TIDSP_MAX_RANK];
    int32_t d, es;
    int64_t n, i;
    uint8_t *x, *y;
    int bad = 0;
    memset(&p, 0, sizeof(p));
    p.rank = rnd_range(0, TIDSP_MAX_RANK);
    es = elem_sizes[rnd() % 5];
    p.elem_size = es;
    for (d = 0; d < p.rank; d++) {
      p.in_shape[d] = rnd_range(1, 4);
      p.perm[d] = d;
    }
    for (d = p.rank - 1; d > 0; d--) { /* Fisher–Yates */
      int32_t j = rnd_range(0, d), t = p.perm[d];
      p.perm[d] = p.perm[j];
      p.perm[j] = t;
    }
    for (d = 0; d < p.rank; d++)
      out_shape[d] = p.in_shape[p.perm[d]];
    n = prod(p.in_shape, p.rank);
    x = random_bytes((size_t)(n * es));
    y = guarded((size_t)(n * es));
    CHECK(tidsp_transpose(&p, x, y) == TIDSP_OK);
    for (i = 0; i < n && !bad; i++) {
      unravel(i, out_shape, p.rank, oidx);
      for (d = 0; d < p.rank; d++)
        iidx[p.perm[d]] = oidx[d];
      if (memcmp(y + i * es, x + ravel(iidx, p.in_shape, p.rank) * es, (size_t)es) != 0) {
        CHECK_MSG(0, "transpose rank %d es %d at %lld", (int)p.rank, (int)es, (long long)i);
        bad = 1;
      }
    }
    CHECK(guards_ok(y, (size_t)(n * es)));
    free(x);
    guarded_free(y);
  }
  {
    tidsp_transpose_params p;
    uint8_t v[4] = {0};
    memset(&p, 0, sizeof(p));
    p.rank = 2;
    p.in_shape[0] = p.in_shape[1] = 1;
    p.perm[0] = p.perm[1] = 0; /* not a permutation */
    p.elem_size = 1;
    CHECK(tidsp_transpose(&p, v, v + 2) == TIDSP_ERR_PARAM);
    p.perm[1] = 2;
    CHECK(tidsp_transpose(&p, v, v + 2) == TIDSP_ERR_PARAM);
    p.perm[1] = 1;
    p.elem_size = 0;
    CHECK(tidsp_transpose(&p, v, v + 2) == TIDSP_ERR_PARAM);
    p.elem_size = 1;
    CHECK(tidsp_transpose(&p, NULL, v) == TIDSP_ERR_NULL);
    CHECK(tidsp_transpose(&p, v, v + 2) == TIDSP_OK);
  }
}

static void test_slice(void) {
  int iter;
  for (iter = 0; iter < 300; iter++) {
    tidsp_slice_params p;
    int32_t oidx[TIDSP_MAX_RANK], iidx[TIDSP_MAX_RANK], d, es;
    int64_t n_in, n_out, i;
    uint8_t *x, *y;
    int bad = 0;
    memset(&p, 0, sizeof(p));
    p.rank = rnd_range(0, 4);
    es = elem_sizes[rnd() % 5];
    p.elem_size = es;
    for (d = 0; d < p.rank; d++) {
      int32_t n = rnd_range(1, 9), step = rnd_range(1, 3), start, count;
      if (rnd() & 1)
        step = -step;
      start = rnd_range(0, n - 1);
      /* as many steps as fit inside [0, n) */
      count = step > 0 ? (n - 1 - start) / step + 1 : start / -step + 1;
      p.in_shape[d] = n;
      p.start[d] = start;
      p.step[d] = step;
      p.out_shape[d] = rnd_range(1, count);
    }
    n_in = prod(p.in_shape, p.rank);
    n_out = prod(p.out_shape, p.rank);
    x = random_bytes((size_t)(n_in * es));
    y = guarded((size_t)(n_out * es));
    CHECK(tidsp_slice(&p, x, y) == TIDSP_OK);
    for (i = 0; i < n_out && !bad; i++) {
      unravel(i, p.out_shape, p.rank, oidx);
      for (d = 0; d < p.rank; d++)
        iidx[d] = p.start[d] + oidx[d] * p.step[d];
      if (memcmp(y + i * es, x + ravel(iidx, p.in_shape, p.rank) * es, (size_t)es) != 0) {
        CHECK_MSG(0, "slice rank %d at %lld", (int)p.rank, (long long)i);
        bad = 1;
      }
    }
    CHECK(guards_ok(y, (size_t)(n_out * es)));
    free(x);
    guarded_free(y);
  }
  { /* a reversal by hand, then reads outside the input are refused */
    tidsp_slice_params p;
    int32_t x[5] = {1, 2, 3, 4, 5}, y[5];
    memset(&p, 0, sizeof(p));
    p.rank = 1;
    p.in_shape[0] = 5;
    p.out_shape[0] = 5;
    p.start[0] = 4;
    p.step[0] = -1;
    p.elem_size = 4;
    CHECK(tidsp_slice(&p, x, y) == TIDSP_OK);
    CHECK(y[0] == 5 && y[2] == 3 && y[4] == 1);
    p.out_shape[0] = 6; /* would read x[−1] */
    CHECK(tidsp_slice(&p, x, y) == TIDSP_ERR_PARAM);
    p.out_shape[0] = 2;
    p.step[0] = 0;
    CHECK(tidsp_slice(&p, x, y) == TIDSP_ERR_PARAM);
    p.step[0] = 1;
    p.start[0] = 5;
    CHECK(tidsp_slice(&p, x, y) == TIDSP_ERR_PARAM);
    p.out_shape[0] = 0; /* empty output reads nothing */
    CHECK(tidsp_slice(&p, x, y) == TIDSP_OK);
  }
}

static void test_concat(void) {
  int iter;
  for (iter = 0; iter < 100; iter++) {
    enum { MAXN = 5 };
    tidsp_concat_params p;
    int32_t axis_len[MAXN], i, o;
    const void *xs[MAXN];
    uint8_t *xb[MAXN], *y;
    size_t row = 0, off;
    int bad = 0;
    p.n_inputs = rnd_range(1, MAXN);
    p.outer = rnd_range(0, 4);
    p.inner_bytes = rnd_range(1, 12);
    p.axis_len = axis_len;
    for (i = 0; i < p.n_inputs; i++) {
      axis_len[i] = rnd_range(0, 4);
      xb[i] = random_bytes((size_t)p.outer * axis_len[i] * p.inner_bytes);
      xs[i] = xb[i];
      row += (size_t)axis_len[i] * p.inner_bytes;
    }
    y = guarded(row * p.outer);
    CHECK(tidsp_concat(&p, xs, y) == TIDSP_OK);
    for (o = 0; o < p.outer && !bad; o++) {
      off = 0;
      for (i = 0; i < p.n_inputs; i++) {
        size_t len = (size_t)axis_len[i] * p.inner_bytes;
        if (memcmp(y + o * row + off, xb[i] + o * len, len) != 0)
          bad = 1;
        off += len;
      }
    }
    CHECK_MSG(!bad, "concat of %d inputs", (int)p.n_inputs);
    CHECK(guards_ok(y, row * p.outer));
    for (i = 0; i < p.n_inputs; i++)
      free(xb[i]);
    guarded_free(y);
  }
  {
    tidsp_concat_params p;
    int32_t len[2] = {1, -1};
    uint8_t a = 1, y[2];
    const void *xs[2] = {&a, &a};
    p.n_inputs = 2;
    p.outer = 1;
    p.inner_bytes = 1;
    p.axis_len = len;
    CHECK(tidsp_concat(&p, xs, y) == TIDSP_ERR_SHAPE);
    len[1] = 1;
    xs[1] = NULL;
    CHECK(tidsp_concat(&p, xs, y) == TIDSP_ERR_NULL);
    p.axis_len = NULL;
    CHECK(tidsp_concat(&p, xs, y) == TIDSP_ERR_NULL);
  }
}

/* Reflect by bouncing between the ends until inside (the kernel uses the
 * period 2(n − 1) instead). */
static int32_t reflect_bounce(int32_t i, int32_t n) {
  if (n == 1)
    return 0;
  while (i < 0 || i >= n) {
    if (i < 0)
      i = -i;
    if (i >= n)
      i = 2 * (n - 1) - i;
  }
  return i;
}

static void test_pad(void) {
  int iter;
  for (iter = 0; iter < 300; iter++) {
    tidsp_pad_params p;
    int32_t out_shape[TIDSP_MAX_RANK], oidx[TIDSP_MAX_RANK], iidx[TIDSP_MAX_RANK], d, es;
    int64_t n_in, n_out, i;
    uint8_t *x, *y;
    int bad = 0;
    memset(&p, 0, sizeof(p));
    p.rank = rnd_range(0, 4);
    p.mode = rnd_range(0, 2);
    es = elem_sizes[rnd() % 5];
    p.elem_size = es;
    for (i = 0; i < 8; i++)
      p.value[i] = (uint8_t)rnd();
    for (d = 0; d < p.rank; d++) {
      int32_t n = rnd_range(1, 6);
      p.in_shape[d] = n;
      p.pad_begin[d] = rnd_range(-(n - 1) / 2, 7); /* longer than the dim at times */
      p.pad_end[d] = rnd_range(-(n - 1) / 2, 7);
      out_shape[d] = p.pad_begin[d] + n + p.pad_end[d];
    }
    n_in = prod(p.in_shape, p.rank);
    n_out = prod(out_shape, p.rank);
    x = random_bytes((size_t)(n_in * es));
    y = guarded((size_t)(n_out * es));
    CHECK(tidsp_pad(&p, x, y) == TIDSP_OK);
    for (i = 0; i < n_out && !bad; i++) {
      int constant = 0;
      const uint8_t *want;
      unravel(i, out_shape, p.rank, oidx);
      for (d = 0; d < p.rank; d++) {
        int32_t k = oidx[d] - p.pad_begin[d], n = p.in_shape[d];
        if (k < 0 || k >= n) {
          if (p.mode == TIDSP_PAD_CONSTANT)
            constant = 1;
          else if (p.mode == TIDSP_PAD_EDGE)
            k = k < 0 ? 0 : n - 1;
          else
            k = reflect_bounce(k, n);
        }
        iidx[d] = k;
      }
      want = constant ? p.value : x + ravel(iidx, p.in_shape, p.rank) * es;
      if (memcmp(y + i * es, want, (size_t)es) != 0) {
        CHECK_MSG(0, "pad mode %d rank %d es %d at %lld", (int)p.mode, (int)p.rank, (int)es,
                  (long long)i);
        bad = 1;
      }
    }
    CHECK(guards_ok(y, (size_t)(n_out * es)));
    free(x);
    guarded_free(y);
  }
  { /* by hand: reflect [1 2 3] by 2 each side = 3 2 1 2 3 2 1 */
    tidsp_pad_params p;
    int16_t x[3] = {1, 2, 3}, y[7];
    memset(&p, 0, sizeof(p));
    p.rank = 1;
    p.in_shape[0] = 3;
    p.pad_begin[0] = 2;
    p.pad_end[0] = 2;
    p.elem_size = 2;
    p.mode = TIDSP_PAD_REFLECT;
    CHECK(tidsp_pad(&p, x, y) == TIDSP_OK);
    CHECK(y[0] == 3 && y[1] == 2 && y[2] == 1 && y[3] == 2 && y[4] == 3 && y[5] == 2 && y[6] == 1);
    p.mode = TIDSP_PAD_EDGE;
    CHECK(tidsp_pad(&p, x, y) == TIDSP_OK);
    CHECK(y[0] == 1 && y[1] == 1 && y[5] == 3 && y[6] == 3);
    p.mode = TIDSP_PAD_CONSTANT;
    p.value[0] = 0x34;
    p.value[1] = 0x12;
    CHECK(tidsp_pad(&p, x, y) == TIDSP_OK);
    CHECK(y[0] == 0x1234 && y[2] == 1 && y[6] == 0x1234);
    p.elem_size = 9; /* wider than value[] */
    CHECK(tidsp_pad(&p, x, y) == TIDSP_ERR_PARAM);
    p.elem_size = 2;
    p.mode = 3;
    CHECK(tidsp_pad(&p, x, y) == TIDSP_ERR_PARAM);
    p.mode = TIDSP_PAD_EDGE;
    p.pad_begin[0] = -6; /* negative output size */
    CHECK(tidsp_pad(&p, x, y) == TIDSP_ERR_SHAPE);
    p.pad_begin[0] = 1;
    p.in_shape[0] = 0; /* nothing to copy an edge from */
    CHECK(tidsp_pad(&p, x, y) == TIDSP_ERR_SHAPE);
  }
}

static void test_copy(void) {
  uint8_t b[64];
  int i;
  for (i = 0; i < 64; i++)
    b[i] = (uint8_t)i;
  CHECK(tidsp_copy(32, b, b + 8) == TIDSP_OK); /* overlapping */
  for (i = 0; i < 32; i++)
    CHECK(b[8 + i] == i);
  CHECK(tidsp_copy(0, NULL, NULL) == TIDSP_OK);
  CHECK(tidsp_copy(4, NULL, b) == TIDSP_ERR_NULL);
}

int main(void) {
  test_transpose();
  test_slice();
  test_concat();
  test_pad();
  test_copy();
  UNIT_MAIN_END();
}
