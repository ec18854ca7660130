/*
 * l2plan.c — the L2 plan of every step: ScheduleC7xDMATiling's for the
 * generic int8 convs (dma_tiling.c), and InjectMMALIBDMA's (spec/c-static-
 * lib-backend.txt "DMA Injection Pipeline", spec/te-extern-dispatch.txt
 * "Injected TIR Structure"): for each MMALIB call the spec stages, whether its input and
 * weights are copied from DDR into L2 SRAM before the call, and where.
 *
 * Per step, the L2 scratch holds a guard, the input, then the weights (each
 * start rounded up to 128 bytes, the spec's activation alignment). The
 * guard (pad_top · W_in · elem bytes, at least 128) keeps the input off
 * L2's first bytes, where the C7x streaming engine's backward prefetch
 * would underflow. Decisions, in the spec's order:
 *   - guard + input > budget: a plain or depthwise conv (int8, int16) is H-tiled
 *     (dma_tiling_h.c: output rows in tiles whose input strips, double-
 *     buffered, and output rows fit; beyond the spec, whose call then
 *     reads DDR); any other call, or a conv whose one-row tiles do not
 *     fit, reads DDR (no staging at all);
 *   - guard + input + weights ≤ budget: both are staged;
 *   - a plain ungrouped conv (int8, or the exact path's int16): weights
 *     staged by output-channel chunks, one mmalib_conv2d_{i8,i16}_sliced
 *     call per chunk (kernels.def's AUX rows): double-buffered (chunk
 *     i+1 copied while chunk i computes) when two chunks of at least one
 *     MMA tile of channels (64 int8, 32 int16: a chunk fills whole tile
 *     columns) fit, as many as fit rounded down to the tile; else one
 *     buffer of as many channels as fit (whole tiles when one fits);
 *   - otherwise: the input alone.
 * Unlike the spec's check (input ≤ budget), the guard counts against the
 * budget: it is L2 the step really occupies. Bias, scale and shift stay in
 * DDR (the spec stages input and weights only). Steps reuse the same bytes
 * (one call at a time), so the model needs the largest step's footprint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

enum { L2_ALIGN = 128 };

static size_t align_up(size_t v) { return (v + L2_ALIGN - 1) / L2_ALIGN * L2_ALIGN; }

/* The spec's seven staged kernels (not the bias-less matmuls, not the
 * residual adds and pools: those always read DDR). */
static int is_staged_kernel(cs_op op) {
  switch (op) {
    case CS_OP_K_MMALIB_CONV2D_I8:
    case CS_OP_K_MMALIB_CONV2D_I8_GROUPED:
    case CS_OP_K_MMALIB_CONV2D_I16:
    case CS_OP_K_MMALIB_DWCONV2D_I8:
    case CS_OP_K_MMALIB_DWCONV2D_I16:
    case CS_OP_K_MMALIB_FC_I8:
    case CS_OP_K_MMALIB_FC_I16:
      return 1;
    default:
      return 0;
  }
}

static int is_dwconv(cs_op op) { return op == CS_OP_K_MMALIB_DWCONV2D_I8 || op == CS_OP_K_MMALIB_DWCONV2D_I16; }
static int is_fc(cs_op op) { return op == CS_OP_K_MMALIB_FC_I8 || op == CS_OP_K_MMALIB_FC_I16; }

/* pad_top · W_in · elem, at least 128 (FC has no padding: 128). */
static cs_status guard_bytes(const cs_node *n, size_t elem, size_t *out) {
  *out = L2_ALIGN;
  if (is_fc(n->op)) return CS_OK;
  int cnt = 0;
  const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
  int pad_top = is_dwconv(n->op) ? 7 : 8;
  if (!a || cnt < 12)
    return cs_error(CS_ERR_INTERNAL, "L2 planner: node '%s' (%s) has no conv geometry (mm_args)",
                    n->name ? n->name : "?", cs_op_name(n->op));
  size_t g = (size_t)(a[pad_top] > 0 ? a[pad_top] : 0) * (size_t)(a[2] > 0 ? a[2] : 0) * elem;
  if (g > *out) *out = align_up(g);
  return CS_OK;
}

