/*
 * dma.h — the DMA engine and the L2 SRAM scratch that staged MMALIB calls
 * use (InjectMMALIBDMA, spec/c-static-lib-backend.txt "DMA Injection
 * Pipeline"; the spec's tvm_dsp_dma_copy / tvm_dsp_dma_wait / tvm_l2_alloc).
 *
 * Generated code for `-mcpu=c7x -mmalib=1` copies a layer's input (and its
 * weights when they fit the L2 budget) from DDR into L2 SRAM, waits, and
 * calls the MMALIB kernel on the L2 copies:
 *
 *   uint8_t *L2 = tidsp_l2_scratch(MODEL_L2_SIZE);   (once per inference)
 *   tidsp_dma_copy(0, L2 + in_off, ddr_input, in_bytes, 0);
 *   tidsp_dma_copy(0, L2 + w_off, ddr_weight, w_bytes, 0);
 *   tidsp_dma_wait(0, 0);
 *   mmalib_conv2d_i8(L2 + in_off, L2 + w_off, …);
 *
 * DMA: copies are issued in groups (the spec's async commit groups). A
 * copy joins its queue's open group; tidsp_dma_commit(q) closes the open
 * group, and tidsp_dma_wait(q, k) closes it too, then returns when at most
 * k groups issued on q are still in flight (k = 0: all done). A copy
 * completes some time between its issue and the wait that covers it; until
 * then neither its source nor its destination may be touched. Copies on
 * one queue complete in issue order. The software pipeline of a tiled
 * layer (two copies per tile, input and weights):
 *
 *   tidsp_dma_copy(0, in0, …); tidsp_dma_copy(0, w0, …); tidsp_dma_commit(0);
 *   tidsp_dma_copy(0, in1, …); tidsp_dma_copy(0, w1, …); tidsp_dma_commit(0);
 *   tidsp_dma_wait(0, 1);   tile 0 is in L2, tile 1 may still be moving
 *   compute tile 0;
 *   tidsp_dma_wait(0, 0);   compute tile 1;
 *
 * The host engine (runtime/dma/dma_host.c) is asynchronous: one copy
 * thread, started by the first copy, moves the bytes while the caller
 * computes, so a missing wait is a real race (ThreadSanitizer reports it).
 *
 * L2: the platform binds its L2 SRAM region (the firmware at model load,
 * `cstatic run` before each run, an application on the board once at
 * start); a model asks for the bytes it needs (tidsp_model_desc.l2_size).
 * One inference at a time uses the region, like the arena.
 *
 * C99, no allocation.
 */
#ifndef CSTATIC_DMA_H
#define CSTATIC_DMA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDSP_DMA_QUEUES 4     /* queue ids 0 … TIDSP_DMA_QUEUES − 1 */
#define TIDSP_DMA_DEPTH 16     /* copies a queue holds; one more waits for the oldest */
#define TIDSP_DMA_BYPASS_CACHE 1u /* flags: the spec's bypass_cache; no effect on the host */

/* Issue a copy of `bytes` bytes from src to dst on `queue`, into its open
 * group; a full queue first waits for its oldest copy. TIDSP_OK;
 * TIDSP_ERR_PARAM for a queue out of range, unknown flags, or source and
 * destination ranges that overlap; TIDSP_ERR_NULL for a NULL dst or src
 * with bytes > 0. bytes == 0 is a no-op. A failing call issues nothing. */
int32_t tidsp_dma_copy(int32_t queue, void *dst, const void *src, size_t bytes, uint32_t flags);

/* One copy of `rows` rows of row_bytes bytes: row r from src + r·src_pitch
 * to dst + r·dst_pitch (the C7x DMA's multi-dimensional transfer: one
 * descriptor, one slot of the queue, however many rows). An NCHW tile's
 * rows in each channel are one such copy. Errors as tidsp_dma_copy's, the
 * overlap check over each side's whole span; TIDSP_ERR_PARAM also for a
 * pitch below row_bytes (rows > 1). rows or row_bytes 0 is a no-op. */
int32_t tidsp_dma_copy_2d(int32_t queue, void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                          size_t row_bytes, size_t rows, uint32_t flags);

/* Close `queue`'s open group (no-op when it holds no copy): the copies
 * issued since the last commit or wait become one group. TIDSP_OK;
 * TIDSP_ERR_PARAM for a queue out of range. */
int32_t tidsp_dma_commit(int32_t queue);

