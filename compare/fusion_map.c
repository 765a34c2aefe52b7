/*
 * fusion_map.c - the `atc --mode=1` JSON of a compiled model, reduced to
 * what the comparison needs: each compiled op, the ONNX nodes it came from
 * (_datadump_original_op_names), the fusion passes that made it (pass_name,
 * pass_name_ub) and, per output, the original node and output it stands for
 * when ATC says so (output_desc attrs _datadump_origin_name,
 * _datadump_origin_output_index).
 *
 * The JSON is read with graph/'s strict parser (sg_json_read.h); errors
 * carry file:line:column. The strings of the map stay in the parsed
 * document, which the map keeps until sg_fusion_map_free.
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_arena.h"
#include "sg_json_read.h"

#include <stdio.h>
#include <string.h>

struct build {
    sg_arena *arena;
    const char *label;
    struct sg_diag *diag;
};

static sg_status type_error(struct build *b, const struct sg_jval *at, const char *op,
                            const char *what)
{
    if (op)
        return sg_diag_set(b->diag, SG_EPARSE, "%s:%u:%u: op '%s': %s", b->label, at->line, at->col,
                           op, what);
    return sg_diag_set(b->diag, SG_EPARSE, "%s:%u:%u: %s", b->label, at->line, at->col, what);
}

static sg_status nomem(struct build *b)
{
    return sg_diag_set(b->diag, SG_ENOMEM, "%s: out of memory", b->label);
}

/* An attr's value {"list":{"s":[...]}} or {"s":"..."}: its strings into *out. */
static sg_status attr_strings(struct build *b, const struct sg_jval *attr, const char *op,
                              const char *key, const char ***out, size_t *n)
{
    const struct sg_jval *value = sg_jval_get(attr, "value");
    *out = NULL;
    *n = 0;
    char msg[256];
    snprintf(msg, sizeof msg,
             "attr '%s' holds neither {\"list\":{\"s\":[strings]}} nor {\"s\":string}", key);
    if (!value || value->type != SG_JSON_OBJECT)
        return type_error(b, attr, op, msg);
    const struct sg_jval *list = sg_jval_get(value, "list");
    if (list && list->type != SG_JSON_OBJECT)
        return type_error(b, list, op, msg);
    const struct sg_jval *s = sg_jval_get(list ? list : value, "s");
    if (!s)
        return SG_OK; /* a list without "s" is empty */
    if (s->type == SG_JSON_STRING) {
        if (!(*out = sg_arena_alloc(b->arena, sizeof **out)))
            return nomem(b);
        (*out)[0] = s->str;
        *n = 1;
        return SG_OK;
    }
    if (s->type != SG_JSON_ARRAY)
        return type_error(b, s, op, msg);
    if (!(*out = sg_arena_calloc(b->arena, s->n_items ? s->n_items : 1, sizeof **out)))
        return nomem(b);
    for (size_t i = 0; i < s->n_items; i++) {
        if (s->items[i]->type != SG_JSON_STRING)
            return type_error(b, s->items[i], op, msg);
        (*out)[i] = s->items[i]->str;
    }
    *n = s->n_items;
    return SG_OK;
}

static sg_status read_output_desc(struct build *b, const struct sg_jval *descs,
                                  struct sg_fusion_op *op)
{
    if (descs->type != SG_JSON_ARRAY)
        return type_error(b, descs, op->name, "\"output_desc\" is not an array");
    size_t n = descs->n_items;
    op->n_outputs = n;
    op->out_orig = sg_arena_calloc(b->arena, n ? n : 1, sizeof *op->out_orig);
    op->out_index = sg_arena_calloc(b->arena, n ? n : 1, sizeof *op->out_index);
    if (!op->out_orig || !op->out_index)
        return nomem(b);
    for (size_t i = 0; i < n; i++) {
        op->out_index[i] = -1;
        const struct sg_jval *attrs = sg_jval_get(descs->items[i], "attr");
        if (!attrs)
            continue;
        if (attrs->type != SG_JSON_ARRAY)
            return type_error(b, attrs, op->name, "output_desc \"attr\" is not an array");
        for (size_t k = 0; k < attrs->n_items; k++) {
            const struct sg_jval *key = sg_jval_get(attrs->items[k], "key");
            const struct sg_jval *value = sg_jval_get(attrs->items[k], "value");
            if (!key || key->type != SG_JSON_STRING)
                continue;
            if (strcmp(key->str, "_datadump_origin_name") == 0) {
                const struct sg_jval *s = sg_jval_get(value, "s");
                if (!s || s->type != SG_JSON_STRING)
                    return type_error(b, attrs->items[k], op->name,
                                      "_datadump_origin_name is not {\"s\":string}");
                op->out_orig[i] = s->str[0] ? s->str : NULL;
            } else if (strcmp(key->str, "_datadump_origin_output_index") == 0) {
                const struct sg_jval *v = sg_jval_get(value, "i");
                if (!v || v->type != SG_JSON_NUMBER || !v->is_int || v->i < 0 || v->i > UINT32_MAX)
                    return type_error(b, attrs->items[k], op->name,
                                      "_datadump_origin_output_index is not {\"i\":index}");
                op->out_index[i] = v->i;
            }
        }
    }
    return SG_OK;
}

