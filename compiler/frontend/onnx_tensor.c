/*
 * onnx_tensor.c — TensorProto → graph constant: dtype mapping, raw_data,
 * the typed fields, and external data next to the model file.
 *
 * The payload is stored little-endian as ONNX's raw_data is; the hosts
 * this compiler runs on are little-endian.
 */
#define _POSIX_C_SOURCE 200809L
#include "onnx_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

cs_dtype cs_onnx_dtype(int32_t t) {
  switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return CS_DTYPE_F32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return CS_DTYPE_I8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return CS_DTYPE_U8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return CS_DTYPE_I16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return CS_DTYPE_U16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return CS_DTYPE_I32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return CS_DTYPE_I64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return CS_DTYPE_BOOL;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return CS_DTYPE_F16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return CS_DTYPE_BF16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return CS_DTYPE_F64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return CS_DTYPE_U32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return CS_DTYPE_U64;
    default: return CS_DTYPE_UNDEF;
  }
}

const char *cs_onnx_dtype_name(int32_t t) {
  static const char *const names[] = {
      "UNDEFINED", "FLOAT",        "UINT8",         "INT8",
      "UINT16",    "INT16",        "INT32",         "INT64",
      "STRING",    "BOOL",         "FLOAT16",       "DOUBLE",
      "UINT32",    "UINT64",       "COMPLEX64",     "COMPLEX128",
      "BFLOAT16",  "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",   "INT4",          "FLOAT4E2M1",
      "FLOAT8E8M0", "UINT2",       "INT2",          "FLOAT6E2M3",
      "FLOAT6E3M2"};
  if (t >= 0 && t < (int32_t)(sizeof names / sizeof names[0])) return names[t];
  static _Thread_local char buf[32]; /* per thread, as ir/error.c's buffer */
  snprintf(buf, sizeof buf, "type %d", (int)t);
  return buf;
}

/* int32_data holds every narrow integer type and bool, one per element,
 * and float16/bfloat16 as their 16 bits. */
static cs_status from_int32_data(const Onnx__TensorProto *t, const char *name,
                                 cs_dtype dt, void *dst, int64_t numel) {
  int64_t lo, hi;
  cs_dtype_range(dt, &lo, &hi);
  if (dt == CS_DTYPE_F16 || dt == CS_DTYPE_BF16) lo = 0, hi = UINT16_MAX;
  for (int64_t i = 0; i < numel; i++) {
    int32_t x = t->int32_data[i];
    if (x < lo || x > hi)
      return cs_error(CS_ERR_INVALID,
                      "tensor '%s': int32_data[%lld] = %d is out of range for "
                      "%s",
                      name, (long long)i, (int)x, cs_dtype_name(dt));
    switch (dt) {
      case CS_DTYPE_I8: ((int8_t *)dst)[i] = (int8_t)x; break;
      case CS_DTYPE_U8:
      case CS_DTYPE_BOOL: ((uint8_t *)dst)[i] = (uint8_t)x; break;
      case CS_DTYPE_I16: ((int16_t *)dst)[i] = (int16_t)x; break;
      case CS_DTYPE_U16:
      case CS_DTYPE_F16:
      case CS_DTYPE_BF16: ((uint16_t *)dst)[i] = (uint16_t)x; break;
      case CS_DTYPE_I32: ((int32_t *)dst)[i] = x; break;
      default: break;
    }
  }
  return CS_OK;
}

/* The typed field must hold exactly numel elements: checked before the
 * payload is allocated, so a shape that promises gigabytes the file does
 * not hold costs nothing. */
static cs_status typed_count(const Onnx__TensorProto *t, const char *name,
                             cs_dtype dt, int64_t numel) {
  size_t have = 0;
  const char *field = NULL;
  switch (dt) {
    case CS_DTYPE_F32: have = t->n_float_data; field = "float_data"; break;
    case CS_DTYPE_I64: have = t->n_int64_data; field = "int64_data"; break;
    case CS_DTYPE_F64: have = t->n_double_data; field = "double_data"; break;
    case CS_DTYPE_U32:
    case CS_DTYPE_U64: have = t->n_uint64_data; field = "uint64_data"; break;
    default: have = t->n_int32_data; field = "int32_data"; break;
  }
  if (have != (size_t)numel) {
    if (have == 0 && (t->n_float_data || t->n_int32_data || t->n_int64_data ||
                      t->n_double_data || t->n_uint64_data))
      return cs_error(CS_ERR_INVALID,
                      "tensor '%s': %s data is stored in the wrong typed field "
                      "(expected %s)",
                      name, cs_dtype_name(dt), field);
    return cs_error(CS_ERR_INVALID,
                    "tensor '%s': shape has %lld elements but %s has %zu%s",
                    name, (long long)numel, field, have,
                    have == 0 ? " (no data)" : "");
  }
  return CS_OK;
}

