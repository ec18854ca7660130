/*
 * dma_host.c — the host's DMA engine (cstatic/dma.h): a deferred memcpy.
 *
 * Each queue is a ring of TIDSP_DMA_DEPTH pending copies. A copy is only
 * recorded when issued and performed when a wait needs it, or when a new
 * copy finds its queue full (the oldest is performed first to make room),
 * always oldest first. Deferring as long as the contract allows is the
 * point: generated code that touches a staged buffer before the wait that
 * covers it reads stale bytes in host tests, as it would race on the
 * board, instead of working because the copy happened to be synchronous.
 *
 * The state is static, like the engine it stands for: one inference at a
 * time drives it (the firmware serves one request at a time). No
 * allocation.
 */
#include "cstatic/dma.h"

#include <string.h>

#include "cstatic/tidsp.h"

typedef struct dma_copy {
  void *dst;
  const void *src;
  size_t bytes;
} dma_copy;

typedef struct dma_queue {
  dma_copy ring[TIDSP_DMA_DEPTH];
  int32_t head;  /* the oldest pending copy */
  int32_t count; /* pending copies */
} dma_queue;

static dma_queue queues[TIDSP_DMA_QUEUES];

static void complete_oldest(dma_queue *q) {
  const dma_copy *c = &q->ring[q->head];
  memcpy(c->dst, c->src, c->bytes);
  q->head = (q->head + 1) % TIDSP_DMA_DEPTH;
  q->count--;
}

/* Whether [a, a + n) and [b, b + n) share a byte. Written with the
 * distance between the starts so that no end address is formed (it could
 * wrap). */
static int ranges_overlap(const void *a, const void *b, size_t n) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x <= y ? y - x < n : x - y < n;
}

int32_t tidsp_dma_copy(int32_t queue, void *dst, const void *src, size_t bytes, uint32_t flags) {
  if (queue < 0 || queue >= TIDSP_DMA_QUEUES) return TIDSP_ERR_PARAM;
  if (flags & ~(uint32_t)TIDSP_DMA_BYPASS_CACHE) return TIDSP_ERR_PARAM;
  if (bytes == 0) return TIDSP_OK;
  if (!dst || !src) return TIDSP_ERR_NULL;
  if (ranges_overlap(dst, src, bytes)) return TIDSP_ERR_PARAM;
  /* Every check passed: only now may the oldest copy be forced out. */
  dma_queue *q = &queues[queue];
  if (q->count == TIDSP_DMA_DEPTH) complete_oldest(q);
  dma_copy *c = &q->ring[(q->head + q->count) % TIDSP_DMA_DEPTH];
  c->dst = dst;
  c->src = src;
  c->bytes = bytes;
  q->count++;
  return TIDSP_OK;
}

int32_t tidsp_dma_wait(int32_t queue, int32_t max_inflight) {
  if (queue < 0 || queue >= TIDSP_DMA_QUEUES || max_inflight < 0) return TIDSP_ERR_PARAM;
  dma_queue *q = &queues[queue];
  while (q->count > max_inflight) complete_oldest(q);
  return TIDSP_OK;
}
