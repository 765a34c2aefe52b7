/* check_json.c - the strict JSON reader: values, positions, every error with line:column. */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_json.h"
#include "sg_json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *text;
    enum sg_jtype type;
} good[] = {
    {"null", SG_JSON_NULL},
    {" true ", SG_JSON_BOOL},
    {"false", SG_JSON_BOOL},
    {"0", SG_JSON_NUMBER},
    {"-12.5e-3", SG_JSON_NUMBER},
    {"\"\"", SG_JSON_STRING},
    {"[]", SG_JSON_ARRAY},
    {"[1, [2, [3]], {\"a\": null}]", SG_JSON_ARRAY},
    {"{}", SG_JSON_OBJECT},
    {"\xEF\xBB\xBF{\"a\": 1}", SG_JSON_OBJECT},
    {"\n\r\n\t {\"k\":\"\\u00e9\\ud83d\\ude00\\n\"}\n", SG_JSON_OBJECT},
};

START_TEST(test_good)
{
    struct sg_diag d = {0};
    struct sg_jdoc *doc = NULL;
    ck_assert_ok(sg_json_parse(good[_i].text, strlen(good[_i].text), "t", NULL, &doc, &d), &d);
    ck_assert_int_eq(doc->root->type, good[_i].type);
    sg_jdoc_free(doc);
}
END_TEST

/* Each bad input: the status, and the start of the message (label:line:col: what). */
static const struct {
    const char *text;
    sg_status st;
    const char *msg;
} bad[] = {
    {"", SG_EPARSE, "t:1:1: no JSON value"},
    {"  \n ", SG_EPARSE, "t:2:2: no JSON value"},
    {"{", SG_EPARSE, "t:1:2: expected a string key"},
    {"{\"a\" 1}", SG_EPARSE, "t:1:6: expected ':' after the object key"},
    {"{\"a\": 1,}", SG_EPARSE, "t:1:9: trailing comma before '}'"},
    {"[1,]", SG_EPARSE, "t:1:4: trailing comma before ']'"},
    {"[1 2]", SG_EPARSE, "t:1:4: expected ',' or ']'"},
    {"{\"a\": 1 \"b\": 2}", SG_EPARSE, "t:1:9: expected ',' or '}'"},
    {"{\n  \"a\": 1,\n  \"a\": 2\n}", SG_EPARSE,
     "t:3:3: duplicate key \"a\" (first at line 2, column 3)"},
    {"{'a': 1}", SG_EPARSE, "t:1:2: expected a string key"},
    {"['a']", SG_EPARSE, "t:1:2: strings must use double quotes"},
    {"// c\n{}", SG_EPARSE, "t:1:1: comments are not allowed"},
    {"{} x", SG_EPARSE, "t:1:4: unexpected 'x' after the JSON value"},
    {"{}{}", SG_EPARSE, "t:1:3: unexpected '{' after the JSON value"},
    {"tru", SG_EPARSE, "t:1:1: expected true or false"},
    {"truex", SG_EPARSE, "t:1:5: unexpected 'x' after a value"},
    {"nul", SG_EPARSE, "t:1:1: expected null"},
    {"01", SG_EPARSE, "t:1:1: invalid number: leading zeros"},
    {"1.", SG_EPARSE, "t:1:3: invalid number: expected a digit after '.'"},
    {"1e", SG_EPARSE, "t:1:3: invalid number: expected a digit in the exponent"},
    {"-", SG_EPARSE, "t:1:1: invalid number: expected a digit"},
    {"1e999", SG_EPARSE, "t:1:1: number out of range"},
    {"NaN", SG_EPARSE, "t:1:1: expected a value, found 'N'"},
    {"\"abc", SG_EPARSE, "t:1:1: string not closed before the end of the input"},
    {"\"ab\ncd\"", SG_EPARSE, "t:1:4: string not closed before the end of the line"},
    {"\"a\tb\"", SG_EPARSE, "t:1:3: control character (byte 0x09)"},
    {"\"a\\x\"", SG_EPARSE, "t:1:3: invalid escape"},
    {"\"\\u12\"", SG_EPARSE, "t:1:2: \\u must be followed by four hex digits"},
    {"\"\\ud800\"", SG_EPARSE, "t:1:2: high surrogate \\uD800 not followed"},
    {"\"\\udc00\"", SG_EPARSE, "t:1:2: lone low surrogate"},
    {"\"\\udc7f\"", SG_EPARSE, "t:1:2: lone low surrogate"}, /* only bytes 0x80-0xff */
    {"\"\xff\"", SG_EPARSE, "t:1:2: invalid UTF-8"},
    {"\"\xc0\xaf\"", SG_EPARSE, "t:1:2: invalid UTF-8"},
    {"\"\xed\xa0\x80\"", SG_EPARSE, "t:1:2: invalid UTF-8"},
    {"{\"a\\u0000b\": 1}", SG_EPARSE, "t:1:2: object key contains a NUL"},
    /* Columns count characters, not bytes: 'é' and '€' are one column each. */
    {"[\"\xc3\xa9\xe2\x82\xac\", x]", SG_EPARSE, "t:1:8: expected a value, found 'x'"},
};

