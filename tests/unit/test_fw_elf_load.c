/*
 * The firmware's ELF loader (fw/elf_load.c) on modules built here byte by
 * byte, for x86-64 and AArch64 alike (the AArch64 ones are placed and
 * relocated, never run): every relocation kind it applies gives the value
 * its psABI says, the pages get their segments' permissions, and a corpus
 * of malformed or hostile variants is refused, each with its own message.
 *
 * The image (vaddr = file offset in the first two segments; the data
 * segment is placed 0x1000 above its file offset, with .bss after it):
 *
 *   0x000 ELF header, program headers   ┐
 *   0x200 .dynsym   0x300 .dynstr       │ PT_LOAD R   [0x0, 0x800)
 *   0x400 .hash / .gnu.hash             │
 *   0x500 .rela.dyn 0x600 .rela.plt     ┘
 *   0x1000 .text                          PT_LOAD R X [0x1000, 0x1100)
 *   0x2000 → 0x3000 .data.rel.ro, .got    PT_LOAD RW  [0x3000, 0x4000),
 *   0x2100 → 0x3100 .dynamic                 file bytes [0x2000, 0x2200)
 */
#define _GNU_SOURCE

#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf_load.h"
#include "unit.h"

enum {
  IMAGE = 0x2200,
  PHDRS = 0x40,
  DYNSYM = 0x200,
  DYNSTR = 0x300,
  HASH = 0x400,
  RELA = 0x500,
  JMPREL = 0x600,
  TEXT = 0x1000,
  DATA_OFF = 0x2000,
  DATA = 0x3000,
  DYNAMIC_OFF = 0x2100,
  DYNAMIC = 0x3100,
  N_RELA = 6,
  PAGE = 4096,
};

/* Program headers: */
enum { PH_R, PH_RX, PH_RW, PH_DYN, PH_RELRO, N_PHDRS };
/* Symbols: */
enum { S_NULL, S_QUANTIZE, S_MEMCPY, S_WEAK, S_ENTRY, S_DATA, N_SYMS };
/* Dynamic entries, in order; D_SPARE is DT_DEBUG, which cases replace. */
enum { D_HASH, D_STRTAB, D_STRSZ, D_SYMTAB, D_SYMENT, D_RELA, D_RELASZ, D_RELAENT, D_JMPREL, D_PLTRELSZ,
       D_PLTREL, D_SPARE, D_NULL, N_DYN };

/* The export table these modules see: three names. */
#define ADDR_QUANTIZE UINT64_C(0x00007f0000100000)
#define ADDR_MEMCPY UINT64_C(0x00007f0000200000)
#define ADDR_WEAK UINT64_C(0x00007f0000300000)

static int resolve(void *ctx, const char *name, uint64_t *addr) {
  int *asked = ctx;
  if (asked) (*asked)++;
  if (!strcmp(name, "tidsp_quantize")) *addr = ADDR_QUANTIZE;
  else if (!strcmp(name, "memcpy")) *addr = ADDR_MEMCPY;
  else if (!strcmp(name, "weak_thing")) *addr = ADDR_WEAK;
  else return -1;
  return 0;
}

typedef struct relocs {
  uint32_t relative, abs64, glob_dat, jump_slot, none;
} relocs;

static relocs relocs_of(uint16_t machine) {
  if (machine == EM_AARCH64)
    return (relocs){R_AARCH64_RELATIVE, R_AARCH64_ABS64, R_AARCH64_GLOB_DAT, R_AARCH64_JUMP_SLOT, R_AARCH64_NONE};
  return (relocs){R_X86_64_RELATIVE, R_X86_64_64, R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT, R_X86_64_NONE};
}

static void put(uint8_t *img, size_t off, const void *v, size_t n) { memcpy(img + off, v, n); }
static void put64(uint8_t *img, size_t off, uint64_t v) { put(img, off, &v, 8); }
static void put32(uint8_t *img, size_t off, uint32_t v) { put(img, off, &v, 4); }
static void put16(uint8_t *img, size_t off, uint16_t v) { put(img, off, &v, 2); }

static size_t phdr_at(int i) { return PHDRS + (size_t)i * sizeof(Elf64_Phdr); }
static size_t sym_at(int i) { return DYNSYM + (size_t)i * sizeof(Elf64_Sym); }
static size_t dyn_at(int i) { return DYNAMIC_OFF + (size_t)i * sizeof(Elf64_Dyn); }
static size_t rela_at(int i) { return RELA + (size_t)i * sizeof(Elf64_Rela); }

static void set_phdr(uint8_t *img, int i, uint32_t type, uint32_t flags, uint64_t off, uint64_t vaddr, uint64_t filesz,
                     uint64_t memsz, uint64_t align) {
  Elf64_Phdr ph = {type, flags, off, vaddr, vaddr, filesz, memsz, align};
  put(img, phdr_at(i), &ph, sizeof ph);
}

