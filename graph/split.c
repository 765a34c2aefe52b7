/*
 * split.c - split a model into a front and a back half.
 *
 * The front is a set of main-graph nodes closed under "what they read"
 * (a prefix of the topological order, or what some tensors need); the
 * back is everything else. The halves are two extractions of the same
 * model: the front from the model's inputs to every tensor the back reads
 * from it, the back from those tensors (and the model's inputs it reads)
 * to the model's outputs. Values computable from constants alone do not
 * cross: the back recomputes them, so a shape computation never becomes
 * an interface tensor. Both halves run on the same kernels as the whole
 * model on the same values, which is why their run is the whole run bit
 * for bit.
 */
#include "cut_impl.h"
#include "ir_impl.h"
#include "sg_alloc.h"
#include "sg_io.h"

#include <stdlib.h>
#include <string.h>

enum { N_FRONT = 1u << 0 };
enum { V_CONST = 1u << 0, V_CROSS = 1u << 1, V_FOUT = 1u << 2 };

static const char *label(const sg_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

struct sp {
    sg_graph *g;
    sg_node **order;
    size_t n;
    struct sg__ptrvec stack, cross, fout, bout, ins;
    struct sg_diag *diag;
};

static sg_status outer_nonconst(sg_value *v, void *arg)
{
    *(bool *)arg &= (v->mark & V_CONST) != 0;
    return SG_OK;
}

static void mark_const(struct sp *s)
{
    sg_graph *g = s->g;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        g->inputs[i]->mark = 0;
    for (uint32_t i = 0; i < g->n_inits; i++)
        g->inits[i]->mark = V_CONST;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i]->init)
            g->inputs[i]->mark = 0; /* an overridable initializer is an input */
    for (size_t k = 0; k < s->n; k++) {
        sg_node *n = s->order[k];
        bool c = true;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] && !(n->inputs[i]->mark & V_CONST) && !n->inputs[i]->sparse_init)
                c = false;
        sg__node_for_each_outer_read(n, outer_nonconst, &c);
        for (uint32_t i = 0; i < n->n_outputs; i++)
            if (n->outputs[i])
                n->outputs[i]->mark = c ? V_CONST : 0;
    }
}

static sg_status push_front(sg_value *v, void *arg)
{
    struct sp *s = arg;
    if (v->producer && !(v->producer->mark & N_FRONT)) {
        v->producer->mark |= N_FRONT;
        return sg__ptrvec_push(&s->stack, v->producer);
    }
    return SG_OK;
}

/* Mark the front: what `tensors` need. */
static sg_status front_of_tensors(struct sp *s, const struct sg_split_spec *spec)
{
    sg_status st;
    for (size_t i = 0; i < spec->n_tensors; i++) {
        sg_value *v = sg_graph_value(s->g, spec->tensors[i]);
        if (!v || v->outer) {
            sg_node *owner = sg__graph_sub_owner_of(s->g, spec->tensors[i], false);
            if (owner)
                return sg_diag_set(s->diag, SG_EINVAL,
                                   "tensor '%s' is inside a subgraph of node '%s' (%s): a split "
                                   "must lie in the main graph",
                                   spec->tensors[i], label(owner), owner->op_type);
            char close[256];
            sg_graph_close_names(s->g, spec->tensors[i], false, close, sizeof close);
            return sg_diag_set(s->diag, SG_ENOTFOUND,
                               "no tensor named '%s' in the main graph%s%s%s", spec->tensors[i],
                               *close ? " (close names: " : "", close, *close ? ")" : "");
        }
        if ((st = push_front(v, s)))
            return st;
    }
    while (s->stack.n) {
        sg_node *n = s->stack.v[--s->stack.n];
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] && (st = push_front(n->inputs[i], s)))
                return st;
        if ((st = sg__node_for_each_outer_read(n, push_front, s)))
            return st;
    }
    return SG_OK;
}

static sg_status add_cross(struct sp *s, sg_value *v)
{
    if (!v || (v->mark & (V_CONST | V_CROSS)) || !v->producer || !(v->producer->mark & N_FRONT))
        return SG_OK;
    v->mark |= V_CROSS;
    return sg__ptrvec_push(&s->cross, v);
}

static sg_status outer_cross(sg_value *v, void *arg)
{
    return add_cross(arg, v);
}

