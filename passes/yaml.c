/*
 * yaml.c - YAML pipeline files (the only code that touches libyaml).
 *
 *     verify: true              # optional: verify the model after each pass
 *     passes:
 *       - remove-identity       # a pass with its defaults
 *       - insert-clip:          # a pass with options
 *           ops: [Exp]
 *           position: before
 *
 * Every error names "file:line:column" of the offending node. libyaml's
 * 1-means-success returns are wrapped here once. Steps are appended only
 * when the whole file is valid.
 */
#include "pass_impl.h"
#include "sg_alloc.h"
#include "sg_file.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

/* Deeper nesting is refused before libyaml builds a document. */
#define SG_YAML_MAX_DEPTH 64

struct reader {
    struct sg_pipeline *p;
    yaml_document_t *doc;
    const char *label;
    const char *base_dir;
    struct sg_diag *diag;
};

static sg_status at(struct reader *R, const yaml_node_t *node, sg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static sg_status at(struct reader *R, const yaml_node_t *node, sg_status st, const char *fmt, ...)
{
    char msg[SG_DIAG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sg_diag_set(R->diag, st, "%s:%zu:%zu: %s", R->label,
                       node ? node->start_mark.line + 1 : 1, node ? node->start_mark.column + 1 : 1,
                       msg);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_null(const yaml_node_t *n)
{
    const char *s = scalar(n);
    return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
            !strcmp(s, "NULL"));
}

static yaml_node_t *node(struct reader *R, int id)
{
    return yaml_document_get_node(R->doc, id);
}

/* SHAPES given as a mapping: {x: [4, 77, 40], mask: "4,-1"} -> "x:4,77,40;mask:4,-1". */
static sg_status shapes_text(struct reader *R, yaml_node_t *map, char **out)
{
    size_t cap = 256, len = 0;
    char *buf = sg_malloc(cap);
    if (!buf)
        return sg_diag_set(R->diag, SG_ENOMEM, "out of memory");
    buf[0] = '\0';
    sg_status st = SG_OK;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top && !st; pr++) {
        yaml_node_t *k = node(R, pr->key), *v = node(R, pr->value);
        const char *name = scalar(k);
        if (!name || !*name) {
            st = at(R, k, SG_EPARSE, "expected an input name");
            break;
        }
        char part[1024];
        size_t pl = (size_t)snprintf(part, sizeof part, "%s%s:", len ? ";" : "", name);
        if (v->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 it < v->data.sequence.items.top; it++) {
                const char *d = scalar(node(R, *it));
                if (!d) {
                    st = at(R, node(R, *it), SG_EPARSE, "expected a dimension");
                    break;
                }
                pl += (size_t)snprintf(part + pl, pl < sizeof part ? sizeof part - pl : 0, "%s%s",
                                       it == v->data.sequence.items.start ? "" : ",", d);
            }
        } else if (scalar(v)) {
            pl += (size_t)snprintf(part + pl, pl < sizeof part ? sizeof part - pl : 0, "%s",
                                   scalar(v));
        } else {
            st = at(R, v, SG_EPARSE, "expected the dims of '%s' as a list", name);
        }
        if (st)
            break;
        if (pl >= sizeof part) {
            st = at(R, v, SG_ETOOBIG, "shape of '%s' is too long", name);
            break;
        }
        if (len + pl + 1 > cap) {
            while (len + pl + 1 > cap)
                cap *= 2;
            char *g = sg_realloc(buf, cap);
            if (!g) {
                st = sg_diag_set(R->diag, SG_ENOMEM, "out of memory");
                break;
            }
            buf = g;
        }
        memcpy(buf + len, part, pl + 1);
        len += pl;
    }
    if (st) {
        sg_free(buf);
        return st;
    }
    *out = buf;
    return SG_OK;
}

