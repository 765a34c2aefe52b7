/*
 * check_fusion.c - fusion/: the pass catalogue, fusion switch files (read,
 * write, errors with line:column), the atc --mode=1 map and switching off
 * the passes behind given nodes, and the keep_dtype / customize_dtypes /
 * op_precision_mode files.
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_fusion.h"
#include "sg_io.h"
#include "sg_precision.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The whole content of a file, sg_malloc'd (NULL if absent). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = sg_malloc(1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Number of entries in a folder besides . and .. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* What sg_fusion_switch_print writes, as a string. */
static char *print_switch(const sg_fusion_switch *sw)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sg_fusion_switch_print(sw, f), SG_OK);
    fclose(f);
    return buf; /* malloc'd by open_memstream: free() */
}

static char *print_prec(const sg_prec_file *pf)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sg_prec_file_print(pf, f), SG_OK);
    fclose(f);
    return buf;
}

/* ------------------------------------------------------------ catalogue */

START_TEST(test_catalogue)
{
    /* The passes FORMATS.md lists must be there, in the right section. */
    static const struct {
        const char *name;
        enum sg_fusion_kind kind;
    } listed[] = {
        {"ConvBatchnormFusionPass", SG_FUSION_GRAPH},
        {"ConvToFullyConnectionFusionPass", SG_FUSION_GRAPH},
        {"SoftmaxFusionPass", SG_FUSION_GRAPH},
        {"ConvConcatFusionPass", SG_FUSION_GRAPH},
        {"MatMulBiasAddFusionPass", SG_FUSION_GRAPH},
        {"PoolingFusionPass", SG_FUSION_GRAPH},
        {"ConvScaleFusionPass", SG_FUSION_GRAPH},
        {"BatchMatMul2MulFusionPass", SG_FUSION_GRAPH},
        {"GroupConv2DFusionPass", SG_FUSION_GRAPH},
        {"RequantFusionPass", SG_FUSION_GRAPH},
        {"TbePool2dQuantFusionPass", SG_FUSION_UB},
        /* the ones the mock compiler imitates */
        {"LayerNormONNXFusionPass", SG_FUSION_GRAPH},
        {"AutomaticUbFusion", SG_FUSION_UB},
        {"TbeCommonRules0FusionPass", SG_FUSION_UB},
        {"ConvClipByValueFusionPass", SG_FUSION_UB},
    };
    for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++) {
        const struct sg_fusion_pass *p = sg_fusion_pass_find(listed[i].name);
        ck_assert_msg(p != NULL, "%s missing from the catalogue", listed[i].name);
        ck_assert_int_eq(p->kind, listed[i].kind);
    }
    for (int id = 0; id < SG_FUSION_PASS_COUNT; id++) {
        const struct sg_fusion_pass *p = sg_fusion_pass_get((enum sg_fusion_pass_id)id);
        ck_assert_int_eq(p->id, id);
        ck_assert_ptr_eq(sg_fusion_pass_find(p->name), p); /* names are unique */
        ck_assert(*p->fuses && *p->result);
    }
    ck_assert_ptr_null(sg_fusion_pass_get(SG_FUSION_PASS_COUNT));
    ck_assert_ptr_null(sg_fusion_pass_find("softmaxfusionpass"));
    ck_assert_str_eq(sg_fusion_pass_get(SG_FP_SOFTMAX)->name, "SoftmaxFusionPass");
    ck_assert_str_eq(sg_fusion_kind_name(SG_FUSION_UB), "UBFusion");
    ck_assert_str_eq(sg_fusion_kind_name(SG_FUSION_GRAPH), "GraphFusion");
}
END_TEST

/* -------------------------------------------------------- switch: build */

START_TEST(test_switch_semantics)
{
    struct sg_diag d = {0};
    ck_assert(sg_fusion_switch_enabled(NULL, SG_FUSION_GRAPH, "SoftmaxFusionPass"));
    sg_fusion_switch *sw = sg_fusion_switch_create();
    ck_assert(sg_fusion_switch_pass_enabled(sw, SG_FP_SOFTMAX));
    ck_assert_ok(sg_fusion_switch_set(sw, SG_FUSION_GRAPH, "ALL", false, &d), &d);
    ck_assert_ok(sg_fusion_switch_set(sw, SG_FUSION_GRAPH, "SoftmaxFusionPass", true, &d), &d);
    ck_assert(sg_fusion_switch_pass_enabled(sw, SG_FP_SOFTMAX));         /* named beats ALL */
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_CONV_BATCHNORM)); /* ALL off */
    ck_assert(sg_fusion_switch_pass_enabled(sw, SG_FP_AUTOMATIC_UB));    /* other section */
    ck_assert(!sg_fusion_switch_enabled(sw, SG_FUSION_GRAPH, "SomeFuturePass"));
    ck_assert(sg_fusion_switch_enabled(sw, SG_FUSION_UB, "SomeFuturePass"));
    /* Setting again replaces. */
    ck_assert_ok(sg_fusion_switch_set(sw, SG_FUSION_GRAPH, "SoftmaxFusionPass", false, &d), &d);
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_SOFTMAX));
    ck_assert_uint_eq(sw->n_entries, 2);
    /* Names that are not names. */
    static const char *bad[] = {"", "a b", "a\"b", "x:y", "a\\b", "é"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sg_diag_clear(&d);
        ck_assert_int_eq(sg_fusion_switch_set(sw, SG_FUSION_UB, bad[i], false, &d), SG_EINVAL);
        ck_assert_ptr_nonnull(strstr(d.msg, "fusion pass name"));
    }
    ck_assert_uint_eq(sw->n_entries, 2);
    sg_fusion_switch_free(sw);
    sg_fusion_switch_free(NULL);
}
END_TEST

