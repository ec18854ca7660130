/*
 * dma_trace.c — `cstatic run --dma-trace FILE` (dma_trace.h).
 *
 * The overlap figure: DMA busy time is the union of the copies' [start,
 * end) intervals (one copy thread: they do not overlap, but the union is
 * what holds for any engine); hidden is the part of it inside the union
 * of the layers' [start, end) that ran on another CPU than the copy
 * (hidden_time). Unions are built by sorting the intervals and merging;
 * an intersection walks two merged lists.
 */
#define _POSIX_C_SOURCE 200809L

#include "dma_trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/json.h"

cs_status cs_dma_trace_start(cs_dma_trace *t, void *so, const char *model, int32_t capacity) {
  memset(t, 0, sizeof *t);
  *(void **)&t->bind = dlsym(so, "tidsp_dma_trace_bind");
  *(void **)&t->count = dlsym(so, "tidsp_dma_trace_count");
  *(void **)&t->wait = dlsym(so, "tidsp_dma_wait");
  if (!t->bind || !t->count || !t->wait)
    return cs_error(CS_ERR_USAGE,
                    "--dma-trace: model '%s' makes no DMA copies (tile or stage it into L2: -mcpu=c7x, or "
                    "-mcpu=c7x -mmalib=1)", model);
  t->events = calloc((size_t)capacity, sizeof *t->events);
  if (!t->events) return cs_error(CS_ERR_NOMEM, "--dma-trace: out of memory for %d events", (int)capacity);
  t->capacity = capacity;
  t->bind(t->events, capacity);
  return CS_OK;
}

typedef struct ival {
  uint64_t a, b;
} ival;

static int cmp_ival(const void *x, const void *y) {
  const ival *p = x, *q = y;
  return (p->a > q->a) - (p->a < q->a);
}

/* Sort and merge v[0..n) in place; returns the merged count. */
static int32_t merge(ival *v, int32_t n) {
  if (n == 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_ival);
  int32_t m = 0;
  for (int32_t i = 1; i < n; i++) {
    if (v[i].a <= v[m].b) {
      if (v[i].b > v[m].b) v[m].b = v[i].b;
    } else {
      v[++m] = v[i];
    }
  }
  return m + 1;
}

/* Whether a copy on CPU a runs beside a call on CPU b (TIDSP_DMA_CPU_*
 * when negative): on two different CPUs, or on an engine that names none
 * (a board's DMA); never when either moved between its start and end. */
static int beside(int32_t a, int32_t b) {
  if (a == TIDSP_DMA_CPU_MOVED || b == TIDSP_DMA_CPU_MOVED) return 0;
  if (a == TIDSP_DMA_CPU_UNKNOWN || b == TIDSP_DMA_CPU_UNKNOWN) return 1;
  return a != b;
}

/* Append to out the parts of the merged lists x[0..nx) and y[0..ny) that
 * overlap; returns the new count. */
static int32_t intersect(const ival *x, int32_t nx, const ival *y, int32_t ny, ival *out, int32_t n) {
  for (int32_t i = 0, k = 0; i < nx && k < ny;) {
    uint64_t a = x[i].a > y[k].a ? x[i].a : y[k].a;
    uint64_t b = x[i].b < y[k].b ? x[i].b : y[k].b;
    if (b > a) out[n++] = (ival){a, b};
    if (x[i].b < y[k].b) i++;
    else k++;
  }
  return n;
}

/* Hidden: the time some copy moves while some layer computes beside it
 * (beside(): a copy thread that preempts the model on its own CPU hides
 * nothing). Copies and calls are grouped by CPU; each group of copies is
 * intersected with the union of the calls beside it, and the pieces'
 * union is the hidden time. */
