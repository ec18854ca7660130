/*
 * l2.c — the bound L2 SRAM region (cstatic/dma.h): a base and a size set
 * by the platform, handed whole to the model that asks for no more than
 * it holds. The model plans its own offsets inside it (the L2 planner), so
 * there is nothing to allocate here.
 *
 * A failing bind (a misaligned base) leaves the previous binding as it
 * was: the caller learns of its mistake without losing a good region.
 * Binding a region also starts the DMA engine (tidsp_dma_start): its one
 * allocation (the host's copy thread) happens here, at the platform's
 * init, not in the first inference's first copy. Asking for the region
 * (each inference's first step) starts it again: tidsp_dma_start readies
 * a running engine for the copies to come.
 */
#include "cstatic/dma.h"

#include "cstatic/tidsp.h"

static void *l2_base;
static size_t l2_size;

int32_t tidsp_l2_bind(void *base, size_t size) {
  if (!base || size == 0) {
    l2_base = NULL;
    l2_size = 0;
    return TIDSP_OK;
  }
  if ((uintptr_t)base % TIDSP_L2_ALIGN != 0) return TIDSP_ERR_ALIGN;
  l2_base = base;
  l2_size = size;
  (void)tidsp_dma_start(); /* cannot start: copies run synchronously, still correct */
  return TIDSP_OK;
}

void *tidsp_l2_scratch(size_t size) {
  if (!l2_base || size > l2_size) return NULL;
  /* A staged model asks for its region first thing in each inference:
   * have the engine ready for its copies (the host's copy thread polls
   * for them from now on instead of sleeping until the first one). */
  (void)tidsp_dma_start();
  return l2_base;
}
