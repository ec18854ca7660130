/*
 * kernel_exec.h — call the runtime reference kernel of a kernel node, at
 * compile time (constant folding) and in tests: the kernel table
 * (cstatic/kernels.def) that codegen prints as C.
 */
#ifndef CSTATIC_KERNEL_EXEC_H
#define CSTATIC_KERNEL_EXEC_H

#include "ir.h"

/* Run node n of g: in[i] is the data of node input i (NULL for an absent
 * one), out[o] the buffer of output o, each of its value's size. Returns
 * the kernel's status (TIDSP_ERR_UNSUPPORTED for a node that is not a
 * kernel op). */
int32_t cs_kernel_exec(const cs_graph *g, const cs_node *n, const void *const *in, void *const *out);

#endif
