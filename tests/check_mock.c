/*
 * check_mock.c - the mock compiler (atc/sg_mock.h) and running mock OMs:
 * the seed's Exp overflow under each precision mode, overflow mode,
 * keep_dtype and fusion switch; each fusion rule (fires when its pass is
 * on, not when it is off, and the fused model computes what the unfused
 * one does); compute dtypes per precision mode and per customize_dtypes
 * entry; float32 accumulation in cube ops; the --mode=1 map; saving,
 * loading and device dump names; bad input; allocation failures.
 *
 * Models come from models/make_models.py --tests (ctest fixture).
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_dump.h"
#include "sg_dumpname.h"
#include "sg_io.h"
#include "sg_mock.h"
#include "sg_mockom.h"
#include "sg_kernel.h"
#include "sg_runtime.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODELS_DIR SG_BINARY_DIR "/test-models"

static sg_model *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.onnx", MODELS_DIR, name);
    sg_model *m = NULL;
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_load(path, NULL, &m, &d), &d);
    return m;
}

/* ------------------------------------------------------------ compiling */

struct job {
    const char *precision; /* NULL: ATC's default */
    const char *fusion;    /* fusion switch file text, NULL: all on */
    const char *keep;      /* keep_dtype file text */
    const char *customize; /* customize_dtypes file text */
    const char *shapes;    /* --input_shape */
    const char *soc;       /* NULL: Ascend910B1 */
    enum sg_overflow overflow;
};

/* Compile m as `j` says; the status, with the report and diag filled. */
static sg_status try_compile(sg_model *m, const struct job *j, sg_mock_report *rep,
                             struct sg_diag *d)
{
    sg_fusion_switch *sw = NULL;
    sg_prec_file *keep = NULL, *cust = NULL;
    sg_input_shapes *shapes = NULL;
    struct sg_diag pd = {0};
    if (j->fusion)
        ck_assert_ok(sg_fusion_switch_parse(j->fusion, strlen(j->fusion), "fs.cfg", &sw, &pd), &pd);
    if (j->keep)
        ck_assert_ok(sg_prec_file_parse(SG_PREC_KEEP_DTYPE, j->keep, strlen(j->keep), "keep.cfg",
                                        &keep, &pd),
                     &pd);
    if (j->customize)
        ck_assert_ok(sg_prec_file_parse(SG_PREC_CUSTOMIZE_DTYPES, j->customize,
                                        strlen(j->customize), "cust.cfg", &cust, &pd),
                     &pd);
    if (j->shapes)
        ck_assert_ok(sg_input_shapes_parse(j->shapes, &shapes, &pd), &pd);
    const struct sg_precision_mode *pm = NULL;
    if (j->precision)
        ck_assert_ptr_nonnull(pm = sg_precision_mode_find(j->precision));
    struct sg_mock_inputs in = {.soc = j->soc ? j->soc : "Ascend910B1",
                                .precision = pm,
                                .shapes = shapes,
                                .keep_dtype = keep,
                                .keep_dtype_label = "keep.cfg",
                                .customize_dtypes = cust,
                                .customize_dtypes_label = "cust.cfg",
                                .fusion_switch = sw,
                                .overflow = j->overflow};
    sg_status st = sg_mock_compile_model(m, &in, rep, d);
    sg_fusion_switch_free(sw);
    sg_prec_file_free(keep);
    sg_prec_file_free(cust);
    sg_input_shapes_free(shapes);
    return st;
}

static void compile(sg_model *m, const struct job *j, sg_mock_report *rep)
{
    struct sg_diag d = {0};
    ck_assert_ok(try_compile(m, j, rep, &d), &d);
    ck_verify(m);
}

static const char all_off[] = "{\"Switch\":{\"GraphFusion\":{\"ALL\":\"off\"},"
                              "\"UBFusion\":{\"ALL\":\"off\"}}}";

/* -------------------------------------------------------------- running */

/* One observed node output (float32 tensors only). */
struct seen {
    char node[256], type[64];
    int64_t numel;
    float *data;
};

struct run {
    struct seen s[64];
    size_t n;
    float *out[4]; /* graph outputs */
    int64_t out_n[4];
    uint32_t n_out;
};

static sg_status observe(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                         void *ctx, struct sg_diag *diag)
{
    (void)index;
    (void)depth;
    (void)diag;
    struct run *r = ctx;
    if (!v || v->kind != SG_RT_TENSOR || v->dtype != SG_DTYPE_FLOAT)
        return SG_OK;
    ck_assert_uint_lt(r->n, 64);
    struct seen *s = &r->s[r->n++];
    snprintf(s->node, sizeof s->node, "%s", n->name);
    sg_mockom_op_type(n, s->type, sizeof s->type);
    s->numel = v->numel;
    s->data = malloc((size_t)v->numel * sizeof(float) + 1);
    memcpy(s->data, v->data, (size_t)v->numel * sizeof(float));
    return SG_OK;
}

struct input {
    const char *name;
    int64_t dims[4];
    uint32_t rank;
    const float *data; /* NULL: filled by fill() */
};

/* Deterministic inputs in [lo, hi]. */
static float fill(int64_t i, int64_t n, float lo, float hi)
{
    return lo + (hi - lo) * (float)((i * 7919) % n) / (float)(n > 1 ? n - 1 : 1);
}

/* Run m on ins: as a mock OM (its own numerics) when it is one, else fp32. */
static void run(sg_model *m, const struct input *ins, size_t n_ins, float lo, float hi,
                struct run *r)
{
    memset(r, 0, sizeof *r);
    struct sg_diag d = {0};
    struct sg_rt_opts o = {.on_output = observe, .observe_ctx = r};
    if (sg_mockom_is(m))
        ck_assert_ok(sg_rt_opts_mock(m, &o, &d), &d);
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, &o, &rt, &d), &d);
    for (size_t i = 0; i < n_ins; i++) {
        sg_rt_value *v;
        ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, ins[i].dims, ins[i].rank, &v, &d), &d);
        for (int64_t k = 0; k < v->numel; k++)
            ((float *)v->data)[k] = ins[i].data ? ins[i].data[k] : fill(k, v->numel, lo, hi);
        ck_assert_ok(sg_rt_set_input(rt, ins[i].name, v, &d), &d);
        sg_rt_value_unref(v);
    }
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    r->n_out = sg_rt_n_outputs(rt);
    ck_assert_uint_le(r->n_out, 4);
    for (uint32_t i = 0; i < r->n_out; i++) {
        const sg_rt_value *v = sg_rt_output(rt, i);
        ck_assert_int_eq(v->dtype, SG_DTYPE_FLOAT);
        r->out_n[i] = v->numel;
        r->out[i] = malloc((size_t)v->numel * sizeof(float) + 1);
        memcpy(r->out[i], v->data, (size_t)v->numel * sizeof(float));
    }
    sg_rt_free(rt);
}

