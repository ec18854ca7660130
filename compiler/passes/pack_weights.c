/*
 * PackWeights — int8 weight rows padded at compile time into the layout the
 * host's fast kernels load (kernels.h w_row_stride), instead of at inference:
 *
 *   k_conv2d_i8(x, W:i8[c_out][c_in/g][k_h][k_w], b, rq)   (not depthwise)
 *   k_matmul_i8(x, W:i8[n][k], b, rq)
 *     → the same call on W':i8[rows][round_up(K, 64)] (zero tail),
 *       w_row_stride = round_up(K, 64)
 *
 * A row is one output channel's K taps (K = c_in/groups·k_h·k_w, or k), and
 * 64 bytes is one zmm register / AMX tile row, so every row starts aligned
 * (the blob aligns each tensor to 64) and is read as whole vectors.
 *
 * Rules, in order (a declined node is left exactly as it was):
 *   1. the node is k_conv2d_i8 or k_matmul_i8 with dense OIHW rows
 *      (stride 0, w_layout 0);
 *   2. a conv is not depthwise (groups == c_in > 1): depthwise kernels read
 *      one k_h·k_w plane per channel, which padding would only spread out;
 *   3. the weight is an int8 compile-time constant;
 *   4. its element count is rows·K (the parameters describe it);
 *   5. K is not already a multiple of 64 (then dense rows are packed rows).
 *
 * A small-map convolution instead gets the O16 layout (kernels.h
 * TIDSP_CONV_W_O16: 16 output channels × 4 input channels per 64 bytes, in
 * the order the AVX-512 VNNI kernel's channels-in-lanes path streams them,
 * each block of 16 channels followed by their Σw, so that the kernel need
 * not sum 2.4 MB of weights per call for ResNet's layer4; params w_layout
 * = O16, w_row_stride 0), when (o16_wanted):
 *   - output channels per group are a multiple of 16 and input channels
 *     per group of 4 (the layout's shape), w_zp = 0 and the requantization
 *     is not Q31 (the path's: else the call would go to the reference);
 *   - the input grid of one output row fits the path's stack
 *     (tidsp_conv_o16_grid_bytes ≤ TIDSP_CONV_O16_MAX_GRID: the path runs
 *     bands of rows);
 *   - the map has at most O16_MAX_PIXELS outputs (O16_MAX_PIXELS_1X1 for
 *     a 1×1 conv): there a 64-pixel block leaves lanes idle (49 of 64 at
 *     7²) and a weight byte serves few pixels, while the channels-in-lanes
 *     kernel fills every lane and needs no per-block gather at stride 2
 *     (bench/conv_bench, one run: 512→512 3×3 at 7² 0.25 ms against 0.44,
 *     256→256 at 14² 0.26 against 0.32, 128→128 at 28² 0.27 against 0.35,
 *     128→256 s2 from 28² 0.13 against 0.20, 64→128 s2 from 56² 0.14
 *     against 0.20; at 56², where the band path runs, per layer in the
 *     models (-profile-layers=1): ResNet-18's 64→64 0.266 against 0.30 ms,
 *     GoogLeNet's 64→192 0.79 against 0.83; larger maps are not measured).
 *     A 1×1 conv's short reduction pays for the path's input and output
 *     transpositions only on the smallest maps (7²: 320→1280 0.050
 *     against 0.072 ms, 832→384 0.037 against 0.052, 256→512 s2 0.021
 *     against 0.025; 14²: 96→576 0.035 against 0.034). Packed here rather
 *     than per call by the VNNI kernel (which it also does for OIHW ones):
 *     MobileNetV2 pt2e 0.92× (interleave.py, 15 rounds), and on the AVX2
 *     kernels, which read O16 in its own order since d25795f, 1.02×.
 * Never with -mcpu=c7x (where -pack-weights=1 can be forced): its L2 DMA
 * tiling slices a conv's weights by output channel rows (dma_tiling.c).
 * The choice depends only on the node, never on the compiling CPU: the
 * generated code runs on any host, and every variant reads O16 (the AVX2
 * kernel converts the rows per call, the AMX one hands the call to the
 * VNNI kernel, the reference reads it in place).
 *
 * A weight read by several nodes gets one packed copy, shared by every
 * reader this pass packs; other readers (and a graph output) keep the dense
 * original, which the schedule drops from weights.bin once nothing reads it.
 * The target attribute -pack-weights switches this pass in the registry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"

enum {
  PACK_ROW_ALIGN = 64,
  WEIGHT_INPUT = 1,
  O16_MAX_PIXELS = 3136,  /* outputs per channel: ResNet's 7² .. 56² maps */
  O16_MAX_PIXELS_1X1 = 64 /* the same for a 1×1 conv: 7² maps, not 14² */
};

