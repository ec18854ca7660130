/*
 * The DMA engine and the L2 scratch (cstatic/dma.h; runtime/dma/dma_host.c,
 * runtime/mem/l2.c). The host engine defers every copy until a wait needs
 * it or its queue is full, so each test can see exactly which copies are
 * done: a destination holds its source's bytes once its copy completed
 * and its old fill until then. Each test leaves every queue drained.
 */
#include <stdint.h>
#include <string.h>

#include "cstatic/dma.h"
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

/* wait(q, k) completes the oldest copies and leaves exactly the newest k. */
static void test_wait_leaves_the_newest_k(void) {
  enum { C = 5 };
  static uint8_t src[C][N];
  static dst_buf d[C];
  for (int i = 0; i < C; i++) {
    fill_src(src[i], N, (uint8_t)(10 * i + 3));
    fill_dst(&d[i]);
    CHECK(tidsp_dma_copy(1, d[i].data, src[i], N, 0) == TIDSP_OK);
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
  for (int i = 0; i < D; i++) CHECK(tidsp_dma_copy(3, d[i].data, src[i], N, 0) == TIDSP_OK);
  for (int i = 0; i < D; i++) CHECK_MSG(untouched(&d[i]), "copy %d ran before the queue was full", i);
  for (int extra = 0; extra < C - D; extra++) {
    CHECK(tidsp_dma_copy(3, d[D + extra].data, src[D + extra], N, 0) == TIDSP_OK);
    for (int i = 0; i < C; i++)
      CHECK_MSG(i <= extra ? copied(&d[i], src[i], N) : untouched(&d[i]),
                "after %d copies beyond the depth, copy %d should be %s", extra + 1, i,
                i <= extra ? "done" : "pending");
  }
  /* D copies are in flight: wait(q, D) has nothing to do. */
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

int main(void) {
  test_copy_completes_at_its_wait();
  test_wait_leaves_the_newest_k();
  test_issue_order();
  test_full_queue_forces_the_oldest();
  test_queues_are_independent();
  test_errors_issue_nothing();
  test_l2();
  test_staging_pattern();
  UNIT_MAIN_END();
}