static void run_free(struct run *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->s[i].data);
    for (uint32_t i = 0; i < r->n_out; i++)
        free(r->out[i]);
}

static const struct seen *seen(const struct run *r, const char *node)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->s[i].node, node) == 0)
            return &r->s[i];
    return NULL;
}

static int64_t count_if(const float *v, int64_t n, int (*pred)(float))
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += pred(v[i]) != 0;
    return c;
}

static int is_nan(float x)
{
    return isnan(x);
}

static int is_inf(float x)
{
    return isinf(x);
}

static float max_abs(const float *v, int64_t n)
{
    float m = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabsf(v[i]) > m)
            m = fabsf(v[i]);
    return m;
}

/* Every element of got within 1e-5 relative of want (1e-7 absolute at 0). */
static void assert_rel(const char *what, const float *got, const float *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs((double)got[i] - want[i]) <= 1e-5 * fabs((double)want[i]) + 1e-7,
                      "%s[%lld]: fused %.9g, unfused %.9g", what, (long long)i, got[i], want[i]);
}

/* ------------------------------------------------------ the seed's case */

static const struct input exp_in[] = {{"x", {1, 4, 16}, 3, NULL}};

static const struct {
    const char *what;
    struct job job;
    bool out_nan;      /* the network output has NaN */
    int exp_seen;      /* Exp_3's own output is dumped */
    bool exp_inf;      /* ... and overflows to inf */
    bool exp_sat;      /* ... and saturates at 65504 */
    const char *fused; /* a fused op whose output is dumped, or NULL */
} exp_cases[] = {
    {"force_fp16, inf, fusion on",
     {"force_fp16", NULL, NULL, NULL, NULL, "Ascend910B1", 0},
     true,
     false,
     false,
     false,
     "Exp_3Mul_6Add_9"},
    {"force_fp16, inf, fusion off",
     {"force_fp16", all_off, NULL, NULL, NULL, NULL, 0},
     true,
     true,
     true,
     false,
     NULL},
    {"force_fp16, saturation, fusion off",
     {"force_fp16", all_off, NULL, NULL, NULL, NULL, SG_OVERFLOW_SATURATION},
     false,
     true,
     false,
     true,
     NULL},
    {"force_fp16, 310P default (saturation), fusion on",
     {"force_fp16", NULL, NULL, NULL, NULL, "Ascend310P3", 0},
     false,
     false,
     false,
     false,
     "Exp_3Mul_6Add_9"},
    {"force_fp32, inf, fusion off",
     {"force_fp32", all_off, NULL, NULL, NULL, NULL, 0},
     false,
     true,
     false,
     false,
     NULL},
    {"force_fp32, inf, fusion on",
     {"force_fp32", NULL, NULL, NULL, NULL, NULL, 0},
     false,
     false,
     false,
     false,
     "Exp_3Mul_6Add_9"},
    /* Exp kept in float32 no longer overflows, but its float16 reader
     * Mul_6 takes its 2.3e8 as float16 (the cast ATC inserts): inf, then
     * NaN downstream, as on the device. */
    {"keep_dtype Exp_3, fusion off",
     {"force_fp16", all_off, "Exp_3\n", NULL, NULL, NULL, 0},
     true,
     true,
     false,
     false,
     NULL},
    /* Exp_3 in float32 no longer fuses with its float16 neighbours. */
    {"keep_dtype Exp_3, fusion on",
     {"force_fp16", NULL, "Exp_3\n", NULL, NULL, NULL, 0},
     true,
     true,
     false,
     false,
     "Mul_6Add_9"},
    {"keep_dtype OpType::Exp",
     {NULL, all_off, "OpType::Exp\n", NULL, NULL, NULL, 0},
     true,
     true,
     false,
     false,
     NULL},
    {"allow_mix_precision keeps Exp in float32",
     {"allow_mix_precision", all_off, NULL, NULL, NULL, NULL, 0},
     true,
     true,
     false,
     false,
     NULL},
    {"customize_dtypes Exp_3 float32",
     {"force_fp16", all_off, NULL, "Exp_3::InputDtype:float32,OutputDtype:float32\n", NULL, NULL,
      0},
     true,
     true,
     false,
     false,
     NULL},
    /* Keeping Exp and what reads its result in float32 fixes it (and the
     * three, all float32 now, fuse again). */
    {"keep_dtype Exp_3, Mul_6, Add_9",
     {"force_fp16", NULL, "Exp_3\nMul_6\nAdd_9\n", NULL, NULL, NULL, 0},
     false,
     false,
     false,
     false,
     "Exp_3Mul_6Add_9"},
    {"keep_dtype Exp_3 in saturation mode",
     {"force_fp16", all_off, "Exp_3\n", NULL, NULL, NULL, SG_OVERFLOW_SATURATION},
     false,
     true,
     false,
     false,
     NULL},
    {"must_keep_origin_dtype",
     {"must_keep_origin_dtype", NULL, NULL, NULL, NULL, NULL, 0},
     false,
     false,
     false,
     false,
     "Exp_3Mul_6Add_9"},
};

