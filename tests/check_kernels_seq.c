/*
 * check_kernels_seq.c - kernels of runtime/kernels/ {rnn, resize, quantize,
 * ...} on cases the ONNX backend node tests miss: each runs a one-node
 * model on the runtime and compares with a naive reference written here
 * (plain loops in double, structured unlike the kernels), or checks the
 * error a bad input gives.
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- harness */

/* A model of one node `op` at `opset` with inputs i0.. and outputs o0..;
 * inputs whose bit is set in `omit` are left out (""). */
struct one {
    sg_model *m;
    sg_node *n;
    uint32_t n_in, n_out;
};

static struct one one_node(const char *op, int64_t opset, uint32_t n_in, uint32_t omit,
                           uint32_t n_out)
{
    struct one t = {sg_model_create(), NULL, n_in, n_out};
    struct sg_diag d = {0};
    ck_assert_ptr_nonnull(t.m);
    ck_assert_ok(sg_model_set_opset(t.m, "", opset), &d);
    sg_graph *g = t.m->graph;
    t.n = sg_node_create(g, op, NULL, "nd", &d);
    ck_assert_ptr_nonnull(t.n);
    for (uint32_t i = 0; i < n_in; i++) {
        if (omit & (1u << i)) {
            ck_assert_ok(sg_node_set_input(t.n, i, NULL), &d);
            continue;
        }
        char name[16];
        sg_value *v;
        snprintf(name, sizeof name, "i%u", i);
        ck_assert_ok(sg_graph_add_value(g, name, NULL, &v, &d), &d);
        ck_assert_ok(sg_graph_add_input(g, v), &d);
        ck_assert_ok(sg_node_set_input(t.n, i, v), &d);
    }
    for (uint32_t i = 0; i < n_out; i++) {
        char name[16];
        sg_value *v;
        snprintf(name, sizeof name, "o%u", i);
        ck_assert_ok(sg_graph_add_value(g, name, NULL, &v, &d), &d);
        ck_assert_ok(sg_node_set_output(t.n, i, v), &d);
        ck_assert_ok(sg_graph_add_output(g, v), &d);
    }
    return t;
}

/* A STRINGS attribute (the IR has no setter for lists of strings): made as
 * a STRING attribute and retyped, pointing at the caller's static array. */
static void set_attr_strings(struct one *t, const char *name, sg_bytes *v, size_t n)
{
    ck_assert_int_eq(sg_node_set_attr_string(t->n, name, ""), SG_OK);
    sg_attr *a = sg_node_attr(t->n, name);
    a->type = SG_ATTR_STRINGS;
    a->has_s = false;
    a->strings = v;
    a->n_strings = n;
}

/* Run t with ins[0..n_in) (NULL where omitted); outs[] receive a reference
 * each. Returns the status, with the message in d. */
static sg_status run_one(struct one *t, sg_rt_value *const *ins, sg_rt_value **outs,
                         struct sg_diag *d)
{
    sg_rt *rt = NULL;
    sg_status st = sg_rt_create(t->m, NULL, &rt, d);
    for (uint32_t i = 0; !st && i < t->n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "i%u", i);
        if (ins[i])
            st = sg_rt_set_input(rt, name, ins[i], d);
    }
    if (!st)
        st = sg_rt_run(rt, d);
    for (uint32_t i = 0; !st && i < t->n_out; i++)
        outs[i] = sg_rt_value_ref(sg_rt_output(rt, i));
    sg_rt_free(rt);
    return st;
}

static void one_free(struct one *t)
{
    sg_model_free(t->m);
}

static sg_rt_value *tensor(int32_t dtype, const int64_t *dims, uint32_t rank)
{
    sg_rt_value *v;
    struct sg_diag d = {0};
    ck_assert_ok(sg_rt_tensor_create(dtype, dims, rank, &v, &d), &d);
    return v;
}

/* Deterministic values in [lo, hi). */
static uint64_t rng_state = 1;
static double rnd(double lo, double hi)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static sg_rt_value *rand_tensor(int32_t dtype, const int64_t *dims, uint32_t rank, double lo,
                                double hi)
{
    sg_rt_value *v = tensor(dtype, dims, rank);
    for (int64_t i = 0; i < v->numel; i++)
        sg_rt_set_f64(v, i, rnd(lo, hi));
    return v;
}

/* Compare a tensor with want[] (row-major over `dims`), printing both
 * values of the first mismatch. */
static void ck_close(const sg_rt_value *got, const double *want, const int64_t *dims, uint32_t rank,
                     double atol, double rtol, const char *what)
{
    ck_assert_msg(got && got->kind == SG_RT_TENSOR, "%s: no tensor", what);
    ck_assert_msg(got->rank == rank, "%s: rank %u, want %u", what, got->rank, rank);
    for (uint32_t i = 0; i < rank; i++)
        ck_assert_msg(got->dims[i] == dims[i], "%s: dim %u is %lld, want %lld", what, i,
                      (long long)got->dims[i], (long long)dims[i]);
    for (int64_t i = 0; i < got->numel; i++) {
        double g = sg_rt_get_f64(got, i);
        ck_assert_msg(fabs(g - want[i]) <= atol + rtol * fabs(want[i]) ||
                          (isnan(g) && isnan(want[i])),
                      "%s[%lld]: got %.9g, want %.9g", what, (long long)i, g, want[i]);
    }
}

static void unref_all(sg_rt_value **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sg_rt_value_unref(v[i]);
}

/* ------------------------------------------------------ RNN, GRU, LSTM */

struct rcase {
    const char *op; /* RNN, GRU, LSTM */
    int64_t opset;
    int32_t dtype;
    int64_t S, B, I, H;
    const char *direction;
    int layout;
    bool bias, h0, c0, peep, lens;
    int lbr, input_forget;
    float clip; /* 0: none */
    const char *acts[6];
    float alpha[6], beta[6];
    int n_acts, n_alpha, n_beta;
};

static double ref_act(const char *name, double x, double al, double be)
{
    if (strcmp(name, "Tanh") == 0)
        return tanh(x);
    if (strcmp(name, "Sigmoid") == 0)
        return 1 / (1 + exp(-x));
    if (strcmp(name, "Relu") == 0)
        return x > 0 ? x : 0;
    if (strcmp(name, "LeakyRelu") == 0)
        return x >= 0 ? x : al * x;
    if (strcmp(name, "HardSigmoid") == 0)
        return fmin(1, fmax(0, al * x + be));
    if (strcmp(name, "ScaledTanh") == 0)
        return al * tanh(be * x);
    if (strcmp(name, "Affine") == 0)
        return al * x + be;
    if (strcmp(name, "Elu") == 0)
        return x >= 0 ? x : al * (exp(x) - 1);
    if (strcmp(name, "Softsign") == 0)
        return x / (1 + fabs(x));
    if (strcmp(name, "Softplus") == 0)
        return log(1 + exp(x));
    if (strcmp(name, "ThresholdedRelu") == 0)
        return x > al ? x : 0;
    ck_abort_msg("unknown activation %s", name);
    return 0;
}

struct ract {
    const char *name;
    double al, be;
};

/* The naive recurrence: one batch entry, one step, one gate element at a
 * time, straight from the ONNX equations. */
