/*
 * The cost rule's verdict and the padding decisions of the offload report;
 * the cycle figures are the C7x cycle model's (ir/c7x_cost.c).
 */
#include "mmalib_cost.h"
#include "../passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_mm_cost_pays(double mma_cycles, double scalar_cycles) { return mma_cycles < 0.95 * scalar_cycles; }

void cs_mm_pad_decision_init(cs_offload_pad *p, const char *layer, const char *what, int64_t c_out, int64_t c_pad,
                             int64_t macs, int64_t macs_added) {
  memset(p, 0, sizeof *p);
  snprintf(p->layer, sizeof p->layer, "%s", layer ? layer : "?");
  p->what = what;
  p->c_out = (int)c_out;
  p->c_pad = (int)c_pad;
  p->macs = macs;
  p->macs_added = macs_added;
}

double cs_mm_call_bytes(const cs_target *t, double in_b, double w_b, double out_b) {
  return cs_c7x_call_bytes(t->l2_budget, in_b, w_b, out_b);
}

static const char *what_name(const char *what) { return what ? what : "C_out"; }

int cs_mm_refused(const cs_target *t, const char *layer, const char *what) {
  char key[sizeof t->mm_refused->layer]; /* compared as stored (truncated) */
  snprintf(key, sizeof key, "%s", layer ? layer : "?");
  for (int i = 0; i < t->n_mm_refused; i++)
    if (!strcmp(t->mm_refused[i].layer, key) && !strcmp(what_name(t->mm_refused[i].what), what_name(what)))
      return 1;
  return 0;
}

int cs_mm_pad_decide(const cs_target *t, cs_offload_pad *p, double mma_cycles, double scalar_cycles) {
  p->mma_cycles = mma_cycles;
  p->scalar_cycles = scalar_cycles;
  int pays = cs_mm_cost_pays(mma_cycles, scalar_cycles);
  p->over_budget = pays && cs_mm_refused(t, p->layer, p->what);
  p->padded = pays && !p->over_budget;
  return p->padded;
}

/* Cycles saved per MAC added: the refusal order, least first. */
static double saving_per_mac(const cs_offload_pad *p) {
  return (p->scalar_cycles - p->mma_cycles) / (double)p->macs_added;
}

static int by_saving(const void *a, const void *b) {
  const cs_offload_pad *const *x = a, *const *y = b;
  double u = saving_per_mac(*x), v = saving_per_mac(*y);
  return u < v ? -1 : u > v ? 1 : 0;
}

int cs_mm_budget_refuse(const cs_offload_report *r, int64_t total_macs, double budget, cs_offload_pad **refused,
                        int *n_refused) {
  int64_t added = 0;
  int n = 0;
  for (int i = 0; i < r->n_pad; i++)
    if (r->pads[i].padded && r->pads[i].macs_added > 0) added += r->pads[i].macs_added, n += !r->pads[i].fixed;
  double excess = (double)total_macs - budget * (double)(total_macs - added);
  if (excess <= 0.0 || n == 0) return 0;
  const cs_offload_pad **taken = malloc(sizeof *taken * (size_t)n);
  cs_offload_pad *grown = realloc(*refused, sizeof *grown * (size_t)(*n_refused + n));
  if (!taken || !grown) {
    free(taken);
    if (grown) *refused = grown;
    cs_error(CS_ERR_NOMEM, "out of memory choosing the rewrites over the padding budget");
    return -1;
  }
  *refused = grown;
  n = 0;
  for (int i = 0; i < r->n_pad; i++)
    if (r->pads[i].padded && r->pads[i].macs_added > 0 && !r->pads[i].fixed) taken[n++] = &r->pads[i];
  qsort(taken, (size_t)n, sizeof *taken, by_saving);
  /* Each MAC a refused rewrite adds is out of the total, not of the
   * model's own: refusing m MACs lowers the excess by m. */
  int k = 0;
  while (k < n && excess > 0.0) excess -= (double)taken[k++]->macs_added;
  /* The last one refused may leave room for some before it: those go back,
   * the most cycles saved per MAC first. */
  for (int j = k - 1; j >= 0; j--) {
    if ((double)taken[j]->macs_added <= -excess) {
      excess += (double)taken[j]->macs_added;
      taken[j] = NULL;
    }
  }
  int appended = 0;
  for (int j = 0; j < k; j++)
    if (taken[j]) (*refused)[(*n_refused)++] = *taken[j], appended++;
  free(taken);
  return appended;
}
