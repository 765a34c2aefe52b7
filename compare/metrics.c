/*
 * metrics.c - the ten comparison metrics of FORMATS.md over a target and a
 * golden tensor.
 *
 * Everything but KL comes from one pass that keeps running sums (x*y, x*x,
 * y*y, d*d, |d|, x, y, r), maxima (|d|, r) and the ranges of both sides; KL
 * needs those ranges to normalise, so it reads the data a second time. Data
 * is converted to float32 (FORMATS.md) and accumulated in double.
 *
 * The fast path works on four lanes at a time with GCC/Clang vector
 * extensions (plain SSE2 on x86-64, NEON on arm64, scalar code elsewhere),
 * including a lane-wise natural logarithm for KL: libm's log would cost more
 * than everything else together. It assumes finite data; when the first
 * pass shows NaN/Inf (a running sum of squares is not finite), an exact
 * scalar path recomputes everything with numpy's semantics (NaN propagates
 * through max) and counts the overflowing elements.
 */
#include "compare_impl.h"
#include "sg_compare.h"

#include "sg_dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The vector helpers are static and inlined: no ABI crosses them. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define EPS SG_METRIC_EPS
#define CHUNK 4096

typedef double v2d __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef int64_t v2l __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
typedef int64_t v4l __attribute__((vector_size(32)));

/* ---------------------------------------------------------- accumulators */

struct pass1 {
    double sxy, sxx, syy, sdd, sad, sx, sy, sr;
    double mad, mr; /* maxima; NaN once a NaN was seen (slow path) */
    double mnx, mxx, mny, mxy;
    uint64_t n, nf_x, nf_y, overflow;
};

struct pass2 {
    double mnx, sx_scale, mny, sy_scale; /* p = max((x - mnx) * sx_scale, eps) */
    double x_range, y_range;             /* max - min, for the exact path */
    bool x_uniform, y_uniform;           /* max == min: every p the same */
    double sp, sq, spl;                  /* sum p, sum q, sum p ln(p/q) */
};

static void pass1_init(struct pass1 *a)
{
    memset(a, 0, sizeof *a);
    a->mnx = a->mny = INFINITY;
    a->mxx = a->mxy = -INFINITY;
}

/* Two lanes: what every 64-bit target has (SSE2, NEON). */
#define K(name) name##_generic
#define LANES 2
#define VD v2d
#define VL v2l
#define VF v2f
#include "metrics_kernels.inc"
#undef K
#undef LANES
#undef VD
#undef VL
#undef VF

/* x86-64: an AVX2 copy of the kernels, used where the CPU has AVX2 (the
 * SSE2 baseline has too few registers for all the accumulators). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SG_HAVE_AVX2 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
#define K(name) name##_avx2
#define LANES 4
#define VD v4d
#define VL v4l
#define VF v4f
#include "metrics_kernels.inc"
#undef K
#undef LANES
#undef VD
#undef VL
#undef VF
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

static bool force_generic;

bool sg__metrics_force_generic(bool on)
{
    bool old = force_generic;
    force_generic = on;
    return old;
}

static bool use_avx2(void)
{
#ifdef SG_HAVE_AVX2
    return !force_generic && __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

static void pass1_fast(struct pass1 *a, const float *x, const float *y, size_t n)
{
#ifdef SG_HAVE_AVX2
    if (use_avx2()) {
        pass1_fast_avx2(a, x, y, n);
        return;
    }
#endif
    pass1_fast_generic(a, x, y, n);
}

static void pass2_fast(struct pass2 *b, const float *x, const float *y, size_t n)
{
#ifdef SG_HAVE_AVX2
    if (use_avx2()) {
        pass2_fast_avx2(b, x, y, n);
        return;
    }
#endif
    pass2_fast_generic(b, x, y, n);
}

/* numpy's max: NaN wins. */
static inline double nan_max(double m, double v)
{
    return (isnan(m) || isnan(v)) ? NAN : (v > m ? v : m);
}

static inline double nan_min(double m, double v)
{
    return (isnan(m) || isnan(v)) ? NAN : (v < m ? v : m);
}

