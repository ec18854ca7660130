/*
 * kernels.h — the generic kernel ABI between generated code and the runtime.
 *
 * Conventions (all kernels):
 *  - Tensors are dense, row-major; activations are NCHW (C contiguous H×W
 *    planes). Batch is a leading dimension everywhere.
 *  - A kernel takes a pointer to a small const parameter struct (scalars
 *    only: the struct is a `static const` in generated code) and then its
 *    data pointers. Per-channel constants (bias, requant multipliers, LUTs,
 *    quantization scales) live in the weights blob and are passed as
 *    pointers.
 *  - Every kernel returns a tidsp_status; 0 is success. Kernels never
 *    allocate, never abort, never print.
 *  - int8 is the only 8-bit activation type: the compiler rewrites uint8
 *    activations to int8 (q − 128, zp − 128), which is exact. uint8 appears
 *    only at the model boundary (quantize/dequantize kernels).
 *  - Every kernel is a row of the kernel table, cstatic/kernels.def; this
 *    header declares each one again from its row (at the end), which
 *    checks the row against the prototype here. A kernel whose params are
 *    a struct declared here already (e.g. tidsp_prelu_f32 takes a
 *    tidsp_broadcast) may have no prototype here: its row's declaration is
 *    its prototype and the comment above its row its contract.
 *
 * Requantization (one int32 accumulator → one integer output), chosen by
 * tidsp_requant_params.kind; `rq` points at a blob in the weights:
 *
 *  TIDSP_REQUANT_FLOAT  rq = float mult[C]   (C = channels, or 1 when
 *                       per_channel == 0). Mirrors ONNX Runtime exactly:
 *                         v = fl(float(acc) · mult[c])        (RNE conversion)
 *                         v = clamp(v, out_min − zp, out_max − zp)   (float)
 *                         y = rne(v) + zp                     (lrintf, RNE)
 *  TIDSP_REQUANT_Q31    rq = int32 mult[C] followed by int32 shift[C]:
 *                       the same float formula computed with integers only
 *                       (targets without an FPU), bit-identical to FLOAT.
 *                       mult · 2^−shift is the float multiplier exactly
 *                       (mult = its 24-bit significand, shift in [0, 62]);
 *                       every float32 rounding of the FLOAT formula is
 *                       reproduced by an integer rounding to 24 significant
 *                       bits, ties to even (runtime/kernels/ref/softfloat.h).
 *                       Why not gemmlowp's single rounding: its one-step
 *                       disagreements with ORT on a few elements per million
 *                       grow through deep networks.
 *  TIDSP_REQUANT_SCALE_SHIFT  rq = const tidsp_scale_shift *: MMALIB's
 *                       requantization (cstatic/mmalib.h), 8-bit scale and
 *                       shift per channel (scale[0]/shift[0] for all when
 *                       per_channel == 0; a NULL array means scale 1 /
 *                       shift 0):
 *                         v = acc · scale[c]                  (int64, exact)
 *                         y = clamp(floor((v + 2^(shift[c]−1)) / 2^shift[c]),
 *                                   out_min, out_max)   (shift 0: y = v)
 *                       i.e. round half toward +∞. out_zp must be 0 (MMALIB
 *                       folds the output zero point into the bias) and
 *                       shift[c] ≤ 31. The mmalib_* host emulation runs
 *                       its int8 conv/matmul through the dispatched kernels
 *                       with this kind.
 *
 * out_min/out_max are the output dtype's range, narrowed by a fused
 * Relu/Clip (e.g. Relu → out_min = max(qmin, zp)). out_zp is a value of the
 * output dtype (the kernels with an 8-bit output return TIDSP_ERR_PARAM for
 * any other).
 *
 * The uint8 domain of FLOAT formulas: where a formula below adds a value
 * or zero point in float before rounding (add, mul, avgpool), the result
 * depends on whether ONNX Runtime ran the op on uint8 or on int8 values.
 * On x86 ORT rewrites int8 activations to uint8 when it can (the uint8
 * models, and int8 ones by default) and keeps int8 where int8 QLinear ops
 * are allowed (ARM, or session.qdqisint8allowed). Such kernels take
 * domain_offset: 128 adds 128 to every int8 input and zero point used in
 * float and subtracts it from the rounded result (ORT's uint8 kernels);
 * 0 computes on the int8 values. The compiler picks 128 for tensors that
 * were uint8 in the model and 0 for int8 ones, and computes f (add) with
 * the same offset. Formulas that add the zero point after rounding are
 * offset-invariant.
 */
#ifndef CSTATIC_KERNELS_H
#define CSTATIC_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "cstatic/tidsp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TIDSP_MAX_RANK 6

typedef enum tidsp_requant_kind {
  TIDSP_REQUANT_FLOAT = 0,
  TIDSP_REQUANT_Q31 = 1,
  TIDSP_REQUANT_SCALE_SHIFT = 2
} tidsp_requant_kind;

/* The `rq` of TIDSP_REQUANT_SCALE_SHIFT. */
typedef struct tidsp_scale_shift {
  const uint8_t *scale; /* [channels] or NULL (1) */
  const uint8_t *shift; /* [channels] or NULL (0), each ≤ 31 */
} tidsp_scale_shift;

#define TIDSP_SCALE_SHIFT_MAX_SHIFT 31

typedef struct tidsp_requant_params {
  int32_t kind;        /* tidsp_requant_kind */
  int32_t per_channel; /* 0: mult[0] (and shift[0]) for every channel */
  int32_t out_zp;
  int32_t out_min, out_max;
} tidsp_requant_params;

/* The dispatched kernels (tidsp_conv2d_i8, …) pick the fastest row of
 * this build's variant table for the CPU at their first call (the
 * TIDSP_KERNELS environment variable names a row instead). Pin a row by
 * name now, for this copy of the runtime: "ref" (the reference loops;
 * what the compiler folds constants with), "host_amx", "host_avx512vnni",
 * "host_avx2". TIDSP_OK; TIDSP_ERR_PARAM for an unknown name or NULL;
 * TIDSP_ERR_UNSUPPORTED for a row this CPU or build cannot run. */
int32_t tidsp_kernels_select(const char *row);

/* Requantize one accumulator of channel c (shared by all integer kernels so
 * that every kernel rounds the same way). Returns 0 for invalid input (NULL,
 * c outside [0, channels), unknown kind, Q31 entry out of range). */
int32_t tidsp_requant_one(const tidsp_requant_params *rq, const void *rq_data,
                          int32_t channels, int32_t c, int32_t acc);

/* ------------------------------------------------------------------------
 * Quantize / dequantize (model boundary and the float fallback path).
 * Layout: [outer, channels, inner]; per-tensor when channels == 1.
 *   quantize:   y = clamp(rne(fl(x / s[c])), qmin − zp, qmax − zp) + zp
 *               (a true divide, as ONNX Runtime; NaN → qmin)
 *   dequantize: y = fl(float(int32(q) − zp[c]) · s[c])
 * dtype is the integer side's tidsp_dtype (I8, U8, I16, U16, I32).
 * ---------------------------------------------------------------------- */
typedef struct tidsp_qdq_params {
  int32_t outer, channels, inner;
  int32_t dtype;
} tidsp_qdq_params;

int32_t tidsp_quantize(const tidsp_qdq_params *p, const float *scale,
                       const int32_t *zero_point, const float *x, void *y);
int32_t tidsp_dequantize(const tidsp_qdq_params *p, const float *scale,
                         const int32_t *zero_point, const void *x, float *y);

/* ------------------------------------------------------------------------
 * Convolution, NCHW, weights OIHW ([c_out][c_in/groups][k_h][k_w]).
 * h_out/w_out are given (the compiler resolved pads and ceil); the bottom
 * and right padding follow from them. Padding reads as x_zp (i8) or 0 (f32).
 *   i8:  acc = bias[co] + Σ (x − x_zp)(w − w_zp), int32 (wraps like ORT's);
 *        then requant. Needs c_in/groups·k_h·k_w ≤ 33025 (so that the sum
 *        of products is exact in int32), else TIDSP_ERR_SHAPE.
 *   f32: y = bias[co] + Σ x·w.
 * ---------------------------------------------------------------------- */
