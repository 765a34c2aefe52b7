/*
 * cmd_concat.c - `surgeon concat`: join two models, the second reading the
 * first's outputs (onnx.compose.merge_models, msit's concatenate).
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

const struct sg_command sg_cmd_concat = {
    "concat",
    "join two models: the second reads the first's outputs",
    "usage: surgeon concat A.onnx B.onnx --io-map \"a_out:b_in,...\" [--prefix-a P]\n"
    "                      [--prefix-b P] -o OUT.onnx\n\n"
    "B's nodes follow A's; each B input named in --io-map reads the A output\n"
    "it is paired with. The inputs are A's, then B's unmapped ones; the\n"
    "outputs A's unmapped ones, then B's. IR versions must be equal and a\n"
    "domain imported by both at the same version; opset imports, metadata,\n"
    "functions and external data are kept. A name both models define is an\n"
    "error listing every such name, unless the prefixes make them differ.\n\n"
    "  --io-map A_OUT:B_IN,...   pairs of an output of A and an input of B\n"
    "  --prefix-a P, --prefix-b P  prefix every tensor and node name of A / B\n"
    "  -o, --output OUT          the model to write\n" CLI_SAVE_USAGE,
    run,
};

static int run(int argc, char **argv)
{
    enum { O_MAP = 0x201, O_PA, O_PB };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"io-map", required_argument, NULL, O_MAP},
        {"prefix-a", required_argument, NULL, O_PA},
        {"prefix-b", required_argument, NULL, O_PB},
        CLI_SAVE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct cli_save save = {0};
    struct cli_list pairs = {0};
    struct sg_concat_spec spec = {0};
    const char *out = NULL;
    int rc = SG_EXIT_OK, c;
    opterr = 0;
    while (rc == SG_EXIT_OK && (c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
        int r = cli_save_option(&sg_cmd_concat, &save, c, optarg);
        if (r >= 0) {
            rc = r;
            continue;
        }
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case O_MAP:
            if (!cli_list_add_commas(&pairs, optarg))
                rc = cli_usage(&sg_cmd_concat, "bad --io-map '%s'", optarg);
            break;
        case O_PA:
            spec.prefix_a = optarg;
            break;
        case O_PB:
            spec.prefix_b = optarg;
            break;
        case ':':
            rc = cli_usage(&sg_cmd_concat, "option '%s' needs a value", argv[optind - 1]);
            break;
        default:
            rc = cli_usage(&sg_cmd_concat, "unknown option '%s'", argv[optind - 1]);
            break;
        }
    }
    sg_model *a = NULL, *b = NULL;
    const char **map = NULL;
    struct sg_concat_report rep = {0};
    if (rc || (rc = cli_save_finish(&sg_cmd_concat, &save)))
        goto done;
    if (argc - optind != 2) {
        rc = cli_usage(&sg_cmd_concat,
                       argc - optind < 2 ? "missing A.onnx B.onnx" : "too many arguments");
        goto done;
    }
    if (!out) {
        rc = cli_usage(&sg_cmd_concat, "missing -o OUT");
        goto done;
    }
    if (!pairs.n) {
        rc = cli_usage(&sg_cmd_concat, "missing --io-map A_OUT:B_IN,...");
        goto done;
    }
    map = sg_calloc(2 * pairs.n + 1, sizeof *map);
    if (!map) {
        cli_error("out of memory");
        rc = SG_EXIT_FAIL;
        goto done;
    }
    for (size_t i = 0; i < pairs.n; i++) {
        /* a name may hold ':' (onnx::Mul_5): the pair splits at the last one
         * that leaves two non-empty names */
        char *colon = strrchr(pairs.v[i], ':');
        while (colon && colon > pairs.v[i] && colon[-1] == ':')
            colon = NULL;
        if (!colon || colon == pairs.v[i] || !colon[1]) {
            rc = cli_usage(&sg_cmd_concat, "bad --io-map pair '%s' (A_OUT:B_IN)", pairs.v[i]);
            goto done;
        }
        *colon = '\0';
        map[2 * i] = pairs.v[i];
        map[2 * i + 1] = colon + 1;
    }
    spec.io_map = map;
    spec.n_io_map = pairs.n;
    struct sg_diag diag = {0};
    if (sg_model_load(argv[optind], NULL, &a, &diag) ||
        sg_model_load(argv[optind + 1], NULL, &b, &diag)) {
        rc = cli_fail(&diag);
        goto done;
    }
    if (sg_model_concat(a, b, &spec, &rep, &diag)) {
        rc = cli_fail(&diag);
        for (size_t i = 0; i < rep.n_collisions; i++)
            fprintf(stderr, "  collision: %s\n", rep.collisions[i]);
        goto done;
    }
    b = NULL; /* a owns it now */
    if (sg_model_save(a, out, &save.opts, &diag)) {
        rc = cli_fail(&diag);
        goto done;
    }
    printf("%s + %s: %u nodes -> %s\n", argv[optind], argv[optind + 1], a->graph->n_nodes, out);
done:
    sg_concat_report_free(&rep);
    sg_free(map);
    sg_model_free(a);
    sg_model_free(b);
    cli_list_free(&pairs);
    return rc;
}
