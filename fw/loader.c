/*
 * The firmware's DYN_LOAD and DYN_UNLOAD: a module image in, a handle out.
 *
 * Order matters:
 *   1. the image is copied out of the staging buffer, which the client can
 *      still write, into private memory; nothing is read before that;
 *   2. fw_elf_parse checks every header, segment and relocation of the
 *      copy, and resolves each undefined symbol against the export table
 *      (only against it: a module the table does not cover is refused,
 *      naming every missing symbol);
 *   3. the DDR heap gives the loadable span (the module occupies nothing
 *      else), fw_elf_place copies and relocates the segments there and
 *      fw_elf_protect gives each page its segment's permissions;
 *   4. cg_main_dsp, model_desc and the weights are found in the module's
 *      own symbol table; the descriptor is checked field by field and
 *      copied (with -profile-layers=1, its layer table's strings too), the
 *      weights are checked by the firmware (tidsp_weights_check on the
 *      blob's own header: no module code runs before its entry);
 *   5. the model's L2 scratch (the region every loaded module shares,
 *      grown to its need: l2_share.c) and arena (DDR heap), then a
 *      handle: 64 bits from getrandom, unused, never 0.
 * Every failure releases all the load took; the private copy goes either
 * way.
 */
#define _GNU_SOURCE

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cstatic/dma.h"
#include "elf_load.h"
#include "exports.h"
#include "fw.h"

#if defined(__x86_64__)
#define FW_HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define FW_HOST_MACHINE EM_AARCH64
#else
#error "loader.c: the firmware loads modules of its own machine; add it to elf_load.c"
#endif

static int fail(char *err, size_t n, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t n, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return status;
}

uint64_t fw_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void fw_state_init(fw_state *st, void *ddr, size_t ddr_size, void *l2, size_t l2_size,
                   void *shared, size_t staging_size, size_t result_size, int shared_fd) {
  memset(st, 0, sizeof *st);
  fw_pool_init(&st->ddr, "DDR heap", ddr, ddr_size);
  fw_pool_init(&st->l2, "L2 SRAM", l2, l2_size);
  pthread_mutex_init(&st->table_lock, NULL);
  st->shared = (uint8_t *)shared;
  st->staging_size = staging_size;
  st->result_size = result_size;
  st->shared_fd = shared_fd;
  st->start_us = fw_now_us();
}

fw_module *fw_module_find(fw_state *st, uint64_t handle) {
  if (handle == 0) return NULL;
  for (int i = 0; i < FW_MAX_MODULES; i++)
    if (st->modules[i].handle == handle) return &st->modules[i];
  return NULL;
}

static void set_handle(fw_state *st, fw_module *m, uint64_t handle) {
  pthread_mutex_lock(&st->table_lock);
  m->handle = handle;
  pthread_mutex_unlock(&st->table_lock);
}

static void release(fw_state *st, fw_module *m) {
  set_handle(st, m, 0);
  if (m->arena) fw_pool_free(&st->ddr, m->arena);
  if (m->prof_rows) fw_pool_free(&st->ddr, m->prof_rows);
  fw_l2_release(st, m);
  if (m->image) {
    /* Plain heap memory again before the pool hands it out (cannot fail on
     * pages this process mapped). */
    fw_elf_unprotect(m->image, m->image_span);
    fw_pool_free(&st->ddr, m->image);
  }
  memset(m, 0, sizeof *m);
}

/* ---- symbols: the export table ------------------------------------------ */

/* The missing symbols, listed into a message. */
typedef struct missing_list {
  char names[400];
  size_t len;
  int count;
} missing_list;

static int resolve_export(void *ctx, const char *name, uint64_t *addr) {
  const fw_export *e = fw_export_find(name);
  if (e) {
    *addr = (uint64_t)(uintptr_t)e->addr;
    return 0;
  }
  missing_list *ml = (missing_list *)ctx;
  if (ml) {
    ml->count++;
    if (ml->len < sizeof ml->names) {
      int w = snprintf(ml->names + ml->len, sizeof ml->names - ml->len, "%s%s", ml->count > 1 ? ", " : "", name);
      if (w > 0) ml->len += (size_t)w;
    }
  }
  return -1;
}

