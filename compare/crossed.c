/*
 * crossed.c - which threshold a row crossed, the scale-free alternatives
 * to msit's absolute tests, and what rounding alone does to a tensor.
 *
 * msit's tests (sg_thresholds) decide IsPrecisionError; the analysis also
 * needs to know which of them fired, and whether the error is any larger
 * than what rounding the golden values to the target's dtype makes of them
 * (then no operator is at fault, the precision is).
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_dtype.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHUNK 4096

double sg_metrics_rmse_tested(const struct sg_metrics *m, const struct sg_thresholds *t)
{
    if (isnan(t->rmse_relative))
        return m->rmse;
    /* A constant golden tensor has no scale: any error is relative to 0. */
    return m->golden_std > SG_METRIC_EPS ? m->rmse / m->golden_std : m->rmse > 0 ? INFINITY : 0;
}

double sg_metrics_rmse_limit(const struct sg_thresholds *t)
{
    return isnan(t->rmse_relative) ? t->rmse : t->rmse_relative;
}

double sg_metrics_mre_tested(const struct sg_metrics *m, const struct sg_thresholds *t)
{
    return t->mre_floor > 0 ? m->mean_rel_floor : m->mean_rel;
}

unsigned sg_metrics_crossed(const struct sg_metrics *m, const struct sg_thresholds *t)
{
    unsigned c = 0;
    if (m->overflow)
        c |= SG_CROSSED_OVERFLOW;
    if (m->cosine < t->cosine)
        c |= SG_CROSSED_COSINE;
    if (m->red > t->red)
        c |= SG_CROSSED_RED;
    if (m->kl > t->kl)
        c |= SG_CROSSED_KL;
    if (sg_metrics_rmse_tested(m, t) > sg_metrics_rmse_limit(t))
        c |= SG_CROSSED_RMSE;
    if (sg_metrics_mre_tested(m, t) > t->mre)
        c |= SG_CROSSED_MRE;
    return c;
}

char *sg_metrics_crossed_text(const struct sg_metrics *m, const struct sg_thresholds *t,
                              unsigned crossed, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(buf + len, size > len ? size - len : 0, "%s", len ? "; " : "");          \
        len += w_ > 0 ? (size_t)w_ : 0;                                                            \
        w_ = snprintf(buf + len, size > len ? size - len : 0, __VA_ARGS__);                        \
        len += w_ > 0 ? (size_t)w_ : 0;                                                            \
    } while (0)
    if (crossed & SG_CROSSED_OVERFLOW)
        ADD("OverFlow %" PRIu64 " of %" PRIu64 " NaN/Inf where the golden values are finite",
            m->overflow, m->n);
    if (crossed & SG_CROSSED_COSINE)
        ADD("CosineSimilarity %.6f < %g", m->cosine, t->cosine);
    if (crossed & SG_CROSSED_RED)
        ADD("RelativeEuclideanDistance %.6f > %g", m->red, t->red);
    if (crossed & SG_CROSSED_KL)
        ADD("KullbackLeiblerDivergence %.6f > %g", m->kl, t->kl);
    if ((crossed & SG_CROSSED_RMSE) && isnan(t->rmse_relative))
        ADD("RootMeanSquareError %.6f > %g", m->rmse, t->rmse);
    else if (crossed & SG_CROSSED_RMSE)
        ADD("RootMeanSquareError/std(golden) %.6f > %g", sg_metrics_rmse_tested(m, t),
            t->rmse_relative);
    if ((crossed & SG_CROSSED_MRE) && t->mre_floor > 0)
        ADD("MeanRelativeError(floor %g of max |golden|) %.6f > %g", t->mre_floor,
            m->mean_rel_floor, t->mre);
    else if (crossed & SG_CROSSED_MRE)
        ADD("MeanRelativeError %.6f > %g", m->mean_rel, t->mre);
#undef ADD
    return buf;
}

sg_status sg_metrics_rounding(const struct sg_array *g, int32_t dtype, double mre_floor,
                              struct sg_metrics *out, struct sg_diag *diag)
{
    if (!sg__metrics_supported(g->dtype) || g->dtype == SG_DTYPE_BOOL)
        return sg_diag_set(diag, SG_EUNSUPPORTED, "cannot round %s data", sg_dtype_name(g->dtype));
    int64_t n = sg_array_numel(g);
    if (n < 0)
        return sg_diag_set(diag, SG_EINVAL, "bad shape");
    float *y = sg_malloc((size_t)n * sizeof *y + 1), *x = sg_malloc((size_t)n * sizeof *x + 1);
    if (!y || !x) {
        sg_free(x);
        sg_free(y);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < (size_t)n; i += CHUNK)
        sg__metrics_to_f32(g, i, (size_t)n - i < CHUNK ? (size_t)n - i : CHUNK, y + i);
    for (size_t i = 0; i < (size_t)n; i++)
        x[i] = dtype == SG_DTYPE_FLOAT16    ? sg_half_to_float(sg_float_to_half(y[i]))
               : dtype == SG_DTYPE_BFLOAT16 ? sg_bf16_to_float(sg_float_to_bf16(y[i]))
                                            : y[i];
    sg_metrics_f32(x, y, (size_t)n, out);
    if (mre_floor > 0) {
        struct sg_array xa = {.dtype = SG_DTYPE_FLOAT,
                              .rank = 1,
                              .dims = {n},
                              .data = x,
                              .nbytes = (size_t)n * sizeof *x};
        struct sg_array ya = xa;
        ya.data = y;
        out->mean_rel_floor = sg_metrics_mre_floor(&xa, &ya, mre_floor);
    }
    sg_free(x);
    sg_free(y);
    return SG_OK;
}

double sg_metrics_mre_floor(const struct sg_array *target, const struct sg_array *golden,
                            double floor)
{
    int64_t n = sg_array_numel(golden);
    if (n <= 0 || n != sg_array_numel(target) || !sg__metrics_supported(target->dtype) ||
        !sg__metrics_supported(golden->dtype))
        return NAN;
    float xb[CHUNK], yb[CHUNK];
    double ymax = 0;
    for (size_t i = 0; i < (size_t)n; i += CHUNK) {
        size_t len = (size_t)n - i < CHUNK ? (size_t)n - i : CHUNK;
        sg__metrics_to_f32(golden, i, len, yb);
        for (size_t k = 0; k < len; k++)
            if (fabs(yb[k]) > ymax)
                ymax = fabs(yb[k]);
    }
    double lo = fmax(floor * ymax, SG_METRIC_EPS), sum = 0;
    for (size_t i = 0; i < (size_t)n; i += CHUNK) {
        size_t len = (size_t)n - i < CHUNK ? (size_t)n - i : CHUNK;
        sg__metrics_to_f32(target, i, len, xb);
        sg__metrics_to_f32(golden, i, len, yb);
        for (size_t k = 0; k < len; k++)
            sum += fabs((double)xb[k] - yb[k]) / fmax(fabs(yb[k]), lo);
    }
    return sum / (double)n;
}
