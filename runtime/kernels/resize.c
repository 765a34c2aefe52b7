/*
 * resize.c - Resize (nearest, linear, cubic; every
 * coordinate_transformation_mode and nearest_mode; exclude_outside,
 * cubic_coeff_a, tf_crop_and_resize with extrapolation_value; scales or
 * sizes) and the older Upsample.
 *
 * Interpolation is separable: each resized axis gets a table of source taps
 * and weights (the ONNX reference's neighbours with edge padding), applied
 * one axis at a time in float64. Before opset 11 (Upsample, Resize-10)
 * coordinates are asymmetric and nearest rounds down.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

enum mode { M_NEAREST, M_LINEAR, M_CUBIC };
enum coord {
    C_HALF_PIXEL,
    C_PYTORCH_HALF_PIXEL,
    C_ALIGN_CORNERS,
    C_ASYMMETRIC,
    C_TF_HALF_PIXEL_NN,
    C_TF_CROP_RESIZE
};
enum nearest { N_ROUND_FLOOR, N_ROUND_CEIL, N_FLOOR, N_CEIL };

struct axis_taps {
    int n;            /* taps per output index */
    int64_t *idx;     /* [out * n] */
    double *w;        /* [out * n] */
    uint8_t *outside; /* [out]: source coordinate outside the input (crop mode) */
};

static sg_status parse_enum(struct sg_kctx *k, const char *attr, const char *dflt,
                            const char *const *names, int n, int *out)
{
    const char *s = sg_kattr_string(k, attr, dflt);
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return SG_OK;
        }
    return sg_kfail(k, SG_EINVAL, "unknown %s '%s'", attr, s);
}

static void cubic_coeffs(double r, double A, double *c)
{
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
    c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
}

static sg_status make_taps(struct sg_kctx *k, struct axis_taps *t, int64_t in, int64_t out,
                           double scale, enum mode mode, enum coord coord, enum nearest nm,
                           double A, bool exclude, double roi0, double roi1)
{
    t->n = mode == M_NEAREST ? 1 : mode == M_LINEAR ? 2 : 4;
    t->idx = sg_kscratch(k, (size_t)(out * t->n + 1) * sizeof *t->idx);
    t->w = sg_kscratch(k, (size_t)(out * t->n + 1) * sizeof *t->w);
    t->outside = sg_kscratch(k, (size_t)out + 1);
    if (!t->idx || !t->w || !t->outside)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    /* The reference uses the unrounded resized length in * scale. */
    double len = (double)in * scale;
    for (int64_t o = 0; o < out; o++) {
        double xr = (double)o, x;
        switch (coord) {
        case C_HALF_PIXEL:
            x = (xr + 0.5) / scale - 0.5;
            break;
        case C_PYTORCH_HALF_PIXEL:
            x = len > 1 ? (xr + 0.5) / scale - 0.5 : 0;
            break;
        case C_ALIGN_CORNERS:
            x = len == 1 ? 0 : xr * (double)(in - 1) / (len - 1);
            break;
        case C_ASYMMETRIC:
            x = xr / scale;
            break;
        case C_TF_HALF_PIXEL_NN:
            x = (xr + 0.5) / scale;
            break;
        default:
            x = len > 1
                    ? roi0 * (double)(in - 1) + xr * (roi1 - roi0) * (double)(in - 1) / (len - 1)
                    : 0.5 * (roi0 + roi1) * (double)(in - 1);
            break;
        }
        t->outside[o] = coord == C_TF_CROP_RESIZE && (x < 0 || x > (double)(in - 1));
        double fl = floor(x), r = x - fl;
        int64_t base = (int64_t)fl;
        int64_t *idx = t->idx + o * t->n;
        double *w = t->w + o * t->n;
        if (mode == M_NEAREST) {
            bool up;
            if (r == 0)
                up = false;
            else if (nm == N_ROUND_FLOOR)
                up = r > 0.5;
            else if (nm == N_ROUND_CEIL)
                up = r >= 0.5;
            else
                up = nm == N_CEIL;
            idx[0] = base + (up ? 1 : 0);
            w[0] = 1;
        } else if (mode == M_LINEAR) {
            idx[0] = base;
            idx[1] = base + 1;
            w[0] = 1 - r;
            w[1] = r;
        } else {
            for (int j = 0; j < 4; j++)
                idx[j] = base - 1 + j;
            cubic_coeffs(r, A, w);
        }
        double sum = 0;
        for (int j = 0; j < t->n; j++) {
            if (exclude && (idx[j] < 0 || idx[j] >= in))
                w[j] = 0;
            sum += w[j];
            idx[j] = idx[j] < 0 ? 0 : idx[j] >= in ? in - 1 : idx[j]; /* edge padding */
        }
        if (exclude && sum != 0)
            for (int j = 0; j < t->n; j++)
                w[j] /= sum;
    }
    return SG_OK;
}

