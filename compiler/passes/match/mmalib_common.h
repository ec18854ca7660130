/*
 * mmalib_common.h — helpers of the MMALIB offload passes (mmalib_*.c).
 *
 * An MMALIB kernel node calls the spec's extern symbol positionally: its
 * inputs are the pointer arguments in order, its output the output pointer,
 * and the trailing int32 size arguments are the node's "mm_args" ints
 * (codegen prints them, kernel_exec passes them).
 */
#ifndef CSTATIC_MMALIB_COMMON_H
#define CSTATIC_MMALIB_COMMON_H

#include <stdint.h>

#include "ir.h"
#include "target.h"
#include "qdq_tail.h"
#include "quant/mmalib_exact.h"
#include "quant/mmalib_fold.h"
#include "quant/quant.h"

#define CS_MM_ARGS "mm_args"

/* What an MMALIB matcher changes with the dtype: one matcher per layer
 * kind serves both (mmalib_conv.c, mmalib_fc.c, mmalib_add.c). */
typedef struct cs_mm_dtype {
  cs_dtype dt;      /* CS_DTYPE_I8 / CS_DTYPE_I16: the layer's data (what the matchers read) */
  int bits;         /* 8 / 16: the names in messages */
  int mult;         /* K, N, C_out multiple of the kernel that runs: 64 / 32 (spec "Supported Operations") */
  int symmetric;    /* d_zp = o_zp = 0 required (int16) */
  int32_t qmin, qmax;
  int exact;        /* int8 data run by MMALIB's int16 kernel (the exact path, mmalib_exact.c) */
} cs_mm_dtype;
/* cs_mm_int8_exact: an int8 layer the exact path takes — int8 data (the
 * same matchers, folds and messages), int16 kernel: its 32-wide tile. */
extern const cs_mm_dtype cs_mm_int8, cs_mm_int16, cs_mm_int8_exact;

/* Which kernel runs a layer, and so what its tile is — the one answer the
 * conv/FC decline rules and every rewrite that pads to the tile
 * (MMALIBPadChannels, MMALIBPackPixels, MMALIBOutS2D, MMALIBAsymStride,
 * MMALIBDilation, the FC's K/N padding) use. For int8 data d: under
 * -mmalib-exact=all or strict, a layer an int16 kernel runs (int16_kernel:
 * a plain conv, a depthwise conv, an FC) of one image is taken by the exact
 * path, so cs_mm_int8_exact (tile 32: cs_mm_cost_mma's quarter rate, the
 * int16 panels); otherwise — -mmalib-exact=none, worst (its choice needs
 * the fold: a layer padded to 64 is eligible either way), a grouped conv
 * (no C_out rule of its own: the exact path's block-diagonal calls fill the
 * int16 tile by construction, cs_mm_exact_group_blocks), a batch —
 * cs_mm_int8 (tile 64). int16 data: d itself. */
const cs_mm_dtype *cs_mm_runs_as(const cs_target *t, const cs_mm_dtype *d, int int16_kernel, int64_t images);
/* The same for Conv node conv (its groups and batch) matched as dtype d
 * (NULL: its data's, cs_mm_dtype_of; NULL when that is not int8|int16). */
const cs_mm_dtype *cs_mm_conv_runs_as(cs_graph *g, const cs_target *t, const cs_mm_dtype *d, const cs_node *conv);
/* The bytes one padded element (a zero filter's weight, an output of a
 * padded channel) adds to the graph on kernel d: the layer's own tensor
 * (its data dtype) and, on the exact path, its int16 copy (w16, z16). */
static inline int64_t cs_mm_pad_bytes(const cs_mm_dtype *d) {
  return (int64_t)cs_dtype_size(d->dt) + (d->exact ? 2 : 0);
}

/* The conv rewrites' first tests (dilation, output space-to-depth,
 * asymmetric stride, channel padding). cs_mm_dtype_of: the MMALIB dtype of
 * a layer whose data is DQ(int8) or DQ(int16), else NULL.
 * cs_mm_plain_conv: for a group-1 Conv of one NCHW image (x and y rank 4,
 * N = 1), the kernel that runs it (cs_mm_conv_runs_as), else NULL.
 * cs_mm_weight_dq_zp0: weight w is DQ(dt) with every zero point 0, as the
 * MMALIB kernels take it (*wdq: that DQ). */
const cs_mm_dtype *cs_mm_dtype_of(cs_graph *g, int data);
const cs_mm_dtype *cs_mm_plain_conv(cs_graph *g, const cs_target *t, const cs_node *conv);
int cs_mm_weight_dq_zp0(cs_graph *g, int w, cs_dtype dt, int *wdq);