static void ref_rnn(const struct rcase *c, sg_rt_value *const *in, double *Y, double *Yh,
                    double *Yc)
{
    int nd = strcmp(c->direction, "bidirectional") == 0 ? 2 : 1;
    int G = c->op[0] == 'L' ? 4 : c->op[0] == 'G' ? 3 : 1;
    int nact = c->op[0] == 'L' ? 3 : c->op[0] == 'G' ? 2 : 1;
    int64_t S = c->S, B = c->B, I = c->I, H = c->H;
    struct ract acts[2][3];
    static const char *dflt[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    /* alpha/beta consumed in list order by the functions that take them */
    int ia = 0, ib = 0;
    for (int d = 0; d < nd; d++)
        for (int q = 0; q < nact; q++) {
            int idx = d * nact + q;
            const char *nm = c->n_acts ? c->acts[c->n_acts == nact ? q : idx] : dflt[nact - 1][q];
            acts[d][q].name = nm;
            double al = strcmp(nm, "LeakyRelu") == 0     ? 0.01
                        : strcmp(nm, "HardSigmoid") == 0 ? 0.2
                        : strcmp(nm, "Affine") == 0 || strcmp(nm, "ScaledTanh") == 0 ||
                                strcmp(nm, "Elu") == 0 || strcmp(nm, "ThresholdedRelu") == 0
                            ? 1.0
                            : 0.0;
            double be = strcmp(nm, "HardSigmoid") == 0  ? 0.5
                        : strcmp(nm, "ScaledTanh") == 0 ? 1.0
                                                        : 0.0;
            bool ta = al != 0.0, tb = strcmp(nm, "HardSigmoid") == 0 ||
                                      strcmp(nm, "ScaledTanh") == 0 || strcmp(nm, "Affine") == 0;
            bool fresh = c->n_acts != nact || d == 0;
            if (ta && fresh && ia < c->n_alpha)
                al = c->alpha[ia++];
            if (tb && fresh && ib < c->n_beta)
                be = c->beta[ib++];
            if (!fresh) {
                al = acts[0][q].al;
                be = acts[0][q].be;
            }
            acts[d][q].al = al;
            acts[d][q].be = be;
        }
    const sg_rt_value *X = in[0], *W = in[1], *R = in[2], *Bs = in[3], *L = in[4], *h0 = in[5];
    const sg_rt_value *c0 = G == 4 ? in[6] : NULL, *P = G == 4 ? in[7] : NULL;
    double h[64], cc[64], pre[4][64], hr[4][64], nh[64];
#define CLIP(v) (c->clip > 0 ? fmax(-c->clip, fmin(c->clip, (v))) : (v))
#define F(q, v) ref_act(acts[d][q].name, CLIP(v), acts[d][q].al, acts[d][q].be)
    for (int64_t i = 0; i < S * nd * B * H; i++)
        Y[i] = 0;
    for (int d = 0; d < nd; d++)
        for (int64_t b = 0; b < B; b++) {
            int64_t soff = c->layout ? (b * nd + d) * H : (d * B + b) * H;
            for (int64_t j = 0; j < H; j++) {
                h[j] = h0 ? sg_rt_get_f64(h0, soff + j) : 0;
                cc[j] = c0 ? sg_rt_get_f64(c0, soff + j) : 0;
            }
            int64_t len = L ? sg_rt_get_i64(L, b) : S;
            bool rev = nd == 2 ? d == 1 : strcmp(c->direction, "reverse") == 0;
            for (int64_t s = 0; s < len; s++) {
                int64_t t = rev ? len - 1 - s : s;
                int64_t xoff = c->layout ? (b * S + t) * I : (t * B + b) * I;
                for (int q = 0; q < G; q++)
                    for (int64_t j = 0; j < H; j++) {
                        int64_t row = d * G * H + q * H + j;
                        double a = Bs ? sg_rt_get_f64(Bs, d * 2 * G * H + q * H + j) : 0;
                        double rb = Bs ? sg_rt_get_f64(Bs, d * 2 * G * H + G * H + q * H + j) : 0;
                        for (int64_t i = 0; i < I; i++)
                            a += sg_rt_get_f64(W, row * I + i) * sg_rt_get_f64(X, xoff + i);
                        double e = rb;
                        for (int64_t i = 0; i < H; i++)
                            e += sg_rt_get_f64(R, row * H + i) * h[i];
                        pre[q][j] = a;
                        hr[q][j] = e;
                    }
                for (int64_t j = 0; j < H; j++) {
                    if (G == 1) {
                        nh[j] = F(0, pre[0][j] + hr[0][j]);
                    } else if (G == 4) {
                        double pi = P ? sg_rt_get_f64(P, d * 3 * H + j) : 0;
                        double po = P ? sg_rt_get_f64(P, d * 3 * H + H + j) : 0;
                        double pf = P ? sg_rt_get_f64(P, d * 3 * H + 2 * H + j) : 0;
                        double ig = F(0, pre[0][j] + hr[0][j] + pi * cc[j]);
                        double fg =
                            c->input_forget ? 1 - ig : F(0, pre[2][j] + hr[2][j] + pf * cc[j]);
                        double cg = F(1, pre[3][j] + hr[3][j]);
                        cc[j] = fg * cc[j] + ig * cg;
                        double og = F(0, pre[1][j] + hr[1][j] + po * cc[j]);
                        nh[j] = og * ref_act(acts[d][2].name, cc[j], acts[d][2].al, acts[d][2].be);
                    }
                }
                if (G == 3) {
                    double z[64], r[64];
                    for (int64_t j = 0; j < H; j++) {
                        z[j] = F(0, pre[0][j] + hr[0][j]);
                        r[j] = F(0, pre[1][j] + hr[1][j]);
                    }
                    for (int64_t j = 0; j < H; j++) {
                        double hh;
                        if (c->lbr) {
                            hh = F(1, pre[2][j] + r[j] * hr[2][j]);
                        } else {
                            double e = Bs ? sg_rt_get_f64(Bs, d * 6 * H + 3 * H + 2 * H + j) : 0;
                            for (int64_t i = 0; i < H; i++)
                                e +=
                                    sg_rt_get_f64(R, (d * 3 * H + 2 * H + j) * H + i) * r[i] * h[i];
                            hh = F(1, pre[2][j] + e);
                        }
                        nh[j] = (1 - z[j]) * hh + z[j] * h[j];
                    }
                }
                for (int64_t j = 0; j < H; j++) {
                    h[j] = nh[j];
                    int64_t yoff =
                        c->layout ? ((b * S + t) * nd + d) * H : ((t * nd + d) * B + b) * H;
                    Y[yoff + j] = h[j];
                }
            }
            for (int64_t j = 0; j < H; j++) {
                Yh[soff + j] = len ? h[j] : 0; /* like ONNX Runtime */
                Yc[soff + j] = len ? cc[j] : 0;
            }
        }
#undef F
#undef CLIP
}

/* Build the node of case c, run it and the reference, compare all outputs. */
static void check_rcase(const struct rcase *c)
{
    int nd = strcmp(c->direction, "bidirectional") == 0 ? 2 : 1;
    int G = c->op[0] == 'L' ? 4 : c->op[0] == 'G' ? 3 : 1;
    bool lstm = G == 4;
    uint32_t n_in = lstm ? 8 : 6, n_out = lstm ? 3 : 2, omit = 0;
    int64_t S = c->S, B = c->B, H = c->H;
    sg_rt_value *in[8] = {0};
    int64_t xd[3] = {S, B, c->I}, wd[3] = {nd, G * H, c->I}, rd[3] = {nd, G * H, H};
    int64_t bd[2] = {nd, 2 * G * H}, sd[3] = {nd, B, H}, pd[2] = {nd, 3 * H}, ld[1] = {B};
    if (c->layout) {
        xd[0] = B;
        xd[1] = S;
        sd[0] = B;
        sd[1] = nd;
    }
    in[0] = rand_tensor(c->dtype, xd, 3, -1, 1);
    in[1] = rand_tensor(c->dtype, wd, 3, -0.6, 0.6);
    in[2] = rand_tensor(c->dtype, rd, 3, -0.6, 0.6);
    if (c->bias)
        in[3] = rand_tensor(c->dtype, bd, 2, -0.5, 0.5);
    if (c->lens) {
        in[4] = tensor(SG_DTYPE_INT32, ld, 1);
        for (int64_t b = 0; b < B; b++)
            ((int32_t *)in[4]->data)[b] = (int32_t)(S - 2 * b > 0 ? S - 2 * b : 0);
    }
    if (c->h0)
        in[5] = rand_tensor(c->dtype, sd, 3, -1, 1);
    if (lstm && c->c0)
        in[6] = rand_tensor(c->dtype, sd, 3, -1, 1);
    if (lstm && c->peep)
        in[7] = rand_tensor(c->dtype, pd, 2, -0.5, 0.5);
    for (uint32_t i = 0; i < n_in; i++)
        if (!in[i])
            omit |= 1u << i;
    struct one t = one_node(c->op, c->opset, n_in, omit, n_out);
    ck_assert_int_eq(sg_node_set_attr_int(t.n, "hidden_size", H), SG_OK);
    ck_assert_int_eq(sg_node_set_attr_string(t.n, "direction", c->direction), SG_OK);
    if (c->opset >= 14)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "layout", c->layout), SG_OK);
    if (c->lbr)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "linear_before_reset", 1), SG_OK);
    if (c->input_forget)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "input_forget", 1), SG_OK);
    if (c->clip > 0)
        ck_assert_int_eq(sg_node_set_attr_float(t.n, "clip", c->clip), SG_OK);
    static sg_bytes names[6];
    for (int i = 0; i < c->n_acts; i++)
        names[i] = (sg_bytes){(const uint8_t *)c->acts[i], strlen(c->acts[i])};
    if (c->n_acts)
        set_attr_strings(&t, "activations", names, (size_t)c->n_acts);
    if (c->n_alpha)
        sg_node_set_attr_floats(t.n, "activation_alpha", c->alpha, (size_t)c->n_alpha);
    if (c->n_beta)
        sg_node_set_attr_floats(t.n, "activation_beta", c->beta, (size_t)c->n_beta);

    sg_rt_value *out[3] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    int64_t yd[4] = {S, nd, B, H};
    if (c->layout) {
        yd[0] = B;
        yd[1] = S;
        yd[2] = nd;
    }
    double *Y = calloc((size_t)(S * nd * B * H), sizeof *Y);
    double *Yh = calloc((size_t)(nd * B * H), sizeof *Yh);
    double *Yc = calloc((size_t)(nd * B * H), sizeof *Yc);
    ref_rnn(c, in, Y, Yh, Yc);
    double tol = c->dtype == SG_DTYPE_DOUBLE ? 1e-12 : c->dtype == SG_DTYPE_FLOAT ? 2e-6 : 4e-3;
    ck_close(out[0], Y, yd, 4, tol, tol, "Y");
    ck_close(out[1], Yh, sd, 3, tol, tol, "Y_h");
    if (lstm)
        ck_close(out[2], Yc, sd, 3, tol, tol, "Y_c");
    free(Y);
    free(Yh);
    free(Yc);
    unref_all(out, 3);
    unref_all(in, 8);
    one_free(&t);
}

#define RC(op_, opset_, dt_, S_, B_, I_, H_, dir_, layout_)                                        \
    .op = op_, .opset = opset_, .dtype = SG_DTYPE_##dt_, .S = S_, .B = B_, .I = I_, .H = H_,       \
    .direction = dir_, .layout = layout_

