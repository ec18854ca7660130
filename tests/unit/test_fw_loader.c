/*
 * The firmware's DYN_LOAD / DYN_UNLOAD with real modules (`cstatic compile
 * --emit=module` of the bundled digits model, three builds), through
 * fw_handle_message as a client drives it:
 *
 * - a module loads, runs and unloads; its handles are 64 random bits, and
 *   the handles next to a live one name nothing (INFER, DYN_INFO,
 *   DYN_UNLOAD all fail with C7X_ERR_HANDLE, the module stays);
 * - 1000 load/unload cycles of the mixed modules leave both pools exactly
 *   as they were;
 * - a heap too small, or too full, is refused naming both sizes;
 * - a corpus of malformed variants of a real module (truncated, bad
 *   offsets, overlapping segments, unknown relocation, relocation outside
 *   the image, symbol not exported, initializers, bad indices, corrupt
 *   weights, ...) each gets its own error, and the next request is served;
 * - a profiled module whose layer table points a name, module, output or
 *   kernel string outside the module is refused naming the layer and string;
 * - one-byte mutations of a real module (CS_FW_MUTATIONS of them, default
 *   10 000, from seed CS_FW_MUTATION_SEED; the slow e2e set runs 100 000)
 *   are each loaded or refused, never a crash, and leave the pools as they
 *   were; a byte the loader never reads never makes it refuse.
 */
#define _GNU_SOURCE /* mkdtemp */

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "fw.h"
#include "unit.h"

#ifndef CS_CSTATIC_BIN
#error "CS_CSTATIC_BIN: the cstatic CLI that builds the test modules (CMakeLists.txt)"
#endif

enum { DDR_SIZE = 8 << 20, L2_SIZE = 64 << 10, STAGING = 1 << 20, RESULT = 64 << 10, N_MODULES = 3 };

static _Alignas(4096) uint8_t ddr[DDR_SIZE];
static _Alignas(4096) uint8_t l2[L2_SIZE];
static _Alignas(4096) uint8_t shared[STAGING + RESULT];
static fw_state st;
static char tmp_dir[64];

typedef struct module_image {
  uint8_t *bytes;
  size_t size;
} module_image;

static module_image read_file(const char *path) {
  module_image img = {NULL, 0};
  FILE *f = fopen(path, "rb");
  if (!f) return img;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  img.bytes = malloc(n > 0 ? (size_t)n : 1);
  if (img.bytes && n > 0 && fread(img.bytes, 1, (size_t)n, f) == (size_t)n) img.size = (size_t)n;
  fclose(f);
  return img;
}

/* cstatic compile the digits model for target into tmp_dir/name. */
static module_image build_module(const char *name, const char *target) {
  char cmd[2048], path[512], src_dir[512];
  snprintf(src_dir, sizeof src_dir, "%s", __FILE__);
  char *cut = strstr(src_dir, "/tests/unit/");
  if (cut) *cut = '\0';
  else snprintf(src_dir, sizeof src_dir, ".");
  snprintf(cmd, sizeof cmd, "'%s' compile '%s/examples/digits/digits_int8.onnx' -o '%s/%s' -t '%s' --emit=module -q",
           CS_CSTATIC_BIN, src_dir, tmp_dir, name, target);
  int rc = system(cmd);
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) return (module_image){NULL, 0};
  snprintf(path, sizeof path, "%s/%s/lib0.out", tmp_dir, name);
  return read_file(path);
}

/* ---- requests ----------------------------------------------------------- */

static uint8_t resp[C7X_MSG_MAX];
static uint32_t seq;

static c7x_msg_header request(uint32_t type, const void *body, size_t body_len) {
  uint8_t req[C7X_MSG_MAX];
  c7x_msg_header h = {type, ++seq, (uint32_t)(sizeof h + body_len), 0};
  memcpy(req, &h, sizeof h);
  if (body_len) memcpy(req + sizeof h, body, body_len);
  int fd;
  size_t n = fw_handle_message(&st, req, sizeof h + body_len, resp, &fd);
  c7x_msg_header r;
  memcpy(&r, resp, sizeof r);
  if (n != r.len || r.seq != seq) CHECK(!"response framing");
  return r;
}

