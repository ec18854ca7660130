#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pattern.h"
#include "qdq_tail.h"

static int clip_bound(cs_graph *g, const cs_node *n, int idx, const char *attr, float dflt, float *out) {
  if (n->n_inputs > idx && n->inputs[idx] >= 0) {
    const cs_value *v = cs_graph_value(g, n->inputs[idx]);
    if (!v->data || v->dtype != CS_DTYPE_F32 || cs_value_numel(v) != 1) return 0;
    *out = ((const float *)v->data)[0];
    return 1;
  }
  *out = cs_node_attr_float(n, attr, dflt);
  return 1;
}

int cs_match_qdq_tail_as(cs_graph *g, int v, int allow_act, cs_dtype dt, cs_qdq_tail *tail) {
  tail->act = -1;
  tail->q = -1;
  tail->lo = -INFINITY;
  tail->hi = INFINITY;
  int c = cs_match_single_consumer(g, v);
  if (c < 0) return 0;
  cs_node *n = cs_graph_node(g, c);
  if (allow_act && (n->op == CS_OP_RELU || n->op == CS_OP_CLIP)) {
    if (n->op == CS_OP_RELU) {
      tail->lo = 0.0f;
    } else if (!clip_bound(g, n, 1, "min", -INFINITY, &tail->lo) ||
               !clip_bound(g, n, 2, "max", INFINITY, &tail->hi)) {
      return 0;
    }
    tail->act = c;
    c = cs_match_single_consumer(g, n->outputs[0]);
    if (c < 0) return 0;
    n = cs_graph_node(g, c);
  }
  if (n->op != CS_OP_QUANTIZE_LINEAR) return 0;
  if (cs_graph_value(g, n->outputs[0])->dtype != dt) return 0;
  if (cs_qparams_read(g, n, &tail->out) != CS_OK) { cs_error_clear(); return 0; }
  if (!cs_qparams_per_tensor(&tail->out)) { cs_qparams_free(&tail->out); return 0; }
  tail->q = c;
  return 1;
}

int cs_match_qdq_tail(cs_graph *g, int v, int allow_act, cs_qdq_tail *tail) {
  return cs_match_qdq_tail_as(g, v, allow_act, CS_DTYPE_I8, tail);
}

int cs_match_dq_as(cs_graph *g, int v, cs_dtype dt, cs_qparams *qp) {
  int dq = cs_match_producer(g, v, CS_OP_DEQUANTIZE_LINEAR);
  if (dq < 0 || cs_graph_value(g, cs_graph_node(g, dq)->inputs[0])->dtype != dt) return -1;
  if (cs_qparams_read(g, cs_graph_node(g, dq), qp) != CS_OK) {
    cs_error_clear();
    return -1;
  }
  if (!cs_qparams_per_tensor(qp)) {
    cs_qparams_free(qp);
    return -1;
  }
  return dq;
}

int cs_match_weight_dq_as(cs_graph *g, int w, int axis, cs_dtype dt, cs_qparams *qp, int *wdq) {
  int dq = cs_match_producer(g, w, CS_OP_DEQUANTIZE_LINEAR);
  if (dq < 0) return 0;
  const cs_node *n = cs_graph_node(g, dq);
  const cs_value *wv = cs_graph_value(g, n->inputs[0]);
  if (!wv->data || wv->dtype != dt) return 0;
  if (cs_qparams_read(g, n, qp) != CS_OK) {
    cs_error_clear();
    return 0;
  }
  int ok = cs_qparams_per_tensor(qp) || qp->axis == axis;
  for (int c = 1; ok && c < qp->count; c++) ok = qp->zps[c] == qp->zps[0];
  if (!ok) {
    cs_qparams_free(qp);
    return 0;
  }
  *wdq = dq;
  return 1;
}

int cs_match_dq_params(cs_graph *g, int dq, cs_qparams *qp) {
  if (dq < 0) return 0;
  if (cs_qparams_read(g, cs_graph_node(g, dq), qp) != CS_OK) { cs_error_clear(); return 0; }
  if (!cs_qparams_per_tensor(qp) || qp->dtype != CS_DTYPE_I8) { cs_qparams_free(qp); return 0; }
  return 1;
}

int cs_match_qdq_around(cs_graph *g, int id, cs_qdq_around *m) {
  const cs_node *n = cs_graph_node(g, id);
  int xdq = cs_match_dq_i8(g, n->inputs[0]);
  if (!cs_match_dq_params(g, xdq, &m->xq)) return 0;
  if (!cs_match_qdq_tail(g, n->outputs[0], 0, &m->tail)) {
    cs_qparams_free(&m->xq);
    return 0;
  }
  m->x = cs_graph_node(g, xdq)->inputs[0];
  m->axis = cs_node_attr_int(n, "axis", -1);
  if (m->axis < 0) m->axis += cs_graph_value(g, m->x)->rank;
  return 1;
}

