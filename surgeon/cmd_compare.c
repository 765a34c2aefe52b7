/*
 * cmd_compare.c - `surgeon compare`: compare a target run's dumps with a
 * golden run's, layer by layer, and say which operator breaks the model;
 * or, given a MODEL, make both runs first (sg_verify_compare_model). This
 * file parses, prints and exits; the work is the library's.
 */
#include "cli.h"
#include "progress.h"
#include "sg_alloc.h"
#include "sg_compare.h"
#include "sg_io.h"
#include "sg_verify.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_compare = {
    "compare",
    "compare a target run with a golden run layer by layer, find the first failing operator",
    "usage: surgeon compare -g GOLDEN_DIR -t TARGET_DIR [-m MAP.json] [--model MODEL.onnx]\n"
    "                       -o OUT [THRESHOLDS] [-q]\n"
    "       surgeon compare MODEL.onnx --target mock|atc|OM_FILE -o OUT [--soc SOC]\n"
    "                       [--precision MODE] [--fusion off|FILE]\n"
    "                       [--keep-dtype FILE | --keep OPS [--keep-nodes NAMES]]\n"
    "                       [--overflow inf|saturation]\n"
    "                       [-i FILE|NAME=FILE ... | --random SEED [--range LO,HI]]\n"
    "                       [--input-shape SHAPES] [-t DEVICE_DUMPS] [-m MAP.json]\n"
    "                       [--single-op [--nodes N1,..] [--device-cmd \"COMMAND\"\n"
    "                       [--timeout SECONDS]]]\n"
    "                       [THRESHOLDS] [--threads N] [--max-loop-iterations N] [-q]\n\n"
    "Compare every operator output dumped by a target run (TARGET_DIR) with the\n"
    "golden run's (GOLDEN_DIR), as msit does: dumps named <node>.<i>.<timestamp>.npy\n"
    "(both sides) or, for the target, <OpType>.<OpName>.<task>.<stream>.<timestamp>\n"
    ".output.<i>.npy. Folders are searched recursively. With --model, a golden\n"
    "dump may also be named by tensor (ONNX Runtime with every output exposed):\n"
    "<tensor>.npy files ('/' as '_') or one .npz keyed by tensor name.\n\n"
    "  -g, --golden DIR     the reference dumps (fp32 ONNX run), or GOLDEN.npz\n"
    "  -t, --target DIR     the dumps to check\n"
    "  -m, --map FILE       `atc --mode=1` JSON of the compiled model: matches compiled\n"
    "                       ops to ONNX nodes; a fused op is compared with the last\n"
    "                       node it covers\n"
    "      --model FILE     the original ONNX model: rows in topological order, network\n"
    "                       outputs known, inputs of the failing operator checked\n"
    "  -o, --output DIR     where to write result_<timestamp>.csv (msit's columns),\n"
    "                       result.json and report.html\n\n"
    "End to end, given MODEL.onnx: run it in float32 with every node dumped (the\n"
    "golden run, OUT/golden; its inputs saved in OUT/inputs), compile it, run the\n"
    "compiled model with every op dumped (OUT/target), compare, and write the\n"
    "reports into OUT. OUT is replaced only when all of that worked; an OUT that\n"
    "holds anything but an earlier end-to-end compare's files is refused.\n"
    "  --target mock        compile with surgeon's mock compiler (OUT/<model>.om and\n"
    "                       .json) and run the mock OM with float16 emulation\n"
    "  --target atc         compile with the real atc and map it with atc --mode=1; the\n"
    "                       OM needs an Ascend device, so give its dumps with -t DIR\n"
    "  --target OM_FILE     a compiled model: a mock OM runs here; a real OM's device\n"
    "                       dumps must be given with -t DIR (its map with -m, else\n"
    "                       atc --mode=1 makes it)\n"
    "  --soc SOC, --precision MODE, --fusion off|FILE, --keep-dtype FILE, --keep OPS,\n"
    "  --keep-nodes NAMES, --overflow inf|saturation\n"
    "                       compile options, exactly as 'surgeon atc' takes them\n"
    "                       (--target mock|atc; --soc is required there)\n"
    "  -i, --input FILE|NAME=FILE, --input-shape SHAPES, --random SEED, --range LO,HI\n"
    "                       the inputs, exactly as 'surgeon run' takes them\n"
    "  --single-op          then try every operator behind a row in error alone on the\n"
    "                       target, fed its own golden inputs (its single-op case in\n"
    "                       OUT/single_op/NODE/case): one that fails alone is wrong, one\n"
    "                       that passes only inherits error; OUT/single_op.csv, .json\n"
    "  --nodes N1,..        those operators instead of the ones in error\n"
    "  --device-cmd \"COMMAND\"  with --target atc: runs each case's OM ({om}, {model},\n"
    "                       {inputs}, {out} as for 'surgeon bisect'); --timeout SECONDS\n"
    "  --threads N          BLAS threads of both runs\n"
    "  --max-loop-iterations N  iterations one Loop node may run in either run\n"
    "                       (default 10000000; 0: no limit)\n\n"
    "Thresholds (both forms):\n"
    "      --cosine T       precision error when cosine similarity < T (default 0.99)\n"
    "      --red T          ... relative Euclidean distance > T (default 0.05)\n"
    "      --kl T           ... KL divergence > T (default 0.005)\n"
    "      --rmse T         ... root mean square error > T (default 1.0)\n"
    "      --mre T          ... mean relative error > T (default 1.0)\n"
    "                       (each of these: 'off' turns the test off)\n"
    "      --rmse-relative T  instead of --rmse: RMSE / std(golden) > T, for large\n"
    "                       values (float16's spacing alone passes RMSE 1 above 2048)\n"
    "      --mre-floor F    relative errors over max(|golden|, F * max |golden|), for\n"
    "                       tensors crossing zero (e.g. F 0.01; default off)\n"
    "  -q, --quiet          print nothing but errors\n\n"
    "A tensor is also in error when the target has NaN/Inf where the golden run is\n"
    "finite (overflow). Exit status: 0 the network outputs pass, 3 they fail the\n"
    "thresholds, 4 the golden run's own outputs hold NaN/Inf (nothing is proved),\n"
    "1 bad input (missing or empty folders, unreadable dumps, a map that does not\n"
    "fit the model, outputs that could not be compared, a model that does not run\n"
    "or compile), 2 bad usage.\n",
    run,
};

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
        char crossed[512];
        if (*sg_metrics_crossed_text(&row->m, &r->thresholds, row->crossed, crossed,
                                     sizeof crossed))
            printf("  crossed: %s%s\n", crossed,
                   row->within_rounding ? " (within the target's rounding)" : "");
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

