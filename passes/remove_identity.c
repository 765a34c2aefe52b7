/*
 * remove_identity.c - `remove-identity`: remove Identity nodes (and, on
 * request, inference-time Dropout nodes whose mask nobody reads), so that
 * readers take the data from where it is made.
 *
 * Keeps intact: the names of graph inputs and outputs at every level. An
 * Identity that produces a graph output is removed by letting its input's
 * producer make the output directly; when its input is itself a graph
 * input, output, initializer or outer-scope value, the Identity stays (the
 * report says why). Subgraph captures follow the rewired values.
 */
#include "pass_impl.h"

#include <string.h>

enum { OPT_DROPOUT, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_DROPOUT] = {"dropout", SG_OPT_BOOL, "false",
                     "also remove Dropout whose mask output is unused (inference graphs)"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
};

static bool default_domain(const sg_node *n)
{
    return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static bool removable(const sg_node *n, bool dropout)
{
    if (!default_domain(n) || n->n_inputs < 1 || !n->inputs[0] || n->n_outputs < 1 ||
        !n->outputs[0])
        return false;
    if (strcmp(n->op_type, "Identity") == 0)
        return n->n_outputs == 1;
    if (!dropout || strcmp(n->op_type, "Dropout") != 0)
        return false;
    /* Dropout is the identity at inference: no training_mode input (opset
     * 12+) and an unread mask. */
    if (n->n_inputs > 2 && n->inputs[2])
        return false;
    for (uint32_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] && (n->outputs[i]->n_uses || (n->outputs[i]->flags & SG_VALUE_OUTPUT)))
            return false;
    return true;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    for (sg_node *n = g->first, *next; n; n = next) {
        next = n->next;
        if (!removable(n, c->opts[OPT_DROPOUT].b))
            continue;
        const char *label = sg__node_label(n);
        const char *op = n->op_type;
        /* Dropout's unused mask output goes first so that n has one output. */
        for (uint32_t i = n->n_outputs; i-- > 1;)
            if (n->outputs[i]) {
                sg_value *mask = n->outputs[i];
                sg_status st = sg_node_set_output(n, i, NULL);
                if (!st)
                    st = sg_value_remove(mask);
                if (st)
                    return sg_diag_set(c->diag, st, "cannot drop the mask of '%s'", label);
            }
        bool kept;
        const char *why = NULL;
        sg_status st = sg__bypass_node(n, &kept, &why, c->diag);
        if (st)
            return st;
        if (kept)
            sg_report_info(c->rep, "kept", "%s (%s)", label, why);
        else
            sg_report_change(c->rep,
                             strcmp(op, "Identity") == 0 ? "Identity removed" : "Dropout removed",
                             "%s", label);
    }
    return SG_OK;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    struct ctx c = {opts, rep, diag};
    return m->graph ? sg__walk_graphs(m->graph, run_graph, &c) : SG_OK;
}

const struct sg_pass sg_pass_remove_identity = {
    .name = "remove-identity",
    .summary = "remove Identity nodes (and inference Dropout), keeping graph output names",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
