/*
 * onnx_shape.c — shape and dtype inference for the ONNX ops the frontend
 * accepts (ops.def), following the ONNX operator specs for opsets 7–25
 * (older forms are first rewritten into the current one, onnx_legacy.c).
 * This file holds the dispatcher, the shared helpers and the elementwise,
 * matrix and softmax ops; windows (conv/pool) are in onnx_shape_window.c,
 * layout ops in onnx_shape_layout.c, QDQ in onnx_shape_qdq.c, tensors made
 * from shapes and values (Shape, Range, ScatterND, …) in onnx_shape_gen.c.
 */
#include "onnx_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#define M(t) (1u << (t))
#define D_F M(CS_DTYPE_F32)
#define D_NUM                                                          \
  (M(CS_DTYPE_F32) | M(CS_DTYPE_I8) | M(CS_DTYPE_U8) | M(CS_DTYPE_I16) | \
   M(CS_DTYPE_U16) | M(CS_DTYPE_I32) | M(CS_DTYPE_I64))
#define D_ALL (D_NUM | M(CS_DTYPE_BOOL))
#define D_BOOL M(CS_DTYPE_BOOL)
/* The dtypes only Cast, Max/Min and Pow compute (k_binary, tidsp_cast)
 * and data movement carries. */
#define D_WIDE                                                         \
  (M(CS_DTYPE_F16) | M(CS_DTYPE_BF16) | M(CS_DTYPE_F64) | M(CS_DTYPE_U32) | \
   M(CS_DTYPE_U64))
#define D_I64 M(CS_DTYPE_I64)

/* Arity and the dtypes input 0 may have (the ONNX type constraints
 * restricted to the dtypes this compiler has). const_only: the op has no
 * runtime kernel, so it is accepted only where it folds at compile time
 * (a constant subgraph, e.g. Swin's shifted-window mask). */
typedef struct op_rule {
  cs_op op;
  int min_in, max_in, min_out, max_out;
  unsigned dtypes;
  int const_only;
} op_rule;

#define KERNEL 0     /* lowered to a runtime kernel */
#define CONST_ONLY 1 /* folded, never run */

