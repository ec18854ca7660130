/*
 * schedule.h — from a graph of kernel ops to a schedule: the execution
 * order, the model boundary (which tensors the raw entry cg_main sees), and
 * where every tensor lives (weights blob, caller I/O buffer, or an arena
 * offset from the memory planner).
 *
 * Steps: step s runs node order[s] (s in [0, n_steps)); the extra step
 * n_steps is cg_main's epilogue, where a raw output that cannot be written
 * in place (it is a graph input, a constant, or a second output of the same
 * tensor) is copied into its output buffer.
 */
#ifndef CSTATIC_SCHEDULE_H
#define CSTATIC_SCHEDULE_H

#include <stddef.h>

#include "ir.h"
#include "memplan.h"

/* One input or output of the model at its two entry points. model_run sees
 * `value` (the graph's own tensor, e.g. float32); cg_main sees `raw_value`
 * (e.g. the int8 tensor after the boundary QuantizeLinear). When there is no
 * boundary conversion, raw_value == value and node == -1. */
typedef struct cs_boundary_io {
  int value;
  int raw_value;
  int node; /* the boundary k_quantize / k_dequantize node, or -1 */
} cs_boundary_io;

typedef enum cs_loc_kind {
  CS_LOC_NONE = 0, /* not read or written by any scheduled step */
  CS_LOC_CONST,    /* weights blob at `offset` */
  CS_LOC_INPUT,    /* cg_main inputs[index] */
  CS_LOC_OUTPUT,   /* cg_main outputs[index] */
  CS_LOC_ARENA     /* arena pool `pool` at `offset` */
} cs_loc_kind;

typedef struct cs_loc {
  cs_loc_kind kind;
  int index;     /* CS_LOC_INPUT / CS_LOC_OUTPUT */
  int pool;      /* CS_LOC_ARENA */
  size_t offset; /* CS_LOC_CONST / CS_LOC_ARENA */
  int alias_of;  /* value whose storage this one shares (an elided k_copy
                    output or a duplicate boundary quantize), or -1 */
  size_t alias_offset; /* bytes from alias_of's first byte to this one's (an
                          offset view: an image of a batch, an input of an
                          elided concat); 0 for a prefix view */
} cs_loc;

typedef struct cs_schedule_options {
  size_t arena_align;   /* power of two */
  size_t weights_align; /* power of two */
  size_t weights_base;  /* offset of the first tensor in the blob (header) */
  int alias_copies;     /* elide k_copy whose input dies there, and the
                           contiguous k_slice / k_concat (storage.c) */
  size_t l2_budget;     /* > 0: stage MMALIB calls into L2 (l2plan.c) and
                           tile the other int8 convs (dma_tiling.c) */
} cs_schedule_options;

/* InjectMMALIBDMA's decision for one step (schedule/l2plan.c). */
typedef enum cs_l2_kind {
  CS_L2_NONE = 0,      /* not a kernel the spec stages (or staging is off) */
  CS_L2_DDR,           /* a staged kernel whose input alone exceeds the budget */
  CS_L2_INPUT,         /* input in L2, weights read from DDR */
  CS_L2_INPUT_WEIGHTS, /* input and weights in L2 */
  CS_L2_SLICED,        /* input in L2, weights staged chunk_cout output
                          channels at a time: mmalib_conv2d_i8_sliced per chunk */
  /* ScheduleC7xDMATiling's decisions for a k_conv2d_i8 (dma_tiling.c) */
  CS_L2_UNTILED,       /* reads DDR untiled; why says which rule */
  CS_L2_OC_TILED,      /* input once, then chunk_cout output channels of
                          weights at a time, double-buffered; one
                          tidsp_conv2d_i8 call per tile */
  CS_L2_H_TILED,       /* tile_rows output rows at a time: each tile's input
                          strip double-buffered (input_off, input_off2),
                          its output rows computed into L2 (out_off,
                          out_off2) and copied out; weights in L2 at
                          weight_off when weight_bytes > 0 (dma_tiling_h.c) */
  CS_L2_N_TILED        /* c7x_dequantize_vecmatmul: chunk_cout weight rows
                          (output columns) at a time, n_chunks tiles; one
                          tile: the matrix cached; more: double-buffered
                          (weight_off, weight_off2) (dma_tiling_n.c) */
} cs_l2_kind;

