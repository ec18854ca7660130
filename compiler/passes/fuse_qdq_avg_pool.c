/*
 * FuseQDQToAvgPool — quantized average pooling, as ONNX Runtime's
 * QLinearGlobalAveragePool / QLinearAveragePool:
 *
 *   Q( GlobalAveragePool( DQ(x:i8) ) )  → k_global_avgpool_i8(rq, x)
 *   Q( AveragePool( DQ(x:i8) ) )        → k_global_avgpool_i8 when the
 *        window covers the whole unpadded input, else k_avgpool_i8(rq, x)
 *   Q( ReduceMean[axes H, W]( DQ(x:i8) ) ) → k_global_avgpool_i8, with
 *        -ort-exact=0 only (PyTorch's AdaptiveAvgPool2d(1), x.mean([2, 3])).
 *        ORT has no QDQ rule for ReduceMean: it dequantizes, sums in float
 *        and quantizes, whose roundings move exact halves (acc·xs/(ys·HW)
 *        = k + ½) to either side; the integer pool rounds those to even.
 *        Within 1 LSB, so the ORT-exact default keeps the float kernel.
 *
 * Global: acc = Σx − zx·HW, multiplier fl(xs / fl(ys·HW)).
 * Windowed: ORT's float formula (in integers with -requant=q31).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "match/geometry.h"
#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

/* add_global, add_windowed: 1 fused, 0 declined, -1 out of memory
 * (message recorded). */
static int add_global(cs_graph *g, const cs_target *t, int id, int x_int, const cs_qparams *xq,
                      const cs_qdq_tail *tail) {
  const cs_value *x = cs_graph_value(g, x_int);
  int32_t hw = (int32_t)(x->shape[2] * x->shape[3]);
  int32_t nc = (int32_t)(x->shape[0] * x->shape[1]);
  float ys = tail->out.scale[0];
  double exact = (double)xq->scale[0] / ((double)ys * hw);
  float ort = xq->scale[0] / (ys * (float)hw);
  char base[256];
  snprintf(base, sizeof base, "%s", cs_graph_node(g, id)->name);
  tidsp_gap_i8_params p;
  memset(&p, 0, sizeof p);
  int rq = cs_requant_blob(g, base, t, 1, &exact, &ort, &p.rq);
  if (rq == -2) return 0; /* no Q31 form: declined */
  if (rq < 0) return -1;
  p.nc = nc;
  p.hw = hw;
  p.x_zp = xq->zp[0];
  p.rq.out_zp = tail->out.zp[0];
  cs_output_clamp(&tail->out, tail->lo, tail->hi, &p.rq.out_min, &p.rq.out_max);
  int inputs[2] = {rq, x_int};
  int chain[1] = {id};
  int k = cs_replace_chain(g, chain, 1, tail, CS_OP_K_GAP_I8, 2, inputs);
  if (k < 0) return -1;
  cs_graph_node(g, k)->k.gap = p;
  return 1;
}

static int add_windowed(cs_graph *g, const cs_target *t, int id, int x_int, const cs_qparams *xq,
                        const cs_qdq_tail *tail, const cs_window2d *w) {
  const cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, x_int);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  tidsp_avgpool_i8_params p;
  memset(&p, 0, sizeof p);
  tidsp_pool2d_params *pp = &p.pool;
  pp->n = (int32_t)x->shape[0]; pp->c = (int32_t)x->shape[1];
  pp->h_in = (int32_t)x->shape[2]; pp->w_in = (int32_t)x->shape[3];
  pp->h_out = (int32_t)y->shape[2]; pp->w_out = (int32_t)y->shape[3];
  pp->k_h = w->k_h; pp->k_w = w->k_w;
  pp->stride_h = w->stride_h; pp->stride_w = w->stride_w;
  pp->dil_h = w->dil_h; pp->dil_w = w->dil_w;
  pp->pad_top = w->pad_top; pp->pad_left = w->pad_left;
  pp->pad_bottom = w->pad_bottom; pp->pad_right = w->pad_right;
  pp->count_include_pad = (int32_t)cs_node_attr_int(n, "count_include_pad", 0);
  p.domain_offset = cs_qdq_tail_domain_offset(g, tail);
  p.x_scale = xq->scale[0];
  p.y_scale = tail->out.scale[0];
  p.x_zp = xq->zp[0];
  p.y_zp = tail->out.zp[0];
  cs_output_clamp(&tail->out, tail->lo, tail->hi, &p.y_min, &p.y_max);
  /* Q31 computes ORT's float formula in integers from the bits of the two
   * scales (kernels.h): no multiplier table. */
  p.kind = t->requant == CS_REQUANT_Q31 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
  int rq = -1;
  int inputs[2] = {rq, x_int};
  int chain[1] = {id};
  int k = cs_replace_chain(g, chain, 1, tail, CS_OP_K_AVGPOOL_I8, 2, inputs);
  if (k < 0) return -1;
  cs_graph_node(g, k)->k.avgpool = p;
  return 1;
}