static uint64_t hidden_time(const tidsp_dma_event *ev, int32_t n, ival *dma, ival *cpu, ival *pieces) {
  int32_t cpus[64], n_cpus = 0, n_pieces = 0;
  for (int32_t i = 0; i < n; i++) { /* the copies' CPUs */
    const tidsp_dma_event *e = &ev[i];
    if (e->kind != TIDSP_DMA_EV_COPY || !e->end || e->end < e->start) continue;
    int32_t j = 0;
    while (j < n_cpus && cpus[j] != e->cpu) j++;
    if (j == n_cpus) {
      if (n_cpus == 64) return 0; /* more CPUs than a host has: count nothing rather than guess */
      cpus[n_cpus++] = e->cpu;
    }
  }
  for (int32_t j = 0; j < n_cpus; j++) {
    int32_t nd = 0, nc = 0;
    for (int32_t i = 0; i < n; i++) {
      const tidsp_dma_event *e = &ev[i];
      if (!e->end || e->end < e->start) continue;
      if (e->kind == TIDSP_DMA_EV_COPY && e->cpu == cpus[j]) dma[nd++] = (ival){e->start, e->end};
      else if (e->kind != TIDSP_DMA_EV_COPY && beside(cpus[j], e->cpu)) cpu[nc++] = (ival){e->start, e->end};
    }
    /* at most n merged pieces so far (each ends at a copy's or a call's
     * end) and nd + nc new ones: pieces holds 3n */
    n_pieces = merge(pieces, intersect(dma, merge(dma, nd), cpu, merge(cpu, nc), pieces, n_pieces));
  }
  uint64_t t = 0;
  for (int32_t i = 0; i < n_pieces; i++) t += pieces[i].b - pieces[i].a;
  return t;
}

cs_dma_overlap cs_dma_trace_overlap(const tidsp_dma_event *ev, int32_t n) {
  cs_dma_overlap o;
  memset(&o, 0, sizeof o);
  size_t cap = (size_t)(n > 0 ? n : 1);
  ival *dma = calloc(cap, sizeof *dma), *cpu = calloc(cap, sizeof *cpu), *pieces = calloc(3 * cap, sizeof *pieces);
  if (!dma || !cpu || !pieces) {
    free(dma);
    free(cpu);
    free(pieces);
    return o;
  }
  uint64_t first = UINT64_MAX, last = 0;
  for (int32_t i = 0; i < n; i++) {
    const tidsp_dma_event *e = &ev[i];
    if (!e->end || e->end < e->start) continue; /* did not end: not counted */
    if (e->issue < first) first = e->issue;
    if (e->end > last) last = e->end;
    if (e->kind == TIDSP_DMA_EV_COPY) {
      dma[o.copies++] = (ival){e->start, e->end};
      o.bytes += e->bytes;
    } else {
      o.computes++;
    }
  }
  int32_t nd = merge(dma, o.copies);
  for (int32_t i = 0; i < nd; i++) o.dma_busy += dma[i].b - dma[i].a;
  o.hidden = hidden_time(ev, n, dma, cpu, pieces);
  o.span = last > first ? last - first : 0;
  free(dma);
  free(cpu);
  free(pieces);
  return o;
}

/* Chrome trace times are microseconds; the host's clock counts ns. */
static double us(uint64_t t, uint64_t t0) { return (double)(t - t0) * 1e-3; }

static int write_json(const cs_dma_trace *t, const char *path, int32_t n, int64_t dropped, uint64_t t0,
                      const cs_dma_overlap *oo, const char *model);

/* The timeline as SVG: one lane per DMA queue that copied (queue 0 on
 * top), the layer calls below them, time to the right; each bar's title
 * (a tooltip) names the copy or the layer and its times. */
