/*
 * words.c - the command lines verify/ records for a user to repeat a run
 * (compare's repeat command, bisect's reproduce commands): words gathered
 * one by one, quoted for a shell once joined (sg_argv_format).
 */
#include "sg_alloc.h"
#include "sg_atc.h"
#include "verify_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg__words_add(struct sg__words *w, const char *word)
{
    if (!w->ok || !word)
        return;
    if (w->n + 1 >= w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        char **g = sg_realloc(w->v, cap * sizeof *g);
        if (!g) {
            w->ok = false;
            return;
        }
        w->v = g;
        w->cap = cap;
    }
    if (!(w->v[w->n] = sg_strdup(word))) {
        w->ok = false;
        return;
    }
    w->v[++w->n] = NULL;
}

void sg__words_opt(struct sg__words *w, const char *opt, const char *value)
{
    if (!value)
        return;
    sg__words_add(w, opt);
    sg__words_add(w, value);
}

void sg__words_list(struct sg__words *w, const char *opt, const char *const *v, size_t n)
{
    if (!n)
        return;
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(v[i]) + 1;
    char *s = sg_malloc(len);
    if (!s) {
        w->ok = false;
        return;
    }
    s[0] = '\0';
    for (size_t i = 0; i < n; i++)
        strcat(strcat(s, i ? "," : ""), v[i]);
    sg__words_opt(w, opt, s);
    sg_free(s);
}

/* One threshold, when it is not the default: "off" for NaN, else the
 * shortest text that reads back as v. */
static void add_threshold(struct sg__words *w, const char *opt, double v, double def)
{
    if (v == def || (isnan(v) && isnan(def)))
        return;
    char buf[64];
    if (isnan(v))
        snprintf(buf, sizeof buf, "off");
    else if (snprintf(buf, sizeof buf, "%.15g", v) > 0 && strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    sg__words_opt(w, opt, buf);
}

void sg__words_thresholds(struct sg__words *w, const struct sg_thresholds *t)
{
    const struct sg_thresholds def = SG_THRESHOLDS_DEFAULT;
    add_threshold(w, "--cosine", t->cosine, def.cosine);
    add_threshold(w, "--red", t->red, def.red);
    add_threshold(w, "--kl", t->kl, def.kl);
    add_threshold(w, "--rmse", t->rmse, def.rmse);
    add_threshold(w, "--mre", t->mre, def.mre);
    add_threshold(w, "--rmse-relative", t->rmse_relative, def.rmse_relative);
    add_threshold(w, "--mre-floor", t->mre_floor, def.mre_floor);
}

char *sg__words_join(struct sg__words *w)
{
    char *line = w->ok && w->n ? sg_argv_format(w->v) : NULL;
    for (size_t i = 0; i < w->n; i++)
        sg_free(w->v[i]);
    w->n = 0;
    return line;
}

void sg__words_free(struct sg__words *w)
{
    for (size_t i = 0; i < w->n; i++)
        sg_free(w->v[i]);
    sg_free(w->v);
    *w = (struct sg__words){0};
}
