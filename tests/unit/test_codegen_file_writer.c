/*
 * test_codegen_file_writer.c — the lib*.c writer thread (file_writer.c):
 * every queued text reaches its file, in full, more texts than the queue
 * holds; the runtime names of the texts are marked; the first failure is
 * the error (a missing directory: "cannot write DIR/lib0.c", returned by a
 * later put or by finish); a text that ran out of memory is refused at once.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/cg.h"
#include "test_codegen_graphs.h"
#include "unit.h"

static int any(const unsigned char *used) {
  for (int i = 0; i < CS_RUNTIME_FILES_MAX; i++)
    if (used[i]) return 1;
  return 0;
}

static void test_writes_every_file(void) {
  char dir[] = "/tmp/cs_file_writer_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  static cs_cg cg; /* no manifest records: only the runtime names */
  memset(&cg, 0, sizeof cg);
  cs_file_writer *w = cs_file_writer_start(&cg);
  CHECK(w != NULL);
  enum { N = 23 }; /* more than the queue */
  for (int i = 0; i < N; i++) {
    cs_sbuf b = {0};
    /* a comment naming a kernel marks nothing; only lib7.c calls one */
    cs_sbuf_printf(&b, "/* file %d: tidsp_unary_f32 */\n", i);
    for (int k = 0; k < 1000 * i; k++) cs_sbuf_printf(&b, "int x%d_%d;\n", i, k);
    if (i == 7) cs_sbuf_puts(&b, "int32_t f(void) { return tidsp_unary_f32(0, 0, 0); }\n");
    char name[32];
    snprintf(name, sizeof name, "lib%d.c", i);
    CHECK(cs_file_writer_put(w, dir, name, &b, -1, 0, 0) == CS_OK);
    CHECK(b.s == NULL && b.len == 0); /* taken over */
  }
  CHECK(cs_file_writer_finish(w) == CS_OK);
  CHECK(any(cg.runtime_used));
  for (int i = 0; i < N; i++) {
    char path[256], head[64];
    snprintf(path, sizeof path, "%s/lib%d.c", dir, i);
    size_t len = 0;
    char *s = tg_read_file(path, &len);
    CHECK_MSG(s != NULL, "%s missing", path);
    if (!s) continue;
    snprintf(head, sizeof head, "/* file %d: tidsp_unary_f32 */\n", i);
    CHECK(strncmp(s, head, strlen(head)) == 0);
    char last[64];
    if (i) {
      snprintf(last, sizeof last, "int x%d_%d;\n", i, 1000 * i - 1);
      CHECK_MSG(i == 7 || (len > strlen(last) && !strcmp(s + len - strlen(last), last)), "%s cut short", path);
    }
    free(s);
    unlink(path);
  }
  rmdir(dir);

  /* the same texts without a runtime call mark nothing */
  memset(&cg, 0, sizeof cg);
  CHECK(mkdtemp(strcpy(dir, "/tmp/cs_file_writer_XXXXXX")) != NULL);
  w = cs_file_writer_start(&cg);
  cs_sbuf b = {0};
  cs_sbuf_puts(&b, "/* tidsp_unary_f32 */ static const char *s = \"tidsp_unary_f32\";\n");
  CHECK(cs_file_writer_put(w, dir, "lib0.c", &b, -1, 0, 0) == CS_OK);
  CHECK(cs_file_writer_finish(w) == CS_OK);
  CHECK(!any(cg.runtime_used));
  char path[256];
  snprintf(path, sizeof path, "%s/lib0.c", dir);
  unlink(path);
  rmdir(dir);
}

static void test_first_failure_is_the_error(void) {
  static cs_cg cg;
  cs_file_writer *w = cs_file_writer_start(&cg);
  const char *dir = "/nonexistent/cs_file_writer";
  cs_status st = CS_OK;
  for (int i = 0; i < 40 && st == CS_OK; i++) {
    cs_sbuf b = {0};
    cs_sbuf_puts(&b, "int x;\n");
    char name[32];
    snprintf(name, sizeof name, "lib%d.c", i);
    st = cs_file_writer_put(w, dir, name, &b, -1, 0, 0);
  }
  cs_status fin = cs_file_writer_finish(w);
  CHECK(fin == CS_ERR_IO);
  CHECK_MSG(!strcmp(cs_error_message(), "cannot write /nonexistent/cs_file_writer/lib0.c"), "%s",
            cs_error_message());
  CHECK(st == CS_OK || st == CS_ERR_IO);

  /* a text that ran out of memory: refused, naming the file */
  w = cs_file_writer_start(&cg);
  cs_sbuf b = {0};
  cs_sbuf_puts(&b, "int x;\n");
  b.oom = 1;
  CHECK(cs_file_writer_put(w, "/tmp", "lib3.c", &b, -1, 0, 0) == CS_ERR_NOMEM);
  CHECK_MSG(strstr(cs_error_message(), "out of memory writing lib3.c") != NULL, "%s", cs_error_message());
  CHECK(b.s == NULL);
  CHECK(cs_file_writer_finish(w) == CS_OK);
  CHECK(cs_file_writer_finish(NULL) == CS_OK);
}

int main(void) {
  test_writes_every_file();
  test_first_failure_is_the_error();
  UNIT_MAIN_END();
}