static sg_status read_op(struct build *b, const struct sg_jval *o, struct sg_fusion_op *op)
{
    if (o->type != SG_JSON_OBJECT)
        return type_error(b, o, NULL, "an op is not an object");
    const struct sg_jval *name = sg_jval_get(o, "name"), *type = sg_jval_get(o, "type"),
                         *attrs = sg_jval_get(o, "attr");
    if (!name || name->type != SG_JSON_STRING)
        return type_error(b, o, NULL, "an op has no \"name\" string");
    op->name = name->str;
    op->line = o->line;
    if (type && type->type != SG_JSON_STRING)
        return type_error(b, type, op->name, "\"type\" is not a string");
    op->type = type ? type->str : "";
    if (attrs && attrs->type != SG_JSON_ARRAY)
        return type_error(b, attrs, op->name, "\"attr\" is not an array");
    for (size_t i = 0; attrs && i < attrs->n_items; i++) {
        const struct sg_jval *a = attrs->items[i];
        const struct sg_jval *key = sg_jval_get(a, "key");
        if (!key || key->type != SG_JSON_STRING)
            return type_error(b, a, op->name, "an attr has no \"key\" string");
        sg_status st = SG_OK;
        if (strcmp(key->str, "_datadump_original_op_names") == 0) {
            st = attr_strings(b, a, op->name, key->str, &op->orig, &op->n_orig);
        } else if (strcmp(key->str, "pass_name") == 0) {
            st = attr_strings(b, a, op->name, key->str, &op->passes, &op->n_passes);
        } else if (strcmp(key->str, "pass_name_ub") == 0) {
            const char **s;
            size_t n;
            st = attr_strings(b, a, op->name, key->str, &s, &n);
            op->ub_pass = !st && n && s[0][0] ? s[0] : NULL;
        }
        if (st)
            return st;
    }
    const struct sg_jval *descs = sg_jval_get(o, "output_desc");
    return descs ? read_output_desc(b, descs, op) : SG_OK;
}

/* Build the map from a parsed document, which it takes over. */
static sg_status build_map(struct sg_jdoc *doc, const char *label, sg_fusion_map **out,
                           struct sg_diag *diag)
{
    struct build b = {.arena = doc->arena, .label = label, .diag = diag};
    sg_status st = SG_OK;
    sg_fusion_map *map = sg_calloc(1, sizeof *map);
    if (!map) {
        st = nomem(&b);
        goto out_free;
    }
    map->doc = doc;
    const struct sg_jval *root = doc->root;
    const struct sg_jval *graphs = sg_jval_get(root, "graph");
    if (!graphs || graphs->type != SG_JSON_ARRAY) {
        st = type_error(&b, root, NULL,
                        "not an `atc --mode=1` JSON: no \"graph\" array at the top level");
        goto out_free;
    }
    size_t total = 0;
    for (size_t g = 0; g < graphs->n_items; g++) {
        const struct sg_jval *ops = sg_jval_get(graphs->items[g], "op");
        if (graphs->items[g]->type != SG_JSON_OBJECT || (ops && ops->type != SG_JSON_ARRAY)) {
            st = type_error(&b, graphs->items[g], NULL,
                            "a graph is not an object with an \"op\" array");
            goto out_free;
        }
        total += ops ? ops->n_items : 0;
    }
    map->ops = sg_arena_calloc(doc->arena, total ? total : 1, sizeof *map->ops);
    map->path = sg_arena_strdup(doc->arena, label);
    if (!map->ops || !map->path) {
        st = nomem(&b);
        goto out_free;
    }
    for (size_t g = 0; g < graphs->n_items; g++) {
        const struct sg_jval *ops = sg_jval_get(graphs->items[g], "op");
        for (size_t i = 0; ops && i < ops->n_items; i++)
            if ((st = read_op(&b, ops->items[i], &map->ops[map->n_ops++])))
                goto out_free;
    }
    *out = map;
    return SG_OK;
out_free:
    sg_free(map);
    sg_jdoc_free(doc);
    return st;
}

sg_status sg_fusion_map_parse(const char *text, size_t len, const char *label, sg_fusion_map **out,
                              struct sg_diag *diag)
{
    struct sg_jdoc *doc;
    *out = NULL;
    if (!label)
        label = "<map>";
    sg_status st = sg_json_parse(text, len, label, NULL, &doc, diag);
    return st ? st : build_map(doc, label, out, diag);
}

sg_status sg_fusion_map_read(const char *path, sg_fusion_map **out, struct sg_diag *diag)
{
    struct sg_jdoc *doc;
    *out = NULL;
    sg_status st = sg_json_parse_file(path, NULL, &doc, diag);
    return st ? st : build_map(doc, path, out, diag);
}

void sg_fusion_map_free(sg_fusion_map *map)
{
    if (!map)
        return;
    sg_jdoc_free(map->doc);
    sg_free(map);
}
