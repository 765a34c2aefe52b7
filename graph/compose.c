/*
 * compose.c - concatenate two models: B's graph after A's, B's mapped
 * inputs reading A's outputs (onnx.compose.merge_models' semantics).
 *
 * B's nodes are rebuilt in A's main graph; what they hold that never
 * changes (strings, attributes other than graphs, types, tensors) is
 * shared, not copied, and A keeps B alive (sg_model.kept). Subgraphs are
 * rebuilt too, so their reads of outer names become captures of A's graph.
 * Names never change silently: a name of B that A also has is a collision,
 * all of them listed, unless the caller gives prefixes.
 */
#include "cut_impl.h"
#include "ir_impl.h"
#include "sg_alloc.h"

#include <stdlib.h>
#include <string.h>

struct cc {
    sg_model *a, *b;
    const struct sg_concat_spec *spec;
    struct sg_concat_report *rep;
    struct sg_diag *diag;
    sg_value **b_in, **a_out; /* the io map, resolved */
};

static const char *pfx(struct cc *c, const char *p, const char *name)
{
    if (!p || !*p || !name)
        return name;
    char *s = sg__strprintf("%s%s", p, name);
    const char *r = s ? sg_model_strdup(c->a, s) : NULL;
    sg_free(s);
    return r;
}

/* What B's name `name` is called in the result. */
static const char *b_name(struct cc *c, const char *name)
{
    for (size_t i = 0; i < c->spec->n_io_map; i++)
        if (strcmp(c->b_in[i]->name, name) == 0)
            return c->a_out[i]->name;
    return pfx(c, c->spec->prefix_b, name);
}

static sg_status add_collision(struct cc *c, const char *kind, const char *name)
{
    struct sg_concat_report *r = c->rep;
    if (!r)
        return SG_OK;
    char *s = sg__strprintf("%s '%s'", kind, name);
    char **g = s ? realloc(r->collisions, (r->n_collisions + 1) * sizeof *g) : NULL;
    if (!g) {
        sg_free(s);
        return SG_ENOMEM;
    }
    r->collisions = g;
    r->collisions[r->n_collisions++] = s;
    return SG_OK;
}

static sg_status copy_graph(struct cc *c, sg_graph *dst, sg_graph *src, bool main);

static sg_status copy_attrs(struct cc *c, sg_node *dst, const sg_node *src)
{
    sg_arena *ar = c->a->arena;
    for (uint32_t i = 0; i < src->n_attrs; i++) {
        sg_attr *at = src->attrs[i];
        if (at->type == SG_ATTR_GRAPH || at->type == SG_ATTR_GRAPHS) {
            sg_attr *na = sg_arena_alloc(ar, sizeof *na);
            if (!na)
                return SG_ENOMEM;
            *na = *at;
            size_t n = at->type == SG_ATTR_GRAPH ? 1 : at->n_graphs;
            sg_graph **gs = n ? sg_arena_alloc(ar, n * sizeof *gs) : NULL;
            if (n && !gs)
                return SG_ENOMEM;
            for (size_t k = 0; k < n; k++) {
                sg_graph *sg = at->type == SG_ATTR_GRAPH ? at->g : at->graphs[k];
                gs[k] = sg ? sg__graph_create(c->a, SG_GRAPH_SUB, dst->graph, dst) : NULL;
                if (sg && !gs[k])
                    return SG_ENOMEM;
                if (sg) {
                    gs[k]->name = sg->name;
                    gs[k]->doc = sg->doc;
                    sg_status st = copy_graph(c, gs[k], sg, false);
                    if (st)
                        return st;
                }
            }
            if (at->type == SG_ATTR_GRAPH)
                na->g = gs[0];
            else
                na->graphs = gs;
            dst->graph->has_subgraphs = true;
            at = na;
        }
        sg_status st = sg__ptr_push(ar, (void ***)&dst->attrs, &dst->n_attrs, &dst->cap_attrs, at);
        if (st)
            return st;
    }
    return SG_OK;
}

/* The value `name` (B's spelling) as dst's nodes see it. */
static sg_value *lookup(struct cc *c, sg_graph *dst, const char *name, bool main)
{
    const char *n = main ? b_name(c, name) : name;
    sg_value *v = sg_graph_value(dst, n);
    if (v)
        return v;
    /* an outer read: the name as the enclosing graphs spell it */
    const char *outer = b_name(c, name);
    return sg_graph_resolve(dst, outer, c->diag);
}

