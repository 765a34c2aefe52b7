/*
 * conv.c - convolutions over any number of spatial dims: Conv,
 * ConvTranspose, ConvInteger, QLinearConv, and Col2Im (the scatter half of
 * ConvTranspose, so it lives here).
 *
 * Conv lowers each (image, group) to GEMMs through BLAS (cblas_sgemm /
 * cblas_dgemm): W_g [M/g, C/g * prod(k)] times the im2col matrix
 * [C/g * prod(k), prod(out)], built in chunks of at most ~32 MB. A 1x1
 * convolution with unit strides and no padding needs no im2col: the input
 * already is that matrix. Depthwise convolutions (one input channel per
 * group) in 1-D and 2-D run a direct vectorised loop instead (see
 * depthwise_f), much faster than GEMMs with one row. ConvTranspose is the
 * transpose: GEMMs W_g^T * X_g into columns, then col2im adds them into
 * the output.
 *
 * float32 computes in float32; float64 in float64; float16 and bfloat16 are
 * widened to float32 and rounded back. ConvInteger and QLinearConv
 * subtract the zero points and run the float64 path: products of 8-bit
 * integers summed in float64 are exact below 2^53, so the int32
 * accumulators are exact without an integer GEMM.
 */
#include "gemm_nchw.h"
#include "sg_blas.h"
#include "sg_dims.h"
#include "window.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* The shape of one convolution (forward or transposed). */
struct conv {
    int64_t N;      /* batch */
    int64_t C;      /* input channels */
    int64_t M;      /* output channels */
    int64_t group;  /* groups */
    int64_t Cg, Mg; /* channels per group */
    int64_t cr;     /* output rows (of the innermost axis) per im2col chunk */
    struct sg_win w;
};

/* The post-op of a fused Clip or Relu (sg_kpost): y = min(max(y, lo), hi)
 * when `on`. */
struct sg_post {
    bool on;
    float lo, hi;
};

/*
 * Rows of the innermost output axis per chunk of an im2col matrix with K
 * rows: at most about 32 MB of columns, so that memory stays bounded for
 * large images, but at least 4096 columns (smaller GEMMs cost OpenBLAS
 * measurably more: ResNet-50 ran 15% slower in 4 MB chunks).
 */
static int64_t chunk_rows(const struct sg_win *w, int64_t K, size_t esz)
{
    int64_t ol = w->out[w->n - 1], outer = ol ? w->out_size / ol : 0;
    int64_t cols = K > 0 ? (int64_t)((32u << 20) / ((size_t)K * esz)) : 4096;
    cols = cols < 4096 ? 4096 : cols;
    int64_t rows = ol ? (cols + ol - 1) / ol : 1;
    return rows < 1 ? 1 : rows > outer ? (outer ? outer : 1) : rows;
}

static bool is_half(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT16 || dt == SG_DTYPE_BFLOAT16;
}

/* Write n floats into tensor Y (float32, float16 or bfloat16). */
static void store_floats(sg_rt_value *Y, const float *src)
{
    uint16_t *h = Y->data;
    if (Y->dtype == SG_DTYPE_FLOAT16)
        for (int64_t i = 0; i < Y->numel; i++)
            h[i] = sg_float_to_half(src[i]);
    else if (Y->dtype == SG_DTYPE_BFLOAT16)
        for (int64_t i = 0; i < Y->numel; i++)
            h[i] = sg_float_to_bf16(src[i]);
    else if (Y->data != src)
        memcpy(Y->data, src, (size_t)Y->numel * sizeof(float));
}

/*
 * im2col and col2im for element type T. The image is [C, in...] and the
 * column matrix [C * prod(k), prod(out)], row (c, kernel position), column
 * output position; image index along axis d is o*stride - pad0 + kp*dil.
 * im2col fills columns (zeros in the padding); col2im adds them into the
 * image, which must be initialised. Only the output rows [r0, r0 + nr) of
 * the innermost axis take part (columns r0*out_last .. (r0+nr)*out_last,
 * stored from column 0): convolutions walk the output in such chunks.
 */
#define DEF_COLS(T, sfx)                                                                           \
    static void im2col_##sfx(const T *x, T *col, const struct sg_win *w, int64_t C, bool add,      \
                             int64_t r0, int64_t nr)                                               \
    {                                                                                              \
        uint32_t n = w->n, last = n - 1;                                                           \
        int64_t kp[SG_MAX_RANK], op[SG_MAX_RANK], op0[SG_MAX_RANK], istr[SG_MAX_RANK];             \
        int64_t ol = w->out[last], s = w->stride[last];                                            \
        int64_t rem = r0;                                                                          \
        for (uint32_t d = last; d-- > 0;) {                                                        \
            op0[d] = rem % w->out[d];                                                              \
            rem /= w->out[d];                                                                      \
        }                                                                                          \
        istr[last] = 1;                                                                            \
        for (uint32_t d = last; d-- > 0;)                                                          \
            istr[d] = istr[d + 1] * w->in[d + 1];                                                  \
        T *row = col;                                                                              \
        for (int64_t c = 0; c < C; c++) {                                                          \
            T *xc = (T *)x + c * w->in_size;                                                       \
            memset(kp, 0, n * sizeof kp[0]);                                                       \
            do {                                                                                   \
                int64_t off = kp[last] * w->dil[last], lo, hi;                                     \
                sg_win_range(ol, s, w->pad0[last], off, w->in[last], &lo, &hi);                    \
                memcpy(op, op0, n * sizeof op[0]);                                                 \
                T *dst = row;                                                                      \
                for (int64_t r = 0; r < nr; r++, dst += ol) {                                      \
                    bool ok = true;                                                                \
                    int64_t b = off - w->pad0[last];                                               \
                    for (uint32_t d = 0; d < last && ok; d++) {                                    \
                        int64_t i = op[d] * w->stride[d] - w->pad0[d] + kp[d] * w->dil[d];         \
                        ok = i >= 0 && i < w->in[d];                                               \
                        b += i * istr[d];                                                          \
                    }                                                                              \
                    sg_win_next(op, w->out, last);                                                 \
                    if (add) {                                                                     \
                        if (!ok)                                                                   \
                            continue;                                                              \
                        if (s == 1)                                                                \
                            for (int64_t o = lo; o < hi; o++)                                      \
                                xc[b + o] += dst[o];                                               \
                        else                                                                       \
                            for (int64_t o = lo; o < hi; o++)                                      \
                                xc[b + o * s] += dst[o];                                           \
                        continue;                                                                  \
                    }                                                                              \
                    if (!ok) {                                                                     \
                        memset(dst, 0, (size_t)ol * sizeof(T));                                    \
                        continue;                                                                  \
                    }                                                                              \
                    if (lo > 0)                                                                    \
                        memset(dst, 0, (size_t)lo * sizeof(T));                                    \
                    if (s == 1) {                                                                  \
                        if (hi > lo)                                                               \
                            memcpy(dst + lo, xc + b + lo, (size_t)(hi - lo) * sizeof(T));          \
                    } else {                                                                       \
                        for (int64_t o = lo; o < hi; o++)                                          \
                            dst[o] = xc[b + o * s];                                                \
                    }                                                                              \
                    if (hi < ol)                                                                   \
                        memset(dst + hi, 0, (size_t)(ol - hi) * sizeof(T));                        \
                }                                                                                  \
                row += nr * ol;                                                                    \
            } while (sg_win_next(kp, w->k, n));                                                    \
        }                                                                                          \
    }

