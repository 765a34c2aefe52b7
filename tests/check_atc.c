/*
 * check_atc.c - atc/: golden ATC command lines for every option, precision
 * modes, input shapes, shell quoting, finding and running atc.
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const extra_two[] = {"--op_select_implmode=high_precision", "--dump_mode=1"};
static const char *const extra_conflict[] = {"--soc_version=Ascend910B1"};
static const char *const extra_v2[] = {"--precision_mode_v2=fp16"};

/* Golden command lines: each option alone, all of them together, quoting. */
static const struct {
    struct sg_atc_opts o;
    const char *precision; /* name, looked up */
    const char *cmd;
} golden[] = {
    {{.model = "m.onnx", .output = "out", .soc = "Ascend310P3"},
     NULL,
     "atc --framework=5 --model=m.onnx --output=out --soc_version=Ascend310P3"},
    /* FORMATS.md's example, word for word. */
    {{.model = "m.onnx",
      .output = "out_prefix",
      .soc = "Ascend310P3",
      .input_shape = "x:4,77,40;cache:128,4,128",
      .keep_dtype = "keep.cfg",
      .fusion_switch = "fusion_switch.cfg",
      .log = "error"},
     "force_fp16",
     "atc --framework=5 --model=m.onnx --output=out_prefix --soc_version=Ascend310P3 "
     "--input_shape=\"x:4,77,40;cache:128,4,128\" --precision_mode=force_fp16 "
     "--keep_dtype=keep.cfg --fusion_switch_file=fusion_switch.cfg --log=error"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend910B1", .input_shape = "x:1,3,224,224"},
     NULL,
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend910B1 "
     "--input_shape=x:1,3,224,224"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "allow_fp32_to_fp16",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode=allow_fp32_to_fp16"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "must_keep_origin_dtype",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode=must_keep_origin_dtype"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "force_fp32",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode=force_fp32"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "cube_fp16in_fp32out",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode=cube_fp16in_fp32out"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "allow_mix_precision",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode=allow_mix_precision"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "fp16",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode_v2=fp16"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "origin",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode_v2=origin"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3"},
     "mixed_float16",
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--precision_mode_v2=mixed_float16"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3", .keep_dtype = "k.cfg"},
     NULL,
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 --keep_dtype=k.cfg"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3", .customize_dtypes = "c.cfg"},
     NULL,
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--customize_dtypes=c.cfg"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3", .op_precision_mode = "p.ini"},
     NULL,
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--op_precision_mode=p.ini"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3", .fusion_switch = "off.cfg"},
     NULL,
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--fusion_switch_file=off.cfg"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3", .log = "debug"},
     NULL,
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 --log=debug"},
    {{.model = "m.onnx", .output = "o", .soc = "Ascend310P3", .extra = extra_two, .n_extra = 2},
     NULL,
     "atc --framework=5 --model=m.onnx --output=o --soc_version=Ascend310P3 "
     "--op_select_implmode=high_precision --dump_mode=1"},
    /* Everything at once, in ATC's documented order. */
    {{.model = "/data/models/zipformer encoder.onnx",
      .output = "build/enc",
      .soc = "Ascend310P3",
      .input_shape = "x:1~8,77,40;cache:128,4,128",
      .keep_dtype = "k.cfg",
      .customize_dtypes = "c.cfg",
      .op_precision_mode = "p.ini",
      .fusion_switch = "f.cfg",
      .log = "info",
      .extra = extra_two,
      .n_extra = 1},
     "force_fp16",
     "atc --framework=5 --model=\"/data/models/zipformer encoder.onnx\" --output=build/enc "
     "--soc_version=Ascend310P3 --input_shape=\"x:1~8,77,40;cache:128,4,128\" "
     "--precision_mode=force_fp16 --keep_dtype=k.cfg --customize_dtypes=c.cfg "
     "--op_precision_mode=p.ini --fusion_switch_file=f.cfg --log=info "
     "--op_select_implmode=high_precision"},
};

