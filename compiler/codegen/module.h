/*
 * module.h — `cstatic compile --emit=module`: a compiled -mcpu=c7x model
 * directory → DIR/lib0.out, one loadable module for the C7x firmware.
 *
 * The module is the model's code as a position-independent shared object
 * with weights.bin embedded in a read-only `.rodata.weights` section (the
 * spec's bin_to_asm step) between _binary_weights_bin_start and
 * _binary_weights_bin_end; _binary_weights_bin_size is a 64-bit word
 * holding their distance (a data word rather than an absolute symbol,
 * which position-independent code would relocate). It is linked without
 * the C library or the runtime: its undefined symbols are the runtime
 * kernels and C library functions the firmware exports, which the
 * firmware resolves when it loads it.
 *
 * Host emulation of the TI flow: the host compiler stands in for TI CGT
 * C7000, a shared object for the DLOAD relocatable ELF.
 */
#ifndef CSTATIC_CODEGEN_MODULE_H
#define CSTATIC_CODEGEN_MODULE_H

#include "ir.h"

#define CS_MODULE_FILE "lib0.out"

typedef struct cs_module_options {
  const char *cc;          /* the host C compiler */
  const char *include_dir; /* holding cstatic/… headers */
} cs_module_options;

/* Write the weights embedder (assembly) for weights_bin into path. */
cs_status cs_module_write_weights_asm(const char *weights_bin, const char *path);

/* Build dir/lib*.c and dir/weights.bin into dir/lib0.out; the
 * intermediate files go in dir/.module and are removed. */
cs_status cs_module_build(const char *dir, const cs_module_options *o);

/* dir's generated sources lib<N>.c, sorted by name (lib0.c first);
 * malloc'd (free with cs_module_free_names). */
cs_status cs_module_list_sources(const char *dir, char ***names, int *n);

/* The undefined symbols of a built module (its dynamic symbol table):
 * what the firmware must resolve, so the import list of the TI link.
 * names: sorted, unique, malloc'd (free with cs_module_free_names). */
cs_status cs_module_undefined_symbols(const char *module_path, char ***names, int *n);
void cs_module_free_names(char **names, int n);

#endif