/* Golden JSON for switch files built through the API. */
static const struct {
    const char *spec; /* entries: "G:NAME:on" / "U:NAME:off", space separated */
    const char *json;
} golden_switch[] = {
    {"G:ALL:off U:ALL:off",
     "{\n  \"Switch\": {\n    \"GraphFusion\": {\n      \"ALL\": \"off\"\n    },\n"
     "    \"UBFusion\": {\n      \"ALL\": \"off\"\n    }\n  }\n}\n"},
    {"G:SoftmaxFusionPass:on G:ALL:off U:TbePool2dQuantFusionPass:on U:ALL:off",
     "{\n  \"Switch\": {\n    \"GraphFusion\": {\n      \"ALL\": \"off\",\n"
     "      \"SoftmaxFusionPass\": \"on\"\n    },\n    \"UBFusion\": {\n      \"ALL\": \"off\",\n"
     "      \"TbePool2dQuantFusionPass\": \"on\"\n    }\n  }\n}\n"},
    {"U:AutomaticUbFusion:off", "{\n  \"Switch\": {\n    \"UBFusion\": {\n      "
                                "\"AutomaticUbFusion\": \"off\"\n    }\n  }\n}\n"},
    {"", "{\n  \"Switch\": {}\n}\n"},
};

static sg_fusion_switch *build_switch(const char *spec)
{
    struct sg_diag d = {0};
    sg_fusion_switch *sw = sg_fusion_switch_create();
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *name = tok + 2, *val = strrchr(tok, ':');
        *val++ = '\0';
        ck_assert_ok(sg_fusion_switch_set(sw, tok[0] == 'G' ? SG_FUSION_GRAPH : SG_FUSION_UB, name,
                                          strcmp(val, "on") == 0, &d),
                     &d);
    }
    return sw;
}

START_TEST(test_switch_golden)
{
    sg_fusion_switch *sw = build_switch(golden_switch[_i].spec);
    char *text = print_switch(sw);
    ck_assert_str_eq(text, golden_switch[_i].json);
    /* And it reads back to the same switch. */
    struct sg_diag d = {0};
    sg_fusion_switch *back;
    ck_assert_ok(sg_fusion_switch_parse(text, strlen(text), "golden", &back, &d), &d);
    ck_assert_int_eq(back->format, SG_FUSION_FORMAT_JSON);
    char *again = print_switch(back);
    ck_assert_str_eq(again, text);
    free(again);
    free(text);
    sg_fusion_switch_free(back);
    sg_fusion_switch_free(sw);
}
END_TEST

/* --------------------------------------------------------- switch: read */

START_TEST(test_switch_read_forms)
{
    struct sg_diag d = {0};
    sg_fusion_switch *sw;
    /* ATC's own example, JSON. */
    const char *json =
        "{\n    \"Switch\":{\n        \"GraphFusion\":{\n            \"ALL\":\"off\",\n"
        "            \"SoftmaxFusionPass\":\"on\"\n        },\n"
        "        \"UBFusion\":{\n            \"ALL\":\"off\",\n"
        "            \"TbePool2dQuantFusionPass\":\"on\"\n        }\n    }\n}\n";
    ck_assert_ok(sg_fusion_switch_parse(json, strlen(json), "a.cfg", &sw, &d), &d);
    ck_assert_uint_eq(sw->n_entries, 4);
    ck_assert_uint_eq(sw->entries[1].line, 5);
    ck_assert_uint_eq(sw->entries[1].col, 13);
    ck_assert(sg_fusion_switch_pass_enabled(sw, SG_FP_SOFTMAX));
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_CONV_BATCHNORM));
    ck_assert(sg_fusion_switch_pass_enabled(sw, SG_FP_POOL2D_QUANT));
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_AUTOMATIC_UB));
    sg_fusion_switch_free(sw);

    /* ATC's line form; a pass we do not know applies to both sections. */
    const char *lines = "RequantFusionPass:off\r\n\n  TbePool2dQuantFusionPass : off \n"
                        "TbeConvDequantQuantFusionPass:off\nSoftmaxFusionPass:on";
    ck_assert_ok(sg_fusion_switch_parse(lines, strlen(lines), "b.cfg", &sw, &d), &d);
    ck_assert_int_eq(sw->format, SG_FUSION_FORMAT_LINES);
    ck_assert_uint_eq(sw->n_entries, 4);
    ck_assert_uint_eq(sw->entries[1].line, 3);
    ck_assert_uint_eq(sw->entries[1].col, 3);
    ck_assert_int_eq(sw->entries[1].kind, SG_FUSION_UB);
    ck_assert(!sw->entries[1].any_kind);
    ck_assert(sw->entries[2].any_kind);
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_REQUANT));
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_POOL2D_QUANT));
    ck_assert(!sg_fusion_switch_enabled(sw, SG_FUSION_GRAPH, "TbeConvDequantQuantFusionPass"));
    ck_assert(!sg_fusion_switch_enabled(sw, SG_FUSION_UB, "TbeConvDequantQuantFusionPass"));
    ck_assert(sg_fusion_switch_pass_enabled(sw, SG_FP_SOFTMAX));
    ck_assert(sg_fusion_switch_pass_enabled(sw, SG_FP_CONV_BATCHNORM));
    ck_assert_int_eq(sg_fusion_switch_check_entry(&sw->entries[2]), SG_FUSION_ENTRY_UNKNOWN);
    ck_assert_int_eq(sg_fusion_switch_check_entry(&sw->entries[1]), SG_FUSION_ENTRY_OK);
    /* Written as JSON, the unknown pass goes to both sections. */
    char *text = print_switch(sw);
    ck_assert_str_eq(text, "{\n  \"Switch\": {\n    \"GraphFusion\": {\n"
                           "      \"RequantFusionPass\": \"off\",\n"
                           "      \"TbeConvDequantQuantFusionPass\": \"off\",\n"
                           "      \"SoftmaxFusionPass\": \"on\"\n    },\n    \"UBFusion\": {\n"
                           "      \"TbePool2dQuantFusionPass\": \"off\",\n"
                           "      \"TbeConvDequantQuantFusionPass\": \"off\"\n    }\n  }\n}\n");
    free(text);
    /* Setting it for one section keeps the old setting for the other. */
    ck_assert_ok(
        sg_fusion_switch_set(sw, SG_FUSION_GRAPH, "TbeConvDequantQuantFusionPass", true, &d), &d);
    ck_assert(sg_fusion_switch_enabled(sw, SG_FUSION_GRAPH, "TbeConvDequantQuantFusionPass"));
    ck_assert(!sg_fusion_switch_enabled(sw, SG_FUSION_UB, "TbeConvDequantQuantFusionPass"));
    sg_fusion_switch_free(sw);

    /* Empty file: nothing switched. */
    ck_assert_ok(sg_fusion_switch_parse("\n \n", 3, "c.cfg", &sw, &d), &d);
    ck_assert_uint_eq(sw->n_entries, 0);
    sg_fusion_switch_free(sw);
}
END_TEST