static sg_status names_of(const struct sg__ptrvec *vals, const char ***out)
{
    *out = sg_calloc(vals->n + 1, sizeof **out);
    if (!*out)
        return SG_ENOMEM;
    for (size_t i = 0; i < vals->n; i++)
        (*out)[i] = ((sg_value *)vals->v[i])->name;
    return SG_OK;
}

static void free_sp(struct sp *s)
{
    sg_free(s->order);
    sg__ptrvec_free(&s->stack);
    sg__ptrvec_free(&s->cross);
    sg__ptrvec_free(&s->fout);
    sg__ptrvec_free(&s->bout);
    sg__ptrvec_free(&s->ins);
}

sg_status sg_model_split(sg_model *front, sg_model *back, const struct sg_split_spec *spec,
                         struct sg_split_report *rep, struct sg_diag *diag)
{
    if (rep)
        memset(rep, 0, sizeof *rep);
    if (!front->graph || !back->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    struct sp s = {.g = front->graph, .diag = diag};
    sg_status st = sg_model_topo_nodes(front, &s.order, &s.n, diag);
    if (st)
        return st;
    for (size_t k = 0; k < s.n; k++)
        s.order[k]->mark = 0;
    size_t n_front = 0;
    switch (spec->kind) {
    case SG_SPLIT_AT_NODE: {
        size_t at = s.n;
        for (size_t k = 0; k < s.n && at == s.n; k++)
            if (s.order[k]->name && strcmp(s.order[k]->name, spec->at) == 0)
                at = k;
        if (at == s.n) {
            sg_node *owner = sg__graph_sub_owner_of(s.g, spec->at, true);
            if (owner)
                st = sg_diag_set(diag, SG_EINVAL,
                                 "node '%s' is inside a subgraph of node '%s' (%s): a split must "
                                 "lie in the main graph",
                                 spec->at, label(owner), owner->op_type);
            else {
                char close[256];
                sg_graph_close_names(s.g, spec->at, true, close, sizeof close);
                st = sg_diag_set(diag, SG_ENOTFOUND, "no node named '%s' in the main graph%s%s%s",
                                 spec->at, *close ? " (close names: " : "", close,
                                 *close ? ")" : "");
            }
            goto out;
        }
        n_front = at + 1;
        if (n_front == s.n) {
            st = sg_diag_set(diag, SG_ERANGE,
                             "node '%s' is the last node in topological order: the back half "
                             "would be empty",
                             spec->at);
            goto out;
        }
        break;
    }
    case SG_SPLIT_INDEX:
        if (spec->index < 1 || spec->index >= s.n) {
            st = sg_diag_set(diag, SG_ERANGE,
                             "index %zu is out of range: the main graph has %zu nodes, so the "
                             "index must be 1 to %zu",
                             spec->index, s.n, s.n > 1 ? s.n - 1 : 0);
            goto out;
        }
        n_front = spec->index;
        break;
    case SG_SPLIT_TENSORS:
        if ((st = front_of_tensors(&s, spec)))
            goto out;
        break;
    default:
        st = sg_diag_set(diag, SG_EINVAL, "unknown split kind");
        goto out;
    }
    if (spec->kind != SG_SPLIT_TENSORS)
        for (size_t k = 0; k < n_front; k++)
            s.order[k]->mark = N_FRONT;
    size_t nf = 0;
    for (size_t k = 0; k < s.n; k++)
        nf += s.order[k]->mark & N_FRONT;
    if (nf == 0 || nf == s.n) {
        st = sg_diag_set(diag, SG_ERANGE, "the split leaves the %s half empty",
                         nf ? "back" : "front");
        goto out;
    }
    mark_const(&s);
    /* What crosses: non-constant values of the front that back nodes read. */
    for (size_t k = 0; k < s.n && !st; k++) {
        sg_node *n = s.order[k];
        if (n->mark & N_FRONT)
            continue;
        for (uint32_t i = 0; i < n->n_inputs && !st; i++)
            st = add_cross(&s, n->inputs[i]);
        if (!st)
            st = sg__node_for_each_outer_read(n, outer_cross, &s);
    }
    if (st)
        goto nomem;
    /* Outputs: the front's are the crossing tensors and the model outputs
     * it computes (or passes through); the back's, the rest. */
    for (size_t i = 0; i < s.cross.n && !st; i++) {
        ((sg_value *)s.cross.v[i])->mark |= V_FOUT;
        st = sg__ptrvec_push(&s.fout, s.cross.v[i]);
    }
    for (uint32_t i = 0; i < s.g->n_outputs && !st; i++) {
        sg_value *v = s.g->outputs[i];
        bool in_front = !v->producer || (v->producer->mark & N_FRONT);
        if (in_front && !(v->mark & V_FOUT)) {
            v->mark |= V_FOUT;
            st = sg__ptrvec_push(&s.fout, v);
        } else if (!in_front) {
            st = sg__ptrvec_push(&s.bout, v);
        }
    }
    for (uint32_t i = 0; i < s.g->n_inputs && !st; i++)
        if (!s.g->inputs[i]->init)
            st = sg__ptrvec_push(&s.ins, s.g->inputs[i]);
    if (st)
        goto nomem;
    if (!s.bout.n) {
        st = sg_diag_set(diag, SG_ERANGE,
                         "the back half would compute none of the model's outputs: every one is "
                         "computed before the cut");
        goto out;
    }
    if (rep) {
        rep->crossing = calloc(s.cross.n ? s.cross.n : 1, sizeof *rep->crossing);
        if (!rep->crossing)
            goto nomem;
        for (size_t i = 0; i < s.cross.n; i++) {
            if (!(rep->crossing[i] = sg_strdup(((sg_value *)s.cross.v[i])->name)))
                goto nomem;
            rep->n_crossing++;
        }
    }
    /* The names, as both copies spell them; the back's inputs are the
     * crossing tensors and the model's inputs (pruned to those it reads). */
    const char **in_names = NULL, **fout_names = NULL, **bout_names = NULL, **bin_names = NULL;
    struct sg__ptrvec bin = {0};
    for (size_t i = 0; i < s.cross.n && !st; i++)
        st = sg__ptrvec_push(&bin, s.cross.v[i]);
    for (size_t i = 0; i < s.ins.n && !st; i++)
        st = sg__ptrvec_push(&bin, s.ins.v[i]);
    if (st || names_of(&s.ins, &in_names) || names_of(&s.fout, &fout_names) ||
        names_of(&s.bout, &bout_names) || names_of(&bin, &bin_names)) {
        st = SG_ENOMEM;
    } else {
        /* The back first: its names are read from `front`, which the
         * front's own extraction then rewrites. */
        struct sg_extract_spec bs = {.inputs = bin_names,
                                     .n_inputs = bin.n,
                                     .outputs = bout_names,
                                     .n_outputs = s.bout.n,
                                     .typer = spec->typer,
                                     .prune_inputs = true};
        struct sg_extract_spec fs = {.inputs = in_names,
                                     .n_inputs = s.ins.n,
                                     .outputs = fout_names,
                                     .n_outputs = s.fout.n,
                                     .typer = spec->typer,
                                     .prune_inputs = true};
        struct sg_extract_report brep, frep;
        st = sg_model_extract(back, &bs, &brep, diag);
        if (st)
            sg_diag_prefix(diag, "back half");
        sg_extract_report_free(&brep);
        if (!st) {
            st = sg_model_extract(front, &fs, &frep, diag);
            if (st)
                sg_diag_prefix(diag, "front half");
            sg_extract_report_free(&frep);
        }
        if (!st && rep) {
            rep->n_front = front->graph->n_nodes;
            rep->n_back = back->graph->n_nodes;
        }
    }
    sg_free(in_names);
    sg_free(fout_names);
    sg_free(bout_names);
    sg_free(bin_names);
    sg__ptrvec_free(&bin);
    if (st == SG_ENOMEM)
        goto nomem;
    goto out;
nomem:
    st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
out:
    if (st && rep)
        sg_split_report_free(rep);
    free_sp(&s);
    return st;
}

void sg_split_report_free(struct sg_split_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_crossing; i++)
        sg_free(r->crossing[i]);
    free(r->crossing);
    memset(r, 0, sizeof *r);
}

sg_status sg_model_clone(sg_model *m, sg_model **out, struct sg_diag *diag)
{
    *out = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    sg_status st = sg_model_save_buffer(m, &buf, &len, diag);
    if (st)
        return st;
    struct sg_load_opts lo = {.skip_verify = true};
    st = sg_model_load_buffer(buf, len, m->dir, m->path ? m->path : "model", &lo, out, diag);
    sg_free(buf);
    if (!st && m->path) {
        (*out)->path = sg_strdup(m->path);
        if (!(*out)->path) {
            sg_model_free(*out);
            *out = NULL;
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        }
    }
    return st;
}
