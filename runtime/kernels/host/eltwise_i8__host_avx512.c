/*
 * eltwise_i8__host_avx512.c — tidsp_add_i8, tidsp_mul_i8 and tidsp_lut_i8
 * with AVX-512 (F + BW; the table lookup also needs VBMI).
 *
 * add / mul: the broadcast is first coalesced into rows along which each
 * operand is contiguous or constant (eltwise_internal.h), then 16 outputs
 * are computed per zmm with exactly the reference's float operations, one
 * lane per element:
 *   add: v = fma(a, ra, fma(b, rb, f))  (or A folded first when ORT swaps)
 *   mul: v = fl(fl(float(da·db)·r) + zc)   (da·db is exact in float:
 *        |(a − a_zp)(b − b_zp)| ≤ 255² < 2^24, so float(da)·float(db)
 *        equals float(prod))
 * then v = max(v, lo), v = min(v, hi) (maxps/minps return the second
 * operand for a NaN, as the reference's `v > lo ? v : lo`), vcvtps2dq
 * (round half to even in the default MXCSR mode, as lrintf) and the domain
 * offset subtracted. Contraction of the separate multiply and add of mul is
 * switched off by ref_internal.h's pragma, and the tests compare bytes.
 *
 * lut: y = lut[x + 128]. x + 128 differs from x only in bit 7, so the low
 * 7 bits of x index a 128-entry half of the table with vpermi2b (two zmm of
 * 64 entries), and x's sign bit picks the half: lut[0, 128) for x < 0.
 * In place (y == x) works for all three: each block is read before it is
 * written.
 */
#include "eltwise_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw")))
#define TARGET_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/* ---- shared: 16 int8 values → float lanes --------------------------------- */

/* float(x[i] + off) for 16 values (exact: small integers). */
static inline TARGET __m512 load16_f(const int8_t *x, __m512i off) {
  const __m512i v = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)x));
  return _mm512_cvtepi32_ps(_mm512_add_epi32(v, off));
}

/* The same for the first n < 16 values; the other lanes read nothing. */
static inline TARGET __m512 load16_f_tail(const int8_t *x, int32_t n,
                                          __m512i off) {
  const __mmask64 m = (__mmask64)(((uint64_t)1 << n) - 1);
  const __m512i v8 = _mm512_maskz_loadu_epi8(m, x);
  const __m512i v = _mm512_cvtepi8_epi32(_mm512_castsi512_si128(v8));
  return _mm512_cvtepi32_ps(_mm512_add_epi32(v, off));
}

/* Clamp, round half to even, remove the domain offset: 16 int8 results. */
static inline TARGET __m128i finish16(__m512 v, __m512 lo, __m512 hi,
                                      __m512i off) {
  v = _mm512_max_ps(v, lo); /* v > lo ? v : lo */
  v = _mm512_min_ps(v, hi); /* v < hi ? v : hi */
  return _mm512_cvtepi32_epi8(_mm512_sub_epi32(_mm512_cvtps_epi32(v), off));
}

static inline TARGET void store16(int8_t *y, int32_t n, __m128i r) {
  if (n >= 16)
    _mm_storeu_si128((__m128i *)y, r);
  else
    _mm512_mask_storeu_epi8(y, (__mmask64)(((uint64_t)1 << n) - 1),
                            _mm512_castsi128_si512(r));
}

/* ---- add_i8 and mul_i8: one row loop ----------------------------------------- */

/* A tidsp_host_bin_plan's constants (eltwise_internal.h), as vectors and
 * scalars in a local copy. */
typedef struct bin_vec {
  __m512 ra, rb, f, lo, hi;
  __m512i a_add, b_add, off;
  int32_t a_add_i, b_add_i;
  int swapped;
} bin_vec;

enum { OP_ADD, OP_MUL };

#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE TARGET void bin_vec_init(bin_vec *k, const tidsp_host_bin_plan *c) {
  k->ra = _mm512_set1_ps(c->ra);
  k->rb = _mm512_set1_ps(c->rb);
  k->f = _mm512_set1_ps(c->f);
  k->lo = _mm512_set1_ps(c->lo);
  k->hi = _mm512_set1_ps(c->hi);
  k->a_add = _mm512_set1_epi32(c->a_add);
  k->b_add = _mm512_set1_epi32(c->b_add);
  k->off = _mm512_set1_epi32(c->off);
  k->a_add_i = c->a_add;
  k->b_add_i = c->b_add;
  k->swapped = c->swapped;
}

/* 16 outputs from their operand lanes; op is a constant where this is
 * inlined, so each kernel's loop holds only its own arithmetic. */
static ALWAYS_INLINE TARGET __m128i op16(const bin_vec *k, int op, __m512 av, __m512 bv) {
  __m512 v;
  if (op == OP_MUL) {
    v = _mm512_mul_ps(av, bv); /* exact: float(prod) */
    v = _mm512_mul_ps(v, k->ra);
    v = _mm512_add_ps(v, k->f);
  } else if (k->swapped) {
    v = _mm512_fmadd_ps(bv, k->rb, _mm512_fmadd_ps(av, k->ra, k->f));
  } else {
    v = _mm512_fmadd_ps(av, k->ra, _mm512_fmadd_ps(bv, k->rb, k->f));
  }
  return finish16(v, k->lo, k->hi, k->off);
}

