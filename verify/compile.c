/*
 * compile.c - one compile job (sg_verify_compile): check everything ATC
 * will be given, write the files it needs (keep_dtype, fusion switch), then
 * run the exact `atc` command line, return it (print), or compile with the
 * mock compiler (sg_mock.h); sg_verify_map maps a compiled model, by atc
 * --mode=1 or, for a mock OM, by surgeon.
 *
 * `surgeon atc` and the end-to-end compare both compile through here, so
 * both take the same options the same way; sg_verify_compile_check is the
 * one place that decides which options are wrong.
 *
 * Nothing is written until every input has been checked (and, for the
 * mock, the model compiled in memory), so a bad option, model or file
 * leaves no half-made job behind.
 */
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_cleanup.h"
#include "sg_file.h"
#include "sg_fusion.h"
#include "sg_io.h"
#include "sg_mock.h"
#include "sg_mockom.h"
#include "sg_precision.h"
#include "verify_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sg_verify_compile_clear(struct sg_verify_compile_result *r)
{
    if (!r)
        return;
    sg_free(r->command);
    memset(r, 0, sizeof *r);
}

static bool soc_valid(const char *s)
{
    if (!s || !*s)
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
    if (!slash || slash == path)
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

/* How messages name the output prefix. */
static const char *shown(const struct sg_verify_compile_opts *o)
{
    return o->shown ? o->shown : o->out;
}

/* Find atc quietly: NULL when it is not there (diag says where it looked). */
static char *atc_or_null(struct sg_diag *d)
{
    char *exe = NULL;
    if (sg_atc_find(getenv("PATH"), getenv("ASCEND_TOOLKIT_HOME"), &exe, d) != SG_OK)
        return NULL;
    return exe;
}

/* ------------------------------------------------------------ the check */

/* The compiler that will run: AUTO resolved by looking for atc. */
static enum sg_verify_compiler resolve(const struct sg_verify_compile_opts *o)
{
    if (o->compiler != SG_VERIFY_COMPILER_AUTO)
        return o->compiler;
    char *exe = atc_or_null(NULL);
    sg_free(exe);
    return exe ? SG_VERIFY_COMPILER_ATC : SG_VERIFY_COMPILER_MOCK;
}

/* The keep_dtype file --keep and --keep-nodes make, in memory. */
static sg_status keep_file_of(const struct sg_verify_compile_opts *o, sg_prec_file **out,
                              struct sg_diag *d)
{
    *out = NULL;
    if (!o->n_keep_ops && !o->n_keep_nodes)
        return SG_OK;
    sg_prec_file *keep = sg_prec_file_create(SG_PREC_KEEP_DTYPE);
    if (!keep)
        return sg_diag_set(d, SG_ENOMEM, "out of memory");
    for (int pass = 0; pass < 2; pass++) {
        const char *const *names = pass ? o->keep_nodes : o->keep_ops;
        size_t n = pass ? o->n_keep_nodes : o->n_keep_ops;
        enum sg_prec_target t = pass ? SG_PREC_NODE : SG_PREC_OPTYPE;
        for (size_t i = 0; i < n; i++) {
            const char *atc = t == SG_PREC_OPTYPE ? sg_atc_optype_for_onnx(names[i]) : NULL;
            sg_status st = sg_prec_file_add(keep, t, atc ? atc : names[i], d);
            if (st) {
                sg_prec_file_free(keep);
                return st;
            }
        }
    }
    *out = keep;
    return SG_OK;
}

sg_status sg_verify_compile_check(const struct sg_verify_compile_opts *o, struct sg_diag *d)
{
    if (!o->model || !o->out)
        return sg_diag_set(d, SG_EINVAL, "missing %s", !o->model ? "MODEL" : "-o OUT_PREFIX");
    if (!o->soc)
        return sg_diag_set(d, SG_EINVAL, "missing --soc SOC");
    if (!soc_valid(o->soc))
        return sg_diag_set(d, SG_EINVAL, "bad --soc '%s' (e.g. Ascend310P3)", o->soc);
    if ((unsigned)o->compiler >= SG_VERIFY_COMPILER_COUNT)
        return sg_diag_set(d, SG_EINVAL, "unknown compiler %d", (int)o->compiler);
    const struct sg_precision_mode *prec = NULL;
    if (o->precision && !(prec = sg_precision_mode_find(o->precision))) {
        char valid[512];
        size_t len = 0;
        for (size_t i = 0; sg_precision_mode_at(i) && len < sizeof valid; i++) {
            int w = snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "",
                             sg_precision_mode_at(i)->name);
            len += w > 0 ? (size_t)w : 0;
        }
        return sg_diag_set(d, SG_EINVAL, "unknown precision mode '%s' (valid: %s)", o->precision,
                           valid);
    }
    if (o->log && !sg_atc_log_level_valid(o->log))
        return sg_diag_set(d, SG_EINVAL,
                           "unknown --log level '%s' (debug, info, warning, error, null)", o->log);
    if (o->keep_dtype && (o->n_keep_ops || o->n_keep_nodes))
        return sg_diag_set(d, SG_EINVAL,
                           "--keep-dtype FILE and --keep/--keep-nodes exclude each other");
    enum sg_overflow overflow;
    if (o->overflow && !sg_overflow_parse(o->overflow, &overflow))
        return sg_diag_set(d, SG_EINVAL, "--overflow takes inf or saturation, not '%s'",
                           o->overflow);
    sg_input_shapes *shapes = NULL;
    struct sg_diag sd = {0};
    if (o->input_shape && sg_input_shapes_parse(o->input_shape, &shapes, &sd))
        return sg_diag_set(d, SG_EINVAL, "%s", sd.msg);
    sg_input_shapes_free(shapes);
    if (o->compiler == SG_VERIFY_COMPILER_PRINT && o->overflow)
        return sg_diag_set(d, SG_EINVAL,
                           "--overflow sets the mock compiler's overflow mode (with --mock); on a "
                           "device it is a run-time setting");
    if (o->overflow && resolve(o) != SG_VERIFY_COMPILER_MOCK)
        return sg_diag_set(d, SG_EINVAL,
                           "--overflow sets the mock compiler's overflow mode (with --mock); on a "
                           "device it is a run-time setting");
    sg_prec_file *keep = NULL;
    sg_status st = keep_file_of(o, &keep, d);
    sg_prec_file_free(keep);
    if (st)
        return st == SG_ENOMEM ? st : SG_EINVAL;
    /* The command line itself: extra arguments may not set what we set. */
    struct sg_atc_opts ao = {.model = o->model,
                             .output = o->out,
                             .soc = o->soc,
                             .input_shape = o->input_shape,
                             .precision = prec,
                             .keep_dtype = o->keep_dtype ? o->keep_dtype
                                           : keep        ? "keep_dtype.cfg"
                                                         : NULL,
                             .customize_dtypes = o->customize_dtypes,
                             .op_precision_mode = o->op_precision_mode,
                             .fusion_switch = o->fusion,
                             .log = o->log,
                             .extra = o->extra,
                             .n_extra = o->n_extra};
    char **argv = NULL;
    st = sg_atc_command(&ao, &argv, d);
    sg_argv_free(argv);
    return st;
}

