/*
 * check_runtime.c - the reference runtime: executor behaviour (broadcasting,
 * order, subgraph captures, release after last use, missing kernels, input
 * checks, numerics modes, allocation failures) and kernels against numpy
 * results made by tests/runtime_cases.py.
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_dump.h"
#include "sg_io.h"
#include "sg_kernel.h"
#include "sg_runtime.h"
#include "sg_tensorfile.h"
#include "kernels/vmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------ model building */

static sg_value *graph_input(sg_model *m, const char *name, int32_t dt, const int64_t *dims,
                             int rank)
{
    sg_value *v = NULL;
    struct sg_diag d = {0};
    ck_assert_ok(sg_graph_add_value(m->graph, name, sg_type_tensor(m, dt, dims, rank), &v, &d), &d);
    ck_assert_ok(sg_graph_add_input(m->graph, v), &d);
    return v;
}

/* A node of op reading ins[] and writing one new value `out`. */
static sg_value *node1(sg_model *m, const char *op, const char *domain, const char *name,
                       sg_value *const *ins, uint32_t n_in, const char *out)
{
    struct sg_diag d = {0};
    sg_node *n = sg_node_create(m->graph, op, domain, name, &d);
    ck_assert_ptr_nonnull(n);
    for (uint32_t i = 0; i < n_in; i++)
        ck_assert_ok(sg_node_set_input(n, i, ins[i]), &d);
    sg_value *v = NULL;
    ck_assert_ok(sg_graph_add_value(m->graph, out, NULL, &v, &d), &d);
    ck_assert_ok(sg_node_set_output(n, 0, v), &d);
    return v;
}

static sg_rt_value *tensor_f32(const int64_t *dims, uint32_t rank, float start, float step)
{
    sg_rt_value *v;
    struct sg_diag d = {0};
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, dims, rank, &v, &d), &d);
    for (int64_t i = 0; i < v->numel; i++)
        ((float *)v->data)[i] = start + step * (float)i;
    return v;
}

static void assert_close(const char *what, int64_t i, double got, double want)
{
    double tol = 1e-5 + 1e-4 * fabs(want);
    ck_assert_msg((isnan(got) && isnan(want)) || got == want || fabs(got - want) <= tol,
                  "%s[%lld]: got %.9g, want %.9g", what, (long long)i, got, want);
}

/* ------------------------------------------------------- broadcasting */

static const struct {
    int64_t a[4], b[4];
    int ra, rb;
} bcast_cases[] = {
    {{2, 3, 4}, {4}, 3, 1},
    {{2, 1, 4}, {3, 1}, 3, 2},
    {{0}, {2, 3}, 0, 2},
    {{1}, {5, 1, 1}, 1, 3},
    {{0, 3}, {3}, 2, 1},
    {{2, 3}, {2, 1}, 2, 2},
    {{1, 3, 1, 2}, {4, 1, 5, 1}, 4, 4},
    {{3, 1, 1}, {1, 4, 2}, 3, 3},
    {{6}, {6}, 1, 1},
};

START_TEST(test_broadcast_add)
{
    for (size_t c = 0; c < sizeof bcast_cases / sizeof bcast_cases[0]; c++) {
        sg_model *m = sg_model_create();
        struct sg_diag d = {0};
        ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
        int ra = bcast_cases[c].ra, rb = bcast_cases[c].rb;
        sg_value *ins[2] = {graph_input(m, "a", SG_DTYPE_FLOAT, bcast_cases[c].a, ra),
                            graph_input(m, "b", SG_DTYPE_FLOAT, bcast_cases[c].b, rb)};
        sg_value *y = node1(m, "Add", NULL, "add", ins, 2, "y");
        ck_assert_ok(sg_graph_add_output(m->graph, y), &d);
        sg_rt *rt;
        ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
        sg_rt_value *a = tensor_f32(bcast_cases[c].a, (uint32_t)ra, 0, 1);
        sg_rt_value *b = tensor_f32(bcast_cases[c].b, (uint32_t)rb, 1000, 10);
        ck_assert_ok(sg_rt_set_input(rt, "a", a, &d), &d);
        ck_assert_ok(sg_rt_set_input(rt, "b", b, &d), &d);
        ck_assert_ok(sg_rt_run(rt, &d), &d);
        const sg_rt_value *out = sg_rt_output(rt, 0);
        /* The expected result by the numpy rule, index by index. */
        int r = ra > rb ? ra : rb;
        ck_assert_int_eq(out->rank, r);
        int64_t od[4];
        for (int k = 0; k < r; k++) {
            int64_t x = k - (r - ra) >= 0 ? bcast_cases[c].a[k - (r - ra)] : 1;
            int64_t z = k - (r - rb) >= 0 ? bcast_cases[c].b[k - (r - rb)] : 1;
            od[k] = x == 1 ? z : x;
            ck_assert_int_eq(out->dims[k], od[k]);
        }
        int64_t idx[4] = {0};
        for (int64_t i = 0; i < out->numel; i++) {
            int64_t ia = 0, ib = 0;
            for (int k = 0; k < r; k++) {
                int ka = k - (r - ra), kb = k - (r - rb);
                if (ka >= 0)
                    ia = ia * bcast_cases[c].a[ka] + (bcast_cases[c].a[ka] == 1 ? 0 : idx[k]);
                if (kb >= 0)
                    ib = ib * bcast_cases[c].b[kb] + (bcast_cases[c].b[kb] == 1 ? 0 : idx[k]);
            }
            double want = (double)ia + (1000.0 + 10.0 * (double)ib);
            assert_close("bcast", i, ((const float *)out->data)[i], want);
            for (int k = r - 1; k >= 0; k--) {
                if (++idx[k] < od[k])
                    break;
                idx[k] = 0;
            }
        }
        sg_rt_value_unref(a);
        sg_rt_value_unref(b);
        sg_rt_free(rt);
        sg_model_free(m);
    }
}
END_TEST

START_TEST(test_broadcast_mismatch_names_node)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t da[2] = {2, 3}, db[1] = {4};
    sg_value *ins[2] = {graph_input(m, "a", SG_DTYPE_FLOAT, da, 2),
                        graph_input(m, "b", SG_DTYPE_FLOAT, db, 1)};
    ck_assert_ok(sg_graph_add_output(m->graph, node1(m, "Mul", NULL, "mul_7", ins, 2, "y")), &d);
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
    sg_rt_value *a = tensor_f32(da, 2, 0, 1), *b = tensor_f32(db, 1, 0, 1);
    ck_assert_ok(sg_rt_set_input(rt, "a", a, &d), &d);
    ck_assert_ok(sg_rt_set_input(rt, "b", b, &d), &d);
    ck_assert_int_eq(sg_rt_run(rt, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "mul_7") && strstr(d.msg, "Mul") && strstr(d.msg, "[2,3]") &&
                      strstr(d.msg, "[4]") && strstr(d.msg, "v13"),
                  "%s", d.msg);
    sg_rt_value_unref(a);
    sg_rt_value_unref(b);
    sg_rt_free(rt);
    sg_model_free(m);
}
END_TEST

/* ----------------------------------------------------------- order */

START_TEST(test_toposort_shuffled)
{
    /* y = (relu(x) + neg(relu(x))) * x, with the nodes in reverse order. */
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t dims[1] = {5};
    sg_value *x = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    sg_value *r = node1(m, "Relu", NULL, "relu", &x, 1, "r");
    sg_value *ng = node1(m, "Neg", NULL, "neg", &r, 1, "ng");
    sg_value *s_in[2] = {r, ng};
    sg_value *s = node1(m, "Add", NULL, "add", s_in, 2, "s");
    sg_value *m_in[2] = {s, x};
    sg_value *y = node1(m, "Mul", NULL, "mul", m_in, 2, "y");
    sg_value *z_in[2] = {r, x};
    sg_value *z = node1(m, "Sub", NULL, "sub", z_in, 2, "z");
    ck_assert_ok(sg_graph_add_output(m->graph, y), &d);
    ck_assert_ok(sg_graph_add_output(m->graph, z), &d);
    /* Reverse the node list: every node now follows its consumers. */
    sg_node *list[5];
    int k = 0;
    for (sg_node *n = m->graph->first; n; n = n->next)
        list[k++] = n;
    for (int i = 0; i < k; i++)
        sg_node_move_before(list[i], m->graph->first);
    ck_assert_str_eq(m->graph->first->op_type, "Sub");
    ck_assert_str_eq(m->graph->last->op_type, "Relu");
    ck_verify(m);
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
    sg_rt_value *xv = tensor_f32(dims, 1, -2, 1);
    ck_assert_ok(sg_rt_set_input(rt, "x", xv, &d), &d);
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    for (int i = 0; i < 5; i++) {
        float xi = -2.0f + (float)i, ri = xi > 0 ? xi : 0;
        assert_close("y", i, ((float *)sg_rt_output(rt, 0)->data)[i], (ri - ri) * xi);
        assert_close("z", i, ((float *)sg_rt_output(rt, 1)->data)[i], ri - xi);
    }
    sg_rt_value_unref(xv);
    sg_rt_free(rt);
    sg_model_free(m);
}
END_TEST