/* Close `queue`'s open group, then wait until at most max_inflight groups
 * issued on it are still in flight. TIDSP_OK; TIDSP_ERR_PARAM for a queue
 * out of range or max_inflight < 0. */
int32_t tidsp_dma_wait(int32_t queue, int32_t max_inflight);

/* Start the engine now, outside any inference (host: the copy thread,
 * whose stack and exit hook are the engine's only allocations, made once
 * here). tidsp_l2_bind calls it when it binds a region, which every
 * platform does before a staged model runs; otherwise the first copy
 * starts it, and returns once the thread runs. On a running engine it
 * readies the engine for copies to come (host: the copy thread polls for them, while the model keeps
 * calling the engine, instead of sleeping until the first);
 * tidsp_l2_scratch calls it at each inference's start. TIDSP_OK (also
 * when running already); TIDSP_ERR_UNSUPPORTED when the thread cannot
 * start: copies then complete in the caller, synchronously. */
int32_t tidsp_dma_start(void);

/* Complete every copy of every queue and stop the copy thread (the next
 * copy or start starts it again). Registered with atexit when the thread
 * first starts. */
void tidsp_dma_shutdown(void);

/* Host engine only, for tests: lazy != 0 makes the copy thread start a
 * copy only when a wait needs it or a full queue needs room (oldest
 * first), so a test sees exactly which copies are done; 0 (the default)
 * lets it copy as soon as a copy is issued. */
void tidsp_dma_host_lazy(int32_t lazy);

/* ---- the trace: what moved when, beside what computed when ----------- */

#define TIDSP_DMA_EV_COPY 0    /* a copy: queue, group, bytes, issue/start/end */
#define TIDSP_DMA_EV_COMPUTE 1 /* a layer's kernel call: name, start/end */

/* One event; times in tidsp_profile_clock units (nanoseconds on a host). */
typedef struct tidsp_dma_event {
  int32_t kind;     /* TIDSP_DMA_EV_* */
  int32_t queue;    /* copy: its queue; compute: -1 */
  int64_t group;    /* copy: its group's number on its queue (from 0 at bind) */
  uint64_t bytes;   /* copy: bytes moved; compute: 0 */
  const char *name; /* compute: the layer (a string of the model); copy: NULL */
  uint64_t issue;   /* copy: when issued; compute: = start */
  uint64_t start;
  uint64_t end;     /* 0 while the copy or the call has not ended */
  int32_t cpu;      /* the CPU the copy or the call ran on, at its start and
                     * its end (TIDSP_DMA_CPU_*: unknown, or moved between) */
} tidsp_dma_event;

/* tidsp_dma_event.cpu when no CPU can be named: the engine does not know
 * (a board's DMA is not a CPU: its copies overlap any call), or the
 * thread was on one CPU at the start and another at the end (its time is
 * then not counted as hidden: it may have shared a CPU with the other). */
#define TIDSP_DMA_CPU_UNKNOWN (-1)
#define TIDSP_DMA_CPU_MOVED (-2)

/* Record events into events[0 … capacity − 1] (the caller's storage: the
 * engine allocates nothing) from now on, numbering groups from 0;
 * events == NULL or capacity <= 0 stops recording. Events beyond the
 * capacity are counted, not stored. TIDSP_OK; TIDSP_ERR_PARAM for
 * capacity < 0. */
int32_t tidsp_dma_trace_bind(tidsp_dma_event *events, int32_t capacity);

/* Events recorded since the bind (at most its capacity); *dropped (when
 * not NULL) gets the number that did not fit. Read the events after
 * tidsp_dma_wait(q, 0) on every queue: then every copy has ended. */
int32_t tidsp_dma_trace_count(int64_t *dropped);

/* Mark a layer's kernel call (generated code of staged and tiled layers):
 * begin returns the event's slot (−1 when not recording), end stamps it. */
int32_t tidsp_dma_trace_begin(const char *layer);
void tidsp_dma_trace_end(int32_t slot);

#define TIDSP_L2_ALIGN 128 /* the L2 region's base alignment */

/* Bind the platform's L2 SRAM region (base aligned to TIDSP_L2_ALIGN).
 * base == NULL or size == 0 unbinds. TIDSP_OK; TIDSP_ERR_ALIGN for a
 * misaligned base. */
int32_t tidsp_l2_bind(void *base, size_t size);

/* The bound region's base if it holds at least `size` bytes, else NULL
 * (unbound, or too small: generated code then returns TIDSP_ERR_L2). */
void *tidsp_l2_scratch(size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_DMA_H */
