/*
 * npy.h — NumPy .npy files (format versions 1, 2 and 3): little-endian
 * float32, int8, uint8, int16, int32 and int64 arrays in C order. Anything
 * else (Fortran order, big-endian, object or structured dtypes, a
 * truncated file, a malformed header) is an error naming the file.
 */
#ifndef CSTATIC_CLI_NPY_H
#define CSTATIC_CLI_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"

enum { CS_NPY_MAX_RANK = 32 };

typedef struct cs_npy {
  int32_t dtype;          /* TIDSP_DTYPE_*, 0 for another numeric dtype */
  const char *dtype_name; /* numpy's name: "float32", "float64", … */
  int rank;
  int64_t shape[CS_NPY_MAX_RANK];
  int64_t numel;
  size_t nbytes;
  void *data; /* 64-byte aligned; free with cs_npy_free */
} cs_npy;

cs_status cs_npy_read(const char *path, cs_npy *out);
void cs_npy_free(cs_npy *a);
cs_status cs_npy_write(const char *path, int32_t dtype, int rank, const int64_t *shape,
                       const void *data);
/* "float32", "int8", …; "?" for others. */
const char *cs_npy_dtype_name(int32_t dtype);

#endif
