/*
 * eltwise_f32_bench.c — the float elementwise and data-movement kernels of
 * the float PP-OCR / MTCNN networks, the dispatched kernel (this CPU's
 * host row: runtime/kernels/host/eltwise_f32__host.c, movement__host.c,
 * conv_transpose2d_f32__host_mlas.c) against its __ref, on their shapes:
 * rec's same-shape Add, scalar Mul and SE Mul, HardSwish / Clip / Sigmoid /
 * Tanh, O-Net's per-channel PRelu, det's nearest-Resize Expand and its two
 * ConvTransposes. Prints both medians (thread CPU time), the speedup, and
 * whether the output bytes are equal (they must be: the host kernels are
 * bit-exact with the reference; ConvTranspose's reference sums in another
 * order, so there the checksum of the fast output is printed instead).
 *
 * Not built by CMake:
 *   cc -O2 -Iinclude bench/eltwise_f32_bench.c build/lib/libtidsp.a -lm -o /tmp/ewb
 *   taskset -c 0 /tmp/ewb [repeats]
 */
#include "f32_bench.h"

typedef int32_t (*call_fn)(const void *p, const float *a, const float *b, float *y, int ref);

static void report(const char *name, double t_ref, double t_fast, const float *yr, const float *yf, size_t n,
                   int compare) {
  if (compare)
    printf("%-30s ref %8.3f ms  fast %8.3f ms  %6.1fx  bytes %s\n", name, 1e3 * t_ref, 1e3 * t_fast,
           t_ref / t_fast, memcmp(yr, yf, n * sizeof(float)) == 0 ? "equal" : "DIFFER");
  else
    printf("%-30s ref %8.3f ms  fast %8.3f ms  %6.1fx  bytes %08x\n", name, 1e3 * t_ref, 1e3 * t_fast,
           t_ref / t_fast, fnv_floats(yf, n, 2166136261u));
}

/* The four kernel families behind one call shape. */
enum { K_BINARY, K_UNARY, K_PRELU, K_EXPAND, K_CONVT };

static int32_t call(int kind, const void *p, const float *a, const float *b, float *y, int ref) {
  switch (kind) {
  case K_BINARY:
    return ref ? tidsp_binary_f32__ref(p, a, b, y) : tidsp_binary_f32(p, a, b, y);
  case K_UNARY:
    return ref ? tidsp_unary_f32__ref(p, a, y) : tidsp_unary_f32(p, a, y);
  case K_PRELU:
    return ref ? tidsp_prelu_f32__ref(p, a, b, y) : tidsp_prelu_f32(p, a, b, y);
  case K_EXPAND:
    return ref ? tidsp_expand__ref(p, a, y) : tidsp_expand(p, a, y);
  default: /* b: weights then bias, packed by the caller */
    return ref ? tidsp_conv_transpose2d_f32__ref(p, a, b, NULL, y) : tidsp_conv_transpose2d_f32(p, a, b, NULL, y);
  }
}

/* Times kind on p with inputs of na and nb floats and ny outputs. */
static void run(const char *name, int kind, const void *p, size_t na, size_t nb, size_t ny, int repeats) {
  float *a = malloc(na * sizeof(float)), *b = malloc((nb ? nb : 1) * sizeof(float));
  float *yr = malloc(ny * sizeof(float)), *yf = malloc(ny * sizeof(float));
  double *tr = malloc((size_t)repeats * sizeof(double)), *tf = malloc((size_t)repeats * sizeof(double));
  uint32_t seed = 12345u;
  int r;
  fill_uniform(a, na, &seed);
  fill_uniform(b, nb ? nb : 1, &seed);
  for (r = 0; r < repeats; r++) { /* interleaved, so that load falls on both */
    double t0 = now_s();
    bench_ok(call(kind, p, a, b, yr, 1), name);
    tr[r] = now_s() - t0;
    t0 = now_s();
    bench_ok(call(kind, p, a, b, yf, 0), name);
    tf[r] = now_s() - t0;
  }
  report(name, median_s(tr, repeats), median_s(tf, repeats), yr, yf, ny, kind != K_CONVT);
  free(a), free(b), free(yr), free(yf), free(tr), free(tf);
}

/* A binary call on [1, c, h, w] with a's and b's shapes given by flags:
 * full (1), one value per channel (2), or one value (0). */
