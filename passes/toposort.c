/*
 * toposort.c - `toposort`: put the node list of every graph in topological
 * order (stable: a graph already in order is unchanged, ties keep file
 * order). Some converters and older runtimes require sorted files.
 *
 * Keeps intact: every node, edge, name and attribute; only the order of the
 * node lists changes. A cycle is an error naming a node on it.
 */
#include "pass_impl.h"

static sg_status sort_graph(sg_graph *g, void *arg)
{
    struct sg_pass_report *rep = ((void **)arg)[0];
    struct sg_diag *diag = ((void **)arg)[1];
    uint32_t k = 0;
    for (sg_node *n = g->first; n; n = n->next)
        n->mark = k++;
    sg_status st = sg_graph_sort(g, false, diag);
    if (st)
        return st;
    k = 0;
    for (sg_node *n = g->first; n; n = n->next, k++)
        if (n->mark != k)
            sg_report_change(rep, "node moved", "%s", sg__node_label(n));
    return SG_OK;
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
