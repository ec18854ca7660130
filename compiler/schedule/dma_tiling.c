/*
 * dma_tiling.c — ScheduleC7xDMATiling for the convs that are not MMALIB
 * calls (spec/c-static-lib-backend.txt "C7x DMA Tiling"): on -mcpu=c7x,
 * each k_conv2d_i8 either reads DDR untiled or is tiled by output
 * channels (OC), its tiles' weights double-buffered in L2 SRAM so that
 * tile i+1's copy overlaps tile i's compute.
 *
 * The spec's rules, in its order, with the working set = input + weights:
 *   - working set <= half the budget (the other half is the second
 *     buffer): not tiled;
 *   - H-tiling of a conv with a fused activation (dma_tiling_h.c): output
 *     rows split so each tile's input strip, double-buffered, fits;
 *   - OC-tiling: the fewest tiles (at least two, balanced) whose
 *     input + one tile's weights fit half the budget;
 *   - none: the conv reads DDR. The input does not shrink with OC
 *     tiles, so an input over half the budget cannot be OC-tiled.
 * Two departures, both saving L2: the input, the same for every OC tile,
 * is copied once (the spec's example re-copies it per tile), so the L2
 * holds input + 2 weight tiles, not 2 × (input + tile); and the input sits
 * at offset 0 (the MMALIB guard is for the streaming engine of the MMALIB
 * kernels, which the generic conv does not use).
 *
 * Unlike the spec's TVM (which skips PrimFuncs with fused post-conv ops),
 * a fused requant is no obstacle: the kernel takes a channel window (bias
 * + oc, per-channel float multipliers + oc). Declined, reading DDR: batch
 * > 1 (a channel window is then not one block of the output), grouped
 * convs, per-channel q31 or scale/shift requant (their blob is laid out by
 * c_out: no window), weights outside the blob.
 */
#include "schedule.h"

enum { L2_ALIGN = 128 };

static size_t align_up(size_t v) { return (v + L2_ALIGN - 1) / L2_ALIGN * L2_ALIGN; }

static int declined(const cs_schedule *s, const cs_node *n, cs_l2_why *why) {
  const tidsp_conv2d_params *p = &n->k.conv;
  int wv = n->n_inputs > 1 ? n->inputs[1] : -1;
  if (p->n != 1) *why = CS_L2_WHY_BATCH;
  else if (p->groups != 1) *why = CS_L2_WHY_GROUPED;
  else if (p->rq.per_channel && p->rq.kind != TIDSP_REQUANT_FLOAT) *why = CS_L2_WHY_REQUANT;
  else if (wv < 0 || s->loc[cs_schedule_storage_root(s, wv)].kind != CS_LOC_CONST) *why = CS_L2_WHY_NOT_CONST;
  else return 0;
  return 1;
}

void cs_schedule_conv_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                             cs_l2_stage *st) {
  int wv = n->n_inputs > 1 ? n->inputs[1] : -1;
  st->kind = CS_L2_UNTILED;
  st->input_bytes = cs_value_nbytes(cs_graph_value(g, n->inputs[0]));
  st->weight_bytes_total = wv >= 0 ? cs_value_nbytes(cs_graph_value(g, wv)) : 0;
  size_t half = budget / 2;
  if (st->input_bytes + st->weight_bytes_total <= half) {
    st->why = CS_L2_WHY_FITS;
    return;
  }
  if (cs_schedule_conv_h_tiling(g, s, n, budget, st)) return;
  cs_schedule_conv_oc_tiling(g, s, n, budget, st);
}

int cs_schedule_conv_oc_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                               cs_l2_stage *st) {
  const tidsp_conv2d_params *p = &n->k.conv;
  int wv = n->n_inputs > 1 ? n->inputs[1] : -1;
  size_t half = budget / 2;
  st->kind = CS_L2_UNTILED;
  st->input_bytes = cs_value_nbytes(cs_graph_value(g, n->inputs[0]));
  st->weight_bytes_total = wv >= 0 ? cs_value_nbytes(cs_graph_value(g, wv)) : 0;
  if (p->c_out < 2 || declined(s, n, &st->why)) return 0;
  /* one output channel's weight row (packed rows are w_row_stride apart) */
  size_t row = st->weight_bytes_total / (size_t)p->c_out;
  st->why = CS_L2_WHY_INPUT;
  if (row == 0 || st->input_bytes + row > half) return 0;
  size_t most = (half - st->input_bytes) / row; /* channels a tile may hold */
  size_t tiles = ((size_t)p->c_out + most - 1) / most;
  if (tiles < 2) tiles = 2;
  size_t tile = ((size_t)p->c_out + tiles - 1) / tiles;
  size_t w0 = align_up(st->input_bytes), w1 = align_up(w0 + tile * row);
  if (w1 + tile * row > budget) return 0; /* only the 128-byte rounding of a tiny input */
  st->kind = CS_L2_OC_TILED;
  st->input_off = 0;
  st->chunk_cout = (int)tile;
  st->n_chunks = (int)(((size_t)p->c_out + tile - 1) / tile);
  st->weight_bytes = tile * row;
  st->weight_off = w0;
  st->weight_off2 = w1;
  return 1;
}