static sg_status new_value(struct cc *c, sg_graph *dst, const char *name, sg_type *type,
                           sg_value **out)
{
    sg_status st = sg_graph_add_value(dst, name, type, out, c->diag);
    if (st == SG_EDUP)
        return sg_diag_set(c->diag, SG_EDUP, "concat: the name '%s' is defined twice", name);
    return st;
}

static sg_status copy_graph(struct cc *c, sg_graph *dst, sg_graph *src, bool main)
{
    sg_status st;
    sg_value *v;
    for (uint32_t i = 0; i < src->n_inputs; i++) {
        sg_value *s = src->inputs[i];
        bool mapped = false;
        for (size_t k = 0; main && k < c->spec->n_io_map; k++)
            mapped |= c->b_in[k] == s;
        if (mapped)
            continue; /* reads the first model's output instead */
        if ((st = new_value(c, dst, main ? b_name(c, s->name) : s->name, s->type, &v)) ||
            (st = sg_graph_add_input(dst, v)))
            return st;
        if (s->init && (st = sg_value_set_initializer(v, s->init)))
            return st;
    }
    for (uint32_t i = 0; i < src->n_inits; i++) {
        sg_value *s = src->inits[i];
        if (s->flags & SG_VALUE_INPUT)
            continue;
        if ((st = new_value(c, dst, main ? b_name(c, s->name) : s->name, s->type, &v)) ||
            (st = sg_value_set_initializer(v, s->init)))
            return st;
    }
    if (src->n_sparse_inits)
        return sg_diag_set(c->diag, SG_EUNSUPPORTED,
                           "concat: the second model has sparse initializers");
    /* Nodes and their outputs first, so that any order of reads resolves. */
    size_t n = 0;
    for (sg_node *s = src->first; s; s = s->next)
        n++;
    sg_node **made = sg_calloc(n ? n : 1, sizeof *made);
    if (!made)
        return SG_ENOMEM;
    size_t k = 0;
    st = SG_OK;
    for (sg_node *s = src->first; s && !st; s = s->next, k++) {
        const char *name = main ? pfx(c, c->spec->prefix_b, s->name) : s->name;
        sg_node *d = sg_node_create(dst, s->op_type, s->domain, name, c->diag);
        if (!d) {
            st = SG_ENOMEM;
            break;
        }
        d->more = s->more;
        made[k] = d;
        for (uint32_t i = 0; i < s->n_outputs && !st; i++) {
            sg_value *so = s->outputs[i];
            if (!so) {
                st = sg_node_set_output(d, i, NULL);
                continue;
            }
            if (!(st = new_value(c, dst, main ? b_name(c, so->name) : so->name, so->type, &v)))
                st = sg_node_set_output(d, i, v);
        }
    }
    k = 0;
    for (sg_node *s = src->first; s && !st; s = s->next, k++) {
        sg_node *d = made[k];
        for (uint32_t i = 0; i < s->n_inputs && !st; i++) {
            sg_value *in = s->inputs[i] ? lookup(c, dst, s->inputs[i]->name, main) : NULL;
            if (s->inputs[i] && !in)
                st = sg_diag_set(c->diag, SG_EUNDEF, "concat: node '%s' reads '%s', undefined",
                                 s->name ? s->name : s->op_type, s->inputs[i]->name);
            else
                st = sg_node_set_input(d, i, in);
        }
        if (!st)
            st = copy_attrs(c, d, s);
    }
    sg_free(made);
    if (st)
        return st;
    for (uint32_t i = 0; i < src->n_outputs; i++) {
        sg_value *o = lookup(c, dst, src->outputs[i]->name, main);
        if (!o || (st = sg_graph_add_output(dst, o)))
            return o ? st
                     : sg_diag_set(c->diag, SG_EUNDEF, "concat: output '%s' undefined",
                                   src->outputs[i]->name);
    }
    for (uint32_t i = 0; i < src->n_value_info; i++) {
        sg_value *s = src->value_info[i];
        sg_value *d = sg_graph_value(dst, main ? b_name(c, s->name) : s->name);
        if (d && !(d->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT))) {
            if (!d->type)
                sg_value_set_type(d, s->type);
            if ((st = sg_graph_add_value_info(dst, d)))
                return st;
        }
    }
    return SG_OK;
}

static sg_value *main_value(sg_model *m, const char *name)
{
    sg_value *v = sg_graph_value(m->graph, name);
    return v && !v->outer ? v : NULL;
}

