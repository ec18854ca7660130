/*
 * Storage: where each tensor lives.
 *
 *   constant read by a scheduled or boundary node → the weights blob
 *   cg_main raw input i                           → inputs[i]
 *   cg_main raw output j (written by a step)      → outputs[j]
 *   anything else a step writes                   → the arena (memplan)
 *
 * model_run stages the raw I/O of boundary conversions in the arena too,
 * planned like any tensor (inputs live from step 0, outputs until the
 * epilogue), so one arena size serves both entry points.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

static const char *vname(const cs_graph *g, int v) {
  return cs_graph_value(g, v)->name ? cs_graph_value(g, v)->name : "?";
}

int cs_schedule_storage_root(const cs_schedule *s, int v) {
  while (v >= 0 && s->loc[v].alias_of >= 0) v = s->loc[v].alias_of;
  return v;
}

size_t cs_schedule_view_offset(const cs_schedule *s, int v) {
  size_t off = 0;
  for (; v >= 0 && s->loc[v].alias_of >= 0; v = s->loc[v].alias_of) off += s->loc[v].alias_offset;
  return off;
}

static int add_weight(const cs_graph *g, cs_schedule *s, int v, char *seen) {
  if (v < 0 || !cs_graph_value(g, v)->data || seen[v]) return 0;
  seen[v] = 1;
  s->weights[s->n_weights++] = v;
  return 1;
}

static void collect_weights_of_node(const cs_graph *g, cs_schedule *s, int node, char *seen) {
  const cs_node *n = &g->nodes[node];
  for (int i = 0; i < n->n_inputs; i++) add_weight(g, s, n->inputs[i], seen);
}

/* Constants in first-use order: model_run's input conversions, the steps,
 * model_run's output conversions, the epilogue copies. */
static cs_status place_weights(const cs_graph *g, const cs_schedule_options *opt,
                               cs_schedule *s) {
  s->weights = malloc(((size_t)g->n_values + 1) * sizeof *s->weights);
  char *seen = calloc((size_t)g->n_values + 1, 1);
  if (!s->weights || !seen) {
    free(seen);
    return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  }
  s->n_weights = 0;
  for (int i = 0; i < s->n_inputs; i++)
    if (s->inputs[i].node >= 0) collect_weights_of_node(g, s, s->inputs[i].node, seen);
  for (int k = 0; k < s->n_steps; k++)
    if (!s->node_elided[s->order[k]]) collect_weights_of_node(g, s, s->order[k], seen);
  for (int j = 0; j < s->n_outputs; j++)
    if (s->outputs[j].node >= 0) collect_weights_of_node(g, s, s->outputs[j].node, seen);
  for (int j = 0; j < s->n_outputs; j++)
    if (s->output_copy[j]) add_weight(g, s, s->outputs[j].raw_value, seen);
  free(seen);

  s->weights_align = opt->weights_align;
  size_t off = align_up(opt->weights_base, opt->weights_align);
  for (int i = 0; i < s->n_weights; i++) {
    int v = s->weights[i];
    off = align_up(off, opt->weights_align);
    s->loc[v].kind = CS_LOC_CONST;
    s->loc[v].offset = off;
    off += cs_value_nbytes(cs_graph_value(g, v));
  }
  s->weights_size = off;
  return CS_OK;
}

/* Whether every value placed in root r's block is read for the last time
 * by step k at the latest (so step k may overwrite the whole block). */
static int block_dies_at(const cs_graph *g, const cs_schedule *s, int r, int k) {
  for (int v = 0; v < g->n_values; v++)
    if ((v == r || (s->loc[v].alias_of >= 0 && cs_schedule_storage_root(s, v) == r)) && s->last_use[v] > k)
      return 0;
  return 1;
}

/* k_widen_i16 node n writes x's elements in x's order (one matrix, no
 * padding, no transpose): it may run in place. */
static int widen_dense(const cs_node *n) {
  const tidsp_widen_i16_params *p = &n->k.widen;
  return p->batch == 1 && !p->transpose && p->rows == p->out_rows && p->cols == p->out_cols;
}

/* A value the views may place: written by a step, not a graph input,
 * output or constant, and not a view already. */
static int viewable(const cs_schedule *s, int v) {
  return v >= 0 && s->def_step[v] >= 0 && s->loc[v].kind == CS_LOC_NONE && s->loc[v].alias_of < 0;
}

