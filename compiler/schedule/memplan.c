#include "memplan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

static int ranges_intersect(const cs_memplan_tensor *a,
                            const cs_memplan_tensor *b) {
  return a->pool == b->pool && a->first <= b->last && b->first <= a->last;
}

/* qsort has no context argument in C11: the tensor array for the
 * comparators lives here for the duration of one sort. */
static const cs_memplan_tensor *sort_tensors;
static const size_t *sort_offsets;

static int64_t span(const cs_memplan_tensor *t) { return (int64_t)t->last - t->first + 1; }

/* The placement orders tried; ties always fall back to earlier first step,
 * then index, so every order is deterministic. */
typedef enum order_kind {
  ORDER_SIZE,          /* largest first (TFLite's greedy by size) */
  ORDER_AREA,          /* largest size × lifetime first */
  ORDER_FIRST_STEP,    /* chronological, larger first at the same step */
  ORDER_LONGEST_LIVED, /* longest lifetime first */
  ORDER_COUNT_
} order_kind;

static order_kind sort_kind;

static int cmp_order(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  const cs_memplan_tensor *ta = &sort_tensors[a], *tb = &sort_tensors[b];
  uint64_t ka = 0, kb = 0;
  switch (sort_kind) {
    case ORDER_SIZE: ka = ta->size; kb = tb->size; break;
    case ORDER_AREA: ka = ta->size * (uint64_t)span(ta); kb = tb->size * (uint64_t)span(tb); break;
    case ORDER_FIRST_STEP:
      if (ta->first != tb->first) return ta->first < tb->first ? -1 : 1;
      ka = ta->size; kb = tb->size;
      break;
    case ORDER_LONGEST_LIVED: ka = (uint64_t)span(ta); kb = (uint64_t)span(tb); break;
    default: break;
  }
  if (ka != kb) return ka > kb ? -1 : 1;
  if (ta->size != tb->size) return ta->size > tb->size ? -1 : 1;
  if (ta->first != tb->first) return ta->first < tb->first ? -1 : 1;
  return a < b ? -1 : a > b;
}

static const uint64_t *sort_keys;

