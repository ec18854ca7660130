/*
 * LegalizeOps: QuantizeLinear and DequantizeLinear that no fusion took, as
 * k_quantize / k_dequantize calls (scale and zero point as constants).
 */
#include <string.h>

#include "legalize_internal.h"
#include "quant/quant.h"

static cs_status lower_qdq(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  cs_qparams qp;
  cs_status st = cs_qparams_read(g, n, &qp);
  if (st != CS_OK) return st;
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  tidsp_qdq_params p;
  memset(&p, 0, sizeof p);
  if (qp.axis < 0) {
    p.outer = (int32_t)cs_value_numel(x);
    p.channels = 1;
    p.inner = 1;
  } else {
    p.outer = (int32_t)cs_lower_prod(x->shape, 0, qp.axis);
    p.channels = (int32_t)x->shape[qp.axis];
    p.inner = (int32_t)cs_lower_prod(x->shape, qp.axis + 1, x->rank);
  }
  p.dtype = cs_dtype_to_tidsp(qp.dtype);
  if (!p.dtype || qp.dtype == CS_DTYPE_I64 || qp.dtype == CS_DTYPE_F32) {
    cs_qparams_free(&qp);
    return cs_lower_unsupported(n, "quantized dtype not supported");
  }
  char base[256];
  snprintf(base, sizeof base, "%s", n->name);
  int64_t shape[1] = {qp.count};
  int scale = cs_add_const_named(g, base, "scale", CS_DTYPE_F32, 1, shape, qp.scale);
  int zp = scale < 0 ? -1 : cs_add_const_named(g, base, "zero_point", CS_DTYPE_I32, 1, shape, qp.zps);
  cs_qparams_free(&qp);
  if (zp < 0) return CS_ERR_NOMEM; /* message recorded */
  n = cs_graph_node(g, id);
  int ins[3] = {scale, zp, n->inputs[0]};
  cs_op op = n->op == CS_OP_QUANTIZE_LINEAR ? CS_OP_K_QUANTIZE : CS_OP_K_DEQUANTIZE;
  return cs_lower_retarget(g, id, op, 3, ins, (cs_kparams){.qdq = p});
}

const cs_lowering cs_lowerings_quant[] = {
    {CS_OP_QUANTIZE_LINEAR, lower_qdq},
    {CS_OP_DEQUANTIZE_LINEAR, lower_qdq},
    {CS_OP_COUNT_, NULL},
};
