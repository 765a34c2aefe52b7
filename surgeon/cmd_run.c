/*
 * cmd_run.c - `surgeon run`: run a model on the reference runtime and dump
 * its outputs (or every tensor) in the msit naming, with manifest.json.
 *
 * A mock OM (from `surgeon atc --mock`, sg_mockom.h) runs as its compiler
 * decided: float16 emulation per node, its overflow mode, dumps named as
 * device dumps converted to npy.
 *
 * Everything is written into a temporary folder beside DIR and renamed to
 * DIR at the end, so a failed run leaves nothing behind; a DIR holding
 * nothing but an earlier run's files (sg_outdir.h) is replaced, any other
 * non-empty DIR is refused.
 */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_dump.h"
#include "sg_io.h"
#include "sg_mockom.h"
#include "sg_outdir.h"
#include "sg_runtime.h"
#include "sg_verify.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int run(int argc, char **argv);
int sg__run_case(int argc, char **argv, const struct sg_command *cmd);

const struct sg_command sg_cmd_run = {
    "run",
    "run a model on the CPU reference runtime and dump its tensors",
    "usage: surgeon run MODEL [-i FILE | -i NAME=FILE ...] [--input-shape SHAPES]\n"
    "                   [--random SEED [--range LO,HI]] -o DIR [--dump all|outputs]\n"
    "                   [--threads N] [--max-loop-iterations N]\n"
    "       surgeon run MODEL --check\n"
    "       surgeon run --case CASE_DIR\n\n"
    "Run MODEL in float32 (the golden reference) and write the results to DIR:\n"
    "<node>.<output>.<timestamp_us>.npy files in the msit naming (mapping.csv\n"
    "for names too long for a file), inputs/<input>.npy with the inputs used,\n"
    "and manifest.json listing every tensor in execution order. DIR may be absent,\n"
    "empty or an earlier run's folder holding nothing else (it is replaced).\n"
    "A mock OM (surgeon atc --mock) runs with float16 emulation as compiled (each\n"
    "op in its compute dtype, overflow to inf or saturation) and its dumps are\n"
    "named as device dumps: <OpType>.<OpName>.<task>.<stream>.<timestamp>.output.<i>.npy;\n"
    "a fused op dumps only its final output, as on the device.\n\n"
    "  -i, --input FILE|NAME=FILE  an input as .npy, .pb (TensorProto) or .bin\n"
    "                        (raw data of the model's dtype and shape; a float16\n"
    "                        file for a float32 input is accepted by its size).\n"
    "                        Without NAME, files fill the inputs in model order.\n"
    "  --input-shape SHAPES  \"x:1,3,224,224;y:4,77\": shapes for .bin and random\n"
    "                        inputs, needed when the model's shape is symbolic\n"
    "  --random SEED         fill every input not given with -i with uniform\n"
    "                        random values in [0,1) (like msit), reproducible per\n"
    "                        SEED; integer inputs get floor(value) (so 0 unless\n"
    "                        --range is given), bool inputs 0 or 1\n"
    "  --range LO,HI         the interval for --random (default 0,1)\n"
    "  -o, --output DIR      where to write (replaced if it holds an earlier run)\n"
    "  --dump all|outputs    every node output of the main graph, or only the\n"
    "                        graph outputs (default)\n"
    "  --threads N           BLAS threads (default: OpenBLAS's choice)\n"
    "  --case CASE_DIR       run an ONNX backend-test folder (model.onnx and\n"
    "                        test_data_set_N/) and check its outputs with the\n"
    "                        backend rule (rtol 1e-3, atol 1e-7): exit 0 pass,\n"
    "                        3 mismatch; a folder with index.json (extract --all)\n"
    "                        runs every case it lists\n"
    "  --max-loop-iterations N  iterations one Loop node may run before the run\n"
    "                        fails (default 10000000; 0: no limit)\n"
    "  --check               list every node without a kernel or without an input\n"
    "                        its kernel requires, and exit (0: none)\n\n"
    "Bad input (unknown name, missing input, wrong dtype, shape or size, a shape\n"
    "a node cannot take) is an error naming the input or node and both shapes.\n",
    run,
};

struct missing_ctx {
    size_t n;
};

