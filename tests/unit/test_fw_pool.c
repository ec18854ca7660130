/* The firmware's pools (fw/pool.c): alignment, exhaustion, coalescing. */
#include <stdint.h>

#include "pool.h"
#include "unit.h"

static _Alignas(4096) uint8_t mem[1 << 16];

int main(void) {
  fw_pool p;
  fw_pool_init(&p, "DDR heap", mem, sizeof mem);
  CHECK(fw_pool_free_bytes(&p) == sizeof mem);
  uint8_t *a = fw_pool_alloc(&p, 100, 64);
  uint8_t *b = fw_pool_alloc(&p, 1000, 4096);
  uint8_t *c = fw_pool_alloc(&p, 10, 16);
  CHECK(a == mem && b && ((uintptr_t)b & 4095) == 0 && c);
  CHECK(c >= a + 100 && (c + 10 <= b || c >= b + 1000)); /* no overlap */
  CHECK(fw_pool_alloc(&p, sizeof mem, 1) == NULL);        /* too big */
  CHECK(fw_pool_alloc(&p, 8, 3) == NULL);                 /* not a power of two */
  CHECK(fw_pool_free(&p, a + 1) == -1);                   /* not a block start */
  CHECK(fw_pool_free(&p, b) == 0 && fw_pool_free(&p, b) == -1);
  CHECK(fw_pool_free(&p, a) == 0 && fw_pool_free(&p, c) == 0);
  /* Everything merged back into one block. */
  CHECK(p.n_blocks == 1 && fw_pool_largest_free(&p) == sizeof mem);
  /* Exhaustion by many small blocks, then all freed. */
  void *ptrs[300];
  int n = 0;
  while (n < 300 && (ptrs[n] = fw_pool_alloc(&p, 64, 64))) n++;
  CHECK(n > 0 && n < 300); /* the block table limits it, without corruption */
  for (int i = 0; i < n; i++) CHECK(fw_pool_free(&p, ptrs[i]) == 0);
  CHECK(p.n_blocks == 1 && fw_pool_free_bytes(&p) == sizeof mem);
  UNIT_MAIN_END();
}
