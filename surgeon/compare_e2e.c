/*
 * compare_e2e.c - `surgeon compare MODEL.onnx --target mock|atc|OM -o OUT`:
 * the accuracy workflow of ../shared/BACKGROUND.md in one command.
 *
 * The steps, top to bottom (cli_compare_e2e):
 *   check_usage    options that do not fit the target: exit 2, nothing run
 *   classify       the target: the mock compiler, the real atc, a mock OM
 *                  (an ONNX file with the mock OM marker) or a real OM
 *   check_inputs   MODEL loads, OUT may be replaced, atc exists where it is
 *                  needed, -t is a folder: exit 1, nothing written
 *   golden_run     MODEL in float32 on the reference runtime, every node
 *                  dumped into TMP/golden, the inputs saved in TMP/inputs
 *   compile        cli_atc_compile, as `surgeon atc` does, into TMP/<model>
 *                  (.om + .json); atc --mode=1 maps a real OM; surgeon maps a
 *                  given mock OM
 *   target_run     the mock OM with float16 emulation and the golden run's
 *                  very inputs, dumped as device dumps into TMP/target (a
 *                  real OM's dumps come from the device through -t)
 *   write_record   TMP/run.json: what ran and the command that repeats it
 *   publish        TMP becomes OUT; an earlier OUT is moved aside
 *   compare        sg_compare_run on OUT's folders (so reports name their
 *                  final paths), reports into OUT; a failure rolls OUT back
 *
 * Everything before publish happens in TMP, a folder beside OUT, which is
 * deleted on any failure: a failed run leaves OUT as it was.
 */
#include "atc_job.h"
#include "compare_e2e.h"
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_dump.h"
#include "sg_dumpname.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_json.h"
#include "sg_mock.h"
#include "sg_mockom.h"
#include "sg_outdir.h"
#include "sg_runtime.h"
#include "sg_tensorfile.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What ran and the command that repeats it, in OUT. */
#define RECORD "run.json"

enum kind {
    KIND_MOCK,    /* --target mock: the mock compiler, the mock OM run here */
    KIND_ATC,     /* --target atc: the real compiler, dumps from -t */
    KIND_MOCK_OM, /* --target FILE, a mock OM: run here */
    KIND_REAL_OM, /* --target FILE, anything else: dumps from -t */
};

struct job {
    const struct cli_e2e *e;
    enum kind kind;
    char *out;            /* e->out without trailing slashes */
    const char *tmp;      /* where everything is made (the sg_outdir's) */
    char *stem;           /* the compiled model's name in OUT: TMP/<stem>.om, .json */
    sg_model *model;      /* MODEL */
    sg_model *om;         /* the given mock OM (KIND_MOCK_OM) */
    sg_rt_value **values; /* the golden run's inputs, in MODEL's input order */
    const char **names;   /* their names (borrowed from `model`) */
    char **files;         /* their files, relative to OUT: inputs/<name>.npy */
    char **shown;         /* the same as OUT/inputs/<name>.npy */
    uint32_t n_values;
    size_t golden_tensors, target_tensors;
    struct cli_progress prog;
};

/* ------------------------------------------------------------- helpers */

/* "a/b", sg_malloc'd (NULL when out of memory). */
static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = sg_malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", a, b);
    return s;
}

/* "a/b" into a fixed buffer, for paths made of ours; false when too long. */
static bool join_buf(char *buf, size_t size, const char *a, const char *b)
{
    int n = snprintf(buf, size, "%s/%s", a, b);
    return n >= 0 && (size_t)n < size;
}

static int oom(void)
{
    cli_error("out of memory");
    return SG_EXIT_FAIL;
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
    static const char *const taken[] = {"result", "run", "report", "golden", "target", "inputs"};
    bool clash = n == 0;
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        clash |= strlen(taken[i]) == n && strncmp(base, taken[i], n) == 0;
    char *s = sg_malloc(n + 8);
    if (s)
        snprintf(s, n + 8, "%.*s%s", (int)n, base, clash ? "_model" : "");
    return s;
}

static const char *kind_label(enum kind k)
{
    switch (k) {
    case KIND_MOCK:
        return "the mock compiler";
    case KIND_ATC:
        return "atc";
    default:
        return "the given OM";
    }
}

