/*
 * ir_graph.c - graphs, values and the edge-editing API.
 *
 * Invariants kept here (checked by verify.c):
 *  - v->producer->outputs[v->producer_index] == v for every produced value;
 *  - for every node input slot i holding v, v->uses has (node, i) once;
 *  - every capture value c of a subgraph owned by node n contributes one
 *    (n, SG_USE_IMPLICIT) use to c->outer;
 *  - the values map of a graph holds exactly its live values.
 */
#include "ir_impl.h"
#include "sg_alloc.h"

#include <stdio.h>
#include <string.h>

sg_graph *sg__graph_create(sg_model *m, enum sg_graph_kind kind, sg_graph *parent, sg_node *owner)
{
    sg_graph *g = sg_arena_calloc(m->arena, 1, sizeof *g);
    if (!g)
        return NULL;
    g->model = m;
    g->kind = kind;
    g->parent = parent;
    g->owner = owner;
    g->values_map = sg_arena_calloc(m->arena, 1, sizeof(struct sg__strmap));
    g->nodes_map = sg_arena_calloc(m->arena, 1, sizeof(struct sg__strmap));
    if (!g->values_map || !g->nodes_map)
        return NULL;
    return g;
}

static sg_status release_sub(sg_graph *sub, void *ctx)
{
    (void)ctx;
    sg__graph_release(sub);
    return SG_OK;
}

void sg__graph_release(sg_graph *g)
{
    if (g->has_subgraphs)
        for (sg_node *n = g->first; n; n = n->next)
            sg_node_for_each_subgraph(n, release_sub, NULL);
    if (g->values_map)
        sg__strmap_free(g->values_map);
    if (g->nodes_map)
        sg__strmap_free(g->nodes_map);
}

sg_status sg__ptr_push(sg_arena *a, void ***arr, uint32_t *n, uint32_t *cap, void *item)
{
    if (*n == *cap) {
        uint32_t new_cap = *cap ? *cap * 2 : 4;
        void **grown = sg_arena_grow(a, *arr, *n, new_cap, sizeof(void *));
        if (!grown)
            return SG_ENOMEM;
        *arr = grown;
        *cap = new_cap;
    }
    (*arr)[(*n)++] = item;
    return SG_OK;
}

/* ------------------------------------------------------------ lookups */

sg_value *sg_graph_value(const sg_graph *g, const char *name)
{
    return sg__strmap_get(g->values_map, name);
}

/* The node-name map is built on the first lookup (loading never needs it)
 * and maintained by node creation and removal from then on. */
static sg_status nodes_map_build(sg_graph *g)
{
    struct sg__strmap *map = g->nodes_map;
    sg_status st = sg__strmap_reserve(map, g->n_nodes);
    for (sg_node *n = g->first; n && !st; n = n->next) {
        if (!n->name || !*n->name)
            continue;
        void *first;
        st = sg__strmap_add_h(map, n->name, sg__strhash(n->name), n, &first);
        if (first)
            g->dup_node_names = true;
    }
    if (st) {
        sg__strmap_free(map);
        return st;
    }
    g->nodes_map_built = true;
    return SG_OK;
}

sg_status sg__nodes_map_ensure(sg_graph *g)
{
    return g->nodes_map_built ? SG_OK : nodes_map_build(g);
}

sg_node *sg_graph_node(const sg_graph *g, const char *name)
{
    if (!g->nodes_map_built && nodes_map_build((sg_graph *)g) != SG_OK) {
        for (sg_node *n = g->first; n; n = n->next) /* out of memory: scan */
            if (n->name && strcmp(n->name, name) == 0)
                return n;
        return NULL;
    }
    return sg__strmap_get(g->nodes_map, name);
}

struct find_ctx {
    const char *name;
    sg_node *found;
};

static sg_node *find_node_rec(const sg_graph *g, const char *name);

static sg_status find_in_sub(sg_graph *sub, void *ctx)
{
    struct find_ctx *f = ctx;
    if (!f->found)
        f->found = find_node_rec(sub, f->name);
    return SG_OK;
}

static sg_node *find_node_rec(const sg_graph *g, const char *name)
{
    sg_node *n = sg_graph_node(g, name);
    if (n)
        return n;
    struct find_ctx f = {name, NULL};
    for (sg_node *it = g->first; it && !f.found; it = it->next)
        sg_node_for_each_subgraph(it, find_in_sub, &f);
    return f.found;
}

sg_node *sg_model_find_node(const sg_model *m, const char *name)
{
    return m->graph ? find_node_rec(m->graph, name) : NULL;
}

sg_value *sg__value_new_h(sg_graph *g, const char *name, uint64_t h)
{
    sg_value *v = sg_arena_calloc(g->model->arena, 1, sizeof *v);
    if (!v)
        return NULL;
    v->name = name;
    v->graph = g;
    if (sg__strmap_put_h(g->values_map, name, h, v) != SG_OK)
        return NULL;
    return v;
}

sg_value *sg__value_new(sg_graph *g, const char *name)
{
    return sg__value_new_h(g, name, sg__strhash(name));
}

