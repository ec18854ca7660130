/*
 * The schedule (compiler/schedule/schedule.h) on hand-built kernel graphs:
 * the model boundary, storage, copy elision and the weights set, one test
 * per policy.
 */
#include "test_codegen_graphs.h"

#include "schedule/schedule.h"
#include "unit.h"

static const cs_schedule_options opts = {
    .arena_align = 64, .weights_align = 64, .weights_base = 64, .alias_copies = 1};

static int find(const cs_graph *g, cs_op op, int nth) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].op == op && nth-- == 0) return i;
  return -1;
}

static int build(cs_graph *g, cs_schedule *s, const cs_schedule_options *o) {
  cs_status st = cs_schedule_build(g, o ? o : &opts, s);
  CHECK_MSG(st == CS_OK, "schedule: %s", cs_error_message());
  return st == CS_OK;
}

static void boundary_quantize_and_dequantize_run_outside_cg_main(void) {
  cs_graph *g = tg_conv_model(NULL);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    int q = find(g, CS_OP_K_QUANTIZE, 0), dq = find(g, CS_OP_K_DEQUANTIZE, 0);
    CHECK(s.inputs[0].node == q && s.inputs[0].raw_value == g->nodes[q].outputs[0]);
    CHECK(s.outputs[0].node == dq && s.outputs[0].raw_value == g->nodes[dq].inputs[2]);
    CHECK(s.node_step[q] == -1 && s.node_step[dq] == -1);
    CHECK(s.n_steps == 3);
    CHECK(s.loc[s.inputs[0].raw_value].kind == CS_LOC_INPUT);
    CHECK(s.loc[s.outputs[0].raw_value].kind == CS_LOC_OUTPUT);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* x feeds a quantize and a float op: cg_main must take the float x. */
static void input_read_by_another_op_stays_float(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {1, 8};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, sh);
  int xq = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 2, sh);
  int r = cs_graph_add_value(g, "r", CS_DTYPE_F32, 2, sh);
  tg_quantize(g, "q", x, xq, 0.5f, 0);
  int u = tg_node(g, CS_OP_K_UNARY_F32, "relu", "relu", 1, &x, r);
  g->nodes[u].k.unary = (tidsp_unary_f32_params){.n = 8, .op = TIDSP_UNARY_RELU};
  int outs[2] = {xq, r};
  tg_set_io(g, 1, &x, 2, outs);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(s.inputs[0].node == -1 && s.inputs[0].raw_value == x);
    CHECK(s.n_steps == 2);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

static void quantizes_with_different_params_keep_the_float_input(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {1, 8};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, sh);
  int a = cs_graph_add_value(g, "a", CS_DTYPE_I8, 2, sh), b = cs_graph_add_value(g, "b", CS_DTYPE_I8, 2, sh);
  tg_quantize(g, "qa", x, a, 0.5f, 0);
  tg_quantize(g, "qb", x, b, 0.25f, 0);
  int outs[2] = {a, b};
  tg_set_io(g, 1, &x, 2, outs);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(s.inputs[0].node == -1);
    CHECK(s.n_steps == 2);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* Two identical quantizes of x (e.g. a branch duplicated by an export):
 * both are the boundary, the second one's output is the same raw input. */
static void identical_quantizes_share_one_raw_input(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {1, 8};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, sh);
  int a = cs_graph_add_value(g, "a", CS_DTYPE_I8, 2, sh), b = cs_graph_add_value(g, "b", CS_DTYPE_I8, 2, sh);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 2, sh);
  tg_quantize(g, "qa", x, a, 0.5f, 1);
  tg_quantize(g, "qb", x, b, 0.5f, 1);
  int in[2] = {a, b};
  int add = tg_node(g, CS_OP_K_ADD_I8, "add", "add", 2, in, y);
  g->nodes[add].k.add.bc.rank = 1;
  g->nodes[add].k.add.bc.shape[0] = 8;
  tg_set_io(g, 1, &x, 1, &y);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(s.inputs[0].node == find(g, CS_OP_K_QUANTIZE, 0) && s.inputs[0].raw_value == a);
    CHECK(s.n_steps == 1 && s.order[0] == add);
    CHECK(s.loc[b].kind == CS_LOC_INPUT && s.loc[b].index == 0);
    CHECK(cs_schedule_storage_root(&s, b) == a);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

