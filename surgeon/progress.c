/* progress.c - showing a workflow at work (see progress.h). */
#include "cli.h"
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void cli_progress_show(struct cli_progress *p, const char *text)
{
    if (!p->on)
        return;
    if (!text) {
        if (p->width)
            fprintf(stderr, "\r%*s\r", (int)p->width, "");
        p->width = 0;
        return;
    }
    size_t len = strlen(text);
    if (len > 79)
        len = 79;
    fprintf(stderr, "\r%-*.*s", (int)(p->width > len ? p->width : len), (int)len, text);
    p->width = len;
}

void cli_compare_progress(void *ctx, size_t done, size_t total, const char *name)
{
    struct cli_progress *p = ctx;
    if (!p->on)
        return;
    if (!name) {
        cli_progress_show(p, NULL);
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double since =
        (double)(now.tv_sec - p->last.tv_sec) + (double)(now.tv_nsec - p->last.tv_nsec) * 1e-9;
    if (done > 0 && since < 0.1)
        return;
    p->last = now;
    char line[512];
    snprintf(line, sizeof line, "comparing %zu/%zu %s", done + 1, total, name);
    cli_progress_show(p, line);
}

void cli_reporter_init(struct cli_reporter *r, bool quiet)
{
    memset(r, 0, sizeof *r);
    r->quiet = quiet;
    r->prog.on = !quiet && isatty(STDERR_FILENO);
}

static void on_event(void *ctx, enum sg_verify_event kind, const char *text)
{
    struct cli_reporter *r = ctx;
    switch (kind) {
    case SG_VERIFY_PROGRESS:
        cli_progress_show(&r->prog, text);
        return;
    case SG_VERIFY_INFO:
        if (!r->quiet) {
            cli_progress_show(&r->prog, NULL);
            printf("%s\n", text);
        }
        break;
    case SG_VERIFY_NOTE:
        if (!r->quiet) {
            cli_progress_show(&r->prog, NULL);
            fprintf(stderr, "surgeon: %s\n", text);
        }
        break;
    case SG_VERIFY_WARNING:
        cli_progress_show(&r->prog, NULL);
        cli_warn("%s", text);
        break;
    default:
        return;
    }
    /* A note may precede atc writing to the same terminal. */
    fflush(stdout);
    fflush(stderr);
}

struct sg_verify_events cli_reporter_events(struct cli_reporter *r)
{
    struct sg_verify_events ev = {
        .fn = on_event, .ctx = r, .compare = {.fn = cli_compare_progress, .ctx = &r->prog}};
    return ev;
}
