/*
 * fused_common.h — helpers shared by the int8 Conv and MatMul/Gemm fusions.
 */
#ifndef CSTATIC_FUSED_COMMON_H
#define CSTATIC_FUSED_COMMON_H

#include "qdq_tail.h"
#include "quant/quant.h"

/* The int32 bias constant of a fused layer from a bias value b (a DQ of an
 * int32 constant, or a float constant), -1 with *none = 1 if b < 0, -2 if
 * b is not foldable, -3 when out of memory (message recorded). */
int cs_fold_bias_i32(cs_graph *g, int b, float xs, const float *ws, int ws_count,
                     int channels, const char *base, int *none);
/* w is DQ(int8 constant) per-tensor or per-axis on `axis` with equal zero
 * points: fills qp and the DQ node id. */
int cs_match_weight_dq(cs_graph *g, int w, int axis, cs_qparams *qp, int *wdq_out);

#endif
