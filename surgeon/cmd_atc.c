/*
 * cmd_atc.c - `surgeon atc`: check everything ATC will be given, write the
 * files it needs (keep_dtype, fusion switch), then print or run the exact
 * `atc` command line, or compile with the mock compiler (sg_mock.h) when
 * asked (--mock) or when atc is not installed; `--to-json` runs
 * `atc --mode=1`, or writes the map of a mock OM itself.
 *
 * Nothing is written until every input has been checked (and, for the
 * mock, the model compiled in memory), so a bad option, model or file
 * leaves no half-made job behind. Where the job goes is a backend: print
 * the command, run the real atc, or run the mock compiler.
 */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_fusion.h"
#include "sg_io.h"
#include "sg_mock.h"
#include "sg_mockom.h"
#include "sg_precision.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

enum backend { BACKEND_PRINT, BACKEND_ATC, BACKEND_MOCK };

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

static bool soc_valid(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* The folder part of a path exists (or there is none). */
static bool folder_exists(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return true;
    if (slash == path)
        return true;
    char *dir = sg_malloc((size_t)(slash - path) + 1);
    if (!dir)
        return false;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    struct stat sb;
    bool ok = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
    sg_free(dir);
    return ok;
}

static char *concat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = sg_malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

/* Warnings about a precision file ATC would take, against the model (the
 * mock compiler reports entries naming nothing itself: unmatched false). */
static void warn_prec(const char *label, const sg_prec_file *f, const sg_model *m, bool unmatched)
{
    for (size_t i = 0; i < f->n_entries; i++) {
        const struct sg_prec_entry *e = &f->entries[i];
        const char *atc = e->target == SG_PREC_OPTYPE ? sg_atc_optype_for_onnx(e->name) : NULL;
        if (atc)
            cli_warn("%s:%u: ATC calls ONNX %s '%s': OpType::%s matches nothing there", label,
                     e->line, e->name, atc, e->name);
    }
    if (!unmatched)
        return;
    bool *un = sg_calloc(f->n_entries ? f->n_entries : 1, sizeof *un);
    if (!un)
        return;
    if (sg_prec_file_unmatched(f, m, un)) {
        for (size_t i = 0; i < f->n_entries; i++) {
            if (!un[i])
                continue;
            const struct sg_prec_entry *e = &f->entries[i];
            if (e->line)
                cli_warn("%s:%u: %s%s names no %s of the model", label, e->line,
                         e->target == SG_PREC_OPTYPE ? "OpType::" : "", e->name,
                         e->target == SG_PREC_OPTYPE ? "op type" : "node");
            else
                cli_warn("%s: %s%s names no %s of the model", label,
                         e->target == SG_PREC_OPTYPE ? "OpType::" : "", e->name,
                         e->target == SG_PREC_OPTYPE ? "op type" : "node");
        }
    }
    sg_free(un);
}

/* Read and check a precision file given by the user; *out keeps it. */
static int check_prec_file(enum sg_prec_format format, const char *path, const sg_model *m,
                           bool unmatched, sg_prec_file **out)
{
    struct sg_diag d = {0};
    if (sg_prec_file_read(format, path, out, &d))
        return cli_fail(&d);
    warn_prec(path, *out, m, unmatched);
    return SG_EXIT_OK;
}

/* Find atc quietly: NULL when it is not there (diag says where it looked). */
static char *atc_or_null(struct sg_diag *d)
{
    char *exe = NULL;
    if (sg_atc_find(getenv("PATH"), getenv("ASCEND_TOOLKIT_HOME"), &exe, d) != SG_OK)
        return NULL;
    return exe;
}

/* Find atc, or say clearly that it is not there. */
static int find_atc(char **exe)
{
    struct sg_diag d = {0};
    if (sg_atc_find(getenv("PATH"), getenv("ASCEND_TOOLKIT_HOME"), exe, &d) == SG_OK)
        return SG_EXIT_OK;
    cli_error("%s", d.msg);
    cli_error("nothing was run; use --print to get the command line for a machine with the "
              "CANN toolkit");
    return SG_EXIT_FAIL;
}

/* Print or run argv. */
static int dispatch(enum backend backend, char **argv)
{
    char *line = sg_argv_format(argv);
    if (!line) {
        cli_error("out of memory");
        return SG_EXIT_FAIL;
    }
    if (backend == BACKEND_PRINT) {
        printf("%s\n", line);
        sg_free(line);
        return SG_EXIT_OK;
    }
    char *exe = NULL;
    int rc = find_atc(&exe);
    if (rc != SG_EXIT_OK) {
        sg_free(line);
        return rc;
    }
    fprintf(stderr, "surgeon: running %s: %s\n", exe, line);
    fflush(stdout);
    fflush(stderr);
    struct sg_diag d = {0};
    int code;
    if (sg_atc_exec(exe, argv, &code, &d) != SG_OK) {
        cli_error("%s", d.msg);
        rc = code >= 0 ? code : SG_EXIT_FAIL;
    } else {
        rc = code;
        if (code)
            cli_error("atc failed with exit code %d", code);
    }
    sg_free(exe);
    sg_free(line);
    return rc;
}

static int to_json(const char *om, const char *json, const char *const *extra, size_t n_extra,
                   bool print)
{
    struct sg_diag d = {0};
    struct stat sb;
    if (stat(om, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        cli_error("%s: no such compiled model", om);
        return SG_EXIT_FAIL;
    }
    if (!folder_exists(json)) {
        cli_error("%s: its folder does not exist", json);
        return SG_EXIT_FAIL;
    }
    /* A mock OM is ONNX: its map comes from surgeon, not from atc. */
    struct sg_load_opts lo = {.skip_external = true, .skip_verify = true};
    sg_model *mock = NULL;
    if (sg_model_load(om, &lo, &mock, NULL) == SG_OK && sg_mockom_is(mock)) {
        int rc = SG_EXIT_OK;
        if (print || n_extra)
            rc = cli_usage(&sg_cmd_atc,
                           "%s is a mock OM: surgeon writes its map itself, so "
                           "--print and atc arguments do not apply",
                           om);
        else if (sg_mock_map_write(mock, json, &d))
            rc = cli_fail(&d);
        else
            fprintf(stderr, "surgeon: %s is a mock OM; wrote its map %s\n", om, json);
        sg_model_free(mock);
        return rc;
    }
    sg_model_free(mock);
    char **argv;
    sg_status st = sg_atc_json_command(om, json, extra, n_extra, &argv, &d);
    if (st == SG_EINVAL)
        return cli_usage(&sg_cmd_atc, "%s", d.msg);
    if (st)
        return cli_fail(&d);
    int rc = dispatch(print ? BACKEND_PRINT : BACKEND_ATC, argv);
    sg_argv_free(argv);
    return rc;
}

struct args {
    const char *model, *out, *soc, *shape, *precision, *keep_file, *customize, *opmode;
    const char *fusion, *log, *to_json, *overflow;
    struct cli_list keep_ops, keep_nodes;
    bool print, mock;
    const char *const *extra;
    size_t n_extra;
};

/* What the mock compiler did, on stdout; its warnings on stderr. */
static void report_mock(const struct args *a, const sg_mock_report *rep)
{
    for (size_t i = 0; i < rep->n_warnings; i++)
        cli_warn("%s", rep->warnings[i]);
    printf("mock compiler: %s.om and %s.json for %s, precision %s, overflow %s\n", a->out, a->out,
           a->soc, rep->precision, sg_overflow_name(rep->overflow));
    printf("  %zu ONNX nodes -> %zu compiled ops (float16 %zu, float16 in/float32 out %zu, "
           "float32 %zu)\n",
           rep->n_nodes, rep->n_ops, rep->n_fp16, rep->n_fp16_in, rep->n_fp32);
    for (int id = 0; id < SG_FUSION_PASS_COUNT; id++)
        if (rep->fired[id])
            printf("  %-36s %zu fused op%s\n", sg_fusion_pass_get(id)->name, rep->fired[id],
                   rep->fired[id] == 1 ? "" : "s");
}

/* Choose where the job goes; the mock when atc is absent (said on stderr). */
static int choose_backend(const struct args *a, enum backend *backend, char **exe)
{
    *exe = NULL;
    if (a->print && a->mock)
        return cli_usage(&sg_cmd_atc, "--print shows the real atc command; --mock runs the mock "
                                      "compiler: give one of them");
    if (a->print)
        *backend = BACKEND_PRINT;
    else if (a->mock)
        *backend = BACKEND_MOCK;
    else {
        struct sg_diag d = {0};
        *exe = atc_or_null(&d);
        *backend = *exe ? BACKEND_ATC : BACKEND_MOCK;
        if (!*exe)
            fprintf(stderr,
                    "surgeon: %s\n"
                    "surgeon: compiling with the mock compiler instead: ATC's precision and "
                    "fusion emulated on the CPU, not a real OM (--mock says so explicitly)\n",
                    d.msg);
    }
    if (a->overflow && *backend != BACKEND_MOCK)
        return cli_usage(&sg_cmd_atc, "--overflow sets the mock compiler's overflow mode (with "
                                      "--mock); on a device it is a run-time setting");
    return SG_EXIT_OK;
}

/* The compile job: everything checked, then files written, then dispatched. */
static int compile(struct args *a)
{
    struct sg_diag d = {0};
    struct sg_atc_opts o = {.model = a->model,
                            .output = a->out,
                            .soc = a->soc,
                            .input_shape = a->shape,
                            .keep_dtype = a->keep_file,
                            .customize_dtypes = a->customize,
                            .op_precision_mode = a->opmode,
                            .log = a->log,
                            .extra = a->extra,
                            .n_extra = a->n_extra};
    int rc = SG_EXIT_OK;
    sg_model *m = NULL;
    sg_input_shapes *shapes = NULL;
    sg_prec_file *keep = NULL, *user_keep = NULL, *user_cust = NULL, *user_opmode = NULL;
    sg_fusion_switch *sw = NULL, *user_sw = NULL;
    char *keep_path = NULL, *fusion_path = NULL, *exe = NULL;
    char **argv = NULL;
    enum sg_overflow overflow = SG_OVERFLOW_DEFAULT;
    sg_mock_report rep = {0};

    /* Command-line values first: they are usage errors. */
    if (!soc_valid(a->soc))
        return cli_usage(&sg_cmd_atc, "bad --soc '%s' (e.g. Ascend310P3)", a->soc);
    if (strncmp(a->soc, "Ascend", 6) != 0)
        cli_warn("--soc '%s' does not start with 'Ascend'; ATC's SoC names do", a->soc);
    if (a->precision) {
        o.precision = sg_precision_mode_find(a->precision);
        if (!o.precision) {
            char valid[512];
            size_t len = 0;
            for (size_t i = 0; sg_precision_mode_at(i) && len < sizeof valid; i++) {
                int w = snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "",
                                 sg_precision_mode_at(i)->name);
                len += w > 0 ? (size_t)w : 0;
            }
            return cli_usage(&sg_cmd_atc, "unknown precision mode '%s' (valid: %s)", a->precision,
                             valid);
        }
    }
    if (a->log && !sg_atc_log_level_valid(a->log))
        return cli_usage(&sg_cmd_atc,
                         "unknown --log level '%s' (debug, info, warning, error, null)", a->log);
    if (a->keep_file && (a->keep_ops.n || a->keep_nodes.n))
        return cli_usage(&sg_cmd_atc, "--keep-dtype FILE and --keep/--keep-nodes exclude each "
                                      "other");
    if (a->overflow && !sg_overflow_parse(a->overflow, &overflow))
        return cli_usage(&sg_cmd_atc, "--overflow takes inf or saturation, not '%s'", a->overflow);
    if (a->shape && sg_input_shapes_parse(a->shape, &shapes, &d))
        return cli_usage(&sg_cmd_atc, "%s", d.msg);
    enum backend backend = BACKEND_PRINT;
    if ((rc = choose_backend(a, &backend, &exe)) != SG_EXIT_OK)
        goto out;
    bool mock = backend == BACKEND_MOCK;

    /* Then the inputs: the model, the files, the output folder. */
    struct sg_load_opts lo = {.skip_external = !mock};
    if (sg_model_load(a->model, &lo, &m, &d)) {
        rc = cli_fail(&d);
        goto out;
    }
    if (shapes && sg_input_shapes_check(shapes, m, &d)) {
        rc = cli_fail(&d);
        goto out;
    }
    for (size_t i = 0; shapes && i < shapes->n; i++) {
        const struct sg_input_shape *s = &shapes->items[i];
        const sg_value *v = sg_graph_value(m->graph, s->name);
        if (!v || !v->type || !v->type->shape)
            continue;
        for (uint32_t k = 0; k < s->rank; k++) {
            const sg_dim *dim = &v->type->shape->dims[k];
            if (dim->kind == SG_DIM_VALUE && s->dims[k].lo == s->dims[k].hi &&
                s->dims[k].lo != -1 && s->dims[k].lo != dim->value)
                cli_warn("--input-shape sets dimension %u of '%s' to %lld; the model fixes it at "
                         "%lld",
                         k, s->name, (long long)s->dims[k].lo, (long long)dim->value);
        }
    }
    if (!folder_exists(a->out)) {
        cli_error("-o %s: its folder does not exist", a->out);
        rc = SG_EXIT_FAIL;
        goto out;
    }
    size_t olen = strlen(a->out);
    if (olen > 3 && strcmp(a->out + olen - 3, ".om") == 0)
        cli_warn("-o %s: ATC adds .om itself; the model will be %s.om", a->out, a->out);
    if (a->keep_file &&
        (rc = check_prec_file(SG_PREC_KEEP_DTYPE, a->keep_file, m, !mock, &user_keep)))
        goto out;
    if (a->customize &&
        (rc = check_prec_file(SG_PREC_CUSTOMIZE_DTYPES, a->customize, m, !mock, &user_cust)))
        goto out;
    if (a->opmode &&
        (rc = check_prec_file(SG_PREC_OP_PRECISION_MODE, a->opmode, m, true, &user_opmode)))
        goto out;
    if ((a->keep_file || a->keep_ops.n || a->keep_nodes.n) && o.precision &&
        o.precision->kind == SG_PRECISION_ORIGIN)
        cli_warn("--precision %s keeps every op's dtype already: keep_dtype has no effect",
                 o.precision->name);

    /* Build what surgeon writes for the job, in memory. */
    if (a->keep_ops.n || a->keep_nodes.n) {
        keep = sg_prec_file_create(SG_PREC_KEEP_DTYPE);
        keep_path = concat(a->out, ".keep_dtype.cfg");
        if (!keep || !keep_path) {
            cli_error("out of memory");
            rc = SG_EXIT_FAIL;
            goto out;
        }
        for (int pass = 0; pass < 2; pass++) {
            const struct cli_list *l = pass ? &a->keep_nodes : &a->keep_ops;
            enum sg_prec_target t = pass ? SG_PREC_NODE : SG_PREC_OPTYPE;
            for (size_t i = 0; i < l->n; i++) {
                const char *name = l->v[i];
                const char *atc = t == SG_PREC_OPTYPE ? sg_atc_optype_for_onnx(name) : NULL;
                if (atc)
                    printf("keep_dtype: OpType::%s (ATC's name for ONNX %s)\n", atc, name);
                sg_status st = sg_prec_file_add(keep, t, atc ? atc : name, &d);
                if (st) {
                    rc = st == SG_EINVAL ? cli_usage(&sg_cmd_atc, "%s", d.msg) : cli_fail(&d);
                    goto out;
                }
            }
        }
        warn_prec("--keep", keep, m, !mock);
        o.keep_dtype = keep_path;
    }
    if (a->fusion && strcmp(a->fusion, "off") == 0) {
        sw = sg_fusion_switch_create();
        fusion_path = concat(a->out, ".fusion_switch.cfg");
        if (!sw || !fusion_path || sg_fusion_switch_set(sw, SG_FUSION_GRAPH, "ALL", false, &d) ||
            sg_fusion_switch_set(sw, SG_FUSION_UB, "ALL", false, &d)) {
            cli_error("out of memory");
            rc = SG_EXIT_FAIL;
            goto out;
        }
        o.fusion_switch = fusion_path;
    } else if (a->fusion) {
        if (sg_fusion_switch_read(a->fusion, &user_sw, &d)) {
            rc = cli_fail(&d);
            goto out;
        }
        for (size_t i = 0; i < user_sw->n_entries; i++)
            if (sg_fusion_switch_check_entry(&user_sw->entries[i]) != SG_FUSION_ENTRY_OK)
                cli_warn("%s:%u:%u: '%s' is not a %s pass of surgeon's catalogue", a->fusion,
                         user_sw->entries[i].line, user_sw->entries[i].col,
                         user_sw->entries[i].name, sg_fusion_kind_name(user_sw->entries[i].kind));
        o.fusion_switch = a->fusion;
    }
    sg_status st = sg_atc_command(&o, &argv, &d);
    if (st) {
        rc = st == SG_EINVAL ? cli_usage(&sg_cmd_atc, "%s", d.msg) : cli_fail(&d);
        goto out;
    }

    /* The mock compiles in memory first: a failure writes nothing. */
    if (mock) {
        if (a->opmode)
            cli_warn("%s: op_precision_mode (implementation modes) is not emulated by the mock "
                     "compiler; it changes nothing",
                     a->opmode);
        for (size_t i = 0; i < a->n_extra; i++)
            cli_warn("the mock compiler ignores the atc argument '%s'", a->extra[i]);
        struct sg_mock_inputs in = {.soc = a->soc,
                                    .precision = o.precision,
                                    .shapes = shapes,
                                    .keep_dtype = keep ? keep : user_keep,
                                    .keep_dtype_label = keep ? "--keep" : a->keep_file,
                                    .customize_dtypes = user_cust,
                                    .customize_dtypes_label = a->customize,
                                    .fusion_switch = sw ? sw : user_sw,
                                    .overflow = overflow};
        if (sg_mock_compile_model(m, &in, &rep, &d)) {
            rc = cli_fail(&d);
            cli_error("nothing was written");
            goto out;
        }
    }
    if (keep) {
        if (sg_prec_file_write(keep, keep_path, &d)) {
            rc = cli_fail(&d);
            goto out;
        }
        fprintf(stderr, "surgeon: wrote %s\n", keep_path);
    }
    if (sw) {
        if (sg_fusion_switch_write(sw, fusion_path, &d)) {
            rc = cli_fail(&d);
            goto out;
        }
        fprintf(stderr, "surgeon: wrote %s\n", fusion_path);
    }
    if (mock) {
        if (sg_mock_save(m, a->out, &d)) {
            rc = cli_fail(&d);
            goto out;
        }
        report_mock(a, &rep);
    } else {
        rc = dispatch(backend, argv);
    }
out:
    sg_mock_report_clear(&rep);
    sg_argv_free(argv);
    sg_free(exe);
    sg_free(keep_path);
    sg_free(fusion_path);
    sg_prec_file_free(keep);
    sg_prec_file_free(user_keep);
    sg_prec_file_free(user_cust);
    sg_prec_file_free(user_opmode);
    sg_fusion_switch_free(sw);
    sg_fusion_switch_free(user_sw);
    sg_input_shapes_free(shapes);
    sg_model_free(m);
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
    struct args a = {0};
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
            a.shape = optarg;
            break;
        case OPT_PREC:
            a.precision = optarg;
            break;
        case OPT_KEEP_FILE:
            a.keep_file = optarg;
            break;
        case OPT_KEEP:
        case OPT_KEEP_NODES:
            if (!cli_list_add_commas(c == OPT_KEEP ? &a.keep_ops : &a.keep_nodes, optarg)) {
                rc = cli_usage(&sg_cmd_atc, "bad list '%s' for %s", optarg, argv[optind - 1]);
                goto out;
            }
            break;
        case OPT_CUSTOM:
            a.customize = optarg;
            break;
        case OPT_OPMODE:
            a.opmode = optarg;
            break;
        case OPT_FUSION:
            a.fusion = optarg;
            break;
        case OPT_LOG:
            a.log = optarg;
            break;
        case OPT_PRINT:
            a.print = true;
            break;
        case OPT_JSON:
            a.to_json = optarg;
            break;
        case OPT_MOCK:
            a.mock = true;
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
    if (a.to_json) {
        if (optind != n_ours) {
            rc = cli_usage(&sg_cmd_atc, "--to-json takes no MODEL ('%s')", argv[optind]);
            goto out;
        }
        if (a.soc || a.shape || a.precision || a.keep_file || a.keep_ops.n || a.keep_nodes.n ||
            a.customize || a.opmode || a.fusion || a.log || a.mock || a.overflow) {
            rc = cli_usage(&sg_cmd_atc, "--to-json takes only -o JSON, --print and -- ATC ARGS");
            goto out;
        }
        if (!a.out) {
            rc = cli_usage(&sg_cmd_atc, "missing -o JSON");
            goto out;
        }
        rc = to_json(a.to_json, a.out, a.extra, a.n_extra, a.print);
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
    rc = compile(&a);
out:
    cli_list_free(&a.keep_ops);
    cli_list_free(&a.keep_nodes);
    return rc;
}
