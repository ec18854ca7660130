/*
 * cstatic compile MODEL.onnx -o DIR: target → ONNX → passes → codegen.
 *
 * Atomic output: the files are written into a fresh sibling directory that
 * replaces DIR only once everything succeeded, so a failed compile leaves
 * an existing DIR as it was and never leaves a half-written one.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "codegen/codegen.h"
#include "codegen/module.h"
#include "codegen/ti_project.h"
#include "eval/const_eval.h"
#include "frontend/onnx.h"
#include "passes/passes.h"
#include "target.h"

static const char usage[] =
    "usage: cstatic compile MODEL.onnx -o DIR [options]\n"
    "\n"
    "Compile a quantized (QDQ) ONNX model into C: DIR/lib0.c [lib1.c ...],\n"
    "lib0.h, weights.bin (or weights.c) and manifest.json.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR      output directory; replaced only if the compile\n"
    "                        succeeds\n"
    "  -t, --target STRING   target, e.g. \"c_static_lib -mcpu=c7x -requant=q31\"\n"
    "                        (default \"c_static_lib\")\n"
    "  --weights=bin|c       weights.bin loaded at run time (default), or\n"
    "                        weights.c compiled into the model\n"
    "  --emit=c|module|runtime|ti-project\n"
    "                        C sources only (default); module: also DIR/lib0.out,\n"
    "                        the C7x firmware's loadable module (-mcpu=c7x) with\n"
    "                        weights.bin embedded; runtime: also the runtime files\n"
    "                        the model calls into (DIR/runtime/, DIR/include/), so\n"
    "                        DIR builds alone (manifest.json runtime_sources);\n"
    "                        ti-project: also the module and DIR/ti-project/, the\n"
    "                        folder TI's C7000 tools build lib0.out for the board\n"
    "                        from (make CGT=...)\n"
    "  --outputs NAME[,NAME...]|all-quantized\n"
    "                        also output these intermediate tensors (after the\n"
    "                        model's own outputs; all-quantized: every\n"
    "                        QuantizeLinear output), to compare layer by layer\n"
    "                        (python -m cstatic.layer_error)\n"
    "  --dump-ir=after-all   print the IR after every pass (stdout)\n"
    "  --max-memory SIZE     the most memory the model may make the compiler\n"
    "                        allocate (its constants, each tensor; bytes or\n"
    "                        K/M/G suffixed, default 4G): a larger model is\n"
    "                        refused by name before anything is allocated\n"
    "  -q, --quiet           print nothing on success\n"
    "  -h, --help            this text\n"
    "\n"
    "target attributes (-t \"c_static_lib -NAME=VALUE ...\"):\n";

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void human_bytes(size_t n, char *buf, size_t size) {
  if (n < 10 * 1024) snprintf(buf, size, "%zu B", n);
  else if (n < 10 * 1024 * 1024) snprintf(buf, size, "%.1f KiB", (double)n / 1024);
  else snprintf(buf, size, "%.1f MiB", (double)n / (1024.0 * 1024.0));
}

/* Move tmp to dir, replacing an existing dir only now that tmp is
 * complete. */