sg_value *sg_graph_resolve(sg_graph *g, const char *name, struct sg_diag *diag)
{
    sg_value *v = sg_graph_value(g, name);
    if (v)
        return v;
    if (!g->parent || !g->owner)
        return NULL;
    sg_value *outer = sg_graph_resolve(g->parent, name, diag);
    if (!outer)
        return NULL;
    v = sg__value_new(g, outer->name);
    if (!v || sg__value_add_use(outer, g->owner, SG_USE_IMPLICIT) != SG_OK) {
        if (v)
            sg__strmap_del(g->values_map, v->name);
        sg_diag_set(diag, SG_ENOMEM, "out of memory capturing '%s'", name);
        return NULL;
    }
    v->outer = outer;
    return v;
}

/* --------------------------------------------------------------- uses */

/* Room for one more use in v's list, so that adding it cannot fail. */
static sg_status reserve_use(sg_value *v)
{
    if (v->n_uses == v->cap_uses) {
        uint32_t cap = v->cap_uses ? v->cap_uses * 2 : 2;
        sg_use *grown =
            sg_arena_grow(v->graph->model->arena, v->uses, v->n_uses, cap, sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        v->uses = grown;
        v->cap_uses = cap;
    }
    return SG_OK;
}

sg_status sg__value_add_use(sg_value *v, sg_node *n, int32_t index)
{
    sg_status st = reserve_use(v);
    if (st)
        return st;
    v->uses[v->n_uses].node = n;
    v->uses[v->n_uses].index = index;
    if (index >= 0)
        n->use_pos[index] = v->n_uses;
    v->n_uses++;
    return SG_OK;
}

static void drop_capture_if_unused(sg_value *v)
{
    if (!v->outer || v->n_uses || v->flags)
        return;
    sg_graph *g = v->graph;
    sg_value *outer = v->outer;
    sg__strmap_del(g->values_map, v->name);
    v->outer = NULL;
    sg__value_drop_use(outer, g->owner, SG_USE_IMPLICIT);
}

void sg__value_drop_use(sg_value *v, sg_node *n, int32_t index)
{
    uint32_t at = v->n_uses;
    if (index >= 0) {
        uint32_t pos = n->use_pos[index];
        if (pos < v->n_uses && v->uses[pos].node == n && v->uses[pos].index == index)
            at = pos;
    } else {
        for (uint32_t i = 0; i < v->n_uses; i++)
            if (v->uses[i].node == n && v->uses[i].index == index) {
                at = i;
                break;
            }
    }
    if (at == v->n_uses)
        return;
    /* Move the last use into the hole and tell its node where it went. */
    sg_use last = v->uses[--v->n_uses];
    if (at != v->n_uses) {
        v->uses[at] = last;
        if (last.index >= 0)
            last.node->use_pos[last.index] = at;
    }
    drop_capture_if_unused(v);
}

/* ------------------------------------------------------------- values */

sg_status sg_graph_add_value(sg_graph *g, const char *name, sg_type *type, sg_value **out,
                             struct sg_diag *diag)
{
    if (!name || !*name)
        return sg_diag_set(diag, SG_EINVAL, "a value needs a non-empty name");
    if (sg_graph_value(g, name))
        return sg_diag_set(diag, SG_EDUP, "value '%s' already exists", name);
    const char *copy = sg_arena_strdup(g->model->arena, name);
    if (!copy)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_value *v = sg__value_new(g, copy);
    if (!v || sg__name_reserve(g, copy) != SG_OK)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    v->type = type;
    if (out)
        *out = v;
    return SG_OK;
}

static sg_status list_add(sg_graph *g, sg_value ***arr, uint32_t *n, uint32_t *cap, sg_value *v)
{
    return sg__ptr_push(g->model->arena, (void ***)arr, n, cap, v);
}

static bool list_remove_all(sg_value **arr, uint32_t *n, sg_value *v)
{
    uint32_t w = 0;
    bool found = false;
    for (uint32_t r = 0; r < *n; r++) {
        if (arr[r] == v)
            found = true;
        else
            arr[w++] = arr[r];
    }
    *n = w;
    return found;
}

sg_status sg_graph_add_input(sg_graph *g, sg_value *v)
{
    if (v->graph != g)
        return SG_EINVAL;
    sg_status st = list_add(g, &g->inputs, &g->n_inputs, &g->cap_inputs, v);
    if (!st)
        v->flags |= SG_VALUE_INPUT;
    return st;
}

sg_status sg_graph_add_output(sg_graph *g, sg_value *v)
{
    if (v->graph != g)
        return SG_EINVAL;
    sg_status st = list_add(g, &g->outputs, &g->n_outputs, &g->cap_outputs, v);
    if (!st)
        v->flags |= SG_VALUE_OUTPUT;
    return st;
}

sg_status sg_graph_remove_input(sg_graph *g, sg_value *v)
{
    if (!list_remove_all(g->inputs, &g->n_inputs, v))
        return SG_ENOTFOUND;
    v->flags &= ~(uint32_t)SG_VALUE_INPUT;
    return SG_OK;
}

sg_status sg_graph_remove_output(sg_graph *g, sg_value *v)
{
    if (!list_remove_all(g->outputs, &g->n_outputs, v))
        return SG_ENOTFOUND;
    v->flags &= ~(uint32_t)SG_VALUE_OUTPUT;
    drop_capture_if_unused(v);
    return SG_OK;
}

static bool list_contains(sg_value *const *arr, uint32_t n, const sg_value *v)
{
    for (uint32_t i = 0; i < n; i++)
        if (arr[i] == v)
            return true;
    return false;
}

sg_status sg_graph_set_output(sg_graph *g, uint32_t i, sg_value *v)
{
    if (i >= g->n_outputs || v->graph != g)
        return SG_EINVAL;
    sg_value *old = g->outputs[i];
    g->outputs[i] = v;
    v->flags |= SG_VALUE_OUTPUT;
    if (old != v && !list_contains(g->outputs, g->n_outputs, old)) {
        old->flags &= ~(uint32_t)SG_VALUE_OUTPUT;
        drop_capture_if_unused(old);
    }
    return SG_OK;
}

sg_status sg_graph_add_value_info(sg_graph *g, sg_value *v)
{
    if (v->flags & SG_VALUE_INFO)
        return SG_OK;
    sg_status st = list_add(g, &g->value_info, &g->n_value_info, &g->cap_value_info, v);
    if (!st)
        v->flags |= SG_VALUE_INFO;
    return st;
}

void sg_graph_remove_value_info(sg_graph *g, sg_value *v)
{
    list_remove_all(g->value_info, &g->n_value_info, v);
    v->flags &= ~(uint32_t)SG_VALUE_INFO;
}

/* Drop the entries of values carrying `mark` from a list. */
static void list_drop_marked(sg_value **arr, uint32_t *n, uint32_t mark)
{
    uint32_t w = 0;
    for (uint32_t r = 0; r < *n; r++)
        if (!(arr[r]->flags & mark))
            arr[w++] = arr[r];
    *n = w;
}

void sg_graph_unlist_values(sg_graph *g, sg_value *const *vals, size_t n, uint32_t lists)
{
    /* One list at a time: a bit above the public flags marks the values
     * to drop, so each list is walked once whatever n is. */
    const uint32_t mark = 1u << 31;
    static const uint32_t kinds[] = {SG_VALUE_INPUT, SG_VALUE_INFO, SG_VALUE_INITIALIZER};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        uint32_t kind = kinds[k];
        if (!(lists & kind))
            continue;
        size_t marked = 0;
        for (size_t i = 0; i < n; i++) {
            sg_value *v = vals[i];
            bool on = kind == SG_VALUE_INITIALIZER ? v && v->init != NULL : v && (v->flags & kind);
            if (on && v->graph == g && !(v->flags & mark)) {
                v->flags |= mark;
                marked++;
            }
        }
        if (!marked)
            continue;
        if (kind == SG_VALUE_INPUT)
            list_drop_marked(g->inputs, &g->n_inputs, mark);
        else if (kind == SG_VALUE_INFO)
            list_drop_marked(g->value_info, &g->n_value_info, mark);
        else
            list_drop_marked(g->inits, &g->n_inits, mark);
        for (size_t i = 0; i < n; i++) {
            sg_value *v = vals[i];
            if (!v || !(v->flags & mark))
                continue;
            v->flags &= ~mark;
            if (kind == SG_VALUE_INITIALIZER) {
                v->init = NULL;
                if (!v->sparse_init)
                    v->flags &= ~(uint32_t)SG_VALUE_INITIALIZER;
            } else {
                v->flags &= ~kind;
            }
        }
    }
}