static int nomem(const fw_pool *p, char *err, size_t n_err, const char *what, size_t need) {
  return fail(err, n_err, C7X_ERR_NOMEM, "%s: %s needs %zu bytes, largest free block is %zu of %zu (%zu free)",
              p->name, what, need, fw_pool_largest_free(p), p->size, fw_pool_free_bytes(p));
}

/* ---- reading the placed module -------------------------------------------- */

/* A placed image: vaddr v is at mem + (v - e->lo). */
typedef struct placed {
  const fw_elf *e;
  uint8_t *mem;
} placed;

/* The firmware address of [addr, addr + len) when it lies in one readable
 * segment of the module (addr: a pointer the module holds), else NULL. */
static const uint8_t *readable(const placed *p, uint64_t addr, uint64_t len) {
  uint64_t mem = (uint64_t)(uintptr_t)p->mem;
  if (addr < mem || addr - mem > p->e->span) return NULL;
  uint64_t v = addr - mem + p->e->lo;
  uint32_t flags;
  if (!fw_elf_in_segment(p->e, v, len ? len : 1, &flags) || !(flags & (PF_R | PF_W | PF_X))) return NULL;
  return p->mem + (v - p->e->lo);
}

/* Copy the NUL-terminated string at addr (inside a readable segment) into
 * out, truncated to cap - 1 bytes; 0, or -1 when it is not in the module or
 * does not end there. NULL is "". */
static int copy_string(const placed *p, uint64_t addr, char *out, size_t cap) {
  out[0] = '\0';
  if (addr == 0) return 0;
  const uint8_t *s = readable(p, addr, 1);
  if (!s) return -1;
  /* up to the end of its segment */
  uint64_t v = addr - (uint64_t)(uintptr_t)p->mem + p->e->lo, end = 0;
  for (int i = 0; i < p->e->n_seg; i++)
    if (v >= p->e->seg[i].vaddr && v - p->e->seg[i].vaddr < p->e->seg[i].memsz)
      end = p->e->seg[i].vaddr + p->e->seg[i].memsz;
  const uint8_t *nul = memchr(s, '\0', (size_t)(end - v));
  if (!nul) return -1;
  size_t n = (size_t)(nul - s) < cap - 1 ? (size_t)(nul - s) : cap - 1;
  memcpy(out, s, n);
  out[n] = '\0';
  return 0;
}

static uint64_t ptr_value(const void *p) { return (uint64_t)(uintptr_t)p; }

/* The firmware address of [addr, addr + len) when it lies in one writable
 * segment of the module, else NULL. */
static uint8_t *writable(const placed *p, uint64_t addr, uint64_t len) {
  uint64_t mem = ptr_value(p->mem);
  if (addr < mem || addr - mem > p->e->span) return NULL;
  uint64_t v = addr - mem + p->e->lo;
  uint32_t flags;
  if (!fw_elf_in_segment(p->e, v, len ? len : 1, &flags) || !(flags & PF_W)) return NULL;
  return p->mem + (v - p->e->lo);
}

/* One tensor info of the module's descriptor into m->tensors[k]. */
static int copy_tensor(const placed *p, fw_module *m, int k, const char *kind, int i, const uint8_t *at,
                       char *err, size_t n_err) {
  tidsp_tensor_info t;
  memcpy(&t, at, sizeof t);
  if (copy_string(p, ptr_value(t.name), m->tensor_names[k], FW_NAME_MAX) != 0)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: %s %d: name outside the module", kind, i);
  t.name = m->tensor_names[k];
  size_t dsize = tidsp_dtype_size(t.dtype);
  if (dsize == 0) return fail(err, n_err, C7X_ERR_LOAD, "model_desc: %s %d '%s': unknown dtype %d", kind, i, t.name, t.dtype);
  if (t.rank < 0 || t.rank > TIDSP_DSP_MAX_NDIM)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: %s %d '%s': rank %d outside [0, %d]", kind, i, t.name, t.rank,
                TIDSP_DSP_MAX_NDIM);
  uint64_t numel = 1;
  for (int32_t d = 0; d < t.rank; d++) {
    if (t.shape[d] < 0 || (t.shape[d] > 0 && numel > (UINT64_C(1) << 48) / (uint64_t)t.shape[d]))
      return fail(err, n_err, C7X_ERR_LOAD, "model_desc: %s %d '%s': dimension %d is %lld", kind, i, t.name, d,
                  (long long)t.shape[d]);
    numel *= (uint64_t)t.shape[d];
  }
  if ((uint64_t)t.numel != numel || (uint64_t)t.nbytes != numel * dsize)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: %s %d '%s': %lld elements in %zu bytes, its shape holds %llu",
                kind, i, t.name, (long long)t.numel, t.nbytes, (unsigned long long)numel);
  m->tensors[k] = t;
  return C7X_OK;
}