static const op_rule op_rules[] = {
    {CS_OP_ADD, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_AND, 2, 2, 1, 1, D_BOOL, KERNEL},
    {CS_OP_AVERAGE_POOL, 1, 1, 1, 1, D_F, KERNEL},
    {CS_OP_BATCH_NORMALIZATION, 5, 5, 1, 5, D_F, KERNEL},
    {CS_OP_CAST, 1, 1, 1, 1, D_ALL | D_WIDE, KERNEL},
    {CS_OP_CLIP, 1, 3, 1, 1, D_NUM, KERNEL},
    {CS_OP_CONCAT, 1, INT_MAX, 1, 1, D_ALL, KERNEL},
    {CS_OP_CONSTANT_OF_SHAPE, 1, 2, 1, 1, D_I64, CONST_ONLY},
    {CS_OP_CONV, 2, 3, 1, 1, D_F, KERNEL},
    {CS_OP_CONV_TRANSPOSE, 2, 3, 1, 1, D_F, KERNEL},
    {CS_OP_DEQUANTIZE_LINEAR, 2, 3, 1, 1,
     M(CS_DTYPE_I8) | M(CS_DTYPE_U8) | M(CS_DTYPE_I16) | M(CS_DTYPE_U16) |
         M(CS_DTYPE_I32), KERNEL},
    {CS_OP_DIV, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_DROPOUT, 1, 3, 1, 2, D_F, KERNEL},
    {CS_OP_EQUAL, 2, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_EXPAND, 2, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_FLATTEN, 1, 1, 1, 1, D_ALL, KERNEL},
    {CS_OP_GATHER, 2, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_GATHER_ND, 2, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_GELU, 1, 1, 1, 1, D_F, KERNEL},
    {CS_OP_GEMM, 2, 3, 1, 1, D_F | M(CS_DTYPE_I32) | M(CS_DTYPE_I64), KERNEL},
    {CS_OP_GLOBAL_AVERAGE_POOL, 1, 1, 1, 1, D_F, KERNEL},
    {CS_OP_GREATER, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_GREATER_OR_EQUAL, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_IDENTITY, 1, 1, 1, 1, D_ALL | D_WIDE, KERNEL},
    {CS_OP_LAYER_NORMALIZATION, 2, 3, 1, 3, D_F, KERNEL},
    {CS_OP_LESS, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_LESS_OR_EQUAL, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_MATMUL, 2, 2, 1, 1, D_F | M(CS_DTYPE_I32) | M(CS_DTYPE_I64), KERNEL},
    {CS_OP_MAX, 1, INT_MAX, 1, 1, D_NUM | D_WIDE, KERNEL},
    {CS_OP_MAX_POOL, 1, 1, 1, 2, D_F | M(CS_DTYPE_I8) | M(CS_DTYPE_U8), KERNEL},
    {CS_OP_MIN, 1, INT_MAX, 1, 1, D_NUM | D_WIDE, KERNEL},
    {CS_OP_MUL, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_NOT, 1, 1, 1, 1, D_BOOL, KERNEL},
    {CS_OP_OR, 2, 2, 1, 1, D_BOOL, KERNEL},
    {CS_OP_PAD, 2, 4, 1, 1, D_ALL, KERNEL},
    {CS_OP_POW, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_XOR, 2, 2, 1, 1, D_BOOL, KERNEL},
    {CS_OP_RANGE, 3, 3, 1, 1, D_NUM, CONST_ONLY},
    {CS_OP_QUANTIZE_LINEAR, 2, 3, 1, 1, D_F | M(CS_DTYPE_I32), KERNEL},
    {CS_OP_REDUCE_L2, 1, 2, 1, 1, D_F, KERNEL},
    {CS_OP_REDUCE_MEAN, 1, 2, 1, 1, D_F | M(CS_DTYPE_I32) | M(CS_DTYPE_I64), KERNEL},
    {CS_OP_RELU, 1, 1, 1, 1,
     D_F | M(CS_DTYPE_I8) | M(CS_DTYPE_I16) | M(CS_DTYPE_I32) | M(CS_DTYPE_I64), KERNEL},
    {CS_OP_RESHAPE, 2, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_RESIZE, 2, 4, 1, 1, D_ALL, KERNEL}, /* rewritten (onnx_resize.c) */
    {CS_OP_SCATTER_ND, 3, 3, 1, 1, D_ALL, KERNEL},
    {CS_OP_SHAPE, 1, 1, 1, 1, D_ALL, CONST_ONLY},
    {CS_OP_SIZE, 1, 1, 1, 1, D_ALL, CONST_ONLY},
    {CS_OP_SLICE, 3, 5, 1, 1, D_ALL, KERNEL},
    {CS_OP_SOFTMAX, 1, 1, 1, 1, D_F, KERNEL},
    {CS_OP_SPLIT, 1, 2, 1, INT_MAX, D_ALL, KERNEL},
    {CS_OP_SQUEEZE, 1, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_SUB, 2, 2, 1, 1, D_NUM, KERNEL},
    {CS_OP_TILE, 2, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_TRANSPOSE, 1, 1, 1, 1, D_ALL, KERNEL},
    {CS_OP_UNSQUEEZE, 2, 2, 1, 1, D_ALL, KERNEL},
    {CS_OP_UPSAMPLE, 1, 2, 1, 1, D_ALL, KERNEL}, /* rewritten (onnx_resize.c) */
    {CS_OP_WHERE, 3, 3, 1, 1, M(CS_DTYPE_BOOL), KERNEL},
    {CS_OP_PRELU, 2, 2, 1, 1, D_F, KERNEL},
    /* Neg also on integers (shape arithmetic, folded at compile time);
     * rule_of() finds this row before Neg's unary_ops.def row below. */
    {CS_OP_NEG, 1, 1, 1, 1, D_NUM, KERNEL},
/* the float unary ops of cstatic/unary_ops.def: one tensor in, one out */
#define TIDSP_UNARY(NAME, fn, IR, op_type, alpha_attr, alpha, beta_attr, beta) {CS_OP_##IR, 1, 1, 1, 1, D_F, KERNEL},
#include "cstatic/unary_ops.def"
};

/* ---- helpers --------------------------------------------------------- */

cs_status cs_onnx_node_err(const cs_onnx_infer *c, const cs_node *n,
                           cs_status s, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  (void)c;
  return cs_error(s, "node '%s' (%s): %s", n->name, cs_op_name(n->op), msg);
}

const cs_value *cs_onnx_in(const cs_onnx_infer *c, const cs_node *n, int j) {
  if (j < 0 || j >= n->n_inputs || n->inputs[j] < 0) return NULL;
  return cs_graph_value(c->g, n->inputs[j]);
}

const char *cs_onnx_shape_str(int rank, const int64_t *shape) {
  /* per thread, as the error buffer (ir/error.c): shapes go into messages */
  static _Thread_local char bufs[4][160];
  static _Thread_local int next;
  char *b = bufs[next++ & 3];
  size_t k = 0;
  b[k++] = '[';
  for (int i = 0; i < rank && k < sizeof bufs[0] - 24; i++)
    k += (size_t)snprintf(b + k, sizeof bufs[0] - k, "%s%lld", i ? "," : "",
                          (long long)shape[i]);
  b[k++] = ']';
  b[k] = '\0';
  return b;
}

