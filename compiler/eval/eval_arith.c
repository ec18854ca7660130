/*
 * eval_arith.c — the integer arithmetic whose compile-time folding says
 * more than the kernel would: Div on integers (a zero divisor, or
 * INT64_MIN / −1, is an error naming the node and the element, not a
 * value), computed by the runtime kernel (k_binary through the lowering);
 * and Neg on integers, which has no kernel (it wraps: 0 − x).
 *
 * Every other elementwise op — Add/Sub/Mul on integers, Max/Min,
 * comparisons, And/Or/Xor/Not — has no evaluator: cs_const_eval_node
 * folds it with the kernels, so the values are tidsp_binary's, one
 * implementation whether it runs on the target or at compile time.
 */
#include "eval_internal.h"

static int int_operands(const cs_graph *g, const cs_node *n) {
  cs_dtype t = cs_eval_in(g, n, 0)->dtype;
  return !cs_eval_is_float(t) && t != CS_DTYPE_BOOL;
}

/* The divisors checked here, so that a bad one is named; the quotients
 * are the kernel's. */
static cs_status run_int_div(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *a = cs_eval_in(g, n, 0), *b = cs_eval_in(g, n, 1);
  const cs_value *y = cs_eval_out(g, n, 0);
  cs_eval_bcast ba, bb;
  cs_eval_bcast_init(a, y, &ba);
  cs_eval_bcast_init(b, y, &bb);
  int64_t count = cs_value_numel(y);
  int wraps = a->dtype != CS_DTYPE_U64; /* uint64 divides unsigned: only 0 is bad */
  for (int64_t i = 0; i < count; i++) {
    int64_t x = cs_eval_get_int(a->data, a->dtype, cs_eval_bcast_index(&ba, i));
    int64_t z = cs_eval_get_int(b->data, b->dtype, cs_eval_bcast_index(&bb, i));
    if (z == 0 || (wraps && z == -1 && x == INT64_MIN))
      return cs_error(CS_ERR_INVALID, "node '%s' (Div): integer division %lld / %lld at element %lld", n->name,
                      (long long)x, (long long)z, (long long)i);
  }
  if (!cs_eval_with_kernels(g, (int)(n - g->nodes), out))
    return cs_error(CS_ERR_UNSUPPORTED, "node '%s' (Div): cannot be computed at compile time", n->name);
  return CS_OK;
}

static cs_status run_int_neg(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *a = cs_eval_in(g, n, 0);
  int64_t count = cs_value_numel(a);
  for (int64_t i = 0; i < count; i++)
    cs_eval_set_int(out[0], a->dtype, i, (int64_t)(0 - (uint64_t)cs_eval_get_int(a->data, a->dtype, i)));
  return CS_OK;
}

const cs_evaluator cs_eval_arith[] = {
    {CS_OP_DIV, int_operands, run_int_div},
    {CS_OP_NEG, int_operands, run_int_neg},
    {CS_OP_COUNT_, NULL, NULL},
};