sg_tensor *sg_value_constant(const sg_value *v)
{
    while (v && v->outer)
        v = v->outer;
    if (!v)
        return NULL;
    if (v->init)
        return (v->flags & SG_VALUE_INPUT) ? NULL : v->init;
    const sg_node *p = v->producer;
    if (p && strcmp(p->op_type, "Constant") == 0 && (!p->domain || !*p->domain)) {
        const sg_attr *at = sg_node_attr(p, "value");
        return at && at->t ? at->t : NULL;
    }
    return NULL;
}

sg_status sg_value_set_initializer(sg_value *v, sg_tensor *t)
{
    sg_graph *g = v->graph;
    if (t) {
        if (v->producer || v->outer)
            return SG_EDUP;
        t->name = v->name;
        if (!v->init) {
            sg_status st = list_add(g, &g->inits, &g->n_inits, &g->cap_inits, v);
            if (st)
                return st;
        }
        v->init = t;
        v->flags |= SG_VALUE_INITIALIZER;
    } else if (v->init) {
        list_remove_all(g->inits, &g->n_inits, v);
        v->init = NULL;
        if (!v->sparse_init)
            v->flags &= ~(uint32_t)SG_VALUE_INITIALIZER;
    }
    return SG_OK;
}

/* Detach v's sparse initializer from its graph's list. */
static void drop_sparse_init(sg_value *v)
{
    sg_graph *g = v->graph;
    uint32_t w = 0;
    for (uint32_t r = 0; r < g->n_sparse_inits; r++)
        if (g->sparse_inits[r] != v->sparse_init)
            g->sparse_inits[w++] = g->sparse_inits[r];
    g->n_sparse_inits = w;
    v->sparse_init = NULL;
    if (!v->init)
        v->flags &= ~(uint32_t)SG_VALUE_INITIALIZER;
}

sg_status sg_value_remove(sg_value *v)
{
    if (v->producer || v->n_uses || (v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT)))
        return SG_EINUSE;
    sg_graph *g = v->graph;
    if (v->flags & SG_VALUE_INFO)
        sg_graph_remove_value_info(g, v);
    if (v->init)
        sg_value_set_initializer(v, NULL);
    if (v->sparse_init)
        drop_sparse_init(v);
    sg_value *outer = v->outer;
    sg__strmap_del(g->values_map, v->name);
    if (outer) {
        v->outer = NULL;
        sg__value_drop_use(outer, g->owner, SG_USE_IMPLICIT);
    }
    return SG_OK;
}

