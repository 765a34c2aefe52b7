/*
 * options.c - the typed option schema: parsing values from text and lists,
 * defaults, and the pass registry lookups shared by the spec and YAML
 * readers.
 */
#include "pass_impl.h"
#include "sg_alloc.h"
#include "sg_file.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[SG_OPT_TYPE_COUNT] = {
    [SG_OPT_BOOL] = "bool",     [SG_OPT_INT] = "int",       [SG_OPT_FLOAT] = "number",
    [SG_OPT_STRING] = "string", [SG_OPT_ENUM] = "choice",   [SG_OPT_DTYPE] = "dtype",
    [SG_OPT_STRINGS] = "list",  [SG_OPT_INTS] = "int list", [SG_OPT_SHAPES] = "shapes",
    [SG_OPT_DIM] = "dim",       [SG_OPT_PATH] = "path",
};

const char *sg_opt_type_name(enum sg_opt_type type)
{
    return (unsigned)type < SG_OPT_TYPE_COUNT ? type_names[type] : "?";
}

static bool bounded(const struct sg_opt_spec *s)
{
    return s->min != 0 || s->max != 0;
}

static char *trim_copy(sg_arena *a, const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    return sg_arena_strndup(a, s, len);
}

static sg_status nomem(struct sg_diag *diag)
{
    return sg_diag_set(diag, SG_ENOMEM, "out of memory");
}

static sg_status parse_int(const struct sg_opt_spec *spec, const char *s, int64_t *out,
                           struct sg_diag *diag)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno == ERANGE)
        return sg_diag_set(diag, SG_EPARSE, "expects an integer, got '%s'", s);
    if (bounded(spec) && (v < spec->min || v > spec->max))
        return sg_diag_set(diag, SG_ERANGE, "%lld is out of range [%" PRId64 ", %" PRId64 "]", v,
                           spec->min, spec->max);
    *out = v;
    return SG_OK;
}

static sg_status parse_float(const char *s, double *out, struct sg_diag *diag)
{
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (strcmp(p, "inf") == 0 || strcmp(p, ".inf") == 0 || strcmp(p, "infinity") == 0 ||
        strcmp(p, ".Inf") == 0 || strcmp(p, "Inf") == 0) {
        *out = neg ? -INFINITY : INFINITY;
        return SG_OK;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || isnan(v) || errno == ERANGE)
        return sg_diag_set(diag, SG_EPARSE, "expects a number, got '%s'", s);
    *out = v;
    return SG_OK;
}

static sg_status parse_dim(const char *s, struct sg_dim_spec *d, struct sg_diag *diag)
{
    if (strcmp(s, "?") == 0 || strcmp(s, "-1") == 0) {
        d->kind = SG_DIM_UNSET;
        return SG_OK;
    }
    if (isdigit((unsigned char)*s)) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (*end || errno == ERANGE)
            return sg_diag_set(diag, SG_EPARSE, "bad dimension '%s'", s);
        d->kind = SG_DIM_VALUE;
        d->value = v;
        return SG_OK;
    }
    if (!isalpha((unsigned char)*s) && *s != '_')
        return sg_diag_set(diag, SG_EPARSE,
                           "bad dimension '%s' (a number, -1 or ? for unknown, or a name)", s);
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return sg_diag_set(diag, SG_EPARSE, "bad dimension name '%s'", s);
    d->kind = SG_DIM_PARAM;
    d->param = s;
    return SG_OK;
}

/* Split text at `sep` into trimmed arena strings (empty items kept). */
static const char **split(sg_arena *a, const char *text, char sep, size_t *count)
{
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == sep;
    const char **items = sg_arena_calloc(a, n, sizeof *items);
    if (!items)
        return NULL;
    size_t k = 0;
    const char *start = text;
    for (const char *p = text;; p++) {
        if (*p == sep || !*p) {
            if (!(items[k++] = trim_copy(a, start, (size_t)(p - start))))
                return NULL;
            if (!*p)
                break;
            start = p + 1;
        }
    }
    *count = n;
    return items;
}

static sg_status parse_shapes(const char *text, sg_arena *a, struct sg_opt_value *out,
                              struct sg_diag *diag)
{
    size_t n;
    const char **parts = split(a, text, ';', &n);
    if (!parts)
        return nomem(diag);
    if (n && !*parts[n - 1])
        n--; /* a trailing ';' */
    struct sg_shape_spec *shapes = sg_arena_calloc(a, n ? n : 1, sizeof *shapes);
    if (!shapes)
        return nomem(diag);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strrchr(parts[i], ':');
        if (!colon || colon == parts[i])
            return sg_diag_set(diag, SG_EPARSE, "expects NAME:d0,d1,... in '%s'", parts[i]);
        struct sg_shape_spec *sh = &shapes[i];
        if (!(sh->name = trim_copy(a, parts[i], (size_t)(colon - parts[i]))))
            return nomem(diag);
        size_t rank = 0;
        const char **dims = NULL;
        if (colon[1]) {
            if (!(dims = split(a, colon + 1, ',', &rank)))
                return nomem(diag);
        }
        sh->rank = (uint32_t)rank;
        sh->dims = sg_arena_calloc(a, rank ? rank : 1, sizeof *sh->dims);
        if (!sh->dims)
            return nomem(diag);
        for (size_t k = 0; k < rank; k++) {
            sg_status st = parse_dim(dims[k], &sh->dims[k], diag);
            if (st)
                return st;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(shapes[j].name, sh->name) == 0)
                return sg_diag_set(diag, SG_EPARSE, "input '%s' is given twice", sh->name);
    }
    out->shapes = shapes;
    out->n_shapes = n;
    return SG_OK;
}