START_TEST(test_exp_overflow)
{
    const __typeof__(exp_cases[0]) *c = &exp_cases[_i];
    sg_model *gold = load("exp_overflow"), *m = load("exp_overflow");
    sg_mock_report rep = {0};
    compile(m, &c->job, &rep);
    struct run g, t;
    run(gold, exp_in, 1, 0.0f, 5.0f, &g);
    run(m, exp_in, 1, 0.0f, 5.0f, &t);
    /* The golden run is finite although exp(t) reaches 2.3e8. */
    ck_assert_int_eq(count_if(g.out[0], g.out_n[0], is_nan), 0);
    ck_assert_float_gt(max_abs(seen(&g, "Exp_3")->data, 64), 1e8);

    int64_t nan = count_if(t.out[0], t.out_n[0], is_nan);
    ck_assert_msg(c->out_nan ? nan > 0 : nan == 0, "%s: %lld NaN in the output", c->what,
                  (long long)nan);
    const struct seen *e = seen(&t, "Exp_3");
    ck_assert_msg(c->exp_seen ? e != NULL : e == NULL, "%s: Exp_3's output %s dumped", c->what,
                  e ? "is" : "is not");
    if (e) {
        int64_t inf = count_if(e->data, e->numel, is_inf);
        ck_assert_msg(c->exp_inf ? inf > 0 : inf == 0, "%s: %lld inf at Exp_3", c->what,
                      (long long)inf);
        float mx = max_abs(e->data, e->numel);
        if (c->exp_sat)
            ck_assert_msg(mx == 65504.0f, "%s: Exp_3 max %g, not 65504", c->what, mx);
        else if (!c->exp_inf)
            ck_assert_msg(mx > 1e8f, "%s: Exp_3 max %g: not float32", c->what, mx);
    }
    const struct seen *mul = seen(&t, "Mul_6");
    if (mul) /* the inf becomes NaN (inf * 0) in Mul_6, and so the output */
        ck_assert_int_eq(count_if(mul->data, 64, is_nan) > 0, c->out_nan);
    if (c->fused) {
        const struct seen *f = seen(&t, c->fused);
        ck_assert_msg(f != NULL, "%s: fused op %s not dumped", c->what, c->fused);
        ck_assert_int_eq(count_if(f->data, f->numel, is_nan) > 0, c->out_nan);
        ck_assert_ptr_null(mul); /* inside a fused op */
    }
    if (!c->out_nan && strcmp(c->job.precision ? c->job.precision : "", "force_fp16") != 0) {
        /* float32 vector ops: the output is the golden one, up to the
         * float16 Mul-Sub-Sub chain feeding it. */
        for (int64_t i = 0; i < 64; i++)
            ck_assert_float_le(fabsf(t.out[0][i] - g.out[0][i]),
                               1e-2f * fabsf(g.out[0][i]) + 1e-2f);
    }
    run_free(&g);
    run_free(&t);
    sg_mock_report_clear(&rep);
    sg_model_free(gold);
    sg_model_free(m);
}
END_TEST

/* ------------------------------------------------------- fusion rules */

static const struct {
    const char *model;
    enum sg_fusion_pass_id pass;
    size_t fired;
    const char *fused_type;
    const char *witness; /* an ONNX node that exists only when the pass is off */
    struct input in[2];
    size_t n_in;
} rules[] = {
    {"conv_bn_act",
     SG_FP_CONV_BATCHNORM,
     1,
     "Conv2D",
     "BatchNormalization_1",
     {{"x", {1, 3, 8, 8}, 4, NULL}},
     1},
    {"conv_bn_act", SG_FP_COMMON_RULES0, 1, "Conv2D", "Relu_2", {{"x", {1, 3, 8, 8}, 4, NULL}}, 1},
    {"conv_bn_act", SG_FP_CONV_CLIP, 1, "Conv2D", "Clip_4", {{"x", {1, 3, 8, 8}, 4, NULL}}, 1},
    {"matmul_bias",
     SG_FP_MATMUL_BIASADD,
     3,
     NULL,
     "Add_1",
     {{"x", {2, 5, 8}, 3, NULL}, {"x2", {3, 8}, 2, NULL}},
     2},
    {"softmax_pattern",
     SG_FP_SOFTMAX,
     1,
     "SoftmaxV2",
     "ReduceMax_0",
     {{"x", {2, 3, 10}, 3, NULL}},
     1},
    {"layernorm_pattern",
     SG_FP_LAYERNORM_ONNX,
     1,
     "LayerNorm",
     "Pow_4",
     {{"x", {2, 4, 16}, 3, NULL}},
     1},
    /* the same at opset 18, the Reduce axes given as inputs */
    {"softmax_pattern_op18",
     SG_FP_SOFTMAX,
     1,
     "SoftmaxV2",
     "ReduceMax_0",
     {{"x", {2, 3, 10}, 3, NULL}},
     1},
    {"layernorm_pattern_op18",
     SG_FP_LAYERNORM_ONNX,
     1,
     "LayerNorm",
     "Pow_4",
     {{"x", {2, 4, 16}, 3, NULL}},
     1},
    {"exp_overflow",
     SG_FP_AUTOMATIC_UB,
     3,
     "FusedElementwise",
     "Exp_3",
     {{"x", {1, 4, 16}, 3, NULL}},
     1},
};

/* Nodes of the main graph made by `pass` (pass_name or pass_name_ub). */
static size_t made_by(const sg_model *m, enum sg_fusion_pass_id pass, const char *type)
{
    const char *name = sg_fusion_pass_get(pass)->name;
    size_t n = 0;
    for (const sg_node *node = m->graph->first; node; node = node->next) {
        bool hit = false;
        const sg_attr *a = sg_node_attr(node, SG_MOCKOM_ATTR_PASS);
        for (size_t i = 0; a && i < a->n_strings; i++)
            hit |= a->strings[i].len == strlen(name) &&
                   !memcmp(a->strings[i].data, name, a->strings[i].len);
        sg_bytes none = {NULL, 0}, ub = sg_attr_bytes(node, SG_MOCKOM_ATTR_PASS_UB, none);
        hit |= ub.len == strlen(name) && !memcmp(ub.data, name, ub.len);
        if (hit) {
            ck_assert_str_eq(node->domain, SG_MOCKOM_DOMAIN);
            if (type)
                ck_assert_str_eq(node->op_type, type);
            n++;
        }
    }
    return n;
}

