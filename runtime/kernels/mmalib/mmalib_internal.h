/*
 * mmalib_internal.h — what the MMALIB reference kernels share (not public):
 * the one requantization (so every kernel rounds the same way), the
 * pointer-alignment test, the conv geometry check used by conv2d, sliced,
 * grouped_loop and depthwise, and the one int8 conv / FC computation behind
 * them: the dispatched generic kernel when it is bit-exact, else MMALIB's
 * scalar loops.
 */
#ifndef TIDSP_MMALIB_INTERNAL_H
#define TIDSP_MMALIB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cstatic/kernels.h"
#include "cstatic/mmalib.h"

#define MMALIB_I8_MIN (-128)
#define MMALIB_I8_MAX 127
#define MMALIB_I16_MIN (-32768)
#define MMALIB_I16_MAX 32767

/* Longest int8 reduction whose int32 accumulator cannot overflow:
 * 131071 · (−128)·(−128) < 2^31. */
#define MMALIB_I8_MAX_REDUCTION 131071

/* |acc + bias| beyond this saturates any int16 output for every scale ≥ 1
 * and shift ≤ 31 (2^54 / 2^31 = 2^23 > 32767), and ·255 still fits int64. */
#define MMALIB_ACC_CLAMP ((int64_t)1 << 54)

static inline int mmalib_aligned(const void *p) {
  return ((uintptr_t)p & (uintptr_t)(TIDSP_MMALIB_ALIGN - 1)) == 0;
}

/* MMALIB's precondition on a kernel's data buffers (input, weights,
 * output): present and TIDSP_MMALIB_ALIGN-aligned. */
static inline int mmalib_buffers_ok(const void *in, const void *w, const void *out) {
  return in && w && out && mmalib_aligned(in) && mmalib_aligned(w) && mmalib_aligned(out);
}

/* floor(v / 2^s), s in [0, 62], without the implementation-defined right
 * shift of a negative number. */
static inline int64_t mmalib_floor_shift(int64_t v, int32_t s) {
  if (v >= 0)
    return v >> s;
  return -(((-(v + 1)) >> s) + 1);
}

/* floor((v + 2^(s−1)) / 2^s): round half toward +∞; s = 0 is exact. */
static inline int64_t mmalib_round_shift(int64_t v, int32_t s) {
  return mmalib_floor_shift(s > 0 ? v + ((int64_t)1 << (s - 1)) : v, s);
}

static inline int64_t mmalib_clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/* a + b, saturated to ±MMALIB_ACC_CLAMP (the int16 path's int64 bias may be
 * anything; beyond the clamp the output saturates the same either way). */
static inline int64_t mmalib_add_clamped(int64_t a, int64_t b) {
  a = mmalib_clamp64(a, -MMALIB_ACC_CLAMP, MMALIB_ACC_CLAMP);
  b = mmalib_clamp64(b, -MMALIB_ACC_CLAMP, MMALIB_ACC_CLAMP);
  return mmalib_clamp64(a + b, -MMALIB_ACC_CLAMP, MMALIB_ACC_CLAMP);
}

/* The per-channel requantization of mmalib.h, before saturation. NULL
 * scale/shift mean 1/0. acc_bias is within ±MMALIB_ACC_CLAMP. */
static inline int64_t mmalib_requant(int64_t acc_bias, const uint8_t *scale,
                                     const uint8_t *shift, int32_t c) {
  int64_t s = scale ? (int64_t)scale[c] : 1;
  int32_t sh = shift ? (int32_t)shift[c] : 0;
  return mmalib_round_shift(acc_bias * s, sh);
}

static inline int8_t mmalib_sat_i8(int64_t v) {
  return (int8_t)mmalib_clamp64(v, MMALIB_I8_MIN, MMALIB_I8_MAX);
}

static inline int16_t mmalib_sat_i16(int64_t v) {
  return (int16_t)mmalib_clamp64(v, MMALIB_I16_MIN, MMALIB_I16_MAX);
}

/* Every shift[0..n) within [0, TIDSP_MMALIB_MAX_SHIFT] (NULL: all 0). */
int tidsp_mmalib_shifts_ok(const uint8_t *shift, int32_t n);

/* One conv's geometry: c_in is the input channels one output channel reads
 * (C_in/groups for grouped, 1 for depthwise). */
typedef struct tidsp_mmalib_conv_geom {
  int32_t c_in, h_in, w_in, c_out, kh, kw, stride;
  int32_t pad_t, pad_l;
  int32_t h_out, w_out;
} tidsp_mmalib_conv_geom;

/* Fills g and returns 0, or TIDSP_MMALIB_ERR_PRECONDITION for a bad shape:
 * a size < 1, a negative pad, stride_h ≠ stride_w, a kernel larger than the
 * padded input, a tensor over INT32_MAX elements, or a reduction
 * (c_in·kh·kw) over max_reduction. */
int32_t tidsp_mmalib_conv_geom_init(tidsp_mmalib_conv_geom *g, int32_t c_in, int32_t h_in,
                              int32_t w_in, int32_t c_out, int32_t kh,
                              int32_t kw, int32_t stride_h, int32_t stride_w,
                              int32_t pad_t, int32_t pad_b, int32_t pad_l,
                              int32_t pad_r, int64_t max_reduction);

/* ---- the int8 conv and FC after a wrapper's checks ----------------------
 *
 * MMALIB sums int8 products exactly in int32 and adds the bias in int64;
 * the generic tidsp_conv2d_i8 / tidsp_matmul_i8 add the bias into a
 * wrapping int32 accumulator. With x_zp = w_zp = 0, out_zp = 0, zero
 * padding and TIDSP_REQUANT_SCALE_SHIFT (MMALIB's requantization) the two
 * agree exactly when every reachable Σx·w + bias fits int32, i.e. for
 * `taps` products (each in [−128·127, 128·128]):
 *   INT32_MIN + taps·16256 ≤ bias[c] ≤ INT32_MAX − taps·16384  for every c.
 * Then the wrappers run the dispatched kernel (the fast host variants);
 * otherwise, and for a reduction longer than the generic conv accepts,
 * MMALIB's scalar loops. */