/* ConstReachability: v's value is fully determined at compile time (a
 * constant, or computed only from constants). */
int cs_mm_const_reachable(cs_graph *g, int v);

/* The bias of a layer (bias < 0: none) as quant/mmalib_fold.h folds it: a
 * DQ(int32 constant) (with_q: its parameters read into *bq, released with
 * cs_qparams_free when b->q_dq is set) or a float constant of `channels`
 * values. NULL, or the rule that declines the layer. */
const char *cs_mm_bias_of(cs_graph *g, int bias, int channels, int with_q, cs_fold_bias *b, cs_qparams *bq);

/* Fold a layer of dtype d (quant/mmalib_fold.h, with the bias found by
 * cs_mm_bias_of): bias_out int32[channels] (int8) or int64[channels]
 * (int16); wsum (per-channel weight sums) is read for int8 only. NULL, or
 * the rule that declines the layer. */
const char *cs_mm_fold(cs_graph *g, const cs_mm_dtype *d, int bias, const cs_qparams *xq, const cs_qparams *wq,
                       const cs_qparams *out, const int64_t *wsum, int channels, void *bias_out, uint8_t *scale,
                       uint8_t *shift, double *worst);

/* Add the bias/scale/shift constants; writes their ids to ids[0..2].
 * CS_ERR_NOMEM (message recorded) when one cannot be added. */
cs_status cs_mm_add_requant_consts(cs_graph *g, const char *base, int channels, const int32_t *bias,
                                   const uint8_t *scale, const uint8_t *shift, int *ids);

cs_status cs_mm_set_args(cs_graph *g, int node, int n, const int64_t *args); /* node < 0: CS_ERR_NOMEM */
/* What the helpers below that return a decline reason return when memory
 * runs out (the message is recorded): the caller fails, it does not
 * decline. */
extern const char cs_mm_nomem[];

/* The FC patterns around a MatMul/Gemm (int8 and int16 FC passes): for a
 * MatMul, aten.linear's input Reshape (read only by the MatMul), then
 * [output Reshape] → [Add of a float constant: the bias]; a Gemm takes its
 * bias as input 2 and has neither. A float bias: a DQ'd one would carry
 * its own scale. */
typedef struct cs_mm_fc_shape {
  int data;      /* the value the FC reads (before the input Reshape) */
  int rs_in;     /* the input Reshape, or -1 */
  int rs_out;    /* the output Reshape, or -1 */
  int add_id;    /* the bias Add, or -1 */
  int bias;      /* Gemm input 2 or the Add's constant, or -1 */
  int tail_from; /* where the [Relu|Clip] → QuantizeLinear tail starts */
} cs_mm_fc_shape;
void cs_mm_fc_shape_of(cs_graph *g, int mm_id, cs_mm_fc_shape *s);

/* ---- int16 (the *I16 passes: the spec's int16 QDQ path, symmetric only) --
 *
 *   DQ(x:i16, d_s, 0) → op(·, DQ(w:i16 const, w_s[c], 0)) → [bias] → [Relu|Clip]
 *     → Q(·, o_s, 0):i16
 *
 * The kernels saturate to the int16 range and apply no ReLU (the fork's
 * int16 ReLU clips nothing); a fused ReLU becomes a second call, the int16
 * residual add with params {m_x 1, m_skip 0, shift 0} and has_relu = 1,
 * which is max(y, 0) exactly and needs no new firmware symbol. */


/* The fused activation of a tail as the dtype's kernels apply it: 0 none
 * (the clamp is the dtype's saturation), 1 ReLU as a second call (int16
 * only: the clamp is [o_zp = 0, 32767]), -1 anything else (*mn, *mx: the
 * clamp, for the decline message, written to why). */
int cs_mm_act(const cs_mm_dtype *d, const cs_qdq_tail *tail, char *why, size_t whylen);

/* The first zero-point rule a layer breaks, in why (NULL if none): w_zp
 * must be 0; with d->symmetric, d_zp and o_zp too. */
const char *cs_mm_zero_points(const cs_mm_dtype *d, const cs_qparams *wq, const cs_qparams *xq,
                              const cs_qparams *out, char *why, size_t whylen);

