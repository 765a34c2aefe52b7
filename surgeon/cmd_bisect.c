/*
 * cmd_bisect.c - `surgeon bisect`: find the earliest point in a model
 * where running the front on the target (the rest golden) breaks the
 * network outputs (sg_verify_bisect). This file parses, prints and exits.
 */
#include "cli.h"
#include "progress.h"
#include "sg_verify.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_bisect = {
    "bisect",
    "find the earliest node whose run on the target breaks the outputs",
    "usage: surgeon bisect MODEL --target mock|atc|cmd:\"COMMAND\" -o OUT\n"
    "                      [-i FILE|NAME=FILE ... | --random SEED [--range LO,HI]]\n"
    "                      [--input-shape SHAPES] [--soc SOC] [--precision MODE]\n"
    "                      [--fusion off|FILE] [--keep-dtype FILE | --keep OPS\n"
    "                      [--keep-nodes NAMES]] [--overflow inf|saturation]\n"
    "                      [--device-cmd \"COMMAND\"] [--timeout SECONDS]\n"
    "                      [--mode bisect|linear] [THRESHOLDS] [--threads N] [-q]\n\n"
    "Run MODEL in float32 (the golden run), then on the target: when its outputs\n"
    "fail, split MODEL after node K (topological order), run nodes 1..K on the\n"
    "target and the rest on the golden runtime, and halve the range until one\n"
    "node is left: the culprit. Costs one run of the full model plus one per step\n"
    "(at most ceil(log2 N) + 1 target runs for N nodes); --mode linear tries\n"
    "K = 1, 2, ... instead. Every step is printed and kept in OUT/step_*; OUT/case\n"
    "is the culprit's single-op case, OUT/bisect.json the record, with the\n"
    "commands that reproduce the result.\n\n"
    "  --target mock        compile each front with the mock compiler and run it\n"
    "                       with float16 emulation (--soc required)\n"
    "  --target atc         compile each front with the real atc; --device-cmd runs\n"
    "                       the OM: {om}, {inputs}, {out} as below\n"
    "  --target cmd:\"COMMAND\"  a shell command that runs the ONNX file {model} on the\n"
    "                       inputs {inputs}/<input>.npy and writes {out}/<output>.npy\n"
    "                       ('/' in names as '_'); exit 0 means it ran\n"
    "  --timeout SECONDS    a command running longer is killed, the step fails\n"
    "  --mode bisect|linear the search (default bisect)\n"
    "  -i, --input-shape, --random, --range   the inputs, as 'surgeon run' takes them\n"
    "  --soc, --precision, --fusion, --keep-dtype, --keep, --keep-nodes, --overflow\n"
    "                       compile options, as 'surgeon atc' takes them\n"
    "  --cosine, --red, --kl, --rmse, --mre, --rmse-relative, --mre-floor\n"
    "                       thresholds of a network output, as 'surgeon compare'\n"
    "  -q, --quiet          print only the result\n\n"
    "Exit status: 0 the full model passes on the target (nothing to find), 3 a\n"
    "culprit was found, 1 bad input or a step that failed (the steps before it stay\n"
    "in OUT), 2 bad usage.\n",
    run,
};

static void print_result(const sg_verify_bisect_result *r)
{
    if (!r->full_fails) {
        printf("the full model passes on the target: nothing to bisect (%zu target run)\n",
               r->target_runs);
        return;
    }
    printf("culprit: node %zu of %zu, '%s' (%s), after %zu target runs\n", r->culprit + 1,
           r->n_nodes, r->culprit_node, r->culprit_op, r->target_runs);
    printf("  nodes 1..%zu on the target pass, 1..%zu fail\n", r->culprit, r->culprit + 1);
    if (r->case_dir)
        printf("single-op case: %s\n", r->case_dir);
    for (size_t i = 0; i < r->n_reproduce; i++)
        printf("reproduce: %s\n", r->reproduce[i]);
}

