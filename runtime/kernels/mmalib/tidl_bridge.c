/*
 * tidl_bridge.c — tidl_bridge_init_all (cstatic/platform/tidsp_dsp.h) for
 * the host emulation of a TIDL firmware.
 *
 * On the board it brings up TIDL's runtime before the first TIDL-backed
 * call. The emulated TIDL-backed kernels (c7x_int8_max_pool_tidl) compute
 * in plain C and keep no state, so there is nothing to bring up and every
 * call succeeds. What matters to a module is where the symbol exists: only
 * in firmware builds that export the TIDL group, so a -tidl-runtime=1
 * module loads there and is refused everywhere else, naming it.
 */
#include "cstatic/platform/tidsp_dsp.h"

int32_t tidl_bridge_init_all(void) { return TIDSP_OK; }