static void print_missing(const sg_node *n, const char *reason, void *ctx)
{
    (void)n;
    ((struct missing_ctx *)ctx)->n++;
    printf("%s\n", reason);
}

static int check_only(sg_model *m)
{
    struct missing_ctx mc = {0};
    size_t n = sg_rt_check(m, print_missing, &mc);
    size_t total = sg_graph_count_nodes(m->graph, true);
    if (n == 0) {
        printf("every node has a kernel and the inputs it requires (%zu nodes)\n", total);
        return SG_EXIT_OK;
    }
    printf("%zu of %zu nodes have no kernel or lack a required input\n", n, total);
    return SG_EXIT_FAIL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool wants_case(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--case") == 0 || strncmp(argv[i], "--case=", 7) == 0)
            return true;
    return false;
}

static int run(int argc, char **argv)
{
    if (wants_case(argc, argv))
        return sg__run_case(argc, argv, &sg_cmd_run);
    static const struct option longopts[] = {
        {"input", required_argument, NULL, 'i'},
        {"input-shape", required_argument, NULL, 's'},
        {"random", required_argument, NULL, 'r'},
        {"range", required_argument, NULL, 'R'},
        {"output", required_argument, NULL, 'o'},
        {"dump", required_argument, NULL, 'd'},
        {"threads", required_argument, NULL, 't'},
        {"max-loop-iterations", required_argument, NULL, 'L'},
        {"check", no_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    struct sg_verify_inputs in;
    sg_verify_inputs_init(&in);
    const char *out = NULL;
    bool check = false;
    int threads = 0;
    uint64_t max_loop = 0;
    enum sg_dump_mode mode = SG_DUMP_OUTPUTS;
    int c, rc = SG_EXIT_FAIL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":i:o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (!sg_verify_inputs_add_file(&in, optarg)) {
                cli_error("out of memory");
                goto usage_done;
            }
            break;
        case 's':
            if (!sg_verify_inputs_add_shapes(&in, optarg)) {
                rc = cli_usage(&sg_cmd_run, "bad --input-shape '%s' (want %s)", optarg,
                               SG_VERIFY_SHAPE_SYNTAX);
                goto usage_done;
            }
            break;
        case 'r':
            if (!sg_verify_inputs_set_seed(&in, optarg)) {
                rc = cli_usage(&sg_cmd_run, "bad --random seed '%s'", optarg);
                goto usage_done;
            }
            break;
        case 'R':
            if (!sg_verify_inputs_set_range(&in, optarg)) {
                rc = cli_usage(&sg_cmd_run,
                               "bad --range '%s' (want LO,HI: finite numbers, LO < HI)", optarg);
                goto usage_done;
            }
            break;
        case 'o':
            out = optarg;
            break;
        case 'd':
            if (strcmp(optarg, "all") == 0)
                mode = SG_DUMP_ALL;
            else if (strcmp(optarg, "outputs") == 0)
                mode = SG_DUMP_OUTPUTS;
            else {
                rc = cli_usage(&sg_cmd_run, "--dump takes all or outputs, not '%s'", optarg);
                goto usage_done;
            }
            break;
        case 't': {
            char *e;
            long v = strtol(optarg, &e, 10);
            if (!*optarg || *e || v < 1 || v > 1024) {
                rc = cli_usage(&sg_cmd_run, "bad --threads '%s'", optarg);
                goto usage_done;
            }
            threads = (int)v;
            break;
        }
        case 'L':
            if (!cli_parse_loop_limit(optarg, &max_loop)) {
                rc = cli_usage(&sg_cmd_run, "bad --max-loop-iterations '%s' (want N, 0: no limit)",
                               optarg);
                goto usage_done;
            }
            break;
        case 'c':
            check = true;
            break;
        case ':':
            rc = cli_usage(&sg_cmd_run, "option '%s' needs a value", argv[optind - 1]);
            goto usage_done;
        default:
            rc = cli_unknown_option(&sg_cmd_run, longopts, argv[optind - 1]);
            goto usage_done;
        }
    }
    if (optind != argc - 1) {
        rc = cli_usage(&sg_cmd_run, optind >= argc ? "missing MODEL" : "too many arguments");
        goto usage_done;
    }
    if (in.have_range && !in.random) {
        rc = cli_usage(&sg_cmd_run, "--range needs --random");
        goto usage_done;
    }
    if (!check && !out) {
        rc = cli_usage(&sg_cmd_run, "missing -o DIR");
        goto usage_done;
    }
    const char *model_path = argv[optind];

    struct sg_diag d = {0};
    sg_model *m = NULL;
    if (sg_model_load(model_path, NULL, &m, &d)) {
        rc = cli_fail(&d);
        goto usage_done;
    }
    if (check) {
        rc = check_only(m);
        sg_model_free(m);
        goto usage_done;
    }

    sg_rt *rt = NULL;
    sg_dump *dump = NULL;
    struct sg_outdir od = {0};
    struct sg_verify_values bound = {0};
    /* Results go to a folder beside DIR that replaces it at the end. */
    if (sg_outdir_begin(&od, out, "run", &d))
        goto fail;
    if (sg_dump_create(od.tmp, mode, &dump, &d))
        goto fail;
    struct sg_rt_opts opts = {0};
    opts.threads = threads;
    opts.max_loop_iterations = max_loop;
    sg_dump_rt_opts(dump, &opts);
    if (sg_mockom_is(m)) {
        if (sg_rt_opts_mock(m, &opts, &d)) {
            sg_diag_prefix(&d, "%s", model_path);
            goto fail;
        }
        sg_dump_set_device_names(dump, true);
        const char *prec = sg_model_metadata(m, SG_MOCKOM_META_PRECISION);
        const char *soc = sg_model_metadata(m, SG_MOCKOM_META_SOC);
        fprintf(stderr,
                "surgeon: %s is a mock OM (%s, %s): float16 emulation, overflow %s; dumps named "
                "as device dumps\n",
                model_path, soc ? soc : "?", prec ? prec : "?",
                sg_model_metadata(m, SG_MOCKOM_META_OVERFLOW));
    }
    if (sg_rt_create(m, &opts, &rt, &d))
        goto fail;

    /* Bind the inputs: named ones first, then positional ones in order. */
    if (sg_verify_inputs_load(&in, rt, &bound, &d))
        goto fail;
    for (uint32_t r = 0; r < bound.n; r++) {
        const char *name = bound.names[r];
        if (sg_rt_set_input(rt, name, bound.values[r], &d) ||
            sg_dump_input(dump, name, bound.values[r], &d))
            goto fail;
    }

    double t0 = now_ms();
    /* The time covers the dumps: files still being written count. */
    if (sg_rt_run(rt, &d) || sg_dump_flush(dump, &d))
        goto fail;
    double t1 = now_ms();
    if (sg_dump_finish(dump, rt, &d))
        goto fail;
    struct sg_dump_nonfinite nf;
    char nf_text[1024];
    sg_dump_nonfinite(dump, &nf);
    if (*sg_verify_nonfinite_text(&nf, mode == SG_DUMP_ALL, nf_text, sizeof nf_text))
        cli_warn("%s", nf_text);
    size_t n_dumped = sg_dump_count(dump);
    sg_dump_free(dump); /* its writer thread is done: nothing more goes into the folder */
    dump = NULL;
    if (sg_outdir_commit(&od, &d))
        goto fail;
    printf("ran %zu nodes in %.1f ms; %zu tensor%s written to %s\n",
           sg_graph_count_nodes(m->graph, false), t1 - t0, n_dumped, n_dumped == 1 ? "" : "s", out);
    for (uint32_t i = 0; i < sg_rt_n_outputs(rt); i++) {
        char buf[512];
        printf("  output '%s' %s\n", sg_rt_output_info(rt, i)->name,
               sg_rt_value_format(sg_rt_output(rt, i), buf, sizeof buf));
    }
    rc = SG_EXIT_OK;
    goto done;
fail:
    cli_fail(&d);
    /* The dump's writer thread stops first: a file it was still writing
     * when the run failed would otherwise appear after the removal, and
     * leave the temporary folder behind. */
    sg_dump_free(dump);
    dump = NULL;
    sg_outdir_abort(&od);
done:
    sg_verify_values_clear(&bound);
    sg_rt_free(rt);
    sg_dump_free(dump);
    sg_model_free(m);
usage_done:
    sg_verify_inputs_free(&in);
    return rc;
}
