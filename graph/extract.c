/*
 * extract.c - cut a model down to the region between tensors or nodes.
 *
 * The region is found by walking back from the outputs to the inputs over
 * every read, explicit (node inputs) and implicit (what an If/Loop/Scan
 * body reads from the main graph), so the result is exactly what computes
 * the outputs: onnx.utils.extract_model's node set, plus the producers of
 * outer-scope reads that it misses. A needed tensor that is neither an
 * input of the cut nor computable from constants is reported, every one of
 * them, instead of leaving a model that reads an undefined name.
 *
 * The model is rewritten in place, in one forward and one backward pass
 * over the main graph and one removal of everything else, so a cut costs
 * O(nodes + edges) whatever its size.
 */
#include "cut_impl.h"
#include "ir_impl.h"
#include "sg_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* value->mark bits during a cut (cleared on every main-graph value first) */
enum {
    V_LISTED = 1u << 0,   /* an input of the cut */
    V_CONST = 1u << 1,    /* computable from initializers alone */
    V_CLOSED = 1u << 2,   /* computable from the inputs of the cut and constants */
    V_SEEN = 1u << 3,     /* reached by an explicit read */
    V_SEEN_IMP = 1u << 4, /* reached by an implicit (subgraph) read */
    V_IMPLICIT = 1u << 5, /* an outer read outside the cut: becomes an input */
    V_USED = 1u << 6,     /* a listed input the region reads */
    V_OUT = 1u << 7,      /* an output of the cut */
    V_MISSING = 1u << 8,  /* reported missing */
};
enum { N_KEEP = 1u << 0 };

/* ------------------------------------------------------------- helpers */

sg_status sg__ptrvec_push(struct sg__ptrvec *pv, void *p)
{
    if (pv->n == pv->cap) {
        size_t cap = pv->cap ? pv->cap * 2 : 64;
        void **g = sg_grow(pv->v, pv->cap * sizeof *g, cap * sizeof *g);
        if (!g)
            return SG_ENOMEM;
        pv->v = g;
        pv->cap = cap;
    }
    pv->v[pv->n++] = p;
    return SG_OK;
}

void sg__ptrvec_free(struct sg__ptrvec *pv)
{
    sg_free(pv->v);
    pv->v = NULL;
    pv->n = pv->cap = 0;
}

char *sg__strprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0)
        return NULL;
    char *s = sg_malloc((size_t)len + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return s;
}

struct outer_walk {
    sg_graph *g;
    sg__outer_fn fn;
    void *ctx;
};

static sg_status outer_value(sg_value *v, void *arg)
{
    struct outer_walk *w = arg;
    if (v->outer && v->outer->graph == w->g)
        return w->fn(v->outer, w->ctx);
    return SG_OK;
}

static sg_status outer_sub(sg_graph *sub, void *arg)
{
    return sg_graph_for_each_value(sub, outer_value, arg);
}

sg_status sg__node_for_each_outer_read(sg_node *n, sg__outer_fn fn, void *ctx)
{
    if (!n->graph->has_subgraphs)
        return SG_OK;
    struct outer_walk w = {n->graph, fn, ctx};
    return sg_node_for_each_subgraph(n, outer_sub, &w);
}

struct owner_find {
    const char *name;
    bool node;
    bool found;
};

static sg_status find_in(sg_graph *sub, void *arg)
{
    struct owner_find *f = arg;
    if (f->node) {
        for (sg_node *n = sub->first; n; n = n->next)
            if (n->name && strcmp(n->name, f->name) == 0)
                f->found = true;
    } else {
        sg_value *v = sg_graph_value(sub, f->name);
        if (v && !v->outer)
            f->found = true;
    }
    for (sg_node *n = sub->first; n && !f->found; n = n->next)
        sg_node_for_each_subgraph(n, find_in, f);
    return SG_OK;
}

sg_node *sg__graph_sub_owner_of(sg_graph *g, const char *name, bool node)
{
    if (!g->has_subgraphs)
        return NULL;
    for (sg_node *n = g->first; n; n = n->next) {
        struct owner_find f = {name, node, false};
        sg_node_for_each_subgraph(n, find_in, &f);
        if (f.found)
            return n;
    }
    return NULL;
}

sg_node *sg__top_node(sg_node *n)
{
    while (n->graph->owner)
        n = n->graph->owner;
    return n;
}