static void per_channel_conversions_stay_inside(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {3, 4};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, sh);
  int xq = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 2, sh);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_F32, 2, sh);
  float scales[3] = {0.5f, 0.25f, 1.0f};
  int32_t zps[3] = {0, 0, 0};
  int64_t c3[1] = {3};
  int in[3] = {cs_graph_add_const(g, "s", CS_DTYPE_F32, 1, c3, scales),
               cs_graph_add_const(g, "z", CS_DTYPE_I32, 1, c3, zps), x};
  int q = tg_node(g, CS_OP_K_QUANTIZE, "q", "q", 3, in, xq);
  g->nodes[q].k.qdq = (tidsp_qdq_params){1, 3, 4, TIDSP_DTYPE_I8};
  int in2[3] = {in[0], in[1], xq};
  int dq = tg_node(g, CS_OP_K_DEQUANTIZE, "dq", "dq", 3, in2, y);
  g->nodes[dq].k.qdq = (tidsp_qdq_params){1, 3, 4, TIDSP_DTYPE_I8};
  tg_set_io(g, 1, &x, 1, &y);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(s.inputs[0].node == -1 && s.outputs[0].node == -1);
    CHECK(s.n_steps == 2);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

static void copy_whose_input_dies_there_becomes_a_view(void) {
  cs_graph *g = tg_conv_model(NULL);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    int c = find(g, CS_OP_K_COPY, 0);
    int x = g->nodes[c].inputs[0], y = g->nodes[c].outputs[0];
    CHECK(s.node_elided[c]);
    CHECK(s.loc[y].kind == CS_LOC_ARENA && s.loc[y].offset == s.loc[x].offset);
    cs_schedule_free(&s);
  }
  cs_schedule_options no_alias = opts;
  no_alias.alias_copies = 0;
  if (build(g, &s, &no_alias)) {
    int c = find(g, CS_OP_K_COPY, 0);
    CHECK(!s.node_elided[c]);
    CHECK(s.loc[g->nodes[c].outputs[0]].offset != s.loc[g->nodes[c].inputs[0]].offset);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* x is copied, and x is read again later: the copy must stay a call. */
static void copy_whose_input_lives_on_stays_a_call(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {1, 64};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_I8, 2, sh);
  int a = cs_graph_add_value(g, "a", CS_DTYPE_I8, 2, sh), b = cs_graph_add_value(g, "b", CS_DTYPE_I8, 2, sh);
  int c2 = cs_graph_add_value(g, "c", CS_DTYPE_I8, 2, sh), y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 2, sh);
  tg_lut(g, "l1", x, a);
  int cp = tg_copy(g, "copy", a, b);
  tg_lut(g, "l2", b, c2);
  int in[2] = {a, c2};
  int add = tg_node(g, CS_OP_K_ADD_I8, "add", "add", 2, in, y);
  g->nodes[add].k.add.bc.rank = 1;
  tg_set_io(g, 1, &x, 1, &y);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(!s.node_elided[cp]);
    CHECK(s.loc[a].offset != s.loc[b].offset);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* An output that cg_main cannot write in place: a graph input passed
 * through, and the same tensor returned twice. */
static void outputs_not_written_in_place_are_copied_at_the_end(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {1, 16};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_I8, 2, sh);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 2, sh);
  tg_lut(g, "lut", x, y);
  int outs[3] = {y, x, y};
  tg_set_io(g, 1, &x, 3, outs);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(!s.output_copy[0] && s.output_copy[1] && s.output_copy[2]);
    CHECK(s.loc[y].kind == CS_LOC_OUTPUT && s.loc[y].index == 0);
    CHECK(s.last_use[x] == s.n_steps); /* read by the epilogue */
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

