/*
 * dma_tiling_n.c — ScheduleC7xDMATiling's third strategy, N-tiling of the
 * weight-only linear layer c7x_dequantize_vecmatmul (spec/c-static-lib-
 * backend.txt "C7x DMA Tiling", "How It Works" 3): its int8 weight matrix
 * W [N][K] is cached in L2 when it fits the budget; beyond the spec, which
 * leaves it "not yet implemented", a W that does not fit is copied nt rows
 * (output columns) at a time, double-buffered: tile i+1's rows are in
 * flight while tile i computes (the pipeline of the OC-tiled conv).
 *
 * A tile is the kernel on nt output columns: weights from row n0, scales
 * from n0, output from column n0 — one call per activation row m (an
 * output row of the tile is not contiguous in out[M][N] when M > 1), each
 * column's float sum the untiled kernel's, in the same k order, so the
 * result is bit-identical. The activations (M·K floats) stay where they
 * are: the weights are the bytes that stream.
 *
 * Declined (reads DDR): weights not in the blob, or one weight row over
 * half the budget (no two tiles of one row fit).
 */
#include "schedule.h"

enum { L2_ALIGN = 128 };

static size_t align_up(size_t v) { return (v + L2_ALIGN - 1) / L2_ALIGN * L2_ALIGN; }

void cs_schedule_n_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                          cs_l2_stage *st) {
  int cnt = 0;
  const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
  int wv = n->n_inputs > 1 ? n->inputs[1] : -1;
  st->kind = CS_L2_UNTILED;
  st->input_bytes = 0; /* the activations are not copied */
  st->input_bytes_total = cs_value_nbytes(cs_graph_value(g, n->inputs[0]));
  st->weight_bytes_total = wv >= 0 ? cs_value_nbytes(cs_graph_value(g, wv)) : 0;
  if (!a || cnt != 3 || a[1] < 1 || a[2] < 1 || wv < 0 ||
      s->loc[cs_schedule_storage_root(s, wv)].kind != CS_LOC_CONST) {
    st->why = CS_L2_WHY_NOT_CONST;
    return;
  }
  size_t K = (size_t)a[1], N = (size_t)a[2];
  st->weight_off = 0;
  if (st->weight_bytes_total <= budget) {
    /* the whole matrix, one copy */
    st->kind = CS_L2_N_TILED;
    st->chunk_cout = (int)N;
    st->n_chunks = 1;
    st->weight_bytes = st->weight_bytes_total;
    st->weight_off2 = 0;
    return;
  }
  /* the most rows whose two buffers fit, then the fewest tiles, balanced */
  size_t most = 0;
  for (size_t r = budget / 2 / K; r >= 1 && !most; r--)
    if (align_up(r * K) + r * K <= budget) most = r;
  st->why = CS_L2_WHY_ROW;
  if (!most) return;
  size_t tiles = (N + most - 1) / most, rows = (N + tiles - 1) / tiles;
  st->kind = CS_L2_N_TILED;
  st->chunk_cout = (int)rows;
  st->n_chunks = (int)tiles;
  st->weight_bytes = rows * K;
  st->weight_off2 = align_up(rows * K);
}
