/*
 * LegalizeOps: indexing along axes on any dtype: Slice, Gather,
 * Split (k_slice, k_gather) and ScatterND.
 */
#include <stdlib.h>
#include <string.h>

#include "legalize_internal.h"

cs_status cs_lower_const_ints(cs_graph *g, const cs_node *n, int idx, int64_t *out, int *count, int max) {
  *count = 0;
  if (n->n_inputs <= idx || n->inputs[idx] < 0) return CS_OK;
  const cs_value *v = cs_graph_value(g, n->inputs[idx]);
  if (!v->data) return cs_lower_unsupported(n, "slice parameters must be constants");
  int64_t c = cs_value_numel(v);
  if (c > max) return cs_lower_unsupported(n, "too many slice axes");
  for (int64_t i = 0; i < c; i++) out[i] = cs_const_get_int(v, i);
  *count = (int)c;
  return CS_OK;
}

static void slice_init(tidsp_slice_params *p, const cs_value *x, const cs_value *y) {
  memset(p, 0, sizeof *p);
  p->rank = x->rank;
  p->elem_size = (int32_t)cs_dtype_size(x->dtype);
  for (int d = 0; d < x->rank; d++) {
    p->in_shape[d] = (int32_t)x->shape[d];
    p->out_shape[d] = (int32_t)y->shape[d];
    p->step[d] = 1;
  }
}

static cs_status lower_slice(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int64_t starts[CS_MAX_RANK], ends[CS_MAX_RANK], axes[CS_MAX_RANK], steps[CS_MAX_RANK];
  int ns, ne, na, nst;
  cs_status st;
  if ((st = cs_lower_const_ints(g, n, 1, starts, &ns, CS_MAX_RANK)) != CS_OK) return st;
  if ((st = cs_lower_const_ints(g, n, 2, ends, &ne, CS_MAX_RANK)) != CS_OK) return st;
  if ((st = cs_lower_const_ints(g, n, 3, axes, &na, CS_MAX_RANK)) != CS_OK) return st;
  if ((st = cs_lower_const_ints(g, n, 4, steps, &nst, CS_MAX_RANK)) != CS_OK) return st;
  if (ns != ne || (na && na != ns) || (nst && nst != ns)) return cs_lower_unsupported(n, "slice parameter lengths differ");
  tidsp_slice_params p;
  slice_init(&p, x, y);
  for (int i = 0; i < ns; i++) {
    int64_t a = na ? axes[i] : i;
    if (a < 0) a += x->rank;
    if (a < 0 || a >= x->rank) return cs_lower_unsupported(n, "slice axis out of range");
    int64_t dim = x->shape[a], step = nst ? steps[i] : 1;
    if (step == 0) return cs_lower_unsupported(n, "slice step 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    if (step > 0) s = s < 0 ? 0 : (s > dim ? dim : s);
    else s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
    p.start[a] = (int32_t)s;
    p.step[a] = (int32_t)step;
  }
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_SLICE, 1, ins, (cs_kparams){.slice = p});
}

/* Runtime (or unevenly spaced constant) indices: k_gather copies one row
 * of the trailing dims per index. */
static cs_status lower_gather_rows(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *idx = cs_graph_value(g, n->inputs[1]);
  const int64_t axis = cs_node_attr_int(n, "axis", 0);
  int64_t inner = cs_lower_prod(x->shape, (int)axis + 1, x->rank) * (int64_t)cs_dtype_size(x->dtype);
  int64_t count = cs_value_numel(idx);
  if (inner > INT32_MAX || count > INT32_MAX || x->shape[axis] > INT32_MAX)
    return cs_lower_unsupported(n, "Gather too large for the kernel's 32-bit sizes");
  tidsp_gather_params p = {(int32_t)cs_lower_prod(x->shape, 0, (int)axis), (int32_t)x->shape[axis], (int32_t)inner,
                           (int32_t)count, (int32_t)cs_dtype_size(idx->dtype)};
  int ins[2] = {n->inputs[0], n->inputs[1]};
  return cs_lower_retarget(g, id, CS_OP_K_GATHER, 2, ins, (cs_kparams){.gather = p});
}

/* Gather with constant, evenly spaced indices (start, start + s, …: what
 * torch.export writes for the as_strided of an adaptive pool) is a strided
 * slice along the axis. Its [outer][count][inner] result is, byte for byte,
 * the output's [outer][indices…][inner], so the k_slice writes the output
 * directly. Any other index list would need a gather kernel. */
static cs_status lower_gather(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *idx = cs_graph_value(g, n->inputs[1]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  const int64_t axis = cs_node_attr_int(n, "axis", 0), dim = x->shape[axis];
  const int64_t count = cs_value_numel(idx);
  if (!idx->data) return lower_gather_rows(g, id);
  if (count < 1) return cs_lower_unsupported(n, "no indices");
  int64_t first = cs_const_get_int(idx, 0), step = 1;
  if (first < 0) first += dim;
  for (int64_t i = 1; i < count; i++) {
    int64_t v = cs_const_get_int(idx, i);
    if (v < 0) v += dim;
    if (i == 1) step = v - first;
    if (step == 0 || v != first + i * step) return lower_gather_rows(g, id);
  }
  tidsp_slice_params p;
  slice_init(&p, x, x);
  p.out_shape[axis] = (int32_t)count;
  p.start[axis] = (int32_t)first;
  p.step[axis] = (int32_t)step;
  if (cs_value_numel(y) != cs_value_numel(x) / dim * count)
    return cs_error(CS_ERR_INTERNAL, "node '%s': Gather output of %lld elements, its slice %lld", n->name,
                    (long long)cs_value_numel(y), (long long)(cs_value_numel(x) / dim * count));
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_SLICE, 1, ins, (cs_kparams){.slice = p});
}

