/*
 * deform.c - DeformConv (opsets 19 and 22, 2-D): a convolution whose
 * kernel taps are moved by learned offsets and weighed by an optional mask
 * (deformable convolution v1/v2, torchvision.ops.deform_conv2d).
 *
 * As the ONNX reference defines it: tap (kh, kw) of output (i, j) samples
 * input channel c at row  -pad_top  + i * stride_h + kh * dilation_h +
 * offset[n, g, kh, kw, 0, i, j] and column -pad_left + j * stride_w +
 * kw * dilation_w + offset[n, g, kh, kw, 1, i, j] (g = c's offset group;
 * the offset input is [N, offset_group * kH * kW * 2, oH, oW] in that
 * order), bilinearly, with zeros outside the image; the sample is
 * multiplied by mask[n, g * kH * kW + kh * kW + kw, i, j] (default 1) and
 * by the weight, summed over the group's channels and taps, plus the bias.
 * Only 2-D inputs are supported (the reference implements no other rank);
 * another rank is refused naming the node. Computed in double.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

/* Bilinear sample of plane [H, W] at (y, x), zeros outside. */
static double bilinear0(const double *p, int64_t H, int64_t W, double y, double x)
{
    if (!(y > -1 && y < (double)H && x > -1 && x < (double)W))
        return 0; /* every tap outside (and NaN) */
    double fy = floor(y), fx = floor(x);
    int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
    double ty = y - fy, tx = x - fx, v = 0;
    for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
            int64_t yy = y0 + dy, xx = x0 + dx;
            if (yy < 0 || yy >= H || xx < 0 || xx >= W)
                continue;
            v += (dy ? ty : 1 - ty) * (dx ? tx : 1 - tx) * p[yy * W + xx];
        }
    return v;
}

/* attribute `name` as n ints (default dflt each); fails on a wrong count */
static sg_status ints_attr(struct sg_kctx *k, const char *name, int n, int64_t dflt, int64_t *out)
{
    const int64_t *v;
    int64_t c = sg_kattr_ints(k, name, &v);
    if (c < 0) {
        for (int i = 0; i < n; i++)
            out[i] = dflt;
        return SG_OK;
    }
    if (c != n)
        return sg_kfail(k, SG_EINVAL, "%s has %lld values; a 2-D DeformConv takes %d", name,
                        (long long)c, n);
    memcpy(out, v, (size_t)n * sizeof *out);
    return SG_OK;
}

static double *as_f64(struct sg_kctx *k, const sg_rt_value *v)
{
    double *d = sg_kscratch(k, (size_t)(v->numel ? v->numel : 1) * sizeof *d);
    if (d)
        for (int64_t i = 0; i < v->numel; i++)
            d[i] = sg_rt_get_f64(v, i);
    return d;
}

