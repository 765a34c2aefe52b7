/*
 * check_kernels_nn.c - the convolution, pooling, normalisation and sampling
 * kernels (runtime/kernels/{conv,pool,norm,space}.c) on cases the ONNX
 * backend tests miss: every result is checked against a naive loop written
 * here from the ONNX definition (not against another kernel), for float32,
 * float64 and float16, plus the errors a bad shape gives.
 */
#include "testutil.h"
#include "sg_kernel.h"
#include "sg_runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- harness */

#define MAXIO 6

/* A model of one node `op` (named "nn") at `opset`, reading graph inputs
 * in0.. of the given values' dtypes and shapes, writing n_out outputs. */
struct one {
    sg_model *m;
    sg_node *n;
    sg_rt_value *in[MAXIO];
    uint32_t n_in, n_out;
    sg_rt_value *out[MAXIO];
    struct sg_diag d;
};

static void one_init(struct one *o, const char *op, int64_t opset, uint32_t n_in, uint32_t n_out)
{
    memset(o, 0, sizeof *o);
    o->m = sg_model_create();
    o->n_in = n_in;
    o->n_out = n_out;
    ck_assert_ok(sg_model_set_opset(o->m, "", opset), &o->d);
    o->n = sg_node_create(o->m->graph, op, NULL, "nn", &o->d);
    ck_assert_ptr_nonnull(o->n);
}

/* Declare input i (after o->in[i] is set). */
static void one_input(struct one *o, uint32_t i)
{
    char name[16];
    snprintf(name, sizeof name, "in%u", i);
    sg_value *v = NULL;
    const sg_rt_value *t = o->in[i];
    ck_assert_ok(sg_graph_add_value(o->m->graph, name,
                                    sg_type_tensor(o->m, t->dtype, t->dims, (int)t->rank), &v,
                                    &o->d),
                 &o->d);
    ck_assert_ok(sg_graph_add_input(o->m->graph, v), &o->d);
    ck_assert_ok(sg_node_set_input(o->n, i, v), &o->d);
}

/* Declare the inputs and outputs, run, keep the outputs; returns the run's
 * status (the diagnostic stays in o->d). */
static sg_status one_run(struct one *o)
{
    for (uint32_t i = 0; i < o->n_in; i++)
        if (o->in[i])
            one_input(o, i);
    for (uint32_t i = 0; i < o->n_out; i++) {
        char name[16];
        snprintf(name, sizeof name, "out%u", i);
        sg_value *v = NULL;
        ck_assert_ok(sg_graph_add_value(o->m->graph, name, NULL, &v, &o->d), &o->d);
        ck_assert_ok(sg_node_set_output(o->n, i, v), &o->d);
        ck_assert_ok(sg_graph_add_output(o->m->graph, v), &o->d);
    }
    sg_rt *rt;
    sg_status st = sg_rt_create(o->m, NULL, &rt, &o->d);
    if (st)
        return st;
    for (uint32_t i = 0; i < o->n_in && !st; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%u", i);
        if (o->in[i])
            st = sg_rt_set_input(rt, name, o->in[i], &o->d);
    }
    if (!st)
        st = sg_rt_run(rt, &o->d);
    for (uint32_t i = 0; i < o->n_out && !st; i++)
        o->out[i] = sg_rt_value_ref(sg_rt_output(rt, i));
    sg_rt_free(rt);
    return st;
}

static void one_free(struct one *o)
{
    for (uint32_t i = 0; i < MAXIO; i++) {
        sg_rt_value_unref(o->in[i]);
        sg_rt_value_unref(o->out[i]);
    }
    sg_model_free(o->m);
}

/* A tensor of dtype with deterministic pseudo-random values in [-1, 1). */
static sg_rt_value *rnd(int32_t dt, const int64_t *dims, uint32_t rank, uint32_t seed)
{
    sg_rt_value *v;
    struct sg_diag d = {0};
    ck_assert_ok(sg_rt_tensor_create(dt, dims, rank, &v, &d), &d);
    uint32_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < v->numel; i++) {
        s = s * 1664525u + 1013904223u;
        double x = (double)(s >> 8) / 8388608.0 - 1.0;
        sg_rt_set_f64(v, i, x);
    }
    return v;
}

/* |got - want| <= atol + rtol * |want| everywhere, with the first
 * difference printed. */
static void check_close(const char *what, const sg_rt_value *got, const double *want, int64_t n,
                        double atol, double rtol)
{
    ck_assert_msg(got->numel == n, "%s: %lld elements, want %lld", what, (long long)got->numel,
                  (long long)n);
    for (int64_t i = 0; i < n; i++) {
        double g = sg_rt_get_f64(got, i);
        ck_assert_msg(fabs(g - want[i]) <= atol + rtol * fabs(want[i]),
                      "%s[%lld]: got %.9g, want %.9g", what, (long long)i, g, want[i]);
    }
}

static void check_dims(const char *what, const sg_rt_value *v, const int64_t *dims, uint32_t rank)
{
    ck_assert_msg(v->rank == rank && memcmp(v->dims, dims, rank * sizeof dims[0]) == 0,
                  "%s: got shape %s", what, sg_rt_value_format(v, (char[128]){0}, 128));
}

