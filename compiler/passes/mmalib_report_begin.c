/*
 * MMALIBReportBegin — the first MMALIB pass: the graph's offload report
 * (match/mmalib_report.h) starts empty for this pipeline run, so the
 * passes after it record only this compile's decisions.
 */
#include "match/mmalib_report.h"
#include "pass_list.h"

cs_status pass_mmalib_report_begin(cs_graph *g, const cs_target *t) {
  (void)t;
  cs_mmalib_report_reset(g);
  return CS_OK;
}
