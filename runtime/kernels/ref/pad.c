/*
 * pad.c — Pad in constant, edge or reflect mode.
 *
 * Output index o of a dim maps to input index i = o − pad_begin; outside
 * [0, n) constant mode writes the value, edge mode clamps, reflect mode
 * mirrors about the end elements without repeating them (… c b | a b c |
 * b a …), repeatedly for pads longer than the dim, i.e. periodically with
 * period 2(n − 1). Negative pads crop.
 */
#include "ref_internal.h"

/* Input index for output index o of a dim, or −1 for the constant value. */
static int64_t map_index(int64_t o, int32_t begin, int32_t n, int32_t mode) {
  int64_t i = o - begin, period;
  if (i >= 0 && i < n)
    return i;
  switch (mode) {
  case TIDSP_PAD_EDGE:
    return i < 0 ? 0 : n - 1;
  case TIDSP_PAD_REFLECT:
    if (n == 1)
      return 0;
    period = 2 * ((int64_t)n - 1);
    i %= period;
    if (i < 0)
      i += period;
    return i < n ? i : period - i;
  default:
    return -1;
  }
}

/* count copies of the es-byte value at y. */
static void fill(uint8_t *y, const uint8_t *value, size_t es, int32_t count) {
  int32_t i;
  if (count <= 0)
    return;
  if (es == 1) {
    memset(y, value[0], (size_t)count);
    return;
  }
  for (i = 0; i < count; i++)
    memcpy(y + (size_t)i * es, value, es);
}

int32_t tidsp_pad(const tidsp_pad_params *p, const void *x, void *y) {
  int64_t in_stride[TIDSP_MAX_RANK];
  int32_t out_shape[TIDSP_MAX_RANK], idx[TIDSP_MAX_RANK] = {0};
  int32_t d, rank, inner, i, lo, hi, st;
  int64_t total_in, total_out = 1, rows = 1, r;
  const uint8_t *xb = (const uint8_t *)x;
  uint8_t *yb = (uint8_t *)y;
  size_t es;

  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  rank = p->rank;
  st = tidsp_ref_movement_check(rank, p->elem_size, p->in_shape, in_stride, &total_in);
  if (st != TIDSP_OK)
    return st;
  if (p->mode == TIDSP_PAD_CONSTANT && p->elem_size > (int32_t)sizeof(p->value))
    return TIDSP_ERR_PARAM;
  if (p->mode != TIDSP_PAD_CONSTANT && p->mode != TIDSP_PAD_EDGE &&
      p->mode != TIDSP_PAD_REFLECT)
    return TIDSP_ERR_PARAM;
  es = (size_t)p->elem_size;
  for (d = rank - 1; d >= 0; d--) {
    const int64_t out = (int64_t)p->pad_begin[d] + p->in_shape[d] + p->pad_end[d];
    if (out < 0 || out > INT32_MAX)
      return TIDSP_ERR_SHAPE;
    out_shape[d] = (int32_t)out;
    total_out *= out;
  }
  if (total_out == 0)
    return TIDSP_OK;
  /* Edge and reflect copy from the input: it must not be empty. */
  if (p->mode != TIDSP_PAD_CONSTANT && total_in == 0)
    return TIDSP_ERR_SHAPE;
  inner = rank > 0 ? out_shape[rank - 1] : 1;
  for (d = 0; d < rank - 1; d++)
    rows *= out_shape[d];

  for (r = 0; r < rows; r++) {
    uint8_t *yr = yb + (size_t)r * (size_t)inner * es;
    int64_t row_off = 0; /* input offset of the outer dims, −1: constant */
    for (d = 0; d < rank - 1; d++) {
      int64_t id = map_index(idx[d], p->pad_begin[d], p->in_shape[d], p->mode);
      if (id < 0) {
        row_off = -1;
        break;
      }
      row_off += id * in_stride[d];
    }
    /* The output columns [lo, hi) that read input columns in order are
     * one copy (MMALIB's zero-point padding runs here once per conv); in
     * constant mode the rest is a fill, else each element is mapped. */
    lo = hi = 0;
    if (rank > 0 && row_off >= 0) {
      const int64_t b = p->pad_begin[rank - 1], n = p->in_shape[rank - 1];
      lo = b < 0 ? 0 : (b > inner ? inner : (int32_t)b);
      hi = b + n < inner ? (int32_t)(b + n > lo ? b + n : lo) : inner;
      if (hi > lo)
        memcpy(yr + (size_t)lo * es, xb + (size_t)(row_off + lo - b) * es, (size_t)(hi - lo) * es);
    }
    if (p->mode == TIDSP_PAD_CONSTANT && rank > 0) {
      if (hi <= lo) {
        fill(yr, p->value, es, inner);
      } else {
        fill(yr, p->value, es, lo);
        fill(yr + (size_t)hi * es, p->value, es, inner - hi);
      }
    } else {
      for (i = 0; i < inner; i++) {
        int64_t id;
        if (i == lo && hi > lo) {
          i = hi - 1;
          continue;
        }
        id = rank > 0 ? map_index(i, p->pad_begin[rank - 1], p->in_shape[rank - 1], p->mode) : 0;
        if (row_off < 0 || id < 0)
          memcpy(yr + (size_t)i * es, p->value, es);
        else
          tidsp_ref_copy_elem(yr + (size_t)i * es, xb + (size_t)(row_off + id) * es,
                              p->elem_size);
      }
    }
    for (d = rank - 2; d >= 0; d--) {
      if (++idx[d] < out_shape[d])
        break;
      idx[d] = 0;
    }
  }
  return TIDSP_OK;
}
