/*
 * simplify.c - `simplify`: what onnx-simplifier does before ATC, in one
 * pass. Optionally set the input shapes (`shapes=`, set-input-shape's
 * syntax), then repeat, until a round changes nothing or `max_rounds`
 * rounds ran (the report says which): fold-constants (with Shape and Size
 * of static inputs), infer-shapes, Shape and Size of every value whose
 * inferred shape is static made constants, eliminate-dead, remove-identity,
 * merge-casts. The shape arithmetic of exported graphs (Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape) folds into constant shapes where the
 * shapes are static. Ends with infer-shapes, so every value is typed.
 *
 * Keeps intact: graph input and output names, the results (every step is
 * exact: folding runs the reference runtime, a folded Shape is the shape
 * inference proved), weights that nothing folds (never read: external data
 * stays mapped and unread).
 */
#include "pass_impl.h"
#include "sg_alloc.h"
#include "sg_dims.h"

#include <stdio.h>
#include <string.h>

enum { OPT_SHAPES, OPT_MAX_ROUNDS, OPT_MAX_BYTES, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_SHAPES] = {"shapes", SG_OPT_SHAPES, NULL,
                    "input shapes to set first, NAME:d0,d1,...;NAME2:... (set-input-shape)"},
    [OPT_MAX_ROUNDS] = {"max_rounds", SG_OPT_INT, "8", "bound on the rounds", 1, 1000},
    [OPT_MAX_BYTES] = {"max_bytes", SG_OPT_INT, "1048576",
                       "fold-constants' bound on a folded tensor (0: none)", 0, INT64_MAX},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

#define MAX_SUB_OPTIONS 16

/* The report of a step, merged into simplify's under "<pass>: <what>". */
static void merge_report(struct sg_pass_report *rep, const struct sg_pass_report *r)
{
    for (size_t i = 0; i < r->n_items; i++) {
        const struct sg_report_item *it = &r->items[i];
        bool warn = strncmp(it->what, "warning: ", 9) == 0;
        if (strncmp(it->what, "values with", 11) == 0)
            continue; /* infer-shapes' per-round totals */
        char heading[256];
        snprintf(heading, sizeof heading, "%s: %s", r->pass, warn ? it->what + 9 : it->what);
        for (size_t k = 0; k < it->count; k++) {
            const char *name = k < it->n_names ? it->names[k] : NULL;
            if (warn)
                sg_report_warn(rep, heading, name ? "%s" : NULL, name);
            else if (it->change)
                sg_report_change(rep, heading, name ? "%s" : NULL, name);
            else
                sg_report_info(rep, heading, name ? "%s" : NULL, name);
        }
    }
}

/*
 * Run pass `name` on m with options kv ("key", "value" pairs, NULL ended)
 * and `shapes` (for set-input-shape), merging its report into rep; its
 * number of changes in *changes.
 */
static sg_status step(sg_model *m, const char *name, const char *const *kv,
                      const struct sg_opt_value *shapes, sg_arena *a, struct sg_pass_report *rep,
                      size_t *changes, struct sg_diag *diag)
{
    const struct sg_pass *p = sg_pass_find(name);
    if (!p || p->n_options > MAX_SUB_OPTIONS)
        return sg_diag_set(diag, SG_EINVAL, "simplify: no pass '%s'", name);
    struct sg_opt_value vals[MAX_SUB_OPTIONS] = {{0}};
    sg_status st = SG_OK;
    for (size_t i = 0; kv && kv[i] && !st; i += 2) {
        int idx = sg__opt_index(p, kv[i], strlen(kv[i]));
        if (idx < 0)
            return sg_diag_set(diag, SG_EINVAL, "simplify: pass '%s' has no option '%s'", name,
                               kv[i]);
        st = sg__opt_parse(&p->options[idx], kv[i + 1], a, NULL, &vals[idx], diag);
        vals[idx].given = true;
    }
    if (shapes)
        vals[0] = *shapes;
    if (!st)
        st = sg__opt_defaults(p, vals, a, diag);
    struct sg_pass_report r = {.pass = p->name, .counts_only = rep->counts_only};
    if (!st)
        st = p->run(m, vals, &r, diag);
    if (!st && r.oom)
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    if (st)
        sg_diag_prefix(diag, "%s", p->name);
    else
        merge_report(rep, &r);
    *changes = r.changes;
    sg_pass_report_clear(&r);
    return st;
}

/* ------------------------------------------------- Shape and Size folded */

struct shape_fold {
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    size_t folded;
};