/* Tolerances for a dtype: float16 keeps 11 bits; float32 sums of a few
 * thousand terms of either sign lose about 1e-5 absolute. */
static double tol_of(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT16 ? 4e-3 : dt == SG_DTYPE_FLOAT ? 1e-4 : 1e-11;
}

static bool next_idx(int64_t *idx, const int64_t *dims, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

/* ------------------------------------------------------------- Conv */

struct conv_case {
    int nsp;
    int64_t N, C, M, group;
    int64_t in[3], k[3], s[3], d[3], p0[3], p1[3];
    bool bias;
    const char *auto_pad; /* NULL: explicit pads */
};

static const struct conv_case conv_cases[] = {
    /* grouped, strided, dilated, asymmetric pads */
    {2, 2, 6, 4, 2, {7, 6}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}, true, NULL},
    /* depthwise 3x3 stride 2 (MobileNet) */
    {2, 1, 4, 4, 4, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
    /* depthwise with a channel multiplier, dilated */
    {2, 1, 3, 6, 3, {7, 7}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, NULL},
    /* depthwise, 5x3 kernel, unequal strides and dilations, odd pads */
    {2, 2, 3, 3, 3, {11, 13}, {5, 3}, {2, 3}, {1, 2}, {2, 0}, {1, 3}, true, NULL},
    /* depthwise 3x3 on a 2x2 input: padding everywhere */
    {2, 1, 2, 2, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
    /* pointwise: a plain GEMM */
    {2, 2, 5, 3, 1, {4, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, NULL},
    /* pointwise through gemm_nchw.c: 8-row tiles plus 5 rows, 48-column
     * tiles plus a 3-column one */
    {2, 1, 37, 21, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, NULL},
    /* ... and with K = 600: column blocks of 144 (two and a partial one) */
    {2, 1, 600, 10, 1, {20, 20}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, NULL},
    /* 1x1 stride 2 (ResNet downsample) */
    {2, 1, 4, 6, 1, {7, 7}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, false, NULL},
    /* depthwise on small planes with channels in the vector lanes: 16-wide
     * blocks plus a remainder, 8x8 transposes plus edges */
    {2, 1, 40, 40, 40, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
    {2, 2, 35, 35, 35, {9, 11}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}, false, NULL},
    {2, 1, 24, 24, 24, {8, 8}, {3, 3}, {1, 2}, {2, 1}, {2, 1}, {1, 0}, true, NULL},
    /* ... and a 9x9 kernel: more than 64 taps per output, summed in two runs */
    {2, 1, 17, 17, 17, {10, 10}, {9, 9}, {1, 1}, {1, 1}, {4, 4}, {4, 4}, true, NULL},
    /* 1-D depthwise, dilated, strided */
    {1, 2, 3, 3, 3, {10}, {3}, {2}, {2}, {1}, {2}, true, NULL},
    /* 3-D grouped */
    {3, 1, 4, 4, 2, {5, 4, 6}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 1}, {0, 1, 1}, true, NULL},
    /* auto_pad SAME_LOWER with stride: odd total padding goes first */
    {2, 1, 2, 3, 1, {6, 5}, {4, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true, "SAME_LOWER"},
    /* auto_pad SAME_UPPER */
    {2, 1, 2, 2, 1, {5, 5}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false, "SAME_UPPER"},
    /* more than 32 MB of im2col columns: the output is done in chunks */
    {2, 1, 233, 2, 1, {72, 72}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, false, NULL},
    {3,
     1,
     20,
     2,
     1,
     {16, 16, 24},
     {6, 6, 6},
     {1, 1, 1},
     {1, 1, 1},
     {2, 3, 2},
     {3, 2, 3},
     false,
     NULL},
    /* the kernel covers the whole input */
    {2, 1, 3, 2, 1, {4, 4}, {4, 4}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, NULL},
};

/* Output dims and pads of a conv case, from the ONNX formulas. */
static void conv_geometry(const struct conv_case *c, int64_t *p0, int64_t *p1, int64_t *out)
{
    for (int i = 0; i < c->nsp; i++) {
        int64_t ek = (c->k[i] - 1) * c->d[i] + 1;
        p0[i] = c->p0[i];
        p1[i] = c->p1[i];
        if (c->auto_pad) {
            int64_t o = (c->in[i] + c->s[i] - 1) / c->s[i];
            int64_t total = (o - 1) * c->s[i] + ek - c->in[i];
            total = total < 0 ? 0 : total;
            bool upper = strcmp(c->auto_pad, "SAME_UPPER") == 0;
            p0[i] = upper ? total / 2 : total - total / 2;
            p1[i] = total - p0[i];
        }
        out[i] = (c->in[i] + p0[i] + p1[i] - ek) / c->s[i] + 1;
    }
}

/* The naive convolution: every output, every input channel of its group,
 * every kernel position. */
static double *conv_naive(const struct conv_case *c, const sg_rt_value *X, const sg_rt_value *W,
                          const sg_rt_value *B, int64_t *n_out)
{
    int64_t p0[3], p1[3], out[3], osz = 1, isz = 1, ksz = 1;
    conv_geometry(c, p0, p1, out);
    for (int i = 0; i < c->nsp; i++) {
        osz *= out[i];
        isz *= c->in[i];
        ksz *= c->k[i];
    }
    int64_t Cg = c->C / c->group, Mg = c->M / c->group;
    *n_out = c->N * c->M * osz;
    double *y = calloc((size_t)*n_out, sizeof *y);
    double *xv = malloc((size_t)X->numel * sizeof *xv), *wv = malloc((size_t)W->numel * sizeof *wv);
    for (int64_t i = 0; i < X->numel; i++)
        xv[i] = sg_rt_get_f64(X, i);
    for (int64_t i = 0; i < W->numel; i++)
        wv[i] = sg_rt_get_f64(W, i);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++) {
            int64_t o[3] = {0}, oi = 0;
            do {
                double acc = B ? sg_rt_get_f64(B, m) : 0;
                for (int64_t ci = 0; ci < Cg; ci++) {
                    int64_t kp[3] = {0}, ki = 0;
                    do {
                        int64_t ii = 0;
                        bool ok = true;
                        for (int d = 0; d < c->nsp; d++) {
                            int64_t x = o[d] * c->s[d] - p0[d] + kp[d] * c->d[d];
                            ok = ok && x >= 0 && x < c->in[d];
                            ii = ii * c->in[d] + x;
                        }
                        if (ok)
                            acc += xv[(n * c->C + (m / Mg) * Cg + ci) * isz + ii] *
                                   wv[(m * Cg + ci) * ksz + ki];
                        ki++;
                    } while (next_idx(kp, c->k, c->nsp));
                }
                y[(n * c->M + m) * osz + oi++] = acc;
            } while (next_idx(o, out, c->nsp));
        }
    free(xv);
    free(wv);
    return y;
}

static const int32_t float_types[] = {SG_DTYPE_FLOAT, SG_DTYPE_DOUBLE, SG_DTYPE_FLOAT16};

START_TEST(test_conv_against_naive)
{
    for (size_t ci = 0; ci < sizeof conv_cases / sizeof conv_cases[0]; ci++)
        for (size_t ti = 0; ti < 3; ti++) {
            const struct conv_case *c = &conv_cases[ci];
            int32_t dt = float_types[ti];
            struct one o;
            one_init(&o, "Conv", 11, c->bias ? 3 : 2, 1);
            int64_t xd[5] = {c->N, c->C}, wd[5] = {c->M, c->C / c->group}, bd[1] = {c->M};
            for (int i = 0; i < c->nsp; i++) {
                xd[i + 2] = c->in[i];
                wd[i + 2] = c->k[i];
            }
            uint32_t r = (uint32_t)c->nsp + 2;
            o.in[0] = rnd(dt, xd, r, 1 + (uint32_t)ci);
            o.in[1] = rnd(dt, wd, r, 100 + (uint32_t)ci);
            if (c->bias)
                o.in[2] = rnd(dt, bd, 1, 200 + (uint32_t)ci);
            sg_node_set_attr_int(o.n, "group", c->group);
            sg_node_set_attr_ints(o.n, "strides", c->s, (size_t)c->nsp);
            sg_node_set_attr_ints(o.n, "dilations", c->d, (size_t)c->nsp);
            if (c->auto_pad) {
                sg_node_set_attr_string(o.n, "auto_pad", c->auto_pad);
            } else {
                int64_t pads[6];
                for (int i = 0; i < c->nsp; i++) {
                    pads[i] = c->p0[i];
                    pads[i + c->nsp] = c->p1[i];
                }
                sg_node_set_attr_ints(o.n, "pads", pads, (size_t)(2 * c->nsp));
            }
            ck_assert_ok(one_run(&o), &o.d);
            int64_t n, p0[3], p1[3], out[3], yd[5] = {c->N, c->M};
            double *want = conv_naive(c, o.in[0], o.in[1], o.in[2], &n);
            conv_geometry(c, p0, p1, out);
            for (int i = 0; i < c->nsp; i++)
                yd[i + 2] = out[i];
            char what[64];
            snprintf(what, sizeof what, "conv case %zu %s", ci, sg_dtype_name(dt));
            check_dims(what, o.out[0], yd, r);
            check_close(what, o.out[0], want, n, tol_of(dt), tol_of(dt));
            free(want);
            one_free(&o);
        }
}
END_TEST

START_TEST(test_conv_bad_shapes_name_node_and_shapes)
{
    static const struct {
        int64_t x[4], w[4];
        int64_t b;
        int64_t group;
        const char *want[3];
    } bad[] = {
        {{1, 3, 5, 5}, {2, 4, 3, 3}, 0, 1, {"float32[1,3,5,5]", "float32[2,4,3,3]", NULL}},
        {{1, 4, 5, 5}, {3, 2, 3, 3}, 0, 2, {"float32[1,4,5,5]", "float32[3,2,3,3]", NULL}},
        {{1, 3, 5, 5}, {2, 3, 3, 3}, 3, 1, {"float32[3]", "float32[2,3,3,3]", NULL}},
        {{1, 3, 2, 2}, {2, 3, 3, 3}, 0, 1, {"window of 3", "axis 0", NULL}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct one o;
        one_init(&o, "Conv", 11, bad[i].b ? 3 : 2, 1);
        o.in[0] = rnd(SG_DTYPE_FLOAT, bad[i].x, 4, 1);
        o.in[1] = rnd(SG_DTYPE_FLOAT, bad[i].w, 4, 2);
        if (bad[i].b)
            o.in[2] = rnd(SG_DTYPE_FLOAT, &bad[i].b, 1, 3);
        sg_node_set_attr_int(o.n, "group", bad[i].group);
        sg_status st = one_run(&o);
        ck_assert_int_ne(st, SG_OK);
        ck_assert_msg(strstr(o.d.msg, "node 'nn' (Conv"), "no node in: %s", o.d.msg);
        for (int j = 0; bad[i].want[j]; j++)
            ck_assert_msg(strstr(o.d.msg, bad[i].want[j]), "case %zu: no '%s' in: %s", i,
                          bad[i].want[j], o.d.msg);
        one_free(&o);
    }
}
END_TEST

/* ---------------------------------------------------- ConvTranspose */

struct convt_case {
    int nsp;
    int64_t N, C, M, group; /* M: output channels */
    int64_t in[3], k[3], s[3], d[3], p0[3], p1[3], op[3];
    bool bias;
};

static const struct convt_case convt_cases[] = {
    {2, 2, 4, 6, 2, {3, 4}, {3, 2}, {2, 3}, {1, 2}, {1, 0}, {0, 2}, {1, 1}, true},
    {1, 1, 3, 2, 1, {5}, {4}, {3}, {1}, {2}, {1}, {2}, false},
    /* more than 32 MB of columns: chunks */
    {2, 1, 1, 233, 1, {72, 72}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, {0, 0}, true},
    {3,
     1,
     2,
     2,
     2,
     {2, 3, 2},
     {2, 2, 3},
     {2, 1, 2},
     {1, 2, 1},
     {0, 1, 1},
     {1, 0, 0},
     {0, 0, 1},
     true},
};

START_TEST(test_conv_transpose_against_naive)
{
    for (size_t ci = 0; ci < sizeof convt_cases / sizeof convt_cases[0]; ci++)
        for (size_t ti = 0; ti < 2; ti++) {
            const struct convt_case *c = &convt_cases[ci];
            int32_t dt = float_types[ti];
            struct one o;
            one_init(&o, "ConvTranspose", 11, c->bias ? 3 : 2, 1);
            int64_t Mg = c->M / c->group, Cg = c->C / c->group;
            int64_t xd[5] = {c->N, c->C}, wd[5] = {c->C, Mg}, bd[1] = {c->M}, yd[5] = {c->N, c->M};
            int64_t pads[6], isz = 1, ksz = 1, osz = 1;
            for (int i = 0; i < c->nsp; i++) {
                xd[i + 2] = c->in[i];
                wd[i + 2] = c->k[i];
                yd[i + 2] = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1 -
                            c->p0[i] - c->p1[i];
                pads[i] = c->p0[i];
                pads[i + c->nsp] = c->p1[i];
                isz *= c->in[i];
                ksz *= c->k[i];
                osz *= yd[i + 2];
            }
            uint32_t r = (uint32_t)c->nsp + 2;
            o.in[0] = rnd(dt, xd, r, 7 + (uint32_t)ci);
            o.in[1] = rnd(dt, wd, r, 70 + (uint32_t)ci);
            if (c->bias)
                o.in[2] = rnd(dt, bd, 1, 700 + (uint32_t)ci);
            sg_node_set_attr_int(o.n, "group", c->group);
            sg_node_set_attr_ints(o.n, "strides", c->s, (size_t)c->nsp);
            sg_node_set_attr_ints(o.n, "dilations", c->d, (size_t)c->nsp);
            sg_node_set_attr_ints(o.n, "pads", pads, (size_t)(2 * c->nsp));
            sg_node_set_attr_ints(o.n, "output_padding", c->op, (size_t)c->nsp);
            ck_assert_ok(one_run(&o), &o.d);
            /* Naive: scatter every input element through every weight. */
            double *xv = malloc((size_t)o.in[0]->numel * sizeof *xv);
            double *wv = malloc((size_t)o.in[1]->numel * sizeof *wv);
            for (int64_t i = 0; i < o.in[0]->numel; i++)
                xv[i] = sg_rt_get_f64(o.in[0], i);
            for (int64_t i = 0; i < o.in[1]->numel; i++)
                wv[i] = sg_rt_get_f64(o.in[1], i);
            int64_t n_out = c->N * c->M * osz;
            double *want = calloc((size_t)n_out, sizeof *want);
            for (int64_t n = 0; n < c->N; n++)
                for (int64_t m = 0; m < c->M; m++)
                    for (int64_t i = 0; i < osz; i++)
                        want[(n * c->M + m) * osz + i] = c->bias ? sg_rt_get_f64(o.in[2], m) : 0;
            for (int64_t n = 0; n < c->N; n++)
                for (int64_t ch = 0; ch < c->C; ch++)
                    for (int64_t mo = 0; mo < Mg; mo++) {
                        int64_t xi[3] = {0}, ii = 0;
                        do {
                            int64_t kp[3] = {0}, ki = 0;
                            do {
                                int64_t oi = 0;
                                bool ok = true;
                                for (int d = 0; d < c->nsp; d++) {
                                    int64_t y = xi[d] * c->s[d] - c->p0[d] + kp[d] * c->d[d];
                                    ok = ok && y >= 0 && y < yd[d + 2];
                                    oi = oi * yd[d + 2] + y;
                                }
                                int64_t m = (ch / Cg) * Mg + mo;
                                if (ok)
                                    want[(n * c->M + m) * osz + oi] +=
                                        xv[(n * c->C + ch) * isz + ii] *
                                        wv[(ch * Mg + mo) * ksz + ki];
                                ki++;
                            } while (next_idx(kp, c->k, c->nsp));
                            ii++;
                        } while (next_idx(xi, c->in, c->nsp));
                    }
            char what[64];
            snprintf(what, sizeof what, "convtranspose case %zu %s", ci, sg_dtype_name(dt));
            check_dims(what, o.out[0], yd, r);
            check_close(what, o.out[0], want, n_out, tol_of(dt), tol_of(dt));
            free(xv);
            free(wv);
            free(want);
            one_free(&o);
        }
}
END_TEST

/* ------------------------------------------------------------ Col2Im */

START_TEST(test_col2im_against_naive)
{
    /* image 5x6, blocks 2x3, strides 1x2, dilations 2x1, pads (1,0)/(0,1) */
    int64_t img[2] = {5, 6}, blk[2] = {2, 3}, s[2] = {1, 2}, dl[2] = {2, 1};
    int64_t pads[4] = {1, 0, 0, 1}, C = 2, N = 2, nb[2], L = 1;
    for (int i = 0; i < 2; i++) {
        nb[i] = (img[i] + pads[i] + pads[i + 2] - ((blk[i] - 1) * dl[i] + 1)) / s[i] + 1;
        L *= nb[i];
    }
    struct one o;
    one_init(&o, "Col2Im", 18, 3, 1);
    int64_t xd[3] = {N, C * blk[0] * blk[1], L}, two = 2;
    o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 3, 5);
    struct sg_diag d = {0};
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_INT64, &two, 1, &o.in[1], &d), &d);
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_INT64, &two, 1, &o.in[2], &d), &d);
    memcpy(o.in[1]->data, img, sizeof img);
    memcpy(o.in[2]->data, blk, sizeof blk);
    sg_node_set_attr_ints(o.n, "strides", s, 2);
    sg_node_set_attr_ints(o.n, "dilations", dl, 2);
    sg_node_set_attr_ints(o.n, "pads", pads, 4);
    ck_assert_ok(one_run(&o), &o.d);
    double want[2 * 2 * 5 * 6] = {0};
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t kh = 0; kh < blk[0]; kh++)
                for (int64_t kw = 0; kw < blk[1]; kw++)
                    for (int64_t bh = 0; bh < nb[0]; bh++)
                        for (int64_t bw = 0; bw < nb[1]; bw++) {
                            int64_t h = bh * s[0] - pads[0] + kh * dl[0];
                            int64_t w = bw * s[1] - pads[1] + kw * dl[1];
                            if (h < 0 || h >= img[0] || w < 0 || w >= img[1])
                                continue;
                            int64_t row = (c * blk[0] + kh) * blk[1] + kw;
                            want[((n * C + c) * img[0] + h) * img[1] + w] +=
                                sg_rt_get_f64(o.in[0], (n * xd[1] + row) * L + bh * nb[1] + bw);
                        }
    int64_t yd[4] = {N, C, 5, 6};
    check_dims("col2im", o.out[0], yd, 4);
    check_close("col2im", o.out[0], want, 120, 1e-6, 1e-5);
    one_free(&o);
}
END_TEST