/*
 * Print the result (unless quiet) and the files that could not be read;
 * return the exit code: 1 when dumps were unreadable or the network
 * outputs could not be compared (said on stderr), 3 when they fail, 0 when
 * they pass.
 */
static int conclude(const sg_compare_result *r, const char *csv, const char *out_dir, bool quiet)
{
    if (!quiet)
        print_result(r, csv, out_dir);
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].unreadable)
            cli_error("%s", r->rows[i].reason);
    const struct sg_compare_analysis *an = &r->analysis;
    if (an->n_unreadable)
        return SG_EXIT_FAIL;
    if (an->verdict == SG_VERDICT_FAIL)
        return SG_EXIT_THRESHOLDS;
    if (an->verdict == SG_VERDICT_GOLDEN_NOT_FINITE) {
        cli_error("the golden run is not finite: %zu %s hold NaN/Inf in the reference run itself, "
                  "so nothing was proved (see the advice)",
                  an->n_outputs_golden_nonfinite,
                  an->outputs_known ? "network output(s)" : "compared tensor(s)");
        return SG_EXIT_GOLDEN;
    }
    if (an->verdict == SG_VERDICT_UNKNOWN) {
        if (an->outputs_known && an->n_outputs)
            cli_error("%zu of the %zu network outputs could not be compared", an->n_outputs_missing,
                      an->n_outputs);
        else
            cli_error("no tensor of %s could be compared with %s", r->target_dir, r->golden_dir);
        return SG_EXIT_FAIL;
    }
    return SG_EXIT_OK;
}

/* The end-to-end form: options checked (usage errors, exit 2), then the
 * library's workflow (bad input, exit 1), then the verdict. */
