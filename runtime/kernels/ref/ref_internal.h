/*
 * ref_internal.h — helpers shared by the reference kernels (not public).
 *
 * The FLOAT requantization and the QLinear* float formulas must round
 * exactly as ONNX Runtime does, one float operation at a time. A compiler
 * that contracts a·b + c into one fused multiply-add (gcc in GNU mode on an
 * FMA target, clang by default) would change results, so contraction is
 * switched off for every reference kernel; the kernels call fmaf()
 * explicitly where ORT fuses.
 */
#ifndef TIDSP_REF_INTERNAL_H
#define TIDSP_REF_INTERNAL_H

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cstatic/float16.h"
#include "cstatic/kernels.h"
#include "softfloat.h"

#define TIDSP_REF_I8_MIN (-128)
#define TIDSP_REF_I8_MAX 127

/* The largest right shift of the Q31 forms (an int64 product needs no more). */
#define TIDSP_REF_MAX_SHIFT 62

/* ORT's x86 QLinear kernels work on uint8 (it rewrites int8 activations to
 * uint8, q + 128, before fusing), and their float formulas add the output
 * zero point before rounding; the kernels here add the uint8 zero point so
 * that the result rounds the same way. */
#define TIDSP_REF_U8_OFFSET 128

static inline int tidsp_ref_is_i8(int32_t v) {
  return v >= TIDSP_REF_I8_MIN && v <= TIDSP_REF_I8_MAX;
}

/* The int8 output of a quantized elementwise kernel or pool: its clamp
 * [y_min, y_max] is an int8 range, its zero point int8, and the domain
 * offset 0 or 128 (kernels.h "The uint8 domain"). */
static inline int tidsp_ref_i8_output_ok(int32_t y_min, int32_t y_max, int32_t y_zp, int32_t domain_offset) {
  return y_min <= y_max && tidsp_ref_is_i8(y_min) && tidsp_ref_is_i8(y_max) && tidsp_ref_is_i8(y_zp) &&
         (domain_offset == 0 || domain_offset == TIDSP_REF_U8_OFFSET);
}

/* Round to nearest, ties to even, in the default rounding mode (lrintf, as
 * cvtps2dq does). Callers clamp v to a small range first. */
static inline int32_t tidsp_ref_rne(float v) { return (int32_t)lrintf(v); }

static inline int64_t tidsp_ref_clamp_i64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/* floor(v / 2^s) for s in [0, 62], without relying on the implementation-
 * defined right shift of a negative number. */
static inline int64_t tidsp_ref_floor_shift(int64_t v, int32_t s) {
  if (v >= 0)
    return v >> s;
  return -(((-(v + 1)) >> s) + 1);
}

/* round_shift(v, s) = (v + (s > 0 ? 2^(s−1) : 0)) >> s: round half toward
 * +inf. |v| < 2^62 in every caller, so the addition cannot overflow. */
static inline int64_t tidsp_ref_round_shift(int64_t v, int32_t s) {
  int64_t half = s > 0 ? (int64_t)1 << (s - 1) : 0;
  return tidsp_ref_floor_shift(v + half, s);
}

/* rne(v) for |v| < 2^33 in single-precision operations only: no float to
 * int64 conversion, which costs a soft-double library on a core without a
 * double FPU (Cortex-M0/M3/M4/M7-SP: libgcc's __fixsfdi). From 2^30 on a
 * float is a multiple of 2^7, so v·2^−7 is an exact integer below 2^26. */
static inline int64_t tidsp_ref_rne_i64(float v) {
  if (v < 0x1p30f && v > -0x1p30f)
    return (int64_t)lrintf(v);
  return (int64_t)(int32_t)(v * 0x1p-7f) * 128;
}

/* (float)d, rounded to nearest even, for |d| < 2^40, without an int64 to
 * float conversion (libgcc's __floatdisf is soft double on those cores):
 * both halves are exact floats and the one addition rounds once. */