static const char *message(void) { return (const char *)resp + sizeof(c7x_msg_header); }

/* DYN_LOAD size bytes; the handle, or 0 with the status in *status. */
static uint64_t load_bytes(const uint8_t *bytes, size_t size, int32_t *status) {
  c7x_dyn_load_req q;
  memset(&q, 0, sizeof q);
  q.elf_size = (uint32_t)size;
  memcpy(shared, bytes, size);
  c7x_msg_header r = request(C7X_MSG_DYN_LOAD, &q, sizeof q);
  *status = r.status;
  if (r.status != C7X_OK) return 0;
  c7x_dyn_load_resp p;
  memcpy(&p, resp + sizeof r, sizeof p);
  return p.handle;
}

static uint64_t load(const module_image *img, int32_t *status) { return load_bytes(img->bytes, img->size, status); }

static int32_t unload(uint64_t handle) {
  c7x_handle_req q = {handle, 0, 0};
  return request(C7X_MSG_DYN_UNLOAD, &q, sizeof q).status;
}

static int32_t info(uint64_t handle) {
  c7x_handle_req q = {handle, 0, 0};
  return request(C7X_MSG_DYN_INFO, &q, sizeof q).status;
}

/* INFER with the digits model's one input (float32[1,1,8,8]) from the
 * start of the staging buffer. */
static int32_t infer(uint64_t handle) {
  uint8_t body[sizeof(c7x_infer_req) + sizeof(c7x_wire_tensor)];
  c7x_infer_req q = {handle, 0, 1, 0, 0};
  c7x_wire_tensor w;
  memset(&w, 0, sizeof w);
  w.data_addr = C7X_STAGING_ADDR;
  w.size = 256;
  w.ndim = 4;
  w.dtype_code = 2;
  w.dtype_bits = 32;
  int64_t shape[4] = {1, 1, 8, 8};
  memcpy(w.shape, shape, sizeof shape);
  for (int i = 0; i < 64; i++) {
    float v = (float)(i % 17) / 4.0f;
    memcpy(shared + 4 * i, &v, 4);
  }
  memcpy(body, &q, sizeof q);
  memcpy(body + sizeof q, &w, sizeof w);
  return request(C7X_MSG_INFER, body, sizeof body).status;
}

static int pools_as_at_start(void) {
  return st.ddr.n_blocks == 1 && !st.ddr.blocks[0].used && st.ddr.blocks[0].size == DDR_SIZE &&
         st.l2.n_blocks == 1 && !st.l2.blocks[0].used && st.l2.blocks[0].size == L2_SIZE;
}

static int loaded_count(void) {
  int n = 0;
  for (int i = 0; i < FW_MAX_MODULES; i++) n += st.modules[i].handle != 0;
  return n;
}

/* ---- a real module, loaded --------------------------------------------- */

static void test_load_run_unload(const module_image *m) {
  int32_t s;
  uint64_t h = load(m, &s);
  CHECK_MSG(h != 0, "load: status %d: %s", s, message());
  if (!h) return;
  fw_module *fm = fw_module_find(&st, h);
  CHECK(fm && !strcmp(fm->desc.name, "main_graph") && fm->desc.n_inputs == 1 && fm->desc.n_outputs == 1);
  CHECK(fm && !strcmp(fm->desc.inputs[0].name, fm->tensor_names[0]) && fm->desc.outputs[0].nbytes == 40);
  CHECK(fm && (uint8_t *)fm->image >= ddr && (uint8_t *)fm->image + fm->image_span <= ddr + DDR_SIZE);
  CHECK(fm && fm->weights && (const uint8_t *)fm->weights > fm->image &&
        (const uint8_t *)fm->weights < fm->image + fm->image_span && !memcmp(fm->weights, "CSWB", 4));
  CHECK(fm && (uint8_t *)(uintptr_t)fm->entry > fm->image && (uint8_t *)(uintptr_t)fm->entry < fm->image + fm->image_span);
  CHECK(info(h) == C7X_OK);
  CHECK_MSG(infer(h) == C7X_OK, "infer: %s", message());
  /* ten probabilities-like floats (the digits model's dequantized scores) */
  float y[10];
  memcpy(y, shared + STAGING, sizeof y);
  int finite = 1;
  for (int i = 0; i < 10; i++) finite &= y[i] == y[i] && y[i] > -1e6f && y[i] < 1e6f;
  CHECK(finite);
  CHECK(unload(h) == C7X_OK);
  CHECK(unload(h) == C7X_ERR_HANDLE && infer(h) == C7X_ERR_HANDLE);
  CHECK(pools_as_at_start());
}

