/*
 * dma_host.c — the host's DMA engine (cstatic/dma.h): one copy thread that
 * moves the bytes while the caller computes.
 *
 * Each queue is a ring of TIDSP_DMA_DEPTH issued copies, oldest at head;
 * every copy carries its group's number and a ticket (the global issue
 * order). The copy thread, started by the first copy, takes the oldest
 * copy of all queues, copies it with the lock released and only then
 * removes it from its ring, so a copy is in flight from its issue to the
 * end of its memcpy. A queue's groups in flight are the committed groups
 * from its oldest copy's group on (copies complete in issue order).
 *
 * Lazy mode (tests) keeps the thread from starting a copy that no wait
 * needs and no full queue makes room for, which is the deferred engine
 * this one replaced: a test then sees exactly which copies are done.
 *
 * Both sides poll before they sleep: a wait for the copy it waits on
 * (SPIN_NS), the copy thread for its next copy as long as the model is
 * running (hold_poll: HOLD_NS since the last engine call). The C7x's DMA
 * starts a transfer when its descriptor is written and its completion is
 * polled; a thread asleep on a condition variable needs tens of
 * microseconds to run again, and milliseconds in a VM whose idle vCPU the
 * host has parked, more than a layer takes, so a sleeping copy thread
 * started the prefetch issued before a layer after that layer (the spec
 * conv stack's queue 1 read 0 % hidden on an idle machine). The polls are
 * bounded: an idle engine sleeps, and so does a copy thread that finds it
 * was descheduled or that shares its one core with the model.
 *
 * The state is static, like the engine it stands for: one inference at a
 * time drives it. Fixed rings, no allocation. POSIX threads; a board
 * links its own engine instead (the C7x's DMA).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT; nanosleep */

#include "cstatic/dma.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <string.h>
#include <time.h>

#include "cstatic/profile.h"
#include "cstatic/tidsp.h"

typedef struct dma_copy {
  void *dst;
  const void *src;
  size_t bytes;                /* of one row */
  size_t rows, dst_pitch, src_pitch; /* tidsp_dma_copy: 1 row */
  int64_t group;  /* the group's number on its queue */
  uint64_t ticket; /* issue order over all queues */
  int32_t event;  /* trace slot, or −1 */
} dma_copy;

typedef struct dma_queue {
  dma_copy ring[TIDSP_DMA_DEPTH];
  int32_t head;       /* the oldest copy */
  int32_t count;      /* copies in flight */
  int64_t open_group; /* the open group's number; groups below it are committed */
  int32_t open_count; /* copies in the open group */
  int32_t waiting;    /* lazy: a wait blocks on this queue … */
  int32_t need;       /* … until at most this many groups are in flight */
  int32_t want_room;  /* lazy: an issuer waits for a free slot */
  int64_t trace_base; /* open_group at the trace's bind */
} dma_queue;

/* adaptive (glibc): a thread that finds it taken spins a moment before it
 * sleeps; every holder keeps it for a few stores, and a futex sleep and
 * wake-up between the issuer and the copy thread cost microseconds, as
 * long as a small copy */
#if defined(PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)
static pthread_mutex_t lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
#else
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* the thread waits */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* issuers and waiters wait */
static dma_queue queues[TIDSP_DMA_QUEUES];
static pthread_t thread;
static int running, stopping, lazy, atexit_done;
static int ready; /* the copy thread runs, off the model's CPU (tidsp_dma_start waits for it) */
static uint64_t next_ticket;

/* How long each side polls before it sleeps, in ns of tidsp_profile_clock:
 * longer than the gaps between one layer's copies and most copies. Not
 * under ThreadSanitizer: a copy that starts at once is over before the
 * issuer's next call takes the lock, whose happens-before edge then hides
 * a missing wait from TSan (test_l2_dma.py's removed wait); a copy thread
 * that wakes late leaves the race in the open. */
#if defined(__SANITIZE_THREAD__)
#define CS_DMA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CS_DMA_TSAN 1
#endif
#endif
enum { SPIN_NS = 100000 };
/* Bumped (under the lock) wherever the thread is signalled (pokes) and
 * wherever a copy completes (completions); read without the lock while
 * polling, which then re-checks under the lock. */
static atomic_uint pokes, completions;