static cs_status typed_data(const Onnx__TensorProto *t, const char *name,
                            cs_dtype dt, void *dst, int64_t numel) {
  if (dt == CS_DTYPE_F32) {
    memcpy(dst, t->float_data, sizeof(float) * (size_t)numel);
    return CS_OK;
  }
  if (dt == CS_DTYPE_I64) {
    memcpy(dst, t->int64_data, sizeof(int64_t) * (size_t)numel);
    return CS_OK;
  }
  if (dt == CS_DTYPE_F64) {
    memcpy(dst, t->double_data, sizeof(double) * (size_t)numel);
    return CS_OK;
  }
  if (dt == CS_DTYPE_U64) {
    memcpy(dst, t->uint64_data, sizeof(uint64_t) * (size_t)numel);
    return CS_OK;
  }
  if (dt == CS_DTYPE_U32) {
    for (int64_t i = 0; i < numel; i++) {
      if (t->uint64_data[i] > UINT32_MAX)
        return cs_error(CS_ERR_INVALID, "tensor '%s': uint64_data[%lld] = %llu is out of range for u32",
                        name, (long long)i, (unsigned long long)t->uint64_data[i]);
      ((uint32_t *)dst)[i] = (uint32_t)t->uint64_data[i];
    }
    return CS_OK;
  }
  return from_int32_data(t, name, dt, dst, numel);
}

/* external_data: location (relative to the model's directory), offset,
 * length. The location may not leave the model's directory, and the file
 * must hold the whole range: all checked before the payload is allocated.
 * On success *path (malloc'd) and *offset say where to read. */
static cs_status external_locate(const cs_onnx_model *m,
                                 const Onnx__TensorProto *t, const char *name,
                                 size_t nbytes, char **path_out, int64_t *offset_out) {
  const char *loc = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    const char *k = cs_onnx_s(e->key), *v = cs_onnx_s(e->value);
    if (!strcmp(k, "location")) {
      loc = v;
    } else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
      char *end = NULL;
      errno = 0;
      long long x = strtoll(v, &end, 10);
      if (!*v || *end || errno || x < 0)
        return cs_error(CS_ERR_INVALID,
                        "tensor '%s': external data %s '%s' is not a "
                        "non-negative integer",
                        name, k, v);
      if (!strcmp(k, "offset")) offset = x;
      else length = x;
    }
  }
  if (!loc || !*loc)
    return cs_error(CS_ERR_INVALID, "tensor '%s': external data has no location",
                    name);
  if (!m->dir)
    return cs_error(CS_ERR_UNSUPPORTED,
                    "tensor '%s': external data ('%s') needs the model's directory (a model "
                    "read from memory has none)",
                    name, loc);
  if (loc[0] == '/')
    return cs_error(CS_ERR_INVALID,
                    "tensor '%s': external data location '%s' is an absolute "
                    "path (it must be relative to the model's directory)",
                    name, loc);
  for (const char *p = loc; *p;) {
    const char *q = strchr(p, '/');
    size_t n = q ? (size_t)(q - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.')
      return cs_error(CS_ERR_INVALID,
                      "tensor '%s': external data location '%s' leaves the "
                      "model's directory ('..')",
                      name, loc);
    p += n;
    if (*p == '/') p++;
  }
  if (length >= 0 && (uint64_t)length != nbytes)
    return cs_error(CS_ERR_INVALID,
                    "tensor '%s': external data length %lld does not match its "
                    "shape and dtype (%zu bytes)",
                    name, (long long)length, nbytes);
  size_t plen = strlen(m->dir) + strlen(loc) + 2;
  char *path = malloc(plen);
  if (!path) return cs_error(CS_ERR_NOMEM, "out of memory");
  snprintf(path, plen, "%s/%s", m->dir, loc);
  struct stat st;
  cs_status s = CS_OK;
  if (stat(path, &st) != 0)
    s = cs_error(CS_ERR_IO, "tensor '%s': external data file '%s': %s", name,
                 path, strerror(errno));
  else if (!S_ISREG(st.st_mode))
    s = cs_error(CS_ERR_IO,
                 "tensor '%s': external data file '%s' is not a regular file",
                 name, path);
  else if ((uint64_t)offset > (uint64_t)st.st_size ||
           nbytes > (uint64_t)st.st_size - (uint64_t)offset)
    s = cs_error(CS_ERR_INVALID,
                 "tensor '%s': external data file '%s' has %lld bytes, too "
                 "short for %zu bytes at offset %lld",
                 name, path, (long long)st.st_size, nbytes, (long long)offset);
  if (s != CS_OK) {
    free(path);
    return s;
  }
  *path_out = path;
  *offset_out = offset;
  return CS_OK;
}

