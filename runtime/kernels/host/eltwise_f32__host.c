/*
 * eltwise_f32__host.c — tidsp_binary_f32 (Add, Sub, Mul, Div), tidsp_prelu_f32 and
 * tidsp_unary_f32 (Relu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh,
 * LeakyRelu, Neg, Sqrt, Reciprocal) in AVX-512F and AVX2 vectors, the
 * float elementwise chains of HardSwish / SE blocks (PP-OCR, MTCNN).
 *
 * Bit-exact with ref/binary_f32.c, ref/prelu_f32.c and ref/unary_f32.c: each lane runs the
 * reference's scalar formula (eltwise_f32_body.h, one body for both
 * widths). The broadcast is coalesced into rows along which each operand
 * is contiguous or one value (same shape, a scalar, SE's [N,C,1,1] against
 * [N,C,H,W], a per-channel row); anything else — another stride, Pow, an
 * op without a vector form here (Erf, Gelu, Exp, Sin, Cos), an output that
 * overlaps an operand other than in place, what the reference rejects —
 * runs the reference, which returns the same bytes or status.
 */
#include <string.h>

#include "eltwise_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#include "fma_exact_begin.h"

/* PRelu's code among the binary ops of eltwise_f32_body.h's rows */
#define ELT_PRELU 1000

/* explicit targets as well as the region's pragma: clang ignores
 * `#pragma GCC target` (see matmul_f32__host_mlas.c) */
#define T512 __attribute__((target("avx512f,avx2,fma")))
#define T256 __attribute__((target("avx2,fma")))

/* ---- AVX-512F: 16 lanes ---- */
#define W 16
#define VEC __m512
#define T T512
#define SFX(name) name##_512
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps((p), (v))
#define VSET1(x) _mm512_set1_ps(x)
#define VZERO() _mm512_setzero_ps()
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VSUB(a, b) _mm512_sub_ps((a), (b))
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VDIV(a, b) _mm512_div_ps((a), (b))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VMIN(a, b) _mm512_min_ps((a), (b))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VSQRT(a) _mm512_sqrt_ps(a)
#define VNEG(a)                                                                                                      \
  _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int32_t)0x80000000u)))
#define VSEL_GE0(x, t, f) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), _mm512_setzero_ps(), _CMP_GE_OQ), (f), (t))
#define VSEL_NAN(x, t, f) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (x), _CMP_UNORD_Q), (f), (t))
#include "eltwise_f32_body.h"

/* ---- AVX2 + FMA3: 8 lanes ---- */
#define W 8
#define VEC __m256
#define T T256
#define SFX(name) name##_256
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps((p), (v))
#define VSET1(x) _mm256_set1_ps(x)
#define VZERO() _mm256_setzero_ps()
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VSUB(a, b) _mm256_sub_ps((a), (b))
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VDIV(a, b) _mm256_div_ps((a), (b))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VMIN(a, b) _mm256_min_ps((a), (b))
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VSQRT(a) _mm256_sqrt_ps(a)
#define VNEG(a) _mm256_xor_ps((a), _mm256_set1_ps(-0.0f))
#define VSEL_GE0(x, t, f) _mm256_blendv_ps((f), (t), _mm256_cmp_ps((x), _mm256_setzero_ps(), _CMP_GE_OQ))
#define VSEL_NAN(x, t, f) _mm256_blendv_ps((f), (t), _mm256_cmp_ps((x), (x), _CMP_UNORD_Q))
#include "eltwise_f32_body.h"

/* The last element an operand walk of bc reaches, plus one (strides ≥ 0),
 * or −1 when some stride is negative. */
static int64_t walk_extent(const tidsp_broadcast *bc, const int32_t *stride) {
  int64_t end = 1;
  int32_t d;
  for (d = 0; d < bc->rank; d++) {
    if (stride[d] < 0)
      return -1;
    end += (int64_t)(bc->shape[d] - 1) * stride[d];
  }
  return end;
}

/* Whether operand x (strides `stride` in rows, the coalesced broadcast)
 * may be read by vectors while y is written: it does not overlap y, or it
 * is y itself walked exactly as y is (in place: each element is read
 * before it is written, as in the reference's loop). */
