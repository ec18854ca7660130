/*
 * eval_util.c — element access, broadcasting and the one result
 * allocation of the compile-time evaluators.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/float16.h"
#include "eval_internal.h"

cs_status cs_eval_alloc(const cs_node *n, const cs_value *v, void **out) {
  int64_t numel = cs_value_numel(v);
  size_t esz = cs_dtype_size(v->dtype);
  if (numel < 0 || (esz && (uint64_t)numel > CS_EVAL_MAX_BYTES / esz))
    return cs_error(CS_ERR_UNSUPPORTED,
                    "node '%s' (%s): its constant result '%s' would take %llu "
                    "bytes; compile-time evaluation is limited to %llu",
                    n->name, cs_op_name(n->op), v->name,
                    (unsigned long long)numel * (unsigned long long)esz,
                    (unsigned long long)CS_EVAL_MAX_BYTES);
  size_t bytes = (size_t)numel * esz;
  *out = calloc(1, bytes ? bytes : 1);
  if (!*out)
    return cs_error(CS_ERR_NOMEM, "node '%s' (%s): out of memory for %zu bytes",
                    n->name, cs_op_name(n->op), bytes);
  return CS_OK;
}

const cs_value *cs_eval_in(const cs_graph *g, const cs_node *n, int j) {
  return j < n->n_inputs && n->inputs[j] >= 0 ? cs_graph_value(g, n->inputs[j]) : NULL;
}

const cs_value *cs_eval_out(const cs_graph *g, const cs_node *n, int j) {
  return cs_graph_value(g, n->outputs[j]);
}

int cs_eval_is_float(cs_dtype t) {
  return t == CS_DTYPE_F32 || t == CS_DTYPE_F64 || t == CS_DTYPE_F16 || t == CS_DTYPE_BF16;
}

int64_t cs_eval_get_int(const void *p, cs_dtype t, int64_t i) {
  switch (t) {
    case CS_DTYPE_F32: {
      float f = ((const float *)p)[i];
      return isfinite(f) && fabsf(f) < 9.2e18f ? (int64_t)f : 0;
    }
    case CS_DTYPE_I8: return ((const int8_t *)p)[i];
    case CS_DTYPE_U8: return ((const uint8_t *)p)[i];
    case CS_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case CS_DTYPE_I16: return ((const int16_t *)p)[i];
    case CS_DTYPE_U16: return ((const uint16_t *)p)[i];
    case CS_DTYPE_I32: return ((const int32_t *)p)[i];
    case CS_DTYPE_I64: return ((const int64_t *)p)[i];
    case CS_DTYPE_U32: return ((const uint32_t *)p)[i];
    case CS_DTYPE_U64: return ((const int64_t *)p)[i]; /* its bits */
    case CS_DTYPE_F16:
    case CS_DTYPE_BF16:
    case CS_DTYPE_F64: {
      double d = cs_eval_get_float(p, t, i);
      return d == d && d > -9.2e18 && d < 9.2e18 ? (int64_t)d : 0;
    }
    case CS_DTYPE_UNDEF: break;
  }
  return 0;
}

double cs_eval_get_float(const void *p, cs_dtype t, int64_t i) {
  switch (t) {
    case CS_DTYPE_F32: return ((const float *)p)[i];
    case CS_DTYPE_F64: return ((const double *)p)[i];
    case CS_DTYPE_F16: return tidsp_f16_to_f32(((const uint16_t *)p)[i]);
    case CS_DTYPE_BF16: return tidsp_bf16_to_f32(((const uint16_t *)p)[i]);
    case CS_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    default: return (double)cs_eval_get_int(p, t, i);
  }
}

void cs_eval_set_int(void *p, cs_dtype t, int64_t i, int64_t v) {
  switch (t) {
    case CS_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case CS_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case CS_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case CS_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case CS_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case CS_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case CS_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case CS_DTYPE_I64: ((int64_t *)p)[i] = v; break;
    case CS_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case CS_DTYPE_U64: ((int64_t *)p)[i] = v; break;
    case CS_DTYPE_F16:
    case CS_DTYPE_BF16:
    case CS_DTYPE_F64: cs_eval_set_float(p, t, i, (double)(float)v); break;
    case CS_DTYPE_UNDEF: break;
  }
}

void cs_eval_set_float(void *p, cs_dtype t, int64_t i, double v) {
  switch (t) {
    case CS_DTYPE_F32: ((float *)p)[i] = (float)v; return;
    case CS_DTYPE_F64: ((double *)p)[i] = v; return;
    case CS_DTYPE_F16: ((uint16_t *)p)[i] = tidsp_f32_to_f16((float)v); return;
    case CS_DTYPE_BF16: ((uint16_t *)p)[i] = tidsp_f32_to_bf16((float)v); return;
    default: break;
  }
  /* Out-of-range and NaN conversions are undefined in C: saturate. */
  int64_t iv = isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
  cs_eval_set_int(p, t, i, iv);
}

void cs_eval_bcast_init(const cs_value *a, const cs_value *y, cs_eval_bcast *b) {
  memset(b, 0, sizeof *b);
  b->rank = y->rank;
  int off = y->rank - a->rank;
  int64_t s = 1;
  for (int d = y->rank - 1; d >= 0; d--) {
    b->shape[d] = y->shape[d];
    int ad = d - off;
    int64_t dim = ad >= 0 ? a->shape[ad] : 1;
    b->stride[d] = dim == 1 ? 0 : s;
    s *= dim;
  }
}

int64_t cs_eval_bcast_index(const cs_eval_bcast *b, int64_t i) {
  int64_t k = 0;
  for (int d = b->rank - 1; d >= 0; d--) {
    k += (i % b->shape[d]) * b->stride[d];
    i /= b->shape[d];
  }
  return k;
}