/* ------------------------------------------------------------ the job */

/* Warnings about a precision file ATC would take, against the model (the
 * mock compiler reports entries naming nothing itself: unmatched false). */
static void warn_prec(const struct sg_verify_events *ev, const char *label, const sg_prec_file *f,
                      const sg_model *m, bool unmatched)
{
    for (size_t i = 0; i < f->n_entries; i++) {
        const struct sg_prec_entry *e = &f->entries[i];
        const char *atc = e->target == SG_PREC_OPTYPE ? sg_atc_optype_for_onnx(e->name) : NULL;
        if (atc)
            sg__verify_emit(ev, SG_VERIFY_WARNING,
                            "%s:%u: ATC calls ONNX %s '%s': OpType::%s matches nothing there",
                            label, e->line, e->name, atc, e->name);
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
            const char *kind = e->target == SG_PREC_OPTYPE ? "op type" : "node";
            const char *pre = e->target == SG_PREC_OPTYPE ? "OpType::" : "";
            if (e->line)
                sg__verify_emit(ev, SG_VERIFY_WARNING, "%s:%u: %s%s names no %s of the model",
                                label, e->line, pre, e->name, kind);
            else
                sg__verify_emit(ev, SG_VERIFY_WARNING, "%s: %s%s names no %s of the model", label,
                                pre, e->name, kind);
        }
    }
    sg_free(un);
}