/* ---------------------------------------------------------- pooling */

START_TEST(test_lp_pool_against_naive)
{
    int64_t xd[4] = {2, 3, 6, 5}, k[2] = {3, 2}, s[2] = {2, 2}, pads[4] = {1, 0, 1, 1};
    int64_t out[2] = {(6 + 2 - 3) / 2 + 1, (5 + 1 - 2) / 2 + 1};
    for (int global = 0; global < 2; global++) {
        struct one o;
        one_init(&o, global ? "GlobalLpPool" : "LpPool", 11, 1, 1);
        o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 4, 9);
        sg_node_set_attr_int(o.n, "p", 3);
        if (!global) {
            sg_node_set_attr_ints(o.n, "kernel_shape", k, 2);
            sg_node_set_attr_ints(o.n, "strides", s, 2);
            sg_node_set_attr_ints(o.n, "pads", pads, 4);
        }
        ck_assert_ok(one_run(&o), &o.d);
        int64_t oh = global ? 1 : out[0], ow = global ? 1 : out[1];
        double want[2 * 3 * 3 * 3];
        for (int64_t pl = 0; pl < 6; pl++)
            for (int64_t y = 0; y < oh; y++)
                for (int64_t x = 0; x < ow; x++) {
                    double acc = 0;
                    for (int64_t i = 0; i < 6; i++)
                        for (int64_t j = 0; j < 5; j++) {
                            bool in = global || (i >= y * 2 - 1 && i < y * 2 - 1 + 3 &&
                                                 j >= x * 2 && j < x * 2 + 2);
                            if (in)
                                acc += pow(fabs(sg_rt_get_f64(o.in[0], pl * 30 + i * 5 + j)), 3);
                        }
                    want[(pl * oh + y) * ow + x] = cbrt(acc);
                }
        int64_t yd[4] = {2, 3, oh, ow};
        check_dims("lppool", o.out[0], yd, 4);
        check_close(global ? "globallppool" : "lppool", o.out[0], want, 6 * oh * ow, 1e-5, 1e-5);
        one_free(&o);
    }
}
END_TEST

