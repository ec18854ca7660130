#include "mmalib_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cs_mmalib_report_reset(cs_graph *g) {
  cs_offload_report_free(&g->offload);
  memset(&g->offload, 0, sizeof g->offload);
}

void cs_mmalib_report_pad(cs_graph *g, const cs_offload_pad *p) {
  cs_offload_report *r = &g->offload;
  if (r->n_pad == r->cap_pad) {
    int ncap = r->cap_pad ? 2 * r->cap_pad : 16;
    cs_offload_pad *grown = realloc(r->pads, sizeof *grown * (size_t)ncap);
    if (!grown) {
      r->lost++;
      return;
    }
    r->pads = grown;
    r->cap_pad = ncap;
  }
  r->pads[r->n_pad++] = *p;
}

static cs_offload_entry *find(cs_offload_report *r, const char *layer) {
  if (!layer || !*layer) return NULL;
  char key[sizeof r->entries->layer]; /* compared as stored (truncated) */
  snprintf(key, sizeof key, "%s", layer);
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->entries[i].layer, key)) return &r->entries[i];
  return NULL;
}

void cs_mmalib_report_bound(cs_graph *g, const char *layer, double full_scale) {
  cs_offload_entry *e = find(&g->offload, layer);
  if (e && e->kernel[0] && e->scale_rel_err >= 0)
    e->bound_full_scale_lsb = cs_offload_error_bound(e->scale_rel_err, full_scale);
}

void cs_mmalib_report_exact(cs_graph *g, const char *layer, double int8_rel_err, double err, double mma_cycles,
                            double int8_mma_cycles, double core_cycles) {
  cs_offload_entry *e = find(&g->offload, layer);
  if (!e || !e->kernel[0]) return;
  e->exact = 1;
  e->exact_err_lsb = err;
  e->exact_int8_rel_err = int8_rel_err;
  e->exact_mma_cycles = mma_cycles;
  e->exact_int8_mma_cycles = int8_mma_cycles;
  e->exact_core_cycles = core_cycles;
}

void cs_mmalib_report_forget(cs_graph *g, const char *layer) {
  cs_offload_report *r = &g->offload;
  cs_offload_entry *e = find(r, layer);
  if (!e) return;
  int i = (int)(e - r->entries);
  memmove(e, e + 1, sizeof *e * (size_t)(r->n - i - 1));
  r->n--;
}

void cs_mmalib_report_add(cs_graph *g, cs_offload_kind kind, const char *layer, const char *kernel,
                          double scale_rel_err, const char *reason_fmt, ...) {
  cs_offload_report *r = &g->offload;
  cs_offload_entry *e = find(r, layer);
  if (!e) {
    if (r->n == r->cap) {
      int ncap = r->cap ? 2 * r->cap : 64;
      cs_offload_entry *grown = realloc(r->entries, sizeof *grown * (size_t)ncap);
      if (!grown) { /* a report missing a layer would be a wrong report */
        r->lost++;
        return;
      }
      r->entries = grown;
      r->cap = ncap;
    }
    e = &r->entries[r->n++];
  }
  memset(e, 0, sizeof *e);
  e->kind = kind;
  snprintf(e->layer, sizeof e->layer, "%s", layer ? layer : "?");
  e->scale_rel_err = scale_rel_err;
  e->bound_full_scale_lsb = -1.0;
  if (reason_fmt) {
    va_list ap;
    va_start(ap, reason_fmt);
    vsnprintf(e->reason, sizeof e->reason, reason_fmt, ap);
    va_end(ap);
  } else {
    snprintf(e->kernel, sizeof e->kernel, "%s", kernel ? kernel : "?");
  }
}
