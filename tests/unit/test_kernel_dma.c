/*
 * The DMA engine and the L2 scratch (cstatic/dma.h; runtime/dma/dma_host.c,
 * runtime/mem/l2.c). Most tests run the engine lazy (tidsp_dma_host_lazy):
 * its thread starts a copy only when a wait needs it or its queue is full,
 * so each test can see exactly which copies are done: a destination holds
 * its source's bytes once its copy completed and its old fill until then.
 * The eager tests (the default mode) check what holds whatever the
 * thread's timing: the results, the order, the wait's guarantee, a ring
 * kept full from another thread. Each test leaves every queue drained.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cstatic/dma.h"
#include "cstatic/profile.h"
#include "cstatic/tidsp.h"
#include "unit.h"

enum { N = 64, GUARD = 16, OLD = 0xEE };

/* A destination with guard bytes on both sides. */
typedef struct dst_buf {
  uint8_t lo[GUARD], data[N], hi[GUARD];
} dst_buf;

static void fill_dst(dst_buf *d) { memset(d, OLD, sizeof *d); }

static void fill_src(uint8_t *s, size_t n, uint8_t seed) {
  for (size_t i = 0; i < n; i++) s[i] = (uint8_t)(seed + 7 * i);
}

static int all_are(const uint8_t *p, size_t n, uint8_t v) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

/* Untouched: old fill everywhere. */
static int untouched(const dst_buf *d) { return all_are((const uint8_t *)d, sizeof *d, OLD); }

/* Copied: the first n bytes are src's, the rest and the guards the old fill. */
static int copied(const dst_buf *d, const uint8_t *src, size_t n) {
  return memcmp(d->data, src, n) == 0 && all_are(d->data + n, N - n, OLD) &&
         all_are(d->lo, GUARD, OLD) && all_are(d->hi, GUARD, OLD);
}

static void drain_all(void) {
  for (int32_t q = 0; q < TIDSP_DMA_QUEUES; q++) CHECK(tidsp_dma_wait(q, 0) == TIDSP_OK);
}

static void test_copy_completes_at_its_wait(void) {
  static uint8_t src[N];
  static dst_buf d;
  fill_src(src, N, 1);
  fill_dst(&d);
  CHECK(tidsp_dma_copy(0, d.data, src, N, 0) == TIDSP_OK);
  CHECK(untouched(&d)); /* deferred: nothing moves before the wait */
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK);
  CHECK(copied(&d, src, N));
  /* A partial copy writes only its bytes. */
  fill_dst(&d);
  CHECK(tidsp_dma_copy(0, d.data, src, 13, TIDSP_DMA_BYPASS_CACHE) == TIDSP_OK);
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK);
  CHECK(copied(&d, src, 13));
  /* A wait on an idle queue returns at once. */
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK && copied(&d, src, 13));
  drain_all();
}

/* wait(q, k) completes the oldest groups and leaves exactly the newest k
 * (here one copy per group). */
static void test_wait_leaves_the_newest_k(void) {
  enum { C = 5 };
  static uint8_t src[C][N];
  static dst_buf d[C];
  for (int i = 0; i < C; i++) {
    fill_src(src[i], N, (uint8_t)(10 * i + 3));
    fill_dst(&d[i]);
    CHECK(tidsp_dma_copy(1, d[i].data, src[i], N, 0) == TIDSP_OK);
    CHECK(tidsp_dma_commit(1) == TIDSP_OK);
    CHECK(tidsp_dma_commit(1) == TIDSP_OK); /* an empty group is no group */
  }
  const int32_t steps[] = {C + 3, C, 3, 3, 1, 0};
  for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
    int32_t k = steps[s];
    CHECK(tidsp_dma_wait(1, k) == TIDSP_OK);
    int done = k >= C ? 0 : C - k;
    for (int i = 0; i < C; i++)
      CHECK_MSG(i < done ? copied(&d[i], src[i], N) : untouched(&d[i]),
                "after wait(1, %d) copy %d should be %s", (int)k, i, i < done ? "done" : "pending");
  }
  drain_all();
}

