/*
 * EliminateQDQMixedMoves — ops that only move values, over dequantized int8
 * tensors of different parameters, run on the codes; each quantize after
 * them becomes a table per channel:
 *
 *   Q( moves( DQ_a(xa), DQ_b(xb), … ) )  →  k_lut_i8_select( moves(xa, xb, …) )
 *
 *   moves: a connected set of Concat, Split, Reshape, Flatten, Squeeze,
 *   Unsqueeze and Transpose nodes whose float data all come from per-tensor
 *   int8 DQs, and whose outputs are read only by each other and by per-tensor
 *   int8 Qs.
 *
 * ShuffleNetV2 as PT2E exports it: each unit concatenates a float half it
 * passes on from the unit before with DQ(its branch), shuffles the channels
 * (Reshape → Transpose → Reshape) and splits them; one half goes to the next
 * unit's Concat as it is, the other through a Q into the branch. Nothing
 * quantizes the Concat, so its inputs keep their own scales and the chain
 * stays float across a whole stage: EliminateQDQTransparent takes a Concat
 * only with equal parameters or a Q right after it.
 *
 * Exact: the moves copy floats, so each element after them is DQ_s(code)
 * for the DQ s it came from, and Q of it is T_s[code], T_s = Q ∘ DQ_s over
 * the 256 codes (computed as the float path computes it, cs_lut_inputs,
 * cs_lut_const_values). Which source each element came from is known at
 * compile time: the moves are run here on a map of source ids (one byte
 * per element). A Q is taken when its input's map varies along axis 1
 * alone (one source per channel: k_lut_i8_select, a table per source and
 * an index per channel); any other Q, or any other reader, and the moves
 * that feed it stay float (declined, so the float path's bytes are kept).
 *
 * ONNX Runtime runs the moves in float between its DQs and Qs; the bytes
 * are the same, there is no arithmetic between.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "quant/quant.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

enum { MAX_SOURCES = 127 }; /* source ids index the tables as int8 */

static int is_move(cs_op op) {
  switch (op) {
    case CS_OP_CONCAT: case CS_OP_SPLIT: case CS_OP_RESHAPE: case CS_OP_FLATTEN: case CS_OP_SQUEEZE:
    case CS_OP_UNSQUEEZE: case CS_OP_TRANSPOSE:
      return 1;
    default:
      return 0;
  }
}

/* Input i of a move carries data (the rest are shapes, sizes, axes). */
static int is_data_input(const cs_node *n, int i) { return n->op == CS_OP_CONCAT || i == 0; }

typedef struct {
  float scale;
  int32_t zp;
} source;

typedef struct {
  cs_graph *g;
  int n_nodes, n_values;
  char *member;   /* per node: in the set of moves */
  char *refused;  /* per node: a Q whose input's map is not per channel */
  int *source_of; /* per value: the source id of a DQ output a move reads, or -1 */
  source src[MAX_SOURCES];
  int n_src;
  uint8_t **map; /* per value: the source id of each element */
} state;

/* The per-tensor int8 Q that node c is, reading v: 1, else 0. */
static int q_reader(state *s, int c, int v) {
  cs_node *q = cs_graph_node(s->g, c);
  if (q->op != CS_OP_QUANTIZE_LINEAR || q->inputs[0] != v || s->refused[c]) return 0;
  if (cs_graph_value(s->g, q->outputs[0])->dtype != CS_DTYPE_I8) return 0;
  cs_qparams qp;
  if (cs_qparams_read(s->g, q, &qp) != CS_OK) {
    cs_error_clear();
    return 0;
  }
  int ok = cs_qparams_per_tensor(&qp);
  cs_qparams_free(&qp);
  return ok;
}

/* v is a DQ output of a per-tensor int8 tensor (a source) or a member's. */
static int data_ok(state *s, int v) {
  if (v < 0) return 0;
  int p = cs_graph_value(s->g, v)->producer;
  if (p >= 0 && s->member[p]) return 1;
  cs_qparams qp;
  if (cs_match_dq_as(s->g, v, CS_DTYPE_I8, &qp) < 0) return 0;
  cs_qparams_free(&qp);
  return 1;
}