/* ------------------------------------------------------- usage checks */

/* The first compile option given, or NULL. */
static const char *compile_option(const struct cli_e2e *e)
{
    if (e->soc)
        return "--soc";
    if (e->precision)
        return "--precision";
    if (e->fusion)
        return "--fusion";
    if (e->keep_file)
        return "--keep-dtype";
    if (e->keep_ops.n)
        return "--keep";
    if (e->keep_nodes.n)
        return "--keep-nodes";
    if (e->overflow)
        return "--overflow";
    return NULL;
}

static int check_usage(const struct cli_e2e *e, enum kind kind)
{
    const struct sg_command *cmd = &sg_cmd_compare;
    if (!e->out)
        return cli_usage(cmd, "missing -o OUT");
    if (e->inputs.have_range && !e->inputs.random)
        return cli_usage(cmd, "--range needs --random");
    if (kind == KIND_MOCK || kind == KIND_ATC) {
        if (!e->soc)
            return cli_usage(cmd, "--target %s needs --soc SOC (e.g. Ascend910B1, Ascend310P3)",
                             e->target);
        if (e->precision && !sg_precision_mode_find(e->precision))
            return cli_usage(cmd,
                             "unknown precision mode '%s' ('surgeon atc --precision list' "
                             "lists them)",
                             e->precision);
        enum sg_overflow ov;
        if (e->overflow && !sg_overflow_parse(e->overflow, &ov))
            return cli_usage(cmd, "--overflow takes inf or saturation, not '%s'", e->overflow);
        if (e->keep_file && (e->keep_ops.n || e->keep_nodes.n))
            return cli_usage(cmd, "--keep-dtype FILE and --keep/--keep-nodes exclude each other");
        if (e->map)
            return cli_usage(cmd, "-m gives a real OM's map; --target %s makes the map itself",
                             e->target);
    } else if (compile_option(e)) {
        return cli_usage(cmd,
                         "%s is a compile option; --target %s is compiled already (compile "
                         "options go with --target mock or atc)",
                         compile_option(e), e->target);
    }
    if (kind == KIND_MOCK && e->dumps)
        return cli_usage(cmd, "-t gives a device's dumps of a real OM; --target mock runs the "
                              "mock OM itself");
    if (kind == KIND_ATC && e->overflow)
        return cli_usage(cmd, "--overflow sets the mock compiler's overflow mode; on a device it "
                              "is a run-time setting");
    if (kind == KIND_ATC && !e->dumps)
        return cli_usage(cmd,
                         "--target atc compiles a real OM, which runs only on an Ascend device: "
                         "run it there with dumps on and give them with -t DIR (surgeon cannot "
                         "run a real OM)");
    return SG_EXIT_OK;
}

/* -------------------------------------------------------- the target */

