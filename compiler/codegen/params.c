/*
 * Param structs as C designated initializers, one field per runtime struct
 * member in the header's order, from the field lists of the kernel table
 * (cstatic/kernels.def; compiler/ir/kernels.c checks each row against the
 * header's struct), so the generated code reads like the header. Floats are
 * exact hex-float literals.
 */
#include <inttypes.h>
#include <string.h>

#include "cg.h"

/* A field list; with wrap set, lines break before 80 columns. */
typedef struct fields {
  cs_sbuf *b;
  const char *indent;
  size_t line_start; /* offset in b where the current line starts */
  int count;
  int wrap;
  int *needs_math;
} fields;

enum { LINE_WIDTH = 80 };

/* The separator before a field of len characters: ", " or a line break. */
static void field_sep(fields *f, size_t len) {
  if (f->count > 0) {
    cs_sbuf_puts(f->b, ",");
    if (f->wrap && f->b->len - f->line_start + len + 3 > LINE_WIDTH) {
      f->line_start = f->b->len + 1;
      cs_sbuf_puts(f->b, "\n");
      cs_sbuf_puts(f->b, f->indent);
    } else {
      cs_sbuf_puts(f->b, " ");
    }
  }
  f->count++;
}

static void field_text(fields *f, const char *text) {
  field_sep(f, strlen(text));
  cs_sbuf_puts(f->b, text);
}

/* ".name = value" (written piece by piece: a large model has millions). */
static void field_named(fields *f, const char *name, const char *value) {
  field_sep(f, 4 + strlen(name) + strlen(value));
  cs_sbuf_cat(f->b, ".", name, " = ", value);
}

static void field_int(fields *f, const char *name, int32_t v) {
  char num[24];
  field_named(f, name, cs_c_int32(v, num));
}

/* Enum-valued fields print their enumerator's name (no magic numbers);
 * an out-of-range value prints as a number so the kernel rejects it. */
static void field_enum(fields *f, const char *name, int32_t v, const char *const *names, int n) {
  if (v >= 0 && v < n && names[v]) {
    field_named(f, name, names[v]);
  } else {
    field_int(f, name, v);
  }
}


static void field_float(fields *f, const char *name, float v) {
  char num[40];
  cs_c_float(v, num);
  if (num[0] == 'N' || num[0] == 'I' || num[1] == 'I') *f->needs_math = 1;
  field_named(f, name, num);
}

static void field_ints(fields *f, const char *name, const int32_t *v, int n) {
  cs_sbuf t = {0};
  char num[24];
  cs_sbuf_printf(&t, ".%s = {", name);
  for (int i = 0; i < n; i++) cs_sbuf_printf(&t, "%s%s", i ? ", " : "", cs_c_int32(v[i], num));
  cs_sbuf_puts(&t, "}");
  cs_sbuf_taint(f->b, &t);
  field_text(f, t.s ? t.s : "");
  cs_sbuf_free(&t);
}

/* Nested struct ".name = {…}": built in tmp, then added as one field; in
 * wrap mode it starts on its own line. indent: the caller's buffer for the
 * nested list's indent (one per nesting level). */
enum { INDENT_MAX = 64 };
static fields nested_begin(fields *f, const char *name, cs_sbuf *tmp, char indent[INDENT_MAX]) {
  /* Continuation lines of a nested list go 4 columns deeper. */
  snprintf(indent, INDENT_MAX, "%s    ", f->indent);
  fields g = {tmp, indent, 0, 0, f->wrap, f->needs_math};
  cs_sbuf_printf(tmp, ".%s = {", name);
  /* Continuation lines of the nested list are measured from this line's
   * indent, as they will be once spliced in. */
  g.line_start = 0;
  if (f->wrap) tmp->len = 0, cs_sbuf_printf(tmp, "%s.%s = {", f->indent, name);
  return g;
}

static void nested_end(fields *f, cs_sbuf *tmp) {
  cs_sbuf_puts(tmp, "}");
  cs_sbuf_taint(f->b, tmp);
  const char *text = tmp->s ? tmp->s : "";
  if (f->wrap) {
    if (f->count > 0) cs_sbuf_puts(f->b, ",\n");
    else if (f->b->len > f->line_start) cs_sbuf_puts(f->b, "\n");
    f->line_start = f->b->len;
    cs_sbuf_puts(f->b, text);
    const char *nl = strrchr(text, '\n');
    if (nl) f->line_start = f->b->len - strlen(nl + 1);
    f->count++;
  } else {
    field_text(f, text);
  }
  cs_sbuf_free(tmp);
}

static int clamp_rank(int32_t r) { return r < 0 ? 0 : r > TIDSP_MAX_RANK ? TIDSP_MAX_RANK : r; }

/* An ARRAY field: a static int32_t array named `name`, one entry per input,
 * from the node attribute the field names, defined in pre. */
static cs_status array_field(const cs_node *n, const cs_kfield *k, fields *f, const char *name, cs_sbuf *pre) {
  int cnt = 0;
  const int64_t *len = cs_node_attr_ints(n, k->attr, &cnt);
  if (!len || cnt != n->n_inputs)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' (%s) has %d %s entries for %d inputs",
                    n->name ? n->name : "?", cs_op_name(n->op), len ? cnt : 0, k->attr, n->n_inputs);
  cs_sbuf_printf(pre, "static const int32_t %s[%d] = {", name, cnt);
  for (int i = 0; i < cnt; i++) {
    if (len[i] < 0 || len[i] > INT32_MAX)
      return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' %s[%d] = %" PRId64 " is out of range",
                      n->name ? n->name : "?", k->attr, i, len[i]);
    char num[24];
    if (i) cs_sbuf_puts(pre, ", ");
    cs_sbuf_puts(pre, cs_c_int32((int32_t)len[i], num));
  }
  cs_sbuf_puts(pre, "};\n");
  field_named(f, k->name, name);
  return CS_OK;
}

