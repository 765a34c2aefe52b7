/*
 * resize.c - Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9).
 *
 * Every axis is resized on its own: for each output index along an axis a
 * table gives the input indices it reads and their weights ("taps"), built
 * from the coordinate transformation (half_pixel, half_pixel_symmetric,
 * pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn,
 * tf_crop_and_resize) and the mode (nearest with its nearest_mode; n-linear;
 * cubic with cubic_coeff_a and exclude_outside; linear and cubic with
 * antialias from opset 18). An output element is the sum over the product
 * of the axes' taps. The semantics are those of the ONNX reference
 * implementation: neighbours outside the input repeat the edge (or are
 * dropped and the rest renormalised with exclude_outside), and a
 * tf_crop_and_resize coordinate outside the input gives
 * extrapolation_value.
 *
 * Upsample and Resize-10 use asymmetric coordinates; their nearest mode
 * takes the floor of the coordinate when upsampling and its ceiling when
 * downsampling (as ONNX Runtime does for these versions).
 *
 * nearest works on every dtype (it only moves elements); linear and cubic
 * compute in double and store in the input dtype (integers truncated, as
 * the reference does).
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

enum coord_mode {
    CT_HALF_PIXEL,
    CT_HALF_PIXEL_SYMMETRIC,
    CT_PYTORCH_HALF_PIXEL,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_HALF_PIXEL_FOR_NN,
    CT_TF_CROP_AND_RESIZE,
};

enum interp { IM_NEAREST, IM_LINEAR, IM_CUBIC };

enum nearest_mode { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };

struct rsz {
    uint32_t rank;
    const int64_t *in; /* input dims */
    int64_t out[SG_MAX_RANK];
    double scale[SG_MAX_RANK];
    double len[SG_MAX_RANK];     /* resized length: scale * input length */
    double roi[2 * SG_MAX_RANK]; /* starts then ends, per axis */
    enum coord_mode ct;
    enum interp mode;
    enum nearest_mode nearest;
    double cubic_a, extrapolation;
    bool exclude_outside, antialias;
};

/* Taps of one axis: for output index o, cnt[o] pairs (idx, w) at
 * o * n; outside[o] marks a tf_crop_and_resize coordinate off the input. */
struct taps {
    int64_t n;
    int64_t *idx;
    double *w;
    int32_t *cnt;
    uint8_t *outside;
};

static const struct {
    const char *name;
    enum coord_mode ct;
    int since, until; /* opsets where the mode exists */
} coord_modes[] = {
    {"half_pixel", CT_HALF_PIXEL, 11, 1000},
    {"half_pixel_symmetric", CT_HALF_PIXEL_SYMMETRIC, 19, 1000},
    {"pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL, 11, 1000},
    {"align_corners", CT_ALIGN_CORNERS, 11, 1000},
    {"asymmetric", CT_ASYMMETRIC, 11, 1000},
    {"tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_FOR_NN, 11, 12},
    {"tf_crop_and_resize", CT_TF_CROP_AND_RESIZE, 11, 1000},
};

static const struct {
    const char *name;
    enum nearest_mode nm;
} nearest_modes[] = {
    {"round_prefer_floor", NM_ROUND_PREFER_FLOOR},
    {"round_prefer_ceil", NM_ROUND_PREFER_CEIL},
    {"floor", NM_FLOOR},
    {"ceil", NM_CEIL},
};

/* The input coordinate of output index o along axis d. Like the ONNX
 * reference and ONNX Runtime, the resized length in the formulas is
 * scale * input length, which need not be the integer output length. */
static double coord(const struct rsz *r, uint32_t d, int64_t o)
{
    double s = r->scale[d], x = (double)o, in = (double)r->in[d], len = r->len[d];
    switch (r->ct) {
    case CT_HALF_PIXEL:
        return (x + 0.5) / s - 0.5;
    case CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)r->out[d] / len;
        double center = in / 2;
        return center * (1 - adjustment) + (x + 0.5) / s - 0.5;
    }
    case CT_PYTORCH_HALF_PIXEL:
        return len > 1 ? (x + 0.5) / s - 0.5 : 0;
    case CT_ALIGN_CORNERS:
        return len == 1 ? 0 : x * (in - 1) / (len - 1);
    case CT_ASYMMETRIC:
        return x / s;
    case CT_TF_HALF_PIXEL_FOR_NN:
        return (x + 0.5) / s;
    case CT_TF_CROP_AND_RESIZE: {
        double start = r->roi[d], end = r->roi[r->rank + d];
        if (len > 1)
            return start * (in - 1) + x * (end - start) * (in - 1) / (len - 1);
        return 0.5 * (start + end) * (in - 1);
    }
    }
    return 0;
}