static sg_status read_option(struct reader *R, const struct sg_pass *pass,
                             struct sg_opt_value *vals, yaml_node_t *k, yaml_node_t *v)
{
    const char *key = scalar(k);
    if (!key)
        return at(R, k, SG_EPARSE, "%s: expected an option name", pass->name);
    int idx = sg__opt_index(pass, key, strlen(key));
    if (idx < 0)
        return at(R, k, SG_EINVAL, "pass '%s' has no option '%s'", pass->name, key);
    const struct sg_opt_spec *spec = &pass->options[idx];
    if (vals[idx].given)
        return at(R, k, SG_EINVAL, "%s: option '%s' is given twice", pass->name, key);
    struct sg_diag d = {0};
    sg_status st;
    if (v->type == YAML_SCALAR_NODE) {
        if (is_null(v) && spec->type != SG_OPT_STRINGS && spec->type != SG_OPT_INTS)
            return at(R, v, SG_EPARSE, "%s: option '%s' needs a value", pass->name, key);
        st = sg__opt_parse(spec, is_null(v) ? "" : scalar(v), R->p->arena, R->base_dir, &vals[idx],
                           &d);
    } else if (v->type == YAML_SEQUENCE_NODE) {
        size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
        const char **items = sg_arena_calloc(R->p->arena, n ? n : 1, sizeof *items);
        if (!items)
            return sg_diag_set(R->diag, SG_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *it = node(R, v->data.sequence.items.start[i]);
            if (!(items[i] = scalar(it)))
                return at(R, it, SG_EPARSE, "%s: option '%s' expects plain list items", pass->name,
                          key);
        }
        memset(&vals[idx], 0, sizeof vals[idx]);
        st = sg__opt_parse_items(spec, items, n, R->p->arena, &vals[idx], &d);
    } else if (spec->type == SG_OPT_SHAPES) {
        char *text = NULL;
        if ((st = shapes_text(R, v, &text)))
            return st;
        st = sg__opt_parse(spec, text, R->p->arena, R->base_dir, &vals[idx], &d);
        sg_free(text);
    } else {
        return at(R, v, SG_EPARSE, "%s: option '%s' (%s) cannot be a mapping", pass->name, key,
                  sg_opt_type_name(spec->type));
    }
    if (st)
        return at(R, v, st, "%s: option '%s' (%s) %s", pass->name, key,
                  sg_opt_type_name(spec->type), d.msg);
    vals[idx].given = true;
    return SG_OK;
}

static sg_status read_step(struct reader *R, yaml_node_t *item)
{
    yaml_node_t *name_node = item, *opts = NULL;
    if (item->type == YAML_MAPPING_NODE) {
        yaml_node_pair_t *pr = item->data.mapping.pairs.start;
        if (item->data.mapping.pairs.top - pr != 1)
            return at(R, item, SG_EPARSE,
                      "a pass is written NAME or NAME: {options}, one per list item");
        name_node = node(R, pr->key);
        opts = node(R, pr->value);
    }
    const char *name = scalar(name_node);
    if (!name || !*name)
        return at(R, name_node, SG_EPARSE, "expected a pass name");
    const struct sg_pass *pass;
    struct sg_diag d = {0};
    sg_status st = sg__pass_lookup(name, strlen(name), &pass, &d);
    if (st)
        return at(R, name_node, st, "%s", d.msg);
    struct sg_opt_value *vals =
        sg_arena_calloc(R->p->arena, pass->n_options ? pass->n_options : 1, sizeof *vals);
    char origin[512];
    snprintf(origin, sizeof origin, "%s:%zu:%zu", R->label, name_node->start_mark.line + 1,
             name_node->start_mark.column + 1);
    const char *org = sg_arena_strdup(R->p->arena, origin);
    if (!vals || !org)
        return sg_diag_set(R->diag, SG_ENOMEM, "out of memory");
    if (opts && !is_null(opts)) {
        if (opts->type != YAML_MAPPING_NODE)
            return at(R, opts, SG_EPARSE, "options of '%s' must be a mapping of key: value", name);
        for (yaml_node_pair_t *pr = opts->data.mapping.pairs.start;
             pr < opts->data.mapping.pairs.top; pr++)
            if ((st = read_option(R, pass, vals, node(R, pr->key), node(R, pr->value))))
                return st;
    }
    if ((st = sg__opt_defaults(pass, vals, R->p->arena, R->diag)))
        return st;
    if (sg__pipeline_push(R->p, pass, vals, org))
        return sg_diag_set(R->diag, SG_ENOMEM, "out of memory");
    return SG_OK;
}

