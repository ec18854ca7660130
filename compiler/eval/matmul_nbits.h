/*
 * matmul_nbits.h — ONNX Runtime's MatMulNBits (bits 8, block 32,
 * accuracy_level 4: MLAS's CompInt8 path) as the compiler folds it.
 *
 * ORT rewrites a float MatMul whose B is DequantizeLinear of a 2-D int8
 * constant (per tensor, or per output column) into MatMulNBits, and that
 * kernel quantizes A at run time: each row's block of 32 values gets
 * s_a = fl(amax / 127) and q_a = round-half-even(fl(a · fl(127 / amax))).
 * The integer dot product runs on the weights made unsigned (w + 128, zero
 * point z + 128), and the zero point comes back as a float correction:
 *
 *   y = fl( fl( fl(dot_u · fl(s_a · s_b)) + bias ) + fl( fl(s_a · Σq_a) · fl(−s_b · z_u) ) )
 *
 * (MLAS: the int8 GEMM kernel adds the bias, then an SGEMM over the blocks
 * adds A's scaled block sums times B's block sums.) Measured on ORT 1.30
 * (AVX-512 VNNI, 1 thread): 100 % of the outputs equal for K ≤ 4. For a
 * larger K the kernel converts its int32 partial sums to float lane by
 * lane before adding them, in an order not modelled here, so
 * MarkMatMulNBits leaves those MatMuls to the float fold.
 */
#ifndef CSTATIC_MATMUL_NBITS_H
#define CSTATIC_MATMUL_NBITS_H

#include <stdint.h>

#include "ir.h"

/* The largest K the model above is exact for (one 4-byte VNNI group). */
#define CS_NBITS_MAX_K 4

/* The weight of one MatMulNBits: w[k][n] (nk = 0) or w[n][k] (nk = 1),
 * int8 (is_signed) or uint8; scale and zero point per tensor (count 1) or
 * per output column (count n); zp NULL means 0. */
typedef struct {
  const void *w;
  int is_signed;
  int nk;
  const float *scale;
  const void *zp;
  int32_t count;
} cs_nbits_weight;

/* y[rows][n] = A[rows][k] · W + bias (bias[n] or NULL), as MatMulNBits
 * computes it (above). k must be ≤ CS_NBITS_MAX_K. */
void cs_matmul_nbits_eval(const float *a, int64_t rows, int32_t k, int32_t n, const cs_nbits_weight *w,
                          const float *bias, float *y);

/* FoldConstant's hook: node n is a k_matmul_f32 marked by MarkMatMulNBits
 * ("ort_nbits"): compute its output from in[] (A, B, bias) and the int8
 * weight the mark names. Returns 1 when done, 0 when n is not marked. */
int cs_fold_matmul_nbits(const cs_graph *g, const cs_node *n, const void *const *in, void *const *out);

#endif
