/*
 * norm.c - normalisations: BatchNormalization (inference, and training
 * mode with its statistics outputs), InstanceNormalization,
 * LayerNormalization, GroupNormalization, LRN, MeanVarianceNormalization,
 * LpNormalization.
 *
 * Statistics (means, variances, norms) accumulate in float64 whatever the
 * tensor type; the elementwise pass runs in the tensor's type for float32
 * and float64, and in float32 for float16 and bfloat16, which are widened
 * on the way in and rounded on the way out.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

static bool is_half(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT16 || dt == SG_DTYPE_BFLOAT16;
}

/*
 * The elements of X for computing: float32 (f) or float64 (d), and where
 * the output goes (Y's own data, or float32 scratch for half types that
 * finish_out() rounds into Y).
 */
struct io {
    const float *xf;
    const double *xd;
    float *yf;
    double *yd;
};

static sg_status open_io(struct sg_kctx *k, const sg_rt_value *X, sg_rt_value *Y, struct io *io)
{
    memset(io, 0, sizeof *io);
    if (X->dtype == SG_DTYPE_DOUBLE) {
        io->xd = X->data;
        io->yd = Y->data;
        return SG_OK;
    }
    io->xf = sg_kfloats(k, X);
    io->yf = is_half(Y->dtype) ? sg_kscratch(k, (size_t)(Y->numel + 1) * sizeof(float)) : Y->data;
    if (!io->xf || !io->yf)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    return SG_OK;
}

static void finish_out(sg_rt_value *Y, const struct io *io)
{
    uint16_t *h = Y->data;
    if (Y->dtype == SG_DTYPE_FLOAT16)
        for (int64_t i = 0; i < Y->numel; i++)
            h[i] = sg_float_to_half(io->yf[i]);
    else if (Y->dtype == SG_DTYPE_BFLOAT16)
        for (int64_t i = 0; i < Y->numel; i++)
            h[i] = sg_float_to_bf16(io->yf[i]);
}

/* A small tensor (parameters, statistics) as float64 in scratch. */
static double *doubles(struct sg_kctx *k, const sg_rt_value *v)
{
    double *d = sg_kscratch(k, (size_t)(v->numel + 1) * sizeof *d);
    if (d)
        for (int64_t i = 0; i < v->numel; i++)
            d[i] = sg_rt_get_f64(v, i);
    return d;
}

/* y[c-th plane] = x * a[c] + b[c] over `planes` planes of `inner` elements
 * with C channels. */
#define DEF_AFFINE(T, sfx)                                                                         \
    static void affine_##sfx(const T *x, T *y, const double *a, const double *b, int64_t planes,   \
                             int64_t C, int64_t inner)                                             \
    {                                                                                              \
        for (int64_t p = 0; p < planes; p++) {                                                     \
            T av = (T)a[p % C], bv = (T)b[p % C];                                                  \
            const T *xs = x + p * inner;                                                           \
            T *ys = y + p * inner;                                                                 \
            for (int64_t i = 0; i < inner; i++)                                                    \
                ys[i] = xs[i] * av + bv;                                                           \
        }                                                                                          \
    }

DEF_AFFINE(float, f)
DEF_AFFINE(double, d)

static void affine(const struct io *io, const double *a, const double *b, int64_t planes, int64_t C,
                   int64_t inner)
{
    if (io->xd)
        affine_d(io->xd, io->yd, a, b, planes, C, inner);
    else
        affine_f(io->xf, io->yf, a, b, planes, C, inner);
}

/* Mean and population variance of channel c over N planes of `inner`
 * elements (plane n*C + c). */
static void channel_stats(const struct io *io, int64_t N, int64_t C, int64_t inner, int64_t c,
                          double *mean, double *var)
{
    double s = 0, s2 = 0, cnt = (double)(N * inner);
    for (int64_t n = 0; n < N; n++) {
        int64_t o = (n * C + c) * inner;
        if (io->xd)
            for (int64_t i = 0; i < inner; i++)
                s += io->xd[o + i];
        else
            for (int64_t i = 0; i < inner; i++)
                s += io->xf[o + i];
    }
    double m = cnt > 0 ? s / cnt : 0;
    for (int64_t n = 0; n < N; n++) {
        int64_t o = (n * C + c) * inner;
        for (int64_t i = 0; i < inner; i++) {
            double d = (io->xd ? io->xd[o + i] : io->xf[o + i]) - m;
            s2 += d * d;
        }
    }
    *mean = m;
    *var = cnt > 0 ? s2 / cnt : 0;
}

