/*
 * space.c - ops that sample their input at computed places: GridSample
 * (opset 16, 4-D) and Dropout.
 *
 * GridSample follows ONNX Runtime and the ONNX reference: grid values in
 * [-1, 1] are denormalised to pixel coordinates (align_corners chooses
 * pixel centres or corners), "nearest" rounds half to even, "bicubic" uses
 * the cubic convolution with A = -0.75, and out-of-range samples read
 * zeros, the clamped border, or the reflection.
 *
 * Dropout in inference mode is the identity with a mask of ones. In
 * training mode (opset 12 on, training_mode true and a nonzero ratio) the
 * mask keeps element i when u_i >= ratio, u_i being the i-th draw of
 * numpy's legacy generator (MT19937 seeded like np.random.seed(seed),
 * doubles like np.random.uniform), and scales kept elements by
 * 1 / (1 - ratio): the same numbers the ONNX test generator produces. A
 * node without a seed attribute seeds from a hash of its name, so two runs
 * agree. Before opset 12 there is no training input and Dropout always
 * runs in inference mode.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

/* --------------------------------------------------------- GridSample */

enum gs_mode { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION };

struct gs {
    enum gs_mode mode;
    enum gs_pad pad;
    bool align;
    int64_t H, W;
    double border[4]; /* x_min, y_min, x_max, y_max */
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

/* The pixel at row r, column c of one plane under the padding mode. */
static double gs_pixel(const struct gs *g, const float *pf, const double *pd, int64_t r, int64_t c)
{
    if (g->pad == GS_ZEROS) {
        if (c < 0 || c >= g->W || r < 0 || r >= g->H)
            return 0;
    } else if (g->pad == GS_BORDER) {
        c = clampi(c, 0, g->W - 1);
        r = clampi(r, 0, g->H - 1);
    } else {
        c = clampi(sg_dim_from_double(gs_reflect((double)c, g->border[0], g->border[2])), 0,
                   g->W - 1);
        r = clampi(sg_dim_from_double(gs_reflect((double)r, g->border[1], g->border[3])), 0,
                   g->H - 1);
    }
    return pd ? pd[r * g->W + c] : pf[r * g->W + c];
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

/* One output value from normalised grid point (nx, ny). */
static double gs_sample(const struct gs *g, const float *pf, const double *pd, double nx, double ny)
{
    double x = gs_denormalize(nx, g->W, g->align), y = gs_denormalize(ny, g->H, g->align);
    if (g->mode == GS_NEAREST) {
        x = nearbyint(x);
        y = nearbyint(y);
    }
    if (x < g->border[0] || x > g->border[2] || y < g->border[1] || y > g->border[3]) {
        if (g->pad == GS_BORDER) {
            x = x < 0 ? 0 : x > (double)(g->W - 1) ? (double)(g->W - 1) : x;
            y = y < 0 ? 0 : y > (double)(g->H - 1) ? (double)(g->H - 1) : y;
        } else if (g->pad == GS_REFLECTION) {
            x = gs_reflect(x, g->border[0], g->border[2]);
            y = gs_reflect(y, g->border[1], g->border[3]);
        }
    }
    if (g->mode == GS_NEAREST)
        return gs_pixel(g, pf, pd, sg_dim_from_double(y), sg_dim_from_double(x));
    if (g->mode == GS_BILINEAR) {
        int64_t x1 = sg_dim_from_double(floor(x)), y1 = sg_dim_from_double(floor(y));
        int64_t x2 = x1 + 1, y2 = y1 + 1;
        double p11 = gs_pixel(g, pf, pd, y1, x1), p12 = gs_pixel(g, pf, pd, y1, x2);
        double p21 = gs_pixel(g, pf, pd, y2, x1), p22 = gs_pixel(g, pf, pd, y2, x2);
        double dx2 = (double)x2 - x, dx1 = x - (double)x1, dy2 = (double)y2 - y,
               dy1 = y - (double)y1;
        return dy2 * (dx2 * p11 + dx1 * p12) + dy1 * (dx2 * p21 + dx1 * p22);
    }
    int64_t x0 = sg_dim_from_double(floor(x)) - 1, y0 = sg_dim_from_double(floor(y)) - 1;
    double cx[4], cy[4], v = 0;
    cubic_coeffs(x - (double)x0 - 1, cx);
    cubic_coeffs(y - (double)y0 - 1, cy);
    for (int64_t h = 0; h < 4; h++) {
        double row = 0;
        for (int64_t w = 0; w < 4; w++)
            row += cx[w] * gs_pixel(g, pf, pd, y0 + h, x0 + w);
        v += cy[h] * row;
    }
    return v;
}

static sg_status run_grid_sample(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *G = sg_kin(k, 1);
    if (X->rank != 4 || G->rank != 4 || G->dims[0] != X->dims[0] || G->dims[3] != 2 ||
        !sg_dtype_is_float(G->dtype))
        return sg_kfail(k, SG_ESHAPE,
                        "input X %s must be [N, C, H, W] and grid %s a float [N, H_out, W_out, 2]",
                        sg_kshape(k, X), sg_kshape(k, G));
    struct gs g;
    memset(&g, 0, sizeof g);
    const char *mode = sg_kattr_string(k, "mode", "bilinear");
    const char *pad = sg_kattr_string(k, "padding_mode", "zeros");
    if (strcmp(mode, "bilinear") == 0 || strcmp(mode, "linear") == 0)
        g.mode = GS_BILINEAR;
    else if (strcmp(mode, "nearest") == 0)
        g.mode = GS_NEAREST;
    else if (strcmp(mode, "bicubic") == 0 || strcmp(mode, "cubic") == 0)
        g.mode = GS_BICUBIC;
    else
        return sg_kfail(k, SG_EINVAL, "unknown mode '%s'", mode);
    if (strcmp(pad, "zeros") == 0)
        g.pad = GS_ZEROS;
    else if (strcmp(pad, "border") == 0)
        g.pad = GS_BORDER;
    else if (strcmp(pad, "reflection") == 0)
        g.pad = GS_REFLECTION;
    else
        return sg_kfail(k, SG_EINVAL, "unknown padding_mode '%s'", pad);
    g.align = sg_kattr_int(k, "align_corners", 0) != 0;
    int64_t N = X->dims[0], C = X->dims[1], OH = G->dims[1], OW = G->dims[2];
    g.H = X->dims[2];
    g.W = X->dims[3];
    g.border[0] = g.align ? 0 : -0.5;
    g.border[1] = g.align ? 0 : -0.5;
    g.border[2] = g.align ? (double)g.W - 1 : (double)g.W - 0.5;
    g.border[3] = g.align ? (double)g.H - 1 : (double)g.H - 0.5;
    int64_t od[4] = {N, C, OH, OW};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, od, 4, &Y);
    if (st || !Y->numel)
        return st;
    if (g.H == 0 || g.W == 0)
        return sg_kfail(k, SG_ESHAPE, "input X %s has no pixels to sample", sg_kshape(k, X));
    const double *xd = X->dtype == SG_DTYPE_DOUBLE ? X->data : NULL;
    const float *xf = xd ? NULL : sg_kfloats(k, X);
    const double *gd = G->dtype == SG_DTYPE_DOUBLE ? G->data : NULL;
    const float *gf = gd ? NULL : sg_kfloats(k, G);
    if ((!xd && !xf) || (!gd && !gf))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t plane = g.H * g.W;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float *pf = xf ? xf + (n * C + c) * plane : NULL;
            const double *pd = xd ? xd + (n * C + c) * plane : NULL;
            for (int64_t i = 0; i < OH * OW; i++) {
                int64_t gi = (n * OH * OW + i) * 2;
                double nx = gd ? gd[gi] : gf[gi], ny = gd ? gd[gi + 1] : gf[gi + 1];
                sg_rt_set_f64(Y, (n * C + c) * OH * OW + i, gs_sample(&g, pf, pd, nx, ny));
            }
        }
    return SG_OK;
}

