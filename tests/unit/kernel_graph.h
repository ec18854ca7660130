/*
 * kernel_graph.h — builders for graphs made directly of kernel ops (the IR
 * after the fusions), so a late pass can be tested on exactly the nodes it
 * rewrites, and a runner that compares a graph's outputs before and after a
 * pass byte for byte.
 */
#ifndef CSTATIC_KERNEL_GRAPH_H
#define CSTATIC_KERNEL_GRAPH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph_build.h"

/* Deterministic int8 filler (a small LCG, values over the whole range). */
static inline void kg_fill_i8(int8_t *d, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    d[i] = (int8_t)(seed >> 24);
  }
}

static inline int kg_const_i8(cs_graph *g, const char *name, int rank, const int64_t *shape, uint32_t seed) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  int8_t *d = malloc((size_t)(n ? n : 1));
  kg_fill_i8(d, n, seed);
  int v = cs_graph_add_const(g, name, CS_DTYPE_I8, rank, shape, d);
  free(d);
  return v;
}

/* Per-channel bias (int32) and FLOAT requant multipliers for `channels`. */
static inline void kg_bias_rq(cs_graph *g, const char *name, int channels, int *bias, int *rq) {
  int32_t *b = malloc(sizeof(int32_t) * (size_t)channels);
  float *m = malloc(sizeof(float) * (size_t)channels);
  for (int c = 0; c < channels; c++) {
    b[c] = (c * 977) % 3001 - 1500;
    m[c] = 0.0009f + 0.0001f * (float)(c % 5);
  }
  int64_t s[1] = {channels};
  char nm[256];
  snprintf(nm, sizeof nm, "%s.bias", name);
  *bias = cs_graph_add_const(g, nm, CS_DTYPE_I32, 1, s, b);
  snprintf(nm, sizeof nm, "%s.rq", name);
  *rq = cs_graph_add_const(g, nm, CS_DTYPE_F32, 1, s, m);
  free(b);
  free(m);
}

static inline tidsp_requant_params kg_rq(int32_t zp) {
  tidsp_requant_params rq = {TIDSP_REQUANT_FLOAT, 1, zp, -128, 127};
  return rq;
}

/* y = k_conv2d_i8(x, w, bias, rq), 3×3 (or k×k), stride 1, pad k/2. */
static inline int kg_conv(cs_graph *g, const char *name, int x, int w, int c_out, int k, int groups, int *node) {
  const cs_value *xv = cs_graph_value(g, x);
  tidsp_conv2d_params p;
  memset(&p, 0, sizeof p);
  p.n = (int32_t)xv->shape[0];
  p.c_in = (int32_t)xv->shape[1];
  p.h_in = (int32_t)xv->shape[2];
  p.w_in = (int32_t)xv->shape[3];
  p.c_out = c_out;
  p.h_out = p.h_in;
  p.w_out = p.w_in;
  p.k_h = p.k_w = k;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = k / 2;
  p.groups = groups;
  p.x_zp = 3;
  p.w_zp = 0;
  p.rq = kg_rq(-5);
  int bias, rq;
  kg_bias_rq(g, name, c_out, &bias, &rq);
  int64_t ys[4] = {p.n, c_out, p.h_out, p.w_out};
  int in[4] = {x, w, bias, rq};
  int id;
  int y = gb_node(g, CS_OP_K_CONV2D_I8, name, 4, in, CS_DTYPE_I8, 4, ys, &id);
  cs_graph_node(g, id)->k.conv = p;
  if (node) *node = id;
  return y;
}

/* y[m][n] = k_matmul_i8(x[m][k], w[n][k], bias, rq). */
static inline int kg_matmul(cs_graph *g, const char *name, int x, int w, int *node) {
  const cs_value *xv = cs_graph_value(g, x), *wv = cs_graph_value(g, w);
  tidsp_matmul_params p;
  memset(&p, 0, sizeof p);
  p.m = (int32_t)xv->shape[0];
  p.k = (int32_t)xv->shape[1];
  p.n = (int32_t)wv->shape[0];
  p.x_zp = -7;
  p.w_zp = 0;
  p.rq = kg_rq(2);
  int bias, rq;
  kg_bias_rq(g, name, p.n, &bias, &rq);
  int64_t ys[2] = {p.m, p.n};
  int in[4] = {x, w, bias, rq};
  int id;
  int y = gb_node(g, CS_OP_K_MATMUL_I8, name, 4, in, CS_DTYPE_I8, 2, ys, &id);
  cs_graph_node(g, id)->k.matmul = p;
  if (node) *node = id;
  return y;
}

/* Runs g on the given inputs and returns a malloc'd copy of output 0's
 * bytes (NULL if a kernel failed; *nbytes its size). */
static inline uint8_t *kg_run_output(cs_graph *g, const void *const *inputs, size_t *nbytes) {
  int32_t st;
  void **buf = gb_run(g, inputs, &st);
  int y = g->outputs[0];
  const cs_value *yv = cs_graph_value(g, y);
  *nbytes = cs_value_nbytes(yv);
  uint8_t *out = NULL;
  const void *src = yv->data ? yv->data : buf[y];
  if (st == 0 && src) {
    out = malloc(*nbytes ? *nbytes : 1);
    memcpy(out, src, *nbytes);
  }
  gb_free_run(g, buf);
  return out;
}

#endif
