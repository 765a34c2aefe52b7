/*
 * cmd_keep_dtype.c - `surgeon keep-dtype`: write or check ATC's keep_dtype,
 * customize_dtypes and op_precision_mode files, optionally against a model.
 */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_precision.h"

#include <getopt.h>
#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_keep_dtype = {
    "keep-dtype",
    "write or check ATC's keep_dtype, customize_dtypes and op_precision_mode files",
    "usage: surgeon keep-dtype -o FILE [--format keep|customize|precision-mode]\n"
    "                          [--ops TYPES] [--nodes NAMES] [--add ENTRY]...\n"
    "                          [--input-dtypes D,...] [--output-dtypes D,...]\n"
    "                          [--mode MODE] [--model M.onnx]\n"
    "       surgeon keep-dtype --check FILE [--format ...] [--model M.onnx]\n\n"
    "Write the per-operator precision files ATC reads:\n"
    "  keep            --keep_dtype: ops that keep the model's dtype\n"
    "                  (Exp_12 / OpType::LayerNorm), the default\n"
    "  customize       --customize_dtypes: the dtypes of an op's inputs and outputs\n"
    "                  (Exp_12::InputDtype:float32,OutputDtype:float32)\n"
    "  precision-mode  --op_precision_mode: an op's implementation mode, ini\n"
    "                  ([ByOpType] Exp=high_precision / [ByNodeName] ...)\n\n"
    "  -o, --output FILE     the file to write (atomically: temp file + rename)\n"
    "  --format F            keep (default), customize or precision-mode (ATC's names\n"
    "                        keep_dtype, customize_dtypes, op_precision_mode work too)\n"
    "  --ops TYPES           op types, comma-separated (repeatable). ONNX types that ATC\n"
    "                        renames are written under ATC's name (Softmax -> SoftmaxV2,\n"
    "                        LayerNormalization -> LayerNorm, MatMul -> BatchMatMulV2,\n"
    "                        Gemm -> MatMulV2, Conv -> Conv2D)\n"
    "  --nodes NAMES         node names of the ONNX model, comma-separated (repeatable)\n"
    "  --add ENTRY           one entry in the file's own syntax, written as given\n"
    "                        (repeatable), e.g. --add OpType::Softmax\n"
    "  --input-dtypes D,...  customize: the input dtypes of each --ops/--nodes entry\n"
    "  --output-dtypes D,... customize: the output dtypes (float16, float32, bfloat16,\n"
    "                        double, int8, int16, int32, int64, uint8, ..., bool)\n"
    "  --mode MODE           precision-mode: the mode of each entry without its own;\n"
    "                        an entry may carry one: --ops Exp=high_precision.\n"
    "                        Modes: high_precision, high_performance, keep_fp16,\n"
    "                        support_out_of_bound_index, enable_float_32_execution,\n"
    "                        enable_hi_float_32_execution, super_performance\n"
    "  --model M.onnx        warn about entries that name no node (or no op type) of\n"
    "                        the model\n"
    "  --check FILE          read FILE, report malformed lines with line:column; the\n"
    "                        format comes from its lines unless --format is given\n",
    run,
};

static bool parse_format(const char *s, enum sg_prec_format *f)
{
    static const struct {
        const char *name;
        enum sg_prec_format f;
    } names[] = {
        {"keep", SG_PREC_KEEP_DTYPE},
        {"keep_dtype", SG_PREC_KEEP_DTYPE},
        {"customize", SG_PREC_CUSTOMIZE_DTYPES},
        {"customize_dtypes", SG_PREC_CUSTOMIZE_DTYPES},
        {"precision-mode", SG_PREC_OP_PRECISION_MODE},
        {"op_precision_mode", SG_PREC_OP_PRECISION_MODE},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].name, s) == 0) {
            *f = names[i].f;
            return true;
        }
    return false;
}

static bool parse_dtypes(const char *s, int32_t *out, uint32_t *n)
{
    *n = 0;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int32_t code = sg_prec_dtype_parse(p, len);
        if (code < 0 || *n == SG_PREC_MAX_DTYPES)
            return false;
        out[(*n)++] = code;
        if (!comma)
            return true;
        p = comma + 1;
    }
}

