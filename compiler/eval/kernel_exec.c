/*
 * kernel_exec.c — run a kernel node now (constant folding, tests): one
 * thunk per row of the kernel table (cstatic/kernels.def), each calling the
 * row's reference entry point — fn itself, or fn__ref when fn dispatches to
 * CPU-specific variants. So what the compiler folds never depends on the
 * CPU it runs on (nor touches its AMX state), and nothing here changes the
 * process's kernel dispatch.
 */
#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "kernel_exec.h"

/* The reference entry point of a row (kernels.def "ref"). */
#define CS_KREF_SYM_NONE(fn) fn
#define CS_KREF_SYM_PUBLIC(fn) fn##__ref
#define CS_KREF_SYM_INTERNAL(fn) fn##__ref

#define CS_KIN_ARGS_1 in[0]
#define CS_KIN_ARGS_2 CS_KIN_ARGS_1, in[1]
#define CS_KIN_ARGS_3 CS_KIN_ARGS_2, in[2]
#define CS_KIN_ARGS_4 CS_KIN_ARGS_3, in[3]
#define CS_KIN_ARGS_5 CS_KIN_ARGS_4, in[4]
#define CS_KIN_ARGS_6 CS_KIN_ARGS_5, in[5]
#define CS_KA_ARGS_1 a[0]
#define CS_KA_ARGS_2 CS_KA_ARGS_1, a[1]
#define CS_KA_ARGS_3 CS_KA_ARGS_2, a[2]
#define CS_KA_ARGS_4 CS_KA_ARGS_3, a[3]
#define CS_KA_ARGS_5 CS_KA_ARGS_4, a[4]
#define CS_KA_ARGS_6 CS_KA_ARGS_5, a[5]
#define CS_KA_ARGS_7 CS_KA_ARGS_6, a[6]
#define CS_KA_ARGS_8 CS_KA_ARGS_7, a[7]
#define CS_KA_ARGS_9 CS_KA_ARGS_8, a[8]
#define CS_KA_ARGS_10 CS_KA_ARGS_9, a[9]
#define CS_KA_ARGS_11 CS_KA_ARGS_10, a[10]
#define CS_KA_ARGS_12 CS_KA_ARGS_11, a[11]
#define CS_KA_ARGS_13 CS_KA_ARGS_12, a[12]
enum { CS_KA_MAX = 13 };

/* ---- ARRAY params: the pointer fields come from node attributes ------- */

/* Point every ARRAY field of p (a copy of the node's params) at a
 * malloc'd int32 copy of its attribute, one entry per input; *arrays
 * receives the allocation to free. */
static int32_t bind_arrays(const cs_node *n, const cs_kstruct *st, void *p, int32_t **arrays) {
  for (const cs_kfield *k = st->fields; k->owner == st; k++) {
    if (k->kind != CS_KF_ARRAY) continue;
    int cnt = 0;
    const int64_t *v = cs_node_attr_ints(n, k->attr, &cnt);
    if (!v || cnt != n->n_inputs || *arrays) return TIDSP_ERR_PARAM;
    int32_t *a = malloc(sizeof(int32_t) * (size_t)(cnt ? cnt : 1));
    if (!a) return TIDSP_ERR_NOMEM;
    for (int i = 0; i < cnt; i++) a[i] = (int32_t)v[i];
    memcpy((unsigned char *)p + k->offset, &a, sizeof a);
    *arrays = a;
  }
  return TIDSP_OK;
}

/* ---- externs: positional int32 args from "mm_args"; the MMA kernels need
 * 64-byte aligned data, which compile-time buffers (malloc'd constants) do
 * not promise, so every extern runs on aligned copies. */

typedef int32_t (*extern_thunk)(const void *const *x, void *y, const int32_t *a);

/* MMALIB's status codes (cstatic/mmalib.h) as a tidsp_status: any failure
 * is a precondition, an invalid parameter. */
#define CS_KSTATUS_RUNTIME(st) (st)
#define CS_KSTATUS_C7X(st) ((st) == TIDSP_MMALIB_OK ? TIDSP_OK : TIDSP_ERR_PARAM)
#define CS_KSTATUS_MMALIB(st) CS_KSTATUS_C7X(st)
#define CS_KSTATUS_TIDL(st) CS_KSTATUS_C7X(st)