static double cubic_kernel(double x, double A)
{
    x = fabs(x);
    if (x <= 1)
        return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2)
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* Taps per output index for the mode (an upper bound for antialias). */
static int64_t n_taps(const struct rsz *r, uint32_t d)
{
    double s = r->scale[d] < 1 ? r->scale[d] : 1;
    switch (r->mode) {
    case IM_NEAREST:
        return 1;
    case IM_LINEAR:
        return r->antialias ? 2 - 2 * sg_dim_from_double(floor(-1 / s) + 1) : 2;
    case IM_CUBIC:
        return r->antialias ? 2 - 2 * sg_dim_from_double(floor(-2 / s) + 1) : 4;
    }
    return 1;
}

/* Fill the taps of output index o along axis d. */
static void make_taps(const struct rsz *r, uint32_t d, int64_t o, struct taps *t)
{
    int64_t in = r->in[d], *idx = t->idx + o * t->n;
    double *w = t->w + o * t->n;
    double x = coord(r, d, o);
    t->outside[o] = 0;
    t->cnt[o] = 0;
    if (r->ct == CT_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(in - 1))) {
        /* Extrapolated: no tap is read, but a row's base offset still sums
         * the indices, so they hold a valid one. */
        t->outside[o] = 1;
        for (int64_t k = 0; k < t->n; k++)
            idx[k] = 0;
        return;
    }
    /* x0 + ratio = x with ratio in (0, 1]: the neighbours are x0 + k. */
    double x0 = ceil(x) - 1, ratio = x - x0;
    int64_t start = 0, n = 0;
    if (r->mode == IM_NEAREST) {
        double i;
        switch (r->nearest) {
        case NM_ROUND_PREFER_FLOOR:
            i = ratio == 1 || ratio > 0.5 ? x0 + 1 : x0;
            break;
        case NM_ROUND_PREFER_CEIL:
            i = ratio == 1 || ratio >= 0.5 ? x0 + 1 : x0;
            break;
        case NM_FLOOR:
            i = ratio == 1 ? x0 + 1 : x0;
            break;
        case NM_CEIL:
            i = x0 + 1;
            break;
        default: /* NM_SIMPLE */
            i = r->scale[d] < 1 ? ceil(x) : floor(x);
            break;
        }
        int64_t k = sg_dim_from_double(i); /* x may lie far outside (a roi) */
        idx[0] = k < 0 ? 0 : k >= in ? in - 1 : k;
        w[0] = 1;
        t->cnt[o] = 1;
        return;
    }
    double s = r->scale[d] < 1 ? r->scale[d] : 1, sum = 0;
    if (r->mode == IM_LINEAR) {
        start = r->antialias ? sg_dim_from_double(floor(-1 / s) + 1) : 0;
        n = 2 - 2 * start;
        for (int64_t k = 0; k < n; k++) {
            double a = r->antialias ? fabs((double)(start + k) - ratio) * s
                                    : fabs((double)(start + k) - ratio);
            w[k] = a < 1 ? 1 - a : 0;
        }
    } else {
        start = r->antialias ? sg_dim_from_double(floor(-2 / s) + 1) : -1;
        n = 2 - 2 * start;
        for (int64_t k = 0; k < n; k++)
            w[k] = cubic_kernel(((double)(start + k) - ratio) * (r->antialias ? s : 1), r->cubic_a);
    }
    int64_t i0 = sg_dim_from_double(x0);
    for (int64_t k = 0; k < n; k++) {
        int64_t i = i0 + start + k;
        if (r->exclude_outside && (i < 0 || i >= in))
            w[k] = 0;
        idx[k] = i < 0 ? 0 : i >= in ? in - 1 : i;
        sum += w[k];
    }
    if ((r->antialias || r->exclude_outside) && sum != 0)
        for (int64_t k = 0; k < n; k++)
            w[k] /= sum;
    /* keep the taps that count */
    int32_t c = 0;
    for (int64_t k = 0; k < n; k++)
        if (w[k] != 0) {
            idx[c] = idx[k];
            w[c] = w[k];
            c++;
        }
    t->cnt[o] = c;
}

