/*
 * onnx.h — the ONNX frontend: a .onnx file → IR graph.
 */
#ifndef CSTATIC_FRONTEND_ONNX_H
#define CSTATIC_FRONTEND_ONNX_H

#include <stdio.h>

#include "ir.h"

/* Compile-time evaluation of node `id` of a graph being built (every
 * earlier node is in place, its shapes inferred): when its value is known
 * at compile time, it becomes constants (*folded = 1, the node removed);
 * otherwise the graph is left as it was (*folded = 0). Non-OK only for a
 * real error (a result too large, an index out of range), with the
 * message naming the node. The frontend calls it for each node as it is
 * added, so that shapes computed from constants (Shape → Gather → Concat
 * → Reshape) are known when the next node's shapes are inferred. It lives
 * with the kernels it runs (eval/), which the frontend does not link:
 * the caller passes it in (cs_const_eval_node), or NULL to fold nothing. */
typedef cs_status (*cs_onnx_eval_fn)(cs_graph *g, int id, int *folded);

/* Parse, validate and build the IR with every shape inferred. On error
 * returns non-OK with cs_error_message() naming the file and the problem
 * (every unsupported op with its node name in one message). Initializers
 * (raw, typed, external data next to the model) become constants;
 * Constant nodes too; with `eval`, so does every node whose value is known
 * at compile time, and an op without a runtime kernel is refused only
 * where it would run. */
cs_status cs_onnx_load(const char *path, cs_onnx_eval_fn eval, cs_graph **out);

/* Loading options. max_memory: the graph's memory limit (ir.h; 0 = the
 * default CS_MEM_LIMIT_DEFAULT). Every size the file declares is checked
 * against what the file holds and against this limit before anything is
 * allocated for it. eval: as for cs_onnx_load (NULL: fold nothing). */
typedef struct cs_onnx_options {
  size_t max_memory;
  cs_onnx_eval_fn eval;
} cs_onnx_options;
cs_status cs_onnx_load_with(const char *path, const cs_onnx_options *opt, cs_graph **out);
/* A model in memory (the fuzz harness): the same checks; external data is
 * refused (no directory to resolve it in). Messages lack the file name. */
cs_status cs_onnx_load_buffer(const void *data, size_t len, const char *name, const cs_onnx_options *opt,
                              cs_graph **out);

/* `cstatic compile --outputs SPEC`: keep intermediate tensors as extra
 * graph outputs, after the model's own. SPEC is "NAME[,NAME...]" or
 * "all-quantized" (every QuantizeLinear output computed at run time, in
 * node order). Call it on the loaded graph, before the passes. An unknown
 * name, a constant or a graph input is a usage error naming it. */
cs_status cs_onnx_keep_outputs(cs_graph *g, const char *spec);

/* `cstatic inspect`: a readable summary (opset, I/O, op histogram,
 * unsupported ops, quantization scheme) written to f; `eval` as for
 * cs_onnx_load. */
cs_status cs_onnx_inspect(const char *path, cs_onnx_eval_fn eval, FILE *f);

#endif
