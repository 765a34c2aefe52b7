/*
 * check_passes.c - the pass manager: option parsing, YAML pipelines with
 * file:line:column errors, reports, idempotence, allocation failures, and
 * the golden pass tests.
 *
 * A golden file tests/golden/passes/NAME.golden holds a header
 *     model: exp_opset13.onnx        (made by models/make_models.py --tests)
 *     pass: insert-clip:position=after
 *     ----
 * and then the expected text: every pass report, a blank line, and the
 * sg_model_print_text dump of the rewritten model. The model is verified
 * after every pass and saved to BUILD/test-out/golden/NAME.onnx, where
 * tests/check_outputs.py runs onnx.checker on it. SG_UPDATE_GOLDEN=1
 * rewrites the expected text from what the code does (review the diff!).
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_pass.h"
#include "sg_print.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GOLDEN_DIR SG_SOURCE_DIR "/tests/golden/passes"
#define MODELS_DIR SG_BINARY_DIR "/test-models"

static const char *model_path(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", MODELS_DIR, name);
    return buf;
}

static sg_model *load(const char *name)
{
    struct sg_diag d = {0};
    sg_model *m = NULL;
    ck_assert_ok(sg_model_load(model_path(name), NULL, &m, &d), &d);
    return m;
}

static struct sg_pipeline *pipeline(const char *const *specs)
{
    struct sg_pipeline *p;
    struct sg_diag d = {0};
    ck_assert_int_eq(sg_pipeline_create(&p), SG_OK);
    p->verify = true;
    for (; *specs; specs++)
        ck_assert_ok(sg_pipeline_add_spec(p, *specs, &d), &d);
    return p;
}

/* ------------------------------------------------------------ options */

static const struct spec_case {
    const char *spec;
    sg_status status;
    const char *msg;
} spec_cases[] = {
    {"nope", SG_ENOTFOUND, "unknown pass 'nope'"},
    {"fold-constants:x=1", SG_EINVAL, "pass 'fold-constants' has no option 'x'"},
    {"fold-constants:max_bytes=-1", SG_ERANGE, "-1 is out of range"},
    {"fold-constants:max_bytes=0,keep_size=false,skip_ops=Shape,eliminate=false", SG_OK, NULL},
    {"fold-bn:ops=Conv,Gemm", SG_OK, NULL},
    {"insert-clip:foo=1", SG_EINVAL, "pass 'insert-clip' has no option 'foo'"},
    {"insert-clip:min=abc", SG_EPARSE, "option 'min' (number) expects a number, got 'abc'"},
    {"insert-clip:position=middle", SG_EPARSE, "expects one of before|after, got 'middle'"},
    {"insert-clip:inputs=-1", SG_ERANGE, "-1 is out of range [0, 1000]"},
    {"insert-clip:min=1,min=2", SG_EINVAL, "option 'min' is given twice"},
    {"insert-clip:ops", SG_EPARSE, "expected key=value at 'ops'"},
    {"cast-around:to=float99", SG_EPARSE, "expects an element type"},
    {"set-input-shape:shapes=x", SG_EPARSE, "expects NAME:d0,d1,... in 'x'"},
    {"set-input-shape:shapes=x:4,a-b", SG_EPARSE, "bad dimension name 'a-b'"},
    {"set-batch:batch=0", SG_ERANGE, "expects a positive integer or a name, got '0'"},
    {"remove-identity:dropout=maybe", SG_EPARSE, "expects true or false, got 'maybe'"},
    {"set-input-shape:shapes=x:4,77,40;mask:4,-1", SG_OK, NULL},
    {"insert-clip:ops=Exp,Log,position=after,max=inf", SG_OK, NULL},
    {"set-batch:batch=N", SG_OK, NULL},
};

/* Report lines: formats of `%s` only are joined directly, others go
 * through printf; both truncate at 511 bytes. */
START_TEST(test_report_lines)
{
    struct sg_pass_report r = {.pass = "t"};
    sg_report_change(&r, "joined", "%s %s in %s", "Exp_3", "output 0", "[-1, 1]");
    sg_report_info(&r, "printf", "%s has %d%% (%u)", "n", 50, 7u);
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sg_report_change(&r, "joined", "x%sy", big);
    ck_assert_uint_eq(r.changes, 2);
    ck_assert_uint_eq(r.n_items, 2);
    ck_assert_str_eq(r.items[0].names[0], "Exp_3 output 0 in [-1, 1]");
    ck_assert_str_eq(r.items[1].names[0], "n has 50% (7)");
    ck_assert_uint_eq(strlen(r.items[0].names[1]), 511);
    ck_assert_int_eq(r.items[0].names[1][0], 'x');
    sg_pass_report_clear(&r);
}
END_TEST