/* Handles: distinct, never 0, spread over 64 bits; a live handle's
 * neighbours name nothing, and trying them harms nothing. */
static void test_handles(const module_image *m) {
  enum { N = 64 };
  uint64_t hs[N];
  int32_t s;
  int ok = 1;
  for (int i = 0; i < N && ok; i++) {
    hs[i] = load(m, &s);
    ok = hs[i] != 0;
    if (ok) ok = unload(hs[i]) == C7X_OK;
  }
  CHECK_MSG(ok, "status %d: %s", s, message());
  int distinct = 1, high = 0;
  for (int i = 0; i < N; i++) {
    high += hs[i] >> 63; /* about half have the top bit */
    for (int j = 0; j < i; j++) distinct &= hs[i] != hs[j];
  }
  CHECK(distinct && high > 8 && high < N - 8);

  uint64_t h = load(m, &s), h2 = load(m, &s);
  CHECK(h && h2);
  const uint64_t near[] = {h + 1, h - 1, h + 2, h - 2, h ^ 1, h ^ (UINT64_C(1) << 63), h2 + 1, h2 - 1, 0, UINT64_MAX,
                           (h & 0xffffffffu), h >> 32};
  int refused = 0;
  for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
    if (near[i] == h || near[i] == h2) continue;
    refused += info(near[i]) == C7X_ERR_HANDLE && strstr(message(), "no module with handle");
    refused += infer(near[i]) == C7X_ERR_HANDLE;
    refused += unload(near[i]) == C7X_ERR_HANDLE;
  }
  CHECK(refused == 3 * (int)(sizeof near / sizeof near[0]));
  CHECK(loaded_count() == 2 && infer(h) == C7X_OK && infer(h2) == C7X_OK);
  CHECK(unload(h) == C7X_OK && unload(h2) == C7X_OK && pools_as_at_start());
}

/* 1000 cycles: a seeded walk that loads one of the three modules or
 * unloads a random loaded one (up to 12 at once), running some; then
 * everything is unloaded and the pools are exactly as before. */
static void test_cycles(const module_image *mods) {
  uint64_t live[12];
  int n_live = 0, loads = 0, bad = 0;
  uint32_t rng = 12345;
  for (int k = 0; k < 1000; k++) {
    rng = rng * 1664525u + 1013904223u;
    int do_load = n_live == 0 || (n_live < 12 && (rng >> 16) % 3 != 0);
    if (do_load) {
      int32_t s;
      uint64_t h = load(&mods[(rng >> 8) % N_MODULES], &s);
      if (!h) {
        bad++;
        continue;
      }
      live[n_live++] = h;
      loads++;
      if ((rng >> 20) % 5 == 0) bad += infer(h) != C7X_OK;
    } else {
      int i = (int)((rng >> 12) % (uint32_t)n_live);
      bad += unload(live[i]) != C7X_OK;
      live[i] = live[--n_live];
    }
  }
  while (n_live) bad += unload(live[--n_live]) != C7X_OK;
  CHECK_MSG(bad == 0, "%d failed requests in the cycles", bad);
  CHECK(loads > 500);
  CHECK_MSG(pools_as_at_start(), "DDR heap: %d blocks, %zu of %zu free", st.ddr.n_blocks, fw_pool_free_bytes(&st.ddr),
            st.ddr.size);
}