START_TEST(test_fusion_rule)
{
    const __typeof__(rules[0]) *c = &rules[_i];
    const char *pass = sg_fusion_pass_get(c->pass)->name;
    struct run g, t;
    sg_model *gold = load(c->model);
    run(gold, c->in, c->n_in, -2.0f, 2.0f, &g);
    for (int off = 0; off < 2; off++) {
        sg_model *m = load(c->model);
        char sw[256];
        snprintf(sw, sizeof sw, "%s:off\n", pass);
        /* float32 everywhere: the fused ops must compute what their parts do. */
        struct job j = {"must_keep_origin_dtype", off ? sw : NULL, NULL, NULL, NULL, NULL, 0};
        sg_mock_report rep = {0};
        compile(m, &j, &rep);
        ck_assert_msg(rep.fired[c->pass] == (off ? 0 : c->fired), "%s %s: fired %zu times", pass,
                      off ? "off" : "on", rep.fired[c->pass]);
        ck_assert_uint_eq(made_by(m, c->pass, c->fused_type), off ? 0 : c->fired);
        ck_assert_msg((sg_graph_node(m->graph, c->witness) != NULL) == (bool)off,
                      "%s %s: node %s %s", pass, off ? "off" : "on", c->witness,
                      off ? "fused away" : "still there");
        run(m, c->in, c->n_in, -2.0f, 2.0f, &t);
        ck_assert_uint_eq(t.n_out, g.n_out);
        for (uint32_t o = 0; o < g.n_out; o++) {
            ck_assert_int_eq(t.out_n[o], g.out_n[o]);
            assert_rel(pass, t.out[o], g.out[o], g.out_n[o]);
        }
        run_free(&t);
        sg_mock_report_clear(&rep);
        sg_model_free(m);
    }
    run_free(&g);
    sg_model_free(gold);
}
END_TEST

/* The fused ops of a mock OM are found by the kernel lookup and planned
 * like any node. */
