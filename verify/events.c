/* events.c - sending a workflow's events to the caller (sg_verify.h). */
#include "sg_alloc.h"
#include "verify_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sg__verify_emit(const struct sg_verify_events *ev, enum sg_verify_event kind, const char *fmt,
                     ...)
{
    if (!ev || !ev->fn)
        return;
    if (!fmt) {
        ev->fn(ev->ctx, kind, NULL);
        return;
    }
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ev->fn(ev->ctx, kind, text);
}

char *sg__verify_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = sg_malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", a, b);
    return s;
}

sg_status sg__verify_values_add(struct sg_verify_values *values, const char *name, sg_rt_value *v,
                                struct sg_diag *diag)
{
    uint32_t n = values->n;
    char **nn = sg_realloc(values->names, (n + 1) * sizeof *nn);
    if (nn)
        values->names = nn;
    sg_rt_value **nv = nn ? sg_realloc(values->values, (n + 1) * sizeof *nv) : NULL;
    if (nv)
        values->values = nv;
    char *s = nv ? sg_strdup(name) : NULL;
    if (!s)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    values->names[n] = s;
    values->values[n] = sg_rt_value_ref(v);
    values->n = n + 1;
    return SG_OK;
}
