/*
 * cmd_convert.c - `surgeon convert`: load and save a model, choosing where
 * its tensors live (inline or external data).
 */
#include "cli.h"
#include "sg_io.h"

#include <getopt.h>
#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_convert = {
    "convert",
    "re-save a model, moving tensors to or from external data",
    "usage: surgeon convert IN -o OUT [--external-data FILE | --inline]\n"
    "                        [--size-threshold BYTES] [--in-place]\n\n"
    "Load IN and save it as OUT. By default tensors stay where they are:\n"
    "external tensors keep pointing at their original file when OUT is in the\n"
    "same folder and are copied to OUT.data otherwise; a model that would pass\n"
    "protobuf's 2 GB limit has its large tensors moved to OUT.data.\n\n"
    "  -o, --output OUT          the model to write (atomically: temp file + rename)\n"
    "  --external-data FILE      put every tensor of at least the threshold in FILE,\n"
    "                            a file name beside OUT\n"
    "  --inline                  put every tensor inside OUT (fails past 2 GB)\n"
    "  --size-threshold BYTES    smallest tensor moved to external data (default 1024;\n"
    "                            K, M, G suffixes allowed)\n"
    "  --in-place                allow OUT to be IN\n",
    run,
};

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"external-data", required_argument, NULL, 'e'},
        {"inline", no_argument, NULL, 'i'},       {"size-threshold", required_argument, NULL, 't'},
        {"in-place", no_argument, NULL, 'p'},     {NULL, 0, NULL, 0},
    };
    struct sg_save_opts opts = {0};
    const char *out = NULL;
    bool inline_all = false;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'e':
            opts.ext_mode = SG_EXT_FILE;
            opts.external_file = optarg;
            break;
        case 'i':
            inline_all = true;
            break;
        case 't': {
            unsigned long long v;
            if (!cli_parse_size(optarg, &v) || v == 0)
                return cli_usage(&sg_cmd_convert, "bad --size-threshold '%s'", optarg);
            opts.size_threshold = (size_t)v;
            break;
        }
        case 'p':
            opts.overwrite_input = true;
            break;
        case ':':
            return cli_usage(&sg_cmd_convert, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_unknown_option(&sg_cmd_convert, longopts, argv[optind - 1]);
        }
    }
    if (inline_all && opts.external_file)
        return cli_usage(&sg_cmd_convert, "--inline and --external-data exclude each other");
    if (inline_all)
        opts.ext_mode = SG_EXT_INLINE;
    if (optind != argc - 1)
        return cli_usage(&sg_cmd_convert, optind >= argc ? "missing IN" : "too many arguments");
    if (!out)
        return cli_usage(&sg_cmd_convert, "missing -o OUT");
    if (opts.external_file &&
        (strchr(opts.external_file, '/') || !*opts.external_file ||
         strcmp(opts.external_file, ".") == 0 || strcmp(opts.external_file, "..") == 0))
        return cli_usage(&sg_cmd_convert, "--external-data takes a file name beside OUT, not '%s'",
                         opts.external_file);

    struct sg_diag diag = {0};
    sg_model *m = NULL;
    if (sg_model_load(argv[optind], NULL, &m, &diag))
        return cli_fail(&diag);
    int rc = SG_EXIT_OK;
    if (sg_model_save(m, out, &opts, &diag))
        rc = cli_fail(&diag);
    sg_model_free(m);
    return rc;
}
