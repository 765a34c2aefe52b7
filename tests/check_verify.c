/*
 * check_verify.c - the workflows of verify/sg_verify.h as library calls:
 * option checks that fail with SG_EINVAL only and name the option; run
 * inputs from the command-line forms; a dumped golden run that makes its
 * inputs and a mock OM run that reuses them by name; the compile job's
 * events (no printing); the end-to-end compare into a folder, which a
 * failure leaves as it was.
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_mockom.h"
#include "sg_verify.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *seed_model(void)
{
    return test_src_path("models/exp_overflow.onnx");
}

/* ------------------------------------------------------------- events */

struct seen {
    char text[8192];
    size_t n[SG_VERIFY_EVENT_COUNT];
};

static void collect(void *ctx, enum sg_verify_event kind, const char *text)
{
    struct seen *s = ctx;
    s->n[kind]++;
    if (text) {
        size_t len = strlen(s->text);
        snprintf(s->text + len, sizeof s->text - len, "%d:%s\n", (int)kind, text);
    }
}

/* --------------------------------------------------------- the checks */

static const struct {
    struct sg_verify_compile_opts o;
    const char *want; /* NULL: passes */
} compile_cases[] = {
    {{.model = "m.onnx", .out = "o", .soc = "Ascend910B1"}, NULL},
    {{.model = "m.onnx", .out = "o"}, "missing --soc"},
    {{.model = "m.onnx", .out = "o", .soc = "Ascend 910"}, "bad --soc 'Ascend 910'"},
    {{.model = "m.onnx", .out = "o", .soc = "Ascend910B1", .precision = "fp99"},
     "unknown precision mode 'fp99' (valid: force_fp16"},
    {{.model = "m.onnx", .out = "o", .soc = "Ascend910B1", .log = "loud"},
     "unknown --log level 'loud'"},
    {{.model = "m.onnx",
      .out = "o",
      .soc = "Ascend910B1",
      .keep_dtype = "k.cfg",
      .keep_ops = (const char *const[]){"Exp"},
      .n_keep_ops = 1},
     "exclude each other"},
    {{.model = "m.onnx",
      .out = "o",
      .soc = "Ascend910B1",
      .overflow = "maybe",
      .compiler = SG_VERIFY_COMPILER_MOCK},
     "--overflow takes inf or saturation"},
    {{.model = "m.onnx",
      .out = "o",
      .soc = "Ascend910B1",
      .overflow = "inf",
      .compiler = SG_VERIFY_COMPILER_ATC},
     "--overflow sets the mock compiler's overflow mode"},
    {{.model = "m.onnx",
      .out = "o",
      .soc = "Ascend910B1",
      .overflow = "inf",
      .compiler = SG_VERIFY_COMPILER_MOCK},
     NULL},
    {{.model = "m.onnx", .out = "o", .soc = "Ascend910B1", .input_shape = "x:1,,2"},
     "column 5: bad dimension"},
    {{.model = "m.onnx",
      .out = "o",
      .soc = "Ascend910B1",
      .keep_nodes = (const char *const[]){" Exp_3"},
      .n_keep_nodes = 1},
     "Exp_3"},
    {{.model = "m.onnx",
      .out = "o",
      .soc = "Ascend910B1",
      .extra = (const char *const[]){"--soc_version=Ascend310P3"},
      .n_extra = 1},
     "--soc_version=Ascend310P3"},
};

START_TEST(test_compile_check)
{
    struct sg_diag d = {0};
    sg_status st = sg_verify_compile_check(&compile_cases[_i].o, &d);
    const char *want = compile_cases[_i].want;
    if (!want) {
        ck_assert_ok(st, &d);
    } else {
        ck_assert_msg(st == SG_EINVAL, "case %d: %s, want SG_EINVAL", _i, sg_status_name(st));
        ck_assert_msg(strstr(d.msg, want), "case %d: '%s' lacks '%s'", _i, d.msg, want);
    }
}
END_TEST

