/*
 * File-system helpers for the CLI: the atomic output directory and the
 * build cache need existence, mtimes, temp siblings and tree removal.
 */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cs_fs_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cs_fs_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

int64_t cs_fs_mtime(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

int cs_fs_remove_tree(const char *path) {
  if (!cs_fs_exists(path)) return 0;
  return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

cs_status cs_fs_make_sibling_temp(const char *path, const char *tag, char *out, size_t n) {
  const char *slash = strrchr(path, '/');
  int dir_len = slash ? (int)(slash - path + 1) : 0;
  const char *base = slash ? slash + 1 : path;
  int len = snprintf(out, n, "%.*s.%s.%s-XXXXXX", dir_len, path, base, tag);
  if (len < 0 || (size_t)len >= n) return cs_error(CS_ERR_IO, "path too long: %s", path);
  if (!mkdtemp(out))
    return cs_error(CS_ERR_IO, "cannot create a temporary directory next to %s: %s", path,
                    strerror(errno));
  /* mkdtemp makes it 0700; give it the permissions a mkdir would. */
  mode_t mask = umask(0);
  umask(mask);
  chmod(out, 0777 & ~mask);
  return CS_OK;
}

cs_status cs_fs_make_dirs(const char *path) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return cs_error(CS_ERR_IO, "path too long: %s", path);
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return cs_error(CS_ERR_IO, "cannot create directory %s: %s", buf, strerror(errno));
    *p = c;
    if (!c) return CS_OK;
  }
}

cs_status cs_fs_read_aligned(const char *path, size_t align, void **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return cs_error(CS_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return cs_error(CS_ERR_IO, "%s is not a regular file", path);
  }
  size_t n = (size_t)st.st_size;
  if (align < sizeof(void *)) align = sizeof(void *);
  void *buf = NULL;
  if (posix_memalign(&buf, align, n ? n : 1) != 0) {
    fclose(f);
    return cs_error(CS_ERR_NOMEM, "out of memory reading %s (%zu bytes)", path, n);
  }
  if (fread(buf, 1, n, f) != n) {
    fclose(f);
    free(buf);
    return cs_error(CS_ERR_IO, "cannot read %s", path);
  }
  fclose(f);
  *data = buf;
  *size = n;
  return CS_OK;
}
