/*
 * FoldClampLUT — a table that only clamps disappears into the clamp of the
 * int8 kernel that produces its input:
 *
 *   k_lut_i8(lut, x = P(…)) : y,  lut[q] = min(max(q, lo), hi) for every q
 *                                  in P's output range [out_min, out_max]
 *     → P(…) : y  with [out_min, out_max] = [lo, hi]
 *
 *   P ∈ {k_conv2d_i8, k_mmalib_exact_requant, k_matmul_i8,
 *        k_global_avgpool_i8 (requant params), k_add_i8, k_mul_i8,
 *        k_avgpool_i8 (y_min, y_max)}
 *
 * PT2E exports ReLU6/hardtanh between Q/DQ pairs of one quantization, and
 * FuseQDQToActivationLUT turns each into such a table (a pass over every
 * element of the activation, after the layer that could clamp for free).
 *
 * Exact: each P ends by rounding to an integer and clamping to integer
 * bounds, in either order (rounding is monotone and keeps integers, so the
 * orders agree; a NaN clamps low both ways). Clamping that again to
 * [lo, hi] ⊂ [out_min, out_max] is clamping once to [lo, hi].
 * k_mmalib_exact_requant decides an output from the clamped outputs of
 * the two ends of its accumulator's interval; the output is monotone in
 * the accumulator, so ends that agree after the tighter clamp still fix
 * it (more of them agree: fewer sums again on the core).
 *
 * Rules, in order (a declined LUT is left exactly as it was):
 *   1. the table is an int8 constant of 256 entries;
 *   2. x is produced by one of the kernels P above;
 *   3. the LUT is x's only reader and x is not a graph output (another
 *      reader would see the unclamped values);
 *   4. x and y have the same quantization (y keeps its own, and P's
 *      parameters describe it);
 *   5. on [out_min, out_max] the table is a clamp to [lo, hi] within it.
 * P then writes y itself; x is left without producer or reader.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

enum { LUT_TABLE = 0, LUT_X = 1, LUT_ENTRIES = 256, LUT_OFFSET = 128 };

/* The output bounds of a clamping producer (rule 2), or 0. */
static int clamp_bounds(cs_node *p, int32_t **lo, int32_t **hi) {
  switch (p->op) {
    case CS_OP_K_CONV2D_I8:
    case CS_OP_K_MMALIB_EXACT_REQUANT: *lo = &p->k.conv.rq.out_min, *hi = &p->k.conv.rq.out_max; return 1;
    case CS_OP_K_MATMUL_I8: *lo = &p->k.matmul.rq.out_min, *hi = &p->k.matmul.rq.out_max; return 1;
    case CS_OP_K_GAP_I8: *lo = &p->k.gap.rq.out_min, *hi = &p->k.gap.rq.out_max; return 1;
    case CS_OP_K_ADD_I8: *lo = &p->k.add.y_min, *hi = &p->k.add.y_max; return 1;
    case CS_OP_K_MUL_I8: *lo = &p->k.mul.y_min, *hi = &p->k.mul.y_max; return 1;
    case CS_OP_K_AVGPOOL_I8: *lo = &p->k.avgpool.y_min, *hi = &p->k.avgpool.y_max; return 1;
    default: return 0;
  }
}

static int same_quant(const cs_quant *a, const cs_quant *b) {
  if (!a || !b) return a == b;
  if (a->axis != b->axis || a->count != b->count) return 0;
  for (int i = 0; i < a->count; i++)
    if (a->scale[i] != b->scale[i] || a->zero_point[i] != b->zero_point[i]) return 0;
  return 1;
}

/* Rule 5: on [pmin, pmax] the table equals min(max(q, lo), hi) with
 * pmin ≤ lo ≤ hi ≤ pmax; fills lo and hi. */
static int table_is_clamp(const int8_t *lut, int32_t pmin, int32_t pmax, int32_t *lo, int32_t *hi) {
  if (pmin < -LUT_OFFSET || pmax >= LUT_ENTRIES - LUT_OFFSET || pmin > pmax) return 0;
  *lo = lut[pmin + LUT_OFFSET];
  *hi = lut[pmax + LUT_OFFSET];
  if (*lo < pmin || *hi > pmax || *lo > *hi) return 0;
  for (int32_t q = pmin; q <= pmax; q++) {
    int32_t want = q < *lo ? *lo : q > *hi ? *hi : q;
    if (lut[q + LUT_OFFSET] != want) return 0;
  }
  return 1;
}

cs_status pass_fold_clamp_lut(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *n = cs_graph_node(g, i);
    if (n->dead || n->op != CS_OP_K_LUT_I8 || n->n_inputs != 2 || n->n_outputs != 1) continue;
    const cs_value *table = n->inputs[LUT_TABLE] >= 0 ? cs_graph_value(g, n->inputs[LUT_TABLE]) : NULL;
    if (!table || !table->data || table->dtype != CS_DTYPE_I8 || cs_value_numel(table) != LUT_ENTRIES)
      continue;
    int x = n->inputs[LUT_X], y = n->outputs[0];
    int p = x >= 0 ? cs_graph_value(g, x)->producer : -1;
    if (p < 0) continue;
    cs_node *prod = cs_graph_node(g, p);
    int32_t *pmin, *pmax;
    if (prod->dead || prod->n_outputs != 1 || !clamp_bounds(prod, &pmin, &pmax)) continue;
    if (cs_match_single_consumer(g, x) != i) continue;
    if (!same_quant(cs_graph_value(g, x)->quant, cs_graph_value(g, y)->quant)) continue;
    int32_t lo, hi;
    if (!table_is_clamp(table->data, *pmin, *pmax, &lo, &hi)) continue;

    char *origin = cs_origin_join(g, (int[]){p, i}, 2);
    if (!origin) return cs_error(CS_ERR_NOMEM, "FoldClampLUT: out of memory at node '%s'", n->name);
    cs_graph_remove_node(g, i);
    *pmin = lo;
    *pmax = hi;
    prod->outputs[0] = y;
    cs_graph_value(g, y)->producer = p;
    cs_graph_value(g, x)->producer = -1;
    free(prod->origin);
    prod->origin = origin;
  }
  return CS_OK;
}