static inline float tidsp_ref_i64_to_f32(int64_t d) {
  const int64_t hi = tidsp_ref_floor_shift(d, 16);
  const int32_t lo = (int32_t)(d - hi * 65536); /* in [0, 65536) */
  return (float)(int32_t)hi * 65536.0f + (float)lo;
}

/* int32 accumulators wrap like ORT's (two's complement, mod 2^32): they are
 * summed as uint32_t, which is defined to wrap, and read back here. */
static inline int32_t tidsp_ref_u32_to_i32(uint32_t u) {
  return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

/* Bits [lo, hi) ∩ [0, 64) of a 64-bit word: the lane masks of the host
 * kernels' 64-byte vectors (the window taps a row of the pool or depthwise
 * conv covers). */
static inline uint64_t tidsp_ref_bits64(int64_t lo, int64_t hi) {
  if (lo < 0)
    lo = 0;
  if (hi > 64)
    hi = 64;
  if (lo >= hi)
    return 0;
  return (hi == 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1);
}

/* Element bytes of a runtime tensor dtype (cast, k_binary); 0 for a dtype
 * these kernels do not take. */
static inline int32_t tidsp_ref_elem_size(int32_t dt) {
  switch (dt) {
  case TIDSP_DTYPE_F32: case TIDSP_DTYPE_I32: case TIDSP_DTYPE_U32: return 4;
  case TIDSP_DTYPE_I8: case TIDSP_DTYPE_U8: case TIDSP_DTYPE_BOOL: return 1;
  case TIDSP_DTYPE_I16: case TIDSP_DTYPE_U16: case TIDSP_DTYPE_F16: case TIDSP_DTYPE_BF16: return 2;
  case TIDSP_DTYPE_I64: case TIDSP_DTYPE_U64: case TIDSP_DTYPE_F64: return 8;
  default: return 0;
  }
}

static inline int tidsp_ref_is_float(int32_t dt) {
  return dt == TIDSP_DTYPE_F32 || dt == TIDSP_DTYPE_F64 || dt == TIDSP_DTYPE_F16 || dt == TIDSP_DTYPE_BF16;
}




/* Element i of an integer (or bool: 0/1) tensor of dtype dt, as int64. */
static inline int64_t tidsp_ref_load_int(const void *x, int32_t dt, ptrdiff_t i) {
  switch (dt) {
  case TIDSP_DTYPE_U32: return ((const uint32_t *)x)[i];
  case TIDSP_DTYPE_I8: return ((const int8_t *)x)[i];
  case TIDSP_DTYPE_U8: return ((const uint8_t *)x)[i];
  case TIDSP_DTYPE_BOOL: return ((const uint8_t *)x)[i] != 0;
  case TIDSP_DTYPE_I16: return ((const int16_t *)x)[i];
  case TIDSP_DTYPE_U16: return ((const uint16_t *)x)[i];
  case TIDSP_DTYPE_I32: return ((const int32_t *)x)[i];
  default: return ((const int64_t *)x)[i];
  }
}

/* v written as element i of an integer (or bool) tensor of dtype dt:
 * wrapped to its width (bool: v != 0). */
static inline void tidsp_ref_store_int(void *y, int32_t dt, ptrdiff_t i, int64_t v) {
  switch (dt) {
  case TIDSP_DTYPE_I8: ((int8_t *)y)[i] = (int8_t)(uint8_t)v; break;
  case TIDSP_DTYPE_U8: ((uint8_t *)y)[i] = (uint8_t)v; break;
  case TIDSP_DTYPE_BOOL: ((uint8_t *)y)[i] = v != 0; break;
  case TIDSP_DTYPE_I16: ((int16_t *)y)[i] = (int16_t)(uint16_t)v; break;
  case TIDSP_DTYPE_U16: ((uint16_t *)y)[i] = (uint16_t)v; break;
  case TIDSP_DTYPE_I32: ((int32_t *)y)[i] = (int32_t)(uint32_t)v; break;
  case TIDSP_DTYPE_U32: ((uint32_t *)y)[i] = (uint32_t)v; break;
  default: ((int64_t *)y)[i] = v; break; /* i64, u64 (the same bits) */
  }
}

/* Element i of a float tensor (or any tensor) of dtype dt as a double:
 * exact for every dtype but int64/uint64 beyond 2^53. */
static inline double tidsp_ref_load_f(const void *x, int32_t dt, ptrdiff_t i) {
  switch (dt) {
  case TIDSP_DTYPE_F32: return (double)((const float *)x)[i];
  case TIDSP_DTYPE_F64: return ((const double *)x)[i];
  case TIDSP_DTYPE_F16: return (double)tidsp_f16_to_f32(((const uint16_t *)x)[i]);
  case TIDSP_DTYPE_BF16: return (double)tidsp_bf16_to_f32(((const uint16_t *)x)[i]);
  case TIDSP_DTYPE_U64: return (double)((const uint64_t *)x)[i];
  default: break;
  }
  {
    const int64_t v = tidsp_ref_load_int(x, dt, i);
    return (double)v;
  }
}

/* v written as element i of a float tensor of dtype dt: one rounding to
 * float (f32), none (f64); f16/bf16 through float as ORT does. */
static inline void tidsp_ref_store_f(void *y, int32_t dt, ptrdiff_t i, double v) {
  switch (dt) {
  case TIDSP_DTYPE_F64: ((double *)y)[i] = v; break;
  case TIDSP_DTYPE_F16: ((uint16_t *)y)[i] = tidsp_f32_to_f16((float)v); break;
  case TIDSP_DTYPE_BF16: ((uint16_t *)y)[i] = tidsp_f32_to_bf16((float)v); break;
  default: ((float *)y)[i] = (float)v; break;
  }
}

/* ------------------------------------------------------------------------
 * Requantization with its per-call constants hoisted out of the loops. */
typedef struct tidsp_ref_rq {
  int32_t kind;
  int32_t per_channel;
  int32_t zp, out_min, out_max;
  float lo, hi; /* FLOAT: clamp bounds out_min − zp, out_max − zp */
  const float *mult;            /* FLOAT */
  const int32_t *qmult, *qshift;
  const uint8_t *scale, *shift; /* SCALE_SHIFT (NULL: 1 / 0) */
} tidsp_ref_rq;

/* Points *plan at params and data (n entries per table: channels when
 * per_channel, else 1), validating nothing: tidsp_ref_rq_init validates
 * first, and the host kernels take only what tidsp_host_conv_fast_ok and
 * its kin have checked. */
static inline void tidsp_ref_rq_fields(tidsp_ref_rq *plan, const tidsp_requant_params *params,
                                       const void *data, int32_t n) {
  plan->kind = params->kind;
  plan->per_channel = params->per_channel != 0;
  plan->zp = params->out_zp;
  plan->out_min = params->out_min;
  plan->out_max = params->out_max;
  plan->lo = (float)(params->out_min - params->out_zp);
  plan->hi = (float)(params->out_max - params->out_zp);
  plan->mult = NULL;
  plan->qmult = NULL;
  plan->qshift = NULL;
  plan->scale = NULL;
  plan->shift = NULL;
  if (params->kind == TIDSP_REQUANT_SCALE_SHIFT) {
    const tidsp_scale_shift *ss = (const tidsp_scale_shift *)data;
    plan->scale = ss->scale;
    plan->shift = ss->shift;
  } else if (params->kind == TIDSP_REQUANT_FLOAT) {
    plan->mult = (const float *)data;
  } else {
    plan->qmult = (const int32_t *)data; /* mult[n] then shift[n] */
    plan->qshift = plan->qmult + n;
  }
}

/* Validates params and data for `channels` channels and an output type of
 * range [type_min, type_max]; fills *plan. */
int32_t tidsp_ref_rq_init(tidsp_ref_rq *plan, const tidsp_requant_params *params,
                          const void *data, int32_t channels, int32_t type_min,
                          int32_t type_max);

/* Requantize acc of channel c (c < channels, checked by the caller). */
static inline int32_t tidsp_ref_rq_apply(const tidsp_ref_rq *plan, int32_t c,
                                         int32_t acc) {
  int32_t ci = plan->per_channel ? c : 0;
  if (plan->kind == TIDSP_REQUANT_SCALE_SHIFT) {
    /* MMALIB's: |acc · scale| < 2^39, exact in int64 */
    int64_t v = (int64_t)acc * (plan->scale ? plan->scale[ci] : 1);
    v = tidsp_ref_round_shift(v, plan->shift ? plan->shift[ci] : 0);
    return (int32_t)tidsp_ref_clamp_i64(v, plan->out_min, plan->out_max);
  }
  if (plan->kind == TIDSP_REQUANT_FLOAT) {
    float v = (float)acc * plan->mult[ci];
    /* MLAS's max_ps/min_ps order: a NaN ends at the lower bound. */
    v = v > plan->lo ? v : plan->lo;
    v = v < plan->hi ? v : plan->hi;
    return tidsp_ref_rne(v) + plan->zp;
  } else {
    /* The same float32 formula in integers (softfloat.h):
     * v = fl(fl(acc) · mult·2^−shift), y = rne(v). */
    tidsp_sf a = tidsp_sf_round(acc, 0);
    tidsp_sf v = tidsp_sf_round(a.m * plan->qmult[ci], a.s + plan->qshift[ci]);
    int64_t y = tidsp_ref_clamp_i64(tidsp_sf_rne_int(v), plan->out_min - plan->zp,
                                    plan->out_max - plan->zp);
    return (int32_t)y + plan->zp;
  }
}

/* ------------------------------------------------------------------------
 * Sliding-window geometry: the outputs o in [0, n_out) whose input index
 * o·stride + off lies in [0, n_in), as the half-open range [*lo, *hi). */
static inline void tidsp_ref_valid_range(int64_t off, int32_t stride,
                                         int32_t n_in, int32_t n_out,
                                         int32_t *lo, int32_t *hi) {
  int64_t first = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t last_in = (int64_t)n_in - 1 - off; /* o·stride ≤ last_in */
  int64_t end = last_in < 0 ? 0 : last_in / stride + 1;
  if (end > n_out)
    end = n_out;
  if (first > end)
    first = end;
  *lo = (int32_t)first;
  *hi = (int32_t)end;
}

/* ------------------------------------------------------------------------
 * Coalescing a strided walk (the host variants' broadcast and data-movement
 * fast paths): shape[0..rank) (outermost first, every dim ≥ 1) and n_st ≤ 2
 * stride arrays step[k][0..rank) are rewritten in place to walk the same
 * elements in the same order with the same offsets in as few dims as
 * possible: dims of size 1 are dropped, and a dim is merged into the next
 * inner one when, for every stride array, stepping it equals stepping the
 * inner one to its end, and the merged size stays ≤ max_len. Returns the
 * new rank, ≥ 1 (a single element: one dim of size 1, strides one_step). */
static inline int32_t tidsp_ref_coalesce(int32_t rank, int64_t shape[], int32_t n_st,
                                         int64_t step[][TIDSP_MAX_RANK], int64_t max_len, int64_t one_step) {
  int64_t ts[TIDSP_MAX_RANK], tst[2][TIDSP_MAX_RANK]; /* innermost first while building */
  int32_t d, r = 0, k, i;
  for (d = rank - 1; d >= 0; d--) {
    int merge = r > 0 && ts[r - 1] <= max_len / shape[d];
    if (shape[d] == 1)
      continue;
    for (k = 0; k < n_st && merge; k++)
      merge = tst[k][r - 1] * ts[r - 1] == step[k][d];
    if (merge) {
      ts[r - 1] *= shape[d];
      continue;
    }
    ts[r] = shape[d];
    for (k = 0; k < n_st; k++)
      tst[k][r] = step[k][d];
    r++;
  }
  if (r == 0) {
    ts[0] = 1;
    for (k = 0; k < n_st; k++)
      tst[k][0] = one_step;
    r = 1;
  }
  for (i = 0; i < r; i++) {
    shape[i] = ts[r - 1 - i];
    for (k = 0; k < n_st; k++)
      step[k][i] = tst[k][r - 1 - i];
  }
  return r;
}

/* ------------------------------------------------------------------------
 * Broadcast iteration: rows of the innermost output dimension; the outer
 * dimensions advance like an odometer. */
typedef struct tidsp_ref_bc_iter {
  const tidsp_broadcast *bc;
  int32_t idx[TIDSP_MAX_RANK];
  ptrdiff_t a_off, b_off; /* element offsets of the current row */
  int64_t rows;           /* number of rows */
  int32_t inner;          /* row length */
  int32_t a_step, b_step; /* operand strides along the row */
} tidsp_ref_bc_iter;

/* Validates bc (rank, shapes ≥ 0) and starts at the first row. */
int32_t tidsp_ref_bc_init(tidsp_ref_bc_iter *it, const tidsp_broadcast *bc);

/* The start of every broadcast binary kernel: all its pointers given (bc is
 * &params->bc, or NULL when params is) and bc valid; *it at the first row. */
static inline int32_t tidsp_ref_binary_begin(tidsp_ref_bc_iter *it, const tidsp_broadcast *bc, const void *a,
                                             const void *b, const void *y) {
  if (!bc || !a || !b || !y)
    return TIDSP_ERR_NULL;
  return tidsp_ref_bc_init(it, bc);
}

/* QLinearAdd (add_i8.c): does A hold one value over each of ORT's spans
 * (runs of the innermost output dim of size > 1), so that ORT swaps the
 * operands? The host variant asks it of the caller's broadcast too. */
static inline int tidsp_ref_add_a_per_span(const tidsp_broadcast *bc) {
  int32_t d;
  for (d = bc->rank - 1; d >= 0; d--) {
    if (bc->shape[d] > 1)
      return bc->a_stride[d] == 0;
  }
  return 1;
}

/* The start of QLinearAdd and QLinearMul (add_i8.c, mul_i8.c, and the host
 * variants' fast-path test): tidsp_ref_binary_begin, then the parameters
 * they share: int8 input zero points, an int8 output
 * (tidsp_ref_i8_output_ok), a FLOAT or Q31 formula. bc is &params->bc, or
 * NULL when params is. */
static inline int32_t tidsp_ref_q_binary_begin(tidsp_ref_bc_iter *it, const tidsp_broadcast *bc, const int8_t *a,
                                               const int8_t *b, const int8_t *y, int32_t kind, int32_t a_zp,
                                               int32_t b_zp, int32_t y_min, int32_t y_max, int32_t y_zp,
                                               int32_t domain_offset) {
  const int32_t st = tidsp_ref_binary_begin(it, bc, a, b, y);
  if (st != TIDSP_OK)
    return st;
  if (!tidsp_ref_i8_output_ok(y_min, y_max, y_zp, domain_offset) || !tidsp_ref_is_i8(a_zp) ||
      !tidsp_ref_is_i8(b_zp) || (kind != TIDSP_REQUANT_FLOAT && kind != TIDSP_REQUANT_Q31))
    return TIDSP_ERR_PARAM;
  return TIDSP_OK;
}

/* tidsp_ref_q_binary_begin on the fields that QLinearAdd's and QLinearMul's
 * params share (a macro: they are two struct types); p may be NULL. */
#define TIDSP_REF_Q_BINARY_BEGIN(it, p, a, b, y)                                                                     \
  ((p) ? tidsp_ref_q_binary_begin((it), &(p)->bc, (a), (b), (y), (p)->kind, (p)->a_zp, (p)->b_zp, (p)->y_min,        \
                                  (p)->y_max, (p)->y_zp, (p)->domain_offset)                                         \
       : TIDSP_ERR_NULL)

/* QLinearAdd's FLOAT constant: p->f, or when A is folded first (swapped:
 * tidsp_ref_add_a_per_span) f_swapped = fl(zc − fma(rb, zb, fl(ra·za))),
 * zero points in the uint8 domain (add_i8.c). */
static inline float tidsp_ref_add_f(const tidsp_add_i8_params *p, int swapped) {
  const float za = (float)(p->a_zp + p->domain_offset);
  const float zb = (float)(p->b_zp + p->domain_offset);
  const float zc = (float)(p->y_zp + p->domain_offset);
  return swapped ? zc - fmaf(p->rb, zb, p->ra * za) : p->f;
}

static inline void tidsp_ref_bc_next(tidsp_ref_bc_iter *it) {
  const tidsp_broadcast *bc = it->bc;
  int32_t d;
  for (d = bc->rank - 2; d >= 0; d--) {
    it->a_off += bc->a_stride[d];
    it->b_off += bc->b_stride[d];
    if (++it->idx[d] < bc->shape[d])
      return;
    it->a_off -= (ptrdiff_t)bc->a_stride[d] * bc->shape[d];
    it->b_off -= (ptrdiff_t)bc->b_stride[d] * bc->shape[d];
    it->idx[d] = 0;
  }
}

/* ------------------------------------------------------------------------
 * Pooling geometry checks shared by the pool kernels. */
int32_t tidsp_ref_pool2d_check(const tidsp_pool2d_params *p);

/* TIDSP_ERR_SHAPE when some output window covers no input element. */
int32_t tidsp_ref_pool2d_check_nonempty(const tidsp_pool2d_params *p);

/* Taps i in [0, k) of one axis with 0 ≤ start + i·dil < limit. */
/* tidsp_lut_i8_channels: its arguments checked, then each channel's run
 * of p->inner elements through `run` (a lut_i8 of one table: the
 * reference loop, or a host row's). */
int32_t tidsp_ref_lut_channels(const tidsp_lut_channels_params *p, const int8_t *lut, const int8_t *x, int8_t *y,
                               int32_t (*run)(const tidsp_lut_params *, const int8_t *, const int8_t *, int8_t *));
int32_t tidsp_ref_taps_inside(int64_t start, int32_t k, int32_t dil,
                              int64_t limit);

/* The checks every pool kernel starts with: its pointers given (p NULL
 * too: TIDSP_ERR_NULL), the geometry valid, every window non-empty. */
static inline int32_t tidsp_ref_pool2d_begin(const tidsp_pool2d_params *p, const void *x, const void *y) {
  int32_t st;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_pool2d_check(p);
  return st == TIDSP_OK ? tidsp_ref_pool2d_check_nonempty(p) : st;
}

/* The window of output element o (NCHW, flat: plane nc, row oh, column ow)
 * and the taps of it that lie inside the input: kernel rows [kh0, kh1) and
 * columns [kw0, kw1) (along one axis the taps inside are contiguous:
 * dil >= 1); tap (kh, kw) reads input element
 * base + (h0 + kh·dil_h)·w_in + w0 + kw·dil_w. tidsp_ref_window_next visits
 * the taps inside in the window's own (kh, kw) order, so sums keep their
 * rounding. Every pool kernel walks its windows through this. */
typedef struct tidsp_ref_window {
  int32_t oh, ow;
  int32_t kh0, kh1, kw0, kw1;
  int64_t base; /* nc·h_in·w_in: the input plane */
  int64_t h0, w0;
  int32_t kh, kw; /* the next tap */
} tidsp_ref_window;
void tidsp_ref_pool2d_window(const tidsp_pool2d_params *p, int64_t o, tidsp_ref_window *w);

/* The input offset of w's next tap inside the input into *off; 0 when all
 * have been visited. */
static inline int tidsp_ref_window_next(const tidsp_pool2d_params *p, tidsp_ref_window *w, int64_t *off) {
  if (w->kw >= w->kw1) {
    w->kh++;
    w->kw = w->kw0;
  }
  if (w->kh >= w->kh1 || w->kw >= w->kw1)
    return 0;
  *off = w->base + (w->h0 + (int64_t)w->kh * p->dil_h) * p->w_in + w->w0 + (int64_t)w->kw * p->dil_w;
  w->kw++;
  return 1;
}

/* Output elements of a pool: n·c·h_out·w_out. */
static inline int64_t tidsp_ref_pool2d_numel_out(const tidsp_pool2d_params *p) {
  return (int64_t)p->n * p->c * p->h_out * p->w_out;
}

/* Number of window taps of output (oh, ow) inside the real input, and inside
 * the padded input (for count_include_pad). */
void tidsp_ref_pool2d_counts(const tidsp_pool2d_params *p, int32_t oh,
                             int32_t ow, int32_t *inside, int32_t *padded);

/* ------------------------------------------------------------------------
 * Data movement: copy one element of elem_size bytes. The common sizes get
 * a constant-size memcpy, which compiles to one load and one store. */
static inline void tidsp_ref_copy_elem(void *dst, const void *src,
                                       int32_t elem_size) {
  switch (elem_size) {
  case 1:
    *(uint8_t *)dst = *(const uint8_t *)src;
    break;
  case 2:
    memcpy(dst, src, 2);
    break;
  case 4:
    memcpy(dst, src, 4);
    break;
  case 8:
    memcpy(dst, src, 8);
    break;
  default:
    memcpy(dst, src, (size_t)elem_size);
    break;
  }
}

/* The checks the data-movement kernels (slice, transpose, pad) share: rank
 * in [0, TIDSP_MAX_RANK], elem_size ≥ 1 and every input dimension ≥ 0;
 * then in_stride gets the input's dense (row-major) element strides and
 * *total its element count. */
static inline int32_t tidsp_ref_movement_check(int32_t rank, int32_t elem_size, const int32_t *in_shape,
                                               int64_t *in_stride, int64_t *total) {
  int32_t d;
  if (rank < 0 || rank > TIDSP_MAX_RANK)
    return TIDSP_ERR_SHAPE;
  if (elem_size < 1)
    return TIDSP_ERR_PARAM;
  *total = 1;
  for (d = rank - 1; d >= 0; d--) {
    if (in_shape[d] < 0)
      return TIDSP_ERR_SHAPE;
    in_stride[d] = *total;
    *total *= in_shape[d];
  }
  return TIDSP_OK;
}

/* The checks the float reductions (ReduceMean, ReduceL2) start with: the
 * pointers given, rank in [0, TIDSP_MAX_RANK], reduce_mask naming only axes
 * below the rank. (Input dimensions ≥ 0 are checked as they are walked.) */
static inline int32_t tidsp_ref_reduce_check(const tidsp_reduce_params *p, const void *x, const void *y) {
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->rank < 0 || p->rank > TIDSP_MAX_RANK)
    return TIDSP_ERR_SHAPE;
  if (p->reduce_mask & ~((1 << p->rank) - 1))
    return TIDSP_ERR_PARAM;
  return TIDSP_OK;
}

