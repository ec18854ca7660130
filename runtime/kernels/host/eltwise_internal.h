/*
 * eltwise_internal.h — what the fast host variants of the int8 binary
 * kernels (add_i8, mul_i8) share: when a call may take the fast path, and
 * the broadcast rearranged into long contiguous rows (not public; portable
 * C, no intrinsics).
 *
 * The fast path runs only where the reference would return TIDSP_OK with a
 * FLOAT requantization; everything else (Q31, invalid parameters, strided
 * rows) goes to the __ref function, which gives the same bytes or error.
 */
#ifndef TIDSP_HOST_ELTWISE_INTERNAL_H
#define TIDSP_HOST_ELTWISE_INTERNAL_H

#include "../kernel_variants.h"
#include "../ref/ref_internal.h"

/* Rewrites the broadcast bc (valid: rank in [0, 6], shapes ≥ 0) into out,
 * which walks the same output elements in the same order with the same
 * operand offsets, in as few dimensions as possible: dims of size 1 are
 * dropped and a dim is merged into the next inner one when, for both
 * operands, stepping it equals stepping the inner one shape times (this
 * also merges dims along which an operand is broadcast throughout).
 * out->rank ≥ 1. Returns 1 when the rows of out are contiguous or constant
 * in both operands (innermost strides 0 or 1), the shapes the fast row
 * loops handle, and the output is not empty. */
static inline int tidsp_host_bc_coalesce(const tidsp_broadcast *bc,
                                         tidsp_broadcast *out) {
  int32_t d, r = 0, i;
  tidsp_broadcast t; /* innermost first while building */
  for (d = 0; d < bc->rank; d++) {
    if (bc->shape[d] == 0)
      return 0;
  }
  for (d = bc->rank - 1; d >= 0; d--) {
    const int32_t n = bc->shape[d];
    if (n == 1)
      continue;
    if (r > 0 &&
        (int64_t)t.a_stride[r - 1] * t.shape[r - 1] == bc->a_stride[d] &&
        (int64_t)t.b_stride[r - 1] * t.shape[r - 1] == bc->b_stride[d] &&
        (int64_t)t.shape[r - 1] * n <= INT32_MAX) {
      t.shape[r - 1] *= n;
      continue;
    }
    t.shape[r] = n;
    t.a_stride[r] = bc->a_stride[d];
    t.b_stride[r] = bc->b_stride[d];
    r++;
  }
  if (r == 0) { /* a single element */
    t.shape[0] = 1;
    t.a_stride[0] = 0;
    t.b_stride[0] = 0;
    r = 1;
  }
  out->rank = r;
  for (i = 0; i < r; i++) {
    out->shape[i] = t.shape[r - 1 - i];
    out->a_stride[i] = t.a_stride[r - 1 - i];
    out->b_stride[i] = t.b_stride[r - 1 - i];
  }
  for (i = r; i < TIDSP_MAX_RANK; i++) {
    out->shape[i] = 1;
    out->a_stride[i] = 0;
    out->b_stride[i] = 0;
  }
  return (out->a_stride[r - 1] == 0 || out->a_stride[r - 1] == 1) &&
         (out->b_stride[r - 1] == 0 || out->b_stride[r - 1] == 1);
}

/* The float constants of one QLinearAdd call, as add_i8.c computes them. */
typedef struct tidsp_host_add_consts {
  int swapped; /* fold A first: v = fma(b, rb, fma(a, ra, f)) */
  float ra, rb, f;
  int32_t off; /* domain_offset */
} tidsp_host_add_consts;

static inline void tidsp_host_add_consts_init(tidsp_host_add_consts *k,
                                              const tidsp_add_i8_params *p) {
  const float za = (float)(p->a_zp + p->domain_offset);
  const float zb = (float)(p->b_zp + p->domain_offset);
  const float zc = (float)(p->y_zp + p->domain_offset);
  k->swapped = tidsp_ref_add_a_per_span(&p->bc); /* the caller's, not the coalesced, broadcast */
  k->ra = p->ra;
  k->rb = p->rb;
  k->f = k->swapped ? zc - fmaf(p->rb, zb, p->ra * za) : p->f;
  k->off = p->domain_offset;
}

/* True when a QLinearAdd / QLinearMul call takes the fast path: the
 * reference kernel's checks (add_i8.c, mul_i8.c) pass and the formula is
 * FLOAT; *rows then holds the coalesced broadcast. */
static inline int tidsp_host_q_binary_fast_ok(const tidsp_broadcast *bc, int32_t kind, int32_t a_zp, int32_t b_zp,
                                              int32_t y_min, int32_t y_max, int32_t y_zp, int32_t domain_offset,
                                              const int8_t *a, const int8_t *b, const int8_t *y,
                                              tidsp_broadcast *rows) {
  tidsp_ref_bc_iter it;
  return tidsp_ref_binary_begin(&it, bc, a, b, y) == TIDSP_OK && kind == TIDSP_REQUANT_FLOAT &&
         tidsp_ref_q_binary_ok(kind, a_zp, b_zp, y_min, y_max, y_zp, domain_offset) &&
         tidsp_host_bc_coalesce(bc, rows);
}

static inline int tidsp_host_add_fast_ok(const tidsp_add_i8_params *p, const int8_t *a, const int8_t *b,
                                         const int8_t *y, tidsp_broadcast *rows) {
  return p && tidsp_host_q_binary_fast_ok(&p->bc, p->kind, p->a_zp, p->b_zp, p->y_min, p->y_max, p->y_zp,
                                          p->domain_offset, a, b, y, rows);
}

static inline int tidsp_host_mul_fast_ok(const tidsp_mul_i8_params *p, const int8_t *a, const int8_t *b,
                                         const int8_t *y, tidsp_broadcast *rows) {
  return p && tidsp_host_q_binary_fast_ok(&p->bc, p->kind, p->a_zp, p->b_zp, p->y_min, p->y_max, p->y_zp,
                                          p->domain_offset, a, b, y, rows);
}

#endif /* TIDSP_HOST_ELTWISE_INTERNAL_H */