void cs_qdq_around_free(cs_qdq_around *m) {
  cs_qparams_free(&m->xq);
  cs_qparams_free(&m->tail.out);
}

int cs_replace_chain(cs_graph *g, const int *nodes, int n_nodes,
                     const cs_qdq_tail *tail, cs_op op, int n_inputs,
                     const int *inputs) {
  int all[8];
  int k = 0;
  for (int i = 0; i < n_nodes && k < 6; i++) all[k++] = nodes[i];
  all[k++] = tail->act;
  all[k++] = tail->q;
  char *origin = cs_origin_join(g, all, k);
  if (!origin) return -1; /* message recorded */
  int out = cs_graph_node(g, tail->q)->outputs[0];
  for (int i = 0; i < k; i++)
    if (all[i] >= 0) cs_graph_remove_node(g, all[i]);
  int id = cs_add_kernel(g, op, origin, n_inputs, inputs, out);
  free(origin);
  if (id >= 0 && cs_value_set_quant(cs_graph_value(g, out), -1, 1, tail->out.scale, tail->out.zps) != CS_OK)
    id = -1;
  return id;
}

int32_t cs_qdq_tail_domain_offset(cs_graph *g, const cs_qdq_tail *tail) {
  return cs_graph_value(g, cs_graph_node(g, tail->q)->outputs[0])->from_u8 ? 128 : 0;
}

int cs_match_max_pool_after(cs_graph *g, int v) {
  int pool = cs_match_single_consumer(g, v);
  if (pool < 0) return -1;
  const cs_node *n = cs_graph_node(g, pool);
  return n->op == CS_OP_MAX_POOL && n->n_outputs == 1 && n->inputs[0] == v ? pool : -1;
}

/* A new int8 value named <v's name>.<suffix>, v's shape, the tail Q's
 * parameters and uint8 domain; -1 when out of memory. */
static int codes_like(cs_graph *g, int v, const cs_qdq_tail *tail, const char *suffix) {
  const cs_value *vv = cs_graph_value(g, v);
  char name[512];
  snprintf(name, sizeof name, "%s.%s", vv->name ? vv->name : "t", suffix);
  int t = cs_graph_add_value(g, name, CS_DTYPE_I8, vv->rank, vv->shape);
  if (t < 0 || cs_value_set_quant(cs_graph_value(g, t), -1, 1, tail->out.scale, tail->out.zps) != CS_OK) return -1;
  cs_graph_value(g, t)->from_u8 = cs_graph_value(g, cs_graph_node(g, tail->q)->outputs[0])->from_u8;
  return t;
}

int cs_table_before_pool(cs_graph *g, int act, int pool, const cs_qdq_tail *tail, int int8_pool, cs_op op,
                         int n_inputs, const int *inputs) {
  const cs_node *q = cs_graph_node(g, tail->q);
  int q_scale = q->inputs[1], q_zp = q->n_inputs > 2 ? q->inputs[2] : -1;
  int v = cs_graph_node(g, act)->outputs[0], p = cs_graph_node(g, pool)->outputs[0];
  int t = codes_like(g, v, tail, "q"), p8 = int8_pool ? codes_like(g, p, tail, "q") : -2;
  char name[512], *origin = t >= 0 && p8 != -1 ? cs_origin_join(g, &act, 1) : NULL;
  if (!origin) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  cs_graph_remove_node(g, act);
  int k = cs_add_kernel(g, op, origin, n_inputs, inputs, t);
  if (k >= 0 && int8_pool) { /* the pool reads t, writes p8; the DQ writes what the Q read */
    cs_node_set_input(g, pool, 0, t);
    cs_graph_node(g, pool)->outputs[0] = p8;
    cs_graph_value(g, p8)->producer = pool;
    cs_graph_value(g, p)->producer = -1;
  }
  int dq_in[3] = {int8_pool ? p8 : t, q_scale, q_zp};
  snprintf(name, sizeof name, "%s.dq", origin);
  int dq = k >= 0 ? cs_graph_add_node(g, CS_OP_DEQUANTIZE_LINEAR, name, origin, q_zp >= 0 ? 3 : 2, dq_in, 1,
                                      int8_pool ? &p : &v)
                  : -1;
  free(origin);
  if (dq < 0) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  return k;
}