static const struct rcase rcases[] = {
    /* LSTM, batch-major, both directions, every optional input */
    {RC("LSTM", 14, FLOAT, 5, 3, 4, 3, "bidirectional", 1), .bias = true, .h0 = true, .c0 = true,
     .peep = true, .lens = true},
    {RC("LSTM", 14, FLOAT, 4, 2, 3, 5, "reverse", 0), .bias = true, .h0 = true, .c0 = true,
     .peep = true, .lens = true},
    {RC("LSTM", 14, FLOAT, 4, 3, 2, 4, "forward", 1), .bias = true, .lens = true, .input_forget = 1,
     .clip = 0.3f},
    /* clip bounds the gates, not the cell state h() sees (|C| reaches > 0.4) */
    {RC("LSTM", 14, FLOAT, 4, 3, 3, 4, "bidirectional", 0), .bias = true, .h0 = true, .c0 = true,
     .peep = true, .clip = 0.4f},
    {RC("LSTM", 7, DOUBLE, 6, 2, 3, 4, "bidirectional", 0), .bias = true, .h0 = true, .c0 = true,
     .peep = true},
    {RC("LSTM", 14, FLOAT, 3, 2, 3, 2, "bidirectional", 0), .bias = true, .h0 = true, .peep = true,
     .acts = {"HardSigmoid", "Elu", "ScaledTanh", "Sigmoid", "Softsign", "Affine"}, .n_acts = 6,
     .alpha = {0.3f, 0.9f, 1.5f, 0.7f}, .n_alpha = 4, .beta = {0.4f, 0.8f, 0.1f}, .n_beta = 3},
    /* GRU, both linear_before_reset forms */
    {RC("GRU", 14, FLOAT, 5, 3, 4, 3, "bidirectional", 1), .bias = true, .h0 = true, .lens = true},
    {RC("GRU", 14, FLOAT, 5, 3, 4, 3, "bidirectional", 1), .bias = true, .h0 = true, .lens = true,
     .lbr = 1},
    {RC("GRU", 7, DOUBLE, 4, 2, 3, 4, "reverse", 0), .bias = true, .lens = true, .lbr = 1},
    {RC("GRU", 3, FLOAT, 4, 2, 3, 4, "forward", 0), .h0 = true, .clip = 0.5f},
    /* RNN: activations per direction, one list for both, float16 */
    {RC("RNN", 14, FLOAT, 4, 3, 2, 3, "bidirectional", 1), .bias = true, .h0 = true, .lens = true,
     .acts = {"LeakyRelu", "Tanh"}, .n_acts = 2, .alpha = {0.2f}, .n_alpha = 1},
    {RC("RNN", 14, FLOAT, 4, 3, 2, 3, "bidirectional", 0), .bias = true, .acts = {"Relu"},
     .n_acts = 1},
    {RC("RNN", 14, FLOAT16, 3, 2, 2, 3, "reverse", 0), .bias = true, .h0 = true, .lens = true},
};

START_TEST(test_rnn_vs_reference)
{
    rng_state = 1 + (uint64_t)_i;
    check_rcase(&rcases[_i]);
}
END_TEST

/* A bad W shape names the node, W's shape, the expected one and X's. */
START_TEST(test_rnn_bad_shape)
{
    struct one t = one_node("LSTM", 14, 3, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_int(t.n, "hidden_size", 3), SG_OK);
    int64_t xd[3] = {2, 1, 4}, wd[3] = {1, 12, 5}, rd[3] = {1, 12, 3};
    sg_rt_value *in[3] = {rand_tensor(SG_DTYPE_FLOAT, xd, 3, 0, 1),
                          rand_tensor(SG_DTYPE_FLOAT, wd, 3, 0, 1),
                          rand_tensor(SG_DTYPE_FLOAT, rd, 3, 0, 1)};
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_int_eq(run_one(&t, in, out, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "'nd'") && strstr(d.msg, "LSTM") &&
                      strstr(d.msg, "float32[1,12,5]") && strstr(d.msg, "[1,12,4]") &&
                      strstr(d.msg, "float32[2,1,4]"),
                  "message: %s", d.msg);
    unref_all(in, 3);
    one_free(&t);
}
END_TEST

/* -------------------------------------------------------------- Resize */

/* A port of the ONNX reference: per output element, 1-D interpolations
 * nested over the axes, with each neighbourhood found by sorting indices by
 * distance in an edge-padded copy of the row. */
struct zref {
    const char *mode, *ct, *nearest;
    double a, extrap;
    bool exclude, antialias;
    const double *roi; /* starts then ends, per axis, or NULL */
};

