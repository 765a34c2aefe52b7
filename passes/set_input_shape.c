/*
 * set_input_shape.c - `set-input-shape`: give main graph inputs new shapes,
 * written like ATC's --input_shape: "x:4,77,40;mask:4,-1" (-1 or ? for an
 * unknown dim, a name for a symbolic one).
 *
 * Keeps intact: element types and ranks (a shape of another rank is an
 * error), every node and value. Shapes recorded for values computed from a
 * changed input (graph outputs, value_info, at any depth) may now be wrong:
 * their dims are cleared, then recomputed by shape inference
 * (sg__recompute_shapes); what it cannot tell stays unknown.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <string.h>

enum { OPT_SHAPES, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_SHAPES] = {"shapes", SG_OPT_SHAPES, NULL,
                    "NAME:d0,d1,...;NAME2:... (-1 or ? unknown, a name is symbolic)"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

static bool same_dim(const sg_dim *d, const struct sg_dim_spec *s)
{
    if (d->kind != s->kind)
        return false;
    if (d->kind == SG_DIM_VALUE)
        return d->value == s->value;
    if (d->kind == SG_DIM_PARAM)
        return strcmp(d->param, s->param) == 0;
    return true;
}

static sg_value *real_input(sg_graph *g, const char *name)
{
    sg_value *v = sg_graph_value(g, name);
    return v && (v->flags & SG_VALUE_INPUT) && !v->init ? v : NULL;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    const struct sg_opt_value *o = &opts[OPT_SHAPES];
    if (!o->present || !o->n_shapes)
        return sg_diag_set(diag, SG_EINVAL, "needs shapes=NAME:d0,d1,...");
    sg_graph *g = m->graph;
    if (!g)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    /* Check everything before changing anything. */
    for (size_t i = 0; i < o->n_shapes; i++) {
        const struct sg_shape_spec *s = &o->shapes[i];
        sg_value *v = real_input(g, s->name);
        if (!v)
            return sg_diag_set(diag, SG_ENOTFOUND, "the model has no input '%s'", s->name);
        const sg_type *t = v->type;
        if (t && t->kind != SG_TYPE_TENSOR)
            return sg_diag_set(diag, SG_ETYPE, "input '%s' is not a tensor", s->name);
        if (t && t->shape && t->shape->rank != s->rank)
            return sg_diag_set(diag, SG_ESHAPE, "input '%s' has rank %u; the shape gives %u dims",
                               s->name, t->shape->rank, s->rank);
    }
    sg_value **changed = sg_malloc((o->n_shapes + 1) * sizeof *changed);
    if (!changed)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    size_t n_changed = 0;
    sg_status st = SG_OK;
    for (size_t i = 0; i < o->n_shapes && !st; i++) {
        const struct sg_shape_spec *s = &o->shapes[i];
        sg_value *v = real_input(g, s->name);
        const sg_type *t = v->type;
        bool same = t && t->shape;
        for (uint32_t k = 0; same && k < s->rank; k++)
            same = same_dim(&t->shape->dims[k], &s->dims[k]);
        if (same) {
            sg_report_info(rep, "unchanged", "%s", s->name);
            continue;
        }
        char before[256], after[256];
        sg_type_format(t, before, sizeof before);
        sg_type *nt =
            sg_type_tensor(m, t && t->has_elem_type ? t->elem_type : 0, NULL, (int)s->rank);
        if (!nt) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            break;
        }
        nt->has_elem_type = t && t->has_elem_type;
        for (uint32_t k = 0; k < s->rank; k++) {
            sg_dim *d = &nt->shape->dims[k];
            d->kind = s->dims[k].kind;
            d->value = s->dims[k].value;
            if (d->kind == SG_DIM_PARAM && !(d->param = sg_model_strdup(m, s->dims[k].param)))
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        }
        sg_value_set_type(v, nt);
        changed[n_changed++] = v;
        sg_report_change(rep, "input shape set", "%s: %s -> %s", s->name, before,
                         sg_type_format(nt, after, sizeof after));
    }
    if (!st && n_changed) {
        struct sg__ptrset down = {0};
        st = sg__mark_downstream(changed, n_changed, &down);
        if (st)
            st = sg_diag_set(diag, st, "out of memory");
        else
            st = sg__clear_shapes(g, &down, rep, diag);
        sg__ptrset_free(&down);
        if (!st)
            st = sg__recompute_shapes(m, rep, diag);
    }
    sg_free(changed);
    return st;
}

const struct sg_pass sg_pass_set_input_shape = {
    .name = "set-input-shape",
    .summary = "set input shapes (ATC --input_shape syntax) and recompute the shapes downstream",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
