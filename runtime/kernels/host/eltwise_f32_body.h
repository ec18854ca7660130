/*
 * eltwise_f32_body.h — the row loops of eltwise_f32__host.c, written once
 * for a vector of W floats and included once per width (AVX-512F: W = 16,
 * AVX2 + FMA3: W = 8) with these macros defined by the includer:
 *   W, VEC, T (the functions' target attribute), SFX(name) (the width's
 *   suffix), VLOAD, VSTORE, VSET1, VZERO, VADD, VSUB, VMUL, VDIV, VMAX,
 *   VMIN, VFMA(a, b, c) = a·b + c rounded once, VSQRT, VNEG (sign flip),
 *   VSEL_GE0(x, t, f) = x ≥ 0 ? t : f per lane (ordered: a NaN x gives f),
 *   VSEL_NAN(x, t, f) = x is NaN ? t : f per lane;
 * the body undefines them at its end.
 * Every lane runs the scalar formula of ref/binary_f32.c or ref/unary_f32.c
 * with the same operations in the same order (the includer turns off
 * fp-contract: no product is fused unless written as VFMA where the
 * reference calls fmaf). vmaxps(a, b) is a > b ? a : b and vminps(a, b) is
 * a < b ? a : b, so each of the reference's selects is one of them with its
 * operands in the select's order (NaN and −0 then come out the same). A
 * row's last partial vector runs on copies in stack buffers, so it takes
 * the very same instructions.
 */

/* ---- binary: one coalesced row, operand steps 0 (one value) or 1 ---- */

/* a ⊙ b for one vector; op is ADD … DIV (the caller checked) or
 * ELT_PRELU (a is x, b the slope: x ≥ 0 ? x : x·slope, prelu_f32.c). */
#define BIN_VEC(op, va, vb)                                                                                          \
  ((op) == ELT_PRELU          ? VSEL_GE0(va, va, VMUL(va, vb))                                                       \
   : (op) == TIDSP_BINARY_ADD ? VADD(va, vb)                                                                         \
   : (op) == TIDSP_BINARY_SUB ? VSUB(va, vb)                                                                         \
   : (op) == TIDSP_BINARY_MUL ? VMUL(va, vb)                                                                         \
                              : VDIV(va, vb))

/* The loop over whole vectors for one op and one pair of steps: the
 * compiler sees constant op, sa, sb in each instance. */
#define BIN_LOOP(op, sa, sb)                                                                                         \
  for (; i + W <= n; i += W) {                                                                                       \
    const VEC va_ = (sa) ? VLOAD(a + i) : a0;                                                                        \
    const VEC vb_ = (sb) ? VLOAD(b + i) : b0;                                                                        \
    VSTORE(y + i, BIN_VEC(op, va_, vb_));                                                                            \
  }

#define BIN_STEPS(op)                                                                                                \
  do {                                                                                                               \
    if (sa && sb) {                                                                                                  \
      BIN_LOOP(op, 1, 1)                                                                                             \
    } else if (sa) {                                                                                                 \
      BIN_LOOP(op, 1, 0)                                                                                             \
    } else if (sb) {                                                                                                 \
      BIN_LOOP(op, 0, 1)                                                                                             \
    } else {                                                                                                         \
      BIN_LOOP(op, 0, 0)                                                                                             \
    }                                                                                                                \
  } while (0)

static T void SFX(bin_row)(int32_t op, const float *a, int32_t sa, const float *b, int32_t sb, float *y,
                           int32_t n) {
  const VEC a0 = VSET1(a[0]), b0 = VSET1(b[0]);
  int32_t i = 0;
  switch (op) {
  case TIDSP_BINARY_ADD:
    BIN_STEPS(TIDSP_BINARY_ADD);
    break;
  case TIDSP_BINARY_SUB:
    BIN_STEPS(TIDSP_BINARY_SUB);
    break;
  case TIDSP_BINARY_MUL:
    BIN_STEPS(TIDSP_BINARY_MUL);
    break;
  case ELT_PRELU:
    BIN_STEPS(ELT_PRELU);
    break;
  default:
    BIN_STEPS(TIDSP_BINARY_DIV);
    break;
  }
  if (i < n) { /* the last partial vector, on copies */
    float ta[W] = {0}, tb[W] = {0}, ty[W];
    const size_t rest = (size_t)(n - i) * sizeof(float);
    VEC va, vb;
    if (sa)
      memcpy(ta, a + i, rest);
    if (sb)
      memcpy(tb, b + i, rest);
    va = sa ? VLOAD(ta) : a0;
    vb = sb ? VLOAD(tb) : b0;
    VSTORE(ty, BIN_VEC(op, va, vb));
    memcpy(y + i, ty, rest);
  }
}

