/*
 * atc_map.c - the compiled-op map of an `atc --mode=1` JSON: which ONNX nodes
 * each compiled op covers and which fusion passes made it (see sg_fusion.h).
 */
#include "sg_fusion.h"

#include "sg_alloc.h"
#include "sg_json_read.h"

#include <string.h>

/* Where to find the strings of an attr value: {"list":{"s":[...]}} or {"s":"..."}.
 * A list without "s" is empty (ATC writes {"list":{"val_type":1}}). */
static sg_status attr_strings(struct sg_jdoc *doc, const struct sg_jval *value, const char *key,
                              const char *op, const char ***out, size_t *n, struct sg_diag *diag)
{
    const char *label = doc->label;
    const struct sg_jval *list = sg_jval_get(value, "list");
    const struct sg_jval *s = NULL;
    if (list) {
        if (list->type != SG_JSON_OBJECT)
            goto bad;
        s = sg_jval_get(list, "s");
        if (!s) {
            *out = NULL;
            *n = 0;
            return SG_OK;
        }
        if (s->type != SG_JSON_ARRAY)
            goto bad;
    } else {
        s = sg_jval_get(value, "s");
        if (!s || s->type != SG_JSON_STRING)
            goto bad;
    }
    size_t count = s->type == SG_JSON_ARRAY ? s->n_items : 1;
    const char **v = sg_arena_calloc(doc->arena, count ? count : 1, sizeof *v);
    if (!v)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    for (size_t i = 0; i < count; i++) {
        const struct sg_jval *item = s->type == SG_JSON_ARRAY ? s->items[i] : s;
        if (item->type != SG_JSON_STRING)
            return sg_diag_set(diag, SG_EPARSE,
                               "%s:%u:%u: attr \"%s\" of op \"%s\" lists a %s, expected strings",
                               label, item->line, item->col, key, op, sg_jtype_name(item->type));
        v[i] = item->str;
    }
    *out = v;
    *n = count;
    return SG_OK;
bad:
    return sg_diag_set(diag, SG_EPARSE,
                       "%s:%u:%u: attr \"%s\" of op \"%s\": expected {\"list\": {\"s\": [...]}} or "
                       "{\"s\": \"...\"}",
                       label, value->line, value->col, key, op);
}

static sg_status read_op(struct sg_jdoc *doc, const struct sg_jval *o, struct sg_atc_op *op,
                         struct sg_diag *diag)
{
    const char *label = doc->label;
    if (o->type != SG_JSON_OBJECT)
        return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: an op must be an object, found a %s", label,
                           o->line, o->col, sg_jtype_name(o->type));
    const struct sg_jval *name = sg_jval_get(o, "name");
    if (!name || name->type != SG_JSON_STRING)
        return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: op without a string \"name\"", label,
                           o->line, o->col);
    const struct sg_jval *type = sg_jval_get(o, "type");
    if (type && type->type != SG_JSON_STRING)
        return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: \"type\" of op \"%s\" must be a string",
                           label, type->line, type->col, name->str);
    memset(op, 0, sizeof *op);
    op->name = name->str;
    op->type = type ? type->str : "";
    op->line = o->line;
    op->col = o->col;
    const struct sg_jval *attrs = sg_jval_get(o, "attr");
    if (!attrs)
        return SG_OK;
    if (attrs->type != SG_JSON_ARRAY)
        return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: \"attr\" of op \"%s\" must be an array",
                           label, attrs->line, attrs->col, op->name);
    for (size_t i = 0; i < attrs->n_items; i++) {
        const struct sg_jval *a = attrs->items[i];
        const struct sg_jval *key = sg_jval_get(a, "key");
        const struct sg_jval *value = sg_jval_get(a, "value");
        if (a->type != SG_JSON_OBJECT || !key || key->type != SG_JSON_STRING)
            return sg_diag_set(diag, SG_EPARSE,
                               "%s:%u:%u: an attr of op \"%s\" must be {\"key\": \"...\", "
                               "\"value\": {...}}",
                               label, a->line, a->col, op->name);
        const char ***dst = NULL;
        size_t *dst_n = NULL;
        const char **ub = NULL;
        size_t ub_n = 0;
        if (strcmp(key->str, "_datadump_original_op_names") == 0) {
            dst = &op->orig, dst_n = &op->n_orig;
        } else if (strcmp(key->str, "pass_name") == 0) {
            dst = &op->passes, dst_n = &op->n_passes;
        } else if (strcmp(key->str, "pass_name_ub") == 0) {
            dst = &ub, dst_n = &ub_n;
        } else {
            continue;
        }
        if (!value || value->type != SG_JSON_OBJECT)
            return sg_diag_set(diag, SG_EPARSE,
                               "%s:%u:%u: attr \"%s\" of op \"%s\" has no \"value\" object", label,
                               a->line, a->col, key->str, op->name);
        sg_status st = attr_strings(doc, value, key->str, op->name, dst, dst_n, diag);
        if (st)
            return st;
        if (dst == &ub) {
            if (ub_n > 1)
                return sg_diag_set(diag, SG_EPARSE,
                                   "%s:%u:%u: op \"%s\" names %zu UB fusion passes, expected one",
                                   label, value->line, value->col, op->name, ub_n);
            op->ub_pass = ub_n && *ub[0] ? ub[0] : NULL;
        }
    }
    return SG_OK;
}

