/*
 * LegalizeOps: BatchNormalization, LayerNormalization and Softmax in
 * float.
 */
#include "legalize_internal.h"

/* The same bytes as value a with shape [C, 1, …] (rank `rank`): a copy. */
static int as_channel_column(cs_graph *g, const char *origin, int a, int rank, const char *suffix) {
  int64_t shape[CS_MAX_RANK];
  shape[0] = cs_value_numel(cs_graph_value(g, a));
  for (int d = 1; d < rank; d++) shape[d] = 1;
  char name[600];
  snprintf(name, sizeof name, "%s.%s", origin, suffix);
  int out = cs_graph_add_value(g, name, CS_DTYPE_F32, rank, shape);
  size_t bytes = (size_t)shape[0] * sizeof(float);
  return cs_lower_add_kernel(g, CS_OP_K_COPY, origin, 1, &a, out, (cs_kparams){.copy_bytes = bytes});
}

/* BatchNormalization (inference) not folded into a convolution, as ONNX
 * Runtime's BatchNorm kernel computes it: per channel
 *   s = fl(fl(1 / fl(sqrt(fl(var + eps)))) · scale),  b = fl(B − fl(mean · s))
 * then y = fl(fl(x · s) + b). The per-channel part is kernel calls on the
 * parameters too: FoldConstant computes s and b at compile time with the
 * same kernels (the parameters may be DQ(int8) in a QDQ model, not yet
 * constants here), so the only calls left are a Mul and an Add. */
static cs_status lower_batch_norm(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  for (int j = 1; j < n->n_outputs; j++) {
    int c;
    if (n->outputs[j] >= 0 &&
        (cs_graph_consumers(g, n->outputs[j], &c, 1) > 0 || cs_graph_is_output(g, n->outputs[j])))
      return cs_lower_unsupported(n, "a training output (running or saved mean/variance) is used; only Y is supported");
  }
  if (!cs_lower_all_f32(g, n))
    return cs_lower_unsupported(n, "BatchNormalization on integers must sit between DequantizeLinear and QuantizeLinear");
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->name);
  int xin = n->inputs[0], scale = n->inputs[1], bias = n->inputs[2], mean = n->inputs[3], var = n->inputs[4];
  int y = n->outputs[0], rank = cs_graph_value(g, xin)->rank;
  float eps = cs_node_attr_float(n, "epsilon", 1e-5f);
  cs_graph_remove_node(g, id);
  int ve = cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_ADD, var, cs_lower_scalar_f32(g, origin, "epsilon", eps), -1);
  int inv_std = cs_lower_add_unary_f32(g, origin, TIDSP_UNARY_RECIPROCAL, cs_lower_add_unary_f32(g, origin, TIDSP_UNARY_SQRT, ve, "std"),
                          "inv_std");
  int s = cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_MUL, inv_std, scale, -1);
  int b = cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_SUB, bias, cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_MUL, mean, s, -1), -1);
  int t = cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_MUL, xin, as_channel_column(g, origin, s, rank - 1, "scale"), -1);
  cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_ADD, t, as_channel_column(g, origin, b, rank - 1, "shift"), y);
  return CS_OK;
}

/* LayerNormalization: Y is one kernel call over [outer][norm]. The
 * optional Mean and InvStdDev outputs (training statistics, shape
 * X.shape[:axis] + 1s), where read, are computed beside it:
 * mean = ReduceMean(x), InvStdDev = 1 / sqrt(ReduceMean((x − mean)²) + eps). */