/* ------------------------------------------------- BatchNormalization */

/*
 * Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel. Parameters
 * of C entries are per channel; before opset 9 `spatial` = 0 (or
 * parameters of C * D1 * ... entries) makes them per activation.
 * Training: opset >= 14 by training_mode, giving running_mean and
 * running_var (input * momentum + batch * (1 - momentum)); before 14 by
 * asking for the extra outputs mean, var (running, as above), saved_mean
 * and saved_var (the batch mean and population variance), unless is_test
 * (opsets 1 and 6) is set.
 */
static sg_status run_batch_norm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_rt_value *P[4] = {sg_kin(k, 1), sg_kin(k, 2), sg_kin(k, 3), sg_kin(k, 4)};
    static const char *const pname[4] = {"scale", "B", "mean", "var"};
    if (X->rank < 2)
        return sg_kfail(k, SG_ESHAPE, "input X %s must have rank >= 2 (batch, channels, ...)",
                        sg_kshape(k, X));
    int64_t N = X->dims[0], C = X->dims[1], inner = 1;
    for (uint32_t d = 2; d < X->rank; d++)
        inner *= X->dims[d];
    bool spatial = k->opset >= 9 || sg_kattr_int(k, "spatial", 1) != 0;
    if (!spatial || (P[0]->numel == C * inner && P[0]->numel != C)) {
        C *= inner; /* per activation: each (c, position) is a channel */
        inner = 1;
    }
    for (int i = 0; i < 4; i++)
        if (!P[i] || P[i]->numel != C || !sg_dtype_is_float(P[i]->dtype))
            return sg_kfail(k, SG_ESHAPE, "%s %s must have %lld float elements for input X %s",
                            pname[i], P[i] ? sg_kshape(k, P[i]) : "(missing)", (long long)C,
                            sg_kshape(k, X));
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    double momentum = sg_kattr_float(k, "momentum", 0.9f);
    bool training = k->opset >= 14 ? sg_kattr_int(k, "training_mode", 0) != 0
                                   : sg_kout_wanted(k, 1) || sg_kout_wanted(k, 2);
    if (k->opset < 7 && sg_kattr_int(k, "is_test", 0) != 0)
        training = false; /* opsets 1 and 6 say so explicitly */
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    struct io io;
    double *p[4], *a = sg_kscratch(k, (size_t)(C + 1) * sizeof *a),
                  *b = sg_kscratch(k, (size_t)(C + 1) * sizeof *b);
    for (int i = 0; i < 4; i++)
        p[i] = doubles(k, P[i]);
    if (!a || !b || !p[0] || !p[1] || !p[2] || !p[3])
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if ((st = open_io(k, X, Y, &io)))
        return st;
    double *bm = NULL, *bv = NULL;
    if (training) {
        bm = sg_kscratch(k, (size_t)(C + 1) * sizeof *bm);
        bv = sg_kscratch(k, (size_t)(C + 1) * sizeof *bv);
        if (!bm || !bv)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t c = 0; c < C; c++)
            channel_stats(&io, N, C, inner, c, &bm[c], &bv[c]);
    }
    for (int64_t c = 0; c < C; c++) {
        double m = training ? bm[c] : p[2][c], v = training ? bv[c] : p[3][c];
        a[c] = p[0][c] / sqrt(v + eps);
        b[c] = p[1][c] - m * a[c];
    }
    affine(&io, a, b, N * C, C, inner);
    finish_out(Y, &io);
    if (!training)
        return SG_OK;
    /* Running statistics, then (before opset 14) the saved batch ones. */
    for (uint32_t o = 1; o < k->n_out && o < 5; o++) {
        if (!sg_kout_wanted(k, o))
            continue;
        const sg_rt_value *like = P[o == 1 || o == 3 ? 2 : 3];
        sg_rt_value *R;
        if ((st = sg_kout(k, o, like->dtype, like->dims, like->rank, &R)))
            return st;
        for (int64_t c = 0; c < C; c++) {
            double batch = o == 1 || o == 3 ? bm[c] : bv[c];
            double run = o == 1 ? p[2][c] : p[3][c];
            sg_rt_set_f64(R, c, o >= 3 ? batch : run * momentum + batch * (1 - momentum));
        }
    }
    return SG_OK;
}

