/*
 * compare_model.c - the end-to-end compare (sg_verify_compare_model): the
 * accuracy workflow of ../shared/BACKGROUND.md in one call.
 *
 * The steps, top to bottom (sg_verify_compare_model):
 *   check          the options (sg_verify_compare_check): SG_EINVAL
 *   classify       the target: the mock compiler, the real atc, a mock OM
 *                  (an ONNX file with the mock OM marker) or a real OM
 *   check_inputs   MODEL loads, OUT may be replaced, atc exists where it is
 *                  needed, -t is a folder: nothing written yet
 *   golden_run     MODEL in float32 on the reference runtime, every node
 *                  dumped into TMP/golden, the inputs saved in TMP/inputs
 *   compile        sg_verify_compile, as `surgeon atc` does, into
 *                  TMP/<model> (.om + .json); atc --mode=1 maps a real OM;
 *                  surgeon maps a given mock OM
 *   target_run     the mock OM with float16 emulation and the golden run's
 *                  very inputs, dumped as device dumps into TMP/target (a
 *                  real OM's dumps come from the device through -t)
 *   write_record   TMP/run.json: what ran and the command that repeats it
 *   publish        TMP becomes OUT; an earlier OUT is moved aside
 *   compare        sg_compare_run on OUT's folders (so reports name their
 *                  final paths), reports into OUT; a failure rolls OUT back
 *
 * OUT ends up holding
 *     inputs/<input>.npy     the inputs of both runs (-i NAME=FILE repeats it)
 *     golden/                the float32 run of MODEL, every node dumped
 *     <model>.om, <model>.json   the compiled model and its `atc --mode=1`
 *                            map (targets mock and atc); for a given OM only
 *                            the map, <om>.json (none when -m gives it)
 *     <model>.fusion_switch.cfg, <model>.keep_dtype.cfg  when --fusion off or
 *                            --keep made them
 *     target/                the mock OM's run, dumped as device dumps
 *                            (absent when -t gives a device's dumps)
 *     result_<timestamp>.csv, result.json, report.html   the comparison
 *     run.json               what ran, and the command that repeats it
 * or nothing at all: everything is made in a temporary folder beside OUT,
 * which is deleted on any failure, so a failed run leaves OUT as it was.
 */
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_json.h"
#include "sg_mock.h"
#include "sg_mockom.h"
#include "sg_outdir.h"
#include "verify_impl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* What ran and the command that repeats it, in OUT. */
#define RECORD "run.json"

struct job {
    const struct sg_verify_compare_opts *o;
    const struct sg_verify_events *ev;
    enum sg_verify_target kind;
    char *out;                      /* o->out without trailing slashes */
    const char *tmp;                /* where everything is made (the sg_outdir's) */
    char *stem;                     /* the compiled model's name in OUT: TMP/<stem>.om, .json */
    sg_model *model;                /* MODEL */
    sg_model *om;                   /* the given mock OM (TARGET_MOCK_OM) */
    struct sg_verify_values values; /* the golden run's inputs, in MODEL's input order */
    char **shown;                   /* their files as OUT/inputs/<name>.npy */
    sg_verify_compare_result *res;
};

/* ------------------------------------------------------------- helpers */

/* "a/b" into a fixed buffer, for paths made of ours; false when too long. */
static bool join_buf(char *buf, size_t size, const char *a, const char *b)
{
    int n = snprintf(buf, size, "%s/%s", a, b);
    return n >= 0 && (size_t)n < size;
}

static sg_status oom(struct sg_diag *d)
{
    return sg_diag_set(d, SG_ENOMEM, "out of memory");
}

/* Whether existing `path` lies inside folder `dir` (false when dir does not
 * exist). */
static bool inside(const char *path, const char *dir)
{
    char p[PATH_MAX], d[PATH_MAX];
    if (!realpath(path, p) || !realpath(dir, d))
        return false;
    size_t n = strlen(d);
    return strncmp(p, d, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The name of the compiled model in OUT: MODEL's file name without .onnx
 * (or .om), renamed where it would clash with OUT's own files. */
static char *stem_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".onnx") == 0)
        n -= 5;
    else if (n > 3 && strcmp(base + n - 3, ".om") == 0)
        n -= 3;
    static const char *const taken[] = {"result", "run",    "report",   "golden",
                                        "target", "inputs", "single_op"};
    bool clash = n == 0;
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        clash |= strlen(taken[i]) == n && strncmp(base, taken[i], n) == 0;
    char *s = sg_malloc(n + 8);
    if (s)
        snprintf(s, n + 8, "%.*s%s", (int)n, base, clash ? "_model" : "");
    return s;
}

static const char *kind_label(enum sg_verify_target k)
{
    switch (k) {
    case SG_VERIFY_TARGET_MOCK:
        return "the mock compiler";
    case SG_VERIFY_TARGET_ATC:
        return "atc";
    default:
        return "the given OM";
    }
}

