/*
 * First-fit allocation over a fixed, offset-sorted block table. A block
 * split leaves at most three blocks (alignment gap, allocation, rest); a
 * free merges with free neighbours, so the table stays short.
 */
#include "pool.h"

#include <string.h>

void fw_pool_init(fw_pool *p, const char *name, void *base, size_t size) {
  memset(p, 0, sizeof *p);
  p->name = name;
  p->base = (uint8_t *)base;
  p->size = size;
  p->blocks[0].off = 0;
  p->blocks[0].size = size;
  p->blocks[0].used = 0;
  p->n_blocks = size > 0 ? 1 : 0;
}

static void insert_at(fw_pool *p, int i, size_t off, size_t size, int used) {
  memmove(&p->blocks[i + 1], &p->blocks[i], (size_t)(p->n_blocks - i) * sizeof p->blocks[0]);
  p->blocks[i].off = off;
  p->blocks[i].size = size;
  p->blocks[i].used = used;
  p->n_blocks++;
}

static void remove_at(fw_pool *p, int i) {
  memmove(&p->blocks[i], &p->blocks[i + 1], (size_t)(p->n_blocks - i - 1) * sizeof p->blocks[0]);
  p->n_blocks--;
}

void *fw_pool_alloc(fw_pool *p, size_t size, size_t align) {
  if (size == 0) size = 1;
  if (align == 0 || (align & (align - 1))) return NULL;
  for (int i = 0; i < p->n_blocks; i++) {
    fw_block *b = &p->blocks[i];
    if (b->used) continue;
    uintptr_t start = (uintptr_t)(p->base + b->off);
    size_t pad = (size_t)(((start + align - 1) & ~(uintptr_t)(align - 1)) - start);
    if (pad > b->size || size > b->size - pad) continue;
    size_t rest = b->size - pad - size;
    int needed = (pad > 0) + (rest > 0);
    if (p->n_blocks + needed > FW_POOL_MAX_BLOCKS) return NULL;
    size_t off = b->off;
    if (pad > 0) {
      b->size = pad; /* the gap stays free */
      insert_at(p, ++i, off + pad, size, 1);
    } else {
      b->size = size;
      b->used = 1;
    }
    if (rest > 0) insert_at(p, i + 1, off + pad + size, rest, 0);
    return p->base + off + pad;
  }
  return NULL;
}

int fw_pool_free(fw_pool *p, void *ptr) {
  if (!ptr || (uint8_t *)ptr < p->base) return -1;
  size_t off = (size_t)((uint8_t *)ptr - p->base);
  for (int i = 0; i < p->n_blocks; i++) {
    if (p->blocks[i].off != off) continue;
    if (!p->blocks[i].used) return -1;
    p->blocks[i].used = 0;
    if (i + 1 < p->n_blocks && !p->blocks[i + 1].used) {
      p->blocks[i].size += p->blocks[i + 1].size;
      remove_at(p, i + 1);
    }
    if (i > 0 && !p->blocks[i - 1].used) {
      p->blocks[i - 1].size += p->blocks[i].size;
      remove_at(p, i);
    }
    return 0;
  }
  return -1;
}

size_t fw_pool_free_bytes(const fw_pool *p) {
  size_t n = 0;
  for (int i = 0; i < p->n_blocks; i++)
    if (!p->blocks[i].used) n += p->blocks[i].size;
  return n;
}

size_t fw_pool_largest_free(const fw_pool *p) {
  size_t n = 0;
  for (int i = 0; i < p->n_blocks; i++)
    if (!p->blocks[i].used && p->blocks[i].size > n) n = p->blocks[i].size;
  return n;
}