/* The module's model_desc, checked and copied into m->desc. */
static int copy_desc(const placed *p, fw_module *m, const fw_elf_symbol *sym, char *err, size_t n_err) {
  const uint8_t *at = readable(p, ptr_value(p->mem) + (sym->vaddr - p->e->lo), sizeof(tidsp_model_desc));
  if (!at) return fail(err, n_err, C7X_ERR_LOAD, "model_desc (%zu bytes at 0x%llx) is not inside the module",
                       sizeof(tidsp_model_desc), (unsigned long long)sym->vaddr);
  tidsp_model_desc d;
  memcpy(&d, at, sizeof d);
  if (d.abi_version != TIDSP_MODEL_ABI_VERSION)
    return fail(err, n_err, C7X_ERR_LOAD, "module ABI version %u, this firmware runs %u", d.abi_version,
                TIDSP_MODEL_ABI_VERSION);
  if (copy_string(p, ptr_value(d.name), m->name, sizeof m->name) != 0)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: name outside the module");
  if (d.n_inputs < 0 || d.n_outputs < 0 || d.n_inputs > FW_MAX_TENSORS || d.n_outputs > FW_MAX_TENSORS)
    return fail(err, n_err, C7X_ERR_LOAD, "module has %d inputs and %d outputs (at most %d each)", d.n_inputs,
                d.n_outputs, FW_MAX_TENSORS);
  const tidsp_tensor_info *lists[2] = {d.inputs, d.outputs};
  int counts[2] = {d.n_inputs, d.n_outputs}, k = 0;
  for (int side = 0; side < 2; side++) {
    const char *kind = side ? "output" : "input";
    const uint8_t *arr = counts[side] ? readable(p, ptr_value(lists[side]), (uint64_t)counts[side] * sizeof(tidsp_tensor_info)) : NULL;
    if (counts[side] && !arr)
      return fail(err, n_err, C7X_ERR_LOAD, "model_desc: the %d %s infos are not inside the module", counts[side], kind);
    for (int i = 0; i < counts[side]; i++, k++) {
      int s = copy_tensor(p, m, k, kind, i, arr + (size_t)i * sizeof(tidsp_tensor_info), err, n_err);
      if (s != C7X_OK) return s;
    }
  }
  if (d.arena_align > (1u << 20) || (d.arena_align & (d.arena_align - 1)))
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: arena alignment %zu (a power of two up to 1 MiB)", d.arena_align);
  if (d.weights_align > 4096 || (d.weights_align & (d.weights_align - 1)))
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: weights alignment %zu (a power of two up to 4096)", d.weights_align);
  if (d.weights_embedded && !readable(p, ptr_value(d.weights_embedded), d.weights_size))
    return fail(err, n_err, C7X_ERR_WEIGHTS, "model_desc: compiled-in weights (%zu bytes) are not inside the module",
                d.weights_size);
  if (d.profile && !readable(p, ptr_value(d.profile), sizeof(tidsp_profile_table)))
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: the profile table is not inside the module");
  /* What the firmware keeps: no entry points (it calls only cg_main_dsp),
   * the profile table where the module updates it. */
  d.name = m->name;
  d.target = NULL;
  d.inputs = m->tensors;
  d.outputs = m->tensors + d.n_inputs;
  d.raw_inputs = d.raw_outputs = NULL;
  d.run = d.run_raw = NULL;
  d.check_weights = NULL;
  d.status_str = NULL;
  m->desc = d;
  return C7X_OK;
}

