/*
 * FuseWidenIntoProducer (-mmalib=1): an MMALIB exact layer reads its input
 * widened, x − x_zp as int16 (passes/match/mmalib_exact.c): one more core
 * pass over the int8 tensor its producer just wrote. Where that producer
 * is the previous exact layer's requantization or an activation table,
 * it writes the int16 tensor itself:
 *
 *   k_mmalib_exact_requant(z, x16, w, grid, mult) : y:i8   (out_zp = zp)
 *   k_widen_i16(y) : y16 = y − zp
 *     → k_mmalib_exact_requant_i16(z, x16, w, grid, mult) : y16
 *
 *   k_lut_i8(table, x) : y:i8
 *   k_widen_i16(y) : y16 = y − zp
 *     → k_lut_i16(table − zp, x) : y16
 *
 *   k_channel_affine_i8(x, s, b) : y:i8       (y_zp = zp)
 *   k_widen_i16(y) : y16 = y − zp
 *     → k_channel_affine_i16(x, s, b) : y16
 *
 * Exact: the requant and channel-affine twins compute the same int8 y
 * (the same clamp: a folded clamp table's bounds included, so this runs
 * after FoldClampLUT) and store y − zp; the int16 table holds each entry
 * less zp. Each way y16 is what the widening stored; one pass over the
 * tensor and the int8 copy of y go (the arena holds y16 alone).
 *
 * and then a table over an exact requantization:
 *
 *   k_mmalib_exact_requant(z, x16, w, grid, mult) : y:i8
 *   k_lut_i16(t16, y) : y16
 *     → k_mmalib_exact_requant_lut16(z, x16, w, grid, mult, t16) : y16
 *
 * (ConvNeXt's and Swin's GELU, EfficientNet's SiLU after their convs;
 * a whole k_copy between the two, a Reshape, goes too).
 *
 * First of all, a stride rewrite's pick (MMALIBAsymStride) after an
 * exact requantization:
 *
 *   k_mmalib_exact_requant(z, …) : y' [1, C, H1, W1]
 *   k_slice(y', start 0, step (1, 1, a, b)) : y [1, C, H, W]
 *     → k_mmalib_exact_requant(z, …) : y, reading z(oh·a, ow·b)
 *
 * (params z_h, z_w, z_step_h, z_step_w; its conv geometry becomes y's,
 * stride (a·s, b·s), for the outputs it sums again): y' and the pick's
 * pass over it go.
 *
 * Rules (a declined pair is left as it was):
 *   1. the widening is one dense matrix (batch 1, no padding, no
 *      transpose): its output holds y's elements in y's order;
 *   2. y is produced by k_mmalib_exact_requant, k_channel_affine_i8
 *      (DenseNet's pre-activation BatchNormalization) or k_lut_i8 with a
 *      constant table, and read by the widening alone (not a graph
 *      output);
 *   3. a requant's or channel affine's output zero point is the
 *      widening's;
 *   4. a table folds into an exact requantization whose int8 output it
 *      alone reads (not a graph output), directly or through a whole
 *      copy that alone reads it, the table a constant;
 *   5. a pick folds into an exact requantization whose output it alone
 *      reads (not a graph output), when it steps rows and columns only
 *      (from 0, every image and channel) and the requantization picks
 *      nothing yet.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

enum { LUT_TABLE = 0, LUT_ENTRIES = 256 };

/* The int16 table of k_lut_i8 node prod less zp, as a new constant; -2
 * when the table is not a constant of 256 int8 entries, -1 when out of
 * memory. */
static int table_i16(cs_graph *g, const cs_node *prod, int32_t zp) {
  const cs_value *t = prod->inputs[LUT_TABLE] >= 0 ? cs_graph_value(g, prod->inputs[LUT_TABLE]) : NULL;
  if (!t || !t->data || t->dtype != CS_DTYPE_I8 || cs_value_numel(t) != LUT_ENTRIES) return -2;
  int16_t t16[LUT_ENTRIES];
  for (int i = 0; i < LUT_ENTRIES; i++) t16[i] = (int16_t)(((const int8_t *)t->data)[i] - zp);
  int64_t shape[1] = {LUT_ENTRIES};
  return cs_add_const_named(g, prod->name, "lut_i16", CS_DTYPE_I16, 1, shape, t16);
}

/* Node `consumer` (the only reader of producer p's output y) folded into
 * p, which becomes `twin` and writes the consumer's output. */
static cs_status absorb(cs_graph *g, int p, int consumer, cs_op twin) {
  char *origin = cs_origin_join(g, (int[]){p, consumer}, 2);
  if (!origin)
    return cs_error(CS_ERR_NOMEM, "FuseWidenIntoProducer: out of memory at node '%s'",
                    cs_graph_node(g, consumer)->name);
  int y = cs_graph_node(g, p)->outputs[0], y16 = cs_graph_node(g, consumer)->outputs[0];
  cs_graph_remove_node(g, consumer);
  cs_node *pn = cs_graph_node(g, p); /* (the graph grew: pointers are refreshed) */
  pn->op = twin;
  pn->outputs[0] = y16;
  cs_graph_value(g, y16)->producer = p;
  cs_graph_value(g, y)->producer = -1;
  free(pn->origin);
  pn->origin = origin;
  return CS_OK;
}

/* k_copy node n copies its whole input (a Reshape left as a copy; the
 * planner makes it a view). */
static int is_whole_copy(const cs_graph *g, const cs_node *n) {
  if (n->dead || n->op != CS_OP_K_COPY || n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0) return 0;
  size_t in = cs_value_nbytes(cs_graph_value(g, n->inputs[0]));
  return n->k.copy_bytes == in && cs_value_nbytes(cs_graph_value(g, n->outputs[0])) == in;
}

