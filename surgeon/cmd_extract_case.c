/*
 * cmd_extract_case.c - `surgeon extract MODEL --node NAME | --nodes .. |
 * --all -o CASE_DIR`: single-op cases in the ONNX backend-test layout,
 * from a golden dump or from a golden run made here.
 */
#include "cli.h"
#include "cutargs.h"
#include "progress.h"
#include "sg_outdir.h"
#include "sg_verify.h"
#include "sg_alloc.h"
#include "sg_cut.h"
#include "sg_io.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sg__extract_cases(int argc, char **argv, const struct sg_command *cmd);

int sg__extract_cases(int argc, char **argv, const struct sg_command *cmd)
{
    enum { O_NODE = 0x301, O_NODES, O_ALL, O_GOLDEN, O_RANDOM, O_RANGE, O_SHAPE };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"node", required_argument, NULL, O_NODE},
        {"nodes", required_argument, NULL, O_NODES},
        {"all", no_argument, NULL, O_ALL},
        {"golden", required_argument, NULL, O_GOLDEN},
        {"input", required_argument, NULL, 'i'},
        {"random", required_argument, NULL, O_RANDOM},
        {"range", required_argument, NULL, O_RANGE},
        {"input-shape", required_argument, NULL, O_SHAPE},
        CLI_SAVE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct cli_save save = {0};
    struct cli_list nodes = {0};
    struct sg_verify_inputs in;
    sg_verify_inputs_init(&in);
    const char *out = NULL, *golden = NULL;
    bool all = false, single = false;
    int rc = SG_EXIT_OK, c;
    opterr = 0;
    while (rc == SG_EXIT_OK && (c = getopt_long(argc, argv, ":o:i:", longopts, NULL)) != -1) {
        int r = cli_save_option(cmd, &save, c, optarg);
        if (r >= 0) {
            rc = r;
            continue;
        }
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case O_NODE:
            single = true;
            if (!cli_list_add(&nodes, optarg))
                rc = cli_usage(cmd, "out of memory");
            break;
        case O_NODES:
            if (!cli_list_add_commas(&nodes, optarg))
                rc = cli_usage(cmd, "bad node list '%s'", optarg);
            break;
        case O_ALL:
            all = true;
            break;
        case O_GOLDEN:
            golden = optarg;
            break;
        case 'i':
            if (!sg_verify_inputs_add_file(&in, optarg))
                rc = cli_usage(cmd, "out of memory");
            break;
        case O_RANDOM:
            if (!sg_verify_inputs_set_seed(&in, optarg))
                rc = cli_usage(cmd, "bad --random '%s' (a seed: a decimal integer)", optarg);
            break;
        case O_RANGE:
            if (!sg_verify_inputs_set_range(&in, optarg))
                rc = cli_usage(cmd, "bad --range '%s' (LO,HI with LO < HI)", optarg);
            break;
        case O_SHAPE:
            if (!sg_verify_inputs_add_shapes(&in, optarg))
                rc = cli_usage(cmd, "bad --input-shape '%s' (as %s)", optarg,
                               SG_VERIFY_SHAPE_SYNTAX);
            break;
        case ':':
            rc = cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
            break;
        default:
            rc = cli_usage(cmd, "unknown option '%s' (with --node, --nodes or --all)",
                           argv[optind - 1]);
            break;
        }
    }
    sg_model *m = NULL;
    sg_dump_source *ds = NULL;
    sg_verify_tensors *gt = NULL;
    struct sg_verify_values bound = {0};
    struct sg_verify_cases_result res = {0};
    struct sg_diag d = {0};
    if (rc || (rc = cli_save_finish(cmd, &save)))
        goto done;
    if (optind != argc - 1) {
        rc = cli_usage(cmd, optind >= argc ? "missing MODEL" : "too many arguments");
        goto done;
    }
    if (!out) {
        rc = cli_usage(cmd, "missing -o CASE_DIR");
        goto done;
    }
    if ((single && (nodes.n != 1 || all)) || (all && nodes.n)) {
        rc = cli_usage(cmd, "give one of --node NAME, --nodes N1,N2 and --all");
        goto done;
    }
    if (golden && (in.n_files || in.random || in.n_shapes)) {
        rc = cli_usage(cmd, "--golden takes the tensors from the dump: -i, --random and "
                            "--input-shape are for a golden run made here");
        goto done;
    }
    if (sg_outdir_check(out, "extract", &d))
        goto fail;
    const char *model = argv[optind];
    if (sg_model_load(model, NULL, &m, &d))
        goto fail;
    struct sg_case_source src;
    if (golden) {
        if (sg_dump_source_open(golden, &ds, &d))
            goto fail;
        src = sg_dump_source_get(ds);
    } else {
        struct sg_verify_golden_opts go = {.inputs = &in, .label = model};
        if (sg_verify_golden(m, &go, &bound, &gt, &d))
            goto fail;
        src = sg_verify_tensors_source(gt);
    }
    struct sg_verify_cases_opts co = {.nodes = (const char *const *)nodes.v,
                                      .n_nodes = nodes.n,
                                      .all = all,
                                      .single = single,
                                      .src = &src,
                                      .save = &save.opts,
                                      .out = out};
    struct cli_reporter rep;
    cli_reporter_init(&rep, false);
    struct sg_verify_events ev = cli_reporter_events(&rep);
    if (sg_verify_cases_write(m, &co, &ev, &res, &d))
        goto fail;
    if (!single)
        printf("%zu case%s written to %s (index.json)%s\n", res.n - res.n_failed,
               res.n - res.n_failed == 1 ? "" : "s", out,
               res.n_failed ? ", some nodes failed (listed in index.json)" : "");
    rc = res.n_failed ? SG_EXIT_FAIL : SG_EXIT_OK;
    goto done;
fail:
    rc = cli_fail(&d);
done:
    sg_verify_cases_clear(&res);
    sg_verify_tensors_free(gt);
    sg_verify_values_clear(&bound);
    sg_dump_source_free(ds);
    sg_model_free(m);
    cli_list_free(&nodes);
    sg_verify_inputs_free(&in);
    return rc;
}
