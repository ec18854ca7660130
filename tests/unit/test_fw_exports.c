/*
 * The firmware's export table (fw/exports.c) covers every kernel the code
 * generator can call, so a module of any model loads: a kernel added to
 * the code generator and not to the table fails here, not on the board.
 * MMALIB and TIDL-backed kernels are exported exactly when the firmware
 * is built with them (CS_FW_MMALIB, CS_FW_TIDL).
 */
#include <string.h>

#include "codegen/cg.h"
#include "exports.h"
#include "unit.h"

/* Whether this build's firmware exports fn: the MMALIB wrappers only with
 * CS_FW_MMALIB (--mmalib), the TIDL-backed kernels only with CS_FW_TIDL
 * (--tidl); everything else always. */
static int build_exports(const char *fn, const char **group) {
  size_t n = strlen(fn);
  if (n > 5 && !strcmp(fn + n - 5, "_tidl")) {
    *group = "tidl";
    return CS_FW_TIDL;
  }
  if (!strncmp(fn, "mmalib_", 7)) {
    *group = "mmalib";
    return CS_FW_MMALIB;
  }
  *group = "runtime";
  return 1;
}

static void check_kernel(const char *fn) {
  const char *group;
  const fw_export *e = fw_export_find(fn);
  if (build_exports(fn, &group)) {
    CHECK_MSG(e != NULL, "%s is not exported (%s)", fn, fw_build_options());
    if (e) CHECK_MSG(!strcmp(e->group, group), "%s is in group %s, not %s", fn, e->group, group);
  } else {
    /* A module calling it fails to load on this firmware, naming it. */
    CHECK_MSG(e == NULL, "%s is exported by a firmware built %s", fn, fw_build_options());
  }
}

int main(void) {
  int kernels = 0;
  for (int op = 0; op < CS_OP_COUNT_; op++) {
    const cs_kernel_info *ki = cs_kernel_info_of((cs_op)op);
    if (!ki) continue;
    kernels++;
    check_kernel(ki->fn);
    if (ki->scalar_fn) check_kernel(ki->scalar_fn);
  }
  CHECK(kernels > 10);
  /* What every lib0.c calls besides kernels. */
  CHECK(fw_export_find("tidsp_weights_check") && fw_export_find("tidsp_status_str"));
  CHECK(fw_export_find("memcpy") && fw_export_find("memset"));
  /* What a c7x -mmalib=1 module's staged calls use (cstatic/dma.h), in
   * every firmware; never tidsp_l2_bind: the firmware binds its L2 SRAM
   * for each inference, and a module must not rebind it. */
  const char *dma[] = {"tidsp_dma_copy", "tidsp_dma_wait", "tidsp_l2_scratch"};
  for (size_t i = 0; i < sizeof dma / sizeof dma[0]; i++) {
    const fw_export *d = fw_export_find(dma[i]);
    CHECK_MSG(d && !strcmp(d->group, "runtime"), "%s is not exported in group runtime (%s)", dma[i],
              fw_build_options());
  }
  CHECK(fw_export_find("tidsp_l2_bind") == NULL);
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