/* The copy thread polls for work until HOLD_NS pass without an engine
 * call: longer than most gaps between a model's DMA calls (the layers
 * without copies between two staged ones), so it polls through an
 * inference and
 * sleeps soon after the model returns. tidsp_l2_scratch, which every
 * staged model calls first, calls tidsp_dma_start, which wakes it: its
 * wake-up then passes while the first layers compute. PREEMPTED_NS
 * between two looks at the clock, or an involuntary context switch of
 * the thread since its last poll (getrusage: a preemption while it
 * copied, or one that a poke ended), means another thread took its core:
 * the machine is loaded, and for BACKOFF_NS the thread polls only
 * SPIN_NS after each copy, as it does when it may run only on the
 * model's own core. On a loaded machine a poller's core is not its to
 * burn, and the poll costs the copies themselves: the scheduler then
 * preempts the thread that used its share on polling in mid-copy
 * (ResNet-18's 96 copies, at load 8: 11.5 ms of DMA instead of 0.3 ms),
 * where a woken sleeper runs its copy through. */
enum { HOLD_NS = 3000000, PREEMPTED_NS = 50000, BACKOFF_NS = 1000000000 };
static uint64_t hold_off_until; /* the copy thread's: no hold poll before this */
static long last_nivcsw;        /* the copy thread's involuntary switches so far */

/* Whether the copy thread was preempted since the last call (Linux's
 * per-thread rusage; elsewhere never). */
static int preempted_since(void) {
#if defined(__linux__) && defined(RUSAGE_THREAD)
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
  int moved = ru.ru_nivcsw != last_nivcsw;
  last_nivcsw = ru.ru_nivcsw;
  return moved;
#else
  return 0;
#endif
}
static atomic_uint calls; /* bumped by every engine call (touch) */
static int may_hold;      /* the copy thread may run on more than one CPU */

static void touch(void) { atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed); }

#ifndef CS_DMA_TSAN
static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
#endif

/* Poll (lock held on entry and exit, released meanwhile) until *counter
 * moves from its value at entry or SPIN_NS pass. 1 if it moved. */
static int poll_for(atomic_uint *counter) {
#ifdef CS_DMA_TSAN
  (void)counter;
  return 0;
#else
  unsigned seen = atomic_load_explicit(counter, memory_order_relaxed);
  pthread_mutex_unlock(&lock);
  uint64_t t0 = tidsp_profile_clock();
  for (unsigned i = 0; atomic_load_explicit(counter, memory_order_relaxed) == seen; i++) {
    if ((i & 63) == 63 && tidsp_profile_clock() - t0 >= SPIN_NS) break;
    relax();
  }
  pthread_mutex_lock(&lock);
  /* under the lock, where every bump happens: exact (a bump after the
   * last look is not lost to a sleep that follows) */
  return atomic_load_explicit(counter, memory_order_relaxed) != seen;
#endif
}

/* The copy thread's poll for its next copy (lock held on entry and
 * exit): until a poke, HOLD_NS without an engine call, or a sign that
 * the thread was descheduled. 1 if poked. */
static int hold_poll(void) {
#ifdef CS_DMA_TSAN
  return 0;
#else
  if (!may_hold) return poll_for(&pokes);
  uint64_t t = tidsp_profile_clock();
  if (preempted_since()) hold_off_until = t + BACKOFF_NS;
  if (t < hold_off_until) return poll_for(&pokes);
  unsigned seen = atomic_load_explicit(&pokes, memory_order_relaxed);
  unsigned seen_calls = atomic_load_explicit(&calls, memory_order_relaxed);
  pthread_mutex_unlock(&lock);
  uint64_t prev = tidsp_profile_clock(), quiet_since = prev;
  for (unsigned i = 0; atomic_load_explicit(&pokes, memory_order_relaxed) == seen; i++) {
    if ((i & 63) == 63) {
      uint64_t now = tidsp_profile_clock();
      unsigned c = atomic_load_explicit(&calls, memory_order_relaxed);
      if (c != seen_calls) {
        seen_calls = c;
        quiet_since = now;
      }
      if (now - prev >= PREEMPTED_NS) {
        hold_off_until = now + BACKOFF_NS;
        break;
      }
      if (now - quiet_since >= HOLD_NS) break;
      prev = now;
    }
    relax();
  }
  pthread_mutex_lock(&lock);
  return atomic_load_explicit(&pokes, memory_order_relaxed) != seen;
#endif
}

