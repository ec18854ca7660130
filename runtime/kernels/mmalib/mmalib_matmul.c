/*
 * mmalib_matmul.c — mmalib_matmul_{i8,i16} (A[M][K]·B[K][N], one scalar
 * shift, no bias: the int16 legalize path) and mmalib_matmul_bias_{i8,i16}
 * (the FC: input[M][K] against weights[N][K], per-output-channel
 * requantization). Same arithmetic and rounding as the convs (mmalib.h).
 *
 * The int8 FC runs through the dispatched tidsp_matmul_i8 when that is
 * exact (mmalib_i8_dispatched.c): its W is [N][K], the FC's own layout.
 * mmalib_matmul_i8 stays scalar: its B is [K][N], which tidsp_matmul_i8
 * could only take transposed, i.e. copied at every call; and the compiler
 * emits no int8 plain matmul (its MMALIB matmul offload is the int16 one).
 */
#include "mmalib_internal.h"

/* M, K, N ≥ 1, every operand and the output at most INT32_MAX elements, the
 * data pointers present and 64-byte aligned. */
static int32_t mm_check(const void *a, const void *b, const void *out,
                        int32_t M, int32_t K, int32_t N) {
  if (!mmalib_buffers_ok(a, b, out))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if (M < 1 || K < 1 || N < 1 || (int64_t)M * K > INT32_MAX ||
      (int64_t)K * N > INT32_MAX || (int64_t)M * N > INT32_MAX)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  return TIDSP_MMALIB_OK;
}

int32_t mmalib_matmul_i8(const int8_t *src0, const int8_t *src1, int8_t *dst,
                         int32_t M, int32_t K, int32_t N, int32_t shift) {
  int32_t m, n, k;
  int32_t st = mm_check(src0, src1, dst, M, K, N);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if (K > MMALIB_I8_MAX_REDUCTION || shift < 0 ||
      shift > TIDSP_MMALIB_MAX_SHIFT)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  for (m = 0; m < M; m++) {
    for (n = 0; n < N; n++) {
      int32_t acc = 0;
      for (k = 0; k < K; k++)
        acc += (int32_t)src0[(size_t)m * (size_t)K + (size_t)k] * src1[(size_t)k * (size_t)N + (size_t)n];
      dst[(size_t)m * (size_t)N + (size_t)n] = mmalib_sat_i8(mmalib_round_shift(acc, shift));
    }
  }
  return TIDSP_MMALIB_OK;
}

int32_t mmalib_matmul_i16(const int16_t *src0, const int16_t *src1,
                          int16_t *dst, int32_t M, int32_t K, int32_t N,
                          int32_t shift) {
  int32_t m, n, k;
  int32_t st = mm_check(src0, src1, dst, M, K, N);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if (shift < 0 || shift > TIDSP_MMALIB_MAX_SHIFT)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  for (m = 0; m < M; m++) {
    for (n = 0; n < N; n++) {
      int64_t acc = 0;
      for (k = 0; k < K; k++)
        acc += (int32_t)src0[(size_t)m * (size_t)K + (size_t)k] * src1[(size_t)k * (size_t)N + (size_t)n];
      dst[(size_t)m * (size_t)N + (size_t)n] = mmalib_sat_i16(mmalib_round_shift(acc, shift));
    }
  }
  return TIDSP_MMALIB_OK;
}

void tidsp_mmalib_matmul_bias_i8_scalar(const int8_t *input,
                                        const int8_t *weights,
                                        const int32_t *bias,
                                        const uint8_t *scale,
                                        const uint8_t *shift, int8_t *output,
                                        int32_t M, int32_t K, int32_t N) {
  int32_t m, n, k;
  for (m = 0; m < M; m++) {
    const int8_t *x = input + (size_t)m * (size_t)K;
    for (n = 0; n < N; n++) {
      const int8_t *w = weights + (size_t)n * (size_t)K;
      int32_t acc = 0; /* exact: K ≤ MMALIB_I8_MAX_REDUCTION */
      for (k = 0; k < K; k++)
        acc += (int32_t)x[k] * w[k];
      output[(size_t)m * (size_t)N + (size_t)n] = mmalib_sat_i8(mmalib_requant(
          (int64_t)acc + (bias ? bias[n] : 0), scale, shift, n));
    }
  }
}

/* mmalib_matmul_bias_i8 and its __ref (the scalar loops only) share one
 * body. */
#define FC_I8_PARAMS MMALIB_I8_PTR_PARAMS(weights), int32_t M, int32_t K,     \
  int32_t N

static int32_t matmul_bias_i8(int on_ref, FC_I8_PARAMS) {
  int32_t st = mm_check(input, weights, output, M, K, N);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if (K > MMALIB_I8_MAX_REDUCTION || !tidsp_mmalib_shifts_ok(shift, N))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  (void)tidsp_mmalib_matmul_bias_i8_compute(on_ref, input, weights, bias,
                                            scale, shift, output, M, K, N);
  return TIDSP_MMALIB_OK;
}

#define FC_I8_ARGS MMALIB_I8_PTR_ARGS(weights), M, K, N

MMALIB_ENTRY_PAIR(mmalib_matmul_bias_i8, matmul_bias_i8, FC_I8_PARAMS, FC_I8_ARGS)

int32_t mmalib_matmul_bias_i16(const int16_t *input, const int16_t *weights,
                               const int64_t *bias, const uint8_t *scale,
                               const uint8_t *shift, int16_t *output,
                               int32_t M, int32_t K, int32_t N) {
  int32_t m, n, k;
  int32_t st = mm_check(input, weights, output, M, K, N);
  if (st != TIDSP_MMALIB_OK)
    return st;
  if (!tidsp_mmalib_shifts_ok(shift, N))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  for (m = 0; m < M; m++) {
    const int16_t *x = input + (size_t)m * (size_t)K;
    for (n = 0; n < N; n++) {
      const int16_t *w = weights + (size_t)n * (size_t)K;
      int64_t acc = 0;
      for (k = 0; k < K; k++)
        acc += (int32_t)x[k] * w[k];
      output[(size_t)m * (size_t)N + (size_t)n] = mmalib_sat_i16(mmalib_requant(
          mmalib_add_clamped(acc, bias ? bias[n] : 0), scale, shift, n));
    }
  }
  return TIDSP_MMALIB_OK;
}
