/*
 * eval_scatter.c — ScatterND at compile time (no runtime kernel): the data
 * copied, then for each index tuple of `indices` [..., k] the slice
 * data[i0, …, ik−1, :, …] replaced by (or, with `reduction`, combined
 * with) the matching slice of `updates`, in the order of the indices.
 * A negative index counts from the end; one outside the axis is an error.
 */
#include <math.h>
#include <string.h>

#include "eval_internal.h"

static int always(const cs_graph *g, const cs_node *n) {
  (void)g;
  (void)n;
  return 1;
}

static cs_status run_scatter_nd(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *x = cs_eval_in(g, n, 0), *idx = cs_eval_in(g, n, 1);
  const cs_value *upd = cs_eval_in(g, n, 2);
  const char *red = cs_node_attr_string(n, "reduction", "none");
  int mode = !strcmp(red, "add") ? 1 : !strcmp(red, "mul") ? 2 : !strcmp(red, "max") ? 3
           : !strcmp(red, "min") ? 4 : 0;
  size_t esz = cs_dtype_size(x->dtype);
  memcpy(out[0], x->data, cs_value_nbytes(x));
  int k = (int)idx->shape[idx->rank - 1];
  int64_t slice = 1;
  for (int d = k; d < x->rank; d++) slice *= x->shape[d];
  int64_t tuples = cs_value_numel(idx) / k;
  int fl = cs_eval_is_float(x->dtype);
  for (int64_t t = 0; t < tuples; t++) {
    int64_t off = 0;
    for (int d = 0; d < k; d++) {
      int64_t i = ((const int64_t *)idx->data)[t * k + d], dim = x->shape[d];
      if (i < -dim || i >= dim)
        return cs_error(CS_ERR_INVALID,
                        "node '%s' (ScatterND): index %lld on axis %d of '%s' "
                        "(size %lld) is out of range",
                        n->name, (long long)i, d, idx->name, (long long)dim);
      off = off * dim + (i < 0 ? i + dim : i);
    }
    off *= slice;
    for (int64_t e = 0; e < slice; e++) {
      int64_t di = off + e, ui = t * slice + e;
      if (mode == 0) {
        memcpy((char *)out[0] + (size_t)di * esz, (const char *)upd->data + (size_t)ui * esz, esz);
      } else if (fl) {
        double a = cs_eval_get_float(out[0], x->dtype, di), b = cs_eval_get_float(upd->data, x->dtype, ui);
        double r = mode == 1 ? (double)((float)a + (float)b) : mode == 2 ? (double)((float)a * (float)b)
                 : mode == 3 ? fmax(a, b) : fmin(a, b);
        cs_eval_set_float(out[0], x->dtype, di, r);
      } else {
        int64_t a = cs_eval_get_int(out[0], x->dtype, di), b = cs_eval_get_int(upd->data, x->dtype, ui);
        int64_t r = mode == 1 ? (int64_t)((uint64_t)a + (uint64_t)b) : mode == 2 ? (int64_t)((uint64_t)a * (uint64_t)b)
                  : mode == 3 ? (a > b ? a : b) : (a < b ? a : b);
        cs_eval_set_int(out[0], x->dtype, di, r);
      }
    }
  }
  return CS_OK;
}

const cs_evaluator cs_eval_scatter[] = {
    {CS_OP_SCATTER_ND, always, run_scatter_nd},
    {CS_OP_COUNT_, NULL, NULL},
};
