/*
 * The cycle model's constants, from spec/mmalib-integration.txt
 * "Performance": one int8 conv 64→64, 3×3, 56×56 (115.6 M MACs; 200 704 B
 * in, 36 864 B of weights, 200 704 B out) takes 1.67 M cycles on MMALIB
 * with DDR-resident data, 477 K with L2-staged data, 45.2 M in C7x scalar
 * loops. The 1.19 M between MMALIB's two figures is the DDR traffic: 2.72
 * cycles per byte moved. Each side is compute + bytes × 2.72:
 *  - MMA compute: the MMA multiplies one tile-element row of data by a
 *    tile×tile weight panel per cycle, after loading the panel row by row
 *    (tile cycles); a layer of K MACs per output, N outputs per position
 *    and P positions is ⌈K/tile⌉·⌈N/tile⌉ panels of (tile + P) cycles,
 *    scaled so that the spec's layer (9 panels × 3200) takes 477 K.
 *  - Scalar core: the spec's 45.2 M cycles less the layer's DDR traffic,
 *    per MAC: 0.381 cycles.
 * The scalar core reads DDR (the spec's figure). An MMALIB call reads DDR
 * unless InjectMMALIBDMA stages it into L2 (cs_c7x_call_bytes: the spec's
 * L2 figure is then the whole call; staging is decided later, by the
 * schedule, with the same fits as below).
 */
#include "c7x_cost.h"

#define SPEC_LAYER_MACS (64.0 * 64.0 * 9.0 * 56.0 * 56.0)
#define SPEC_LAYER_BYTES (64.0 * 56.0 * 56.0 + 64.0 * 64.0 * 9.0 + 64.0 * 56.0 * 56.0) /* in, w, out */
#define SPEC_LAYER_PANEL_CYCLES (9.0 * 1.0 * (64.0 + 56.0 * 56.0)) /* ⌈576/64⌉·⌈64/64⌉·(64 + P) */
#define SPEC_MMA_L2_CYCLES 477e3   /* MMALIB, L2-staged data */
#define SPEC_MMA_DDR_CYCLES 1.67e6 /* MMALIB, DDR-resident data */
#define SPEC_SCALAR_CYCLES 45.2e6  /* C7x scalar loops (DDR) */
#define DDR_CYCLES_PER_BYTE ((SPEC_MMA_DDR_CYCLES - SPEC_MMA_L2_CYCLES) / SPEC_LAYER_BYTES)
#define SCALAR_CYCLES_PER_MAC ((SPEC_SCALAR_CYCLES - SPEC_LAYER_BYTES * DDR_CYCLES_PER_BYTE) / SPEC_LAYER_MACS)

double cs_mm_cost_mma(int64_t k, int64_t n, int64_t positions, int tile, double bytes) {
  double panels = (double)((k + tile - 1) / tile) * (double)((n + tile - 1) / tile);
  return panels * (double)(tile + positions) * SPEC_MMA_L2_CYCLES / SPEC_LAYER_PANEL_CYCLES +
         cs_c7x_cost_bytes(bytes);
}

double cs_mm_cost_scalar(int64_t macs, double bytes) {
  return (double)macs * SCALAR_CYCLES_PER_MAC + cs_c7x_cost_bytes(bytes);
}

double cs_c7x_cost_bytes(double bytes) { return bytes * DDR_CYCLES_PER_BYTE; }

/* l2plan.c's guard in front of the input: at least 128 bytes, more with a
 * padded input (pad_top rows); two alignments cover the common case. */
#define L2_GUARD_BYTES 256.0

double cs_c7x_call_bytes(long l2_budget, double in_b, double w_b, double out_b) {
  double budget = (double)l2_budget;
  if (l2_budget <= 0 || L2_GUARD_BYTES + in_b > budget) return in_b + w_b + out_b;
  return L2_GUARD_BYTES + in_b + w_b > budget ? w_b : 0.0;
}