/* A heap smaller than the module, and a heap filled by modules. */
static void test_heap_too_small(const module_image *m) {
  static _Alignas(4096) uint8_t small[16384];
  fw_state keep = st;
  fw_state_init(&st, small, sizeof small, l2, sizeof l2, shared, STAGING, RESULT, -1);
  int32_t s;
  CHECK(load(m, &s) == 0 && s == C7X_ERR_NOMEM);
  CHECK_MSG(strstr(message(), "DDR heap: the module needs 28672 bytes, largest free block is 16384 of 16384"),
            "%s", message());
  CHECK(st.ddr.n_blocks == 1 && fw_pool_free_bytes(&st.ddr) == sizeof small);
  st = keep;

  uint64_t hs[FW_MAX_MODULES];
  int n = 0;
  static _Alignas(4096) uint8_t medium[5 * 32768];
  fw_state_init(&st, medium, sizeof medium, l2, sizeof l2, shared, STAGING, RESULT, -1);
  while (n < FW_MAX_MODULES && (hs[n] = load(m, &s)) != 0) n++;
  CHECK(n >= 4 && n < FW_MAX_MODULES && s == C7X_ERR_NOMEM);
  char want[96];
  snprintf(want, sizeof want, "(%zu free)", fw_pool_free_bytes(&st.ddr));
  CHECK_MSG(strstr(message(), "DDR heap: the module needs 28672 bytes, largest free block is") &&
                strstr(message(), "of 163840") && strstr(message(), want),
            "%s", message());
  while (n) CHECK(unload(hs[--n]) == C7X_OK);
  CHECK(st.ddr.n_blocks == 1 && fw_pool_free_bytes(&st.ddr) == sizeof medium);
  st = keep;
}

/* ---- malformed variants of a real module -------------------------------- */

typedef struct elf_view {
  Elf64_Ehdr eh;
  Elf64_Phdr ph[16];
  int n_ph;
  size_t dyn_off, n_dyn;
} elf_view;

static void view_of(const uint8_t *b, elf_view *v) {
  memset(v, 0, sizeof *v);
  memcpy(&v->eh, b, sizeof v->eh);
  for (int i = 0; i < v->eh.e_phnum && i < 16; i++) {
    memcpy(&v->ph[i], b + v->eh.e_phoff + (size_t)i * sizeof(Elf64_Phdr), sizeof v->ph[i]);
    if (v->ph[i].p_type == PT_DYNAMIC) {
      v->dyn_off = v->ph[i].p_offset;
      v->n_dyn = v->ph[i].p_filesz / sizeof(Elf64_Dyn);
    }
    v->n_ph++;
  }
}

/* File offset of vaddr (in a PT_LOAD's file bytes). */
static size_t file_off(const elf_view *v, uint64_t vaddr) {
  for (int i = 0; i < v->n_ph; i++)
    if (v->ph[i].p_type == PT_LOAD && vaddr >= v->ph[i].p_vaddr && vaddr < v->ph[i].p_vaddr + v->ph[i].p_filesz)
      return (size_t)(v->ph[i].p_offset + (vaddr - v->ph[i].p_vaddr));
  return 0;
}

static size_t dyn_entry(const uint8_t *b, const elf_view *v, int64_t tag) {
  for (size_t k = 0; k < v->n_dyn; k++) {
    Elf64_Dyn d;
    memcpy(&d, b + v->dyn_off + k * sizeof d, sizeof d);
    if (d.d_tag == tag) return v->dyn_off + k * sizeof d;
  }
  return 0;
}

static uint64_t dyn_value(const uint8_t *b, const elf_view *v, int64_t tag) {
  size_t at = dyn_entry(b, v, tag);
  Elf64_Dyn d = {0, {0}};
  if (at) memcpy(&d, b + at, sizeof d);
  return d.d_un.d_val;
}

static int phdr_of(const elf_view *v, uint32_t type, uint32_t flags) {
  for (int i = 0; i < v->n_ph; i++)
    if (v->ph[i].p_type == type && (!flags || v->ph[i].p_flags == flags)) return i;
  return -1;
}

static size_t phdr_field(const elf_view *v, int i, size_t field) {
  return (size_t)v->eh.e_phoff + (size_t)i * sizeof(Elf64_Phdr) + field;
}

static void put64(uint8_t *b, size_t off, uint64_t x) { memcpy(b + off, &x, 8); }
static void put32(uint8_t *b, size_t off, uint32_t x) { memcpy(b + off, &x, 4); }

