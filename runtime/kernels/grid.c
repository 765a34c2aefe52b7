/*
 * grid.c - sampling an input at the points of a grid: GridSample (opset 16:
 * 4-D with the modes bilinear/nearest/bicubic; opset 20: any number of
 * spatial dims with the modes linear/nearest/cubic; 22: bfloat16) and
 * AffineGrid (opset 20), which makes such a grid from affine matrices.
 *
 * GridSample follows the ONNX reference (onnx/reference/ops/
 * op_grid_sample.py of v1.22.0): the grid's last dim holds normalised
 * coordinates in the reverse order of X's spatial dims (x for the last
 * one), denormalised to pixel coordinates (align_corners: -1 and 1 are
 * the centres of the corner pixels, otherwise their outer edges).
 * "nearest" rounds half to even. A linear sample weighs the 2^k pixels
 * around the point, a cubic one the 4^k pixels with Keys' cubic
 * convolution (A = -0.75). Out-of-range pixels read zero, the nearest
 * border pixel or the reflection, per dim.
 *
 * Where the sample point itself lies outside the image: for nearest and
 * linear modes the point is first clamped to the image (border) or
 * reflected into it (reflection), as the reference and ONNX Runtime do.
 * For cubic mode with padding_mode=border the point is not moved: only
 * the 16 pixels it reads are clamped, which is what ONNX Runtime 1.30 and
 * PyTorch compute (checked on the generated corpus, tests/modern/
 * cases_newops.py). The Python reference of v1.22.0 clamps the point too
 * and then gives other values for points past the border; we follow ONNX
 * Runtime there (issue 16, part 4). Reflection in cubic mode reflects the
 * point as the reference does.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

#define GS_MAXD (SG_MAX_RANK - 2)

enum gs_mode { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION };

struct gs {
    enum gs_mode mode;
    enum gs_pad pad;
    bool align;
    uint32_t nd;                     /* spatial dims */
    int64_t dims[GS_MAXD];           /* X's spatial dims */
    int64_t strides[GS_MAXD];        /* in elements, within one plane */
    double lo[GS_MAXD], hi[GS_MAXD]; /* the borders: -0.5 / d - 0.5, or 0 / d - 1 */
};

static double gs_denormalize(double v, int64_t len, bool align)
{
    return align ? (v + 1) / 2.0 * (double)(len - 1) : ((v + 1) * (double)len - 1) / 2.0;
}

