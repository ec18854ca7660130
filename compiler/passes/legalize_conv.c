/*
 * LegalizeOps: Conv and ConvTranspose in float (k_conv2d_f32,
 * k_conv_transpose2d_f32 and the N-D one); integer convolutions are
 * complete QDQ patterns, fused before this pass.
 */
#include <string.h>

#include "legalize_internal.h"
#include "match/geometry.h"
#include "match/ort_nchwc.h"

/* Node `id` (Conv or ConvTranspose: X, W and an optional bias; a Conv
 * also the sum of a fused Add, fuse_conv_add_f32.c) becomes kernel op with
 * params p and `n_in` inputs, its "group" attribute filled in. */
static cs_status retarget_conv(cs_graph *g, int id, cs_op op, int n_in, tidsp_conv2d_params *p) {
  cs_node *n = cs_graph_node(g, id);
  p->groups = (int32_t)cs_node_attr_int(n, "group", 1);
  int ins[4] = {n->inputs[0], n->inputs[1], n->n_inputs > 2 ? n->inputs[2] : -1, n->n_inputs > 3 ? n->inputs[3] : -1};
  return cs_lower_retarget(g, id, op, n_in, ins, (cs_kparams){.conv = *p});
}

static cs_status lower_conv(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!cs_lower_all_f32(g, n)) return cs_lower_unsupported(n, "a Conv on integers must be a complete QDQ pattern (DQ inputs, Q output)");
  cs_window2d w;
  cs_status st = cs_window2d_from_node(g, n, &w);
  if (st != CS_OK) return st;
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = (int32_t)x->shape[0]; p.c_in = (int32_t)x->shape[1];
  p.h_in = (int32_t)x->shape[2]; p.w_in = (int32_t)x->shape[3];
  p.c_out = (int32_t)y->shape[1]; p.h_out = (int32_t)y->shape[2]; p.w_out = (int32_t)y->shape[3];
  p.k_h = w.k_h; p.k_w = w.k_w; p.stride_h = w.stride_h; p.stride_w = w.stride_w;
  p.dil_h = w.dil_h; p.dil_w = w.dil_w; p.pad_top = w.pad_top; p.pad_left = w.pad_left;
  /* the summation order follows the layout ORT's NchwcTransformer gives
   * the conv (conv2d_f32__host_mlas.c), which depends on MLAS's block */
  p.mlas_nchw = (cs_ort_nchwc_conv(g, id, CS_ORT_NCHWC_BLOCK) ? 0 : TIDSP_MLAS_BLOCK16) |
                (cs_ort_nchwc_conv(g, id, CS_ORT_NCHWC_BLOCK_AVX2) ? 0 : TIDSP_MLAS_BLOCK8);
  /* a fused Add's sum: the blocks whose ORT adds it inside the conv */
  p.sum_in_conv = cs_ort_sum_blocks(n);
  return retarget_conv(g, id, CS_OP_K_CONV2D_F32, 4, &p);
}

/* ConvTranspose in float, 2-D (1-D as a 2-D of height 1; 3-D and up on
 * the N-D kernel); the frontend resolved its pads. */
static cs_status lower_conv_transpose(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!cs_lower_all_f32(g, n)) return cs_lower_unsupported(n, "a ConvTranspose on integers is not supported");
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  int nk = 0, ns = 0, nd = 0, np = 0;
  const int64_t *k = cs_node_attr_ints(n, "kernel_shape", &nk), *pads = cs_node_attr_ints(n, "pads", &np);
  const int64_t *s = cs_node_attr_ints(n, "strides", &ns), *d = cs_node_attr_ints(n, "dilations", &nd);
  int sp = x->rank - 2, o = 2 - sp; /* spatial axes; o = 1: 1-D, axis 0 of the 2-D is a unit one */
  if (sp < 1 || sp > TIDSP_MAX_RANK - 2 || !k || nk != sp || !pads || np != 2 * sp || (s && ns != sp) ||
      (d && nd != sp))
    return cs_lower_unsupported(n, "the window needs one kernel_shape, stride and dilation per spatial dim and two pads");
  if (sp > 2) { /* 3-D and up: the N-D kernel */
    tidsp_conv_transpose_nd_params q;
    memset(&q, 0, sizeof q);
    q.n = (int32_t)x->shape[0]; q.c_in = (int32_t)x->shape[1]; q.c_out = (int32_t)y->shape[1];
    q.groups = (int32_t)cs_node_attr_int(n, "group", 1);
    q.dims = sp;
    for (int i = 0; i < sp; i++) {
      q.in[i] = (int32_t)x->shape[2 + i];
      q.out[i] = (int32_t)y->shape[2 + i];
      q.k[i] = (int32_t)k[i];
      q.stride[i] = s ? (int32_t)s[i] : 1;
      q.dil[i] = d ? (int32_t)d[i] : 1;
      q.pad_begin[i] = (int32_t)pads[i];
    }
    int ins[3] = {n->inputs[0], n->inputs[1], n->n_inputs > 2 ? n->inputs[2] : -1};
    return cs_lower_retarget(g, id, CS_OP_K_CONV_TRANSPOSE_ND_F32, 3, ins, (cs_kparams){.conv_transpose_nd = q});
  }
  int32_t hw_in[2] = {1, 1}, hw_out[2] = {1, 1}, kk[2] = {1, 1}, st[2] = {1, 1}, dl[2] = {1, 1}, pb[2] = {0, 0};
  for (int i = 0; i < sp; i++) {
    hw_in[o + i] = (int32_t)x->shape[2 + i];
    hw_out[o + i] = (int32_t)y->shape[2 + i];
    kk[o + i] = (int32_t)k[i];
    st[o + i] = s ? (int32_t)s[i] : 1;
    dl[o + i] = d ? (int32_t)d[i] : 1;
    pb[o + i] = (int32_t)pads[i];
  }
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = (int32_t)x->shape[0]; p.c_in = (int32_t)x->shape[1]; p.c_out = (int32_t)y->shape[1];
  p.h_in = hw_in[0]; p.w_in = hw_in[1]; p.h_out = hw_out[0]; p.w_out = hw_out[1];
  p.k_h = kk[0]; p.k_w = kk[1]; p.stride_h = st[0]; p.stride_w = st[1];
  p.dil_h = dl[0]; p.dil_w = dl[1]; p.pad_top = pb[0]; p.pad_left = pb[1];
  return retarget_conv(g, id, CS_OP_K_CONV_TRANSPOSE2D_F32, 3, &p);
}

const cs_lowering cs_lowerings_conv[] = {
    {CS_OP_CONV, lower_conv},
    {CS_OP_CONV_TRANSPOSE, lower_conv_transpose},
    {CS_OP_COUNT_, NULL},
};
