/*
 * cmd_extract.c - `surgeon extract`: cut a sub-model out of a model, by
 * tensor names or by start and end nodes, or write single-op test cases
 * (--node, --nodes, --all: cmd_extract_case.c).
 */
#include "cli.h"
#include "cutargs.h"
#include "sg_alloc.h"
#include "sg_cut.h"
#include "sg_io.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_extract = {
    "extract",
    "cut a sub-model out of a model, or one operator as a test case",
    "usage: surgeon extract MODEL -o OUT.onnx --inputs T1,.. --outputs T2,..\n"
    "       surgeon extract MODEL -o OUT.onnx --start-nodes N1,.. --end-nodes N2,..\n"
    "       surgeon extract MODEL (--node NAME | --nodes N1,.. | --all) -o CASE_DIR\n"
    "                       [--golden DUMP_DIR | -i FILE|NAME=FILE... | --random SEED]\n\n"
    "Keep exactly the nodes that compute the outputs from the inputs, with the\n"
    "initializers, Constant nodes, value_info, functions and opset imports they\n"
    "use and the model's metadata. A subgraph (If/Loop/Scan body) that reads an\n"
    "outer name pulls it in: its producers when the cut computes it, else it\n"
    "becomes an input. A needed tensor that is neither an input nor computable\n"
    "from constants is an error listing every such tensor.\n\n"
    "  --inputs T1,T2            tensors that become the inputs; NAME:DTYPE:D0,D1\n"
    "                            gives a type where the model has none (a dim is N\n"
    "                            or ?; items may also be separated by ';')\n"
    "  --outputs T1,T2           tensors that become the outputs (typed the same way)\n"
    "  --start-nodes N1,N2       nodes whose non-constant inputs become the inputs\n"
    "  --end-nodes N1,N2         nodes whose outputs become the outputs\n"
    "  -o, --output OUT          the model to write (atomically)\n"
    "  --in-memory               load the model to cut it (by default a model without\n"
    "                            subgraphs, functions or external data is cut from\n"
    "                            the file, in a fraction of its size in memory)\n"
    "  -v, --verbose             say on stderr which way the cut was made, and why\n" CLI_SAVE_USAGE
    "\nSingle-op cases (an ONNX backend-test folder per node):\n"
    "  --node NAME, --nodes N1,N2, --all\n"
    "  --golden DUMP_DIR         the tensors from a `surgeon run --dump all` folder\n"
    "  -i, --input, --random SEED, --range LO,HI, --input-shape\n"
    "                            otherwise a golden run on these inputs (as `run`)\n",
    run,
};

int sg__extract_cases(int argc, char **argv, const struct sg_command *cmd);

static bool wants_cases(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--node") == 0 || strncmp(argv[i], "--node=", 7) == 0 ||
            strcmp(argv[i], "--nodes") == 0 || strncmp(argv[i], "--nodes=", 8) == 0 ||
            strcmp(argv[i], "--all") == 0)
            return true;
    }
    return false;
}

static void print_list(const char *what, sg_value **v, uint32_t n)
{
    printf("  %s:", what);
    for (uint32_t i = 0; i < n; i++)
        printf("%s %s", i ? "," : "", v[i]->name);
    putchar('\n');
}

/* The typed items of d as dims declarations (pointing into d). */
static size_t dims_decls(const struct cli_decls *d, struct sg_cut_dims_decl *out)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].typed)
            out[n++] =
                (struct sg_cut_dims_decl){d->v[i].name, d->v[i].dtype, d->v[i].rank, d->v[i].dims};
    return n;
}

static void print_names(const char *what, char **v, size_t n)
{
    printf("  %s:", what);
    for (size_t i = 0; i < n; i++)
        printf("%s %s", i ? "," : "", v[i]);
    putchar('\n');
}

/* The cut straight from the file (sg_extract_file): 1 when it was made (or
 * failed for good, *rc says), 0 when the model needs loading. */
static int extract_streaming(const char *model, const char *out, struct sg_extract_spec *spec,
                             const struct cli_decls *ins, const struct cli_decls *outs,
                             bool verbose, int *rc)
{
    struct sg_cut_dims_decl *dd = sg_calloc(ins->n + outs->n + 1, sizeof *dd);
    if (!dd) {
        cli_error("out of memory");
        *rc = SG_EXIT_FAIL;
        return 1;
    }
    size_t n = dims_decls(ins, dd);
    n += dims_decls(outs, dd + n);
    struct sg_extract_report rep = {0};
    struct sg_diag diag = {0};
    sg_status st = sg_extract_file(model, out, spec, dd, n, &rep, &diag);
    sg_free(dd);
    if (st == SG_EUNSUPPORTED) {
        if (verbose)
            fprintf(stderr, "surgeon extract: loading the model: %s\n", diag.msg);
        sg_extract_report_free(&rep);
        return 0;
    }
    if (verbose && !st)
        fprintf(stderr, "surgeon extract: cut from the file, without loading the model\n");
    if (st) {
        *rc = cli_fail(&diag);
    } else {
        printf("%s: %zu nodes kept, %zu removed, %zu initializers -> %s\n", model, rep.n_kept,
               rep.n_removed, rep.n_inits, out);
        print_names("inputs", rep.input_names, rep.n_input_names);
        print_names("outputs", rep.output_names, rep.n_output_names);
        *rc = SG_EXIT_OK;
    }
    sg_extract_report_free(&rep);
    return 1;
}

