/*
 * offload.h — the MMALIB offload report's data: for every conv / matmul /
 * add / max pool the -mmalib=1 passes looked at, the kernel it became or
 * the eligibility rule that declined it. A graph holds its own
 * (cs_graph.offload): the passes of a compile fill it
 * (passes/match/mmalib_report.h), `cstatic compile` prints it and codegen writes
 * it to manifest.json "offload", reading only these plain structs.
 */
#ifndef CSTATIC_IR_OFFLOAD_H
#define CSTATIC_IR_OFFLOAD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { CS_OFFLOAD_KINDS = 6 };

/* The MMA's panel width for MMALIB's int8 kernels (spec "Supported
 * Operations": C_out % 64): what one output-channel column block of a
 * call occupies, real channels or not. A grouped conv's per-group call
 * (mmalib_conv2d_i8_grouped_loop) of C_out/g < 64 channels fills only
 * part of it; MMALIB pads the panel itself (the fork has no C_out rule for
 * it), so the MACs it spends are counted per group rounded up to this
 * (codegen/kernel_table.c cs_kernel_macs; the padding report's
 * "C_out per group" decision, passes/match/mmalib_conv.c). */
#define CS_MMALIB_I8_TILE 64

/* Kinds, in the order of the spec's "Offloaded Layers" column. */
typedef enum cs_offload_kind {
  CS_OFFLOAD_CONV2D = 0,
  CS_OFFLOAD_DWCONV2D,
  CS_OFFLOAD_RES_ADD,
  CS_OFFLOAD_FC,
  CS_OFFLOAD_MAX_POOL,
  CS_OFFLOAD_MATMUL, /* a plain matmul (no bias): the int16 legalize path's, and the product of two
                      * runtime int8 tensors (fuse_qdq_to_int8_batch_matmul.c) */
} cs_offload_kind;

typedef struct cs_offload_entry {
  cs_offload_kind kind;
  char layer[160];      /* the ONNX node name */
  char kernel[48];      /* extern symbol, "" when declined */
  char reason[200];     /* the declining rule, "" when offloaded */
  double scale_rel_err; /* worst |s·2^−sh − r| / r over channels; < 0: n/a */
  /* int16 layers: the error bound against the exact result,
   * 1 LSB + scale_rel_err·|y|, at the full-scale output |y| = 2^15
   * (cs_offload_error_bound); < 0: n/a (int8: within 1 LSB) */
  double bound_full_scale_lsb;
  /* The exact-requant path (-mmalib-exact; passes/match/mmalib_exact.c),
   * when `exact`: the value it rounds is within exact_err_lsb of ORT's
   * (half the largest step of its int16 intermediate, 0 where that is the
   * accumulator itself), so an output differs from ORT's only where ORT's
   * value lies that close to a rounding boundary; exact_int8_rel_err is the
   * int8 kernel's |g| it replaces; the cost rule's estimates
   * (mmalib_cost.h) of the int16 MMA call, of the int8 call it replaces,
   * and of its core passes. */
  int exact;
  double exact_err_lsb, exact_int8_rel_err;
  double exact_mma_cycles, exact_int8_mma_cycles, exact_core_cycles;
} cs_offload_entry;

/* The error bound of an offloaded layer whose multiplier d_s·w_s/o_s is
 * applied as s·2^−sh with relative error rel, at output magnitude y_lsb:
 * the kernel's half-up rounding and the exact result's rounding give
 * 1 LSB together, the scale error rel·|y| more. With an 8-bit s (the
 * spec's _float_to_scale_shift) rel ≤ 2^−8: harmless for int8 (|y| ≤ 128:
 * within 1 LSB after rounding) but up to ~128 LSB at int16 full scale. */
static inline double cs_offload_error_bound(double rel, double y_lsb) { return 1.0 + rel * y_lsb; }

/* Channel padding (passes/mmalib_pad_channels.c): a layer whose C_out is
 * not a multiple of the MMA tile, padded with zero filters (or left alone
 * because the cost rule says padding does not pay), with the rule's
 * estimate: MMA cycles of the padded layer against scalar-core cycles of
 * the real one (spec "Performance" rates). */
typedef struct cs_offload_pad {
  char layer[160];
  const char *what;          /* what c_out/c_pad count (a static string; NULL: "C_out"): "N" (an FC's
                              * K/N padding), "positions" (asymmetric stride computed at stride 1) */
  int c_out, c_pad;          /* real and padded output channels (or `what`) */
  int padded;                /* 0: declined, the estimate says it does not pay (or over_budget) */
  int over_budget;           /* it pays, but the padding budget refused it (-mmalib-pad-budget) */
  int fixed;                 /* the exact path's own form (its 3x3 tiles, block-diagonal groups):
                              * not the rule's choice, so not the budget's to refuse */
  int64_t macs;              /* the real layer's MACs */
  int64_t macs_added;        /* (c_pad - c_out) filters' MACs */
  int64_t weight_bytes_added; /* zero filters */
  int64_t act_bytes_added;    /* the padded channels of the output tensor */
  double mma_cycles, scalar_cycles; /* the cost rule's estimate */
} cs_offload_pad;

typedef struct cs_offload_report {
  int n, cap;
  cs_offload_entry *entries;
  int n_pad, cap_pad;
  cs_offload_pad *pads;
  int lost; /* decisions not recorded for want of memory: codegen fails */
} cs_offload_report;

static inline void cs_offload_report_free(cs_offload_report *r) {
  free(r->entries);
  free(r->pads);
  r->entries = NULL;
  r->pads = NULL;
  r->n = r->cap = r->n_pad = r->cap_pad = 0;
}

/* The sums over the padded layers. */
static inline void cs_offload_pad_totals(const cs_offload_report *r, int *layers, int64_t *macs, int64_t *bytes) {
  *layers = 0;
  *macs = *bytes = 0;
  for (int i = 0; i < r->n_pad; i++) {
    if (!r->pads[i].padded) continue;
    (*layers)++;
    *macs += r->pads[i].macs_added;
    *bytes += r->pads[i].weight_bytes_added + r->pads[i].act_bytes_added;
  }
}

/* "conv2d", "dwconv2d", "res_add", "FC", "max_pool2d", "matmul". (Inline,
 * like the summary: codegen reads the report without linking the passes.) */
static inline const char *cs_offload_kind_name(cs_offload_kind k) {
  static const char *const names[CS_OFFLOAD_KINDS] = {"conv2d", "dwconv2d", "res_add",
                                                      "FC",     "max_pool2d", "matmul"};
  return (int)k >= 0 && (int)k < CS_OFFLOAD_KINDS ? names[k] : "?";
}

/* "20 conv2d, 8 res_add, 1 FC" (kinds with a zero count left out; "none"
 * when nothing was offloaded) into buf. */
static inline void cs_mmalib_report_summary(const cs_offload_report *r, char *buf, int size) {
  int count[CS_OFFLOAD_KINDS] = {0};
  for (int i = 0; i < r->n; i++)
    if (r->entries[i].kernel[0]) count[r->entries[i].kind]++;
  int len = 0;
  buf[0] = '\0';
  for (int k = 0; k < CS_OFFLOAD_KINDS && len < size; k++) {
    if (!count[k]) continue;
    len += snprintf(buf + len, (size_t)(size - len), "%s%d %s", len ? ", " : "", count[k],
                    cs_offload_kind_name((cs_offload_kind)k));
  }
  if (!len) snprintf(buf, (size_t)size, "none");
}

#endif
