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

#endif