static void set_dyn(uint8_t *img, int i, int64_t tag, uint64_t val) {
  Elf64_Dyn d;
  d.d_tag = tag;
  d.d_un.d_val = val;
  put(img, dyn_at(i), &d, sizeof d);
}

static void set_rela(uint8_t *img, size_t off, uint64_t where, uint64_t sym, uint32_t type, int64_t addend) {
  Elf64_Rela r = {where, ELF64_R_INFO(sym, type), addend};
  put(img, off, &r, sizeof r);
}

/* dynstr: "\0tidsp_quantize\0memcpy\0weak_thing\0cg_main_dsp\0model_data\0libm.so.6\0" */
static const char dynstr[] = "\0tidsp_quantize\0memcpy\0weak_thing\0cg_main_dsp\0model_data\0libm.so.6";
enum { N_QUANTIZE = 1, N_MEMCPY = 16, N_WEAK = 23, N_ENTRY = 34, N_DATA = 46, N_LIBM = 57 };

static void set_sym(uint8_t *img, int i, uint32_t name, int bind, int type, uint16_t shndx, uint64_t value,
                    uint64_t size) {
  Elf64_Sym s = {name, (unsigned char)ELF64_ST_INFO(bind, type), 0, shndx, value, size};
  put(img, sym_at(i), &s, sizeof s);
}

/* The module, for machine; gnu_hash: DT_GNU_HASH instead of DT_HASH. */
static void build(uint8_t *img, uint16_t machine, int gnu_hash) {
  memset(img, 0, IMAGE);
  Elf64_Ehdr eh;
  memset(&eh, 0, sizeof eh);
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = PHDRS;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = N_PHDRS;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  put(img, 0, &eh, sizeof eh);
  set_phdr(img, PH_R, PT_LOAD, PF_R, 0, 0, 0x800, 0x800, PAGE);
  set_phdr(img, PH_RX, PT_LOAD, PF_R | PF_X, TEXT, TEXT, 0x100, 0x100, PAGE);
  set_phdr(img, PH_RW, PT_LOAD, PF_R | PF_W, DATA_OFF, DATA, 0x200, 0x1000, PAGE);
  set_phdr(img, PH_DYN, PT_DYNAMIC, PF_R | PF_W, DYNAMIC_OFF, DYNAMIC, N_DYN * sizeof(Elf64_Dyn),
           N_DYN * sizeof(Elf64_Dyn), 8);
  set_phdr(img, PH_RELRO, PT_GNU_RELRO, PF_R, DATA_OFF, DATA, 0x100, 0x100, 1);

  put(img, DYNSTR, dynstr, sizeof dynstr);
  set_sym(img, S_QUANTIZE, N_QUANTIZE, STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0, 0);
  set_sym(img, S_MEMCPY, N_MEMCPY, STB_GLOBAL, STT_FUNC, SHN_UNDEF, 0, 0);
  set_sym(img, S_WEAK, N_WEAK, STB_WEAK, STT_NOTYPE, SHN_UNDEF, 0, 0);
  set_sym(img, S_ENTRY, N_ENTRY, STB_GLOBAL, STT_FUNC, 7, TEXT, 0x10);
  set_sym(img, S_DATA, N_DATA, STB_GLOBAL, STT_OBJECT, 9, DATA + 0x40, 8);
  if (gnu_hash) { /* 1 bucket, the defined symbols hashed from index S_ENTRY */
    put32(img, HASH, 1);
    put32(img, HASH + 4, S_ENTRY);
    put32(img, HASH + 8, 1);
    put32(img, HASH + 12, 6);
    put64(img, HASH + 16, UINT64_MAX);
    put32(img, HASH + 24, S_ENTRY);
    put32(img, HASH + 28, 0x1234 & ~1u); /* chain of S_ENTRY: more follow */
    put32(img, HASH + 32, 0x5679 | 1u);  /* chain of S_DATA: the last */
  } else {
    put32(img, HASH, 1);
    put32(img, HASH + 4, N_SYMS);
  }
  const relocs r = relocs_of(machine);
  set_rela(img, rela_at(0), DATA + 0x00, 0, r.relative, 0x1000);
  set_rela(img, rela_at(1), DATA + 0x08, S_QUANTIZE, r.abs64, 8);
  set_rela(img, rela_at(2), DATA + 0x10, S_MEMCPY, r.glob_dat, 0x10);
  set_rela(img, rela_at(3), DATA + 0x18, S_ENTRY, r.abs64, 4);
  set_rela(img, rela_at(4), 0, 0, r.none, 0);
  set_rela(img, rela_at(5), DATA + 0x800, S_WEAK, r.glob_dat, 0); /* in .bss */
  set_rela(img, JMPREL, DATA + 0x20, S_QUANTIZE, r.jump_slot, 0);

  set_dyn(img, D_HASH, gnu_hash ? DT_GNU_HASH : DT_HASH, HASH);
  set_dyn(img, D_STRTAB, DT_STRTAB, DYNSTR);
  set_dyn(img, D_STRSZ, DT_STRSZ, sizeof dynstr);
  set_dyn(img, D_SYMTAB, DT_SYMTAB, DYNSYM);
  set_dyn(img, D_SYMENT, DT_SYMENT, sizeof(Elf64_Sym));
  set_dyn(img, D_RELA, DT_RELA, RELA);
  set_dyn(img, D_RELASZ, DT_RELASZ, N_RELA * sizeof(Elf64_Rela));
  set_dyn(img, D_RELAENT, DT_RELAENT, sizeof(Elf64_Rela));
  set_dyn(img, D_JMPREL, DT_JMPREL, JMPREL);
  set_dyn(img, D_PLTRELSZ, DT_PLTRELSZ, sizeof(Elf64_Rela));
  set_dyn(img, D_PLTREL, DT_PLTREL, DT_RELA);
  set_dyn(img, D_SPARE, DT_DEBUG, 0);
  set_dyn(img, D_NULL, DT_NULL, 0);
  for (int i = 0; i < 0x100; i++) img[TEXT + i] = (uint8_t)(0xC3 ^ i); /* text: never run */
  put64(img, DATA_OFF + 0x40, 0x0123456789abcdefu);                   /* model_data */
}