/* The byte offset of k_slice p's output inside its input when the output
 * is one contiguous range of it (every step 1 where more than one element
 * is taken, every dim after the first cut one whole, every dim before it
 * of extent 1: an image of an NCHW batch, a channel range of one image),
 * else -1. */
static int64_t slice_range(const tidsp_slice_params *p) {
  int64_t stride = p->elem_size, off = 0;
  int whole = 1; /* every dim after d is taken whole */
  for (int d = p->rank - 1; d >= 0; d--) {
    if (p->out_shape[d] < 1 || p->start[d] < 0 || p->start[d] + (int64_t)p->out_shape[d] > p->in_shape[d])
      return -1;
    if (p->out_shape[d] > 1 && (!whole || p->step[d] != 1)) return -1;
    off += (int64_t)p->start[d] * stride;
    if (p->out_shape[d] != p->in_shape[d]) whole = 0;
    stride *= p->in_shape[d];
  }
  return off;
}

/* Copies that need not move bytes, elided and planned as views:
 *
 *   - k_copy of a prefix whose input is an arena tensor that dies at the
 *     copy: the output is the input's first bytes;
 *   - k_slice whose output is a contiguous range of its arena input, at an
 *     offset that keeps the arena's alignment: the output is that range
 *     (the input may be read again: kernels never write their inputs);
 *   - k_concat along an axis with nothing outside it (outer = 1), whose
 *     inputs are arena tensors written by steps and views of nothing, each
 *     at an aligned offset: every input is written straight into its range
 *     of the output (the planner gives the output the inputs' live range);
 *   - and one kernel that runs in place: the exact path's requantization
 *     (k_mmalib_exact_requant, its _i16 and _lut16 twins) writes its output over the
 *     first bytes of z, its int16 input, where z is an arena tensor that
 *     dies there (each output is written after its z entries are read:
 *     cstatic/kernels.h), so z and the output never take room together;
 *     and an int8 → int16 table, channel affine or dense widening
 *     (k_lut_i16, k_channel_affine_i16, k_widen_i16) writes over its
 *     input's block when that block (z's, typically) has room for the
 *     int16 output and dies there (they run from the end).
 *
 * Views never cross kinds: inputs, outputs and constants keep their copies
 * (a graph input's image, a concat into a graph output). */
