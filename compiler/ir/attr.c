/*
 * attr.c — node attributes: a small array per node, unique by name.
 */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

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

static void attr_free(cs_attr *a) {
  attr_clear(a);
  free(a->name);
}

void cs_node_remove_attr(cs_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i].name, name)) continue;
    attr_free(&n->attrs[i]);
    memmove(&n->attrs[i], &n->attrs[i + 1], sizeof *n->attrs * (size_t)(n->n_attrs - i - 1));
    n->n_attrs--;
    return;
  }
}

void cs_node_clear_attrs(cs_node *n) {
  for (int i = 0; i < n->n_attrs; i++) attr_free(&n->attrs[i]);
  free(n->attrs);
  n->attrs = NULL;
  n->n_attrs = 0;
}

/* An existing attribute of the same name is reset and reused, so that a
 * name appears once per node. */
cs_attr *cs_node_add_attr(cs_node *n, const char *name, cs_attr_kind kind) {
  cs_attr *a = find_attr(n, name);
  if (a) {
    attr_clear(a);
  } else {
    size_t len = strlen(name) + 1;
    char *copy = malloc(len);
    cs_attr *attrs = copy ? realloc(n->attrs, sizeof(cs_attr) * (size_t)(n->n_attrs + 1)) : NULL;
    if (!attrs) {
      free(copy);
      cs_error(CS_ERR_NOMEM, "out of memory adding attribute '%s' to node '%s'", name, n->name);
      return NULL;
    }
    n->attrs = attrs;
    a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    memcpy(copy, name, len);
    a->name = copy;
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

cs_status cs_node_set_attr_int(cs_node *n, const char *name, int64_t v) {
  cs_attr *a = cs_node_add_attr(n, name, CS_ATTR_INT);
  if (!a) return CS_ERR_NOMEM;
  a->i = v;
  return CS_OK;
}

cs_status cs_node_set_attr_ints(cs_node *n, const char *name, int count,
                                const int64_t *v) {
  if (count < 0) count = 0;
  int64_t *copy = count ? malloc(sizeof(int64_t) * (size_t)count) : NULL;
  cs_attr *a = count && !copy ? NULL : cs_node_add_attr(n, name, CS_ATTR_INTS);
  if (!a) {
    free(copy);
    return cs_error(CS_ERR_NOMEM, "out of memory for attribute '%s' of node '%s'", name, n->name);
  }
  if (count) memcpy(copy, v, sizeof(int64_t) * (size_t)count);
  a->n = count;
  a->ints = copy;
  return CS_OK;
}

cs_status cs_node_set_attr_string(cs_node *n, const char *name, const char *s, size_t len) {
  char *copy = malloc(len + 1);
  cs_attr *a = copy ? cs_node_add_attr(n, name, CS_ATTR_STRING) : NULL;
  if (!a) {
    free(copy);
    return cs_error(CS_ERR_NOMEM, "out of memory for attribute '%s' of node '%s'", name, n->name);
  }
  if (len) memcpy(copy, s, len);
  copy[len] = '\0';
  a->s = copy;
  return CS_OK;
}

cs_status cs_node_copy_attrs(cs_node *dst, const cs_node *src) {
  for (int i = 0; i < src->n_attrs; i++) {
    const cs_attr *s = &src->attrs[i];
    cs_attr *a = cs_node_add_attr(dst, s->name, s->kind);
    if (!a) return CS_ERR_NOMEM;
    a->i = s->i;
    a->f = s->f;
    size_t ni = s->ints ? sizeof *s->ints * (size_t)s->n : 0, nf = s->floats ? sizeof *s->floats * (size_t)s->n : 0;
    a->ints = ni ? malloc(ni) : NULL;
    a->floats = nf ? malloc(nf) : NULL;
    a->s = s->s ? malloc(strlen(s->s) + 1) : NULL;
    if ((ni && !a->ints) || (nf && !a->floats) || (s->s && !a->s)) {
      attr_clear(a);
      return cs_error(CS_ERR_NOMEM, "out of memory copying attribute '%s' to node '%s'", s->name, dst->name);
    }
    if (ni) memcpy(a->ints, s->ints, ni);
    if (nf) memcpy(a->floats, s->floats, nf);
    if (s->s) strcpy(a->s, s->s);
    a->n = s->n;
  }
  return CS_OK;
}