static int member_ok(state *s, int id) {
  cs_node *n = cs_graph_node(s->g, id);
  for (int i = 0; i < n->n_inputs; i++) {
    if (is_data_input(n, i) ? !data_ok(s, n->inputs[i]) : n->inputs[i] >= 0 && !cs_match_is_const(s->g, n->inputs[i]))
      return 0;
  }
  for (int o = 0; o < n->n_outputs; o++) {
    int v = n->outputs[o];
    if (v < 0) continue;
    if (cs_graph_is_output(s->g, v)) return 0;
    int readers[64], k = cs_graph_consumers(s->g, v, readers, 64);
    if (k > 64) return 0;
    for (int j = 0; j < k; j++)
      if (!s->member[readers[j]] && !q_reader(s, readers[j], v)) return 0;
  }
  return 1;
}

/* The set of moves: every candidate, then those whose inputs or readers are
 * not allowed removed until none is (sweeps down and up the order: a
 * removal travels to the readers in one, to the producers in the other). */
static void find_members(state *s, const int *order, int count) {
  for (int k = 0; k < count; k++) {
    cs_node *n = cs_graph_node(s->g, order[k]);
    int ok = !n->dead && is_move(n->op) && n->n_outputs >= 1 && n->n_inputs >= 1;
    for (int o = 0; ok && o < n->n_outputs; o++)
      ok = n->outputs[o] >= 0 && cs_graph_value(s->g, n->outputs[o])->dtype == CS_DTYPE_F32;
    s->member[order[k]] = (char)ok;
  }
  for (int changed = 1; changed;) {
    changed = 0;
    for (int j = 0; j < 2 * count; j++) {
      int id = order[j < count ? j : 2 * count - 1 - j];
      if (s->member[id] && !member_ok(s, id)) s->member[id] = 0, changed = 1;
    }
  }
}

/* The source id of DQ output v (added when new): its index, or -1 when
 * there are more than MAX_SOURCES. */
static int source_id(state *s, int v) {
  cs_qparams qp;
  if (cs_match_dq_as(s->g, v, CS_DTYPE_I8, &qp) < 0) return -1;
  source here = {qp.scale[0], qp.zp[0]};
  cs_qparams_free(&qp);
  for (int i = 0; i < s->n_src; i++)
    if (!memcmp(&s->src[i].scale, &here.scale, sizeof here.scale) && s->src[i].zp == here.zp) return i;
  if (s->n_src == MAX_SOURCES) return -1;
  s->src[s->n_src] = here;
  return s->n_src++;
}

/* ---- the moves, run on the maps -------------------------------------- */

static int64_t span(const cs_value *v, int from, int to) {
  int64_t p = 1;
  for (int d = from; d < to; d++) p *= v->shape[d];
  return p;
}

static void move_transpose(const cs_node *n, const cs_value *x, const cs_value *y, const uint8_t *in, uint8_t *out) {
  int rank = x->rank, perm[CS_MAX_RANK], cnt = 0;
  const int64_t *p = cs_node_attr_ints(n, "perm", &cnt);
  for (int d = 0; d < rank; d++) perm[d] = p && cnt == rank ? (int)p[d] : rank - 1 - d;
  int64_t xstride[CS_MAX_RANK], idx[CS_MAX_RANK] = {0}, numel = cs_value_numel(y), st = 1;
  for (int d = rank - 1; d >= 0; d--) {
    xstride[d] = st;
    st *= x->shape[d];
  }
  for (int64_t i = 0; i < numel; i++) {
    int64_t at = 0;
    for (int d = 0; d < rank; d++) at += idx[d] * xstride[perm[d]];
    out[i] = in[at];
    for (int d = rank - 1; d >= 0 && ++idx[d] == y->shape[d]; d--) idx[d] = 0;
  }
}

/* Concat (many in, one out) and Split (one in, many out) along axis: runs of
 * each part's axis·inner elements, interleaved per outer index. CS_OK, or
 * an internal error when the parts' shapes do not tile the whole along the
 * axis (shape inference guarantees they do: never a copy past a map). */
