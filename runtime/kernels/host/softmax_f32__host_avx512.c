/*
 * softmax_f32__host_avx512.c — tidsp_softmax_f32 (ref/softmax_f32.c, ONNX
 * Runtime's MLAS softmax on AVX512F) in 16-lane vectors, for rows along
 * the last axis (inner = 1); other layouts go to the reference.
 *
 * This is the arithmetic the reference reproduces from MLAS, so the bytes
 * are the same:
 *  - the maximum (exact in any order; a row holding a NaN goes to the
 *    reference, whose running maximum depends on where the NaN is);
 *  - e = exp(x + (−m)) by tidsp_ort_softmax_exp's steps (ort_float.h): the
 *    clamp vmaxps(lower, v), the fused multiply-adds in its order, and
 *    p · 2^m by vscalefps (one rounding, what ldexpf gives);
 *  - the sum in 16 lanes, lane j taking the elements ≡ j (mod 16) in order
 *    (one vector add per 16 elements; the masked tail adds +0 to lanes
 *    that hold ≥ +0), then the reference's reduction tree;
 *  - y = e · fl(1 / s).
 */
#include "../kernel_variants.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f")))

static inline __mmask16 mask16(int32_t n) {
  return (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1);
}

/* tidsp_ort_softmax_exp in 16 lanes. */
static TARGET __m512 exp16(__m512 v) {
  const __m512 bias = _mm512_set1_ps(12582912.0f);
  __m512 m, r, p;
  v = _mm512_max_ps(_mm512_set1_ps(-103.9720840454f), v); /* a NaN v stays NaN */
  m = _mm512_sub_ps(_mm512_fmadd_ps(v, _mm512_set1_ps(1.44269504088896341f), bias), bias);
  r = _mm512_fmadd_ps(m, _mm512_set1_ps(-6.93145752e-1f), v);
  r = _mm512_fmadd_ps(m, _mm512_set1_ps(-1.42860677e-6f), r);
  p = _mm512_set1_ps(0x1.694000p-10f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.125edcp-7f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.555b5ap-5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.555450p-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.fffff6p-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, m);
}

static TARGET void softmax_row16(const float *x, float *y, int32_t n) {
  __m512 mx = _mm512_set1_ps(x[0]), lane = _mm512_setzero_ps(), neg_m, sc;
  float l[16], t[8], m, s;
  int32_t k, j;
  __mmask16 nan = 0;
  /* the maximum: masked-off lanes repeat x[0] */
  for (k = 0; k < n; k += 16) {
    const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(x[0]), mask16(n - k), x + k);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    mx = _mm512_max_ps(mx, v);
  }
  if (nan) { /* the reference's running maximum depends on where NaNs are */
    const tidsp_softmax_params one = {1, n, 1};
    (void)tidsp_softmax_f32__ref(&one, x, y);
    return;
  }
  m = _mm512_reduce_max_ps(mx);
  neg_m = _mm512_set1_ps(-m);
  for (k = 0; k < n; k += 16) {
    const __mmask16 mk = mask16(n - k);
    const __m512 e = exp16(_mm512_add_ps(_mm512_maskz_loadu_ps(mk, x + k), neg_m));
    _mm512_mask_storeu_ps(y + k, mk, e);
    lane = _mm512_mask_add_ps(lane, mk, lane, e);
  }
  _mm512_storeu_ps(l, lane);
  for (j = 0; j < 8; j++)
    t[j] = l[j + 8] + l[j];
  s = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  sc = _mm512_set1_ps(1.0f / s);
  for (k = 0; k < n; k += 16) {
    const __mmask16 mk = mask16(n - k);
    _mm512_mask_storeu_ps(y + k, mk, _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, y + k), sc));
  }
}

int32_t tidsp_softmax_f32__host_avx512(const tidsp_softmax_params *p, const float *x, float *y) {
  int32_t o;
  if (!p || !x || !y || p->outer < 0 || p->axis_len < 1 || p->inner != 1)
    return tidsp_softmax_f32__ref(p, x, y);
  for (o = 0; o < p->outer; o++)
    softmax_row16(x + (size_t)o * (size_t)p->axis_len, y + (size_t)o * (size_t)p->axis_len,
                  p->axis_len);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