/* Run argv with atc `exe`, streaming its output; a non-zero exit fails. */
static sg_status run_atc(const char *exe, char **argv, const char *line,
                         const struct sg_verify_events *ev, struct sg_verify_compile_result *res,
                         struct sg_diag *d)
{
    sg__verify_emit(ev, SG_VERIFY_NOTE, "running %s: %s", exe, line);
    int code = 0;
    sg_status st = sg_atc_exec(exe, argv, &code, d);
    res->atc_exit = code > 0 ? code : st ? 1 : 0;
    if (!st && code)
        st = sg_diag_set(d, SG_EIO, "atc failed with exit code %d", code);
    return st;
}

/* Find atc, or say clearly that it is not there. */
static sg_status find_atc(char **exe, struct sg_diag *d)
{
    struct sg_diag fd = {0};
    if (sg_atc_find(getenv("PATH"), getenv("ASCEND_TOOLKIT_HOME"), exe, &fd) == SG_OK)
        return SG_OK;
    return sg_diag_set(d, SG_ENOTFOUND,
                       "%s; nothing was run (--print gives the command line for a machine with "
                       "the CANN toolkit)",
                       fd.msg);
}

sg_status sg_verify_map(const char *om, const char *json, const char *const *extra, size_t n_extra,
                        bool print, const struct sg_verify_events *ev,
                        struct sg_verify_compile_result *result, struct sg_diag *d)
{
    struct sg_verify_compile_result scratch = {0};
    struct sg_verify_compile_result *res = result ? result : &scratch;
    memset(res, 0, sizeof *res);
    struct stat sb;
    if (stat(om, &sb) != 0 || !S_ISREG(sb.st_mode))
        return sg_diag_set(d, SG_ENOTFOUND, "%s: no such compiled model", om);
    if (!folder_exists(json))
        return sg_diag_set(d, SG_ENOTFOUND, "%s: its folder does not exist", json);
    /* A mock OM is ONNX: its map comes from surgeon, not from atc. */
    struct sg_load_opts lo = {.skip_external = true, .skip_verify = true};
    sg_model *mock = NULL;
    if (sg_model_load(om, &lo, &mock, NULL) == SG_OK && sg_mockom_is(mock)) {
        sg_status st = SG_OK;
        res->compiler = SG_VERIFY_COMPILER_MOCK;
        if (print || n_extra)
            st = sg_diag_set(d, SG_EINVAL,
                             "%s is a mock OM: surgeon writes its map itself, so --print and atc "
                             "arguments do not apply",
                             om);
        else if (!(st = sg_mock_map_write(mock, json, d)))
            sg__verify_emit(ev, SG_VERIFY_NOTE, "%s is a mock OM; wrote its map %s", om, json);
        sg_model_free(mock);
        return st;
    }
    sg_model_free(mock);
    /* atc writes the JSON itself: not over the OM (or anything read). */
    if (!print) {
        sg_status gst = sg_file_guard_check(json, d);
        if (gst)
            return gst;
    }
    char **argv = NULL;
    char *exe = NULL;
    sg_status st = sg_atc_json_command(om, json, extra, n_extra, &argv, d);
    if (st)
        return st;
    if (!(res->command = sg_argv_format(argv))) {
        st = sg_diag_set(d, SG_ENOMEM, "out of memory");
    } else if (print) {
        res->compiler = SG_VERIFY_COMPILER_PRINT;
    } else if (!(st = find_atc(&exe, d))) {
        res->compiler = SG_VERIFY_COMPILER_ATC;
        st = run_atc(exe, argv, res->command, ev, res, d);
    }
    sg_free(exe);
    sg_argv_free(argv);
    if (!result)
        sg_verify_compile_clear(&scratch);
    return st;
}