/* tidsp_conv2d_i8's reduction limit (kernels.h: c_in/groups·k_h·k_w ≤
 * 33025). */
#define MMALIB_GENERIC_CONV_MAX_TAPS 33025

/* 1 when the bound above holds for bias[0..n) (NULL: all 0). */
int tidsp_mmalib_i8_fits_int32(int64_t taps, const int32_t *bias, int32_t n);

/* A conv of `groups` independent groups, each of geometry g (g->c_in input
 * and g->c_out output channels): group k reads input planes from k·g->c_in
 * and writes output channels from k·g->c_out; kernel is
 * [groups·g->c_out][g->c_in][kh][kw]; bias/scale/shift/output start at the
 * first output channel (NULL bias/scale/shift: 0/1/0). groups = 1 is the
 * plain (or sliced) conv, groups = channels with c_in = c_out = 1 the
 * depthwise one. The caller has checked g, the shifts and that the whole
 * input and output stay within INT32_MAX elements. */

/* Through the dispatched tidsp_conv2d_i8: TIDSP_OK with every output
 * written, or (nothing written) TIDSP_ERR_UNSUPPORTED when the result
 * could differ from MMALIB's (the bound above, or a reduction over
 * MMALIB_GENERIC_CONV_MAX_TAPS), else the kernel's own status. */
int32_t tidsp_mmalib_conv2d_i8_dispatched(const tidsp_mmalib_conv_geom *g,
                                          int32_t groups, const int8_t *input,
                                          const int8_t *kernel,
                                          const int32_t *bias,
                                          const uint8_t *scale,
                                          const uint8_t *shift, int8_t *output);

/* MMALIB's arithmetic by direct loops (the fallback, and the oracle the
 * dispatched path is tested against); any geometry the checks pass. */
void tidsp_mmalib_conv2d_i8_scalar(const tidsp_mmalib_conv_geom *g,
                                   int32_t groups, const int8_t *input,
                                   const int8_t *kernel, const int32_t *bias,
                                   const uint8_t *scale, const uint8_t *shift,
                                   int8_t *output);

/* The pointer arguments of the int8 conv, depthwise and FC wrappers (w:
 * the name of their weights), as parameters and as arguments: each wrapper
 * and its __ref share one body taking on_ref and these. */
#define MMALIB_I8_PTR_PARAMS(w)                                               \
  const int8_t *input, const int8_t *w, const int32_t *bias,                  \
      const uint8_t *scale, const uint8_t *shift, int8_t *output
#define MMALIB_I8_PTR_ARGS(w) input, w, bias, scale, shift, output

/* Defines fn (the dispatched kernels inside, on the host) and fn__ref (the
 * scalar loops only, the same values) as body(0, args…) and
 * body(1, args…); PARAMS and ARGS name the parameter and argument lists. */
#define MMALIB_ENTRY_PAIR(fn, body, PARAMS, ARGS)                             \
  int32_t fn(PARAMS) { return body(0, ARGS); }                                \
  int32_t fn##__ref(PARAMS) { return body(1, ARGS); }

/* The dispatched path when it succeeds, else the scalar one; with on_ref
 * the scalar loops only (a wrapper's <fn>__ref entry: the same values,
 * computed without the CPU-specific variants, for the compiler's constant
 * folding). Returns 1 when the dispatched kernel computed the output, 0
 * when the scalar loops did (for tests; the wrappers succeed either way). */
int tidsp_mmalib_conv2d_i8_compute(int on_ref, const tidsp_mmalib_conv_geom *g,
                                   int32_t groups, const int8_t *input,
                                   const int8_t *kernel, const int32_t *bias,
                                   const uint8_t *scale, const uint8_t *shift,
                                   int8_t *output);

/* The int16 conv after mmalib_conv2d_i16's checks: output channel oc of
 * g->c_out from kernel[oc], bias[oc], scale[oc], shift[oc] (the sliced
 * entry passes each advanced to its first channel). */
void tidsp_mmalib_conv2d_i16_compute(const tidsp_mmalib_conv_geom *g,
                                     const int16_t *input,
                                     const int16_t *kernel, const int64_t *bias,
                                     const uint8_t *scale,
                                     const uint8_t *shift, int16_t *output);

/* The FC output[m][n] = requant_n(Σ_k input[m][k]·weights[n][k] + bias[n])
 * (mmalib_matmul_bias_i8 after its checks), the same three ways. The
 * weights' [N][K] layout is tidsp_matmul_i8's W, so nothing is copied. */
int32_t tidsp_mmalib_matmul_bias_i8_dispatched(
    const int8_t *input, const int8_t *weights, const int32_t *bias,
    const uint8_t *scale, const uint8_t *shift, int8_t *output, int32_t M,
    int32_t K, int32_t N);
void tidsp_mmalib_matmul_bias_i8_scalar(const int8_t *input,
                                        const int8_t *weights,
                                        const int32_t *bias,
                                        const uint8_t *scale,
                                        const uint8_t *shift, int8_t *output,
                                        int32_t M, int32_t K, int32_t N);
int tidsp_mmalib_matmul_bias_i8_compute(int on_ref, const int8_t *input,
                                        const int8_t *weights,
                                        const int32_t *bias,
                                        const uint8_t *scale,
                                        const uint8_t *shift, int8_t *output,
                                        int32_t M, int32_t K, int32_t N);

#endif