/* ------------------------------------------------------- the options */

enum sg_verify_target sg_verify_target_of(const char *target)
{
    if (target && strcmp(target, "mock") == 0)
        return SG_VERIFY_TARGET_MOCK;
    if (target && strcmp(target, "atc") == 0)
        return SG_VERIFY_TARGET_ATC;
    return SG_VERIFY_TARGET_FILE;
}

/* The first compile option given, or NULL. */
static const char *compile_option(const struct sg_verify_compare_opts *o)
{
    if (o->soc)
        return "--soc";
    if (o->precision)
        return "--precision";
    if (o->fusion)
        return "--fusion";
    if (o->keep_dtype)
        return "--keep-dtype";
    if (o->n_keep_ops)
        return "--keep";
    if (o->n_keep_nodes)
        return "--keep-nodes";
    if (o->overflow)
        return "--overflow";
    return NULL;
}

/* The compile job of an end-to-end compare, into `prefix`. */
static struct sg_verify_compile_opts compile_opts(const struct sg_verify_compare_opts *o,
                                                  enum sg_verify_target kind, const char *prefix,
                                                  const char *shapes, const char *shown)
{
    struct sg_verify_compile_opts c = {
        .model = o->model,
        .out = prefix,
        .soc = o->soc,
        .input_shape = shapes,
        .precision = o->precision,
        .keep_dtype = o->keep_dtype,
        .fusion = o->fusion,
        .overflow = o->overflow,
        .keep_ops = o->keep_ops,
        .n_keep_ops = o->n_keep_ops,
        .keep_nodes = o->keep_nodes,
        .n_keep_nodes = o->n_keep_nodes,
        .compiler =
            kind == SG_VERIFY_TARGET_MOCK ? SG_VERIFY_COMPILER_MOCK : SG_VERIFY_COMPILER_ATC,
        .shown = shown,
    };
    return c;
}

