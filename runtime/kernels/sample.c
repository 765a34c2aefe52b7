/*
 * sample.c - sampling ops of detection networks: RoiAlign (avg and max,
 * half_pixel and output_half_pixel) and GridSample (bilinear, nearest,
 * bicubic; zeros, border, reflection padding; align_corners). Computed in
 * float64, following ONNX Runtime's rules where the specification leaves
 * room (max pooling of samples).
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

/* --------------------------------------------------------- RoiAlign */

static sg_status run_roialign(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *R = sg_kin(k, 1), *BI = sg_kin(k, 2);
    if (X->rank != 4 || R->rank != 2 || R->dims[1] != 4 || BI->numel != R->dims[0])
        return sg_kfail(k, SG_ESHAPE, "X %s, rois %s and batch_indices %s do not fit",
                        sg_kshape(k, X), sg_kshape(k, R), sg_kshape(k, BI));
    int64_t C = X->dims[1], H = X->dims[2], W = X->dims[3], nr = R->dims[0];
    int64_t oh = sg_kattr_int(k, "output_height", 1), ow = sg_kattr_int(k, "output_width", 1);
    int64_t ratio = sg_kattr_int(k, "sampling_ratio", 0);
    double scale = sg_kattr_float(k, "spatial_scale", 1.0f);
    bool maxm = strcmp(sg_kattr_string(k, "mode", "avg"), "max") == 0;
    const char *ctm = sg_kattr_string(k, "coordinate_transformation_mode",
                                      k->opset >= 16 ? "half_pixel" : "output_half_pixel");
    bool half = strcmp(ctm, "half_pixel") == 0;
    int64_t od[4] = {nr, C, oh, ow};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, od, 4, &Y);
    if (st)
        return st;
    for (int64_t n = 0; n < nr; n++) {
        int64_t b = sg_rt_get_i64(BI, n);
        if (b < 0 || b >= X->dims[0])
            return sg_kfail(k, SG_ERANGE, "batch index %lld is out of range", (long long)b);
        double off = half ? 0.5 : 0;
        double sw = sg_rt_get_f64(R, n * 4) * scale - off,
               sh = sg_rt_get_f64(R, n * 4 + 1) * scale - off;
        double ew = sg_rt_get_f64(R, n * 4 + 2) * scale - off;
        double eh = sg_rt_get_f64(R, n * 4 + 3) * scale - off;
        double rw = ew - sw, rh = eh - sh;
        if (!half) {
            rw = fmax(rw, 1.0);
            rh = fmax(rh, 1.0);
        }
        double bh = rh / (double)oh, bw = rw / (double)ow;
        int64_t gh = ratio > 0 ? ratio : (int64_t)ceil(rh / (double)oh);
        int64_t gw = ratio > 0 ? ratio : (int64_t)ceil(rw / (double)ow);
        double count = (double)(gh * gw > 0 ? gh * gw : 1);
        for (int64_t c = 0; c < C; c++) {
            int64_t plane = (b * C + c) * H * W;
            for (int64_t ph = 0; ph < oh; ph++)
                for (int64_t pw = 0; pw < ow; pw++) {
                    double acc = 0;
                    bool first = true;
                    for (int64_t iy = 0; iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double y = sh + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                            double x = sw + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double v = 0, vmax = 0;
                            if (!(y < -1.0 || y > (double)H || x < -1.0 || x > (double)W)) {
                                y = y <= 0 ? 0 : y;
                                x = x <= 0 ? 0 : x;
                                int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
                                if (y0 >= H - 1) {
                                    y1 = y0 = H - 1;
                                    y = (double)y0;
                                } else {
                                    y1 = y0 + 1;
                                }
                                if (x0 >= W - 1) {
                                    x1 = x0 = W - 1;
                                    x = (double)x0;
                                } else {
                                    x1 = x0 + 1;
                                }
                                double ly = y - (double)y0, lx = x - (double)x0;
                                double hy = 1 - ly, hx = 1 - lx;
                                double w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;
                                double p1 = sg_rt_get_f64(X, plane + y0 * W + x0);
                                double p2 = sg_rt_get_f64(X, plane + y0 * W + x1);
                                double p3 = sg_rt_get_f64(X, plane + y1 * W + x0);
                                double p4 = sg_rt_get_f64(X, plane + y1 * W + x1);
                                v = w1 * p1 + w2 * p2 + w3 * p3 + w4 * p4;
                                vmax = fmax(fmax(w1 * p1, w2 * p2), fmax(w3 * p3, w4 * p4));
                            }
                            if (maxm) {
                                acc = first ? vmax : fmax(acc, vmax);
                                first = false;
                            } else {
                                acc += v;
                            }
                        }
                    sg_rt_set_f64(Y, ((n * C + c) * oh + ph) * ow + pw, maxm ? acc : acc / count);
                }
        }
    }
    return SG_OK;
}

/* ------------------------------------------------------- GridSample */

enum pad { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };

static double reflect(double x, double lo, double hi)
{
    double range = hi - lo;
    if (range <= 0)
        return lo;
    if (x < lo) {
        double dx = lo - x;
        int64_t n = (int64_t)(dx / range);
        double r = dx - (double)n * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        int64_t n = (int64_t)(dx / range);
        double r = dx - (double)n * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

struct plane {
    const sg_rt_value *X;
    int64_t base, H, W;
    enum pad pad;
    double bx0, by0, bx1, by1; /* reflection borders */
};

static double pixel(const struct plane *p, int64_t x, int64_t y)
{
    if (p->pad == PAD_ZEROS) {
        if (x < 0 || x >= p->W || y < 0 || y >= p->H)
            return 0;
    } else if (p->pad == PAD_BORDER) {
        x = x < 0 ? 0 : x >= p->W ? p->W - 1 : x;
        y = y < 0 ? 0 : y >= p->H ? p->H - 1 : y;
    } else {
        x = (int64_t)reflect((double)x, p->bx0, p->bx1);
        y = (int64_t)reflect((double)y, p->by0, p->by1);
        x = x < 0 ? 0 : x >= p->W ? p->W - 1 : x;
        y = y < 0 ? 0 : y >= p->H ? p->H - 1 : y;
    }
    return sg_rt_get_f64(p->X, p->base + y * p->W + x);
}

static void cubic(double t, double *c)
{
    const double A = -0.75;
    c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

static sg_status run_grid_sample(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *G = sg_kin(k, 1);
    if (X->rank != 4 || G->rank != 4 || G->dims[0] != X->dims[0] || G->dims[3] != 2)
        return sg_kfail(k, SG_ESHAPE, "X %s and grid %s do not fit (4-d only)", sg_kshape(k, X),
                        sg_kshape(k, G));
    const char *mode = sg_kattr_string(k, "mode", "bilinear");
    const char *pm = sg_kattr_string(k, "padding_mode", "zeros");
    bool ac = sg_kattr_int(k, "align_corners", 0) != 0;
    int m = strcmp(mode, "bilinear") == 0  ? 0
            : strcmp(mode, "nearest") == 0 ? 1
            : strcmp(mode, "bicubic") == 0 ? 2
                                           : -1;
    enum pad pad = strcmp(pm, "border") == 0       ? PAD_BORDER
                   : strcmp(pm, "reflection") == 0 ? PAD_REFLECTION
                                                   : PAD_ZEROS;
    if (m < 0 || (pad == PAD_ZEROS && strcmp(pm, "zeros") != 0))
        return sg_kfail(k, SG_EINVAL, "unknown mode '%s' or padding_mode '%s'", mode, pm);
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3];
    int64_t Ho = G->dims[1], Wo = G->dims[2];
    int64_t od[4] = {N, C, Ho, Wo};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, od, 4, &Y);
    if (st)
        return st;
    struct plane p = {X, 0, H, W, pad, 0, 0, 0, 0};
    if (ac) {
        p.bx1 = (double)(W - 1);
        p.by1 = (double)(H - 1);
    } else {
        p.bx0 = p.by0 = -0.5;
        p.bx1 = (double)W - 0.5;
        p.by1 = (double)H - 0.5;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            p.base = (n * C + c) * H * W;
            for (int64_t i = 0; i < Ho; i++)
                for (int64_t j = 0; j < Wo; j++) {
                    int64_t gi = ((n * Ho + i) * Wo + j) * 2;
                    double gx = sg_rt_get_f64(G, gi), gy = sg_rt_get_f64(G, gi + 1);
                    double x = ac ? (gx + 1) / 2 * (double)(W - 1) : ((gx + 1) * (double)W - 1) / 2;
                    double y = ac ? (gy + 1) / 2 * (double)(H - 1) : ((gy + 1) * (double)H - 1) / 2;
                    if (pad == PAD_BORDER) {
                        x = fmin(fmax(x, 0), (double)(W - 1));
                        y = fmin(fmax(y, 0), (double)(H - 1));
                    } else if (pad == PAD_REFLECTION) {
                        x = reflect(x, p.bx0, p.bx1);
                        y = reflect(y, p.by0, p.by1);
                    }
                    double v;
                    if (m == 1) {
                        v = pixel(&p, (int64_t)nearbyint(x), (int64_t)nearbyint(y));
                    } else if (m == 0) {
                        int64_t x1 = (int64_t)floor(x), y1 = (int64_t)floor(y);
                        double dx = x - (double)x1, dy = y - (double)y1;
                        v = (1 - dy) * ((1 - dx) * pixel(&p, x1, y1) + dx * pixel(&p, x1 + 1, y1)) +
                            dy *
                                ((1 - dx) * pixel(&p, x1, y1 + 1) + dx * pixel(&p, x1 + 1, y1 + 1));
                    } else {
                        int64_t x0 = (int64_t)floor(x) - 1, y0 = (int64_t)floor(y) - 1;
                        double cx[4], cy[4];
                        cubic(x - floor(x), cx);
                        cubic(y - floor(y), cy);
                        v = 0;
                        for (int a = 0; a < 4; a++) {
                            double row = 0;
                            for (int b = 0; b < 4; b++)
                                row += cx[b] * pixel(&p, x0 + b, y0 + a);
                            v += cy[a] * row;
                        }
                    }
                    sg_rt_set_f64(Y, ((n * C + c) * Ho + i) * Wo + j, v);
                }
        }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "RoiAlign", 10, 0, SG_KT_FLOATS, 0, run_roialign},
    {"", "GridSample", 16, 0, SG_KT_FLOATS, 0, run_grid_sample},
};

SG_KERNEL_FAMILY(sample, kernels);