/* Which target a --target FILE is; loads a mock OM into j->om. */
static int classify_file(struct job *j)
{
    const struct cli_e2e *e = j->e;
    struct stat st;
    if (stat(e->target, &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_error("--target %s: no such compiled model (the targets are mock, atc or an OM file)",
                  e->target);
        return SG_EXIT_FAIL;
    }
    struct sg_diag d = {0};
    sg_status s = sg_model_load(e->target, NULL, &j->om, &d);
    if (s == SG_EPARSE) {
        /* Not ONNX: taken for a real OM, which surgeon cannot run. */
        j->kind = KIND_REAL_OM;
        if (!e->dumps)
            return cli_usage(&sg_cmd_compare,
                             "%s is not a mock OM (it does not read as ONNX); a real OM runs only "
                             "on an Ascend device: run it there with dumps on and give them with "
                             "-t DIR",
                             e->target);
        return SG_EXIT_OK;
    }
    if (s)
        return cli_fail(&d);
    if (!sg_mockom_is(j->om)) {
        cli_error("%s is an ONNX model, not a compiled one: compile it with --target mock, or "
                  "compare two runs' dumps with -g and -t",
                  e->target);
        return SG_EXIT_FAIL;
    }
    if (sg_mockom_check(j->om, &d))
        return cli_fail(&d);
    j->kind = KIND_MOCK_OM;
    if (e->dumps)
        return cli_usage(&sg_cmd_compare,
                         "%s is a mock OM, which runs here: -t (a real OM's device dumps) does "
                         "not apply",
                         e->target);
    if (e->map)
        return cli_usage(&sg_cmd_compare,
                         "%s is a mock OM: surgeon writes its map itself; -m "
                         "gives a real OM's map",
                         e->target);
    return SG_EXIT_OK;
}

/* Input checks that need no work done: exit 1 before anything is written. */
static int check_inputs(struct job *j)
{
    const struct cli_e2e *e = j->e;
    struct sg_diag d = {0};
    if (sg_outdir_check(j->out, "compare", &d))
        return cli_fail(&d);
    if (e->dumps && !is_dir(e->dumps)) {
        cli_error("-t %s: no such folder of device dumps", e->dumps);
        return SG_EXIT_FAIL;
    }
    /* OUT is replaced: what this run reads must not live in it. */
    const char *const reads[] = {e->dumps, e->map, j->kind >= KIND_MOCK_OM ? e->target : NULL,
                                 e->model};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++)
        if (reads[i] && inside(reads[i], j->out)) {
            cli_error("%s lies inside -o %s, which this run replaces: copy it elsewhere or "
                      "choose another -o",
                      reads[i], e->out);
            return SG_EXIT_FAIL;
        }
    if (j->kind == KIND_ATC || (j->kind == KIND_REAL_OM && !e->map)) {
        char *exe = NULL;
        if (sg_atc_find(getenv("PATH"), getenv("ASCEND_TOOLKIT_HOME"), &exe, &d)) {
            cli_error("%s", d.msg);
            if (j->kind == KIND_ATC)
                cli_error("--target atc needs the CANN toolkit's atc; --target mock emulates it "
                          "on the CPU");
            else
                cli_error("mapping the real OM %s needs atc --mode=1: install the CANN toolkit "
                          "or give the map with -m MAP.json",
                          e->target);
            return SG_EXIT_FAIL;
        }
        sg_free(exe);
    }
    if (sg_model_load(e->model, NULL, &j->model, &d))
        return cli_fail(&d);
    if (sg_mockom_is(j->model)) {
        cli_error("%s is a mock OM; MODEL is the original ONNX model (the mock OM goes to "
                  "--target)",
                  e->model);
        return SG_EXIT_FAIL;
    }
    return SG_EXIT_OK;
}

/* --------------------------------------------------------------- runs */

/* Save the inputs as TMP/inputs/<name>.npy (names made unique). */
static sg_status save_inputs(struct job *j, struct sg_diag *d)
{
    char dir[PATH_MAX], path[PATH_MAX];
    if (!join_buf(dir, sizeof dir, j->tmp, "inputs"))
        return sg_diag_set(d, SG_EIO, "%s/inputs: path too long", j->tmp);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return sg_diag_set(d, SG_EIO, "cannot create '%s': %s", dir, strerror(errno));
    j->files = sg_calloc(j->n_values + 1, sizeof *j->files);
    j->shown = sg_calloc(j->n_values + 1, sizeof *j->shown);
    if (!j->files || !j->shown)
        return sg_diag_set(d, SG_ENOMEM, "out of memory");
    for (uint32_t r = 0; r < j->n_values; r++) {
        char safe[SG_DUMP_NAME_MAX + 1], rel[SG_DUMP_NAME_MAX + 32];
        sg_dump_sanitize(j->names[r], safe, SG_DUMP_NAME_MAX - 16);
        /* Two names may sanitize alike: number the later ones. */
        for (unsigned n = 0;; n++) {
            if (n)
                snprintf(rel, sizeof rel, "inputs/%s_%u.npy", safe, n);
            else
                snprintf(rel, sizeof rel, "inputs/%s.npy", safe);
            bool clash = false;
            for (uint32_t k = 0; k < r; k++)
                clash |= strcmp(j->files[k], rel) == 0;
            if (!clash)
                break;
        }
        if (!(j->files[r] = sg_strdup(rel)) || !(j->shown[r] = join(j->out, rel)))
            return sg_diag_set(d, SG_ENOMEM, "out of memory");
        if (!join_buf(path, sizeof path, j->tmp, rel))
            return sg_diag_set(d, SG_EIO, "%s/%s: path too long", j->tmp, rel);
        struct sg_array a;
        sg_status st = sg_rt_tensor_to_array(j->values[r], &a, d);
        if (st)
            return st;
        st = sg_npy_write(path, &a, d);
        sg_array_free(&a);
        if (st)
            return st;
    }
    return SG_OK;
}