sg_status sg_verify_compare_check(const struct sg_verify_compare_opts *o,
                                  enum sg_verify_target kind, struct sg_diag *d)
{
    if (!o->model)
        return sg_diag_set(d, SG_EINVAL, "missing MODEL");
    if (!o->target)
        return sg_diag_set(d, SG_EINVAL,
                           "missing --target mock|atc|OM_FILE (or give the dump folders with -g "
                           "and -t instead of MODEL)");
    if (!o->out)
        return sg_diag_set(d, SG_EINVAL, "missing -o OUT");
    if (!o->inputs)
        return sg_diag_set(d, SG_EINVAL, "no inputs given");
    if (o->inputs->have_range && !o->inputs->random)
        return sg_diag_set(d, SG_EINVAL, "--range needs --random");
    if ((unsigned)kind >= SG_VERIFY_TARGET_COUNT)
        return sg_diag_set(d, SG_EINVAL, "unknown target kind %d", (int)kind);
    if (kind == SG_VERIFY_TARGET_MOCK || kind == SG_VERIFY_TARGET_ATC) {
        if (!o->soc)
            return sg_diag_set(d, SG_EINVAL,
                               "--target %s needs --soc SOC (e.g. Ascend910B1, Ascend310P3)",
                               o->target);
        if (o->precision && !sg_precision_mode_find(o->precision))
            return sg_diag_set(d, SG_EINVAL,
                               "unknown precision mode '%s' ('surgeon atc --precision list' "
                               "lists them)",
                               o->precision);
        enum sg_overflow ov;
        if (o->overflow && !sg_overflow_parse(o->overflow, &ov))
            return sg_diag_set(d, SG_EINVAL, "--overflow takes inf or saturation, not '%s'",
                               o->overflow);
        if (o->keep_dtype && (o->n_keep_ops || o->n_keep_nodes))
            return sg_diag_set(d, SG_EINVAL,
                               "--keep-dtype FILE and --keep/--keep-nodes exclude each other");
        if (o->map)
            return sg_diag_set(d, SG_EINVAL,
                               "-m gives a real OM's map; --target %s makes the map itself",
                               o->target);
    } else if (compile_option(o)) {
        return sg_diag_set(d, SG_EINVAL,
                           "%s is a compile option; --target %s is compiled already (compile "
                           "options go with --target mock or atc)",
                           compile_option(o), o->target);
    }
    if (kind == SG_VERIFY_TARGET_MOCK && o->dumps)
        return sg_diag_set(d, SG_EINVAL,
                           "-t gives a device's dumps of a real OM; --target mock "
                           "runs the mock OM itself");
    if (kind == SG_VERIFY_TARGET_ATC && o->overflow)
        return sg_diag_set(d, SG_EINVAL,
                           "--overflow sets the mock compiler's overflow mode; on a "
                           "device it is a run-time setting");
    if (kind == SG_VERIFY_TARGET_ATC && !o->dumps)
        return sg_diag_set(d, SG_EINVAL,
                           "--target atc compiles a real OM, which runs only on an Ascend device: "
                           "run it there with dumps on and give them with -t DIR (surgeon cannot "
                           "run a real OM)");
    if (kind == SG_VERIFY_TARGET_REAL_OM && !o->dumps)
        return sg_diag_set(d, SG_EINVAL,
                           "%s is not a mock OM (it does not read as ONNX); a real OM runs only "
                           "on an Ascend device: run it there with dumps on and give them with "
                           "-t DIR",
                           o->target);
    if (kind == SG_VERIFY_TARGET_MOCK_OM && o->dumps)
        return sg_diag_set(d, SG_EINVAL,
                           "%s is a mock OM, which runs here: -t (a real OM's device dumps) does "
                           "not apply",
                           o->target);
    if (kind == SG_VERIFY_TARGET_MOCK_OM && o->map)
        return sg_diag_set(d, SG_EINVAL,
                           "%s is a mock OM: surgeon writes its map itself; -m gives a real OM's "
                           "map",
                           o->target);
    if (o->n_single_nodes && !o->single_op)
        return sg_diag_set(d, SG_EINVAL, "--nodes names the operators of --single-op");
    if (o->single_op && kind != SG_VERIFY_TARGET_MOCK && kind != SG_VERIFY_TARGET_ATC &&
        kind != SG_VERIFY_TARGET_FILE)
        return sg_diag_set(d, SG_EINVAL,
                           "--single-op compiles each operator alone: it needs --target mock or "
                           "atc (with the compile options), not a compiled model");
    if (o->device_command && (!o->single_op || kind != SG_VERIFY_TARGET_ATC))
        return sg_diag_set(d, SG_EINVAL,
                           "--device-cmd runs the single-op cases' OMs: it goes with --target atc "
                           "--single-op");
    if (o->timeout > 0 && !o->device_command)
        return sg_diag_set(d, SG_EINVAL, "--timeout limits --device-cmd");
    if (o->single_op && kind == SG_VERIFY_TARGET_ATC && !o->device_command)
        return sg_diag_set(d, SG_EINVAL,
                           "--target atc --single-op compiles each operator with atc; its OM runs "
                           "only on a device: give --device-cmd \"COMMAND\" that runs {om} on "
                           "{inputs} and writes {out}/<output>.npy");
    if (kind == SG_VERIFY_TARGET_MOCK || kind == SG_VERIFY_TARGET_ATC) {
        /* The rest of the compile options, as `surgeon atc` checks them. */
        char *shapes = sg_verify_inputs_shape_text(o->inputs);
        if (o->inputs->n_shapes && !shapes)
            return oom(d);
        struct sg_verify_compile_opts c = compile_opts(o, kind, o->out, shapes, NULL);
        sg_status st = sg_verify_compile_check(&c, d);
        sg_free(shapes);
        return st;
    }
    return SG_OK;
}

/* -------------------------------------------------------- the target */

/* Load `path` as a compiled model: *om is a checked mock OM or NULL (a
 * real OM, which does not read as ONNX). */
static sg_status load_target(const char *path, sg_model **om, struct sg_diag *d)
{
    *om = NULL;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return sg_diag_set(d, SG_ENOTFOUND,
                           "--target %s: no such compiled model (the targets are mock, atc or an "
                           "OM file)",
                           path);
    sg_model *m = NULL;
    struct sg_diag ld = {0};
    sg_status s = sg_model_load(path, NULL, &m, &ld);
    if (s == SG_EPARSE)
        return SG_OK; /* not ONNX: taken for a real OM, which surgeon cannot run */
    if (s)
        return sg_diag_set(d, s == SG_EINVAL ? SG_EPARSE : s, "%s", ld.msg);
    if (!sg_mockom_is(m)) {
        sg_model_free(m);
        return sg_diag_set(d, SG_EPARSE,
                           "%s is an ONNX model, not a compiled one: compile it with --target "
                           "mock, or compare two runs' dumps with -g and -t",
                           path);
    }
    if ((s = sg_mockom_check(m, &ld))) {
        sg_model_free(m);
        return sg_diag_set(d, s == SG_EINVAL ? SG_EPARSE : s, "%s", ld.msg);
    }
    *om = m;
    return SG_OK;
}

sg_status sg_verify_target_classify(const char *path, enum sg_verify_target *kind,
                                    struct sg_diag *d)
{
    sg_model *om = NULL;
    sg_status st = load_target(path, &om, d);
    if (!st)
        *kind = om ? SG_VERIFY_TARGET_MOCK_OM : SG_VERIFY_TARGET_REAL_OM;
    sg_model_free(om);
    return st;
}

