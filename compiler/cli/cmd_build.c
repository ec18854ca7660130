/* cstatic build DIR: the host build of `cstatic run` alone, for programs
 * that load the model themselves (the Python Model does, over ctypes). */
#include <stdio.h>

#include "cli.h"

static const char usage[] =
    "usage: cstatic build DIR\n"
    "\n"
    "Build a compiled model (DIR from 'cstatic compile') for this machine as a\n"
    "shared library, DIR/.build/model.so, and print its path. It exports\n"
    "model_desc (cstatic/model.h); a later 'cstatic run' or 'build' reuses it\n"
    "while it is newer than DIR's sources.\n"
    "\n"
    "options:\n"
    "  -h, --help   this text\n";

int cs_cmd_build(int argc, char **argv) {
  const char *dir;
  int code = cs_cli_one_operand(argc, argv, "build", usage, "model directory", &dir);
  if (code >= 0) return code;
  if (!cs_fs_is_dir(dir)) return cs_cli_fail("model directory %s does not exist", dir);
  char so_path[4096];
  if (cs_host_build(dir, so_path, sizeof so_path) != CS_OK) return cs_cli_fail("%s", cs_error_message());
  printf("%s\n", so_path);
  return CS_EXIT_OK;
}