static cs_status write_svg(const char *path, const tidsp_dma_event *ev, int32_t n, uint64_t t0,
                           const cs_dma_overlap *o, const char *model) {
  enum { LEFT = 90, WIDTH = 1100, LANE = 28, TOP = 40 };
  uint64_t t1 = t0 + 1;
  int used[TIDSP_DMA_QUEUES] = {0}, lane[TIDSP_DMA_QUEUES], lanes = 0;
  for (int32_t i = 0; i < n; i++) {
    if (ev[i].end > t1) t1 = ev[i].end;
    if (ev[i].kind == TIDSP_DMA_EV_COPY && ev[i].queue >= 0 && ev[i].queue < TIDSP_DMA_QUEUES) used[ev[i].queue] = 1;
  }
  for (int q = 0; q < TIDSP_DMA_QUEUES; q++) lane[q] = used[q] ? lanes++ : -1;
  FILE *f = fopen(path, "w");
  if (!f) return cs_error(CS_ERR_IO, "--dma-svg: cannot write %s: %s", path, strerror(errno));
  double scale = (double)WIDTH / (double)(t1 - t0);
  int height = TOP + (lanes + 1) * LANE + 30;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
             "font-size=\"12\">\n", LEFT + WIDTH + 20, height);
  fprintf(f, "<text x=\"4\" y=\"18\">");
  for (const char *c = model; *c; c++) /* the model's name, XML-escaped */
    fputs(*c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : (char[2]){*c, 0}, f);
  fprintf(f, ": DMA busy %.3f ms, %.1f%% hidden behind compute on another CPU; %.3f ms shown</text>\n",
          (double)o->dma_busy * 1e-6, o->dma_busy ? 100.0 * (double)o->hidden / (double)o->dma_busy : 0.0, (double)(t1 - t0) * 1e-6);
  for (int q = 0; q < TIDSP_DMA_QUEUES; q++)
    if (lane[q] >= 0)
      fprintf(f, "<text x=\"4\" y=\"%d\">DMA queue %d</text>\n", TOP + lane[q] * LANE + 17, q);
  fprintf(f, "<text x=\"4\" y=\"%d\">compute</text>\n", TOP + lanes * LANE + 17);
  for (int32_t i = 0; i < n; i++) {
    const tidsp_dma_event *e = &ev[i];
    int copy = e->kind == TIDSP_DMA_EV_COPY;
    if (copy && (e->queue < 0 || e->queue >= TIDSP_DMA_QUEUES)) continue;
    uint64_t end = e->end >= e->start ? e->end : e->start;
    double x = LEFT + (double)(e->start - t0) * scale, w = (double)(end - e->start) * scale;
    int y = TOP + (copy ? lane[e->queue] : lanes) * LANE;
    fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" stroke=\"#333\" "
               "stroke-width=\"0.3\"><title>",
            x, y + 2, w < 0.5 ? 0.5 : w, LANE - 4, copy ? (e->queue ? "#e69f00" : "#0072b2") : "#009e73");
    if (copy)
      fprintf(f, "copy q%d g%lld, %llu B", (int)e->queue, (long long)e->group, (unsigned long long)e->bytes);
    else
      for (const char *c = e->name ? e->name : "?"; *c; c++)
        fputs(*c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : (char[2]){*c, 0}, f);
    fprintf(f, ": %.1f-%.1f us", (double)(e->start - t0) * 1e-3, (double)(end - t0) * 1e-3);
    if (e->cpu >= 0) fprintf(f, ", cpu %d", (int)e->cpu);
    else if (e->cpu == TIDSP_DMA_CPU_MOVED) fputs(", moved between CPUs", f);
    fputs("</title></rect>\n", f);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3f ms</text>\n",
          LEFT, height - 8, LEFT + WIDTH, height - 8, (double)(t1 - t0) * 1e-6);
  fputs("</svg>\n", f);
  if (fclose(f) != 0) return cs_error(CS_ERR_IO, "--dma-svg: cannot write %s", path);
  return CS_OK;
}

cs_status cs_dma_trace_finish(cs_dma_trace *t, const char *path, const char *svg, const char *model) {
  for (int32_t q = 0; q < TIDSP_DMA_QUEUES; q++) t->wait(q, 0);
  int64_t dropped = 0;
  int32_t n = t->count(&dropped);
  t->bind(NULL, 0);
  t->bind = NULL; /* unbound: cs_dma_trace_free has nothing to undo */
  uint64_t t0 = UINT64_MAX;
  for (int32_t i = 0; i < n; i++)
    if (t->events[i].issue < t0) t0 = t->events[i].issue;
  cs_dma_overlap o = cs_dma_trace_overlap(t->events, n);
  if (svg) {
    cs_status st = write_svg(svg, t->events, n, n ? t0 : 0, &o, model);
    if (st != CS_OK) return st;
  }
  if (!path) path = svg;
  else if (!write_json(t, path, n, dropped, t0, &o, model)) return cs_error(CS_ERR_IO, "--dma-trace: cannot write %s: %s", path, strerror(errno));
  printf("dma trace: %d copies, %.3f MB, DMA busy %.3f ms, %.1f%% hidden behind %d layer calls%s -> %s\n",
         (int)o.copies, (double)o.bytes * 1e-6, (double)o.dma_busy * 1e-6,
         o.dma_busy ? 100.0 * (double)o.hidden / (double)o.dma_busy : 0.0, (int)o.computes,
         dropped ? " (events beyond the capacity dropped)" : "", path);
  return CS_OK;
}

