/* input_shape.c - ATC's --input_shape: parse and check against a model (see sg_atc.h). */
#include "sg_atc.h"

#include "sg_alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_input_shapes_free(sg_input_shapes *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        sg_free(s->items[i].name);
        sg_free(s->items[i].dims);
    }
    sg_free(s->items);
    sg_free(s);
}

/* A dim number: -1 or a non-negative decimal without sign or leading zeros. */
static bool parse_num(const char *s, const char *e, int64_t *out)
{
    if (e - s == 2 && s[0] == '-' && s[1] == '1') {
        *out = -1;
        return true;
    }
    if (s == e || (e - s > 1 && *s == '0'))
        return false;
    int64_t v = 0;
    for (const char *p = s; p < e; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return true;
}

static sg_status parse_dim(const char *text, const char *s, const char *e, struct sg_shape_range *d,
                           struct sg_diag *diag)
{
    const char *tilde = memchr(s, '~', (size_t)(e - s));
    if (!tilde) {
        if (!parse_num(s, e, &d->lo))
            goto bad;
        d->hi = d->lo;
        return SG_OK;
    }
    if (!parse_num(s, tilde, &d->lo) || !parse_num(tilde + 1, e, &d->hi) || d->lo < 0 ||
        (d->hi != -1 && d->hi < d->lo))
        goto bad;
    return SG_OK;
bad:
    return sg_diag_set(diag, SG_EPARSE,
                       "input shape, column %d: bad dimension '%.*s' (a dimension is N, -1 or "
                       "LO~HI)",
                       (int)(s - text) + 1, (int)(e - s), s);
}

sg_status sg_input_shapes_parse(const char *text, sg_input_shapes **out, struct sg_diag *diag)
{
    *out = NULL;
    sg_input_shapes *S = sg_calloc(1, sizeof *S);
    size_t n_items = 1;
    for (const char *p = text; *p; p++)
        n_items += *p == ';';
    if (S)
        S->items = sg_calloc(n_items, sizeof *S->items);
    if (!S || !S->items) {
        sg_input_shapes_free(S);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    sg_status st = SG_OK;
    const char *item = text;
    for (;;) {
        const char *end = strchr(item, ';');
        if (!end)
            end = item + strlen(item);
        const char *colon = NULL;
        for (const char *p = item; p < end; p++)
            if (*p == ':')
                colon = p;
        if (item == end) {
            st = sg_diag_set(diag, SG_EPARSE,
                             "input shape, column %d: empty item (items are "
                             "name:d0,d1,... separated by ';')",
                             (int)(item - text) + 1);
            goto fail;
        }
        if (!colon || colon == item) {
            st =
                sg_diag_set(diag, SG_EPARSE, "input shape, column %d: '%.*s' is not name:d0,d1,...",
                            (int)(item - text) + 1, (int)(end - item), item);
            goto fail;
        }
        for (const char *p = item; p < end; p++)
            if ((unsigned char)*p <= ' ' || *p == '"' || *p == '\'') {
                st =
                    sg_diag_set(diag, SG_EPARSE, "input shape, column %d: blank or quote in '%.*s'",
                                (int)(p - text) + 1, (int)(end - item), item);
                goto fail;
            }
        struct sg_input_shape *in = &S->items[S->n];
        in->name = sg_malloc((size_t)(colon - item) + 1);
        if (!in->name) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            goto fail;
        }
        memcpy(in->name, item, (size_t)(colon - item));
        in->name[colon - item] = '\0';
        S->n++;
        for (size_t i = 0; i + 1 < S->n; i++)
            if (strcmp(S->items[i].name, in->name) == 0) {
                st = sg_diag_set(diag, SG_EDUP, "input shape: input '%s' given twice", in->name);
                goto fail;
            }
        const char *ds = colon + 1;
        if (ds < end) {
            uint32_t rank = 1;
            for (const char *p = ds; p < end; p++)
                rank += *p == ',';
            in->dims = sg_calloc(rank, sizeof *in->dims);
            if (!in->dims) {
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
                goto fail;
            }
            for (const char *p = ds;;) {
                const char *comma = memchr(p, ',', (size_t)(end - p));
                const char *de = comma ? comma : end;
                if ((st = parse_dim(text, p, de, &in->dims[in->rank], diag)))
                    goto fail;
                in->rank++;
                if (!comma)
                    break;
                p = comma + 1;
            }
        }
        if (!*end)
            break;
        item = end + 1;
    }
    *out = S;
    return SG_OK;
fail:
    sg_input_shapes_free(S);
    return st;
}

sg_status sg_input_shapes_check(const sg_input_shapes *s, const sg_model *m, struct sg_diag *diag)
{
    const sg_graph *g = m->graph;
    for (size_t i = 0; i < s->n; i++) {
        const struct sg_input_shape *in = &s->items[i];
        const sg_value *v = NULL;
        for (uint32_t k = 0; g && k < g->n_inputs; k++)
            if (!g->inputs[k]->init && strcmp(g->inputs[k]->name, in->name) == 0)
                v = g->inputs[k];
        if (!v) {
            char list[512];
            size_t len = 0;
            list[0] = '\0';
            for (uint32_t k = 0; g && k < g->n_inputs && len < sizeof list; k++) {
                if (g->inputs[k]->init)
                    continue;
                int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                                 g->inputs[k]->name);
                len += w > 0 ? (size_t)w : 0;
            }
            return sg_diag_set(diag, SG_ENOTFOUND,
                               "the input shape names '%s', which is not an input of the model "
                               "(inputs: %s)",
                               in->name, len ? list : "none");
        }
        if (v->type && v->type->kind == SG_TYPE_TENSOR && v->type->shape &&
            v->type->shape->rank != in->rank)
            return sg_diag_set(diag, SG_ESHAPE,
                               "the input shape gives input '%s' %u dimension%s, the model %u",
                               in->name, in->rank, in->rank == 1 ? "" : "s", v->type->shape->rank);
    }
    return SG_OK;
}
