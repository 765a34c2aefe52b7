/* ir_model.c - model lifecycle, opsets, metadata, names and blobs. */
#include "ir_impl.h"
#include "sg_alloc.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

sg_model *sg_model_create(void)
{
    sg_model *m = sg_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->arena = sg_arena_create();
    m->names = sg_calloc(1, sizeof(struct sg__strmap));
    if (!m->arena || !m->names)
        goto fail;
    m->graph = sg__graph_create(m, SG_GRAPH_MAIN, NULL, NULL);
    if (!m->graph)
        goto fail;
    return m;
fail:
    sg_model_free(m);
    return NULL;
}

static void release_graph_list(sg_graph *g)
{
    if (g)
        sg__graph_release(g);
}

void sg_model_free(sg_model *m)
{
    if (!m)
        return;
    release_graph_list(m->graph);
    for (size_t i = 0; i < m->n_functions; i++)
        release_graph_list(m->functions[i].body);
    for (size_t i = 0; i < m->n_training; i++) {
        release_graph_list(m->training[i].initialization);
        release_graph_list(m->training[i].algorithm);
    }
    for (size_t i = 0; i < m->n_owned; i++)
        sg_blob_unref(m->owned[i]->owner);
    sg_free(m->owned);
    for (size_t i = 0; i < m->n_mappings; i++)
        sg_blob_unref(m->mappings[i]);
    sg_blob_unref(m->source);
    sg_free(m->mappings);
    if (m->names) {
        sg__strmap_free(m->names);
        sg_free(m->names);
    }
    sg_free(m->path);
    sg_free(m->dir);
    sg_arena_free(m->arena);
    for (size_t i = 0; i < m->n_kept; i++)
        sg_model_free(m->kept[i]);
    sg_free(m->kept);
    sg_free(m);
}

const char *sg__canon_domain(const char *domain)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0)
        return "";
    return domain;
}

int64_t sg_model_opset(const sg_model *m, const char *domain)
{
    const char *want = sg__canon_domain(domain);
    for (size_t i = 0; i < m->n_opsets; i++)
        if (strcmp(sg__canon_domain(m->opsets[i].domain), want) == 0)
            return m->opsets[i].has_version ? m->opsets[i].version : 0;
    return 0;
}

sg_status sg_model_set_opset(sg_model *m, const char *domain, int64_t version)
{
    const char *want = sg__canon_domain(domain);
    for (size_t i = 0; i < m->n_opsets; i++) {
        if (strcmp(sg__canon_domain(m->opsets[i].domain), want) == 0) {
            m->opsets[i].has_version = true;
            m->opsets[i].version = version;
            return SG_OK;
        }
    }
    sg_opset *grown =
        sg_arena_grow(m->arena, m->opsets, m->n_opsets, m->n_opsets + 1, sizeof *m->opsets);
    if (!grown)
        return SG_ENOMEM;
    sg_opset *o = &grown[m->n_opsets];
    memset(o, 0, sizeof *o);
    o->domain = sg_arena_strdup(m->arena, domain ? domain : "");
    if (!o->domain)
        return SG_ENOMEM;
    o->has_version = true;
    o->version = version;
    m->opsets = grown;
    m->n_opsets++;
    return SG_OK;
}

const char *sg_model_metadata(const sg_model *m, const char *key)
{
    for (size_t i = 0; i < m->n_metadata; i++)
        if (m->metadata[i].key && strcmp(m->metadata[i].key, key) == 0)
            return m->metadata[i].value;
    return NULL;
}

sg_status sg_model_set_metadata(sg_model *m, const char *key, const char *value)
{
    const char *v = sg_arena_strdup(m->arena, value);
    if (!v)
        return SG_ENOMEM;
    for (size_t i = 0; i < m->n_metadata; i++) {
        if (m->metadata[i].key && strcmp(m->metadata[i].key, key) == 0) {
            m->metadata[i].value = v;
            return SG_OK;
        }
    }
    sg_kv *grown =
        sg_arena_grow(m->arena, m->metadata, m->n_metadata, m->n_metadata + 1, sizeof *m->metadata);
    const char *k = sg_arena_strdup(m->arena, key);
    if (!grown || !k)
        return SG_ENOMEM;
    grown[m->n_metadata] = (sg_kv){k, v, {NULL, 0}};
    m->metadata = grown;
    m->n_metadata++;
    return SG_OK;
}

const char *sg_model_strdup(sg_model *m, const char *s)
{
    return sg_arena_strdup(m->arena, s);
}

/*
 * Names in use, for fresh names. The main graph's own value and node maps
 * answer for its names (no copy of its 100,000s of names is made); the set
 * m->names holds the rest: names of every other graph (subgraphs, function
 * bodies, training graphs) and every name handed out or given since it was
 * built. It is built on the first request (a load that never creates names
 * never pays for it) and kept up to date from then on; names that leave the
 * model may stay in it, which only makes fresh names more conservative.
 */
static sg_status names_add_graph(struct sg__strmap *set, sg_graph *g);

static sg_status names_add_sub(sg_graph *sub, void *ctx)
{
    return names_add_graph(ctx, sub);
}

/* The names of the graphs nested in g's nodes. */
static sg_status names_add_nested(struct sg__strmap *set, sg_graph *g)
{
    sg_status st = SG_OK;
    if (g->has_subgraphs)
        for (sg_node *n = g->first; n && !st; n = n->next)
            st = sg_node_for_each_subgraph(n, names_add_sub, set);
    return st;
}

