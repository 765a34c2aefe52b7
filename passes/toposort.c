/*
 * toposort.c - `toposort`: put the node list of every graph in topological
 * order (stable: a graph already in order is unchanged, ties keep file
 * order). Some converters and older runtimes require sorted files.
 *
 * Keeps intact: every node, edge, name and attribute; only the order of the
 * node lists changes. A cycle is an error naming a node on it.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

static sg_status sort_graph(sg_graph *g, void *arg)
{
    struct sg_pass_report *rep = ((void **)arg)[0];
    struct sg_diag *diag = ((void **)arg)[1];
    if (!g->n_nodes)
        return SG_OK;
    /* Remember the old order: sorting uses node->mark itself. */
    sg_node **old = sg_malloc(g->n_nodes * sizeof *old);
    if (!old)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    uint32_t k = 0;
    for (sg_node *n = g->first; n; n = n->next)
        old[k++] = n;
    sg_status st = sg_graph_sort(g, false, diag);
    k = 0;
    for (sg_node *n = g->first; !st && n; n = n->next, k++)
        if (old[k] != n)
            sg_report_change(rep, "node moved", "%s", sg__node_label(n));
    sg_free(old);
    return st;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    (void)opts;
    void *arg[2] = {rep, diag};
    return m->graph ? sg__walk_graphs(m->graph, sort_graph, arg) : SG_OK;
}

const struct sg_pass sg_pass_toposort = {
    .name = "toposort",
    .summary = "sort the nodes of every graph topologically (stable)",
    .run = run,
};
