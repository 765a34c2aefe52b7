/*
 * pass_util.c - helpers the passes share: graph walks, sets, constants,
 * removing pass-through nodes, and forward reachability for shape edits.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    sg__graph_fn fn;
    void *ctx;
};

static sg_status walk_sub(sg_graph *sub, void *ctx)
{
    struct walk *w = ctx;
    return sg__walk_graphs(sub, w->fn, w->ctx);
}

sg_status sg__walk_graphs(sg_graph *g, sg__graph_fn fn, void *ctx)
{
    sg_status st = fn(g, ctx);
    if (st)
        return st;
    if (!g->has_subgraphs)
        return SG_OK; /* no node holds a graph: spare the walk over them */
    struct walk w = {fn, ctx};
    for (sg_node *n = g->first; n; n = n->next)
        if ((st = sg_node_for_each_subgraph(n, walk_sub, &w)))
            return st;
    return SG_OK;
}

bool sg__opt_has(const struct sg_opt_value *v, const char *s)
{
    if (!s)
        return false;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->strs[i], s) == 0)
            return true;
    return false;
}

sg_status sg__strset_from(struct sg__strmap *set, const struct sg_opt_value *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (sg__strmap_put(set, v->strs[i], (void *)v->strs[i]))
            return SG_ENOMEM;
    return SG_OK;
}

/* ------------------------------------------------------------ ptr set */

static size_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static sg_status ptrset_grow(struct sg__ptrset *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    const void **slots = sg_calloc_table(cap, sizeof *slots);
    if (!slots)
        return SG_ENOMEM;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slots[i])
            continue;
        size_t j = ptr_hash(s->slots[i]) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = s->slots[i];
    }
    sg_free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return SG_OK;
}

sg_status sg__ptrset_add(struct sg__ptrset *s, const void *p)
{
    if ((s->count + 1) * 4 >= s->cap * 3 && ptrset_grow(s))
        return SG_ENOMEM;
    size_t j = ptr_hash(p) & (s->cap - 1);
    while (s->slots[j]) {
        if (s->slots[j] == p)
            return SG_OK;
        j = (j + 1) & (s->cap - 1);
    }
    s->slots[j] = p;
    s->count++;
    return SG_OK;
}

bool sg__ptrset_has(const struct sg__ptrset *s, const void *p)
{
    if (!s->cap)
        return false;
    size_t j = ptr_hash(p) & (s->cap - 1);
    while (s->slots[j]) {
        if (s->slots[j] == p)
            return true;
        j = (j + 1) & (s->cap - 1);
    }
    return false;
}

