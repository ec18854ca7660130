/*
 * C names for tensors: W_<NAME> for a weight's offset in the blob,
 * A_<NAME> for an arena tensor's offset. <NAME> is the ONNX tensor name
 * upper-cased with every other character turned into '_', so a reader can
 * grep the ONNX graph for it; collisions get a numeric suffix.
 */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

enum { NAME_MAX_STEM = 60 };

static void stem(const char *name, char *out) {
  size_t n = 0;
  int last_us = 1; /* drop leading '_' */
  for (const char *p = name ? name : ""; *p && n < NAME_MAX_STEM; p++) {
    unsigned char c = (unsigned char)*p;
    if (isalnum(c) && c < 0x80) {
      out[n++] = (char)toupper(c);
      last_us = 0;
    } else if (!last_us) {
      out[n++] = '_';
      last_us = 1;
    }
  }
  while (n > 0 && out[n - 1] == '_') n--;
  out[n] = '\0';
  if (n == 0) strcpy(out, "T");
}

/* Linear probing over a small open-addressing set of taken names. */
typedef struct name_set {
  const char **slot;
  size_t cap;
} name_set;

static size_t hash_str(const char *s) {
  size_t h = 5381;
  while (*s) h = h * 33 + (unsigned char)*s++;
  return h;
}

static int set_has(const name_set *set, const char *s) {
  for (size_t i = hash_str(s) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
    if (!set->slot[i]) return 0;
    if (!strcmp(set->slot[i], s)) return 1;
  }
}

static void set_add(name_set *set, const char *s) {
  size_t i = hash_str(s) & (set->cap - 1);
  while (set->slot[i]) i = (i + 1) & (set->cap - 1);
  set->slot[i] = s;
}

/* Reserved names (the staging buffers) are taken first so no tensor can
 * collide with them. */
cs_status cs_cg_assign_names(cs_cg *cg) {
  const cs_graph *g = cg->g;
  cg->macro = calloc((size_t)g->n_values + 1, sizeof *cg->macro);
  name_set set = {0};
  set.cap = 64;
  while (set.cap < 4 * ((size_t)g->n_values + (size_t)g->n_inputs + (size_t)g->n_outputs + 8))
    set.cap *= 2;
  set.slot = calloc(set.cap, sizeof *set.slot);
  if (!cg->macro || !set.slot) {
    free(set.slot);
    return cs_error(CS_ERR_NOMEM, "codegen: out of memory naming tensors");
  }
  set_add(&set, "W");
  set_add(&set, "A");
  /* A_RAW_INPUT<i> / A_RAW_OUTPUT<j> are the staging buffers; tensors named
   * like that get a suffix. */
  char **staging = calloc((size_t)g->n_inputs + (size_t)g->n_outputs + 1, sizeof *staging);
  if (!staging) {
    free(set.slot);
    return cs_error(CS_ERR_NOMEM, "codegen: out of memory naming tensors");
  }
  int ns = 0;
  for (int i = 0; i < g->n_inputs + g->n_outputs; i++) {
    char buf[48];
    if (i < g->n_inputs) snprintf(buf, sizeof buf, "A_RAW_INPUT%d", i);
    else snprintf(buf, sizeof buf, "A_RAW_OUTPUT%d", i - g->n_inputs);
    staging[ns] = strdup(buf);
    if (staging[ns]) set_add(&set, staging[ns++]);
  }
  cs_status st = CS_OK;
  for (int v = 0; v < g->n_values && st == CS_OK; v++) {
    cs_loc_kind kind = cg->s.loc[v].kind;
    if (kind != CS_LOC_CONST && kind != CS_LOC_ARENA) continue;
    char base[NAME_MAX_STEM + 8], full[NAME_MAX_STEM + 32];
    stem(cs_graph_value(g, v)->name, base);
    const char *prefix = kind == CS_LOC_CONST ? "W_" : "A_";
    snprintf(full, sizeof full, "%s%s", prefix, base);
    for (int k = 2; set_has(&set, full); k++)
      snprintf(full, sizeof full, "%s%s_%d", prefix, base, k);
    cg->macro[v] = strdup(full);
    if (!cg->macro[v]) st = cs_error(CS_ERR_NOMEM, "codegen: out of memory naming tensors");
    else set_add(&set, cg->macro[v]);
  }
  for (int i = 0; i < ns; i++) free(staging[i]);
  free(staging);
  free(set.slot);
  return st;
}