/* One output row of nearest neighbours, elements of type T. */
#define NEAREST_ROW(T)                                                                             \
    do {                                                                                           \
        const T *s_ = (const T *)src + base;                                                       \
        T *d_ = (T *)dst + pos0;                                                                   \
        for (int64_t o = 0; o < last; o++)                                                         \
            d_[o] = s_[tl->idx[o * tl->n] * ls];                                                   \
    } while (0)

/* Nearest: move elements of any size. */
static void resize_nearest(const struct rsz *r, const struct taps *t, const sg_rt_value *X,
                           sg_rt_value *Y, const int64_t *istr)
{
    size_t es = sg_rt_elem_size(X->dtype);
    uint32_t R = r->rank;
    int64_t last = r->out[R - 1], rows = Y->numel / (last ? last : 1);
    int64_t oi[SG_MAX_RANK] = {0};
    const char *src = X->data;
    char *dst = Y->data;
    for (int64_t row = 0; row < rows; row++) {
        int64_t base = 0;
        bool outside = false;
        for (uint32_t d = 0; d + 1 < R; d++) {
            base += t[d].idx[oi[d] * t[d].n] * istr[d];
            outside |= t[d].outside[oi[d]] != 0;
        }
        const struct taps *tl = &t[R - 1];
        const int64_t ls = istr[R - 1], pos0 = row * last;
        switch (outside || r->ct == CT_TF_CROP_AND_RESIZE ? 0 : es) {
        case 1:
            NEAREST_ROW(uint8_t);
            break;
        case 2:
            NEAREST_ROW(uint16_t);
            break;
        case 4:
            NEAREST_ROW(uint32_t);
            break;
        case 8:
            NEAREST_ROW(uint64_t);
            break;
        default:
            for (int64_t o = 0; o < last; o++) {
                int64_t pos = pos0 + o;
                if (outside || tl->outside[o])
                    sg_rt_set_f64(Y, pos, r->extrapolation);
                else
                    memcpy(dst + (size_t)pos * es,
                           src + (size_t)(base + tl->idx[o * tl->n] * ls) * es, es);
            }
            break;
        }
        for (int d = (int)R - 2; d >= 0; d--)
            if (++oi[d] < r->out[d])
                break;
            else
                oi[d] = 0;
    }
}