START_TEST(test_bad)
{
    struct sg_diag d = {0};
    struct sg_jdoc *doc = (struct sg_jdoc *)1;
    sg_status st = sg_json_parse(bad[_i].text, strlen(bad[_i].text), "t", NULL, &doc, &d);
    ck_assert_msg(st == bad[_i].st, "input %d: status %s (%s), want %s", _i, sg_status_name(st),
                  d.msg, sg_status_name(bad[_i].st));
    ck_assert_ptr_null(doc);
    ck_assert_msg(strncmp(d.msg, bad[_i].msg, strlen(bad[_i].msg)) == 0,
                  "input %d: message '%s', want it to start with '%s'", _i, d.msg, bad[_i].msg);
}
END_TEST

START_TEST(test_values_and_positions)
{
    const char *text = "{\n  \"name\": \"Exp_3\",\n  \"n\": -42,\n  \"x\": 2.5,\n"
                       "  \"list\": [true, null, \"a\\\"b\"]\n}";
    struct sg_diag d = {0};
    struct sg_jdoc *doc;
    ck_assert_ok(sg_json_parse(text, strlen(text), "p.json", NULL, &doc, &d), &d);
    const struct sg_jval *r = doc->root;
    ck_assert_uint_eq(r->n_members, 4);
    const struct sg_jmember *m = sg_jval_member(r, "n");
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->line, 3);
    ck_assert_uint_eq(m->col, 3);
    ck_assert_uint_eq(m->value->col, 8);
    ck_assert(m->value->is_int);
    ck_assert_int_eq(m->value->i, -42);
    const struct sg_jval *x = sg_jval_get(r, "x");
    ck_assert(!x->is_int);
    ck_assert(x->num == 2.5);
    ck_assert_str_eq(sg_jval_get(r, "name")->str, "Exp_3");
    const struct sg_jval *l = sg_jval_get(r, "list");
    ck_assert_uint_eq(l->n_items, 3);
    ck_assert_int_eq(l->items[0]->type, SG_JSON_BOOL);
    ck_assert(l->items[0]->b);
    ck_assert_uint_eq(l->items[2]->line, 5);
    ck_assert_uint_eq(l->items[2]->col, 24);
    ck_assert_str_eq(l->items[2]->str, "a\"b");
    ck_assert_ptr_null(sg_jval_get(r, "missing"));
    ck_assert_ptr_null(sg_jval_get(l, "name"));
    sg_jdoc_free(doc);
    sg_jdoc_free(NULL);
}
END_TEST

START_TEST(test_unicode)
{
    const char *text = "[\"\\u00e9\\ud83d\\ude00\\/\\u0000z\"]";
    struct sg_diag d = {0};
    struct sg_jdoc *doc;
    ck_assert_ok(sg_json_parse(text, strlen(text), NULL, NULL, &doc, &d), &d);
    const struct sg_jval *s = doc->root->items[0];
    ck_assert_uint_eq(s->len, 2 + 4 + 1 + 1 + 1);
    ck_assert(memcmp(s->str, "\xc3\xa9\xf0\x9f\x98\x80/\0z", 9) == 0);
    sg_jdoc_free(doc);
}
END_TEST

/* Names that are not UTF-8: the writer gives \udc80-\udcff for each byte
 * that is not part of well-formed UTF-8 (surrogateescape), the reader turns
 * them back into the bytes; text stays as it is. */
START_TEST(test_not_utf8_round_trip)
{
    static const char name[] = "a\xff\xfe\xc3\xa9\xed\xa0\x80\xc0\xafz\x7f\x01\"";
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    sg_json_write_escaped(f, name, sizeof name - 1);
    fclose(f);
    ck_assert_str_eq(text, "\"a\\udcff\\udcfe\xc3\xa9\\udced\\udca0\\udc80\\udcc0\\udcafz"
                           "\\u007f\\u0001\\\"\"");
    struct sg_diag d = {0};
    struct sg_jdoc *doc;
    ck_assert_ok(sg_json_parse(text, len, "t", NULL, &doc, &d), &d);
    ck_assert_uint_eq(doc->root->len, sizeof name - 1);
    ck_assert(memcmp(doc->root->str, name, sizeof name - 1) == 0);
    sg_jdoc_free(doc);
    free(text);
}
END_TEST

/* A big object goes through the hash map for duplicates: both the found
 * duplicate and the linear behaviour must hold. */