/* One row of n outputs; sa / sb: operand contiguous (1) or constant (0). */
static ALWAYS_INLINE TARGET void bin_row(const bin_vec *k, int op, const int8_t *a, int32_t sa,
                                        const int8_t *b, int32_t sb, int8_t *y, int32_t n) {
  const __m512 ac = _mm512_set1_ps((float)(a[0] + k->a_add_i));
  const __m512 bc = _mm512_set1_ps((float)(b[0] + k->b_add_i));
  int32_t i;
  if (!sa && !sb) { /* every output is the same value */
    const __m128i r = op16(k, op, ac, bc);
    for (i = 0; i < n; i += 16)
      store16(y + i, n - i, r);
    return;
  }
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 av = sa ? load16_f(a + i, k->a_add) : ac;
    const __m512 bv = sb ? load16_f(b + i, k->b_add) : bc;
    _mm_storeu_si128((__m128i *)(y + i), op16(k, op, av, bv));
  }
  if (i < n) {
    const __m512 av = sa ? load16_f_tail(a + i, n - i, k->a_add) : ac;
    const __m512 bv = sb ? load16_f_tail(b + i, n - i, k->b_add) : bc;
    store16(y + i, n - i, op16(k, op, av, bv));
  }
}

/* Every row of the plan's coalesced broadcast. */
static ALWAYS_INLINE TARGET int32_t bin_run(const tidsp_host_bin_plan *c, int op, const int8_t *a, const int8_t *b,
                                           int8_t *y) {
  bin_vec k;
  tidsp_ref_bc_iter it;
  int64_t r;
  bin_vec_init(&k, c);
  tidsp_ref_bc_init(&it, &c->rows);
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it))
    bin_row(&k, op, a + it.a_off, it.a_step, b + it.b_off, it.b_step, y + (size_t)r * (size_t)it.inner, it.inner);
  return TIDSP_OK;
}

/* The reference answers what the fast path does not take. */
int32_t TARGET tidsp_add_i8__host_avx512(const tidsp_add_i8_params *p, const int8_t *a, const int8_t *b, int8_t *y) {
  tidsp_host_bin_plan c;
  return tidsp_host_add_plan(&c, p, a, b, y) ? bin_run(&c, OP_ADD, a, b, y) : tidsp_add_i8__ref(p, a, b, y);
}

int32_t TARGET tidsp_mul_i8__host_avx512(const tidsp_mul_i8_params *p, const int8_t *a, const int8_t *b, int8_t *y) {
  tidsp_host_bin_plan c;
  return tidsp_host_mul_plan(&c, p, a, b, y) ? bin_run(&c, OP_MUL, a, b, y) : tidsp_mul_i8__ref(p, a, b, y);
}

/* ---- lut_i8 ----------------------------------------------------------------- */

static TARGET_VBMI void lut_vbmi(const int8_t *lut, const int8_t *x, int8_t *y,
                                 int32_t n) {
  /* neg: lut[0, 128) serves x in [−128, 0); pos: lut[128, 256) x in [0, 128) */
  const __m512i neg0 = _mm512_loadu_si512((const void *)lut);
  const __m512i neg1 = _mm512_loadu_si512((const void *)(lut + 64));
  const __m512i pos0 = _mm512_loadu_si512((const void *)(lut + 128));
  const __m512i pos1 = _mm512_loadu_si512((const void *)(lut + 192));
  int32_t i = 0;
  for (; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - i)) - 1);
    const __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
    const __m512i rn = _mm512_permutex2var_epi8(neg0, v, neg1);
    const __m512i rp = _mm512_permutex2var_epi8(pos0, v, pos1);
    const __m512i r = _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), rp, rn);
    _mm512_mask_storeu_epi8(y + i, m, r);
  }
}

static int32_t lut_i8__host_avx512vbmi(const tidsp_lut_params *p,
                                       const int8_t *lut, const int8_t *x,
                                       int8_t *y) {
  if (!p || !lut || !x || !y || p->n < 0)
    return tidsp_lut_i8__ref(p, lut, x, y);
  lut_vbmi(lut, x, y, p->n);
  return TIDSP_OK;
}

/* VBMI is not implied by the rows that run this file (AVX-512 VNNI without
 * VBMI exists: Cascade Lake), so the choice is made here, once; without it,
 * the AVX2 lookup (every AVX-512 CPU has AVX2). */
static tidsp_lut_i8_fn lut_choice;

int32_t tidsp_lut_i8__host_avx512(const tidsp_lut_params *p, const int8_t *lut,
                                  const int8_t *x, int8_t *y) {
  if (!lut_choice) {
    __builtin_cpu_init();
    lut_choice = __builtin_cpu_supports("avx512vbmi") ? lut_i8__host_avx512vbmi
                                                      : tidsp_lut_i8__host_avx2;
  }
  return lut_choice(p, lut, x, y);
}

#endif /* TIDSP_HAVE_HOST_X86 */
