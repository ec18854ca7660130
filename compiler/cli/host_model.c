/*
 * A compiled model loaded into this process (host_model.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "host_model.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cstatic/dma.h"

cs_status cs_host_model_load(const char *dir, cs_host_model *m) {
  memset(m, 0, sizeof *m);
  char so_path[4096];
  cs_status st = cs_host_build(dir, so_path, sizeof so_path);
  if (st != CS_OK) return st;
  m->so = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!m->so) return cs_error(CS_ERR_IO, "cannot load %s: %s", so_path, dlerror());
  m->desc = dlsym(m->so, "model_desc");
  if (!m->desc) return cs_error(CS_ERR_IO, "%s has no model_desc (not built by this cstatic?)", so_path);
  if (m->desc->abi_version != TIDSP_MODEL_ABI_VERSION)
    return cs_error(CS_ERR_IO, "%s: model ABI version %u, this cstatic runs %u (recompile the model)", dir,
                    m->desc->abi_version, TIDSP_MODEL_ABI_VERSION);
  return CS_OK;
}

static cs_status read_weights(cs_host_model *m, const char *dir) {
  const tidsp_model_desc *d = m->desc;
  if (d->weights_embedded) {
    if (d->check_weights(NULL, 0) != TIDSP_OK)
      return cs_error(CS_ERR_IO, "%s: the embedded weights fail their check", dir);
    return CS_OK;
  }
  char path[4096];
  size_t size = 0;
  snprintf(path, sizeof path, "%s/weights.bin", dir);
  cs_status st = cs_fs_read_aligned(path, d->weights_align, &m->weights, &size);
  if (st != CS_OK) return st;
  int32_t check = d->check_weights(m->weights, size);
  if (check != TIDSP_OK && size != d->weights_size)
    return cs_error(CS_ERR_IO, "%s: %s (%zu bytes; the model expects %zu)", path, d->status_str(check), size,
                    d->weights_size);
  if (check != TIDSP_OK) return cs_error(CS_ERR_IO, "%s: %s", path, d->status_str(check));
  return CS_OK;
}

/* A model that stages data in L2 SRAM (-mcpu=c7x -mmalib=1) gets a region
 * of l2_size bytes, bound for all its runs. tidsp_l2_bind is absent from
 * the .so only when the model never calls tidsp_l2_scratch (l2.c holds
 * both), and then there is nothing to bind. The region is touched once
 * here (prefault): it stands for SRAM, which has no page faults, and
 * untouched pages would make the first inference's first DMA copies into
 * it run at a tenth of their speed (a page fault per 4 KB on the copy
 * thread), time the board never spends. */
static cs_status bind_l2(cs_host_model *m) {
  const tidsp_model_desc *d = m->desc;
  if (d->l2_size == 0) return CS_OK;
  *(void **)&m->l2_bind = dlsym(m->so, "tidsp_l2_bind");
  if (posix_memalign(&m->l2, TIDSP_L2_ALIGN, d->l2_size) != 0) {
    m->l2 = NULL;
    return cs_error(CS_ERR_NOMEM, "out of memory for the model's %zu-byte L2 scratch", d->l2_size);
  }
  memset(m->l2, 0, d->l2_size);
  int32_t st = m->l2_bind ? m->l2_bind(m->l2, d->l2_size) : TIDSP_OK;
  if (st != TIDSP_OK)
    return cs_error(CS_ERR_IO, "model '%s': binding its %zu-byte L2 scratch failed: %s", d->name, d->l2_size,
                    d->status_str(st));
  return CS_OK;
}

cs_status cs_host_model_prepare(cs_host_model *m, const char *dir) {
  cs_status st = read_weights(m, dir);
  if (st != CS_OK) return st;
  const tidsp_model_desc *d = m->desc;
  size_t align = d->arena_align < sizeof(void *) ? sizeof(void *) : d->arena_align;
  if (posix_memalign(&m->arena, align, d->arena_size ? d->arena_size : 1) != 0) {
    m->arena = NULL;
    return cs_error(CS_ERR_NOMEM, "out of memory for the %zu-byte arena", d->arena_size);
  }
  /* Prefaulted like the L2 region (bind_l2): the board's DDR has no page
   * faults either, and an H-tiled conv's rows copied out of L2 by the DMA
   * thread would pay them on the first inference. */
  memset(m->arena, 0, d->arena_size);
  return bind_l2(m);
}

cs_status cs_host_model_run(const cs_host_model *m, const void *const in[], void *const out[]) {
  const tidsp_model_desc *d = m->desc;
  int32_t st = d->run(d->weights_embedded ? NULL : m->weights, m->arena, in, out);
  if (st != TIDSP_OK)
    return cs_error(CS_ERR_IO, "model '%s' failed: %s (status %d)", d->name, d->status_str(st), st);
  return CS_OK;
}

void cs_host_model_close(cs_host_model *m) {
  if (m->l2_bind) m->l2_bind(NULL, 0);
  free(m->l2);
  free(m->arena);
  free(m->weights);
  /* The model's code stays mapped until exit: nothing calls it any more,
   * and unloading first would only add an exit-order hazard. */
  memset(m, 0, sizeof *m);
}