START_TEST(test_switch_check_entries)
{
    struct sg_diag d = {0};
    sg_fusion_switch *sw;
    const char *json = "{\"Switch\": {\"GraphFusion\": {\"AutomaticUbFusion\": \"off\", "
                       "\"MyOwnPass\": \"off\", \"ALL\": \"on\"}}}";
    ck_assert_ok(sg_fusion_switch_parse(json, strlen(json), "w.cfg", &sw, &d), &d);
    ck_assert_int_eq(sg_fusion_switch_check_entry(&sw->entries[0]), SG_FUSION_ENTRY_WRONG_SECTION);
    ck_assert_int_eq(sg_fusion_switch_check_entry(&sw->entries[1]), SG_FUSION_ENTRY_UNKNOWN);
    ck_assert_int_eq(sg_fusion_switch_check_entry(&sw->entries[2]), SG_FUSION_ENTRY_OK);
    ck_assert_uint_eq(sw->entries[1].col, 57);
    sg_fusion_switch_free(sw);
}
END_TEST

static const struct {
    const char *text;
    const char *msg; /* exact */
} bad_switch[] = {
    {"{\"Switch\": {\"GraphFusion\": {\"ALL\": \"off\"}}", "s.cfg:1:43: expected ',' or '}' in an "
                                                           "object, found end of input"},
    {"{\"Switch\": {\"GraphFusion\": {\"ALL\": off}}}", "s.cfg:1:36: expected a value, found 'o'"},
    {"{\n  \"Switch\": {\n    \"GraphFusion\": {\"ALL\": \"Off\"}\n  }\n}",
     "s.cfg:3:28: the value of \"ALL\" must be \"on\" or \"off\" (lower case)"},
    {"{\"Switch\": {\"GraphFusion\": {\"ALL\": false}}}",
     "s.cfg:1:36: the value of \"ALL\" must be \"on\" or \"off\""},
    {"{\"Switch\": {\"GraphFusion\": {}, \"GraphFusion\": {}}}",
     "s.cfg:1:32: duplicate key \"GraphFusion\" (first at line 1, column 13)"},
    {"{\"Switch\": {\"UbFusion\": {\"ALL\": \"off\"}}}",
     "s.cfg:1:13: unknown section \"UbFusion\" (expected GraphFusion or UBFusion; write "
     "UBFusion)"},
    {"{\"Switch\": {\"Fusion\": {}}}",
     "s.cfg:1:13: unknown section \"Fusion\" (expected GraphFusion or UBFusion)"},
    {"{\"switch\": {}}",
     "s.cfg:1:2: unknown top-level key \"switch\" (a fusion switch file holds only \"Switch\")"},
    {"{}", "s.cfg:1:1: no \"Switch\" object"},
    {"{\"Switch\": []}", "s.cfg:1:12: \"Switch\" must be an object, found a array"},
    {"{\"Switch\": {\"UBFusion\": \"off\"}}",
     "s.cfg:1:25: section \"UBFusion\" must be an object of \"PassName\": \"on\"|\"off\", found a "
     "string"},
    {"{\"Switch\": {\"UBFusion\": {\"A B\": \"off\"}}}",
     "s.cfg:1:26: \"A B\" is not a fusion pass name (names are letters, digits, '_', '-', '.')"},
    {"{\"Switch\": {\"UBFusion\": {\"A\": \"off\",}}}", "s.cfg:1:37: trailing comma before '}'"},
    {"SoftmaxFusionPass:off\nRequantFusionPass\n",
     "s.cfg:2:1: expected PassName:on or PassName:off (or a JSON object)"},
    {"SoftmaxFusionPass:of", "s.cfg:1:19: expected on or off after 'SoftmaxFusionPass:', found "
                             "'of'"},
    {"  :off", "s.cfg:1:3: no pass name before ':'"},
    {"Softmax FusionPass:off",
     "s.cfg:1:8: 'Softmax FusionPass' is not a fusion pass name (names are letters, digits, '_', "
     "'-', '.')"},
    {"A:off\nB:on\nA:on", "s.cfg:3:1: 'A' given twice (first on line 1)"},
    {"A:off\n\0B:on", "s.cfg:2: NUL byte: this is not a text file"},
};

START_TEST(test_switch_bad)
{
    struct sg_diag d = {0};
    sg_fusion_switch *sw = (sg_fusion_switch *)1;
    size_t len = strlen(bad_switch[_i].text);
    if (strstr(bad_switch[_i].msg, "NUL byte"))
        len += 5;
    sg_status st = sg_fusion_switch_parse(bad_switch[_i].text, len, "s.cfg", &sw, &d);
    ck_assert_int_eq(st, SG_EPARSE);
    ck_assert_ptr_null(sw);
    ck_assert_str_eq(d.msg, bad_switch[_i].msg);
}
END_TEST

START_TEST(test_switch_files)
{
    char *dir = test_tmpdir("switch");
    char path[1024], sub[1024];
    struct sg_diag d = {0};
    snprintf(path, sizeof path, "%s/fs.cfg", dir);
    sg_fusion_switch *sw = build_switch("G:ALL:off U:ALL:off");
    ck_assert_ok(sg_fusion_switch_write(sw, path, &d), &d);
    char *text = slurp(path);
    ck_assert_str_eq(text, golden_switch[0].json);
    sg_free(text);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_ne(sb.st_mode & 0044, 0); /* readable like any config file */
    sg_fusion_switch *back;
    ck_assert_ok(sg_fusion_switch_read(path, &back, &d), &d);
    ck_assert_uint_eq(back->n_entries, 2);
    sg_fusion_switch_free(back);
    /* A failed write leaves nothing behind: the target is a folder. */
    snprintf(sub, sizeof sub, "%s/folder", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(count_files(dir), 2);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_fusion_switch_write(sw, sub, &d), SG_EIO);
    ck_assert_int_eq(count_files(dir), 2);
    /* Nor in a folder that does not exist. */
    snprintf(sub, sizeof sub, "%s/none/fs.cfg", dir);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_fusion_switch_write(sw, sub, &d), SG_EIO);
    ck_assert_ptr_nonnull(strstr(d.msg, "cannot create a file beside '"));
    /* Reading a missing file names it. */
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_fusion_switch_read(sub, &back, &d), SG_EIO);
    ck_assert_ptr_nonnull(strstr(d.msg, "none/fs.cfg: cannot open"));
    sg_fusion_switch_free(sw);
    sg_free(dir);
}
END_TEST

