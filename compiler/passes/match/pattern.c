#include "pattern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_match_producer(cs_graph *g, int v, cs_op op) {
  if (v < 0) return -1;
  int p = cs_graph_value(g, v)->producer;
  if (p < 0) return -1;
  const cs_node *n = cs_graph_node(g, p);
  return (!n->dead && n->op == op) ? p : -1;
}

int cs_match_swaps_last_two(cs_graph *g, int tr, int rank) {
  const cs_node *t = cs_graph_node(g, tr);
  int r = cs_graph_value(g, t->inputs[0])->rank, cnt = 0;
  if (r < 2 || (rank && r != rank)) return 0;
  const int64_t *perm = cs_node_attr_ints(t, "perm", &cnt);
  if (!perm) return r == 2;
  if (cnt != r || perm[r - 1] != r - 2 || perm[r - 2] != r - 1) return 0;
  for (int i = 0; i < r - 2; i++)
    if (perm[i] != i) return 0;
  return 1;
}

cs_status cs_match_each(cs_graph *g, cs_op op, cs_status (*fuse)(cs_graph *g, int id)) {
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != op) continue;
    cs_status st = fuse(g, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

int cs_match_single_consumer(cs_graph *g, int v) {
  if (v < 0 || cs_graph_is_output(g, v)) return -1;
  int c[2];
  return cs_graph_consumers(g, v, c, 2) == 1 ? c[0] : -1;
}

int cs_match_widen_is_dense(const cs_graph *g, const cs_node *n) {
  if (n->op != CS_OP_K_WIDEN_I16 || n->n_inputs != 1 || n->inputs[0] < 0) return 0;
  const tidsp_widen_i16_params *p = &n->k.widen;
  int64_t numel = cs_value_numel(cs_graph_value(g, n->inputs[0]));
  return p->batch == 1 && !p->transpose && p->rows == p->out_rows && p->cols == p->out_cols &&
         (int64_t)p->rows * p->cols == numel;
}

int cs_match_ort_keeps_float(cs_graph *g, const cs_target *t, const int *dqs, int n) {
  if (!t || !t->ort_exact) return 0;
  for (int i = 0; i < n; i++)
    if (dqs[i] >= 0 && cs_node_attr_int(cs_graph_node(g, dqs[i]), CS_ATTR_ORT_FLOAT, 0)) return 1;
  return 0;
}

int cs_match_is_const(cs_graph *g, int v) {
  return v >= 0 && cs_graph_value(g, v)->data != NULL;
}

int cs_match_same_shape(cs_graph *g, int a, int b) {
  const cs_value *x = cs_graph_value(g, a), *y = cs_graph_value(g, b);
  if (x->rank != y->rank) return 0;
  for (int i = 0; i < x->rank; i++)
    if (x->shape[i] != y->shape[i]) return 0;
  return 1;
}

int cs_match_matmul_bias_add(cs_graph *g, int mm, int64_t N) {
  int y = cs_graph_node(g, mm)->outputs[0];
  int add = cs_match_single_consumer(g, y);
  if (add < 0) return -1;
  const cs_node *a = cs_graph_node(g, add);
  if (a->op != CS_OP_ADD || a->n_inputs != 2 || !cs_match_same_shape(g, y, a->outputs[0])) return -1;
  int bias = a->inputs[0] == y ? a->inputs[1] : a->inputs[0];
  const cs_value *bv = cs_graph_value(g, bias);
  if (!bv->data || bv->dtype != CS_DTYPE_F32 || bv->rank != 1 || bv->shape[0] != N) return -1;
  return bias;
}

int cs_match_from_constants(cs_graph *g, int v, int depth) {
  if (v < 0) return 1; /* an absent optional input */
  const cs_value *val = cs_graph_value(g, v);
  if (val->data) return 1;
  if (val->producer < 0 || depth == 0) return 0;
  const cs_node *n = cs_graph_node(g, val->producer);
  for (int i = 0; i < n->n_inputs; i++)
    if (!cs_match_from_constants(g, n->inputs[i], depth - 1)) return 0;
  return n->n_inputs > 0;
}

int cs_match_per_channel(const cs_value *s, int rank, int64_t c, int64_t *channels) {
  if (rank < 2 || s->rank > rank) return 0;
  *channels = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->shape[i] == 1) continue;
    if (rank - s->rank + i != 1 || s->shape[i] != c) return 0;
    *channels = c;
  }
  return 1;
}

int cs_match_f32_4d(cs_graph *g, int v) {
  const cs_value *x = cs_graph_value(g, v);
  return x->dtype == CS_DTYPE_F32 && x->rank == 4;
}

