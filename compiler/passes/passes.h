/*
 * passes.h — the pass pipeline (registry.c lists it as data).
 */
#ifndef CSTATIC_PASSES_H
#define CSTATIC_PASSES_H

#include <stdio.h>

#include "ir.h"
#include "target.h"

/* Run the whole pipeline; after it every live node is a kernel op
 * (CS_OP_K_*) with node->k filled and its inputs in kernel argument order.
 * dump: if non-NULL, the IR is printed there after every pass
 * (--dump-ir=after-all). */
cs_status cs_passes_run(cs_graph *g, const cs_target *t, FILE *dump);

/* The padding budget (-mmalib-pad-budget), between two rounds of the
 * passes: a round's report r and the MACs its graph computes (total, the
 * rewrites' included). When total exceeds budget × the model's own (total
 * less the taken rewrites' macs_added), appends to *refused (grown with
 * realloc) the taken rewrites that save the fewest estimated cycles per MAC
 * added (scalar − MMA estimate over macs_added), until the rest fit (then
 * takes back those the last refusal left room for, the best first); the
 * exact path's own forms (cs_offload_pad.fixed) count but stay.
 * Returns how many it appended: 0 when the round is within the budget or
 * nothing it could refuse would help; -1 out of memory (recorded). */
int cs_mm_budget_refuse(const cs_offload_report *r, int64_t total_macs, double budget, cs_offload_pad **refused,
                        int *n_refused);

#endif
