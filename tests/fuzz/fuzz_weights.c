/*
 * fuzz_weights — the weights-blob check (runtime/model/weights_check.c,
 * docs/weights-format.md). The input is the blob followed by 13 bytes of
 * what the compiled code expects (count u32, alignment log2 u8, checksum
 * u64). The check must never read outside the blob, and when it accepts a
 * blob every header byte must be what the format says: magic, version,
 * count, alignment, total size, the payload offset, the checksum (which
 * must also hash the payload), zero reserved bytes and padding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/model.h"

static uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 13) return 0;
  size_t n = size - 13;
  const uint8_t *tail = data + n;
  uint32_t count = (uint32_t)le(tail, 4);
  size_t align = (size_t)1 << (tail[4] % 12);
  uint64_t checksum = le(tail + 5, 8);
  /* An exact-size, aligned copy: ASan sees any read past the blob. */
  uint8_t *blob = aligned_alloc(2048, n ? (n + 2047) / 2048 * 2048 : 2048);
  if (!blob) return 0;
  memcpy(blob, data, n);
  int32_t st = tidsp_weights_check(blob, n, n, count, align, checksum);
  if (st == TIDSP_OK) {
    size_t payload = (64 + align - 1) / align * align;
    int ok = n >= TIDSP_WEIGHTS_HEADER_SIZE && !memcmp(blob, TIDSP_WEIGHTS_MAGIC, 4) &&
             le(blob + 4, 4) == TIDSP_WEIGHTS_VERSION && le(blob + 8, 4) == count &&
             le(blob + 12, 4) == align && le(blob + 16, 8) == n && le(blob + 24, 8) == payload &&
             le(blob + 32, 8) == checksum && payload <= n &&
             tidsp_fnv1a64(TIDSP_FNV1A64_INIT, blob + payload, n - payload) == checksum;
    for (size_t i = 40; ok && i < payload; i++) ok = blob[i] == 0;
    if (!ok) __builtin_trap(); /* accepted a blob the format refuses */
  }
  free(blob);
  return 0;
}