DEF_COLS(float, f)
DEF_COLS(double, d)

/* Hot loops built for AVX-512, AVX2 and the baseline, chosen at load
 * time (the build targets baseline x86-64; GCC and clang on glibc). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SG_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SG_VECTOR_CLONES
#endif

/*
 * Depthwise convolution of one channel in 2-D (1-D as height 1), any
 * kernel, stride, dilation and padding. The input is first laid out as
 * sh * sw phase planes with the padding written out:
 *     q[rr][rc][i][j] = x[i * sh + rr - pad_top][j * sw + rc - pad_left]
 * (zero outside x), i < Hq, j < Wq. Output (oh, ow) reads tap (kh, kw) at
 *     q[kh*dh % sh][kw*dw % sw][(oh + kh*dh / sh) * Wq + ow + kw*dw / sw],
 * a fixed offset from t = oh * Wq + ow for every tap, so each tap is one
 * contiguous loop over the whole plane: no edge cases, and the vector
 * units stay busy even on 7x7 planes. The Wq - OW extra columns of each
 * row are dropped when copying out. Scratch: depthwise_scratch() elements.
 */
struct dw {
    int64_t Hq, Wq, plane; /* phase plane rows, columns, size */
};

static void dw_geometry(const struct sg_win *w, struct dw *g)
{
    int64_t qh = (w->k[0] - 1) * w->dil[0] / w->stride[0];
    int64_t qw = (w->k[1] - 1) * w->dil[1] / w->stride[1];
    g->Wq = w->out[1] + qw;
    g->Hq = w->out[0] + qh + 1;
    g->plane = g->Hq * g->Wq;
}

/* Elements of scratch depthwise_*() needs. */
static int64_t depthwise_scratch(const struct sg_win *w)
{
    struct dw g;
    dw_geometry(w, &g);
    return w->stride[0] * w->stride[1] * g.plane + w->out[0] * g.Wq;
}

#define DEF_DEPTHWISE(T, sfx)                                                                      \
    SG_VECTOR_CLONES static void depthwise_##sfx(const T *restrict x, const T *restrict wt,        \
                                                 T bias, T *restrict y, const struct sg_win *w,    \
                                                 T *restrict q)                                    \
    {                                                                                              \
        int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1];                        \
        int64_t KH = w->k[0], KW = w->k[1], sh = w->stride[0], sw = w->stride[1];                  \
        struct dw g;                                                                               \
        dw_geometry(w, &g);                                                                        \
        int64_t Wq = g.Wq;                                                                         \
        for (int64_t rr = 0; rr < sh; rr++) /* the phase planes */                                 \
            for (int64_t rc = 0; rc < sw; rc++) {                                                  \
                T *qp = q + (rr * sw + rc) * g.plane;                                              \
                int64_t jlo, jhi;                                                                  \
                sg_win_range(Wq, sw, w->pad0[1], rc, W, &jlo, &jhi);                               \
                for (int64_t i = 0; i < g.Hq; i++) {                                               \
                    T *dst = qp + i * Wq;                                                          \
                    int64_t ih = i * sh + rr - w->pad0[0];                                         \
                    if (ih < 0 || ih >= H || jhi <= jlo) {                                         \
                        memset(dst, 0, (size_t)Wq * sizeof(T));                                    \
                        continue;                                                                  \
                    }                                                                              \
                    int64_t base = ih * W + rc - w->pad0[1];                                       \
                    for (int64_t j = 0; j < jlo; j++)                                              \
                        dst[j] = 0;                                                                \
                    if (sw == 1)                                                                   \
                        memcpy(dst + jlo, x + base + jlo, (size_t)(jhi - jlo) * sizeof(T));        \
                    else if (sw == 2) /* a constant stride: vectorised as a de-interleave */       \
                        for (int64_t j = jlo; j < jhi; j++)                                        \
                            dst[j] = x[base + 2 * j];                                              \
                    else                                                                           \
                        for (int64_t j = jlo; j < jhi; j++)                                        \
                            dst[j] = x[base + j * sw];                                             \
                    for (int64_t j = jhi; j < Wq; j++)                                             \
                        dst[j] = 0;                                                                \
                }                                                                                  \
            }                                                                                      \
        /* Every tap over the whole plane; 3x3 in one pass. */                                     \
        T *acc = Wq == OW ? y : q + sh * sw * g.plane;                                             \
        int64_t n = OH * Wq;                                                                       \
        const T *tp[9];                                                                            \
        for (int64_t kh = 0, t = 0; kh < KH; kh++)                                                 \
            for (int64_t kw = 0; kw < KW; kw++, t++) {                                             \
                int64_t oy = kh * w->dil[0], ox = kw * w->dil[1];                                  \
                const T *src =                                                                     \
                    q + ((oy % sh) * sw + ox % sw) * g.plane + (oy / sh) * Wq + ox / sw;           \
                if (KH * KW == 9) {                                                                \
                    tp[t] = src;                                                                   \
                    continue;                                                                      \
                }                                                                                  \
                T wv = wt[t];                                                                      \
                if (t == 0)                                                                        \
                    for (int64_t i = 0; i < n; i++)                                                \
                        acc[i] = bias + wv * src[i];                                               \
                else                                                                               \
                    for (int64_t i = 0; i < n; i++)                                                \
                        acc[i] += wv * src[i];                                                     \
            }                                                                                      \
        if (KH * KW == 9) {                                                                        \
            const T *p0 = tp[0], *p1 = tp[1], *p2 = tp[2], *p3 = tp[3], *p4 = tp[4];               \
            const T *p5 = tp[5], *p6 = tp[6], *p7 = tp[7], *p8 = tp[8];                            \
            T w0 = wt[0], w1 = wt[1], w2 = wt[2], w3 = wt[3], w4 = wt[4], w5 = wt[5];              \
            T w6 = wt[6], w7 = wt[7], w8 = wt[8];                                                  \
            for (int64_t i = 0; i < n; i++)                                                        \
                acc[i] = bias + w0 * p0[i] + w1 * p1[i] + w2 * p2[i] + w3 * p3[i] + w4 * p4[i] +   \
                         w5 * p5[i] + w6 * p6[i] + w7 * p7[i] + w8 * p8[i];                        \
        }                                                                                          \
        if (acc != y)                                                                              \
            for (int64_t oh = 0; oh < OH; oh++)                                                    \
                memcpy(y + oh * OW, acc + oh * Wq, (size_t)OW * sizeof(T));                        \
    }

DEF_DEPTHWISE(float, f)
DEF_DEPTHWISE(double, d)