static cs_status move_parts(cs_graph *g, const cs_node *n, uint8_t **map) {
  int split = n->op == CS_OP_SPLIT;
  const cs_value *whole = cs_graph_value(g, split ? n->inputs[0] : n->outputs[0]);
  int axis = (int)cs_node_attr_int(n, "axis", split ? 0 : 1);
  if (axis < 0) axis += whole->rank;
  int parts = split ? n->n_outputs : n->n_inputs;
  int64_t outer = axis >= 0 && axis < whole->rank ? span(whole, 0, axis) : -1, at = 0, sum = 0;
  int64_t row = outer >= 0 ? span(whole, axis, whole->rank) : -1;
  for (int j = 0; j < parts && outer >= 0; j++) {
    int v = split ? n->outputs[j] : n->inputs[j];
    const cs_value *part = v >= 0 ? cs_graph_value(g, v) : NULL;
    if (!part || part->rank != whole->rank || span(part, 0, axis) != outer) outer = -1;
    else sum += span(part, axis, part->rank);
  }
  if (outer < 0 || sum != row)
    return cs_error(CS_ERR_INTERNAL, "node '%s' (%s): its parts do not tile axis %d of '%s'", n->name,
                    cs_op_name(n->op), axis, whole->name ? whole->name : "?");
  for (int j = 0; j < parts; j++) {
    int v = split ? n->outputs[j] : n->inputs[j];
    const cs_value *part = cs_graph_value(g, v);
    int64_t run = span(part, axis, part->rank);
    for (int64_t o = 0; o < outer; o++) {
      if (split) memcpy(map[v] + o * run, map[n->inputs[0]] + o * row + at, (size_t)run);
      else memcpy(map[n->outputs[0]] + o * row + at, map[v] + o * run, (size_t)run);
    }
    at += run;
  }
  return CS_OK;
}

/* The maps of every member's outputs, in topological order. CS_OK, or
 * CS_ERR_NOMEM / CS_ERR_INTERNAL (message recorded); a set with too many
 * sources is emptied. */
static cs_status run_maps(state *s, const int *order, int count) {
  for (int k = 0; k < count; k++) {
    int id = order[k];
    if (!s->member[id]) continue;
    cs_node *n = cs_graph_node(s->g, id);
    for (int i = 0; i < n->n_inputs; i++) {
      int v = n->inputs[i];
      if (!is_data_input(n, i) || s->map[v]) continue;
      int sid = source_id(s, v);
      if (sid < 0) { /* too many sources to index: leave it all float */
        memset(s->member, 0, (size_t)s->n_nodes);
        return CS_OK;
      }
      const cs_value *xv = cs_graph_value(s->g, v);
      if (!(s->map[v] = malloc((size_t)cs_value_numel(xv) + 1)))
        return cs_error(CS_ERR_NOMEM, "out of memory (node '%s')", n->name);
      memset(s->map[v], sid, (size_t)cs_value_numel(xv));
      s->source_of[v] = sid;
    }
    for (int o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0 &&
          !(s->map[n->outputs[o]] = malloc((size_t)cs_value_numel(cs_graph_value(s->g, n->outputs[o])) + 1)))
        return cs_error(CS_ERR_NOMEM, "out of memory (node '%s')", n->name);
    const cs_value *x = cs_graph_value(s->g, n->inputs[0]), *y = cs_graph_value(s->g, n->outputs[0]);
    if (n->op == CS_OP_CONCAT || n->op == CS_OP_SPLIT) {
      cs_status st = move_parts(s->g, n, s->map);
      if (st != CS_OK) return st;
    } else if (cs_value_numel(x) != cs_value_numel(y) || (n->op == CS_OP_TRANSPOSE && x->rank != y->rank)) {
      return cs_error(CS_ERR_INTERNAL, "node '%s' (%s): '%s' and '%s' differ in size", n->name, cs_op_name(n->op),
                      x->name ? x->name : "?", y->name ? y->name : "?");
    } else if (n->op == CS_OP_TRANSPOSE) {
      move_transpose(n, x, y, s->map[n->inputs[0]], s->map[n->outputs[0]]);
    } else {
      memcpy(s->map[n->outputs[0]], s->map[n->inputs[0]], (size_t)cs_value_numel(y));
    }
  }
  return CS_OK;
}

/* The source of each channel of v (axis 1; one channel when the whole map
 * is one source): 1 and channel_src filled (C entries), else 0. */
