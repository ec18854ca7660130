/*
 * mmalib_cost.h — the cost rule of the MMALIB rewrites that add work to
 * make a layer eligible (channel padding, FC K/N padding): cycles of the
 * layer on the MMA against the C7x scalar core, both from the spec's
 * "Performance" figures (ir/c7x_cost.c says how). A rewrite is taken when
 * the MMA estimate of the rewritten layer is clearly below the scalar
 * estimate of the layer as it is (cs_mm_cost_pays).
 *
 * The tile is that of the kernel that runs the layer (mmalib_common.h
 * cs_mm_runs_as): 64 for MMALIB's int8 kernels, 32 — a quarter of the
 * rate per panel — for int16 data and for an int8 layer the exact path
 * (-mmalib-exact=all, the default) runs on the int16 kernel. The bytes are
 * the layer's own (int8 for the latter): the exact path's extra traffic —
 * the widened copies and the core's requantization, what its exactness
 * costs every layer it takes — is estimated per layer in the offload
 * report (exact_requant) and not charged to a rewrite: counted here it
 * would keep most 8–48-channel layers off the MMA (bench numbers in the
 * issue 16 notes). The product of two runtime tensors
 * (fuse_qdq_to_int8_batch_matmul.c) follows the same rule: its padded
 * int16 call and its own int8 bytes against the core kernel.
 */
#ifndef CSTATIC_MMALIB_COST_H
#define CSTATIC_MMALIB_COST_H

#include <stdint.h>

#include "c7x_cost.h"
#include "ir.h"
#include "target.h"

/* Whether a rewrite pays: the MMA estimate below the scalar one by more
 * than 5 %. Within 5 % is a tie — both sides are then the same DDR bytes
 * (a one-row FC's weights: resnet18's 512x1000 classifier padded to 1024
 * estimates 1.3 % apart), the model's DDR figure comes from one layer,
 * and a tie would buy MMALIB's 1-LSB rounding for nothing. */
int cs_mm_cost_pays(double mma_cycles, double scalar_cycles);

/* cs_c7x_call_bytes under t's -l2-budget, whatever the CPU: a host build
 * with -mmalib=1 emulates the C7x build and must make its decisions (its
 * output is the staged build's, bit for bit); -l2-budget=0 prices every
 * call from DDR. */
double cs_mm_call_bytes(const cs_target *t, double in_b, double w_b, double out_b);

/* Whether the padding budget refused layer's rewrite `what` (NULL:
 * "C_out") in an earlier round of this compile (t->mm_refused). */
int cs_mm_refused(const cs_target *t, const char *layer, const char *what);

/* A rewrite's padding decision for the offload report
 * (cs_mmalib_report_pad): layer `layer` (NULL: "?"), `what` (a static
 * string, ir/offload.h; NULL: "C_out") c_out padded to c_pad, the layer's
 * own `macs` and the macs_added by the padding. Bytes, cycles and the
 * verdict start at zero: the caller sets them, or cs_mm_pad_decide. */
void cs_mm_pad_decision_init(cs_offload_pad *p, const char *layer, const char *what, int64_t c_out, int64_t c_pad,
                             int64_t macs, int64_t macs_added);
/* The cost rule's verdict on p: its estimates, and padded when the MMA
 * pays (cs_mm_cost_pays) and the budget has not refused it (cs_mm_refused:
 * then over_budget). Returns p->padded. */
int cs_mm_pad_decide(const cs_target *t, cs_offload_pad *p, double mma_cycles, double scalar_cycles);

#endif
