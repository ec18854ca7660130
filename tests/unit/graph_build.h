/*
 * graph_build.h — terse builders for hand-made IR graphs in pass tests, and
 * a tiny interpreter that runs a lowered graph with the reference kernels.
 */
#ifndef CSTATIC_GRAPH_BUILD_H
#define CSTATIC_GRAPH_BUILD_H

#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "eval/kernel_exec.h"

static inline int gb_value(cs_graph *g, const char *name, cs_dtype t, int rank, const int64_t *shape) {
  return cs_graph_add_value(g, name, t, rank, shape);
}

static inline int gb_scalar_f32(cs_graph *g, const char *name, float v) {
  return cs_graph_add_const(g, name, CS_DTYPE_F32, 0, NULL, &v);
}

static inline int gb_scalar_i8(cs_graph *g, const char *name, int8_t v) {
  return cs_graph_add_const(g, name, CS_DTYPE_I8, 0, NULL, &v);
}

/* y = op(inputs) with one output of the given type. */
static inline int gb_node(cs_graph *g, cs_op op, const char *name, int n_in, const int *in, cs_dtype t, int rank,
                   const int64_t *shape, int *node_out) {
  char vname[256];
  snprintf(vname, sizeof vname, "%s_out", name);
  int y = cs_graph_add_value(g, vname, t, rank, shape);
  int id = cs_graph_add_node(g, op, name, name, n_in, in, 1, &y);
  if (node_out) *node_out = id;
  return y;
}

/* Gather(x, index) along axis 0 (a constant int64 scalar index): x's
 * slice, of rank x's − 1 and shape `shape`. */
static inline int gb_gather0(cs_graph *g, const char *name, int x, int64_t index, int rank, const int64_t *shape) {
  char iname[256];
  snprintf(iname, sizeof iname, "%s.index", name);
  int in[2] = {x, cs_graph_add_const(g, iname, CS_DTYPE_I64, 0, NULL, &index)}, id;
  int y = gb_node(g, CS_OP_GATHER, name, 2, in, cs_graph_value(g, x)->dtype, rank, shape, &id);
  cs_node_set_attr_int(cs_graph_node(g, id), "axis", 0);
  return y;
}

static inline int gb_dq(cs_graph *g, const char *name, int x, int scale, int zp) {
  const cs_value *v = cs_graph_value(g, x);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, v->shape, sizeof shape);
  int in[3] = {x, scale, zp};
  return gb_node(g, CS_OP_DEQUANTIZE_LINEAR, name, zp >= 0 ? 3 : 2, in, CS_DTYPE_F32, v->rank, shape, NULL);
}

static inline int gb_q(cs_graph *g, const char *name, int x, int scale, int zp) {
  const cs_value *v = cs_graph_value(g, x);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, v->shape, sizeof shape);
  int in[3] = {x, scale, zp};
  return gb_node(g, CS_OP_QUANTIZE_LINEAR, name, 3, in, cs_graph_value(g, zp)->dtype, v->rank, shape, NULL);
}

static inline void gb_set_io(cs_graph *g, int n_in, const int *in, int n_out, const int *out) {
  g->inputs = malloc(sizeof(int) * (size_t)n_in);
  memcpy(g->inputs, in, sizeof(int) * (size_t)n_in);
  g->n_inputs = n_in;
  g->outputs = malloc(sizeof(int) * (size_t)n_out);
  memcpy(g->outputs, out, sizeof(int) * (size_t)n_out);
  g->n_outputs = n_out;
}

static inline int gb_count_op(const cs_graph *g, cs_op op) {
  int c = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].op == op) c++;
  return c;
}

static inline int gb_find_op(const cs_graph *g, cs_op op) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].op == op) return i;
  return -1;
}

/* Run a lowered graph: inputs[i] feed g->inputs[i]; returns malloc'd
 * buffers per value (caller frees with gb_free_run). */
static inline void **gb_run(cs_graph *g, const void *const *inputs, int32_t *status) {
  void **buf = calloc((size_t)g->n_values, sizeof(void *));
  for (int i = 0; i < g->n_inputs; i++) buf[g->inputs[i]] = (void *)inputs[i];
  int *order = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
  int cnt = cs_graph_topo_order(g, order);
  *status = 0;
  for (int k = 0; k < cnt && !*status; k++) {
    const cs_node *n = &g->nodes[order[k]];
    if (n->dead) continue;
    const void *in[16] = {0};
    void *out[8] = {0};
    for (int i = 0; i < n->n_inputs; i++) {
      int v = n->inputs[i];
      in[i] = v < 0 ? NULL : (cs_graph_value(g, v)->data ? cs_graph_value(g, v)->data : buf[v]);
    }
    for (int o = 0; o < n->n_outputs; o++) {
      size_t b = cs_value_nbytes(cs_graph_value(g, n->outputs[o]));
      buf[n->outputs[o]] = calloc(1, b ? b : 1);
      out[o] = buf[n->outputs[o]];
    }
    *status = cs_kernel_exec(g, n, in, out);
  }
  free(order);
  return buf;
}

static inline void gb_free_run(cs_graph *g, void **buf) {
  for (int v = 0; v < g->n_values; v++) {
    int is_in = 0;
    for (int i = 0; i < g->n_inputs; i++) is_in |= g->inputs[i] == v;
    if (!is_in) free(buf[v]);
  }
  free(buf);
}

/* gb_run, keeping only a malloc'd copy of output 0's bytes (*n of them;
 * zeros when the run failed: *status nonzero), the form of the tests that
 * compare one output of two lowerings. */
static inline void *gb_run_output(cs_graph *g, const void *const *inputs, int32_t *status, size_t *n) {
  void **buf = gb_run(g, inputs, status);
  *n = cs_value_nbytes(cs_graph_value(g, g->outputs[0]));
  void *y = calloc(1, *n ? *n : 1);
  if (y && *status == 0) memcpy(y, buf[g->outputs[0]], *n);
  gb_free_run(g, buf);
  return y;
}

#endif
