/*
 * dma_tiling_resident.c — an activation placed in L2 SRAM between two
 * adjacent convs: the producer writes its output into L2 and the next
 * conv, OC-tiled, reads it there as its input, instead of the output
 * going to DDR and the consumer copying it back (as TI's TIDL keeps
 * activations in on-chip memory when they fit).
 *
 * Why: an OC-tiled conv can compute nothing before its whole input is in
 * L2, and its input is the previous layer's output, so that copy is
 * exposed by construction (the spec's conv stack: conv3's 100352 B input,
 * ~40 % of the stack's DMA time). With the activation resident the copy is
 * gone; what the consumer copies is its weight tiles, which the pipeline
 * and the next-layer prefetch (l2plan.c) hide.
 *
 * When: the consumer C is an OC-tiled k_conv2d_i8 (or an H-tiled one
 * that has an OC plan: with its input resident there are no input strips
 * to tile, only its weights; the spec's ReLU'd conv stack's conv3) whose
 * input v is
 *   - written by the step just before C (elided steps aside), a generic
 *     int8 conv that is not tiled or H-tiled: an untiled conv writes its
 *     output pointer, an H-tiled one copies its tiles' rows out to it
 *     (queue 2), whichever address that is;
 *   - an arena tensor read by C alone, as its input 0, with no alias or
 *     view of it (so nothing else ever reads the arena copy, which is no
 *     longer written), not a model input or output;
 *   - and it fits: v at the top of the budget, C's two weight buffers
 *     below it (tile 0's just under v, so that it can be prefetched while
 *     the producer computes), the producer's own buffers below tile 0's.
 *     An H producer whose plan does not leave that room is re-planned on
 *     the smaller budget (more, shorter tiles: bit-identical results),
 *     but not into more than twice its tiles (each tile re-reads the
 *     rows its neighbour reads, and costs a copy in and out: ResNet-18's
 *     conv2d_10 would go from 4 tiles to 14 of one row) nor with its
 *     weights sent back to DDR;
 *     failing that on the room without tile 0's buffer (tile 0 then
 *     copied in C's prologue). A producer that is itself a consumer of a
 *     resident input (its input at the top too) is left alone.
 * The arena slot of v stays allocated (the memory planner runs before the
 * L2 plan); it is simply not used.
 */
#include <stdlib.h>

#include "schedule.h"

enum { L2_ALIGN = 128 };

static size_t align_down(size_t v) { return v / L2_ALIGN * L2_ALIGN; }

/* The previous step that computes (elided steps are views), or -1. */
static int prev_step(const cs_schedule *s, int k) {
  int j = k - 1;
  while (j >= 0 && s->node_elided[s->order[j]]) j--;
  return j;
}

/* Whether v, C's input, can live in L2 from its producer (step p) to C
 * (step k): see the top. aliased[v]: some other value is a view of v. */
static int candidate(const cs_graph *g, const cs_schedule *s, const unsigned char *aliased, int k, int p) {
  const cs_node *c = &g->nodes[s->order[k]], *pn = &g->nodes[s->order[p]];
  int v = c->inputs[0];
  if (v < 0 || s->loc[v].kind != CS_LOC_ARENA || s->loc[v].alias_of >= 0 || aliased[v]) return 0;
  if (s->def_step[v] != p || s->last_use[v] != k) return 0;
  for (int i = 1; i < c->n_inputs; i++)
    if (c->inputs[i] == v) return 0;
  if (pn->op != CS_OP_K_CONV2D_I8 || pn->n_outputs != 1 || pn->outputs[0] != v) return 0;
  const cs_l2_stage *ps = &s->l2[p];
  return (ps->kind == CS_L2_UNTILED || ps->kind == CS_L2_H_TILED) && !ps->in_l2;
}

/* Fit the producer (step p) under `limit` bytes of L2: as planned, or an
 * H plan re-made on that budget. 1 when it fits. */
static int fit_producer(const cs_graph *g, const cs_schedule *s, int p, size_t limit) {
  cs_l2_stage *ps = &s->l2[p];
  if (cs_l2_footprint_end(ps) <= limit) return 1;
  if (ps->kind != CS_L2_H_TILED) return 0;
  cs_l2_stage t = *ps;
  if (!cs_schedule_conv_h_tiling(g, s, &g->nodes[s->order[p]], limit, &t) || cs_l2_footprint_end(&t) > limit ||
      (ps->weight_bytes && !t.weight_bytes) || t.n_chunks > 2 * ps->n_chunks)
    return 0;
  *ps = t;
  return 1;
}

void cs_schedule_l2_resident(const cs_graph *g, cs_schedule *s, size_t budget) {
  unsigned char *aliased = calloc((size_t)g->n_values + 1, 1);
  if (!aliased) return; /* no placement: every plan stays as it is */
  for (int v = 0; v < g->n_values; v++) {
    int r = cs_schedule_storage_root(s, v);
    if (r != v && r >= 0) aliased[r] = 1;
  }
  for (int k = 0; k < s->n_steps; k++) {
    cs_l2_stage c = s->l2[k];
    if ((c.kind != CS_L2_OC_TILED && c.kind != CS_L2_H_TILED) || s->node_elided[s->order[k]] ||
        g->nodes[s->order[k]].op != CS_OP_K_CONV2D_I8) /* an H-tiled MMALIB conv keeps its strips */
      continue;
    int p = prev_step(s, k);
    if (p < 0 || !candidate(g, s, aliased, k, p)) continue;
    /* an H consumer tiles its input into strips; a resident input needs
     * none, so its weights are what gets tiled: its OC plan, if it has one */
    if (c.kind == CS_L2_H_TILED && !cs_schedule_conv_oc_tiling(g, s, &g->nodes[s->order[k]], budget, &c)) continue;
    if (c.input_bytes > budget) continue;
    size_t top = align_down(budget - c.input_bytes);
    /* tile 0's buffer just under v, tile 1's under it */
    if (top < 2 * c.weight_bytes + L2_ALIGN) continue;
    size_t w0 = align_down(top - c.weight_bytes);
    if (w0 < c.weight_bytes + L2_ALIGN) continue;
    size_t w1 = align_down(w0 - c.weight_bytes);
    if (!fit_producer(g, s, p, w0) && !fit_producer(g, s, p, top)) continue;
    c.input_off = top;
    c.weight_off = w0;
    c.weight_off2 = w1;
    c.in_l2 = 1;
    s->l2[k] = c;
    s->l2[p].out_l2 = 1;
    s->l2[p].out_l2_off = top;
  }
  free(aliased);
}