/* Run model m into TMP/<dir> with every node dumped; `mock` when m is a
 * mock OM. The first (golden) run makes the inputs, later ones reuse them. */
static int run_dumped(struct job *j, sg_model *m, const char *label, const char *dirname, bool mock,
                      size_t *n_tensors)
{
    char dir[PATH_MAX];
    struct sg_diag d = {0};
    sg_dump *dump = NULL;
    sg_rt *rt = NULL;
    int rc = SG_EXIT_FAIL;
    if (!join_buf(dir, sizeof dir, j->tmp, dirname)) {
        cli_error("%s/%s: path too long", j->tmp, dirname);
        return SG_EXIT_FAIL;
    }
    if (mkdir(dir, 0777) != 0) {
        cli_error("cannot create '%s': %s", dir, strerror(errno));
        return SG_EXIT_FAIL;
    }
    if (sg_dump_create(dir, SG_DUMP_ALL, &dump, &d))
        goto fail;
    struct sg_rt_opts opts = {0};
    opts.threads = j->e->threads;
    opts.on_output = sg_dump_observe;
    opts.observe_ctx = dump;
    if (mock) {
        if (sg_rt_opts_mock(m, &opts, &d))
            goto fail_label;
        sg_dump_set_device_names(dump, true);
    }
    if (sg_rt_create(m, &opts, &rt, &d))
        goto fail_label;
    uint32_t n = sg_rt_n_inputs(rt);
    if (!j->values) {
        if (cli_inputs_load(&j->e->inputs, rt, &j->values, &d))
            goto fail;
        j->n_values = n;
        j->names = sg_calloc(n + 1, sizeof *j->names);
        if (!j->names) {
            rc = oom();
            goto out;
        }
        for (uint32_t r = 0; r < n; r++)
            j->names[r] = sg_rt_input(rt, r)->name;
        if (save_inputs(j, &d))
            goto fail;
    }
    for (uint32_t r = 0; r < n; r++) {
        const char *name = sg_rt_input(rt, r)->name;
        uint32_t k = 0;
        while (k < j->n_values && strcmp(j->names[k], name) != 0)
            k++;
        if (k == j->n_values) {
            cli_error("%s needs input '%s', which %s does not have: is it compiled from another "
                      "model?",
                      label, name, j->e->model);
            goto out;
        }
        if (sg_rt_set_input(rt, name, j->values[k], &d) ||
            sg_dump_input(dump, name, j->values[k], &d))
            goto fail_label;
    }
    if (sg_rt_run(rt, &d) || sg_dump_finish(dump, rt, &d))
        goto fail_label;
    *n_tensors = sg_dump_count(dump);
    rc = SG_EXIT_OK;
    goto out;
fail_label:
    sg_diag_prefix(&d, "%s", label);
fail:
    rc = cli_fail(&d);
out:
    sg_rt_free(rt);
    sg_dump_free(dump);
    return rc;
}

/* ------------------------------------------------------------ compile */

/* "x:1,3,224,224;y:4" from the parsed --input-shape entries (NULL: none). */
static char *shape_text(const struct cli_inputs *in)
{
    if (!in->n_shapes)
        return NULL;
    size_t cap = 1;
    for (size_t i = 0; i < in->n_shapes; i++)
        cap += strlen(in->shapes[i].name) + 2 + in->shapes[i].rank * 21;
    char *s = sg_malloc(cap);
    if (!s)
        return NULL;
    size_t len = 0;
    for (size_t i = 0; i < in->n_shapes; i++) {
        const struct cli_shape *sh = &in->shapes[i];
        len += (size_t)snprintf(s + len, cap - len, "%s%s:", i ? ";" : "", sh->name);
        for (uint32_t k = 0; k < sh->rank; k++)
            len += (size_t)snprintf(s + len, cap - len, "%s%lld", k ? "," : "",
                                    (long long)sh->dims[k]);
    }
    return s;
}

