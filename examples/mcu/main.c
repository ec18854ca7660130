/*
 * A bare-metal program around a model compiled with -mcpu=cortex-m and
 * --weights=c --emit=runtime (docs/porting.md, "A microcontroller"): the
 * weights in flash, the arena a static array, no heap, no OS. It classifies
 * one image held in flash and returns the class as its exit status; a real
 * firmware would fill `image` from a sensor.
 *
 * The commands that build it are in docs/porting.md.
 */
#include <stdint.h>

#include "lib0.h"

#if MODEL_NUM_INPUTS != 1 || MODEL_NUM_OUTPUTS != 1 || MODEL_INPUT0_DTYPE != TIDSP_DTYPE_F32 || \
    MODEL_OUTPUT0_DTYPE != TIDSP_DTYPE_F32 || !MODEL_WEIGHTS_EMBEDDED
#error "this example takes a model with one float32 input and output, compiled with --weights=c"
#endif

static _Alignas(MODEL_ARENA_ALIGN) uint8_t arena[MODEL_ARENA_SIZE > 0 ? MODEL_ARENA_SIZE : 1];
static const float image[MODEL_INPUT0_NUMEL] = {0.5f};
static float scores[MODEL_OUTPUT0_NUMEL];

int main(void) {
  const void *inputs[] = {image};
  void *outputs[] = {scores};
  /* NULL: the compiled-in weights (weights.c), checked once. */
  if (model_check_weights(NULL, 0) != TIDSP_OK) return -1;
  int32_t st = model_run(NULL, arena, inputs, outputs);
  if (st != TIDSP_OK) return (int)st;
  int best = 0;
  for (int i = 1; i < MODEL_OUTPUT0_NUMEL; i++)
    if (scores[i] > scores[best]) best = i;
  return best;
}