void sg__ptrset_free(struct sg__ptrset *s)
{
    sg_free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------- labels */

const char *sg__node_label(const sg_node *n)
{
    if (n->name && *n->name)
        return n->name;
    if (n->n_outputs && n->outputs[0])
        return n->outputs[0]->name; /* unnamed nodes are known by their output */
    return n->op_type;
}

/* ---------------------------------------------------------- constants */

/* The type of one of the last two initializers of g when it is exactly a
 * plain tensor type of dtype and dims, else NULL. Passes add constants in
 * runs of a few shapes (fold-bn: a weight, a bias, a weight, ...), and the
 * IR replaces a value's type but never edits one in place, so such values
 * can share it: 100,000 folded constants took 30 MB of types alone. */
static sg_type *recent_const_type(const sg_graph *g, int32_t dtype, const int64_t *dims,
                                  uint32_t rank)
{
    for (uint32_t k = 0; k < 2 && k < g->n_inits; k++) {
        sg_type *t = g->inits[g->n_inits - 1 - k]->type;
        if (!t || t->kind != SG_TYPE_TENSOR || !t->has_elem_type || t->elem_type != dtype ||
            t->denotation || t->elem || t->has_key_type || t->unknown.len || t->inner_unknown.len ||
            !t->shape || t->shape->rank != rank || t->shape->unknown.len)
            continue;
        uint32_t i = 0;
        for (; i < rank; i++) {
            const sg_dim *d = &t->shape->dims[i];
            if (dims[i] < 0 || d->kind != SG_DIM_VALUE || d->value != dims[i] || d->denotation ||
                d->unknown.len)
                break;
        }
        if (i == rank)
            return t;
    }
    return NULL;
}

sg_status sg__add_const(sg_graph *g, const char *base, int32_t dtype, const int64_t *dims,
                        uint32_t rank, const void *data, size_t nbytes, sg_value **out,
                        struct sg_diag *diag)
{
    sg_model *m = g->model;
    sg_type *type = recent_const_type(g, dtype, dims, rank);
    if (!type)
        type = sg_type_tensor(m, dtype, dims, (int)rank);
    sg_value *v = NULL;
    if (!type || sg_graph_add_value_fresh(g, base, type, &v, diag))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory adding constant '%s'", base);
    const char *name = v->name;
    sg_tensor *t = sg_tensor_create(m, name, dtype, dims, rank);
    void *copy = t ? sg_arena_memdup(m->arena, data, nbytes) : NULL;
    if (!copy) {
        sg_value_remove(v);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory adding constant '%s'", base);
    }
    sg_status st = sg_tensor_set_raw(m, t, copy, nbytes, NULL);
    if (!st)
        st = sg_value_set_initializer(v, t);
    if (st)
        return sg_diag_set(diag, st, "cannot add constant '%s'", name);
    *out = v;
    return SG_OK;
}

bool sg__tensor_get_f64(sg_model *m, sg_tensor *t, size_t i, double *out)
{
    size_t nbytes;
    const uint8_t *d = sg_tensor_data(m, t, &nbytes, NULL);
    size_t es = sg_dtype_size(t->dtype);
    if (!d || !es || (i + 1) * es > nbytes)
        return false;
    d += i * es;
    switch (t->dtype) {
    case SG_DTYPE_FLOAT: {
        float f;
        memcpy(&f, d, 4);
        *out = f;
        return true;
    }
    case SG_DTYPE_DOUBLE:
        memcpy(out, d, 8);
        return true;
    case SG_DTYPE_FLOAT16:
    case SG_DTYPE_BFLOAT16: {
        uint16_t h;
        memcpy(&h, d, 2);
        *out = t->dtype == SG_DTYPE_FLOAT16 ? sg_half_to_float(h) : sg_bf16_to_float(h);
        return true;
    }
    case SG_DTYPE_FLOAT8E4M3FN:
    case SG_DTYPE_FLOAT8E4M3FNUZ:
    case SG_DTYPE_FLOAT8E5M2:
    case SG_DTYPE_FLOAT8E5M2FNUZ:
    case SG_DTYPE_FLOAT4E2M1:
        *out = sg_dtype_get_f64(t->dtype, d, 0);
        return true;
    default: {
        int64_t v;
        if (!sg__tensor_get_i64(m, t, i, &v))
            return false;
        *out = (double)v;
        return true;
    }
    }
}

bool sg__tensor_get_i64(sg_model *m, sg_tensor *t, size_t i, int64_t *out)
{
    size_t nbytes;
    const uint8_t *d = sg_tensor_data(m, t, &nbytes, NULL);
    size_t es = sg_dtype_size(t->dtype);
    if (!d || !es || (i + 1) * es > nbytes)
        return false;
    d += i * es;
    switch (t->dtype) {
    case SG_DTYPE_INT64:
    case SG_DTYPE_UINT64:
        memcpy(out, d, 8);
        return true;
    case SG_DTYPE_INT32: {
        int32_t v;
        memcpy(&v, d, 4);
        *out = v;
        return true;
    }
    case SG_DTYPE_UINT32: {
        uint32_t v;
        memcpy(&v, d, 4);
        *out = v;
        return true;
    }
    case SG_DTYPE_INT16: {
        int16_t v;
        memcpy(&v, d, 2);
        *out = v;
        return true;
    }
    case SG_DTYPE_UINT16: {
        uint16_t v;
        memcpy(&v, d, 2);
        *out = v;
        return true;
    }
    case SG_DTYPE_INT8:
    case SG_DTYPE_INT4: /* held one per byte, sign-extended */
        *out = (int8_t)*d;
        return true;
    case SG_DTYPE_UINT8:
    case SG_DTYPE_UINT4:
    case SG_DTYPE_BOOL:
        *out = *d;
        return true;
    default:
        return false;
    }
}

static bool is_constant_node(const sg_node *n)
{
    return n && strcmp(n->op_type, "Constant") == 0 &&
           (!n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0);
}

static int cmp_graph(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)(*(sg_value *const *)a)->graph;
    uintptr_t y = (uintptr_t)(*(sg_value *const *)b)->graph;
    return x < y ? -1 : x > y;
}

/* One "unused constant removed" entry; its name only when it will be kept
 * (reading it is a cache miss per constant of a big batch). */
