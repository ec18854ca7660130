/*
 * A conv with an asymmetric stride as phases at a symmetric one
 * (mmalib_phases.h).
 */
#include "mmalib_phases.h"

#include <stdio.h>
#include <string.h>

#include "geometry.h"
#include "pattern.h"

void cs_mm_geom_of(cs_graph *g, int conv_id, cs_mm_geom *c) {
  memset(c, 0, sizeof *c);
  const cs_node *n = cs_graph_node(g, conv_id);
  cs_window2d w;
  if (cs_window2d_from_node(g, n, &w) != CS_OK) {
    cs_error_clear();
    return;
  }
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  c->strides[0] = w.stride_h;
  c->strides[1] = w.stride_w;
  c->pads[0] = w.pad_top;
  c->pads[1] = w.pad_left;
  c->pads[2] = w.pad_bottom;
  c->pads[3] = w.pad_right;
  c->hw[0] = y->shape[2];
  c->hw[1] = y->shape[3];
}

cs_status cs_mm_geom_set(cs_graph *g, int conv_id, const cs_mm_geom *c) {
  cs_node *n = cs_graph_node(g, conv_id);
  if (cs_node_set_attr_ints(n, "strides", 2, c->strides) != CS_OK || cs_node_set_attr_ints(n, "pads", 4, c->pads) != CS_OK)
    return CS_ERR_NOMEM;
  cs_value *y = cs_graph_value(g, n->outputs[0]);
  y->shape[2] = c->hw[0];
  y->shape[3] = c->hw[1];
  return CS_OK;
}

/* Phase j (the header): stride (S, S); along axis a its window starts j·s
 * later and its end padding gives it n positions. 0 when x's begin
 * padding is too small for it. */
static int phase_geom(const cs_mm_geom *old, const cs_window2d *w, int64_t in_len, int a, int s, int S, int j,
                      int64_t n, cs_mm_geom *c) {
  *c = *old;
  c->strides[0] = c->strides[1] = S;
  int64_t begin = old->pads[a] - (int64_t)j * s;
  int64_t k_eff = (int64_t)(a ? w->dil_w : w->dil_h) * ((a ? w->k_w : w->k_h) - 1) + 1;
  int64_t end = (n - 1) * S + k_eff - in_len - begin;
  if (end < 0) end = 0;
  if (begin < 0 || (in_len + begin + end - k_eff) / S + 1 != n) return 0;
  c->pads[a] = begin;
  c->pads[a + 2] = end;
  c->hw[a] = n;
  return 1;
}