/* ONNX Runtime's NCHWc layout decisions depend on MLAS's channel block,
 * 16 on AVX-512F CPUs and 8 on AVX2 + FMA3 ones, which the compiler does
 * not know: a float kernel's layout flag (tidsp_conv2d_params.mlas_nchw,
 * tidsp_gap_f32_params.nchwc) holds one bit per block, and the kernel reads
 * the bit of the CPU it runs on (block 16 where MLAS has no FMA kernels, as
 * on the DSP). */
#define TIDSP_MLAS_BLOCK16 1
#define TIDSP_MLAS_BLOCK8 2

typedef struct tidsp_conv2d_params {
  int32_t n, c_in, h_in, w_in;
  int32_t c_out, h_out, w_out;
  int32_t k_h, k_w;
  int32_t stride_h, stride_w;
  int32_t dil_h, dil_w;
  int32_t pad_top, pad_left;
  int32_t groups;
  int32_t x_zp, w_zp;       /* i8 only */
  tidsp_requant_params rq;  /* i8 only; channels = c_out */
  /* i8 only: bytes from one output channel's weight row to the next
   * (row = c_in/groups·k_h·k_w taps in OIHW order). 0 means dense rows.
   * The compiler pre-packs weights for the host by padding each row with
   * zero bytes to a multiple of 64 (one AMX/zmm row), so that fast kernels
   * load whole aligned rows; every variant reads only the first K bytes. */
  int32_t w_row_stride;
  /* f32 only: the TIDSP_MLAS_BLOCK* bits of the blocks at which ONNX
   * Runtime keeps this convolution in NCHW and runs MLAS's generic one
   * (im2col + SGEMM) rather than its NCHWc kernels; set by the compiler
   * from compiler/passes/match/ort_nchwc.c, it picks the summation order
   * of conv2d_f32__host_mlas.c. */
  int32_t mlas_nchw;
  /* i8 only: the order of the weight bytes (TIDSP_CONV_W_*), a property of
   * the node that the compiler chooses and packs the constant for; every
   * variant of tidsp_conv2d_i8 reads every layout. 0 = OIHW rows. */
  int32_t w_layout;
  /* f32 with a `sum` (a fused Add) only: the TIDSP_MLAS_BLOCK* bits of
   * the blocks at which ONNX Runtime adds the sum inside the convolution,
   * ((Σ x·w) + sum) + bias; at the other blocks ORT runs the convolution
   * and then the Add, (conv + bias) + sum, and so does the kernel. The
   * compiler fuses an Add where either block's ORT does (ORT's fusions
   * depend on the block like its layouts, passes/fuse_conv_add_f32.c). */
  int32_t sum_in_conv;
  /* tidsp_mmalib_exact_requant* only: z holds a finer grid than y, the
   * output of the conv at a smaller stride, of which y picks every
   * z_step_h-th row and z_step_w-th column (MMALIBAsymStride's pick, done
   * by the requantization): z's planes are z_h × z_w and y(oh, ow) reads
   * z(oh·z_step_h, ow·z_step_w). All 0: z's planes are y's. */
  int32_t z_h, z_w, z_step_h, z_step_w;
} tidsp_conv2d_params;

/* Weight layouts of tidsp_conv2d_i8 (params w_layout), K = c_in/groups·
 * k_h·k_w, T = k_h·k_w, Q = c_in/groups / 4:
 *   OIHW  w[co·stride + ci·T + t] (stride = w_row_stride, or K when 0).
 *   O16   blocks of 16 output channels, 16·K + 64 bytes each: the block's
 *         weights, 4 input channels per lane,
 *           w[(co/16)·(16·K + 64) + (t·Q + ci/4)·64 + (co%16)·4 + ci%4],
 *         then its 16 channels' Σw as int32 (little-endian), the sum of
 *         each channel's K weights, at (co/16)·(16·K + 64) + 16·K +
 *         (co%16)·4 (c_out/groups % 16 == 0, c_in/groups % 4 == 0,
 *         w_row_stride 0). One 64-byte vector is the vpdpbusd operand of
 *         16 channels × 4 taps, read in order by the AVX-512 VNNI kernel
 *         that puts output channels in lanes (maps up to 56×56: ResNet's
 *         3×3 layers); Σw is its +128 activation offset's term, computed
 *         once by the compiler instead of per call. Kernels that do not
 *         use Σw ignore it; a Σw that is not the weights' sum is invalid
 *         input (that kernel's results then differ).
 * The tap order t = kh·k_w + kw of a (co, ci) is OIHW's in both. Other
 * values, or O16 on a shape it does not fit, are TIDSP_ERR_PARAM. */
enum { TIDSP_CONV_W_OIHW = 0, TIDSP_CONV_W_O16 = 1 };
/* O16's byte offsets (the formula above; K = c_in/groups·k_h·k_w, Q =
 * c_in/groups / 4): weight (co, ci, t), and the first byte of co's Σw. The
 * compiler's packer and the kernels' readers take them from here. */
static inline int64_t tidsp_conv_o16_weight_at(int64_t K, int64_t Q, int64_t co, int64_t ci, int64_t t) {
  return (co / 16) * (16 * K + 64) + (t * Q + ci / 4) * 64 + (co % 16) * 4 + ci % 4;
}
static inline int64_t tidsp_conv_o16_sum_at(int64_t K, int64_t co) {
  return (co / 16) * (16 * K + 64) + 16 * K + (co % 16) * 4;
}
/* The most bytes of input grid (tidsp_conv_o16_grid_bytes) that the AVX-512
 * VNNI kernel's O16 path holds on its stack: it runs the output rows in
 * bands whose grid fits; the compiler packs O16 only where one output
 * row's does (else the path is the reference's). */
#define TIDSP_CONV_O16_MAX_GRID 65536
/* The bytes of one image's group of input channels that `rows` output
 * rows read on that path's grid: a 1×1 conv's rows·w_out pixels (the ones
 * it reads), else the padded input the taps span, ((rows−1)·stride_h +
 * (k_h−1)·dil_h + 1) · ((w_out−1)·stride_w + (k_w−1)·dil_w + 1); times
 * c_in/groups. */
static inline int64_t tidsp_conv_o16_grid_bytes(const tidsp_conv2d_params *p, int32_t rows) {
  const int64_t cpg = p->groups > 0 ? p->c_in / p->groups : 0;
  if (p->k_h == 1 && p->k_w == 1)
    return (int64_t)rows * p->w_out * cpg;
  return ((int64_t)(rows - 1) * p->stride_h + (int64_t)(p->k_h - 1) * p->dil_h + 1) *
         ((int64_t)(p->w_out - 1) * p->stride_w + (int64_t)(p->k_w - 1) * p->dil_w + 1) * cpg;
}

int32_t tidsp_conv2d_i8(const tidsp_conv2d_params *p, const int8_t *x,
                        const int8_t *w, const int32_t *bias /* [c_out] or NULL */,
                        const void *rq, int8_t *y);

