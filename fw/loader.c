/*
 * The emulator's DLOAD: check a module image, then load it.
 *
 * Order matters: the image's undefined symbols are checked against the
 * export table BEFORE the dynamic loader sees it, because the host's
 * loader would otherwise resolve them against anything in the process
 * (all of libc). A module the table does not cover is refused, naming the
 * symbols; then the DDR heap is charged for the module's loadable span, the
 * image is handed to dlopen (RTLD_NOW | RTLD_LOCAL: every
 * reference bound now, nothing of it visible to other modules) from an
 * anonymous memory file, and its entry, descriptor and embedded weights
 * are looked up and checked; last, the model's L2 scratch (desc->l2_size,
 * from the L2 SRAM pool) and its arena (DDR heap) are allocated. Every
 * failure releases all the load took.
 *
 * Host emulation limit: the code itself is mapped where the host's loader
 * puts it; the DDR heap holds a reservation of the same size, so heap
 * exhaustion behaves as on the board.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cstatic/dma.h"
#include "elf_syms.h"
#include "exports.h"
#include "fw.h"

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
  st->shared = (uint8_t *)shared;
  st->staging_size = staging_size;
  st->result_size = result_size;
  st->shared_fd = shared_fd;
  st->next_handle = 1;
  st->start_us = fw_now_us();
}

fw_module *fw_module_find(fw_state *st, uint32_t handle) {
  if (handle == 0) return NULL;
  for (int i = 0; i < FW_MAX_MODULES; i++)
    if (st->modules[i].handle == handle) return &st->modules[i];
  return NULL;
}

static void release(fw_state *st, fw_module *m) {
  if (m->dl) dlclose(m->dl);
  if (m->arena) fw_pool_free(&st->ddr, m->arena);
  if (m->l2) fw_pool_free(&st->l2, m->l2);
  if (m->image) fw_pool_free(&st->ddr, m->image);
  if (m->image_fd >= 0) close(m->image_fd);
  memset(m, 0, sizeof *m);
}

/* The missing symbols, listed into a message. */
typedef struct missing_list {
  char names[400];
  size_t len;
  int count;
  const char *first;
} missing_list;

static int check_symbol(void *ctx, const char *name) {
  missing_list *ml = (missing_list *)ctx;
  if (fw_export_find(name)) return 0;
  ml->count++;
  if (ml->len < sizeof ml->names) {
    int w = snprintf(ml->names + ml->len, sizeof ml->names - ml->len, "%s%s",
                     ml->count > 1 ? ", " : "", name);
    if (w > 0) ml->len += (size_t)w;
  }
  return 0;
}

static int nomem(const fw_pool *p, char *err, size_t n_err, const char *what, size_t need) {
  return fail(err, n_err, C7X_ERR_NOMEM,
              "%s: %s needs %zu bytes, largest free block is %zu of %zu (%zu free)", p->name, what,
              need, fw_pool_largest_free(p), p->size, fw_pool_free_bytes(p));
}