/* The blob is the model's weights: the size and alignment its descriptor
 * states, its header intact, its payload what the header's checksum says.
 * The firmware's own check: the module's check_weights is module code. */
static int check_weights(const uint8_t *blob, size_t size, const tidsp_model_desc *d, char *err, size_t n_err) {
  uint32_t count = 0;
  uint64_t checksum = 0;
  if (size >= TIDSP_WEIGHTS_HEADER_SIZE) {
    memcpy(&count, blob + 8, sizeof count);
    memcpy(&checksum, blob + 32, sizeof checksum);
  }
  int32_t s = tidsp_weights_check(blob, size, d->weights_size, count, d->weights_align, checksum);
  if (s != TIDSP_OK)
    return fail(err, n_err, C7X_ERR_WEIGHTS, "embedded weights (%zu bytes, model expects %zu): %s", size,
                d->weights_size, tidsp_status_str(s));
  return C7X_OK;
}

/* The profile table of a -profile-layers=1 module (m->desc.profile, a
 * module address checked readable by copy_desc): its counters must lie in
 * a writable segment (the module updates them, the firmware clears them);
 * its names, modules, outputs, kernels and MACs are copied into DDR heap
 * rows now, so that PROFILE never follows a pointer the module could have
 * changed. */
static int copy_profile(fw_state *st, const placed *p, fw_module *m, char *err, size_t n_err) {
  const tidsp_profile_table *at = m->desc.profile;
  m->desc.profile = NULL; /* the firmware keeps its own checked copy */
  if (!at) return C7X_OK;
  tidsp_profile_table t;
  memcpy(&t, at, sizeof t);
  if (t.n_layers < 0 || t.n_layers > FW_MAX_PROFILE_LAYERS)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: profile table of %d layers (at most %d)", t.n_layers,
                FW_MAX_PROFILE_LAYERS);
  uint64_t bytes = (uint64_t)t.n_layers * sizeof(tidsp_layer_stat);
  uint8_t *layers = t.n_layers ? writable(p, ptr_value(t.layers), bytes) : NULL;
  if (t.n_layers && !layers)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: the profile's %d layer counters are not inside a writable "
                "segment of the module", t.n_layers);
  if (copy_string(p, ptr_value(t.clock_unit), m->prof_unit, sizeof m->prof_unit) != 0)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: the profile's clock unit is outside the module");
  double unit_ms = tidsp_profile_unit_ms(m->prof_unit);
  if (unit_ms == 0.0)
    return fail(err, n_err, C7X_ERR_LOAD, "model_desc: profile clock unit '%s' (this firmware knows cycles and ns)",
                m->prof_unit);
  m->prof_hz = (uint64_t)(1e3 / unit_ms + 0.5);
  if (t.n_layers) {
    m->prof_rows = fw_pool_alloc(&st->ddr, (size_t)t.n_layers * sizeof(c7x_profile_row), 64);
    if (!m->prof_rows) return nomem(&st->ddr, err, n_err, "the module's profile rows", (size_t)t.n_layers * sizeof(c7x_profile_row));
  }
  for (int32_t i = 0; i < t.n_layers; i++) {
    tidsp_layer_stat ls;
    memcpy(&ls, layers + (size_t)i * sizeof ls, sizeof ls);
    c7x_profile_row *row = &m->prof_rows[i];
    memset(row, 0, sizeof *row);
    const struct {
      const char *what, *at;
      char *to;
      size_t cap;
    } str[] = {{"name", ls.name, row->name, sizeof row->name},
               {"module", ls.module, row->module, sizeof row->module},
               {"output", ls.output, row->output, sizeof row->output},
               {"kernel", ls.kernel, row->kernel, sizeof row->kernel}};
    for (size_t k = 0; k < sizeof str / sizeof str[0]; k++)
      if (copy_string(p, ptr_value(str[k].at), str[k].to, str[k].cap) != 0)
        return fail(err, n_err, C7X_ERR_LOAD, "model_desc: profile layer %d: %s outside the module", i, str[k].what);
    row->macs = ls.macs;
  }
  m->has_profile = 1;
  m->prof_n = t.n_layers;
  m->prof_layers = (tidsp_layer_stat *)layers;
  return C7X_OK;
}

