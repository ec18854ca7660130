/*
 * memplan_reference.h — the memory planner as it was before its index
 * (compiler/schedule/memplan.c until the 100 000-node chain work): every
 * placement scans all placed tensors for conflicts. Quadratic, obviously
 * the policy of memplan.h; test_codegen_memplan.c checks that the indexed
 * planner returns exactly its offsets.
 */
#ifndef CSTATIC_TEST_MEMPLAN_REFERENCE_H
#define CSTATIC_TEST_MEMPLAN_REFERENCE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/memplan.h"

static size_t ref_align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

static const cs_memplan_tensor *ref_t;
static const size_t *ref_off;
static const uint64_t *ref_keys;
static int ref_kind;

static int64_t ref_span(const cs_memplan_tensor *t) { return (int64_t)t->last - t->first + 1; }

static int ref_cmp_order(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  const cs_memplan_tensor *ta = &ref_t[a], *tb = &ref_t[b];
  uint64_t ka = 0, kb = 0;
  switch (ref_kind) {
    case 0: ka = ta->size; kb = tb->size; break;
    case 1: ka = ta->size * (uint64_t)ref_span(ta); kb = tb->size * (uint64_t)ref_span(tb); break;
    case 2:
      if (ta->first != tb->first) return ta->first < tb->first ? -1 : 1;
      ka = ta->size; kb = tb->size;
      break;
    case 3: ka = (uint64_t)ref_span(ta); kb = (uint64_t)ref_span(tb); break;
  }
  if (ka != kb) return ka > kb ? -1 : 1;
  if (ta->size != tb->size) return ta->size > tb->size ? -1 : 1;
  if (ta->first != tb->first) return ta->first < tb->first ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int ref_cmp_key(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  if (ref_keys[a] != ref_keys[b]) return ref_keys[a] > ref_keys[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int ref_cmp_offset(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  if (ref_off[a] != ref_off[b]) return ref_off[a] < ref_off[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

static void ref_place(const cs_memplan_tensor *t, int n, size_t align, const int *order, int *placed,
                      int *conflicts, size_t *offsets, size_t *pool_size) {
  for (int p = 0; p < CS_POOL_COUNT; p++) pool_size[p] = 0;
  for (int i = 0; i < n; i++) offsets[i] = 0;
  int n_placed = 0;
  for (int k = 0; k < n; k++) {
    int i = order[k];
    if (t[i].size == 0) continue;
    int n_conf = 0;
    for (int j = 0; j < n_placed; j++) {
      const cs_memplan_tensor *a = &t[i], *b = &t[placed[j]];
      if (a->pool == b->pool && a->first <= b->last && b->first <= a->last) conflicts[n_conf++] = placed[j];
    }
    ref_off = offsets;
    qsort(conflicts, (size_t)n_conf, sizeof *conflicts, ref_cmp_offset);
    size_t end = 0, best = 0, best_gap = (size_t)-1;
    int found = 0;
    for (int c = 0; c < n_conf; c++) {
      int j = conflicts[c];
      size_t start = ref_align_up(end, align);
      if (offsets[j] > start && offsets[j] - start >= t[i].size) {
        size_t gap = offsets[j] - start;
        if (gap < best_gap) { best_gap = gap; best = start; found = 1; }
      }
      if (offsets[j] + t[j].size > end) end = offsets[j] + t[j].size;
    }
    offsets[i] = found ? best : ref_align_up(end, align);
    placed[n_placed++] = i;
    size_t top = offsets[i] + t[i].size;
    if (top > pool_size[t[i].pool]) pool_size[t[i].pool] = top;
  }
}

/* offsets[n] and pool_size[CS_POOL_COUNT] as cs_memplan_solve fills them. */
static void ref_memplan_solve(const cs_memplan_tensor *t, int n, size_t align, size_t *offsets,
                              size_t *pool_size) {
  int *order = malloc(sizeof(int) * (size_t)n), *scratch = malloc(sizeof(int) * 2 * (size_t)n);
  size_t *trial = malloc(sizeof(size_t) * (size_t)n);
  uint64_t *key = malloc(sizeof(uint64_t) * (size_t)n);
  size_t best_total = (size_t)-1;
  for (int kind = 0; kind < 4 + (n <= 4000 ? 64 : 0); kind++) {
    if (kind >= 4 && best_total == 0) break;
    for (int i = 0; i < n; i++) order[i] = i;
    if (kind < 4) {
      ref_t = t;
      ref_kind = kind;
      qsort(order, (size_t)n, sizeof *order, ref_cmp_order);
    } else {
      static uint32_t rng;
      if (kind == 4) rng = 0x9E3779B9u;
      for (int i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        double f = 0.5 + (double)(rng >> 8) / (double)(1u << 24);
        key[i] = (uint64_t)((double)t[i].size * f);
      }
      ref_keys = key;
      qsort(order, (size_t)n, sizeof *order, ref_cmp_key);
    }
    size_t sizes[CS_POOL_COUNT], sum = 0;
    ref_place(t, n, align, order, scratch, scratch + n, trial, sizes);
    for (int p = 0; p < CS_POOL_COUNT; p++) sum += sizes[p];
    if (sum < best_total) {
      best_total = sum;
      memcpy(offsets, trial, sizeof(size_t) * (size_t)n);
      memcpy(pool_size, sizes, sizeof sizes);
    }
  }
  free(order);
  free(scratch);
  free(trial);
  free(key);
}

#endif
