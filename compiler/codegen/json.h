/*
 * json.h — a small streaming JSON writer (manifest.json). Keys and strings
 * are escaped; commas and indentation are tracked by nesting depth. The
 * text is buffered: it reaches the FILE when the top-level value closes
 * (the caller checks ferror/fclose after that).
 */
#ifndef CSTATIC_CODEGEN_JSON_H
#define CSTATIC_CODEGEN_JSON_H

#include <stdint.h>
#include <stdio.h>

enum { CS_JSON_MAX_DEPTH = 32 };

typedef struct cs_json {
  FILE *f; /* NULL: a fragment kept in memory (cs_json_init_fragment) */
  int depth;
  int count[CS_JSON_MAX_DEPTH]; /* members written at each depth */
  size_t len;                   /* bytes in buf not yet written */
  char *mem;                    /* a fragment's text */
  size_t mem_len, mem_cap;
  int oom;                      /* a fragment ran out of memory */
  char buf[1 << 16];
} cs_json;

void cs_json_init(cs_json *j, FILE *f);
/* A fragment: members of a container open at `depth` that already holds
 * `members` members, written to memory exactly as the streaming writer
 * would write them there; cs_json_fragment takes its text (malloc'd, NULL
 * when empty or out of memory: *oom), cs_json_splice adds it to a writer
 * at that depth. Fragments can be made on other threads. */
void cs_json_init_fragment(cs_json *j, int depth, int members);
char *cs_json_fragment(cs_json *j, size_t *len, int *oom);
void cs_json_splice(cs_json *j, const char *text, size_t len, int members);
/* key is NULL inside arrays (and for the top-level value). */
void cs_json_begin_object(cs_json *j, const char *key);
void cs_json_end_object(cs_json *j);
void cs_json_begin_array(cs_json *j, const char *key);
void cs_json_end_array(cs_json *j);
void cs_json_string(cs_json *j, const char *key, const char *s);
void cs_json_int(cs_json *j, const char *key, int64_t v);
/* Non-finite numbers are written as null (JSON has no NaN). */
void cs_json_double(cs_json *j, const char *key, double v);
void cs_json_bool(cs_json *j, const char *key, int v);
void cs_json_null(cs_json *j, const char *key);
/* [a, b, c] on one line. */
void cs_json_ints(cs_json *j, const char *key, const int64_t *v, int n);

#endif
