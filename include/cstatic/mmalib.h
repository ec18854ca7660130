/*
 * mmalib.h — the MMALIB offload kernels, by the exact extern names and
 * argument orders of spec/mmalib-integration.txt and
 * spec/te-extern-dispatch.txt (the symbols a C7x firmware exports), with
 * portable C99 reference implementations of MMALIB's arithmetic
 * (runtime/kernels/mmalib/). These are the spec's extern ABI, so they take
 * positional int32 sizes instead of a parameter struct (STYLE.md's stated
 * exception) and carry no tidsp_ prefix.
 *
 * Layouts (batch 1 everywhere except max pool, which takes N):
 *   activations  NCHW, each channel a contiguous H×W plane
 *   conv weights OIHW [C_out][C_in][KH][KW]; grouped: [C_out][C_in/g][KH][KW]
 *   depthwise    [C][1][KH][KW]
 *   FC weights   [N][K] (the matmul_bias input is [M][K], output [M][N])
 *   matmul       A [M][K] · B [K][N], both row-major, B not transposed
 *   output       compact NCHW / row-major — the depthwise output included
 *
 * Requantization, per output channel c (conv, depthwise, matmul_bias):
 *
 *   v   = (acc + bias[c]) · scale[c]                 exact, 64-bit
 *   out = sat( floor((v + R) / 2^shift[c]) ),  R = 2^(shift[c]−1) if shift > 0
 *                                                   else 0
 *
 * i.e. round half toward +∞ ("half up": 2.5 → 3, −2.5 → −2), as the fork's
 * conv does (the exact-equality grouped_loop test). sat clamps to the output
 * dtype's full range; ReLU is never applied through it. acc is the exact
 * sum of int8·int8 (int32, as on the MMA) or int16·int16 (int64) products;
 * padded taps contribute 0 (MMALIB's pad fill). matmul (no bias) is the same
 * with scale 1 and one scalar shift for every element.
 *
 *   A NULL bias / scale / shift means 0 / 1 / 0 for every channel (the
 *   un-quantized int16 legalize path passes only data and weights), except
 *   in mmalib_conv2d_i8_grouped_loop, where NULL is a precondition failure.
 *   scale is the full uint8 range [0, 255]; shift must be in [0, 31]
 *   (_float_to_scale_shift's range) — a larger shift is a precondition
 *   failure, checked before anything is written.
 *
 * For the compiler (meeting "≤ 1 LSB from the exact float reference"): with
 * the real multiplier r = d_s·w_s[c]/o_s and the bias folded in accumulator
 * units, the kernel error is |acc'|·|scale/2^shift − r| plus ≤ 0.5 from the
 * half-up rounding. Normalizing scale into [128, 255] (relative error
 * ≤ 2^−9, i.e. ≤ 0.25 LSB on any unsaturated int8 output) keeps the total
 * ≤ 1 LSB; the fork's s ∈ [1, 127] (≤ 2^−8) can reach 1 LSB + the bias's
 * own rounding, which is why the fork accepts 2.
 *
 * Zero points and padding: padded taps are 0, not the input zero point. The
 * fork folds −d_zp·Σw into bias over all taps, which is exact only when the
 * layer has no padding or d_zp == 0 (the PT2E C7xMMAQuantizer is
 * symmetric); otherwise the compiler must pad explicitly with d_zp first or
 * not offload the layer.
 *
 * Alignment: the data pointers (input, weights, output; src0, src1, dst) must
 * be TIDSP_MMALIB_ALIGN (64)-byte aligned, MMA's requirement; the planner
 * gives intermediate activations TIDSP_MMALIB_ACT_ALIGN (128) bytes (the
 * spec's choice, a multiple of 64). bias/scale/shift have no alignment rule
 * (the sliced kernel advances them by oc_start). The residual add and max
 * pool are not MMA kernels and require no alignment.
 *
 * Depthwise output row stride: MMALIB writes each output row at a stride
 * rounded up to 64 bytes (TIDSP_MMALIB_DW_ROW_STRIDE) and the fork compacts
 * through a workspace when that differs from W_out·elem. These references
 * produce the compacted result directly — each output element is computed
 * once and stored at its final compact NCHW position — so they need no
 * scratch and write exactly C·H_out·W_out elements. A device build that
 * keeps MMALIB's padded rows needs C·H_out·TIDSP_MMALIB_DW_ROW_STRIDE bytes
 * of workspace from the planner.
 *
 * Return values: TIDSP_MMALIB_OK (0); TIDSP_MMALIB_ERR_PRECONDITION (−1) for
 * a NULL or misaligned pointer, a bad shape/geometry, bad groups or a shift
 * out of range; TIDSP_MMALIB_ERR_NOT_IMPLEMENTED (6, MMALIB's own
 * MMALIB_ERR_NOT_IMPLEMENTED) for int16 depthwise kernels other than 3×3
 * (MMALIB-882). Every precondition is checked before the first store, so a
 * failing call leaves the output untouched. Nothing allocates or aborts.
 */
