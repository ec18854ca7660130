/*
 * exports.h — the firmware's export table: the only symbols a module may
 * leave undefined. A module is loaded only after every undefined symbol of
 * its dynamic symbol table has been found here (DLOAD's rule on the board:
 * what the firmware does not export, a module cannot call).
 *
 * What is in it depends on how the firmware was built: the runtime and the
 * C library always; the MMALIB kernels with CS_FW_MMALIB; the TIDL-backed
 * ones with CS_FW_TIDL (which forces CS_FW_MMALIB, as TIDL's own library
 * needs MMALIB).
 */
#ifndef CSTATIC_FW_EXPORTS_H
#define CSTATIC_FW_EXPORTS_H

#include <stddef.h>

#ifndef CS_FW_TIDL
#define CS_FW_TIDL 0
#endif
#ifndef CS_FW_MMALIB
#define CS_FW_MMALIB 0
#endif
#if CS_FW_TIDL && !CS_FW_MMALIB
#error "CS_FW_TIDL needs CS_FW_MMALIB (TIDL's kernels call MMALIB)"
#endif

typedef struct fw_export {
  const char *name;
  void (*addr)(void); /* the firmware's definition: what a module's reference binds to */
  const char *group;  /* "libc", "runtime", "mmalib", "tidl" */
} fw_export;

/* The table, n entries. */
const fw_export *fw_exports(size_t *n);
/* The entry named name, or NULL. */
const fw_export *fw_export_find(const char *name);
/* "--tidl OFF --mmalib ON": how this firmware was built. */
const char *fw_build_options(void);

#endif