static cs_status install(const char *tmp, const char *dir) {
  if (!cs_fs_exists(dir)) {
    if (rename(tmp, dir) != 0)
      return cs_error(CS_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    return CS_OK;
  }
  char old[4096];
  cs_status st = cs_fs_make_sibling_temp(dir, "old", old, sizeof old);
  if (st != CS_OK) return st;
  if (rename(dir, old) != 0) {
    int e = errno;
    cs_fs_remove_tree(old);
    return cs_error(CS_ERR_IO, "cannot replace %s: %s", dir, strerror(e));
  }
  if (rename(tmp, dir) != 0) {
    int e = errno;
    rename(old, dir); /* put the previous output back */
    return cs_error(CS_ERR_IO, "cannot replace %s: %s", dir, strerror(e));
  }
  cs_fs_remove_tree(old);
  return CS_OK;
}

/* --emit=module: the compiler and headers `cstatic run` uses, or
 * $CS_MODULE_CC: a cross compiler for a firmware emulator that runs on
 * another machine (aarch64-linux-gnu-gcc for the board's ARM64 host). */
static cs_status build_module(const char *dir) {
  cs_toolchain tc;
  cs_status st = cs_toolchain_find(&tc);
  if (st != CS_OK) return st;
  const char *cc = getenv("CS_MODULE_CC");
  cs_module_options mo = {.cc = cc && *cc ? cc : tc.cc, .include_dir = tc.include_dir};
  return cs_module_build(dir, &mo);
}

/* --emit=ti-project: the TI build folder, from the module just built. */
static cs_status write_ti_project(const char *dir, const char *model, const cs_target *t, int *n_imports) {
  cs_toolchain tc;
  cs_status st = cs_toolchain_find(&tc);
  if (st != CS_OK) return st;
  char target[512];
  cs_target_format(t, target, sizeof target);
  const char *base = strrchr(model, '/');
  cs_ti_project_options o = {.include_dir = tc.include_dir, .target = target, .model_name = base ? base + 1 : model};
  return cs_ti_project_write(dir, &o, n_imports);
}

/* -mmalib=1: what each conv/matmul/add/pool became, then the summary. */
static void print_offload(const cs_offload_report *r, const cs_codegen_stats *stats) {
  char summary[256];
  cs_mmalib_report_summary(r, summary, sizeof summary);
  printf("  mmalib offload: %s\n", summary);
  int pad_layers;
  int64_t pad_macs, pad_bytes;
  cs_offload_pad_totals(r, &pad_layers, &pad_macs, &pad_bytes);
  int64_t model = stats->macs - pad_macs;
  printf("  MACs on the MMA: %.1f%% (%lld of %lld); channel padding: %d layer%s, +%lld MACs (x%.3f), +%lld bytes\n",
         model > 0 ? 100.0 * (double)(stats->macs_mma - pad_macs) / (double)model : 0.0,
         (long long)(stats->macs_mma - pad_macs), (long long)model, pad_layers, pad_layers == 1 ? "" : "s",
         (long long)pad_macs, model > 0 ? (double)stats->macs / (double)model : 1.0, (long long)pad_bytes);
  for (int i = 0; i < r->n_pad; i++) {
    const cs_offload_pad *p = &r->pads[i];
    if (p->padded) /* a form the rule did not choose (the exact path's 3x3 tiles) says so */
      printf("    padded '%s' %s %d -> %d: +%lld MACs, +%lld bytes (est. %.0f MMA cycles vs %.0f scalar%s)\n",
             p->layer, p->what ? p->what : "C_out", p->c_out, p->c_pad, (long long)p->macs_added,
             (long long)(p->weight_bytes_added + p->act_bytes_added), p->mma_cycles, p->scalar_cycles,
             p->mma_cycles > p->scalar_cycles ? ": above the core's; the exact path's form, not gated by the rule"
                                              : "");
    else
      printf("    not padded '%s' %s %d -> %d: %s (est. %.0f MMA cycles vs %.0f scalar)\n", p->layer,
             p->what ? p->what : "C_out", p->c_out, p->c_pad,
             p->over_budget ? "over the padding budget (-mmalib-pad-budget)" : "does not pay", p->mma_cycles,
             p->scalar_cycles);
  }
  for (int i = 0; i < r->n; i++) {
    const cs_offload_entry *e = &r->entries[i];
    if (e->kernel[0] && e->bound_full_scale_lsb >= 0)
      printf("    %s '%s' -> %s (scale/shift rel err %.2g; error <= 1 LSB + %.2g*|y|, %.0f LSB at full scale)\n",
             cs_offload_kind_name(e->kind), e->layer, e->kernel, e->scale_rel_err, e->scale_rel_err,
             e->bound_full_scale_lsb);
    else if (e->kernel[0] && e->scale_rel_err >= 0)
      printf("    %s '%s' -> %s (scale/shift rel err %.2g)\n", cs_offload_kind_name(e->kind), e->layer, e->kernel,
             e->scale_rel_err);
    else if (e->kernel[0]) /* no requantization (e.g. the int16 legalize path) */
      printf("    %s '%s' -> %s\n", cs_offload_kind_name(e->kind), e->layer, e->kernel);
    else
      printf("    %s '%s': %s\n", cs_offload_kind_name(e->kind), e->layer, e->reason);
  }
}

/* A model without QuantizeLinear/DequantizeLinear compiles into float
 * kernels only: legal, but rarely what someone compiling for a DSP or a
 * microcontroller meant, so it is said once (-allow-float=1: intended). */
static void warn_if_float_model(const cs_graph *g, const char *model, const cs_target *t) {
  if (t->allow_float) return;
  int float_compute = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->op == CS_OP_QUANTIZE_LINEAR || n->op == CS_OP_DEQUANTIZE_LINEAR) return;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && cs_graph_value(g, n->outputs[k])->dtype == CS_DTYPE_F32) float_compute = 1;
  }
  if (!float_compute) return;
  cs_cli_warn("%s is a float model (no QuantizeLinear/DequantizeLinear): every layer runs in float; "
              "quantize it with cstatic.quantize_onnx(model, calibration) or PyTorch PT2E "
              "(cstatic.quantize_pt2e, cstatic.export_qdq_onnx), or compile with -t \"... -allow-float=1\" "
              "if float is intended",
              model);
}

