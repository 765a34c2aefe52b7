/*
 * rename.c - `rename`: rename nodes and/or values by prefix, suffix and a
 * map file ("OLD NEW" per line, '#' starts a comment). A map entry wins over
 * prefix/suffix for its name; names in the map that the model does not have
 * are reported, not an error.
 *
 * Keeps intact: main graph input and output names unless `io: true` (they
 * are the model's interface); every edge, including subgraph reads of
 * renamed outer values (captures are renamed with them). A new name that is
 * already used in the model is an error naming both.
 */
#include "pass_impl.h"
#include "sg_alloc.h"
#include "sg_file.h"

#include <stdio.h>
#include <string.h>

enum { OPT_PREFIX, OPT_SUFFIX, OPT_MAP, OPT_TARGET, OPT_IO, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_PREFIX] = {"prefix", SG_OPT_STRING, "", "text put before every name"},
    [OPT_SUFFIX] = {"suffix", SG_OPT_STRING, "", "text put after every name"},
    [OPT_MAP] = {"map", SG_OPT_PATH, NULL, "file of 'OLD NEW' lines; wins over prefix/suffix"},
    [OPT_TARGET] = {"target", SG_OPT_ENUM, "nodes", "what to rename", 0, 0, "nodes|values|all"},
    [OPT_IO] = {"io", SG_OPT_BOOL, "false", "also rename main graph inputs and outputs"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    struct sg__strmap map;  /* old -> new, strings in `text` */
    struct sg__strmap used; /* map entries that matched */
    char *text;
    bool nodes, values;
    char *buf;
    size_t cap;
};

static sg_status read_map(struct ctx *c, const char *path)
{
    uint8_t *bytes;
    size_t len;
    sg_status st = sg_file_read_all(path, SG_SIDE_FILE_MAX, &bytes, &len, c->diag);
    if (st) {
        sg_diag_prefix(c->diag, "map file");
        return st;
    }
    char *text = (char *)bytes;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        unsigned line = 1;
        for (const char *p = text; p < nul; p++)
            line += *p == '\n';
        sg_free(text);
        return sg_diag_set(c->diag, SG_EPARSE, "%s:%u: NUL byte: this is not a text file", path,
                           line);
    }
    text[len] = '\0';
    c->text = text;
    unsigned line = 0;
    for (char *p = text; p && *p;) {
        line++;
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = '\0';
        char *hash = strchr(p, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL; /* strtok_r: workers may read map files in parallel */
        char *old = strtok_r(p, " \t\r", &save);
        char *neu = old ? strtok_r(NULL, " \t\r", &save) : NULL;
        char *extra = neu ? strtok_r(NULL, " \t\r", &save) : NULL;
        if (old && (!neu || extra))
            return sg_diag_set(c->diag, SG_EPARSE, "%s:%u: expected 'OLD NEW'", path, line);
        if (old) {
            if (sg__strmap_get(&c->map, old))
                return sg_diag_set(c->diag, SG_EPARSE, "%s:%u: '%s' is mapped twice", path, line,
                                   old);
            if (sg__strmap_put(&c->map, old, neu))
                return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        }
        p = eol ? eol + 1 : NULL;
    }
    return SG_OK;
}

/* Sets *out to the new name for `name`, or NULL to leave it. Fails only
 * when out of memory, which must stop the pass rather than skip the name. */
static sg_status new_name(struct ctx *c, const char *name, const char **out)
{
    *out = NULL;
    const char *mapped = sg__strmap_get(&c->map, name);
    if (mapped) {
        if (sg__strmap_put(&c->used, name, (void *)name))
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        *out = mapped;
        return SG_OK;
    }
    const char *pre = c->opts[OPT_PREFIX].s, *suf = c->opts[OPT_SUFFIX].s;
    if (!*pre && !*suf)
        return SG_OK;
    size_t need = strlen(pre) + strlen(name) + strlen(suf) + 1;
    if (need > c->cap) {
        char *g = sg_realloc(c->buf, need);
        if (!g)
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        c->buf = g;
        c->cap = need;
    }
    snprintf(c->buf, c->cap, "%s%s%s", pre, name, suf);
    *out = c->buf;
    return SG_OK;
}

static sg_status rename_value(struct ctx *c, sg_value *v, bool main_graph)
{
    if (!v || v->outer)
        return SG_OK;
    if (main_graph && (v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT)) && !c->opts[OPT_IO].b)
        return SG_OK;
    const char *old = v->name;
    const char *name;
    sg_status st = new_name(c, old, &name);
    if (st || !name || strcmp(name, old) == 0)
        return st;
    struct sg_diag d = {0};
    st = sg_value_rename(v, name, &d);
    if (st)
        return sg_diag_set(c->diag, st, "cannot rename value '%s' to '%s': %s", old, name, d.msg);
    sg_report_change(c->rep, "value renamed", "%s -> %s", old, v->name);
    return SG_OK;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    bool main_graph = g->kind == SG_GRAPH_MAIN;
    sg_status st;
    if (c->values) {
        for (uint32_t i = 0; i < g->n_inputs; i++)
            if ((st = rename_value(c, g->inputs[i], main_graph)))
                return st;
        for (uint32_t i = 0; i < g->n_inits; i++)
            if ((st = rename_value(c, g->inits[i], main_graph)))
                return st;
        for (sg_node *n = g->first; n; n = n->next)
            for (uint32_t i = 0; i < n->n_outputs; i++)
                if ((st = rename_value(c, n->outputs[i], main_graph)))
                    return st;
    }
    if (c->nodes) {
        for (sg_node *n = g->first; n; n = n->next) {
            if (!n->name || !*n->name)
                continue;
            const char *old = n->name;
            const char *name;
            if ((st = new_name(c, old, &name)))
                return st;
            if (!name || strcmp(name, old) == 0)
                continue;
            struct sg_diag d = {0};
            if ((st = sg_node_rename(n, name, &d)))
                return sg_diag_set(c->diag, st, "cannot rename node '%s' to '%s': %s", old, name,
                                   d.msg);
            sg_report_change(c->rep, "node renamed", "%s -> %s", old, n->name);
        }
    }
    return SG_OK;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    struct ctx c = {.opts = opts, .rep = rep, .diag = diag};
    const char *target = opts[OPT_TARGET].s;
    c.nodes = strcmp(target, "values") != 0;
    c.values = strcmp(target, "nodes") != 0;
    if (!opts[OPT_MAP].present && !*opts[OPT_PREFIX].s && !*opts[OPT_SUFFIX].s)
        return sg_diag_set(diag, SG_EINVAL, "rename needs a prefix, a suffix or a map file");
    sg_status st = opts[OPT_MAP].present ? read_map(&c, opts[OPT_MAP].s) : SG_OK;
    if (!st && m->graph)
        st = sg__walk_graphs(m->graph, run_graph, &c);
    if (!st && c.map.count != c.used.count) {
        for (size_t i = 0; i < c.map.cap; i++)
            if (c.map.slots[i].key && !sg__strmap_get(&c.used, c.map.slots[i].key))
                sg_report_info(rep, "map entry not found", "%s", c.map.slots[i].key);
    }
    sg__strmap_free(&c.map);
    sg__strmap_free(&c.used);
    sg_free(c.text);
    sg_free(c.buf);
    return st;
}

const struct sg_pass sg_pass_rename = {
    .name = "rename",
    .summary = "rename nodes and/or values by prefix, suffix or a map file",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
