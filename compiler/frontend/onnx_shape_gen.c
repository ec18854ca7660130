/*
 * onnx_shape_gen.c — shape inference of the ops that make tensors from
 * shapes and values: Shape, Size, ConstantOfShape, Range, Tile, ScatterND,
 * GatherND.
 * None has a runtime kernel: they appear in constant subgraphs (a shifted-
 * window mask, a Paddle model's shape arithmetic) and fold at compile time
 * (eval/). An input that decides a shape must be a constant here.
 */
#include "onnx_internal.h"

#include <math.h>
#include <string.h>

/* Shape (start/end since opset 15: a slice of the dims, clamped). */
cs_status cs_onnx_infer_shape(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t r = x->rank, start = cs_node_attr_int(n, "start", 0);
  int64_t end = cs_node_attr_int(n, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  int64_t len = end > start ? end - start : 0;
  /* One explicit form for the evaluator. */
  cs_node_set_attr_int(n, "start", start);
  cs_node_set_attr_int(n, "end", end);
  return cs_onnx_set_out(c, n, 0, CS_DTYPE_I64, 1, &len);
}

cs_status cs_onnx_infer_size(cs_onnx_infer *c, cs_node *n) {
  return cs_onnx_set_out(c, n, 0, CS_DTYPE_I64, 0, NULL);
}

/* ConstantOfShape(shape) with the value attribute as input 1 (onnx.c
 * turns the TENSOR attribute into a constant input): that value's dtype,
 * default float32 0. */
cs_status cs_onnx_infer_constant_of_shape(cs_onnx_infer *c, cs_node *n) {
  int64_t shape[CS_MAX_RANK];
  int rank;
  cs_status st = cs_onnx_const_ints(c, n, 0, "shape", shape, CS_MAX_RANK, &rank);
  if (st != CS_OK) return st;
  cs_dtype dt = CS_DTYPE_F32;
  const cs_value *v = cs_onnx_in(c, n, 1);
  if (v) {
    if (cs_value_numel(v) != 1)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "value '%s' %s must hold one element", v->name,
                              cs_onnx_shape_str(v->rank, v->shape));
    dt = v->dtype;
  }
  for (int i = 0; i < rank; i++)
    if (shape[i] < 0)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "shape %s has a negative dim",
                              cs_onnx_shape_str(rank, shape));
  return cs_onnx_set_out(c, n, 0, dt, rank, shape);
}

/* Range(start, limit, delta): scalars of one dtype; the length is
 * max(ceil((limit − start) / delta), 0), in double for floats as ONNX
 * Runtime computes it. */
cs_status cs_onnx_infer_range(cs_onnx_infer *c, cs_node *n) {
  static const char *const what[] = {"start", "limit", "delta"};
  const cs_value *v[3];
  for (int j = 0; j < 3; j++) {
    v[j] = cs_onnx_in(c, n, j);
    if (v[j]->dtype != v[0]->dtype || cs_value_numel(v[j]) != 1 || v[j]->rank > 1)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "%s '%s' must be a scalar of the start's dtype %s",
                              what[j], v[j]->name, cs_dtype_name(v[0]->dtype));
    if (!v[j]->data)
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "%s '%s' must be a constant (the output's length "
                              "depends on it)",
                              what[j], v[j]->name);
  }
  double len;
  if (v[0]->dtype == CS_DTYPE_F32) {
    double s = cs_const_get_float(v[0], 0), l = cs_const_get_float(v[1], 0);
    double d = cs_const_get_float(v[2], 0);
    if (d == 0.0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "start %g, limit %g, delta %g do not make a range",
                              s, l, d);
    len = ceil((l - s) / d);
  } else {
    int64_t s = cs_const_get_int(v[0], 0), l = cs_const_get_int(v[1], 0);
    int64_t d = cs_const_get_int(v[2], 0);
    if (d == 0)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "delta is 0");
    len = ceil(((double)l - (double)s) / (double)d);
  }
  if (!(len >= 0)) len = 0;
  if (len > CS_ONNX_MAX_NUMEL)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "the range has more than %d elements",
                            CS_ONNX_MAX_NUMEL);
  int64_t out = (int64_t)len;
  return cs_onnx_set_out(c, n, 0, v[0]->dtype, 1, &out);
}

