/*
 * conv_transpose2d_f32__host_mlas.c — tidsp_conv_transpose2d_f32 and
 * tidsp_conv_transpose_nd_f32 (ref/conv_transpose2d_f32.c,
 * ref/conv_transpose_nd_f32.c) summed in the order of ONNX Runtime's float
 * ConvTranspose (CPU provider, 1 intra-op thread), so that a float network
 * is bit-identical to ORT on the same CPU.
 *
 * ORT computes, per image and per group, a GEMM into a column buffer and
 * then scatters it with col2im:
 *
 *   col[m][i] = Σ_k A[m][k]·X[k][i]   m = (c_out of the group, tap),
 *                                     k = c_in of the group, i = input position;
 *   y = 0, then y[co][o] += col[(co, tap)][i] for the taps that land on o,
 *       taps in row-major order (kh then kw in 2-D: every one of ORT's
 *       col2im loops, the N-D one too, walks a channel's taps in that order);
 *   finally y + bias (a separate pass over the output).
 *
 * The GEMM is MLAS's SGEMM with X as B, a runtime matrix: the unpacked
 * SGEMM, whose K stride follows from K and N (tidsp_mlas_sgemm_stride_k,
 * shared with matmul_f32__host_mlas.c). Each stride's partial sum starts at
 * 0 and runs over its k in order with fused multiply-adds; the first
 * stride's sum is stored (beta = 0), each later one added: col = part + col.
 * The weights being constant changes nothing: ORT only transposes them.
 *
 * Each column element feeds at most one output element, so this kernel
 * computes the column values where they land, one run along the last
 * spatial dim at a time (of 4 output channels at once with vectors, which
 * share the input's loads), in a stack buffer instead of ORT's whole column
 * buffer (no malloc), and adds them to the output lanes they land on (an
 * expanding load for a stride, AVX-512); a tap that lands outside the
 * output is never computed (ORT computes and drops it). The 2-D kernel is
 * the N-D walk with two dims. PP-OCR det's 24 -> 24 2x2 stride-2 layer:
 * 0.63 -> 0.31 ms (Xeon, AVX-512, the profile of `cstatic run`).
 *
 * Not matched, so they run the reference: a GEMM with M = 1 or N = 1 and
 * K > 1 (MLAS's matrix-vector kernels; with K = 1 every kernel rounds the
 * one product alike), and CPUs without FMA (tidsp_mlas_f32_block() = 0:
 * MLAS's SSE/AVX kernels multiply and add separately).
 *
 * Verified against ORT 1.30 (AVX-512F) on single 1-D, 2-D and 3-D
 * ConvTranspose models (tests/e2e/test_conv_mlas_vs_ort.py,
 * test_conv_transpose_nd.py) and PP-OCR det; checked against a scalar model
 * of this order in tests/unit/test_kernel_conv_transpose_mlas.c.
 */
#include <math.h>
#include <string.h>

#include "../kernel_variants.h"
#include "../ref/conv_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#include "fma_exact_begin.h"

/* input columns per pass: the column values live on the stack */
#define COLS 256

/* The valid input indices [*lo, *hi) of one tap along an axis: index i
 * lands on o = i·stride + off, which must be in [0, out). */
static void tap_range(int64_t off, int32_t stride, int32_t in, int32_t out, int32_t *lo, int32_t *hi) {
  int64_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t b = off >= out ? 0 : (out - 1 - off) / stride + 1;
  if (b > in)
    b = in;
  if (a > b)
    a = b;
  *lo = (int32_t)a;
  *hi = (int32_t)b;
}

/* col[j] = Σ_k A[m][k]·X[k][i0 + j] for j < cnt, in MLAS's SGEMM order:
 * w_m[k·w_step] is A[m][k], x0[k·plane + j] is X[k][i0 + j]. */