static void weights_hold_only_constants_read_by_scheduled_nodes(void) {
  cs_graph *g = tg_conv_model(NULL);
  int64_t sh[1] = {1000};
  char junk[1000] = {0};
  int unused = cs_graph_add_const(g, "unused", CS_DTYPE_I8, 1, sh, junk);
  /* A dead node's constants are not weights either. */
  int64_t s16[2] = {1, 256};
  int dead_out = cs_graph_add_value(g, "dead_out", CS_DTYPE_I8, 2, s16);
  int lut = tg_lut(g, "dead_lut", g->nodes[find(g, CS_OP_K_LUT_I8, 0)].outputs[0], dead_out);
  int dead_table = g->nodes[lut].inputs[0];
  cs_graph_remove_node(g, lut);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(s.n_weights == 8);
    CHECK(s.loc[unused].kind == CS_LOC_NONE);
    CHECK(s.loc[dead_table].kind == CS_LOC_NONE);
    size_t end = 64;
    for (int i = 0; i < s.n_weights; i++) {
      int v = s.weights[i];
      CHECK(s.loc[v].kind == CS_LOC_CONST && s.loc[v].offset % 64 == 0 && s.loc[v].offset >= end);
      end = s.loc[v].offset + cs_value_nbytes(cs_graph_value(g, v));
    }
    CHECK(s.weights_size == end);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* Every pair of arena tensors (and model_run staging buffers) alive at
 * the same step lies in disjoint bytes. */
static void arena_tensors_alive_together_never_overlap(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {1, 100};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, sh);
  int v = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 2, sh);
  tg_quantize(g, "q", x, v, 0.1f, 0);
  int skip = v;
  for (int i = 0; i < 12; i++) {
    char name[16];
    snprintf(name, sizeof name, "t%d", i);
    int y = cs_graph_add_value(g, name, CS_DTYPE_I8, 2, sh);
    if (i % 3 == 2) {
      int in[2] = {v, skip};
      int add = tg_node(g, CS_OP_K_ADD_I8, name, name, 2, in, y);
      g->nodes[add].k.add.bc.rank = 1;
      skip = y;
    } else {
      tg_lut(g, name, v, y);
    }
    v = y;
  }
  int out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 2, sh);
  tg_dequantize(g, "dq", v, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    for (int a = 0; a < g->n_values; a++) {
      if (s.loc[a].kind != CS_LOC_ARENA) continue;
      CHECK(s.loc[a].offset % 64 == 0);
      CHECK(s.loc[a].offset + cs_value_nbytes(cs_graph_value(g, a)) <= s.arena_size);
      for (int b = 0; b < a; b++) {
        if (s.loc[b].kind != CS_LOC_ARENA) continue;
        int a_last = s.last_use[a] > s.def_step[a] ? s.last_use[a] : s.def_step[a];
        int b_last = s.last_use[b] > s.def_step[b] ? s.last_use[b] : s.def_step[b];
        if (s.def_step[a] > b_last || s.def_step[b] > a_last) continue;
        size_t ea = s.loc[a].offset + cs_value_nbytes(cs_graph_value(g, a));
        size_t eb = s.loc[b].offset + cs_value_nbytes(cs_graph_value(g, b));
        CHECK_MSG(ea <= s.loc[b].offset || eb <= s.loc[a].offset, "%s and %s overlap",
                  cs_graph_value(g, a)->name, cs_graph_value(g, b)->name);
      }
    }
    /* The input staging buffer is live until its last reader. */
    CHECK(s.input_staging[0] + 100 <= s.arena_size);
    CHECK(s.arena_size <= s.live_lower_bound * 11 / 10 + 64);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}


/* Arena tensors of different storage roots alive at the same step lie in
 * disjoint bytes (views share their root's bytes by design), and every
 * arena tensor lies inside the arena. */
static void check_disjoint(const cs_graph *g, const cs_schedule *s) {
  for (int a = 0; a < g->n_values; a++) {
    if (s->loc[a].kind != CS_LOC_ARENA) continue;
    CHECK(s->loc[a].offset + cs_value_nbytes(cs_graph_value(g, a)) <= s->arena_size);
    for (int b = 0; b < a; b++) {
      if (s->loc[b].kind != CS_LOC_ARENA) continue;
      if (cs_schedule_storage_root(s, a) == cs_schedule_storage_root(s, b)) continue;
      int a_last = s->last_use[a] > s->def_step[a] ? s->last_use[a] : s->def_step[a];
      int b_last = s->last_use[b] > s->def_step[b] ? s->last_use[b] : s->def_step[b];
      if (s->def_step[a] > b_last || s->def_step[b] > a_last) continue;
      size_t ea = s->loc[a].offset + cs_value_nbytes(cs_graph_value(g, a));
      size_t eb = s->loc[b].offset + cs_value_nbytes(cs_graph_value(g, b));
      CHECK_MSG(ea <= s->loc[b].offset || eb <= s->loc[a].offset, "%s and %s overlap",
                cs_graph_value(g, a)->name, cs_graph_value(g, b)->name);
    }
  }
}