START_TEST(test_fused_kernels_exist)
{
    static const char *const ops[] = {"Conv2D",    "BatchMatMulV2", "MatMulV2",
                                      "SoftmaxV2", "LayerNorm",     "FusedElementwise"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        ck_assert_msg(sg_kernel_find(SG_MOCKOM_DOMAIN, ops[i], 1, SG_DTYPE_FLOAT, NULL) != NULL,
                      "no kernel for %s", ops[i]);
}
END_TEST

/* -------------------------------------------------------- precision */

#define F16 (SG_MOCKOM_FP16_IN | SG_MOCKOM_FP16_OUT)
#define IN16 SG_MOCKOM_FP16_IN

static const struct {
    const char *precision, *keep, *customize;
    unsigned matmul, exp, rsum, relu; /* fp16 sides of each node */
} modes[] = {
    {"force_fp16", NULL, NULL, F16, F16, F16, F16},
    {"fp16", NULL, NULL, F16, F16, F16, F16},
    {NULL, NULL, NULL, F16, F16, F16, F16}, /* ATC's default is force_fp16 */
    {"allow_fp32_to_fp16", NULL, NULL, F16, 0, 0, 0},
    {"must_keep_origin_dtype", NULL, NULL, 0, 0, 0, 0},
    {"origin", NULL, NULL, 0, 0, 0, 0},
    {"force_fp32", NULL, NULL, IN16, 0, 0, 0},
    {"cube_fp16in_fp32out", NULL, NULL, IN16, 0, 0, 0},
    {"allow_mix_precision", NULL, NULL, F16, 0, 0, F16},
    {"mixed_float16", NULL, NULL, F16, 0, 0, F16},
    /* keep_dtype names ATC's op type (MatMul is BatchMatMulV2 there). */
    {"force_fp16", "OpType::BatchMatMulV2\n", NULL, 0, F16, F16, F16},
    {"force_fp16", "OpType::MatMul\n", NULL, F16, F16, F16, F16},
    {"force_fp16", "ReduceSum_2\n", NULL, F16, F16, 0, F16},
    {"allow_mix_precision", NULL, "Exp_1::InputDtype:float16,OutputDtype:float16\n", F16, F16, 0,
     F16},
    {"force_fp16", NULL, "Exp_1::InputDtype:float16,OutputDtype:float32\n", F16, IN16, F16, F16},
    {"force_fp16", NULL, "OpType::Relu:InputDtype:float32,OutputDtype:float32\n", F16, F16, F16, 0},
    {"force_fp16", NULL, "Exp_1::OutputDtype:float32\n", F16, IN16, F16, F16},
    /* customize_dtypes wins over keep_dtype; a node entry over a type entry. */
    {"force_fp16", "Exp_1\n", "Exp_1::InputDtype:float16\n", F16, IN16, F16, F16},
    {"force_fp16", NULL,
     "OpType::Exp:InputDtype:float32,OutputDtype:float32\nExp_1::OutputDtype:float16\n", F16, F16,
     F16, F16},
};

START_TEST(test_precision_modes)
{
    const __typeof__(modes[0]) *c = &modes[_i];
    sg_model *m = load("mixed_ops");
    sg_mock_report rep = {0};
    struct job j = {c->precision, NULL, c->keep, c->customize, NULL, NULL, 0};
    compile(m, &j, &rep);
    static const char *const nodes[] = {"MatMul_0", "Exp_1", "ReduceSum_2", "Relu_3"};
    unsigned want[] = {c->matmul, c->exp, c->rsum, c->relu};
    for (size_t i = 0; i < 4; i++) {
        const sg_node *n = sg_graph_node(m->graph, nodes[i]);
        ck_assert_ptr_nonnull(n);
        ck_assert_msg(sg_mockom_node_fp16(n) == want[i], "%s (keep %s, customize %s): %s has %u",
                      c->precision ? c->precision : "default", c->keep ? c->keep : "-",
                      c->customize ? c->customize : "-", nodes[i], sg_mockom_node_fp16(n));
        /* Both sides are recorded, float32 included. */
        ck_assert_ptr_nonnull(sg_node_attr(n, SG_MOCKOM_ATTR_INPUT_DTYPE));
        ck_assert_ptr_nonnull(sg_node_attr(n, SG_MOCKOM_ATTR_OUTPUT_DTYPE));
    }
    char type[64];
    ck_assert_str_eq(sg_mockom_op_type(sg_graph_node(m->graph, "MatMul_0"), type, sizeof type),
                     "BatchMatMulV2");
    bool warned = false;
    for (size_t i = 0; i < rep.n_warnings; i++)
        warned |= strstr(rep.warnings[i], "keep.cfg:1: OpType::MatMul names no op type") != NULL;
    ck_assert(warned == (c->keep && strcmp(c->keep, "OpType::MatMul\n") == 0));
    sg_mock_report_clear(&rep);
    sg_model_free(m);
}
END_TEST

/* A cube unit accumulates in float32 even when it reads and writes float16;
 * force_fp32 reads float16 and writes float32. */
START_TEST(test_cube_accumulation)
{
    static float ones[4096];
    for (size_t i = 0; i < 4096; i++)
        ones[i] = 1.0f;
    static const float big[2] = {2048.0f, 1.0f}, fine[1] = {1.0f + 1.0f / 4096};
    static const struct {
        const char *precision;
        struct input in[2];
        float want;
    } cases[] = {
        /* 4096 ones: float16 accumulation would stop at 2048 (2049 is not
         * a float16); the cube's float32 accumulator reaches 4096. */
        {"force_fp16", {{"a", {1, 4096}, 2, ones}, {"b", {4096, 1}, 2, ones}}, 4096.0f},
        /* 2048 + 1 = 2049: a float16 output rounds it to 2048. */
        {"force_fp16", {{"a", {1, 2}, 2, big}, {"b", {2, 1}, 2, ones}}, 2048.0f},
        {"force_fp32", {{"a", {1, 2}, 2, big}, {"b", {2, 1}, 2, ones}}, 2049.0f},
        {"cube_fp16in_fp32out", {{"a", {1, 2}, 2, big}, {"b", {2, 1}, 2, ones}}, 2049.0f},
        /* 1 + 2^-12 is read as float16 (1.0) by force_fp32's cube op. */
        {"force_fp32", {{"a", {1, 1}, 2, fine}, {"b", {1, 1}, 2, ones}}, 1.0f},
        {"must_keep_origin_dtype",
         {{"a", {1, 1}, 2, fine}, {"b", {1, 1}, 2, ones}},
         1.0f + 1.0f / 4096},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sg_model *m = load("matmul_acc");
        sg_mock_report rep = {0};
        struct job j = {cases[i].precision, NULL, NULL, NULL, NULL, NULL, 0};
        compile(m, &j, &rep);
        struct run r;
        run(m, cases[i].in, 2, 0, 0, &r);
        ck_assert_msg(r.out[0][0] == cases[i].want, "case %zu (%s): got %.9g, want %.9g", i,
                      cases[i].precision, r.out[0][0], cases[i].want);
        run_free(&r);
        sg_mock_report_clear(&rep);
        sg_model_free(m);
    }
}
END_TEST

START_TEST(test_soc_overflow)
{
    static const struct {
        const char *soc;
        enum sg_overflow want;
    } socs[] = {
        /* Atlas A2 / A3: INF/NaN by default */
        {"Ascend910B1", SG_OVERFLOW_INF},
        {"Ascend910B4-1", SG_OVERFLOW_INF},
        {"ascend910b2c", SG_OVERFLOW_INF},
        {"Ascend910_93", SG_OVERFLOW_INF},
        {"Ascend910_9391", SG_OVERFLOW_INF},
        /* Atlas training series (the first 910): saturation only */
        {"Ascend910", SG_OVERFLOW_SATURATION},
        {"Ascend910A", SG_OVERFLOW_SATURATION},
        {"Ascend910B", SG_OVERFLOW_SATURATION},
        {"Ascend910ProA", SG_OVERFLOW_SATURATION},
        {"Ascend910PremiumA", SG_OVERFLOW_SATURATION},
        /* Atlas inference series, 200I/500 A2: saturation only */
        {"Ascend310", SG_OVERFLOW_SATURATION},
        {"Ascend310P3", SG_OVERFLOW_SATURATION},
        {"ASCEND310P3", SG_OVERFLOW_SATURATION},
        {"Ascend310B1", SG_OVERFLOW_SATURATION},
        /* not known: no mode */
        {"Ascend610", SG_OVERFLOW_DEFAULT},
        {"Ascend91OB", SG_OVERFLOW_DEFAULT},
        {"", SG_OVERFLOW_DEFAULT},
    };
    for (size_t i = 0; i < sizeof socs / sizeof socs[0]; i++)
        ck_assert_msg(sg_soc_overflow(socs[i].soc) == socs[i].want, "%s", socs[i].soc);
    ck_assert_str_eq(sg_soc_find("ascend910b1")->name, "Ascend910B1");
    ck_assert_ptr_null(sg_soc_find("Ascend91OB"));
    ck_assert_str_eq(sg_soc_suggest("Ascend91OB"), "Ascend910B");
    ck_assert_str_eq(sg_soc_suggest("Ascend301P3"), "Ascend310P3");
    ck_assert_ptr_null(sg_soc_suggest("Kirin990"));
    for (size_t i = 0; sg_soc_at(i); i++)
        ck_assert(sg_soc_at(i)->mode == SG_OVERFLOW_INF ||
                  sg_soc_at(i)->mode == SG_OVERFLOW_SATURATION);
    enum sg_overflow o;
    ck_assert(sg_overflow_parse("inf", &o) && o == SG_OVERFLOW_INF);
    ck_assert(sg_overflow_parse("saturation", &o) && o == SG_OVERFLOW_SATURATION);
    ck_assert(!sg_overflow_parse("sat", &o));
    ck_assert_str_eq(sg_overflow_name(SG_OVERFLOW_SATURATION), "saturation");
    /* --overflow wins over the SoC, and the mock OM records it. */
    sg_model *m = load("exp_overflow");
    sg_mock_report rep = {0};
    struct job j = {NULL, NULL, NULL, NULL, NULL, "Ascend310P3", SG_OVERFLOW_INF};
    compile(m, &j, &rep);
    ck_assert_int_eq(rep.overflow, SG_OVERFLOW_INF);
    ck_assert_str_eq(sg_model_metadata(m, SG_MOCKOM_META_OVERFLOW), "inf");
    ck_assert_str_eq(sg_model_metadata(m, SG_MOCKOM_META_SOC), "Ascend310P3");
    ck_assert_str_eq(sg_model_metadata(m, SG_MOCKOM_META_PRECISION), "force_fp16");
    ck_assert(!sg_mockom_saturates(m));
    sg_mock_report_clear(&rep);
    sg_model_free(m);

    /* A SoC spelled in another case is recorded as ATC spells it. */
    m = load("exp_overflow");
    struct job low = {NULL, NULL, NULL, NULL, NULL, "ascend910_9391", SG_OVERFLOW_DEFAULT};
    compile(m, &low, &rep);
    ck_assert_int_eq(rep.overflow, SG_OVERFLOW_INF);
    ck_assert_str_eq(sg_model_metadata(m, SG_MOCKOM_META_SOC), "Ascend910_9391");
    sg_mock_report_clear(&rep);
    sg_model_free(m);

    /* An unknown SoC has no overflow mode: refused without one, compiled
     * with one, and recorded as given. */
    m = load("exp_overflow");
    struct sg_diag d = {0};
    struct sg_mock_inputs unknown = {.soc = "Ascend91OB"};
    ck_assert_int_eq(sg_mock_compile_model(m, &unknown, &rep, &d), SG_EINVAL);
    ck_assert_msg(strstr(d.msg, "unknown SoC 'Ascend91OB' (did you mean 'Ascend910B'?)"), "%s",
                  d.msg);
    ck_assert_ptr_null(sg_model_metadata(m, SG_MOCKOM_META_SOC));
    sg_mock_report_clear(&rep);
    sg_model_free(m);
    m = load("exp_overflow");
    struct job given = {NULL, NULL, NULL, NULL, NULL, "Ascend610", SG_OVERFLOW_SATURATION};
    compile(m, &given, &rep);
    ck_assert_str_eq(sg_model_metadata(m, SG_MOCKOM_META_SOC), "Ascend610");
    ck_assert(sg_mockom_saturates(m));
    sg_mock_report_clear(&rep);
    sg_model_free(m);
}
END_TEST

/* ------------------------------------------------------------- the map */

static const struct sg_atc_op *map_op(const sg_atc_map *map, const char *name)
{
    for (size_t i = 0; i < map->n_ops; i++)
        if (strcmp(map->ops[i].name, name) == 0)
            return &map->ops[i];
    return NULL;
}

static sg_atc_map *map_of(sg_model *m)
{
    struct sg_diag d = {0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_ok(sg_mock_map_print(m, f, &d), &d);
    fclose(f);
    sg_atc_map *map = NULL;
    ck_assert_ok(sg_atc_map_parse(buf, len, "map.json", &map, &d), &d);
    free(buf);
    return map;
}

START_TEST(test_map)
{
    struct sg_diag d = {0};
    sg_model *m = load("exp_overflow");
    sg_mock_report rep = {0};
    struct job j = {0};
    compile(m, &j, &rep);
    sg_atc_map *map = map_of(m);
    ck_assert_uint_eq(map->n_ops, 6); /* Data x and the five compiled ops */
    const struct sg_atc_op *x = map_op(map, "x");
    ck_assert_str_eq(x->type, "Data");
    const struct sg_atc_op *op = map_op(map, "Exp_3Mul_6Add_9");
    ck_assert_ptr_nonnull(op);
    ck_assert_str_eq(op->type, "Add");
    ck_assert_uint_eq(op->n_orig, 3);
    ck_assert_str_eq(op->orig[0], "Exp_3");
    ck_assert_str_eq(op->orig[2], "Add_9");
    ck_assert_str_eq(op->ub_pass, "AutomaticUbFusion");
    ck_assert_uint_eq(op->n_passes, 0);
    /* Its one output stands for Add_9's output 0. */
    ck_assert_uint_eq(op->n_outputs, 1);
    ck_assert_str_eq(op->out_orig[0], "Add_9");
    ck_assert_int_eq(op->out_index[0], 0);
    const struct sg_atc_op *less = map_op(map, "Less_4");
    ck_assert_uint_eq(less->n_orig, 1);
    ck_assert_ptr_null(less->ub_pass);
    ck_assert_str_eq(less->out_orig[0], "Less_4");
    /* What fusion-switch --from-map does with it. */
    sg_fusion_switch *sw = sg_fusion_switch_create();
    const char *nodes[] = {"Exp_3", "Less_4"};
    bool uncovered[2];
    size_t n_off;
    ck_assert_ok(sg_fusion_switch_off_for_nodes(sw, map, nodes, 2, uncovered, &n_off, &d), &d);
    ck_assert_uint_eq(n_off, 1);
    ck_assert(!uncovered[0] && !uncovered[1]);
    ck_assert(!sg_fusion_switch_pass_enabled(sw, SG_FP_AUTOMATIC_UB));
    sg_fusion_switch_free(sw);
    sg_atc_map_free(map);
    sg_mock_report_clear(&rep);
    sg_model_free(m);

    /* Graph and UB passes on one op. */
    m = load("conv_bn_act");
    compile(m, &j, &rep);
    map = map_of(m);
    op = map_op(map, "Conv_0Relu_2");
    ck_assert_ptr_nonnull(op);
    ck_assert_str_eq(op->type, "Conv2D");
    ck_assert_uint_eq(op->n_orig, 3);
    ck_assert_str_eq(op->orig[1], "BatchNormalization_1");
    ck_assert_uint_eq(op->n_passes, 1);
    ck_assert_str_eq(op->passes[0], "ConvBatchnormFusionPass");
    ck_assert_str_eq(op->ub_pass, "TbeCommonRules0FusionPass");
    op = map_op(map, "Conv_3Clip_4");
    ck_assert_str_eq(op->ub_pass, "ConvClipByValueFusionPass");
    sg_atc_map_free(map);
    sg_mock_report_clear(&rep);
    sg_model_free(m);

    /* Not a mock OM: no map. */
    m = load("exp_overflow");
    FILE *f = tmpfile();
    ck_assert_int_eq(sg_mock_map_print(m, f, &d), SG_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "not a mock OM"));
    fclose(f);
    sg_model_free(m);
}
END_TEST

/* -------------------------------------------- saving, loading, dumping */

static bool exists(const char *dir, const char *name)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static size_t count_files(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

START_TEST(test_save_load_dump)
{
    struct sg_diag d = {0};
    char *dir = test_tmpdir("mock_save");
    char prefix[1024], path[1100];
    snprintf(prefix, sizeof prefix, "%s/enc", dir);
    sg_model *m = load("exp_overflow");
    sg_mock_report rep = {0};
    struct job j = {0};
    compile(m, &j, &rep);
    struct run mem, disk;
    run(m, exp_in, 1, 0.0f, 5.0f, &mem);
    ck_assert_ok(sg_mock_save(m, prefix, &d), &d);
    ck_assert(exists(dir, "enc.om") && exists(dir, "enc.json"));
    ck_assert_uint_eq(count_files(dir), 2);
    sg_model_free(m);

    snprintf(path, sizeof path, "%s.om", prefix);
    ck_assert_ok(sg_model_load(path, NULL, &m, &d), &d);
    ck_assert_ok(sg_mockom_check(m, &d), &d);
    run(m, exp_in, 1, 0.0f, 5.0f, &disk);
    ck_assert_uint_eq(mem.n, disk.n);
    for (int64_t i = 0; i < 64; i++)
        ck_assert(memcmp(&mem.out[0][i], &disk.out[0][i], sizeof(float)) == 0);
    /* The map of the loaded mock OM is the one written beside it. */
    sg_atc_map *map = map_of(m);
    ck_assert_ptr_nonnull(map_op(map, "Mul_0Sub_1Sub_2"));
    sg_atc_map_free(map);

    /* Dumps in device names: fused ops only by their final output. */
    char *ddir = test_tmpdir("mock_dump");
    sg_dump *dump;
    ck_assert_ok(sg_dump_create(ddir, SG_DUMP_ALL, &dump, &d), &d);
    sg_dump_set_device_names(dump, true);
    struct sg_rt_opts o = {.on_output = sg_dump_observe, .observe_ctx = dump};
    ck_assert_ok(sg_rt_opts_mock(m, &o, &d), &d);
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, &o, &rt, &d), &d);
    sg_rt_value *x;
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, exp_in[0].dims, 3, &x, &d), &d);
    for (int64_t i = 0; i < 64; i++)
        ((float *)x->data)[i] = fill(i, 64, 0, 5);
    ck_assert_ok(sg_rt_set_input(rt, "x", x, &d), &d);
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    ck_assert_ok(sg_dump_finish(dump, rt, &d), &d);
    ck_assert_uint_eq(sg_dump_count(dump), 5);
    DIR *dd = opendir(ddir);
    struct dirent *e;
    size_t n_dev = 0;
    uint64_t tasks = 0;
    while ((e = readdir(dd))) {
        struct sg_dump_device dv;
        if (!sg_dump_parse_device(e->d_name, &dv))
            continue;
        n_dev++;
        ck_assert_str_ne(dv.op_name, "Exp_3");
        ck_assert_uint_ge(dv.task, 1);
        ck_assert_uint_le(dv.task, 5);
        tasks |= 1u << dv.task;
        if (strcmp(dv.op_name, "Exp_3Mul_6Add_9") == 0)
            ck_assert_str_eq(dv.op_type, "Add");
        if (strcmp(dv.op_name, "Cast_5") == 0)
            ck_assert_str_eq(dv.op_type, "Cast");
    }
    closedir(dd);
    ck_assert_uint_eq(n_dev, 5);
    ck_assert_uint_eq(tasks, 0x3e); /* tasks 1..5, one per compiled op */
    sg_rt_value_unref(x);
    sg_rt_free(rt);
    sg_dump_free(dump);

    /* A mock OM is not compiled again. */
    sg_diag_clear(&d);
    ck_assert_int_eq(try_compile(m, &j, NULL, &d), SG_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "mock OM already"));
    sg_model_free(m);

    /* A folder that does not exist: an error, nothing written. */
    m = load("exp_overflow");
    compile(m, &j, &rep);
    snprintf(path, sizeof path, "%s/missing/enc", dir);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_mock_save(m, path, &d), SG_EIO);
    ck_assert_uint_eq(count_files(dir), 2);
    sg_model_free(m);
    run_free(&mem);
    run_free(&disk);
    sg_mock_report_clear(&rep);
    sg_free(dir);
    sg_free(ddir);
}
END_TEST

