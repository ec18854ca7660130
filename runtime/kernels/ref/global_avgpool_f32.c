/*
 * global_avgpool_f32.c — mean of each [hw] plane, summed as ONNX Runtime
 * does, then / hw. ORT (all optimizations, x86-64 with AVX512F) runs it in
 * one of two kernels, by the channel count:
 *  - channels a multiple of 16: the NCHWc transformer turns the op into an
 *    NCHW16c pooling; each channel's plane is then summed in order from 0;
 *  - otherwise MLAS's global pooling kernel: four lanes (lane j adds
 *    elements j, j+4, …), reduced as (l0 + l2) + (l1 + l3), the hw mod 4
 *    tail added one by one.
 * The parameters carry only nc = n·c: nc % 16 stands in for c % 16, which
 * is exact for batch 1 (and whenever n·c and c agree on divisibility by 16).
 */
#include "ort_float.h"

int32_t tidsp_global_avgpool_f32(const tidsp_gap_f32_params *p,
                                 const float *x, float *y) {
  int32_t c;
  if (!p || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->nc < 0 || p->hw < 1)
    return TIDSP_ERR_SHAPE;
  for (c = 0; c < p->nc; c++) {
    const float *xc = x + (size_t)c * (size_t)p->hw;
    y[c] = (p->nc % TIDSP_ORT_NCHWC_BLOCK == 0 ? tidsp_ort_seq_sum(xc, p->hw)
                                               : tidsp_ort_mlas_sum4(xc, p->hw)) /
           (float)p->hw;
  }
  return TIDSP_OK;
}