static _Alignas(PAGE) uint8_t placed[0x10000];

static uint64_t at(uint64_t vaddr) {
  uint64_t v;
  memcpy(&v, placed + vaddr, sizeof v);
  return v;
}

/* Parse, place and check every relocated word. */
static void test_relocations(uint16_t machine, int gnu_hash) {
  uint8_t img[IMAGE];
  build(img, machine, gnu_hash);
  fw_elf e;
  char err[256] = "";
  int asked = 0;
  int s = fw_elf_parse(&e, img, sizeof img, machine, PAGE, resolve, &asked, err, sizeof err);
  CHECK(asked >= 3); /* every undefined symbol, at least */
  CHECK_MSG(s == FW_ELF_OK, "%s%s: %s", fw_elf_machine_name(machine), gnu_hash ? " (GNU hash)" : "", err);
  if (s != FW_ELF_OK) return;
  CHECK(e.n_symbols == N_SYMS && e.n_seg == 3 && e.lo == 0 && e.span == 0x4000 && e.align == PAGE);
  CHECK(e.text_size == 0x100 && e.data_size == 0x800 + 0x1000);
  memset(placed, 0xAA, sizeof placed);
  CHECK(fw_elf_place(&e, placed, resolve, NULL, err, sizeof err) == FW_ELF_OK);
  uint64_t base = (uint64_t)(uintptr_t)placed;
  int aarch64 = machine == EM_AARCH64;
  CHECK_MSG(at(DATA + 0x00) == base + 0x1000, "RELATIVE: B + A");
  CHECK_MSG(at(DATA + 0x08) == ADDR_QUANTIZE + 8, "ABS64: S + A");
  /* GLOB_DAT: S on x86-64 (its psABI ignores the addend), S + A on AArch64 */
  CHECK_MSG(at(DATA + 0x10) == ADDR_MEMCPY + (aarch64 ? 0x10 : 0), "GLOB_DAT: %llx", (unsigned long long)at(DATA + 0x10));
  CHECK_MSG(at(DATA + 0x18) == base + TEXT + 4, "ABS64 of the module's own symbol: base + value + A");
  CHECK_MSG(at(DATA + 0x20) == ADDR_QUANTIZE, "JUMP_SLOT: bound now, to the export");
  CHECK_MSG(at(DATA + 0x800) == ADDR_WEAK, "GLOB_DAT into .bss");
  CHECK(at(DATA + 0x40) == 0x0123456789abcdefu && at(DATA + 0x808) == 0 && at(DATA + 0xff8) == 0); /* .bss zeroed */
  CHECK(placed[TEXT] == 0xC3 && placed[0x4000] == 0xAA); /* nothing past the span */
  CHECK(memcmp(placed + DYNSTR, dynstr, sizeof dynstr) == 0);
  CHECK(at(0x800) == 0 && at(0x2000) == 0); /* the gaps between segments */

  fw_elf_symbol sym;
  CHECK(fw_elf_find(&e, "cg_main_dsp", &sym) == 0 && sym.vaddr == TEXT && (sym.flags & PF_X) && sym.type == STT_FUNC);
  CHECK(fw_elf_find(&e, "model_data", &sym) == 0 && sym.vaddr == DATA + 0x40 && (sym.flags & PF_W));
  CHECK(fw_elf_find(&e, "memcpy", &sym) != 0); /* undefined: not the module's */
  CHECK(fw_elf_find(&e, "nothing", &sym) != 0);
  uint32_t f = 0;
  CHECK(fw_elf_in_segment(&e, DATA + 0xff8, 8, &f) && (f & PF_W));
  CHECK(!fw_elf_in_segment(&e, DATA + 0xffc, 8, &f) && !fw_elf_in_segment(&e, 0x900, 1, &f));
}