/* What the mock compiler did: its warnings, then what it made. */
static void report_mock(const struct sg_verify_compile_opts *o, const struct sg_verify_events *ev,
                        const sg_mock_report *rep)
{
    for (size_t i = 0; i < rep->n_warnings; i++)
        sg__verify_emit(ev, SG_VERIFY_WARNING, "%s", rep->warnings[i]);
    sg__verify_emit(ev, SG_VERIFY_INFO,
                    "mock compiler: %s.om and %s.json for %s, precision %s, overflow %s", shown(o),
                    shown(o), o->soc, rep->precision, sg_overflow_name(rep->overflow));
    sg__verify_emit(ev, SG_VERIFY_INFO,
                    "  %zu ONNX nodes -> %zu compiled ops (float16 %zu, float16 in/float32 out "
                    "%zu, float32 %zu)",
                    rep->n_nodes, rep->n_ops, rep->n_fp16, rep->n_fp16_in, rep->n_fp32);
    for (int id = 0; id < SG_FUSION_PASS_COUNT; id++)
        if (rep->fired[id])
            sg__verify_emit(ev, SG_VERIFY_INFO, "  %-36s %zu fused op%s",
                            sg_fusion_pass_get(id)->name, rep->fired[id],
                            rep->fired[id] == 1 ? "" : "s");
}

/* Read and check a precision file given by the user; *out keeps it. */
static sg_status read_prec(const struct sg_verify_events *ev, enum sg_prec_format format,
                           const char *path, const sg_model *m, bool unmatched, sg_prec_file **out,
                           struct sg_diag *d)
{
    sg_status st = sg_prec_file_read(format, path, out, d);
    if (!st)
        warn_prec(ev, path, *out, m, unmatched);
    return st;
}

sg_status sg_verify_compile(const struct sg_verify_compile_opts *o,
                            const struct sg_verify_events *ev,
                            struct sg_verify_compile_result *result, struct sg_diag *d)
{
    struct sg_verify_compile_result scratch = {0};
    struct sg_verify_compile_result *res = result ? result : &scratch;
    memset(res, 0, sizeof *res);
    sg_status st = sg_verify_compile_check(o, d);
    if (st)
        return st;
    struct sg_atc_opts ao = {.model = o->model,
                             .output = o->out,
                             .soc = o->soc,
                             .input_shape = o->input_shape,
                             .precision =
                                 o->precision ? sg_precision_mode_find(o->precision) : NULL,
                             .keep_dtype = o->keep_dtype,
                             .customize_dtypes = o->customize_dtypes,
                             .op_precision_mode = o->op_precision_mode,
                             .log = o->log,
                             .extra = o->extra,
                             .n_extra = o->n_extra};
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
    if (o->overflow)
        sg_overflow_parse(o->overflow, &overflow);
    if (o->input_shape && (st = sg_input_shapes_parse(o->input_shape, &shapes, d)))
        goto out;

    /* Where the job goes: atc must exist when it is to run. */
    res->compiler = o->compiler;
    if (o->compiler == SG_VERIFY_COMPILER_ATC) {
        if ((st = find_atc(&exe, d)))
            goto out;
    } else if (o->compiler == SG_VERIFY_COMPILER_AUTO) {
        struct sg_diag fd = {0};
        exe = atc_or_null(&fd);
        res->compiler = exe ? SG_VERIFY_COMPILER_ATC : SG_VERIFY_COMPILER_MOCK;
        if (!exe) {
            sg__verify_emit(ev, SG_VERIFY_NOTE, "%s", fd.msg);
            sg__verify_emit(ev, SG_VERIFY_NOTE,
                            "compiling with the mock compiler instead: ATC's precision and fusion "
                            "emulated on the CPU, not a real OM (--mock says so explicitly)");
        }
    }
    bool mock = res->compiler == SG_VERIFY_COMPILER_MOCK;

