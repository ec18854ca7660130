/*
 * The DLOAD analogue (elf_load.h). Every read goes through file_at() or
 * image_at(), which check offset and length against the file or a
 * segment, with no arithmetic that can wrap; every write goes to a
 * relocation target already checked to lie in a writable segment.
 *
 * One function walks the relocations for both the check (mem NULL) and
 * the placement, so what was checked is what is applied.
 */
#define _GNU_SOURCE

#include "elf_load.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#ifndef DT_RELR /* glibc before 2.36 */
#define DT_RELRSZ 35
#define DT_RELR 36
#define DT_RELRENT 37
#endif

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return FW_ELF_ERR_FORMAT;
}

const char *fw_elf_machine_name(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_386: return "i386";
    case EM_ARM: return "ARM";
    case EM_RISCV: return "RISC-V";
    case EM_TI_C6000: return "TI C6000";
    default: return "unknown";
  }
}

/* ---- relocation kinds ------------------------------------------------------ */

enum { K_NONE, K_RELATIVE, K_ABS64, K_GLOB_DAT, K_JUMP_SLOT, K_REFUSED };

typedef struct reloc_kind {
  uint32_t type;
  int kind;
  const char *name;
} reloc_kind;

/* What each machine's dynamic loader would have to do; only the first
 * five kinds are done here. */
static const reloc_kind x86_64_relocs[] = {
    {R_X86_64_NONE, K_NONE, "R_X86_64_NONE"},
    {R_X86_64_64, K_ABS64, "R_X86_64_64"},
    {R_X86_64_GLOB_DAT, K_GLOB_DAT, "R_X86_64_GLOB_DAT"},
    {R_X86_64_JUMP_SLOT, K_JUMP_SLOT, "R_X86_64_JUMP_SLOT"},
    {R_X86_64_RELATIVE, K_RELATIVE, "R_X86_64_RELATIVE"},
    {R_X86_64_PC32, K_REFUSED, "R_X86_64_PC32"},
    {R_X86_64_GOT32, K_REFUSED, "R_X86_64_GOT32"},
    {R_X86_64_PLT32, K_REFUSED, "R_X86_64_PLT32"},
    {R_X86_64_COPY, K_REFUSED, "R_X86_64_COPY"},
    {R_X86_64_GOTPCREL, K_REFUSED, "R_X86_64_GOTPCREL"},
    {R_X86_64_32, K_REFUSED, "R_X86_64_32"},
    {R_X86_64_32S, K_REFUSED, "R_X86_64_32S"},
    {R_X86_64_16, K_REFUSED, "R_X86_64_16"},
    {R_X86_64_PC16, K_REFUSED, "R_X86_64_PC16"},
    {R_X86_64_8, K_REFUSED, "R_X86_64_8"},
    {R_X86_64_PC8, K_REFUSED, "R_X86_64_PC8"},
    {R_X86_64_DTPMOD64, K_REFUSED, "R_X86_64_DTPMOD64"},
    {R_X86_64_DTPOFF64, K_REFUSED, "R_X86_64_DTPOFF64"},
    {R_X86_64_TPOFF64, K_REFUSED, "R_X86_64_TPOFF64"},
    {R_X86_64_TLSGD, K_REFUSED, "R_X86_64_TLSGD"},
    {R_X86_64_TLSLD, K_REFUSED, "R_X86_64_TLSLD"},
    {R_X86_64_DTPOFF32, K_REFUSED, "R_X86_64_DTPOFF32"},
    {R_X86_64_GOTTPOFF, K_REFUSED, "R_X86_64_GOTTPOFF"},
    {R_X86_64_TPOFF32, K_REFUSED, "R_X86_64_TPOFF32"},
    {R_X86_64_PC64, K_REFUSED, "R_X86_64_PC64"},
    {R_X86_64_GOTOFF64, K_REFUSED, "R_X86_64_GOTOFF64"},
    {R_X86_64_GOTPC32, K_REFUSED, "R_X86_64_GOTPC32"},
    {R_X86_64_SIZE32, K_REFUSED, "R_X86_64_SIZE32"},
    {R_X86_64_SIZE64, K_REFUSED, "R_X86_64_SIZE64"},
    {R_X86_64_TLSDESC, K_REFUSED, "R_X86_64_TLSDESC"},
    {R_X86_64_IRELATIVE, K_REFUSED, "R_X86_64_IRELATIVE"},
    {R_X86_64_RELATIVE64, K_REFUSED, "R_X86_64_RELATIVE64"},
};