/* Tile(input, repeats: constant int64 [rank]). */
cs_status cs_onnx_infer_tile(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t rep[CS_MAX_RANK];
  int cnt;
  cs_status st = cs_onnx_const_ints(c, n, 1, "repeats", rep, CS_MAX_RANK, &cnt);
  if (st != CS_OK) return st;
  if (cnt != x->rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "repeats has %d entries but the input has rank %d",
                            cnt, x->rank);
  int64_t out[CS_MAX_RANK];
  for (int i = 0; i < cnt; i++) {
    if (rep[i] < 0 || rep[i] > CS_ONNX_MAX_NUMEL)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "repeats[%d] = %lld", i,
                              (long long)rep[i]);
    out[i] = x->shape[i] * rep[i];
  }
  return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, out);
}

/* ScatterND(data, indices: int64 [..., k], updates): data's shape;
 * updates must be indices.shape[:-1] + data.shape[k:]. */
cs_status cs_onnx_infer_scatter_nd(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0), *idx = cs_onnx_in(c, n, 1);
  const cs_value *upd = cs_onnx_in(c, n, 2);
  const char *red = cs_node_attr_string(n, "reduction", "none");
  if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") &&
      strcmp(red, "max") && strcmp(red, "min"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "reduction \"%s\" is not none, add, mul, max or min",
                            red);
  if (idx->dtype != CS_DTYPE_I64 || idx->rank < 1)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "indices '%s' must be int64 of rank >= 1, not %s%s",
                            idx->name, cs_dtype_name(idx->dtype),
                            cs_onnx_shape_str(idx->rank, idx->shape));
  int64_t k = idx->shape[idx->rank - 1];
  int ok = upd->dtype == x->dtype && k >= 1 && k <= x->rank &&
           upd->rank == idx->rank - 1 + x->rank - (int)k;
  for (int i = 0; ok && i < idx->rank - 1; i++) ok = upd->shape[i] == idx->shape[i];
  for (int i = 0; ok && i < x->rank - (int)k; i++)
    ok = upd->shape[idx->rank - 1 + i] == x->shape[k + i];
  if (!ok)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "updates '%s' %s%s do not fit data '%s' %s%s and "
                            "indices '%s' %s",
                            upd->name, cs_dtype_name(upd->dtype),
                            cs_onnx_shape_str(upd->rank, upd->shape), x->name,
                            cs_dtype_name(x->dtype),
                            cs_onnx_shape_str(x->rank, x->shape), idx->name,
                            cs_onnx_shape_str(idx->rank, idx->shape));
  return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, x->shape);
}

/* GatherND(data, indices: int64 [B..., M..., k]), batch_dims b: the first b
 * dims of both equal; k in [1, rank(data) − b]; the result is
 * indices.shape[:-1] + data.shape[b + k:]. */
cs_status cs_onnx_infer_gather_nd(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0), *idx = cs_onnx_in(c, n, 1);
  int64_t b = cs_node_attr_int(n, "batch_dims", 0);
  if (c->opset < 12 && cs_node_attr(n, "batch_dims"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "batch_dims is an attribute since opset 12 (model opset %d)", c->opset);
  if (idx->dtype != CS_DTYPE_I64 || idx->rank < 1)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "indices '%s' must be int64 of rank >= 1, not %s%s",
                            idx->name, cs_dtype_name(idx->dtype),
                            cs_onnx_shape_str(idx->rank, idx->shape));
  if (b < 0 || b >= idx->rank || b >= x->rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "batch_dims %lld must be >= 0 and below the ranks of "
                            "data '%s' (%d) and indices '%s' (%d)",
                            (long long)b, x->name, x->rank, idx->name, idx->rank);
  int64_t k = idx->shape[idx->rank - 1];
  int ok = k >= 1 && k <= x->rank - b;
  for (int i = 0; ok && i < b; i++) ok = idx->shape[i] == x->shape[i];
  if (!ok)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "indices '%s' %s do not fit data '%s' %s with "
                            "batch_dims %lld (the last dim must be 1 to %lld, the "
                            "batch dims equal)",
                            idx->name, cs_onnx_shape_str(idx->rank, idx->shape),
                            x->name, cs_onnx_shape_str(x->rank, x->shape),
                            (long long)b, (long long)(x->rank - b));
  int rank = idx->rank - 1 + x->rank - (int)(b + k);
  if (rank > CS_MAX_RANK)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "result rank %d exceeds %d",
                            rank, CS_MAX_RANK);
  int64_t out[CS_MAX_RANK];
  int r = 0;
  for (int i = 0; i < idx->rank - 1; i++) out[r++] = idx->shape[i];
  for (int i = (int)(b + k); i < x->rank; i++) out[r++] = x->shape[i];
  return cs_onnx_set_out(c, n, 0, x->dtype, r, out);
}