/*
 * dst [cols, rows] = src [rows, cols] transposed (float32), in 8x8 blocks:
 * through AVX2 registers where the CPU has them, element by element at
 * the edges and elsewhere.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2"))) static void transpose8_avx2(const float *src, int64_t ls,
                                                            float *dst, int64_t ld)
{
    __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + ls);
    __m256 r2 = _mm256_loadu_ps(src + 2 * ls), r3 = _mm256_loadu_ps(src + 3 * ls);
    __m256 r4 = _mm256_loadu_ps(src + 4 * ls), r5 = _mm256_loadu_ps(src + 5 * ls);
    __m256 r6 = _mm256_loadu_ps(src + 6 * ls), r7 = _mm256_loadu_ps(src + 7 * ls);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
    _mm256_storeu_ps(dst, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(dst + ld, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(dst + 2 * ld, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(dst + 3 * ld, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(dst + 4 * ld, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(dst + 5 * ld, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(dst + 6 * ld, _mm256_permute2f128_ps(s2, s6, 0x31));
    _mm256_storeu_ps(dst + 7 * ld, _mm256_permute2f128_ps(s3, s7, 0x31));
}
#endif

static void transpose_f(const float *restrict src, int64_t rows, int64_t cols, float *restrict dst)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int avx2 = -1;
    if (avx2 < 0)
        avx2 = __builtin_cpu_supports("avx2") != 0;
#else
    const int avx2 = 0;
#endif
    for (int64_t r0 = 0; r0 < rows; r0 += 8)
        for (int64_t c0 = 0; c0 < cols; c0 += 8) {
#if defined(__x86_64__) && defined(__GNUC__)
            if (avx2 && r0 + 8 <= rows && c0 + 8 <= cols) {
                transpose8_avx2(src + r0 * cols + c0, cols, dst + c0 * rows + r0, rows);
                continue;
            }
#endif
            for (int64_t r = r0; r < rows && r < r0 + 8; r++)
                for (int64_t c = c0; c < cols && c < c0 + 8; c++)
                    dst[c * rows + r] = src[r * cols + c];
        }
}

/*
 * Depthwise convolution of small planes (float32, 2-D, one output channel
 * per input channel), with the channels in the vector lanes: x [C, H, W]
 * is transposed to xt [H*W, C], each output position sums its valid taps
 * as whole rows of C values, and yt [OH*OW, C] is transposed back into y.
 * On a 14x14 or 7x7 plane the plane-wise loop above spends most of its
 * time on short row copies; here every operation spans the channels. Taps
 * outside the input are skipped, which adds the same non-zero terms in the
 * same order as the plane-wise loop (bias first, then taps in row-major
 * order). Scratch: xt C*H*W, yt C*OH*OW and wt C*KH*KW floats.
 */
/* Sixteen floats (GCC and clang vector extension; unaligned through memcpy). */
typedef float v16f __attribute__((vector_size(64)));

SG_VECTOR_CLONES static void depthwise_cl_taps(const float *restrict xt, const float *restrict wt,
                                               const float *restrict b, float *restrict yt,
                                               int64_t C, const struct sg_win *v)
{
    int64_t H = v->in[0], W = v->in[1], OH = v->out[0], OW = v->out[1];
    int64_t KH = v->k[0], KW = v->k[1], n = 0;
    const float *xr[64], *wr[64];
    for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
            /* The valid taps of this position (at most 64: else in two passes). */
            float *out = yt + (oh * OW + ow) * C;
            bool first = true;
            for (int64_t kh = 0, t = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++, t++) {
                    int64_t ih = oh * v->stride[0] + kh * v->dil[0] - v->pad0[0];
                    int64_t iw = ow * v->stride[1] + kw * v->dil[1] - v->pad0[1];
                    if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                        xr[n] = xt + (ih * W + iw) * C;
                        wr[n++] = wt + t * C;
                    }
                    if (n < 64 && !(kh == KH - 1 && kw == KW - 1))
                        continue;
                    /* Sixteen channels at a time, held in a register. */
                    int64_t c0 = 0;
                    for (; c0 + 16 <= C; c0 += 16) {
                        v16f a, wv, xv;
                        if (!first)
                            memcpy(&a, out + c0, sizeof a);
                        else if (b)
                            memcpy(&a, b + c0, sizeof a);
                        else
                            a = (v16f){0};
                        for (int64_t i = 0; i < n; i++) {
                            memcpy(&wv, wr[i] + c0, sizeof wv);
                            memcpy(&xv, xr[i] + c0, sizeof xv);
                            a += wv * xv;
                        }
                        memcpy(out + c0, &a, sizeof a);
                    }
                    for (; c0 < C; c0++) {
                        float a = first ? (b ? b[c0] : 0.0f) : out[c0];
                        for (int64_t i = 0; i < n; i++)
                            a += wr[i][c0] * xr[i][c0];
                        out[c0] = a;
                    }
                    first = false;
                    n = 0;
                }
        }
}

static void depthwise_cl_f(const float *x, const float *w, const float *b, float *y, int64_t C,
                           const struct sg_win *v, float *xt, float *yt, float *wt)
{
    transpose_f(x, C, v->in_size, xt);
    transpose_f(w, C, v->k_size, wt);
    depthwise_cl_taps(xt, wt, b, yt, C, v);
    transpose_f(yt, v->out_size, C, y);
}

/* Planes up to this many outputs go through depthwise_cl_f. */
#define DW_CL_MAX 256

static void gemm_f(bool ta, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                   const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    sg_blas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)M, (int)N,
                  (int)K, 1.0f, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

static void gemm_d(bool ta, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                   const double *B, int64_t ldb, double beta, double *C, int64_t ldc)
{
    sg_blas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)M, (int)N,
                  (int)K, 1.0, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

/* The 2-D view of a 1-D or 2-D window (1-D becomes height 1). */
static void win_2d(const struct sg_win *w, struct sg_win *v)
{
    if (w->n == 2) {
        *v = *w;
        return;
    }
    memset(v, 0, sizeof *v);
    v->n = 2;
    v->in[0] = v->k[0] = v->out[0] = v->stride[0] = v->dil[0] = 1;
    v->in[1] = w->in[0];
    v->k[1] = w->k[0];
    v->out[1] = w->out[0];
    v->stride[1] = w->stride[0];
    v->dil[1] = w->dil[0];
    v->pad0[1] = w->pad0[0];
    v->pad1[1] = w->pad1[0];
    (void)sg_win_sizes(v); /* the sizes of w: they fit */
}

/*
 * Whether a group convolution of one input channel per group takes the
 * phase-plane path: 1-D or 2-D, and phase planes of a size like the
 * input's. Strides or dilations far past the kernel make stride^2 planes
 * of mostly padding (past int64 for attributes near 2^62): those convolve
 * through im2col, which allocates only what the output needs.
 */
static bool use_depthwise(const struct conv *p)
{
    const struct sg_win *w = &p->w;
    if (p->Cg != 1 || w->n > 2)
        return false;
    struct sg_win v;
    win_2d(w, &v);
    int64_t qh = (v.k[0] - 1) * v.dil[0] / v.stride[0], qw = (v.k[1] - 1) * v.dil[1] / v.stride[1];
    int64_t hq, wq, planes, n, budget;
    return sg_dim_add(v.out[0], qh + 1, &hq) && sg_dim_add(v.out[1], qw, &wq) &&
           sg_dim_mul(v.stride[0], v.stride[1], &planes) && sg_dim_mul(hq, wq, &n) &&
           sg_dim_mul(planes, n, &n) && sg_dim_add(v.in_size, v.out_size, &budget) &&
           n <= 4 * budget + 65536;
}

