#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The text collects in j->buf and reaches the FILE in large writes: a
 * manifest of a 100 000-layer model is tens of MB of small pieces, and a
 * stdio call per piece (each taking the stream's lock) dominated writing
 * it. */
static void flush(cs_json *j) {
  if (!j->len) return;
  if (j->f) {
    fwrite(j->buf, 1, j->len, j->f);
  } else if (!j->oom) {
    if (j->mem_len + j->len > j->mem_cap) {
      size_t cap = j->mem_cap ? j->mem_cap : sizeof j->buf;
      while (cap < j->mem_len + j->len) cap *= 2;
      char *m = realloc(j->mem, cap);
      if (!m) {
        j->oom = 1;
        j->len = 0;
        return;
      }
      j->mem = m;
      j->mem_cap = cap;
    }
    memcpy(j->mem + j->mem_len, j->buf, j->len);
    j->mem_len += j->len;
  }
  j->len = 0;
}

static void put(cs_json *j, const char *s, size_t n) {
  while (j->len + n > sizeof j->buf) { /* (a long text: in buffer-sized pieces) */
    size_t k = sizeof j->buf - j->len;
    memcpy(j->buf + j->len, s, k);
    j->len += k;
    s += k;
    n -= k;
    flush(j);
  }
  memcpy(j->buf + j->len, s, n);
  j->len += n;
}

static void putc_(cs_json *j, char c) {
  if (j->len == sizeof j->buf) flush(j);
  j->buf[j->len++] = c;
}

static void puts_(cs_json *j, const char *s) { put(j, s, strlen(s)); }

/* By hand, not fprintf: layers, shapes and offsets are most of the numbers. */
static void put_int(cs_json *j, long long v) {
  char tmp[24], *p = tmp + sizeof tmp;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do *--p = (char)('0' + u % 10); while (u /= 10);
  if (v < 0) *--p = '-';
  put(j, p, (size_t)(tmp + sizeof tmp - p));
}

void cs_json_init(cs_json *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->count[0] = 0;
  j->len = 0;
  j->mem = NULL;
  j->mem_len = j->mem_cap = 0;
  j->oom = 0;
}

void cs_json_init_fragment(cs_json *j, int depth, int members) {
  cs_json_init(j, NULL);
  j->depth = depth > 0 && depth < CS_JSON_MAX_DEPTH ? depth : 0;
  j->count[j->depth] = members;
}

char *cs_json_fragment(cs_json *j, size_t *len, int *oom) {
  flush(j);
  char *m = j->oom ? NULL : j->mem;
  if (j->oom) free(j->mem);
  *len = m ? j->mem_len : 0;
  *oom = j->oom;
  j->mem = NULL;
  j->mem_len = j->mem_cap = 0;
  return m;
}

void cs_json_splice(cs_json *j, const char *text, size_t len, int members) {
  if (text) put(j, text, len);
  j->count[j->depth] += members;
}

/* Runs of plain characters go out in one piece: a manifest of a large
 * model is mostly names. */
static void escaped(cs_json *j, const char *s) {
  putc_(j, '"');
  const unsigned char *p = (const unsigned char *)(s ? s : ""), *run = p;
  for (; *p; p++) {
    /* (one test for the common case: no control character, quote or
     * backslash is above '\\') */
    if (*p > '\\' || (*p >= 0x20 && *p != '"' && *p != '\\')) continue; /* UTF-8 passes through */
    if (p > run) put(j, (const char *)run, (size_t)(p - run));
    run = p + 1;
    switch (*p) {
      case '"': puts_(j, "\\\""); break;
      case '\\': puts_(j, "\\\\"); break;
      case '\n': puts_(j, "\\n"); break;
      case '\r': puts_(j, "\\r"); break;
      case '\t': puts_(j, "\\t"); break;
      default: {
        char u[8];
        snprintf(u, sizeof u, "\\u%04x", *p);
        puts_(j, u);
      }
    }
  }
  if (p > run) put(j, (const char *)run, (size_t)(p - run));
  putc_(j, '"');
}

static void indent(cs_json *j) {
  static const char spaces[] = "                                                                ";
  for (int n = 2 * j->depth; n > 0; n -= (int)sizeof spaces - 1)
    put(j, spaces, n < (int)sizeof spaces - 1 ? (size_t)n : sizeof spaces - 1);
}

/* Comma, newline and indentation before a member, then its key. */
static void member(cs_json *j, const char *key) {
  if (j->count[j->depth]++ > 0) putc_(j, ',');
  if (j->depth > 0) {
    putc_(j, '\n');
    indent(j);
  }
  if (key) {
    escaped(j, key);
    put(j, ": ", 2);
  }
}

static void open(cs_json *j, const char *key, char c) {
  member(j, key);
  putc_(j, c);
  if (j->depth + 1 < CS_JSON_MAX_DEPTH) j->depth++;
  j->count[j->depth] = 0;
}

/* The top-level value's end flushes the buffer to the FILE. */
static void close_(cs_json *j, char c) {
  int had = j->count[j->depth] > 0;
  if (j->depth > 0) j->depth--;
  if (had) {
    putc_(j, '\n');
    indent(j);
  }
  putc_(j, c);
  if (j->depth == 0) {
    putc_(j, '\n');
    flush(j);
  }
}

void cs_json_begin_object(cs_json *j, const char *key) { open(j, key, '{'); }
void cs_json_end_object(cs_json *j) { close_(j, '}'); }
void cs_json_begin_array(cs_json *j, const char *key) { open(j, key, '['); }
void cs_json_end_array(cs_json *j) { close_(j, ']'); }

void cs_json_string(cs_json *j, const char *key, const char *s) {
  member(j, key);
  escaped(j, s);
}

void cs_json_int(cs_json *j, const char *key, int64_t v) {
  member(j, key);
  put_int(j, (long long)v);
}

void cs_json_double(cs_json *j, const char *key, double v) {
  member(j, key);
  if (isfinite(v)) {
    char num[32];
    snprintf(num, sizeof num, "%.9g", v);
    puts_(j, num);
  } else {
    puts_(j, "null");
  }
}

void cs_json_bool(cs_json *j, const char *key, int v) {
  member(j, key);
  puts_(j, v ? "true" : "false");
}

void cs_json_null(cs_json *j, const char *key) {
  member(j, key);
  puts_(j, "null");
}

void cs_json_ints(cs_json *j, const char *key, const int64_t *v, int n) {
  member(j, key);
  putc_(j, '[');
  for (int i = 0; i < n; i++) {
    if (i) put(j, ", ", 2);
    put_int(j, (long long)v[i]);
  }
  putc_(j, ']');
}