START_TEST(test_pool_ceil_mode_and_count_include_pad)
{
    /* AveragePool 5x5, kernel 3, stride 2, pads 1, ceil: windows start at
     * -1, 1, 3 and the last one runs past the end padding (5 + 1): it
     * counts only up to the padded edge. */
    struct one o;
    one_init(&o, "AveragePool", 11, 1, 1);
    int64_t xd[4] = {1, 1, 5, 5}, k[2] = {3, 3}, s[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 4, 11);
    sg_node_set_attr_ints(o.n, "kernel_shape", k, 2);
    sg_node_set_attr_ints(o.n, "strides", s, 2);
    sg_node_set_attr_ints(o.n, "pads", pads, 4);
    sg_node_set_attr_int(o.n, "ceil_mode", 1);
    sg_node_set_attr_int(o.n, "count_include_pad", 1);
    ck_assert_ok(one_run(&o), &o.d);
    double want[9];
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 3; x++) {
            double acc = 0;
            int cnt = 0;
            for (int i = y * 2 - 1; i < y * 2 + 2; i++)
                for (int j = x * 2 - 1; j < x * 2 + 2; j++) {
                    if (i > 5 || j > 5) /* beyond the end padding */
                        continue;
                    cnt++;
                    if (i >= 0 && i < 5 && j >= 0 && j < 5)
                        acc += sg_rt_get_f64(o.in[0], i * 5 + j);
                }
            want[y * 3 + x] = acc / cnt;
        }
    int64_t yd[4] = {1, 1, 3, 3};
    check_dims("avgpool ceil", o.out[0], yd, 4);
    check_close("avgpool ceil", o.out[0], want, 9, 1e-6, 1e-5);
    one_free(&o);

    /* MaxPool 1-D of 5, kernel 2, stride 2, pads 1/1, ceil: a fourth window
     * would start at 5, in the end padding, and is dropped. */
    one_init(&o, "MaxPool", 12, 1, 1);
    int64_t x1[3] = {1, 1, 5}, k1 = 2, s1 = 2, p1[2] = {1, 1};
    o.in[0] = rnd(SG_DTYPE_FLOAT, x1, 3, 12);
    sg_node_set_attr_ints(o.n, "kernel_shape", &k1, 1);
    sg_node_set_attr_ints(o.n, "strides", &s1, 1);
    sg_node_set_attr_ints(o.n, "pads", p1, 2);
    sg_node_set_attr_int(o.n, "ceil_mode", 1);
    ck_assert_ok(one_run(&o), &o.d);
    const float *x = o.in[0]->data;
    double w3[3] = {x[0], fmax(x[1], x[2]), fmax(x[3], x[4])};
    int64_t y1[3] = {1, 1, 3};
    check_dims("maxpool ceil", o.out[0], y1, 3);
    check_close("maxpool ceil", o.out[0], w3, 3, 0, 0);
    one_free(&o);
}
END_TEST

