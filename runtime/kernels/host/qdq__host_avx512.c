/*
 * qdq__host_avx512.c — tidsp_quantize and tidsp_dequantize with AVX-512
 * (F + BW), 16 elements per zmm, for the 8- and 16-bit dtypes.
 *
 * quantize, per lane: v = x / s (vdivps: the reference's true divide),
 * v = max(v, qmin − zp), v = min(v, qmax − zp), vcvtps2dq (half to even in
 * the default MXCSR mode, as llrintf), + zp. The reference rounds first and
 * clamps the integer; with integral bounds that are exact floats the two
 * orders agree, and maxps returns the bound for a NaN (the reference's
 * NaN → qmin); ±inf and huge values clamp like the reference's range tests.
 * dequantize, per lane: fl(float(q − zp) · s), the difference exact.
 *
 * Layouts [outer, channels, inner]: per-tensor (channels 1) runs as one
 * contiguous stretch; inner 1 (channel axis last) loads 16 channels' scales
 * and zero points per vector; otherwise one stretch per (outer, channel).
 * int32 data, and anything the reference rejects, go to the reference.
 */
#include "../ref/qdq_internal.h"
#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw")))

static inline __mmask16 low_mask16(size_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

static inline int qdq_fast_dtype(int32_t dtype) {
  return dtype == TIDSP_DTYPE_I8 || dtype == TIDSP_DTYPE_U8 ||
         dtype == TIDSP_DTYPE_I16 || dtype == TIDSP_DTYPE_U16;
}

/* ---- quantize ----------------------------------------------------------------- */

/* Per-lane constants: the divisor, the zero point and the float clamp
 * bounds qmin − zp, qmax − zp. */
typedef struct q_lanes {
  __m512 s, lo, hi;
  __m512i zp;
} q_lanes;

static inline TARGET __m512i quant16(const q_lanes *k, __m512 x) {
  __m512 v = _mm512_div_ps(x, k->s);
  v = _mm512_max_ps(v, k->lo); /* v > lo ? v : lo: a NaN becomes lo */
  v = _mm512_min_ps(v, k->hi);
  return _mm512_add_epi32(_mm512_cvtps_epi32(v), k->zp);
}

/* Stores lanes m of q (already in the dtype's range) as bytes or halves. */
static inline TARGET void store_q(void *y, size_t i, int32_t bytes, __m512i q,
                                  __mmask16 m) {
  if (bytes == 1) {
    if (m == 0xFFFF)
      _mm_storeu_si128((__m128i *)((int8_t *)y + i), _mm512_cvtepi32_epi8(q));
    else
      _mm512_mask_cvtepi32_storeu_epi8((int8_t *)y + i, m, q);
  } else {
    if (m == 0xFFFF)
      _mm256_storeu_si256((__m256i *)((int16_t *)y + i), _mm512_cvtepi32_epi16(q));
    else
      _mm512_mask_cvtepi32_storeu_epi16((int16_t *)y + i, m, q);
  }
}

/* y[0, n) from x[0, n) with one scale and zero point. */
static TARGET void quant_run(const float *x, size_t n, float s, int32_t zp,
                             int64_t qmin, int64_t qmax, int32_t bytes,
                             void *y) {
  q_lanes k;
  size_t i;
  k.s = _mm512_set1_ps(s);
  k.lo = _mm512_set1_ps((float)(qmin - zp));
  k.hi = _mm512_set1_ps((float)(qmax - zp));
  k.zp = _mm512_set1_epi32(zp);
  for (i = 0; i + 16 <= n; i += 16)
    store_q(y, i, bytes, quant16(&k, _mm512_loadu_ps(x + i)), 0xFFFF);
  if (i < n) {
    const __mmask16 m = low_mask16(n - i);
    store_q(y, i, bytes, quant16(&k, _mm512_maskz_loadu_ps(m, x + i)), m);
  }
}

/* y[0, C) from x[0, C), channel c with scale[c], zero_point[c]. */
static TARGET void quant_channels(const float *x, int32_t C,
                                  const float *scale, const int32_t *zero_point,
                                  int64_t qmin, int64_t qmax, int32_t bytes,
                                  void *y) {
  const __m512i vmin = _mm512_set1_epi32((int32_t)qmin);
  const __m512i vmax = _mm512_set1_epi32((int32_t)qmax);
  int32_t c;
  for (c = 0; c < C; c += 16) {
    const __mmask16 m = low_mask16((size_t)(C - c));
    q_lanes k;
    k.zp = _mm512_maskz_loadu_epi32(m, zero_point + c);
    /* masked-off lanes divide by 1 (their results are not stored) */
    k.s = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, scale + c);
    k.lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(vmin, k.zp)); /* exact */
    k.hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(vmax, k.zp));
    store_q(y, (size_t)c, bytes, quant16(&k, _mm512_maskz_loadu_ps(m, x + c)), m);
  }
}

