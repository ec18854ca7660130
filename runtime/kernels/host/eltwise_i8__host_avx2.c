/*
 * eltwise_i8__host_avx2.c — tidsp_add_i8 and tidsp_mul_i8 with AVX2 + FMA
 * (the host_avx2 row checks both).
 *
 * The same scheme as eltwise_i8__host_avx512.c, 8 lanes per ymm and 32
 * outputs per block: coalesced broadcast rows, each lane the reference's
 * float operations (add: two fused multiply-adds; mul: an exact product,
 * a multiply, an add), vmaxps/vminps clamps (a NaN becomes lo), vcvtps2dq
 * (half to even), and a saturating pack that is exact because the values
 * are already in range. A row's last partial block is run on copies in
 * small stack buffers, so it takes the very same instructions.
 */
#include "eltwise_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2,fma")))

enum { BLOCK = 32 };

/* float(x[i] + add) for 8 values. */
static inline TARGET __m256 load8_f(const int8_t *x, __m256i add) {
  const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)x));
  return _mm256_cvtepi32_ps(_mm256_add_epi32(v, add));
}

/* Clamp, round half to even, subtract off: 8 int32 results. */
static inline TARGET __m256i finish8(__m256 v, __m256 lo, __m256 hi,
                                     __m256i off) {
  v = _mm256_max_ps(v, lo); /* v > lo ? v : lo */
  v = _mm256_min_ps(v, hi); /* v < hi ? v : hi */
  return _mm256_sub_epi32(_mm256_cvtps_epi32(v), off);
}

/* Four vectors of 8 int32 in [−128, 127] → 32 int8 in order. */
static inline TARGET void store32(int8_t *y, __m256i r0, __m256i r1,
                                  __m256i r2, __m256i r3) {
  const __m256i w01 = _mm256_packs_epi32(r0, r1); /* per 128-bit lane */
  const __m256i w23 = _mm256_packs_epi32(r2, r3);
  const __m256i b = _mm256_packs_epi16(w01, w23);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  _mm256_storeu_si256((__m256i *)y, _mm256_permutevar8x32_epi32(b, order));
}

/* ---- add_i8 ----------------------------------------------------------------- */

typedef struct add_vec {
  __m256 ra, rb, f, lo, hi;
  __m256i off;
  int32_t off_i;
  int swapped;
} add_vec;

static inline TARGET __m256i add8(const add_vec *k, __m256 av, __m256 bv) {
  __m256 v;
  if (k->swapped)
    v = _mm256_fmadd_ps(bv, k->rb, _mm256_fmadd_ps(av, k->ra, k->f));
  else
    v = _mm256_fmadd_ps(av, k->ra, _mm256_fmadd_ps(bv, k->rb, k->f));
  return finish8(v, k->lo, k->hi, k->off);
}

/* The last m < BLOCK elements of a row's operands, zero-padded to a whole
 * block in ta / tb (add_row and mul_row run one more block on them and
 * keep m outputs); a constant operand (step 0) is not read. */
static void tail_operands(int8_t ta[BLOCK], const int8_t *a, int32_t sa, int8_t tb[BLOCK], const int8_t *b,
                          int32_t sb, int32_t m) {
  memset(ta, 0, BLOCK);
  memset(tb, 0, BLOCK);
  if (sa) memcpy(ta, a, (size_t)m);
  if (sb) memcpy(tb, b, (size_t)m);
}

/* 32 outputs; an operand with step 0 is the constant ac / bc. */
static inline TARGET void add32(const add_vec *k, const int8_t *a, int32_t sa,
                                __m256 ac, const int8_t *b, int32_t sb,
                                __m256 bc, int8_t *y) {
  __m256i r[4];
  int32_t q;
  for (q = 0; q < 4; q++)
    r[q] = add8(k, sa ? load8_f(a + 8 * q, k->off) : ac,
                sb ? load8_f(b + 8 * q, k->off) : bc);
  store32(y, r[0], r[1], r[2], r[3]);
}

static TARGET void add_row(const add_vec *k, const int8_t *a, int32_t sa,
                           const int8_t *b, int32_t sb, int8_t *y, int32_t n) {
  const __m256 ac = _mm256_set1_ps((float)(a[0] + k->off_i));
  const __m256 bc = _mm256_set1_ps((float)(b[0] + k->off_i));
  int8_t ta[BLOCK], tb[BLOCK], ty[BLOCK];
  int32_t i;
  for (i = 0; i + BLOCK <= n; i += BLOCK)
    add32(k, a + i, sa, ac, b + i, sb, bc, y + i);
  if (i < n) {
    tail_operands(ta, a + i, sa, tb, b + i, sb, n - i);
    add32(k, ta, sa, ac, tb, sb, bc, ty);
    memcpy(y + i, ty, (size_t)(n - i));
  }
}