/* The mark of sg_graph_remove_values (sg_graph_unlist_values uses bit 31). */
#define REMOVING (1u << 30)

static bool removable(const sg_graph *g, const sg_value *v)
{
    return v->graph == g && !v->producer && !v->n_uses &&
           !(v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT));
}

/* Drop the entries marked REMOVING from a value list; `info` (the
 * value_info list) clears their INFO flag, else (initializers) their
 * tensor. The mark is cleared once a value has left the last list it is
 * in; returns how many were. */
static size_t drop_removing(sg_value **arr, uint32_t *n, bool info)
{
    uint32_t w = 0;
    size_t cleared = 0;
    for (uint32_t r = 0; r < *n; r++) {
        sg_value *v = arr[r];
        if (!(v->flags & REMOVING)) {
            arr[w++] = v;
        } else if (info) {
            v->flags &= ~(uint32_t)SG_VALUE_INFO;
            if (!v->init) {
                v->flags &= ~REMOVING;
                cleared++;
            }
        } else {
            v->init = NULL;
            if (!v->sparse_init)
                v->flags &= ~(uint32_t)SG_VALUE_INITIALIZER;
            v->flags &= ~REMOVING;
            cleared++;
        }
    }
    *n = w;
    return cleared;
}

sg_status sg_graph_remove_values(sg_graph *g, sg_value **vals, size_t *count)
{
    size_t n = *count, k = 0;
    if (n == 0)
        return SG_OK;
    const char **names = sg_grow(NULL, 0, n * sizeof *names); /* huge pages when big */
    if (!names)
        return SG_ENOMEM;
    /* One walk over the values: check, drop repeats, note the lists. */
    uint32_t lists = 0;
    bool more = false;
    for (size_t i = 0; i < n; i++) {
        if (i + 8 < n)
            __builtin_prefetch(vals[i + 8]);
        sg_value *v = vals[i];
        if (v->flags & REMOVING)
            continue; /* a repeat */
        if (!removable(g, v)) {
            for (size_t j = 0; j < k; j++)
                vals[j]->flags &= ~REMOVING;
            sg_free(names);
            return SG_EINUSE;
        }
        v->flags |= REMOVING;
        lists |= v->flags;
        more = more || v->outer || v->sparse_init;
        names[k] = v->name;
        vals[k++] = v;
    }
    size_t cleared = 0;
    if (lists & SG_VALUE_INFO)
        cleared += drop_removing(g->value_info, &g->n_value_info, true);
    if (lists & SG_VALUE_INITIALIZER)
        cleared += drop_removing(g->inits, &g->n_inits, false);
    sg__strmap_del_many(g->values_map, names, k);
    sg_free(names);
    if (cleared < k || more)
        for (size_t i = 0; i < k; i++) {
            sg_value *v = vals[i], *outer = v->outer;
            v->flags &= ~REMOVING;
            if (v->sparse_init)
                drop_sparse_init(v);
            if (outer) {
                v->outer = NULL;
                sg__value_drop_use(outer, g->owner, SG_USE_IMPLICIT);
            }
        }
    *count = k;
    return SG_OK;
}

/* Rename the captures of v (formerly `old`) held by subgraphs of the nodes
 * that use it. */
static sg_status rename_captures(sg_value *v, const char *old, const char *name,
                                 struct sg_diag *diag);

static sg_status rename_in_graph(sg_value *v, const char *name, struct sg_diag *diag)
{
    sg_graph *g = v->graph;
    if (sg_graph_value(g, name))
        return sg_diag_set(diag, SG_EDUP, "value '%s' already exists in graph '%s'", name,
                           g->name ? g->name : "");
    const char *old = v->name;
    sg__strmap_del(g->values_map, v->name);
    v->name = name;
    if (v->init)
        v->init->name = name;
    if (v->sparse_init && v->sparse_init->values)
        v->sparse_init->values->name = name;
    if (sg__strmap_put(g->values_map, name, v) != SG_OK)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return rename_captures(v, old, name, diag);
}

struct capture_ctx {
    sg_value *outer;
    const char *old;
    const char *name;
    struct sg_diag *diag;
};

static sg_status rename_capture_in(sg_graph *sub, void *ctx)
{
    struct capture_ctx *c = ctx;
    sg_value *cap = sg_graph_value(sub, c->old);
    if (!cap || cap->outer != c->outer)
        return SG_OK;
    return rename_in_graph(cap, c->name, c->diag);
}

static sg_status rename_captures(sg_value *v, const char *old, const char *name,
                                 struct sg_diag *diag)
{
    /* Collect distinct owner nodes first: renaming changes nothing in v->uses. */
    for (uint32_t i = 0; i < v->n_uses; i++) {
        if (v->uses[i].index != SG_USE_IMPLICIT)
            continue;
        bool seen = false;
        for (uint32_t j = 0; j < i; j++)
            if (v->uses[j].index == SG_USE_IMPLICIT && v->uses[j].node == v->uses[i].node)
                seen = true;
        if (seen)
            continue;
        struct capture_ctx c = {v, old, name, diag};
        sg_status st = sg_node_for_each_subgraph(v->uses[i].node, rename_capture_in, &c);
        if (st)
            return st;
    }
    return SG_OK;
}