/* y[m * ld + i] = v[m] for m < rows, i < n: the bias the GEMMs then add to. */
#define DEF_FILL(T, sfx)                                                                           \
    SG_VECTOR_CLONES static void fill_rows_##sfx(T *restrict y, const T *restrict v, int64_t rows, \
                                                 int64_t n, int64_t ld)                            \
    {                                                                                              \
        for (int64_t m = 0; m < rows; m++)                                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                y[m * ld + i] = v[m];                                                              \
    }

DEF_FILL(float, f)
DEF_FILL(double, d)

/* y[m * ld + i] = min(max(y, lo), hi) for m < rows, i < n, the comparisons
 * of Clip (NaN stays NaN): the post-op of a fused Clip or Relu. */
#define DEF_CLAMP(T, sfx)                                                                          \
    SG_VECTOR_CLONES static void clamp_rows_##sfx(T *restrict y, int64_t rows, int64_t n,          \
                                                  int64_t ld, T lo, T hi)                          \
    {                                                                                              \
        for (int64_t m = 0; m < rows; m++)                                                         \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T v = y[m * ld + i] < lo ? lo : y[m * ld + i];                                     \
                y[m * ld + i] = v > hi ? hi : v;                                                   \
            }                                                                                      \
    }

DEF_CLAMP(float, f)
DEF_CLAMP(double, d)

/*
 * y [rows, n] (row stride ldy) = post(bias + W [rows, K] x [K, n] (row
 * stride ldx)): through gemm_nchw.c when `own` (float32, one thread, an
 * AVX-512 CPU), else a BLAS GEMM over the bias and a clamp pass.
 */
static void gemm_post_f(bool own, int64_t rows, int64_t n, int64_t K, const float *w,
                        const float *x, int64_t ldx, const float *bias, float *y, int64_t ldy,
                        const struct sg_post *po)
{
    if (own && sg__gemm_nchw(rows, n, K, w, K, x, ldx, bias, y, ldy, po->lo, po->hi))
        return;
    if (bias)
        fill_rows_f(y, bias, rows, n, ldy);
    gemm_f(false, rows, n, K, w, K, x, ldx, bias ? 1 : 0, y, ldy);
    if (po->on)
        clamp_rows_f(y, rows, n, ldy, po->lo, po->hi);
}

static void gemm_post_d(bool own, int64_t rows, int64_t n, int64_t K, const double *w,
                        const double *x, int64_t ldx, const double *bias, double *y, int64_t ldy,
                        const struct sg_post *po)
{
    (void)own;
    if (bias)
        fill_rows_d(y, bias, rows, n, ldy);
    gemm_d(false, rows, n, K, w, K, x, ldx, bias ? 1 : 0, y, ldy);
    if (po->on)
        clamp_rows_d(y, rows, n, ldy, po->lo, po->hi);
}

/*
 * Forward convolution for element type T: y [N, M, out...] from x [N, C,
 * in...], w [M, C/g, k...] and bias b [M] (NULL: none), then the post-op
 * po (a fused Clip or Relu). col is scratch from conv_scratch(): a chunk
 * of p->cr output rows of im2col columns, or the depthwise phase planes
 * (unused when the conv is pointwise).
 */
#define DEF_CONV(T, sfx)                                                                           \
    static void conv_##sfx(const struct conv *p, const T *x, const T *w, const T *b, T *y, T *col, \
                           const struct sg_post *po)                                               \
    {                                                                                              \
        const struct sg_win *g = &p->w;                                                            \
        int64_t K = p->Cg * g->k_size, ol = g->out[g->n - 1], outer = ol ? g->out_size / ol : 0;   \
        bool pointwise = g->k_size == 1, depthwise = use_depthwise(p);                             \
        bool own = sizeof(T) == sizeof(float) && sg_blas_threads() == 1;                           \
        for (uint32_t d = 0; d < g->n; d++)                                                        \
            if (g->stride[d] != 1 || g->pad0[d] || g->pad1[d])                                     \
                pointwise = false;                                                                 \
        if (depthwise && !pointwise) {                                                             \
            struct sg_win v;                                                                       \
            win_2d(g, &v);                                                                         \
            for (int64_t n = 0; n < p->N; n++)                                                     \
                for (int64_t m = 0; m < p->M; m++) {                                               \
                    T *ym = y + (n * p->M + m) * g->out_size;                                      \
                    depthwise_##sfx(x + (n * p->C + m / p->Mg) * g->in_size, w + m * g->k_size,    \
                                    b ? b[m] : (T)0, ym, &v, col);                                 \
                    if (po->on)                                                                    \
                        clamp_rows_##sfx(ym, 1, g->out_size, 0, po->lo, po->hi);                   \
                }                                                                                  \
            return;                                                                                \
        }                                                                                          \
        for (int64_t n = 0; n < p->N; n++)                                                         \
            for (int64_t gi = 0; gi < p->group; gi++) {                                            \
                const T *xg = x + (n * p->C + gi * p->Cg) * g->in_size;                            \
                T *yg = y + (n * p->M + gi * p->Mg) * g->out_size;                                 \
                const T *wg = w + gi * p->Mg * K, *bg = b ? b + gi * p->Mg : NULL;                 \
                if (pointwise) {                                                                   \
                    gemm_post_##sfx(own, p->Mg, g->out_size, K, wg, xg, g->out_size, bg, yg,       \
                                    g->out_size, po);                                              \
                    continue;                                                                      \
                }                                                                                  \
                for (int64_t r0 = 0; r0 < outer; r0 += p->cr) {                                    \
                    int64_t nr = outer - r0 < p->cr ? outer - r0 : p->cr;                          \
                    im2col_##sfx(xg, col, g, p->Cg, false, r0, nr);                                \
                    gemm_post_##sfx(own, p->Mg, nr *ol, K, wg, col, nr *ol, bg, yg + r0 * ol,      \
                                    g->out_size, po);                                              \
                }                                                                                  \
            }                                                                                      \
    }

DEF_CONV(float, f)
DEF_CONV(double, d)

/*
 * Transposed convolution for T: y [N, M, out...] from x [N, C, in...], w
 * [C, M/g, k...], bias b [M] or NULL. y must be zeroed; col holds
 * Mg * prod(k) columns for p->cr rows of x's innermost axis. The window
 * geometry p->w is that of the forward conv from y to x (w.in = y's dims,
 * w.out = x's dims).
 */