/* Compile MODEL (--target mock|atc) into TMP/<stem>.om and .json. */
static int compile(struct job *j)
{
    const struct cli_e2e *e = j->e;
    char *prefix = join(j->tmp, j->stem), *shown = join(j->out, j->stem);
    char *shapes = shape_text(&e->inputs);
    char *om = NULL, *map = NULL;
    int rc = SG_EXIT_FAIL;
    if (!prefix || !shown || (e->inputs.n_shapes && !shapes)) {
        rc = oom();
        goto out;
    }
    struct cli_atc_job job = {
        .cmd = &sg_cmd_compare,
        .model = e->model,
        .out = prefix,
        .soc = e->soc,
        .shape = shapes,
        .precision = e->precision,
        .keep_file = e->keep_file,
        .fusion = e->fusion,
        .overflow = e->overflow,
        .keep_ops = e->keep_ops,
        .keep_nodes = e->keep_nodes,
        .mock = j->kind == KIND_MOCK,
        .real = j->kind == KIND_ATC,
        .shown = shown,
        .quiet = e->quiet,
    };
    rc = cli_atc_compile(&job);
    if (rc != SG_EXIT_OK) {
        cli_error("compiling %s with %s failed", e->model, kind_label(j->kind));
        rc = rc == SG_EXIT_USAGE ? SG_EXIT_USAGE : SG_EXIT_FAIL;
        goto out;
    }
    if (j->kind == KIND_ATC) {
        size_t n = strlen(prefix) + 8;
        om = sg_malloc(n);
        map = sg_malloc(n);
        if (!om || !map) {
            rc = oom();
            goto out;
        }
        snprintf(om, n, "%s.om", prefix);
        snprintf(map, n, "%s.json", prefix);
        rc = cli_atc_to_json(&sg_cmd_compare, om, map, NULL, 0, false);
        if (rc != SG_EXIT_OK) {
            cli_error("mapping %s.om with atc --mode=1 failed", shown);
            rc = SG_EXIT_FAIL;
        }
    }
out:
    sg_free(prefix);
    sg_free(shown);
    sg_free(shapes);
    sg_free(om);
    sg_free(map);
    return rc;
}

/* The map of a given OM: TMP/<stem>.json, by surgeon (mock OM) or by atc
 * --mode=1 (real OM, unless -m gave it). */
static int map_given(struct job *j)
{
    const struct cli_e2e *e = j->e;
    if (j->kind == KIND_REAL_OM && e->map)
        return SG_EXIT_OK;
    char path[PATH_MAX], name[PATH_MAX];
    snprintf(name, sizeof name, "%s.json", j->stem);
    if (!join_buf(path, sizeof path, j->tmp, name)) {
        cli_error("%s/%s: path too long", j->tmp, name);
        return SG_EXIT_FAIL;
    }
    if (j->kind == KIND_MOCK_OM) {
        struct sg_diag d = {0};
        if (sg_mock_map_write(j->om, path, &d))
            return cli_fail(&d);
        return SG_EXIT_OK;
    }
    int rc = cli_atc_to_json(&sg_cmd_compare, e->target, path, NULL, 0, false);
    if (rc != SG_EXIT_OK) {
        cli_error("mapping %s with atc --mode=1 failed", e->target);
        rc = SG_EXIT_FAIL;
    }
    return rc;
}

/* ------------------------------------------------------------- record */

static void add_arg(struct cli_list *l, const char *a, bool *ok)
{
    if (!cli_list_add(l, a))
        *ok = false;
}

static void add_opt(struct cli_list *l, const char *opt, const char *value, bool *ok)
{
    if (!value)
        return;
    add_arg(l, opt, ok);
    add_arg(l, value, ok);
}

static void add_list(struct cli_list *l, const char *opt, const struct cli_list *v, bool *ok)
{
    if (!v->n)
        return;
    size_t n = 1;
    for (size_t i = 0; i < v->n; i++)
        n += strlen(v->v[i]) + 1;
    char *s = sg_malloc(n);
    if (!s) {
        *ok = false;
        return;
    }
    s[0] = '\0';
    for (size_t i = 0; i < v->n; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, v->v[i]);
    }
    add_opt(l, opt, s, ok);
    sg_free(s);
}

static void add_threshold(struct cli_list *l, const char *opt, double v, double def, bool *ok)
{
    if (v == def)
        return;
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", v);
    add_opt(l, opt, buf, ok);
}

