/*
 * dma_tiling_h.c — ScheduleC7xDMATiling's first strategy, H-tiling
 * (spec/c-static-lib-backend.txt "C7x DMA Tiling", "How It Works" 1): the
 * output rows of a fused quantized conv are split into tiles so that each
 * tile's input strip, double-buffered, fits the L2 budget, and the
 * weights, the same for every tile, are cached in L2 when they fit beside
 * the strips.
 *
 * Which convs: the spec applies H-tiling to fused quantized convs (post-
 * conv ops fused: requantize, bias, relu, clip, cast) and OC-tiling to
 * standalone ones. Every k_conv2d_i8 has its requant fused, so what tells
 * the two apart here is a fused activation: a ReLU or Clip folded into
 * the conv's output range, as ORT's quantizer folds it (zero point = the
 * lowest code) or the QDQ tail matcher fuses it (out_min/out_max narrower
 * than int8). The spec's standalone conv stack has none, so its tables
 * (test_dma_tiling.py) keep their OC decisions. A conv H declines falls
 * through to OC-tiling (dma_tiling.c).
 *
 * Our layout is NCHW, so a tile is c_in row ranges of the input (one per
 * channel: the generated code copies a strip as one 2D copy of c_in rows,
 * tidsp_dma_copy_2d, as the C7x DMA moves a multi-dimensional block with
 * one descriptor) and c_out row ranges of the output. The kernel writes its
 * output densely, so a tile's rows are computed into an L2 buffer and
 * copied out (one 2D copy on queue 2), double-buffered too: tile i's
 * copy-out overlaps tile i+1's compute. The tile's conv is the layer's conv
 * on the strip: h_in = the strip's rows, pad_top = the padding rows above
 * it (only the first tiles have any), h_out = the tile's rows; rows below
 * the strip are padding or unread. L2 layout: strip A, strip B, output A,
 * output B, weights (each on 128 bytes).
 *
 * An MMALIB conv or depthwise conv (int8, or the exact path's int16) whose
 * input alone exceeds the budget is tiled the same way (l2plan.c; beyond the spec,
 * whose InjectMMALIBDMA leaves such a call in DDR): its geometry from
 * mm_args, elements of 1 or 2 bytes, pad_bottom per tile (cs_h_tile_of),
 * and the strips above the MMALIB guard (l2plan.c) instead of at 0.
 */
#include <stdint.h>
#include <string.h>

#include "schedule.h"

enum { L2_ALIGN = 128 };

static size_t align_up(size_t v) { return (v + L2_ALIGN - 1) / L2_ALIGN * L2_ALIGN; }

cs_h_tile cs_h_tile_of(const tidsp_conv2d_params *p, int tile_rows, int t) {
  cs_h_tile h;
  h.r0 = t * tile_rows;
  h.rows_out = p->h_out - h.r0 < tile_rows ? p->h_out - h.r0 : tile_rows;
  /* the input rows its outputs read: base … last, clipped to the input */
  int64_t base = (int64_t)h.r0 * p->stride_h - p->pad_top;
  int64_t last = (int64_t)(h.r0 + h.rows_out - 1) * p->stride_h - p->pad_top + (int64_t)(p->k_h - 1) * p->dil_h;
  int64_t lo = base < 0 ? 0 : base, hi = last >= p->h_in ? p->h_in - 1 : last;
  h.in_row = (int32_t)lo;
  h.rows_in = hi >= lo ? (int32_t)(hi - lo + 1) : 0;
  h.pad_top = (int32_t)(lo - base);
  h.pad_bottom = (int32_t)(last - hi);
  return h;
}

/* The conv's mm_args as the H plan sees them: where each argument sits
 * (-1: none) in a plain conv's and in a depthwise conv's list. */
enum { A_C, A_H, A_W, A_CO, A_KH, A_KW, A_SH, A_SW, A_PT, A_PB, A_PL, A_PR, A_N };
static const int8_t kConvAt[A_N] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
static const int8_t kDwAt[A_N] = {0, 1, 2, -1, 3, 4, 5, 6, 7, 8, 9, 10};

int cs_h_conv_geom(const cs_graph *g, const cs_node *n, cs_h_geom *h) {
  memset(h, 0, sizeof *h);
  if (n->op == CS_OP_K_CONV2D_I8) {
    h->p = n->k.conv;
    h->in_elem = h->out_elem = 1;
    return 1;
  }
  int dw = n->op == CS_OP_K_MMALIB_DWCONV2D_I8 || n->op == CS_OP_K_MMALIB_DWCONV2D_I16;
  if (!dw && n->op != CS_OP_K_MMALIB_CONV2D_I8 && n->op != CS_OP_K_MMALIB_CONV2D_I16) return 0;
  const int8_t *at = dw ? kDwAt : kConvAt;
  int cnt = 0;
  const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
  if (!a || cnt != 12 || (dw && a[11] != a[0])) return 0; /* depthwise: num_groups = channels */
  int64_t v[A_N];
  for (int i = 0; i < A_N; i++) {
    v[i] = at[i] >= 0 ? a[at[i]] : a[0]; /* a depthwise conv's C_out: its channels */
    if (v[i] < (i < A_PT ? 1 : 0) || v[i] > INT32_MAX) return 0; /* no cropping pads (negative) */
  }
  int64_t hp = v[A_H] + v[A_PT] + v[A_PB] - v[A_KH], wp = v[A_W] + v[A_PL] + v[A_PR] - v[A_KW];
  if (hp < 0 || wp < 0) return 0;
  tidsp_conv2d_params *p = &h->p;
  p->n = 1;
  p->groups = dw ? (int32_t)v[A_C] : 1;
  p->c_in = (int32_t)v[A_C];
  p->h_in = (int32_t)v[A_H];
  p->w_in = (int32_t)v[A_W];
  p->c_out = (int32_t)v[A_CO];
  p->k_h = (int32_t)v[A_KH];
  p->k_w = (int32_t)v[A_KW];
  p->stride_h = (int32_t)v[A_SH];
  p->stride_w = (int32_t)v[A_SW];
  p->pad_top = (int32_t)v[A_PT];
  p->pad_left = (int32_t)v[A_PL];
  p->dil_h = p->dil_w = 1;
  p->h_out = (int32_t)(hp / v[A_SH] + 1);
  p->w_out = (int32_t)(wp / v[A_SW] + 1);
  h->pad_bottom = (int32_t)v[A_PB];
  h->pad_right = (int32_t)v[A_PR];
  h->mmalib = 1;
  h->depthwise = dw;
  h->in_elem = cs_dtype_size(cs_graph_value(g, n->inputs[0])->dtype);
  h->out_elem = cs_dtype_size(cs_graph_value(g, n->outputs[0])->dtype);
  return h->in_elem > 0 && h->out_elem > 0;
}