/* The exact requantization behind an MMALIB int16 conv (-mmalib-exact;
 * compiler/quant/mmalib_exact.h): y = ORT's int8 output of the int8 conv
 * of x (NCHW, n images, padded with its zero point x_zp, w_zp = 0) and w
 * (OIHW rows, groups 1 or c_in = c_out), from x16 = x − x_zp (int16, the
 * input of MMALIB's call, whose zero padding is then x_zp's) and z, the
 * int16 output of MMALIB's call on x16 with bias[c], scale[c], shift[c]
 * (an FC of M rows is the 1x1 conv of n = M images of K channels,
 * h = w = 1):
 *   z = sat16(round_half_up((Σx16·w + bias[c])·scale[c]·2^−shift[c]))
 * grid is int64[4·c_out + 1]: rows bias, D, scale, shift, where ORT's
 * accumulator is acc = Σx16·w + bias[c] − D[c], then P, the number of
 * partial results z holds (1 to TIDSP_MMALIB_EXACT_MAX_PARTS): z is
 * [P][n][c_out][h_out][w_out], part j the same call on a part of the taps
 * (a 5×5/7×7 depthwise conv as 3×3 calls, compiler/quant/mmalib_exact.h)
 * with bias 0 for j > 0, so acc is the sum of the parts' accumulators
 * less D[c]. z bounds acc to an interval (the sum of the parts';
 * unbounded on a side where a part saturates); when ORT's requantization
 * (p->rq: FLOAT, per channel, mult[c]) gives both ends the same output,
 * that is y; else acc is summed again here from x16 and w (the rare
 * output within z's step of a rounding boundary) and requantized. So y
 * equals ORT's bit for bit, and the only MACs repeated on the core are
 * those outputs'. y may be z's first bytes (the planner runs it in place:
 * each output is written after its z entries are read, and the int8 or
 * int16 output never outruns z's part 0). z may hold a finer grid than y
 * (p->z_h, z_w, z_step_h, z_step_w: a stride rewrite's pick; y(oh, ow)
 * reads z(oh·z_step_h, ow·z_step_w), and the core's recomputation is the
 * conv p describes, at y's stride). p->x_zp and p->w_zp are 0 (x16 is centred),
 * TIDSP_ERR_SHAPE otherwise; TIDSP_ERR_PARAM for a scale outside
 * [1, 255], a shift outside [0, 31] or P outside
 * [1, TIDSP_MMALIB_EXACT_MAX_PARTS]. */
#define TIDSP_MMALIB_EXACT_MAX_PARTS 9
int32_t tidsp_mmalib_exact_requant(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x,
                                   const int8_t *w, const int64_t *grid, const float *mult, int8_t *y);
/* The same, written as y − p->rq.out_zp in int16: the widened input of a
 * following exact layer whose x_zp is this output's zero point
 * (compiler/passes/fuse_widen_into_producer.c), so that layer's
 * tidsp_widen_i16 pass over the int8 y is not needed. */
int32_t tidsp_mmalib_exact_requant_i16(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x,
                                       const int8_t *w, const int64_t *grid, const float *mult, int16_t *y);
/* The same, written as lut16[y + 128]: an int8 activation table whose
 * int16 output a following exact layer reads (tidsp_lut_i16) applied to
 * y as it is stored (compiler/passes/fuse_widen_into_producer.c), so that
 * table's pass over the int8 y is not needed. */
int32_t tidsp_mmalib_exact_requant_lut16(const tidsp_conv2d_params *p, const int16_t *z, const int16_t *x,
                                         const int8_t *w, const int64_t *grid, const float *mult,
                                         const int16_t *lut16 /* [256] */, int16_t *y);
/* sum (or NULL): a tensor of y's shape added to the convolution, summed
 * as ONNX Runtime's NCHWc convolution sums a fused Add ("Sum" input): each
 * output is ((Σ x·w) + sum) + bias, not ((Σ x·w) + bias) + sum
 * (compiler/passes/fuse_conv_add_f32.c; the exact placement of the sum
 * among the partial sums is the variant's, see conv2d_f32__host_mlas.c). */
int32_t tidsp_conv2d_f32(const tidsp_conv2d_params *p, const float *x,
                         const float *w, const float *bias /* or NULL */,
                         const float *sum /* or NULL */, float *y);

/* ------------------------------------------------------------------------
 * Matrix multiply Y[m][n] = X[m][k] · Wᵀ, W stored [n][k] (transposed at
 * compile time), per-column requant (channels = n).
 *   i8:  acc = bias[n] + Σ_k (x − x_zp)(w − w_zp)
 * The f32 form is batched with stride 0 meaning a broadcast operand; its B
 * is stored [k][n] (not transposed), as a runtime tensor may be.
 * ---------------------------------------------------------------------- */
typedef struct tidsp_matmul_params {
  int32_t m, k, n;
  int32_t x_zp, w_zp;
  tidsp_requant_params rq;
  int32_t w_row_stride; /* bytes between W rows ([n][k]); 0 = k (dense) */
} tidsp_matmul_params;

int32_t tidsp_matmul_i8(const tidsp_matmul_params *p, const int8_t *x,
                        const int8_t *w, const int32_t *bias /* [n] or NULL */,
                        const void *rq, int8_t *y);

/* Matrix multiply of two runtime int8 tensors (ONNX Runtime's
 * QLinearMatMul; attention's Q·Kᵀ and A·V), batched:
 *   Y[b][i][j] = rq( Σ_k (A[b][i][k] − a_zp)(Bt[b][j][k] − b_zp) )
 * A is [batch][m][k], Bt is B transposed, [batch][n][k] (the compiler
 * transposes B, or takes the Kᵀ the graph has), Y [batch][m][n]; a batch
 * stride of 0 broadcasts that operand. Per-tensor requant (per_channel 0);
 * one tidsp_matmul_i8 per batch (so the fastest variant). */
typedef struct tidsp_batch_matmul_i8_params {
  int32_t batch, m, k, n;
  int32_t a_batch_stride, b_batch_stride; /* elements; 0 = broadcast */
  int32_t a_zp, b_zp;
  tidsp_requant_params rq;
} tidsp_batch_matmul_i8_params;

int32_t tidsp_batch_matmul_i8(const tidsp_batch_matmul_i8_params *p,
                              const int8_t *a, const int8_t *b_t,
                              const void *rq, int8_t *y);

/* The MMA path of the product above (-mmalib=1 with the exact path,
 * compiler/passes/fuse_qdq_to_int8_batch_matmul.c): each operand is
 * widened to int16 with its zero point subtracted and zero-padded to the
 * int16 tile (tidsp_widen_i16), MMALIB multiplies the int16 matrices with
 * one shift (mmalib_batch_matmul_i16), and tidsp_batch_matmul_exact_requant
 * gives ORT's bytes from that result.
 *
 * tidsp_widen_i16: x is `batch` int8 matrices [rows][cols], batch_stride
 * elements apart; y is `batch` int16 matrices [out_rows][out_cols], dense:
 *   y[b][i][j] = x[b][i][j] − zp            (transpose 0; i < rows, j < cols)
 *   y[b][i][j] = x[b][j][i] − zp            (transpose 1; i < cols, j < rows)
 *   0 elsewhere (the padding: zero rows and columns add nothing to a
 *   product). TIDSP_ERR_SHAPE when the output does not hold the matrix.
 *   One dense matrix (batch 1, transpose 0, out = rows × cols) may run in
 *   place: y may start where x does (it runs from the end). */
typedef struct tidsp_widen_i16_params {
  int32_t batch, rows, cols;
  int32_t batch_stride; /* elements between x's matrices */
  int32_t out_rows, out_cols;
  int32_t transpose;
  int32_t zp;
} tidsp_widen_i16_params;

int32_t tidsp_widen_i16(const tidsp_widen_i16_params *p, const int8_t *x, int16_t *y);

/* z is [batch][m_pad][n_pad]: z = sat16(round_half_up(acc / 2^shift)) of
 * the exact acc = Σ_k a16[b][i][k]·b16[b][k][j] (a16 [m_pad][k_pad] and
 * b16 [k_pad][n_pad] per batch, a_batch_stride / b_batch_stride elements
 * apart, 0 = broadcast; their first m, k, n rows/columns hold the operands
 * less their zero points, the rest zeros). Y[b][i][j] (i < m, j < n,
 * dense [batch][m][n]) = rq(acc), rq as tidsp_batch_matmul_i8's (blob
 * `rq`, per tensor): z bounds acc to [z·2^shift − h, z·2^shift − h +
 * 2^shift − 1] (h = 2^(shift−1), 0 for shift 0), open-ended on the side
 * where z is saturated (−32768 or 32767); where rq of both ends agree that
 * is the output (rq is monotone), else acc is summed again from a16 and
 * b16. So Y equals ORT's QLinearMatMul bit for bit whatever the shift (|acc|
 * within int32, as ORT's accumulator); the shift only sets how many are
 * summed again. */