static int zref_coeffs(const struct zref *z, double ratio, double scale, double *c)
{
    double A = z->a;
    if (strcmp(z->mode, "nearest") == 0) {
        bool integer = ratio == 1;
        const char *m = z->nearest;
        c[0] = integer                                ? 0
               : strcmp(m, "round_prefer_floor") == 0 ? ratio <= 0.5
               : strcmp(m, "round_prefer_ceil") == 0  ? ratio < 0.5
               : strcmp(m, "floor") == 0              ? 1
                                                      : 0;
        c[1] = 1 - c[0];
        return 2;
    }
    if (!z->antialias && strcmp(z->mode, "linear") == 0) {
        c[0] = 1 - ratio;
        c[1] = ratio;
        return 2;
    }
    if (!z->antialias) {
        c[0] = ((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A;
        c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
        c[2] = ((A + 2) * (1 - ratio) - (A + 3)) * (1 - ratio) * (1 - ratio) + 1;
        c[3] = ((A * ((1 - ratio) + 1) - 5 * A) * ((1 - ratio) + 1) + 8 * A) * ((1 - ratio) + 1) -
               4 * A;
        return 4;
    }
    scale = scale < 1 ? scale : 1;
    bool lin = strcmp(z->mode, "linear") == 0;
    int start = (int)floor((lin ? -1 : -2) / scale) + 1, n = 2 - 2 * start;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double x = fabs(scale * (start + i - ratio));
        c[i] = lin      ? fmax(0, fmin(1, 1 - x))
               : x <= 1 ? (A + 2) * x * x * x - (A + 3) * x * x + 1
               : x < 2  ? A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A
                        : 0;
        sum += c[i];
    }
    for (int i = 0; i < n; i++)
        c[i] /= sum;
    return n;
}

static double zref_1d(const struct zref *z, const double *data, int64_t len, double scale,
                      int64_t out_int, int64_t x, const double *roi2)
{
    double outw = scale * (double)len, xo = 0, in = (double)len, xx = (double)x;
    if (strcmp(z->ct, "half_pixel") == 0)
        xo = (xx + 0.5) / scale - 0.5;
    else if (strcmp(z->ct, "half_pixel_symmetric") == 0)
        xo = in / 2 * (1 - (double)out_int / outw) + (xx + 0.5) / scale - 0.5;
    else if (strcmp(z->ct, "pytorch_half_pixel") == 0)
        xo = outw == 1 ? 0 : (xx + 0.5) / scale - 0.5;
    else if (strcmp(z->ct, "align_corners") == 0)
        xo = outw == 1 ? 0 : xx * (in - 1) / (outw - 1);
    else if (strcmp(z->ct, "asymmetric") == 0)
        xo = xx / scale;
    else if (strcmp(z->ct, "tf_crop_and_resize") == 0) {
        xo = outw == 1 ? (roi2[1] - roi2[0]) * (in - 1) / 2
                       : xx * (roi2[1] - roi2[0]) * (in - 1) / (outw - 1);
        xo += roi2[0] * (in - 1);
        if (xo < 0 || xo > in - 1)
            return z->extrap;
    }
    double ratio = xo == floor(xo) ? 1 : xo - floor(xo), c[64];
    int n = zref_coeffs(z, ratio, scale, c);
    /* the n indices of the padded row nearest to xo, ties to the smaller */
    int64_t pad = (n + 1) / 2, plen = len + 2 * pad, picked[64];
    bool used[256] = {false};
    ck_assert_int_le(plen, 256);
    for (int k = 0; k < n; k++) {
        int64_t best = -1;
        for (int64_t i = 0; i < plen; i++)
            if (!used[i] && (best < 0 || fabs(xo + (double)pad - (double)i) <
                                             fabs(xo + (double)pad - (double)best)))
                best = i;
        used[best] = true;
    }
    int m = 0;
    for (int64_t i = 0; i < plen; i++)
        if (used[i])
            picked[m++] = i - pad;
    if (z->exclude) {
        double sum = 0;
        for (int k = 0; k < n; k++) {
            if (picked[k] < 0 || picked[k] >= len)
                c[k] = 0;
            sum += c[k];
        }
        for (int k = 0; k < n; k++)
            c[k] /= sum;
    }
    double r = 0;
    for (int k = 0; k < n; k++) {
        int64_t i = picked[k] < 0 ? 0 : picked[k] >= len ? len - 1 : picked[k];
        r += c[k] * data[i];
    }
    return r;
}

static double zref_nd(const struct zref *z, const double *data, const int64_t *dims, int n,
                      const double *scales, const int64_t *out, const int64_t *x, const double *roi,
                      int rank)
{
    double roi2[2] = {roi ? roi[0] : 0, roi ? roi[rank] : 1};
    if (n == 1)
        return zref_1d(z, data, dims[0], scales[0], out[0], x[0], roi2);
    int64_t inner = 1;
    for (int d = 1; d < n; d++)
        inner *= dims[d];
    double row[256];
    ck_assert_int_le(dims[0], 256);
    for (int64_t i = 0; i < dims[0]; i++)
        row[i] = zref_nd(z, data + i * inner, dims + 1, n - 1, scales + 1, out + 1, x + 1,
                         roi ? roi + 1 : NULL, rank);
    return zref_1d(z, row, dims[0], scales[0], out[0], x[0], roi2);
}

struct zcase {
    int64_t opset;
    int32_t dtype;
    uint32_t rank;
    int64_t dims[5];
    const char *mode, *ct, *nearest, *policy;
    float cubic_a, extrap;
    int exclude, antialias;
    int n_axes, n_scales, n_sizes, n_roi;
    int64_t axes[5];
    float scales[5];
    int64_t sizes[5];
    float roi[10];
    const double *expect; /* hand-computed output, or NULL */
};

static const double z_aa_linear[] = {2.875, 4.5, 9.375, 11.0};
static const double z_aa_cubic[] = {2.5180721, 4.2858863, 9.589329, 11.357142};
static const double z_not_larger[] = {1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1,
                                      1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4,
                                      4, 3, 3, 3, 3, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4};
static const double z_resize10_down[] = {1, 3, 5};

static const struct zcase zcases[] = {
    /* opset 18: antialias (values from the ONNX operator documentation) */
    {18,
     SG_DTYPE_FLOAT,
     4,
     {1, 1, 4, 4},
     "linear",
     .antialias = 1,
     .n_scales = 4,
     .scales = {1, 1, 0.6f, 0.6f},
     .expect = z_aa_linear},
    {18,
     SG_DTYPE_FLOAT,
     4,
     {1, 1, 4, 4},
     "cubic",
     .antialias = 1,
     .n_scales = 4,
     .scales = {1, 1, 0.6f, 0.6f},
     .expect = z_aa_cubic},
    {18,
     SG_DTYPE_FLOAT,
     3,
     {2, 9, 7},
     "cubic",
     "align_corners",
     .antialias = 1,
     .n_scales = 3,
     .scales = {1, 0.3f, 0.45f}},
    {18,
     SG_DTYPE_DOUBLE,
     2,
     {12, 11},
     "linear",
     "asymmetric",
     .antialias = 1,
     .exclude = 1,
     .n_sizes = 2,
     .sizes = {3, 5}},
    /* opset 18: axes and keep_aspect_ratio_policy */
    {18,
     SG_DTYPE_FLOAT,
     4,
     {1, 1, 2, 2},
     "nearest",
     .policy = "not_larger",
     .n_axes = 2,
     .axes = {2, 3},
     .n_sizes = 2,
     .sizes = {7, 8},
     .expect = z_not_larger},
    {18,
     SG_DTYPE_FLOAT,
     4,
     {1, 1, 2, 2},
     "nearest",
     .policy = "not_smaller",
     .n_axes = 2,
     .axes = {-1, 2},
     .n_sizes = 2,
     .sizes = {7, 8}},
    {18,
     SG_DTYPE_FLOAT,
     4,
     {2, 3, 6, 5},
     "linear",
     "pytorch_half_pixel",
     .policy = "not_larger",
     .n_axes = 2,
     .axes = {3, 2},
     .n_sizes = 2,
     .sizes = {2, 4}},
    {18,
     SG_DTYPE_FLOAT,
     3,
     {2, 5, 4},
     "cubic",
     .n_axes = 1,
     .axes = {1},
     .n_scales = 1,
     .scales = {1.7f}},
    {18,
     SG_DTYPE_FLOAT,
     3,
     {2, 5, 4},
     "linear",
     "tf_crop_and_resize",
     .extrap = -3,
     .n_axes = 2,
     .axes = {1, 2},
     .n_sizes = 2,
     .sizes = {4, 6},
     .n_roi = 4,
     .roi = {-0.2f, 0.1f, 0.8f, 1.3f}},
    /* opset 19: half_pixel_symmetric */
    {19,
     SG_DTYPE_FLOAT,
     2,
     {5, 7},
     "linear",
     "half_pixel_symmetric",
     .n_scales = 2,
     .scales = {0.7f, 1.6f}},
    {19,
     SG_DTYPE_FLOAT,
     2,
     {5, 7},
     "nearest",
     "half_pixel_symmetric",
     "round_prefer_ceil",
     .n_scales = 2,
     .scales = {2.3f, 0.55f}},
    /* N-d linear and cubic, nearest modes, tf_crop_and_resize nearest */
    {13,
     SG_DTYPE_FLOAT,
     5,
     {1, 2, 3, 4, 3},
     "linear",
     .n_scales = 5,
     .scales = {1, 1.5f, 2, 0.5f, 1.4f}},
    {13,
     SG_DTYPE_FLOAT,
     3,
     {3, 4, 5},
     "cubic",
     "asymmetric",
     .cubic_a = -0.5f,
     .exclude = 1,
     .n_sizes = 3,
     .sizes = {5, 3, 9}},
    {13,
     SG_DTYPE_FLOAT,
     2,
     {4, 5},
     "nearest",
     "tf_crop_and_resize",
     "ceil",
     .extrap = 7,
     .n_sizes = 2,
     .sizes = {5, 6},
     .n_roi = 4,
     .roi = {0.1f, -0.3f, 0.9f, 1.2f}},
    {13,
     SG_DTYPE_FLOAT,
     2,
     {4, 5},
     "nearest",
     "pytorch_half_pixel",
     "floor",
     .n_scales = 2,
     .scales = {0.5f, 2.5f}},
    {11,
     SG_DTYPE_FLOAT,
     2,
     {3, 3},
     "nearest",
     "align_corners",
     "round_prefer_ceil",
     .n_sizes = 2,
     .sizes = {7, 2}},
    /* integers: weighted sums truncated like the reference */
    {13,
     SG_DTYPE_UINT8,
     3,
     {2, 4, 4},
     "linear",
     "align_corners",
     .n_scales = 3,
     .scales = {1, 1.75f, 0.8f}},
    {13, SG_DTYPE_INT32, 2, {4, 4}, "cubic", .n_scales = 2, .scales = {1.5f, 0.75f}},
    /* Resize-10: asymmetric, nearest downsampling takes the ceiling */
    {10,
     SG_DTYPE_FLOAT,
     1,
     {5},
     "nearest",
     .n_scales = 1,
     .scales = {0.6f},
     .expect = z_resize10_down},
};

START_TEST(test_resize_vs_reference)
{
    const struct zcase *c = &zcases[_i];
    rng_state = 100 + (uint64_t)_i;
    bool ints = c->dtype == SG_DTYPE_UINT8 || c->dtype == SG_DTYPE_INT32;
    sg_rt_value *in[4] = {0};
    in[0] = tensor(c->dtype, c->dims, c->rank);
    for (int64_t i = 0; i < in[0]->numel; i++)
        sg_rt_set_f64(in[0], i,
                      ints        ? floor(rnd(0, 200))
                      : c->expect ? (double)(i + 1)
                                  : rnd(-2, 2));
    int64_t n1 = c->n_roi, n2 = c->n_scales, n3 = c->n_sizes;
    if (c->n_roi) {
        in[1] = tensor(SG_DTYPE_FLOAT, &n1, 1);
        memcpy(in[1]->data, c->roi, (size_t)n1 * sizeof(float));
    }
    if (c->n_scales) {
        in[2] = tensor(SG_DTYPE_FLOAT, &n2, 1);
        memcpy(in[2]->data, c->scales, (size_t)n2 * sizeof(float));
    }
    if (c->n_sizes) {
        in[3] = tensor(SG_DTYPE_INT64, &n3, 1);
        memcpy(in[3]->data, c->sizes, (size_t)n3 * sizeof(int64_t));
    }
    struct one t;
    if (c->opset == 10) {
        t = one_node("Resize", 10, 2, 0, 1);
        in[1] = in[2];
        in[2] = NULL;
    } else {
        /* opset 11 needs roi and scales present (maybe empty) */
        int64_t zero = 0;
        if (c->opset == 11 && !in[1])
            in[1] = tensor(SG_DTYPE_FLOAT, &zero, 1);
        if (c->opset == 11 && !in[2])
            in[2] = tensor(SG_DTYPE_FLOAT, &zero, 1);
        uint32_t omit = (in[1] ? 0 : 2u) | (in[2] ? 0 : 4u) | (in[3] ? 0 : 8u);
        t = one_node("Resize", c->opset, in[3] ? 4 : 3, omit, 1);
    }
    ck_assert_int_eq(sg_node_set_attr_string(t.n, "mode", c->mode), SG_OK);
    if (c->ct)
        ck_assert_int_eq(sg_node_set_attr_string(t.n, "coordinate_transformation_mode", c->ct),
                         SG_OK);
    if (c->nearest)
        ck_assert_int_eq(sg_node_set_attr_string(t.n, "nearest_mode", c->nearest), SG_OK);
    if (c->policy)
        ck_assert_int_eq(sg_node_set_attr_string(t.n, "keep_aspect_ratio_policy", c->policy),
                         SG_OK);
    if (c->cubic_a)
        ck_assert_int_eq(sg_node_set_attr_float(t.n, "cubic_coeff_a", c->cubic_a), SG_OK);
    if (c->extrap)
        ck_assert_int_eq(sg_node_set_attr_float(t.n, "extrapolation_value", c->extrap), SG_OK);
    if (c->exclude)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "exclude_outside", 1), SG_OK);
    if (c->antialias)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "antialias", 1), SG_OK);
    if (c->n_axes)
        ck_assert_int_eq(sg_node_set_attr_ints(t.n, "axes", c->axes, (size_t)c->n_axes), SG_OK);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);

    /* the reference: full-rank scales, sizes and roi */
    int rank = (int)c->rank;
    double scales[5], roi[10];
    int64_t od[5];
    bool listed[5] = {false};
    int naxes = c->n_axes ? c->n_axes : rank;
    for (int d = 0; d < rank; d++) {
        scales[d] = 1;
        od[d] = c->dims[d];
        roi[d] = 0;
        roi[rank + d] = 1;
    }
    for (int a = 0; a < naxes; a++) {
        int d = c->n_axes ? (int)(c->axes[a] < 0 ? c->axes[a] + rank : c->axes[a]) : a;
        listed[d] = true;
        if (c->n_sizes) {
            od[d] = c->sizes[a];
            scales[d] = (double)c->sizes[a] / (double)c->dims[d];
        } else {
            scales[d] = c->scales[a];
            od[d] = (int64_t)floor(scales[d] * (double)c->dims[d]);
        }
        if (c->n_roi) {
            roi[d] = c->roi[a];
            roi[rank + d] = c->roi[naxes + a];
        }
    }
    if (c->policy && strcmp(c->policy, "stretch")) {
        double s = strcmp(c->policy, "not_larger") == 0 ? 1e300 : 0;
        for (int d = 0; d < rank; d++)
            if (listed[d])
                s = strcmp(c->policy, "not_larger") == 0 ? fmin(s, scales[d]) : fmax(s, scales[d]);
        for (int d = 0; d < rank; d++)
            if (listed[d]) {
                scales[d] = s;
                od[d] = (int64_t)(s * (double)c->dims[d] + 0.5);
            }
    }
    struct zref z = {c->mode,
                     c->ct            ? c->ct
                     : c->opset == 10 ? "asymmetric"
                                      : "half_pixel",
                     c->nearest ? c->nearest : "round_prefer_floor",
                     c->cubic_a ? c->cubic_a : -0.75,
                     c->extrap,
                     c->exclude != 0,
                     c->antialias != 0,
                     roi};
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= od[d];
    double *data = malloc((size_t)in[0]->numel * sizeof *data),
           *want = malloc((size_t)n * sizeof *want);
    for (int64_t i = 0; i < in[0]->numel; i++)
        data[i] = sg_rt_get_f64(in[0], i);
    for (int64_t i = 0; i < n; i++) {
        int64_t x[5], r = i;
        for (int d = rank; d-- > 0;) {
            x[d] = r % od[d];
            r /= od[d];
        }
        if (c->opset == 10) {
            /* nearest per ONNX Runtime's Resize-10: ceil when downsampling */
            double xo = (double)x[0] / scales[0];
            int64_t k = (int64_t)(scales[0] < 1 ? ceil(xo) : floor(xo));
            want[i] = data[k < c->dims[0] ? k : c->dims[0] - 1];
            continue;
        }
        want[i] = zref_nd(&z, data, c->dims, rank, scales, od, x, c->n_roi ? roi : NULL, rank);
        if (ints)
            want[i] = trunc(want[i]);
    }
    ck_close(out[0], want, od, c->rank, ints ? 0 : 1e-5, ints ? 0 : 1e-5, "Y");
    if (c->expect)
        ck_close(out[0], c->expect, od, c->rank, 1e-6, 1e-6, "Y (documented)");
    free(data);
    free(want);
    unref_all(out, 1);
    unref_all(in, 4);
    one_free(&t);
}
END_TEST