/* Why ScheduleC7xDMATiling leaves a conv untiled. */
typedef enum cs_l2_why {
  CS_L2_WHY_FITS = 0,   /* input + weights <= half the budget */
  CS_L2_WHY_INPUT,      /* input + one channel's weights > half the budget */
  CS_L2_WHY_BATCH,      /* n > 1: an OC window is not one block of the output */
  CS_L2_WHY_GROUPED,    /* groups > 1 */
  CS_L2_WHY_REQUANT,    /* per-channel requant without a channel window (q31:
                           [mult C][shift C]; scale/shift struct) */
  CS_L2_WHY_NOT_CONST,  /* weights not in the blob */
  CS_L2_WHY_ROW         /* N-tiling: one weight row over half the budget */
} cs_l2_why;

/* Offsets are into the model's L2 scratch (base aligned to 128): the guard
 * occupies [0, input_off), which keeps the input off L2's first bytes. */
typedef struct cs_l2_stage {
  cs_l2_kind kind;
  size_t input_off, input_bytes;
  size_t weight_off, weight_bytes; /* the whole weights, or one chunk's (SLICED) */
  int chunk_cout, n_chunks;        /* SLICED, OC_TILED */
  const char *sliced_fn;           /* SLICED: the entry each chunk calls
                                      (cs_kernel_sliced_fn) */
  size_t weight_off2;              /* SLICED double-buffered, OC_TILED (> 0): the second
                                      chunk buffer, filled while the first computes */
  size_t weight_bytes_total;       /* the layer's weights (all kinds but NONE) */
  cs_l2_why why;                   /* UNTILED */
  /* Next-layer prefetch (l2plan.c): the weights this step copies first
   * (INPUT_WEIGHTS: all; OC_TILED: tile 0's) are copied into weight_off
   * on queue 1 before the previous step computes (prefetch = 1); that
   * step has prefetch_next = this step + 1 (0: it issues none). */
  int prefetch, prefetch_next;
  /* H_TILED: n_chunks tiles of tile_rows output rows (the last may have
   * fewer); input_bytes is the largest strip's bytes (input_bytes_total
   * the whole input's), out_bytes the largest output tile's; weight_bytes
   * 0: the weights are read from DDR */
  int tile_rows;
  size_t input_off2, out_off, out_off2, out_bytes, input_bytes_total;
  int mmalib_h; /* H_TILED: an MMALIB conv's (InjectMMALIBDMA: its input
                   exceeds the budget), its strips above the guard */
  /* An activation placed in L2 (dma_tiling_resident.c): the producer
   * step writes its output at out_l2_off (out_l2 = 1) instead of the
   * arena; the consumer, the next step (OC_TILED), finds it there as its
   * input (in_l2 = 1, input_off = out_l2_off): no copy, no DDR round trip */
  int out_l2, in_l2;
  size_t out_l2_off;
} cs_l2_stage;

typedef struct cs_schedule {
  /* order */
  int n_steps;
  int *order;       /* [n_steps] node ids */
  int *node_step;   /* [n_nodes] step of a node, -1 if dead or boundary */
  int *node_elided; /* [n_nodes] 1: k_copy/k_slice/k_concat aliased away
                       (storage.c's views), emit no call */
  /* boundary */
  int n_inputs, n_outputs;
  cs_boundary_io *inputs;  /* [n_inputs], graph input order */
  cs_boundary_io *outputs; /* [n_outputs], graph output order */
  int *output_copy;        /* [n_outputs] 1: epilogue copies raw_value in */
  /* liveness, per value (steps; -1 = none) */
  int *def_step;
  int *last_use;
  /* storage */
  cs_loc *loc;           /* [n_values] */
  size_t *input_staging; /* [n_inputs] arena offset model_run quantizes into
                            (node >= 0 only) */
  size_t *output_staging;
  size_t arena_size;     /* pool DDR, exact bytes */
  size_t arena_align;
  size_t live_lower_bound;
  /* weights blob: constants read by scheduled nodes, in first-use order */
  int n_weights;
  int *weights;          /* value ids */
  size_t weights_size;   /* blob bytes, header included */
  size_t weights_align;
  /* L2 staging (opt->l2_budget > 0; else NULL / 0) */
  cs_l2_stage *l2;       /* [n_steps] */
  size_t l2_budget;
  size_t l2_size;        /* scratch bytes the model needs: the largest step's */
} cs_schedule;