START_TEST(test_spec)
{
    const struct spec_case *c = &spec_cases[_i];
    struct sg_pipeline *p;
    struct sg_diag d = {0};
    ck_assert_int_eq(sg_pipeline_create(&p), SG_OK);
    sg_status st = sg_pipeline_add_spec(p, c->spec, &d);
    ck_assert_msg(st == c->status, "%s: got %s (%s), want %s", c->spec, sg_status_name(st), d.msg,
                  sg_status_name(c->status));
    if (c->msg)
        ck_assert_msg(strstr(d.msg, c->msg), "%s: message '%s' lacks '%s'", c->spec, d.msg, c->msg);
    ck_assert_uint_eq(p->n_steps, st == SG_OK ? 1 : 0);
    sg_pipeline_free(p);
}
END_TEST

START_TEST(test_spec_values)
{
    const char *specs[] = {"insert-clip:ops=Exp,Log,position=after,max=inf",
                           "set-input-shape:shapes=x:4,?,T;mask:4,-1", NULL};
    struct sg_pipeline *p = pipeline(specs);
    const struct sg_opt_value *o = p->steps[0].opts;
    ck_assert_uint_eq(o[0].n, 2);
    ck_assert_str_eq(o[0].strs[1], "Log");
    ck_assert(o[0].given && !o[1].present);
    ck_assert_str_eq(o[2].s, "after");
    ck_assert(o[4].present && o[4].f > 1e300);
    ck_assert(!o[3].present);
    ck_assert_uint_eq(o[5].n, 1); /* default inputs=0 */
    const struct sg_opt_value *s = &p->steps[1].opts[0];
    ck_assert_uint_eq(s->n_shapes, 2);
    ck_assert_str_eq(s->shapes[0].name, "x");
    ck_assert_uint_eq(s->shapes[0].rank, 3);
    ck_assert_int_eq(s->shapes[0].dims[1].kind, SG_DIM_UNSET);
    ck_assert_str_eq(s->shapes[0].dims[2].param, "T");
    ck_assert_int_eq(s->shapes[1].dims[1].kind, SG_DIM_UNSET);
    sg_pipeline_free(p);
}
END_TEST

/* --------------------------------------------------------------- YAML */

static const struct yaml_case {
    const char *text;
    sg_status status;
    const char *msg;
    size_t steps;
} yaml_cases[] = {
    {"passes:\n  - nope\n", SG_ENOTFOUND, "t.yaml:2:5: unknown pass 'nope'", 0},
    {"passes:\n  - insert-clip:\n      mn: 1\n", SG_EINVAL,
     "t.yaml:3:7: pass 'insert-clip' has no option 'mn'", 0},
    {"passes:\n  - insert-clip:\n      min: abc\n", SG_EPARSE,
     "t.yaml:3:12: insert-clip: option 'min' (number) expects a number, got 'abc'", 0},
    {"passes:\n  - insert-clip:\n      inputs: [0, x]\n", SG_EPARSE,
     "t.yaml:3:15: insert-clip: option 'inputs' (int list) expects an integer, got 'x'", 0},
    {"passes:\n  - cast-around:\n      from: [bool]\n", SG_EPARSE,
     "t.yaml:3:13: cast-around: option 'from' (dtype) expects a single dtype, not a list", 0},
    {"pases: []\n", SG_EPARSE, "t.yaml:1:1: unknown key 'pases'", 0},
    {"passes: [\n", SG_EPARSE, "t.yaml:2:1: did not find expected node content", 0},
    {"verify: maybe\npasses: []\n", SG_EPARSE, "t.yaml:1:9: 'verify' expects true or false", 0},
    {"passes:\n  - fold-constants:\n      max_bytes: lots\n", SG_EPARSE,
     "t.yaml:3:18: fold-constants: option 'max_bytes' (int) expects an integer, got 'lots'", 0},
    {"passes:\n  - remove-identity\n  - a: 1\n    b: 2\n", SG_EPARSE,
     "t.yaml:3:5: a pass is written NAME or NAME: {options}", 0},
    {"", SG_EPARSE, "t.yaml:1:1: empty pipeline", 0},
    {"passes: x\n", SG_EPARSE, "t.yaml:1:9: 'passes' must be a list", 0},
    /* 65 levels (root mapping, then 64 lists): refused from the events. */
    {"passes: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", SG_ETOOBIG,
     "t.yaml:1:72: nested deeper than 64 levels", 0},
    {"passes: []\n---\npasses: []\n", SG_EPARSE, "t.yaml:2:1: a second YAML document", 0},
    {"verify: true\npasses:\n  - remove-identity\n  - set-input-shape:\n"
     "      shapes: {x: [4, 77, 40], mask: [4, -1]}\n  - insert-clip:\n      ops: [Exp, Log]\n"
     "      min: -.inf\n",
     SG_OK, NULL, 3},
};

