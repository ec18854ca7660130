/*
 * report.c — the per-layer profile as text (cstatic/profile_report.h).
 *
 * Everything is written through one appender that counts what it could
 * not store, so a caller may ask for the size first (size 0) and format
 * again into a buffer that big.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cstatic/profile_report.h"

/* Longest name, module or output shown in the table before it is cut with
 * "...". */
enum { NAME_WIDTH_MAX = 40 };

typedef struct out {
  char *buf;
  size_t size, len; /* len: the whole text's length, stored or not */
} out;

static void put(out *o, const char *fmt, ...) {
  va_list ap;
  char *at = o->len < o->size ? o->buf + o->len : NULL;
  size_t room = o->len < o->size ? o->size - o->len : 0;
  va_start(ap, fmt);
  int w = vsnprintf(at, room, fmt, ap);
  va_end(ap);
  if (w > 0) o->len += (size_t)w;
}

static size_t finish(out *o) {
  if (o->size > 0) o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
  return o->len;
}

static double total_ms(const tidsp_profile_row *rows, int32_t n) {
  double t = 0.0;
  for (int32_t i = 0; i < n; i++) t += rows[i].ms;
  return t;
}

/* MACs per second in units of 10^9, or a negative number when undefined. */
static double gmacs(const tidsp_profile_row *r) {
  if (r->macs <= 0 || r->ms <= 0.0) return -1.0;
  return (double)r->macs / (r->ms * 1e-3) / 1e9;
}

/* A column's text: "" for NULL. */
static const char *text(const char *s) { return s ? s : ""; }

/* A table cell: "-" for none (a layer without a module). */
static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

/* Widen a column to fit s, up to NAME_WIDTH_MAX. */
static void fit(int *width, const char *s) {
  size_t len = strlen(s);
  if (len > (size_t)*width) *width = len > (size_t)NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (int)len;
}

/* s in a column of width bytes: whole, or cut with "..." (buf holds
 * NAME_WIDTH_MAX + 1 bytes). */
static const char *cell(char *buf, size_t size, const char *s, int width) {
  if (strlen(s) <= (size_t)width) return s;
  snprintf(buf, size, "%.*s...", width - 3, s);
  return buf;
}

size_t tidsp_profile_format_table(char *buf, size_t size, const tidsp_profile_row *rows, int32_t n,
                                  double latency_ms, int32_t with_cycles) {
  out o = {buf, size, 0};
  double total = total_ms(rows, n);
  int64_t macs = 0;
  int w_name = 5, w_module = 6, w_output = 6; /* "layer", "module", "output" */
  for (int32_t i = 0; i < n; i++) {
    fit(&w_name, rows[i].name);
    fit(&w_module, or_dash(rows[i].module));
    fit(&w_output, or_dash(rows[i].output));
    macs += rows[i].macs;
  }
  put(&o, "%5s  %-*s  %-*s  %-*s  %-22s %14s", "#", w_name, "layer", w_module, "module", w_output, "output",
      "kernel", "MACs");
  if (with_cycles) put(&o, " %14s", "cycles");
  put(&o, " %10s %7s %8s\n", "time_ms", "share", "GMAC/s");
  for (int32_t i = 0; i < n; i++) {
    const tidsp_profile_row *r = &rows[i];
    char name[NAME_WIDTH_MAX + 1], module[NAME_WIDTH_MAX + 1], output[NAME_WIDTH_MAX + 1], rate[32];
    double g = gmacs(r);
    if (g < 0) snprintf(rate, sizeof rate, "-");
    else snprintf(rate, sizeof rate, "%.2f", g);
    put(&o, "%5d  %-*s  %-*s  %-*s  %-22s %14lld", (int)i, w_name, cell(name, sizeof name, r->name, w_name),
        w_module, cell(module, sizeof module, or_dash(r->module), w_module), w_output,
        cell(output, sizeof output, or_dash(r->output), w_output), r->kernel, (long long)r->macs);
    if (with_cycles) put(&o, " %14llu", (unsigned long long)r->cycles);
    put(&o, " %10.4f %6.1f%% %8s\n", r->ms, total > 0 ? 100.0 * r->ms / total : 0.0, rate);
  }
  put(&o, "total: %d layers, %lld MACs, %.4f ms in layers", (int)n, (long long)macs, total);
  if (latency_ms > 0) put(&o, ", %.4f ms end to end", latency_ms);
  if (total > 0 && macs > 0) put(&o, ", %.2f GMAC/s", (double)macs / (total * 1e-3) / 1e9);
  put(&o, "\n");
  return finish(&o);
}

/* A CSV field: quoted (doubled quotes inside) when it holds , " or a line
 * break. */
static void csv_field(out *o, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    put(o, "%s", s);
    return;
  }
  put(o, "\"");
  for (; *s; s++) {
    if (*s == '"') put(o, "\"");
    put(o, "%c", *s);
  }
  put(o, "\"");
}

size_t tidsp_profile_format_csv(char *buf, size_t size, const tidsp_profile_row *rows, int32_t n,
                                int32_t with_cycles) {
  out o = {buf, size, 0};
  double total = total_ms(rows, n);
  put(&o, "index,layer,module,output,kernel,macs,%stime_ms,share,gmac_per_s\n", with_cycles ? "cycles," : "");
  for (int32_t i = 0; i < n; i++) {
    const tidsp_profile_row *r = &rows[i];
    put(&o, "%d,", (int)i);
    csv_field(&o, r->name);
    put(&o, ",");
    csv_field(&o, text(r->module));
    put(&o, ",");
    csv_field(&o, text(r->output));
    put(&o, ",");
    csv_field(&o, r->kernel);
    put(&o, ",%lld,", (long long)r->macs);
    if (with_cycles) put(&o, "%llu,", (unsigned long long)r->cycles);
    put(&o, "%.6f,%.6f,", r->ms, total > 0 ? r->ms / total : 0.0);
    double g = gmacs(r);
    if (g >= 0) put(&o, "%.4f", g);
    put(&o, "\n");
  }
  return finish(&o);
}