static const reloc_kind aarch64_relocs[] = {
    {R_AARCH64_NONE, K_NONE, "R_AARCH64_NONE"},
    {R_AARCH64_ABS64, K_ABS64, "R_AARCH64_ABS64"},
    {R_AARCH64_GLOB_DAT, K_GLOB_DAT, "R_AARCH64_GLOB_DAT"},
    {R_AARCH64_JUMP_SLOT, K_JUMP_SLOT, "R_AARCH64_JUMP_SLOT"},
    {R_AARCH64_RELATIVE, K_RELATIVE, "R_AARCH64_RELATIVE"},
    {R_AARCH64_ABS32, K_REFUSED, "R_AARCH64_ABS32"},
    {R_AARCH64_ABS16, K_REFUSED, "R_AARCH64_ABS16"},
    {R_AARCH64_PREL64, K_REFUSED, "R_AARCH64_PREL64"},
    {R_AARCH64_PREL32, K_REFUSED, "R_AARCH64_PREL32"},
    {R_AARCH64_PREL16, K_REFUSED, "R_AARCH64_PREL16"},
    {R_AARCH64_COPY, K_REFUSED, "R_AARCH64_COPY"},
    {R_AARCH64_TLS_DTPMOD, K_REFUSED, "R_AARCH64_TLS_DTPMOD"},
    {R_AARCH64_TLS_DTPREL, K_REFUSED, "R_AARCH64_TLS_DTPREL"},
    {R_AARCH64_TLS_TPREL, K_REFUSED, "R_AARCH64_TLS_TPREL"},
    {R_AARCH64_TLSDESC, K_REFUSED, "R_AARCH64_TLSDESC"},
    {R_AARCH64_IRELATIVE, K_REFUSED, "R_AARCH64_IRELATIVE"},
};

typedef struct machine_rules {
  uint16_t machine;
  const reloc_kind *relocs;
  size_t n_relocs;
  /* GLOB_DAT and JUMP_SLOT: S + A (AArch64) or S (x86-64's psABI). */
  int slot_adds_addend;
} machine_rules;

static const machine_rules machines[] = {
    {EM_X86_64, x86_64_relocs, sizeof x86_64_relocs / sizeof x86_64_relocs[0], 0},
    {EM_AARCH64, aarch64_relocs, sizeof aarch64_relocs / sizeof aarch64_relocs[0], 1},
};

static const machine_rules *rules_of(uint16_t machine) {
  for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
    if (machines[i].machine == machine) return &machines[i];
  return NULL;
}

static const reloc_kind *kind_of(const machine_rules *r, uint32_t type) {
  for (size_t i = 0; i < r->n_relocs; i++)
    if (r->relocs[i].type == type) return &r->relocs[i];
  return NULL;
}

/* ---- bounds ----------------------------------------------------------------- */

