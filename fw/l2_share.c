/*
 * The firmware's L2 scratch: one region that every loaded module shares.
 *
 * A module's L2 scratch (model_desc.l2_size) is working memory of one
 * inference: a -mcpu=c7x model stages its layers there and keeps nothing
 * in it from one inference to the next. The firmware runs one request at
 * a time (fw_main.c's serve_lock), so two modules never use it at once:
 * a region as large as the largest loaded module's need serves them all,
 * each inference binding the first l2_size bytes of it (service.c). A
 * block per module would refuse two big modules whose sum exceeds the
 * pool although each fits.
 *
 * The region is the L2 pool's only block, at the pool's base; it grows
 * when a load needs more than it holds and shrinks when the largest user
 * unloads. Moving it is safe: loads, unloads and inferences are requests,
 * never concurrent, and no module keeps a pointer into it between
 * inferences (the generated code asks tidsp_l2_scratch per inference).
 */
#include <stdio.h>
#include <string.h>

#include "cstatic/dma.h"
#include "fw.h"

/* The largest l2_size among the loaded modules (handle != 0) and `extra`. */
static size_t largest_need(const fw_state *st, size_t extra) {
  size_t n = extra;
  for (int i = 0; i < FW_MAX_MODULES; i++)
    if (st->modules[i].handle && st->modules[i].desc.l2_size > n) n = st->modules[i].desc.l2_size;
  return n;
}

/* Re-carve the region at `size` bytes (0: none) and point every loaded
 * module and `also` at it. 0, or -1 when the pool has no such block (the
 * region is then what it was). */
static int resize(fw_state *st, size_t size, fw_module *also) {
  if (size == st->l2_region_size) return 0;
  void *old = st->l2_region;
  size_t old_size = st->l2_region_size;
  if (old) fw_pool_free(&st->l2, old);
  void *p = size ? fw_pool_alloc(&st->l2, size, TIDSP_L2_ALIGN) : NULL;
  if (size && !p) {
    /* the only block of the pool: back where it was */
    st->l2_region = old_size ? fw_pool_alloc(&st->l2, old_size, TIDSP_L2_ALIGN) : NULL;
    return -1;
  }
  /* Touched now (prefault), not by the first inference's DMA copies:
   * the pool stands for SRAM, which has no page faults (host_model.c's
   * bind does the same for `cstatic run`). */
  if (p) memset(p, 0, size);
  st->l2_region = p;
  st->l2_region_size = size;
  for (int i = 0; i < FW_MAX_MODULES; i++)
    if (st->modules[i].handle && st->modules[i].desc.l2_size) st->modules[i].l2 = p;
  if (also && also->desc.l2_size) also->l2 = p;
  return 0;
}

int fw_l2_reserve(fw_state *st, fw_module *m, char *err, size_t n_err) {
  size_t need = m->desc.l2_size;
  if (need == 0) return C7X_OK;
  size_t size = largest_need(st, need);
  if (size > st->l2_region_size && resize(st, size, m) != 0) {
    snprintf(err, n_err,
             "%s: model '%.64s' (its L2 scratch) needs %zu bytes, the pool holds %zu; the loaded modules "
             "share one region of the largest's size (%zu bytes now)",
             st->l2.name, m->desc.name ? m->desc.name : "?", need, st->l2.size, st->l2_region_size);
    return C7X_ERR_NOMEM;
  }
  m->l2 = st->l2_region;
  return C7X_OK;
}

void fw_l2_release(fw_state *st, fw_module *m) {
  m->l2 = NULL;
  /* m's handle is already 0: the largest of the others */
  size_t size = largest_need(st, 0);
  if (size < st->l2_region_size) (void)resize(st, size, NULL); /* smaller always fits */
}
