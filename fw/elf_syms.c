/*
 * ELF64 little-endian shared objects for the machine the firmware runs on
 * (the emulator's stand-in for a C7x relocatable DLOAD module).
 */
#include "elf_syms.h"

#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#define FW_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define FW_ELF_MACHINE EM_AARCH64
#else
#error "elf_syms.c: unknown host machine"
#endif

static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

/* [off, off + len) inside [0, size) */
static int in_bounds(uint64_t off, uint64_t len, size_t size) {
  return off <= size && len <= size - off;
}

int fw_elf_scan(const void *image, size_t size, fw_elf_info *info, fw_elf_undef_fn fn, void *ctx,
                char *err, size_t n_err) {
  const uint8_t *b = (const uint8_t *)image;
  memset(info, 0, sizeof *info);
  if (size < sizeof(Elf64_Ehdr) || memcmp(b, ELFMAG, SELFMAG))
    return fail(err, n_err, "not an ELF file (%zu bytes, no ELF magic)", size);
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail(err, n_err, "not a 64-bit little-endian ELF");
  if (eh.e_machine != FW_ELF_MACHINE)
    return fail(err, n_err, "ELF machine %u, this firmware loads machine %u", eh.e_machine,
                FW_ELF_MACHINE);
  if (eh.e_type != ET_DYN)
    return fail(err, n_err, "ELF type %u is not a loadable module (ET_DYN; build it with "
                            "'cstatic compile --emit=module')", eh.e_type);
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !in_bounds(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size) ||
      !in_bounds(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size))
    return fail(err, n_err, "program or section headers outside the %zu-byte image", size);

  uint64_t lo = UINT64_MAX, hi = 0;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, b + eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_LOAD) continue;
    if (!in_bounds(ph.p_offset, ph.p_filesz, size) || ph.p_memsz < ph.p_filesz ||
        ph.p_vaddr > UINT64_MAX - ph.p_memsz)
      return fail(err, n_err, "loadable segment %u outside the image", i);
    if (ph.p_flags & PF_X) info->text_size += ph.p_memsz;
    else info->data_size += ph.p_memsz;
    if (ph.p_vaddr < lo) lo = ph.p_vaddr;
    if (ph.p_vaddr + ph.p_memsz > hi) hi = ph.p_vaddr + ph.p_memsz;
  }
  if (lo == UINT64_MAX) return fail(err, n_err, "no loadable segment");
  info->span = hi - lo;

  int found = 0;
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh, strh;
    memcpy(&sh, b + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_DYNSYM) continue;
    found = 1;
    if (sh.sh_link >= eh.e_shnum) return fail(err, n_err, "dynamic symbol table has no string table");
    memcpy(&strh, b + eh.e_shoff + (uint64_t)sh.sh_link * sizeof strh, sizeof strh);
    if (sh.sh_entsize != sizeof(Elf64_Sym) || !in_bounds(sh.sh_offset, sh.sh_size, size) ||
        !in_bounds(strh.sh_offset, strh.sh_size, size) || strh.sh_size == 0 ||
        b[strh.sh_offset + strh.sh_size - 1] != '\0')
      return fail(err, n_err, "malformed dynamic symbol table");
    const char *strtab = (const char *)b + strh.sh_offset;
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
      Elf64_Sym s;
      memcpy(&s, b + sh.sh_offset + k * sizeof s, sizeof s);
      if (s.st_shndx != SHN_UNDEF || s.st_name == 0) continue;
      int bind = ELF64_ST_BIND(s.st_info);
      if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
      if (s.st_name >= strh.sh_size) return fail(err, n_err, "symbol %llu: name outside the string table", (unsigned long long)k);
      info->n_undefined++;
      int r = fn ? fn(ctx, strtab + s.st_name) : 0;
      if (r) return r;
    }
  }
  if (!found) return fail(err, n_err, "no dynamic symbol table (.dynsym)");
  return 0;
}