static cs_status lower_layer_norm(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (!cs_lower_all_f32(g, n))
    return cs_lower_unsupported(n, "LayerNormalization on integers must sit between DequantizeLinear and QuantizeLinear");
  int stats[3] = {-1, -1, -1};
  for (int j = 1; j < n->n_outputs && j < 3; j++) {
    int c;
    if (n->outputs[j] >= 0 &&
        (cs_graph_consumers(g, n->outputs[j], &c, 1) > 0 || cs_graph_is_output(g, n->outputs[j])))
      stats[j] = n->outputs[j];
  }
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", -1);
  if (axis < 0) axis += x->rank;
  float eps = cs_node_attr_float(n, "epsilon", 1e-5f);
  tidsp_layer_norm_params p = {(int32_t)cs_lower_prod(x->shape, 0, (int)axis), (int32_t)cs_lower_prod(x->shape, (int)axis, x->rank),
                               eps, TIDSP_LN_PLAIN};
  /* ORT runs it as SkipLayerNormalization (FuseLayerNormF32): its order */
  if (cs_node_attr_int(n, "ort_skip", 0)) p.variant = TIDSP_LN_WELFORD;
  int ins[3] = {n->inputs[0], n->inputs[1], n->n_inputs > 2 ? n->inputs[2] : -1};
  char origin[512];
  snprintf(origin, sizeof origin, "%s", n->name);
  for (int j = 1; j < n->n_outputs; j++)
    if (n->outputs[j] >= 0 && cs_graph_value(g, n->outputs[j])->producer == id)
      cs_graph_value(g, n->outputs[j])->producer = -1;
  n->n_outputs = 1;
  cs_status st = cs_lower_retarget(g, id, CS_OP_K_LAYER_NORM_F32, 3, ins, (cs_kparams){.layer_norm = p});
  if (st != CS_OK || (stats[1] < 0 && stats[2] < 0)) return st;
  int xin = ins[0];
  int mean = cs_lower_add_reduce_mean(g, origin, xin, (int)axis, "mean");
  if (stats[1] >= 0) {
    /* The statistics' value takes the mean's bytes (same shape). */
    size_t bytes = cs_value_nbytes(cs_graph_value(g, stats[1]));
    if (cs_lower_add_kernel(g, CS_OP_K_COPY, origin, 1, &mean, stats[1], (cs_kparams){.copy_bytes = bytes}) < 0)
      return CS_ERR_NOMEM; /* message recorded */
  }
  if (stats[2] >= 0) {
    int d = cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_SUB, xin, mean, -1);
    int var = cs_lower_add_reduce_mean(g, origin, cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_MUL, d, d, -1), (int)axis, "var");
    int sd = cs_lower_add_unary_f32(g, origin, TIDSP_UNARY_SQRT,
                       cs_lower_add_binary_f32(g, origin, TIDSP_BINARY_ADD, var, cs_lower_scalar_f32(g, origin, "epsilon", eps), -1),
                       "std");
    int inv = cs_lower_add_unary_f32(g, origin, TIDSP_UNARY_RECIPROCAL, sd, "inv_std");
    size_t bytes = cs_value_nbytes(cs_graph_value(g, stats[2]));
    if (cs_lower_add_kernel(g, CS_OP_K_COPY, origin, 1, &inv, stats[2], (cs_kparams){.copy_bytes = bytes}) < 0)
      return CS_ERR_NOMEM; /* message recorded */
  }
  return CS_OK;
}

static cs_status lower_softmax(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  if (x->dtype != CS_DTYPE_F32) return cs_lower_unsupported(n, "Softmax on integers must sit between DQ and Q");
  int64_t axis = cs_node_attr_int(n, "axis", -1);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return cs_lower_unsupported(n, "axis out of range");
  tidsp_softmax_params p = {(int32_t)cs_lower_prod(x->shape, 0, (int)axis), (int32_t)x->shape[axis],
                            (int32_t)cs_lower_prod(x->shape, (int)axis + 1, x->rank)};
  int ins[1] = {n->inputs[0]};
  return cs_lower_retarget(g, id, CS_OP_K_SOFTMAX_F32, 1, ins, (cs_kparams){.softmax = p});
}

const cs_lowering cs_lowerings_norm[] = {
    {CS_OP_BATCH_NORMALIZATION, lower_batch_norm},
    {CS_OP_LAYER_NORMALIZATION, lower_layer_norm},
    {CS_OP_SOFTMAX, lower_softmax},
    {CS_OP_COUNT_, NULL},
};