/* --------------------------------------------------- release after use */

struct peak {
    size_t max_live;
    int nodes;
};

static sg_status watch(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth, void *ctx,
                       struct sg_diag *diag)
{
    (void)n, (void)index, (void)v, (void)depth, (void)diag;
    struct peak *p = ctx;
    size_t live = sg_rt_bytes_live();
    if (live > p->max_live)
        p->max_live = live;
    p->nodes++;
    return SG_OK;
}

START_TEST(test_release_after_last_use)
{
    /* A chain of 20 Relu over 1 MiB tensors: without release the run would
     * hold 20 of them; with it, the input, the previous and the new one. */
    enum { N = 20 };
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t dims[1] = {1 << 18};
    sg_value *v = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%d", i);
        v = node1(m, i % 2 ? "Relu" : "Neg", NULL, name, &v, 1, name + 0);
    }
    ck_assert_ok(sg_graph_add_output(m->graph, v), &d);
    struct peak p = {0, 0};
    struct sg_rt_opts opts = {0};
    opts.on_output = watch;
    opts.observe_ctx = &p;
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, &opts, &rt, &d), &d);
    sg_rt_value *x = tensor_f32(dims, 1, 0, 1);
    size_t base = sg_rt_bytes_live();
    ck_assert_ok(sg_rt_set_input(rt, "x", x, &d), &d);
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    ck_assert_int_eq(p.nodes, N);
    size_t tensor = (size_t)dims[0] * 4;
    ck_assert_msg(p.max_live - base <= 2 * tensor + 4096,
                  "peak %zu bytes above the input for %zu-byte tensors", p.max_live - base, tensor);
    sg_rt_value_unref(x);
    sg_rt_free(rt);
    ck_assert_uint_eq(sg_rt_bytes_live(), base - tensor);
    sg_model_free(m);
}
END_TEST

START_TEST(test_block_pool)
{
    /* While a session exists, large blocks are recycled: a new tensor gets
     * the freed block back, zeroed; after the last session every block is
     * returned (no allocation outlives it). */
    int64_t live = sg_alloc_live();
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t dims[1] = {1 << 16};
    sg_value *v = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    v = node1(m, "Neg", NULL, "neg", &v, 1, "y");
    ck_assert_ok(sg_graph_add_output(m->graph, v), &d);
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
    sg_rt_value *a = tensor_f32(dims, 1, 1, 1);
    void *block = a->data;
    sg_rt_value_unref(a);
    sg_rt_value *b;
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, dims, 1, &b, &d), &d);
    ck_assert_ptr_eq(b->data, block);
    for (int64_t i = 0; i < b->numel; i++)
        ck_assert_msg(((float *)b->data)[i] == 0.0f, "recycled element %lld is not zero",
                      (long long)i);
    for (int run = 0; run < 3; run++) {
        for (int64_t i = 0; i < b->numel; i++)
            ((float *)b->data)[i] = (float)(i + run);
        ck_assert_ok(sg_rt_set_input(rt, "x", b, &d), &d);
        ck_assert_ok(sg_rt_run(rt, &d), &d);
        const float *y = sg_rt_output(rt, 0)->data;
        for (int64_t i = 0; i < b->numel; i++)
            ck_assert_msg(y[i] == -(float)(i + run), "run %d: y[%lld] = %g", run, (long long)i,
                          y[i]);
    }
    sg_rt_value_unref(b);
    /* Blocks of ever new sizes, one live at a time: the pool keeps no more
     * than the high-water mark of live tensors (one) plus two of the
     * largest blocks, not one block per size. */
    int64_t before = sg_alloc_live();
    for (int i = 0; i < 20; i++) {
        int64_t n[1] = {(1 << 18) + i * (1 << 14)};
        sg_rt_value *t;
        ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, n, 1, &t, &d), &d);
        sg_rt_value_unref(t);
    }
    ck_assert_msg(sg_alloc_live() - before <= 4, "the pool kept %lld blocks",
                  (long long)(sg_alloc_live() - before));
    sg_rt_free(rt);
    sg_model_free(m);
    ck_assert_int_eq(sg_alloc_live(), live);
}
END_TEST

struct seen {
    const void *data[8];
    double sum[8];
    int n;
};

static sg_status remember(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                          void *ctx, struct sg_diag *diag)
{
    (void)n, (void)index, (void)depth, (void)diag;
    struct seen *s = ctx;
    if (s->n < 8) {
        s->data[s->n] = v->data;
        s->sum[s->n] = 0;
        for (int64_t i = 0; i < v->numel; i++)
            s->sum[s->n] += ((const float *)v->data)[i];
        s->n++;
    }
    return SG_OK;
}

START_TEST(test_inplace_outputs)
{
    /* y = Sigmoid(Relu(-x) + (-x)): Relu may not write over -x (Add reads
     * it later), Add writes over Relu's output and Sigmoid over Add's (each
     * is their last reader), and every value is right when observed. */
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t dims[1] = {1 << 16};
    sg_value *x = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    sg_value *n = node1(m, "Neg", NULL, "neg", &x, 1, "n");
    sg_value *r = node1(m, "Relu", NULL, "relu", &n, 1, "r");
    sg_value *ab[2] = {r, n};
    sg_value *a = node1(m, "Add", NULL, "add", ab, 2, "a");
    sg_value *y = node1(m, "Sigmoid", NULL, "sig", &a, 1, "y");
    ck_assert_ok(sg_graph_add_output(m->graph, y), &d);
    struct seen seen = {0};
    struct sg_rt_opts opts = {0};
    opts.on_output = remember;
    opts.observe_ctx = &seen;
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, &opts, &rt, &d), &d);
    sg_rt_value *xv = tensor_f32(dims, 1, -1, 2.0f / (float)dims[0]);
    ck_assert_ok(sg_rt_set_input(rt, "x", xv, &d), &d);
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    ck_assert_int_eq(seen.n, 4);
    ck_assert_ptr_ne(seen.data[1], seen.data[0]); /* -x lives on */
    ck_assert_ptr_eq(seen.data[2], seen.data[1]);
    ck_assert_ptr_eq(seen.data[3], seen.data[2]);
    double want[4] = {0, 0, 0, 0};
    const float *xs = xv->data, *ys = sg_rt_output(rt, 0)->data;
    for (int64_t i = 0; i < dims[0]; i++) {
        float nv = -xs[i], rv = nv < 0 ? 0 : nv, av = rv + nv;
        float sv = av >= 0 ? 1 / (1 + expf(-av)) : expf(av) / (1 + expf(av));
        want[0] += nv, want[1] += rv, want[2] += av, want[3] += sv;
        ck_assert_msg(fabsf(ys[i] - sv) <= 1e-6f * sv, "y[%lld] = %.9g, want %.9g", (long long)i,
                      ys[i], sv);
    }
    for (int j = 0; j < 4; j++)
        assert_close("observed sum", j, seen.sum[j], want[j]);
    ck_assert_ptr_ne(ys, xs); /* a bound input is never written */
    sg_rt_value_unref(xv);
    sg_rt_free(rt);
    sg_model_free(m);
}
END_TEST

/* Distance in units in the last place between two floats (NaN = NaN). */
static int64_t ulps(float a, float b)
{
    if (a == b || (isnan(a) && isnan(b)))
        return 0;
    if (isnan(a) || isnan(b))
        return INT64_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    ia = ia < 0 ? INT32_MIN - ia : ia; /* order the sign-magnitude patterns */
    ib = ib < 0 ? INT32_MIN - ib : ib;
    return llabs((int64_t)ia - (int64_t)ib);
}