cs_status cs_onnx_set_out(const cs_onnx_infer *c, const cs_node *n, int j,
                          cs_dtype dtype, int rank, const int64_t *shape) {
  if (j >= n->n_outputs) return CS_OK; /* an omitted optional output */
  cs_value *v = cs_graph_value(c->g, n->outputs[j]);
  if (rank > CS_MAX_RANK)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "output '%s' would have rank %d (at most %d "
                            "supported)",
                            v->name, rank, CS_MAX_RANK);
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) {
    /* An empty result is fine while it folds (shape arithmetic slices to
     * nothing); cs_onnx_check_not_empty refuses it where it would run. */
    if (shape[i] < 0)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "output '%s' would have shape %s",
                              v->name, cs_onnx_shape_str(rank, shape));
    if (shape[i] > CS_ONNX_MAX_NUMEL || (numel *= shape[i]) > CS_ONNX_MAX_NUMEL)
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "output '%s' would have more than %d elements",
                              v->name, CS_ONNX_MAX_NUMEL);
  }
  v->dtype = dtype;
  v->rank = rank;
  for (int i = 0; i < rank; i++) v->shape[i] = shape[i];
  return CS_OK;
}

/* The first of the n values ids[] (-1: absent) that is an empty runtime
 * tensor (no elements, not a constant), or NULL. */
static const cs_value *first_empty(const cs_onnx_infer *c, const int *ids, int n) {
  for (int j = 0; j < n; j++) {
    const cs_value *v = ids[j] >= 0 ? cs_graph_value(c->g, ids[j]) : NULL;
    if (v && !v->data && cs_value_numel(v) == 0) return v;
  }
  return NULL;
}

cs_status cs_onnx_check_not_empty(const cs_onnx_infer *c, const cs_node *n) {
  /* an empty graph input reaches no kernel: only nodes whose results are
   * all empty too read it, and those become constants */
  const cs_value *v = first_empty(c, n->inputs, n->n_inputs);
  if (v)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "input '%s' is empty (shape %s) and the node makes elements from it; empty "
                            "tensors are supported only where every result of the node is empty too",
                            v->name, cs_onnx_shape_str(v->rank, v->shape));
  v = first_empty(c, n->outputs, n->n_outputs);
  if (v)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "output '%s' would be empty (shape %s) while another is not; empty "
                            "tensors are supported only where every result of the node is empty",
                            v->name, cs_onnx_shape_str(v->rank, v->shape));
  return CS_OK;
}

static cs_status same_as_input(cs_onnx_infer *c, cs_node *n, int out, int in) {
  const cs_value *x = cs_onnx_in(c, n, in);
  return cs_onnx_set_out(c, n, out, x->dtype, x->rank, x->shape);
}

cs_status cs_onnx_const_ints(const cs_onnx_infer *c, const cs_node *n, int j,
                             const char *what, int64_t *out, int max,
                             int *count) {
  const cs_value *v = cs_onnx_in(c, n, j);
  if (!v)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "input %d (%s) is missing", j,
                            what);
  if (!v->data) {
    if (v->producer >= 0) {
      const cs_node *p = &c->g->nodes[v->producer];
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "input %d '%s' (%s) must be a constant, but it "
                              "is computed at runtime by node '%s' (%s)",
                              j, v->name, what, p->name, cs_op_name(p->op));
    }
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "input %d '%s' (%s) must be a constant, but it is "
                            "a graph input",
                            j, v->name, what);
  }
  if (v->dtype != CS_DTYPE_I64 && v->dtype != CS_DTYPE_I32)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "input %d '%s' (%s) must be int64, not %s", j,
                            v->name, what, cs_dtype_name(v->dtype));
  if (v->rank > 1)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "input %d '%s' (%s) must be 1-D, not %s", j,
                            v->name, what, cs_onnx_shape_str(v->rank, v->shape));
  int64_t numel = cs_value_numel(v);
  if (numel > max)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "input %d '%s' (%s) has %lld entries (at most %d)",
                            j, v->name, what, (long long)numel, max);
  for (int64_t i = 0; i < numel; i++) out[i] = cs_const_get_int(v, i);
  *count = (int)numel;
  return CS_OK;
}

cs_status cs_onnx_axis(const cs_onnx_infer *c, const cs_node *n, int64_t axis,
                       int rank, const char *what, int *out) {
  if (axis < -rank || axis >= rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "%s %lld is out of range for rank %d (valid: %d to "
                            "%d)",
                            what, (long long)axis, rank, -rank, rank - 1);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return CS_OK;
}

