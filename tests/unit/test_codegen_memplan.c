/*
 * The memory planner (compiler/schedule/memplan.h), one test per policy.
 */
#include <stdint.h>
#include <stdlib.h>

#include "memplan_reference.h"
#include "schedule/memplan.h"
#include "unit.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static size_t plan(const cs_memplan_tensor *t, int n, size_t align, size_t *off) {
  size_t pools[CS_POOL_COUNT];
  cs_status st = cs_memplan_solve(t, n, align, off, pools);
  CHECK(st == CS_OK);
  CHECK_MSG(cs_memplan_check(t, n, align, off) == 0, "placement has an overlap or misalignment");
  return pools[CS_POOL_DDR];
}

static void disjoint_lifetimes_share_memory(void) {
  cs_memplan_tensor t[] = {{1000, 0, 1, 0}, {1000, 2, 3, 0}, {1000, 4, 5, 0}};
  size_t off[3];
  size_t size = plan(t, 3, 64, off);
  CHECK(off[0] == 0 && off[1] == 0 && off[2] == 0);
  CHECK(size == 1000);
}

static void kernel_output_never_shares_with_its_input(void) {
  /* x is last read at step 1, where y is written. */
  cs_memplan_tensor t[] = {{256, 0, 1, 0}, {256, 1, 2, 0}};
  size_t off[2];
  size_t size = plan(t, 2, 64, off);
  CHECK(off[0] != off[1]);
  CHECK(size == 512);
}

static void offsets_are_aligned(void) {
  cs_memplan_tensor t[] = {{3, 0, 9, 0}, {5, 0, 9, 0}, {7, 0, 9, 0}, {65, 0, 9, 0}};
  size_t off[4];
  plan(t, 4, 64, off);
  for (int i = 0; i < 4; i++) CHECK_MSG(off[i] % 64 == 0, "offset %zu", off[i]);
  plan(t, 4, 128, off);
  for (int i = 0; i < 4; i++) CHECK_MSG(off[i] % 128 == 0, "offset %zu", off[i]);
}

/* Walls live throughout, holes only early: at step 5 the free gaps are
 * [400, 700) (300 bytes) and [950, 1150) (200 bytes). A 120-byte tensor
 * there goes into the 200-byte gap (best fit), not the first one. */
static void best_fit_takes_the_smallest_gap(void) {
  cs_memplan_tensor t[] = {
      {400, 0, 9, 0}, /* wall  → 0 */
      {300, 0, 1, 0}, /* hole  → 400 */
      {250, 0, 9, 0}, /* wall  → 700 */
      {200, 0, 1, 0}, /* hole  → 950 */
      {150, 0, 9, 0}, /* wall  → 1150 */
      {120, 5, 6, 0}, /* fits both holes */
  };
  size_t off[6];
  size_t size = plan(t, 6, 1, off);
  CHECK(off[0] == 0 && off[1] == 400 && off[2] == 700 && off[3] == 950 && off[4] == 1150);
  CHECK_MSG(off[5] == 950, "placed at %zu", off[5]);
  CHECK(size == 1300);
}

static void largest_tensors_are_placed_first(void) {
  /* Same lifetimes: the larger one gets offset 0 whatever the input order. */
  cs_memplan_tensor t[] = {{100, 0, 3, 0}, {5000, 0, 3, 0}};
  size_t off[2];
  plan(t, 2, 64, off);
  CHECK(off[1] == 0);
  CHECK(off[0] == 5056); /* 5000 rounded up to 64 */
}

static void lower_bound_is_the_max_bytes_live_at_one_step(void) {
  cs_memplan_tensor t[] = {{100, 0, 2, 0}, {200, 1, 3, 0}, {50, 3, 4, 0}, {1000, 5, 5, 0},
                           {7, 0, 9, 1}};
  /* step 1..2: 300; step 3: 250; step 5: 1000. Pool 1 is separate. */
  CHECK(cs_memplan_lower_bound(t, N_OF(t), CS_POOL_DDR) == 1000);
  CHECK(cs_memplan_lower_bound(t, N_OF(t), CS_POOL_L2) == 7);
  cs_memplan_tensor u[] = {{100, 0, 2, 0}, {200, 1, 3, 0}, {50, 3, 4, 0}};
  CHECK(cs_memplan_lower_bound(u, N_OF(u), CS_POOL_DDR) == 300);
}

