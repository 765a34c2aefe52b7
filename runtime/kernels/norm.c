/*
 * norm.c - normalisations: BatchNormalization (inference, and training mode
 * with running statistics), LayerNormalization (with Mean and InvStdDev
 * outputs), InstanceNormalization, LRN and MeanVarianceNormalization.
 *
 * Statistics accumulate in double; float32 tensors take a direct path.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

/* Per-channel y = x * a[c] + b[c] over X [N, C, spatial...]. */
static void channel_affine(const sg_rt_value *X, sg_rt_value *Y, const double *a, const double *b)
{
    int64_t N = X->dims[0], C = X->rank > 1 ? X->dims[1] : 1;
    int64_t S = N && C ? X->numel / (N * C) : 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (n * C + c) * S;
            if (X->dtype == SG_DTYPE_FLOAT) {
                const float *x = (const float *)X->data + base;
                float *y = (float *)Y->data + base, fa = (float)a[c], fb = (float)b[c];
                for (int64_t s = 0; s < S; s++)
                    y[s] = x[s] * fa + fb;
            } else {
                for (int64_t s = 0; s < S; s++)
                    sg_rt_set_f64(Y, base + s, sg_rt_get_f64(X, base + s) * a[c] + b[c]);
            }
        }
}

static sg_status check_channel_param(struct sg_kctx *k, const sg_rt_value *p, int64_t C,
                                     const char *what)
{
    if (!p || p->numel != C)
        return sg_kfail(k, SG_ESHAPE, "%s %s does not hold %lld channel values", what,
                        p ? sg_kshape(k, p) : "(missing)", (long long)C);
    return SG_OK;
}

static sg_status run_batchnorm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_rt_value *Sc = sg_kin(k, 1), *B = sg_kin(k, 2), *M = sg_kin(k, 3), *V = sg_kin(k, 4);
    if (X->rank < 2)
        return sg_kfail(k, SG_ESHAPE, "needs [N, C, ...], got %s", sg_kshape(k, X));
    int64_t N = X->dims[0], C = X->dims[1], S = N && C ? X->numel / (N * C) : 0;
    sg_status st;
    if ((st = check_channel_param(k, Sc, C, "scale")) || (st = check_channel_param(k, B, C, "B")) ||
        (st = check_channel_param(k, M, C, "mean")) || (st = check_channel_param(k, V, C, "var")))
        return st;
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    double mom = sg_kattr_float(k, "momentum", 0.9f);
    bool training = k->opset >= 14 && sg_kattr_int(k, "training_mode", 0) != 0;
    double *a = sg_kscratch(k, (size_t)(C + 1) * sizeof *a);
    double *b = sg_kscratch(k, (size_t)(C + 1) * sizeof *b);
    double *mean = sg_kscratch(k, (size_t)(C + 1) * sizeof *mean);
    double *var = sg_kscratch(k, (size_t)(C + 1) * sizeof *var);
    if (!a || !b || !mean || !var)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t c = 0; c < C; c++) {
        mean[c] = sg_rt_get_f64(M, c);
        var[c] = sg_rt_get_f64(V, c);
    }
    if (training) {
        double cnt = (double)(N * S);
        for (int64_t c = 0; c < C; c++) {
            double s = 0, q = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < S; i++)
                    s += sg_rt_get_f64(X, (n * C + c) * S + i);
            double m = cnt ? s / cnt : 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < S; i++) {
                    double d = sg_rt_get_f64(X, (n * C + c) * S + i) - m;
                    q += d * d;
                }
            double v = cnt ? q / cnt : 0;
            mean[c] = mean[c] * mom + m * (1 - mom); /* running statistics out */
            var[c] = var[c] * mom + v * (1 - mom);
            a[c] = sg_rt_get_f64(Sc, c) / sqrt(v + eps);
            b[c] = sg_rt_get_f64(B, c) - m * a[c];
        }
    } else {
        for (int64_t c = 0; c < C; c++) {
            a[c] = sg_rt_get_f64(Sc, c) / sqrt(var[c] + eps);
            b[c] = sg_rt_get_f64(B, c) - mean[c] * a[c];
        }
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    channel_affine(X, Y, a, b);
    for (uint32_t o = 1; o < 3 && training; o++) {
        if (!sg_kout_wanted(k, o))
            continue;
        sg_rt_value *R;
        const sg_rt_value *like = o == 1 ? M : V;
        if ((st = sg_kout(k, o, like->dtype, like->dims, like->rank, &R)))
            return st;
        for (int64_t c = 0; c < C; c++)
            sg_rt_set_f64(R, c, o == 1 ? mean[c] : var[c]);
    }
    return SG_OK;
}