/* ------------------------------------------------------------ bad input */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_bad_input)
{
    struct sg_diag d = {0};
    sg_mock_report rep = {0};
    /* keep_dtype entries naming nothing: warnings listing them. */
    sg_model *m = load("exp_overflow");
    struct job j = {NULL, NULL, "Exp_3\nNope\nOpType::Softmax\n", NULL, NULL, NULL, 0};
    compile(m, &j, &rep);
    ck_assert_uint_eq(rep.n_warnings, 2);
    ck_assert_str_eq(rep.warnings[0], "keep.cfg:2: Nope names no node of the model; it changes "
                                      "nothing");
    ck_assert_str_eq(rep.warnings[1], "keep.cfg:3: OpType::Softmax names no op type (as ATC names "
                                      "it) of the model; it changes nothing");
    sg_mock_report_clear(&rep);
    sg_model_free(m);

    /* An input shape for a missing input, or of another rank. */
    static const struct {
        const char *shapes;
        sg_status st;
        const char *msg;
    } shapes[] = {
        {"y:1,4,16", SG_ENOTFOUND, "the input shape names 'y', which is not an input of the model"},
        {"x:1,64", SG_ESHAPE, "the input shape gives input 'x' 2 dimensions, the model 3"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        m = load("exp_overflow");
        struct job js = {NULL, NULL, NULL, NULL, shapes[i].shapes, NULL, 0};
        sg_diag_clear(&d);
        ck_assert_int_eq(try_compile(m, &js, &rep, &d), shapes[i].st);
        ck_assert_msg(strstr(d.msg, shapes[i].msg), "%s", d.msg);
        sg_mock_report_clear(&rep);
        sg_model_free(m);
    }
    /* A good shape is applied; a range stays dynamic, with a warning. */
    m = load("exp_overflow");
    struct job jr = {NULL, NULL, NULL, NULL, "x:1~2,4,16", NULL, 0};
    compile(m, &jr, &rep);
    ck_assert_int_eq(m->graph->inputs[0]->type->shape->dims[0].kind, SG_DIM_UNSET);
    ck_assert_uint_eq(rep.n_warnings, 1);
    ck_assert_ptr_nonnull(strstr(rep.warnings[0], "dimension 0 is the range 1~2"));
    sg_mock_report_clear(&rep);
    sg_model_free(m);

    /* customize_dtypes mixing float16 and float32 on one side. */
    m = load("mixed_ops");
    struct job jc = {NULL, NULL, NULL, "Exp_1::InputDtype:float16,float32\n", NULL, NULL, 0};
    sg_diag_clear(&d);
    ck_assert_int_eq(try_compile(m, &jc, &rep, &d), SG_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(d.msg, "cust.cfg:1: Exp_1 lists both float16 and float32"));
    sg_mock_report_clear(&rep);
    sg_model_free(m);

    /* The whole job from files: malformed files stop it with the line,
     * and nothing is written. */
    char *dir = test_tmpdir("mock_bad");
    char keep[600], fs[600], out[600];
    snprintf(keep, sizeof keep, "%s/keep.cfg", dir);
    snprintf(fs, sizeof fs, "%s/fs.cfg", dir);
    snprintf(out, sizeof out, "%s/enc", dir);
    write_file(keep, "Exp_3\nOpType:Exp\n");
    write_file(fs, "{\"Switch\": {\"GraphFusion\": {\"ALL\": \"of\"}}}");
    struct sg_atc_opts o = {.model = MODELS_DIR "/exp_overflow.onnx",
                            .output = out,
                            .soc = "Ascend310P3",
                            .keep_dtype = keep};
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_mock_compile(&o, SG_OVERFLOW_DEFAULT, &rep, &d), SG_EPARSE);
    ck_assert_msg(strstr(d.msg, "keep.cfg:2:1: \"OpType:\" takes two colons"), "%s", d.msg);
    o.keep_dtype = NULL;
    o.fusion_switch = fs;
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_mock_compile(&o, SG_OVERFLOW_DEFAULT, &rep, &d), SG_EPARSE);
    ck_assert_msg(strstr(d.msg, "fs.cfg:1:36:"), "%s", d.msg);
    o.fusion_switch = NULL;
    o.input_shape = "y:1";
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_mock_compile(&o, SG_OVERFLOW_DEFAULT, &rep, &d), SG_ENOTFOUND);
    ck_assert_uint_eq(count_files(dir), 2); /* the two input files */
    sg_mock_report_clear(&rep);

    /* And a good one writes the pair, with warnings for what it ignores. */
    static const char *const extra[] = {"--op_select_implmode=high_precision"};
    write_file(keep, "Exp_3\n");
    o.input_shape = "x:1,4,16";
    o.keep_dtype = keep;
    o.extra = extra;
    o.n_extra = 1;
    sg_diag_clear(&d);
    ck_assert_ok(sg_mock_compile(&o, SG_OVERFLOW_DEFAULT, &rep, &d), &d);
    ck_assert(exists(dir, "enc.om") && exists(dir, "enc.json"));
    ck_assert_uint_eq(rep.n_warnings, 1);
    ck_assert_ptr_nonnull(strstr(rep.warnings[0], "ignores the atc argument"));
    ck_assert_int_eq(rep.overflow, SG_OVERFLOW_SATURATION);
    sg_mock_report_clear(&rep);
    sg_free(dir);
}
END_TEST