/* Input checks that need no work done: nothing is written before them. */
static sg_status check_inputs(struct job *j, struct sg_diag *d)
{
    const struct sg_verify_compare_opts *o = j->o;
    sg_status st = sg_outdir_check(j->out, "compare", d);
    if (st)
        return st;
    if (o->dumps && !is_dir(o->dumps))
        return sg_diag_set(d, SG_ENOTFOUND, "-t %s: no such folder of device dumps", o->dumps);
    /* OUT is replaced: what this run reads must not live in it. */
    const char *const reads[] = {o->dumps, o->map,
                                 j->kind >= SG_VERIFY_TARGET_MOCK_OM ? o->target : NULL, o->model};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++)
        if (reads[i] && inside(reads[i], j->out))
            return sg_diag_set(d, SG_EINVAL,
                               "%s lies inside -o %s, which this run replaces: copy it elsewhere "
                               "or choose another -o",
                               reads[i], o->out);
    if (j->kind == SG_VERIFY_TARGET_ATC || (j->kind == SG_VERIFY_TARGET_REAL_OM && !o->map)) {
        char *exe = NULL;
        struct sg_diag fd = {0};
        if (sg_atc_find(getenv("PATH"), getenv("ASCEND_TOOLKIT_HOME"), &exe, &fd)) {
            if (j->kind == SG_VERIFY_TARGET_ATC)
                return sg_diag_set(d, SG_ENOTFOUND,
                                   "%s; --target atc needs the CANN toolkit's atc; --target mock "
                                   "emulates it on the CPU",
                                   fd.msg);
            return sg_diag_set(d, SG_ENOTFOUND,
                               "%s; mapping the real OM %s needs atc --mode=1: install the CANN "
                               "toolkit or give the map with -m MAP.json",
                               fd.msg, o->target);
        }
        sg_free(exe);
    }
    st = sg_model_load(o->model, NULL, &j->model, d);
    if (st)
        return st;
    if (sg_mockom_is(j->model))
        return sg_diag_set(d, SG_EINVAL,
                           "%s is a mock OM; MODEL is the original ONNX model (the mock OM goes "
                           "to --target)",
                           o->model);
    for (size_t i = 0; i < o->n_single_nodes; i++)
        if (!sg_model_find_node(j->model, o->single_nodes[i])) {
            char close[512];
            sg_graph_close_names(j->model->graph, o->single_nodes[i], true, close, sizeof close);
            return sg_diag_set(d, SG_ENOTFOUND, "--nodes: %s has no node '%s'%s%s%s", o->model,
                               o->single_nodes[i], *close ? " (close: " : "", close,
                               *close ? ")" : "");
        }
    if (j->kind != SG_VERIFY_TARGET_MOCK && j->kind != SG_VERIFY_TARGET_ATC)
        return SG_OK;
    /* The compile's own input (the files ATC reads, the model as the
     * compiler takes it), before the golden run spends its time. */
    char *shapes = sg_verify_inputs_shape_text(o->inputs);
    if (o->inputs->n_shapes && !shapes)
        return oom(d);
    struct sg_verify_compile_opts c = compile_opts(o, j->kind, j->out, shapes, NULL);
    st = sg_verify_compile_dry(&c, d);
    sg_free(shapes);
    if (st)
        sg_diag_prefix(d, "compiling %s with %s", o->model, kind_label(j->kind));
    return st;
}

/* --------------------------------------------------------------- runs */

/* Run model m into TMP/<dirname> with every node dumped. The first run
 * (golden) makes the inputs from o->inputs and saves them in TMP/inputs;
 * later ones reuse them. */
static sg_status run_dumped(struct job *j, sg_model *m, const char *label, const char *dirname,
                            size_t *n_tensors, struct sg_verify_run_info *info, struct sg_diag *d)
{
    char dir[PATH_MAX];
    if (!join_buf(dir, sizeof dir, j->tmp, dirname))
        return sg_diag_set(d, SG_EIO, "%s/%s: path too long", j->tmp, dirname);
    if (mkdir(dir, 0777) != 0)
        return sg_diag_set(d, SG_EIO, "cannot create '%s': %s", dir, strerror(errno));
    bool first = !j->values.n;
    struct sg_verify_run_opts ro = {.dump_dir = dir,
                                    .dump = SG_DUMP_ALL,
                                    .threads = j->o->threads,
                                    .label = label,
                                    .max_loop_iterations = j->o->max_loop_iterations};
    sg_status st = sg_verify_run(m, &ro, j->o->inputs, &j->values, info, d);
    if (st)
        return st;
    *n_tensors = info->n_tensors;
    if (!first)
        return SG_OK;
    /* The inputs of both runs, for the user to repeat them. */
    char inputs[PATH_MAX];
    if (!join_buf(inputs, sizeof inputs, j->tmp, "inputs"))
        return sg_diag_set(d, SG_EIO, "%s/inputs: path too long", j->tmp);
    char **files = sg_calloc(j->values.n + 1, sizeof *files);
    j->shown = sg_calloc(j->values.n + 1, sizeof *j->shown);
    if (!files || !j->shown) {
        sg_free(files);
        return oom(d);
    }
    st = sg_verify_values_save(&j->values, inputs, files, d);
    for (uint32_t r = 0; r < j->values.n; r++) {
        if (!st) {
            char rel[PATH_MAX];
            snprintf(rel, sizeof rel, "inputs/%s", files[r]);
            if (!(j->shown[r] = sg__verify_join(j->out, rel)))
                st = oom(d);
        }
        sg_free(files[r]);
    }
    sg_free(files);
    return st;
}

