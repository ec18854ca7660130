/*
 * FuseExactRequantWiden (-mmalib=1): on the exact path one layer's int8
 * output is often read only by the next exact layer's widening
 * (passes/match/mmalib_exact.c): the core kernel writes y, one more core
 * pass reads y and writes y − zp as int16. The core kernel writes that
 * int16 tensor itself instead:
 *
 *   k_mmalib_exact_requant(z, x16, w, grid, mult) : y:i8
 *   k_widen_i16(y) : y16 = y − zp
 *     → k_mmalib_exact_requant_i16(z, x16, w, grid, mult) : y16
 *
 * Exact: the twin computes the same int8 y (the same clamp: a folded
 * clamp table's bounds included, so this runs after FoldClampLUT) and
 * stores y − out_zp, which is what the widening stored. One pass over the
 * tensor and the int8 copy of y go (the arena holds y16 alone).
 *
 * Rules (a declined pair is left as it was):
 *   1. the widening is one dense matrix (batch 1, no padding, no
 *      transpose): its output holds y's elements in y's order;
 *   2. y is produced by k_mmalib_exact_requant and read by the widening
 *      alone (not a graph output);
 *   3. the widening's zero point is the requant's output zero point.
 */
#include <stdlib.h>

#include "pass_list.h"
#include "match/pattern.h"

/* Rule 1: k_widen_i16 node n copies its input element for element. */
static int widen_is_dense(const cs_graph *g, const cs_node *n) {
  const tidsp_widen_i16_params *p = &n->k.widen;
  int64_t numel = cs_value_numel(cs_graph_value(g, n->inputs[0]));
  return p->batch == 1 && !p->transpose && p->rows == p->out_rows && p->cols == p->out_cols &&
         (int64_t)p->rows * p->cols == numel;
}

cs_status pass_fuse_exact_requant_widen(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_K_WIDEN_I16 || n->n_inputs != 1 || n->n_outputs != 1) continue;
    int y = n->inputs[0], y16 = n->outputs[0];
    if (y < 0 || !widen_is_dense(g, n)) continue;
    int p = cs_match_producer(g, y, CS_OP_K_MMALIB_EXACT_REQUANT);
    if (p < 0 || cs_match_single_consumer(g, y) != i) continue;
    cs_node *prod = cs_graph_node(g, p);
    if (prod->n_outputs != 1 || prod->k.conv.rq.out_zp != n->k.widen.zp) continue;

    char *origin = cs_origin_join(g, (int[]){p, i}, 2);
    if (!origin) return cs_error(CS_ERR_NOMEM, "FuseExactRequantWiden: out of memory at node '%s'", n->name);
    cs_graph_remove_node(g, i);
    prod->op = CS_OP_K_MMALIB_EXACT_REQUANT_I16;
    prod->outputs[0] = y16;
    cs_graph_value(g, y16)->producer = p;
    cs_graph_value(g, y)->producer = -1;
    free(prod->origin);
    prod->origin = origin;
  }
  return CS_OK;
}
