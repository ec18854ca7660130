/*
 * cstatic run DIR --input X.npy … --output Y.npy … [--repeat N]
 *             [--profile] [--profile-csv FILE] [--profile-svg FILE]
 *
 * Builds DIR's C for the host and loads it (host_model.c), reads the
 * inputs, and runs model_run (the model's own dtypes) on them. An input
 * batch k times the model's (same k for every input) runs k times on
 * consecutive slices, the outputs concatenated along axis 0. Everything is
 * allocated before the first inference; the model itself allocates
 * nothing.
 *
 * --profile reads the model's per-layer table (-profile-layers=1): its
 * counters are reset before each run and read after it, and each layer's
 * time is the median over the timed runs (the warm-up excluded).
 *
 * --max-memory bounds what the run allocates on the word of its files:
 * the inputs, weights.bin, the arena, the L2 scratch and the outputs are
 * counted against it, each before it is allocated.
 *
 * One function per step (run_steps lists them): parse_args, load the
 * model, check_io, read_inputs, check_budget, prepare the model,
 * alloc_outputs, run_all, report_latency, report_profile, write_outputs.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "dma_trace.h"
#include "host_model.h"
#include "npy.h"

static const char usage[] =
    "usage: cstatic run DIR --input X.npy [--input ...] --output Y.npy [--output ...]\n"
    "                   [--repeat N] [--profile] [--profile-csv FILE] [--profile-svg FILE]\n"
    "\n"
    "Build a compiled model (DIR from 'cstatic compile') for this machine and\n"
    "run it on .npy inputs, one --input per model input and one --output per\n"
    "model output, in order. Inputs and outputs use the model's own dtypes\n"
    "(e.g. float32). An input whose first dimension is k times the model's\n"
    "batch runs the model k times and concatenates the outputs along axis 0.\n"
    "\n"
    "options:\n"
    "  -i, --input FILE    a .npy input (repeat for each model input)\n"
    "  -o, --output FILE   a .npy output to write (repeat for each model output)\n"
    "  --repeat N          after one warm-up, time N more inferences and print\n"
    "                      'latency_ms: <median>'\n"
    "  --profile           print per-layer times (layer, kernel, MACs, time, share,\n"
    "                      GMAC/s), the median over the --repeat runs; the model\n"
    "                      must be compiled with -t \"c_static_lib -profile-layers=1\"\n"
    "  --profile-csv FILE  write the per-layer table as CSV (implies profiling)\n"
    "  --profile-svg FILE  write a bar chart of the layer times as SVG\n"
    "  --dma-trace FILE    write the DMA copies and staged layer calls of the first\n"
    "                      inference as a Chrome trace (JSON: Perfetto,\n"
    "                      chrome://tracing) and print the share of DMA time\n"
    "                      hidden behind compute (-mcpu=c7x models: DMA-tiled or\n"
    "                      staged layers)\n"
    "  --dma-svg FILE      draw that timeline as SVG (DMA queues above the layer\n"
    "                      calls)\n"
    "  --max-memory SIZE   the most memory the inputs, weights, arena and outputs\n"
    "                      may take together (bytes or K/M/G suffixed, default 4G);\n"
    "                      checked before anything is allocated\n"
    "  -h, --help          this text\n";

enum { MAX_IO = 64 };

typedef struct run_args {
  const char *dir;
  const char *in_paths[MAX_IO], *out_paths[MAX_IO];
  int n_in, n_out;
  long repeat; /* timed runs after the warm-up; 0: one untimed run */
  int profile; /* print the table */
  const char *profile_csv, *profile_svg;
  const char *dma_trace; /* --dma-trace */
  const char *dma_svg;   /* --dma-svg */
  size_t max_memory; /* --max-memory */
} run_args;

/* The run's buffers: inputs as read, outputs k slices long, and per run
 * the end-to-end time and each layer's counter. */
typedef struct run_state {
  cs_npy x[MAX_IO];
  void *y[MAX_IO];
  int64_t k; /* model batches per input */
  long runs; /* warm-up included */
  size_t left; /* what --max-memory leaves */
  cs_dma_trace trace;    /* --dma-trace, of the first run */
  double *times;         /* [runs] ms */
  uint64_t *layer_times; /* [runs][layers], clock units */
} run_state;