/* cg_main_dsp, model_desc and the weights, from the module's own symbols. */
static int find_model(const placed *p, fw_module *m, char *err, size_t n_err) {
  fw_elf_symbol entry, desc;
  const char *absent = fw_elf_find(p->e, "cg_main_dsp", &entry) != 0  ? "cg_main_dsp"
                       : fw_elf_find(p->e, "model_desc", &desc) != 0 ? "model_desc"
                                                                       : NULL;
  if (absent)
    return fail(err, n_err, C7X_ERR_SYMBOL, "module does not export %s (compile it with -t \"c_static_lib -mcpu=c7x\")",
                absent);
  if (!(entry.flags & PF_X))
    return fail(err, n_err, C7X_ERR_LOAD, "cg_main_dsp (0x%llx) is not in an executable segment",
                (unsigned long long)entry.vaddr);
  m->entry = (fw_dsp_entry)(uintptr_t)(ptr_value(p->mem) + (entry.vaddr - p->e->lo));
  int s = copy_desc(p, m, &desc, err, n_err);
  if (s != C7X_OK) return s;
  const tidsp_model_desc *d = &m->desc;
  if (d->weights_embedded) {
    m->weights = NULL; /* the module passes its own */
    return check_weights((const uint8_t *)d->weights_embedded, d->weights_size, d, err, n_err);
  }
  fw_elf_symbol start, size_sym;
  if (fw_elf_find(p->e, "_binary_weights_bin_start", &start) != 0 ||
      fw_elf_find(p->e, "_binary_weights_bin_size", &size_sym) != 0)
    return fail(err, n_err, C7X_ERR_WEIGHTS, "module has no embedded weights (_binary_weights_bin_start/_size; build "
                "it with 'cstatic compile --emit=module')");
  const uint8_t *size_at = readable(p, ptr_value(p->mem) + (size_sym.vaddr - p->e->lo), 8);
  if (!size_at) return fail(err, n_err, C7X_ERR_WEIGHTS, "_binary_weights_bin_size is not inside the module");
  uint64_t wsize;
  memcpy(&wsize, size_at, sizeof wsize);
  const uint8_t *blob = readable(p, ptr_value(p->mem) + (start.vaddr - p->e->lo), wsize);
  if (!blob)
    return fail(err, n_err, C7X_ERR_WEIGHTS, "embedded weights (%llu bytes at 0x%llx) are not inside the module",
                (unsigned long long)wsize, (unsigned long long)start.vaddr);
  m->weights = blob;
  m->weights_size = (size_t)wsize;
  return check_weights(blob, (size_t)wsize, d, err, n_err);
}

/* A fresh handle: 64 random bits, not 0, not in use. */
static int new_handle(fw_state *st, uint64_t *out, char *err, size_t n_err) {
  for (int tries = 0; tries < 8; tries++) {
    uint64_t h = 0;
    if (getrandom(&h, sizeof h, 0) != (ssize_t)sizeof h)
      return fail(err, n_err, C7X_ERR_GENERIC, "getrandom: %s", strerror(errno));
    if (h != 0 && !fw_module_find(st, h)) {
      *out = h;
      return C7X_OK;
    }
  }
  return fail(err, n_err, C7X_ERR_GENERIC, "no fresh handle from getrandom");
}

