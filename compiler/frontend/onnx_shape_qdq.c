/*
 * onnx_shape_qdq.c — QuantizeLinear / DequantizeLinear.
 *
 * Shapes pass through; the integer side's dtype is the zero point's (or
 * opset 21's output_dtype, default uint8). A scale with one element is
 * per-tensor; a 1-D scale of length shape[axis] is per-axis. When scale
 * and zero point are constants, the integer tensor (Q's output, DQ's
 * input) gets them as its cs_quant, so later stages can read a tensor's
 * quantization without walking back to the QDQ node.
 */
#include "onnx_internal.h"

#include <math.h>
#include <stdlib.h>

typedef struct qparams {
  int axis;  /* -1: per-tensor */
  int count;
} qparams;

static cs_status check_params(cs_onnx_infer *c, cs_node *n, const cs_value *x,
                              const cs_value *scale, const cs_value *zp,
                              qparams *q) {
  if (cs_node_attr_int(n, "block_size", 0) != 0)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "blocked quantization (block_size = %lld) is not "
                            "supported",
                            (long long)cs_node_attr_int(n, "block_size", 0));
  if (scale->dtype != CS_DTYPE_F32)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "scale '%s' is %s; only f32 scales are supported",
                            scale->name, cs_dtype_name(scale->dtype));
  int64_t count = cs_value_numel(scale);
  if (count == 1 && scale->rank <= 1) {
    q->axis = -1;
    q->count = 1;
  } else {
    int axis;
    cs_status st = cs_onnx_axis(c, n, cs_node_attr_int(n, "axis", 1), x->rank,
                                "axis", &axis);
    if (st != CS_OK) return st;
    if (scale->rank != 1 || scale->shape[0] != x->shape[axis])
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "scale '%s' %s must be a scalar or 1-D of length "
                              "%lld (axis %d of '%s' %s)",
                              scale->name,
                              cs_onnx_shape_str(scale->rank, scale->shape),
                              (long long)x->shape[axis], axis, x->name,
                              cs_onnx_shape_str(x->rank, x->shape));
    q->axis = axis;
    q->count = (int)count;
  }
  /* Per-tensor: any one-element shapes (ORT writes scale [1] with a scalar
   * zero point); per-axis: both 1-D of the same length. */
  if (zp && (cs_value_numel(zp) != count || zp->rank > 1 ||
             (q->axis >= 0 && zp->rank != 1)))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "zero point '%s' %s must have the shape of scale "
                            "'%s' %s",
                            zp->name, cs_onnx_shape_str(zp->rank, zp->shape),
                            scale->name,
                            cs_onnx_shape_str(scale->rank, scale->shape));
  if (scale->data) {
    for (int i = 0; i < q->count; i++) {
      float s = ((const float *)scale->data)[i];
      if (!(s > 0.0f) || !isfinite(s))
        return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                                "scale '%s'[%d] = %g; a scale must be positive "
                                "and finite",
                                scale->name, i, (double)s);
    }
  }
  return CS_OK;
}

/* Record scale/zero point on the integer tensor when both are known
 * (codegen describes graph I/O with it: losing it would change the output,
 * so running out of memory here fails the load). */
static cs_status attach_quant(cs_onnx_infer *c, int value_id, const cs_value *scale,
                              const cs_value *zp, const qparams *q) {
  cs_value *v = cs_graph_value(c->g, value_id);
  if (v->quant || !scale->data || (zp && !zp->data)) return CS_OK;
  int32_t *z = calloc((size_t)q->count, sizeof(int32_t));
  if (!z) return cs_error(CS_ERR_NOMEM, "out of memory for the quantization of '%s'", v->name);
  for (int i = 0; zp && i < q->count; i++) z[i] = (int32_t)cs_const_get_int(zp, i);
  cs_status st = cs_value_set_quant(v, q->axis, q->count, scale->data, z);
  free(z);
  return st;
}

static int is_q_dtype(cs_dtype t) {
  return t == CS_DTYPE_I8 || t == CS_DTYPE_U8 || t == CS_DTYPE_I16 ||
         t == CS_DTYPE_U16;
}

cs_status cs_onnx_infer_quantize(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0), *scale = cs_onnx_in(c, n, 1);
  const cs_value *zp = cs_onnx_in(c, n, 2);
  cs_dtype out = CS_DTYPE_U8;
  if (zp) {
    if (!is_q_dtype(zp->dtype))
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "zero point '%s' is %s; supported: i8, u8, i16, "
                              "u16",
                              zp->name, cs_dtype_name(zp->dtype));
    out = zp->dtype;
  }
  /* opset 23: the precision of the division; float32 (or unset) only. */
  int64_t prec = cs_node_attr_int(n, "precision", 0);
  if (prec != 0 && cs_onnx_dtype((int32_t)prec) != CS_DTYPE_F32)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "precision %s is not supported (float32 is)",
                            cs_onnx_dtype_name((int32_t)prec));
  int64_t od = cs_node_attr_int(n, "output_dtype", 0);
  if (od != 0) {
    cs_dtype t = od > 0 && od < 64 ? cs_onnx_dtype((int32_t)od) : CS_DTYPE_UNDEF;
    if (!is_q_dtype(t))
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "output_dtype %s is not supported (i8, u8, i16, "
                              "u16 are)",
                              cs_onnx_dtype_name((int32_t)od));
    if (zp && t != zp->dtype)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "output_dtype %s differs from the zero point "
                              "'%s' dtype %s",
                              cs_dtype_name(t), zp->name,
                              cs_dtype_name(zp->dtype));
    out = t;
  }
  qparams q;
  cs_status st = check_params(c, n, x, scale, zp, &q);
  if (st == CS_OK) st = cs_onnx_set_out(c, n, 0, out, x->rank, x->shape);
  if (st == CS_OK) st = attach_quant(c, n->outputs[0], scale, zp, &q);
  return st;
}

cs_status cs_onnx_infer_dequantize(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0), *scale = cs_onnx_in(c, n, 1);
  const cs_value *zp = cs_onnx_in(c, n, 2);
  if (zp && zp->dtype != x->dtype)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "zero point '%s' is %s but the input '%s' is %s",
                            zp->name, cs_dtype_name(zp->dtype), x->name,
                            cs_dtype_name(x->dtype));
  /* opset 23: the output's dtype, float32 unless it says otherwise. */
  int64_t od = cs_node_attr_int(n, "output_dtype", 0);
  if (od != 0 && cs_onnx_dtype((int32_t)od) != CS_DTYPE_F32)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "output_dtype %s is not supported (float32 is)",
                            cs_onnx_dtype_name((int32_t)od));
  qparams q;
  cs_status st = check_params(c, n, x, scale, zp, &q);
  if (st != CS_OK) return st;
  if (x->dtype == CS_DTYPE_I32 && zp && zp->data)
    for (int i = 0; i < q.count; i++)
      if (cs_const_get_int(zp, i) != 0)
        return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                                "an int32 input needs zero point 0, but '%s'"
                                "[%d] = %lld",
                                zp->name, i,
                                (long long)cs_const_get_int(zp, i));
  st = cs_onnx_set_out(c, n, 0, CS_DTYPE_F32, x->rank, x->shape);
  if (st == CS_OK) st = attach_quant(c, n->inputs[0], scale, zp, &q);
  return st;
}
