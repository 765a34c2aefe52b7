/*
 * signal.c - DFT (opsets 17 and 20), STFT and MelWeightMatrix (17).
 *
 * Transforms run in double on each 1-D line along the axis: an iterative
 * radix-2 FFT when the length is a power of two, otherwise a direct DFT
 * with a table of twiddle factors (exact index k*n mod N, so no phase
 * drift). The signal is cut or zero-padded to dft_length first; inverse
 * transforms scale by 1/N; onesided keeps bins 0..floor(N/2) of the full
 * transform. onesided is refused for complex input (the spec says it is
 * not possible) and together with inverse (the spec has changed its meaning
 * from "keep half of the inverse" to an inverse real transform; rather than
 * guess, the node fails). The window functions (HannWindow, ...) are in
 * generator.c.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

/* Twiddles and scratch for transforms of one length. */
struct dft_plan {
    int64_t n;
    bool pow2;
    double *cs, *sn; /* cos/sin(2 pi k / n), k < n */
    double *re, *im; /* the line being transformed */
    double *tre, *tim;
};

static sg_status plan_make(struct sg_kctx *k, struct dft_plan *p, int64_t n)
{
    p->n = n;
    p->pow2 = n > 0 && (n & (n - 1)) == 0;
    size_t sz;
    if (n < 0 || n == INT64_MAX || !sg_dims_nbytes(n + 1, sizeof(double), &sz))
        return sg_kfail(k, SG_ERANGE, "a transform of length %lld is too long", (long long)n);
    p->cs = sg_kscratch(k, sz);
    p->sn = sg_kscratch(k, sz);
    p->re = sg_kscratch(k, sz);
    p->im = sg_kscratch(k, sz);
    p->tre = sg_kscratch(k, sz);
    p->tim = sg_kscratch(k, sz);
    if (!p->cs || !p->sn || !p->re || !p->im || !p->tre || !p->tim)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    const double two_pi = 6.283185307179586476925286766559;
    for (int64_t i = 0; i < n; i++) {
        double a = two_pi * (double)i / (double)n;
        p->cs[i] = cos(a);
        p->sn[i] = sin(a);
    }
    return SG_OK;
}

/* Transform p->re/im in place: sign -1 forward, +1 inverse (unscaled). */
static void transform(struct dft_plan *p, int sign)
{
    int64_t n = p->n;
    double *re = p->re, *im = p->im;
    if (n <= 1)
        return;
    if (p->pow2) {
        for (int64_t i = 1, j = 0; i < n; i++) {
            int64_t bit = n >> 1;
            for (; j & bit; bit >>= 1)
                j ^= bit;
            j ^= bit;
            if (i < j) {
                double t = re[i];
                re[i] = re[j];
                re[j] = t;
                t = im[i];
                im[i] = im[j];
                im[j] = t;
            }
        }
        for (int64_t len = 2; len <= n; len <<= 1) {
            int64_t half = len >> 1, step = n / len;
            for (int64_t s = 0; s < n; s += len)
                for (int64_t j = 0; j < half; j++) {
                    double wr = p->cs[j * step], wi = sign * p->sn[j * step];
                    int64_t a = s + j, b = a + half;
                    double xr = re[b] * wr - im[b] * wi, xi = re[b] * wi + im[b] * wr;
                    re[b] = re[a] - xr;
                    im[b] = im[a] - xi;
                    re[a] += xr;
                    im[a] += xi;
                }
        }
        return;
    }
    for (int64_t f = 0; f < n; f++) {
        double sr = 0, si = 0;
        for (int64_t t = 0, idx = 0; t < n; t++) {
            double wr = p->cs[idx], wi = sign * p->sn[idx];
            sr += re[t] * wr - im[t] * wi;
            si += re[t] * wi + im[t] * wr;
            idx += f;
            if (idx >= n)
                idx -= n;
        }
        p->tre[f] = sr;
        p->tim[f] = si;
    }
    memcpy(re, p->tre, (size_t)n * sizeof *re);
    memcpy(im, p->tim, (size_t)n * sizeof *im);
}

