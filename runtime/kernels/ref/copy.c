/*
 * copy.c — plain byte copy (Reshape/Flatten/Squeeze/Unsqueeze/Identity when
 * input and output could not share storage). Overlap is allowed.
 */
#include "ref_internal.h"

int32_t tidsp_copy(size_t nbytes, const void *x, void *y) {
  if (nbytes == 0)
    return TIDSP_OK;
  if (!x || !y)
    return TIDSP_ERR_NULL;
  memmove(y, x, nbytes);
  return TIDSP_OK;
}