/* ------------------------------------------------------- compiled-op map */

/* A compiled graph as 'atc --mode=1' writes it: a fused element-wise op made
 * by a UB pass out of the Mul-Sub-Sub chain, a softmax made by a graph pass,
 * and plain ops with and without original names. */
static const char *atc_json =
    "{\"name\": \"exp_overflow\", \"graph\": [\n"
    " {\"name\": \"g\", \"op\": [\n"
    "  {\"name\": \"x\", \"type\": \"Data\", \"attr\": []},\n"
    "  {\"name\": \"Mul_0Sub_1Sub_2\", \"type\": \"Sub\", \"input\": [\"x:0\"], \"attr\": [\n"
    "    {\"key\": \"_datadump_original_op_names\", \"value\": {\"list\": {\"s\": [\"Mul_0\", "
    "\"Sub_1\", \"Sub_2\"], \"val_type\": 1}}},\n"
    "    {\"key\": \"pass_name_ub\", \"value\": {\"s\": \"AutomaticUbFusion\"}},\n"
    "    {\"key\": \"_op_infer_depends\", \"value\": {\"list\": {\"val_type\": 1}}}]},\n"
    "  {\"name\": \"Exp_3\", \"type\": \"Exp\", \"attr\": [\n"
    "    {\"key\": \"_datadump_original_op_names\", \"value\": {\"list\": {\"val_type\": 1}}}]},\n"
    "  {\"name\": \"sm\", \"type\": \"SoftmaxV2\", \"attr\": [\n"
    "    {\"key\": \"_datadump_original_op_names\", \"value\": {\"list\": {\"s\": [\"ReduceMax_1\","
    "\"Sub_2b\", \"Exp_4\", \"ReduceSum_5\", \"Div_6\"]}}},\n"
    "    {\"key\": \"pass_name\", \"value\": {\"list\": {\"s\": [\"SoftmaxFusionPass\", "
    "\"ZSoftmaxPostPass\"]}}}]}\n"
    " ]},\n"
    " {\"name\": \"sub\", \"op\": [{\"name\": \"Add_9\", \"type\": \"Add\"}]},\n"
    " {\"name\": \"empty\"}\n"
    "]}\n";

START_TEST(test_map)
{
    struct sg_diag d = {0};
    sg_atc_map *map;
    ck_assert_ok(sg_atc_map_parse(atc_json, strlen(atc_json), "m.json", &map, &d), &d);
    ck_assert_uint_eq(map->n_ops, 5);
    const struct sg_atc_op *fused = &map->ops[1];
    ck_assert_str_eq(fused->name, "Mul_0Sub_1Sub_2");
    ck_assert_uint_eq(fused->n_orig, 3);
    ck_assert_str_eq(fused->ub_pass, "AutomaticUbFusion");
    ck_assert_uint_eq(fused->n_passes, 0);
    ck_assert_uint_eq(fused->line, 4);
    ck_assert(sg_atc_op_covers(fused, "Sub_1"));
    ck_assert(!sg_atc_op_covers(fused, "Mul_0Sub_1Sub_2"));
    ck_assert(sg_atc_op_covers(&map->ops[2], "Exp_3")); /* empty list: its own name */
    ck_assert(sg_atc_op_covers(&map->ops[4], "Add_9")); /* no attrs at all */
    ck_assert_uint_eq(map->ops[3].n_passes, 2);
    ck_assert_ptr_null(map->ops[3].ub_pass);

    /* Switching off what produced Sub_1 and Div_6; Exp_3 was not fused, Nope is nowhere. */
    sg_fusion_switch *sw = sg_fusion_switch_create();
    const char *nodes[] = {"Sub_1", "Exp_3", "Div_6", "Nope", "Sub_2"};
    bool uncovered[5];
    size_t n_off = 99;
    ck_assert_ok(sg_fusion_switch_off_for_nodes(sw, map, nodes, 5, uncovered, &n_off, &d), &d);
    ck_assert_uint_eq(n_off, 3);
    ck_assert(!uncovered[0] && !uncovered[1] && !uncovered[2] && uncovered[3] && !uncovered[4]);
    char *text = print_switch(sw);
    ck_assert_str_eq(text, "{\n  \"Switch\": {\n    \"GraphFusion\": {\n"
                           "      \"SoftmaxFusionPass\": \"off\",\n"
                           "      \"ZSoftmaxPostPass\": \"off\"\n    },\n"
                           "    \"UBFusion\": {\n      \"AutomaticUbFusion\": \"off\"\n    }\n"
                           "  }\n}\n");
    free(text);
    sg_fusion_switch_free(sw);

    /* A pass already off by name is found all the same; one switched on is
     * switched off, since that is what the nodes need. */
    sw = sg_fusion_switch_create();
    ck_assert_ok(sg_fusion_switch_set(sw, SG_FUSION_UB, "AutomaticUbFusion", false, &d), &d);
    ck_assert_ok(sg_fusion_switch_set(sw, SG_FUSION_GRAPH, "SoftmaxFusionPass", true, &d), &d);
    const char *two[] = {"Mul_0", "ReduceSum_5"};
    ck_assert_ok(sg_fusion_switch_off_for_nodes(sw, map, two, 2, NULL, &n_off, &d), &d);
    ck_assert_uint_eq(n_off, 3);
    ck_assert_uint_eq(sw->n_entries, 3);
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_SOFTMAX));
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_AUTOMATIC_UB));
    const char *plain[] = {"Exp_3"};
    ck_assert_ok(sg_fusion_switch_off_for_nodes(sw, map, plain, 1, NULL, &n_off, &d), &d);
    ck_assert_uint_eq(n_off, 0);
    sg_fusion_switch_free(sw);
    sg_atc_map_free(map);
    sg_atc_map_free(NULL);
}
END_TEST

