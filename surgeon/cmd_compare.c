/*
 * cmd_compare.c - `surgeon compare`: compare a target run's dumps with a
 * golden run's, layer by layer, and say which operator breaks the model.
 */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_compare.h"
#include "sg_io.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_compare = {
    "compare",
    "compare dumps of a target run with a golden run, find the first failing operator",
    "usage: surgeon compare -g GOLDEN_DIR -t TARGET_DIR [-m MAP.json] [--model MODEL.onnx]\n"
    "                       -o OUT [--cosine T] [--red T] [--kl T] [--rmse T] [--mre T] [-q]\n\n"
    "Compare every operator output dumped by a target run (TARGET_DIR) with the\n"
    "golden run's (GOLDEN_DIR), as msit does: dumps named <node>.<i>.<timestamp>.npy\n"
    "(both sides) or, for the target, <OpType>.<OpName>.<task>.<stream>.<timestamp>\n"
    ".output.<i>.npy. Folders are searched recursively.\n\n"
    "  -g, --golden DIR     the reference dumps (fp32 ONNX run)\n"
    "  -t, --target DIR     the dumps to check\n"
    "  -m, --map FILE       `atc --mode=1` JSON of the compiled model: matches compiled\n"
    "                       ops to ONNX nodes; a fused op is compared with the last\n"
    "                       node it covers\n"
    "      --model FILE     the original ONNX model: rows in topological order, network\n"
    "                       outputs known, inputs of the failing operator checked\n"
    "  -o, --output DIR     where to write result_<timestamp>.csv (msit's columns),\n"
    "                       result.json and report.html\n"
    "      --cosine T       precision error when cosine similarity < T (default 0.99)\n"
    "      --red T          ... relative Euclidean distance > T (default 0.05)\n"
    "      --kl T           ... KL divergence > T (default 0.005)\n"
    "      --rmse T         ... root mean square error > T (default 1.0)\n"
    "      --mre T          ... mean relative error > T (default 1.0)\n"
    "  -q, --quiet          print nothing but errors\n\n"
    "A tensor is also in error when the target has NaN/Inf where the golden run is\n"
    "finite (overflow). Exit status: 0 the network outputs pass, 3 they fail the\n"
    "thresholds, 1 bad input (missing or empty folders, unreadable dumps, a map that\n"
    "does not fit the model, outputs that could not be compared), 2 bad usage.\n",
    run,
};

struct progress {
    bool on;
    size_t width;
    struct timespec last;
};

/* "comparing 12/345 NAME" on stderr, at most ten times a second. */
static void show_progress(void *ctx, size_t done, size_t total, const char *name)
{
    struct progress *p = ctx;
    if (!p->on)
        return;
    if (!name) {
        if (p->width)
            fprintf(stderr, "\r%*s\r", (int)p->width, "");
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
    int n = snprintf(line, sizeof line, "comparing %zu/%zu %s", done + 1, total, name);
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len > 79)
        len = 79;
    line[len] = '\0';
    fprintf(stderr, "\r%-*s", (int)(p->width > len ? p->width : len), line);
    p->width = len;
}