int cs_match_dq_i8(cs_graph *g, int v) {
  int dq = cs_match_producer(g, v, CS_OP_DEQUANTIZE_LINEAR);
  if (dq < 0) return -1;
  const cs_node *n = cs_graph_node(g, dq);
  if (cs_graph_value(g, n->inputs[0])->dtype != CS_DTYPE_I8) return -1;
  if (!cs_match_is_const(g, n->inputs[1])) return -1;
  if (n->n_inputs >= 3 && n->inputs[2] >= 0 && !cs_match_is_const(g, n->inputs[2])) return -1;
  return dq;
}

char *cs_origin_join(cs_graph *g, const int *nodes, int count) {
  size_t len = 1;
  for (int i = 0; i < count; i++) {
    if (nodes[i] < 0) continue;
    const cs_node *n = cs_graph_node(g, nodes[i]);
    const char *s = n->origin && *n->origin ? n->origin : n->name;
    len += strlen(s ? s : "") + 2;
  }
  char *out = malloc(len);
  if (!out) {
    cs_error(CS_ERR_NOMEM, "out of memory (%zu bytes of node names)", len);
    return NULL;
  }
  out[0] = '\0';
  for (int i = 0; i < count; i++) {
    if (nodes[i] < 0) continue;
    const cs_node *n = cs_graph_node(g, nodes[i]);
    const char *s = n->origin && *n->origin ? n->origin : n->name;
    if (out[0]) strcat(out, ", ");
    strcat(out, s ? s : "");
  }
  return out;
}

void cs_absorb_consumer(cs_graph *g, int producer, int consumer) {
  int y = cs_graph_node(g, consumer)->outputs[0], old = cs_graph_node(g, producer)->outputs[0];
  char *origin = cs_origin_join(g, (int[]){producer, consumer}, 2);
  cs_graph_remove_node(g, consumer);
  cs_node *p = cs_graph_node(g, producer);
  p->outputs[0] = y;
  cs_graph_value(g, y)->producer = producer;
  cs_graph_value(g, old)->producer = -1;
  if (origin) {
    free(p->origin);
    p->origin = origin;
  }
}

int cs_reroute_output(cs_graph *g, int producer, const char *name, int rank, const int64_t *shape) {
  int y = cs_graph_node(g, producer)->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  int yp = cs_graph_add_value(g, name, yv->dtype, rank, shape);
  if (yp < 0) return -1;
  cs_value *ypv = cs_graph_value(g, yp);
  ypv->from_u8 = yv->from_u8;
  if (yv->quant && cs_value_set_quant(ypv, yv->quant->axis, yv->quant->count, yv->quant->scale,
                                      yv->quant->zero_point) != CS_OK)
    return -1;
  cs_graph_node(g, producer)->outputs[0] = yp;
  ypv->producer = producer;
  cs_graph_value(g, y)->producer = -1;
  return yp;
}

int cs_clone_node(cs_graph *g, int id, const char *suffix, int in0, int rank, const int64_t *shape) {
  const cs_node *n = cs_graph_node(g, id);
  const cs_value *yv = cs_graph_value(g, n->outputs[0]);
  char name[512];
  snprintf(name, sizeof name, "%s.%s", yv->name ? yv->name : "y", suffix);
  int y = cs_graph_add_value(g, name, yv->dtype, rank, shape);
  if (y < 0) return -1;
  cs_value *v = cs_graph_value(g, y);
  v->from_u8 = yv->from_u8;
  if (yv->quant &&
      cs_value_set_quant(v, yv->quant->axis, yv->quant->count, yv->quant->scale, yv->quant->zero_point) != CS_OK)
    return -1;
  int n_in = n->n_inputs, *ins = malloc(sizeof *ins * (size_t)(n_in > 0 ? n_in : 1));
  if (!ins) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  memcpy(ins, n->inputs, sizeof *ins * (size_t)n_in);
  if (n_in > 0) ins[0] = in0;
  snprintf(name, sizeof name, "%s.%s", n->name ? n->name : "node", suffix);
  int c = cs_graph_add_node(g, n->op, name, n->origin, n_in, ins, 1, &y);
  free(ins);
  if (c < 0 || cs_node_copy_attrs(cs_graph_node(g, c), cs_graph_node(g, id)) != CS_OK) return -1;
  return c;
}

