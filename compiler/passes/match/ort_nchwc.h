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

/* MLAS's NCHWc channel block on AVX-512F, the CPUs this was verified on
 * (8 on AVX2-only CPUs, which this does not model). */
#define CS_ORT_NCHWC_BLOCK 16

/* Node c is a Conv ORT turns into an NCHWc convolution (a fourth input is
 * the sum of an Add fused into it). */
int cs_ort_nchwc_conv(cs_graph *g, int c);
/* Value v is an NCHWc tensor in ORT's transformed graph. */
int cs_ort_nchwc_value(cs_graph *g, int v);

#endif
