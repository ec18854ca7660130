/*
 * onnx_util.c — a string→int hash map (tensor names → ids) and a growable
 * message string. Models have thousands of names; a linear search per
 * lookup would make loading quadratic.
 */
#include "onnx_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

cs_status cs_onnx_map_init(cs_onnx_map *m, size_t expected) {
  size_t cap = 16;
  while (cap < 2 * expected + 16) cap *= 2;
  m->keys = calloc(cap, sizeof(char *));
  m->vals = calloc(cap, sizeof(int));
  m->count = 0;
  if (!m->keys || !m->vals) {
    cs_onnx_map_free(m);
    return cs_error(CS_ERR_NOMEM, "out of memory (a table of %zu tensor names)", expected);
  }
  m->cap = cap;
  return CS_OK;
}

void cs_onnx_map_free(cs_onnx_map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

int cs_onnx_map_get(const cs_onnx_map *m, const char *key) {
  if (!m->cap) return -1;
  for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return -1;
    if (!strcmp(m->keys[i], key)) return m->vals[i];
  }
}

static void map_insert(cs_onnx_map *m, const char *key, int val) {
  for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) {
      m->keys[i] = key;
      m->vals[i] = val;
      m->count++;
      return;
    }
    if (!strcmp(m->keys[i], key)) {
      m->vals[i] = val;
      return;
    }
  }
}

cs_status cs_onnx_map_put(cs_onnx_map *m, const char *key, int val) {
  if (!m->cap) {
    cs_status st = cs_onnx_map_init(m, 0);
    if (st != CS_OK) return st;
  }
  if (2 * (m->count + 1) > m->cap) { /* keep the load factor below 1/2 */
    cs_onnx_map grown = {0};
    grown.cap = 2 * m->cap;
    grown.keys = calloc(grown.cap, sizeof(char *));
    grown.vals = calloc(grown.cap, sizeof(int));
    if (!grown.keys || !grown.vals) {
      free(grown.keys);
      free(grown.vals);
      return cs_error(CS_ERR_NOMEM, "out of memory (a table of %zu tensor names)", m->count + 1);
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) map_insert(&grown, m->keys[i], m->vals[i]);
    cs_onnx_map_free(m);
    *m = grown;
  }
  map_insert(m, key, val);
  return CS_OK;
}

void cs_onnx_str_printf(cs_onnx_str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) return; /* a message loses its tail; the error it reports stands */
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void cs_onnx_str_free(cs_onnx_str *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}
