/*
 * Host build of a compiled model for `cstatic run`: each DIR/lib*.c (and
 * weights.c) → DIR/.build/NAME.o, then one shared object linked with the
 * runtime library. Objects and the .so are reused while they are newer
 * than what they are built from, so a second run starts at once.
 *
 * The compiler, the runtime headers and the runtime library are found by
 * cs_toolchain_find (toolchain.c): beside the cstatic binary, in the build
 * tree and in an installed prefix alike.
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

enum { MAX_SOURCES = 4096, MAX_JOBS = 2 };

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_source(const char *name) {
  size_t n = strlen(name);
  if (n < 3 || strcmp(name + n - 2, ".c")) return 0;
  if (!strcmp(name, "weights.c")) return 1;
  if (strncmp(name, "lib", 3)) return 0;
  for (size_t i = 3; i < n - 2; i++)
    if (name[i] < '0' || name[i] > '9') return 0;
  return n > 5;
}

static pid_t spawn(char *const argv[]) {
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "cstatic: error: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

typedef struct job {
  pid_t pid;
  char src[2400], obj[2400], tmp[2410];
} job;

/* Wait for one job; 0 if it succeeded (its object is then in place). */
static int reap(job *jobs, int *n_jobs, char *failed, size_t n_failed) {
  int status;
  pid_t pid = wait(&status);
  for (int i = 0; i < *n_jobs; i++) {
    if (jobs[i].pid != pid) continue;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && rename(jobs[i].tmp, jobs[i].obj) == 0;
    if (!ok) {
      snprintf(failed, n_failed, "%s", jobs[i].src);
      unlink(jobs[i].tmp);
    }
    jobs[i] = jobs[--*n_jobs];
    return ok ? 0 : 1;
  }
  return 1;
}

cs_status cs_host_build(const char *dir, char *so_path, size_t n) {
  cs_toolchain tc;
  cs_status tst = cs_toolchain_find(&tc);
  if (tst != CS_OK) return tst;
  const char *cc = tc.cc, *tidsp = tc.tidsp_lib;
  if (strlen(dir) > 2048) return cs_error(CS_ERR_IO, "model directory path is too long: %.64s...", dir);
  char path[4096], build[2100], include[4200], dir_inc[2100];
  snprintf(path, sizeof path, "%s/lib0.c", dir);
  if (!cs_fs_exists(path))
    return cs_error(CS_ERR_IO, "%s is not a compiled model directory (no lib0.c; run 'cstatic compile' first)", dir);
  int64_t header_time = cs_fs_mtime((snprintf(path, sizeof path, "%s/lib0.h", dir), path));
  if (header_time < 0) return cs_error(CS_ERR_IO, "%s: lib0.h is missing", dir);
  int64_t lib_time = cs_fs_mtime(tidsp);
  if (lib_time < 0)
    return cs_error(CS_ERR_IO, "runtime library %s not found (build the 'tidsp' target, or set CS_TIDSP_LIB)",
                    tidsp);
  snprintf(build, sizeof build, "%s/.build", dir);
  if (mkdir(build, 0777) != 0 && errno != EEXIST)
    return cs_error(CS_ERR_IO, "cannot create %s: %s", build, strerror(errno));
  snprintf(include, sizeof include, "-I%s", tc.include_dir);
  snprintf(dir_inc, sizeof dir_inc, "-I%s", dir);

  DIR *d = opendir(dir);
  if (!d) return cs_error(CS_ERR_IO, "cannot read %s: %s", dir, strerror(errno));
  char *names[MAX_SOURCES];
  int n_names = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n_names < MAX_SOURCES)
    if (is_source(e->d_name)) names[n_names++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n_names, sizeof *names, cmp_str);

  cs_status st = CS_OK;
  job jobs[MAX_JOBS];
  int n_jobs = 0, failures = 0;
  char failed[2400] = "";
  int64_t newest_obj = 0;
  char *link_argv[MAX_SOURCES + 16];
  int la = 0;
  link_argv[la++] = (char *)cc;
  link_argv[la++] = "-shared";
  link_argv[la++] = "-o";
  char so_tmp[2200];
  snprintf(so_path, n, "%s/model.so", build);
  snprintf(so_tmp, sizeof so_tmp, "%s/model.so.tmp", build);
  link_argv[la++] = so_tmp;
  char *objs[MAX_SOURCES];
  for (int i = 0; i < n_names; i++) {
    char src[2400], obj[2400];
    snprintf(src, sizeof src, "%s/%s", dir, names[i]);
    snprintf(obj, sizeof obj, "%s/%.*s.o", build, (int)strlen(names[i]) - 2, names[i]);
    objs[i] = strdup(obj);
    link_argv[la++] = objs[i];
    int64_t t_obj = cs_fs_mtime(obj), t_src = cs_fs_mtime(src);
    if (t_obj >= 0 && t_obj >= t_src && t_obj >= header_time) {
      if (t_obj > newest_obj) newest_obj = t_obj;
      continue;
    }
    while (n_jobs == MAX_JOBS) failures += reap(jobs, &n_jobs, failed, sizeof failed);
    job *j = &jobs[n_jobs];
    snprintf(j->src, sizeof j->src, "%s", src);
    snprintf(j->obj, sizeof j->obj, "%s", obj);
    snprintf(j->tmp, sizeof j->tmp, "%s.tmp", obj);
    char *argv[] = {(char *)cc, "-O2", "-std=c99", "-fPIC", include, dir_inc, "-c", j->src,
                    "-o", j->tmp, NULL};
    j->pid = spawn(argv);
    if (j->pid < 0) {
      failures++;
      snprintf(failed, sizeof failed, "%s", src);
    } else {
      n_jobs++;
    }
    newest_obj = -1; /* something was rebuilt: relink */
  }
  while (n_jobs > 0) failures += reap(jobs, &n_jobs, failed, sizeof failed);
  if (failures) {
    st = cs_error(CS_ERR_IO, "compiling %s with %s failed (its errors are above)", failed, cc);
    goto done;
  }
  int64_t t_so = cs_fs_mtime(so_path);
  if (newest_obj >= 0 && t_so >= 0 && t_so >= newest_obj && t_so >= lib_time) goto done;
  link_argv[la++] = (char *)tidsp;
  link_argv[la++] = "-lm";
  link_argv[la] = NULL;
  pid_t pid = spawn(link_argv);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      rename(so_tmp, so_path) != 0) {
    unlink(so_tmp);
    st = cs_error(CS_ERR_IO, "linking %s with %s failed (its errors are above)", so_path, cc);
  }
done:
  for (int i = 0; i < n_names; i++) {
    free(names[i]);
    free(objs[i]);
  }
  return st;
}