/* The elements of v as doubles (v's own data when it is float64). */
static const double *as_doubles(struct sg_kctx *k, const sg_rt_value *v)
{
    if (v->dtype == SG_DTYPE_DOUBLE)
        return v->data;
    double *d = sg_kscratch(k, (size_t)(v->numel + 1) * sizeof *d);
    if (!d)
        return NULL;
    if (v->dtype == SG_DTYPE_FLOAT)
        for (int64_t i = 0; i < v->numel; i++)
            d[i] = ((const float *)v->data)[i];
    else
        for (int64_t i = 0; i < v->numel; i++)
            d[i] = sg_rt_get_f64(v, i);
    return d;
}

/* Store doubles into float tensor Y (rounding once). */
static void store_doubles(sg_rt_value *Y, const double *d)
{
    if (Y->dtype == SG_DTYPE_DOUBLE)
        memcpy(Y->data, d, (size_t)Y->numel * sizeof *d);
    else if (Y->dtype == SG_DTYPE_FLOAT)
        for (int64_t i = 0; i < Y->numel; i++)
            ((float *)Y->data)[i] = (float)d[i];
    else
        for (int64_t i = 0; i < Y->numel; i++)
            sg_rt_set_f64(Y, i, d[i]);
}

/* An optional integer scalar input, or dflt when omitted. */
static sg_status scalar_in(struct sg_kctx *k, uint32_t i, const char *name, int64_t dflt,
                           int64_t *out)
{
    const sg_rt_value *v = sg_kin(k, i);
    *out = dflt;
    if (!v)
        return SG_OK;
    if ((v->dtype != SG_DTYPE_INT32 && v->dtype != SG_DTYPE_INT64) || v->numel != 1 || v->rank > 1)
        return sg_kfail(k, SG_ETYPE, "%s must be an int32/int64 scalar, got %s", name,
                        sg_kshape(k, v));
    *out = sg_rt_get_i64(v, 0);
    return SG_OK;
}

static sg_status run_dft(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    sg_status st;
    if (X->rank < 2 || (X->dims[X->rank - 1] != 1 && X->dims[X->rank - 1] != 2))
        return sg_kfail(k, SG_ESHAPE,
                        "input must end in a dimension of 1 (real) or 2 (complex), got %s",
                        sg_kshape(k, X));
    bool cplx = X->dims[X->rank - 1] == 2;
    int64_t a;
    if (k->opset >= 20) {
        if ((st = scalar_in(k, 2, "axis", -2, &a)))
            return st;
    } else {
        a = sg_kattr_int(k, "axis", 1);
    }
    int64_t r = X->rank;
    if (a < -r || a > r - 2 || a == -1)
        return sg_kfail(k, SG_ERANGE, "axis %lld is outside [%lld, -2] and [0, %lld] for %s",
                        (long long)a, (long long)-r, (long long)(r - 2), sg_kshape(k, X));
    uint32_t axis = (uint32_t)(a < 0 ? a + r : a);
    int64_t n;
    if ((st = scalar_in(k, 1, "dft_length", X->dims[axis], &n)))
        return st;
    if (n < 1)
        return sg_kfail(k, SG_ERANGE, "dft_length %lld is not positive", (long long)n);
    bool inverse = sg_kattr_int(k, "inverse", 0) != 0;
    bool onesided = sg_kattr_int(k, "onesided", 0) != 0;
    if (onesided && (cplx || inverse))
        return sg_kfail(k, SG_EUNSUPPORTED,
                        "onesided is only defined for a forward transform of real input, got "
                        "%s%s",
                        sg_kshape(k, X), inverse ? " with inverse=1" : "");
    int64_t nout = onesided ? n / 2 + 1 : n;
    int64_t od[SG_MAX_RANK];
    memcpy(od, X->dims, (size_t)r * sizeof od[0]);
    od[axis] = nout;
    od[r - 1] = 2;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    if (!Y->numel)
        return SG_OK;
    struct dft_plan p;
    if ((st = plan_make(k, &p, n)))
        return st;
    /* lines along axis: X is [outer, len, inner, c], Y [outer, nout, inner, 2] */
    int64_t len = X->dims[axis], c = X->dims[r - 1], outer = 1, inner = 1;
    for (uint32_t d = 0; d < axis; d++)
        outer *= X->dims[d];
    for (int64_t d = axis + 1; d < r - 1; d++)
        inner *= X->dims[d];
    double scale = inverse ? 1.0 / (double)n : 1.0;
    const double *x = as_doubles(k, X);
    double *y = sg_kscratch(k, (size_t)Y->numel * sizeof *y);
    if (!x || !y)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            for (int64_t t = 0; t < n; t++) {
                int64_t xi = ((o * len + t) * inner + j) * c;
                p.re[t] = t < len ? x[xi] : 0;
                p.im[t] = t < len && cplx ? x[xi + 1] : 0;
            }
            transform(&p, inverse ? 1 : -1);
            for (int64_t f = 0; f < nout; f++) {
                int64_t yi = ((o * nout + f) * inner + j) * 2;
                y[yi] = p.re[f] * scale;
                y[yi + 1] = p.im[f] * scale;
            }
        }
    store_doubles(Y, y);
    return SG_OK;
}

