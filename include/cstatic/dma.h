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
 * DMA: a copy is issued on a queue and completes some time before the
 * tidsp_dma_wait that covers it returns; until then neither its source nor
 * its destination may be touched. Copies on one queue complete in issue
 * order. tidsp_dma_wait(q, k) returns when at most k copies issued on q
 * are still in flight (k = 0: all done). The host implementation defers
 * each copy until a wait needs it (or the queue is full), which is what an
 * asynchronous engine may do, so generated code that reads L2 before its
 * wait fails in host tests instead of working by luck.
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
#define TIDSP_DMA_DEPTH 16     /* copies a queue holds before the oldest is forced */
#define TIDSP_DMA_BYPASS_CACHE 1u /* flags: the spec's bypass_cache; no effect on the host */

/* Issue a copy of `bytes` bytes from src to dst on `queue`. TIDSP_OK;
 * TIDSP_ERR_PARAM for a queue out of range, unknown flags, or source and
 * destination ranges that overlap; TIDSP_ERR_NULL for a NULL dst or src
 * with bytes > 0. bytes == 0 is a no-op. A failing call issues nothing. */
int32_t tidsp_dma_copy(int32_t queue, void *dst, const void *src, size_t bytes, uint32_t flags);

/* Wait until at most max_inflight copies issued on `queue` are still in
 * flight. TIDSP_OK; TIDSP_ERR_PARAM for a queue out of range or
 * max_inflight < 0. */
int32_t tidsp_dma_wait(int32_t queue, int32_t max_inflight);

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