/* ---------------------------------------------------- allocation failures */

START_TEST(test_alloc_failures)
{
    static const char *const names[] = {"exp_overflow", "conv_bn_act", "layernorm_pattern",
                                        "matmul_bias", "softmax_pattern"};
    const char *name = names[_i];
    int64_t live = sg_alloc_live();
    sg_fusion_switch *none = NULL;
    for (uint64_t n = 1;; n++) {
        sg_model *m = load(name);
        /* Warm what the model builds lazily, so that each failure hits
         * the compiler. */
        ck_assert_ptr_nonnull(sg_model_fresh_name(m, "warm"));
        struct sg_mock_inputs in = {.soc = "Ascend910B1", .fusion_switch = none};
        sg_mock_report rep = {0};
        sg_alloc_fail_at(n);
        sg_status st = sg_mock_compile_model(m, &in, &rep, NULL);
        uint64_t made = sg_alloc_fail_at(0);
        sg_mock_report_clear(&rep);
        sg_model_free(m);
        ck_assert_int_eq(sg_alloc_live(), live);
        if (st == SG_OK) {
            ck_assert_uint_lt(made, n);
            break;
        }
        ck_assert_msg(st == SG_ENOMEM, "%s: allocation %llu: %s", name, (unsigned long long)n,
                      sg_status_name(st));
        ck_assert_uint_lt(n, 100000);
    }
}
END_TEST

