/*
 * FuseQDQToTIDLMaxPool — Q( MaxPool( DQ(x:i8) ) ) with the same per-tensor
 * qparams on both sides (max commutes with a monotonic requantization only
 * when it is the identity) → c7x_int8_max_pool_tidl, or its scalar fallback
 * c7x_int8_max_pool when the target says -tidl-kernels=0 (a firmware
 * without TIDL exports only the latter; spec/mmalib-integration.txt).
 *
 * The kernel pads with −128 (the int8 minimum, never a window's maximum
 * unless the whole window is padding, which the start rule excludes) and
 * takes one pad per axis: the top/left pad positions the windows, a bottom
 * or right pad (or ceil mode) only adds −128 taps. Rules: 2-D NCHW, no
 * dilation, storage_order 0, every window starts inside the input.
 */
#include <string.h>

#include "match/geometry.h"
#include "match/mmalib_common.h"
#include "match/mmalib_report.h"
#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

static void decline(cs_graph *g, const cs_node *n, const char *why) {
  cs_mmalib_report_add(g, CS_OFFLOAD_MAX_POOL, n->name, NULL, -1.0, "%s", why);
}

static cs_status offload_one(cs_graph *g, int pool_id, int tidl) {
  const cs_node *pool = cs_graph_node(g, pool_id);
  if (pool->n_outputs != 1) { decline(g, pool, "MaxPool with an Indices output"); return CS_OK; }
  int xdq = cs_match_dq_i8(g, pool->inputs[0]);
  cs_qparams xq;
  if (xdq < 0 || !cs_match_dq_params(g, xdq, &xq)) {
    decline(g, pool, "input is not DequantizeLinear(int8, per-tensor)");
    return CS_OK;
  }
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail(g, pool->outputs[0], 0, &tail)) {
    cs_qparams_free(&xq);
    decline(g, pool, "no QuantizeLinear(int8) tail");
    return CS_OK;
  }
  const char *rule = NULL;
  cs_window2d w;
  int x_in = cs_graph_node(g, xdq)->inputs[0];
  const cs_value *x = cs_graph_value(g, x_in);
  const cs_value *y = cs_graph_value(g, pool->outputs[0]);
  if (!cs_qparams_equal(&xq, &tail.out)) { rule = "input and output qparams differ"; goto done; }
  if (cs_mm_const_reachable(g, x_in)) { rule = "all-constant match (ConstReachability)"; goto done; }
  if (x->rank != 4 || y->rank != 4) { rule = "not a 2-D (NCHW) pool"; goto done; }
  if (cs_window2d_from_node(g, pool, &w) != CS_OK) { cs_error_clear(); rule = "not a 2-D window"; goto done; }
  if (w.dil_h != 1 || w.dil_w != 1) { rule = "dilation != 1"; goto done; }
  if (cs_node_attr_int(pool, "storage_order", 0) != 0) { rule = "storage_order != 0"; goto done; }
  if ((y->shape[2] - 1) * w.stride_h - w.pad_top >= x->shape[2] ||
      (y->shape[3] - 1) * w.stride_w - w.pad_left >= x->shape[3]) {
    rule = "a window starts past the input";
    goto done;
  }
  int64_t args[12] = {x->shape[0], x->shape[1], x->shape[2], x->shape[3], y->shape[2], y->shape[3],
                      w.k_h,       w.k_w,       w.stride_h,  w.stride_w,  w.pad_top,   w.pad_left};
  int chain[1] = {pool_id};
  int id = cs_replace_chain(g, chain, 1, &tail, tidl ? CS_OP_K_C7X_MAXPOOL_TIDL_I8 : CS_OP_K_C7X_MAXPOOL_I8, 1,
                            &x_in);
  if (cs_mm_set_args(g, id, 12, args) != CS_OK) {
    cs_qparams_free(&xq);
    cs_qparams_free(&tail.out);
    return CS_ERR_NOMEM; /* message recorded */
  }
  cs_mmalib_report_add(g, CS_OFFLOAD_MAX_POOL, cs_graph_node(g, pool_id)->name,
                       cs_kernel_info_of(tidl ? CS_OP_K_C7X_MAXPOOL_TIDL_I8 : CS_OP_K_C7X_MAXPOOL_I8)->fn, -1.0, NULL);
done:
  if (rule) decline(g, cs_graph_node(g, pool_id), rule);
  cs_qparams_free(&xq);
  cs_qparams_free(&tail.out);
  return CS_OK;
}

cs_status pass_fuse_qdq_to_tidl_max_pool(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_MAX_POOL) continue;
    cs_status st = offload_one(g, i, t->tidl_kernels);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
