/*
 * memplan.h — the memory planner: data plus one pure function.
 *
 * Input: tensors, each with a byte size, a live range [first, last] of
 * execution steps (inclusive) and a pool. Output: an offset per tensor such
 * that two tensors of the same pool whose live ranges intersect never
 * overlap in memory, every offset is a multiple of `align`, and each pool's
 * size (the largest offset + size in it) stays close to the live-bytes
 * lower bound.
 *
 * A kernel's inputs are last used at the step that defines its output, so
 * the ranges intersect there and an output never shares memory with an
 * input of the same kernel (kernels are not in-place).
 *
 * Policy (greedy, best fit): tensors are placed one at a time; each goes
 * into the smallest gap between already placed tensors whose live ranges
 * intersect its own, or after the last of them when no gap is big enough.
 * No single placement order is best for every graph (largest-first, as in
 * TFLite, loses 15% on MobileNet-like inverted residuals), so four orders
 * are tried — largest first, largest size×lifetime first, chronological,
 * longest-lived first — and the smallest result kept (ties: the earlier
 * order). Zero-byte tensors get offset 0 and constrain nothing.
 */
#ifndef CSTATIC_SCHEDULE_MEMPLAN_H
#define CSTATIC_SCHEDULE_MEMPLAN_H

#include <stddef.h>

#include "ir.h"

/* Pools: DDR is the general arena; L2 SRAM is reserved for the L2/DMA
 * planner (not used yet). */
enum { CS_POOL_DDR = 0, CS_POOL_L2 = 1, CS_POOL_COUNT = 2 };

typedef struct cs_memplan_tensor {
  size_t size;     /* bytes */
  int first, last; /* live steps, inclusive; first <= last */
  int pool;        /* CS_POOL_* */
} cs_memplan_tensor;

/* Place n tensors. offsets[n] receives each offset; pool_size[CS_POOL_COUNT]
 * receives each pool's exact size in bytes (0 for an unused pool). align
 * must be a power of two. Returns CS_ERR_INTERNAL on a bad request (a
 * range with first > last, a pool out of range, a bad alignment) naming
 * the tensor index. */
cs_status cs_memplan_solve(const cs_memplan_tensor *t, int n, size_t align,
                           size_t *offsets, size_t *pool_size);

/* Max over steps of the bytes live at that step in `pool`: no placement
 * can use less. SIZE_MAX when out of memory (message recorded). */
size_t cs_memplan_lower_bound(const cs_memplan_tensor *t, int n, int pool);

/* Check a placement: 0 if no two intersecting tensors overlap and every
 * offset is aligned, else the index of the first offending tensor + 1. */
int cs_memplan_check(const cs_memplan_tensor *t, int n, size_t align,
                     const size_t *offsets);

/* A tensor by where it lies in its pool, for qsort with cs_offset_order_cmp:
 * by offset, then by idx (ties in a fixed order). The planner sorts a
 * tensor's placed neighbours so; codegen lists the weights blob and the
 * arena so. */
typedef struct cs_offset_order {
  size_t offset;
  int idx;
} cs_offset_order;
int cs_offset_order_cmp(const void *a, const void *b);

#endif
