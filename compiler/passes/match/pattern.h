/*
 * pattern.h — the small matcher every fusion pass uses, so that no pass
 * chases pointers on its own. A pattern is matched from its root (usually
 * the QuantizeLinear at the end) upwards through producers.
 */
#ifndef CSTATIC_PATTERN_H
#define CSTATIC_PATTERN_H

#include "ir.h"
#include "quant/quant.h"
#include "target.h"

/* The live node that produces value v if its op is `op`, else -1. */
int cs_match_producer(cs_graph *g, int v, cs_op op);
/* Transpose node `tr` swaps exactly the last two axes of its input and
 * keeps the others (no perm: ONNX reverses all axes, the same only for a
 * 2-D input). With rank >= 2, `rank` must equal the input's rank; rank 0
 * accepts any. */
int cs_match_swaps_last_two(cs_graph *g, int tr, int rank);
/* The only consumer of v (v not a graph output), else -1. */
int cs_match_single_consumer(cs_graph *g, int v);
/* k_widen_i16 node n copies its input element for element: one dense
 * matrix (batch 1, no padding, no transpose) holding the whole input. */
int cs_match_widen_is_dense(const cs_graph *g, const cs_node *n);
/* An int attribute, 1 on a DequantizeLinear whose float output ONNX
 * Runtime computes on in float where cstatic has int8 data
 * (EliminateQDQTransparent: sunk below a Flatten, Split, Gather, Expand or
 * Concat, which ORT's own propagation does not cross). */
#define CS_ATTR_ORT_FLOAT "ort_float"
/* With -ort-exact=1, whether an arithmetic fusion of these DequantizeLinear
 * nodes (ids, -1 ignored) must decline: one carries CS_ATTR_ORT_FLOAT, so
 * ORT computes that op in float and so must cstatic. The int8 conv, the
 * product of two activations and Add/Mul ask (the MMALIB passes run before
 * any dequantize is sunk, so they never meet one): cstatic's
 * float conv, batched MatMul, Add and Mul give ORT's float bytes. A table
 * of the float function (activations, SiLU) or a kernel that evaluates
 * ORT's float formula (LayerNorm, Softmax) gives them either way. The FC
 * (MatMul/Gemm with constant weights) and the average pools do not ask:
 * cstatic's float path there is not ORT's either (the FC's becomes
 * FuseDequantizeMatmul's kernel, which scales after summing; ORT keeps the
 * weight's DequantizeLinear and runs MLAS's SGEMM on a runtime B, or its
 * matrix-vector kernel for one row; ORT's float AveragePool sums in an
 * order cstatic's does not follow), so declining would not give ORT's
 * bytes (tests/e2e/test_ort_float.py, a strict xfail). */
int cs_match_ort_keeps_float(cs_graph *g, const cs_target *t, const int *dqs, int n);
/* Value v is a compile-time constant. */
int cs_match_is_const(cs_graph *g, int v);
/* 1 when v is computed from constants only, within `depth` producers (a
 * longer chain counts as not): a value FoldConstant will fold, before it
 * runs — e.g. a MatMul's B that ONNX Runtime folds and prepacks, where a
 * transposed or reshaped weight has no data yet. An absent optional input
 * (v < 0) counts as constant. */
int cs_match_from_constants(cs_graph *g, int v, int depth);
/* Values a and b have the same rank and dimensions. */
int cs_match_same_shape(cs_graph *g, int a, int b);
/* The Add after MatMul node `mm` that ORT's MatMulAddFusion moves into it:
 * mm's only consumer, adding a constant float [N] of the same result shape.
 * Returns the bias value, else -1. */
int cs_match_matmul_bias_add(cs_graph *g, int mm, int64_t N);
/* Shape s, broadcast (numpy rules, right-aligned) to a tensor of `rank`
 * dims whose axis 1 has c entries, varies along axis 1 at most: every
 * other dim is 1, axis 1's is 1 or c. Returns 1 and *channels (c, or 1
 * when s is one value for all), else 0 (s of more dims, or varying along
 * another axis). A PRelu slope that is one table per channel. */