/* 1 when conv node params p get the O16 layout (rules above). */
static int o16_wanted(const tidsp_conv2d_params *p) {
  const int64_t cpg_in = p->c_in / p->groups, cpg_out = p->c_out / p->groups;
  return cpg_out % 16 == 0 && cpg_in % 4 == 0 && p->w_zp == 0 && p->rq.kind != TIDSP_REQUANT_Q31 &&
         (int64_t)p->h_out * p->w_out <=
             ((int64_t)p->k_h * p->k_w > 1 ? O16_MAX_PIXELS : O16_MAX_PIXELS_1X1) && p->h_out > 0 && p->w_out > 0 &&
         tidsp_conv_o16_grid_bytes(p, 1) <= TIDSP_CONV_O16_MAX_GRID;
}

/* Rows and K of a packable node's weight, or 0 when rules 1–2 decline. */
static int packable_geometry(const cs_node *n, int64_t *rows, int64_t *k) {
  if (n->op == CS_OP_K_CONV2D_I8) {
    const tidsp_conv2d_params *p = &n->k.conv;
    if (p->w_row_stride != 0 || p->w_layout != TIDSP_CONV_W_OIHW) return 0;
    if (p->groups == p->c_in && p->c_in > 1) return 0; /* depthwise */
    if (p->groups < 1 || p->c_in % p->groups != 0) return 0;
    *rows = p->c_out;
    *k = (int64_t)(p->c_in / p->groups) * p->k_h * p->k_w;
    return *rows > 0 && *k > 0;
  }
  if (n->op == CS_OP_K_MATMUL_I8) {
    const tidsp_matmul_params *p = &n->k.matmul;
    if (p->w_row_stride != 0) return 0;
    *rows = p->n;
    *k = p->k;
    return *rows > 0 && *k > 0;
  }
  return 0;
}

/* The O16 copy of dense OIHW weight w of conv params p (kernels.h): a new
 * constant "<w>.o16" shaped [c_out/16][16·K + 64] (one row per block of 16
 * channels: its weights, then their Σw as little-endian int32; per-tensor
 * quantization carried over, per-channel entries no longer match the
 * rows). -1 when it cannot be held. */
static int add_o16(cs_graph *g, int w, const tidsp_conv2d_params *p) {
  const int64_t cpg_in = p->c_in / p->groups, T = (int64_t)p->k_h * p->k_w, Q = cpg_in / 4;
  const int64_t K = cpg_in * T, blk = 16 * K + 64;
  int64_t shape[2] = {p->c_out / 16, blk};
  const cs_value *src = cs_graph_value(g, w);
  char name[512];
  snprintf(name, sizeof name, "%s", src->name ? src->name : "weight");
  int id = cs_add_const_named(g, name, "o16", CS_DTYPE_I8, 2, shape, NULL);
  if (id < 0) return -1;
  cs_value *dst = cs_graph_value(g, id);
  src = cs_graph_value(g, w); /* (the value table may have moved) */
  const int8_t *s = src->data;
  int8_t *d = dst->data;
  for (int64_t co = 0; co < p->c_out; co++) {
    uint32_t sum = 0; /* |Σw| ≤ 128·K fits int32 (K ≤ 33025, kernels.h) */
    for (int64_t ci = 0; ci < cpg_in; ci++)
      for (int64_t t = 0; t < T; t++) {
        const int8_t v = s[co * K + ci * T + t];
        d[tidsp_conv_o16_weight_at(K, Q, co, ci, t)] = v;
        sum += (uint32_t)(int32_t)v;
      }
    for (int b = 0; b < 4; b++) d[tidsp_conv_o16_sum_at(K, co) + b] = (int8_t)(uint8_t)(sum >> (8 * b));
  }
  const cs_quant *q = src->quant;
  if (q && q->axis < 0 && cs_value_set_quant(dst, q->axis, q->count, q->scale, q->zero_point) != CS_OK)
    return -1;
  return id;
}

/* The packed copy of dense weight w ([rows][k] bytes): a new constant
 * "<w>.packed" with per-output-channel quantization carried over. -1 when
 * it cannot be held (message recorded). */