/* Numpy (multidirectional) broadcasting of two shapes. */
static cs_status broadcast(cs_onnx_infer *c, cs_node *n, const cs_value *a,
                           const cs_value *b, int *rank, int64_t *shape) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "shapes %s ('%s') and %s ('%s') cannot be "
                              "broadcast",
                              cs_onnx_shape_str(a->rank, a->shape), a->name,
                              cs_onnx_shape_str(b->rank, b->shape), b->name);
    shape[i] = da == 1 ? db : da;
  }
  *rank = r;
  return CS_OK;
}

static cs_status same_dtype(cs_onnx_infer *c, cs_node *n, const cs_value *a,
                            const cs_value *b) {
  if (a->dtype != b->dtype)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "inputs '%s' (%s) and '%s' (%s) must have the same "
                            "dtype",
                            a->name, cs_dtype_name(a->dtype), b->name,
                            cs_dtype_name(b->dtype));
  return CS_OK;
}

static const op_rule *rule_of(int op) {
  for (size_t i = 0; i < sizeof op_rules / sizeof op_rules[0]; i++)
    if ((int)op_rules[i].op == op) return &op_rules[i];
  return NULL;
}

int cs_onnx_op_const_only(int op) {
  const op_rule *r = rule_of(op);
  return r && r->const_only;
}

/* ---- elementwise ----------------------------------------------------- */

static cs_status infer_binary(cs_onnx_infer *c, cs_node *n) {
  const cs_value *a = cs_onnx_in(c, n, 0), *b = cs_onnx_in(c, n, 1);
  int64_t shape[CS_MAX_RANK];
  int rank;
  cs_status st = same_dtype(c, n, a, b);
  if (st == CS_OK) st = broadcast(c, n, a, b, &rank, shape);
  if (st == CS_OK) st = cs_onnx_set_out(c, n, 0, a->dtype, rank, shape);
  return st;
}

/* Pow: the exponent may have another numeric dtype than the base (ONNX's
 * T1/T2); the output has the base's. */
static cs_status infer_pow(cs_onnx_infer *c, cs_node *n) {
  const cs_value *a = cs_onnx_in(c, n, 0), *b = cs_onnx_in(c, n, 1);
  int64_t shape[CS_MAX_RANK];
  int rank;
  if (b->dtype == CS_DTYPE_BOOL)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "exponent '%s' is bool", b->name);
  cs_status st = broadcast(c, n, a, b, &rank, shape);
  if (st == CS_OK) st = cs_onnx_set_out(c, n, 0, a->dtype, rank, shape);
  return st;
}

/* PRelu: the slope broadcasts to the input (numpy rules, one way), whose
 * shape the output has. */
static cs_status infer_prelu(cs_onnx_infer *c, cs_node *n) {
  cs_status st = infer_binary(c, n);
  if (st != CS_OK) return st;
  const cs_value *x = cs_onnx_in(c, n, 0), *s = cs_onnx_in(c, n, 1), *y = cs_graph_value(c->g, n->outputs[0]);
  if (y->rank != x->rank || memcmp(y->shape, x->shape, sizeof(int64_t) * (size_t)x->rank))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "slope '%s' %s does not broadcast to input '%s' %s", s->name,
                            cs_onnx_shape_str(s->rank, s->shape), x->name, cs_onnx_shape_str(x->rank, x->shape));
  return CS_OK;
}

/* Comparisons and logic: broadcast, bool result. */
static cs_status infer_compare(cs_onnx_infer *c, cs_node *n) {
  const cs_value *a = cs_onnx_in(c, n, 0), *b = cs_onnx_in(c, n, 1);
  int64_t shape[CS_MAX_RANK];
  int rank;
  cs_status st = same_dtype(c, n, a, b);
  if (st == CS_OK) st = broadcast(c, n, a, b, &rank, shape);
  if (st == CS_OK) st = cs_onnx_set_out(c, n, 0, CS_DTYPE_BOOL, rank, shape);
  return st;
}

/* Max, Min: any number of inputs of one dtype, all broadcast together. */
static cs_status infer_variadic(cs_onnx_infer *c, cs_node *n) {
  const cs_value *a = cs_onnx_in(c, n, 0);
  cs_value acc = *a;
  for (int j = 1; j < n->n_inputs; j++) {
    const cs_value *b = cs_onnx_in(c, n, j);
    int64_t shape[CS_MAX_RANK];
    int rank;
    cs_status st = same_dtype(c, n, a, b);
    if (st == CS_OK) st = broadcast(c, n, &acc, b, &rank, shape);
    if (st != CS_OK) return st;
    acc.rank = rank;
    memcpy(acc.shape, shape, sizeof shape);
  }
  return cs_onnx_set_out(c, n, 0, a->dtype, acc.rank, acc.shape);
}

/* BatchNormalization (inference): X [N, C, ...]; scale, B, mean, var [C].
 * training_mode = 1 never gets here (onnx_training.c rewrites it); the
 * extra outputs of an inference node are inferred for completeness, and
 * using them is refused when the node is lowered. */
