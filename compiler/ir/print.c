/*
 * print.c — the IR as text, one line per node (`--dump-ir`):
 *
 *   %12 = k_conv2d_i8(%3, @w_conv1, @b_conv1) {stride=[2,2]} <…> : i8[1,64,112,112]  # /conv1/Conv
 *
 * %N is a value id, @name a constant, _ an absent optional input; {…} are
 * attributes, <…> a kernel op's runtime parameters, and the type after ':'
 * carries the quantization when the value has one.
 */
#include "ir.h"

#include <inttypes.h>
#include <string.h>

static void print_type(const cs_value *v, FILE *f) {
  fprintf(f, "%s[", cs_dtype_name(v->dtype));
  for (int i = 0; i < v->rank; i++)
    fprintf(f, "%s%" PRId64, i ? "," : "", v->shape[i]);
  fputc(']', f);
  const cs_quant *q = v->quant;
  if (!q || !q->scale) return;
  if (q->axis < 0)
    fprintf(f, " q(s=%g, zp=%d)", (double)q->scale[0],
            q->zero_point ? (int)q->zero_point[0] : 0);
  else
    fprintf(f, " q(axis=%d, n=%d, s0=%g, zp0=%d)", q->axis, q->count,
            (double)q->scale[0], q->zero_point ? (int)q->zero_point[0] : 0);
}

static void print_ref(const cs_graph *g, int id, FILE *f) {
  if (id < 0) {
    fputc('_', f);
  } else if (id >= g->n_values) {
    fprintf(f, "%%<bad %d>", id);
  } else if (cs_graph_value(g, id)->data) {
    fprintf(f, "@%s", cs_graph_value(g, id)->name);
  } else {
    fprintf(f, "%%%d", id);
  }
}

static void print_attr(const cs_attr *a, FILE *f) {
  fprintf(f, "%s=", a->name);
  switch (a->kind) {
    case CS_ATTR_INT: fprintf(f, "%" PRId64, a->i); break;
    case CS_ATTR_FLOAT: fprintf(f, "%g", (double)a->f); break;
    case CS_ATTR_STRING: fprintf(f, "\"%s\"", a->s ? a->s : ""); break;
    case CS_ATTR_INTS:
      fputc('[', f);
      for (int i = 0; i < a->n; i++)
        fprintf(f, "%s%" PRId64, i ? "," : "", a->ints[i]);
      fputc(']', f);
      break;
    case CS_ATTR_FLOATS:
      fputc('[', f);
      for (int i = 0; i < a->n; i++)
        fprintf(f, "%s%g", i ? "," : "", (double)a->floats[i]);
      fputc(']', f);
      break;
  }
}

/* The fields of params struct st at p, "name=value" each (the table of
 * cstatic/kernels.def); q: the kernel has an integer output. */
static void print_fields(const cs_kstruct *st, const unsigned char *p, int q, FILE *f) {
  int first = 1;
  for (const cs_kfield *k = st->fields; k->owner == st; k++) {
    /* an ARRAY is the node's attribute, printed with the others */
    if (!cs_kfield_present(k, p, q) || k->kind == CS_KF_ARRAY) continue;
    const unsigned char *a = p + k->offset;
    int32_t v;
    memcpy(&v, a, sizeof v);
    fprintf(f, "%s%s=", first ? "" : " ", k->name);
    first = 0;
    switch (k->kind) {
      case CS_KF_INT: fprintf(f, "%d", (int)v); break;
      case CS_KF_FLOAT: {
        float x;
        memcpy(&x, a, sizeof x);
        fprintf(f, "%g", (double)x);
        break;
      }
      case CS_KF_ENUM:
        if (v >= 0 && v < k->n_names && k->names[v]) fputs(k->names[v], f);
        else fprintf(f, "%d", (int)v);
        break;
      case CS_KF_INTS: {
        int32_t n;
        memcpy(&n, p + k->count_offset, sizeof n);
        fputc('[', f);
        for (int i = 0; i < n && i < TIDSP_MAX_RANK; i++) {
          memcpy(&v, a + 4 * (size_t)i, sizeof v);
          fprintf(f, "%s%d", i ? "," : "", (int)v);
        }
        fputc(']', f);
        break;
      }
      case CS_KF_STRUCT:
        fputc('{', f);
        print_fields(k->nested, a, q, f);
        fputc('}', f);
        break;
      case CS_KF_BYTES:
        fputs("0x", f);
        for (int i = 0; i < k->count; i++) fprintf(f, "%02x", a[i]);
        break;
      case CS_KF_ARRAY: break;
    }
  }
}

