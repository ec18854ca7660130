/*
 * mmalib_common.h — helpers of the MMALIB offload passes (mmalib_*.c).
 *
 * An MMALIB kernel node calls the spec's extern symbol positionally: its
 * inputs are the pointer arguments in order, its output the output pointer,
 * and the trailing int32 size arguments are the node's "mm_args" ints
 * (codegen prints them, kernel_exec passes them).
 */
#ifndef CSTATIC_MMALIB_COMMON_H
#define CSTATIC_MMALIB_COMMON_H

#include <stdint.h>

#include "ir.h"
#include "quant/quant.h"

#define CS_MM_ARGS "mm_args"

/* ConstReachability: v's value is fully determined at compile time (a
 * constant, or computed only from constants). */
int cs_mm_const_reachable(cs_graph *g, int v);

/* Fold the quantization of one requantized layer (te-extern-dispatch.txt
 * "Compile-Time Parameter Folding"), per output channel c:
 *   r[c]    = d_s·w_s[c]/o_s                      → scale[c], shift[c]
 *   bias[c] = b[c] − d_zp·wsum[c] + round(o_zp / (scale[c]·2^−shift[c]))
 * b: the int32 data of a bias DQ, or round(b_f / (d_s·w_s[c])) of a float
 * bias (bias < 0: none). Returns NULL with bias/scale/shift filled and
 * *worst the worst relative error of s·2^−sh against r, or the rule that
 * declines the layer. */
const char *cs_mm_fold(cs_graph *g, int bias, float d_s, int32_t d_zp, const cs_qparams *wq,
                       float o_s, int32_t o_zp, const int64_t *wsum, int channels,
                       int32_t *bias_out, uint8_t *scale, uint8_t *shift, double *worst);

/* The fused activation must be exactly the int8 saturation the kernel
 * applies (Relu with o_zp = −128, a Clip wider than the output range). */
int cs_mm_act_is_saturation(const cs_qparams *out, float lo, float hi);

/* Add the bias/scale/shift constants; writes their ids to ids[0..2]. */
void cs_mm_add_requant_consts(cs_graph *g, const char *base, int channels, const int32_t *bias,
                              const uint8_t *scale, const uint8_t *shift, int *ids);

void cs_mm_set_args(cs_graph *g, int node, int n, const int64_t *args);

#endif
