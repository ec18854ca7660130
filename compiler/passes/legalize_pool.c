/*
 * LegalizeOps: MaxPool (float, int8, uint8; its Indices output),
 * AveragePool and GlobalAveragePool in float: the 2-D kernels, or the N-D
 * one.
 */
#include <string.h>

#include "legalize_internal.h"
#include "match/geometry.h"
#include "match/ort_nchwc.h"

/* k_pool_nd for node n (x → value out): the window from the attributes
 * the frontend made explicit (kernel_shape, strides, dilations, pads). */
static cs_status pool_nd_params(cs_graph *g, const cs_node *n, int out, tidsp_pool_op op, tidsp_pool_nd_params *p) {
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, out);
  int ns = x->rank - 2, nk = 0, nst = 0, nd = 0, np = 0;
  const int64_t *k = cs_node_attr_ints(n, "kernel_shape", &nk), *s = cs_node_attr_ints(n, "strides", &nst);
  const int64_t *d = cs_node_attr_ints(n, "dilations", &nd), *pads = cs_node_attr_ints(n, "pads", &np);
  if (ns < 1 || ns > TIDSP_MAX_RANK - 2 || !k || nk != ns || (s && nst != ns) || (d && nd != ns) ||
      (pads && np != 2 * ns))
    return cs_lower_unsupported(n, "the window needs one kernel_shape, stride and dilation per spatial dim and two pads");
  memset(p, 0, sizeof *p);
  p->planes = (int32_t)(x->shape[0] * x->shape[1]);
  p->dims = ns;
  for (int i = 0; i < ns; i++) {
    p->in[i] = (int32_t)x->shape[2 + i];
    p->out[i] = (int32_t)y->shape[2 + i];
    p->k[i] = (int32_t)k[i];
    p->stride[i] = s ? (int32_t)s[i] : 1;
    p->dil[i] = d ? (int32_t)d[i] : 1;
    p->pad_begin[i] = pads ? (int32_t)pads[i] : 0;
    p->pad_end[i] = pads ? (int32_t)pads[ns + i] : 0;
  }
  p->op = op;
  p->dtype = cs_dtype_to_tidsp(x->dtype);
  p->count_include_pad = (int32_t)cs_node_attr_int(n, "count_include_pad", 0);
  p->storage_order = (int32_t)cs_node_attr_int(n, "storage_order", 0);
  return CS_OK;
}

/* MaxPool's Indices output, where something reads it: a k_pool_nd
 * ARGMAX node of its own beside the values' kernel (both read x). */
static cs_status lower_pool_indices(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  int iv = n->n_outputs > 1 ? n->outputs[1] : -1, c;
  if (iv < 0) return CS_OK;
  if (cs_graph_consumers(g, iv, &c, 1) == 0 && !cs_graph_is_output(g, iv)) {
    cs_graph_value(g, iv)->producer = -1; /* unread: dropped */
    return CS_OK;
  }
  tidsp_pool_nd_params p;
  cs_status st = pool_nd_params(g, n, iv, TIDSP_POOL_ARGMAX, &p);
  if (st != CS_OK) return st;
  char name[512];
  snprintf(name, sizeof name, "%s.indices", n->name);
  int ins[1] = {n->inputs[0]};
  int k = cs_graph_add_node(g, CS_OP_K_POOL_ND, name, n->origin && *n->origin ? n->origin : n->name, 1, ins, 1, &iv);
  if (k < 0) return cs_error(CS_ERR_NOMEM, "out of memory");
  cs_graph_node(g, k)->k.pool_nd = p;
  return CS_OK;
}