static void column_row(const float *w_m, size_t w_step, const float *x0, size_t plane, int32_t k_len,
                       int32_t stride_k, int32_t cnt, float *part, float *col) {
  int32_t k0, k1, k, j;
  for (k0 = 0; k0 < k_len; k0 += stride_k) {
    k1 = k_len - k0 < stride_k ? k_len : k0 + stride_k;
    for (j = 0; j < cnt; j++)
      part[j] = 0.0f;
    for (k = k0; k < k1; k++) {
      const float a = w_m[(size_t)k * w_step];
      const float *xr = x0 + (size_t)k * plane;
      for (j = 0; j < cnt; j++)
        part[j] = fmaf(a, xr[j], part[j]);
    }
    if (k0 == 0) {
      for (j = 0; j < cnt; j++)
        col[j] = part[j];
    } else {
      for (j = 0; j < cnt; j++)
        col[j] = part[j] + col[j];
    }
  }
}

/* explicit targets as well as the region's pragma: clang ignores
 * `#pragma GCC target` (see matmul_f32__host_mlas.c) */
#define T512 __attribute__((target("avx512f,avx2,fma")))
#define T256 __attribute__((target("avx2,fma")))

/* column_row in vectors: up to 64 columns (4 zmm) or 32 (4 ymm) at a
 * time, each lane the scalar chain above: its partial sum starts at 0,
 * takes one fused multiply-add per k in order, and is stored (first
 * stride) or added to the column (part + col). Lanes past cnt load 0 and
 * are never stored. */
static T512 void column_row_512(const float *w_m, size_t w_step, const float *x0, size_t plane, int32_t k_len,
                                int32_t stride_k, int32_t cnt, float *col) {
  int32_t j0, k0, k1, k, v;
  for (j0 = 0; j0 < cnt; j0 += 64) {
    __mmask16 m[4];
    __m512 c[4], p[4];
    for (v = 0; v < 4; v++) {
      const int32_t rest = cnt - j0 - 16 * v;
      m[v] = (__mmask16)(rest >= 16 ? 0xFFFFu : rest > 0 ? (1u << rest) - 1u : 0u);
      c[v] = _mm512_setzero_ps();
    }
    for (k0 = 0; k0 < k_len; k0 += stride_k) {
      k1 = k_len - k0 < stride_k ? k_len : k0 + stride_k;
      for (v = 0; v < 4; v++)
        p[v] = _mm512_setzero_ps();
      for (k = k0; k < k1; k++) {
        const __m512 a = _mm512_set1_ps(w_m[(size_t)k * w_step]);
        const float *xr = x0 + (size_t)k * plane + j0;
#pragma GCC unroll 4
        for (v = 0; v < 4; v++)
          p[v] = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m[v], xr + 16 * v), p[v]);
      }
#pragma GCC unroll 4
      for (v = 0; v < 4; v++)
        c[v] = k0 == 0 ? p[v] : _mm512_add_ps(p[v], c[v]);
    }
    for (v = 0; v < 4; v++)
      _mm512_mask_storeu_ps(col + j0 + 16 * v, m[v], c[v]);
  }
}

static T256 void column_row_256(const float *w_m, size_t w_step, const float *x0, size_t plane, int32_t k_len,
                                int32_t stride_k, int32_t cnt, float *col) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int32_t j0, k0, k1, k, v;
  for (j0 = 0; j0 < cnt; j0 += 32) {
    __m256i m[4];
    __m256 c[4], p[4];
    for (v = 0; v < 4; v++) {
      m[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt - j0 - 8 * v), lane); /* lane < rest */
      c[v] = _mm256_setzero_ps();
    }
    for (k0 = 0; k0 < k_len; k0 += stride_k) {
      k1 = k_len - k0 < stride_k ? k_len : k0 + stride_k;
      for (v = 0; v < 4; v++)
        p[v] = _mm256_setzero_ps();
      for (k = k0; k < k1; k++) {
        const __m256 a = _mm256_set1_ps(w_m[(size_t)k * w_step]);
        const float *xr = x0 + (size_t)k * plane + j0;
#pragma GCC unroll 4
        for (v = 0; v < 4; v++)
          p[v] = _mm256_fmadd_ps(a, _mm256_maskload_ps(xr + 8 * v, m[v]), p[v]);
      }
#pragma GCC unroll 4
      for (v = 0; v < 4; v++)
        c[v] = k0 == 0 ? p[v] : _mm256_add_ps(p[v], c[v]);
    }
    for (v = 0; v < 4; v++)
      _mm256_maskstore_ps(col + j0 + 8 * v, m[v], c[v]);
  }
}