typedef struct tidsp_batch_matmul_exact_params {
  int32_t batch, m, k, n;
  int32_t m_pad, k_pad, n_pad;
  int32_t a_batch_stride, b_batch_stride; /* int16 elements; 0 = broadcast */
  int32_t shift;
  tidsp_requant_params rq;
} tidsp_batch_matmul_exact_params;

int32_t tidsp_batch_matmul_exact_requant(const tidsp_batch_matmul_exact_params *p, const int16_t *z,
                                         const int16_t *a16, const int16_t *b16, const void *rq, int8_t *y);

/* Weight-only int8 matrix multiply (the spec's FuseDequantizeMatmul, an
 * LLM's linear layers): float activations, int8 weights [N][K] with one
 * float scale per output column, float out:
 *   out[m][n] = (Σ_k act[m][k] · w[n][k]) · scale[n]
 * summed in float in k order, then one multiply (a bias stays a separate
 * add). The weights stay int8 in memory: a quarter of their float size.
 * TIDSP_ERR_SHAPE for M, K or N < 1. */
int32_t c7x_dequantize_vecmatmul(const float *act, const int8_t *w,
                                 const float *scale, float *out, int32_t M,
                                 int32_t K, int32_t N);

/* One decode step of scaled dot-product attention over a KV cache (the
 * spec's c7x_sdpa_decode; float): Q [nq][hd] (one query position), K and
 * V [nkv][L][hd], an additive mask [L] shared by every head (or NULL),
 * out [nq][hd]. Query head h reads KV head h / (nq / nkv):
 *   s_j = (q·k_j) / sqrtf(hd) + mask_j,   w = softmax(s) (max subtracted,
 *   expf, then times 1/Σ),   out = Σ_j w_j v_j
 * dot products and sums in float in index order. TIDSP_ERR_SHAPE for a
 * size < 1 or nq not a multiple of nkv. */
int32_t c7x_sdpa_decode(const float *q, const float *k, const float *v,
                        const float *mask, float *out, int32_t nq,
                        int32_t nkv, int32_t hd, int32_t L);

/* Dispatched kernels: tidsp_conv2d_i8 and tidsp_matmul_i8, and the others
 * marked PUBLIC in cstatic/kernels.def (quantize, dequantize, batch_matmul_i8,
 * add_i8, mul_i8, lut_i8, maxpool_i8, maxpool_f32, global_avgpool_i8,
 * layer_norm_f32, layer_norm_i8, transpose, slice), run the fastest variant
 * this CPU supports (runtime/kernels/dispatch.c). Each one's portable
 * reference loop is also callable by name, as <name>__ref with the same
 * arguments, bytes and status (declared from the table at the end of this
 * header): code compiled with -kernels=scalar calls these, the scalar
 * baseline, on any CPU, and the compiler folds constants with them. */

typedef struct tidsp_matmul_f32_params {
  int32_t batch, m, k, n;
  int32_t a_batch_stride, b_batch_stride; /* elements; 0 = broadcast */
  /* 1: B is a runtime tensor (ONNX Runtime sums it in MLAS's unpacked
   * SGEMM order, not the prepacked one); only the host kernel reads it */
  int32_t b_runtime;
} tidsp_matmul_f32_params;

int32_t tidsp_matmul_f32(const tidsp_matmul_f32_params *p, const float *a,
                         const float *b, const float *bias /* [n] or NULL */,
                         float *y);

/* ------------------------------------------------------------------------
 * Broadcast elementwise binary ops. shape is the output shape; a_stride /
 * b_stride are element strides of each operand per output dimension, 0
 * where that operand is broadcast.
 * ---------------------------------------------------------------------- */
typedef struct tidsp_broadcast {
  int32_t rank;
  int32_t shape[TIDSP_MAX_RANK];
  int32_t a_stride[TIDSP_MAX_RANK];
  int32_t b_stride[TIDSP_MAX_RANK];
} tidsp_broadcast;

/* QLinearAdd. FLOAT (ONNX Runtime's AVX2 kernel, built with FMA
 * contraction, on raw uint8 values; a, b, zero points are the uint8 ones):
 *   v = fmaf(a, ra, fmaf(b, rb, f)),  y = clamp(rne(v), y_min, y_max)
 *   ra = fl(as/ys), rb = fl(bs/ys) and, at compile time,
 *   f = fl(y_zp − fmaf(ra, a_zp, fl(rb·b_zp)))   (ORT's compiler fuses ra·a_zp)
 *   Exception: when A holds one value per ORT span (A's stride is 0 in the
 *   innermost output dim of size > 1, or the output has one element), ORT
 *   swaps the operands, which rounds differently; the kernel then computes
 *     v = fmaf(b, rb, fmaf(a, ra, f_swapped)),
 *     f_swapped = fl(y_zp − fmaf(rb, b_zp, fl(ra·a_zp)))   (derived by the kernel)
 * Q31: the same formula, constants and roundings in integer arithmetic
 *   (ra, rb, f are read as float32 bit patterns, no FPU needed). */
typedef struct tidsp_add_i8_params {
  tidsp_broadcast bc;
  int32_t kind; /* tidsp_requant_kind */
  float ra, rb, f;
  int32_t a_zp, b_zp, y_zp;
  int32_t y_min, y_max;
  int32_t domain_offset; /* 128 or 0: see "The uint8 domain" above */
} tidsp_add_i8_params;

int32_t tidsp_add_i8(const tidsp_add_i8_params *p, const int8_t *a,
                     const int8_t *b, int8_t *y);

/* QLinearMul. FLOAT: prod = (a − a_zp)(b − b_zp);
 *   y = clamp(rne(fl(fl(float(prod)·r) + y_zp)), y_min, y_max), r = fl(fl(as·bs)/ys)
 *   (y_zp is the uint8 zero point here; no fused multiply-add)
 * Q31: the same formula in integer arithmetic (r read as a bit pattern). */
typedef struct tidsp_mul_i8_params {
  tidsp_broadcast bc;
  int32_t kind;
  float r;
  int32_t a_zp, b_zp, y_zp;
  int32_t y_min, y_max;
  int32_t domain_offset; /* 128 or 0: see "The uint8 domain" above */
} tidsp_mul_i8_params;

int32_t tidsp_mul_i8(const tidsp_mul_i8_params *p, const int8_t *a,
                     const int8_t *b, int8_t *y);

typedef enum tidsp_binary_op {
  TIDSP_BINARY_ADD = 0,
  TIDSP_BINARY_SUB = 1,
  TIDSP_BINARY_MUL = 2,
  TIDSP_BINARY_DIV = 3,
  TIDSP_BINARY_POW = 4, /* ORT's: b == 2 → a·a, b == 3 → a·a·a, else powf */
  /* tidsp_binary only (any dtype); codes are ABI, appended only */
  TIDSP_BINARY_MAX = 5, /* NaN propagates */
  TIDSP_BINARY_MIN = 6,
  TIDSP_BINARY_EQUAL = 7, /* comparisons: bool output (0/1); NaN is unordered */
  TIDSP_BINARY_LESS = 8,
  TIDSP_BINARY_LESS_OR_EQUAL = 9,
  TIDSP_BINARY_GREATER = 10,
  TIDSP_BINARY_GREATER_OR_EQUAL = 11,
  TIDSP_BINARY_AND = 12, /* logic: operands read as != 0, bool output */
  TIDSP_BINARY_OR = 13,
  TIDSP_BINARY_XOR = 14
} tidsp_binary_op;

typedef struct tidsp_binary_f32_params {
  tidsp_broadcast bc;
  int32_t op; /* tidsp_binary_op */
} tidsp_binary_f32_params;

int32_t tidsp_binary_f32(const tidsp_binary_f32_params *p, const float *a,
                         const float *b, float *y);