int cs_match_per_channel(const cs_value *s, int rank, int64_t c, int64_t *channels);
/* Value v is a float32 tensor of rank 4 (an NCHW activation). */
int cs_match_f32_4d(cs_graph *g, int v);
/* v is produced by a DequantizeLinear with constant parameters whose input
 * is an int8 tensor: returns the DQ node id, else -1. */
int cs_match_dq_i8(cs_graph *g, int v);

/* The driver of a pass that rewrites one kind of node: fuse(g, id) on every
 * live node of op `op` that exists when it starts (the nodes a rewrite adds
 * are not visited); the first failure stops it and is returned. */
cs_status cs_match_each(cs_graph *g, cs_op op, cs_status (*fuse)(cs_graph *g, int id));

/* Origin text for a fused node: the names of the given nodes, ", "-joined
 * (malloc'd; NULL when out of memory, message recorded). Nodes with id < 0
 * are skipped. */
char *cs_origin_join(cs_graph *g, const int *nodes, int count);

/* Fold node `consumer` into `producer`: the consumer is removed, the
 * producer writes the consumer's output (its own old output is left with no
 * producer) and carries both origins. */
void cs_absorb_consumer(cs_graph *g, int producer, int consumer);

/* Node `producer` writes, instead of its output y, a new value `name` of
 * y's dtype, quantization and from_u8 with another shape (a padded or
 * unstrided result); y is left with no producer, for a kernel that cuts
 * it out of the new value. Returns the new value's id, or -1 when out of
 * memory. */
int cs_reroute_output(cs_graph *g, int producer, const char *name, int rank, const int64_t *shape);

/* A copy of node `id` — op, attributes, origin, inputs with the first
 * replaced by `in0` — named "<id's name>.<suffix>", writing a new value
 * "<id's output>.<suffix>" of that output's dtype, quantization and
 * from_u8 with another shape (a rewrite's second instance of a layer).
 * Returns the new node's id, or -1 when out of memory (message recorded). */
int cs_clone_node(cs_graph *g, int id, const char *suffix, int in0, int rank, const int64_t *shape);

/* Node `producer` writes, instead of its output o (y), a new value `name`
 * of y's shape in dtype dt, with no quantization (the integer side of a
 * DQ or requantization the caller puts between them); y is left with no
 * producer, for the node that will compute it from the new value. Returns
 * the new value's id, or -1 when out of memory. */
int cs_reroute_output_as(cs_graph *g, int producer, int o, const char *name, cs_dtype dt);

/* QuantizeLinear → DequantizeLinear after float value v, reading the
 * scale and zero point values of an existing Q (zp_v < 0: none) whose
 * parameters are p: the int8 value (quantized with p) in *q_out, the
 * float one in *dq_out; values "<v>.q", "<v>.dq", nodes "<v>.quantize",
 * "<v>.dequantize" with `origin`. Nothing reads *dq_out yet. CS_OK, or
 * CS_ERR_NOMEM (message recorded). */
cs_status cs_add_qdq_after(cs_graph *g, int v, int scale_v, int zp_v, const cs_qparams *p, const char *origin,
                           int *q_out, int *dq_out);

/* Add a kernel node that takes over value `out` (whose old producer must
 * already be removed). Returns the node id, or -1 when out of memory
 * (message recorded). */
int cs_add_kernel(cs_graph *g, cs_op op, const char *origin, int n_inputs,
                  const int *inputs, int out);

/* A k_slice (cs_add_kernel) that copies the box of value `in` that value
 * `out` (of in's rank and dtype) is: from start[d] (NULL: 0) every step[d]
 * (NULL: 1) elements along each axis d, out's shape many. Returns the
 * node id, or -1 when out of memory (message recorded). */
int cs_add_slice(cs_graph *g, const char *origin, int in, int out, const int64_t *start, const int64_t *step);

/* A k_concat (cs_add_kernel) of the n values `ins`, of one size, into
 * `out`: `outer` times one step of each in turn, a step being
 * nbytes(out) / (outer·n) bytes — outer 1 puts the values one after
 * another, more interleaves them. Returns the node id, or -1 when out of
 * memory (message recorded). */
int cs_add_concat_steps(cs_graph *g, const char *origin, int n, const int *ins, int out, int64_t outer);


#endif