/* column_row for ROWS rows m at once (row r's A[m][k] at w_m[r·m_step +
 * k·w_step]; its columns to col + r·COLS), 32 (2 zmm) or 16 (2 ymm)
 * columns at a time: the x vectors are loaded once for the ROWS rows, and
 * the 2·ROWS independent chains keep the FMA units busy where one row's
 * chains wait on each other. Each lane is still the scalar chain of
 * column_row: 0, one fused multiply-add per k of the stride in order, then
 * stored (first stride) or added to the column (part + col). */
#define ROWS 4

static T512 void column_rows_512(const float *w_m, size_t m_step, size_t w_step, const float *x0, size_t plane,
                                 int32_t k_len, int32_t stride_k, int32_t cnt, float *col) {
  int32_t j0, k0, k1, k, r;
  for (j0 = 0; j0 < cnt; j0 += 32) {
    const int32_t rest = cnt - j0;
    const __mmask16 m0 = (__mmask16)(rest >= 16 ? 0xFFFFu : (1u << rest) - 1u);
    const __mmask16 m1 = (__mmask16)(rest >= 32 ? 0xFFFFu : rest > 16 ? (1u << (rest - 16)) - 1u : 0u);
    for (k0 = 0; k0 < k_len; k0 += stride_k) {
      __m512 p0[ROWS], p1[ROWS];
      k1 = k_len - k0 < stride_k ? k_len : k0 + stride_k;
#pragma GCC unroll 4
      for (r = 0; r < ROWS; r++)
        p0[r] = p1[r] = _mm512_setzero_ps();
      for (k = k0; k < k1; k++) {
        const float *xr = x0 + (size_t)k * plane + j0;
        const __m512 x_0 = _mm512_maskz_loadu_ps(m0, xr), x_1 = _mm512_maskz_loadu_ps(m1, xr + 16);
#pragma GCC unroll 4
        for (r = 0; r < ROWS; r++) {
          const __m512 a = _mm512_set1_ps(w_m[(size_t)r * m_step + (size_t)k * w_step]);
          p0[r] = _mm512_fmadd_ps(a, x_0, p0[r]);
          p1[r] = _mm512_fmadd_ps(a, x_1, p1[r]);
        }
      }
#pragma GCC unroll 4
      for (r = 0; r < ROWS; r++) {
        float *c = col + (size_t)r * COLS + j0;
        if (k0 > 0) {
          p0[r] = _mm512_add_ps(p0[r], _mm512_maskz_loadu_ps(m0, c));
          p1[r] = _mm512_add_ps(p1[r], _mm512_maskz_loadu_ps(m1, c + 16));
        }
        _mm512_mask_storeu_ps(c, m0, p0[r]);
        _mm512_mask_storeu_ps(c + 16, m1, p1[r]);
      }
    }
  }
}

