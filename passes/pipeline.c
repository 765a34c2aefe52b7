/*
 * pipeline.c - the pass manager: pipelines, running them, and reports.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

sg_status sg_pipeline_create(struct sg_pipeline **out)
{
    *out = NULL;
    struct sg_pipeline *p = sg_calloc(1, sizeof *p);
    if (!p)
        return SG_ENOMEM;
    if (!(p->arena = sg_arena_create())) {
        sg_free(p);
        return SG_ENOMEM;
    }
    *out = p;
    return SG_OK;
}

void sg_pipeline_free(struct sg_pipeline *p)
{
    if (!p)
        return;
    sg_arena_free(p->arena);
    sg_free(p);
}

sg_status sg__pipeline_push(struct sg_pipeline *p, const struct sg_pass *pass,
                            struct sg_opt_value *opts, const char *origin)
{
    if (p->n_steps == p->cap_steps) {
        size_t cap = p->cap_steps ? p->cap_steps * 2 : 8;
        struct sg_pipeline_step *grown =
            sg_arena_grow(p->arena, p->steps, p->n_steps, cap, sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        p->steps = grown;
        p->cap_steps = cap;
    }
    p->steps[p->n_steps++] = (struct sg_pipeline_step){pass, opts, origin};
    return SG_OK;
}

/* ---------------------------------------------------------------- reports */

static struct sg_report_item *item_for(struct sg_pass_report *r, const char *what, bool change)
{
    for (size_t i = 0; i < r->n_items; i++)
        if (r->items[i].change == change && strcmp(r->items[i].what, what) == 0)
            return &r->items[i];
    if (r->n_items == r->cap_items) {
        size_t cap = r->cap_items ? r->cap_items * 2 : 4;
        struct sg_report_item *grown = sg_realloc(r->items, cap * sizeof *grown);
        if (!grown)
            return NULL;
        r->items = grown;
        r->cap_items = cap;
    }
    struct sg_report_item *it = &r->items[r->n_items];
    memset(it, 0, sizeof *it);
    if (!(it->what = sg_strdup(what)))
        return NULL;
    it->change = change;
    r->n_items++;
    return it;
}

/* fmt with `%s` as its only conversions, into buf (truncated like
 * vsnprintf); false, with ap untouched, for any other format. Passes report
 * a line per change, tens of thousands on big models, nearly all names
 * joined by words: this costs a copy where vsnprintf parsed the format. */
static bool format_strings(char *buf, size_t size, const char *fmt, va_list ap)
{
    for (const char *f = strchr(fmt, '%'); f; f = strchr(f + 2, '%'))
        if (f[1] != 's')
            return false;
    va_list aq;
    va_copy(aq, ap);
    size_t n = 0;
    for (const char *f = fmt; *f; f++) {
        const char *s = NULL;
        size_t len = 1;
        if (f[0] == '%') {
            s = va_arg(aq, const char *);
            s = s ? s : "(null)";
            len = strlen(s);
            f++;
        } else {
            s = f;
        }
        if (len > size - 1 - n)
            len = size - 1 - n;
        memcpy(buf + n, s, len);
        n += len;
    }
    buf[n] = '\0';
    va_end(aq);
    return true;
}

static void report_add(struct sg_pass_report *r, bool change, const char *what, const char *fmt,
                       va_list ap)
{
    struct sg_report_item *it = item_for(r, what, change);
    if (!it) {
        r->oom = true;
        return;
    }
    it->count++;
    if (change)
        r->changes++;
    if (!fmt || r->counts_only)
        return;
    if (it->n_names == it->cap_names) {
        size_t cap = it->cap_names ? it->cap_names * 2 : 8;
        char **grown = sg_realloc(it->names, cap * sizeof *grown);
        if (!grown) {
            r->oom = true;
            return;
        }
        it->names = grown;
        it->cap_names = cap;
    }
    char buf[512];
    if (!format_strings(buf, sizeof buf, fmt, ap))
        vsnprintf(buf, sizeof buf, fmt, ap);
    if (!(it->names[it->n_names] = sg_strdup(buf))) {
        r->oom = true;
        return;
    }
    it->n_names++;
}

