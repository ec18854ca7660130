#include "json.h"

#include <math.h>

void cs_json_init(cs_json *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->count[0] = 0;
}

/* Runs of plain characters go out in one fwrite: a manifest of a large
 * model is mostly names, and a call per character dominated writing it. */
static void escaped(FILE *f, const char *s) {
  fputc('"', f);
  const unsigned char *p = (const unsigned char *)(s ? s : ""), *run = p;
  for (; *p; p++) {
    if (*p >= 0x20 && *p != '"' && *p != '\\') continue; /* UTF-8 passes through */
    if (p > run) fwrite(run, 1, (size_t)(p - run), f);
    run = p + 1;
    switch (*p) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default: fprintf(f, "\\u%04x", *p);
    }
  }
  if (p > run) fwrite(run, 1, (size_t)(p - run), f);
  fputc('"', f);
}

static void indent(FILE *f, int depth) {
  static const char spaces[] = "                                                                ";
  for (int n = 2 * depth; n > 0; n -= (int)sizeof spaces - 1)
    fwrite(spaces, 1, n < (int)sizeof spaces - 1 ? (size_t)n : sizeof spaces - 1, f);
}

/* Comma, newline and indentation before a member, then its key. */
static void member(cs_json *j, const char *key) {
  if (j->count[j->depth]++ > 0) fputc(',', j->f);
  if (j->depth > 0) {
    fputc('\n', j->f);
    indent(j->f, j->depth);
  }
  if (key) {
    escaped(j->f, key);
    fputs(": ", j->f);
  }
}

static void open(cs_json *j, const char *key, char c) {
  member(j, key);
  fputc(c, j->f);
  if (j->depth + 1 < CS_JSON_MAX_DEPTH) j->depth++;
  j->count[j->depth] = 0;
}

static void close_(cs_json *j, char c) {
  int had = j->count[j->depth] > 0;
  if (j->depth > 0) j->depth--;
  if (had) {
    fputc('\n', j->f);
    indent(j->f, j->depth);
  }
  fputc(c, j->f);
  if (j->depth == 0) fputc('\n', j->f);
}

void cs_json_begin_object(cs_json *j, const char *key) { open(j, key, '{'); }
void cs_json_end_object(cs_json *j) { close_(j, '}'); }
void cs_json_begin_array(cs_json *j, const char *key) { open(j, key, '['); }
void cs_json_end_array(cs_json *j) { close_(j, ']'); }

void cs_json_string(cs_json *j, const char *key, const char *s) {
  member(j, key);
  escaped(j->f, s);
}

void cs_json_int(cs_json *j, const char *key, int64_t v) {
  member(j, key);
  fprintf(j->f, "%lld", (long long)v);
}

void cs_json_double(cs_json *j, const char *key, double v) {
  member(j, key);
  if (isfinite(v)) fprintf(j->f, "%.9g", v);
  else fputs("null", j->f);
}

void cs_json_bool(cs_json *j, const char *key, int v) {
  member(j, key);
  fputs(v ? "true" : "false", j->f);
}

void cs_json_null(cs_json *j, const char *key) {
  member(j, key);
  fputs("null", j->f);
}

void cs_json_ints(cs_json *j, const char *key, const int64_t *v, int n) {
  member(j, key);
  fputc('[', j->f);
  for (int i = 0; i < n; i++) fprintf(j->f, "%s%lld", i ? ", " : "", (long long)v[i]);
  fputc(']', j->f);
}
