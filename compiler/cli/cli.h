/*
 * cli.h — the `cstatic` command line: subcommands and their helpers.
 *
 * Every subcommand returns the process exit status: 0 success, 1 failure
 * (the message is already printed, one line naming the thing), 2 usage.
 */
#ifndef CSTATIC_CLI_H
#define CSTATIC_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cstatic/profile_report.h"
#include "util/fs.h"
#include "ir.h"

enum { CS_EXIT_OK = 0, CS_EXIT_FAIL = 1, CS_EXIT_USAGE = 2 };

int cs_cmd_compile(int argc, char **argv);
int cs_cmd_run(int argc, char **argv);
int cs_cmd_inspect(int argc, char **argv);
int cs_cmd_build(int argc, char **argv);

/* "cstatic: error: …" on stderr; returns CS_EXIT_FAIL. */
int cs_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "cstatic: warning: …" on stderr (the compile goes on). */
void cs_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a usage error, with a hint to --help; returns CS_EXIT_USAGE. */
int cs_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Option matching: "--name=value" or "--name value" (or a short alias
 * "-x value"). On a match advances *i past the value, sets *value and
 * returns 1; returns -1 when the value is missing. */
int cs_cli_opt(int argc, char **argv, int *i, const char *name, const char *alias,
               const char **value);
int cs_cli_is_help(const char *arg);
/* The argument parsing of a command that takes one operand and no options
 * (`cstatic build DIR`, `cstatic inspect MODEL.onnx`): returns -1 with
 * *operand set, or the exit code (the usage text printed for --help; a
 * usage error naming `what` when the operand is missing). */
int cs_cli_one_operand(int argc, char **argv, const char *cmd, const char *usage, const char *what,
                       const char **operand);
/* --max-memory's SIZE: bytes or K/M/G/T (binary) suffixed; 0 if malformed
 * (max_memory.c). The default is CS_MEM_LIMIT_DEFAULT (ir.h). */
int cs_cli_parse_bytes(const char *s, size_t *out);

/* ---- file system ---------------------------------------------------- */

int cs_fs_is_dir(const char *path);
int cs_fs_exists(const char *path);
/* Modification time in nanoseconds, or -1 if missing. */
int64_t cs_fs_mtime(const char *path);
/* Remove a file or a directory tree; 0 on success. */
int cs_fs_remove_tree(const char *path);
/* A fresh empty directory next to `path` ("<dir>/.<base>.<tag>-XXXXXX"),
 * so that rename() onto path stays on one file system. */
cs_status cs_fs_make_sibling_temp(const char *path, const char *tag, char *out, size_t n);
/* Read a whole file into a buffer aligned to `align` (free with free()). */
cs_status cs_fs_read_aligned(const char *path, size_t align, void **data, size_t *size);
/* mkdir -p. */
cs_status cs_fs_make_dirs(const char *path);

/* ---- what generated C is built with (toolchain.c) ------------------- */

typedef struct cs_toolchain {
  char cc[4096];          /* the host C compiler */
  char include_dir[4096]; /* holding cstatic/model.h, … */
  char tidsp_lib[4096];   /* libtidsp.a (position-independent) */
  char runtime_src[4096]; /* the runtime's sources (PREFIX/share/cstatic/runtime) */
} cs_toolchain;

/* The compiler, headers and runtime library beside this cstatic binary
 * (or from CS_C_COMPILER, CS_INCLUDE_DIR, CS_TIDSP_LIB); an error when the
 * headers are missing. */
cs_status cs_toolchain_find(cs_toolchain *tc);
/* `compile --emit=runtime`: copy into dir the runtime files marked in used
 * (cs_runtime_file_path; as dir/runtime/…) and the public headers (as
 * dir/include/cstatic/…), from the prefix's copy of the sources. */
cs_status cs_copy_runtime(const char *dir, const unsigned char *used);
/* The prefix this cstatic binary belongs to (the directory above its
 * bin/): the build tree, an install prefix, or the pip package's. */
cs_status cs_toolchain_prefix(char *out, size_t n);

/* ---- host build of a compiled model --------------------------------- */

/* Compile DIR's lib*.c (and weights.c) with the host compiler into
 * DIR/.build/model.so linked with the runtime library; reuse what is
 * newer than its sources. Writes the .so path into so_path. */
cs_status cs_host_build(const char *dir, char *so_path, size_t n);

/* ---- per-layer profile report (profile_report.c) -------------------- */

/* The table and CSV are the runtime's (cstatic/profile_report.h): the
 * same text c7x_compute and Python print. A row's time is the median over
 * the timed runs of the layer's time in one run. */
void cs_profile_print(FILE *f, const tidsp_profile_row *rows, int n, double latency_ms, int with_cycles);
cs_status cs_profile_write_csv(const char *path, const tidsp_profile_row *rows, int n, int with_cycles);
/* A horizontal bar chart of the layer times, as an SVG file. */
cs_status cs_profile_write_svg(const char *path, const tidsp_profile_row *rows, int n,
                               const char *title);

#endif