#define DEF_CONVT(T, sfx)                                                                          \
    static void convt_##sfx(const struct conv *p, const T *x, const T *w, const T *b, T *y,        \
                            T *col)                                                                \
    {                                                                                              \
        const struct sg_win *g = &p->w;                                                            \
        int64_t R = p->Mg * g->k_size; /* rows of col */                                           \
        int64_t ol = g->out[g->n - 1], outer = ol ? g->out_size / ol : 0;                          \
        for (int64_t n = 0; n < p->N; n++)                                                         \
            for (int64_t gi = 0; gi < p->group; gi++) {                                            \
                const T *xg = x + (n * p->C + gi * p->Cg) * g->out_size;                           \
                T *yg = y + (n * p->M + gi * p->Mg) * g->in_size;                                  \
                for (int64_t r0 = 0; r0 < outer; r0 += p->cr) {                                    \
                    int64_t nr = outer - r0 < p->cr ? outer - r0 : p->cr;                          \
                    gemm_##sfx(true, R, nr *ol, p->Cg, w + gi * p->Cg * R, R, xg + r0 * ol,        \
                               g->out_size, 0, col, nr * ol);                                      \
                    im2col_##sfx(yg, col, g, p->Mg, true, r0, nr);                                 \
                }                                                                                  \
                if (b)                                                                             \
                    for (int64_t m = 0; m < p->Mg; m++)                                            \
                        for (int64_t i = 0; i < g->in_size; i++)                                   \
                            yg[m * g->in_size + i] += b[gi * p->Mg + m];                           \
            }                                                                                      \
    }

DEF_CONVT(float, f)
DEF_CONVT(double, d)

/* ------------------------------------------------------- shape checks */

/* Fails unless every BLAS dimension fits an int. */
static sg_status check_blas(struct sg_kctx *k, const int64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] > INT_MAX)
            return sg_kfail(k, SG_ETOOBIG, "a GEMM dimension (%lld) exceeds the BLAS int range",
                            (long long)v[i]);
    return SG_OK;
}

/*
 * Common checks of Conv-like ops: X [N, C, in...] and W of equal rank >= 3,
 * kernel_shape (if given) equal to W's spatial dims, groups dividing the
 * channels. transposed: W is [C, M/g, k...]. Fills p (except the output
 * geometry of ConvTranspose).
 */
static sg_status conv_setup(struct sg_kctx *k, const sg_rt_value *X, const sg_rt_value *W,
                            bool transposed, struct conv *p)
{
    memset(p, 0, sizeof *p);
    if (X->rank < 3 || W->rank != X->rank)
        return sg_kfail(k, SG_ESHAPE,
                        "input X %s and weight W %s must have equal rank >= 3 "
                        "(batch, channels, spatial dims)",
                        sg_kshape(k, X), sg_kshape(k, W));
    p->w.n = X->rank - 2;
    p->N = X->dims[0];
    p->C = X->dims[1];
    p->group = sg_kattr_int(k, "group", 1);
    if (p->group < 1)
        return sg_kfail(k, SG_EINVAL, "group %lld must be >= 1", (long long)p->group);
    if (transposed) {
        if (W->dims[0] != p->C || p->C % p->group)
            return sg_kfail(k, SG_ESHAPE,
                            "input X %s has %lld channels but weight W %s has %lld input "
                            "channels (group %lld)",
                            sg_kshape(k, X), (long long)p->C, sg_kshape(k, W),
                            (long long)W->dims[0], (long long)p->group);
        p->Cg = p->C / p->group;
        p->Mg = W->dims[1];
        p->M = p->Mg * p->group;
    } else {
        p->Cg = W->dims[1];
        p->M = W->dims[0];
        if (p->C % p->group || p->Cg != p->C / p->group || p->M % p->group)
            return sg_kfail(k, SG_ESHAPE,
                            "input X %s has %lld channels but weight W %s takes %lld per group "
                            "for %lld groups (and its %lld output channels must divide by the "
                            "groups)",
                            sg_kshape(k, X), (long long)p->C, sg_kshape(k, W), (long long)p->Cg,
                            (long long)p->group, (long long)p->M);
        p->Mg = p->M / p->group;
    }
    const int64_t *ks;
    int64_t nk = sg_kattr_ints(k, "kernel_shape", &ks);
    for (uint32_t d = 0; d < p->w.n; d++) {
        p->w.k[d] = W->dims[d + 2];
        if (nk > 0 && (nk != (int64_t)p->w.n || ks[d] != W->dims[d + 2]))
            return sg_kfail(k, SG_ESHAPE, "kernel_shape %s does not match weight W %s",
                            sg_kdims(k, ks, (uint32_t)nk), sg_kshape(k, W));
    }
    return SG_OK;
}

/* Bias B [M] check. */
static sg_status check_bias(struct sg_kctx *k, const sg_rt_value *B, int64_t M,
                            const sg_rt_value *W)
{
    if (B && (B->rank != 1 || B->dims[0] != M))
        return sg_kfail(k, SG_ESHAPE, "bias B %s must be [%lld] for weight W %s", sg_kshape(k, B),
                        (long long)M, sg_kshape(k, W));
    return SG_OK;
}

/* Scratch for conv_*: im2col columns or depthwise phase planes. */
static sg_status conv_scratch(struct sg_kctx *k, struct conv *p, size_t esz, void **col)
{
    const struct sg_win *g = &p->w;
    int64_t dims[3] = {p->Mg, g->out_size, p->Cg * g->k_size};
    sg_status st = check_blas(k, dims, 3);
    if (st)
        return st;
    /* A chunk of im2col columns, or the phase planes of a depthwise conv. */
    p->cr = chunk_rows(g, p->Cg * g->k_size, esz);
    size_t n = (size_t)(p->Cg * g->k_size * p->cr * g->out[g->n - 1]) + 1;
    if (use_depthwise(p)) {
        struct sg_win v;
        win_2d(g, &v);
        size_t nd = (size_t)depthwise_scratch(&v) + 1;
        n = nd > n ? nd : n;
    }
    *col = sg_kscratch(k, n * esz);
    if (!*col)
        return sg_kfail(k, SG_ENOMEM, "out of memory for a %lld x %lld im2col buffer",
                        (long long)(p->Cg * g->k_size), (long long)(p->cr * g->out[g->n - 1]));
    return SG_OK;
}

/* Output dims [N, M, out...]. */
static void out_dims(const struct conv *p, const int64_t *sp, int64_t *od)
{
    od[0] = p->N;
    od[1] = p->M;
    for (uint32_t d = 0; d < p->w.n; d++)
        od[d + 2] = sp[d];
}

/* ------------------------------------------------------------- Conv */

/* Y [N, M, out...] of a convolution whose kernel holds no element (a zero
 * spatial dim or no input channel per group): every output is its bias, or
 * 0, through the fused clamp if any. */
static void conv_empty(const sg_rt_value *B, sg_rt_value *Y, int64_t M, const struct sg_post *po)
{
    int64_t plane = Y->dims[0] && M ? Y->numel / (Y->dims[0] * M) : 0;
    for (int64_t i = 0; i < Y->numel; i++) {
        double v = B ? sg_rt_get_f64(B, (i / plane) % M) : 0;
        if (po && po->on)
            v = v < po->lo ? po->lo : v > po->hi ? po->hi : v;
        sg_rt_set_f64(Y, i, v);
    }
}