/* Elementwise a op b on any dtype with numpy broadcasting (bc), for the
 * ops outside float arithmetic: integer Add/Sub/Mul/Div/Pow, Max/Min,
 * comparisons and logic. a_dtype, b_dtype, y_dtype are tidsp_dtype codes;
 * b_dtype equals a_dtype except for Pow (ONNX lets the exponent differ);
 * y_dtype is BOOL for a comparison or logic op, else a_dtype.
 * Integers compute in int64 and wrap to y_dtype (two's complement); Div
 * truncates toward zero, and a zero divisor returns TIDSP_ERR_PARAM (ONNX
 * leaves it undefined; ONNX Runtime traps). A float operand puts the op in
 * double, rounded once to float (exact for + − × ÷ of floats: the double
 * result rounds to the correctly rounded float); Pow with an integer base
 * is (int)pow(a, b) in double as ONNX Runtime's, saturated to the range;
 * float Pow of two floats is tidsp_binary_f32's. In place allowed when y
 * has a's dtype and shape. */
typedef struct tidsp_binary_params {
  tidsp_broadcast bc;
  int32_t op; /* tidsp_binary_op */
  int32_t a_dtype, b_dtype, y_dtype;
} tidsp_binary_params;

int32_t tidsp_binary(const tidsp_binary_params *p, const void *a, const void *b,
                     void *y);

/* ------------------------------------------------------------------------
 * Elementwise unary.
 * i8: a 256-entry table computed at compile time, y = lut[x + 128]. Any
 * unary function between a dequantize and a quantize (Sigmoid, HardSwish,
 * a rescale, …) becomes one table.
 * f32: op (a row of cstatic/unary_ops.def, whose comment gives the
 * formula) with its float attributes: alpha and beta (as the op's row
 * names them, e.g. HardSigmoid's), lo and hi (Clip's bounds). Each op is
 * rounded as ONNX Runtime's CPU kernel rounds it.
 * ---------------------------------------------------------------------- */
typedef struct tidsp_lut_params {
  int32_t n;
} tidsp_lut_params;

int32_t tidsp_lut_i8(const tidsp_lut_params *p, const int8_t *lut /* [256] */,
                     const int8_t *x, int8_t *y);
/* y = lut[x + 128] into int16: an int8 table less the zero point of the
 * widened input a following MMALIB exact layer reads
 * (compiler/passes/fuse_widen_into_producer.c). In place: y may start
 * where x does (it runs from the end). */
int32_t tidsp_lut_i16(const tidsp_lut_params *p, const int16_t *lut /* [256] */,
                      const int8_t *x, int16_t *y);
/* One table per channel: y[i] = lut[c·256 + x[i] + 128] with c = (i /
 * inner) % channels, for x of n elements laid out [outer][channels][inner]
 * (NCHW: inner = H·W) — a PRelu between a dequantize and a quantize, its
 * slope per channel. channels ≥ 1, inner ≥ 1 and n a multiple of
 * channels·inner (else TIDSP_ERR_SHAPE, nothing written). In place (y ==
 * x) is allowed. */
typedef struct tidsp_lut_channels_params {
  int32_t n, channels, inner;
} tidsp_lut_channels_params;

int32_t tidsp_lut_i8_channels(const tidsp_lut_channels_params *p,
                              const int8_t *lut /* [channels][256] */,
                              const int8_t *x, int8_t *y);
/* A table per channel, picked by an index from a few: y[i] = luts[table[c]·256
 * + x[i] + 128] with c = (i / inner) % channels, x laid out as for
 * tidsp_lut_i8_channels. A QuantizeLinear after moves (Concat, a channel
 * shuffle, Split) that mix channels dequantized with different parameters:
 * its channels need as many tables as the moves had sources, not one each
 * (compiler/passes/eliminate_qdq_mixed_moves.c). tables ≥ 1, every
 * table[c] in [0, tables) (else TIDSP_ERR_PARAM), channels, inner and n as
 * for tidsp_lut_i8_channels (else TIDSP_ERR_SHAPE); nothing is written on an
 * error. In place (y == x) is allowed. */
typedef struct tidsp_lut_select_params {
  int32_t n, channels, inner, tables;
} tidsp_lut_select_params;

int32_t tidsp_lut_i8_select(const tidsp_lut_select_params *p,
                            const int8_t *luts /* [tables][256] */,
                            const int8_t *table /* [channels] */,
                            const int8_t *x, int8_t *y);

typedef enum tidsp_unary_op {
#define TIDSP_UNARY(NAME, fn, IR, op_type, alpha_attr, alpha, beta_attr, beta) TIDSP_UNARY_##NAME,
#define TIDSP_UNARY_KERNEL(NAME, fn) TIDSP_UNARY_##NAME,
#include "cstatic/unary_ops.def"
  TIDSP_UNARY_COUNT_ /* not an op: the number of op codes */
} tidsp_unary_op;

typedef struct tidsp_unary_f32_params {
  int32_t n;
  int32_t op; /* tidsp_unary_op */
  float alpha, beta, lo, hi;
} tidsp_unary_f32_params;

int32_t tidsp_unary_f32(const tidsp_unary_f32_params *p, const float *x,
                        float *y);

/* ------------------------------------------------------------------------
 * Pooling, NCHW. h_out/w_out given (ceil mode resolved at compile time).
 * Max: padding acts as −inf; any window that covers no input element
 * cannot occur (the compiler checks).
 * Average: count = kernel taps inside the padded input when
 * count_include_pad, else taps inside the real input.
 * ---------------------------------------------------------------------- */
typedef struct tidsp_pool2d_params {
  int32_t n, c, h_in, w_in, h_out, w_out;
  int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t count_include_pad;
} tidsp_pool2d_params;

int32_t tidsp_maxpool_i8(const tidsp_pool2d_params *p, const int8_t *x,
                         int8_t *y);
int32_t tidsp_maxpool_f32(const tidsp_pool2d_params *p, const float *x,
                          float *y);
int32_t tidsp_avgpool_f32(const tidsp_pool2d_params *p, const float *x,
                          float *y);

/* ConvTranspose in float over any number of spatial dims (3-D; 1-D and
 * 2-D run on tidsp_conv_transpose2d_f32): x [n][c_in][in…], w [c_in]
 * [c_out/groups][k…], y [n][c_out][out…]. Each output starts at its bias
 * (0 without one); every input element then adds x·w to the outputs it
 * reaches (o = i·stride − pad_begin + t·dil per dim), input channels outer,
 * then input positions and output channels, then taps, row-major: the
 * loop order of tidsp_conv_transpose2d_f32's reference (the host rows sum
 * in ONNX Runtime's order, as the 2-D one). */
typedef struct tidsp_conv_transpose_nd_params {
  int32_t n, c_in, c_out, groups;
  int32_t dims; /* spatial dims */
  int32_t in[TIDSP_MAX_RANK], out[TIDSP_MAX_RANK], k[TIDSP_MAX_RANK];
  int32_t stride[TIDSP_MAX_RANK], dil[TIDSP_MAX_RANK], pad_begin[TIDSP_MAX_RANK];
} tidsp_conv_transpose_nd_params;

int32_t tidsp_conv_transpose_nd_f32(const tidsp_conv_transpose_nd_params *p, const float *x, const float *w,
                                    const float *bias, float *y);

/* Pooling over any number of spatial dims (1..TIDSP_MAX_RANK − 2; the
 * 3-D pools, MaxPool on uint8, MaxPool's Indices output), x viewed as
 * [planes][in[0]]…[in[dims−1]]; window taps at o·stride − pad_begin +
 * k·dil, only those inside the input read.
 *   MAX:    dtype F32, I8 or U8; y the largest tap, the first in row-major
 *           order on a tie, compared strictly from the dtype's lowest
 *           value (ONNX Runtime's Pool loops); y of x's dtype.
 *   ARGMAX: the same window's index as MaxPool's Indices output (int64 y):
 *           plane·Π in + the tap's flat spatial index, row-major, or with
 *           storage_order 1 column-major (the first spatial dim fastest);
 *           −1 where no tap beats the lowest value (ORT's).
 *   AVG:    dtype F32; the taps inside the input summed in row-major order
 *           from 0, divided by the count of taps inside the padded input
 *           (count_include_pad) or inside the input.
 * Every window must hold an input tap (TIDSP_ERR_SHAPE otherwise). */