/* A ReLU or Clip in the conv's output range (see the top). */
static int fused_activation(const tidsp_conv2d_params *p) {
  return p->rq.out_min > -128 || p->rq.out_max < 127 || p->rq.out_zp == p->rq.out_min;
}

/* The largest strip and output tile of tiles of `rows` rows (every tile
 * reads at least one input row, else 0). */
static int tile_bytes(const cs_h_geom *h, int rows, size_t *strip, size_t *out) {
  const tidsp_conv2d_params *p = &h->p;
  int tiles = (p->h_out + rows - 1) / rows;
  int32_t most = 0;
  for (int t = 0; t < tiles; t++) {
    cs_h_tile ht = cs_h_tile_of(p, rows, t);
    if (ht.rows_in < 1) return 0;
    if (ht.rows_in > most) most = ht.rows_in;
  }
  *strip = (size_t)p->c_in * (size_t)most * (size_t)p->w_in * h->in_elem;
  *out = (size_t)p->c_out * (size_t)rows * (size_t)p->w_out * h->out_elem;
  return 1;
}

/* Lay out tiles of `rows` rows from offset `base` with `weights` bytes
 * cached; 1 when it fits. */
static int layout(const cs_h_geom *h, int rows, size_t base, size_t weights, size_t budget, cs_l2_stage *st) {
  size_t strip, out;
  if (!tile_bytes(h, rows, &strip, &out)) return 0;
  size_t b = align_up(base + strip), o = align_up(b + strip), o2 = align_up(o + out), w = align_up(o2 + out);
  if ((weights ? w + weights : o2 + out) > budget) return 0;
  st->input_off = base;
  st->input_off2 = b;
  st->input_bytes = strip;
  st->out_off = o;
  st->out_off2 = o2;
  st->out_bytes = out;
  st->weight_off = weights ? w : 0;
  st->weight_bytes = weights;
  st->tile_rows = rows;
  st->n_chunks = (h->p.h_out + rows - 1) / rows;
  return 1;
}

int cs_schedule_conv_h_tiling(const cs_graph *g, const cs_schedule *s, const cs_node *n, size_t budget,
                              cs_l2_stage *st) {
  cs_h_geom h;
  if (!cs_h_conv_geom(g, n, &h)) return 0;
  const tidsp_conv2d_params *p = &h.p;
  int wv = n->n_inputs > 1 ? n->inputs[1] : -1;
  if (p->n != 1 || p->h_out < 2 || (!h.mmalib && !fused_activation(p))) return 0;
  /* the MMALIB guard below the strips: pad_top rows of the input, at
   * least 128 bytes (l2plan.c) */
  size_t base = h.mmalib ? align_up((size_t)p->pad_top * (size_t)p->w_in * h.in_elem) : 0;
  if (h.mmalib && base < L2_ALIGN) base = L2_ALIGN;
  int cacheable = wv >= 0 && s->loc[cs_schedule_storage_root(s, wv)].kind == CS_LOC_CONST;
  size_t total = wv >= 0 ? cs_value_nbytes(cs_graph_value(g, wv)) : 0;
  /* weights cached if any tiling fits with them, else read from DDR; an
   * MMALIB call only with them cached (its tiles would each read them
   * from DDR again: 6 tiles of a 1.2 MB layer move 7 MB, the call from
   * DDR 2 MB) */
  for (int cache = cacheable; cache >= h.mmalib; cache--) {
    size_t wb = cache ? total : 0;
    int rows = 0;
    for (int r = p->h_out / 2 + (p->h_out % 2); r >= 1 && !rows; r--) {
      cs_l2_stage t = *st;
      if (layout(&h, r, base, wb, budget, &t)) rows = r;
    }
    if (!rows) continue;
    /* the fewest tiles of at most `rows` rows, balanced */
    int tiles = (p->h_out + rows - 1) / rows;
    cs_l2_stage t = *st;
    int balanced = (p->h_out + tiles - 1) / tiles;
    /* fewer rows a tile; the clipping at the edges may still differ */
    if (!layout(&h, balanced, base, wb, budget, &t)) layout(&h, rows, base, wb, budget, &t);
    *st = t;
    st->kind = CS_L2_H_TILED;
    st->input_bytes_total = cs_value_nbytes(cs_graph_value(g, n->inputs[0]));
    st->weight_bytes_total = total;
    st->weight_off2 = 0;
    st->chunk_cout = 0;
    st->mmalib_h = h.mmalib;
    return 1;
  }
  return 0;
}