static sg_status run_conv(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *W = sg_kin(k, 1), *B = sg_kin(k, 2);
    struct conv p;
    sg_status st;
    if (W->dtype != X->dtype || (B && B->dtype != X->dtype))
        return sg_kfail(k, SG_ETYPE, "inputs differ in type: X %s, W %s%s%s", sg_kshape(k, X),
                        sg_kshape(k, W), B ? ", B " : "", B ? sg_kshape(k, B) : "");
    if ((st = conv_setup(k, X, W, false, &p)) || (st = check_bias(k, B, p.M, W)) ||
        (st = sg_win_attrs(k, &p.w, X, true)) || (st = sg_win_forward(k, &p.w, false)))
        return st;
    int64_t od[SG_MAX_RANK];
    out_dims(&p, p.w.out, od);
    sg_rt_value *Y; /* conv_* write every element */
    if ((st = sg_kout_uninit(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    if (!Y->numel)
        return SG_OK;
    struct sg_post po = {false, -INFINITY, INFINITY};
    po.on = sg_kpost(k, &po.lo, &po.hi);
    if (p.Cg * p.w.k_size == 0) {
        conv_empty(B, Y, p.M, &po);
        return SG_OK;
    }
    void *col;
    if ((st = conv_scratch(k, &p, X->dtype == SG_DTYPE_DOUBLE ? sizeof(double) : sizeof(float),
                           &col)))
        return st;
    if (X->dtype == SG_DTYPE_DOUBLE) {
        conv_d(&p, X->data, W->data, B ? B->data : NULL, Y->data, col, &po);
        return SG_OK;
    }
    const float *x = sg_kfloats(k, X), *w = sg_kfloats(k, W), *b = B ? sg_kfloats(k, B) : NULL;
    float *y = is_half(X->dtype) ? sg_kscratch(k, (size_t)Y->numel * sizeof(float)) : Y->data;
    if (!x || !w || (B && !b) || !y)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (is_half(X->dtype) && po.on) {
        /* Clamped after rounding, as Clip would see the values. */
        struct sg_post none = {false, -INFINITY, INFINITY};
        conv_f(&p, x, w, b, y, col, &none);
        store_floats(Y, y);
        for (int64_t i = 0; i < Y->numel; i++) {
            double v = sg_rt_get_f64(Y, i);
            v = v < po.lo ? po.lo : v;
            sg_rt_set_f64(Y, i, v > po.hi ? po.hi : v);
        }
        return SG_OK;
    }
    if (p.Cg == 1 && p.Mg == 1 && p.w.n == 2 && p.w.k_size > 1 && p.w.out_size <= DW_CL_MAX) {
        float *xt = sg_kscratch(k, (size_t)(p.C * p.w.in_size) * sizeof(float));
        float *yt = sg_kscratch(k, (size_t)(p.C * p.w.out_size) * sizeof(float));
        float *wt = sg_kscratch(k, (size_t)(p.C * p.w.k_size) * sizeof(float));
        if (!xt || !yt || !wt)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t n = 0; n < p.N; n++)
            depthwise_cl_f(x + n * p.C * p.w.in_size, w, b, y + n * p.C * p.w.out_size, p.C, &p.w,
                           xt, yt, wt);
        if (po.on)
            clamp_rows_f(y, 1, Y->numel, 0, po.lo, po.hi);
        store_floats(Y, y);
        return SG_OK;
    }
    conv_f(&p, x, w, b, y, col, &po);
    store_floats(Y, y);
    return SG_OK;
}

/* ---------------------------------------------------- ConvTranspose */

static sg_status run_conv_transpose(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *W = sg_kin(k, 1), *B = sg_kin(k, 2);
    struct conv p;
    sg_status st;
    if (W->dtype != X->dtype || (B && B->dtype != X->dtype))
        return sg_kfail(k, SG_ETYPE, "inputs differ in type: X %s, W %s%s%s", sg_kshape(k, X),
                        sg_kshape(k, W), B ? ", B " : "", B ? sg_kshape(k, B) : "");
    if ((st = conv_setup(k, X, W, true, &p)) || (st = check_bias(k, B, p.M, W)) ||
        (st = sg_win_attrs(k, &p.w, X, true)))
        return st;
    /* auto_pad of ConvTranspose pads the output (sg_kwindow does not apply). */
    const char *ap = sg_kattr_string(k, "auto_pad", "NOTSET");
    int auto_pad = strcmp(ap, "SAME_UPPER") == 0   ? 1
                   : strcmp(ap, "SAME_LOWER") == 0 ? 2
                   : strcmp(ap, "VALID") == 0      ? 3
                                                   : 0;
    if (!auto_pad && *ap && strcmp(ap, "NOTSET") != 0)
        return sg_kfail(k, SG_EINVAL, "unknown auto_pad '%s'", ap);
    struct sg_win *g = &p.w;
    uint32_t n = g->n;
    int64_t opad[SG_MAX_RANK], oshape[SG_MAX_RANK];
    if ((st = sg_win_ints(k, "output_padding", n, 0, 0, opad)))
        return st;
    const int64_t *os;
    int64_t nos = sg_kattr_ints(k, "output_shape", &os);
    if (nos > 0 && nos != (int64_t)n && nos != (int64_t)n + 2)
        return sg_kfail(k, SG_EINVAL, "output_shape %s does not have %u spatial dims",
                        sg_kdims(k, os, (uint32_t)nos), n);
    /* g->in holds X's spatial dims for now; the geometry is then turned
     * around so that g describes the forward conv from Y to X. */
    for (uint32_t d = 0; d < n; d++) {
        /* ek = (k - 1) * dil + 1; full = stride * (in - 1) + output_padding + ek */
        int64_t in = g->in[d], s = g->stride[d], ek, full, out, total;
        bool ok = sg_dim_mul(g->k[d] - 1, g->dil[d], &ek) && sg_dim_add(ek, 1, &ek) &&
                  sg_dim_mul(s, in - 1, &full) && sg_dim_add(full, opad[d], &full) &&
                  sg_dim_add(full, ek, &full);
        if (ok && (nos > 0 || auto_pad == 1 || auto_pad == 2)) {
            if (nos > 0)
                out = os[nos - n + d];
            else
                ok = sg_dim_mul(in, s, &out);
            ok = ok && sg_dim_sub(full, out, &total);
            if (ok) {
                int64_t half = sg_win_floordiv(total, 2);
                g->pad0[d] = auto_pad == 1 ? half : total - half;
                g->pad1[d] = total - g->pad0[d];
            }
        } else if (ok) {
            if (auto_pad == 3)
                g->pad0[d] = g->pad1[d] = 0;
            ok = sg_dim_sub(full, g->pad0[d], &out) && sg_dim_sub(out, g->pad1[d], &out);
        }
        if (!ok)
            return sg_kfail(k, SG_ERANGE,
                            "the output size on spatial axis %u overflows (input X %s, kernel "
                            "%lld, stride %lld, dilation %lld)",
                            d, sg_kshape(k, X), (long long)g->k[d], (long long)s,
                            (long long)g->dil[d]);
        if (out < 0)
            return sg_kfail(k, SG_ESHAPE, "output size %lld on spatial axis %u for input X %s",
                            (long long)out, d, sg_kshape(k, X));
        oshape[d] = out;
        g->out[d] = in;
        g->in[d] = out;
    }
    if ((st = sg_win_sizes_k(k, g)))
        return st;
    int64_t od[SG_MAX_RANK];
    out_dims(&p, oshape, od);
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, X->rank, &Y)))
        return st;
    if (!Y->numel)
        return SG_OK;
    if (p.Cg * p.Mg * g->k_size == 0) { /* nothing to scatter: the bias */
        conv_empty(B, Y, p.M, NULL);
        return SG_OK;
    }
    int64_t dims[3] = {p.Mg * g->k_size, g->out_size, p.Cg};
    if ((st = check_blas(k, dims, 3)))
        return st;
    size_t esz = X->dtype == SG_DTYPE_DOUBLE ? sizeof(double) : sizeof(float);
    p.cr = chunk_rows(g, p.Mg * g->k_size, esz);
    void *col = sg_kscratch(k, (size_t)(p.Mg * g->k_size * p.cr * g->out[n - 1] + 1) * esz);
    if (!col)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (X->dtype == SG_DTYPE_DOUBLE) {
        convt_d(&p, X->data, W->data, B ? B->data : NULL, Y->data, col);
        return SG_OK;
    }
    const float *x = sg_kfloats(k, X), *w = sg_kfloats(k, W), *b = B ? sg_kfloats(k, B) : NULL;
    float *y = Y->data;
    if (is_half(X->dtype) && (y = sg_kscratch(k, (size_t)Y->numel * sizeof(float))))
        memset(y, 0, (size_t)Y->numel * sizeof(float));
    if (!x || !w || (B && !b) || !y)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    convt_f(&p, x, w, b, y, col);
    store_floats(Y, y);
    return SG_OK;
}

