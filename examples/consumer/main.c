/*
 * classify — a C program that uses a model compiled by cstatic: it runs
 * the model (one float32 input, one float32 output) on every image of a
 * raw float32 file and writes the outputs as raw float32.
 *
 *   classify IN.f32 OUT.f32 [weights.bin]
 *
 * With the weights compiled in (cstatic compile --weights=c, the default
 * of cstatic_add_model) no weights file is needed; otherwise pass
 * weights.bin. The arena is a static array: the model allocates nothing.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib0.h"

#if MODEL_NUM_INPUTS != 1 || MODEL_NUM_OUTPUTS != 1 || MODEL_INPUT0_DTYPE != TIDSP_DTYPE_F32 || \
    MODEL_OUTPUT0_DTYPE != TIDSP_DTYPE_F32
#error "classify takes a model with one float32 input and one float32 output"
#endif

static _Alignas(MODEL_ARENA_ALIGN) uint8_t arena[MODEL_ARENA_SIZE > 0 ? MODEL_ARENA_SIZE : 1];

/* The whole file in a buffer aligned to `align` (free with free()). */
static void *read_file(const char *path, size_t align, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  void *buf = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      posix_memalign(&buf, align < sizeof(void *) ? sizeof(void *) : align, (size_t)n + 1) == 0 &&
      fread(buf, 1, (size_t)n, f) == (size_t)n) {
    *size = (size_t)n;
  } else {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s IN.f32 OUT.f32 [weights.bin]\n", argv[0]);
    return 2;
  }
  const void *weights = NULL; /* NULL: the compiled-in copy (weights.c) */
  size_t weights_size = 0;
  if (argc == 4) {
    weights = read_file(argv[3], MODEL_WEIGHTS_ALIGN, &weights_size);
    if (!weights) {
      fprintf(stderr, "classify: cannot read %s\n", argv[3]);
      return 1;
    }
  } else if (!MODEL_WEIGHTS_EMBEDDED) {
    fprintf(stderr, "classify: this model was compiled with --weights=bin: pass weights.bin\n");
    return 2;
  }
  int32_t st = model_check_weights(weights, weights_size);
  if (st != TIDSP_OK) {
    fprintf(stderr, "classify: the weights do not belong to model %s: %s\n", MODEL_NAME, tidsp_status_str(st));
    return 1;
  }

  size_t in_size = 0;
  float *x = read_file(argv[1], 64, &in_size);
  const size_t in_bytes = MODEL_INPUT0_NUMEL * sizeof(float), out_bytes = MODEL_OUTPUT0_NUMEL * sizeof(float);
  if (!x || in_size == 0 || in_size % in_bytes != 0) {
    fprintf(stderr, "classify: %s must hold a multiple of %zu float32 values\n", argv[1],
            (size_t)MODEL_INPUT0_NUMEL);
    return 1;
  }
  size_t n = in_size / in_bytes;
  float *y = malloc(n * out_bytes);
  FILE *out = fopen(argv[2], "wb");
  if (!y || !out) {
    fprintf(stderr, "classify: cannot write %s\n", argv[2]);
    return 1;
  }
  for (size_t i = 0; i < n; i++) {
    const void *in[1] = {x + i * MODEL_INPUT0_NUMEL};
    void *outs[1] = {y + i * MODEL_OUTPUT0_NUMEL};
    st = model_run(weights, arena, in, outs);
    if (st != TIDSP_OK) {
      fprintf(stderr, "classify: image %zu: %s\n", i, tidsp_status_str(st));
      return 1;
    }
  }
  int ok = fwrite(y, out_bytes, n, out) == n;
  ok &= fclose(out) == 0;
  printf("classify: %zu image%s through %s\n", n, n == 1 ? "" : "s", MODEL_NAME);
  free(y);
  free(x);
  free((void *)weights);
  return ok ? 0 : 1;
}
