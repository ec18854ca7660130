/*
 * rq_internal.h — the requantization epilogues of the fast host int8
 * convolutions and matrix multiplies (not public): FLOAT, Q31 and
 * SCALE_SHIFT (kernels.h), one value at a time, 8 lanes (AVX2) and 16
 * lanes (AVX-512).
 *
 * The accumulator work of a kernel does not depend on the kind; only the
 * last step from the wrapped int32 sum to int8 does. Each form below
 * returns the reference's value (tidsp_ref_rq_apply) for every int32
 * accumulator and every entry that tidsp_host_rq_ok accepted.
 *
 * SCALE_SHIFT, y = clamp(floor((acc·scale + 2^(sh−1)) / 2^sh), lo, hi)
 * (sh = 0: no rounding term), 0 ≤ scale ≤ 255, 0 ≤ sh ≤ 31:
 *  - AVX-512 (tidsp_host_ss16): in int64 lanes, as the reference (or in
 *    int32 lanes where that is exact, see tidsp_host_ss16_channel). vpmuldq
 *    multiplies the low dword of each qword, sign-extended, by the scale:
 *    the even accumulators directly, the odd ones after a 32-bit right
 *    shift of the qwords; |acc·scale| < 2^39, so adding 2^(sh−1) cannot
 *    overflow, and the arithmetic right shift vpsravq is the floor
 *    division. The clamp to [lo, hi] ⊂ int8 is in int64 too, so the low
 *    dword of each qword is the result; the odd ones are shifted back up
 *    and blended in, and the saturating narrowing only narrows.
 *  - AVX2 (tidsp_host_ss8): in double, where every step is exact. With
 *    m = scale·2^−sh (8 significant bits, ≥ 2^−31: exact, no subnormal)
 *    and h = 1/2 when sh > 0 (else 0):
 *      acc·m      = acc·scale·2^−sh: at most 31 + 8 significant bits, exact;
 *      acc·m + h  = (acc·scale + 2^(sh−1))·2^−sh = N·2^−sh with an integer
 *                   |N| < 2^39 + 2^30 < 2^40: at most 40 bits, exact;
 *      floor      = floor(N / 2^sh), exactly the reference's floor shift;
 *    then the clamp to the integer bounds and the conversion are exact.
 *    (AVX2 has no 64-bit arithmetic shift or 64-bit min/max; double has
 *    them all in one lane width.)
 *  - one value (tidsp_host_rq_one): the reference's own integer code.
 *
 * Q31 runs the FLOAT epilogues, with the multiplier m = qmult·2^−qshift
 * (tidsp_host_rq_mult). The reference computes Q31 as the FLOAT formula in
 * integers (softfloat.h): y = clamp(rne(fl(fl(acc)·qmult·2^−qshift)),
 * out_min − zp, out_max − zp) + zp, fl = rounding to float32 (24 bits,
 * nearest, ties to even), from entries 0 ≤ qmult ≤ 2^24, 0 ≤ qshift ≤ 62
 * (tidsp_host_rq_ok checks them as tidsp_ref_rq_init does). The FLOAT
 * epilogue computes rne(clamp((float)acc · m, lo, hi)) + zp. They agree:
 *  - m is exact: qmult has at most 24 significant bits and 2^−62 ≤ m ≤ 2^24
 *    when qmult > 0 (a normal float32), m = 0 when qmult = 0;
 *  - (float)acc is fl(acc) (cvtdq2ps, like the int to float conversion,
 *    rounds to nearest even);
 *  - the float product of two exact factors is their exact product rounded
 *    once to 24 bits, nearest even: fl(fl(acc)·m), since the product is 0
 *    or between 2^−62 and 2^55 (no subnormal, no overflow) — the same
 *    rounding as tidsp_sf_round;
 *  - lo, hi are integers (an int8 range minus an int8 zero point), so the
 *    float clamp then rne equals rne then the integer clamp: rne is
 *    nondecreasing and keeps integers (v < lo gives rne(v) ≤ lo, both
 *    sides lo; likewise hi), and ±0 both give 0.
 * So every FLOAT epilogue below, already exact against the reference's
 * FLOAT form for every float multiplier, is exact for Q31 too.
 */
#ifndef TIDSP_HOST_RQ_INTERNAL_H
#define TIDSP_HOST_RQ_INTERNAL_H