static cs_status infer_batch_norm(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  if (x->rank < 2)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "input '%s' %s must be [N, C, ...]", x->name,
                            cs_onnx_shape_str(x->rank, x->shape));
  if (!cs_node_attr_int(n, "spatial", 1))
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "spatial = 0 (per-element statistics) is not "
                            "supported");
  static const char *const what[] = {"", "scale", "B", "input_mean", "input_var"};
  for (int j = 1; j < 5; j++) {
    const cs_value *p = cs_onnx_in(c, n, j);
    if (p->dtype != CS_DTYPE_F32 || cs_value_numel(p) != x->shape[1] ||
        p->rank != 1)
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "%s '%s' %s%s must be f32[%lld] (one per "
                              "channel)",
                              what[j], p->name, cs_dtype_name(p->dtype),
                              cs_onnx_shape_str(p->rank, p->shape),
                              (long long)x->shape[1]);
  }
  cs_status st = same_as_input(c, n, 0, 0);
  for (int j = 1; st == CS_OK && j < n->n_outputs; j++)
    st = cs_onnx_set_out(c, n, j, CS_DTYPE_F32, 1, &x->shape[1]);
  return st;
}

static cs_status infer_clip(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  static const char *const what[] = {"", "min", "max"};
  for (int j = 1; j < 3; j++) {
    const cs_value *b = cs_onnx_in(c, n, j);
    if (!b) continue;
    if (b->dtype != x->dtype)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "%s '%s' is %s but the input is %s", what[j],
                              b->name, cs_dtype_name(b->dtype),
                              cs_dtype_name(x->dtype));
    if (cs_value_numel(b) != 1 || b->rank > 1)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "%s '%s' must be a scalar, not %s", what[j],
                              b->name, cs_onnx_shape_str(b->rank, b->shape));
  }
  return same_as_input(c, n, 0, 0);
}

/* The "axis" attribute (default -1: the last) of an op that normalizes
 * input 0 along its trailing axes (Softmax, LayerNormalization), in
 * [0, rank); a scalar input has none. */
static cs_status normalized_axis(cs_onnx_infer *c, cs_node *n, int *axis) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  if (x->rank == 0)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "input '%s' is a scalar",
                            x->name);
  return cs_onnx_axis(c, n, cs_node_attr_int(n, "axis", -1), x->rank, "axis",
                      axis);
}

static cs_status infer_softmax(cs_onnx_infer *c, cs_node *n) {
  int axis;
  cs_status st = normalized_axis(c, n, &axis);
  return st != CS_OK ? st : same_as_input(c, n, 0, 0);
}

/* Cast: the input's shape in dtype `to` (the float and integer types we
 * have and bool; string, complex and the 8/4-bit floats are refused by
 * name). */
static cs_status infer_cast(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t to = cs_node_attr_int(n, "to", 0);
  cs_dtype dt = cs_onnx_dtype((int32_t)to);
  if (dt == CS_DTYPE_UNDEF)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "cast to %s is not supported", cs_onnx_dtype_name((int32_t)to));
  return cs_onnx_set_out(c, n, 0, dt, x->rank, x->shape);
}

/* Expand(input, shape: constant int64): numpy broadcast of the input's
 * shape and `shape` (either may be the larger). */
static cs_status infer_expand(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t want[CS_MAX_RANK];
  int cnt = 0;
  cs_status st = cs_onnx_const_ints(c, n, 1, "shape", want, CS_MAX_RANK, &cnt);
  if (st != CS_OK) return st;
  cs_value target = *x;
  target.rank = cnt;
  for (int i = 0; i < cnt; i++) target.shape[i] = want[i];
  int64_t shape[CS_MAX_RANK];
  int rank;
  st = broadcast(c, n, x, &target, &rank, shape);
  return st != CS_OK ? st : cs_onnx_set_out(c, n, 0, x->dtype, rank, shape);
}

/* Where(cond: bool, X, Y): X and Y one dtype, all three broadcast. */
static cs_status infer_where(cs_onnx_infer *c, cs_node *n) {
  const cs_value *cond = cs_onnx_in(c, n, 0), *x = cs_onnx_in(c, n, 1), *y = cs_onnx_in(c, n, 2);
  int64_t shape[CS_MAX_RANK];
  int rank;
  cs_status st = same_dtype(c, n, x, y);
  if (st == CS_OK) st = broadcast(c, n, x, y, &rank, shape);
  if (st != CS_OK) return st;
  cs_value xy = *x;
  xy.rank = rank;
  for (int i = 0; i < rank; i++) xy.shape[i] = shape[i];
  st = broadcast(c, n, cond, &xy, &rank, shape);
  return st != CS_OK ? st : cs_onnx_set_out(c, n, 0, x->dtype, rank, shape);
}

