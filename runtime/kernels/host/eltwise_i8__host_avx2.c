/*
 * eltwise_i8__host_avx2.c — tidsp_add_i8, tidsp_mul_i8 and tidsp_lut_i8
 * with AVX2 + FMA (the host_avx2 row checks both).
 *
 * The same scheme as eltwise_i8__host_avx512.c, 8 lanes per ymm and 32
 * outputs per block: coalesced broadcast rows, each lane the reference's
 * float operations (add: two fused multiply-adds; mul: an exact product,
 * a multiply, an add), vmaxps/vminps clamps (a NaN becomes lo), vcvtps2dq
 * (half to even), and a saturating pack that is exact because the values
 * are already in range. A row's last partial block is run on copies in
 * small stack buffers, so it takes the very same instructions.
 *
 * lut: y = lut[x + 128] in 16-byte rows: u = x + 128 (x xor 0x80) is entry
 * u & 15 of row u >> 4; vpshufb looks every byte up in each row h in turn,
 * and the bytes whose row is h keep that result (a compare and a blend per
 * row). The last partial block runs on a stack copy, like add / mul's.
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

/* ---- add_i8 and mul_i8: one row loop ----------------------------------------- */

#define VEC __m256
#define VECI __m256i
#define VOUT __m256i
#define T TARGET
#define VSET1(x) _mm256_set1_ps(x)
#define VSET1_I32(x) _mm256_set1_epi32(x)
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define FINISH(v, lo, hi, off) finish8((v), (lo), (hi), (off))
#define ADD_KERNEL tidsp_add_i8__host_avx2
#define MUL_KERNEL tidsp_mul_i8__host_avx2
#include "eltwise_i8_body.h"

/* 32 outputs; an operand with step 0 is the constant ac / bc. */
static ALWAYS_INLINE TARGET void op32(const bin_vec *k, int op, const int8_t *a, int32_t sa, __m256 ac,
                                     const int8_t *b, int32_t sb, __m256 bc, int8_t *y) {
  __m256i r[4];
  int32_t q;
  for (q = 0; q < 4; q++)
    r[q] = op_vec(k, op, sa ? load8_f(a + 8 * q, k->a_add) : ac, sb ? load8_f(b + 8 * q, k->b_add) : bc);
  store32(y, r[0], r[1], r[2], r[3]);
}

/* The last m < BLOCK elements of a row's operands, zero-padded to a whole
 * block in ta / tb (bin_row runs one more block on them and keeps m
 * outputs); a constant operand (step 0) is not read. */
static void tail_operands(int8_t ta[BLOCK], const int8_t *a, int32_t sa, int8_t tb[BLOCK], const int8_t *b,
                          int32_t sb, int32_t m) {
  memset(ta, 0, BLOCK);
  memset(tb, 0, BLOCK);
  if (sa) memcpy(ta, a, (size_t)m);
  if (sb) memcpy(tb, b, (size_t)m);
}

/* bin_row of eltwise_i8_body.h */
static ALWAYS_INLINE TARGET void bin_row(const bin_vec *k, int op, const int8_t *a, int32_t sa, const int8_t *b,
                                        int32_t sb, int8_t *y, int32_t n) {
  const __m256 ac = _mm256_set1_ps((float)(a[0] + k->a_add_i));
  const __m256 bc = _mm256_set1_ps((float)(b[0] + k->b_add_i));
  int8_t ta[BLOCK], tb[BLOCK], ty[BLOCK];
  int32_t i;
  for (i = 0; i + BLOCK <= n; i += BLOCK)
    op32(k, op, a + i, sa, ac, b + i, sb, bc, y + i);
  if (i < n) {
    tail_operands(ta, a + i, sa, tb, b + i, sb, n - i);
    op32(k, op, ta, sa, ac, tb, sb, bc, ty);
    memcpy(y + i, ty, (size_t)(n - i));
  }
}

/* 32 table lookups; rows[h] holds lut[16h .. 16h + 15] in both lanes. */
static ALWAYS_INLINE TARGET __m256i lut32(const __m256i *rows, __m256i v) {
  const __m256i u = _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80));
  const __m256i lo = _mm256_and_si256(u, _mm256_set1_epi8(0x0F));
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(u, 4), _mm256_set1_epi8(0x0F));
  /* two chains (even and odd rows; each byte is set in one, 0 in the
   * other), written out: a loop over h was not unrolled at -O2 */
  __m256i r0 = _mm256_setzero_si256(), r1 = _mm256_setzero_si256();
#define LUT_ROW(r, h) \
  r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(rows[h], lo), _mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)(h))))
  LUT_ROW(r0, 0); LUT_ROW(r1, 1); LUT_ROW(r0, 2); LUT_ROW(r1, 3);
  LUT_ROW(r0, 4); LUT_ROW(r1, 5); LUT_ROW(r0, 6); LUT_ROW(r1, 7);
  LUT_ROW(r0, 8); LUT_ROW(r1, 9); LUT_ROW(r0, 10); LUT_ROW(r1, 11);
  LUT_ROW(r0, 12); LUT_ROW(r1, 13); LUT_ROW(r0, 14); LUT_ROW(r1, 15);
#undef LUT_ROW
  return _mm256_or_si256(r0, r1);
}

int32_t TARGET tidsp_lut_i8__host_avx2(const tidsp_lut_params *p, const int8_t *lut, const int8_t *x, int8_t *y) {
  __m256i rows[16];
  int8_t tx[BLOCK], ty[BLOCK];
  int32_t i, h;
  if (!p || !lut || !x || !y || p->n < 0)
    return tidsp_lut_i8__ref(p, lut, x, y);
  for (h = 0; h < 16; h++)
    rows[h] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(lut + 16 * h)));
  for (i = 0; i + BLOCK <= p->n; i += BLOCK)
    _mm256_storeu_si256((__m256i *)(void *)(y + i),
                        lut32(rows, _mm256_loadu_si256((const __m256i *)(const void *)(x + i))));
  if (i < p->n) {
    memcpy(tx, x + i, (size_t)(p->n - i));
    _mm256_storeu_si256((__m256i *)(void *)ty, lut32(rows, _mm256_loadu_si256((const __m256i *)(const void *)tx)));
    memcpy(y + i, ty, (size_t)(p->n - i));
  }
  return TIDSP_OK;
}

/* ---- lut_i8_channels: each channel's run through this row's lut_i8 ---------- */

int32_t tidsp_lut_i8_channels__host_avx2(const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x,
                                         int8_t *y) {
  return tidsp_ref_lut_channels(p, lut, x, y, tidsp_lut_i8__host_avx2);
}

#endif /* TIDSP_HAVE_HOST_X86 */