/* [off, off + len) inside [0, size) */
static int in_bounds(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

/* The file bytes behind [vaddr, vaddr + len) when one segment holds them
 * all in its file-backed part; NULL otherwise. */
static const uint8_t *file_at(const fw_elf *e, uint64_t vaddr, uint64_t len) {
  for (int i = 0; i < e->n_seg; i++) {
    const fw_elf_segment *s = &e->seg[i];
    if (vaddr >= s->vaddr && in_bounds(vaddr - s->vaddr, len, s->filesz))
      return e->file + s->offset + (vaddr - s->vaddr);
  }
  return NULL;
}

int fw_elf_in_segment(const fw_elf *e, uint64_t vaddr, uint64_t len, uint32_t *flags) {
  for (int i = 0; i < e->n_seg; i++) {
    const fw_elf_segment *s = &e->seg[i];
    if (vaddr >= s->vaddr && in_bounds(vaddr - s->vaddr, len, s->memsz)) {
      if (flags) *flags = s->flags;
      return 1;
    }
  }
  return 0;
}

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* The NUL-terminated name at strtab offset off, or NULL. */
static const char *name_at(const fw_elf *e, uint64_t off) {
  if (off >= e->strsz) return NULL;
  const uint8_t *s = file_at(e, e->strtab + off, e->strsz - off);
  if (!s || !memchr(s, '\0', (size_t)(e->strsz - off))) return NULL;
  return (const char *)s;
}

static int symbol_at(const fw_elf *e, uint64_t index, Elf64_Sym *out) {
  if (index >= e->n_symbols) return -1;
  const uint8_t *p = file_at(e, e->symtab + index * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
  if (!p) return -1;
  memcpy(out, p, sizeof *out);
  return 0;
}

/* ---- headers and segments ------------------------------------------------- */

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static int parse_headers(fw_elf *e, char *err, size_t n_err) {
  const uint8_t *b = e->file;
  if (e->size < 4 || memcmp(b, ELFMAG, SELFMAG))
    return fail(err, n_err, "not an ELF file (%zu bytes, no ELF magic)", e->size);
  if (e->size < sizeof(Elf64_Ehdr))
    return fail(err, n_err, "truncated: %zu bytes, shorter than the 64-byte ELF header", e->size);
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail(err, n_err, "ELF class %u data %u: not a 64-bit little-endian ELF", eh.e_ident[EI_CLASS],
                eh.e_ident[EI_DATA]);
  if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT)
    return fail(err, n_err, "ELF version %u/%u, not %u", eh.e_ident[EI_VERSION], eh.e_version, EV_CURRENT);
  if (eh.e_ident[EI_OSABI] != ELFOSABI_SYSV && eh.e_ident[EI_OSABI] != ELFOSABI_GNU)
    return fail(err, n_err, "ELF OS ABI %u is neither System V (0) nor GNU (3)", eh.e_ident[EI_OSABI]);
  if (eh.e_machine != e->machine)
    return fail(err, n_err, "ELF machine %u (%s); this firmware loads machine %u (%s)", eh.e_machine,
                fw_elf_machine_name(eh.e_machine), e->machine, fw_elf_machine_name(e->machine));
  if (eh.e_type != ET_DYN)
    return fail(err, n_err, "ELF type %u is not a loadable module (ET_DYN; build it with 'cstatic compile "
                            "--emit=module')", eh.e_type);
  if (eh.e_ehsize != sizeof(Elf64_Ehdr) || eh.e_phentsize != sizeof(Elf64_Phdr))
    return fail(err, n_err, "ELF header size %u / program header size %u, not %zu / %zu", eh.e_ehsize,
                eh.e_phentsize, sizeof(Elf64_Ehdr), sizeof(Elf64_Phdr));
  if (eh.e_phnum == 0 || eh.e_phnum > FW_ELF_MAX_PHDRS)
    return fail(err, n_err, "%u program headers (1 to %d)", eh.e_phnum, FW_ELF_MAX_PHDRS);
  if (!in_bounds(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), e->size))
    return fail(err, n_err, "program headers at offset %llu (%u of them) outside the %zu-byte file",
                (unsigned long long)eh.e_phoff, eh.e_phnum, e->size);

  int have_dynamic = 0, have_relro = 0;
  Elf64_Phdr dyn;
  memset(&dyn, 0, sizeof dyn);
  e->align = e->page;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, b + eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
    switch (ph.p_type) {
      case PT_LOAD: {
        if (e->n_seg == FW_ELF_MAX_SEGMENTS)
          return fail(err, n_err, "more than %d loadable segments", FW_ELF_MAX_SEGMENTS);
        if (!in_bounds(ph.p_offset, ph.p_filesz, e->size))
          return fail(err, n_err, "segment %u: file bytes [%llu, +%llu) outside the %zu-byte file", i,
                      (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz, e->size);
        if (ph.p_filesz > ph.p_memsz)
          return fail(err, n_err, "segment %u: %llu file bytes in %llu bytes of memory", i,
                      (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_memsz);
        if (ph.p_memsz > FW_ELF_MAX_SPAN || ph.p_vaddr > FW_ELF_MAX_SPAN)
          return fail(err, n_err, "segment %u: %llu bytes at 0x%llx: absurd size or address", i,
                      (unsigned long long)ph.p_memsz, (unsigned long long)ph.p_vaddr);
        if (ph.p_align > 1 && (!is_pow2(ph.p_align) || ph.p_align > FW_ELF_MAX_ALIGN))
          return fail(err, n_err, "segment %u: alignment %llu (a power of two up to %llu)", i,
                      (unsigned long long)ph.p_align, (unsigned long long)FW_ELF_MAX_ALIGN);
        if ((ph.p_flags & PF_W) && (ph.p_flags & PF_X))
          return fail(err, n_err, "segment %u is writable and executable", i);
        if (e->n_seg > 0) {
          const fw_elf_segment *prev = &e->seg[e->n_seg - 1];
          if (ph.p_vaddr < prev->vaddr + prev->memsz)
            return fail(err, n_err, "segment %u at 0x%llx overlaps (or precedes) the segment before it, which "
                        "ends at 0x%llx", i, (unsigned long long)ph.p_vaddr,
                        (unsigned long long)(prev->vaddr + prev->memsz));
        }
        fw_elf_segment *s = &e->seg[e->n_seg++];
        s->vaddr = ph.p_vaddr;
        s->memsz = ph.p_memsz;
        s->offset = ph.p_offset;
        s->filesz = ph.p_filesz;
        s->flags = ph.p_flags & (PF_R | PF_W | PF_X);
        if (ph.p_align > e->align) e->align = ph.p_align;
        if (ph.p_flags & PF_X) e->text_size += ph.p_memsz;
        else e->data_size += ph.p_memsz;
        break;
      }
      case PT_DYNAMIC:
        if (have_dynamic) return fail(err, n_err, "more than one dynamic segment");
        have_dynamic = 1;
        dyn = ph;
        break;
      case PT_GNU_RELRO:
        if (have_relro) return fail(err, n_err, "more than one PT_GNU_RELRO");
        have_relro = 1;
        if (ph.p_memsz > FW_ELF_MAX_SPAN || ph.p_vaddr > FW_ELF_MAX_SPAN)
          return fail(err, n_err, "PT_GNU_RELRO: absurd size or address");
        e->relro_lo = ph.p_vaddr;
        e->relro_hi = ph.p_vaddr + ph.p_memsz;
        break;
      case PT_TLS:
        return fail(err, n_err, "segment %u: thread-local storage (PT_TLS) is not supported", i);
      case PT_INTERP:
        return fail(err, n_err, "segment %u: a program interpreter (PT_INTERP): an executable, not a module", i);
      default:
        break; /* notes, unwind tables, stack flags: nothing to load */
    }
  }
  if (e->n_seg == 0) return fail(err, n_err, "no loadable segment");
  if (!have_dynamic) return fail(err, n_err, "no dynamic segment (PT_DYNAMIC): not a shared object");

  const fw_elf_segment *last = &e->seg[e->n_seg - 1];
  e->lo = e->seg[0].vaddr & ~(e->align - 1);
  uint64_t hi = last->vaddr + last->memsz;
  e->span = ((hi - e->lo) + e->page - 1) & ~(e->page - 1);
  if (e->span == 0) e->span = e->page;
  if (have_relro) {
    uint32_t f;
    /* Read-only after relocation, as ld.so does: the pages it covers
     * whole (its last, partial page stays writable). */
    if (e->relro_hi > e->relro_lo &&
        (!fw_elf_in_segment(e, e->relro_lo, e->relro_hi - e->relro_lo, &f) || !(f & PF_W)))
      return fail(err, n_err, "PT_GNU_RELRO [0x%llx, 0x%llx) is not inside a writable segment",
                  (unsigned long long)e->relro_lo, (unsigned long long)e->relro_hi);
  }

  /* Pages shared by segments get the union of their permissions: never
   * writable and executable at once. */
  for (int i = 0; i + 1 < e->n_seg; i++) {
    const fw_elf_segment *a = &e->seg[i], *c = &e->seg[i + 1];
    uint64_t a_last = (a->vaddr + (a->memsz ? a->memsz : 1) - 1) / e->page, c_first = c->vaddr / e->page;
    uint32_t u = a->flags | c->flags;
    if (a_last == c_first && (u & PF_W) && (u & PF_X))
      return fail(err, n_err, "segments at 0x%llx and 0x%llx share a page, one writable, one executable",
                  (unsigned long long)a->vaddr, (unsigned long long)c->vaddr);
  }

  /* The dynamic section itself. */
  if (dyn.p_filesz % sizeof(Elf64_Dyn) || dyn.p_filesz / sizeof(Elf64_Dyn) > FW_ELF_MAX_DYNAMIC)
    return fail(err, n_err, "dynamic segment of %llu bytes", (unsigned long long)dyn.p_filesz);
  const uint8_t *d = file_at(e, dyn.p_vaddr, dyn.p_filesz);
  if (!d) return fail(err, n_err, "dynamic segment at 0x%llx is not inside a loadable segment",
                      (unsigned long long)dyn.p_vaddr);

  uint64_t hash = 0, gnu_hash = 0, needed = UINT64_MAX, relaent = sizeof(Elf64_Rela), syment = sizeof(Elf64_Sym);
  uint64_t pltrel = DT_RELA;
  int have_null = 0, have_jmprel = 0;
  for (uint64_t k = 0; k < dyn.p_filesz / sizeof(Elf64_Dyn) && !have_null; k++) {
    Elf64_Dyn de;
    memcpy(&de, d + k * sizeof de, sizeof de);
    uint64_t v = de.d_un.d_val;
    switch (de.d_tag) {
      case DT_NULL: have_null = 1; break;
      case DT_NEEDED: if (needed == UINT64_MAX) needed = v; break;
      case DT_HASH: hash = v; break;
      case DT_GNU_HASH: gnu_hash = v; break;
      case DT_STRTAB: e->strtab = v; break;
      case DT_STRSZ: e->strsz = v; break;
      case DT_SYMTAB: e->symtab = v; break;
      case DT_SYMENT: syment = v; break;
      case DT_RELA: e->rela[0] = v; break;
      case DT_RELASZ: e->rela_size[0] = v; break;
      case DT_RELAENT: relaent = v; break;
      case DT_JMPREL: e->rela[1] = v; have_jmprel = 1; break;
      case DT_PLTRELSZ: e->rela_size[1] = v; break;
      case DT_PLTREL: pltrel = v; break;
      case DT_INIT: return fail(err, n_err, "module has an initializer (DT_INIT): the firmware runs no module code before its entry");
      case DT_INIT_ARRAY: return fail(err, n_err, "module has initializers (DT_INIT_ARRAY, e.g. a constructor): the firmware runs no module code before its entry");
      case DT_PREINIT_ARRAY: return fail(err, n_err, "module has initializers (DT_PREINIT_ARRAY): the firmware runs no module code before its entry");
      case DT_FINI: return fail(err, n_err, "module has a finalizer (DT_FINI): the firmware runs no module code but its entry");
      case DT_FINI_ARRAY: return fail(err, n_err, "module has finalizers (DT_FINI_ARRAY, e.g. a destructor): the firmware runs no module code but its entry");
      case DT_TEXTREL: return fail(err, n_err, "module has text relocations (DT_TEXTREL): build it position-independent (-fPIC)");
      case DT_FLAGS:
        if (v & DF_TEXTREL) return fail(err, n_err, "module has text relocations (DF_TEXTREL): build it position-independent (-fPIC)");
        if (v & DF_STATIC_TLS) return fail(err, n_err, "module uses static thread-local storage (DF_STATIC_TLS)");
        break;
      case DT_REL: case DT_RELSZ: case DT_RELENT:
        return fail(err, n_err, "module has REL relocations (DT_REL, without addends): this loader applies RELA only");
      case DT_RELR: case DT_RELRSZ: case DT_RELRENT:
        return fail(err, n_err, "module has packed relative relocations (DT_RELR): link it without -z pack-relative-relocs");
      default: break; /* SONAME, SYMBOLIC, FLAGS_1, versions, RELACOUNT, PLTGOT, DEBUG: nothing to do */
    }
  }
  if (!have_null) return fail(err, n_err, "dynamic section has no DT_NULL end");
  if (!e->strtab || !e->symtab) return fail(err, n_err, "dynamic section has no %s", e->strtab ? "DT_SYMTAB" : "DT_STRTAB");
  if (syment != sizeof(Elf64_Sym)) return fail(err, n_err, "DT_SYMENT %llu, not %zu", (unsigned long long)syment, sizeof(Elf64_Sym));
  if (relaent != sizeof(Elf64_Rela)) return fail(err, n_err, "DT_RELAENT %llu, not %zu", (unsigned long long)relaent, sizeof(Elf64_Rela));
  if (have_jmprel && pltrel != DT_RELA) return fail(err, n_err, "DT_PLTREL %llu: PLT relocations must be RELA", (unsigned long long)pltrel);
  if (e->strsz == 0 || !file_at(e, e->strtab, e->strsz))
    return fail(err, n_err, "string table [0x%llx, +%llu) is not inside the file's loadable bytes",
                (unsigned long long)e->strtab, (unsigned long long)e->strsz);
  if (needed != UINT64_MAX) {
    const char *lib = name_at(e, needed);
    return fail(err, n_err, "module needs library %s (DT_NEEDED): only the firmware's exports resolve a module's symbols",
                lib ? lib : "(bad name)");
  }
  for (int t = 0; t < 2; t++)
    if (e->rela_size[t] % sizeof(Elf64_Rela) || (e->rela_size[t] && !file_at(e, e->rela[t], e->rela_size[t])))
      return fail(err, n_err, "%s table [0x%llx, +%llu) is not inside the file's loadable bytes (or not whole entries)",
                  t ? "DT_JMPREL" : "DT_RELA", (unsigned long long)e->rela[t], (unsigned long long)e->rela_size[t]);

  /* How many symbols: the hash table knows (the dynamic section does not). */
  if (hash) {
    const uint8_t *h = file_at(e, hash, 8);
    if (!h) return fail(err, n_err, "DT_HASH at 0x%llx is not inside the file's loadable bytes", (unsigned long long)hash);
    e->n_symbols = rd32(h + 4); /* nchain */
  } else if (gnu_hash) {
    const uint8_t *h = file_at(e, gnu_hash, 16);
    if (!h) return fail(err, n_err, "DT_GNU_HASH at 0x%llx is not inside the file's loadable bytes", (unsigned long long)gnu_hash);
    uint64_t nbuckets = rd32(h), symoffset = rd32(h + 4), bloom = rd32(h + 8);
    if (nbuckets > FW_ELF_MAX_SYMBOLS || bloom > FW_ELF_MAX_SYMBOLS || symoffset > FW_ELF_MAX_SYMBOLS)
      return fail(err, n_err, "DT_GNU_HASH: %llu buckets, %llu bloom words, symbol offset %llu: absurd sizes",
                  (unsigned long long)nbuckets, (unsigned long long)bloom, (unsigned long long)symoffset);
    uint64_t buckets = gnu_hash + 16 + bloom * 8, chains = buckets + nbuckets * 4;
    const uint8_t *bk = file_at(e, buckets, nbuckets * 4);
    if (!bk) return fail(err, n_err, "DT_GNU_HASH buckets are not inside the file's loadable bytes");
    uint64_t last = 0;
    for (uint64_t i = 0; i < nbuckets; i++)
      if (rd32(bk + 4 * i) > last) last = rd32(bk + 4 * i);
    if (last == 0) {
      e->n_symbols = symoffset;
    } else {
      if (last < symoffset) return fail(err, n_err, "DT_GNU_HASH: bucket names symbol %llu below the offset %llu",
                                        (unsigned long long)last, (unsigned long long)symoffset);
      for (;; last++) { /* the last chain ends at the last symbol */
        const uint8_t *c = last - symoffset < FW_ELF_MAX_SYMBOLS ? file_at(e, chains + (last - symoffset) * 4, 4) : NULL;
        if (!c) return fail(err, n_err, "DT_GNU_HASH chain runs outside the file's loadable bytes");
        if (rd32(c) & 1) break;
      }
      e->n_symbols = last + 1;
    }
  } else {
    return fail(err, n_err, "no symbol hash table (DT_HASH or DT_GNU_HASH): the symbol table's size is unknown");
  }
  if (e->n_symbols == 0 || e->n_symbols > FW_ELF_MAX_SYMBOLS ||
      !file_at(e, e->symtab, e->n_symbols * sizeof(Elf64_Sym)))
    return fail(err, n_err, "symbol table of %llu symbols at 0x%llx is not inside the file's loadable bytes",
                (unsigned long long)e->n_symbols, (unsigned long long)e->symtab);
  return FW_ELF_OK;
}

/* ---- symbols -------------------------------------------------------------- */

/* Every symbol: a name inside the string table, a kind this loader can
 * bind; every undefined one resolved (each asked once; the first missing
 * named in err). */
static int check_symbols(const fw_elf *e, fw_elf_resolve_fn resolve, void *ctx, char *err, size_t n_err) {
  int missing = 0;
  for (uint64_t k = 1; k < e->n_symbols; k++) {
    Elf64_Sym s;
    symbol_at(e, k, &s);
    const char *name = name_at(e, s.st_name);
    if (!name) return fail(err, n_err, "symbol %llu: name offset %u outside the %llu-byte string table",
                           (unsigned long long)k, s.st_name, (unsigned long long)e->strsz);
    int type = ELF64_ST_TYPE(s.st_info), bind = ELF64_ST_BIND(s.st_info);
    if (type == STT_GNU_IFUNC)
      return fail(err, n_err, "symbol '%s' is an IFUNC (its resolver is module code the loader would run)", name);
    if (type == STT_TLS) return fail(err, n_err, "symbol '%s' is thread-local (STT_TLS): not supported", name);
    if (s.st_shndx != SHN_UNDEF || !*name) continue;
    if (bind != STB_GLOBAL && bind != STB_WEAK)
      return fail(err, n_err, "symbol '%s' is undefined with binding %d", name, bind);
    uint64_t addr;
    if (resolve(ctx, name, &addr) != 0 && missing++ == 0)
      snprintf(err, n_err, "symbol '%s' is not exported", name);
  }
  return missing ? FW_ELF_ERR_SYMBOL : FW_ELF_OK;
}

int fw_elf_find(const fw_elf *e, const char *name, fw_elf_symbol *out) {
  for (uint64_t k = 1; k < e->n_symbols; k++) {
    Elf64_Sym s;
    if (symbol_at(e, k, &s) || s.st_shndx == SHN_UNDEF) continue;
    const char *n = name_at(e, s.st_name);
    if (!n || strcmp(n, name)) continue;
    out->vaddr = s.st_value;
    out->size = s.st_size;
    out->type = ELF64_ST_TYPE(s.st_info);
    out->flags = 0;
    fw_elf_in_segment(e, s.st_value, s.st_size ? s.st_size : 1, &out->flags);
    return 0;
  }
  return -1;
}

/* ---- relocations ---------------------------------------------------------- */

/* The value a relocation's symbol stands for: an export for an undefined
 * symbol, the module's own definition otherwise (never another module's:
 * modules are placed alone, as -Bsymbolic and RTLD_LOCAL would have it). */
static int symbol_value(const fw_elf *e, uint64_t index, uint64_t base, fw_elf_resolve_fn resolve, void *ctx,
                        uint64_t *value, char *err, size_t n_err) {
  Elf64_Sym s;
  if (index == 0 || symbol_at(e, index, &s) != 0)
    return fail(err, n_err, "symbol index %llu outside the %llu-symbol table", (unsigned long long)index,
                (unsigned long long)e->n_symbols);
  const char *name = name_at(e, s.st_name);
  if (!name) return fail(err, n_err, "symbol %llu: name outside the string table", (unsigned long long)index);
  if (s.st_shndx == SHN_UNDEF) {
    if (resolve(ctx, name, value) != 0) return fail(err, n_err, "symbol '%s' is not exported", name);
  } else if (s.st_shndx == SHN_ABS) {
    *value = s.st_value;
  } else {
    *value = base + s.st_value;
  }
  return FW_ELF_OK;
}

/* Check (mem NULL) or apply every relocation of both tables. */
static int relocate(const fw_elf *e, uint8_t *mem, fw_elf_resolve_fn resolve, void *ctx, char *err, size_t n_err) {
  const machine_rules *rules = rules_of(e->machine);
  uint64_t base = (uint64_t)(uintptr_t)mem - e->lo; /* vaddr v is at base + v (wraps: unsigned) */
  for (int t = 0; t < 2; t++) {
    const uint8_t *tab = e->rela_size[t] ? file_at(e, e->rela[t], e->rela_size[t]) : NULL;
    for (uint64_t k = 0; tab && k < e->rela_size[t] / sizeof(Elf64_Rela); k++) {
      Elf64_Rela r;
      memcpy(&r, tab + k * sizeof r, sizeof r);
      uint32_t type = (uint32_t)ELF64_R_TYPE(r.r_info);
      uint64_t sym = ELF64_R_SYM(r.r_info);
      const char *table = t ? "DT_JMPREL" : "DT_RELA";
      const reloc_kind *rk = kind_of(rules, type);
      if (!rk) return fail(err, n_err, "%s relocation %llu: type %u is unknown to this loader", table,
                           (unsigned long long)k, type);
      if (rk->kind == K_REFUSED)
        return fail(err, n_err, "%s relocation %llu: %s is not supported (only RELATIVE, GLOB_DAT, JUMP_SLOT and "
                    "64-bit absolute)", table, (unsigned long long)k, rk->name);
      if (rk->kind == K_NONE) continue;
      uint32_t flags = 0;
      if (!fw_elf_in_segment(e, r.r_offset, 8, &flags))
        return fail(err, n_err, "%s relocation %llu (%s) at 0x%llx is outside the module's segments", table,
                    (unsigned long long)k, rk->name, (unsigned long long)r.r_offset);
      if (!(flags & PF_W))
        return fail(err, n_err, "%s relocation %llu (%s) at 0x%llx is in a read-only segment (a text relocation)",
                    table, (unsigned long long)k, rk->name, (unsigned long long)r.r_offset);
      uint64_t value;
      if (rk->kind == K_RELATIVE) {
        value = base + (uint64_t)r.r_addend;
      } else {
        int s = symbol_value(e, sym, base, resolve, ctx, &value, err, n_err);
        if (s != FW_ELF_OK) {
          char why[200];
          snprintf(why, sizeof why, "%s", err);
          return fail(err, n_err, "%s relocation %llu (%s): %s", table, (unsigned long long)k, rk->name, why);
        }
        if (rk->kind == K_ABS64 || rules->slot_adds_addend) value += (uint64_t)r.r_addend;
      }
      if (mem) memcpy(mem + (r.r_offset - e->lo), &value, sizeof value);
    }
  }
  return FW_ELF_OK;
}

/* ---- the steps ------------------------------------------------------------- */

int fw_elf_parse(fw_elf *e, const void *file, size_t size, uint16_t machine, uint64_t page,
                 fw_elf_resolve_fn resolve, void *ctx, char *err, size_t n_err) {
  memset(e, 0, sizeof *e);
  e->file = (const uint8_t *)file;
  e->size = size;
  e->machine = machine;
  e->page = page;
  if (!rules_of(machine) || !is_pow2(page))
    return fail(err, n_err, "this loader has no rules for machine %u (%s) or page size %llu", machine,
                fw_elf_machine_name(machine), (unsigned long long)page);
  int s = parse_headers(e, err, n_err);
  if (s == FW_ELF_OK) s = check_symbols(e, resolve, ctx, err, n_err);
  if (s == FW_ELF_OK) s = relocate(e, NULL, resolve, ctx, err, n_err);
  return s;
}

int fw_elf_place(const fw_elf *e, uint8_t *mem, fw_elf_resolve_fn resolve, void *ctx, char *err, size_t n_err) {
  memset(mem, 0, (size_t)e->span);
  for (int i = 0; i < e->n_seg; i++) {
    const fw_elf_segment *s = &e->seg[i];
    memcpy(mem + (s->vaddr - e->lo), e->file + s->offset, (size_t)s->filesz);
  }
  return relocate(e, mem, resolve, ctx, err, n_err);
}

static int page_prot(const fw_elf *e, uint64_t page_vaddr) {
  uint32_t f = 0;
  for (int i = 0; i < e->n_seg; i++) {
    const fw_elf_segment *s = &e->seg[i];
    if (s->vaddr < page_vaddr + e->page && page_vaddr < s->vaddr + s->memsz) f |= s->flags;
  }
  /* RELRO: its whole pages, as ld.so rounds it */
  uint64_t rlo = e->relro_lo & ~(e->page - 1), rhi = e->relro_hi & ~(e->page - 1);
  if (e->relro_hi > e->relro_lo && page_vaddr >= rlo && page_vaddr < rhi && (f & PF_W))
    f = (f & ~(uint32_t)PF_W) | PF_R; /* still readable, whatever the flags said */
  int prot = PROT_NONE;
  if (f & PF_R) prot |= PROT_READ;
  if (f & PF_W) prot |= PROT_READ | PROT_WRITE;
  if (f & PF_X) prot |= PROT_EXEC | PROT_READ;
  return prot;
}

int fw_elf_protect(const fw_elf *e, uint8_t *mem, char *err, size_t n_err) {
  for (int i = 0; i < e->n_seg; i++)
    if (e->seg[i].flags & PF_X)
      __builtin___clear_cache((char *)mem + (e->seg[i].vaddr - e->lo),
                              (char *)mem + (e->seg[i].vaddr - e->lo) + e->seg[i].memsz);
  /* Runs of pages with the same permissions, one mprotect each. */
  uint64_t start = 0;
  int prot = page_prot(e, e->lo);
  for (uint64_t off = e->page; off <= e->span; off += e->page) {
    int next = off < e->span ? page_prot(e, e->lo + off) : -1;
    if (next == prot) continue;
    if (mprotect(mem + start, (size_t)(off - start), prot) != 0)
      return fail(err, n_err, "mprotect of the module's pages: %s", strerror(errno));
    start = off;
    prot = next;
  }
  return FW_ELF_OK;
}

int fw_elf_unprotect(uint8_t *mem, uint64_t span) {
  return mprotect(mem, (size_t)span, PROT_READ | PROT_WRITE) == 0 ? 0 : -1;
}
