/*
 * infer_shapes.c - `infer-shapes`: infer the element type and shape of
 * every value (sg_graph_infer_shapes, graph/sg_shape.h) and record them in
 * value_info, so that ATC, a cut, a single-op case or `inspect --shapes`
 * see intermediate shapes; graph outputs get their inferred shapes too.
 *
 * A recorded shape that contradicts inference is a conflict: listed as a
 * warning (the inferred shape is written), or with strict=true an error
 * naming the node and both shapes. Nodes whose outputs could not be shaped
 * (an op without a rule, unknown input shapes) are listed.
 *
 * Keeps intact: every node, edge, name and initializer; graph inputs' types.
 *
 * sg__recompute_shapes is the same inference for set-batch and
 * set-input-shape: it updates the shapes already recorded (graph outputs,
 * value_info) after they changed an input, and lists nothing new.
 */
#include "pass_impl.h"
#include "sg_alloc.h"
#include "sg_shape.h"

#include <string.h>

enum { OPT_STRICT, OPT_VALUE_INFO, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_STRICT] = {"strict", SG_OPT_BOOL, "false",
                    "a conflict or bad shape is an error, not a warning"},
    [OPT_VALUE_INFO] = {"value_info", SG_OPT_BOOL, "true",
                        "list every inferred value in value_info (false: update the recorded "
                        "ones only)"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

struct lister {
    bool add;
    size_t listed;
    sg_status st;
};

static sg_status list_value(sg_value *v, void *arg)
{
    struct lister *l = arg;
    if (v->outer || !v->producer || !v->type || (v->flags & (SG_VALUE_OUTPUT | SG_VALUE_INFO)))
        return SG_OK;
    const sg_type *t = v->type;
    if (t->kind != SG_TYPE_TENSOR || (!t->has_elem_type && !t->shape))
        return SG_OK;
    sg_status st = sg_graph_add_value_info(v->graph, v);
    l->listed += !st;
    return st;
}

static sg_status list_graph(sg_graph *g, void *arg)
{
    return sg_graph_for_each_value(g, list_value, arg);
}

static sg_status infer(sg_model *m, bool strict, bool add, struct sg_pass_report *rep,
                       struct sg_diag *diag)
{
    if (!m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    struct sg_shape_opts o = {.strict = strict};
    struct sg_shape_result res = {0};
    sg_status st = sg_graph_infer_shapes(m->graph, &o, &res, diag);
    for (size_t i = 0; !st && i < res.n_conflicts; i++)
        sg_report_warn(rep, "shape conflict", "%s", res.conflicts[i]);
    for (size_t i = 0; !st && i < res.n_unknown; i++)
        sg_report_info(rep, "shape not inferred", "%s", res.unknown[i]);
    if (!st && res.n_changed)
        for (size_t i = 0; i < res.n_changed; i++)
            sg_report_change(rep, "shape inferred", NULL);
    if (!st) {
        sg_report_info(rep, "values with a known rank", "%zu of %zu", res.n_ranked, res.n_values);
        sg_report_info(rep, "values with a static shape", "%zu of %zu", res.n_static, res.n_values);
    }
    struct lister l = {.add = add};
    if (!st && add) {
        st = sg__walk_graphs(m->graph, list_graph, &l);
        if (st)
            st = sg_diag_set(diag, st, "out of memory");
        for (size_t i = 0; i < l.listed; i++)
            sg_report_change(rep, "listed in value_info", NULL);
    }
    sg_shape_result_clear(&res);
    return st;
}

struct recorded {
    sg_value **vals;
    const sg_type **types;
    size_t n, cap;
};

static sg_status note_listed(sg_value *v, void *arg)
{
    struct recorded *r = arg;
    if (v->outer || !v->producer || !(v->flags & (SG_VALUE_OUTPUT | SG_VALUE_INFO)))
        return SG_OK;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        sg_value **nv = sg_realloc(r->vals, cap * sizeof *nv);
        if (!nv)
            return SG_ENOMEM;
        r->vals = nv;
        const sg_type **nt = sg_realloc(r->types, cap * sizeof *nt);
        if (!nt)
            return SG_ENOMEM;
        r->types = nt;
        r->cap = cap;
    }
    r->vals[r->n] = v;
    r->types[r->n++] = v->type;
    return SG_OK;
}

static sg_status note_graph(sg_graph *g, void *arg)
{
    return sg_graph_for_each_value(g, note_listed, arg);
}

sg_status sg__recompute_shapes(sg_model *m, struct sg_pass_report *rep, struct sg_diag *diag)
{
    struct recorded r = {0};
    sg_status st = m->graph ? sg__walk_graphs(m->graph, note_graph, &r) : SG_OK;
    if (st)
        st = sg_diag_set(diag, st, "out of memory");
    /* A report of its own: the caller's counts changes of recorded shapes only. */
    struct sg_pass_report inner = {.pass = rep->pass};
    if (!st)
        st = infer(m, false, false, &inner, diag);
    /* Bad shapes after the change are the caller's warnings (the new input
     * shape does not fit some node); nodes without a shape are findings. */
    for (size_t i = 0; !st && i < inner.n_items; i++) {
        const struct sg_report_item *it = &inner.items[i];
        bool bad = !strcmp(it->what, "warning: shape conflict");
        if (!bad && strcmp(it->what, "shape not inferred"))
            continue;
        for (size_t k = 0; k < it->n_names; k++) {
            if (bad)
                sg_report_warn(rep, "shape conflict after the change", "%s", it->names[k]);
            else
                sg_report_info(rep, it->what, "%s", it->names[k]);
        }
    }
    for (size_t i = 0; !st && i < r.n; i++)
        if (r.vals[i]->type != r.types[i]) {
            char a[256], b[256];
            sg_report_change(rep, "shape recomputed", "%s: %s -> %s", r.vals[i]->name,
                             sg_type_format(r.types[i], a, sizeof a),
                             sg_type_format(r.vals[i]->type, b, sizeof b));
        }
    if (!st && inner.oom)
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_pass_report_clear(&inner);
    sg_free(r.vals);
    sg_free(r.types);
    return st;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    return infer(m, opts[OPT_STRICT].b, opts[OPT_VALUE_INFO].b, rep, diag);
}

const struct sg_pass sg_pass_infer_shapes = {
    .name = "infer-shapes",
    .summary = "infer every value's type and shape into value_info (strict: conflicts fail)",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