/* ---------------------------------------------- InstanceNormalization */

static sg_status run_instance_norm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1), *B = sg_kin(k, 2);
    if (X->rank < 3)
        return sg_kfail(k, SG_ESHAPE, "input X %s must have rank >= 3 (batch, channels, spatial)",
                        sg_kshape(k, X));
    int64_t N = X->dims[0], C = X->dims[1], inner = (N * C > 0 ? X->numel / (N * C) : 0);
    if (S->numel != C || B->numel != C || S->rank != 1 || B->rank != 1)
        return sg_kfail(k, SG_ESHAPE, "scale %s and B %s must be [%lld] for input X %s",
                        sg_kshape(k, S), sg_kshape(k, B), (long long)C, sg_kshape(k, X));
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    sg_rt_value *Y;
    struct io io;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st || (st = open_io(k, X, Y, &io)))
        return st;
    double *s = doubles(k, S), *b = doubles(k, B);
    double *a2 = sg_kscratch(k, (size_t)(N * C + 1) * sizeof *a2),
           *b2 = sg_kscratch(k, (size_t)(N * C + 1) * sizeof *b2);
    if (!s || !b || !a2 || !b2)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    /* Each (n, c) plane is its own channel: stats over one plane. */
    for (int64_t p = 0; p < N * C; p++) {
        double m, v;
        channel_stats(&io, 1, N * C, inner, p, &m, &v);
        a2[p] = s[p % C] / sqrt(v + eps);
        b2[p] = b[p % C] - m * a2[p];
    }
    affine(&io, a2, b2, N * C, N * C, inner);
    finish_out(Y, &io);
    return SG_OK;
}

/* ------------------------------------------------- GroupNormalization */

/*
 * X [N, C, D...] in num_groups groups of C / num_groups channels: each
 * (n, group) is normalised by its own mean and population variance, then
 * scaled and shifted. Opset 18 (the deprecated function) has one scale and
 * bias per group, opset 21 one per channel. stash_type (21) names the
 * precision of the statistics: they are float64 here whatever it says.
 */
static sg_status run_group_norm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1), *B = sg_kin(k, 2);
    if (X->rank < 2)
        return sg_kfail(k, SG_ESHAPE, "input X %s must have rank >= 2 (batch, channels, ...)",
                        sg_kshape(k, X));
    int64_t G = sg_kattr_int(k, "num_groups", 0);
    int64_t N = X->dims[0], C = X->dims[1], inner = (N * C > 0 ? X->numel / (N * C) : 0);
    if (G <= 0 || C % G)
        return sg_kfail(k, SG_EINVAL, "num_groups %lld does not divide the %lld channels of %s",
                        (long long)G, (long long)C, sg_kshape(k, X));
    int64_t P = k->opset >= 21 ? C : G; /* parameters per ... */
    if (S->numel != P || B->numel != P || S->rank != 1 || B->rank != 1)
        return sg_kfail(k, SG_ESHAPE, "scale %s and bias %s must be [%lld] (one per %s) for %s",
                        sg_kshape(k, S), sg_kshape(k, B), (long long)P,
                        k->opset >= 21 ? "channel" : "group", sg_kshape(k, X));
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    sg_rt_value *Y;
    struct io io;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st || (st = open_io(k, X, Y, &io)))
        return st;
    double *s = doubles(k, S), *b = doubles(k, B);
    double *a2 = sg_kscratch(k, (size_t)(N * C + 1) * sizeof *a2),
           *b2 = sg_kscratch(k, (size_t)(N * C + 1) * sizeof *b2);
    if (!s || !b || !a2 || !b2)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t cpg = C / G;
    /* The channels of a group are contiguous: one plane per (n, group). */
    for (int64_t p = 0; p < N * G; p++) {
        double m, v;
        channel_stats(&io, 1, N * G, cpg * inner, p, &m, &v);
        double inv = 1 / sqrt(v + eps);
        for (int64_t j = 0; j < cpg; j++) {
            int64_t c = (p % G) * cpg + j, q = (p / G) * C + c;
            double sc = s[P == C ? c : c / cpg], bi = b[P == C ? c : c / cpg];
            a2[q] = sc * inv;
            b2[q] = bi - m * a2[q];
        }
    }
    affine(&io, a2, b2, N * C, N * C, inner);
    finish_out(Y, &io);
    return SG_OK;
}

