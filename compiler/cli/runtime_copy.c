/*
 * `cstatic compile --emit=runtime`: the output directory gets the runtime
 * a model needs beside its C, so that it builds alone with any C99
 * compiler (a microcontroller's toolchain):
 *
 *     DIR/lib0.c lib0.h weights.*        the model
 *     DIR/runtime/…                      the runtime files it calls into
 *                                        (manifest.json "runtime_sources")
 *     DIR/include/cstatic/…              the public headers
 *
 *     cc -IDIR -IDIR/include DIR/lib*.c $(find DIR/runtime -name '*.c') -lm
 *
 * The sources come from the prefix (PREFIX/share/cstatic/runtime; the build
 * tree links it to runtime/), the headers from PREFIX/include.
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "codegen/codegen.h"

/* dst_dir/NAME ← src_dir/NAME for each regular file of src_dir, then the
 * same for its subdirectories except the host stand-ins for TI's headers
 * (platform/ti_stub: the board has the real ones). */
static cs_status copy_headers(const char *src_dir, const char *dst_dir) {
  cs_status st = cs_fs_make_dirs(dst_dir);
  if (st != CS_OK) return st;
  DIR *d = opendir(src_dir);
  if (!d) return cs_error(CS_ERR_IO, "cannot read the runtime headers in %s", src_dir);
  struct dirent *e;
  while (st == CS_OK && (e = readdir(d))) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "ti_stub")) continue;
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/%s", src_dir, e->d_name);
    snprintf(to, sizeof to, "%s/%s", dst_dir, e->d_name);
    st = cs_fs_is_dir(from) ? copy_headers(from, to) : cs_fs_copy_file(from, to);
  }
  closedir(d);
  return st;
}

cs_status cs_copy_runtime(const char *dir, const unsigned char *used) {
  cs_toolchain tc;
  cs_status st = cs_toolchain_find(&tc);
  if (st != CS_OK) return st;
  char probe[4096 + 16];
  snprintf(probe, sizeof probe, "%s/tidsp.c", tc.runtime_src);
  if (!cs_fs_exists(probe))
    return cs_error(CS_ERR_IO, "--emit=runtime: the runtime's sources are not installed (%s is missing; set "
                    "CS_RUNTIME_SRC to a checkout's runtime/)", probe);
  for (int i = 0; st == CS_OK && i < cs_runtime_file_count(); i++) {
    if (!used[i]) continue;
    const char *rel = cs_runtime_file_path(i);
    char from[8192], to[8192], sub[8192];
    snprintf(from, sizeof from, "%s/%s", tc.runtime_src, rel);
    snprintf(to, sizeof to, "%s/runtime/%s", dir, rel);
    snprintf(sub, sizeof sub, "%s", to);
    *strrchr(sub, '/') = '\0';
    st = cs_fs_make_dirs(sub);
    if (st == CS_OK) st = cs_fs_copy_file(from, to);
  }
  if (st != CS_OK) return st;
  char from[8192], to[8192];
  snprintf(from, sizeof from, "%s/cstatic", tc.include_dir);
  snprintf(to, sizeof to, "%s/include/cstatic", dir);
  return copy_headers(from, to);
}