/* k_slice of x [rank 2] from (r0, c0) taking rows × cols at column step cs. */
static int tg_slice2(cs_graph *g, const char *name, int x, int y, int r0, int c0, int cstep) {
  const cs_value *xv = cs_graph_value(g, x), *yv = cs_graph_value(g, y);
  int id = tg_node(g, CS_OP_K_SLICE, name, name, 1, &x, y);
  tidsp_slice_params *p = &g->nodes[id].k.slice;
  memset(p, 0, sizeof *p);
  p->rank = 2;
  p->elem_size = 1;
  for (int d = 0; d < 2; d++) {
    p->in_shape[d] = (int32_t)xv->shape[d];
    p->out_shape[d] = (int32_t)yv->shape[d];
    p->step[d] = 1;
  }
  p->start[0] = r0;
  p->start[1] = c0;
  p->step[1] = cstep;
  return id;
}

/* k_concat of n rank-2 tensors along axis `axis`. */
static int tg_concat2(cs_graph *g, const char *name, int n, const int *in, int y, int axis) {
  int id = tg_node(g, CS_OP_K_CONCAT, name, name, n, in, y);
  const cs_value *yv = cs_graph_value(g, y);
  int64_t lens[8];
  for (int i = 0; i < n; i++) lens[i] = cs_graph_value(g, in[i])->shape[axis];
  cs_node_set_attr_ints(&g->nodes[id], "axis_len", n, lens);
  tidsp_concat_params *p = &g->nodes[id].k.concat;
  memset(p, 0, sizeof *p);
  p->n_inputs = n;
  p->outer = axis == 0 ? 1 : (int32_t)yv->shape[0];
  p->inner_bytes = axis == 0 ? (int32_t)yv->shape[1] : 1;
  return id;
}

/* The batch loop's graph: a [2, 64] is split into its two images, each
 * goes through its own layer, and the results are concatenated. Both
 * slices are views at offsets 0 and 64 of a, and both layers write
 * straight into their rows of the concat's output. */