static cs_status lower_pool(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  cs_dtype dt = cs_graph_value(g, n->inputs[0])->dtype;
  if (n->op == CS_OP_MAX_POOL) {
    cs_status st = lower_pool_indices(g, id);
    if (st != CS_OK) return st;
    n = cs_graph_node(g, id);
  }
  if (n->op != CS_OP_GLOBAL_AVERAGE_POOL &&
      (cs_graph_value(g, n->inputs[0])->rank > 4 || (n->op == CS_OP_MAX_POOL && dt == CS_DTYPE_U8))) {
    /* 3-D windows, MaxPool on uint8: the N-D kernel */
    if (n->op == CS_OP_AVERAGE_POOL && dt != CS_DTYPE_F32)
      return cs_lower_unsupported(n, "AveragePool on integers must be a QDQ pattern");
    tidsp_pool_nd_params p;
    cs_status st = pool_nd_params(g, n, n->outputs[0], n->op == CS_OP_MAX_POOL ? TIDSP_POOL_MAX : TIDSP_POOL_AVG, &p);
    if (st != CS_OK) return st;
    int ins[1] = {n->inputs[0]};
    n->n_outputs = 1;
    return cs_lower_retarget(g, id, CS_OP_K_POOL_ND, 1, ins, (cs_kparams){.pool_nd = p});
  }
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  if (n->op == CS_OP_GLOBAL_AVERAGE_POOL) {
    if (dt != CS_DTYPE_F32) return cs_lower_unsupported(n, "GlobalAveragePool on integers must be a QDQ pattern");
    if (x->rank < 3) return cs_lower_unsupported(n, "GlobalAveragePool needs a rank >= 3 input");
    tidsp_gap_f32_params p = {(int32_t)(x->shape[0] * x->shape[1]), (int32_t)cs_lower_prod(x->shape, 2, x->rank), 0};
    /* ORT's NCHWc pooling: whole blocks of channels, an NCHWc input (the
     * attribute's TIDSP_MLAS_BLOCK* bits), per block */
    int64_t nchwc = cs_node_attr_int(n, "ort_nchwc", 0);
    p.nchwc = (x->shape[1] % CS_ORT_NCHWC_BLOCK == 0 ? (int32_t)(nchwc & TIDSP_MLAS_BLOCK16) : 0) |
              (x->shape[1] % CS_ORT_NCHWC_BLOCK_AVX2 == 0 ? (int32_t)(nchwc & TIDSP_MLAS_BLOCK8) : 0);
    int ins[1] = {n->inputs[0]};
    return cs_lower_retarget(g, id, CS_OP_K_GAP_F32, 1, ins, (cs_kparams){.gap_f32 = p});
  }
  tidsp_pool2d_params p;
  memset(&p, 0, sizeof p);
  p.n = (int32_t)x->shape[0]; p.c = (int32_t)x->shape[1];
  if (x->rank == 3) { /* 1-D: a 2-D window of height 1 (the frontend resolved the pads) */
    int nk = 0, ns = 0, nd = 0, np = 0;
    const int64_t *k = cs_node_attr_ints(n, "kernel_shape", &nk), *s = cs_node_attr_ints(n, "strides", &ns);
    const int64_t *d = cs_node_attr_ints(n, "dilations", &nd), *pads = cs_node_attr_ints(n, "pads", &np);
    if (!k || nk != 1 || (s && ns != 1) || (d && nd != 1) || (pads && np != 2))
      return cs_lower_unsupported(n, "a 1-D window needs one kernel_shape, stride and dilation and two pads");
    p.h_in = p.h_out = p.k_h = p.stride_h = p.dil_h = 1;
    p.w_in = (int32_t)x->shape[2]; p.w_out = (int32_t)y->shape[2];
    p.k_w = (int32_t)k[0]; p.stride_w = s ? (int32_t)s[0] : 1; p.dil_w = d ? (int32_t)d[0] : 1;
    p.pad_left = pads ? (int32_t)pads[0] : 0; p.pad_right = pads ? (int32_t)pads[1] : 0;
  } else {
    cs_window2d w;
    cs_status st = cs_window2d_from_node(g, n, &w);
    if (st != CS_OK) return st;
    p.h_in = (int32_t)x->shape[2]; p.w_in = (int32_t)x->shape[3];
    p.h_out = (int32_t)y->shape[2]; p.w_out = (int32_t)y->shape[3];
    p.k_h = w.k_h; p.k_w = w.k_w; p.stride_h = w.stride_h; p.stride_w = w.stride_w;
    p.dil_h = w.dil_h; p.dil_w = w.dil_w;
    p.pad_top = w.pad_top; p.pad_left = w.pad_left; p.pad_bottom = w.pad_bottom; p.pad_right = w.pad_right;
  }
  p.count_include_pad = (int32_t)cs_node_attr_int(n, "count_include_pad", 0);
  cs_op op;
  if (n->op == CS_OP_MAX_POOL) {
    if (dt == CS_DTYPE_I8) op = CS_OP_K_MAXPOOL_I8;
    else if (dt == CS_DTYPE_F32) op = CS_OP_K_MAXPOOL_F32;
    else return cs_lower_unsupported(n, "MaxPool supports float32 and int8");
  } else {
    if (dt != CS_DTYPE_F32) return cs_lower_unsupported(n, "AveragePool on integers must be a QDQ pattern");
    op = CS_OP_K_AVGPOOL_F32;
  }
  int ins[1] = {n->inputs[0]};
  n->n_outputs = 1; /* Indices, if read, has its own node (lower_pool_indices) */
  return cs_lower_retarget(g, id, op, 1, ins, (cs_kparams){.pool = p});
}

const cs_lowering cs_lowerings_pool[] = {
    {CS_OP_MAX_POOL, lower_pool},
    {CS_OP_AVERAGE_POOL, lower_pool},
    {CS_OP_GLOBAL_AVERAGE_POOL, lower_pool},
    {CS_OP_COUNT_, NULL},
};
