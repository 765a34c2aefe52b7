/*
 * atc_job.h - one compile job as `surgeon atc` runs it: every input checked,
 * the files surgeon writes for ATC (keep_dtype, fusion switch) written, then
 * the exact `atc` command printed or run, or the mock compiler run (its
 * .om and .json written). `surgeon atc` and the end-to-end `surgeon compare
 * MODEL --target mock|atc` both compile through it, so both take the same
 * options the same way.
 */
#ifndef SG_CLI_ATC_JOB_H
#define SG_CLI_ATC_JOB_H

#include "cli.h"

#include <stdbool.h>
#include <stddef.h>

struct cli_atc_job {
    const struct sg_command *cmd;  /* usage errors point at its --help */
    const char *model, *out, *soc; /* out: ATC's --output prefix */
    const char *shape, *precision, *keep_file, *customize, *opmode, *fusion, *log;
    const char *overflow; /* the mock's --overflow, NULL: the SoC's */
    struct cli_list keep_ops, keep_nodes;
    bool print;               /* print the atc command instead of running anything */
    bool mock;                /* the mock compiler even when atc exists */
    bool real;                /* the real atc only: fail when it is not installed */
    const char *const *extra; /* atc arguments after "--" */
    size_t n_extra;
    const char *shown; /* how messages name `out` (NULL: as it is) */
    bool quiet;        /* nothing on stdout (warnings and errors still on stderr) */
};

/* Check, write what ATC reads, then print, run atc or run the mock
 * compiler, as the job says; without print, mock or real, the mock when
 * atc is not installed (said on stderr). Returns the exit code (atc's own
 * when it ran). Nothing is written when a check fails. */
int cli_atc_compile(const struct cli_atc_job *job);

/* `atc --mode=1 --om=OM --json=JSON [extra]` (printed with `print`), or for
 * a mock OM its map written by surgeon. Returns the exit code. */
int cli_atc_to_json(const struct sg_command *cmd, const char *om, const char *json,
                    const char *const *extra, size_t n_extra, bool print);

#endif