/* Notes that do not depend on a model: OpType entries under an ONNX name
 * that ATC does not use. */
static void warn_onnx_types(const char *label, const sg_prec_file *f)
{
    for (size_t i = 0; i < f->n_entries; i++) {
        const struct sg_prec_entry *e = &f->entries[i];
        const char *atc = e->target == SG_PREC_OPTYPE ? sg_atc_optype_for_onnx(e->name) : NULL;
        if (!atc)
            continue;
        if (e->line)
            cli_warn("%s:%u: ATC calls ONNX %s '%s': OpType::%s matches nothing there; write "
                     "OpType::%s, or name the nodes",
                     label, e->line, e->name, atc, e->name, atc);
        else
            cli_warn("ATC calls ONNX %s '%s': OpType::%s matches nothing there; write "
                     "OpType::%s, or name the nodes",
                     e->name, atc, e->name, atc);
    }
}

/* Warn (one line) about entries naming nothing in the model. 0 or an exit code. */
static int check_model(const char *model_path, const char *label, const sg_prec_file *f)
{
    struct sg_diag d = {0};
    sg_model *m;
    struct sg_load_opts lo = {.skip_external = true};
    if (sg_model_load(model_path, &lo, &m, &d))
        return cli_fail(&d);
    bool *un = sg_calloc(f->n_entries ? f->n_entries : 1, sizeof *un);
    if (!un) {
        sg_model_free(m);
        cli_error("out of memory");
        return SG_EXIT_FAIL;
    }
    size_t n = sg_prec_file_unmatched(f, m, un);
    if (n) {
        size_t cap = 256, len = 0;
        for (size_t i = 0; i < f->n_entries; i++)
            cap += strlen(f->entries[i].name) + 32;
        char *list = sg_malloc(cap);
        if (list) {
            list[0] = '\0';
            for (size_t i = 0; i < f->n_entries; i++) {
                if (!un[i])
                    continue;
                const struct sg_prec_entry *e = &f->entries[i];
                int w = snprintf(list + len, cap - len, "%s%s%s", len ? ", " : "",
                                 e->target == SG_PREC_OPTYPE ? "OpType::" : "", e->name);
                len += w > 0 ? (size_t)w : 0;
                if (e->line) {
                    w = snprintf(list + len, cap - len, " (line %u)", e->line);
                    len += w > 0 ? (size_t)w : 0;
                }
            }
            cli_warn("%s: %zu entr%s name%s nothing in %s: %s", label, n, n == 1 ? "y" : "ies",
                     n == 1 ? "s" : "", model_path, list);
            sg_free(list);
        }
    }
    sg_free(un);
    sg_model_free(m);
    return SG_EXIT_OK;
}

/* Add the --ops / --nodes entries. Returns -1 when done, else an exit code. */
static int add_named(sg_prec_file *f, enum sg_prec_target target, const struct cli_list *names,
                     const int32_t *in, uint32_t n_in, const int32_t *out, uint32_t n_out,
                     const char *mode)
{
    struct sg_diag d = {0};
    for (size_t i = 0; i < names->n; i++) {
        char *name = names->v[i];
        const char *m = mode;
        char *eq = f->format == SG_PREC_OP_PRECISION_MODE ? strrchr(name, '=') : NULL;
        if (eq) {
            *eq = '\0';
            m = eq + 1;
        }
        const char *atc = target == SG_PREC_OPTYPE ? sg_atc_optype_for_onnx(name) : NULL;
        if (atc) {
            printf("OpType::%s: ATC's name for ONNX %s\n", atc, name);
            name = (char *)atc;
        }
        sg_status st;
        switch (f->format) {
        case SG_PREC_KEEP_DTYPE:
            st = sg_prec_file_add(f, target, name, &d);
            break;
        case SG_PREC_CUSTOMIZE_DTYPES:
            if (!n_in && !n_out)
                return cli_usage(&sg_cmd_keep_dtype,
                                 "customize entries need --input-dtypes and/or --output-dtypes");
            st = sg_prec_file_add_dtypes(f, target, name, in, n_in, out, n_out, &d);
            break;
        default:
            if (!m)
                return cli_usage(&sg_cmd_keep_dtype, "'%s' has no mode: give --mode or %s=MODE",
                                 name, name);
            st = sg_prec_file_add_mode(f, target, name, m, &d);
            break;
        }
        if (st == SG_EINVAL)
            return cli_usage(&sg_cmd_keep_dtype, "%s", d.msg);
        if (st)
            return cli_fail(&d);
    }
    return -1;
}

