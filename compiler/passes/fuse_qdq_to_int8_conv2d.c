/*
 * FuseQDQToInt8Conv2D — the generic int8 convolution:
 *
 *   Q( [Relu|Clip]( Conv( DQ(x:i8), DQ(w:i8 const), [DQ(b:i32 const) | b:f32 const] ) ) )
 *     → k_conv2d_i8(x, w, bias_i32, rq)
 *
 * Folded at compile time, as ONNX Runtime's QLinearConv does:
 *   multiplier[c] = fl(fl(xs · ws[c]) / ys)        (FLOAT form)
 *                 = xs · ws[c] / ys in double      (Q31 form)
 *   bias: the int32 data of the bias DQ (its scale is ignored, as ORT
 *   does), or a float bias quantized as rne(fl(b / fl(xs · ws[c]))).
 *   A fused Relu/Clip narrows the output clamp (exact: Q is monotonic).
 * Declines (the graph stays as it was): non-constant weights or scales,
 * weight zero points that differ per channel, per-axis weights on an axis
 * other than 0, a chain that fans out, an input ORT keeps in float
 * (-ort-exact=1: pattern.h CS_ATTR_ORT_FLOAT).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/fused_common.h"
#include "match/geometry.h"
#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

/* The bias found, folded by quant/ (fused_common.h). */
int cs_fold_bias_i32(cs_graph *g, int b, float xs, const float *ws, int ws_count,
                     int channels, const char *base, int *none) {
  *none = 0;
  if (b < 0) { *none = 1; return -1; }
  int bdq = cs_match_producer(g, b, CS_OP_DEQUANTIZE_LINEAR);
  if (bdq >= 0) b = cs_graph_node(g, bdq)->inputs[0];
  return cs_bias_i32_const(g, b, bdq >= 0, xs, ws, ws_count, channels, base);
}

/* Weight DQ: int8 constant, per-tensor or per-axis on `axis`, equal zero
 * points (qdq_tail.h). Fills qp; returns 1 on success. */
int cs_match_weight_dq(cs_graph *g, int w, int axis, cs_qparams *qp, int *wdq_out) {
  return cs_match_weight_dq_as(g, w, axis, CS_DTYPE_I8, qp, wdq_out);
}

static cs_status fuse_one(cs_graph *g, const cs_target *t, int conv_id) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  if (conv->n_inputs < 2) return CS_OK;
  int xdq = cs_match_dq_i8(g, conv->inputs[0]);
  cs_qparams xq, wq;
  if (cs_match_ort_keeps_float(g, t, &xdq, 1) || !cs_match_dq_params(g, xdq, &xq)) return CS_OK;
  int wdq = -1;
  if (!cs_match_weight_dq(g, conv->inputs[1], 0, &wq, &wdq)) { cs_qparams_free(&xq); return CS_OK; }
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail(g, conv->outputs[0], 1, &tail)) {
    cs_qparams_free(&xq); cs_qparams_free(&wq);
    return CS_OK;
  }
  cs_window2d win;
  cs_status st = cs_window2d_from_node(g, conv, &win);
  if (st != CS_OK) { cs_error_clear(); goto decline; }
  const cs_value *x = cs_graph_value(g, conv->inputs[0]);
  const cs_value *y = cs_graph_value(g, conv->outputs[0]);
  int c_out = (int)y->shape[1];
  if (wq.count != 1 && wq.count != c_out) goto decline;
  char base[256];
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  int no_bias = 0;
  int bias = cs_fold_bias_i32(g, conv->n_inputs > 2 ? conv->inputs[2] : -1, xq.scale[0], wq.scale, wq.count,
                              c_out, base, &no_bias);
  if (bias == -2) goto decline;
  if (bias == -3) {
    st = CS_ERR_NOMEM;
    goto out;
  }
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  int rq = cs_requant_blob_xwy(g, base, t, c_out, 1.0f, xq.scale[0], wq.scale, wq.count, tail.out.scale[0], &p.rq);
  if (rq == -2) goto decline; /* no Q31 form: float path */
  if (rq < 0) {
    st = CS_ERR_NOMEM;
    goto out;
  }
  /* Re-read after the graph grew. */
  conv = cs_graph_node(g, conv_id);
  x = cs_graph_value(g, conv->inputs[0]);
  y = cs_graph_value(g, conv->outputs[0]);
  p.n = (int32_t)x->shape[0];
  p.c_in = (int32_t)x->shape[1];
  p.h_in = (int32_t)x->shape[2];
  p.w_in = (int32_t)x->shape[3];
  p.c_out = c_out;
  p.h_out = (int32_t)y->shape[2];
  p.w_out = (int32_t)y->shape[3];
  p.k_h = win.k_h; p.k_w = win.k_w;
  p.stride_h = win.stride_h; p.stride_w = win.stride_w;
  p.dil_h = win.dil_h; p.dil_w = win.dil_w;
  p.pad_top = win.pad_top; p.pad_left = win.pad_left;
  p.groups = (int32_t)cs_node_attr_int(conv, "group", 1);
  p.x_zp = xq.zp[0];
  p.w_zp = wq.zps[0];
  p.rq.out_zp = tail.out.zp[0];
  cs_output_clamp(&tail.out, tail.lo, tail.hi, &p.rq.out_min, &p.rq.out_max);
  int inputs[4] = {cs_graph_node(g, xdq)->inputs[0], cs_graph_node(g, wdq)->inputs[0], no_bias ? -1 : bias, rq};
  int chain[1] = {conv_id};
  int id = cs_replace_chain(g, chain, 1, &tail, CS_OP_K_CONV2D_I8, 4, inputs);
  if (id < 0) {
    st = CS_ERR_NOMEM;
    goto out;
  }
  cs_graph_node(g, id)->k.conv = p;
  st = CS_OK;
  goto out;
decline:
  st = CS_OK;
out:
  cs_qparams_free(&xq);
  cs_qparams_free(&wq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status pass_fuse_qdq_to_int8_conv2d(cs_graph *g, const cs_target *t) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_CONV) continue;
    cs_status st = fuse_one(g, t, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