START_TEST(test_compare_check)
{
    struct sg_verify_inputs in, ranged;
    sg_verify_inputs_init(&in);
    sg_verify_inputs_init(&ranged);
    ck_assert(sg_verify_inputs_set_range(&ranged, "0,5"));
    const struct {
        struct sg_verify_compare_opts o;
        enum sg_verify_target kind;
        const char *want;
    } cases[] = {
        {{.model = "m", .target = "mock", .out = "o", .inputs = &in, .soc = "Ascend910B1"},
         SG_VERIFY_TARGET_MOCK,
         NULL},
        {{.model = "m", .target = "mock", .inputs = &in, .soc = "Ascend910B1"},
         SG_VERIFY_TARGET_MOCK,
         "missing -o OUT"},
        {{.model = "m", .target = "mock", .out = "o", .inputs = &in},
         SG_VERIFY_TARGET_MOCK,
         "--target mock needs --soc SOC"},
        {{.model = "m", .target = "mock", .out = "o", .inputs = &ranged, .soc = "Ascend910B1"},
         SG_VERIFY_TARGET_MOCK,
         "--range needs --random"},
        {{.model = "m", .target = "x.om", .out = "o", .inputs = &in, .soc = "Ascend910B1"},
         SG_VERIFY_TARGET_FILE,
         "--soc is a compile option; --target x.om is compiled already"},
        {{.model = "m", .target = "atc", .out = "o", .inputs = &in, .soc = "Ascend910B1"},
         SG_VERIFY_TARGET_ATC,
         "runs only on an Ascend device"},
        {{.model = "m", .target = "x.om", .out = "o", .inputs = &in},
         SG_VERIFY_TARGET_REAL_OM,
         "give them with -t DIR"},
        {{.model = "m", .target = "x.om", .out = "o", .inputs = &in, .dumps = "dev"},
         SG_VERIFY_TARGET_MOCK_OM,
         "x.om is a mock OM, which runs here"},
        {{.model = "m",
          .target = "mock",
          .out = "o",
          .inputs = &in,
          .soc = "Ascend910B1",
          .keep_ops = (const char *const[]){"Exp "},
          .n_keep_ops = 1},
         SG_VERIFY_TARGET_MOCK,
         "Exp"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sg_diag d = {0};
        sg_status st = sg_verify_compare_check(&cases[i].o, cases[i].kind, &d);
        if (!cases[i].want) {
            ck_assert_ok(st, &d);
            continue;
        }
        ck_assert_msg(st == SG_EINVAL, "case %zu: %s", i, sg_status_name(st));
        ck_assert_msg(strstr(d.msg, cases[i].want), "case %zu: '%s' lacks '%s'", i, d.msg,
                      cases[i].want);
    }
    sg_verify_inputs_free(&in);
    sg_verify_inputs_free(&ranged);
}
END_TEST

START_TEST(test_inputs_parse)
{
    struct sg_verify_inputs in;
    sg_verify_inputs_init(&in);
    ck_assert(sg_verify_inputs_add_shapes(&in, "x:1,3,224,224;in:0:4"));
    ck_assert_uint_eq(in.n_shapes, 2);
    ck_assert_str_eq(in.shapes[1].name, "in:0");
    ck_assert_uint_eq(in.shapes[1].rank, 1);
    char *text = sg_verify_inputs_shape_text(&in);
    ck_assert_str_eq(text, "x:1,3,224,224;in:0:4");
    sg_free(text);
    ck_assert(!sg_verify_inputs_add_shapes(&in, "y:-1"));
    ck_assert(sg_verify_inputs_set_seed(&in, "42") && in.random && in.seed == 42);
    ck_assert(!sg_verify_inputs_set_seed(&in, "-1"));
    ck_assert(!sg_verify_inputs_set_range(&in, "5,0"));
    ck_assert(sg_verify_inputs_set_range(&in, "-1,2.5") && in.lo == -1 && in.hi == 2.5);
    ck_assert(sg_verify_inputs_add_file(&in, "x=a.npy"));
    ck_assert_str_eq(in.files[0], "x=a.npy");
    sg_verify_inputs_free(&in);
    ck_assert_uint_eq(in.n_files, 0);
    sg_verify_inputs_free(&in); /* twice is fine */
}
END_TEST

/* ------------------------------------------------------------- the runs */

static size_t count_npy(const char *dir)
{
    DIR *dd = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && strcmp(e->d_name + len - 4, ".npy") == 0;
    }
    if (dd)
        closedir(dd);
    return n;
}

