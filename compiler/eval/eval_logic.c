/*
 * eval_logic.c — comparisons and boolean logic at compile time (no runtime
 * kernel): Equal, Less, LessOrEqual, Greater, GreaterOrEqual on any dtype
 * (floats compared as floats, NaN unequal to everything), Not, And, Or on
 * bool. Results are bool (one byte, 0 or 1), broadcast as numpy.
 */
#include "eval_internal.h"

static int always(const cs_graph *g, const cs_node *n) {
  (void)g;
  (void)n;
  return 1;
}

static int compare(cs_op op, double a, double b) {
  switch (op) {
    case CS_OP_EQUAL: return a == b;
    case CS_OP_LESS: return a < b;
    case CS_OP_LESS_OR_EQUAL: return a <= b;
    case CS_OP_GREATER: return a > b;
    case CS_OP_GREATER_OR_EQUAL: return a >= b;
    case CS_OP_AND: return a != 0 && b != 0;
    default: return a != 0 || b != 0; /* Or */
  }
}

static int compare_int(cs_op op, int64_t a, int64_t b) {
  switch (op) {
    case CS_OP_EQUAL: return a == b;
    case CS_OP_LESS: return a < b;
    case CS_OP_LESS_OR_EQUAL: return a <= b;
    case CS_OP_GREATER: return a > b;
    case CS_OP_GREATER_OR_EQUAL: return a >= b;
    case CS_OP_AND: return a != 0 && b != 0;
    default: return a != 0 || b != 0;
  }
}

static cs_status run_binary(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *a = cs_eval_in(g, n, 0), *b = cs_eval_in(g, n, 1);
  const cs_value *y = cs_eval_out(g, n, 0);
  cs_eval_bcast ba, bb;
  cs_eval_bcast_init(a, y, &ba);
  cs_eval_bcast_init(b, y, &bb);
  int64_t count = cs_value_numel(y);
  int fl = cs_eval_is_float(a->dtype);
  for (int64_t i = 0; i < count; i++) {
    int64_t ka = cs_eval_bcast_index(&ba, i), kb = cs_eval_bcast_index(&bb, i);
    int r = fl ? compare(n->op, cs_eval_get_float(a->data, a->dtype, ka),
                         cs_eval_get_float(b->data, b->dtype, kb))
               : compare_int(n->op, cs_eval_get_int(a->data, a->dtype, ka),
                             cs_eval_get_int(b->data, b->dtype, kb));
    ((uint8_t *)out[0])[i] = (uint8_t)r;
  }
  return CS_OK;
}

static cs_status run_not(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *a = cs_eval_in(g, n, 0);
  int64_t count = cs_value_numel(a);
  for (int64_t i = 0; i < count; i++)
    ((uint8_t *)out[0])[i] = ((const uint8_t *)a->data)[i] == 0;
  return CS_OK;
}

const cs_evaluator cs_eval_logic[] = {
    {CS_OP_EQUAL, always, run_binary},
    {CS_OP_LESS, always, run_binary},
    {CS_OP_LESS_OR_EQUAL, always, run_binary},
    {CS_OP_GREATER, always, run_binary},
    {CS_OP_GREATER_OR_EQUAL, always, run_binary},
    {CS_OP_AND, always, run_binary},
    {CS_OP_OR, always, run_binary},
    {CS_OP_NOT, always, run_not},
    {CS_OP_COUNT_, NULL, NULL},
};