static int profiling(const run_args *a) { return a->profile || a->profile_csv || a->profile_svg; }

/* Returns -1 when parsing went on, else the exit status to return. */
static int parse_args(int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->max_memory = CS_MEM_LIMIT_DEFAULT;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if (cs_cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return CS_EXIT_OK;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--input", "-i", &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--input needs a .npy file");
      if (a->n_in == MAX_IO) return cs_cli_usage_error("run", "more than %d inputs", MAX_IO);
      a->in_paths[a->n_in++] = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--output", "-o", &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--output needs a .npy file");
      if (a->n_out == MAX_IO) return cs_cli_usage_error("run", "more than %d outputs", MAX_IO);
      a->out_paths[a->n_out++] = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--repeat", NULL, &v))) {
      char *end;
      errno = 0;
      a->repeat = r < 0 ? -1 : strtol(v, &end, 10);
      if (r < 0 || errno || *end || a->repeat < 1 || a->repeat > 1000000)
        return cs_cli_usage_error("run", "--repeat needs a count in [1, 1000000]");
    } else if ((r = cs_cli_opt(argc, argv, &i, "--max-memory", NULL, &v))) {
      if (r < 0 || !cs_cli_parse_bytes(v, &a->max_memory))
        return cs_cli_usage_error("run", "--max-memory needs a size (bytes, or e.g. 512M, 4G)");
    } else if (!strcmp(argv[i], "--profile")) {
      a->profile = 1;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--profile-csv", NULL, &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--profile-csv needs a file name");
      a->profile_csv = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--dma-trace", NULL, &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--dma-trace needs a file name");
      a->dma_trace = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--dma-svg", NULL, &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--dma-svg needs a file name");
      a->dma_svg = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--profile-svg", NULL, &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--profile-svg needs a file name");
      a->profile_svg = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cs_cli_usage_error("run", "unknown option %s", argv[i]);
    } else if (!a->dir) {
      a->dir = argv[i];
    } else {
      return cs_cli_usage_error("run", "unexpected argument %s", argv[i]);
    }
  }
  if (!a->dir) return cs_cli_usage_error("run", "no model directory given");
  if (!cs_fs_is_dir(a->dir)) return cs_cli_fail("model directory %s does not exist", a->dir);
  return -1;
}

/* The arguments fit the model: as many files as inputs and outputs, and a
 * profile table when one is asked for. */
static int check_io(const run_args *a, const tidsp_model_desc *m) {
  if (a->n_in != m->n_inputs)
    return cs_cli_fail("model '%s' has %d input%s, got %d --input", m->name, m->n_inputs,
                       m->n_inputs == 1 ? "" : "s", a->n_in);
  if (profiling(a) && !m->profile)
    return cs_cli_fail("model '%s' in %s was not compiled with per-layer profiling (compile it with "
                       "-t \"c_static_lib -profile-layers=1\")", m->name, a->dir);
  if (a->n_out != m->n_outputs)
    return cs_cli_fail("model '%s' has %d output%s, got %d --output", m->name, m->n_outputs,
                       m->n_outputs == 1 ? "" : "s", a->n_out);
  return CS_EXIT_OK;
}

static void shape_text(char *buf, size_t n, int rank, const int64_t *shape) {
  size_t len = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < rank && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (len < n) snprintf(buf + len, n - len, "%s)", rank == 1 ? "," : "");
}

