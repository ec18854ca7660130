/*
 * mmalib_i16_common.c — what the int16 MMALIB passes share (mmalib_common.h
 * "int16"): the int64 requant constants and the ReLU call after a kernel
 * that cannot clamp.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "mmalib_common.h"
#include "pattern.h"


cs_status cs_mm_add_requant_consts_i16(cs_graph *g, const char *base, int channels, const int64_t *bias,
                                       const uint8_t *scale, const uint8_t *shift, int *ids) {
  int64_t shape[1] = {channels};
  ids[0] = bias ? cs_add_const_named(g, base, "mm_bias", CS_DTYPE_I64, 1, shape, bias) : -1;
  if (bias && ids[0] < 0) return CS_ERR_NOMEM; /* message recorded */
  ids[1] = cs_add_const_named(g, base, "mm_scale", CS_DTYPE_U8, 1, shape, scale);
  ids[2] = ids[1] < 0 ? -1 : cs_add_const_named(g, base, "mm_shift", CS_DTYPE_U8, 1, shape, shift);
  return ids[2] < 0 ? CS_ERR_NOMEM : CS_OK;
}

int cs_mm_replace_chain_i16(cs_graph *g, const int *nodes, int n_nodes, const cs_qdq_tail *tail, int relu,
                            cs_op op, int n_inputs, const int *inputs) {
  const char *relu_name = tail->act >= 0 ? cs_graph_node(g, tail->act)->name : "relu";
  char origin[256];
  snprintf(origin, sizeof origin, "%s", relu_name ? relu_name : "relu");
  int out = cs_graph_node(g, tail->q)->outputs[0];
  int id = cs_replace_chain(g, nodes, n_nodes, tail, op, n_inputs, inputs);
  if (!relu || id < 0) return id;
  /* kernel → pre (new) → ReLU → out */
  const cs_value *ov = cs_graph_value(g, out);
  char name[512];
  snprintf(name, sizeof name, "%s.pre_relu", ov->name ? ov->name : "y");
  int pre = cs_reroute_output_as(g, id, 0, name, CS_DTYPE_I16);
  if (pre < 0 || cs_value_set_quant(cs_graph_value(g, pre), -1, 1, tail->out.scale, tail->out.zps) != CS_OK)
    return -1;
  c7x_residual_add_params p;
  memset(&p, 0, sizeof p);
  p.m_x = 1; /* y·1 + y·0, shift 0: y itself, then max(y, zp_out = 0) */
  int64_t pshape[1] = {(int64_t)sizeof p};
  int pv = cs_add_const_named(g, name, "relu_params", CS_DTYPE_U8, 1, pshape, &p);
  if (pv < 0) return -1;
  int rin[3] = {pre, pre, pv};
  int r = cs_add_kernel(g, CS_OP_K_C7X_RESIDUAL_ADD_I16, origin, 3, rin, out);
  int64_t args[2] = {cs_value_numel(cs_graph_value(g, out)), 1};
  return cs_mm_set_args(g, r, 2, args) == CS_OK ? id : -1;
}