/* Exact pass 1 for data with NaN/Inf. */
static void pass1_slow(struct pass1 *a, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double xv = x[i], yv = y[i], d = xv - yv;
        bool fx = isfinite(xv), fy = isfinite(yv);
        a->nf_x += !fx;
        a->nf_y += !fy;
        a->overflow += !fx && fy;
        a->sxy += xv * yv;
        a->sxx += xv * xv;
        a->syy += yv * yv;
        a->sdd += d * d;
        a->sad += fabs(d);
        a->mad = nan_max(a->mad, fabs(d));
        a->sx += xv;
        a->sy += yv;
        a->mnx = nan_min(a->mnx, xv);
        a->mxx = nan_max(a->mxx, xv);
        a->mny = nan_min(a->mny, yv);
        a->mxy = nan_max(a->mxy, yv);
        double r = fabs(yv) > EPS ? fabs(xv / yv - 1.0) : 0.0;
        a->sr += r;
        a->mr = nan_max(a->mr, r);
    }
    a->n += n;
}

static void pass2_init(struct pass2 *b, const struct pass1 *a)
{
    memset(b, 0, sizeof *b);
    /* A side whose max equals its min is uniform: scale 0 (with the shift
     * 0) makes every p eps. */
    b->x_uniform = a->mxx == a->mnx;
    b->y_uniform = a->mxy == a->mny;
    b->mnx = b->x_uniform ? 0 : a->mnx;
    b->mny = b->y_uniform ? 0 : a->mny;
    b->x_range = a->mxx - a->mnx;
    b->y_range = a->mxy - a->mny;
    b->sx_scale = b->x_uniform ? 0 : 1.0 / b->x_range;
    b->sy_scale = b->y_uniform ? 0 : 1.0 / b->y_range;
}

/* Exact pass 2: numpy's formula, NaN kept (max(NaN, eps) is NaN). */
static void pass2_slow(struct pass2 *b, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double p = b->x_uniform ? 1.0 : (x[i] - b->mnx) / b->x_range;
        double q = b->y_uniform ? 1.0 : (y[i] - b->mny) / b->y_range;
        p = p < EPS ? EPS : p;
        q = q < EPS ? EPS : q;
        b->sp += p;
        b->sq += q;
        b->spl += p * log(p / q);
    }
}

static void finish(const struct pass1 *a, const struct pass2 *b, bool is_bool, struct sg_metrics *m)
{
    double n = (double)a->n;
    double nx = sqrt(a->sxx), ny = sqrt(a->syy);
    m->n = a->n;
    m->target_nonfinite = a->nf_x;
    m->golden_nonfinite = a->nf_y;
    m->overflow = a->overflow;
    if (a->nf_x || a->nf_y)
        m->flags |= SG_METRIC_NONFINITE;

    if (nx <= EPS && ny <= EPS) {
        m->cosine = 1.0;
    } else if (nx <= EPS || ny <= EPS) {
        m->cosine = NAN;
        m->flags |= nx <= EPS ? SG_METRIC_TARGET_ZERO : SG_METRIC_GOLDEN_ZERO;
    } else {
        /* One square root of the product, not a product of roots: for
         * identical sides sqrt(s * s) is exactly s (binary floating point,
         * correctly rounded), so two equal runs give cosine exactly 1.
         * Float32 data cannot overflow or underflow the double product. */
        m->cosine = a->sxy / sqrt(a->sxx * a->syy);
        if (m->cosine > 1.0)
            m->cosine = 1.0;
    }
    m->red = ny <= EPS ? 0.0 : sqrt(a->sdd / a->syy);
    if (is_bool) {
        m->flags |= SG_METRIC_BOOL;
        return;
    }
    m->max_abs = a->mad;
    m->accum_rel = a->sr;
    m->max_rel = a->mr;
    m->mean_rel = a->sr / n;
    m->mean_abs = a->sad / n;
    m->rmse = sqrt(a->sdd / n);
    m->target_mean = a->sx / n;
    m->golden_mean = a->sy / n;
    double vx = a->sxx / n - m->target_mean * m->target_mean;
    double vy = a->syy / n - m->golden_mean * m->golden_mean;
    m->target_std = a->nf_x ? NAN : sqrt(vx < 0 ? 0 : vx);
    m->golden_std = a->nf_y ? NAN : sqrt(vy < 0 ? 0 : vy);
    double kl = b->spl / b->sp + log(b->sq / b->sp);
    m->kl = fabs(kl) < EPS ? 0.0 : kl;
}

