/*
 * LegalizeOps: broadcasting copies on any dtype: Expand, Tile
 * (k_expand) and Where.
 */
#include <string.h>

#include "legalize_internal.h"
#include "match/broadcast.h"

/* Tile on any dtype as an Expand: x viewed with a broadcast axis before
 * each tiled one, [r0, d0, r1, d1, …] in y's order ([r0·d0, r1·d1, …]);
 * unit axes drop and contiguous ones merge. Returns 0 when that needs more
 * than TIDSP_MAX_RANK axes. */
static int tile_params(const int64_t *shape, const int64_t *rep, int rank, size_t elem,
                       tidsp_expand_params *p) {
  int64_t size[2 * CS_MAX_RANK], stride[2 * CS_MAX_RANK], s = 1, xs[CS_MAX_RANK];
  int r = 0;
  for (int d = rank - 1; d >= 0; d--) xs[d] = s, s *= shape[d];
  for (int d = 0; d < rank; d++) {
    if (rep[d] > 1) size[r] = rep[d], stride[r++] = 0;
    if (shape[d] > 1) size[r] = shape[d], stride[r++] = xs[d];
  }
  int m = 0; /* merge (n1, s1)(n2, s2) when s1 = n2·s2 (both 0: a repeat of a repeat) */
  for (int i = 0; i < r; i++) {
    if (m > 0 && stride[m - 1] == size[i] * stride[i]) {
      size[m - 1] *= size[i];
      stride[m - 1] = stride[i];
    } else {
      size[m] = size[i], stride[m++] = stride[i];
    }
  }
  if (m == 0) size[m] = 1, stride[m++] = 0;
  if (m > TIDSP_MAX_RANK) return 0;
  memset(p, 0, sizeof *p);
  p->rank = m;
  for (int i = 0; i < m; i++) p->shape[i] = (int32_t)size[i], p->in_stride[i] = (int32_t)stride[i];
  p->elem_size = (int32_t)elem;
  return 1;
}

/* Tile: one Expand, or two (the trailing axes first) when one would need
 * more axes than the kernel has. */
static cs_status lower_tile(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  int rank = x->rank, src = n->inputs[0];
  size_t elem = cs_dtype_size(y->dtype);
  int64_t rep[CS_MAX_RANK], shape[CS_MAX_RANK];
  for (int d = 0; d < rank; d++) rep[d] = x->shape[d] ? y->shape[d] / x->shape[d] : 1, shape[d] = x->shape[d];
  tidsp_expand_params p;
  if (!tile_params(shape, rep, rank, elem, &p)) {
    int k = rank - 1;
    for (; k > 0; k--) {
      int64_t hi[CS_MAX_RANK], lo[CS_MAX_RANK], mid[CS_MAX_RANK];
      tidsp_expand_params ph;
      for (int d = 0; d < rank; d++) {
        hi[d] = d >= k ? rep[d] : 1, lo[d] = d < k ? rep[d] : 1;
        mid[d] = shape[d] * hi[d];
      }
      if (!tile_params(shape, hi, rank, elem, &ph) || !tile_params(mid, lo, rank, elem, &p)) continue;
      char name[600];
      snprintf(name, sizeof name, "%s.tile_inner", n->origin && *n->origin ? n->origin : n->name);
      int v = cs_graph_add_value(g, name, y->dtype, rank, mid);
      int ins[1] = {src};
      if (cs_lower_add_kernel(g, CS_OP_K_EXPAND, name, 1, ins, v, (cs_kparams){.expand = ph}) < 0)
        return CS_ERR_NOMEM; /* message recorded */
      src = v;
      break;
    }
    if (k == 0) return cs_lower_unsupported(cs_graph_node(g, id), "the tiling needs more axes than the kernel has");
  }
  int ins[1] = {src};
  return cs_lower_retarget(g, id, CS_OP_K_EXPAND, 1, ins, (cs_kparams){.expand = p});
}

/* Expand on any dtype: a broadcast copy (the shape input is constant). */
static cs_status lower_expand(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  tidsp_expand_params p;
  memset(&p, 0, sizeof p);
  tidsp_broadcast bc;
  if (!cs_broadcast_init(x, x, y, &bc)) return cs_lower_unsupported(n, "the input does not broadcast to the output");
  p.rank = bc.rank;
  memcpy(p.shape, bc.shape, sizeof p.shape);
  memcpy(p.in_stride, bc.a_stride, sizeof p.in_stride);
  p.elem_size = (int32_t)cs_dtype_size(y->dtype);
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_EXPAND, 1, ins, (cs_kparams){.expand = p});
}

/* Where on any dtype (the condition bool): a select with broadcasting. */
static cs_status lower_where(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *c = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  tidsp_where_params p;
  memset(&p, 0, sizeof p);
  tidsp_broadcast cb;
  if (!cs_broadcast_init(cs_graph_value(g, n->inputs[1]), cs_graph_value(g, n->inputs[2]), y, &p.bc) ||
      !cs_broadcast_init(c, c, y, &cb))
    return cs_lower_unsupported(n, "operand shapes do not broadcast");
  memcpy(p.c_stride, cb.a_stride, sizeof p.c_stride);
  p.elem_size = (int32_t)cs_dtype_size(y->dtype);
  int ins[3] = {n->inputs[0], n->inputs[1], n->inputs[2]};
  return cs_lower_retarget(g, id, CS_OP_K_WHERE, 3, ins, (cs_kparams){.where = p});
}

const cs_lowering cs_lowerings_broadcast[] = {
    {CS_OP_TILE, lower_tile},
    {CS_OP_EXPAND, lower_expand},
    {CS_OP_WHERE, lower_where},
    {CS_OP_COUNT_, NULL},
};
