/*
 * global_avgpool_i8.c — QLinearGlobalAveragePool over [n·c][hw]:
 * acc = Σ x − x_zp·hw, then the shared requantization with one multiplier
 * (ORT: MlasQLinearGlobalAveragePoolNchw → MlasRequantizeOutput, with
 * mult = fl(x_scale / fl(y_scale·hw)) computed at compile time). The sum
 * wraps modulo 2³² like ORT's int32 accumulator.
 *
 * This is tidsp_global_avgpool_i8__ref, the oracle: the public tidsp_global_avgpool_i8 dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_global_avgpool_i8__ref(const tidsp_gap_i8_params *p, const void *rq,
                                     const int8_t *x, int8_t *y) {
  tidsp_ref_rq plan;
  int32_t st, c, i;
  if (!p || !rq || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->nc < 0 || p->hw < 1)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_is_i8(p->x_zp) || p->rq.per_channel)
    return TIDSP_ERR_PARAM;
  st = tidsp_ref_rq_init(&plan, &p->rq, rq, 1, TIDSP_REF_I8_MIN,
                         TIDSP_REF_I8_MAX);
  if (st != TIDSP_OK)
    return st;
  for (c = 0; c < p->nc; c++) {
    const int8_t *xc = x + (size_t)c * (size_t)p->hw;
    uint32_t acc = (uint32_t)(-p->x_zp) * (uint32_t)p->hw;
    for (i = 0; i < p->hw; i++) {
      const int32_t v = xc[i]; /* through a variable: gcc's -Wsign-conversion
                                  sees through (uint32_t)(int32_t)xc[i] */
      acc += (uint32_t)v;
    }
    y[c] = (int8_t)tidsp_ref_rq_apply(&plan, 0, tidsp_ref_u32_to_i32(acc));
  }
  return TIDSP_OK;
}
