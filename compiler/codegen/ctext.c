/*
 * Text helpers: a growable string and C literal formatting. Floats are
 * written as hex-float literals, which are exact: the generated constant
 * is bit-identical to the compiler's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

void cs_sbuf_vprintf(cs_sbuf *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) { b->oom = 1; return; }
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) { b->oom = 1; return; }
    b->s = s;
    b->cap = cap;
  }
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void cs_sbuf_printf(cs_sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cs_sbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

void cs_sbuf_puts(cs_sbuf *b, const char *s) { cs_sbuf_printf(b, "%s", s); }

void cs_sbuf_free(cs_sbuf *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}

const char *cs_c_float(float f, char *buf) {
  if (isnan(f)) return strcpy(buf, "NAN");
  if (isinf(f)) return strcpy(buf, f > 0 ? "INFINITY" : "-INFINITY");
  snprintf(buf, 40, "%af", (double)f);
  return buf;
}

const char *cs_c_int32(int32_t v, char *buf) {
  if (v == INT32_MIN) return strcpy(buf, "(-2147483647 - 1)");
  snprintf(buf, 24, "%" PRId32, v);
  return buf;
}

void cs_c_comment_text(cs_sbuf *b, const char *s) {
  if (!s) return;
  char prev = 0;
  for (const char *p = s; *p; p++) {
    char c = *p;
    if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e) c = '?';
    /* Never close the comment, never open a nested one. */
    if ((prev == '*' && c == '/') || (prev == '/' && c == '*')) cs_sbuf_puts(b, " ");
    cs_sbuf_printf(b, "%c", c);
    prev = c;
  }
}

void cs_c_string(cs_sbuf *b, const char *s) {
  cs_sbuf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') cs_sbuf_printf(b, "\\%c", *p);
    else if (*p == '?') cs_sbuf_puts(b, "\\?"); /* no trigraphs */
    else if (*p < 0x20 || *p > 0x7e) cs_sbuf_printf(b, "\\%03o", *p);
    else cs_sbuf_printf(b, "%c", *p);
  }
  cs_sbuf_puts(b, "\"");
}

void cs_c_shape_text(cs_sbuf *b, const cs_value *v) {
  cs_sbuf_printf(b, "%s[", cs_dtype_name(v->dtype));
  for (int i = 0; i < v->rank; i++)
    cs_sbuf_printf(b, "%s%" PRId64, i ? "," : "", v->shape[i]);
  cs_sbuf_puts(b, "]");
}

const char *cs_cg_tidsp_dtype_name(cs_dtype t) {
  const char *name = cs_tidsp_dtype_name(cs_dtype_to_tidsp(t));
  return name ? name : "0";
}