static sg_status run_resize(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    bool legacy = strcmp(k->node->op_type, "Upsample") == 0 || k->opset < 11;
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {
        "half_pixel",          "pytorch_half_pixel",        "align_corners",
        "asymmetric",          "tf_half_pixel_for_nearest", "tf_crop_and_resize",
        "tf_half_pixel_for_nn"}; /* opset 11's spelling */
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};
    int mode = M_NEAREST, coord = C_ASYMMETRIC, nm = N_FLOOR;
    sg_status st = parse_enum(k, "mode", "nearest", modes, 3, &mode);
    if (!st && !legacy)
        st = parse_enum(k, "coordinate_transformation_mode", "half_pixel", coords, 7, &coord);
    if (coord == 6)
        coord = C_TF_HALF_PIXEL_NN;
    if (!st && !legacy)
        st = parse_enum(k, "nearest_mode", "round_prefer_floor", nearests, 4, &nm);
    if (st)
        return st;
    if (legacy && strcmp(sg_kattr_string(k, "mode", "nearest"), "bilinear") == 0)
        mode = M_LINEAR;
    double A = sg_kattr_float(k, "cubic_coeff_a", -0.75f);
    bool exclude = sg_kattr_int(k, "exclude_outside", 0) != 0;
    double extrap = sg_kattr_float(k, "extrapolation_value", 0.0f);
    uint32_t r = X->rank;
    double scales[SG_MAX_RANK], roi[2 * SG_MAX_RANK];
    int64_t out[SG_MAX_RANK];
    for (uint32_t d = 0; d < r; d++) {
        roi[d] = 0;
        roi[r + d] = 1;
    }
    const sg_rt_value *Sc = NULL, *Sz = NULL, *Roi = NULL;
    const float *attr_scales = NULL;
    int64_t n_attr = -1;
    if (legacy) {
        if (k->opset < 9 && strcmp(k->node->op_type, "Upsample") == 0)
            n_attr = sg_kattr_floats(k, "scales", &attr_scales);
        else
            Sc = sg_kin(k, 1);
    } else {
        Roi = sg_kin(k, 1);
        Sc = sg_kin(k, 2);
        Sz = sg_kin(k, 3);
        if (Sc && Sc->numel == 0)
            Sc = NULL;
        if (Roi && Roi->numel == 0)
            Roi = NULL;
    }
    if (Sz) {
        if (Sz->numel != r)
            return sg_kfail(k, SG_ESHAPE, "sizes %s does not have rank %u", sg_kshape(k, Sz), r);
        for (uint32_t d = 0; d < r; d++) {
            out[d] = sg_rt_get_i64(Sz, d);
            scales[d] = X->dims[d] ? (double)out[d] / (double)X->dims[d] : 1;
        }
    } else if (Sc || n_attr >= 0) {
        if ((Sc ? Sc->numel : n_attr) != r)
            return sg_kfail(k, SG_ESHAPE, "%lld scales for rank %u",
                            (long long)(Sc ? Sc->numel : n_attr), r);
        for (uint32_t d = 0; d < r; d++) {
            scales[d] = Sc ? sg_rt_get_f64(Sc, d) : attr_scales[d];
            if (!(scales[d] > 0))
                return sg_kfail(k, SG_ERANGE, "scale %g must be positive", scales[d]);
            out[d] = (int64_t)floor((double)X->dims[d] * scales[d]);
        }
    } else {
        return sg_kfail(k, SG_EUNDEF, "neither scales nor sizes is given");
    }
    if (Roi) {
        if (Roi->numel != 2 * r)
            return sg_kfail(k, SG_ESHAPE, "roi %s does not hold 2 x %u values", sg_kshape(k, Roi),
                            r);
        for (uint32_t i = 0; i < 2 * r; i++)
            roi[i] = sg_rt_get_f64(Roi, i);
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, out, r, &Y)))
        return st;
    if (!Y->numel)
        return SG_OK;
    /* Resize one axis at a time in float64. */
    int64_t cur[SG_MAX_RANK];
    memcpy(cur, X->dims, r * sizeof cur[0]);
    double *buf = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *buf);
    if (!buf)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < X->numel; i++)
        buf[i] = sg_rt_get_f64(X, i);
    struct axis_taps taps[SG_MAX_RANK];
    bool crop = coord == C_TF_CROP_RESIZE;
    for (uint32_t d = 0; d < r; d++) {
        if ((st = make_taps(k, &taps[d], X->dims[d], out[d], scales[d], (enum mode)mode,
                            (enum coord)coord, (enum nearest)nm, A, exclude, roi[d], roi[r + d])))
            return st;
        bool identity = out[d] == X->dims[d] && !crop;
        for (int64_t o = 0; identity && o < out[d]; o++)
            for (int j = 0; j < taps[d].n; j++) {
                double w = taps[d].w[o * taps[d].n + j];
                int64_t ix = taps[d].idx[o * taps[d].n + j];
                if (w != 0 && (ix != o || w != 1))
                    identity = false;
            }
        if (identity)
            continue;
        int64_t outer = 1, inner = 1;
        for (uint32_t e = 0; e < d; e++)
            outer *= cur[e];
        for (uint32_t e = d + 1; e < r; e++)
            inner *= cur[e];
        double *nb = sg_kscratch(k, (size_t)(outer * out[d] * inner + 1) * sizeof *nb);
        if (!nb)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        int n = taps[d].n;
        for (int64_t ou = 0; ou < outer; ou++)
            for (int64_t o = 0; o < out[d]; o++) {
                double *dst = nb + (ou * out[d] + o) * inner;
                for (int64_t i = 0; i < inner; i++)
                    dst[i] = 0;
                for (int j = 0; j < n; j++) {
                    double w = taps[d].w[o * n + j];
                    if (w == 0)
                        continue;
                    const double *src = buf + (ou * cur[d] + taps[d].idx[o * n + j]) * inner;
                    for (int64_t i = 0; i < inner; i++)
                        dst[i] += w * src[i];
                }
            }
        buf = nb;
        cur[d] = out[d];
    }
    int64_t idx[SG_MAX_RANK] = {0};
    for (int64_t i = 0; i < Y->numel; i++) {
        double v = buf[i];
        if (crop) {
            for (uint32_t d = 0; d < r; d++)
                if (taps[d].outside[idx[d]])
                    v = extrap;
            for (int d = (int)r - 1; d >= 0; d--) {
                if (++idx[d] < out[d])
                    break;
                idx[d] = 0;
            }
        }
        sg_rt_set_f64(Y, i, v);
    }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "Resize", 10, 0, SG_KT_NUMERIC, 0, run_resize},
    {"", "Upsample", 7, 0, SG_KT_NUMERIC, 0, run_resize},
};
SG_KERNEL_FAMILY(resize, kernels);
