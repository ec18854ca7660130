/*
 * The weights-blob check every generated model_check_weights() calls
 * (format: include/cstatic/model.h, docs/weights-format.md). The header is
 * read byte by byte, so the check works on any endianness and alignment.
 */
#include <stdint.h>
#include <string.h>

#include "cstatic/model.h"

uint64_t tidsp_fnv1a64(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  size_t i;
  for (i = 0; i < n; i++) {
    h ^= p[i];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

static uint64_t read_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  int i;
  for (i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* TIDSP_WEIGHTS_HEADER_SIZE rounded up to the alignment (a power of two,
 * or 0/1 for none). */
static uint64_t weights_payload_offset(size_t align) {
  uint64_t a = align > 1 ? (uint64_t)align : 1;
  return (TIDSP_WEIGHTS_HEADER_SIZE + a - 1) / a * a;
}

int32_t tidsp_weights_check(const void *blob, size_t size,
                            size_t expected_size, uint32_t expected_count,
                            size_t align, uint64_t expected_checksum) {
  const unsigned char *p = (const unsigned char *)blob;
  uint64_t payload;
  size_t i;
  if (p == NULL) return TIDSP_ERR_NULL;
  if (align > 1 && ((uintptr_t)p & (align - 1)) != 0) return TIDSP_ERR_ALIGN;
  if (size != expected_size || size < TIDSP_WEIGHTS_HEADER_SIZE)
    return TIDSP_ERR_WEIGHTS;
  if (memcmp(p, TIDSP_WEIGHTS_MAGIC, 4) != 0) return TIDSP_ERR_WEIGHTS;
  if (read_le(p + 4, 4) != TIDSP_WEIGHTS_VERSION) return TIDSP_ERR_WEIGHTS;
  if (read_le(p + 8, 4) != expected_count) return TIDSP_ERR_WEIGHTS;
  if (read_le(p + 12, 4) != align) return TIDSP_ERR_WEIGHTS;
  if (read_le(p + 16, 8) != (uint64_t)size) return TIDSP_ERR_WEIGHTS;
  /* The payload starts at the header's end rounded up to the alignment,
   * and everything between the checksum and it is zero: every header byte
   * is checked, so no corruption of it goes unnoticed. */
  payload = read_le(p + 24, 8);
  if (payload != weights_payload_offset(align) || payload > (uint64_t)size)
    return TIDSP_ERR_WEIGHTS;
  for (i = 40; i < (size_t)payload; i++)
    if (p[i] != 0) return TIDSP_ERR_WEIGHTS;
  /* Shape and header right, bytes not: say it is the checksum. */
  if (read_le(p + 32, 8) != expected_checksum) return TIDSP_ERR_CHECKSUM;
  if (tidsp_fnv1a64(TIDSP_FNV1A64_INIT, p + payload, size - (size_t)payload) !=
      expected_checksum)
    return TIDSP_ERR_CHECKSUM;
  return TIDSP_OK;
}
