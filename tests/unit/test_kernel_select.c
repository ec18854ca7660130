/*
 * test_kernel_select.c — tidsp_kernels_select: pinning a row of the
 * variant table by name (the compiler pins "ref" for constant folding).
 */
#include <string.h>

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

int main(void) {
  int32_t i;
  CHECK(tidsp_kernels_select(NULL) == TIDSP_ERR_PARAM);
  CHECK(tidsp_kernels_select("no_such_row") == TIDSP_ERR_PARAM);
  CHECK(tidsp_kernels_select("") == TIDSP_ERR_PARAM);
  for (i = 0; i < tidsp_kernel_variant_count; i++) {
    const tidsp_kernel_variant *v = &tidsp_kernel_variants[i];
    const tidsp_kernel_variant *before = tidsp_kernel_variant_active();
    int32_t st = tidsp_kernels_select(v->name);
    if (v->supported()) {
      CHECK_MSG(st == TIDSP_OK, "%s: %d", v->name, (int)st);
      CHECK_MSG(tidsp_kernel_variant_active() == v, "%s is not active", v->name);
    } else {
      /* a row this CPU cannot run is refused and changes nothing */
      CHECK_MSG(st == TIDSP_ERR_UNSUPPORTED, "%s: %d", v->name, (int)st);
      CHECK(tidsp_kernel_variant_active() == before);
    }
  }
  /* the reference row exists in every build and runs everywhere */
  CHECK(tidsp_kernels_select("ref") == TIDSP_OK);
  CHECK(strcmp(tidsp_kernel_variant_active()->name, "ref") == 0);
  UNIT_MAIN_END();
}