/* Larger key first; ties by index (deterministic). */
static int cmp_by_key(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  if (sort_keys[a] != sort_keys[b]) return sort_keys[a] > sort_keys[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int cmp_by_offset(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  if (sort_offsets[a] != sort_offsets[b])
    return sort_offsets[a] < sort_offsets[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Place tensors in the given order, each into the smallest gap between
 * already placed tensors that intersect it in time (best fit), or after
 * the last of them. scratch holds 2n ints. */
static void place(const cs_memplan_tensor *t, int n, size_t align, const int *order,
                  int *scratch, size_t *offsets, size_t *pool_size) {
  int *placed = scratch, *conflicts = scratch + n;
  for (int p = 0; p < CS_POOL_COUNT; p++) pool_size[p] = 0;
  for (int i = 0; i < n; i++) offsets[i] = 0;
  int n_placed = 0;
  for (int k = 0; k < n; k++) {
    int i = order[k];
    if (t[i].size == 0) continue;
    int n_conf = 0;
    for (int j = 0; j < n_placed; j++)
      if (ranges_intersect(&t[i], &t[placed[j]])) conflicts[n_conf++] = placed[j];
    sort_offsets = offsets;
    qsort(conflicts, (size_t)n_conf, sizeof *conflicts, cmp_by_offset);

    /* Walk the gaps between the conflicting tensors in address order. */
    size_t end = 0, best = 0, best_gap = (size_t)-1;
    int found = 0;
    for (int c = 0; c < n_conf; c++) {
      int j = conflicts[c];
      size_t start = align_up(end, align);
      if (offsets[j] > start && offsets[j] - start >= t[i].size) {
        size_t gap = offsets[j] - start;
        if (gap < best_gap) { best_gap = gap; best = start; found = 1; }
      }
      if (offsets[j] + t[j].size > end) end = offsets[j] + t[j].size;
    }
    offsets[i] = found ? best : align_up(end, align);
    placed[n_placed++] = i;
    size_t top = offsets[i] + t[i].size;
    if (top > pool_size[t[i].pool]) pool_size[t[i].pool] = top;
  }
}

static size_t total(const size_t *pool_size) {
  size_t s = 0;
  for (int p = 0; p < CS_POOL_COUNT; p++) s += pool_size[p];
  return s;
}

cs_status cs_memplan_solve(const cs_memplan_tensor *t, int n, size_t align,
                           size_t *offsets, size_t *pool_size) {
  if (align == 0 || (align & (align - 1)))
    return cs_error(CS_ERR_INTERNAL, "memory planner: alignment %zu is not a power of two", align);
  for (int p = 0; p < CS_POOL_COUNT; p++) pool_size[p] = 0;
  if (n <= 0) return CS_OK;
  for (int i = 0; i < n; i++) {
    if (t[i].first > t[i].last)
      return cs_error(CS_ERR_INTERNAL, "memory planner: tensor %d has live range [%d, %d]", i,
                      t[i].first, t[i].last);
    if (t[i].pool < 0 || t[i].pool >= CS_POOL_COUNT)
      return cs_error(CS_ERR_INTERNAL, "memory planner: tensor %d has pool %d", i, t[i].pool);
    offsets[i] = 0;
  }

  int *order = malloc((size_t)n * sizeof *order);
  int *scratch = malloc(2 * (size_t)n * sizeof *scratch);
  size_t *trial = malloc((size_t)n * sizeof *trial);
  if (!order || !scratch || !trial) {
    free(order); free(scratch); free(trial);
    return cs_error(CS_ERR_NOMEM, "memory planner: out of memory for %d tensors", n);
  }
  /* Greedy placement is not optimal for every order; try a few and keep
   * the smallest (ties keep the earlier order, largest-first). */
  size_t best_total = (size_t)-1;
  int *best = malloc((size_t)n * sizeof *best);
  if (!best) {
    free(order); free(scratch); free(trial);
    return cs_error(CS_ERR_NOMEM, "memory planner: out of memory for %d tensors", n);
  }
  for (int kind = 0; kind < ORDER_COUNT_; kind++) {
    for (int i = 0; i < n; i++) order[i] = i;
    sort_tensors = t;
    sort_kind = (order_kind)kind;
    qsort(order, (size_t)n, sizeof *order, cmp_order);
    size_t sizes[CS_POOL_COUNT];
    place(t, n, align, order, scratch, trial, sizes);
    if (total(sizes) < best_total) {
      best_total = total(sizes);
      for (int i = 0; i < n; i++) offsets[i] = trial[i];
      for (int p = 0; p < CS_POOL_COUNT; p++) pool_size[p] = sizes[p];
      memcpy(best, order, (size_t)n * sizeof *best);
    }
  }
  /* Then randomized orders: largest first with each size scaled by a
   * pseudo-random factor in [0.5, 1.5) (a fixed seed, so compiles are
   * reproducible). Graphs whose big tensors chain through several steps
   * (ShuffleNet's float concat/transpose/split) fragment under every fixed
   * order; a few perturbed ones find a placement at the bound (measured:
   * 1.25x → 1.00x on shufflenetv2_pt2e). */
  {
    uint64_t *key = malloc((size_t)n * sizeof *key);
    uint32_t rng = 0x9E3779B9u;
    int tries = key && n <= 4000 ? 64 : 0;
    for (int it = 0; it < tries && best_total > 0; it++) {
      for (int i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        double f = 0.5 + (double)(rng >> 8) / (double)(1u << 24); /* [0.5, 1.5) */
        key[i] = (uint64_t)((double)t[i].size * f);
        order[i] = i;
      }
      sort_keys = key;
      qsort(order, (size_t)n, sizeof *order, cmp_by_key);
      size_t sizes[CS_POOL_COUNT];
      place(t, n, align, order, scratch, trial, sizes);
      if (total(sizes) < best_total) {
        best_total = total(sizes);
        for (int i = 0; i < n; i++) offsets[i] = trial[i];
        for (int p = 0; p < CS_POOL_COUNT; p++) pool_size[p] = sizes[p];
        memcpy(best, order, (size_t)n * sizeof *best);
      }
    }
    free(key);
  }
  free(best);
  free(order);
  free(scratch);
  free(trial);
  return CS_OK;
}

typedef struct live_event {
  int step;
  int delta_sign; /* -1 end (sorts first at the same step), +1 start */
  size_t size;
} live_event;

static int cmp_event(const void *pa, const void *pb) {
  const live_event *a = pa, *b = pb;
  if (a->step != b->step) return a->step < b->step ? -1 : 1;
  return a->delta_sign - b->delta_sign;
}

size_t cs_memplan_lower_bound(const cs_memplan_tensor *t, int n, int pool) {
  live_event *ev = malloc((size_t)(2 * n + 1) * sizeof *ev);
  if (!ev) return 0;
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (t[i].pool != pool || t[i].size == 0) continue;
    ev[m++] = (live_event){t[i].first, +1, t[i].size};
    ev[m++] = (live_event){t[i].last + 1, -1, t[i].size};
  }
  qsort(ev, (size_t)m, sizeof *ev, cmp_event);
  size_t live = 0, best = 0;
  for (int i = 0; i < m; i++) {
    if (ev[i].delta_sign > 0) live += ev[i].size;
    else live -= ev[i].size;
    if (live > best) best = live;
  }
  free(ev);
  return best;
}

int cs_memplan_check(const cs_memplan_tensor *t, int n, size_t align,
                     const size_t *offsets) {
  for (int i = 0; i < n; i++) {
    if (t[i].size == 0) continue;
    if (offsets[i] % align) return i + 1;
    for (int j = 0; j < i; j++) {
      if (t[j].size == 0 || !ranges_intersect(&t[i], &t[j])) continue;
      if (offsets[i] < offsets[j] + t[j].size && offsets[j] < offsets[i] + t[i].size)
        return i + 1;
    }
  }
  return 0;
}
