/*
 * tidsp.c — status strings and dtype sizes (include/cstatic/tidsp.h).
 */
#include "cstatic/tidsp.h"

const char *tidsp_status_str(int32_t status) {
  switch (status) {
#define TIDSP_X_CASE(name, value, text) \
  case value:                           \
    return text;
    TIDSP_STATUS_LIST(TIDSP_X_CASE)
#undef TIDSP_X_CASE
  default:
    return "unknown status";
  }
}

size_t tidsp_dtype_size(int32_t dtype) {
  switch (dtype) {
  case TIDSP_DTYPE_F32:
    return 4;
  case TIDSP_DTYPE_I8:
  case TIDSP_DTYPE_U8:
  case TIDSP_DTYPE_BOOL:
    return 1;
  case TIDSP_DTYPE_I16:
  case TIDSP_DTYPE_U16:
  case TIDSP_DTYPE_F16:
  case TIDSP_DTYPE_BF16:
    return 2;
  case TIDSP_DTYPE_I32:
  case TIDSP_DTYPE_U32:
    return 4;
  case TIDSP_DTYPE_I64:
  case TIDSP_DTYPE_U64:
  case TIDSP_DTYPE_F64:
    return 8;
  default:
    return 0;
  }
}