/* --------------------------------------------------- integer convolutions */

/* Zero point input i: a scalar (per tensor) or, when per_channel > 0, a
 * 1-D tensor of per_channel entries; *n receives its element count (0 when
 * omitted). */
static sg_status zero_point(struct sg_kctx *k, uint32_t i, const char *what, const sg_rt_value *of,
                            int64_t per_channel, int64_t *n)
{
    const sg_rt_value *Z = sg_kin(k, i);
    *n = 0;
    if (!Z)
        return SG_OK;
    if (Z->dtype != of->dtype)
        return sg_kfail(k, SG_ETYPE, "%s %s must have the type of %s", what, sg_kshape(k, Z),
                        sg_kshape(k, of));
    if (Z->numel != 1 && !(per_channel > 0 && Z->rank == 1 && Z->numel == per_channel))
        return sg_kfail(k, SG_ESHAPE, "%s %s must be a scalar%s for %s", what, sg_kshape(k, Z),
                        per_channel > 0 ? " or have one entry per output channel" : "",
                        sg_kshape(k, of));
    *n = Z->numel;
    return SG_OK;
}

/* x - zero point as doubles in scratch (zp of one entry). */
static double *shifted_input(struct sg_kctx *k, const sg_rt_value *X, const sg_rt_value *Z)
{
    double *v = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *v);
    if (!v)
        return NULL;
    double z = Z ? sg_rt_get_f64(Z, 0) : 0;
    if (X->dtype == SG_DTYPE_UINT8) {
        const uint8_t *x = X->data;
        for (int64_t i = 0; i < X->numel; i++)
            v[i] = x[i] - z;
    } else {
        const int8_t *x = X->data;
        for (int64_t i = 0; i < X->numel; i++)
            v[i] = x[i] - z;
    }
    return v;
}

/* w - zero point (per tensor or per output channel, of M blocks). */
static double *shifted_weight(struct sg_kctx *k, const sg_rt_value *W, const sg_rt_value *Z,
                              int64_t M)
{
    double *v = shifted_input(k, W, NULL);
    if (!v || !Z)
        return v;
    int64_t per = M ? W->numel / M : 0;
    for (int64_t i = 0; i < W->numel; i++)
        v[i] -= sg_rt_get_f64(Z, Z->numel == 1 ? 0 : i / per);
    return v;
}

/*
 * The integer accumulators of ConvInteger / QLinearConv as doubles:
 * inputs X, W and their zero points at xz, wz. *Yd gets [N, M, out...]
 * elements and od the output dims.
 */
static sg_status int_conv(struct sg_kctx *k, uint32_t xi, uint32_t xz, uint32_t wi, uint32_t wz,
                          struct conv *p, int64_t *od, double **Yd)
{
    const sg_rt_value *X = sg_kin(k, xi), *W = sg_kin(k, wi);
    int64_t nz;
    sg_status st;
    if ((X->dtype != SG_DTYPE_UINT8 && X->dtype != SG_DTYPE_INT8) ||
        (W->dtype != SG_DTYPE_UINT8 && W->dtype != SG_DTYPE_INT8))
        return sg_kfail(k, SG_ETYPE, "x %s and w %s must be uint8 or int8", sg_kshape(k, X),
                        sg_kshape(k, W));
    if ((st = conv_setup(k, X, W, false, p)) || (st = sg_win_attrs(k, &p->w, X, true)) ||
        (st = sg_win_forward(k, &p->w, false)) ||
        (st = zero_point(k, xz, "x_zero_point", X, 0, &nz)) ||
        (st = zero_point(k, wz, "w_zero_point", W, p->M, &nz)))
        return st;
    out_dims(p, p->w.out, od);
    int64_t ny;
    if (!sg_dims_extent(od, p->w.n + 2, sizeof(double), &ny))
        return sg_kfail(k, SG_ERANGE, "output %s is too large", sg_kdims(k, od, p->w.n + 2));
    double *x = shifted_input(k, X, sg_kin(k, xz)), *w = shifted_weight(k, W, sg_kin(k, wz), p->M);
    *Yd = sg_kscratch(k, (size_t)(ny + 1) * sizeof(double));
    if (!x || !w || !*Yd)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (!ny)
        return SG_OK;
    if (p->Cg * p->w.k_size == 0) { /* an empty kernel sums nothing */
        memset(*Yd, 0, (size_t)ny * sizeof(double));
        return SG_OK;
    }
    void *col;
    if ((st = conv_scratch(k, p, sizeof(double), &col)))
        return st;
    static const struct sg_post none = {false, -INFINITY, INFINITY};
    conv_d(p, x, w, NULL, *Yd, col, &none);
    return SG_OK;
}

static sg_status run_conv_integer(struct sg_kctx *k)
{
    struct conv p;
    int64_t od[SG_MAX_RANK];
    double *acc;
    sg_rt_value *Y;
    sg_status st = int_conv(k, 0, 2, 1, 3, &p, od, &acc);
    if (st || (st = sg_kout(k, 0, SG_DTYPE_INT32, od, p.w.n + 2, &Y)))
        return st;
    int32_t *y = Y->data;
    for (int64_t i = 0; i < Y->numel; i++)
        y[i] = (int32_t)acc[i];
    return SG_OK;
}

/* A scale input: positive float32 scalar, or 1-D of `per` entries when
 * per > 0. */
static sg_status scale_input(struct sg_kctx *k, uint32_t i, const char *what, int64_t per)
{
    const sg_rt_value *S = sg_kin(k, i);
    if (!S || S->dtype != SG_DTYPE_FLOAT)
        return sg_kfail(k, SG_ETYPE, "%s must be a float32 tensor, got %s", what,
                        S ? sg_kshape(k, S) : "nothing");
    if (S->numel != 1 && !(per > 0 && S->rank == 1 && S->numel == per))
        return sg_kfail(k, SG_ESHAPE, "%s %s must be a scalar%s", what, sg_kshape(k, S),
                        per > 0 ? " or have one entry per output channel" : "");
    return SG_OK;
}

