/*
 * conv_transpose2d_f32__host_mlas.c — tidsp_conv_transpose2d_f32
 * (ref/conv_transpose2d_f32.c) summed in the order of ONNX Runtime's float
 * ConvTranspose (CPU provider, 1 intra-op thread), so that a float network
 * is bit-identical to ORT on the same CPU.
 *
 * ORT computes, per image and per group, a GEMM into a column buffer and
 * then scatters it with col2im:
 *
 *   col[m][i] = Σ_k A[m][k]·X[k][i]   m = (c_out of the group, kh, kw),
 *                                     k = c_in of the group, i = (ih, iw);
 *   y = 0, then y[co][oh][ow] += col[(co, kh, kw)][(ih, iw)] for the taps
 *       that land on (oh, ow), kernel rows then kernel columns (every one of
 *       ORT's col2im loops walks the taps of a channel in that order);
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
 * computes the column values where they land, one input row at a time, in
 * a stack buffer instead of ORT's whole column buffer (no malloc); a tap
 * that lands outside the output is never computed (ORT computes and drops
 * it).
 *
 * Not matched, so they run the reference: a GEMM with M = 1 or N = 1 and
 * K > 1 (MLAS's matrix-vector kernels; with K = 1 every kernel rounds the
 * one product alike), and CPUs without FMA (tidsp_mlas_f32_block() = 0:
 * MLAS's SSE/AVX kernels multiply and add separately).
 *
 * Verified against ORT 1.30 (AVX-512F) on single ConvTranspose models
 * (tests/e2e/test_conv_mlas_vs_ort.py) and PP-OCR det; checked against a
 * scalar model of this order in tests/unit/test_kernel_mlas_f32.c.
 */
#include <math.h>

#include "../kernel_variants.h"
#include "../ref/conv_internal.h"

#if TIDSP_HAVE_HOST_X86
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

int32_t tidsp_conv_transpose2d_f32__host_mlas(const tidsp_conv2d_params *p, const float *x,
                                              const float *w, const float *bias, float *y) {
  float part[COLS], col[COLS];
  int32_t n, g, co, kh, kw, ih, iw0, cnt, j, rlo, rhi, clo, chi, cpg_in, cpg_out, stride_k;
  size_t plane_in, plane_out, ksz, gemm_m, i;

  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  if (tidsp_ref_conv_transpose2d_check(p) != TIDSP_OK)
    return TIDSP_ERR_SHAPE;
  cpg_in = p->c_in / p->groups;
  cpg_out = p->c_out / p->groups;
  ksz = (size_t)p->k_h * (size_t)p->k_w;
  gemm_m = (size_t)cpg_out * ksz;
  plane_in = (size_t)p->h_in * (size_t)p->w_in; /* the GEMM's N */
  if (tidsp_mlas_f32_block() == 0 || ((gemm_m == 1 || plane_in == 1) && cpg_in > 1))
    return tidsp_conv_transpose2d_f32__ref(p, x, w, bias, y);
  /* N ≥ K past INT32_MAX: the stride no longer depends on N */
  stride_k = tidsp_mlas_sgemm_stride_k(cpg_in, plane_in > INT32_MAX ? INT32_MAX : (int32_t)plane_in);
  plane_out = (size_t)p->h_out * (size_t)p->w_out;
  for (n = 0; n < p->n; n++) {
    const float *x_n = x + (size_t)n * (size_t)p->c_in * plane_in;
    float *y_n = y + (size_t)n * (size_t)p->c_out * plane_out;
    for (g = 0; g < p->groups; g++) {
      const float *x_g = x_n + (size_t)g * (size_t)cpg_in * plane_in;
      for (co = 0; co < cpg_out; co++) {
        float *y_co = y_n + (size_t)(g * cpg_out + co) * plane_out;
        for (i = 0; i < plane_out; i++)
          y_co[i] = 0.0f;
        for (kh = 0; kh < p->k_h; kh++) {
          const int64_t roff = (int64_t)kh * p->dil_h - p->pad_top;
          tap_range(roff, p->stride_h, p->h_in, p->h_out, &rlo, &rhi);
          for (kw = 0; kw < p->k_w; kw++) {
            const int64_t coff = (int64_t)kw * p->dil_w - p->pad_left;
            /* A[m][k] = w[g·cpg_in + k][co][kh][kw] */
            const float *w_m = w + ((size_t)g * (size_t)cpg_in * (size_t)cpg_out + (size_t)co) * ksz +
                               (size_t)(kh * p->k_w + kw);
            tap_range(coff, p->stride_w, p->w_in, p->w_out, &clo, &chi);
            for (ih = rlo; ih < rhi; ih++) {
              float *y_row = y_co + (size_t)((int64_t)ih * p->stride_h + roff) * (size_t)p->w_out;
              for (iw0 = clo; iw0 < chi; iw0 += COLS) {
                cnt = chi - iw0 < COLS ? chi - iw0 : COLS;
                column_row(w_m, (size_t)cpg_out * ksz, x_g + (size_t)ih * (size_t)p->w_in + (size_t)iw0,
                           plane_in, cpg_in, stride_k, cnt, part, col);
                for (j = 0; j < cnt; j++) {
                  float *o = y_row + (size_t)((int64_t)(iw0 + j) * p->stride_w + coff);
                  *o = *o + col[j];
                }
              }
            }
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
  return TIDSP_OK;
}

#pragma GCC pop_options
#endif