START_TEST(test_avgpool_dilations_from_opset_19)
{
    /* 1-D of 7, kernel 2, dilation 2: y[i] = (x[i] + x[i + 2]) / 2. */
    struct one o;
    one_init(&o, "AveragePool", 19, 1, 1);
    int64_t xd[3] = {1, 1, 7}, k = 2, dl = 2;
    o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 3, 19);
    sg_node_set_attr_ints(o.n, "kernel_shape", &k, 1);
    sg_node_set_attr_ints(o.n, "dilations", &dl, 1);
    ck_assert_ok(one_run(&o), &o.d);
    const float *x = o.in[0]->data;
    double want[5];
    for (int i = 0; i < 5; i++)
        want[i] = ((double)x[i] + x[i + 2]) / 2;
    int64_t yd[3] = {1, 1, 5};
    check_dims("avgpool dilations", o.out[0], yd, 3);
    check_close("avgpool dilations", o.out[0], want, 5, 1e-6, 1e-6);
    one_free(&o);
}
END_TEST

START_TEST(test_maxpool_indices_column_major)
{
    struct one o;
    one_init(&o, "MaxPool", 12, 1, 2);
    int64_t xd[4] = {2, 2, 4, 5}, k[2] = {2, 3}, s[2] = {2, 1};
    o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 4, 13);
    sg_node_set_attr_ints(o.n, "kernel_shape", k, 2);
    sg_node_set_attr_ints(o.n, "strides", s, 2);
    sg_node_set_attr_int(o.n, "storage_order", 1);
    ck_assert_ok(one_run(&o), &o.d);
    double wv[4 * 2 * 3], wi[4 * 2 * 3];
    for (int pl = 0; pl < 4; pl++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) {
                double m = -INFINITY;
                int64_t at = 0;
                for (int i = y * 2; i < y * 2 + 2; i++)
                    for (int j = x; j < x + 3; j++) {
                        double v = sg_rt_get_f64(o.in[0], pl * 20 + i * 5 + j);
                        if (v > m) {
                            m = v;
                            at = pl * 20 + i + j * 4; /* column-major in the plane */
                        }
                    }
                wv[(pl * 2 + y) * 3 + x] = m;
                wi[(pl * 2 + y) * 3 + x] = (double)at;
            }
    check_close("maxpool values", o.out[0], wv, 24, 0, 0);
    ck_assert_int_eq(o.out[1]->dtype, SG_DTYPE_INT64);
    check_close("maxpool indices", o.out[1], wi, 24, 0, 0);
    one_free(&o);
}
END_TEST

