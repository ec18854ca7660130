/*
 * FuseConvAddF32 — ONNX Runtime's Conv + Add ("Sum") fusion for float:
 *
 *   Add(Conv(x, W, [B]), S)  →  Conv(x, W, B, S)   (S: the kernel's `sum`)
 *
 * ORT's NchwcTransformer (level ORT_ENABLE_ALL, the default session) feeds
 * the other operand of an Add into a single-use NCHWc convolution; MLAS
 * then starts that convolution from S in its output buffer and adds the
 * bias last, so each output is ((Σ x·w) + S) + bias where an unfused graph
 * computes ((Σ x·w) + bias) + S: a different rounding
 * (runtime/kernels/host/conv2d_f32__host_mlas.c). The fused kernel computes
 * ORT's order; to be bit-identical this pass fuses exactly where ORT does
 * (nchwc_transformer.cc, TransformBinary), and leaves every other Add alone:
 *
 *   - the Add has two inputs of the same 4-D float shape (no broadcast);
 *   - both inputs are NCHWc tensors in ORT's graph (match/ort_nchwc.c): ORT
 *     transforms the Add only then;
 *   - input 0 is tried first: its producer must be a float Conv ORT turns
 *     into an NCHWc convolution, whose output the Add alone reads (not a
 *     graph output), with no activation between (an activation fused into
 *     the convolution first would come before the sum); else input 1.
 *
 * A Conv ORT leaves in NCHW (match/ort_nchwc.c) takes the Add by ORT's
 * ConvAddActivationFusion instead (conv_add_act_fusion.cc, after the
 * NchwcTransformer): FusedConv with the operand as "Z", which MLAS's
 * convolution also adds before the bias. Its conditions: the Conv has a
 * bias and no sum yet, its output is read by the Add alone, the operands
 * have the same 4-D shape; the operand may be any tensor.
 *
 * An activation after the Add stays a node of its own: ORT fuses it into
 * the convolution after the sum, which computes the same values.
 *
 * ORT's NCHWc conditions depend on MLAS's channel block (16 with
 * AVX-512F, 8 with AVX2 + FMA3; match/ort_nchwc.h), so ORT fuses different
 * Adds on the two: e.g. a conv on 24 channels pooled from an NCHWc tensor
 * takes the Add of the pooled tensor at block 8 only (24 channels are whole
 * blocks of 8, not of 16; measured on ORT 1.30 on a Zen 3), while 22 and 30
 * channels fuse as FusedConv's Z at both. This pass changes the graph,
 * which cannot wait for the CPU: it fuses where either block's ORT does
 * and records on the Conv, in its "ort_sum" attribute (CS_ORT_SUM_ATTR),
 * the TIDSP_MLAS_BLOCK* bits of the blocks whose ORT fused it; LegalizeOps
 * copies them to the kernel's params.sum_in_conv, and at a block without
 * its bit the kernel computes the Conv, then the Add: ORT's bytes on
 * either CPU. Where both blocks fuse, but into different Convs (input 0's
 * at one block, input 1's at the other), block 16's choice is the graph's
 * and the block-8 bit stays clear: such a CPU then gets (conv + bias) +
 * other, not ORT's fusion into the other Conv (not seen in a model yet).
 */
#include "pass_list.h"
#include "match/ort_nchwc.h"
#include "match/pattern.h"

/* The Conv that ORT at MLAS block `block` fuses Add `a` with through
 * its input `side`, or -1: a Conv with no sum yet, read by the Add alone;
 * an NCHWc one when both operands are NCHWc tensors (nchwc_operands), any
 * other one when it has a bias. */
static int fusable_conv(cs_graph *g, int a, int side, int nchwc_operands, int block) {
  const cs_node *n = cs_graph_node(g, a);
  int c = cs_match_producer(g, n->inputs[side], CS_OP_CONV);
  if (c < 0 || cs_match_single_consumer(g, n->inputs[side]) != a) return -1;
  const cs_node *conv = cs_graph_node(g, c);
  if (conv->n_inputs > 3) return -1;
  if (cs_ort_nchwc_conv(g, c, block)) return nchwc_operands ? c : -1;
  return conv->n_inputs == 3 && conv->inputs[2] >= 0 ? c : -1;
}

/* The Conv ORT at `block` fuses Add `a` into (input 0's tried first), its
 * input in *side; -1 if none. */
static int ort_fused_conv(cs_graph *g, int a, int block, int *side) {
  const cs_node *n = cs_graph_node(g, a);
  int nchwc_operands = cs_ort_nchwc_value(g, n->inputs[0], block) && cs_ort_nchwc_value(g, n->inputs[1], block);
  for (*side = 0; *side < 2; (*side)++) {
    int c = fusable_conv(g, a, *side, nchwc_operands, block);
    if (c >= 0) return c;
  }
  return -1;
}

static cs_status fuse(cs_graph *g, int a) {
  const cs_node *n = cs_graph_node(g, a);
  if (n->n_inputs != 2 || n->outputs[0] < 0 || !cs_match_f32_4d(g, n->outputs[0])) return CS_OK;
  if (!cs_match_same_shape(g, n->inputs[0], n->inputs[1]) ||
      !cs_match_same_shape(g, n->inputs[0], n->outputs[0]))
    return CS_OK;
  int side16, side8;
  int c16 = ort_fused_conv(g, a, CS_ORT_NCHWC_BLOCK, &side16);
  int c8 = ort_fused_conv(g, a, CS_ORT_NCHWC_BLOCK_AVX2, &side8);
  if (c16 < 0 && c8 < 0) return CS_OK;
  /* block 16's choice first: AVX-512F CPUs keep the graph they had */
  int c = c16 >= 0 ? c16 : c8, side = c16 >= 0 ? side16 : side8;
  int blocks = (c16 == c && side16 == side ? TIDSP_MLAS_BLOCK16 : 0) |
               (c8 == c && side8 == side ? TIDSP_MLAS_BLOCK8 : 0);
  const cs_node *conv = cs_graph_node(g, c);
  int ins[4] = {conv->inputs[0], conv->inputs[1], conv->n_inputs > 2 ? conv->inputs[2] : -1,
                cs_graph_node(g, a)->inputs[1 - side]};
  cs_status st = cs_node_set_inputs(g, c, 4, ins);
  if (st != CS_OK) return st;
  /* the Add's output is now the Conv's */
  cs_absorb_consumer(g, c, a);
  return cs_node_set_attr_int(cs_graph_node(g, c), CS_ORT_SUM_ATTR, blocks);
}

cs_status pass_fuse_conv_add_f32(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_ADD, fuse);
}
