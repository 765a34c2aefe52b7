/*
 * progress.h - how the CLI shows a library workflow at work: the progress
 * line on a terminal, and the events of sg_verify.h printed where they
 * belong (result lines on stdout, notes and warnings on stderr).
 */
#ifndef SG_CLI_PROGRESS_H
#define SG_CLI_PROGRESS_H

#include "sg_verify.h"

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* A progress line on stderr, shown only when `on` (a terminal). */
struct cli_progress {
    bool on;
    size_t width;
    struct timespec last;
};

/* Show `text` as the progress line now (NULL clears it). */
void cli_progress_show(struct cli_progress *p, const char *text);

/* "comparing 12/345 NAME", at most ten times a second; name NULL clears
 * the line. For sg_compare_opts.progress (ctx: a struct cli_progress). */
void cli_compare_progress(void *ctx, size_t done, size_t total, const char *name);

/* What a workflow's events go through. */
struct cli_reporter {
    struct cli_progress prog;
    bool quiet; /* only warnings (and errors, printed by the caller) */
};

/* A reporter: the progress line when stderr is a terminal and not quiet. */
void cli_reporter_init(struct cli_reporter *r, bool quiet);

/* Events that print through reporter r. */
struct sg_verify_events cli_reporter_events(struct cli_reporter *r);

#endif