/* ------------------------------------------------------------ compile */

/* Compile MODEL (targets mock, atc) into TMP/<stem>.om and .json. */
static sg_status compile(struct job *j, struct sg_diag *d)
{
    const struct sg_verify_compare_opts *o = j->o;
    char *prefix = sg__verify_join(j->tmp, j->stem), *shown = sg__verify_join(j->out, j->stem);
    char *shapes = sg_verify_inputs_shape_text(o->inputs);
    char *om = NULL, *map = NULL;
    sg_status st;
    if (!prefix || !shown || (o->inputs->n_shapes && !shapes)) {
        st = oom(d);
        goto out;
    }
    struct sg_verify_compile_opts c = compile_opts(o, j->kind, prefix, shapes, shown);
    if ((st = sg_verify_compile(&c, j->ev, NULL, d))) {
        sg_diag_prefix(d, "compiling %s with %s", o->model, kind_label(j->kind));
        goto out;
    }
    if (j->kind == SG_VERIFY_TARGET_ATC) {
        size_t n = strlen(prefix) + 8;
        om = sg_malloc(n);
        map = sg_malloc(n);
        if (!om || !map) {
            st = oom(d);
            goto out;
        }
        snprintf(om, n, "%s.om", prefix);
        snprintf(map, n, "%s.json", prefix);
        if ((st = sg_verify_map(om, map, NULL, 0, false, j->ev, NULL, d)))
            sg_diag_prefix(d, "mapping %s.om with atc --mode=1", shown);
    }
out:
    sg_free(prefix);
    sg_free(shown);
    sg_free(shapes);
    sg_free(om);
    sg_free(map);
    return st;
}

/* The map of a given OM: TMP/<stem>.json, by surgeon (mock OM) or by atc
 * --mode=1 (real OM, unless -m gave it). */
static sg_status map_given(struct job *j, struct sg_diag *d)
{
    const struct sg_verify_compare_opts *o = j->o;
    if (j->kind == SG_VERIFY_TARGET_REAL_OM && o->map)
        return SG_OK;
    char path[PATH_MAX], name[PATH_MAX];
    snprintf(name, sizeof name, "%s.json", j->stem);
    if (!join_buf(path, sizeof path, j->tmp, name))
        return sg_diag_set(d, SG_EIO, "%s/%s: path too long", j->tmp, name);
    if (j->kind == SG_VERIFY_TARGET_MOCK_OM)
        return sg_mock_map_write(j->om, path, d);
    sg_status st = sg_verify_map(o->target, path, NULL, 0, false, j->ev, NULL, d);
    if (st)
        sg_diag_prefix(d, "mapping %s with atc --mode=1", o->target);
    return st;
}

/* ------------------------------------------------------------- record */

/* The command that repeats this run on the saved inputs, quoted for a
 * shell; sg_malloc'd, NULL when out of memory. */
static char *repeat_command(const struct job *j)
{
    const struct sg_verify_compare_opts *o = j->o;
    struct sg__words w = {.ok = true};
    char *shapes = sg_verify_inputs_shape_text(o->inputs);
    if (o->inputs->n_shapes && !shapes)
        w.ok = false;
    sg__words_add(&w, "surgeon");
    sg__words_add(&w, "compare");
    sg__words_add(&w, o->model);
    sg__words_opt(&w, "--target", o->target);
    sg__words_opt(&w, "--soc", o->soc);
    sg__words_opt(&w, "--precision", o->precision);
    sg__words_opt(&w, "--fusion", o->fusion);
    sg__words_opt(&w, "--keep-dtype", o->keep_dtype);
    sg__words_list(&w, "--keep", o->keep_ops, o->n_keep_ops);
    sg__words_list(&w, "--keep-nodes", o->keep_nodes, o->n_keep_nodes);
    sg__words_opt(&w, "--overflow", o->overflow);
    sg__words_opt(&w, "--input-shape", shapes);
    for (uint32_t r = 0; r < j->values.n; r++) {
        size_t n = strlen(j->values.names[r]) + strlen(j->shown[r]) + 2;
        char *a = sg_malloc(n);
        if (!a) {
            w.ok = false;
            break;
        }
        snprintf(a, n, "%s=%s", j->values.names[r], j->shown[r]);
        sg__words_opt(&w, "-i", a);
        sg_free(a);
    }
    sg__words_opt(&w, "-t", o->dumps);
    sg__words_opt(&w, "-m", o->map);
    if (o->single_op)
        sg__words_add(&w, "--single-op");
    sg__words_list(&w, "--nodes", o->single_nodes, o->n_single_nodes);
    sg__words_opt(&w, "--device-cmd", o->device_command);
    if (o->timeout > 0) {
        char t[32];
        snprintf(t, sizeof t, "%g", o->timeout);
        sg__words_opt(&w, "--timeout", t);
    }
    sg__words_opt(&w, "-o", o->out);
    sg__words_thresholds(&w, &o->thresholds);
    char *line = sg__words_join(&w);
    sg__words_free(&w);
    sg_free(shapes);
    return line;
}

