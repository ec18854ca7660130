/*
 * elf_load.h — the firmware's DLOAD: an ELF64 little-endian shared object
 * (what `cstatic compile --emit=module` writes) checked, placed at any
 * address and relocated, without the host's dynamic loader.
 *
 * Three steps over a private copy of the file (never memory a client can
 * still write):
 *
 *   fw_elf_parse     every header, segment, dynamic entry, symbol and
 *                    relocation is checked against the file and against
 *                    what this loader does; each undefined symbol must be
 *                    resolved by the caller's resolver (the firmware's
 *                    export table). Reads the file, writes nothing else.
 *   fw_elf_place     the loadable segments into span bytes of memory (page
 *                    aligned), zero-filled, relocations applied.
 *   fw_elf_protect   each page gets its segments' permissions (PT_GNU_RELRO
 *                    read-only after relocation, gaps inaccessible);
 *                    fw_elf_unprotect makes the span plain memory again.
 *
 * What is refused, by name: anything that would run module code before its
 * entry is called (DT_INIT, DT_INIT_ARRAY, DT_PREINIT_ARRAY and their FINI
 * counterparts — the firmware never runs them, and a module that counts on
 * them would misbehave silently; old-style .ctors only ever run from
 * DT_INIT code; IRELATIVE relocations and IFUNC symbols), libraries
 * (DT_NEEDED: the export table is the only provider), text relocations,
 * thread-local storage, writable-and-executable pages, and every
 * relocation kind but NONE, RELATIVE, GLOB_DAT, JUMP_SLOT and 64/ABS64 —
 * the kinds a position-independent shared object of x86-64 or AArch64
 * contains. Section headers are not read: a loader needs only the program
 * headers and the dynamic section.
 *
 * Addresses: a segment's vaddr v lives at mem + (v - lo); every pointer a
 * relocation writes is an address in this process.
 */
#ifndef CSTATIC_FW_ELF_LOAD_H
#define CSTATIC_FW_ELF_LOAD_H

#include <stddef.h>
#include <stdint.h>

enum {
  FW_ELF_MAX_SEGMENTS = 16,   /* PT_LOAD entries */
  FW_ELF_MAX_PHDRS = 64,
  FW_ELF_MAX_SYMBOLS = 65536, /* dynamic symbols */
  FW_ELF_MAX_DYNAMIC = 1024,  /* dynamic entries */
};
/* Placement alignment honoured (a segment's p_align): 2 MiB, the largest
 * max-page-size a GNU linker uses. */
#define FW_ELF_MAX_ALIGN (UINT64_C(2) << 20)
/* The largest span considered at all; the DDR heap decides what fits. */
#define FW_ELF_MAX_SPAN (UINT64_C(1) << 40)

/* fw_elf_parse's failures. */
enum { FW_ELF_OK = 0, FW_ELF_ERR_FORMAT = -1, FW_ELF_ERR_SYMBOL = -2 };

typedef struct fw_elf_segment {
  uint64_t vaddr, memsz, offset, filesz;
  uint32_t flags; /* PF_R | PF_W | PF_X */
} fw_elf_segment;

/* A parsed image: the file it was parsed from must stay as it is until the
 * image is placed. */
typedef struct fw_elf {
  const uint8_t *file;
  size_t size;
  uint16_t machine;
  uint64_t page;
  fw_elf_segment seg[FW_ELF_MAX_SEGMENTS]; /* sorted by vaddr, disjoint */
  int n_seg;
  uint64_t lo;              /* lowest loadable address, page aligned */
  uint64_t span;            /* bytes from lo to the last page's end */
  uint64_t align;           /* where the span is placed: a multiple of this */
  uint64_t text_size;       /* memsz of executable segments */
  uint64_t data_size;       /* memsz of the others */
  uint64_t relro_lo, relro_hi; /* read-only after relocation; equal: none */
  /* the dynamic section (vaddrs) */
  uint64_t strtab, strsz, symtab, n_symbols;
  uint64_t rela[2], rela_size[2]; /* DT_RELA, DT_JMPREL tables */
} fw_elf;

/* addr of the symbol name, or -1 when the resolver has none. */
typedef int (*fw_elf_resolve_fn)(void *ctx, const char *name, uint64_t *addr);

/* Check file (size bytes) as a module for machine (EM_X86_64,
 * EM_AARCH64) on pages of page bytes. FW_ELF_OK; FW_ELF_ERR_FORMAT with
 * what is wrong in err; FW_ELF_ERR_SYMBOL when the resolver lacks some
 * undefined symbol (it was asked about every one; err names the first). */
int fw_elf_parse(fw_elf *e, const void *file, size_t size, uint16_t machine, uint64_t page,
                 fw_elf_resolve_fn resolve, void *ctx, char *err, size_t n_err);

/* Copy the segments into mem (e->span bytes, aligned to e->align, writable)
 * and apply the relocations with the same resolver: 0, or -1 with err (only
 * if the resolver now answers otherwise than at parse). */
int fw_elf_place(const fw_elf *e, uint8_t *mem, fw_elf_resolve_fn resolve, void *ctx, char *err,
                 size_t n_err);

/* Give the placed pages their permissions (this process's pages: only for
 * e->machine == the host's); 0, or -1 with err. Executable pages are made
 * coherent with the data cache first. */
int fw_elf_protect(const fw_elf *e, uint8_t *mem, char *err, size_t n_err);
/* Make span bytes at mem (a placed image) read-write again, before the
 * memory is reused; 0 or -1. */
int fw_elf_unprotect(uint8_t *mem, uint64_t span);

/* A symbol the module defines (dynamic symbol table). */
typedef struct fw_elf_symbol {
  uint64_t vaddr, size;
  int type;        /* STT_* */
  uint32_t flags;  /* the containing segment's PF_*; 0: in no segment */
} fw_elf_symbol;
/* 0 and *out when the module defines name, else -1. */
int fw_elf_find(const fw_elf *e, const char *name, fw_elf_symbol *out);

/* Whether [vaddr, vaddr + len) lies inside one loadable segment (its
 * memory image), and that segment's flags in *flags. */
int fw_elf_in_segment(const fw_elf *e, uint64_t vaddr, uint64_t len, uint32_t *flags);

/* "x86-64", "AArch64", … for messages. */
const char *fw_elf_machine_name(uint16_t machine);

#endif
