/*
 * inspect_shapes.c - the `inspect --shapes` listing (inspect_shapes.h).
 */
#include "inspect_shapes.h"
#include "sg_alloc.h"

#include <string.h>

sg_status sg__inspect_infer(sg_model *m, struct sg_shape_result *res, struct sg_diag *diag)
{
    return sg_graph_infer_shapes(m->graph, NULL, res, diag);
}

struct lister {
    FILE *out;
    struct sg_json *j;
    int depth;
};

static void list_graph(struct lister *l, sg_graph *g);

static sg_status list_sub(sg_graph *sub, void *arg)
{
    struct lister *l = arg;
    if (l->out)
        fprintf(l->out, "%*s[%s]\n", 2 + 2 * l->depth, "", sub->name ? sub->name : "subgraph");
    l->depth++;
    list_graph(l, sub);
    l->depth--;
    return SG_OK;
}

static void list_graph(struct lister *l, sg_graph *g)
{
    sg_node **order = sg_malloc((g->n_nodes + 1) * sizeof *order);
    if (!order || sg_graph_toposort(g, order, NULL)) {
        /* Listed in file order when it cannot be sorted. */
        uint32_t i = 0;
        if (order)
            for (sg_node *n = g->first; n; n = n->next)
                order[i++] = n;
        else
            return;
    }
    char buf[1024];
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node *n = order[i];
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            sg_value *v = n->outputs[k];
            if (!v)
                continue;
            sg_type_format(v->type, buf, sizeof buf);
            if (l->out) {
                fprintf(l->out, "%*s%-32s %-28s <- %s (%s)\n", 2 + 2 * l->depth, "", v->name,
                        v->type ? buf : "?", n->name ? n->name : "", n->op_type);
            } else {
                sg_json_object_begin(l->j);
                sg_json_key(l->j, "name");
                sg_json_string(l->j, v->name);
                sg_json_key(l->j, "type");
                sg_json_string(l->j, v->type ? buf : NULL);
                sg_json_key(l->j, "node");
                sg_json_string(l->j, n->name);
                sg_json_key(l->j, "op_type");
                sg_json_string(l->j, n->op_type);
                sg_json_key(l->j, "depth");
                sg_json_int(l->j, l->depth);
                sg_json_object_end(l->j);
            }
        }
        sg_node_for_each_subgraph(n, list_sub, l);
    }
    sg_free(order);
}

void sg__inspect_shapes_text(FILE *out, sg_model *m, const struct sg_shape_result *res)
{
    fprintf(out, "shapes:       %zu values, %zu with a known rank, %zu static\n", res->n_values,
            res->n_ranked, res->n_static);
    struct lister l = {.out = out};
    list_graph(&l, m->graph);
    if (res->n_conflicts) {
        fprintf(out, "shape conflicts: %zu\n", res->n_conflicts);
        for (size_t i = 0; i < res->n_conflicts; i++)
            fprintf(out, "  %s\n", res->conflicts[i]);
    }
    if (res->n_unknown) {
        fprintf(out, "not inferred: %zu\n", res->n_unknown);
        for (size_t i = 0; i < res->n_unknown; i++)
            fprintf(out, "  %s\n", res->unknown[i]);
    }
}

void sg__inspect_shapes_json(struct sg_json *j, sg_model *m, const struct sg_shape_result *res)
{
    sg_json_key(j, "values");
    sg_json_array_begin(j);
    struct lister l = {.j = j};
    list_graph(&l, m->graph);
    sg_json_array_end(j);
    sg_json_key(j, "shape_conflicts");
    sg_json_array_begin(j);
    for (size_t i = 0; i < res->n_conflicts; i++)
        sg_json_string(j, res->conflicts[i]);
    sg_json_array_end(j);
    sg_json_key(j, "shapes_not_inferred");
    sg_json_array_begin(j);
    for (size_t i = 0; i < res->n_unknown; i++)
        sg_json_string(j, res->unknown[i]);
    sg_json_array_end(j);
}
