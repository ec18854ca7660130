/*
 * qdq__host_avx2.c — tidsp_quantize and tidsp_dequantize with AVX2, 8
 * elements per ymm, for the 8- and 16-bit dtypes.
 *
 * The per-lane operations are those of qdq__host_avx512.c (see there why
 * they equal the reference's): quantize v = x / s, max(v, qmin − zp),
 * min(v, qmax − zp), vcvtps2dq, + zp; dequantize fl(float(q − zp) · s).
 * Results are narrowed by saturating packs, exact on in-range values.
 * Blocks of 32 elements; a stretch's last partial block runs on copies in
 * stack buffers. Per-tensor and per-channel stretches of at least one
 * block are vectorized; per-channel data with shorter stretches (the
 * channel axis last), int32 data and invalid calls go to the reference.
 */
#include "../ref/qdq_internal.h"
#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum { BLOCK = 32 };

static inline int qdq_fast(const tidsp_qdq_params *p) {
  if (p->dtype != TIDSP_DTYPE_I8 && p->dtype != TIDSP_DTYPE_U8 &&
      p->dtype != TIDSP_DTYPE_I16 && p->dtype != TIDSP_DTYPE_U16)
    return 0;
  return p->channels == 1 || p->inner >= BLOCK;
}

/* ---- quantize ----------------------------------------------------------------- */

typedef struct q_consts {
  __m256 s, lo, hi;
  __m256i zp;
  int32_t dtype;
} q_consts;

static inline TARGET __m256i quant8(const q_consts *k, const float *x) {
  __m256 v = _mm256_div_ps(_mm256_loadu_ps(x), k->s);
  v = _mm256_max_ps(v, k->lo); /* a NaN becomes lo */
  v = _mm256_min_ps(v, k->hi);
  return _mm256_add_epi32(_mm256_cvtps_epi32(v), k->zp);
}

/* 32 values of x → y in the dtype. */
static inline TARGET void quant32(const q_consts *k, const float *x, void *y) {
  const __m256i q0 = quant8(k, x), q1 = quant8(k, x + 8);
  const __m256i q2 = quant8(k, x + 16), q3 = quant8(k, x + 24);
  if (k->dtype == TIDSP_DTYPE_I8 || k->dtype == TIDSP_DTYPE_U8) {
    /* lanes: [q0 0-3, q1 0-3 | q0 4-7, q1 4-7] → bytes, then in order */
    const __m256i w01 = _mm256_packs_epi32(q0, q1);
    const __m256i w23 = _mm256_packs_epi32(q2, q3);
    const __m256i b = k->dtype == TIDSP_DTYPE_I8 ? _mm256_packs_epi16(w01, w23)
                                                 : _mm256_packus_epi16(w01, w23);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _mm256_storeu_si256((__m256i *)y, _mm256_permutevar8x32_epi32(b, order));
  } else {
    const int u = k->dtype == TIDSP_DTYPE_U16;
    const __m256i w01 = u ? _mm256_packus_epi32(q0, q1) : _mm256_packs_epi32(q0, q1);
    const __m256i w23 = u ? _mm256_packus_epi32(q2, q3) : _mm256_packs_epi32(q2, q3);
    _mm256_storeu_si256((__m256i *)y, _mm256_permute4x64_epi64(w01, 0xD8));
    _mm256_storeu_si256((__m256i *)y + 1, _mm256_permute4x64_epi64(w23, 0xD8));
  }
}

static TARGET void quant_run(const float *x, size_t n, float s, int32_t zp,
                             int64_t qmin, int64_t qmax, int32_t dtype,
                             int32_t bytes, void *y) {
  q_consts k;
  float tx[BLOCK];
  int16_t ty[BLOCK];
  size_t i;
  k.s = _mm256_set1_ps(s);
  k.lo = _mm256_set1_ps((float)(qmin - zp));
  k.hi = _mm256_set1_ps((float)(qmax - zp));
  k.zp = _mm256_set1_epi32(zp);
  k.dtype = dtype;
  for (i = 0; i + BLOCK <= n; i += BLOCK)
    quant32(&k, x + i, (int8_t *)y + i * (size_t)bytes);
  if (i < n) {
    memset(tx, 0, sizeof tx);
    memcpy(tx, x + i, sizeof(float) * (n - i));
    quant32(&k, tx, ty);
    memcpy((int8_t *)y + i * (size_t)bytes, ty, (size_t)bytes * (n - i));
  }
}