static void run_binary(const char *name, int32_t op, int32_t c, int32_t h, int32_t w, int a_kind, int b_kind,
                       int repeats) {
  tidsp_binary_f32_params p;
  const int32_t hw = h * w;
  size_t na = a_kind == 1 ? (size_t)c * (size_t)hw : a_kind == 2 ? (size_t)c : 1;
  size_t nb = b_kind == 1 ? (size_t)c * (size_t)hw : b_kind == 2 ? (size_t)c : 1;
  memset(&p, 0, sizeof p);
  p.op = op;
  p.bc.rank = 4;
  p.bc.shape[0] = 1, p.bc.shape[1] = c, p.bc.shape[2] = h, p.bc.shape[3] = w;
  p.bc.a_stride[1] = a_kind == 1 ? hw : a_kind == 2 ? 1 : 0;
  p.bc.a_stride[2] = a_kind == 1 ? w : 0;
  p.bc.a_stride[3] = a_kind == 1 ? 1 : 0;
  p.bc.b_stride[1] = b_kind == 1 ? hw : b_kind == 2 ? 1 : 0;
  p.bc.b_stride[2] = b_kind == 1 ? w : 0;
  p.bc.b_stride[3] = b_kind == 1 ? 1 : 0;
  run(name, K_BINARY, &p, na, nb, (size_t)c * (size_t)hw, repeats);
}

static void run_unary(const char *name, int32_t op, int32_t n, int repeats) {
  tidsp_unary_f32_params p;
  memset(&p, 0, sizeof p);
  p.n = n, p.op = op, p.alpha = 0.2f, p.beta = 0.5f, p.lo = 0.0f, p.hi = 6.0f;
  run(name, K_UNARY, &p, (size_t)n, 0, (size_t)n, repeats);
}

int main(int argc, char **argv) {
  const int repeats = argc > 1 ? atoi(argv[1]) : 15;
  if (repeats < 1)
    return 2;
  run_binary("rec Add same shape", TIDSP_BINARY_ADD, 128, 12, 160, 1, 1, repeats);
  run_binary("rec Mul by a scalar", TIDSP_BINARY_MUL, 128, 12, 160, 0, 1, repeats);
  run_binary("rec Div by a scalar", TIDSP_BINARY_DIV, 128, 12, 160, 1, 0, repeats);
  run_binary("rec SE Mul [C,1,1]x[C,H,W]", TIDSP_BINARY_MUL, 240, 12, 80, 2, 1, repeats);
  run_unary("HardSwish 245760", TIDSP_UNARY_HARDSWISH, 245760, repeats);
  run_unary("Clip 245760", TIDSP_UNARY_CLIP, 245760, repeats);
  run_unary("Sigmoid 245760", TIDSP_UNARY_SIGMOID, 245760, repeats);
  run_unary("Tanh 245760", TIDSP_UNARY_TANH, 245760, repeats);
  {
    tidsp_broadcast bc; /* O-Net's first PRelu: [1,32,46,46], slope [32,1,1] */
    memset(&bc, 0, sizeof bc);
    bc.rank = 4;
    bc.shape[0] = 1, bc.shape[1] = 32, bc.shape[2] = 46, bc.shape[3] = 46;
    bc.a_stride[1] = 46 * 46, bc.a_stride[2] = 46, bc.a_stride[3] = 1;
    bc.b_stride[1] = 1;
    run("O-Net PRelu 32x46x46", K_PRELU, &bc, 32 * 46 * 46, 32, 32 * 46 * 46, repeats);
  }
  {
    /* det's nearest Resize x2 as Expand: [1,96,16,2,40,2] from [1,96,16,40] */
    tidsp_expand_params e = {.rank = 6, .shape = {1, 96, 16, 2, 40, 2}, .in_stride = {61440, 640, 40, 0, 1, 0},
                             .elem_size = 4};
    run("det Resize x2 (Expand)", K_EXPAND, &e, 96 * 16 * 40, 0, 96 * 16 * 2 * 40 * 2, repeats);
  }
  {
    tidsp_conv2d_params p; /* det's ConvTransposes 2x2 s2: weights [c_in, c_out, 2, 2] */
    memset(&p, 0, sizeof p);
    p.n = 1, p.c_in = 24, p.h_in = 32, p.w_in = 80, p.c_out = 24, p.h_out = 64, p.w_out = 160;
    p.k_h = p.k_w = 2, p.stride_h = p.stride_w = 2, p.dil_h = p.dil_w = 1, p.groups = 1;
    run("det ConvTranspose 24->24", K_CONVT, &p, 24 * 32 * 80, 24 * 24 * 4, 24 * 64 * 160, repeats);
    p.h_in = 64, p.w_in = 160, p.c_out = 1, p.h_out = 128, p.w_out = 320;
    run("det ConvTranspose 24->1", K_CONVT, &p, 24 * 64 * 160, 24 * 4, 128 * 320, repeats);
  }
  return 0;
}
