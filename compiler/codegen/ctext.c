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

/* Room for `more` bytes and the terminator. */
static int sbuf_reserve(cs_sbuf *b, size_t more) {
  if (b->oom) return 0;
  if (b->len + more + 1 <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1) cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = 1;
    return 0;
  }
  b->s = s;
  b->cap = cap;
  return 1;
}

/* Formats straight into the free space, and a second time only when that
 * was too small (codegen prints a few hundred thousand pieces for a large
 * model: one pass each is the difference). */
void cs_sbuf_vprintf(cs_sbuf *b, const char *fmt, va_list ap) {
  if (!sbuf_reserve(b, 0)) return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->oom = 1;
    return;
  }
  if (b->len + (size_t)n + 1 > b->cap) {
    if (!sbuf_reserve(b, (size_t)n)) return;
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  }
  b->len += (size_t)n;
}

void cs_sbuf_printf(cs_sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cs_sbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

static void sbuf_append(cs_sbuf *b, const char *s, size_t n) {
  if (!sbuf_reserve(b, n)) return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void cs_sbuf_puts(cs_sbuf *b, const char *s) { sbuf_append(b, s, strlen(s)); }

void cs_sbuf_cat_(cs_sbuf *b, ...) {
  va_list ap;
  va_start(ap, b);
  for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *)) sbuf_append(b, s, strlen(s));
  va_end(ap);
}

void cs_sbuf_int(cs_sbuf *b, int64_t v) {
  char tmp[24], *p = tmp + sizeof tmp;
  uint64_t u = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
  do *--p = (char)('0' + u % 10); while (u /= 10);
  if (v < 0) *--p = '-';
  sbuf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

void cs_sbuf_hex(cs_sbuf *b, uint64_t v) {
  static const char hex[] = "0123456789abcdef";
  char tmp[24], *p = tmp + sizeof tmp;
  do *--p = hex[v & 0xf]; while (v >>= 4);
  *--p = 'x';
  *--p = '0';
  sbuf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

void cs_sbuf_free(cs_sbuf *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}

/* The text of printf("%af", (double)f), built directly: a float widened to
 * double is zero or normal, so it is 0x1.<hex digits>p<exponent> with the
 * trailing zero digits dropped (codegen writes one per parameter of every
 * layer; printf's %a cost more than the rest of a layer's call). */
const char *cs_c_float(float f, char *buf) {
  if (isnan(f)) return strcpy(buf, "NAN");
  if (isinf(f)) return strcpy(buf, f > 0 ? "INFINITY" : "-INFINITY");
  double d = f;
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  int biased = (int)((bits >> 52) & 0x7ff);
  uint64_t mant = bits & ((1ull << 52) - 1);
  if (biased == 0 && mant != 0) { /* unreachable from a float; stay exact */
    snprintf(buf, 40, "%af", d);
    return buf;
  }
  char *p = buf;
  if (bits >> 63) *p++ = '-';
  *p++ = '0';
  *p++ = 'x';
  *p++ = biased ? '1' : '0';
  if (mant) {
    static const char hex[] = "0123456789abcdef";
    *p++ = '.';
    int digits = 13;
    while ((mant & 0xf) == 0) mant >>= 4, digits--;
    for (int i = digits - 1; i >= 0; i--) *p++ = hex[(mant >> (4 * i)) & 0xf];
  }
  /* "p%+df" by hand: a large model writes millions of these */
  int e = biased ? biased - 1023 : 0;
  *p++ = 'p';
  *p++ = e < 0 ? '-' : '+';
  if (e < 0) e = -e;
  if (e >= 1000) *p++ = (char)('0' + e / 1000);
  if (e >= 100) *p++ = (char)('0' + e / 100 % 10);
  if (e >= 10) *p++ = (char)('0' + e / 10 % 10);
  *p++ = (char)('0' + e % 10);
  *p++ = 'f';
  *p = '\0';
  return buf;
}

const char *cs_c_int32(int32_t v, char *buf) {
  if (v == INT32_MIN) return strcpy(buf, "(-2147483647 - 1)");
  /* By hand, not snprintf: codegen writes millions of these on big graphs. */
  char digits[12];
  int n = 0;
  uint32_t u = v < 0 ? (uint32_t)-v : (uint32_t)v;
  do {
    digits[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  char *p = buf;
  if (v < 0) *p++ = '-';
  while (n) *p++ = digits[--n];
  *p = '\0';
  return buf;
}

void cs_c_comment_text(cs_sbuf *b, const char *s) {
  if (!s) return;
  char prev = 0;
  for (const char *p = s; *p; p++) {
    char c = *p;
    if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e) c = '?';
    /* Never close the comment, never open a nested one. */
    if ((prev == '*' && c == '/') || (prev == '/' && c == '*')) sbuf_append(b, " ", 1);
    sbuf_append(b, &c, 1);
    prev = c;
  }
}

void cs_c_string(cs_sbuf *b, const char *s) {
  cs_sbuf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') cs_sbuf_printf(b, "\\%c", *p);
    else if (*p == '?') cs_sbuf_puts(b, "\\?"); /* no trigraphs */
    else if (*p < 0x20 || *p > 0x7e) cs_sbuf_printf(b, "\\%03o", *p);
    else sbuf_append(b, (const char *)p, 1);
  }
  cs_sbuf_puts(b, "\"");
}

/* By hand, not printf: every layer's comment and offset macro has one. */
void cs_c_shape_text(cs_sbuf *b, const cs_value *v) {
  cs_sbuf_puts(b, cs_dtype_name(v->dtype));
  sbuf_append(b, "[", 1);
  for (int i = 0; i < v->rank; i++) {
    if (i) sbuf_append(b, ",", 1);
    cs_sbuf_int(b, v->shape[i]);
  }
  sbuf_append(b, "]", 1);
}

const char *cs_cg_tidsp_dtype_name(cs_dtype t) {
  const char *name = cs_tidsp_dtype_name(cs_dtype_to_tidsp(t));
  return name ? name : "0";
}