int32_t tidsp_quantize__host_avx2(const tidsp_qdq_params *p,
                                  const float *scale,
                                  const int32_t *zero_point, const float *x,
                                  void *y) {
  int64_t qmin = 0, qmax = 0;
  int32_t bytes, o, c;
  if (tidsp_ref_qdq_check(p, scale, zero_point, x, y) != TIDSP_OK || !qdq_fast(p))
    return tidsp_quantize__ref(p, scale, zero_point, x, y);
  tidsp_ref_qdq_range(p->dtype, &qmin, &qmax);
  bytes = (int32_t)tidsp_dtype_size(p->dtype);
  if (p->channels == 1) {
    quant_run(x, (size_t)p->outer * (size_t)p->inner, scale[0], zero_point[0],
              qmin, qmax, p->dtype, bytes, y);
    return TIDSP_OK;
  }
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
      quant_run(x + base, (size_t)p->inner, scale[c], zero_point[c], qmin, qmax,
                p->dtype, bytes, (int8_t *)y + base * (size_t)bytes);
    }
  }
  return TIDSP_OK;
}

/* ---- dequantize --------------------------------------------------------------- */

/* 8 integers of the dtype at x (element i) as int32. */
static inline TARGET __m256i load8_q(const void *x, size_t i, int32_t dtype) {
  switch (dtype) {
  case TIDSP_DTYPE_I8:
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)((const int8_t *)x + i)));
  case TIDSP_DTYPE_U8:
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)((const int8_t *)x + i)));
  case TIDSP_DTYPE_I16:
    return _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)((const int16_t *)x + i)));
  default: /* TIDSP_DTYPE_U16 */
    return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const int16_t *)x + i)));
  }
}

static inline TARGET void dequant32(const void *x, int32_t dtype, __m256i zp,
                                    __m256 s, float *y) {
  size_t q;
  for (q = 0; q < BLOCK; q += 8) {
    const __m256i d = _mm256_sub_epi32(load8_q(x, q, dtype), zp);
    _mm256_storeu_ps(y + q, _mm256_mul_ps(_mm256_cvtepi32_ps(d), s));
  }
}

static TARGET void dequant_run(const void *x, size_t n, float s, int32_t zp,
                               int32_t dtype, int32_t bytes, float *y) {
  const __m256 vs = _mm256_set1_ps(s);
  const __m256i vzp = _mm256_set1_epi32(zp);
  int16_t tx[BLOCK];
  float ty[BLOCK];
  size_t i;
  for (i = 0; i + BLOCK <= n; i += BLOCK)
    dequant32((const int8_t *)x + i * (size_t)bytes, dtype, vzp, vs, y + i);
  if (i < n) {
    memset(tx, 0, sizeof tx);
    memcpy(tx, (const int8_t *)x + i * (size_t)bytes, (size_t)bytes * (n - i));
    dequant32(tx, dtype, vzp, vs, ty);
    memcpy(y + i, ty, sizeof(float) * (n - i));
  }
}

int32_t tidsp_dequantize__host_avx2(const tidsp_qdq_params *p,
                                    const float *scale,
                                    const int32_t *zero_point, const void *x,
                                    float *y) {
  int32_t bytes, o, c;
  if (tidsp_ref_qdq_check(p, scale, zero_point, x, y) != TIDSP_OK || !qdq_fast(p))
    return tidsp_dequantize__ref(p, scale, zero_point, x, y);
  bytes = (int32_t)tidsp_dtype_size(p->dtype);
  if (p->channels == 1) {
    dequant_run(x, (size_t)p->outer * (size_t)p->inner, scale[0], zero_point[0],
                p->dtype, bytes, y);
    return TIDSP_OK;
  }
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
      dequant_run((const int8_t *)x + base * (size_t)bytes, (size_t)p->inner,
                  scale[c], zero_point[c], p->dtype, bytes, y + base);
    }
  }
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
