/*
 * requant.c — tidsp_requant_one and the validated requantization plan that
 * every integer kernel uses, so that all of them round the same way.
 */
#include "ref_internal.h"

/* Fills *plan from params without reading the multiplier table. */
static int32_t plan_fill(tidsp_ref_rq *plan, const tidsp_requant_params *params,
                         const void *data, int32_t channels) {
  int32_t n;
  if (!params || !data)
    return TIDSP_ERR_NULL;
  if (channels < 1)
    return TIDSP_ERR_SHAPE;
  if (params->kind != TIDSP_REQUANT_FLOAT && params->kind != TIDSP_REQUANT_Q31 &&
      params->kind != TIDSP_REQUANT_SCALE_SHIFT)
    return TIDSP_ERR_PARAM;
  /* MMALIB folds the output zero point into the bias. */
  if (params->kind == TIDSP_REQUANT_SCALE_SHIFT && params->out_zp != 0)
    return TIDSP_ERR_PARAM;
  if (params->out_min > params->out_max)
    return TIDSP_ERR_PARAM;
  /* The FLOAT form clamps to [out_min − zp, out_max − zp] before adding zp
   * back: keep those differences inside int32. */
  if (params->out_zp < -(1 << 30) || params->out_zp > (1 << 30) ||
      params->out_min < -(1 << 30) || params->out_max > (1 << 30))
    return TIDSP_ERR_PARAM;
  n = params->per_channel ? channels : 1;
  tidsp_ref_rq_fields(plan, params, data, n);
  return TIDSP_OK;
}

static int32_t shift_entry_ok(const tidsp_ref_rq *plan, int32_t i) {
  return !plan->shift || plan->shift[i] <= TIDSP_SCALE_SHIFT_MAX_SHIFT;
}

static int32_t q31_entry_ok(const tidsp_ref_rq *plan, int32_t i) {
  /* mult: a float32 significand (< 2^24 + 1), so products stay exact. */
  return plan->qmult[i] >= 0 && plan->qmult[i] <= (1 << 24) && plan->qshift[i] >= 0 &&
         plan->qshift[i] <= TIDSP_REF_MAX_SHIFT;
}

int32_t tidsp_ref_rq_init(tidsp_ref_rq *plan, const tidsp_requant_params *params,
                          const void *data, int32_t channels, int32_t type_min,
                          int32_t type_max) {
  int32_t st, i, n;
  if (!plan)
    return TIDSP_ERR_NULL;
  st = plan_fill(plan, params, data, channels);
  if (st != TIDSP_OK)
    return st;
  /* The zero point is a value of the output type (ONNX's y_zero_point):
   * one outside it is a compiler bug, not a model to round somehow. */
  if (plan->out_min < type_min || plan->out_max > type_max ||
      plan->zp < type_min || plan->zp > type_max)
    return TIDSP_ERR_PARAM;
  n = plan->per_channel ? channels : 1;
  for (i = 0; i < n; i++) {
    if (plan->kind == TIDSP_REQUANT_Q31 ? !q31_entry_ok(plan, i)
        : plan->kind == TIDSP_REQUANT_SCALE_SHIFT ? !shift_entry_ok(plan, i)
                                                  : 0)
      return TIDSP_ERR_PARAM;
  }
  return TIDSP_OK;
}

int32_t tidsp_requant_one(const tidsp_requant_params *rq, const void *rq_data,
                          int32_t channels, int32_t c, int32_t acc) {
  tidsp_ref_rq plan;
  if (c < 0 || c >= channels)
    return 0;
  if (plan_fill(&plan, rq, rq_data, channels) != TIDSP_OK)
    return 0;
  /* Only channel c is read: validate that entry, not the whole table. */
  if (plan.kind == TIDSP_REQUANT_Q31 &&
      !q31_entry_ok(&plan, plan.per_channel ? c : 0))
    return 0;
  if (plan.kind == TIDSP_REQUANT_SCALE_SHIFT &&
      !shift_entry_ok(&plan, plan.per_channel ? c : 0))
    return 0;
  return tidsp_ref_rq_apply(&plan, c, acc);
}
