/*
 * pool.h — the firmware's static memory pools (L2 SRAM, the DDR heap).
 *
 * Each pool is one region reserved when the firmware starts; allocations
 * are carved from it first-fit with a fixed block table, so nothing is
 * allocated from the C library after start-up, and a full pool says so
 * (largest free block, total) instead of failing somewhere later.
 */
#ifndef CSTATIC_FW_POOL_H
#define CSTATIC_FW_POOL_H

#include <stddef.h>
#include <stdint.h>

enum { FW_POOL_MAX_BLOCKS = 256 };

typedef struct fw_block {
  size_t off, size;
  int used;
} fw_block;

typedef struct fw_pool {
  const char *name; /* "DDR heap", "L2 SRAM": for messages */
  uint8_t *base;
  size_t size;
  fw_block blocks[FW_POOL_MAX_BLOCKS]; /* sorted by offset, covering [0, size) */
  int n_blocks;
} fw_pool;

void fw_pool_init(fw_pool *p, const char *name, void *base, size_t size);
/* size bytes aligned to align (a power of two); NULL when no free block
 * holds them or the block table is full. size 0 is treated as 1. */
void *fw_pool_alloc(fw_pool *p, size_t size, size_t align);
/* 0, or -1 if ptr is not the start of a used block of p. */
int fw_pool_free(fw_pool *p, void *ptr);
size_t fw_pool_free_bytes(const fw_pool *p);
size_t fw_pool_largest_free(const fw_pool *p);

#endif