#include "host_internal.h"

/* A fast path's requantization, read once per call from params and data
 * that tidsp_host_rq_ok accepted for `channels` channels (FLOAT, Q31 or
 * SCALE_SHIFT): the reference's plan, filled without its validation. */
typedef tidsp_ref_rq tidsp_host_rq;

static inline void tidsp_host_rq_init(tidsp_host_rq *q,
                                      const tidsp_requant_params *rq,
                                      const void *data, int32_t channels) {
  /* the table length: Q31's shifts follow its n multipliers */
  tidsp_ref_rq_fields(q, rq, data, rq->per_channel ? channels : 1);
}

static inline int tidsp_host_rq_is_ss(const tidsp_host_rq *q) {
  return q->kind == TIDSP_REQUANT_SCALE_SHIFT;
}

/* Q31's multiplier qmult·2^−qshift as the float32 it equals, exactly
 * (0 ≤ qmult ≤ 2^24, 0 ≤ qshift ≤ 62, see the top): (float)qmult is exact,
 * 2^−qshift is a normal float32 built from its exponent bits, and their
 * product, 0 or at least 2^−62, needs no rounding. */
static inline float tidsp_host_q31_mult(int32_t qmult, int32_t qshift) {
  const uint32_t bits = (uint32_t)(127 - qshift) << 23;
  float p;
  memcpy(&p, &bits, sizeof p);
  return (float)qmult * p;
}

/* Channel c's entries (per-tensor: entry 0). The multiplier of a FLOAT or
 * Q31 plan. */
static inline float tidsp_host_rq_mult(const tidsp_host_rq *q, int32_t c) {
  const int32_t ci = q->per_channel ? c : 0;
  if (q->kind == TIDSP_REQUANT_Q31)
    return tidsp_host_q31_mult(q->qmult[ci], q->qshift[ci]);
  return q->mult[ci];
}

/* The multipliers of channels c0 .. c0 + n − 1 of a per-channel FLOAT or
 * Q31 plan (n ≤ 16), for a vector load of n lanes: FLOAT's own table, or
 * Q31's converted into buf. */
static inline const float *tidsp_host_rq_mults(const tidsp_host_rq *q, int32_t c0,
                                               int32_t n, float buf[16]) {
  int32_t i;
  if (q->kind != TIDSP_REQUANT_Q31)
    return q->mult + c0;
  for (i = 0; i < n; i++)
    buf[i] = tidsp_host_rq_mult(q, c0 + i);
  return buf;
}
static inline int32_t tidsp_host_rq_scale(const tidsp_host_rq *q, int32_t c) {
  return q->scale ? q->scale[q->per_channel ? c : 0] : 1;
}
static inline int32_t tidsp_host_rq_shift(const tidsp_host_rq *q, int32_t c) {
  return q->shift ? q->shift[q->per_channel ? c : 0] : 0;
}

/* SCALE_SHIFT of one accumulator (tidsp_ref_rq_apply's integer code). */
static inline int8_t tidsp_host_rq_ss(int32_t scale, int32_t shift,
                                      int32_t lo, int32_t hi, uint32_t acc) {
  const int64_t v = tidsp_ref_round_shift((int64_t)tidsp_ref_u32_to_i32(acc) * scale, shift);
  return (int8_t)tidsp_ref_clamp_i64(v, lo, hi);
}

/* Any kind, one accumulator of channel c (acc modulo 2³²). */
static inline int8_t tidsp_host_rq_one(const tidsp_host_rq *q, int32_t c,
                                       uint32_t acc) {
  if (tidsp_host_rq_is_ss(q))
    return tidsp_host_rq_ss(tidsp_host_rq_scale(q, c), tidsp_host_rq_shift(q, c),
                            q->out_min, q->out_max, acc);
  return tidsp_host_rq_float(tidsp_host_rq_mult(q, c), q->lo, q->hi, q->zp, acc);
}

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TIDSP_HOST_RQ_AVX512 __attribute__((target("avx512f")))
#define TIDSP_HOST_RQ_AVX2 __attribute__((target("avx2")))

/* ------------------------------------------------------------------------
 * AVX-512: the SCALE_SHIFT constants of 16 lanes. int64 form: qwords, [0]
 * for the even lanes and [1] for the odd ones (vpmuldq reads only the low
 * dword of a scale; shift and half are whole qwords). int32 form (narrow,
 * one channel whose clamped products fit int32, see
 * tidsp_host_ss16_channel): dwords. */