static T256 void column_rows_256(const float *w_m, size_t m_step, size_t w_step, const float *x0, size_t plane,
                                 int32_t k_len, int32_t stride_k, int32_t cnt, float *col) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int32_t j0, k0, k1, k, r;
  for (j0 = 0; j0 < cnt; j0 += 16) {
    const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt - j0), lane); /* lane < rest */
    const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt - j0 - 8), lane);
    for (k0 = 0; k0 < k_len; k0 += stride_k) {
      __m256 p0[ROWS], p1[ROWS];
      k1 = k_len - k0 < stride_k ? k_len : k0 + stride_k;
#pragma GCC unroll 4
      for (r = 0; r < ROWS; r++)
        p0[r] = p1[r] = _mm256_setzero_ps();
      for (k = k0; k < k1; k++) {
        const float *xr = x0 + (size_t)k * plane + j0;
        const __m256 x_0 = _mm256_maskload_ps(xr, m0), x_1 = _mm256_maskload_ps(xr + 8, m1);
#pragma GCC unroll 4
        for (r = 0; r < ROWS; r++) {
          const __m256 a = _mm256_set1_ps(w_m[(size_t)r * m_step + (size_t)k * w_step]);
          p0[r] = _mm256_fmadd_ps(a, x_0, p0[r]);
          p1[r] = _mm256_fmadd_ps(a, x_1, p1[r]);
        }
      }
#pragma GCC unroll 4
      for (r = 0; r < ROWS; r++) {
        float *c = col + (size_t)r * COLS + j0;
        if (k0 > 0) {
          p0[r] = _mm256_add_ps(p0[r], _mm256_maskload_ps(c, m0));
          p1[r] = _mm256_add_ps(p1[r], _mm256_maskload_ps(c + 8, m1));
        }
        _mm256_maskstore_ps(c, m0, p0[r]);
        _mm256_maskstore_ps(c + 8, m1, p1[r]);
      }
    }
  }
}

/* Lanes 0, s, 2s, … of a zmm, the first n of them. */
static __mmask16 stride_mask(int32_t s, int32_t n) {
  uint32_t m = 0;
  for (int32_t i = 0; i < n && i * s < 16; i++)
    m |= 1u << (i * s);
  return (__mmask16)m;
}

/* y[j·s] = y[j·s] + c[j] for j < cnt (s ≤ 16) with AVX-512: each 16
 * outputs take the ⌊15/s⌋ + 1 columns that land on them (an expanding
 * load), and only those lanes are read, added and stored — the scalar
 * loop's one addition per element. */
static T512 void scatter_add_512(float *y, int32_t s, const float *c, int32_t cnt) {
  const int32_t per = 15 / s + 1;
  const __mmask16 full = stride_mask(s, per);
  for (int32_t j = 0; j < cnt; j += per) {
    const __mmask16 m = cnt - j >= per ? full : stride_mask(s, cnt - j);
    float *o = y + (size_t)j * (size_t)s;
    const __m512 v = _mm512_maskz_expandloadu_ps(m, c + j);
    _mm512_mask_storeu_ps(o, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, o), v));
  }
}

/* Whether ORT's order for the GEMM (m x n, k deep) is matched: MLAS's
 * matrix-vector kernels (M = 1 or N = 1) are not, unless one product per
 * element (k = 1) leaves no order; a CPU without FMA neither. */
static int matched(size_t m, size_t n, int32_t k) {
  return tidsp_mlas_f32_block() != 0 && !((m == 1 || n == 1) && k > 1);
}

/* The transposed convolution of a checked p in ORT's order (the header):
 * ROWS output channels at a time with vectors (column_rows_*), one at a
 * time otherwise. Each output element still takes its taps' columns in
 * row-major tap order, each added once to 0, then the bias. */