static void images_of_a_batch_and_their_concat_are_views(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {2, 64}, im[2] = {1, 64};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, sh);
  int xq = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 2, sh), a = cs_graph_add_value(g, "a", CS_DTYPE_I8, 2, sh);
  int s0 = cs_graph_add_value(g, "s0", CS_DTYPE_I8, 2, im), s1 = cs_graph_add_value(g, "s1", CS_DTYPE_I8, 2, im);
  int l0 = cs_graph_add_value(g, "l0", CS_DTYPE_I8, 2, im), l1 = cs_graph_add_value(g, "l1", CS_DTYPE_I8, 2, im);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 2, sh), z = cs_graph_add_value(g, "z", CS_DTYPE_I8, 2, sh);
  int out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 2, sh);
  tg_quantize(g, "q", x, xq, 0.1f, 0);
  tg_lut(g, "la", xq, a);
  int sl0 = tg_slice2(g, "slice0", a, s0, 0, 0, 1), sl1 = tg_slice2(g, "slice1", a, s1, 1, 0, 1);
  tg_lut(g, "l0", s0, l0);
  tg_lut(g, "l1", s1, l1);
  int cin[2] = {l0, l1};
  int cat = tg_concat2(g, "cat", 2, cin, y, 0);
  tg_lut(g, "lz", y, z);
  tg_dequantize(g, "dq", z, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(s.node_elided[sl0] && s.node_elided[sl1] && s.node_elided[cat]);
    CHECK(s.loc[s0].kind == CS_LOC_ARENA && s.loc[s0].offset == s.loc[a].offset);
    CHECK(s.loc[s1].offset == s.loc[a].offset + 64 && cs_schedule_view_offset(&s, s1) == 64);
    CHECK(cs_schedule_storage_root(&s, l1) == y && s.loc[l0].offset == s.loc[y].offset &&
          s.loc[l1].offset == s.loc[y].offset + 64);
    /* a lives until its last image is read; y from its first image's layer */
    CHECK(s.loc[y].offset + 128 <= s.arena_size);
    check_disjoint(g, &s);
    CHECK(s.arena_size <= s.live_lower_bound * 11 / 10 + 64);
    cs_schedule_free(&s);
  }
  cs_schedule_options no_alias = opts;
  no_alias.alias_copies = 0;
  if (build(g, &s, &no_alias)) {
    CHECK(!s.node_elided[sl0] && !s.node_elided[sl1] && !s.node_elided[cat]);
    CHECK(s.loc[s1].alias_of < 0 && s.loc[l0].alias_of < 0);
    check_disjoint(g, &s);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* Slices and concats that are not one contiguous range at an aligned
 * offset of arena memory stay calls. */
static void slices_and_concats_that_are_not_contiguous_stay_calls(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[2] = {2, 64}, half[2] = {2, 32}, sh40[2] = {2, 40}, im40[2] = {1, 40}, cat_sh[2] = {2, 128};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, sh);
  int xq = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 2, sh), a = cs_graph_add_value(g, "a", CS_DTYPE_I8, 2, sh);
  int cols = cs_graph_add_value(g, "cols", CS_DTYPE_I8, 2, half); /* [:, 0:32]: rows apart */
  int odd = cs_graph_add_value(g, "odd", CS_DTYPE_I8, 2, half);   /* [:, 1::2] */
  int b = cs_graph_add_value(g, "b", CS_DTYPE_I8, 2, sh40);
  int b0 = cs_graph_add_value(g, "b0", CS_DTYPE_I8, 2, im40), b1 = cs_graph_add_value(g, "b1", CS_DTYPE_I8, 2, im40);
  int wide = cs_graph_add_value(g, "wide", CS_DTYPE_I8, 2, cat_sh); /* axis 1: outer 2 */
  int64_t tw_sh[2] = {4, 32};
  int twice = cs_graph_add_value(g, "twice", CS_DTYPE_I8, 2, tw_sh); /* the same input twice */
  int64_t sh4[2] = {4, 64};
  int with_in = cs_graph_add_value(g, "with_in", CS_DTYPE_I8, 2, sh4); /* xq is a graph input */
  tg_quantize(g, "q", x, xq, 0.1f, 0);
  tg_lut(g, "la", xq, a);
  int s_cols = tg_slice2(g, "s_cols", a, cols, 0, 0, 1);
  int s_odd = tg_slice2(g, "s_odd", a, odd, 0, 1, 2);
  int lb = tg_lut(g, "lb", a, b);
  g->nodes[lb].k.lut.n = 80;
  int s_b0 = tg_slice2(g, "s_b0", b, b0, 0, 0, 1), s_b1 = tg_slice2(g, "s_b1", b, b1, 1, 0, 1);
  int win[2] = {a, a};
  int c_wide = tg_concat2(g, "c_wide", 2, win, wide, 1);
  int two[2] = {cols, cols};
  int c_twice = tg_concat2(g, "c_twice", 2, two, twice, 0);
  int iin[2] = {xq, a};
  int c_in = tg_concat2(g, "c_in", 2, iin, with_in, 0);
  /* read everything once more so that nothing is an output */
  int64_t one[2] = {1, 1};
  int sink_in[8] = {odd, b0, b1, wide, twice, with_in, cols, a};
  int sink = cs_graph_add_value(g, "sink", CS_DTYPE_I8, 2, one);
  int u = tg_node(g, CS_OP_K_CONCAT, "sink", "sink", 8, sink_in, sink); /* a call whatever it is */
  g->nodes[u].k.concat.outer = 2;
  int out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 2, one);
  tg_dequantize(g, "dq", sink, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(!s.node_elided[s_cols] && !s.node_elided[s_odd]);
    CHECK(!s.node_elided[s_b1]); /* image 1 starts at byte 40 (image 0 may be a view) */
    (void)s_b0;
    CHECK(!s.node_elided[c_wide] && !s.node_elided[c_twice] && !s.node_elided[c_in]);
    CHECK(s.loc[cols].alias_of < 0 && s.loc[b1].alias_of < 0 && s.loc[a].alias_of < 0);
    check_disjoint(g, &s);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}


/* x [1, 1024] → q → la → a; sa = a's first 64 bytes (slice node *sl);
 * a → lb → lc → ld → d; y = sa + d [1, 64]: the small slice is read last,
 * so as a view it keeps a alive past its last big reader. *x_in: x. */
