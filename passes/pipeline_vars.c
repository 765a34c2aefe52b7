/*
 * pipeline_vars.c - pipeline variables: `${name}` and `${name:-default}` in
 * the option values of a YAML pipeline, filled from `optimize --set
 * name=value` (sg_pipeline_set_var) before the file is read, so one
 * configs/rebatch.yaml serves every batch. `$${` stands for a literal `${`.
 * A reference to a variable that is not set and has no default is an
 * error, and so is a variable that is set but that no file read refers to
 * (a mistyped --set would otherwise change nothing, silently).
 */
#include "pass_impl.h"
#include "sg_alloc.h"
#include "sg_suggest.h"

#include <ctype.h>
#include <string.h>

static bool name_ok(const char *s, size_t len)
{
    if (!len || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

static struct sg_pipeline_var *find_var(const struct sg_pipeline *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->n_vars; i++)
        if (strlen(p->vars[i].name) == len && memcmp(p->vars[i].name, name, len) == 0)
            return &p->vars[i];
    return NULL;
}

sg_status sg_pipeline_set_var(struct sg_pipeline *p, const char *assignment, struct sg_diag *diag)
{
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return sg_diag_set(diag, SG_EPARSE, "'%s': expected NAME=VALUE", assignment);
    size_t len = (size_t)(eq - assignment);
    if (!name_ok(assignment, len))
        return sg_diag_set(diag, SG_EPARSE,
                           "'%.*s' is not a variable name (letters, digits and _, not first a "
                           "digit)",
                           (int)len, assignment);
    if (find_var(p, assignment, len))
        return sg_diag_set(diag, SG_EINVAL, "variable '%.*s' is set twice", (int)len, assignment);
    if (p->n_vars == p->cap_vars) {
        size_t cap = p->cap_vars ? p->cap_vars * 2 : 4;
        struct sg_pipeline_var *g = sg_arena_grow(p->arena, p->vars, p->n_vars, cap, sizeof *g);
        if (!g)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        p->vars = g;
        p->cap_vars = cap;
    }
    struct sg_pipeline_var *v = &p->vars[p->n_vars];
    v->name = sg_arena_strndup(p->arena, assignment, len);
    v->value = sg_arena_strdup(p->arena, eq + 1);
    v->used = false;
    if (!v->name || !v->value)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    p->n_vars++;
    return SG_OK;
}

sg_status sg_pipeline_check_vars(const struct sg_pipeline *p, struct sg_diag *diag)
{
    for (size_t i = 0; i < p->n_vars; i++)
        if (!p->vars[i].used)
            return sg_diag_set(diag, SG_EINVAL,
                               "variable '%s' is set, but no pipeline read refers to ${%s}",
                               p->vars[i].name, p->vars[i].name);
    return SG_OK;
}

/* Append s[0..n) to the growing buffer *buf. */
static bool append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (*len + n + 1 > c)
            c *= 2;
        char *g = sg_realloc(*buf, c);
        if (!g)
            return false;
        *buf = g;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

sg_status sg__vars_expand(struct sg_pipeline *p, const char *text, const char **out,
                          struct sg_diag *diag)
{
    *out = text;
    if (!strchr(text, '$'))
        return SG_OK;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    sg_status st = SG_OK;
    const char *q = text;
    while (*q && !st) {
        const char *dollar = strchr(q, '$');
        if (!dollar) {
            if (!append(&buf, &len, &cap, q, strlen(q)))
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            break;
        }
        if (!append(&buf, &len, &cap, q, (size_t)(dollar - q))) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            break;
        }
        if (dollar[1] == '$' && dollar[2] == '{') { /* $${ is a literal ${ */
            if (!append(&buf, &len, &cap, "${", 2))
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            q = dollar + 3;
            continue;
        }
        if (dollar[1] != '{') {
            if (!append(&buf, &len, &cap, "$", 1))
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            q = dollar + 1;
            continue;
        }
        const char *name = dollar + 2, *close = strchr(name, '}');
        if (!close) {
            st = sg_diag_set(diag, SG_EPARSE, "'${' without a closing '}' in '%s'", text);
            break;
        }
        const char *dflt = strstr(name, ":-");
        size_t nlen = dflt && dflt < close ? (size_t)(dflt - name) : (size_t)(close - name);
        if (!name_ok(name, nlen)) {
            st = sg_diag_set(diag, SG_EPARSE,
                             "'%.*s' is not a variable reference: write ${NAME} or "
                             "${NAME:-DEFAULT} ($${ for a literal ${)",
                             (int)(close - dollar + 1), dollar);
            break;
        }
        struct sg_pipeline_var *v = find_var(p, name, nlen);
        const char *val;
        size_t vlen;
        if (v) {
            v->used = true;
            val = v->value;
            vlen = strlen(val);
        } else if (dflt && dflt < close) {
            val = dflt + 2;
            vlen = (size_t)(close - val);
        } else {
            struct sg_suggest sg;
            char word[SG_SUGGEST_MAX_LEN + 1];
            snprintf(word, sizeof word, "%.*s", (int)nlen, name);
            sg_suggest_init(&sg, word);
            for (size_t i = 0; i < p->n_vars; i++)
                sg_suggest_offer(&sg, p->vars[i].name);
            const char *near = sg_suggest_best(&sg);
            st = sg_diag_set(diag, SG_EINVAL,
                             "${%.*s} is not set and has no default: give --set %.*s=VALUE (or "
                             "write ${%.*s:-DEFAULT})%s%s%s",
                             (int)nlen, name, (int)nlen, name, (int)nlen, name,
                             near ? " (--set was given for '" : "", near ? near : "",
                             near ? "')" : "");
            break;
        }
        if (!append(&buf, &len, &cap, val, vlen))
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        q = close + 1;
    }
    if (!st) {
        char *copy = sg_arena_strdup(p->arena, buf ? buf : "");
        if (!copy)
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        else
            *out = copy;
    }
    sg_free(buf);
    return st;
}
