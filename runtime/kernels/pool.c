/*
 * pool.c - pooling: MaxPool (with Indices), AveragePool, LpPool over any
 * number of spatial dims; GlobalAveragePool, GlobalMaxPool, GlobalLpPool;
 * MaxUnpool; MaxRoiPool and RoiAlign.
 *
 * Windows follow ONNX Runtime: padding never takes part in a max; an
 * average divides by the window's elements inside the input, or with
 * count_include_pad by those inside the padded input (a ceil_mode window
 * running past the end padding counts only up to it). float32 computes in
 * float32, float64 in float64; float16, bfloat16 and the 8-bit integers of
 * MaxPool go through float32 (exact for the integers) and are converted
 * back. AveragePool reads dilations from opset 19 on: Debian's schemas stop
 * at 17, but an entry for 19 keeps newer models from losing them silently.
 */
#include "window.h"

#include <math.h>
#include <string.h>

enum pmode { PMAX, PAVG, PLP };

struct pool {
    enum pmode mode;
    bool count_pad; /* AveragePool count_include_pad */
    bool col_major; /* MaxPool storage_order 1: Indices in column-major order */
    double p;       /* LpPool */
    struct sg_win w;
};

/* 1.0 / p without dividing by zero (p is checked positive). */
static double inv(double p)
{
    return 1.0 / p;
}

/*
 * Pool `planes` planes of x [planes, in...] into y [planes, out...]; ind
 * (may be NULL) receives for MaxPool the flat input index of each maximum.
 * For each output position the window's valid range is computed per axis,
 * then the innermost axis runs as a plain loop.
 */
#define DEF_POOL(T, sfx)                                                                           \
    static void pool_##sfx(const struct pool *P, const T *x, T *y, int64_t *ind, int64_t planes)   \
    {                                                                                              \
        const struct sg_win *w = &P->w;                                                            \
        uint32_t n = w->n, last = n - 1;                                                           \
        int64_t o[SG_MAX_RANK], klo[SG_MAX_RANK], khi[SG_MAX_RANK], kp[SG_MAX_RANK];               \
        int64_t start[SG_MAX_RANK], istr[SG_MAX_RANK], cstr[SG_MAX_RANK];                          \
        istr[last] = 1;                                                                            \
        for (uint32_t d = last; d-- > 0;)                                                          \
            istr[d] = istr[d + 1] * w->in[d + 1];                                                  \
        cstr[0] = 1;                                                                               \
        for (uint32_t d = 1; d < n; d++)                                                           \
            cstr[d] = cstr[d - 1] * w->in[d - 1];                                                  \
        int64_t dl = w->dil[last];                                                                 \
        for (int64_t pl = 0; pl < planes; pl++) {                                                  \
            const T *xp = x + pl * w->in_size;                                                     \
            memset(o, 0, n * sizeof o[0]);                                                         \
            for (int64_t oi = 0; oi < w->out_size; oi++, sg_win_next(o, w->out, n)) {              \
                bool empty = false;                                                                \
                double padded = 1; /* can pass int64 with huge pads */                             \
                int64_t valid = 1;                                                                 \
                for (uint32_t d = 0; d < n; d++) {                                                 \
                    int64_t s = o[d] * w->stride[d] - w->pad0[d], dd = w->dil[d];                  \
                    start[d] = s;                                                                  \
                    klo[d] = s >= 0 ? 0 : sg_dim_ceildiv(-s, dd);                                  \
                    int64_t h = w->in[d] - s <= 0 ? 0 : sg_dim_ceildiv(w->in[d] - s, dd);          \
                    khi[d] = h < w->k[d] ? h : w->k[d];                                            \
                    if (khi[d] <= klo[d])                                                          \
                        empty = true;                                                              \
                    valid *= khi[d] - klo[d];                                                      \
                    int64_t e = w->in[d] + w->pad1[d] - s;                                         \
                    e = e <= 0 ? 0 : sg_dim_ceildiv(e, dd);                                        \
                    padded *= (double)(e < w->k[d] ? e : w->k[d]);                                 \
                }                                                                                  \
                double acc = P->mode == PMAX ? -INFINITY : 0;                                      \
                int64_t arg = -1;                                                                  \
                if (!empty) {                                                                      \
                    for (uint32_t d = 0; d < n; d++)                                               \
                        kp[d] = klo[d];                                                            \
                    for (;;) {                                                                     \
                        int64_t b = 0;                                                             \
                        for (uint32_t d = 0; d < last; d++)                                        \
                            b += (start[d] + kp[d] * w->dil[d]) * istr[d];                         \
                        const T *row = xp + b;                                                     \
                        int64_t i0 = start[last];                                                  \
                        if (P->mode == PMAX) {                                                     \
                            T m = (T)acc;                                                          \
                            int64_t a = -1;                                                        \
                            for (int64_t q = klo[last]; q < khi[last]; q++) {                      \
                                T v = row[i0 + q * dl];                                            \
                                if (v > m || (a < 0 && arg < 0)) {                                 \
                                    m = v;                                                         \
                                    a = q;                                                         \
                                }                                                                  \
                            }                                                                      \
                            if (a >= 0) {                                                          \
                                acc = m;                                                           \
                                kp[last] = a;                                                      \
                                arg = 0;                                                           \
                                for (uint32_t d = 0; d < n; d++)                                   \
                                    arg += (start[d] + kp[d] * w->dil[d]) *                        \
                                           (P->col_major ? cstr[d] : istr[d]);                     \
                            }                                                                      \
                        } else if (P->mode == PAVG) {                                              \
                            T s = 0;                                                               \
                            for (int64_t q = klo[last]; q < khi[last]; q++)                        \
                                s += row[i0 + q * dl];                                             \
                            acc += s;                                                              \
                        } else {                                                                   \
                            for (int64_t q = klo[last]; q < khi[last]; q++)                        \
                                acc += pow(fabs((double)row[i0 + q * dl]), P->p);                  \
                        }                                                                          \
                        uint32_t d = last;                                                         \
                        while (d-- > 0 && ++kp[d] >= khi[d])                                       \
                            kp[d] = klo[d];                                                        \
                        if (d == UINT32_MAX)                                                       \
                            break;                                                                 \
                    }                                                                              \
                }                                                                                  \
                if (P->mode == PAVG)                                                               \
                    acc = valid ? acc / (P->count_pad ? padded : (double)valid) : 0;               \
                else if (P->mode == PLP)                                                           \
                    acc = P->p == 2 ? sqrt(acc) : P->p == 1 ? acc : pow(acc, inv(P->p));           \
                y[pl * w->out_size + oi] = (T)acc;                                                 \
                if (ind)                                                                           \
                    ind[pl * w->out_size + oi] = pl * w->in_size + (arg < 0 ? 0 : arg);            \
            }                                                                                      \
        }                                                                                          \
    }