/* k such that x is k model batches of input `info`, or 0 with a message. */
static int64_t batch_factor(const cs_npy *x, const tidsp_tensor_info *info, int idx,
                            const char *path) {
  char want[256], got[256];
  shape_text(want, sizeof want, info->rank, info->shape);
  shape_text(got, sizeof got, x->rank, x->shape);
  /* bfloat16 arrives as its bits in a uint16 array (numpy has no bf16). */
  int bf16_bits = x->dtype == TIDSP_DTYPE_U16 && info->dtype == TIDSP_DTYPE_BF16;
  if (x->dtype != info->dtype && !bf16_bits) {
    cs_cli_fail("input %d '%s' (%s): expected dtype %s, got %s", idx, info->name, path,
                cs_npy_dtype_name(info->dtype), x->dtype_name);
    return 0;
  }
  int same_tail = x->rank == info->rank;
  for (int d = 1; d < x->rank && same_tail; d++) same_tail = x->shape[d] == info->shape[d];
  /* an empty input (a 0 dimension) is one batch of itself: k·0 is 0 */
  int64_t numel = 1;
  for (int d = 0; d < info->rank; d++) numel *= info->shape[d];
  if (info->rank > 0 && numel == 0) {
    if (same_tail && x->shape[0] == info->shape[0]) return 1;
    cs_cli_fail("input %d '%s' (%s): expected shape %s, got %s", idx, info->name, path, want, got);
    return 0;
  }
  if (!same_tail || (info->rank == 0 && x->rank != 0) || (info->rank > 0 && info->shape[0] <= 0) ||
      (info->rank > 0 && x->shape[0] % info->shape[0] != 0) || (info->rank > 0 && x->shape[0] == 0)) {
    cs_cli_fail("input %d '%s' (%s): expected shape %s%s, got %s", idx, info->name, path, want,
                info->rank > 0 ? " (or a multiple of its first dimension)" : "", got);
    return 0;
  }
  return info->rank == 0 ? 1 : x->shape[0] / info->shape[0];
}

/* Read every input and agree on one batch factor k. */
static int read_inputs(const run_args *a, const tidsp_model_desc *m, run_state *s) {
  for (int i = 0; i < a->n_in; i++) {
    if (cs_npy_read(a->in_paths[i], s->left, &s->x[i]) != CS_OK) return cs_cli_fail("%s", cs_error_message());
    s->left -= s->x[i].nbytes;
    int64_t ki = batch_factor(&s->x[i], &m->inputs[i], i, a->in_paths[i]);
    if (ki == 0) return CS_EXIT_FAIL;
    if (i == 0) s->k = ki;
    else if (ki != s->k)
      return cs_cli_fail("input %d '%s' (%s) holds %lld batches but input 0 holds %lld", i, m->inputs[i].name,
                         a->in_paths[i], (long long)ki, (long long)s->k);
  }
  if (s->k > 1)
    for (int j = 0; j < a->n_out; j++)
      if (m->outputs[j].rank == 0)
        return cs_cli_fail("output %d '%s' is a scalar: cannot concatenate %lld batches", j, m->outputs[j].name,
                           (long long)s->k);
  return CS_EXIT_OK;
}

/* Take n bytes out of what the memory limit leaves, or say who wanted
 * more (one line, before the allocation). */
static int reserve(const run_args *a, run_state *s, uint64_t n, const char *what) {
  if (n <= s->left) {
    s->left -= (size_t)n;
    return 1;
  }
  char x[32], y[32];
  cs_cli_fail("%s needs %s (%llu bytes), more than the memory limit of %s leaves (--max-memory)", what,
              cs_bytes_text(n, x, sizeof x), (unsigned long long)n, cs_bytes_text(a->max_memory, y, sizeof y));
  return 0;
}

/* What preparing the model will allocate (weights.bin, the arena, the L2
 * scratch), against the limit, before it is allocated. */
static int check_budget(const run_args *a, const tidsp_model_desc *m, run_state *s) {
  char what[4200];
  if (!m->weights_embedded) {
    struct stat ws;
    snprintf(what, sizeof what, "%s/weights.bin", a->dir);
    if (stat(what, &ws) == 0 && !reserve(a, s, (uint64_t)ws.st_size, what)) return CS_EXIT_FAIL;
  }
  snprintf(what, sizeof what, "model '%s': the arena", m->name);
  if (!reserve(a, s, m->arena_size, what)) return CS_EXIT_FAIL;
  snprintf(what, sizeof what, "model '%s': the L2 scratch", m->name);
  if (!reserve(a, s, m->l2_size, what)) return CS_EXIT_FAIL;
  return CS_EXIT_OK;
}