static sg_status run_instancenorm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *Sc = sg_kin(k, 1), *B = sg_kin(k, 2);
    if (X->rank < 2)
        return sg_kfail(k, SG_ESHAPE, "needs [N, C, ...], got %s", sg_kshape(k, X));
    int64_t N = X->dims[0], C = X->dims[1], S = N && C ? X->numel / (N * C) : 0;
    sg_status st;
    if ((st = check_channel_param(k, Sc, C, "scale")) || (st = check_channel_param(k, B, C, "B")))
        return st;
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (n * C + c) * S;
            double s = 0, q = 0;
            for (int64_t i = 0; i < S; i++)
                s += sg_rt_get_f64(X, base + i);
            double m = S ? s / (double)S : 0;
            for (int64_t i = 0; i < S; i++) {
                double d = sg_rt_get_f64(X, base + i) - m;
                q += d * d;
            }
            double a = sg_rt_get_f64(Sc, c) / sqrt((S ? q / (double)S : 0) + eps);
            double b = sg_rt_get_f64(B, c) - m * a;
            for (int64_t i = 0; i < S; i++)
                sg_rt_set_f64(Y, base + i, sg_rt_get_f64(X, base + i) * a + b);
        }
    return SG_OK;
}

static sg_status run_layernorm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *Sc = sg_kin(k, 1), *B = sg_kin(k, 2);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", -1), X->rank, &axis);
    if (st)
        return st;
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    int64_t rows = 1, cols = 1;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (d < axis)
            rows *= X->dims[d];
        else
            cols *= X->dims[d];
    }
    /* Scale and B broadcast unidirectionally to X's normalised dims. */
    struct sg_bcast bs, bb;
    const int64_t *tail = X->dims + axis;
    uint32_t tr = X->rank - axis;
    const int64_t *dl[2] = {tail, Sc->dims};
    uint32_t rl[2] = {tr, Sc->rank};
    if ((st = sg_bcast_init_dims(k, &bs, 2, dl, rl)))
        return st;
    if (bs.numel != cols || bs.rank != tr)
        return sg_kfail(k, SG_ESHAPE, "scale %s does not fit %s at axis %u", sg_kshape(k, Sc),
                        sg_kshape(k, X), axis);
    if (B) {
        dl[1] = B->dims;
        rl[1] = B->rank;
        if ((st = sg_bcast_init_dims(k, &bb, 2, dl, rl)))
            return st;
        if (bb.numel != cols || bb.rank != tr)
            return sg_kfail(k, SG_ESHAPE, "B %s does not fit %s at axis %u", sg_kshape(k, B),
                            sg_kshape(k, X), axis);
    }
    double *sc = sg_kscratch(k, (size_t)(cols + 1) * sizeof *sc);
    double *bi = sg_kscratch(k, (size_t)(cols + 1) * sizeof *bi);
    double *row = sg_kscratch(k, (size_t)(cols + 1) * sizeof *row);
    if (!sc || !bi || !row)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    while (sg_bcast_next(&bs))
        for (int64_t i = 0; i < bs.run; i++)
            sc[bs.pos + i] = sg_rt_get_f64(Sc, bs.off[1] + i * bs.step[1]);
    for (int64_t i = 0; i < cols; i++)
        bi[i] = 0;
    if (B)
        while (sg_bcast_next(&bb))
            for (int64_t i = 0; i < bb.run; i++)
                bi[bb.pos + i] = sg_rt_get_f64(B, bb.off[1] + i * bb.step[1]);
    sg_rt_value *Y, *Mo = NULL, *Io = NULL;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    int64_t sdims[SG_MAX_RANK];
    for (uint32_t d = 0; d < X->rank; d++)
        sdims[d] = d < axis ? X->dims[d] : 1;
    int32_t stash = (int32_t)sg_kattr_int(k, "stash_type", SG_DTYPE_FLOAT);
    if (sg_kout_wanted(k, 1) && (st = sg_kout(k, 1, stash, sdims, X->rank, &Mo)))
        return st;
    if (sg_kout_wanted(k, 2) && (st = sg_kout(k, 2, stash, sdims, X->rank, &Io)))
        return st;
    for (int64_t r = 0; r < rows; r++) {
        double s = 0, q = 0;
        for (int64_t i = 0; i < cols; i++)
            s += row[i] = sg_rt_get_f64(X, r * cols + i);
        double m = cols ? s / (double)cols : 0;
        for (int64_t i = 0; i < cols; i++)
            q += (row[i] - m) * (row[i] - m);
        double inv = 1.0 / sqrt((cols ? q / (double)cols : 0) + eps);
        for (int64_t i = 0; i < cols; i++)
            sg_rt_set_f64(Y, r * cols + i, (row[i] - m) * inv * sc[i] + bi[i]);
        if (Mo)
            sg_rt_set_f64(Mo, r, m);
        if (Io)
            sg_rt_set_f64(Io, r, inv);
    }
    return SG_OK;
}