static sg_status check_names(struct cc *c, sg_graph *bg)
{
    sg_graph *ag = c->a->graph;
    sg_status st = SG_OK;
    /* B's main-graph values (all defined names) and nodes. */
    for (uint32_t i = 0; i < bg->n_inputs && !st; i++) {
        bool mapped = false;
        for (size_t k = 0; k < c->spec->n_io_map; k++)
            mapped |= c->b_in[k] == bg->inputs[i];
        if (!mapped && main_value(c->a, b_name(c, bg->inputs[i]->name)))
            st = add_collision(c, "tensor", b_name(c, bg->inputs[i]->name));
    }
    for (uint32_t i = 0; i < bg->n_inits && !st; i++)
        if (!(bg->inits[i]->flags & SG_VALUE_INPUT) &&
            main_value(c->a, b_name(c, bg->inits[i]->name)))
            st = add_collision(c, "tensor", b_name(c, bg->inits[i]->name));
    for (sg_node *n = bg->first; n && !st; n = n->next) {
        for (uint32_t i = 0; i < n->n_outputs && !st; i++)
            if (n->outputs[i] && main_value(c->a, b_name(c, n->outputs[i]->name)))
                st = add_collision(c, "tensor", b_name(c, n->outputs[i]->name));
        const char *nn = pfx(c, c->spec->prefix_b, n->name);
        if (!st && nn)
            for (sg_node *x = ag->first; x && !st; x = x->next)
                if (x->name && strcmp(x->name, nn) == 0)
                    st = add_collision(c, "node", nn);
    }
    return st;
}

static sg_status prefix_a(struct cc *c)
{
    const char *p = c->spec->prefix_a;
    if (!p || !*p)
        return SG_OK;
    sg_graph *g = c->a->graph;
    sg_status st = SG_OK;
    struct sg__ptrvec vals = {0};
    for (uint32_t i = 0; i < g->n_inputs && !st; i++)
        st = sg__ptrvec_push(&vals, g->inputs[i]);
    for (uint32_t i = 0; i < g->n_inits && !st; i++)
        if (!(g->inits[i]->flags & SG_VALUE_INPUT))
            st = sg__ptrvec_push(&vals, g->inits[i]);
    for (sg_node *n = g->first; n && !st; n = n->next)
        for (uint32_t i = 0; i < n->n_outputs && !st; i++)
            if (n->outputs[i])
                st = sg__ptrvec_push(&vals, n->outputs[i]);
    for (size_t i = 0; i < vals.n && !st; i++) {
        sg_value *v = vals.v[i];
        st = sg_value_rename(v, pfx(c, p, v->name), c->diag);
    }
    for (sg_node *n = g->first; n && !st; n = n->next)
        if (n->name && *n->name)
            st = sg_node_rename(n, pfx(c, p, n->name), c->diag);
    sg__ptrvec_free(&vals);
    return st;
}

static bool same_domain(const char *x, const char *y)
{
    return strcmp(sg__canon_domain(x ? x : ""), sg__canon_domain(y ? y : "")) == 0;
}