/* The Chrome trace; 0 when the file cannot be written. */
static int write_json(const cs_dma_trace *t, const char *path, int32_t n, int64_t dropped, uint64_t t0,
                      const cs_dma_overlap *oo, const char *model) {
  cs_dma_overlap o = *oo;
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  cs_json j;
  cs_json_init(&j, f);
  cs_json_begin_object(&j, NULL);
  cs_json_string(&j, "displayTimeUnit", "ns");
  cs_json_begin_array(&j, "traceEvents");
  for (int32_t i = 0; i < n; i++) {
    const tidsp_dma_event *e = &t->events[i];
    char name[96];
    if (e->kind == TIDSP_DMA_EV_COPY)
      snprintf(name, sizeof name, "copy q%d g%lld %llu B", (int)e->queue, (long long)e->group,
               (unsigned long long)e->bytes);
    cs_json_begin_object(&j, NULL);
    cs_json_string(&j, "name", e->kind == TIDSP_DMA_EV_COPY ? name : (e->name ? e->name : "?"));
    cs_json_string(&j, "cat", e->kind == TIDSP_DMA_EV_COPY ? "dma" : "compute");
    cs_json_string(&j, "ph", "X");
    cs_json_int(&j, "pid", 1);
    cs_json_int(&j, "tid", e->kind == TIDSP_DMA_EV_COPY ? e->queue + 1 : 0);
    cs_json_double(&j, "ts", us(e->start, t0));
    cs_json_double(&j, "dur", e->end >= e->start ? us(e->end, e->start) : 0.0);
    if (e->kind == TIDSP_DMA_EV_COPY) {
      cs_json_begin_object(&j, "args");
      cs_json_int(&j, "queue", e->queue);
      cs_json_int(&j, "group", e->group);
      cs_json_int(&j, "bytes", (int64_t)e->bytes);
      cs_json_double(&j, "issue", us(e->issue, t0));
      cs_json_int(&j, "cpu", e->cpu);
      cs_json_end_object(&j);
    } else {
      cs_json_begin_object(&j, "args");
      cs_json_int(&j, "cpu", e->cpu); /* TIDSP_DMA_CPU_*: -1 unknown, -2 moved */
      cs_json_end_object(&j);
    }
    cs_json_end_object(&j);
  }
  cs_json_end_array(&j);
  cs_json_begin_object(&j, "cstatic");
  cs_json_string(&j, "model", model);
  cs_json_string(&j, "clock_unit", "ns");
  cs_json_int(&j, "copies", o.copies);
  cs_json_int(&j, "computes", o.computes);
  cs_json_int(&j, "bytes", (int64_t)o.bytes);
  cs_json_int(&j, "dma_busy", (int64_t)o.dma_busy);
  cs_json_int(&j, "dma_hidden", (int64_t)o.hidden);
  cs_json_double(&j, "dma_hidden_share", o.dma_busy ? (double)o.hidden / (double)o.dma_busy : 0.0);
  cs_json_int(&j, "span", (int64_t)o.span);
  cs_json_int(&j, "dropped", dropped);
  cs_json_end_object(&j);
  cs_json_end_object(&j);
  fputc('\n', f);
  return fclose(f) == 0;
}

void cs_dma_trace_free(cs_dma_trace *t) {
  if (t->bind) { /* a run that failed: unbind before the events go */
    for (int32_t q = 0; q < TIDSP_DMA_QUEUES; q++) t->wait(q, 0);
    t->bind(NULL, 0);
  }
  free(t->events);
  memset(t, 0, sizeof *t);
}