static void report_removed(struct sg_pass_report *rep, const sg_value *v)
{
    if (rep && rep->counts_only)
        sg_report_change(rep, "unused constant removed", NULL);
    else
        sg_report_change(rep, "unused constant removed", "%s", v->name);
}

sg_status sg__remove_constants(sg_value **vals, size_t n, bool old_ir, struct sg_pass_report *rep,
                               struct sg_diag *diag)
{
    /* The qualifying values, repeats included: removal drops them. */
    size_t k = 0;
    bool one_graph = true;
    for (size_t i = 0; i < n; i++) {
        sg_value *v = vals[i];
        bool input_ok = old_ir && v->init && v->graph->kind == SG_GRAPH_MAIN;
        if (!(v->init || is_constant_node(v->producer)) || v->n_uses ||
            (v->flags & SG_VALUE_OUTPUT) || ((v->flags & SG_VALUE_INPUT) && !input_ok))
            continue;
        one_graph = one_graph && (!k || v->graph == vals[0]->graph);
        vals[k++] = v;
    }
    /* Constant nodes one by one (a repeat finds its node gone). */
    size_t inits = 0;
    for (size_t i = 0; i < k; i++) {
        sg_value *v = vals[i];
        if (v->init) {
            vals[inits++] = v;
            continue;
        }
        if (!v->producer)
            continue;
        const char *name = v->name;
        report_removed(rep, v);
        sg_status st = sg_node_remove(v->producer, diag);
        if (st)
            return sg_diag_set(diag, st, "cannot remove constant '%s'", name);
    }
    /* Initializers in one batch per graph. Grouped by graph; sorting the
     * hundreds of thousands of values of the one graph most passes see
     * would cost a cache miss per comparison. */
    if (!one_graph)
        qsort(vals, inits, sizeof *vals, cmp_graph);
    for (size_t i = 0, j; i < inits; i = j) {
        sg_graph *g = vals[i]->graph;
        for (j = i + 1; j < inits && vals[j]->graph == g;)
            j++;
        if (old_ir) /* a main graph initializer's input entry goes with it */
            sg_graph_unlist_values(g, vals + i, j - i, SG_VALUE_INPUT);
        size_t count = j - i;
        sg_status st = sg_graph_remove_values(g, vals + i, &count);
        if (st)
            return sg_diag_set(diag, st, "cannot remove constants of graph '%s'",
                               g->name ? g->name : "");
        for (size_t r = i; r < i + count; r++)
            report_removed(rep, vals[r]);
    }
    return SG_OK;
}

/* -------------------------------------------------------------- bypass */

sg_status sg__bypass_node(sg_node *n, bool *kept, const char **why, struct sg_diag *diag)
{
    sg_value *x = n->inputs[0], *y = n->outputs[0];
    *kept = false;
    sg_status st;
    if (!(y->flags & SG_VALUE_OUTPUT)) {
        if ((st = sg_value_replace_uses(y, x, false, diag)))
            return st;
        return sg_node_remove(n, diag);
    }
    /* y names a graph output: keep the name, let x's producer make it. */
    sg_node *p = x->producer;
    if (!p || x->outer || (x->flags & (SG_VALUE_OUTPUT | SG_VALUE_INPUT)) || x->init) {
        *kept = true;
        *why = x->flags & SG_VALUE_OUTPUT ? "both sides are graph outputs"
                                          : "graph output fed by an input, constant or "
                                            "outer value";
        return SG_OK;
    }
    uint32_t idx = x->producer_index;
    if ((st = sg_value_replace_uses(y, x, false, diag)) || (st = sg_node_set_output(n, 0, NULL)) ||
        (st = sg_node_remove(n, diag)) || (st = sg_value_replace_uses(x, y, false, diag)) ||
        (st = sg_node_set_output(p, idx, NULL)) || (st = sg_node_set_output(p, idx, y)))
        return sg_diag_set(diag, st, "cannot remove '%s': %s", sg__node_label(n), sg_strerror(st));
    if (!y->type && x->type)
        sg_value_set_type(y, x->type);
    return sg_value_remove(x);
}

/* -------------------------------------------------------- reachability */

struct cap_ctx {
    sg_value *outer;
    struct sg__ptrset *set;
    sg_value **stack;
    size_t *n, *cap;
    sg_status st;
};