DEF_POOL(float, f)
DEF_POOL(double, d)

/* The 2-D loops built for AVX-512, AVX2 and the baseline (as in conv.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SG_POOL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SG_POOL_CLONES
#endif

/*
 * The same for 1-D and 2-D max and average pooling (1-D as height 1), the
 * shapes of CNNs, without the N-D bookkeeping: the valid kernel columns of
 * every output column are computed once per plane size, then each output
 * is a plain double loop over its window.
 */
#define DEF_POOL2D(T, sfx)                                                                         \
    SG_POOL_CLONES static void pool2d_##sfx(const struct pool *P, const struct sg_win *w,          \
                                            const T *x, T *y, int64_t *ind, int64_t planes,        \
                                            int64_t *clo, int64_t *chi, int64_t *cpad, T *tmp)     \
    {                                                                                              \
        int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1];                        \
        int64_t KH = w->k[0], KW = w->k[1], sh = w->stride[0], sw = w->stride[1];                  \
        int64_t dh = w->dil[0], dw = w->dil[1];                                                    \
        for (int64_t ow = 0; ow < OW; ow++) {                                                      \
            int64_t s = ow * sw - w->pad0[1], e = W + w->pad1[1] - s;                              \
            clo[ow] = s >= 0 ? 0 : sg_dim_ceildiv(-s, dw);                                         \
            chi[ow] = W - s <= 0 ? 0 : sg_dim_ceildiv(W - s, dw);                                  \
            chi[ow] = chi[ow] < KW ? chi[ow] : KW;                                                 \
            e = e <= 0 ? 0 : sg_dim_ceildiv(e, dw);                                                \
            cpad[ow] = e < KW ? e : KW;                                                            \
        }                                                                                          \
        for (int64_t pl = 0; pl < planes; pl++) {                                                  \
            const T *xp = x + pl * H * W;                                                          \
            T *yp = y + pl * OH * OW;                                                              \
            for (int64_t oh = 0; oh < OH; oh++) {                                                  \
                int64_t hs = oh * sh - w->pad0[0], e = H + w->pad1[0] - hs;                        \
                int64_t rlo = hs >= 0 ? 0 : sg_dim_ceildiv(-hs, dh);                               \
                int64_t rhi = H - hs <= 0 ? 0 : sg_dim_ceildiv(H - hs, dh);                        \
                rhi = rhi < KH ? rhi : KH;                                                         \
                e = e <= 0 ? 0 : sg_dim_ceildiv(e, dh);                                            \
                int64_t rpad = e < KH ? e : KH;                                                    \
                if (!ind) {                                                                        \
                    /* Separable: reduce the window's rows into tmp (contiguous, vectorised),      \
                     * then each output reduces KW entries of tmp. */                              \
                    bool mx = P->mode == PMAX;                                                     \
                    for (int64_t j = 0; j < W; j++)                                                \
                        tmp[j] = mx ? (T)-INFINITY : 0;                                            \
                    for (int64_t kh = rlo; kh < rhi; kh++) {                                       \
                        const T *row = xp + (hs + kh * dh) * W;                                    \
                        if (mx)                                                                    \
                            for (int64_t j = 0; j < W; j++)                                        \
                                tmp[j] = row[j] > tmp[j] ? row[j] : tmp[j];                        \
                        else                                                                       \
                            for (int64_t j = 0; j < W; j++)                                        \
                                tmp[j] += row[j];                                                  \
                    }                                                                              \
                    for (int64_t ow = 0; ow < OW; ow++) {                                          \
                        int64_t tb = ow * sw - w->pad0[1];                                         \
                        T acc = mx ? (T)-INFINITY : 0;                                             \
                        for (int64_t kw = clo[ow]; kw < chi[ow]; kw++) {                           \
                            T v = tmp[tb + kw * dw];                                               \
                            acc = mx ? (v > acc ? v : acc) : acc + v;                              \
                        }                                                                          \
                        if (!mx) {                                                                 \
                            double cnt = P->count_pad                                              \
                                             ? (double)rpad * (double)cpad[ow]                     \
                                             : (double)((rhi - rlo) * (chi[ow] - clo[ow]));        \
                            acc = cnt > 0 && rhi > rlo && chi[ow] > clo[ow] ? acc / (T)cnt : 0;    \
                        }                                                                          \
                        yp[oh * OW + ow] = acc;                                                    \
                    }                                                                              \
                    continue;                                                                      \
                }                                                                                  \
                for (int64_t ow = 0; ow < OW; ow++) {                                              \
                    int64_t ws = ow * sw - w->pad0[1];                                             \
                    T acc = 0;                                                                     \
                    int64_t arg = -1;                                                              \
                    if (P->mode == PMAX) {                                                         \
                        acc = (T)-INFINITY;                                                        \
                        for (int64_t kh = rlo; kh < rhi; kh++) {                                   \
                            int64_t r = (hs + kh * dh) * W + ws;                                   \
                            for (int64_t kw = clo[ow]; kw < chi[ow]; kw++) {                       \
                                T v = xp[r + kw * dw];                                             \
                                if (v > acc || arg < 0) {                                          \
                                    acc = v;                                                       \
                                    arg = r + kw * dw;                                             \
                                }                                                                  \
                            }                                                                      \
                        }                                                                          \
                    } else {                                                                       \
                        for (int64_t kh = rlo; kh < rhi; kh++) {                                   \
                            const T *row = xp + (hs + kh * dh) * W + ws;                           \
                            for (int64_t kw = clo[ow]; kw < chi[ow]; kw++)                         \
                                acc += row[kw * dw];                                               \
                        }                                                                          \
                        double cnt = P->count_pad ? (double)rpad * (double)cpad[ow]                \
                                                  : (double)((rhi - rlo) * (chi[ow] - clo[ow]));   \
                        acc = cnt > 0 && rhi > rlo && chi[ow] > clo[ow] ? acc / (T)cnt : 0;        \
                    }                                                                              \
                    yp[oh * OW + ow] = acc;                                                        \
                    if (ind) {                                                                     \
                        int64_t a = arg < 0 ? 0 : arg;                                             \
                        if (P->col_major)                                                          \
                            a = (a / W) + (a % W) * H;                                             \
                        ind[pl * OH * OW + oh * OW + ow] = pl * H * W + a;                         \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEF_POOL2D(float, f)
DEF_POOL2D(double, d)

/* Write floats into tensor Y of any dtype MaxPool accepts. */
static void store_floats(sg_rt_value *Y, const float *src)
{
    switch (Y->dtype) {
    case SG_DTYPE_FLOAT:
        if (Y->data != src)
            memcpy(Y->data, src, (size_t)Y->numel * sizeof(float));
        break;
    case SG_DTYPE_FLOAT16:
        for (int64_t i = 0; i < Y->numel; i++)
            ((uint16_t *)Y->data)[i] = sg_float_to_half(src[i]);
        break;
    case SG_DTYPE_BFLOAT16:
        for (int64_t i = 0; i < Y->numel; i++)
            ((uint16_t *)Y->data)[i] = sg_float_to_bf16(src[i]);
        break;
    case SG_DTYPE_UINT8:
        for (int64_t i = 0; i < Y->numel; i++)
            ((uint8_t *)Y->data)[i] = (uint8_t)(src[i] < 0 ? 0 : src[i] > 255 ? 255 : src[i]);
        break;
    case SG_DTYPE_INT8:
        for (int64_t i = 0; i < Y->numel; i++)
            ((int8_t *)Y->data)[i] = (int8_t)(src[i] < -128 ? -128 : src[i] > 127 ? 127 : src[i]);
        break;
    default:
        break;
    }
}

/* MaxPool, AveragePool, LpPool. */
static sg_status run_pool(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const char *op = k->node->op_type;
    struct pool P;
    memset(&P, 0, sizeof P);
    P.mode = strcmp(op, "MaxPool") == 0 ? PMAX : strcmp(op, "AveragePool") == 0 ? PAVG : PLP;
    if (X->rank < 3)
        return sg_kfail(k, SG_ESHAPE, "input X %s must have rank >= 3 (batch, channels, spatial)",
                        sg_kshape(k, X));
    struct sg_win *w = &P.w;
    w->n = X->rank - 2;
    const int64_t *ks;
    if (sg_kattr_ints(k, "kernel_shape", &ks) != (int64_t)w->n)
        return sg_kfail(k, SG_EINVAL, "kernel_shape must have %u values for input X %s", w->n,
                        sg_kshape(k, X));
    for (uint32_t d = 0; d < w->n; d++) {
        if (ks[d] < 1)
            return sg_kfail(k, SG_EINVAL, "kernel_shape %s has a value below 1",
                            sg_kdims(k, ks, w->n));
        w->k[d] = ks[d];
    }
    bool ceil_mode = sg_kattr_int(k, "ceil_mode", 0) != 0;
    sg_status st;
    if ((st = sg_win_attrs(k, w, X, P.mode != PAVG || k->opset >= 19)) ||
        (st = sg_win_forward(k, w, ceil_mode)))
        return st;
    P.count_pad = sg_kattr_int(k, "count_include_pad", 0) != 0;
    P.col_major = sg_kattr_int(k, "storage_order", 0) != 0;
    P.p = sg_kattr_float(k, "p", 2.0f);
    if (P.mode == PLP && !(P.p > 0))
        return sg_kfail(k, SG_EINVAL, "p must be positive, got %g", P.p);
    int64_t od[SG_MAX_RANK];
    od[0] = X->dims[0];
    od[1] = X->dims[1];
    for (uint32_t d = 0; d < w->n; d++)
        od[d + 2] = w->out[d];
    sg_rt_value *Y, *I = NULL;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    if (P.mode == PMAX && sg_kout_wanted(k, 1) &&
        (st = sg_kout(k, 1, SG_DTYPE_INT64, od, X->rank, &I)))
        return st;
    int64_t planes = X->dims[0] * X->dims[1];
    if (!Y->numel)
        return SG_OK;
    int64_t *ind = I ? I->data : NULL;
    /* 1-D and 2-D max/average pooling take the direct path. */
    struct sg_win v;
    bool flat = P.mode != PLP && w->n <= 2;
    int64_t *lo = NULL, *hi = NULL, *pad = NULL;
    void *tmp = NULL;
    if (flat) {
        v = *w;
        if (w->n == 1) {
            memset(&v, 0, sizeof v);
            v.n = 2;
            v.in[0] = v.k[0] = v.out[0] = v.stride[0] = v.dil[0] = 1;
            v.in[1] = w->in[0];
            v.k[1] = w->k[0];
            v.out[1] = w->out[0];
            v.stride[1] = w->stride[0];
            v.dil[1] = w->dil[0];
            v.pad0[1] = w->pad0[0];
            v.pad1[1] = w->pad1[0];
        }
        lo = sg_kscratch(k, (size_t)(v.out[1] + 1) * sizeof *lo);
        hi = sg_kscratch(k, (size_t)(v.out[1] + 1) * sizeof *hi);
        pad = sg_kscratch(k, (size_t)(v.out[1] + 1) * sizeof *pad);
        tmp = sg_kscratch(k, (size_t)(v.in[1] + 1) * sizeof(double));
        if (!lo || !hi || !pad || !tmp)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
    }
    if (X->dtype == SG_DTYPE_DOUBLE) {
        if (flat)
            pool2d_d(&P, &v, X->data, Y->data, ind, planes, lo, hi, pad, tmp);
        else
            pool_d(&P, X->data, Y->data, ind, planes);
        return SG_OK;
    }
    const float *x = sg_kfloats(k, X);
    float *y =
        X->dtype == SG_DTYPE_FLOAT ? Y->data : sg_kscratch(k, (size_t)Y->numel * sizeof(float));
    if (!x || !y)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (flat)
        pool2d_f(&P, &v, x, y, ind, planes, lo, hi, pad, tmp);
    else
        pool_f(&P, x, y, ind, planes);
    store_floats(Y, y);
    return SG_OK;
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: one value per plane. */
static sg_status run_global_pool(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const char *op = k->node->op_type;
    enum pmode mode = strcmp(op, "GlobalMaxPool") == 0       ? PMAX
                      : strcmp(op, "GlobalAveragePool") == 0 ? PAVG
                                                             : PLP;
    double p = sg_kattr_float(k, "p", 2.0f);
    if (X->rank < 2)
        return sg_kfail(k, SG_ESHAPE, "input X %s must have rank >= 2 (batch, channels, ...)",
                        sg_kshape(k, X));
    if (mode == PLP && !(p > 0))
        return sg_kfail(k, SG_EINVAL, "p must be positive, got %g", p);
    int64_t od[SG_MAX_RANK], planes = X->dims[0] * X->dims[1], size = 1;
    for (uint32_t d = 0; d < X->rank; d++) {
        od[d] = d < 2 ? X->dims[d] : 1;
        if (d >= 2)
            size *= X->dims[d];
    }
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, od, X->rank, &Y);
    if (st)
        return st;
    if (size == 0 && planes > 0 && mode == PMAX)
        return sg_kfail(k, SG_ESHAPE, "input X %s has no elements to take the maximum of",
                        sg_kshape(k, X));
    const float *xf = X->dtype == SG_DTYPE_DOUBLE ? NULL : sg_kfloats(k, X);
    const double *xd = X->dtype == SG_DTYPE_DOUBLE ? X->data : NULL;
    if (!xf && !xd)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t pl = 0; pl < planes; pl++) {
        double acc = mode == PMAX ? -INFINITY : 0;
        if (xd) {
            const double *v = xd + pl * size;
            for (int64_t i = 0; i < size; i++)
                acc = mode == PMAX   ? (v[i] > acc ? v[i] : acc)
                      : mode == PAVG ? acc + v[i]
                                     : acc + pow(fabs(v[i]), p);
        } else {
            const float *v = xf + pl * size;
            if (mode == PMAX) {
                float m = v[0];
                for (int64_t i = 1; i < size; i++)
                    m = v[i] > m ? v[i] : m;
                acc = m;
            } else if (mode == PAVG) {
                float s = 0;
                for (int64_t i = 0; i < size; i++)
                    s += v[i];
                acc = s;
            } else {
                for (int64_t i = 0; i < size; i++)
                    acc += pow(fabs(v[i]), p);
            }
        }
        if (mode == PAVG)
            acc = size ? acc / (double)size : 0;
        else if (mode == PLP)
            acc = pow(acc, inv(p));
        sg_rt_set_f64(Y, pl, acc);
    }
    return SG_OK;
}

/* ----------------------------------------------------------- MaxUnpool */

/*
 * MaxUnpool: X and the Indices of a MaxPool scattered into zeros of the
 * pre-pool shape: output_shape (input 2) when given, else (in - 1) *
 * stride + kernel - pads per spatial axis.
 */
static sg_status run_max_unpool(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *I = sg_kin(k, 1);
    if (X->rank < 3)
        return sg_kfail(k, SG_ESHAPE, "input X %s must have rank >= 3", sg_kshape(k, X));
    if (I->dtype != SG_DTYPE_INT64 || I->rank != X->rank ||
        memcmp(I->dims, X->dims, X->rank * sizeof X->dims[0]))
        return sg_kfail(k, SG_ESHAPE, "indices I %s must be int64 of the shape of X %s",
                        sg_kshape(k, I), sg_kshape(k, X));
    struct sg_win w;
    memset(&w, 0, sizeof w);
    w.n = X->rank - 2;
    const int64_t *ks;
    if (sg_kattr_ints(k, "kernel_shape", &ks) != (int64_t)w.n)
        return sg_kfail(k, SG_EINVAL, "kernel_shape must have %u values for input X %s", w.n,
                        sg_kshape(k, X));
    sg_status st = sg_win_attrs(k, &w, X, false);
    if (st)
        return st;
    /* The indices count in the default shape dd; a given output_shape of
     * other spatial dims keeps each element at its coordinates there. */
    int64_t dd[SG_MAX_RANK], od[SG_MAX_RANK], dsize = 1, osize = 1;
    dd[0] = X->dims[0];
    dd[1] = X->dims[1];
    for (uint32_t d = 0; d < w.n; d++) {
        /* (in - 1) * stride + kernel - pads */
        int64_t v;
        if (ks[d] < 1 || !sg_dim_mul(X->dims[d + 2] - 1, w.stride[d], &v) ||
            !sg_dim_add(v, ks[d], &v) || !sg_dim_sub(v, w.pad0[d], &v) ||
            !sg_dim_sub(v, w.pad1[d], &v))
            return sg_kfail(k, SG_ERANGE,
                            "kernel_shape %s, strides and pads give no output size on spatial "
                            "axis %u for X %s",
                            sg_kdims(k, ks, w.n), d, sg_kshape(k, X));
        dd[d + 2] = v;
    }
    if (!sg_dims_numel(dd + 2, w.n, &dsize))
        return sg_kfail(k, SG_ERANGE, "the unpooled shape %s is too large",
                        sg_kdims(k, dd, X->rank));
    memcpy(od, dd, X->rank * sizeof od[0]);
    if (sg_kin(k, 2)) {
        const int64_t *os;
        int64_t nos;
        if ((st = sg_kin_ints(k, 2, &os, &nos)))
            return st;
        if (nos != (int64_t)X->rank || os[0] != X->dims[0] || os[1] != X->dims[1])
            return sg_kfail(k, SG_ESHAPE,
                            "output_shape %s must have rank %u and the batch and channels of X %s",
                            sg_kdims(k, os, (uint32_t)nos), X->rank, sg_kshape(k, X));
        memcpy(od, os, X->rank * sizeof od[0]);
    }
    bool remap = false;
    for (uint32_t d = 2; d < X->rank; d++)
        remap |= dd[d] != od[d];
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    (void)sg_dims_numel(od + 2, w.n, &osize); /* a part of Y's shape: it fits */
    size_t es = sg_rt_elem_size(X->dtype);
    const int64_t *ind = I->data;
    for (int64_t i = 0; i < X->numel; i++) {
        int64_t j = ind[i];
        if (remap && j >= 0 && dsize > 0) {
            int64_t plane = j / dsize, r = j % dsize, t = 0, mul = 1;
            bool inside = plane < X->dims[0] * X->dims[1];
            for (uint32_t d = X->rank; d-- > 2 && inside;) {
                int64_t c = r % dd[d];
                r /= dd[d];
                inside = c < od[d];
                t += c * mul; /* < osize */
                mul *= od[d];
            }
            j = inside ? plane * osize + t : -1;
        }
        if (j < 0 || j >= Y->numel)
            return sg_kfail(k, SG_ERANGE, "index %lld at %lld is outside the output %s",
                            (long long)ind[i], (long long)i, sg_kshape(k, Y));
        if (es == 4)
            ((uint32_t *)Y->data)[j] = ((const uint32_t *)X->data)[i];
        else if (es == 8)
            ((uint64_t *)Y->data)[j] = ((const uint64_t *)X->data)[i];
        else
            ((uint16_t *)Y->data)[j] = ((const uint16_t *)X->data)[i];
    }
    return SG_OK;
}

/* ------------------------------------------------------ region pooling */

/* X [N, C, H, W] and rois [R, cols] of X's float type. */
static sg_status check_rois(struct sg_kctx *k, const sg_rt_value *X, const sg_rt_value *rois,
                            int64_t cols)
{
    if (X->rank != 4)
        return sg_kfail(k, SG_ESHAPE, "input X %s must be [N, C, H, W]", sg_kshape(k, X));
    if (rois->dtype != X->dtype || rois->rank != 2 || rois->dims[1] != cols)
        return sg_kfail(k, SG_ESHAPE, "rois %s must be [num_rois, %lld] of the type of X %s",
                        sg_kshape(k, rois), (long long)cols, sg_kshape(k, X));
    return SG_OK;
}

/* Caffe's ROI max pooling, as ONNX Runtime computes it. */
static sg_status run_max_roi_pool(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *R = sg_kin(k, 1);
    sg_status st = check_rois(k, X, R, 5);
    if (st)
        return st;
    const int64_t *ps;
    if (sg_kattr_ints(k, "pooled_shape", &ps) != 2 || ps[0] < 1 || ps[1] < 1)
        return sg_kfail(k, SG_EINVAL, "pooled_shape must be two positive ints");
    double scale = sg_kattr_float(k, "spatial_scale", 1.0f);
    int64_t C = X->dims[1], H = X->dims[2], W = X->dims[3], PH = ps[0], PW = ps[1];
    int64_t od[4] = {R->dims[0], C, PH, PW};
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, 4, &Y)))
        return st;
    for (int64_t r = 0; r < R->dims[0]; r++) {
        int64_t b = sg_dim_from_double(sg_rt_get_f64(R, r * 5));
        if (b < 0 || b >= X->dims[0])
            return sg_kfail(k, SG_ERANGE, "roi %lld has batch index %lld outside X %s",
                            (long long)r, (long long)b, sg_kshape(k, X));
        /* Corners far outside the image saturate (sg_dim_from_double) and
         * clip to it below, as any corner outside does. */
        int64_t sw = sg_dim_from_double(round(sg_rt_get_f64(R, r * 5 + 1) * scale));
        int64_t sh = sg_dim_from_double(round(sg_rt_get_f64(R, r * 5 + 2) * scale));
        int64_t ew = sg_dim_from_double(round(sg_rt_get_f64(R, r * 5 + 3) * scale));
        int64_t eh = sg_dim_from_double(round(sg_rt_get_f64(R, r * 5 + 4) * scale));
        int64_t rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1, rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1;
        double bh = (double)rh / (double)PH, bw = (double)rw / (double)PW;
        for (int64_t c = 0; c < C; c++) {
            int64_t plane = (b * C + c) * H * W;
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    int64_t h0 = sg_dim_from_double(floor((double)ph * bh) + (double)sh);
                    int64_t h1 = sg_dim_from_double(ceil((double)(ph + 1) * bh) + (double)sh);
                    int64_t w0 = sg_dim_from_double(floor((double)pw * bw) + (double)sw);
                    int64_t w1 = sg_dim_from_double(ceil((double)(pw + 1) * bw) + (double)sw);
                    h0 = h0 < 0 ? 0 : h0 > H ? H : h0;
                    h1 = h1 < 0 ? 0 : h1 > H ? H : h1;
                    w0 = w0 < 0 ? 0 : w0 > W ? W : w0;
                    w1 = w1 < 0 ? 0 : w1 > W ? W : w1;
                    double m = h1 <= h0 || w1 <= w0 ? 0 : -INFINITY;
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t x = w0; x < w1; x++) {
                            double v = sg_rt_get_f64(X, plane + h * W + x);
                            m = v > m ? v : m;
                        }
                    sg_rt_set_f64(Y, ((r * C + c) * PH + ph) * PW + pw, m);
                }
        }
    }
    return SG_OK;
}

