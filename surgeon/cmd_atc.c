/*
 * cmd_atc.c - `surgeon atc`: the command line of a compile job
 * (sg_verify_compile checks it, writes what ATC reads, then runs the exact
 * `atc` command or returns it for --print, or compiles with the mock
 * compiler when asked (--mock) or when atc is not installed); `--to-json`
 * runs `atc --mode=1` (sg_verify_map), or writes the map of a mock OM
 * itself. This file parses, prints and exits.
 */
#include "cli.h"
#include "progress.h"
#include "sg_atc.h"
#include "sg_mock.h"
#include "sg_verify.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_atc = {
    "atc",
    "compile a model with Huawei's ATC (or print the exact command line)",
    "usage: surgeon atc MODEL -o OUT_PREFIX --soc SOC [--input-shape SHAPES]\n"
    "                   [--precision MODE] [--keep-dtype FILE | --keep OPS [--keep-nodes NAMES]]\n"
    "                   [--customize-dtypes FILE] [--op-precision-mode FILE]\n"
    "                   [--fusion off|FILE] [--log LEVEL] [--print | --mock [--overflow M]]\n"
    "                   [-- ATC ARGS...]\n"
    "       surgeon atc --to-json OM -o JSON [--print] [-- ATC ARGS...]\n\n"
    "Build the ATC command line (--framework=5, --key=value words), check what it\n"
    "refers to, and run atc (found on PATH, else under $ASCEND_TOOLKIT_HOME) with\n"
    "its output streamed; the exit code is atc's. --print only prints the command.\n"
    "Without atc (or with --mock) the mock compiler emulates it on the CPU and\n"
    "writes OUT_PREFIX.om (a mock OM for 'surgeon run') and OUT_PREFIX.json.\n\n"
    "  -o, --output OUT_PREFIX   ATC's --output (it adds .om)\n"
    "  --soc SOC                 --soc_version, e.g. Ascend310P3\n"
    "  --input-shape SHAPES      --input_shape, name:d0,d1;name2:...  (a dim is N, -1\n"
    "                            or LO~HI); names must be inputs of MODEL\n"
    "  --precision MODE          --precision_mode (force_fp16, allow_fp32_to_fp16,\n"
    "                            must_keep_origin_dtype, force_fp32, cube_fp16in_fp32out,\n"
    "                            allow_mix_precision, ...) or --precision_mode_v2 (fp16,\n"
    "                            origin, mixed_float16); '--precision list' explains them\n"
    "  --keep-dtype FILE         --keep_dtype, checked first\n"
    "  --keep OPS                op types kept at their dtype: writes\n"
    "                            OUT_PREFIX.keep_dtype.cfg (ONNX types ATC renames are\n"
    "                            written under ATC's name: Softmax -> SoftmaxV2, ...)\n"
    "  --keep-nodes NAMES        node names kept at their dtype (same file)\n"
    "  --customize-dtypes FILE   --customize_dtypes, checked first\n"
    "  --op-precision-mode FILE  --op_precision_mode, checked first\n"
    "  --fusion off|FILE         off: write OUT_PREFIX.fusion_switch.cfg switching every\n"
    "                            graph and UB fusion pass off; FILE: --fusion_switch_file,\n"
    "                            checked first\n"
    "  --log LEVEL               --log: debug, info, warning, error or null\n"
    "  --print                   print the command instead of running it (files it needs\n"
    "                            are still written)\n"
    "  --mock                    compile with the mock compiler even when atc exists:\n"
    "                            fusion and precision emulated, OUT_PREFIX.om is an ONNX\n"
    "                            file that 'surgeon run' executes with float16 emulation\n"
    "  --overflow inf|saturation float16 overflow of the mock OM: inf (then NaN) or\n"
    "                            clamped to +-65504; default from --soc: Ascend910* inf,\n"
    "                            Ascend310* and others saturation\n"
    "  --to-json OM              run atc --mode=1 --om=OM --json=JSON: the compiled graph\n"
    "                            as JSON (what 'fusion-switch --from-map' reads); for a\n"
    "                            mock OM surgeon writes it itself\n"
    "  -- ATC ARGS               more atc arguments, passed as given\n",
    run,
};

