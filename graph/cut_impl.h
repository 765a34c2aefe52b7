/*
 * cut_impl.h - what extract.c, split.c and compose.c share (internal to
 * graph/).
 */
#ifndef SG_CUT_IMPL_H
#define SG_CUT_IMPL_H

#include "sg_cut.h"

#include <stdbool.h>
#include <stddef.h>

/* A growing array of pointers (sg_grow). */
struct sg__ptrvec {
    void **v;
    size_t n, cap;
};

sg_status sg__ptrvec_push(struct sg__ptrvec *pv, void *p);
void sg__ptrvec_free(struct sg__ptrvec *pv);

/* Call fn for every value of n's graph that a subgraph of n reads (the
 * outer values of the first-level captures of its subgraphs; deeper reads
 * are chained through them). */
typedef sg_status (*sg__outer_fn)(sg_value *outer, void *ctx);
sg_status sg__node_for_each_outer_read(sg_node *n, sg__outer_fn fn, void *ctx);

/* The node of main graph g whose subgraph (at any depth) defines a value
 * or node called `name`, or NULL: for "inside a subgraph" messages. */
sg_node *sg__graph_sub_owner_of(sg_graph *g, const char *name, bool node);

/* The main-graph node of a nested node, or n itself. */
sg_node *sg__top_node(sg_node *n);

/* A malloc'd "fmt" string, NULL when out of memory. */
char *sg__strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