int fw_module_load(fw_state *st, const void *image, size_t size, fw_module **out, char *err, size_t n_err) {
  /* 1. One copy, out of memory the client can write. */
  if (size == 0) return fail(err, n_err, C7X_ERR_SIZE, "empty module image");
  uint8_t *copy = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy == MAP_FAILED)
    return fail(err, n_err, C7X_ERR_NOMEM, "cannot take a private copy of the %zu-byte module image: %s", size,
                strerror(errno));
  memcpy(copy, image, size);

  fw_elf e;
  missing_list ml;
  memset(&ml, 0, sizeof ml);
  char why[300];
  fw_module *m = NULL;
  long page = sysconf(_SC_PAGESIZE);
  int status = C7X_OK;
  int s = fw_elf_parse(&e, copy, size, FW_HOST_MACHINE, page > 0 ? (uint64_t)page : 4096u, resolve_export, &ml,
                       why, sizeof why);
  if (s == FW_ELF_ERR_SYMBOL) {
    status = fail(err, n_err, C7X_ERR_SYMBOL, "module needs %d symbol%s this firmware (%s) does not export: %s",
                  ml.count, ml.count == 1 ? "" : "s", fw_build_options(), ml.names);
    goto done;
  }
  if (s != FW_ELF_OK) {
    status = fail(err, n_err, C7X_ERR_LOAD, "module image: %s", why);
    goto done;
  }

  for (int i = 0; i < FW_MAX_MODULES && !m; i++)
    if (st->modules[i].handle == 0) m = &st->modules[i];
  if (!m) {
    status = fail(err, n_err, C7X_ERR_NOMEM, "module table full: %d modules loaded (unload one)", FW_MAX_MODULES);
    goto done;
  }
  memset(m, 0, sizeof *m);
  m->text_size = (uint32_t)(e.text_size > UINT32_MAX ? UINT32_MAX : e.text_size);
  m->data_size = (uint32_t)(e.data_size > UINT32_MAX ? UINT32_MAX : e.data_size);

  /* 3. The DDR heap is the only memory the module occupies. */
  m->image = e.span <= SIZE_MAX ? fw_pool_alloc(&st->ddr, (size_t)e.span, (size_t)e.align) : NULL;
  if (!m->image) {
    status = nomem(&st->ddr, err, n_err, "the module", (size_t)(e.span > SIZE_MAX ? SIZE_MAX : e.span));
    goto bad;
  }
  m->image_span = (size_t)e.span;
  if (fw_elf_place(&e, m->image, resolve_export, NULL, why, sizeof why) != FW_ELF_OK ||
      fw_elf_protect(&e, m->image, why, sizeof why) != FW_ELF_OK) {
    status = fail(err, n_err, C7X_ERR_LOAD, "module image: %s", why);
    goto bad;
  }

  /* 4. Its entry, descriptor and weights. */
  placed p = {&e, m->image};
  status = find_model(&p, m, err, n_err);
  if (status == C7X_OK) status = copy_profile(st, &p, m, err, n_err);
  if (status != C7X_OK) goto bad;

  /* 5. Its scratch memory, its handle. */
  const tidsp_model_desc *d = &m->desc;
  status = fw_l2_reserve(st, m, err, n_err);
  if (status != C7X_OK) goto bad;
  size_t align = d->arena_align < 64 ? 64 : d->arena_align;
  m->arena = fw_pool_alloc(&st->ddr, d->arena_size, align);
  if (!m->arena) {
    status = nomem(&st->ddr, err, n_err, "the model's arena", d->arena_size);
    goto bad;
  }
  uint64_t h = 0;
  status = new_handle(st, &h, err, n_err);
  if (status != C7X_OK) goto bad;
  set_handle(st, m, h);
  *out = m;
  goto done;
bad:
  release(st, m);
done:
  munmap(copy, size);
  return status;
}

int fw_module_unload(fw_state *st, uint64_t handle, char *err, size_t n_err) {
  fw_module *m = fw_module_find(st, handle);
  if (!m) return fail(err, n_err, C7X_ERR_HANDLE, "no module with handle %llu is loaded", (unsigned long long)handle);
  release(st, m);
  return C7X_OK;
}

void fw_state_shutdown(fw_state *st) {
  for (int i = 0; i < FW_MAX_MODULES; i++)
    if (st->modules[i].handle) release(st, &st->modules[i]);
}