static int per_channel(const cs_value *v, const uint8_t *map, int64_t *channels, int64_t *inner,
                       int8_t *channel_src, int64_t cap) {
  int64_t numel = cs_value_numel(v), c_n = v->rank >= 2 ? v->shape[1] : 1;
  int uniform = 1;
  for (int64_t i = 1; i < numel && uniform; i++) uniform = map[i] == map[0];
  if (uniform || v->rank < 2) {
    if (!uniform) return 0;
    *channels = 1;
    *inner = numel > 0 ? numel : 1;
    channel_src[0] = numel > 0 ? (int8_t)map[0] : 0;
    return 1;
  }
  if (c_n > cap) return 0;
  int64_t in = span(v, 2, v->rank), block = c_n * in;
  for (int64_t i = 0; i < numel; i++)
    if (map[i] != map[(i % block) / in * in]) return 0;
  for (int64_t c = 0; c < c_n; c++) channel_src[c] = (int8_t)map[c * in];
  *channels = c_n;
  *inner = in;
  return 1;
}

/* Q node q (reading member output v) → k_lut_i8_select over v's codes. */
static cs_status replace_q(state *s, int q, int v, int64_t channels, int64_t inner, const int8_t *channel_src) {
  cs_graph *g = s->g;
  cs_qparams out;
  cs_status st = cs_qparams_read(g, cs_graph_node(g, q), &out);
  if (st != CS_OK) return st;
  int used[MAX_SOURCES], n_used = 0;
  int8_t *index = malloc((size_t)channels);
  int8_t *luts = malloc((size_t)(s->n_src > 0 ? s->n_src : 1) * 256u);
  if (!index || !luts) st = cs_error(CS_ERR_NOMEM, "out of memory (node '%s')", cs_graph_node(g, q)->name);
  for (int64_t c = 0; st == CS_OK && c < channels; c++) {
    int t = 0;
    while (t < n_used && used[t] != channel_src[c]) t++;
    if (t == n_used) {
      used[n_used++] = channel_src[c];
      cs_qparams in = {.dtype = CS_DTYPE_I8, .axis = -1, .count = 1, .scale = &s->src[channel_src[c]].scale};
      in.zp[0] = s->src[channel_src[c]].zp;
      in.zps = in.zp;
      float x[256];
      int64_t qmin, qmax;
      cs_lut_inputs(&in, x);
      cs_dtype_range(out.dtype, &qmin, &qmax);
      for (int i = 0; i < 256; i++) luts[t * 256 + i] = (int8_t)cs_quantize_one(x[i], out.scale[0], out.zp[0], qmin, qmax);
    }
    index[c] = (int8_t)t;
  }
  char base[512];
  snprintf(base, sizeof base, "%s", cs_graph_node(g, q)->name ? cs_graph_node(g, q)->name : "q");
  int64_t lshape[2] = {n_used, 256};
  int lut_id = st == CS_OK ? cs_add_const_named(g, base, "luts", CS_DTYPE_I8, 2, lshape, luts) : -1;
  int idx_id = lut_id >= 0 ? cs_add_const_named(g, base, "table", CS_DTYPE_I8, 1, &channels, index) : -1;
  free(index);
  free(luts);
  cs_qparams_free(&out);
  if (st != CS_OK) return st;
  if (idx_id < 0) return CS_ERR_NOMEM; /* message recorded */
  int qout = cs_graph_node(g, q)->outputs[0];
  char *origin = cs_origin_join(g, &q, 1);
  if (!origin) return CS_ERR_NOMEM;
  cs_graph_remove_node(g, q);
  int ins[3] = {lut_id, idx_id, v};
  int k = cs_add_kernel(g, CS_OP_K_LUT_I8_SELECT, origin, 3, ins, qout);
  free(origin);
  if (k < 0) return CS_ERR_NOMEM;
  tidsp_lut_select_params p = {(int32_t)cs_value_numel(cs_graph_value(g, v)), (int32_t)channels, (int32_t)inner,
                               n_used};
  cs_graph_node(g, k)->k.lut_select = p;
  return CS_OK;
}

/* Refuse every Q that reads a member output whose map is not per channel;
 * 1 when one was refused (the set must be found again), 0 when none. */
