/* ir_attr.c - node attributes: lookup, typed getters with defaults, setters. */
#include "ir_impl.h"

#include <string.h>

sg_attr *sg_node_attr(const sg_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i]->name && strcmp(n->attrs[i]->name, name) == 0)
            return n->attrs[i];
    return NULL;
}

/* A graph attribute being replaced or removed: its subgraphs no longer read
 * outer values and their maps are freed (the arena keeps the rest). */
static void release_graphs(sg_attr *at)
{
    if (at->g) {
        sg__graph_release_captures(at->g);
        sg__graph_release(at->g);
    }
    for (size_t k = 0; k < at->n_graphs; k++) {
        sg__graph_release_captures(at->graphs[k]);
        sg__graph_release(at->graphs[k]);
    }
}

/* The attribute `name`, emptied for a new value, added when missing. */
static sg_attr *attr_reset(sg_node *n, const char *name, enum sg_attr_type type)
{
    sg_arena *a = n->graph->model->arena;
    sg_attr *at = sg_node_attr(n, name);
    if (at)
        release_graphs(at); /* a replaced graph attribute no longer reads outer values */
    if (!at) {
        at = sg_arena_calloc(a, 1, sizeof *at);
        if (!at)
            return NULL;
        at->name = sg_arena_strdup(a, name);
        if (!at->name ||
            sg__ptr_push(a, (void ***)&n->attrs, &n->n_attrs, &n->cap_attrs, at) != SG_OK)
            return NULL;
    } else {
        const char *keep = at->name;
        memset(at, 0, sizeof *at);
        at->name = keep;
    }
    at->has_type = true;
    at->type = type;
    return at;
}

sg_status sg_node_set_attr_int(sg_node *n, const char *name, int64_t v)
{
    sg_attr *at = attr_reset(n, name, SG_ATTR_INT);
    if (!at)
        return SG_ENOMEM;
    at->has_i = true;
    at->i = v;
    return SG_OK;
}

sg_status sg_node_set_attr_float(sg_node *n, const char *name, float v)
{
    sg_attr *at = attr_reset(n, name, SG_ATTR_FLOAT);
    if (!at)
        return SG_ENOMEM;
    at->has_f = true;
    at->f = v;
    return SG_OK;
}

sg_status sg_node_set_attr_string(sg_node *n, const char *name, const char *v)
{
    sg_attr *at = attr_reset(n, name, SG_ATTR_STRING);
    if (!at)
        return SG_ENOMEM;
    size_t len = strlen(v);
    at->s.data = sg_arena_memdup(n->graph->model->arena, v, len);
    at->s.len = len;
    at->has_s = true;
    return at->s.data ? SG_OK : SG_ENOMEM;
}

sg_status sg_node_set_attr_ints(sg_node *n, const char *name, const int64_t *v, size_t count)
{
    sg_attr *at = attr_reset(n, name, SG_ATTR_INTS);
    if (!at)
        return SG_ENOMEM;
    at->ints = sg_arena_memdup(n->graph->model->arena, v, count * sizeof *v);
    at->n_ints = count;
    return at->ints ? SG_OK : SG_ENOMEM;
}

sg_status sg_node_set_attr_floats(sg_node *n, const char *name, const float *v, size_t count)
{
    sg_attr *at = attr_reset(n, name, SG_ATTR_FLOATS);
    if (!at)
        return SG_ENOMEM;
    at->floats = sg_arena_memdup(n->graph->model->arena, v, count * sizeof *v);
    at->n_floats = count;
    return at->floats ? SG_OK : SG_ENOMEM;
}

sg_status sg_node_set_attr_strings(sg_node *n, const char *name, const char *const *v, size_t count)
{
    sg_attr *at = attr_reset(n, name, SG_ATTR_STRINGS);
    if (!at)
        return SG_ENOMEM;
    sg_arena *a = n->graph->model->arena;
    at->strings = sg_arena_calloc(a, count ? count : 1, sizeof *at->strings);
    if (!at->strings)
        return SG_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(v[i]);
        at->strings[i].data = sg_arena_memdup(a, v[i], len ? len : 1);
        at->strings[i].len = len;
        if (!at->strings[i].data)
            return SG_ENOMEM;
        at->n_strings = i + 1;
    }
    return SG_OK;
}

sg_status sg_node_set_attr_tensor(sg_node *n, const char *name, sg_tensor *t)
{
    sg_attr *at = attr_reset(n, name, SG_ATTR_TENSOR);
    if (!at)
        return SG_ENOMEM;
    at->t = t;
    return SG_OK;
}

sg_graph *sg_node_set_attr_graph(sg_node *n, const char *name)
{
    sg_graph *sub = sg__graph_create(n->graph->model, SG_GRAPH_SUB, n->graph, n);
    if (!sub)
        return NULL;
    sg_attr *at = attr_reset(n, name, SG_ATTR_GRAPH);
    if (!at) {
        sg__graph_release(sub);
        return NULL;
    }
    at->g = sub;
    n->graph->has_subgraphs = true;
    return sub;
}

void sg_node_remove_attr(sg_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        sg_attr *at = n->attrs[i];
        if (at->name && strcmp(at->name, name) == 0) {
            release_graphs(at);
            memmove(&n->attrs[i], &n->attrs[i + 1], (n->n_attrs - i - 1) * sizeof *n->attrs);
            n->n_attrs--;
            return;
        }
    }
}

int64_t sg_attr_int(const sg_node *n, const char *name, int64_t dflt)
{
    const sg_attr *at = sg_node_attr(n, name);
    return at && at->type == SG_ATTR_INT ? at->i : dflt;
}

float sg_attr_float(const sg_node *n, const char *name, float dflt)
{
    const sg_attr *at = sg_node_attr(n, name);
    return at && at->type == SG_ATTR_FLOAT ? at->f : dflt;
}

sg_bytes sg_attr_bytes(const sg_node *n, const char *name, sg_bytes dflt)
{
    const sg_attr *at = sg_node_attr(n, name);
    return at && at->type == SG_ATTR_STRING ? at->s : dflt;
}