static int64_t numel_from(const cs_value *x, int axis) {
  int64_t n = 1;
  for (int i = axis; i < x->rank; i++) n *= x->shape[i];
  return n;
}

static cs_status infer_gelu(cs_onnx_infer *c, cs_node *n) {
  const char *approx = cs_node_attr_string(n, "approximate", "none");
  if (strcmp(approx, "none") && strcmp(approx, "tanh"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "approximate is \"%s\"; ONNX allows \"none\" or "
                            "\"tanh\"",
                            approx);
  return same_as_input(c, n, 0, 0);
}

/* LayerNormalization (opset 17): Y has X's shape; scale and bias have the
 * normalized shape X.shape[axis:] (leading 1s allowed); the optional Mean
 * and InvStdDev outputs keep X.shape[:axis] and put 1 in the rest. */
static cs_status infer_layer_norm(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int axis;
  cs_status st = normalized_axis(c, n, &axis);
  if (st != CS_OK) return st;
  if (cs_node_attr_int(n, "stash_type", 1) != 1)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "stash_type %lld; only 1 (float32) is supported",
                            (long long)cs_node_attr_int(n, "stash_type", 1));
  static const char *const what[] = {"", "Scale", "B"};
  for (int j = 1; j < 3; j++) {
    const cs_value *p = cs_onnx_in(c, n, j);
    if (!p) continue;
    int ok = p->dtype == x->dtype && p->rank <= x->rank;
    for (int i = 0; ok && i < p->rank; i++) {
      int xi = x->rank - p->rank + i;
      ok = xi >= axis ? p->shape[i] == x->shape[xi] : p->shape[i] == 1;
    }
    if (!ok || cs_value_numel(p) != numel_from(x, axis))
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "%s '%s' %s %s must be %s with the normalized "
                              "shape %s",
                              what[j], p->name, cs_dtype_name(p->dtype),
                              cs_onnx_shape_str(p->rank, p->shape),
                              cs_dtype_name(x->dtype),
                              cs_onnx_shape_str(x->rank - axis, x->shape + axis));
  }
  st = same_as_input(c, n, 0, 0);
  int64_t stat[CS_MAX_RANK];
  for (int i = 0; i < x->rank; i++) stat[i] = i < axis ? x->shape[i] : 1;
  for (int j = 1; st == CS_OK && j < 3; j++)
    st = cs_onnx_set_out(c, n, j, CS_DTYPE_F32, x->rank, stat);
  return st;
}

static cs_status infer_dropout(cs_onnx_infer *c, cs_node *n) {
  const cs_value *t = cs_onnx_in(c, n, 2);
  if (t) {
    if (!t->data)
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "training_mode '%s' must be a constant", t->name);
    /* Training with ratio 0 keeps every element (mask all true), as in
     * inference; any other ratio draws random numbers. */
    const cs_value *r = cs_onnx_in(c, n, 1);
    double ratio = !r ? 0.5 : r->data && cs_value_numel(r) == 1 ? cs_const_get_float(r, 0) : -1.0;
    char what[64];
    snprintf(what, sizeof what, ratio < 0 ? "not a constant scalar" : !r ? "%g (the default)" : "%g", ratio);
    if (cs_const_get_int(t, 0) && ratio != 0.0)
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "training_mode is true and ratio is %s: its "
                              "mask is random (the runtime's generator); "
                              "only ratio 0 or training_mode = false is "
                              "computed", what);
  }
  const cs_value *x = cs_onnx_in(c, n, 0);
  cs_status st = cs_onnx_set_out(c, n, 0, x->dtype, x->rank, x->shape);
  if (st == CS_OK) st = cs_onnx_set_out(c, n, 1, CS_DTYPE_BOOL, x->rank, x->shape);
  return st;
}

/* ---- matrices -------------------------------------------------------- */