/* ------------------------------------------------------------ Dropout */

/* numpy's legacy MT19937 (mt19937_seed, mt19937_next32/next_double). */
struct mt {
    uint32_t key[624];
    int pos;
};

static void mt_seed(struct mt *m, uint32_t seed)
{
    for (int i = 0; i < 624; i++) {
        m->key[i] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1;
    }
    m->pos = 624;
}

static uint32_t mt_next32(struct mt *m)
{
    if (m->pos == 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (m->key[i] & 0x80000000u) | (m->key[(i + 1) % 624] & 0x7fffffffu);
            m->key[i] = m->key[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
        }
        m->pos = 0;
    }
    uint32_t y = m->key[m->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static double mt_double(struct mt *m)
{
    uint32_t a = mt_next32(m) >> 5, b = mt_next32(m) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static sg_status run_dropout(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_rt_value *R = k->opset >= 12 ? sg_kin(k, 1) : NULL;
    const sg_rt_value *T = k->opset >= 12 ? sg_kin(k, 2) : NULL;
    if ((R && (R->numel != 1 || !sg_dtype_is_float(R->dtype))) ||
        (T && (T->numel != 1 || T->dtype != SG_DTYPE_BOOL)))
        return sg_kfail(k, SG_ESHAPE,
                        "ratio %s must be a float scalar and training_mode %s a bool "
                        "scalar",
                        R ? sg_kshape(k, R) : "(none)", T ? sg_kshape(k, T) : "(none)");
    double ratio = R ? sg_rt_get_f64(R, 0) : sg_kattr_float(k, "ratio", 0.5f);
    bool training = T && ((const uint8_t *)T->data)[0] != 0 && ratio != 0;
    if (training && !(ratio > 0 && ratio < 1))
        return sg_kfail(k, SG_ERANGE, "ratio %g must be in [0, 1) in training mode", ratio);
    int32_t mdt = k->opset >= 10 ? SG_DTYPE_BOOL : X->dtype;
    sg_rt_value *M = NULL, *Y;
    sg_status st;
    if (!training) {
        if ((st = sg_kout_alias(k, 0, X, X->dims, X->rank)) || !sg_kout_wanted(k, 1) ||
            (st = sg_kout(k, 1, mdt, X->dims, X->rank, &M)))
            return st;
        for (int64_t i = 0; i < M->numel; i++)
            sg_rt_set_f64(M, i, 1);
        return SG_OK;
    }
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)) ||
        (sg_kout_wanted(k, 1) && (st = sg_kout(k, 1, mdt, X->dims, X->rank, &M))))
        return st;
    uint32_t seed = 0;
    const sg_attr *a = sg_kattr(k, "seed");
    if (a && a->type == SG_ATTR_INT) {
        seed = (uint32_t)a->i;
    } else {
        uint32_t h = 2166136261u;
        for (const char *p = k->node->name ? k->node->name : ""; *p; p++)
            h = (h ^ (uint8_t)*p) * 16777619u;
        seed = h;
    }
    struct mt *m = sg_kscratch(k, sizeof *m);
    if (!m)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    mt_seed(m, seed);
    double scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < X->numel; i++) {
        bool keep = mt_double(m) >= ratio;
        if (X->dtype == SG_DTYPE_FLOAT)
            ((float *)Y->data)[i] = keep ? ((const float *)X->data)[i] * (float)scale : 0.0f;
        else
            sg_rt_set_f64(Y, i, keep ? sg_rt_get_f64(X, i) * scale : 0);
        if (M)
            sg_rt_set_f64(M, i, keep);
    }
    return SG_OK;
}

#define FL SG_KT_FLOATS
/* One entry per line, as in the other families. */
/* clang-format off */
static const struct sg_kernel kernels[] = {
    {"", "Dropout", 1, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 6, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 7, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 10, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 12, 0, FL, 0, run_dropout, "roo"},
    {"", "Dropout", 13, 0, FL, 0, run_dropout, "roo"},
    {"", "GridSample", 16, 0, FL, 0, run_grid_sample, "rr"},
};
/* clang-format on */
SG_KERNEL_FAMILY(space, kernels);