/* ---- residual add (mmalib_add.c, both dtypes) ---------
 * The rest of a residual add once the pass matched its DQ operands (a_in,
 * b_in: the quantized tensors, aq/bq their per-tensor qparams), its tail
 * and its activation (relu): both operands must be activations (not
 * ConstReachable) of the output's shape, and both scale ratios
 * a_s/o_s, b_s/o_s representable (quant/scale_shift.h
 * cs_residual_add_mults); the 16-byte params blob,
 * the chain replaced by kernel `op` and the report entry, naming op's
 * symbol from the kernel table (worst relative multiplier error). Returns NULL when replaced, else
 * the rule that declines (the graph is then unchanged), or cs_mm_nomem. */
const char *cs_mm_residual_add(cs_graph *g, int add_id, const cs_qdq_tail *tail, int a_in, int b_in,
                               const cs_qparams *aq, const cs_qparams *bq, int relu, cs_op op);

/* cs_mm_add_requant_consts with an int64 bias (NULL: no bias constant,
 * ids[0] = -1). */
cs_status cs_mm_add_requant_consts_i16(cs_graph *g, const char *base, int channels, const int64_t *bias,
                                  const uint8_t *scale, const uint8_t *shift, int *ids);

/* Take over an int16 QDQ chain (cs_replace_chain) with kernel `op`; with
 * relu, the kernel writes a new int16 value and the ReLU call (above)
 * produces the Q's output. Returns the kernel node id, -1 when out of
 * memory (message recorded). */
int cs_mm_replace_chain_i16(cs_graph *g, const int *nodes, int n_nodes, const cs_qdq_tail *tail, int relu,
                            cs_op op, int n_inputs, const int *inputs);

/* ---- the graph's edge ---------------------------------------------------
 * MMALIB reads and writes 64-byte aligned tensors. Arena tensors are (the
 * planner aligns every activation, 128 bytes with -mmalib=1); a caller's
 * graph input/output buffer need not be (a numpy array, malloc's 16 bytes,
 * an IPC window at an offset). A layer at the graph's edge therefore goes
 * through an aligned arena copy (k_copy) rather than asking every caller
 * for aligned I/O: one pass over the activation, against the layer's
 * K (FC) or C_in·KH·KW (conv) MACs per output, and no contract a caller can
 * break at run time. */

/* A new value like v (dtype, quantization, uint8 domain) named `name`,
 * of v's shape, or of `shape` (v's rank) when not NULL; -1 when out of
 * memory (message recorded). */
int cs_mm_like_value(cs_graph *g, int v, const char *name, const int64_t *shape);

/* x itself when it is neither a graph input nor a graph output (the
 * caller's buffer either way: a layer's output that the model also returns,
 * e.g. `cstatic compile --outputs`, lives there); else a new arena value (x's dtype,
 * shape and quantization) that a k_copy (origin: the layer's node name)
 * fills from x. -1 when out of memory (message recorded). */
int cs_mm_stage_input(cs_graph *g, int x, const char *origin);
/* When y is a graph output: its producer writes a new arena value instead,
 * which a k_copy then copies into y. */
cs_status cs_mm_stage_output(cs_graph *g, int y);

/* ---- the offload passes' shared bodies ---------------------------------
 * One matcher and rewrite per layer kind serves the int8 pass and its int16
 * twin (each pass is its own file, passes/<pass>.c, calling one of these).
 * Each looks at every live node of its kind present when it starts and
 * records every decision in the offload report; the first error ends it. */
typedef enum cs_mm_conv_kind {
  CS_MM_CONV_ANY = -1, /* the int8 pass: every Conv */
  CS_MM_CONV_PLAIN,
  CS_MM_CONV_DEPTHWISE,
  CS_MM_CONV_GROUPED,
} cs_mm_conv_kind;
/* Conv (mmalib_conv.c): int8 looks at every Conv, int16 only at those of
 * `kind` whose input is DQ(int16). */
cs_status cs_mm_fuse_conv(cs_graph *g, const cs_target *t, const cs_mm_dtype *d, cs_mm_conv_kind kind);
/* Gemm / MatMul as an FC (mmalib_fc.c): int16 only where the data is DQ(int16). */
cs_status cs_mm_fuse_fc(cs_graph *g, const cs_target *t, const cs_mm_dtype *d);
/* Residual Add (mmalib_add.c): int16 only where an operand is DQ(int16). */
cs_status cs_mm_fuse_residual_add(cs_graph *g, const cs_target *t, const cs_mm_dtype *d);

