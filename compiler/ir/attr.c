/*
 * attr.c — node attributes: a small array per node, unique by name.
 */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

static void *attr_alloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fputs("cstatic: out of memory\n", stderr);
    abort();
  }
  return q;
}

static void attr_clear(cs_attr *a) {
  free(a->ints);
  free(a->floats);
  free(a->s);
  a->ints = NULL;
  a->floats = NULL;
  a->s = NULL;
  a->i = 0;
  a->f = 0.0f;
  a->n = 0;
}

static cs_attr *find_attr(const cs_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
  return NULL;
}

/* An existing attribute of the same name is reset and reused, so that a
 * name appears once per node. */
cs_attr *cs_node_add_attr(cs_node *n, const char *name, cs_attr_kind kind) {
  cs_attr *a = find_attr(n, name);
  if (a) {
    attr_clear(a);
  } else {
    n->attrs = attr_alloc(n->attrs, sizeof(cs_attr) * (size_t)(n->n_attrs + 1));
    a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    size_t len = strlen(name) + 1;
    a->name = attr_alloc(NULL, len);
    memcpy(a->name, name, len);
  }
  a->kind = kind;
  return a;
}

const cs_attr *cs_node_attr(const cs_node *n, const char *name) {
  return find_attr(n, name);
}

int64_t cs_node_attr_int(const cs_node *n, const char *name, int64_t dflt) {
  const cs_attr *a = find_attr(n, name);
  return a && a->kind == CS_ATTR_INT ? a->i : dflt;
}

float cs_node_attr_float(const cs_node *n, const char *name, float dflt) {
  const cs_attr *a = find_attr(n, name);
  if (!a) return dflt;
  if (a->kind == CS_ATTR_FLOAT) return a->f;
  if (a->kind == CS_ATTR_INT) return (float)a->i;
  return dflt;
}

const char *cs_node_attr_string(const cs_node *n, const char *name, const char *dflt) {
  const cs_attr *a = find_attr(n, name);
  return a && a->kind == CS_ATTR_STRING && a->s ? a->s : dflt;
}

const int64_t *cs_node_attr_ints(const cs_node *n, const char *name,
                                 int *n_out) {
  const cs_attr *a = find_attr(n, name);
  if (!a || a->kind != CS_ATTR_INTS) {
    if (n_out) *n_out = 0;
    return NULL;
  }
  if (n_out) *n_out = a->n;
  /* An empty list is present, not absent: hand back a valid pointer. */
  static const int64_t empty[1] = {0};
  return a->ints ? a->ints : empty;
}

void cs_node_set_attr_int(cs_node *n, const char *name, int64_t v) {
  cs_node_add_attr(n, name, CS_ATTR_INT)->i = v;
}

void cs_node_set_attr_ints(cs_node *n, const char *name, int count,
                           const int64_t *v) {
  cs_attr *a = cs_node_add_attr(n, name, CS_ATTR_INTS);
  if (count < 0) count = 0;
  a->n = count;
  a->ints = count ? attr_alloc(NULL, sizeof(int64_t) * (size_t)count) : NULL;
  if (count) memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
}