/* Data movement as a strided gather: output element (i_0, …, i_rank−1)
 * (row-major over out_shape, which has some element) is input element
 * base + Σ i_d·step[d] (elements of elem_size bytes; steps may be
 * negative). Slice and transpose are this. */
static inline void tidsp_ref_strided_copy(const void *x, void *y, int32_t elem_size, int32_t rank,
                                          const int32_t *out_shape, const int64_t *step, int64_t base) {
  const uint8_t *xb = (const uint8_t *)x;
  uint8_t *yb = (uint8_t *)y;
  const size_t es = (size_t)elem_size;
  const int32_t inner = rank > 0 ? out_shape[rank - 1] : 1;
  const int64_t st = rank > 0 ? step[rank - 1] : 0;
  int32_t idx[TIDSP_MAX_RANK] = {0};
  int32_t d, i;
  int64_t rows = 1, r, off = base;
  for (d = 0; d < rank - 1; d++)
    rows *= out_shape[d];
  for (r = 0; r < rows; r++) {
    uint8_t *yr = yb + (size_t)r * (size_t)inner * es;
    for (i = 0; i < inner; i++)
      tidsp_ref_copy_elem(yr + (size_t)i * es, xb + (size_t)(off + i * st) * es, elem_size);
    for (d = rank - 2; d >= 0; d--) {
      off += step[d];
      if (++idx[d] < out_shape[d])
        break;
      off -= step[d] * out_shape[d];
      idx[d] = 0;
    }
  }
}

#endif /* TIDSP_REF_INTERNAL_H */