static int add_packed(cs_graph *g, int w, int64_t rows, int64_t k, int64_t stride) {
  int64_t shape[2] = {rows, stride};
  const cs_value *src = cs_graph_value(g, w);
  char name[512];
  snprintf(name, sizeof name, "%s", src->name ? src->name : "weight");
  int id = cs_add_const_named(g, name, "packed", CS_DTYPE_I8, 2, shape, NULL); /* zero-filled */
  if (id < 0) return -1;
  cs_value *dst = cs_graph_value(g, id);
  const int8_t *s = src->data;
  int8_t *d = dst->data;
  for (int64_t r = 0; r < rows; r++) memcpy(d + r * stride, s + r * k, (size_t)k);
  const cs_quant *q = src->quant;
  if (q && (q->axis < 0 || (q->axis == 0 && q->count == rows)) &&
      cs_value_set_quant(dst, q->axis, q->count, q->scale, q->zero_point) != CS_OK)
    return -1;
  return id;
}

cs_status pass_pack_weights(cs_graph *g, const cs_target *t) {
  /* the registry decides whether this pass runs; t (NULL in unit tests)
   * only whether O16 may be chosen */
  const int o16_target = !t || t->mcpu != CS_MCPU_C7X;
  int n_src = g->n_values;
  /* packed[w]: the packed copy of dense weight w, -1 if none yet. */
  int *packed = malloc(sizeof(int) * (size_t)(n_src ? n_src : 1));
  int64_t *packed_k = malloc(sizeof(int64_t) * (size_t)(n_src ? n_src : 1));
  /* o16[w]: its O16 copy (readers share it when their params agree on
   * the geometry that fixes the order: o16_p[w]) */
  int *o16 = malloc(sizeof(int) * (size_t)(n_src ? n_src : 1));
  tidsp_conv2d_params *o16_p = malloc(sizeof(*o16_p) * (size_t)(n_src ? n_src : 1));
  cs_status st = CS_OK;
  if (!packed || !packed_k || !o16 || !o16_p) st = cs_error(CS_ERR_NOMEM, "PackWeights: out of memory");
  else
    for (int v = 0; v < n_src; v++) packed[v] = o16[v] = -1;
  int count = st == CS_OK ? g->n_nodes : 0;
  for (int i = 0; i < count; i++) {
    cs_node *n = cs_graph_node(g, i);
    int64_t rows, k;
    if (n->dead || !packable_geometry(n, &rows, &k)) continue;
    if (n->n_inputs <= WEIGHT_INPUT) continue;
    int w = n->inputs[WEIGHT_INPUT];
    if (w < 0 || w >= n_src || !cs_match_is_const(g, w)) continue;
    const cs_value *wv = cs_graph_value(g, w);
    if (wv->dtype != CS_DTYPE_I8 || cs_value_numel(wv) != rows * k) continue;
    if (o16_target && n->op == CS_OP_K_CONV2D_I8 && o16_wanted(&n->k.conv)) {
      const tidsp_conv2d_params *p = &n->k.conv;
      const tidsp_conv2d_params *q = o16[w] >= 0 ? &o16_p[w] : NULL;
      const int same = q && q->c_out == p->c_out && q->c_in / q->groups == p->c_in / p->groups &&
                       q->k_h == p->k_h && q->k_w == p->k_w;
      int id = same ? o16[w] : add_o16(g, w, p);
      if (id < 0) {
        st = CS_ERR_NOMEM; /* message recorded */
        break;
      }
      if (o16[w] < 0) {
        o16[w] = id;
        o16_p[w] = *p;
      }
      cs_node_set_input(g, i, WEIGHT_INPUT, id);
      cs_graph_node(g, i)->k.conv.w_layout = TIDSP_CONV_W_O16;
      continue;
    }
    if (k % PACK_ROW_ALIGN == 0) continue;
    int64_t stride = (k + PACK_ROW_ALIGN - 1) / PACK_ROW_ALIGN * PACK_ROW_ALIGN;
    if (stride > INT32_MAX) continue;
    /* Readers of one weight share its packed copy when they agree on the
     * row length (the element count fixes the rows then too). */
    int id = packed[w] >= 0 && packed_k[w] == k ? packed[w] : add_packed(g, w, rows, k, stride);
    if (id < 0) {
      st = CS_ERR_NOMEM; /* message recorded */
      break;
    }
    if (packed[w] < 0) {
      packed[w] = id;
      packed_k[w] = k;
    }
    cs_node_set_input(g, i, WEIGHT_INPUT, id);
    n = cs_graph_node(g, i);
    if (n->op == CS_OP_K_CONV2D_I8) n->k.conv.w_row_stride = (int32_t)stride;
    else n->k.matmul.w_row_stride = (int32_t)stride;
  }
  free(packed);
  free(packed_k);
  free(o16);
  free(o16_p);
  return st;
}