/* Reflect x by the nearer border until it lies within [lo, hi]. */
static double gs_reflect(double x, double lo, double hi)
{
    double range = hi - lo;
    if (range <= 0)
        return lo;
    /* In doubles throughout: a grid value may be far past any int64. */
    if (x < lo) {
        double dx = lo - x, r = fmod(dx, range);
        return fmod(floor(dx / range), 2) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi, r = fmod(dx, range);
        return fmod(floor(dx / range), 2) == 0 ? hi - r : lo + r;
    }
    return x;
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The offset of the pixel at integer position idx in one plane under the
 * padding mode, or -1 for a zero (zeros padding, outside). */
static int64_t gs_offset(const struct gs *g, const int64_t *idx)
{
    int64_t off = 0;
    for (uint32_t d = 0; d < g->nd; d++) {
        int64_t i = idx[d], n = g->dims[d];
        if (g->pad == GS_ZEROS) {
            if (i < 0 || i >= n)
                return -1;
        } else if (g->pad == GS_BORDER) {
            i = clampi(i, 0, n - 1);
        } else if (i < 0 || i >= n) {
            i = clampi(sg_dim_from_double(gs_reflect((double)i, g->lo[d], g->hi[d])), 0, n - 1);
        }
        off += i * g->strides[d];
    }
    return off;
}

static void cubic_coeffs(double x, double *c)
{
    const double A = -0.75;
    x = fabs(x);
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

static double gs_read(const float *pf, const double *pd, int64_t off)
{
    return off < 0 ? 0 : pd ? pd[off] : pf[off];
}

/* One output value at pixel coordinates x[nd] (spatial-dim order). */
static double gs_sample(const struct gs *g, const float *pf, const double *pd, double *x)
{
    for (uint32_t d = 0; d < g->nd; d++) {
        if (g->mode == GS_NEAREST)
            x[d] = nearbyint(x[d]);
        if (x[d] >= g->lo[d] && x[d] <= g->hi[d])
            continue;
        if (g->pad == GS_BORDER && g->mode != GS_CUBIC)
            x[d] = fmin(fmax(x[d], 0), (double)(g->dims[d] - 1));
        else if (g->pad == GS_REFLECTION)
            x[d] = gs_reflect(x[d], g->lo[d], g->hi[d]);
    }
    int64_t idx[GS_MAXD];
    if (g->mode == GS_NEAREST) {
        for (uint32_t d = 0; d < g->nd; d++)
            idx[d] = sg_dim_from_double(x[d]);
        return gs_read(pf, pd, gs_offset(g, idx));
    }
    /* Per dim: the first pixel read and its weights (2 linear, 4 cubic). */
    int taps = g->mode == GS_LINEAR ? 2 : 4;
    int64_t first[GS_MAXD];
    double w[GS_MAXD][4];
    for (uint32_t d = 0; d < g->nd; d++) {
        /* Past 4 pixels outside, every tap reads the same padding as at
         * 4 pixels: bound the point so its index stays finite. */
        double xb = fmin(fmax(x[d], -4.0), (double)g->dims[d] + 4.0), f = floor(xb);
        int64_t x0 = (int64_t)f;
        double t = xb - f;
        if (g->mode == GS_LINEAR) {
            first[d] = x0;
            w[d][0] = 1 - t;
            w[d][1] = t;
        } else {
            first[d] = x0 - 1;
            cubic_coeffs(t, w[d]);
        }
    }
    /* Sum over every combination of taps (taps^nd terms). */
    int tap[GS_MAXD] = {0};
    double sum = 0;
    for (;;) {
        double wt = 1;
        for (uint32_t d = 0; d < g->nd; d++) {
            idx[d] = first[d] + tap[d];
            wt *= w[d][tap[d]];
        }
        if (wt != 0)
            sum += wt * gs_read(pf, pd, gs_offset(g, idx));
        uint32_t d = g->nd;
        while (d > 0 && ++tap[d - 1] == taps)
            tap[--d] = 0;
        if (d == 0)
            break;
    }
    return sum;
}

static sg_status gs_modes(struct sg_kctx *k, struct gs *g)
{
    bool v20 = k->opset >= 20;
    const char *mode = sg_kattr_string(k, "mode", v20 ? "linear" : "bilinear");
    const char *pad = sg_kattr_string(k, "padding_mode", "zeros");
    if (strcmp(mode, v20 ? "linear" : "bilinear") == 0)
        g->mode = GS_LINEAR;
    else if (strcmp(mode, "nearest") == 0)
        g->mode = GS_NEAREST;
    else if (strcmp(mode, v20 ? "cubic" : "bicubic") == 0)
        g->mode = GS_CUBIC;
    else
        return sg_kfail(k, SG_EINVAL, "mode '%s' is not one of opset %lld's modes (%s)", mode,
                        (long long)k->opset,
                        v20 ? "linear, nearest, cubic" : "bilinear, nearest, bicubic");
    if (strcmp(pad, "zeros") == 0)
        g->pad = GS_ZEROS;
    else if (strcmp(pad, "border") == 0)
        g->pad = GS_BORDER;
    else if (strcmp(pad, "reflection") == 0)
        g->pad = GS_REFLECTION;
    else
        return sg_kfail(k, SG_EINVAL, "unknown padding_mode '%s' (zeros, border, reflection)", pad);
    g->align = sg_kattr_int(k, "align_corners", 0) != 0;
    return SG_OK;
}

static sg_status run_grid_sample(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *G = sg_kin(k, 1);
    uint32_t r = X->rank;
    if (r < 3 || (k->opset < 20 && r != 4) || G->rank != r || G->dims[0] != X->dims[0] ||
        G->dims[r - 1] != (int64_t)r - 2 || !sg_dtype_is_float(G->dtype))
        return sg_kfail(k, SG_ESHAPE,
                        "input X %s must be [N, C, D1, ..., Dk] (k = 2 before opset 20) and grid "
                        "%s a float [N, O1, ..., Ok, k]",
                        sg_kshape(k, X), sg_kshape(k, G));
    struct gs g;
    memset(&g, 0, sizeof g);
    sg_status st = gs_modes(k, &g);
    if (st)
        return st;
    g.nd = r - 2;
    int64_t plane = 1;
    for (uint32_t d = g.nd; d-- > 0;) {
        g.dims[d] = X->dims[d + 2];
        g.strides[d] = plane;
        plane *= g.dims[d];
        g.lo[d] = g.align ? 0 : -0.5;
        g.hi[d] = g.align ? (double)g.dims[d] - 1 : (double)g.dims[d] - 0.5;
    }
    int64_t N = X->dims[0], C = X->dims[1], od[SG_MAX_RANK], npts = 1;
    od[0] = N;
    od[1] = C;
    for (uint32_t d = 0; d < g.nd; d++) {
        od[d + 2] = G->dims[d + 1];
        npts *= G->dims[d + 1];
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, od, r, &Y)) || !Y->numel)
        return st;
    if (plane == 0)
        return sg_kfail(k, SG_ESHAPE, "input X %s has no pixels to sample", sg_kshape(k, X));
    const double *xd = X->dtype == SG_DTYPE_DOUBLE ? X->data : NULL;
    const float *xf = xd ? NULL : sg_kfloats(k, X);
    const double *gd = G->dtype == SG_DTYPE_DOUBLE ? G->data : NULL;
    const float *gf = gd ? NULL : sg_kfloats(k, G);
    if ((!xd && !xf) || (!gd && !gf))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float *pf = xf ? xf + (n * C + c) * plane : NULL;
            const double *pd = xd ? xd + (n * C + c) * plane : NULL;
            for (int64_t i = 0; i < npts; i++) {
                int64_t gi = (n * npts + i) * g.nd;
                double x[GS_MAXD];
                /* grid component j addresses spatial dim nd - 1 - j */
                for (uint32_t j = 0; j < g.nd; j++) {
                    uint32_t d = g.nd - 1 - j;
                    x[d] = gs_denormalize(gd ? gd[gi + j] : gf[gi + j], g.dims[d], g.align);
                }
                sg_rt_set_f64(Y, (n * C + c) * npts + i, gs_sample(&g, pf, pd, x));
            }
        }
    return SG_OK;
}