int cs_reroute_output_as(cs_graph *g, int producer, int o, const char *name, cs_dtype dt) {
  int y = cs_graph_node(g, producer)->outputs[o];
  const cs_value *yv = cs_graph_value(g, y);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, yv->shape, sizeof shape);
  int yp = cs_graph_add_value(g, name, dt, yv->rank, shape);
  if (yp < 0) return -1;
  cs_graph_node(g, producer)->outputs[o] = yp;
  cs_graph_value(g, yp)->producer = producer;
  cs_graph_value(g, y)->producer = -1;
  return yp;
}

cs_status cs_add_qdq_after(cs_graph *g, int v, int scale_v, int zp_v, const cs_qparams *p, const char *origin,
                           int *q_out, int *dq_out) {
  const cs_value *vv = cs_graph_value(g, v);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, vv->shape, sizeof shape);
  int rank = vv->rank;
  char base[512], name[600];
  snprintf(base, sizeof base, "%s", vv->name ? vv->name : "t");
  snprintf(name, sizeof name, "%s.q", base);
  int t = cs_graph_add_value(g, name, CS_DTYPE_I8, rank, shape);
  snprintf(name, sizeof name, "%s.dq", base);
  int f = t < 0 ? -1 : cs_graph_add_value(g, name, CS_DTYPE_F32, rank, shape);
  if (f < 0) return CS_ERR_NOMEM; /* message recorded */
  if (cs_value_set_quant(cs_graph_value(g, t), -1, 1, p->scale, p->zps) != CS_OK)
    return cs_error(CS_ERR_NOMEM, "out of memory (a quantization of '%s')", base);
  int q_in[3] = {v, scale_v, zp_v}, dq_in[3] = {t, scale_v, zp_v};
  snprintf(name, sizeof name, "%s.quantize", base);
  if (cs_graph_add_node(g, CS_OP_QUANTIZE_LINEAR, name, origin, zp_v >= 0 ? 3 : 2, q_in, 1, &t) < 0)
    return CS_ERR_NOMEM;
  snprintf(name, sizeof name, "%s.dequantize", base);
  if (cs_graph_add_node(g, CS_OP_DEQUANTIZE_LINEAR, name, origin, zp_v >= 0 ? 3 : 2, dq_in, 1, &f) < 0)
    return CS_ERR_NOMEM;
  *q_out = t;
  *dq_out = f;
  return CS_OK;
}

int cs_add_kernel(cs_graph *g, cs_op op, const char *origin, int n_inputs,
                  const int *inputs, int out) {
  const char *oname = cs_graph_value(g, out)->name;
  char name[256];
  snprintf(name, sizeof name, "%s:%s", cs_op_name(op), oname ? oname : "");
  return cs_graph_add_node(g, op, name, origin, n_inputs, inputs, 1, &out);
}

int cs_add_slice(cs_graph *g, const char *origin, int in, int out, const int64_t *start, const int64_t *step) {
  const cs_value *iv = cs_graph_value(g, in), *ov = cs_graph_value(g, out);
  tidsp_slice_params sp;
  memset(&sp, 0, sizeof sp);
  sp.rank = iv->rank;
  sp.elem_size = (int32_t)cs_dtype_size(iv->dtype);
  for (int d = 0; d < iv->rank; d++) {
    sp.in_shape[d] = (int32_t)iv->shape[d];
    sp.out_shape[d] = (int32_t)ov->shape[d];
    sp.start[d] = start ? (int32_t)start[d] : 0;
    sp.step[d] = step ? (int32_t)step[d] : 1;
  }
  int k = cs_add_kernel(g, CS_OP_K_SLICE, origin, 1, &in, out);
  if (k >= 0) cs_graph_node(g, k)->k.slice = sp;
  return k;
}

int cs_add_concat_steps(cs_graph *g, const char *origin, int n, const int *ins, int out, int64_t outer) {
  int64_t *lens = malloc(sizeof *lens * (size_t)(n > 0 ? n : 1));
  if (!lens) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  for (int j = 0; j < n; j++) lens[j] = 1;
  int k = cs_add_kernel(g, CS_OP_K_CONCAT, origin, n, ins, out);
  if (k >= 0 && cs_node_set_attr_ints(cs_graph_node(g, k), "axis_len", n, lens) != CS_OK) k = -1;
  free(lens);
  if (k < 0) return -1;
  tidsp_concat_params cc;
  memset(&cc, 0, sizeof cc);
  cc.n_inputs = n;
  cc.outer = (int32_t)outer;
  cc.inner_bytes = (int32_t)(cs_value_nbytes(cs_graph_value(g, out)) / (size_t)(outer * n));
  cs_graph_node(g, k)->k.concat = cc;
  return k;
}

