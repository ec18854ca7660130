/* cstatic: the command line. One subcommand per file (cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cstatic/model.h"

#ifndef CS_VERSION
#define CS_VERSION "unknown"
#endif

static const char usage[] =
    "usage: cstatic <command> [options]\n"
    "\n"
    "Compile quantized (QDQ) ONNX models into standalone C for DSPs and any C99\n"
    "target, and run the result on this machine.\n"
    "\n"
    "commands:\n"
    "  compile MODEL.onnx -o DIR   generate lib0.c, lib0.h, weights and manifest\n"
    "  run DIR --input X.npy ...   build DIR for this machine and run it\n"
    "  build DIR                   build DIR for this machine as a shared library\n"
    "  inspect MODEL.onnx          summarize a model (ops, I/O, quantization)\n"
    "\n"
    "'cstatic <command> --help' describes a command. 'cstatic --version' prints\n"
    "the version; 'cstatic --prefix' the directory holding bin/cstatic, the\n"
    "runtime (lib/libtidsp.a, include/cstatic/), the CMake package\n"
    "(lib/cmake/cstatic) and lib/pkgconfig/cstatic.pc.\n";

static const struct {
  const char *name;
  int (*fn)(int, char **);
} commands[] = {
    {"compile", cs_cmd_compile},
    {"run", cs_cmd_run},
    {"build", cs_cmd_build},
    {"inspect", cs_cmd_inspect},
};

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage, stderr);
    return CS_EXIT_USAGE;
  }
  if (cs_cli_is_help(argv[1])) {
    fputs(usage, stdout);
    return CS_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
    printf("cstatic %s (model ABI %u)\n", CS_VERSION, TIDSP_MODEL_ABI_VERSION);
    return CS_EXIT_OK;
  }
  if (!strcmp(argv[1], "--prefix")) {
    char prefix[4096];
    if (cs_toolchain_prefix(prefix, sizeof prefix) != CS_OK) return cs_cli_fail("%s", cs_error_message());
    printf("%s\n", prefix);
    return CS_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
  return cs_cli_usage_error(NULL, "unknown command '%s' (commands: compile, run, build, inspect)", argv[1]);
}