/* Saving under allocation failures: the pair or nothing. */
START_TEST(test_save_alloc_failures)
{
    char *dir = test_tmpdir("mock_save_alloc");
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s/enc", dir);
    sg_model *m = load("exp_overflow");
    struct sg_mock_inputs in = {.soc = "Ascend910B1"};
    struct sg_diag d = {0};
    ck_assert_ok(sg_mock_compile_model(m, &in, NULL, &d), &d);
    int64_t live = sg_alloc_live();
    for (uint64_t n = 1;; n++) {
        sg_alloc_fail_at(n);
        sg_diag_clear(&d);
        sg_status st = sg_mock_save(m, prefix, n % 2 ? &d : NULL); /* with and without diag */
        uint64_t made = sg_alloc_fail_at(0);
        ck_assert_int_eq(sg_alloc_live(), live);
        if (st == SG_OK) {
            ck_assert_uint_lt(made, n);
            break;
        }
        ck_assert_msg(st == SG_ENOMEM, "allocation %llu: %s", (unsigned long long)n, d.msg);
        ck_assert_uint_eq(count_files(dir), 0);
        ck_assert_uint_lt(n, 100000);
    }
    ck_assert(exists(dir, "enc.om") && exists(dir, "enc.json"));
    ck_assert_uint_eq(count_files(dir), 2);
    sg_model_free(m);
    sg_free(dir);
}
END_TEST

Suite *suite_mock(void)
{
    Suite *s = suite_create("mock");
    TCase *tc = tcase_create("mock");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_exp_overflow, 0, sizeof exp_cases / sizeof exp_cases[0]);
    tcase_add_loop_test(tc, test_fusion_rule, 0, sizeof rules / sizeof rules[0]);
    tcase_add_test(tc, test_fused_kernels_exist);
    tcase_add_loop_test(tc, test_precision_modes, 0, sizeof modes / sizeof modes[0]);
    tcase_add_test(tc, test_cube_accumulation);
    tcase_add_test(tc, test_soc_overflow);
    tcase_add_test(tc, test_map);
    tcase_add_test(tc, test_save_load_dump);
    tcase_add_test(tc, test_bad_input);
    tcase_add_loop_test(tc, test_alloc_failures, 0, 5);
    tcase_add_test(tc, test_save_alloc_failures);
    suite_add_tcase(s, tc);
    return s;
}