static void convt(const tidsp_conv_transpose_nd_params *p, const float *x, const float *w, const float *bias,
                  float *y, int32_t lanes) {
  float part[COLS], col[ROWS * COLS];
  const int32_t dims = p->dims, last = p->dims - 1, cpg_in = p->c_in / p->groups;
  const int32_t cpg_out = p->c_out / p->groups;
  int32_t n, g, co, nb, b, d, t[TIDSP_MAX_RANK], ip[TIDSP_MAX_RANK], lo, hi, iw0, cnt, j, stride_k;
  size_t plane_in = 1, plane_out = 1, taps = 1, rows_in, r, kk, i;

  for (d = 0; d < dims; d++) {
    plane_in *= (size_t)p->in[d];
    plane_out *= (size_t)p->out[d];
    taps *= (size_t)p->k[d];
  }
  rows_in = plane_in / (size_t)p->in[last];
  /* N ≥ K past INT32_MAX: the stride no longer depends on N */
  stride_k = tidsp_mlas_sgemm_stride_k(cpg_in, plane_in > INT32_MAX ? INT32_MAX : (int32_t)plane_in);
  for (n = 0; n < p->n; n++) {
    const float *x_n = x + (size_t)n * (size_t)p->c_in * plane_in;
    float *y_n = y + (size_t)n * (size_t)p->c_out * plane_out;
    for (g = 0; g < p->groups; g++) {
      const float *x_g = x_n + (size_t)g * (size_t)cpg_in * plane_in;
      for (co = 0; co < cpg_out; co += nb) {
        float *y_co = y_n + (size_t)(g * cpg_out + co) * plane_out;
        nb = (lanes == 16 || lanes == 8) && cpg_out - co >= ROWS ? ROWS : 1;
        for (i = 0; i < (size_t)nb * plane_out; i++)
          y_co[i] = 0.0f;
        for (d = 0; d < dims; d++)
          t[d] = 0;
        for (kk = 0; kk < taps; kk++) { /* taps in row-major order, as col2im */
          /* A[m][k] = w[g·cpg_in + k][co][tap]; channel co + b's row b·taps further */
          const float *w_m = w + ((size_t)g * (size_t)cpg_in * (size_t)cpg_out + (size_t)co) * taps + kk;
          const int64_t loff = (int64_t)t[last] * p->dil[last] - p->pad_begin[last];
          tap_range(loff, p->stride[last], p->in[last], p->out[last], &lo, &hi);
          for (d = 0; d < last; d++)
            ip[d] = 0;
          for (r = 0; r < rows_in; r++) { /* input rows: every dim but the last */
            int64_t o_row = 0;
            int inside = lo < hi;
            for (d = 0; d < last && inside; d++) {
              const int64_t o = (int64_t)ip[d] * p->stride[d] - p->pad_begin[d] + (int64_t)t[d] * p->dil[d];
              inside = o >= 0 && o < p->out[d];
              o_row = o_row * p->out[d] + o;
            }
            for (iw0 = lo; inside && iw0 < hi; iw0 += COLS) {
              const float *x0 = x_g + r * (size_t)p->in[last] + (size_t)iw0;
              const size_t w_step = (size_t)cpg_out * taps;
              cnt = hi - iw0 < COLS ? hi - iw0 : COLS;
              if (nb == ROWS && lanes == 16)
                column_rows_512(w_m, taps, w_step, x0, plane_in, cpg_in, stride_k, cnt, col);
              else if (nb == ROWS)
                column_rows_256(w_m, taps, w_step, x0, plane_in, cpg_in, stride_k, cnt, col);
              else if (lanes == 16)
                column_row_512(w_m, w_step, x0, plane_in, cpg_in, stride_k, cnt, col);
              else if (lanes == 8)
                column_row_256(w_m, w_step, x0, plane_in, cpg_in, stride_k, cnt, col);
              else
                column_row(w_m, w_step, x0, plane_in, cpg_in, stride_k, cnt, part, col);
              for (b = 0; b < nb; b++) {
                float *y_row = y_co + (size_t)b * plane_out + (size_t)o_row * (size_t)p->out[last];
                const float *c = col + (size_t)b * COLS;
                if (lanes == 16 && p->stride[last] <= 16) {
                  scatter_add_512(y_row + (size_t)((int64_t)iw0 * p->stride[last] + loff), p->stride[last], c, cnt);
                  continue;
                }
                for (j = 0; j < cnt; j++) {
                  float *o = y_row + (size_t)((int64_t)(iw0 + j) * p->stride[last] + loff);
                  *o = *o + c[j];
                }
              }
            }
            for (d = last - 1; d >= 0; d--) {
              if (++ip[d] < p->in[d])
                break;
              ip[d] = 0;
            }
          }
          for (d = last; d >= 0; d--) {
            if (++t[d] < p->k[d])
              break;
            t[d] = 0;
          }
        }
      }
    }
    if (bias) {
      for (co = 0; co < p->c_out; co++) {
        float *y_co = y_n + (size_t)co * plane_out;
        for (i = 0; i < plane_out; i++)
          y_co[i] = y_co[i] + bias[co];
      }
    }
  }
}

