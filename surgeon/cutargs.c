/* cutargs.c - options that extract, split and concat share (cutargs.h). */
#include "cutargs.h"
#include "sg_alloc.h"
#include "sg_dtype.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_save_option(const struct sg_command *cmd, struct cli_save *s, int c, const char *arg)
{
    switch (c) {
    case 0x101:
        s->opts.ext_mode = SG_EXT_FILE;
        s->opts.external_file = arg;
        return SG_EXIT_OK;
    case 0x102:
        s->inline_all = true;
        return SG_EXIT_OK;
    case 0x103: {
        unsigned long long v;
        if (!cli_parse_size(arg, &v) || v == 0)
            return cli_usage(cmd, "bad --size-threshold '%s'", arg);
        s->opts.size_threshold = (size_t)v;
        return SG_EXIT_OK;
    }
    default:
        return -1;
    }
}

int cli_save_finish(const struct sg_command *cmd, struct cli_save *s)
{
    const char *f = s->opts.external_file;
    if (s->inline_all && f)
        return cli_usage(cmd, "--inline and --external-data exclude each other");
    if (s->inline_all)
        s->opts.ext_mode = SG_EXT_INLINE;
    if (f && (strchr(f, '/') || !*f || strcmp(f, ".") == 0 || strcmp(f, "..") == 0))
        return cli_usage(cmd, "--external-data takes a file name beside the output, not '%s'", f);
    return SG_EXIT_OK;
}

static bool dims_chars(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]) && s[i] != ',' && s[i] != '?' && s[i] != '-')
            return false;
    return true;
}

static bool is_dtype(const char *s, size_t len)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return sg_dtype_from_name(buf) != SG_DTYPE_UNDEFINED;
}

/* Where the type part of item s[0..len) starts (its ':' before DTYPE), or
 * len when the item is a plain name; *dims_at the ':' before DIMS or len. */
static size_t type_start(const char *s, size_t len, size_t *dims_at)
{
    *dims_at = len;
    const char *last = NULL;
    for (size_t i = len; i-- > 0;)
        if (s[i] == ':') {
            last = s + i;
            break;
        }
    if (!last || last == s)
        return len;
    size_t li = (size_t)(last - s);
    if (is_dtype(last + 1, len - li - 1))
        return li; /* NAME:DTYPE */
    if (!dims_chars(last + 1, len - li - 1))
        return len;
    for (size_t i = li; i-- > 0;)
        if (s[i] == ':') {
            if (i > 0 && is_dtype(s + i + 1, li - i - 1)) {
                *dims_at = li;
                return i;
            }
            break;
        }
    return len;
}

static bool parse_item(struct cli_decl *d, const char *s, size_t len, char *err, size_t errsize)
{
    size_t dims_at, ts = type_start(s, len, &dims_at);
    memset(d, 0, sizeof *d);
    d->rank = -1;
    if (ts == 0) {
        snprintf(err, errsize, "empty tensor name in '%.*s'", (int)len, s);
        return false;
    }
    if (!(d->name = sg_malloc(ts + 1)))
        return false;
    memcpy(d->name, s, ts);
    d->name[ts] = '\0';
    if (ts == len)
        return true;
    d->typed = true;
    char dt[32];
    size_t dl = (dims_at < len ? dims_at : len) - ts - 1;
    memcpy(dt, s + ts + 1, dl);
    dt[dl] = '\0';
    d->dtype = sg_dtype_from_name(dt);
    if (dims_at == len)
        return true;
    d->rank = 0;
    const char *p = s + dims_at + 1, *end = s + len;
    while (p < end) {
        const char *q = p;
        while (q < end && *q != ',')
            q++;
        if (d->rank == SG_MAX_RANK) {
            snprintf(err, errsize, "too many dims in '%.*s'", (int)len, s);
            return false;
        }
        int64_t v;
        if (q - p == 1 && *p == '?') {
            v = -1;
        } else {
            char num[32];
            if (q == p || q - p >= (long)sizeof num) {
                snprintf(err, errsize, "bad dims in '%.*s'", (int)len, s);
                return false;
            }
            memcpy(num, p, (size_t)(q - p));
            num[q - p] = '\0';
            char *e;
            long long n = strtoll(num, &e, 10);
            if (*e || n < -1) {
                snprintf(err, errsize, "bad dim '%s' in '%.*s' (a dim is N, ? or -1)", num,
                         (int)len, s);
                return false;
            }
            v = n;
        }
        d->dims[d->rank++] = v;
        p = q < end ? q + 1 : q;
        if (q < end && p == end) {
            snprintf(err, errsize, "bad dims in '%.*s'", (int)len, s);
            return false;
        }
    }
    return true;
}

bool cli_decls_add(struct cli_decls *d, const char *text, char *err, size_t errsize)
{
    snprintf(err, errsize, "out of memory");
    const char *start = text;
    for (const char *p = text;; p++) {
        bool split = *p == '\0' || *p == ';';
        if (*p == ',') {
            size_t dims_at, len = (size_t)(p - start);
            size_t ts = type_start(start, len, &dims_at);
            bool in_dims = ts < len && dims_at < len;
            char next = p[1];
            split = !(in_dims && (isdigit((unsigned char)next) || next == '?' || next == '-'));
        }
        if (!split)
            continue;
        size_t len = (size_t)(p - start);
        if (len == 0) {
            snprintf(err, errsize, "empty item in '%s'", text);
            return false;
        }
        if (d->n == d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 8;
            struct cli_decl *g = sg_realloc(d->v, cap * sizeof *g);
            if (!g)
                return false;
            d->v = g;
            d->cap = cap;
        }
        if (!parse_item(&d->v[d->n], start, len, err, errsize)) {
            sg_free(d->v[d->n].name);
            return false;
        }
        d->n++;
        if (*p == '\0')
            return true;
        start = p + 1;
    }
}

void cli_decls_free(struct cli_decls *d)
{
    for (size_t i = 0; i < d->n; i++)
        sg_free(d->v[i].name);
    sg_free(d->v);
    memset(d, 0, sizeof *d);
}

const char **cli_decls_names(const struct cli_decls *d)
{
    const char **names = sg_calloc(d->n + 1, sizeof *names);
    if (names)
        for (size_t i = 0; i < d->n; i++)
            names[i] = d->v[i].name;
    return names;
}

struct sg_cut_decl *cli_decls_types(const struct cli_decls *d, sg_model *m, size_t *n)
{
    struct sg_cut_decl *out = sg_calloc(d->n + 1, sizeof *out);
    *n = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < d->n; i++) {
        const struct cli_decl *x = &d->v[i];
        if (!x->typed)
            continue;
        sg_type *t = sg_type_tensor(m, x->dtype, x->rank >= 0 ? x->dims : NULL, x->rank);
        if (!t) {
            sg_free(out);
            return NULL;
        }
        out[*n].name = x->name;
        out[*n].type = t;
        (*n)++;
    }
    return out;
}

void cli_print_missing(const struct sg_extract_report *r)
{
    for (size_t i = 0; i < r->n_missing; i++)
        fprintf(stderr, "  missing: %s\n", r->missing[i]);
    if (r->n_missing)
        fputs("  (list them with --inputs, or cut after them)\n", stderr);
}