/* The offset of name in .dynstr. */
static size_t dynstr_of(const uint8_t *b, const elf_view *v, const char *name) {
  size_t str = file_off(v, dyn_value(b, v, DT_STRTAB)), sz = (size_t)dyn_value(b, v, DT_STRSZ);
  for (size_t k = 0; k + strlen(name) < sz; k++)
    if (!memcmp(b + str + k, name, strlen(name) + 1) && (k == 0 || b[str + k - 1] == 0)) return str + k;
  return 0;
}

typedef struct variant {
  const char *name;
  int32_t status;
  const char *expect;
} variant;

/* Make variant k of the module in b (size *n); its expectation. */
static variant make_variant(int k, uint8_t *b, size_t *n) {
  elf_view v;
  view_of(b, &v);
  int rx = phdr_of(&v, PT_LOAD, PF_R | PF_X), rw = phdr_of(&v, PT_LOAD, PF_R | PF_W);
  size_t rela = file_off(&v, dyn_value(b, &v, DT_RELA)), jmprel = file_off(&v, dyn_value(b, &v, DT_JMPREL));
  size_t symtab = file_off(&v, dyn_value(b, &v, DT_SYMTAB));
  switch (k) {
    case 0: *n = 63; return (variant){"truncated to 63 bytes", C7X_ERR_LOAD, "shorter than the 64-byte ELF header"};
    case 1: *n = 1000; return (variant){"truncated to 1000 bytes", C7X_ERR_LOAD, "outside the 1000-byte file"};
    case 2: *n = v.ph[rw].p_offset + 16; return (variant){"truncated in the data segment", C7X_ERR_LOAD, "segment 3: file bytes"};
    case 3:
      put64(b, offsetof(Elf64_Ehdr, e_phoff), *n - 8);
      return (variant){"program headers past the end", C7X_ERR_LOAD, "program headers at offset"};
    case 4:
      put64(b, phdr_field(&v, rx, offsetof(Elf64_Phdr, p_offset)), UINT64_C(1) << 40);
      return (variant){"segment outside the file", C7X_ERR_LOAD, "segment 1: file bytes [1099511627776"};
    case 5:
      put64(b, phdr_field(&v, rw, offsetof(Elf64_Phdr, p_vaddr)), v.ph[rx].p_vaddr);
      return (variant){"overlapping segments", C7X_ERR_LOAD, "overlaps (or precedes)"};
    case 6:
      put64(b, phdr_field(&v, rw, offsetof(Elf64_Phdr, p_memsz)), UINT64_C(1) << 39);
      return (variant){"absurd size", C7X_ERR_NOMEM, "DDR heap: the module needs"};
    case 7: {
      Elf64_Rela r;
      memcpy(&r, b + rela, sizeof r);
      r.r_info = ELF64_R_INFO(ELF64_R_SYM(r.r_info), 250);
      memcpy(b + rela, &r, sizeof r);
      return (variant){"unknown relocation", C7X_ERR_LOAD, "DT_RELA relocation 0: type 250 is unknown"};
    }
    case 8: {
      Elf64_Rela r;
      memcpy(&r, b + rela, sizeof r);
      r.r_info = ELF64_R_INFO(0, R_X86_64_TPOFF64);
      memcpy(b + rela, &r, sizeof r);
      return (variant){"TLS relocation", C7X_ERR_LOAD, "R_X86_64_TPOFF64 is not supported"};
    }
    case 9:
      put64(b, rela, UINT64_C(0x7fff0000));
      return (variant){"relocation outside the image", C7X_ERR_LOAD, "at 0x7fff0000 is outside the module's segments"};
    case 10:
      put64(b, jmprel, v.ph[rx].p_vaddr);
      return (variant){"relocation into text", C7X_ERR_LOAD, "DT_JMPREL relocation 0 (R_X86_64_JUMP_SLOT)"};
    case 11: {
      Elf64_Rela r;
      memcpy(&r, b + jmprel, sizeof r);
      r.r_info = ELF64_R_INFO(4000, ELF64_R_TYPE(r.r_info));
      memcpy(b + jmprel, &r, sizeof r);
      return (variant){"bad symbol index", C7X_ERR_LOAD, "symbol index 4000 outside"};
    }
    case 12:
      put32(b, symtab + 2 * sizeof(Elf64_Sym), 1u << 30);
      return (variant){"bad string index", C7X_ERR_LOAD, "symbol 2: name offset 1073741824 outside"};
    case 13:
      b[dynstr_of(b, &v, "tidsp_quantize") + 6] = 'Q';
      return (variant){"symbol not exported", C7X_ERR_SYMBOL, "does not export: tidsp_Quantize"};
    case 14:
      put64(b, dyn_entry(b, &v, DT_SONAME), DT_INIT_ARRAY);
      return (variant){"constructor", C7X_ERR_LOAD, "initializers (DT_INIT_ARRAY"};
    case 15:
      put64(b, dyn_entry(b, &v, DT_SONAME), DT_NEEDED);
      return (variant){"needs a library", C7X_ERR_LOAD, "needs library lib0.out (DT_NEEDED)"};
    case 16:
      put64(b, dyn_entry(b, &v, DT_GNU_HASH), DT_DEBUG);
      return (variant){"no hash table", C7X_ERR_LOAD, "no symbol hash table"};
    case 17:
      b[dynstr_of(b, &v, "cg_main_dsp") + 3] = 'M';
      return (variant){"no entry", C7X_ERR_SYMBOL, "module does not export cg_main_dsp"};
    case 18:
      b[dynstr_of(b, &v, "model_desc")] = 'M';
      return (variant){"no descriptor", C7X_ERR_SYMBOL, "module does not export model_desc"};
    case 19: { /* a byte of the weights' payload (the blob is 64-byte aligned in .rodata.weights) */
      size_t w = 0;
      for (size_t off = 0; off + 4 <= *n && !w; off += 64)
        if (!memcmp(b + off, "CSWB", 4)) w = off;
      b[w + 200] ^= 0x40;
      return (variant){"corrupt weights", C7X_ERR_WEIGHTS, "embedded weights (4484 bytes, model expects 4484)"};
    }
    case 20:
      put32(b, phdr_field(&v, rw, offsetof(Elf64_Phdr, p_flags)), PF_R | PF_W | PF_X);
      return (variant){"writable text", C7X_ERR_LOAD, "segment 3 is writable and executable"};
    case 21:
      b[EI_CLASS] = ELFCLASS32;
      return (variant){"32-bit", C7X_ERR_LOAD, "not a 64-bit little-endian ELF"};
    default: return (variant){NULL, 0, NULL};
  }
}

