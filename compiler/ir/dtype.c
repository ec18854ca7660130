/*
 * dtype.c — element types: sizes, names, C spellings, ranges.
 */
#include "ir.h"

size_t cs_dtype_size(cs_dtype t) {
  switch (t) {
    case CS_DTYPE_F32: return 4;
    case CS_DTYPE_I8: return 1;
    case CS_DTYPE_U8: return 1;
    case CS_DTYPE_I16: return 2;
    case CS_DTYPE_U16: return 2;
    case CS_DTYPE_I32: return 4;
    case CS_DTYPE_I64: return 8;
    case CS_DTYPE_BOOL: return 1; /* ONNX stores bool as one byte, 0 or 1 */
    case CS_DTYPE_F16: return 2;
    case CS_DTYPE_BF16: return 2;
    case CS_DTYPE_F64: return 8;
    case CS_DTYPE_U32: return 4;
    case CS_DTYPE_U64: return 8;
    case CS_DTYPE_UNDEF: break;
  }
  return 0;
}

const char *cs_dtype_name(cs_dtype t) {
  switch (t) {
    case CS_DTYPE_F32: return "f32";
    case CS_DTYPE_I8: return "i8";
    case CS_DTYPE_U8: return "u8";
    case CS_DTYPE_I16: return "i16";
    case CS_DTYPE_U16: return "u16";
    case CS_DTYPE_I32: return "i32";
    case CS_DTYPE_I64: return "i64";
    case CS_DTYPE_BOOL: return "bool";
    case CS_DTYPE_F16: return "f16";
    case CS_DTYPE_BF16: return "bf16";
    case CS_DTYPE_F64: return "f64";
    case CS_DTYPE_U32: return "u32";
    case CS_DTYPE_U64: return "u64";
    case CS_DTYPE_UNDEF: break;
  }
  return "undef";
}

const char *cs_dtype_c_type(cs_dtype t) {
  switch (t) {
    case CS_DTYPE_F32: return "float";
    case CS_DTYPE_I8: return "int8_t";
    case CS_DTYPE_U8: return "uint8_t";
    case CS_DTYPE_I16: return "int16_t";
    case CS_DTYPE_U16: return "uint16_t";
    case CS_DTYPE_I32: return "int32_t";
    case CS_DTYPE_I64: return "int64_t";
    /* One byte, 0 or 1; uint8_t keeps generated code free of <stdbool.h>. */
    case CS_DTYPE_BOOL: return "uint8_t";
    /* f16/bf16: their 16 bits (C99 has no half type). */
    case CS_DTYPE_F16: return "uint16_t";
    case CS_DTYPE_BF16: return "uint16_t";
    case CS_DTYPE_F64: return "double";
    case CS_DTYPE_U32: return "uint32_t";
    case CS_DTYPE_U64: return "uint64_t";
    case CS_DTYPE_UNDEF: break;
  }
  return "void";
}

int32_t cs_dtype_to_tidsp(cs_dtype t) {
  switch (t) {
    case CS_DTYPE_F32: return TIDSP_DTYPE_F32;
    case CS_DTYPE_I8: return TIDSP_DTYPE_I8;
    case CS_DTYPE_U8: return TIDSP_DTYPE_U8;
    case CS_DTYPE_I16: return TIDSP_DTYPE_I16;
    case CS_DTYPE_U16: return TIDSP_DTYPE_U16;
    case CS_DTYPE_I32: return TIDSP_DTYPE_I32;
    case CS_DTYPE_I64: return TIDSP_DTYPE_I64;
    case CS_DTYPE_BOOL: return TIDSP_DTYPE_BOOL;
    case CS_DTYPE_F16: return TIDSP_DTYPE_F16;
    case CS_DTYPE_BF16: return TIDSP_DTYPE_BF16;
    case CS_DTYPE_F64: return TIDSP_DTYPE_F64;
    case CS_DTYPE_U32: return TIDSP_DTYPE_U32;
    case CS_DTYPE_U64: return TIDSP_DTYPE_U64;
    case CS_DTYPE_UNDEF: break;
  }
  return 0;
}

int cs_dtype_is_int(cs_dtype t) {
  switch (t) {
    case CS_DTYPE_I8:
    case CS_DTYPE_U8:
    case CS_DTYPE_I16:
    case CS_DTYPE_U16:
    case CS_DTYPE_I32:
    case CS_DTYPE_I64: return 1;
    default: return 0;
  }
}

void cs_dtype_range(cs_dtype t, int64_t *lo, int64_t *hi) {
  int64_t l = 0, h = 0;
  switch (t) {
    case CS_DTYPE_I8: l = INT8_MIN; h = INT8_MAX; break;
    case CS_DTYPE_U8: l = 0; h = UINT8_MAX; break;
    case CS_DTYPE_I16: l = INT16_MIN; h = INT16_MAX; break;
    case CS_DTYPE_U16: l = 0; h = UINT16_MAX; break;
    case CS_DTYPE_I32: l = INT32_MIN; h = INT32_MAX; break;
    case CS_DTYPE_U32: l = 0; h = UINT32_MAX; break;
    case CS_DTYPE_I64: l = INT64_MIN; h = INT64_MAX; break;
    case CS_DTYPE_U64: l = 0; h = INT64_MAX; break; /* as far as int64 reaches */
    case CS_DTYPE_BOOL: l = 0; h = 1; break;
    default: break;
  }
  if (lo) *lo = l;
  if (hi) *hi = h;
}