static void print_list(const char *what, const char *const *ops)
{
    printf("%s", what);
    for (size_t i = 0; ops[i]; i++)
        printf("%s%s", i ? ", " : "", ops[i]);
    printf("\n");
}

static int list_modes(void)
{
    for (size_t i = 0; sg_precision_mode_at(i); i++) {
        const struct sg_precision_mode *m = sg_precision_mode_at(i);
        printf("  %-26s --%-18s %s\n", m->name, m->option, m->summary);
    }
    printf("\nThe mock compiler (--mock):\n");
    print_list("  cube ops: ", sg_mock_cube_ops);
    print_list("  kept in float32 by allow_mix_precision: ", sg_mock_mixed_fp32_ops);
    return SG_EXIT_OK;
}

/* What atc's exit status or the library's failure makes of the command. */
static int finish(sg_status st, const struct sg_verify_compile_result *res, const struct sg_diag *d)
{
    if (!st) {
        if (res->compiler == SG_VERIFY_COMPILER_PRINT)
            printf("%s\n", res->command);
        return SG_EXIT_OK;
    }
    cli_fail(d);
    return res->atc_exit ? res->atc_exit : SG_EXIT_FAIL;
}

static int compile(const struct sg_verify_compile_opts *a)
{
    struct sg_diag d = {0};
    if (sg_verify_compile_check(a, &d))
        return cli_usage(&sg_cmd_atc, "%s", d.msg);
    struct cli_reporter rep;
    cli_reporter_init(&rep, false);
    struct sg_verify_events ev = cli_reporter_events(&rep);
    struct sg_verify_compile_result res = {0};
    sg_status st = sg_verify_compile(a, &ev, &res, &d);
    int rc = finish(st, &res, &d);
    sg_verify_compile_clear(&res);
    return rc;
}

static int to_json(const char *om, const char *json, const char *const *extra, size_t n_extra,
                   bool print)
{
    struct cli_reporter rep;
    cli_reporter_init(&rep, false);
    struct sg_verify_events ev = cli_reporter_events(&rep);
    struct sg_verify_compile_result res = {0};
    struct sg_diag d = {0};
    sg_status st = sg_verify_map(om, json, extra, n_extra, print, &ev, &res, &d);
    if (st == SG_EINVAL)
        return cli_usage(&sg_cmd_atc, "%s", d.msg);
    int rc = finish(st, &res, &d);
    sg_verify_compile_clear(&res);
    return rc;
}

