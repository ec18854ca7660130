/*
 * DCE — dead-code elimination between the fusions and legalization
 * (registry.c): the nodes whose outputs nothing reads, left behind by the
 * fusions that rerouted their consumers, are removed so that no later pass
 * lowers them (cs_graph_dce, ir/graph_cleanup.c).
 */
#include "pass_list.h"

cs_status pass_dce(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_graph_dce(g);
}