/* The most sampling points of one RoiAlign bin (sampling_ratio squared, or
 * the roi's extent per bin when it is 0): 16M points, 768 MB of scratch. */
#define MAX_GRID ((int64_t)1 << 24)

/* One bilinear sample of RoiAlign: four input offsets and weights. */
struct sample {
    int64_t pos[4];
    double wt[4];
};

/*
 * RoiAlign as ONNX Runtime computes it (and the ONNX reference copies):
 * sample points on a regular grid in each bin, bilinear interpolation
 * clamped at the border, points more than one pixel outside weighing
 * zero; "avg" averages the samples, "max" takes the largest weighted
 * corner of any sample. Opset 16 adds coordinate_transformation_mode
 * (default half_pixel); before it the mode is output_half_pixel.
 */
static sg_status run_roi_align(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *R = sg_kin(k, 1), *B = sg_kin(k, 2);
    sg_status st = check_rois(k, X, R, 4);
    if (st)
        return st;
    if ((B->dtype != SG_DTYPE_INT64 && B->dtype != SG_DTYPE_INT32) || B->rank != 1 ||
        B->dims[0] != R->dims[0])
        return sg_kfail(k, SG_ESHAPE, "batch_indices %s must be int64[%lld] for rois %s",
                        sg_kshape(k, B), (long long)R->dims[0], sg_kshape(k, R));
    const char *mode = sg_kattr_string(k, "mode", "avg");
    const char *ctm = sg_kattr_string(k, "coordinate_transformation_mode",
                                      k->opset >= 16 ? "half_pixel" : "output_half_pixel");
    bool is_max = strcmp(mode, "max") == 0, half = strcmp(ctm, "half_pixel") == 0;
    if (!is_max && strcmp(mode, "avg") != 0)
        return sg_kfail(k, SG_EINVAL, "unknown mode '%s'", mode);
    if (!half && strcmp(ctm, "output_half_pixel") != 0)
        return sg_kfail(k, SG_EINVAL, "unknown coordinate_transformation_mode '%s'", ctm);
    int64_t PH = sg_kattr_int(k, "output_height", 1), PW = sg_kattr_int(k, "output_width", 1);
    int64_t ratio = sg_kattr_int(k, "sampling_ratio", 0);
    double scale = sg_kattr_float(k, "spatial_scale", 1.0f);
    if (PH < 1 || PW < 1 || ratio < 0)
        return sg_kfail(k, SG_EINVAL,
                        "output_height %lld, output_width %lld and sampling_ratio "
                        "%lld must be positive (the ratio may be 0)",
                        (long long)PH, (long long)PW, (long long)ratio);
    int64_t C = X->dims[1], H = X->dims[2], W = X->dims[3], nr = R->dims[0];
    int64_t od[4] = {nr, C, PH, PW};
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, 4, &Y)))
        return st;
    const float *xf = X->dtype == SG_DTYPE_DOUBLE ? NULL : sg_kfloats(k, X);
    const double *xd = X->dtype == SG_DTYPE_DOUBLE ? X->data : NULL;
    if (!xf && !xd && X->numel)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    double off = half ? 0.5 : 0;
    for (int64_t r = 0; r < nr; r++) {
        int64_t b = sg_rt_get_i64(B, r);
        if (b < 0 || b >= X->dims[0])
            return sg_kfail(k, SG_ERANGE, "roi %lld has batch index %lld outside X %s",
                            (long long)r, (long long)b, sg_kshape(k, X));
        if (H == 0 || W == 0)
            continue; /* nothing to sample: the bins stay 0 */
        double x0 = sg_rt_get_f64(R, r * 4) * scale - off;
        double y0 = sg_rt_get_f64(R, r * 4 + 1) * scale - off;
        double rw = sg_rt_get_f64(R, r * 4 + 2) * scale - off - x0;
        double rh = sg_rt_get_f64(R, r * 4 + 3) * scale - off - y0;
        if (!half) {
            rw = rw > 1 ? rw : 1;
            rh = rh > 1 ? rh : 1;
        }
        double bh = rh / (double)PH, bw = rw / (double)PW;
        int64_t gh = ratio > 0 ? ratio : sg_dim_from_double(ceil(rh / (double)PH));
        int64_t gw = ratio > 0 ? ratio : sg_dim_from_double(ceil(rw / (double)PW));
        if (gh < 0)
            gh = 0;
        if (gw < 0)
            gw = 0;
        /* One bin's sampling grid is kept: it must fit memory. */
        int64_t grid;
        if (!sg_dim_mul(gh, gw, &grid) || grid > MAX_GRID)
            return sg_kfail(k, SG_ERANGE,
                            "roi %lld needs a sampling grid of %lld x %lld points per bin (at "
                            "most %lld)",
                            (long long)r, (long long)gh, (long long)gw, (long long)MAX_GRID);
        double count = grid > 1 ? (double)grid : 1;
        struct sample *smp = sg_kscratch(k, (size_t)(grid + 1) * sizeof *smp);
        if (!smp)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t ph = 0; ph < PH; ph++)
            for (int64_t pw = 0; pw < PW; pw++) {
                /* The samples of this bin (the same for every channel). */
                int64_t ns = 0;
                for (int64_t iy = 0; iy < gh; iy++)
                    for (int64_t ix = 0; ix < gw; ix++, ns++) {
                        struct sample *s = &smp[ns];
                        double yy = y0 + (double)ph * bh + ((double)iy + .5) * bh / (double)gh;
                        double xx = x0 + (double)pw * bw + ((double)ix + .5) * bw / (double)gw;
                        memset(s, 0, sizeof *s);
                        if (!(yy >= -1.0 && yy <= (double)H && xx >= -1.0 && xx <= (double)W))
                            continue; /* outside, or NaN */
                        yy = yy <= 0 ? 0 : yy;
                        xx = xx <= 0 ? 0 : xx;
                        int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;
                        if (yl >= H - 1) {
                            yh = yl = H - 1;
                            yy = (double)yl;
                        } else {
                            yh = yl + 1;
                        }
                        if (xl >= W - 1) {
                            xh = xl = W - 1;
                            xx = (double)xl;
                        } else {
                            xh = xl + 1;
                        }
                        double ly = yy - (double)yl, lx = xx - (double)xl;
                        double hy = 1 - ly, hx = 1 - lx;
                        s->pos[0] = yl * W + xl;
                        s->pos[1] = yl * W + xh;
                        s->pos[2] = yh * W + xl;
                        s->pos[3] = yh * W + xh;
                        s->wt[0] = hy * hx;
                        s->wt[1] = hy * lx;
                        s->wt[2] = ly * hx;
                        s->wt[3] = ly * lx;
                    }
                for (int64_t c = 0; c < C; c++) {
                    int64_t plane = (b * C + c) * H * W;
                    double acc = 0;
                    for (int64_t i = 0; i < ns; i++) {
                        double v = 0, m = 0;
                        for (int j = 0; j < 4; j++) {
                            int64_t at = plane + smp[i].pos[j];
                            double t = smp[i].wt[j] * (xd ? xd[at] : (double)xf[at]);
                            v += t;
                            m = j == 0 || t > m ? t : m;
                        }
                        if (is_max)
                            acc = i == 0 || m > acc ? m : acc;
                        else
                            acc += v;
                    }
                    sg_rt_set_f64(Y, ((r * C + c) * PH + ph) * PW + pw, is_max ? acc : acc / count);
                }
            }
    }
    return SG_OK;
}

