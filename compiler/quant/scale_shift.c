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

int cs_residual_add_mults(double ra, double rb, int32_t *m_a, int32_t *m_b, int32_t *shift, double *rel_err) {
  double big = ra > rb ? ra : rb;
  if (!(big > 0) || !isfinite(big) || big >= 1073741824.0) return -1;
  int k = 0;
  while (k < 62 && ldexp(big, k + 1) < 1073741824.0) k++;
  *m_a = (int32_t)nearbyint(ldexp(ra, k));
  *m_b = (int32_t)nearbyint(ldexp(rb, k));
  *shift = k;
  double ea = fabs(ldexp(*m_a, -k) - ra) / ra, eb = fabs(ldexp(*m_b, -k) - rb) / rb;
  *rel_err = ea > eb ? ea : eb;
  return 0;
}
