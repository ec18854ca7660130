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

#endif
