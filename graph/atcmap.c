/*
 * atcmap.c - the compiled-op map of an `atc --mode=1` JSON: which ONNX nodes
 * each compiled op covers, which outputs stand for which original outputs,
 * and which fusion passes made it (see sg_atcmap.h).
 */
#include "sg_atcmap.h"

#include "sg_alloc.h"
#include "sg_dtype.h"
#include "sg_file.h"
#include "sg_json_read.h"

#include <stdint.h>
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

/* GE's dtype names (DT_*). */
static const struct {
    int32_t dtype;
    const char *name;
} dt_names[] = {
    {SG_DTYPE_FLOAT, "DT_FLOAT"},   {SG_DTYPE_FLOAT16, "DT_FLOAT16"},
    {SG_DTYPE_BFLOAT16, "DT_BF16"}, {SG_DTYPE_DOUBLE, "DT_DOUBLE"},
    {SG_DTYPE_INT8, "DT_INT8"},     {SG_DTYPE_UINT8, "DT_UINT8"},
    {SG_DTYPE_INT16, "DT_INT16"},   {SG_DTYPE_UINT16, "DT_UINT16"},
    {SG_DTYPE_INT32, "DT_INT32"},   {SG_DTYPE_UINT32, "DT_UINT32"},
    {SG_DTYPE_INT64, "DT_INT64"},   {SG_DTYPE_UINT64, "DT_UINT64"},
    {SG_DTYPE_BOOL, "DT_BOOL"},     {SG_DTYPE_STRING, "DT_STRING"},
};

const char *sg_atc_dtype_name(int32_t dtype)
{
    for (size_t i = 0; i < sizeof dt_names / sizeof dt_names[0]; i++)
        if (dt_names[i].dtype == dtype)
            return dt_names[i].name;
    return "DT_UNDEFINED";
}

int32_t sg_atc_dtype_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof dt_names / sizeof dt_names[0]; i++)
        if (strcmp(dt_names[i].name, name) == 0)
            return dt_names[i].dtype;
    return SG_DTYPE_UNDEFINED;
}

/* output_desc[i].attr: _datadump_origin_name {"s"} and
 * _datadump_origin_output_index {"i"}: which original output a compiled
 * output stands for. */
static sg_status read_output_desc(struct sg_jdoc *doc, const struct sg_jval *descs,
                                  struct sg_atc_op *op, struct sg_diag *diag)
{
    const char *label = doc->label;
    if (descs->type != SG_JSON_ARRAY)
        return sg_diag_set(diag, SG_EPARSE,
                           "%s:%u:%u: \"output_desc\" of op \"%s\" must be an array", label,
                           descs->line, descs->col, op->name);
    size_t n = descs->n_items;
    op->n_outputs = n;
    op->out_orig = sg_arena_calloc(doc->arena, n ? n : 1, sizeof *op->out_orig);
    op->out_index = sg_arena_calloc(doc->arena, n ? n : 1, sizeof *op->out_index);
    op->out_dtype = sg_arena_calloc(doc->arena, n ? n : 1, sizeof *op->out_dtype);
    if (!op->out_orig || !op->out_index || !op->out_dtype)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    for (size_t i = 0; i < n; i++) {
        op->out_index[i] = -1;
        const struct sg_jval *dt = sg_jval_get(descs->items[i], "dtype");
        if (dt && dt->type == SG_JSON_STRING)
            op->out_dtype[i] = sg_atc_dtype_parse(dt->str);
        const struct sg_jval *attrs = sg_jval_get(descs->items[i], "attr");
        if (!attrs)
            continue;
        if (attrs->type != SG_JSON_ARRAY)
            return sg_diag_set(diag, SG_EPARSE,
                               "%s:%u:%u: output_desc \"attr\" of op \"%s\" must be an array",
                               label, attrs->line, attrs->col, op->name);
        for (size_t k = 0; k < attrs->n_items; k++) {
            const struct sg_jval *a = attrs->items[k];
            const struct sg_jval *key = sg_jval_get(a, "key");
            const struct sg_jval *value = sg_jval_get(a, "value");
            if (!key || key->type != SG_JSON_STRING)
                continue;
            if (strcmp(key->str, "_datadump_origin_name") == 0) {
                const struct sg_jval *s = sg_jval_get(value, "s");
                if (!s || s->type != SG_JSON_STRING)
                    return sg_diag_set(diag, SG_EPARSE,
                                       "%s:%u:%u: _datadump_origin_name of op \"%s\" must be "
                                       "{\"s\": \"...\"}",
                                       label, a->line, a->col, op->name);
                op->out_orig[i] = s->str[0] ? s->str : NULL;
            } else if (strcmp(key->str, "_datadump_origin_output_index") == 0) {
                const struct sg_jval *v = sg_jval_get(value, "i");
                if (!v || v->type != SG_JSON_NUMBER || !v->is_int || v->i < 0 || v->i > UINT32_MAX)
                    return sg_diag_set(diag, SG_EPARSE,
                                       "%s:%u:%u: _datadump_origin_output_index of op \"%s\" must "
                                       "be {\"i\": index}",
                                       label, a->line, a->col, op->name);
                op->out_index[i] = v->i;
            }
        }
    }
    return SG_OK;
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
    if (attrs && attrs->type != SG_JSON_ARRAY)
        return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: \"attr\" of op \"%s\" must be an array",
                           label, attrs->line, attrs->col, op->name);
    for (size_t i = 0; attrs && i < attrs->n_items; i++) {
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
    const struct sg_jval *descs = sg_jval_get(o, "output_desc");
    return descs ? read_output_desc(doc, descs, op, diag) : SG_OK;
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
    struct sg_json_limits lim = {.max_bytes = SG_MAP_FILE_MAX};
    sg_status st = sg_json_parse_file(path, &lim, &map->doc, diag);
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