START_TEST(test_yaml)
{
    const struct yaml_case *c = &yaml_cases[_i];
    struct sg_pipeline *p;
    struct sg_diag d = {0};
    ck_assert_int_eq(sg_pipeline_create(&p), SG_OK);
    sg_status st = sg_pipeline_parse_yaml(p, c->text, strlen(c->text), "t.yaml", NULL, &d);
    ck_assert_msg(st == c->status, "case %d: got %s (%s)", _i, sg_status_name(st), d.msg);
    if (c->msg)
        ck_assert_msg(strstr(d.msg, c->msg), "case %d: message '%s' lacks '%s'", _i, d.msg, c->msg);
    ck_assert_uint_eq(p->n_steps, c->steps);
    if (st == SG_OK) {
        ck_assert(p->verify);
        const struct sg_opt_value *s = &p->steps[1].opts[0];
        ck_assert_uint_eq(s->n_shapes, 2);
        ck_assert_int_eq(s->shapes[0].dims[2].value, 40);
        ck_assert(p->steps[2].opts[3].f < -1e300);
    }
    sg_pipeline_free(p);
}
END_TEST

START_TEST(test_yaml_file)
{
    struct sg_pipeline *p;
    struct sg_diag d = {0};
    ck_assert_int_eq(sg_pipeline_create(&p), SG_OK);
    const char *configs[] = {"fix-fp16-overflow.yaml", "fix-expand-bool.yaml", "rebatch.yaml",
                             "cleanup.yaml"};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/configs/%s", SG_SOURCE_DIR, configs[i]);
        ck_assert_ok(sg_pipeline_load_yaml(p, path, &d), &d);
    }
    ck_assert_uint_ge(p->n_steps, 4);
    sg_status st = sg_pipeline_load_yaml(p, "/nonexistent/p.yaml", &d);
    ck_assert_int_eq(st, SG_EIO);
    ck_assert(strstr(d.msg, "/nonexistent/p.yaml: cannot open: "));
    sg_pipeline_free(p);
}
END_TEST

/* ----------------------------------------------------- manager behaviour */

START_TEST(test_registry)
{
    size_t n;
    const struct sg_pass *const *all = sg_pass_list(&n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_eq(sg_pass_find(all[i]->name), all[i]);
        ck_assert_ptr_nonnull(all[i]->run);
        for (size_t k = 0; k < all[i]->n_options; k++)
            ck_assert_ptr_nonnull(all[i]->options[k].help);
    }
    ck_assert_ptr_nonnull(sg_pass_find("fold-constants"));
    ck_assert_ptr_nonnull(sg_pass_find("fold-bn"));
    ck_assert_ptr_nonnull(sg_pass_find("infer-shapes"));
    ck_assert_uint_eq(n, 15);
}
END_TEST

/* A pass that finds nothing reports 0 changes and succeeds. */
START_TEST(test_zero_changes)
{
    const char *specs[] = {"insert-clip",
                           "cast-around",
                           "remove-identity",
                           "merge-casts",
                           "toposort",
                           "eliminate-dead",
                           "to-fp16:keep_ops=Relu",
                           "unique-names",
                           "fold-constants",
                           "fold-bn",
                           NULL};
    struct sg_pipeline *p = pipeline(specs);
    sg_model *m = load("no_exp.onnx");
    struct sg_run_report rep = {0};
    struct sg_diag d = {0};
    ck_assert_ok(sg_pipeline_run(p, m, &rep, &d), &d);
    ck_assert_uint_eq(rep.n, 10);
    ck_assert_uint_eq(rep.changes, 0);
    for (size_t i = 0; i < rep.n; i++)
        ck_assert_uint_eq(rep.passes[i].changes, 0);
    sg_run_report_clear(&rep);
    sg_model_free(m);
    sg_pipeline_free(p);
}
END_TEST

/* A report asked for counts only (optimize -q) counts what a full one
 * counts and keeps no names. */
