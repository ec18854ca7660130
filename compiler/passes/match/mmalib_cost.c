/*
 * The cost rule's verdict and the padding decisions of the offload report;
 * the cycle figures are the C7x cycle model's (ir/c7x_cost.c).
 */
#include "mmalib_cost.h"

#include <stdio.h>
#include <string.h>

int cs_mm_cost_pays(double mma_cycles, double scalar_cycles) { return mma_cycles < 0.95 * scalar_cycles; }

void cs_mm_pad_decision_init(cs_offload_pad *p, const char *layer, const char *what, int64_t c_out, int64_t c_pad,
                             int64_t macs, int64_t macs_added) {
  memset(p, 0, sizeof *p);
  snprintf(p->layer, sizeof p->layer, "%s", layer ? layer : "?");
  p->what = what;
  p->c_out = (int)c_out;
  p->c_pad = (int)c_pad;
  p->macs = macs;
  p->macs_added = macs_added;
}

int cs_mm_pad_decide(cs_offload_pad *p, double mma_cycles, double scalar_cycles) {
  p->mma_cycles = mma_cycles;
  p->scalar_cycles = scalar_cycles;
  p->padded = cs_mm_cost_pays(mma_cycles, scalar_cycles);
  return p->padded;
}