/* Output buffers k slices long, and the timing tables. */
static int alloc_outputs(const run_args *a, const tidsp_model_desc *m, run_state *s) {
  for (int j = 0; j < a->n_out; j++) {
    char what[300];
    snprintf(what, sizeof what, "output %d '%s' (%lld batches)", j, m->outputs[j].name, (long long)s->k);
    uint64_t bytes = m->outputs[j].nbytes;
    bytes = s->k > 1 && bytes > UINT64_MAX / (uint64_t)s->k ? UINT64_MAX : bytes * (uint64_t)s->k;
    if (!reserve(a, s, bytes, what)) return CS_EXIT_FAIL;
    if (posix_memalign(&s->y[j], 64, m->outputs[j].nbytes * (size_t)s->k + 1) != 0) {
      s->y[j] = NULL;
      return cs_cli_fail("out of memory for output %d", j);
    }
  }
  s->runs = a->repeat > 0 ? a->repeat + 1 : 1;
  s->times = calloc((size_t)s->runs, sizeof *s->times);
  int n_layers = profiling(a) && m->profile->n_layers > 0 ? m->profile->n_layers : 1;
  if (profiling(a)) s->layer_times = calloc((size_t)s->runs * (size_t)n_layers, sizeof *s->layer_times);
  if (!s->times || (profiling(a) && !s->layer_times)) return cs_cli_fail("out of memory");
  return CS_EXIT_OK;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Every run: one pass over the k slices is one inference of the whole
 * input; its time and, when profiling, each layer's counter are kept. */
static int run_all(const run_args *a, const cs_host_model *hm, run_state *s) {
  const tidsp_model_desc *m = hm->desc;
  const tidsp_profile_table *prof = profiling(a) ? m->profile : NULL;
  for (long r = 0; r < s->runs; r++) {
    if (prof) tidsp_profile_reset(prof);
    double t0 = now_ms();
    for (int64_t slice = 0; slice < s->k; slice++) {
      const void *in[MAX_IO];
      void *out[MAX_IO];
      for (int i = 0; i < a->n_in; i++) in[i] = (const char *)s->x[i].data + (size_t)slice * m->inputs[i].nbytes;
      for (int j = 0; j < a->n_out; j++) out[j] = (char *)s->y[j] + (size_t)slice * m->outputs[j].nbytes;
      if (cs_host_model_run(hm, in, out) != CS_OK) {
        if (s->k > 1)
          return cs_cli_fail("%s (on batch slice %lld of %lld)", cs_error_message(), (long long)slice,
                             (long long)s->k);
        return cs_cli_fail("%s", cs_error_message());
      }
    }
    s->times[r] = now_ms() - t0;
    if (r == 0 && (a->dma_trace || a->dma_svg) &&
        cs_dma_trace_finish(&s->trace, a->dma_trace, a->dma_svg, m->name) != CS_OK)
      return cs_cli_fail("%s", cs_error_message());
    for (int l = 0; prof && l < prof->n_layers; l++)
      s->layer_times[(size_t)r * (size_t)prof->n_layers + (size_t)l] = prof->layers[l].total;
  }
  return CS_EXIT_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static double median(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The runs the reports use: all runs after the warm-up, or the only run
 * without --repeat. */
static long first_timed(const run_args *a) { return a->repeat > 0 ? 1 : 0; }

static void report_latency(const run_args *a, run_state *s) {
  if (a->repeat <= 0) return;
  double *timed = malloc((size_t)a->repeat * sizeof *timed);
  if (!timed) return;
  memcpy(timed, s->times + 1, (size_t)a->repeat * sizeof *timed);
  printf("latency_ms: %.4f\n", median(timed, a->repeat));
  free(timed);
}

/* Each layer's median over the timed runs, then the table, CSV and SVG. */
static int report_profile(const run_args *a, const tidsp_model_desc *m, run_state *s) {
  const tidsp_profile_table *prof = profiling(a) ? m->profile : NULL;
  if (!prof) return CS_EXIT_OK;
  int n_layers = prof->n_layers;
  long first = first_timed(a), n_runs = s->runs - first;
  tidsp_profile_row *rows = calloc((size_t)(n_layers > 0 ? n_layers : 1), sizeof *rows);
  double *column = calloc((size_t)s->runs, sizeof *column);
  int rc = CS_EXIT_OK;
  if (!rows || !column) {
    rc = cs_cli_fail("out of memory");
    goto done;
  }
  /* A c7x build counts C7x cycles (its <c7x.h> time-stamp counter): the
   * table shows them beside the time. */
  int cycles = strcmp(prof->clock_unit, "cycles") == 0;
  double to_ms = tidsp_profile_unit_ms(prof->clock_unit);
  if (to_ms == 0.0) {
    rc = cs_cli_fail("model '%s': profile clock unit '%s' is neither ns nor cycles", m->name, prof->clock_unit);
    goto done;
  }
  for (int l = 0; l < n_layers; l++) {
    for (long r = 0; r < n_runs; r++)
      column[r] = (double)s->layer_times[(size_t)(r + first) * (size_t)n_layers + (size_t)l];
    double units = median(column, n_runs);
    rows[l].name = prof->layers[l].name;
    rows[l].module = prof->layers[l].module;
    rows[l].output = prof->layers[l].output;
    rows[l].kernel = prof->layers[l].kernel;
    rows[l].macs = prof->layers[l].macs * s->k;
    rows[l].ms = units * to_ms;
    rows[l].cycles = cycles ? (uint64_t)(units + 0.5) : 0;
  }
  memcpy(column, s->times + first, (size_t)n_runs * sizeof *column);
  double latency = median(column, n_runs);
  if (a->profile) cs_profile_print(stdout, rows, n_layers, latency, cycles);
  if (a->profile_csv && cs_profile_write_csv(a->profile_csv, rows, n_layers, cycles) != CS_OK)
    rc = cs_cli_fail("%s", cs_error_message());
  else if (a->profile_svg && cs_profile_write_svg(a->profile_svg, rows, n_layers, m->name) != CS_OK)
    rc = cs_cli_fail("%s", cs_error_message());
done:
  free(rows);
  free(column);
  return rc;
}

static int write_outputs(const run_args *a, const tidsp_model_desc *m, const run_state *s) {
  for (int j = 0; j < a->n_out; j++) {
    const tidsp_tensor_info *o = &m->outputs[j];
    int64_t shape[TIDSP_MAX_RANK];
    for (int d = 0; d < o->rank; d++) shape[d] = o->shape[d];
    if (o->rank > 0) shape[0] *= s->k;
    if (cs_npy_write(a->out_paths[j], o->dtype, o->rank, shape, s->y[j]) != CS_OK)
      return cs_cli_fail("%s", cs_error_message());
  }
  return CS_EXIT_OK;
}

/* The steps in order; the first failure's message is printed. */
static int run_steps(const run_args *a, cs_host_model *hm, run_state *s) {
  int rc;
  if (cs_host_model_load(a->dir, hm) != CS_OK) return cs_cli_fail("%s", cs_error_message());
  if ((rc = check_io(a, hm->desc)) != CS_EXIT_OK) return rc;
  if ((rc = read_inputs(a, hm->desc, s)) != CS_EXIT_OK) return rc;
  if ((rc = check_budget(a, hm->desc, s)) != CS_EXIT_OK) return rc;
  if (cs_host_model_prepare(hm, a->dir) != CS_OK) return cs_cli_fail("%s", cs_error_message());
  if ((rc = alloc_outputs(a, hm->desc, s)) != CS_EXIT_OK) return rc;
  if ((a->dma_trace || a->dma_svg) && cs_dma_trace_start(&s->trace, hm->so, hm->desc->name, 1 << 16) != CS_OK)
    return cs_cli_fail("%s", cs_error_message());
  if ((rc = run_all(a, hm, s)) != CS_EXIT_OK) return rc;
  report_latency(a, s);
  if ((rc = report_profile(a, hm->desc, s)) != CS_EXIT_OK) return rc;
  return write_outputs(a, hm->desc, s);
}

int cs_cmd_run(int argc, char **argv) {
  run_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0) return rc;
  cs_host_model hm;
  run_state s;
  memset(&hm, 0, sizeof hm);
  memset(&s, 0, sizeof s);
  s.k = 1;
  s.left = a.max_memory;
  rc = run_steps(&a, &hm, &s);
  for (int i = 0; i < a.n_in; i++) cs_npy_free(&s.x[i]);
  for (int j = 0; j < MAX_IO; j++) free(s.y[j]);
  free(s.times);
  free(s.layer_times);
  cs_dma_trace_free(&s.trace);
  cs_host_model_close(&hm);
  return rc;
}