static int late_slice_graph(cs_graph *g, int *x_in, int *sl) {
  int64_t big[2] = {1, 1024}, small[2] = {1, 64};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, big);
  int xq = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 2, big), a = cs_graph_add_value(g, "a", CS_DTYPE_I8, 2, big);
  int sa = cs_graph_add_value(g, "sa", CS_DTYPE_I8, 2, small);
  int b = cs_graph_add_value(g, "b", CS_DTYPE_I8, 2, big), c = cs_graph_add_value(g, "c", CS_DTYPE_I8, 2, big);
  int d = cs_graph_add_value(g, "d", CS_DTYPE_I8, 2, big), y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 2, small);
  tg_quantize(g, "q", x, xq, 0.1f, 0);
  tg_lut(g, "la", xq, a);
  *sl = tg_slice2(g, "s", a, sa, 0, 0, 1); /* a's first 64 bytes */
  tg_lut(g, "lb", a, b);                   /* a dies here without the view */
  tg_lut(g, "lc", b, c);
  tg_lut(g, "ld", c, d);
  int in[2] = {sa, d};
  int add = tg_node(g, CS_OP_K_ADD_I8, "add", "add", 2, in, y); /* sa read last */
  g->nodes[add].k.add.bc.rank = 1;
  g->nodes[add].k.add.bc.shape[0] = 64;
  *x_in = x;
  return y;
}

/* A small slice read late would keep its whole root alive as a view: the
 * plan without the view has the smaller arena, and is kept. */