START_TEST(test_run_golden_then_mock)
{
    char *tmp = test_tmpdir("verify_run");
    char golden[1100], target[1100], prefix[1100], om_path[1100];
    snprintf(golden, sizeof golden, "%s/golden", tmp);
    snprintf(target, sizeof target, "%s/target", tmp);
    snprintf(prefix, sizeof prefix, "%s/m", tmp);
    snprintf(om_path, sizeof om_path, "%s/m.om", tmp);
    ck_assert_int_eq(mkdir(golden, 0777), 0);
    ck_assert_int_eq(mkdir(target, 0777), 0);
    struct sg_diag d = {0};
    sg_model *m = NULL;
    ck_assert_ok(sg_model_load(seed_model(), NULL, &m, &d), &d);

    struct sg_verify_inputs in;
    sg_verify_inputs_init(&in);
    ck_assert(sg_verify_inputs_set_seed(&in, "1"));
    struct sg_verify_values values = {0};
    struct sg_verify_run_opts ro = {.dump_dir = golden, .dump = SG_DUMP_ALL, .label = "seed"};
    struct sg_verify_run_info info;
    ck_assert_ok(sg_verify_run(m, &ro, &in, &values, &info, &d), &d);
    ck_assert_uint_eq(values.n, 1);
    ck_assert_str_eq(values.names[0], "x");
    ck_assert(!info.mock);
    ck_assert_uint_eq(info.n_tensors, 10);
    ck_assert_uint_eq(count_npy(golden), 10);

    /* Compile with the mock, through the events: nothing is printed. */
    struct seen seen = {0};
    struct sg_verify_events ev = {.fn = collect, .ctx = &seen};
    struct sg_verify_compile_opts co = {.model = seed_model(),
                                        .out = prefix,
                                        .soc = "Ascend910B1",
                                        .precision = "force_fp16",
                                        .compiler = SG_VERIFY_COMPILER_MOCK};
    struct sg_verify_compile_result cr = {0};
    ck_assert_ok(sg_verify_compile(&co, &ev, &cr, &d), &d);
    ck_assert_int_eq(cr.compiler, SG_VERIFY_COMPILER_MOCK);
    ck_assert_msg(strstr(cr.command, "--soc_version=Ascend910B1"), "%s", cr.command);
    ck_assert_msg(strstr(seen.text, "mock compiler: "), "%s", seen.text);
    ck_assert_msg(strstr(seen.text, "AutomaticUbFusion"), "%s", seen.text);
    sg_verify_compile_clear(&cr);

    /* The mock OM runs on the golden run's values, taken by name. */
    sg_model *om = NULL;
    ck_assert_ok(sg_model_load(om_path, NULL, &om, &d), &d);
    ro.dump_dir = target;
    ck_assert_ok(sg_verify_run(om, &ro, NULL, &values, &info, &d), &d);
    ck_assert(info.mock);
    ck_assert_str_eq(info.overflow, "inf");
    ck_assert_str_eq(info.precision, "force_fp16");
    ck_assert_uint_eq(info.n_tensors, 5);

    /* Values without the input the model needs: named in the error. */
    struct sg_verify_values wrong = values;
    char *renamed[1] = {"y"};
    wrong.names = renamed;
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_verify_run(om, &ro, NULL, &wrong, NULL, &d), SG_ENOTFOUND);
    ck_assert_msg(strstr(d.msg, "needs input 'x'"), "%s", d.msg);

    /* Saved inputs: sanitized, numbered where they would share a file. */
    char saved[1100];
    snprintf(saved, sizeof saved, "%s/saved", tmp);
    struct sg_verify_values two = {0};
    char *names2[2] = {"a.b", "a/b"};
    sg_rt_value *vals2[2] = {values.values[0], values.values[0]};
    two.n = 2;
    two.names = names2;
    two.values = vals2;
    char *files[2] = {0};
    ck_assert_ok(sg_verify_values_save(&two, saved, files, &d), &d);
    ck_assert_str_eq(files[0], "a_b.npy");
    ck_assert_str_eq(files[1], "a_b_1.npy");
    sg_free(files[0]);
    sg_free(files[1]);

    sg_verify_values_clear(&values);
    ck_assert_uint_eq(values.n, 0);
    sg_verify_inputs_free(&in);
    sg_model_free(om);
    sg_model_free(m);
    sg_free(tmp);
}
END_TEST

/* ---------------------------------------------------- the whole workflow */

