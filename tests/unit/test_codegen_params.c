/*
 * Every kernel's param struct survives code generation bit for bit: the
 * designated initializer codegen writes, compiled as C99 (-Werror) and
 * dumped, has the same bytes as node->k. Fields are filled with distinct
 * pseudo-random values, so a field left out or swapped shows up; floats
 * include an infinity, a negative zero and values that no decimal literal
 * of 9 digits would need (exactness of the hex-float literals).
 */
#include "test_codegen_graphs.h"

#include <stdint.h>

#include "codegen/cg.h"
#include "unit.h"

static char src_dir[4096];

static uint32_t seed = 2024;
static uint32_t rnd(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 10; /* < 2^22: as a float, a small positive number */
}

/* The bytes of node->k that are the kernel's params: the whole struct, or
 * up to its first field flagged Q for a float kernel that shares an integer
 * kernel's struct (conv2d_f32 prints no x_zp/w_zp/rq: those stay zero,
 * checked below). */
static size_t params_bytes(const cs_kernel_info *ki) {
  if (!cs_kernel_has_q_fields(ki))
    for (const cs_kfield *f = ki->params->fields; f->owner == ki->params; f++)
      if (f->flags & CS_KF_Q) return f->offset;
  return ki->params->size;
}

/* Every INTS field's count (nested structs too) at the most entries. */
static void full_ranks(const cs_kstruct *st, unsigned char *p) {
  for (const cs_kfield *f = st->fields; f->owner == st; f++) {
    int32_t r = TIDSP_MAX_RANK;
    if (f->kind == CS_KF_INTS) memcpy(p + f->count_offset, &r, sizeof r);
    if (f->kind == CS_KF_STRUCT) full_ranks(f->nested, p + f->offset);
  }
}

/* Values that exercise the literal printers beyond random bits. */
static void special_values(cs_node *n) {
  switch (n->op) {
    case CS_OP_K_CONV2D_I8: n->k.conv.x_zp = INT32_MIN; n->k.conv.rq.out_min = -128; break;
    case CS_OP_K_ADD_I8:
      n->k.add.ra = -INFINITY;
      n->k.add.rb = 0.1f;
      n->k.add.f = -0.0f;
      n->k.add.bc.rank = TIDSP_MAX_RANK;
      break;
    case CS_OP_K_MUL_I8: n->k.mul.r = 1.0f / 3.0f; n->k.mul.bc.rank = TIDSP_MAX_RANK; break;
    case CS_OP_K_BINARY_F32: n->k.binary.bc.rank = TIDSP_MAX_RANK; break;
    case CS_OP_K_UNARY_F32: n->k.unary.hi = INFINITY; n->k.unary.lo = -3.4028235e38f; break;
    case CS_OP_K_AVGPOOL_I8: n->k.avgpool.x_scale = 1e-45f; /* smallest subnormal */ break;
    case CS_OP_K_REDUCE_MEAN_F32: n->k.reduce.rank = TIDSP_MAX_RANK; break;
    case CS_OP_K_TRANSPOSE: n->k.transpose.rank = TIDSP_MAX_RANK; break;
    case CS_OP_K_SLICE: n->k.slice.rank = TIDSP_MAX_RANK; n->k.slice.step[2] = -1; break;
    case CS_OP_K_PAD: n->k.pad.rank = TIDSP_MAX_RANK; n->k.pad.value[7] = 0xff; break;
    default: break;
  }
}

/* Compile `program` (prints the struct's bytes in hex) and run it. */
static int compile_and_dump(const char *dir, const char *program, unsigned char *out, size_t n) {
  char path[4400], cmd[9000];
  snprintf(path, sizeof path, "%s/p.c", dir);
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fputs(program, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && cc -std=c99 -Wall -Wextra -Werror -pedantic -I'%s/include' p.c -o p 2> cc.log", dir,
           src_dir);
  if (tg_system(cmd) != 0) {
    snprintf(cmd, sizeof cmd, "cat '%s/cc.log' >&2; cat '%s/p.c' >&2", dir, dir);
    tg_system(cmd);
    return 0;
  }
  snprintf(cmd, sizeof cmd, "'%s/p'", dir);
  FILE *p = popen(cmd, "r");
  if (!p) return 0;
  size_t got = 0;
  unsigned int byte;
  while (got < n && fscanf(p, "%2x", &byte) == 1) out[got++] = (unsigned char)byte;
  pclose(p);
  return got == n;
}