#define FL SG_KT_FLOATS
#define FL8 (SG_KT_FLOATS | SG_KT(SG_DTYPE_UINT8) | SG_KT(SG_DTYPE_INT8))
static const struct sg_kernel kernels[] = {
    {"", "MaxPool", 1, 0, FL, 0, run_pool, "r"},
    {"", "MaxPool", 8, 0, FL, 0, run_pool, "r"},
    {"", "MaxPool", 10, 0, FL, 0, run_pool, "r"},
    {"", "MaxPool", 11, 0, FL, 0, run_pool, "r"},
    {"", "MaxPool", 12, 0, FL8, 0, run_pool, "r"},
    {"", "AveragePool", 1, 0, FL, 0, run_pool, "r"},
    {"", "AveragePool", 7, 0, FL, 0, run_pool, "r"},
    {"", "AveragePool", 10, 0, FL, 0, run_pool, "r"},
    {"", "AveragePool", 11, 0, FL, 0, run_pool, "r"},
    {"", "AveragePool", 19, 0, FL, 0, run_pool, "r"},
    {"", "LpPool", 1, 0, FL, 0, run_pool, "r"},
    {"", "LpPool", 2, 0, FL, 0, run_pool, "r"},
    {"", "LpPool", 11, 0, FL, 0, run_pool, "r"},
    {"", "LpPool", 18, 0, FL, 0, run_pool, "r"}, /* ceil_mode, dilations */
    {"", "GlobalAveragePool", 1, 0, FL, 0, run_global_pool, "r"},
    {"", "GlobalMaxPool", 1, 0, FL, 0, run_global_pool, "r"},
    {"", "GlobalLpPool", 1, 0, FL, 0, run_global_pool, "r"},
    {"", "GlobalLpPool", 2, 0, FL, 0, run_global_pool, "r"},
    {"", "MaxUnpool", 9, 0, FL, 0, run_max_unpool, "rro"},
    {"", "MaxUnpool", 11, 0, FL, 0, run_max_unpool, "rro"},
    {"", "MaxRoiPool", 1, 0, FL, 0, run_max_roi_pool, "rr"},
    {"", "RoiAlign", 10, 0, FL, 0, run_roi_align, "rrr"},
    {"", "RoiAlign", 16, 0, FL, 0, run_roi_align, "rrr"},
};
SG_KERNEL_FAMILY(pool, kernels);
