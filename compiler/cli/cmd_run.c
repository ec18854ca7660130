/*
 * cstatic run DIR --input X.npy … --output Y.npy … [--repeat N]
 *             [--profile] [--profile-csv FILE] [--profile-svg FILE]
 *
 * Builds DIR's C for the host (cached in DIR/.build), loads it, reads
 * model_desc, checks the weights, and runs model_run (the model's own
 * dtypes) on the inputs. An input batch k times the model's (same k for
 * every input) runs k times on consecutive slices, the outputs
 * concatenated along axis 0. Everything is allocated before the first
 * inference; the model itself allocates nothing. A model that stages data
 * in L2 SRAM (model_desc.l2_size > 0, -mcpu=c7x -mmalib=1) gets a region
 * of that size, bound for all its runs.
 *
 * --profile reads the model's per-layer table (-profile-layers=1): its
 * counters are reset before each run and read after it, and each layer's
 * time is the median over the timed runs (the warm-up excluded).
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cstatic/dma.h"
#include "cstatic/model.h"
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
    "  -h, --help          this text\n";

enum { MAX_IO = 64 };

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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
  if (x->dtype != info->dtype) {
    cs_cli_fail("input %d '%s' (%s): expected dtype %s, got %s", idx, info->name, path,
                cs_npy_dtype_name(info->dtype), x->dtype_name);
    return 0;
  }
  int same_tail = x->rank == info->rank;
  for (int d = 1; d < x->rank && same_tail; d++) same_tail = x->shape[d] == info->shape[d];
  if (!same_tail || (info->rank == 0 && x->rank != 0) || (info->rank > 0 && info->shape[0] <= 0) ||
      (info->rank > 0 && x->shape[0] % info->shape[0] != 0) || (info->rank > 0 && x->shape[0] == 0)) {
    cs_cli_fail("input %d '%s' (%s): expected shape %s%s, got %s", idx, info->name, path, want,
                info->rank > 0 ? " (or a multiple of its first dimension)" : "", got);
    return 0;
  }
  return info->rank == 0 ? 1 : x->shape[0] / info->shape[0];
}

int cs_cmd_run(int argc, char **argv) {
  const char *dir = NULL, *in_paths[MAX_IO], *out_paths[MAX_IO];
  int n_in = 0, n_out = 0;
  long repeat = 0;
  int profile = 0;
  const char *profile_csv = NULL, *profile_svg = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if (cs_cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return CS_EXIT_OK;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--input", "-i", &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--input needs a .npy file");
      if (n_in == MAX_IO) return cs_cli_usage_error("run", "more than %d inputs", MAX_IO);
      in_paths[n_in++] = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--output", "-o", &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--output needs a .npy file");
      if (n_out == MAX_IO) return cs_cli_usage_error("run", "more than %d outputs", MAX_IO);
      out_paths[n_out++] = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--repeat", NULL, &v))) {
      char *end;
      errno = 0;
      repeat = r < 0 ? -1 : strtol(v, &end, 10);
      if (r < 0 || errno || *end || repeat < 1 || repeat > 1000000)
        return cs_cli_usage_error("run", "--repeat needs a count in [1, 1000000]");
    } else if (!strcmp(argv[i], "--profile")) {
      profile = 1;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--profile-csv", NULL, &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--profile-csv needs a file name");
      profile_csv = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--profile-svg", NULL, &v))) {
      if (r < 0) return cs_cli_usage_error("run", "--profile-svg needs a file name");
      profile_svg = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cs_cli_usage_error("run", "unknown option %s", argv[i]);
    } else if (!dir) {
      dir = argv[i];
    } else {
      return cs_cli_usage_error("run", "unexpected argument %s", argv[i]);
    }
  }
  if (!dir) return cs_cli_usage_error("run", "no model directory given");
  if (!cs_fs_is_dir(dir)) return cs_cli_fail("model directory %s does not exist", dir);

  int rc = CS_EXIT_FAIL;
  void *so = NULL, *weights = NULL, *arena = NULL, *l2 = NULL;
  int32_t (*l2_bind)(void *, size_t) = NULL;
  cs_npy x[MAX_IO];
  void *y[MAX_IO];
  memset(x, 0, sizeof x);
  memset(y, 0, sizeof y);
  double *times = NULL;
  uint64_t *layer_times = NULL; /* [runs][layers] */
  cs_profile_row *rows = NULL;
  double *column = NULL;
  int profiling = profile || profile_csv || profile_svg;

  char so_path[4096];
  if (cs_host_build(dir, so_path, sizeof so_path) != CS_OK) {
    cs_cli_fail("%s", cs_error_message());
    goto done;
  }
  so = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    cs_cli_fail("cannot load %s: %s", so_path, dlerror());
    goto done;
  }
  const tidsp_model_desc *m = dlsym(so, "model_desc");
  if (!m) {
    cs_cli_fail("%s has no model_desc (not built by this cstatic?)", so_path);
    goto done;
  }
  if (m->abi_version != TIDSP_MODEL_ABI_VERSION) {
    cs_cli_fail("%s: model ABI version %u, this cstatic runs %u (recompile the model)", dir,
                m->abi_version, TIDSP_MODEL_ABI_VERSION);
    goto done;
  }
  if (n_in != m->n_inputs) {
    cs_cli_fail("model '%s' has %d input%s, got %d --input", m->name, m->n_inputs,
                m->n_inputs == 1 ? "" : "s", n_in);
    goto done;
  }
  if (profiling && !m->profile) {
    cs_cli_fail("model '%s' in %s was not compiled with per-layer profiling (compile it with "
                "-t \"c_static_lib -profile-layers=1\")", m->name, dir);
    goto done;
  }
  if (n_out != m->n_outputs) {
    cs_cli_fail("model '%s' has %d output%s, got %d --output", m->name, m->n_outputs,
                m->n_outputs == 1 ? "" : "s", n_out);
    goto done;
  }

  int64_t k = 1;
  for (int i = 0; i < n_in; i++) {
    if (cs_npy_read(in_paths[i], &x[i]) != CS_OK) {
      cs_cli_fail("%s", cs_error_message());
      goto done;
    }
    int64_t ki = batch_factor(&x[i], &m->inputs[i], i, in_paths[i]);
    if (ki == 0) goto done;
    if (i == 0) k = ki;
    else if (ki != k) {
      cs_cli_fail("input %d '%s' (%s) holds %lld batches but input 0 holds %lld", i,
                  m->inputs[i].name, in_paths[i], (long long)ki, (long long)k);
      goto done;
    }
  }
  if (k > 1)
    for (int j = 0; j < n_out; j++)
      if (m->outputs[j].rank == 0) {
        cs_cli_fail("output %d '%s' is a scalar: cannot concatenate %lld batches", j,
                    m->outputs[j].name, (long long)k);
        goto done;
      }

  if (m->weights_embedded) {
    if (m->check_weights(NULL, 0) != TIDSP_OK) {
      cs_cli_fail("%s: the embedded weights fail their check", dir);
      goto done;
    }
  } else {
    char wpath[4096];
    size_t wsize = 0;
    snprintf(wpath, sizeof wpath, "%s/weights.bin", dir);
    if (cs_fs_read_aligned(wpath, m->weights_align, &weights, &wsize) != CS_OK) {
      cs_cli_fail("%s", cs_error_message());
      goto done;
    }
    int32_t st = m->check_weights(weights, wsize);
    if (st != TIDSP_OK) {
      cs_cli_fail("%s: %s (%zu bytes; the model expects %zu)", wpath, m->status_str(st), wsize,
                  m->weights_size);
      goto done;
    }
  }
  size_t align = m->arena_align < sizeof(void *) ? sizeof(void *) : m->arena_align;
  if (posix_memalign(&arena, align, m->arena_size ? m->arena_size : 1) != 0) {
    arena = NULL;
    cs_cli_fail("out of memory for the %zu-byte arena", m->arena_size);
    goto done;
  }
  if (m->l2_size > 0) {
    /* The model's .so links its own copy of the runtime (host_build.c) and
     * reads the L2 binding of that copy, not of this binary's: bind through
     * the .so's tidsp_l2_bind. It is absent only when the model never calls
     * tidsp_l2_scratch (l2.c holds both), and then there is nothing to bind. */
    *(void **)&l2_bind = dlsym(so, "tidsp_l2_bind");
    if (posix_memalign(&l2, TIDSP_L2_ALIGN, m->l2_size) != 0) {
      l2 = NULL;
      cs_cli_fail("out of memory for the model's %zu-byte L2 scratch", m->l2_size);
      goto done;
    }
    int32_t st = l2_bind ? l2_bind(l2, m->l2_size) : TIDSP_OK;
    if (st != TIDSP_OK) {
      cs_cli_fail("model '%s': binding its %zu-byte L2 scratch failed: %s", m->name, m->l2_size,
                  m->status_str(st));
      goto done;
    }
  }
  for (int j = 0; j < n_out; j++) {
    if (posix_memalign(&y[j], 64, m->outputs[j].nbytes * (size_t)k + 1) != 0) {
      y[j] = NULL;
      cs_cli_fail("out of memory for output %d", j);
      goto done;
    }
  }

  /* One pass over the k slices is one inference of the whole input. */
  long runs = repeat > 0 ? repeat + 1 : 1;
  times = calloc((size_t)runs, sizeof *times);
  const tidsp_profile_table *prof = profiling ? m->profile : NULL;
  int n_layers = prof ? prof->n_layers : 0;
  if (prof) {
    layer_times = calloc((size_t)runs * (size_t)(n_layers > 0 ? n_layers : 1), sizeof *layer_times);
    rows = calloc((size_t)(n_layers > 0 ? n_layers : 1), sizeof *rows);
    column = calloc((size_t)runs, sizeof *column);
  }
  if (!times || (prof && (!layer_times || !rows || !column))) {
    cs_cli_fail("out of memory");
    goto done;
  }
  for (long r = 0; r < runs; r++) {
    if (prof) tidsp_profile_reset(prof);
    double t0 = now_ms();
    for (int64_t s = 0; s < k; s++) {
      const void *in[MAX_IO];
      void *out[MAX_IO];
      for (int i = 0; i < n_in; i++) in[i] = (const char *)x[i].data + (size_t)s * m->inputs[i].nbytes;
      for (int j = 0; j < n_out; j++) out[j] = (char *)y[j] + (size_t)s * m->outputs[j].nbytes;
      int32_t st = m->run(m->weights_embedded ? NULL : weights, arena, in, out);
      if (st != TIDSP_OK) {
        cs_cli_fail("model '%s' failed%s: %s (status %d)", m->name, k > 1 ? " on a batch slice" : "",
                    m->status_str(st), st);
        goto done;
      }
    }
    times[r] = now_ms() - t0;
    for (int l = 0; l < n_layers; l++) layer_times[(size_t)r * (size_t)n_layers + (size_t)l] = prof->layers[l].total;
  }
  if (repeat > 0) {
    qsort(times + 1, (size_t)repeat, sizeof *times, cmp_double);
    double med = repeat % 2 ? times[1 + repeat / 2]
                            : 0.5 * (times[repeat / 2] + times[1 + repeat / 2]);
    printf("latency_ms: %.4f\n", med);
  }
  if (prof) {
    /* Median of each layer over the timed runs (all runs after the warm-up;
     * the only run without --repeat). */
    long first = repeat > 0 ? 1 : 0, n_runs = runs - first;
    double to_ms = strcmp(prof->clock_unit, "ns") == 0 ? 1e-6 : 1.0;
    for (int l = 0; l < n_layers; l++) {
      for (long r = 0; r < n_runs; r++)
        column[r] = (double)layer_times[(size_t)(r + first) * (size_t)n_layers + (size_t)l] * to_ms;
      qsort(column, (size_t)n_runs, sizeof *column, cmp_double);
      rows[l].name = prof->layers[l].name;
      rows[l].kernel = prof->layers[l].kernel;
      rows[l].macs = prof->layers[l].macs * k;
      rows[l].ms = n_runs % 2 ? column[n_runs / 2] : 0.5 * (column[n_runs / 2 - 1] + column[n_runs / 2]);
    }
    qsort(times + first, (size_t)n_runs, sizeof *times, cmp_double);
    double latency = n_runs % 2 ? times[first + n_runs / 2]
                                : 0.5 * (times[first + n_runs / 2 - 1] + times[first + n_runs / 2]);
    if (strcmp(prof->clock_unit, "ns") != 0)
      printf("profile clock unit: %s (the time columns are in %s, not ms)\n", prof->clock_unit,
             prof->clock_unit);
    if (profile) cs_profile_print(stdout, rows, n_layers, latency);
    if (profile_csv && cs_profile_write_csv(profile_csv, rows, n_layers) != CS_OK) {
      cs_cli_fail("%s", cs_error_message());
      goto done;
    }
    if (profile_svg && cs_profile_write_svg(profile_svg, rows, n_layers, m->name) != CS_OK) {
      cs_cli_fail("%s", cs_error_message());
      goto done;
    }
  }

  for (int j = 0; j < n_out; j++) {
    const tidsp_tensor_info *o = &m->outputs[j];
    int64_t shape[TIDSP_MAX_RANK];
    for (int d = 0; d < o->rank; d++) shape[d] = o->shape[d];
    if (o->rank > 0) shape[0] *= k;
    if (cs_npy_write(out_paths[j], o->dtype, o->rank, shape, y[j]) != CS_OK) {
      cs_cli_fail("%s", cs_error_message());
      goto done;
    }
  }
  rc = CS_EXIT_OK;
done:
  for (int i = 0; i < n_in; i++) cs_npy_free(&x[i]);
  for (int j = 0; j < MAX_IO; j++) free(y[j]);
  free(times);
  free(layer_times);
  free(rows);
  free(column);
  free(arena);
  if (l2_bind) l2_bind(NULL, 0);
  free(l2);
  free(weights);
  /* The model's code stays mapped until exit: nothing calls it any more,
   * and unloading first would only add an exit-order hazard. */
  (void)so;
  return rc;
}