static int run(int argc, char **argv)
{
    enum {
        OPT_SOC = 256,
        OPT_SHAPE,
        OPT_PREC,
        OPT_KEEP_FILE,
        OPT_KEEP,
        OPT_KEEP_NODES,
        OPT_CUSTOM,
        OPT_OPMODE,
        OPT_FUSION,
        OPT_LOG,
        OPT_PRINT,
        OPT_JSON,
        OPT_MOCK,
        OPT_OVERFLOW
    };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"soc", required_argument, NULL, OPT_SOC},
        {"input-shape", required_argument, NULL, OPT_SHAPE},
        {"precision", required_argument, NULL, OPT_PREC},
        {"keep-dtype", required_argument, NULL, OPT_KEEP_FILE},
        {"keep", required_argument, NULL, OPT_KEEP},
        {"keep-nodes", required_argument, NULL, OPT_KEEP_NODES},
        {"customize-dtypes", required_argument, NULL, OPT_CUSTOM},
        {"op-precision-mode", required_argument, NULL, OPT_OPMODE},
        {"fusion", required_argument, NULL, OPT_FUSION},
        {"log", required_argument, NULL, OPT_LOG},
        {"print", no_argument, NULL, OPT_PRINT},
        {"to-json", required_argument, NULL, OPT_JSON},
        {"mock", no_argument, NULL, OPT_MOCK},
        {"overflow", required_argument, NULL, OPT_OVERFLOW},
        {NULL, 0, NULL, 0},
    };
    struct sg_verify_compile_opts a = {0};
    struct cli_list keep_ops = {0}, keep_nodes = {0};
    bool print = false, mock = false;
    const char *to_json_om = NULL;
    int rc = SG_EXIT_OK, c;
    /* Everything after "--" goes to atc as it is; getopt must not see it. */
    int n_ours = argc;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            n_ours = i;
            a.extra = (const char *const *)argv + i + 1;
            a.n_extra = (size_t)(argc - i - 1);
            break;
        }
    opterr = 0;
    while ((c = getopt_long(n_ours, argv, ":o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            a.out = optarg;
            break;
        case OPT_SOC:
            a.soc = optarg;
            break;
        case OPT_SHAPE:
            a.input_shape = optarg;
            break;
        case OPT_PREC:
            a.precision = optarg;
            break;
        case OPT_KEEP_FILE:
            a.keep_dtype = optarg;
            break;
        case OPT_KEEP:
        case OPT_KEEP_NODES:
            if (!cli_list_add_commas(c == OPT_KEEP ? &keep_ops : &keep_nodes, optarg)) {
                rc = cli_usage(&sg_cmd_atc, "bad list '%s' for %s", optarg, argv[optind - 1]);
                goto out;
            }
            break;
        case OPT_CUSTOM:
            a.customize_dtypes = optarg;
            break;
        case OPT_OPMODE:
            a.op_precision_mode = optarg;
            break;
        case OPT_FUSION:
            a.fusion = optarg;
            break;
        case OPT_LOG:
            a.log = optarg;
            break;
        case OPT_PRINT:
            print = true;
            break;
        case OPT_JSON:
            to_json_om = optarg;
            break;
        case OPT_MOCK:
            mock = true;
            break;
        case OPT_OVERFLOW:
            a.overflow = optarg;
            break;
        case ':':
            rc = cli_usage(&sg_cmd_atc, "option '%s' needs a value", argv[optind - 1]);
            goto out;
        default:
            rc = cli_usage(&sg_cmd_atc, "unknown option '%s'", argv[optind - 1]);
            goto out;
        }
    }
    if (a.precision && strcmp(a.precision, "list") == 0) {
        rc = list_modes();
        goto out;
    }
    if (to_json_om) {
        if (optind != n_ours) {
            rc = cli_usage(&sg_cmd_atc, "--to-json takes no MODEL ('%s')", argv[optind]);
            goto out;
        }
        if (a.soc || a.input_shape || a.precision || a.keep_dtype || keep_ops.n || keep_nodes.n ||
            a.customize_dtypes || a.op_precision_mode || a.fusion || a.log || mock || a.overflow) {
            rc = cli_usage(&sg_cmd_atc, "--to-json takes only -o JSON, --print and -- ATC ARGS");
            goto out;
        }
        if (!a.out) {
            rc = cli_usage(&sg_cmd_atc, "missing -o JSON");
            goto out;
        }
        rc = to_json(to_json_om, a.out, a.extra, a.n_extra, print);
        goto out;
    }
    if (optind >= n_ours) {
        rc = cli_usage(&sg_cmd_atc, "missing MODEL");
        goto out;
    }
    if (optind + 1 != n_ours) {
        rc = cli_usage(&sg_cmd_atc, "one MODEL only; '%s' is extra (atc arguments go after --)",
                       argv[optind + 1]);
        goto out;
    }
    a.model = argv[optind];
    if (!a.out || !a.soc) {
        rc = cli_usage(&sg_cmd_atc, !a.out ? "missing -o OUT_PREFIX" : "missing --soc SOC");
        goto out;
    }
    if (print && mock) {
        rc = cli_usage(&sg_cmd_atc, "--print shows the real atc command; --mock runs the mock "
                                    "compiler: give one of them");
        goto out;
    }
    a.compiler = print  ? SG_VERIFY_COMPILER_PRINT
                 : mock ? SG_VERIFY_COMPILER_MOCK
                        : SG_VERIFY_COMPILER_AUTO;
    a.keep_ops = (const char *const *)keep_ops.v;
    a.n_keep_ops = keep_ops.n;
    a.keep_nodes = (const char *const *)keep_nodes.v;
    a.n_keep_nodes = keep_nodes.n;
    rc = compile(&a);
out:
    cli_list_free(&keep_ops);
    cli_list_free(&keep_nodes);
    return rc;
}