static void plan_step(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                      size_t guard, cs_l2_stage *st) {
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  int wv = n->n_inputs > 1 ? n->inputs[1] : -1;
  st->input_off = guard;
  st->input_bytes = cs_value_nbytes(x);
  st->weight_bytes_total = wv >= 0 ? cs_value_nbytes(cs_graph_value(g, wv)) : 0;
  if (guard + st->input_bytes > budget) {
    /* beyond the spec: a plain or depthwise conv's input in row strips
     * (dma_tiling_h.c) */
    if (!cs_schedule_conv_h_tiling(g, s, n, budget, st)) st->kind = CS_L2_DDR;
    return;
  }
  st->kind = CS_L2_INPUT;
  /* Weights are staged only from the blob (the passes only offload
   * constant weights; anything else is read where it lies). */
  if (wv < 0 || s->loc[cs_schedule_storage_root(s, wv)].kind != CS_LOC_CONST) return;
  size_t woff = align_up(guard + st->input_bytes);
  if (woff + st->weight_bytes_total <= budget) {
    st->kind = CS_L2_INPUT_WEIGHTS;
    st->weight_off = woff;
    st->weight_bytes = st->weight_bytes_total;
    return;
  }
  /* sliced: a kernel with an output-channel-chunk entry in the table */
  const char *sliced_fn = cs_kernel_sliced_fn(n->op);
  if (!sliced_fn || woff >= budget) return;
  const cs_value *w = cs_graph_value(g, wv);
  int64_t c_out = w->rank > 0 ? w->shape[0] : 0;
  if (c_out <= 0) return;
  size_t per_channel = st->weight_bytes_total / (size_t)c_out;
  if (per_channel == 0) return;
  size_t fit = (budget - woff) / per_channel;
  /* the MMA's output channels per tile: 64 bytes of int8 or int16 */
  size_t tile = n->op == CS_OP_K_MMALIB_CONV2D_I16 ? 32 : 64;
  /* two buffers: each chunk's start on 128 bytes */
  size_t fit2 = 0;
  for (size_t c = (budget - woff) / 2 / per_channel / tile * tile; c >= tile && !fit2; c -= tile)
    if (align_up(woff + c * per_channel) + c * per_channel <= budget) fit2 = c;
  if (fit >= tile) fit = fit / tile * tile;
  if (fit2) fit = fit2;
  if (fit < 1) return;
  st->kind = CS_L2_SLICED;
  st->sliced_fn = sliced_fn;
  st->weight_off = woff;
  st->chunk_cout = (int)fit;
  st->n_chunks = (int)((c_out + (int64_t)fit - 1) / (int64_t)fit);
  st->weight_bytes = fit * per_channel;
  if (fit2 && st->n_chunks > 1) st->weight_off2 = align_up(woff + st->weight_bytes);
}

/* The bytes [0, end) a step's plan uses in L2 while it computes (0: none);
 * an output it writes to L2 for the next step is that step's. */
size_t cs_l2_footprint_end(const cs_l2_stage *p) {
  switch (p->kind) {
    case CS_L2_INPUT:
      return p->input_off + p->input_bytes;
    case CS_L2_INPUT_WEIGHTS:
    case CS_L2_SLICED:
    case CS_L2_OC_TILED:
    case CS_L2_N_TILED: {
      size_t a = p->input_off + p->input_bytes, b = p->weight_off + p->weight_bytes;
      size_t c = p->weight_off2 ? p->weight_off2 + p->weight_bytes : 0;
      return a > b ? (a > c ? a : c) : (b > c ? b : c);
    }
    case CS_L2_H_TILED: {
      size_t e = p->out_off2 + p->out_bytes;
      return p->weight_bytes && p->weight_off + p->weight_bytes > e ? p->weight_off + p->weight_bytes : e;
    }
    default:
      return 0;
  }
}

/* Whether step k computes with constant weights (a conv, a matmul): the
 * layers long enough for a prefetch's copy to start and run behind them.
 * The others (adds, pools, activations) are over in microseconds, before
 * a copy issued ahead of them has started. */
static int weighted_step(const cs_graph *g, const cs_schedule *s, int k) {
  const cs_node *n = &g->nodes[s->order[k]];
  return n->n_inputs > 1 && n->inputs[1] >= 0 &&
         s->loc[cs_schedule_storage_root(s, n->inputs[1])].kind == CS_LOC_CONST;
}