static void alias_copies(const cs_graph *g, const cs_schedule_options *opt, cs_schedule *s,
                         const uint8_t *no_view) {
  size_t align = opt->arena_align ? opt->arena_align : 1;
  for (int k = 0; k < s->n_steps; k++) {
    int id = s->order[k];
    const cs_node *n = &g->nodes[id];
    if (n->n_outputs != 1 || n->n_inputs < 1) continue;
    int x = n->inputs[0], y = n->outputs[0];
    if (x < 0 || y < 0 || x == y) continue;
    if (n->op == CS_OP_K_MMALIB_EXACT_REQUANT || n->op == CS_OP_K_MMALIB_EXACT_REQUANT_I16 ||
        n->op == CS_OP_K_MMALIB_EXACT_REQUANT_LUT16) {
      if (s->loc[x].kind != CS_LOC_NONE || s->loc[y].kind != CS_LOC_NONE) continue;
      if (s->def_step[x] < 0 || s->last_use[x] != k || s->loc[y].alias_of >= 0) continue;
      if (cs_value_nbytes(cs_graph_value(g, y)) > cs_value_nbytes(cs_graph_value(g, x))) continue;
      s->loc[y].alias_of = x; /* written in place, not elided */
    } else if ((n->op == CS_OP_K_LUT_I16 && n->n_inputs == 2) || n->op == CS_OP_K_CHANNEL_AFFINE_I16 ||
               (n->op == CS_OP_K_WIDEN_I16 && widen_dense(n))) {
      int xi = n->op == CS_OP_K_LUT_I16 ? n->inputs[1] : x; /* the int8 data */
      if (xi < 0 || s->loc[xi].kind != CS_LOC_NONE || s->loc[y].kind != CS_LOC_NONE || s->loc[y].alias_of >= 0)
        continue;
      int r = cs_schedule_storage_root(s, xi);
      if (s->def_step[xi] < 0 || s->loc[r].kind != CS_LOC_NONE || cs_schedule_view_offset(s, xi) != 0) continue;
      if (cs_value_nbytes(cs_graph_value(g, y)) > cs_value_nbytes(cs_graph_value(g, r))) continue;
      if (!block_dies_at(g, s, r, k)) continue;
      s->loc[y].alias_of = xi; /* written in place from the end, not elided */
    } else if (n->op == CS_OP_K_COPY && n->n_inputs == 1) {
      if (s->loc[x].kind != CS_LOC_NONE || s->loc[y].kind != CS_LOC_NONE) continue;
      if (s->def_step[x] < 0 || s->last_use[x] != k) continue;
      size_t ny = cs_value_nbytes(cs_graph_value(g, y));
      if (n->k.copy_bytes != ny || ny > cs_value_nbytes(cs_graph_value(g, x))) continue;
      s->loc[y].alias_of = x;
      s->node_elided[id] = 1;
    } else if (no_view && no_view[id]) {
      continue;
    } else if (n->op == CS_OP_K_SLICE && n->n_inputs == 1) {
      if (s->loc[x].kind != CS_LOC_NONE || s->def_step[x] < 0 || !viewable(s, y)) continue;
      int64_t off = slice_range(&n->k.slice);
      if (off < 0 || (size_t)off % align) continue;
      s->loc[y].alias_of = x;
      s->loc[y].alias_offset = (size_t)off;
      s->node_elided[id] = 1;
    } else if (n->op == CS_OP_K_CONCAT && n->k.concat.outer == 1 && n->k.concat.n_inputs == n->n_inputs) {
      const cs_attr *lens = cs_node_attr(n, "axis_len");
      if (!lens || lens->n != n->n_inputs || !viewable(s, y)) continue;
      int ok = 1;
      size_t off = 0;
      for (int i = 0; i < n->n_inputs && ok; i++) {
        int xi = n->inputs[i];
        ok = viewable(s, xi) && off % align == 0;
        for (int j = 0; j < i && ok; j++) ok = n->inputs[j] != xi;
        off += (size_t)lens->ints[i] * (size_t)n->k.concat.inner_bytes;
      }
      if (!ok || off != cs_value_nbytes(cs_graph_value(g, y))) continue;
      off = 0;
      for (int i = 0; i < n->n_inputs; i++) {
        s->loc[n->inputs[i]].alias_of = y;
        s->loc[n->inputs[i]].alias_offset = off;
        off += (size_t)lens->ints[i] * (size_t)n->k.concat.inner_bytes;
      }
      s->node_elided[id] = 1;
    }
  }
}

/* One storage plan; no_view[id] (NULL: none) set: slice or concat node id
 * stays a copy. A plan whose live bound exceeds `cap` is not placed: its
 * arena_size is then that bound (above cap), and its offsets are not set
 * (the view search's trials, which only compare sizes; SIZE_MAX: place). */
