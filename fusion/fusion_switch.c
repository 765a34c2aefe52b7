/*
 * fusion_switch.c - ATC fusion switch files: build, query, read (JSON and the
 * one-pass-per-line format) and write (JSON). See sg_fusion.h.
 */
#include "sg_fusion.h"

#include "fusion_impl.h"
#include "sg_alloc.h"
#include "sg_json.h"
#include "sg_json_read.h"
#include "strmap.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

sg_fusion_switch *sg_fusion_switch_create(void)
{
    return sg_calloc(1, sizeof(sg_fusion_switch));
}

void sg_fusion_switch_free(sg_fusion_switch *sw)
{
    if (!sw)
        return;
    for (size_t i = 0; i < sw->n_entries; i++)
        sg_free(sw->entries[i].name);
    sg_free(sw->entries);
    sg_free(sw);
}

/* ATC pass names are identifiers; anything that could break either file
 * format (or is plainly not a name) is refused. Returns the offending
 * character or NULL. */
static const char *bad_name_char(const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return name + i;
    }
    return NULL;
}

static sg_status check_name(const char *name, size_t len, const char *where, struct sg_diag *diag)
{
    if (len == 0)
        return sg_diag_set(diag, SG_EINVAL, "%sempty fusion pass name", where);
    const char *bad = bad_name_char(name, len);
    if (bad) {
        unsigned char c = (unsigned char)*bad;
        if (c >= 0x20 && c < 0x7f)
            return sg_diag_set(diag, SG_EINVAL,
                               "%s'%.*s' is not a fusion pass name (character '%c'; names are "
                               "letters, digits, '_', '-', '.')",
                               where, (int)len, name, c);
        return sg_diag_set(diag, SG_EINVAL,
                           "%s'%.*s' is not a fusion pass name (byte 0x%02x; names are letters, "
                           "digits, '_', '-', '.')",
                           where, (int)len, name, c);
    }
    return SG_OK;
}

static struct sg_fusion_switch_entry *add_entry(sg_fusion_switch *sw, const char *name, size_t len)
{
    if (sw->n_entries == sw->cap_entries) {
        size_t cap = sw->cap_entries ? sw->cap_entries * 2 : 8;
        struct sg_fusion_switch_entry *g = sg_realloc(sw->entries, cap * sizeof *g);
        if (!g)
            return NULL;
        sw->entries = g;
        sw->cap_entries = cap;
    }
    char *copy = sg_malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, name, len);
    copy[len] = '\0';
    struct sg_fusion_switch_entry *e = &sw->entries[sw->n_entries++];
    memset(e, 0, sizeof *e);
    e->name = copy;
    return e;
}

sg_status sg_fusion_switch_set(sg_fusion_switch *sw, enum sg_fusion_kind kind, const char *name,
                               bool on, struct sg_diag *diag)
{
    if ((unsigned)kind >= SG_FUSION_KIND_COUNT)
        return sg_diag_set(diag, SG_EINVAL, "invalid fusion section %d", (int)kind);
    sg_status st = check_name(name, strlen(name), "", diag);
    if (st)
        return st;
    for (size_t i = 0; i < sw->n_entries; i++) {
        struct sg_fusion_switch_entry *e = &sw->entries[i];
        if (strcmp(e->name, name) != 0)
            continue;
        if (e->any_kind) {
            /* It stays in force for the other section only. */
            e->any_kind = false;
            e->kind = kind == SG_FUSION_GRAPH ? SG_FUSION_UB : SG_FUSION_GRAPH;
            break;
        }
        if (e->kind == kind) {
            e->on = on;
            e->line = e->col = 0;
            return SG_OK;
        }
    }
    struct sg_fusion_switch_entry *e = add_entry(sw, name, strlen(name));
    if (!e)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    e->kind = kind;
    e->on = on;
    return SG_OK;
}