START_TEST(test_vmath_accuracy)
{
    /* The vectorisable exp and erf of runtime/kernels/vmath.h against libm
     * on every 61st float bit pattern (all signs, subnormals, overflow and
     * underflow edges, infinities, NaNs) and on the special values. */
    int64_t worst_exp = 0, worst_erf = 0;
    float at_exp = 0, at_erf = 0;
    for (uint64_t b = 0; b <= UINT32_MAX; b += 61) {
        uint32_t u = (uint32_t)b;
        float x;
        memcpy(&x, &u, sizeof x);
        int64_t e = ulps(sg_expf(x), expf(x)), r = ulps(sg_erff(x), erff(x));
        if (e > worst_exp)
            worst_exp = e, at_exp = x;
        if (r > worst_erf)
            worst_erf = r, at_erf = x;
    }
    ck_assert_msg(worst_exp <= 2, "sg_expf is %lld ulp off at %a: %a, libm %a",
                  (long long)worst_exp, at_exp, sg_expf(at_exp), expf(at_exp));
    ck_assert_msg(worst_erf <= 2, "sg_erff is %lld ulp off at %a: %a, libm %a",
                  (long long)worst_erf, at_erf, sg_erff(at_erf), erff(at_erf));
    const float special[] = {0.0f,      -0.0f,     INFINITY,   -INFINITY,  NAN,
                             88.72283f, 88.72284f, -103.9720f, -103.9721f, 1e-45f,
                             -1e-45f,   0.5f,      -0.5f,      4.0f,       3.9f};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        float x = special[i];
        ck_assert_msg(ulps(sg_expf(x), expf(x)) <= 2, "exp(%a) = %a, libm %a", x, sg_expf(x),
                      expf(x));
        ck_assert_msg(ulps(sg_erff(x), erff(x)) <= 2, "erf(%a) = %a, libm %a", x, sg_erff(x),
                      erff(x));
        ck_assert(signbit(sg_erff(x)) == signbit(erff(x)) || isnan(x));
    }
}
END_TEST

/* ---------------------------------------------------- missing kernels */

struct missing {
    int n;
    char text[4096];
};

static void collect(const sg_node *n, const char *reason, void *ctx)
{
    (void)n;
    struct missing *mi = ctx;
    mi->n++;
    strncat(mi->text, reason, sizeof mi->text - strlen(mi->text) - 2);
    strcat(mi->text, "\n");
}

START_TEST(test_missing_kernels_listed)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    ck_assert_ok(sg_model_set_opset(m, "com.example", 2), &d);
    int64_t dims[1] = {3};
    sg_value *x = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    sg_value *xi = graph_input(m, "xi", SG_DTYPE_INT32, dims, 1);
    sg_value *a = node1(m, "Frobnicate", "com.example", "frob_1", &x, 1, "a");
    sg_value *b = node1(m, "Relu", NULL, "relu_2", &a, 1, "b");
    sg_value *c = node1(m, "Twiddle", "com.example", "twiddle_3", &b, 1, "c");
    sg_value *e = node1(m, "Exp", NULL, "exp_int_4", &xi, 1, "e");
    ck_assert_ok(sg_graph_add_output(m->graph, c), &d);
    ck_assert_ok(sg_graph_add_output(m->graph, e), &d);
    struct missing mi = {0, ""};
    ck_assert_uint_eq(sg_rt_check(m, collect, &mi), 3);
    ck_assert_int_eq(mi.n, 3);
    ck_assert_msg(strstr(mi.text, "frob_1") && strstr(mi.text, "Frobnicate") &&
                      strstr(mi.text, "com.example") && strstr(mi.text, "opset 2") &&
                      strstr(mi.text, "twiddle_3") && strstr(mi.text, "exp_int_4") &&
                      strstr(mi.text, "int32") && !strstr(mi.text, "relu_2"),
                  "%s", mi.text);
    sg_rt *rt = NULL;
    ck_assert_int_eq(sg_rt_create(m, NULL, &rt, &d), SG_EUNSUPPORTED);
    ck_assert_ptr_null(rt);
    ck_assert_msg(strstr(d.msg, "frob_1") && strstr(d.msg, "Frobnicate"), "%s", d.msg);
    sg_model_free(m);
}
END_TEST

static sg_value *const_f32(sg_model *m, const char *name, float x);

/* x -> QuantizeLinear (int4, its zero point's type) -> DequantizeLinear,
 * and with `broken` nodes whose dtypes have no kernel: Relu of a Cast to
 * int4, a Cast to type 24 (float8e8m0, unknown here), Abs of a float8. */
static sg_model *narrow_model(bool broken)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 21), &d);
    int64_t dims[1] = {4};
    sg_value *x = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    sg_tensor *zt = sg_tensor_create(m, "zp", SG_DTYPE_INT4, NULL, 0);
    int8_t zp = -3;
    ck_assert_ok(sg_tensor_set_raw(m, zt, sg_arena_memdup(m->arena, &zp, 1), 1, NULL), &d);
    sg_value *zv = NULL;
    ck_assert_ok(sg_graph_add_value(m->graph, "zp", NULL, &zv, &d), &d);
    ck_assert_ok(sg_value_set_initializer(zv, zt), &d);
    sg_value *qin[3] = {x, const_f32(m, "scale", 0.5f), zv};
    sg_value *y = node1(m, "QuantizeLinear", NULL, "quant", qin, 3, "y");
    sg_value *dqin[3] = {y, qin[1], zv};
    ck_assert_ok(
        sg_graph_add_output(m->graph, node1(m, "DequantizeLinear", NULL, "dequant", dqin, 3, "z")),
        &d);
    if (!broken)
        return m;
    sg_value *q = node1(m, "Cast", NULL, "to_int4", &x, 1, "q");
    ck_assert_ok(sg_node_set_attr_int(q->producer, "to", SG_DTYPE_INT4), &d);
    sg_value *e = node1(m, "Cast", NULL, "to_e8m0", &x, 1, "e");
    ck_assert_ok(sg_node_set_attr_int(e->producer, "to", 24), &d);
    sg_value *f = node1(m, "Cast", NULL, "to_f8", &x, 1, "f");
    ck_assert_ok(sg_node_set_attr_int(f->producer, "to", SG_DTYPE_FLOAT8E4M3FN), &d);
    sg_value *outs[3] = {node1(m, "Relu", NULL, "relu_int4", &q, 1, "r"), e,
                         node1(m, "Abs", NULL, "abs_f8", &f, 1, "a")};
    for (int i = 0; i < 3; i++)
        ck_assert_ok(sg_graph_add_output(m->graph, outs[i]), &d);
    return m;
}

/* A node's output dtype comes from an attribute or another input (Cast's
 * `to`, QuantizeLinear's zero point) and flows into the nodes after it:
 * --check finds every node without a kernel for the dtypes it meets, at
 * once, where it used to say every node has one. */
START_TEST(test_missing_kernels_dtypes_flowing)
{
    sg_model *m = narrow_model(true);
    struct missing mi = {0, ""};
    size_t n_missing = sg_rt_check(m, collect, &mi);
    ck_assert_msg(n_missing == 3, "%zu missing:\n%s", n_missing, mi.text);
    ck_assert_msg(
        strstr(mi.text, "node 'relu_int4' (Relu, ai.onnx v21): no kernel for int4 inputs") &&
            strstr(mi.text, "node 'to_e8m0' (Cast, ai.onnx v21): no kernel making data "
                            "type 24 outputs") &&
            strstr(mi.text, "'abs_f8' (Abs, ai.onnx v21): no kernel for float8e4m3fn") &&
            !strstr(mi.text, "quant") && !strstr(mi.text, "'to_int4'"),
        "%s", mi.text);
    sg_model_free(m);

    /* Without them the quantized round trip runs: x / 0.5 rounds half to
     * even, -3 and saturation to [-8, 7], then back. */
    m = narrow_model(false);
    ck_assert_uint_eq(sg_rt_check(m, collect, &mi), 0);
    struct sg_diag d = {0};
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
    int64_t dims[1] = {4};
    sg_rt_value *in;
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, dims, 1, &in, &d), &d);
    const float xs[4] = {0.75f, -3.0f, 100.0f, 1.25f}, want[4] = {1.0f, -2.5f, 5.0f, 1.0f};
    memcpy(in->data, xs, sizeof xs);
    ck_assert_ok(sg_rt_set_input(rt, "x", in, &d), &d);
    sg_rt_value_unref(in);
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    const sg_rt_value *out = sg_rt_output(rt, 0);
    ck_assert_int_eq(out->dtype, SG_DTYPE_FLOAT);
    for (int i = 0; i < 4; i++)
        assert_close("dequantized", i, ((const float *)out->data)[i], want[i]);
    sg_rt_free(rt);
    sg_model_free(m);
}
END_TEST

/* ------------------------------------------------- required inputs */

static bool given_mask(const void *ctx, uint32_t i)
{
    return (*(const unsigned *)ctx >> i) & 1;
}

/* sg_kernel_inputs_fit on patterns of every shape; `given` is a bit mask
 * of the present inputs among n. */