    /* Then the inputs: the model, the files, the output folder. */
    struct sg_load_opts lo = {.skip_external = !mock};
    if ((st = sg_model_load(o->model, &lo, &m, d)))
        goto out;
    if (shapes && (st = sg_input_shapes_check(shapes, m, d)))
        goto out;
    for (size_t i = 0; shapes && i < shapes->n; i++) {
        const struct sg_input_shape *s = &shapes->items[i];
        const sg_value *v = sg_graph_value(m->graph, s->name);
        if (!v || !v->type || !v->type->shape)
            continue;
        for (uint32_t k = 0; k < s->rank; k++) {
            const sg_dim *dim = &v->type->shape->dims[k];
            if (dim->kind == SG_DIM_VALUE && s->dims[k].lo == s->dims[k].hi &&
                s->dims[k].lo != -1 && s->dims[k].lo != dim->value)
                sg__verify_emit(ev, SG_VERIFY_WARNING,
                                "--input-shape sets dimension %u of '%s' to %lld; the model "
                                "fixes it at %lld",
                                k, s->name, (long long)s->dims[k].lo, (long long)dim->value);
        }
    }
    if (!folder_exists(o->out)) {
        st = sg_diag_set(d, SG_ENOTFOUND, "-o %s: its folder does not exist", shown(o));
        goto out;
    }
    size_t olen = strlen(o->out);
    if (olen > 3 && strcmp(o->out + olen - 3, ".om") == 0)
        sg__verify_emit(ev, SG_VERIFY_WARNING,
                        "-o %s: ATC adds .om itself; the model will be %s.om", o->out, o->out);
    if (o->keep_dtype &&
        (st = read_prec(ev, SG_PREC_KEEP_DTYPE, o->keep_dtype, m, !mock, &user_keep, d)))
        goto out;
    if (o->customize_dtypes && (st = read_prec(ev, SG_PREC_CUSTOMIZE_DTYPES, o->customize_dtypes, m,
                                               !mock, &user_cust, d)))
        goto out;
    if (o->op_precision_mode && (st = read_prec(ev, SG_PREC_OP_PRECISION_MODE, o->op_precision_mode,
                                                m, true, &user_opmode, d)))
        goto out;
    if ((o->keep_dtype || o->n_keep_ops || o->n_keep_nodes) && ao.precision &&
        ao.precision->kind == SG_PRECISION_ORIGIN)
        sg__verify_emit(ev, SG_VERIFY_WARNING,
                        "--precision %s keeps every op's dtype already: keep_dtype has no effect",
                        ao.precision->name);

    /* Build what surgeon writes for the job, in memory. */
    if ((st = keep_file_of(o, &keep, d)))
        goto out;
    if (keep) {
        for (size_t i = 0; i < o->n_keep_ops; i++) {
            const char *atc = sg_atc_optype_for_onnx(o->keep_ops[i]);
            if (atc)
                sg__verify_emit(ev, SG_VERIFY_INFO,
                                "keep_dtype: OpType::%s (ATC's name for ONNX %s)", atc,
                                o->keep_ops[i]);
        }
        if (!(keep_path = concat(o->out, ".keep_dtype.cfg"))) {
            st = sg_diag_set(d, SG_ENOMEM, "out of memory");
            goto out;
        }
        warn_prec(ev, "--keep", keep, m, !mock);
        ao.keep_dtype = keep_path;
    }
    if (o->fusion && strcmp(o->fusion, "off") == 0) {
        sw = sg_fusion_switch_create();
        fusion_path = concat(o->out, ".fusion_switch.cfg");
        if (!sw || !fusion_path || sg_fusion_switch_set(sw, SG_FUSION_GRAPH, "ALL", false, d) ||
            sg_fusion_switch_set(sw, SG_FUSION_UB, "ALL", false, d)) {
            st = sg_diag_set(d, SG_ENOMEM, "out of memory");
            goto out;
        }
        ao.fusion_switch = fusion_path;
    } else if (o->fusion) {
        if ((st = sg_fusion_switch_read(o->fusion, &user_sw, d)))
            goto out;
        for (size_t i = 0; i < user_sw->n_entries; i++)
            if (sg_fusion_switch_check_entry(&user_sw->entries[i]) != SG_FUSION_ENTRY_OK)
                sg__verify_emit(
                    ev, SG_VERIFY_WARNING, "%s:%u:%u: '%s' is not a %s pass of surgeon's catalogue",
                    o->fusion, user_sw->entries[i].line, user_sw->entries[i].col,
                    user_sw->entries[i].name, sg_fusion_kind_name(user_sw->entries[i].kind));
        ao.fusion_switch = o->fusion;
    }
    if ((st = sg_atc_command(&ao, &argv, d)))
        goto out;
    if (!(res->command = sg_argv_format(argv))) {
        st = sg_diag_set(d, SG_ENOMEM, "out of memory");
        goto out;
    }