START_TEST(test_max_roi_pool)
{
    /* One 1x1x4x6 image, two rois (batch, x1, y1, x2, y2) at scale 0.5. */
    struct one o;
    one_init(&o, "MaxRoiPool", 1, 2, 1);
    int64_t xd[4] = {1, 1, 4, 6}, rd[2] = {2, 5};
    o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 4, 14);
    o.in[1] = rnd(SG_DTYPE_FLOAT, rd, 2, 15);
    float rois[10] = {0, 0, 0, 10, 6, 0, 2.4f, 1.2f, 7, 5};
    memcpy(o.in[1]->data, rois, sizeof rois);
    int64_t ps[2] = {2, 2};
    sg_node_set_attr_ints(o.n, "pooled_shape", ps, 2);
    sg_node_set_attr_float(o.n, "spatial_scale", 0.5f);
    ck_assert_ok(one_run(&o), &o.d);
    /* roi 0: x 0..5, y 0..3 (6x4), bins of 3 columns and 2 rows; roi 1:
     * x round(1.2)=1..round(3.5)=4, y round(0.6)=1..round(2.5)=3. */
    static const int box[2][4] = {{0, 0, 5, 3}, {1, 1, 4, 3}};
    double want[8];
    for (int r = 0; r < 2; r++) {
        int x0 = box[r][0], y0 = box[r][1];
        double bw = (box[r][2] - x0 + 1) / 2.0, bh = (box[r][3] - y0 + 1) / 2.0;
        for (int ph = 0; ph < 2; ph++)
            for (int pw = 0; pw < 2; pw++) {
                int h0 = y0 + (int)floor(ph * bh), h1 = y0 + (int)ceil((ph + 1) * bh);
                int w0 = x0 + (int)floor(pw * bw), w1 = x0 + (int)ceil((pw + 1) * bw);
                double m = -INFINITY;
                for (int h = h0; h < h1 && h < 4; h++)
                    for (int w = w0; w < w1 && w < 6; w++)
                        m = fmax(m, sg_rt_get_f64(o.in[0], h * 6 + w));
                want[(r * 2 + ph) * 2 + pw] = m;
            }
    }
    check_close("maxroipool", o.out[0], want, 8, 0, 0);
    one_free(&o);
}
END_TEST

