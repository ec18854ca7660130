#include "scale_shift.h"

#include <math.h>

int cs_float_to_scale_shift(double r, uint8_t *s, uint8_t *sh, double *rel_err) {
  if (!(r > 0.0) || !isfinite(r)) return -1;
  /* From the finest shift down: the first shift at which round(r·2^sh)
   * fits in 8 bits is the most precise one (s ≥ 128 unless sh hit 31). */
  for (int k = 31; k >= 0; k--) {
    double q = nearbyint(ldexp(r, k));
    if (q > 255.0) continue;
    *s = (uint8_t)q;
    *sh = (uint8_t)k;
    *rel_err = fabs(ldexp(q, -k) - r) / r;
    return 0;
  }
  return -1;
}