#define TIDSP_KERNEL_EXTERN(NAME, ir, fn, ref, group, n_in, ins, opt, out_dt, n_args, args) \
  static int32_t extern_##NAME(const void *const *in, void *y, const int32_t *a) {         \
    return CS_KSTATUS_##group(CS_KREF_SYM_##ref(fn)(CS_KIN_ARGS_##n_in, y, CS_KA_ARGS_##n_args)); \
  }
#include "cstatic/kernels.def"

static void *aligned_copy(const void *src, size_t n) {
  size_t sz = (n + TIDSP_MMALIB_ALIGN - 1) / TIDSP_MMALIB_ALIGN * TIDSP_MMALIB_ALIGN;
  void *p = aligned_alloc(TIDSP_MMALIB_ALIGN, sz ? sz : TIDSP_MMALIB_ALIGN);
  if (p && src) memcpy(p, src, n);
  return p;
}

static int32_t exec_extern(const cs_graph *g, const cs_node *n, const void *const *in, void *const *out,
                           extern_thunk thunk) {
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  int cnt = 0;
  const int64_t *a64 = cs_node_attr_ints(n, "mm_args", &cnt);
  if (!a64 || cnt != ki->n_args || cnt > CS_KA_MAX || n->n_inputs > CS_KERNEL_MAX_INPUTS || n->n_outputs != 1)
    return TIDSP_ERR_PARAM;
  int32_t a[CS_KA_MAX] = {0};
  for (int i = 0; i < cnt; i++) {
    if (a64[i] < INT32_MIN || a64[i] > INT32_MAX) return TIDSP_ERR_PARAM;
    a[i] = (int32_t)a64[i];
  }
  const void *x[CS_KERNEL_MAX_INPUTS] = {0};
  void *copies[CS_KERNEL_MAX_INPUTS] = {0};
  size_t ny = cs_value_nbytes(cs_graph_value(g, n->outputs[0]));
  void *y = aligned_copy(NULL, ny);
  int32_t st = y ? TIDSP_OK : TIDSP_ERR_NOMEM;
  for (int i = 0; i < n->n_inputs && st == TIDSP_OK; i++) {
    if (!in[i]) continue;
    copies[i] = aligned_copy(in[i], cs_value_nbytes(cs_graph_value(g, n->inputs[i])));
    if (!copies[i]) st = TIDSP_ERR_NOMEM;
    x[i] = copies[i];
  }
  if (st == TIDSP_OK) st = thunk(x, y, a);
  if (st == TIDSP_OK) memcpy(out[0], y, ny);
  for (int i = 0; i < CS_KERNEL_MAX_INPUTS; i++) free(copies[i]);
  free(y);
  return st;
}

/* ---- one case per row ---------------------------------------------------- */

#define CS_KEXEC_PARAMS(f, P, n_in) return f(&n->k.P, CS_KIN_ARGS_##n_in, out[0]);
#define CS_KEXEC_BYTES(f, P, n_in) return f(n->k.P, CS_KIN_ARGS_##n_in, out[0]);
#define CS_KEXEC_ARRAY(f, P, n_in)                                               \
  {                                                                              \
    tidsp_kparams_##P p = n->k.P;                                                \
    int32_t *arrays = NULL;                                                      \
    int32_t st = bind_arrays(n, cs_kernel_info_of(n->op)->params, &p, &arrays); \
    if (st == TIDSP_OK) st = f(&p, in, out[0]);                                  \
    free(arrays);                                                                \
    return st;                                                                   \
  }

int32_t cs_kernel_exec(const cs_graph *g, const cs_node *n, const void *const *in, void *const *out) {
  switch (n->op) {
#define TIDSP_KERNEL(NAME, ir, fn, ref, form, params, n_in, ins, opt, out_dt) \
  case CS_OP_K_##NAME:                                                        \
    CS_KEXEC_##form(CS_KREF_SYM_##ref(fn), params, n_in)
#define TIDSP_KERNEL_EXTERN(NAME, ir, fn, ref, group, n_in, ins, opt, out_dt, n_args, args) \
  case CS_OP_K_##NAME:                                                                    \
    return exec_extern(g, n, in, out, extern_##NAME);
#include "cstatic/kernels.def"
    default:
      return TIDSP_ERR_UNSUPPORTED;
  }
}