/* The copy thread keeps off the CPU the model last started an inference
 * on (tidsp_dma_start records it): on a loaded machine the scheduler
 * otherwise wakes it on the model's own core, where it runs only while
 * the model waits, and nothing overlaps (trace: both on one CPU, every
 * round of both networks ~0 % hidden at load 7–9); kept off it, it takes
 * turns with the other jobs on another core, and ResNet-18 read 0.80 and
 * 0.71 (2 batches of 9 rounds, no chrt, load 6.8 and 7.4). Never on a thread that
 * may use one CPU only, and pinned again only when the model's CPU
 * changes (one sched_setaffinity). */
#if defined(__linux__) && defined(CPU_COUNT)
static cpu_set_t allowed; /* the copy thread's CPUs at its start */
#endif
static int32_t model_cpu = -1, pinned_away = -1;

/* Lock held on entry and exit; released around the syscall. */
static void stay_off_model_cpu(void) {
#if defined(__linux__) && defined(CPU_COUNT)
  if (!may_hold || model_cpu < 0 || model_cpu == pinned_away) return;
  cpu_set_t s = allowed;
  CPU_CLR((size_t)model_cpu, &s); /* model_cpu ≥ 0: checked above */
  pinned_away = model_cpu;
  if (CPU_COUNT(&s) == 0) return;
  pthread_mutex_unlock(&lock);
  (void)sched_setaffinity(0, sizeof s, &s);
  (void)preempted_since(); /* the move is an involuntary switch, not a sign of load */
  pthread_mutex_lock(&lock);
#endif
}

/* Whether the calling thread may run on more than one CPU (Linux; elsewhere
 * assumed), noting its CPUs. A copy thread confined to the model's one
 * core (taskset -c 0, as the benches run) would only take turns with it:
 * it must not poll. */
static int several_cpus(void) {
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t s;
  if (sched_getaffinity(0, sizeof s, &s) == 0) {
    allowed = s;
    return CPU_COUNT(&s) > 1;
  }
#endif
  return 1;
}

/* Under ThreadSanitizer, the copy thread lets the issuer run ahead
 * before each copy: a kernel that reads a buffer whose wait is missing
 * then reads it before the copy writes it, with no lock between the two,
 * and TSan reports the race on every run instead of on the runs where the
 * thread happened to wake late (test_l2_dma.py's removed wait: detected in
 * 3 to 6 runs of 8 without this). A correct wait orders the copy before
 * the read whatever the delay. */
static void tsan_let_issuer_run(void) {
#ifdef CS_DMA_TSAN
  struct timespec ts = {0, 200000};
  nanosleep(&ts, NULL);
#endif
}

static void poke(void) {
  atomic_fetch_add_explicit(&pokes, 1, memory_order_relaxed);
  pthread_cond_signal(&work_cv);
}

static void completed(void) {
  atomic_fetch_add_explicit(&completions, 1, memory_order_relaxed);
  pthread_cond_broadcast(&done_cv);
}

/* The CPU the calling thread runs on, or TIDSP_DMA_CPU_UNKNOWN. */
static int32_t this_cpu(void) {
#if defined(__linux__)
  int c = sched_getcpu();
  return c >= 0 ? (int32_t)c : TIDSP_DMA_CPU_UNKNOWN;
#else
  return TIDSP_DMA_CPU_UNKNOWN;
#endif
}

/* Stamp an event's end and check its CPU (trace events only). A copy
 * thread that shares the model's CPU, preempting it in mid-layer, is not
 * hiding its copy behind that layer: the trace's overlap counts only
 * copy and call time on two different CPUs (dma_trace.c). */
static void stamp_end(tidsp_dma_event *e) {
  e->end = tidsp_profile_clock();
  if (e->cpu != this_cpu()) e->cpu = TIDSP_DMA_CPU_MOVED;
}

static tidsp_dma_event *trace;
static int32_t trace_cap, trace_n;
static int64_t trace_dropped;

/* Committed groups of q with a copy still in flight. */
static int64_t inflight_groups(const dma_queue *q) {
  return q->count ? q->open_group - q->ring[q->head].group : 0;
}