typedef enum tidsp_pool_op { TIDSP_POOL_MAX = 0, TIDSP_POOL_ARGMAX = 1, TIDSP_POOL_AVG = 2 } tidsp_pool_op;

typedef struct tidsp_pool_nd_params {
  int32_t planes; /* N·C */
  int32_t dims;   /* spatial dims */
  int32_t in[TIDSP_MAX_RANK], out[TIDSP_MAX_RANK], k[TIDSP_MAX_RANK];
  int32_t stride[TIDSP_MAX_RANK], dil[TIDSP_MAX_RANK];
  int32_t pad_begin[TIDSP_MAX_RANK], pad_end[TIDSP_MAX_RANK];
  int32_t op;    /* tidsp_pool_op */
  int32_t dtype; /* tidsp_dtype of x */
  int32_t count_include_pad, storage_order;
} tidsp_pool_nd_params;

int32_t tidsp_pool_nd(const tidsp_pool_nd_params *p, const void *x, void *y);

/* QLinearAveragePool (ONNX Runtime's non-global path):
 *   FLOAT: xf = fl(x_scale·(x − x_zp)); sum in (h, w) order in float;
 *          avg = fl(sum / count); y = clamp(rne(fl(fl(avg / y_scale) + y_zp)))
 *          (y_zp is the uint8 zero point here)
 *   count: unlike avgpool_f32, k_h·k_w when count_include_pad (ORT divides
 *          by the kernel size even where a ceil-mode window hangs past the
 *          padding), else the taps inside the real input. ORT runs a
 *          whole-image window without pads through the global path instead:
 *          use tidsp_global_avgpool_i8 for it.
 *   Q31:   the FLOAT formula in integer arithmetic (every float32 step
 *          rounded as the FPU would, from the bits of x_scale and y_scale):
 *          bit-identical to FLOAT; rq is not read (NULL)
 */
typedef struct tidsp_avgpool_i8_params {
  tidsp_pool2d_params pool;
  int32_t kind;
  float x_scale, y_scale;
  int32_t x_zp, y_zp, y_min, y_max;
  int32_t domain_offset; /* 128 or 0: see "The uint8 domain" above */
} tidsp_avgpool_i8_params;

int32_t tidsp_avgpool_i8(const tidsp_avgpool_i8_params *p, const void *rq,
                         const int8_t *x, int8_t *y);

/* DequantizeLinear → Mul(per channel) → Add(per channel) → QuantizeLinear
 * on int8 x viewed as [outer][channels][inner], in one pass, with the
 * float ops of the unfused kernels (tidsp_dequantize, tidsp_binary_f32,
 * tidsp_quantize) on each value, in their order:
 *   t = fl(fl(fl((float)(x − x_zp) · x_scale) · s[c]) + b[c])
 *   then act as tidsp_unary_f32's: RELU t = 0 > t ? 0 : t; CLIP
 *   t = t > lo ? t : lo, t = t < hi ? t : hi (lo ≤ hi); NONE nothing
 *   y = rne(fl(t / y_scale)) + y_zp, saturated to int8 (NaN → −128).
 * A BatchNormalization between DQ and Q (DenseNet's pre-activation BN on
 * a concatenation; a ReLU folded into Q's range) becomes this. x_zp, y_zp
 * int8; scales positive. */
enum { TIDSP_CHANNEL_AFFINE_NONE = 0, TIDSP_CHANNEL_AFFINE_RELU = 1, TIDSP_CHANNEL_AFFINE_CLIP = 2 };
typedef struct tidsp_channel_affine_i8_params {
  int32_t outer, channels, inner;
  float x_scale, y_scale;
  int32_t x_zp, y_zp;
  int32_t act; /* TIDSP_CHANNEL_AFFINE_* */
  float lo, hi; /* CLIP's bounds */
} tidsp_channel_affine_i8_params;

int32_t tidsp_channel_affine_i8(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s,
                                const float *b, int8_t *y);
/* The same value less p->y_zp, as int16: the widened input of a following
 * MMALIB exact layer whose x_zp is y_zp
 * (compiler/passes/fuse_widen_into_producer.c). In place: y may start
 * where x does (it runs from the end). */
int32_t tidsp_channel_affine_i16(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s,
                                 const float *b, int16_t *y);

/* QLinearGlobalAveragePool over [n·c][hw]:
 *   acc = Σ x − x_zp·hw (int32); then tidsp_requant_one with one multiplier
 *   (FLOAT: mult = fl(x_scale / fl(y_scale·hw))). rq as for requant. */
typedef struct tidsp_gap_i8_params {
  int32_t nc, hw;
  int32_t x_zp;
  tidsp_requant_params rq; /* per_channel = 0 */
} tidsp_gap_i8_params;

int32_t tidsp_global_avgpool_i8(const tidsp_gap_i8_params *p, const void *rq,
                                const int8_t *x, int8_t *y);

typedef struct tidsp_gap_f32_params {
  int32_t nc, hw;
  /* The TIDSP_MLAS_BLOCK* bits of the blocks at which each plane is
   * summed in order from 0 (ONNX Runtime's NCHWc pooling, which it uses
   * when the input is an NCHWc tensor with whole blocks of channels); at
   * the others MLAS's four-lane global pooling kernel. The compiler
   * decides (passes/mark_nchwc_global_pool.c). */
  int32_t nchwc;
} tidsp_gap_f32_params;

int32_t tidsp_global_avgpool_f32(const tidsp_gap_f32_params *p,
                                 const float *x, float *y);

/* ------------------------------------------------------------------------
 * Reductions and softmax (float).
 * ReduceMean over the dims whose bit is set in reduce_mask; the output is
 * the input shape with those dims set to 1 (keepdims or not is only a
 * reshape). Sum in row-major order of the reduced elements, then / count.
 * Softmax over one axis of [outer][axis_len][inner]: exp(x − max) / Σ.
 * ---------------------------------------------------------------------- */
typedef struct tidsp_reduce_params {
  int32_t rank;
  int32_t in_shape[TIDSP_MAX_RANK];
  int32_t reduce_mask;
  /* 1: the order ONNX Runtime uses after its NHWC layout transform (which
   * it applies downstream of int8 convolutions): the reduced dims are then
   * outer, and each output is a sequential sum in row-major order of its
   * reduced elements. 0: ORT's order on the tensor as it is (e.g. Eigen's
   * vectorized sum of a contiguous block). */
  int32_t channels_last_order;
} tidsp_reduce_params;

int32_t tidsp_reduce_mean_f32(const tidsp_reduce_params *p, const float *x,
                              float *y);

/* ReduceMean of DequantizeLinear(x), x int8 with one scale and zero point,
 * given as dq[q + 128] = the float tidsp_dequantize writes for code q (a
 * 256-entry table the compiler computes with that kernel): those floats
 * summed and divided as tidsp_reduce_mean_f32 does for a 64-byte-aligned
 * tensor of them, without writing that tensor. Only where each output's
 * reduced elements are one contiguous block — the reduced dims last once
 * the dims of size 1 are dropped (a mean over H·W of NCHW) — or one
 * element, of a tensor of rank ≥ 1; else TIDSP_ERR_PARAM. */
int32_t tidsp_reduce_mean_dq_i8(const tidsp_reduce_params *p, const float *dq,
                                const int8_t *x, float *y);

/* ReduceL2 over the dims in reduce_mask (channels_last_order unused):
 * sqrt(Σ x²) in ONNX Runtime's order (reduce_l2_f32.c): one sequential
 * sum from 0 per output in row-major order of its reduced elements, or
 * Eigen's vectorized sum of squares when every element goes to one
 * output. No reduced element (an empty tensor) gives 0. */
int32_t tidsp_reduce_l2_f32(const tidsp_reduce_params *p, const float *x,
                            float *y);

typedef struct tidsp_softmax_params {
  int32_t outer, axis_len, inner;
} tidsp_softmax_params;