static void a_view_that_grows_the_arena_is_not_taken(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t small[2] = {1, 64};
  int x, sl, y = late_slice_graph(g, &x, &sl);
  int out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 2, small);
  tg_dequantize(g, "dq", y, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    int sa = g->nodes[sl].outputs[0];
    CHECK(!s.node_elided[sl] && s.loc[sa].alias_of < 0);
    CHECK(s.arena_size <= 2 * 1024 + 64 + 64 + 1024); /* the input's staging, two live bigs, sa, out */
    check_disjoint(g, &s);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* The late slice, and a concat at the end whose view costs nothing: views
 * are decided one at a time, so the slice is a copy and the concat stays
 * a view (as a whole, the plan without views would win and drop both). */
static void views_are_decided_one_at_a_time(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t small[2] = {1, 64}, two[2] = {2, 64};
  int x, sl, y = late_slice_graph(g, &x, &sl);
  int e0 = cs_graph_add_value(g, "e0", CS_DTYPE_I8, 2, small), e1 = cs_graph_add_value(g, "e1", CS_DTYPE_I8, 2, small);
  int cat_y = cs_graph_add_value(g, "cat_y", CS_DTYPE_I8, 2, two), f = cs_graph_add_value(g, "f", CS_DTYPE_I8, 2, two);
  int out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 2, two);
  tg_lut(g, "le0", y, e0);
  tg_lut(g, "le1", y, e1);
  int cin[2] = {e0, e1};
  int cat = tg_concat2(g, "cat", 2, cin, cat_y, 0);
  tg_lut(g, "lf", cat_y, f); /* (the boundary's dequantize reads f: cat_y stays an arena tensor) */
  tg_dequantize(g, "dq", f, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(!s.node_elided[sl] && s.loc[g->nodes[sl].outputs[0]].alias_of < 0);
    CHECK(s.node_elided[cat] && cs_schedule_storage_root(&s, e1) == cat_y);
    check_disjoint(g, &s);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* Past sixteen views the views are still decided, not all dropped: the
 * late slice of late_slice_graph (a copy: its view grows the arena), a
 * concat, and 20 stages that each split a tensor in two (two slices), map
 * the halves and join them again (a concat): 62 views. Every stage's
 * views stay views, the arena no larger than the plan with none's. */
static void views_past_sixteen_are_decided_too(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t row[2] = {1, 128}, half[2] = {1, 64};
  int x, sl, y = late_slice_graph(g, &x, &sl);
  int y2 = cs_graph_add_value(g, "y2", CS_DTYPE_I8, 2, half), p = cs_graph_add_value(g, "p", CS_DTYPE_I8, 2, row);
  tg_lut(g, "ly2", y, y2);
  int yy[2] = {y, y2};
  tg_concat2(g, "p", 2, yy, p, 1);
  enum { STAGES = 20 };
  int cats[STAGES], splits[2 * STAGES];
  for (int i = 0; i < STAGES; i++) {
    char n[8][32];
    const char *what[8] = {"h0", "h1", "e0", "e1", "cat", "s0", "s1", "l0"};
    for (int k = 0; k < 8; k++) snprintf(n[k], sizeof n[k], "%s_%d", what[k], i);
    int h0 = cs_graph_add_value(g, n[0], CS_DTYPE_I8, 2, half), h1 = cs_graph_add_value(g, n[1], CS_DTYPE_I8, 2, half);
    int e0 = cs_graph_add_value(g, n[2], CS_DTYPE_I8, 2, half), e1 = cs_graph_add_value(g, n[3], CS_DTYPE_I8, 2, half);
    int cat_y = cs_graph_add_value(g, n[4], CS_DTYPE_I8, 2, row);
    splits[2 * i] = tg_slice2(g, n[5], p, h0, 0, 0, 1);
    splits[2 * i + 1] = tg_slice2(g, n[6], p, h1, 0, 64, 1);
    tg_lut(g, n[2], h0, e0);
    tg_lut(g, n[3], h1, e1);
    int cin[2] = {e0, e1};
    cats[i] = tg_concat2(g, n[4], 2, cin, cat_y, 1);
    p = cat_y;
  }
  int f = cs_graph_add_value(g, "f", CS_DTYPE_I8, 2, row), out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 2, row);
  tg_lut(g, "lf", p, f);
  tg_dequantize(g, "dq", f, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s, none;
  cs_schedule_options no_alias = opts;
  no_alias.alias_copies = 0;
  if (build(g, &none, &no_alias)) {
    if (build(g, &s, NULL)) {
      CHECK(!s.node_elided[sl]);
      int kept = 0;
      for (int i = 0; i < STAGES; i++) kept += s.node_elided[cats[i]] + s.node_elided[splits[2 * i]] +
                                               s.node_elided[splits[2 * i + 1]];
      CHECK_MSG(kept == 3 * STAGES, "%d of %d stage views kept", kept, 3 * STAGES);
      CHECK_MSG(s.arena_size <= none.arena_size, "%zu > %zu", s.arena_size, none.arena_size);
      check_disjoint(g, &s);
      cs_schedule_free(&s);
    }
    cs_schedule_free(&none);
  }
  cs_graph_free(g);
}

/* The constant inputs of a k_mmalib_exact_requant of 4 channels (w, grid,
 * mult; their values do not matter to the schedule). */
static void requant_consts(cs_graph *g, int *w, int *gv, int *mv) {
  int64_t ws[4] = {4, 4, 1, 1}, gs[1] = {17}, ms[1] = {4};
  int8_t w8[16] = {0};
  int64_t grid[17] = {0};
  float mult[4] = {1, 1, 1, 1};
  *w = cs_graph_add_const(g, "w", CS_DTYPE_I8, 4, ws, w8);
  *gv = cs_graph_add_const(g, "grid", CS_DTYPE_I64, 1, gs, grid);
  *mv = cs_graph_add_const(g, "mult", CS_DTYPE_F32, 1, ms, mult);
}

/* The exact path's requantization runs in place: its output takes z's
 * first bytes where z dies at it. Two of them read one z here: the first
 * must not (z lives on), the second does. */
static void exact_requant_writes_over_z_where_z_dies(void) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[4] = {1, 4, 4, 4};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 4, sh);
  int xq = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 4, sh);
  int z = cs_graph_add_value(g, "z", CS_DTYPE_I16, 4, sh), x16 = cs_graph_add_value(g, "x16", CS_DTYPE_I16, 4, sh);
  int y1 = cs_graph_add_value(g, "y1", CS_DTYPE_I8, 4, sh), y2 = cs_graph_add_value(g, "y2", CS_DTYPE_I8, 4, sh);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 4, sh), out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 4, sh);
  int w, gv, mv;
  requant_consts(g, &w, &gv, &mv);
  tg_quantize(g, "q", x, xq, 0.1f, 0);
  tg_node(g, CS_OP_K_WIDEN_I16, "z", "z", 1, &xq, z); /* (stands for the MMA call) */
  tg_node(g, CS_OP_K_WIDEN_I16, "widen", "widen", 1, &xq, x16);
  int in[5] = {z, x16, w, gv, mv};
  int r1 = tg_node(g, CS_OP_K_MMALIB_EXACT_REQUANT, "rq1", "rq1", 5, in, y1);
  int r2 = tg_node(g, CS_OP_K_MMALIB_EXACT_REQUANT, "rq2", "rq2", 5, in, y2);
  int sum[2] = {y1, y2};
  int add = tg_node(g, CS_OP_K_ADD_I8, "add", "add", 2, sum, y);
  g->nodes[add].k.add.bc.rank = 1;
  tg_dequantize(g, "dq", y, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    int first = s.def_step[y1] < s.def_step[y2] ? y1 : y2, second = first == y1 ? y2 : y1;
    CHECK(s.loc[first].alias_of < 0 && s.loc[first].offset != s.loc[z].offset);
    CHECK(s.loc[second].alias_of == z && s.loc[second].offset == s.loc[z].offset);
    CHECK(!s.node_elided[r1] && !s.node_elided[r2]);
    check_disjoint(g, &s);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

/* z (int16) → the exact requant, in place → y8 → an int16 table → y16:
 * the table runs in place too, over z's block, which has y16's bytes and
 * dies there; not where the block lives on (y8_read_later: an add reads
 * y8 after the table). */
static void int16_table_writes_over_the_block_it_reads(int y8_read_later) {
  cs_graph *g = cs_graph_new("g");
  int64_t sh[4] = {1, 4, 4, 4}, ts[1] = {256};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 4, sh), xq = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 4, sh);
  int z = cs_graph_add_value(g, "z", CS_DTYPE_I16, 4, sh), x16 = cs_graph_add_value(g, "x16", CS_DTYPE_I16, 4, sh);
  int y8 = cs_graph_add_value(g, "y8", CS_DTYPE_I8, 4, sh), y16 = cs_graph_add_value(g, "y16", CS_DTYPE_I16, 4, sh);
  int y2 = cs_graph_add_value(g, "y2", CS_DTYPE_I8, 4, sh), out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 4, sh);
  int y3 = cs_graph_add_value(g, "y3", CS_DTYPE_I8, 4, sh);
  int16_t t16[256] = {0};
  int w, gv, mv;
  requant_consts(g, &w, &gv, &mv);
  int tv = cs_graph_add_const(g, "t16", CS_DTYPE_I16, 1, ts, t16);
  tg_quantize(g, "q", x, xq, 0.1f, 0);
  tg_node(g, CS_OP_K_WIDEN_I16, "z", "z", 1, &xq, z); /* (stands for the MMA call) */
  tg_node(g, CS_OP_K_WIDEN_I16, "widen", "widen", 1, &xq, x16);
  int in1[5] = {z, x16, w, gv, mv};
  tg_node(g, CS_OP_K_MMALIB_EXACT_REQUANT, "rq1", "rq1", 5, in1, y8);
  int lin[2] = {tv, y8};
  int lut = tg_node(g, CS_OP_K_LUT_I16, "lut", "lut", 2, lin, y16);
  int in2[5] = {y16, y16, w, gv, mv};
  tg_node(g, CS_OP_K_MMALIB_EXACT_REQUANT, "rq2", "rq2", 5, in2, y2);
  if (y8_read_later) {
    int sum[2] = {y2, y8};
    int add = tg_node(g, CS_OP_K_ADD_I8, "add", "add", 2, sum, y3);
    g->nodes[add].k.add.bc.rank = 1;
  }
  tg_dequantize(g, "dq", y8_read_later ? y3 : y2, out, 0.1f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  cs_schedule s;
  if (build(g, &s, NULL)) {
    CHECK(!s.node_elided[lut]);
    if (y8_read_later)
      CHECK(s.loc[y8].alias_of == z && s.loc[y16].alias_of < 0);
    else
      CHECK(s.loc[y8].alias_of == z && s.loc[y16].alias_of == y8 && s.loc[y16].offset == s.loc[z].offset);
    check_disjoint(g, &s);
    cs_schedule_free(&s);
  }
  cs_graph_free(g);
}

int main(void) {
  boundary_quantize_and_dequantize_run_outside_cg_main();
  input_read_by_another_op_stays_float();
  quantizes_with_different_params_keep_the_float_input();
  identical_quantizes_share_one_raw_input();
  per_channel_conversions_stay_inside();
  copy_whose_input_dies_there_becomes_a_view();
  copy_whose_input_lives_on_stays_a_call();
  outputs_not_written_in_place_are_copied_at_the_end();
  weights_hold_only_constants_read_by_scheduled_nodes();
  arena_tensors_alive_together_never_overlap();
  images_of_a_batch_and_their_concat_are_views();
  slices_and_concats_that_are_not_contiguous_stay_calls();
  a_view_that_grows_the_arena_is_not_taken();
  views_are_decided_one_at_a_time();
  views_past_sixteen_are_decided_too();
  exact_requant_writes_over_z_where_z_dies();
  int16_table_writes_over_the_block_it_reads(0);
  int16_table_writes_over_the_block_it_reads(1);
  UNIT_MAIN_END();
}