static cs_status lower_split(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return cs_lower_unsupported(n, "split axis out of range");
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->name);
  int xin = n->inputs[0];
  int n_out = n->n_outputs;
  int *outs = malloc(sizeof(int) * (size_t)n_out);
  if (!outs) return cs_error(CS_ERR_NOMEM, "out of memory");
  memcpy(outs, n->outputs, sizeof(int) * (size_t)n_out);
  cs_graph_remove_node(g, id);
  int64_t offset = 0;
  for (int o = 0; o < n_out; o++) {
    if (outs[o] < 0) continue;
    const cs_value *y = cs_graph_value(g, outs[o]);
    tidsp_slice_params p;
    slice_init(&p, cs_graph_value(g, xin), y);
    p.start[axis] = (int32_t)offset;
    offset += y->shape[axis];
    if (cs_lower_add_kernel(g, CS_OP_K_SLICE, origin, 1, &xin, outs[o], (cs_kparams){.slice = p}) < 0) {
      free(outs);
      return CS_ERR_NOMEM; /* message recorded */
    }
  }
  free(outs);
  return CS_OK;
}

/* ScatterND on any dtype (indices int64; a reduction on float32 or the
 * integers): k_scatter_nd, also what folds a constant one. */
static cs_status lower_scatter_nd(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *idx = cs_graph_value(g, n->inputs[1]);
  static const char *const reductions[] = {"none", "add", "mul", "max", "min"};
  const char *red = cs_node_attr_string(n, "reduction", "none");
  tidsp_scatter_nd_params p;
  memset(&p, 0, sizeof p);
  p.reduction = -1;
  for (int r = 0; r < 5; r++)
    if (!strcmp(red, reductions[r])) p.reduction = r;
  if (p.reduction < 0) return cs_lower_unsupported(n, "reduction is not none, add, mul, max or min");
  p.k = (int32_t)idx->shape[idx->rank - 1];
  for (int d = 0; d < p.k; d++) p.dims[d] = (int32_t)x->shape[d];
  p.count = p.k > 0 ? (int32_t)(cs_value_numel(idx) / p.k) : 0;
  p.slice = (int32_t)cs_lower_prod(x->shape, p.k, x->rank);
  p.total = (int32_t)cs_value_numel(x);
  p.elem_size = (int32_t)cs_dtype_size(x->dtype);
  p.dtype = cs_dtype_to_tidsp(x->dtype);
  if (p.reduction != TIDSP_SCATTER_NONE && (!p.dtype || p.dtype == TIDSP_DTYPE_BOOL))
    return cs_lower_unsupported(n, "a reduction needs float32 or integer data");
  int ins[3] = {n->inputs[0], n->inputs[1], n->inputs[2]};
  return cs_lower_retarget(g, id, CS_OP_K_SCATTER_ND, 3, ins, (cs_kparams){.scatter_nd = p});
}

/* GatherND → k_gather_nd (any dtype; also what folds a constant one, e.g.
 * swin_v2's relative-position table). */
static cs_status lower_gather_nd(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *idx = cs_graph_value(g, n->inputs[1]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  int b = (int)cs_node_attr_int(n, "batch_dims", 0);
  tidsp_gather_nd_params p;
  memset(&p, 0, sizeof p);
  p.k = (int32_t)idx->shape[idx->rank - 1];
  int64_t batches = 1, count = 1, slice = (int64_t)cs_dtype_size(x->dtype);
  for (int d = 0; d < b; d++) batches *= x->shape[d];
  for (int d = b; d < idx->rank - 1; d++) count *= idx->shape[d];
  for (int d = 0; d < p.k; d++) p.dims[d] = (int32_t)x->shape[b + d];
  for (int d = b + p.k; d < x->rank; d++) slice *= x->shape[d];
  if (batches * count * slice != (int64_t)cs_value_nbytes(y) || slice > INT32_MAX || batches * count > INT32_MAX)
    return cs_lower_unsupported(n, "sizes do not fit the kernel's 32-bit fields");
  /* constant indices (the usual case) checked here, so that one out of
   * range is named; the kernel would only fail the run */
  for (int64_t t = 0; idx->data && t < cs_value_numel(idx); t++) {
    int64_t v = cs_const_get_int(idx, t), dim = p.dims[t % p.k];
    if (v < -dim || v >= dim)
      return cs_error(CS_ERR_INVALID, "node '%s' (GatherND): indices '%s'[%lld] = %lld (axis %d of '%s') is outside [%lld, %lld)",
                      n->name, idx->name, (long long)t, (long long)v, b + (int)(t % p.k), x->name, (long long)-dim,
                      (long long)dim);
  }
  p.batches = (int32_t)batches;
  p.count = (int32_t)count;
  p.slice_bytes = (int32_t)slice;
  int ins[2] = {n->inputs[0], n->inputs[1]};
  return cs_lower_retarget(g, id, CS_OP_K_GATHER_ND, 2, ins, (cs_kparams){.gather_nd = p});
}

const cs_lowering cs_lowerings_slice[] = {
    {CS_OP_SLICE, lower_slice},
    {CS_OP_GATHER, lower_gather},
    {CS_OP_SCATTER_ND, lower_scatter_nd},
    {CS_OP_GATHER_ND, lower_gather_nd},
    {CS_OP_SPLIT, lower_split},
    {CS_OP_COUNT_, NULL},
};