/* The command that repeats this run on the saved inputs, quoted for a
 * shell; sg_malloc'd, NULL when out of memory. */
static char *repeat_command(const struct job *j)
{
    const struct cli_e2e *e = j->e;
    struct cli_list l = {0};
    bool ok = true;
    char *shapes = shape_text(&e->inputs);
    if (e->inputs.n_shapes && !shapes)
        ok = false;
    add_arg(&l, "surgeon", &ok);
    add_arg(&l, "compare", &ok);
    add_arg(&l, e->model, &ok);
    add_opt(&l, "--target", e->target, &ok);
    add_opt(&l, "--soc", e->soc, &ok);
    add_opt(&l, "--precision", e->precision, &ok);
    add_opt(&l, "--fusion", e->fusion, &ok);
    add_opt(&l, "--keep-dtype", e->keep_file, &ok);
    add_list(&l, "--keep", &e->keep_ops, &ok);
    add_list(&l, "--keep-nodes", &e->keep_nodes, &ok);
    add_opt(&l, "--overflow", e->overflow, &ok);
    add_opt(&l, "--input-shape", shapes, &ok);
    for (uint32_t r = 0; r < j->n_values; r++) {
        size_t n = strlen(j->names[r]) + strlen(j->shown[r]) + 2;
        char *a = sg_malloc(n);
        if (!a) {
            ok = false;
            break;
        }
        snprintf(a, n, "%s=%s", j->names[r], j->shown[r]);
        add_opt(&l, "-i", a, &ok);
        sg_free(a);
    }
    add_opt(&l, "-t", e->dumps, &ok);
    add_opt(&l, "-m", e->map, &ok);
    add_opt(&l, "-o", e->out, &ok);
    const struct sg_thresholds def = SG_THRESHOLDS_DEFAULT;
    add_threshold(&l, "--cosine", e->thresholds.cosine, def.cosine, &ok);
    add_threshold(&l, "--red", e->thresholds.red, def.red, &ok);
    add_threshold(&l, "--kl", e->thresholds.kl, def.kl, &ok);
    add_threshold(&l, "--rmse", e->thresholds.rmse, def.rmse, &ok);
    add_threshold(&l, "--mre", e->thresholds.mre, def.mre, &ok);
    char *line = NULL;
    if (ok && cli_list_add(&l, "") && l.n) {
        sg_free(l.v[l.n - 1]);
        l.v[l.n - 1] = NULL; /* the argv's terminator */
        line = sg_argv_format(l.v);
    }
    cli_list_free(&l);
    sg_free(shapes);
    return line;
}

struct record_ctx {
    const struct job *j;
    const char *repeat;
    const char *om, *map, *golden, *target_dumps;
};

static sg_status write_record_json(FILE *f, void *ctx)
{
    const struct record_ctx *c = ctx;
    const struct job *j = c->j;
    struct sg_json js;
    sg_json_init(&js, f, true);
    sg_json_object_begin(&js);
    sg_json_key(&js, "format");
    sg_json_string(&js, "surgeon-compare-run");
    sg_json_key(&js, "version");
    sg_json_int(&js, 1);
    sg_json_key(&js, "model");
    sg_json_string(&js, j->e->model);
    sg_json_key(&js, "target");
    sg_json_string(&js, j->e->target);
    sg_json_key(&js, "compiled");
    sg_json_string(&js, c->om);
    sg_json_key(&js, "map");
    sg_json_string(&js, c->map);
    sg_json_key(&js, "golden_dumps");
    sg_json_string(&js, c->golden);
    sg_json_key(&js, "target_dumps");
    sg_json_string(&js, c->target_dumps);
    sg_json_key(&js, "inputs");
    sg_json_array_begin(&js);
    for (uint32_t r = 0; r < j->n_values; r++) {
        sg_json_object_begin(&js);
        sg_json_key(&js, "name");
        sg_json_string(&js, j->names[r]);
        sg_json_key(&js, "file");
        sg_json_string(&js, j->shown[r]);
        sg_json_object_end(&js);
    }
    sg_json_array_end(&js);
    sg_json_key(&js, "repeat");
    sg_json_string(&js, c->repeat);
    sg_json_object_end(&js);
    fputc('\n', f);
    return ferror(f) ? SG_EIO : SG_OK;
}