    /* The mock compiles in memory first: a failure writes nothing. */
    if (mock) {
        if (o->op_precision_mode)
            sg__verify_emit(ev, SG_VERIFY_WARNING,
                            "%s: op_precision_mode (implementation modes) is not emulated by the "
                            "mock compiler; it changes nothing",
                            o->op_precision_mode);
        for (size_t i = 0; i < o->n_extra; i++)
            sg__verify_emit(ev, SG_VERIFY_WARNING,
                            "the mock compiler ignores the atc argument '%s'", o->extra[i]);
        struct sg_mock_inputs in = {.soc = o->soc,
                                    .precision = ao.precision,
                                    .shapes = shapes,
                                    .keep_dtype = keep ? keep : user_keep,
                                    .keep_dtype_label = keep ? "--keep" : o->keep_dtype,
                                    .customize_dtypes = user_cust,
                                    .customize_dtypes_label = o->customize_dtypes,
                                    .fusion_switch = sw ? sw : user_sw,
                                    .overflow = overflow};
        if ((st = sg_mock_compile_model(m, &in, &rep, d))) {
            sg_diag_prefix(d, "nothing was written");
            goto out;
        }
    }
    /* atc writes OUT.om itself: it may not be a file this job reads. */
    if (res->compiler == SG_VERIFY_COMPILER_ATC) {
        char *om_path = concat(o->out, ".om");
        st = om_path ? sg_file_guard_check(om_path, d) : sg_diag_set(d, SG_ENOMEM, "out of memory");
        sg_free(om_path);
        if (st)
            goto out;
    }
    /* The files written for the compile are removed if it fails or a
     * signal stops it: a failed job leaves nothing behind. */
    if (keep) {
        if ((st = sg_prec_file_write(keep, keep_path, d)))
            goto out;
        wrote_keep = true;
        h_keep = sg_cleanup_add(SG_CLEANUP_FILE, keep_path, NULL);
        sg__verify_emit(ev, SG_VERIFY_NOTE, "wrote %s.keep_dtype.cfg", shown(o));
    }
    if (sw) {
        if ((st = sg_fusion_switch_write(sw, fusion_path, d)))
            goto out;
        wrote_fusion = true;
        h_fusion = sg_cleanup_add(SG_CLEANUP_FILE, fusion_path, NULL);
        sg__verify_emit(ev, SG_VERIFY_NOTE, "wrote %s.fusion_switch.cfg", shown(o));
    }
    if (mock) {
        if ((st = sg_mock_save(m, o->out, d)))
            goto out;
        report_mock(o, ev, &rep);
    } else if (res->compiler == SG_VERIFY_COMPILER_ATC) {
        st = run_atc(exe, argv, res->command, ev, res, d);
    } /* PRINT: the command is the answer, the files it names are written */
out:
    if (st && wrote_keep)
        unlink(keep_path);
    if (st && wrote_fusion)
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
    if (!result)
        sg_verify_compile_clear(&scratch);
    return st;
}
