/*
 * test_passes_kernel_exec.c — compile-time execution (cs_kernel_exec,
 * FoldConstant) runs each kernel's reference entry point and leaves the
 * process's kernel dispatch alone: after folding a conv, an MMALIB conv and
 * an MMALIB max pool, the dispatched kernels still run the row they chose
 * at start-up (not "ref"), and the folded bytes equal the dispatched
 * kernels' own.
 */
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/mmalib.h"
#include "kernel_graph.h"
#include "eval/kernel_exec.h"
#include "passes/pass_list.h"
#include "unit.h"

/* A graph whose one node reads only constants: FoldConstant runs it. */
static void conv_folds_like_the_dispatched_kernel(void) {
  cs_graph *g = cs_graph_new("fold");
  int64_t xs[4] = {1, 8, 9, 9}, ws[4] = {16, 8, 3, 3};
  int x = kg_const_i8(g, "x", 4, xs, 11);
  int w = kg_const_i8(g, "w", 4, ws, 12);
  int node;
  int y = kg_conv(g, "conv", x, w, 16, 3, 1, &node);
  g->outputs = malloc(sizeof(int));
  g->outputs[0] = y;
  g->n_outputs = 1;
  const cs_node *n = cs_graph_node(g, node);
  size_t ny = cs_value_nbytes(cs_graph_value(g, y));
  int8_t *want = malloc(ny);
  CHECK(tidsp_conv2d_i8(&n->k.conv, cs_graph_value(g, x)->data, cs_graph_value(g, w)->data,
                        cs_graph_value(g, n->inputs[2])->data, cs_graph_value(g, n->inputs[3])->data,
                        want) == TIDSP_OK);
  CHECK_MSG(pass_fold_constants(g, NULL) == CS_OK, "%s", cs_error_message());
  const cs_value *yv = cs_graph_value(g, y);
  CHECK(yv->data != NULL && gb_count_op(g, CS_OP_K_CONV2D_I8) == 0);
  if (yv->data) CHECK(memcmp(yv->data, want, ny) == 0);
  free(want);
  cs_graph_free(g);
}

/* An extern node run now (aligned copies of unaligned buffers) against the
 * public symbol on aligned buffers. */
static void mmalib_nodes_run_on_reference_loops(void) {
  enum { C = 16, H = 10 };
  cs_graph *g = cs_graph_new("mm");
  int64_t xs[4] = {1, C, H, H}, ws[4] = {C, C, 3, 3}, cs[1] = {C};
  int x = kg_const_i8(g, "x", 4, xs, 21), w = kg_const_i8(g, "w", 4, ws, 22);
  int32_t bias[C];
  uint8_t scale[C], shift[C];
  for (int c = 0; c < C; c++) {
    bias[c] = c * 37 - 300;
    scale[c] = (uint8_t)(130 + c);
    shift[c] = (uint8_t)(9 + c % 3);
  }
  int b = cs_graph_add_const(g, "b", CS_DTYPE_I32, 1, cs, bias);
  int sc = cs_graph_add_const(g, "sc", CS_DTYPE_U8, 1, cs, scale);
  int sh = cs_graph_add_const(g, "sh", CS_DTYPE_U8, 1, cs, shift);
  int in[5] = {x, w, b, sc, sh}, id;
  int y = gb_node(g, CS_OP_K_MMALIB_CONV2D_I8, "mm", 5, in, CS_DTYPE_I8, 4, xs, &id);
  const int64_t args[12] = {C, H, H, C, 3, 3, 1, 1, 1, 1, 1, 1};
  cs_node_set_attr_ints(cs_graph_node(g, id), "mm_args", 12, args);
  int pin[1] = {x}, pid;
  int64_t ps[4] = {1, C, 5, 5};
  int yp = gb_node(g, CS_OP_K_C7X_MAXPOOL_I8, "pool", 1, pin, CS_DTYPE_I8, 4, ps, &pid);
  const int64_t pargs[12] = {1, C, H, H, 5, 5, 2, 2, 2, 2, 0, 0};
  cs_node_set_attr_ints(cs_graph_node(g, pid), "mm_args", 12, pargs);

  size_t nx = (size_t)C * H * H, nw = (size_t)C * C * 9;
  int8_t *ax = aligned_alloc(64, 1664), *aw = aligned_alloc(64, 2304), *want = aligned_alloc(64, 1664);
  int8_t *got = malloc(nx), *want_p = malloc(C * 25), *got_p = malloc(C * 25);
  memcpy(ax, cs_graph_value(g, x)->data, nx);
  memcpy(aw, cs_graph_value(g, w)->data, nw);
  CHECK(mmalib_conv2d_i8(ax, aw, bias, scale, shift, want, C, H, H, C, 3, 3, 1, 1, 1, 1, 1, 1) ==
        TIDSP_MMALIB_OK);
  const void *cin[5] = {cs_graph_value(g, x)->data, cs_graph_value(g, w)->data, bias, scale, shift};
  void *cout[1] = {got};
  CHECK(cs_kernel_exec(g, cs_graph_node(g, id), cin, cout) == TIDSP_OK);
  CHECK(memcmp(got, want, nx) == 0);
  CHECK(c7x_int8_max_pool(ax, want_p, 1, C, H, H, 5, 5, 2, 2, 2, 2, 0, 0) == TIDSP_MMALIB_OK);
  const void *pinp[1] = {cs_graph_value(g, x)->data};
  void *pout[1] = {got_p};
  CHECK(cs_kernel_exec(g, cs_graph_node(g, pid), pinp, pout) == TIDSP_OK);
  CHECK(memcmp(got_p, want_p, (size_t)C * 25) == 0);
  /* a precondition failure is a status, named by the caller */
  int64_t bad[12] = {C, H, H, C, 3, 3, 0, 0, 1, 1, 1, 1};
  cs_node_set_attr_ints(cs_graph_node(g, id), "mm_args", 12, bad);
  CHECK(cs_kernel_exec(g, cs_graph_node(g, id), cin, cout) == TIDSP_ERR_PARAM);
  cs_node_set_attr_ints(cs_graph_node(g, id), "mm_args", 11, bad);
  CHECK(cs_kernel_exec(g, cs_graph_node(g, id), cin, cout) == TIDSP_ERR_PARAM);
  (void)y;
  (void)yp;
  free(ax);
  free(aw);
  free(want);
  free(got);
  free(want_p);
  free(got_p);
  cs_graph_free(g);
}

int main(void) {
  /* The row the dispatched kernels chose for this CPU (TIDSP_KERNELS may
   * name another). */
  const char *row = tidsp_kernel_variant_active()->name;
  conv_folds_like_the_dispatched_kernel();
  mmalib_nodes_run_on_reference_loops();
  CHECK_MSG(!strcmp(tidsp_kernel_variant_active()->name, row),
            "compile-time execution changed the dispatch from %s to %s", row,
            tidsp_kernel_variant_active()->name);
  printf("dispatch row: %s\n", row);
  UNIT_MAIN_END();
}