#ifndef CSTATIC_MMALIB_H
#define CSTATIC_MMALIB_H

#include <stdint.h>

#include "cstatic/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TIDSP_MMALIB_OK 0
#define TIDSP_MMALIB_ERR_PRECONDITION (-1)
#define TIDSP_MMALIB_ERR_NOT_IMPLEMENTED 6

#define TIDSP_MMALIB_ALIGN 64
#define TIDSP_MMALIB_ACT_ALIGN 128
#define TIDSP_MMALIB_MAX_SHIFT 31

/* Bytes between MMALIB's depthwise output rows: W_out·elem_bytes rounded up
 * to 64. */
#define TIDSP_MMALIB_DW_ROW_STRIDE(w_out, elem_bytes) \
  ((((int64_t)(w_out) * (elem_bytes)) + 63) / 64 * 64)

/* ---- conv2d: H_out = (H_in + pad_top + pad_bottom − KH) / stride_h + 1
 * (integer division, and likewise W_out); stride_h must equal stride_w;
 * every size ≥ 1, pads ≥ 0, H_in + pads ≥ KH. i8: C_in·KH·KW ≤ 131071 so
 * that the int32 accumulator cannot overflow. */
int32_t mmalib_conv2d_i8(const int8_t *input, const int8_t *kernel,
                         const int32_t *bias, const uint8_t *scale,
                         const uint8_t *shift, int8_t *output, int32_t C_in,
                         int32_t H_in, int32_t W_in, int32_t C_out, int32_t KH,
                         int32_t KW, int32_t stride_h, int32_t stride_w,
                         int32_t pad_top, int32_t pad_bottom, int32_t pad_left,
                         int32_t pad_right);

int32_t mmalib_conv2d_i16(const int16_t *input, const int16_t *kernel,
                          const int64_t *bias, const uint8_t *scale,
                          const uint8_t *shift, int16_t *output, int32_t C_in,
                          int32_t H_in, int32_t W_in, int32_t C_out, int32_t KH,
                          int32_t KW, int32_t stride_h, int32_t stride_w,
                          int32_t pad_top, int32_t pad_bottom,
                          int32_t pad_left, int32_t pad_right);

/* Output channels [oc_start, oc_start + C_out_tile) of a conv whose weights
 * do not fit in L2 with its input (InjectMMALIBDMA's slicing). `kernel` is
 * the weight tile [C_out_tile][C_in][KH][KW] (already staged); bias, scale,
 * shift and output are the whole layer's arrays and are advanced here by
 * oc_start (4 / 1 / 1 / H_out·W_out bytes per channel). input, kernel and the
 * un-advanced output must be 64-byte aligned. oc_start ≥ 0. */
int32_t mmalib_conv2d_i8_sliced(const int8_t *input, const int8_t *kernel,
                                const int32_t *bias, const uint8_t *scale,
                                const uint8_t *shift, int8_t *output,
                                int32_t C_in, int32_t H_in, int32_t W_in,
                                int32_t C_out_tile, int32_t KH, int32_t KW,
                                int32_t stride_h, int32_t stride_w,
                                int32_t pad_top, int32_t pad_bottom,
                                int32_t pad_left, int32_t pad_right,
                                int32_t oc_start);

/* The int16 twin (the exact path's conv, -mmalib-exact): bias int64 (8
 * bytes per channel), output int16 (2 bytes per H_out·W_out element). */
int32_t mmalib_conv2d_i16_sliced(const int16_t *input, const int16_t *kernel,
                                 const int64_t *bias, const uint8_t *scale,
                                 const uint8_t *shift, int16_t *output,
                                 int32_t C_in, int32_t H_in, int32_t W_in,
                                 int32_t C_out_tile, int32_t KH, int32_t KW,
                                 int32_t stride_h, int32_t stride_w,
                                 int32_t pad_top, int32_t pad_bottom,
                                 int32_t pad_left, int32_t pad_right,
                                 int32_t oc_start);

/* A grouped conv as one conv per group (never MMALIB numGroupsPerKernel).
 * Requires 1 < groups ≠ C_in, groups dividing C_in and C_out; kernel is
 * [C_out][C_in/groups][KH][KW]; bias, scale, shift must not be NULL. All
 * checks precede the first group, so no group can fail part-way (the fork
 * zero-fills failing groups; here a failure writes nothing). */
int32_t mmalib_conv2d_i8_grouped_loop(
    const int8_t *input, const int8_t *kernel, const int32_t *bias,
    const uint8_t *scale, const uint8_t *shift, int8_t *output, int32_t C_in,
    int32_t H_in, int32_t W_in, int32_t C_out, int32_t KH, int32_t KW,
    int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_bottom,
    int32_t pad_left, int32_t pad_right, int32_t groups);