static bool static_dims(const sg_value *v, int64_t *dims, uint32_t *rank)
{
    const sg_type *t = v ? v->type : NULL;
    if (!t || t->kind != SG_TYPE_TENSOR || !t->shape || t->shape->rank > SG_MAX_RANK)
        return false;
    for (uint32_t i = 0; i < t->shape->rank; i++) {
        if (t->shape->dims[i].kind != SG_DIM_VALUE || t->shape->dims[i].value < 0)
            return false;
        dims[i] = t->shape->dims[i].value;
    }
    *rank = t->shape->rank;
    return true;
}

static sg_status fold_graph(sg_graph *g, void *arg)
{
    struct shape_fold *f = arg;
    for (sg_node *n = g->first; n; n = n->next) {
        bool shape = strcmp(n->op_type, "Shape") == 0, size = strcmp(n->op_type, "Size") == 0;
        if ((!shape && !size) || (n->domain && *n->domain && strcmp(n->domain, "ai.onnx")) ||
            n->n_inputs < 1 || n->n_outputs != 1 || !n->outputs[0])
            continue;
        sg_value *out = n->outputs[0];
        int64_t dims[SG_MAX_RANK];
        uint32_t rank;
        if (!out->n_uses || (out->flags & SG_VALUE_OUTPUT) ||
            !static_dims(n->inputs[0], dims, &rank))
            continue;
        int64_t data[SG_MAX_RANK], len = 0;
        if (shape) {
            int64_t r = rank, s = sg_attr_int(n, "start", 0), e = sg_attr_int(n, "end", r);
            s = s < 0 ? s + r : s;
            e = e < 0 ? e + r : e;
            s = s < 0 ? 0 : s > r ? r : s;
            e = e < 0 ? 0 : e > r ? r : e;
            for (int64_t i = s; i < e; i++)
                data[len++] = dims[i];
        } else {
            int64_t numel;
            if (!sg_dims_numel(dims, rank, &numel))
                continue;
            data[0] = numel;
        }
        sg_value *c;
        sg_status st = sg__add_const(g, out->name, SG_DTYPE_INT64, &len, shape ? 1 : 0, data,
                                     (size_t)(shape ? len : 1) * sizeof *data, &c, f->diag);
        if (!st)
            st = sg_value_replace_uses(out, c, false, f->diag);
        if (st)
            return st;
        sg_report_change(f->rep, "shape made constant", "%s", sg__node_label(n));
        f->folded++;
    }
    return SG_OK;
}

/* ----------------------------------------------------------------- run */

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    if (!m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    sg_arena *a = sg_arena_create();
    if (!a)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    char max_bytes[32];
    snprintf(max_bytes, sizeof max_bytes, "%lld", (long long)opts[OPT_MAX_BYTES].i);
    const char *const fold[] = {"shapes", "true", "max_bytes", max_bytes, NULL};
    const char *const shapes_kv[] = {"value_info", "true", NULL};
    size_t n;
    sg_status st = SG_OK;
    if (opts[OPT_SHAPES].present && opts[OPT_SHAPES].n_shapes)
        st = step(m, "set-input-shape", NULL, &opts[OPT_SHAPES], a, rep, &n, diag);
    int64_t rounds = 0, max_rounds = opts[OPT_MAX_ROUNDS].i;
    bool settled = false;
    while (!st && rounds < max_rounds && !settled) {
        rounds++;
        size_t changes = 0;
        st = step(m, "fold-constants", fold, NULL, a, rep, &n, diag);
        changes += n;
        if (!st)
            st = step(m, "infer-shapes", shapes_kv, NULL, a, rep, &n, diag);
        struct shape_fold f = {rep, diag, 0};
        if (!st)
            st = sg__walk_graphs(m->graph, fold_graph, &f);
        changes += f.folded;
        static const char *const tidy[] = {"eliminate-dead", "remove-identity", "merge-casts"};
        for (size_t i = 0; !st && i < sizeof tidy / sizeof tidy[0]; i++) {
            st = step(m, tidy[i], NULL, NULL, a, rep, &n, diag);
            changes += n;
        }
        settled = changes == 0;
    }
    if (!st)
        st = step(m, "infer-shapes", shapes_kv, NULL, a, rep, &n, diag);
    if (!st && settled)
        sg_report_info(rep, "rounds until nothing changed", "%lld", (long long)rounds);
    else if (!st)
        sg_report_warn(rep, "stopped at max_rounds with changes still to make", "%lld",
                       (long long)rounds);
    sg_arena_free(a);
    return st;
}

const struct sg_pass sg_pass_simplify = {
    .name = "simplify",
    .summary = "onnxsim in C: set input shapes, then fold constants and shapes, infer shapes, "
               "remove dead code, until nothing changes",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
