#include "mmalib_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"

static cs_offload_report report;
static int cap;

const cs_offload_report *cs_mmalib_report(void) { return &report; }

void cs_mmalib_report_reset(void) {
  free(report.entries);
  report.entries = NULL;
  report.n = 0;
  report.lost = 0;
  cap = 0;
}

static cs_offload_entry *find(const char *layer) {
  if (!layer || !*layer) return NULL;
  char key[sizeof report.entries->layer]; /* compared as stored (truncated) */
  snprintf(key, sizeof key, "%s", layer);
  for (int i = 0; i < report.n; i++)
    if (!strcmp(report.entries[i].layer, key)) return &report.entries[i];
  return NULL;
}

void cs_mmalib_report_bound(const char *layer, double full_scale) {
  cs_offload_entry *e = find(layer);
  if (e && e->kernel[0] && e->scale_rel_err >= 0)
    e->bound_full_scale_lsb = cs_offload_error_bound(e->scale_rel_err, full_scale);
}

void cs_mmalib_report_forget(const char *layer) {
  cs_offload_entry *e = find(layer);
  if (!e) return;
  int i = (int)(e - report.entries);
  memmove(e, e + 1, sizeof *e * (size_t)(report.n - i - 1));
  report.n--;
}

void cs_mmalib_report_add(cs_offload_kind kind, const char *layer, const char *kernel,
                          double scale_rel_err, const char *reason_fmt, ...) {
  cs_offload_entry *e = find(layer);
  if (!e) {
    if (report.n == cap) {
      int ncap = cap ? 2 * cap : 64;
      cs_offload_entry *grown = realloc(report.entries, sizeof *grown * (size_t)ncap);
      if (!grown) { /* a report missing a layer would be a wrong report */
        report.lost++;
        return;
      }
      report.entries = grown;
      cap = ncap;
    }
    e = &report.entries[report.n++];
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

/* The first MMALIB pass: a fresh report per pipeline run. */
cs_status pass_mmalib_begin(cs_graph *g, const cs_target *t) {
  (void)g;
  (void)t;
  cs_mmalib_report_reset();
  return CS_OK;
}