static cs_status infer_gemm(cs_onnx_infer *c, cs_node *n) {
  const cs_value *a = cs_onnx_in(c, n, 0), *b = cs_onnx_in(c, n, 1);
  const cs_value *bias = cs_onnx_in(c, n, 2);
  cs_status st = same_dtype(c, n, a, b);
  if (st != CS_OK) return st;
  if (a->rank != 2 || b->rank != 2)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "A %s and B %s must both be 2-D",
                            cs_onnx_shape_str(a->rank, a->shape),
                            cs_onnx_shape_str(b->rank, b->shape));
  int ta = cs_node_attr_int(n, "transA", 0) != 0;
  int tb = cs_node_attr_int(n, "transB", 0) != 0;
  int64_t m = a->shape[ta ? 1 : 0], k = a->shape[ta ? 0 : 1];
  int64_t kb = b->shape[tb ? 1 : 0], nn = b->shape[tb ? 0 : 1];
  if (k != kb)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "inner dimensions differ: A %s%s and B %s%s give "
                            "K = %lld and %lld",
                            cs_onnx_shape_str(a->rank, a->shape),
                            ta ? " (transA)" : "",
                            cs_onnx_shape_str(b->rank, b->shape),
                            tb ? " (transB)" : "", (long long)k, (long long)kb);
  int64_t shape[2] = {m, nn};
  if (bias) {
    /* C broadcasts one way to [M, N]. */
    int ok = bias->rank <= 2 && bias->dtype == a->dtype;
    for (int i = 0; ok && i < bias->rank; i++) {
      int64_t want = shape[2 - bias->rank + i];
      ok = bias->shape[i] == 1 || bias->shape[i] == want;
    }
    if (!ok)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "C '%s' %s %s does not broadcast to the output "
                              "%s",
                              bias->name, cs_dtype_name(bias->dtype),
                              cs_onnx_shape_str(bias->rank, bias->shape),
                              cs_onnx_shape_str(2, shape));
  }
  return cs_onnx_set_out(c, n, 0, a->dtype, 2, shape);
}

/* numpy.matmul: 1-D operands get a 1 prepended (A) or appended (B) that is
 * dropped from the result; batch dims broadcast. */
static cs_status infer_matmul(cs_onnx_infer *c, cs_node *n) {
  const cs_value *a = cs_onnx_in(c, n, 0), *b = cs_onnx_in(c, n, 1);
  cs_status st = same_dtype(c, n, a, b);
  if (st != CS_OK) return st;
  if (a->rank < 1 || b->rank < 1)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "operands must have rank >= 1 (got %d and %d)",
                            a->rank, b->rank);
  cs_value va = *a, vb = *b;
  int drop_m = 0, drop_n = 0;
  if (va.rank == 1) {
    va.rank = 2;
    va.shape[1] = a->shape[0];
    va.shape[0] = 1;
    drop_m = 1;
  }
  if (vb.rank == 1) {
    vb.rank = 2;
    vb.shape[0] = b->shape[0];
    vb.shape[1] = 1;
    drop_n = 1;
  }
  int64_t k = va.shape[va.rank - 1], kb = vb.shape[vb.rank - 2];
  if (k != kb)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "inner dimensions differ: '%s' %s and '%s' %s",
                            a->name, cs_onnx_shape_str(a->rank, a->shape),
                            b->name, cs_onnx_shape_str(b->rank, b->shape));
  cs_value ba = va, bb = vb;
  ba.rank -= 2;
  bb.rank -= 2;
  int64_t shape[CS_MAX_RANK + 2];
  int rank;
  st = broadcast(c, n, &ba, &bb, &rank, shape);
  if (st != CS_OK) return st;
  if (!drop_m) shape[rank++] = va.shape[va.rank - 2];
  if (!drop_n) shape[rank++] = vb.shape[vb.rank - 1];
  return cs_onnx_set_out(c, n, 0, a->dtype, rank, shape);
}

/* ---- dispatch -------------------------------------------------------- */

static cs_status check_arity(cs_onnx_infer *c, cs_node *n, const op_rule *r) {
  int max_in = r->max_in;
  if (n->op == CS_OP_PAD && c->opset < 18) max_in = 3;           /* axes: 18 */
  if (n->n_inputs < r->min_in || n->n_inputs > max_in) {
    if (max_in == INT_MAX)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "expects at least %d inputs, got %d", r->min_in,
                              n->n_inputs);
    const char *why = max_in < r->max_in ? " at opset < 18" : "";
    if (r->min_in == max_in)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "expects %d input%s%s, got %d", r->min_in,
                              r->min_in == 1 ? "" : "s", why, n->n_inputs);
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "expects %d to %d inputs%s, got %d", r->min_in,
                            max_in, why, n->n_inputs);
  }
  if (n->n_outputs < r->min_out || n->n_outputs > r->max_out) {
    if (r->min_out == r->max_out)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "expects %d output%s, got %d",
                              r->min_out, r->min_out == 1 ? "" : "s",
                              n->n_outputs);
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "expects %d to %d outputs, got %d", r->min_out,
                            r->max_out == INT_MAX ? 1 << 30 : r->max_out,
                            n->n_outputs);
  }
  int required = n->op == CS_OP_CONCAT ? n->n_inputs : r->min_in;
  for (int j = 0; j < required; j++)
    if (n->inputs[j] < 0)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "input %d is required but empty", j);
  const cs_value *x = cs_onnx_in(c, n, 0);
  if (!(r->dtypes & M(x->dtype)))
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "input '%s' has dtype %s, which this op does not "
                            "take",
                            x->name, cs_dtype_name(x->dtype));
  return CS_OK;
}