/* A ReduceMean over exactly H and W of a rank-4 input (axes as the
 * attribute before opset 18, as a constant input from 18; negative axes
 * count from the end). */
static int is_spatial_mean(cs_graph *g, const cs_node *n) {
  if (cs_graph_value(g, n->inputs[0])->rank != 4) return 0;
  int cnt = 0;
  const int64_t *axes = cs_node_attr_ints(n, "axes", &cnt);
  int64_t buf[CS_MAX_RANK];
  if (!axes && n->n_inputs > 1 && n->inputs[1] >= 0) {
    const cs_value *av = cs_graph_value(g, n->inputs[1]);
    if (!av->data || cs_value_numel(av) > CS_MAX_RANK) return 0;
    cnt = (int)cs_value_numel(av);
    for (int i = 0; i < cnt; i++) buf[i] = cs_const_get_int(av, i);
    axes = buf;
  }
  if (!axes || cnt == 0) return 0; /* every axis (or none: noop_with_empty_axes) */
  unsigned mask = 0;
  for (int i = 0; i < cnt; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + 4 : axes[i];
    if (a < 0 || a > 3) return 0;
    mask |= 1u << a;
  }
  return mask == 12u;
}

cs_status pass_fuse_qdq_avg_pool(cs_graph *g, const cs_target *t) {
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead) continue;
    int mean = n->op == CS_OP_REDUCE_MEAN && !t->ort_exact && is_spatial_mean(g, n);
    if (n->op != CS_OP_GLOBAL_AVERAGE_POOL && n->op != CS_OP_AVERAGE_POOL && !mean) continue;
    int xdq = cs_match_dq_i8(g, n->inputs[0]);
    cs_qparams xq;
    if (!cs_match_dq_params(g, xdq, &xq)) continue;
    int x_int = cs_graph_node(g, xdq)->inputs[0];
    if (cs_graph_value(g, x_int)->rank != 4) { cs_qparams_free(&xq); continue; }
    cs_qdq_tail tail;
    if (!cs_match_qdq_tail(g, n->outputs[0], 0, &tail)) { cs_qparams_free(&xq); continue; }
    int r = 0;
    if (n->op == CS_OP_GLOBAL_AVERAGE_POOL || mean) {
      r = add_global(g, t, i, x_int, &xq, &tail);
    } else {
      cs_window2d w;
      const cs_value *x = cs_graph_value(g, x_int);
      if (cs_window2d_from_node(g, n, &w) != CS_OK) {
        cs_error_clear();
      } else if (w.k_h == x->shape[2] && w.k_w == x->shape[3] && !w.pad_top && !w.pad_left &&
                 !w.pad_bottom && !w.pad_right && w.dil_h == 1 && w.dil_w == 1) {
        r = add_global(g, t, i, x_int, &xq, &tail);
      } else {
        r = add_windowed(g, t, i, x_int, &xq, &tail, &w);
      }
    }
    cs_qparams_free(&xq);
    cs_qparams_free(&tail.out);
    if (r < 0) return CS_ERR_NOMEM; /* message recorded */
  }
  return CS_OK;
}
