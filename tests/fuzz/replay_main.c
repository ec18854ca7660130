/*
 * replay_main — the fast tests' driver for the fuzz harnesses: feeds every
 * file named on the command line (or found in a named directory) to
 * LLVMFuzzerTestOneInput once, as libFuzzer replays a corpus, and prints
 * how many. Built with each harness by the normal build (ctest
 * fuzz_replay_*), so tests/fuzz/regress/ is replayed by every `make test`,
 * under ASan/UBSan in build-asan.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 0;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "replay: out of memory reading %s\n", path);
    return 0;
  }
  /* An exact-size copy: ASan sees a read past the input. */
  uint8_t *exact = malloc(n ? n : 1);
  if (exact) {
    memcpy(exact, buf, n);
    LLVMFuzzerTestOneInput(exact, n);
  }
  free(exact);
  free(buf);
  return exact != NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int count = 0, failed = 0;
  for (int i = 1; i < argc; i++) {
    struct stat s;
    if (stat(argv[i], &s) != 0) {
      fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      failed++;
      continue;
    }
    if (!S_ISDIR(s.st_mode)) {
      if (replay_file(argv[i])) count++;
      else failed++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (!d) continue;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char **nn = realloc(names, sizeof *names * (n + 1));
      if (!nn) break;
      names = nn;
      names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
      if (!names[n]) break;
      sprintf(names[n++], "%s/%s", argv[i], e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t k = 0; k < n; k++) {
      if (stat(names[k], &s) == 0 && S_ISREG(s.st_mode)) {
        if (replay_file(names[k])) count++;
        else failed++;
      }
      free(names[k]);
    }
    free(names);
  }
  printf("replayed %d inputs\n", count);
  return failed ? 1 : 0;
}
