/*
 * cmd_split.c - `surgeon split`: cut a model into a front and a back half
 * whose run in sequence is the whole model's run.
 */
#include "cli.h"
#include "cutargs.h"
#include "sg_alloc.h"
#include "sg_cut.h"
#include "sg_io.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_split = {
    "split",
    "split a model in two halves that run in sequence",
    "usage: surgeon split MODEL (--at NODE | --index K | --tensors T1,..) -o FRONT.onnx "
    "BACK.onnx\n\n"
    "FRONT's outputs are every tensor the back half reads from it (plus the\n"
    "model's outputs computed before the cut); BACK's inputs are the same\n"
    "tensors with their types, plus the model inputs it reads. Values computed\n"
    "from constants alone are recomputed in BACK rather than passed. Running\n"
    "FRONT, then BACK on its outputs, gives the model's outputs.\n\n"
    "  --at NODE                 FRONT ends with NODE (topological order)\n"
    "  --index K                 FRONT is the first K nodes in topological order\n"
    "  --tensors T1,T2           FRONT computes these tensors and what they need\n"
    "  -o FRONT BACK             the two models to write\n" CLI_SAVE_USAGE,
    run,
};

static int run(int argc, char **argv)
{
    enum { O_AT = 0x201, O_INDEX, O_TENSORS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"at", required_argument, NULL, O_AT},
        {"index", required_argument, NULL, O_INDEX},
        {"tensors", required_argument, NULL, O_TENSORS},
        CLI_SAVE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct cli_save save = {0};
    struct cli_list tensors = {0};
    struct sg_split_spec spec = {0};
    int kinds = 0, rc = SG_EXIT_OK, c;
    const char *front_path = NULL, *back_path = NULL;
    opterr = 0;
    while (rc == SG_EXIT_OK && (c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
        int r = cli_save_option(&sg_cmd_split, &save, c, optarg);
        if (r >= 0) {
            rc = r;
            continue;
        }
        switch (c) {
        case 'o':
            front_path = optarg;
            if (optind < argc && argv[optind][0] != '-')
                back_path = argv[optind++];
            break;
        case O_AT:
            spec.kind = SG_SPLIT_AT_NODE;
            spec.at = optarg;
            kinds++;
            break;
        case O_INDEX: {
            char *e;
            unsigned long long k = strtoull(optarg, &e, 10);
            if (!*optarg || *e || optarg[0] == '-')
                rc = cli_usage(&sg_cmd_split, "bad --index '%s' (a node count)", optarg);
            spec.kind = SG_SPLIT_INDEX;
            spec.index = (size_t)k;
            kinds++;
            break;
        }
        case O_TENSORS:
            if (!cli_list_add_commas(&tensors, optarg))
                rc = cli_usage(&sg_cmd_split, "bad tensor list '%s'", optarg);
            spec.kind = SG_SPLIT_TENSORS;
            kinds++;
            break;
        case ':':
            rc = cli_usage(&sg_cmd_split, "option '%s' needs a value", argv[optind - 1]);
            break;
        default:
            rc = cli_usage(&sg_cmd_split, "unknown option '%s'", argv[optind - 1]);
            break;
        }
    }
    sg_model *front = NULL, *back = NULL;
    struct sg_split_report rep = {0};
    if (rc || (rc = cli_save_finish(&sg_cmd_split, &save)))
        goto done;
    if (kinds != 1) {
        rc = cli_usage(&sg_cmd_split, kinds ? "give one of --at, --index and --tensors"
                                            : "say where to cut: --at, --index or --tensors");
        goto done;
    }
    if (optind != argc - 1) {
        rc = cli_usage(&sg_cmd_split, optind >= argc ? "missing MODEL" : "too many arguments");
        goto done;
    }
    if (!front_path || !back_path) {
        rc = cli_usage(&sg_cmd_split, "missing -o FRONT.onnx BACK.onnx");
        goto done;
    }
    if (strcmp(front_path, back_path) == 0) {
        rc = cli_usage(&sg_cmd_split, "FRONT and BACK are the same file '%s'", front_path);
        goto done;
    }
    spec.tensors = (const char *const *)tensors.v;
    spec.n_tensors = tensors.n;
    struct sg_diag diag = {0};
    const char *model = argv[optind];
    if (sg_model_load(model, NULL, &front, &diag) || sg_model_load(model, NULL, &back, &diag)) {
        rc = cli_fail(&diag);
        goto done;
    }
    if (sg_model_split(front, back, &spec, &rep, &diag)) {
        rc = cli_fail(&diag);
        goto done;
    }
    if (sg_model_save(front, front_path, &save.opts, &diag) ||
        sg_model_save(back, back_path, &save.opts, &diag)) {
        rc = cli_fail(&diag);
        goto done;
    }
    printf("%s: front %zu nodes -> %s, back %zu nodes -> %s\n", model, rep.n_front, front_path,
           rep.n_back, back_path);
    printf("  crossing (%zu):", rep.n_crossing);
    for (size_t i = 0; i < rep.n_crossing; i++)
        printf("%s %s", i ? "," : "", rep.crossing[i]);
    putchar('\n');
done:
    sg_split_report_free(&rep);
    sg_model_free(front);
    sg_model_free(back);
    cli_list_free(&tensors);
    return rc;
}