int32_t tidsp_softmax_f32(const tidsp_softmax_params *p, const float *x,
                          float *y);

/* int8 Softmax over the middle axis of [outer][axis_len][inner], as ONNX
 * Runtime's QLinearSoftmax: table[j] = exp((j − 255 + shift)·x_scale)
 * (built at compile time; shift keeps the row sums finite), per row
 *   e_k = table[x_k − max + 255],  s = Σ e_k (float, in order),
 *   y_k = sat(nearbyintf(fl(e_k · y_recip) / s) + y_zp)
 * with y_recip = floor(1 / y_scale) as ORT takes it. */
typedef struct tidsp_softmax_i8_params {
  int32_t outer, axis_len, inner;
  float y_recip;
  int32_t y_zp;
} tidsp_softmax_i8_params;

int32_t tidsp_softmax_i8(const tidsp_softmax_i8_params *p,
                         const float *table /* [256] */, const int8_t *x,
                         int8_t *y);

/* LayerNormalization over the last `norm` elements of each of `outer`
 * rows: y = (x − mean) / sqrt(var + epsilon) · scale + bias, population
 * variance; scale and bias have `norm` entries (bias may be NULL).
 * variant (float only; 0 in tidsp_layer_norm_i8_params) picks which of
 * ONNX Runtime's kernels' rounding to follow:
 *   TIDSP_LN_PLAIN       LayerNormalization;
 *   TIDSP_LN_SIMPLIFIED  SimplifiedLayerNormalization (RMS norm),
 *                        y = x / sqrt(mean(x²) + epsilon) · scale, no mean
 *                        and no bias;
 *   TIDSP_LN_WELFORD     SkipLayerNormalization's statistics (on x = the
 *                        residual sum, computed before): Welford's running
 *                        mean at every row length. */
#define TIDSP_LN_PLAIN 0
#define TIDSP_LN_SIMPLIFIED 1
#define TIDSP_LN_WELFORD 2
typedef struct tidsp_layer_norm_params {
  int32_t outer, norm;
  float epsilon;
  int32_t variant;
} tidsp_layer_norm_params;

int32_t tidsp_layer_norm_f32(const tidsp_layer_norm_params *p, const float *x,
                             const float *scale, const float *bias /* or NULL */,
                             float *y);

/* DequantizeLinear → LayerNormalization → QuantizeLinear (int8, per
 * tensor) in one call, the same bytes as the three float-path kernels. */
typedef struct tidsp_layer_norm_i8_params {
  tidsp_layer_norm_params ln;
  int32_t x_zp;
  float x_scale;
  int32_t y_zp;
  float y_scale;
} tidsp_layer_norm_i8_params;

int32_t tidsp_layer_norm_i8(const tidsp_layer_norm_i8_params *p, const int8_t *x,
                            const float *scale, const float *bias /* or NULL */,
                            int8_t *y);

/* ------------------------------------------------------------------------
 * Data movement: dtype-agnostic, elem_size bytes per element.
 * ---------------------------------------------------------------------- */
typedef struct tidsp_transpose_params {
  int32_t rank;
  int32_t in_shape[TIDSP_MAX_RANK];
  int32_t perm[TIDSP_MAX_RANK]; /* out dim i = in dim perm[i] */
  int32_t elem_size;
} tidsp_transpose_params;

int32_t tidsp_transpose(const tidsp_transpose_params *p, const void *x,
                        void *y);

/* y[i…] = x[start + i·step …] per dim; steps may be negative. */
typedef struct tidsp_slice_params {
  int32_t rank;
  int32_t in_shape[TIDSP_MAX_RANK];
  int32_t out_shape[TIDSP_MAX_RANK];
  int32_t start[TIDSP_MAX_RANK];
  int32_t step[TIDSP_MAX_RANK];
  int32_t elem_size;
} tidsp_slice_params;

int32_t tidsp_slice(const tidsp_slice_params *p, const void *x, void *y);

/* Cast between float32, the integer types and bool (tidsp_dtype codes):
 * integer → float rounds to nearest even; float → integer truncates toward
 * zero and saturates at the type's range (NaN → 0); integer → narrower
 * integer wraps (two's complement); anything → bool is != 0; bool → 0/1. */
typedef struct tidsp_cast_params {
  int32_t n;
  int32_t from, to;
} tidsp_cast_params;

int32_t tidsp_cast(const tidsp_cast_params *p, const void *x, void *y);

/* Expand: x broadcast to the output shape (numpy rules), any dtype of
 * elem_size bytes; in_stride is x's element stride per output dim (0 where
 * x is broadcast). */
typedef struct tidsp_expand_params {
  int32_t rank;
  int32_t shape[TIDSP_MAX_RANK];
  int32_t in_stride[TIDSP_MAX_RANK];
  int32_t elem_size;
} tidsp_expand_params;

int32_t tidsp_expand(const tidsp_expand_params *p, const void *x, void *y);

/* Where: out = cond ? x : y elementwise with numpy broadcasting (bc's a is
 * x, b is y; c_stride the condition's strides per output dim), any dtype of
 * elem_size bytes; cond is bool, one byte per element (0 false). */
typedef struct tidsp_where_params {
  tidsp_broadcast bc;
  int32_t c_stride[TIDSP_MAX_RANK];
  int32_t elem_size;
} tidsp_where_params;

int32_t tidsp_where(const tidsp_where_params *p, const void *cond,
                    const void *x, const void *y, void *out);

/* Gather along one axis with indices known only at run time (an
 * embedding lookup): data viewed as [outer][axis_dim][inner_bytes],
 * y[o][i] = data[o][indices[i]] for the `count` indices (int32 or int64 per
 * index_bytes 4 or 8; a negative index counts from the end).
 * TIDSP_ERR_PARAM for an index outside [−axis_dim, axis_dim): nothing is
 * read out of bounds. */
typedef struct tidsp_gather_params {
  int32_t outer, axis_dim, inner_bytes, count;
  int32_t index_bytes;
} tidsp_gather_params;

int32_t tidsp_gather(const tidsp_gather_params *p, const void *data,
                     const void *indices, void *y);

/* ScatterND: y = data, then for each of the `count` index tuples of k
 * int64 entries (a negative entry counts from the end of its axis; dims
 * are data's first k dims), the `slice` elements at data[i0, …, ik−1, :]
 * replaced by the tuple's slice of updates — or, with a reduction,
 * combined with it: y = y op u in index order (ADD, MUL, MAX, MIN). The
 * reductions need dtype F32 (+ and × rounded to float; MAX/MIN as fmaxf/
 * fminf) or an integer dtype (int64 arithmetic wrapped to the dtype);
 * NONE copies elem_size bytes of any dtype. Every index is checked before
 * anything is written: TIDSP_ERR_PARAM for one outside [−dim, dim).
 * In place allowed (y == data). */
typedef enum tidsp_scatter_reduction {
  TIDSP_SCATTER_NONE = 0,
  TIDSP_SCATTER_ADD = 1,
  TIDSP_SCATTER_MUL = 2,
  TIDSP_SCATTER_MAX = 3,
  TIDSP_SCATTER_MIN = 4
} tidsp_scatter_reduction;

typedef struct tidsp_scatter_nd_params {
  int32_t k;                    /* entries per index tuple, 1..rank */
  int32_t dims[TIDSP_MAX_RANK]; /* data's first k dims */
  int32_t count;                /* index tuples */
  int32_t slice;                /* elements per tuple */
  int32_t total;                /* elements of data */
  int32_t elem_size;
  int32_t dtype;     /* tidsp_dtype (0 for a dtype without one: NONE only) */
  int32_t reduction; /* tidsp_scatter_reduction */
} tidsp_scatter_nd_params;

int32_t tidsp_scatter_nd(const tidsp_scatter_nd_params *p, const void *data,
                         const int64_t *indices, const void *updates, void *y);