/* --------------------------------------------------- normalisations */

START_TEST(test_lp_normalization)
{
    for (int p = 1; p <= 2; p++) {
        struct one o;
        one_init(&o, "LpNormalization", 1, 1, 1);
        int64_t xd[3] = {2, 3, 4};
        o.in[0] = rnd(SG_DTYPE_DOUBLE, xd, 3, 16);
        for (int j = 0; j < 3; j++) /* a zero vector along axis 1 */
            ((double *)o.in[0]->data)[j * 4 + 1] = 0;
        sg_node_set_attr_int(o.n, "axis", 1);
        sg_node_set_attr_int(o.n, "p", p);
        ck_assert_ok(one_run(&o), &o.d);
        double want[24];
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 4; c++) {
                double nrm = 0;
                for (int j = 0; j < 3; j++) {
                    double v = sg_rt_get_f64(o.in[0], (a * 3 + j) * 4 + c);
                    nrm += p == 1 ? fabs(v) : v * v;
                }
                nrm = p == 2 ? sqrt(nrm) : nrm;
                for (int j = 0; j < 3; j++) {
                    int at = (a * 3 + j) * 4 + c;
                    want[at] = nrm ? sg_rt_get_f64(o.in[0], at) / nrm : 0;
                }
            }
        check_close("lpnorm", o.out[0], want, 24, 1e-12, 1e-12);
        one_free(&o);
    }
}
END_TEST

