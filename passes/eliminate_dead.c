/*
 * eliminate_dead.c - `eliminate-dead`: remove nodes whose results reach no
 * graph output, initializers nothing reads, value_info entries of values
 * that no longer exist and, on request, unused graph inputs.
 *
 * Keeps intact: every graph output and what it depends on, including what
 * subgraphs read from enclosing graphs; subgraph inputs (they are positional
 * parameters of If/Loop/Scan); main graph inputs unless `inputs: true`.
 * Subgraphs are cleaned first, so an outer node that only fed a dead
 * subgraph computation is found dead too.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <string.h>

enum { OPT_INPUTS, OPT_INITIALIZERS, OPT_VALUE_INFO, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_INPUTS] = {"inputs", SG_OPT_BOOL, "false",
                    "also remove main graph inputs nothing reads (changes the interface)"},
    [OPT_INITIALIZERS] = {"initializers", SG_OPT_BOOL, "true", "remove unused initializers"},
    [OPT_VALUE_INFO] = {"value_info", SG_OPT_BOOL, "true",
                        "remove value_info entries of values that do not exist"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

enum { DEAD = 0, LIVE = 1 };

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    sg_node **stack;
    size_t n, cap;
    sg_graph *g;
    sg_status st;
};

static void make_live(struct ctx *c, sg_node *p)
{
    if (!p || p->graph != c->g || p->mark == LIVE || c->st)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        sg_node **g = sg_realloc(c->stack, cap * sizeof *g);
        if (!g) {
            c->st = SG_ENOMEM;
            return;
        }
        c->stack = g;
        c->cap = cap;
    }
    p->mark = LIVE;
    c->stack[c->n++] = p;
}

static sg_status live_capture(sg_value *v, void *arg)
{
    struct ctx *c = arg;
    if (v->outer)
        make_live(c, v->outer->producer);
    return c->st;
}

static sg_status captures_of(sg_graph *sub, void *arg)
{
    return sg_graph_for_each_value(sub, live_capture, arg);
}

static sg_status clean_graph(sg_graph *g, struct ctx *c);

static sg_status clean_sub(sg_graph *sub, void *arg)
{
    return clean_graph(sub, arg);
}

static sg_status clean_graph(sg_graph *g, struct ctx *c)
{
    sg_status st;
    for (sg_node *n = g->first; n; n = n->next)
        if ((st = sg_node_for_each_subgraph(n, clean_sub, c)))
            return st;
    /* Order first: sg_graph_toposort uses node->mark too. */
    sg_node **order = NULL;
    uint32_t total = g->n_nodes;
    if (total) {
        if (!(order = sg_malloc(total * sizeof *order)))
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        if ((st = sg_graph_toposort(g, order, c->diag))) {
            sg_free(order);
            return st;
        }
    }
    sg_graph *saved = c->g;
    c->g = g;
    for (sg_node *n = g->first; n; n = n->next)
        n->mark = DEAD;
    for (uint32_t i = 0; i < g->n_outputs; i++)
        make_live(c, g->outputs[i]->producer);
    while (c->n && !c->st) {
        sg_node *n = c->stack[--c->n];
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i])
                make_live(c, n->inputs[i]->producer);
        sg_node_for_each_subgraph(n, captures_of, c);
    }
    c->g = saved;
    /* Remove dead nodes consumers first: reverse topological order. */
    for (uint32_t k = total; !c->st && !st && k-- > 0;) {
        sg_node *n = order[k];
        if (n->mark == LIVE)
            continue;
        const char *label = sg__node_label(n);
        if (!(st = sg_node_remove(n, c->diag)))
            sg_report_change(c->rep, "dead node removed", "%s", label);
    }
    sg_free(order);
    if (c->st)
        return sg_diag_set(c->diag, c->st, "out of memory");
    if (st)
        return st;

    bool main = g->kind == SG_GRAPH_MAIN;
    if (c->opts[OPT_INITIALIZERS].b) {
        for (uint32_t i = g->n_inits; i-- > 0;) {
            sg_value *v = g->inits[i];
            if (v->n_uses || (v->flags & SG_VALUE_OUTPUT))
                continue;
            if ((v->flags & SG_VALUE_INPUT) && !(main && c->opts[OPT_INPUTS].b))
                continue; /* also an input: part of the interface */
            const char *name = v->name;
            if (v->flags & SG_VALUE_INPUT)
                sg_graph_remove_input(g, v);
            if ((st = sg_value_set_initializer(v, NULL)) || (st = sg_value_remove(v)))
                return sg_diag_set(c->diag, st, "cannot remove initializer '%s'", name);
            sg_report_change(c->rep, "unused initializer removed", "%s", name);
        }
    }
    if (main && c->opts[OPT_INPUTS].b) {
        for (uint32_t i = g->n_inputs; i-- > 0;) {
            sg_value *v = g->inputs[i];
            if (v->n_uses || (v->flags & SG_VALUE_OUTPUT) || v->init)
                continue;
            const char *name = v->name;
            sg_graph_remove_input(g, v);
            if ((st = sg_value_remove(v)))
                return sg_diag_set(c->diag, st, "cannot remove input '%s'", name);
            sg_report_change(c->rep, "unused input removed", "%s", name);
        }
    }
    if (c->opts[OPT_VALUE_INFO].b) {
        for (uint32_t i = g->n_value_info; i-- > 0;) {
            sg_value *v = g->value_info[i];
            if (v->producer || v->init || v->sparse_init || v->outer || v->n_uses ||
                (v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT)))
                continue;
            const char *name = v->name;
            if ((st = sg_value_remove(v)))
                return sg_diag_set(c->diag, st, "cannot remove value_info '%s'", name);
            sg_report_change(c->rep, "stale value_info removed", "%s", name);
        }
    }
    return SG_OK;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    struct ctx c = {.opts = opts, .rep = rep, .diag = diag};
    sg_status st = m->graph ? clean_graph(m->graph, &c) : SG_OK;
    sg_free(c.stack);
    return st;
}

const struct sg_pass sg_pass_eliminate_dead = {
    .name = "eliminate-dead",
    .summary = "remove nodes, initializers and value_info that reach no graph output",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