static void test_malformed(const module_image *m, const module_image *good) {
  uint8_t *b = malloc(m->size);
  char seen[32][256];
  int n_seen = 0;
  for (int k = 0; b; k++) {
    memcpy(b, m->bytes, m->size);
    size_t n = m->size;
    variant want = make_variant(k, b, &n);
    if (!want.name) break;
    int32_t s;
    CHECK(load_bytes(b, n, &s) == 0);
    CHECK_MSG(s == want.status && strstr(message(), want.expect), "%s: status %d '%s' (want %d '%s')", want.name, s,
              message(), want.status, want.expect);
    int same = -1;
    for (int j = 0; j < n_seen; j++)
      if (!strcmp(seen[j], message())) same = j;
    CHECK_MSG(same < 0, "%s: the same message as variant %d: %s", want.name, same, message());
    if (n_seen < 32) snprintf(seen[n_seen++], sizeof seen[0], "%.255s", message());
    CHECK_MSG(pools_as_at_start(), "%s: the refused load kept memory", want.name);
    /* the next request is served */
    CHECK(request(C7X_MSG_PING, NULL, 0).status == C7X_OK);
    uint64_t h = load(good, &s);
    CHECK_MSG(h && infer(h) == C7X_OK && unload(h) == C7X_OK, "after %s: %s", want.name, message());
  }
  CHECK(n_seen == 22);
  free(b);
}