void sg_report_change(struct sg_pass_report *r, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_add(r, true, what, fmt, ap);
    va_end(ap);
}

void sg_report_info(struct sg_pass_report *r, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_add(r, false, what, fmt, ap);
    va_end(ap);
}

void sg_report_warn(struct sg_pass_report *r, const char *what, const char *fmt, ...)
{
    char heading[256];
    snprintf(heading, sizeof heading, "warning: %s", what);
    va_list ap;
    va_start(ap, fmt);
    report_add(r, false, heading, fmt, ap);
    va_end(ap);
    r->warnings++;
}

void sg_pass_report_clear(struct sg_pass_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_items; i++) {
        for (size_t k = 0; k < r->items[i].n_names; k++)
            sg_free(r->items[i].names[k]);
        sg_free(r->items[i].names);
        sg_free(r->items[i].what);
    }
    sg_free(r->items);
    memset(r, 0, sizeof *r);
}

void sg_pass_report_print(const struct sg_pass_report *r, FILE *out, size_t max_names)
{
    fprintf(out, "%s: %zu change%s\n", r->pass ? r->pass : "?", r->changes,
            r->changes == 1 ? "" : "s");
    for (size_t i = 0; i < r->n_items; i++) {
        const struct sg_report_item *it = &r->items[i];
        fprintf(out, "  %s: %zu", it->what, it->count);
        size_t shown = it->n_names;
        if (max_names && shown > max_names)
            shown = max_names;
        for (size_t k = 0; k < shown; k++)
            fprintf(out, "%s%s", k ? ", " : " (", it->names[k]);
        if (shown < it->n_names)
            fprintf(out, ", ... %zu more", it->n_names - shown);
        fputs(shown ? ")\n" : "\n", out);
    }
}

void sg_run_report_clear(struct sg_run_report *rep)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->n; i++)
        sg_pass_report_clear(&rep->passes[i]);
    sg_free(rep->passes);
    memset(rep, 0, sizeof *rep);
}

/* ------------------------------------------------------------------ run */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

sg_status sg_pipeline_run(const struct sg_pipeline *p, sg_model *m, struct sg_run_report *rep,
                          struct sg_diag *diag)
{
    if (p->n_steps) {
        rep->passes = sg_calloc(p->n_steps, sizeof *rep->passes);
        if (!rep->passes)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < p->n_steps; i++) {
        const struct sg_pipeline_step *s = &p->steps[i];
        struct sg_pass_report *r = &rep->passes[i];
        r->pass = s->pass->name;
        r->counts_only = rep->counts_only;
        rep->n = i + 1;
        double t0 = now();
        sg_status st = s->pass->run(m, s->opts, r, diag);
        r->seconds = now() - t0;
        if (!st && r->oom)
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory recording the report");
        if (st) {
            sg_diag_prefix(diag, "pass '%s'", s->pass->name);
            return st;
        }
        rep->changes += r->changes;
        rep->warnings += r->warnings;
        if (p->verify && (st = sg_model_verify(m, diag))) {
            sg_diag_prefix(diag, "model broken after pass '%s' (a bug in the pass)", s->pass->name);
            return st;
        }
    }
    return SG_OK;
}

/* ----------------------------------------------------------------- help */

void sg_pass_print_help(const struct sg_pass *pass, FILE *out)
{
    fprintf(out, "%-18s %s\n", pass->name, pass->summary);
    for (size_t i = 0; i < pass->n_options; i++) {
        const struct sg_opt_spec *o = &pass->options[i];
        char type[96];
        if (o->type == SG_OPT_ENUM)
            snprintf(type, sizeof type, "%s", o->choices);
        else if ((o->type == SG_OPT_INT || o->type == SG_OPT_INTS || o->type == SG_OPT_DIM) &&
                 (o->min || o->max))
            snprintf(type, sizeof type, "%s %" PRId64 "..%" PRId64, sg_opt_type_name(o->type),
                     o->min, o->max);
        else
            snprintf(type, sizeof type, "%s", sg_opt_type_name(o->type));
        fprintf(out, "    %-14s %-18s %s", o->name, type, o->help);
        if (o->dflt)
            fprintf(out, " [default: %s]", *o->dflt ? o->dflt : "none");
        fputc('\n', out);
    }
}