static sg_status run_deform_conv(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *Wt = sg_kin(k, 1), *O = sg_kin(k, 2);
    const sg_rt_value *Bv = sg_kin(k, 3), *M = sg_kin(k, 4);
    if (X->rank != 4 || Wt->rank != 4 || O->rank != 4)
        return sg_kfail(k, SG_ESHAPE,
                        "X %s, W %s and offset %s must be 4-D (only 2-D DeformConv is supported)",
                        sg_kshape(k, X), sg_kshape(k, Wt), sg_kshape(k, O));
    int64_t dil[2], pads[4], str[2], ks[2];
    sg_status st;
    if ((st = ints_attr(k, "dilations", 2, 1, dil)) || (st = ints_attr(k, "pads", 4, 0, pads)) ||
        (st = ints_attr(k, "strides", 2, 1, str)) || (st = ints_attr(k, "kernel_shape", 2, 0, ks)))
        return st;
    if (!sg_kattr(k, "kernel_shape"))
        ks[0] = Wt->dims[2], ks[1] = Wt->dims[3];
    int64_t group = sg_kattr_int(k, "group", 1), og = sg_kattr_int(k, "offset_group", 1);
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3];
    int64_t OC = Wt->dims[0], kH = ks[0], kW = ks[1];
    if (group < 1 || og < 1 || kH < 1 || kW < 1 || C != Wt->dims[1] * group || OC % group ||
        C % og || ks[0] != Wt->dims[2] || ks[1] != Wt->dims[3])
        return sg_kfail(k, SG_ESHAPE,
                        "X %s and W %s do not fit group %lld, offset_group %lld and "
                        "kernel_shape [%lld, %lld]",
                        sg_kshape(k, X), sg_kshape(k, Wt), (long long)group, (long long)og,
                        (long long)ks[0], (long long)ks[1]);
    for (int i = 0; i < 2; i++)
        if (dil[i] < 1 || str[i] < 1 || pads[i] < 0 || pads[i + 2] < 0)
            return sg_kfail(k, SG_EINVAL, "dilations, strides must be positive, pads >= 0");
    /* out = (in + pads - ((k - 1) * dilation + 1)) / stride + 1, checked:
     * the attributes may be anything */
    int64_t span[2], ext[2], o2[2];
    const int64_t in2[2] = {H, W}, k2[2] = {kH, kW};
    for (int i = 0; i < 2; i++) {
        if (!sg_dim_mul(k2[i] - 1, dil[i], &span[i]) || !sg_dim_add(in2[i], pads[i], &ext[i]) ||
            !sg_dim_add(ext[i], pads[i + 2], &ext[i]))
            return sg_kfail(k, SG_ERANGE, "pads, dilations or kernel_shape are too large");
        o2[i] = ext[i] - span[i] - 1; /* both in [0, 2^63) */
        o2[i] = o2[i] < 0 ? 0 : o2[i] / str[i] + 1;
    }
    int64_t oh = o2[0], ow = o2[1];
    int64_t taps = kH * kW;
    if (O->dims[0] != N || O->dims[1] != og * taps * 2 || O->dims[2] != oh || O->dims[3] != ow)
        return sg_kfail(k, SG_ESHAPE, "offset %s must be [%lld, %lld, %lld, %lld]", sg_kshape(k, O),
                        (long long)N, (long long)(og * taps * 2), (long long)oh, (long long)ow);
    if (M && (M->rank != 4 || M->dims[0] != N || M->dims[1] != og * taps || M->dims[2] != oh ||
              M->dims[3] != ow))
        return sg_kfail(k, SG_ESHAPE, "mask %s must be [%lld, %lld, %lld, %lld]", sg_kshape(k, M),
                        (long long)N, (long long)(og * taps), (long long)oh, (long long)ow);
    if (Bv && (Bv->rank != 1 || Bv->dims[0] != OC))
        return sg_kfail(k, SG_ESHAPE, "B %s must be [%lld]", sg_kshape(k, Bv), (long long)OC);
    int64_t od[4] = {N, OC, oh, ow};
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, 4, &Y)) || !Y->numel)
        return st;
    double *x = as_f64(k, X), *w = as_f64(k, Wt), *off = as_f64(k, O);
    double *m = M ? as_f64(k, M) : NULL, *b = Bv ? as_f64(k, Bv) : NULL;
    int64_t cg = C / group, ocg = OC / group, cog = C / og, opix = oh * ow;
    /* samples of one input channel: [taps, oh * ow] */
    double *col = sg_kscratch(k, (size_t)(taps * opix) * sizeof *col);
    double *acc = sg_kscratch(k, (size_t)(OC * opix) * sizeof *acc);
    if (!x || !w || !off || (M && !m) || (Bv && !b) || !col || !acc)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t n = 0; n < N; n++) {
        for (int64_t o = 0; o < OC * opix; o++)
            acc[o] = b ? b[o / opix] : 0;
        for (int64_t c = 0; c < C; c++) {
            int64_t g = c / cog;
            const double *plane = x + (n * C + c) * H * W;
            for (int64_t t = 0; t < taps; t++) {
                int64_t kh = t / kW, kw = t % kW;
                const double *oy = off + ((n * og + g) * taps + t) * 2 * opix;
                const double *ox = oy + opix;
                const double *mk = m ? m + ((n * og + g) * taps + t) * opix : NULL;
                for (int64_t p = 0; p < opix; p++) {
                    int64_t i = p / ow, j = p % ow;
                    double yy = (double)(-pads[0] + i * str[0] + kh * dil[0]) + oy[p];
                    double xx = (double)(-pads[1] + j * str[1] + kw * dil[1]) + ox[p];
                    double v = bilinear0(plane, H, W, yy, xx);
                    col[t * opix + p] = mk ? v * mk[p] : v;
                }
            }
            int64_t gi = c / cg, ci = c % cg;
            for (int64_t oc = gi * ocg; oc < (gi + 1) * ocg; oc++) {
                const double *wk = w + (oc * cg + ci) * taps;
                double *a = acc + oc * opix;
                for (int64_t t = 0; t < taps; t++)
                    for (int64_t p = 0; p < opix; p++)
                        a[p] += wk[t] * col[t * opix + p];
            }
        }
        for (int64_t o = 0; o < OC * opix; o++)
            sg_rt_set_f64(Y, n * OC * opix + o, acc[o]);
    }
    return SG_OK;
}

#define FL SG_KT_FLOATS
/* One entry per line, as in the other families. */
/* clang-format off */
static const struct sg_kernel kernels[] = {
    {"", "DeformConv", 19, 0, FL, 0, run_deform_conv, "rrroo"},
    {"", "DeformConv", 22, 0, FL, 0, run_deform_conv, "rrroo"},
};
/* clang-format on */
SG_KERNEL_FAMILY(deform, kernels);