/* ------------------------------------------------------- quantization */

static sg_rt_value *tensor_of(int32_t dtype, const int64_t *dims, uint32_t rank, const double *vals)
{
    sg_rt_value *v = tensor(dtype, dims, rank);
    for (int64_t i = 0; i < v->numel; i++)
        sg_rt_set_f64(v, i, vals[i]);
    return v;
}

/* Per-axis int8: ties round to even, both ends saturate. */
START_TEST(test_quantize_axis_ties_saturation)
{
    int64_t xd[2] = {2, 4}, sd[1] = {4};
    const double x[8] = {2.5, -2.5, 3.5, 1000, 0.25, -0.75, -1000, 6.5};
    const double sc[4] = {1, 1, 0.5, 2}, zp[4] = {0, 0, 1, -3};
    /* x / scale rounded half to even, + zp, saturated to [-128, 127] */
    const double want[8] = {2, -2, 8, 127, 0, -1, -128, 0};
    sg_rt_value *in[3] = {tensor_of(SG_DTYPE_FLOAT, xd, 2, x), tensor_of(SG_DTYPE_FLOAT, sd, 1, sc),
                          tensor_of(SG_DTYPE_INT8, sd, 1, zp)};
    struct one t = one_node("QuantizeLinear", 13, 3, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_int(t.n, "axis", -1), SG_OK);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_assert_int_eq(out[0]->dtype, SG_DTYPE_INT8);
    ck_close(out[0], want, xd, 2, 0, 0, "y");
    unref_all(out, 1);
    unref_all(in, 3);
    one_free(&t);
}
END_TEST

/* Opset 21: blocks of 2 along axis 1 into int16, and back. */
START_TEST(test_quantize_blocked_int16)
{
    int64_t xd[2] = {2, 5}, sd[2] = {2, 3};
    const double x[10] = {100, -200, 300.5, 40, 5e6, -7, 8, 9, 10, -5e6};
    const double sc[6] = {0.5, 2, 4, 1, 0.25, 2}, zp[6] = {10, -10, 0, 1, 2, 3};
    double want[10], back[10];
    for (int i = 0; i < 10; i++) {
        int si = (i / 5) * 3 + (i % 5) / 2;
        double q = fmin(32767, fmax(-32768, nearbyint(x[i] / sc[si]) + zp[si]));
        want[i] = q;
        back[i] = (q - zp[si]) * sc[si];
    }
    sg_rt_value *in[3] = {tensor_of(SG_DTYPE_FLOAT, xd, 2, x), tensor_of(SG_DTYPE_FLOAT, sd, 2, sc),
                          tensor_of(SG_DTYPE_INT16, sd, 2, zp)};
    struct one t = one_node("QuantizeLinear", 21, 3, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_int(t.n, "block_size", 2), SG_OK);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_assert_int_eq(out[0]->dtype, SG_DTYPE_INT16);
    ck_close(out[0], want, xd, 2, 0, 0, "y");
    struct one u = one_node("DequantizeLinear", 21, 3, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_int(u.n, "block_size", 2), SG_OK);
    sg_rt_value *in2[3] = {out[0], in[1], in[2]}, *out2[1] = {0};
    ck_assert_ok(run_one(&u, in2, out2, &d), &d);
    ck_close(out2[0], back, xd, 2, 0, 1e-7, "x");
    unref_all(out, 1);
    unref_all(out2, 1);
    unref_all(in, 3);
    one_free(&t);
    one_free(&u);
}
END_TEST

/* Opset 19: a float16 scale gives a float16 output; uint8 default zero. */
START_TEST(test_dequantize_float16)
{
    int64_t xd[3] = {2, 2, 2}, sd[1] = {2};
    const double x[8] = {0, 1, 2, 255, 128, 7, 9, 200}, sc[2] = {0.5, 0.125};
    sg_rt_value *in[2] = {tensor_of(SG_DTYPE_UINT8, xd, 3, x),
                          tensor_of(SG_DTYPE_FLOAT16, sd, 1, sc)};
    double want[8];
    for (int i = 0; i < 8; i++)
        want[i] = x[i] * sc[(i / 2) % 2];
    struct one t = one_node("DequantizeLinear", 19, 2, 0, 1);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_assert_int_eq(out[0]->dtype, SG_DTYPE_FLOAT16);
    ck_close(out[0], want, xd, 3, 0, 1e-3, "y");
    unref_all(out, 1);
    unref_all(in, 2);
    one_free(&t);
}
END_TEST

/* A scale that is neither a scalar nor one per index of the axis. */
START_TEST(test_quantize_bad_scale)
{
    int64_t xd[2] = {2, 3}, sd[1] = {2};
    const double x[6] = {0}, sc[2] = {1, 1};
    sg_rt_value *in[2] = {tensor_of(SG_DTYPE_FLOAT, xd, 2, x),
                          tensor_of(SG_DTYPE_FLOAT, sd, 1, sc)};
    struct one t = one_node("QuantizeLinear", 13, 2, 0, 1);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_int_eq(run_one(&t, in, out, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "'nd'") && strstr(d.msg, "QuantizeLinear") &&
                      strstr(d.msg, "float32[2]") && strstr(d.msg, "float32[2,3]"),
                  "message: %s", d.msg);
    unref_all(in, 2);
    one_free(&t);
}
END_TEST

START_TEST(test_dynamic_quantize_zeros)
{
    int64_t xd[1] = {3};
    const double x[3] = {0, 0, 0}, zero[3] = {0, 0, 0};
    sg_rt_value *in[1] = {tensor_of(SG_DTYPE_FLOAT, xd, 1, x)};
    struct one t = one_node("DynamicQuantizeLinear", 11, 1, 0, 3);
    sg_rt_value *out[3] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_close(out[0], zero, xd, 1, 0, 0, "y");
    ck_close(out[1], zero, NULL, 0, 0, 0, "y_scale");
    ck_close(out[2], zero, NULL, 0, 0, 0, "y_zero_point");
    unref_all(out, 3);
    unref_all(in, 1);
    one_free(&t);
}
END_TEST

/* MatMulInteger and QLinearMatMul with batch broadcasting, per-row zero
 * points and scales for a, per-column for b, against plain loops. */
START_TEST(test_integer_matmul)
{
    bool qlinear = _i == 1;
    rng_state = 77;
    int64_t ad[4] = {2, 1, 3, 4}, bd[3] = {3, 4, 5}, azd[1] = {3}, bzd[1] = {5};
    int64_t od[4] = {2, 3, 3, 5};
    sg_rt_value *A = tensor(SG_DTYPE_UINT8, ad, 4), *B = tensor(SG_DTYPE_INT8, bd, 3);
    sg_rt_value *Az = tensor(SG_DTYPE_UINT8, azd, 1), *Bz = tensor(SG_DTYPE_INT8, bzd, 1);
    for (int64_t i = 0; i < A->numel; i++)
        sg_rt_set_f64(A, i, floor(rnd(0, 256)));
    for (int64_t i = 0; i < B->numel; i++)
        sg_rt_set_f64(B, i, floor(rnd(-128, 128)));
    for (int i = 0; i < 3; i++)
        sg_rt_set_f64(Az, i, floor(rnd(0, 256)));
    for (int i = 0; i < 5; i++)
        sg_rt_set_f64(Bz, i, floor(rnd(-128, 128)));
    const double as[3] = {0.01, 0.02, 0.005}, bs[5] = {0.03, 0.01, 0.02, 0.04, 0.015};
    const double ys = 0.7, yz = 3;
    int64_t one_d = 1;
    double want[2 * 3 * 3 * 5];
    for (int64_t b0 = 0; b0 < 2; b0++)
        for (int64_t b1 = 0; b1 < 3; b1++)
            for (int64_t m = 0; m < 3; m++)
                for (int64_t n = 0; n < 5; n++) {
                    int64_t acc = 0;
                    for (int64_t q = 0; q < 4; q++)
                        acc += (sg_rt_get_i64(A, (b0 * 3 + m) * 4 + q) - sg_rt_get_i64(Az, m)) *
                               (sg_rt_get_i64(B, (b1 * 4 + q) * 5 + n) - sg_rt_get_i64(Bz, n));
                    double v = (double)acc;
                    if (qlinear) {
                        float mul = (float)as[m] * (float)bs[n] / (float)ys;
                        v = fmin(127, fmax(-128, nearbyint(v * (double)mul) + yz));
                    }
                    want[((b0 * 3 + b1) * 3 + m) * 5 + n] = v;
                }
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    struct one t;
    if (!qlinear) {
        sg_rt_value *in[4] = {A, B, Az, Bz};
        t = one_node("MatMulInteger", 10, 4, 0, 1);
        ck_assert_ok(run_one(&t, in, out, &d), &d);
        ck_assert_int_eq(out[0]->dtype, SG_DTYPE_INT32);
    } else {
        sg_rt_value *in[8] = {A,
                              tensor_of(SG_DTYPE_FLOAT, azd, 1, as),
                              Az,
                              B,
                              tensor_of(SG_DTYPE_FLOAT, bzd, 1, bs),
                              Bz,
                              tensor_of(SG_DTYPE_FLOAT, &one_d, 0, &ys),
                              tensor_of(SG_DTYPE_INT8, &one_d, 0, &yz)};
        t = one_node("QLinearMatMul", 10, 8, 0, 1);
        ck_assert_ok(run_one(&t, in, out, &d), &d);
        ck_assert_int_eq(out[0]->dtype, SG_DTYPE_INT8);
        sg_rt_value *extra[4] = {in[1], in[4], in[6], in[7]};
        unref_all(extra, 4);
    }
    ck_close(out[0], want, od, 4, 0, 0, "Y");
    /* inner dimensions that differ name both shapes */
    sg_rt_value *bad = tensor(SG_DTYPE_INT8, (int64_t[]){3, 5}, 2);
    struct one u = one_node("MatMulInteger", 10, 2, 0, 1);
    sg_rt_value *in2[2] = {A, bad}, *out2[1] = {0};
    struct sg_diag d2 = {0};
    ck_assert_int_eq(run_one(&u, in2, out2, &d2), SG_ESHAPE);
    ck_assert_msg(strstr(d2.msg, "uint8[2,1,3,4]") && strstr(d2.msg, "int8[3,5]"), "message: %s",
                  d2.msg);
    sg_rt_value *rest[6] = {A, B, Az, Bz, bad, out[0]};
    unref_all(rest, 6);
    one_free(&t);
    one_free(&u);
}
END_TEST