START_TEST(test_batchnorm_per_activation_and_training)
{
    /* Opset 7, spatial = 0: parameters per (channel, position). */
    struct one o;
    one_init(&o, "BatchNormalization", 7, 5, 1);
    int64_t xd[3] = {3, 2, 4}, pd[2] = {2, 4};
    o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 3, 17);
    for (uint32_t i = 1; i < 5; i++)
        o.in[i] = rnd(SG_DTYPE_FLOAT, pd, 2, 17 + i);
    for (int64_t i = 0; i < 8; i++) /* variances must be positive */
        ((float *)o.in[4]->data)[i] = 0.5f + fabsf(((float *)o.in[4]->data)[i]);
    sg_node_set_attr_int(o.n, "spatial", 0);
    ck_assert_ok(one_run(&o), &o.d);
    double want[24];
    for (int n = 0; n < 3; n++)
        for (int a = 0; a < 8; a++) {
            double v = sg_rt_get_f64(o.in[0], n * 8 + a);
            want[n * 8 + a] = (v - sg_rt_get_f64(o.in[3], a)) /
                                  sqrt(sg_rt_get_f64(o.in[4], a) + 1e-5) *
                                  sg_rt_get_f64(o.in[1], a) +
                              sg_rt_get_f64(o.in[2], a);
        }
    check_close("batchnorm spatial=0", o.out[0], want, 24, 1e-5, 1e-5);
    one_free(&o);

    /* Opset 15 training mode: batch statistics and running updates. */
    one_init(&o, "BatchNormalization", 15, 5, 3);
    int64_t cd = 2;
    o.in[0] = rnd(SG_DTYPE_DOUBLE, xd, 3, 23);
    for (uint32_t i = 1; i < 5; i++)
        o.in[i] = rnd(SG_DTYPE_DOUBLE, &cd, 1, 23 + i);
    for (int64_t i = 0; i < 2; i++)
        ((double *)o.in[4]->data)[i] = 0.5 + fabs(((double *)o.in[4]->data)[i]);
    sg_node_set_attr_int(o.n, "training_mode", 1);
    sg_node_set_attr_float(o.n, "momentum", 0.75f);
    ck_assert_ok(one_run(&o), &o.d);
    double y[24], rm[2], rv[2];
    for (int c = 0; c < 2; c++) {
        double m = 0, v = 0;
        for (int n = 0; n < 3; n++)
            for (int i = 0; i < 4; i++)
                m += sg_rt_get_f64(o.in[0], (n * 2 + c) * 4 + i) / 12;
        for (int n = 0; n < 3; n++)
            for (int i = 0; i < 4; i++)
                v += pow(sg_rt_get_f64(o.in[0], (n * 2 + c) * 4 + i) - m, 2) / 12;
        for (int n = 0; n < 3; n++)
            for (int i = 0; i < 4; i++) {
                int at = (n * 2 + c) * 4 + i;
                y[at] =
                    (sg_rt_get_f64(o.in[0], at) - m) / sqrt(v + 1e-5) * sg_rt_get_f64(o.in[1], c) +
                    sg_rt_get_f64(o.in[2], c);
            }
        rm[c] = sg_rt_get_f64(o.in[3], c) * 0.75 + m * 0.25;
        rv[c] = sg_rt_get_f64(o.in[4], c) * 0.75 + v * 0.25;
    }
    check_close("batchnorm training y", o.out[0], y, 24, 1e-9, 1e-9);
    check_close("batchnorm running_mean", o.out[1], rm, 2, 1e-9, 1e-9);
    check_close("batchnorm running_var", o.out[2], rv, 2, 1e-9, 1e-9);
    one_free(&o);
}
END_TEST

/* ------------------------------------------------------------ Dropout */

START_TEST(test_dropout_training_follows_numpy_seed)
{
    /* np.random.seed(0); np.random.uniform(0, 1, 6) gives 0.5488135,
     * 0.71518937, 0.60276338, 0.54488318, 0.4236548, 0.64589411: with
     * ratio 0.6 elements 1, 2 and 5 are kept, scaled by 2.5. */
    struct one o;
    one_init(&o, "Dropout", 13, 3, 2);
    int64_t xd[2] = {2, 3};
    struct sg_diag d = {0};
    o.in[0] = rnd(SG_DTYPE_FLOAT, xd, 2, 31);
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_FLOAT, NULL, 0, &o.in[1], &d), &d);
    ck_assert_ok(sg_rt_tensor_create(SG_DTYPE_BOOL, NULL, 0, &o.in[2], &d), &d);
    *(float *)o.in[1]->data = 0.6f;
    *(uint8_t *)o.in[2]->data = 1;
    sg_node_set_attr_int(o.n, "seed", 0);
    ck_assert_ok(one_run(&o), &o.d);
    static const bool keep[6] = {false, true, true, false, false, true};
    double y[6], mask[6];
    for (int i = 0; i < 6; i++) {
        y[i] = keep[i] ? (double)(((float *)o.in[0]->data)[i] * (float)(1 / (1 - 0.6f))) : 0;
        mask[i] = keep[i];
    }
    ck_assert_int_eq(o.out[1]->dtype, SG_DTYPE_BOOL);
    check_close("dropout y", o.out[0], y, 6, 1e-6, 1e-6);
    check_close("dropout mask", o.out[1], mask, 6, 0, 0);
    one_free(&o);
}
END_TEST

Suite *suite_kernels_nn(void)
{
    Suite *s = suite_create("kernels_nn");
    TCase *tc = tcase_create("conv");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_conv_against_naive);
    tcase_add_test(tc, test_conv_bad_shapes_name_node_and_shapes);
    tcase_add_test(tc, test_conv_transpose_against_naive);
    tcase_add_test(tc, test_col2im_against_naive);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("pool");
    tcase_add_test(tp, test_lp_pool_against_naive);
    tcase_add_test(tp, test_pool_ceil_mode_and_count_include_pad);
    tcase_add_test(tp, test_avgpool_dilations_from_opset_19);
    tcase_add_test(tp, test_maxpool_indices_column_major);
    tcase_add_test(tp, test_max_roi_pool);
    suite_add_tcase(s, tp);
    TCase *tn = tcase_create("norm");
    tcase_add_test(tn, test_lp_normalization);
    tcase_add_test(tn, test_batchnorm_per_activation_and_training);
    tcase_add_test(tn, test_dropout_training_follows_numpy_seed);
    suite_add_tcase(s, tn);
    return s;
}