/* The padding budget's rounds: at most this many runs of the passes. */
enum { BUDGET_ROUNDS = 8 };

/* Import the model and run the passes; with -mmalib=1 over the padding
 * budget, again with the rewrites it refuses (cs_mm_budget_refuse: target
 * points at *refused, which the caller frees) until the MACs fit or
 * nothing more can be refused. *out: the lowered graph, NULL on error. */
static cs_status lower(const char *model, const cs_onnx_options *lo, const char *keep_outputs, cs_target *target,
                       FILE *dump, cs_offload_pad **refused, cs_graph **out) {
  *out = NULL;
  for (int round = 0;; round++) {
    cs_graph *g = NULL;
    cs_status st = cs_onnx_load_with(model, lo, &g);
    if (st == CS_OK && keep_outputs) st = cs_onnx_keep_outputs(g, keep_outputs);
    if (st == CS_OK && round == 0) warn_if_float_model(g, model, target);
    if (st == CS_OK && dump && round)
      fprintf(dump, "// ---- padding budget: round %d, %d rewrites refused ----\n", round + 1, target->n_mm_refused);
    if (st == CS_OK) st = cs_passes_run(g, target, dump);
    int more = 0, n = target->n_mm_refused;
    if (st == CS_OK && target->mmalib && round + 1 < BUDGET_ROUNDS) {
      more = cs_mm_budget_refuse(&g->offload, cs_codegen_graph_macs(g), target->mmalib_pad_budget, refused, &n);
      if (more < 0) st = CS_ERR_NOMEM;
      target->mm_refused = *refused;
      target->n_mm_refused = n;
    }
    if (st != CS_OK) {
      cs_graph_free(g);
      return st;
    }
    if (!more) {
      *out = g;
      return CS_OK;
    }
    cs_graph_free(g);
  }
}

