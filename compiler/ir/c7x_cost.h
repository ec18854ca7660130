/*
 * c7x_cost.h — the C7x cycle model: cycles of a layer on the MMA (MMALIB)
 * and on the C7x scalar core, and of the DDR bytes a kernel moves, all
 * from the spec's one measured layer (spec/mmalib-integration.txt
 * "Performance"; c7x_cost.c says how). Two readers: the MMALIB rewrites'
 * cost rule (passes/match/mmalib_cost.h: does a rewrite pay) and the
 * compile's whole-network estimate (codegen/c7x_estimate.c: what the
 * compiled network costs on the board, layer by layer).
 */
#ifndef CSTATIC_IR_C7X_COST_H
#define CSTATIC_IR_C7X_COST_H

#include <stdint.h>

/* MMALIB: k MACs per output, n outputs per position (channels, FC N),
 * `positions` positions (conv H·W, FC M), on tile×tile panels, moving
 * `bytes` to and from DDR (everything the call and its helper copies
 * read and write). */
double cs_mm_cost_mma(int64_t k, int64_t n, int64_t positions, int tile, double bytes);
/* The scalar core: `macs` MACs, moving `bytes` to and from DDR. */
double cs_mm_cost_scalar(int64_t macs, double bytes);
/* A core kernel with no MACs (a copy, a requantization, an activation):
 * the DDR bytes it reads and writes. The spec measures no such kernel;
 * its DDR rate is the one figure it gives that they share. */
double cs_c7x_cost_bytes(double bytes);
/* The DDR bytes an MMALIB call of a kind InjectMMALIBDMA stages
 * (schedule/l2plan.c) moves in the spec's terms, for the `bytes` of
 * cs_mm_cost_mma: its input in_b, weights w_b and output out_b. None when
 * the call is staged — the spec's 477 K cycles ("MMALIB + L2 DMA
 * prefetch") are the staged layer's whole time, the prefetch of input and
 * weights and the output's writes included, which the panel term alone
 * gives; w_b when only the input fits beside the guard (the weights are
 * then read from DDR); everything when the input does not fit, or
 * l2_budget is 0 (no staging: -l2-budget=0, or not a C7x target). */
double cs_c7x_call_bytes(long l2_budget, double in_b, double w_b, double out_b);

#endif
