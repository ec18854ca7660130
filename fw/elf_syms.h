/*
 * elf_syms.h — what the loader reads from a module image before it lets
 * the dynamic loader near it: the ELF header, the loadable segments and the
 * undefined symbols of the dynamic symbol table. Every offset and size is
 * checked against the image, so a truncated or hostile image is an error,
 * never a read out of bounds.
 */
#ifndef CSTATIC_FW_ELF_SYMS_H
#define CSTATIC_FW_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct fw_elf_info {
  uint64_t text_size; /* memsz of executable PT_LOAD segments */
  uint64_t data_size; /* memsz of the other PT_LOAD segments */
  uint64_t span;      /* lowest to highest loadable address */
  size_t n_undefined;
} fw_elf_info;

/* Called for every undefined (global or weak) symbol; a non-zero return
 * stops the scan and is returned by fw_elf_scan. */
typedef int (*fw_elf_undef_fn)(void *ctx, const char *name);

/* 0 on success; -1 with a message in err (what is wrong with the image)
 * when it is not a shared object for this machine or is malformed. */
int fw_elf_scan(const void *image, size_t size, fw_elf_info *info, fw_elf_undef_fn fn, void *ctx,
                char *err, size_t n_err);

#endif
