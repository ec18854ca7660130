/*
 * The kernel table (cstatic/kernels.def) and everything derived from it:
 * every kernel op has its row, a printed name that follows the rule, a
 * params struct whose fields cover the header's struct, an IR printer and
 * C emitter of its params (or extern arguments), a compile-time execution
 * thunk, and an export row in the firmware — so a kernel missing from any
 * derived table fails here, not on the board. MMALIB and TIDL-backed
 * kernels are exported exactly when the firmware is built with them
 * (CS_FW_MMALIB, CS_FW_TIDL).
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"
#include "exports.h"
#include "eval/kernel_exec.h"
#include "unit.h"

/* Whether this build's firmware exports fn: the MMALIB wrappers only with
 * CS_FW_MMALIB (--mmalib), the TIDL-backed kernels only with CS_FW_TIDL
 * (--tidl); everything else always. */
static int build_exports(const char *fn, const char **group) {
  size_t n = strlen(fn);
  if (n > 5 && !strcmp(fn + n - 5, "_tidl")) {
    *group = "tidl";
    return CS_FW_TIDL;
  }
  if (!strncmp(fn, "mmalib_", 7)) {
    *group = "mmalib";
    return CS_FW_MMALIB;
  }
  *group = "runtime";
  return 1;
}

static void check_kernel(const char *fn) {
  const char *group;
  const fw_export *e = fw_export_find(fn);
  if (build_exports(fn, &group)) {
    CHECK_MSG(e != NULL, "%s is not exported (%s)", fn, fw_build_options());
    if (e) CHECK_MSG(!strcmp(e->group, group), "%s is in group %s, not %s", fn, e->group, group);
  } else {
    /* A module calling it fails to load on this firmware, naming it. */
    CHECK_MSG(e == NULL, "%s is exported by a firmware built %s", fn, fw_build_options());
  }
}

/* The dtype of a tensor that satisfies a signature rule. */
static cs_dtype dtype_for(int rule, cs_dtype out) {
  if (rule == CS_KDT_SAME) return out;
  if (rule == CS_KDT_INT || rule == CS_DTYPE_UNDEF) return CS_DTYPE_I8;
  return (cs_dtype)rule;
}

/* A node of op with tensors of its signature's dtypes (constants, so that
 * the codegen check sees them too), zeroed params, and for an extern its
 * int32 arguments. */
static cs_graph *kernel_node(cs_op op, const cs_kernel_info *ki, int *id) {
  cs_graph *g = cs_graph_new("registry");
  int64_t s[1] = {64};
  cs_dtype out = dtype_for(ki->out, CS_DTYPE_I8);
  int n_in = ki->n_inputs < 0 ? 2 : ki->n_inputs;
  int in[CS_KERNEL_MAX_INPUTS];
  for (int i = 0; i < n_in; i++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    in[i] = cs_graph_add_const(g, name, dtype_for(ki->n_inputs < 0 ? ki->in[0] : ki->in[i], out), 1, s, NULL);
  }
  int y = cs_graph_add_value(g, "y", out, 1, s);
  *id = cs_graph_add_node(g, op, "node", "node", n_in, in, 1, &y);
  cs_node *n = &g->nodes[*id];
  memset(&n->k, 0, sizeof n->k);
  if (ki->call == CS_KCALL_EXTERN) {
    int64_t a[16] = {0};
    cs_node_set_attr_ints(n, "mm_args", ki->n_args, a);
  }
  if (ki->call == CS_KCALL_ARRAY) {
    int64_t len[2] = {1, 1};
    cs_node_set_attr_ints(n, "axis_len", n_in, len);
    n->k.concat.n_inputs = n_in;
  }
  return g;
}

/* The fields of a params struct: in order, each of its kind's size, no
 * overlap, no gap but alignment padding, the struct covered to its end. */
static void check_fields(const cs_kstruct *st) {
  size_t end = 0;
  int count = 0;
  for (const cs_kfield *f = st->fields; f->owner == st; f++, count++) {
    size_t want = f->kind == CS_KF_INTS ? 4 * TIDSP_MAX_RANK
                  : f->kind == CS_KF_BYTES ? (size_t)f->count
                  : f->kind == CS_KF_STRUCT ? f->nested->size
                  : f->kind == CS_KF_ARRAY ? sizeof(void *)
                                           : 4;
    size_t align = f->kind == CS_KF_STRUCT ? f->nested->align : f->kind == CS_KF_ARRAY ? sizeof(void *) : 1;
    CHECK_MSG(f->size == want, "%s.%s is %zu bytes, its kind %d has %zu", st->name, f->name, f->size, f->kind, want);
    CHECK_MSG(f->offset >= end && f->offset - end < (align > 4 ? align : 4), "%s.%s at %zu after a field ending at %zu",
              st->name, f->name, f->offset, end);
    if (f->kind == CS_KF_INTS) CHECK(f->count_offset + 4 <= st->size);
    if (f->kind == CS_KF_ENUM) CHECK(f->names && f->n_names > 0);
    end = f->offset + f->size;
  }
  if (strcmp(st->type, "size_t")) {
    CHECK_MSG(count > 0, "%s has no fields", st->name);
    CHECK_MSG((end + st->align - 1) / st->align * st->align == st->size,
              "%s: its fields end at byte %zu of %zu (a field of the header's struct is missing)", st->name, end,
              st->size);
  }
}