static const struct {
    const char *pattern;
    uint32_t n;
    unsigned given;
    bool fit;
    const char *why;
} fit_cases[] = {
    {"rro", 2, 0x3, true, NULL},
    {"rro", 3, 0x3, true, NULL}, /* trailing '' */
    {"rro", 3, 0x5, false, "input 1 is required"},
    {"rro", 1, 0x1, false, "needs at least 2 inputs, got 1"},
    {"rro", 4, 0xf, false, "takes at most 3 inputs, got 4"},
    {"rro", 5, 0x7, true, NULL}, /* '' past the pattern is nothing given */
    {"", 0, 0, true, NULL},
    {"", 1, 0x1, false, "takes at most 0 inputs"},
    {"r+", 0, 0, false, "needs at least 1 input, got 0"},
    {"r+", 5, 0x1f, true, NULL},
    {"r+", 5, 0x1b, false, "input 2 is required"},
    {"o+", 3, 0x4, true, NULL},
    {"oor*", 2, 0, true, NULL},
    {"oor*", 0, 0, true, NULL},
    {"oor*", 4, 0xd, true, NULL},
    {"oor*", 4, 0x7, false, "input 3 is required"},
    {"or+", 1, 0x0, false, "needs at least 2 inputs"},
    {"ror", 1, 0x1, false, "needs at least 3 inputs"},
};

START_TEST(test_kernel_inputs_fit)
{
    for (size_t i = 0; i < sizeof fit_cases / sizeof fit_cases[0]; i++) {
        struct sg_kernel e = {"", "Op", 1, 0, SG_KT_ANY, 0, NULL, fit_cases[i].pattern};
        char msg[128] = "";
        bool fit = sg_kernel_inputs_fit(&e, fit_cases[i].n, given_mask, &fit_cases[i].given, msg,
                                        sizeof msg);
        ck_assert_msg(fit == fit_cases[i].fit && (fit || strstr(msg, fit_cases[i].why)),
                      "'%s' with %u inputs (mask %x): fit %d, '%s'", fit_cases[i].pattern,
                      fit_cases[i].n, fit_cases[i].given, fit, msg);
    }
    ck_assert(sg_kernel_inputs_valid("rro") && sg_kernel_inputs_valid("") &&
              sg_kernel_inputs_valid("oor*") && sg_kernel_inputs_valid("r+"));
    ck_assert(!sg_kernel_inputs_valid(NULL) && !sg_kernel_inputs_valid("+") &&
              !sg_kernel_inputs_valid("r+o") && !sg_kernel_inputs_valid("rx") &&
              !sg_kernel_inputs_valid("r++"));
    /* Every entry declares a well-formed pattern. */
    for (size_t f = 0; f < sg_kernel_n_families; f++)
        for (size_t i = 0; i < sg_kernel_families[f]->count; i++) {
            const struct sg_kernel *e = &sg_kernel_families[f]->kernels[i];
            ck_assert_msg(sg_kernel_inputs_valid(e->inputs), "%s v%d (%s): inputs '%s'", e->op_type,
                          e->since_version, sg_kernel_families[f]->name,
                          e->inputs ? e->inputs : "(none)");
        }
}
END_TEST

/* A node lacking a required input is refused when the model is planned,
 * before any kernel runs, by sg_rt_create, sg_rt_check and
 * sg_rt_run_node alike; an optional one may be omitted. */
START_TEST(test_required_inputs_checked)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t dx[4] = {1, 1, 3, 3};
    sg_value *x = graph_input(m, "x", SG_DTYPE_FLOAT, dx, 4);
    sg_value *conv_in[3] = {x, NULL, NULL}; /* W omitted */
    sg_value *y = node1(m, "Conv", NULL, "conv_no_w", conv_in, 3, "y");
    sg_value *clip_in[3] = {y, NULL, NULL}; /* Clip's min and max are optional */
    sg_value *z = node1(m, "Clip", NULL, "clip", clip_in, 3, "z");
    ck_assert_ok(sg_graph_add_output(m->graph, z), &d);
    struct missing mi = {0, ""};
    ck_assert_uint_eq(sg_rt_check(m, collect, &mi), 1);
    ck_assert_msg(strstr(mi.text, "conv_no_w") && strstr(mi.text, "input 1 is required") &&
                      !strstr(mi.text, "clip"),
                  "%s", mi.text);
    sg_rt *rt = NULL;
    ck_assert_int_eq(sg_rt_create(m, NULL, &rt, &d), SG_EARITY);
    ck_assert_ptr_null(rt);
    ck_assert_msg(strstr(d.msg, "node 'conv_no_w' (Conv, ai.onnx v13): input 1 is required"), "%s",
                  d.msg);
    sg_diag_clear(&d);
    sg_rt_value *out[1];
    ck_assert_int_eq(sg_rt_run_node(m, y->producer, NULL, NULL, NULL, out, &d), SG_EARITY);
    ck_assert_msg(strstr(d.msg, "conv_no_w") && strstr(d.msg, "input 1"), "%s", d.msg);
    ck_assert_ptr_null(out[0]);
    sg_model_free(m);
}
END_TEST

/* ------------------------------------------------------- input checks */

START_TEST(test_input_checks)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t da[2] = {2, 3}, db[2] = {3, 4};
    sg_value *ins[2] = {graph_input(m, "a", SG_DTYPE_FLOAT, da, 2),
                        graph_input(m, "b", SG_DTYPE_FLOAT, NULL, -1)};
    ck_assert_ok(sg_graph_add_output(m->graph, node1(m, "MatMul", NULL, "mm", ins, 2, "y")), &d);
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
    int64_t bad[2] = {2, 4};
    sg_rt_value *wrong = tensor_f32(bad, 2, 0, 1);
    ck_assert_int_eq(sg_rt_set_input(rt, "a", wrong, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "'a'") && strstr(d.msg, "[2,4]") && strstr(d.msg, "[2,3]"), "%s",
                  d.msg);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_rt_set_input(rt, "nope", wrong, &d), SG_ENOTFOUND);
    sg_diag_clear(&d);
    sg_rt_value *i32;
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_INT32, da, 2, &i32, &d), &d);
    ck_assert_int_eq(sg_rt_set_input(rt, "a", i32, &d), SG_ETYPE);
    ck_assert_msg(strstr(d.msg, "int32") && strstr(d.msg, "float32"), "%s", d.msg);
    sg_diag_clear(&d);
    sg_rt_value *a = tensor_f32(da, 2, 0, 1), *b = tensor_f32(bad, 2, 0, 1);
    ck_assert_ok(sg_rt_set_input(rt, "a", a, &d), &d);
    ck_assert_int_eq(sg_rt_run(rt, &d), SG_EUNDEF);
    ck_assert_msg(strstr(d.msg, "'b'"), "%s", d.msg);
    sg_diag_clear(&d);
    ck_assert_ok(sg_rt_set_input(rt, "b", b, &d), &d);
    ck_assert_int_eq(sg_rt_run(rt, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "'mm'") && strstr(d.msg, "[2,3]") && strstr(d.msg, "[2,4]"), "%s",
                  d.msg);
    sg_diag_clear(&d);
    sg_rt_value *b2 = tensor_f32(db, 2, 0, 1);
    ck_assert_ok(sg_rt_set_input(rt, "b", b2, &d), &d);
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    ck_assert_int_eq(sg_rt_output(rt, 0)->dims[1], 4);
    sg_rt_value_unref(wrong);
    sg_rt_value_unref(i32);
    sg_rt_value_unref(a);
    sg_rt_value_unref(b);
    sg_rt_value_unref(b2);
    sg_rt_free(rt);
    sg_model_free(m);
}
END_TEST

/* --------------------------------------------------------- numerics */

static double run_exp(enum sg_numerics mode, float x)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t dims[1] = {1};
    sg_value *in = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    ck_assert_ok(sg_graph_add_output(m->graph, node1(m, "Exp", NULL, "exp", &in, 1, "y")), &d);
    struct sg_rt_opts opts = {0};
    opts.numerics = mode;
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, &opts, &rt, &d), &d);
    sg_rt_value *v = tensor_f32(dims, 1, x, 0);
    ck_assert_ok(sg_rt_set_input(rt, "x", v, &d), &d);
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    double y = ((float *)sg_rt_output(rt, 0)->data)[0];
    /* The input value the caller holds is never rounded in place. */
    ck_assert(((float *)v->data)[0] == x);
    sg_rt_value_unref(v);
    sg_rt_free(rt);
    sg_model_free(m);
    return y;
}

START_TEST(test_numerics_modes)
{
    assert_close("fp32", 0, run_exp(SG_NUMERICS_FP32, 12.0f), expf(12.0f));
    ck_assert(isinf(run_exp(SG_NUMERICS_FP16_INF, 12.0f)));
    ck_assert(run_exp(SG_NUMERICS_FP16_SAT, 12.0f) == 65504.0);
    /* Inputs are rounded to float16 at the boundary too: exp(0.1) in fp16. */
    float h = sg_half_to_float(sg_float_to_half(expf(sg_half_to_float(sg_float_to_half(0.1f)))));
    ck_assert(run_exp(SG_NUMERICS_FP16_INF, 0.1f) == h);
}
END_TEST