/* Every row of the coalesced broadcast `rows`. */
static T void SFX(bin_run)(int32_t op, const tidsp_broadcast *rows, const float *a, const float *b, float *y) {
  tidsp_ref_bc_iter it;
  int64_t r;
  tidsp_ref_bc_init(&it, rows);
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it))
    SFX(bin_row)(op, a + it.a_off, it.a_step, b + it.b_off, it.b_step, y + (size_t)r * (size_t)it.inner, it.inner);
}

/* ---- unary: each op one function of a vector ---- */

/* The call's attributes as vectors. */
typedef struct SFX(un_const) {
  VEC alpha, beta, lo, hi;
} SFX(un_const);

static inline T VEC SFX(u_relu)(VEC x, const SFX(un_const) * c) {
  (void)c;
  return VMAX(VZERO(), x); /* 0 > x ? 0 : x */
}
static inline T VEC SFX(u_clip)(VEC x, const SFX(un_const) * c) {
  return VMIN(VMAX(x, c->lo), c->hi); /* x > lo ? x : lo, then v < hi ? v : hi */
}
/* max(0, min(1, fl(fl(alpha·x) + beta))) as ref's hard_sigmoid */
static inline T VEC SFX(hsig)(VEC x, VEC alpha, VEC beta) {
  const VEC v = VMIN(VADD(VMUL(alpha, x), beta), VSET1(1.0f)); /* v < 1 ? v : 1 */
  return VMAX(v, VZERO());                                     /* v > 0 ? v : 0 */
}
static inline T VEC SFX(u_hard_sigmoid)(VEC x, const SFX(un_const) * c) { return SFX(hsig)(x, c->alpha, c->beta); }
static inline T VEC SFX(u_hard_swish)(VEC x, const SFX(un_const) * c) {
  (void)c;
  return VMUL(x, SFX(hsig)(x, VSET1(1.0f / 6.0f), VSET1(0.5f)));
}
static inline T VEC SFX(u_leaky_relu)(VEC x, const SFX(un_const) * c) {
  return VSEL_GE0(x, x, VMUL(c->alpha, x));
}
static inline T VEC SFX(u_neg)(VEC x, const SFX(un_const) * c) {
  (void)c;
  return VNEG(x);
}
static inline T VEC SFX(u_sqrt)(VEC x, const SFX(un_const) * c) {
  (void)c;
  return VSQRT(x);
}
static inline T VEC SFX(u_reciprocal)(VEC x, const SFX(un_const) * c) {
  (void)c;
  return VDIV(VSET1(1.0f), x);
}
/* tidsp_ort_logistic (ref/ort_float.h) lane by lane */
static inline T VEC SFX(u_sigmoid)(VEC x, const SFX(un_const) * c) {
  VEC x2, p, q, v;
  (void)c;
  x = VMAX(VSET1(-18.0f), x); /* -18 > x ? -18 : x */
  x = VMIN(VSET1(18.0f), x);  /* 18 < x ? 18 : x */
  x2 = VMUL(x, x);
  p = VFMA(x2, VSET1(4.37031012579801e-11f), VSET1(1.15627324459942e-07f));
  p = VFMA(x2, p, VSET1(6.08574864600143e-05f));
  p = VFMA(x2, p, VSET1(8.51377133304701e-03f));
  p = VFMA(x2, p, VSET1(2.48287947061529e-01f));
  q = VFMA(x2, VSET1(6.10247389755681e-13f), VSET1(5.76102136993427e-09f));
  q = VFMA(x2, q, VSET1(6.29106785017040e-06f));
  q = VFMA(x2, q, VSET1(1.70198817374094e-03f));
  q = VFMA(x2, q, VSET1(1.16817656904453e-01f));
  q = VFMA(x2, q, VSET1(9.93151921023180e-01f));
  p = VMUL(x, p);
  v = VADD(VDIV(p, q), VSET1(0.5f));
  return VMAX(VZERO(), v); /* 0 > v ? 0 : v */
}
/* tidsp_ort_tanh lane by lane: a NaN comes back as itself */
static inline T VEC SFX(u_tanh)(VEC x, const SFX(un_const) * c) {
  VEC v, s, p, q;
  (void)c;
  v = VMAX(x, VSET1(-9.0f)); /* v > -9 ? v : -9 */
  v = VMIN(v, VSET1(9.0f));  /* v < 9 ? v : 9 */
  s = VMUL(v, v);
  p = VFMA(s, VSET1(-2.76076847742355e-16f), VSET1(2.00018790482477e-13f));
  p = VFMA(p, s, VSET1(-8.60467152213735e-11f));
  p = VFMA(p, s, VSET1(5.12229709037114e-08f));
  p = VFMA(p, s, VSET1(1.48572235717979e-05f));
  p = VFMA(p, s, VSET1(6.37261928875436e-04f));
  p = VFMA(p, s, VSET1(4.89352455891786e-03f));
  p = VMUL(p, v);
  q = VFMA(s, VSET1(1.19825839466702e-06f), VSET1(1.18534705686654e-04f));
  q = VFMA(q, s, VSET1(2.26843463243900e-03f));
  q = VFMA(q, s, VSET1(4.89352518554385e-03f));
  return VSEL_NAN(x, x, VDIV(p, q));
}

