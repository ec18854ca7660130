/*
 * qdq_internal.h — dtype ranges of the quantize/dequantize kernels.
 */
#ifndef TIDSP_REF_QDQ_INTERNAL_H
#define TIDSP_REF_QDQ_INTERNAL_H

#include "ref_internal.h"

/* Range of an integer dtype; 0 when dtype is not one QDQ supports. */
static inline int32_t tidsp_ref_qdq_range(int32_t dtype, int64_t *qmin,
                                          int64_t *qmax) {
  switch (dtype) {
  case TIDSP_DTYPE_I8:
    *qmin = INT8_MIN;
    *qmax = INT8_MAX;
    return 1;
  case TIDSP_DTYPE_U8:
    *qmin = 0;
    *qmax = UINT8_MAX;
    return 1;
  case TIDSP_DTYPE_I16:
    *qmin = INT16_MIN;
    *qmax = INT16_MAX;
    return 1;
  case TIDSP_DTYPE_U16:
    *qmin = 0;
    *qmax = UINT16_MAX;
    return 1;
  case TIDSP_DTYPE_I32:
    *qmin = INT32_MIN;
    *qmax = INT32_MAX;
    return 1;
  default:
    return 0;
  }
}

/* Shape and zero-point checks common to quantize and dequantize. */
static inline int32_t tidsp_ref_qdq_check(const tidsp_qdq_params *p,
                                          const float *scale,
                                          const int32_t *zero_point,
                                          const void *x, const void *y) {
  int64_t qmin, qmax;
  int32_t c;
  if (!p || !scale || !zero_point || !x || !y)
    return TIDSP_ERR_NULL;
  if (p->outer < 0 || p->channels < 1 || p->inner < 0)
    return TIDSP_ERR_SHAPE;
  if (!tidsp_ref_qdq_range(p->dtype, &qmin, &qmax))
    return TIDSP_ERR_DTYPE;
  for (c = 0; c < p->channels; c++) {
    if (zero_point[c] < qmin || zero_point[c] > qmax)
      return TIDSP_ERR_PARAM;
  }
  return TIDSP_OK;
}

#endif /* TIDSP_REF_QDQ_INTERNAL_H */