/* Whether a step's first weights can be prefetched (plan_prefetch). */
static int prefetchable(const cs_l2_stage *p) {
  return p->kind == CS_L2_INPUT_WEIGHTS || p->kind == CS_L2_OC_TILED || p->kind == CS_L2_N_TILED ||
         (p->kind == CS_L2_H_TILED && p->weight_bytes);
}

/* The lowest offset step p's weights could be prefetched to above a
 * footprint ending at busy: above its other buffers too (plan_prefetch). */
static size_t prefetch_floor(const cs_l2_stage *p, size_t busy) {
  size_t other = p->input_off + p->input_bytes;
  if (p->weight_off2 && p->weight_off2 + p->weight_bytes > other) other = p->weight_off2 + p->weight_bytes;
  if (p->kind == CS_L2_H_TILED) other = p->out_off2 + p->out_bytes; /* strips, then output rows */
  return align_up(busy > other ? busy : other);
}

/* Next-layer prefetch: a step's first weights (INPUT_WEIGHTS, H_TILED
 * with its weights in L2: all of them; OC_TILED, N_TILED: tile 0's) do not depend on the previous step, so they are
 * copied while it computes, on queue 1 (its own waits on queue 0 do not
 * wait for them), into a buffer the previous step does not use: its own
 * place if that lies above the previous step's footprint, else (double-
 * buffered tiles) its second buffer if that one does, else moved above
 * both steps' footprints when the budget has room. The input cannot
 * be prefetched: it is the previous step's output. Elided steps compute
 * nothing and are skipped.
 *
 * The copy is issued before the nearest earlier weighted step
 * (weighted_step) when only light steps lie between: issued before an
 * add or a pool, it would run after it, exposed in this step's prologue.
 * Every step from the issuing one on must leave the buffer alone (its
 * footprint below it), none may be prefetched itself (their buffers and
 * queue-1 waits would interleave), and a step issues one prefetch. */
static void plan_prefetch(const cs_graph *g, const cs_schedule *s, size_t budget) {
  int prev = -1;
  for (int k = 0; k < s->n_steps; k++) {
    if (s->node_elided[s->order[k]]) continue;
    cs_l2_stage *p = &s->l2[k];
    if (prev >= 0 && !s->l2[prev].prefetch_next && prefetchable(p)) {
      size_t busy = cs_l2_footprint_end(&s->l2[prev]), off = p->weight_off;
      if (off < busy && p->weight_off2 >= busy) {
        /* a double-buffered step whose second buffer is free: tile 0
         * goes there (the buffers swap roles; the pipeline alternates
         * from whichever holds tile 0), no L2 beyond the step's own */
        p->weight_off = p->weight_off2;
        p->weight_off2 = off;
        off = p->weight_off;
      }
      if (off < busy) off = prefetch_floor(p, busy); /* above the previous step's footprint and this
                                                         step's other buffers */
      /* a step writing its output into L2 (dma_tiling_resident.c) keeps
       * its buffers under it */
      if (off + p->weight_bytes <= (p->out_l2 ? p->out_l2_off : budget)) {
        p->weight_off = off;
        p->prefetch = 1;
        int at = prev;
        while (!weighted_step(g, s, at) && !s->l2[at].prefetch) {
          int j = at - 1;
          while (j >= 0 && s->node_elided[s->order[j]]) j--;
          if (j < 0 || s->l2[j].prefetch_next || cs_l2_footprint_end(&s->l2[j]) > off) break;
          at = j;
        }
        s->l2[at].prefetch_next = k + 1;
      }
    }
    prev = k;
  }
}

/* Room for the next layer's prefetch: an H-tiled step whose plan fills
 * the L2 so that the next step's first weights fit nowhere beside it
 * (the spec's ReLU'd conv stack: conv1's 3 tiles take 323584 B, conv2's
 * 73728 B of weights would end at 397312) is re-planned one tile longer
 * when that leaves room for them above its footprint: one more strip
 * copy and the halo rows it re-reads, against copying the weights in
 * the next layer's prologue, where nothing hides them. Not for a step
 * that writes its output into L2 (dma_tiling_resident.c placed the next
 * step around it), nor sending its own weights back to DDR. */