/* ------------------------------------------------- LayerNormalization */

/* Parameter P broadcast to the normalised shape dims[rank] (n elements):
 * P's own data as doubles, expanded when it is smaller. */
static sg_status norm_param(struct sg_kctx *k, const sg_rt_value *P, const char *what,
                            const int64_t *dims, uint32_t rank, int64_t n, double **out)
{
    *out = sg_kscratch(k, (size_t)(n + 1) * sizeof **out);
    if (!*out)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    struct sg_bcast bc;
    const int64_t *dl[2] = {dims, P->dims};
    uint32_t rl[2] = {rank, P->rank};
    sg_status st = sg_bcast_init_dims(k, &bc, 2, dl, rl);
    if (st)
        return st;
    if (bc.numel != n || bc.rank != rank)
        return sg_kfail(k, SG_ESHAPE, "%s %s does not broadcast to the normalized shape %s", what,
                        sg_kshape(k, P), sg_kdims(k, dims, rank));
    while (sg_bcast_next(&bc))
        for (int64_t i = 0; i < bc.run; i++)
            (*out)[bc.pos + i] = sg_rt_get_f64(P, bc.off[1] + i * bc.step[1]);
    return SG_OK;
}

/* Normalise `rows` rows of n elements; mean/inv receive per-row stats. */
#define DEF_LAYER(T, sfx)                                                                          \
    static void layer_##sfx(const T *x, T *y, const double *s, const double *b, int64_t rows,      \
                            int64_t n, double eps, double *mean, double *inv)                      \
    {                                                                                              \
        for (int64_t r = 0; r < rows; r++) {                                                       \
            const T *xr = x + r * n;                                                               \
            T *yr = y + r * n;                                                                     \
            double sum = 0, sq = 0;                                                                \
            for (int64_t i = 0; i < n; i++)                                                        \
                sum += xr[i];                                                                      \
            double m = n ? sum / (double)n : 0;                                                    \
            for (int64_t i = 0; i < n; i++) {                                                      \
                double d = xr[i] - m;                                                              \
                sq += d * d;                                                                       \
            }                                                                                      \
            double iv = 1.0 / sqrt((n ? sq / (double)n : 0) + eps);                                \
            for (int64_t i = 0; i < n; i++)                                                        \
                yr[i] = (T)((xr[i] - m) * iv * s[i] + (b ? b[i] : 0));                             \
            mean[r] = m;                                                                           \
            inv[r] = iv;                                                                           \
        }                                                                                          \
    }

DEF_LAYER(float, f)
DEF_LAYER(double, d)

/*
 * LayerNormalization (opset 17): normalise over axes [axis, rank), then
 * Scale and B (broadcast to those axes). Mean and InvStdDev have the
 * normalised axes set to 1 and the stash_type dtype.
 */
static sg_status run_layer_norm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1), *B = sg_kin(k, 2);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", -1), X->rank, &axis);
    if (st)
        return st;
    int32_t stash = (int32_t)sg_kattr_int(k, "stash_type", SG_DTYPE_FLOAT);
    if (!sg_dtype_is_float(stash))
        return sg_kfail(k, SG_EINVAL, "stash_type %d is not a float type", stash);
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    int64_t rows = 1, n = 1;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (d < axis)
            rows *= X->dims[d];
        else
            n *= X->dims[d];
    }
    double *s, *b = NULL;
    if ((st = norm_param(k, S, "Scale", X->dims + axis, X->rank - axis, n, &s)) ||
        (B && (st = norm_param(k, B, "B", X->dims + axis, X->rank - axis, n, &b))))
        return st;
    sg_rt_value *Y;
    struct io io;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)) || (st = open_io(k, X, Y, &io)))
        return st;
    double *mean = sg_kscratch(k, (size_t)(rows + 1) * sizeof *mean),
           *inv = sg_kscratch(k, (size_t)(rows + 1) * sizeof *inv);
    if (!mean || !inv)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (io.xd)
        layer_d(io.xd, io.yd, s, b, rows, n, eps, mean, inv);
    else
        layer_f(io.xf, io.yf, s, b, rows, n, eps, mean, inv);
    finish_out(Y, &io);
    int64_t sd[SG_MAX_RANK];
    for (uint32_t d = 0; d < X->rank; d++)
        sd[d] = d < axis ? X->dims[d] : 1;
    for (uint32_t o = 1; o < 3; o++) {
        sg_rt_value *R;
        if (!sg_kout_wanted(k, o))
            continue;
        if ((st = sg_kout(k, o, stash, sd, X->rank, &R)))
            return st;
        for (int64_t r = 0; r < rows; r++)
            sg_rt_set_f64(R, r, o == 1 ? mean[r] : inv[r]);
    }
    return SG_OK;
}

