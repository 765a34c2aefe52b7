/*
 * detection.c - ops of detection networks: NonMaxSuppression, computed in
 * float64, following ONNX Runtime's rules where the specification leaves
 * room (ties). RoiAlign is in pool.c and GridSample in space.c.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ NMS */

struct box {
    double y1, x1, y2, x2;
};

static struct box get_box(const sg_rt_value *B, int64_t i, bool center)
{
    double a = sg_rt_get_f64(B, i * 4), b = sg_rt_get_f64(B, i * 4 + 1);
    double c = sg_rt_get_f64(B, i * 4 + 2), d = sg_rt_get_f64(B, i * 4 + 3);
    struct box r;
    if (center) { /* [x_center, y_center, width, height] */
        r.x1 = a - c / 2, r.x2 = a + c / 2, r.y1 = b - d / 2, r.y2 = b + d / 2;
    } else { /* [y1, x1, y2, x2], corners in any order */
        r.y1 = fmin(a, c), r.y2 = fmax(a, c), r.x1 = fmin(b, d), r.x2 = fmax(b, d);
    }
    return r;
}

static double iou(const struct box *p, const struct box *q)
{
    double ap = (p->y2 - p->y1) * (p->x2 - p->x1), aq = (q->y2 - q->y1) * (q->x2 - q->x1);
    if (ap <= 0 || aq <= 0)
        return 0;
    double h = fmin(p->y2, q->y2) - fmax(p->y1, q->y1), w = fmin(p->x2, q->x2) - fmax(p->x1, q->x1);
    if (h <= 0 || w <= 0)
        return 0;
    double inter = h * w;
    return inter / (ap + aq - inter);
}

static sg_status run_nms(struct sg_kctx *k)
{
    const sg_rt_value *Bx = sg_kin(k, 0), *Sc = sg_kin(k, 1), *MO = sg_kin(k, 2);
    const sg_rt_value *IT = sg_kin(k, 3), *ST = sg_kin(k, 4);
    if (Bx->rank != 3 || Bx->dims[2] != 4 || Sc->rank != 3 || Sc->dims[0] != Bx->dims[0] ||
        Sc->dims[2] != Bx->dims[1])
        return sg_kfail(k, SG_ESHAPE, "boxes %s and scores %s do not fit", sg_kshape(k, Bx),
                        sg_kshape(k, Sc));
    int64_t nb = Bx->dims[0], nbox = Bx->dims[1], ncls = Sc->dims[1];
    int64_t max_out = MO && MO->numel ? sg_rt_get_i64(MO, 0) : 0;
    double iou_t = IT && IT->numel ? sg_rt_get_f64(IT, 0) : 0;
    bool has_st = ST && ST->numel;
    double score_t = has_st ? sg_rt_get_f64(ST, 0) : 0;
    bool center = sg_kattr_int(k, "center_point_box", 0) != 0;
    int64_t *order = sg_kscratch(k, (size_t)(nbox + 1) * sizeof *order);
    int64_t *sel = sg_kscratch(k, (size_t)(nb * ncls * nbox + 1) * 3 * sizeof *sel);
    int64_t *picked = sg_kscratch(k, (size_t)(nbox + 1) * sizeof *picked);
    if (!order || !sel || !picked)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t n_sel = 0;
    for (int64_t b = 0; b < nb && max_out > 0; b++)
        for (int64_t c = 0; c < ncls; c++) {
            const int64_t base = (b * ncls + c) * nbox;
            int64_t n = 0;
            for (int64_t i = 0; i < nbox; i++)
                if (!has_st || sg_rt_get_f64(Sc, base + i) > score_t)
                    order[n++] = i;
            /* Insertion sort: score descending, index ascending on ties. */
            for (int64_t i = 1; i < n; i++)
                for (int64_t j = i; j > 0; j--) {
                    double a = sg_rt_get_f64(Sc, base + order[j - 1]);
                    double v = sg_rt_get_f64(Sc, base + order[j]);
                    if (v <= a)
                        break;
                    int64_t t = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = t;
                }
            int64_t np = 0;
            for (int64_t i = 0; i < n && np < max_out; i++) {
                struct box q = get_box(Bx, b * nbox + order[i], center);
                bool keep = true;
                for (int64_t j = 0; j < np && keep; j++) {
                    struct box p = get_box(Bx, b * nbox + picked[j], center);
                    keep = !(iou(&p, &q) > iou_t);
                }
                if (!keep)
                    continue;
                picked[np++] = order[i];
                sel[n_sel * 3] = b;
                sel[n_sel * 3 + 1] = c;
                sel[n_sel * 3 + 2] = order[i];
                n_sel++;
            }
        }
    int64_t dims[2] = {n_sel, 3};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_INT64, dims, 2, &Y);
    if (!st && n_sel)
        memcpy(Y->data, sel, (size_t)(n_sel * 3) * sizeof *sel);
    return st;
}

static const struct sg_kernel kernels[] = {
    {"", "NonMaxSuppression", 10, 0, SG_KT_F32, 0, run_nms},
};
SG_KERNEL_FAMILY(detection, kernels);