/* lanes: 16 (AVX-512F), 8 (AVX2 + FMA3), anything else the scalar
 * column_row; every one gives the same bytes (the order is MLAS's SGEMM
 * stride, not the vector width). */
int32_t tidsp_conv_transpose_nd_f32__host_mlas_lanes(const tidsp_conv_transpose_nd_params *p, const float *x,
                                                     const float *w, const float *bias, float *y, int32_t lanes) {
  size_t plane_in = 1, taps = 1;
  int32_t d;
  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  if (tidsp_ref_conv_transpose_nd_check(p) != TIDSP_OK)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < p->dims; d++) {
    plane_in *= (size_t)p->in[d];
    taps *= (size_t)p->k[d];
  }
  if (!matched((size_t)(p->c_out / p->groups) * taps, plane_in, p->c_in / p->groups))
    return tidsp_conv_transpose_nd_f32__ref(p, x, w, bias, y);
  convt(p, x, w, bias, y, lanes);
  return TIDSP_OK;
}

int32_t tidsp_conv_transpose_nd_f32__host_mlas(const tidsp_conv_transpose_nd_params *p, const float *x,
                                               const float *w, const float *bias, float *y) {
  return tidsp_conv_transpose_nd_f32__host_mlas_lanes(p, x, w, bias, y, tidsp_mlas_f32_block());
}

/* The 2-D kernel: the same walk with two spatial dims (the fallback keeps
 * the 2-D reference, whose bytes the N-D one equals). */
int32_t tidsp_conv_transpose2d_f32__host_mlas_lanes(const tidsp_conv2d_params *p, const float *x, const float *w,
                                                    const float *bias, float *y, int32_t lanes) {
  tidsp_conv_transpose_nd_params q;
  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  if (tidsp_ref_conv_transpose2d_check(p) != TIDSP_OK)
    return TIDSP_ERR_SHAPE;
  if (!matched((size_t)(p->c_out / p->groups) * (size_t)p->k_h * (size_t)p->k_w,
               (size_t)p->h_in * (size_t)p->w_in, p->c_in / p->groups))
    return tidsp_conv_transpose2d_f32__ref(p, x, w, bias, y);
  memset(&q, 0, sizeof q);
  q.n = p->n, q.c_in = p->c_in, q.c_out = p->c_out, q.groups = p->groups, q.dims = 2;
  q.in[0] = p->h_in, q.in[1] = p->w_in, q.out[0] = p->h_out, q.out[1] = p->w_out;
  q.k[0] = p->k_h, q.k[1] = p->k_w, q.stride[0] = p->stride_h, q.stride[1] = p->stride_w;
  q.dil[0] = p->dil_h, q.dil[1] = p->dil_w, q.pad_begin[0] = p->pad_top, q.pad_begin[1] = p->pad_left;
  convt(&q, x, w, bias, y, lanes);
  return TIDSP_OK;
}

int32_t tidsp_conv_transpose2d_f32__host_mlas(const tidsp_conv2d_params *p, const float *x, const float *w,
                                              const float *bias, float *y) {
  return tidsp_conv_transpose2d_f32__host_mlas_lanes(p, x, w, bias, y, tidsp_mlas_f32_block());
}

#include "fma_exact_end.h"
#endif