static void pools_are_planned_independently(void) {
  cs_memplan_tensor t[] = {{640, 0, 5, CS_POOL_DDR}, {320, 0, 5, CS_POOL_L2}, {64, 0, 5, CS_POOL_L2}};
  size_t off[3], pools[CS_POOL_COUNT];
  CHECK(cs_memplan_solve(t, 3, 64, off, pools) == CS_OK);
  CHECK(off[0] == 0 && off[1] == 0 && off[2] == 320);
  CHECK(pools[CS_POOL_DDR] == 640 && pools[CS_POOL_L2] == 384);
}

static void zero_byte_tensors_take_no_space(void) {
  cs_memplan_tensor t[] = {{0, 0, 9, 0}, {64, 0, 9, 0}, {0, 3, 4, 0}};
  size_t off[3];
  size_t size = plan(t, 3, 64, off);
  CHECK(size == 64);
  CHECK(off[1] == 0);
}

static void bad_requests_are_errors(void) {
  cs_memplan_tensor backwards[] = {{64, 3, 2, 0}};
  cs_memplan_tensor bad_pool[] = {{64, 0, 1, 7}};
  size_t off[1], pools[CS_POOL_COUNT];
  CHECK(cs_memplan_solve(backwards, 1, 64, off, pools) == CS_ERR_INTERNAL);
  CHECK(cs_memplan_solve(bad_pool, 1, 64, off, pools) == CS_ERR_INTERNAL);
  cs_memplan_tensor ok[] = {{64, 0, 1, 0}};
  CHECK(cs_memplan_solve(ok, 1, 48, off, pools) == CS_ERR_INTERNAL);
}

/* Deterministic pseudo-random numbers (no libc rand: same on every host). */
static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static void random_lifetimes_never_overlap(void) {
  uint32_t seed = 12345;
  for (int trial = 0; trial < 50; trial++) {
    enum { N = 120 };
    cs_memplan_tensor t[N];
    size_t off[N];
    for (int i = 0; i < N; i++) {
      int a = (int)(lcg(&seed) % 100), len = (int)(lcg(&seed) % 20);
      t[i] = (cs_memplan_tensor){1 + lcg(&seed) % 5000, a, a + len, (int)(lcg(&seed) % 2)};
    }
    size_t pools[CS_POOL_COUNT];
    CHECK(cs_memplan_solve(t, N, 64, off, pools) == CS_OK);
    CHECK(cs_memplan_check(t, N, 64, off) == 0);
    for (int p = 0; p < CS_POOL_COUNT; p++) CHECK(pools[p] >= cs_memplan_lower_bound(t, N, p));
  }
}

/* A CNN-shaped schedule: a chain of activations, each read by the next
 * layer, with residual branches that stay live across two layers (ResNet
 * blocks) and channel counts that double as the spatial size halves. */
static void cnn_shaped_graphs_stay_within_10_percent_of_the_bound(void) {
  enum { MAX = 256 };
  cs_memplan_tensor t[MAX];
  size_t off[MAX];
  int n = 0, step = 0;
  size_t c = 64, hw = 112 * 112;
  t[n++] = (cs_memplan_tensor){3 * 224 * 224, step, step + 1, 0}; /* input conv */
  step++;
  for (int stage = 0; stage < 4; stage++) {
    for (int block = 0; block < 2; block++) {
      size_t bytes = c * hw;
      int start = step;
      t[n++] = (cs_memplan_tensor){bytes, start, start + 1, 0};     /* conv a */
      t[n++] = (cs_memplan_tensor){bytes, start + 1, start + 2, 0}; /* conv b */
      t[n++] = (cs_memplan_tensor){bytes, start, start + 2, 0};     /* skip */
      t[n++] = (cs_memplan_tensor){bytes, start + 2, start + 3, 0}; /* add */
      step += 3;
    }
    c *= 2;
    hw /= 4;
  }
  size_t size = plan(t, n, 64, off);
  size_t lb = cs_memplan_lower_bound(t, n, CS_POOL_DDR);
  CHECK_MSG(size * 100 <= lb * 110, "arena %zu vs lower bound %zu", size, lb);

  /* An inverted-residual (MobileNet V2) chain: expand ×6, depthwise,
   * project, add; the block input is read by the expand and by the add. */
  n = 0;
  step = 0;
  size_t ch = 16;
  hw = 56 * 56;
  t[n++] = (cs_memplan_tensor){ch * hw, 0, 4, 0}; /* first block input */
  for (int b = 0; b < 12 && n + 4 <= MAX; b++) {
    size_t in = ch * hw;
    int s0 = step;
    t[n++] = (cs_memplan_tensor){6 * in, s0 + 1, s0 + 2, 0}; /* expand */
    t[n++] = (cs_memplan_tensor){6 * in, s0 + 2, s0 + 3, 0}; /* depthwise */
    t[n++] = (cs_memplan_tensor){in, s0 + 3, s0 + 4, 0};     /* project */
    t[n++] = (cs_memplan_tensor){in, s0 + 4, s0 + 8, 0};     /* add = next input */
    step += 4;
  }
  size = plan(t, n, 64, off);
  lb = cs_memplan_lower_bound(t, n, CS_POOL_DDR);
  CHECK_MSG(size * 100 <= lb * 110, "arena %zu vs lower bound %zu", size, lb);
}

