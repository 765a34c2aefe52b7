/*
 * conv.c - Conv and ConvTranspose in any number of spatial dimensions, with
 * groups, strides, dilations, pads and auto_pad, through BLAS: Conv is
 * im2col + GEMM (a 1x1 convolution with stride 1 and no padding uses the
 * input as it is), ConvTranspose is GEMM + col2im. float32 and float64 are
 * native (sgemm / dgemm, accumulation in the type); float16 and bfloat16
 * are widened to float32.
 */
#include "rt_impl.h"

#include <cblas.h>
#include <string.h>

#define MAXSP 8 /* spatial dimensions supported */

struct geom {
    uint32_t nsp;                  /* spatial dims */
    int64_t N, C, M, group;        /* batch, input channels, output channels */
    int64_t in[MAXSP], out[MAXSP]; /* spatial sizes */
    int64_t k[MAXSP], stride[MAXSP], dil[MAXSP];
    int64_t pad0[MAXSP], pad1[MAXSP];
    int64_t in_sz, out_sz, k_sz; /* products */
};

/* Read kernel_shape/strides/dilations/pads/auto_pad for a convolution. */
static sg_status read_attrs(struct sg_kctx *k, struct geom *g, const int64_t *wk)
{
    const int64_t *v;
    int64_t n;
    uint32_t s = g->nsp;
    if ((n = sg_kattr_ints(k, "kernel_shape", &v)) >= 0) {
        if (n != s)
            return sg_kfail(k, SG_ESHAPE, "kernel_shape has %lld dims for %u spatial dims",
                            (long long)n, s);
        for (uint32_t i = 0; i < s; i++)
            if (wk && v[i] != wk[i])
                return sg_kfail(k, SG_ESHAPE, "kernel_shape %s disagrees with the weights",
                                sg_kdims(k, v, s));
    }
    for (uint32_t i = 0; i < s; i++) {
        g->k[i] = wk ? wk[i] : v[i];
        g->stride[i] = g->dil[i] = 1;
        g->pad0[i] = g->pad1[i] = 0;
    }
    if ((n = sg_kattr_ints(k, "strides", &v)) >= 0) {
        if (n != s)
            return sg_kfail(k, SG_ESHAPE, "strides has %lld values for %u dims", (long long)n, s);
        memcpy(g->stride, v, s * sizeof *v);
    }
    if ((n = sg_kattr_ints(k, "dilations", &v)) >= 0) {
        if (n != s)
            return sg_kfail(k, SG_ESHAPE, "dilations has %lld values for %u dims", (long long)n, s);
        memcpy(g->dil, v, s * sizeof *v);
    }
    if ((n = sg_kattr_ints(k, "pads", &v)) >= 0) {
        if (n != 2 * s)
            return sg_kfail(k, SG_ESHAPE, "pads has %lld values for %u dims", (long long)n, s);
        memcpy(g->pad0, v, s * sizeof *v);
        memcpy(g->pad1, v + s, s * sizeof *v);
    }
    for (uint32_t i = 0; i < s; i++)
        if (g->stride[i] <= 0 || g->dil[i] <= 0 || g->k[i] <= 0 || g->pad0[i] < 0 || g->pad1[i] < 0)
            return sg_kfail(k, SG_EINVAL, "bad kernel %lld, stride %lld, dilation %lld or pads",
                            (long long)g->k[i], (long long)g->stride[i], (long long)g->dil[i]);
    return SG_OK;
}