/* Linear and cubic: weighted sums in double. */
static sg_status resize_interp(struct sg_kctx *k, const struct rsz *r, const struct taps *t,
                               const sg_rt_value *X, sg_rt_value *Y, const int64_t *istr)
{
    uint32_t R = r->rank;
    int64_t last = r->out[R - 1], rows = Y->numel / (last ? last : 1);
    /* the input as doubles */
    const double *src;
    if (X->dtype == SG_DTYPE_DOUBLE) {
        src = X->data;
    } else {
        double *s = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *s);
        if (!s)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        if (X->dtype == SG_DTYPE_FLOAT)
            for (int64_t i = 0; i < X->numel; i++)
                s[i] = ((const float *)X->data)[i];
        else
            for (int64_t i = 0; i < X->numel; i++)
                s[i] = sg_rt_get_f64(X, i);
        src = s;
    }
    /* combined taps of the outer axes for one row */
    int64_t max_comb = 1;
    for (uint32_t d = 0; d + 1 < R; d++)
        max_comb *= t[d].n;
    int64_t *coff = sg_kscratch(k, (size_t)(max_comb + 1) * sizeof *coff);
    double *cw = sg_kscratch(k, (size_t)(max_comb + 1) * sizeof *cw);
    double *yrow = sg_kscratch(k, (size_t)(last + 1) * sizeof *yrow);
    if (!coff || !cw || !yrow)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t oi[SG_MAX_RANK] = {0};
    const struct taps *tl = &t[R - 1];
    for (int64_t row = 0; row < rows; row++) {
        int64_t nc = 1;
        bool outside = false;
        coff[0] = 0;
        cw[0] = 1;
        for (uint32_t d = 0; d + 1 < R && !outside; d++) {
            int64_t o = oi[d], c = t[d].cnt[o], nn = nc * c;
            if (t[d].outside[o]) {
                outside = true;
                break;
            }
            /* expand in place, from the back */
            for (int64_t j = nc; j-- > 0;)
                for (int64_t q = c; q-- > 0;) {
                    coff[j * c + q] = coff[j] + t[d].idx[o * t[d].n + q] * istr[d];
                    cw[j * c + q] = cw[j] * t[d].w[o * t[d].n + q];
                }
            nc = nn;
        }
        for (int64_t o = 0; o < last; o++) {
            if (outside || tl->outside[o]) {
                yrow[o] = r->extrapolation;
                continue;
            }
            const int64_t *li = tl->idx + o * tl->n;
            const double *lw = tl->w + o * tl->n;
            int32_t lc = tl->cnt[o];
            double acc = 0;
            for (int64_t j = 0; j < nc; j++) {
                const double *p = src + coff[j];
                double a = 0;
                for (int32_t q = 0; q < lc; q++)
                    a += lw[q] * p[li[q] * istr[R - 1]];
                acc += cw[j] * a;
            }
            yrow[o] = acc;
        }
        int64_t pos = row * last;
        if (Y->dtype == SG_DTYPE_FLOAT)
            for (int64_t o = 0; o < last; o++)
                ((float *)Y->data)[pos + o] = (float)yrow[o];
        else if (Y->dtype == SG_DTYPE_DOUBLE)
            memcpy((double *)Y->data + pos, yrow, (size_t)last * sizeof *yrow);
        else
            for (int64_t o = 0; o < last; o++)
                sg_rt_set_f64(Y, pos + o, yrow[o]);
        for (int d = (int)R - 2; d >= 0; d--)
            if (++oi[d] < r->out[d])
                break;
            else
                oi[d] = 0;
    }
    return SG_OK;
}

/* Resize X into output 0 as described by r (out dims and scales set). */
static sg_status do_resize(struct sg_kctx *k, struct rsz *r)
{
    const sg_rt_value *X = sg_kin(k, 0);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, r->out, r->rank, &Y);
    if (st || !Y->numel)
        return st;
    if (r->rank == 0) {
        memcpy(Y->data, X->data, sg_rt_elem_size(X->dtype));
        return SG_OK;
    }
    if (r->mode != IM_NEAREST &&
        (!(SG_KT(X->dtype) & SG_KT_NUMERIC) || X->dtype == SG_DTYPE_COMPLEX64 ||
         X->dtype == SG_DTYPE_COMPLEX128))
        return sg_kfail(k, SG_ETYPE, "linear and cubic modes need a real numeric input, got %s",
                        sg_kshape(k, X));
    if (r->ct == CT_TF_CROP_AND_RESIZE && !(SG_KT(X->dtype) & (SG_KT_NUMERIC | SG_KT_BOOL)))
        return sg_kfail(k, SG_ETYPE, "tf_crop_and_resize needs a numeric input, got %s",
                        sg_kshape(k, X));
    if (!X->numel)
        return sg_kfail(k, SG_ESHAPE, "cannot resize the empty input %s to %s", sg_kshape(k, X),
                        sg_kdims(k, r->out, r->rank));
    struct taps t[SG_MAX_RANK];
    for (uint32_t d = 0; d < r->rank; d++) {
        /* Every output index has at least one input (scale >= 1 / in), so
         * antialias taps stay within about 2 * in + 4. */
        int64_t n = n_taps(r, d), no = r->out[d], nt;
        size_t bytes;
        if (!sg_dim_mul(no, n, &nt) || !sg_dims_nbytes(nt, sizeof(double), &bytes))
            return sg_kfail(k, SG_ERANGE, "%lld taps for each of %lld outputs on axis %u",
                            (long long)n, (long long)no, d);
        t[d].n = n;
        t[d].idx = sg_kscratch(k, bytes);
        t[d].w = sg_kscratch(k, bytes);
        t[d].cnt = sg_kscratch(k, (size_t)no * sizeof *t[d].cnt);
        t[d].outside = sg_kscratch(k, (size_t)no);
        if (!t[d].idx || !t[d].w || !t[d].cnt || !t[d].outside)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t o = 0; o < no; o++)
            make_taps(r, d, o, &t[d]);
    }
    int64_t istr[SG_MAX_RANK];
    sg_rt_strides(X->dims, X->rank, istr);
    if (r->mode == IM_NEAREST) {
        resize_nearest(r, t, X, Y, istr);
        return SG_OK;
    }
    return resize_interp(k, r, t, X, Y, istr);
}