typedef struct tidsp_host_ss16_consts {
  __m512i scale[2], shift[2], half[2];
  __m512i lo, hi; /* out_min, out_max */
  int narrow;
  __m512i a_lo, a_hi, s32, h32, sh32, lo32, hi32;
} tidsp_host_ss16_consts;

/* Sets every field: the output range, and zeros elsewhere (the per-channel
 * fields are then set by tidsp_host_ss16_channel or _lanes). */
static inline TIDSP_HOST_RQ_AVX512 void tidsp_host_ss16_init(tidsp_host_ss16_consts *k,
                                                            const tidsp_host_rq *q) {
  const __m512i z = _mm512_setzero_si512();
  k->scale[0] = k->scale[1] = k->shift[0] = k->shift[1] = k->half[0] = k->half[1] = z;
  k->a_lo = k->a_hi = k->s32 = k->h32 = k->sh32 = z;
  k->narrow = 0;
  k->lo = _mm512_set1_epi64(q->out_min);
  k->hi = _mm512_set1_epi64(q->out_max);
  k->lo32 = _mm512_set1_epi32(q->out_min);
  k->hi32 = _mm512_set1_epi32(q->out_max);
}

/* Every lane of channel c (k initialized by tidsp_host_ss16_init for the
 * same q). The int32 form when it is exact: with
 * f(a) = floor((a·s + h) / 2^sh), nondecreasing in a (s ≥ 0), and any
 * a1 ≤ a2 with f(a1) ≤ lo and f(a2) ≥ hi,
 *   clamp(f(a), lo, hi) = clamp(f(clamp(a, a1, a2)), lo, hi)
 * for every a (below a1 both sides are lo, above a2 both are hi). Take
 * a2 = −a1 = 2^(sh+8−b), b = ⌊log2 s⌋: a2·s ≥ 2^(sh+8), so f(a2) ≥ 256 >
 * hi, and f(a1) ≤ ⌊(−2^(sh+8) + h) / 2^sh⌋ < −255 ≤ lo. When
 * a2·s + h < 2^31, f of the clamped accumulator is exact in int32
 * (vpmulld, vpaddd, vpsrad: floor), then clamped. s = 0: f ≡ 0, and
 * a1 = a2 = 0 gives the same. That covers shifts up to about 21 (MMALIB's
 * usual ones); larger shifts take the int64 form. No division: this runs
 * for every channel of every output block. */
static inline TIDSP_HOST_RQ_AVX512 void tidsp_host_ss16_channel(
    tidsp_host_ss16_consts *k, const tidsp_host_rq *q, int32_t c) {
  const int32_t sh = tidsp_host_rq_shift(q, c), sc = tidsp_host_rq_scale(q, c);
  const int64_t h = sh > 0 ? (int64_t)1 << (sh - 1) : 0;
  const int64_t a2 = sc > 0 ? (int64_t)1 << (sh + 8 - (31 - __builtin_clz((unsigned)sc))) : 0;
  k->narrow = a2 * sc + h <= INT32_MAX;
  if (k->narrow) {
    k->a_lo = _mm512_set1_epi32((int32_t)-a2);
    k->a_hi = _mm512_set1_epi32((int32_t)a2);
    k->s32 = _mm512_set1_epi32(sc);
    k->h32 = _mm512_set1_epi32((int32_t)h);
    k->sh32 = _mm512_set1_epi32(sh);
  } else {
    k->scale[0] = k->scale[1] = _mm512_set1_epi64(sc);
    k->shift[0] = k->shift[1] = _mm512_set1_epi64(sh);
    k->half[0] = k->half[1] = _mm512_set1_epi64(h);
  }
}

/* Lane i of channel c0 + i for i < n (the lanes past n repeat channel c0;
 * their results are not stored). */