static cs_status storage_plan(const cs_graph *g, const cs_schedule_options *opt, cs_schedule *s,
                              const uint8_t *no_view, size_t cap) {
  int nv = g->n_values;
  s->loc = calloc((size_t)nv + 1, sizeof *s->loc);
  s->input_staging = calloc((size_t)s->n_inputs + 1, sizeof *s->input_staging);
  s->output_staging = calloc((size_t)s->n_outputs + 1, sizeof *s->output_staging);
  if (!s->loc || !s->input_staging || !s->output_staging)
    return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  for (int v = 0; v < nv; v++) s->loc[v].alias_of = -1;

  /* Raw inputs; duplicate boundary quantizes share the first one's tensor. */
  for (int i = 0; i < s->n_inputs; i++) {
    int r = s->inputs[i].raw_value;
    if (cs_graph_value(g, r)->data)
      return cs_error(CS_ERR_INTERNAL, "schedule: graph input '%s' is a constant", vname(g, r));
    if (s->loc[r].kind == CS_LOC_NONE) {
      s->loc[r].kind = CS_LOC_INPUT;
      s->loc[r].index = i;
    }
    if (s->inputs[i].node < 0) continue;
    for (int n = 0; n < g->n_nodes; n++) {
      const cs_node *q = &g->nodes[n];
      if (q->dead || q->op != CS_OP_K_QUANTIZE || q->n_inputs != 3 ||
          q->inputs[2] != s->inputs[i].value || q->outputs[0] == r)
        continue;
      s->loc[q->outputs[0]].alias_of = r;
      s->loc[q->outputs[0]].kind = CS_LOC_INPUT;
      s->loc[q->outputs[0]].index = i;
    }
  }
  /* Raw outputs: written in place when a step writes them, else copied in
   * by the epilogue. */
  for (int j = 0; j < s->n_outputs; j++) {
    int r = s->outputs[j].raw_value;
    if (s->loc[r].kind == CS_LOC_NONE && !cs_graph_value(g, r)->data && s->def_step[r] >= 0) {
      s->loc[r].kind = CS_LOC_OUTPUT;
      s->loc[r].index = j;
    } else {
      if (!cs_graph_value(g, r)->data && s->loc[r].kind == CS_LOC_NONE)
        return cs_error(CS_ERR_INTERNAL, "schedule: graph output '%s' is computed by no node",
                        vname(g, r));
      s->output_copy[j] = 1;
      s->last_use[r] = s->n_steps;
    }
  }
  if (opt->alias_copies) alias_copies(g, opt, s, no_view);

  cs_status st = place_weights(g, opt, s);
  if (st != CS_OK) return st;

  /* Every value a step reads must now have a home or a producer. */
  for (int k = 0; k < s->n_steps; k++) {
    const cs_node *n = &g->nodes[s->order[k]];
    for (int i = 0; i < n->n_inputs; i++) {
      int v = n->inputs[i];
      if (v < 0) continue;
      int root = cs_schedule_storage_root(s, v);
      if (s->loc[root].kind == CS_LOC_NONE && s->def_step[root] < 0)
        return cs_error(CS_ERR_INTERNAL,
                        "schedule: node '%s' reads tensor '%s', which no node computes",
                        n->name ? n->name : "?", vname(g, v));
    }
  }

  /* Arena tensors: one planner tensor per alias root, plus the staging
   * buffers of model_run. */
  int *tensor_of = malloc(((size_t)nv + 1) * sizeof *tensor_of);
  cs_memplan_tensor *t = calloc((size_t)nv + (size_t)s->n_inputs + (size_t)s->n_outputs + 1,
                                sizeof *t);
  size_t *offsets = calloc((size_t)nv + (size_t)s->n_inputs + (size_t)s->n_outputs + 1,
                           sizeof *offsets);
  if (!tensor_of || !t || !offsets) {
    free(tensor_of); free(t); free(offsets);
    return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  }
  int nt = 0;
  for (int v = 0; v < nv; v++) tensor_of[v] = -1;
  for (int v = 0; v < nv; v++) {
    if (s->def_step[v] < 0 || s->loc[v].alias_of >= 0 || s->loc[v].kind != CS_LOC_NONE) continue;
    s->loc[v].kind = CS_LOC_ARENA;
    s->loc[v].pool = CS_POOL_DDR;
    tensor_of[v] = nt;
    t[nt].size = cs_value_nbytes(cs_graph_value(g, v));
    t[nt].first = s->def_step[v];
    t[nt].last = s->last_use[v] > s->def_step[v] ? s->last_use[v] : s->def_step[v];
    t[nt].pool = CS_POOL_DDR;
    nt++;
  }
  /* Fold each alias into its root's range and size: a view ends where its
   * bytes end, and a concat's input is written before the root's step. */
  for (int v = 0; v < nv; v++) {
    if (s->loc[v].alias_of < 0) continue;
    int root = cs_schedule_storage_root(s, v);
    s->loc[v].kind = s->loc[root].kind;
    s->loc[v].index = s->loc[root].index;
    s->loc[v].pool = s->loc[root].pool;
    int ti = tensor_of[root];
    if (ti < 0) continue;
    size_t sz = cs_schedule_view_offset(s, v) + cs_value_nbytes(cs_graph_value(g, v));
    if (sz > t[ti].size) t[ti].size = sz;
    if (s->last_use[v] > t[ti].last) t[ti].last = s->last_use[v];
    if (s->def_step[v] >= 0 && s->def_step[v] < t[ti].first) t[ti].first = s->def_step[v];
  }
  int first_staging = nt;
  for (int i = 0; i < s->n_inputs; i++) {
    if (s->inputs[i].node < 0) continue;
    int r = s->inputs[i].raw_value, last = 0;
    for (int v = 0; v < nv; v++)
      if ((v == r || cs_schedule_storage_root(s, v) == r) && s->last_use[v] > last)
        last = s->last_use[v];
    t[nt++] = (cs_memplan_tensor){cs_value_nbytes(cs_graph_value(g, r)), 0, last, CS_POOL_DDR};
  }
  for (int j = 0; j < s->n_outputs; j++) {
    if (s->outputs[j].node < 0) continue;
    int r = s->outputs[j].raw_value;
    int first = s->output_copy[j] ? s->n_steps : s->def_step[r];
    t[nt++] = (cs_memplan_tensor){cs_value_nbytes(cs_graph_value(g, r)), first, s->n_steps, CS_POOL_DDR};
  }

  size_t pool_size[CS_POOL_COUNT];
  if (cap != SIZE_MAX) {
    size_t bound = cs_memplan_lower_bound(t, nt, CS_POOL_DDR);
    if (bound == SIZE_MAX) st = CS_ERR_NOMEM; /* message recorded */
    if (st == CS_OK && bound > cap) {
      s->arena_size = bound;
      free(tensor_of);
      free(t);
      free(offsets);
      return CS_OK;
    }
  }
  if (st == CS_OK) st = cs_memplan_solve(t, nt, opt->arena_align, offsets, pool_size);
  if (st == CS_OK) {
    for (int v = 0; v < nv; v++) {
      int root = cs_schedule_storage_root(s, v);
      if (s->loc[v].kind == CS_LOC_ARENA && tensor_of[root] >= 0)
        s->loc[v].offset = offsets[tensor_of[root]] + cs_schedule_view_offset(s, v);
    }
    int k = first_staging;
    for (int i = 0; i < s->n_inputs; i++)
      if (s->inputs[i].node >= 0) s->input_staging[i] = offsets[k++];
    for (int j = 0; j < s->n_outputs; j++)
      if (s->outputs[j].node >= 0) s->output_staging[j] = offsets[k++];
    s->arena_size = pool_size[CS_POOL_DDR];
    s->arena_align = opt->arena_align;
    s->live_lower_bound = cs_memplan_lower_bound(t, nt, CS_POOL_DDR);
    if (s->live_lower_bound == SIZE_MAX) st = CS_ERR_NOMEM; /* message recorded */
  }
  free(tensor_of);
  free(t);
  free(offsets);
  return st;
}

