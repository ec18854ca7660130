/*
 * kernels.c — the kernel table of cstatic/kernels.def as data: each kernel
 * op's C symbols, call form and dtype signature, and each params struct's
 * fields (offsets, sizes, kinds) for the IR printer and the C emitter.
 * Every field row is checked against the header's struct at compile time
 * (its C type must match its kind).
 */
#include <stddef.h>
#include <string.h>

#include "ir.h"

/* ---- enumerator names of the ENUM fields ------------------------------ */

/* indexed by tidsp_dtype value */
static const char *const kenum_dtype[] = {NULL,
                                          "TIDSP_DTYPE_F32",
                                          "TIDSP_DTYPE_I8",
                                          "TIDSP_DTYPE_U8",
                                          "TIDSP_DTYPE_I16",
                                          "TIDSP_DTYPE_U16",
                                          "TIDSP_DTYPE_I32",
                                          "TIDSP_DTYPE_I64",
                                          "TIDSP_DTYPE_BOOL",
                                          "TIDSP_DTYPE_F16",
                                          "TIDSP_DTYPE_BF16",
                                          "TIDSP_DTYPE_F64",
                                          "TIDSP_DTYPE_U32",
                                          "TIDSP_DTYPE_U64"};
/* tidsp_requant_kind; SCALE_SHIFT is the MMALIB emulation's own */
static const char *const kenum_requant_kind[] = {"TIDSP_REQUANT_FLOAT", "TIDSP_REQUANT_Q31"};
static const char *const kenum_binary_op[] = {
    "TIDSP_BINARY_ADD",   "TIDSP_BINARY_SUB",     "TIDSP_BINARY_MUL",           "TIDSP_BINARY_DIV",
    "TIDSP_BINARY_POW",   "TIDSP_BINARY_MAX",     "TIDSP_BINARY_MIN",           "TIDSP_BINARY_EQUAL",
    "TIDSP_BINARY_LESS",  "TIDSP_BINARY_LESS_OR_EQUAL", "TIDSP_BINARY_GREATER", "TIDSP_BINARY_GREATER_OR_EQUAL",
    "TIDSP_BINARY_AND",   "TIDSP_BINARY_OR",      "TIDSP_BINARY_XOR"};
static const char *const kenum_unary_op[] = {
#define TIDSP_UNARY(NAME, fn, IR, op_type, alpha_attr, alpha, beta_attr, beta) "TIDSP_UNARY_" #NAME,
#define TIDSP_UNARY_KERNEL(NAME, fn) "TIDSP_UNARY_" #NAME,
#include "cstatic/unary_ops.def"
};
static const char *const kenum_pad_mode[] = {"TIDSP_PAD_CONSTANT", "TIDSP_PAD_EDGE", "TIDSP_PAD_REFLECT"};
static const char *const kenum_conv_w_layout[] = {"TIDSP_CONV_W_OIHW", "TIDSP_CONV_W_O16"};

const char *cs_tidsp_dtype_name(int32_t tidsp_dtype) {
  int n = (int)(sizeof kenum_dtype / sizeof kenum_dtype[0]);
  return tidsp_dtype > 0 && tidsp_dtype < n ? kenum_dtype[tidsp_dtype] : NULL;
}

/* ---- params structs ----------------------------------------------------- */

enum {
#define TIDSP_KPARAMS(member, type) CS_KS_##member,
#define TIDSP_KSTRUCT(name, type) CS_KS_##name,
#include "cstatic/kernels.def"
  CS_KS_COUNT_
};

/* CS_KF_FIRST_<struct>: the index of its first field row (a struct row
 * precedes its fields; the marker takes the next index and gives it back). */
enum {
#define TIDSP_KPARAMS(member, type) CS_KF_FIRST_##member, CS_KF_BACK_##member = CS_KF_FIRST_##member - 1,
#define TIDSP_KSTRUCT(name, type) TIDSP_KPARAMS(name, type)
#define TIDSP_KFIELD(owner, field, kind, arg, flags) CS_KF_ROW_##owner##_##field,
#include "cstatic/kernels.def"
  CS_KF_COUNT_
};