/* y[i] = f(x[i]) over n elements (y == x allowed: each vector is loaded
 * before it is stored). */
#define UN_LOOP(f)                                                                                                   \
  do {                                                                                                               \
    for (; i + W <= n; i += W)                                                                                       \
      VSTORE(y + i, f(VLOAD(x + i), &c));                                                                            \
    if (i < n) {                                                                                                     \
      float tx[W] = {0}, ty[W];                                                                                      \
      memcpy(tx, x + i, (size_t)(n - i) * sizeof(float));                                                            \
      VSTORE(ty, f(VLOAD(tx), &c));                                                                                  \
      memcpy(y + i, ty, (size_t)(n - i) * sizeof(float));                                                            \
    }                                                                                                                \
  } while (0)

/* Returns 0 when op has no vector form here (the caller runs the
 * reference). */
static T int SFX(un_run)(const tidsp_unary_f32_params *p, const float *x, float *y) {
  SFX(un_const) c;
  const int32_t n = p->n;
  int32_t i = 0;
  c.alpha = VSET1(p->alpha);
  c.beta = VSET1(p->beta);
  c.lo = VSET1(p->lo);
  c.hi = VSET1(p->hi);
  switch (p->op) {
  case TIDSP_UNARY_RELU:
    UN_LOOP(SFX(u_relu));
    return 1;
  case TIDSP_UNARY_CLIP:
    UN_LOOP(SFX(u_clip));
    return 1;
  case TIDSP_UNARY_SIGMOID:
    UN_LOOP(SFX(u_sigmoid));
    return 1;
  case TIDSP_UNARY_HARDSIGMOID:
    UN_LOOP(SFX(u_hard_sigmoid));
    return 1;
  case TIDSP_UNARY_HARDSWISH:
    UN_LOOP(SFX(u_hard_swish));
    return 1;
  case TIDSP_UNARY_TANH:
    UN_LOOP(SFX(u_tanh));
    return 1;
  case TIDSP_UNARY_LEAKY_RELU:
    UN_LOOP(SFX(u_leaky_relu));
    return 1;
  case TIDSP_UNARY_NEG:
    UN_LOOP(SFX(u_neg));
    return 1;
  case TIDSP_UNARY_SQRT:
    UN_LOOP(SFX(u_sqrt));
    return 1;
  case TIDSP_UNARY_RECIPROCAL:
    UN_LOOP(SFX(u_reciprocal));
    return 1;
  default:
    return 0;
  }
}

#undef BIN_VEC
#undef BIN_LOOP
#undef BIN_STEPS
#undef UN_LOOP
#undef W
#undef VEC
#undef T
#undef SFX
#undef VLOAD
#undef VSTORE
#undef VSET1
#undef VZERO
#undef VADD
#undef VSUB
#undef VMUL
#undef VDIV
#undef VMAX
#undef VMIN
#undef VFMA
#undef VSQRT
#undef VNEG
#undef VSEL_GE0
#undef VSEL_NAN
