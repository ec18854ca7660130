/*
 * profile_report.h — the per-layer profile as text: the one table (and its
 * CSV) that `cstatic run --profile`, `c7x_compute infer --profile` and the
 * Python C7xVirtualMachine.profile() print, whatever measured the rows (a
 * host build's tidsp_profile_table, or the C7x firmware's PROFILE answer).
 *
 * Host-side reporting beside the runtime (runtime/profile/report.c): the
 * generated code never calls it. Text goes into a caller's buffer, as
 * snprintf does (NUL-terminated, cut at size; the return value is the
 * length the whole text needs), so any language can call it.
 *
 * The table: a header line, one line per layer
 *     #  layer  module  output  kernel  MACs  [cycles]  time_ms  share  GMAC/s
 * and a total line ("total: N layers, M MACs, T ms in layers[, L ms end to
 * end][, G GMAC/s]"). The cycles column is there when the rows were
 * counted in C7x cycles; a layer without a module shows "-" there. Names,
 * modules and outputs longer than 40 bytes are cut with "..." in the
 * table; the CSV has them whole ("" for no module).
 */
#ifndef CSTATIC_PROFILE_REPORT_H
#define CSTATIC_PROFILE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tidsp_profile_row {
  const char *name;   /* the layer: the ONNX node it computes */
  const char *module; /* the PyTorch module path recorded for that node, or "" (NULL: "") */
  const char *output; /* its output tensor, "i8[1,64,56,56]", or "" (NULL: "") */
  const char *kernel; /* the runtime function it calls */
  int64_t macs;       /* multiply-accumulates per inference; 0 for other kernels */
  double ms;          /* milliseconds per inference */
  uint64_t cycles;    /* C7x cycles per inference (with_cycles) */
} tidsp_profile_row;

/* The table of rows[0 .. n); latency_ms > 0 is the whole inference's time,
 * printed beside the layers' sum; with_cycles adds the cycles column. */
size_t tidsp_profile_format_table(char *buf, size_t size, const tidsp_profile_row *rows, int32_t n,
                                  double latency_ms, int32_t with_cycles);

/* The same rows as CSV: a header line (index, layer, module, output,
 * kernel, macs, [cycles,] time_ms, share, gmac_per_s), then one line per layer; fields
 * holding , " or a line break are quoted. */
size_t tidsp_profile_format_csv(char *buf, size_t size, const tidsp_profile_row *rows, int32_t n,
                                int32_t with_cycles);

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_PROFILE_REPORT_H */