/* The fields of params struct st at p, in the order of the table
 * (cstatic/kernels.def); q: the kernel has an integer output. */
static cs_status struct_fields(const cs_node *n, const cs_kstruct *st, const unsigned char *p, int q, fields *f,
                               const char *name, cs_sbuf *pre) {
  for (const cs_kfield *k = st->fields; k->owner == st; k++) {
    if (!cs_kfield_present(k, p, q)) continue;
    const unsigned char *a = p + k->offset;
    int32_t v;
    memcpy(&v, a, sizeof v);
    switch (k->kind) {
      case CS_KF_INT: field_int(f, k->name, v); break;
      case CS_KF_FLOAT: {
        float x;
        memcpy(&x, a, sizeof x);
        field_float(f, k->name, x);
        break;
      }
      case CS_KF_ENUM: field_enum(f, k->name, v, k->names, k->n_names); break;
      case CS_KF_INTS: {
        int32_t cnt, x[TIDSP_MAX_RANK];
        memcpy(&cnt, p + k->count_offset, sizeof cnt);
        memcpy(x, a, sizeof x);
        field_ints(f, k->name, x, clamp_rank(cnt));
        break;
      }
      case CS_KF_STRUCT: {
        cs_sbuf tmp = {0};
        char indent[INDENT_MAX];
        fields g = nested_begin(f, k->name, &tmp, indent);
        cs_status st2 = struct_fields(n, k->nested, a, q, &g, name, pre);
        nested_end(f, &tmp);
        if (st2 != CS_OK) return st2;
        break;
      }
      case CS_KF_BYTES: {
        char text[160];
        int len = snprintf(text, sizeof text, ".%s = {", k->name);
        for (int i = 0; i < k->count && len < (int)sizeof text - 8; i++)
          len += snprintf(text + len, sizeof text - (size_t)len, "%s0x%02x", i ? ", " : "", a[i]);
        snprintf(text + len, sizeof text - (size_t)len, "}");
        field_text(f, text);
        break;
      }
      case CS_KF_ARRAY: {
        cs_status st2 = array_field(n, k, f, name, pre);
        if (st2 != CS_OK) return st2;
        break;
      }
    }
  }
  return CS_OK;
}

static cs_status params_body(const cs_node *n, fields *fp, const char *name, cs_sbuf *pre) {
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  if (!ki || !ki->params)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' op %s has no param struct",
                    n->name ? n->name : "?", cs_op_name(n->op));
  fields f = *fp;
  cs_status st = struct_fields(n, ki->params, (const unsigned char *)&n->k, cs_kernel_has_q_fields(ki), &f, name, pre);
  *fp = f;
  return st;
}

cs_status cs_kernel_params(const cs_graph *g, const cs_node *n, const char *indent, size_t col0,
                           const char *name, cs_sbuf *pre, cs_sbuf *b, int *needs_math) {
  (void)g;
  /* One line when it fits, else one field list per line after "{". */
  cs_sbuf line = {0}, scratch = {0};
  fields f = {&line, indent, 0, 0, 0, needs_math};
  cs_sbuf_puts(&line, "{");
  cs_status st = params_body(n, &f, name, pre);
  cs_sbuf_puts(&line, "}");
  if (st == CS_OK && col0 + line.len + 1 <= LINE_WIDTH && !line.oom) {
    cs_sbuf_puts(b, line.s);
    cs_sbuf_free(&line);
    return CS_OK;
  }
  cs_sbuf_taint(b, &line); /* no other layout on the word of a failed allocation */
  cs_sbuf_free(&line);
  if (st != CS_OK) return st;
  cs_sbuf_puts(b, "{\n");
  cs_sbuf_puts(b, indent);
  f = (fields){b, indent, b->len - strlen(indent), 0, 1, needs_math};
  st = params_body(n, &f, name, &scratch); /* pre was written by the first pass */
  cs_sbuf_free(&scratch);
  cs_sbuf_puts(b, "}");
  return st;
}

/* MMALIB extern kernels: the int32 arguments after the output pointer,
 * one per line with its name from the header, e.g. "/ * C_in * / 64". */
cs_status cs_kernel_extern_call_args(const cs_node *n, const char *indent, cs_sbuf *b) {
  return cs_kernel_extern_call_args_with(n, indent, NULL, b);
}

cs_status cs_kernel_extern_call_args_with(const cs_node *n, const char *indent, const char *const *expr,
                                          cs_sbuf *b) {
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  const char *names = ki && ki->call == CS_KCALL_EXTERN ? ki->args : NULL;
  int cnt = 0;
  const int64_t *v = cs_node_attr_ints(n, "mm_args", &cnt);
  int want = 0;
  for (const char *p = names; p && *p; p++) want += *p == ',';
  if (names) want++;
  if (!names || !v || cnt != want)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' (%s) has %d int32 arguments, its extern takes %d",
                    n->name ? n->name : "?", cs_op_name(n->op), v ? cnt : 0, want);
  const char *p = names;
  for (int i = 0; i < cnt; i++) {
    size_t len = strcspn(p, ",");
    char num[24];
    if (v[i] < INT32_MIN || v[i] > INT32_MAX)
      return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' argument %.*s = %lld is not an int32",
                      n->name ? n->name : "?", (int)len, p, (long long)v[i]);
    cs_sbuf_printf(b, ",\n%s/* %.*s */ %s", indent, (int)len, p,
                   expr && expr[i] ? expr[i] : cs_c_int32((int32_t)v[i], num));
    p += len;
    while (*p == ',' || *p == ' ') p++;
  }
  return CS_OK;
}
