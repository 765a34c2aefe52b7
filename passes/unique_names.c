/*
 * unique_names.c - `unique-names`: make node names unique across the model,
 * name unnamed nodes, and rename values of subgraphs that repeat or shadow
 * a name defined elsewhere in the model (ONNX wants names in SSA form
 * across scopes).
 *
 * Keeps intact: the first holder of every name (main graph first, then
 * subgraphs depth first), so main graph inputs and outputs never change;
 * every edge, including reads of enclosing-scope values.
 */
#include "pass_impl.h"

#include <string.h>

enum { OPT_NODES, OPT_UNNAMED, OPT_VALUES, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_NODES] = {"nodes", SG_OPT_BOOL, "true", "rename nodes whose name is already taken"},
    [OPT_UNNAMED] = {"unnamed", SG_OPT_BOOL, "true", "name unnamed nodes after their op type"},
    [OPT_VALUES] = {"values", SG_OPT_BOOL, "true",
                    "rename subgraph values that repeat a name defined in another graph"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    struct sg__strmap nodes, values;
};

static sg_status define_value(struct ctx *c, sg_value *v)
{
    if (!v || v->outer)
        return SG_OK;
    if (sg__strmap_get(&c->values, v->name)) {
        const char *old = v->name;
        sg_status st = sg_value_rename_fresh(v, old, c->diag);
        if (st)
            return st;
        sg_report_change(c->rep, "value renamed", "%s -> %s", old, v->name);
    }
    return sg__strmap_put(&c->values, v->name, v) ? sg_diag_set(c->diag, SG_ENOMEM, "out of memory")
                                                  : SG_OK;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    sg_status st;
    if (c->opts[OPT_VALUES].b) {
        for (uint32_t i = 0; i < g->n_inputs; i++)
            if ((st = define_value(c, g->inputs[i])))
                return st;
        for (uint32_t i = 0; i < g->n_inits; i++)
            if (!(g->inits[i]->flags & SG_VALUE_INPUT) && (st = define_value(c, g->inits[i])))
                return st;
        for (sg_node *n = g->first; n; n = n->next)
            for (uint32_t i = 0; i < n->n_outputs; i++)
                if ((st = define_value(c, n->outputs[i])))
                    return st;
    }
    for (sg_node *n = g->first; n; n = n->next) {
        bool unnamed = !n->name || !*n->name;
        if (unnamed && c->opts[OPT_UNNAMED].b) {
            const char *name = sg_model_fresh_name(g->model, n->op_type);
            if (!name)
                return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            if ((st = sg_node_rename(n, name, c->diag)))
                return st;
            sg_report_change(c->rep, "unnamed node named", "%s", name);
        } else if (!unnamed && c->opts[OPT_NODES].b && sg__strmap_get(&c->nodes, n->name)) {
            const char *old = n->name;
            const char *name = sg_model_fresh_name(g->model, old);
            if (!name)
                return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            if ((st = sg_node_rename(n, name, c->diag)))
                return st;
            sg_report_change(c->rep, "node renamed", "%s -> %s", old, name);
        }
        if (n->name && *n->name && sg__strmap_put(&c->nodes, n->name, n))
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    }
    return SG_OK;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    struct ctx c = {.opts = opts, .rep = rep, .diag = diag};
    sg_status st = m->graph ? sg__walk_graphs(m->graph, run_graph, &c) : SG_OK;
    sg__strmap_free(&c.nodes);
    sg__strmap_free(&c.values);
    return st;
}

const struct sg_pass sg_pass_unique_names = {
    .name = "unique-names",
    .summary = "make node names unique, name unnamed nodes, unshadow subgraph values",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
