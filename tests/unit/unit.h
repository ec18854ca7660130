/*
 * unit.h — the smallest test harness: CHECK records a failure with its
 * location and goes on; UNIT_MAIN_END prints "N passed, N failed" and
 * returns non-zero on any failure.
 */
#ifndef CSTATIC_UNIT_H
#define CSTATIC_UNIT_H

#include <stdio.h>

static int unit_passed, unit_failed;

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (cond) {                                                         \
      unit_passed++;                                                    \
    } else {                                                            \
      unit_failed++;                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                   \
  } while (0)

#define CHECK_MSG(cond, ...)                                            \
  do {                                                                  \
    if (cond) {                                                         \
      unit_passed++;                                                    \
    } else {                                                            \
      unit_failed++;                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                     \
      fputc('\n', stderr);                                              \
    }                                                                   \
  } while (0)

#define UNIT_MAIN_END()                                                 \
  do {                                                                  \
    printf("%d passed, %d failed\n", unit_passed, unit_failed);         \
    return unit_failed ? 1 : 0;                                         \
  } while (0)

#endif
