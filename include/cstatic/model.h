/*
 * model.h — what a compiled model exports, as data: its descriptor, the
 * types of its entry points, and the weights-blob check they share.
 *
 * Every generated lib0.c defines `const tidsp_model_desc model_desc`, so a
 * host program (cstatic run, a firmware loader) can drive any compiled
 * model without its lib0.h: read the I/O infos, allocate arena_size bytes
 * aligned to arena_align, bind l2_size bytes of L2 SRAM when l2_size > 0
 * (tidsp_l2_bind, cstatic/dma.h), check the weights, call run or run_raw.
 *
 * Two entry points, same signature:
 *   run     — the model's own dtypes (e.g. float32 in and out); quantizes
 *             and dequantizes at the boundary (inputs / outputs infos);
 *   run_raw — cg_main: the integer tensors after the boundary
 *             QuantizeLinear and before the final DequantizeLinear
 *             (raw_inputs / raw_outputs infos).
 * Neither allocates; the arena is scratch reused by every call (one call
 * at a time per arena).
 *
 * C99, no allocation.
 */
#ifndef CSTATIC_MODEL_H
#define CSTATIC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cstatic/kernels.h"
#include "cstatic/profile.h"
#include "cstatic/tidsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when tidsp_model_desc, tidsp_tensor_info, the profile table
 * (cstatic/profile.h) or a kernel's params struct (cstatic/kernels.h: a
 * module's constant params are read by the firmware's kernels) change
 * layout or meaning. 5: tidsp_conv2d_params gained mlas_nchw and
 * w_layout. 6: mlas_nchw and tidsp_gap_f32_params.nchwc became one bit per
 * MLAS channel block (TIDSP_MLAS_BLOCK*). 7: tidsp_conv2d_params gained
 * sum_in_conv (a fused Add's sum is inside the conv at some blocks only).
 * 8: tidsp_mmalib_exact_requant reads x with its x_zp (it required 0).
 * 9: mmalib_depthwise_conv2d_i16 takes negative pads, a crop of its input
 * (cstatic/mmalib.h; the exact path's 5×5/7×7 tiles pass them), and
 * tidsp_conv2d_params gained z_h, z_w, z_step_h, z_step_w (the exact
 * requantization picks a stride rewrite's rows). */
#define TIDSP_MODEL_ABI_VERSION 9u

/* One input or output tensor: dense, row-major. */
typedef struct tidsp_tensor_info {
  const char *name;  /* the ONNX tensor name */
  int32_t dtype;     /* tidsp_dtype */
  int32_t rank;
  int64_t shape[TIDSP_MAX_RANK];
  int64_t numel;
  size_t nbytes;
  /* Quantization of the raw tensor: real = scale * (q - zero_point). The
   * run-side info carries the same values (the boundary conversion's).
   * quantized == 0: scale 1, zero point 0, no conversion. */
  int32_t quantized;
  float scale;
  int32_t zero_point;
} tidsp_tensor_info;

/* inputs[i] / outputs[j] point at the tensors described by the infos of
 * the entry; weights at the checked blob; arena at arena_size bytes. */
typedef int32_t (*tidsp_model_entry)(const void *weights, void *arena,
                                     const void *const inputs[],
                                     void *const outputs[]);

typedef struct tidsp_model_desc {
  uint32_t abi_version; /* TIDSP_MODEL_ABI_VERSION */
  const char *name;
  const char *target;   /* the canonical target string it was built for */
  int32_t n_inputs, n_outputs;
  const tidsp_tensor_info *inputs;      /* run */
  const tidsp_tensor_info *outputs;
  const tidsp_tensor_info *raw_inputs;  /* run_raw (cg_main) */
  const tidsp_tensor_info *raw_outputs;
  size_t arena_size, arena_align;
  size_t live_bytes_lower_bound;
  /* L2 SRAM the staged MMALIB calls use (-mcpu=c7x -mmalib=1; 0: none):
   * the bound region (tidsp_l2_bind) must hold this many bytes. */
  size_t l2_size;
  size_t weights_size, weights_align;
  const void *weights_embedded; /* non-NULL when built with --weights=c */
  tidsp_model_entry run;
  tidsp_model_entry run_raw;
  int32_t (*check_weights)(const void *weights, size_t size);
  const char *(*status_str)(int32_t status);
  /* Per-layer timing (cstatic/profile.h) when built with
   * -profile-layers=1, else NULL. */
  const tidsp_profile_table *profile;
} tidsp_model_desc;

/* ---- the weights blob (docs/weights-format.md) ------------------------
 *
 *  offset  size  field (little-endian)
 *   0       4    magic "CSWB"
 *   4       4    version (1)
 *   8       4    count: tensors in the blob
 *  12       4    alignment of every tensor offset (power of two)
 *  16       8    total_size: bytes of the whole blob, header included
 *  24       8    payload_offset: first tensor (>= 64, aligned)
 *  32       8    checksum: FNV-1a 64 of bytes [payload_offset, total_size)
 *  40      24    reserved, zero
 *  64 …          tensors at aligned offsets, zero padding between them
 */
#define TIDSP_WEIGHTS_MAGIC "CSWB"
#define TIDSP_WEIGHTS_VERSION 1u
#define TIDSP_WEIGHTS_HEADER_SIZE 64u

/* FNV-1a 64 of n bytes, continuing from h (start with
 * TIDSP_FNV1A64_INIT). */
#define TIDSP_FNV1A64_INIT UINT64_C(0xcbf29ce484222325)
uint64_t tidsp_fnv1a64(uint64_t h, const void *data, size_t n);

/* TIDSP_OK if blob is the weights a model expects: TIDSP_ERR_NULL for
 * NULL, TIDSP_ERR_ALIGN if blob is not aligned to `align`,
 * TIDSP_ERR_WEIGHTS if the size, magic, version, count or alignment
 * differ, TIDSP_ERR_CHECKSUM if those agree but the checksum (the
 * header's or the payload's) does not. */
int32_t tidsp_weights_check(const void *blob, size_t size,
                            size_t expected_size, uint32_t expected_count,
                            size_t align, uint64_t expected_checksum);

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_MODEL_H */
