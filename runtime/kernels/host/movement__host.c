/*
 * movement__host.c — tidsp_transpose and tidsp_slice for the host rows:
 * portable C that copies whole contiguous runs with memcpy (which the C
 * library vectorizes) instead of one element at a time.
 *
 * The walk over the output is first coalesced: dims of size 1 are dropped
 * and an output dim is merged into the next inner one when stepping it
 * moves the input exactly as far as stepping the inner one to its end.
 * When the innermost coalesced dim then reads the input contiguously
 * (ShuffleNet's channel shuffle and channel split: runs of whole H·W
 * planes) each output row is one memcpy. A transpose whose rows are
 * strided or shorter than MIN_RUN bytes (attention's Kᵀ: the last two dims
 * swapped) copies element by element along each output row, with the
 * outer dims stepped once per row, for 1-, 2-, 4- and 8-byte elements —
 * except, on x86-64, a byte transpose whose two innermost output dims are a
 * plain 2-D transpose (the next-inner one walks the input contiguously:
 * NCHW ↔ NHWC around ConvNeXt's and Swin's LayerNorms, [C, H·W] ↔
 * [H·W, C]), which goes in 16×16 tiles: 16 input rows of 16 bytes loaded,
 * transposed in registers by four rounds of SSE2 unpacks, stored as 16
 * output rows of 16 bytes (the element loop read one byte per strided load
 * and ran at about a byte per cycle). Partial tiles at the edges copy
 * element by element.
 * Anything else, and anything the reference rejects, runs the reference.
 * A copy is exact, so the bytes are the reference's.
 */
#include <string.h>

#include "../kernel_variants.h"
#include "../ref/ref_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <emmintrin.h> /* SSE2: every x86-64 CPU */
#endif

/* Shorter rows are left to the reference's element loop. */
enum { MIN_RUN = 16 };

/* A walk over a dense output: shape[], and the input element step of each
 * output dim; rows of the last dim. */
typedef struct copy_walk {
  int32_t rank;
  int64_t shape[TIDSP_MAX_RANK];
  int64_t step[TIDSP_MAX_RANK];
} copy_walk;

/* Drops size-1 dims and merges contiguous ones (w has rank ≥ 1 after). */
static void walk_coalesce(copy_walk *w) {
  w->rank = tidsp_ref_coalesce(w->rank, w->shape, 1, &w->step, INT64_MAX, 1);
}

/* The next output row of walk w: the outer dims (all but the innermost)
 * advance like an odometer, idx holding their position and *in_off the
 * input offset of the row. */
static void walk_next_row(const copy_walk *w, int64_t *idx, int64_t *in_off) {
  int32_t d;
  for (d = w->rank - 2; d >= 0; d--) {
    *in_off += w->step[d];
    if (++idx[d] < w->shape[d])
      return;
    *in_off -= w->step[d] * w->shape[d];
    idx[d] = 0;
  }
}

/* True when the coalesced walk copies runs of at least MIN_RUN bytes. */
static int walk_fast(const copy_walk *w, size_t es) {
  return w->step[w->rank - 1] == 1 &&
         (size_t)w->shape[w->rank - 1] * es >= MIN_RUN;
}

/* y (dense, in walk order) = the input runs starting at in_off. */
static void walk_copy(const copy_walk *w, const uint8_t *x, int64_t in_off,
                      size_t es, uint8_t *y) {
  int64_t idx[TIDSP_MAX_RANK] = {0};
  const size_t run = (size_t)w->shape[w->rank - 1] * es;
  int64_t rows = 1, r;
  int32_t d;
  for (d = 0; d < w->rank - 1; d++)
    rows *= w->shape[d];
  for (r = 0; r < rows; r++, y += run) {
    const uint8_t *src = x + (size_t)in_off * es;
    /* attention's head splits copy 16- to 64-byte rows: a constant size
     * is a few vector moves instead of a call */
    switch (run) {
    case 16:
      memcpy(y, src, 16);
      break;
    case 32:
      memcpy(y, src, 32);
      break;
    case 64:
      memcpy(y, src, 64);
      break;
    default:
      memcpy(y, src, run);
      break;
    }
    walk_next_row(w, idx, &in_off);
  }
}

/* y (dense, in walk order) = the input elements of the walk from in_off,
 * one at a time along each output row (any innermost step), for element
 * sizes of 1, 2, 4 or 8 bytes: rows of a fixed-size copy per element, the
 * outer dims stepped once per row as in walk_copy. */