/* A float tensor input (scales, roi) as doubles in scratch. */
static sg_status floats_in(struct sg_kctx *k, uint32_t i, const char *name, double **v, int64_t *n)
{
    const sg_rt_value *t = sg_kin(k, i);
    *v = NULL;
    *n = -1;
    if (!t)
        return SG_OK;
    if (!sg_dtype_is_float(t->dtype) || t->rank > 1)
        return sg_kfail(k, SG_ETYPE, "%s must be a 1-D float tensor, got %s", name,
                        sg_kshape(k, t));
    *v = sg_kscratch(k, (size_t)(t->numel + 1) * sizeof **v);
    if (!*v)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t j = 0; j < t->numel; j++)
        (*v)[j] = sg_rt_get_f64(t, j);
    *n = t->numel;
    return SG_OK;
}

/* Output dims from scales (floor of in * scale). */
static sg_status from_scales(struct sg_kctx *k, struct rsz *r, const double *s, int64_t n)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (n != (int64_t)r->rank)
        return sg_kfail(k, SG_ESHAPE, "%lld scales for the input %s", (long long)n,
                        sg_kshape(k, X));
    for (uint32_t d = 0; d < r->rank; d++) {
        if (!(s[d] > 0))
            return sg_kfail(k, SG_ERANGE, "scale %g of axis %u is not positive", s[d], d);
        r->scale[d] = s[d];
        r->len[d] = s[d] * (double)r->in[d];
        r->out[d] = sg_dim_from_double(floor(r->len[d])); /* huge: refused by sg_kout */
    }
    return SG_OK;
}

static sg_status run_upsample(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    struct rsz r;
    memset(&r, 0, sizeof r);
    r.rank = X->rank;
    r.in = X->dims;
    r.ct = CT_ASYMMETRIC;
    r.nearest = NM_SIMPLE;
    const char *mode = sg_kattr_string(k, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0)
        r.mode = IM_NEAREST;
    else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0)
        r.mode = IM_LINEAR;
    else
        return sg_kfail(k, SG_EUNSUPPORTED, "mode '%s' is not nearest or linear", mode);
    double *s;
    int64_t n;
    sg_status st;
    bool from_attr = strcmp(k->node->op_type, "Upsample") == 0 && k->opset < 9;
    if (from_attr) {
        const float *f;
        n = sg_kattr_floats(k, "scales", &f);
        if (n < 0)
            return sg_kfail(k, SG_EINVAL, "attribute scales is required");
        if (!(s = sg_kscratch(k, (size_t)(n + 1) * sizeof *s)))
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t i = 0; i < n; i++)
            s[i] = f[i];
    } else if ((st = floats_in(k, 1, "scales", &s, &n))) {
        return st;
    } else if (!s) {
        return sg_kfail(k, SG_EUNDEF, "input scales is required");
    }
    if ((st = from_scales(k, &r, s, n)))
        return st;
    return do_resize(k, &r);
}

