/*
 * ti_project.h — `cstatic compile --emit=ti-project` (with -mcpu=c7x):
 * DIR/ti-project/, the folder a user with TI's C7000 code-generation tools
 * (CGT) builds lib0.out for the board's DLOAD with one command (`make
 * CGT=/path/to/ti-cgt-c7000`), as the spec's "Building a DLOAD Module"
 * describes:
 *
 *   Makefile         the two-stage link: dsp_syms.out (the pseudo-firmware),
 *                    then lib*.c + weights.asm linked against it with
 *                    c7x_dynmod.cmd into lib0.out
 *   c7x_dynmod.cmd   --dynamic=lib, --relocatable, one --import= per
 *                    undefined symbol of the module, the exports, the
 *                    .rodata.weights section
 *   dsp_syms.c       one exported stub per firmware export, written from
 *                    cstatic/c7x_exports.def (the table the firmware emulator's
 *                    table is made of), per firmware build option
 *   weights.asm      weights.bin in TI assembly: .sect ".rodata.weights",
 *                    _binary_weights_bin_start / _end / _size
 *   lib*.c, lib0.h, include/cstatic/  the model's C and the headers it needs
 *   README.md        how to build and run it, and what was not run here
 *
 * The import list is read from the module cstatic built for the emulator
 * (DIR/lib0.out, which --emit=ti-project also leaves): the undefined
 * symbols of that very C. One the firmware exports under no build option
 * is an error naming it.
 */
#ifndef CSTATIC_CODEGEN_TI_PROJECT_H
#define CSTATIC_CODEGEN_TI_PROJECT_H

#include "ir.h"

#define CS_TI_PROJECT_DIR "ti-project"

typedef struct cs_ti_project_options {
  const char *include_dir; /* holding cstatic/… headers (copied into the project) */
  const char *target;      /* the canonical target string, for the README */
  const char *model_name;  /* for the README */
} cs_ti_project_options;

/* Write dir/ti-project/ from dir's lib*.c, lib0.h, weights.bin and
 * lib0.out (cs_module_build's). *n_imports: how many --import= lines. */
cs_status cs_ti_project_write(const char *dir, const cs_ti_project_options *o, int *n_imports);

#endif
