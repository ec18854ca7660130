/*
 * eltwise_i8_body.h — what the add_i8 / mul_i8 fast variants write the
 * same at every vector width, included once by eltwise_i8__host_avx512.c
 * (W = 16) and eltwise_i8__host_avx2.c (W = 8): a tidsp_host_bin_plan's
 * constants as vectors, the reference's float operations on W lanes, the
 * walk over the coalesced rows, and the two kernels. The includer defines
 * (the body undefines them at its end):
 *   VEC (float lanes), VECI (int32 lanes), VOUT (what FINISH returns),
 *   T (the target attribute), VSET1, VSET1_I32, VMUL, VADD, VFMA(a, b, c)
 *   = a·b + c rounded once,
 *   FINISH(v, lo, hi, off): clamp v to [lo, hi], round half to even,
 *   subtract off,
 *   ADD_KERNEL, MUL_KERNEL: the variants' names, which the body defines;
 * and after the include, bin_row (declared here): one row of n outputs.
 */

/* A tidsp_host_bin_plan's constants (eltwise_internal.h), as vectors and
 * scalars in a local copy. */
typedef struct bin_vec {
  VEC ra, rb, f, lo, hi;
  VECI a_add, b_add, off;
  int32_t a_add_i, b_add_i;
  int swapped;
} bin_vec;

enum { OP_ADD, OP_MUL };

#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE T void bin_vec_init(bin_vec *k, const tidsp_host_bin_plan *c) {
  k->ra = VSET1(c->ra);
  k->rb = VSET1(c->rb);
  k->f = VSET1(c->f);
  k->lo = VSET1(c->lo);
  k->hi = VSET1(c->hi);
  k->a_add = VSET1_I32(c->a_add);
  k->b_add = VSET1_I32(c->b_add);
  k->off = VSET1_I32(c->off);
  k->a_add_i = c->a_add;
  k->b_add_i = c->b_add;
  k->swapped = c->swapped;
}

/* W outputs from their operand lanes; op is a constant where this is
 * inlined, so each kernel's loop holds only its own arithmetic. */
static ALWAYS_INLINE T VOUT op_vec(const bin_vec *k, int op, VEC av, VEC bv) {
  VEC v;
  if (op == OP_MUL) {
    v = VMUL(av, bv); /* exact: float(prod) */
    v = VMUL(v, k->ra);
    v = VADD(v, k->f);
  } else if (k->swapped) {
    v = VFMA(bv, k->rb, VFMA(av, k->ra, k->f));
  } else {
    v = VFMA(av, k->ra, VFMA(bv, k->rb, k->f));
  }
  return FINISH(v, k->lo, k->hi, k->off);
}

/* One row of n outputs; sa / sb: operand contiguous (1) or constant (0). */
static ALWAYS_INLINE T void bin_row(const bin_vec *k, int op, const int8_t *a, int32_t sa, const int8_t *b,
                                   int32_t sb, int8_t *y, int32_t n);

/* Every row of the plan's coalesced broadcast. */
static ALWAYS_INLINE T int32_t bin_run(const tidsp_host_bin_plan *c, int op, const int8_t *a, const int8_t *b,
                                      int8_t *y) {
  bin_vec k;
  tidsp_ref_bc_iter it;
  int64_t r;
  bin_vec_init(&k, c);
  tidsp_ref_bc_init(&it, &c->rows);
  for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it))
    bin_row(&k, op, a + it.a_off, it.a_step, b + it.b_off, it.b_step, y + (size_t)r * (size_t)it.inner, it.inner);
  return TIDSP_OK;
}

/* The reference answers what the fast path does not take. */
int32_t T ADD_KERNEL(const tidsp_add_i8_params *p, const int8_t *a, const int8_t *b, int8_t *y) {
  tidsp_host_bin_plan c;
  return tidsp_host_add_plan(&c, p, a, b, y) ? bin_run(&c, OP_ADD, a, b, y) : tidsp_add_i8__ref(p, a, b, y);
}

int32_t T MUL_KERNEL(const tidsp_mul_i8_params *p, const int8_t *a, const int8_t *b, int8_t *y) {
  tidsp_host_bin_plan c;
  return tidsp_host_mul_plan(&c, p, a, b, y) ? bin_run(&c, OP_MUL, a, b, y) : tidsp_mul_i8__ref(p, a, b, y);
}

#undef VEC
#undef VECI
#undef VOUT
#undef T
#undef VSET1
#undef VSET1_I32
#undef VMUL
#undef VADD
#undef VFMA
#undef FINISH
#undef ADD_KERNEL
#undef MUL_KERNEL