static void walk_gather(const copy_walk *w, const uint8_t *x, int64_t in_off,
                        size_t es, uint8_t *y) {
  int64_t idx[TIDSP_MAX_RANK] = {0};
  const int64_t n = w->shape[w->rank - 1], st = w->step[w->rank - 1];
  int64_t rows = 1, r, j;
  int32_t d;
  for (d = 0; d < w->rank - 1; d++)
    rows *= w->shape[d];
  for (r = 0; r < rows; r++) {
    const uint8_t *src = x + (size_t)in_off * es;
    switch (es) {
    case 1:
      for (j = 0; j < n; j++)
        y[j] = src[j * st];
      break;
    case 2:
      for (j = 0; j < n; j++)
        memcpy(y + 2 * j, src + 2 * j * st, 2);
      break;
    case 4:
      for (j = 0; j < n; j++)
        memcpy(y + 4 * j, src + 4 * j * st, 4);
      break;
    default:
      for (j = 0; j < n; j++)
        memcpy(y + 8 * j, src + 8 * j * st, 8);
      break;
    }
    y += (size_t)n * es;
    walk_next_row(w, idx, &in_off);
  }
}

#if TIDSP_HAVE_HOST_X86
/* The 16×16 byte tile at x (row pitch sx) transposed to y (row pitch sy):
 * y[j·sy + i] = x[i·sx + j]. Each round interleaves pairs of registers at
 * twice the width of the round before (8-, 16-, 32-, 64-bit units), so
 * after the four rounds register j holds column j of the tile. */
