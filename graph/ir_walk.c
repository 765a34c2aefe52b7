/* ir_walk.c - visit every tensor of a model, wherever it is stored. */
#include "ir_impl.h"

struct walk {
    sg_tensor_fn fn;
    void *ctx;
};

static sg_status walk_graph(sg_graph *g, struct walk *w);

static sg_status walk_sparse(sg_sparse *s, struct walk *w)
{
    sg_status st = SG_OK;
    if (s->values)
        st = w->fn(s->values, w->ctx);
    if (!st && s->indices)
        st = w->fn(s->indices, w->ctx);
    return st;
}

static sg_status walk_attr(sg_attr *at, struct walk *w)
{
    sg_status st = SG_OK;
    if (at->t && (st = w->fn(at->t, w->ctx)))
        return st;
    for (size_t i = 0; i < at->n_tensors; i++)
        if ((st = w->fn(at->tensors[i], w->ctx)))
            return st;
    if (at->sparse && (st = walk_sparse(at->sparse, w)))
        return st;
    for (size_t i = 0; i < at->n_sparses; i++)
        if ((st = walk_sparse(at->sparses[i], w)))
            return st;
    if (at->g && (st = walk_graph(at->g, w)))
        return st;
    for (size_t i = 0; i < at->n_graphs; i++)
        if (at->graphs[i] && (st = walk_graph(at->graphs[i], w)))
            return st;
    return SG_OK;
}

static sg_status walk_graph(sg_graph *g, struct walk *w)
{
    sg_status st;
    for (uint32_t i = 0; i < g->n_inits; i++)
        if ((st = w->fn(g->inits[i]->init, w->ctx)))
            return st;
    for (uint32_t i = 0; i < g->n_sparse_inits; i++)
        if ((st = walk_sparse(g->sparse_inits[i], w)))
            return st;
    for (sg_node *n = g->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if ((st = walk_attr(n->attrs[a], w)))
                return st;
    return SG_OK;
}

sg_status sg_model_for_each_tensor(sg_model *m, sg_tensor_fn fn, void *ctx)
{
    struct walk w = {fn, ctx};
    sg_status st = m->graph ? walk_graph(m->graph, &w) : SG_OK;
    for (size_t i = 0; !st && i < m->n_functions; i++)
        if (m->functions[i].body)
            st = walk_graph(m->functions[i].body, &w);
    for (size_t i = 0; !st && i < m->n_training; i++) {
        if (m->training[i].initialization)
            st = walk_graph(m->training[i].initialization, &w);
        if (!st && m->training[i].algorithm)
            st = walk_graph(m->training[i].algorithm, &w);
    }
    return st;
}