static sg_status run_stft(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *W = sg_kin(k, 2);
    sg_status st;
    if (X->rank != 3 || (X->dims[2] != 1 && X->dims[2] != 2))
        return sg_kfail(k, SG_ESHAPE, "signal must be [batch, length, 1 or 2], got %s",
                        sg_kshape(k, X));
    bool cplx = X->dims[2] == 2;
    int64_t step, flen;
    if ((st = scalar_in(k, 1, "frame_step", 0, &step)) ||
        (st = scalar_in(k, 3, "frame_length", W ? W->numel : -1, &flen)))
        return st;
    if (!sg_kin(k, 1))
        return sg_kfail(k, SG_EUNDEF, "frame_step is required");
    if (W && (W->rank != 1 || W->numel != flen || W->dtype != X->dtype))
        return sg_kfail(k, SG_ESHAPE, "window %s does not match frame_length %lld and signal %s",
                        sg_kshape(k, W), (long long)flen, sg_kshape(k, X));
    if (flen < 1 || flen > X->dims[1] || step < 1)
        return sg_kfail(k, SG_ERANGE,
                        "frame_length %lld and frame_step %lld do not fit the signal %s",
                        (long long)flen, (long long)step, sg_kshape(k, X));
    bool onesided = sg_kattr_int(k, "onesided", 1) != 0;
    if (onesided && cplx)
        return sg_kfail(k, SG_EUNSUPPORTED, "onesided is not defined for the complex signal %s",
                        sg_kshape(k, X));
    int64_t B = X->dims[0], L = X->dims[1], frames = (L - flen) / step + 1;
    int64_t bins = onesided ? flen / 2 + 1 : flen;
    int64_t od[4] = {B, frames, bins, 2};
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, 4, &Y)))
        return st;
    struct dft_plan p;
    if ((st = plan_make(k, &p, flen)))
        return st;
    double *w = sg_kscratch(k, (size_t)(flen + 1) * sizeof *w);
    const double *x = as_doubles(k, X);
    double *y = sg_kscratch(k, (size_t)(Y->numel + 1) * sizeof *y);
    if (!w || !x || !y)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t t = 0; t < flen; t++)
        w[t] = W ? sg_rt_get_f64(W, t) : 1;
    int64_t c = X->dims[2];
    for (int64_t b = 0; b < B; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t t = 0; t < flen; t++) {
                int64_t xi = (b * L + f * step + t) * c;
                p.re[t] = x[xi] * w[t];
                p.im[t] = cplx ? x[xi + 1] * w[t] : 0;
            }
            transform(&p, -1);
            for (int64_t q = 0; q < bins; q++) {
                int64_t yi = ((b * frames + f) * bins + q) * 2;
                y[yi] = p.re[q];
                y[yi + 1] = p.im[q];
            }
        }
    store_doubles(Y, y);
    return SG_OK;
}

/*
 * MelWeightMatrix: triangular filters between mel-spaced points, as the
 * ONNX reference computes them: num_mel_bins + 2 points with the mel step
 * (high - low) / (num_mel_bins + 2), mapped to spectrogram bins by
 * floor((dft_length + 1) * hz / sample_rate).
 */
