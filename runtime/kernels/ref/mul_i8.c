/*
 * mul_i8.c — QLinearMul with broadcasting.
 *
 * FLOAT mirrors ONNX Runtime's x86 kernel (MlasQLinearMulKernel, SSE2):
 * the exact integer product is scaled by r, then the output zero point is
 * added in float before rounding. ORT runs on uint8 data (int8 activations
 * are rewritten to uint8, zero points + 128), so the zero point added here
 * is the uint8 one, y_zp + 128, and the result is shifted back after
 * saturation. Both roundings matter: fl(t + 200) and fl(t + 72) can differ
 * in their last bit and round to different integers.
 *
 * This is tidsp_mul_i8__ref, the oracle: the public tidsp_mul_i8 dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_mul_i8__ref(const tidsp_mul_i8_params *p, const int8_t *a,
                          const int8_t *b, int8_t *y) {
  tidsp_ref_bc_iter it;
  const int32_t st = TIDSP_REF_Q_BINARY_BEGIN(&it, p, a, b, y);
  int64_t r;
  int32_t i;
  if (st != TIDSP_OK)
    return st;

  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it)) {
    const int8_t *ar = a + it.a_off, *br = b + it.b_off;
    int8_t *yr = y + (size_t)r * (size_t)it.inner;
    for (i = 0; i < it.inner; i++) {
      const int32_t prod = (ar[(ptrdiff_t)i * it.a_step] - p->a_zp) *
                           (br[(ptrdiff_t)i * it.b_step] - p->b_zp);
      if (p->kind == TIDSP_REQUANT_FLOAT) {
        const float zp_u8 = (float)(p->y_zp + p->domain_offset);
        const float lo = (float)(p->y_min + p->domain_offset);
        const float hi = (float)(p->y_max + p->domain_offset);
        float v = (float)prod * p->r;
        v = v + zp_u8;
        v = v > lo ? v : lo;
        v = v < hi ? v : hi;
        yr[i] = (int8_t)(tidsp_ref_rne(v) - p->domain_offset);
      } else {
        /* The FLOAT formula in integers (softfloat.h). */
        const tidsp_sf r = tidsp_sf_from_float(p->r);
        tidsp_sf v = tidsp_sf_round((int64_t)prod * r.m, r.s);
        v = tidsp_sf_add(v, (tidsp_sf){p->y_zp + p->domain_offset, 0});
        yr[i] = (int8_t)(tidsp_ref_clamp_i64(tidsp_sf_rne_int(v),
                                             p->y_min + p->domain_offset,
                                             p->y_max + p->domain_offset) -
                         p->domain_offset);
      }
    }
  }
  return TIDSP_OK;
}