int32_t tidsp_quantize__host_avx512(const tidsp_qdq_params *p,
                                    const float *scale,
                                    const int32_t *zero_point, const float *x,
                                    void *y) {
  int64_t qmin = 0, qmax = 0;
  int32_t bytes, o, c;
  if (tidsp_ref_qdq_check(p, scale, zero_point, x, y) != TIDSP_OK ||
      !qdq_fast_dtype(p->dtype))
    return tidsp_quantize__ref(p, scale, zero_point, x, y);
  tidsp_ref_qdq_range(p->dtype, &qmin, &qmax);
  bytes = (int32_t)tidsp_dtype_size(p->dtype);
  if (p->channels == 1) {
    quant_run(x, (size_t)p->outer * (size_t)p->inner, scale[0], zero_point[0],
              qmin, qmax, bytes, y);
  } else if (p->inner == 1) {
    for (o = 0; o < p->outer; o++) {
      const size_t base = (size_t)o * (size_t)p->channels;
      quant_channels(x + base, p->channels, scale, zero_point, qmin, qmax,
                     bytes, (int8_t *)y + base * (size_t)bytes);
    }
  } else {
    for (o = 0; o < p->outer; o++) {
      for (c = 0; c < p->channels; c++) {
        const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
        quant_run(x + base, (size_t)p->inner, scale[c], zero_point[c], qmin,
                  qmax, bytes, (int8_t *)y + base * (size_t)bytes);
      }
    }
  }
  return TIDSP_OK;
}

/* ---- dequantize --------------------------------------------------------------- */

/* 16 integers of the dtype (lanes m; the others read nothing) as int32. */
static inline TARGET __m512i load_q(const void *x, size_t i, int32_t dtype,
                                    __mmask16 m) {
  switch (dtype) {
  case TIDSP_DTYPE_I8:
    return _mm512_cvtepi8_epi32(_mm512_castsi512_si128(
        _mm512_maskz_loadu_epi8((__mmask64)m, (const int8_t *)x + i)));
  case TIDSP_DTYPE_U8:
    return _mm512_cvtepu8_epi32(_mm512_castsi512_si128(
        _mm512_maskz_loadu_epi8((__mmask64)m, (const int8_t *)x + i)));
  case TIDSP_DTYPE_I16:
    return _mm512_cvtepi16_epi32(_mm512_castsi512_si256(
        _mm512_maskz_loadu_epi16((__mmask32)m, (const int16_t *)x + i)));
  default: /* TIDSP_DTYPE_U16 */
    return _mm512_cvtepu16_epi32(_mm512_castsi512_si256(
        _mm512_maskz_loadu_epi16((__mmask32)m, (const int16_t *)x + i)));
  }
}

static inline TARGET __m512 dequant16(__m512i q, __m512i zp, __m512 s) {
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(q, zp)), s);
}

static TARGET void dequant_run(const void *x, size_t n, float s, int32_t zp,
                               int32_t dtype, float *y) {
  const __m512 vs = _mm512_set1_ps(s);
  const __m512i vzp = _mm512_set1_epi32(zp);
  size_t i;
  for (i = 0; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, dequant16(load_q(x, i, dtype, 0xFFFF), vzp, vs));
  if (i < n) {
    const __mmask16 m = low_mask16(n - i);
    _mm512_mask_storeu_ps(y + i, m, dequant16(load_q(x, i, dtype, m), vzp, vs));
  }
}

static TARGET void dequant_channels(const void *x, int32_t C,
                                    const float *scale,
                                    const int32_t *zero_point, int32_t dtype,
                                    float *y) {
  int32_t c;
  for (c = 0; c < C; c += 16) {
    const __mmask16 m = low_mask16((size_t)(C - c));
    const __m512i zp = _mm512_maskz_loadu_epi32(m, zero_point + c);
    const __m512 s = _mm512_maskz_loadu_ps(m, scale + c);
    _mm512_mask_storeu_ps(y + c, m, dequant16(load_q(x, (size_t)c, dtype, m), zp, s));
  }
}

int32_t tidsp_dequantize__host_avx512(const tidsp_qdq_params *p,
                                      const float *scale,
                                      const int32_t *zero_point, const void *x,
                                      float *y) {
  int32_t bytes, o, c;
  if (tidsp_ref_qdq_check(p, scale, zero_point, x, y) != TIDSP_OK ||
      !qdq_fast_dtype(p->dtype))
    return tidsp_dequantize__ref(p, scale, zero_point, x, y);
  bytes = (int32_t)tidsp_dtype_size(p->dtype);
  if (p->channels == 1) {
    dequant_run(x, (size_t)p->outer * (size_t)p->inner, scale[0],
                zero_point[0], p->dtype, y);
  } else if (p->inner == 1) {
    for (o = 0; o < p->outer; o++) {
      const size_t base = (size_t)o * (size_t)p->channels;
      dequant_channels((const int8_t *)x + base * (size_t)bytes, p->channels,
                       scale, zero_point, p->dtype, y + base);
    }
  } else {
    for (o = 0; o < p->outer; o++) {
      for (c = 0; c < p->channels; c++) {
        const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
        dequant_run((const int8_t *)x + base * (size_t)bytes, (size_t)p->inner,
                    scale[c], zero_point[c], p->dtype, y + base);
      }
    }
  }
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