/* GatherND (ONNX, any dtype): data viewed as [batches][dims[0]]…[dims[k−1]]
 * [slice_bytes], indices as [batches][count][k] int64 (the first
 * batch_dims dims of both merged into batches). y[b][t] = the slice of
 * batch b at the tuple indices[b][t]; a negative entry counts from the end
 * of its axis. Every index is checked before anything is written:
 * TIDSP_ERR_PARAM for one outside [−dim, dim). */
typedef struct tidsp_gather_nd_params {
  int32_t k;                    /* entries per index tuple */
  int32_t dims[TIDSP_MAX_RANK]; /* the k indexed dims of data */
  int32_t batches;              /* product of the batch_dims dims */
  int32_t count;                /* index tuples per batch */
  int32_t slice_bytes;          /* bytes of one gathered slice */
} tidsp_gather_nd_params;

int32_t tidsp_gather_nd(const tidsp_gather_nd_params *p, const void *data,
                        const int64_t *indices, void *y);

/* Concatenate n_inputs tensors viewed as [outer][axis_len[i]·inner_bytes]. */
typedef struct tidsp_concat_params {
  int32_t n_inputs;
  int32_t outer;
  int32_t inner_bytes;       /* bytes of one step along the axis */
  const int32_t *axis_len;   /* [n_inputs], a static array in generated code */
} tidsp_concat_params;

int32_t tidsp_concat(const tidsp_concat_params *p, const void *const *xs,
                     void *y);

typedef enum tidsp_pad_mode {
  TIDSP_PAD_CONSTANT = 0,
  TIDSP_PAD_EDGE = 1,
  TIDSP_PAD_REFLECT = 2
} tidsp_pad_mode;

/* out dim d = pad_begin[d] + in_shape[d] + pad_end[d]; constant mode fills
 * with the first elem_size bytes of value (little-endian element). */
typedef struct tidsp_pad_params {
  int32_t rank;
  int32_t in_shape[TIDSP_MAX_RANK];
  int32_t pad_begin[TIDSP_MAX_RANK];
  int32_t pad_end[TIDSP_MAX_RANK];
  int32_t elem_size;
  int32_t mode; /* tidsp_pad_mode */
  uint8_t value[8];
} tidsp_pad_params;

int32_t tidsp_pad(const tidsp_pad_params *p, const void *x, void *y);

/* Plain copy (Reshape/Flatten/Squeeze/Unsqueeze/Identity when the planner
 * could not alias input and output). */
int32_t tidsp_copy(size_t nbytes, const void *x, void *y);

/* ------------------------------------------------------------------------
 * The kernel table (cstatic/kernels.def) as declarations. Each params
 * struct gets the alias tidsp_kparams_<member>; each kernel of this header
 * is declared again from its row, so a row whose dtypes disagree with the
 * prototype above does not compile; the <fn>__ref entry points of the
 * dispatched kernels are declared only here. The TIDSP_K* helpers are
 * shared with cstatic/mmalib.h.
 * ---------------------------------------------------------------------- */
/* The C type behind a dtype token of the table. */
#define TIDSP_KCT_F32 float
#define TIDSP_KCT_I8 int8_t
#define TIDSP_KCT_U8 uint8_t
#define TIDSP_KCT_I16 int16_t
#define TIDSP_KCT_I32 int32_t
#define TIDSP_KCT_I64 int64_t
#define TIDSP_KCT_BOOL void
#define TIDSP_KCT_ANY void
#define TIDSP_KCT_SAME void
#define TIDSP_KCT_INT void
#define TIDSP_KCT_RESADD c7x_residual_add_params
/* n pointer inputs, `in` a parenthesized list of tokens */
#define TIDSP_KIN(n, in) TIDSP_KIN_##n in
#define TIDSP_KIN_1(a) const TIDSP_KCT_##a *
#define TIDSP_KIN_2(a, b) TIDSP_KIN_1(a), TIDSP_KIN_1(b)
#define TIDSP_KIN_3(a, b, c) TIDSP_KIN_2(a, b), TIDSP_KIN_1(c)
#define TIDSP_KIN_4(a, b, c, d) TIDSP_KIN_3(a, b, c), TIDSP_KIN_1(d)
#define TIDSP_KIN_5(a, b, c, d, e) TIDSP_KIN_4(a, b, c, d), TIDSP_KIN_1(e)
#define TIDSP_KIN_6(a, b, c, d, e, f) TIDSP_KIN_5(a, b, c, d, e), TIDSP_KIN_1(f)
/* n int32 arguments */
#define TIDSP_KI32_1 int32_t
#define TIDSP_KI32_2 TIDSP_KI32_1, int32_t
#define TIDSP_KI32_3 TIDSP_KI32_2, int32_t
#define TIDSP_KI32_4 TIDSP_KI32_3, int32_t
#define TIDSP_KI32_5 TIDSP_KI32_4, int32_t
#define TIDSP_KI32_6 TIDSP_KI32_5, int32_t
#define TIDSP_KI32_7 TIDSP_KI32_6, int32_t
#define TIDSP_KI32_8 TIDSP_KI32_7, int32_t
#define TIDSP_KI32_9 TIDSP_KI32_8, int32_t
#define TIDSP_KI32_10 TIDSP_KI32_9, int32_t
#define TIDSP_KI32_11 TIDSP_KI32_10, int32_t
#define TIDSP_KI32_12 TIDSP_KI32_11, int32_t
#define TIDSP_KI32_13 TIDSP_KI32_12, int32_t
/* A kernel's prototype by its call form, and its __ref's by its ref kind. */
#define TIDSP_KDECL_PARAMS(fn, params, n, in, out) \
  int32_t fn(const tidsp_kparams_##params *, TIDSP_KIN(n, in), TIDSP_KCT_##out *);
#define TIDSP_KDECL_BYTES(fn, params, n, in, out) \
  int32_t fn(tidsp_kparams_##params, TIDSP_KIN(n, in), TIDSP_KCT_##out *);
#define TIDSP_KDECL_ARRAY(fn, params, n, in, out) \
  int32_t fn(const tidsp_kparams_##params *, const void *const *, TIDSP_KCT_##out *);
#define TIDSP_KDECL_EXTERN(fn, n, in, out, n_args) \
  int32_t fn(TIDSP_KIN(n, in), TIDSP_KCT_##out *, TIDSP_KI32_##n_args);
#define TIDSP_KDECL_REF_NONE(decl, fn, ...)
#define TIDSP_KDECL_REF_PUBLIC(decl, fn, ...) decl(fn##__ref, __VA_ARGS__)
#define TIDSP_KDECL_REF_INTERNAL(decl, fn, ...) decl(fn##__ref, __VA_ARGS__)
/* This header declares the externs of group RUNTIME (cstatic/mmalib.h the
 * others). */
#define TIDSP_KDECL_IN_KERNELS_H_RUNTIME(decl, ...) decl(__VA_ARGS__)
#define TIDSP_KDECL_IN_KERNELS_H_C7X(decl, ...)
#define TIDSP_KDECL_IN_KERNELS_H_MMALIB(decl, ...)
#define TIDSP_KDECL_IN_KERNELS_H_TIDL(decl, ...)

#define TIDSP_KPARAMS(member, type) typedef type tidsp_kparams_##member;
#define TIDSP_KSTRUCT(name, type) typedef type tidsp_kparams_##name;
#include "cstatic/kernels.def"
#define TIDSP_KERNEL(NAME, ir, fn, ref, form, params, n_in, in, opt, out) \
  TIDSP_KDECL_##form(fn, params, n_in, in, out)                          \
  TIDSP_KDECL_REF_##ref(TIDSP_KDECL_##form, fn, params, n_in, in, out)
#define TIDSP_KERNEL_EXTERN(NAME, ir, fn, ref, group, n_in, in, opt, out, n_args, args) \
  TIDSP_KDECL_IN_KERNELS_H_##group(TIDSP_KDECL_EXTERN, fn, n_in, in, out, n_args)        \
  TIDSP_KDECL_IN_KERNELS_H_##group(TIDSP_KDECL_REF_##ref, TIDSP_KDECL_EXTERN, fn, n_in, in, out, n_args)
#include "cstatic/kernels.def"

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_KERNELS_H */
