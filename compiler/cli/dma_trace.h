/*
 * dma_trace.h — `cstatic run --dma-trace FILE`: the model's DMA copies and
 * staged layer calls of one inference, from the model's own copy of the
 * runtime's trace (cstatic/dma.h), written as a Chrome trace (JSON; open it
 * in Perfetto or chrome://tracing: compute on lane 0, queue q on lane q+1)
 * with the overlap figure: the share of DMA busy time hidden behind compute;
 * `--dma-svg FILE` draws the same timeline as an SVG picture.
 */
#ifndef CSTATIC_CLI_DMA_TRACE_H
#define CSTATIC_CLI_DMA_TRACE_H

#include "cstatic/dma.h"
#include "ir.h"

typedef struct cs_dma_trace {
  tidsp_dma_event *events;
  int32_t capacity;
  /* the model's own runtime (dlsym): the .so links its own copy */
  int32_t (*bind)(tidsp_dma_event *, int32_t);
  int32_t (*count)(int64_t *);
  int32_t (*wait)(int32_t, int32_t);
} cs_dma_trace;

/* The overlap figure of n events. */
typedef struct cs_dma_overlap {
  int32_t copies, computes;
  uint64_t bytes;
  uint64_t dma_busy;   /* clock units some copy was moving */
  uint64_t hidden;     /* of those, units some layer was computing */
  uint64_t span;       /* first issue to last end */
} cs_dma_overlap;

/* Start recording in the model loaded as `so` (capacity events). Fails,
 * naming the model, when it makes no DMA copies. */
cs_status cs_dma_trace_start(cs_dma_trace *t, void *so, const char *model, int32_t capacity);
/* Stop recording (after every queue drains) and write the Chrome trace to
 * `path` and/or the timeline picture (SVG: DMA lanes above the compute
 * lane) to `svg` (either may be NULL); prints the overlap line to stdout. */
cs_status cs_dma_trace_finish(cs_dma_trace *t, const char *path, const char *svg, const char *model);
void cs_dma_trace_free(cs_dma_trace *t);
cs_dma_overlap cs_dma_trace_overlap(const tidsp_dma_event *ev, int32_t n);

#endif