static TARGET void add_fast(const tidsp_add_i8_params *p,
                            const tidsp_broadcast *rows, const int8_t *a,
                            const int8_t *b, int8_t *y) {
  tidsp_host_add_consts c;
  add_vec k;
  tidsp_ref_bc_iter it;
  int64_t r;
  tidsp_host_add_consts_init(&c, p);
  k.ra = _mm256_set1_ps(c.ra);
  k.rb = _mm256_set1_ps(c.rb);
  k.f = _mm256_set1_ps(c.f);
  k.lo = _mm256_set1_ps(c.lo);
  k.hi = _mm256_set1_ps(c.hi);
  k.off = _mm256_set1_epi32(c.off);
  k.off_i = c.off;
  k.swapped = c.swapped;
  tidsp_ref_bc_init(&it, rows);
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it))
    add_row(&k, a + it.a_off, it.a_step, b + it.b_off, it.b_step,
            y + (size_t)r * (size_t)it.inner, it.inner);
}

int32_t tidsp_add_i8__host_avx2(const tidsp_add_i8_params *p, const int8_t *a,
                                const int8_t *b, int8_t *y) {
  tidsp_broadcast rows;
  if (!tidsp_host_add_fast_ok(p, a, b, y, &rows))
    return tidsp_add_i8__ref(p, a, b, y);
  add_fast(p, &rows, a, b, y);
  return TIDSP_OK;
}

/* ---- mul_i8 ----------------------------------------------------------------- */

typedef struct mul_vec {
  __m256 r, zc, lo, hi;
  __m256i a_zp_neg, b_zp_neg, off;
  int32_t a_zp, b_zp;
} mul_vec;

/* da, db: float(a − a_zp), float(b − b_zp); their product is exact. */
static inline TARGET __m256i mul8(const mul_vec *k, __m256 da, __m256 db) {
  __m256 v = _mm256_mul_ps(da, db);
  v = _mm256_mul_ps(v, k->r);
  v = _mm256_add_ps(v, k->zc);
  return finish8(v, k->lo, k->hi, k->off);
}

static inline TARGET void mul32(const mul_vec *k, const int8_t *a, int32_t sa,
                                __m256 ac, const int8_t *b, int32_t sb,
                                __m256 bc, int8_t *y) {
  __m256i r[4];
  int32_t q;
  for (q = 0; q < 4; q++)
    r[q] = mul8(k, sa ? load8_f(a + 8 * q, k->a_zp_neg) : ac,
                sb ? load8_f(b + 8 * q, k->b_zp_neg) : bc);
  store32(y, r[0], r[1], r[2], r[3]);
}

static TARGET void mul_row(const mul_vec *k, const int8_t *a, int32_t sa,
                           const int8_t *b, int32_t sb, int8_t *y, int32_t n) {
  const __m256 ac = _mm256_set1_ps((float)(a[0] - k->a_zp));
  const __m256 bc = _mm256_set1_ps((float)(b[0] - k->b_zp));
  int8_t ta[BLOCK], tb[BLOCK], ty[BLOCK];
  int32_t i;
  for (i = 0; i + BLOCK <= n; i += BLOCK)
    mul32(k, a + i, sa, ac, b + i, sb, bc, y + i);
  if (i < n) {
    tail_operands(ta, a + i, sa, tb, b + i, sb, n - i);
    mul32(k, ta, sa, ac, tb, sb, bc, ty);
    memcpy(y + i, ty, (size_t)(n - i));
  }
}

static TARGET void mul_fast(const tidsp_mul_i8_params *p,
                            const tidsp_broadcast *rows, const int8_t *a,
                            const int8_t *b, int8_t *y) {
  mul_vec k;
  tidsp_ref_bc_iter it;
  int64_t r;
  k.r = _mm256_set1_ps(p->r);
  k.zc = _mm256_set1_ps((float)(p->y_zp + p->domain_offset));
  k.lo = _mm256_set1_ps((float)(p->y_min + p->domain_offset));
  k.hi = _mm256_set1_ps((float)(p->y_max + p->domain_offset));
  k.a_zp_neg = _mm256_set1_epi32(-p->a_zp);
  k.b_zp_neg = _mm256_set1_epi32(-p->b_zp);
  k.off = _mm256_set1_epi32(p->domain_offset);
  k.a_zp = p->a_zp;
  k.b_zp = p->b_zp;
  tidsp_ref_bc_init(&it, rows);
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it))
    mul_row(&k, a + it.a_off, it.a_step, b + it.b_off, it.b_step,
            y + (size_t)r * (size_t)it.inner, it.inner);
}

int32_t tidsp_mul_i8__host_avx2(const tidsp_mul_i8_params *p, const int8_t *a,
                                const int8_t *b, int8_t *y) {
  tidsp_broadcast rows;
  if (!tidsp_host_mul_fast_ok(p, a, b, y, &rows))
    return tidsp_mul_i8__ref(p, a, b, y);
  mul_fast(p, &rows, a, b, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