/* ---- depthwise conv2d: weights [channels][1][KH][KW], num_groups must equal
 * channels; square kernel; stride_h == stride_w ∈ {1, 2}. i8: KH ∈ {3, 5, 7},
 * stride 2 only with KH ≤ 5. i16: 3×3 only — any other square kernel that
 * passes the geometry checks returns TIDSP_MMALIB_ERR_NOT_IMPLEMENTED
 * (MMALIB-882). The output is compact NCHW
 * (see "Depthwise output row stride" above). */
int32_t mmalib_depthwise_conv2d_i8(const int8_t *input, const int8_t *weights,
                                   const int32_t *bias, const uint8_t *scale,
                                   const uint8_t *shift, int8_t *output,
                                   int32_t channels, int32_t H_in,
                                   int32_t W_in, int32_t KH, int32_t KW,
                                   int32_t stride_h, int32_t stride_w,
                                   int32_t pad_t, int32_t pad_b, int32_t pad_l,
                                   int32_t pad_r, int32_t num_groups);

/* The int16 kernel also takes negative pads: a crop. pad_t = −r reads the
 * input from row r on (likewise pad_b from the end, pad_l/pad_r the
 * columns), so the call runs on the window [−pad_t, H_in + pad_b) ×
 * [−pad_l, W_in + pad_r) of the input, its rows still W_in apart and its
 * channels H_in·W_in apart; a positive pad on the other side is zero rows
 * as usual. The window must hold at least one row and column. The exact
 * path's 5×5/7×7 depthwise tiles read their windows this way instead of
 * sliced copies; on the C7x the staging DMA moves the window (its source
 * pitches are the input's), so MMALIB itself sees a dense input. */
#define TIDSP_MMALIB_CROP_LEN(n, pad_before, pad_after)                    \
  ((int64_t)(n) - ((pad_before) < 0 ? -(int64_t)(pad_before) : 0) -       \
   ((pad_after) < 0 ? -(int64_t)(pad_after) : 0)) /* the rows it reads */
int32_t mmalib_depthwise_conv2d_i16(const int16_t *input,
                                    const int16_t *weights,
                                    const int64_t *bias, const uint8_t *scale,
                                    const uint8_t *shift, int16_t *output,
                                    int32_t channels, int32_t H_in,
                                    int32_t W_in, int32_t KH, int32_t KW,
                                    int32_t stride_h, int32_t stride_w,
                                    int32_t pad_t, int32_t pad_b,
                                    int32_t pad_l, int32_t pad_r,
                                    int32_t num_groups);

/* ---- matmul: dst[M][N] = sat(round_half_up(A·B / 2^shift)), shift ∈
 * [0, 31]. i8: K ≤ 131071. The spec's K/N multiples (64 / 32) are offload
 * eligibility rules of the compiler, not needed by these references. */
int32_t mmalib_matmul_i8(const int8_t *src0, const int8_t *src1, int8_t *dst,
                         int32_t M, int32_t K, int32_t N, int32_t shift);

int32_t mmalib_matmul_i16(const int16_t *src0, const int16_t *src1,
                          int16_t *dst, int32_t M, int32_t K, int32_t N,
                          int32_t shift);

/* mmalib_matmul_i16 on `batch` pairs: dst[b] = src0[b]·src1[b] with
 * src0[b] = src0 + b·a_batch_stride, src1[b] = src1 + b·b_batch_stride
 * (elements; 0 broadcasts that operand), dst dense [batch][M][N]. One
 * check up front covers every batch (the strides keep each 64-byte
 * aligned), so no batch fails after another has written. */
int32_t mmalib_batch_matmul_i16(const int16_t *src0, const int16_t *src1,
                                int16_t *dst, int32_t batch, int32_t M,
                                int32_t K, int32_t N, int32_t shift,
                                int32_t a_batch_stride,
                                int32_t b_batch_stride);

/* ---- matmul_bias (FC): output[m][n] = requant_n(Σ_k input[m][k] ·
 * weights[n][k]); weights in their natural [N][K] layout. */
int32_t mmalib_matmul_bias_i8(const int8_t *input, const int8_t *weights,
                              const int32_t *bias, const uint8_t *scale,
                              const uint8_t *shift, int8_t *output, int32_t M,
                              int32_t K, int32_t N);

int32_t mmalib_matmul_bias_i16(const int16_t *input, const int16_t *weights,
                               const int64_t *bias, const uint8_t *scale,
                               const uint8_t *shift, int16_t *output,
                               int32_t M, int32_t K, int32_t N);