static sg_status run_mel_weight_matrix(struct sg_kctx *k)
{
    int64_t nmel, dftl, rate;
    sg_status st;
    if ((st = scalar_in(k, 0, "num_mel_bins", 0, &nmel)) ||
        (st = scalar_in(k, 1, "dft_length", 0, &dftl)) ||
        (st = scalar_in(k, 2, "sample_rate", 0, &rate)))
        return st;
    const sg_rt_value *lo = sg_kin(k, 3), *hi = sg_kin(k, 4);
    if (!lo || !hi || lo->numel != 1 || hi->numel != 1 || !sg_dtype_is_float(lo->dtype) ||
        !sg_dtype_is_float(hi->dtype))
        return sg_kfail(k, SG_ETYPE, "lower_edge_hertz and upper_edge_hertz must be float scalars");
    if (nmel < 1 || dftl < 1 || rate < 1)
        return sg_kfail(k, SG_ERANGE,
                        "num_mel_bins %lld, dft_length %lld and sample_rate %lld must be positive",
                        (long long)nmel, (long long)dftl, (long long)rate);
    int32_t odt = (int32_t)sg_kattr_int(k, "output_datatype", SG_DTYPE_FLOAT);
    if (odt <= 0 || odt >= 32 || !(SG_KT(odt) & SG_KT_NUMERIC))
        return sg_kfail(k, SG_ETYPE, "output_datatype %d is not a numeric type", odt);
    int64_t nspec = dftl / 2 + 1, nw;
    size_t wbytes, bbytes;
    if (!sg_dim_mul(nspec, nmel, &nw) || !sg_dims_nbytes(nw, sizeof(double), &wbytes) ||
        nmel > INT64_MAX - 2 || !sg_dims_nbytes(nmel + 2, sizeof(int64_t), &bbytes))
        return sg_kfail(k, SG_ERANGE, "a matrix of %lld x %lld is too large", (long long)nspec,
                        (long long)nmel);
    int64_t *bin = sg_kscratch(k, bbytes);
    double *w = sg_kscratch(k, wbytes);
    if (!bin || !w)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    double lmel = 2595 * log10(1 + sg_rt_get_f64(lo, 0) / 700);
    double hmel = 2595 * log10(1 + sg_rt_get_f64(hi, 0) / 700);
    double mstep = (hmel - lmel) / (double)(nmel + 2);
    for (int64_t i = 0; i < nmel + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * mstep + lmel) / 2595) - 1);
        bin[i] = sg_dim_from_double(floor(((double)dftl + 1) * hz / (double)rate));
        if (bin[i] < 0 || bin[i] >= nspec)
            return sg_kfail(k, SG_ERANGE,
                            "mel point %lld falls in bin %lld, outside the %lld spectrogram bins "
                            "(check the edge frequencies against sample_rate)",
                            (long long)i, (long long)bin[i], (long long)nspec);
    }
    memset(w, 0, wbytes);
    for (int64_t i = 0; i < nmel; i++) {
        int64_t l = bin[i], c = bin[i + 1], h = bin[i + 2];
        if (c == l)
            w[c * nmel + i] = 1;
        else
            for (int64_t j = l; j <= c; j++)
                w[j * nmel + i] = (double)(j - l) / (double)(c - l);
        for (int64_t j = c; j < h; j++)
            w[j * nmel + i] = (double)(h - j) / (double)(h - c);
    }
    int64_t od[2] = {nspec, nmel};
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, odt, od, 2, &Y)))
        return st;
    if (sg_dtype_is_float(odt)) {
        store_doubles(Y, w);
        return SG_OK;
    }
    for (int64_t i = 0; i < Y->numel; i++)
        sg_rt_set_f64(Y, i, w[i]);
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "DFT", 17, 0, SG_KT_FLOATS, 0, run_dft, "ro"},
    {"", "DFT", 20, 0, SG_KT_FLOATS, 0, run_dft, "roo"},
    {"", "STFT", 17, 0, SG_KT_FLOATS, 0, run_stft, "rroo"},
    {"", "MelWeightMatrix", 17, 0, SG_KT(SG_DTYPE_INT32) | SG_KT(SG_DTYPE_INT64), 0,
     run_mel_weight_matrix, "rrrrr"},
};
SG_KERNEL_FAMILY(signal, kernels);
