/*
 * eval_scatter.c — ScatterND at compile time: the runtime kernel
 * (tidsp_scatter_nd, runtime/kernels/ref/scatter_nd.c) computes it; this
 * evaluator first refuses an index outside its axis by name (the kernel
 * would only say that one is). A negative index counts from the end.
 */

#include "eval_internal.h"

static int always(const cs_graph *g, const cs_node *n) {
  (void)g;
  (void)n;
  return 1;
}

/* The indices checked here, so that one out of range is named; the
 * values are the runtime kernel's (k_scatter_nd through the lowering). */
static cs_status run_scatter_nd(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *x = cs_eval_in(g, n, 0), *idx = cs_eval_in(g, n, 1);
  int k = (int)idx->shape[idx->rank - 1];
  int64_t count = cs_value_numel(idx);
  for (int64_t t = 0; t < count; t++) {
    int64_t i = ((const int64_t *)idx->data)[t], dim = x->shape[t % k];
    if (i < -dim || i >= dim)
      return cs_error(CS_ERR_INVALID,
                      "node '%s' (ScatterND): index %lld on axis %d of '%s' "
                      "(size %lld) is out of range",
                      n->name, (long long)i, (int)(t % k), idx->name, (long long)dim);
  }
  if (!cs_eval_with_kernels(g, (int)(n - g->nodes), out))
    return cs_error(CS_ERR_UNSUPPORTED, "node '%s' (ScatterND): cannot be computed at compile time", n->name);
  return CS_OK;
}

const cs_evaluator cs_eval_scatter[] = {
    {CS_OP_SCATTER_ND, always, run_scatter_nd},
    {CS_OP_COUNT_, NULL, NULL},
};
