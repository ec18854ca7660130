/*
 * const_eval.h — compile-time evaluation of constant subgraphs.
 *
 * A node whose every input is known at compile time (constants, and for
 * Shape/Size the static shape of any tensor) is evaluated now and its
 * outputs become constants, so an op with no runtime kernel (ScatterND,
 * ConstantOfShape, Equal, …) may appear in a constant subgraph, and shapes
 * computed from constants are known when later shapes are inferred. The
 * ONNX frontend calls it as each node is added (cs_onnx_eval_fn).
 *
 * One implementation per function: an op with a runtime kernel is lowered
 * exactly as LegalizeOps lowers it and run with the kernel's reference
 * loop (eval_kernel.c); the small evaluators in eval_*.c cover only what
 * has no runtime kernel (integer arithmetic, comparisons and logic, shape
 * ops, ScatterND, Tile).
 *
 * QuantizeLinear and DequantizeLinear are never folded here: the QDQ
 * fusions must see DQ(int8 weight) intact (FoldConstant, at the end of the
 * pipeline, folds what they leave).
 */
#ifndef CSTATIC_CONST_EVAL_H
#define CSTATIC_CONST_EVAL_H

#include "ir.h"

/* The largest tensor compile-time evaluation produces; a bigger result is
 * an error naming the node, never an allocation on the word of a file. */
#define CS_EVAL_MAX_BYTES ((size_t)256 << 20)

/* Fold node `id` if its value is known at compile time: its outputs
 * become constants and the node is removed (*folded = 1); otherwise the
 * graph is unchanged (*folded = 0). Non-OK only for a real error in the
 * model (an index out of range, a division by zero, a result larger than
 * CS_EVAL_MAX_BYTES), with a message naming the node. */
cs_status cs_const_eval_node(cs_graph *g, int id, int *folded);

#endif