START_TEST(test_big_object)
{
    size_t n = 5000, cap = n * 24 + 64, len = 0;
    char *text = sg_malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text + len, cap - len, "{");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s\"k%zu\": %zu", i ? ", " : "", i, i);
    size_t good_len = len;
    len += (size_t)snprintf(text + len, cap - len, "}");
    struct sg_diag d = {0};
    struct sg_jdoc *doc;
    ck_assert_ok(sg_json_parse(text, len, "big", NULL, &doc, &d), &d);
    ck_assert_uint_eq(doc->root->n_members, n);
    ck_assert_int_eq(sg_jval_get(doc->root, "k4321")->i, 4321);
    sg_jdoc_free(doc);
    /* Now repeat an early key at the end. */
    len = good_len;
    len += (size_t)snprintf(text + len, cap - len, ", \"k17\": 0}");
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_json_parse(text, len, "big", NULL, &doc, &d), SG_EPARSE);
    ck_assert_msg(strstr(d.msg, "duplicate key \"k17\""), "%s", d.msg);
    sg_free(text);
}
END_TEST

START_TEST(test_limits)
{
    struct sg_json_limits lim = {.max_bytes = 4, .max_depth = 2};
    struct sg_diag d = {0};
    struct sg_jdoc *doc;
    ck_assert_int_eq(sg_json_parse("[1234]", 6, "t", &lim, &doc, &d), SG_ETOOBIG);
    lim.max_bytes = 0;
    sg_diag_clear(&d);
    ck_assert_ok(sg_json_parse("[[1]]", 5, "t", &lim, &doc, &d), &d);
    sg_jdoc_free(doc);
    ck_assert_int_eq(sg_json_parse("[[[1]]]", 7, "t", &lim, &doc, &d), SG_ETOOBIG);
    /* The default depth: 256 nested arrays parse, 257 do not. */
    char deep[600];
    for (int depth = 256; depth <= 257; depth++) {
        memset(deep, '[', (size_t)depth);
        memset(deep + depth, ']', (size_t)depth);
        sg_diag_clear(&d);
        sg_status st = sg_json_parse(deep, 2 * (size_t)depth, "t", NULL, &doc, &d);
        if (depth == 256) {
            ck_assert_ok(st, &d);
            sg_jdoc_free(doc);
        } else {
            ck_assert_int_eq(st, SG_ETOOBIG);
            ck_assert_str_eq(d.msg, "t:1:257: nesting deeper than 256 levels");
        }
    }
}
END_TEST

START_TEST(test_file)
{
    char *dir = test_tmpdir("json");
    char path[1024];
    snprintf(path, sizeof path, "%s/a.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"Switch\": {\n  \"GraphFusion\": oops}}", f);
    fclose(f);
    struct sg_diag d = {0};
    struct sg_jdoc *doc;
    ck_assert_int_eq(sg_json_parse_file(path, NULL, &doc, &d), SG_EPARSE);
    char want[1100];
    snprintf(want, sizeof want, "%s:2:18: expected a value, found 'o'", path);
    ck_assert_str_eq(d.msg, want);
    sg_diag_clear(&d);
    snprintf(path, sizeof path, "%s/missing.json", dir);
    ck_assert_int_eq(sg_json_parse_file(path, NULL, &doc, &d), SG_EIO);
    ck_assert_ptr_nonnull(strstr(d.msg, "missing.json: cannot open"));
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_json_parse_file(dir, NULL, &doc, &d), SG_EIO);
    sg_free(dir);
}
END_TEST

/* Fail the N-th allocation for N = 1, 2, ... until the parse succeeds: each
 * failure is a clean SG_ENOMEM and nothing leaks. */
START_TEST(test_alloc_failures)
{
    const char *text = "{\"a\": [1, 2, {\"b\": \"c\"}], \"d\": \"e\", \"k0\":0,\"k1\":1,\"k2\":2,"
                       "\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,\"k10\":0,"
                       "\"k11\":1,\"k12\":2,\"k13\":3,\"k14\":4,\"k15\":5,\"k16\":6,\"k17\":7}";
    int64_t live = sg_alloc_live();
    for (uint64_t n = 1;; n++) {
        struct sg_diag d = {0};
        struct sg_jdoc *doc = NULL;
        sg_alloc_fail_at(n);
        sg_status st = sg_json_parse(text, strlen(text), "t", NULL, &doc, &d);
        uint64_t made = sg_alloc_fail_at(0);
        if (st == SG_OK) {
            sg_jdoc_free(doc);
            ck_assert_uint_lt(made, n);
            break;
        }
        ck_assert_int_eq(st, SG_ENOMEM);
        ck_assert_ptr_null(doc);
        ck_assert_int_eq(sg_alloc_live(), live);
        ck_assert_uint_lt(n, 10000);
    }
    ck_assert_int_eq(sg_alloc_live(), live);
}
END_TEST

Suite *suite_json(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("read");
    tcase_add_loop_test(tc, test_good, 0, sizeof good / sizeof good[0]);
    tcase_add_loop_test(tc, test_bad, 0, sizeof bad / sizeof bad[0]);
    tcase_add_test(tc, test_values_and_positions);
    tcase_add_test(tc, test_unicode);
    tcase_add_test(tc, test_not_utf8_round_trip);
    tcase_add_test(tc, test_big_object);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_file);
    tcase_add_test(tc, test_alloc_failures);
    suite_add_tcase(s, tc);
    return s;
}