START_TEST(test_report_counts_only)
{
    const char *specs[] = {"insert-clip", NULL};
    struct sg_pipeline *p = pipeline(specs);
    struct sg_run_report full = {0}, counts = {.counts_only = true};
    struct sg_diag d = {0};
    sg_model *a = load("exp_opset13.onnx"), *b = load("exp_opset13.onnx");
    ck_assert_ok(sg_pipeline_run(p, a, &full, &d), &d);
    ck_assert_ok(sg_pipeline_run(p, b, &counts, &d), &d);
    ck_assert_uint_gt(full.changes, 0);
    ck_assert_uint_eq(counts.changes, full.changes);
    ck_assert_uint_eq(counts.passes[0].n_items, full.passes[0].n_items);
    for (size_t i = 0; i < full.passes[0].n_items; i++) {
        ck_assert_uint_eq(counts.passes[0].items[i].count, full.passes[0].items[i].count);
        ck_assert_uint_gt(full.passes[0].items[i].n_names, 0);
        ck_assert_uint_eq(counts.passes[0].items[i].n_names, 0);
    }
    sg_run_report_clear(&full);
    sg_run_report_clear(&counts);
    sg_model_free(a);
    sg_model_free(b);
    sg_pipeline_free(p);
}
END_TEST

/* Running a fix twice changes nothing the second time. */
static const struct idem_case {
    const char *model;
    const char *spec;
} idem_cases[] = {
    {"exp_opset13.onnx", "insert-clip"},
    {"exp_opset6.onnx", "insert-clip:position=after"},
    {"exp_fp16.onnx", "insert-clip"},
    {"if_exp.onnx", "insert-clip"},
    {"expand_bool.onnx", "cast-around"},
    {"identities.onnx", "remove-identity:dropout=true"},
    {"casts.onnx", "merge-casts"},
    {"names.onnx", "unique-names"},
    {"unsorted.onnx", "toposort"},
    {"rebatch.onnx", "set-batch:batch=8,force=true"},
    {"shaped.onnx", "set-input-shape:shapes=x:4,4,16;mask:4,4,16"},
    {"exp_overflow.onnx", "to-fp16"},
    {"dead.onnx", "eliminate-dead:inputs=true"},
    {"fold_consts.onnx", "fold-constants:shapes=true"},
    {"fold_if.onnx", "fold-constants"},
    {"fold_bn.onnx", "fold-bn"},
    {"fold_bn_if.onnx", "fold-bn"},
};

START_TEST(test_idempotent)
{
    const struct idem_case *c = &idem_cases[_i];
    const char *specs[] = {c->spec, c->spec, NULL};
    struct sg_pipeline *p = pipeline(specs);
    sg_model *m = load(c->model);
    struct sg_run_report rep = {0};
    struct sg_diag d = {0};
    ck_assert_ok(sg_pipeline_run(p, m, &rep, &d), &d);
    ck_assert_msg(rep.passes[0].changes > 0, "%s on %s changed nothing", c->spec, c->model);
    ck_assert_msg(rep.passes[1].changes == 0, "%s on %s: second run made %zu changes", c->spec,
                  c->model, rep.passes[1].changes);
    sg_run_report_clear(&rep);
    sg_model_free(m);
    sg_pipeline_free(p);
}
END_TEST

/* Bad options found at run time fail cleanly and name the pass. */
static const struct run_error {
    const char *model;
    const char *spec;
    const char *msg;
} run_errors[] = {
    {"exp_opset13.onnx", "insert-clip:min=5,max=1", "pass 'insert-clip': min (5) must be below"},
    {"shaped.onnx", "set-input-shape:shapes=nope:1", "the model has no input 'nope'"},
    {"shaped.onnx", "set-input-shape:shapes=x:1,4", "input 'x' has rank 3; the shape gives 2"},
    {"shaped.onnx", "set-batch:batch=2,inputs=r", "the model has no input 'r'"},
    {"shaped.onnx", "rename", "rename needs a prefix, a suffix or a map file"},
    {"shaped.onnx", "rename:map=/nonexistent.map", "map file: /nonexistent.map: cannot open: "},
    {"shaped.onnx", "rename:prefix=m,target=values,io=true",
     "cannot rename value 'mask' to 'mmask'"},
    {"expand_bool.onnx", "cast-around:from=int32,to=int32", "'from' and 'to' are both int32"},
};

