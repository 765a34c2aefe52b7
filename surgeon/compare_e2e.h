/*
 * compare_e2e.h - `surgeon compare MODEL.onnx --target mock|atc|OM -o OUT`:
 * the whole accuracy workflow in one command (compare_e2e.c), and what it
 * shares with the dump-folder form (cmd_compare.c).
 *
 * OUT ends up holding
 *     inputs/<input>.npy     the inputs of both runs (-i NAME=FILE repeats it)
 *     golden/                the float32 run of MODEL, every node dumped
 *     <model>.om, <model>.json   the compiled model and its `atc --mode=1`
 *                            map (--target mock|atc); for --target OM only
 *                            the map, <om>.json (none when -m gives it)
 *     <model>.fusion_switch.cfg, <model>.keep_dtype.cfg  when --fusion off or
 *                            --keep made them
 *     target/                the mock OM's run, dumped as device dumps
 *                            (absent when -t gives a device's dumps)
 *     result_<timestamp>.csv, result.json, report.html   the comparison
 *     run.json               what ran, and the command that repeats it
 * or nothing at all: everything is made in a temporary folder beside OUT,
 * which replaces OUT only when the comparison could be made.
 */
#ifndef SG_CLI_COMPARE_E2E_H
#define SG_CLI_COMPARE_E2E_H

#include "cli.h"
#include "inputs.h"
#include "sg_compare.h"

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct cli_e2e {
    const char *model;  /* MODEL.onnx */
    const char *target; /* "mock", "atc" or an OM file */
    const char *dumps;  /* -t: a real OM's dumps from the device */
    const char *map;    /* -m: a real OM's `atc --mode=1` JSON */
    const char *out;    /* -o */
    struct cli_inputs inputs;
    /* Compile options, as `surgeon atc` takes them (--target mock|atc). */
    const char *soc, *precision, *keep_file, *fusion, *overflow;
    struct cli_list keep_ops, keep_nodes;
    struct sg_thresholds thresholds;
    int threads; /* 0: OpenBLAS's choice */
    bool quiet;
    int argc; /* the command line, for the command that repeats the run */
    char **argv;
};

/* Run it all; returns the exit code (0 outputs pass, 3 they fail, 1 bad
 * input, 2 bad usage). Does not free e. */
int cli_compare_e2e(const struct cli_e2e *e);

/* ---- shared with the dump-folder form (defined in cmd_compare.c) ---- */

/* A progress line on stderr, shown only when `on` (a terminal). */
struct cli_progress {
    bool on;
    size_t width;
    struct timespec last;
};

/* "comparing 12/345 NAME", at most ten times a second; name NULL clears
 * the line. For sg_compare_opts.progress. */
void cli_compare_progress(void *ctx, size_t done, size_t total, const char *name);

/* Show `text` as the progress line now (NULL clears it). */
void cli_progress_show(struct cli_progress *p, const char *text);

/*
 * Print the result (unless quiet) and the files that could not be read;
 * return the exit code: 1 when dumps were unreadable or the network
 * outputs could not be compared (said on stderr), 3 when they fail, 0 when
 * they pass.
 */
int cli_compare_conclude(const sg_compare_result *r, const char *csv, const char *out_dir,
                         bool quiet);

#endif
