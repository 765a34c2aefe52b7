/*
 * detection.c - NonMaxSuppression (opsets 10 and 11).
 *
 * Per batch and class, the boxes scoring above score_threshold (when
 * given) are taken by descending score (ties: lower box index first) and a
 * box is kept unless its IOU with a box kept before exceeds iou_threshold,
 * until max_output_boxes_per_class are kept - the rules ONNX Runtime
 * follows. Boxes are corners in any order (center_point_box 0) or
 * centre, width, height (1); a box of zero area overlaps nothing.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <stdlib.h>
#include <string.h>

struct cand {
    float score;
    int64_t index;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Box i as y1 <= y2, x1 <= x2. */
static void corners(const float *b, bool center, float *c)
{
    if (center) {
        c[0] = b[1] - b[3] / 2;
        c[2] = b[1] + b[3] / 2;
        c[1] = b[0] - b[2] / 2;
        c[3] = b[0] + b[2] / 2;
        return;
    }
    c[0] = b[0] < b[2] ? b[0] : b[2];
    c[2] = b[0] < b[2] ? b[2] : b[0];
    c[1] = b[1] < b[3] ? b[1] : b[3];
    c[3] = b[1] < b[3] ? b[3] : b[1];
}

static bool overlaps(const float *a, const float *b, float threshold)
{
    float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_a <= 0 || area_b <= 0)
        return false;
    float y1 = a[0] > b[0] ? a[0] : b[0], x1 = a[1] > b[1] ? a[1] : b[1];
    float y2 = a[2] < b[2] ? a[2] : b[2], x2 = a[3] < b[3] ? a[3] : b[3];
    if (y2 <= y1 || x2 <= x1)
        return false;
    float inter = (y2 - y1) * (x2 - x1), uni = area_a + area_b - inter;
    return uni > 0 && inter / uni > threshold;
}

/* An optional scalar input as double, or dflt. */
static sg_status scalar(struct sg_kctx *k, uint32_t i, const char *name, double dflt, double *out,
                        bool *given)
{
    const sg_rt_value *v = sg_kin(k, i);
    *out = dflt;
    if (given)
        *given = v != NULL;
    if (!v)
        return SG_OK;
    if (v->numel != 1)
        return sg_kfail(k, SG_ESHAPE, "%s must hold one value, got %s", name, sg_kshape(k, v));
    *out = sg_rt_get_f64(v, 0);
    return SG_OK;
}

static sg_status run_nms(struct sg_kctx *k)
{
    const sg_rt_value *B = sg_kin(k, 0), *S = sg_kin(k, 1);
    if (B->rank != 3 || B->dims[2] != 4 || S->rank != 3 || S->dims[0] != B->dims[0] ||
        S->dims[2] != B->dims[1])
        return sg_kfail(k, SG_ESHAPE,
                        "boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], "
                        "got %s and %s",
                        sg_kshape(k, B), sg_kshape(k, S));
    if (B->dtype != SG_DTYPE_FLOAT || S->dtype != SG_DTYPE_FLOAT)
        return sg_kfail(k, SG_ETYPE, "boxes and scores must be float32, got %s and %s",
                        sg_kshape(k, B), sg_kshape(k, S));
    double maxd, iou, sth;
    bool has_sth;
    sg_status st;
    if ((st = scalar(k, 2, "max_output_boxes_per_class", 0, &maxd, NULL)) ||
        (st = scalar(k, 3, "iou_threshold", 0, &iou, NULL)) ||
        (st = scalar(k, 4, "score_threshold", 0, &sth, &has_sth)))
        return st;
    int64_t cpb = sg_kattr_int(k, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return sg_kfail(k, SG_EINVAL, "center_point_box must be 0 or 1, got %lld", (long long)cpb);
    int64_t nb = B->dims[0], nbox = B->dims[1], ncls = S->dims[1];
    int64_t maxk = maxd > (double)nbox ? nbox : sg_dim_from_double(maxd);
    if (maxk < 0)
        maxk = 0;
    /* At most maxk <= nbox picks per batch and class: a part of scores. */
    int64_t npick = nb * ncls * maxk;
    size_t sel_bytes;
    if (!sg_dims_nbytes(npick, 3 * sizeof(int64_t), &sel_bytes))
        return sg_kfail(k, SG_ERANGE, "%lld selections do not fit memory", (long long)npick);
    struct cand *c = sg_kscratch(k, (size_t)(nbox + 1) * sizeof *c);
    float *box = sg_kscratch(k, (size_t)(nbox * 4 + 1) * sizeof *box);
    int64_t *kept = sg_kscratch(k, (size_t)(maxk + 1) * sizeof *kept);
    int64_t *sel = sg_kscratch(k, sel_bytes + sizeof *sel);
    if (!c || !box || !kept || !sel)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t nsel = 0;
    const float *bd = B->data, *sd = S->data;
    for (int64_t b = 0; b < nb && maxk > 0; b++) {
        for (int64_t i = 0; i < nbox; i++)
            corners(bd + (b * nbox + i) * 4, cpb == 1, box + i * 4);
        for (int64_t cl = 0; cl < ncls; cl++) {
            const float *sc = sd + (b * ncls + cl) * nbox;
            int64_t n = 0, nk = 0;
            for (int64_t i = 0; i < nbox; i++)
                if (!has_sth || sc[i] > (float)sth)
                    c[n++] = (struct cand){sc[i], i};
            qsort(c, (size_t)n, sizeof *c, cand_cmp);
            for (int64_t i = 0; i < n && nk < maxk; i++) {
                bool drop = false;
                for (int64_t j = 0; j < nk && !drop; j++)
                    drop = overlaps(box + c[i].index * 4, box + kept[j] * 4, (float)iou);
                if (drop)
                    continue;
                kept[nk++] = c[i].index;
                sel[nsel * 3] = b;
                sel[nsel * 3 + 1] = cl;
                sel[nsel * 3 + 2] = c[i].index;
                nsel++;
            }
        }
    }
    int64_t od[2] = {nsel, 3};
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, SG_DTYPE_INT64, od, 2, &Y)))
        return st;
    if (nsel)
        memcpy(Y->data, sel, (size_t)(nsel * 3) * sizeof *sel);
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "NonMaxSuppression", 10, 0, SG_KT_F32, 0, run_nms, "rrooo"},
    {"", "NonMaxSuppression", 11, 0, SG_KT_F32, 0, run_nms, "rrooo"},
};
SG_KERNEL_FAMILY(detection, kernels);
