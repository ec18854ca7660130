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

/* What a compile produced (for the CLI's summary). */
typedef struct cs_codegen_stats {
  size_t arena_bytes;            /* MODEL_ARENA_SIZE */
  size_t live_bytes_lower_bound; /* MODEL_LIVE_BYTES_LOWER_BOUND */
  size_t weights_bytes;          /* MODEL_WEIGHTS_SIZE */
  int layers;                    /* scheduled kernel ops */
  int kernel_calls;              /* layers minus elided copies */
  int files;                     /* lib*.c files */
  int64_t macs;                  /* conv + matmul multiply-accumulates */
  /* L2 staging (-mcpu=c7x -mmalib=1): budget 0 = off */
  size_t l2_budget, l2_bytes;    /* -l2-budget; MODEL_L2_SIZE */
  int l2_input_weights, l2_input, l2_sliced, l2_ddr; /* staged MMALIB calls by decision */
} cs_codegen_stats;

typedef struct cs_codegen_options {
  const char *model_path;  /* recorded in manifest.json */
  int weights_as_c;        /* --weights=c */
  int quiet;               /* no summary on stdout (codegen itself never prints) */
  int no_copy_alias;       /* keep every k_copy as a call (default: a copy whose
                              input dies there becomes a view of it) */
  cs_codegen_stats *stats; /* optional: filled on success */
  /* optional: the -mmalib=1 offload report (passes/mmalib_report.h),
   * written to manifest.json "offload" */
  const struct cs_offload_report *offload;
} cs_codegen_options;

/* Plan memory and write every output file into out_dir (which must exist
 * and be empty). The graph must have passed cs_passes_run. */
cs_status cs_codegen_emit(cs_graph *g, const cs_target *t,
                          const cs_codegen_options *opt, const char *out_dir);

#endif