static const struct {
    const char *text;
    const char *msg;
} bad_map[] = {
    {"[]", "m.json:1:1: no \"graph\" array: not the JSON of 'atc --mode=1'"},
    {"{\"graph\": {}}", "m.json:1:11: no \"graph\" array: not the JSON of 'atc --mode=1'"},
    {"{\"graph\": [1]}", "m.json:1:12: a graph must be an object, found a number"},
    {"{\"graph\": [{\"op\": {}}]}", "m.json:1:19: \"op\" must be an array, found a object"},
    {"{\"graph\": [{\"op\": [{\"type\": \"Add\"}]}]}", "m.json:1:20: op without a string \"name\""},
    {"{\"graph\": [{\"op\": [{\"name\": \"a\", \"attr\": {}}]}]}",
     "m.json:1:42: \"attr\" of op \"a\" must be an array"},
    {"{\"graph\": [{\"op\": [{\"name\": \"a\", \"attr\": [{\"key\": \"pass_name\", \"value\": "
     "{\"list\": {\"s\": [3]}}}]}]}]}",
     "m.json:1:89: attr \"pass_name\" of op \"a\" lists a number, expected strings"},
    {"{\"graph\": [{\"op\": [{\"name\": \"a\", \"attr\": [{\"key\": \"pass_name_ub\", \"value\": "
     "{\"i\": 3}}]}]}]}",
     "m.json:1:76: attr \"pass_name_ub\" of op \"a\": expected {\"list\": {\"s\": [...]}} or "
     "{\"s\": \"...\"}"},
    {"{\"graph\": [{\"op\": [{\"name\": \"a\", \"attr\": [{\"key\": 1}]}]}]}",
     "m.json:1:43: an attr of op \"a\" must be {\"key\": \"...\", \"value\": {...}}"},
    {"{\"graph\": [", "m.json:1:12: expected a value, found end of input"},
};

START_TEST(test_map_bad)
{
    struct sg_diag d = {0};
    sg_atc_map *map = (sg_atc_map *)1;
    ck_assert_int_eq(
        sg_atc_map_parse(bad_map[_i].text, strlen(bad_map[_i].text), "m.json", &map, &d),
        SG_EPARSE);
    ck_assert_ptr_null(map);
    ck_assert_str_eq(d.msg, bad_map[_i].msg);
}
END_TEST

START_TEST(test_map_file)
{
    char *dir = test_tmpdir("map");
    char path[1024];
    snprintf(path, sizeof path, "%s/m.json", dir);
    spit(path, atc_json);
    struct sg_diag d = {0};
    sg_atc_map *map;
    ck_assert_ok(sg_atc_map_read(path, &map, &d), &d);
    ck_assert_uint_eq(map->n_ops, 5);
    sg_atc_map_free(map);
    snprintf(path, sizeof path, "%s/absent.json", dir);
    ck_assert_int_eq(sg_atc_map_read(path, &map, &d), SG_EIO);
    sg_free(dir);
}
END_TEST

/* ------------------------------------------------------ precision files */

START_TEST(test_prec_golden)
{
    struct sg_diag d = {0};
    /* keep_dtype: FORMATS.md's example. */
    sg_prec_file *f = sg_prec_file_create(SG_PREC_KEEP_DTYPE);
    ck_assert_ok(sg_prec_file_add(f, SG_PREC_NODE, "Exp_12", &d), &d);
    ck_assert_ok(sg_prec_file_add(f, SG_PREC_OPTYPE, "LayerNorm", &d), &d);
    ck_assert_ok(sg_prec_file_add(f, SG_PREC_NODE, "Exp_12", &d), &d); /* once only */
    char *text = print_prec(f);
    ck_assert_str_eq(text, "Exp_12\nOpType::LayerNorm\n");
    free(text);
    sg_prec_file_free(f);

    /* customize_dtypes */
    f = sg_prec_file_create(SG_PREC_CUSTOMIZE_DTYPES);
    int32_t f32[] = {SG_DTYPE_FLOAT, SG_DTYPE_FLOAT}, f16[] = {SG_DTYPE_FLOAT16};
    ck_assert_ok(sg_prec_file_add_dtypes(f, SG_PREC_NODE, "Exp_12", f32, 1, f32, 1, &d), &d);
    ck_assert_ok(sg_prec_file_add_dtypes(f, SG_PREC_OPTYPE, "Softmax", f32, 1, f32, 1, &d), &d);
    ck_assert_ok(sg_prec_file_add_dtypes(f, SG_PREC_NODE, "model/mm:0", f32, 2, NULL, 0, &d), &d);
    ck_assert_ok(sg_prec_file_add_dtypes(f, SG_PREC_OPTYPE, "Relu", NULL, 0, f16, 1, &d), &d);
    text = print_prec(f);
    ck_assert_str_eq(text, "Exp_12::InputDtype:float32,OutputDtype:float32\n"
                           "OpType::Softmax:InputDtype:float32,OutputDtype:float32\n"
                           "model/mm:0::InputDtype:float32,float32\n"
                           "OpType::Relu:OutputDtype:float16\n");
    sg_prec_file *back;
    ck_assert_ok(sg_prec_file_parse(SG_PREC_CUSTOMIZE_DTYPES, text, strlen(text), "c", &back, &d),
                 &d);
    ck_assert_uint_eq(back->n_entries, 4);
    ck_assert_str_eq(back->entries[2].name, "model/mm:0");
    ck_assert_uint_eq(back->entries[2].n_in, 2);
    ck_assert_uint_eq(back->entries[2].n_out, 0);
    char *again = print_prec(back);
    ck_assert_str_eq(again, text);
    free(again);
    free(text);
    sg_prec_file_free(back);
    sg_prec_file_free(f);

    /* op_precision_mode: FORMATS.md's example, whatever order entries come in. */
    f = sg_prec_file_create(SG_PREC_OP_PRECISION_MODE);
    ck_assert_ok(sg_prec_file_add_mode(f, SG_PREC_NODE, "Softmax_7", "high_precision", &d), &d);
    ck_assert_ok(sg_prec_file_add_mode(f, SG_PREC_OPTYPE, "Exp", "high_performance", &d), &d);
    ck_assert_ok(sg_prec_file_add_mode(f, SG_PREC_OPTYPE, "Exp", "high_precision", &d), &d);
    text = print_prec(f);
    ck_assert_str_eq(text,
                     "[ByOpType]\nExp=high_precision\n[ByNodeName]\nSoftmax_7=high_precision\n");
    free(text);
    sg_prec_file_free(f);
    sg_prec_file_free(NULL);
}
END_TEST