static void make_room_for_prefetch(const cs_graph *g, cs_schedule *s, size_t budget) {
  int prev = -1;
  for (int k = 0; k < s->n_steps; k++) {
    if (s->node_elided[s->order[k]]) continue;
    cs_l2_stage *p = &s->l2[k];
    if (prev >= 0 && prefetchable(p) && s->l2[prev].kind == CS_L2_H_TILED && !s->l2[prev].out_l2) {
      cs_l2_stage *h = &s->l2[prev];
      size_t busy = cs_l2_footprint_end(h), cap = p->out_l2 ? p->out_l2_off : budget; /* as plan_prefetch */
      int fits = p->weight_off >= busy || (p->weight_off2 && p->weight_off2 >= busy) ||
                 prefetch_floor(p, busy) + p->weight_bytes <= cap;
      size_t limit = cap >= p->weight_bytes ? (cap - p->weight_bytes) / L2_ALIGN * L2_ALIGN : 0;
      cs_l2_stage t = *h;
      if (!fits && prefetch_floor(p, 0) <= limit &&
          cs_schedule_conv_h_tiling(g, s, &g->nodes[s->order[prev]], limit, &t) && t.n_chunks <= h->n_chunks + 1 &&
          (t.weight_bytes || !h->weight_bytes) && prefetch_floor(p, cs_l2_footprint_end(&t)) + p->weight_bytes <= cap)
        *h = t;
    }
    prev = k;
  }
}

cs_status cs_schedule_l2(const cs_graph *g, size_t budget, cs_schedule *s) {
  free(s->l2);
  s->l2 = calloc((size_t)(s->n_steps > 0 ? s->n_steps : 1), sizeof *s->l2);
  if (!s->l2) return cs_error(CS_ERR_NOMEM, "L2 planner: out of memory");
  s->l2_budget = budget;
  s->l2_size = 0;
  for (int k = 0; k < s->n_steps; k++) {
    const cs_node *n = &g->nodes[s->order[k]];
    if (s->node_elided[s->order[k]] || n->n_inputs < 1) continue;
    cs_l2_stage *p = &s->l2[k];
    if (n->op == CS_OP_K_CONV2D_I8) {
      cs_schedule_conv_tiling(g, s, n, budget, p);
    } else if (n->op == CS_OP_K_DEQUANT_VECMATMUL) {
      cs_schedule_n_tiling(g, s, n, budget, p);
    } else {
      if (!is_staged_kernel(n->op)) continue;
      size_t guard;
      cs_status st = guard_bytes(n, cs_dtype_size(cs_graph_value(g, n->inputs[0])->dtype), &guard);
      if (st != CS_OK) return st;
      plan_step(g, s, n, budget, guard, p);
    }
  }
  cs_schedule_l2_resident(g, s, budget);
  make_room_for_prefetch(g, s, budget);
  plan_prefetch(g, s, budget);
  for (int k = 0; k < s->n_steps; k++) {
    size_t end = cs_l2_footprint_end(&s->l2[k]);
    if (end > s->l2_size) s->l2_size = end;
  }
  /* on 128 bytes when the budget has room: every footprint is within the
   * budget, and so is what the model asks for (MODEL_L2_SIZE) */
  if (align_up(s->l2_size) <= budget) s->l2_size = align_up(s->l2_size);
  return CS_OK;
}

static void describe_untiled(const cs_l2_stage *st, size_t budget, char *buf, size_t size) {
  static const char *const kWhy[] = {
      [CS_L2_WHY_BATCH] = "batch > 1",
      [CS_L2_WHY_GROUPED] = "grouped conv",
      [CS_L2_WHY_REQUANT] = "per-channel requant without a channel window",
      [CS_L2_WHY_NOT_CONST] = "weights not constant",
      [CS_L2_WHY_ROW] = "",
  };
  size_t ws = st->input_bytes + st->weight_bytes_total;
  if (st->why == CS_L2_WHY_FITS)
    snprintf(buf, size, "not tiled: input %zu B + weights %zu B <= half the L2 budget %zu B", st->input_bytes,
             st->weight_bytes_total, budget / 2);
  else if (st->why == CS_L2_WHY_ROW)
    snprintf(buf, size, "not tiled, reads DDR: weights %zu B > the L2 budget %zu B, and one weight row's two "
             "buffers do not fit it", st->weight_bytes_total, budget);
  else if (st->why == CS_L2_WHY_INPUT)
    snprintf(buf, size,
             "not tiled, reads DDR: input %zu B + one output channel's weights > half the L2 budget %zu B "
             "(OC tiles share the input)",
             st->input_bytes, budget / 2);
  else
    snprintf(buf, size, "not tiled, reads DDR: input %zu B + weights %zu B = %zu B > half the L2 budget %zu B, %s",
             st->input_bytes, st->weight_bytes_total, ws, budget / 2, kWhy[st->why]);
}