static int operand_ok(const tidsp_broadcast *rows, const int32_t *stride, const float *x, const float *y,
                      int64_t y_len) {
  const int64_t len = walk_extent(rows, stride);
  int64_t dense = 1;
  int32_t d;
  if (len < 0)
    return 0;
  if (x + len <= y || y + y_len <= x)
    return 1;
  if (x != y)
    return 0;
  for (d = rows->rank - 1; d >= 0; d--) {
    if (stride[d] != dense)
      return 0;
    dense *= rows->shape[d];
  }
  return 1;
}

/* True when a broadcast binary call takes the vector path; *rows is then
 * its coalesced broadcast. */
static int bc_fast_ok(const tidsp_broadcast *bc, const float *a, const float *b, const float *y,
                      tidsp_broadcast *rows) {
  tidsp_ref_bc_iter it;
  int64_t y_len = 1;
  int32_t d;
  if (tidsp_ref_binary_begin(&it, bc, a, b, y) != TIDSP_OK)
    return 0;
  if (!tidsp_host_bc_coalesce(bc, rows))
    return 0;
  for (d = 0; d < rows->rank; d++)
    y_len *= rows->shape[d];
  if (y_len > INT32_MAX)
    return 0;
  return operand_ok(rows, rows->a_stride, a, y, y_len) && operand_ok(rows, rows->b_stride, b, y, y_len);
}

static int bin_fast_ok(const tidsp_binary_f32_params *p, const float *a, const float *b, const float *y,
                       tidsp_broadcast *rows) {
  return p && p->op >= TIDSP_BINARY_ADD && p->op <= TIDSP_BINARY_DIV && bc_fast_ok(&p->bc, a, b, y, rows);
}

/* The reference's checks, then whether op has a vector form. */
static int un_fast_ok(const tidsp_unary_f32_params *p, const float *x, const float *y) {
  if (!p || !x || !y || p->n < 0)
    return 0;
  if (p->op == TIDSP_UNARY_CLIP && !(p->lo <= p->hi))
    return 0;
  if (x != y && x < y + p->n && y < x + p->n)
    return 0; /* overlapping but not in place */
  return 1;
}

int32_t T512 tidsp_binary_f32__host_avx512(const tidsp_binary_f32_params *p, const float *a, const float *b,
                                           float *y) {
  tidsp_broadcast rows;
  if (!bin_fast_ok(p, a, b, y, &rows))
    return tidsp_binary_f32__ref(p, a, b, y);
  bin_run_512(p->op, &rows, a, b, y);
  return TIDSP_OK;
}

int32_t T256 tidsp_binary_f32__host_avx2(const tidsp_binary_f32_params *p, const float *a, const float *b,
                                         float *y) {
  tidsp_broadcast rows;
  if (!bin_fast_ok(p, a, b, y, &rows))
    return tidsp_binary_f32__ref(p, a, b, y);
  bin_run_256(p->op, &rows, a, b, y);
  return TIDSP_OK;
}

int32_t T512 tidsp_prelu_f32__host_avx512(const tidsp_broadcast *p, const float *x, const float *slope, float *y) {
  tidsp_broadcast rows;
  if (!p || !bc_fast_ok(p, x, slope, y, &rows))
    return tidsp_prelu_f32__ref(p, x, slope, y);
  bin_run_512(ELT_PRELU, &rows, x, slope, y);
  return TIDSP_OK;
}

int32_t T256 tidsp_prelu_f32__host_avx2(const tidsp_broadcast *p, const float *x, const float *slope, float *y) {
  tidsp_broadcast rows;
  if (!p || !bc_fast_ok(p, x, slope, y, &rows))
    return tidsp_prelu_f32__ref(p, x, slope, y);
  bin_run_256(ELT_PRELU, &rows, x, slope, y);
  return TIDSP_OK;
}

int32_t T512 tidsp_unary_f32__host_avx512(const tidsp_unary_f32_params *p, const float *x, float *y) {
  if (un_fast_ok(p, x, y) && un_run_512(p, x, y))
    return TIDSP_OK;
  return tidsp_unary_f32__ref(p, x, y);
}

int32_t T256 tidsp_unary_f32__host_avx2(const tidsp_unary_f32_params *p, const float *x, float *y) {
  if (un_fast_ok(p, x, y) && un_run_256(p, x, y))
    return TIDSP_OK;
  return tidsp_unary_f32__ref(p, x, y);
}

#include "fma_exact_end.h"
#endif