struct record_ctx {
    const struct job *j;
    const char *golden;
};

static sg_status write_record_json(FILE *f, void *ctx)
{
    const struct record_ctx *c = ctx;
    const struct job *j = c->j;
    const sg_verify_compare_result *res = j->res;
    struct sg_json js;
    sg_json_init(&js, f, true);
    sg_json_object_begin(&js);
    sg_json_key(&js, "format");
    sg_json_string(&js, "surgeon-compare-run");
    sg_json_key(&js, "version");
    sg_json_int(&js, 1);
    sg_json_key(&js, "model");
    sg_json_string(&js, j->o->model);
    sg_json_key(&js, "target");
    sg_json_string(&js, j->o->target);
    sg_json_key(&js, "compiled");
    sg_json_string(&js, res->compiled);
    sg_json_key(&js, "map");
    sg_json_string(&js, res->map_path);
    sg_json_key(&js, "golden_dumps");
    sg_json_string(&js, c->golden);
    sg_json_key(&js, "target_dumps");
    sg_json_string(&js, res->target_dumps);
    sg_json_key(&js, "inputs");
    sg_json_array_begin(&js);
    for (uint32_t r = 0; r < j->values.n; r++) {
        sg_json_object_begin(&js);
        sg_json_key(&js, "name");
        sg_json_string(&js, j->values.names[r]);
        sg_json_key(&js, "file");
        sg_json_string(&js, j->shown[r]);
        sg_json_object_end(&js);
    }
    sg_json_array_end(&js);
    sg_json_key(&js, "repeat");
    sg_json_string(&js, res->repeat);
    sg_json_object_end(&js);
    fputc('\n', f);
    return ferror(f) ? SG_EIO : SG_OK;
}

/* TMP/run.json, with paths as they will be once TMP is OUT. */
static sg_status write_record(struct job *j, struct sg_diag *d)
{
    char path[PATH_MAX];
    if (!join_buf(path, sizeof path, j->tmp, RECORD))
        return sg_diag_set(d, SG_EIO, "%s/%s: path too long", j->tmp, RECORD);
    if (!(j->res->repeat = repeat_command(j)))
        return oom(d);
    char *golden = sg__verify_join(j->out, "golden");
    if (!golden)
        return oom(d);
    struct record_ctx c = {j, golden};
    sg_status st = sg_file_write_atomic_with(path, write_record_json, &c, d);
    sg_free(golden);
    return st;
}

/* -------------------------------------------------------------- compare */

/* Compare OUT's runs and write the reports into OUT. */
static sg_status compare(struct job *j, struct sg_diag *d)
{
    const struct sg_verify_compare_opts *o = j->o;
    sg_verify_compare_result *res = j->res;
    char *golden = sg__verify_join(j->out, "golden");
    if (!golden)
        return oom(d);
    struct sg_compare_opts co;
    sg_compare_opts_init(&co);
    co.golden_dir = golden;
    co.target_dir = res->target_dumps;
    co.map_path = res->map_path;
    co.model = j->model;
    co.model_label = o->model;
    co.thresholds = o->thresholds;
    if (j->ev)
        co.progress = j->ev->compare;
    sg_status st = sg_compare_run(&co, &res->compare, d);
    if (!st)
        st = sg_compare_write_reports(res->compare, j->out, time(NULL), &res->csv, d);
    sg_free(golden);
    return st;
}

/* ----------------------------------------------------- single-op step */