cs_status cs_onnx_tensor_to_const(const cs_onnx_model *m, cs_graph *g,
                                  const Onnx__TensorProto *t, const char *name,
                                  int *id) {
  int32_t ot = t->has_data_type ? t->data_type : 0;
  cs_dtype dt = cs_onnx_dtype(ot);
  if (dt == CS_DTYPE_UNDEF)
    return cs_error(CS_ERR_UNSUPPORTED,
                    "tensor '%s': dtype %s is not supported (supported: FLOAT, "
                    "INT8, UINT8, INT16, UINT16, INT32, INT64, BOOL)",
                    name, cs_onnx_dtype_name(ot));
  if (t->n_dims > CS_MAX_RANK)
    return cs_error(CS_ERR_UNSUPPORTED, "tensor '%s': rank %zu exceeds %d", name,
                    t->n_dims, CS_MAX_RANK);
  if (t->segment)
    return cs_error(CS_ERR_UNSUPPORTED,
                    "tensor '%s': segmented tensors are not supported", name);
  int64_t shape[CS_MAX_RANK], numel = 1;
  for (size_t i = 0; i < t->n_dims; i++) {
    int64_t d = t->dims[i];
    if (d < 0 || d > CS_ONNX_MAX_NUMEL)
      return cs_error(CS_ERR_INVALID, "tensor '%s': dim %zu is %lld", name, i,
                      (long long)d);
    shape[i] = d;
    numel *= d; /* both factors ≤ 2^31: no overflow before the check */
    if (numel > CS_ONNX_MAX_NUMEL)
      return cs_error(CS_ERR_UNSUPPORTED,
                      "tensor '%s': more than %d elements", name,
                      CS_ONNX_MAX_NUMEL);
  }
  size_t nbytes = (size_t)numel * cs_dtype_size(dt);
  int external = t->has_data_location &&
                 t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  /* Size checks come before the payload is allocated: a corrupt file must
   * not make us allocate gigabytes. */
  if (!external && t->has_raw_data && t->raw_data.len != nbytes)
    return cs_error(CS_ERR_INVALID,
                    "tensor '%s': raw_data has %zu bytes but %s%s needs %zu",
                    name, t->raw_data.len, cs_dtype_name(dt),
                    cs_onnx_shape_str((int)t->n_dims, shape), nbytes);
  char *ext_path = NULL;
  int64_t ext_offset = 0;
  cs_status st = CS_OK;
  if (external)
    st = external_locate(m, t, name, nbytes, &ext_path, &ext_offset);
  else if (!t->has_raw_data && numel > 0)
    st = typed_count(t, name, dt, numel);
  if (st != CS_OK) return st;
  /* Only now, with the size known to be backed by the file, allocate (the
   * graph checks it against the memory limit first). */
  int vid = cs_graph_add_const(g, name, dt, (int)t->n_dims, shape, NULL);
  if (vid < 0) {
    free(ext_path);
    return CS_ERR_NOMEM; /* message recorded, naming the tensor */
  }
  void *dst = cs_graph_value(g, vid)->data;
  if (external) {
    if (nbytes) st = cs_onnx_read_range(ext_path, ext_offset, nbytes, dst);
    free(ext_path);
  } else if (t->has_raw_data) {
    if (nbytes) memcpy(dst, t->raw_data.data, nbytes);
  } else if (numel > 0) {
    st = typed_data(t, name, dt, dst, numel);
  }
  if (st == CS_OK && dt == CS_DTYPE_BOOL) {
    uint8_t *b = dst;
    for (int64_t i = 0; i < numel; i++) b[i] = b[i] != 0;
  }
  /* On error the constant stays in the graph, unused; the caller frees the
   * whole graph. */
  *id = vid;
  return st;
}
