/*
 * codegen.h — IR graph of kernel calls → lib0.c [lib1.c …], lib0.h,
 * weights.bin (or weights.c), manifest.json.
 */
#ifndef CSTATIC_CODEGEN_H
#define CSTATIC_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "target.h"

/* The files of runtime/ (runtime_files.c): a model needs those defining
 * what its generated C calls, and what they need in turn. */
enum { CS_RUNTIME_FILES_MAX = 256 };
int cs_runtime_file_count(void);
/* Path of file i relative to runtime/ ("kernels/ref/conv2d_i8.c"); NULL
 * out of range. */
const char *cs_runtime_file_path(int i);
/* Set used[i] (cs_runtime_file_count() entries) for every runtime file
 * the C text calls into and everything that file needs; comments and
 * string literals are not calls. */
void cs_runtime_files_mark(const char *c_text, unsigned char *used);

/* What a compile produced (for the CLI's summary). */
typedef struct cs_codegen_stats {
  size_t arena_bytes;            /* MODEL_ARENA_SIZE */
  size_t live_bytes_lower_bound; /* MODEL_LIVE_BYTES_LOWER_BOUND */
  size_t weights_bytes;          /* MODEL_WEIGHTS_SIZE */
  int layers;                    /* scheduled kernel ops */
  int kernel_calls;              /* layers minus elided copies */
  int files;                     /* lib*.c files */
  int64_t macs;                  /* conv + matmul multiply-accumulates */
  int64_t macs_mma;              /* of those, in mmalib_* calls (on the MMA) */
  /* -mcpu=c7x: the estimated cycles (cs_cg_c7x_estimate): MMA, core MAC
   * kernels, other core kernels */
  double est_c7x_mma, est_c7x_core_macs, est_c7x_core_other;
  /* L2 staging (-mcpu=c7x -mmalib=1): budget 0 = off */
  size_t l2_budget, l2_bytes;    /* -l2-budget; MODEL_L2_SIZE */
  int l2_input_weights, l2_input, l2_sliced, l2_mm_h_tiled, l2_ddr; /* staged MMALIB calls by decision */
  int l2_h_tiled, l2_oc_tiled, l2_untiled; /* ScheduleC7xDMATiling's k_conv2d_i8 decisions */
  int l2_n_tiled;                          /* … and c7x_dequantize_vecmatmul's (N, N-tiled) */
  /* The runtime files the generated C needs: used[i] for file i of
   * cs_runtime_file_path (manifest.json "runtime_sources"). */
  unsigned char runtime_used[CS_RUNTIME_FILES_MAX];
} cs_codegen_stats;

typedef struct cs_codegen_options {
  const char *model_path;  /* recorded in manifest.json */
  int weights_as_c;        /* --weights=c */
  int quiet;               /* no summary on stdout (codegen itself never prints) */
  int no_copy_alias;       /* keep every k_copy as a call (default: a copy whose
                              input dies there becomes a view of it) */
  cs_codegen_stats *stats; /* optional: filled on success */
  /* optional: the -mmalib=1 offload report (ir/offload.h),
   * written to manifest.json "offload" */
  const struct cs_offload_report *offload;
} cs_codegen_options;

/* Multiply-accumulates of every live kernel node of a graph that passed
 * cs_passes_run (manifest.json "offload.macs" counts the same). */
int64_t cs_codegen_graph_macs(const cs_graph *g);

/* Plan memory and write every output file into out_dir (which must exist
 * and be empty). The graph must have passed cs_passes_run. */
cs_status cs_codegen_emit(cs_graph *g, const cs_target *t,
                          const cs_codegen_options *opt, const char *out_dir);

#endif