static void metrics_nan(struct sg_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->cosine = m->max_abs = m->accum_rel = m->red = m->kl = m->mean_abs = m->rmse = m->max_rel =
        m->mean_rel = m->mean_rel_floor = NAN;
    m->target_mean = m->target_std = m->golden_mean = m->golden_std = NAN;
}

/* ------------------------------------------------------------ data access */

void sg__metrics_to_f32(const struct sg_array *a, size_t i, size_t n, float *out)
{
    const uint8_t *base = a->data;
    switch (a->dtype) {
    case SG_DTYPE_FLOAT:
        memcpy(out, base + i * 4, n * 4);
        break;
    case SG_DTYPE_FLOAT16:
        for (size_t k = 0; k < n; k++)
            out[k] = sg_half_to_float(((const uint16_t *)a->data)[i + k]);
        break;
    case SG_DTYPE_BFLOAT16:
        for (size_t k = 0; k < n; k++)
            out[k] = sg_bf16_to_float(((const uint16_t *)a->data)[i + k]);
        break;
    case SG_DTYPE_DOUBLE:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const double *)a->data)[i + k];
        break;
    case SG_DTYPE_INT8:
    case SG_DTYPE_INT4: /* held one per byte, sign-extended */
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const int8_t *)a->data)[i + k];
        break;
    case SG_DTYPE_UINT8:
    case SG_DTYPE_UINT4:
    case SG_DTYPE_BOOL:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const uint8_t *)a->data)[i + k];
        break;
    case SG_DTYPE_FLOAT8E4M3FN:
    case SG_DTYPE_FLOAT8E4M3FNUZ:
    case SG_DTYPE_FLOAT8E5M2:
    case SG_DTYPE_FLOAT8E5M2FNUZ:
        for (size_t k = 0; k < n; k++)
            out[k] = sg_fp8_to_float(a->dtype, ((const uint8_t *)a->data)[i + k]);
        break;
    case SG_DTYPE_FLOAT4E2M1:
        for (size_t k = 0; k < n; k++)
            out[k] = sg_fp4_to_float(((const uint8_t *)a->data)[i + k]);
        break;
    case SG_DTYPE_INT16:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const int16_t *)a->data)[i + k];
        break;
    case SG_DTYPE_UINT16:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const uint16_t *)a->data)[i + k];
        break;
    case SG_DTYPE_INT32:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const int32_t *)a->data)[i + k];
        break;
    case SG_DTYPE_UINT32:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const uint32_t *)a->data)[i + k];
        break;
    case SG_DTYPE_INT64:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const int64_t *)a->data)[i + k];
        break;
    case SG_DTYPE_UINT64:
        for (size_t k = 0; k < n; k++)
            out[k] = (float)((const uint64_t *)a->data)[i + k];
        break;
    default: /* refused by the caller */
        memset(out, 0, n * sizeof *out);
        break;
    }
}

enum pass_kind { P1_FAST, P1_SLOW, P2_FAST, P2_SLOW };

struct run {
    struct pass1 a;
    struct pass2 b;
};

static void run_pass(struct run *r, enum pass_kind k, const float *x, const float *y, size_t n)
{
    switch (k) {
    case P1_FAST:
        pass1_fast(&r->a, x, y, n);
        break;
    case P1_SLOW:
        pass1_slow(&r->a, x, y, n);
        break;
    case P2_FAST:
        pass2_fast(&r->b, x, y, n);
        break;
    case P2_SLOW:
        pass2_slow(&r->b, x, y, n);
        break;
    }
}

/* One pass over two tensors, converted chunk by chunk unless both are float32. */
static void run_arrays(struct run *r, enum pass_kind k, const struct sg_array *t,
                       const struct sg_array *g, size_t n)
{
    if (t->dtype == SG_DTYPE_FLOAT && g->dtype == SG_DTYPE_FLOAT) {
        run_pass(r, k, t->data, g->data, n);
        return;
    }
    float xb[CHUNK], yb[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t len = n - i < CHUNK ? n - i : CHUNK;
        sg__metrics_to_f32(t, i, len, xb);
        sg__metrics_to_f32(g, i, len, yb);
        run_pass(r, k, xb, yb, len);
    }
}

