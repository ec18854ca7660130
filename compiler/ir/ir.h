/*
 * ir.h — the compiler's graph IR.
 *
 * A graph of nodes over typed values, both owned by the graph and named by
 * integer id. Values live in fixed-size blocks that never move, so a
 * cs_value * (cs_graph_value) stays valid while values are added — a pass
 * may hold one across cs_graph_add_const — until cs_graph_compact()
 * renumbers ids (or the graph is freed). Nodes live in a growable array:
 * re-read a cs_node * after adding a node. A removed node is marked dead
 * and skipped by every walker; cs_graph_compact() drops dead nodes and
 * unused values.
 *
 * Constants: a value with data != NULL. Its payload is owned by the graph
 * (malloc'd, freed by cs_graph_free) and stored row-major in the value's
 * dtype, little-endian.
 *
 * Kernel ops (CS_OP_K_*) carry their runtime parameter struct in node->k;
 * every pointer argument of the kernel is an input value of the node (in the
 * kernel's argument order), constants included.
 */
#ifndef CSTATIC_IR_H
#define CSTATIC_IR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cstatic/kernels.h"
#include "offload.h"

#define CS_MAX_RANK 6

/* ---- status and errors --------------------------------------------- */

#define CS_STATUS_LIST(X)                              \
  X(CS_OK, "ok")                                       \
  X(CS_ERR_USAGE, "usage error")                       \
  X(CS_ERR_IO, "i/o error")                            \
  X(CS_ERR_PARSE, "malformed model")                   \
  X(CS_ERR_INVALID, "invalid model")                   \
  X(CS_ERR_UNSUPPORTED, "unsupported model")           \
  X(CS_ERR_NOMEM, "out of memory")                     \
  X(CS_ERR_INTERNAL, "internal compiler error")

typedef enum cs_status {
#define CS_X_ENUM(name, text) name,
  CS_STATUS_LIST(CS_X_ENUM)
#undef CS_X_ENUM
} cs_status;

const char *cs_status_str(cs_status s);

/* Record an error message (printf-style) and return `s`. The message is
 * one line that names the thing: file, node, tensor, rule, value. A later
 * call replaces it. */
