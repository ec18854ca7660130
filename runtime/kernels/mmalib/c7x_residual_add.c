/*
 * c7x_residual_add.c — c7x_int{8,16}_residual_add_relu: out = x + skip in
 * the output's quantization, with both inputs rescaled by Q(shift)
 * multipliers (mmalib.h has the params layout and formula).
 *
 * Where the fork is wrong this is not: it floors the shift (a −0.5 LSB
 * bias on every element; here + 2^(shift−1) rounds half up, as the convs),
 * clamps ReLU at 0 rather than at the output zero point (wrong whenever
 * zp_out ≠ 0), and its int16 ReLU clips nothing. The accumulator is int64
 * for both dtypes, so no choice of multipliers can overflow it (the fork's
 * int8 path uses int32 unchecked).
 */
#include "mmalib_internal.h"

static int params_ok(const c7x_residual_add_params *p) {
  return p->shift >= 0 && p->shift <= 62 && p->reserved == 0;
}

/* One element, before saturation. */
static int64_t residual_one(const c7x_residual_add_params *p, int32_t x,
                            int32_t skip, int32_t has_relu) {
  int64_t acc = (int64_t)(x - p->zp_x) * p->m_x +
                (int64_t)(skip - p->zp_skip) * p->m_skip;
  int64_t r = mmalib_round_shift(acc, p->shift) + p->zp_out;
  if (has_relu && r < p->zp_out)
    r = p->zp_out;
  return r;
}

int32_t c7x_int8_residual_add_relu(const int8_t *x, const int8_t *skip,
                                   const c7x_residual_add_params *params,
                                   int8_t *out, int32_t n, int32_t has_relu) {
  int32_t i;
  if (!x || !skip || !params || !out || n < 0 || !params_ok(params))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  for (i = 0; i < n; i++)
    out[i] = mmalib_sat_i8(residual_one(params, x[i], skip[i], has_relu));
  return TIDSP_MMALIB_OK;
}

int32_t c7x_int16_residual_add_relu(const int16_t *x, const int16_t *skip,
                                    const c7x_residual_add_params *params,
                                    int16_t *out, int32_t n,
                                    int32_t has_relu) {
  int32_t i;
  if (!x || !skip || !params || !out || n < 0 || !params_ok(params))
    return TIDSP_MMALIB_ERR_PRECONDITION;
  for (i = 0; i < n; i++)
    out[i] = mmalib_sat_i16(residual_one(params, x[i], skip[i], has_relu));
  return TIDSP_MMALIB_OK;
}
