/*
 * onnx_file.c — reading the model file and external-data ranges, with
 * messages that say what is wrong (missing, a directory, empty, unreadable).
 */
#define _POSIX_C_SOURCE 200809L /* fseeko */
#include "onnx_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

cs_status cs_onnx_read_file(const char *path, size_t max_bytes, uint8_t **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  struct stat st;
  if (stat(path, &st) != 0)
    return cs_error(CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return cs_error(CS_ERR_IO, "%s: is a directory, not an ONNX file", path);
  /* A FIFO or device could block or never end: only plain files. */
  if (!S_ISREG(st.st_mode))
    return cs_error(CS_ERR_IO, "%s: not a regular file", path);
  if (st.st_size == 0)
    return cs_error(CS_ERR_PARSE, "%s: empty file, not an ONNX model", path);
  FILE *f = fopen(path, "rb");
  if (!f)
    return cs_error(CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  /* A file is read whole: it must fit the memory limit (a sparse file
   * can claim any size). */
  if ((uint64_t)st.st_size > max_bytes) {
    char a[32], b[32];
    fclose(f);
    return cs_error(CS_ERR_NOMEM, "%s: the file's %s exceed the memory limit of %s (--max-memory)", path,
                    cs_bytes_text((uint64_t)st.st_size, a, sizeof a), cs_bytes_text(max_bytes, b, sizeof b));
  }
  size_t size = (size_t)st.st_size;
  uint8_t *data = malloc(size);
  if (!data) {
    fclose(f);
    return cs_error(CS_ERR_NOMEM, "%s: cannot allocate %zu bytes to read it",
                    path, size);
  }
  size_t got = fread(data, 1, size, f);
  int err = ferror(f);
  fclose(f);
  if (err || got != size) {
    free(data);
    return cs_error(CS_ERR_IO, "%s: read %zu of %zu bytes%s%s", path, got, size,
                    err ? ": " : "", err ? strerror(errno) : "");
  }
  *buf = data;
  *len = size;
  return CS_OK;
}

cs_status cs_onnx_read_range(const char *path, int64_t offset, size_t len,
                             void *dst) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return cs_error(CS_ERR_IO, "external data file '%s': cannot open: %s",
                    path, strerror(errno));
  size_t got = 0;
  if (fseeko(f, (off_t)offset, SEEK_SET) == 0) got = fread(dst, 1, len, f);
  fclose(f);
  if (got != len)
    return cs_error(CS_ERR_IO,
                    "external data file '%s': read %zu of %zu bytes at offset "
                    "%lld",
                    path, got, len, (long long)offset);
  return CS_OK;
}