static const char *label(const sg_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

/* ------------------------------------------------------ close names */

static size_t edit_distance(const char *a, const char *b, size_t *row, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (lb + 1 > cap)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

#define CLOSE_MAX 3

struct close {
    const char *name;
    size_t best[CLOSE_MAX];
    const char *pick[CLOSE_MAX];
    size_t row[256];
};

static void consider(struct close *c, const char *cand)
{
    if (!cand || strlen(cand) >= 255 || strcmp(cand, c->name) == 0)
        return;
    size_t d = edit_distance(c->name, cand, c->row, 256);
    size_t len = strlen(c->name);
    if (d > len / 2 + 2 && !strstr(cand, c->name))
        return;
    if (strstr(cand, c->name) && d > 2)
        d = 2; /* "Exp" for "Exp_12": a prefix is close */
    for (int i = 0; i < CLOSE_MAX; i++) {
        if (c->pick[i] && strcmp(c->pick[i], cand) == 0)
            return;
        if (!c->pick[i] || d < c->best[i]) {
            for (int k = CLOSE_MAX - 1; k > i; k--) {
                c->best[k] = c->best[k - 1];
                c->pick[k] = c->pick[k - 1];
            }
            c->best[i] = d;
            c->pick[i] = cand;
            return;
        }
    }
}

void sg_graph_close_names(const sg_graph *g, const char *name, bool nodes, char *buf, size_t size)
{
    struct close c = {.name = name};
    if (size)
        buf[0] = '\0';
    if (strlen(name) >= 255)
        return;
    for (sg_node *n = g->first; n; n = n->next) {
        if (nodes) {
            consider(&c, n->name);
            continue;
        }
        for (uint32_t i = 0; i < n->n_outputs; i++)
            if (n->outputs[i])
                consider(&c, n->outputs[i]->name);
    }
    if (!nodes) {
        for (uint32_t i = 0; i < g->n_inputs; i++)
            consider(&c, g->inputs[i]->name);
        for (uint32_t i = 0; i < g->n_inits; i++)
            consider(&c, g->inits[i]->name);
    }
    size_t used = 0;
    for (int i = 0; i < CLOSE_MAX && c.pick[i]; i++) {
        int w = snprintf(buf + used, size - used, "%s'%s'", i ? ", " : "", c.pick[i]);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

/* -------------------------------------------------------------- the cut */

struct cut {
    sg_model *m;
    sg_graph *g;
    const struct sg_extract_spec *spec;
    struct sg_extract_report *rep;
    struct sg_diag *diag;
    sg_node **order;
    size_t n_order;
    struct sg__ptrvec ins, outs, implicit, start; /* sg_value* / sg_node* */
    struct sg__ptrvec stack;                      /* (value, reader) pairs, reader first */
    sg_status st;
};

static sg_status name_error(struct cut *c, const char *what, const char *name, bool node)
{
    sg_node *owner = sg__graph_sub_owner_of(c->g, name, node);
    if (owner)
        return sg_diag_set(c->diag, SG_EINVAL,
                           "%s '%s' is inside a subgraph of node '%s' (%s): a cut must lie in "
                           "the main graph",
                           what, name, label(owner), owner->op_type);
    char close[256];
    sg_graph_close_names(c->g, name, node, close, sizeof close);
    return sg_diag_set(c->diag, SG_ENOTFOUND, "no %s named '%s' in the main graph%s%s%s", what,
                       name, *close ? " (close names: " : "", close, *close ? ")" : "");
}

static sg_status add_value(struct cut *c, struct sg__ptrvec *list, sg_value *v, uint32_t bit)
{
    if (v->mark & bit)
        return SG_OK;
    v->mark |= bit;
    return sg__ptrvec_push(list, v) ? sg_diag_set(c->diag, SG_ENOMEM, "out of memory") : SG_OK;
}

static sg_status clear_marks(struct cut *c)
{
    sg_graph *g = c->g;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        g->inputs[i]->mark = 0;
    for (uint32_t i = 0; i < g->n_inits; i++)
        g->inits[i]->mark = 0;
    for (uint32_t i = 0; i < g->n_outputs; i++)
        g->outputs[i]->mark = 0;
    for (uint32_t i = 0; i < g->n_value_info; i++)
        g->value_info[i]->mark = 0;
    for (size_t k = 0; k < c->n_order; k++) {
        sg_node *n = c->order[k];
        n->mark = 0;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i])
                n->inputs[i]->mark = 0;
        for (uint32_t i = 0; i < n->n_outputs; i++)
            if (n->outputs[i])
                n->outputs[i]->mark = 0;
    }
    return SG_OK;
}

/* Resolve the names of the spec into c->ins / c->outs (each once). */
static sg_status resolve_names(struct cut *c)
{
    const struct sg_extract_spec *s = c->spec;
    sg_status st;
    for (size_t i = 0; i < s->n_inputs; i++) {
        sg_value *v = sg_graph_value(c->g, s->inputs[i]);
        if (!v || v->outer)
            return name_error(c, "tensor", s->inputs[i], false);
        if ((st = add_value(c, &c->ins, v, V_LISTED)))
            return st;
    }
    for (size_t i = 0; i < s->n_outputs; i++) {
        sg_value *v = sg_graph_value(c->g, s->outputs[i]);
        if (!v || v->outer)
            return name_error(c, "tensor", s->outputs[i], false);
        if ((st = add_value(c, &c->outs, v, V_OUT)))
            return st;
    }
    if (!s->n_start_nodes && !s->n_end_nodes)
        return SG_OK;
    /* Node names: one scan of the main graph with the asked names in a
     * map (the graph's own node map would make later removals slow when
     * names repeat). */
    struct sg__strmap want = {0};
    size_t n_want = s->n_start_nodes + s->n_end_nodes;
    sg_node **found = sg_calloc(n_want ? n_want : 1, sizeof *found);
    if (!found)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    st = SG_OK;
    for (size_t i = 0; i < n_want && !st; i++) {
        const char *name =
            i < s->n_start_nodes ? s->start_nodes[i] : s->end_nodes[i - s->n_start_nodes];
        if (!sg__strmap_get(&want, name))
            st = sg__strmap_put(&want, name, (void *)(uintptr_t)(i + 1));
    }
    for (size_t k = 0; k < c->n_order && !st; k++) {
        sg_node *n = c->order[k];
        if (!n->name)
            continue;
        uintptr_t i = (uintptr_t)sg__strmap_get(&want, n->name);
        if (i && !found[i - 1])
            found[i - 1] = n;
    }
    for (size_t i = 0; i < n_want && !st; i++) {
        bool start = i < s->n_start_nodes;
        const char *name = start ? s->start_nodes[i] : s->end_nodes[i - s->n_start_nodes];
        sg_node *n = found[i];
        if (!n) {
            uintptr_t first = (uintptr_t)sg__strmap_get(&want, name);
            n = found[first - 1];
        }
        if (!n) {
            st = name_error(c, start ? "start node" : "end node", name, true);
            break;
        }
        if (start) {
            if (n->mark & N_KEEP) /* marks are clear here: the bit says "listed" */
                continue;
            n->mark |= N_KEEP;
            if ((st = sg__ptrvec_push(&c->start, n)))
                break;
            for (uint32_t j = 0; j < n->n_inputs && !st; j++) {
                sg_value *v = n->inputs[j];
                if (v && !(v->mark & V_CONST))
                    st = add_value(c, &c->ins, v, V_LISTED);
            }
        } else {
            for (uint32_t j = 0; j < n->n_outputs && !st; j++)
                if (n->outputs[j])
                    st = add_value(c, &c->outs, n->outputs[j], V_OUT);
        }
    }
    for (size_t i = 0; i < c->start.n; i++)
        ((sg_node *)c->start.v[i])->mark &= ~N_KEEP;
    sg__strmap_free(&want);
    sg_free(found);
    return st == SG_ENOMEM ? sg_diag_set(c->diag, st, "out of memory") : st;
}

struct const_ctx {
    bool all_const, all_closed;
};

static sg_status outer_const(sg_value *v, void *arg)
{
    struct const_ctx *k = arg;
    if (!(v->mark & V_CONST))
        k->all_const = false;
    return SG_OK;
}

/* Forward over the topological order: which values are constant, which
 * the cut can compute. `listed` false: constants only (the start nodes'
 * inputs are chosen from the non-constant ones before anything is listed). */
static sg_status mark_forward(struct cut *c, bool listed)
{
    sg_graph *g = c->g;
    for (uint32_t i = 0; i < g->n_inits; i++)
        g->inits[i]->mark |= V_CONST | V_CLOSED;
    for (size_t k = 0; k < c->n_order; k++) {
        sg_node *n = c->order[k];
        struct const_ctx kc = {true, true};
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            sg_value *v = n->inputs[i];
            if (!v)
                continue;
            if (v->sparse_init)
                v->mark |= V_CONST | V_CLOSED;
            if (!(v->mark & V_CONST))
                kc.all_const = false;
            if (!(v->mark & (V_CLOSED | V_CONST)))
                kc.all_closed = false;
        }
        sg_status st = sg__node_for_each_outer_read(n, outer_const, &kc);
        if (st)
            return sg_diag_set(c->diag, st, "out of memory");
        for (uint32_t i = 0; i < n->n_outputs; i++) {
            sg_value *v = n->outputs[i];
            if (!v)
                continue;
            if (kc.all_const)
                v->mark |= V_CONST | V_CLOSED;
            if (listed && kc.all_closed)
                v->mark |= V_CLOSED;
        }
    }
    return SG_OK;
}

static sg_status push(struct cut *c, sg_value *v, sg_node *reader, bool implicit)
{
    /* reader's low bit says "implicit" (nodes are aligned) */
    uintptr_t r = (uintptr_t)reader | (implicit ? 1u : 0u);
    if (sg__ptrvec_push(&c->stack, (void *)r) || sg__ptrvec_push(&c->stack, v))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    return SG_OK;
}

struct walk_ctx {
    struct cut *c;
    sg_node *n;
};

static sg_status push_outer(sg_value *v, void *arg)
{
    struct walk_ctx *w = arg;
    return push(w->c, v, w->n, true);
}

static sg_status add_missing(struct cut *c, sg_value *v, sg_node *reader)
{
    if (v->mark & V_MISSING)
        return SG_OK;
    v->mark |= V_MISSING;
    struct sg_extract_report *r = c->rep;
    if (!r)
        return SG_OK;
    char *s = reader ? sg__strprintf("%s (read by node '%s')", v->name, label(reader))
                     : sg__strprintf("%s", v->name);
    char **grown = s ? realloc(r->missing, (r->n_missing + 1) * sizeof *grown) : NULL;
    if (!grown) {
        sg_free(s);
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    }
    r->missing = grown;
    r->missing[r->n_missing++] = s;
    return SG_OK;
}

/* Back from the outputs: keep the producers of everything read. */
static sg_status walk_back(struct cut *c, size_t *n_missing)
{
    sg_status st;
    for (size_t i = c->outs.n; i-- > 0;)
        if ((st = push(c, c->outs.v[i], NULL, false)))
            return st;
    while (c->stack.n) {
        sg_value *v = c->stack.v[--c->stack.n];
        uintptr_t r = (uintptr_t)c->stack.v[--c->stack.n];
        bool implicit = r & 1u;
        sg_node *reader = (sg_node *)(r & ~(uintptr_t)1u);
        uint32_t seen = implicit ? V_SEEN_IMP : V_SEEN;
        if (v->mark & seen)
            continue;
        v->mark |= seen;
        if (v->mark & V_LISTED) {
            v->mark |= V_USED;
            continue;
        }
        if (v->init || v->sparse_init)
            continue;
        sg_node *p = v->producer;
        if (!p || (implicit && !(v->mark & V_CLOSED))) {
            if (implicit) {
                if ((st = add_value(c, &c->implicit, v, V_IMPLICIT)))
                    return st;
            } else {
                (*n_missing)++;
                if ((st = add_missing(c, v, reader)))
                    return st;
            }
            continue;
        }
        if (p->mark & N_KEEP)
            continue;
        p->mark |= N_KEEP;
        for (uint32_t i = p->n_inputs; i-- > 0;)
            if (p->inputs[i] && (st = push(c, p->inputs[i], p, false)))
                return st;
        struct walk_ctx w = {c, p};
        if ((st = sg__node_for_each_outer_read(p, push_outer, &w)))
            return st;
    }
    return SG_OK;
}

static const struct sg_cut_decl *find_decl(const struct sg_extract_spec *s, const char *name)
{
    for (size_t i = 0; i < s->n_decls; i++)
        if (strcmp(s->decls[i].name, name) == 0)
            return &s->decls[i];
    return NULL;
}

static bool typed(const sg_type *t)
{
    return t && (t->kind != SG_TYPE_TENSOR || t->has_elem_type);
}

/* The type an exposed value will carry (NULL: keep its own). */
static sg_status type_for(struct cut *c, sg_dtype_resolver *res, sg_value *v, sg_type **out)
{
    *out = NULL;
    const struct sg_cut_decl *d = find_decl(c->spec, v->name);
    if (d) {
        *out = d->type;
        return SG_OK;
    }
    if (c->spec->typer.type_of) {
        sg_status st = c->spec->typer.type_of(c->spec->typer.ctx, c->m, v, out, c->diag);
        if (st || *out)
            return st;
    }
    if (typed(v->type))
        return SG_OK;
    if (v->init) {
        *out = sg_type_tensor(c->m, v->init->dtype, v->init->dims, (int)v->init->rank);
        return *out ? SG_OK : sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    }
    int32_t dt = 0;
    sg_status st = sg_dtype_resolve(res, v, &dt, c->diag);
    if (st)
        return st;
    if (!dt)
        return sg_diag_set(c->diag, SG_ETYPE,
                           "the type of tensor '%s' is not known: give it as '%s:DTYPE:DIMS'",
                           v->name, v->name);
    *out = sg_type_tensor(c->m, dt, NULL, -1);
    return *out ? SG_OK : sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
}

/* --------------------------------------------------- functions, opsets */

struct usage {
    sg_model *m;
    bool *fn_used;
    struct sg__strmap domains; /* canonical domain -> (void *)1 */
    sg_status st;
};

static void use_domain(struct usage *u, const char *domain)
{
    const char *d = sg__canon_domain(domain ? domain : "");
    if (!u->st && !sg__strmap_get(&u->domains, d))
        u->st = sg__strmap_put(&u->domains, d, (void *)1);
}

static bool same_domain(const char *a, const char *b)
{
    return strcmp(sg__canon_domain(a ? a : ""), sg__canon_domain(b ? b : "")) == 0;
}

static void use_graph(struct usage *u, sg_graph *g, bool main_kept_only);

static sg_status use_sub(sg_graph *sub, void *arg)
{
    use_graph(arg, sub, false);
    return SG_OK;
}

static void use_node(struct usage *u, sg_node *n)
{
    use_domain(u, n->domain);
    for (size_t f = 0; f < u->m->n_functions; f++) {
        sg_function *fn = &u->m->functions[f];
        if (!u->fn_used[f] && fn->name && strcmp(fn->name, n->op_type) == 0 &&
            same_domain(fn->domain, n->domain)) {
            u->fn_used[f] = true;
            if (fn->body)
                use_graph(u, fn->body, false);
            for (size_t i = 0; i < fn->n_opsets; i++)
                use_domain(u, fn->opsets[i].domain);
        }
    }
    sg_node_for_each_subgraph(n, use_sub, u);
}

static void use_graph(struct usage *u, sg_graph *g, bool main_kept_only)
{
    for (sg_node *n = g->first; n; n = n->next)
        if (!main_kept_only || (n->mark & N_KEEP))
            use_node(u, n);
}

/* Drop the functions and opset imports the kept nodes do not use. */
static sg_status prune_model(struct cut *c)
{
    sg_model *m = c->m;
    struct usage u = {.m = m};
    u.fn_used = sg_calloc(m->n_functions ? m->n_functions : 1, sizeof *u.fn_used);
    if (!u.fn_used)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    use_domain(&u, "");
    use_graph(&u, c->g, true);
    sg_status st = u.st;
    if (!st) {
        /* What is dropped gives back its graphs' maps (the arena keeps
         * the rest until the model goes). */
        size_t w = 0;
        for (size_t f = 0; f < m->n_functions; f++)
            if (u.fn_used[f])
                m->functions[w++] = m->functions[f];
            else if (m->functions[f].body)
                sg__graph_release(m->functions[f].body);
        m->n_functions = w;
        /* The imports the kept nodes use; all of them when none is (a
         * model whose nodes are in a domain it does not import): a model
         * must import an opset to load. */
        w = 0;
        for (size_t i = 0; i < m->n_opsets; i++)
            if (sg__strmap_get(&u.domains,
                               sg__canon_domain(m->opsets[i].domain ? m->opsets[i].domain : "")))
                m->opsets[w++] = m->opsets[i];
        if (w)
            m->n_opsets = w;
        for (size_t i = 0; i < m->n_training; i++) {
            if (m->training[i].initialization)
                sg__graph_release(m->training[i].initialization);
            if (m->training[i].algorithm)
                sg__graph_release(m->training[i].algorithm);
        }
        m->n_training = 0;
        m->training = NULL;
    }
    sg__strmap_free(&u.domains);
    sg_free(u.fn_used);
    return st ? sg_diag_set(c->diag, st, "out of memory") : SG_OK;
}

/* ------------------------------------------------------------ rewrite */

static sg_status rewrite(struct cut *c, const struct sg__ptrvec *ins, sg_type **in_types,
                         sg_type **out_types)
{
    sg_graph *g = c->g;
    sg_status st;
    struct sg__ptrvec new_in = *ins, dropped = {0}, dead_vals = {0}, init_inputs = {0};
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        sg_value *v = g->inputs[i];
        if (v->mark & V_LISTED)
            continue;
        /* An initializer listed as an input (IR < 4 requires it) stays one
         * when the region still reads it. */
        if ((st = sg__ptrvec_push(v->init ? &init_inputs : &dropped, v)))
            goto out;
    }
    /* Every input leaves the list and the new ones come back in order. */
    g->n_inputs = 0;
    for (size_t i = 0; i < dropped.n; i++)
        ((sg_value *)dropped.v[i])->flags &= ~(uint32_t)SG_VALUE_INPUT;
    for (size_t i = 0; i < init_inputs.n; i++)
        ((sg_value *)init_inputs.v[i])->flags &= ~(uint32_t)SG_VALUE_INPUT;
    for (size_t i = 0; i < new_in.n; i++)
        ((sg_value *)new_in.v[i])->flags &= ~(uint32_t)SG_VALUE_INPUT;
    while (g->n_outputs)
        sg_graph_remove_output(g, g->outputs[g->n_outputs - 1]);
    for (size_t i = 0; i < new_in.n; i++) {
        sg_value *v = new_in.v[i];
        if (v->producer)
            sg_node_set_output(v->producer, v->producer_index, NULL);
        if ((st = sg_graph_add_input(g, v)))
            goto out;
        if (in_types[i])
            sg_value_set_type(v, in_types[i]);
    }
    for (size_t i = 0; i < c->outs.n; i++) {
        sg_value *v = c->outs.v[i];
        if ((st = sg_graph_add_output(g, v)))
            goto out;
        if (out_types[i])
            sg_value_set_type(v, out_types[i]);
    }
    /* The nodes outside: their outputs leave value_info in one sweep, then
     * they go consumers first. */
    size_t removed = 0;
    for (size_t k = 0; k < c->n_order; k++) {
        sg_node *n = c->order[k];
        if (n->mark & N_KEEP)
            continue;
        for (uint32_t i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] && (n->outputs[i]->flags & SG_VALUE_INFO) &&
                (st = sg__ptrvec_push(&dead_vals, n->outputs[i])))
                goto out;
    }
    sg_graph_unlist_values(g, (sg_value *const *)dead_vals.v, dead_vals.n, SG_VALUE_INFO);
    dead_vals.n = 0;
    for (size_t k = c->n_order; k-- > 0;) {
        sg_node *n = c->order[k];
        if (n->mark & N_KEEP)
            continue;
        if ((st = sg_node_remove(n, c->diag)))
            goto out;
        removed++;
    }
    for (size_t i = 0; i < init_inputs.n; i++) {
        sg_value *v = init_inputs.v[i];
        if (v->n_uses && (st = sg_graph_add_input(g, v)))
            goto out;
    }
    /* What nothing reads any more: dropped inputs, initializers, stale
     * value_info entries. */
    for (size_t i = 0; i < dropped.n; i++) {
        sg_value *v = dropped.v[i];
        if (!v->n_uses && !(v->flags & SG_VALUE_OUTPUT) && (st = sg__ptrvec_push(&dead_vals, v)))
            goto out;
    }
    for (uint32_t i = 0; i < g->n_inits; i++) {
        sg_value *v = g->inits[i];
        if (!v->n_uses && !(v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT)) &&
            (st = sg__ptrvec_push(&dead_vals, v)))
            goto out;
    }
    for (uint32_t i = 0; i < g->n_value_info; i++) {
        sg_value *v = g->value_info[i];
        if (!v->producer && !v->init && !v->sparse_init && !v->outer && !v->n_uses &&
            !(v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT)) &&
            (st = sg__ptrvec_push(&dead_vals, v)))
            goto out;
    }
    size_t n_dead = dead_vals.n;
    if ((st = sg_graph_remove_values(g, (sg_value **)dead_vals.v, &n_dead)))
        goto out;
    /* Sparse initializers nothing reads. */
    uint32_t w = 0;
    for (uint32_t i = 0; i < g->n_sparse_inits; i++) {
        sg_sparse *sp = g->sparse_inits[i];
        const char *name = sp->values ? sp->values->name : NULL;
        sg_value *v = name ? sg_graph_value(g, name) : NULL;
        if (v && !v->n_uses && !(v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT))) {
            v->sparse_init = NULL;
            v->flags &= ~(uint32_t)SG_VALUE_INITIALIZER;
            sg_value_remove(v);
        } else {
            g->sparse_inits[w++] = sp;
        }
    }
    g->n_sparse_inits = w;
    /* Annotations of tensors that are gone. */
    w = 0;
    for (uint32_t i = 0; i < g->n_annotations; i++)
        if (g->annotations[i].tensor_name && sg_graph_value(g, g->annotations[i].tensor_name))
            g->annotations[w++] = g->annotations[i];
    g->n_annotations = w;
    if ((st = prune_model(c)))
        goto out;
    if (c->rep) {
        c->rep->n_removed = removed;
        c->rep->n_kept = g->n_nodes;
        c->rep->n_inits = g->n_inits;
    }
