#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cs_cli_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("cstatic: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CS_EXIT_FAIL;
}

void cs_cli_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("cstatic: warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cs_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("cstatic: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see 'cstatic %s%s--help')\n", cmd ? cmd : "", cmd ? " " : "");
  va_end(ap);
  return CS_EXIT_USAGE;
}

int cs_cli_is_help(const char *arg) {
  return !strcmp(arg, "-h") || !strcmp(arg, "--help") || !strcmp(arg, "help");
}

int cs_cli_one_operand(int argc, char **argv, const char *cmd, const char *usage, const char *what,
                       const char **operand) {
  *operand = NULL;
  for (int i = 1; i < argc; i++) {
    if (cs_cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return CS_EXIT_OK;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cs_cli_usage_error(cmd, "unknown option %s", argv[i]);
    } else if (!*operand) {
      *operand = argv[i];
    } else {
      return cs_cli_usage_error(cmd, "unexpected argument %s", argv[i]);
    }
  }
  if (!*operand) return cs_cli_usage_error(cmd, "no %s given", what);
  return -1;
}

int cs_cli_opt(int argc, char **argv, int *i, const char *name, const char *alias,
               const char **value) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (!strncmp(a, name, n) && a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (!strcmp(a, name) || (alias && !strcmp(a, alias))) {
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
  }
  return 0;
}
