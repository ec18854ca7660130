/*
 * eval_internal.h — shared by the compile-time evaluators (eval_*.c).
 */
#ifndef CSTATIC_EVAL_INTERNAL_H
#define CSTATIC_EVAL_INTERNAL_H

#include "const_eval.h"
#include "cstatic/kernels.h"

/* One evaluator: accepts() says whether it computes this node (op and
 * dtypes); run() writes every output j into out[j], a zeroed buffer of
 * that output's size. run() fails only for an error in the model, with a
 * message naming the node. */
typedef struct cs_evaluator {
  cs_op op;
  int (*accepts)(const cs_graph *g, const cs_node *n);
  cs_status (*run)(const cs_graph *g, const cs_node *n, void *const *out);
} cs_evaluator;

/* The evaluators of each family (NULL-terminated by op = CS_OP_COUNT_). */
extern const cs_evaluator cs_eval_arith[];  /* eval_arith.c */
extern const cs_evaluator cs_eval_shape[];  /* eval_shape.c */
extern const cs_evaluator cs_eval_scatter[]; /* eval_scatter.c */

/* An op with a runtime kernel: lower node n of g the way LegalizeOps does
 * and run the reference kernels on its constant inputs; the results land
 * in out[j]. Returns 0 (nothing written, no error left behind) when the
 * lowering refuses the node. */
int cs_eval_with_kernels(const cs_graph *g, int id, void *const *out);

/* The one allocation of a result buffer: `bytes` (zeroed) after checking
 * it against CS_EVAL_MAX_BYTES. */
cs_status cs_eval_alloc(const cs_node *n, const cs_value *v, void **out);

/* ---- element access ---------------------------------------------------- */

const cs_value *cs_eval_in(const cs_graph *g, const cs_node *n, int j);
const cs_value *cs_eval_out(const cs_graph *g, const cs_node *n, int j);
/* Element i of buffer p of dtype t, as int64 (floats truncate) / double. */
int64_t cs_eval_get_int(const void *p, cs_dtype t, int64_t i);
double cs_eval_get_float(const void *p, cs_dtype t, int64_t i);
/* Store an integer (wrapping to the dtype) or a double (floats; integers
 * truncate toward zero) into element i. */
void cs_eval_set_int(void *p, cs_dtype t, int64_t i, int64_t v);
void cs_eval_set_float(void *p, cs_dtype t, int64_t i, double v);
int cs_eval_is_float(cs_dtype t);

/* Numpy broadcasting of inputs onto output y: for the output's linear
 * index i, the linear index into input a (strides 0 on broadcast dims). */
typedef struct cs_eval_bcast {
  int rank;
  int64_t shape[CS_MAX_RANK];
  int64_t stride[CS_MAX_RANK];
} cs_eval_bcast;
void cs_eval_bcast_init(const cs_value *a, const cs_value *y, cs_eval_bcast *b);
int64_t cs_eval_bcast_index(const cs_eval_bcast *b, int64_t i);

#endif