static int refuse_mixed_qs(state *s, int8_t *channel_src, int64_t cap) {
  int refused = 0;
  for (int id = 0; id < s->n_nodes; id++) {
    if (!s->member[id]) continue;
    cs_node *n = cs_graph_node(s->g, id);
    for (int o = 0; o < n->n_outputs; o++) {
      int v = n->outputs[o], readers[64], k = v >= 0 ? cs_graph_consumers(s->g, v, readers, 64) : 0;
      for (int j = 0; j < k && j < 64; j++) {
        int64_t channels, inner;
        if (s->member[readers[j]] || s->refused[readers[j]] ||
            per_channel(cs_graph_value(s->g, v), s->map[v], &channels, &inner, channel_src, cap))
          continue;
        s->refused[readers[j]] = 1; /* each Q once: the loop of the caller ends */
        refused = 1;
      }
    }
  }
  return refused;
}

static cs_status rewrite(state *s, const int *order, int count, int8_t *channel_src, int64_t cap) {
  cs_graph *g = s->g;
  for (int k = 0; k < count; k++) {
    int id = order[k];
    if (!s->member[id]) continue;
    cs_node *n = cs_graph_node(g, id);
    for (int i = 0; i < n->n_inputs; i++)
      if (is_data_input(n, i) && s->source_of[n->inputs[i]] >= 0)
        cs_node_set_input(g, id, i, cs_graph_node(g, cs_graph_value(g, n->inputs[i])->producer)->inputs[0]);
    for (int o = 0; o < cs_graph_node(g, id)->n_outputs; o++) { /* (replace_q adds nodes: n may move) */
      int v = cs_graph_node(g, id)->outputs[o];
      if (v < 0) continue;
      cs_graph_value(g, v)->dtype = CS_DTYPE_I8;
      cs_graph_value(g, v)->from_u8 = cs_graph_value(g, cs_graph_node(g, id)->inputs[0])->from_u8;
      int readers[64], r = cs_graph_consumers(g, v, readers, 64);
      for (int j = 0; j < r && j < 64; j++) {
        if (readers[j] >= s->n_nodes || s->member[readers[j]]) continue;
        int64_t channels, inner;
        per_channel(cs_graph_value(g, v), s->map[v], &channels, &inner, channel_src, cap);
        cs_status st = replace_q(s, readers[j], v, channels, inner, channel_src);
        if (st != CS_OK) return st;
      }
    }
  }
  return CS_OK;
}

static void free_maps(state *s) {
  for (int v = 0; s->map && v < s->n_values; v++) {
    free(s->map[v]);
    s->map[v] = NULL;
  }
  for (int v = 0; s->source_of && v < s->n_values; v++) s->source_of[v] = -1;
  s->n_src = 0;
}

cs_status pass_eliminate_qdq_mixed_moves(cs_graph *g, const cs_target *t) {
  (void)t;
  state s = {g, g->n_nodes, g->n_values, NULL, NULL, NULL, {{0, 0}}, 0, NULL};
  int64_t cap = 1;
  for (int v = 0; v < g->n_values; v++)
    if (cs_graph_value(g, v)->rank >= 2 && cs_graph_value(g, v)->shape[1] > cap) cap = cs_graph_value(g, v)->shape[1];
  int *order = malloc(sizeof *order * (size_t)(s.n_nodes + 1));
  s.member = calloc((size_t)s.n_nodes + 1, 1);
  s.refused = calloc((size_t)s.n_nodes + 1, 1);
  s.source_of = malloc(sizeof *s.source_of * (size_t)(s.n_values + 1));
  s.map = calloc((size_t)s.n_values + 1, sizeof *s.map);
  int8_t *channel_src = malloc((size_t)cap);
  cs_status st = order && s.member && s.refused && s.source_of && s.map && channel_src
                     ? CS_OK
                     : cs_error(CS_ERR_NOMEM, "out of memory");
  int count = st == CS_OK ? cs_graph_topo_order(g, order) : 0;
  if (count < 0) st = count == -2 ? CS_ERR_NOMEM : cs_error(CS_ERR_INTERNAL, "EliminateQDQMixedMoves: a cycle");
  for (int again = 1; st == CS_OK && again;) {
    free_maps(&s);
    find_members(&s, order, count);
    st = run_maps(&s, order, count);
    again = st == CS_OK && refuse_mixed_qs(&s, channel_src, cap);
  }
  if (st == CS_OK) st = rewrite(&s, order, count, channel_src, cap);
  free_maps(&s);
  free(order);
  free(s.member);
  free(s.refused);
  free(s.source_of);
  free(s.map);
  free(channel_src);
  return st;
}