static int run(int argc, char **argv)
{
    if (wants_cases(argc, argv))
        return sg__extract_cases(argc, argv, &sg_cmd_extract);
    enum { O_INPUTS = 0x201, O_OUTPUTS, O_START, O_END, O_IN_MEMORY };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"inputs", required_argument, NULL, O_INPUTS},
        {"outputs", required_argument, NULL, O_OUTPUTS},
        {"start-nodes", required_argument, NULL, O_START},
        {"end-nodes", required_argument, NULL, O_END},
        {"in-memory", no_argument, NULL, O_IN_MEMORY},
        {"verbose", no_argument, NULL, 'v'},
        CLI_SAVE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct cli_save save = {0};
    struct cli_decls ins = {0}, outs = {0};
    struct cli_list start = {0}, end = {0};
    const char *out = NULL;
    bool in_memory = false, save_given = false, verbose = false;
    int rc = SG_EXIT_OK, c;
    char err[256];
    opterr = 0;
    while (rc == SG_EXIT_OK && (c = getopt_long(argc, argv, ":o:v", longopts, NULL)) != -1) {
        int r = cli_save_option(&sg_cmd_extract, &save, c, optarg);
        if (r >= 0) {
            rc = r;
            save_given = true;
            continue;
        }
        switch (c) {
        case O_IN_MEMORY:
            in_memory = true;
            break;
        case 'v':
            verbose = true;
            break;
        case 'o':
            out = optarg;
            break;
        case O_INPUTS:
        case O_OUTPUTS:
            if (!cli_decls_add(c == O_INPUTS ? &ins : &outs, optarg, err, sizeof err))
                rc = cli_usage(&sg_cmd_extract, "%s: %s", argv[optind - 1], err);
            break;
        case O_START:
        case O_END:
            if (!cli_list_add_commas(c == O_START ? &start : &end, optarg))
                rc = cli_usage(&sg_cmd_extract, "bad node list '%s'", optarg);
            break;
        case ':':
            rc = cli_usage(&sg_cmd_extract, "option '%s' needs a value", argv[optind - 1]);
            break;
        default:
            rc = cli_usage(&sg_cmd_extract, "unknown option '%s'", argv[optind - 1]);
            break;
        }
    }
    sg_model *m = NULL;
    const char **in_names = NULL, **out_names = NULL;
    struct sg_cut_decl *decls_in = NULL, *decls_out = NULL, *decls = NULL;
    struct sg_extract_report rep = {0};
    if (rc)
        goto done;
    if ((rc = cli_save_finish(&sg_cmd_extract, &save)))
        goto done;
    if (optind != argc - 1) {
        rc = cli_usage(&sg_cmd_extract, optind >= argc ? "missing MODEL" : "too many arguments");
        goto done;
    }
    if (!out) {
        rc = cli_usage(&sg_cmd_extract, "missing -o OUT");
        goto done;
    }
    if (!outs.n && !end.n) {
        rc = cli_usage(&sg_cmd_extract, "say what to extract: --outputs or --end-nodes");
        goto done;
    }
    in_names = cli_decls_names(&ins);
    out_names = cli_decls_names(&outs);
    if (!in_names || !out_names) {
        cli_error("out of memory");
        rc = SG_EXIT_FAIL;
        goto done;
    }
    struct sg_extract_spec spec = {
        .inputs = in_names,
        .n_inputs = ins.n,
        .outputs = out_names,
        .n_outputs = outs.n,
        .start_nodes = (const char *const *)start.v,
        .n_start_nodes = start.n,
        .end_nodes = (const char *const *)end.v,
        .n_end_nodes = end.n,
    };
    /* Saving options need the saver; otherwise the file path is tried
     * first and answers for every model it covers. */
    if (!in_memory && !save_given &&
        extract_streaming(argv[optind], out, &spec, &ins, &outs, verbose, &rc))
        goto done;
    struct sg_diag diag = {0};
    if (sg_model_load(argv[optind], NULL, &m, &diag)) {
        rc = cli_fail(&diag);
        goto done;
    }
    size_t n_di = 0, n_do = 0;
    decls_in = cli_decls_types(&ins, m, &n_di);
    decls_out = cli_decls_types(&outs, m, &n_do);
    decls = sg_calloc(n_di + n_do + 1, sizeof *decls);
    if (!decls_in || !decls_out || !decls) {
        cli_error("out of memory");
        rc = SG_EXIT_FAIL;
        goto done;
    }
    memcpy(decls, decls_in, n_di * sizeof *decls);
    memcpy(decls + n_di, decls_out, n_do * sizeof *decls);
    spec.decls = decls;
    spec.n_decls = n_di + n_do;
    if (sg_model_extract(m, &spec, &rep, &diag)) {
        rc = cli_fail(&diag);
        cli_print_missing(&rep);
        goto done;
    }
    if (sg_model_save(m, out, &save.opts, &diag)) {
        rc = cli_fail(&diag);
        goto done;
    }
    printf("%s: %zu nodes kept, %zu removed, %zu initializers -> %s\n", argv[optind], rep.n_kept,
           rep.n_removed, rep.n_inits, out);
    print_list("inputs", m->graph->inputs, m->graph->n_inputs);
    print_list("outputs", m->graph->outputs, m->graph->n_outputs);
    for (size_t i = 0; i < rep.n_implicit_inputs; i++)
        printf("  note: '%s' is read by a subgraph and lies outside the cut: it became an input\n",
               rep.implicit_inputs[i]);
done:
    sg_extract_report_free(&rep);
    sg_free(in_names);
    sg_free(out_names);
    sg_free(decls_in);
    sg_free(decls_out);
    sg_free(decls);
    sg_model_free(m);
    cli_decls_free(&ins);
    cli_decls_free(&outs);
    cli_list_free(&start);
    cli_list_free(&end);
    return rc;
}