/* --------------------------------------------------------- AffineGrid */

/* Normalised coordinate of pixel i of n: linspace(-1, 1, n) with
 * align_corners, else the pixel centres (2i + 1) / n - 1. A dim of size 1
 * with align_corners is -1, as the ONNX reference's arange gives; ONNX
 * Runtime 1.30 gives 1 and PyTorch 0 (tests/modern/cases_newops.py checks
 * that case against the formula). */
static double ag_coord(int64_t i, int64_t n, bool align)
{
    if (align)
        return n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : -1.0;
    return (2.0 * (double)i + 1.0) / (double)n - 1.0;
}

static sg_status run_affine_grid(struct sg_kctx *k)
{
    const sg_rt_value *T = sg_kin(k, 0);
    const int64_t *size;
    int64_t ns;
    sg_status st = sg_kin_ints(k, 1, &size, &ns);
    if (st)
        return st;
    if (ns != 4 && ns != 5)
        return sg_kfail(k, SG_ESHAPE,
                        "size has %lld values; it must be [N, C, H, W] or "
                        "[N, C, D, H, W]",
                        (long long)ns);
    uint32_t nd = (uint32_t)ns - 2;
    if (T->rank != 3 || T->dims[0] != size[0] || T->dims[1] != (int64_t)nd ||
        T->dims[2] != (int64_t)nd + 1)
        return sg_kfail(k, SG_ESHAPE, "theta %s must be [N, %u, %u] for size %s", sg_kshape(k, T),
                        nd, nd + 1, sg_kdims(k, size, (uint32_t)ns));
    int64_t od[5];
    od[0] = size[0];
    int64_t npts = 1;
    for (uint32_t d = 0; d < nd; d++) {
        if (size[d + 2] < 0)
            return sg_kfail(k, SG_ESHAPE, "size %s has a negative dim",
                            sg_kdims(k, size, (uint32_t)ns));
        od[d + 1] = size[d + 2];
        if (!sg_dim_mul(npts, size[d + 2], &npts))
            return sg_kfail(k, SG_ERANGE, "size %s is too large", sg_kdims(k, size, (uint32_t)ns));
    }
    od[nd + 1] = nd;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, T->dtype, od, nd + 2, &Y)) || !Y->numel)
        return st;
    bool align = sg_kattr_int(k, "align_corners", 0) != 0;
    int64_t per = (int64_t)nd * (nd + 1);
    for (int64_t n = 0; n < size[0]; n++)
        for (int64_t p = 0; p < npts; p++) {
            /* homogeneous base point (x, y[, z], 1): x along the last dim */
            double base[4];
            int64_t rem = p;
            for (uint32_t d = nd; d-- > 0;) {
                int64_t len = od[d + 1];
                base[nd - 1 - d] = ag_coord(rem % len, len, align);
                rem /= len;
            }
            base[nd] = 1;
            for (uint32_t i = 0; i < nd; i++) {
                double v = 0;
                for (uint32_t j = 0; j <= nd; j++)
                    v += sg_rt_get_f64(T, n * per + i * (nd + 1) + j) * base[j];
                sg_rt_set_f64(Y, (n * npts + p) * nd + i, v);
            }
        }
    return SG_OK;
}

#define FL SG_KT_FLOATS
/* One entry per line, as in the other families. */
/* clang-format off */
static const struct sg_kernel kernels[] = {
    {"", "AffineGrid", 20, 0, FL, 0, run_affine_grid, "rr"},
    {"", "GridSample", 16, 0, FL, 0, run_grid_sample, "rr"},
    {"", "GridSample", 20, 0, FL, 0, run_grid_sample, "rr"},
    {"", "GridSample", 22, 0, FL, 0, run_grid_sample, "rr"},
};
/* clang-format on */
SG_KERNEL_FAMILY(grid, kernels);
