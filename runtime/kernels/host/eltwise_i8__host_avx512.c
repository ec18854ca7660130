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

#define VEC __m512
#define VECI __m512i
#define VOUT __m128i
#define T TARGET
#define VSET1(x) _mm512_set1_ps(x)
#define VSET1_I32(x) _mm512_set1_epi32(x)
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define FINISH(v, lo, hi, off) finish16((v), (lo), (hi), (off))
#define ADD_KERNEL tidsp_add_i8__host_avx512
#define MUL_KERNEL tidsp_mul_i8__host_avx512
#include "eltwise_i8_body.h"

/* bin_row of eltwise_i8_body.h */
static ALWAYS_INLINE TARGET void bin_row(const bin_vec *k, int op, const int8_t *a, int32_t sa, const int8_t *b,
                                        int32_t sb, int8_t *y, int32_t n) {
  const __m512 ac = _mm512_set1_ps((float)(a[0] + k->a_add_i));
  const __m512 bc = _mm512_set1_ps((float)(b[0] + k->b_add_i));
  int32_t i;
  if (!sa && !sb) { /* every output is the same value */
    const __m128i r = op_vec(k, op, ac, bc);
    for (i = 0; i < n; i += 16)
      store16(y + i, n - i, r);
    return;
  }
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 av = sa ? load16_f(a + i, k->a_add) : ac;
    const __m512 bv = sb ? load16_f(b + i, k->b_add) : bc;
    _mm_storeu_si128((__m128i *)(y + i), op_vec(k, op, av, bv));
  }
  if (i < n) {
    const __m512 av = sa ? load16_f_tail(a + i, n - i, k->a_add) : ac;
    const __m512 bv = sb ? load16_f_tail(b + i, n - i, k->b_add) : bc;
    store16(y + i, n - i, op_vec(k, op, av, bv));
  }
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

/* ---- lut_i8_channels: each channel's run through this row's lut_i8 ---------- */

int32_t tidsp_lut_i8_channels__host_avx512(const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x,
                                           int8_t *y) {
  return tidsp_ref_lut_channels(p, lut, x, y, tidsp_lut_i8__host_avx512);
}

#endif /* TIDSP_HAVE_HOST_X86 */