/* ------------------------------------------- numpy-checked cases */

/* Input t of a numpy-checked case: element i is ((7 i + 3 t) mod 11 - 5) / 4,
 * exact in every float type, and made the same way by py_pattern. */
static sg_rt_value *pattern(int32_t dtype, const int64_t *dims, uint32_t rank, int t)
{
    sg_rt_value *v = tensor(dtype, dims, rank);
    bool ints = !(SG_KT(dtype) & SG_KT_FLOATS);
    for (int64_t i = 0; i < v->numel; i++) {
        double x = (double)((7 * i + 3 * t) % 11 - 5);
        sg_rt_set_f64(v, i, ints ? x : x / 4);
    }
    return v;
}

static const char py_pattern[] =
    "import numpy as np\n"
    "def pat(t, shape, ints=False):\n"
    "    n = int(np.prod(shape))\n"
    "    a = np.array([((7 * i + 3 * t) % 11 - 5) for i in range(n)], dtype=np.float64)\n"
    "    return (a if ints else a / 4).reshape(shape)\n"
    "def out(y):\n"
    "    y = np.asarray(y)\n"
    "    print(' '.join(str(int(d)) for d in y.shape))\n"
    "    print(' '.join(repr(float(v)) for v in y.ravel()))\n";

/* Run python `body` (after py_pattern), which calls out(y) once; returns
 * y's values (malloc'd) with its shape in dims/rank. */
static double *py_run(const char *body, int64_t *dims, uint32_t *rank, int64_t *n)
{
    char *dir = test_tmpdir("py");
    char path[600], cmd[700];
    snprintf(path, sizeof path, "%s/case.py", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(py_pattern, f);
    fputs(body, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", path);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    static char line[1 << 20];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, p));
    *rank = 0;
    char *q = line, *end;
    for (long v; (v = strtol(q, &end, 10)), end != q; q = end)
        dims[(*rank)++] = v;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, p));
    int64_t cap = 1024, m = 0;
    double *vals = malloc((size_t)cap * sizeof *vals);
    q = line;
    for (double v; (v = strtod(q, &end)), end != q; q = end) {
        if (m == cap)
            vals = realloc(vals, (size_t)(cap *= 2) * sizeof *vals);
        vals[m++] = v;
    }
    ck_assert_int_eq(pclose(p), 0);
    sg_free(dir);
    *n = m;
    return vals;
}

struct ecase {
    const char *eq;
    int32_t dtype;
    int n_in;
    uint32_t rank[3];
    int64_t dims[3][5];
};

static const struct ecase ecases[] = {
    {"ij,jk->ik", SG_DTYPE_FLOAT, 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"bij,bjk->bik", SG_DTYPE_DOUBLE, 2, {3, 3}, {{2, 3, 4}, {2, 4, 2}}},
    {"ii->i", SG_DTYPE_FLOAT, 1, {2}, {{4, 4}}},
    {"ii", SG_DTYPE_FLOAT, 1, {2}, {{5, 5}}},
    {"ij->", SG_DTYPE_FLOAT, 1, {2}, {{3, 7}}},
    {"i,i", SG_DTYPE_INT32, 2, {1, 1}, {{6}, {6}}},
    {"...ij,...jk->...ik", SG_DTYPE_FLOAT, 2, {4, 3}, {{2, 1, 3, 4}, {5, 4, 2}}},
    {"bii->bi", SG_DTYPE_INT64, 1, {3}, {{2, 3, 3}}},
    {"ijk,ikl,ilm->jm", SG_DTYPE_DOUBLE, 3, {3, 3, 3}, {{2, 3, 4}, {2, 4, 2}, {2, 2, 3}}},
    {"Ba,aB", SG_DTYPE_FLOAT, 2, {2, 2}, {{2, 3}, {3, 2}}},
    {"bA", SG_DTYPE_FLOAT, 1, {2}, {{2, 3}}},
    {"i,j->ij", SG_DTYPE_FLOAT, 2, {1, 1}, {{3}, {4}}},
    {"ij...,j...->i...", SG_DTYPE_FLOAT, 2, {3, 2}, {{2, 3, 4}, {3, 1}}},
    {"abcd,dbe->eca", SG_DTYPE_FLOAT, 2, {4, 3}, {{2, 3, 2, 4}, {4, 3, 5}}},
    {" i j , j k -> k i ", SG_DTYPE_FLOAT, 2, {2, 2}, {{2, 3}, {3, 2}}},
};

START_TEST(test_einsum_vs_numpy)
{
    const struct ecase *c = &ecases[_i];
    bool ints = c->dtype == SG_DTYPE_INT32 || c->dtype == SG_DTYPE_INT64;
    char body[2048];
    size_t pos = (size_t)snprintf(body, sizeof body, "ins = [");
    sg_rt_value *in[3] = {0};
    for (int t = 0; t < c->n_in; t++) {
        in[t] = pattern(c->dtype, c->dims[t], c->rank[t], t);
        pos += (size_t)snprintf(body + pos, sizeof body - pos, "pat(%d, (", t);
        for (uint32_t d = 0; d < c->rank[t]; d++)
            pos +=
                (size_t)snprintf(body + pos, sizeof body - pos, "%lld,", (long long)c->dims[t][d]);
        pos += (size_t)snprintf(body + pos, sizeof body - pos, "), %s), ", ints ? "True" : "False");
    }
    snprintf(body + pos, sizeof body - pos, "]\nout(np.einsum('%s', *ins))\n", c->eq);
    int64_t od[8], n;
    uint32_t orank;
    double *want = py_run(body, od, &orank, &n);
    struct one t = one_node("Einsum", 12, (uint32_t)c->n_in, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_string(t.n, "equation", c->eq), SG_OK);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_assert_int_eq(out[0]->dtype, c->dtype);
    ck_close(out[0], want, od, orank, 1e-9, 1e-6, c->eq);
    free(want);
    unref_all(out, 1);
    unref_all(in, 3);
    one_free(&t);
}
END_TEST

START_TEST(test_einsum_bad_sizes)
{
    int64_t a[2] = {3, 4}, b[2] = {5, 6};
    sg_rt_value *in[2] = {tensor(SG_DTYPE_FLOAT, a, 2), tensor(SG_DTYPE_FLOAT, b, 2)};
    struct one t = one_node("Einsum", 12, 2, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_string(t.n, "equation", "ij,jk->ik"), SG_OK);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_int_eq(run_one(&t, in, out, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "'nd'") && strstr(d.msg, "Einsum") && strstr(d.msg, "'j'") &&
                      strstr(d.msg, "float32[5,6]"),
                  "message: %s", d.msg);
    unref_all(in, 2);
    one_free(&t);
}
END_TEST

/* Det against numpy, with singular and pivoting matrices. */
START_TEST(test_det_vs_numpy)
{
    int64_t dims[3] = {3, 4, 4};
    sg_rt_value *in[1] = {pattern(SG_DTYPE_DOUBLE, dims, 3, 2)};
    double *x = in[0]->data;
    x[16] = 0; /* second matrix: a zero pivot at the top left */
    for (int j = 0; j < 4; j++)
        x[32 + 4 + j] = 2 * x[32 + j]; /* third matrix: singular */
    char body[512];
    snprintf(body, sizeof body,
             "x = pat(2, (3,4,4))\nx[1,0,0] = 0\nx[2,1,:] = 2 * x[2,0,:]\n"
             "out(np.linalg.det(x))\n");
    int64_t od[8], n;
    uint32_t orank;
    double *want = py_run(body, od, &orank, &n);
    struct one t = one_node("Det", 11, 1, 0, 1);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_close(out[0], want, od, orank, 1e-12, 1e-9, "det");
    free(want);
    unref_all(out, 1);
    unref_all(in, 1);
    one_free(&t);
}
END_TEST