static bool defined_below(const sg_graph *g, const char *name);

static sg_status below_cb(sg_graph *sub, void *ctx)
{
    return defined_below(sub, ctx) ? SG_EDUP : SG_OK;
}

/* Whether g or a graph nested in it defines a value `name`. */
static bool defined_below(const sg_graph *g, const char *name)
{
    if (sg__strmap_get(g->values_map, name))
        return true;
    if (g->has_subgraphs)
        for (sg_node *n = g->first; n; n = n->next)
            if (sg_node_for_each_subgraph(n, below_cb, (void *)name) == SG_EDUP)
                return true;
    return false;
}

/* Whether `name` would clash in g's scope: a value of g, of a graph that
 * encloses g (which g sees) or of a graph nested in g (which would see
 * both). Graphs side by side (an If's then and else branches) are separate
 * scopes and may use the same names, as ONNX allows. */
static bool clashes_in_scope(const sg_graph *g, const char *name)
{
    for (const sg_graph *up = g->parent; up; up = up->parent)
        if (sg__strmap_get(up->values_map, name))
            return true;
    return defined_below(g, name);
}

sg_status sg_value_rename(sg_value *v, const char *name, struct sg_diag *diag)
{
    if (!name || !*name)
        return sg_diag_set(diag, SG_EINVAL, "empty value name");
    if (v->outer)
        return sg_diag_set(diag, SG_EINVAL, "rename '%s' in the graph that defines it", v->name);
    if (strcmp(v->name, name) == 0)
        return SG_OK;
    if (sg__names_ensure(v->graph->model, true) != SG_OK)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    /* The model-wide set answers most renames at once; a name it holds
     * may still be free in v's scope. */
    if (sg__name_used(v->graph->model, name) && clashes_in_scope(v->graph, name))
        return sg_diag_set(diag, SG_EDUP,
                           "name '%s' is already used in this graph or in one that encloses or is "
                           "nested in it",
                           name);
    const char *copy = sg_arena_strdup(v->graph->model->arena, name);
    if (!copy || sg__name_reserve(v->graph, copy) != SG_OK)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return rename_in_graph(v, copy, diag);
}

/* ---------------------------------------------------------------- nodes */

sg_status sg__node_map_add(sg_graph *g, sg_node *n)
{
    if (!n->name || !*n->name || !g->nodes_map_built)
        return SG_OK;
    return sg__node_map_add_h(g, n, sg__strhash(n->name));
}

sg_status sg__node_map_add_h(sg_graph *g, sg_node *n, uint64_t h)
{
    if (!n->name || !*n->name || !g->nodes_map_built)
        return SG_OK;
    void *first;
    sg_status st = sg__strmap_add_h(g->nodes_map, n->name, h, n, &first);
    if (first)
        g->dup_node_names = true;
    return st;
}

void sg__node_link_last(sg_graph *g, sg_node *n)
{
    n->prev = g->last;
    n->next = NULL;
    if (g->last)
        g->last->next = n;
    else
        g->first = n;
    g->last = n;
    g->n_nodes++;
}

static void list_unlink(sg_graph *g, sg_node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        g->first = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        g->last = n->prev;
    n->prev = n->next = NULL;
    g->n_nodes--;
}

/* sg_node_create with a name already in the arena and its sg__strhash. */
static sg_node *node_create_h(sg_graph *g, const char *op_type, const char *domain,
                              const char *name, uint64_t h, struct sg_diag *diag)
{
    sg_arena *a = g->model->arena;
    sg_node *n = sg_arena_calloc(a, 1, sizeof *n);
    if (!n)
        goto nomem;
    n->graph = g;
    n->op_type = sg_arena_strdup(a, op_type);
    n->domain = sg_arena_strdup(a, domain);
    n->name = name;
    if (!n->op_type || (domain && !n->domain))
        goto nomem;
    if (sg__node_map_add_h(g, n, h) != SG_OK || sg__name_reserve(g, n->name) != SG_OK)
        goto nomem;
    sg__node_link_last(g, n);
    return n;
nomem:
    sg_diag_set(diag, SG_ENOMEM, "out of memory creating a %s node", op_type);
    return NULL;
}

sg_node *sg_node_create(sg_graph *g, const char *op_type, const char *domain, const char *name,
                        struct sg_diag *diag)
{
    const char *copy = sg_arena_strdup(g->model->arena, name);
    if (name && !copy) {
        sg_diag_set(diag, SG_ENOMEM, "out of memory creating a %s node", op_type);
        return NULL;
    }
    return node_create_h(g, op_type, domain, copy, copy ? sg__strhash(copy) : 0, diag);
}

sg_status sg_graph_add_value_fresh(sg_graph *g, const char *base, sg_type *type, sg_value **out,
                                   struct sg_diag *diag)
{
    uint64_t h;
    const char *name = sg__fresh_name_h(g->model, base, g != g->model->graph, SG__NAME_VALUE, &h);
    sg_value *v = name ? sg__value_new_h(g, name, h) : NULL;
    if (!v)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    v->type = type;
    if (out)
        *out = v;
    return SG_OK;
}

