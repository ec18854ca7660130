/*
 * eval_arith.c — arithmetic with no runtime kernel, at compile time:
 * Add/Sub/Mul/Div/Neg on integers (shape arithmetic: int64 mostly; the
 * float ones run the float kernel), Max/Min of any number of inputs.
 *
 * Integers wrap to their dtype (two's complement, as ONNX Runtime's C++
 * arithmetic does in practice); Div truncates toward zero; a division by
 * zero is an error, not a value. Max/Min of floats propagate NaN.
 */
#include <math.h>

#include "eval_internal.h"

static int int_binary(const cs_graph *g, const cs_node *n) {
  cs_dtype t = cs_eval_in(g, n, 0)->dtype;
  return !cs_eval_is_float(t) && t != CS_DTYPE_BOOL;
}

static int any_numeric(const cs_graph *g, const cs_node *n) {
  return cs_eval_in(g, n, 0)->dtype != CS_DTYPE_BOOL;
}

static cs_status run_int_binary(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *a = cs_eval_in(g, n, 0), *b = cs_eval_in(g, n, 1);
  const cs_value *y = cs_eval_out(g, n, 0);
  cs_eval_bcast ba, bb;
  cs_eval_bcast_init(a, y, &ba);
  cs_eval_bcast_init(b, y, &bb);
  int64_t count = cs_value_numel(y);
  for (int64_t i = 0; i < count; i++) {
    int64_t x = cs_eval_get_int(a->data, a->dtype, cs_eval_bcast_index(&ba, i));
    int64_t z = cs_eval_get_int(b->data, b->dtype, cs_eval_bcast_index(&bb, i));
    uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
    int64_t r;
    switch (n->op) {
      case CS_OP_ADD: r = (int64_t)(ux + uz); break;
      case CS_OP_SUB: r = (int64_t)(ux - uz); break;
      case CS_OP_MUL: r = (int64_t)(ux * uz); break;
      default: /* Div */
        if (z == 0 || (z == -1 && x == INT64_MIN))
          return cs_error(CS_ERR_INVALID,
                          "node '%s' (Div): integer division %lld / %lld at "
                          "element %lld",
                          n->name, (long long)x, (long long)z, (long long)i);
        r = x / z;
        break;
    }
    cs_eval_set_int(out[0], y->dtype, i, r);
  }
  return CS_OK;
}

static cs_status run_int_neg(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *a = cs_eval_in(g, n, 0);
  int64_t count = cs_value_numel(a);
  for (int64_t i = 0; i < count; i++)
    cs_eval_set_int(out[0], a->dtype, i, (int64_t)(0 - (uint64_t)cs_eval_get_int(a->data, a->dtype, i)));
  return CS_OK;
}

static cs_status run_minmax(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *y = cs_eval_out(g, n, 0);
  int64_t count = cs_value_numel(y);
  int is_max = n->op == CS_OP_MAX, fl = cs_eval_is_float(y->dtype);
  for (int j = 0; j < n->n_inputs; j++) {
    const cs_value *a = cs_eval_in(g, n, j);
    cs_eval_bcast ba;
    cs_eval_bcast_init(a, y, &ba);
    for (int64_t i = 0; i < count; i++) {
      int64_t k = cs_eval_bcast_index(&ba, i);
      if (fl) {
        double v = cs_eval_get_float(a->data, a->dtype, k);
        double acc = j ? cs_eval_get_float(out[0], y->dtype, i) : v;
        if (isnan(v) || isnan(acc)) acc = NAN;
        else if (is_max ? v > acc : v < acc) acc = v;
        cs_eval_set_float(out[0], y->dtype, i, acc);
      } else {
        int64_t v = cs_eval_get_int(a->data, a->dtype, k);
        int64_t acc = j ? cs_eval_get_int(out[0], y->dtype, i) : v;
        if (is_max ? v > acc : v < acc) acc = v;
        cs_eval_set_int(out[0], y->dtype, i, acc);
      }
    }
  }
  return CS_OK;
}

const cs_evaluator cs_eval_arith[] = {
    {CS_OP_ADD, int_binary, run_int_binary},
    {CS_OP_SUB, int_binary, run_int_binary},
    {CS_OP_MUL, int_binary, run_int_binary},
    {CS_OP_DIV, int_binary, run_int_binary},
    {CS_OP_NEG, int_binary, run_int_neg},
    {CS_OP_MAX, any_numeric, run_minmax},
    {CS_OP_MIN, any_numeric, run_minmax},
    {CS_OP_COUNT_, NULL, NULL},
};
