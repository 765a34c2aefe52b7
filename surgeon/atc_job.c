/*
 * atc_job.c - one compile job (see atc_job.h): check everything ATC will be
 * given, write the files it needs (keep_dtype, fusion switch), then print or
 * run the exact `atc` command line, or compile with the mock compiler
 * (sg_mock.h); `--mode=1` maps, from atc or, for a mock OM, from surgeon.
 *
 * Nothing is written until every input has been checked (and, for the
 * mock, the model compiled in memory), so a bad option, model or file
 * leaves no half-made job behind. Where the job goes is a backend: print
 * the command, run the real atc, or run the mock compiler.
 */
#include "atc_job.h"
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_cleanup.h"
#include "sg_file.h"
#include "sg_fusion.h"
#include "sg_io.h"
#include "sg_mock.h"
#include "sg_mockom.h"
#include "sg_precision.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum backend { BACKEND_PRINT, BACKEND_ATC, BACKEND_MOCK };

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

int cli_atc_to_json(const struct sg_command *cmd, const char *om, const char *json,
                    const char *const *extra, size_t n_extra, bool print)
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
            rc = cli_usage(cmd,
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
    /* atc writes the JSON itself: not over the OM (or anything read). */
    if (!print && sg_file_guard_check(json, &d))
        return cli_fail(&d);
    char **argv;
    sg_status st = sg_atc_json_command(om, json, extra, n_extra, &argv, &d);
    if (st == SG_EINVAL)
        return cli_usage(cmd, "%s", d.msg);
    if (st)
        return cli_fail(&d);
    int rc = dispatch(print ? BACKEND_PRINT : BACKEND_ATC, argv);
    sg_argv_free(argv);
    return rc;
}

/* How messages name the output prefix. */
static const char *shown(const struct cli_atc_job *a)
{
    return a->shown ? a->shown : a->out;
}

/* What the mock compiler did, on stdout; its warnings on stderr. */
static void report_mock(const struct cli_atc_job *a, const sg_mock_report *rep)
{
    for (size_t i = 0; i < rep->n_warnings; i++)
        cli_warn("%s", rep->warnings[i]);
    if (a->quiet)
        return;
    printf("mock compiler: %s.om and %s.json for %s, precision %s, overflow %s\n", shown(a),
           shown(a), a->soc, rep->precision, sg_overflow_name(rep->overflow));
    printf("  %zu ONNX nodes -> %zu compiled ops (float16 %zu, float16 in/float32 out %zu, "
           "float32 %zu)\n",
           rep->n_nodes, rep->n_ops, rep->n_fp16, rep->n_fp16_in, rep->n_fp32);
    for (int id = 0; id < SG_FUSION_PASS_COUNT; id++)
        if (rep->fired[id])
            printf("  %-36s %zu fused op%s\n", sg_fusion_pass_get(id)->name, rep->fired[id],
                   rep->fired[id] == 1 ? "" : "s");
}

/* Choose where the job goes; the mock when atc is absent (said on stderr). */
static int choose_backend(const struct cli_atc_job *a, enum backend *backend, char **exe)
{
    *exe = NULL;
    *backend = BACKEND_PRINT; /* a default: every path that returns SG_EXIT_OK sets it */
    if (a->print && a->mock)
        return cli_usage(a->cmd, "--print shows the real atc command; --mock runs the mock "
                                 "compiler: give one of them");
    if (a->print)
        *backend = BACKEND_PRINT;
    else if (a->real) {
        struct sg_diag d = {0};
        if (!(*exe = atc_or_null(&d))) {
            cli_error("%s", d.msg);
            return SG_EXIT_FAIL;
        }
        *backend = BACKEND_ATC;
    } else if (a->mock)
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
        return cli_usage(a->cmd, "--overflow sets the mock compiler's overflow mode (with "
                                 "--mock); on a device it is a run-time setting");
    return SG_EXIT_OK;
}

/* The compile job: everything checked, then files written, then dispatched. */
int cli_atc_compile(const struct cli_atc_job *a)
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
    bool wrote_keep = false, wrote_fusion = false;
    int h_keep = -1, h_fusion = -1;

    /* Command-line values first: they are usage errors. */
    if (!soc_valid(a->soc))
        return cli_usage(a->cmd, "bad --soc '%s' (e.g. Ascend310P3)", a->soc);
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
            return cli_usage(a->cmd, "unknown precision mode '%s' (valid: %s)", a->precision,
                             valid);
        }
    }
    if (a->log && !sg_atc_log_level_valid(a->log))
        return cli_usage(a->cmd, "unknown --log level '%s' (debug, info, warning, error, null)",
                         a->log);
    if (a->keep_file && (a->keep_ops.n || a->keep_nodes.n))
        return cli_usage(a->cmd, "--keep-dtype FILE and --keep/--keep-nodes exclude each "
                                 "other");
    if (a->overflow && !sg_overflow_parse(a->overflow, &overflow))
        return cli_usage(a->cmd, "--overflow takes inf or saturation, not '%s'", a->overflow);
    if (a->shape && sg_input_shapes_parse(a->shape, &shapes, &d))
        return cli_usage(a->cmd, "%s", d.msg);
    enum backend backend;
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
        cli_error("-o %s: its folder does not exist", shown(a));
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
                if (atc && !a->quiet)
                    printf("keep_dtype: OpType::%s (ATC's name for ONNX %s)\n", atc, name);
                sg_status st = sg_prec_file_add(keep, t, atc ? atc : name, &d);
                if (st) {
                    rc = st == SG_EINVAL ? cli_usage(a->cmd, "%s", d.msg) : cli_fail(&d);
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
        rc = st == SG_EINVAL ? cli_usage(a->cmd, "%s", d.msg) : cli_fail(&d);
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
    /* atc writes OUT.om itself: it may not be a file this job reads. */
    if (backend == BACKEND_ATC) {
        char *om_path = concat(a->out, ".om");
        sg_status gst = om_path ? sg_file_guard_check(om_path, &d) : SG_ENOMEM;
        sg_free(om_path);
        if (gst) {
            rc = gst == SG_ENOMEM ? (cli_error("out of memory"), SG_EXIT_FAIL) : cli_fail(&d);
            goto out;
        }
    }
    /* The files written for the compile are removed if it fails or a
     * signal stops it: a failed job leaves nothing behind. */
    if (keep) {
        if (sg_prec_file_write(keep, keep_path, &d)) {
            rc = cli_fail(&d);
            goto out;
        }
        wrote_keep = true;
        h_keep = sg_cleanup_add(SG_CLEANUP_FILE, keep_path, NULL);
        if (!a->quiet)
            fprintf(stderr, "surgeon: wrote %s.keep_dtype.cfg\n", shown(a));
    }
    if (sw) {
        if (sg_fusion_switch_write(sw, fusion_path, &d)) {
            rc = cli_fail(&d);
            goto out;
        }
        wrote_fusion = true;
        h_fusion = sg_cleanup_add(SG_CLEANUP_FILE, fusion_path, NULL);
        if (!a->quiet)
            fprintf(stderr, "surgeon: wrote %s.fusion_switch.cfg\n", shown(a));
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
    if (rc != SG_EXIT_OK && wrote_keep)
        unlink(keep_path);
    if (rc != SG_EXIT_OK && wrote_fusion)
        unlink(fusion_path);
    sg_cleanup_forget(h_keep);
    sg_cleanup_forget(h_fusion);
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