/* Forget a storage plan (to plan again). */
static void storage_reset(const cs_graph *g, cs_schedule *s) {
  free(s->loc);
  free(s->input_staging);
  free(s->output_staging);
  free(s->weights);
  s->loc = NULL;
  s->input_staging = s->output_staging = NULL;
  s->weights = NULL;
  s->n_weights = 0;
  for (int i = 0; i < g->n_nodes; i++) s->node_elided[i] = 0;
}

/* A view keeps its whole root alive while any view of it is: a small
 * slice read late, or a concat whose first input is written early, can
 * hold more bytes than the copy it saves. So the plan with every slice and
 * concat view is kept when its arena is no larger than the plan with none
 * (on a tie, the views: fewer calls). Where it is larger, the views are
 * added to the plan with none in runs (pick_views), each run kept while
 * the arena stays no larger than the best so far: the arena is then never
 * above the plan with none's, and a view is a copy only where it grew the
 * arena. That is a plan per run tried (one whose live bound is already
 * larger is not placed), at most MAX_VIEW_PLANS of them (DenseNet-121's 34
 * views take 26); views not tried by then stay copies. */
enum { MAX_VIEW_PLANS = 32 };

static int is_view_node(const cs_graph *g, const cs_schedule *s, int id) {
  cs_op op = g->nodes[id].op;
  return s->node_elided[id] && (op == CS_OP_K_SLICE || op == CS_OP_K_CONCAT);
}

/* Plans again with no_view (cap: storage_plan's). */
static cs_status replan(const cs_graph *g, const cs_schedule_options *opt, cs_schedule *s, const uint8_t *no_view,
                        size_t cap) {
  storage_reset(g, s);
  return storage_plan(g, opt, s, no_view, cap);
}

typedef struct view_search {
  const cs_graph *g;
  const cs_schedule_options *opt;
  cs_schedule *s;
  const int *views; /* the view nodes, in step order */
  uint8_t *no_view; /* the views made copies */
  size_t best;      /* the smallest arena of a plan kept so far */
  int plans;        /* plans made */
} view_search;