/* Whether the thread may start q's oldest copy now. */
static int startable(const dma_queue *q) {
  if (!q->count) return 0;
  if (!lazy || stopping || q->want_room) return 1;
  return q->waiting && inflight_groups(q) > q->need;
}

static int32_t trace_slot(void) {
  if (!trace) return -1;
  if (trace_n == trace_cap) {
    trace_dropped++;
    return -1;
  }
  return trace_n++;
}

/* Ask the scheduler for a short slice (EEVDF, Linux 6.12+: a SCHED_OTHER
 * thread's sched_runtime; no privilege needed): an earlier deadline, so
 * the woken copy thread preempts the job on its core instead of waiting
 * for that job's slice to end. Older kernels ignore or refuse it. A
 * thread of another policy (chrt) or nice keeps it: only the slice
 * changes. */
static void short_slice(void) {
#if defined(__linux__) && defined(SYS_sched_setattr)
  if (sched_getscheduler(0) != SCHED_OTHER) return;
  int nice = getpriority(PRIO_PROCESS, 0); /* Linux: this thread's */
  struct {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
  } a = {48, SCHED_OTHER, 0, nice, 0, 100000, 0, 0};
  (void)syscall(SYS_sched_setattr, 0, &a, 0);
#endif
}

static void *copy_thread(void *arg) {
  (void)arg;
  short_slice();
  int hold = several_cpus();
  pthread_mutex_lock(&lock);
  may_hold = hold;
  hold_off_until = 0;
  pinned_away = -1;
  (void)preempted_since(); /* count from here: a new thread's switches start at 0 */
  stay_off_model_cpu();
  ready = 1;
  completed(); /* wakes tidsp_dma_start */
  for (;;) {
    stay_off_model_cpu();
    dma_queue *q = NULL;
    for (int32_t i = 0; i < TIDSP_DMA_QUEUES; i++) {
      dma_queue *c = &queues[i];
      if (startable(c) && (!q || c->ring[c->head].ticket < q->ring[q->head].ticket)) q = c;
    }
    if (!q) {
      if (stopping) {
        running = ready = 0; /* under the lock: a copy issued from now on starts a new thread */
        completed();
        break;
      }
      if (!hold_poll()) pthread_cond_wait(&work_cv, &lock);
      continue;
    }
    /* Only the thread removes copies: the head stays put while it copies
     * (a trace rebind meanwhile resets its event, hence the re-read). */
    const dma_copy *c = &q->ring[q->head];
    uint8_t *dst = (uint8_t *)c->dst;
    const uint8_t *src = (const uint8_t *)c->src;
    size_t bytes = c->bytes, rows = c->rows, dp = c->dst_pitch, sp = c->src_pitch;
    if (c->event >= 0) {
      trace[c->event].cpu = this_cpu();
      trace[c->event].start = tidsp_profile_clock();
    }
    pthread_mutex_unlock(&lock);
    tsan_let_issuer_run();
    for (size_t r = 0; r < rows; r++) memcpy(dst + r * dp, src + r * sp, bytes);
    pthread_mutex_lock(&lock);
    if (c->event >= 0) stamp_end(&trace[c->event]);
    q->head = (q->head + 1) % TIDSP_DMA_DEPTH;
    q->count--;
    q->want_room = 0;
    completed();
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* Start the thread (lock held). 0 if it cannot be started. */
static int ensure_running(void) {
  if (running) return 1;
  if (!atexit_done) {
    if (atexit(tidsp_dma_shutdown) != 0) return 0;
    atexit_done = 1;
  }
  if (pthread_create(&thread, NULL, copy_thread, NULL) != 0) return 0;
  running = 1;
  return 1;
}

int32_t tidsp_dma_start(void) {
  touch();
  int32_t cpu = this_cpu();
  pthread_mutex_lock(&lock);
  model_cpu = cpu;
  int ok = ensure_running();
  if (ok) poke(); /* poll for copies from now on: a model is about to run */
  /* Return once the thread runs, off this CPU: a new thread's first run
   * and its move to another core take ~0.35 ms in a VM whose idle vCPU
   * is halted, longer than the first layers before the first prefetch
   * (the spec conv stack's queue-1 copy started 350-370 us after its
   * issue in 5 of 6 fresh `cstatic run`s, at load 1.4; with this wait,
   * no chrt, load 2.0, the stack read 0.918 and 0.867 where it read
   * 0.512 and 0.477 in the same batches). Only a start waits: at the
   * platform's init (tidsp_l2_bind); each inference's call
   * (tidsp_l2_scratch) finds the thread ready and only pokes it. */
  while (ok && !ready) pthread_cond_wait(&done_cv, &lock);
  pthread_mutex_unlock(&lock);
  return ok ? TIDSP_OK : TIDSP_ERR_UNSUPPORTED;
}

/* Whether [a, a + n) and [b, b + n) share a byte. Written with the
 * distance between the starts so that no end address is formed (it could
 * wrap). */
static int ranges_overlap(const void *a, const void *b, size_t n) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x <= y ? y - x < n : x - y < n;
}

/* Issue a checked copy of rows rows (lock not held). */
static int32_t issue(int32_t queue, void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t bytes,
                     size_t rows) {
  touch();
  pthread_mutex_lock(&lock);
  dma_queue *q = &queues[queue];
  if (!ensure_running()) {
    /* No thread (out of resources): complete this queue, then copy here.
     * Slower, never wrong. */
    while (q->count) pthread_cond_wait(&done_cv, &lock);
    pthread_mutex_unlock(&lock);
    for (size_t r = 0; r < rows; r++) memcpy((uint8_t *)dst + r * dst_pitch, (const uint8_t *)src + r * src_pitch, bytes);
    return TIDSP_OK;
  }
  while (q->count == TIDSP_DMA_DEPTH) {
    q->want_room = 1;
    poke();
    pthread_cond_wait(&done_cv, &lock);
  }
  dma_copy *c = &q->ring[(q->head + q->count) % TIDSP_DMA_DEPTH];
  c->dst = dst;
  c->src = src;
  c->bytes = bytes;
  c->rows = rows;
  c->dst_pitch = dst_pitch;
  c->src_pitch = src_pitch;
  c->group = q->open_group;
  c->ticket = next_ticket++;
  c->event = trace_slot();
  if (c->event >= 0) {
    tidsp_dma_event *e = &trace[c->event];
    memset(e, 0, sizeof *e);
    e->kind = TIDSP_DMA_EV_COPY;
    e->cpu = TIDSP_DMA_CPU_UNKNOWN; /* until the copy starts */
    e->queue = queue;
    e->group = q->open_group - q->trace_base;
    e->bytes = bytes * rows;
    e->issue = tidsp_profile_clock();
  }
  q->count++;
  q->open_count++;
  poke();
  pthread_mutex_unlock(&lock);
  return TIDSP_OK;
}

int32_t tidsp_dma_copy(int32_t queue, void *dst, const void *src, size_t bytes, uint32_t flags) {
  if (queue < 0 || queue >= TIDSP_DMA_QUEUES) return TIDSP_ERR_PARAM;
  if (flags & ~(uint32_t)TIDSP_DMA_BYPASS_CACHE) return TIDSP_ERR_PARAM;
  if (bytes == 0) return TIDSP_OK;
  if (!dst || !src) return TIDSP_ERR_NULL;
  if (ranges_overlap(dst, src, bytes)) return TIDSP_ERR_PARAM;
  /* Every check passed: only now may the call wait for room. */
  return issue(queue, dst, bytes, src, bytes, bytes, 1);
}

int32_t tidsp_dma_copy_2d(int32_t queue, void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                          size_t row_bytes, size_t rows, uint32_t flags) {
  if (queue < 0 || queue >= TIDSP_DMA_QUEUES) return TIDSP_ERR_PARAM;
  if (flags & ~(uint32_t)TIDSP_DMA_BYPASS_CACHE) return TIDSP_ERR_PARAM;
  if (row_bytes == 0 || rows == 0) return TIDSP_OK;
  if (!dst || !src) return TIDSP_ERR_NULL;
  if (rows > 1 && (dst_pitch < row_bytes || src_pitch < row_bytes)) return TIDSP_ERR_PARAM;
  /* each side's span, first row's start to last row's end */
  size_t pitch = dst_pitch > src_pitch ? dst_pitch : src_pitch; /* > 0 when rows > 1 */
  if (rows > 1 && rows - 1 > (SIZE_MAX - row_bytes) / pitch) return TIDSP_ERR_PARAM;
  size_t dspan = (rows - 1) * dst_pitch + row_bytes, sspan = (rows - 1) * src_pitch + row_bytes;
  uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
  if (d <= s ? s - d < dspan : d - s < sspan) return TIDSP_ERR_PARAM;
  return issue(queue, dst, dst_pitch, src, src_pitch, row_bytes, rows);
}

/* Close q's open group (lock held). */
static void commit(dma_queue *q) {
  if (q->open_count) {
    q->open_group++;
    q->open_count = 0;
  }
}

int32_t tidsp_dma_commit(int32_t queue) {
  if (queue < 0 || queue >= TIDSP_DMA_QUEUES) return TIDSP_ERR_PARAM;
  touch();
  pthread_mutex_lock(&lock);
  commit(&queues[queue]);
  pthread_mutex_unlock(&lock);
  return TIDSP_OK;
}

int32_t tidsp_dma_wait(int32_t queue, int32_t max_inflight) {
  if (queue < 0 || queue >= TIDSP_DMA_QUEUES || max_inflight < 0) return TIDSP_ERR_PARAM;
  touch();
  pthread_mutex_lock(&lock);
  dma_queue *q = &queues[queue];
  commit(q);
  if (inflight_groups(q) > max_inflight) {
    q->waiting = 1;
    q->need = max_inflight;
    poke();
    /* poll while copies complete; sleep once SPIN_NS pass without one */
    while (inflight_groups(q) > max_inflight)
      if (!poll_for(&completions) && inflight_groups(q) > max_inflight) pthread_cond_wait(&done_cv, &lock);
    q->waiting = 0;
  }
  pthread_mutex_unlock(&lock);
  return TIDSP_OK;
}

void tidsp_dma_shutdown(void) {
  pthread_mutex_lock(&lock);
  if (!running) {
    pthread_mutex_unlock(&lock);
    return;
  }
  pthread_t t = thread;
  stopping = 1; /* the thread completes every copy, then returns */
  poke();
  while (running) pthread_cond_wait(&done_cv, &lock);
  stopping = 0;
  pthread_mutex_unlock(&lock);
  pthread_join(t, NULL);
}

void tidsp_dma_host_lazy(int32_t on) {
  pthread_mutex_lock(&lock);
  lazy = on != 0;
  poke();
  pthread_mutex_unlock(&lock);
}

int32_t tidsp_dma_trace_bind(tidsp_dma_event *events, int32_t capacity) {
  if (capacity < 0) return TIDSP_ERR_PARAM;
  pthread_mutex_lock(&lock);
  trace = capacity > 0 ? events : NULL;
  trace_cap = trace ? capacity : 0;
  trace_n = 0;
  trace_dropped = 0;
  for (int32_t i = 0; i < TIDSP_DMA_QUEUES; i++) {
    dma_queue *q = &queues[i];
    q->trace_base = q->open_group;
    for (int32_t k = 0; k < q->count; k++) q->ring[(q->head + k) % TIDSP_DMA_DEPTH].event = -1;
  }
  pthread_mutex_unlock(&lock);
  return TIDSP_OK;
}

int32_t tidsp_dma_trace_count(int64_t *dropped) {
  pthread_mutex_lock(&lock);
  int32_t n = trace_n;
  if (dropped) *dropped = trace_dropped;
  pthread_mutex_unlock(&lock);
  return n;
}

int32_t tidsp_dma_trace_begin(const char *layer) {
  touch();
  pthread_mutex_lock(&lock);
  int32_t slot = trace_slot();
  if (slot >= 0) {
    tidsp_dma_event *e = &trace[slot];
    memset(e, 0, sizeof *e);
    e->kind = TIDSP_DMA_EV_COMPUTE;
    e->queue = -1;
    e->name = layer;
    e->cpu = this_cpu();
    e->issue = e->start = tidsp_profile_clock();
  }
  pthread_mutex_unlock(&lock);
  return slot;
}

void tidsp_dma_trace_end(int32_t slot) {
  if (slot < 0) return;
  pthread_mutex_lock(&lock);
  if (slot < trace_n) stamp_end(&trace[slot]);
  pthread_mutex_unlock(&lock);
}
