/*
 * max_memory.c — `--max-memory SIZE` of `cstatic compile` and `cstatic
 * run`: the most memory a command may ask for on the word of its input
 * files (ir.h, "memory limit"). SIZE is bytes, or a number with a binary
 * suffix K, M, G, T (KiB, MiB, GiB, TiB; "4G", "512M", "1.5G").
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cs_cli_parse_bytes(const char *s, size_t *out) {
  if (!s || !*s) return 0;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !(v > 0) || !isfinite(v)) return 0;
  double scale = 1;
  switch (*end) {
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1024.0 * 1024; end++; break;
    case 'g': case 'G': scale = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
  }
  if (*end == 'i' || *end == 'I') end++;  /* "GiB" */
  if (*end == 'b' || *end == 'B') end++;
  if (*end) return 0;
  double bytes = floor(v * scale);
  if (bytes < 1 || bytes >= 18446744073709551616.0 || bytes > (double)SIZE_MAX) return 0;
  *out = (size_t)bytes;
  return 1;
}