sg_node *sg_node_create_fresh(sg_graph *g, const char *op_type, const char *domain,
                              const char *base, struct sg_diag *diag)
{
    uint64_t h;
    const char *name = sg__fresh_name_h(g->model, base, g != g->model->graph, SG__NAME_NODE, &h);
    if (!name) {
        sg_diag_set(diag, SG_ENOMEM, "out of memory creating a %s node", op_type);
        return NULL;
    }
    return node_create_h(g, op_type, domain, name, h, diag);
}

void sg_node_move_before(sg_node *n, sg_node *ref)
{
    if (n == ref || n->graph != ref->graph)
        return;
    sg_graph *g = n->graph;
    list_unlink(g, n);
    n->next = ref;
    n->prev = ref->prev;
    if (ref->prev)
        ref->prev->next = n;
    else
        g->first = n;
    ref->prev = n;
    g->n_nodes++;
}

void sg_node_move_after(sg_node *n, sg_node *ref)
{
    if (n == ref || n->graph != ref->graph)
        return;
    sg_graph *g = n->graph;
    list_unlink(g, n);
    n->prev = ref;
    n->next = ref->next;
    if (ref->next)
        ref->next->prev = n;
    else
        g->last = n;
    ref->next = n;
    g->n_nodes++;
}

static sg_status grow_slots(sg_arena *a, sg_value ***arr, uint32_t n, uint32_t *cap, uint32_t want,
                            uint32_t **pos)
{
    if (want <= *cap)
        return SG_OK;
    uint32_t new_cap = *cap ? *cap * 2 : 4;
    while (new_cap < want)
        new_cap *= 2;
    sg_value **grown = sg_arena_grow(a, *arr, n, new_cap, sizeof *grown);
    uint32_t *grown_pos = pos ? sg_arena_grow(a, *pos, n, new_cap, sizeof *grown_pos) : NULL;
    if (!grown || (pos && !grown_pos))
        return SG_ENOMEM;
    *arr = grown;
    if (pos)
        *pos = grown_pos;
    *cap = new_cap;
    return SG_OK;
}

sg_status sg_node_set_input(sg_node *n, uint32_t i, sg_value *v)
{
    if (i > n->n_inputs || (v && v->graph != n->graph))
        return SG_EINVAL;
    if (i == n->n_inputs) {
        sg_status st = grow_slots(n->graph->model->arena, &n->inputs, n->n_inputs, &n->cap_inputs,
                                  i + 1, &n->use_pos);
        if (st)
            return st;
        n->inputs[i] = NULL;
        n->n_inputs++;
    }
    sg_value *old = n->inputs[i];
    if (old == v)
        return SG_OK;
    /* Drop the old use before adding the new one: both go through the
     * slot's use_pos. Reserving first keeps a failure free of changes. */
    if (v && reserve_use(v) != SG_OK)
        return SG_ENOMEM;
    n->inputs[i] = v;
    if (old)
        sg__value_drop_use(old, n, (int32_t)i);
    if (v)
        sg__value_add_use(v, n, (int32_t)i);
    return SG_OK;
}

sg_status sg_node_remove_input(sg_node *n, uint32_t i)
{
    if (i >= n->n_inputs)
        return SG_EINVAL;
    sg_value *old = n->inputs[i];
    if (old)
        sg__value_drop_use(old, n, (int32_t)i);
    for (uint32_t k = i + 1; k < n->n_inputs; k++) {
        if (n->inputs[k])
            n->inputs[k]->uses[n->use_pos[k]].index = (int32_t)k - 1;
        n->inputs[k - 1] = n->inputs[k];
        n->use_pos[k - 1] = n->use_pos[k];
    }
    n->n_inputs--;
    return SG_OK;
}

sg_status sg_node_set_output(sg_node *n, uint32_t i, sg_value *v)
{
    if (i > n->n_outputs || (v && v->graph != n->graph))
        return SG_EINVAL;
    if (v && (v->producer || v->init || v->outer || (v->flags & SG_VALUE_INPUT)))
        return SG_EDUP;
    if (i == n->n_outputs) {
        sg_status st = grow_slots(n->graph->model->arena, &n->outputs, n->n_outputs,
                                  &n->cap_outputs, i + 1, NULL);
        if (st)
            return st;
        n->outputs[i] = NULL;
        n->n_outputs++;
    }
    sg_value *old = n->outputs[i];
    if (old) {
        old->producer = NULL;
        old->producer_index = 0;
    }
    n->outputs[i] = v;
    if (v) {
        v->producer = n;
        v->producer_index = i;
    }
    return SG_OK;
}

void sg__graph_release_captures(sg_graph *sub)
{
    struct sg__strmap *map = sub->values_map;
    for (size_t i = 0; i < map->cap; i++) {
        sg_value *v = map->slots[i].key ? map->slots[i].value : NULL;
        if (v && v->outer) {
            sg_value *outer = v->outer;
            v->outer = NULL;
            sg__value_drop_use(outer, sub->owner, SG_USE_IMPLICIT);
        }
    }
}

static sg_status release_captures_in(sg_graph *sub, void *ctx)
{
    (void)ctx;
    sg__graph_release_captures(sub);
    return SG_OK;
}

void sg__node_release_captures(sg_node *n)
{
    sg_node_for_each_subgraph(n, release_captures_in, NULL);
}

