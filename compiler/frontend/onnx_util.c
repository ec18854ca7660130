/*
 * onnx_util.c — a string→int hash map (tensor names → ids) and a growable
 * message string. Models have thousands of names; a linear search per
 * lookup would make loading quadratic.
 */
#include "onnx_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fputs("cstatic: out of memory\n", stderr);
    abort();
  }
  return p;
}

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void cs_onnx_map_init(cs_onnx_map *m, size_t expected) {
  size_t cap = 16;
  while (cap < 2 * expected + 16) cap *= 2;
  m->keys = xcalloc(cap, sizeof(char *));
  m->vals = xcalloc(cap, sizeof(int));
  m->cap = cap;
  m->count = 0;
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

void cs_onnx_map_put(cs_onnx_map *m, const char *key, int val) {
  if (!m->cap) cs_onnx_map_init(m, 0);
  if (2 * (m->count + 1) > m->cap) { /* keep the load factor below 1/2 */
    cs_onnx_map old = *m;
    m->cap *= 2;
    m->count = 0;
    m->keys = xcalloc(m->cap, sizeof(char *));
    m->vals = xcalloc(m->cap, sizeof(int));
    for (size_t i = 0; i < old.cap; i++)
      if (old.keys[i]) map_insert(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
  }
  map_insert(m, key, val);
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
    if (!s) {
      fputs("cstatic: out of memory\n", stderr);
      abort();
    }
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
