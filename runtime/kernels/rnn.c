/*
 * rnn.c - RNN, GRU and LSTM: forward, reverse and bidirectional, both
 * layouts, sequence_lens, initial states, biases, peepholes, clip,
 * linear_before_reset, input_forget, and the activation list with its
 * alpha/beta values. Computed in float64 with BLAS (dgemm) for the input
 * projection of all time steps at once and for each recurrent step.
 */
#include "rt_impl.h"

#include <cblas.h>
#include <math.h>
#include <string.h>
#include <strings.h>

enum cell { RNN, GRU, LSTM };

enum act {
    A_RELU,
    A_TANH,
    A_SIGMOID,
    A_AFFINE,
    A_LEAKY,
    A_THRESH,
    A_SCALEDTANH,
    A_HARDSIG,
    A_ELU,
    A_SOFTSIGN,
    A_SOFTPLUS
};

struct actfn {
    enum act a;
    double alpha, beta;
};

static const struct {
    const char *name;
    enum act a;
    int params; /* 0: none, 1: alpha, 2: alpha and beta */
    double da, db;
} acts[] = {
    {"Relu", A_RELU, 0, 0, 0},
    {"Tanh", A_TANH, 0, 0, 0},
    {"Sigmoid", A_SIGMOID, 0, 0, 0},
    {"Affine", A_AFFINE, 2, 1, 0},
    {"LeakyRelu", A_LEAKY, 1, 0.01, 0},
    {"ThresholdedRelu", A_THRESH, 1, 1, 0},
    {"ScaledTanh", A_SCALEDTANH, 2, 1, 1},
    {"HardSigmoid", A_HARDSIG, 2, 0.2, 0.5},
    {"Elu", A_ELU, 1, 1, 0},
    {"Softsign", A_SOFTSIGN, 0, 0, 0},
    {"Softplus", A_SOFTPLUS, 0, 0, 0},
};