/* 0 when a child writing one byte at p survives, else the signal (the
 * default action: a sanitizer's handler would turn it into an exit). */
static int write_signal(volatile uint8_t *p) {
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL);
    *p = 1;
    _exit(0);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  return WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
}

static int read_signal(volatile uint8_t *p) {
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL);
    volatile uint8_t v = *p;
    (void)v;
    _exit(0);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  return WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
}

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#else
#define HOST_MACHINE EM_AARCH64
#endif

/* The host's module: its pages get their segments' permissions. */
static void test_protection(void) {
  const uint16_t host = HOST_MACHINE;
  uint8_t img[IMAGE];
  build(img, host, 0);
  /* RELRO over the whole first data page, so it turns read-only */
  set_phdr(img, PH_RELRO, PT_GNU_RELRO, PF_R, DATA_OFF, DATA, 0x1000, 0x1000, 1);
  set_phdr(img, PH_RW, PT_LOAD, PF_R | PF_W, DATA_OFF, DATA, 0x200, 0x2000, PAGE);
  fw_elf e;
  char err[256] = "";
  CHECK(fw_elf_parse(&e, img, sizeof img, host, PAGE, resolve, NULL, err, sizeof err) == FW_ELF_OK);
  CHECK(fw_elf_place(&e, placed, resolve, NULL, err, sizeof err) == FW_ELF_OK);
  CHECK_MSG(fw_elf_protect(&e, placed, err, sizeof err) == FW_ELF_OK, "%s", err);
  CHECK_MSG(write_signal(placed + TEXT) == SIGSEGV, "text is not writable");
  CHECK_MSG(read_signal(placed + TEXT) == 0, "text is readable");
  CHECK_MSG(write_signal(placed + DYNSTR) == SIGSEGV, "the read-only segment is not writable");
  CHECK_MSG(write_signal(placed + DATA) == SIGSEGV, "RELRO is read-only after relocation");
  CHECK_MSG(write_signal(placed + DATA + 0x1008) == 0, "data past RELRO stays writable");
  CHECK_MSG(read_signal(placed + 0x2000) == SIGSEGV, "a gap between segments is inaccessible");
  CHECK(fw_elf_unprotect(placed, e.span) == 0);
  placed[TEXT] = placed[DATA] = placed[0x2000] = 0; /* plain memory again */
}

/* ---- the corpus ------------------------------------------------------------ */

typedef void (*patch_fn)(uint8_t *img, size_t *size, uint16_t machine);

typedef struct bad_case {
  const char *name;
  patch_fn patch;
  const char *expect; /* in the message */
  int status;         /* FW_ELF_ERR_FORMAT or _SYMBOL */
} bad_case;

