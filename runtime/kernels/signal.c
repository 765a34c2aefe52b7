/*
 * signal.c - DFT (any axis, inverse scaled by 1/N, onesided, dft_length
 * padding or truncation), STFT (frames, window, onesided) and
 * MelWeightMatrix, following the ONNX definitions. Direct O(N^2) DFTs in
 * float64: exact enough for a reference, not a fast FFT.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

/* out[f] = sum_n in[n] e^(-+2 pi i f n / L) for f < nout, in of length nin
 * (zero beyond), complex interleaved. */
static void dft(const double *in, int64_t nin, int64_t L, int64_t nout, bool inverse, double *out)
{
    double sign = inverse ? 1 : -1;
    for (int64_t f = 0; f < nout; f++) {
        double re = 0, im = 0;
        for (int64_t n = 0; n < nin && n < L; n++) {
            double a = sign * 2 * M_PI * (double)((f * n) % L) / (double)L;
            double c = cos(a), s = sin(a);
            re += in[2 * n] * c - in[2 * n + 1] * s;
            im += in[2 * n] * s + in[2 * n + 1] * c;
        }
        out[2 * f] = inverse ? re / (double)L : re;
        out[2 * f + 1] = inverse ? im / (double)L : im;
    }
}

static sg_status run_dft(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *DL = sg_kin(k, 1);
    if (X->rank < 2 || (X->dims[X->rank - 1] != 1 && X->dims[X->rank - 1] != 2))
        return sg_kfail(k, SG_ESHAPE, "input %s must end in a dimension of 1 (real) or 2 (complex)",
                        sg_kshape(k, X));
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 1), X->rank - 1, &axis);
    if (st)
        return st;
    bool inverse = sg_kattr_int(k, "inverse", 0) != 0,
         onesided = sg_kattr_int(k, "onesided", 0) != 0;
    int64_t n = X->dims[axis], L = DL && DL->numel ? sg_rt_get_i64(DL, 0) : n;
    if (L <= 0)
        return sg_kfail(k, SG_ERANGE, "dft_length %lld must be positive", (long long)L);
    int64_t nout = onesided ? L / 2 + 1 : L;
    bool cplx = X->dims[X->rank - 1] == 2;
    int64_t od[SG_MAX_RANK];
    memcpy(od, X->dims, X->rank * sizeof od[0]);
    od[axis] = nout;
    od[X->rank - 1] = 2;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    int64_t outer = 1, inner = 1;
    for (uint32_t d = 0; d < axis; d++)
        outer *= X->dims[d];
    for (uint32_t d = axis + 1; d + 1 < X->rank; d++)
        inner *= X->dims[d];
    double *in = sg_kscratch(k, (size_t)(2 * n + 2) * sizeof *in);
    double *out = sg_kscratch(k, (size_t)(2 * nout + 2) * sizeof *out);
    if (!in || !out)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t cw = cplx ? 2 : 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t t = 0; t < n; t++) {
                int64_t src = ((o * n + t) * inner + i) * cw;
                in[2 * t] = sg_rt_get_f64(X, src);
                in[2 * t + 1] = cplx ? sg_rt_get_f64(X, src + 1) : 0;
            }
            dft(in, n, L, nout, inverse, out);
            for (int64_t f = 0; f < nout; f++) {
                int64_t dst = ((o * nout + f) * inner + i) * 2;
                sg_rt_set_f64(Y, dst, out[2 * f]);
                sg_rt_set_f64(Y, dst + 1, out[2 * f + 1]);
            }
        }
    return SG_OK;
}