static sg_status read_root(struct reader *R, yaml_node_t *root, bool *verify)
{
    if (!root)
        return at(R, NULL, SG_EPARSE, "empty pipeline: expected a mapping with 'passes:'");
    if (root->type != YAML_MAPPING_NODE)
        return at(R, root, SG_EPARSE, "expected a mapping with 'passes:' at the top");
    yaml_node_t *passes = NULL;
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = node(R, pr->key), *v = node(R, pr->value);
        const char *key = scalar(k);
        if (key && strcmp(key, "passes") == 0) {
            if (passes)
                return at(R, k, SG_EPARSE, "'passes' is given twice");
            passes = v;
        } else if (key && strcmp(key, "verify") == 0) {
            const char *s = scalar(v);
            if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")))
                *verify = true;
            else if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")))
                *verify = false;
            else
                return at(R, v, SG_EPARSE, "'verify' expects true or false");
        } else if (key && strcmp(key, "description") == 0) {
            if (!scalar(v))
                return at(R, v, SG_EPARSE, "'description' expects text");
        } else {
            return at(R, k, SG_EPARSE, "unknown key '%s' (expected passes, verify or description)",
                      key ? key : "?");
        }
    }
    if (!passes)
        return at(R, root, SG_EPARSE, "missing 'passes:'");
    if (passes->type != YAML_SEQUENCE_NODE)
        return at(R, passes, SG_EPARSE, "'passes' must be a list");
    for (yaml_node_item_t *it = passes->data.sequence.items.start;
         it < passes->data.sequence.items.top; it++) {
        sg_status st = read_step(R, node(R, *it));
        if (st)
            return st;
    }
    return SG_OK;
}

static sg_status yaml_error(const yaml_parser_t *parser, const char *label, struct sg_diag *diag)
{
    if (parser->error == YAML_MEMORY_ERROR)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    return sg_diag_set(diag, SG_EPARSE, "%s:%zu:%zu: %s%s%s", label, parser->problem_mark.line + 1,
                       parser->problem_mark.column + 1,
                       parser->problem ? parser->problem : "malformed YAML",
                       parser->context ? " " : "", parser->context ? parser->context : "");
}

/*
 * Refuse nesting deeper than SG_YAML_MAX_DEPTH from libyaml's event stream,
 * before a document is built: libyaml spends time quadratic in the depth
 * on deep flow collections ([[[[...: 100,000 levels took 28 s) before it
 * fails, and a pipeline is a few levels deep (passes, a step, its options,
 * a list). The scan stops at the first level too many. Also refuses more
 * than one document (the loader would silently take the first).
 */
static sg_status check_nesting(const char *text, size_t len, const char *label,
                               struct sg_diag *diag)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    sg_status st = SG_OK;
    unsigned depth = 0, documents = 0;
    for (bool done = false; !done && !st;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            st = yaml_error(&parser, label, diag);
            break;
        }
        switch (ev.type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > SG_YAML_MAX_DEPTH)
                st = sg_diag_set(diag, SG_ETOOBIG,
                                 "%s:%zu:%zu: nested deeper than %d levels (a pipeline needs a "
                                 "few)",
                                 label, ev.start_mark.line + 1, ev.start_mark.column + 1,
                                 SG_YAML_MAX_DEPTH);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1)
                st = sg_diag_set(diag, SG_EPARSE,
                                 "%s:%zu:%zu: a second YAML document: a pipeline file holds one",
                                 label, ev.start_mark.line + 1, ev.start_mark.column + 1);
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return st;
}

sg_status sg_pipeline_parse_yaml(struct sg_pipeline *p, const char *text, size_t len,
                                 const char *label, const char *base_dir, struct sg_diag *diag)
{
    if (len > SG_SIDE_FILE_MAX)
        return sg_diag_set(diag, SG_ETOOBIG, "%s: %zu bytes, more than the %zu allowed", label, len,
                           SG_SIDE_FILE_MAX);
    sg_status st = check_nesting(text, len, label, diag);
    if (st)
        return st;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        st = yaml_error(&parser, label, diag);
        yaml_parser_delete(&parser);
        return st;
    }
    struct reader R = {p, &doc, label, base_dir, diag};
    size_t before = p->n_steps;
    bool verify = p->verify;
    st = read_root(&R, yaml_document_get_root_node(&doc), &verify);
    if (st)
        p->n_steps = before; /* all or nothing */
    else
        p->verify = verify;
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return st;
}

sg_status sg_pipeline_load_yaml(struct sg_pipeline *p, const char *path, struct sg_diag *diag)
{
    uint8_t *buf;
    size_t len;
    sg_status st = sg_file_read_all(path, SG_SIDE_FILE_MAX, &buf, &len, diag);
    if (st)
        return st;
    char *dir = sg_strdup(path);
    if (!dir) {
        sg_free(buf);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    st = sg_pipeline_parse_yaml(p, (const char *)buf, len, path, slash ? dir : NULL, diag);
    sg_free(dir);
    sg_free(buf);
    return st;
}
