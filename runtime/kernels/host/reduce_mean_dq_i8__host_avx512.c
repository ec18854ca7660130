/*
 * reduce_mean_dq_i8__host_avx512.c — tidsp_reduce_mean_dq_i8 with
 * AVX-512F, for the order the squeeze-excitation means take (ONNX Runtime's
 * NHWC sums, channels_last_order: each output's elements added one after
 * another from 0): 16 outputs side by side, one lane each, so every lane
 * adds the reference's floats in the reference's order.
 *
 * The floats are the table's, dq[q + 128]. When the table is a
 * dequantize's — dq[q + 128] = fl((float)(q − zp) · s) for every code, as
 * the compiler builds it (checked bit for bit on each call: 256 products) —
 * a lane computes them as (float)(q − zp) · s, one product as the table's,
 * instead of loading them one by one: 16 rows of 16 codes are widened to
 * dwords and transposed (zmm_transpose.h), so that a zmm holds the 16
 * outputs' codes of one step. Anything else (the other order, another
 * table, a tail of fewer than 16 outputs) is the reference's loop.
 *
 * x1.7 the reference on MobileNetV3-L's SE means (AMD EPYC, 120x28x28:
 * 21.4 -> 12.3 us). The widening and the transpose's shuffles bound it
 * (AVX-512 runs them at half rate on that core); two or four groups of 16
 * chains side by side gained nothing.
 */
#include "zmm_transpose.h"

#include <string.h>

#include "../ref/ref_internal.h" /* its FP_CONTRACT OFF: the products stay products */
#include "../ref/reduce_mean_internal.h"

#if TIDSP_HAVE_HOST_X86

/* dq is (float)(q − zp) · s for every int8 code q: 1 with zp and s, else 0. */
static int table_is_dequantize(const float *dq, int32_t *zp, float *s) {
  int32_t z = -1, i;
  for (i = 0; i < 256 && z < 0; i++)
    if (dq[i] == 0.0f)
      z = i;
  if (z < 0)
    return 0;
  const float sc = z < 255 ? dq[z + 1] : -dq[z - 1];
  for (i = 0; i < 256; i++) {
    const float v = (float)(i - z) * sc;
    if (memcmp(&v, &dq[i], sizeof v) != 0)
      return 0;
  }
  *zp = z - 128;
  *s = sc;
  return 1;
}

/* The means of 16 outputs, each of `count` codes in its row of q (rows
 * `count` apart). */
static __attribute__((target("avx512f"))) void mean16(const int8_t *q, int64_t count, int32_t zp, float s, float div,
                                                      float *y) {
  const __m512i vzp = _mm512_set1_epi32(zp);
  const __m512 vs = _mm512_set1_ps(s);
  __m512 acc = _mm512_setzero_ps();
  int64_t k = 0;
  int32_t c, j;
  for (; k + 16 <= count; k += 16) {
    __m512i r[16];
    for (c = 0; c < 16; c++)
      r[c] = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(q + c * count + k)));
    tidsp_zmm_transpose16(r); /* r[j]: the 16 outputs' codes of step k + j */
    for (j = 0; j < 16; j++)
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(r[j], vzp)), vs));
  }
  for (; k < count; k++) {
    int32_t codes[16];
    for (c = 0; c < 16; c++)
      codes[c] = q[c * count + k];
    acc = _mm512_add_ps(acc, _mm512_mul_ps(
                                 _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_loadu_si512(codes), vzp)), vs));
  }
  _mm512_storeu_ps(y, _mm512_div_ps(acc, _mm512_set1_ps(div)));
}

int32_t tidsp_reduce_mean_dq_i8__host_avx512(const tidsp_reduce_params *p, const float *dq, const int8_t *x,
                                             float *y) {
  tidsp_ref_reduce_dims r;
  int done = 1;
  int32_t zp;
  float s;
  int64_t i;
  if (!p || !dq || !p->channels_last_order || tidsp_ref_reduce_begin(p, x, y, &r, &done) != TIDSP_OK || done ||
      p->rank < 1 || !tidsp_ref_reduce_is_blocks(&r) || r.n_out < 16 || !table_is_dequantize(dq, &zp, &s))
    return tidsp_reduce_mean_dq_i8__ref(p, dq, x, y);
  for (i = 0; i + 16 <= r.n_out; i += 16)
    mean16(x + i * r.count, r.count, zp, s, (float)r.count, y + i);
  if (i < r.n_out) { /* the last outputs: the reference's loop on them alone */
    tidsp_ref_reduce_dims rest = r;
    rest.n_out = r.n_out - i;
    rest.n_in = rest.n_out * r.count;
    tidsp_ref_mean_blocks(NULL, x + i * r.count, dq, &rest, 1, TIDSP_ORT_DQ_TABLE, y + i);
  }
  return TIDSP_OK;
}

#endif