START_TEST(test_prec_add_errors)
{
    static const struct {
        enum sg_prec_format format;
        enum sg_prec_target target;
        const char *name;
        const char *msg;
    } cases[] = {
        {SG_PREC_KEEP_DTYPE, SG_PREC_NODE, "", "'': an empty name cannot be"},
        {SG_PREC_KEEP_DTYPE, SG_PREC_NODE, "a\nb", "a name with a line break"},
        {SG_PREC_KEEP_DTYPE, SG_PREC_NODE, " a", "leading or trailing blanks"},
        {SG_PREC_KEEP_DTYPE, SG_PREC_NODE, "OpType::Exp", "starting with \"OpType:\""},
        {SG_PREC_KEEP_DTYPE, SG_PREC_OPTYPE, "Layer Norm", "not an identifier"},
        {SG_PREC_CUSTOMIZE_DTYPES, SG_PREC_NODE, "a:", "ending in ':'"},
        {SG_PREC_OP_PRECISION_MODE, SG_PREC_NODE, "a=b", "holding '='"},
        {SG_PREC_OP_PRECISION_MODE, SG_PREC_NODE, "[x", "starting with '['"},
    };
    int32_t f32 = SG_DTYPE_FLOAT;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sg_diag d = {0};
        sg_prec_file *f = sg_prec_file_create(cases[i].format);
        sg_status st =
            cases[i].format == SG_PREC_KEEP_DTYPE
                ? sg_prec_file_add(f, cases[i].target, cases[i].name, &d)
            : cases[i].format == SG_PREC_CUSTOMIZE_DTYPES
                ? sg_prec_file_add_dtypes(f, cases[i].target, cases[i].name, &f32, 1, NULL, 0, &d)
                : sg_prec_file_add_mode(f, cases[i].target, cases[i].name, "high_precision", &d);
        ck_assert_int_eq(st, SG_EINVAL);
        ck_assert_msg(strstr(d.msg, cases[i].msg), "case %zu: '%s'", i, d.msg);
        ck_assert_uint_eq(f->n_entries, 0);
        sg_prec_file_free(f);
    }
    struct sg_diag d = {0};
    sg_prec_file *f = sg_prec_file_create(SG_PREC_CUSTOMIZE_DTYPES);
    int32_t str = SG_DTYPE_STRING;
    ck_assert_int_eq(sg_prec_file_add_dtypes(f, SG_PREC_NODE, "a", &str, 1, NULL, 0, &d),
                     SG_EINVAL);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_prec_file_add_dtypes(f, SG_PREC_NODE, "a", NULL, 0, NULL, 0, &d),
                     SG_EINVAL);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_prec_file_add(f, SG_PREC_NODE, "a", &d), SG_EINVAL);
    ck_assert_str_eq(d.msg, "cannot add a keep_dtype entry to a customize_dtypes file");
    sg_prec_file_free(f);
    f = sg_prec_file_create(SG_PREC_OP_PRECISION_MODE);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_prec_file_add_mode(f, SG_PREC_OPTYPE, "Exp", "fast", &d), SG_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "unknown op precision mode 'fast'"));
    sg_prec_file_free(f);
}
END_TEST

START_TEST(test_prec_read_good)
{
    struct sg_diag d = {0};
    sg_prec_file *f;
    const char *keep = "\xEF\xBB\xBF"
                       "Exp_12\r\n\n  OpType::LayerNorm  \n/blocks.0/attn/Softmax\n"
                       "Exp_12\n";
    ck_assert_ok(sg_prec_file_parse(SG_PREC_KEEP_DTYPE, keep, strlen(keep), "k", &f, &d), &d);
    ck_assert_uint_eq(f->n_entries, 3);
    ck_assert_str_eq(f->entries[0].name, "Exp_12");
    ck_assert_int_eq(f->entries[1].target, SG_PREC_OPTYPE);
    ck_assert_str_eq(f->entries[1].name, "LayerNorm");
    ck_assert_uint_eq(f->entries[2].line, 4);
    sg_prec_file_free(f);

    const char *mode = "Exp=high_precision\n[ByNodeName]\n Softmax_7 = keep_fp16\n[ByOpType]\n"
                       "Pow=support_out_of_bound_index\n";
    ck_assert_ok(sg_prec_file_parse(SG_PREC_OP_PRECISION_MODE, mode, strlen(mode), "m", &f, &d),
                 &d);
    ck_assert_uint_eq(f->n_entries, 3);
    ck_assert_int_eq(f->entries[0].target, SG_PREC_OPTYPE); /* bare line: the old form */
    ck_assert_int_eq(f->entries[1].target, SG_PREC_NODE);
    ck_assert_str_eq(f->entries[1].name, "Softmax_7");
    ck_assert_str_eq(f->entries[1].mode, "keep_fp16");
    char *text = print_prec(f);
    ck_assert_str_eq(text, "[ByOpType]\nExp=high_precision\nPow=support_out_of_bound_index\n"
                           "[ByNodeName]\nSoftmax_7=keep_fp16\n");
    free(text);
    sg_prec_file_free(f);
}
END_TEST

