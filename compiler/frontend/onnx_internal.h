/*
 * onnx_internal.h — shared by the ONNX frontend's files; not a public API.
 *
 * Flow: read the file (onnx_file.c) → unpack with protobuf-c and check the
 * opset (onnx_model.c) → refuse unsupported ops, check names and order the
 * nodes (onnx_check.c) → build the IR node by node, converting tensors
 * (onnx_tensor.c) and inferring shapes (onnx_shape*.c) as each node is
 * added (onnx.c). Errors are formatted without the file name; onnx.c
 * prefixes it once.
 */
#ifndef CSTATIC_FRONTEND_ONNX_INTERNAL_H
#define CSTATIC_FRONTEND_ONNX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "onnx.h"
#include "onnx.pb-c.h"

#define CS_ONNX_MIN_OPSET 1
#define CS_ONNX_MAX_OPSET 25
/* Largest element count of any tensor: kernel parameters are int32. */
#define CS_ONNX_MAX_NUMEL INT32_MAX

/* ---- small utilities (onnx_util.c) --------------------------------- */

/* String → int map over borrowed keys (the protobuf message owns them). */
typedef struct cs_onnx_map {
  const char **keys;
  int *vals;
  size_t cap, count;
} cs_onnx_map;

cs_status cs_onnx_map_init(cs_onnx_map *m, size_t expected); /* CS_ERR_NOMEM */
void cs_onnx_map_free(cs_onnx_map *m);
int cs_onnx_map_get(const cs_onnx_map *m, const char *key); /* -1: absent */
cs_status cs_onnx_map_put(cs_onnx_map *m, const char *key, int val);

/* Growable string for messages. */
typedef struct cs_onnx_str {
  char *s;
  size_t len, cap;
} cs_onnx_str;