/* Fill map->ops from map->doc. */
static sg_status build_map(sg_atc_map *map, struct sg_diag *diag)
{
    const char *label = map->doc->label;
    const struct sg_jval *root = map->doc->root;
    const struct sg_jval *graphs = sg_jval_get(root, "graph");
    if (!graphs || graphs->type != SG_JSON_ARRAY)
        return sg_diag_set(diag, SG_EPARSE,
                           "%s:%u:%u: no \"graph\" array: not the JSON of 'atc --mode=1'", label,
                           graphs ? graphs->line : root->line, graphs ? graphs->col : root->col);
    size_t total = 0;
    for (size_t g = 0; g < graphs->n_items; g++) {
        const struct sg_jval *gv = graphs->items[g];
        if (gv->type != SG_JSON_OBJECT)
            return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: a graph must be an object, found a %s",
                               label, gv->line, gv->col, sg_jtype_name(gv->type));
        const struct sg_jval *ops = sg_jval_get(gv, "op");
        if (ops && ops->type != SG_JSON_ARRAY)
            return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: \"op\" must be an array, found a %s",
                               label, ops->line, ops->col, sg_jtype_name(ops->type));
        total += ops ? ops->n_items : 0;
    }
    map->ops = sg_calloc(total ? total : 1, sizeof *map->ops);
    if (!map->ops)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    for (size_t g = 0; g < graphs->n_items; g++) {
        const struct sg_jval *ops = sg_jval_get(graphs->items[g], "op");
        for (size_t i = 0; ops && i < ops->n_items; i++) {
            sg_status st = read_op(map->doc, ops->items[i], &map->ops[map->n_ops], diag);
            if (st)
                return st;
            map->n_ops++;
        }
    }
    return SG_OK;
}

sg_status sg_atc_map_parse(const char *text, size_t len, const char *label, sg_atc_map **out,
                           struct sg_diag *diag)
{
    *out = NULL;
    if (!label)
        label = "<atc json>";
    sg_atc_map *map = sg_calloc(1, sizeof *map);
    if (!map)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    sg_status st = sg_json_parse(text, len, label, NULL, &map->doc, diag);
    if (!st)
        st = build_map(map, diag);
    if (st) {
        sg_atc_map_free(map);
        return st;
    }
    *out = map;
    return SG_OK;
}

sg_status sg_atc_map_read(const char *path, sg_atc_map **out, struct sg_diag *diag)
{
    *out = NULL;
    sg_atc_map *map = sg_calloc(1, sizeof *map);
    if (!map)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    sg_status st = sg_json_parse_file(path, NULL, &map->doc, diag);
    if (!st)
        st = build_map(map, diag);
    if (st) {
        sg_atc_map_free(map);
        return st;
    }
    *out = map;
    return SG_OK;
}

void sg_atc_map_free(sg_atc_map *map)
{
    if (!map)
        return;
    sg_free(map->ops);
    sg_jdoc_free(map->doc);
    sg_free(map);
}

bool sg_atc_op_covers(const struct sg_atc_op *op, const char *node)
{
    if (op->n_orig == 0)
        return strcmp(op->name, node) == 0;
    for (size_t i = 0; i < op->n_orig; i++)
        if (strcmp(op->orig[i], node) == 0)
            return true;
    return false;
}

/* The passes found behind the nodes so far (names point into the map). */
struct found {
    const char **names;
    enum sg_fusion_kind *kinds;
    size_t n, cap;
};

/* Switch `name` off in section `kind` (an explicit entry that is off
 * already stays as it is) and remember it once. */
static sg_status switch_off(sg_fusion_switch *sw, struct found *f, enum sg_fusion_kind kind,
                            const char *name, const struct sg_atc_op *op, struct sg_diag *diag)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->kinds[i] == kind && strcmp(f->names[i], name) == 0)
            return SG_OK;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        const char **names = sg_realloc(f->names, cap * sizeof *names);
        if (!names)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        f->names = names;
        enum sg_fusion_kind *kinds = sg_realloc(f->kinds, cap * sizeof *kinds);
        if (!kinds)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        f->kinds = kinds;
        f->cap = cap;
    }
    bool already = false;
    for (size_t i = 0; i < sw->n_entries; i++) {
        const struct sg_fusion_switch_entry *e = &sw->entries[i];
        if (!e->any_kind && e->kind == kind && !e->on && strcmp(e->name, name) == 0)
            already = true;
    }
    sg_status st = already ? SG_OK : sg_fusion_switch_set(sw, kind, name, false, diag);
    if (st) {
        sg_diag_prefix(diag, "pass of op \"%s\"", op->name);
        return st;
    }
    f->names[f->n] = name;
    f->kinds[f->n++] = kind;
    return SG_OK;
}

sg_status sg_fusion_switch_off_for_nodes(sg_fusion_switch *sw, const sg_atc_map *map,
                                         const char *const *nodes, size_t n_nodes, bool *uncovered,
                                         size_t *n_off, struct sg_diag *diag)
{
    struct found f = {0};
    sg_status st = SG_OK;
    for (size_t i = 0; i < n_nodes; i++) {
        bool covered = false;
        for (size_t k = 0; k < map->n_ops; k++) {
            const struct sg_atc_op *op = &map->ops[k];
            if (!sg_atc_op_covers(op, nodes[i]))
                continue;
            covered = true;
            for (size_t p = 0; p < op->n_passes; p++)
                if (*op->passes[p] &&
                    (st = switch_off(sw, &f, SG_FUSION_GRAPH, op->passes[p], op, diag)))
                    goto out;
            if (op->ub_pass && (st = switch_off(sw, &f, SG_FUSION_UB, op->ub_pass, op, diag)))
                goto out;
        }
        if (uncovered)
            uncovered[i] = !covered;
    }
    if (n_off)
        *n_off = f.n;
out:
    sg_free(f.names);
    sg_free(f.kinds);
    return st;
}