static bool listed(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

/* The operators behind rows in error, in row order, once each: every node
 * a fused op covers (GroundTruth) is tried alone. */
static sg_status flagged(const struct job *j, char ***out, size_t *n, struct sg_diag *d)
{
    const sg_compare_result *c = j->res->compare;
    char **v = sg_calloc(1, sizeof *v);
    size_t k = 0;
    if (!v)
        return oom(d);
    for (size_t i = 0; i < c->n_rows; i++) {
        const struct sg_compare_row *row = &c->rows[i];
        if (!row->is_error || !row->golden || strcmp(row->golden, "*") == 0)
            continue;
        for (const char *p = row->golden; *p;) {
            size_t len = strcspn(p, ",");
            char *name = sg_malloc(len + 1);
            char **g = name ? sg_realloc(v, (k + 2) * sizeof *v) : NULL;
            if (!g) {
                sg_free(name);
                for (size_t x = 0; x < k; x++)
                    sg_free(v[x]);
                sg_free(v);
                return oom(d);
            }
            v = g;
            memcpy(name, p, len);
            name[len] = '\0';
            if (sg_model_find_node(j->model, name) && !listed((const char *const *)v, k, name))
                v[k++] = name;
            else
                sg_free(name);
            p += len + (p[len] == ',');
        }
    }
    *out = v;
    *n = k;
    return SG_OK;
}

/* The single-op compare into OUT/single_op, its reports into OUT. */
static sg_status single_op(struct job *j, struct sg_diag *d)
{
    const struct sg_verify_compare_opts *o = j->o;
    char **mine = NULL;
    size_t n = o->n_single_nodes;
    sg_status st = SG_OK;
    if (!n && (st = flagged(j, &mine, &n, d)))
        return st;
    /* OUT is published by now: the cases go into it. */
    char *dir = sg__verify_join(j->out, "single_op"), *shown = sg__verify_join(j->out, "single_op");
    char *shapes = sg_verify_inputs_shape_text(o->inputs);
    struct sg_verify_single_opts so = {
        .model = j->model,
        .label = o->model,
        .inputs = &j->values,
        .nodes = mine ? (const char *const *)mine : o->single_nodes,
        .n_nodes = n,
        .target = {.kind =
                       j->kind == SG_VERIFY_TARGET_ATC ? SG_VERIFY_EXEC_ATC : SG_VERIFY_EXEC_MOCK,
                   .device_command = o->device_command,
                   .timeout = o->timeout,
                   .soc = o->soc,
                   .precision = o->precision,
                   .keep_dtype = o->keep_dtype,
                   .fusion = o->fusion,
                   .overflow = o->overflow,
                   .keep_ops = o->keep_ops,
                   .n_keep_ops = o->n_keep_ops,
                   .keep_nodes = o->keep_nodes,
                   .n_keep_nodes = o->n_keep_nodes,
                   .threads = o->threads,
                   .max_loop_iterations = o->max_loop_iterations},
        .thresholds = o->thresholds,
        .dir = dir,
        .shown = shown,
        .threads = o->threads,
        .max_loop_iterations = o->max_loop_iterations,
    };
    if (!dir || !shown)
        st = oom(d);
    if (!st && !n)
        sg__verify_emit(j->ev, SG_VERIFY_INFO, "single-op: no operator is in error, none to try");
    if (!st)
        st = sg_verify_single_op(&so, j->ev, &j->res->single, d);
    if (!st)
        st = sg_verify_single_write(&j->res->single, j->out, d);
    for (size_t i = 0; mine && i < n; i++)
        sg_free(mine[i]);
    sg_free(mine);
    sg_free(dir);
    sg_free(shown);
    sg_free(shapes);
    return st;
}

/* ----------------------------------------------------------- the job */

static void job_free(struct job *j)
{
    sg_verify_values_clear(&j->values);
    for (uint32_t r = 0; j->shown && j->shown[r]; r++)
        sg_free(j->shown[r]);
    sg_free(j->shown);
    sg_model_free(j->om);
    sg_model_free(j->model);
    sg_free(j->stem);
    sg_free(j->out);
}

void sg_verify_compare_free(sg_verify_compare_result *r)
{
    if (!r)
        return;
    sg_compare_result_free(r->compare);
    sg_verify_single_clear(&r->single);
    sg_free(r->out);
    sg_free(r->csv);
    sg_free(r->repeat);
    sg_free(r->compiled);
    sg_free(r->map_path);
    sg_free(r->target_dumps);
    sg_free(r);
}

/* Golden run, compile, target run, record: everything that goes in TMP. */
static sg_status make(struct job *j, struct sg_diag *d)
{
    const struct sg_verify_compare_opts *o = j->o;
    sg_verify_compare_result *res = j->res;
    struct sg_verify_run_info info;
    sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, "golden run (float32)");
    sg_status st = run_dumped(j, j->model, o->model, "golden", &res->golden_tensors, &info, d);
    sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, NULL);
    if (st)
        return st;
    sg__verify_emit(j->ev, SG_VERIFY_INFO,
                    "golden run: %s in float32, %zu tensors -> %s/golden (inputs in %s/inputs)",
                    o->model, res->golden_tensors, j->out, j->out);
    if (info.nonfinite[0])
        sg__verify_emit(j->ev, SG_VERIFY_WARNING, "golden run: %s", info.nonfinite);

    char name[PATH_MAX];
    if (j->kind == SG_VERIFY_TARGET_MOCK || j->kind == SG_VERIFY_TARGET_ATC) {
        sg__verify_emit(j->ev, SG_VERIFY_PROGRESS,
                        j->kind == SG_VERIFY_TARGET_MOCK ? "compiling (mock compiler)"
                                                         : "compiling (atc)");
        st = compile(j, d);
        sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, NULL);
        if (st)
            return st;
        snprintf(name, sizeof name, "%s.om", j->stem);
        res->compiled = sg__verify_join(j->out, name);
    } else {
        if ((st = map_given(j, d)))
            return st;
        res->compiled = sg_strdup(o->target);
    }
    if (o->map) {
        res->map_path = sg_strdup(o->map);
    } else {
        snprintf(name, sizeof name, "%s.json", j->stem);
        res->map_path = sg__verify_join(j->out, name);
    }
    if (!res->compiled || !res->map_path)
        return oom(d);

    if (j->kind == SG_VERIFY_TARGET_MOCK || j->kind == SG_VERIFY_TARGET_MOCK_OM) {
        sg_model *m = j->om;
        sg_model *loaded = NULL;
        if (!m) {
            char path[PATH_MAX];
            snprintf(name, sizeof name, "%s.om", j->stem);
            if (!join_buf(path, sizeof path, j->tmp, name))
                return sg_diag_set(d, SG_EIO, "%s/%s: path too long", j->tmp, name);
            if ((st = sg_model_load(path, NULL, &loaded, d)))
                return st;
            m = loaded;
        }
        sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, "target run (float16 emulation)");
        st = run_dumped(j, m, res->compiled, "target", &res->target_tensors, &info, d);
        sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, NULL);
        if (!st)
            sg__verify_emit(j->ev, SG_VERIFY_INFO,
                            "target run: %s (%s, overflow %s) with float16 emulation, %zu tensors "
                            "-> %s/target",
                            res->compiled, info.precision ? info.precision : "?",
                            info.overflow ? info.overflow : "?", res->target_tensors, j->out);
        sg_model_free(loaded);
        if (st)
            return st;
        res->target_dumps = sg__verify_join(j->out, "target");
    } else {
        res->target_dumps = sg_strdup(o->dumps);
        sg__verify_emit(j->ev, SG_VERIFY_INFO, "target dumps: %s (from the device)", o->dumps);
    }
    if (!res->target_dumps)
        return oom(d);
    return write_record(j, d);
}