int cs_cmd_compile(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *target_str = NULL, *weights = "bin", *dump = NULL;
  const char *keep_outputs = NULL;
  int emit_module = 0, emit_ti = 0, emit_runtime = 0;
  int quiet = 0;
  size_t max_memory = CS_MEM_LIMIT_DEFAULT;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int r;
    if (cs_cli_is_help(argv[i])) {
      fputs(usage, stdout);
      cs_target_print_attributes(stdout);
      return CS_EXIT_OK;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--output", "-o", &v))) {
      if (r < 0) return cs_cli_usage_error("compile", "-o needs a directory");
      out = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--target", "-t", &v))) {
      if (r < 0) return cs_cli_usage_error("compile", "-t needs a target string");
      target_str = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--weights", NULL, &v))) {
      if (r < 0 || (strcmp(v, "bin") && strcmp(v, "c")))
        return cs_cli_usage_error("compile", "--weights must be 'bin' or 'c'");
      weights = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--emit", NULL, &v))) {
      if (r < 0 || (strcmp(v, "c") && strcmp(v, "module") && strcmp(v, "runtime") && strcmp(v, "ti-project")))
        return cs_cli_usage_error("compile", "--emit must be 'c', 'module', 'runtime' or 'ti-project'");
      emit_ti = !strcmp(v, "ti-project");
      emit_module = emit_ti || !strcmp(v, "module");
      emit_runtime = !strcmp(v, "runtime");
    } else if ((r = cs_cli_opt(argc, argv, &i, "--outputs", NULL, &v))) {
      if (r < 0 || !*v)
        return cs_cli_usage_error("compile", "--outputs needs tensor names (NAME[,NAME...]) or 'all-quantized'");
      keep_outputs = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--dump-ir", NULL, &v))) {
      if (r < 0 || strcmp(v, "after-all"))
        return cs_cli_usage_error("compile", "--dump-ir supports only 'after-all'");
      dump = v;
    } else if ((r = cs_cli_opt(argc, argv, &i, "--max-memory", NULL, &v))) {
      if (r < 0 || !cs_cli_parse_bytes(v, &max_memory))
        return cs_cli_usage_error("compile", "--max-memory needs a size (bytes, or e.g. 512M, 4G)");
    } else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
      quiet = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cs_cli_usage_error("compile", "unknown option %s", argv[i]);
    } else if (!model) {
      model = argv[i];
    } else {
      return cs_cli_usage_error("compile", "unexpected argument %s (one model per compile)", argv[i]);
    }
  }
  if (!model) return cs_cli_usage_error("compile", "no model given");
  if (!out) return cs_cli_usage_error("compile", "no output directory given (-o DIR)");

  /* "out/" and "out" are the same directory; rename() wants the latter. */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", out);
  for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = '\0';
  if (cs_fs_exists(dir) && !cs_fs_is_dir(dir))
    return cs_cli_fail("output %s exists and is not a directory", dir);

  double t0 = now_s();
  cs_target target;
  if (cs_target_parse(target_str, &target) != CS_OK) return cs_cli_fail("%s", cs_error_message());
  const char *emit_name = emit_ti ? "--emit=ti-project" : "--emit=module";
  if (emit_module && target.mcpu != CS_MCPU_C7X)
    return cs_cli_usage_error("compile", "%s builds a C7x firmware module: it needs -t \"c_static_lib -mcpu=c7x\"",
                              emit_name);
  if (emit_module && strcmp(weights, "bin"))
    return cs_cli_usage_error("compile", "%s embeds weights.bin; it does not go with --weights=c", emit_name);

  cs_graph *g = NULL;
  cs_onnx_options lo = {.max_memory = max_memory, .eval = cs_const_eval_node};
  cs_offload_pad *refused = NULL;
  cs_status lowered = lower(model, &lo, keep_outputs, &target, dump ? stdout : NULL, &refused, &g);
  target.mm_refused = NULL; /* read by the passes only */
  target.n_mm_refused = 0;
  free(refused);
  if (lowered != CS_OK) return cs_cli_fail("%s", cs_error_message());

  char tmp[4096];
  if (cs_fs_make_sibling_temp(dir, "tmp", tmp, sizeof tmp) != CS_OK) {
    cs_graph_free(g);
    return cs_cli_fail("%s", cs_error_message());
  }
  cs_codegen_stats stats;
  cs_codegen_options opt = {.model_path = model,
                            .weights_as_c = !strcmp(weights, "c"),
                            .quiet = quiet,
                            .stats = &stats,
                            .offload = target.mmalib ? &g->offload : NULL};
  cs_status st = cs_codegen_emit(g, &target, &opt, tmp);
  /* The report outlives the graph: printed below. */
  cs_offload_report offload = g->offload;
  memset(&g->offload, 0, sizeof g->offload);
  cs_graph_free(g);
  int n_imports = 0;
  if (st == CS_OK && emit_module) st = build_module(tmp);
  if (st == CS_OK && emit_ti) st = write_ti_project(tmp, model, &target, &n_imports);
  if (st == CS_OK && emit_runtime) st = cs_copy_runtime(tmp, stats.runtime_used);
  if (st == CS_OK) st = install(tmp, dir);
  if (st != CS_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cs_error_message());
    cs_fs_remove_tree(tmp);
    cs_offload_report_free(&offload);
    return cs_cli_fail("%s", msg);
  }
  double dt = now_s() - t0;
  if (!quiet) {
    char wbuf[32];
    human_bytes(stats.weights_bytes, wbuf, sizeof wbuf);
    double ratio = stats.live_bytes_lower_bound
                       ? (double)stats.arena_bytes / (double)stats.live_bytes_lower_bound
                       : 1.0;
    printf("compiled %s -> %s/ in %.2f s\n", model, dir, dt);
    printf("  layers: %d (%d kernel calls) in %d file%s, %.3f %s\n", stats.layers, stats.kernel_calls,
           stats.files, stats.files == 1 ? "" : "s",
           stats.macs >= 1000000000 ? (double)stats.macs * 1e-9 : (double)stats.macs * 1e-6,
           stats.macs >= 1000000000 ? "GMAC" : "MMAC");
    printf("  arena: %zu bytes (live-bytes lower bound %zu, \xc3\x97%.3f)\n", stats.arena_bytes,
           stats.live_bytes_lower_bound, ratio);
    printf("  weights: %s (%s)\n", wbuf, opt.weights_as_c ? "weights.c" : "weights.bin");
    if (emit_module) printf("  module: %s/%s (weights embedded)\n", dir, CS_MODULE_FILE);
    if (emit_ti)
      printf("  ti-project: %s/%s/ (%d imports; build lib0.out there with 'make CGT=/path/to/ti-cgt-c7000')\n", dir,
             CS_TI_PROJECT_DIR, n_imports);
    if (emit_runtime) {
      int n = 0;
      for (int i = 0; i < cs_runtime_file_count(); i++) n += stats.runtime_used[i];
      printf("  runtime: %d files in %s/runtime, headers in %s/include\n", n, dir, dir);
    }
    if (target.mcpu == CS_MCPU_C7X) {
      double total = stats.est_c7x_mma + stats.est_c7x_core_macs + stats.est_c7x_core_other;
      printf("  est. C7x cycles: %.3f M (MMA %.3f M, core conv/matmul %.3f M, other core kernels %.3f M; "
             "the MMALIB cost rule's model: staged MMALIB calls at the spec's L2 figure, the rest in DDR)\n",
             total * 1e-6, stats.est_c7x_mma * 1e-6, stats.est_c7x_core_macs * 1e-6, stats.est_c7x_core_other * 1e-6);
    }
    if (target.mmalib) print_offload(&offload, &stats);
    if (stats.l2_h_tiled + stats.l2_oc_tiled + stats.l2_untiled)
      printf("  DMA tiling (ScheduleC7xDMATiling, half the L2 budget %zu B, scratch %zu B): %d H-tiled, "
             "%d OC-tiled, %d not tiled\n",
             stats.l2_budget / 2, stats.l2_bytes, stats.l2_h_tiled, stats.l2_oc_tiled, stats.l2_untiled);
    if (stats.l2_n_tiled)
      printf("  DMA tiling of weight-only linear layers (N, L2 budget %zu B): %d with weights in L2\n",
             stats.l2_budget, stats.l2_n_tiled);
    if (stats.l2_budget && target.mmalib)
      printf("  L2 staging (InjectMMALIBDMA, budget %zu B, scratch %zu B): %d input+weights, %d input only, "
             "%d sliced, %d H-tiled (input over the budget), %d in DDR\n",
             stats.l2_budget, stats.l2_bytes, stats.l2_input_weights, stats.l2_input, stats.l2_sliced,
             stats.l2_mm_h_tiled, stats.l2_ddr);
  }
  cs_offload_report_free(&offload);
  return CS_EXIT_OK;
}