/* Each field row's C type is its kind's (a compile error names the row). */
#define CS_KF_TYPE_INT(T, f, a) _Generic(((T *)0)->f, int32_t: 1, default: 0)
#define CS_KF_TYPE_FLOAT(T, f, a) _Generic(((T *)0)->f, float: 1, default: 0)
#define CS_KF_TYPE_ENUM(T, f, a) CS_KF_TYPE_INT(T, f, a)
#define CS_KF_TYPE_INTS(T, f, a) \
  (_Generic(((T *)0)->f, int32_t *: 1, default: 0) && sizeof(((T *)0)->f) == 4 * TIDSP_MAX_RANK)
#define CS_KF_TYPE_STRUCT(T, f, a) _Generic(((T *)0)->f, tidsp_kparams_##a: 1, default: 0)
#define CS_KF_TYPE_BYTES(T, f, a) (_Generic(((T *)0)->f, uint8_t *: 1, default: 0) && sizeof(((T *)0)->f) == (a))
#define CS_KF_TYPE_ARRAY(T, f, a) _Generic(((T *)0)->f, const int32_t *: 1, default: 0)
#define TIDSP_KFIELD(owner, field, kind, arg, flags)                                    \
  _Static_assert(CS_KF_TYPE_##kind(tidsp_kparams_##owner, field, arg),                 \
                 "cstatic/kernels.def: field " #owner "." #field " is not of kind " #kind);
#include "cstatic/kernels.def"

static const cs_kstruct kstructs[CS_KS_COUNT_];

#define CS_KFF_0 0u
#define CS_KFF_Q CS_KF_Q
#define CS_KFF_NZ CS_KF_NZ
#define CS_KF_ARG_INT(T, a) .count = 0
#define CS_KF_ARG_FLOAT(T, a) .count = 0
#define CS_KF_ARG_ENUM(T, a) .names = kenum_##a, .n_names = (int)(sizeof kenum_##a / sizeof kenum_##a[0])
#define CS_KF_ARG_INTS(T, a) .count_offset = offsetof(T, a)
#define CS_KF_ARG_STRUCT(T, a) .nested = &kstructs[CS_KS_##a]
#define CS_KF_ARG_BYTES(T, a) .count = (a)
#define CS_KF_ARG_ARRAY(T, a) .attr = #a

static const cs_kfield kfields[CS_KF_COUNT_ + 1] = {
#define TIDSP_KFIELD(OWNER, FIELD, KIND, ARG, FLAGS)                                                        \
  {.owner = &kstructs[CS_KS_##OWNER], .name = #FIELD, .kind = CS_KF_##KIND, .flags = CS_KFF_##FLAGS,       \
   .offset = offsetof(tidsp_kparams_##OWNER, FIELD), .size = sizeof(((tidsp_kparams_##OWNER *)0)->FIELD), \
   CS_KF_ARG_##KIND(tidsp_kparams_##OWNER, ARG)},
#include "cstatic/kernels.def"
    {.owner = NULL}, /* the end */
};

/* copy_bytes has no fields: its first field index is the next struct's,
 * whose fields have another owner, so its list is empty. */
static const cs_kstruct kstructs[CS_KS_COUNT_] = {
#define TIDSP_KPARAMS(member, type) \
  {#member, #type, sizeof(type), _Alignof(type), &kfields[CS_KF_FIRST_##member]},
#define TIDSP_KSTRUCT(name, type) TIDSP_KPARAMS(name, type)
#include "cstatic/kernels.def"
};

const cs_kstruct *cs_kstructs(int *n) {
  *n = CS_KS_COUNT_;
  return kstructs;
}

/* ---- kernels ------------------------------------------------------------ */

#define CS_KRULE_F32 CS_DTYPE_F32
#define CS_KRULE_I8 CS_DTYPE_I8
#define CS_KRULE_U8 CS_DTYPE_U8
#define CS_KRULE_I16 CS_DTYPE_I16
#define CS_KRULE_I32 CS_DTYPE_I32
#define CS_KRULE_I64 CS_DTYPE_I64
#define CS_KRULE_BOOL CS_DTYPE_BOOL
#define CS_KRULE_ANY CS_DTYPE_UNDEF
#define CS_KRULE_SAME CS_KDT_SAME
#define CS_KRULE_INT CS_KDT_INT
#define CS_KRULE_RESADD CS_DTYPE_UNDEF /* a 16-byte blob */
#define CS_KRULES(n, in) CS_KRULES_##n in
#define CS_KRULES_1(a) CS_KRULE_##a
#define CS_KRULES_2(a, b) CS_KRULES_1(a), CS_KRULE_##b
#define CS_KRULES_3(a, b, c) CS_KRULES_2(a, b), CS_KRULE_##c
#define CS_KRULES_4(a, b, c, d) CS_KRULES_3(a, b, c), CS_KRULE_##d
#define CS_KRULES_5(a, b, c, d, e) CS_KRULES_4(a, b, c, d), CS_KRULE_##e
#define CS_KRULES_6(a, b, c, d, e, f) CS_KRULES_5(a, b, c, d, e), CS_KRULE_##f

#define CS_KREF_FN_NONE(fn) #fn
#define CS_KREF_FN_PUBLIC(fn) #fn "__ref"
#define CS_KREF_FN_INTERNAL(fn) #fn "__ref"
#define CS_KSCALAR_FN_NONE(fn) NULL
#define CS_KSCALAR_FN_PUBLIC(fn) #fn "__ref"
#define CS_KSCALAR_FN_INTERNAL(fn) NULL
#define CS_KPARAMS_PARAMS(p) &kstructs[CS_KS_##p]
#define CS_KPARAMS_ARRAY(p) &kstructs[CS_KS_##p]
#define CS_KPARAMS_BYTES(p) NULL
#define CS_KN_IN_PARAMS(n) n
#define CS_KN_IN_BYTES(n) n
#define CS_KN_IN_ARRAY(n) (-1)
#define CS_KGROUP_RUNTIME "runtime"
#define CS_KGROUP_C7X "runtime"
#define CS_KGROUP_MMALIB "mmalib"
#define CS_KGROUP_TIDL "tidl"

static const cs_kernel_info kernels[] = {
#define TIDSP_KERNEL(NAME, ir, fn, ref, form, params, n_in, in, opt, out)                                  \
  {CS_OP_K_##NAME, #fn,        CS_KREF_FN_##ref(fn), CS_KSCALAR_FN_##ref(fn), CS_KCALL_##form,           \
   CS_KPARAMS_##form(params),  CS_KN_IN_##form(n_in), {CS_KRULES(n_in, in)}, opt, CS_KRULE_##out,          \
   0,                          NULL,                 "runtime"},
#define TIDSP_KERNEL_EXTERN(NAME, ir, fn, ref, group, n_in, in, opt, out, n_args, args)                    \
  {CS_OP_K_##NAME, #fn, CS_KREF_FN_##ref(fn), CS_KSCALAR_FN_##ref(fn), CS_KCALL_EXTERN, NULL, n_in,       \
   {CS_KRULES(n_in, in)}, opt, CS_KRULE_##out, n_args, args, CS_KGROUP_##group},
#include "cstatic/kernels.def"
};

/* The AUX rows as (the op whose output-channel chunks the entry computes,
 * the entry); a row with sliced_of NONE matches no op. */
#define CS_OP_K_NONE (-1)
static const struct {
  int of;
  const char *fn;
} sliced[] = {
#define TIDSP_KERNEL_AUX(fn, group, sliced_of) {CS_OP_K_##sliced_of, #fn},
#include "cstatic/kernels.def"
};
#undef CS_OP_K_NONE

const char *cs_kernel_sliced_fn(cs_op op) {
  for (size_t i = 0; i < sizeof sliced / sizeof sliced[0]; i++)
    if (sliced[i].of == (int)op) return sliced[i].fn;
  return NULL;
}

const cs_kernel_info *cs_kernel_info_of(cs_op op) {
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    if (kernels[i].op == op) return &kernels[i];
  return NULL;
}

cs_dtype cs_kernel_ptr_dtype(int rule) {
  return rule > CS_DTYPE_UNDEF && rule != CS_DTYPE_BOOL ? (cs_dtype)rule : CS_DTYPE_UNDEF;
}

int cs_kernel_has_q_fields(const cs_kernel_info *ki) { return ki->out != CS_DTYPE_F32; }

int cs_kfield_present(const cs_kfield *k, const unsigned char *p, int q) {
  int32_t v;
  memcpy(&v, p + k->offset, sizeof v);
  return !((k->flags & CS_KF_Q) && !q) && !((k->flags & CS_KF_NZ) && !v);
}

static const char *rule_name(int rule) {
  return rule == CS_KDT_INT ? "an integer type" : cs_dtype_name((cs_dtype)rule);
}

cs_status cs_kernel_check(const cs_graph *g, int id, int with_constants, const char *who) {
  const cs_node *n = &g->nodes[id];
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
#define KERR(fmt, ...) \
  cs_error(CS_ERR_INTERNAL, "%snode %d '%s' (%s): " fmt, who, id, n->name, cs_op_name(n->op), __VA_ARGS__)
  if (!ki) return KERR("%s", "not a kernel op");
  if (n->n_outputs != 1 || n->outputs[0] < 0 || n->outputs[0] >= g->n_values)
    return KERR("a kernel op has exactly one output, not %d", n->n_outputs);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  if (ki->out == CS_KDT_INT ? !cs_dtype_is_int(y->dtype) || y->dtype == CS_DTYPE_I64
                            : ki->out > CS_DTYPE_UNDEF && y->dtype != (cs_dtype)ki->out)
    return KERR("output '%s' is %s, %s%s", y->name, cs_dtype_name(y->dtype),
                ki->out == CS_KDT_INT ? "not " : "expected ", rule_name(ki->out));
  if (with_constants && ki->n_inputs >= 0 && n->n_inputs != ki->n_inputs)
    return KERR("has %d inputs, %s takes %d", n->n_inputs, ki->fn, ki->n_inputs);
  if (with_constants && ki->n_inputs < 0 && n->n_inputs < 1)
    return KERR("has no inputs, %s takes one or more", ki->fn);
  for (int i = 0; i < n->n_inputs && (ki->n_inputs < 0 || i < ki->n_inputs); i++) {
    int v = n->inputs[i];
    if (v < 0) {
      if (ki->n_inputs >= 0 && (ki->optional & (1u << i))) continue;
      return KERR("input %d is absent but %s requires it", i, ki->fn);
    }
    if (v >= g->n_values) return KERR("input %d is value id %d, out of range", i, v);
    const cs_value *x = cs_graph_value(g, v);
    if (x->data && !with_constants) continue;
    int rule = ki->n_inputs < 0 ? ki->in[0] : ki->in[i];
    if (rule == CS_KDT_SAME && x->dtype != y->dtype)
      return KERR("input %d '%s' is %s but output '%s' is %s", i, x->name, cs_dtype_name(x->dtype), y->name,
                  cs_dtype_name(y->dtype));
    if (rule == CS_KDT_INT ? !cs_dtype_is_int(x->dtype) || x->dtype == CS_DTYPE_I64
                           : rule > CS_DTYPE_UNDEF && x->dtype != (cs_dtype)rule)
      return KERR("input %d '%s' is %s, %s%s", i, x->name, cs_dtype_name(x->dtype),
                  rule == CS_KDT_INT ? "not " : "expected ", rule_name(rule));
  }
#undef KERR
  return CS_OK;
}