/* ------------------------------------------------------ random ops */

/* RandomUniform with `seed` (or none) run twice: the same values, in range. */
static void random_twice(bool seeded, float *first, float *second)
{
    for (int run = 0; run < 2; run++) {
        sg_model *m = sg_model_create();
        struct sg_diag d = {0};
        ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
        sg_value *y = node1(m, "RandomUniform", NULL, "rnd", NULL, 0, "y");
        sg_node *n = y->producer;
        int64_t shape[2] = {4, 8};
        ck_assert_ok(sg_node_set_attr_ints(n, "shape", shape, 2), &d);
        ck_assert_ok(sg_node_set_attr_float(n, "low", -2.0f), &d);
        ck_assert_ok(sg_node_set_attr_float(n, "high", 3.0f), &d);
        if (seeded)
            ck_assert_ok(sg_node_set_attr_float(n, "seed", 7.0f), &d);
        ck_assert_ok(sg_graph_add_output(m->graph, y), &d);
        sg_rt *rt;
        ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
        ck_assert_ok(sg_rt_run(rt, &d), &d);
        const sg_rt_value *v = sg_rt_output(rt, 0);
        ck_assert_int_eq(v->numel, 32);
        memcpy(run ? second : first, v->data, 32 * sizeof(float));
        sg_rt_free(rt);
        sg_model_free(m);
    }
}

START_TEST(test_random_deterministic)
{
    float a[32], b[32], c[32], e[32];
    random_twice(true, a, b);
    random_twice(false, c, e);
    ck_assert_mem_eq(a, b, sizeof a);
    ck_assert_mem_eq(c, e, sizeof c);
    ck_assert(memcmp(a, c, sizeof a) != 0); /* the seed matters */
    double sum = 0;
    for (int i = 0; i < 32; i++) {
        ck_assert_msg(a[i] >= -2.0f && a[i] < 3.0f, "value %g outside [-2, 3)", a[i]);
        sum += a[i];
    }
    ck_assert_msg(fabs(sum / 32 - 0.5) < 1.0, "mean %g is far from 0.5", sum / 32);
}
END_TEST

/* ------------------------------------------------------- one node */

struct lookup_ctx {
    const sg_value *keys[4];
    sg_rt_value *vals[4];
    int n, asked;
};

static sg_rt_value *lookup_value(const sg_value *v, void *arg)
{
    struct lookup_ctx *c = arg;
    c->asked++;
    for (int i = 0; i < c->n; i++)
        if (c->keys[i] == v)
            return c->vals[i];
    return NULL;
}

/* sg_rt_run_node: a node alone, its inputs and the outer value its
 * subgraph reads all from the lookup; a value the lookup lacks is named. */
START_TEST(test_run_node)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t dims[1] = {3};
    sg_value *x = graph_input(m, "x", SG_DTYPE_FLOAT, dims, 1);
    float cdata[3] = {1.5f, -2.0f, 4.0f};
    sg_tensor *ct = sg_tensor_create(m, "c", SG_DTYPE_FLOAT, dims, 1);
    sg_value *c = NULL;
    ck_assert_ok(
        sg_graph_add_value(m->graph, "c", sg_type_tensor(m, SG_DTYPE_FLOAT, dims, 1), &c, &d), &d);
    ck_assert_ok(sg_tensor_set_raw(m, ct, sg_arena_memdup(m->arena, cdata, sizeof cdata),
                                   sizeof cdata, NULL),
                 &d);
    ck_assert_ok(sg_value_set_initializer(c, ct), &d);
    sg_value *add_in[2] = {x, c};
    sg_value *y = node1(m, "Add", NULL, "add", add_in, 2, "y");
    sg_value *cond = graph_input(m, "cond", SG_DTYPE_BOOL, NULL, 0);
    sg_value *k = node1(m, "If", NULL, "if", &cond, 1, "k");
    const char *branch[2] = {"then_branch", "else_branch"}, *op[2] = {"Neg", "Abs"};
    for (int b = 0; b < 2; b++) {
        sg_graph *sub = sg_node_set_attr_graph(k->producer, branch[b]);
        ck_assert_ptr_nonnull(sub);
        sg_value *cap = sg_graph_resolve(sub, "c", &d);
        ck_assert_ptr_nonnull(cap);
        sg_node *n = sg_node_create(sub, op[b], NULL, op[b], &d);
        sg_value *o = NULL;
        ck_assert_ok(sg_graph_add_value(sub, b ? "o_else" : "o_then", NULL, &o, &d), &d);
        ck_assert_ok(sg_node_set_input(n, 0, cap), &d);
        ck_assert_ok(sg_node_set_output(n, 0, o), &d);
        ck_assert_ok(sg_graph_add_output(sub, o), &d);
    }
    ck_assert_ok(sg_graph_add_output(m->graph, y), &d);
    ck_assert_ok(sg_graph_add_output(m->graph, k), &d);
    ck_verify(m);

    struct lookup_ctx lc = {{x, c, cond}, {NULL}, 3, 0};
    lc.vals[0] = tensor_f32(dims, 1, 10, 1);
    ck_assert_ok(sg_rt_value_from_tensor(m, ct, &lc.vals[1], &d), &d);
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_BOOL, NULL, 0, &lc.vals[2], &d), &d);
    ((uint8_t *)lc.vals[2]->data)[0] = 1;
    sg_rt_value *out[1] = {NULL};
    ck_assert_ok(sg_rt_run_node(m, y->producer, NULL, lookup_value, &lc, out, &d), &d);
    ck_assert_int_eq(lc.asked, 2);
    for (int i = 0; i < 3; i++)
        assert_close("add", i, ((float *)out[0]->data)[i], 10.0 + i + cdata[i]);
    sg_rt_value_unref(out[0]);

    /* The If reads c through its branches: asked for cond and c. */
    lc.asked = 0;
    ck_assert_ok(sg_rt_run_node(m, k->producer, NULL, lookup_value, &lc, out, &d), &d);
    ck_assert_int_eq(lc.asked, 2);
    for (int i = 0; i < 3; i++)
        assert_close("if", i, ((float *)out[0]->data)[i], -cdata[i]);
    sg_rt_value_unref(out[0]);

    /* Without c: SG_EUNDEF naming it, and no outputs. */
    lc.n = 1;
    lc.keys[0] = cond;
    sg_rt_value *keep = lc.vals[0];
    lc.vals[0] = lc.vals[2];
    sg_status st = sg_rt_run_node(m, k->producer, NULL, lookup_value, &lc, out, &d);
    ck_assert_int_eq(st, SG_EUNDEF);
    ck_assert_msg(strstr(d.msg, "no value for 'c'"), "message: %s", d.msg);
    ck_assert_ptr_null(out[0]);
    lc.vals[0] = keep;
    for (int i = 0; i < 3; i++)
        sg_rt_value_unref(lc.vals[i]);
    sg_model_free(m);
}
END_TEST

/* opts.max_tensor_bytes stops an expansion before it is allocated. */
START_TEST(test_max_tensor_bytes)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t two = 2;
    sg_value *shape = graph_input(m, "shape", SG_DTYPE_INT64, &two, 1);
    sg_value *y = node1(m, "ConstantOfShape", NULL, "cos", &shape, 1, "y");
    ck_assert_ok(sg_graph_add_output(m->graph, y), &d);
    struct sg_rt_opts opts = {0};
    opts.max_tensor_bytes = 1 << 20;
    int64_t big[2] = {1 << 20, 1 << 20}, small[2] = {256, 1024};
    for (int k = 0; k < 2; k++) {
        sg_rt *rt;
        ck_assert_ok(sg_rt_create(m, &opts, &rt, &d), &d);
        sg_rt_value *s;
        ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_INT64, &two, 1, &s, &d), &d);
        memcpy(s->data, k ? small : big, sizeof big);
        ck_assert_ok(sg_rt_set_input(rt, "shape", s, &d), &d);
        sg_rt_value_unref(s);
        sg_diag_clear(&d);
        sg_status st = sg_rt_run(rt, &d);
        if (k == 0) {
            /* 4 TiB asked: refused, not attempted. */
            ck_assert_int_eq(st, SG_ETOOBIG);
            ck_assert_msg(strstr(d.msg, "float32[1048576,1048576] is over the limit of 1048576"),
                          "message: %s", d.msg);
        } else {
            ck_assert_ok(st, &d); /* exactly 1 MiB is allowed */
            ck_assert_int_eq(sg_rt_output(rt, 0)->numel, 256 * 1024);
        }
        sg_rt_free(rt);
    }
    sg_model_free(m);
}
END_TEST