/* Both passes; the exact path when pass 1 meets NaN/Inf. */
static void compute(struct run *r, const struct sg_array *t, const struct sg_array *g,
                    const float *x, const float *y, size_t n, bool is_bool, struct sg_metrics *m)
{
    pass1_init(&r->a);
    if (t)
        run_arrays(r, P1_FAST, t, g, n);
    else
        run_pass(r, P1_FAST, x, y, n);
    bool slow = !isfinite(r->a.sxx) || !isfinite(r->a.syy);
    if (slow) {
        pass1_init(&r->a);
        if (t)
            run_arrays(r, P1_SLOW, t, g, n);
        else
            run_pass(r, P1_SLOW, x, y, n);
    }
    pass2_init(&r->b, &r->a);
    if (!is_bool) {
        enum pass_kind k = slow ? P2_SLOW : P2_FAST;
        if (t)
            run_arrays(r, k, t, g, n);
        else
            run_pass(r, k, x, y, n);
    }
    metrics_nan(m);
    finish(&r->a, &r->b, is_bool, m);
}

void sg_metrics_f32(const float *x, const float *y, size_t n, struct sg_metrics *out)
{
    if (n == 0) {
        metrics_nan(out);
        out->flags = SG_METRIC_EMPTY;
        return;
    }
    struct run r;
    compute(&r, NULL, NULL, x, y, n, false, out);
}

bool sg__metrics_supported(int32_t dtype)
{
    return dtype != SG_DTYPE_STRING && dtype != SG_DTYPE_COMPLEX64 &&
           dtype != SG_DTYPE_COMPLEX128 && sg_dtype_size(dtype) > 0;
}

static void format_dims(const struct sg_array *a, char *buf, size_t size)
{
    size_t pos = 0;
    pos += (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < a->rank && pos < size; i++)
        pos +=
            (size_t)snprintf(buf + pos, size - pos, "%s%lld", i ? "," : "", (long long)a->dims[i]);
    if (pos < size)
        snprintf(buf + pos, size - pos, "]");
}

sg_status sg_metrics_compute(const struct sg_array *target, const struct sg_array *golden,
                             struct sg_metrics *out, struct sg_diag *diag)
{
    metrics_nan(out);
    if (!sg__metrics_supported(target->dtype) || !sg__metrics_supported(golden->dtype))
        return sg_diag_set(diag, SG_EUNSUPPORTED, "cannot compare %s with %s data",
                           sg_dtype_name(target->dtype), sg_dtype_name(golden->dtype));
    int64_t nt = sg_array_numel(target), ng = sg_array_numel(golden);
    if (nt < 0 || ng < 0 || nt != ng) {
        char a[256], b[256];
        format_dims(target, a, sizeof a);
        format_dims(golden, b, sizeof b);
        return sg_diag_set(diag, SG_ESHAPE, "shapes differ: target %s, golden %s", a, b);
    }
    if (nt == 0) {
        out->flags = SG_METRIC_EMPTY;
        return SG_OK;
    }
    bool is_bool = target->dtype == SG_DTYPE_BOOL || golden->dtype == SG_DTYPE_BOOL;
    struct run r;
    compute(&r, target, golden, NULL, NULL, (size_t)nt, is_bool, out);
    return SG_OK;
}

bool sg_metrics_is_error(const struct sg_metrics *m, const struct sg_thresholds *t)
{
    return sg_metrics_crossed(m, t) != 0;
}

double sg_metrics_severity(const struct sg_metrics *m, const struct sg_thresholds *t)
{
    if (m->overflow)
        return INFINITY;
    double worst = 0;
    double cos_room = 1.0 - t->cosine;
    if (!isnan(m->cosine)) {
        double v = cos_room > 0 ? (1.0 - m->cosine) / cos_room : (m->cosine < t->cosine ? 2 : 0);
        worst = fmax(worst, v);
    }
    const double vals[4] = {m->red, m->kl, sg_metrics_rmse_tested(m, t),
                            sg_metrics_mre_tested(m, t)};
    const double lims[4] = {t->red, t->kl, sg_metrics_rmse_limit(t), t->mre};
    for (int i = 0; i < 4; i++) {
        if (isnan(lims[i]))
            continue; /* switched off */
        if (isnan(vals[i]))
            continue;
        double v = lims[i] > 0 ? vals[i] / lims[i] : (vals[i] > lims[i] ? 2 : 0);
        worst = fmax(worst, v);
    }
    return worst;
}
