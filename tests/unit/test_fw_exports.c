/*
 * The firmware's export table (fw/exports.c) covers every kernel the code
 * generator can call, so a module of any model loads: a kernel added to
 * the code generator and not to the table fails here, not on the board.
 */
#include <string.h>

#include "codegen/cg.h"
#include "exports.h"
#include "unit.h"

int main(void) {
  int kernels = 0;
  for (int op = 0; op < CS_OP_COUNT_; op++) {
    const cs_kernel_info *ki = cs_kernel_info_of((cs_op)op);
    if (!ki) continue;
    kernels++;
    CHECK_MSG(fw_export_find(ki->fn) != NULL, "%s is not exported", ki->fn);
    if (ki->scalar_fn) CHECK_MSG(fw_export_find(ki->scalar_fn) != NULL, "%s is not exported", ki->scalar_fn);
  }
  CHECK(kernels > 10);
  /* What every lib0.c calls besides kernels. */
  CHECK(fw_export_find("tidsp_weights_check") && fw_export_find("tidsp_status_str"));
  CHECK(fw_export_find("memcpy") && fw_export_find("memset"));
  /* No allocator: a module runs on its arena. */
  CHECK(!fw_export_find("malloc") && !fw_export_find("free"));
  CHECK(fw_export_find("tidsp_made_up") == NULL);
  size_t n;
  const fw_export *e = fw_exports(&n);
  for (size_t i = 0; i < n; i++) {
    CHECK(e[i].addr != NULL);
    for (size_t j = i + 1; j < n; j++) CHECK_MSG(strcmp(e[i].name, e[j].name), "%s twice", e[i].name);
  }
#if !CS_FW_MMALIB
  for (size_t i = 0; i < n; i++) CHECK(strcmp(e[i].group, "mmalib") && strcmp(e[i].group, "tidl"));
#endif
  UNIT_MAIN_END();
}