/*
 * A Loop of trip count M whose carried value q grows by one tensor of 1 KB
 * per iteration (q' = SequenceInsert(q, big), big read from the main
 * graph): the iteration limit and max_tensor_bytes stop it as it grows.
 */
static sg_model *growing_loop(void)
{
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t k256 = 256;
    sg_value *M = graph_input(m, "M", SG_DTYPE_INT64, NULL, 0);
    graph_input(m, "big", SG_DTYPE_FLOAT, &k256, 1);
    sg_value *q0 = NULL;
    ck_assert_ok(sg_graph_add_value(m->graph, "q0", NULL, &q0, &d), &d);
    ck_assert_ok(sg_graph_add_input(m->graph, q0), &d);
    sg_value *loop_in[3] = {M, NULL, q0};
    sg_value *q = node1(m, "Loop", NULL, "grow", loop_in, 3, "q");
    sg_graph *body = sg_node_set_attr_graph(q->producer, "body");
    ck_assert_ptr_nonnull(body);
    const char *names[3] = {"i", "c_in", "q_in"};
    sg_value *bin[3];
    for (int i = 0; i < 3; i++) {
        ck_assert_ok(sg_graph_add_value(body, names[i], NULL, &bin[i], &d), &d);
        ck_assert_ok(sg_graph_add_input(body, bin[i]), &d);
    }
    sg_value *big = sg_graph_resolve(body, "big", &d), *c_out = NULL, *q_out = NULL;
    ck_assert_ptr_nonnull(big);
    ck_assert_ok(sg_graph_add_value(body, "c_out", NULL, &c_out, &d), &d);
    ck_assert_ok(sg_graph_add_value(body, "q_out", NULL, &q_out, &d), &d);
    sg_node *id = sg_node_create(body, "Identity", NULL, "keep_going", &d);
    ck_assert_ok(sg_node_set_input(id, 0, bin[1]), &d);
    ck_assert_ok(sg_node_set_output(id, 0, c_out), &d);
    sg_node *ins = sg_node_create(body, "SequenceInsert", NULL, "append", &d);
    ck_assert_ok(sg_node_set_input(ins, 0, bin[2]), &d);
    ck_assert_ok(sg_node_set_input(ins, 1, big), &d);
    ck_assert_ok(sg_node_set_output(ins, 0, q_out), &d);
    ck_assert_ok(sg_graph_add_output(body, c_out), &d);
    ck_assert_ok(sg_graph_add_output(body, q_out), &d);
    ck_assert_ok(sg_graph_add_output(m->graph, q), &d);
    ck_verify(m);
    return m;
}

/* Run growing_loop for trip count M; the status, and the length of q. */
static sg_status run_growing(sg_model *m, const struct sg_rt_opts *o, int64_t M, size_t *len,
                             struct sg_diag *d)
{
    sg_rt *rt;
    ck_assert_ok(sg_rt_create(m, o, &rt, d), d);
    sg_rt_value *mv, *big, *q0;
    int64_t k256 = 256;
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_INT64, NULL, 0, &mv, d), d);
    *(int64_t *)mv->data = M;
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, &k256, 1, &big, d), d);
    ck_assert_int_eq(sg_rt_sequence_create(SG_DTYPE_FLOAT, &q0), SG_OK);
    ck_assert_ok(sg_rt_set_input(rt, "M", mv, d), d);
    ck_assert_ok(sg_rt_set_input(rt, "big", big, d), d);
    ck_assert_ok(sg_rt_set_input(rt, "q0", q0, d), d);
    sg_rt_value_unref(mv);
    sg_rt_value_unref(big);
    sg_rt_value_unref(q0);
    sg_status st = sg_rt_run(rt, d);
    *len = st ? 0 : sg_rt_output(rt, 0)->n_items;
    sg_rt_free(rt);
    return st;
}

START_TEST(test_loop_limits)
{
    sg_model *m = growing_loop();
    struct sg_diag d = {0};
    struct sg_rt_opts o = {0};
    size_t len;
    /* Within both limits: M iterations, M items. */
    o.max_loop_iterations = 10;
    o.max_tensor_bytes = 64 << 10;
    ck_assert_ok(run_growing(m, &o, 10, &len, &d), &d);
    ck_assert_uint_eq(len, 10);
    /* One iteration more than allowed. */
    ck_assert_int_eq(run_growing(m, &o, 11, &len, &d), SG_ERANGE);
    ck_assert_msg(strstr(d.msg, "node 'grow' (Loop, ai.onnx v13): stopped at the limit of 10 "
                                "iterations (trip count 11)"),
                  "message: %s", d.msg);
    sg_diag_clear(&d);
    /* The sequence passes 64 KB at its 65th tensor, whatever the trip count. */
    o.max_loop_iterations = UINT64_MAX;
    ck_assert_int_eq(run_growing(m, &o, INT64_MAX, &len, &d), SG_ETOOBIG);
    ck_assert_msg(strstr(d.msg, "loop-carried value 0 (seq(float32)[65], 66560 bytes) is over the "
                                "limit of 65536 bytes after iteration 64"),
                  "message: %s", d.msg);
    sg_diag_clear(&d);
    /* The default limit (SG_RT_MAX_LOOP_ITERATIONS) applies when 0. */
    o.max_loop_iterations = 0;
    o.max_tensor_bytes = 0;
    ck_assert_ok(run_growing(m, &o, 100, &len, &d), &d);
    ck_assert_uint_eq(len, 100);
    sg_model_free(m);
}
END_TEST

/* ------------------------------------------------- allocation failures */

START_TEST(test_alloc_failures)
{
    sg_model *m = NULL;
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_load(test_src_path("models/exp_overflow.onnx"), NULL, &m, &d), &d);
    int64_t dims[3] = {1, 4, 16};
    bool done = false;
    for (uint64_t n = 1; !done && n < 100000; n++) {
        int64_t live = sg_alloc_live();
        sg_rt_value *x = tensor_f32(dims, 3, 0, 0.1f);
        sg_rt *rt = NULL;
        sg_dump *dump = NULL;
        sg_diag_clear(&d);
        sg_alloc_fail_at(n);
        sg_status st = sg_rt_create(m, NULL, &rt, &d);
        if (!st)
            st = sg_rt_set_input(rt, "x", x, &d);
        if (!st)
            st = sg_rt_run(rt, &d);
        uint64_t made = sg_alloc_fail_at(0);
        if (st == SG_OK) {
            ck_assert_uint_lt(made, n); /* the run no longer reached the failure */
            done = true;
        } else {
            ck_assert_msg(d.msg[0] != 0, "failure %llu left no message", (unsigned long long)n);
        }
        sg_rt_free(rt);
        sg_dump_free(dump);
        sg_rt_value_unref(x);
        ck_assert_msg(sg_alloc_live() == live, "failure at allocation %llu leaked %lld blocks",
                      (unsigned long long)n, (long long)(sg_alloc_live() - live));
    }
    ck_assert(done);
    sg_model_free(m);
}
END_TEST

/* -------------------------------------------- dumps and the manifest */

static int dump_files;

static sg_status count_dumps(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                             void *ctx, struct sg_diag *diag)
{
    dump_files++;
    return sg_dump_observe(n, index, v, depth, ctx, diag);
}

/* exp_overflow.onnx ready to run with every output dumped into a new
 * folder (removed first when `gone`, to make the writes fail). */
struct dump_run {
    sg_model *m;
    char *dir;
    sg_dump *dump;
    sg_rt *rt;
    sg_rt_value *x;
};

static void dump_run_start(struct dump_run *r, const char *tag, bool gone)
{
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_load(test_src_path("models/exp_overflow.onnx"), NULL, &r->m, &d), &d);
    r->dir = test_tmpdir(tag);
    ck_assert_ok(sg_dump_create(r->dir, SG_DUMP_ALL, &r->dump, &d), &d);
    if (gone)
        ck_assert_int_eq(rmdir(r->dir), 0);
    struct sg_rt_opts opts = {0};
    opts.on_output = count_dumps;
    opts.observe_ctx = r->dump;
    ck_assert_ok(sg_rt_create(r->m, &opts, &r->rt, &d), &d);
    int64_t dims[3] = {1, 4, 16};
    r->x = tensor_f32(dims, 3, 0, 0.1f);
    ck_assert_ok(sg_rt_set_input(r->rt, "x", r->x, &d), &d);
}

static void dump_run_end(struct dump_run *r)
{
    sg_rt_value_unref(r->x);
    sg_rt_free(r->rt);
    sg_dump_free(r->dump);
    sg_model_free(r->m);
    sg_free(r->dir);
}