/* Views [lo, hi) made views again on top of the kept ones: kept when the
 * arena is no larger than the best so far, else tried again in halves
 * (a single view that grows it stays a copy). */
static cs_status try_views(view_search *v, int lo, int hi) {
  if (lo >= hi || v->plans >= MAX_VIEW_PLANS) return CS_OK;
  for (int i = lo; i < hi; i++) v->no_view[v->views[i]] = 0;
  v->plans++;
  cs_status st = replan(v->g, v->opt, v->s, v->no_view, v->best);
  if (st != CS_OK) return st;
  if (v->s->arena_size <= v->best) {
    v->best = v->s->arena_size;
    return CS_OK;
  }
  for (int i = lo; i < hi; i++) v->no_view[v->views[i]] = 1;
  if (hi - lo == 1) return CS_OK;
  int mid = lo + (hi - lo) / 2;
  if ((st = try_views(v, lo, mid)) != CS_OK) return st;
  return try_views(v, mid, hi);
}

/* no_view where the plan with every view (the nodes `is_view` marks) has
 * a larger arena than the plan with none, `none_size`: starting from none,
 * the two halves of the views tried as runs (try_views; all of them
 * together are what grew the arena). The plan in s is then stale. */
static cs_status pick_views(const cs_graph *g, const cs_schedule_options *opt, cs_schedule *s, const uint8_t *is_view,
                            uint8_t *no_view, size_t none_size) {
  int *views = malloc(sizeof *views * ((size_t)s->n_steps + 1));
  if (!views) return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  int nv = 0;
  for (int k = 0; k < s->n_steps; k++)
    if (is_view[s->order[k]]) no_view[s->order[k]] = 1, views[nv++] = s->order[k];
  view_search v = {g, opt, s, views, no_view, none_size, 0};
  int mid = nv / 2; /* (one view alone: the plan with it is the one known to be larger) */
  cs_status st = nv > 1 ? try_views(&v, 0, mid) : CS_OK;
  if (st == CS_OK && nv > 1) st = try_views(&v, mid, nv);
  free(views);
  return st;
}

cs_status cs_schedule_storage(const cs_graph *g, const cs_schedule_options *opt, cs_schedule *s) {
  cs_status st = storage_plan(g, opt, s, NULL, SIZE_MAX);
  if (st != CS_OK || !opt->alias_copies) return st;
  uint8_t *none = calloc((size_t)g->n_nodes + 1, 1), *no_view = calloc((size_t)g->n_nodes + 1, 1);
  if (!none || !no_view) {
    free(none);
    free(no_view);
    return cs_error(CS_ERR_NOMEM, "schedule: out of memory");
  }
  int n_views = 0;
  for (int k = 0; k < s->n_steps; k++)
    if (is_view_node(g, s, s->order[k])) none[s->order[k]] = 1, n_views++;
  size_t with_views = s->arena_size;
  if (n_views && (st = replan(g, opt, s, none, SIZE_MAX)) == CS_OK) {
    size_t none_size = s->arena_size;
    if (none_size >= with_views) /* every view */
      st = replan(g, opt, s, NULL, SIZE_MAX);
    else if ((st = pick_views(g, opt, s, none, no_view, none_size)) == CS_OK)
      st = replan(g, opt, s, no_view, SIZE_MAX);
  }
  free(none);
  free(no_view);
  return st;
}

cs_status cs_schedule_build(const cs_graph *g, const cs_schedule_options *opt,
                            cs_schedule *s) {
  memset(s, 0, sizeof *s);
  cs_status st = cs_schedule_boundary(g, s);
  if (st == CS_OK) st = cs_schedule_order(g, s);
  if (st == CS_OK) st = cs_schedule_liveness(g, s);
  if (st == CS_OK) st = cs_schedule_storage(g, opt, s);
  if (st == CS_OK && opt->l2_budget > 0) st = cs_schedule_l2(g, opt->l2_budget, s);
  if (st != CS_OK) cs_schedule_free(s);
  return st;
}

void cs_schedule_free(cs_schedule *s) {
  free(s->order);
  free(s->node_step);
  free(s->node_elided);
  free(s->inputs);
  free(s->outputs);
  free(s->output_copy);
  free(s->def_step);
  free(s->last_use);
  free(s->loc);
  free(s->input_staging);
  free(s->output_staging);
  free(s->weights);
  free(s->l2);
  memset(s, 0, sizeof *s);
}
