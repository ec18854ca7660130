/*
 * fs.c — file helpers shared by the CLI (compiler/cli/fsutil.c has the
 * CLI's own) and the code generator (the TI project's copies).
 */
#include "fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

cs_status cs_fs_copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in) return cs_error(CS_ERR_IO, "cannot open %s: %s", from, strerror(errno));
  FILE *out = fopen(to, "wb");
  if (!out) {
    int e = errno;
    fclose(in);
    return cs_error(CS_ERR_IO, "cannot write %s: %s", to, strerror(e));
  }
  char buf[65536];
  size_t n;
  int bad = 0;
  while (!bad && (n = fread(buf, 1, sizeof buf, in)) > 0) bad = fwrite(buf, 1, n, out) != n;
  bad |= ferror(in);
  fclose(in);
  if (fclose(out) != 0) bad = 1;
  return bad ? cs_error(CS_ERR_IO, "cannot copy %s to %s", from, to) : CS_OK;
}