static int compare_model(const struct sg_verify_compare_opts *o, bool quiet)
{
    struct sg_diag d = {0};
    enum sg_verify_target kind = sg_verify_target_of(o->target);
    if (sg_verify_compare_check(o, kind, &d))
        return cli_usage(&sg_cmd_compare, "%s", d.msg);
    if (kind == SG_VERIFY_TARGET_FILE) {
        if (sg_verify_target_classify(o->target, &kind, &d))
            return cli_fail(&d);
        if (sg_verify_compare_check(o, kind, &d))
            return cli_usage(&sg_cmd_compare, "%s", d.msg);
    }
    struct cli_reporter rep;
    cli_reporter_init(&rep, quiet);
    struct sg_verify_events ev = cli_reporter_events(&rep);
    sg_verify_compare_result *res = NULL;
    if (sg_verify_compare_model(o, &ev, &res, &d)) {
        cli_progress_show(&rep.prog, NULL);
        cli_fail(&d);
        cli_error("nothing was written to %s", o->out);
        return SG_EXIT_FAIL;
    }
    int rc = conclude(res->compare, res->csv, res->out, quiet);
    const struct sg_verify_single_result *so = &res->single;
    if (!quiet && o->single_op) {
        printf("single-op: %zu operator%s tried alone: %zu fail%s on %s own golden inputs, %zu "
               "pass%s (inherited error)",
               so->n, so->n == 1 ? "" : "s", so->n_fail, so->n_fail == 1 ? "s" : "",
               so->n_fail == 1 ? "its" : "their", so->n_pass, so->n_pass == 1 ? "es" : "");
        if (so->n_error)
            printf(", %zu could not be run", so->n_error);
        printf("; %s/single_op.csv, %s/single_op.json\n", res->out, res->out);
        for (size_t i = 0; i < so->n; i++)
            if (so->rows[i].made && so->rows[i].fails)
                printf("  fails alone: %s (%s)\n", so->rows[i].node, so->rows[i].op_type);
    }
    if (!quiet && rc != SG_EXIT_FAIL)
        printf("repeat: %s\n", res->repeat);
    sg_verify_compare_free(res);
    return rc;
}

/* The dump-folder form. */
static int compare_dumps(const struct sg_compare_opts *o, const char *model_path,
                         const char *out_dir, bool quiet)
{
    struct sg_compare_opts opts = *o;
    struct sg_diag diag = {0};
    sg_model *model = NULL;
    if (model_path) {
        if (sg_model_load(model_path, NULL, &model, &diag))
            return cli_fail(&diag);
        opts.model = model;
        opts.model_label = model_path;
    }
    struct cli_reporter rep;
    cli_reporter_init(&rep, quiet);
    opts.progress = cli_reporter_events(&rep).compare;
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
    rc = conclude(r, csv, out_dir, quiet);
out:
    sg_free(csv);
    sg_compare_result_free(r);
    sg_model_free(model);
    return rc;
}