static sg_status run_stft(struct sg_kctx *k)
{
    const sg_rt_value *S = sg_kin(k, 0), *FS = sg_kin(k, 1), *Wn = sg_kin(k, 2);
    const sg_rt_value *FL = sg_kin(k, 3);
    if (S->rank != 3 || (S->dims[2] != 1 && S->dims[2] != 2) || !FS || FS->numel != 1)
        return sg_kfail(k, SG_ESHAPE,
                        "signal %s must be [batch, length, 1 or 2] with a scalar "
                        "frame_step",
                        sg_kshape(k, S));
    int64_t step = sg_rt_get_i64(FS, 0);
    int64_t flen = FL && FL->numel ? sg_rt_get_i64(FL, 0) : Wn ? Wn->numel : 0;
    if (step <= 0 || flen <= 0 || (Wn && Wn->numel != flen) || flen > S->dims[1])
        return sg_kfail(k, SG_EINVAL, "bad frame_step %lld, frame_length %lld or window for %s",
                        (long long)step, (long long)flen, sg_kshape(k, S));
    bool onesided = sg_kattr_int(k, "onesided", 1) != 0;
    int64_t B = S->dims[0], len = S->dims[1], cw = S->dims[2];
    int64_t frames = 1 + (len - flen) / step, bins = onesided ? flen / 2 + 1 : flen;
    int64_t od[4] = {B, frames, bins, 2};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, S->dtype, od, 4, &Y);
    if (st)
        return st;
    double *in = sg_kscratch(k, (size_t)(2 * flen + 2) * sizeof *in);
    double *out = sg_kscratch(k, (size_t)(2 * bins + 2) * sizeof *out);
    if (!in || !out)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t b = 0; b < B; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t t = 0; t < flen; t++) {
                int64_t src = (b * len + f * step + t) * cw;
                double w = Wn ? sg_rt_get_f64(Wn, t) : 1;
                in[2 * t] = sg_rt_get_f64(S, src) * w;
                in[2 * t + 1] = cw == 2 ? sg_rt_get_f64(S, src + 1) * w : 0;
            }
            dft(in, flen, flen, bins, false, out);
            for (int64_t q = 0; q < bins; q++) {
                int64_t dst = ((b * frames + f) * bins + q) * 2;
                sg_rt_set_f64(Y, dst, out[2 * q]);
                sg_rt_set_f64(Y, dst + 1, out[2 * q + 1]);
            }
        }
    return SG_OK;
}

static sg_status run_mel(struct sg_kctx *k)
{
    const sg_rt_value *NM = sg_kin(k, 0), *DL = sg_kin(k, 1), *SR = sg_kin(k, 2);
    const sg_rt_value *LO = sg_kin(k, 3), *HI = sg_kin(k, 4);
    int64_t nmel = sg_rt_get_i64(NM, 0), dlen = sg_rt_get_i64(DL, 0), rate = sg_rt_get_i64(SR, 0);
    double lo = sg_rt_get_f64(LO, 0), hi = sg_rt_get_f64(HI, 0);
    if (nmel <= 0 || dlen <= 0 || rate <= 0)
        return sg_kfail(k, SG_ERANGE, "num_mel_bins, dft_length and sample_rate must be positive");
    int64_t nspec = dlen / 2 + 1;
    int64_t od[2] = {nspec, nmel};
    int32_t dt = (int32_t)sg_kattr_int(k, "output_datatype", SG_DTYPE_FLOAT);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, dt, od, 2, &Y);
    if (st)
        return st;
    int64_t *bin = sg_kscratch(k, (size_t)(nmel + 3) * sizeof *bin);
    if (!bin)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    double lmel = 2595 * log10(1 + lo / 700), hmel = 2595 * log10(1 + hi / 700);
    double step = (hmel - lmel) / (double)(nmel + 2);
    for (int64_t i = 0; i < nmel + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * step + lmel) / 2595) - 1);
        bin[i] = (int64_t)floor((double)(dlen + 1) * hz / (double)rate);
    }
    for (int64_t i = 0; i < nmel; i++) {
        int64_t l = bin[i], c = bin[i + 1], h = bin[i + 2];
        if (c - l == 0) {
            if (c >= 0 && c < nspec)
                sg_rt_set_f64(Y, c * nmel + i, 1);
        } else {
            for (int64_t j = l; j <= c; j++)
                if (j >= 0 && j < nspec)
                    sg_rt_set_f64(Y, j * nmel + i, (double)(j - l) / (double)(c - l));
        }
        if (h - c > 0)
            for (int64_t j = c; j < h; j++)
                if (j >= 0 && j < nspec)
                    sg_rt_set_f64(Y, j * nmel + i, (double)(h - j) / (double)(h - c));
    }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "DFT", 17, 0, SG_KT_FLOATS, 0, run_dft},
    {"", "STFT", 17, 0, SG_KT_FLOATS, 0, run_stft},
    {"", "MelWeightMatrix", 17, 0, SG_KT_INTS, 0, run_mel},
};
SG_KERNEL_FAMILY(signal, kernels);