START_TEST(test_run_errors)
{
    const struct run_error *c = &run_errors[_i];
    const char *specs[] = {c->spec, NULL};
    struct sg_pipeline *p = pipeline(specs);
    sg_model *m = load(c->model);
    if (strstr(c->spec, "target=values")) {
        /* Make the collision: a value already named 'mmask'. */
        struct sg_diag d0 = {0};
        ck_assert_ok(sg_graph_add_value(m->graph, "mmask", NULL, NULL, &d0), &d0);
    }
    struct sg_run_report rep = {0};
    struct sg_diag d = {0};
    sg_status st = sg_pipeline_run(p, m, &rep, &d);
    ck_assert_int_ne(st, SG_OK);
    ck_assert_msg(strstr(d.msg, c->msg), "message '%s' lacks '%s'", d.msg, c->msg);
    sg_run_report_clear(&rep);
    sg_model_free(m);
    sg_pipeline_free(p);
}
END_TEST

/* Fail the N-th allocation for N = 1, 2, ...: every run ends in SG_OK or
 * SG_ENOMEM, and nothing leaks. */
static const struct alloc_case {
    const char *model;
    const char *specs[6];
} alloc_cases[] = {
    {"exp_overflow.onnx", {"insert-clip", "to-fp16", "merge-casts", "eliminate-dead", NULL}},
    {"if_exp.onnx", {"insert-clip:position=after", "remove-identity", "unique-names", NULL}},
    {"rebatch.onnx",
     {"set-batch:batch=8,force=true", "toposort", "rename:prefix=p_,target=all", NULL}},
    {"expand_bool.onnx", {"cast-around", "set-input-shape:shapes=x:1,4", NULL}},
    {"fold_consts.onnx", {"fold-constants:shapes=true", NULL}},
    {"fold_if.onnx", {"fold-constants", NULL}},
    {"fold_bn.onnx", {"fold-bn", NULL}},
    {"fold_bn_if.onnx", {"fold-bn", NULL}},
};

START_TEST(test_alloc_failure)
{
    const struct alloc_case *c = &alloc_cases[_i];
    struct sg_pipeline *p = pipeline(c->specs);
    uint8_t *buf;
    size_t len;
    struct sg_diag d = {0};
    sg_model *orig = load(c->model);
    ck_assert_ok(sg_model_save_buffer(orig, &buf, &len, &d), &d);
    sg_model_free(orig);
    for (uint64_t n = 1;; n++) {
        sg_model *m = NULL;
        sg_diag_clear(&d);
        ck_assert_ok(sg_model_load_buffer(buf, len, NULL, c->model, NULL, &m, &d), &d);
        int64_t live = sg_alloc_live();
        struct sg_run_report rep = {0};
        sg_alloc_fail_at(n);
        sg_status st = sg_pipeline_run(p, m, &rep, &d);
        uint64_t made = sg_alloc_fail_at(0);
        ck_assert_msg(st == SG_OK || st == SG_ENOMEM, "n=%llu: %s (%s)", (unsigned long long)n,
                      sg_status_name(st), d.msg);
        sg_run_report_clear(&rep);
        sg_model_free(m);
        ck_assert_int_le(sg_alloc_live(), live);
        if (st == SG_OK) {
            ck_assert_uint_lt(made, n);
            break;
        }
        ck_assert_uint_lt(n, 100000);
    }
    sg_free(buf);
    sg_pipeline_free(p);
}
END_TEST

/* ------------------------------------------------------------- golden */

static char **golden;
static int n_golden;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_golden(void)
{
    if (golden)
        return;
    DIR *dir = opendir(GOLDEN_DIR);
    if (!dir)
        return;
    struct dirent *e;
    int cap = 0;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 7, ".golden") != 0)
            continue;
        if (n_golden == cap) {
            cap = cap ? cap * 2 : 32;
            golden = realloc(golden, (size_t)cap * sizeof *golden);
        }
        golden[n_golden++] = strdup(e->d_name);
    }
    closedir(dir);
    qsort(golden, (size_t)n_golden, sizeof *golden, cmp_str);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void first_difference(const char *want, const char *got, char *out, size_t size)
{
    int line = 1;
    const char *w = want, *g = got;
    while (*w && *w == *g) {
        if (*w == '\n')
            line++;
        w++, g++;
    }
    const char *we = strchr(w, '\n'), *ge = strchr(g, '\n');
    snprintf(out, size, "line %d\n  want: %.*s\n  got:  %.*s", line,
             (int)(we ? we - w : (long)strlen(w)), w, (int)(ge ? ge - g : (long)strlen(g)), g);
}