static const struct {
    enum sg_prec_format format;
    const char *text;
    const char *msg;
} bad_prec[] = {
    {SG_PREC_KEEP_DTYPE, "Exp_1\nOpType:Exp\n", "k:2:1: \"OpType:\" takes two colons: OpType::Exp"},
    {SG_PREC_KEEP_DTYPE, "optype::Exp", "k:1:1: write \"OpType::\" exactly (it is case-sensitive)"},
    {SG_PREC_KEEP_DTYPE, "OpType::", "k:1:9: no op type after \"OpType::\""},
    {SG_PREC_KEEP_DTYPE, "a\n  OpType::Layer Norm",
     "k:2:11: op type \"Layer Norm\" is not an identifier (letters, digits, '_')"},
    {SG_PREC_KEEP_DTYPE, "Exp_12::InputDtype:float32,OutputDtype:float32",
     "k:1:1: not a keep_dtype entry (this is customize_dtypes syntax)"},
    {SG_PREC_KEEP_DTYPE, "[ByOpType]",
     "k:1:1: not a keep_dtype entry (this is an "
     "op_precision_mode section)"},
    {SG_PREC_KEEP_DTYPE, "Exp = high_precision",
     "k:1:1: not a keep_dtype entry (this is op_precision_mode syntax)"},
    {SG_PREC_KEEP_DTYPE, "a\nb\0c", "k:2: NUL byte: this is not a text file"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12",
     "c:1:1: expected NODE::InputDtype:...,OutputDtype:... or "
     "OpType::TYPE:InputDtype:...,OutputDtype:..."},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12::",
     "c:1:9: expected InputDtype:... or OutputDtype:... "
     "after the name"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12::InputDtype:float33",
     "c:1:20: unknown dtype \"float33\" (valid: float16, float32, float, bfloat16, double, int8, "
     "int16, int32, int64, uint8, uint16, uint32, uint64, bool)"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12::InputDtype:float32,,OutputDtype:float32",
     "c:1:28: missing dtype"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12::OutputDtype:float32,InputDtype:float32",
     "c:1:29: InputDtype must come before OutputDtype"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12::InputDtype:float32,InputDtype:float32",
     "c:1:28: InputDtype given twice"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12::Dtype:float32",
     "c:1:9: expected InputDtype:... or OutputDtype:..., found \"Dtype:float32\""},
    {SG_PREC_CUSTOMIZE_DTYPES, "OpType::Softmax",
     "c:1:16: expected OpType::Softmax:InputDtype:...,OutputDtype:..."},
    {SG_PREC_CUSTOMIZE_DTYPES, "OpType:::InputDtype:float16",
     "c:1:9: no op type after "
     "\"OpType::\""},
    {SG_PREC_CUSTOMIZE_DTYPES, "::InputDtype:float16", "c:1:1: no node name before \"::\""},
    {SG_PREC_CUSTOMIZE_DTYPES, "a::InputDtype:float16\nb::OutputDtype:int8\na::OutputDtype:float16",
     "c:3:1: \"a\" given twice (first on line 1)"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp_12", "c:1:1: expected NODE::"},
    {SG_PREC_CUSTOMIZE_DTYPES, "Exp=high_precision",
     "c:1:1: not a customize_dtypes entry (this is op_precision_mode syntax)"},
    {SG_PREC_OP_PRECISION_MODE, "[ByOpType]\nExp=fast",
     "m:2:5: unknown mode \"fast\" (valid: high_precision, high_performance, "
     "support_out_of_bound_index, enable_float_32_execution, enable_hi_float_32_execution, "
     "keep_fp16, super_performance)"},
    {SG_PREC_OP_PRECISION_MODE, "[ByType]",
     "m:1:2: unknown section [ByType] (expected "
     "[ByOpType] or [ByNodeName])"},
    {SG_PREC_OP_PRECISION_MODE, "[ByOpType", "m:1:1: section header without ']'"},
    {SG_PREC_OP_PRECISION_MODE, "Exp", "m:1:1: expected NAME=MODE or a [section]"},
    {SG_PREC_OP_PRECISION_MODE, "Exp_12", "m:1:1: expected NAME=MODE or a [section]"},
    {SG_PREC_OP_PRECISION_MODE, "=high_precision", "m:1:1: no name before '='"},
    {SG_PREC_OP_PRECISION_MODE, "[ByOpType]\nblocks/0/Exp=high_precision",
     "m:2:1: op type \"blocks/0/Exp\" is not an identifier (letters, digits, '_'); node names go "
     "under [ByNodeName]"},
    {SG_PREC_OP_PRECISION_MODE,
     "[ByNodeName]\na=keep_fp16\n[ByOpType]\na=keep_fp16\n"
     "[ByNodeName]\na=high_precision",
     "m:6:1: \"a\" given twice in [ByNodeName] (first on line 2)"},
};

START_TEST(test_prec_bad)
{
    struct sg_diag d = {0};
    sg_prec_file *f = (sg_prec_file *)1;
    const char *label = bad_prec[_i].format == SG_PREC_KEEP_DTYPE         ? "k"
                        : bad_prec[_i].format == SG_PREC_CUSTOMIZE_DTYPES ? "c"
                                                                          : "m";
    size_t len = strlen(bad_prec[_i].text);
    if (strstr(bad_prec[_i].msg, "NUL byte"))
        len += 2;
    ck_assert_int_eq(sg_prec_file_parse(bad_prec[_i].format, bad_prec[_i].text, len, label, &f, &d),
                     SG_EPARSE);
    ck_assert_ptr_null(f);
    ck_assert_msg(strncmp(d.msg, bad_prec[_i].msg, strlen(bad_prec[_i].msg)) == 0,
                  "case %d: got '%s'\nwant '%s'", _i, d.msg, bad_prec[_i].msg);
}
END_TEST

START_TEST(test_prec_unmatched)
{
    struct sg_diag d = {0};
    sg_model *m;
    ck_assert_ok(sg_model_load(test_src_path("models/exp_overflow.onnx"), NULL, &m, &d), &d);
    sg_prec_file *f;
    const char *keep = "Exp_3\nExp_12\nOpType::Exp\nOpType::LayerNorm\nOpType::Cast\nSub_7\n";
    ck_assert_ok(sg_prec_file_parse(SG_PREC_KEEP_DTYPE, keep, strlen(keep), "k", &f, &d), &d);
    bool un[6];
    ck_assert_uint_eq(sg_prec_file_unmatched(f, m, un), 2);
    ck_assert(!un[0] && un[1] && !un[2] && un[3] && !un[4] && !un[5]);
    sg_prec_file_free(f);
    sg_model_free(m);

    /* An ONNX Softmax is matched by ATC's name for it. */
    m = sg_model_create();
    ck_assert_ptr_nonnull(sg_node_create(m->graph, "Softmax", NULL, "sm", &d));
    f = sg_prec_file_create(SG_PREC_KEEP_DTYPE);
    ck_assert_ok(sg_prec_file_add(f, SG_PREC_OPTYPE, "SoftmaxV2", &d), &d);
    ck_assert_ok(sg_prec_file_add(f, SG_PREC_OPTYPE, "Softmax", &d), &d);
    ck_assert_uint_eq(sg_prec_file_unmatched(f, m, un), 0);
    ck_assert_str_eq(sg_atc_optype_for_onnx("Softmax"), "SoftmaxV2");
    ck_assert_ptr_null(sg_atc_optype_for_onnx("Exp"));
    sg_prec_file_free(f);
    sg_model_free(m);
}
END_TEST