/* im2col for one image of one group: col[(c*k_sz + kpos) * out_sz + opos]. */
#define IM2COL(T, NAME)                                                                            \
    static void NAME(const struct geom *g, const T *x, int64_t cin, T *col)                        \
    {                                                                                              \
        uint32_t s = g->nsp;                                                                       \
        for (int64_t c = 0; c < cin; c++) {                                                        \
            const T *xc = x + c * g->in_sz;                                                        \
            int64_t kidx[MAXSP] = {0};                                                             \
            for (int64_t kp = 0; kp < g->k_sz; kp++) {                                             \
                T *row = col + (c * g->k_sz + kp) * g->out_sz;                                     \
                if (s == 2) {                                                                      \
                    int64_t oh = g->out[0], ow = g->out[1], ih = g->in[0], iw = g->in[1];          \
                    int64_t y0 = kidx[0] * g->dil[0] - g->pad0[0];                                 \
                    int64_t x0 = kidx[1] * g->dil[1] - g->pad0[1];                                 \
                    int64_t sh = g->stride[0], sw = g->stride[1];                                  \
                    for (int64_t oy = 0; oy < oh; oy++) {                                          \
                        int64_t iy = y0 + oy * sh;                                                 \
                        T *r = row + oy * ow;                                                      \
                        if (iy < 0 || iy >= ih) {                                                  \
                            memset(r, 0, (size_t)ow * sizeof(T));                                  \
                            continue;                                                              \
                        }                                                                          \
                        const T *xr = xc + iy * iw;                                                \
                        if (sw == 1 && x0 >= 0 && x0 + ow <= iw) {                                 \
                            memcpy(r, xr + x0, (size_t)ow * sizeof(T));                            \
                            continue;                                                              \
                        }                                                                          \
                        for (int64_t ox = 0; ox < ow; ox++) {                                      \
                            int64_t ix = x0 + ox * sw;                                             \
                            r[ox] = ix >= 0 && ix < iw ? xr[ix] : (T)0;                            \
                        }                                                                          \
                    }                                                                              \
                } else {                                                                           \
                    int64_t oidx[MAXSP] = {0};                                                     \
                    for (int64_t op = 0; op < g->out_sz; op++) {                                   \
                        int64_t off = 0;                                                           \
                        bool inside = true;                                                        \
                        for (uint32_t d = 0; d < s; d++) {                                         \
                            int64_t ic =                                                           \
                                oidx[d] * g->stride[d] + kidx[d] * g->dil[d] - g->pad0[d];         \
                            if (ic < 0 || ic >= g->in[d]) {                                        \
                                inside = false;                                                    \
                                break;                                                             \
                            }                                                                      \
                            off = off * g->in[d] + ic;                                             \
                        }                                                                          \
                        row[op] = inside ? xc[off] : (T)0;                                         \
                        for (int d = (int)s - 1; d >= 0; d--) {                                    \
                            if (++oidx[d] < g->out[d])                                             \
                                break;                                                             \
                            oidx[d] = 0;                                                           \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
                for (int d = (int)s - 1; d >= 0; d--) {                                            \
                    if (++kidx[d] < g->k[d])                                                       \
                        break;                                                                     \
                    kidx[d] = 0;                                                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* col2im: y[c, spatial] += col[(c*k_sz + kpos) * in_sz + ipos] (transposed conv). */
#define COL2IM(T, NAME)                                                                            \
    static void NAME(const struct geom *g, const T *col, int64_t cout, T *y)                       \
    {                                                                                              \
        uint32_t s = g->nsp;                                                                       \
        for (int64_t c = 0; c < cout; c++) {                                                       \
            T *yc = y + c * g->out_sz;                                                             \
            int64_t kidx[MAXSP] = {0};                                                             \
            for (int64_t kp = 0; kp < g->k_sz; kp++) {                                             \
                const T *row = col + (c * g->k_sz + kp) * g->in_sz;                                \
                int64_t iidx[MAXSP] = {0};                                                         \
                for (int64_t ip = 0; ip < g->in_sz; ip++) {                                        \
                    int64_t off = 0;                                                               \
                    bool inside = true;                                                            \
                    for (uint32_t d = 0; d < s; d++) {                                             \
                        int64_t oc = iidx[d] * g->stride[d] + kidx[d] * g->dil[d] - g->pad0[d];    \
                        if (oc < 0 || oc >= g->out[d]) {                                           \
                            inside = false;                                                        \
                            break;                                                                 \
                        }                                                                          \
                        off = off * g->out[d] + oc;                                                \
                    }                                                                              \
                    if (inside)                                                                    \
                        yc[off] += row[ip];                                                        \
                    for (int d = (int)s - 1; d >= 0; d--) {                                        \
                        if (++iidx[d] < g->in[d])                                                  \
                            break;                                                                 \
                        iidx[d] = 0;                                                               \
                    }                                                                              \
                }                                                                                  \
                for (int d = (int)s - 1; d >= 0; d--) {                                            \
                    if (++kidx[d] < g->k[d])                                                       \
                        break;                                                                     \
                    kidx[d] = 0;                                                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

IM2COL(float, im2col_f)
IM2COL(double, im2col_d)
COL2IM(float, col2im_f)
COL2IM(double, col2im_d)

static bool is_half(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT16 || dt == SG_DTYPE_BFLOAT16;
}

/* float32 data of v (widened in scratch for half types). */
static const void *work_data(struct sg_kctx *k, const sg_rt_value *v)
{
    return is_half(v->dtype) ? (const void *)sg_kfloats(k, v) : v->data;
}

static sg_status run_conv(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *W = sg_kin(k, 1), *B = sg_kin(k, 2);
    struct geom g;
    if (X->rank < 3 || X->rank - 2 > MAXSP || W->rank != X->rank || W->dtype != X->dtype)
        return sg_kfail(k, SG_ESHAPE, "input %s and weights %s do not fit a convolution",
                        sg_kshape(k, X), sg_kshape(k, W));
    g.nsp = X->rank - 2;
    g.N = X->dims[0];
    g.C = X->dims[1];
    g.M = W->dims[0];
    g.group = sg_kattr_int(k, "group", 1);
    if (g.group <= 0 || g.C % g.group || g.M % g.group || W->dims[1] != g.C / g.group)
        return sg_kfail(k, SG_ESHAPE,
                        "input %s, weights %s and group %lld do not fit: weights need [M, C/group, "
                        "...]",
                        sg_kshape(k, X), sg_kshape(k, W), (long long)g.group);
    sg_status st = read_attrs(k, &g, W->dims + 2);
    if (st)
        return st;
    memcpy(g.in, X->dims + 2, g.nsp * sizeof g.in[0]);
    if ((st = sg_kwindow(k, g.nsp, g.in, g.k, g.stride, g.dil, g.pad0, g.pad1, false, g.out)))
        return st;
    if (B && (B->rank != 1 || B->dims[0] != g.M))
        return sg_kfail(k, SG_ESHAPE, "bias %s does not hold %lld values", sg_kshape(k, B),
                        (long long)g.M);
    g.in_sz = g.out_sz = g.k_sz = 1;
    for (uint32_t i = 0; i < g.nsp; i++) {
        g.in_sz *= g.in[i];
        g.out_sz *= g.out[i];
        g.k_sz *= g.k[i];
    }
    int64_t od[SG_MAX_RANK] = {g.N, g.M};
    memcpy(od + 2, g.out, g.nsp * sizeof od[0]);
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    if (!Y->numel)
        return SG_OK;
    bool dbl = X->dtype == SG_DTYPE_DOUBLE;
    size_t es = dbl ? 8 : 4;
    const void *x = work_data(k, X), *w = work_data(k, W);
    void *y = is_half(X->dtype) ? sg_kscratch(k, (size_t)Y->numel * 4) : Y->data;
    int64_t cg = g.C / g.group, mg = g.M / g.group, kdim = cg * g.k_sz;
    bool direct = g.k_sz == 1;
    for (uint32_t i = 0; i < g.nsp; i++)
        direct = direct && g.stride[i] == 1 && g.pad0[i] == 0 && g.pad1[i] == 0;
    void *col = direct ? NULL : sg_kscratch(k, (size_t)(kdim * g.out_sz) * es + 1);
    if (!x || !w || !y || (!direct && !col))
        return sg_kfail(k, SG_ENOMEM, "out of memory for %s", sg_kshape(k, Y));
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gi = 0; gi < g.group; gi++) {
            const char *xg = (const char *)x + (size_t)((n * g.C + gi * cg) * g.in_sz) * es;
            const char *wg = (const char *)w + (size_t)(gi * mg * kdim) * es;
            char *yg = (char *)y + (size_t)((n * g.M + gi * mg) * g.out_sz) * es;
            const void *b = xg;
            if (!direct) {
                if (dbl)
                    im2col_d(&g, (const double *)xg, cg, col);
                else
                    im2col_f(&g, (const float *)xg, cg, col);
                b = col;
            }
            if (dbl)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mg, (int)g.out_sz,
                            (int)kdim, 1.0, (const double *)wg, (int)kdim, b, (int)g.out_sz, 0.0,
                            (double *)yg, (int)g.out_sz);
            else
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mg, (int)g.out_sz,
                            (int)kdim, 1.0f, (const float *)wg, (int)kdim, b, (int)g.out_sz, 0.0f,
                            (float *)yg, (int)g.out_sz);
        }
    if (B)
        for (int64_t n = 0; n < g.N; n++)
            for (int64_t m = 0; m < g.M; m++) {
                double bv = sg_rt_get_f64(B, m);
                if (dbl) {
                    double *r = (double *)y + (n * g.M + m) * g.out_sz;
                    for (int64_t i = 0; i < g.out_sz; i++)
                        r[i] += bv;
                } else {
                    float *r = (float *)y + (n * g.M + m) * g.out_sz, fb = (float)bv;
                    for (int64_t i = 0; i < g.out_sz; i++)
                        r[i] += fb;
                }
            }
    if (is_half(X->dtype))
        for (int64_t i = 0; i < Y->numel; i++)
            sg_rt_set_f64(Y, i, ((const float *)y)[i]);
    return SG_OK;
}

static sg_status run_conv_transpose(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *W = sg_kin(k, 1), *B = sg_kin(k, 2);
    struct geom g;
    if (X->rank < 3 || X->rank - 2 > MAXSP || W->rank != X->rank || W->dtype != X->dtype)
        return sg_kfail(k, SG_ESHAPE, "input %s and weights %s do not fit a convolution",
                        sg_kshape(k, X), sg_kshape(k, W));
    g.nsp = X->rank - 2;
    g.N = X->dims[0];
    g.C = X->dims[1];
    g.group = sg_kattr_int(k, "group", 1);
    if (g.group <= 0 || W->dims[0] != g.C || g.C % g.group)
        return sg_kfail(k, SG_ESHAPE,
                        "input %s, weights %s and group %lld do not fit: weights "
                        "need [C, M/group, ...]",
                        sg_kshape(k, X), sg_kshape(k, W), (long long)g.group);
    g.M = W->dims[1] * g.group;
    sg_status st = read_attrs(k, &g, W->dims + 2);
    if (st)
        return st;
    memcpy(g.in, X->dims + 2, g.nsp * sizeof g.in[0]);
    const int64_t *opad = NULL, *oshape = NULL;
    int64_t nop = sg_kattr_ints(k, "output_padding", &opad);
    int64_t nos = sg_kattr_ints(k, "output_shape", &oshape);
    if ((nop >= 0 && nop != g.nsp) || (nos >= 0 && nos != g.nsp && nos != X->rank))
        return sg_kfail(k, SG_ESHAPE, "output_padding or output_shape has the wrong length");
    if (nos == X->rank)
        oshape += 2;
    const char *ap = sg_kattr_string(k, "auto_pad", "NOTSET");
    bool same = strncmp(ap, "SAME_", 5) == 0, upper = strcmp(ap, "SAME_UPPER") == 0;
    for (uint32_t i = 0; i < g.nsp; i++) {
        int64_t op = nop >= 0 ? opad[i] : 0;
        int64_t ext = (g.k[i] - 1) * g.dil[i] + 1;
        if (strcmp(ap, "VALID") == 0)
            g.pad0[i] = g.pad1[i] = 0;
        if (nos >= 0 || same) {
            int64_t want = nos >= 0 ? oshape[i] : g.in[i] * g.stride[i];
            int64_t total = g.stride[i] * (g.in[i] - 1) + op + ext - want;
            if (total < 0)
                total = 0;
            g.pad0[i] = upper || !same ? total / 2 : total - total / 2;
            g.pad1[i] = total - g.pad0[i];
            g.out[i] = want;
        } else {
            g.out[i] = g.stride[i] * (g.in[i] - 1) + op + ext - g.pad0[i] - g.pad1[i];
        }
        if (g.out[i] < 0)
            return sg_kfail(k, SG_ESHAPE, "negative output size on spatial axis %u", i);
    }
    if (B && (B->rank != 1 || B->dims[0] != g.M))
        return sg_kfail(k, SG_ESHAPE, "bias %s does not hold %lld values", sg_kshape(k, B),
                        (long long)g.M);
    g.in_sz = g.out_sz = g.k_sz = 1;
    for (uint32_t i = 0; i < g.nsp; i++) {
        g.in_sz *= g.in[i];
        g.out_sz *= g.out[i];
        g.k_sz *= g.k[i];
    }
    int64_t od[SG_MAX_RANK] = {g.N, g.M};
    memcpy(od + 2, g.out, g.nsp * sizeof od[0]);
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    if (!Y->numel)
        return SG_OK;
    bool dbl = X->dtype == SG_DTYPE_DOUBLE;
    size_t es = dbl ? 8 : 4;
    const void *x = work_data(k, X), *w = work_data(k, W);
    void *y = is_half(X->dtype) ? sg_kscratch(k, (size_t)Y->numel * 4) : Y->data;
    int64_t cg = g.C / g.group, mg = g.M / g.group, kdim = mg * g.k_sz;
    void *col = sg_kscratch(k, (size_t)(kdim * g.in_sz) * es + 1);
    if (!x || !w || !y || !col)
        return sg_kfail(k, SG_ENOMEM, "out of memory for %s", sg_kshape(k, Y));
    memset(y, 0, (size_t)Y->numel * es);
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gi = 0; gi < g.group; gi++) {
            const char *xg = (const char *)x + (size_t)((n * g.C + gi * cg) * g.in_sz) * es;
            const char *wg = (const char *)w + (size_t)(gi * cg * kdim) * es;
            char *yg = (char *)y + (size_t)((n * g.M + gi * mg) * g.out_sz) * es;
            /* col[kdim, in_sz] = W_g^T [kdim, cg] * X_g [cg, in_sz] */
            if (dbl) {
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kdim, (int)g.in_sz,
                            (int)cg, 1.0, (const double *)wg, (int)kdim, (const double *)xg,
                            (int)g.in_sz, 0.0, col, (int)g.in_sz);
                col2im_d(&g, col, mg, (double *)yg);
            } else {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kdim, (int)g.in_sz,
                            (int)cg, 1.0f, (const float *)wg, (int)kdim, (const float *)xg,
                            (int)g.in_sz, 0.0f, col, (int)g.in_sz);
                col2im_f(&g, col, mg, (float *)yg);
            }
        }
    if (B)
        for (int64_t n = 0; n < g.N; n++)
            for (int64_t m = 0; m < g.M; m++) {
                double bv = sg_rt_get_f64(B, m);
                for (int64_t i = 0; i < g.out_sz; i++) {
                    int64_t j = (n * g.M + m) * g.out_sz + i;
                    if (dbl)
                        ((double *)y)[j] += bv;
                    else
                        ((float *)y)[j] += (float)bv;
                }
            }
    if (is_half(X->dtype))
        for (int64_t i = 0; i < Y->numel; i++)
            sg_rt_set_f64(Y, i, ((const float *)y)[i]);
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "Conv", 1, 0, SG_KT_FLOATS, 0, run_conv},
    {"", "ConvTranspose", 1, 0, SG_KT_FLOATS, 0, run_conv_transpose},
};
SG_KERNEL_FAMILY(conv, kernels);
