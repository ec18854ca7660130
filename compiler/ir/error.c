/*
 * error.c — the compiler's last error message and the status strings.
 *
 * One buffer per thread: a compile runs on one thread from start to end
 * and its error is read right after the call that failed, so the message
 * belongs to that compile, and compiles on other threads (a library user's
 * thread pool, a test) never see or overwrite it (the code generator's
 * file-writer thread keeps its failure and the compile's thread reports
 * it: codegen/file_writer.c). Thread-local rather than
 * a field of a compile context: every stage reports through cs_error, at
 * some 260 call sites from the frontend to codegen, and none of them would
 * gain from a context argument. The message is forced onto one line
 * (control characters become '?') because names inside it come from the
 * model file, which may hold anything.
 */
#include "ir.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char err_buf[16384];

const char *cs_status_str(cs_status s) {
  switch (s) {
#define CS_X_CASE(name, text) \
  case name:                  \
    return text;
    CS_STATUS_LIST(CS_X_CASE)
#undef CS_X_CASE
  }
  return "unknown status";
}

cs_status cs_error(cs_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err_buf, sizeof err_buf, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof err_buf) {
    /* Truncated: say so rather than cut a name silently. */
    memcpy(err_buf + sizeof err_buf - 5, "...", 4);
  }
  for (char *p = err_buf; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c < 0x20 || c == 0x7f) *p = '?';
  }
  return s;
}

const char *cs_error_message(void) { return err_buf; }

void cs_error_clear(void) { err_buf[0] = '\0'; }