#define PATCH(name) static void name(uint8_t *img, size_t *size, uint16_t machine)
PATCH(truncated_header) { (void)img; (void)machine; *size = 40; }
PATCH(truncated_tables) { (void)img; (void)machine; *size = 0x700; }
PATCH(no_magic) { (void)size; (void)machine; img[1] = 'X'; }
PATCH(elf32) { (void)size; (void)machine; img[EI_CLASS] = ELFCLASS32; }
PATCH(big_endian) { (void)size; (void)machine; img[EI_DATA] = ELFDATA2MSB; }
PATCH(other_osabi) { (void)size; (void)machine; img[EI_OSABI] = 9; }
PATCH(other_machine) { (void)size; put16(img, offsetof(Elf64_Ehdr, e_machine), machine == EM_X86_64 ? EM_386 : EM_RISCV); }
PATCH(executable) { (void)size; (void)machine; put16(img, offsetof(Elf64_Ehdr, e_type), ET_EXEC); }
PATCH(phoff_outside) { (void)size; (void)machine; put64(img, offsetof(Elf64_Ehdr, e_phoff), UINT64_C(1) << 62); }
PATCH(no_phdrs) { (void)size; (void)machine; put16(img, offsetof(Elf64_Ehdr, e_phnum), 0); }
PATCH(phentsize) { (void)size; (void)machine; put16(img, offsetof(Elf64_Ehdr, e_phentsize), 32); }
PATCH(segment_outside_file) { (void)size; (void)machine; put64(img, phdr_at(PH_RX) + offsetof(Elf64_Phdr, p_offset), 0x10000); }
PATCH(filesz_over_memsz) { (void)size; (void)machine; put64(img, phdr_at(PH_RX) + offsetof(Elf64_Phdr, p_memsz), 0x80); }
PATCH(absurd_memsz) { (void)size; (void)machine; put64(img, phdr_at(PH_RW) + offsetof(Elf64_Phdr, p_memsz), UINT64_C(1) << 50); }
PATCH(overlapping) { (void)size; (void)machine; put64(img, phdr_at(PH_RW) + offsetof(Elf64_Phdr, p_vaddr), TEXT + 0x80); }
PATCH(wx_segment) { (void)size; (void)machine; put32(img, phdr_at(PH_RW) + offsetof(Elf64_Phdr, p_flags), PF_R | PF_W | PF_X); }
PATCH(wx_page) {
  (void)size;
  (void)machine;
  put64(img, phdr_at(PH_RW) + offsetof(Elf64_Phdr, p_vaddr), TEXT + 0x800);
  put64(img, phdr_at(PH_RELRO) + offsetof(Elf64_Phdr, p_vaddr), TEXT + 0x800);
}
PATCH(bad_align) { (void)size; (void)machine; put64(img, phdr_at(PH_RX) + offsetof(Elf64_Phdr, p_align), 3); }
PATCH(huge_align) { (void)size; (void)machine; put64(img, phdr_at(PH_RX) + offsetof(Elf64_Phdr, p_align), UINT64_C(1) << 30); }
PATCH(tls) { (void)size; (void)machine; put32(img, phdr_at(PH_RELRO), PT_TLS); }
PATCH(interp) { (void)size; (void)machine; put32(img, phdr_at(PH_RELRO), PT_INTERP); }
PATCH(no_dynamic) { (void)size; (void)machine; put32(img, phdr_at(PH_DYN), PT_NOTE); }
PATCH(dynamic_elsewhere) { (void)size; (void)machine; put64(img, phdr_at(PH_DYN) + offsetof(Elf64_Phdr, p_vaddr), 0x9000); }
PATCH(relro_readonly) { (void)size; (void)machine; put64(img, phdr_at(PH_RELRO) + offsetof(Elf64_Phdr, p_vaddr), TEXT); }
PATCH(needed) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_NEEDED, N_LIBM); }
PATCH(init) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_INIT, TEXT); }
PATCH(init_array) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_INIT_ARRAY, DATA); }
PATCH(preinit_array) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_PREINIT_ARRAY, DATA); }
PATCH(fini) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_FINI, TEXT); }
PATCH(fini_array) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_FINI_ARRAY, DATA); }
PATCH(textrel) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_TEXTREL, 0); }
PATCH(flags_textrel) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_FLAGS, DF_TEXTREL); }
PATCH(rel) { (void)size; (void)machine; set_dyn(img, D_SPARE, DT_REL, RELA); }
PATCH(relr) { (void)size; (void)machine; set_dyn(img, D_SPARE, 36 /* DT_RELR */, RELA); }
PATCH(no_null) { (void)size; (void)machine; set_dyn(img, D_NULL, DT_DEBUG, 0); }
PATCH(no_symtab) { (void)size; (void)machine; set_dyn(img, D_SYMTAB, DT_DEBUG, 0); }
PATCH(syment) { (void)size; (void)machine; set_dyn(img, D_SYMENT, DT_SYMENT, 16); }
PATCH(relaent) { (void)size; (void)machine; set_dyn(img, D_RELAENT, DT_RELAENT, 16); }
PATCH(pltrel_rel) { (void)size; (void)machine; set_dyn(img, D_PLTREL, DT_PLTREL, DT_REL); }
PATCH(no_hash) { (void)size; (void)machine; set_dyn(img, D_HASH, DT_DEBUG, 0); }
PATCH(hash_outside) { (void)size; (void)machine; set_dyn(img, D_HASH, DT_HASH, 0x7fc); }
PATCH(nchain_huge) { (void)size; (void)machine; put32(img, HASH + 4, 40000); }
PATCH(strsz_huge) { (void)size; (void)machine; set_dyn(img, D_STRSZ, DT_STRSZ, UINT64_C(1) << 40); }
PATCH(relasz_partial) { (void)size; (void)machine; set_dyn(img, D_RELASZ, DT_RELASZ, 5 * sizeof(Elf64_Rela) + 4); }
PATCH(relasz_outside) { (void)size; (void)machine; set_dyn(img, D_RELASZ, DT_RELASZ, 0x100 * sizeof(Elf64_Rela)); }
PATCH(unknown_reloc) { (void)size; (void)machine; set_rela(img, rela_at(1), DATA + 8, S_QUANTIZE, 200, 0); }
PATCH(pc32_reloc) { (void)size; set_rela(img, rela_at(1), DATA + 8, S_QUANTIZE, machine == EM_X86_64 ? R_X86_64_PC32 : R_AARCH64_PREL32, 0); }
PATCH(copy_reloc) { (void)size; set_rela(img, rela_at(1), DATA + 8, S_QUANTIZE, machine == EM_X86_64 ? R_X86_64_COPY : R_AARCH64_COPY, 0); }
PATCH(irelative) { (void)size; set_rela(img, JMPREL, DATA + 0x20, 0, machine == EM_X86_64 ? R_X86_64_IRELATIVE : R_AARCH64_IRELATIVE, TEXT); }
PATCH(tls_reloc) { (void)size; set_rela(img, rela_at(1), DATA + 8, S_QUANTIZE, machine == EM_X86_64 ? R_X86_64_TPOFF64 : R_AARCH64_TLS_TPREL, 0); }
PATCH(target_outside) { (void)size; set_rela(img, rela_at(0), UINT64_C(0x100000), 0, relocs_of(machine).relative, 0); }
PATCH(target_straddles) { (void)size; set_rela(img, rela_at(0), DATA + 0xffc, 0, relocs_of(machine).relative, 0); }
PATCH(target_text) { (void)size; set_rela(img, rela_at(0), TEXT + 8, 0, relocs_of(machine).relative, 0); }
PATCH(target_rodata) { (void)size; set_rela(img, JMPREL, DYNSTR, S_QUANTIZE, relocs_of(machine).jump_slot, 0); }
PATCH(sym_index) { (void)size; set_rela(img, rela_at(2), DATA + 0x10, 99, relocs_of(machine).glob_dat, 0); }
PATCH(sym_zero) { (void)size; set_rela(img, rela_at(2), DATA + 0x10, 0, relocs_of(machine).glob_dat, 0); }
PATCH(sym_name) { (void)size; (void)machine; put32(img, sym_at(S_DATA), 5000); }
PATCH(not_exported) { (void)size; (void)machine; img[DYNSTR + N_MEMCPY + 5] = 'X'; }
PATCH(ifunc) { (void)size; (void)machine; img[sym_at(S_ENTRY) + 4] = ELF64_ST_INFO(STB_GLOBAL, STT_GNU_IFUNC); }
PATCH(tls_symbol) { (void)size; (void)machine; img[sym_at(S_DATA) + 4] = ELF64_ST_INFO(STB_GLOBAL, STT_TLS); }
PATCH(local_undefined) { (void)size; (void)machine; img[sym_at(S_MEMCPY) + 4] = ELF64_ST_INFO(STB_LOCAL, STT_FUNC); }

