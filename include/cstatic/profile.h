/*
 * profile.h — per-layer timing of a compiled model (-profile-layers=1).
 *
 * A model compiled with -profile-layers=1 reads TIDSP_PROFILE_NOW() before
 * and after every kernel call and adds the difference to that layer's row
 * of a table it owns (model_layer_stats in lib0.c, reachable through
 * model_desc.profile). Names, kernels and multiply-accumulates are known at
 * compile time and are constants of the table; only the counters change.
 * Without the attribute nothing of this is emitted or linked.
 *
 * The clock is chosen where this header is included:
 *   C7x code (TI's <c7x.h> included first, as the c7x flavour's lib*.c do,
 *   or the host stand-in cstatic/platform/ti_stub/c7x.h): the time-stamp
 *   counter __TSC, in CPU cycles, read in place. The C7x of the AM67A runs
 *   at TIDSP_C7X_CLOCK_HZ; the stand-in's counter counts at that rate.
 *   Anywhere else: tidsp_profile_clock(), nanoseconds of CLOCK_MONOTONIC on
 *   a POSIX host (runtime/profile/host_clock.c).
 * TIDSP_PROFILE_CLOCK_UNIT names it ("cycles" or "ns"); both convert to
 * time with tidsp_profile_unit_ms.
 *
 * The counters are plain stores: one model run at a time per table, like
 * the arena. C99, no allocation.
 */
#ifndef CSTATIC_PROFILE_H
#define CSTATIC_PROFILE_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The C7x clock of the AM67A (J722S): 1 GHz. */
#define TIDSP_C7X_CLOCK_HZ 1000000000u

#if defined(__C7000__) || defined(CSTATIC_TI_STUB_C7X)
#define TIDSP_PROFILE_CLOCK_UNIT "cycles"
#define TIDSP_PROFILE_NOW() ((uint64_t)__TSC)
#else
#define TIDSP_PROFILE_CLOCK_UNIT "ns"
#define TIDSP_PROFILE_NOW() tidsp_profile_clock()
#endif

/* One layer: one kernel call of the generated code. */
typedef struct tidsp_layer_stat {
  const char *name;   /* the ONNX node it computes (the Conv of DQ → Conv → Q) */
  const char *module; /* the PyTorch module path recorded for that node
                         ("layer1.0.conv1"), or "" */
  const char *output; /* its output tensor, e.g. "i8[1,64,56,56]" */
  const char *kernel; /* the runtime function it calls, e.g. "tidsp_conv2d_i8" */
  int64_t macs;       /* multiply-accumulates per call (0 for non-MAC kernels) */
  uint64_t calls;     /* calls since the last tidsp_profile_reset */
  uint64_t total;     /* clock units summed over those calls */
  uint64_t last;      /* clock units of the most recent call */
} tidsp_layer_stat;

typedef struct tidsp_profile_table {
  int32_t n_layers;
  tidsp_layer_stat *layers; /* in execution order */
  const char *clock_unit;   /* TIDSP_PROFILE_CLOCK_UNIT of the build */
} tidsp_profile_table;

/* The runtime's clock: nanoseconds on a POSIX host, C7x cycles on C7x;
 * only differences are meaningful. */
uint64_t tidsp_profile_clock(void);

/* Milliseconds per clock unit: "ns" 1e-6, "cycles" those of a
 * TIDSP_C7X_CLOCK_HZ clock; 0 for a unit it does not know. */
static inline double tidsp_profile_unit_ms(const char *unit) {
  if (unit != 0 && strcmp(unit, "ns") == 0) return 1e-6;
  if (unit != 0 && strcmp(unit, "cycles") == 0) return 1e3 / (double)TIDSP_C7X_CLOCK_HZ;
  return 0.0;
}

/* Zero the counters of every row (the constants stay). NULL is a no-op. */
void tidsp_profile_reset(const tidsp_profile_table *t);

/* Add the time since `start` (a TIDSP_PROFILE_NOW() value) to a row. */
static inline void tidsp_profile_record(tidsp_layer_stat *s, uint64_t start) {
  uint64_t dt = TIDSP_PROFILE_NOW() - start;
  s->calls++;
  s->total += dt;
  s->last = dt;
}

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_PROFILE_H */