sg_status sg_node_remove(sg_node *n, struct sg_diag *diag)
{
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        sg_value *v = n->outputs[i];
        if (v && (v->n_uses || (v->flags & SG_VALUE_OUTPUT)))
            return sg_diag_set(
                diag, SG_EINUSE, "cannot remove node '%s': its output '%s' is still %s",
                n->name ? n->name : n->op_type, v->name, v->n_uses ? "read" : "a graph output");
    }
    sg_graph *g = n->graph;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i])
            sg__value_drop_use(n->inputs[i], n, (int32_t)i);
    n->n_inputs = 0;
    sg__node_release_captures(n);
    sg_node_for_each_subgraph(n, release_sub, NULL);
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        sg_value *v = n->outputs[i];
        if (!v)
            continue;
        v->producer = NULL;
        sg_value_remove(v);
    }
    n->n_outputs = 0;
    if (g->nodes_map_built && n->name && sg__strmap_get(g->nodes_map, n->name) == n) {
        sg__strmap_del(g->nodes_map, n->name);
        if (g->dup_node_names)
            for (sg_node *o = g->first; o; o = o->next)
                if (o != n && o->name && strcmp(o->name, n->name) == 0) {
                    sg__strmap_put(g->nodes_map, o->name, o);
                    break;
                }
    }
    list_unlink(g, n);
    n->dead = true;
    return SG_OK;
}

static sg_value *fresh_value_like(sg_value *v, const char *suffix, struct sg_diag *diag)
{
    sg_model *m = v->graph->model;
    size_t nl = strlen(v->name), sl = strlen(suffix);
    char small[128];
    char *base = nl + sl < sizeof small ? small : sg_malloc(nl + sl + 1);
    if (!base) {
        sg_diag_set(diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(base, v->name, nl);
    memcpy(base + nl, suffix, sl + 1);
    uint64_t h;
    const char *name = sg__fresh_name_h(m, base, v->graph != m->graph, SG__NAME_VALUE, &h);
    if (base != small)
        sg_free(base);
    sg_value *nv = name ? sg__value_new_h(v->graph, name, h) : NULL;
    if (!nv)
        sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return nv;
}

sg_status sg_node_insert_after_output(sg_node *after, uint32_t idx, sg_node *n,
                                      struct sg_diag *diag)
{
    if (n->graph != after->graph || idx >= after->n_outputs || !after->outputs[idx])
        return sg_diag_set(diag, SG_EINVAL, "bad insertion point");
    sg_value *v = after->outputs[idx];
    sg_value *mid = fresh_value_like(v, "_pre", diag);
    if (!mid)
        return SG_ENOMEM;
    /* n takes over v (same name, consumers, listing); `after` feeds n via mid. */
    sg_status st = sg_node_set_output(after, idx, NULL);
    if (!st)
        st = sg_node_set_output(after, idx, mid);
    if (!st)
        st = sg_node_set_input(n, 0, mid);
    if (!st) {
        uint32_t slot = n->n_outputs;
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (!n->outputs[k]) {
                slot = k;
                break;
            }
        st = sg_node_set_output(n, slot, v);
    }
    if (st)
        return sg_diag_set(diag, st, "cannot insert after '%s': %s", v->name, sg_strerror(st));
    if (v->type)
        mid->type = v->type;
    sg_node_move_after(n, after);
    return SG_OK;
}

sg_status sg_node_insert_before_input(sg_node *before, uint32_t idx, sg_node *n,
                                      struct sg_diag *diag)
{
    if (n->graph != before->graph || idx >= before->n_inputs || !before->inputs[idx])
        return sg_diag_set(diag, SG_EINVAL, "bad insertion point");
    sg_value *v = before->inputs[idx];
    sg_value *mid = fresh_value_like(v, "_post", diag);
    if (!mid)
        return SG_ENOMEM;
    sg_status st = sg_node_set_input(n, 0, v);
    if (!st)
        st = sg_node_set_output(n, 0, mid);
    if (!st)
        st = sg_node_set_input(before, idx, mid);
    if (st)
        return sg_diag_set(diag, st, "cannot insert before '%s': %s", v->name, sg_strerror(st));
    if (v->type)
        mid->type = v->type;
    sg_node_move_before(n, before);
    return SG_OK;
}

struct repoint_ctx {
    sg_value *old, *new_;
    struct sg_diag *diag;
};

static sg_status repoint_capture(sg_graph *sub, void *ctx)
{
    struct repoint_ctx *c = ctx;
    sg_value *cap = sg_graph_value(sub, c->old->name);
    if (!cap || cap->outer != c->old)
        return SG_OK;
    sg_value *target = sg_graph_resolve(sub, c->new_->name, c->diag);
    if (!target)
        return sg_diag_set(c->diag, SG_ENOMEM, "cannot capture '%s'", c->new_->name);
    if (target->graph != sub || target->outer != c->new_)
        return sg_diag_set(c->diag, SG_EDUP,
                           "subgraph '%s' defines its own '%s'; cannot redirect '%s' to it",
                           sub->name ? sub->name : "", c->new_->name, c->old->name);
    return sg_value_replace_uses(cap, target, true, c->diag);
}

sg_status sg_value_replace_uses(sg_value *old, sg_value *new_, bool outputs_too,
                                struct sg_diag *diag)
{
    if (old == new_)
        return SG_OK;
    if (old->graph != new_->graph)
        return sg_diag_set(diag, SG_EINVAL, "'%s' and '%s' are in different graphs", old->name,
                           new_->name);
    sg_graph *g = old->graph;
    if (outputs_too)
        for (uint32_t i = 0; i < g->n_outputs; i++)
            if (g->outputs[i] == old) {
                g->outputs[i] = new_;
                new_->flags |= SG_VALUE_OUTPUT;
                old->flags &= ~(uint32_t)SG_VALUE_OUTPUT;
            }
    /* Explicit uses: each call removes one entry, so walk from the end.
     * The value may be a capture that disappears with its last use, so do
     * not touch `old` after the list becomes empty. */
    while (old->n_uses) {
        sg_use u = old->uses[old->n_uses - 1];
        sg_status st;
        if (u.index == SG_USE_IMPLICIT) {
            struct repoint_ctx c = {old, new_, diag};
            uint32_t before = old->n_uses;
            st = sg_node_for_each_subgraph(u.node, repoint_capture, &c);
            if (!st && old->n_uses == before)
                st = sg_diag_set(diag, SG_EINVAL, "implicit use of '%s' has no capture", old->name);
        } else {
            st = sg_node_set_input(u.node, (uint32_t)u.index, new_);
        }
        if (st)
            return sg_diag_set(diag, st, "replacing uses of '%s': %s", old->name, sg_strerror(st));
    }
    return SG_OK;
}

size_t sg_graph_count_nodes(const sg_graph *g, bool recursive)
{
    size_t total = g->n_nodes;
    if (!recursive || !g->has_subgraphs)
        return total;
    for (sg_node *n = g->first; n; n = n->next)
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const sg_attr *at = n->attrs[a];
            if (at->g)
                total += sg_graph_count_nodes(at->g, true);
            for (size_t k = 0; k < at->n_graphs; k++)
                total += sg_graph_count_nodes(at->graphs[k], true);
        }
    return total;
}

sg_status sg_node_for_each_subgraph(sg_node *n, sg_subgraph_fn fn, void *ctx)
{
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        sg_attr *at = n->attrs[a];
        if (at->g) {
            sg_status st = fn(at->g, ctx);
            if (st)
                return st;
        }
        for (size_t k = 0; k < at->n_graphs; k++) {
            /* A slot stays NULL when loading stopped before its graph. */
            sg_status st = at->graphs[k] ? fn(at->graphs[k], ctx) : SG_OK;
            if (st)
                return st;
        }
    }
    return SG_OK;
}