static sg_status parse_scalar(const struct sg_opt_spec *spec, const char *s, sg_arena *a,
                              const char *base_dir, struct sg_opt_value *out, struct sg_diag *diag)
{
    switch (spec->type) {
    case SG_OPT_BOOL:
        if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "1") ||
            !strcmp(s, "True"))
            out->b = true;
        else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "0") ||
                 !strcmp(s, "False"))
            out->b = false;
        else
            return sg_diag_set(diag, SG_EPARSE, "expects true or false, got '%s'", s);
        return SG_OK;
    case SG_OPT_INT:
        return parse_int(spec, s, &out->i, diag);
    case SG_OPT_FLOAT:
        return parse_float(s, &out->f, diag);
    case SG_OPT_STRING:
        return (out->s = sg_arena_strdup(a, s)) ? SG_OK : nomem(diag);
    case SG_OPT_PATH: {
        if (!*s)
            return sg_diag_set(diag, SG_EPARSE, "expects a file path");
        char *p;
        if (base_dir && *base_dir && s[0] != '/') {
            size_t len = strlen(base_dir) + strlen(s) + 2;
            p = sg_arena_alloc(a, len);
            if (p)
                snprintf(p, len, "%s/%s", base_dir, s);
        } else {
            p = sg_arena_strdup(a, s);
        }
        /* A file the pipeline will read: an input from now on, so that no
         * output of the command replaces it before the pass reads it. */
        if (p)
            sg_file_guard_note(p);
        return (out->s = p) ? SG_OK : nomem(diag);
    }
    case SG_OPT_ENUM: {
        size_t len = strlen(s);
        for (const char *c = spec->choices; c && *c;) {
            const char *bar = strchr(c, '|');
            size_t clen = bar ? (size_t)(bar - c) : strlen(c);
            if (clen == len && strncmp(c, s, len) == 0)
                return (out->s = sg_arena_strdup(a, s)) ? SG_OK : nomem(diag);
            c = bar ? bar + 1 : c + clen;
        }
        return sg_diag_set(diag, SG_EPARSE, "expects one of %s, got '%s'", spec->choices, s);
    }
    case SG_OPT_DTYPE: {
        sg_dtype d = sg_dtype_from_name(s);
        if (d == SG_DTYPE_UNDEFINED || d == SG_DTYPE_STRING)
            return sg_diag_set(diag, SG_EPARSE,
                               "expects an element type (float32, float16, "
                               "int32, bool, ...), got '%s'",
                               s);
        out->dtype = d;
        return SG_OK;
    }
    case SG_OPT_DIM: {
        sg_status st = parse_dim(s, &out->dim, diag);
        if (st)
            return st;
        if (out->dim.kind == SG_DIM_UNSET || (out->dim.kind == SG_DIM_VALUE && out->dim.value < 1))
            return sg_diag_set(diag, SG_ERANGE, "expects a positive integer or a name, got '%s'",
                               s);
        if (out->dim.kind == SG_DIM_VALUE && bounded(spec) &&
            (out->dim.value < spec->min || out->dim.value > spec->max))
            return sg_diag_set(diag, SG_ERANGE, "%s is out of range [%" PRId64 ", %" PRId64 "]", s,
                               spec->min, spec->max);
        if (out->dim.kind == SG_DIM_PARAM && !(out->dim.param = sg_arena_strdup(a, s)))
            return nomem(diag);
        return SG_OK;
    }
    case SG_OPT_SHAPES:
        return parse_shapes(s, a, out, diag);
    default:
        return sg_diag_set(diag, SG_EINVAL, "option type cannot be given as text");
    }
}

sg_status sg__opt_parse_items(const struct sg_opt_spec *spec, const char *const *items, size_t n,
                              sg_arena *a, struct sg_opt_value *out, struct sg_diag *diag)
{
    if (spec->type == SG_OPT_STRINGS) {
        const char **strs = sg_arena_calloc(a, n ? n : 1, sizeof *strs);
        if (!strs)
            return nomem(diag);
        for (size_t i = 0; i < n; i++) {
            if (!*items[i])
                return sg_diag_set(diag, SG_EPARSE, "has an empty list item");
            if (!(strs[i] = sg_arena_strdup(a, items[i])))
                return nomem(diag);
        }
        out->strs = strs;
    } else if (spec->type == SG_OPT_INTS) {
        int64_t *ints = sg_arena_calloc(a, n ? n : 1, sizeof *ints);
        if (!ints)
            return nomem(diag);
        for (size_t i = 0; i < n; i++) {
            sg_status st = parse_int(spec, items[i], &ints[i], diag);
            if (st)
                return st;
        }
        out->ints = ints;
    } else {
        return sg_diag_set(diag, SG_EPARSE, "expects a single %s, not a list",
                           sg_opt_type_name(spec->type));
    }
    out->n = n;
    out->present = true;
    return SG_OK;
}