START_TEST(test_dump_all)
{
    struct dump_run r;
    dump_run_start(&r, "dump", false);
    sg_rt *rt = r.rt;
    sg_dump *dump = r.dump;
    char *dir = r.dir;
    struct sg_diag d = {0};
    ck_assert_ok(sg_dump_input(dump, "x", r.x, &d), &d);
    dump_files = 0;
    ck_assert_ok(sg_rt_run(rt, &d), &d);
    ck_assert_ok(sg_dump_finish(dump, rt, &d), &d);
    ck_assert_int_eq(dump_files, 10);
    ck_assert_uint_eq(sg_dump_count(dump), 10);
    /* numpy reads every file, the manifest lists them in execution order
     * with names, and the last one is the graph output. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import json, numpy as np, os\n"
             "d = '%s'\n"
             "m = json.load(open(d + '/manifest.json'))\n"
             "t = m['tensors']\n"
             "assert [e['node'] for e in t] == ['Mul_0','Sub_1','Sub_2','Exp_3','Less_4',"
             "'Cast_5','Mul_6','Sub_7','Mul_8','Add_9'], t\n"
             "for e in t:\n"
             "    a = np.load(os.path.join(d, e['file']))\n"
             "    assert list(a.shape) == e['shape'] and str(a.dtype) == e['dtype'], e\n"
             "    assert e['file'].startswith(e['node'] + '.0.')\n"
             "x = np.load(d + '/inputs/x.npy')\n"
             "t4 = x * 4 - 0.5 - 0.25\n"
             "y = np.load(os.path.join(d, m['outputs'][0]['file']))\n"
             "assert np.allclose(y, np.where(t4 < 5, np.exp(t4), t4), rtol=1e-5), (y, t4)\n"
             "assert t[-1]['graph_output'] and m['mode'] == 'all'\"",
             dir);
    ck_assert_msg(system(cmd) == 0, "manifest or dumps in %s are wrong", dir);
    dump_run_end(&r);
}
END_TEST

/* Files are written by the writer's thread: a failure there (the folder is
 * gone) fails the run at the next output or at the flush, naming the file,
 * and freeing the writer with files still queued leaks nothing. */
START_TEST(test_dump_write_failure)
{
    struct dump_run r;
    dump_run_start(&r, "dumpfail", true);
    struct sg_diag d = {0};
    sg_status st = sg_rt_run(r.rt, &d);
    if (!st)
        st = sg_dump_flush(r.dump, &d);
    ck_assert_int_eq(st, SG_EIO);
    ck_assert_msg(strstr(d.msg, r.dir) && strstr(d.msg, ".npy"), "%s", d.msg);
    dump_run_end(&r);
}
END_TEST

/* ------------------------------------------------- Conv + Clip fusion */

/* A float32 initializer of dims holding scale * sin(seed + 0.37 i). */
static sg_value *init_f32(sg_model *m, const char *name, const int64_t *dims, uint32_t rank,
                          float scale, float seed)
{
    struct sg_diag d = {0};
    int64_t n = 1;
    for (uint32_t i = 0; i < rank; i++)
        n *= dims[i];
    float *data = sg_arena_alloc(m->arena, (size_t)n * sizeof *data);
    ck_assert_ptr_nonnull(data);
    for (int64_t i = 0; i < n; i++)
        data[i] = scale * sinf(seed + 0.37f * (float)i);
    sg_tensor *t = sg_tensor_create(m, name, SG_DTYPE_FLOAT, dims, rank);
    sg_value *v = NULL;
    ck_assert_ok(
        sg_graph_add_value(m->graph, name, sg_type_tensor(m, SG_DTYPE_FLOAT, dims, rank), &v, &d),
        &d);
    ck_assert_ok(sg_tensor_set_raw(m, t, data, (size_t)n * sizeof *data, NULL), &d);
    ck_assert_ok(sg_value_set_initializer(v, t), &d);
    return v;
}

/* A Constant node holding the float32 scalar x. */
static sg_value *const_f32(sg_model *m, const char *name, float x)
{
    sg_value *v = node1(m, "Constant", NULL, name, NULL, 0, name);
    sg_tensor *t = sg_tensor_create(m, NULL, SG_DTYPE_FLOAT, NULL, 0);
    ck_assert_int_eq(
        sg_tensor_set_raw(m, t, sg_arena_memdup(m->arena, &x, sizeof x), sizeof x, NULL), SG_OK);
    ck_assert_int_eq(sg_node_set_attr_tensor(v->producer, "value", t), SG_OK);
    return v;
}

/* Conv `name` of x by a new weight [M, C / group, k, k] and bias, pads k / 2. */
static sg_value *conv_node(sg_model *m, const char *name, sg_value *x, int64_t C, int64_t M,
                           int64_t k, int64_t group, float seed)
{
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s_w", name);
    snprintf(bn, sizeof bn, "%s_b", name);
    int64_t wd[4] = {M, C / group, k, k}, bd[1] = {M}, pads[4] = {k / 2, k / 2, k / 2, k / 2};
    sg_value *ins[3] = {x, init_f32(m, wn, wd, 4, 0.5f, seed), init_f32(m, bn, bd, 1, 0.2f, seed)};
    sg_value *c = node1(m, "Conv", NULL, name, ins, 3, name);
    ck_assert_int_eq(sg_node_set_attr_ints(c->producer, "pads", pads, 4), SG_OK);
    ck_assert_int_eq(sg_node_set_attr_int(c->producer, "group", group), SG_OK);
    return c;
}

struct observed {
    const char *name[16];
    sg_rt_value *v[16];
    int n;
};

static sg_status keep_copies(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                             void *ctx, struct sg_diag *diag)
{
    (void)index, (void)depth, (void)diag;
    struct observed *o = ctx;
    if (o->n < 16 && v->kind == SG_RT_TENSOR) {
        struct sg_diag d = {0};
        o->name[o->n] = n->outputs[0]->name;
        ck_assert_ok(sg_rt_tensor_create(v->dtype, v->dims, v->rank, &o->v[o->n], &d), &d);
        memcpy(o->v[o->n]->data, v->data, (size_t)v->numel * sg_rt_elem_size(v->dtype));
        o->n++;
    }
    return SG_OK;
}

static const sg_rt_value *observed_value(const struct observed *o, const char *name)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->name[i], name) == 0)
            return o->v[i];
    ck_abort_msg("'%s' was not observed", name);
    return NULL;
}

/* Count of elements of v outside [lo, hi]. */
static int64_t outside(const sg_rt_value *v, float lo, float hi)
{
    int64_t n = 0;
    for (int64_t i = 0; i < v->numel; i++) {
        float x = ((const float *)v->data)[i];
        n += x < lo || x > hi;
    }
    return n;
}

