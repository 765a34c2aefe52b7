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