/* Build the whole schedule. Every live node must be a kernel op. Errors
 * name the node or tensor. */
cs_status cs_schedule_build(const cs_graph *g, const cs_schedule_options *opt,
                            cs_schedule *s);
void cs_schedule_free(cs_schedule *s);

/* Parts of cs_schedule_build, usable alone (tests). */
cs_status cs_schedule_order(const cs_graph *g, cs_schedule *s);
cs_status cs_schedule_boundary(const cs_graph *g, cs_schedule *s);
cs_status cs_schedule_liveness(const cs_graph *g, cs_schedule *s);
cs_status cs_schedule_storage(const cs_graph *g, const cs_schedule_options *opt,
                              cs_schedule *s);
/* Plan L2 staging of every MMALIB call the spec stages, and the DMA tiling
 * of every k_conv2d_i8 (after storage). */
cs_status cs_schedule_l2(const cs_graph *g, size_t budget, cs_schedule *s);
/* ScheduleC7xDMATiling of one k_conv2d_i8 node (dma_tiling.c). */
void cs_schedule_conv_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                             cs_l2_stage *st);
/* Its OC-tiling alone: 1 and st filled when a plan fits, else 0 (st
 * UNTILED, why set). */
int cs_schedule_conv_oc_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                               cs_l2_stage *st);
/* ScheduleC7xDMATiling of one c7x_dequantize_vecmatmul (dma_tiling_n.c). */
void cs_schedule_n_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                          cs_l2_stage *st);
/* H-tiling (dma_tiling_h.c), tried first for a k_conv2d_i8 with a fused
 * activation, and for an MMALIB conv whose input exceeds the budget
 * (l2plan.c): 1 and st filled when a plan fits the budget, else 0. */
int cs_schedule_conv_h_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                              cs_l2_stage *st);
/* The conv geometry H-tiling works on: a k_conv2d_i8's params, or an
 * MMALIB conv's or depthwise conv's mm_args (mmalib = 1: batch 1,
 * ungrouped or depthwise, dilation 1, pads >= 0, with its pad_bottom,
 * pad_right); the bytes of an input and an output element. 0: not a conv
 * it tiles. */
typedef struct cs_h_geom {
  tidsp_conv2d_params p;
  int32_t pad_bottom, pad_right;
  size_t in_elem, out_elem;
  int mmalib, depthwise;
} cs_h_geom;
int cs_h_conv_geom(const cs_graph *g, const cs_node *n, cs_h_geom *h);
/* Tile t of an H plan of tile_rows rows: output rows [r0, r0 + rows_out)
 * read input rows [in_row, in_row + rows_in), which the tile's conv sees
 * as its whole input with pad_top rows of padding above and pad_bottom
 * below (an MMALIB call's pad_bottom: exactly rows_out rows out). */
typedef struct cs_h_tile {
  int32_t r0, rows_out, in_row, rows_in, pad_top, pad_bottom;
} cs_h_tile;
cs_h_tile cs_h_tile_of(const tidsp_conv2d_params *p, int tile_rows, int t);
/* L2-resident activations (dma_tiling_resident.c), after every step's
 * own plan and before the next-layer prefetch. */
void cs_schedule_l2_resident(const cs_graph *g, cs_schedule *s, size_t budget);
/* The bytes [0, end) a step's plan uses in L2 while it computes (0: none). */
size_t cs_l2_footprint_end(const cs_l2_stage *p);

/* "input 25088 B + weights 36864 B in L2", "input in L2, weights in 4
 * chunks of 128 channels (weights 294912 B > budget)", … into buf. */
void cs_l2_stage_describe(const cs_l2_stage *st, size_t budget, char *buf, size_t size);

/* The pointer a step reads for value v resolves through aliases to this
 * value's storage. */
int cs_schedule_storage_root(const cs_schedule *s, int v);
/* Bytes from the root's first byte to v's (0 unless v is an offset view). */
size_t cs_schedule_view_offset(const cs_schedule *s, int v);

#endif
