/*
 * mmalib_report.h — the MMALIB offload report: for every conv / matmul /
 * add / max pool the -mmalib=1 passes looked at, the kernel it became or
 * the eligibility rule that declined it. Recorded into the graph's own report
 * (cs_graph.offload, ir/offload.h) by the passes of a pipeline run (reset
 * by its first MMALIB pass).
 *
 * One entry per layer: the int8 passes run first and look at every layer;
 * a later pass (int16, legalize) records only layers of its own kind (an
 * int16 QDQ pattern, a float op with no quantization), and its decision
 * replaces the int8 pass's "not int8" decline for that layer.
 */
#ifndef CSTATIC_MMALIB_REPORT_H
#define CSTATIC_MMALIB_REPORT_H

#include "ir.h"

/* The graph's report empties (the first MMALIB pass of a pipeline run). */
void cs_mmalib_report_reset(cs_graph *g);
/* Record one decision; reason NULL = offloaded to `kernel`. printf-style
 * reason. A layer (non-empty name) that already has an entry gets this one
 * in its place. */
void cs_mmalib_report_add(cs_graph *g, cs_offload_kind kind, const char *layer, const char *kernel,
                          double scale_rel_err, const char *reason_fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Give the (offloaded, int16) layer's entry its error bound at the
 * output range's full scale, qmax + 1 (cs_offload_entry). */
void cs_mmalib_report_bound(cs_graph *g, const char *layer, double full_scale);
/* Mark the (offloaded) layer's entry as the exact-requant path's: its
 * error bound before rounding (output LSB), the int8 kernel's |g| it
 * replaces, and the cost estimates (cs_offload_entry). */
void cs_mmalib_report_exact(cs_graph *g, const char *layer, double int8_rel_err, double err, double mma_cycles,
                            double int8_mma_cycles, double core_cycles);
/* Drop the entry of a layer that a later fusion consumed (e.g. an FC's bias
 * Add, which the residual-add pass had declined). */
void cs_mmalib_report_forget(cs_graph *g, const char *layer);
/* Record a channel-padding decision (mmalib_pad_channels.c). */
void cs_mmalib_report_pad(cs_graph *g, const cs_offload_pad *p);
#endif
