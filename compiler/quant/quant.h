/*
 * quant.h — compile-time quantization math: reading Q/DQ parameters,
 * requantization multipliers in each form, ONNX-exact quantize, LUTs.
 * All float work of the integer kernels happens here, once, at compile time.
 */
#ifndef CSTATIC_QUANT_H
#define CSTATIC_QUANT_H

#include <stdint.h>

#include "ir.h"
#include "target.h"

/* The parameters of a QuantizeLinear / DequantizeLinear node. */
typedef struct cs_qparams {
  cs_dtype dtype;       /* the integer side's dtype */
  int axis;             /* normalized, -1 = per-tensor */
  int count;            /* 1 or the axis length */
  const float *scale;   /* [count], points into the graph's constant */
  int32_t zp[1];        /* zp[0] for per-tensor; per-axis zps: zps */
  const int32_t *zps;   /* [count] (points at zp when count == 1) */
  int32_t *zps_owned;   /* storage for per-axis zps */
} cs_qparams;

/* Read the scale/zero-point constants of a Q or DQ node. Returns
 * CS_ERR_UNSUPPORTED (with a message naming the node) if they are not
 * constants. Release with cs_qparams_free. */
cs_status cs_qparams_read(cs_graph *g, const cs_node *n, cs_qparams *qp);
void cs_qparams_free(cs_qparams *qp);
/* Both per-tensor with the same dtype, scale and zero point. */
int cs_qparams_equal(const cs_qparams *a, const cs_qparams *b);
int cs_qparams_per_tensor(const cs_qparams *qp);

/* ONNX QuantizeLinear of one value: sat(rne(fl(x / s)) + zp) over [lo, hi]
 * (a true divide, as ONNX Runtime; NaN → lo). */
int32_t cs_quantize_one(float x, float s, int32_t zp, int64_t lo, int64_t hi);
/* ONNX DequantizeLinear of one value: fl(float(q − zp) · s). */
float cs_dequantize_one(int32_t q, float s, int32_t zp);

/* The Q31 form of the float multiplier the FLOAT form uses: f = mult ·
 * 2^−shift exactly (mult its 24-bit significand), so that the integer
 * kernels reproduce the float formula bit for bit (kernels.h). A
 * multiplier below 2^−38, which rounds every int32 accumulator to 0, is
 * mult = shift = 0. */
cs_status cs_q31_from_float(float f, int32_t *mult, int32_t *shift);

/* ---- constants for kernels ----------------------------------------- */

/* The requantization blob of `count` channels in the target's form, as a
 * new constant named "<base>.rq": FLOAT → float mult_ort[count]; Q31 →
 * int32 mult[count] then int32 shift[count], the same float multipliers in
 * integer form (`exact` is kept for the error report).
 * Fills rq->kind and rq->per_channel. Returns the value id; -2 when a
 * multiplier has no Q31 form (the caller declines; nothing recorded); -1
 * when the constant cannot be held (CS_ERR_NOMEM, message recorded). */
int cs_requant_blob(cs_graph *g, const char *base, const cs_target *t,
                    int count, const double *exact, const float *ort,
                    tidsp_requant_params *rq);

/* cs_requant_blob of an op y = alpha · Σ x·w (conv, matmul, Gemm) whose
 * output channel c has the multiplier alpha·xs·ws[c]/ys (ws per channel
 * when ws_count > 1, else per tensor), rounded as ONNX Runtime does:
 * fl(fl(fl(alpha·xs)·ws[c])/ys). The same returns. */
int cs_requant_blob_xwy(cs_graph *g, const char *base, const cs_target *t, int count, float alpha, float xs,
                        const float *ws, int ws_count, float ys, tidsp_requant_params *rq);

/* The int32 bias constant "<base>.bias_i32" of a fused layer whose
 * accumulator has scale xs·ws[c] (ws per channel when ws_count > 1): b is
 * the int32 constant under a bias DequantizeLinear (quantized = 1), taken
 * as is, or a float constant (quantized = 0), rounded to nearest even and
 * saturated. Both hold `channels` values. Returns the constant's id, -2
 * when b is not such a constant (the caller declines; nothing recorded),
 * -3 when out of memory (message recorded). */
int cs_bias_i32_const(cs_graph *g, int b, int quantized, float xs, const float *ws, int ws_count, int channels,
                      const char *base);

/* The constants of ONNX Runtime's (x86) QLinearAdd and QLinearMul for
 * per-tensor inputs aq, bq and output out, clamped to the float interval
 * [lo, hi] of a fused activation (cs_output_clamp), computed in ORT's
 * uint8 domain when domain_offset is 128 (kernels.h "The uint8 domain");
 * p->bc is left zero (binary.c):
 *   add: ra = fl(as/ys), rb = fl(bs/ys), f = fl(zy − fma(ra, za, fl(rb·zb)))
 *   mul: r = fl(fl(as·bs) / ys)
 * Q31 uses the same constants (its kernels evaluate the formula with
 * integers only). */
void cs_add_i8_params_init(const cs_qparams *aq, const cs_qparams *bq, const cs_qparams *out, float lo, float hi,
                           int32_t domain_offset, tidsp_requant_kind kind, tidsp_add_i8_params *p);
void cs_mul_i8_params_init(const cs_qparams *aq, const cs_qparams *bq, const cs_qparams *out, float lo, float hi,
                           int32_t domain_offset, tidsp_requant_kind kind, tidsp_mul_i8_params *p);

/* Output clamp of a quantized result: the dtype range of qp narrowed by a
 * fused activation given as a float interval [lo, hi] (±INFINITY when
 * absent): out = [max(qmin, Q(lo)), min(qmax, Q(hi))]. */
void cs_output_clamp(const cs_qparams *qp, float lo, float hi,
                     int32_t *out_min, int32_t *out_max);

/* A 256-entry int8 table T[q + 128] = Q_out(f(DQ_in(q))) as a new constant
 * "<base>.lut", f the runtime's float kernel tidsp_unary_f32 (its reference
 * entry point: the table never depends on the compiling CPU) with params f
 * (its n ignored), or the identity when f is NULL (a rescale). Returns the
 * constant's id, -2 when the kernel refuses f, or -1 when out of memory
 * (message recorded). */
int cs_lut_const(cs_graph *g, const char *base, const tidsp_unary_f32_params *f,
                 const cs_qparams *in, const cs_qparams *out);
/* The table's inputs: x[q + 128] = DQ_in(q) for the 256 int8 codes q. */
void cs_lut_inputs(const cs_qparams *in, float x[256]);
/* The table T[i] = Q_out(y[i]) as a new constant "<base>.lut" for values
 * y[i] = f(x[i]) of cs_lut_inputs' x that the caller computed. The
 * constant's id, or -1 when out of memory (message recorded). */
int cs_lut_const_values(cs_graph *g, const char *base, const float y[256], const cs_qparams *out);

#endif