START_TEST(test_golden)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, golden[_i]);
    char *text = read_all(path);
    char *sep = strstr(text, "\n----\n");
    ck_assert_msg(sep != NULL, "%s: no '----' line", golden[_i]);
    size_t header_len = (size_t)(sep - text) + 6;
    char *expected = sep + 6;
    char *header = strndup(text, header_len);

    struct sg_pipeline *p;
    struct sg_diag d = {0};
    ck_assert_int_eq(sg_pipeline_create(&p), SG_OK);
    p->verify = true;
    const char *model = NULL;
    for (char *line = strtok(header, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "model: ", 7) == 0)
            model = line + 7;
        else if (strncmp(line, "pass: ", 6) == 0) {
            char spec[2048];
            const char *src = strstr(line, "$SRC");
            if (src)
                snprintf(spec, sizeof spec, "%.*s%s%s", (int)(src - line - 6), line + 6,
                         SG_SOURCE_DIR, src + 4);
            else
                snprintf(spec, sizeof spec, "%s", line + 6);
            ck_assert_ok(sg_pipeline_add_spec(p, spec, &d), &d);
        } else if (strncmp(line, "config: ", 8) == 0) {
            char cfg[1024];
            snprintf(cfg, sizeof cfg, "%s/%s", SG_SOURCE_DIR, line + 8);
            ck_assert_ok(sg_pipeline_load_yaml(p, cfg, &d), &d);
        }
    }
    ck_assert_msg(model && p->n_steps, "%s: needs model: and pass: lines", golden[_i]);
    sg_model *m = load(model);
    struct sg_run_report rep = {0};
    ck_assert_ok(sg_pipeline_run(p, m, &rep, &d), &d);

    char *got = NULL;
    size_t got_len = 0;
    FILE *f = open_memstream(&got, &got_len);
    for (size_t i = 0; i < rep.n; i++)
        sg_pass_report_print(&rep.passes[i], f, 0);
    fputc('\n', f);
    ck_assert_int_eq(sg_model_print_text(m, f), SG_OK);
    fclose(f);

    if (getenv("SG_UPDATE_GOLDEN")) {
        FILE *w = fopen(path, "wb");
        fwrite(text, 1, header_len, w);
        fwrite(got, 1, got_len, w);
        fclose(w);
    } else if (strcmp(expected, got) != 0) {
        char diff[2048];
        first_difference(expected, got, diff, sizeof diff);
        ck_abort_msg("%s differs at %s", golden[_i], diff);
    }

    /* Save for onnx.checker (tests/check_outputs.py). */
    char out[1024];
    snprintf(out, sizeof out, "%s/test-out", SG_BINARY_DIR);
    mkdir(out, 0755);
    snprintf(out, sizeof out, "%s/test-out/golden", SG_BINARY_DIR);
    mkdir(out, 0755);
    snprintf(out, sizeof out, "%s/test-out/golden/%.*s.onnx", SG_BINARY_DIR,
             (int)(strlen(golden[_i]) - 7), golden[_i]);
    ck_assert_ok(sg_model_save(m, out, NULL, &d), &d);

    free(got);
    sg_run_report_clear(&rep);
    sg_model_free(m);
    sg_pipeline_free(p);
    free(header);
    free(text);
}
END_TEST

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

Suite *suite_passes(void)
{
    Suite *s = suite_create("passes");
    TCase *tc = tcase_create("manager");
    tcase_add_loop_test(tc, test_spec, 0, COUNT(spec_cases));
    tcase_add_test(tc, test_spec_values);
    tcase_add_test(tc, test_report_lines);
    tcase_add_test(tc, test_report_counts_only);
    tcase_add_loop_test(tc, test_yaml, 0, COUNT(yaml_cases));
    tcase_add_test(tc, test_yaml_file);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_zero_changes);
    tcase_add_loop_test(tc, test_idempotent, 0, COUNT(idem_cases));
    tcase_add_loop_test(tc, test_run_errors, 0, COUNT(run_errors));
    suite_add_tcase(s, tc);
    TCase *alloc = tcase_create("alloc");
    tcase_set_timeout(alloc, 120);
    tcase_add_loop_test(alloc, test_alloc_failure, 0, COUNT(alloc_cases));
    suite_add_tcase(s, alloc);
    list_golden();
    TCase *gold = tcase_create("golden");
    tcase_add_loop_test(gold, test_golden, 0, n_golden);
    suite_add_tcase(s, gold);
    return s;
}