static void tile16_u8(const uint8_t *x, size_t sx, uint8_t *y, size_t sy) {
  __m128i a[16], b[16];
  int i, g;
  for (i = 0; i < 16; i++)
    a[i] = _mm_loadu_si128((const __m128i *)(x + (size_t)i * sx));
  /* b[i]: rows 2i, 2i+1 byte-interleaved, columns 0..7; b[8+i]: 8..15 */
  for (i = 0; i < 8; i++) {
    b[i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[8 + i] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  /* a[4g + i]: columns 4g .. 4g+3 of rows 4i .. 4i+3 (4 bytes a column) */
  for (g = 0; g < 2; g++)
    for (i = 0; i < 4; i++) {
      a[8 * g + i] = _mm_unpacklo_epi16(b[8 * g + 2 * i], b[8 * g + 2 * i + 1]);
      a[8 * g + 4 + i] = _mm_unpackhi_epi16(b[8 * g + 2 * i], b[8 * g + 2 * i + 1]);
    }
  /* b[4g + 2h + k]: columns 4g + 2k, 4g + 2k + 1 of rows 8h .. 8h+7 */
  for (g = 0; g < 4; g++)
    for (i = 0; i < 2; i++) {
      b[4 * g + 2 * i] = _mm_unpacklo_epi32(a[4 * g + 2 * i], a[4 * g + 2 * i + 1]);
      b[4 * g + 2 * i + 1] = _mm_unpackhi_epi32(a[4 * g + 2 * i], a[4 * g + 2 * i + 1]);
    }
  /* column 4g + 2k (+1): the low (high) halves of rows 0..7 and 8..15 */
  for (g = 0; g < 4; g++)
    for (i = 0; i < 2; i++) {
      _mm_storeu_si128((__m128i *)(y + (size_t)(4 * g + 2 * i) * sy),
                       _mm_unpacklo_epi64(b[4 * g + i], b[4 * g + 2 + i]));
      _mm_storeu_si128((__m128i *)(y + (size_t)(4 * g + 2 * i + 1) * sy),
                       _mm_unpackhi_epi64(b[4 * g + i], b[4 * g + 2 + i]));
    }
}

/* y[a·nb + b] = x[a + b·sx] for a < na, b < nb: full tiles by tile16_u8,
 * the edges element by element. Output rows a0 .. a0+15 are finished
 * before the next ones, so the input lines a band reads (one per b) are
 * reused by the bands after it while they are in L1. */
static void transpose2d_u8(const uint8_t *x, int64_t sx, int64_t na, int64_t nb, uint8_t *y) {
  int64_t a0, b0, a, b;
  for (a0 = 0; a0 + 16 <= na; a0 += 16) {
    for (b0 = 0; b0 + 16 <= nb; b0 += 16)
      tile16_u8(x + a0 + b0 * sx, (size_t)sx, y + a0 * nb + b0, (size_t)nb);
    for (a = a0; a < a0 + 16; a++)
      for (b = b0; b < nb; b++)
        y[a * nb + b] = x[a + b * sx];
  }
  for (a = a0; a < na; a++)
    for (b = 0; b < nb; b++)
      y[a * nb + b] = x[a + b * sx];
}

/* True when the coalesced walk's two innermost dims are a 2-D byte
 * transpose worth tiling (both at least a tile). */
static int walk_tiles(const copy_walk *w, size_t es) {
  return es == 1 && w->rank >= 2 && w->step[w->rank - 2] == 1 && w->shape[w->rank - 2] >= 16 &&
         w->shape[w->rank - 1] >= 16;
}

/* y (dense, in walk order) by transpose2d_u8 per plane of the two
 * innermost dims, the outer dims stepped like walk_next_row's. */
static void walk_transpose(const copy_walk *w, const uint8_t *x, uint8_t *y) {
  copy_walk o = *w; /* the outer dims, plus one plane dim walk_next_row leaves alone */
  int64_t idx[TIDSP_MAX_RANK] = {0}, in_off = 0, planes = 1, r;
  const int64_t na = w->shape[w->rank - 2], nb = w->shape[w->rank - 1];
  int32_t d;
  o.rank = w->rank - 1;
  for (d = 0; d < o.rank - 1; d++)
    planes *= o.shape[d];
  for (r = 0; r < planes; r++, y += na * nb) {
    transpose2d_u8(x + in_off, w->step[w->rank - 1], na, nb, y);
    walk_next_row(&o, idx, &in_off);
  }
}
#endif

/* The element sizes walk_gather copies. */
static int gather_ok(size_t es) { return es == 1 || es == 2 || es == 4 || es == 8; }

int32_t tidsp_transpose__host(const tidsp_transpose_params *p, const void *x,
                              void *y) {
  int64_t in_stride[TIDSP_MAX_RANK], total = 1;
  copy_walk w;
  int32_t d, seen = 0;
  if (!p || !x || !y || p->rank < 1 || p->rank > TIDSP_MAX_RANK ||
      p->elem_size < 1)
    return tidsp_transpose__ref(p, x, y);
  for (d = p->rank - 1; d >= 0; d--) {
    if (p->in_shape[d] < 1) /* invalid, or nothing to copy */
      return tidsp_transpose__ref(p, x, y);
    in_stride[d] = total;
    total *= p->in_shape[d];
  }
  for (d = 0; d < p->rank; d++) {
    if (p->perm[d] < 0 || p->perm[d] >= p->rank || (seen >> p->perm[d]) & 1)
      return tidsp_transpose__ref(p, x, y);
    seen |= 1 << p->perm[d];
    w.shape[d] = p->in_shape[p->perm[d]];
    w.step[d] = in_stride[p->perm[d]];
  }
  w.rank = p->rank;
  walk_coalesce(&w);
  if (walk_fast(&w, (size_t)p->elem_size))
    walk_copy(&w, (const uint8_t *)x, 0, (size_t)p->elem_size, (uint8_t *)y);
#if TIDSP_HAVE_HOST_X86
  else if (walk_tiles(&w, (size_t)p->elem_size))
    walk_transpose(&w, (const uint8_t *)x, (uint8_t *)y);
#endif
  else if (gather_ok((size_t)p->elem_size))
    walk_gather(&w, (const uint8_t *)x, 0, (size_t)p->elem_size, (uint8_t *)y);
  else
    return tidsp_transpose__ref(p, x, y);
  return TIDSP_OK;
}

int32_t tidsp_slice__host(const tidsp_slice_params *p, const void *x, void *y) {
  int64_t in_stride[TIDSP_MAX_RANK], total = 1, in_off = 0;
  copy_walk w;
  int32_t d;
  if (!p || !x || !y || p->rank < 1 || p->rank > TIDSP_MAX_RANK ||
      p->elem_size < 1)
    return tidsp_slice__ref(p, x, y);
  for (d = p->rank - 1; d >= 0; d--) {
    if (p->in_shape[d] < 1 || p->out_shape[d] < 1)
      return tidsp_slice__ref(p, x, y);
    in_stride[d] = total;
    total *= p->in_shape[d];
  }
  for (d = 0; d < p->rank; d++) {
    const int64_t last = (int64_t)p->start[d] + (int64_t)(p->out_shape[d] - 1) * p->step[d];
    if (p->step[d] == 0 || p->start[d] < 0 || p->start[d] >= p->in_shape[d] ||
        last < 0 || last >= p->in_shape[d])
      return tidsp_slice__ref(p, x, y);
    in_off += (int64_t)p->start[d] * in_stride[d];
    w.shape[d] = p->out_shape[d];
    w.step[d] = (int64_t)p->step[d] * in_stride[d];
  }
  w.rank = p->rank;
  walk_coalesce(&w);
  if (!walk_fast(&w, (size_t)p->elem_size))
    return tidsp_slice__ref(p, x, y);
  walk_copy(&w, (const uint8_t *)x, in_off, (size_t)p->elem_size, (uint8_t *)y);
  return TIDSP_OK;
}

/* ---- Expand ----
 * The output walk, coalesced (a broadcast dim next to another merges too),
 * is produced dim by dim: a dim that steps the input walks its sub-blocks;
 * a broadcast dim (step 0) produces its first sub-block and copies it
 * (memcpy of the bytes just written); the innermost dim is one memcpy
 * (step 1), a fill of one element (step 0) or a gather; an element
 * repeated along the innermost dim under a stepping dim (nearest Resize:
 * [.., W, k] with steps (1, 0)) is written k times per input element. */

/* Copies of one element of es bytes, a constant size where it is common. */
static inline void put_elem(uint8_t *y, const uint8_t *src, size_t es) {
  switch (es) {
  case 4:
    memcpy(y, src, 4);
    break;
  case 1:
    *y = *src;
    break;
  case 2:
    memcpy(y, src, 2);
    break;
  case 8:
    memcpy(y, src, 8);
    break;
  default:
    memcpy(y, src, es);
    break;
  }
}

/* Each of n bytes k times, k = 2, 4 or 8 (an int8 nearest Resize): one
 * store of the byte times 0x01…01 per element (all its bytes equal, so in
 * any byte order), which gcc vectorizes; the element loop of put_elem
 * stored a byte at a time (1.5 GB/s on PP-OCR det's 2x upsampling). */
static void repeat_bytes(uint8_t *y, const uint8_t *x, int64_t n, int64_t k) {
  int64_t i;
  if (k == 2) {
    for (i = 0; i < n; i++) {
      const uint16_t v = (uint16_t)(x[i] * 0x0101u);
      memcpy(y + 2 * i, &v, 2);
    }
  } else if (k == 4) {
    for (i = 0; i < n; i++) {
      const uint32_t v = x[i] * 0x01010101u;
      memcpy(y + 4 * i, &v, 4);
    }
  } else {
    for (i = 0; i < n; i++) {
      const uint64_t v = x[i] * 0x0101010101010101ull;
      memcpy(y + 8 * i, &v, 8);
    }
  }
}

/* y (dense) = dims d.. of walk w from input element off; blk[d] is the
 * bytes of one step of dim d in y. */
static void expand_dims(const copy_walk *w, const size_t *blk, int32_t d, const uint8_t *x, int64_t off,
                        size_t es, uint8_t *y) {
  const int64_t n = w->shape[d], st = w->step[d];
  int64_t i, j;
  if (d == w->rank - 1) { /* the innermost dim */
    if (st == 1) {
      memcpy(y, x + (size_t)off * es, (size_t)n * es);
    } else {
      for (i = 0; i < n; i++)
        put_elem(y + (size_t)i * es, x + (size_t)(off + i * st) * es, es);
    }
    return;
  }
  if (st == 0) { /* broadcast: the first sub-block, then copies of it */
    expand_dims(w, blk, d + 1, x, off, es, y);
    for (i = 1; i < n; i++)
      memcpy(y + (size_t)i * blk[d], y, blk[d]);
    return;
  }
  if (d == w->rank - 2 && w->step[d + 1] == 0) { /* each element k times */
    const int64_t k = w->shape[d + 1];
    if (es == 1 && st == 1 && (k == 2 || k == 4 || k == 8)) {
      repeat_bytes(y, x + off, n, k);
      return;
    }
    for (i = 0; i < n; i++) {
      const uint8_t *src = x + (size_t)(off + i * st) * es;
      for (j = 0; j < k; j++, y += es)
        put_elem(y, src, es);
    }
    return;
  }
  for (i = 0; i < n; i++)
    expand_dims(w, blk, d + 1, x, off + i * st, es, y + (size_t)i * blk[d]);
}

int32_t tidsp_expand__host(const tidsp_expand_params *p, const void *x, void *y) {
  size_t blk[TIDSP_MAX_RANK], es, y_len = 1, x_len = 1;
  copy_walk w;
  int32_t d;
  if (!p || !x || !y || p->rank < 0 || p->rank > TIDSP_MAX_RANK || p->elem_size < 1)
    return tidsp_expand__ref(p, x, y);
  es = (size_t)p->elem_size;
  for (d = 0; d < p->rank; d++) {
    if (p->shape[d] < 1 || p->in_stride[d] < 0)
      return tidsp_expand__ref(p, x, y);
    w.shape[d] = p->shape[d];
    w.step[d] = p->in_stride[d];
    y_len *= (size_t)p->shape[d];
    x_len += (size_t)(p->shape[d] - 1) * (size_t)p->in_stride[d];
  }
  /* memcpy must not see overlapping bytes (the reference's element loop
   * then defines the answer) */
  if ((const uint8_t *)x < (uint8_t *)y + y_len * es && (uint8_t *)y < (const uint8_t *)x + x_len * es)
    return tidsp_expand__ref(p, x, y);
  w.rank = p->rank;
  walk_coalesce(&w);
  blk[w.rank - 1] = es;
  for (d = w.rank - 2; d >= 0; d--)
    blk[d] = blk[d + 1] * (size_t)w.shape[d + 1];
  expand_dims(&w, blk, 0, (const uint8_t *)x, 0, es, (uint8_t *)y);
  return TIDSP_OK;
}