/* Paths as they will be once TMP is OUT. */
static int write_record(struct job *j, const char *om, const char *map, const char *target_dumps,
                        char **repeat)
{
    char path[PATH_MAX];
    if (!join_buf(path, sizeof path, j->tmp, RECORD)) {
        cli_error("%s/%s: path too long", j->tmp, RECORD);
        return SG_EXIT_FAIL;
    }
    if (!(*repeat = repeat_command(j)))
        return oom();
    char *golden = join(j->out, "golden");
    if (!golden)
        return oom();
    struct record_ctx c = {j, *repeat, om, map, golden, target_dumps};
    struct sg_diag d = {0};
    sg_status st = sg_file_write_atomic_with(path, write_record_json, &c, &d);
    sg_free(golden);
    return st ? cli_fail(&d) : SG_EXIT_OK;
}

/* -------------------------------------------------------------- compare */

/* Compare OUT's runs and write the reports; *made is false when no
 * comparison could be made (bad input: OUT is then rolled back). */
static int compare(struct job *j, const char *map, const char *target_dumps, const char *repeat,
                   bool *made)
{
    const struct cli_e2e *e = j->e;
    *made = false;
    char *golden = join(j->out, "golden");
    if (!golden)
        return oom();
    struct sg_compare_opts opts;
    sg_compare_opts_init(&opts);
    opts.golden_dir = golden;
    opts.target_dir = target_dumps;
    opts.map_path = map;
    opts.model = j->model;
    opts.model_label = e->model;
    opts.thresholds = e->thresholds;
    opts.progress.fn = cli_compare_progress;
    opts.progress.ctx = &j->prog;
    struct sg_diag d = {0};
    sg_compare_result *r = NULL;
    char *csv = NULL;
    int rc;
    if (sg_compare_run(&opts, &r, &d) ||
        sg_compare_write_reports(r, j->out, time(NULL), &csv, &d)) {
        cli_progress_show(&j->prog, NULL);
        rc = cli_fail(&d);
        goto out;
    }
    *made = true;
    rc = cli_compare_conclude(r, csv, j->out, e->quiet);
    if (!e->quiet && rc != SG_EXIT_FAIL)
        printf("repeat: %s\n", repeat);
out:
    sg_free(csv);
    sg_free(golden);
    sg_compare_result_free(r);
    return rc;
}

/* ----------------------------------------------------------- the job */

static void job_free(struct job *j)
{
    cli_inputs_values_free(j->values, j->n_values);
    for (uint32_t r = 0; j->files && r < j->n_values; r++)
        sg_free(j->files[r]);
    for (uint32_t r = 0; j->shown && r < j->n_values; r++)
        sg_free(j->shown[r]);
    sg_free(j->files);
    sg_free(j->shown);
    sg_free(j->names);
    sg_model_free(j->om);
    sg_model_free(j->model);
    sg_free(j->stem);
    sg_free(j->out);
}