void cs_onnx_str_printf(cs_onnx_str *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cs_onnx_str_free(cs_onnx_str *b);

/* NULL-safe view of a protobuf string field. */
static inline const char *cs_onnx_s(const char *s) { return s ? s : ""; }

/* ---- files (onnx_file.c) -------------------------------------------- */

/* Read a whole regular file; messages say what is wrong with `path`. */
cs_status cs_onnx_read_file(const char *path, size_t max_bytes, uint8_t **buf, size_t *len);
/* Read `len` bytes at `offset` of an external-data file (already checked
 * to lie inside it). */
cs_status cs_onnx_read_range(const char *path, int64_t offset, size_t len,
                             void *dst);

/* ---- the parsed model (onnx_model.c) -------------------------------- */

typedef struct cs_onnx_model {
  const char *path;
  char *dir; /* the model's directory: external data is relative to it;
              * NULL for a model from memory (no external data) */
  uint8_t *buf;
  size_t len;
  Onnx__ModelProto *proto;
  int64_t opset; /* default domain; -1 if not imported */
} cs_onnx_model;

/* Read and unpack; fails only if the file is not an ONNX model at all. */
cs_status cs_onnx_model_open(const char *path, size_t max_bytes, cs_onnx_model *m);
/* The same from len bytes in memory (copied); name is for messages. */
cs_status cs_onnx_model_from_buffer(const void *data, size_t len, const char *name, cs_onnx_model *m);
void cs_onnx_model_close(cs_onnx_model *m);
/* The default-domain opset must be 1..25. Message without the path. */
cs_status cs_onnx_check_opset(const cs_onnx_model *m);

/* Everything after the file is open: opset, supported ops, the graph
 * (onnx.c), with opt->eval (may be NULL) folding what is known at compile
 * time. Errors come back without the file name. */
cs_status cs_onnx_build_model(const cs_onnx_model *m, const cs_onnx_options *opt, cs_graph **out);

/* ---- checks before building (onnx_check.c) --------------------------- */

int cs_onnx_is_default_domain(const char *domain);
/* op enum of a supported node, CS_OP_COUNT_ for Constant, -1 otherwise. */
int cs_onnx_node_op(const Onnx__NodeProto *n);
/* A printable name for node i: its name or "#i". Uses a static buffer. */
const char *cs_onnx_node_label(const Onnx__NodeProto *n, size_t i);
/* Append "Op (node 'x'), …" for every unsupported node; returns count.
 * With `folding`, an op that has no runtime kernel (cs_onnx_op_const_only)
 * is unsupported only where it would run: where an input depends on a
 * graph input (through anything but Shape/Size, which read only the static
 * shape) or on a QuantizeLinear/DequantizeLinear (never folded: the QDQ
 * fusions must see them). Without it, every such op is listed. */
int cs_onnx_list_unsupported(const Onnx__GraphProto *g, int folding,
                             cs_onnx_str *out);
/* Names defined once, every input defined, no cycle: fills order[n_node]
 * with node indices in a topological order (stable by index). */
cs_status cs_onnx_order_nodes(const Onnx__GraphProto *g, size_t *order);

/* ---- tensors (onnx_tensor.c) ---------------------------------------- */

/* ONNX TensorProto.DataType → cs_dtype; UNDEF if unsupported. */
cs_dtype cs_onnx_dtype(int32_t onnx_type);
const char *cs_onnx_dtype_name(int32_t onnx_type); /* "FLOAT16", … */
/* Convert an initializer or a Constant's tensor into a graph constant
 * named `name`; *id is its value id. */
cs_status cs_onnx_tensor_to_const(const cs_onnx_model *m, cs_graph *g,
                                  const Onnx__TensorProto *t, const char *name,
                                  int *id);

/* ---- shape inference (onnx_shape*.c) --------------------------------- */

typedef struct cs_onnx_infer {
  cs_graph *g;
  int opset;
} cs_onnx_infer;

/* Infer dtype and shape of every output of node `id` (an ONNX op) from its
 * inputs and attributes. Also resolves auto_pad into explicit "pads" for
 * Conv/MaxPool/AveragePool, and records the quantization of QDQ integer
 * tensors whose scale and zero point are constants. */
cs_status cs_onnx_infer_node(cs_onnx_infer *c, int id);
/* BatchNormalization with training_mode = 1 as inference ops
 * (onnx_training.c); node id becomes the first of them. */
cs_status cs_onnx_lower_training_batch_norm(cs_onnx_infer *c, int id);

/* Helpers shared by the per-op files. */
cs_status cs_onnx_node_err(const cs_onnx_infer *c, const cs_node *n,
                           cs_status s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const cs_value *cs_onnx_in(const cs_onnx_infer *c, const cs_node *n, int j);
cs_status cs_onnx_set_out(const cs_onnx_infer *c, const cs_node *n, int j,
                          cs_dtype dtype, int rank, const int64_t *shape);
/* Input j as a constant 1-D (or scalar) integer list of at most `max`
 * entries; `what` names the input in messages. */
cs_status cs_onnx_const_ints(const cs_onnx_infer *c, const cs_node *n, int j,
                             const char *what, int64_t *out, int max,
                             int *count);
/* Every output of node n that stays a runtime tensor (not a constant)
 * has at least one element: empty tensors exist only while they fold. */
cs_status cs_onnx_check_not_empty(const cs_onnx_infer *c, const cs_node *n);
/* Normalize an axis into [0, rank) (negative counts from the end). */
cs_status cs_onnx_axis(const cs_onnx_infer *c, const cs_node *n, int64_t axis,
                       int rank, const char *what, int *out);
/* Format a shape as "[1,3,224,224]" into a static rotating buffer. */
const char *cs_onnx_shape_str(int rank, const int64_t *shape);

/* Ops accepted only in constant subgraphs: they have no runtime kernel, so
 * a node of this op must fold at compile time (onnx_shape.c's table). */
int cs_onnx_op_const_only(int op);

/* Opsets before the current form of an op wrote some inputs as attributes
 * (Clip < 11, Pad < 11, Slice < 10, Split/Squeeze/Unsqueeze < 13,
 * ReduceMean < 18) or had other semantics (Softmax < 13 flattens to 2-D);
 * rewrite node `id` into the current form before its shapes are inferred,
 * so that every later stage reads one form (onnx_legacy.c). */
cs_status cs_onnx_upgrade_node(cs_onnx_infer *c, int id);
/* Upsample, Resize in nearest mode → Reshape → Expand → Reshape where
 * that is what they compute (onnx_resize.c); refused otherwise. */
cs_status cs_onnx_lower_resize(cs_onnx_infer *c, int id);

cs_status cs_onnx_infer_conv(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_conv_transpose(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_pool(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_global_pool(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_reshape(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_flatten(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_transpose(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_concat(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_split(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_slice(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_gather(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_squeeze(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_unsqueeze(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_pad(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_reduce_mean(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_shape(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_size(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_constant_of_shape(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_range(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_tile(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_scatter_nd(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_gather_nd(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_quantize(cs_onnx_infer *c, cs_node *n);
cs_status cs_onnx_infer_dequantize(cs_onnx_infer *c, cs_node *n);

#endif
