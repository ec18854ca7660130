/*
 * value.c — value sizes, quantization parameters, reading constants.
 */
#include "cstatic/float16.h"
#include "ir.h"

#include <stdlib.h>
#include <string.h>

int64_t cs_value_numel(const cs_value *v) {
  int64_t n = 1;
  for (int i = 0; i < v->rank; i++) n *= v->shape[i];
  return n;
}

size_t cs_value_nbytes(const cs_value *v) {
  return (size_t)cs_value_numel(v) * cs_dtype_size(v->dtype);
}

cs_status cs_value_set_quant(cs_value *v, int axis, int count, const float *scale,
                             const int32_t *zero_point) {
  if (axis < 0) {
    axis = -1;
    count = 1;
  }
  if (count < 1) count = 1;
  cs_quant *q = calloc(1, sizeof *q);
  float *s = calloc((size_t)count, sizeof(float));
  int32_t *z = calloc((size_t)count, sizeof(int32_t));
  if (!q || !s || !z) {
    free(q);
    free(s);
    free(z);
    return cs_error(CS_ERR_NOMEM, "out of memory for the quantization of tensor '%s'", v->name);
  }
  if (v->quant) {
    free(v->quant->scale);
    free(v->quant->zero_point);
    free(v->quant);
  }
  q->axis = axis;
  q->count = count;
  q->scale = s;
  q->zero_point = z;
  memcpy(q->scale, scale, sizeof(float) * (size_t)count);
  if (zero_point)
    memcpy(q->zero_point, zero_point, sizeof(int32_t) * (size_t)count);
  v->quant = q;
  return CS_OK;
}

int64_t cs_const_get_int(const cs_value *v, int64_t i) {
  if (!v->data || i < 0 || i >= cs_value_numel(v)) return 0;
  switch (v->dtype) {
    case CS_DTYPE_F32: return (int64_t)((const float *)v->data)[i];
    case CS_DTYPE_I8: return ((const int8_t *)v->data)[i];
    case CS_DTYPE_U8: return ((const uint8_t *)v->data)[i];
    case CS_DTYPE_BOOL: return ((const uint8_t *)v->data)[i] != 0;
    case CS_DTYPE_I16: return ((const int16_t *)v->data)[i];
    case CS_DTYPE_U16: return ((const uint16_t *)v->data)[i];
    case CS_DTYPE_I32: return ((const int32_t *)v->data)[i];
    case CS_DTYPE_I64: return ((const int64_t *)v->data)[i];
    case CS_DTYPE_U32: return ((const uint32_t *)v->data)[i];
    case CS_DTYPE_U64: return ((const int64_t *)v->data)[i]; /* its bits */
    case CS_DTYPE_F16:
    case CS_DTYPE_BF16:
    case CS_DTYPE_F64: {
      double d = cs_const_get_float(v, i);
      return d == d && d > -9.2e18 && d < 9.2e18 ? (int64_t)d : 0;
    }
    case CS_DTYPE_UNDEF: break;
  }
  return 0;
}

double cs_const_get_float(const cs_value *v, int64_t i) {
  if (!v->data || i < 0 || i >= cs_value_numel(v)) return 0.0;
  switch (v->dtype) {
    case CS_DTYPE_F32: return ((const float *)v->data)[i];
    case CS_DTYPE_F64: return ((const double *)v->data)[i];
    case CS_DTYPE_F16: return tidsp_f16_to_f32(((const uint16_t *)v->data)[i]);
    case CS_DTYPE_BF16: return tidsp_bf16_to_f32(((const uint16_t *)v->data)[i]);
    case CS_DTYPE_U64: return (double)((const uint64_t *)v->data)[i];
    default: return (double)cs_const_get_int(v, i);
  }
}