static double apply(const struct actfn *f, double x)
{
    switch (f->a) {
    case A_RELU:
        return x > 0 ? x : 0;
    case A_TANH:
        return tanh(x);
    case A_SIGMOID:
        return 1 / (1 + exp(-x));
    case A_AFFINE:
        return f->alpha * x + f->beta;
    case A_LEAKY:
        return x < 0 ? f->alpha * x : x;
    case A_THRESH:
        return x > f->alpha ? x : 0;
    case A_SCALEDTANH:
        return f->alpha * tanh(f->beta * x);
    case A_HARDSIG: {
        double v = f->alpha * x + f->beta;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case A_ELU:
        return x < 0 ? f->alpha * (exp(x) - 1) : x;
    case A_SOFTSIGN:
        return x / (1 + fabs(x));
    default:
        return log1p(exp(x));
    }
}

/* The activations of the node: n_per functions per direction. */
static sg_status read_acts(struct sg_kctx *k, enum cell cell, int ndir, struct actfn *out)
{
    int n_per = cell == RNN ? 1 : cell == GRU ? 2 : 3;
    static const char *const dflt[3][3] = {
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const sg_attr *a = sg_kattr(k, "activations");
    const float *al = NULL, *be = NULL;
    int64_t nal = sg_kattr_floats(k, "activation_alpha", &al);
    int64_t nbe = sg_kattr_floats(k, "activation_beta", &be);
    int64_t ia = 0, ib = 0;
    if (a && (int64_t)a->n_strings != n_per * ndir && (int64_t)a->n_strings != n_per)
        return sg_kfail(k, SG_EINVAL, "%zu activations for %d directions", a->n_strings, ndir);
    for (int i = 0; i < n_per * ndir; i++) {
        char name[32] = "";
        if (a) {
            const sg_bytes *s = &a->strings[(size_t)i % a->n_strings];
            snprintf(name, sizeof name, "%.*s", (int)s->len, (const char *)s->data);
        } else {
            snprintf(name, sizeof name, "%s", dflt[cell][i % n_per]);
        }
        size_t j = 0;
        while (j < sizeof acts / sizeof acts[0] && strcasecmp(acts[j].name, name) != 0)
            j++;
        if (j == sizeof acts / sizeof acts[0])
            return sg_kfail(k, SG_EUNSUPPORTED, "unknown activation '%s'", name);
        out[i].a = acts[j].a;
        out[i].alpha = acts[j].params >= 1 && ia < nal ? al[ia++] : acts[j].da;
        out[i].beta = acts[j].params >= 2 && ib < nbe ? be[ib++] : acts[j].db;
    }
    return SG_OK;
}

static sg_status run_rnn(struct sg_kctx *k)
{
    const char *op = k->node->op_type;
    enum cell cell = strcmp(op, "LSTM") == 0 ? LSTM : strcmp(op, "GRU") == 0 ? GRU : RNN;
    int G = cell == LSTM ? 4 : cell == GRU ? 3 : 1;
    const sg_rt_value *X = sg_kin(k, 0), *W = sg_kin(k, 1), *R = sg_kin(k, 2);
    const sg_rt_value *B = sg_kin(k, 3), *L = sg_kin(k, 4), *H0 = sg_kin(k, 5);
    const sg_rt_value *C0 = cell == LSTM ? sg_kin(k, 6) : NULL;
    const sg_rt_value *P = cell == LSTM ? sg_kin(k, 7) : NULL;
    bool layout = sg_kattr_int(k, "layout", 0) != 0;
    const char *dir = sg_kattr_string(k, "direction", "forward");
    int ndir = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    bool reverse_only = strcmp(dir, "reverse") == 0;
    if (!reverse_only && ndir == 1 && strcmp(dir, "forward") != 0)
        return sg_kfail(k, SG_EINVAL, "unknown direction '%s'", dir);
    if (X->rank != 3 || W->rank != 3 || R->rank != 3)
        return sg_kfail(k, SG_ESHAPE, "X %s, W %s, R %s must be 3-d", sg_kshape(k, X),
                        sg_kshape(k, W), sg_kshape(k, R));
    int64_t S = layout ? X->dims[1] : X->dims[0], Bt = layout ? X->dims[0] : X->dims[1];
    int64_t In = X->dims[2];
    int64_t H = sg_kattr_int(k, "hidden_size", R->dims[2]);
    if (W->dims[0] != ndir || W->dims[1] != G * H || W->dims[2] != In || R->dims[0] != ndir ||
        R->dims[1] != G * H || R->dims[2] != H)
        return sg_kfail(k, SG_ESHAPE, "W %s or R %s does not fit X %s, %d directions, hidden %lld",
                        sg_kshape(k, W), sg_kshape(k, R), sg_kshape(k, X), ndir, (long long)H);
    if (B && (B->numel != ndir * 2 * G * H))
        return sg_kfail(k, SG_ESHAPE, "B %s does not hold %d x %lld values", sg_kshape(k, B), ndir,
                        (long long)(2 * G * H));
    if (P && P->numel != ndir * 3 * H)
        return sg_kfail(k, SG_ESHAPE, "P %s does not hold %d x %lld values", sg_kshape(k, P), ndir,
                        (long long)(3 * H));
    if ((H0 && H0->numel != ndir * Bt * H) || (C0 && C0->numel != ndir * Bt * H))
        return sg_kfail(k, SG_ESHAPE, "initial state does not hold %d x %lld x %lld values", ndir,
                        (long long)Bt, (long long)H);
    struct actfn fns[6];
    sg_status st = read_acts(k, cell, ndir, fns);
    if (st)
        return st;
    int n_per = cell == RNN ? 1 : cell == GRU ? 2 : 3;
    const sg_attr *clip_a = sg_kattr(k, "clip");
    double clip = clip_a && clip_a->type == SG_ATTR_FLOAT ? clip_a->f : 0;
    bool lbr = sg_kattr_int(k, "linear_before_reset", 0) != 0;
    bool coupled = sg_kattr_int(k, "input_forget", 0) != 0;

    int64_t ydims[4], hdims[3];
    if (layout) {
        ydims[0] = Bt, ydims[1] = S, ydims[2] = ndir, ydims[3] = H;
        hdims[0] = Bt, hdims[1] = ndir, hdims[2] = H;
    } else {
        ydims[0] = S, ydims[1] = ndir, ydims[2] = Bt, ydims[3] = H;
        hdims[0] = ndir, hdims[1] = Bt, hdims[2] = H;
    }
    sg_rt_value *Y = NULL, *YH = NULL, *YC = NULL;
    if ((sg_kout_wanted(k, 0) && (st = sg_kout(k, 0, X->dtype, ydims, 4, &Y))) ||
        (sg_kout_wanted(k, 1) && (st = sg_kout(k, 1, X->dtype, hdims, 3, &YH))) ||
        (cell == LSTM && sg_kout_wanted(k, 2) && (st = sg_kout(k, 2, X->dtype, hdims, 3, &YC))))
        return st;

    size_t gh = (size_t)(G * H);
    double *x = sg_kscratch(k, (size_t)(S * Bt * In + 1) * sizeof(double));
    double *w = sg_kscratch(k, (gh * (size_t)In + 1) * sizeof(double));
    double *rr = sg_kscratch(k, (gh * (size_t)H + 1) * sizeof(double));
    double *xw = sg_kscratch(k, ((size_t)(S * Bt) * gh + 1) * sizeof(double));
    double *hr = sg_kscratch(k, ((size_t)Bt * gh + 1) * sizeof(double));
    double *h = sg_kscratch(k, (size_t)(Bt * H + 1) * sizeof(double));
    double *c = sg_kscratch(k, (size_t)(Bt * H + 1) * sizeof(double));
    double *hn = sg_kscratch(k, (size_t)(Bt * H + 1) * sizeof(double));
    double *rh = sg_kscratch(k, (size_t)(Bt * H + 1) * sizeof(double));
    if (!x || !w || !rr || !xw || !hr || !h || !c || !hn || !rh)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    /* X as [S, Bt, In] */
    for (int64_t t = 0; t < S; t++)
        for (int64_t b = 0; b < Bt; b++)
            for (int64_t i = 0; i < In; i++)
                x[(t * Bt + b) * In + i] =
                    sg_rt_get_f64(X, layout ? (b * S + t) * In + i : (t * Bt + b) * In + i);
    for (int d = 0; d < ndir; d++) {
        bool rev = reverse_only || d == 1;
        const struct actfn *f = &fns[d * n_per], *g = n_per > 1 ? &fns[d * n_per + 1] : NULL;
        const struct actfn *hf = n_per > 2 ? &fns[d * n_per + 2] : NULL;
        for (size_t i = 0; i < gh * (size_t)In; i++)
            w[i] = sg_rt_get_f64(W, (int64_t)((size_t)d * gh * (size_t)In + i));
        for (size_t i = 0; i < gh * (size_t)H; i++)
            rr[i] = sg_rt_get_f64(R, (int64_t)((size_t)d * gh * (size_t)H + i));
        /* xw[t, b, :] = x[t, b, :] W^T + Wb */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(S * Bt), (int)gh, (int)In, 1.0,
                    x, (int)In, w, (int)In, 0.0, xw, (int)gh);
        if (B)
            for (int64_t r = 0; r < S * Bt; r++)
                for (size_t j = 0; j < gh; j++)
                    xw[(size_t)r * gh + j] += sg_rt_get_f64(B, (int64_t)((size_t)d * 2 * gh + j));
        for (int64_t b = 0; b < Bt; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t hi = layout ? (b * ndir + d) * H + j : (d * Bt + b) * H + j;
                h[b * H + j] = H0 ? sg_rt_get_f64(H0, hi) : 0;
                c[b * H + j] = C0 ? sg_rt_get_f64(C0, hi) : 0;
            }
        for (int64_t step = 0; step < S; step++) {
            /* hr = h R^T + Rb */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Bt, (int)gh, (int)H, 1.0, h,
                        (int)H, rr, (int)H, 0.0, hr, (int)gh);
            if (B)
                for (int64_t b = 0; b < Bt; b++)
                    for (size_t j = 0; j < gh; j++)
                        hr[(size_t)b * gh + j] +=
                            sg_rt_get_f64(B, (int64_t)((size_t)d * 2 * gh + gh + j));
            for (int64_t b = 0; b < Bt; b++) {
                int64_t len = L ? sg_rt_get_i64(L, b) : S;
                int64_t t = rev ? len - 1 - step : step;
                bool live = step < len;
                if (!live)
                    continue;
                const double *xg = xw + (size_t)(t * Bt + b) * gh;
                const double *hg = hr + (size_t)b * gh;
                double *hb = h + b * H, *cb = c + b * H, *nb = hn + b * H;
#define CLIP(v) (clip > 0 ? ((v) < -clip ? -clip : (v) > clip ? clip : (v)) : (v))
                if (cell == RNN) {
                    for (int64_t j = 0; j < H; j++)
                        nb[j] = apply(f, CLIP(xg[j] + hg[j]));
                } else if (cell == GRU) {
                    /* gates z, r, h */
                    for (int64_t j = 0; j < H; j++)
                        rh[b * H + j] = apply(f, CLIP(xg[H + j] + hg[H + j]));
                    if (!lbr) {
                        /* (r * h) Rh^T + Rbh */
                        for (int64_t j = 0; j < H; j++) {
                            double s = 0;
                            for (int64_t q = 0; q < H; q++)
                                s +=
                                    rh[b * H + q] * hb[q] * rr[(size_t)(2 * H + j) * (size_t)H + q];
                            double rb = B ? sg_rt_get_f64(B, (int64_t)((size_t)d * 2 * gh + gh +
                                                                       (size_t)(2 * H + j)))
                                          : 0;
                            double z = apply(f, CLIP(xg[j] + hg[j]));
                            double hh = apply(g, CLIP(xg[2 * H + j] + s + rb));
                            nb[j] = (1 - z) * hh + z * hb[j];
                        }
                    } else {
                        for (int64_t j = 0; j < H; j++) {
                            double z = apply(f, CLIP(xg[j] + hg[j]));
                            double hh =
                                apply(g, CLIP(xg[2 * H + j] + rh[b * H + j] * hg[2 * H + j]));
                            nb[j] = (1 - z) * hh + z * hb[j];
                        }
                    }
                } else {
                    /* gates i, o, f, c; peepholes i, o, f */
                    for (int64_t j = 0; j < H; j++) {
                        double pi = P ? sg_rt_get_f64(P, d * 3 * H + j) : 0;
                        double po = P ? sg_rt_get_f64(P, d * 3 * H + H + j) : 0;
                        double pf = P ? sg_rt_get_f64(P, d * 3 * H + 2 * H + j) : 0;
                        double ig = apply(f, CLIP(xg[j] + hg[j] + pi * cb[j]));
                        double fg =
                            coupled ? 1 - ig
                                    : apply(f, CLIP(xg[2 * H + j] + hg[2 * H + j] + pf * cb[j]));
                        double cg = apply(g, CLIP(xg[3 * H + j] + hg[3 * H + j]));
                        double cn = fg * cb[j] + ig * cg;
                        double og = apply(f, CLIP(xg[H + j] + hg[H + j] + po * cn));
                        rh[b * H + j] = cn;
                        nb[j] = og * apply(hf, cn);
                    }
                    for (int64_t j = 0; j < H; j++)
                        cb[j] = rh[b * H + j];
                }
#undef CLIP
                for (int64_t j = 0; j < H; j++) {
                    hb[j] = nb[j];
                    if (Y) {
                        int64_t yi = layout ? ((b * S + t) * ndir + d) * H + j
                                            : ((t * ndir + d) * Bt + b) * H + j;
                        sg_rt_set_f64(Y, yi, nb[j]);
                    }
                }
            }
        }
        for (int64_t b = 0; b < Bt; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t hi = layout ? (b * ndir + d) * H + j : (d * Bt + b) * H + j;
                if (YH)
                    sg_rt_set_f64(YH, hi, h[b * H + j]);
                if (YC)
                    sg_rt_set_f64(YC, hi, c[b * H + j]);
            }
    }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "RNN", 1, 0, SG_KT_FLOATS, 0, run_rnn},
    {"", "GRU", 1, 0, SG_KT_FLOATS, 0, run_rnn},
    {"", "LSTM", 1, 0, SG_KT_FLOATS, 0, run_rnn},
};
SG_KERNEL_FAMILY(rnn, kernels);