/* The vaddr of the module's dynamic symbol name, 0 when absent. */
static uint64_t dynsym_value(const uint8_t *b, const elf_view *v, const char *name) {
  Elf64_Shdr sh;
  size_t str = file_off(v, dyn_value(b, v, DT_STRTAB));
  for (int i = 0; i < v->eh.e_shnum; i++) {
    memcpy(&sh, b + v->eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_DYNSYM) continue;
    for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
      Elf64_Sym sym;
      memcpy(&sym, b + sh.sh_offset + k * sizeof sym, sizeof sym);
      if (!strcmp((const char *)b + str + sym.st_name, name)) return sym.st_value;
    }
  }
  return 0;
}

/* A -profile-layers=1 module whose layer table points a string (name,
 * module, output, kernel) outside the module is refused naming the layer
 * and the string: the firmware copies each at load and never follows the
 * module's pointers after. The pointers are R_X86_64_RELATIVE relocations
 * of model_layer_stats; the variant moves one addend far outside. */
static void test_profile_strings(const module_image *m) {
  static const char *const what[] = {"name", "module", "output", "kernel"};
  uint8_t *b = malloc(m->size);
  elf_view v;
  view_of(m->bytes, &v);
  uint64_t stats = dynsym_value(m->bytes, &v, "model_layer_stats");
  size_t rela = file_off(&v, dyn_value(m->bytes, &v, DT_RELA)), n_rela = (size_t)dyn_value(m->bytes, &v, DT_RELASZ) / sizeof(Elf64_Rela);
  CHECK_MSG(b && stats && rela, "the profile module has no model_layer_stats or no DT_RELA");
  int refused = 0;
  for (int layer = 0; layer < 2 && b && stats && rela; layer++) {
    for (int f = 0; f < 4; f++) {
      memcpy(b, m->bytes, m->size);
      uint64_t at = stats + (uint64_t)layer * sizeof(tidsp_layer_stat) + (uint64_t)f * sizeof(const char *);
      size_t found = 0;
      for (size_t k = 0; k < n_rela && !found; k++) {
        Elf64_Rela r;
        memcpy(&r, b + rela + k * sizeof r, sizeof r);
        if (r.r_offset == at && ELF64_R_TYPE(r.r_info) == R_X86_64_RELATIVE) found = rela + k * sizeof r;
      }
      CHECK_MSG(found, "layer %d: no relocation for its %s", layer, what[f]);
      if (!found) continue;
      put64(b, found + offsetof(Elf64_Rela, r_addend), UINT64_C(0x7fff0000));
      char want[96];
      snprintf(want, sizeof want, "profile layer %d: %s outside the module", layer, what[f]);
      int32_t s;
      CHECK(load_bytes(b, m->size, &s) == 0);
      CHECK_MSG(s == C7X_ERR_LOAD && strstr(message(), want), "%s: status %d '%s'", want, s, message());
      CHECK_MSG(pools_as_at_start(), "%s: the refused load kept memory", want);
      refused++;
    }
  }
  CHECK(refused == 8);
  int32_t s;
  uint64_t h = load(m, &s);
  CHECK_MSG(h && infer(h) == C7X_OK && unload(h) == C7X_OK, "the profile module itself: %s", message());
  free(b);
}

/* ---- one-byte mutations -------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Whether byte off of the module is read by the loader at all (headers,
 * loadable file bytes); others (section headers, .symtab, .comment) must
 * never matter. */
static int loader_reads(const elf_view *v, size_t off) {
  if (off < sizeof(Elf64_Ehdr)) return 1;
  if (off >= v->eh.e_phoff && off < v->eh.e_phoff + (size_t)v->eh.e_phnum * sizeof(Elf64_Phdr)) return 1;
  for (int i = 0; i < v->n_ph; i++)
    if (v->ph[i].p_type == PT_LOAD && off >= v->ph[i].p_offset && off < v->ph[i].p_offset + v->ph[i].p_filesz) return 1;
  return 0;
}