/* The runtime parameters of a kernel op: its params struct, or the int32
 * arguments of an extern (kept in "mm_args", printed with the attributes). */
static void print_kparams(const cs_node *n, FILE *f) {
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  if (!ki || ki->call == CS_KCALL_EXTERN) return;
  fputs(" <", f);
  if (ki->call == CS_KCALL_BYTES) fprintf(f, "bytes=%zu", n->k.copy_bytes);
  else print_fields(ki->params, (const unsigned char *)&n->k, cs_kernel_has_q_fields(ki), f);
  fputc('>', f);
}

static void print_small_data(const cs_value *v, FILE *f) {
  int64_t n = cs_value_numel(v);
  if (n > 8) return;
  fputs(" = [", f);
  for (int64_t i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    if (v->dtype == CS_DTYPE_F32)
      fprintf(f, "%g", cs_const_get_float(v, i));
    else
      fprintf(f, "%" PRId64, cs_const_get_int(v, i));
  }
  fputc(']', f);
}

void cs_graph_print(const cs_graph *g, FILE *f) {
  int live = 0;
  for (int i = 0; i < g->n_nodes; i++) live += !g->nodes[i].dead;
  fprintf(f, "graph \"%s\" (opset %d, %d nodes, %d values)\n", g->name,
          g->opset, live, g->n_values);
  for (int i = 0; i < g->n_inputs; i++) {
    int id = g->inputs[i];
    if (id < 0 || id >= g->n_values) {
      fprintf(f, "  input  <bad id %d>\n", id);
      continue;
    }
    fprintf(f, "  input  %%%d \"%s\" : ", id, cs_graph_value(g, id)->name);
    print_type(cs_graph_value(g, id), f);
    fputc('\n', f);
  }
  for (int i = 0; i < g->n_values; i++) {
    const cs_value *v = cs_graph_value(g, i);
    if (!v->data) continue;
    fprintf(f, "  const  @%s : ", v->name);
    print_type(v, f);
    print_small_data(v, f);
    fputc('\n', f);
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    fputs("  ", f);
    for (int j = 0; j < n->n_outputs; j++) {
      if (j) fputs(", ", f);
      print_ref(g, n->outputs[j], f);
    }
    fprintf(f, "%s%s(", n->n_outputs ? " = " : "", cs_op_name(n->op));
    for (int j = 0; j < n->n_inputs; j++) {
      if (j) fputs(", ", f);
      print_ref(g, n->inputs[j], f);
    }
    fputc(')', f);
    if (n->n_attrs) {
      fputs(" {", f);
      for (int a = 0; a < n->n_attrs; a++) {
        if (a) fputs(", ", f);
        print_attr(&n->attrs[a], f);
      }
      fputc('}', f);
    }
    if (cs_op_is_kernel(n->op)) print_kparams(n, f);
    fputs(" : ", f);
    for (int j = 0; j < n->n_outputs; j++) {
      int id = n->outputs[j];
      if (j) fputs(", ", f);
      if (id >= 0 && id < g->n_values) print_type(cs_graph_value(g, id), f);
      else fputs("?", f);
    }
    fprintf(f, "  # %s\n", n->origin ? n->origin : n->name);
  }
  for (int i = 0; i < g->n_outputs; i++) {
    int id = g->outputs[i];
    fputs("  output ", f);
    print_ref(g, id, f);
    if (id >= 0 && id < g->n_values) {
      fprintf(f, " \"%s\" : ", cs_graph_value(g, id)->name);
      print_type(cs_graph_value(g, id), f);
    }
    fputc('\n', f);
  }
}