/* Merge raw --add entries, parsed in the file's own syntax. */
static int add_raw(sg_prec_file *f, const struct cli_list *raw)
{
    for (size_t i = 0; i < raw->n; i++) {
        struct sg_diag d = {0};
        sg_prec_file *one;
        char label[32];
        snprintf(label, sizeof label, "--add #%zu", i + 1);
        if (f->format == SG_PREC_OP_PRECISION_MODE)
            return cli_usage(&sg_cmd_keep_dtype,
                             "--add is for keep and customize files; for precision-mode use "
                             "--ops/--nodes NAME=MODE");
        if (strchr(raw->v[i], '\n'))
            return cli_usage(&sg_cmd_keep_dtype, "--add takes one entry, without line breaks");
        if (sg_prec_file_parse(f->format, raw->v[i], strlen(raw->v[i]), label, &one, &d)) {
            cli_error("%s", d.msg);
            return SG_EXIT_USAGE;
        }
        for (size_t k = 0; k < one->n_entries; k++) {
            const struct sg_prec_entry *e = &one->entries[k];
            sg_status st = f->format == SG_PREC_KEEP_DTYPE
                               ? sg_prec_file_add(f, e->target, e->name, &d)
                               : sg_prec_file_add_dtypes(f, e->target, e->name, e->in, e->n_in,
                                                         e->out, e->n_out, &d);
            if (st) {
                sg_prec_file_free(one);
                return st == SG_EINVAL ? cli_usage(&sg_cmd_keep_dtype, "%s", d.msg) : cli_fail(&d);
            }
        }
        sg_prec_file_free(one);
    }
    return -1;
}