START_TEST(test_prec_files)
{
    char *dir = test_tmpdir("prec");
    char path[1024];
    struct sg_diag d = {0};
    snprintf(path, sizeof path, "%s/keep.cfg", dir);
    sg_prec_file *f = sg_prec_file_create(SG_PREC_KEEP_DTYPE);
    ck_assert_ok(sg_prec_file_add(f, SG_PREC_NODE, "Exp_3", &d), &d);
    ck_assert_ok(sg_prec_file_write(f, path, &d), &d);
    sg_prec_file *back;
    ck_assert_ok(sg_prec_file_read(SG_PREC_KEEP_DTYPE, path, &back, &d), &d);
    ck_assert_uint_eq(back->n_entries, 1);
    sg_prec_file_free(back);
    /* Read as the wrong format: the message says which one it is. */
    spit(path, "Exp_3::InputDtype:float32\n");
    ck_assert_int_eq(sg_prec_file_read(SG_PREC_KEEP_DTYPE, path, &back, &d), SG_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "keep.cfg:1:1: not a keep_dtype entry (this is "
                                        "customize_dtypes syntax)"));
    sg_prec_file_free(f);
    sg_free(dir);
}
END_TEST

/* ------------------------------------------------ allocation failures */

typedef sg_status (*parse_fn)(void);

static sg_status parse_switch_once(void)
{
    sg_fusion_switch *sw;
    const char *json = "{\"Switch\": {\"GraphFusion\": {\"ALL\": \"off\", \"A\": \"on\"}, "
                       "\"UBFusion\": {\"B\": \"off\"}}}";
    sg_status st = sg_fusion_switch_parse(json, strlen(json), "x", &sw, NULL);
    if (st == SG_OK) {
        FILE *null = fopen("/dev/null", "w");
        sg_fusion_switch_print(sw, null);
        fclose(null);
    }
    sg_fusion_switch_free(sw);
    return st;
}

static sg_status parse_lines_once(void)
{
    sg_fusion_switch *sw;
    const char *t = "A:off\nB:on\nC:off\nD:off\nE:off\nF:off\nG:off\nH:off\nI:off\n";
    sg_status st = sg_fusion_switch_parse(t, strlen(t), "x", &sw, NULL);
    sg_fusion_switch_free(sw);
    return st;
}

static sg_status parse_map_once(void)
{
    sg_atc_map *map;
    sg_status st = sg_atc_map_parse(atc_json, strlen(atc_json), "m", &map, NULL);
    if (st)
        return st;
    sg_fusion_switch *sw = sg_fusion_switch_create();
    const char *nodes[] = {"Sub_1", "Div_6"};
    if (!sw)
        st = SG_ENOMEM;
    else
        st = sg_fusion_switch_off_for_nodes(sw, map, nodes, 2, NULL, NULL, NULL);
    sg_fusion_switch_free(sw);
    sg_atc_map_free(map);
    return st;
}

static sg_status parse_customize_once(void)
{
    sg_prec_file *f;
    const char *t = "a::InputDtype:float32,OutputDtype:float16\nOpType::Exp:InputDtype:float32\n"
                    "b::OutputDtype:int8\nc::OutputDtype:int8\nd::OutputDtype:int8\n";
    sg_status st = sg_prec_file_parse(SG_PREC_CUSTOMIZE_DTYPES, t, strlen(t), "c", &f, NULL);
    sg_prec_file_free(f);
    return st;
}

static sg_status parse_mode_once(void)
{
    sg_prec_file *f;
    const char *t = "[ByOpType]\nExp=high_precision\n[ByNodeName]\nn=keep_fp16\n";
    sg_status st = sg_prec_file_parse(SG_PREC_OP_PRECISION_MODE, t, strlen(t), "m", &f, NULL);
    sg_prec_file_free(f);
    return st;
}

static const parse_fn alloc_cases[] = {parse_switch_once, parse_lines_once, parse_map_once,
                                       parse_customize_once, parse_mode_once};

START_TEST(test_alloc_failures)
{
    int64_t live = sg_alloc_live();
    for (uint64_t n = 1;; n++) {
        sg_alloc_fail_at(n);
        sg_status st = alloc_cases[_i]();
        uint64_t made = sg_alloc_fail_at(0);
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

Suite *suite_fusion(void)
{
    Suite *s = suite_create("fusion");
    TCase *tc = tcase_create("catalogue");
    tcase_add_test(tc, test_catalogue);
    suite_add_tcase(s, tc);

    tc = tcase_create("switch");
    tcase_add_test(tc, test_switch_semantics);
    tcase_add_loop_test(tc, test_switch_golden, 0, sizeof golden_switch / sizeof golden_switch[0]);
    tcase_add_test(tc, test_switch_read_forms);
    tcase_add_test(tc, test_switch_check_entries);
    tcase_add_loop_test(tc, test_switch_bad, 0, sizeof bad_switch / sizeof bad_switch[0]);
    tcase_add_test(tc, test_switch_files);
    suite_add_tcase(s, tc);

    tc = tcase_create("map");
    tcase_add_test(tc, test_map);
    tcase_add_loop_test(tc, test_map_bad, 0, sizeof bad_map / sizeof bad_map[0]);
    tcase_add_test(tc, test_map_file);
    suite_add_tcase(s, tc);

    tc = tcase_create("precision");
    tcase_add_test(tc, test_prec_golden);
    tcase_add_test(tc, test_prec_add_errors);
    tcase_add_test(tc, test_prec_read_good);
    tcase_add_loop_test(tc, test_prec_bad, 0, sizeof bad_prec / sizeof bad_prec[0]);
    tcase_add_test(tc, test_prec_unmatched);
    tcase_add_test(tc, test_prec_files);
    suite_add_tcase(s, tc);

    tc = tcase_create("alloc");
    tcase_add_loop_test(tc, test_alloc_failures, 0, sizeof alloc_cases / sizeof alloc_cases[0]);
    suite_add_tcase(s, tc);
    return s;
}