static int run(int argc, char **argv)
{
    enum {
        O_TARGET = 256,
        O_SOC,
        O_PREC,
        O_FUSION,
        O_KEEP_FILE,
        O_KEEP,
        O_KEEP_NODES,
        O_OVERFLOW,
        O_SHAPE,
        O_RANDOM,
        O_RANGE,
        O_THREADS,
        O_MODE,
        O_TIMEOUT,
        O_DEVICE,
        O_THRESHOLD,
    };
    static const struct option longopts[] = {
        {"target", required_argument, NULL, O_TARGET},
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"soc", required_argument, NULL, O_SOC},
        {"precision", required_argument, NULL, O_PREC},
        {"fusion", required_argument, NULL, O_FUSION},
        {"keep-dtype", required_argument, NULL, O_KEEP_FILE},
        {"keep", required_argument, NULL, O_KEEP},
        {"keep-nodes", required_argument, NULL, O_KEEP_NODES},
        {"overflow", required_argument, NULL, O_OVERFLOW},
        {"input", required_argument, NULL, 'i'},
        {"input-shape", required_argument, NULL, O_SHAPE},
        {"random", required_argument, NULL, O_RANDOM},
        {"range", required_argument, NULL, O_RANGE},
        {"threads", required_argument, NULL, O_THREADS},
        {"mode", required_argument, NULL, O_MODE},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"device-cmd", required_argument, NULL, O_DEVICE},
        CLI_THRESHOLD_OPTIONS(O_THRESHOLD),
        {NULL, 0, NULL, 0},
    };
    const struct sg_command *cmd = &sg_cmd_bisect;
    struct sg_verify_bisect_opts o = {.thresholds = SG_THRESHOLDS_DEFAULT};
    struct sg_verify_inputs inputs;
    struct cli_list keep_ops = {0}, keep_nodes = {0};
    sg_verify_inputs_init(&inputs);
    const char *target = NULL;
    bool quiet = false;
    int rc = SG_EXIT_OK, c, li = -1;
    struct sg_diag d = {0};
    opterr = 0;
    while (rc == SG_EXIT_OK && (c = getopt_long(argc, argv, ":o:qi:", longopts, &li)) != -1) {
        double *th = NULL, lo = 0, hi = INFINITY;
        char opt[32];
        if (li >= 0)
            snprintf(opt, sizeof opt, "--%s", longopts[li].name);
        else
            snprintf(opt, sizeof opt, "-%c", c);
        li = -1;
        switch (c) {
        case O_TARGET:
            target = optarg;
            break;
        case 'o':
            o.out = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case O_SOC:
            o.target.soc = optarg;
            break;
        case O_PREC:
            o.target.precision = optarg;
            break;
        case O_FUSION:
            o.target.fusion = optarg;
            break;
        case O_KEEP_FILE:
            o.target.keep_dtype = optarg;
            break;
        case O_KEEP:
        case O_KEEP_NODES:
            if (!cli_list_add_commas(c == O_KEEP ? &keep_ops : &keep_nodes, optarg))
                rc = cli_usage(cmd, "bad list '%s' for %s", optarg, opt);
            break;
        case O_OVERFLOW:
            o.target.overflow = optarg;
            break;
        case O_DEVICE:
            o.target.device_command = optarg;
            break;
        case 'i':
            if (!sg_verify_inputs_add_file(&inputs, optarg))
                rc = cli_usage(cmd, "out of memory");
            break;
        case O_SHAPE:
            if (!sg_verify_inputs_add_shapes(&inputs, optarg))
                rc = cli_usage(cmd, "bad --input-shape '%s' (want %s)", optarg,
                               SG_VERIFY_SHAPE_SYNTAX);
            break;
        case O_RANDOM:
            if (!sg_verify_inputs_set_seed(&inputs, optarg))
                rc = cli_usage(cmd, "bad --random seed '%s'", optarg);
            break;
        case O_RANGE:
            if (!sg_verify_inputs_set_range(&inputs, optarg))
                rc = cli_usage(cmd, "bad --range '%s' (want LO,HI: finite numbers, LO < HI)",
                               optarg);
            break;
        case O_THREADS: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 1024)
                rc = cli_usage(cmd, "bad --threads '%s'", optarg);
            o.threads = o.target.threads = (int)v;
            break;
        }
        case O_MODE:
            if (strcmp(optarg, "bisect") == 0)
                o.mode = SG_VERIFY_BISECT_BINARY;
            else if (strcmp(optarg, "linear") == 0)
                o.mode = SG_VERIFY_BISECT_LINEAR;
            else
                rc = cli_usage(cmd, "--mode takes bisect or linear, not '%s'", optarg);
            break;
        case O_TIMEOUT: {
            char *end;
            double v = strtod(optarg, &end);
            if (!*optarg || *end || !isfinite(v) || v <= 0)
                rc = cli_usage(cmd, "bad --timeout '%s' (want seconds > 0)", optarg);
            o.target.timeout = v;
            break;
        }
        case O_THRESHOLD:
            th = cli_threshold_field(&o.thresholds, opt + 2, &lo, &hi);
            break;
        case ':':
            rc = cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
            break;
        default:
            rc = cli_unknown_option(cmd, longopts, argv[optind - 1]);
            break;
        }
        if (!rc && th && !cli_parse_threshold(optarg, lo, hi, th))
            rc = cli_usage(cmd, "bad threshold '%s' for %s", optarg, opt);
    }
    if (rc)
        goto out;
    if (optind != argc - 1) {
        rc = cli_usage(cmd, optind >= argc ? "missing MODEL" : "one MODEL only; '%s' is extra",
                       argv[optind + 1]);
        goto out;
    }
    o.model = argv[optind];
    o.inputs = &inputs;
    o.target.keep_ops = (const char *const *)keep_ops.v;
    o.target.n_keep_ops = keep_ops.n;
    o.target.keep_nodes = (const char *const *)keep_nodes.v;
    o.target.n_keep_nodes = keep_nodes.n;
    if (sg_verify_exec_parse(target, &o.target, &d) || sg_verify_bisect_check(&o, &d)) {
        rc = cli_usage(cmd, "%s", d.msg);
        goto out;
    }
    struct cli_reporter rep;
    cli_reporter_init(&rep, quiet);
    struct sg_verify_events ev = cli_reporter_events(&rep);
    sg_verify_bisect_result *res = NULL;
    if (sg_verify_bisect(&o, &ev, &res, &d)) {
        cli_progress_show(&rep.prog, NULL);
        rc = cli_fail(&d);
        goto out;
    }
    print_result(res);
    rc = res->full_fails ? SG_EXIT_THRESHOLDS : SG_EXIT_OK;
    sg_verify_bisect_free(res);
out:
    sg_verify_inputs_free(&inputs);
    cli_list_free(&keep_ops);
    cli_list_free(&keep_nodes);
    return rc;
}