bool sg_fusion_switch_enabled(const sg_fusion_switch *sw, enum sg_fusion_kind kind,
                              const char *name)
{
    if (!sw)
        return true;
    const struct sg_fusion_switch_entry *all = NULL;
    for (size_t i = 0; i < sw->n_entries; i++) {
        const struct sg_fusion_switch_entry *e = &sw->entries[i];
        if (!e->any_kind && e->kind != kind)
            continue;
        if (strcmp(e->name, name) == 0)
            return e->on;
        if (strcmp(e->name, SG_FUSION_ALL) == 0)
            all = e;
    }
    return all ? all->on : true;
}

bool sg_fusion_switch_pass_enabled(const sg_fusion_switch *sw, enum sg_fusion_pass_id id)
{
    const struct sg_fusion_pass *p = sg_fusion_pass_get(id);
    return p ? sg_fusion_switch_enabled(sw, p->kind, p->name) : true;
}

enum sg_fusion_entry_check sg_fusion_switch_check_entry(const struct sg_fusion_switch_entry *e)
{
    if (strcmp(e->name, SG_FUSION_ALL) == 0)
        return SG_FUSION_ENTRY_OK;
    const struct sg_fusion_pass *p = sg_fusion_pass_find(e->name);
    if (!p)
        return SG_FUSION_ENTRY_UNKNOWN;
    if (!e->any_kind && p->kind != e->kind)
        return SG_FUSION_ENTRY_WRONG_SECTION;
    return SG_FUSION_ENTRY_OK;
}

/* ------------------------------------------------------------- JSON form */

static sg_status parse_json(sg_fusion_switch *sw, const char *text, size_t len, const char *label,
                            struct sg_diag *diag)
{
    struct sg_jdoc *doc = NULL;
    struct sg_json_limits lim = {.max_bytes = SG__TEXT_MAX_BYTES, .max_depth = 16};
    sg_status st = sg_json_parse(text, len, label, &lim, &doc, diag);
    if (st)
        return st;
    const struct sg_jval *root = doc->root;
    if (root->type != SG_JSON_OBJECT) {
        st = sg_diag_set(diag, SG_EPARSE,
                         "%s:%u:%u: expected an object {\"Switch\": {...}}, found a %s", label,
                         root->line, root->col, sg_jtype_name(root->type));
        goto out;
    }
    for (size_t i = 0; i < root->n_members; i++) {
        const struct sg_jmember *m = &root->members[i];
        if (strcmp(m->key, "Switch") != 0) {
            st = sg_diag_set(diag, SG_EPARSE,
                             "%s:%u:%u: unknown top-level key \"%s\" (a fusion switch file holds "
                             "only \"Switch\")",
                             label, m->line, m->col, m->key);
            goto out;
        }
    }
    const struct sg_jval *swv = sg_jval_get(root, "Switch");
    if (!swv) {
        st = sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: no \"Switch\" object", label, root->line,
                         root->col);
        goto out;
    }
    if (swv->type != SG_JSON_OBJECT) {
        st = sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: \"Switch\" must be an object, found a %s",
                         label, swv->line, swv->col, sg_jtype_name(swv->type));
        goto out;
    }
    for (size_t i = 0; i < swv->n_members; i++) {
        const struct sg_jmember *sec = &swv->members[i];
        enum sg_fusion_kind kind;
        if (strcmp(sec->key, "GraphFusion") == 0) {
            kind = SG_FUSION_GRAPH;
        } else if (strcmp(sec->key, "UBFusion") == 0) {
            kind = SG_FUSION_UB;
        } else {
            const char *hint = strcasecmp(sec->key, "GraphFusion") == 0 ? "; write GraphFusion"
                               : strcasecmp(sec->key, "UBFusion") == 0  ? "; write UBFusion"
                                                                        : "";
            st = sg_diag_set(diag, SG_EPARSE,
                             "%s:%u:%u: unknown section \"%s\" (expected GraphFusion or "
                             "UBFusion%s)",
                             label, sec->line, sec->col, sec->key, hint);
            goto out;
        }
        const struct sg_jval *obj = sec->value;
        if (obj->type != SG_JSON_OBJECT) {
            st = sg_diag_set(diag, SG_EPARSE,
                             "%s:%u:%u: section \"%s\" must be an object of \"PassName\": "
                             "\"on\"|\"off\", found a %s",
                             label, obj->line, obj->col, sec->key, sg_jtype_name(obj->type));
            goto out;
        }
        for (size_t j = 0; j < obj->n_members; j++) {
            const struct sg_jmember *m = &obj->members[j];
            const struct sg_jval *v = m->value;
            if (check_name(m->key, m->key_len, "", NULL)) {
                st = sg_diag_set(diag, SG_EPARSE,
                                 "%s:%u:%u: \"%s\" is not a fusion pass name (names are letters, "
                                 "digits, '_', '-', '.')",
                                 label, m->line, m->col, m->key);
                goto out;
            }
            bool on;
            if (v->type == SG_JSON_STRING && strcmp(v->str, "on") == 0) {
                on = true;
            } else if (v->type == SG_JSON_STRING && strcmp(v->str, "off") == 0) {
                on = false;
            } else {
                const char *hint = v->type == SG_JSON_STRING && (strcasecmp(v->str, "on") == 0 ||
                                                                 strcasecmp(v->str, "off") == 0)
                                       ? " (lower case)"
                                       : "";
                st = sg_diag_set(diag, SG_EPARSE,
                                 "%s:%u:%u: the value of \"%s\" must be \"on\" or \"off\"%s", label,
                                 v->line, v->col, m->key, hint);
                goto out;
            }
            struct sg_fusion_switch_entry *e = add_entry(sw, m->key, m->key_len);
            if (!e) {
                st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
                goto out;
            }
            e->kind = kind;
            e->on = on;
            e->line = m->line;
            e->col = m->col;
        }
    }
    sw->format = SG_FUSION_FORMAT_JSON;