START_TEST(test_conv_clamp_fusion)
{
    /* Conv (3x3, 1x1, depthwise) followed by Clip or Relu: run without an
     * observer (fused: the Conv clamps, the Clip passes through) and with
     * one (every value observed, nothing fused) the outputs are the same
     * bits, NaN included; the observed Conv outputs are unclamped. A Conv
     * output that is also a graph output stays unclamped either way. */
    sg_model *m = sg_model_create();
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    int64_t xd[4] = {1, 8, 9, 11};
    sg_value *x = graph_input(m, "x", SG_DTYPE_FLOAT, xd, 4);
    sg_value *lo = const_f32(m, "lo", -0.5f), *hi = const_f32(m, "hi", 0.75f);
    sg_value *ca = conv_node(m, "ca", x, 8, 21, 3, 1, 1);
    sg_value *clip_a[3] = {ca, lo, hi};
    sg_value *y = node1(m, "Clip", NULL, "clip_a", clip_a, 3, "y");
    sg_value *cb = conv_node(m, "cb", x, 8, 19, 1, 1, 2);
    sg_value *z = node1(m, "Relu", NULL, "relu_b", &cb, 1, "z");
    sg_value *cc = conv_node(m, "cc", x, 8, 8, 3, 8, 3);
    sg_value *clip_c[2] = {cc, lo};
    sg_value *u = node1(m, "Clip", NULL, "clip_c", clip_c, 2, "u");
    sg_value *cd = conv_node(m, "cd", x, 8, 5, 1, 1, 4);
    sg_value *v = node1(m, "Relu", NULL, "relu_d", &cd, 1, "v");
    sg_value *outs[5] = {y, z, u, v, cd};
    for (int i = 0; i < 5; i++)
        ck_assert_ok(sg_graph_add_output(m->graph, outs[i]), &d);
    ck_verify(m);

    sg_rt_value *xv = tensor_f32(xd, 4, 0, 0);
    for (int64_t i = 0; i < xv->numel; i++)
        ((float *)xv->data)[i] = 2.0f * sinf(0.29f * (float)i);
    ((float *)xv->data)[40] = NAN;
    /* Run 2 observes the graph outputs only (surgeon run without --dump
     * all): fused too, and the observer sees exactly the five outputs. */
    struct observed seen = {0}, seen_out = {0};
    sg_rt *rt[3];
    for (int r = 0; r < 3; r++) {
        struct sg_rt_opts opts = {0};
        if (r) {
            opts.on_output = keep_copies;
            opts.observe_ctx = r == 1 ? &seen : &seen_out;
            opts.observe_graph_outputs = r == 2;
        }
        ck_assert_ok(sg_rt_create(m, &opts, &rt[r], &d), &d);
        ck_assert_ok(sg_rt_set_input(rt[r], "x", xv, &d), &d);
        ck_assert_ok(sg_rt_run(rt[r], &d), &d);
    }
    for (uint32_t i = 0; i < 5; i++)
        for (int r = 1; r < 3; r++) {
            const sg_rt_value *a = sg_rt_output(rt[0], i), *b = sg_rt_output(rt[r], i);
            ck_assert_int_eq(a->numel, b->numel);
            ck_assert_msg(memcmp(a->data, b->data, (size_t)a->numel * sizeof(float)) == 0,
                          "output %u differs fused and in run %d", i, r);
        }
    ck_assert_int_eq(seen_out.n, 5);
    ck_assert_ptr_nonnull(observed_value(&seen_out, "cd"));
    /* The clamps mattered, and NaN came through them. */
    ck_assert_int_gt(outside(observed_value(&seen, "ca"), -0.5f, 0.75f), 0);
    ck_assert_int_gt(outside(observed_value(&seen, "cb"), 0, INFINITY), 0);
    ck_assert_int_gt(outside(observed_value(&seen, "cc"), -0.5f, INFINITY), 0);
    ck_assert_int_gt(outside(sg_rt_output(rt[0], 4), 0, INFINITY), 0);
    const sg_rt_value *ya = sg_rt_output(rt[0], 0), *ca_seen = observed_value(&seen, "ca");
    int64_t nans = 0;
    for (int64_t i = 0; i < ya->numel; i++) {
        float c = ((const float *)ca_seen->data)[i], want = c < -0.5f ? -0.5f : c;
        want = want > 0.75f ? 0.75f : want;
        float got = ((const float *)ya->data)[i];
        nans += isnan(got);
        ck_assert_msg((isnan(got) && isnan(c)) || got == want, "y[%lld] = %.9g, want %.9g",
                      (long long)i, got, want);
    }
    ck_assert_int_gt(nans, 0);
    for (int i = 0; i < seen.n; i++)
        sg_rt_value_unref(seen.v[i]);
    for (int i = 0; i < seen_out.n; i++)
        sg_rt_value_unref(seen_out.v[i]);
    for (int r = 0; r < 3; r++)
        sg_rt_free(rt[r]);
    sg_rt_value_unref(xv);
    sg_model_free(m);
}
END_TEST

/* ------------------------------------------------- numpy kernel cases */

static char *cases_dir;

static void make_cases(void)
{
    if (cases_dir)
        return;
    cases_dir = test_tmpdir("rtcases");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", test_src_path("tests/runtime_cases.py"),
             cases_dir);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

static void compare_arrays(const char *what, const sg_rt_value *got, const struct sg_array *want)
{
    ck_assert_msg(got->kind == SG_RT_TENSOR && got->dtype == want->dtype &&
                      got->rank == want->rank &&
                      !memcmp(got->dims, want->dims, got->rank * sizeof got->dims[0]),
                  "%s: got %s, want %s%lld-d", what, sg_rt_value_format(got, (char[256]){0}, 256),
                  sg_dtype_name(want->dtype), (long long)want->rank);
    sg_rt_value *w;
    struct sg_diag d = {0};
    ck_assert_ok(sg_rt_tensor_create(want->dtype, want->dims, want->rank, &w, &d), &d);
    memcpy(w->data, want->data, want->nbytes);
    for (int64_t i = 0; i < got->numel; i++)
        assert_close(what, i, sg_rt_get_f64(got, i), sg_rt_get_f64(w, i));
    sg_rt_value_unref(w);
}

START_TEST(test_numpy_cases)
{
    make_cases();
    char path[1024];
    snprintf(path, sizeof path, "%s/cases.txt", cases_dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char name[128];
    int n_in, n_out, count = 0;
    while (fscanf(f, "%127s %d %d", name, &n_in, &n_out) == 3) {
        struct sg_diag d = {0};
        sg_model *m = NULL;
        snprintf(path, sizeof path, "%s/%s.onnx", cases_dir, name);
        ck_assert_ok(sg_model_load(path, NULL, &m, &d), &d);
        sg_rt *rt;
        ck_assert_ok(sg_rt_create(m, NULL, &rt, &d), &d);
        for (int i = 0; i < n_in; i++) {
            struct sg_array a;
            snprintf(path, sizeof path, "%s/%s.in%d.npy", cases_dir, name, i);
            ck_assert_ok(sg_npy_read(path, &a, &d), &d);
            sg_rt_value *v;
            ck_assert_ok(sg_rt_tensor_from_array(&a, &v, &d), &d);
            ck_assert_ok(sg_rt_set_input(rt, m->graph->inputs[i]->name, v, &d), &d);
            sg_rt_value_unref(v);
        }
        ck_assert_ok(sg_rt_run(rt, &d), &d);
        for (int i = 0; i < n_out; i++) {
            struct sg_array want;
            snprintf(path, sizeof path, "%s/%s.out%d.npy", cases_dir, name, i);
            ck_assert_ok(sg_npy_read(path, &want, &d), &d);
            char what[200];
            snprintf(what, sizeof what, "%s output %d", name, i);
            compare_arrays(what, sg_rt_output(rt, (uint32_t)i), &want);
            sg_array_free(&want);
        }
        sg_rt_free(rt);
        sg_model_free(m);
        count++;
    }
    fclose(f);
    ck_assert_int_ge(count, 20);
}
END_TEST

static void free_cases(void)
{
    sg_free(cases_dir);
    cases_dir = NULL;
}

/* No op version is registered twice for the same dtype: the lookup would
 * silently take whichever family comes first. */
START_TEST(test_no_duplicate_kernels)
{
    for (size_t a = 0; a < sg_kernel_n_families; a++) {
        const struct sg_kernel_family *fa = sg_kernel_families[a];
        for (size_t i = 0; i < fa->count; i++) {
            const struct sg_kernel *x = &fa->kernels[i];
            for (size_t b = a; b < sg_kernel_n_families; b++) {
                const struct sg_kernel_family *fb = sg_kernel_families[b];
                for (size_t j = b == a ? i + 1 : 0; j < fb->count; j++) {
                    const struct sg_kernel *y = &fb->kernels[j];
                    bool same = strcmp(x->domain, y->domain) == 0 &&
                                strcmp(x->op_type, y->op_type) == 0 &&
                                x->since_version == y->since_version && (x->types & y->types);
                    ck_assert_msg(!same, "%s v%d is registered in family '%s' and in '%s'",
                                  x->op_type, x->since_version, fa->name, fb->name);
                }
            }
        }
    }
}
END_TEST

Suite *suite_runtime(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("executor");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_no_duplicate_kernels);
    tcase_add_test(tc, test_broadcast_add);
    tcase_add_test(tc, test_broadcast_mismatch_names_node);
    tcase_add_test(tc, test_toposort_shuffled);
    tcase_add_test(tc, test_release_after_last_use);
    tcase_add_test(tc, test_block_pool);
    tcase_add_test(tc, test_inplace_outputs);
    tcase_add_test(tc, test_vmath_accuracy);
    tcase_add_test(tc, test_missing_kernels_listed);
    tcase_add_test(tc, test_missing_kernels_dtypes_flowing);
    tcase_add_test(tc, test_input_checks);
    tcase_add_test(tc, test_kernel_inputs_fit);
    tcase_add_test(tc, test_required_inputs_checked);
    tcase_add_test(tc, test_numerics_modes);
    tcase_add_test(tc, test_random_deterministic);
    tcase_add_test(tc, test_run_node);
    tcase_add_test(tc, test_max_tensor_bytes);
    tcase_add_test(tc, test_loop_limits);
    tcase_add_test(tc, test_alloc_failures);
    tcase_add_test(tc, test_dump_all);
    tcase_add_test(tc, test_dump_write_failure);
    tcase_add_test(tc, test_conv_clamp_fusion);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("kernels");
    tcase_set_timeout(tk, 120);
    tcase_add_unchecked_fixture(tk, NULL, free_cases);
    tcase_add_test(tk, test_numpy_cases);
    suite_add_tcase(s, tk);
    suite_add_tcase(s, tcase_blas());
    return s;
}
