/*
 * fs.h — file helpers shared by the CLI and the code generator's project
 * writers (a stage below both: cs_util).
 */
#ifndef CSTATIC_UTIL_FS_H
#define CSTATIC_UTIL_FS_H

#include "ir.h"

/* Copy one file's bytes (the destination's directory must exist); an
 * error names the file that could not be read or written. */
cs_status cs_fs_copy_file(const char *from, const char *to);

#endif
