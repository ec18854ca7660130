/*
 * eltwise_internal.h — what the fast host variants of the int8 binary
 * kernels (add_i8, mul_i8) share: when a call may take the fast path, and
 * the broadcast rearranged into long contiguous rows (not public; portable
 * C, no intrinsics).
 *
 * The fast path runs only where the reference would return TIDSP_OK with a
 * FLOAT requantization, or a Q31 one whose constants tidsp_host_q31_const_ok
 * accepts (below: then it is the FLOAT formula's bytes); everything else
 * (invalid parameters, strided rows, odd Q31 constants) goes to the __ref
 * function, which gives the same bytes or error.
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
static inline int tidsp_host_bc_coalesce(const tidsp_broadcast *bc, tidsp_broadcast *out) {
  int64_t shape[TIDSP_MAX_RANK], st[2][TIDSP_MAX_RANK]; /* the operands' strides */
  int32_t d, r;
  for (d = 0; d < bc->rank; d++) {
    if (bc->shape[d] == 0)
      return 0;
    shape[d] = bc->shape[d];
    st[0][d] = bc->a_stride[d];
    st[1][d] = bc->b_stride[d];
  }
  r = tidsp_ref_coalesce(bc->rank, shape, 2, st, INT32_MAX, 0);
  out->rank = r;
  for (d = 0; d < TIDSP_MAX_RANK; d++) { /* rank r, then dims of size 1 */
    out->shape[d] = d < r ? (int32_t)shape[d] : 1;
    out->a_stride[d] = d < r ? (int32_t)st[0][d] : 0;
    out->b_stride[d] = d < r ? (int32_t)st[1][d] : 0;
  }
  return (out->a_stride[r - 1] == 0 || out->a_stride[r - 1] == 1) &&
         (out->b_stride[r - 1] == 0 || out->b_stride[r - 1] == 1);
}

/* A constant of a Q31 QLinearAdd / QLinearMul (ra, rb, f; r) under which
 * the reference's Q31 form, the FLOAT formula in integers (softfloat.h:
 * every float32 operation exact, then rounded once to 24 bits, nearest
 * even), gives the FLOAT form's bytes: 0, or finite with
 * 2^−103 ≤ |c| < 2^100. Why: each float operation rounds as softfloat does
 * while its exact result is 0 or a normal float32 below 2^128. With
 * e = the smallest exponent of the nonzero constants (≥ −103), every
 * constant and every product of one with an integer is a multiple of
 * G = 2^(e−23) ≥ 2^−126, and so is every sum of them and every rounding
 * of such a value (below 2^(e+1) it is exact; above, a multiple of its ulp
 * ≥ G): a nonzero intermediate is at least 2^−126, normal. The largest is
 * below 255·2^100 + 255·2^100 + 2^100 < 2^110 (mul: 255²·2^100 + 255):
 * no overflow. The integer clamp after the rounding equals the float clamp
 * before it (integer bounds, rne nondecreasing). */
static inline int tidsp_host_q31_const_ok(float c) {
  const float m = fabsf(c);
  return c == 0.0f || (m >= 0x1p-103f && m < 0x1p100f); /* (NaN: not) */
}

/* True when a QLinearAdd / QLinearMul call (p: its params, either type)
 * takes the fast path: the reference kernel's checks (add_i8.c, mul_i8.c)
 * pass and the formula is FLOAT or Q31 (whose constants the plans check);
 * *rows then holds the coalesced broadcast. */
#define TIDSP_HOST_Q_BINARY_FAST_OK(p, a, b, y, rows)                                                                 \
  ((p) && ((p)->kind == TIDSP_REQUANT_FLOAT || (p)->kind == TIDSP_REQUANT_Q31) &&                                    \
   TIDSP_REF_Q_BINARY_BEGIN(&(tidsp_ref_bc_iter){0}, (p), (a), (b), (y)) == TIDSP_OK &&                              \
   tidsp_host_bc_coalesce(&(p)->bc, (rows)))

/* One QLinearAdd or QLinearMul call on the fast path: its coalesced rows
 * and the constants each ISA file broadcasts to vectors. Operand lanes are
 * float(x + a_add) and float(x + b_add): add_i8 takes the uint8-domain
 * values (add = domain_offset), mul_i8 the exact differences from the
 * zero points (add = −zp). Then
 *   add: v = fma(a, ra, fma(b, rb, f)), or fma(b, rb, fma(a, ra, f))
 *        when swapped (A folded first, as add_i8.c)
 *   mul: v = fl(fl(a·b)·ra) + f   (ra = r, f = the uint8 y_zp)
 * clamped to [lo, hi] (uint8 domain), rounded, minus off. */
typedef struct tidsp_host_bin_plan {
  tidsp_broadcast rows;
  float ra, rb, f, lo, hi;
  int32_t a_add, b_add, off;
  int swapped;
} tidsp_host_bin_plan;

static inline void tidsp_host_bin_plan_bounds(tidsp_host_bin_plan *k, int32_t y_min, int32_t y_max, int32_t off) {
  k->lo = (float)(y_min + off);
  k->hi = (float)(y_max + off);
  k->off = off;
}

/* 1 and *k filled when the call takes the fast path, 0 otherwise. */
static inline int tidsp_host_add_plan(tidsp_host_bin_plan *k, const tidsp_add_i8_params *p, const int8_t *a,
                                      const int8_t *b, const int8_t *y) {
  if (!TIDSP_HOST_Q_BINARY_FAST_OK(p, a, b, y, &k->rows))
    return 0;
  if (p->kind == TIDSP_REQUANT_Q31 &&
      !(tidsp_host_q31_const_ok(p->ra) && tidsp_host_q31_const_ok(p->rb) && tidsp_host_q31_const_ok(p->f)))
    return 0;
  k->swapped = tidsp_ref_add_a_per_span(&p->bc); /* the caller's, not the coalesced, broadcast */
  k->ra = p->ra;
  k->rb = p->rb;
  k->f = tidsp_ref_add_f(p, k->swapped);
  k->a_add = k->b_add = p->domain_offset;
  tidsp_host_bin_plan_bounds(k, p->y_min, p->y_max, p->domain_offset);
  return 1;
}

static inline int tidsp_host_mul_plan(tidsp_host_bin_plan *k, const tidsp_mul_i8_params *p, const int8_t *a,
                                      const int8_t *b, const int8_t *y) {
  if (!TIDSP_HOST_Q_BINARY_FAST_OK(p, a, b, y, &k->rows))
    return 0;
  if (p->kind == TIDSP_REQUANT_Q31 && !tidsp_host_q31_const_ok(p->r))
    return 0;
  k->swapped = 0;
  k->ra = p->r;
  k->rb = 0.0f;
  k->f = (float)(p->y_zp + p->domain_offset);
  k->a_add = -p->a_zp;
  k->b_add = -p->b_zp;
  tidsp_host_bin_plan_bounds(k, p->y_min, p->y_max, p->domain_offset);
  return 1;
}

#endif /* TIDSP_HOST_ELTWISE_INTERNAL_H */
