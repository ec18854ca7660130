/*
 * legalize_internal.h — what the LegalizeOps files share: the family
 * tables the pass dispatches on (legalize.c) and the helpers the lowerings
 * in legalize_<family>.c call across files.
 *
 * A lowering turns ONNX node `id` into kernel calls: most retarget the node
 * itself (cs_lower_retarget), some add kernel nodes beside it. On failure it
 * returns a status with the message recorded (cs_error), naming the node.
 */
#ifndef CSTATIC_LEGALIZE_INTERNAL_H
#define CSTATIC_LEGALIZE_INTERNAL_H

#include <stdint.h>

#include "eval/unary_fns.h"
#include "ir.h"
#include "match/pattern.h"

typedef cs_status cs_lower_fn(cs_graph *g, int id);

/* One row per ONNX op a family lowers; a table ends with a NULL lower. */
typedef struct cs_lowering {
  cs_op op;
  cs_lower_fn *lower;
} cs_lowering;

extern const cs_lowering cs_lowerings_quant[];       /* legalize_quant.c */
extern const cs_lowering cs_lowerings_conv[];        /* legalize_conv.c */
extern const cs_lowering cs_lowerings_matmul[];      /* legalize_matmul.c */
extern const cs_lowering cs_lowerings_eltwise_f32[]; /* legalize_eltwise_f32.c */
extern const cs_lowering cs_lowerings_eltwise_any[]; /* legalize_eltwise_any.c */
extern const cs_lowering cs_lowerings_norm[];        /* legalize_norm.c */
extern const cs_lowering cs_lowerings_reduce[];      /* legalize_reduce.c */
extern const cs_lowering cs_lowerings_pool[];        /* legalize_pool.c */
extern const cs_lowering cs_lowerings_movement[];    /* legalize_movement.c */
extern const cs_lowering cs_lowerings_slice[];       /* legalize_slice.c */
extern const cs_lowering cs_lowerings_broadcast[];   /* legalize_broadcast.c */

/* ---- legalize.c: retargeting ------------------------------------------ */

/* CS_ERR_UNSUPPORTED naming node n, its op and why. */
cs_status cs_lower_unsupported(const cs_node *n, const char *why);
/* Node `id` becomes kernel `op` on the given inputs with params k (its
 * origin: its own name, unless it has one). */
cs_status cs_lower_retarget(cs_graph *g, int id, cs_op op, int n_inputs, const int *inputs, cs_kparams k);
/* Node `id` becomes a k_copy of value v into its output. */
cs_status cs_lower_retarget_copy(cs_graph *g, int id, int v);
/* A new kernel node `op` (inputs → value out) with params k; out, or -1
 * when out is -1 or memory runs out (message recorded). */
int cs_lower_add_kernel(cs_graph *g, cs_op op, const char *origin, int n_inputs, const int *inputs, int out,
                        cs_kparams k);
/* Sets n's origin to its name when it has none; 0 when out of memory. */
int cs_lower_keep_origin(cs_node *n);
/* Are all of n's inputs and its output float32? */
int cs_lower_all_f32(cs_graph *g, const cs_node *n);

/* The product of s[from .. to). */
static inline int64_t cs_lower_prod(const int64_t *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= s[i];
  return p;
}

/* ---- legalize_eltwise_f32.c: float node builders ---------------------- */

/* A new value "origin.suffix" of dtype and a's and b's broadcast shape. */
int cs_lower_broadcast_value(cs_graph *g, const char *origin, const char *suffix, cs_dtype dtype, int a, int b);
/* A k_binary_f32 node y = a op b; y is new unless out >= 0. Returns y. */
int cs_lower_add_binary_f32(cs_graph *g, const char *origin, tidsp_binary_op op, int a, int b, int out);
/* A k_unary_f32 node on a; returns its new output "origin.suffix". */
int cs_lower_add_unary_f32(cs_graph *g, const char *origin, tidsp_unary_op op, int a, const char *suffix);
/* A float scalar constant "base.suffix". */
int cs_lower_scalar_f32(cs_graph *g, const char *base, const char *suffix, float v);
/* A unary float op (cstatic/unary_ops.def) as one k_unary_f32 call. */
cs_status cs_lower_unary(cs_graph *g, int id, cs_unary_match m, tidsp_unary_f32_params p);

/* ---- legalize_eltwise_any.c: k_binary on any dtype -------------------- */

/* The k_binary op (TIDSP_BINARY_*) of an ONNX op, or -1. */
int cs_lower_binary_any_op(cs_op op);
/* Node `id` becomes y = a op b on k_binary. */
cs_status cs_lower_retarget_binary_any(cs_graph *g, int id, int op, int a, int b);
/* Clip and Relu on integers (outside a QDQ pattern). */
cs_status cs_lower_int_clip(cs_graph *g, int id);

/* ---- legalize_reduce.c ------------------------------------------------ */

/* A k_reduce_mean_f32 node of value a over its dims [axis, rank), keepdims;
 * returns its new output "origin.suffix". */
int cs_lower_add_reduce_mean(cs_graph *g, const char *origin, int a, int axis, const char *suffix);

/* ---- legalize_slice.c ------------------------------------------------- */

/* Input idx of n, a constant list of at most max ints, into out[*count]
 * (*count = 0 when the input is absent). */
cs_status cs_lower_const_ints(cs_graph *g, const cs_node *n, int idx, int64_t *out, int *count, int max);

#endif