int cs_mm_phases_of(cs_graph *g, int conv_id, cs_mm_phases *p) {
  memset(p, 0, sizeof *p);
  const cs_node *n = cs_graph_node(g, conv_id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *y = cs_graph_value(g, n->outputs[0]);
  if (x->rank != 4 || y->rank != 4 || x->shape[0] != 1) return 0;
  const char *ap = cs_node_attr_string(n, "auto_pad", "NOTSET");
  if (ap && strcmp(ap, "NOTSET") != 0) return 0; /* pads derived from the strides: explicit only */
  cs_window2d w;
  if (cs_window2d_from_node(g, n, &w) != CS_OK) {
    cs_error_clear();
    return 0;
  }
  if (w.stride_h == w.stride_w || w.stride_h < 1 || w.stride_w < 1) return 0;
  int s = w.stride_h < w.stride_w ? w.stride_h : w.stride_w;
  int big = w.stride_h < w.stride_w ? w.stride_w : w.stride_h;
  if (big % s != 0 || big / s > CS_MM_MAX_PHASES) return 0;
  cs_mm_geom old;
  cs_mm_geom_of(g, conv_id, &old);
  p->r = big / s;
  p->axis = w.stride_h > w.stride_w;
  int64_t in_len = x->shape[2 + p->axis], len = y->shape[2 + p->axis], per = (len + p->r - 1) / p->r;
  for (int j = 0; j < p->r; j++)
    if (!phase_geom(&old, &w, in_len, p->axis, s, big, j, per, &p->ph[j])) return 0;
  return 1;
}

cs_status cs_mm_phases_offloaded(cs_graph *g, const cs_target *t, int conv_id, const cs_mm_dtype *d, int64_t c_out,
                                 const cs_mm_phases *p, int *take) {
  cs_mm_geom old;
  cs_mm_geom_of(g, conv_id, &old);
  *take = 1;
  cs_status st = CS_OK;
  for (int j = 0; j < p->r && *take && st == CS_OK; j++) {
    char why[200];
    const char *rule = NULL;
    st = cs_mm_geom_set(g, conv_id, &p->ph[j]);
    if (st == CS_OK) st = cs_mm_conv_padded_rule(g, t, conv_id, d, c_out, &rule, why, sizeof why);
    *take = st == CS_OK && !rule;
  }
  cs_status put = cs_mm_geom_set(g, conv_id, &old);
  return st != CS_OK ? st : put;
}

cs_status cs_mm_build_phases(cs_graph *g, int conv_id, const cs_qdq_tail *tail, const cs_mm_phases *p,
                             const char *base) {
  int r = p->r, a = p->axis;
  int y = cs_graph_node(g, tail->q)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  int64_t shape[4] = {yv->shape[0], yv->shape[1], p->ph[0].hw[0], p->ph[0].hw[1]};
  int64_t full[4] = {yv->shape[0], yv->shape[1], yv->shape[2], yv->shape[3]};
  int64_t len = full[2 + a];
  cs_dtype dt = yv->dtype;
  int ys[CS_MM_MAX_PHASES];
  char name[512];
  if (cs_mm_geom_set(g, conv_id, &p->ph[0]) != CS_OK) return CS_ERR_NOMEM;
  if (tail->act >= 0) {
    cs_value *av = cs_graph_value(g, cs_graph_node(g, tail->act)->outputs[0]);
    av->shape[2] = shape[2];
    av->shape[3] = shape[3];
  }
  snprintf(name, sizeof name, "%s.mm_phase0", yv->name ? yv->name : base);
  ys[0] = cs_reroute_output(g, tail->q, name, 4, shape);
  if (ys[0] < 0) return CS_ERR_NOMEM;
  for (int j = 1; j < r; j++) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "mm_phase%d", j);
    int x = cs_graph_node(g, conv_id)->inputs[0];
    int c = cs_clone_node(g, conv_id, suffix, x, 4, shape);
    if (c < 0 || cs_mm_geom_set(g, c, &p->ph[j]) != CS_OK) return CS_ERR_NOMEM;
    int v = cs_graph_node(g, c)->outputs[0];
    if (tail->act >= 0) {
      int act = cs_clone_node(g, tail->act, suffix, v, 4, shape);
      if (act < 0) return CS_ERR_NOMEM;
      v = cs_graph_node(g, act)->outputs[0];
    }
    int q = cs_clone_node(g, tail->q, suffix, v, 4, shape);
    if (q < 0) return CS_ERR_NOMEM;
    ys[j] = cs_graph_node(g, q)->outputs[0];
  }
  int64_t woven[4] = {full[0], full[1], full[2], full[3]};
  woven[2 + a] = shape[2 + a] * r;
  int out = y;
  if (woven[2 + a] != len) {
    snprintf(name, sizeof name, "%s.mm_phases", cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : base);
    out = cs_graph_add_value(g, name, dt, 4, woven);
    if (out < 0) return CS_ERR_NOMEM;
  }
  /* y_j's element (…, m) is y's (…, m·r + j): r values interleaved one
   * element (columns) or one row (rows) at a time */
  if (cs_add_concat_steps(g, base, r, ys, out, woven[0] * woven[1] * (a ? woven[2] * shape[3] : shape[2])) < 0)
    return CS_ERR_NOMEM;
  return out == y || cs_add_slice(g, base, out, y, NULL, NULL) >= 0 ? CS_OK : CS_ERR_NOMEM;
}