/* ---- residual add (ti_residual_add.py). The params blob, 16 bytes,
 * little-endian (the native order of every supported target):
 *
 *    0      4         8       12    13      14     15
 *   +------+---------+-------+-----+-------+------+---+
 *   | m_x  | m_skip  | shift |zp_x |zp_skip|zp_out| 0 |
 *   +------+---------+-------+-----+-------+------+---+
 *     i32     i32       i32    i8     i8     i8    u8
 *
 *   acc = (x − zp_x)·m_x + (skip − zp_skip)·m_skip          (exact, int64)
 *   r   = floor((acc + 2^(shift−1)) / 2^shift) + zp_out     (half up, as the
 *                                                            conv; shift 0:
 *                                                            no rounding term)
 *   relu: r = max(r, zp_out)   — the quantized zero, not 0
 *   out = sat(r)
 *
 * Two fork defects are corrected here: the fork floors (no rounding term)
 * and clamps ReLU at 0 instead of zp_out (and its int16 ReLU clips nothing).
 * shift ∈ [0, 62]; the reserved byte must be 0; n ≥ 0; has_relu ≠ 0 means
 * ReLU. Elementwise, so out may alias x or skip. Both operand orders are the
 * same call with the roles (m, zp) swapped. The int16 variant uses the same
 * int8 zero-point fields (the spec's int16 path has them all 0). */
typedef struct c7x_residual_add_params {
  int32_t m_x;
  int32_t m_skip;
  int32_t shift;
  int8_t zp_x;
  int8_t zp_skip;
  int8_t zp_out;
  uint8_t reserved;
} c7x_residual_add_params;

/* C99 compile-time check of the 16-byte blob layout. */
typedef char c7x_residual_add_params_is_16_bytes
    [sizeof(c7x_residual_add_params) == 16 ? 1 : -1];

int32_t c7x_int8_residual_add_relu(const int8_t *x, const int8_t *skip,
                                   const c7x_residual_add_params *params,
                                   int8_t *out, int32_t n, int32_t has_relu);

int32_t c7x_int16_residual_add_relu(const int16_t *x, const int16_t *skip,
                                    const c7x_residual_add_params *params,
                                    int16_t *out, int32_t n,
                                    int32_t has_relu);

/* ---- max pool, int8 NCHW [N][C][H][W]: pure max over each window; padding
 * (pH rows above and below, pW columns left and right) acts as −128, and so
 * does any tap past the padded input (ceil-mode windows). Every size ≥ 1,
 * pads ≥ 0, and each window must start inside the input:
 * (H_out − 1)·sH − pH < H_in, likewise for W. No alignment rule.
 * c7x_int8_max_pool_tidl stands in for the TIDL-backed kernel
 * (-tidl-kernels=1) and computes exactly the same values. */
int32_t c7x_int8_max_pool(const int8_t *in, int8_t *out, int32_t N, int32_t C,
                          int32_t H_in, int32_t W_in, int32_t H_out,
                          int32_t W_out, int32_t kH, int32_t kW, int32_t sH,
                          int32_t sW, int32_t pH, int32_t pW);

int32_t c7x_int8_max_pool_tidl(const int8_t *in, int8_t *out, int32_t N,
                               int32_t C, int32_t H_in, int32_t W_in,
                               int32_t H_out, int32_t W_out, int32_t kH,
                               int32_t kW, int32_t sH, int32_t sW, int32_t pH,
                               int32_t pW);

/* ---- the table's rows of this header (cstatic/kernels.def), declared
 * again: a row whose dtypes disagree with a prototype above does not
 * compile. On the host the int8 conv, depthwise, FC and max pool run on the
 * dispatched generic kernels (the fast host variants) when that gives
 * MMALIB's exact values; each also has <fn>__ref (ref INTERNAL in the
 * table), the same checks and values on the reference kernels only, which
 * the compiler folds constants with. The firmware exports only <fn>. */
#define TIDSP_KDECL_IN_MMALIB_H_RUNTIME(decl, ...)
#define TIDSP_KDECL_IN_MMALIB_H_C7X(decl, ...) decl(__VA_ARGS__)
#define TIDSP_KDECL_IN_MMALIB_H_MMALIB(decl, ...) decl(__VA_ARGS__)
#define TIDSP_KDECL_IN_MMALIB_H_TIDL(decl, ...) decl(__VA_ARGS__)
#define TIDSP_KERNEL_EXTERN(NAME, ir, fn, ref, group, n_in, in, opt, out, n_args, args) \
  TIDSP_KDECL_IN_MMALIB_H_##group(TIDSP_KDECL_EXTERN, fn, n_in, in, out, n_args)         \
  TIDSP_KDECL_IN_MMALIB_H_##group(TIDSP_KDECL_REF_##ref, TIDSP_KDECL_EXTERN, fn, n_in, in, out, n_args)
#include "cstatic/kernels.def"

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_MMALIB_H */
