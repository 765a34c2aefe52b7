/*
 * toposort.c - stable topological order by depth-first search.
 *
 * Nodes are visited in file order and each one is emitted after the
 * producers of everything it reads, explicitly or through its subgraphs
 * (captures). A graph already in order therefore keeps its file order.
 * The search uses an explicit stack so that 100,000-node chains do not
 * overflow the C stack. node->mark is used as scratch.
 */
#include "ir_impl.h"
#include "sg_alloc.h"

#include <string.h>

enum { UNSEEN = 0, ACTIVE = 1, DONE = 2 };

struct frame {
    sg_node *node;
    uint32_t next; /* next dependency to look at */
    uint32_t n_deps;
    bool built;
    sg_node **deps; /* producers in this graph; NULL: read node->inputs directly */
};

static bool has_subgraph(const sg_node *n)
{
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a]->g || n->attrs[a]->n_graphs)
            return true;
    return false;
}

/* The next dependency of frame f, or NULL when all are seen. */
static sg_node *next_dep(struct frame *f)
{
    if (f->deps)
        return f->next < f->n_deps ? f->deps[f->next++] : NULL;
    while (f->next < f->node->n_inputs) {
        sg_value *v = f->node->inputs[f->next++];
        if (v && v->producer && v->producer->graph == f->node->graph)
            return v->producer;
    }
    return NULL;
}

struct deps_ctx {
    sg_graph *g;
    sg_node **buf;
    uint32_t n, cap;
    sg_status st;
};

static void deps_push(struct deps_ctx *c, sg_node *p)
{
    if (!p || p->graph != c->g || c->st)
        return;
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 8;
        sg_node **grown = sg_realloc(c->buf, cap * sizeof *grown);
        if (!grown) {
            c->st = SG_ENOMEM;
            return;
        }
        c->buf = grown;
        c->cap = cap;
    }
    c->buf[c->n++] = p;
}

static sg_status capture_deps(sg_graph *sub, void *ctx)
{
    struct deps_ctx *c = ctx;
    struct sg__strmap *map = sub->values_map;
    for (size_t i = 0; i < map->cap; i++) {
        sg_value *v = map->slots[i].key ? map->slots[i].value : NULL;
        if (v && v->outer)
            deps_push(c, v->outer->producer);
    }
    return c->st;
}

/* Producers n depends on: its inputs', then its captures'. A node without
 * subgraphs needs no list: its inputs are read in place. */
static sg_status build_deps(sg_node *n, struct frame *f)
{
    f->built = true;
    if (!has_subgraph(n))
        return SG_OK;
    struct deps_ctx c = {n->graph, NULL, 0, 0, SG_OK};
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i])
            deps_push(&c, n->inputs[i]->producer);
    sg_node_for_each_subgraph(n, capture_deps, &c);
    if (c.st) {
        sg_free(c.buf);
        return c.st;
    }
    f->deps = c.buf;
    f->n_deps = c.n;
    return SG_OK;
}

static const char *label(const sg_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

/* The list itself when it is already in order and no subgraph can add a
 * dependency the inputs do not show: two linear walks instead of a search. */
static bool list_order(sg_graph *g, sg_node **order)
{
    if (g->has_subgraphs)
        return false;
    uint32_t k = 0;
    for (sg_node *n = g->first; n; n = n->next)
        n->mark = ++k;
    for (sg_node *n = g->first; n; n = n->next)
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const sg_value *v = n->inputs[i];
            if (v && v->producer && v->producer->graph == g && v->producer->mark >= n->mark)
                return false;
        }
    k = 0;
    for (sg_node *n = g->first; n; n = n->next)
        order[k++] = n;
    return true;
}

sg_status sg_graph_toposort(sg_graph *g, sg_node **order, struct sg_diag *diag)
{
    if (list_order(g, order))
        return SG_OK;
    uint32_t count = 0;
    for (sg_node *n = g->first; n; n = n->next)
        n->mark = UNSEEN;
    struct frame *stack = sg_malloc((g->n_nodes + 1) * sizeof *stack);
    if (!stack)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory sorting graph");
    sg_status st = SG_OK;
    for (sg_node *root = g->first; root && !st; root = root->next) {
        if (root->mark != UNSEEN)
            continue;
        uint32_t depth = 0;
        stack[depth++] = (struct frame){root, 0, 0, false, NULL};
        root->mark = ACTIVE;
        while (depth && !st) {
            struct frame *f = &stack[depth - 1];
            if (!f->built && (st = build_deps(f->node, f)))
                break;
            sg_node *p = next_dep(f);
            if (p) {
                if (p->mark == DONE)
                    continue;
                if (p->mark == ACTIVE) {
                    st = sg_diag_set(diag, SG_ECYCLE,
                                     "graph '%s' has a cycle: node '%s' (%s) depends on itself "
                                     "through node '%s' (%s)",
                                     g->name ? g->name : "", label(p), p->op_type, label(f->node),
                                     f->node->op_type);
                    break;
                }
                p->mark = ACTIVE;
                stack[depth++] = (struct frame){p, 0, 0, false, NULL};
                continue;
            }
            f->node->mark = DONE;
            order[count++] = f->node;
            sg_free(f->deps);
            depth--;
        }
        while (depth)
            sg_free(stack[--depth].deps);
    }
    sg_free(stack);
    return st;
}

static sg_status sort_sub(sg_graph *sub, void *ctx)
{
    return sg_graph_sort(sub, true, ctx);
}

sg_status sg_graph_sort(sg_graph *g, bool recursive, struct sg_diag *diag)
{
    if (g->n_nodes == 0)
        return SG_OK;
    sg_node **order = sg_malloc(g->n_nodes * sizeof *order);
    if (!order)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory sorting graph");
    sg_status st = sg_graph_toposort(g, order, diag);
    if (!st) {
        uint32_t n = g->n_nodes;
        for (uint32_t i = 0; i < n; i++) {
            order[i]->prev = i ? order[i - 1] : NULL;
            order[i]->next = i + 1 < n ? order[i + 1] : NULL;
        }
        g->first = order[0];
        g->last = order[n - 1];
    }
    sg_free(order);
    if (!st && recursive)
        for (sg_node *n = g->first; n && !st; n = n->next)
            st = sg_node_for_each_subgraph(n, sort_sub, diag);
    return st;
}
