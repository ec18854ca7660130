/*
 * reduce_mean_internal.h — what tidsp_reduce_mean_f32 and
 * tidsp_reduce_mean_dq_i8 share (not public): the dims merged as ONNX
 * Runtime merges them, and the mean of one contiguous block per output
 * (the R and KR patterns of reduce_mean_f32.c) in ORT's two orders.
 */
#ifndef TIDSP_REDUCE_MEAN_INTERNAL_H
#define TIDSP_REDUCE_MEAN_INTERNAL_H

#include "ort_float.h"

/* The dims of size > 1 with neighbours of the same kind (kept K, reduced
 * R) merged, and the element counts. */
typedef struct tidsp_ref_reduce_dims {
  int64_t grp[TIDSP_MAX_RANK];
  int grp_red[TIDSP_MAX_RANK];
  int32_t n_grp;
  int64_t n_in, n_out, count;
} tidsp_ref_reduce_dims;

/* TIDSP_OK, or TIDSP_ERR_SHAPE for a negative dim. */
static inline int32_t tidsp_ref_reduce_dims_of(const tidsp_reduce_params *p, tidsp_ref_reduce_dims *r) {
  int32_t d;
  r->n_grp = 0;
  r->n_in = r->n_out = r->count = 1;
  for (d = 0; d < p->rank; d++) {
    const int reduced = (p->reduce_mask >> d) & 1;
    const int64_t s = p->in_shape[d];
    if (s < 0)
      return TIDSP_ERR_SHAPE;
    r->n_in *= s;
    if (reduced)
      r->count *= s;
    else
      r->n_out *= s;
    if (s == 1)
      continue;
    if (r->n_grp > 0 && r->grp_red[r->n_grp - 1] == reduced) {
      r->grp[r->n_grp - 1] *= s;
    } else {
      r->grp[r->n_grp] = s;
      r->grp_red[r->n_grp] = reduced;
      r->n_grp++;
    }
  }
  return TIDSP_OK;
}

/* The checks and dims of a mean of x into y: TIDSP_OK with r filled, or
 * the status to return. *done: nothing left to compute (no element). */
static inline int32_t tidsp_ref_reduce_begin(const tidsp_reduce_params *p, const void *x, const void *y,
                                             tidsp_ref_reduce_dims *r, int *done) {
  int32_t st = tidsp_ref_reduce_check(p, x, y);
  *done = 1;
  if (st == TIDSP_OK)
    st = tidsp_ref_reduce_dims_of(p, r);
  if (st != TIDSP_OK)
    return st;
  if (r->n_in == 0)
    return r->n_out == 0 ? TIDSP_OK : TIDSP_ERR_SHAPE; /* a mean of nothing */
  *done = 0;
  return TIDSP_OK;
}

/* R or KR: each output's reduced elements are one contiguous block. */
static inline int tidsp_ref_reduce_is_blocks(const tidsp_ref_reduce_dims *r) {
  return r->n_grp > 0 && r->grp_red[r->n_grp - 1] && (r->n_grp == 1 || (r->n_grp == 2 && !r->grp_red[0]));
}

/* y[i] = the mean of block i (count values) of the floats at x, or, when
 * `what` is TIDSP_ORT_DQ_TABLE, of dq[q[j] + 128] for the int8 codes at q
 * (dq: the floats tidsp_dequantize writes, as if into a 64-byte-aligned
 * tensor). */
static inline void tidsp_ref_mean_blocks(const float *x, const int8_t *q, const float *dq,
                                         const tidsp_ref_reduce_dims *r, int channels_last_order, int what,
                                         float *y) {
  const int64_t n_out = r->n_out, count = r->count;
  const float div = (float)count;
  int64_t i, k;
#define V(j) (what == TIDSP_ORT_DQ_TABLE ? dq[q[j] + 128] : x[j])
  if (channels_last_order) {
    /* ORT's sequential sums, eight outputs side by side: each keeps its
     * own order (from 0, element 0, 1, …), and the independent chains
     * overlap instead of each add waiting on the one before (four were
     * 2.5–3.8× one on MobileNetV3's SE means; eight named accumulators,
     * which gcc -O2 keeps in two vector registers, 1.2–1.45× four on
     * those shapes, AMD EPYC: bench/reduce_mean_bench.c; eight or sixteen
     * in an array were slower, the accumulators left for memory). */
    for (i = 0; i + 8 <= n_out; i += 8) {
      const int64_t o0 = i * count;
      float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f, a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
      for (k = 0; k < count; k++) {
        a0 += V(o0 + k);
        a1 += V(o0 + count + k);
        a2 += V(o0 + 2 * count + k);
        a3 += V(o0 + 3 * count + k);
        a4 += V(o0 + 4 * count + k);
        a5 += V(o0 + 5 * count + k);
        a6 += V(o0 + 6 * count + k);
        a7 += V(o0 + 7 * count + k);
      }
      y[i] = a0 / div;
      y[i + 1] = a1 / div;
      y[i + 2] = a2 / div;
      y[i + 3] = a3 / div;
      y[i + 4] = a4 / div;
      y[i + 5] = a5 / div;
      y[i + 6] = a6 / div;
      y[i + 7] = a7 / div;
    }
    for (; i < n_out; i++) {
      float a = 0.0f;
      for (k = 0; k < count; k++)
        a += V(i * count + k);
      y[i] = a / div;
    }
    return;
  }
#undef V
  for (i = 0; i < n_out; i++)
    y[i] = what == TIDSP_ORT_DQ_TABLE
               ? tidsp_ort_eigen_redux_at(NULL, q + i * count, dq, count, tidsp_ort_head_at(i * count), what) / div
               : tidsp_ort_eigen_sum(x + i * count, count) / div;
}

#endif
