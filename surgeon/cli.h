/*
 * cli.h - what the subcommands of the surgeon CLI share.
 *
 * The CLI is the only part of surgeon that prints to a terminal or exits.
 * Each subcommand lives in cmd_<name>.c and exports a struct sg_command;
 * main.c lists them in one table that --help reads.
 */
#ifndef SG_CLI_H
#define SG_CLI_H

#include "sg_status.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes, the same for every command. */
enum {
    SG_EXIT_OK = 0,
    SG_EXIT_FAIL = 1,       /* the input was bad or the work failed */
    SG_EXIT_USAGE = 2,      /* the command line was wrong */
    SG_EXIT_THRESHOLDS = 3, /* checks ran and failed (compare: network outputs in error) */
    SG_EXIT_GOLDEN = 4,     /* compare: the golden run's own outputs hold NaN/Inf */
};

struct sg_command {
    const char *name;
    const char *summary; /* one line for `surgeon --help` */
    const char *usage;   /* full help text for `surgeon CMD --help` */
    int (*run)(int argc, char **argv);
};

extern const struct sg_command sg_cmd_inspect;
extern const struct sg_command sg_cmd_convert;
extern const struct sg_command sg_cmd_passes;
extern const struct sg_command sg_cmd_optimize;
extern const struct sg_command sg_cmd_fusion_switch;
extern const struct sg_command sg_cmd_keep_dtype;
extern const struct sg_command sg_cmd_atc;
extern const struct sg_command sg_cmd_compare;
extern const struct sg_command sg_cmd_run;
extern const struct sg_command sg_cmd_extract;
extern const struct sg_command sg_cmd_split;
extern const struct sg_command sg_cmd_concat;
extern const struct sg_command sg_cmd_bisect;

/* "surgeon: error: <msg>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "surgeon: error: PATH: <msg>", or "surgeon: error: <msg>" when msg names
 * PATH first already (a loader's "PATH: not a valid ONNX protobuf"). */
void cli_error_about(const char *path, const char *msg);

/* "surgeon: warning: <msg>" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print a usage error and a hint to `surgeon CMD --help`; returns SG_EXIT_USAGE. */
int cli_usage(const struct sg_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print the diagnostic as an error; returns SG_EXIT_FAIL. */
int cli_fail(const struct sg_diag *diag);

/* True when argv holds -h or --help; prints cmd's usage to stdout. */
bool cli_help_requested(const struct sg_command *cmd, int argc, char **argv);

/* " (did you mean 'X'?)" for the nearest name a sg_suggest was offered,
 * "" when none is near; written into buf. */
struct sg_suggest;
const char *cli_did_you_mean(const struct sg_suggest *s, char *buf, size_t size);

/* The usage error for an unknown option `arg` ("--in-plcae", "--x=1",
 * "-q"), suggesting the nearest of getopt's long options; returns
 * SG_EXIT_USAGE. */
struct option;
int cli_unknown_option(const struct sg_command *cmd, const struct option *longopts,
                       const char *arg);

/* Parse a non-negative integer with an optional K/M/G suffix (powers of 1024). */
bool cli_parse_size(const char *s, unsigned long long *out);

/* Parse --max-loop-iterations N into sg_rt_opts.max_loop_iterations: N >= 1,
 * or 0 for no limit (UINT64_MAX). */
bool cli_parse_loop_limit(const char *s, uint64_t *out);

/* A threshold in [lo, hi], or "off" (NaN: the test is off). */
bool cli_parse_threshold(const char *s, double lo, double hi, double *out);

/* The metric thresholds every comparing command takes (msit's and the
 * scale-free ones), as getopt_long entries sharing one option code. */
#define CLI_THRESHOLD_OPTIONS(code)                                                                \
    {"cosine", required_argument, NULL, code}, {"red", required_argument, NULL, code},             \
        {"kl", required_argument, NULL, code}, {"rmse", required_argument, NULL, code},            \
        {"mre", required_argument, NULL, code}, {"rmse-relative", required_argument, NULL, code},  \
    {                                                                                              \
        "mre-floor", required_argument, NULL, code                                                 \
    }

struct sg_thresholds;

/* The field of t that threshold option `name` (without "--") sets, with
 * the range a value must lie in; NULL for another name. */
double *cli_threshold_field(struct sg_thresholds *t, const char *name, double *lo, double *hi);

/* A growing list of strings (owned copies), for options given as
 * comma-separated lists and possibly repeated (--nodes a,b --nodes c). */
struct cli_list {
    char **v;
    size_t n, cap;
};

/* Append the comma-separated items of s. False (list unchanged past the
 * items already added) on an empty item or when out of memory. */
bool cli_list_add_commas(struct cli_list *l, const char *s);

/* Append one item as it is. False when out of memory. */
bool cli_list_add(struct cli_list *l, const char *s);

void cli_list_free(struct cli_list *l);

/* "12.3 MB" style, into buf. */
const char *cli_human_bytes(unsigned long long n, char *buf, size_t size);

#endif