static void say(const struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct job *j, const char *fmt, ...)
{
    if (j->e->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* Golden run, compile, target run, record: everything that goes in TMP. */
static int make(struct job *j, char **om, char **map, char **target_dumps, char **repeat)
{
    const struct cli_e2e *e = j->e;
    int rc;
    cli_progress_show(&j->prog, "golden run (float32)");
    rc = run_dumped(j, j->model, e->model, "golden", false, &j->golden_tensors);
    cli_progress_show(&j->prog, NULL);
    if (rc)
        return rc;
    say(j, "golden run: %s in float32, %zu tensors -> %s/golden (inputs in %s/inputs)\n", e->model,
        j->golden_tensors, j->out, j->out);

    char name[PATH_MAX];
    if (j->kind == KIND_MOCK || j->kind == KIND_ATC) {
        cli_progress_show(&j->prog,
                          j->kind == KIND_MOCK ? "compiling (mock compiler)" : "compiling (atc)");
        rc = compile(j);
        cli_progress_show(&j->prog, NULL);
        if (rc)
            return rc;
        snprintf(name, sizeof name, "%s.om", j->stem);
        *om = join(j->out, name);
    } else {
        if ((rc = map_given(j)))
            return rc;
        *om = sg_strdup(e->target);
    }
    if (e->map) {
        *map = sg_strdup(e->map);
    } else {
        snprintf(name, sizeof name, "%s.json", j->stem);
        *map = join(j->out, name);
    }
    if (!*om || !*map)
        return oom();

    if (j->kind == KIND_MOCK || j->kind == KIND_MOCK_OM) {
        sg_model *m = j->om;
        sg_model *loaded = NULL;
        if (!m) {
            char path[PATH_MAX];
            snprintf(name, sizeof name, "%s.om", j->stem);
            struct sg_diag d = {0};
            if (!join_buf(path, sizeof path, j->tmp, name) ||
                sg_model_load(path, NULL, &loaded, &d))
                return cli_fail(&d);
            m = loaded;
        }
        const char *prec = sg_model_metadata(m, SG_MOCKOM_META_PRECISION);
        const char *ov = sg_model_metadata(m, SG_MOCKOM_META_OVERFLOW);
        cli_progress_show(&j->prog, "target run (float16 emulation)");
        rc = run_dumped(j, m, *om, "target", true, &j->target_tensors);
        cli_progress_show(&j->prog, NULL);
        if (!rc)
            say(j,
                "target run: %s (%s, overflow %s) with float16 emulation, %zu tensors -> "
                "%s/target\n",
                *om, prec ? prec : "?", ov ? ov : "?", j->target_tensors, j->out);
        sg_model_free(loaded);
        if (rc)
            return rc;
        *target_dumps = join(j->out, "target");
    } else {
        *target_dumps = sg_strdup(e->dumps);
        say(j, "target dumps: %s (from the device)\n", e->dumps);
    }
    if (!*target_dumps)
        return oom();
    return write_record(j, *om, *map, *target_dumps, repeat);
}

int cli_compare_e2e(const struct cli_e2e *e)
{
    struct job j = {.e = e, .prog = {.on = !e->quiet && isatty(STDERR_FILENO)}};
    char *om = NULL, *map = NULL, *target_dumps = NULL, *repeat = NULL;
    int rc;
    if (!e->target)
        return cli_usage(&sg_cmd_compare, "missing --target mock|atc|OM_FILE (or give the dump "
                                          "folders with -g and -t instead of MODEL)");
    if (strcmp(e->target, "mock") == 0)
        j.kind = KIND_MOCK;
    else if (strcmp(e->target, "atc") == 0)
        j.kind = KIND_ATC;
    else
        j.kind = KIND_MOCK_OM; /* settled by classify_file */
    if ((rc = check_usage(e, j.kind)))
        return rc;
    if (j.kind == KIND_MOCK_OM && (rc = classify_file(&j)))
        goto out;

    /* OUT without trailing slashes, so that OUT/golden reads well. */
    j.out = sg_strdup(e->out);
    j.stem = stem_of(j.kind >= KIND_MOCK_OM ? e->target : e->model);
    if (!j.out || !j.stem) {
        rc = oom();
        goto out;
    }
    for (size_t n = strlen(j.out); n > 1 && j.out[n - 1] == '/'; n--)
        j.out[n - 1] = '\0';
    if ((rc = check_inputs(&j)))
        goto out;

    struct sg_outdir od;
    struct sg_diag d = {0};
    if (sg_outdir_begin(&od, j.out, "compare", &d)) {
        rc = cli_fail(&d);
        goto out;
    }
    j.tmp = od.tmp;
    if ((rc = make(&j, &om, &map, &target_dumps, &repeat))) {
        cli_error("nothing was written to %s", e->out);
        sg_outdir_abort(&od);
        goto out;
    }
    if (sg_outdir_publish(&od, &d)) {
        rc = cli_fail(&d);
        sg_outdir_abort(&od);
        goto out;
    }
    bool made;
    rc = compare(&j, map, target_dumps, repeat, &made);
    if (!made) {
        /* Bad input found by the comparison: OUT goes back to what it was. */
        sg_outdir_abort(&od);
        cli_error("nothing was written to %s", e->out);
    } else if (sg_outdir_commit(&od, &d)) {
        rc = cli_fail(&d);
        cli_error("nothing was written to %s", e->out);
    }
out:
    sg_free(om);
    sg_free(map);
    sg_free(target_dumps);
    sg_free(repeat);
    job_free(&j);
    return rc;
}