static const bad_case corpus[] = {
    {"truncated header", truncated_header, "shorter than the 64-byte ELF header", FW_ELF_ERR_FORMAT},
    {"truncated tables", truncated_tables, "segment 0: file bytes [0, +2048) outside the 1792-byte file", FW_ELF_ERR_FORMAT},
    {"no magic", no_magic, "no ELF magic", FW_ELF_ERR_FORMAT},
    {"32-bit", elf32, "not a 64-bit little-endian ELF", FW_ELF_ERR_FORMAT},
    {"big-endian", big_endian, "data 2", FW_ELF_ERR_FORMAT},
    {"OS ABI", other_osabi, "OS ABI 9", FW_ELF_ERR_FORMAT},
    {"machine", other_machine, "this firmware loads machine", FW_ELF_ERR_FORMAT},
    {"ET_EXEC", executable, "ELF type 2 is not a loadable module", FW_ELF_ERR_FORMAT},
    {"phoff", phoff_outside, "program headers at offset 4611686018427387904", FW_ELF_ERR_FORMAT},
    {"no phdrs", no_phdrs, "0 program headers", FW_ELF_ERR_FORMAT},
    {"phentsize", phentsize, "program header size 32", FW_ELF_ERR_FORMAT},
    {"segment outside the file", segment_outside_file, "segment 1: file bytes [65536, +256) outside", FW_ELF_ERR_FORMAT},
    {"filesz > memsz", filesz_over_memsz, "256 file bytes in 128 bytes of memory", FW_ELF_ERR_FORMAT},
    {"absurd memsz", absurd_memsz, "absurd size or address", FW_ELF_ERR_FORMAT},
    {"overlapping segments", overlapping, "overlaps (or precedes) the segment before it", FW_ELF_ERR_FORMAT},
    {"W+X segment", wx_segment, "segment 2 is writable and executable", FW_ELF_ERR_FORMAT},
    {"W+X page", wx_page, "share a page, one writable, one executable", FW_ELF_ERR_FORMAT},
    {"alignment 3", bad_align, "alignment 3 (a power of two", FW_ELF_ERR_FORMAT},
    {"alignment 1 GiB", huge_align, "alignment 1073741824", FW_ELF_ERR_FORMAT},
    {"PT_TLS", tls, "thread-local storage (PT_TLS)", FW_ELF_ERR_FORMAT},
    {"PT_INTERP", interp, "program interpreter (PT_INTERP)", FW_ELF_ERR_FORMAT},
    {"no PT_DYNAMIC", no_dynamic, "no dynamic segment", FW_ELF_ERR_FORMAT},
    {"dynamic elsewhere", dynamic_elsewhere, "dynamic segment at 0x9000 is not inside a loadable segment", FW_ELF_ERR_FORMAT},
    {"RELRO in text", relro_readonly, "PT_GNU_RELRO [0x1000, 0x1100) is not inside a writable segment", FW_ELF_ERR_FORMAT},
    {"DT_NEEDED", needed, "needs library libm.so.6 (DT_NEEDED)", FW_ELF_ERR_FORMAT},
    {"DT_INIT", init, "initializer (DT_INIT)", FW_ELF_ERR_FORMAT},
    {"DT_INIT_ARRAY", init_array, "initializers (DT_INIT_ARRAY", FW_ELF_ERR_FORMAT},
    {"DT_PREINIT_ARRAY", preinit_array, "(DT_PREINIT_ARRAY)", FW_ELF_ERR_FORMAT},
    {"DT_FINI", fini, "finalizer (DT_FINI)", FW_ELF_ERR_FORMAT},
    {"DT_FINI_ARRAY", fini_array, "finalizers (DT_FINI_ARRAY", FW_ELF_ERR_FORMAT},
    {"DT_TEXTREL", textrel, "text relocations (DT_TEXTREL)", FW_ELF_ERR_FORMAT},
    {"DF_TEXTREL", flags_textrel, "text relocations (DF_TEXTREL)", FW_ELF_ERR_FORMAT},
    {"DT_REL", rel, "REL relocations (DT_REL", FW_ELF_ERR_FORMAT},
    {"DT_RELR", relr, "packed relative relocations (DT_RELR)", FW_ELF_ERR_FORMAT},
    {"no DT_NULL", no_null, "no DT_NULL end", FW_ELF_ERR_FORMAT},
    {"no DT_SYMTAB", no_symtab, "has no DT_SYMTAB", FW_ELF_ERR_FORMAT},
    {"DT_SYMENT", syment, "DT_SYMENT 16", FW_ELF_ERR_FORMAT},
    {"DT_RELAENT", relaent, "DT_RELAENT 16", FW_ELF_ERR_FORMAT},
    {"DT_PLTREL", pltrel_rel, "PLT relocations must be RELA", FW_ELF_ERR_FORMAT},
    {"no hash", no_hash, "no symbol hash table", FW_ELF_ERR_FORMAT},
    {"hash outside", hash_outside, "DT_HASH at 0x7fc is not inside", FW_ELF_ERR_FORMAT},
    {"nchain huge", nchain_huge, "symbol table of 40000 symbols", FW_ELF_ERR_FORMAT},
    {"DT_STRSZ huge", strsz_huge, "string table [0x300, +1099511627776)", FW_ELF_ERR_FORMAT},
    {"DT_RELASZ partial", relasz_partial, "DT_RELA table [0x500, +124)", FW_ELF_ERR_FORMAT},
    {"DT_RELASZ outside", relasz_outside, "DT_RELA table [0x500, +6144)", FW_ELF_ERR_FORMAT},
    {"unknown relocation", unknown_reloc, "DT_RELA relocation 1: type 200 is unknown", FW_ELF_ERR_FORMAT},
    {"PC-relative relocation", pc32_reloc, "32 is not supported", FW_ELF_ERR_FORMAT},
    {"COPY relocation", copy_reloc, "_COPY is not supported", FW_ELF_ERR_FORMAT},
    {"IRELATIVE", irelative, "DT_JMPREL relocation 0: R_", FW_ELF_ERR_FORMAT},
    {"TLS relocation", tls_reloc, "is not supported (only RELATIVE", FW_ELF_ERR_FORMAT},
    {"relocation outside", target_outside, "at 0x100000 is outside the module's segments", FW_ELF_ERR_FORMAT},
    {"relocation straddles", target_straddles, "at 0x3ffc is outside the module's segments", FW_ELF_ERR_FORMAT},
    {"relocation in text", target_text, "at 0x1008 is in a read-only segment", FW_ELF_ERR_FORMAT},
    {"relocation in rodata", target_rodata, "at 0x300 is in a read-only segment", FW_ELF_ERR_FORMAT},
    {"symbol index", sym_index, "symbol index 99 outside the 6-symbol table", FW_ELF_ERR_FORMAT},
    {"symbol 0", sym_zero, "symbol index 0 outside", FW_ELF_ERR_FORMAT},
    {"symbol name", sym_name, "symbol 5: name offset 5000 outside", FW_ELF_ERR_FORMAT},
    {"not exported", not_exported, "symbol 'memcpX' is not exported", FW_ELF_ERR_SYMBOL},
    {"IFUNC", ifunc, "'cg_main_dsp' is an IFUNC", FW_ELF_ERR_FORMAT},
    {"TLS symbol", tls_symbol, "'model_data' is thread-local", FW_ELF_ERR_FORMAT},
    {"local undefined", local_undefined, "'memcpy' is undefined with binding 0", FW_ELF_ERR_FORMAT},
};

