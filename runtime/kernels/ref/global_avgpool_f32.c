/*
 * global_avgpool_f32.c — mean of each [hw] plane: a sequential float sum,
 * then / hw.
 */
#include "ref_internal.h"

int32_t tidsp_global_avgpool_f32(const tidsp_gap_f32_params *p,
                                 const float *x, float *y) {
  int32_t c, i;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->nc < 0 || p->hw < 1)
    return TIDSP_ERR_SHAPE;
  for (c = 0; c < p->nc; c++) {
    const float *xc = x + (size_t)c * p->hw;
    float sum = 0.0f;
    for (i = 0; i < p->hw; i++)
      sum += xc[i];
    y[c] = sum / (float)p->hw;
  }
  return TIDSP_OK;
}