static sg_status run_lrn(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t size = sg_kattr_int(k, "size", 0);
    if (X->rank < 2 || size <= 0)
        return sg_kfail(k, SG_EINVAL, "needs [N, C, ...] and size > 0, got %s and %lld",
                        sg_kshape(k, X), (long long)size);
    double alpha = sg_kattr_float(k, "alpha", 1e-4f), beta = sg_kattr_float(k, "beta", 0.75f);
    double bias = sg_kattr_float(k, "bias", 1.0f);
    int64_t N = X->dims[0], C = X->dims[1], S = N && C ? X->numel / (N * C) : 0;
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t s = 0; s < S; s++) {
                double sq = 0;
                for (int64_t j = c - lo; j <= c + hi; j++)
                    if (j >= 0 && j < C) {
                        double v = sg_rt_get_f64(X, (n * C + j) * S + s);
                        sq += v * v;
                    }
                int64_t i = (n * C + c) * S + s;
                sg_rt_set_f64(Y, i,
                              sg_rt_get_f64(X, i) / pow(bias + alpha / (double)size * sq, beta));
            }
    return SG_OK;
}

static sg_status run_mvn(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *axes;
    int64_t na = sg_kattr_ints(k, "axes", &axes);
    static const int64_t dflt[3] = {0, 2, 3};
    if (na < 0) {
        axes = dflt;
        na = 3;
    }
    bool red[SG_MAX_RANK] = {false};
    for (int64_t i = 0; i < na; i++) {
        uint32_t a;
        sg_status st = sg_kaxis(k, axes[i], X->rank, &a);
        if (st)
            return st;
        red[a] = true;
    }
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    /* Group index of each element: its coordinates on the kept axes. */
    int64_t groups = 1;
    for (uint32_t d = 0; d < X->rank; d++)
        if (!red[d])
            groups *= X->dims[d];
    double *sum = sg_kscratch(k, (size_t)(groups + 1) * sizeof *sum);
    double *sq = sg_kscratch(k, (size_t)(groups + 1) * sizeof *sq);
    int64_t *gid = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *gid);
    if (!sum || !sq || !gid)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    memset(sum, 0, (size_t)groups * sizeof *sum);
    memset(sq, 0, (size_t)groups * sizeof *sq);
    int64_t idx[SG_MAX_RANK] = {0};
    for (int64_t i = 0; i < X->numel; i++) {
        int64_t g = 0;
        for (uint32_t d = 0; d < X->rank; d++)
            if (!red[d])
                g = g * X->dims[d] + idx[d];
        gid[i] = g;
        sum[g] += sg_rt_get_f64(X, i);
        for (int d = (int)X->rank - 1; d >= 0; d--) {
            if (++idx[d] < X->dims[d])
                break;
            idx[d] = 0;
        }
    }
    double cnt = groups ? (double)X->numel / (double)groups : 1;
    for (int64_t i = 0; i < X->numel; i++) {
        double dv = sg_rt_get_f64(X, i) - sum[gid[i]] / cnt;
        sq[gid[i]] += dv * dv;
    }
    for (int64_t i = 0; i < X->numel; i++) {
        double m = sum[gid[i]] / cnt, sd = sqrt(sq[gid[i]] / cnt);
        sg_rt_set_f64(Y, i, (sg_rt_get_f64(X, i) - m) / (sd + 1e-9));
    }
    return SG_OK;
}

#define FL SG_KT_FLOATS
static const struct sg_kernel kernels[] = {
    {"", "BatchNormalization", 1, 0, FL, 0, run_batchnorm},
    {"", "InstanceNormalization", 1, 0, FL, 0, run_instancenorm},
    {"", "LayerNormalization", 17, 0, FL, 0, run_layernorm},
    {"", "LRN", 1, 0, FL, 0, run_lrn},
    {"", "MeanVarianceNormalization", 9, 0, FL, 0, run_mvn},
};
SG_KERNEL_FAMILY(norm, kernels);