static void test_corpus(uint16_t machine) {
  size_t n = sizeof corpus / sizeof corpus[0];
  char seen[sizeof corpus / sizeof corpus[0]][256];
  for (size_t i = 0; i < n; i++) {
    uint8_t img[IMAGE];
    size_t size = sizeof img;
    build(img, machine, 0);
    corpus[i].patch(img, &size, machine);
    fw_elf e;
    char err[256] = "";
    int s = fw_elf_parse(&e, img, size, machine, PAGE, resolve, NULL, err, sizeof err);
    CHECK_MSG(s == corpus[i].status && strstr(err, corpus[i].expect), "%s, %s: status %d, message '%s' (want '%s')",
              fw_elf_machine_name(machine), corpus[i].name, s, err, corpus[i].expect);
    snprintf(seen[i], sizeof seen[i], "%s", err);
    /* each gets its own message */
    size_t same = i;
    for (size_t j = 0; j < i; j++)
      if (!strcmp(seen[i], seen[j])) same = j;
    CHECK_MSG(same == i, "%s and %s: the same message '%s'", corpus[i].name, corpus[same].name, err);
  }
  /* And the loader is unchanged by what it refused: the good image loads. */
  uint8_t img[IMAGE];
  build(img, machine, 0);
  fw_elf e;
  char err[256] = "";
  CHECK(fw_elf_parse(&e, img, sizeof img, machine, PAGE, resolve, NULL, err, sizeof err) == FW_ELF_OK);
}