struct fcase {
    int64_t opset;
    int32_t dtype;
    uint32_t rank;
    int64_t dims[4];
    int axis, inverse, onesided;
    int64_t dft_length; /* 0: omitted */
    const char *numpy;  /* expression of the complex result from x */
};

static const struct fcase fcases[] = {
    {17, SG_DTYPE_FLOAT, 4, {2, 12, 3, 1}, 1, 0, 0, 0, "np.fft.fft(x, axis=1)"},
    {17, SG_DTYPE_FLOAT, 4, {2, 12, 3, 1}, 2, 0, 1, 0, "np.fft.rfft(x, axis=2)"},
    {17, SG_DTYPE_DOUBLE, 3, {3, 8, 2}, 1, 1, 0, 0, "np.fft.ifft(x, axis=1)"},
    {17, SG_DTYPE_FLOAT, 3, {2, 9, 2}, -2, 0, 0, 16, "np.fft.fft(x, 16, axis=1)"},
    {20, SG_DTYPE_FLOAT, 4, {2, 8, 5, 1}, -2, 0, 1, 7, "np.fft.rfft(x, 7, axis=2)"},
    {20, SG_DTYPE_DOUBLE, 4, {4, 6, 3, 2}, 0, 1, 0, 5, "np.fft.ifft(x, 5, axis=0)"},
    {20, SG_DTYPE_FLOAT16, 3, {2, 32, 1}, -2, 0, 0, 0, "np.fft.fft(x, axis=1)"},
};

START_TEST(test_dft_vs_numpy)
{
    const struct fcase *c = &fcases[_i];
    bool cplx = c->dims[c->rank - 1] == 2;
    uint32_t n_in = c->opset >= 20 ? 3 : (c->dft_length ? 2 : 1), omit = 0;
    sg_rt_value *in[3] = {pattern(c->dtype, c->dims, c->rank, 0), NULL, NULL};
    int64_t one = 1;
    if (c->dft_length) {
        in[1] = tensor(SG_DTYPE_INT64, &one, 0);
        ((int64_t *)in[1]->data)[0] = c->dft_length;
    } else if (n_in > 1) {
        omit |= 2;
    }
    if (c->opset >= 20) {
        in[2] = tensor(SG_DTYPE_INT64, &one, 0);
        ((int64_t *)in[2]->data)[0] = c->axis;
    }
    struct one t = one_node("DFT", c->opset, n_in, omit, 1);
    if (c->opset < 20)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "axis", c->axis), SG_OK);
    if (c->inverse)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "inverse", 1), SG_OK);
    if (c->onesided)
        ck_assert_int_eq(sg_node_set_attr_int(t.n, "onesided", 1), SG_OK);
    char body[1024], shape[64];
    size_t pos = 0;
    for (uint32_t d = 0; d < c->rank; d++)
        pos += (size_t)snprintf(shape + pos, sizeof shape - pos, "%lld,", (long long)c->dims[d]);
    snprintf(body, sizeof body,
             "x = pat(0, (%s))\n%s"
             "x = x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]\n"
             "y = %s\nout(np.stack((y.real, y.imag), axis=-1))\n",
             shape, c->dtype == SG_DTYPE_FLOAT16 ? "x = x.astype(np.float16).astype(float)\n" : "",
             c->numpy);
    (void)cplx;
    int64_t od[8], n;
    uint32_t orank;
    double *want = py_run(body, od, &orank, &n);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    double tol = c->dtype == SG_DTYPE_DOUBLE ? 1e-12 : c->dtype == SG_DTYPE_FLOAT ? 1e-5 : 2e-2;
    ck_close(out[0], want, od, orank, tol, tol, c->numpy);
    free(want);
    unref_all(out, 1);
    unref_all(in, 3);
    one_free(&t);
}
END_TEST

/* STFT of a complex signal, two-sided, with a window, and frames that do
 * not reach the end of the signal. */
START_TEST(test_stft_complex_window)
{
    int64_t sd[3] = {2, 37, 2}, wd[1] = {10}, one = 1;
    sg_rt_value *in[4] = {pattern(SG_DTYPE_FLOAT, sd, 3, 0), tensor(SG_DTYPE_INT64, &one, 0),
                          pattern(SG_DTYPE_FLOAT, wd, 1, 1), tensor(SG_DTYPE_INT64, &one, 0)};
    ((int64_t *)in[1]->data)[0] = 4;
    ((int64_t *)in[3]->data)[0] = 10;
    struct one t = one_node("STFT", 17, 4, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_int(t.n, "onesided", 0), SG_OK);
    const char *body = "s = pat(0, (2,37,2))\ns = s[..., 0] + 1j * s[..., 1]\nw = pat(1, (10,))\n"
                       "fr = [[np.fft.fft(s[b, f*4:f*4+10] * w) for f in range(7)] for b in "
                       "range(2)]\ny = np.array(fr)\nout(np.stack((y.real, y.imag), axis=-1))\n";
    int64_t od[8], n;
    uint32_t orank;
    double *want = py_run(body, od, &orank, &n);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_close(out[0], want, od, orank, 1e-5, 1e-5, "stft");
    free(want);
    unref_all(out, 1);
    unref_all(in, 4);
    one_free(&t);
}
END_TEST

/* Mel points beyond the spectrogram: an error, not a write out of bounds. */
START_TEST(test_mel_out_of_range)
{
    int64_t one = 1;
    const double nm = 4, dl = 16, sr = 100, lo = 0, hi = 100;
    sg_rt_value *in[5] = {
        tensor_of(SG_DTYPE_INT64, &one, 0, &nm), tensor_of(SG_DTYPE_INT64, &one, 0, &dl),
        tensor_of(SG_DTYPE_INT64, &one, 0, &sr), tensor_of(SG_DTYPE_FLOAT, &one, 0, &lo),
        tensor_of(SG_DTYPE_FLOAT, &one, 0, &hi)};
    struct one t = one_node("MelWeightMatrix", 17, 5, 0, 1);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_int_eq(run_one(&t, in, out, &d), SG_ERANGE);
    ck_assert_msg(strstr(d.msg, "MelWeightMatrix") && strstr(d.msg, "9 spectrogram bins"),
                  "message: %s", d.msg);
    unref_all(in, 5);
    one_free(&t);
}
END_TEST

/* -------------------------------------------------- NonMaxSuppression */

/* Hand-worked cases: strict score threshold, ties to the lower index,
 * zero-area boxes overlap nothing, centre format, max 0. */
START_TEST(test_nms_rules)
{
    /* boxes (corners, y1 x1 y2 x2), one batch:
     * 0: [0,0,10,10]  1: [1,1,11,11] (IOU with 0 = 81/119)  2: [20,20,20,30] (zero area)
     * 3: [20,20,30,30]  4: [0,0,10,10] again (ties box 0 on class 1) */
    const double boxes[20] = {0,  0,  10, 10, 1,  1,  11, 11, 20, 20,
                              20, 30, 20, 20, 30, 30, 10, 10, 0,  0};
    const double scores[10] = {0.9, 0.8, 0.95, 0.5, 0.3,  /* class 0 */
                               0.6, 0.1, 0.2,  0.7, 0.6}; /* class 1 */
    int64_t bd[3] = {1, 5, 4}, sd[3] = {1, 2, 5}, one = 1;
    const double maxb = 10, iou = 0.5, sth = 0.3;
    sg_rt_value *in[5] = {
        tensor_of(SG_DTYPE_FLOAT, bd, 3, boxes), tensor_of(SG_DTYPE_FLOAT, sd, 3, scores),
        tensor_of(SG_DTYPE_INT64, &one, 1, &maxb), tensor_of(SG_DTYPE_FLOAT, &one, 1, &iou),
        tensor_of(SG_DTYPE_FLOAT, &one, 1, &sth)};
    /* class 0 by score: 2 (zero area, kept), 0, 1 (IOU 0.68 > 0.5: gone), 3;
     * 4 has score 0.3, not above the threshold.
     * class 1: 3 (0.7), then 0 and 4 tie at 0.6: 0 first, 4 overlaps it. */
    const double want[18] = {0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 1, 3, 0, 1, 0};
    int64_t wd[2] = {5, 3};
    struct one t = one_node("NonMaxSuppression", 11, 5, 0, 1);
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    ck_close(out[0], want, wd, 2, 0, 0, "selected_indices");
    unref_all(out, 1);

    /* the same boxes as centres, max 1 per class */
    const double cboxes[8] = {5, 5, 10, 10, 6, 6, 10, 10};
    const double cscores[2] = {0.4, 0.9}, max1 = 1;
    int64_t cbd[3] = {1, 2, 4}, csd[3] = {1, 1, 2};
    sg_rt_value *cin[3] = {tensor_of(SG_DTYPE_FLOAT, cbd, 3, cboxes),
                           tensor_of(SG_DTYPE_FLOAT, csd, 3, cscores),
                           tensor_of(SG_DTYPE_INT64, &one, 1, &max1)};
    struct one u = one_node("NonMaxSuppression", 10, 3, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_int(u.n, "center_point_box", 1), SG_OK);
    const double cwant[3] = {0, 0, 1};
    int64_t cwd[2] = {1, 3};
    ck_assert_ok(run_one(&u, cin, out, &d), &d);
    ck_close(out[0], cwant, cwd, 2, 0, 0, "selected_indices (centre)");
    unref_all(out, 1);

    /* max_output_boxes_per_class omitted: nothing selected */
    struct one v = one_node("NonMaxSuppression", 11, 2, 0, 1);
    int64_t zd[2] = {0, 3};
    ck_assert_ok(run_one(&v, in, out, &d), &d);
    ck_close(out[0], want, zd, 2, 0, 0, "selected_indices (max 0)");
    unref_all(out, 1);

    /* scores for another number of boxes: an error with both shapes */
    struct one w = one_node("NonMaxSuppression", 11, 2, 0, 1);
    sg_rt_value *bad[2] = {in[0], cin[1]};
    struct sg_diag d2 = {0};
    ck_assert_int_eq(run_one(&w, bad, out, &d2), SG_ESHAPE);
    ck_assert_msg(strstr(d2.msg, "float32[1,5,4]") && strstr(d2.msg, "float32[1,1,2]"),
                  "message: %s", d2.msg);
    unref_all(in, 5);
    unref_all(cin, 3);
    one_free(&t);
    one_free(&u);
    one_free(&v);
    one_free(&w);
}
END_TEST