/* ---------------------------------------------------------------- LRN */

/* y = x / (bias + alpha / size * sum of x^2 over the channels
 * [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta. */
static sg_status run_lrn(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t size = sg_kattr_int(k, "size", 0);
    double alpha = sg_kattr_float(k, "alpha", 1e-4f), beta = sg_kattr_float(k, "beta", 0.75f);
    double bias = sg_kattr_float(k, "bias", 1.0f);
    if (X->rank < 3)
        return sg_kfail(k, SG_ESHAPE, "input X %s must have rank >= 3 (batch, channels, spatial)",
                        sg_kshape(k, X));
    if (size < 1)
        return sg_kfail(k, SG_EINVAL, "size must be a positive int, got %lld", (long long)size);
    int64_t N = X->dims[0], C = X->dims[1], inner = (N * C > 0 ? X->numel / (N * C) : 0);
    sg_rt_value *Y;
    struct io io;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st || (st = open_io(k, X, Y, &io)))
        return st;
    double *sq = sg_kscratch(k, (size_t)(inner + 1) * sizeof *sq);
    if (!sq)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t before = (size - 1) / 2, after = size - 1 - before;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            memset(sq, 0, (size_t)inner * sizeof *sq);
            int64_t c0 = c - before < 0 ? 0 : c - before, c1 = c + after >= C ? C - 1 : c + after;
            for (int64_t j = c0; j <= c1; j++) {
                int64_t o = (n * C + j) * inner;
                for (int64_t i = 0; i < inner; i++) {
                    double v = io.xd ? io.xd[o + i] : io.xf[o + i];
                    sq[i] += v * v;
                }
            }
            int64_t o = (n * C + c) * inner;
            for (int64_t i = 0; i < inner; i++) {
                double x = io.xd ? io.xd[o + i] : io.xf[o + i];
                double y = x / pow(bias + alpha / (double)size * sq[i], beta);
                if (io.yd)
                    io.yd[o + i] = y;
                else
                    io.yf[o + i] = (float)y;
            }
        }
    finish_out(Y, &io);
    return SG_OK;
}

/* ----------------------------------- MeanVarianceNormalization, LpNorm */

/*
 * For each element of X, the index of its group in a tensor of X's shape
 * with the axes in `reduced` set to 1. Returns the number of groups.
 */
static int64_t group_index(const sg_rt_value *X, const bool *reduced, int64_t *gi)
{
    int64_t gstr[SG_MAX_RANK], idx[SG_MAX_RANK], ng = 1;
    for (uint32_t d = X->rank; d-- > 0;) {
        gstr[d] = reduced[d] ? 0 : ng;
        if (!reduced[d])
            ng *= X->dims[d];
    }
    memset(idx, 0, sizeof idx);
    int64_t g = 0;
    for (int64_t i = 0; i < X->numel; i++) {
        gi[i] = g;
        for (uint32_t d = X->rank; d-- > 0;) {
            g += gstr[d];
            if (++idx[d] < X->dims[d])
                break;
            g -= gstr[d] * idx[d];
            idx[d] = 0;
        }
    }
    return ng;
}

/* MVN: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes` (default
 * [0, 2, 3]), as the ONNX function body computes it. */