/* One queue completes in issue order: the later of two copies to one
 * destination wins, and a copy out of a buffer a previous copy fills sees
 * that copy's bytes. */
static void test_issue_order(void) {
  static uint8_t a[N], b[N], mid[N];
  static dst_buf d, chained;
  fill_src(a, N, 100);
  fill_src(b, N, 200);
  memset(mid, 0, sizeof mid);
  fill_dst(&d);
  fill_dst(&chained);
  CHECK(tidsp_dma_copy(2, d.data, a, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(2, d.data, b, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(2, mid, a, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(2, chained.data, mid, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_wait(2, 0) == TIDSP_OK);
  CHECK(copied(&d, b, N));
  CHECK(copied(&chained, a, N));
  drain_all();
}

/* A copy onto a full queue first completes the oldest, and only it. */
static void test_full_queue_forces_the_oldest(void) {
  enum { D = TIDSP_DMA_DEPTH, C = TIDSP_DMA_DEPTH + 3 };
  static uint8_t src[C][N];
  static dst_buf d[C];
  for (int i = 0; i < C; i++) {
    fill_src(src[i], N, (uint8_t)(i + 1));
    fill_dst(&d[i]);
  }
  for (int i = 0; i < D; i++) {
    CHECK(tidsp_dma_copy(3, d[i].data, src[i], N, 0) == TIDSP_OK);
    CHECK(tidsp_dma_commit(3) == TIDSP_OK);
  }
  for (int i = 0; i < D; i++) CHECK_MSG(untouched(&d[i]), "copy %d ran before the queue was full", i);
  for (int extra = 0; extra < C - D; extra++) {
    CHECK(tidsp_dma_copy(3, d[D + extra].data, src[D + extra], N, 0) == TIDSP_OK);
    CHECK(tidsp_dma_commit(3) == TIDSP_OK);
    for (int i = 0; i < C; i++)
      CHECK_MSG(i <= extra ? copied(&d[i], src[i], N) : untouched(&d[i]),
                "after %d copies beyond the depth, copy %d should be %s", extra + 1, i,
                i <= extra ? "done" : "pending");
  }
  /* D groups are in flight: wait(q, D) has nothing to do. */
  CHECK(tidsp_dma_wait(3, D) == TIDSP_OK && untouched(&d[C - D]));
  CHECK(tidsp_dma_wait(3, 0) == TIDSP_OK);
  for (int i = 0; i < C; i++) CHECK(copied(&d[i], src[i], N));
  drain_all();
}

/* Waiting on one queue leaves the others' copies pending; each queue
 * holds its own TIDSP_DMA_DEPTH. */
static void test_queues_are_independent(void) {
  static uint8_t src[TIDSP_DMA_QUEUES][N];
  static dst_buf d[TIDSP_DMA_QUEUES];
  for (int q = 0; q < TIDSP_DMA_QUEUES; q++) {
    fill_src(src[q], N, (uint8_t)(40 + q));
    fill_dst(&d[q]);
    CHECK(tidsp_dma_copy(q, d[q].data, src[q], N, 0) == TIDSP_OK);
  }
  for (int q = 0; q < TIDSP_DMA_QUEUES; q++) {
    CHECK(tidsp_dma_wait(q, 0) == TIDSP_OK);
    for (int p = 0; p < TIDSP_DMA_QUEUES; p++)
      CHECK_MSG(p <= q ? copied(&d[p], src[p], N) : untouched(&d[p]),
                "after waiting on queues 0..%d, queue %d's copy should be %s", q, p,
                p <= q ? "done" : "pending");
  }
  /* Filling queue 0 to its depth does not force anything on queue 1. */
  static uint8_t s1[N];
  static dst_buf d1, d0[TIDSP_DMA_DEPTH];
  fill_src(s1, N, 77);
  fill_dst(&d1);
  CHECK(tidsp_dma_copy(1, d1.data, s1, N, 0) == TIDSP_OK);
  for (int i = 0; i < TIDSP_DMA_DEPTH; i++) {
    fill_dst(&d0[i]);
    CHECK(tidsp_dma_copy(0, d0[i].data, s1, N, 0) == TIDSP_OK);
  }
  CHECK(untouched(&d1) && untouched(&d0[0]));
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK);
  CHECK(untouched(&d1) && copied(&d0[TIDSP_DMA_DEPTH - 1], s1, N));
  CHECK(tidsp_dma_wait(1, 0) == TIDSP_OK && copied(&d1, s1, N));
  drain_all();
}

/* Each documented error, and that a failing call issues nothing: a
 * pending copy P sits on queue 0, a full queue 1 holds its oldest Q; after
 * the failing calls, wait(0, 1) must still leave P pending (no failed
 * call counted in flight), Q must still be pending (nothing forced), and
 * no failed call's destination may change when everything drains. */
static void test_errors_issue_nothing(void) {
  static uint8_t src[N], buf[2 * N];
  static dst_buf p, q_first, victim, q_rest[TIDSP_DMA_DEPTH - 1];
  fill_src(src, N, 9);
  fill_dst(&p);
  fill_dst(&q_first);
  fill_dst(&victim);
  memset(buf, 0x55, sizeof buf);
  CHECK(tidsp_dma_copy(0, p.data, src, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(1, q_first.data, src, N, 0) == TIDSP_OK);
  for (int i = 0; i < TIDSP_DMA_DEPTH - 1; i++) {
    fill_dst(&q_rest[i]);
    CHECK(tidsp_dma_copy(1, q_rest[i].data, src, N, 0) == TIDSP_OK);
  }

  for (int32_t q = 0; q < 2; q++) {
    /* queue out of range */
    CHECK(tidsp_dma_copy(-1, victim.data, src, N, 0) == TIDSP_ERR_PARAM);
    CHECK(tidsp_dma_copy(TIDSP_DMA_QUEUES, victim.data, src, N, 0) == TIDSP_ERR_PARAM);
    CHECK(tidsp_dma_copy(TIDSP_DMA_QUEUES, victim.data, src, 0, 0) == TIDSP_ERR_PARAM);
    /* NULL with bytes > 0 */
    CHECK(tidsp_dma_copy(q, NULL, src, N, 0) == TIDSP_ERR_NULL);
    CHECK(tidsp_dma_copy(q, victim.data, NULL, N, 0) == TIDSP_ERR_NULL);
    CHECK(tidsp_dma_copy(q, NULL, NULL, 1, 0) == TIDSP_ERR_NULL);
    /* unknown flags */
    CHECK(tidsp_dma_copy(q, victim.data, src, N, 2u) == TIDSP_ERR_PARAM);
    CHECK(tidsp_dma_copy(q, victim.data, src, N, 0x80000000u) == TIDSP_ERR_PARAM);
    CHECK(tidsp_dma_copy(q, victim.data, src, N, TIDSP_DMA_BYPASS_CACHE | 4u) == TIDSP_ERR_PARAM);
    /* overlapping ranges: the same, a byte shared at either end */
    CHECK(tidsp_dma_copy(q, buf, buf, N, 0) == TIDSP_ERR_PARAM);
    CHECK(tidsp_dma_copy(q, buf + N - 1, buf, N, 0) == TIDSP_ERR_PARAM);
    CHECK(tidsp_dma_copy(q, buf, buf + N - 1, N, 0) == TIDSP_ERR_PARAM);
    CHECK(tidsp_dma_copy(q, buf + 1, buf, 2, 0) == TIDSP_ERR_PARAM);
    /* bytes == 0: a no-op, even with NULL or the same pointer */
    CHECK(tidsp_dma_copy(q, NULL, NULL, 0, 0) == TIDSP_OK);
    CHECK(tidsp_dma_copy(q, buf, buf, 0, 0) == TIDSP_OK);
    CHECK(tidsp_dma_copy(q, victim.data, src, 0, TIDSP_DMA_BYPASS_CACHE) == TIDSP_OK);
  }
  /* waits */
  CHECK(tidsp_dma_wait(-1, 0) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_wait(TIDSP_DMA_QUEUES, 0) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_wait(0, -1) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_commit(-1) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_commit(TIDSP_DMA_QUEUES) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_wait(1, INT32_MIN) == TIDSP_ERR_PARAM);
  /* the failing waits completed nothing */
  CHECK(untouched(&p) && untouched(&q_first));

  CHECK(tidsp_dma_wait(0, 1) == TIDSP_OK);
  CHECK_MSG(untouched(&p), "a failed or empty copy was counted in flight on queue 0");
  CHECK_MSG(untouched(&q_first), "a failed or empty copy forced the oldest of the full queue 1");
  drain_all();
  CHECK(copied(&p, src, N) && copied(&q_first, src, N));
  for (int i = 0; i < TIDSP_DMA_DEPTH - 1; i++) CHECK(copied(&q_rest[i], src, N));
  CHECK(untouched(&victim));
  CHECK(all_are(buf, sizeof buf, 0x55));

  /* Adjacent ranges do not overlap. */
  CHECK(tidsp_dma_copy(0, buf + N, buf, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(0, buf, buf + N, N, 0) == TIDSP_OK);
  drain_all();
}

/* tidsp_dma_copy_2d: an NCHW tile's rows (3 channels of a 4×5 plane, rows
 * 1-2) into a dense strip and back out, one queue slot per copy: it
 * completes at its wait; bad pitches and overlapping spans are refused,
 * rows or row_bytes 0 is a no-op. */
static void test_copy_2d(void) {
  static uint8_t plane[3 * 4 * 5], strip[3 * 2 * 5 + 8], back[3 * 4 * 5];
  fill_src(plane, sizeof plane, 3);
  memset(strip, OLD, sizeof strip);
  memset(back, OLD, sizeof back);
  CHECK(tidsp_dma_copy_2d(0, strip, 10, plane + 5, 20, 10, 3, 0) == TIDSP_OK);
  CHECK(all_are(strip, sizeof strip, OLD)); /* lazy: at its wait */
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK);
  for (int c = 0; c < 3; c++) CHECK(memcmp(strip + 10 * c, plane + 20 * c + 5, 10) == 0);
  CHECK(all_are(strip + 30, 8, OLD));
  CHECK(tidsp_dma_copy_2d(2, back + 5, 20, strip, 10, 10, 3, 0) == TIDSP_OK);
  CHECK(tidsp_dma_wait(2, 0) == TIDSP_OK);
  for (int c = 0; c < 3; c++) {
    CHECK(memcmp(back + 20 * c + 5, plane + 20 * c + 5, 10) == 0);
    CHECK(all_are(back + 20 * c, 5, OLD) && all_are(back + 20 * c + 15, 5, OLD));
  }
  /* more rows than the ring holds copies: still one slot */
  static uint8_t tall_src[TIDSP_DMA_DEPTH * 4][8], tall_dst[TIDSP_DMA_DEPTH * 4][8];
  for (int i = 0; i < TIDSP_DMA_DEPTH * 4; i++) fill_src(tall_src[i], 8, (uint8_t)i);
  for (int i = 0; i < TIDSP_DMA_DEPTH - 1; i++) CHECK(tidsp_dma_copy_2d(1, tall_dst, 8, tall_src, 8, 8, 1, 0) == 0);
  CHECK(tidsp_dma_copy_2d(1, tall_dst, 8, tall_src, 8, 8, TIDSP_DMA_DEPTH * 4, 0) == TIDSP_OK);
  CHECK(tidsp_dma_wait(1, 0) == TIDSP_OK);
  CHECK(memcmp(tall_dst, tall_src, sizeof tall_src) == 0);
  /* errors */
  CHECK(tidsp_dma_copy_2d(0, strip, 9, plane, 20, 10, 2, 0) == TIDSP_ERR_PARAM);  /* dst pitch < row */
  CHECK(tidsp_dma_copy_2d(0, strip, 10, plane, 9, 10, 2, 0) == TIDSP_ERR_PARAM);  /* src pitch < row */
  CHECK(tidsp_dma_copy_2d(0, plane + 10, 20, plane, 20, 5, 2, 0) == TIDSP_ERR_PARAM); /* spans interleave */
  CHECK(tidsp_dma_copy_2d(0, plane + 24, 5, plane, 20, 5, 2, 0) == TIDSP_ERR_PARAM);  /* into the src span */
  CHECK(tidsp_dma_copy_2d(0, NULL, 10, plane, 20, 10, 1, 0) == TIDSP_ERR_NULL);
  CHECK(tidsp_dma_copy_2d(TIDSP_DMA_QUEUES, strip, 10, plane, 20, 10, 1, 0) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_copy_2d(0, strip, 10, plane, 20, 10, 1, 2u) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_copy_2d(0, strip, 10, plane, SIZE_MAX / 2, 10, 3, 0) == TIDSP_ERR_PARAM); /* span wraps */
  CHECK(tidsp_dma_copy_2d(0, NULL, 0, NULL, 0, 0, 5, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy_2d(0, NULL, 0, NULL, 0, 5, 0, 0) == TIDSP_OK);
  /* one row: pitches unused */
  memset(strip, OLD, sizeof strip);
  CHECK(tidsp_dma_copy_2d(0, strip, 0, plane, 0, 10, 1, 0) == TIDSP_OK);
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK && memcmp(strip, plane, 10) == 0 && all_are(strip + 10, 28, OLD));
  drain_all();
}

static void test_l2(void) {
  static _Alignas(TIDSP_L2_ALIGN) uint8_t region[4 * TIDSP_L2_ALIGN];
  CHECK(tidsp_l2_bind(NULL, 0) == TIDSP_OK);
  CHECK(tidsp_l2_scratch(0) == NULL); /* unbound */
  CHECK(tidsp_l2_scratch(1) == NULL);

  CHECK(tidsp_l2_bind(region, sizeof region) == TIDSP_OK);
  CHECK(tidsp_l2_scratch(sizeof region) == region); /* exact size */
  CHECK(tidsp_l2_scratch(1) == region);
  CHECK(tidsp_l2_scratch(0) == region);
  CHECK(tidsp_l2_scratch(sizeof region + 1) == NULL); /* too small */
  CHECK(tidsp_l2_scratch(SIZE_MAX) == NULL);

  /* A misaligned base fails and keeps the region bound before it. */
  CHECK(tidsp_l2_bind(region + 1, sizeof region - 1) == TIDSP_ERR_ALIGN);
  CHECK(tidsp_l2_bind(region + TIDSP_L2_ALIGN / 2, 64) == TIDSP_ERR_ALIGN);
  CHECK(tidsp_l2_scratch(sizeof region) == region);

  /* Rebinding replaces the region. */
  CHECK(tidsp_l2_bind(region + TIDSP_L2_ALIGN, 2 * TIDSP_L2_ALIGN) == TIDSP_OK);
  CHECK(tidsp_l2_scratch(2 * TIDSP_L2_ALIGN) == region + TIDSP_L2_ALIGN);
  CHECK(tidsp_l2_scratch(2 * TIDSP_L2_ALIGN + 1) == NULL);

  /* NULL or size 0 unbinds. */
  CHECK(tidsp_l2_bind(region, 0) == TIDSP_OK && tidsp_l2_scratch(0) == NULL);
  CHECK(tidsp_l2_bind(region, sizeof region) == TIDSP_OK && tidsp_l2_scratch(1) == region);
  CHECK(tidsp_l2_bind(NULL, sizeof region) == TIDSP_OK && tidsp_l2_scratch(1) == NULL);
  /* A misaligned base while unbound leaves it unbound. */
  CHECK(tidsp_l2_bind(region + 3, 8) == TIDSP_ERR_ALIGN && tidsp_l2_scratch(1) == NULL);
}

/* The generated code's pattern (dma.h): stage input and weights into L2,
 * wait, use the L2 copies. */
static void test_staging_pattern(void) {
  static _Alignas(TIDSP_L2_ALIGN) uint8_t region[2 * TIDSP_L2_ALIGN];
  static uint8_t input[100], weight[60];
  fill_src(input, sizeof input, 5);
  fill_src(weight, sizeof weight, 50);
  memset(region, 0, sizeof region);
  CHECK(tidsp_l2_bind(region, sizeof region) == TIDSP_OK);
  uint8_t *l2 = tidsp_l2_scratch(sizeof region);
  CHECK(l2 == region);
  if (!l2) return;
  const size_t in_off = 0, w_off = TIDSP_L2_ALIGN;
  CHECK(tidsp_dma_copy(0, l2 + in_off, input, sizeof input, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(0, l2 + w_off, weight, sizeof weight, 0) == TIDSP_OK);
  CHECK(all_are(l2, sizeof region, 0)); /* read before the wait: stale */
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK);
  CHECK(memcmp(l2 + in_off, input, sizeof input) == 0);
  CHECK(memcmp(l2 + w_off, weight, sizeof weight) == 0);
  CHECK(tidsp_l2_bind(NULL, 0) == TIDSP_OK);
  drain_all();
}

/* Groups: wait(q, k) counts groups, not copies. Three groups of 2, 3 and
 * 1 copies; wait(q, 2) completes the first group's two copies and nothing
 * else, wait(q, 1) the second's three; copies issued after a wait join a
 * new open group, which the next wait closes. */
static void test_wait_counts_groups(void) {
  enum { C = 8 };
  static uint8_t src[C][N];
  static dst_buf d[C];
  const int group_of[C] = {0, 0, 1, 1, 1, 2, 3, 3};
  for (int i = 0; i < C; i++) {
    fill_src(src[i], N, (uint8_t)(3 * i + 1));
    fill_dst(&d[i]);
  }
  for (int i = 0; i < 6; i++) {
    CHECK(tidsp_dma_copy(2, d[i].data, src[i], N, 0) == TIDSP_OK);
    if (i == 1 || i == 4 || i == 5) CHECK(tidsp_dma_commit(2) == TIDSP_OK);
  }
  const int32_t ks[] = {3, 2, 1};
  for (int s = 0; s < 3; s++) {
    CHECK(tidsp_dma_wait(2, ks[s]) == TIDSP_OK);
    for (int i = 0; i < 6; i++)
      CHECK_MSG(group_of[i] < s ? copied(&d[i], src[i], N) : untouched(&d[i]),
                "after wait(2, %d) copy %d (group %d) should be %s", (int)ks[s], i, group_of[i],
                group_of[i] < s ? "done" : "pending");
  }
  /* Group 2 is still in flight; two more copies form group 3 at the wait. */
  CHECK(tidsp_dma_copy(2, d[6].data, src[6], N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(2, d[7].data, src[7], N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_wait(2, 1) == TIDSP_OK);
  CHECK(copied(&d[5], src[5], N) && untouched(&d[6]) && untouched(&d[7]));
  CHECK(tidsp_dma_wait(2, 0) == TIDSP_OK);
  CHECK(copied(&d[6], src[6], N) && copied(&d[7], src[7], N));
  drain_all();
}

/* The spec's OC = 128 pipeline (c-static-lib-backend.txt "Generated Code
 * Structure"): tile 0's group, tile 1's group, wait(0, 1) leaves tile 1
 * in flight and tile 0 complete, wait(0, 0) completes tile 1. */
static void test_spec_pipeline(void) {
  static uint8_t in[N], w[2][N];
  static dst_buf l2_in[2], l2_w[2];
  fill_src(in, N, 11);
  for (int t = 0; t < 2; t++) {
    fill_src(w[t], N, (uint8_t)(20 + t));
    fill_dst(&l2_in[t]);
    fill_dst(&l2_w[t]);
  }
  for (int t = 0; t < 2; t++) {
    CHECK(tidsp_dma_copy(0, l2_in[t].data, in, N, 0) == TIDSP_OK);
    CHECK(tidsp_dma_copy(0, l2_w[t].data, w[t], N, 0) == TIDSP_OK);
    CHECK(tidsp_dma_commit(0) == TIDSP_OK);
  }
  CHECK(tidsp_dma_wait(0, 1) == TIDSP_OK);
  CHECK(copied(&l2_in[0], in, N) && copied(&l2_w[0], w[0], N));
  CHECK(untouched(&l2_in[1]) && untouched(&l2_w[1]));
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK);
  CHECK(copied(&l2_in[1], in, N) && copied(&l2_w[1], w[1], N));
  drain_all();
}

/* ---- eager: the thread copies as soon as a copy is issued ------------- */

enum { BIG = 1 << 20, ROUNDS = 64 };
static uint8_t big_src[4][BIG], big_dst[4][BIG];

/* After wait(q, 1) every group but the newest is complete, whatever the
 * timing; after wait(q, 0) all are. Four 1 MiB copies per round, two
 * groups, every byte checked. */
static void test_eager_wait_guarantee(void) {
  for (int i = 0; i < 4; i++) fill_src(big_src[i], BIG, (uint8_t)(i * 31 + 7));
  for (int r = 0; r < 8; r++) {
    memset(big_dst, 0, sizeof big_dst);
    for (int i = 0; i < 4; i++) {
      CHECK(tidsp_dma_copy(1, big_dst[i], big_src[i], BIG, 0) == TIDSP_OK);
      if (i == 1) CHECK(tidsp_dma_commit(1) == TIDSP_OK);
    }
    CHECK(tidsp_dma_wait(1, 1) == TIDSP_OK);
    CHECK(memcmp(big_dst[0], big_src[0], BIG) == 0 && memcmp(big_dst[1], big_src[1], BIG) == 0);
    CHECK(tidsp_dma_wait(1, 0) == TIDSP_OK);
    CHECK(memcmp(big_dst[2], big_src[2], BIG) == 0 && memcmp(big_dst[3], big_src[3], BIG) == 0);
  }
}

/* The copy thread really runs beside the caller: a 1 MiB copy issued,
 * then half a second of sleep, ends (by the trace, read after the wait)
 * before the wait is called. */
static void test_eager_copies_without_a_wait(void) {
  static tidsp_dma_event ev[4];
  fill_src(big_src[0], BIG, 5);
  CHECK(tidsp_dma_trace_bind(ev, 4) == TIDSP_OK);
  CHECK(tidsp_dma_copy(0, big_dst[0], big_src[0], BIG, 0) == TIDSP_OK);
  struct timespec half = {0, 500000000L};
  nanosleep(&half, NULL);
  uint64_t before_wait = tidsp_profile_clock();
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK);
  CHECK(tidsp_dma_trace_count(NULL) == 1);
  CHECK_MSG(ev[0].end != 0 && ev[0].end < before_wait, "the copy did not run before its wait");
  CHECK(memcmp(big_dst[0], big_src[0], BIG) == 0);
  CHECK(tidsp_dma_trace_bind(NULL, 0) == TIDSP_OK);
}

/* A ring kept full: 10 × TIDSP_DMA_DEPTH copies of one queue, one group
 * each, issued faster than they complete; each issue onto a full ring
 * waits for room. Issue order holds: the later copy to one destination
 * wins. */
static void test_eager_ring_full(void) {
  enum { C = 10 * TIDSP_DMA_DEPTH, S = 4096 };
  static uint8_t src[C][S];
  static uint8_t dst[8][S];
  for (int i = 0; i < C; i++) fill_src(src[i], S, (uint8_t)i);
  for (int i = 0; i < C; i++) {
    CHECK(tidsp_dma_copy(3, dst[i % 8], src[i], S, 0) == TIDSP_OK);
    CHECK(tidsp_dma_commit(3) == TIDSP_OK);
  }
  CHECK(tidsp_dma_wait(3, 0) == TIDSP_OK);
  for (int j = 0; j < 8; j++) CHECK(memcmp(dst[j], src[C - 8 + j], S) == 0);
}

/* The trace: one event per copy (queue, group, bytes, issue <= start <=
 * end) and per marked layer, in issue order; beyond the capacity counted,
 * not stored. */
static void test_trace(void) {
  static tidsp_dma_event ev[4];
  static uint8_t a[N], b[N];
  fill_src(a, N, 1);
  CHECK(tidsp_dma_trace_bind(ev, -1) == TIDSP_ERR_PARAM);
  CHECK(tidsp_dma_trace_bind(ev, 4) == TIDSP_OK);
  CHECK(tidsp_dma_copy(2, b, a, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_commit(2) == TIDSP_OK);
  CHECK(tidsp_dma_copy(2, b, a, 10, 0) == TIDSP_OK);
  int32_t slot = tidsp_dma_trace_begin("conv3");
  CHECK(slot == 2);
  CHECK(tidsp_dma_wait(2, 0) == TIDSP_OK);
  tidsp_dma_trace_end(slot);
  CHECK(tidsp_dma_copy(1, b, a, 7, 0) == TIDSP_OK);
  CHECK(tidsp_dma_copy(1, b, a, 8, 0) == TIDSP_OK); /* beyond the capacity */
  CHECK(tidsp_dma_trace_begin("conv4") == -1);
  CHECK(tidsp_dma_wait(1, 0) == TIDSP_OK);
  int64_t dropped = -1;
  CHECK(tidsp_dma_trace_count(&dropped) == 4 && dropped == 2);
  CHECK(ev[0].kind == TIDSP_DMA_EV_COPY && ev[0].queue == 2 && ev[0].group == 0 && ev[0].bytes == N);
  CHECK(ev[1].kind == TIDSP_DMA_EV_COPY && ev[1].queue == 2 && ev[1].group == 1 && ev[1].bytes == 10);
  CHECK(ev[2].kind == TIDSP_DMA_EV_COMPUTE && ev[2].queue == -1 && strcmp(ev[2].name, "conv3") == 0);
  CHECK(ev[3].kind == TIDSP_DMA_EV_COPY && ev[3].queue == 1 && ev[3].group == 0 && ev[3].bytes == 7);
  for (int i = 0; i < 4; i++)
    CHECK_MSG(ev[i].issue <= ev[i].start && ev[i].start <= ev[i].end && ev[i].end != 0,
              "event %d: issue %llu start %llu end %llu", i, (unsigned long long)ev[i].issue,
              (unsigned long long)ev[i].start, (unsigned long long)ev[i].end);
  CHECK(tidsp_dma_trace_bind(NULL, 0) == TIDSP_OK);
  CHECK(tidsp_dma_trace_begin("x") == -1 && tidsp_dma_trace_count(NULL) == 0);
}

/* Shutdown completes what is in flight and stops the thread; the next
 * copy starts it again. */
static void test_shutdown_and_restart(void) {
  static uint8_t a[N];
  static dst_buf d;
  fill_src(a, N, 66);
  fill_dst(&d);
  tidsp_dma_host_lazy(1);
  CHECK(tidsp_dma_copy(0, d.data, a, N, 0) == TIDSP_OK);
  CHECK(untouched(&d));
  tidsp_dma_shutdown();
  CHECK(copied(&d, a, N));
  tidsp_dma_shutdown(); /* idle: a no-op */
  fill_dst(&d);
  CHECK(tidsp_dma_copy(0, d.data, a, N, 0) == TIDSP_OK);
  CHECK(tidsp_dma_wait(0, 0) == TIDSP_OK && copied(&d, a, N));
  tidsp_dma_host_lazy(0);
}

int main(void) {
  tidsp_dma_host_lazy(1);
  test_copy_completes_at_its_wait();
  test_wait_counts_groups();
  test_spec_pipeline();
  test_wait_leaves_the_newest_k();
  test_issue_order();
  test_full_queue_forces_the_oldest();
  test_queues_are_independent();
  test_errors_issue_nothing();
  test_copy_2d();
  test_l2();
  test_staging_pattern();
  tidsp_dma_host_lazy(0);
  test_eager_wait_guarantee();
  test_eager_copies_without_a_wait();
  test_eager_ring_full();
  test_trace();
  test_shutdown_and_restart();
  tidsp_dma_shutdown();
  UNIT_MAIN_END();
}