/* Every kernel of the table with a params struct (concat's pointer: below). */
static void each_param_struct_round_trips_exactly(const char *dir) {
  int tested = 0;
  for (int op = 0; op < CS_OP_COUNT_; op++) {
    const cs_kernel_info *ki = cs_kernel_info_of((cs_op)op);
    if (!ki || ki->call != CS_KCALL_PARAMS) continue;
    tested++;
    size_t size = params_bytes(ki), full = ki->params->size;
    cs_graph *g = cs_graph_new("params");
    int64_t s[1] = {4};
    int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 1, s), y = cs_graph_add_value(g, "y", CS_DTYPE_F32, 1, s);
    int id = cs_graph_add_node(g, (cs_op)op, "node", "node", 1, &x, 1, &y);
    cs_node *n = &g->nodes[id];
    memset(&n->k, 0, sizeof n->k);
    uint32_t *words = (uint32_t *)&n->k;
    for (size_t i = 0; i < size / 4; i++) words[i] = rnd();
    full_ranks(ki->params, (unsigned char *)&n->k);
    special_values(n);

    cs_sbuf pre = {0}, init = {0}, prog = {0};
    int math = 0;
    CHECK(cs_kernel_params(g, n, "    ", 30, "axis_len", &pre, &init, &math) == CS_OK);
    cs_sbuf_printf(&prog, "#include <math.h>\n#include <stdio.h>\n#include \"cstatic/kernels.h\"\n%s"
                          "static const %s p = %s;\nint main(void) {\n"
                          "  const unsigned char *b = (const unsigned char *)&p;\n  size_t i;\n"
                          "  for (i = 0; i < sizeof p; i++) printf(\"%%02x\", b[i]);\n  return 0;\n}\n",
                   pre.s ? pre.s : "", ki->params->type, init.s);
    unsigned char got[sizeof(cs_kparams)];
    int ok = compile_and_dump(dir, prog.s, got, full);
    CHECK_MSG(ok, "%s: the generated initializer does not compile cleanly", cs_op_name(n->op));
    if (ok) {
      CHECK_MSG(memcmp(got, &n->k, size) == 0, "%s: struct bytes differ after codegen", cs_op_name(n->op));
      for (size_t i = size; i < full; i++) CHECK(got[i] == 0);
    }
    cs_sbuf_free(&pre);
    cs_sbuf_free(&init);
    cs_sbuf_free(&prog);
    cs_graph_free(g);
  }
  CHECK(tested >= 30);
}

/* concat: the struct's pointer is a static array named after the node. */
static void concat_axis_lengths_become_a_static_array(const char *dir) {
  cs_graph *g = cs_graph_new("concat");
  int64_t s[2] = {2, 3};
  int in[3];
  for (int i = 0; i < 3; i++) in[i] = cs_graph_add_value(g, NULL, CS_DTYPE_I8, 2, s);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_I8, 2, s);
  int id = cs_graph_add_node(g, CS_OP_K_CONCAT, "cat", "cat", 3, in, 1, &y);
  cs_node *n = &g->nodes[id];
  n->k.concat = (tidsp_concat_params){.n_inputs = 3, .outer = 2, .inner_bytes = 5, .axis_len = NULL};
  int64_t len[3] = {1, 7, 2};
  cs_node_set_attr_ints(n, "axis_len", 3, len);
  cs_sbuf pre = {0}, init = {0}, prog = {0};
  int math = 0;
  CHECK(cs_kernel_params(g, n, "    ", 30, "cat_axis_len", &pre, &init, &math) == CS_OK);
  CHECK(pre.s && strstr(pre.s, "static const int32_t cat_axis_len[3] = {1, 7, 2};"));
  CHECK(init.s && strstr(init.s, ".axis_len = cat_axis_len"));
  cs_sbuf_printf(&prog, "#include <stdio.h>\n#include \"cstatic/kernels.h\"\n%s"
                        "static const tidsp_concat_params p = %s;\nint main(void) {\n"
                        "  printf(\"%%02x%%02x%%02x%%02x%%02x\", (unsigned)p.n_inputs, (unsigned)p.outer,\n"
                        "         (unsigned)p.inner_bytes, (unsigned)p.axis_len[1], (unsigned)p.axis_len[2]);\n"
                        "  return 0;\n}\n",
                 pre.s, init.s);
  unsigned char got[5];
  CHECK(compile_and_dump(dir, prog.s, got, 5));
  CHECK(got[0] == 3 && got[1] == 2 && got[2] == 5 && got[3] == 7 && got[4] == 2);
  /* A count mismatch between the attr and the inputs is an error. */
  int64_t two[2] = {1, 1};
  cs_node_set_attr_ints(n, "axis_len", 2, two);
  cs_sbuf_free(&pre);
  cs_sbuf_free(&init);
  CHECK(cs_kernel_params(g, n, "    ", 30, "x", &pre, &init, &math) == CS_ERR_INTERNAL);
  CHECK(strstr(cs_error_message(), "'cat'") != NULL);
  cs_sbuf_free(&pre);
  cs_sbuf_free(&init);
  cs_sbuf_free(&prog);
  cs_graph_free(g);
}

static void every_kernel_op_has_a_table_entry(void) {
  for (int op = 0; op < CS_OP_COUNT_; op++) {
    int kernel = cs_op_is_kernel((cs_op)op);
    CHECK_MSG((cs_kernel_info_of((cs_op)op) != NULL) == kernel, "op %s", cs_op_name((cs_op)op));
  }
}

int main(void) {
  tg_source_dir(src_dir, sizeof src_dir);
  char *dir = tg_temp_dir("params");
  every_kernel_op_has_a_table_entry();
  each_param_struct_round_trips_exactly(dir);
  concat_axis_lengths_become_a_static_array(dir);
  tg_remove_dir(dir);
  free(dir);
  UNIT_MAIN_END();
}