/* Rule 4: an int16 table (k_lut_i16, made above or before) whose int8
 * input is an exact requantization's output read by it alone becomes
 * part of that requantization (k_mmalib_exact_requant_lut16, the table
 * its sixth input). */
static cs_status fold_tables_into_requant(cs_graph *g) {
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_K_LUT_I16 || n->n_inputs != 2 || n->n_outputs != 1) continue;
    int table = n->inputs[LUT_TABLE], y = n->inputs[1];
    if (table < 0 || y < 0 || !cs_graph_value(g, table)->data) continue;
    int p = cs_graph_value(g, y)->producer;
    if (p < 0 || cs_match_single_consumer(g, y) != i) continue;
    int reshape = -1; /* a whole copy between them (a Reshape: the same bytes) */
    if (is_whole_copy(g, cs_graph_node(g, p))) {
      reshape = p;
      y = cs_graph_node(g, p)->inputs[0];
      p = cs_graph_value(g, y)->producer;
      if (p < 0 || cs_match_single_consumer(g, y) != reshape) continue;
    }
    const cs_node *prod = cs_graph_node(g, p);
    if (prod->dead || prod->op != CS_OP_K_MMALIB_EXACT_REQUANT || prod->n_inputs != 5 || prod->n_outputs != 1)
      continue;
    int ins[6];
    memcpy(ins, prod->inputs, 5 * sizeof *ins);
    ins[5] = table;
    cs_status st = cs_node_set_inputs(g, p, 6, ins);
    if (st == CS_OK && reshape >= 0) st = absorb(g, p, reshape, CS_OP_K_MMALIB_EXACT_REQUANT);
    if (st == CS_OK) st = absorb(g, p, i, CS_OP_K_MMALIB_EXACT_REQUANT_LUT16);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

/* Rule 5: the pick of a stride rewrite (k_slice, steps on H and W only)
 * of an exact requantization's output becomes part of it. */
static cs_status fold_picks_into_requant(cs_graph *g) {
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_K_SLICE || n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0) continue;
    const tidsp_slice_params *sp = &n->k.slice;
    if (sp->rank != 4 || sp->step[0] != 1 || sp->step[1] != 1 || sp->step[2] < 1 || sp->step[3] < 1) continue;
    int whole = sp->in_shape[0] == sp->out_shape[0] && sp->in_shape[1] == sp->out_shape[1];
    for (int d = 0; d < 4; d++) whole &= sp->start[d] == 0;
    if (!whole) continue;
    int y = n->inputs[0], p = cs_graph_value(g, y)->producer;
    if (p < 0 || cs_match_single_consumer(g, y) != i) continue;
    const cs_node *prod = cs_graph_node(g, p);
    const tidsp_conv2d_params *cp = &prod->k.conv;
    if (prod->dead || prod->op != CS_OP_K_MMALIB_EXACT_REQUANT || prod->n_outputs != 1 || cp->z_h || cp->z_w ||
        cp->z_step_h || cp->z_step_w || cp->n * cp->c_out != sp->in_shape[0] * sp->in_shape[1] ||
        cp->h_out != sp->in_shape[2] || cp->w_out != sp->in_shape[3])
      continue;
    tidsp_conv2d_params q = *cp;
    q.z_h = cp->h_out;
    q.z_w = cp->w_out;
    q.z_step_h = sp->step[2];
    q.z_step_w = sp->step[3];
    q.h_out = sp->out_shape[2];
    q.w_out = sp->out_shape[3];
    q.stride_h = cp->stride_h * sp->step[2];
    q.stride_w = cp->stride_w * sp->step[3];
    cs_graph_node(g, p)->k.conv = q;
    cs_status st = absorb(g, p, i, CS_OP_K_MMALIB_EXACT_REQUANT);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

cs_status pass_fuse_widen_into_producer(cs_graph *g, const cs_target *t) {
  (void)t;
  cs_status st = fold_picks_into_requant(g);
  if (st != CS_OK) return st;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_K_WIDEN_I16 || n->n_inputs != 1 || n->n_outputs != 1) continue;
    int y = n->inputs[0];
    if (y < 0 || !cs_match_widen_is_dense(g, n)) continue; /* rule 1 */
    int p = cs_graph_value(g, y)->producer;
    if (p < 0 || cs_match_single_consumer(g, y) != i) continue;
    const cs_node *prod = cs_graph_node(g, p);
    int32_t zp = n->k.widen.zp;
    if (prod->dead || prod->n_outputs != 1) continue;
    cs_op twin;
    int table = -1;
    if (prod->op == CS_OP_K_MMALIB_EXACT_REQUANT && prod->k.conv.rq.out_zp == zp) {
      twin = CS_OP_K_MMALIB_EXACT_REQUANT_I16;
    } else if (prod->op == CS_OP_K_CHANNEL_AFFINE_I8 && prod->k.channel_affine.y_zp == zp) {
      twin = CS_OP_K_CHANNEL_AFFINE_I16;
    } else if (prod->op == CS_OP_K_LUT_I8 && prod->n_inputs == 2) {
      twin = CS_OP_K_LUT_I16;
      if ((table = table_i16(g, prod, zp)) == -2) continue;
      if (table < 0) return cs_error(CS_ERR_NOMEM, "FuseWidenIntoProducer: out of memory at node '%s'", n->name);
    } else {
      continue;
    }

    if (table >= 0) cs_node_set_input(g, p, LUT_TABLE, table);
    st = absorb(g, p, i, twin);
    if (st != CS_OK) return st;
  }
  return fold_tables_into_requant(g);
}