START_TEST(test_compare_model)
{
    char *tmp = test_tmpdir("verify_e2e");
    char out[1024], path[1200];
    snprintf(out, sizeof out, "%s/out", tmp);
    struct sg_verify_inputs in;
    sg_verify_inputs_init(&in);
    ck_assert(sg_verify_inputs_set_seed(&in, "1"));
    ck_assert(sg_verify_inputs_set_range(&in, "0,5"));
    struct sg_verify_compare_opts o = {.model = seed_model(),
                                       .target = "mock",
                                       .out = out,
                                       .inputs = &in,
                                       .soc = "Ascend910B1",
                                       .precision = "force_fp16",
                                       .thresholds = SG_THRESHOLDS_DEFAULT};
    struct seen seen = {0};
    struct sg_verify_events ev = {.fn = collect, .ctx = &seen};
    struct sg_diag d = {0};
    sg_verify_compare_result *r = NULL;
    ck_assert_ok(sg_verify_compare_model(&o, &ev, &r, &d), &d);
    ck_assert_int_eq(r->target, SG_VERIFY_TARGET_MOCK);
    ck_assert_int_eq(r->compare->analysis.verdict, SG_VERDICT_FAIL);
    ck_assert_int_eq(r->compare->analysis.cause, SG_CAUSE_OVERFLOW);
    ck_assert_uint_eq(r->golden_tensors, 10);
    ck_assert_msg(strstr(r->repeat, "-i x="), "%s", r->repeat);
    ck_assert_msg(strstr(seen.text, "golden run: "), "%s", seen.text);
    ck_assert_uint_gt(seen.n[SG_VERIFY_PROGRESS], 0);
    snprintf(path, sizeof path, "%s/run.json", out);
    ck_assert_int_eq(access(path, F_OK), 0);
    ck_assert_int_eq(access(r->csv, F_OK), 0);
    sg_verify_compare_free(r);

    /* Bad input (an unknown -i file): OUT stays as it was. */
    struct stat before, after;
    ck_assert_int_eq(stat(path, &before), 0);
    struct sg_verify_inputs bad;
    sg_verify_inputs_init(&bad);
    ck_assert(sg_verify_inputs_add_file(&bad, "/nonexistent/x.npy"));
    o.inputs = &bad;
    sg_diag_clear(&d);
    ck_assert_int_ne(sg_verify_compare_model(&o, NULL, &r, &d), SG_OK);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(d.msg, "x.npy"), "%s", d.msg);
    ck_assert_int_eq(stat(path, &after), 0);
    ck_assert_int_eq(before.st_ino, after.st_ino);

    /* Skipped checks come back as their SG_EINVAL. */
    o.inputs = &in;
    o.soc = NULL;
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_verify_compare_model(&o, NULL, &r, &d), SG_EINVAL);
    sg_verify_inputs_free(&bad);
    sg_verify_inputs_free(&in);
    sg_free(tmp);
}
END_TEST

/* Placeholders become sh-quoted paths; a quote inside a path survives. */
static const struct {
    const char *command, *model, *om, *want;
} fill_cases[] = {
    {"run {model} {inputs} {out}", "m.onnx", NULL, "run 'm.onnx' 'I' 'O'"},
    {"x {om} {model}{out}", "a b.onnx", "o.om", "x 'o.om' 'a b.onnx''O'"},
    {"keep {om} as is", "m", NULL, "keep {om} as is"},
    {"q {model}", "it's.onnx", NULL, "q 'it'\\''s.onnx'"},
    {"{out}{out}", "m", NULL, "'O''O'"},
};

START_TEST(test_exec_fill)
{
    char *got = sg_verify_exec_fill(fill_cases[_i].command, fill_cases[_i].model, fill_cases[_i].om,
                                    "I", "O");
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, fill_cases[_i].want);
    sg_free(got);
}
END_TEST

/* Targets parse and check alone, usage errors only. */
START_TEST(test_exec_check)
{
    struct sg_diag d = {0};
    struct sg_verify_exec t = {0};
    ck_assert_int_eq(sg_verify_exec_parse("bogus", &t, &d), SG_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "unknown target 'bogus'"));
    ck_assert_int_eq(sg_verify_exec_parse("cmd:run {model} {out}", &t, &d), SG_OK);
    ck_assert_int_eq(t.kind, SG_VERIFY_EXEC_CMD);
    ck_assert_str_eq(t.command, "run {model} {out}");
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_OK);
    t.soc = "Ascend910B1";
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_EINVAL); /* compile options */
    t = (struct sg_verify_exec){.kind = SG_VERIFY_EXEC_CMD, .command = "run {model}"};
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_EINVAL); /* no {out} */
    t = (struct sg_verify_exec){.kind = SG_VERIFY_EXEC_MOCK};
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_EINVAL); /* no --soc */
    t.soc = "Ascend910B1";
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_OK);
    t.timeout = 5;
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_EINVAL); /* nothing to time */
    t = (struct sg_verify_exec){.kind = SG_VERIFY_EXEC_ATC, .soc = "Ascend910B1"};
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_EINVAL); /* no device command */
    t.device_command = "dev {om} {out}";
    ck_assert_int_eq(sg_verify_exec_check(&t, &d), SG_OK);
}
END_TEST

Suite *suite_verify(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("checks");
    tcase_add_loop_test(tc, test_compile_check, 0,
                        (int)(sizeof compile_cases / sizeof compile_cases[0]));
    tcase_add_test(tc, test_compare_check);
    tcase_add_test(tc, test_inputs_parse);
    tcase_add_loop_test(tc, test_exec_fill, 0, (int)(sizeof fill_cases / sizeof fill_cases[0]));
    tcase_add_test(tc, test_exec_check);
    suite_add_tcase(s, tc);
    tc = tcase_create("workflows");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_run_golden_then_mock);
    tcase_add_test(tc, test_compare_model);
    suite_add_tcase(s, tc);
    return s;
}