static void test_mutations(const module_image *m) {
  long count = 10000;
  const char *env = getenv("CS_FW_MUTATIONS"), *seed = getenv("CS_FW_MUTATION_SEED");
  if (env && *env) count = strtol(env, NULL, 10);
  if (seed && *seed) rng_state = strtoull(seed, NULL, 10) * 0x9E3779B97F4A7C15u + 1;
  elf_view v;
  view_of(m->bytes, &v);
  /* Half the mutations go to the bytes a loader interprets: the headers,
   * the first segment (dynamic symbols, strings, hash, relocations) and
   * the dynamic section; the other half anywhere. */
  size_t hot = (size_t)v.ph[0].p_filesz;
  uint8_t *b = malloc(m->size);
  long loaded = 0, by_status[32] = {0}, ignored_refused = 0, bad_status = 0, kept = 0;
  clock_t t0 = clock();
  for (long k = 0; k < count && b; k++) {
    memcpy(b, m->bytes, m->size);
    uint64_t r = rnd();
    size_t off = (r & 1) ? (size_t)((r >> 8) % hot) : (k & 2) && v.dyn_off ? v.dyn_off + (size_t)((r >> 8) % (v.n_dyn * 16))
                                                                         : (size_t)((r >> 8) % m->size);
    uint8_t was = b[off];
    b[off] = (uint8_t)(was + 1 + (r >> 40) % 255); /* any other value */
    int32_t s;
    uint64_t h = load_bytes(b, m->size, &s);
    if (h) {
      loaded++;
      if (unload(h) != C7X_OK) bad_status++;
    } else {
      if (-s >= 0 && -s < 32) by_status[-s]++;
      if (s != C7X_ERR_LOAD && s != C7X_ERR_SYMBOL && s != C7X_ERR_WEIGHTS && s != C7X_ERR_NOMEM) bad_status++;
      if (!message()[0]) bad_status++;
      if (!loader_reads(&v, off)) {
        if (ignored_refused++ < 5)
          fprintf(stderr, "a mutation at %zu (outside what the loader reads) was refused: %s\n", off, message());
      }
    }
    if (!pools_as_at_start() || loaded_count()) kept++;
  }
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  printf("mutations: %ld in %.2f s: %ld loaded, refused: %ld LOAD, %ld SYMBOL, %ld WEIGHTS, %ld NOMEM\n", count, secs,
         loaded, by_status[-C7X_ERR_LOAD], by_status[-C7X_ERR_SYMBOL], by_status[-C7X_ERR_WEIGHTS],
         by_status[-C7X_ERR_NOMEM]);
  CHECK_MSG(bad_status == 0, "%ld mutations got a status other than LOAD/SYMBOL/WEIGHTS/NOMEM or no message", bad_status);
  CHECK_MSG(ignored_refused == 0, "%ld mutations of bytes the loader never reads were refused", ignored_refused);
  CHECK_MSG(kept == 0, "%ld mutations left memory or a module behind", kept);
  CHECK(loaded > 0 && loaded < count);
  free(b);
}

int main(void) {
  fw_state_init(&st, ddr, sizeof ddr, l2, sizeof l2, shared, STAGING, RESULT, -1);
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/cs_fw_loader_XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    CHECK(!"mkdtemp");
    UNIT_MAIN_END();
  }
  module_image mods[N_MODULES] = {
      build_module("c7x", "c_static_lib -mcpu=c7x"),
      /* not -mmalib=1: this firmware (CS_FW_MMALIB off) exports no MMALIB
       * kernel, and digits' conv 16 is offloaded (channel padding) */
      build_module("c7x_q31", "c_static_lib -mcpu=c7x -requant=q31"),
      build_module("c7x_profile", "c_static_lib -mcpu=c7x -profile-layers=1"),
  };
  int built = 1;
  for (int i = 0; i < N_MODULES; i++) built &= mods[i].size > 0 && mods[i].size <= STAGING;
  CHECK_MSG(built, "building the test modules with %s failed", CS_CSTATIC_BIN);
  if (built) {
    test_load_run_unload(&mods[0]);
    test_handles(&mods[0]);
    test_cycles(mods);
    test_heap_too_small(&mods[0]);
    test_malformed(&mods[0], &mods[2]);
    test_profile_strings(&mods[2]);
    test_mutations(&mods[0]);
  }
  fw_state_shutdown(&st);
  for (int i = 0; i < N_MODULES; i++) free(mods[i].bytes);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
  if (!getenv("CS_KEEP_TMP") && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
  UNIT_MAIN_END();
}
