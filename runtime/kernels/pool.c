/*
 * pool.c - pooling in any number of spatial dimensions: MaxPool (with the
 * Indices output and storage_order), AveragePool (count_include_pad),
 * LpPool, their Global forms, and MaxUnpool. Windows honour strides,
 * dilations, pads, auto_pad and ceil_mode (sg_kwindow).
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

#define MAXSP 8

enum pool { P_MAX, P_AVG, P_LP };

struct win {
    uint32_t nsp;
    int64_t in[MAXSP], out[MAXSP], k[MAXSP], stride[MAXSP], dil[MAXSP], pad0[MAXSP], pad1[MAXSP];
    int64_t in_sz, out_sz;
};

static sg_status read_window(struct sg_kctx *k, const sg_rt_value *X, bool global, struct win *w)
{
    if (X->rank < 3 || X->rank - 2 > MAXSP)
        return sg_kfail(k, SG_ESHAPE, "needs [N, C, spatial...], got %s", sg_kshape(k, X));
    uint32_t s = w->nsp = X->rank - 2;
    memcpy(w->in, X->dims + 2, s * sizeof w->in[0]);
    for (uint32_t i = 0; i < s; i++) {
        w->k[i] = global ? w->in[i] : 0;
        w->stride[i] = w->dil[i] = 1;
        w->pad0[i] = w->pad1[i] = 0;
    }
    if (!global) {
        const int64_t *v;
        int64_t n = sg_kattr_ints(k, "kernel_shape", &v);
        if (n != s)
            return sg_kfail(k, SG_EINVAL, "kernel_shape must have %u values", s);
        memcpy(w->k, v, s * sizeof *v);
        if ((n = sg_kattr_ints(k, "strides", &v)) >= 0) {
            if (n != s)
                return sg_kfail(k, SG_EINVAL, "strides must have %u values", s);
            memcpy(w->stride, v, s * sizeof *v);
        }
        if ((n = sg_kattr_ints(k, "dilations", &v)) >= 0) {
            if (n != s)
                return sg_kfail(k, SG_EINVAL, "dilations must have %u values", s);
            memcpy(w->dil, v, s * sizeof *v);
        }
        if ((n = sg_kattr_ints(k, "pads", &v)) >= 0) {
            if (n != 2 * s)
                return sg_kfail(k, SG_EINVAL, "pads must have %u values", 2 * s);
            memcpy(w->pad0, v, s * sizeof *v);
            memcpy(w->pad1, v + s, s * sizeof *v);
        }
        for (uint32_t i = 0; i < s; i++)
            if (w->k[i] <= 0 || w->stride[i] <= 0 || w->dil[i] <= 0)
                return sg_kfail(k, SG_EINVAL, "bad kernel, stride or dilation on axis %u", i);
    }
    bool ceil_mode = sg_kattr_int(k, "ceil_mode", 0) != 0;
    sg_status st =
        sg_kwindow(k, s, w->in, w->k, w->stride, w->dil, w->pad0, w->pad1, ceil_mode, w->out);
    if (st)
        return st;
    w->in_sz = w->out_sz = 1;
    for (uint32_t i = 0; i < s; i++) {
        w->in_sz *= w->in[i];
        w->out_sz *= w->out[i];
    }
    return SG_OK;
}

static sg_status run_pool(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const char *op = k->node->op_type;
    bool global = strncmp(op, "Global", 6) == 0;
    const char *base = global ? op + 6 : op;
    enum pool kind = strcmp(base, "MaxPool") == 0  ? P_MAX
                     : strcmp(base, "LpPool") == 0 ? P_LP
                                                   : P_AVG;
    struct win w;
    sg_status st = read_window(k, X, global, &w);
    if (st)
        return st;
    bool include_pad = sg_kattr_int(k, "count_include_pad", 0) != 0;
    double p = kind == P_LP ? (double)sg_kattr_int(k, "p", 2) : 0;
    bool col_major = sg_kattr_int(k, "storage_order", 0) != 0;
    int64_t od[SG_MAX_RANK] = {X->dims[0], X->dims[1]};
    memcpy(od + 2, w.out, w.nsp * sizeof od[0]);
    sg_rt_value *Y, *I = NULL;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    if (kind == P_MAX && sg_kout_wanted(k, 1) &&
        (st = sg_kout(k, 1, SG_DTYPE_INT64, od, X->rank, &I)))
        return st;
    int64_t planes = X->dims[0] * X->dims[1];
    int64_t kn = 1;
    for (uint32_t i = 0; i < w.nsp; i++)
        kn *= w.k[i];
    bool f32 = X->dtype == SG_DTYPE_FLOAT;
    for (int64_t pl = 0; pl < planes; pl++) {
        int64_t xbase = pl * w.in_sz;
        int64_t oidx[MAXSP] = {0};
        for (int64_t o = 0; o < w.out_sz; o++) {
            double acc = kind == P_MAX ? -INFINITY : 0;
            int64_t arg = -1, count = 0, padded = 1;
            /* The window's padded extent, for count_include_pad. */
            for (uint32_t d = 0; d < w.nsp; d++) {
                int64_t ws = oidx[d] * w.stride[d] - w.pad0[d];
                int64_t we = ws + (w.k[d] - 1) * w.dil[d] + 1;
                int64_t lo = ws < -w.pad0[d] ? -w.pad0[d] : ws;
                int64_t hi = we > w.in[d] + w.pad1[d] ? w.in[d] + w.pad1[d] : we;
                int64_t n = hi > lo ? (hi - lo + w.dil[d] - 1) / w.dil[d] : 0;
                padded *= n;
            }
            int64_t kidx[MAXSP] = {0};
            for (int64_t kp = 0; kp < kn; kp++) {
                int64_t off = 0, cm = 0, cstride = 1;
                bool inside = true;
                for (uint32_t d = 0; d < w.nsp; d++) {
                    int64_t ic = oidx[d] * w.stride[d] + kidx[d] * w.dil[d] - w.pad0[d];
                    if (ic < 0 || ic >= w.in[d]) {
                        inside = false;
                        break;
                    }
                    off = off * w.in[d] + ic;
                    cm += ic * cstride;
                    cstride *= w.in[d];
                }
                if (inside) {
                    double v =
                        f32 ? ((const float *)X->data)[xbase + off] : sg_rt_get_f64(X, xbase + off);
                    count++;
                    if (kind == P_MAX) {
                        if (v > acc || arg < 0 || isnan(v)) {
                            if (!(isnan(acc) && arg >= 0)) {
                                acc = v;
                                arg = col_major ? cm : off;
                            }
                        }
                    } else if (kind == P_LP) {
                        acc += pow(fabs(v), p);
                    } else {
                        acc += v;
                    }
                }
                for (int d = (int)w.nsp - 1; d >= 0; d--) {
                    if (++kidx[d] < w.k[d])
                        break;
                    kidx[d] = 0;
                }
            }
            double r;
            if (kind == P_MAX)
                r = acc;
            else if (kind == P_LP)
                r = pow(acc, 1.0 / p);
            else
                r = acc / (double)(include_pad ? padded : count);
            int64_t yi = pl * w.out_sz + o;
            if (f32)
                ((float *)Y->data)[yi] = (float)r;
            else
                sg_rt_set_f64(Y, yi, r);
            if (I)
                ((int64_t *)I->data)[yi] = arg < 0 ? -1 : pl * w.in_sz + arg;
            for (int d = (int)w.nsp - 1; d >= 0; d--) {
                if (++oidx[d] < w.out[d])
                    break;
                oidx[d] = 0;
            }
        }
    }
    return SG_OK;
}