static bool parse_threshold(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static void print_result(const sg_compare_result *r, const char *csv, const char *out_dir)
{
    const struct sg_compare_analysis *an = &r->analysis;
    printf("verdict: %s\n", sg_verdict_name(an->verdict));
    printf("%s\n", an->summary);
    if (an->first_fail >= 0) {
        const struct sg_compare_row *row = &r->rows[an->first_fail];
        printf("first failing operator: %s%s%s%s, cause: %s%s\n", row->target,
               strcmp(row->op_type, "NaN") ? " (" : "",
               strcmp(row->op_type, "NaN") ? row->op_type : "",
               strcmp(row->op_type, "NaN") ? ")" : "", sg_cause_name(an->cause),
               an->overflow && an->cause != SG_CAUSE_OVERFLOW ? ", with overflow" : "");
        for (size_t i = 0; i < an->n_inputs; i++)
            printf("  input %s: %s\n", an->inputs[i].value,
                   sg_input_state_name(an->inputs[i].state));
    }
    for (size_t i = 0; i < an->n_advice; i++)
        printf("advice: %s\n", an->advice[i]);
    for (size_t i = 0; i < an->n_notes; i++)
        printf("note: %s\n", an->notes[i]);
    printf("%zu rows: %zu compared, %zu in error, %zu on one side only, %zu not comparable\n",
           r->n_rows, an->n_compared, an->n_errors,
           an->n_golden_only + an->n_target_only + an->n_fused_away, an->n_failed);
    printf("reports: %s, %s/result.json, %s/report.html\n", csv, out_dir, out_dir);
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"golden", required_argument, NULL, 'g'}, {"target", required_argument, NULL, 't'},
        {"map", required_argument, NULL, 'm'},    {"model", required_argument, NULL, 'M'},
        {"output", required_argument, NULL, 'o'}, {"cosine", required_argument, NULL, 'c'},
        {"red", required_argument, NULL, 'r'},    {"kl", required_argument, NULL, 'k'},
        {"rmse", required_argument, NULL, 'R'},   {"mre", required_argument, NULL, 'e'},
        {"quiet", no_argument, NULL, 'q'},        {NULL, 0, NULL, 0},
    };
    struct sg_compare_opts opts;
    sg_compare_opts_init(&opts);
    const char *out_dir = NULL, *model_path = NULL;
    bool quiet = false;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":g:t:m:o:q", longopts, NULL)) != -1) {
        double *th = NULL, lo = 0, hi = INFINITY;
        switch (c) {
        case 'g':
            opts.golden_dir = optarg;
            break;
        case 't':
            opts.target_dir = optarg;
            break;
        case 'm':
            opts.map_path = optarg;
            break;
        case 'M':
            model_path = optarg;
            break;
        case 'o':
            out_dir = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case 'c':
            th = &opts.thresholds.cosine, lo = -1, hi = 1;
            break;
        case 'r':
            th = &opts.thresholds.red;
            break;
        case 'k':
            th = &opts.thresholds.kl;
            break;
        case 'R':
            th = &opts.thresholds.rmse;
            break;
        case 'e':
            th = &opts.thresholds.mre;
            break;
        case ':':
            return cli_usage(&sg_cmd_compare, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage(&sg_cmd_compare, "unknown option '%s'", argv[optind - 1]);
        }
        if (th && !parse_threshold(optarg, lo, hi, th))
            return cli_usage(&sg_cmd_compare, "bad threshold '%s' for %s", optarg,
                             argv[optind - 1]);
    }
    if (optind < argc)
        return cli_usage(&sg_cmd_compare,
                         "unexpected argument '%s': the end-to-end form (surgeon compare "
                         "MODEL.onnx --target ...) is not available yet; compare dump folders "
                         "with -g and -t",
                         argv[optind]);
    if (!opts.golden_dir || !opts.target_dir)
        return cli_usage(&sg_cmd_compare, "missing %s",
                         !opts.golden_dir ? "-g GOLDEN_DIR" : "-t TARGET_DIR");
    if (!out_dir)
        return cli_usage(&sg_cmd_compare, "missing -o OUT");

    struct sg_diag diag = {0};
    sg_model *model = NULL;
    if (model_path) {
        if (sg_model_load(model_path, NULL, &model, &diag))
            return cli_fail(&diag);
        opts.model = model;
        opts.model_label = model_path;
    }
    struct progress prog = {.on = !quiet && isatty(STDERR_FILENO)};
    opts.progress.fn = show_progress;
    opts.progress.ctx = &prog;
    sg_compare_result *r = NULL;
    int rc = SG_EXIT_OK;
    char *csv = NULL;
    if (sg_compare_run(&opts, &r, &diag)) {
        rc = cli_fail(&diag);
        goto out;
    }
    if (sg_compare_write_reports(r, out_dir, time(NULL), &csv, &diag)) {
        rc = cli_fail(&diag);
        goto out;
    }
    if (!quiet)
        print_result(r, csv, out_dir);
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].unreadable)
            cli_error("%s", r->rows[i].reason);
    const struct sg_compare_analysis *an = &r->analysis;
    if (an->n_unreadable)
        rc = SG_EXIT_FAIL;
    else if (an->verdict == SG_VERDICT_FAIL)
        rc = SG_EXIT_THRESHOLDS;
    else if (an->verdict == SG_VERDICT_UNKNOWN) {
        if (an->outputs_known && an->n_outputs)
            cli_error("%zu of the %zu network outputs could not be compared", an->n_outputs_missing,
                      an->n_outputs);
        else
            cli_error("no tensor of %s could be compared with %s", opts.target_dir,
                      opts.golden_dir);
        rc = SG_EXIT_FAIL;
    }
out:
    sg_free(csv);
    sg_compare_result_free(r);
    sg_model_free(model);
    return rc;
}
