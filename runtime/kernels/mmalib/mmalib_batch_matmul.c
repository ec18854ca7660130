/*
 * mmalib_batch_matmul.c — mmalib_batch_matmul_i16 (mmalib.h): attention's
 * batched products (Q·Kᵀ, A·V of every window and head) as one
 * mmalib_matmul_i16 per batch, as mmalib_conv2d_grouped.c loops over
 * groups. Every batch has the same geometry, so the checks are done once,
 * up front: a stride that would misalign a later batch is refused before
 * anything is written.
 */
#include "mmalib_internal.h"

int32_t mmalib_batch_matmul_i16(const int16_t *src0, const int16_t *src1,
                                int16_t *dst, int32_t batch, int32_t M,
                                int32_t K, int32_t N, int32_t shift,
                                int32_t a_batch_stride,
                                int32_t b_batch_stride) {
  int32_t b, st;
  if (!mmalib_buffers_ok(src0, src1, dst) || batch < 1 || M < 1 || K < 1 ||
      N < 1 || a_batch_stride < 0 || b_batch_stride < 0)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  /* each batch's matrices 64-byte aligned, as the first ones (mm_check) */
  if (((size_t)a_batch_stride * sizeof(int16_t)) % 64 ||
      ((size_t)b_batch_stride * sizeof(int16_t)) % 64 ||
      ((size_t)M * (size_t)N * sizeof(int16_t)) % 64)
    return TIDSP_MMALIB_ERR_PRECONDITION;
  if ((a_batch_stride && a_batch_stride < (int64_t)M * K) ||
      (b_batch_stride && b_batch_stride < (int64_t)K * N))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  for (b = 0; b < batch; b++) {
    st = mmalib_matmul_i16(src0 + (size_t)b * (size_t)a_batch_stride,
                           src1 + (size_t)b * (size_t)b_batch_stride,
                           dst + (size_t)b * (size_t)M * (size_t)N, M, K, N,
                           shift);
    if (st != TIDSP_MMALIB_OK)
      return st;
  }
  return TIDSP_MMALIB_OK;
}