out:
    sg_jdoc_free(doc);
    return st;
}

/* ------------------------------------------------------------- line form */

static sg_status parse_lines_into(sg_fusion_switch *sw, const char *text, size_t len,
                                  const char *label, struct sg__strmap *seen, struct sg_diag *diag)
{
    size_t pos = 0;
    unsigned line = 0;
    const char *ls, *le;
    while (sg__next_line(text, len, &pos, &ls, &le)) {
        line++;
        const char *s = ls, *e = le;
        sg__trim(&s, &e);
        if (s == e)
            continue;
        const char *colon = memchr(s, ':', (size_t)(e - s));
        if (!colon)
            return sg_diag_set(diag, SG_EPARSE,
                               "%s:%u:%u: expected PassName:on or PassName:off (or a JSON "
                               "object)",
                               label, line, sg__column(ls, s));
        const char *ns = s, *ne = colon, *vs = colon + 1, *ve = e;
        sg__trim(&ns, &ne);
        sg__trim(&vs, &ve);
        if (ns == ne)
            return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: no pass name before ':'", label, line,
                               sg__column(ls, s));
        const char *bad = bad_name_char(ns, (size_t)(ne - ns));
        if (bad)
            return sg_diag_set(diag, SG_EPARSE,
                               "%s:%u:%u: '%.*s' is not a fusion pass name (names are letters, "
                               "digits, '_', '-', '.')",
                               label, line, sg__column(ls, bad), (int)(ne - ns), ns);
        bool on;
        size_t vl = (size_t)(ve - vs);
        if (vl == 2 && memcmp(vs, "on", 2) == 0)
            on = true;
        else if (vl == 3 && memcmp(vs, "off", 3) == 0)
            on = false;
        else
            return sg_diag_set(diag, SG_EPARSE,
                               "%s:%u:%u: expected on or off after '%.*s:', found '%.*s'", label,
                               line, sg__column(ls, vs), (int)(ne - ns), ns, (int)vl, vs);
        size_t nl = (size_t)(ne - ns);
        void *dup = sg__strmap_get_n(seen, ns, nl, sg__strhash_n(ns, nl));
        if (dup)
            return sg_diag_set(diag, SG_EPARSE, "%s:%u:%u: '%.*s' given twice (first on line %u)",
                               label, line, sg__column(ls, ns), (int)nl, ns,
                               sw->entries[(uintptr_t)dup - 1].line);
        struct sg_fusion_switch_entry *ent = add_entry(sw, ns, nl);
        if (!ent || sg__strmap_put(seen, ent->name, (void *)(uintptr_t)sw->n_entries))
            return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
        const struct sg_fusion_pass *p = sg_fusion_pass_find(ent->name);
        ent->kind = p ? p->kind : SG_FUSION_GRAPH;
        ent->any_kind = !p;
        ent->on = on;
        ent->line = line;
        ent->col = sg__column(ls, ns);
    }
    sw->format = SG_FUSION_FORMAT_LINES;
    return SG_OK;
}