/* mmalib_conv.c, for the channel padding (mmalib_pad_channels.c): *rule
 * = the rule that would decline Conv node conv_id for the dtype-d MMALIB
 * conv if its C_out were c_out_as (zero filters added), written to why;
 * NULL when it would be offloaded. The graph and the report are left as
 * they were. CS_ERR_NOMEM (message recorded) when memory runs out. */
cs_status cs_mm_conv_padded_rule(cs_graph *g, const cs_target *t, int conv_id, const cs_mm_dtype *d,
                                 int64_t c_out_as, const char **rule, char *why, size_t whylen);

/* The rewrites that make a Conv eligible (dilation, output space-to-depth,
 * asymmetric stride, constant channels) each look at every live Conv with
 * a weight once, in graph order: consider(g, t, id) for each node present
 * when the walk starts (nodes it adds are not visited); the first error
 * ends the walk and is returned. */
typedef cs_status (*cs_mm_conv_rewrite)(cs_graph *g, const cs_target *t, int conv_id);
cs_status cs_mm_each_conv(cs_graph *g, const cs_target *t, cs_mm_conv_rewrite consider);

/* ---- the exact-requant path (mmalib_exact.c, -mmalib-exact) ------------
 * An int8 conv offloaded as MMALIB's int16 kernel on widened data with a
 * core requantization (quant/mmalib_exact.h). */
/* -mmalib-exact=worst takes a layer whose int8 drift |g|max·max|y − o_zp|
 * (g: the int8 fold's scale_shift_max_rel_err) reaches this, in LSB
 * (mmalib_exact.c "Which layers"). */
#define CS_MM_EXACT_WORST_DRIFT 0.5

typedef struct cs_mm_exact_plan {
  int c_out;
  int32_t x_zp;           /* the input's zero point, subtracted as x is widened */
  int x16;                /* the widened input x − x_zp (set by the *_inputs call) */
  int64_t *bias;          /* accumulator bias + D[c] */
  uint8_t *scale, *shift; /* z's grid */
  int64_t *offset;        /* D[c] (the bias is the accumulator's + D[c]) */
  float *mult;            /* ORT's multiplier fl(fl(d_s·w_s[c])/o_s) */
  double max_err;         /* the largest t/2 over channels that round z (output LSB) */
} cs_mm_exact_plan;

/* Whether the target sends a layer with worst |g| = worst_g and int8 drift
 * drift_lsb = worst_g·max|y − o_zp| down the exact path (the caller checks
 * what an int16 kernel can run). */
int cs_mm_exact_wanted(const cs_target *t, double worst_g, double drift_lsb);
/* The plan from ORT's parameters, the accumulator bias of the int8 data
 * (b − d_zp·Σw, no o_zp term) and each channel's Σw: NULL, or the rule that
 * keeps the layer on the int8 kernel (cs_mm_nomem when memory ran out).
 * Free it either way. The int16 call reads x − d_zp (mmalib_exact.c "The
 * input"), so the plan's bias is acc_bias + d_zp·Σw + D. */
const char *cs_mm_exact_plan_init(cs_mm_exact_plan *p, int c_out, float d_s, int32_t d_zp, const cs_qparams *wq,
                                  const int64_t *wsum, float o_s, int32_t o_zp, const int64_t *acc_bias);
void cs_mm_exact_plan_free(cs_mm_exact_plan *p);
/* Extend the plan to `channels` (an FC's zero-padded outputs, cut after
 * the core kernel: channel 0's grid, accumulator bias 0). 0, or -1 when out
 * of memory (message recorded). */
int cs_mm_exact_plan_pad(cs_mm_exact_plan *p, int channels);
/* The int16 call's inputs {x16, w16, bias, scale, shift} into ins[5]: act_in
 * − x_zp widened by a new k_widen_i16 (also p->x16), w_in (int8 constant)
 * as an int16 constant, the plan's requant constants. 0, or -1 when out of
 * memory (message recorded). */
int cs_mm_exact_inputs(cs_graph *g, const char *base, int act_in, int w_in, cs_mm_exact_plan *p, int *ins);
/* Node id (the int16 call that took over the chain's int8 output y)
 * writes z:i16 instead, and k_mmalib_exact_requant computes y from z, the
 * widened input p->x16 and the int8 weights w_in (geometry *cp: its
 * n…groups fields; the rest is filled here). 0, or -1 when out of memory
 * (message recorded). */
int cs_mm_exact_requant(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p, int w_in,
                        const tidsp_conv2d_params *cp, int32_t o_zp);