static sg_status run_resize(struct sg_kctx *k)
{
    if (k->opset < 11)
        return run_upsample(k);
    const sg_rt_value *X = sg_kin(k, 0);
    struct rsz r;
    memset(&r, 0, sizeof r);
    r.rank = X->rank;
    r.in = X->dims;
    const char *mode = sg_kattr_string(k, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0)
        r.mode = IM_NEAREST;
    else if (strcmp(mode, "linear") == 0)
        r.mode = IM_LINEAR;
    else if (strcmp(mode, "cubic") == 0)
        r.mode = IM_CUBIC;
    else
        return sg_kfail(k, SG_EUNSUPPORTED, "mode '%s' is not nearest, linear or cubic", mode);
    const char *ct = sg_kattr_string(k, "coordinate_transformation_mode", "half_pixel");
    size_t i;
    for (i = 0; i < sizeof coord_modes / sizeof coord_modes[0]; i++)
        if (strcmp(ct, coord_modes[i].name) == 0 && k->opset >= coord_modes[i].since &&
            k->opset <= coord_modes[i].until)
            break;
    if (i == sizeof coord_modes / sizeof coord_modes[0])
        return sg_kfail(k, SG_EUNSUPPORTED, "coordinate_transformation_mode '%s' does not exist",
                        ct);
    r.ct = coord_modes[i].ct;
    const char *nm = sg_kattr_string(k, "nearest_mode", "round_prefer_floor");
    for (i = 0; i < sizeof nearest_modes / sizeof nearest_modes[0]; i++)
        if (strcmp(nm, nearest_modes[i].name) == 0)
            break;
    if (i == sizeof nearest_modes / sizeof nearest_modes[0])
        return sg_kfail(k, SG_EUNSUPPORTED, "nearest_mode '%s' does not exist", nm);
    r.nearest = nearest_modes[i].nm;
    r.cubic_a = sg_kattr_float(k, "cubic_coeff_a", -0.75f);
    r.exclude_outside = sg_kattr_int(k, "exclude_outside", 0) != 0;
    r.extrapolation = sg_kattr_float(k, "extrapolation_value", 0.0f);
    r.antialias = k->opset >= 18 && sg_kattr_int(k, "antialias", 0) != 0;
    if (r.antialias && r.mode == IM_NEAREST)
        return sg_kfail(k, SG_EUNSUPPORTED, "antialias does not apply to mode nearest");
    const char *policy =
        k->opset >= 18 ? sg_kattr_string(k, "keep_aspect_ratio_policy", "stretch") : "stretch";
    if (strcmp(policy, "stretch") && strcmp(policy, "not_larger") && strcmp(policy, "not_smaller"))
        return sg_kfail(k, SG_EUNSUPPORTED, "keep_aspect_ratio_policy '%s' does not exist", policy);

    /* axes (opset 18): which dims scales, sizes and roi speak of */
    uint32_t axes[SG_MAX_RANK], naxes = r.rank;
    const int64_t *av;
    int64_t nav = k->opset >= 18 ? sg_kattr_ints(k, "axes", &av) : -1;
    bool listed[SG_MAX_RANK] = {false};
    sg_status st;
    if (nav >= 0) {
        if (nav > (int64_t)r.rank)
            return sg_kfail(k, SG_ERANGE, "%lld axes for the input %s", (long long)nav,
                            sg_kshape(k, X));
        naxes = (uint32_t)nav;
        for (uint32_t a = 0; a < naxes; a++) {
            if ((st = sg_kaxis(k, av[a], r.rank, &axes[a])))
                return st;
            if (listed[axes[a]])
                return sg_kfail(k, SG_EINVAL, "axis %lld is listed twice", (long long)av[a]);
            listed[axes[a]] = true;
        }
    } else {
        for (uint32_t a = 0; a < naxes; a++)
            axes[a] = a;
    }

    double *roi, *scales;
    int64_t n_roi, n_scales, n_sizes = -1;
    const int64_t *sizes = NULL;
    if ((st = floats_in(k, 1, "roi", &roi, &n_roi)) ||
        (st = floats_in(k, 2, "scales", &scales, &n_scales)))
        return st;
    if (sg_kin(k, 3) && (st = sg_kin_ints(k, 3, &sizes, &n_sizes)))
        return st;
    if (n_sizes > 0 && n_scales > 0)
        return sg_kfail(k, SG_EINVAL, "scales and sizes are both given");
    if (n_sizes <= 0 && n_scales <= 0)
        return sg_kfail(k, SG_EINVAL, "one of scales and sizes is required");
    int64_t given = n_sizes > 0 ? n_sizes : n_scales;
    if (given != (int64_t)naxes)
        return sg_kfail(k, SG_ESHAPE, "%s has %lld entries for %u axes of the input %s",
                        n_sizes > 0 ? "sizes" : "scales", (long long)given, naxes, sg_kshape(k, X));
    for (uint32_t d = 0; d < r.rank; d++) {
        r.out[d] = r.in[d];
        r.len[d] = (double)r.in[d];
        r.scale[d] = 1;
        r.roi[d] = 0;
        r.roi[r.rank + d] = 1;
    }
    if (r.ct == CT_TF_CROP_AND_RESIZE) {
        if (n_roi != 2 * (int64_t)naxes)
            return sg_kfail(k, SG_ESHAPE, "roi has %lld entries, expected %u for the input %s",
                            (long long)n_roi, 2 * naxes, sg_kshape(k, X));
        for (uint32_t a = 0; a < naxes; a++) {
            r.roi[axes[a]] = roi[a];
            r.roi[r.rank + axes[a]] = roi[naxes + a];
        }
    }
    if (n_sizes > 0) {
        for (uint32_t a = 0; a < naxes; a++) {
            uint32_t d = axes[a];
            if (sizes[a] < 0)
                return sg_kfail(k, SG_ERANGE, "size %lld of axis %u is negative",
                                (long long)sizes[a], d);
            if (r.in[d] == 0)
                return sg_kfail(k, SG_ESHAPE, "cannot resize the empty axis %u of %s", d,
                                sg_kshape(k, X));
            r.out[d] = sizes[a];
            r.len[d] = (double)sizes[a];
            r.scale[d] = (double)sizes[a] / (double)r.in[d];
        }
        if (strcmp(policy, "stretch") != 0) {
            bool larger = strcmp(policy, "not_smaller") == 0;
            double s = r.scale[axes[0]];
            for (uint32_t a = 1; a < naxes; a++)
                s = larger ? fmax(s, r.scale[axes[a]]) : fmin(s, r.scale[axes[a]]);
            for (uint32_t a = 0; a < naxes; a++) {
                uint32_t d = axes[a];
                r.scale[d] = s;
                r.len[d] = s * (double)r.in[d];
                r.out[d] = sg_dim_from_double(r.len[d] + 0.5);
            }
        }
    } else {
        for (uint32_t a = 0; a < naxes; a++) {
            uint32_t d = axes[a];
            if (!(scales[a] > 0))
                return sg_kfail(k, SG_ERANGE, "scale %g of axis %u is not positive", scales[a], d);
            r.scale[d] = scales[a];
            r.len[d] = scales[a] * (double)r.in[d];
            r.out[d] = sg_dim_from_double(floor(r.len[d]));
        }
    }
    return do_resize(k, &r);
}

#define RESIZE_TYPES (SG_KT_ALL | SG_KT(SG_DTYPE_COMPLEX64) | SG_KT(SG_DTYPE_COMPLEX128))

static const struct sg_kernel kernels[] = {
    {"", "Resize", 10, 0, RESIZE_TYPES, 0, run_resize, "rr"},
    {"", "Resize", 11, 0, RESIZE_TYPES, 0, run_resize, "rrro"},
    {"", "Resize", 13, 0, RESIZE_TYPES, 0, run_resize, "rooo"},
    {"", "Resize", 18, 0, RESIZE_TYPES, 0, run_resize, "rooo"},
    {"", "Resize", 19, 0, RESIZE_TYPES, 0, run_resize, "rooo"},
    {"", "Upsample", 7, 0, RESIZE_TYPES, 0, run_upsample, "r"},
    {"", "Upsample", 9, 0, RESIZE_TYPES, 0, run_upsample, "rr"},
};
SG_KERNEL_FAMILY(resize, kernels);