static void every_kernel_is_in_every_table(void) {
  int kernels = 0, sliced = 0;
  for (int op = 0; op < CS_OP_COUNT_; op++) {
    const cs_kernel_info *ki = cs_kernel_info_of((cs_op)op);
    CHECK_MSG((ki != NULL) == cs_op_is_kernel((cs_op)op), "op %s", cs_op_name((cs_op)op));
    if (!ki) continue;
    kernels++;
    /* ops.def: the printed name is "k_" + the symbol without "tidsp_" */
    const char *fn = ki->fn, *name = cs_op_name((cs_op)op);
    if (!strncmp(fn, "tidsp_", 6)) fn += 6;
    CHECK_MSG(!strncmp(name, "k_", 2) && !strcmp(name + 2, fn), "%s prints as %s", ki->fn, name);
    CHECK(ki->ref_fn && (ki->scalar_fn == NULL || !strcmp(ki->scalar_fn, ki->ref_fn)));
    CHECK_MSG((ki->params != NULL) == (ki->call == CS_KCALL_PARAMS || ki->call == CS_KCALL_ARRAY), "%s", ki->fn);
    if (ki->call == CS_KCALL_EXTERN) {
      int names = 1;
      for (const char *p = ki->args; *p; p++) names += *p == ',';
      CHECK_MSG(ki->n_args == names, "%s: %d int32 arguments, %d names", ki->fn, ki->n_args, names);
    }

    int id;
    cs_graph *g = kernel_node((cs_op)op, ki, &id);
    cs_node *n = &g->nodes[id];
    /* the verifier's and codegen's signature */
    CHECK_MSG(cs_kernel_check(g, id, 1, "") == CS_OK, "%s: %s", ki->fn, cs_error_message());
    /* the printer */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cs_graph_print(g, f);
    fclose(f);
    if (ki->call != CS_KCALL_EXTERN)
      CHECK_MSG(strstr(text, " <") && !strstr(text, " <>"), "%s prints no params: %s", ki->fn, text);
    free(text);
    /* the emitter */
    cs_sbuf pre = {0}, b = {0};
    int math = 0;
    if (ki->params)
      CHECK_MSG(cs_kernel_params(g, n, "  ", 0, "arr", &pre, &b, &math) == CS_OK && b.len > 2, "%s: %s", ki->fn,
                cs_error_message());
    if (ki->call == CS_KCALL_EXTERN)
      CHECK_MSG(cs_kernel_extern_call_args(n, "  ", &b) == CS_OK, "%s: %s", ki->fn, cs_error_message());
    cs_sbuf_free(&pre);
    cs_sbuf_free(&b);
    /* the compile-time thunk: it runs the kernel, which refuses the zeroed
     * parameters by a status of its own */
    const void *in[CS_KERNEL_MAX_INPUTS] = {0};
    void *out[1];
    unsigned char buf[64 * 8];
    out[0] = buf;
    for (int i = 0; i < n->n_inputs; i++) in[i] = cs_graph_value(g, n->inputs[i])->data;
    CHECK_MSG(cs_kernel_exec(g, n, in, out) != TIDSP_ERR_UNSUPPORTED, "%s has no execution thunk", ki->fn);
    cs_graph_free(g);
    /* the firmware */
    check_kernel(ki->fn);
    if (ki->scalar_fn) check_kernel(ki->scalar_fn);
    /* its output-channel-chunk entry (an AUX row's sliced_of), where the
     * L2 plan may call it instead */
    if (cs_kernel_sliced_fn((cs_op)op)) {
      sliced++;
      check_kernel(cs_kernel_sliced_fn((cs_op)op));
    }
    if (!ki->scalar_fn && strcmp(ki->ref_fn, ki->fn))
      CHECK_MSG(fw_export_find(ki->ref_fn) == NULL, "%s is the compiler's, not exported", ki->ref_fn);
  }
  CHECK(kernels > 10);
  /* the MMALIB conv's sliced entry is found from its row; a non-kernel op has none */
  CHECK(sliced >= 1 && cs_kernel_sliced_fn(CS_OP_K_MMALIB_CONV2D_I8) != NULL);
  CHECK(cs_kernel_sliced_fn(CS_OP_CONV) == NULL);
  int ns;
  const cs_kstruct *st = cs_kstructs(&ns);
  for (int i = 0; i < ns; i++) check_fields(&st[i]);
}

int main(void) {
  every_kernel_is_in_every_table();
  /* What every lib0.c calls besides kernels. */
  CHECK(fw_export_find("tidsp_weights_check") && fw_export_find("tidsp_status_str"));
  CHECK(fw_export_find("memcpy") && fw_export_find("memset"));
  /* What a c7x -mmalib=1 module's staged calls use (cstatic/dma.h), in
   * every firmware; never tidsp_l2_bind: the firmware binds its L2 SRAM
   * for each inference, and a module must not rebind it. */
  const char *dma[] = {"tidsp_dma_copy", "tidsp_dma_wait", "tidsp_l2_scratch"};
  for (size_t i = 0; i < sizeof dma / sizeof dma[0]; i++) {
    const fw_export *d = fw_export_find(dma[i]);
    CHECK_MSG(d && !strcmp(d->group, "runtime"), "%s is not exported in group runtime (%s)", dma[i],
              fw_build_options());
  }
  CHECK(fw_export_find("tidsp_l2_bind") == NULL);
  /* No allocator: a module runs on its arena. */
  CHECK(!fw_export_find("malloc") && !fw_export_find("free"));
  CHECK(fw_export_find("tidsp_made_up") == NULL);
  size_t n;
  const fw_export *e = fw_exports(&n);
  for (size_t i = 0; i < n; i++) {
    CHECK(e[i].addr != NULL);
    for (size_t j = i + 1; j < n; j++) CHECK_MSG(strcmp(e[i].name, e[j].name), "%s twice", e[i].name);
  }
#if !CS_FW_MMALIB
  for (size_t i = 0; i < n; i++) CHECK(strcmp(e[i].group, "mmalib") && strcmp(e[i].group, "tidl"));
#endif
  UNIT_MAIN_END();
}
