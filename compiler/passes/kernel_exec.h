/*
 * kernel_exec.h — call the runtime reference kernel of a kernel node, at
 * compile time (constant folding) and in tests. The same table codegen
 * prints as C.
 */
#ifndef CSTATIC_KERNEL_EXEC_H
#define CSTATIC_KERNEL_EXEC_H

#include "ir.h"

/* in[i] is the data of node input i (NULL for an absent one), out[o] the
 * buffer of output o. Returns the kernel's status. */
int32_t cs_kernel_exec(const cs_node *n, const void *const *in, void *const *out);

#endif
