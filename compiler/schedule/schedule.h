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
} cs_loc;

typedef struct cs_schedule_options {
  size_t arena_align;   /* power of two */
  size_t weights_align; /* power of two */
  size_t weights_base;  /* offset of the first tensor in the blob (header) */
  int alias_copies;     /* elide k_copy whose input dies there */
} cs_schedule_options;

typedef struct cs_schedule {
  /* order */
  int n_steps;
  int *order;       /* [n_steps] node ids */
  int *node_step;   /* [n_nodes] step of a node, -1 if dead or boundary */
  int *node_elided; /* [n_nodes] 1: k_copy aliased away, emit no call */
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

/* The pointer a step reads for value v resolves through aliases to this
 * value's storage. */
int cs_schedule_storage_root(const cs_schedule *s, int v);

#endif
