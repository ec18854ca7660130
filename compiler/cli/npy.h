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
#include <stdio.h>

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

/* Read a .npy file. The data its header declares must be exactly what
 * the file holds after the header, and at most max_bytes: both checked
 * before anything is allocated for it. */
cs_status cs_npy_read(const char *path, size_t max_bytes, cs_npy *out);
/* The same from an open stream of file_size bytes (path names it in
 * messages); the fuzz harness reads from memory. */
cs_status cs_npy_read_stream(FILE *f, const char *path, uint64_t file_size, size_t max_bytes, cs_npy *out);
void cs_npy_free(cs_npy *a);
cs_status cs_npy_write(const char *path, int32_t dtype, int rank, const int64_t *shape,
                       const void *data);
/* "float32", "int8", …; "?" for others. */
const char *cs_npy_dtype_name(int32_t dtype);

#endif