/* --------------------------------------------------- renames and types */

sg_status sg_node_rename(sg_node *n, const char *name, struct sg_diag *diag)
{
    if (!name || !*name)
        return sg_diag_set(diag, SG_EINVAL, "empty node name");
    if (n->name && strcmp(n->name, name) == 0)
        return SG_OK;
    sg_graph *g = n->graph;
    sg_node *other = sg_graph_node(g, name);
    if (other && other != n)
        return sg_diag_set(diag, SG_EDUP, "a node named '%s' already exists", name);
    const char *copy = sg_arena_strdup(g->model->arena, name);
    if (!copy || sg__name_reserve(g, copy) != SG_OK)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    const char *old = n->name;
    if (old && *old && sg__strmap_get(g->nodes_map, old) == n) {
        sg__strmap_del(g->nodes_map, old);
        if (g->dup_node_names)
            for (sg_node *o = g->first; o; o = o->next)
                if (o != n && o->name && strcmp(o->name, old) == 0) {
                    if (sg__strmap_put(g->nodes_map, o->name, o) != SG_OK)
                        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
                    break;
                }
    }
    n->name = copy;
    if (sg__strmap_put(g->nodes_map, copy, n) != SG_OK)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return SG_OK;
}

sg_status sg_value_rename_fresh(sg_value *v, const char *base, struct sg_diag *diag)
{
    if (v->outer)
        return sg_diag_set(diag, SG_EINVAL, "rename '%s' in the graph that defines it", v->name);
    const char *name = sg_model_fresh_name(v->graph->model, base);
    if (!name)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return rename_in_graph(v, name, diag);
}

void sg_value_set_type(sg_value *v, sg_type *type)
{
    v->type = type;
}

int32_t sg_value_dtype(const sg_value *v)
{
    for (; v; v = v->outer) {
        const sg_type *t = v->type;
        if (t && t->kind == SG_TYPE_TENSOR && t->has_elem_type)
            return t->elem_type;
        if (t && t->kind != SG_TYPE_TENSOR && t->kind != SG_TYPE_NONE)
            return SG_DTYPE_UNDEFINED;
        if (v->init && v->init->has_dtype)
            return v->init->dtype;
        if (v->sparse_init && v->sparse_init->values && v->sparse_init->values->has_dtype)
            return v->sparse_init->values->dtype;
    }
    return SG_DTYPE_UNDEFINED;
}

sg_status sg_graph_for_each_value(sg_graph *g, sg_value_fn fn, void *ctx)
{
    struct sg__strmap *map = g->values_map;
    for (size_t i = 0; i < map->cap; i++) {
        if (!map->slots[i].key)
            continue;
        sg_status st = fn(map->slots[i].value, ctx);
        if (st)
            return st;
    }
    return SG_OK;
}