int fw_module_load(fw_state *st, const void *image, size_t size, fw_module **out, char *err,
                   size_t n_err) {
  fw_elf_info info;
  missing_list ml;
  memset(&ml, 0, sizeof ml);
  if (fw_elf_scan(image, size, &info, check_symbol, &ml, err, n_err) != 0) {
    char why[256];
    snprintf(why, sizeof why, "%s", err);
    return fail(err, n_err, C7X_ERR_LOAD, "module image: %s", why);
  }
  if (ml.count)
    return fail(err, n_err, C7X_ERR_SYMBOL,
                "module needs %d symbol%s this firmware (%s) does not export: %s", ml.count,
                ml.count == 1 ? "" : "s", fw_build_options(), ml.names);

  fw_module *m = NULL;
  for (int i = 0; i < FW_MAX_MODULES && !m; i++)
    if (st->modules[i].handle == 0) m = &st->modules[i];
  if (!m)
    return fail(err, n_err, C7X_ERR_NOMEM, "module table full: %d modules loaded (unload one)",
                FW_MAX_MODULES);
  memset(m, 0, sizeof *m);
  m->image_fd = -1;
  m->text_size = (uint32_t)(info.text_size > UINT32_MAX ? UINT32_MAX : info.text_size);
  m->data_size = (uint32_t)(info.data_size > UINT32_MAX ? UINT32_MAX : info.data_size);
  m->image = fw_pool_alloc(&st->ddr, (size_t)info.span, 4096);
  if (!m->image) return nomem(&st->ddr, err, n_err, "the module", (size_t)info.span);

  int status = C7X_OK;
  int fd = memfd_create("c7x_module", MFD_CLOEXEC);
  if (fd < 0) {
    status = fail(err, n_err, C7X_ERR_LOAD, "memfd_create: %s", strerror(errno));
    goto bad;
  }
  for (size_t done = 0; done < size;) {
    ssize_t w = write(fd, (const uint8_t *)image + done, size - done);
    if (w <= 0) {
      status = fail(err, n_err, C7X_ERR_LOAD, "writing the module image: %s", strerror(errno));
      close(fd);
      goto bad;
    }
    done += (size_t)w;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  m->image_fd = fd;
  m->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!m->dl) {
    const char *e = dlerror();
    status = fail(err, n_err, C7X_ERR_LOAD, "dynamic load failed: %s", e ? e : "unknown error");
    goto bad;
  }
  m->entry = (fw_dsp_entry)dlsym(m->dl, "cg_main_dsp");
  m->desc = (const tidsp_model_desc *)dlsym(m->dl, "model_desc");
  if (!m->entry || !m->desc) {
    status = fail(err, n_err, C7X_ERR_SYMBOL,
                  "module does not export %s (compile it with -t \"c_static_lib -mcpu=c7x\")",
                  !m->entry ? "cg_main_dsp" : "model_desc");
    goto bad;
  }
  const tidsp_model_desc *d = m->desc;
  if (d->abi_version != TIDSP_MODEL_ABI_VERSION) {
    status = fail(err, n_err, C7X_ERR_LOAD, "module ABI version %u, this firmware runs %u",
                  d->abi_version, TIDSP_MODEL_ABI_VERSION);
    goto bad;
  }
  if (d->n_inputs < 0 || d->n_outputs < 0 || d->n_inputs > FW_MAX_TENSORS ||
      d->n_outputs > FW_MAX_TENSORS) {
    status = fail(err, n_err, C7X_ERR_LOAD, "module has %d inputs and %d outputs (at most %d each)",
                  d->n_inputs, d->n_outputs, FW_MAX_TENSORS);
    goto bad;
  }
  if (d->weights_embedded) {
    m->weights = NULL;
    if (d->check_weights(NULL, 0) != TIDSP_OK) {
      status = fail(err, n_err, C7X_ERR_WEIGHTS, "the module's compiled-in weights fail their check");
      goto bad;
    }
  } else {
    const uint8_t *start = (const uint8_t *)dlsym(m->dl, "_binary_weights_bin_start");
    const uint64_t *wsize = (const uint64_t *)dlsym(m->dl, "_binary_weights_bin_size");
    if (!start || !wsize) {
      status = fail(err, n_err, C7X_ERR_WEIGHTS,
                    "module has no embedded weights (_binary_weights_bin_start/_size; build it "
                    "with 'cstatic compile --emit=module')");
      goto bad;
    }
    m->weights = start;
    m->weights_size = (size_t)*wsize;
    int32_t ws = d->check_weights(start, m->weights_size);
    if (ws != TIDSP_OK) {
      status = fail(err, n_err, C7X_ERR_WEIGHTS, "embedded weights (%zu bytes, model expects %zu): %s",
                    m->weights_size, d->weights_size, tidsp_status_str(ws));
      goto bad;
    }
  }
  if (d->l2_size > 0) {
    m->l2 = fw_pool_alloc(&st->l2, d->l2_size, TIDSP_L2_ALIGN);
    if (!m->l2) {
      char what[96];
      snprintf(what, sizeof what, "model '%.64s' (its L2 scratch)", d->name ? d->name : "?");
      status = nomem(&st->l2, err, n_err, what, d->l2_size);
      goto bad;
    }
  }
  size_t align = d->arena_align < 64 ? 64 : d->arena_align;
  m->arena = fw_pool_alloc(&st->ddr, d->arena_size, align);
  if (!m->arena) {
    status = nomem(&st->ddr, err, n_err, "the model's arena", d->arena_size);
    goto bad;
  }
  m->handle = st->next_handle++;
  if (st->next_handle == 0) st->next_handle = 1;
  *out = m;
  return C7X_OK;
bad:
  release(st, m);
  return status;
}

int fw_module_unload(fw_state *st, uint32_t handle, char *err, size_t n_err) {
  fw_module *m = fw_module_find(st, handle);
  if (!m) return fail(err, n_err, C7X_ERR_HANDLE, "no module with handle %u is loaded", handle);
  release(st, m);
  return C7X_OK;
}

void fw_state_shutdown(fw_state *st) {
  for (int i = 0; i < FW_MAX_MODULES; i++)
    if (st->modules[i].handle) release(st, &st->modules[i]);
}
