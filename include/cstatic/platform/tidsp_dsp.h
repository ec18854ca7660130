/*
 * tidsp_dsp.h — what the c7x / c66x flavours of a compiled model need
 * beyond the generic C: the export macro of their entry points and the
 * tensor descriptor of cg_main_dsp, the entry the C7x firmware resolves by
 * name after DLOAD has loaded the module.
 *
 * Included by a DSP flavour's lib0.h. C99, no allocation.
 */
#ifndef CSTATIC_PLATFORM_TIDSP_DSP_H
#define CSTATIC_PLATFORM_TIDSP_DSP_H

#include <stddef.h>
#include <stdint.h>

#include "cstatic/model.h"
#include "cstatic/tidsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On an entry point: DLOAD resolves only symbols the module exports (TI
 * CGT's __declspec(dllexport)); elsewhere (host builds, -fvisibility=hidden
 * shared objects) the same symbols stay visible. */
#if defined(__TI_COMPILER_VERSION__)
#define TVM_DSP_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define TVM_DSP_EXPORT __attribute__((visibility("default")))
#else
#define TVM_DSP_EXPORT
#endif

/* tidsp_dsp_tensor.dtype_code */
#define TIDSP_DSP_CODE_INT 0
#define TIDSP_DSP_CODE_UINT 1
#define TIDSP_DSP_CODE_FLOAT 2

#define TIDSP_DSP_MAX_NDIM 6

/* One tensor as the C7x firmware describes it (its 80-byte tensor_desc,
 * little-endian, no padding), so the firmware passes its descriptors as
 * they are:
 *
 *  offset  size  field
 *   0       8    data_addr   DSP virtual address of the first element
 *   8       8    size        bytes available at data_addr
 *  16       4    ndim        0 … 6
 *  20       4    dtype_code  TIDSP_DSP_CODE_INT / _UINT / _FLOAT
 *  24       4    dtype_bits  8, 16, 32, 64
 *  28       4    reserved
 *  32      48    shape[6]    the first ndim entries are used
 *
 * Dense, row-major, no strides. */
typedef struct tidsp_dsp_tensor {
  uint64_t data_addr;
  uint64_t size;
  int32_t ndim;
  int32_t dtype_code;
  int32_t dtype_bits;
  int32_t reserved;
  int64_t shape[TIDSP_DSP_MAX_NDIM];
} tidsp_dsp_tensor;

/* The layout above is the firmware's: a size other than 80 is a build error. */
typedef char tidsp_dsp_tensor_is_80_bytes[sizeof(tidsp_dsp_tensor) == 80 ? 1 : -1];

/* The pointer a descriptor holds. */
static inline void *tidsp_dsp_tensor_data(const tidsp_dsp_tensor *d) {
  return (void *)(uintptr_t)d->data_addr;
}

/* TIDSP_OK if d describes the tensor of `info`: TIDSP_ERR_NULL for a null
 * descriptor or data address, TIDSP_ERR_DTYPE for another element type,
 * TIDSP_ERR_SHAPE for another rank or shape or fewer than info->nbytes
 * bytes. (Entries built with -skip-runtime-checks=1 do not call it.) */
static inline int32_t tidsp_dsp_tensor_check(const tidsp_dsp_tensor *d,
                                             const tidsp_tensor_info *info) {
  int32_t code, bits, i;
  if (d == NULL || d->data_addr == 0) return TIDSP_ERR_NULL;
  switch (info->dtype) {
    case TIDSP_DTYPE_F32: code = TIDSP_DSP_CODE_FLOAT; bits = 32; break;
    case TIDSP_DTYPE_I8: code = TIDSP_DSP_CODE_INT; bits = 8; break;
    case TIDSP_DTYPE_U8: code = TIDSP_DSP_CODE_UINT; bits = 8; break;
    case TIDSP_DTYPE_I16: code = TIDSP_DSP_CODE_INT; bits = 16; break;
    case TIDSP_DTYPE_U16: code = TIDSP_DSP_CODE_UINT; bits = 16; break;
    case TIDSP_DTYPE_I32: code = TIDSP_DSP_CODE_INT; bits = 32; break;
    case TIDSP_DTYPE_I64: code = TIDSP_DSP_CODE_INT; bits = 64; break;
    default: return TIDSP_ERR_DTYPE;
  }
  if (d->dtype_code != code || d->dtype_bits != bits) return TIDSP_ERR_DTYPE;
  if (info->rank > TIDSP_DSP_MAX_NDIM || d->ndim != info->rank) return TIDSP_ERR_SHAPE;
  for (i = 0; i < info->rank; i++)
    if (d->shape[i] != info->shape[i]) return TIDSP_ERR_SHAPE;
  if (d->size < (uint64_t)info->nbytes) return TIDSP_ERR_SHAPE;
  return TIDSP_OK;
}

/* TIDL's bridge: sets up the TIDL runtime the TIDL-backed kernels run on.
 * A module compiled with -tidl-runtime=1 calls it first thing in every
 * cg_main_dsp (it is idempotent: the first call sets up, later ones return
 * at once). Exported only by a firmware built with TIDL (--tidl ON,
 * cstatic/c7x_exports.def), so such a module fails to load on any other,
 * naming this symbol. TIDSP_OK, or the status of what failed. */
int32_t tidl_bridge_init_all(void);

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_PLATFORM_TIDSP_DSP_H */