START_TEST(test_golden_commands)
{
    struct sg_diag d = {0};
    struct sg_atc_opts o = golden[_i].o;
    if (golden[_i].precision) {
        o.precision = sg_precision_mode_find(golden[_i].precision);
        ck_assert_ptr_nonnull(o.precision);
    }
    char **argv;
    ck_assert_ok(sg_atc_command(&o, &argv, &d), &d);
    char *line = sg_argv_format(argv);
    ck_assert_str_eq(line, golden[_i].cmd);
    sg_free(line);
    sg_argv_free(argv);
}
END_TEST

START_TEST(test_json_command)
{
    struct sg_diag d = {0};
    char **argv;
    ck_assert_ok(sg_atc_json_command("out.om", "out.json", NULL, 0, &argv, &d), &d);
    char *line = sg_argv_format(argv);
    ck_assert_str_eq(line, "atc --mode=1 --om=out.om --json=out.json");
    ck_assert_str_eq(argv[0], "atc");
    ck_assert_ptr_null(argv[4]);
    sg_free(line);
    sg_argv_free(argv);
    ck_assert_int_eq(sg_atc_json_command("", "x.json", NULL, 0, &argv, &d), SG_EINVAL);
    ck_assert_ptr_null(argv);
}
END_TEST

START_TEST(test_command_errors)
{
    static const struct {
        struct sg_atc_opts o;
        const char *msg;
    } cases[] = {
        {{.output = "o", .soc = "s"}, "missing the model"},
        {{.model = "m", .soc = "s"}, "missing the output"},
        {{.model = "m", .output = "o", .soc = ""}, "missing the SoC version"},
        {{.model = "m", .output = "o", .soc = "s", .log = "verbose"},
         "unknown log level 'verbose' (valid: debug, info, warning, error, null)"},
        {{.model = "m", .output = "o", .soc = "s", .keep_dtype = ""}, "empty the keep_dtype file"},
        {{.model = "m\nx", .output = "o", .soc = "s"}, "the model holds a line break"},
        {{.model = "m", .output = "o", .soc = "s", .extra = extra_conflict, .n_extra = 1},
         "'--soc_version=Ascend910B1' sets --soc_version, which the SoC version sets already"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sg_diag d = {0};
        char **argv = (char **)1;
        ck_assert_int_eq(sg_atc_command(&cases[i].o, &argv, &d), SG_EINVAL);
        ck_assert_ptr_null(argv);
        ck_assert_str_eq(d.msg, cases[i].msg);
    }
    /* precision_mode and precision_mode_v2 exclude each other. */
    struct sg_diag d = {0};
    struct sg_atc_opts o = {.model = "m",
                            .output = "o",
                            .soc = "s",
                            .precision = sg_precision_mode_find("force_fp16"),
                            .extra = extra_v2,
                            .n_extra = 1};
    char **argv;
    ck_assert_int_eq(sg_atc_command(&o, &argv, &d), SG_EINVAL);
    ck_assert_str_eq(d.msg, "'--precision_mode_v2=fp16' sets --precision_mode, which the "
                            "precision mode sets already");
    /* Without --precision the extra one goes through. */
    o.precision = NULL;
    ck_assert_ok(sg_atc_command(&o, &argv, &d), &d);
    ck_assert_str_eq(argv[5], "--precision_mode_v2=fp16");
    sg_argv_free(argv);
}
END_TEST

START_TEST(test_precision_modes)
{
    static const char *valid[] = {"force_fp16",
                                  "allow_fp32_to_fp16",
                                  "must_keep_origin_dtype",
                                  "force_fp32",
                                  "cube_fp16in_fp32out",
                                  "allow_mix_precision",
                                  "allow_mix_precision_fp16",
                                  "fp16",
                                  "origin",
                                  "mixed_float16"};
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        const struct sg_precision_mode *m = sg_precision_mode_find(valid[i]);
        ck_assert_msg(m != NULL, "%s", valid[i]);
        ck_assert_str_eq(m->name, valid[i]);
        ck_assert(strcmp(m->option, "precision_mode") == 0 ||
                  strcmp(m->option, "precision_mode_v2") == 0);
    }
    static const char *invalid[] = {"fp32", "FORCE_FP16", "force-fp16", "", "mixed"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        ck_assert_ptr_null(sg_precision_mode_find(invalid[i]));
    ck_assert_int_eq(sg_precision_mode_find("origin")->kind, SG_PRECISION_ORIGIN);
    ck_assert_int_eq(sg_precision_mode_find("force_fp32")->kind,
                     sg_precision_mode_find("cube_fp16in_fp32out")->kind);
    size_t n = 0;
    while (sg_precision_mode_at(n))
        n++;
    ck_assert_uint_eq(n, sizeof valid / sizeof valid[0]);
}
END_TEST

/* ---------------------------------------------------------- input shapes */

START_TEST(test_input_shapes)
{
    struct sg_diag d = {0};
    sg_input_shapes *s;
    ck_assert_ok(sg_input_shapes_parse("x:4,77,40;cache:128,4,128", &s, &d), &d);
    ck_assert_uint_eq(s->n, 2);
    ck_assert_str_eq(s->items[1].name, "cache");
    ck_assert_uint_eq(s->items[0].rank, 3);
    ck_assert_int_eq(s->items[0].dims[1].lo, 77);
    sg_input_shapes_free(s);
    ck_assert_ok(sg_input_shapes_parse("input:0:-1,1~16,3~-1;s:", &s, &d), &d);
    ck_assert_str_eq(s->items[0].name, "input:0");
    ck_assert_int_eq(s->items[0].dims[0].lo, -1);
    ck_assert_int_eq(s->items[0].dims[1].lo, 1);
    ck_assert_int_eq(s->items[0].dims[1].hi, 16);
    ck_assert_int_eq(s->items[0].dims[2].hi, -1);
    ck_assert_uint_eq(s->items[1].rank, 0);
    sg_input_shapes_free(s);
    sg_input_shapes_free(NULL);

    static const struct {
        const char *text;
        sg_status st;
        const char *msg;
    } bad[] = {
        {"x", SG_EPARSE, "input shape, column 1: 'x' is not name:d0,d1,..."},
        {":1,2", SG_EPARSE, "input shape, column 1: ':1,2' is not name:d0,d1,..."},
        {"x:1;;y:2", SG_EPARSE, "input shape, column 5: empty item"},
        {"x:1;", SG_EPARSE, "input shape, column 5: empty item"},
        {"x:1,a", SG_EPARSE, "input shape, column 5: bad dimension 'a'"},
        {"x:1,,2", SG_EPARSE, "input shape, column 5: bad dimension ''"},
        {"x:-2", SG_EPARSE, "input shape, column 3: bad dimension '-2'"},
        {"x:8~4", SG_EPARSE, "input shape, column 3: bad dimension '8~4'"},
        {"x:01", SG_EPARSE, "input shape, column 3: bad dimension '01'"},
        {"x:99999999999999999999", SG_EPARSE, "input shape, column 3: bad dimension"},
        {"x:1, 2", SG_EPARSE, "input shape, column 5: blank or quote in 'x:1, 2'"},
        {"x:1;x:2", SG_EDUP, "input shape: input 'x' given twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sg_diag_clear(&d);
        s = (sg_input_shapes *)1;
        ck_assert_int_eq(sg_input_shapes_parse(bad[i].text, &s, &d), bad[i].st);
        ck_assert_ptr_null(s);
        ck_assert_msg(strncmp(d.msg, bad[i].msg, strlen(bad[i].msg)) == 0, "'%s': got '%s'",
                      bad[i].text, d.msg);
    }
}
END_TEST

START_TEST(test_input_shapes_model)
{
    struct sg_diag d = {0};
    sg_model *m;
    ck_assert_ok(sg_model_load(test_src_path("models/exp_overflow.onnx"), NULL, &m, &d), &d);
    static const struct {
        const char *text;
        sg_status st;
        const char *msg;
    } cases[] = {
        {"x:1,4,16", SG_OK, ""},
        {"x:-1,4,1~32", SG_OK, ""},
        {"y:1,4,16", SG_ENOTFOUND,
         "the input shape names 'y', which is not an input of the model (inputs: x)"},
        {"scale:1", SG_ENOTFOUND, "the input shape names 'scale', which is not an input"},
        {"x:1,64", SG_ESHAPE, "the input shape gives input 'x' 2 dimensions, the model 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sg_input_shapes *s;
        sg_diag_clear(&d);
        ck_assert_ok(sg_input_shapes_parse(cases[i].text, &s, &d), &d);
        ck_assert_int_eq(sg_input_shapes_check(s, m, &d), cases[i].st);
        ck_assert_msg(strncmp(d.msg, cases[i].msg, strlen(cases[i].msg)) == 0, "got '%s'", d.msg);
        sg_input_shapes_free(s);
    }
    sg_model_free(m);
}
END_TEST

/* ---------------------------------------------------------- shell quoting */

/* Whatever sg_argv_format writes, a shell must read back as the same words. */
START_TEST(test_quoting_round_trip)
{
    char *argv[] = {"atc",
                    "--input_shape=x:1,3;y:2",
                    "--model=a b/c\"d\".onnx",
                    "--output=$HOME/`id`\\x",
                    "plain-word_1.2",
                    "has space",
                    "--=odd",
                    "",
                    "it's",
                    NULL};
    char *line = sg_argv_format(argv);
    ck_assert_ptr_nonnull(line);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "printf '%%s\\n' %s", line);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char got[512];
    for (size_t i = 0; argv[i]; i++) {
        ck_assert_msg(fgets(got, sizeof got, p) != NULL, "word %zu missing from: %s", i, line);
        got[strcspn(got, "\n")] = '\0';
        ck_assert_str_eq(got, argv[i]);
    }
    ck_assert_ptr_null(fgets(got, sizeof got, p));
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_ptr_nonnull(strstr(line, "--input_shape=\"x:1,3;y:2\""));
    sg_free(line);
}
END_TEST

/* ------------------------------------------------------- finding, running */

static void make_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(test_find)
{
    char *dir = test_tmpdir("find");
    char a[512], b[512], path_env[1600], tk[512], p[1024];
    ck_assert_uint_lt(strlen(dir), 400);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(tk, sizeof tk, "%s/toolkit", dir);
    ck_assert_int_eq(mkdir(a, 0755), 0);
    ck_assert_int_eq(mkdir(b, 0755), 0);
    ck_assert_int_eq(mkdir(tk, 0755), 0);
    /* a/atc is not executable, b/atc is. */
    snprintf(p, sizeof p, "%s/atc", a);
    make_file(p, "#!/bin/sh\n", 0644);
    snprintf(p, sizeof p, "%s/atc", b);
    make_file(p, "#!/bin/sh\n", 0755);
    snprintf(path_env, sizeof path_env, "/nonexistent:%s:%s", a, b);
    struct sg_diag d = {0};
    char *found;
    ck_assert_ok(sg_atc_find(path_env, tk, &found, &d), &d);
    ck_assert_str_eq(found, p);
    sg_free(found);
    /* Not on PATH, under the toolkit's compiler/bin. */
    snprintf(p, sizeof p, "%s/compiler", tk);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/compiler/bin", tk);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/compiler/bin/atc", tk);
    make_file(p, "#!/bin/sh\n", 0755);
    ck_assert_ok(sg_atc_find(a, tk, &found, &d), &d);
    ck_assert_str_eq(found, p);
    sg_free(found);
    /* Nowhere. */
    ck_assert_int_eq(sg_atc_find(a, a, &found, &d), SG_ENOTFOUND);
    ck_assert_ptr_null(found);
    char want[1200];
    snprintf(want, sizeof want,
             "atc not found: not on PATH, nor under %s (bin/, compiler/bin/, atc/bin/)", a);
    ck_assert_str_eq(d.msg, want);
    sg_free(dir);
}
END_TEST

START_TEST(test_exec)
{
    struct sg_diag d = {0};
    int code;
    char *ok[] = {"sh", "-c", "exit 0", NULL};
    ck_assert_ok(sg_atc_exec("/bin/sh", ok, &code, &d), &d);
    ck_assert_int_eq(code, 0);
    char *three[] = {"sh", "-c", "exit 3", NULL};
    ck_assert_ok(sg_atc_exec("/bin/sh", three, &code, &d), &d);
    ck_assert_int_eq(code, 3);
    char *killed[] = {"sh", "-c", "kill -TERM $$", NULL};
    ck_assert_int_eq(sg_atc_exec("/bin/sh", killed, &code, &d), SG_EIO);
    ck_assert_int_eq(code, 128 + 15);
    ck_assert_ptr_nonnull(strstr(d.msg, "killed by signal 15"));
    sg_diag_clear(&d);
    char *none[] = {"atc", NULL};
    ck_assert_int_eq(sg_atc_exec("/nonexistent/atc", none, &code, &d), SG_EIO);
    ck_assert_ptr_nonnull(strstr(d.msg, "cannot run /nonexistent/atc"));
}
END_TEST

START_TEST(test_alloc_failures)
{
    int64_t live = sg_alloc_live();
    static const char *const extra[] = {"--dump_mode=1"};
    struct sg_atc_opts o = {.model = "m",
                            .output = "o",
                            .soc = "s",
                            .input_shape = "x:1;y:2",
                            .precision = sg_precision_mode_find("fp16"),
                            .keep_dtype = "k",
                            .fusion_switch = "f",
                            .log = "error",
                            .extra = extra,
                            .n_extra = 1};
    for (uint64_t n = 1;; n++) {
        sg_alloc_fail_at(n);
        char **argv = NULL;
        sg_input_shapes *s = NULL;
        char *line = NULL;
        sg_status st = sg_atc_command(&o, &argv, NULL);
        if (st == SG_OK) {
            line = sg_argv_format(argv);
            if (!line)
                st = SG_ENOMEM;
        }
        if (st == SG_OK)
            st = sg_input_shapes_parse("a:1,2;b:3~4;c:", &s, NULL);
        uint64_t made = sg_alloc_fail_at(0);
        sg_free(line);
        sg_argv_free(argv);
        sg_input_shapes_free(s);
        ck_assert_int_eq(sg_alloc_live(), live);
        if (st == SG_OK) {
            ck_assert_uint_lt(made, n);
            break;
        }
        ck_assert_int_eq(st, SG_ENOMEM);
        ck_assert_uint_lt(n, 10000);
    }
}
END_TEST

Suite *suite_atc(void)
{
    Suite *s = suite_create("atc");
    TCase *tc = tcase_create("command");
    tcase_add_loop_test(tc, test_golden_commands, 0, sizeof golden / sizeof golden[0]);
    tcase_add_test(tc, test_json_command);
    tcase_add_test(tc, test_command_errors);
    tcase_add_test(tc, test_precision_modes);
    tcase_add_test(tc, test_input_shapes);
    tcase_add_test(tc, test_input_shapes_model);
    tcase_add_test(tc, test_quoting_round_trip);
    tcase_add_test(tc, test_alloc_failures);
    suite_add_tcase(s, tc);
    tc = tcase_create("run");
    tcase_add_test(tc, test_find);
    tcase_add_test(tc, test_exec);
    suite_add_tcase(s, tc);
    return s;
}
