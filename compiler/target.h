/*
 * target.h — the target string ("c_static_lib -mcpu=c7x -mmalib=1 …") and
 * the attributes it sets. One parser; passes and codegen only read the
 * struct.
 */
#ifndef CSTATIC_TARGET_H
#define CSTATIC_TARGET_H

#include <stdio.h>

#include "ir.h"

typedef enum cs_mcpu {
  CS_MCPU_GENERIC = 0, /* any C99 target (the host) */
  CS_MCPU_C66X,
  CS_MCPU_C7X,
  CS_MCPU_CORTEX_M /* the microcontroller preset: generic C, scalar kernels, q31 */
} cs_mcpu;

typedef enum cs_requant_form {
  CS_REQUANT_FLOAT = 0, /* float multiplier, ORT-exact */
  CS_REQUANT_Q31        /* int32 multiplier + shift, integer only */
} cs_requant_form;

typedef enum cs_kernels_form {
  CS_KERNELS_FAST = 0, /* the dispatched kernels (fastest variant of the CPU) */
  CS_KERNELS_SCALAR    /* the portable reference loops: the baseline */
} cs_kernels_form;

/* -mmalib-exact: which offloaded int8 layers take the exact-requant path
 * (quant/mmalib_exact.h: MMALIB's int16 kernel on widened data, then a
 * core requantization with ORT's multiplier) instead of the int8 kernel's
 * 8-bit scale. The rule of `worst` is in passes/match/mmalib_exact.c.
 * The default is ALL: -mmalib=1 gives ORT's bytes on every offloaded
 * conv, depthwise and FC; NONE is the fast opt-out. */
typedef enum cs_mmalib_exact {
  CS_MM_EXACT_NONE = 0,
  CS_MM_EXACT_WORST,
  CS_MM_EXACT_ALL,
  CS_MM_EXACT_STRICT
} cs_mmalib_exact;

typedef struct cs_target {
  cs_mcpu mcpu;
  int mmalib;                   /* -mmalib=1 */
  cs_mmalib_exact mmalib_exact; /* -mmalib-exact=none|worst|all|strict */
  int tidl_kernels;             /* -tidl-kernels (default 1) */
  int tidl_runtime;             /* -tidl-runtime=1: cg_main_dsp calls tidl_bridge_init_all() */
  int profile_layers;           /* -profile-layers=1 */
  int skip_runtime_checks;      /* default 1 on c7x/c66x, 0 otherwise */
  int use_cpp_api;              /* always 1: the generated C calls kernels directly */
  int constants_byte_alignment; /* default 64 */
  cs_requant_form requant;      /* -requant=float|q31 */
  cs_kernels_form kernels;      /* -kernels=fast|scalar */
  /* -pack-weights: int8 conv/matmul weight rows padded with zeros to a
   * multiple of 64 bytes (kernels.h w_row_stride) for the host's fast
   * kernels. Default 1 on the generic target with -kernels=fast, else 0. */
  int pack_weights;
  /* -l2-budget=BYTES: the L2 SRAM bytes InjectMMALIBDMA may stage one
   * MMALIB call's guard, input and weights into (-mcpu=c7x -mmalib=1 only;
   * 0 turns staging off). Default CS_L2_BUDGET_DEFAULT, the spec's 384 KB
   * (half of AM67A's 1.25 MB L2). */
  long l2_budget;
  /* -allow-float=1: a model without QDQ is compiled without the warning
   * that every layer runs in float (cs_target_warn_float_model). */
  int allow_float;
  /* -ort-exact: 1 (the default) keeps every layer bit-identical with ONNX
   * Runtime, running in float what ORT runs in float between DQ and Q;
   * 0 lets an integer kernel take such a layer where one is within 1 LSB
   * (a spatial ReduceMean becomes the integer global average pool). Default
   * 0 with -mcpu=cortex-m: no float on a core without an FPU. */
  int ort_exact;
  /* -mmalib-pad-budget=X: the MACs an -mmalib=1 compile may compute, its
   * rewrites' zero filters, taps and positions included, as a multiple of
   * the model's own (default CS_MM_PAD_BUDGET_DEFAULT, issue 16's bound).
   * Over it, the compile refuses the rewrites that save the fewest cycles
   * per MAC added and runs the passes again (passes/match/mmalib_cost.h
   * cs_mm_budget_refuse). */
  double mmalib_pad_budget;
  /* The rewrites refused so far (layer and `what`; set by the compile
   * driver between rounds, NULL in a first round): the cost rule declines
   * them (cs_mm_refused). */
  const cs_offload_pad *mm_refused;
  int n_mm_refused;
} cs_target;

#define CS_MM_PAD_BUDGET_DEFAULT 1.6
#define CS_MM_PAD_BUDGET_MAX 64.0

#define CS_L2_BUDGET_DEFAULT (384L * 1024)
#define CS_L2_BUDGET_MAX (16L * 1024 * 1024)

/* Defaults for the generic C target. */
void cs_target_default(cs_target *t);
/* Parse "c_static_lib [-key=value …]"; unknown keys or bad values are an
 * error naming the attribute. NULL or "" → defaults. */
cs_status cs_target_parse(const char *s, cs_target *t);
/* The canonical string form (for manifest.json). -kernels, -pack-weights,
 * -l2-budget, -tidl-runtime, -allow-float, -ort-exact and -mmalib-pad-budget appear only when
 * they are not the generic target's defaults, so that existing targets keep their text. */
void cs_target_format(const cs_target *t, char *buf, size_t size);
/* Every attribute: "-name=values  (default: …)" and its help, wrapped
 * (`cstatic compile --help`). */
void cs_target_print_attributes(FILE *f);
/* The attribute table, for tests and docs checks: count, names and the
 * default value text of the generic target. */
int cs_target_attribute_count(void);
const char *cs_target_attribute_name(int i);
const char *cs_target_attribute_default(int i);
/* 1 when MMALIB calls are staged into L2 SRAM (InjectMMALIBDMA). */
int cs_target_stages_l2(const cs_target *t);

#endif