static inline TIDSP_HOST_RQ_AVX512 void tidsp_host_ss16_lanes(
    tidsp_host_ss16_consts *k, const tidsp_host_rq *q, int32_t c0, int32_t n) {
  int32_t sc[16], sh[16], i, j;
  __m512i s32, h32;
  tidsp_host_ss16_init(k, q); /* the int64 form */
  for (i = 0; i < 16; i++) {
    const int32_t c = c0 + (i < n ? i : 0);
    sc[i] = tidsp_host_rq_scale(q, c);
    sh[i] = tidsp_host_rq_shift(q, c);
  }
  s32 = _mm512_loadu_si512(sc);
  h32 = _mm512_loadu_si512(sh);
  k->scale[0] = s32;
  k->scale[1] = _mm512_srli_epi64(s32, 32);
  k->shift[0] = _mm512_and_si512(h32, _mm512_set1_epi64(0xFFFFFFFF));
  k->shift[1] = _mm512_srli_epi64(h32, 32);
  for (j = 0; j < 2; j++) /* 2^sh >> 1: 2^(sh−1), and 0 for sh = 0 */
    k->half[j] = _mm512_srli_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), k->shift[j]), 1);
}

/* SCALE_SHIFT of 16 accumulators: 16 int32 in [out_min, out_max]. */
static inline TIDSP_HOST_RQ_AVX512 __m512i tidsp_host_ss16_i32(
    __m512i acc, const tidsp_host_ss16_consts *k) {
  __m512i e, o;
  if (k->narrow) {
    __m512i v = _mm512_min_epi32(_mm512_max_epi32(acc, k->a_lo), k->a_hi);
    v = _mm512_add_epi32(_mm512_mullo_epi32(v, k->s32), k->h32);
    v = _mm512_srav_epi32(v, k->sh32);
    return _mm512_min_epi32(_mm512_max_epi32(v, k->lo32), k->hi32);
  }
  e = _mm512_mul_epi32(acc, k->scale[0]);
  o = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), k->scale[1]);
  e = _mm512_srav_epi64(_mm512_add_epi64(e, k->half[0]), k->shift[0]);
  o = _mm512_srav_epi64(_mm512_add_epi64(o, k->half[1]), k->shift[1]);
  e = _mm512_min_epi64(_mm512_max_epi64(e, k->lo), k->hi);
  o = _mm512_min_epi64(_mm512_max_epi64(o, k->lo), k->hi);
  return _mm512_mask_blend_epi32((__mmask16)0xAAAA, e, _mm512_slli_epi64(o, 32));
}

/* The same as 16 int8 (the saturating narrowing only narrows). */
static inline TIDSP_HOST_RQ_AVX512 __m128i tidsp_host_ss16(__m512i acc,
                                                          const tidsp_host_ss16_consts *k) {
  return _mm512_cvtsepi32_epi8(tidsp_host_ss16_i32(acc, k));
}

/* ------------------------------------------------------------------------
 * AVX2: the SCALE_SHIFT constants of channel c in double (see the top). */
typedef struct tidsp_host_ss8_consts {
  __m256d m, h, lo, hi;
} tidsp_host_ss8_consts;

static inline TIDSP_HOST_RQ_AVX2 void tidsp_host_ss8_channel(
    tidsp_host_ss8_consts *k, const tidsp_host_rq *q, int32_t c) {
  const int32_t sh = tidsp_host_rq_shift(q, c);
  /* scale·2^−sh, exact: ldexp of an 8-bit integer */
  k->m = _mm256_set1_pd(ldexp((double)tidsp_host_rq_scale(q, c), -sh));
  k->h = _mm256_set1_pd(sh > 0 ? 0.5 : 0.0);
  k->lo = _mm256_set1_pd((double)q->out_min);
  k->hi = _mm256_set1_pd((double)q->out_max);
}

/* SCALE_SHIFT of 8 accumulators: 8 int32 in [out_min, out_max]. */
static inline TIDSP_HOST_RQ_AVX2 __m256i tidsp_host_ss8(__m256i acc,
                                                       const tidsp_host_ss8_consts *k) {
  __m256d v[2];
  int32_t j;
  v[0] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(acc));
  v[1] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(acc, 1));
  for (j = 0; j < 2; j++) {
    __m256d t = _mm256_floor_pd(_mm256_add_pd(_mm256_mul_pd(v[j], k->m), k->h));
    v[j] = _mm256_min_pd(_mm256_max_pd(t, k->lo), k->hi);
  }
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvttpd_epi32(v[0])),
                                 _mm256_cvttpd_epi32(v[1]), 1);
}

#endif /* TIDSP_HAVE_HOST_X86 */

#endif /* TIDSP_HOST_RQ_INTERNAL_H */
