/*
 * binary.c — elementwise a op b on any dtype with numpy broadcasting: the
 * integer arithmetic, Max/Min, comparisons and logic that run outside a
 * QDQ pattern (shape arithmetic, masks, integer models). One loop for
 * every (op, dtype): each element is read as int64 (uint64 as its bits,
 * ordered and divided unsigned), or as double when an operand is float
 * (f32, f64, f16, bf16: exact), computed, and written in the output dtype
 * (f16/bf16 rounded through float, as ORT). Speed is not the point here;
 * f32 arithmetic has tidsp_binary_f32.
 */
#include "ref_internal.h"

/* A double into an integer dtype: truncated toward zero, saturated at the
 * dtype's range (NaN → 0), as tidsp_cast. */
static int64_t sat_int(double v, int32_t dt) {
  double lo = -9223372036854775808.0, hi = 9223372036854775807.0;
  switch (dt) {
  case TIDSP_DTYPE_I8: lo = -128.0; hi = 127.0; break;
  case TIDSP_DTYPE_U8: lo = 0.0; hi = 255.0; break;
  case TIDSP_DTYPE_BOOL: lo = 0.0; hi = 1.0; break;
  case TIDSP_DTYPE_I16: lo = -32768.0; hi = 32767.0; break;
  case TIDSP_DTYPE_U16: lo = 0.0; hi = 65535.0; break;
  case TIDSP_DTYPE_I32: lo = -2147483648.0; hi = 2147483647.0; break;
  case TIDSP_DTYPE_U32: lo = 0.0; hi = 4294967295.0; break;
  default: break;
  }
  if (v != v)
    return 0;
  if (v <= lo)
    return (int64_t)lo;
  if (v >= hi)
    return hi >= 9223372036854775807.0 ? INT64_MAX : (int64_t)hi;
  return (int64_t)v;
}

static int is_compare(int32_t op) {
  return op >= TIDSP_BINARY_EQUAL && op <= TIDSP_BINARY_XOR;
}

/* The comparison and logic ops on two numbers of one domain. */
#define COMPARE(op, x, z)                                       \
  ((op) == TIDSP_BINARY_EQUAL              ? (x) == (z)         \
   : (op) == TIDSP_BINARY_LESS             ? (x) < (z)          \
   : (op) == TIDSP_BINARY_LESS_OR_EQUAL    ? (x) <= (z)         \
   : (op) == TIDSP_BINARY_GREATER          ? (x) > (z)          \
   : (op) == TIDSP_BINARY_GREATER_OR_EQUAL ? (x) >= (z)         \
   : (op) == TIDSP_BINARY_AND              ? ((x) != 0 && (z) != 0) \
   : (op) == TIDSP_BINARY_OR               ? ((x) != 0 || (z) != 0) \
                                           : (((x) != 0) != ((z) != 0)))

/* ONNX Runtime's integer Pow: std::pow in double, cast to the base type. */
static double int_pow(double x, double e) { return pow(x, e); }

/* One element in the integer domain; 0 on a zero divisor. uint64 operands
 * (their bits in x, z) order, divide and compare unsigned. */
static int int_op(int32_t op, int64_t x, int64_t z, int32_t y_dtype, int uns, int64_t *r) {
  const uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
  if (uns) {
    switch (op) {
    case TIDSP_BINARY_DIV:
      if (uz == 0)
        return 0;
      *r = (int64_t)(ux / uz);
      return 1;
    case TIDSP_BINARY_POW: *r = (int64_t)(uint64_t)int_pow((double)ux, (double)uz); return 1;
    case TIDSP_BINARY_MAX: *r = ux > uz ? x : z; return 1;
    case TIDSP_BINARY_MIN: *r = ux < uz ? x : z; return 1;
    case TIDSP_BINARY_ADD: case TIDSP_BINARY_SUB: case TIDSP_BINARY_MUL: break;
    default: *r = COMPARE(op, ux, uz); return 1;
    }
  }
  switch (op) {
  case TIDSP_BINARY_ADD: *r = (int64_t)(ux + uz); return 1;
  case TIDSP_BINARY_SUB: *r = (int64_t)(ux - uz); return 1;
  case TIDSP_BINARY_MUL: *r = (int64_t)(ux * uz); return 1;
  case TIDSP_BINARY_DIV:
    if (z == 0)
      return 0;
    *r = z == -1 ? (int64_t)(0 - ux) : x / z; /* INT64_MIN / −1 wraps */
    return 1;
  case TIDSP_BINARY_POW: *r = sat_int(int_pow((double)x, (double)z), y_dtype); return 1;
  case TIDSP_BINARY_MAX: *r = x > z ? x : z; return 1;
  case TIDSP_BINARY_MIN: *r = x < z ? x : z; return 1;
  default: *r = COMPARE(op, x, z); return 1;
  }
}

