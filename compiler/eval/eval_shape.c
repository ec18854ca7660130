/*
 * eval_shape.c — tensors made from shapes and values, at compile time (no
 * runtime kernel): Shape, Size, ConstantOfShape, Range, Tile. The frontend
 * has checked their attributes and inputs (onnx_shape_gen.c).
 */
#include <string.h>

#include "eval_internal.h"

static int always(const cs_graph *g, const cs_node *n) {
  (void)g;
  (void)n;
  return 1;
}

/* Shape: the dims [start, end) of the input's static shape. */
static cs_status run_shape(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *x = cs_eval_in(g, n, 0);
  int64_t start = cs_node_attr_int(n, "start", 0);
  int64_t count = cs_value_numel(cs_eval_out(g, n, 0));
  for (int64_t i = 0; i < count; i++) ((int64_t *)out[0])[i] = x->shape[start + i];
  return CS_OK;
}

static cs_status run_size(const cs_graph *g, const cs_node *n, void *const *out) {
  *(int64_t *)out[0] = cs_value_numel(cs_eval_in(g, n, 0));
  return CS_OK;
}

static cs_status run_constant_of_shape(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *v = cs_eval_in(g, n, 1), *y = cs_eval_out(g, n, 0);
  if (!v) return CS_OK; /* float 0: the buffer is zeroed */
  size_t esz = cs_dtype_size(y->dtype);
  int64_t count = cs_value_numel(y);
  for (int64_t i = 0; i < count; i++) memcpy((char *)out[0] + (size_t)i * esz, v->data, esz);
  return CS_OK;
}

/* Range: ONNX Runtime's loop, value = start, then value += delta per
 * element, in the output's dtype (floats accumulate rounding, as ORT's). */
static cs_status run_range(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *s = cs_eval_in(g, n, 0), *d = cs_eval_in(g, n, 2);
  const cs_value *y = cs_eval_out(g, n, 0);
  int64_t count = cs_value_numel(y);
  if (y->dtype == CS_DTYPE_F32) {
    float v = *(const float *)s->data, step = *(const float *)d->data;
    for (int64_t i = 0; i < count; i++, v += step) ((float *)out[0])[i] = v;
  } else {
    int64_t v = cs_eval_get_int(s->data, s->dtype, 0), step = cs_eval_get_int(d->data, d->dtype, 0);
    for (int64_t i = 0; i < count; i++, v = (int64_t)((uint64_t)v + (uint64_t)step))
      cs_eval_set_int(out[0], y->dtype, i, v);
  }
  return CS_OK;
}

/* Tile: out[i] = in[i mod in.shape], dimension by dimension. */
static cs_status run_tile(const cs_graph *g, const cs_node *n, void *const *out) {
  const cs_value *x = cs_eval_in(g, n, 0), *y = cs_eval_out(g, n, 0);
  size_t esz = cs_dtype_size(y->dtype);
  int64_t count = cs_value_numel(y);
  for (int64_t i = 0; i < count; i++) {
    int64_t rem = i, src = 0, stride = 1;
    for (int d = y->rank - 1; d >= 0; d--) {
      int64_t o = rem % y->shape[d];
      rem /= y->shape[d];
      src += (o % x->shape[d]) * stride;
      stride *= x->shape[d];
    }
    memcpy((char *)out[0] + (size_t)i * esz, (const char *)x->data + (size_t)src * esz, esz);
  }
  return CS_OK;
}

const cs_evaluator cs_eval_shape[] = {
    {CS_OP_SHAPE, always, run_shape},
    {CS_OP_SIZE, always, run_size},
    {CS_OP_CONSTANT_OF_SHAPE, always, run_constant_of_shape},
    {CS_OP_RANGE, always, run_range},
    {CS_OP_TILE, always, run_tile},
    {CS_OP_COUNT_, NULL, NULL},
};
