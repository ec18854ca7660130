/*
 * onnx_model.c — the file as an ONNX ModelProto: unpack, basic sanity, and
 * the default-domain opset.
 */
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 1;
  char *d = malloc(n + 1);
  if (!d) return NULL;
  if (!slash) memcpy(d, ".", 1);
  else if (n == 0) memcpy(d, "/", (n = 1));
  else memcpy(d, path, n);
  d[n] = '\0';
  return d;
}

/* Unpack m->buf and check what every model has; m->path names it. */
static cs_status unpack(cs_onnx_model *m) {
  const char *path = m->path;
  m->proto = onnx__model_proto__unpack(NULL, m->len, m->buf);
  if (!m->proto) {
    cs_onnx_model_close(m);
    return cs_error(CS_ERR_PARSE,
                    "%s: not a valid ONNX model (protobuf parse failed: "
                    "truncated or corrupt file?)",
                    path);
  }
  /* Random bytes can unpack as a message of unknown fields; a real model
   * always carries an ir_version and a graph. */
  if (!m->proto->has_ir_version || m->proto->ir_version < 3) {
    cs_onnx_model_close(m);
    return cs_error(CS_ERR_PARSE,
                    "%s: not a valid ONNX model (missing or invalid "
                    "ir_version)",
                    path);
  }
  if (!m->proto->graph) {
    cs_onnx_model_close(m);
    return cs_error(CS_ERR_PARSE, "%s: not a valid ONNX model (no graph)", path);
  }
  for (size_t i = 0; i < m->proto->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->proto->opset_import[i];
    if (!o || !cs_onnx_is_default_domain(o->domain)) continue;
    int64_t v = o->has_version ? o->version : 0;
    if (m->opset < 0 || v > m->opset) m->opset = v;
  }
  return CS_OK;
}

cs_status cs_onnx_model_open(const char *path, size_t max_bytes, cs_onnx_model *m) {
  memset(m, 0, sizeof *m);
  m->path = path;
  m->opset = -1;
  cs_status st = cs_onnx_read_file(path, max_bytes, &m->buf, &m->len);
  if (st != CS_OK) return st;
  st = unpack(m);
  if (st != CS_OK) return st;
  m->dir = dir_of(path);
  if (!m->dir) {
    cs_onnx_model_close(m);
    return cs_error(CS_ERR_NOMEM, "%s: out of memory", path);
  }
  return CS_OK;
}

cs_status cs_onnx_model_from_buffer(const void *data, size_t len, const char *name, cs_onnx_model *m) {
  memset(m, 0, sizeof *m);
  m->path = name;
  m->opset = -1;
  if (len == 0) return cs_error(CS_ERR_PARSE, "%s: empty, not an ONNX model", name);
  m->buf = malloc(len);
  if (!m->buf) return cs_error(CS_ERR_NOMEM, "%s: cannot allocate %zu bytes to copy it", name, len);
  memcpy(m->buf, data, len);
  m->len = len;
  return unpack(m);
}

void cs_onnx_model_close(cs_onnx_model *m) {
  if (m->proto) onnx__model_proto__free_unpacked(m->proto, NULL);
  free(m->buf);
  free(m->dir);
  memset(m, 0, sizeof *m);
  m->opset = -1;
}

cs_status cs_onnx_check_opset(const cs_onnx_model *m) {
  if (m->opset < 0) {
    cs_onnx_str doms = {0};
    for (size_t i = 0; i < m->proto->n_opset_import; i++) {
      const Onnx__OperatorSetIdProto *o = m->proto->opset_import[i];
      if (!o) continue;
      cs_onnx_str_printf(&doms, "%s%s %lld", doms.len ? ", " : "",
                         cs_onnx_s(o->domain),
                         (long long)(o->has_version ? o->version : 0));
    }
    cs_status st = cs_error(CS_ERR_UNSUPPORTED,
                            "no opset imported for the default ONNX domain "
                            "(opset_import: %s)",
                            doms.len && doms.s ? doms.s : "empty");
    cs_onnx_str_free(&doms);
    return st;
  }
  if (m->opset < CS_ONNX_MIN_OPSET || m->opset > CS_ONNX_MAX_OPSET) {
    /* The nearest supported opset, and the converter that gets there. */
    int to = m->opset < CS_ONNX_MIN_OPSET ? CS_ONNX_MIN_OPSET : CS_ONNX_MAX_OPSET;
    return cs_error(CS_ERR_UNSUPPORTED,
                    "opset %lld of the default ONNX domain is not "
                    "supported (supported: %d to %d); convert the model "
                    "with ONNX's version converter: python -c \"import onnx; "
                    "from onnx import version_converter; onnx.save("
                    "version_converter.convert_version(onnx.load('%s'), %d), "
                    "'model_opset%d.onnx')\"",
                    (long long)m->opset, CS_ONNX_MIN_OPSET,
                    CS_ONNX_MAX_OPSET, m->path, to, to);
  }
  return CS_OK;
}