static sg_status names_add_graph(struct sg__strmap *set, sg_graph *g)
{
    if (!g)
        return SG_OK;
    struct sg__strmap *map = g->values_map;
    sg_status st = sg__strmap_reserve(set, set->count + map->count + g->n_nodes);
    for (size_t i = 0; !st && i < map->cap; i++)
        if (map->slots[i].key)
            st = sg__strmap_put(set, map->slots[i].key, (void *)map->slots[i].key);
    for (sg_node *n = g->first; n && !st; n = n->next)
        if (n->name && *n->name)
            st = sg__strmap_put(set, n->name, (void *)n->name);
    return st ? st : names_add_nested(set, g);
}

sg_status sg__names_ensure(sg_model *m, bool nodes)
{
    if (nodes && m->graph && sg__nodes_map_ensure(m->graph) != SG_OK)
        return SG_ENOMEM;
    if (m->names_built)
        return SG_OK;
    struct sg__strmap *set = m->names;
    sg_status st = m->graph ? names_add_nested(set, m->graph) : SG_OK;
    for (size_t i = 0; !st && i < m->n_functions; i++)
        st = names_add_graph(set, m->functions[i].body);
    for (size_t i = 0; !st && i < m->n_training; i++) {
        st = names_add_graph(set, m->training[i].initialization);
        if (!st)
            st = names_add_graph(set, m->training[i].algorithm);
    }
    if (st) {
        sg__strmap_free(set);
        return st;
    }
    m->names_built = true;
    return SG_OK;
}

sg_status sg__name_reserve(sg_graph *g, const char *name)
{
    if (!name || !*name || !g->model->names_built)
        return SG_OK; /* not built yet: the build will find it in the graph */
    if (g == g->model->graph)
        return SG_OK; /* the main graph's maps have it */
    return sg__strmap_put(g->model->names, name, (void *)name);
}

/* sg__name_used with the name's sg__strhash known: one hash, the main
 * graph's maps that `kind` needs, and the set. */
static bool name_used_h(const sg_model *m, const char *name, uint64_t h, enum sg__name_kind kind)
{
    if (m->graph && kind != SG__NAME_NODE && sg__strmap_get_h(m->graph->values_map, name, h))
        return true;
    if (m->graph && kind != SG__NAME_VALUE && sg__strmap_get_h(m->graph->nodes_map, name, h))
        return true;
    return sg__strmap_get_h(m->names, name, h) != NULL;
}

bool sg__name_used(const sg_model *m, const char *name)
{
    return name_used_h(m, name, sg__strhash(name), SG__NAME_ANY);
}

void sg_model_prefetch_fresh(const sg_model *m, const char *base, const char *suffix, bool node)
{
    char name[256];
    size_t bl = strlen(base), sl = strlen(suffix);
    if (!m->graph || bl + sl >= sizeof name)
        return;
    memcpy(name, base, bl);
    memcpy(name + bl, suffix, sl);
    sg__strmap_prefetch_h(node ? m->graph->nodes_map : m->graph->values_map,
                          sg__strhash_n(name, bl + sl));
}

const char *sg_model_fresh_name(sg_model *m, const char *base)
{
    return sg__fresh_name(m, base, true, SG__NAME_ANY);
}

const char *sg__fresh_name(sg_model *m, const char *base, bool hold, enum sg__name_kind kind)
{
    uint64_t h;
    return sg__fresh_name_h(m, base, hold, kind, &h);
}

const char *sg__fresh_name_h(sg_model *m, const char *base, bool hold, enum sg__name_kind kind,
                             uint64_t *hash)
{
    if (sg__names_ensure(m, kind != SG__NAME_VALUE) != SG_OK)
        return NULL;
    if (!base || !*base)
        base = "sg";
    size_t bl = strlen(base);
    uint64_t h = sg__strhash_n(base, bl);
    char *name;
    if (!name_used_h(m, base, h, kind)) {
        if (!(name = sg_arena_strndup(m->arena, base, bl)))
            return NULL;
    } else {
        if (!(name = sg_arena_alloc(m->arena, bl + 24)))
            return NULL;
        /* "<base>_<n>", n counting up: hand-formatted, this runs once per
         * inserted node and value. */
        memcpy(name, base, bl);
        name[bl] = '_';
        size_t len;
        do {
            char digits[24];
            int k = 0;
            for (unsigned long long v = ++m->fresh; v; v /= 10)
                digits[k++] = (char)('0' + v % 10);
            for (int i = 0; i < k; i++)
                name[bl + 1 + i] = digits[k - 1 - i];
            len = bl + 1 + (size_t)k;
            name[len] = '\0';
            h = sg__strhash_n(name, len);
        } while (name_used_h(m, name, h, kind));
    }
    /* Not in any graph yet: held in the set until it is. */
    if (hold && sg__strmap_put_h(m->names, name, h, name) != SG_OK)
        return NULL;
    *hash = h;
    return name;
}

sg_blob *sg_blob_create(size_t size)
{
    sg_blob *b = sg_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->data = sg_malloc(size);
    if (!b->data) {
        sg_free(b);
        return NULL;
    }
    b->refs = 1;
    b->size = size;
    return b;
}

void sg_blob_ref(sg_blob *blob)
{
    if (blob)
        blob->refs++;
}

void sg_blob_unref(sg_blob *blob)
{
    if (!blob || --blob->refs > 0)
        return;
    if (blob->mapped) {
        if (blob->size)
            munmap(blob->data, blob->size);
    } else {
        sg_free(blob->data);
    }
    sg_free(blob->path);
    sg_free(blob->real);
    sg_free(blob);
}