static sg_status run_mvn(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    bool reduced[SG_MAX_RANK] = {false};
    const int64_t *axes;
    static const int64_t dflt[3] = {0, 2, 3};
    int64_t na = sg_kattr_ints(k, "axes", &axes);
    if (na < 0) {
        axes = dflt;
        na = 3;
    }
    sg_status st;
    for (int64_t i = 0; i < na; i++) {
        uint32_t a;
        if ((st = sg_kaxis(k, axes[i], X->rank, &a)))
            return st;
        reduced[a] = true;
    }
    sg_rt_value *Y;
    struct io io;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)) || (st = open_io(k, X, Y, &io)))
        return st;
    int64_t *gi = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *gi);
    if (!gi)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t ng = group_index(X, reduced, gi);
    double *s = sg_kscratch(k, (size_t)(ng + 1) * sizeof *s),
           *s2 = sg_kscratch(k, (size_t)(ng + 1) * sizeof *s2);
    if (!s || !s2)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    memset(s, 0, (size_t)ng * sizeof *s);
    memset(s2, 0, (size_t)ng * sizeof *s2);
    double cnt = ng ? (double)X->numel / (double)ng : 0;
    for (int64_t i = 0; i < X->numel; i++) {
        double v = io.xd ? io.xd[i] : io.xf[i];
        s[gi[i]] += v;
        s2[gi[i]] += v * v;
    }
    for (int64_t g = 0; g < ng; g++) {
        s[g] /= cnt;
        double var = s2[g] / cnt - s[g] * s[g];
        s2[g] = sqrt(var > 0 ? var : 0) + 1e-9;
    }
    for (int64_t i = 0; i < X->numel; i++) {
        double v = io.xd ? io.xd[i] : io.xf[i];
        double y = (v - s[gi[i]]) / s2[gi[i]];
        if (io.yd)
            io.yd[i] = y;
        else
            io.yf[i] = (float)y;
    }
    finish_out(Y, &io);
    return SG_OK;
}

/* LpNormalization: x / ||x||_p along axis (p 1 or 2); a zero norm gives
 * zeros, as in ONNX Runtime. */
static sg_status run_lp_norm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t p = sg_kattr_int(k, "p", 2);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", -1), X->rank, &axis);
    if (st)
        return st;
    if (p != 1 && p != 2)
        return sg_kfail(k, SG_EINVAL, "p must be 1 or 2, got %lld", (long long)p);
    int64_t outer = 1, n = X->dims[axis], inner = 1;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (d < axis)
            outer *= X->dims[d];
        else if (d > axis)
            inner *= X->dims[d];
    }
    sg_rt_value *Y;
    struct io io;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)) || (st = open_io(k, X, Y, &io)))
        return st;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * n * inner + in;
            double norm = 0;
            for (int64_t i = 0; i < n; i++) {
                double v = io.xd ? io.xd[base + i * inner] : io.xf[base + i * inner];
                norm += p == 1 ? fabs(v) : v * v;
            }
            if (p == 2)
                norm = sqrt(norm);
            for (int64_t i = 0; i < n; i++) {
                int64_t at = base + i * inner;
                double v = io.xd ? io.xd[at] : io.xf[at];
                double y = norm != 0 ? v / norm : 0;
                if (io.yd)
                    io.yd[at] = y;
                else
                    io.yf[at] = (float)y;
            }
        }
    finish_out(Y, &io);
    return SG_OK;
}

#define FL SG_KT_FLOATS
static const struct sg_kernel kernels[] = {
    {"", "BatchNormalization", 1, 0, FL, 0, run_batch_norm, "rrrrr"},
    {"", "BatchNormalization", 6, 0, FL, 0, run_batch_norm, "rrrrr"},
    {"", "BatchNormalization", 7, 0, FL, 0, run_batch_norm, "rrrrr"},
    {"", "BatchNormalization", 9, 0, FL, 0, run_batch_norm, "rrrrr"},
    {"", "BatchNormalization", 14, 0, FL, 0, run_batch_norm, "rrrrr"},
    {"", "BatchNormalization", 15, 0, FL, 0, run_batch_norm, "rrrrr"},
    {"", "InstanceNormalization", 1, 0, FL, 0, run_instance_norm, "rrr"},
    {"", "InstanceNormalization", 6, 0, FL, 0, run_instance_norm, "rrr"},
    {"", "LayerNormalization", 17, 0, FL, 0, run_layer_norm, "rro"},
    {"", "GroupNormalization", 18, 0, FL, 0, run_group_norm, "rrr"},
    {"", "GroupNormalization", 21, 0, FL, 0, run_group_norm, "rrr"},
    {"", "LRN", 1, 0, FL, 0, run_lrn, "r"},
    {"", "LRN", 13, 0, FL, 0, run_lrn, "r"},
    {"", "MeanVarianceNormalization", 9, 0, FL, 0, run_mvn, "r"},
    {"", "MeanVarianceNormalization", 13, 0, FL, 0, run_mvn, "r"},
    {"", "LpNormalization", 1, 0, FL, 0, run_lp_norm, "r"},
};
SG_KERNEL_FAMILY(norm, kernels);