sg_status sg__opt_parse(const struct sg_opt_spec *spec, const char *text, sg_arena *a,
                        const char *base_dir, struct sg_opt_value *out, struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (spec->type == SG_OPT_STRINGS || spec->type == SG_OPT_INTS) {
        size_t n = 0;
        const char **items = NULL;
        if (*text) {
            items = split(a, text, ',', &n);
            if (!items)
                return nomem(diag);
        }
        return sg__opt_parse_items(spec, items, n, a, out, diag);
    }
    char *s = trim_copy(a, text, strlen(text));
    if (!s)
        return nomem(diag);
    sg_status st = parse_scalar(spec, s, a, base_dir, out, diag);
    if (!st)
        out->present = true;
    return st;
}

sg_status sg__opt_defaults(const struct sg_pass *pass, struct sg_opt_value *vals, sg_arena *a,
                           struct sg_diag *diag)
{
    for (size_t i = 0; i < pass->n_options; i++) {
        const struct sg_opt_spec *spec = &pass->options[i];
        if (vals[i].given || !spec->dflt)
            continue;
        sg_status st = sg__opt_parse(spec, spec->dflt, a, NULL, &vals[i], diag);
        if (st)
            return sg_diag_set(diag, st, "pass '%s' option '%s': bad default", pass->name,
                               spec->name);
    }
    return SG_OK;
}

int sg__opt_index(const struct sg_pass *pass, const char *name, size_t len)
{
    for (size_t i = 0; i < pass->n_options; i++)
        if (strlen(pass->options[i].name) == len && strncmp(pass->options[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

sg_status sg__pass_lookup(const char *name, size_t len, const struct sg_pass **out,
                          struct sg_diag *diag)
{
    size_t count;
    const struct sg_pass *const *all = sg_pass_list(&count);
    for (size_t i = 0; i < count; i++) {
        if (strlen(all[i]->name) != len || strncmp(all[i]->name, name, len) != 0)
            continue;
        *out = all[i];
        return SG_OK;
    }
    return sg_diag_set(diag, SG_ENOTFOUND, "unknown pass '%.*s'; 'surgeon passes' lists them",
                       (int)len, name);
}

/* --------------------------------------------------------- spec strings */

static bool key_follows(const char *p)
{
    const char *q = p;
    while (isalnum((unsigned char)*q) || *q == '_' || *q == '-')
        q++;
    return q > p && *q == '=';
}

sg_status sg_pipeline_add_spec(struct sg_pipeline *p, const char *spec, struct sg_diag *diag)
{
    const char *colon = strchr(spec, ':');
    size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    const struct sg_pass *pass;
    sg_status st = sg__pass_lookup(spec, name_len, &pass, diag);
    if (st)
        return st;
    struct sg_opt_value *vals =
        sg_arena_calloc(p->arena, pass->n_options ? pass->n_options : 1, sizeof *vals);
    char *origin = sg_arena_alloc(p->arena, name_len + 8);
    if (!vals || !origin)
        return nomem(diag);
    snprintf(origin, name_len + 8, "--pass %.*s", (int)name_len, spec);
    const char *q = colon ? colon + 1 : NULL;
    while (q && *q) {
        const char *eq = strchr(q, '=');
        if (!eq || !key_follows(q))
            return sg_diag_set(diag, SG_EPARSE, "pass '%s': expected key=value at '%s'", pass->name,
                               q);
        const char *end = eq + 1;
        while (*end && !(*end == ',' && key_follows(end + 1)))
            end++;
        int idx = sg__opt_index(pass, q, (size_t)(eq - q));
        if (idx < 0)
            return sg_diag_set(diag, SG_EINVAL, "pass '%s' has no option '%.*s'", pass->name,
                               (int)(eq - q), q);
        if (vals[idx].given)
            return sg_diag_set(diag, SG_EINVAL, "pass '%s': option '%s' is given twice", pass->name,
                               pass->options[idx].name);
        char *text = sg_arena_strndup(p->arena, eq + 1, (size_t)(end - eq - 1));
        if (!text)
            return nomem(diag);
        struct sg_diag d = {0};
        st = sg__opt_parse(&pass->options[idx], text, p->arena, NULL, &vals[idx], &d);
        if (st)
            return sg_diag_set(diag, st, "pass '%s' option '%s' (%s) %s", pass->name,
                               pass->options[idx].name, sg_opt_type_name(pass->options[idx].type),
                               d.msg);
        vals[idx].given = true;
        q = *end ? end + 1 : NULL;
    }
    if ((st = sg__opt_defaults(pass, vals, p->arena, diag)))
        return st;
    return sg__pipeline_push(p, pass, vals, origin);
}
