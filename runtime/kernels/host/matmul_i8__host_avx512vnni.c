/*
 * matmul_i8__host_avx512vnni.c — tidsp_matmul_i8 with AVX-512 VNNI.
 *
 * Y[i][j] = Σ_k (x[i][k] − x_zp)(w[j][k] − w_zp) with both operands read as
 * stored (rows of k; row j of W at w + j·w_row_stride, dense when 0, only
 * its first k bytes read): a vector holds 64 consecutive k of one row of X
 * and of one row of W, vpdpbusd sums them four at a time, and one horizontal
 * sum per output finishes. NJ rows of W are kept in flight so that each
 * load of X serves NJ outputs. Masked loads read the tail of k without
 * passing the end of a row.
 *
 * vpdpbusd wants unsigned activations: u = x + 128 and
 *   Σ (x − x_zp)(w − w_zp) = Σ u·w − u_zp·Σw − w_zp·Σu + k·u_zp·w_zp
 * (u_zp = x_zp + 128), all modulo 2³², which is how the reference reduces
 * its exact int64 sum; the bias is added modulo 2³² too. Requantization is
 * the FLOAT or the SCALE_SHIFT formula, one value at a time
 * (tidsp_host_rq_one).
 * Q31 requantization and inputs the reference rejects go to
 * tidsp_matmul_i8__ref.
 */
#include "rq_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

enum { NJ = 4 }; /* columns of Y (rows of W) per pass over a row of X */

static TARGET void matmul_fast(const tidsp_matmul_params *p, const int8_t *x,
                               const int8_t *w, const int32_t *bias,
                               const tidsp_host_rq *q, int8_t *y) {
  const int32_t K = p->k;
  const size_t w_stride = tidsp_host_matmul_w_stride(p);
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i bias8 = _mm512_set1_epi8((char)0x80);
  const __m512i pad = _mm512_set1_epi8(-128); /* u = 0 past the row */
  const uint32_t u_zp = (uint32_t)(p->x_zp + 128);
  const uint32_t kconst = (uint32_t)K * u_zp * (uint32_t)p->w_zp;
  int32_t i, j0, jj, k;

  for (j0 = 0; j0 < p->n; j0 += NJ) {
    const int32_t nj = p->n - j0 < NJ ? p->n - j0 : NJ;
    const int8_t *wr[NJ];
    uint32_t cconst[NJ];
    for (jj = 0; jj < NJ; jj++) {
      const int32_t j = j0 + (jj < nj ? jj : nj - 1);
      __m512i s = _mm512_setzero_si512();
      wr[jj] = w + (size_t)j * w_stride;
      for (k = 0; k < K; k += 64) {
        const int32_t len = K - k < 64 ? K - k : 64;
        const __mmask64 m = len == 64 ? ~(__mmask64)0 : (((__mmask64)1 << len) - 1);
        s = _mm512_dpbusd_epi32(s, ones, _mm512_maskz_loadu_epi8(m, wr[jj] + k));
      }
      cconst[jj] = (bias ? (uint32_t)bias[j] : 0u) -
                   u_zp * (uint32_t)_mm512_reduce_add_epi32(s) + kconst;
    }
    for (i = 0; i < p->m; i++) {
      const int8_t *xr = x + (size_t)i * (size_t)K;
      __m512i acc[NJ], usum = _mm512_setzero_si512();
      for (jj = 0; jj < NJ; jj++)
        acc[jj] = _mm512_setzero_si512();
      for (k = 0; k < K; k += 64) {
        const int32_t len = K - k < 64 ? K - k : 64;
        const __mmask64 m = len == 64 ? ~(__mmask64)0 : (((__mmask64)1 << len) - 1);
        const __m512i u = _mm512_xor_si512(_mm512_mask_loadu_epi8(pad, m, xr + k), bias8);
        for (jj = 0; jj < NJ; jj++)
          acc[jj] = _mm512_dpbusd_epi32(acc[jj], u, _mm512_maskz_loadu_epi8(m, wr[jj] + k));
        if (p->w_zp != 0)
          usum = _mm512_dpbusd_epi32(usum, u, ones);
      }
      {
        const uint32_t ucorr = (uint32_t)p->w_zp * (uint32_t)_mm512_reduce_add_epi32(usum);
        int8_t *yr = y + (size_t)i * (size_t)p->n + j0;
        for (jj = 0; jj < nj; jj++) {
          const uint32_t a = (uint32_t)_mm512_reduce_add_epi32(acc[jj]) + cconst[jj] - ucorr;
          yr[jj] = tidsp_host_rq_one(q, j0 + jj, a);
        }
      }
    }
  }
}

int32_t tidsp_matmul_i8__host_avx512vnni(const tidsp_matmul_params *p,
                                         const int8_t *x, const int8_t *w,
                                         const int32_t *bias, const void *rq,
                                         int8_t *y) {
  tidsp_host_rq q;
  if (!tidsp_host_matmul_fast_ok(p, x, w, rq, y))
    return tidsp_matmul_i8__ref(p, x, w, bias, rq, y);
  tidsp_host_rq_init(&q, &p->rq, rq);
  matmul_fast(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
