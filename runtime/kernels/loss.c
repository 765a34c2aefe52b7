/*
 * loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, with
 * class weights, ignore_index and every reduction (none, sum, mean: the
 * weighted mean over the targets that are not ignored). Computed in double.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

enum reduction { RED_NONE, RED_SUM, RED_MEAN };

static sg_status get_reduction(struct sg_kctx *k, enum reduction *r)
{
    const char *s = sg_kattr_string(k, "reduction", "mean");
    if (strcmp(s, "none") == 0)
        *r = RED_NONE;
    else if (strcmp(s, "sum") == 0)
        *r = RED_SUM;
    else if (strcmp(s, "mean") == 0)
        *r = RED_MEAN;
    else
        return sg_kfail(k, SG_EINVAL, "unknown reduction '%s'", s);
    return SG_OK;
}

/*
 * The loss of log-probabilities lp ([N, C, D] flattened: lp[(n*C + c)*D + d])
 * against targets T ([N, D]) into output oi.
 */
static sg_status nll(struct sg_kctx *k, const double *lp, int64_t N, int64_t C, int64_t D,
                     const sg_rt_value *T, const sg_rt_value *W, int32_t dtype, uint32_t oi)
{
    enum reduction red = RED_MEAN;
    sg_status st = get_reduction(k, &red);
    if (st)
        return st;
    const sg_attr *ia = sg_kattr(k, "ignore_index");
    bool has_ignore = ia && ia->type == SG_ATTR_INT;
    int64_t ignore = has_ignore ? ia->i : 0;
    if (W && (W->rank != 1 || W->dims[0] != C || W->dtype != dtype))
        return sg_kfail(k, SG_ESHAPE, "weights %s do not match %lld classes of %s", sg_kshape(k, W),
                        (long long)C, sg_dtype_name(dtype));
    if (!sg_dtype_is_int(T->dtype))
        return sg_kfail(k, SG_ETYPE, "targets %s must be integers", sg_kshape(k, T));
    sg_rt_value *Y;
    if (red == RED_NONE)
        st = sg_kout(k, oi, dtype, T->dims, T->rank, &Y);
    else
        st = sg_kout(k, oi, dtype, NULL, 0, &Y);
    if (st)
        return st;
    double sum = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            int64_t t = sg_rt_get_i64(T, n * D + d);
            double loss = 0, w = 0;
            if (!(has_ignore && t == ignore)) {
                if (t < 0 || t >= C)
                    return sg_kfail(k, SG_ERANGE, "target %lld is out of range for %lld classes",
                                    (long long)t, (long long)C);
                w = W ? sg_rt_get_f64(W, t) : 1.0;
                loss = -lp[(n * C + t) * D + d] * w;
            }
            if (red == RED_NONE)
                sg_rt_set_f64(Y, n * D + d, loss);
            sum += loss;
            wsum += w;
        }
    if (red == RED_SUM)
        sg_rt_set_f64(Y, 0, sum);
    else if (red == RED_MEAN)
        sg_rt_set_f64(Y, 0, sum / wsum);
    return SG_OK;
}

/* Shapes: X [N, C, d...] and T [N, d...]; D = prod(d...). */
static sg_status dims_of(struct sg_kctx *k, const sg_rt_value *X, const sg_rt_value *T, int64_t *N,
                         int64_t *C, int64_t *D)
{
    bool ok = X->rank >= 2 && T->rank == X->rank - 1 && T->dims[0] == X->dims[0];
    for (uint32_t i = 2; ok && i < X->rank; i++)
        ok = T->dims[i - 1] == X->dims[i];
    if (!ok || (T->dtype != SG_DTYPE_INT32 && T->dtype != SG_DTYPE_INT64))
        return sg_kfail(k, SG_ESHAPE, "input %s and target %s do not match", sg_kshape(k, X),
                        sg_kshape(k, T));
    *N = X->dims[0];
    *C = X->dims[1];
    *D = 1;
    for (uint32_t i = 2; i < X->rank; i++)
        *D *= X->dims[i];
    return SG_OK;
}

static sg_status run_nll(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *T = sg_kin(k, 1), *W = sg_kin(k, 2);
    int64_t N, C, D;
    sg_status st = dims_of(k, X, T, &N, &C, &D);
    if (st)
        return st;
    double *lp = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *lp);
    if (!lp)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < X->numel; i++)
        lp[i] = sg_rt_get_f64(X, i);
    return nll(k, lp, N, C, D, T, W, X->dtype, 0);
}

static sg_status run_sce(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *T = sg_kin(k, 1), *W = sg_kin(k, 2);
    int64_t N, C, D;
    sg_status st = dims_of(k, X, T, &N, &C, &D);
    if (st)
        return st;
    double *lp = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *lp);
    if (!lp)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    /* log_softmax over the class axis */
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            double m = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) {
                double v = sg_rt_get_f64(X, (n * C + c) * D + d);
                lp[(n * C + c) * D + d] = v;
                m = v > m ? v : m;
            }
            for (int64_t c = 0; c < C; c++)
                s += exp(lp[(n * C + c) * D + d] - m);
            double ls = log(s) + m;
            for (int64_t c = 0; c < C; c++)
                lp[(n * C + c) * D + d] -= ls;
        }
    if (sg_kout_wanted(k, 1)) {
        sg_rt_value *L;
        if ((st = sg_kout(k, 1, X->dtype, X->dims, X->rank, &L)))
            return st;
        for (int64_t i = 0; i < X->numel; i++)
            sg_rt_set_f64(L, i, lp[i]);
    }
    return nll(k, lp, N, C, D, T, W, X->dtype, 0);
}

static const struct sg_kernel kernels[] = {
    {"", "NegativeLogLikelihoodLoss", 12, 0, SG_KT_FLOATS, 0, run_nll, "rro"},
    {"", "SoftmaxCrossEntropyLoss", 12, 0, SG_KT_FLOATS, 0, run_sce, "rro"},
};
SG_KERNEL_FAMILY(loss, kernels);