out:
    sg__ptrvec_free(&init_inputs);
    sg__ptrvec_free(&dropped);
    sg__ptrvec_free(&dead_vals);
    if (st == SG_ENOMEM)
        return sg_diag_set(c->diag, st, "out of memory");
    return st;
}

static sg_status add_implicit_report(struct cut *c)
{
    struct sg_extract_report *r = c->rep;
    if (!r || !c->implicit.n)
        return SG_OK;
    r->implicit_inputs = calloc(c->implicit.n, sizeof *r->implicit_inputs);
    if (!r->implicit_inputs)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->implicit.n; i++) {
        if (!(r->implicit_inputs[i] = sg_strdup(((sg_value *)c->implicit.v[i])->name)))
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        r->n_implicit_inputs++;
    }
    return SG_OK;
}

sg_status sg_model_topo_nodes(sg_model *m, sg_node ***order, size_t *n, struct sg_diag *diag)
{
    *order = NULL;
    *n = 0;
    if (!m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    size_t total = m->graph->n_nodes;
    sg_node **o = sg_grow(NULL, 0, (total ? total : 1) * sizeof *o);
    if (!o)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_status st = sg_graph_toposort(m->graph, o, diag);
    if (st) {
        sg_free(o);
        return st;
    }
    *order = o;
    *n = total;
    return SG_OK;
}

sg_status sg_model_extract(sg_model *m, const struct sg_extract_spec *spec,
                           struct sg_extract_report *rep, struct sg_diag *diag)
{
    if (rep)
        memset(rep, 0, sizeof *rep);
    if (!m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    if (!spec->n_outputs && !spec->n_end_nodes)
        return sg_diag_set(diag, SG_EINVAL, "a cut needs outputs (tensors or end nodes)");
    struct cut c = {.m = m, .g = m->graph, .spec = spec, .rep = rep, .diag = diag};
    sg_type **types = NULL;
    bool *keep = NULL;
    struct sg__ptrvec new_in = {0};
    sg_status st = sg_model_topo_nodes(m, &c.order, &c.n_order, diag);
    if (st)
        return st;
    clear_marks(&c);
    /* Constants first: a start node's constant inputs (weights) are not
     * inputs of the cut. */
    if ((st = mark_forward(&c, false)) || (st = resolve_names(&c)))
        goto out;
    for (size_t i = 0; i < c.ins.n; i++)
        ((sg_value *)c.ins.v[i])->mark |= V_CLOSED;
    if ((st = mark_forward(&c, true)))
        goto out;
    size_t n_missing = 0;
    if ((st = walk_back(&c, &n_missing)))
        goto out;
    if (n_missing) {
        st = sg_diag_set(diag, SG_EUNDEF,
                         "the cut is not closed: %zu needed tensor%s %s neither an input of the "
                         "cut nor computable from constants",
                         n_missing, n_missing == 1 ? "" : "s", n_missing == 1 ? "is" : "are");
        goto out;
    }
    size_t kept = 0;
    for (size_t k = 0; k < c.n_order; k++)
        kept += (c.order[k]->mark & N_KEEP) != 0;
    for (size_t i = 0; i < c.ins.n; i++) {
        sg_value *v = c.ins.v[i];
        if (v->producer && (v->producer->mark & N_KEEP)) {
            st = sg_diag_set(diag, SG_EINVAL,
                             "tensor '%s' is an input of the cut, but its producer '%s' is in the "
                             "cut for its other outputs: list those as inputs too, or not '%s'",
                             v->name, label(v->producer), v->name);
            goto out;
        }
    }
    for (size_t i = 0; i < c.start.n; i++) {
        sg_node *n = c.start.v[i];
        if (!(n->mark & N_KEEP)) {
            st = sg_diag_set(diag, SG_EINVAL,
                             "start node '%s' is not upstream of any end node (no output of the "
                             "cut depends on it)",
                             label(n));
            goto out;
        }
    }
    if (!kept) {
        st = sg_diag_set(diag, SG_EINVAL,
                         "the cut is empty: no node lies between its inputs and its outputs");
        goto out;
    }
    /* The interface: the inputs asked for (those read, when pruning),
     * then the implicit ones; each keeps V_LISTED, the rest lose it. */
    for (size_t i = 0; i < c.ins.n && !st; i++) {
        sg_value *v = c.ins.v[i];
        if (!spec->prune_inputs || (v->mark & V_USED))
            st = sg__ptrvec_push(&new_in, v);
    }
    for (size_t i = 0; i < c.implicit.n && !st; i++)
        st = sg__ptrvec_push(&new_in, c.implicit.v[i]);
    if (st || !(keep = sg_calloc(c.n_order ? c.n_order : 1, 1)) ||
        !(types = sg_calloc(new_in.n + c.outs.n + 1, sizeof *types))) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < c.n_order; k++)
        keep[k] = (c.order[k]->mark & N_KEEP) != 0;
    /* Types before anything changes, so an error leaves m as it was. The
     * dtype inference keeps its own states in the marks (stamps that grow
     * with every use in the process), so the cut's flags leave them first,
     * lest a flag equal a stamp; they are set again after it. */
    clear_marks(&c);
    sg_dtype_resolver res;
    sg_dtype_resolver_init(&res, m);
    for (size_t i = 0; i < new_in.n && !st; i++)
        st = type_for(&c, &res, new_in.v[i], &types[i]);
    for (size_t i = 0; i < c.outs.n && !st; i++)
        st = type_for(&c, &res, c.outs.v[i], &types[new_in.n + i]);
    if (st || (st = add_implicit_report(&c)))
        goto out;
    for (size_t k = 0; k < c.n_order; k++)
        c.order[k]->mark = keep[k] ? N_KEEP : 0;
    for (uint32_t i = 0; i < m->graph->n_inputs; i++)
        m->graph->inputs[i]->mark = 0;
    for (size_t i = 0; i < new_in.n; i++)
        ((sg_value *)new_in.v[i])->mark = V_LISTED;
    st = rewrite(&c, &new_in, types, types + new_in.n);
out:
    sg_free(types);
    sg_free(keep);
    sg__ptrvec_free(&new_in);
    sg_free(c.order);
    sg__ptrvec_free(&c.ins);
    sg__ptrvec_free(&c.outs);
    sg__ptrvec_free(&c.implicit);
    sg__ptrvec_free(&c.start);
    sg__ptrvec_free(&c.stack);
    return st;
}

/* A report's list: sg_malloc'd strings in a malloc'd array. */
static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sg_free(v[i]);
    free(v);
}

void sg_extract_report_free(struct sg_extract_report *r)
{
    if (!r)
        return;
    free_names(r->missing, r->n_missing);
    free_names(r->implicit_inputs, r->n_implicit_inputs);
    free_names(r->input_names, r->n_input_names);
    free_names(r->output_names, r->n_output_names);
    memset(r, 0, sizeof *r);
}