/* The planner answers conflict queries from an index over steps; the
 * plans must be exactly those of the scan-everything reference, whatever
 * the shape of the lifetimes: short chains, long-lived tensors, both
 * pools, zero-byte tensors, equal sizes (ties), more than the 4000 tensors
 * above which the randomized orders stop. */
static void plans_equal_the_scanning_reference(void) {
  enum { CHAIN, LONG_LIVED, MIXED };
  static const struct { int n, kind; } cases[] = {
      {1, CHAIN},      {2, MIXED},       {7, LONG_LIVED}, {60, CHAIN},  {60, LONG_LIVED}, {60, MIXED},
      {300, CHAIN},    {300, LONG_LIVED}, {300, MIXED},   {900, CHAIN}, {900, MIXED},      {4100, CHAIN},
  };
  uint32_t seed = 777;
  for (int trial = 0; trial < (int)(sizeof cases / sizeof cases[0]); trial++) {
    int n = cases[trial].n, kind = cases[trial].kind;
    cs_memplan_tensor *t = malloc(sizeof *t * (size_t)n);
    size_t *off = malloc(sizeof *off * (size_t)n), *ref = malloc(sizeof *ref * (size_t)n);
    int steps = 1 + (int)(lcg(&seed) % (unsigned)(2 * n + 1));
    for (int i = 0; i < n; i++) {
      int a = (int)(lcg(&seed) % (unsigned)steps);
      int len = kind == CHAIN ? (int)(lcg(&seed) % 3)
                : kind == LONG_LIVED ? (int)(lcg(&seed) % (unsigned)steps)
                                     : (int)(lcg(&seed) % 20);
      size_t size = trial % 3 == 0 ? 64 * (1 + lcg(&seed) % 4) : lcg(&seed) % 5000; /* ties; zeros */
      t[i] = (cs_memplan_tensor){size, a - 5, a - 5 + len, (int)(lcg(&seed) % 2)}; /* steps < 0 too */
    }
    size_t pools[CS_POOL_COUNT], ref_pools[CS_POOL_COUNT];
    size_t align = trial % 2 ? 64 : 1;
    CHECK(cs_memplan_solve(t, n, align, off, pools) == CS_OK);
    ref_memplan_solve(t, n, align, ref, ref_pools);
    int same = !memcmp(pools, ref_pools, sizeof pools);
    for (int i = 0; i < n && same; i++) same = off[i] == ref[i];
    CHECK_MSG(same, "case %d (%d tensors): the plan differs from the reference", trial, n);
    free(t);
    free(off);
    free(ref);
  }
}

int main(void) {
  disjoint_lifetimes_share_memory();
  kernel_output_never_shares_with_its_input();
  offsets_are_aligned();
  best_fit_takes_the_smallest_gap();
  largest_tensors_are_placed_first();
  lower_bound_is_the_max_bytes_live_at_one_step();
  pools_are_planned_independently();
  zero_byte_tensors_take_no_space();
  bad_requests_are_errors();
  random_lifetimes_never_overlap();
  cnn_shaped_graphs_stay_within_10_percent_of_the_bound();
  plans_equal_the_scanning_reference();
  UNIT_MAIN_END();
}