sg_status sg_verify_compare_model(const struct sg_verify_compare_opts *o,
                                  const struct sg_verify_events *ev, sg_verify_compare_result **out,
                                  struct sg_diag *d)
{
    *out = NULL;
    struct job j = {.o = o, .ev = ev, .kind = sg_verify_target_of(o->target)};
    sg_status st = sg_verify_compare_check(o, j.kind, d);
    if (st)
        return st;
    if (j.kind == SG_VERIFY_TARGET_FILE) {
        if ((st = load_target(o->target, &j.om, d)))
            return st;
        j.kind = j.om ? SG_VERIFY_TARGET_MOCK_OM : SG_VERIFY_TARGET_REAL_OM;
        if ((st = sg_verify_compare_check(o, j.kind, d)))
            goto out;
    }

    /* OUT without trailing slashes, so that OUT/golden reads well. */
    j.out = sg_strdup(o->out);
    j.stem = stem_of(j.kind >= SG_VERIFY_TARGET_MOCK_OM ? o->target : o->model);
    j.res = sg_calloc(1, sizeof *j.res);
    if (!j.out || !j.stem || !j.res) {
        st = oom(d);
        goto out;
    }
    j.res->target = j.kind;
    for (size_t n = strlen(j.out); n > 1 && j.out[n - 1] == '/'; n--)
        j.out[n - 1] = '\0';
    if (!(j.res->out = sg_strdup(j.out))) {
        st = oom(d);
        goto out;
    }
    if ((st = check_inputs(&j, d)))
        goto out;

    struct sg_outdir od;
    if ((st = sg_outdir_begin(&od, j.out, "compare", d)))
        goto out;
    j.tmp = od.tmp;
    if ((st = make(&j, d)) || (st = sg_outdir_publish(&od, d))) {
        sg_outdir_abort(&od);
        goto out;
    }
    if ((st = compare(&j, d)) || (o->single_op && (st = single_op(&j, d)))) {
        /* Bad input found by the comparison: OUT goes back to what it was. */
        sg_outdir_abort(&od);
        goto out;
    }
    if ((st = sg_outdir_commit(&od, d)))
        goto out;
    *out = j.res;
    j.res = NULL;
out:
    sg_verify_compare_free(j.res);
    job_free(&j);
    return st;
}