static int run(int argc, char **argv)
{
    enum {
        OPT_FORMAT = 256,
        OPT_OPS,
        OPT_NODES,
        OPT_ADD,
        OPT_IN,
        OPT_OUT,
        OPT_MODE,
        OPT_MODEL,
        OPT_CHECK
    };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"ops", required_argument, NULL, OPT_OPS},
        {"nodes", required_argument, NULL, OPT_NODES},
        {"add", required_argument, NULL, OPT_ADD},
        {"input-dtypes", required_argument, NULL, OPT_IN},
        {"output-dtypes", required_argument, NULL, OPT_OUT},
        {"mode", required_argument, NULL, OPT_MODE},
        {"model", required_argument, NULL, OPT_MODEL},
        {"check", required_argument, NULL, OPT_CHECK},
        {NULL, 0, NULL, 0},
    };
    enum sg_prec_format format = SG_PREC_KEEP_DTYPE;
    bool format_given = false;
    const char *out = NULL, *model = NULL, *check = NULL, *mode = NULL;
    const char *in_arg = NULL, *out_arg = NULL;
    struct cli_list ops = {0}, nodes = {0}, raw = {0};
    int32_t *in = sg_malloc(SG_PREC_MAX_DTYPES * sizeof *in);
    int32_t *outd = sg_malloc(SG_PREC_MAX_DTYPES * sizeof *outd);
    uint32_t n_in = 0, n_out = 0;
    sg_prec_file *f = NULL;
    struct sg_diag d = {0};
    int rc = SG_EXIT_OK, c;
    if (!in || !outd) {
        cli_error("out of memory");
        rc = SG_EXIT_FAIL;
        goto out;
    }
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case OPT_FORMAT:
            if (!parse_format(optarg, &format)) {
                rc = cli_usage(&sg_cmd_keep_dtype,
                               "unknown --format '%s' (keep, customize or precision-mode)", optarg);
                goto out;
            }
            format_given = true;
            break;
        case OPT_OPS:
        case OPT_NODES:
            if (!cli_list_add_commas(c == OPT_OPS ? &ops : &nodes, optarg)) {
                rc =
                    cli_usage(&sg_cmd_keep_dtype, "bad list '%s' for %s", optarg, argv[optind - 1]);
                goto out;
            }
            break;
        case OPT_ADD:
            if (!cli_list_add(&raw, optarg)) {
                cli_error("out of memory");
                rc = SG_EXIT_FAIL;
                goto out;
            }
            break;
        case OPT_IN:
            in_arg = optarg;
            break;
        case OPT_OUT:
            out_arg = optarg;
            break;
        case OPT_MODE:
            mode = optarg;
            break;
        case OPT_MODEL:
            model = optarg;
            break;
        case OPT_CHECK:
            check = optarg;
            break;
        case ':':
            rc = cli_usage(&sg_cmd_keep_dtype, "option '%s' needs a value", argv[optind - 1]);
            goto out;
        default:
            rc = cli_unknown_option(&sg_cmd_keep_dtype, longopts, argv[optind - 1]);
            goto out;
        }
    }
    if (optind != argc) {
        rc = cli_usage(&sg_cmd_keep_dtype, "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    bool entries = ops.n || nodes.n || raw.n;
    if (check) {
        if (out || entries || in_arg || out_arg || mode) {
            rc = cli_usage(&sg_cmd_keep_dtype, "--check reads a file: it takes only --format and "
                                               "--model");
            goto out;
        }
        if (format_given ? sg_prec_file_read(format, check, &f, &d)
                         : sg_prec_file_read_detect(check, &f, &d)) {
            rc = cli_fail(&d);
            goto out;
        }
        warn_onnx_types(check, f);
        if (model && (rc = check_model(model, check, f)) != SG_EXIT_OK)
            goto out;
        printf("%s: valid %s file%s, %zu entr%s\n", check, sg_prec_format_name(f->format),
               format_given ? "" : " (format from its lines)", f->n_entries,
               f->n_entries == 1 ? "y" : "ies");
        goto out;
    }
    if (!out) {
        rc = cli_usage(&sg_cmd_keep_dtype, "missing -o FILE (or --check FILE)");
        goto out;
    }
    if (!entries) {
        rc = cli_usage(&sg_cmd_keep_dtype, "nothing to write: give --ops, --nodes or --add");
        goto out;
    }
    if ((in_arg || out_arg) && format != SG_PREC_CUSTOMIZE_DTYPES) {
        rc = cli_usage(&sg_cmd_keep_dtype, "--input-dtypes/--output-dtypes go with --format "
                                           "customize");
        goto out;
    }
    if (mode && format != SG_PREC_OP_PRECISION_MODE) {
        rc = cli_usage(&sg_cmd_keep_dtype, "--mode goes with --format precision-mode");
        goto out;
    }
    const char *bad_list = in_arg && !parse_dtypes(in_arg, in, &n_in)        ? in_arg
                           : out_arg && !parse_dtypes(out_arg, outd, &n_out) ? out_arg
                                                                             : NULL;
    if (bad_list) {
        rc = cli_usage(&sg_cmd_keep_dtype,
                       "bad dtype list '%s' (float16, float32, float, bfloat16, double, int8, "
                       "int16, int32, int64, uint8, uint16, uint32, uint64, bool)",
                       bad_list);
        goto out;
    }
    f = sg_prec_file_create(format);
    if (!f) {
        cli_error("out of memory");
        rc = SG_EXIT_FAIL;
        goto out;
    }
    if ((rc = add_named(f, SG_PREC_OPTYPE, &ops, in, n_in, outd, n_out, mode)) >= 0 ||
        (rc = add_named(f, SG_PREC_NODE, &nodes, in, n_in, outd, n_out, mode)) >= 0 ||
        (rc = add_raw(f, &raw)) >= 0)
        goto out;
    rc = SG_EXIT_OK;
    warn_onnx_types(out, f);
    if (model && (rc = check_model(model, out, f)) != SG_EXIT_OK)
        goto out;
    if (sg_prec_file_write(f, out, &d)) {
        rc = cli_fail(&d);
        goto out;
    }
    printf("wrote %s (%s, %zu entr%s)\n", out, sg_prec_format_name(format), f->n_entries,
           f->n_entries == 1 ? "y" : "ies");
out:
    sg_prec_file_free(f);
    cli_list_free(&ops);
    cli_list_free(&nodes);
    cli_list_free(&raw);
    sg_free(in);
    sg_free(outd);
    return rc;
}