cs_status cs_onnx_infer_node(cs_onnx_infer *c, int id) {
  cs_node *n = &c->g->nodes[id];
  const op_rule *r = rule_of(n->op);
  if (!r)
    return cs_onnx_node_err(c, n, CS_ERR_INTERNAL, "no shape inference rule");
  cs_status st = check_arity(c, n, r);
  if (st != CS_OK) return st;
  switch (n->op) {
    case CS_OP_ADD:
    case CS_OP_SUB:
    case CS_OP_MUL:
    case CS_OP_DIV: return infer_binary(c, n);
    case CS_OP_POW: return infer_pow(c, n);
#define TIDSP_UNARY(NAME, fn, IR, op_type, alpha_attr, alpha, beta_attr, beta) case CS_OP_##IR:
#include "cstatic/unary_ops.def"
    case CS_OP_RELU:
    case CS_OP_IDENTITY: return same_as_input(c, n, 0, 0);
    case CS_OP_NOT: return same_as_input(c, n, 0, 0);
    case CS_OP_EQUAL:
    case CS_OP_LESS:
    case CS_OP_LESS_OR_EQUAL:
    case CS_OP_GREATER:
    case CS_OP_GREATER_OR_EQUAL:
    case CS_OP_AND:
    case CS_OP_OR:
    case CS_OP_XOR: return infer_compare(c, n);
    case CS_OP_MAX:
    case CS_OP_MIN: return infer_variadic(c, n);
    case CS_OP_BATCH_NORMALIZATION: return infer_batch_norm(c, n);
    case CS_OP_SHAPE: return cs_onnx_infer_shape(c, n);
    case CS_OP_SIZE: return cs_onnx_infer_size(c, n);
    case CS_OP_CONSTANT_OF_SHAPE: return cs_onnx_infer_constant_of_shape(c, n);
    case CS_OP_RANGE: return cs_onnx_infer_range(c, n);
    case CS_OP_TILE: return cs_onnx_infer_tile(c, n);
    case CS_OP_SCATTER_ND: return cs_onnx_infer_scatter_nd(c, n);
    case CS_OP_GATHER_ND: return cs_onnx_infer_gather_nd(c, n);
    case CS_OP_CLIP: return infer_clip(c, n);
    case CS_OP_PRELU: return infer_prelu(c, n);
    case CS_OP_SOFTMAX: return infer_softmax(c, n);
    case CS_OP_GELU: return infer_gelu(c, n);
    case CS_OP_WHERE: return infer_where(c, n);
    case CS_OP_EXPAND: return infer_expand(c, n);
    case CS_OP_CAST: return infer_cast(c, n);
    case CS_OP_LAYER_NORMALIZATION: return infer_layer_norm(c, n);
    case CS_OP_DROPOUT: return infer_dropout(c, n);
    case CS_OP_GEMM: return infer_gemm(c, n);
    case CS_OP_MATMUL: return infer_matmul(c, n);
    case CS_OP_CONV: return cs_onnx_infer_conv(c, n);
    case CS_OP_CONV_TRANSPOSE: return cs_onnx_infer_conv_transpose(c, n);
    case CS_OP_MAX_POOL:
    case CS_OP_AVERAGE_POOL: return cs_onnx_infer_pool(c, n);
    case CS_OP_GLOBAL_AVERAGE_POOL: return cs_onnx_infer_global_pool(c, n);
    case CS_OP_QUANTIZE_LINEAR: return cs_onnx_infer_quantize(c, n);
    case CS_OP_DEQUANTIZE_LINEAR: return cs_onnx_infer_dequantize(c, n);
    case CS_OP_RESHAPE: return cs_onnx_infer_reshape(c, n);
    case CS_OP_FLATTEN: return cs_onnx_infer_flatten(c, n);
    case CS_OP_TRANSPOSE: return cs_onnx_infer_transpose(c, n);
    case CS_OP_CONCAT: return cs_onnx_infer_concat(c, n);
    case CS_OP_SPLIT: return cs_onnx_infer_split(c, n);
    case CS_OP_SLICE: return cs_onnx_infer_slice(c, n);
    case CS_OP_GATHER: return cs_onnx_infer_gather(c, n);
    case CS_OP_SQUEEZE: return cs_onnx_infer_squeeze(c, n);
    case CS_OP_UNSQUEEZE: return cs_onnx_infer_unsqueeze(c, n);
    case CS_OP_PAD: return cs_onnx_infer_pad(c, n);
    case CS_OP_REDUCE_L2: /* the same axes, keepdims and noop rules */
    case CS_OP_REDUCE_MEAN: return cs_onnx_infer_reduce_mean(c, n);
    default: break;
  }
  return cs_onnx_node_err(c, n, CS_ERR_INTERNAL, "no shape inference rule");
}
