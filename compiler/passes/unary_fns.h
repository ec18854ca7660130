/*
 * unary_fns.h — the float unary functions, evaluated in float32 the way
 * ONNX Runtime's CPU kernels do, for compile-time tables.
 */
#ifndef CSTATIC_UNARY_FNS_H
#define CSTATIC_UNARY_FNS_H

#include "ir.h"
#include "quant/quant.h"

/* The function of a unary node (Relu, Clip, Sigmoid, HardSigmoid,
 * HardSwish) with its arguments in args[0..1]; NULL if not a supported
 * unary or its arguments are not constants. */
cs_unary_fn cs_unary_fn_of(cs_graph *g, const cs_node *n, float args[2]);

#endif