cs_status cs_error(cs_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *cs_error_message(void);
void cs_error_clear(void);

/* ---- dtypes --------------------------------------------------------- */

typedef enum cs_dtype {
  CS_DTYPE_UNDEF = 0,
  CS_DTYPE_F32,
  CS_DTYPE_I8,
  CS_DTYPE_U8,
  CS_DTYPE_I16,
  CS_DTYPE_U16,
  CS_DTYPE_I32,
  CS_DTYPE_I64,
  CS_DTYPE_BOOL,
  /* Cast, Max/Min, Pow's exponent and data movement only (the ops whose
   * kernels read any dtype); other ops refuse them naming the dtype. */
  CS_DTYPE_F16,
  CS_DTYPE_BF16,
  CS_DTYPE_F64,
  CS_DTYPE_U32,
  CS_DTYPE_U64
} cs_dtype;

size_t cs_dtype_size(cs_dtype t);
const char *cs_dtype_name(cs_dtype t); /* "f32", "i8", … */
const char *cs_dtype_c_type(cs_dtype t); /* "float", "int8_t", … */
int32_t cs_dtype_to_tidsp(cs_dtype t);   /* TIDSP_DTYPE_*, 0 if none */
int cs_dtype_is_int(cs_dtype t);
/* Integer range of a quantized dtype (i8, u8, i16, u16, i32). */
void cs_dtype_range(cs_dtype t, int64_t *lo, int64_t *hi);

/* ---- values --------------------------------------------------------- */

/* Quantization of an integer tensor: per-tensor (axis = -1, count = 1) or
 * per-axis (count = shape[axis]). */
typedef struct cs_quant {
  int axis;
  int count;
  float *scale;       /* [count] */
  int32_t *zero_point; /* [count] */
} cs_quant;

typedef struct cs_value {
  char *name;
  cs_dtype dtype;
  int rank;
  int64_t shape[CS_MAX_RANK];
  void *data;      /* constant payload or NULL */
  cs_quant *quant; /* optional, owned */
  int producer;    /* node id, or -1 for graph inputs and constants */
  int from_u8;     /* an int8 activation the model had as uint8 (set by
                    * Canonicalize; kernels.h "The uint8 domain") */
} cs_value;

int64_t cs_value_numel(const cs_value *v);
size_t cs_value_nbytes(const cs_value *v);

/* ---- nodes ---------------------------------------------------------- */

typedef enum cs_op {
#define CS_OP(e, s) CS_OP_##e,
#include "ops.def"
#undef CS_OP
  CS_OP_COUNT_
} cs_op;

const char *cs_op_name(cs_op op);           /* "Conv", "k_conv2d_i8" */
int cs_op_from_onnx(const char *op_type);   /* CS_OP_*, or -1 */
int cs_op_is_kernel(cs_op op);

typedef enum cs_attr_kind {
  CS_ATTR_INT,
  CS_ATTR_FLOAT,
  CS_ATTR_INTS,
  CS_ATTR_FLOATS,
  CS_ATTR_STRING
} cs_attr_kind;

typedef struct cs_attr {
  char *name;
  cs_attr_kind kind;
  int64_t i;
  float f;
  int n;           /* length of ints/floats */
  int64_t *ints;
  float *floats;
  char *s;
} cs_attr;

/* Parameters of a kernel op: the runtime struct it is called with, one
 * member per TIDSP_KPARAMS row of cstatic/kernels.def. */
typedef union cs_kparams {
#define TIDSP_KPARAMS(member, type) type member;
#include "cstatic/kernels.def"
} cs_kparams;

typedef struct cs_node {
  cs_op op;
  char *name;   /* ONNX node name, or a generated one */
  char *origin; /* the ONNX node names this node came from, ", "-joined */
  int n_inputs;
  int *inputs;  /* value ids; -1 = absent optional input */
  int n_outputs;
  int *outputs;
  int n_attrs;
  cs_attr *attrs;
  cs_kparams k;
  int dead;
} cs_node;

/* ---- graph ---------------------------------------------------------- */

/* An ONNX node as the file describes it, kept for the names of layers in
 * reports (manifest, profile, lib*.c comments): its op type and the
 * PyTorch module path a torch.onnx export recorded for it
 * ("layer1.0.conv1"; "" when the file has none). */
typedef struct cs_source_node {
  char *name;
  char *op_type;
  char *module;
} cs_source_node;

/* Value storage: blocks of CS_VALUE_BLOCK values, allocated as the graph
 * grows and never reallocated; only the index of block pointers grows. */
#define CS_VALUE_BLOCK_LOG2 8
#define CS_VALUE_BLOCK (1 << CS_VALUE_BLOCK_LOG2)

typedef struct cs_graph {
  char *name;
  int opset;
  cs_value **value_blocks; /* [cap_values / CS_VALUE_BLOCK] */
  int n_values, cap_values; /* cap_values: a multiple of CS_VALUE_BLOCK */
  cs_node *nodes;
  int n_nodes, cap_nodes;
  int *inputs; /* graph input value ids, in order */
  int n_inputs;
  int *outputs;
  int n_outputs;
  int n_tap_outputs;  /* the last n_tap_outputs outputs are `--outputs` taps (frontend/onnx_outputs.c) */
  size_t mem_limit;   /* bytes; 0 = CS_MEM_LIMIT_DEFAULT (see below) */
  size_t const_bytes; /* constant payload held now */
  struct cs_use_list *uses; /* per value: the nodes that may read it (graph.c) */
  int uses_ok;              /* 0 after an allocation failure: scan instead */
  int alloc_failed; /* a pattern match ran out of memory and declined: the
                     * pass runner fails the compile after that pass */
  cs_source_node *source_nodes; /* every ONNX node of the file, in file order */
  int n_source_nodes, cap_source_nodes;
  cs_offload_report offload; /* -mmalib=1: the MMALIB passes' decisions (offload.h) */
} cs_graph;

/* Out of memory: every function below that allocates reports it (status
 * CS_ERR_NOMEM, or -1 / NULL with the message recorded by cs_error) and
 * leaves the graph as it was; the caller returns the failure. Nothing in
 * the compiler aborts. */

cs_graph *cs_graph_new(const char *name); /* NULL when out of memory */
void cs_graph_free(cs_graph *g);

/* Add a value; name is copied (NULL → generated "%N"). Returns its id,
 * or -1 when out of memory. */
int cs_graph_add_value(cs_graph *g, const char *name, cs_dtype dtype, int rank,
                       const int64_t *shape);
/* Add a constant; data (nbytes = numel·dtype size) is copied (NULL: zero
 * filled). Returns its id, or -1 when the payload would break the memory
 * limit (checked before anything is allocated) or memory runs out. */
int cs_graph_add_const(cs_graph *g, const char *name, cs_dtype dtype, int rank,
                       const int64_t *shape, const void *data);
/* cs_graph_add_const with a generated, readable name "<base>.<suffix>"
 * (base NULL: "const"), the names passes give the constants they make. */
int cs_add_const_named(cs_graph *g, const char *base, const char *suffix,
                       cs_dtype dtype, int rank, const int64_t *shape,
                       const void *data);
/* Make value id a constant with `data` (malloc'd, numel·dtype size bytes;
 * the graph takes ownership) and account its bytes; for passes that
 * computed the payload themselves (cs_graph_check_value first). */
void cs_graph_set_const_data(cs_graph *g, int id, void *data);
/* Add a node; name/origin copied; inputs/outputs copied. Sets producer of
 * each output. Returns its id, or -1 when out of memory. */
int cs_graph_add_node(cs_graph *g, cs_op op, const char *name,
                      const char *origin, int n_inputs, const int *inputs,
                      int n_outputs, const int *outputs);
void cs_graph_remove_node(cs_graph *g, int node_id); /* marks dead */
/* Input j of a node reads value v from now on. Node inputs are written
 * through this (or cs_graph_replace_uses, cs_node_set_inputs): the graph
 * keeps an index of each value's readers, and cs_graph_verify rejects a
 * reader the index does not know. */
void cs_node_set_input(cs_graph *g, int node_id, int j, int v);
/* Replace a node's whole input list (copied). CS_ERR_NOMEM on failure. */
cs_status cs_node_set_inputs(cs_graph *g, int node_id, int n_inputs, const int *inputs);
/* Record an ONNX node's name, op type and module path (module_len bytes
 * of module; the strings are copied). CS_ERR_NOMEM on failure. */
cs_status cs_graph_add_source_node(cs_graph *g, const char *name, const char *op_type, const char *module,
                                   size_t module_len);
/* Replace every use of value `from` (node inputs and graph outputs) by `to`. */
void cs_graph_replace_uses(cs_graph *g, int from, int to);
/* Node ids (alive, ascending) that read value v, written to out (up to
 * max); returns the total count (may exceed max). */
int cs_graph_consumers(const cs_graph *g, int v, int *out, int max);
int cs_graph_is_output(const cs_graph *g, int v);
/* v is one of the model's own outputs, not only a `--outputs` tap: a
 * decision that weighs what a graph output costs (a padded layer's cut)
 * asks this, so that taps, which must leave the model's outputs as they
 * are, do not change it. */
int cs_graph_is_model_output(const cs_graph *g, int v);
/* CS_OK if every live node's inputs are in the reader index (the
 * verifier's check), else CS_ERR_INTERNAL naming the node. */
cs_status cs_graph_check_uses(const cs_graph *g);
/* Remove dead nodes and values no live node or graph I/O refers to;
 * renumbers ids. */
cs_status cs_graph_compact(cs_graph *g);
/* Remove nodes whose outputs are unused (dead-code elimination). */
cs_status cs_graph_dce(cs_graph *g);
/* Node ids in a topological order (Kahn, stable by node id). Returns count
 * or -1 on a cycle, -2 when out of memory (message recorded). `order` must
 * hold n_nodes entries. */
int cs_graph_topo_order(const cs_graph *g, int *order);

/* ---- memory limit --------------------------------------------------- */

/* What a compile may hold, so that a small hostile file cannot make it
 * allocate gigabytes: no tensor (constant or not) may be larger than the
 * limit, and the constants of a graph together may not exceed it.
 * `cstatic compile --max-memory` sets g->mem_limit. */
#define CS_MEM_LIMIT_DEFAULT ((size_t)4 << 30)
size_t cs_graph_mem_limit(const cs_graph *g);
/* Before allocating value v's numel·dtype bytes (is_const: counted against
 * the constants already held): CS_OK, or CS_ERR_NOMEM with one line naming
 * the tensor, its dtype, shape and size and the limit (an overflowing shape
 * fails too). */
cs_status cs_graph_check_value(const cs_graph *g, const cs_value *v, int is_const);
/* "8.0 GiB" style text for messages. */
const char *cs_bytes_text(uint64_t n, char *buf, size_t size);

/* Value id (0 <= id < n_values). The pointer stays valid until
 * cs_graph_compact or cs_graph_free; a const graph's values are reached the
 * same way (the graph's constness does not extend to them, as before). */
static inline cs_value *cs_graph_value(const cs_graph *g, int id) {
  return &g->value_blocks[id >> CS_VALUE_BLOCK_LOG2][id & (CS_VALUE_BLOCK - 1)];
}
static inline cs_node *cs_graph_node(cs_graph *g, int id) {
  return &g->nodes[id];
}

/* Attributes. Out of memory: NULL / CS_ERR_NOMEM, the node unchanged. */
cs_attr *cs_node_add_attr(cs_node *n, const char *name, cs_attr_kind kind);
const cs_attr *cs_node_attr(const cs_node *n, const char *name);
int64_t cs_node_attr_int(const cs_node *n, const char *name, int64_t dflt);
float cs_node_attr_float(const cs_node *n, const char *name, float dflt);
/* A string attr's text, or dflt if absent or not a string. */
const char *cs_node_attr_string(const cs_node *n, const char *name, const char *dflt);
/* Returns the attr's ints (count in *n_out) or NULL if absent. */
const int64_t *cs_node_attr_ints(const cs_node *n, const char *name,
                                 int *n_out);
cs_status cs_node_set_attr_int(cs_node *n, const char *name, int64_t v);
cs_status cs_node_set_attr_ints(cs_node *n, const char *name, int count,
                                const int64_t *v);
/* Remove attribute `name` (if present) / every attribute, freeing them. */
void cs_node_remove_attr(cs_node *n, const char *name);
void cs_node_clear_attrs(cs_node *n);
/* Every attribute of src, copied onto dst (an attribute of the same name
 * replaced). CS_ERR_NOMEM (message recorded) when memory runs out. */
cs_status cs_node_copy_attrs(cs_node *dst, const cs_node *src);
/* A string attribute (copied). */
cs_status cs_node_set_attr_string(cs_node *n, const char *name, const char *s, size_t len);

/* Set a value's quantization (per-tensor if axis < 0). CS_ERR_NOMEM on
 * failure, the value unchanged. */
cs_status cs_value_set_quant(cs_value *v, int axis, int count, const float *scale,
                        const int32_t *zero_point);

/* Read element i of a constant as int64 / double (any dtype). */
int64_t cs_const_get_int(const cs_value *v, int64_t i);
double cs_const_get_float(const cs_value *v, int64_t i);

/* ---- kernel ops: the table of cstatic/kernels.def (kernels.c) -------- */

/* How a kernel is called (the row's form). */
typedef enum cs_kcall {
  CS_KCALL_PARAMS, /* fn(&params, inputs…, output) */
  CS_KCALL_BYTES,  /* fn(bytes, input, output): tidsp_copy */
  CS_KCALL_ARRAY,  /* fn(&params, (const void *const[]){inputs…}, output) */
  CS_KCALL_EXTERN  /* fn(inputs…, output, the node's int32 "mm_args"…) */
} cs_kcall;

/* The dtype rule of a kernel argument: a cs_dtype (CS_DTYPE_UNDEF: any),
 * or one of these. */
enum {
  CS_KDT_SAME = -1, /* the output's dtype */
  CS_KDT_INT = -2   /* an integer dtype other than i64 */
};

/* One field of a params struct (TIDSP_KFIELD). */
typedef enum cs_kfield_kind {
  CS_KF_INT,    /* int32_t */
  CS_KF_FLOAT,  /* float */
  CS_KF_ENUM,   /* int32_t enumerator; names[value] is its C name */
  CS_KF_INTS,   /* int32_t[TIDSP_MAX_RANK], count at count_offset */
  CS_KF_STRUCT, /* a nested struct */
  CS_KF_BYTES,  /* uint8_t[count] */
  CS_KF_ARRAY   /* const int32_t *, from the node attribute `attr` */
} cs_kfield_kind;

enum {
  CS_KF_Q = 1, /* only for kernels with an integer output */
  CS_KF_NZ = 2 /* only when nonzero */
};

typedef struct cs_kstruct cs_kstruct;

typedef struct cs_kfield {
  const cs_kstruct *owner; /* NULL only for the table's end */
  const char *name;
  cs_kfield_kind kind;
  unsigned flags;
  size_t offset, size;
  size_t count_offset;      /* INTS */
  int count;                /* BYTES */
  const char *const *names; /* ENUM: [n_names], NULL entries unnamed */
  int n_names;
  const cs_kstruct *nested; /* STRUCT */
  const char *attr;         /* ARRAY */
} cs_kfield;

struct cs_kstruct {
  const char *name; /* its TIDSP_KPARAMS member or TIDSP_KSTRUCT name */
  const char *type; /* its C type, "tidsp_conv2d_params" */
  size_t size, align;
  /* its fields, in declaration order: while (f->owner == this struct) */
  const cs_kfield *fields;
};

#define CS_KERNEL_MAX_INPUTS 6

/* A row of the table. */
typedef struct cs_kernel_info {
  cs_op op;
  const char *fn;        /* the C symbol generated code calls */
  const char *ref_fn;    /* what constant folding runs: fn, or fn__ref when
                            fn dispatches (kernels.def "ref") */
  const char *scalar_fn; /* what -kernels=scalar calls instead of fn: the
                            public fn__ref, or NULL */
  cs_kcall call;
  const cs_kstruct *params; /* NULL for EXTERN and BYTES */
  int n_inputs;             /* pointer inputs; -1: any number (ARRAY) */
  int in[CS_KERNEL_MAX_INPUTS]; /* dtype rules; ARRAY: in[0] for all */
  unsigned optional;            /* bit i: input i may be absent */
  int out;
  int n_args;         /* EXTERN: int32 arguments… */
  const char *args;   /* …named as the header does, ", "-joined */
  const char *group;  /* the firmware's export group: "runtime", "mmalib",
                         "tidl" */
} cs_kernel_info;

/* NULL for an op that is not a kernel op. */
const cs_kernel_info *cs_kernel_info_of(cs_op op);
/* The entry that computes a chunk of kernel op's output channels (a
 * TIDSP_KERNEL_AUX row's sliced_of), or NULL: the kernel cannot be sliced. */
const char *cs_kernel_sliced_fn(cs_op op);
/* The params structs (every TIDSP_KPARAMS and TIDSP_KSTRUCT row). */
const cs_kstruct *cs_kstructs(int *n);
/* The dtype a pointer argument with rule `rule` has in C: the dtype, or
 * CS_DTYPE_UNDEF (void) for any/same/int and bool. */
cs_dtype cs_kernel_ptr_dtype(int rule);
/* Node `id` against its kernel's signature: one output of the output's
 * rule, then each input's dtype, absent inputs only where optional. The
 * verifier checks the tensors passed between kernels (with_constants 0);
 * codegen (with_constants 1) every argument and the input count too.
 * CS_ERR_INTERNAL with "<who>node <id> '<name>' (<op>): …" on failure. */
cs_status cs_kernel_check(const cs_graph *g, int id, int with_constants, const char *who);
/* "TIDSP_DTYPE_F32" for TIDSP_DTYPE_F32 (a tidsp_dtype value), else NULL. */
const char *cs_tidsp_dtype_name(int32_t tidsp_dtype);
/* 1 when a field flagged Q is part of this kernel's params. */
int cs_kernel_has_q_fields(const cs_kernel_info *ki);
/* 1 when field k of the struct at p is written out (printed, emitted): not
 * when flagged Q and q (the kernel has integer output) is 0, nor when
 * flagged NZ and zero. */
int cs_kfield_present(const cs_kfield *k, const unsigned char *p, int q);

/* ---- printer and verifier ------------------------------------------- */

void cs_graph_print(const cs_graph *g, FILE *f);
/* Checks ids in range, producers consistent, single producer per value,
 * acyclic, every live node's inputs defined, kernel ops' dtypes. Returns
 * CS_ERR_INTERNAL with a message naming the node on failure. */
cs_status cs_graph_verify(const cs_graph *g);

#endif /* CSTATIC_IR_H */
