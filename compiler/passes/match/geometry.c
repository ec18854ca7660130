#include <string.h>

#include "geometry.h"

static int32_t attr_at(const cs_node *n, const char *name, int i, int32_t dflt) {
  int cnt = 0;
  const int64_t *v = cs_node_attr_ints(n, name, &cnt);
  return (v && i < cnt) ? (int32_t)v[i] : dflt;
}

cs_status cs_window2d_from_node(cs_graph *g, const cs_node *n, cs_window2d *w) {
  memset(w, 0, sizeof *w);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  if (x->rank != 4 || y->rank != 4)
    return cs_error(CS_ERR_UNSUPPORTED, "node '%s' (%s): only 2-D windows on NCHW tensors are supported (input rank %d)",
                    n->name, cs_op_name(n->op), x->rank);
  if (n->op == CS_OP_CONV) {
    const cs_value *wt = cs_graph_value(g, n->inputs[1]);
    w->k_h = attr_at(n, "kernel_shape", 0, (int32_t)wt->shape[2]);
    w->k_w = attr_at(n, "kernel_shape", 1, (int32_t)wt->shape[3]);
  } else {
    w->k_h = attr_at(n, "kernel_shape", 0, 0);
    w->k_w = attr_at(n, "kernel_shape", 1, 0);
  }
  w->stride_h = attr_at(n, "strides", 0, 1);
  w->stride_w = attr_at(n, "strides", 1, 1);
  w->dil_h = attr_at(n, "dilations", 0, 1);
  w->dil_w = attr_at(n, "dilations", 1, 1);
  if (w->k_h <= 0 || w->k_w <= 0 || w->stride_h <= 0 || w->stride_w <= 0 || w->dil_h <= 0 || w->dil_w <= 0)
    return cs_error(CS_ERR_INVALID, "node '%s' (%s): invalid kernel/stride/dilation", n->name, cs_op_name(n->op));
  const cs_attr *ap = cs_node_attr(n, "auto_pad");
  const char *mode = (ap && ap->kind == CS_ATTR_STRING && ap->s) ? ap->s : "NOTSET";
  if (!strcmp(mode, "NOTSET")) {
    w->pad_top = attr_at(n, "pads", 0, 0);
    w->pad_left = attr_at(n, "pads", 1, 0);
    w->pad_bottom = attr_at(n, "pads", 2, 0);
    w->pad_right = attr_at(n, "pads", 3, 0);
  } else if (!strcmp(mode, "VALID")) {
    /* no padding */
  } else if (!strcmp(mode, "SAME_UPPER") || !strcmp(mode, "SAME_LOWER")) {
    int32_t in[2] = {(int32_t)x->shape[2], (int32_t)x->shape[3]};
    int32_t k[2] = {w->k_h, w->k_w}, s[2] = {w->stride_h, w->stride_w}, d[2] = {w->dil_h, w->dil_w};
    int32_t begin[2], end[2];
    for (int i = 0; i < 2; i++) {
      int32_t out = (in[i] + s[i] - 1) / s[i];
      int32_t total = (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i];
      if (total < 0) total = 0;
      int32_t small = total / 2, big = total - small;
      begin[i] = !strcmp(mode, "SAME_UPPER") ? small : big;
      end[i] = total - begin[i];
    }
    w->pad_top = begin[0]; w->pad_left = begin[1];
    w->pad_bottom = end[0]; w->pad_right = end[1];
  } else {
    return cs_error(CS_ERR_INVALID, "node '%s': unknown auto_pad '%s'", n->name, mode);
  }
  if (w->pad_top < 0 || w->pad_left < 0 || w->pad_bottom < 0 || w->pad_right < 0)
    return cs_error(CS_ERR_INVALID, "node '%s': negative pads", n->name);
  return CS_OK;
}