void cs_l2_stage_describe(const cs_l2_stage *st, size_t budget, char *buf, size_t size) {
  switch (st->kind) {
    case CS_L2_NONE:
      snprintf(buf, size, "not staged");
      break;
    case CS_L2_DDR:
      snprintf(buf, size, "DDR: guard %zu B + input %zu B > L2 budget %zu B", st->input_off,
               st->input_bytes, budget);
      break;
    case CS_L2_INPUT:
      /* weights over what is left of the budget, or not in the blob */
      if (align_up(st->input_off + st->input_bytes) + st->weight_bytes_total > budget)
        snprintf(buf, size, "input %zu B in L2; weights %zu B read from DDR (> L2 budget %zu B)",
                 st->input_bytes, st->weight_bytes_total, budget);
      else
        snprintf(buf, size, "input %zu B in L2; weights %zu B read from DDR (not constant)",
                 st->input_bytes, st->weight_bytes_total);
      break;
    case CS_L2_INPUT_WEIGHTS:
      snprintf(buf, size, "input %zu B + weights %zu B in L2", st->input_bytes, st->weight_bytes);
      break;
    case CS_L2_SLICED:
      snprintf(buf, size,
               "input %zu B in L2; weights %zu B > L2 budget %zu B: %d chunks of %d output channels "
               "(%zu B) through %s%s",
               st->input_bytes, st->weight_bytes_total, budget, st->n_chunks, st->chunk_cout,
               st->weight_bytes, st->sliced_fn, st->weight_off2 ? ", double-buffered" : "");
      break;
    case CS_L2_UNTILED:
      describe_untiled(st, budget, buf, size);
      break;
    case CS_L2_N_TILED:
      if (st->n_chunks == 1)
        snprintf(buf, size, "N: weights %zu B cached in L2 (activations %zu B read from DDR)", st->weight_bytes,
                 st->input_bytes_total);
      else
        snprintf(buf, size,
                 "N-tiled: weights %zu B > L2 budget %zu B: %d tiles of %d output columns (%zu B), "
                 "double-buffered (activations %zu B read from DDR)",
                 st->weight_bytes_total, budget, st->n_chunks, st->chunk_cout, st->weight_bytes,
                 st->input_bytes_total);
      break;
    case CS_L2_H_TILED:
      if (st->mmalib_h)
        snprintf(buf, size,
                 "H-tiled: guard %zu B + input %zu B > L2 budget %zu B: %d tiles of %d output rows, "
                 "input strips (%zu B) and output rows (%zu B) double-buffered, weights %zu B %s",
                 st->input_off, st->input_bytes_total, budget, st->n_chunks, st->tile_rows, st->input_bytes,
                 st->out_bytes, st->weight_bytes_total, st->weight_bytes ? "in L2" : "read from DDR");
      else
        snprintf(buf, size,
                 "H-tiled: input %zu B + weights %zu B > half the L2 budget %zu B: %d tiles of %d output rows, "
                 "input strips (%zu B) and output rows (%zu B) double-buffered, weights %s",
                 st->input_bytes_total, st->weight_bytes_total, budget / 2, st->n_chunks, st->tile_rows,
                 st->input_bytes, st->out_bytes, st->weight_bytes ? "in L2" : "read from DDR");
      break;
    case CS_L2_OC_TILED:
      snprintf(buf, size,
               "OC-tiled: input %zu B + weights %zu B > half the L2 budget %zu B: input %s, %d tiles of %d "
               "output channels (%zu B), double-buffered",
               st->input_bytes, st->weight_bytes_total, budget / 2,
               st->in_l2 ? "written into L2 by the previous layer (no copy)" : "once", st->n_chunks,
               st->chunk_cout, st->weight_bytes);
      break;
  }
  size_t len = strlen(buf);
  if (st->out_l2 && len < size)
    snprintf(buf + len, size - len, "; output written into L2 at %zu for the next layer", st->out_l2_off);
}
