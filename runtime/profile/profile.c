/*
 * profile.c — the part of per-layer profiling that is not on the hot path.
 */
#include "cstatic/profile.h"

void tidsp_profile_reset(const tidsp_profile_table *t) {
  int32_t i;
  if (t == 0 || t->layers == 0)
    return;
  for (i = 0; i < t->n_layers; i++) {
    t->layers[i].calls = 0;
    t->layers[i].total = 0;
    t->layers[i].last = 0;
  }
}
