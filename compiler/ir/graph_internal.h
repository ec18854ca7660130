/*
 * graph_internal.h — what graph.c shares with graph_cleanup.c and no one
 * else: freeing one value or node with the graph's bookkeeping (constant
 * bytes held), and rebuilding the reader index after ids are renumbered.
 */
#ifndef CSTATIC_IR_GRAPH_INTERNAL_H
#define CSTATIC_IR_GRAPH_INTERNAL_H

#include "ir.h"

void cs_graph_rebuild_uses_(cs_graph *g);
void cs_graph_drop_value_(cs_graph *g, cs_value *v);
void cs_graph_drop_node_(cs_node *n);

#endif