sg_status sg_model_concat(sg_model *a, sg_model *b, const struct sg_concat_spec *spec,
                          struct sg_concat_report *rep, struct sg_diag *diag)
{
    if (rep)
        memset(rep, 0, sizeof *rep);
    if (!a->graph || !b->graph)
        return sg_diag_set(diag, SG_EINVAL, "concat: a model has no graph");
    if (a->has_ir_version && b->has_ir_version && a->ir_version != b->ir_version)
        return sg_diag_set(diag, SG_EINVAL,
                           "concat: IR versions differ: the first model has %lld, the second %lld "
                           "(convert one first)",
                           (long long)a->ir_version, (long long)b->ir_version);
    for (size_t i = 0; i < b->n_opsets; i++)
        for (size_t j = 0; j < a->n_opsets; j++)
            if (same_domain(b->opsets[i].domain, a->opsets[j].domain) &&
                b->opsets[i].version != a->opsets[j].version)
                return sg_diag_set(
                    diag, SG_EINVAL,
                    "concat: the models import different versions of domain '%s': "
                    "%lld in the first, %lld in the second",
                    b->opsets[i].domain && *b->opsets[i].domain ? b->opsets[i].domain : "ai.onnx",
                    (long long)a->opsets[j].version, (long long)b->opsets[i].version);
    for (size_t i = 0; i < b->n_metadata; i++) {
        const char *av = sg_model_metadata(a, b->metadata[i].key);
        if (av && b->metadata[i].value && strcmp(av, b->metadata[i].value) != 0)
            return sg_diag_set(diag, SG_EINVAL,
                               "concat: metadata '%s' differs: '%s' in the first model, '%s' in "
                               "the second",
                               b->metadata[i].key, av, b->metadata[i].value);
    }
    struct cc c = {.a = a, .b = b, .spec = spec, .rep = rep, .diag = diag};
    c.b_in = sg_calloc(spec->n_io_map + 1, sizeof *c.b_in);
    c.a_out = sg_calloc(spec->n_io_map + 1, sizeof *c.a_out);
    sg_status st = (!c.b_in || !c.a_out) ? sg_diag_set(diag, SG_ENOMEM, "out of memory") : SG_OK;
    for (size_t i = 0; i < spec->n_io_map && !st; i++) {
        sg_value *o = main_value(a, spec->io_map[2 * i]);
        sg_value *in = main_value(b, spec->io_map[2 * i + 1]);
        if (!o || !(o->flags & SG_VALUE_OUTPUT))
            st = sg_diag_set(diag, SG_ENOTFOUND, "concat: '%s' is not an output of the first model",
                             spec->io_map[2 * i]);
        else if (!in || !(in->flags & SG_VALUE_INPUT) || in->init)
            st = sg_diag_set(diag, SG_ENOTFOUND, "concat: '%s' is not an input of the second model",
                             spec->io_map[2 * i + 1]);
        c.a_out[i] = o;
        c.b_in[i] = in;
    }
    if (!st)
        st = prefix_a(&c);
    if (!st && (st = check_names(&c, b->graph)) == SG_OK && rep && rep->n_collisions)
        st = sg_diag_set(diag, SG_EDUP,
                         "concat: %zu name%s of the second model %s also in the first (give "
                         "--prefix-a or --prefix-b)",
                         rep->n_collisions, rep->n_collisions == 1 ? "" : "s",
                         rep->n_collisions == 1 ? "is" : "are");
    for (size_t f = 0; f < b->n_functions && !st; f++)
        for (size_t g = 0; g < a->n_functions && !st; g++)
            if (strcmp(a->functions[g].name, b->functions[f].name) == 0 &&
                same_domain(a->functions[g].domain, b->functions[f].domain))
                st = sg_diag_set(
                    diag, SG_EDUP, "concat: both models define function '%s' (domain '%s')",
                    b->functions[f].name, b->functions[f].domain ? b->functions[f].domain : "");
    if (st)
        goto out;
    /* From here on A changes. */
    sg_model **kept = sg_realloc(a->kept, (a->n_kept + 1) * sizeof *kept);
    if (!kept) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    a->kept = kept;
    for (size_t i = 0; i < spec->n_io_map; i++)
        if (c.a_out[i]->flags & SG_VALUE_OUTPUT)
            sg_graph_remove_output(a->graph, c.a_out[i]);
    if ((st = copy_graph(&c, a->graph, b->graph, true)))
        goto out;
    for (size_t i = 0; i < b->n_opsets && !st; i++)
        if (!sg_model_opset(a, b->opsets[i].domain))
            st = sg_model_set_opset(a, b->opsets[i].domain, b->opsets[i].version);
    for (size_t i = 0; i < b->n_metadata && !st; i++)
        if (!sg_model_metadata(a, b->metadata[i].key))
            st = sg_model_set_metadata(a, b->metadata[i].key, b->metadata[i].value);
    if (!st && b->n_functions) {
        sg_function *fs = sg_arena_alloc(a->arena, (a->n_functions + b->n_functions) * sizeof *fs);
        if (!fs) {
            st = SG_ENOMEM;
        } else {
            memcpy(fs, a->functions, a->n_functions * sizeof *fs);
            memcpy(fs + a->n_functions, b->functions, b->n_functions * sizeof *fs);
            a->functions = fs;
            a->n_functions += b->n_functions;
            b->n_functions = 0; /* their bodies are a's now */
        }
    }
    if (st == SG_ENOMEM)
        st = sg_diag_set(diag, st, "out of memory");
    if (!st)
        st = sg_graph_verify(a->graph, diag);
    if (!st)
        a->kept[a->n_kept++] = b; /* b's strings, tensors and mappings live with a */
out:
    sg_free(c.b_in);
    sg_free(c.a_out);
    return st;
}

void sg_concat_report_free(struct sg_concat_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_collisions; i++)
        sg_free(r->collisions[i]);
    free(r->collisions);
    memset(r, 0, sizeof *r);
}