static int run(int argc, char **argv)
{
    enum {
        OPT_MODEL = 256,
        OPT_TARGET,
        OPT_THRESHOLD,
        OPT_SOC,
        OPT_PREC,
        OPT_FUSION,
        OPT_KEEP_FILE,
        OPT_KEEP,
        OPT_KEEP_NODES,
        OPT_OVERFLOW,
        OPT_SHAPE,
        OPT_RANDOM,
        OPT_RANGE,
        OPT_THREADS,
        OPT_MAX_LOOP,
        OPT_SINGLE,
        OPT_NODES,
        OPT_DEVICE,
        OPT_TIMEOUT,
    };
    static const struct option longopts[] = {
        {"golden", required_argument, NULL, 'g'},
        {"target", required_argument, NULL, OPT_TARGET},
        {"map", required_argument, NULL, 'm'},
        {"model", required_argument, NULL, OPT_MODEL},
        {"output", required_argument, NULL, 'o'},
        CLI_THRESHOLD_OPTIONS(OPT_THRESHOLD),
        {"quiet", no_argument, NULL, 'q'},
        {"soc", required_argument, NULL, OPT_SOC},
        {"precision", required_argument, NULL, OPT_PREC},
        {"fusion", required_argument, NULL, OPT_FUSION},
        {"keep-dtype", required_argument, NULL, OPT_KEEP_FILE},
        {"keep", required_argument, NULL, OPT_KEEP},
        {"keep-nodes", required_argument, NULL, OPT_KEEP_NODES},
        {"overflow", required_argument, NULL, OPT_OVERFLOW},
        {"input", required_argument, NULL, 'i'},
        {"input-shape", required_argument, NULL, OPT_SHAPE},
        {"random", required_argument, NULL, OPT_RANDOM},
        {"range", required_argument, NULL, OPT_RANGE},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"max-loop-iterations", required_argument, NULL, OPT_MAX_LOOP},
        {"single-op", no_argument, NULL, OPT_SINGLE},
        {"nodes", required_argument, NULL, OPT_NODES},
        {"device-cmd", required_argument, NULL, OPT_DEVICE},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {NULL, 0, NULL, 0},
    };
    struct sg_compare_opts opts;
    sg_compare_opts_init(&opts);
    struct sg_verify_compare_opts e = {0};
    struct sg_verify_inputs inputs;
    struct cli_list keep_ops = {0}, keep_nodes = {0}, single_nodes = {0};
    sg_verify_inputs_init(&inputs);
    bool quiet = false;
    const char *model_path = NULL, *target_long = NULL;
    char e2e_only[32] = ""; /* an option only the end-to-end form takes */
    int rc = SG_EXIT_OK, c, li = -1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":g:t:m:o:qi:", longopts, &li)) != -1) {
        double *th = NULL, lo = 0, hi = INFINITY;
        /* The option as the user spelled it, for messages (argv[optind - 1]
         * is its value when the value was a separate word). */
        char opt[32];
        if (li >= 0)
            snprintf(opt, sizeof opt, "--%s", longopts[li].name);
        else
            snprintf(opt, sizeof opt, "-%c", c);
        li = -1;
        switch (c) {
        case 'g':
            opts.golden_dir = optarg;
            break;
        case 't':
            opts.target_dir = optarg;
            break;
        case OPT_TARGET:
            target_long = optarg;
            break;
        case 'm':
            opts.map_path = optarg;
            break;
        case OPT_MODEL:
            model_path = optarg;
            break;
        case 'o':
            e.out = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case OPT_THRESHOLD:
            th = cli_threshold_field(&opts.thresholds, opt + 2, &lo, &hi);
            break;
        case OPT_SOC:
            e.soc = optarg, memcpy(e2e_only, opt, sizeof opt);
            break;
        case OPT_PREC:
            e.precision = optarg, memcpy(e2e_only, opt, sizeof opt);
            break;
        case OPT_FUSION:
            e.fusion = optarg, memcpy(e2e_only, opt, sizeof opt);
            break;
        case OPT_KEEP_FILE:
            e.keep_dtype = optarg, memcpy(e2e_only, opt, sizeof opt);
            break;
        case OPT_KEEP:
        case OPT_KEEP_NODES:
            memcpy(e2e_only, opt, sizeof opt);
            if (!cli_list_add_commas(c == OPT_KEEP ? &keep_ops : &keep_nodes, optarg)) {
                rc = cli_usage(&sg_cmd_compare, "bad list '%s' for %s", optarg, opt);
                goto out;
            }
            break;
        case OPT_OVERFLOW:
            e.overflow = optarg, memcpy(e2e_only, opt, sizeof opt);
            break;
        case 'i':
            memcpy(e2e_only, opt, sizeof opt);
            if (!sg_verify_inputs_add_file(&inputs, optarg)) {
                cli_error("out of memory");
                rc = SG_EXIT_FAIL;
                goto out;
            }
            break;
        case OPT_SHAPE:
            memcpy(e2e_only, opt, sizeof opt);
            if (!sg_verify_inputs_add_shapes(&inputs, optarg)) {
                rc = cli_usage(&sg_cmd_compare, "bad --input-shape '%s' (want %s)", optarg,
                               SG_VERIFY_SHAPE_SYNTAX);
                goto out;
            }
            break;
        case OPT_RANDOM:
            memcpy(e2e_only, opt, sizeof opt);
            if (!sg_verify_inputs_set_seed(&inputs, optarg)) {
                rc = cli_usage(&sg_cmd_compare, "bad --random seed '%s'", optarg);
                goto out;
            }
            break;
        case OPT_RANGE:
            memcpy(e2e_only, opt, sizeof opt);
            if (!sg_verify_inputs_set_range(&inputs, optarg)) {
                rc = cli_usage(&sg_cmd_compare,
                               "bad --range '%s' (want LO,HI: finite numbers, LO < HI)", optarg);
                goto out;
            }
            break;
        case OPT_THREADS: {
            memcpy(e2e_only, opt, sizeof opt);
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 1024) {
                rc = cli_usage(&sg_cmd_compare, "bad --threads '%s'", optarg);
                goto out;
            }
            e.threads = (int)v;
            break;
        }
        case OPT_MAX_LOOP:
            memcpy(e2e_only, opt, sizeof opt);
            if (!cli_parse_loop_limit(optarg, &e.max_loop_iterations)) {
                rc = cli_usage(&sg_cmd_compare,
                               "bad --max-loop-iterations '%s' (want N, 0: no limit)", optarg);
                goto out;
            }
            break;
        case OPT_SINGLE:
            memcpy(e2e_only, opt, sizeof opt);
            e.single_op = true;
            break;
        case OPT_NODES:
            memcpy(e2e_only, opt, sizeof opt);
            if (!cli_list_add_commas(&single_nodes, optarg)) {
                rc = cli_usage(&sg_cmd_compare, "bad list '%s' for %s", optarg, opt);
                goto out;
            }
            break;
        case OPT_DEVICE:
            memcpy(e2e_only, opt, sizeof opt);
            e.device_command = optarg;
            break;
        case OPT_TIMEOUT: {
            memcpy(e2e_only, opt, sizeof opt);
            char *end;
            double v = strtod(optarg, &end);
            if (!*optarg || *end || !isfinite(v) || v <= 0) {
                rc = cli_usage(&sg_cmd_compare, "bad --timeout '%s' (want seconds > 0)", optarg);
                goto out;
            }
            e.timeout = v;
            break;
        }
        case ':':
            rc = cli_usage(&sg_cmd_compare, "option '%s' needs a value", argv[optind - 1]);
            goto out;
        default:
            rc = cli_unknown_option(&sg_cmd_compare, longopts, argv[optind - 1]);
            goto out;
        }
        if (th && !cli_parse_threshold(optarg, lo, hi, th)) {
            rc = cli_usage(&sg_cmd_compare, "bad threshold '%s' for %s", optarg, opt);
            goto out;
        }
    }

    if (optind < argc) {
        /* The end-to-end form: MODEL --target ... */
        if (optind + 1 < argc) {
            rc = cli_usage(&sg_cmd_compare, "one MODEL only; '%s' is extra", argv[optind + 1]);
            goto out;
        }
        if (opts.golden_dir || model_path) {
            rc = cli_usage(&sg_cmd_compare,
                           "%s belongs to the dump-folder form; given MODEL, the golden run is "
                           "made from it",
                           opts.golden_dir ? "-g" : "--model");
            goto out;
        }
        e.model = argv[optind];
        e.target = target_long;
        e.dumps = opts.target_dir;
        e.map = opts.map_path;
        e.thresholds = opts.thresholds;
        e.inputs = &inputs;
        e.keep_ops = (const char *const *)keep_ops.v;
        e.n_keep_ops = keep_ops.n;
        e.keep_nodes = (const char *const *)keep_nodes.v;
        e.n_keep_nodes = keep_nodes.n;
        e.single_nodes = (const char *const *)single_nodes.v;
        e.n_single_nodes = single_nodes.n;
        rc = compare_model(&e, quiet);
        goto out;
    }

    /* The dump-folder form: --target DIR is -t DIR. */
    if (target_long) {
        if (opts.target_dir) {
            rc = cli_usage(&sg_cmd_compare, "-t and --target both give the target dumps");
            goto out;
        }
        opts.target_dir = target_long;
    }
    if (e2e_only[0]) {
        rc = cli_usage(&sg_cmd_compare,
                       "%s belongs to the end-to-end form (surgeon compare MODEL.onnx --target "
                       "...)",
                       e2e_only);
        goto out;
    }
    if (!opts.golden_dir || !opts.target_dir) {
        rc = cli_usage(&sg_cmd_compare, "missing %s",
                       !opts.golden_dir ? "-g GOLDEN_DIR (or a MODEL to run)" : "-t TARGET_DIR");
        goto out;
    }
    if (!e.out) {
        rc = cli_usage(&sg_cmd_compare, "missing -o OUT");
        goto out;
    }
    rc = compare_dumps(&opts, model_path, e.out, quiet);
out:
    sg_verify_inputs_free(&inputs);
    cli_list_free(&keep_ops);
    cli_list_free(&keep_nodes);
    cli_list_free(&single_nodes);
    return rc;
}
