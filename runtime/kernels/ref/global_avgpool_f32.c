/*
 * global_avgpool_f32.c — mean of each [hw] plane, summed as ONNX Runtime
 * does, then / hw. ORT (all optimizations) runs it in one of two kernels:
 *  - p->nchwc's bit for this CPU's MLAS block (tidsp_mlas_block_bit): the
 *    NCHWc transformer turned the op into an NCHWc pooling (channels a
 *    multiple of the block, the input an NCHWc tensor or a graph input;
 *    the compiler decides for each block, passes/mark_nchwc_global_pool.c);
 *    each channel's plane is then summed in order from 0;
 *  - otherwise MLAS's global pooling kernel: four lanes (lane j adds
 *    elements j, j+4, …), reduced as (l0 + l2) + (l1 + l3), the hw mod 4
 *    tail added one by one.
 */
#include "ort_float.h"
#include "../kernel_variants.h"

int32_t tidsp_global_avgpool_f32(const tidsp_gap_f32_params *p,
                                 const float *x, float *y) {
  int32_t c, nchwc;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->nc < 0 || p->hw < 1)
    return TIDSP_ERR_SHAPE;
  nchwc = p->nchwc & tidsp_mlas_block_bit();
  for (c = 0; c < p->nc; c++) {
    const float *xc = x + (size_t)c * (size_t)p->hw;
    y[c] = (nchwc ? tidsp_ort_seq_sum(xc, p->hw) : tidsp_ort_mlas_sum4(xc, p->hw)) / (float)p->hw;
  }
  return TIDSP_OK;
}