static sg_status run_max_unpool(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *Ix = sg_kin(k, 1), *OS = sg_kin(k, 2);
    if (X->rank < 3 || Ix->numel != X->numel)
        return sg_kfail(k, SG_ESHAPE, "input %s and indices %s do not match", sg_kshape(k, X),
                        sg_kshape(k, Ix));
    uint32_t s = X->rank - 2;
    const int64_t *kk, *st_, *pads;
    int64_t nk = sg_kattr_ints(k, "kernel_shape", &kk), ns = sg_kattr_ints(k, "strides", &st_);
    int64_t np = sg_kattr_ints(k, "pads", &pads);
    if (nk != s)
        return sg_kfail(k, SG_EINVAL, "kernel_shape must have %u values", s);
    /* Indices refer to the shape MaxPool's input had (inferred from the
     * window); output_shape, when given, only moves them to the same
     * coordinates in a larger output. */
    int64_t id[SG_MAX_RANK] = {X->dims[0], X->dims[1]}, od[SG_MAX_RANK];
    for (uint32_t i = 0; i < s; i++) {
        int64_t stride = ns == s ? st_[i] : 1;
        int64_t p = np == 2 * s ? pads[i] + pads[i + s] : 0;
        id[2 + i] = (X->dims[2 + i] - 1) * stride + kk[i] - p;
    }
    memcpy(od, id, X->rank * sizeof od[0]);
    if (OS) {
        if (OS->numel != X->rank)
            return sg_kfail(k, SG_ESHAPE, "output_shape %s does not have rank %u", sg_kshape(k, OS),
                            X->rank);
        for (uint32_t d = 0; d < X->rank; d++)
            od[d] = sg_rt_get_i64(OS, d);
    }
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, od, X->rank, &Y);
    if (st)
        return st;
    int64_t in_total = 1;
    for (uint32_t d = 0; d < X->rank; d++)
        in_total *= id[d];
    size_t es = sg_rt_elem_size(X->dtype);
    for (int64_t i = 0; i < X->numel; i++) {
        int64_t j = sg_rt_get_i64(Ix, i);
        if (j < 0 || j >= in_total)
            return sg_kfail(k, SG_ERANGE, "index %lld is out of range for %s", (long long)j,
                            sg_kdims(k, id, X->rank));
        int64_t coord[SG_MAX_RANK], rest = j, dst = 0;
        for (int d = (int)X->rank - 1; d >= 0; d--) {
            coord[d] = rest % id[d];
            rest /= id[d];
        }
        bool inside = true;
        for (uint32_t d = 0; d < X->rank; d++) {
            inside = inside && coord[d] < od[d];
            dst = dst * od[d] + coord[d];
        }
        if (!inside)
            return sg_kfail(k, SG_ERANGE, "index %lld does not fit output %s", (long long)j,
                            sg_kshape(k, Y));
        memcpy((char *)Y->data + dst * (int64_t)es, (const char *)X->data + i * (int64_t)es, es);
    }
    return SG_OK;
}

#define POOLT (SG_KT_FLOATS | SG_KT(SG_DTYPE_INT8) | SG_KT(SG_DTYPE_UINT8))
static const struct sg_kernel kernels[] = {
    {"", "MaxPool", 1, 0, POOLT, 0, run_pool},
    {"", "AveragePool", 1, 0, SG_KT_FLOATS, 0, run_pool},
    {"", "LpPool", 1, 0, SG_KT_FLOATS, 0, run_pool},
    {"", "GlobalMaxPool", 1, 0, SG_KT_FLOATS, 0, run_pool},
    {"", "GlobalAveragePool", 1, 0, SG_KT_FLOATS, 0, run_pool},
    {"", "GlobalLpPool", 2, 0, SG_KT_FLOATS, 0, run_pool},
    {"", "MaxUnpool", 9, 0, SG_KT_FLOATS, 0, run_max_unpool},
};
SG_KERNEL_FAMILY(pool, kernels);