/*
 * QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
 * y_zero_point, B. y = saturate(round_half_even((acc + B) * x_scale *
 * w_scale / y_scale) + y_zero_point), the scale product in float32 like
 * ONNX Runtime.
 */
static sg_status run_qlinear_conv(struct sg_kctx *k)
{
    struct conv p;
    int64_t od[SG_MAX_RANK], nz;
    double *acc;
    sg_rt_value *Y;
    const sg_rt_value *X = sg_kin(k, 0), *YZ = sg_kin(k, 7), *B = sg_kin(k, 8);
    sg_status st = int_conv(k, 0, 2, 3, 5, &p, od, &acc);
    if (st || (st = scale_input(k, 1, "x_scale", 0)) || (st = scale_input(k, 4, "w_scale", p.M)) ||
        (st = scale_input(k, 6, "y_scale", 0)))
        return st;
    if (YZ && (st = zero_point(k, 7, "y_zero_point", YZ, 0, &nz)))
        return st;
    if (B && (B->dtype != SG_DTYPE_INT32 || B->rank != 1 || B->dims[0] != p.M))
        return sg_kfail(k, SG_ESHAPE, "bias B %s must be int32[%lld]", sg_kshape(k, B),
                        (long long)p.M);
    int32_t ydt = YZ ? YZ->dtype : X->dtype;
    if ((st = sg_kout(k, 0, ydt, od, p.w.n + 2, &Y)))
        return st;
    const float xs = *(const float *)sg_kin(k, 1)->data, ys = *(const float *)sg_kin(k, 6)->data;
    const sg_rt_value *WS = sg_kin(k, 4);
    const float *ws = WS->data;
    double yz = YZ ? sg_rt_get_f64(YZ, 0) : 0;
    double lo = ydt == SG_DTYPE_UINT8 ? 0 : -128, hi = ydt == SG_DTYPE_UINT8 ? 255 : 127;
    int64_t plane = p.w.out_size;
    for (int64_t i = 0; i < Y->numel; i++) {
        int64_t m = (i / plane) % p.M;
        float scale = xs * ws[WS->numel == 1 ? 0 : m] / ys;
        double a = acc[i] + (B ? ((const int32_t *)B->data)[m] : 0);
        double v = nearbyint((double)((float)a * scale)) + yz;
        v = v < lo ? lo : v > hi ? hi : v;
        if (ydt == SG_DTYPE_UINT8)
            ((uint8_t *)Y->data)[i] = (uint8_t)v;
        else
            ((int8_t *)Y->data)[i] = (int8_t)v;
    }
    return SG_OK;
}

/* ------------------------------------------------------------ Col2Im */

/* Col2Im (opset 18): input [N, C * prod(block_shape), L] to [N, C,
 * image_shape...], adding overlapping blocks. */
static sg_status run_col2im(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *img, *blk;
    int64_t ni, nb;
    sg_status st;
    if ((st = sg_kin_ints(k, 1, &img, &ni)) || (st = sg_kin_ints(k, 2, &blk, &nb)))
        return st;
    if (X->rank != 3 || ni != nb || ni < 1 || ni + 2 > SG_MAX_RANK)
        return sg_kfail(k, SG_ESHAPE,
                        "input %s must be [N, C*prod(block_shape), L] and image_shape %s and "
                        "block_shape %s of one length",
                        sg_kshape(k, X), sg_kdims(k, img, (uint32_t)ni),
                        sg_kdims(k, blk, (uint32_t)nb));
    struct sg_win w;
    memset(&w, 0, sizeof w);
    w.n = (uint32_t)ni;
    int64_t kprod = 1;
    for (uint32_t d = 0; d < w.n; d++) {
        if (img[d] < 0 || blk[d] < 1)
            return sg_kfail(k, SG_EINVAL, "bad image_shape %s or block_shape %s",
                            sg_kdims(k, img, w.n), sg_kdims(k, blk, w.n));
        w.k[d] = blk[d];
        if (!sg_dim_mul(kprod, blk[d], &kprod))
            return sg_kfail(k, SG_ERANGE, "block_shape %s has too many elements",
                            sg_kdims(k, blk, w.n));
    }
    int64_t od[SG_MAX_RANK];
    od[0] = X->dims[0];
    od[1] = X->dims[1] / kprod;
    for (uint32_t d = 0; d < w.n; d++)
        od[d + 2] = img[d];
    /* sg_win_attrs reads the spatial dims from a tensor: give it the image. */
    sg_rt_value shape;
    memset(&shape, 0, sizeof shape);
    shape.rank = w.n + 2;
    memcpy(shape.dims, od, shape.rank * sizeof od[0]);
    if ((st = sg_win_attrs(k, &w, &shape, true)) || (st = sg_win_forward(k, &w, false)))
        return st;
    if (X->dims[1] % kprod || X->dims[2] != w.out_size)
        return sg_kfail(
            k, SG_ESHAPE, "input %s does not hold blocks of %s for image %s (want %lld blocks)",
            sg_kshape(k, X), sg_kdims(k, blk, w.n), sg_kdims(k, img, w.n), (long long)w.out_size);
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, w.n + 2, &Y)))
        return st;
    int64_t C = od[1], per_in = X->dims[1] * X->dims[2], per_out = C * w.in_size;
    if (!Y->numel || !per_in)
        return SG_OK;
    if (X->dtype == SG_DTYPE_DOUBLE) {
        for (int64_t n = 0; n < od[0]; n++)
            im2col_d((double *)Y->data + n * per_out, (double *)X->data + n * per_in, &w, C, true,
                     0, w.out_size / w.out[w.n - 1]);
        return SG_OK;
    }
    const float *x = sg_kfloats(k, X);
    float *y = Y->data;
    if (is_half(X->dtype) && (y = sg_kscratch(k, (size_t)Y->numel * sizeof(float))))
        memset(y, 0, (size_t)Y->numel * sizeof(float));
    if (!x || !y)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t n = 0; n < od[0]; n++)
        im2col_f(y + n * per_out, (float *)x + n * per_in, &w, C, true, 0,
                 w.out_size / w.out[w.n - 1]);
    store_floats(Y, y);
    return SG_OK;
}

#define FL SG_KT_FLOATS
#define Q8 (SG_KT(SG_DTYPE_UINT8) | SG_KT(SG_DTYPE_INT8))
static const struct sg_kernel kernels[] = {
    {"", "Conv", 1, 0, FL, SG_KF_POST_CLAMP, run_conv, "rro"},
    {"", "Conv", 11, 0, FL, SG_KF_POST_CLAMP, run_conv, "rro"},
    {"", "ConvTranspose", 1, 0, FL, 0, run_conv_transpose, "rro"},
    {"", "ConvTranspose", 11, 0, FL, 0, run_conv_transpose, "rro"},
    {"", "ConvInteger", 10, 0, Q8, 0, run_conv_integer, "rroo"},
    {"", "QLinearConv", 10, 0, Q8, 0, run_qlinear_conv, "rrrrrrrro"},
    {"", "Col2Im", 18, 0, FL, 0, run_col2im, "rrr"},
};
SG_KERNEL_FAMILY(conv, kernels);