/* A GNU hash whose bucket names a symbol below symoffset, and whose last
 * chain never ends. */
static void test_gnu_hash_bounds(void) {
  uint8_t img[IMAGE];
  fw_elf e;
  char err[256];
  build(img, EM_AARCH64, 1);
  put32(img, HASH + 24, 1);
  CHECK(fw_elf_parse(&e, img, sizeof img, EM_AARCH64, PAGE, resolve, NULL, err, sizeof err) == FW_ELF_ERR_FORMAT &&
        strstr(err, "bucket names symbol 1 below the offset 4"));
  build(img, EM_AARCH64, 1);
  for (size_t off = HASH + 28; off < 0x800; off += 4) put32(img, off, 0); /* no end bit anywhere */
  CHECK(fw_elf_parse(&e, img, sizeof img, EM_AARCH64, PAGE, resolve, NULL, err, sizeof err) == FW_ELF_ERR_FORMAT &&
        strstr(err, "chain runs outside"));
}

/* A module of the other machine is refused by the loader of this one. */
static void test_machine_mismatch(void) {
  uint8_t img[IMAGE];
  fw_elf e;
  char err[256];
  build(img, EM_AARCH64, 0);
  CHECK(fw_elf_parse(&e, img, sizeof img, EM_X86_64, PAGE, resolve, NULL, err, sizeof err) == FW_ELF_ERR_FORMAT &&
        strstr(err, "ELF machine 183 (AArch64); this firmware loads machine 62 (x86-64)"));
  CHECK(fw_elf_parse(&e, img, sizeof img, EM_RISCV, PAGE, resolve, NULL, err, sizeof err) == FW_ELF_ERR_FORMAT &&
        strstr(err, "no rules for machine 243"));
}

int main(void) {
  test_relocations(EM_X86_64, 0);
  test_relocations(EM_X86_64, 1);
  test_relocations(EM_AARCH64, 0);
  test_relocations(EM_AARCH64, 1);
  test_protection();
  test_corpus(EM_X86_64);
  test_corpus(EM_AARCH64);
  test_gnu_hash_bounds();
  test_machine_mismatch();
  UNIT_MAIN_END();
}
