/*
 * profile.h — per-layer timing of a compiled model (-profile-layers=1).
 *
 * A model compiled with -profile-layers=1 reads tidsp_profile_clock()
 * before and after every kernel call and adds the difference to that
 * layer's row of a table it owns (model_layer_stats in lib0.c, reachable
 * through model_desc.profile). Names, kernels and multiply-accumulates are
 * known at compile time and are constants of the table; only the counters
 * change. Without the attribute nothing of this is emitted or linked.
 *
 * The clock: nanoseconds of CLOCK_MONOTONIC on the host
 * (runtime/profile/host_clock.c); on C7x the time-stamp counter, in CPU
 * cycles (runtime/profile/c7x_clock.c). TIDSP_PROFILE_CLOCK_UNIT names it.
 *
 * The counters are plain stores: one model run at a time per table, like
 * the arena. C99, no allocation.
 */
#ifndef CSTATIC_PROFILE_H
#define CSTATIC_PROFILE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__C7000__)
#define TIDSP_PROFILE_CLOCK_UNIT "cycles"
#else
#define TIDSP_PROFILE_CLOCK_UNIT "ns"
#endif

/* One layer: one kernel call of the generated code. */
typedef struct tidsp_layer_stat {
  const char *name;   /* the IR node's name (its ONNX node, or the fused group) */
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

/* The current time in clock units; only differences are meaningful. */
uint64_t tidsp_profile_clock(void);

/* Zero the counters of every row (the constants stay). NULL is a no-op. */
void tidsp_profile_reset(const tidsp_profile_table *t);

/* Add the time since `start` (a tidsp_profile_clock() value) to a row. */
static inline void tidsp_profile_record(tidsp_layer_stat *s, uint64_t start) {
  uint64_t dt = tidsp_profile_clock() - start;
  s->calls++;
  s->total += dt;
  s->last = dt;
}

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_PROFILE_H */