/* ----------------------------------------------------------- text ops */

static sg_rt_value *strings_of(const int64_t *dims, uint32_t rank, const char *const *v)
{
    sg_rt_value *t = tensor(SG_DTYPE_STRING, dims, rank);
    sg_bytes *b = t->data;
    for (int64_t i = 0; i < t->numel; i++)
        b[i] = (sg_bytes){(const uint8_t *)v[i], strlen(v[i])};
    return t;
}

static void ck_strings(const sg_rt_value *got, const char *const *want, int64_t n, const char *what)
{
    ck_assert_msg(got->dtype == SG_DTYPE_STRING && got->numel == n, "%s: %lld strings, want %lld",
                  what, (long long)got->numel, (long long)n);
    const sg_bytes *b = got->data;
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(b[i].len == strlen(want[i]) && !memcmp(b[i].data, want[i], b[i].len),
                      "%s[%lld]: got '%.*s', want '%s'", what, (long long)i, (int)b[i].len,
                      (const char *)b[i].data, want[i]);
}

START_TEST(test_string_normalizer)
{
    static sg_bytes stop[2] = {{(const uint8_t *)"the", 3}, {(const uint8_t *)"A", 1}};
    const char *x[6] = {"The", "cat", "a", "THE", "Dog", "the"};
    int64_t xd[2] = {1, 6};
    sg_rt_value *in[1] = {strings_of(xd, 2, x)};
    struct sg_diag d = {0};
    sg_rt_value *out[1] = {0};
    /* case-insensitive stopwords, then upper case; shape stays [1, C'] */
    struct one t = one_node("StringNormalizer", 10, 1, 0, 1);
    set_attr_strings(&t, "stopwords", stop, 2);
    ck_assert_int_eq(sg_node_set_attr_string(t.n, "case_change_action", "UPPER"), SG_OK);
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    const char *w1[2] = {"CAT", "DOG"};
    ck_assert_int_eq(out[0]->rank, 2);
    ck_strings(out[0], w1, 2, "upper");
    unref_all(out, 1);
    /* case-sensitive: only exact "the" goes */
    ck_assert_int_eq(sg_node_set_attr_int(t.n, "is_case_sensitive", 1), SG_OK);
    ck_assert_int_eq(sg_node_set_attr_string(t.n, "case_change_action", "LOWER"), SG_OK);
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    const char *w2[5] = {"the", "cat", "a", "the", "dog"};
    ck_strings(out[0], w2, 5, "lower");
    unref_all(out, 1);
    /* non-ASCII text with a case change needs locale data: an error */
    const char *y[2] = {"caf\xc3\xa9", "ok"};
    int64_t yd[1] = {2};
    sg_rt_value *in2[1] = {strings_of(yd, 1, y)};
    struct one u = one_node("StringNormalizer", 10, 1, 0, 1);
    ck_assert_int_eq(sg_node_set_attr_string(u.n, "case_change_action", "UPPER"), SG_OK);
    ck_assert_int_eq(run_one(&u, in2, out, &d), SG_EUNSUPPORTED);
    ck_assert_msg(strstr(d.msg, "StringNormalizer") && strstr(d.msg, "locale"), "message: %s",
                  d.msg);
    /* ... but passes through untouched without one */
    struct sg_diag d2 = {0};
    ck_assert_int_eq(sg_node_set_attr_string(u.n, "case_change_action", "NONE"), SG_OK);
    ck_assert_ok(run_one(&u, in2, out, &d2), &d2);
    ck_strings(out[0], y, 2, "none");
    unref_all(out, 1);
    /* Turkish case mapping is refused */
    struct sg_diag d3 = {0};
    ck_assert_int_eq(sg_node_set_attr_string(u.n, "case_change_action", "LOWER"), SG_OK);
    ck_assert_int_eq(sg_node_set_attr_string(u.n, "locale", "tr_TR"), SG_OK);
    ck_assert_int_eq(run_one(&u, in, out, &d3), SG_EUNSUPPORTED);
    unref_all(in, 1);
    unref_all(in2, 1);
    one_free(&t);
    one_free(&u);
}
END_TEST

/* TfIdfVectorizer against plain counting: every (n, skip, start) tried
 * once, unigrams only at skip 0, the pool searched linearly. */
START_TEST(test_tfidf_vs_reference)
{
    static const char *modes[3] = {"TF", "IDF", "TFIDF"};
    const char *mode = modes[_i % 3];
    bool i32 = _i >= 3;
    const int64_t pool[] = {2, 3, 5, 4,       /* unigrams */
                            5, 6, 7, 8, 6, 7, /* bigrams */
                            2, 3, 4};         /* one trigram */
    const int64_t counts[3] = {0, 4, 10}, indexes[8] = {0, 1, 2, 3, 4, 5, 6, 2};
    const float weights[8] = {0.5f, 1, 2, 3, 4, 5, 6, 7};
    const int64_t minn = 1, maxn = 3, maxskip = 2;
    int64_t xd[2] = {2, 8};
    const double x[16] = {2, 3, 5, 4, 5, 6, 7, 8, 6, 6, 7, 2, 8, 3, 9, 4};
    sg_rt_value *in[1] = {tensor_of(i32 ? SG_DTYPE_INT32 : SG_DTYPE_INT64, xd, 2, x)};
    struct one t = one_node("TfIdfVectorizer", 9, 1, 0, 1);
    sg_node_set_attr_int(t.n, "min_gram_length", minn);
    sg_node_set_attr_int(t.n, "max_gram_length", maxn);
    sg_node_set_attr_int(t.n, "max_skip_count", maxskip);
    sg_node_set_attr_string(t.n, "mode", mode);
    sg_node_set_attr_ints(t.n, "pool_int64s", pool, 13);
    sg_node_set_attr_ints(t.n, "ngram_counts", counts, 3);
    sg_node_set_attr_ints(t.n, "ngram_indexes", indexes, 8);
    sg_node_set_attr_floats(t.n, "weights", weights, 8);
    double want[2 * 7] = {0};
    for (int r = 0; r < 2; r++) {
        double cnt[7] = {0}, wcol[7];
        /* ONNX Runtime and the ONNX reference weigh output column c by
         * weights[c], whichever n-grams map there */
        for (int c = 0; c < 7; c++)
            wcol[c] = weights[c];
        for (int64_t n = minn; n <= maxn; n++)
            for (int64_t skip = 0; skip <= (n == 1 ? 0 : maxskip); skip++)
                for (int64_t s = 0; s + (n - 1) * (skip + 1) < 8; s++) {
                    int g = 0;
                    for (int64_t len = 1; len <= 3; len++) {
                        int64_t lo = counts[len - 1], hi = len < 3 ? counts[len] : 13;
                        for (int64_t p = lo; p < hi; p += len, g++) {
                            bool match = len == n;
                            for (int64_t i = 0; match && i < n; i++)
                                match = pool[p + i] == (int64_t)x[r * 8 + s + i * (skip + 1)];
                            if (match)
                                cnt[indexes[g]] += 1;
                        }
                    }
                }
        for (int c = 0; c < 7; c++)
            want[r * 7 + c] = _i % 3 == 0   ? cnt[c]
                              : _i % 3 == 1 ? (cnt[c] > 0 ? wcol[c] : 0)
                                            : cnt[c] * wcol[c];
    }
    sg_rt_value *out[1] = {0};
    struct sg_diag d = {0};
    ck_assert_ok(run_one(&t, in, out, &d), &d);
    int64_t od[2] = {2, 7};
    ck_close(out[0], want, od, 2, 0, 1e-7, mode);
    unref_all(out, 1);
    unref_all(in, 1);
    one_free(&t);
}
END_TEST

Suite *suite_kernels_seq(void)
{
    Suite *s = suite_create("kernels_seq");
    TCase *tc = tcase_create("rnn");
    tcase_add_loop_test(tc, test_rnn_vs_reference, 0, (int)(sizeof rcases / sizeof rcases[0]));
    tcase_add_test(tc, test_rnn_bad_shape);
    suite_add_tcase(s, tc);
    tc = tcase_create("resize");
    tcase_add_loop_test(tc, test_resize_vs_reference, 0, (int)(sizeof zcases / sizeof zcases[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("quantize");
    tcase_add_test(tc, test_quantize_axis_ties_saturation);
    tcase_add_test(tc, test_quantize_blocked_int16);
    tcase_add_test(tc, test_dequantize_float16);
    tcase_add_test(tc, test_quantize_bad_scale);
    tcase_add_test(tc, test_dynamic_quantize_zeros);
    tcase_add_loop_test(tc, test_integer_matmul, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("linalg");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_einsum_vs_numpy, 0, (int)(sizeof ecases / sizeof ecases[0]));
    tcase_add_test(tc, test_einsum_bad_sizes);
    tcase_add_test(tc, test_det_vs_numpy);
    suite_add_tcase(s, tc);
    tc = tcase_create("signal");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_dft_vs_numpy, 0, (int)(sizeof fcases / sizeof fcases[0]));
    tcase_add_test(tc, test_stft_complex_window);
    tcase_add_test(tc, test_mel_out_of_range);
    suite_add_tcase(s, tc);
    tc = tcase_create("detection_text");
    tcase_add_test(tc, test_nms_rules);
    tcase_add_test(tc, test_string_normalizer);
    tcase_add_loop_test(tc, test_tfidf_vs_reference, 0, 6);
    suite_add_tcase(s, tc);
    return s;
}
