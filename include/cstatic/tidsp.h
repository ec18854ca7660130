/*
 * tidsp.h — the DSP runtime's common contract: status codes and dtypes.
 *
 * Every runtime function returns a tidsp_status (0 = success). The list is
 * one X-macro so that the enum and its string table cannot drift apart.
 * C99, no allocation, no dependencies beyond <stdint.h>/<stddef.h>.
 */
#ifndef CSTATIC_TIDSP_H
#define CSTATIC_TIDSP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDSP_STATUS_LIST(X)                                             \
  X(TIDSP_OK, 0, "ok")                                                   \
  X(TIDSP_ERR_NULL, -1, "null pointer argument")                         \
  X(TIDSP_ERR_SHAPE, -2, "invalid shape or geometry")                    \
  X(TIDSP_ERR_DTYPE, -3, "unsupported dtype")                            \
  X(TIDSP_ERR_PARAM, -4, "invalid kernel parameter")                     \
  X(TIDSP_ERR_ALIGN, -5, "pointer not aligned as the kernel requires")   \
  X(TIDSP_ERR_NOMEM, -6, "arena too small")                              \
  X(TIDSP_ERR_WEIGHTS, -7, "weights blob missing, truncated or corrupt") \
  X(TIDSP_ERR_UNSUPPORTED, -8, "operation not supported by this build") \
  X(TIDSP_ERR_L2, -9, "L2 SRAM scratch not bound or smaller than the model needs") \
  X(TIDSP_ERR_CHECKSUM, -10, "weights checksum mismatch: the bytes differ from those the " \
                             "model was compiled with (corrupted, or from another compile)")

typedef enum tidsp_status {
#define TIDSP_X_ENUM(name, value, text) name = value,
  TIDSP_STATUS_LIST(TIDSP_X_ENUM)
#undef TIDSP_X_ENUM
} tidsp_status;

/* Human-readable text of a status; never NULL. */
const char *tidsp_status_str(int32_t status);

/* Element types as stored in tensors. Values are stable (they appear in
 * weights.bin and in generated code). */
typedef enum tidsp_dtype {
  TIDSP_DTYPE_F32 = 1,
  TIDSP_DTYPE_I8 = 2,
  TIDSP_DTYPE_U8 = 3,
  TIDSP_DTYPE_I16 = 4,
  TIDSP_DTYPE_U16 = 5,
  TIDSP_DTYPE_I32 = 6,
  TIDSP_DTYPE_I64 = 7,
  TIDSP_DTYPE_BOOL = 8, /* one byte, 0 or 1 (Cast only) */
  /* Cast, Max/Min and Pow's exponent (tidsp_cast, tidsp_binary) only. */
  TIDSP_DTYPE_F16 = 9,  /* IEEE binary16, stored as its 16 bits */
  TIDSP_DTYPE_BF16 = 10, /* bfloat16: a float's upper 16 bits */
  TIDSP_DTYPE_F64 = 11,
  TIDSP_DTYPE_U32 = 12,
  TIDSP_DTYPE_U64 = 13
} tidsp_dtype;

/* Size in bytes of one element, 0 for an unknown dtype. */
size_t tidsp_dtype_size(int32_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_TIDSP_H */