static sg_status parse_lines(sg_fusion_switch *sw, const char *text, size_t len, const char *label,
                             struct sg_diag *diag)
{
    /* Names seen so far (keys: the entries' names; values: index + 1), so
     * that 100,000 lines are read in linear time. */
    struct sg__strmap seen = {0};
    sg_status st = parse_lines_into(sw, text, len, label, &seen, diag);
    sg__strmap_free(&seen);
    return st;
}

sg_status sg_fusion_switch_parse(const char *text, size_t len, const char *label,
                                 sg_fusion_switch **out, struct sg_diag *diag)
{
    *out = NULL;
    if (!label)
        label = "<fusion switch>";
    if (len > SG__TEXT_MAX_BYTES)
        return sg_diag_set(diag, SG_ETOOBIG, "%s: %zu bytes, too large for a fusion switch file",
                           label, len);
    sg_status st = sg__check_no_nul(text, len, label, diag);
    if (st)
        return st;
    sg_fusion_switch *sw = sg_fusion_switch_create();
    if (!sw)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i < len && text[i] == '{')
        st = parse_json(sw, text, len, label, diag);
    else
        st = parse_lines(sw, text, len, label, diag);
    if (st) {
        sg_fusion_switch_free(sw);
        return st;
    }
    *out = sw;
    return SG_OK;
}

sg_status sg_fusion_switch_read(const char *path, sg_fusion_switch **out, struct sg_diag *diag)
{
    *out = NULL;
    char *buf;
    size_t len;
    sg_status st = sg__read_text(path, SG__TEXT_MAX_BYTES, &buf, &len, diag);
    if (st)
        return st;
    st = sg_fusion_switch_parse(buf, len, path, out, diag);
    sg_free(buf);
    return st;
}

/* ---------------------------------------------------------------- writing */

static bool in_section(const struct sg_fusion_switch_entry *e, enum sg_fusion_kind kind)
{
    return e->any_kind || e->kind == kind;
}

sg_status sg_fusion_switch_print(const sg_fusion_switch *sw, FILE *out)
{
    struct sg_json j;
    sg_json_init(&j, out, true);
    sg_json_object_begin(&j);
    sg_json_key(&j, "Switch");
    sg_json_object_begin(&j);
    for (int k = 0; k < SG_FUSION_KIND_COUNT; k++) {
        size_t n = 0;
        for (size_t i = 0; i < sw->n_entries; i++)
            n += in_section(&sw->entries[i], (enum sg_fusion_kind)k);
        if (!n)
            continue;
        sg_json_key(&j, sg_fusion_kind_name((enum sg_fusion_kind)k));
        sg_json_object_begin(&j);
        for (int pass_all = 1; pass_all >= 0; pass_all--) {
            for (size_t i = 0; i < sw->n_entries; i++) {
                const struct sg_fusion_switch_entry *e = &sw->entries[i];
                if (!in_section(e, (enum sg_fusion_kind)k) ||
                    (strcmp(e->name, SG_FUSION_ALL) == 0) != pass_all)
                    continue;
                sg_json_key(&j, e->name);
                sg_json_string(&j, e->on ? "on" : "off");
            }
        }
        sg_json_object_end(&j);
    }
    sg_json_object_end(&j);
    sg_json_object_end(&j);
    return ferror(out) ? SG_EIO : SG_OK;
}

static sg_status write_cb(FILE *out, const void *ctx, struct sg_diag *diag)
{
    (void)diag;
    return sg_fusion_switch_print(ctx, out);
}

sg_status sg_fusion_switch_write(const sg_fusion_switch *sw, const char *path, struct sg_diag *diag)
{
    return sg__write_atomic(path, write_cb, sw, diag);
}