/* One element in the double domain (an operand is float). */
static double float_op(int32_t op, int32_t a_dtype, double x, double z, int z_scalar) {
  switch (op) {
  case TIDSP_BINARY_ADD: return x + z;
  case TIDSP_BINARY_SUB: return x - z;
  case TIDSP_BINARY_MUL: return x * z;
  case TIDSP_BINARY_DIV: return x / z;
  case TIDSP_BINARY_POW:
    if (a_dtype == TIDSP_DTYPE_F32 && z_scalar && (z == 2.0 || z == 3.0)) { /* tidsp_binary_f32's rounding */
      const float f = (float)x;
      return z == 2.0 ? (double)(f * f) : (double)(f * f * f);
    }
    return a_dtype == TIDSP_DTYPE_F32 ? (double)powf((float)x, (float)z) : int_pow(x, z);
  case TIDSP_BINARY_MAX: return x != x || z != z ? NAN : x > z ? x : z;
  case TIDSP_BINARY_MIN: return x != x || z != z ? NAN : x < z ? x : z;
  default: return COMPARE(op, x, z);
  }
}

int32_t tidsp_binary(const tidsp_binary_params *p, const void *a, const void *b, void *y) {
  tidsp_ref_bc_iter it;
  int64_t r;
  int32_t st, i, fl, uns;

  st = tidsp_ref_binary_begin(&it, p ? &p->bc : NULL, a, b, y);
  if (st != TIDSP_OK)
    return st;
  if (p->op < TIDSP_BINARY_ADD || p->op > TIDSP_BINARY_XOR)
    return TIDSP_ERR_PARAM;
  if (!tidsp_ref_elem_size(p->a_dtype) || !tidsp_ref_elem_size(p->b_dtype) || !tidsp_ref_elem_size(p->y_dtype))
    return TIDSP_ERR_DTYPE;
  if (is_compare(p->op) ? p->y_dtype != TIDSP_DTYPE_BOOL : p->y_dtype != p->a_dtype)
    return TIDSP_ERR_DTYPE;
  if (p->op != TIDSP_BINARY_POW && p->b_dtype != p->a_dtype)
    return TIDSP_ERR_DTYPE;
  fl = tidsp_ref_is_float(p->a_dtype) || tidsp_ref_is_float(p->b_dtype);
  uns = p->a_dtype == TIDSP_DTYPE_U64;
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it)) {
    const int64_t yo = r * (int64_t)it.inner;
    for (i = 0; i < it.inner; i++) {
      const ptrdiff_t ka = it.a_off + (ptrdiff_t)i * it.a_step, kb = it.b_off + (ptrdiff_t)i * it.b_step;
      if (fl) {
        const double v = float_op(p->op, p->a_dtype, tidsp_ref_load_f(a, p->a_dtype, ka),
                                  tidsp_ref_load_f(b, p->b_dtype, kb), it.b_step == 0);
        if (tidsp_ref_is_float(p->y_dtype))
          tidsp_ref_store_f(y, p->y_dtype, yo + i, v);
        else
          tidsp_ref_store_int(y, p->y_dtype, yo + i, is_compare(p->op) ? (int64_t)(v != 0.0) : sat_int(v, p->y_dtype));
      } else {
        int64_t v;
        if (!int_op(p->op, tidsp_ref_load_int(a, p->a_dtype, ka), tidsp_ref_load_int(b, p->b_dtype, kb), p->y_dtype, uns, &v))
          return TIDSP_ERR_PARAM;
        tidsp_ref_store_int(y, p->y_dtype, yo + i, v);
      }
    }
  }
  return TIDSP_OK;
}