static sg_status push(sg_value *v, struct sg__ptrset *set, sg_value ***stack, size_t *n,
                      size_t *cap)
{
    if (sg__ptrset_has(set, v))
        return SG_OK;
    if (sg__ptrset_add(set, v))
        return SG_ENOMEM;
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        sg_value **g = sg_realloc(*stack, c * sizeof *g);
        if (!g)
            return SG_ENOMEM;
        *stack = g;
        *cap = c;
    }
    (*stack)[(*n)++] = v;
    return SG_OK;
}

static sg_status push_capture(sg_graph *sub, void *ctx)
{
    struct cap_ctx *c = ctx;
    sg_value *cap = sg_graph_value(sub, c->outer->name);
    if (cap && cap->outer == c->outer)
        return push(cap, c->set, &c->stack, c->n, c->cap);
    return SG_OK;
}

/* A subgraph fed by a changed explicit input (Loop state, Scan input):
 * everything it computes may change. */
static sg_status push_all_sub(sg_graph *sub, void *ctx)
{
    struct cap_ctx *c = ctx;
    for (uint32_t i = 0; i < sub->n_inputs; i++) {
        sg_status st = push(sub->inputs[i], c->set, &c->stack, c->n, c->cap);
        if (st)
            return st;
    }
    return SG_OK;
}

static bool holds_shape(const sg_node *n)
{
    return (!n->domain || !*n->domain) &&
           (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0);
}

static sg_status mark(sg_value *const *from, size_t n_from, struct sg__ptrset *set, bool data);

sg_status sg__mark_downstream(sg_value *const *from, size_t n_from, struct sg__ptrset *set)
{
    return mark(from, n_from, set, false);
}

sg_status sg__mark_downstream_data(sg_value *const *from, size_t n_from, struct sg__ptrset *set)
{
    return mark(from, n_from, set, true);
}

static sg_status mark(sg_value *const *from, size_t n_from, struct sg__ptrset *set, bool data)
{
    sg_value **stack = NULL;
    size_t n = 0, cap = 0;
    sg_status st = SG_OK;
    for (size_t i = 0; i < n_from && !st; i++)
        st = push(from[i], set, &stack, &n, &cap);
    while (n && !st) {
        sg_value *v = stack[--n];
        for (uint32_t u = 0; u < v->n_uses && !st; u++) {
            sg_node *node = v->uses[u].node;
            if (data && holds_shape(node))
                continue;
            struct cap_ctx c = {v, set, stack, &n, &cap, SG_OK};
            if (v->uses[u].index == SG_USE_IMPLICIT)
                st = sg_node_for_each_subgraph(node, push_capture, &c);
            else
                st = sg_node_for_each_subgraph(node, push_all_sub, &c);
            stack = c.stack;
            for (uint32_t o = 0; o < node->n_outputs && !st; o++)
                if (node->outputs[o])
                    st = push(node->outputs[o], set, &stack, &n, &cap);
        }
    }
    sg_free(stack);
    return st;
}

struct clear_ctx {
    const struct sg__ptrset *set;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
};

static sg_status clear_value(sg_model *m, sg_value *v, struct clear_ctx *c)
{
    const sg_type *t = v->type;
    if (!t || t->kind != SG_TYPE_TENSOR || !t->shape || (v->flags & SG_VALUE_INPUT) ||
        !sg__ptrset_has(c->set, v))
        return SG_OK; /* inputs carry the shapes just set */
    bool any = false;
    for (uint32_t i = 0; i < t->shape->rank; i++)
        any |= t->shape->dims[i].kind != SG_DIM_UNSET;
    if (!any)
        return SG_OK;
    sg_type *nt = sg_type_tensor(m, t->has_elem_type ? t->elem_type : 0, NULL, (int)t->shape->rank);
    if (!nt)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    nt->has_elem_type = t->has_elem_type;
    nt->denotation = t->denotation;
    sg_value_set_type(v, nt);
    sg_report_change(c->rep, "stale shape cleared", "%s", v->name);
    return SG_OK;
}

static sg_status clear_graph(sg_graph *g, void *ctx)
{
    struct clear_ctx *c = ctx;
    sg_status st;
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if ((st = clear_value(g->model, g->outputs[i], c)))
            return st;
    for (uint32_t i = 0; i < g->n_value_info; i++)
        if ((st = clear_value(g->model, g->value_info[i], c)))
            return st;
    return SG_OK;
}

sg_status sg__clear_shapes(sg_graph *g, const struct sg__ptrset *set, struct sg_pass_report *rep,
                           struct sg_diag *diag)
{
    struct clear_ctx c = {set, rep, diag};
    return sg__walk_graphs(g, clear_graph, &c);
}
