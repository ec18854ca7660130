/*
 * binary.c — the constants of the int8 elementwise Add and Mul kernels,
 * folded as ONNX Runtime's x86 QLinearAdd / QLinearMul compute them
 * (quant.h). Every rounding is a float32 one, in ORT's order: the add's
 * offset keeps ORT's single contraction, fma(ra, za, rb·zb), and nothing
 * else may be contracted.
 */
#include <math.h>

#include "quant.h"

void cs_add_i8_params_init(const cs_qparams *aq, const cs_qparams *bq, const cs_qparams *out, float lo, float hi,
                           int32_t domain_offset, tidsp_requant_kind kind, tidsp_add_i8_params *p) {
  *p = (tidsp_add_i8_params){.kind = kind, .ra = aq->scale[0] / out->scale[0], .rb = bq->scale[0] / out->scale[0],
                             .a_zp = aq->zp[0], .b_zp = bq->zp[0], .y_zp = out->zp[0],
                             .domain_offset = domain_offset};
  cs_output_clamp(out, lo, hi, &p->y_min, &p->y_max);
  float za = (float)(p->a_zp + domain_offset), zb = (float)(p->b_zp + domain_offset);
  float zy = (float)(p->y_zp + domain_offset);
  p->f = zy - fmaf(p->ra, za, p->rb * zb);
}

void cs_mul_i8_params_init(const cs_qparams *aq, const cs_qparams *bq, const cs_qparams *out, float lo, float hi,
                           int32_t domain_offset, tidsp_requant_kind kind, tidsp_mul_i8_params *p) {
  *p = (tidsp_mul_i8_params){.kind = kind, .r = (aq->scale[0] * bq->scale[0]) / out->scale[0], .a_zp = aq->zp[0],
                             .b_zp = bq->zp[0], .y_zp = out->zp[0], .domain_offset = domain_offset};
  cs_output_clamp(out, lo, hi, &p->y_min, &p->y_max);
}
