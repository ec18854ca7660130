/*
 * ort_nchwc.h — which tensors ONNX Runtime's NchwcTransformer (the default
 * session, ORT_ENABLE_ALL) keeps in its NCHWc layout. Float kernels that
 * must round as ORT does pick their summation order from it: a Conv + Add
 * fusion (fuse_conv_add_f32.c), a GlobalAveragePool's kernel
 * (mark_nchwc_global_pool.c) and a float Conv's kernel (legalize_conv.c:
 * params.mlas_nchw for a Conv ORT leaves to MLAS's generic NCHW one). Checked against ORT 1.30's optimized graphs
 * (tests/e2e/test_conv_mlas_vs_ort.py).
 */
#ifndef CSTATIC_ORT_NCHWC_H
#define CSTATIC_ORT_NCHWC_H

#include "ir.h"

/* MLAS's NCHWc channel block (MlasNchwcGetBlockSize): 16 on AVX-512F
 * CPUs, 8 on AVX2 + FMA3 ones. ORT's layout depends on it (e.g. 10 input
 * channels: below the block at 16, an unpadded plain Conv at 8), and the
 * compiler does not know the CPU the model runs on: the kernels' layout
 * flags hold the decision for each block (TIDSP_MLAS_BLOCK16/8 bits,
 * cstatic/kernels.h) and the kernel reads its CPU's. The Conv + Add fusion
 * (fuse_conv_add_f32.c) fuses where either block's ORT does and records
 * the blocks that did in CS_ORT_SUM_ATTR. */
#define CS_ORT_NCHWC_BLOCK 16
#define CS_ORT_NCHWC_BLOCK_AVX2 8

/* The int attribute of a Conv with a fused Add's sum (a fourth input):
 * the TIDSP_MLAS_BLOCK* bits of the blocks at which ORT adds the sum
 * inside the convolution; at the others ORT runs the Conv, then the Add.
 * Absent: every block. */
#define CS_ORT_SUM_ATTR "ort_sum"

/* The CS_ORT_SUM_ATTR bits of node n; 0 when it has no sum. */
int32_t cs_ort_sum_blocks(const cs_node *n);

/* Node c is a Conv ORT turns into an NCHWc convolution when MLAS's block
 * is `block` (a fourth input is the sum of an Add fused into it). */
int cs_ort_nchwc_conv(cs_graph *g, int c, int block);
/* Value v is an NCHWc tensor in ORT's transformed graph at `block`. */
int cs_ort_nchwc_value(cs_graph *g, int v, int block);

#endif
