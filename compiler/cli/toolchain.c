/*
 * Where `cstatic run`, `cstatic build` and `compile --emit=module` find
 * what they compile generated C with: the host C compiler, the runtime
 * headers and the runtime library.
 *
 * The headers and the library are found relative to the cstatic binary
 * itself, in the layout that both the build tree and an installed prefix
 * have (cmake/install.cmake; a pip-installed package is such a prefix):
 *
 *     PREFIX/bin/cstatic
 *     PREFIX/include/cstatic/model.h     (build tree: a link to include/)
 *     PREFIX/lib/libtidsp.a
 *     PREFIX/share/cstatic/runtime/      the runtime's sources
 *                                        (build tree: a link to runtime/)
 *
 * so an installed or relocated cstatic never reaches back into the source
 * tree it was built from. The compiler is the one CMake built cstatic with
 * when it still exists, else `cc`. CS_C_COMPILER, CS_INCLUDE_DIR,
 * CS_TIDSP_LIB and CS_RUNTIME_SRC override each.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef CS_C_COMPILER
#define CS_C_COMPILER "cc"
#endif

static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/* The directory holding the running cstatic binary (symlinks resolved). */
static cs_status exe_dir(char *out, size_t n) {
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return cs_error(CS_ERR_IO, "cannot find the cstatic binary (/proc/self/exe: %s)", strerror(errno));
  exe[len] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  if ((size_t)snprintf(out, n, "%s", exe) >= n) return cs_error(CS_ERR_IO, "path too long: %s", exe);
  return CS_OK;
}

cs_status cs_toolchain_find(cs_toolchain *tc) {
  memset(tc, 0, sizeof *tc);
  const char *cc = env("CS_C_COMPILER");
  if (!cc) cc = access(CS_C_COMPILER, X_OK) == 0 ? CS_C_COMPILER : "cc";
  snprintf(tc->cc, sizeof tc->cc, "%s", cc);

  char dir[PATH_MAX] = "";
  const char *inc = env("CS_INCLUDE_DIR"), *lib = env("CS_TIDSP_LIB"), *src = env("CS_RUNTIME_SRC");
  if (!inc || !lib || !src) {
    cs_status st = exe_dir(dir, sizeof dir);
    if (st != CS_OK) return st;
  }
  if (inc) snprintf(tc->include_dir, sizeof tc->include_dir, "%s", inc);
  else snprintf(tc->include_dir, sizeof tc->include_dir, "%s/../include", dir);
  if (lib) snprintf(tc->tidsp_lib, sizeof tc->tidsp_lib, "%s", lib);
  else snprintf(tc->tidsp_lib, sizeof tc->tidsp_lib, "%s/../lib/libtidsp.a", dir);
  if (src) snprintf(tc->runtime_src, sizeof tc->runtime_src, "%s", src);
  else snprintf(tc->runtime_src, sizeof tc->runtime_src, "%s/../share/cstatic/runtime", dir);

  char header[PATH_MAX + 32];
  snprintf(header, sizeof header, "%s/cstatic/model.h", tc->include_dir);
  if (!cs_fs_exists(header))
    return cs_error(CS_ERR_IO, "runtime headers not found: %s is missing (%s; set CS_INCLUDE_DIR)", header,
                    inc ? "CS_INCLUDE_DIR" : "the include/ directory beside the cstatic binary's bin/");
  return CS_OK;
}

cs_status cs_toolchain_prefix(char *out, size_t n) {
  char dir[PATH_MAX], up[PATH_MAX + 4];
  cs_status st = exe_dir(dir, sizeof dir);
  if (st != CS_OK) return st;
  snprintf(up, sizeof up, "%s/..", dir);
  char *real = realpath(up, NULL);
  if (!real) return cs_error(CS_ERR_IO, "cannot resolve %s: %s", up, strerror(errno));
  int len = snprintf(out, n, "%s", real);
  free(real);
  if (len < 0 || (size_t)len >= n) return cs_error(CS_ERR_IO, "path too long");
  return CS_OK;
}