/* A 5×5/7×7 depthwise conv on the exact path, as 3×3 int16 depthwise
 * calls (quant/mmalib_exact.h cs_mm_exact_dw_tiles): ins[j] gets tile j's
 * inputs {the widened act_in p->x16, whole (the call's pads crop its
 * window), its 3×3 int16 weights, the plan's requant constants (bias 0 for
 * j > 0)}. 0, or -1 when out of memory (message recorded). */
int cs_mm_exact_dw_inputs(cs_graph *g, const char *base, int act_in, int w_in, cs_mm_exact_plan *p,
                          const cs_mm_exact_tile *tiles, int n_tiles, int (*ins)[5]);
/* args (12): tile t's call on the whole h × w input of `channels`. */
void cs_mm_exact_tile_args(const cs_mm_exact_tile *t, int64_t channels, int64_t h, int64_t w, int stride,
                           int64_t *args);
/* Node id (tile 0's call, which took over the chain's output y) writes
 * tile 0's z; a call per further tile, a k_concat of their z along a new
 * first axis, and k_mmalib_exact_requant with P = n_tiles compute y. */
int cs_mm_exact_dw_finish(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p,
                          const cs_mm_exact_tile *tiles, int n_tiles, int (*ins)[5], int w_in,
                          const tidsp_conv2d_params *cp, int32_t o_zp);

/* A grouped conv on the exact path (MMALIB has no int16 grouped kernel):
 * blocks of B consecutive groups, each one plain int16 conv of B·C_out/g
 * channels (the tile, or C_out/g when that is a multiple of it) over its
 * B·C_in/g input channels, with block-diagonal weights (zero where an
 * output's group does not read). The products the zeros add are 0, so every
 * accumulator is the grouped conv's own; the MACs are B× the layer's, on
 * the MMA, against 64/(C_out/g)× on the int8 grouped_loop's panels. The
 * last block may hold fewer groups: zero filters pad it to the tile, and
 * its z past C_out is never read. B for C_out and g, 0 when C_out/g is
 * neither a divisor nor a multiple of the tile (the int8 kernel then). */
int cs_mm_exact_group_blocks(int64_t c_out, int64_t groups);
/* ins[j], args[j] (12: conv_args, the whole conv's plain-conv arguments,
 * with block j's C_in and C_out) of block j of ⌈g/B⌉: the widened act_in
 * (one new k_widen_i16, p->x16) or its channel slice, the block's int16 weights, its
 * channels' requant constants. 0, or -1 when out of memory (recorded). */
int cs_mm_exact_group_inputs(cs_graph *g, const char *base, int act_in, int w_in, cs_mm_exact_plan *p,
                             int64_t groups, int per_block, const int64_t *conv_args, int (*ins)[5],
                             int64_t (*args)[12]);
/* Node id (block 0's call, which took over the chain's output y) writes
 * block 0's z; a call per further block, a k_concat of their z along the
 * channels, and k_mmalib_exact_requant (cp->groups = g) compute y. */
int cs_mm_exact_group_finish(cs_graph *g, int id, const char *base, const cs_mm_exact_plan *p, int n_blocks,
                             int (*ins)[5], int64_t (*args)[12], int w_in, const tidsp_conv2d_params *cp,
                             int32_t o_zp);

/* ---- replicated channels (MMALIBPackPixels, MMALIBOutS2D) --------------
 * A rewrite that computes `rep` outputs per channel (pixel blocks, output
 * space-to-depth) gives new channel ch < c·rep the parameters of channel
 * ch / rep, and the channels past c·rep (zero filters up to the tile)
 * zeros — or, for a scale (fill_last), the last channel's, any valid
 * multiplier: never read. */

/* A constant like `src` (axis 0 of c entries) with n entries so
 * replicated, named <base>.<suffix>. -1 when out of memory (message
 * recorded). */
int cs_mm_replicated(cs_graph *g, const char *base, const char *suffix, int src, int64_t c, int64_t rep, int64_t n,
                     int fill_last);
/* DequantizeLinear node dq's per-channel scale and zero point (and, with
 * `data`, its constant input: a bias) so replicated, each a new constant
 * "<prefix>_<what>[_scale|_zp]"; per-tensor ones are left as they are. */
cs_status cs_mm_replicate_dq(cs_graph *g, int dq, const char *base, const char *prefix, const char *what, int64_t c,
                             int64_t rep, int64_t n, int data);

/* x rounded up to a multiple of m: the size a decline message tells the
 * user to pad a dimension to. */
static inline long long cs_mm_round_up(int64_t x, int64_t m) { return (long long)((x + m - 1) / m * m); }

#endif
